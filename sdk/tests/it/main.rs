//! Integration tests of the SDK: against the mock server (a manual clock, moved
//! by the SDK's own waits through [`MockClock`]; its faults and response modes
//! in `adversary.rs`) and against wiremock for answers only a script can give
//! (values no version knows, statuses at exact moments).

// A test binary exports nothing: its helpers are for its own modules.
#![allow(missing_docs)]

mod adversary;
mod areas;
mod batch;
mod billing;
mod client;
mod deprecated;
mod depth;
mod errors;
mod files;
mod generations;
mod journal;
mod pacing;
mod repeats;
mod retries;
mod tolerance;
mod volume;
mod wait;
mod webhooks;

use std::collections::BTreeMap;
use std::future::{Future, IntoFuture};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use mediagen::{Client, Clock, RetryPolicy, Sleep};
use mediagen_mock_server::LoggedRequest;
use mediagen_mock_server::{MockServer, NewUser, World};
use tokio::sync::{Notify, oneshot};

/// How long the mock clock lets things settle before it moves time.
const QUIET: Duration = Duration::from_millis(2);

/// How long any test may take before it is failed rather than left hanging.
pub const TEST_DEADLINE: Duration = Duration::from_secs(60);

/// Runs `test`, failing it if it has not finished within [`TEST_DEADLINE`].
pub async fn within_deadline<T>(test: impl Future<Output = T>) -> T {
    tokio::time::timeout(TEST_DEADLINE, test)
        .await
        .expect("the test finished within its deadline")
}

/// A mock server, a user with a balance, and a client whose clock is the mock's.
#[derive(Debug)]
pub struct App {
    pub mock: MockServer,
    pub user: NewUser,
    pub clock: MockClock,
    pub client: Client,
}

impl App {
    /// A mock with the service's limits and a manual clock, a user with 1000 RUB.
    pub async fn start() -> Self {
        Self::with(MockServer::builder().start().await, 1000.0).await
    }

    pub async fn with(mock: MockServer, balance_rub: f64) -> Self {
        let user = mock.create_user(balance_rub).unwrap();
        let clock = MockClock::new(&mock);
        let client = Client::builder()
            .base_url(mock.uri())
            .api_key(&user.api_key)
            .clock(clock.clone())
            .build()
            .expect("a client");
        Self {
            mock,
            user,
            clock,
            client,
        }
    }

    /// The mock's request log, oldest first.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.mock.list_requests()
    }

    /// Requests the mock answered with 429.
    pub fn rate_limited(&self) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.status == Some(429))
            .count()
    }
}

/// The SDK is held to the mock's verdict: a test whose world ends with a
/// violation of the service's rules for clients fails, through whatever faults
/// it injected. A test that breaks a rule on purpose, with its own requests,
/// says so with `mock.reset_verdict()` after them.
impl Drop for App {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.mock.assert_clean();
        }
    }
}

/// A clock for the SDK that is the mock server's manual clock.
///
/// The SDK's waits (back-off, pacing, polling) register here instead of
/// sleeping. Tests run their SDK calls as participants ([`MockClock::run`]);
/// when every participant is waiting, the clock moves the mock's time to the
/// earliest wake-up and wakes whoever is due. So simulated minutes pass in
/// milliseconds, and the SDK and the mock agree on what time it is.
#[derive(Debug, Clone)]
pub struct MockClock {
    inner: Arc<ClockInner>,
}

#[derive(Debug)]
struct ClockInner {
    mock: World,
    base: Instant,
    start: DateTime<Utc>,
    state: Mutex<ClockState>,
    changed: Notify,
}

#[derive(Debug, Default)]
struct ClockState {
    /// Waiters by wake-up time (since `start`) and arrival.
    sleepers: BTreeMap<(Duration, u64), oneshot::Sender<()>>,
    next_seq: u64,
    participants: usize,
    /// Requests sent and not yet answered: time never moves under one.
    in_flight: usize,
}

impl MockClock {
    /// A clock on `mock`'s time, with a task that moves it (see [`MockClock::run`]).
    pub fn new(mock: &MockServer) -> Self {
        let state = mock.default_world().clone();
        let start = state.now();
        let clock = Self {
            inner: Arc::new(ClockInner {
                mock: state,
                base: Instant::now(),
                start,
                state: Mutex::new(ClockState::default()),
                changed: Notify::new(),
            }),
        };
        let driver = clock.clone();
        tokio::spawn(async move { driver.drive().await });
        clock
    }

    fn state(&self) -> MutexGuard<'_, ClockState> {
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn changed(&self) {
        self.inner.changed.notify_waiters();
    }

    /// Time passed on the mock since this clock was made.
    pub fn elapsed(&self) -> Duration {
        (self.inner.mock.now() - self.inner.start)
            .to_std()
            .unwrap_or_default()
    }

    /// Runs `work` as a participant: while it runs, time moves only when it (and
    /// every other participant) waits on this clock.
    pub async fn run<W: IntoFuture>(&self, work: W) -> W::Output {
        self.state().participants += 1;
        let _participant = Participant(self.clone());
        work.await
    }

    /// Moves time whenever every participant waits.
    ///
    /// A participant may run several things at once (a batch), and a task woken
    /// by a step may end without waiting again, which nothing announces; so the
    /// clock also looks again after a short quiet spell with no request in
    /// flight. An answer starts the spell again, so that what the answer sets
    /// off (a batch's create once a read shows a slot free) happens at the
    /// answer's instant.
    async fn drive(&self) {
        loop {
            let notified = self.inner.changed.notified();
            tokio::pin!(notified);
            // Registered before looking, so that no change is missed.
            notified.as_mut().enable();
            let idle = {
                let state = self.state();
                state.participants == 0 || state.sleepers.is_empty()
            };
            if idle {
                notified.await;
                continue;
            }
            tokio::select! {
                biased;
                () = &mut notified => continue,
                () = tokio::time::sleep(QUIET) => self.step(),
            }
        }
    }

