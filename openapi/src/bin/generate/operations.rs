//! `openapi/src/operations.rs`: every operation of the contract with its policy,
//! and every rate limit, written once for the SDK and the mock server.
//!
//! Per operation the contract gives its method and path, whether it is public
//! (`security: []`), how it may be repeated (`x-repeat`) and which rate limit
//! counts it (`x-rate-limit`, a key of the document's `x-rate-limits`, which
//! gives each limit's size, window and whom it counts). The generator refuses
//! an operation without either extension, or with a value it does not know:
//! a new operation's policy is decided in the contract, before any code.

use anyhow::{Context, Result, bail};
use mediagen_openapi::policy::{LimitPer, Repeat};
use serde_json::Value;

use crate::{HEADER, upper_camel};

/// One rate limit of `x-rate-limits`.
struct Limit {
    key: String,
    variant: String,
    limit: u64,
    window_seconds: u64,
    per: &'static str,
    doc: String,
}

/// One operation of `paths`.
struct Operation {
    variant: String,
    operation_id: String,
    method: String,
    path: String,
    summary: String,
    public: bool,
    repeat: &'static str,
    limit: String,
}

pub(crate) fn code(doc: &Value) -> Result<String> {
    let limits = read_limits(doc)?;
    let operations = read_operations(doc, &limits)?;
    let mut out = String::from(HEADER);
    out.push_str(
        "//! Every operation of the contract with its policy (how it may be repeated,\n\
         //! which rate limit counts it), and every rate limit: what the SDK sends by and\n\
         //! what the mock server enforces and judges by. A change of policy is a change of\n\
         //! `openapi/openapi.json`, and reaches both through `cargo codegen`.\n\n\
         use crate::policy::{LimitPer, Repeat};\n\n",
    );
    out.push_str(&limit_enum(&limits));
    out.push('\n');
    out.push_str(&operation_enum(&operations));
    Ok(out.trim_end().to_owned() + "\n")
}

fn read_limits(doc: &Value) -> Result<Vec<Limit>> {
    let table = doc
        .get("x-rate-limits")
        .and_then(Value::as_object)
        .context("the contract has no `x-rate-limits` object")?;
    let mut limits = Vec::new();
    for (key, limit) in table {
        let number = |field: &str| {
            limit
                .get(field)
                .and_then(Value::as_u64)
                .filter(|n| *n > 0)
                .with_context(|| format!("rate limit {key:?} has no positive `{field}`"))
        };
        let per = limit.get("per").and_then(Value::as_str).unwrap_or_default();
        let per = match LimitPer::from_wire(per) {
            Some(LimitPer::Ip) => "Ip",
            Some(LimitPer::User) => "User",
            None => bail!("rate limit {key:?} counts per {per:?}; it must be ip or user"),
        };
        limits.push(Limit {
            key: key.clone(),
            variant: upper_camel(key),
            limit: number("limit")?,
            window_seconds: number("windowSeconds")?,
            per,
            doc: limit
                .get("description")
                .and_then(Value::as_str)
                .with_context(|| format!("rate limit {key:?} has no description"))?
                .to_owned(),
        });
    }
    // `General` first: the limit every request counts in.
    let general = limits
        .iter()
        .position(|l| l.key == "general")
        .context("`x-rate-limits` has no `general`, the limit every request counts in")?;
    let general = limits.remove(general);
    limits.insert(0, general);
    Ok(limits)
}

fn read_operations(doc: &Value, limits: &[Limit]) -> Result<Vec<Operation>> {
    let secured_by_default = doc
        .get("security")
        .and_then(Value::as_array)
        .is_some_and(|schemes| !schemes.is_empty());
    let mut operations = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let Some(id) = operation.get("operationId").and_then(Value::as_str) else {
                continue;
            };
            let method = method.to_ascii_uppercase();
            let extension = |key: &str| {
                operation
                    .get(key)
                    .and_then(Value::as_str)
                    .with_context(|| format!("{method} {path} ({id}) has no `{key}`"))
            };
            let repeat = extension("x-repeat")?;
            let repeat = match Repeat::from_wire(repeat) {
                Some(Repeat::Safe) => "Safe",
                Some(Repeat::Keyed) => "Keyed",
                Some(Repeat::Once) => "Once",
                None => bail!(
                    "{method} {path} ({id}) has `x-repeat` {repeat:?}; it must be safe, keyed or once"
                ),
            };
            let limit = extension("x-rate-limit")?;
            let limit = limits
                .iter()
                .find(|l| l.key == limit)
                .with_context(|| {
                    format!(
                        "{method} {path} ({id}) counts in {limit:?}, which `x-rate-limits` lacks"
                    )
                })?
                .variant
                .clone();
            let public = match operation.get("security").and_then(Value::as_array) {
                Some(schemes) => schemes.is_empty(),
                None => !secured_by_default,
            };
            let summary = operation
                .get("summary")
                .and_then(Value::as_str)
                .map_or_else(
                    || format!("`{method} {path}`"),
                    |s| format!("`{method} {path}`: {s}"),
                );
            operations.push(Operation {
                variant: upper_camel(id),
                operation_id: id.to_owned(),
                method,
                path: path.clone(),
                summary,
                public,
                repeat,
                limit,
            });
        }
    }
    Ok(operations)
}

