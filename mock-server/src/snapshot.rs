//! Snapshots: a world's whole state as one JSON document, taken with
//! `GET {baseUrl}/_mock/snapshot` and restored with `PUT`; and the `--state`
//! file, the default world's snapshot kept on disk across restarts.
//!
//! A snapshot holds the store (users, keys, balances, ledger, generations with
//! their schedule, files, endpoints and secrets, messages with their attempts,
//! invoices, top-ups, settings), the clock's time and the demo key. Not in it:
//! the rate windows (of the moment, not of a state), the request log (what the
//! mock saw, not what it is) and DNS pins (set again by the test that needs them).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::ClockView;
use crate::error::ControlError;
use crate::state::AppState;
use crate::store::Store;

/// What a snapshot says it is, so that a file of anything else is refused.
const FORMAT: &str = "mediagen-mock-snapshot";
/// Raised when a change to the store would make an older snapshot read wrong.
const VERSION: u64 = 1;
/// Uploaded files ride in a snapshot: as large as the largest upload, and more.
pub(crate) const BODY_LIMIT: usize = 512 * 1024 * 1024;

/// A snapshot as it is written.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Taken<'a> {
    format: &'static str,
    version: u64,
    #[serde(serialize_with = "crate::wire::millis::serialize")]
    taken_at: DateTime<Utc>,
    clock: ClockView,
    demo_api_key: &'a str,
    store: &'a Store,
}

/// A snapshot as it is read: checked, and whole.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Snapshot {
    clock: ClockPart,
    demo_api_key: Option<String>,
    store: Store,
}

#[derive(Debug, Deserialize)]
struct ClockPart {
    now: DateTime<Utc>,
}

impl Snapshot {
    /// Reads a snapshot, refusing with a 400 that names what is wrong: another
    /// format or version, a document the control contract refuses, a store that
    /// does not read, or one whose records contradict each other.
    pub(crate) fn read(value: Value) -> Result<Self, ControlError> {
        if value.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(ControlError::invalid(
                "/format",
                "const",
                format!("Not a snapshot of this mock: 'format' must be \"{FORMAT}\""),
            ));
        }
        match value.get("version") {
            Some(version) if version.as_u64() == Some(VERSION) => {}
            other => {
                let given = other.map_or("none".to_owned(), Value::to_string);
                return Err(ControlError::invalid(
                    "/version",
                    "const",
                    format!(
                        "Snapshot version {given} cannot be read; this mock reads version {VERSION}"
                    ),
                ));
            }
        }
        crate::contract::ContractSchemas::control()
            .validate("Snapshot", &value)
            .map_err(|fields| {
                let first = fields
                    .first()
                    .map(|f| {
                        format!(
                            ": {} {}",
                            if f.path.is_empty() {
                                "the document"
                            } else {
                                &f.path
                            },
                            f.message
                        )
                    })
                    .unwrap_or_default();
                ControlError::Invalid {
                    message: format!("The snapshot does not match the control contract{first}"),
                    fields,
                }
            })?;
        let snapshot: Self = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = format!("/{}", e.path().to_string().replace('.', "/"));
            ControlError::invalid(
                &path,
                "type",
                format!("The snapshot is broken at {path}: {}", e.inner()),
            )
        })?;
        snapshot.store.check_invariants().map_err(|why| {
            ControlError::invalid(
                "/store",
                "consistent",
                format!("The snapshot contradicts itself: {why}"),
            )
        })?;
        Ok(snapshot)
    }

    /// The time on the clock of the world it was taken from.
    pub(crate) fn clock_now(&self) -> DateTime<Utc> {
        self.clock.now
    }

    /// The demo key of the world it was taken from, for a mock that starts
    /// from it to keep.
    pub(crate) fn demo_api_key(&self) -> Option<&str> {
        self.demo_api_key.as_deref()
    }
}

impl AppState {
    /// The world's whole state, as `GET /_mock/snapshot` answers it.
    pub(crate) fn take_snapshot(&self) -> Value {
        // As `GET /_mock/clock` shows it; taken at the time it shows.
        let clock = self.clock().view();
        let store = self.store();
        let taken = Taken {
            format: FORMAT,
            version: VERSION,
            taken_at: clock.now,
            clock,
            demo_api_key: self.demo_api_key(),
            store: &store,
        };
        // Every record serializes: maps with other keys than strings, and
        // bytes, are written as `domain::persist` says.
        serde_json::to_value(taken).expect("a store serializes to JSON")
    }

    /// Replaces the world's state with `snapshot`'s and sets its clock to the
    /// snapshot's time; the worker then runs what was scheduled, as if the
    /// world had never stopped. Its settings stay its own (`Store::restore`;
    /// the clock's mode and scale and the limits' switch are its config).
    pub(crate) fn restore(&self, snapshot: Snapshot) {
        self.store().restore(snapshot.store);
        self.clock().set_now(snapshot.clock.now);
        self.worker_notify().notify_one();
    }
}

/// Where the default world is kept between runs (`--state FILE`).
#[derive(Debug, Clone)]
pub(crate) struct StateFile {
    path: PathBuf,
}

impl StateFile {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// Where it is kept.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The snapshot in the file; `None` when there is no file yet.
    pub(crate) fn load(&self) -> anyhow::Result<Option<Snapshot>> {
        use anyhow::Context;
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(e).with_context(|| format!("while reading {}", self.path.display()));
            }
        };
        let value: Value = serde_json::from_slice(&text)
            .with_context(|| format!("while reading {}: not JSON", self.path.display()))?;
        Snapshot::read(value)
            .map(Some)
            .map_err(|e| anyhow::anyhow!("while reading {}: {e}", self.path.display()))
    }

    /// Writes the world's snapshot whole to a file beside it, readable by its
    /// owner only (it holds keys and webhook secrets), then renames it over
    /// the old one: a crash mid-write leaves the previous state.
    pub(crate) fn save(&self, state: &AppState) -> std::io::Result<()> {
        let snapshot = serde_json::to_vec(&state.take_snapshot())?;
        let partial = partial_path(&self.path);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&partial)?;
        file.write_all(&snapshot)?;
        file.sync_all()?;
        std::fs::rename(&partial, &self.path)
    }

    /// Saves every `interval`, for ever; a failed write is logged and tried
    /// again at the next tick.
    pub(crate) async fn keep(self, state: AppState, interval: Duration) {
        let mut ticks = tokio::time::interval(interval);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            self.save_logged(&state).await;
        }
    }

    /// Saves off the async threads, logging a failure; returns whether the
    /// file was written.
    pub(crate) async fn save_logged(&self, state: &AppState) -> bool {
        let (file, state) = (self.clone(), state.clone());
        let saved = tokio::task::spawn_blocking(move || file.save(&state)).await;
        match saved {
            Ok(Ok(())) => return true,
            Ok(Err(e)) => {
                tracing::error!(path = %self.path.display(), "could not save the state: {e}")
            }
            Err(e) => tracing::error!("the state save stopped: {e}"),
        }
        false
    }
}

fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}
