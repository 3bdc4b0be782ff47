//! The operations of the control contract (`openapi/mock-control.json`), each
//! written once: typed input, the checks the contract's schemas cannot say,
//! the change, and the typed answer. The HTTP handlers of `control/` and the
//! methods of [`World`](crate::World) and [`MockServer`](crate::MockServer)
//! are adapters over these functions: the HTTP face reads the body (checked
//! against its schema) and serializes the answer or the [`ControlError`] in the
//! envelope; the Rust face, whose types make those shapes unrepresentable,
//! returns them as they are.

pub(crate) mod billing;
pub(crate) mod clock;
pub(crate) mod deliveries;
pub(crate) mod faults;
pub(crate) mod journal;
pub(crate) mod settings;
pub(crate) mod users;
pub(crate) mod verdict;

use crate::domain::money::Kopecks;
use crate::error::ControlError;
use crate::state::AppState;

/// An amount in roubles at `/{name}` of the body: a number of at least 0.
fn rub(value: f64, name: &str) -> Result<Kopecks, ControlError> {
    if value.is_finite() && value >= 0.0 {
        Ok(Kopecks::from_rub(value))
    } else {
        Err(ControlError::invalid(
            &format!("/{name}"),
            "minimum",
            format!("{name} must be a number of at least 0"),
        ))
    }
}

/// Refuses a model the catalogue does not have: a rule for it would never apply.
fn known_model(state: &AppState, slug: &str) -> Result<(), ControlError> {
    match state.catalog().get(slug) {
        Some(_) => Ok(()),
        None => Err(ControlError::NotFound(format!("Model '{slug}' not found"))),
    }
}
