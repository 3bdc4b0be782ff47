//! A batch's manifest: read whole and checked before anything is created, so
//! that one bad line costs nothing; and the files kept beside it.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mediagen::{Catalog, Model};
use mediagen::{GenerationRequest, ModelParameterType};
use serde::Deserialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{Exit, Failure};

/// The journal of a manifest: `--state`, else beside the manifest.
pub fn journal_path(manifest: &Path, state: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(state) = state {
        return Ok(state.to_owned());
    }
    if manifest == Path::new("-") {
        return Err(Failure::new(
            Exit::Usage,
            "INVALID_REQUEST",
            "a manifest read from stdin has no place for its journal",
        )
        .hint("pass --state PATH: the journal that makes running the batch again safe")
        .into());
    }
    Ok(beside(manifest, "journal"))
}

/// The results of a run, beside its journal: the manifest's name, or --state's.
pub fn results_path(manifest: &Path, state: Option<&Path>) -> PathBuf {
    beside(state.unwrap_or(manifest), "results.jsonl")
}

/// `path` with `.suffix` added to its file name.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{suffix}"));
    PathBuf::from(name)
}

/// One generation the manifest asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Its line number in the manifest, from 1.
    pub number: usize,
    /// The line as written (without the spaces around it): what the journal
    /// knows it by.
    pub text: String,
    pub model: String,
    pub prompt: String,
    pub params: Map<String, Value>,
    /// The name of its result file, if the line gives one.
    pub output: Option<String>,
}

/// A line that cannot run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Bad {
    pub number: usize,
    pub reason: String,
}

/// A JSON Lines object of the manifest.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Object {
    model: Option<String>,
    prompt: String,
    #[serde(default)]
    params: Map<String, Value>,
    output: Option<String>,
}

/// The text of the manifest at `path`, or of stdin for `-`.
pub fn text(path: &Path) -> anyhow::Result<String> {
    let mut text = String::new();
    if path == Path::new("-") {
        std::io::stdin()
            .read_to_string(&mut text)
            .context("while reading the manifest from stdin")?;
    } else {
        text = std::fs::read_to_string(path)
            .with_context(|| format!("while reading the manifest {}", path.display()))?;
    }
    Ok(text)
}

/// The lines of a manifest that read, with `model` for those that name none
/// and `params` under each line's own; and every line that cannot be read,
/// with why. Both come whole, so that the catalogue can check the lines that
/// read in the same pass.
pub fn parse(text: &str, model: Option<&str>, params: &[(String, Value)]) -> (Vec<Line>, Vec<Bad>) {
    let mut lines = Vec::new();
    let mut bad = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (named, prompt, own, output) = if trimmed.starts_with('{') {
            // The line as written, so that a column serde names is the line's.
            match serde_json::from_str::<Object>(raw) {
                Ok(object) => (object.model, object.prompt, object.params, object.output),
                Err(err) => {
                    bad.push(Bad {
                        number,
                        reason: format!("not a manifest object: {}", json_error(&err)),
                    });
                    continue;
                }
            }
        } else {
            (None, trimmed.to_owned(), Map::new(), None)
        };
        let Some(model) = named.or_else(|| model.map(str::to_owned)) else {
            bad.push(Bad {
                number,
                reason: "no model: give the line a \"model\", or every line one with -m".into(),
            });
            continue;
        };
        if prompt.trim().is_empty() {
            bad.push(Bad {
                number,
                reason: "the prompt is empty".into(),
            });
            continue;
        }
        if let Some(output) = &output
            && (output.is_empty() || output.contains(['/', '\\']) || output.starts_with('.'))
        {
            bad.push(Bad {
                number,
                reason: format!("output {output:?} must be a file name, not a path"),
            });
            continue;
        }
        let mut all: Map<String, Value> = params.iter().cloned().collect();
        all.extend(own);
        lines.push(Line {
            number,
            text: trimmed.to_owned(),
            model,
            prompt,
            params: all,
            output,
        });
    }
    (lines, bad)
}

/// What the catalogue says is wrong with each line: a model it does not list,
/// a parameter the model does not declare, of the wrong type or out of range,
/// one the model needs and the line lacks, a prompt too long.
pub fn check(lines: &[Line], catalog: &Catalog) -> Vec<Bad> {
    let models: HashMap<&str, &Model> = catalog
        .models
        .iter()
        .map(|m| (m.slug.as_str(), m))
        .collect();
    let mut bad = Vec::new();
    for line in lines {
        let mut reasons = Vec::new();
        match models.get(line.model.as_str()) {
            None => reasons.push(format!(
                "the catalogue has no model {:?} (`mediagen models` lists them)",
                line.model
            )),
            Some(model) => reasons.extend(fit(line, model)),
        }
        bad.extend(reasons.into_iter().map(|reason| Bad {
            number: line.number,
            reason,
        }));
    }
    bad
}

