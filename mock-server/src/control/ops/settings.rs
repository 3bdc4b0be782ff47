//! What a world does on demand: its settings, its models' states, forced
//! outcomes and DNS pins.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use super::known_model;
use crate::config::Responses;
use crate::domain::catalog::ModelState;
use crate::domain::outcome::ForcedOutcome;
use crate::error::ControlError;
use crate::state::AppState;
use crate::store::Store;

/// The longest latency or auto-pay delay a setting takes, in seconds: an hour
/// is longer than any test waits.
const MAX_SECONDS: f64 = 3600.0;

/// A world's settings (`GET` and `PUT /_mock/settings`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Settings {
    /// Virtual seconds a create with an `Idempotency-Key` takes, so that a test
    /// can see the 409 of a repeat while the first is executing.
    pub create_latency_seconds: f64,
    /// Virtual seconds after which a new top-up pays itself; `None`: paid by hand.
    pub auto_pay_seconds: Option<f64>,
    /// What answers and webhook bodies carry.
    pub responses: Responses,
}

impl Settings {
    /// The settings the store holds.
    fn of(store: &Store) -> Self {
        Self {
            create_latency_seconds: store.create_latency_secs(),
            auto_pay_seconds: store.auto_pay_secs(),
            responses: store.responses(),
        }
    }
}

/// Settings to change (`PUT /_mock/settings`); what is `None` stays.
///
/// Whole [`Settings`] convert into an update that sets each of them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct SettingsUpdate {
    /// From 0 to 3600 seconds.
    pub create_latency_seconds: Option<f64>,
    /// From 0 to 3600 seconds; `Some(None)` (`null`): new top-ups wait to be paid by hand.
    #[serde(default, deserialize_with = "present")]
    pub auto_pay_seconds: Option<Option<f64>>,
    /// What answers and webhook bodies carry.
    pub responses: Option<Responses>,
}

impl From<Settings> for SettingsUpdate {
    fn from(settings: Settings) -> Self {
        Self {
            create_latency_seconds: Some(settings.create_latency_seconds),
            auto_pay_seconds: Some(settings.auto_pay_seconds),
            responses: Some(settings.responses),
        }
    }
}

/// Reads a member that is present, `null` included, as `Some`: absent is `None`.
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

pub(crate) fn get_settings(state: &AppState) -> Settings {
    Settings::of(&state.store())
}

/// Checks every value first, then changes them all: a refused update changes nothing.
pub(crate) fn update_settings(
    state: &AppState,
    update: SettingsUpdate,
) -> Result<Settings, ControlError> {
    let seconds = |value: f64, name: &str| {
        if value.is_finite() && (0.0..=MAX_SECONDS).contains(&value) {
            Ok(value)
        } else {
            Err(ControlError::invalid(
                &format!("/{name}"),
                "maximum",
                format!("{name} must be from 0 to {MAX_SECONDS}"),
            ))
        }
    };
    let latency = update
        .create_latency_seconds
        .map(|s| seconds(s, "createLatencySeconds"))
        .transpose()?;
    let auto_pay = update
        .auto_pay_seconds
        .map(|s| s.map(|s| seconds(s, "autoPaySeconds")).transpose())
        .transpose()?;
    let mut store = state.store();
    if let Some(secs) = latency {
        store.set_create_latency_secs(secs);
    }
    if let Some(secs) = auto_pay {
        store.set_auto_pay_secs(secs);
    }
    if let Some(mode) = update.responses {
        store.set_responses(mode);
    }
    Ok(Settings::of(&store))
}

/// A model's state as `POST /_mock/models/{slug}/state` set it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ModelStateSet {
    /// The model.
    pub slug: String,
    /// Its state now.
    pub state: ModelState,
}

/// Sets the state of a model of the catalogue.
pub(crate) fn set_model_state(
    state: &AppState,
    slug: &str,
    model_state: ModelState,
) -> Result<ModelStateSet, ControlError> {
    known_model(state, slug)?;
    state.store().set_model_state(slug, model_state);
    Ok(ModelStateSet {
        slug: slug.to_owned(),
        state: model_state,
    })
}

/// Queues a rule for the next `rule.count` matching tasks; answers the rule.
pub(crate) fn force_outcome(
    state: &AppState,
    rule: ForcedOutcome,
) -> Result<ForcedOutcome, ControlError> {
    if rule.count == 0 {
        return Err(ControlError::invalid(
            "/count",
            "minimum",
            "count must be at least 1",
        ));
    }
    if let Some(slug) = &rule.model_slug {
        known_model(state, slug)?;
    }
    state.store().force_outcome(rule.clone());
    Ok(rule)
}

/// A host name pinned by `PUT /_mock/dns`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DnsSet {
    /// The host name.
    pub host: String,
    /// What it resolves to now; empty: it fails to resolve.
    pub addresses: Vec<IpAddr>,
}

/// Pins a host name to addresses for webhook URLs, at creation and at delivery.
pub(crate) fn set_dns(
    state: &AppState,
    host: &str,
    addresses: Vec<IpAddr>,
) -> Result<DnsSet, ControlError> {
    if host.is_empty() {
        return Err(ControlError::invalid(
            "/host",
            "minLength",
            "host must be a host name, not empty",
        ));
    }
    state.deliverer().resolver.set(host, addresses.clone());
    Ok(DnsSet {
        host: host.to_owned(),
        addresses,
    })
}
