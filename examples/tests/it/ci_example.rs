//! How to test your own code against the mock in CI: a `#[tokio::test]` that starts
//! `MockServer`, makes a user, and checks what your code did and what it cost.

use std::path::{Path, PathBuf};

use mediagen::{Client, ErrorKind, GenerationRequest};
use mediagen_mock_server::MockServer;

/// Your application's code under test: makes a thumbnail and saves it in `dir`.
async fn make_thumbnail(client: &Client, subject: &str, dir: &Path) -> anyhow::Result<PathBuf> {
    let request = GenerationRequest::new("flux-schnell", format!("a thumbnail of {subject}"))
        .aspect_ratio("1:1");
    let image = client.generations().create_and_wait(request).await?;
    let mut paths = client.files().download_outputs(&image, dir).await?;
    Ok(paths.remove(0))
}

#[tokio::test]
async fn a_thumbnail_is_saved_and_costs_one_image() {
    // A clock 100 times faster than real time: the 4-second image takes 40 ms.
    let mock = MockServer::builder().real_clock(100.0).start().await;
    let user = mock.create_user(10.0).unwrap();
    let client = Client::new(mock.uri(), &user.api_key).unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ci-example");
    std::fs::create_dir_all(&dir).unwrap();

    let path = make_thumbnail(&client, "a lighthouse", &dir).await.unwrap();

    assert!(std::fs::read(&path).unwrap().starts_with(b"\x89PNG"));
    assert_eq!(mock.balance(user.user_id), Some((7.5, 0.0)));
    mock.check_ledger().unwrap();
    // Our own client is held to the mock's verdict on the rules for clients.
    mock.assert_clean();
}

#[tokio::test]
async fn without_money_the_thumbnail_fails_with_the_amount_missing() {
    let mock = MockServer::start().await;
    let user = mock.create_user(1.0).unwrap();
    let client = Client::new(mock.uri(), &user.api_key).unwrap();

    let err = make_thumbnail(&client, "a lighthouse", Path::new("."))
        .await
        .unwrap_err();

    let api = err
        .downcast_ref::<mediagen::Error>()
        .and_then(mediagen::Error::api)
        .expect("a service error");
    assert_eq!(
        api.kind,
        ErrorKind::InsufficientBalance {
            required: Some(2.5),
            available: Some(1.0)
        }
    );
    // Our own client is held to the mock's verdict on the rules for clients.
    mock.assert_clean();
}
