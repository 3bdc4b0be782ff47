//! Every refusal of the domain, turned into the service's error envelope
//! once: its status, code, message and `details` (with `fields[]` for a
//! `VALIDATION_ERROR`). A handler returns the domain's refusal and ends in `?`;
//! adding a refusal touches its rule and its conversion here, nothing else.

use mediagen_openapi::operations::LimitScope;
use serde_json::json;

use crate::contract::FieldError;
use crate::domain::address::AddressError;
use crate::domain::billing::{BillingRefusal, DAILY_TOPUP_CAP};
use crate::domain::catalog::{ModelRefused, ModelState, PRICING_MISSING};
use crate::domain::fault::InjectedError;
use crate::domain::file::{self, UploadError, UploadRefusal};
use crate::domain::generation::CreateRefusal;
use crate::domain::idempotency::{BadKey, MAX_KEY_LEN};
use crate::domain::money::FinerThanKopeck;
use crate::domain::refusal::{Conflict, Invalid, Missing};
use crate::domain::webhook::{EVENT_FILTERS, EndpointRefusal, MAX_ENDPOINTS};
use crate::error::{ApiError, Window};

/// An answer a fault rule or a magic prompt asked for.
impl From<InjectedError> for ApiError {
    fn from(error: InjectedError) -> Self {
        Self::Injected(error)
    }
}

impl From<Missing> for ApiError {
    fn from(missing: Missing) -> Self {
        Self::NotFound(missing.to_string())
    }
}

impl From<Conflict> for ApiError {
    fn from(conflict: Conflict) -> Self {
        Self::Conflict(conflict.to_string())
    }
}

impl From<Invalid> for ApiError {
    fn from(invalid: Invalid) -> Self {
        Self::Validation {
            message: invalid.message,
            fields: invalid.fields,
            details: invalid.details,
        }
    }
}

impl From<CreateRefusal> for ApiError {
    fn from(refusal: CreateRefusal) -> Self {
        let message = refusal.to_string();
        match refusal {
            // Rule 5: no retry-after, since only a task ending frees a slot.
            CreateRefusal::TooManyActive => Self::RateLimited {
                message,
                window: None,
            },
            CreateRefusal::Insufficient {
                required,
                available,
            } => Self::InsufficientBalance {
                message,
                required,
                available,
            },
            CreateRefusal::ModerationBlocked { model_slug, streak } => {
                Self::ModerationRepeatBlocked {
                    message,
                    model_slug,
                    streak,
                }
            }
        }
    }
}

/// Rule 9 of `POST /v1/generations`: the model errors.
impl From<ModelRefused> for ApiError {
    fn from(refused: ModelRefused) -> Self {
        let slug = refused.slug;
        match refused.state {
            ModelState::Disabled => Self::ModelNotAvailable(slug),
            ModelState::Withdrawn => Self::ModelUnavailable(slug),
            ModelState::CircuitOpen => Self::UpstreamCircuitOpen(slug),
            ModelState::MarginGuard => Self::MarginGuard(slug),
            ModelState::PricingMissing | ModelState::Available => Self::Validation {
                message: PRICING_MISSING.into(),
                fields: vec![FieldError::new(
                    "/modelSlug",
                    "pricing",
                    PRICING_MISSING,
                    json!({"modelSlug": slug}),
                )],
                details: Some(json!({"modelSlug": slug})),
            },
        }
    }
}

/// An endpoint rule: 400 with the document's message.
impl From<EndpointRefusal> for ApiError {
    fn from(refusal: EndpointRefusal) -> Self {
        let message = refusal.to_string();
        match refusal {
            EndpointRefusal::TooMany => Self::validation(
                message.clone(),
                vec![FieldError::new(
                    "",
                    "maxItems",
                    message,
                    json!({"limit": MAX_ENDPOINTS}),
                )],
            ),
            EndpointRefusal::UnknownEvents(unknown) => Self::Validation {
                fields: unknown
                    .iter()
                    .map(|(i, _)| {
                        FieldError::new(
                            format!("/eventTypes/{i}"),
                            "enum",
                            "must be equal to one of the allowed values",
                            json!({"allowedValues": EVENT_FILTERS}),
                        )
                    })
                    .collect(),
                message,
                details: Some(json!({"allowedValues": EVENT_FILTERS})),
            },
        }
    }
}

