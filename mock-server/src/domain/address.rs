//! Which webhook endpoint URLs may be used (service document,
//! `POST /v1/webhook-endpoints`, the validation table).
//!
//! The rules exist so that a webhook cannot be aimed at the service's own
//! network (server-side request forgery). They are applied to what an HTTP
//! client would actually connect to: the host as the WHATWG URL parser reads
//! it (so `http://2130706433/`, `http://0x7f000001/`, `http://0177.0.0.1/` and
//! `http://127.1/` are all 127.0.0.1, and in `http://a.com@10.0.0.1/` the host
//! is 10.0.0.1), and for a name, every address it resolves to.
//!
//! A check returns the address it approved so that the delivery connects to
//! exactly that address: looking the name up again would let its DNS answer
//! change between the check and the connection (DNS rebinding).

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::time::Duration;

use url::{Host, Url};

/// How long a name may take to resolve before it counts as not resolving, so
/// that a stalled resolver cannot hold a request open.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a webhook URL is refused; `Display` gives the service's message exactly.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize,
)]
pub enum AddressError {
    #[error("Only http and https URLs are allowed")]
    BadScheme,
    #[error("Localhost URLs are not allowed")]
    Localhost,
    #[error("Private IP addresses are not allowed")]
    Private,
    #[error("DNS resolution failed for the provided hostname")]
    Unresolvable,
    /// Not a URL at all. The document gives no message for this case, so this
    /// one is the mock's own.
    #[error("url must be an absolute http or https URL")]
    Malformed,
}

/// The future a [`Resolver`] answers with.
pub type Resolution<'a> = Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>>;

/// Resolves host names; the real one uses the system resolver, tests and the
/// control API use fixed answers.
pub trait Resolver: Send + Sync + fmt::Debug {
    /// The addresses of `host` (an ASCII name as the URL parser leaves it).
    /// An empty list counts as not resolving.
    fn resolve(&self, host: &str, port: u16) -> Resolution<'_>;
}

/// A name as DNS compares it: IDNA-mapped, lower case, without trailing dots,
/// so that the control API may pin `Hooks.Example.COM.` or a Unicode name
/// and still match the ASCII host the URL parser produces.
pub fn normalize(host: &str) -> String {
    let host = host.trim_end_matches('.');
    match Host::parse(host) {
        Ok(Host::Domain(domain)) => domain,
        _ => host.to_ascii_lowercase(),
    }
}

/// The host name and the checked address to connect to it at; `None` when the
/// URL's host is an IP address, which needs no lookup.
pub type Pinned = Option<(String, SocketAddr)>;

/// Checks a URL as the create and update endpoints do, in the order of the
/// document's table: scheme, localhost, literal private IPs, then DNS (every
/// resolved address must be public; none resolving is `Unresolvable`).
///
/// With `allow_private` (the mock's `--allow-private-webhooks`, for CI
/// receivers on 127.0.0.1) the localhost and private rules are lifted, but the
/// scheme and resolution rules stay.
///
/// Returns the parsed URL and, for a host name, the approved address that
/// delivery must connect to instead of resolving the name again.
pub async fn check_webhook_url(
    url: &str,
    resolver: &dyn Resolver,
    allow_private: bool,
) -> Result<(Url, Pinned), AddressError> {
    let parsed = parse(url)?;
    // Both schemes have a default port, so this only guards the invariant.
    let port = parsed
        .port_or_known_default()
        .ok_or(AddressError::Malformed)?;
    let name = match parsed.host().map(|host| host.to_owned()) {
        Some(Host::Ipv4(ip)) => return judge_literal(parsed, ip.into(), allow_private),
        Some(Host::Ipv6(ip)) => return judge_literal(parsed, ip.into(), allow_private),
        Some(Host::Domain(name)) => name,
        // The parser gives every http and https URL a host.
        None => return Err(AddressError::Malformed),
    };
    if is_localhost(&name) {
        if !allow_private {
            return Err(AddressError::Localhost);
        }
        // RFC 6761 §6.3: localhost names are loopback without asking DNS, and
        // the system resolver cannot be trusted to know `*.localhost`. IPv4,
        // because that is where local receivers listen.
        let pinned = SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port);
        return Ok((parsed, Some((name, pinned))));
    }
    let ips = match tokio::time::timeout(RESOLVE_TIMEOUT, resolver.resolve(&name, port)).await {
        Ok(Ok(ips)) => ips,
        Ok(Err(_)) | Err(_) => return Err(AddressError::Unresolvable),
    };
    let Some(&first) = ips.first() else {
        return Err(AddressError::Unresolvable);
    };
    // One private answer is enough to refuse: a client may connect to any of them.
    if !allow_private && ips.iter().any(|&ip| is_private(ip)) {
        return Err(AddressError::Private);
    }
    Ok((parsed, Some((name, SocketAddr::new(first, port)))))
}

