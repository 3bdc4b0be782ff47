//! `batch --listen ADDR`: the waits of a batch end on the service's webhooks,
//! received at ADDR and verified, instead of on reads (the SDK keeps a slow read
//! in case a delivery is lost).
//!
//! With `--webhook-secret` the batch uses an endpoint the user registered.
//! Without it, the batch registers an endpoint for the run and deletes it at the
//! end. That endpoint is written in the journal before its create is sent and
//! before anything waits on it: a run started again reuses it, and one that finds
//! an endpoint of an earlier run it will not use deletes it. The create is not
//! idempotent, so it is never sent twice: its URL carries a token of the run, by
//! which an endpoint whose create got no answer is found in the list afterwards.

use std::path::Path;

use anyhow::Context as _;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use chrono::Utc;
use mediagen::{
    Client, Error, ErrorCode, EventTypeFilter, WebhookEndpointRequest, WebhookReceiver,
    WebhookSecret,
};
use rusqlite::{Connection, OptionalExtension as _, params};
use tokio::task::JoinHandle;

use crate::cli::batch::BatchRunArgs;
use crate::cmd::context::Context;
use crate::error::{Exit, Failure};

/// The query parameter that makes a run's endpoint URL its own.
const TOKEN: &str = "mediagen-batch";

/// The receiver of a run, and the endpoint it was given.
#[derive(Debug)]
pub struct Hooks {
    server: JoinHandle<()>,
    endpoint: Endpoint,
}

/// The endpoint a run's deliveries come through.
#[derive(Debug)]
enum Endpoint {
    /// The user's own (`--webhook-secret`): left as it is.
    Registered,
    /// Registered for this run (or an earlier run of the same journal): deleted
    /// at the end.
    Run(Recorded),
}

/// An endpoint a run registered for itself, as the journal has it.
#[derive(Debug, Clone)]
struct Recorded {
    /// The URL as given (`--webhook-url`, or http://ADDR/).
    base: String,
    /// The URL registered: `base` with the run's token.
    url: String,
    /// Once its create was answered.
    id: Option<String>,
    secret: Option<String>,
}

/// The table of a batch's journal that holds the endpoints its runs registered.
#[derive(Debug)]
struct Ledger {
    db: Connection,
}

impl Ledger {
    fn open(journal: &Path) -> anyhow::Result<Self> {
        let db = Connection::open(journal)
            .with_context(|| format!("while opening the journal {}", journal.display()))?;
        // FULL: the endpoint is on disk before its create is sent, as each
        // generation's create is.
        db.execute_batch(
            "PRAGMA synchronous = FULL;
             CREATE TABLE IF NOT EXISTS webhook_endpoints (
                 url TEXT PRIMARY KEY,
                 base TEXT NOT NULL,
                 planned_at TEXT NOT NULL,
                 endpoint_id TEXT,
                 secret TEXT
             );",
        )
        .context("while preparing the journal's table of webhook endpoints")?;
        Ok(Self { db })
    }

