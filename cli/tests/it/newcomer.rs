//! What a new user meets in the first hour: each error said once with the hint that
//! fits it, the examples of the README as the command prints them, refusals that say
//! what a value should be, completions, short help that fits a screen, and `-v`
//! telling transfers.

use std::path::PathBuf;

use mediagen_mock_server::MockServer;

use crate::{Background, Setup, bare, envelope, process, run, scratch, text};

/// A request id or a UUID, as the golden file keeps them: they change from run to run.
fn steady(text: &str) -> String {
    let mut out = String::new();
    for word in text.split_inclusive(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    {
        let (token, rest) = word.split_at(
            word.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(word.len()),
        );
        if token.starts_with("req_") {
            out.push_str("req_…");
        } else if uuid::Uuid::parse_str(token).is_ok() {
            out.push('…');
        } else {
            out.push_str(token);
        }
        out.push_str(rest);
    }
    out
}

/// The lines that start with `error:` or `hint:`.
fn told(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|line| line.starts_with("error:") || line.trim_start().starts_with("hint:"))
        .map(str::to_owned)
        .collect()
}

/// Ctrl-C during `generate --wait`: what the command tells, and its exit code.
async fn interrupted(cmd: std::process::Command) -> (Option<i32>, String, String) {
    let mut background = Background::spawn(cmd);
    let started = background.wait_for("started ").await;
    let id = started
        .split_whitespace()
        .nth(1)
        .expect("started <id>")
        .to_owned();
    // The wait is under way once its first status is told.
    background.wait_for(&format!("{id}: ")).await;
    background.signal("INT");
    // What comes after the lines read so far (the started line, the first status).
    let mut rest = String::new();
    while let Some(line) = background.stderr.next_line().await.expect("read stderr") {
        rest.push_str(&line);
        rest.push('\n');
    }
    let output = background.finish().await;
    (output.status.code(), id, rest)
}

