//! The mock of the service inside the command: `--mock` and `mediagen mock`. Both
//! come with the default cargo feature `mock`; a build without it is smaller, and
//! there both say where to get the mock instead.

use crate::cli::mock::MockArgs;
#[cfg(not(feature = "mock"))]
use crate::error::{Exit, Failure};

/// The clock of the mock behind `--mock`: twenty times faster than real time, so a
/// video that takes two minutes on the service takes six seconds here.
#[cfg(feature = "mock")]
const EMBEDDED_MOCK_TIME_SCALE: f64 = 20.0;

/// The mock behind `--mock`, started on first use; its server stops when this drops.
#[derive(Debug, Default)]
pub struct Embedded {
    #[cfg(feature = "mock")]
    server: tokio::sync::OnceCell<mediagen_mock_server::MockServer>,
}

impl Embedded {
    /// The mock's base URL and its demo user's API key.
    #[cfg(feature = "mock")]
    pub async fn connect(&self) -> anyhow::Result<(String, String)> {
        let mock = self
            .server
            .get_or_init(|| {
                mediagen_mock_server::MockServer::builder()
                    .real_clock(EMBEDDED_MOCK_TIME_SCALE)
                    // `webhooks listen --register` points an endpoint at 127.0.0.1.
                    .config(|config| config.allow_private_webhooks = true)
                    .start()
            })
            .await;
        Ok((mock.uri(), mock.demo_api_key().to_owned()))
    }

    /// The world of the mock, once started: its verdict judges this command's traffic.
    #[cfg(all(feature = "mock", feature = "mcp"))]
    pub fn world(&self) -> Option<mediagen_mock_server::World> {
        self.server.get().map(|mock| mock.default_world().clone())
    }

    /// Refuses: this build has no mock.
    #[cfg(not(feature = "mock"))]
    pub async fn connect(&self) -> anyhow::Result<(String, String)> {
        Err(not_built().into())
    }
}

/// `mediagen mock`: the mock server in the foreground, as `mediagen-mock` runs it.
#[cfg(feature = "mock")]
pub async fn run(args: MockArgs) -> anyhow::Result<()> {
    use crate::cli::mock::MockCommand;
    use crate::error::{Exit, Failure};
    match args.command {
        Some(MockCommand::Judge(judge)) => return self::judge(*judge).await,
        // A client of a running mock, dispatched with the other clients.
        Some(MockCommand::Logs(_)) => unreachable!("cmd::dispatch runs `mock logs`"),
        None => {}
    }
    let mut options = args.options;
    if let Some(port) = args.port {
        options.listen = Some(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let config = mediagen_mock_server::Config::load(args.config.as_deref(), options)
        .map_err(|err| Failure::new(Exit::Usage, "CONFIG_ERROR", format!("{err:#}")))?;
    mediagen_mock_server::serve(config).await
}

/// `mediagen mock judge`: `mediagen-mock judge` inside mediagen. It exits with
/// the judge's code (the command's own, 1 for the verdict, 125 to 127 for the
/// judge; its `--help` lists them), not one of mediagen's, and has told on
/// stderr whatever went wrong.
#[cfg(feature = "mock")]
async fn judge(args: crate::cli::mock::JudgeCommand) -> anyhow::Result<()> {
    let code =
        mediagen_mock_server::judge::run(args.judge, args.config.as_deref(), args.options).await;
    if code == 0 {
        return Ok(());
    }
    std::io::Write::flush(&mut std::io::stdout()).ok();
    std::process::exit(i32::from(code));
}

/// Refuses: this build has no mock.
#[cfg(not(feature = "mock"))]
pub async fn run(_args: MockArgs) -> anyhow::Result<()> {
    Err(not_built().into())
}

/// What a build without the mock says to `--mock` and `mediagen mock`.
#[cfg(not(feature = "mock"))]
fn not_built() -> Failure {
    Failure::new(
        Exit::Usage,
        "MOCK_NOT_BUILT",
        "this mediagen was built without the mock (the cargo feature `mock` is off)",
    )
    .hint(
        "install mediagen with the default features (`cargo install mediagen-cli`), or run \
         the mock on its own and point --base-url at it: `mediagen-mock` from the \
         mediagen-mock-server crate (`cargo install mediagen-mock-server`), or `pip install \
         ./mock-server/python`",
    )
}
