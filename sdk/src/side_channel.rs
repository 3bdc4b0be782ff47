//! The two values that cross the generated client without being in its
//! signatures, each in a task-local: the options of the call being awaited go
//! in (a [`Call`](crate::Call) sets them around its future), and what the
//! transport saw of the call comes out (the generated code passes on only a
//! response or a transport error, so the error answer read, the number of
//! attempts and whether the outcome is unknown wait here for [`bridge`] to
//! read them back).
//!
//! Code that sends through the transport itself passes both in signatures;
//! only calls through the generated client need this file.
//!
//! [`bridge`]: crate::bridge

use std::future::Future;
use std::sync::{Arc, Mutex};

use crate::options::RequestOptions;
use crate::transport::Record;

tokio::task_local! {
    /// The options of the call being awaited.
    static OPTIONS: RequestOptions;
    /// What the transport saw of the generated call in progress.
    static RECORD: Arc<Mutex<Option<Record>>>;
}

/// The options of the call in progress, over `defaults` (the client's own).
pub(crate) fn options(defaults: &RequestOptions) -> RequestOptions {
    OPTIONS
        .try_with(|call| defaults.merged(call))
        .unwrap_or_else(|_| defaults.clone())
}

/// Runs `future` with `options` for every request it makes, inside any
/// options of a call around it.
pub(crate) async fn with_options<F: Future>(options: RequestOptions, future: F) -> F::Output {
    let options = OPTIONS
        .try_with(|outer| outer.merged(&options))
        .unwrap_or(options);
    OPTIONS.scope(options, future).await
}

/// Leaves what the transport saw of a generated call for [`recorded`]; outside
/// it (the generated client used directly) there is no one to read it.
pub(crate) fn leave(record: Record) {
    let _ = RECORD.try_with(|slot| *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(record));
}

/// Runs a generated call, and returns its result with what the transport left.
pub(crate) async fn recorded<T>(call: impl Future<Output = T>) -> (T, Record) {
    let slot = Arc::new(Mutex::new(None));
    let result = RECORD.scope(Arc::clone(&slot), call).await;
    let record = slot
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .unwrap_or_default();
    (result, record)
}