    fn recorded(&self) -> anyhow::Result<Vec<Recorded>> {
        let mut statement = self.db.prepare(
            "SELECT base, url, endpoint_id, secret FROM webhook_endpoints ORDER BY rowid",
        )?;
        let rows = statement.query_map([], |row| {
            Ok(Recorded {
                base: row.get(0)?,
                url: row.get(1)?,
                id: row.get(2)?,
                secret: row.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn planned(&self, recorded: &Recorded) -> anyhow::Result<()> {
        self.db.execute(
            "INSERT INTO webhook_endpoints (url, base, planned_at) VALUES (?1, ?2, ?3)",
            params![recorded.url, recorded.base, Utc::now().to_rfc3339()],
        )?;
        Ok(())
    }

    fn created(&self, url: &str, id: &str, secret: &str) -> anyhow::Result<()> {
        self.db.execute(
            "UPDATE webhook_endpoints SET endpoint_id = ?2, secret = ?3 WHERE url = ?1",
            params![url, id, secret],
        )?;
        Ok(())
    }

    fn forget(&self, url: &str) -> anyhow::Result<()> {
        self.db
            .execute("DELETE FROM webhook_endpoints WHERE url = ?1", [url])?;
        Ok(())
    }

    /// Whether the journal has a table of endpoints at all (a journal of a run
    /// before webhooks has none, and `batch status` creates nothing).
    fn exists(journal: &Path) -> bool {
        Connection::open(journal)
            .ok()
            .and_then(|db| {
                db.query_row(
                    "SELECT 1 FROM sqlite_master WHERE name = 'webhook_endpoints'",
                    [],
                    |_| Ok(()),
                )
                .optional()
                .ok()
                .flatten()
            })
            .is_some()
    }
}

/// Before anything is created: the endpoints of earlier runs this run will not
/// use, deleted; then, with `--listen`, the receiver started and the endpoint
/// chosen, reused or registered. A URL the service refuses fails here, before
/// any generation exists.
pub async fn prepare(
    ctx: &Context,
    client: &Client,
    args: &BatchRunArgs,
    journal: &Path,
) -> anyhow::Result<Option<Hooks>> {
    let Some(listen) = &args.listen else {
        if Ledger::exists(journal) {
            let ledger = Ledger::open(journal)?;
            for recorded in ledger.recorded()? {
                remove(ctx, client, &ledger, &recorded).await;
            }
        }
        return Ok(None);
    };
    let ledger = Ledger::open(journal)?;
    // Bound first: a port in use fails before anything is registered.
    let listener = tokio::net::TcpListener::bind(listen.as_str())
        .await
        .with_context(|| format!("while binding {listen} (--listen)"))?;
    let base = match &args.webhook_url {
        Some(url) => url.to_string(),
        None => format!("http://{}/", listener.local_addr()?),
    };

    // An endpoint of an earlier run for this URL, whole, is this run's too; any
    // other is removed.
    let mut reused = None;
    for recorded in ledger.recorded()? {
        let fits = args.webhook_secret.is_none()
            && recorded.base == base
            && recorded.id.is_some()
            && recorded.secret.is_some()
            && reused.is_none();
        if fits {
            reused = Some(recorded);
        } else {
            remove(ctx, client, &ledger, &recorded).await;
        }
    }
    let (endpoint, secret) = match &args.webhook_secret {
        Some(secret) => {
            WebhookSecret::new(secret)
                .verifier()
                .context("while reading --webhook-secret")?;
            registered(client, &base).await?;
            (Endpoint::Registered, secret.clone())
        }
        None => match still_there(ctx, client, &ledger, reused).await? {
            Some(recorded) => {
                let secret = recorded.secret.clone().unwrap_or_default();
                (Endpoint::Run(recorded), secret)
            }
            None => match register(ctx, client, &ledger, &base).await? {
                Ok((recorded, secret)) => (Endpoint::Run(recorded), secret),
                // No endpoint known: the run reads each generation instead.
                // The endpoint, if one was made, goes now, before any
                // generation exists, so that no delivery comes to a receiver
                // that cannot verify it; failing that, at the run's end.
                Err(unknown) => {
                    if remove(ctx, client, &ledger, &unknown).await {
                        return Ok(None);
                    }
                    let hooks = Hooks::serve(listener, None, Endpoint::Run(unknown));
                    return Ok(Some(hooks));
                }
            },
        },
    };
    let receiver = client
        .webhook_receiver([WebhookSecret::new(secret)])
        .context("while preparing the webhook receiver")?;
    ctx.out.note(format!(
        "waits end on webhooks received at http://{} for {base}",
        listener.local_addr()?
    ));
    Ok(Some(Hooks::serve(listener, Some(receiver), endpoint)))
}

/// The endpoint of an earlier run, if the service still has it.
async fn still_there(
    ctx: &Context,
    client: &Client,
    ledger: &Ledger,
    reused: Option<Recorded>,
) -> anyhow::Result<Option<Recorded>> {
    let Some(recorded) = reused else {
        return Ok(None);
    };
    let id = recorded.id.clone().unwrap_or_default();
    match client.webhooks().get(&id).await {
        Ok(_) => {
            ctx.out.note(format!(
                "reusing endpoint {id} of an earlier run of this batch"
            ));
            Ok(Some(recorded))
        }
        Err(err) if not_found(&err) => {
            ledger.forget(&recorded.url)?;
            Ok(None)
        }
        Err(err) => Err(err).with_context(|| format!("while reading the endpoint {id}")),
    }
}

/// The endpoint the user registered for `url` (with `--webhook-secret`): it
/// must exist and be active, or no delivery would come.
async fn registered(client: &Client, url: &str) -> anyhow::Result<()> {
    let endpoints = client
        .webhooks()
        .list()
        .await
        .context("while looking for the endpoint of --webhook-url")?;
    let found = endpoints.iter().find(|e| same_url(&e.url, url));
    match found {
        Some(endpoint) if endpoint.active => Ok(()),
        Some(endpoint) => Err(Failure::new(
            Exit::Usage,
            "INVALID_REQUEST",
            format!("the endpoint {} for {url} is not active", endpoint.id),
        )
        .hint(format!(
            "turn it on with `mediagen webhooks update {} --active true`, or leave out \
             --webhook-secret and the batch registers an endpoint for the run",
            endpoint.id
        ))
        .into()),
        None => Err(Failure::new(
            Exit::Usage,
            "INVALID_REQUEST",
            format!("no endpoint of this account has the URL {url}"),
        )
        .hint(
            "give --webhook-url exactly as registered (`mediagen webhooks list`), or leave out \
             --webhook-secret and the batch registers an endpoint for the run",
        )
        .into()),
    }
}

/// Registers the run's endpoint, written in the journal first. `Err` holds an
/// endpoint whose create got no clear answer: it may exist, and it is not sent
/// again.
async fn register(
    ctx: &Context,
    client: &Client,
    ledger: &Ledger,
    base: &str,
) -> anyhow::Result<Result<(Recorded, String), Recorded>> {
    let mut url = url::Url::parse(base).with_context(|| format!("{base} is not a URL"))?;
    url.query_pairs_mut()
        .append_pair(TOKEN, &uuid::Uuid::new_v4().simple().to_string());
    let mut recorded = Recorded {
        base: base.to_owned(),
        url: url.to_string(),
        id: None,
        secret: None,
    };
    ledger.planned(&recorded)?;
    let request = WebhookEndpointRequest::new(&recorded.url).events([
        EventTypeFilter::GenerationCompleted,
        EventTypeFilter::GenerationFailed,
    ]);
    match client.webhooks().create(request).await {
        Ok(created) => {
            let secret = created.secret.expose().to_owned();
            ledger.created(&recorded.url, &created.id, &secret)?;
            ctx.out
                .note(format!("registered endpoint {} for this run", created.id));
            recorded.id = Some(created.id);
            recorded.secret = Some(secret.clone());
            Ok(Ok((recorded, secret)))
        }
        // Refused before acting (a URL the service does not take, say):
        // nothing exists, and no generation is created either.
        Err(Error::Api(api)) if api.status.is_client_error() => {
            ledger.forget(&recorded.url)?;
            Err(Error::Api(api)).context("while registering the run's webhook endpoint")
        }
        Err(err) => {
            ctx.out.note(format!(
                "the endpoint's create got no clear answer ({err}); it is not sent again: \
                 this run reads each generation instead, and deletes the endpoint at its end \
                 if it was made"
            ));
            Ok(Err(recorded))
        }
    }
}

/// Deletes an endpoint of a run, found by its id, or by its URL when its create
/// got no answer; forgotten once it is gone (`true`). One that cannot be
/// deleted now stays in the journal for the next run.
async fn remove(ctx: &Context, client: &Client, ledger: &Ledger, recorded: &Recorded) -> bool {
    let id = match &recorded.id {
        Some(id) => Some(id.clone()),
        None => match client.webhooks().list().await {
            Ok(endpoints) => endpoints
                .into_iter()
                .find(|e| same_url(&e.url, &recorded.url))
                .map(|e| e.id),
            Err(err) => {
                ctx.out.note(format!(
                    "could not look for the endpoint registered for {} ({err}); the next run \
                     of this batch does",
                    recorded.url
                ));
                return false;
            }
        },
    };
    let deleted = match &id {
        Some(id) => match client.webhooks().delete(id).await {
            Ok(()) => {
                ctx.out.note(format!("deleted endpoint {id}"));
                Ok(())
            }
            Err(err) if not_found(&err) => Ok(()),
            Err(err) => Err(format!(
                "could not delete endpoint {id} ({err}); the next run of this batch does, or \
                 `mediagen webhooks delete {id}`"
            )),
        },
        None => Ok(()),
    };
    let forgotten = deleted.and_then(|()| {
        ledger
            .forget(&recorded.url)
            .map_err(|err| format!("the journal could not forget {}: {err:#}", recorded.url))
    });
    match forgotten {
        Ok(()) => true,
        Err(note) => {
            ctx.out.note(note);
            false
        }
    }
}

impl Hooks {
    /// Serves deliveries at `listener`: each verified one goes to the client's
    /// waits (204), one that does not verify is refused (400). Without a
    /// receiver (an endpoint whose create got no answer and could not be
    /// deleted yet), every delivery is answered 410, which the service reads as
    /// "unsubscribe": its secret is not known, and the run reads each
    /// generation instead.
    fn serve(
        listener: tokio::net::TcpListener,
        receiver: Option<WebhookReceiver>,
        endpoint: Endpoint,
    ) -> Self {
        let app = Router::new().fallback(deliver).with_state(receiver);
        let server = tokio::spawn(async move {
            if let Err(err) = axum::serve(listener, app).await {
                tracing::warn!(error = %err, "the webhook receiver stopped");
            }
        });
        Self { server, endpoint }
    }

    /// At the end of the run: the receiver stopped, and the run's endpoint
    /// deleted.
    pub async fn finish(
        self,
        ctx: &Context,
        client: &Client,
        journal: &Path,
    ) -> anyhow::Result<()> {
        // Every wait has ended: nothing is left to receive.
        self.server.abort();
        if let Endpoint::Run(recorded) = &self.endpoint {
            let ledger = Ledger::open(journal)?;
            remove(ctx, client, &ledger, recorded).await;
        }
        Ok(())
    }
}

async fn deliver(
    State(receiver): State<Option<WebhookReceiver>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let Some(receiver) = receiver else {
        return StatusCode::GONE;
    };
    match receiver.receive(&headers, &body) {
        Ok(_) => StatusCode::NO_CONTENT,
        Err(err) => {
            tracing::warn!(error = %err, "a webhook delivery did not verify");
            StatusCode::BAD_REQUEST
        }
    }
}

fn not_found(err: &Error) -> bool {
    matches!(err, Error::Api(api) if api.code == ErrorCode::NotFound)
}

/// Whether two URLs are the same, as the service may write them back (a
/// trailing slash added, the host in lower case).
fn same_url(a: &str, b: &str) -> bool {
    match (url::Url::parse(a), url::Url::parse(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
