//! The TLS roots of the mock's outgoing clients (webhook deliveries, the judge's
//! calls): the system's, merged with the Mozilla roots built in
//! (`webpki-root-certs`). A minimal image without `/etc/ssl/certs` then starts
//! and delivers to HTTPS receivers, where reqwest alone would refuse to build a
//! client.

use std::sync::LazyLock;

/// The built-in roots, parsed once per process.
pub(crate) fn built_in_roots() -> Vec<reqwest::Certificate> {
    static ROOTS: LazyLock<Vec<reqwest::Certificate>> = LazyLock::new(|| {
        webpki_root_certs::TLS_SERVER_ROOT_CERTS
            .iter()
            .filter_map(|der| reqwest::Certificate::from_der(der).ok())
            .collect()
    });
    ROOTS.clone()
}
