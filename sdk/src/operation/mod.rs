//! What the SDK knows of each operation, in one place: the contract's row
//! (method, path, `operationId`, public or not), written by the generator in
//! `table.rs`, and the SDK's policy for it beside it: whether sending it again
//! can act twice ([`Repeat`]) and which limit of the service counts it beyond
//! the general one. Both policies are `match`es on [`OperationId`], so an
//! operation the contract gains does not compile until it has its rules.
//!
//! The transport sends an [`Operation`]: the row and the policy of a contract
//! operation, or the rules of a request outside the contract or to a storage URL.

#[rustfmt::skip]
mod table;

use http::Method;

use crate::limits::LimitScope;

pub use table::OperationId;
use table::{OPERATIONS, Row};

/// Whether an operation may be sent again, by what it does (Never do anything twice
/// that costs money or changes state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Repeat {
    /// Idempotent by nature: sending it twice has the effect of sending it once
    /// (GET, PUT of a whole resource, DELETE, a read sent as POST, and the transfers
    /// to and from storage URLs).
    Safe,
    /// Carries an `Idempotency-Key`: a repeat with the same key returns what the
    /// first attempt made. Only `POST /v1/generations`, which always carries one.
    Keyed,
    /// May act (charge a card, send a message, change a secret). Sent again only
    /// when it surely did not act: it never reached the service, or the service
    /// refused it before acting. `check` says how to tell whether an attempt with
    /// no clear answer took effect.
    Once {
        /// How to tell whether it took effect.
        check: &'static str,
    },
}

impl Repeat {
    /// The rule of a request outside the contract, judged by its method alone.
    fn of_method(method: &Method) -> Self {
        match *method {
            Method::GET | Method::HEAD | Method::PUT | Method::DELETE => Self::Safe,
            _ => Self::Once {
                check: "read the resource to see whether the request took effect",
            },
        }
    }
}

impl OperationId {
    fn row(self) -> &'static Row {
        &OPERATIONS[self as usize]
    }

    /// Its `operationId` in the contract.
    ///
    /// ```
    /// assert_eq!(mediagen::OperationId::CreateTopup.as_str(), "create_topup");
    /// ```
    pub fn as_str(self) -> &'static str {
        self.row().operation_id
    }

    /// The operation of an `operationId`.
    pub(crate) fn find(operation_id: &str) -> Option<Self> {
        OPERATIONS
            .iter()
            .find(|row| row.operation_id == operation_id)
            .map(|row| row.id)
    }

    /// The operation a method and path are (a query is ignored), if any.
    pub(crate) fn of_request(method: &Method, path: &str) -> Option<Self> {
        let path = path.split('?').next().unwrap_or(path);
        let segments = |p: &'static str| p.trim_end_matches('/').split('/');
        let given: Vec<&str> = path.trim_end_matches('/').split('/').collect();
        OPERATIONS
            .iter()
            .find(|row| {
                row.method == method.as_str()
                    && segments(row.path).count() == given.len()
                    && segments(row.path)
                        .zip(&given)
                        .all(|(w, g)| (w.starts_with('{') && !g.is_empty()) || w == *g)
            })
            .map(|row| row.id)
    }

    /// Whether, and when, it may be sent again.
    pub(crate) fn repeat(self) -> Repeat {
        use OperationId::*;
        match self {
            CreateGeneration => Repeat::Keyed,
            // A price, computed; nothing is created and no money moves.
            EstimateGeneration => Repeat::Safe,
            ListGenerations | GetGeneration => Repeat::Safe,
            CancelGeneration => Repeat::Once {
                check: "read the generation: CANCELLED means the cancel took effect",
            },
            CreateWebhookEndpoint => Repeat::Once {
                check: "look for the endpoint in the endpoint list before creating it again, or \
                        every event may be delivered twice",
            },
            ListWebhookEndpoints | GetWebhookEndpoint | DeleteWebhookEndpoint => Repeat::Safe,
            // A PATCH is not repeated: `active: true` resets the failure count each time.
            UpdateWebhookEndpoint => Repeat::Once {
                check: "read the endpoint to see whether the change took effect",
            },
            RotateWebhookEndpointSecret => Repeat::Once {
                check: "the secret may have changed and its new value is lost: rotate again and \
                        store the secret that comes back",
            },
            SendTestWebhook => Repeat::Once {
                check: "look at the endpoint's delivery attempts before sending another test",
            },
            ListWebhookDeliveries => Repeat::Safe,
            RedeliverWebhookMessage => Repeat::Once {
                check: "look at the endpoint's delivery attempts before redelivering again",
            },
            CreateFileUpload => Repeat::Once {
                check: "ask for a new upload URL; an unused one expires by itself",
            },
            GetFile | DeleteFile => Repeat::Safe,
            GetBalance | ListBillingHistory | GetRequisites | SetRequisites | ListInvoices => {
                Repeat::Safe
            }
            CreateInvoice => Repeat::Once {
                check: "look for the invoice in the invoice list before creating it again",
            },
            GetInvoicePdf | GetInvoiceAct => Repeat::Safe,
            CreateTopup => Repeat::Once {
                check: "look for the top-up in the balance history before topping up again, or \
                        the card may be charged twice",
            },
            GetAccount | GetSummary => Repeat::Safe,
            RequestMagicLink => Repeat::Once {
                check: "wait for the e-mail before asking for another link",
            },
            ListCatalog | GetHealth | GetOpenapiDocument => Repeat::Safe,
        }
    }

    /// The route's own limit, beyond the general one (Limits).
    pub(crate) fn limit(self) -> Option<LimitScope> {
        use OperationId::*;
        match self {
            CreateFileUpload => Some(LimitScope::Files),
            RequestMagicLink => Some(LimitScope::MagicLink),
            GetInvoicePdf | GetInvoiceAct => Some(LimitScope::InvoiceDocuments),
            CreateTopup => Some(LimitScope::Topup),
            CreateGeneration
            | EstimateGeneration
            | ListGenerations
            | GetGeneration
            | CancelGeneration
            | CreateWebhookEndpoint
            | ListWebhookEndpoints
            | GetWebhookEndpoint
            | UpdateWebhookEndpoint
            | DeleteWebhookEndpoint
            | RotateWebhookEndpointSecret
            | SendTestWebhook
            | ListWebhookDeliveries
            | RedeliverWebhookMessage
            | GetFile
            | DeleteFile
            | GetBalance
            | ListBillingHistory
            | GetRequisites
            | SetRequisites
            | ListInvoices
            | CreateInvoice
            | GetAccount
            | GetSummary
            | ListCatalog
            | GetHealth
            | GetOpenapiDocument => None,
        }
    }
}

