//! Reading the three header values without allocating.

#[cfg(feature = "http")]
use http::HeaderValue;

#[cfg(feature = "http")]
use crate::{HEADER_WEBHOOK_ID, HEADER_WEBHOOK_SIGNATURE, HEADER_WEBHOOK_TIMESTAMP, WebhookError};

/// The three webhook headers of one request.
#[cfg(feature = "http")]
pub(crate) struct Found<'h> {
    pub(crate) id: &'h [u8],
    pub(crate) timestamp: &'h [u8],
    pub(crate) signatures: Signatures<'h>,
}

/// Every value of `webhook-signature`: the header is a list, and a proxy may split it.
#[cfg(feature = "http")]
pub(crate) enum Signatures<'h> {
    One(&'h [u8]),
    /// Rare enough to look the values up again rather than keep them.
    Many(http::header::GetAll<'h, HeaderValue>),
}

/// The values seen of one header name.
#[cfg(feature = "http")]
#[derive(Default)]
struct Seen<'h> {
    first: Option<&'h HeaderValue>,
    repeated: bool,
}

#[cfg(feature = "http")]
impl<'h> Seen<'h> {
    fn add(&mut self, value: &'h HeaderValue) {
        self.repeated |= self.first.is_some();
        self.first.get_or_insert(value);
    }

    /// The id and timestamp are signed, so a second value would leave it unclear
    /// which one the signature covers (and a proxy might pick the other one).
    fn single(&self, name: &'static str) -> Result<&'h [u8], WebhookError> {
        match self.first {
            None => Err(WebhookError::MissingHeader(name)),
            Some(_) if self.repeated => Err(WebhookError::InvalidHeader(name)),
            Some(value) => Ok(value.as_bytes()),
        }
    }
}

/// Finds the three headers in one pass over the map. Comparing each name's length
/// and bytes is cheaper than the three hashed lookups `get_all` would make (an FNV
/// hash of every name, byte by byte), even with the dozen or so headers a proxied
/// request carries. Errors come in the order id, signature, timestamp.
#[cfg(feature = "http")]
pub(crate) fn find(headers: &http::HeaderMap) -> Result<Found<'_>, WebhookError> {
    let (mut id, mut timestamp, mut signature) =
        (Seen::default(), Seen::default(), Seen::default());
    for (name, value) in headers {
        match name.as_str() {
            HEADER_WEBHOOK_ID => id.add(value),
            HEADER_WEBHOOK_TIMESTAMP => timestamp.add(value),
            HEADER_WEBHOOK_SIGNATURE => signature.add(value),
            _ => {}
        }
    }
    let id = id.single(HEADER_WEBHOOK_ID)?;
    let signatures = match signature {
        Seen { first: None, .. } => {
            return Err(WebhookError::MissingHeader(HEADER_WEBHOOK_SIGNATURE));
        }
        Seen { repeated: true, .. } => Signatures::Many(headers.get_all(HEADER_WEBHOOK_SIGNATURE)),
        Seen {
            first: Some(value), ..
        } => Signatures::One(value.as_bytes()),
    };
    let timestamp = timestamp.single(HEADER_WEBHOOK_TIMESTAMP)?;
    Ok(Found {
        id,
        timestamp,
        signatures,
    })
}

/// A signature scheme named by the part of an entry before the comma.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// `v1`: HMAC-SHA256.
    V1,
    /// `v1a`: ed25519.
    #[cfg_attr(not(feature = "ed25519"), allow(dead_code))]
    V1a,
}

impl Scheme {
    /// The signature of an entry of this scheme: what follows its version and comma.
    /// (One literal per arm keeps the comparison inline instead of a `memcmp` call.)
    fn signature_in(self, entry: &[u8]) -> Option<&[u8]> {
        match self {
            Self::V1 => entry.strip_prefix(b"v1,"),
            Self::V1a => entry.strip_prefix(b"v1a,"),
        }
    }
}

/// The base64 signatures of one scheme in one `webhook-signature` value.
///
/// The spec separates entries by single spaces; runs of spaces are tolerated. Entries
/// of other versions, and text without a version, are skipped, so a sender may add
/// schemes this crate does not know yet.
pub(crate) fn signatures(value: &[u8], scheme: Scheme) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(value);
    std::iter::from_fn(move || {
        loop {
            let current = rest?;
            let entry = match find_space(current) {
                Some(at) => {
                    let (entry, space_and_after) = current.split_at(at);
                    rest = space_and_after.get(1..);
                    entry
                }
                None => {
                    rest = None;
                    current
                }
            };
            if let Some(signature) = scheme.signature_in(entry) {
                return Some(signature);
            }
        }
    })
}