fn doc_lines(text: &str, indent: &str) -> String {
    text.lines()
        .map(|line| match line {
            "" => format!("{indent}///\n"),
            line => format!("{indent}/// {line}\n"),
        })
        .collect()
}

/// A `const fn` that answers one arm per variant.
fn per_variant<'a, T: 'a>(
    name: &str,
    doc: &str,
    ret: &str,
    items: impl IntoIterator<Item = &'a T>,
    arm: impl Fn(&T) -> (String, String),
) -> String {
    let mut out = format!(
        "    /// {doc}\n    pub const fn {name}(self) -> {ret} {{\n        match self {{\n"
    );
    for item in items {
        let (variant, value) = arm(item);
        out.push_str(&format!("            Self::{variant} => {value},\n"));
    }
    out.push_str("        }\n    }\n");
    out
}

fn limit_enum(limits: &[Limit]) -> String {
    let count = limits.len();
    let mut out = String::from(
        "/// A rate limit of the service (Limits): every request counts in `General`, and\n\
         /// some operations in a limit of their own as well ([`OperationId::limit`]).\n\
         #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n\
         #[non_exhaustive]\n\
         pub enum LimitScope {\n",
    );
    for l in limits {
        out.push_str(&doc_lines(&l.doc, "    "));
        out.push_str(&format!("    {},\n", l.variant));
    }
    out.push_str("}\n\nimpl LimitScope {\n    /// Every limit: `General`, then the others in the contract's order.\n");
    out.push_str(&format!("    pub const ALL: [Self; {count}] = [\n"));
    for l in limits {
        out.push_str(&format!("        Self::{},\n", l.variant));
    }
    out.push_str("    ];\n\n");
    out.push_str(&per_variant(
        "as_str",
        "Its key in the contract's `x-rate-limits`.",
        "&'static str",
        limits,
        |l| (l.variant.clone(), format!("{:?}", l.key)),
    ));
    out.push_str(
        "\n    /// The limit of that key, or `None` for one the contract does not name.\n\
         \x20   pub fn from_wire(key: &str) -> Option<Self> {\n\
         \x20       Self::ALL.into_iter().find(|scope| scope.as_str() == key)\n\
         \x20   }\n\n",
    );
    out.push_str(&per_variant(
        "default_limit",
        "Requests its window holds, as the document gives it (the service's headers report the real one).",
        "u32",
        limits,
        |l| (l.variant.clone(), l.limit.to_string()),
    ));
    out.push('\n');
    out.push_str(&per_variant(
        "window_secs",
        "The length of its window, in seconds.",
        "u64",
        limits,
        |l| (l.variant.clone(), l.window_seconds.to_string()),
    ));
    out.push_str(
        "\n    /// The length of its window.\n\
         \x20   pub const fn window(self) -> core::time::Duration {\n\
         \x20       core::time::Duration::from_secs(self.window_secs())\n\
         \x20   }\n\n",
    );
    out.push_str(&per_variant(
        "per",
        "Whom it counts: an IP address or a user.",
        "LimitPer",
        limits,
        |l| (l.variant.clone(), format!("LimitPer::{}", l.per)),
    ));
    out.push_str("}\n\n");
    out.push_str(&display("LimitScope"));
    out
}

fn operation_enum(operations: &[Operation]) -> String {
    let count = operations.len();
    let mut out = String::from(
        "/// An operation of the contract. The contract may gain operations, so a `match`\n\
         /// on it outside this crate needs a `_` arm.\n\
         #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n\
         #[non_exhaustive]\n\
         pub enum OperationId {\n",
    );
    for op in operations {
        out.push_str(&doc_lines(&op.summary, "    "));
        out.push_str(&format!("    {},\n", op.variant));
    }
    out.push_str(
        "}\n\nimpl OperationId {\n    /// Every operation, in the order of the contract's paths.\n",
    );
    out.push_str(&format!("    pub const ALL: [Self; {count}] = [\n"));
    for op in operations {
        out.push_str(&format!("        Self::{},\n", op.variant));
    }
    out.push_str("    ];\n\n");
    let arm = |f: fn(&Operation) -> String| move |op: &Operation| (op.variant.clone(), f(op));
    out.push_str(&per_variant(
        "as_str",
        "Its `operationId`.",
        "&'static str",
        operations,
        arm(|op| format!("{:?}", op.operation_id)),
    ));
    out.push_str(
        "\n    /// The operation of an `operationId`, or `None` for one the contract does not have.\n\
         \x20   pub fn from_operation_id(operation_id: &str) -> Option<Self> {\n\
         \x20       Self::ALL.into_iter().find(|op| op.as_str() == operation_id)\n\
         \x20   }\n\n",
    );
    out.push_str(&per_variant(
        "method",
        "Its HTTP method, upper-case.",
        "&'static str",
        operations,
        arm(|op| format!("{:?}", op.method)),
    ));
    out.push('\n');
    out.push_str(&per_variant(
        "path",
        "Its path template, `{id}` and all.",
        "&'static str",
        operations,
        arm(|op| format!("{:?}", op.path)),
    ));
    out.push('\n');
    out.push_str(&per_variant(
        "public",
        "Whether it is answered without a key (`security: []`).",
        "bool",
        operations,
        arm(|op| op.public.to_string()),
    ));
    out.push('\n');
    out.push_str(&per_variant(
        "repeat",
        "Whether sending it again can make it act twice (`x-repeat`).",
        "Repeat",
        operations,
        arm(|op| format!("Repeat::{}", op.repeat)),
    ));
    out.push('\n');
    out.push_str(&per_variant(
        "limit",
        "The rate limit that counts it beside the general one, or `General` (`x-rate-limit`).",
        "LimitScope",
        operations,
        arm(|op| format!("LimitScope::{}", op.limit)),
    ));
    out.push_str(&from_route(operations));
    out.push_str("}\n\n");
    out.push_str(&display("OperationId"));
    out
}

