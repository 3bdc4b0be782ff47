//! `openapi/src/sets.rs`: every enumeration of the contract (each a named schema
//! with `enum`), written once for the SDK, the mock server and the CLI.
//!
//! Each set becomes two things in the one file:
//!
//! - a closed Rust enum of the values the contract names, with `ALL`, `NAMES`,
//!   `as_str`, `from_wire` and, for `ErrorCode`, `status`: what the mock answers with and
//!   checks against;
//! - a `macro_rules!` that hands the same values, with their names and
//!   descriptions, to a macro of the reader's: the SDK builds its open enums
//!   (which keep a value they do not know) from it.
//!
//! Per value, the contract gives its description in `x-enumDescriptions` (the
//! extension Redocly renders), its Rust name in `x-enum-varnames` where the value
//! does not spell one (`*`), and, for `ErrorCode`, its HTTP status in
//! `x-http-status`. The generator refuses a set where these disagree with `enum`,
//! or where a status differs from the one the description's list gives.

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value};

use crate::{HEADER, upper_camel};

/// The schema whose values carry an HTTP status.
const ERROR_CODE: &str = "ErrorCode";

/// One value of a set.
struct Member {
    text: String,
    name: String,
    doc: String,
    status: Option<u16>,
    retry: Option<&'static str>,
}

/// One named enumeration of the contract.
struct Set {
    name: String,
    doc: String,
    members: Vec<Member>,
}

pub(crate) fn code(doc: &Value) -> Result<String> {
    let schemas = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .context("the contract has no component schemas")?;
    let sets = schemas
        .iter()
        .filter(|(_, schema)| schema.get("enum").is_some())
        .map(|(name, schema)| read_set(name, schema).with_context(|| format!("in schema {name}")))
        .collect::<Result<Vec<_>>>()?;
    let mut out = String::from(HEADER);
    out.push_str(
        "//! The contract's closed sets: every enumeration of `openapi/openapi.json`, with the\n\
         //! name, description and (for error codes) HTTP status of each value. The SDK's open\n\
         //! enums, the mock server's refusals and deliveries and the CLI read them from here.\n\
         //!\n\
         //! Each set is a closed enum of the values the contract names, and a macro that\n\
         //! hands the same values to a macro of the reader's (the SDK's open enums are made\n\
         //! this way). The contract keeps every set open: a reader keeps a value it does\n\
         //! not know, which `from_wire` answers with `None`.\n\n",
    );
    for set in &sets {
        out.push_str(&closed_enum(set)?);
        out.push('\n');
        out.push_str(&values_macro(set));
        out.push('\n');
    }
    Ok(out.trim_end().to_owned() + "\n")
}

fn read_set(name: &str, schema: &Value) -> Result<Set> {
    let values: Vec<String> = schema["enum"]
        .as_array()
        .context("`enum` is not an array")?
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .context("a value is not a string")
        })
        .collect::<Result<_>>()?;
    let descriptions = extension_map(schema, "x-enumDescriptions")?;
    let statuses = extension_map(schema, "x-http-status")?;
    let retries = extension_map(schema, "x-retry")?;
    let names: Option<Vec<&str>> = schema
        .get("x-enum-varnames")
        .map(|names| {
            names
                .as_array()
                .and_then(|names| names.iter().map(Value::as_str).collect())
                .context("`x-enum-varnames` is not an array of strings")
        })
        .transpose()?;
    if let Some(names) = &names {
        ensure!(
            names.len() == values.len(),
            "`x-enum-varnames` has {} names for {} values",
            names.len(),
            values.len()
        );
    }
    for key in descriptions
        .keys()
        .chain(statuses.keys())
        .chain(retries.keys())
    {
        ensure!(
            values.contains(key),
            "an extension describes {key:?}, which `enum` does not list"
        );
    }
    let description = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut members = Vec::new();
    for (index, text) in values.iter().enumerate() {
        let doc = descriptions
            .get(text)
            .and_then(Value::as_str)
            .with_context(|| format!("`x-enumDescriptions` does not describe {text:?}"))?
            .to_owned();
        let rust = match &names {
            Some(names) => names[index].to_owned(),
            None => rust_name(text),
        };
        ensure!(
            rust.starts_with(|c: char| c.is_ascii_uppercase()),
            "{text:?} spells no Rust name; give one in `x-enum-varnames`"
        );
        let status = match statuses.get(text) {
            Some(status) => Some(http_status(text, status, description)?),
            None if name == ERROR_CODE => bail!("`x-http-status` has no status for {text:?}"),
            None => None,
        };
        let retry = match retries.get(text) {
            Some(class) => Some(retry_class(text, class)?),
            None if name == ERROR_CODE => bail!("`x-retry` has no class for {text:?}"),
            None => None,
        };
        members.push(Member {
            text: text.clone(),
            name: rust,
            doc,
            status,
            retry,
        });
    }
    Ok(Set {
        name: name.to_owned(),
        doc: first_paragraph(description),
        members,
    })
}

