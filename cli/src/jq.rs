//! `--jq`: a jq filter as jaq runs it, over each JSON document a command prints.
//!
//! The only module that names jaq's crates: jaq changes its API about once a year,
//! so the three crates are pinned together and an upgrade touches this file alone.

use std::io::{self, Write};
use std::sync::Arc;

use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, data};
use jaq_json::Val;
use serde::Deserialize;

type Data = data::JustLut<Val>;

/// A compiled filter, checked when the command line is read.
#[derive(Clone)]
pub struct Filter {
    compiled: Arc<jaq_core::Filter<Data>>,
    /// `$ENV`, as jq has it: the environment when the command started.
    env: Val,
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Filter")
    }
}

/// What went wrong running a filter on one document.
#[derive(Debug)]
pub enum RunError {
    /// The filter raised an error (`error(…)`, a wrong type, a failed parse).
    Filter(String),
    /// The output could not be written.
    Io(io::Error),
}

impl From<io::Error> for RunError {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Filter(why) => f.write_str(why),
            Self::Io(err) => err.fmt(f),
        }
    }
}

impl Filter {
    /// Parses and compiles `code`, with jq's standard library as jaq has it. A
    /// mistake is told with its column (1-based, in characters) and the expression
    /// with a caret under the place.
    pub fn new(code: &str) -> Result<Self, String> {
        let program = File { code, path: () };
        let defs = jaq_core::defs()
            .chain(jaq_std::defs())
            .chain(jaq_json::defs())
            .chain(formats());
        let funs = jaq_core::funs()
            .chain(jaq_std::funs())
            .chain(jaq_json::funs());
        let arena = Arena::default();
        let modules = Loader::new(defs).load(&arena, program).map_err(|errors| {
            let mut told = errors.into_iter().flat_map(|(_, error)| match error {
                jaq_core::load::Error::Io(errors) => errors,
                jaq_core::load::Error::Lex(errors) => errors
                    .into_iter()
                    .map(|(expected, at)| (at, format!("expected {}", expected.as_str())))
                    .collect(),
                jaq_core::load::Error::Parse(errors) => errors
                    .into_iter()
                    .map(|(expected, at)| {
                        let found = match at {
                            "" => "the end".to_owned(),
                            found => format!("`{found}`"),
                        };
                        (at, format!("expected {}, found {found}", expected.as_str()))
                    })
                    .collect(),
            });
            match told.next() {
                Some((at, why)) => pointed(code, at, &why),
                None => "not a jq filter".to_owned(),
            }
        })?;
        let compiled = Compiler::default()
            .with_funs(funs)
            .with_global_vars(["$ENV"])
            .compile(modules)
            .map_err(|errors| {
                let first = errors.into_iter().flat_map(|(_, errors)| errors).next();
                match first {
                    Some((name, undefined)) => pointed(
                        code,
                        name,
                        &format!("undefined {} `{name}`", undefined.as_str()),
                    ),
                    None => "not a jq filter".to_owned(),
                }
            })?;
        let env: serde_json::Map<String, serde_json::Value> = std::env::vars()
            .map(|(name, value)| (name, value.into()))
            .collect();
        let env = Val::deserialize(serde_json::Value::Object(env))
            .map_err(|err| format!("the environment as $ENV: {err}"))?;
        Ok(Self {
            compiled: Arc::new(compiled),
            env,
        })
    }

