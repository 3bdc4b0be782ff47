//! Verification: headers, the timestamp window, and the signature list.

use std::time::Duration;

use webhook_verify::{HEADER_WEBHOOK_ID, Webhook, WebhookError};

use crate::{BODY, MSG_ID, NOW, webhook};

fn signature_at(timestamp: i64) -> String {
    webhook().sign(MSG_ID, timestamp, BODY).unwrap()
}

/// Verifies `BODY` from `MSG_ID`, sent and received at `NOW`, against a whole
/// `webhook-signature` value.
fn verify_signature_header(header: &str) -> Result<(), WebhookError> {
    webhook().verify_parts_at(BODY, MSG_ID, &NOW.to_string(), header, NOW)
}

fn verify_at(signed_at: i64, now: i64) -> Result<(), WebhookError> {
    webhook().verify_parts_at(
        BODY,
        MSG_ID,
        &signed_at.to_string(),
        &signature_at(signed_at),
        now,
    )
}

#[test]
fn fresh_signature_is_accepted() {
    assert_eq!(verify_at(NOW, NOW), Ok(()));
}

#[test]
fn signature_exactly_at_the_tolerance_either_way_is_accepted() {
    assert_eq!(verify_at(NOW - 300, NOW), Ok(()));
    assert_eq!(verify_at(NOW + 300, NOW), Ok(()));
}

#[test]
fn signature_older_than_tolerance_is_rejected() {
    assert_eq!(
        verify_at(NOW - 301, NOW),
        Err(WebhookError::TimestampTooOldError)
    );
}

#[test]
fn signature_further_in_the_future_than_tolerance_is_rejected() {
    assert_eq!(
        verify_at(NOW + 301, NOW),
        Err(WebhookError::FutureTimestampError)
    );
}

#[test]
fn custom_tolerance_moves_both_edges() {
    let wh = webhook().with_tolerance(Duration::from_secs(10));
    let check = |signed_at: i64| {
        wh.verify_parts_at(
            BODY,
            MSG_ID,
            &signed_at.to_string(),
            &signature_at(signed_at),
            NOW,
        )
    };
    assert_eq!(check(NOW - 10), Ok(()));
    assert_eq!(check(NOW + 10), Ok(()));
    assert_eq!(check(NOW - 11), Err(WebhookError::TimestampTooOldError));
    assert_eq!(check(NOW + 11), Err(WebhookError::FutureTimestampError));
}

#[test]
fn zero_tolerance_accepts_only_the_same_second() {
    let wh = webhook().with_tolerance(Duration::ZERO);
    let sig = signature_at(NOW);
    assert_eq!(
        wh.verify_parts_at(BODY, MSG_ID, &NOW.to_string(), &sig, NOW),
        Ok(())
    );
    assert_eq!(
        wh.verify_parts_at(BODY, MSG_ID, &NOW.to_string(), &sig, NOW + 1),
        Err(WebhookError::TimestampTooOldError)
    );
}

#[test]
fn huge_tolerance_saturates_instead_of_overflowing() {
    let wh = webhook().with_tolerance(Duration::MAX);
    let sig = wh.sign(MSG_ID, i64::MIN, BODY).unwrap();
    assert_eq!(
        wh.verify_parts_at(BODY, MSG_ID, &i64::MIN.to_string(), &sig, i64::MAX),
        Ok(())
    );
}

#[test]
fn stale_signature_passes_when_the_timestamp_is_ignored() {
    let sig = signature_at(1_000);
    assert_eq!(
        webhook().verify_parts_ignoring_timestamp(BODY, MSG_ID, "1000", &sig),
        Ok(())
    );
}

#[test]
fn ignoring_the_timestamp_still_requires_a_valid_one() {
    let sig = signature_at(1_000);
    assert_eq!(
        webhook().verify_parts_ignoring_timestamp(BODY, MSG_ID, "10OO", &sig),
        Err(WebhookError::InvalidTimestamp)
    );
}

