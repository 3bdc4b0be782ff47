//! The jobs the worker applies on the mock's clock: a task leaving `PENDING`, a
//! worker attempt ending, a scheduled delivery attempt, a top-up paying itself.
//! Ordered by when they are due, then by when they were scheduled.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use chrono::{DateTime, Utc};
use uuid::Uuid;

/// What a job does when it is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Job {
    pub(super) due: DateTime<Utc>,
    seq: u64,
    /// The generation, the message for `Deliver`, the top-up for `PayTopup`.
    pub(super) target: Uuid,
    pub(super) kind: JobKind,
}

/// The queue of jobs.
#[derive(Debug, Default)]
pub(super) struct Jobs {
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
