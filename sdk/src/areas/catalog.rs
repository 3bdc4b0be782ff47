//! The public catalogue, and sign-in links: operations that need no key.

use crate::bridge::call;
use crate::call::Call;
use crate::client::Client;
use crate::error::Error;
use crate::generated::types;

/// The catalogue of a [`Client`]: models, their parameters and prices in roubles.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mediagen::Error> {
/// # let mock = mediagen_mock_server::MockServer::start().await;
/// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
/// for model in client.catalog().models().await? {
///     println!("{} ({}): {} RUB per {}", model.slug, model.media_type, model.pricing.base_rub, model.pricing.unit);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct CatalogArea<'a> {
    client: &'a Client,
}

impl Client {
    /// The public catalogue of models and prices.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let model = client.catalog().model("flux-schnell").await?.expect("listed");
    /// assert_eq!(model.pricing.base_rub, 2.5);
    /// # Ok(())
    /// # }
    /// ```
    pub fn catalog(&self) -> CatalogArea<'_> {
        CatalogArea::new(self)
    }
}

impl<'a> CatalogArea<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Self { client }
    }

    /// The whole catalogue (`GET /v1/catalog/`, public).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let catalog = client.catalog().get().await?;
    /// assert!(!catalog.models.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn get(&self) -> Call<'a, types::Catalog> {
        let this = *self;
        Call::new(async move { call(this.client.raw().list_catalog().send()).await })
    }

    /// The models of the catalogue.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// use mediagen::MediaType;
    ///
    /// let video: Vec<_> = client
    ///     .catalog()
    ///     .models()
    ///     .await?
    ///     .into_iter()
    ///     .filter(|m| m.media_type == MediaType::Video)
    ///     .collect();
    /// assert!(!video.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn models(&self) -> Call<'a, Vec<types::Model>> {
        let this = *self;
        Call::new(async move { Ok(this.get().await?.models) })
    }

    /// One model by its slug, if the catalogue lists it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// assert!(client.catalog().model("no-such-model").await?.is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn model<'c>(&self, slug: &'c str) -> Call<'c, Option<types::Model>>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move { Ok(this.models().await?.into_iter().find(|m| m.slug == slug)) })
    }
}

/// Sign-in links for the dashboard (public).
///
/// ```no_run
/// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
/// client.auth().request_magic_link("ada@example.com").await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Auth<'a> {
    client: &'a Client,
}

impl Client {
    /// Sign-in links for the dashboard.
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let auth = client.auth();
    /// # drop(auth);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn auth(&self) -> Auth<'_> {
        Auth::new(self)
    }
}

impl<'a> Auth<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Self { client }
    }

    /// Sends a sign-in link to `email` (`POST /v1/auth/magic-link/request`); the
    /// answer is the same whether an account exists or not. Limited to 10 a minute.
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let accepted = client.auth().request_magic_link("ada@example.com").await?;
    /// println!("{}", accepted.message.unwrap_or_default());
    /// # Ok(())
    /// # }
    /// ```
    pub fn request_magic_link<'c>(&self, email: &'c str) -> Call<'c, types::MagicLinkAccepted>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            if email.trim().is_empty() {
                return Err(Error::InvalidRequest("the e-mail address is empty".into()));
            }
            let body = types::MagicLinkRequest {
                email: email.to_owned(),
            };
            call(this.client.raw().request_magic_link().body(body).send()).await
        })
    }
}
