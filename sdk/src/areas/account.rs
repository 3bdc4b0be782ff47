//! The account that owns the API key, and its spending summary.

use chrono::{DateTime, Utc};

use crate::bridge::call;
use crate::call::Call;
use crate::client::Client;
use crate::generated::types;

/// The account area of a [`Client`].
///
/// ```no_run
/// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
/// let account = client.account().get().await?;
/// // Only `id` is guaranteed: the account record's other fields are designed.
/// if let Some(balance) = account.balance_rub {
///     println!("{}: {balance} RUB", account.id);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct AccountArea<'a> {
    client: &'a Client,
}

impl Client {
    /// The account that owns the key, and its spending summary.
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let account = client.account();
    /// # drop(account);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn account(&self) -> AccountArea<'_> {
        AccountArea::new(self)
    }
}

impl<'a> AccountArea<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Self { client }
    }

    /// The account, its balance and its limits (`GET /v1/account`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let account = client.account().get().await?;
    /// # drop(account);
    /// # Ok(())
    /// # }
    /// ```
    pub fn get(&self) -> Call<'a, types::Account> {
        let this = *self;
        Call::new(async move { call(this.client.raw().get_account().send()).await })
    }

    /// Spending and generations over a period (`GET /v1/stats/summary`); both ends
    /// default to the last 30 days. Refunded charges are netted out.
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let week_ago = chrono::Utc::now() - chrono::Duration::days(7);
    /// let summary = client.account().summary(Some(week_ago), None).await?;
    /// println!("{} RUB on {} generations", summary.spent_rub, summary.generations);
    /// # Ok(())
    /// # }
    /// ```
    pub fn summary(
        &self,
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
    ) -> Call<'a, types::Summary> {
        let this = *self;
        Call::new(async move {
            let mut builder = this.client.raw().get_summary();
            if let Some(from) = from {
                builder = builder.from(from);
            }
            if let Some(to) = to {
                builder = builder.to(to);
            }
            call(builder.send()).await
        })
    }
}
