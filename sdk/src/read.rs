//! Reading answers: the one policy for every area.
//!
//! An answer is refused only when a field the contract requires is missing or has
//! the wrong type. The contract requires only what a client may rely on (the
//! fields the service document guarantees, or in the records it leaves to the
//! contract, their identity and purpose); everything else is optional, every
//! enumeration is open (`open_enum.rs`), and members nobody knows are ignored.
//!
//! A field the contract only designs may still come with another shape from a
//! service that designed it differently. Such a field is dropped, as if it had
//! not been sent, and the answer read again: the call succeeds without it, unless
//! the contract requires it, in which case the first mismatch is the error.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// How many mismatched fields one answer may shed before it is refused; a bound,
/// so that a pathological body costs a bounded number of passes.
const MAX_DROPPED: usize = 64;

/// Reads `body` as `T`, dropping optional fields that do not fit.
pub(crate) fn tolerant<T: DeserializeOwned>(body: &[u8]) -> Result<T, serde_json::Error> {
    let mut value: Value = serde_json::from_slice(body)?;
    let mut first = None;
    for _ in 0..=MAX_DROPPED {
        let error = match serde_path_to_error::deserialize::<_, T>(&value) {
            Ok(read) => return Ok(read),
            Err(error) => error,
        };
        let dropped = drop_field(&mut value, error.path());
        let path = error.path().to_string();
        let inner = error.into_inner();
        if !dropped {
            return Err(first.unwrap_or(inner));
        }
        tracing::debug!(field = %path, error = %inner, "dropped a field that does not fit the contract");
        first.get_or_insert(serde::de::Error::custom(format!("{path}: {inner}")));
    }
    Err(first.unwrap_or_else(|| serde::de::Error::custom("too many fields do not fit")))
}

/// Removes the innermost member named on `path` (an array element is never
/// removed: its list is, as a member). False when the path names no member.
fn drop_field(value: &mut Value, path: &serde_path_to_error::Path) -> bool {
    use serde_path_to_error::Segment;

    let segments: Vec<&Segment> = path.iter().collect();
    let Some(last_key) = segments
        .iter()
        .rposition(|segment| matches!(segment, Segment::Map { .. }))
    else {
        return false;
    };
    let mut cursor = value;
    for segment in &segments[..last_key] {
        cursor = match (segment, cursor) {
            (Segment::Map { key }, Value::Object(map)) => match map.get_mut(key) {
                Some(next) => next,
                None => return false,
            },
            (Segment::Seq { index }, Value::Array(items)) => match items.get_mut(*index) {
                Some(next) => next,
                None => return false,
            },
            _ => return false,
        };
    }
    match (segments[last_key], cursor) {
        (Segment::Map { key }, Value::Object(map)) => map.remove(key).is_some(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        required: u32,
        #[serde(default)]
        optional: Option<u32>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        id: String,
        #[serde(default)]
        note: Option<String>,
        #[serde(default)]
        inner: Option<Inner>,
        #[serde(default)]
        items: Vec<Inner>,
    }

    #[test]
    fn an_optional_field_of_another_shape_is_dropped() {
        let read: Outer =
            tolerant(br#"{"id": "a", "note": 5, "inner": {"required": 1, "optional": "x"}}"#)
                .unwrap();
        assert_eq!(read.note, None);
        assert_eq!(
            read.inner,
            Some(Inner {
                required: 1,
                optional: None
            })
        );
    }

    #[test]
    fn an_optional_object_missing_its_own_required_field_is_dropped_whole() {
        let read: Outer = tolerant(br#"{"id": "a", "inner": {"optional": 2}}"#).unwrap();
        assert_eq!(read.inner, None);
    }

    #[test]
    fn a_required_field_of_the_wrong_type_is_refused_with_its_path() {
        let err = tolerant::<Outer>(br#"{"id": 7, "note": "x"}"#).unwrap_err();
        assert!(err.to_string().starts_with("id: invalid type"), "{err}");
    }

    #[test]
    fn a_missing_required_field_is_refused() {
        let err = tolerant::<Outer>(br#"{"note": "x"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `id`"), "{err}");
    }

    #[test]
    fn a_bad_list_element_drops_the_list_it_belongs_to() {
        let read: Outer =
            tolerant(br#"{"id": "a", "items": [{"required": 1}, {"required": "x"}]}"#).unwrap();
        assert!(read.items.is_empty());
    }

    #[test]
    fn unknown_members_are_ignored_and_bodies_that_are_not_json_are_refused() {
        let read: Outer = tolerant(br#"{"id": "a", "brandNew": {"x": 1}}"#).unwrap();
        assert_eq!(read.id, "a");
        assert!(tolerant::<Outer>(b"<html>").is_err());
    }
}