#[test]
fn ignoring_the_timestamp_still_checks_the_signature() {
    let sig = signature_at(1_000);
    assert_eq!(
        webhook().verify_parts_ignoring_timestamp(b"tampered", MSG_ID, "1000", &sig),
        Err(WebhookError::InvalidSignature)
    );
}

#[test]
fn system_clock_verification_accepts_a_message_signed_now() {
    let now = crate::system_now();
    let sig = signature_at(now);
    assert_eq!(
        webhook().verify_parts(BODY, MSG_ID, &now.to_string(), &sig),
        Ok(())
    );
}

#[test]
fn malformed_timestamps_are_rejected_as_invalid() {
    let sig = signature_at(NOW);
    for ts in [
        "",
        " ",
        "now",
        "1.5",
        "1e9",
        "0x10",
        "99999999999999999999",
        "١٢٣",
        " 1700000000",
    ] {
        assert_eq!(
            webhook().verify_parts_at(BODY, MSG_ID, ts, &sig, NOW),
            Err(WebhookError::InvalidTimestamp),
            "{ts:?}"
        );
    }
}

#[test]
fn tampered_body_is_rejected() {
    let sig = signature_at(NOW);
    let ts = NOW.to_string();
    assert_eq!(
        webhook().verify_parts_at(b"{}", MSG_ID, &ts, &sig, NOW),
        Err(WebhookError::InvalidSignature)
    );
}

#[test]
fn signature_for_another_message_id_is_rejected() {
    let sig = signature_at(NOW);
    let ts = NOW.to_string();
    assert_eq!(
        webhook().verify_parts_at(BODY, "msg_other", &ts, &sig, NOW),
        Err(WebhookError::InvalidSignature)
    );
}

#[test]
fn signature_made_with_another_secret_is_rejected() {
    let other = Webhook::new(&Webhook::generate_secret()).unwrap();
    let sig = other.sign(MSG_ID, NOW, BODY).unwrap();
    assert_eq!(
        verify_signature_header(&sig),
        Err(WebhookError::InvalidSignature)
    );
}

#[test]
fn any_one_valid_entry_among_several_passes() {
    let valid = signature_at(NOW);
    let header = format!(
        "v1,tFtCZ5RDCPxzWQRWXWPgrCgE2frDBe9gjpbWQxnVfsQ= v1,Mm7xgUVICxZfQ3bgf0h0Dof65L/IFx+PnZvnDWPCX6Q= {valid} v1,9DfC1c3eeOrXB6w/5dIDydLNQaEyww5KalE5jLBZucE="
    );
    assert_eq!(verify_signature_header(&header), Ok(()));
}

#[test]
fn only_the_last_of_several_entries_matching_passes() {
    let valid = signature_at(NOW);
    let other = Webhook::new(&Webhook::generate_secret()).unwrap();
    let header = format!(
        "{} {} {valid}",
        other.sign(MSG_ID, NOW, BODY).unwrap(),
        other.sign(MSG_ID, NOW + 1, BODY).unwrap()
    );
    assert_eq!(verify_signature_header(&header), Ok(()));
}

#[test]
fn entries_decoding_to_the_wrong_length_are_skipped() {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;

    let valid = signature_at(NOW);
    let digest = valid.trim_start_matches("v1,");
    for wrong in [
        STANDARD.encode([7; 31]),
        STANDARD.encode([7; 33]),
        // An ed25519 signature's length, under the HMAC version.
        STANDARD.encode([7; 64]),
        digest.trim_end_matches('=').to_owned(),
        format!("{digest}AAAA"),
    ] {
        let alone = format!("v1,{wrong}");
        assert_eq!(
            verify_signature_header(&alone),
            Err(WebhookError::InvalidSignature),
            "{alone}"
        );
        let before_valid = format!("v1,{wrong} {valid}");
        assert_eq!(
            verify_signature_header(&before_valid),
            Ok(()),
            "{before_valid}"
        );
    }
}

