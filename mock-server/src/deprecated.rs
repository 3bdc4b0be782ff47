//! The names of the 0.1.0 Rust face that the control contract renamed, kept
//! for one release so that a test suite builds (with a warning that names the
//! replacement) while it moves to the new ones. Each only calls its
//! replacement's public method. They go in 0.3.0; see `CHANGELOG.md`.
//!
//! They are methods of [`World`], so a [`MockServer`](crate::MockServer), which
//! dereferences to its default world, has them as it had in 0.1.0.

use crate::contract::ContractSchemas;
use crate::{Fault, FaultHandle, Responses, SettingsUpdate, World};

impl World {
    /// Moves the manual clock forward: [`advance_clock`](Self::advance_clock).
    #[deprecated(
        since = "0.2.0",
        note = "use `advance_clock`, the control contract's name; `advance` goes in 0.3.0"
    )]
    ///
    /// # Panics
    /// Where `advance_clock` refuses: a real clock, a negative amount.
    pub fn advance(&self, seconds: f64) {
        if let Err(refusal) = self.advance_clock(seconds) {
            panic!("the clock cannot be advanced: {refusal}");
        }
    }

    /// Injects a fault rule: [`inject_fault`](Self::inject_fault).
    #[deprecated(
        since = "0.2.0",
        note = "use `inject_fault`, the control contract's name; `inject` goes in 0.3.0"
    )]
    ///
    /// # Panics
    /// Where `inject_fault` refuses: a rule that cannot be applied.
    pub fn inject(&self, fault: Fault) -> FaultHandle {
        self.inject_fault(fault)
            .unwrap_or_else(|refusal| panic!("the fault cannot be injected: {refusal}"))
    }

    /// Changes what answers and webhook bodies carry, and no other setting:
    /// [`update_settings`](Self::update_settings) with `responses` changed.
    #[deprecated(
        since = "0.2.0",
        note = "use `update_settings` (read `get_settings`, set `responses`); \
                `set_responses` goes in 0.3.0"
    )]
    pub fn set_responses(&self, mode: Responses) {
        let update = SettingsUpdate {
            responses: Some(mode),
            ..SettingsUpdate::default()
        };
        // A response mode alone is never refused.
        self.update_settings(update).ok();
    }
}

impl ContractSchemas {
    /// The contract's compiled schemas, now compiled once for the process:
    /// [`shared`](Self::shared). Answers a reference where 0.1.0 answered a
    /// value.
    #[deprecated(
        since = "0.2.0",
        note = "use `ContractSchemas::shared()`; `load` goes in 0.3.0"
    )]
    pub fn load() -> &'static Self {
        Self::shared()
    }
}