/// The index of the first space, found eight bytes at a time: a byte-by-byte search
/// (what `split` does) costs about as much as the rest of parsing the header, since
/// a `v1` entry is 47 bytes long.
fn find_space(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH_BITS: u64 = u64::from_ne_bytes([0x80; 8]);
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    let (words, tail) = bytes.as_chunks::<8>();
    for (i, word) in words.iter().enumerate() {
        // A byte of `x` is zero where the text has a space. `(x - ONES) & !x` sets the
        // high bit of every zero byte and, through the borrow, possibly of bytes above
        // one, never below: the lowest flag is always a real space.
        let x = u64::from_le_bytes(*word) ^ SPACES;
        let flags = x.wrapping_sub(ONES) & !x & HIGH_BITS;
        if flags != 0 {
            // At most 7, from a u64's 64 bits.
            let within = (flags.trailing_zeros() / 8) as usize;
            return Some(i * 8 + within);
        }
    }
    let within = tail.iter().position(|&b| b == b' ')?;
    Some(words.len() * 8 + within)
}

/// Each character of the standard base64 alphabet mapped to its six bits; any other
/// byte maps to bit 40, which the shifts assembling a group of four characters keep
/// above the group's 24 bits, so one test at the end covers every character.
static SEXTETS: [u64; 256] = {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut table = [1 << 40; 256];
    let mut i = 0;
    while i < alphabet.len() {
        table[alphabet[i] as usize] = i as u64;
        i += 1;
    }
    table
};

/// Decodes a `v1` entry, the padded base64 of a 32-byte MAC: 43 characters of the
/// alphabet, the last with its two unused bits zero, then one `=`. It accepts exactly
/// what `decode_signature::<32>` does (a test holds them together), without a branch
/// per character: `decode_slice`'s general loop costs 1-2 % more of a whole 1 KiB
/// verification, which is all the margin there is.
pub(crate) fn decode_mac(encoded: &[u8]) -> Option<[u8; 32]> {
    let encoded: &[u8; 44] = encoded.try_into().ok()?;
    let (groups, _) = encoded.as_chunks::<4>();
    let (&[a, b, c, pad], full) = groups.split_last()?;
    let mut mac = [0u8; 32];
    let mut seen = 0u64;
    let (triples, _) = mac.as_chunks_mut::<3>();
    for (group, triple) in full.iter().zip(triples) {
        let [a, b, c, d] = group.map(|char| SEXTETS[usize::from(char)]);
        let bits = a << 18 | b << 12 | c << 6 | d;
        seen |= bits;
        let [.., high, middle, low] = bits.to_be_bytes();
        *triple = [high, middle, low];
    }
    let [a, b, c] = [a, b, c].map(|char| SEXTETS[usize::from(char)]);
    let bits = a << 18 | b << 12 | c << 6;
    seen |= bits;
    let [.., high, middle, _] = bits.to_be_bytes();
    mac[30] = high;
    mac[31] = middle;
    let in_alphabet = seen >> 24 == 0;
    let canonical = pad == b'=' && c & 0b11 == 0;
    (in_alphabet && canonical).then_some(mac)
}

/// Decodes one signature of exactly `N` bytes into a stack array: a `v1a` signature
/// (64 bytes), and in tests the reference that `decode_mac` is held to. Signatures are
/// standard, padded base64, as the spec's senders write them, so only one encoded
/// length can give `N` bytes and any other is refused before decoding. Anything else
/// that is malformed gives `None` too: such an entry cannot match, and a garbled entry
/// must not stop the others from being tried.
#[cfg(any(feature = "ed25519", test))]
pub(crate) fn decode_signature<const N: usize>(encoded: &[u8]) -> Option<[u8; N]> {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;

    if encoded.len() != N.div_ceil(3) * 4 {
        return None;
    }
    let mut decoded = [0u8; N];
    // With the length fixed, `decode_slice` refuses (never panics on) input that
    // would need more than `N` bytes, and the padding may still make it shorter.
    let len = STANDARD.decode_slice(encoded, &mut decoded).ok()?;
    (len == N).then_some(decoded)
}

