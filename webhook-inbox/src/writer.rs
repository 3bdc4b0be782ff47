//! The one thread that writes deliveries: group commit. Deliveries that arrive
//! while a commit is under way wait, and the next transaction stores all of
//! them at once, so that the cost of a commit (a write, or with
//! [`Durability::PowerLoss`](crate::Durability::PowerLoss) an fsync) is shared
//! by every delivery in it. A delivery waits at most one commit longer than
//! alone; each is answered only after the commit that holds it returned.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::error::InboxError;
use crate::store::{self, Incoming};
use crate::{Accepted, Wake};

/// Deliveries in one transaction at most: a bound on how long one commit
/// holds the write lock from the workers.
const MAX_GROUP: usize = 512;
/// How often done messages past their retention are deleted, and how many at
/// most in one go, so that pruning never holds the writer long.
const PRUNE_EVERY: Duration = Duration::from_secs(60);
const PRUNE_LIMIT: i64 = 1_000;

/// A delivery and where its answer goes.
pub(crate) struct Job {
    pub incoming: Incoming,
    pub answer: oneshot::Sender<Result<Accepted, InboxError>>,
}

/// The writer's queue; a full queue refuses at once rather than make a
/// delivery wait past the service's 10 seconds.
#[derive(Debug, Clone)]
pub(crate) struct Queue(pub SyncSender<Job>);

impl Queue {
    pub(crate) fn submit(
        &self,
        incoming: Incoming,
    ) -> Result<oneshot::Receiver<Result<Accepted, InboxError>>, InboxError> {
        let (answer, answered) = oneshot::channel();
        match self.0.try_send(Job { incoming, answer }) {
            Ok(()) => Ok(answered),
            Err(TrySendError::Full(_)) => Err(InboxError::Overloaded),
            Err(TrySendError::Disconnected(_)) => Err(InboxError::Closed),
        }
    }
}

/// Runs until every [`Queue`] is dropped.
pub(crate) fn run(mut db: Connection, jobs: Receiver<Job>, wake: &Wake, retention: Duration) {
    let mut pruned_at = Instant::now();
    let mut group = Vec::with_capacity(MAX_GROUP);
    while let Ok(first) = jobs.recv() {
        group.push(first);
        while group.len() < MAX_GROUP {
            match jobs.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let now = store::now_ms();
        match store::store(&mut db, group.iter().map(|job| &job.incoming), now) {
            Ok(fresh) => {
                if fresh.contains(&true) {
                    wake.stored();
                }
                for (job, fresh) in group.drain(..).zip(fresh) {
                    let accepted = if fresh {
                        Accepted::Stored
                    } else {
                        Accepted::Duplicate
                    };
                    // A sender that gave up (its connection closed) needs no answer.
                    let _ = job.answer.send(Ok(accepted));
                }
            }
            Err(err) => {
                let err = InboxError::from(err);
                tracing::warn!(error = %err, deliveries = group.len(), "deliveries not stored");
                for job in group.drain(..) {
                    let _ = job.answer.send(Err(err.clone()));
                }
            }
        }
        if pruned_at.elapsed() >= PRUNE_EVERY {
            pruned_at = Instant::now();
            let before = now.saturating_sub(store::millis(retention));
            if let Err(err) = store::prune(&db, before, PRUNE_LIMIT) {
                tracing::warn!(error = %err, "pruning the inbox failed");
            }
        }
    }
}
