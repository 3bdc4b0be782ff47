//! Host names resolved for webhook URLs: the system's resolver, and fixed answers
//! pinned by the control API or by tests over it. The rules the answers are judged
//! by are in `domain/address.rs`.

use std::collections::HashMap;
use std::fmt;
use std::future::ready;
use std::io;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::domain::address::{Resolution, Resolver, normalize};

/// The operating system's resolver, through `tokio::net::lookup_host`.
#[derive(Debug, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> Resolution<'_> {
        let host = host.to_owned();
        Box::pin(async move {
            // RFC 6761 §6.4: `.invalid` never resolves and resolvers should say
            // so at once; asking the system would only wait for its timeout on
            // a machine without network.
            let name = normalize(&host);
            if name == "invalid" || name.ends_with(".invalid") {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    "an .invalid name never resolves",
                ));
            }
            let addresses = tokio::net::lookup_host((host.as_str(), port)).await?;
            Ok(addresses.map(|address| address.ip()).collect())
        })
    }
}

/// Fixed answers for some names (set through the control API or by tests),
/// falling back to another resolver for the rest.
pub struct OverrideResolver {
    names: Mutex<HashMap<String, Vec<IpAddr>>>,
    fallback: Arc<dyn Resolver>,
}

impl fmt::Debug for OverrideResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OverrideResolver")
            .field("names", &*self.lock())
            .field("fallback", &self.fallback)
            .finish()
    }
}

impl OverrideResolver {
    pub fn new(fallback: Arc<dyn Resolver>) -> Self {
        Self {
            names: Mutex::new(HashMap::new()),
            fallback,
        }
    }

    /// Makes `host` resolve to `ips`, replacing any earlier answer. The name is
    /// matched case-insensitively and without its trailing dot, as DNS does;
    /// an empty list makes the name fail to resolve.
    pub fn set(&self, host: &str, ips: Vec<IpAddr>) {
        self.lock().insert(normalize(host), ips);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<IpAddr>>> {
        // Every write is one insert or clear, so a panic while the lock was
        // held cannot have left the map half-written.
        self.names.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Resolver for OverrideResolver {
    fn resolve(&self, host: &str, port: u16) -> Resolution<'_> {
        let fixed = self.lock().get(&normalize(host)).cloned();
        match fixed {
            Some(ips) => Box::pin(ready(Ok(ips))),
            None => self.fallback.resolve(host, port),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn system_resolver_answers_invalid_names_without_a_query() {
        let answer = SystemResolver.resolve("no-such-host.INVALID.", 443).await;
        assert_eq!(
            answer.map_err(|err| err.kind()).err(),
            Some(io::ErrorKind::NotFound)
        );
    }

    #[tokio::test]
    async fn a_pinned_name_answers_in_any_spelling_and_others_go_to_the_fallback() {
        let resolver = OverrideResolver::new(Arc::new(SystemResolver));
        resolver.set("Hooks.Example.COM.", vec![IpAddr::from([93, 184, 216, 34])]);
        let pinned = resolver.resolve("hooks.example.com", 443).await.unwrap();
        assert_eq!(pinned, [IpAddr::from([93, 184, 216, 34])]);
        // The fallback is asked for the rest: an .invalid name fails at once.
        assert!(resolver.resolve("other.invalid", 443).await.is_err());
    }
}
