//! The billing area: balance, history, requisites, invoices and top-ups.
//! Money is roubles, as JSON numbers.

use bytes::{Bytes, BytesMut};
use chrono::{DateTime, Utc};
use futures::{Stream, StreamExt};
use uuid::Uuid;

use crate::bridge::{call, send};
use crate::call::Call;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::generated::types;
use crate::model::billing::BillingOperationType;
use crate::pagination::{Page, page, paginate};

/// Which entries [`Billing::history`] returns.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use mediagen::HistoryFilter;
/// use mediagen::BillingOperationType;
///
/// let filter = HistoryFilter::new()
///     .kind(BillingOperationType::GenerationCharge)
///     .from(Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap())
///     .page_size(100);
/// # drop(filter);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryFilter {
    kind: Option<BillingOperationType>,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
    page_size: Option<u32>,
}

impl HistoryFilter {
    /// Every entry, newest first.
    ///
    /// ```
    /// let filter = mediagen::HistoryFilter::new();
    /// # drop(filter);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Only entries of this type.
    ///
    /// ```
    /// let filter = mediagen::HistoryFilter::new().kind(mediagen::BillingOperationType::Topup);
    /// # drop(filter);
    /// ```
    pub fn kind(mut self, kind: BillingOperationType) -> Self {
        self.kind = Some(kind);
        self
    }

    /// Entries from this time (inclusive).
    ///
    /// ```
    /// let filter = mediagen::HistoryFilter::new().from(chrono::Utc::now() - chrono::Duration::days(7));
    /// # drop(filter);
    /// ```
    pub fn from(mut self, from: DateTime<Utc>) -> Self {
        self.from = Some(from);
        self
    }

    /// Entries before this time (exclusive).
    ///
    /// ```
    /// let filter = mediagen::HistoryFilter::new().to(chrono::Utc::now());
    /// # drop(filter);
    /// ```
    pub fn to(mut self, to: DateTime<Utc>) -> Self {
        self.to = Some(to);
        self
    }

    /// Items per request, 1 to 100.
    ///
    /// ```
    /// let filter = mediagen::HistoryFilter::new().page_size(50);
    /// # drop(filter);
    /// ```
    pub fn page_size(mut self, size: u32) -> Self {
        self.page_size = Some(size);
        self
    }
}

/// The billing area of a [`Client`].
///
/// ```no_run
/// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
/// let balance = client.billing().balance().await?;
/// println!("{} RUB available", balance.available_rub);
/// if let Some(reserved) = balance.reserved_rub {
///     println!("{reserved} RUB reserved for active tasks");
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Billing<'a> {
    client: &'a Client,
}

impl Client {
    /// The balance, its history, requisites, invoices and top-ups.
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let billing = client.billing();
    /// # drop(billing);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn billing(&self) -> Billing<'_> {
        Billing::new(self)
    }
}