#[tokio::test]
async fn each_error_of_the_first_hour_is_said_once_with_the_hint_that_fits() {
    let poor = Setup::with(MockServer::start().await, 1.0);
    let setup = Setup::new().await;
    fn human<'a>(args: &[&'a str]) -> Vec<&'a str> {
        [&["--format", "human"], args].concat()
    }
    let cases: Vec<(&Setup, Vec<&str>)> = vec![
        (&poor, human(&["generate", "-m", "flux-schnell", "a fox"])),
        (&setup, human(&["generate", "-m", "nope", "a fox"])),
        (
            &setup,
            human(&["webhooks", "create", "http://127.0.0.1:3000/hooks"]),
        ),
        (
            &setup,
            human(&[
                "webhooks",
                "create",
                "https://example.com/h",
                "-e",
                "generation.started",
            ]),
        ),
        (&setup, human(&["invoices", "create", "25000"])),
        (&setup, human(&["list", "--status", "BOGUS"])),
        (&setup, human(&["api", "GET", "/v1/nothing"])),
        (&setup, human(&["get", "123"])),
        (&setup, human(&["topup", "-5"])),
        (&setup, human(&["history", "--from", "yesterday"])),
    ];
    let mut golden = String::new();
    let mut all = Vec::new();
    for (setup, args) in &cases {
        let output = run(setup.cmd(args)).await;
        assert!(!output.status.success(), "{args:?}");
        let stderr = text(&output.stderr);
        let lines = told(&stderr);
        assert!(!lines.is_empty(), "{args:?}: {stderr}");
        golden.push_str(&format!("$ mediagen {}\n", args[2..].join(" ")));
        for line in &lines {
            golden.push_str(&steady(line));
            golden.push('\n');
        }
        golden.push('\n');
        all.extend(lines);
    }

    // A refused login reads the key it was given, not the environment.
    let mut login = process(&["--format", "human", "login"]);
    login
        .env("MEDIAGEN_BASE_URL", setup.mock.uri())
        .stdin(std::process::Stdio::piped());
    let login = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = login
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn login");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"not-a-key\n")
            .expect("write the key");
        child.wait_with_output().expect("wait for login")
    })
    .await
    .unwrap();
    let lines = told(&text(&login.stderr));
    assert!(
        lines.iter().any(|l| l.contains("AUTHENTICATION_ERROR")),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("MEDIAGEN_API_KEY")),
        "{lines:?}"
    );
    golden.push_str("$ mediagen login   # typing not-a-key\n");
    for line in &lines {
        golden.push_str(&steady(line));
        golden.push('\n');
    }
    golden.push('\n');
    all.extend(lines);

    let (code, id, stderr) = interrupted(setup.process(&[
        "--format",
        "human",
        "generate",
        "--wait",
        "-m",
        "flux-schnell",
        "a fox",
    ]))
    .await;
    assert_eq!(code, Some(130), "{stderr}");
    let lines = told(&stderr);
    assert_eq!(
        lines,
        [
            "error: INTERRUPTED: stopped waiting (the generation goes on on the service)"
                .to_owned(),
            format!("  hint: resume with `mediagen get {id} --wait`"),
        ]
    );
    golden.push_str("$ mediagen generate --wait -m flux-schnell a fox   # then Ctrl-C\n");
    for line in &lines {
        golden.push_str(&steady(line));
        golden.push('\n');
    }
    all.extend(lines);
    crate::golden::check("newcomer-errors.txt", &golden);

    // Each fact once: no line pair says an amount or the service's message twice.
    assert_eq!(golden.matches("2.50 RUB").count(), 1, "{golden}");
    assert_eq!(
        golden
            .matches("Private IP addresses are not allowed")
            .count(),
        1
    );
    assert!(!golden.contains(
        "mediagen models SLUG` lists a model's parameters and their values\n\n$ mediagen list"
    ));

    // Every error and hint line the README shows is one the command prints.
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .expect("cli/README.md");
    let errors = readme
        .split("\n## Errors\n")
        .nth(1)
        .and_then(|section| section.split("\n## ").next())
        .expect("an Errors section");
    let shown: Vec<&str> = errors
        .lines()
        .filter(|line| line.starts_with("error:") || line.trim_start().starts_with("hint:"))
        .collect();
    assert!(shown.len() >= 8, "{shown:?}");
    for line in shown {
        let parts: Vec<&str> = line.split('…').collect();
        let printed = all.iter().any(|told| {
            let mut rest = told.as_str();
            parts
                .iter()
                .enumerate()
                .all(|(n, part)| match rest.find(part) {
                    Some(at) if n > 0 || at == 0 => {
                        rest = &rest[at + part.len()..];
                        true
                    }
                    _ => false,
                })
                && (parts.last().is_some_and(|p| p.is_empty()) || rest.is_empty())
        });
        assert!(
            printed,
            "the README shows a line the command does not print:\n{line}"
        );
    }
}

#[tokio::test]
async fn ctrl_c_with_the_embedded_mock_says_there_is_nothing_to_resume() {
    let mut cmd = process(&[
        "--mock",
        "--format",
        "human",
        "generate",
        "--wait",
        "-m",
        "kling-2-1",
        "-p",
        "duration=5",
        "waves",
    ]);
    cmd.env("TMPDIR", scratch("interrupt-embedded"));
    let (code, id, stderr) = interrupted(cmd).await;
    assert_eq!(code, Some(130), "{stderr}");
    let lines = told(&stderr);
    assert_eq!(lines[0], "error: INTERRUPTED: stopped waiting", "{stderr}");
    assert!(
        lines[1].contains("embedded mock") && lines[1].contains("run the command again"),
        "{stderr}"
    );
    assert!(
        !lines.concat().contains(&id),
        "no resume that cannot work: {stderr}"
    );
}