fn judge_literal(url: Url, ip: IpAddr, allow_private: bool) -> Result<(Url, Pinned), AddressError> {
    if !allow_private && is_private(ip) {
        return Err(AddressError::Private);
    }
    Ok((url, None))
}

/// Parses with the WHATWG rules browsers and HTTP clients use, so the host
/// judged is the host that would be connected to.
fn parse(input: &str) -> Result<Url, AddressError> {
    let Ok(url) = Url::parse(input) else {
        // `ftp://` or `ftp://[` fail to parse, yet the scheme is what is
        // wrong with them, and its message tells the caller what to fix.
        return Err(if has_foreign_scheme(input) {
            AddressError::BadScheme
        } else {
            AddressError::Malformed
        });
    };
    match url.scheme() {
        "http" | "https" => Ok(url),
        _ => Err(AddressError::BadScheme),
    }
}

/// Whether the input starts with a syntactically valid scheme (RFC 3986 §3.1)
/// other than http and https, read the way the URL parser reads it: outer
/// control characters and spaces trimmed, tabs and newlines ignored.
fn has_foreign_scheme(input: &str) -> bool {
    let cleaned: String = input
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let Some((scheme, _)) = cleaned.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid && !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https")
}

/// Localhost in any spelling the parser lets through (it has already lowered
/// the case and decoded percent escapes): `localhost` and its subdomains
/// (RFC 6761 §6.3), with any trailing dots, and the aliases Linux
/// distributions put in /etc/hosts. Any other name that resolves to loopback
/// is refused as private after resolution.
fn is_localhost(name: &str) -> bool {
    let name = name.trim_end_matches('.');
    name == "localhost"
        || name.ends_with(".localhost")
        || matches!(
            name,
            "localhost.localdomain"
                | "localhost6"
                | "localhost6.localdomain6"
                | "ip6-localhost"
                | "ip6-loopback"
        )
}

/// IPv4 blocks that are not globally reachable (IANA IPv4 special-purpose
/// address registry, RFC 6890), with the reason each would be a way in.
const NOT_PUBLIC_V4: [(Ipv4Addr, u8); 15] = [
    // "This network"; Linux connects 0.0.0.0 to the local host.
    (Ipv4Addr::new(0, 0, 0, 0), 8),
    // RFC 1918.
    (Ipv4Addr::new(10, 0, 0, 0), 8),
    // Shared address space behind carrier-grade NAT (RFC 6598).
    (Ipv4Addr::new(100, 64, 0, 0), 10),
    // Loopback.
    (Ipv4Addr::new(127, 0, 0, 0), 8),
    // Link-local, home of the cloud metadata service at 169.254.169.254.
    (Ipv4Addr::new(169, 254, 0, 0), 16),
    // RFC 1918.
    (Ipv4Addr::new(172, 16, 0, 0), 12),
    // IETF protocol assignments (RFC 6890), such as the DS-Lite and NAT64
    // gateway addresses.
    (Ipv4Addr::new(192, 0, 0, 0), 24),
    // Documentation (RFC 5737): assigned to no host, so no receiver can be there.
    (Ipv4Addr::new(192, 0, 2, 0), 24),
    // Deprecated 6to4 relay anycast (RFC 7526).
    (Ipv4Addr::new(192, 88, 99, 0), 24),
    // RFC 1918.
    (Ipv4Addr::new(192, 168, 0, 0), 16),
    // Benchmarking (RFC 2544): lab networks.
    (Ipv4Addr::new(198, 18, 0, 0), 15),
    // Documentation (RFC 5737).
    (Ipv4Addr::new(198, 51, 100, 0), 24),
    // Documentation (RFC 5737).
    (Ipv4Addr::new(203, 0, 113, 0), 24),
    // Multicast: HTTP needs one peer.
    (Ipv4Addr::new(224, 0, 0, 0), 4),
    // Reserved, and the limited broadcast 255.255.255.255.
    (Ipv4Addr::new(240, 0, 0, 0), 4),
];