impl<'a> Billing<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Self { client }
    }

    /// The balance: available for new tasks, and reserved for active ones
    /// (`GET /v1/billing/balance`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let balance = client.billing().balance().await?;
    /// # drop(balance);
    /// # Ok(())
    /// # }
    /// ```
    pub fn balance(&self) -> Call<'a, types::Balance> {
        let this = *self;
        Call::new(async move { call(this.client.raw().get_balance().send()).await })
    }

    /// The balance history, newest first, page after page (`GET /v1/billing/history`).
    /// A refunded charge shows as its charge entry with status `REFUNDED`.
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// use futures::TryStreamExt;
    ///
    /// let entries: Vec<_> = client.billing().history(mediagen::HistoryFilter::new()).try_collect().await?;
    /// let spent: f64 = entries.iter().map(|e| e.net_amount_rub.unwrap_or(e.amount_rub)).sum();
    /// # drop(spent);
    /// # Ok(())
    /// # }
    /// ```
    pub fn history(
        &self,
        filter: HistoryFilter,
    ) -> impl Stream<Item = Result<types::BillingOperation>> + Send + Unpin + 'a {
        let this = *self;
        paginate(move |cursor| {
            let filter = filter.clone();
            async move { this.history_page(&filter, cursor.as_deref()).await }
        })
    }

    /// One page of [`history`](Self::history).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let first = client.billing().history_page(&mediagen::HistoryFilter::new(), None).await?;
    /// # drop(first);
    /// # Ok(())
    /// # }
    /// ```
    pub fn history_page<'c>(
        &self,
        filter: &'c HistoryFilter,
        cursor: Option<&'c str>,
    ) -> Call<'c, Page<types::BillingOperation>>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            let mut builder = this.client.raw().list_billing_history();
            if let Some(kind) = &filter.kind {
                builder = builder.type_(kind.clone());
            }
            if let Some(from) = filter.from {
                builder = builder.from(from);
            }
            if let Some(to) = filter.to {
                builder = builder.to(to);
            }
            if let Some(size) = filter.page_size {
                builder = builder.limit(u64::from(size));
            }
            if let Some(cursor) = cursor {
                builder = builder.cursor(cursor.to_owned());
            }
            let list = call(builder.send()).await?;
            Ok(page(list.data, list.next_cursor, list.has_more, |entry| {
                entry
            }))
        })
    }

    /// The requisites of the legal entity (`GET /v1/billing/requisites`); 404 when
    /// never set.
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let requisites = client.billing().requisites().await?;
    /// println!("INN {}", *requisites.inn);
    /// # Ok(())
    /// # }
    /// ```
    pub fn requisites(&self) -> Call<'a, types::Requisites> {
        let this = *self;
        Call::new(async move { call(this.client.raw().get_requisites().send()).await })
    }

    /// Sets or replaces the requisites (`PUT /v1/billing/requisites`). Takes the
    /// contract's `RequisitesInput` or its builder; a value breaking the contract's
    /// format is refused before sending.
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// use mediagen::types::RequisitesInput;
    ///
    /// let requisites = RequisitesInput::builder()
    ///     .legal_name("OOO Romashka")
    ///     .inn("7707083893")
    ///     .kpp(Some("770701001".parse().unwrap()))
    ///     .ogrn("1027700132195")
    ///     .legal_address("Moscow, Vavilova 19")
    ///     .bank_name("Sberbank")
    ///     .bic("044525225")
    ///     .settlement_account("40702810938000000001")
    ///     .correspondent_account("30101810400000000225");
    /// client.billing().set_requisites(requisites).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_requisites<V>(&self, requisites: V) -> Call<'a, types::Requisites>
    where
        V: TryInto<types::RequisitesInput>,
        V::Error: std::fmt::Display,
    {
        let this = *self;
        // Converted at once: the input type need not be `Send`.
        let body = requisites
            .try_into()
            .map_err(|err| Error::InvalidRequest(format!("requisites: {err}")));
        Call::new(async move { call(this.client.raw().set_requisites().body(body?).send()).await })
    }

    /// The invoices, newest first, page after page (`GET /v1/billing/invoices`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// use futures::TryStreamExt;
    ///
    /// let unpaid: Vec<_> = client
    ///     .billing()
    ///     .invoices()
    ///     .try_filter(|i| std::future::ready(i.status == mediagen::InvoiceStatus::Issued))
    ///     .try_collect()
    ///     .await?;
    /// # drop(unpaid);
    /// # Ok(())
    /// # }
    /// ```
    pub fn invoices(&self) -> impl Stream<Item = Result<types::Invoice>> + Send + Unpin + 'a {
        let this = *self;
        paginate(move |cursor| async move { this.invoices_page(cursor.as_deref(), None).await })
    }

    /// One page of [`invoices`](Self::invoices), of `page_size` items (1 to 100).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let first = client.billing().invoices_page(None, Some(10)).await?;
    /// # drop(first);
    /// # Ok(())
    /// # }
    /// ```
    pub fn invoices_page<'c>(
        &self,
        cursor: Option<&'c str>,
        page_size: Option<u32>,
    ) -> Call<'c, Page<types::Invoice>>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            let mut builder = this.client.raw().list_invoices();
            if let Some(size) = page_size {
                builder = builder.limit(u64::from(size));
            }
            if let Some(cursor) = cursor {
                builder = builder.cursor(cursor.to_owned());
            }
            let list = call(builder.send()).await?;
            Ok(page(
                list.data,
                list.next_cursor,
                list.has_more,
                |invoice| invoice,
            ))
        })
    }

    /// Issues an invoice for a prepayment by bank transfer, VAT included
    /// (`POST /v1/billing/invoices`); the requisites must be set first.
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let invoice = client.billing().create_invoice(25_000.0).await?;
    /// println!("invoice {} for {} RUB", invoice.number, invoice.amount_rub);
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_invoice(&self, amount_rub: f64) -> Call<'a, types::Invoice> {
        let this = *self;
        Call::new(async move {
            let body = types::CreateInvoiceRequest { amount_rub };
            call(this.client.raw().create_invoice().body(body).send()).await
        })
    }

    /// The PDF of an invoice (`GET /v1/billing/invoices/{id}/pdf`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client, id: uuid::Uuid) -> Result<(), Box<dyn std::error::Error>> {
    /// let pdf = client.billing().invoice_pdf(id).await?;
    /// std::fs::write("invoice.pdf", &pdf)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn invoice_pdf(&self, id: Uuid) -> Call<'a, Bytes> {
        let this = *self;
        Call::new(async move {
            let stream = send(this.client.raw().get_invoice_pdf().id(id).send()).await?;
            collect(stream).await
        })
    }

    /// The closing act of a paid invoice, as PDF (`GET /v1/billing/invoices/{id}/act`);
    /// a conflict error before the invoice is paid.
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client, id: uuid::Uuid) -> Result<(), Box<dyn std::error::Error>> {
    /// let act = client.billing().invoice_act(id).await?;
    /// std::fs::write("act.pdf", &act)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn invoice_act(&self, id: Uuid) -> Call<'a, Bytes> {
        let this = *self;
        Call::new(async move {
            let stream = send(this.client.raw().get_invoice_act().id(id).send()).await?;
            collect(stream).await
        })
    }

    /// Starts a card top-up (`POST /v1/billing/topup`): send the user to
    /// `payment_url`. Limited to 5 per 600 seconds, and by a daily cap
    /// ([`ErrorKind::DailyCapExceeded`](crate::ErrorKind::DailyCapExceeded)).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let topup = client.billing().topup(1500.0, Some("https://example.com/billing/done")).await?;
    /// if let Some(url) = topup.payment_url {
    ///     println!("pay at {url}");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn topup<'c>(&self, amount_rub: f64, return_url: Option<&'c str>) -> Call<'c, types::Topup>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            let body = types::TopupRequest {
                amount_rub,
                return_url: return_url.map(str::to_owned),
            };
            call(this.client.raw().create_topup().body(body).send()).await
        })
    }
}

async fn collect(stream: crate::raw::ByteStream) -> Result<Bytes> {
    let mut stream = stream.into_inner();
    let mut buffer = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        buffer.extend_from_slice(&chunk.map_err(Error::Body)?);
    }
    Ok(buffer.freeze())
}