    /// When every participant waits, moves the mock to the earliest wake-up and
    /// wakes whoever is due.
    fn step(&self) {
        let due = {
            let mut state = self.state();
            if state.participants == 0
                || state.in_flight > 0
                || state.sleepers.len() < state.participants
            {
                return;
            }
            let Some(&(wake, _)) = state.sleepers.keys().next() else {
                return;
            };
            let now = self.elapsed();
            if wake > now {
                self.inner
                    .mock
                    .advance_clock((wake - now).as_secs_f64())
                    .unwrap();
            }
            let now = self.elapsed().max(wake);
            let keys: Vec<_> = state
                .sleepers
                .keys()
                .take_while(|(at, _)| *at <= now)
                .copied()
                .collect();
            keys.into_iter()
                .filter_map(|key| state.sleepers.remove(&key))
                .collect::<Vec<_>>()
        };
        for waker in due {
            let _ = waker.send(());
        }
    }
}

struct Participant(MockClock);

impl Drop for Participant {
    fn drop(&mut self) {
        self.0.state().participants -= 1;
        self.0.changed();
    }
}

impl Clock for MockClock {
    fn now(&self) -> Instant {
        self.inner.base + self.elapsed()
    }

    fn request_started(&self) {
        self.state().in_flight += 1;
    }

    fn request_ended(&self) {
        self.state().in_flight -= 1;
        self.changed();
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        let clock = self.clone();
        Box::pin(async move {
            if duration.is_zero() {
                return;
            }
            let (wake, woken) = oneshot::channel();
            let key = {
                let mut state = clock.state();
                let key = (clock.elapsed() + duration, state.next_seq);
                state.next_seq += 1;
                state.sleepers.insert(key, wake);
                key
            };
            let _registered = Sleeper(clock.clone(), key);
            clock.changed();
            let _ = woken.await;
        })
    }
}

/// Takes a sleeper off the clock if its wait is dropped before it ends.
struct Sleeper(MockClock, (Duration, u64));

impl Drop for Sleeper {
    fn drop(&mut self) {
        self.0.state().sleepers.remove(&self.1);
    }
}

/// A clock on which every wait ends at once, and which remembers them: for
/// retry tests, which check the delays without taking them.
#[derive(Debug, Clone)]
pub struct InstantClock {
    base: Instant,
    slept: Arc<Mutex<Vec<Duration>>>,
}

impl Default for InstantClock {
    fn default() -> Self {
        Self::new()
    }
}

impl InstantClock {
    pub fn new() -> Self {
        Self {
            base: Instant::now(),
            slept: Arc::default(),
        }
    }

    /// The waits asked for, in order.
    pub fn sleeps(&self) -> Vec<Duration> {
        self.slept.lock().unwrap().clone()
    }
}

impl Clock for InstantClock {
    fn now(&self) -> Instant {
        self.base + self.slept.lock().unwrap().iter().sum::<Duration>()
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        self.slept.lock().unwrap().push(duration);
        Box::pin(std::future::ready(()))
    }
}

/// A client of a wiremock server with an [`InstantClock`].
pub fn wire_client(server: &wiremock::MockServer, clock: &InstantClock) -> Client {
    wire_client_with(server, clock, RetryPolicy::default())
}

pub fn wire_client_with(
    server: &wiremock::MockServer,
    clock: &InstantClock,
    policy: RetryPolicy,
) -> Client {
    Client::builder()
        .base_url(server.uri())
        .api_key(TEST_KEY)
        .clock(clock.clone())
        .retry_policy(policy)
        .build()
        .expect("a client")
}

/// An API key for wiremock tests.
pub const TEST_KEY: &str = "mg_live_testpublic_testsecretvalue";

/// The service's error envelope.
pub fn error_body(code: &str, message: &str) -> serde_json::Value {
    serde_json::json!({"error": {
        "code": code,
        "message": message,
        "requestId": "req_0123456789abcdef01234567",
        "timestamp": "2026-11-22T10:15:30.123Z",
    }})
}

/// A generation object as `GET /v1/generations/{id}` answers.
pub fn generation_body(id: uuid::Uuid, status: &str) -> serde_json::Value {
    serde_json::json!({
        "id": id, "status": status, "modelSlug": "flux-schnell", "mediaType": "IMAGE",
        "prompt": "a fox", "params": {}, "costRub": 2.5,
        "outputUrls": if status == "SUCCEEDED" { vec!["https://cdn.example/0.png"] } else { vec![] },
        "errorCode": null, "errorMessage": null,
        "createdAt": "2026-11-22T10:15:30.123Z", "startedAt": null, "finishedAt": null,
    })
}

/// The contract's example requisites, which carry valid check digits.
pub fn requisites() -> mediagen::raw::record_builders::RequisitesInput {
    mediagen::RequisitesInput::builder()
        .legal_name("OOO \"Romashka Media\"")
        .inn("7712345671")
        .kpp(Some("771201001".parse().unwrap()))
        .ogrn("1027700123450")
        .legal_address("123112, Moscow, Presnenskaya emb. 12, office 401")
        .bank_name("AO \"Example Bank\"")
        .bic("044525987")
        .settlement_account("40702810500000012345")
        .correspondent_account("30101810900000000987")
}
