//! A mock reachable from the network keeps its control API closed: it will not
//! start open on an address other than loopback, it prints the address it
//! really listens on, and a world's own token opens that world alone.
//!
//! The tests bind 0.0.0.0 only to see what the mock refuses or prints; every
//! request goes to 127.0.0.1.

use std::io::BufRead;
use std::process::{Command, Stdio};

use mediagen_mock_server::MockServer;
use reqwest::Method;
use serde_json::Value;

fn mock_binary(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mediagen-mock"));
    command.args(args).env("RUST_LOG", "warn");
    for name in ["MEDIAGEN_MOCK_ADMIN_TOKEN", "MEDIAGEN_MOCK_OPEN_CONTROL"] {
        command.env_remove(name);
    }
    command
}

#[test]
fn on_an_address_other_than_loopback_it_refuses_to_start_without_a_token() {
    let output = mock_binary(&["--listen", "0.0.0.0:0"])
        .output()
        .expect("run mediagen-mock");
    assert!(!output.status.success());
    assert!(output.stdout.is_empty(), "it never listened");
    let said = String::from_utf8_lossy(&output.stderr);
    for option in ["--admin-token", "--open-control", "0.0.0.0:0"] {
        assert!(said.contains(option), "{option} in {said}");
    }
}

#[test]
fn it_prints_the_address_it_really_listens_on() {
    let mut child = mock_binary(&["--listen", "0.0.0.0:0", "--open-control"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mediagen-mock");
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut next = || lines.next().expect("a line").expect("text");
    let first = next();
    let port = first
        .strip_prefix("mediagen-mock listening on http://0.0.0.0:")
        .unwrap_or_else(|| panic!("{first}"));
    assert!(port.parse::<u16>().is_ok_and(|p| p > 0), "{first}");
    assert!(next().starts_with("demo API key: "));
    assert_eq!(
        next(),
        format!(
            "  from this machine: http://127.0.0.1:{port}; from others: this host's addresses, port {port}"
        )
    );
    // Open beyond loopback is a choice the mock states, with the way to close it.
    let control = next();
    assert!(
        control.starts_with("  control API (/_mock/): open to anyone who reaches 0.0.0.0:")
            && control.contains("MEDIAGEN_MOCK_ADMIN_TOKEN"),
        "{control}"
    );
    child.kill().ok();
    child.wait().ok();
}

async fn call(method: Method, url: &str, token: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new().request(method, url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the mock answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_worlds_own_token_opens_that_world_alone() {
    let mock = MockServer::builder()
        .config(|c| c.admin_token = Some("root-secret".into()))
        .start()
        .await;
    let root = mock.uri();
    let make = || async {
        let (status, world) = call(
            Method::POST,
            &format!("{root}/_mock/worlds"),
            Some("root-secret"),
        )
        .await;
        assert_eq!(status, 201, "{world}");
        let token = world["controlToken"].as_str().expect("a token").to_owned();
        let base = world["baseUrl"].as_str().expect("a base URL").to_owned();
        let id = world["id"].as_str().expect("an id").to_owned();
        (id, base, token)
    };
    let (a_id, a, a_token) = make().await;
    let (b_id, b, b_token) = make().await;
    assert_ne!(a_token, b_token);

    let clock = |base: &str| format!("{base}/_mock/clock");
    assert_eq!(call(Method::GET, &clock(&a), Some(&a_token)).await.0, 200);
    assert_eq!(
        call(Method::GET, &clock(&a), Some("root-secret")).await.0,
        200
    );
    assert_eq!(call(Method::GET, &clock(&b), Some(&a_token)).await.0, 401);
    assert_eq!(
        call(Method::GET, &clock(&root), Some(&a_token)).await.0,
        401
    );
    let (status, _) = call(Method::GET, &format!("{b}/_mock/snapshot"), Some(&a_token)).await;
    assert_eq!(status, 401, "nor read another's snapshot");
    let worlds = format!("{root}/_mock/worlds");
    assert_eq!(call(Method::GET, &worlds, Some(&a_token)).await.0, 401);
    assert_eq!(call(Method::POST, &worlds, Some(&a_token)).await.0, 401);
    // A job cleans up after itself, and no other's.
    let (status, _) = call(Method::DELETE, &format!("{worlds}/{b_id}"), Some(&a_token)).await;
    assert_eq!(status, 401);
    let (status, _) = call(Method::DELETE, &format!("{worlds}/{a_id}"), Some(&a_token)).await;
    assert_eq!(status, 204);
    assert_eq!(call(Method::GET, &clock(&b), Some(&b_token)).await.0, 200);
}

#[tokio::test]
async fn without_an_admin_token_a_world_has_no_token_of_its_own() {
    let mock = MockServer::start().await;
    let (status, world) = call(Method::POST, &format!("{}/_mock/worlds", mock.uri()), None).await;
    assert_eq!(status, 201);
    assert!(world.get("controlToken").is_none(), "{world}");
}
