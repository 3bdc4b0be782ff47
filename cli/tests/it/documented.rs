//! What `cli/README.md` promises, run as it is written there: the way from a fresh
//! account to an invoice, and a command (or the reason for none) for every
//! operation of the contract.

use std::path::PathBuf;

use serde_json::Value;

use crate::{Setup, bare, envelope, run, scratch, text};

fn readme() -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("cli/README.md")
}

/// The text of the README's section `heading`, up to the next one.
fn section(readme: &str, heading: &str) -> String {
    readme
        .split(&format!("\n## {heading}\n"))
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_else(|| panic!("no section {heading}"))
        .to_owned()
}

/// The commands of the first `sh` block of `text`, each as its words, read as a
/// shell reads them: `\` joins lines, quotes group, `#` starts a comment.
fn commands(text: &str) -> Vec<Vec<String>> {
    let block = text
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("an sh block");
    let joined = block.replace("\\\n", " ");
    joined.lines().filter_map(words).collect()
}

/// One line as a shell splits it, without its comment; `None` for no words.
fn words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, '#') if word.is_none() => break,
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    (!words.is_empty()).then_some(words)
}

#[tokio::test]
async fn a_fresh_account_gets_an_invoice_by_the_hints_and_the_readmes_commands() {
    let setup = Setup::new().await;

    // Before the requisites, an invoice is refused with the command that sets them.
    let refused = run(setup.cmd(&["invoices", "create", "25000"])).await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    let hint = envelope(&refused)["hint"].as_str().unwrap().to_owned();
    assert!(hint.contains("`mediagen requisites set`"), "{hint}");
    assert!(!hint.contains("amount"), "the amount was fine: {hint}");
    let none = run(setup.cmd(&["requisites"])).await;
    assert_eq!(none.status.code(), Some(1));
    assert!(
        envelope(&none)["hint"]
            .as_str()
            .is_some_and(|hint| hint.contains("`mediagen requisites set`"))
    );

    // Then the README's way, command by command, as written.
    let steps = commands(&section(&readme(), "Paying by invoice"));
    assert_eq!(steps.len(), 4, "{steps:?}");
    let dir = scratch("readme-invoice");
    let mut invoice = String::new();
    for step in steps {
        assert_eq!(step[0], "mediagen");
        let args: Vec<String> = step[1..]
            .iter()
            .map(|word| word.replace("ID", &invoice))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = setup.cmd(&args);
        cmd.current_dir(&dir);
        let output = run(cmd).await;
        assert!(
            output.status.success(),
            "{args:?}: {}",
            text(&output.stderr)
        );
        let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
        match &args[..args.len().min(2)] {
            ["requisites", "set"] | ["requisites"] => {
                assert_eq!(answer["inn"], "7712345671", "{answer}");
                assert_eq!(answer["email"], "accounting@romashka-media.ru", "{answer}");
            }
            ["invoices", "create"] => {
                assert_eq!(answer["amountRub"], 25000.0, "{answer}");
                invoice = answer["id"].as_str().unwrap().to_owned();
            }
            ["invoices", "pdf"] => {
                let pdf = std::fs::read(dir.join(format!("invoice-{invoice}.pdf"))).unwrap();
                assert!(pdf.starts_with(b"%PDF-"));
            }
            other => panic!("a step the test does not know: {other:?}"),
        }
    }
    assert!(!invoice.is_empty(), "no invoice was issued");
}

#[tokio::test]
async fn requisites_are_refused_by_flag_before_sending_and_by_the_services_check_digits() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&[
        "--format",
        "human",
        "requisites",
        "set",
        "--inn",
        "77123456",
        "--bic",
        "044525987",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    let line = stderr.lines().next().unwrap();
    assert!(
        line.contains("--inn: an INN is 10 digits")
            && line.contains("missing --legal-name, --ogrn, --legal-address")
            && !line.contains("--bic"),
        "{stderr}"
    );
    assert!(
        setup.client().billing().requisites().await.is_err(),
        "nothing was sent"
    );

    // A check digit is the service's to judge, and its refusal names the flags.
    let file = scratch("requisites-file").join("requisites.json");
    let example = serde_json::json!({
        "legalName": "OOO \"Romashka Media\"", "inn": "7712345672", "kpp": "771201001",
        "ogrn": "1027700123450", "legalAddress": "123112, Moscow", "postalAddress": null,
        "bankName": "AO \"Example Bank\"", "bic": "044525987",
        "settlementAccount": "40702810500000012345",
        "correspondentAccount": "30101810900000000987",
        "updatedAt": "2026-11-20T08:30:00.000Z"
    });
    std::fs::write(&file, example.to_string()).unwrap();
    let file = file.to_str().unwrap();
    let output = run(setup.cmd(&["--format", "human", "requisites", "set", "--file", file])).await;
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with(
            "error: while setting the requisites: VALIDATION_ERROR (400 Bad Request): Requisites \
             are not valid (--inn: INN check digit does not match) [request req_"
        ),
        "{stderr}"
    );
    // A flag wins over the file's key.
    let set = setup
        .json(&["requisites", "set", "--file", file, "--inn", "7712345671"])
        .await;
    assert_eq!(set["inn"], "7712345671");
    assert_eq!(set["legalAddress"], "123112, Moscow");
}

#[tokio::test]
async fn every_operation_of_the_contract_has_a_command_or_a_reason_in_the_readme() {
    let contract = mediagen_openapi::document().expect("the contract");
    let mut operations: Vec<String> = contract["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|path| path.as_object().unwrap().values())
        .filter_map(|operation| operation["operationId"].as_str().map(str::to_owned))
        .collect();
    operations.sort();
    let table = section(&readme(), "Every operation");
    let rows: Vec<(&str, &str)> = table
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|row| row.split_once("` | "))
        .map(|(operation, rest)| (operation, rest.trim_end_matches(" |")))
        .collect();
    let mut listed: Vec<String> = rows.iter().map(|(op, _)| (*op).to_owned()).collect();
    listed.sort();
    assert_eq!(listed, operations, "the table and the contract differ");

    for (operation, told) in rows {
        // The command, up to its first placeholder or option.
        let command: Vec<&str> = told
            .split('`')
            .nth(1)
            .filter(|quoted| quoted.starts_with("mediagen "))
            .map(|quoted| {
                quoted
                    .split_whitespace()
                    .skip(1)
                    .take_while(|word| word.chars().all(|c| c.is_ascii_lowercase()))
                    .collect()
            })
            .unwrap_or_default();
        assert!(!command.is_empty(), "{operation}: no command named: {told}");
        if told.starts_with("none") {
            assert!(
                told.contains(':'),
                "{operation}: none, and no reason: {told}"
            );
        }
        let help = run(bare(&[command.clone(), vec!["--help"]].concat())).await;
        assert!(
            help.status.success(),
            "{operation}: `mediagen {}` is no command",
            command.join(" ")
        );
    }
}
