//! `webhooks verify`: checks one delivery as a receiver would, and when it fails,
//! says which usual mistake it was.

use std::io::Read;
use std::time::Duration;

use anyhow::Context as _;
use webhook_verify::{Webhook, WebhookError};

use crate::cli::webhooks::VerifyArgs;
use crate::error::{Exit, Failure};
use crate::output::Output;

/// `webhooks verify`: checks one delivery as a receiver would, and when it fails,
/// looks for the usual causes to say which one it is.
pub fn run(out: &Output, args: VerifyArgs) -> anyhow::Result<()> {
    let payload = match &args.payload_file {
        Some(path) => {
            std::fs::read(path).with_context(|| format!("while reading {}", path.display()))?
        }
        None => {
            let mut payload = Vec::new();
            std::io::stdin()
                .read_to_end(&mut payload)
                .context("while reading the body from stdin")?;
            payload
        }
    };
    let webhook = Webhook::new(&args.secret)
        .map_err(|err| {
            Failure::new(
                Exit::Usage,
                "INVALID_SECRET",
                format!("the secret is not usable: {err}"),
            )
            .hint("pass the endpoint's secret as shown at creation or rotation, whsec_ and all")
        })?
        .with_tolerance(Duration::from_secs(args.tolerance));
    let now = args.now.unwrap_or_else(|| chrono::Utc::now().timestamp());
    let result = webhook.verify_parts_at(&payload, &args.id, &args.timestamp, &args.signature, now);
    let err = match result {
        Ok(()) => {
            return if out.is_json() {
                out.emit(&serde_json::json!({ "valid": true }), |_, _| Ok(()))
            } else {
                out.plain("valid")
            };
        }
        Err(err) => err,
    };
    let hint = diagnose(&webhook, &args, &payload, &err);
    let code = match err {
        WebhookError::InvalidSignature => "INVALID_SIGNATURE",
        WebhookError::TimestampTooOldError | WebhookError::FutureTimestampError => {
            "TIMESTAMP_OUT_OF_TOLERANCE"
        }
        WebhookError::InvalidTimestamp => "INVALID_TIMESTAMP",
        _ => "INVALID_WEBHOOK",
    };
    let mut failure = Failure::new(Exit::Other, code, format!("invalid: {err}"));
    failure.hint = hint;
    Err(failure.into())
}

/// The likely cause of a failed verification, found by retrying with each usual
/// mistake undone.
fn diagnose(
    webhook: &Webhook,
    args: &VerifyArgs,
    payload: &[u8],
    err: &WebhookError,
) -> Option<String> {
    let ignoring_time = |body: &[u8]| {
        webhook
            .verify_parts_ignoring_timestamp(body, &args.id, &args.timestamp, &args.signature)
            .is_ok()
    };
    match err {
        WebhookError::TimestampTooOldError | WebhookError::FutureTimestampError => {
            let skew = args.timestamp.parse::<i64>().ok().map(|ts| {
                let now = args.now.unwrap_or_else(|| chrono::Utc::now().timestamp());
                now - ts
            });
            let signed = if ignoring_time(payload) {
                "the signature itself is right, "
            } else {
                ""
            };
            Some(match skew {
                Some(skew) => format!(
                    "{signed}but the timestamp is {} s {} the clock here (tolerance {} s): check this \
                     machine's clock, or pass --now for a captured delivery",
                    skew.abs(),
                    if skew > 0 { "behind" } else { "ahead of" },
                    args.tolerance
                ),
                None => format!("{signed}but the timestamp is out of tolerance"),
            })
        }
        WebhookError::InvalidSignature => {
            let trimmed = payload.trim_ascii_end();
            if trimmed.len() != payload.len() && ignoring_time(trimmed) {
                return Some(
                    "the body has trailing whitespace or a newline the signed body did not have \
                     (echo adds one): pass the raw bytes, with printf or --payload-file"
                        .to_owned(),
                );
            }
            if !args.secret.starts_with("whsec_") {
                return Some("secrets start with whsec_: check you passed the whole secret".to_owned());
            }
            Some(
                "the signature was made with another secret or over other bytes: use the current \
                 secret (a rotation invalidates the old one at once) and the body exactly as \
                 received, before any JSON parsing"
                    .to_owned(),
            )
        }
        WebhookError::MissingHeader(_) | WebhookError::InvalidHeader(_) => {
            Some("pass the three headers webhook-id, webhook-timestamp and webhook-signature as received".to_owned())
        }
        WebhookError::InvalidTimestamp => Some("webhook-timestamp is Unix seconds, such as 1700000000".to_owned()),
        _ => None,
    }
}
