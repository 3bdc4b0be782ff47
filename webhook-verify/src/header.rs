//! Reading the three header values, byte by byte and without allocating.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// Base64 length of the longest signature we understand (a 64-byte ed25519
/// signature); longer entries are skipped before any decoding work.
const MAX_ENCODED_SIGNATURE: usize = 88;

/// What `decode_slice` asks for when given `MAX_ENCODED_SIGNATURE` characters
/// (its estimate rounds up to whole 4-character groups).
const DECODE_BUFFER: usize = MAX_ENCODED_SIGNATURE / 4 * 3;

/// A signature scheme named by the part of an entry before the comma.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// `v1`: HMAC-SHA256.
    V1,
    /// `v1a`: ed25519.
    #[cfg_attr(not(feature = "ed25519"), allow(dead_code))]
    V1a,
}

/// The `(scheme, base64 signature)` entries of one `webhook-signature` value.
///
/// The spec separates entries by single spaces; runs of spaces are tolerated. Entries
/// without a comma and versions other than `v1` and `v1a` are skipped, so a sender may
/// add schemes this crate does not know yet.
pub(crate) fn entries(value: &[u8]) -> impl Iterator<Item = (Scheme, &[u8])> {
    value.split(|&b| b == b' ').filter_map(|entry| {
        let comma = entry.iter().position(|&b| b == b',')?;
        let (version, rest) = entry.split_at(comma);
        let signature = rest.get(1..)?;
        let scheme = match version {
            b"v1" => Scheme::V1,
            b"v1a" => Scheme::V1a,
            _ => return None,
        };
        Some((scheme, signature))
    })
}

/// A decoded signature living on the stack.
pub(crate) struct DecodedSignature {
    buf: [u8; DECODE_BUFFER],
    len: usize,
}

impl DecodedSignature {
    /// Decodes standard, padded base64 (what the spec's senders write). Anything
    /// malformed or too long for any scheme gives `None`: such an entry cannot match,
    /// and a garbled entry must not stop the others from being tried.
    pub(crate) fn decode(encoded: &[u8]) -> Option<Self> {
        if encoded.len() > MAX_ENCODED_SIGNATURE {
            return None;
        }
        let mut buf = [0u8; DECODE_BUFFER];
        let len = STANDARD.decode_slice(encoded, &mut buf).ok()?;
        Some(Self { buf, len })
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }
}

/// Parses `webhook-timestamp`. The value is re-printed canonically before signing, as
/// the reference implementations do.
pub(crate) fn parse_timestamp(value: &[u8]) -> Option<i64> {
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// Space for the longest `i64`: `-9223372036854775808`.
pub(crate) const TIMESTAMP_BUFFER: usize = 20;

/// Prints `value` in decimal into `buf` and returns the digits, so the hot path does
/// not go through `fmt` or allocate a `String`.
pub(crate) fn format_timestamp(value: i64, buf: &mut [u8; TIMESTAMP_BUFFER]) -> &[u8] {
    // unsigned_abs is defined for i64::MIN, where negation would overflow.
    let mut rest = value.unsigned_abs();
    let mut start = buf.len();
    for slot in buf.iter_mut().rev() {
        // `rest % 10` is below 10, so the narrowing cannot lose anything.
        *slot = b'0' + (rest % 10) as u8;
        start -= 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if value < 0
        && let Some(sign) = start.checked_sub(1)
        && let Some(slot) = buf.get_mut(sign)
    {
        *slot = b'-';
        start = sign;
    }
    buf.get(start..).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_print_like_display_at_the_extremes() {
        for value in [0, 1, -1, 9, 10, -10, i64::MAX, i64::MIN, 1_700_000_000] {
            let mut buf = [0; TIMESTAMP_BUFFER];
            assert_eq!(
                format_timestamp(value, &mut buf),
                value.to_string().as_bytes()
            );
        }
    }

    #[test]
    fn entries_skip_unknown_versions_and_malformed_entries() {
        let found: Vec<_> = entries(b"v2,xx  v1,aa nocomma v1a,bb v1, ,").collect();
        assert_eq!(
            found,
            vec![
                (Scheme::V1, &b"aa"[..]),
                (Scheme::V1a, &b"bb"[..]),
                (Scheme::V1, &b""[..]),
            ]
        );
    }

    #[test]
    fn longest_signature_fits_the_decode_buffer() {
        let encoded = STANDARD.encode([0xA5; 66]);
        assert_eq!(encoded.len(), MAX_ENCODED_SIGNATURE);
        let decoded = DecodedSignature::decode(encoded.as_bytes());
        assert_eq!(decoded.map(|d| d.as_bytes().len()), Some(66));
    }
}
