//! `get_clock` and `advance_clock`.

use crate::clock::{ClockError, ClockView};
use crate::error::ControlError;
use crate::state::AppState;
use crate::worker::run_due_jobs;

pub(crate) fn get_clock(state: &AppState) -> ClockView {
    state.clock().view()
}

/// Moves a manual clock and applies everything that became due before answering.
pub(crate) fn advance_clock(state: &AppState, seconds: f64) -> Result<ClockView, ControlError> {
    state.clock().advance(seconds).map_err(|e| match e {
        ClockError::NotManual => ControlError::Conflict(e.to_string()),
        ClockError::BadAmount(_) | ClockError::OutOfRange(_) => {
            ControlError::invalid("/seconds", "minimum", e.to_string())
        }
    })?;
    run_due_jobs(state);
    Ok(get_clock(state))
}