/// How one request is sent: what it is called in spans and errors, its path
/// template, whether it carries the key, may be repeated and is paced.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operation {
    /// The contract's `operationId`, or a name for a request outside it.
    pub(crate) name: &'static str,
    /// The contract operation it is, if any.
    pub(crate) id: Option<OperationId>,
    /// Whether, and when, it may be sent again.
    pub(crate) repeat: Repeat,
    /// Whether it goes to the service: then it carries the key (unless public)
    /// and counts against the limits. Storage URLs get neither.
    pub(crate) to_service: bool,
    /// The route's own limit, beyond the general one.
    pub(crate) limit: Option<LimitScope>,
}

impl Operation {
    /// An operation of the contract.
    pub(crate) fn of(id: OperationId) -> Self {
        Self {
            name: id.as_str(),
            id: Some(id),
            repeat: id.repeat(),
            to_service: true,
            limit: id.limit(),
        }
    }

    /// A request to the service that the contract does not have (yet), judged
    /// by its method alone.
    pub(crate) fn unlisted(method: &Method) -> Self {
        Self {
            name: "request",
            id: None,
            repeat: Repeat::of_method(method),
            to_service: true,
            limit: None,
        }
    }

    /// A transfer to or from a storage URL (a presigned upload, a result file):
    /// idempotent, outside the service's limits, and sent without the API key.
    pub(crate) fn storage(name: &'static str) -> Self {
        Self {
            name,
            id: None,
            repeat: Repeat::Safe,
            to_service: false,
            limit: None,
        }
    }

