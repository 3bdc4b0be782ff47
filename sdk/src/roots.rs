//! TLS roots where the system has none: a distroless or `FROM scratch` image, a
//! minimal CI container. reqwest's rustls verifier reads the system's store and
//! refuses to build a client when it is empty; the toolkit then uses the Mozilla
//! roots it carries (`webpki-root-certs`), so that no program of it fails for
//! want of `/etc/ssl/certs`.

/// Builds the client `make` describes, with the system's TLS roots; where the
/// system has none, with the Mozilla roots built into this crate (feature
/// `rustls`). `make` is called a second time for that fallback, since a
/// `reqwest::ClientBuilder` is used up by `build`.
///
/// The SDK's own clients are made this way; make a client for
/// [`ClientBuilder::http_client`](crate::ClientBuilder::http_client) the same
/// way to keep that property.
///
/// ```
/// let http = mediagen::build_http_client(|| {
///     reqwest::Client::builder().pool_max_idle_per_host(4)
/// })
/// .expect("a client with the system's roots or the built-in ones");
/// let builder = mediagen::Client::builder().http_client(http);
/// # drop(builder);
/// ```
///
/// # Errors
///
/// The builder's own error when even the built-in roots do not make it build
/// (a setting of `make` reqwest refuses).
pub fn build_http_client(
    make: impl Fn() -> reqwest::ClientBuilder,
) -> reqwest::Result<reqwest::Client> {
    let system = make().build();
    #[cfg(feature = "rustls")]
    let system = system.or_else(|_| make().tls_certs_only(built_in()).build());
    system
}

/// The client the SDK builds requests with where another one sends them (a
/// middleware chain), and the maker of a stand-in transport error: it never
/// connects, so it needs no roots at all.
pub(crate) fn offline_client() -> reqwest::Client {
    static CLIENT: std::sync::LazyLock<reqwest::Client> = std::sync::LazyLock::new(|| {
        let builder = reqwest::Client::builder();
        // An empty set of roots: nothing is read from the system.
        #[cfg(any(feature = "rustls", feature = "native-tls"))]
        let builder = builder.tls_certs_only([]);
        builder
            .build()
            .expect("a client with no roots and default settings builds")
    });
    CLIENT.clone()
}

#[cfg(feature = "rustls")]
fn built_in() -> impl Iterator<Item = reqwest::Certificate> {
    webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .filter_map(|der| reqwest::Certificate::from_der(der).ok())
}