/// `from_route`: one `match` on the method and the template, as a router
/// names a matched route; `HEAD` is `GET`'s.
fn from_route(operations: &[Operation]) -> String {
    let mut out = String::from(
        "\n    /// The operation a router's matched route is: the method (`HEAD` goes with\n\
         \x20   /// `GET`) and the path template exactly as the contract spells it.\n\
         \x20   pub fn from_route(method: &str, template: &str) -> Option<Self> {\n\
         \x20       let method = if method == \"HEAD\" { \"GET\" } else { method };\n\
         \x20       Some(match (method, template) {\n",
    );
    for op in operations {
        out.push_str(&format!(
            "            ({:?}, {:?}) => Self::{},\n",
            op.method, op.path, op.variant
        ));
    }
    out.push_str("            _ => return None,\n        })\n    }\n");
    out
}

fn display(name: &str) -> String {
    format!(
        "impl core::fmt::Display for {name} {{\n    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {{\n        f.write_str(self.as_str())\n    }}\n}}\n"
    )
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    fn contract() -> Value {
        mediagen_openapi::document().expect("the contract")
    }

    fn refusal(doc: &Value) -> String {
        format!(
            "{:#}",
            super::code(doc).expect_err("the generator refuses it")
        )
    }

    #[test]
    fn the_contract_as_committed_has_every_policy() {
        let code = super::code(&contract()).unwrap();
        assert!(code.contains("Self::CreateGeneration => Repeat::Keyed,"));
        assert!(code.contains("Self::CreateTopup => LimitScope::Topup,"));
    }

    #[test]
    fn an_operation_without_its_policy_is_refused() {
        for key in ["x-repeat", "x-rate-limit"] {
            let mut doc = contract();
            doc["paths"]["/v1/billing/topup"]["post"]
                .as_object_mut()
                .unwrap()
                .remove(key);
            assert_eq!(
                refusal(&doc),
                format!("POST /v1/billing/topup (create_topup) has no `{key}`")
            );
        }
    }

    #[test]
    fn a_policy_the_generator_does_not_know_is_refused() {
        let mut doc = contract();
        doc["paths"]["/v1/billing/topup"]["post"]["x-repeat"] = json!("twice");
        assert!(refusal(&doc).contains("`x-repeat` \"twice\"; it must be safe, keyed or once"));
        let mut doc = contract();
        doc["paths"]["/v1/billing/topup"]["post"]["x-rate-limit"] = json!("hourly");
        assert!(refusal(&doc).contains("counts in \"hourly\", which `x-rate-limits` lacks"));
        let mut doc = contract();
        doc["x-rate-limits"]["topup"]["per"] = json!("planet");
        assert!(refusal(&doc).contains("it must be ip or user"));
        let mut doc = contract();
        doc["x-rate-limits"]
            .as_object_mut()
            .unwrap()
            .remove("general");
        assert!(refusal(&doc).contains("has no `general`"));
    }

    #[test]
    fn an_error_code_without_its_retry_class_is_refused() {
        let mut doc = contract();
        doc["components"]["schemas"]["ErrorCode"]["x-retry"]
            .as_object_mut()
            .unwrap()
            .remove("NOT_FOUND");
        let refused = crate::sets::code(&doc).expect_err("refused");
        assert!(
            format!("{refused:#}").contains("`x-retry` has no class for \"NOT_FOUND\""),
            "{refused:#}"
        );
        let mut doc = contract();
        doc["components"]["schemas"]["ErrorCode"]["x-retry"]["NOT_FOUND"] = json!("sometimes");
        let refused = crate::sets::code(&doc).expect_err("refused");
        assert!(format!("{refused:#}").contains("must be retry-after, backoff or never"));
    }
}