    /// Its path template in the contract.
    pub(crate) fn template(&self) -> Option<&'static str> {
        self.id.map(|id| id.row().path)
    }

    /// Whether the API key goes with it.
    pub(crate) fn authenticated(&self) -> bool {
        self.to_service && !self.id.is_some_and(|id| id.row().public)
    }

    /// Whether it creates a generation, whose new id its span records.
    pub(crate) fn creates_generation(&self) -> bool {
        self.id == Some(OperationId::CreateGeneration)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract_operations() -> Vec<(String, String, String, bool)> {
        let doc: serde_json::Value =
            serde_json::from_str(include_str!("../../../openapi/openapi.json")).unwrap();
        let mut found = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let Some(id) = operation.get("operationId").and_then(|v| v.as_str()) else {
                    continue;
                };
                let public = operation
                    .get("security")
                    .is_some_and(|s| s.as_array().is_some_and(Vec::is_empty));
                found.push((id.to_owned(), method.to_uppercase(), path.clone(), public));
            }
        }
        found
    }

    #[test]
    fn the_table_holds_every_operation_of_the_contract_once() {
        let contract = contract_operations();
        assert_eq!(contract.len(), OPERATIONS.len());
        for (index, row) in OPERATIONS.iter().enumerate() {
            assert_eq!(
                row.id as usize, index,
                "{} is out of place",
                row.operation_id
            );
        }
        for (id, method, path, public) in contract {
            let op = OperationId::find(&id).unwrap_or_else(|| panic!("{id} is missing"));
            let row = op.row();
            assert_eq!(
                (row.method, row.path, row.public),
                (&*method, &*path, public),
                "{id}"
            );
        }
    }

    #[test]
    fn only_what_cannot_act_twice_is_repeated_freely() {
        for row in &OPERATIONS {
            let expected = match (row.method, row.id) {
                (_, OperationId::CreateGeneration) => Repeat::Keyed,
                // A read sent as POST.
                (_, OperationId::EstimateGeneration) => Repeat::Safe,
                ("GET" | "PUT" | "DELETE", _) => Repeat::Safe,
                _ => row.id.repeat(),
            };
            assert_eq!(row.id.repeat(), expected, "{}", row.operation_id);
            if matches!(row.method, "POST" | "PATCH")
                && expected != Repeat::Keyed
                && row.id != OperationId::EstimateGeneration
            {
                assert!(
                    matches!(row.id.repeat(), Repeat::Once { .. }),
                    "{} may act and must be sent once",
                    row.operation_id
                );
            }
        }
    }

    #[test]
    fn the_routes_with_limits_of_their_own_are_the_documents() {
        let limited: Vec<_> = OPERATIONS
            .iter()
            .filter_map(|row| row.id.limit().map(|scope| (row.method, row.path, scope)))
            .collect();
        assert_eq!(
            limited,
            [
                ("POST", "/v1/auth/magic-link/request", LimitScope::MagicLink),
                (
                    "GET",
                    "/v1/billing/invoices/{id}/act",
                    LimitScope::InvoiceDocuments
                ),
                (
                    "GET",
                    "/v1/billing/invoices/{id}/pdf",
                    LimitScope::InvoiceDocuments
                ),
                ("POST", "/v1/billing/topup", LimitScope::Topup),
                ("POST", "/v1/files", LimitScope::Files),
            ]
        );
    }

    #[test]
    fn a_method_and_path_name_their_operation_of_the_contract() {
        let id = "6f1c0f4e-0000-4000-8000-000000000000";
        assert_eq!(
            OperationId::of_request(&Method::POST, "/v1/generations"),
            Some(OperationId::CreateGeneration)
        );
        assert_eq!(
            OperationId::of_request(&Method::GET, &format!("/v1/generations/{id}")),
            Some(OperationId::GetGeneration)
        );
        assert_eq!(
            OperationId::of_request(&Method::GET, "/v1/generations?limit=5"),
            Some(OperationId::ListGenerations)
        );
        assert_eq!(
            OperationId::of_request(&Method::GET, "/v1/catalog/"),
            Some(OperationId::ListCatalog)
        );
        assert_eq!(OperationId::of_request(&Method::GET, "/v1/nothing"), None);
        assert_eq!(
            OperationId::of_request(&Method::DELETE, "/v1/generations"),
            None
        );
    }

    #[test]
    fn a_request_the_contract_lacks_is_judged_by_its_method() {
        assert_eq!(Operation::unlisted(&Method::GET).repeat, Repeat::Safe);
        for method in [Method::POST, Method::PATCH] {
            assert!(matches!(
                Operation::unlisted(&method).repeat,
                Repeat::Once { .. }
            ));
        }
    }

    #[test]
    fn only_the_public_methods_go_without_the_key() {
        let public: Vec<_> = OPERATIONS
            .iter()
            .filter(|row| !Operation::of(row.id).authenticated())
            .map(|row| row.operation_id)
            .collect();
        assert_eq!(
            public,
            [
                "get_openapi_document",
                "get_health",
                "request_magic_link",
                "list_catalog"
            ]
        );
        assert!(!Operation::storage("download_file").authenticated());
        assert!(Operation::unlisted(&Method::GET).authenticated());
    }
}