#[test]
fn entries_that_are_not_base64_are_skipped() {
    let valid = signature_at(NOW);
    let digest = valid.trim_start_matches("v1,");
    // The digest in the URL-safe alphabet, with a stray character, and with a
    // tab: each 44 characters long, so only the decoding can tell.
    let url_safe = digest.replace('+', "-").replace('/', "_");
    let with_bang = format!("!{}", &digest[1..]);
    let with_tab = format!("{}\t{}", &digest[..20], &digest[21..]);
    for garbled in [
        url_safe,
        with_bang,
        with_tab,
        "=".repeat(44),
        "é".repeat(22),
    ] {
        let header = format!("v1,{garbled} {valid}");
        assert_eq!(verify_signature_header(&header), Ok(()), "{header}");
        // (The URL-safe form is the digest itself when it has no `+` or `/`.)
        if garbled != digest {
            let alone = format!("v1,{garbled}");
            assert_eq!(
                verify_signature_header(&alone),
                Err(WebhookError::InvalidSignature),
                "{alone}"
            );
        }
    }
}

#[test]
fn only_spaces_separate_entries() {
    let valid = signature_at(NOW);
    for header in [
        format!("v1,AAAA\t{valid}"),
        format!("{valid}\tv1,AAAA"),
        format!("v1,AAAA,{valid}"),
        format!("{valid},v1,AAAA"),
        format!("\t{valid}"),
    ] {
        assert_eq!(
            verify_signature_header(&header),
            Err(WebhookError::InvalidSignature),
            "{header:?}"
        );
    }
    for header in [
        format!(" {valid}"),
        format!("{valid} "),
        format!("v1,AAAA    {valid}"),
    ] {
        assert_eq!(verify_signature_header(&header), Ok(()), "{header:?}");
    }
}

#[test]
fn several_entries_none_valid_are_rejected() {
    let header = "v1,tFtCZ5RDCPxzWQRWXWPgrCgE2frDBe9gjpbWQxnVfsQ= v1,Mm7xgUVICxZfQ3bgf0h0Dof65L/IFx+PnZvnDWPCX6Q=";
    assert_eq!(
        verify_signature_header(header),
        Err(WebhookError::InvalidSignature)
    );
}

#[test]
fn unknown_versions_and_malformed_entries_are_skipped() {
    let valid = signature_at(NOW);
    let digest = valid.trim_start_matches("v1,");
    let header = format!(
        "v2,{digest} v1 ,{digest} garbage v1,!!! v1,{} {valid}",
        &digest[..8]
    );
    assert_eq!(verify_signature_header(&header), Ok(()));
}

#[test]
fn valid_digest_under_an_unknown_version_is_not_accepted() {
    let digest = signature_at(NOW).trim_start_matches("v1,").to_owned();
    for header in [
        format!("v2,{digest}"),
        format!("V1,{digest}"),
        format!("v1a,{digest}"),
        digest.clone(),
    ] {
        assert_eq!(
            verify_signature_header(&header),
            Err(WebhookError::InvalidSignature),
            "{header}"
        );
    }
}

#[test]
fn truncated_or_unpadded_signatures_are_rejected() {
    let valid = signature_at(NOW);
    for header in [
        "v1,".to_owned(),
        valid[..8].to_owned(),
        valid.trim_end_matches('=').to_owned(),
        format!("{valid}="),
        format!("{valid}AAAA"),
        valid[..valid.len() - 4].to_owned(),
    ] {
        assert_eq!(
            verify_signature_header(&header),
            Err(WebhookError::InvalidSignature),
            "{header}"
        );
    }
}

#[test]
fn extra_spaces_between_entries_are_tolerated() {
    let header = format!("  v1,AAAA   {}  ", signature_at(NOW));
    assert_eq!(verify_signature_header(&header), Ok(()));
}

#[test]
fn empty_signature_header_is_rejected() {
    assert_eq!(
        webhook().verify_parts_at(BODY, MSG_ID, &NOW.to_string(), "", NOW),
        Err(WebhookError::InvalidSignature)
    );
}

#[test]
fn timestamp_is_checked_before_the_signature() {
    assert_eq!(
        webhook().verify_parts_at(BODY, MSG_ID, "1", "v1,garbage", NOW),
        Err(WebhookError::TimestampTooOldError)
    );
}

