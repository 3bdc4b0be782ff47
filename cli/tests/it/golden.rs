//! Help texts and tables compared with the files in tests/golden; run with
//! UPDATE_GOLDEN=1 to rewrite them after a deliberate change, and review the diff.

use std::path::PathBuf;

use crate::{Setup, bare, run, text};

fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).expect("write the golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("{}: {err}; run with UPDATE_GOLDEN=1", path.display()));
    assert_eq!(
        actual, expected,
        "{name} differs from tests/golden (UPDATE_GOLDEN=1 rewrites it)"
    );
}

async fn help(args: &[&str], name: &str) {
    let output = run(bare(args)).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    check(name, &text(&output.stdout));
}

#[tokio::test]
async fn the_main_help_lists_every_command_and_the_exit_codes() {
    help(&["--help"], "help.txt").await;
}

#[tokio::test]
async fn generate_help_shows_every_option() {
    help(&["generate", "--help"], "generate-help.txt").await;
}

#[tokio::test]
async fn webhooks_help_lists_the_endpoint_commands_and_the_tools() {
    help(&["webhooks", "--help"], "webhooks-help.txt").await;
    help(
        &["webhooks", "verify", "--help"],
        "webhooks-verify-help.txt",
    )
    .await;
    help(
        &["webhooks", "listen", "--help"],
        "webhooks-listen-help.txt",
    )
    .await;
}

#[tokio::test]
async fn the_catalog_table_for_people() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&["--format", "human", "models"])).await;
    assert!(output.status.success());
    check("models.txt", &text(&output.stdout));
}

#[tokio::test]
async fn one_models_parameters_and_prices_for_people() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&["--format", "human", "models", "flux-schnell"])).await;
    assert!(output.status.success());
    check("models-flux-schnell.txt", &text(&output.stdout));
}
