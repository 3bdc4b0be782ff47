//! How the records JSON cannot hold as they are go into a snapshot: maps keyed
//! by more than a string, and bytes. Used with `#[serde(with = "…")]`.

/// A map whose key is not a string (a user and a key, say), as a list of
/// `[key, value]` pairs in the keys' order, so that one state is always one
/// document (a fixture in version control does not change when re-taken).
pub mod pairs {
    use serde::de::{Deserialize, Deserializer};
    use serde::ser::{Serialize, Serializer};

    pub fn serialize<'a, M, K, V, S>(map: &'a M, serializer: S) -> Result<S::Ok, S::Error>
    where
        &'a M: IntoIterator<Item = (&'a K, &'a V)>,
        K: Serialize + Ord + 'a,
        V: Serialize + 'a,
        S: Serializer,
    {
        let mut pairs: Vec<(&K, &V)> = map.into_iter().collect();
        pairs.sort_unstable_by(|a, b| a.0.cmp(b.0));
        serializer.collect_seq(pairs)
    }

    pub fn deserialize<'de, M, K, V, D>(deserializer: D) -> Result<M, D::Error>
    where
        M: FromIterator<(K, V)>,
        K: Deserialize<'de>,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Vec::<(K, V)>::deserialize(deserializer).map(|pairs| pairs.into_iter().collect())
    }
}

/// A queue kept as a heap, as its items in order (a heap's own layout depends
/// on the order of its pushes).
pub mod heap {
    use std::collections::BinaryHeap;

    use serde::de::{Deserialize, Deserializer};
    use serde::ser::{Serialize, Serializer};

    pub fn serialize<T, S>(heap: &BinaryHeap<T>, serializer: S) -> Result<S::Ok, S::Error>
    where
        T: Serialize + Ord,
        S: Serializer,
    {
        let mut items: Vec<&T> = heap.iter().collect();
        items.sort_unstable();
        serializer.collect_seq(items)
    }

    pub fn deserialize<'de, T, D>(deserializer: D) -> Result<BinaryHeap<T>, D::Error>
    where
        T: Deserialize<'de> + Ord,
        D: Deserializer<'de>,
    {
        Vec::<T>::deserialize(deserializer).map(BinaryHeap::from)
    }
}

/// An uploaded file's bytes, as base64 text (a JSON array of numbers would
/// be four times as long).
pub mod base64_bytes {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::de::{Deserialize, Deserializer, Error};
    use serde::ser::Serializer;

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD.decode(text).map_err(D::Error::custom)
    }
}

/// A webhook body, which is JSON text, as that text.
pub mod text_bytes {
    use bytes::Bytes;
    use serde::de::{Deserialize, Deserializer};
    use serde::ser::{Error, Serializer};

    pub fn serialize<S: Serializer>(bytes: &Bytes, serializer: S) -> Result<S::Ok, S::Error> {
        let text = std::str::from_utf8(bytes).map_err(S::Error::custom)?;
        serializer.serialize_str(text)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
        String::deserialize(deserializer).map(Bytes::from)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use bytes::Bytes;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Record {
        #[serde(with = "super::pairs")]
        by_pair: HashMap<(u32, String), bool>,
        #[serde(with = "super::base64_bytes")]
        file: Vec<u8>,
        #[serde(with = "super::text_bytes")]
        body: Bytes,
    }

    #[test]
    fn records_json_cannot_hold_as_they_are_round_trip() {
        let record = Record {
            by_pair: HashMap::from([((7, "b".into()), true), ((7, "a".into()), false)]),
            file: vec![0x89, b'P', b'N', b'G', 0, 255],
            body: Bytes::from_static(br#"{"type":"generation.completed"}"#),
        };
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(
            json["by_pair"],
            serde_json::json!([[[7, "a"], false], [[7, "b"], true]])
        );
        assert_eq!(json["file"], "iVBORwD/");
        assert_eq!(json["body"], r#"{"type":"generation.completed"}"#);
        assert_eq!(serde_json::from_value::<Record>(json).unwrap(), record);
    }
}
