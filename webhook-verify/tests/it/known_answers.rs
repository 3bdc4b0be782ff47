//! Fixed inputs with signatures computed outside this crate (Python's `hmac`), checked
//! against this crate and, where it can sign them, against `standardwebhooks`.

use webhook_verify::Webhook;

use crate::{MSG_ID, SECRET};

struct Vector {
    secret: &'static str,
    id: &'static str,
    timestamp: i64,
    payload: &'static [u8],
    signature: &'static str,
}

const VECTORS: &[Vector] = &[
    // The spec's example message, minified.
    Vector {
        secret: SECRET,
        id: MSG_ID,
        timestamp: 1_674_087_231,
        payload: br#"{"type":"contact.created","timestamp":"2022-11-03T20:26:10.344522Z","data":{"id":"1f81eb52-5198-4599-803e-771906343485"}}"#,
        signature: "v1,ARw42xaAApl/nxRo+iPGYwSaMQaOwMo2eyH5JBRA+bQ=",
    },
    // The vector the reference implementations publish.
    Vector {
        secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
        id: "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
        timestamp: 1_649_367_553,
        payload: br#"{"email":"test@example.com","username":"test_user"}"#,
        signature: "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=",
    },
    Vector {
        secret: SECRET,
        id: "",
        timestamp: 0,
        payload: b"",
        signature: "v1,VzQ28JIFJf+0udpQ8sGkwkIaWjCGsXxrtnallQa/U+k=",
    },
];

#[test]
fn signatures_match_independently_computed_vectors() {
    for v in VECTORS {
        let wh = Webhook::new(v.secret).unwrap();
        assert_eq!(
            wh.sign(v.id, v.timestamp, v.payload).unwrap(),
            v.signature,
            "{}",
            v.id
        );
    }
}

#[test]
fn standardwebhooks_computes_the_same_vectors() {
    for v in VECTORS {
        let theirs = standardwebhooks::Webhook::new(v.secret).unwrap();
        assert_eq!(
            theirs.sign(v.id, v.timestamp, v.payload).unwrap(),
            v.signature,
            "{}",
            v.id
        );
    }
}

#[test]
fn known_vectors_verify_at_their_own_timestamp() {
    for v in VECTORS {
        let wh = Webhook::new(v.secret).unwrap();
        let ts = v.timestamp.to_string();
        assert_eq!(
            wh.verify_parts_at(v.payload, v.id, &ts, v.signature, v.timestamp),
            Ok(())
        );
    }
}

#[test]
fn non_utf8_body_at_the_lowest_timestamp_signs_like_python() {
    // standardwebhooks refuses non-UTF-8 payloads, so only Python vouches for this one.
    let wh = Webhook::new(SECRET).unwrap();
    let signature = wh
        .sign("msg_binary", i64::MIN, &[0xff, 0x00, 0xfe, 0x80])
        .unwrap();
    assert_eq!(signature, "v1,VMaZWzjk2B2wHIOKbC/zE5MAPze4E9vY+t2AEY2REeU=");
}
