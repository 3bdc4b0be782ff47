//! The worker: applies scheduled jobs (a task starting, an attempt ending, a
//! delivery falling due) when the clock reaches them.

use std::future::pending;

use chrono::{DateTime, Utc};

use crate::delivery;
use crate::domain::webhook::Trigger;
use crate::state::AppState;
use crate::wire::events;

/// Runs until the process ends. Wakes when a job is due (real clock), when the
/// clock is advanced (manual clock), or when a new job is scheduled.
pub async fn run(state: AppState) {
    let mut ticks = state.clock().subscribe();
    loop {
        let next = run_due_jobs(&state);
        let wait = next.and_then(|due| state.clock().real_wait_until(due));
        tokio::select! {
            () = state.worker_notify().notified() => {}
            changed = ticks.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            () = async {
                match wait {
                    Some(duration) => tokio::time::sleep(duration).await,
                    None => pending().await,
                }
            } => {}
        }
    }
}

/// Applies every job due by now and starts the deliveries that fell due, each in
/// its own task, outside the store's lock; the time of the next job, if any. The
/// control API calls it right after advancing a manual clock, so a test sees the
/// effects of the advance as soon as the call returns.
pub fn run_due_jobs(state: &AppState) -> Option<DateTime<Utc>> {
    let now = state.now();
    let mut deliveries = Vec::new();
    let next = {
        let mut store = state.store();
        loop {
            let due = store.run_due(now);
            deliveries.extend(due.deliveries);
            if due.ended.is_empty() {
                break due.next;
            }
            // Under the same lock: an event is queued in the same step as the end
            // it tells of, and its first attempts, due at once, come out of the
            // next pass.
            let writer = events::Writer::new(state.base_url(), store.responses());
            for ended in &due.ended {
                store.queue_event(ended, |generation, event_id| {
                    writer.ended(generation, ended.at, event_id)
                });
            }
        }
    };
    for message_id in deliveries {
        delivery::spawn_attempt(state, message_id, Trigger::Scheduled);
    }
    next
}