/// IPv6 blocks inside global unicast 2000::/3 that are still not globally
/// reachable (IANA IPv6 special-purpose address registry).
const NOT_PUBLIC_V6_IN_GLOBAL: [(Ipv6Addr, u8); 4] = [
    // IETF protocol assignments, including Teredo 2001::/32 (which embeds an
    // IPv4 address) and benchmarking 2001:2::/48.
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23),
    // Documentation (RFC 3849).
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32),
    // 6to4 (RFC 3056, deprecated by RFC 7526): embeds an IPv4 address that
    // relays would forward to.
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16),
    // Documentation (RFC 9637).
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20),
];

/// Whether a webhook must not be sent to `ip`: loopback, private, link-local,
/// shared, multicast, reserved, documentation or otherwise not a globally
/// reachable unicast address. IPv6 addresses that carry an IPv4 address for
/// the network to reach (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`)
/// are judged by that IPv4 address.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => is_private_v6(v6),
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    NOT_PUBLIC_V4
        .iter()
        .any(|&(block, len)| in_block(u32::from(ip).into(), u32::from(block).into(), len, 32))
}

fn is_private_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = carried_v4(ip) {
        return is_private_v4(v4);
    }
    // Only 2000::/3 is allocated for global unicast (RFC 4291 §2.4); the rest
    // is loopback, unspecified, unique-local fc00::/7, link-local fe80::/10,
    // site-local, multicast ff00::/8, the deprecated IPv4-compatible ::/96,
    // discard-only 100::/64, local-use NAT64 64:ff9b:1::/48 and unassigned space.
    let bits = u128::from(ip);
    !in_block(
        bits,
        u128::from(Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0)),
        3,
        128,
    ) || NOT_PUBLIC_V6_IN_GLOBAL
        .iter()
        .any(|&(block, len)| in_block(bits, u128::from(block), len, 128))
}

/// The IPv4 address an IPv6 address hands to the IPv4 network: IPv4-mapped
/// ::ffff:0:0/96 (what a dual-stack socket connects to) and the NAT64
/// well-known prefix 64:ff9b::/96 (RFC 6052).
fn carried_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    match ip.segments() {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] | [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => {
            Some(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)))
        }
        _ => None,
    }
}

