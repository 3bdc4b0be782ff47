//! String enums that keep values they do not know.
//!
//! The service document leaves room for more values than it lists ("any status
//! values beyond these four", "other values of media_type", the codes behind
//! GATEWAY_* and BILLING_*: not shown), so every enumeration of the contract is
//! open: a value this version does not know becomes `Other(text)`, shown as sent,
//! instead of a decoding error. The generator puts these enums in place of the
//! contract's (openapi/src/bin/generate.rs), so the generated types are open too,
//! and a test ties each one's `KNOWN` list to the contract.

macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $text:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$variant_meta])* $variant, )*
            /// A value this version does not know, as sent.
            Other(String),
        }

        impl $name {
            /// Every value this version names, as the service writes them.
            pub const KNOWN: &'static [&'static str] = &[$($text),*];

            /// The value as the service writes it.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $text, )*
                    Self::Other(text) => text,
                }
            }

            /// Whether this version names the value (it is not `Other`).
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Other(_))
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                match text {
                    $( $text => Self::$variant, )*
                    other => Self::Other(other.to_owned()),
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::convert::Infallible;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                Ok(Self::from(text))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
                Ok(Self::from(text.as_ref()))
            }
        }
    };
}

pub(crate) use open_enum;
