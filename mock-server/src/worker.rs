//! The worker: applies scheduled jobs (a task starting, an attempt ending) when
//! the clock reaches them.

use std::future::pending;

use crate::state::AppState;

/// Runs until the process ends. Wakes when a job is due (real clock), when the
/// clock is advanced (manual clock), or when a new job is scheduled.
pub async fn run(state: AppState) {
    let mut ticks = state.clock().subscribe();
    loop {
        let next = state.run_due_jobs();
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