fn extension_map<'a>(schema: &'a Value, key: &str) -> Result<&'a Map<String, Value>> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    match schema.get(key) {
        None => Ok(EMPTY.get_or_init(Map::new)),
        Some(map) => map
            .as_object()
            .with_context(|| format!("`{key}` is not an object keyed by value")),
    }
}

/// A status of `x-http-status`, checked against the description's list
/// (``- `CODE` (401): …``) where it names the code.
fn http_status(text: &str, status: &Value, description: &str) -> Result<u16> {
    let status = status
        .as_u64()
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (400..600).contains(s))
        .with_context(|| format!("the status of {text:?} is not an HTTP error status"))?;
    let listed = format!("- `{text}` (");
    if let Some(start) = description.find(&listed) {
        let said = &description[start + listed.len()..];
        ensure!(
            said.starts_with(&format!("{status})")),
            "the description gives {text:?} another status than `x-http-status` ({status})"
        );
    }
    Ok(status)
}

/// The variant of `policy::Retry` that a class of `x-retry` names.
fn retry_class(text: &str, class: &Value) -> Result<&'static str> {
    let class = class.as_str().unwrap_or_default();
    Ok(match mediagen_openapi::policy::Retry::from_wire(class) {
        Some(mediagen_openapi::policy::Retry::AfterRetryAfter) => "AfterRetryAfter",
        Some(mediagen_openapi::policy::Retry::Backoff) => "Backoff",
        Some(mediagen_openapi::policy::Retry::Never) => "Never",
        None => bail!(
            "the `x-retry` class of {text:?} is {class:?}; it must be retry-after, backoff or never"
        ),
    })
}

/// `generation.completed` → `GenerationCompleted`, `AUTHENTICATION_ERROR` →
/// `AuthenticationError`, `image/png` → `ImagePng`.
fn rust_name(text: &str) -> String {
    let words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    upper_camel(&words.join("_"))
}

/// The set's own description: the first paragraph of the schema's, its design
/// marks dropped (the choices stay), up to the note that the set is open, which
/// the module's documentation says once for all.
fn first_paragraph(description: &str) -> String {
    let text = description.replace("*Design:* ", "");
    let first = text.split("\n\n").next().unwrap_or_default();
    let first = first.split("Open: ").next().unwrap_or_default().trim();
    // "Value of `error.code`, with its HTTP status:" introduces the list of values.
    let first = first
        .strip_suffix(':')
        .map_or_else(|| first.to_owned(), |f| format!("{f}."));
    let mut chars = first.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => "A set of values of the contract.".to_owned(),
    }
}

/// `ErrorCode` → `error_code`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn doc_lines(text: &str, indent: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                format!("{indent}///\n")
            } else {
                format!("{indent}/// {line}\n")
            }
        })
        .collect()
}

