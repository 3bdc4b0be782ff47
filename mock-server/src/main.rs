use anyhow::Context;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let addr = std::env::var("MEDIAGEN_MOCK_LISTEN").unwrap_or_else(|_| "127.0.0.1:8080".into());
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .with_context(|| format!("while binding {addr}"))?;
    println!(
        "mediagen-mock listening on http://{}",
        listener.local_addr()?
    );
    mediagen_mock_server::run(listener)
        .await
        .context("while serving")
}