/// A webhook URL the address rules refuse: 400 at `/url`, the document's message.
impl From<AddressError> for ApiError {
    fn from(refused: AddressError) -> Self {
        Invalid::field("/url", "url", refused.to_string()).into()
    }
}

impl From<BillingRefusal> for ApiError {
    fn from(refusal: BillingRefusal) -> Self {
        let message = refusal.to_string();
        match refusal {
            BillingRefusal::TooManyTopups { retry_after } => Self::RateLimited {
                message,
                window: Some(Window {
                    scope: LimitScope::Topup,
                    retry_after,
                }),
            },
            BillingRefusal::DailyCapExceeded => Self::DailyCapExceeded {
                message,
                limit: DAILY_TOPUP_CAP,
            },
            BillingRefusal::NoRequisites => Self::validation(
                message,
                vec![FieldError::new(
                    "/requisites",
                    "required",
                    "must have requisites",
                    json!({"missingProperty": "requisites"}),
                )],
            ),
        }
    }
}

/// `POST /v1/files`: an unsupported type or too large a file, 400.
impl From<UploadRefusal> for ApiError {
    fn from(refusal: UploadRefusal) -> Self {
        let message = refusal.to_string();
        match refusal {
            UploadRefusal::Unsupported(_) => Self::validation(
                message,
                vec![FieldError::new(
                    "/contentType",
                    "enum",
                    "must be equal to one of the allowed values",
                    json!({"allowedValues": file::content_types().collect::<Vec<_>>()}),
                )],
            ),
            UploadRefusal::TooLarge { max, .. } => Self::Validation {
                message,
                fields: vec![FieldError::new(
                    "/sizeBytes",
                    "maximum",
                    format!("must be <= {max}"),
                    json!({"comparison": "<=", "limit": max}),
                )],
                details: Some(json!({"maxSizeBytes": max})),
            },
        }
    }
}

/// The bytes PUT to an upload URL: a file deleted since (404), another type
/// or more bytes than declared (400).
impl From<UploadError> for ApiError {
    fn from(refused: UploadError) -> Self {
        let message = refused.to_string();
        let field = match refused {
            UploadError::Deleted => return Missing::DeletedFile.into(),
            UploadError::WrongType(declared) => FieldError::new(
                "/headers/Content-Type",
                "const",
                "must be equal to constant",
                json!({"allowedValue": declared}),
            ),
            UploadError::TooLarge { declared, .. } => FieldError::new(
                "",
                "maxLength",
                format!("must NOT have more than {declared} bytes"),
                json!({"limit": declared}),
            ),
        };
        Self::validation(message, vec![field])
    }
}

/// An `Idempotency-Key` the contract does not allow: 400 at its header.
impl From<BadKey> for ApiError {
    fn from(refused: BadKey) -> Self {
        Self::validation(
            refused.to_string(),
            vec![FieldError::new(
                "/headers/Idempotency-Key",
                "maxLength",
                format!("must NOT have more than {MAX_KEY_LEN} characters"),
                json!({"limit": MAX_KEY_LEN}),
            )],
        )
    }
}

/// An amount finer than a kopeck: 400 at its member.
impl From<FinerThanKopeck> for ApiError {
    fn from(refused: FinerThanKopeck) -> Self {
        Self::validation(
            refused.to_string(),
            vec![FieldError::new(
                format!("/{}", refused.field),
                "multipleOf",
                "must be multiple of 0.01",
                json!({"multipleOf": 0.01}),
            )],
        )
    }
}
