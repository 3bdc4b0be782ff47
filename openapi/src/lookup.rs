//! What a reader finds from what a request or an answer carries: the
//! operation of a concrete path (for a reader with no router's matched
//! template: a client, a test), and the retry class of a code as sent. Above
//! both the generated table and the policy's words, which know nothing of it.

use crate::operations::{LimitScope, OperationId};
use crate::policy::Retry;
use crate::sets::ErrorCode;

impl OperationId {
    /// The rate limit of its own that counts it beside the general one, if it
    /// has one.
    ///
    /// ```
    /// use mediagen_openapi::operations::{LimitScope, OperationId};
    ///
    /// assert_eq!(OperationId::CreateTopup.own_limit(), Some(LimitScope::Topup));
    /// assert_eq!(OperationId::GetGeneration.own_limit(), None);
    /// ```
    pub fn own_limit(self) -> Option<LimitScope> {
        Some(self.limit()).filter(|scope| *scope != LimitScope::General)
    }

    /// The operation a method and a concrete path are (a query is ignored;
    /// `HEAD` goes with `GET`), if the contract has one.
    ///
    /// ```
    /// use mediagen_openapi::operations::OperationId;
    ///
    /// let read = OperationId::from_path("GET", "/v1/generations/6f1c0f4e?x=1");
    /// assert_eq!(read, Some(OperationId::GetGeneration));
    /// assert_eq!(OperationId::from_path("GET", "/v1/catalog/"), Some(OperationId::ListCatalog));
    /// assert_eq!(OperationId::from_path("DELETE", "/v1/generations"), None);
    /// ```
    pub fn from_path(method: &str, path: &str) -> Option<Self> {
        let method = if method == "HEAD" { "GET" } else { method };
        let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
        let given = path.split('/');
        let segments = given.clone().count();
        Self::ALL.into_iter().find(|op| {
            let template = op.path().trim_end_matches('/').split('/');
            op.method() == method
                && template.clone().count() == segments
                && template
                    .zip(given.clone())
                    .all(|(t, g)| (t.starts_with('{') && !g.is_empty()) || t == g)
        })
    }
}

impl Retry {
    /// The class of `error.code` as sent: the contract's for a code it names;
    /// for another member of the `GATEWAY_*` and `BILLING_*` families, an
    /// internal integration failure, `Backoff` (Errors, Codes: "Retry with
    /// exponential delay"); `None` for any other code, which only its status
    /// can judge.
    ///
    /// ```
    /// use mediagen_openapi::policy::Retry;
    ///
    /// assert_eq!(Retry::of_code("NOT_FOUND"), Some(Retry::Never));
    /// assert_eq!(Retry::of_code("GATEWAY_EXPLODED"), Some(Retry::Backoff));
    /// assert_eq!(Retry::of_code("SOMETHING_NEW"), None);
    /// ```
    pub fn of_code(code: &str) -> Option<Self> {
        match ErrorCode::from_wire(code) {
            Some(known) => Some(known.retry()),
            None if code.starts_with("GATEWAY_") || code.starts_with("BILLING_") => {
                Some(Self::Backoff)
            }
            None => None,
        }
    }
}