/// Why a line does not fit its model's declared parameters.
fn fit(line: &Line, model: &Model) -> Vec<String> {
    let mut reasons = Vec::new();
    if let Some(max) = model.max_prompt_length
        && line.prompt.chars().count() as i64 > max
    {
        reasons.push(format!("the prompt is longer than {max} characters"));
    }
    for (name, value) in &line.params {
        let Some(declared) = model.parameters.iter().find(|p| &p.name == name) else {
            let names: Vec<&str> = model.parameters.iter().map(|p| p.name.as_str()).collect();
            reasons.push(format!(
                "{} has no parameter {name:?} (it has {})",
                model.slug,
                names.join(", ")
            ));
            continue;
        };
        let typed = match declared.type_ {
            ModelParameterType::String | ModelParameterType::File => value.is_string(),
            ModelParameterType::Integer => value.is_i64() || value.is_u64(),
            ModelParameterType::Number => value.is_number(),
            ModelParameterType::Boolean => value.is_boolean(),
            // A type this version does not know: the service will judge.
            _ => true,
        };
        if !typed {
            reasons.push(format!("{name} must be of type {}", declared.type_));
            continue;
        }
        if !declared.allowed_values.is_empty() && !declared.allowed_values.contains(value) {
            let allowed: Vec<String> = declared
                .allowed_values
                .iter()
                .map(Value::to_string)
                .collect();
            reasons.push(format!("{name} must be one of {}", allowed.join(", ")));
        }
        let number = value.as_f64();
        if let (Some(number), Some(min)) = (number, declared.minimum)
            && number < min
        {
            reasons.push(format!("{name} must be at least {min}"));
        }
        if let (Some(number), Some(max)) = (number, declared.maximum)
            && number > max
        {
            reasons.push(format!("{name} must be at most {max}"));
        }
    }
    for declared in &model.parameters {
        if declared.required == Some(true) && !line.params.contains_key(&declared.name) {
            reasons.push(format!(
                "{} needs the parameter {}",
                model.slug, declared.name
            ));
        }
    }
    reasons
}

impl Line {
    /// The request of this line, labelled by the line's text: a changed line
    /// is a new item of the journal, and an unchanged one moved to another line
    /// number is the same. `-m` and `-p` are options of a run, not of a line,
    /// so `batch status` needs neither to find a line in the journal.
    pub fn request(&self) -> GenerationRequest {
        let mut request = GenerationRequest::new(&self.model, &self.prompt);
        for (name, value) in &self.params {
            request = request.param(name, value.clone());
        }
        let digest = Sha256::digest(self.text.as_bytes());
        let label: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
        request.label(format!("line-{label}"))
    }
}

/// What serde says is wrong with a line's JSON, placed by column alone: its
/// "line 1" is the line of the object, not of the manifest, which the report
/// names already.
fn json_error(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let place = format!(" at line {} column {}", err.line(), err.column());
    match text.strip_suffix(&place) {
        Some(what) if err.line() == 1 => format!("{what} (column {})", err.column()),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_and_objects_are_read_and_comments_and_blank_lines_skipped() {
        let text = "# animals\n\na fox\n{\"model\": \"imagen-4\", \"prompt\": \"an owl\", \
                    \"params\": {\"resolution\": \"2k\"}, \"output\": \"owl.png\"}\n";
        let (lines, bad) = parse(
            text,
            Some("flux-schnell"),
            &[("aspect_ratio".into(), "1:1".into())],
        );
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(lines.len(), 2);
        assert_eq!(
            (lines[0].number, lines[0].model.as_str()),
            (3, "flux-schnell")
        );
        assert_eq!(lines[1].model, "imagen-4");
        assert_eq!(lines[1].params["resolution"], "2k");
        assert_eq!(lines[1].params["aspect_ratio"], "1:1");
        assert_eq!(lines[1].output.as_deref(), Some("owl.png"));
    }

    #[test]
    fn every_bad_line_is_named_with_its_reason() {
        let text = "a fox\n{\"prompt\": 3}\n{\"model\": \"x\", \"prompt\": \" \"}\n\
                    {\"model\": \"x\", \"prompt\": \"y\", \"output\": \"../etc\"}\n\
                    {\"model\": \"x\", \"prompt\": \"fine\"}\n";
        let (lines, bad) = parse(text, None, &[]);
        assert_eq!(
            lines.len(),
            1,
            "the good line is kept for the catalogue's check"
        );
        let numbers: Vec<usize> = bad.iter().map(|b| b.number).collect();
        assert_eq!(numbers, [1, 2, 3, 4]);
        assert!(bad[0].reason.contains("-m"), "{bad:?}");
        assert!(bad[2].reason.contains("empty"), "{bad:?}");
    }

    #[test]
    fn a_broken_object_is_placed_by_column_not_by_a_line_of_its_own() {
        let (_, bad) = parse("a fox\n  {\"prompt\": \"an owl\",\n", Some("x"), &[]);
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert_eq!(bad[0].number, 2);
        let reason = &bad[0].reason;
        assert!(!reason.contains("line 1"), "{reason}");
        assert!(reason.ends_with("(column 22)"), "{reason}");
    }

    #[test]
    fn a_line_moved_keeps_its_label_and_a_changed_one_gets_a_new_one() {
        let read = |text: &str| parse(text, Some("flux-schnell"), &[]).0;
        let before = read("a fox\na hare\n");
        let after = read("# new\na fox\na hare!\n");
        let label = |line: &Line| mediagen::item_names(&[line.request()])[0].clone();
        assert_eq!(label(&before[0]), label(&after[0]));
        assert_ne!(label(&before[1]), label(&after[1]));
    }
}