/// Whether `ip` lies in the block `base/len`, both as `width`-bit numbers.
fn in_block(ip: u128, base: u128, len: u8, width: u32) -> bool {
    let shift = width - u32::from(len);
    ip.checked_shr(shift) == base.checked_shr(shift)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::future::ready;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Fixed answers for the names a test pins, as the control API pins them;
    /// nothing else resolves, and each such question is counted: this machine has
    /// no network, and the tests must never reach one anyway.
    #[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
    struct Fixed {
        names: Mutex<HashMap<String, Vec<IpAddr>>>,
        asked: AtomicUsize,
    }

    impl Fixed {
        fn set(&self, host: &str, ips: Vec<IpAddr>) {
            self.names.lock().unwrap().insert(normalize(host), ips);
        }
    }

    impl Resolver for Fixed {
        fn resolve(&self, host: &str, _port: u16) -> Resolution<'_> {
            let fixed = self.names.lock().unwrap().get(&normalize(host)).cloned();
            Box::pin(ready(fixed.ok_or_else(|| {
                self.asked.fetch_add(1, Ordering::SeqCst);
                io::Error::new(io::ErrorKind::NotFound, "no network in tests")
            })))
        }
    }

    fn resolver() -> Fixed {
        Fixed::default()
    }

    const PUBLIC: IpAddr = IpAddr::V4(Ipv4Addr::new(93, 184, 216, 34));

    async fn check(url: &str) -> Result<(Url, Pinned), AddressError> {
        check_webhook_url(url, &resolver(), false).await
    }

    async fn assert_refused(url: &str, expected: AddressError) {
        assert_eq!(check(url).await.err(), Some(expected), "{url}");
    }

    #[test]
    fn messages_are_the_services_exactly() {
        assert_eq!(
            AddressError::BadScheme.to_string(),
            "Only http and https URLs are allowed"
        );
        assert_eq!(
            AddressError::Localhost.to_string(),
            "Localhost URLs are not allowed"
        );
        assert_eq!(
            AddressError::Private.to_string(),
            "Private IP addresses are not allowed"
        );
        assert_eq!(
            AddressError::Unresolvable.to_string(),
            "DNS resolution failed for the provided hostname"
        );
        assert_eq!(
            AddressError::Malformed.to_string(),
            "url must be an absolute http or https URL"
        );
    }

    #[tokio::test]
    async fn schemes_other_than_http_and_https_are_refused() {
        for url in [
            "ftp://example.com/hook",
            "ftp://",
            "ftp://[",
            "javascript:alert(1)",
            "javascript:",
            "file:///etc/passwd",
            "gopher://127.0.0.1:6379/_FLUSHALL",
            "ws://hooks.example.com/",
            "data:text/plain,hi",
            "localhost:8080",
        ] {
            assert_refused(url, AddressError::BadScheme).await;
        }
    }

    #[tokio::test]
    async fn strings_that_are_not_absolute_urls_are_malformed() {
        for url in [
            "http://",
            "https://",
            "HTTP://",
            "",
            "   ",
            "/hook",
            "hooks.example.com/hook",
            "127.0.0.1:8080/hook",
            "http://[::1",
            "http://1.2.3.4.5/",
            "http://a b/",
            "http://[fe80::1%25eth0]/",
        ] {
            assert_refused(url, AddressError::Malformed).await;
        }
    }

    #[tokio::test]
    async fn localhost_in_any_spelling_is_refused() {
        for url in [
            "http://localhost/x",
            "http://LOCALHOST./x",
            "http://LocalHost:8080/",
            "https://api.localhost/x",
            "http://a.b.localhost./x",
            "http://localhost.localdomain/x",
            "http://localhost../x",
            "http://loc%61lhost/x",
            "http://ip6-localhost/x",
        ] {
            assert_refused(url, AddressError::Localhost).await;
        }
    }

    #[tokio::test]
    async fn private_ipv4_literals_are_refused() {
        for url in [
            "http://127.0.0.1/x",
            "http://127.255.255.254/x",
            "http://10.1.2.3/x",
            "http://172.16.0.1/x",
            "http://172.31.255.255/x",
            "http://192.168.1.1/x",
            "http://100.64.0.1/x",
            "http://100.127.255.255/x",
            "http://169.254.169.254/latest/meta-data",
            "http://0.0.0.0/x",
            "http://0.1.2.3/x",
            "http://0/x",
            "http://192.0.0.8/x",
            "http://198.18.0.1/x",
            "http://198.19.255.255/x",
            "http://192.0.2.1/x",
            "http://198.51.100.1/x",
            "http://203.0.113.1/x",
            "http://224.0.0.1/x",
            "http://239.255.255.250/x",
            "http://240.0.0.1/x",
            "http://255.255.255.255/x",
        ] {
            assert_refused(url, AddressError::Private).await;
        }
    }

    #[tokio::test]
    async fn numeric_spellings_of_loopback_are_refused_as_private() {
        for url in [
            "http://2130706433/x",
            "http://0x7f000001/x",
            "http://0177.0.0.1/x",
            "http://127.1/x",
            "http://0x7f.1/x",
            "http://%31%32%37.0.0.1/x",
            "http://\u{ff11}\u{ff12}\u{ff17}.\u{ff10}.\u{ff10}.\u{ff11}/x",
            "http://hooks.example.com@127.0.0.1/x",
        ] {
            assert_refused(url, AddressError::Private).await;
        }
    }

    #[tokio::test]
    async fn private_ipv6_literals_are_refused() {
        for url in [
            "http://[::1]/x",
            "http://[::]/x",
            "http://[fc00::1]/x",
            "http://[fd12:3456::1]/x",
            "http://[fe80::1]/x",
            "http://[fec0::1]/x",
            "http://[ff02::1]/x",
            "http://[::ffff:10.0.0.1]/x",
            "http://[::ffff:127.0.0.1]/x",
            "http://[::ffff:169.254.169.254]/x",
            "http://[64:ff9b::10.0.0.1]/x",
            "http://[64:ff9b:1::1]/x",
            "http://[::127.0.0.1]/x",
            "http://[100::1]/x",
            "http://[2001:db8::1]/x",
            "http://[2001::1]/x",
            "http://[2002:7f00:1::1]/x",
            "http://[3fff::1]/x",
        ] {
            assert_refused(url, AddressError::Private).await;
        }
    }

    #[tokio::test]
    async fn public_ip_literals_are_accepted_without_asking_the_resolver() {
        let resolver = resolver();
        for url in [
            "https://93.184.216.34/x",
            "http://172.32.0.1/x",
            "http://100.128.0.1/x",
            "http://8.8.8.8:8080/x",
            "https://[2606:4700::1111]/x",
            "https://[::ffff:93.184.216.34]/x",
            "https://[64:ff9b::93.184.216.34]/x",
        ] {
            let (parsed, pinned) = check_webhook_url(url, &resolver, false).await.expect(url);
            assert!(
                matches!(parsed.host(), Some(Host::Ipv4(_) | Host::Ipv6(_))),
                "{url}"
            );
            assert_eq!(pinned, None, "{url}");
        }
        assert_eq!(resolver.asked.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_name_resolving_to_a_public_address_is_accepted_and_pinned_to_it() {
        let resolver = resolver();
        resolver.set("hooks.example.com", vec![PUBLIC]);
        let (url, pinned) = check_webhook_url("https://hooks.example.com/x", &resolver, false)
            .await
            .expect("accepted");
        assert_eq!(url.as_str(), "https://hooks.example.com/x");
        assert_eq!(
            pinned,
            Some(("hooks.example.com".to_owned(), SocketAddr::new(PUBLIC, 443)))
        );
    }

    #[tokio::test]
    async fn credentials_in_the_url_are_accepted_and_the_host_after_them_is_judged() {
        let resolver = resolver();
        resolver.set("hooks.example.com", vec![PUBLIC]);
        let (url, _) = check_webhook_url("https://user:pass@hooks.example.com/x", &resolver, false)
            .await
            .expect("accepted");
        assert_eq!(url.username(), "user");
        assert_eq!(
            check_webhook_url("https://hooks.example.com@10.0.0.1/x", &resolver, false)
                .await
                .err(),
            Some(AddressError::Private)
        );
    }

    #[tokio::test]
    async fn a_name_resolving_to_a_private_address_is_refused() {
        let resolver = resolver();
        resolver.set("internal.example.com", vec![IpAddr::from([10, 0, 0, 5])]);
        let refused = check_webhook_url("https://internal.example.com/x", &resolver, false).await;
        assert_eq!(refused.err(), Some(AddressError::Private));
    }

    #[tokio::test]
    async fn a_name_resolving_to_a_public_and_a_private_address_is_refused() {
        let resolver = resolver();
        resolver.set(
            "mixed.example.com",
            vec![PUBLIC, IpAddr::from([127, 0, 0, 1])],
        );
        let refused = check_webhook_url("https://mixed.example.com/x", &resolver, false).await;
        assert_eq!(refused.err(), Some(AddressError::Private));
    }

    #[tokio::test]
    async fn a_name_resolving_to_a_mapped_private_ipv6_address_is_refused() {
        let resolver = resolver();
        resolver.set(
            "sneaky.example.com",
            vec!["::ffff:192.168.0.1".parse().expect("ip")],
        );
        let refused = check_webhook_url("https://sneaky.example.com/x", &resolver, false).await;
        assert_eq!(refused.err(), Some(AddressError::Private));
    }

    #[tokio::test]
    async fn a_name_that_does_not_resolve_is_refused() {
        assert_refused(
            "https://no-such-host.invalid/hook",
            AddressError::Unresolvable,
        )
        .await;
    }

    #[tokio::test]
    async fn a_name_pinned_to_no_addresses_does_not_resolve() {
        let resolver = resolver();
        resolver.set("gone.example.com", Vec::new());
        let refused = check_webhook_url("https://gone.example.com/x", &resolver, false).await;
        assert_eq!(refused.err(), Some(AddressError::Unresolvable));
    }

    #[tokio::test]
    async fn a_name_that_comes_to_resolve_privately_is_refused_on_the_next_check() {
        let resolver = resolver();
        resolver.set("hooks.example.com", vec![PUBLIC]);
        assert!(
            check_webhook_url("https://hooks.example.com/x", &resolver, false)
                .await
                .is_ok()
        );
        resolver.set("hooks.example.com", vec![IpAddr::from([10, 0, 0, 1])]);
        let refused = check_webhook_url("https://hooks.example.com/x", &resolver, false).await;
        assert_eq!(refused.err(), Some(AddressError::Private));
    }

    #[tokio::test]
    async fn overrides_match_names_case_insensitively_and_without_trailing_dots() {
        let resolver = resolver();
        resolver.set("Hooks.Example.COM.", vec![PUBLIC]);
        for url in [
            "https://hooks.example.com/x",
            "https://HOOKS.example.com./x",
        ] {
            assert!(
                check_webhook_url(url, &resolver, false).await.is_ok(),
                "{url}"
            );
        }
        resolver.set("b\u{fc}cher.example", vec![PUBLIC]);
        assert!(
            check_webhook_url("https://xn--bcher-kva.example/x", &resolver, false)
                .await
                .is_ok()
        );
    }

    #[tokio::test]
    async fn allow_private_lets_loopback_and_private_addresses_through() {
        let resolver = resolver();
        resolver.set("internal.example.com", vec![IpAddr::from([10, 0, 0, 5])]);
        for url in [
            "http://127.0.0.1:8080/hook",
            "http://[::1]:8080/hook",
            "http://192.168.1.10/hook",
            "http://internal.example.com/hook",
        ] {
            assert!(
                check_webhook_url(url, &resolver, true).await.is_ok(),
                "{url}"
            );
        }
    }

    #[tokio::test]
    async fn allow_private_lets_localhost_through_pinned_to_ipv4_loopback_without_dns() {
        let resolver = resolver();
        for url in ["http://localhost:9000/", "http://receiver.localhost:9000/"] {
            let (_, pinned) = check_webhook_url(url, &resolver, true).await.expect(url);
            let (_, address) = pinned.expect("a pinned address");
            assert_eq!(address, SocketAddr::from(([127, 0, 0, 1], 9000)), "{url}");
        }
        assert_eq!(resolver.asked.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn allow_private_still_refuses_other_schemes_and_unresolvable_names() {
        let resolver = resolver();
        for (url, expected) in [
            ("ftp://127.0.0.1/hook", AddressError::BadScheme),
            ("ftp://", AddressError::BadScheme),
            ("file:///etc/passwd", AddressError::BadScheme),
            ("http://", AddressError::Malformed),
            (
                "https://no-such-host.invalid/hook",
                AddressError::Unresolvable,
            ),
        ] {
            assert_eq!(
                check_webhook_url(url, &resolver, true).await.err(),
                Some(expected),
                "{url}"
            );
        }
    }

    #[tokio::test]
    async fn garbage_input_is_refused_without_panicking() {
        let long = format!("http://{}.com/", "a".repeat(100_000));
        for url in [
            "\0",
            ":",
            "://",
            "http:",
            "http:/",
            "http:///",
            "http://@/",
            "http://:80/",
            "http://[]/",
            "http://[:::]/",
            "http://%/",
            "http://%zz/",
            "http://xn--/",
            "http://\u{200b}/",
            "http://\u{feff}\u{0}/",
            "\u{1F600}://\u{1F600}",
            "http://example.com:99999/",
            "https://999.999.999.999/",
            "http://0x100000000/",
            long.as_str(),
        ] {
            assert!(check(url).await.is_err(), "{url:?}");
        }
    }

    #[test]
    fn is_private_draws_the_edges_of_each_block_exactly() {
        for (ip, private) in [
            ("9.255.255.255", false),
            ("10.0.0.0", true),
            ("11.0.0.0", false),
            ("100.63.255.255", false),
            ("100.64.0.0", true),
            ("172.15.255.255", false),
            ("172.16.0.0", true),
            ("172.31.255.255", true),
            ("172.32.0.0", false),
            ("192.167.255.255", false),
            ("192.169.0.0", false),
            ("198.17.255.255", false),
            ("198.20.0.0", false),
            ("223.255.255.255", false),
            ("224.0.0.0", true),
            ("1fff:ffff::1", true),
            ("2000::1", false),
            ("2001:200::1", false),
            ("2001:1ff:ffff::1", true),
            ("2400:cb00::1", false),
            ("3fff:fff::1", true),
            ("4000::1", true),
            ("fbff::1", true),
            ("::ffff:8.8.8.8", false),
            ("::ffff:0.0.0.0", true),
        ] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert_eq!(is_private(ip), private, "{ip}");
        }
    }
}