    /// Runs the filter on `value` and writes each output on its own line: a string
    /// raw (as `jq -r`), anything else as compact JSON.
    pub fn write(&self, value: &serde_json::Value, w: &mut impl Write) -> Result<(), RunError> {
        let input = Val::deserialize(value).map_err(|err| RunError::Filter(format!("{err}")))?;
        let ctx = Ctx::<Data>::new(&self.compiled.lut, Vars::new([self.env.clone()]));
        for output in self.compiled.id.run((ctx, input)) {
            match jaq_core::unwrap_valr(output) {
                Ok(Val::TStr(text)) => w.write_all(&text)?,
                Ok(other) => jaq_json::write::write(w, &Default::default(), 0, &other)?,
                Err(err) => return Err(RunError::Filter(err.to_string())),
            }
            w.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// `@csv` and `@tsv`, which jaq's libraries leave to its command line.
fn formats() -> impl Iterator<Item = jaq_core::load::parse::Def<&'static str>> {
    jaq_core::load::parse(include_str!("jq.defs"), |p| p.defs())
        .expect("the formats parse")
        .into_iter()
}

/// `why` at the place of `part` (a slice of `code`): the column, then the
/// expression with a caret under that place.
fn pointed(code: &str, part: &str, why: &str) -> String {
    let start = jaq_core::load::span(code, part).start;
    let column = code[..start].chars().count() + 1;
    format!(
        "{why} at column {column}\n  {code}\n  {:>column$}",
        "^",
        column = column
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: &str, value: serde_json::Value) -> String {
        let mut out = Vec::new();
        Filter::new(code).unwrap().write(&value, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_come_out_raw_and_other_values_as_compact_json() {
        let value = serde_json::json!({ "id": "gen_1", "outputs": [{ "url": "https://x/a.png" }] });
        assert_eq!(run(".id", value.clone()), "gen_1\n");
        assert_eq!(
            run(".outputs", value.clone()),
            "[{\"url\":\"https://x/a.png\"}]\n"
        );
        assert_eq!(
            run(".id, .outputs[0].url", value),
            "gen_1\nhttps://x/a.png\n"
        );
    }

    #[test]
    fn a_filter_with_no_output_writes_nothing() {
        assert_eq!(
            run("select(.a) | .b", serde_json::json!({ "a": false })),
            ""
        );
    }

    #[test]
    fn a_mistake_is_told_at_its_column() {
        let err = Filter::new(".id | ").unwrap_err();
        assert!(
            err.starts_with("expected term, found the end at column 7"),
            "{err}"
        );
        let err = Filter::new(".a | nosuch").unwrap_err();
        assert!(
            err.starts_with("undefined filter `nosuch` at column 6"),
            "{err}"
        );
        assert!(err.ends_with("\n  .a | nosuch\n       ^"), "{err}");
    }

    /// The table `scripts/jq/compare.py` runs through jq itself in CI: each filter
    /// prints here what the table says, so `mediagen --jq` and jq differ only where a
    /// row documents it. A failure prints `error` and ends the row, as there.
    #[test]
    fn every_filter_of_the_table_prints_what_the_table_says() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jq");
        let table: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(dir.join("filters.json")).unwrap())
                .unwrap();
        assert!(table.len() >= 50, "the table has {} filters", table.len());
        let wrong: Vec<String> = table
            .iter()
            .filter_map(|row| {
                let input = row["input"].as_str().unwrap();
                let code = row["filter"].as_str().unwrap();
                let text = std::fs::read_to_string(dir.join(input)).unwrap();
                let documents: Vec<serde_json::Value> = if input.ends_with(".jsonl") {
                    text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
                } else {
                    vec![serde_json::from_str(&text).unwrap()]
                };
                let mut out = Vec::new();
                match Filter::new(code) {
                    Ok(filter) => {
                        for document in &documents {
                            if filter.write(document, &mut out).is_err() {
                                out.extend_from_slice(b"error\n");
                                break;
                            }
                        }
                    }
                    Err(_) => out.extend_from_slice(b"error\n"),
                }
                let got = String::from_utf8(out).unwrap();
                let want = row["expected"].as_str().unwrap();
                (got != want).then(|| {
                    serde_json::json!({ "input": input, "filter": code, "printed": got, "table": want })
                        .to_string()
                })
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn a_runtime_error_is_an_error_not_an_output() {
        let mut out = Vec::new();
        let err = Filter::new(".a + 1")
            .unwrap()
            .write(&serde_json::json!({ "a": "x" }), &mut out)
            .unwrap_err();
        assert!(matches!(err, RunError::Filter(_)), "{err}");
    }
}