#[tokio::test]
async fn values_clap_refuses_say_what_they_should_be() {
    for (args, told) in [
        (&["get", "123"][..], "a generation id is a UUID, such as"),
        (&["cancel", "nope"][..], "a generation id is a UUID"),
        (&["files", "get", "x"][..], "a file id is a UUID"),
        (
            &["topup", "-5"][..],
            "an amount is a number of roubles above 0",
        ),
        (
            &["invoices", "create", "lots"][..],
            "an amount is a number of roubles above 0",
        ),
        (
            &["generate", "-m", "m", "--max-cost", "0", "p"][..],
            "an amount is a number of roubles",
        ),
        (
            &["summary", "--to", "soon"][..],
            "a time is RFC 3339, such as",
        ),
    ] {
        let output = run(bare(&[&["--format", "human"], args].concat())).await;
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = text(&output.stderr);
        assert!(stderr.contains(told), "{args:?}: {stderr}");
    }
    let output = run(bare(&["--color", "purple", "balance"])).await;
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        envelope(&output)["details"]["allowedValues"],
        serde_json::json!(["auto", "always", "never"])
    );
    // A date alone is a day from its midnight, UTC.
    let setup = Setup::new().await;
    let output = run(setup.cmd(&["history", "--from", "2026-11-01"])).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
}

#[tokio::test]
async fn every_closed_set_of_values_completes_in_the_shell() {
    let output = run(bare(&["completions", "bash"])).await;
    assert!(output.status.success());
    let script = text(&output.stdout);
    for values in [
        "PENDING PROCESSING SUCCEEDED FAILED CANCELLED",
        "TOPUP",
        "generation.completed generation.failed generation.* *",
        "GET POST PUT PATCH DELETE",
        "human json jsonl",
        "real manual",
        "full minimal extra",
    ] {
        assert!(script.contains(values), "no completion for {values}");
    }
    // An open set: a status a newer service knows goes to it as typed.
    let setup = Setup::new().await;
    let output = run(setup.cmd(&["list", "--status", "ARCHIVED"])).await;
    assert_eq!(
        envelope(&output)["code"],
        "VALIDATION_ERROR",
        "sent, and refused by the service"
    );
}