fn closed_enum(set: &Set) -> Result<String> {
    let name = &set.name;
    let count = set.members.len();
    let mut out = doc_lines(&set.doc, "");
    out.push_str("///\n");
    out.push_str(&format!(
        "/// The values the contract names; see [`{}_values!`](crate::{}_values).\n",
        snake(name),
        snake(name)
    ));
    out.push_str("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\n");
    out.push_str(&format!("pub enum {name} {{\n"));
    for m in &set.members {
        out.push_str(&doc_lines(&member_doc(m), "    "));
        out.push_str(&format!("    {},\n", m.name));
    }
    out.push_str("}\n\n");
    out.push_str(&format!("impl {name} {{\n"));
    out.push_str("    /// Every value, in the contract's order.\n");
    out.push_str(&format!("    pub const ALL: [Self; {count}] = [\n"));
    for m in &set.members {
        out.push_str(&format!("        Self::{},\n", m.name));
    }
    out.push_str("    ];\n\n");
    out.push_str("    /// Every value as the service writes it, in the contract's order.\n");
    out.push_str(&format!(
        "    pub const NAMES: [&'static str; {count}] = [\n"
    ));
    for m in &set.members {
        out.push_str(&format!("        {:?},\n", m.text));
    }
    out.push_str("    ];\n\n");
    out.push_str("    /// The value as the service writes it.\n");
    out.push_str("    pub const fn as_str(self) -> &'static str {\n        match self {\n");
    for m in &set.members {
        out.push_str(&format!("            Self::{} => {:?},\n", m.name, m.text));
    }
    out.push_str("        }\n    }\n\n");
    out.push_str(
        "    /// The value of that text, or `None` for a value the contract does not name.\n",
    );
    out.push_str("    pub fn from_wire(text: &str) -> Option<Self> {\n        Some(match text {\n");
    for m in &set.members {
        out.push_str(&format!("            {:?} => Self::{},\n", m.text, m.name));
    }
    out.push_str("            _ => return None,\n        })\n    }\n");
    if set.members.iter().any(|m| m.status.is_some()) {
        out.push_str("\n    /// The HTTP status the service answers with this code.\n");
        out.push_str("    pub const fn status(self) -> u16 {\n        match self {\n");
        for m in &set.members {
            let status = m.status.context("a code without a status")?;
            out.push_str(&format!("            Self::{} => {status},\n", m.name));
        }
        out.push_str("        }\n    }\n");
    }
    if set.members.iter().any(|m| m.retry.is_some()) {
        out.push_str(
            "\n    /// Whether an answer with this code is worth trying again, and how.\n",
        );
        out.push_str(
            "    pub const fn retry(self) -> crate::policy::Retry {\n        match self {\n",
        );
        for m in &set.members {
            let retry = m.retry.context("a code without a retry class")?;
            out.push_str(&format!(
                "            Self::{} => crate::policy::Retry::{retry},\n",
                m.name
            ));
        }
        out.push_str("        }\n    }\n");
    }
    out.push_str("}\n\n");
    out.push_str(&format!(
        "impl core::fmt::Display for {name} {{\n    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {{\n        f.write_str(self.as_str())\n    }}\n}}\n"
    ));
    Ok(out)
}

fn member_doc(member: &Member) -> String {
    match member.status {
        // "401: the key is absent, invalid or revoked."
        Some(status) => {
            let mut chars = member.doc.chars();
            let first = chars.next().map(|c| c.to_lowercase().to_string());
            format!("{status}: {}{}", first.unwrap_or_default(), chars.as_str())
        }
        None => member.doc.clone(),
    }
}

fn values_macro(set: &Set) -> String {
    let name = &set.name;
    let snake = snake(name);
    let mut out = format!(
        "/// Hands the values of [`{name}`] to a macro of the caller's, as\n\
         /// `Name = \"value\",` items with their descriptions, after the tokens given:\n\
         /// `{snake}_values!(my_macro! {{ pub enum Mine }})` expands to\n\
         /// `my_macro! {{ pub enum Mine {{ /// …\\n Variant = \"value\", … }} }}`.\n\
         #[macro_export]\nmacro_rules! {snake}_values {{\n    ($callback:ident ! {{ $($head:tt)* }}) => {{\n        $callback! {{ $($head)* {{\n"
    );
    for m in &set.members {
        out.push_str(&doc_lines(&member_doc(m), "            "));
        out.push_str(&format!("            {} = {:?},\n", m.name, m.text));
    }
    out.push_str("        } }\n    };\n}\n");
    out
}
