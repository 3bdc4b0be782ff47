//! The jobs the worker applies on the mock's clock: a task leaving `PENDING`, a
//! worker attempt ending, a scheduled delivery attempt, a top-up paying itself.
//! Ordered by when they are due, then by when they were scheduled. Applying
//! one moves a task through its lifecycle, with the charge kept or refunded;
//! the tasks that reached a final state are handed out, for the events that
//! tell of them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Store;
use crate::clock::seconds;
use crate::domain::file::FileStatus;
use crate::domain::generation::{AfterAttempt, FailureCode, Generation, Plan};
use crate::domain::webhook::TaskEnded;

/// What a job does when it is due.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize, serde::Serialize,
)]
pub(super) enum JobKind {
    /// A task leaves PENDING.
    Start,
    /// A worker attempt of a task ends.
    EndAttempt,
    /// A scheduled delivery attempt of a webhook message.
    Deliver,
    /// A top-up pays itself (the auto-pay setting).
    PayTopup,
}

/// One scheduled job.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize, serde::Serialize,
)]
pub(super) struct Job {
    pub(super) due: DateTime<Utc>,
    seq: u64,
    /// The generation, the message for `Deliver`, the top-up for `PayTopup`.
    pub(super) target: Uuid,
    pub(super) kind: JobKind,
}

/// The queue of jobs.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
pub(super) struct Jobs {
    #[serde(with = "crate::domain::persist::heap")]
    heap: BinaryHeap<Reverse<Job>>,
    next_seq: u64,
    /// When the worker means to look next, as of its last pass; `None` when it
    /// has nothing planned (or has not run yet).
    planned: Option<DateTime<Utc>>,
}

impl Jobs {
    pub(super) fn schedule(&mut self, due: DateTime<Utc>, target: Uuid, kind: JobKind) {
        self.next_seq += 1;
        self.heap.push(Reverse(Job {
            due,
            seq: self.next_seq,
            target,
            kind,
        }));
    }

    /// The earliest job if it is due by `now`, taken off the queue.
    pub(super) fn pop_due(&mut self, now: DateTime<Utc>) -> Option<Job> {
        match self.heap.peek() {
            Some(Reverse(job)) if job.due <= now => self.heap.pop().map(|Reverse(job)| job),
            _ => None,
        }
    }

    /// When the next job is due.
    pub(super) fn next_due(&self) -> Option<DateTime<Utc>> {
        self.heap.peek().map(|Reverse(job)| job.due)
    }

    /// The worker ends a pass and will look again at the next job's time.
    pub(super) fn plan(&mut self) {
        self.planned = self.next_due();
    }

    /// Whether a job is due before the worker means to look; if so, the worker
    /// is about to be woken and now plans for it. A create whose task starts
    /// after others already waiting wakes nobody.
    pub(super) fn wake_needed(&mut self) -> bool {
        match (self.next_due(), self.planned) {
            (Some(due), Some(planned)) if due >= planned => false,
            (None, _) => false,
            (Some(due), _) => {
                self.planned = Some(due);
                true
            }
        }
    }
}

/// What a pass of the worker found due.
#[derive(Debug, Default)]
#[must_use = "the deliveries are to be started and the ended tasks' events queued"]
pub struct Due {
    /// Messages whose delivery attempt is due, to be sent outside the lock.
    pub deliveries: Vec<Uuid>,
    /// Tasks that reached a final state, oldest first, each to be told of by
    /// [`Store::queue_event`] before the lock is let go.
    pub ended: Vec<TaskEnded>,
    /// When the next job is due.
    pub next: Option<DateTime<Utc>>,
}

impl Store {
    /// Applies every job due by `now`, the lifecycle of tasks included.
    pub fn run_due(&mut self, now: DateTime<Utc>) -> Due {
        self.rate.prune(now);
        // Before this pass's jobs: a task that ends in it is told of by
        // `queue_event`, which reads it from the store, before it can be
        // forgotten, in the next pass.
        self.forget_ended(now);
        let mut due = Due::default();
        while let Some(job) = self.jobs.pop_due(now) {
            match job.kind {
                JobKind::Deliver => due.deliveries.push(job.target),
                JobKind::PayTopup => {
                    // Paid or failed by hand before its time: nothing to do.
                    self.settle_topup(job.target, true, job.due);
                }
                JobKind::Start | JobKind::EndAttempt => due.ended.extend(self.apply(job)),
            }
        }
        self.jobs.plan();
        due.next = self.jobs.next_due();
        due
    }