/// The commands below `args`, from the Commands list of its help.
fn subcommands(help: &str) -> Vec<String> {
    help.split("\nCommands:\n")
        .nth(1)
        .map(|list| {
            list.lines()
                .take_while(|line| line.starts_with("  "))
                .filter(|line| !line.starts_with("   "))
                .filter_map(|line| line.split_whitespace().next())
                .filter(|name| *name != "help")
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn every_short_help_fits_a_screen_with_the_global_options_on_one_heading() {
    let mut queue: Vec<Vec<String>> = vec![vec![]];
    let mut seen = 0;
    while let Some(path) = queue.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("-h");
        let mut cmd = process(&args);
        cmd.env("COLUMNS", "80");
        let output = run(assert_cmd::Command::from_std(cmd)).await;
        assert!(output.status.success(), "{args:?}");
        let help = text(&output.stdout);
        seen += 1;
        for line in help.lines() {
            assert!(
                line.chars().count() <= 80,
                "{args:?}: wider than 80: {line}"
            );
        }
        for sub in subcommands(&help) {
            let mut next = path.clone();
            next.push(sub);
            queue.push(next);
        }
        if path.is_empty() {
            assert!(
                help.contains("MEDIAGEN_BASE_URL") && help.contains("MEDIAGEN_API_KEY"),
                "{help}"
            );
            continue;
        }
        assert!(
            !help.contains("--version"),
            "{args:?}: -V belongs to the top only"
        );
        let heading = help
            .find("Global options (`mediagen --help` tells them):")
            .unwrap_or_else(|| panic!("{args:?}: no Global options heading:\n{help}"));
        assert!(
            !help[..heading].contains("--api-key"),
            "{args:?}: a global option described"
        );
        if path != ["mock"] {
            assert!(
                help.lines().count() <= 24,
                "{args:?}: {} lines:\n{help}",
                help.lines().count()
            );
        }
    }
    assert!(seen > 35, "walked {seen} commands");
}

/// `mediagen mock` takes `mediagen-mock`'s guard: on an address other than
/// loopback, no start without an admin token or `--open-control`, told before
/// it binds.
#[tokio::test]
async fn the_mock_refuses_an_open_control_api_on_the_network_naming_both_options() {
    let output = run(bare(&["mock", "--listen", "0.0.0.0:0"])).await;
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    let said = text(&output.stderr);
    assert!(said.contains("--admin-token"), "{said}");
    assert!(said.contains("--open-control"), "{said}");
    assert!(
        !text(&output.stdout).contains("listening on"),
        "it never listened"
    );
}

#[tokio::test]
async fn the_mocks_help_shows_defaults_and_environment_variables_by_name() {
    let output = run(bare(&["mock", "--help"])).await;
    assert!(output.status.success());
    let help = text(&output.stdout);
    crate::golden::check("mock-help.txt", &help);
    assert!(!help.contains("=]"), "an env var with a dangling =");
    assert!(help.contains("[default: 127.0.0.1:8080]"));
    assert!(help.contains("[env: MEDIAGEN_MOCK_RATE_LIMITS]"));
    assert!(!help.contains("on:  On") && !help.contains("off: Off"));
    // Defaults are told, not imposed: a config file's value still wins over them.
    // `--config` is the mock's file, as for `mediagen-mock`; mediagen's own, named
    // in MEDIAGEN_CONFIG, is not the mock's to read.
    let dir = scratch("mock-config-wins");
    let config = dir.join("mock.toml");
    std::fs::write(&config, "demo-balance-rub = 7.0\n").unwrap();
    let profiles = dir.join("config.toml");
    std::fs::write(&profiles, "default_profile = \"local\"\n").unwrap();
    let mut mock = process(&["mock", "--port", "0", "--config", config.to_str().unwrap()]);
    mock.env("TMPDIR", &dir).env("MEDIAGEN_CONFIG", &profiles);
    let mut background = Background::spawn(mock);
    // The mock tells where it listens and its demo key on stdout.
    let stdout = background.child.stdout.take().expect("piped stdout");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let mut value_after = async |prefix: &str| {
        while let Some(line) = lines.next_line().await.expect("read stdout") {
            if line.contains(prefix) {
                return line.split_whitespace().last().expect("a value").to_owned();
            }
        }
        panic!("the mock never told {prefix:?}");
    };
    let url = value_after("listening on ").await;
    let key = value_after("demo API key: ").await;
    let output = run(bare(&["--base-url", &url, "--api-key", &key, "balance"])).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let balance: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(balance["availableRub"], 7.0, "{balance}");

    // Without --config, MEDIAGEN_CONFIG alone does not become the mock's file.
    let mut mock = process(&["mock", "--port", "0"]);
    mock.env("TMPDIR", &dir).env("MEDIAGEN_CONFIG", &profiles);
    let mut background = Background::spawn(mock);
    let stdout = background.child.stdout.take().expect("piped stdout");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let first = lines.next_line().await.expect("read stdout");
    assert!(
        first
            .as_deref()
            .is_some_and(|line| line.contains("listening on ")),
        "{first:?}: {:?}",
        background.stderr.next_line().await
    );
}

#[tokio::test]
async fn verbose_tells_the_download_of_a_result_without_its_url() {
    let setup = Setup::fast().await;
    let dir = scratch("verbose-download");
    let output = run(setup.cmd(&[
        "-v",
        "generate",
        "--wait",
        "-m",
        "flux-schnell",
        "a fox",
        "-o",
        dir.to_str().unwrap(),
    ]))
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    let line = stderr
        .lines()
        .find(|line| line.starts_with("GET (storage URL) 200 · download of "))
        .unwrap_or_else(|| panic!("no download line: {stderr}"));
    let bytes: u64 = line
        .trim_start_matches("GET (storage URL) 200 · download of ")
        .trim_end_matches(" bytes")
        .parse()
        .expect("a size");
    let saved: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().metadata().unwrap().len())
        .sum();
    assert_eq!(bytes, saved);
    assert!(
        !stderr.contains("/outputs/"),
        "a storage URL on stderr: {stderr}"
    );

    let file = dir.join("cat.png");
    std::fs::write(&file, b"\x89PNG\r\n\x1a\n").unwrap();
    let output = run(setup.cmd(&["-v", "files", "upload", file.to_str().unwrap()])).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("PUT (storage URL) 200"),
        "{}",
        text(&output.stderr)
    );
}