/// A `webhook-timestamp` value read as a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timestamp {
    pub(crate) seconds: i64,
    /// The text is exactly what `seconds` prints as (no `+`, no leading zero, not
    /// `-0`), so it can be signed as received instead of being printed again.
    pub(crate) canonical: bool,
}

/// Parses `webhook-timestamp` as `i64::from_str` does: an optional sign, then ASCII
/// digits, refused when it does not fit. The reference implementations parse the
/// value and sign the number re-printed, so `+17…` and `017…` sign as `17…`.
///
/// Done by hand because it also tells whether the text is canonical, so that the
/// header every sender writes is signed as received rather than printed again, and
/// because it needs neither UTF-8 validation nor an overflow check on every digit.
pub(crate) fn parse_timestamp(value: &[u8]) -> Option<Timestamp> {
    let (negative, digits) = match value {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, value),
    };
    let (&first, _) = digits.split_first()?;
    // Nineteen digits stay below 10^19 < 2^64, so only longer text (leading zeros, or
    // out of range) needs the overflow checks, which would otherwise put a
    // multiplication with overflow test in the path of every digit.
    const UNCHECKED_DIGITS: usize = 19;
    let mut magnitude: u64 = 0;
    for (i, &byte) in digits.iter().enumerate() {
        let digit = u64::from(byte.wrapping_sub(b'0'));
        if digit > 9 {
            return None;
        }
        magnitude = if i < UNCHECKED_DIGITS {
            magnitude * 10 + digit
        } else {
            magnitude.checked_mul(10)?.checked_add(digit)?
        };
    }
    // i64::MIN's magnitude is one more than i64::MAX, so the sign decides the range.
    let seconds = if negative {
        0i64.checked_sub_unsigned(magnitude)?
    } else {
        i64::try_from(magnitude).ok()?
    };
    let canonical =
        value.first() != Some(&b'+') && (first != b'0' || (digits.len() == 1 && !negative));
    Some(Timestamp { seconds, canonical })
}

