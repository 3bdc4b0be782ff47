//! What the process knows of one service, shared by every client of it.
//!
//! The service counts its general limit per IP address (Limits, rule 1):
//! every key and every client behind the address share it. So every client of
//! this process that talks to the same service (scheme, host and port) on the
//! real clock shares one pacer, and with it what the `x-ratelimit-*` headers
//! of each answer say, which also counts the requests of other processes
//! behind the address. The typical times of the models are shared the same way.
//! The pacer itself is shared with the other processes of the host through a
//! state file (`rate_limit/shared.rs`), unless the client opts out.
//!
//! A client on a clock of its own (a test's, a simulation's) or with pacing
//! off keeps a host of its own: its time is not the process's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use crate::rate_limit::Pacer;
use crate::timing::Timing;

/// The shared state of one service.
#[derive(Debug)]
pub(crate) struct Host {
    pub(crate) pacer: Arc<Pacer>,
    pub(crate) timing: Timing,
}

impl Host {
    fn new(pacer: Pacer) -> Self {
        Self {
            pacer: Arc::new(pacer),
            timing: Timing::default(),
        }
    }

    /// The host every paced client of `origin` on the real clock shares; it
    /// lives as long as one of them does. Its pace is shared with the other
    /// processes of the host through `pace_dir`, or is this process's own.
    pub(crate) fn shared(origin: &str, pace_dir: Option<&Path>) -> Arc<Self> {
        type Key = (String, Option<PathBuf>);
        static HOSTS: LazyLock<Mutex<HashMap<Key, Weak<Host>>>> = LazyLock::new(Mutex::default);
        let mut hosts = HOSTS.lock().unwrap_or_else(|p| p.into_inner());
        hosts.retain(|_, host| host.strong_count() > 0);
        let key = (origin.to_owned(), pace_dir.map(Path::to_owned));
        if let Some(host) = hosts.get(&key).and_then(Weak::upgrade) {
            return host;
        }
        let pacer = match pace_dir {
            Some(dir) => Pacer::shared(dir, origin),
            None => Pacer::new(true),
        };
        let host = Arc::new(Self::new(pacer));
        hosts.insert(key, Arc::downgrade(&host));
        host
    }

    /// A host of one client's own.
    pub(crate) fn private(pacing: bool) -> Arc<Self> {
        Arc::new(Self::new(Pacer::new(pacing)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_of_one_service_share_its_host_and_others_do_not() {
        let a = Host::shared("http://127.0.0.1:9101", None);
        let b = Host::shared("http://127.0.0.1:9101", None);
        let other = Host::shared("http://127.0.0.1:9102", None);
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &other));
        assert!(!Arc::ptr_eq(&a, &Host::private(true)));
    }

    #[test]
    fn clients_sharing_their_pace_elsewhere_have_a_host_of_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let process = Host::shared("http://127.0.0.1:9103", None);
        let a = Host::shared("http://127.0.0.1:9103", Some(dir.path()));
        let b = Host::shared("http://127.0.0.1:9103", Some(dir.path()));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &process));
    }
}
