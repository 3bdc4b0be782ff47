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
    let (facts, hint) = diagnose(&webhook, &args, &payload, &err);
    let code = match err {
        WebhookError::InvalidSignature => "INVALID_SIGNATURE",
        WebhookError::TimestampTooOldError | WebhookError::FutureTimestampError => {
            "TIMESTAMP_OUT_OF_TOLERANCE"
        }
        WebhookError::InvalidTimestamp => "INVALID_TIMESTAMP",
        _ => "INVALID_WEBHOOK",
    };
    // The code says the delivery is invalid; the message says how.
    let mut failure = Failure::new(Exit::Other, code, err.to_string());
    failure.facts = facts;
    failure.hint = hint;
    Err(failure.into())
}

/// What the error leaves out, and the likely cause of a failed verification as
/// what to do, found by retrying with each usual mistake undone.
fn diagnose(
    webhook: &Webhook,
    args: &VerifyArgs,
    payload: &[u8],
    err: &WebhookError,
) -> (Vec<String>, Option<String>) {
    let ignoring_time = |body: &[u8]| {
        webhook
            .verify_parts_ignoring_timestamp(body, &args.id, &args.timestamp, &args.signature)
            .is_ok()
    };
    let hint = |text: &str| Some(text.to_owned());
    match err {
        WebhookError::TimestampTooOldError | WebhookError::FutureTimestampError => {
            let mut facts = Vec::new();
            if let Ok(timestamp) = args.timestamp.parse::<i64>() {
                let now = args.now.unwrap_or_else(|| chrono::Utc::now().timestamp());
                let skew = now - timestamp;
                facts.push(format!(
                    "{} s {} the clock here, tolerance {} s",
                    skew.abs(),
                    if skew > 0 { "behind" } else { "ahead of" },
                    args.tolerance
                ));
            }
            let clock = "check this machine's clock, or pass --now with the time of a captured \
                         delivery";
            if ignoring_time(payload) {
                facts.push("the signature itself is right".to_owned());
                (facts, hint(clock))
            } else {
                facts.push("the signature does not match either".to_owned());
                let (why, signature) =
                    diagnose(webhook, args, payload, &WebhookError::InvalidSignature);
                facts.extend(why);
                let then = signature.map_or_else(String::new, |what| format!("; then {what}"));
                (facts, Some(format!("{clock}{then}")))
            }
        }
        WebhookError::InvalidSignature => {
            let trimmed = payload.trim_ascii_end();
            if trimmed.len() != payload.len() && ignoring_time(trimmed) {
                return (
                    vec!["the body matches without its trailing whitespace or newline".to_owned()],
                    hint(
                        "pass the raw bytes of the body, with printf or --payload-file (echo adds a newline)",
                    ),
                );
            }
            let what = if args.secret.starts_with("whsec_") {
                "use the current secret (a rotation invalidates the old one at once) and the body \
                 exactly as received, before any JSON parsing"
            } else {
                "pass the whole secret, which starts with whsec_"
            };
            (Vec::new(), hint(what))
        }
        WebhookError::MissingHeader(_) | WebhookError::InvalidHeader(_) => (
            Vec::new(),
            hint(
                "pass the three headers webhook-id, webhook-timestamp and webhook-signature as received",
            ),
        ),
        WebhookError::InvalidTimestamp => (
            Vec::new(),
            hint("pass webhook-timestamp as Unix seconds, such as 1700000000"),
        ),
        _ => (Vec::new(), None),
    }
}
