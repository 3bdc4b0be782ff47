//! What holds for every command: the embedded mock, profiles, colour, JSON by
//! default for scripts, completions, a quiet broken pipe, and `mediagen mock`.

use crate::{Background, Setup, bare, run, scratch, text};

#[tokio::test]
async fn mock_flag_runs_the_main_job_with_no_account() {
    let dir = scratch("embedded-mock");
    let out = dir.join("out");
    // The README's quick start, for a script and for people.
    let quick_start = |format: &'static str| {
        bare(&[
            "--mock",
            "--format",
            format,
            "generate",
            "--wait",
            "-m",
            "flux-schnell",
            "a lighthouse at dusk",
            "--output",
            out.to_str().unwrap(),
        ])
    };
    let output = run(quick_start("json")).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let done: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(done["status"], "SUCCEEDED");
    let saved = std::fs::read_dir(&out).unwrap().count();
    assert_eq!(saved, 1);

    // For people: the saved file, and no URL of a mock that ended with the command.
    let output = run(quick_start("human")).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let shown = text(&output.stdout);
    assert!(
        shown.contains(&format!("saved {}", out.display())),
        "{shown}"
    );
    assert!(
        !shown.contains("http://"),
        "a URL that no longer answers: {shown}"
    );
}

/// A minimal image (distroless, `FROM scratch`) has no `/etc/ssl/certs`; the
/// TLS verifier then finds no roots. The command still runs, on the roots the
/// toolkit carries, instead of failing to make its HTTP clients.
#[tokio::test]
async fn a_system_without_ca_certificates_still_runs_the_main_job() {
    let mut cmd = bare(&[
        "--mock",
        "--format",
        "json",
        "generate",
        "--wait",
        "-m",
        "flux-schnell",
        "a lighthouse at dusk",
    ]);
    // rustls-native-certs reads only these when they are set.
    cmd.env("SSL_CERT_FILE", "/nonexistent/ca.pem")
        .env("SSL_CERT_DIR", "/nonexistent/certs");
    let output = run(cmd).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let done: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(done["status"], "SUCCEEDED");
}

#[tokio::test]
async fn output_is_json_when_stdout_is_not_a_terminal_and_a_table_when_asked() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&["models"])).await;
    let models: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("JSON by default in a pipe");
    assert!(
        models
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["slug"] == "flux-schnell")
    );
    let human = run(setup.cmd(&["--format", "human", "models"])).await;
    assert!(text(&human.stdout).starts_with("MODEL "));
}

#[tokio::test]
async fn colour_only_when_asked_or_on_a_terminal() {
    let setup = Setup::new().await;
    let coloured = run(setup.cmd(&["--format", "human", "--color", "always", "models"])).await;
    assert!(text(&coloured.stdout).contains("\x1b["));
    let plain = run(setup.cmd(&["--format", "human", "models"])).await;
    assert!(
        !text(&plain.stdout).contains("\x1b["),
        "a pipe gets no colour"
    );
    let mut no_color = setup.cmd(&["--format", "human", "--color", "never", "models"]);
    no_color.env("NO_COLOR", "1");
    assert!(!text(&run(no_color).await.stdout).contains("\x1b["));
}

#[tokio::test]
async fn profiles_of_the_config_file_give_the_key_and_the_base_url() {
    let setup = Setup::new().await;
    let dir = scratch("profiles");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "default_profile = \"ci\"\n\n[profiles.ci]\napi_key = \"{}\"\nbase_url = \"{}\"\n\n[profiles.other]\napi_key = \"mg_live_x_y\"\n",
            setup.key,
            setup.mock.uri()
        ),
    )
    .unwrap();
    let path = config.to_str().unwrap();

    let balance = run(bare(&["--config", path, "balance"])).await;
    assert!(balance.status.success(), "{}", text(&balance.stderr));

    let shown = run(bare(&["--config", path, "config"])).await;
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["profile"], "ci");
    assert_eq!(shown["baseUrlFrom"], "profile");
    let key_shown = shown["apiKeyShown"].as_str().unwrap();
    assert!(key_shown.ends_with("_…") && !setup.key.ends_with(&key_shown[key_shown.len() - 4..]));
    assert!(
        !text(&serde_json::to_vec(&shown).unwrap()).contains(&setup.key),
        "the secret part never shows"
    );

    // A flag or the environment wins over the profile.
    let mut cmd = bare(&["--config", path, "--profile", "other", "balance"]);
    cmd.env("MEDIAGEN_BASE_URL", setup.mock.uri());
    assert_eq!(
        run(cmd).await.status.code(),
        Some(3),
        "the other profile's key is refused"
    );

    let missing = run(bare(&["--config", path, "--profile", "nope", "balance"])).await;
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("profiles: ci, other"));
}

#[tokio::test]
async fn a_config_file_with_a_mistake_is_a_usage_error_naming_the_file() {
    let dir = scratch("bad-config");
    let config = dir.join("config.toml");
    std::fs::write(&config, "[profiles.ci]\napi_kee = \"x\"\n").unwrap();
    let output = run(bare(&["--config", config.to_str().unwrap(), "balance"])).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("config.toml is not a valid config file"));
}

#[tokio::test]
async fn completions_are_printed_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let output = run(bare(&["completions", shell])).await;
        assert!(output.status.success());
        assert!(text(&output.stdout).contains("mediagen"), "{shell}");
    }
}

#[tokio::test]
async fn a_closed_pipe_ends_the_command_quietly() {
    // The bash script is larger than a pipe's buffer, so writing meets the closed end.
    let script = format!(
        "'{}' completions bash | head -c 10 >/dev/null",
        env!("CARGO_BIN_EXE_mediagen")
    );
    let mut cmd = assert_cmd::Command::new("bash");
    cmd.args(["-o", "pipefail", "-c", &script]);
    let output = run(cmd).await;
    assert!(output.status.success(), "exit {:?}", output.status.code());
    assert_eq!(text(&output.stderr), "", "no panic and no message");
}

#[tokio::test]
async fn the_mock_command_serves_until_sigterm() {
    let mut cmd = crate::process(&[
        "mock",
        "--port",
        "0",
        "--demo-api-key",
        "mg_live_demo_secret",
    ]);
    cmd.env("RUST_LOG", "off");
    let mut mock = Background::spawn(cmd);
    let stdout = mock.child.stdout.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let first = lines.next_line().await.unwrap().expect("the address line");
    let url = first.rsplit(' ').next().unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{first}");

    let mut balance = bare(&["balance"]);
    balance
        .env("MEDIAGEN_BASE_URL", &url)
        .env("MEDIAGEN_API_KEY", "mg_live_demo_secret");
    let output = run(balance).await;
    assert!(output.status.success(), "{}", text(&output.stderr));

    mock.signal("TERM");
    let status = mock.child.wait().await.unwrap();
    assert!(status.success());
}
