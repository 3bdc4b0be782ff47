//! The verdict as the judge reads it, and told: in words for people on
//! stderr, and as JUnit XML for CI.
//!
//! Read as a tolerant reader reads it: a mock of another version may add
//! fields, rules and severities, and lack the newest ones.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Deserialize;

/// The name of the JUnit test suite, and the class of its test cases.
const SUITE: &str = "mediagen-mock verdict";
const CLASS: &str = "mediagen-mock.verdict";

/// `GET /_mock/verdict`, read.
#[derive(Debug, Deserialize)]
pub(super) struct Verdict {
    clean: bool,
    #[serde(default)]
    findings: Vec<Finding>,
    #[serde(default)]
    checked: Checked,
}

#[derive(Debug, Default, Deserialize)]
struct Checked {
    #[serde(default)]
    requests: u64,
    #[serde(default)]
    deliveries: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Finding {
    rule: String,
    severity: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    document_rule: String,
    #[serde(default)]
    advice: String,
    #[serde(default)]
    request_ids: Vec<String>,
    /// A receiver's finding: the deliveries' webhook-ids.
    #[serde(default)]
    message_ids: Option<Vec<String>>,
    /// A receiver's finding: the endpoint.
    #[serde(default)]
    endpoint: Option<Endpoint>,
    #[serde(default)]
    first_at: Option<String>,
    #[serde(default)]
    count: Option<u64>,
    /// Whether it spoils `clean`, as the mock says (`?strict=`).
    #[serde(default)]
    fails: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct Endpoint {
    #[serde(default)]
    id: String,
    #[serde(default)]
    url: String,
}

/// What the report tells beside the verdict.
pub(super) struct Facts<'a> {
    /// The command as typed.
    pub(super) command: &'a str,
    /// Its exit code.
    pub(super) code: u8,
    /// How long it ran.
    pub(super) elapsed: Duration,
    /// The rules of advice made to fail the run.
    pub(super) strict: &'a [String],
}

impl Verdict {
    /// Whether the verdict fails the run.
    pub(super) fn fails(&self, strict: &[String]) -> bool {
        !self.clean || self.findings.iter().any(|f| f.fails(strict))
    }
}

impl Finding {
    /// Whether this finding fails the run: as the mock says, or, from a mock
    /// that does not say (one older than `?strict=`), by the same rule: a
    /// violation, or a rule made strict.
    fn fails(&self, strict: &[String]) -> bool {
        self.fails
            .unwrap_or_else(|| self.severity == "violation" || strict.contains(&self.rule))
    }

    fn is_receivers(&self) -> bool {
        self.rule.starts_with("receiver-") || self.endpoint.is_some() || self.message_ids.is_some()
    }

    /// What shows it: the requests, or a receiver's webhook-ids.
    fn ids(&self) -> (&'static str, &[String]) {
        match &self.message_ids {
            Some(ids) => ("webhook-ids", ids),
            // Before `messageIds`, a receiver's finding had its webhook-ids here.
            None if self.is_receivers() => ("webhook-ids", &self.request_ids),
            None => ("requests", &self.request_ids),
        }
    }

    /// The finding's facts, a line each, for people and for a JUnit body.
    fn lines(&self, strict: &[String]) -> Vec<String> {
        let count = self.count.unwrap_or(1);
        let mut head = format!(
            "{}: {}{}, {count} time{}",
            self.rule,
            self.severity,
            if self.fails(strict) {
                ", fails the run"
            } else {
                ""
            },
            if count == 1 { "" } else { "s" }
        );
        if let Some(at) = &self.first_at {
            let _ = write!(head, ", first at {at}");
        }
        let mut lines = vec![head];
        if !self.message.is_empty() {
            lines.push(self.message.clone());
        }
        if !self.document_rule.is_empty() {
            lines.push(format!("document: {}", self.document_rule));
        }
        if !self.advice.is_empty() {
            lines.push(format!("advice: {}", self.advice));
        }
        if let Some(endpoint) = &self.endpoint {
            lines.push(format!("endpoint: {} ({})", endpoint.id, endpoint.url));
        }
        let (label, ids) = self.ids();
        if !ids.is_empty() {
            lines.push(format!("{label}: {}", ids.join(", ")));
        }
        lines
    }
}

/// The verdict in words: a line of what was judged, then each finding, those
/// that fail the run first, rule id first.
pub(super) fn words(verdict: &Verdict, facts: &Facts<'_>) -> String {
    let failing = verdict
        .findings
        .iter()
        .filter(|f| f.fails(facts.strict))
        .count();
    let total = verdict.findings.len();
    let outcome = match (verdict.fails(facts.strict), total) {
        (false, 0) => "clean, no findings".to_owned(),
        (false, _) => format!(
            "clean: {total} finding{} of advice, none fails the run",
            plural(total)
        ),
        (true, _) => format!(
            "not clean: {failing} of {total} finding{} fail{} the run",
            plural(total),
            if failing == 1 { "s" } else { "" }
        ),
    };
    let mut text = format!(
        "judge: the mock's verdict after {} request{} and {} webhook deliver{}: {outcome}\n",
        verdict.checked.requests,
        plural(verdict.checked.requests),
        verdict.checked.deliveries,
        if verdict.checked.deliveries == 1 {
            "y"
        } else {
            "ies"
        }
    );
    for finding in ordered(verdict, facts.strict) {
        let lines = finding.lines(facts.strict);
        for (i, line) in lines.iter().enumerate() {
            let indent = if i == 0 { "  " } else { "      " };
            let _ = writeln!(text, "{indent}{line}");
        }
    }
    text
}

/// The findings that fail the run first, each part in the mock's order.
fn ordered<'v>(verdict: &'v Verdict, strict: &[String]) -> Vec<&'v Finding> {
    let mut findings: Vec<&Finding> = verdict.findings.iter().collect();
    findings.sort_by_key(|f| !f.fails(strict));
    findings
}

