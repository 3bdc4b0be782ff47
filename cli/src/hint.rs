//! What to do next after an error of the service or the SDK: one table from what
//! went wrong (a [`Topic`]) and the command that ran ([`CommandId`]) to a hint. The
//! error line already tells what happened (the message and the facts in brackets);
//! a hint tells only the next step, so it never repeats them. The table is the one
//! place to read or change such a hint. Hints about one generation (how to resume
//! it, by its id) are written where the failure that carries the id is made.

use mediagen::{
    ErrorCode, ErrorCode as E, FailureAdvice, FailureCode, OperationId, OperationId as O,
};

use self::Commands::{Any, Only};
use crate::cli::{CommandId, CommandId as C};

/// What went wrong, as far as the next step depends on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Topic {
    /// An error answer of the service, by its code, known or not.
    Code(ErrorCode),
    /// `RATE_LIMIT_ERROR` without a wait: the limit of active generations, which
    /// waiting a while does not lift.
    ConcurrencyLimit,
    /// `VALIDATION_ERROR` of a value outside a closed set.
    RefusedValue,
    /// `VALIDATION_ERROR` of a webhook URL.
    WebhookUrl,
    /// `VALIDATION_ERROR` of an invoice asked for before the requisites are set.
    NoRequisites,
    /// Any error answer of the service that no row names.
    AnyAnswer,
    /// A generation that ended `FAILED`, by its `errorCode`, known or not.
    Failed(FailureCode),
    /// What the service document's failure table says to do about a failure code.
    Advice(FailureAdvice),
    /// The service could not be reached.
    Unreachable,
    /// The client could not be made from the base URL and the key.
    Misconfigured,
    /// An environment variable the SDK reads has a value it does not take, by
    /// the variable's name (one of the SDK's `ENV_*`).
    Variable(&'static str),
}

impl Topic {
    /// The topic whose rows serve when none of this one's fits the command: a
    /// refused value or URL is a validation error, a failure code has its advice.
    fn broader(&self) -> Option<Self> {
        match self {
            Self::RefusedValue | Self::WebhookUrl | Self::NoRequisites => {
                Some(Self::Code(ErrorCode::ValidationError))
            }
            Self::Code(_) | Self::ConcurrencyLimit => Some(Self::AnyAnswer),
            Self::Failed(code) => Some(Self::Advice(code.advice())),
            Self::Advice(advice) if *advice != FailureAdvice::Unknown => {
                Some(Self::Advice(FailureAdvice::Unknown))
            }
            Self::AnyAnswer
            | Self::Advice(_)
            | Self::Unreachable
            | Self::Misconfigured
            | Self::Variable(_) => None,
        }
    }
}

/// The commands a row is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commands {
    Any,
    Only(&'static [CommandId]),
}

impl Commands {
    fn take(self, command: CommandId) -> bool {
        match self {
            Self::Any => true,
            Self::Only(commands) => commands.contains(&command),
        }
    }
}

/// A row: the topic, the commands it is for, the hint.
#[derive(Debug)]
pub struct Row {
    pub topic: Topic,
    pub commands: Commands,
    pub hint: &'static str,
}

const WEBHOOK_URL: &str = "give an https URL that the service can reach from the internet (a \
     tunnel to this machine will do); a mock started with --allow-private-webhooks also takes \
     private and loopback addresses";
const MODELS: &str = "check the model slug: `mediagen models` lists them";
const MODEL_PARAMETERS: &str = "fix the prompt or the parameters: `mediagen models SLUG` lists a model's parameters and \
     their values";
const OTHER_MODEL: &str = "choose another model: `mediagen models`";
const TOP_UP: &str = "top up with `mediagen topup AMOUNT`, or pay by bank transfer: `mediagen \
     requisites set` once, then `mediagen invoices create AMOUNT`";
/// After a balance too low in the embedded mock, where a top-up would be gone by
/// the next command.
pub const EMBEDDED_MOCK_BALANCE: &str = "the embedded mock starts afresh with each command: \
     keep one with more money running (`mediagen mock --demo-balance-rub 100000`) and pass \
     its URL as --base-url and its demo key as --api-key";
/// The command that takes the requisites, and what follows.
const SET_REQUISITES: &str = "give them with `mediagen requisites set` (flags or a JSON file), then \
     run this command again";
