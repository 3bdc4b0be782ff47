//! The verdict on a world's client (`GET` and `DELETE /_mock/verdict`) and the
//! receiver probes (`POST /_mock/probes/webhooks`): each operation once, as a
//! route and as a method of [`World`].

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

use super::{ControlBody, ControlJson};
use crate::delivery::probe::{self, ProbeReport};
use crate::domain::refusal::Missing;
use crate::error::Result;
use crate::state::AppState;
use crate::verdict::{Severity, Verdict};
use crate::world::World;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/_mock/verdict", get(get_verdict).delete(reset_verdict))
        .route("/_mock/probes/webhooks", post(probe_webhooks))
}

async fn get_verdict(State(state): State<AppState>) -> Json<Verdict> {
    Json(state.judge().verdict())
}

async fn reset_verdict(State(state): State<AppState>) -> StatusCode {
    state.judge().reset();
    StatusCode::NO_CONTENT
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ProbeWebhooks {
    endpoint_id: String,
}

impl ControlBody for ProbeWebhooks {
    const SCHEMA: &'static str = "ProbeWebhooks";
}

async fn probe_webhooks(
    State(state): State<AppState>,
    ControlJson(body): ControlJson<ProbeWebhooks>,
) -> Result<Json<ProbeReport>> {
    probe::probe_webhooks(&state, &body.endpoint_id)
        .await
        .map(Json)
        .ok_or_else(|| Missing::Endpoint(body.endpoint_id).into())
}

// Operations of the control contract, one method each, named by operationId.
impl World {
    /// The verdict on the world's client so far: every finding, and whether
    /// any is a violation.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mock = mediagen_mock_server::MockServer::start().await;
    /// let verdict = mock.get_verdict();
    /// assert!(verdict.clean && verdict.findings.is_empty());
    /// # }
    /// ```
    pub fn get_verdict(&self) -> Verdict {
        self.state.judge().verdict()
    }

    /// Starts the verdict over, for a suite that shares a world between tests.
    pub fn reset_verdict(&self) {
        self.state.judge().reset();
    }

    /// Sends three probes to the endpoint `endpoint_id` now (a wrong signature,
    /// a 10-minute-old timestamp, a repeat of its last acknowledged message)
    /// and returns how its receiver answered each, once all are answered or
    /// timed out; the findings go into the verdict. `None` when there is no
    /// such endpoint.
    pub async fn probe_webhooks(&self, endpoint_id: &str) -> Option<ProbeReport> {
        probe::probe_webhooks(&self.state, endpoint_id).await
    }
}

/// What a Rust test needs beyond the control API.
impl World {
    /// The verdict so far (the same as [`get_verdict`](Self::get_verdict)).
    pub fn verdict(&self) -> Verdict {
        self.get_verdict()
    }

    /// Panics, with every finding in words, when the verdict has a violation;
    /// advice does not fail it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mock = mediagen_mock_server::MockServer::start().await;
    /// // … the client under test runs against mock.uri() …
    /// mock.assert_clean();
    /// # }
    /// ```
    ///
    /// # Panics
    /// When a finding is a violation.
    #[track_caller]
    pub fn assert_clean(&self) {
        let verdict = self.get_verdict();
        if !verdict.clean {
            let violations = verdict
                .findings
                .iter()
                .filter(|f| f.severity == Severity::Violation)
                .count();
            panic!("the mock's verdict on the client has {violations} violation(s): {verdict}");
        }
    }
}
