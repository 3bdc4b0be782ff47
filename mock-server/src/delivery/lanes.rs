//! The HTTP side of delivery, shared by every attempt: the client, the
//! resolver, the count of attempts under way, and the lanes that bound them per
//! endpoint and per destination.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, Semaphore};
use webhook_verify::Webhook;

use super::resolve::{OverrideResolver, SystemResolver};

/// Attempts under way at once per endpoint. A burst then reuses a few kept-alive
/// connections instead of opening one per message, and a slow endpoint only
/// queues its own messages.
const PER_ENDPOINT: usize = 16;
/// Attempts under way at once per destination (scheme, host and port), across its
/// endpoints. Thousands of endpoints on one receiver would otherwise each open
/// connections at once, and the connection pool's bookkeeping grows with the
/// square of the requests waiting on one host.
const PER_HOST: usize = 64;

/// The HTTP side of delivery, shared by every attempt.
#[derive(Debug)]
pub struct Deliverer {
    client: Result<reqwest::Client, String>,
    /// Host names the control API pinned to addresses, over the system resolver.
    pub resolver: Arc<OverrideResolver>,
    in_flight: AtomicUsize,
    idle: Notify,
    lanes: Mutex<HashMap<String, Arc<Semaphore>>>,
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Each endpoint's signer with the secret it was made from: a secret is
    /// decoded and keyed once, not at every attempt, and a rotation replaces it.
    signers: Mutex<HashMap<String, (String, Arc<Webhook>)>>,
}

impl Default for Deliverer {
    fn default() -> Self {
        Self::new()
    }
}

impl Deliverer {
    pub fn new() -> Self {
        Self {
            client: shared_client(),
            resolver: Arc::new(OverrideResolver::new(Arc::new(SystemResolver))),
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
            lanes: Mutex::new(HashMap::new()),
            hosts: Mutex::new(HashMap::new()),
            signers: Mutex::new(HashMap::new()),
        }
    }

    /// Counts an attempt under way, until [`end`](Self::end).
    pub(super) fn begin(&self) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
    }

    /// An attempt ended; the last one wakes whoever waits for all to settle.
    pub(super) fn end(&self) {
        if self.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.idle.notify_waiters();
        }
    }

    /// The client for destinations that need no pinned address, or why there is none.
    pub(super) fn client(&self) -> Result<&reqwest::Client, &str> {
        self.client.as_ref().map_err(String::as_str)
    }

    /// The signer of `endpoint_id` for its current `secret`; `None` when the
    /// secret cannot sign.
    pub(super) fn signer(&self, endpoint_id: &str, secret: &str) -> Option<Arc<Webhook>> {
        let mut signers = self.signers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((known, signer)) = signers.get(endpoint_id)
            && known == secret
        {
            return Some(signer.clone());
        }
        let signer = Arc::new(Webhook::new(secret).ok()?);
        signers.insert(endpoint_id.to_owned(), (secret.to_owned(), signer.clone()));
        Some(signer)
    }

    /// The semaphore that bounds the attempts under way for one endpoint.
    pub(super) fn lane(&self, endpoint_id: &str) -> Arc<Semaphore> {
        semaphore(&self.lanes, endpoint_id, PER_ENDPOINT)
    }

    /// The semaphore that bounds the attempts under way to one destination.
    pub(super) fn host_lane(&self, url: &str) -> Arc<Semaphore> {
        let origin = reqwest::Url::parse(url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default();
        semaphore(&self.hosts, &origin, PER_HOST)
    }

    /// Waits until no attempt is running. Attempts due on the clock start
    /// before `advance_clock` returns, so this settles everything an advance caused.
    pub async fn settled(&self) {
        loop {
            let idle = self.idle.notified();
            if self.in_flight.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }
}

fn semaphore(
    map: &Mutex<HashMap<String, Arc<Semaphore>>>,
    key: &str,
    permits: usize,
) -> Arc<Semaphore> {
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    // Looked up before it is made: every attempt asks, and the key is copied
    // only for the first.
    if let Some(lane) = map.get(key) {
        return lane.clone();
    }
    map.entry(key.to_owned())
        .or_insert_with(|| Arc::new(Semaphore::new(permits)))
        .clone()
}

/// The HTTP client of every deliverer of the process (its pool of connections
/// and its TLS roots, made once): the worlds of a mock deliver through it. A
/// client that cannot be built fails each delivery that needs it, with the
/// reason, instead of the mock's start.
fn shared_client() -> Result<reqwest::Client, String> {
    static CLIENT: std::sync::LazyLock<Result<reqwest::Client, String>> =
        std::sync::LazyLock::new(|| client_builder().build().map_err(|err| err.to_string()));
    CLIENT.clone()
}

/// Every delivery client: no redirects, since following one would reach an
/// address that was never checked, and no proxy.
pub(super) fn client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .pool_max_idle_per_host(PER_HOST)
        .tls_certs_merge(crate::tls::built_in_roots())
        .user_agent(concat!(
            "mediagen-mock-webhooks/",
            env!("CARGO_PKG_VERSION")
        ))
}