impl Timestamp {
    /// The text to sign: the header's own digits when they are canonical (as every
    /// sender writes them), or else the number printed into `buf`.
    pub(crate) fn signed_text<'a>(
        self,
        received: &'a [u8],
        buf: &'a mut [u8; TIMESTAMP_BUFFER],
    ) -> &'a [u8] {
        if self.canonical {
            received
        } else {
            format_timestamp(self.seconds, buf)
        }
    }
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
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;

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
    fn spaces_are_found_at_every_position() {
        for len in 0..40 {
            let no_space = vec![b'A'; len];
            assert_eq!(find_space(&no_space), None);
            for at in 0..len {
                // Bytes that could confuse the word trick: 0x21 and 0x1F either side
                // of a space, 0x00 and 0xA0 one bit away from it.
                for filler in [b'A', b'!', 0x00, 0xA0, 0x1F] {
                    let mut text = vec![filler; len];
                    text[at] = b' ';
                    assert_eq!(find_space(&text), Some(at), "{len} {at} {filler}");
                    // A later space must not hide the first.
                    if let Some(later) = text.get_mut(at + 1..) {
                        later.fill(b' ');
                    }
                    assert_eq!(find_space(&text), Some(at), "{len} {at} {filler}");
                }
            }
        }
    }

    #[test]
    fn signatures_skip_unknown_versions_and_malformed_entries() {
        let value = b"v2,xx  v1,aa nocomma v1a,bb v1, , v1,,cc v1a";
        let v1: Vec<_> = signatures(value, Scheme::V1).collect();
        assert_eq!(v1, vec![&b"aa"[..], &b""[..], &b",cc"[..]]);
        let v1a: Vec<_> = signatures(value, Scheme::V1a).collect();
        assert_eq!(v1a, vec![&b"bb"[..]]);
    }

    #[test]
    fn signatures_decode_only_at_their_exact_length() {
        let mac = STANDARD.encode([0xA5; 32]);
        assert_eq!(decode_signature::<32>(mac.as_bytes()), Some([0xA5; 32]));
        let signature = STANDARD.encode([0x5A; 64]);
        assert_eq!(
            decode_signature::<64>(signature.as_bytes()),
            Some([0x5A; 64])
        );

        let unpadded_33 = STANDARD.encode([1; 33]);
        for wrong in [
            STANDARD.encode([1; 31]),
            STANDARD.encode([1; 30]),
            mac.trim_end_matches('=').to_owned(),
            format!("{mac}="),
            unpadded_33[..44].to_owned(),
            "!".repeat(44),
            String::new(),
        ] {
            assert_eq!(decode_signature::<32>(wrong.as_bytes()), None, "{wrong}");
        }
        assert_eq!(decode_signature::<64>(mac.as_bytes()), None);
    }

    /// Bytes that matter to a base64 decoder: some of the alphabet (with each value
    /// of the low two bits), padding, and bytes just outside it or outside ASCII.
    const DECODER_BYTES: &[u8] = b"AQgwBCDz09+/=-_ .,@[`{\x7f\x80\xff\x00";

    #[test]
    fn mac_decoder_reads_what_the_encoder_writes() {
        for seed in 0..=255u8 {
            let mac: [u8; 32] =
                std::array::from_fn(|i| seed.wrapping_mul(31).wrapping_add(i as u8 * 7));
            assert_eq!(decode_mac(STANDARD.encode(mac).as_bytes()), Some(mac));
        }
    }

    proptest::proptest! {
        // Each case is a few microseconds, so many of them stay quick.
        #![proptest_config(proptest::test_runner::Config::with_cases(10_000))]

        #[test]
        fn mac_decoder_agrees_with_the_generic_one(
            picks in proptest::collection::vec(0..DECODER_BYTES.len(), 42..47),
        ) {
            let encoded: Vec<u8> = picks.iter().map(|&i| DECODER_BYTES[i]).collect();
            proptest::prop_assert_eq!(decode_mac(&encoded), decode_signature::<32>(&encoded));
        }

        #[test]
        fn mac_decoder_agrees_on_a_mac_with_one_byte_changed(
            mac in proptest::array::uniform32(proptest::num::u8::ANY),
            at in 0..44usize,
            byte in proptest::num::u8::ANY,
        ) {
            let mut encoded = STANDARD.encode(mac).into_bytes();
            encoded[at] = byte;
            proptest::prop_assert_eq!(decode_mac(&encoded), decode_signature::<32>(&encoded));
        }

        #[test]
        fn mac_decoder_agrees_on_every_last_character(
            mac in proptest::array::uniform32(proptest::num::u8::ANY),
            last in proptest::num::u8::ANY,
        ) {
            let mut encoded = STANDARD.encode(mac).into_bytes();
            encoded[42] = last;
            proptest::prop_assert_eq!(decode_mac(&encoded), decode_signature::<32>(&encoded));
        }

        #[test]
        fn any_text_parses_like_i64_from_str(text in "[+-]{0,2}[0-9]{0,22}|\\PC{0,24}") {
            let parsed = parse_timestamp(text.as_bytes());
            proptest::prop_assert_eq!(parsed.map(|t| t.seconds), text.parse::<i64>().ok());
            if let Some(parsed) = parsed {
                let mut buf = [0; TIMESTAMP_BUFFER];
                let printed = parsed.seconds.to_string();
                proptest::prop_assert_eq!(parsed.signed_text(text.as_bytes(), &mut buf), printed.as_bytes());
            }
        }
    }

    #[test]
    fn timestamps_parse_like_i64_from_str() {
        let max_plus_one = (i128::from(i64::MAX) + 1).to_string();
        let min_minus_one = (i128::from(i64::MIN) - 1).to_string();
        for text in [
            "",
            "+",
            "-",
            "0",
            "-0",
            "+0",
            "00",
            "7",
            "-7",
            "+7",
            "07",
            "-07",
            "1700000000",
            "01700000000",
            "+1700000000",
            "-1700000000",
            "9223372036854775807",
            "-9223372036854775808",
            "00000000000000000000000000009",
            "99999999999999999999",
            "18446744073709551616",
            "1.5",
            "1e9",
            " 1",
            "1 ",
            "--1",
            "+-1",
            "0x10",
            "١٢٣",
            &max_plus_one,
            &min_minus_one,
        ] {
            let expected = text.parse::<i64>().ok();
            let parsed = parse_timestamp(text.as_bytes());
            assert_eq!(parsed.map(|t| t.seconds), expected, "{text:?}");
            if let (Some(parsed), Some(expected)) = (parsed, expected) {
                assert_eq!(parsed.canonical, text == expected.to_string(), "{text:?}");
                let mut buf = [0; TIMESTAMP_BUFFER];
                assert_eq!(
                    parsed.signed_text(text.as_bytes(), &mut buf),
                    expected.to_string().as_bytes(),
                    "{text:?}"
                );
            }
        }
    }
}
