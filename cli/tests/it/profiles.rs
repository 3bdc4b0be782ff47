//! `login` and `config set`/`get`: profiles of the config file written by the command.

use std::path::Path;

use serde_json::Value;

use crate::{Setup, bare, envelope, run, scratch, text};

/// `mediagen --config <path> <args>`, with nothing else in the environment.
fn with_config(config: &Path, args: &[&str]) -> assert_cmd::Command {
    bare(&[&["--config", config.to_str().unwrap()], args].concat())
}

#[tokio::test]
async fn login_with_a_good_key_saves_a_profile_only_its_owner_can_read() {
    let setup = Setup::new().await;
    let config = scratch("login-good").join("mediagen").join("config.toml");
    let mut login = with_config(
        &config,
        &["--json", "--base-url", &setup.mock.uri(), "login"],
    );
    // A pipe instead of a terminal: the key is read from stdin.
    login.write_stdin(format!("{}\n", setup.key));

    let output = run(login).await;

    assert!(output.status.success(), "{}", text(&output.stderr));
    let told: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(told["profile"], "default");
    assert!(
        !text(&output.stdout).contains(&setup.key),
        "the key is never printed whole"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&config).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "only its owner reads the key");
    }
    // The profile alone now reaches the service with the key.
    let balance = run(with_config(&config, &["balance"])).await;
    assert!(balance.status.success(), "{}", text(&balance.stderr));
}

#[tokio::test]
async fn login_with_a_bad_key_writes_nothing_and_exits_3() {
    let setup = Setup::new().await;
    let config = scratch("login-bad").join("config.toml");
    let mut login = with_config(&config, &["--base-url", &setup.mock.uri(), "login"]);
    login.write_stdin("mg_live_nobody_secret\n");

    let output = run(login).await;

    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    assert_eq!(envelope(&output)["code"], "AUTHENTICATION_ERROR");
    assert!(!config.exists(), "nothing is written");
}

#[tokio::test]
async fn config_set_and_get_round_trip_and_keep_the_files_comments() {
    let config = scratch("config-set").join("config.toml");
    std::fs::write(
        &config,
        "# kept by hand\n[profiles.ci]\nbase_url = \"http://127.0.0.1:1\" # the old one\n",
    )
    .unwrap();
    let set = |args: &[&str]| {
        let args: Vec<&str> = ["--profile", "ci", "config", "set"]
            .iter()
            .chain(args)
            .copied()
            .collect();
        run(with_config(&config, &args))
    };
    let get = |key: &str| {
        let output = run(with_config(
            &config,
            &["--format", "human", "--profile", "ci", "config", "get", key],
        ));
        async move {
            let output = output.await;
            assert!(output.status.success(), "{}", text(&output.stderr));
            text(&output.stdout)
        }
    };

    assert!(
        set(&["base_url", "http://127.0.0.1:8080"])
            .await
            .status
            .success()
    );
    let mut key = with_config(
        &config,
        &["--profile", "ci", "config", "set", "api_key", "-"],
    );
    key.write_stdin("mg_live_pub123_s3cr3t\n");
    let key = run(key).await;
    assert!(key.status.success(), "{}", text(&key.stderr));
    assert!(
        !text(&key.stdout).contains("s3cr3t"),
        "{}",
        text(&key.stdout)
    );

    assert_eq!(get("base_url").await, "http://127.0.0.1:8080\n");
    assert_eq!(
        get("api_key").await,
        "mg_live_pub123_…\n",
        "never the secret"
    );
    assert_eq!(get("default_profile").await, "", "nothing when not set");
    // The answer names the profile that is now the default, not the one in use.
    let made_default = set(&["default_profile", "local"]).await;
    assert!(made_default.status.success());
    let answer: Value = serde_json::from_slice(&made_default.stdout).unwrap();
    assert_eq!(answer["profile"], "local", "{answer}");
    assert_eq!(get("default_profile").await, "local\n");
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(written.contains("# kept by hand"), "{written}");
    assert!(
        written.contains("api_key = \"mg_live_pub123_s3cr3t\""),
        "{written}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&config).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let shown = run(with_config(&config, &["--profile", "ci", "config"])).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["baseUrl"], "http://127.0.0.1:8080");
}

#[tokio::test]
async fn config_refuses_unknown_keys_and_unusable_values_as_usage() {
    let config = scratch("config-refuses").join("config.toml");
    for args in [
        &["config", "set", "colour", "red"][..],
        &["config", "get", "api_secret"],
        &["config", "set", "base_url", "ftp://example.com"],
        &["config", "set", "api_key", "two words"],
    ] {
        let output = run(with_config(&config, args)).await;
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(envelope(&output)["message"].is_string(), "{args:?}");
    }
    assert!(!config.exists(), "nothing is written");
}
