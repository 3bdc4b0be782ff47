//! The pace every `mediagen` on one host shares: the service counts its
//! general limit per address, so processes behind one address draw on one
//! window. Each test gives the processes a runtime directory of its own.

use std::path::Path;
use std::process::Stdio;

use mediagen_mock_server::MockServer;

use crate::{Setup, run, scratch, text};

fn manifest(dir: &Path, name: &str, count: usize) -> String {
    let path = dir.join(name);
    let lines: String = (1..=count)
        .map(|n| format!("a fox of {name}, number {n}\n"))
        .collect();
    std::fs::write(&path, lines).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn two_batches_run_at_once_by_two_users_of_one_host_meet_no_429() {
    let setup = Setup::with(MockServer::builder().real_clock(20.0).start().await, 1000.0);
    let other_key = setup.mock.create_user(1000.0).unwrap().api_key;
    let dir = scratch("shared-pace-two-batches");
    let runtime = dir.join("runtime");
    std::fs::create_dir(&runtime).unwrap();

    // 20 generations each: about 84 requests, more than one minute's 60.
    let batches = [("first.txt", &setup.key), ("second.txt", &other_key)].map(|(name, key)| {
        let manifest = manifest(&dir, name, 20);
        let mut command = tokio::process::Command::from(setup.process(&[
            "batch",
            "-m",
            "flux-schnell",
            manifest.as_str(),
        ]));
        command
            .env("MEDIAGEN_API_KEY", key)
            .env("XDG_RUNTIME_DIR", &runtime)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command.spawn().unwrap()
    });
    for batch in batches {
        let output = batch.wait_with_output().await.unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
    }

    let requests = setup.mock.list_requests();
    assert!(requests.len() > 60, "only {} requests", requests.len());
    let refused = requests.iter().filter(|r| r.status == Some(429)).count();
    assert_eq!(refused, 0, "the mock answered 429 {refused} time(s)");
}

#[tokio::test]
async fn the_shared_pace_lives_in_the_runtime_directory_unless_turned_off() {
    let setup = Setup::new().await;
    let dir = scratch("shared-pace-where");
    let (shared, own) = (dir.join("shared"), dir.join("own"));

    let mut command = setup.cmd(&["models"]);
    command.env("XDG_RUNTIME_DIR", &shared);
    let output = run(command).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let state = std::fs::read_to_string(shared.join("mediagen/pace-1.json")).unwrap();
    assert!(state.contains(&setup.mock.uri()), "{state}");

    let mut command = setup.cmd(&["models"]);
    command
        .env("XDG_RUNTIME_DIR", &own)
        .env("MEDIAGEN_SHARED_PACE", "off");
    let output = run(command).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(!own.join("mediagen").exists());
}

#[tokio::test]
async fn a_shared_pace_setting_that_is_neither_on_nor_off_is_refused_by_name() {
    let setup = Setup::new().await;
    let mut command = setup.cmd(&["models"]);
    command.env("MEDIAGEN_SHARED_PACE", "sometimes");

    let output = run(command).await;

    // A usage mistake: exit 2, and a hint about the variable, not the key.
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("MEDIAGEN_SHARED_PACE=\"sometimes\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("set MEDIAGEN_SHARED_PACE to on") && stderr.contains("or off"),
        "{stderr}"
    );
    assert!(!stderr.contains("API key"), "{stderr}");
    assert!(setup.mock.list_requests().is_empty());
}