#[test]
fn non_canonical_timestamp_is_read_as_its_number() {
    // The reference crates parse the header and sign the number re-printed, so a
    // leading `+` or zero does not change what was signed.
    let sig = signature_at(NOW);
    for ts in [format!("+{NOW}"), format!("0{NOW}")] {
        assert_eq!(
            webhook().verify_parts_at(BODY, MSG_ID, &ts, &sig, NOW),
            Ok(()),
            "{ts}"
        );
    }
}

#[test]
fn error_messages_name_the_missing_header() {
    assert_eq!(
        WebhookError::MissingHeader(HEADER_WEBHOOK_ID).to_string(),
        "missing header webhook-id"
    );
}

#[cfg(feature = "http")]
mod with_header_map {
    use webhook_verify::{HEADER_WEBHOOK_SIGNATURE, HEADER_WEBHOOK_TIMESTAMP};

    use super::*;
    use crate::headers;

    #[test]
    fn signed_headers_verify() {
        let h = headers(MSG_ID, &NOW.to_string(), &signature_at(NOW));
        assert_eq!(webhook().verify_at(BODY, &h, NOW), Ok(()));
    }

    #[test]
    fn each_missing_header_is_named() {
        for name in [
            HEADER_WEBHOOK_ID,
            HEADER_WEBHOOK_TIMESTAMP,
            HEADER_WEBHOOK_SIGNATURE,
        ] {
            let mut h = headers(MSG_ID, &NOW.to_string(), &signature_at(NOW));
            h.remove(name);
            assert_eq!(
                webhook().verify_at(BODY, &h, NOW),
                Err(WebhookError::MissingHeader(name))
            );
        }
    }

    #[test]
    fn header_names_match_case_insensitively() {
        let mut h = http::HeaderMap::new();
        h.insert("Webhook-Id", MSG_ID.parse().unwrap());
        h.insert("WEBHOOK-TIMESTAMP", NOW.into());
        h.insert("Webhook-Signature", signature_at(NOW).parse().unwrap());
        assert_eq!(webhook().verify_at(BODY, &h, NOW), Ok(()));
    }

    #[test]
    fn repeated_id_or_timestamp_header_is_rejected_as_ambiguous() {
        for name in [HEADER_WEBHOOK_ID, HEADER_WEBHOOK_TIMESTAMP] {
            let mut h = headers(MSG_ID, &NOW.to_string(), &signature_at(NOW));
            let value = h.get(name).unwrap().clone();
            h.append(name, value);
            assert_eq!(
                webhook().verify_at(BODY, &h, NOW),
                Err(WebhookError::InvalidHeader(name))
            );
        }
    }

    #[test]
    fn missing_and_repeated_headers_are_reported_id_then_signature_then_timestamp() {
        let sig = signature_at(NOW);
        let ts = NOW.to_string();
        let mut no_id_no_signature = headers(MSG_ID, &ts, &sig);
        no_id_no_signature.remove(HEADER_WEBHOOK_ID);
        no_id_no_signature.remove(HEADER_WEBHOOK_SIGNATURE);
        assert_eq!(
            webhook().verify_at(BODY, &no_id_no_signature, NOW),
            Err(WebhookError::MissingHeader(HEADER_WEBHOOK_ID))
        );

        let mut repeated_id_no_signature = headers(MSG_ID, &ts, &sig);
        repeated_id_no_signature.append(HEADER_WEBHOOK_ID, MSG_ID.parse().unwrap());
        repeated_id_no_signature.remove(HEADER_WEBHOOK_SIGNATURE);
        assert_eq!(
            webhook().verify_at(BODY, &repeated_id_no_signature, NOW),
            Err(WebhookError::InvalidHeader(HEADER_WEBHOOK_ID))
        );

        let mut no_signature_repeated_timestamp = headers(MSG_ID, &ts, &sig);
        no_signature_repeated_timestamp.remove(HEADER_WEBHOOK_SIGNATURE);
        no_signature_repeated_timestamp.append(HEADER_WEBHOOK_TIMESTAMP, ts.parse().unwrap());
        assert_eq!(
            webhook().verify_at(BODY, &no_signature_repeated_timestamp, NOW),
            Err(WebhookError::MissingHeader(HEADER_WEBHOOK_SIGNATURE))
        );

        let mut no_timestamp_bad_signature = headers(MSG_ID, &ts, "v1,AAAA");
        no_timestamp_bad_signature.remove(HEADER_WEBHOOK_TIMESTAMP);
        assert_eq!(
            webhook().verify_at(BODY, &no_timestamp_bad_signature, NOW),
            Err(WebhookError::MissingHeader(HEADER_WEBHOOK_TIMESTAMP))
        );
    }