    /// Whether the worker must be woken for a job due before it means to look
    /// (it looks at the next job's time after each pass); asked after
    /// scheduling, under the same lock.
    pub fn worker_wake_needed(&mut self) -> bool {
        self.jobs.wake_needed()
    }

    /// Applies a job of a task's lifecycle; the task, when it has just ended.
    fn apply(&mut self, job: Job) -> Option<TaskEnded> {
        let generation = self.generations.get(&job.target)?;
        let failure = (job.kind == JobKind::Start)
            .then(|| self.input_failure(generation))
            .flatten();
        let generation = self.generations.get_mut(&job.target)?;
        let attempt = match job.kind {
            JobKind::Start => {
                if let Some(code) = failure {
                    // The worker fetches inputs when it takes the task: a file deleted
                    // or never uploaded by then fails it, like a provider would.
                    generation.plan = Plan::Fail(code);
                }
                if generation.start(job.due) {
                    let due = job.due + seconds(generation.attempt_secs);
                    self.jobs.schedule(due, job.target, JobKind::EndAttempt);
                    self.note_generation(job.target, "started", job.due);
                }
                return None;
            }
            JobKind::EndAttempt => generation.end_attempt(job.due)?,
            JobKind::Deliver | JobKind::PayTopup => return None,
        };
        let (user_id, attempt_secs) = (generation.user_id, generation.attempt_secs);
        match attempt {
            AfterAttempt::TryAgain => {
                self.jobs.schedule(
                    job.due + seconds(attempt_secs),
                    job.target,
                    JobKind::EndAttempt,
                );
                self.note_generation(job.target, "attempt_failed", job.due);
                return None;
            }
            AfterAttempt::Succeeded => {
                self.moderation.succeeded(user_id, &generation.model_slug);
                self.finished(user_id, job.target, job.due);
                self.ledger.keep(job.target).ok();
            }
            AfterAttempt::Failed(code) => {
                if code == FailureCode::ModerationRejected {
                    self.moderation
                        .rejected(user_id, &generation.model_slug, job.due);
                }
                self.finished(user_id, job.target, job.due);
                self.ledger.refund(job.target, job.due).ok();
            }
        }
        self.note_generation(job.target, "ended", job.due);
        // After the ledger: a failure's refund is done before its event is queued
        // (service document: funds are already returned when it is sent).
        Some(TaskEnded {
            generation_id: job.target,
            at: job.due,
        })
    }

    /// Whether a task's uploaded input (`image_file_id`) cannot be fetched:
    /// missing, deleted, not uploaded or another user's (`input_fetch_failed`).
    fn input_failure(&self, generation: &Generation) -> Option<FailureCode> {
        let raw = generation.params.get("image_file_id")?;
        let usable = raw
            .as_str()
            .and_then(|id| Uuid::parse_str(id).ok())
            .and_then(|id| self.own_file(generation.user_id, id))
            .is_some_and(|f| f.status == FileStatus::Uploaded);
        (!usable).then_some(FailureCode::InputFetchFailed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::at;

    #[test]
    fn the_worker_is_woken_only_for_a_job_due_before_its_plan() {
        let mut jobs = Jobs::default();
        jobs.schedule(at(10), Uuid::new_v4(), JobKind::Start);
        assert!(jobs.wake_needed(), "a worker with no plan is woken");
        jobs.schedule(at(12), Uuid::new_v4(), JobKind::Start);
        assert!(!jobs.wake_needed(), "it looks at 10 anyway");
        jobs.schedule(at(5), Uuid::new_v4(), JobKind::Deliver);
        assert!(jobs.wake_needed(), "5 comes before its plan");
        assert!(!jobs.wake_needed(), "and only once");

        while jobs.pop_due(at(10)).is_some() {}
        jobs.plan();
        assert_eq!(jobs.planned, Some(at(12)));
        jobs.schedule(at(11), Uuid::new_v4(), JobKind::Start);
        assert!(jobs.wake_needed());
    }

    #[test]
    fn jobs_come_out_by_due_time_then_in_the_order_they_were_scheduled() {
        let mut jobs = Jobs::default();
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        jobs.schedule(at(10), a, JobKind::Start);
        jobs.schedule(at(5), b, JobKind::Deliver);
        jobs.schedule(at(10), c, JobKind::EndAttempt);

        assert_eq!(jobs.next_due(), Some(at(5)));
        assert_eq!(jobs.pop_due(at(4)), None, "nothing is due yet");
        let order: Vec<Uuid> = std::iter::from_fn(|| jobs.pop_due(at(10)))
            .map(|job| job.target)
            .collect();
        assert_eq!(order, [b, a, c]);
        assert_eq!(jobs.next_due(), None);
    }
}
