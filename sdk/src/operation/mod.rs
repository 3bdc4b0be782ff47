//! What the SDK knows of each operation. The contract's table
//! (`mediagen_openapi::operations`, written by `cargo codegen`) gives each
//! operation's method, path, whether it is public, how it may be repeated and
//! which rate limit counts it; the SDK adds only what is its own: how to tell
//! whether an operation that may act did, when an attempt got no clear answer.
//!
//! The transport sends an [`Operation`]: the row and the policy of a contract
//! operation, or the rules of a request outside the contract or to a storage URL.

use http::Method;
use mediagen_openapi::policy;

pub use mediagen_openapi::operations::OperationId;

use crate::limits::LimitScope;

/// Whether an operation may be sent again, by what it does (Never do anything twice
/// that costs money or changes state): the contract's `x-repeat`, with the SDK's
/// advice for an operation that may act.
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

/// How to tell whether a request that may act did, when nothing more is known.
const READ_TO_SEE: &str = "read the resource to see whether the request took effect";

impl Repeat {
    /// The rule of a request outside the contract, judged by its method alone.
    fn of_method(method: &Method) -> Self {
        match *method {
            Method::GET | Method::HEAD | Method::PUT | Method::DELETE => Self::Safe,
            _ => Self::Once { check: READ_TO_SEE },
        }
    }

    /// The contract's rule for `id`.
    fn of(id: OperationId) -> Self {
        match id.repeat() {
            policy::Repeat::Safe => Self::Safe,
            policy::Repeat::Keyed => Self::Keyed,
            policy::Repeat::Once => Self::Once { check: check(id) },
        }
    }
}

/// How to tell whether `id`, which may act, took effect after an attempt with
/// no clear answer: the SDK's advice, where the contract says only `once`.
fn check(id: OperationId) -> &'static str {
    use OperationId::*;
    match id {
        CancelGeneration => "read the generation: CANCELLED means the cancel took effect",
        CreateWebhookEndpoint => {
            "look for the endpoint in the endpoint list before creating it again, or every \
             event may be delivered twice"
        }
        // A PATCH is not repeated: `active: true` resets the failure count each time.
        UpdateWebhookEndpoint => "read the endpoint to see whether the change took effect",
        RotateWebhookEndpointSecret => {
            "the secret may have changed and its new value is lost: rotate again and store the \
             secret that comes back"
        }
        SendTestWebhook => "look at the endpoint's delivery attempts before sending another test",
        RedeliverWebhookMessage => {
            "look at the endpoint's delivery attempts before redelivering again"
        }
        CreateFileUpload => "ask for a new upload URL; an unused one expires by itself",
        CreateInvoice => "look for the invoice in the invoice list before creating it again",
        CreateTopup => {
            "look for the top-up in the balance history before topping up again, or the card \
             may be charged twice"
        }
        RequestMagicLink => "wait for the e-mail before asking for another link",
        _ => READ_TO_SEE,
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
            repeat: Repeat::of(id),
            to_service: true,
            limit: id.own_limit(),
        }
    }

    /// The operation of a request built by hand: the contract's when its
    /// method and path are one, or else judged by its method alone.
    pub(crate) fn of_request(method: &Method, path: &str) -> Self {
        OperationId::from_path(method.as_str(), path)
            .map_or_else(|| Self::unlisted(method), Self::of)
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
        self.id.map(OperationId::path)
    }

    /// Whether the API key goes with it.
    pub(crate) fn authenticated(&self) -> bool {
        self.to_service && !self.id.is_some_and(OperationId::public)
    }

    /// Whether it creates a generation, whose new id its span records.
    pub(crate) fn creates_generation(&self) -> bool {
        self.id == Some(OperationId::CreateGeneration)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_that_may_act_says_how_to_tell_whether_it_did() {
        for id in OperationId::ALL {
            let operation = Operation::of(id);
            match (id.repeat(), operation.repeat) {
                (policy::Repeat::Safe, Repeat::Safe) | (policy::Repeat::Keyed, Repeat::Keyed) => {}
                (policy::Repeat::Once, Repeat::Once { check }) => assert!(!check.is_empty()),
                (contract, sdk) => panic!("{id}: the contract says {contract:?}, the SDK {sdk:?}"),
            }
        }
        assert!(matches!(
            Operation::of(OperationId::CreateTopup).repeat,
            Repeat::Once { check } if check.contains("charged twice")
        ));
    }

    #[test]
    fn only_the_routes_limits_of_their_own_are_paced_beside_the_general_one() {
        for id in OperationId::ALL {
            let own = Operation::of(id).limit;
            assert_eq!(own.unwrap_or(LimitScope::General), id.limit(), "{id}");
        }
        assert_eq!(Operation::of(OperationId::GetGeneration).limit, None);
        assert_eq!(
            Operation::of(OperationId::CreateTopup).limit,
            Some(LimitScope::Topup)
        );
    }

    #[test]
    fn a_method_and_path_name_their_operation_of_the_contract() {
        let id = "6f1c0f4e-0000-4000-8000-000000000000";
        let of = |method: Method, path: &str| Operation::of_request(&method, path).id;
        assert_eq!(
            of(Method::POST, "/v1/generations"),
            Some(OperationId::CreateGeneration)
        );
        assert_eq!(
            of(Method::GET, &format!("/v1/generations/{id}")),
            Some(OperationId::GetGeneration)
        );
        assert_eq!(
            of(Method::GET, "/v1/generations?limit=5"),
            Some(OperationId::ListGenerations)
        );
        assert_eq!(
            of(Method::GET, "/v1/catalog/"),
            Some(OperationId::ListCatalog)
        );
        assert_eq!(of(Method::GET, "/v1/nothing"), None);
        assert_eq!(of(Method::DELETE, "/v1/generations"), None);
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
        let public: Vec<_> = OperationId::ALL
            .into_iter()
            .filter(|id| !Operation::of(*id).authenticated())
            .map(OperationId::as_str)
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
