//! Fault rules: the next requests that match misbehave.

use crate::domain::fault::{Fault, FaultRefusal, FaultRequest, FaultView};
use crate::error::ControlError;
use crate::state::AppState;

fn refused(refusal: FaultRefusal) -> ControlError {
    ControlError::invalid(refusal.field(), "invalid", refusal.to_string())
}

/// The rule a body of `POST /_mock/faults` describes, checked as the Rust
/// face's [`Fault`] is.
pub(crate) fn read_fault(request: FaultRequest) -> Result<Fault, ControlError> {
    Fault::from_request(request).map_err(refused)
}

/// Adds a rule once it is checked; answers it with its id and its uses left.
pub(crate) fn inject_fault(state: &AppState, fault: Fault) -> Result<FaultView, ControlError> {
    let fault = fault.checked().map_err(refused)?;
    Ok(state.store().inject_fault(fault))
}

/// The active rules, oldest first, with their uses left.
pub(crate) fn list_faults(state: &AppState) -> Vec<FaultView> {
    state.store().faults()
}

pub(crate) fn clear_faults(state: &AppState) {
    state.store().clear_faults();
}

/// Removes one rule before it is used up.
pub(crate) fn remove_fault(state: &AppState, id: &str) -> Result<(), ControlError> {
    if state.store().remove_fault(id) {
        Ok(())
    } else {
        Err(ControlError::NotFound(format!(
            "No active fault {id}; it may have been used up"
        )))
    }
}