/// The verdict as JUnit XML: one test suite, a test case per rule of `known`
/// (and per rule of a finding that `known` lacks), so that CI shows what was
/// checked. A case fails with a `<failure>` for each of its findings that
/// fails the run; advice that does not is its `<system-out>`.
pub(super) fn junit(verdict: &Verdict, facts: &Facts<'_>, known: &[&str]) -> String {
    let mut rules: Vec<&str> = known.to_vec();
    for finding in &verdict.findings {
        if !rules.contains(&finding.rule.as_str()) {
            rules.push(&finding.rule);
        }
    }
    let mut cases = String::new();
    let mut failed = 0;
    for rule in &rules {
        let findings: Vec<&Finding> = verdict
            .findings
            .iter()
            .filter(|f| f.rule == *rule)
            .collect();
        let (failing, passing): (Vec<&Finding>, Vec<&Finding>) =
            findings.iter().partition(|f| f.fails(facts.strict));
        if !failing.is_empty() {
            failed += 1;
        }
        let name = attribute(rule);
        if findings.is_empty() {
            let _ = writeln!(
                cases,
                r#"    <testcase classname="{CLASS}" name="{name}" time="0"/>"#
            );
            continue;
        }
        let _ = writeln!(
            cases,
            r#"    <testcase classname="{CLASS}" name="{name}" time="0">"#
        );
        for finding in failing {
            let _ = writeln!(
                cases,
                r#"      <failure message="{}" type="{name}">{}</failure>"#,
                attribute(&finding.message),
                text(&finding.lines(facts.strict).join("\n"))
            );
        }
        if !passing.is_empty() {
            let told: Vec<String> = passing
                .iter()
                .map(|f| f.lines(facts.strict).join("\n"))
                .collect();
            let _ = writeln!(
                cases,
                "      <system-out>{}</system-out>",
                text(&told.join("\n\n"))
            );
        }
        let _ = writeln!(cases, "    </testcase>");
    }
    let tests = rules.len();
    let time = format!("{:.3}", facts.elapsed.as_secs_f64());
    let timestamp = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S");
    let properties = [
        ("command", facts.command.to_owned()),
        ("command.exitCode", facts.code.to_string()),
        ("checked.requests", verdict.checked.requests.to_string()),
        ("checked.deliveries", verdict.checked.deliveries.to_string()),
        ("strict", facts.strict.join(",")),
    ];
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        r#"<testsuites name="mediagen-mock" tests="{tests}" failures="{failed}" errors="0" time="{time}">"#
    );
    let _ = writeln!(
        xml,
        r#"  <testsuite name="{SUITE}" tests="{tests}" failures="{failed}" errors="0" skipped="0" time="{time}" timestamp="{timestamp}">"#
    );
    xml.push_str("    <properties>\n");
    for (name, value) in properties {
        let _ = writeln!(
            xml,
            r#"      <property name="{name}" value="{}"/>"#,
            attribute(&value)
        );
    }
    xml.push_str("    </properties>\n");
    xml.push_str(&cases);
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

fn plural<N: PartialEq + From<u8>>(n: N) -> &'static str {
    if n == N::from(1) { "" } else { "s" }
}