const LATER: &str = "try again later";

const CREATES: &[CommandId] = &[C::Generate, C::Batch];
const TAKE_WEBHOOK_URLS: &[CommandId] = &[
    C::WebhooksCreate,
    C::WebhooksUpdate,
    C::WebhooksListen,
    C::Batch,
];

/// The first row whose topic and commands fit wins: specific commands first.
pub static TABLE: &[Row] = &[
    Row {
        topic: Topic::Code(E::AuthenticationError),
        commands: Only(&[C::Login]),
        hint: "check the key you typed or piped in; keys are issued in the account dashboard",
    },
    Row {
        topic: Topic::Code(E::AuthenticationError),
        commands: Any,
        hint: "check the API key (MEDIAGEN_API_KEY, --api-key or the profile's api_key); keys \
               are issued in the account dashboard",
    },
    Row {
        topic: Topic::Code(E::AuthorizationError),
        commands: Any,
        hint: "use another key; keys and what they may do are managed in the account dashboard",
    },
    Row {
        topic: Topic::Code(E::ValidationError),
        commands: Only(CREATES),
        hint: MODEL_PARAMETERS,
    },
    Row {
        topic: Topic::RefusedValue,
        commands: Only(CREATES),
        hint: MODEL_PARAMETERS,
    },
    Row {
        topic: Topic::WebhookUrl,
        commands: Only(TAKE_WEBHOOK_URLS),
        hint: WEBHOOK_URL,
    },
    Row {
        topic: Topic::RefusedValue,
        commands: Only(&[
            C::WebhooksCreate,
            C::WebhooksUpdate,
            C::WebhooksListen,
            C::WebhooksTest,
        ]),
        hint: "pass --event with one of the values that `mediagen webhooks create --help` shows",
    },
    Row {
        topic: Topic::RefusedValue,
        commands: Only(&[C::List]),
        hint: "pass --status with one of the values that `mediagen list --help` shows",
    },
    Row {
        topic: Topic::RefusedValue,
        commands: Only(&[C::History]),
        hint: "pass --type with one of the values that `mediagen history --help` shows",
    },
    Row {
        topic: Topic::RefusedValue,
        commands: Only(&[C::FilesUpload]),
        hint: "pass --content-type with one of those types, or upload a file of such a type",
    },
    Row {
        topic: Topic::RefusedValue,
        commands: Any,
        hint: "choose one of the values the service accepts, then run the command again",
    },
    Row {
        topic: Topic::NoRequisites,
        commands: Any,
        hint: SET_REQUISITES,
    },
    Row {
        topic: Topic::Code(E::ValidationError),
        commands: Only(&[C::RequisitesSet]),
        hint: "correct the values named: the INN, the OGRN and both accounts carry check digits, \
               so copy them from the registration papers and the bank's details",
    },
    Row {
        topic: Topic::Code(E::ValidationError),
        commands: Only(&[C::FilesUpload]),
        hint: "upload an image, audio or video file below the size limit",
    },
    Row {
        topic: Topic::Code(E::ValidationError),
        commands: Only(&[C::Topup, C::InvoicesCreate]),
        hint: "give an amount of roubles the service accepts",
    },
    Row {
        topic: Topic::Code(E::ValidationError),
        commands: Only(&[C::Api]),
        hint: "fix the body or the query by the fields named; --field KEY=VALUE sets one",
    },
    Row {
        topic: Topic::Code(E::ValidationError),
        commands: Any,
        hint: "fix the request by the fields named, then run the command again",
    },
    Row {
        topic: Topic::Code(E::NotFound),
        commands: Only(CREATES),
        hint: MODELS,
    },
    Row {
        topic: Topic::Code(E::NotFound),
        commands: Only(&[C::Models]),
        hint: "`mediagen models` lists the slugs",
    },
    Row {
        topic: Topic::Code(E::NotFound),
        commands: Only(&[C::Get, C::Cancel]),
        hint: "check the id: `mediagen list` shows your generations (another account's are not \
               found)",
    },
    Row {
        topic: Topic::Code(E::NotFound),
        commands: Only(&[C::FilesGet, C::FilesDelete]),
        hint: "check the id; an uploaded file is kept for a limited time",
    },
    Row {
        topic: Topic::Code(E::NotFound),
        commands: Only(&[
            C::WebhooksGet,
            C::WebhooksUpdate,
            C::WebhooksRotate,
            C::WebhooksDelete,
            C::WebhooksTest,
            C::WebhooksDeliveries,
            C::WebhooksRedeliver,
        ]),
        hint: "check the id: `mediagen webhooks list` shows your endpoints",
    },
    Row {
        topic: Topic::Code(E::NotFound),
        commands: Only(&[C::InvoicesPdf, C::InvoicesAct]),
        hint: "check the id: `mediagen invoices list` shows your invoices",
    },
    Row {
        topic: Topic::Code(E::NotFound),
        commands: Only(&[C::Requisites]),
        hint: "none yet: `mediagen requisites set` takes them, from flags or a JSON file",
    },
    Row {
        topic: Topic::Code(E::NotFound),
        commands: Only(&[C::Api]),
        hint: "check the path, and the id in it: the service may have no such path, and \
               another account's resources are not found either",
    },
    Row {
        topic: Topic::Code(E::NotFound),
        commands: Any,
        hint: "check the id; another account's resources are not found either",
    },
    Row {
        topic: Topic::Code(E::ModelNotAvailable),
        commands: Any,
        hint: OTHER_MODEL,
    },
    Row {
        topic: Topic::Code(E::ModelUnavailable),
        commands: Any,
        hint: OTHER_MODEL,
    },
    Row {
        topic: Topic::Code(E::InsufficientBalance),
        commands: Only(&[C::Batch]),
        hint: "top up with `mediagen topup AMOUNT`, then run the same command again: the \
               journal pays for nothing twice",
    },
    Row {
        topic: Topic::Code(E::InsufficientBalance),
        commands: Any,
        hint: TOP_UP,
    },
    Row {
        topic: Topic::Code(E::MarginGuard),
        commands: Any,
        hint: "choose another model or other parameters; retrying does not help",
    },
    Row {
        topic: Topic::Code(E::PaymentError),
        commands: Any,
        hint: "try again later; `mediagen history --type TOPUP` shows whether money moved",
    },
    Row {
        topic: Topic::Code(E::ConflictError),
        commands: Only(&[C::Cancel]),
        hint: "it can no longer be cancelled: `mediagen get ID --wait` follows it to its end",
    },
    Row {
        topic: Topic::Code(E::ConflictError),
        commands: Only(&[C::InvoicesAct]),
        hint: "the act exists once the invoice is paid: `mediagen invoices list` shows its \
               status",
    },
    Row {
        topic: Topic::Code(E::ConflictError),
        commands: Any,
        hint: "look at its current state, then run the command again if it still applies",
    },
    Row {
        topic: Topic::Code(E::ReservationExpired),
        commands: Any,
        hint: "run the command again: the funds are reserved anew",
    },
    Row {
        topic: Topic::Code(E::RateLimitError),
        commands: Any,
        hint: "wait that long, then run the command again",
    },
    Row {
        topic: Topic::ConcurrencyLimit,
        commands: Any,
        hint: "wait for one of your active generations to end (`mediagen list --status \
               PROCESSING`) or cancel a PENDING one, then run the command again",
    },
    Row {
        topic: Topic::Code(E::DailyCapExceeded),
        commands: Any,
        hint: "top up again after 00:00 UTC, or pay by invoice: `mediagen invoices create \
               AMOUNT`, once `mediagen requisites set` has the legal entity's details",
    },
    Row {
        topic: Topic::Code(E::ModerationRepeatBlocked),
        commands: Any,
        hint: "change the material, or choose another model (`mediagen models`)",
    },
    Row {
        topic: Topic::Code(E::UpstreamCircuitOpen),
        commands: Any,
        hint: "choose another model (`mediagen models`), or try again later",
    },
    Row {
        topic: Topic::Code(E::InternalError),
        commands: Any,
        hint: "try again later; if it stays, quote the request id to support",
    },
    Row {
        topic: Topic::AnyAnswer,
        commands: Any,
        hint: LATER,
    },
    // A batch's journal keeps each line's end, so a rerun repeats a failure
    // that a new generation would meet again, and creates anew only the lines
    // that failed for now.
    Row {
        topic: Topic::Advice(FailureAdvice::Retry),
        commands: Only(&[C::Batch]),
        hint: "a temporary provider failure, and the funds were returned: run the same command \
               again, which creates these lines anew and pays for nothing twice",
    },
    Row {
        topic: Topic::Advice(FailureAdvice::RetryLaterOrOtherModel),
        commands: Only(&[C::Batch]),
        hint: "intake on the model is stopped for now, and the funds were returned: run the \
               same command again later, which creates these lines anew, or give them another \
               model (`mediagen models`)",
    },
    Row {
        topic: Topic::Advice(FailureAdvice::CheckInputs),
        commands: Only(&[C::Batch]),
        hint: "an input could not be fetched, and the funds were returned: fix the file or link \
               in these lines, then run the same command again; a changed line is a new line, \
               an unchanged one keeps its failure",
    },
    Row {
        topic: Topic::Advice(FailureAdvice::ChangeRequest),
        commands: Only(&[C::Batch]),
        hint: "the same line fails the same way, and the funds were returned: change the \
               prompt, material or parameters of these lines, then run the same command again; \
               a changed line is a new line, an unchanged one keeps its failure",
    },
    Row {
        topic: Topic::Advice(FailureAdvice::Unknown),
        commands: Only(&[C::Batch]),
        hint: "the funds were returned; the message tells the cause. A rerun keeps the failure \
               of an unchanged line: change a line to try it again (a changed line is a new \
               line)",
    },
    Row {
        topic: Topic::Advice(FailureAdvice::Retry),
        commands: Any,
        hint: "a temporary provider failure, and the funds were returned: run the same command \
               again without --idempotency-key to start a new generation",
    },
    Row {
        topic: Topic::Advice(FailureAdvice::RetryLaterOrOtherModel),
        commands: Any,
        hint: "intake on this model is stopped for now, and the funds were returned: try later, \
               or choose another model (`mediagen models`)",
    },
    Row {
        topic: Topic::Advice(FailureAdvice::CheckInputs),
        commands: Any,
        hint: "an input could not be fetched, and the funds were returned: check the file or \
               link, then try again",
    },
    Row {
        topic: Topic::Advice(FailureAdvice::ChangeRequest),
        commands: Any,
        hint: "the same request fails the same way: change the prompt, the material or the \
               parameters; the funds were returned",
    },
    Row {
        topic: Topic::Advice(FailureAdvice::Unknown),
        commands: Any,
        hint: "the funds were returned; the message tells the cause",
    },
    Row {
        topic: Topic::Unreachable,
        commands: Any,
        hint: "check the network and --base-url (MEDIAGEN_BASE_URL); `mediagen config` shows it",
    },
    Row {
        topic: Topic::Variable(mediagen::ENV_SHARED_PACE),
        commands: Any,
        hint: "set MEDIAGEN_SHARED_PACE to on (the default) or off, or unset it",
    },
    Row {
        topic: Topic::Misconfigured,
        commands: Any,
        hint: "check the base URL and the API key (--base-url and --api-key, MEDIAGEN_BASE_URL \
               and MEDIAGEN_API_KEY, or the profile; `mediagen config` shows them); --mock runs \
               against a local mock instead",
    },
];

/// The row for `topic` in `command`: of the topic, else of a broader one
/// ([`Topic::WebhookUrl`] falls back to `VALIDATION_ERROR`, then to any answer).
pub fn row(topic: &Topic, command: CommandId) -> Option<&'static Row> {
    std::iter::successors(Some(topic.clone()), Topic::broader).find_map(|topic| {
        TABLE
            .iter()
            .find(|row| row.topic == topic && row.commands.take(command))
    })
}

/// The hint for `topic` in `command`.
pub fn hint(topic: &Topic, command: CommandId) -> Option<&'static str> {
    row(topic, command).map(|row| row.hint)
}

/// The command that shows whether an operation whose outcome is unknown took
/// effect.
pub fn check_command(operation: OperationId) -> Option<&'static str> {
    Some(match operation {
        O::CreateTopup => "mediagen history --type TOPUP",
        O::CreateInvoice => "mediagen invoices list",
        O::CreateWebhookEndpoint | O::UpdateWebhookEndpoint => "mediagen webhooks list",
        O::RotateWebhookEndpointSecret => "mediagen webhooks rotate ID",
        O::SendTestWebhook | O::RedeliverWebhookMessage => "mediagen webhooks deliveries ID",
        O::CancelGeneration => "mediagen get ID",
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