    #[test]
    fn webhook_headers_are_found_among_many_others() {
        let mut h = http::HeaderMap::new();
        for (name, value) in [
            ("host", "hooks.example.com"),
            ("content-type", "application/json"),
            ("x-webhook-id", "msg_other"),
            ("webhook-idx", "msg_other"),
            ("webhook-i", "msg_other"),
        ] {
            h.insert(name, value.parse().unwrap());
        }
        h.insert(HEADER_WEBHOOK_SIGNATURE, signature_at(NOW).parse().unwrap());
        h.insert("svix-signature", "v1,AAAA".parse().unwrap());
        h.insert(HEADER_WEBHOOK_TIMESTAMP, NOW.into());
        h.insert("user-agent", "Svix-Webhooks/1.62.0".parse().unwrap());
        h.insert(HEADER_WEBHOOK_ID, MSG_ID.parse().unwrap());
        assert_eq!(webhook().verify_at(BODY, &h, NOW), Ok(()));
    }

    #[test]
    fn valid_entry_in_the_first_of_repeated_signature_headers_counts() {
        let mut h = headers(MSG_ID, &NOW.to_string(), &signature_at(NOW));
        h.append(HEADER_WEBHOOK_SIGNATURE, "v1,AAAA".parse().unwrap());
        h.append(HEADER_WEBHOOK_SIGNATURE, "v2,AAAA".parse().unwrap());
        assert_eq!(webhook().verify_at(BODY, &h, NOW), Ok(()));
    }

    #[test]
    fn signature_entries_split_over_repeated_headers_all_count() {
        let mut h = headers(MSG_ID, &NOW.to_string(), "v1,AAAA");
        h.append(HEADER_WEBHOOK_SIGNATURE, signature_at(NOW).parse().unwrap());
        assert_eq!(webhook().verify_at(BODY, &h, NOW), Ok(()));
    }

    #[test]
    fn old_headers_are_rejected_but_pass_when_the_timestamp_is_ignored() {
        let h = headers(MSG_ID, "1000", &signature_at(1_000));
        assert_eq!(
            webhook().verify(BODY, &h),
            Err(WebhookError::TimestampTooOldError)
        );
        assert_eq!(webhook().verify_ignoring_timestamp(BODY, &h), Ok(()));
    }

    #[test]
    fn message_id_with_non_ascii_bytes_verifies_byte_for_byte() {
        // HeaderValue::to_str refuses such bytes; the signature covers them all the same.
        let id = "msg_ünïcødé";
        let sig = webhook().sign(id, NOW, BODY).unwrap();
        let mut h = headers(MSG_ID, &NOW.to_string(), &sig);
        h.insert(
            HEADER_WEBHOOK_ID,
            http::HeaderValue::from_bytes(id.as_bytes()).unwrap(),
        );
        assert_eq!(webhook().verify_at(BODY, &h, NOW), Ok(()));
    }

    #[test]
    fn non_ascii_timestamp_header_is_invalid() {
        let mut h = headers(MSG_ID, &NOW.to_string(), &signature_at(NOW));
        h.insert(
            HEADER_WEBHOOK_TIMESTAMP,
            http::HeaderValue::from_bytes(b"17\xff").unwrap(),
        );
        assert_eq!(
            webhook().verify_at(BODY, &h, NOW),
            Err(WebhookError::InvalidTimestamp)
        );
    }
}