/// `value` as the text of an element: markup escaped, and the characters XML
/// 1.0 cannot hold replaced.
fn text(value: &str) -> String {
    escape(value, false)
}

/// `value` inside double quotes: also quotes escaped, and line breaks and tabs
/// as references, which attribute normalisation would otherwise turn to spaces.
fn attribute(value: &str) -> String {
    escape(value, true)
}

fn escape(value: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if in_attribute => out.push_str("&quot;"),
            '\'' if in_attribute => out.push_str("&apos;"),
            '\n' if in_attribute => out.push_str("&#10;"),
            '\t' if in_attribute => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' => out.push(c),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn verdict(value: serde_json::Value) -> Verdict {
        serde_json::from_value(value).unwrap()
    }

    fn finding(rule: &str, severity: &str) -> serde_json::Value {
        json!({
            "rule": rule, "severity": severity,
            "message": "sent <again> & \"again\"\nwith 'quotes'\u{1}",
            "documentRule": "Errors, Client handling 2", "advice": "retry with the same key",
            "requestIds": ["req_1", "req_2"], "firstAt": "2026-11-27T10:00:01.000Z", "count": 2
        })
    }

    const FACTS: Facts<'static> = Facts {
        command: "sh -c 'exit 0'",
        code: 0,
        elapsed: Duration::from_millis(1500),
        strict: &[],
    };

    #[test]
    fn a_violation_fails_its_rules_case_and_advice_is_told_in_its_own() {
        let read = verdict(json!({
            "clean": false,
            "findings": [finding("create-retry-new-key", "violation"), finding("create-without-key", "advice")],
            "checked": {"requests": 3, "deliveries": 0}
        }));
        let known = ["create-retry-new-key", "create-without-key", "poll-rate"];
        let xml = junit(&read, &FACTS, &known);
        assert!(xml.contains(r#"tests="3" failures="1""#), "{xml}");
        assert!(
            xml.contains(
                r#"<testcase classname="mediagen-mock.verdict" name="poll-rate" time="0"/>"#
            ),
            "{xml}"
        );
        assert!(
            xml.contains(
                r#"message="sent &lt;again&gt; &amp; &quot;again&quot;&#10;with &apos;quotes&apos;"#
            ),
            "{xml}"
        );
        assert!(xml.contains(r#"type="create-retry-new-key">"#), "{xml}");
        assert!(xml.contains("requests: req_1, req_2</failure>"), "{xml}");
        assert!(
            xml.contains("<system-out>create-without-key: advice, 2 times"),
            "{xml}"
        );
        assert!(!xml.contains('\u{1}'), "a character XML 1.0 cannot hold");
        assert!(xml.contains(r#"<property name="command" value="sh -c &apos;exit 0&apos;"/>"#));
    }

    #[test]
    fn a_rule_made_strict_fails_when_the_mock_does_not_say_fails_and_the_mock_wins_when_it_does() {
        let read = verdict(json!({
            "clean": true, "findings": [finding("create-without-key", "advice")],
            "checked": {"requests": 1, "deliveries": 0}
        }));
        let strict = ["create-without-key".to_owned()];
        assert!(read.fails(&strict));
        assert!(!read.fails(&[]));
        let mut told = finding("create-without-key", "advice");
        told["fails"] = json!(false);
        let read = verdict(json!({"clean": true, "findings": [told]}));
        assert!(!read.fails(&strict), "the mock's own `fails` wins");
    }

    #[test]
    fn a_rule_the_judge_does_not_know_still_gets_a_case_and_a_receivers_ids_are_webhook_ids() {
        let mut receiver = finding("receiver-new-rule", "violation");
        receiver["messageIds"] = json!(["msg_1"]);
        receiver["endpoint"] = json!({"id": "we_1", "url": "https://example.test/hook"});
        let read = verdict(json!({"clean": false, "findings": [receiver]}));
        let xml = junit(&read, &FACTS, &["create-without-key"]);
        assert!(xml.contains(r#"tests="2" failures="1""#), "{xml}");
        assert!(xml.contains("webhook-ids: msg_1"), "{xml}");
        assert!(
            xml.contains("endpoint: we_1 (https://example.test/hook)"),
            "{xml}"
        );
        let said = words(&read, &FACTS);
        assert!(
            said.contains("  receiver-new-rule: violation, fails the run, 2 times"),
            "{said}"
        );
        assert!(
            said.contains("not clean: 1 of 1 finding fails the run"),
            "{said}"
        );
    }
}
