//! `mock`: the options of `mediagen-mock` under the same names, plus `--port`.

#[cfg(feature = "mock")]
use std::path::PathBuf;

use clap::Args;

/// The mock's own config file is `--config` and `MEDIAGEN_MOCK_CONFIG`, as for
/// `mediagen-mock`; inside `mediagen mock` it takes the place of the global
/// `--config` (mediagen's own file, which the mock does not read).
#[cfg(feature = "mock")]
const CONFIG_ENV: &str = "MEDIAGEN_MOCK_CONFIG";

#[derive(Debug, Args)]
#[cfg_attr(feature = "mock", command(args_conflicts_with_subcommands = true))]
pub struct MockArgs {
    /// Port on 127.0.0.1 (0 picks a free one); --listen chooses the address too
    #[cfg(feature = "mock")]
    #[arg(short, long, conflicts_with = "listen")]
    pub port: Option<u16>,
    /// A TOML file of options (see the mock server's config.default.toml)
    // The id is the global `--config`'s: clap then leaves the global out of this
    // command instead of refusing two options of one name.
    #[cfg(feature = "mock")]
    #[arg(long = "config", alias = "mock-config", env = CONFIG_ENV, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[cfg(feature = "mock")]
    #[command(flatten)]
    pub options: mediagen_mock_server::config::Options,
    #[cfg(feature = "mock")]
    #[command(subcommand)]
    pub command: Option<MockCommand>,
    /// Options of a mock this build does not have: taken so that the answer is where
    /// to get the mock, not an unknown flag.
    #[cfg(not(feature = "mock"))]
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub ignored: Vec<String>,
}

/// `mediagen mock judge`: the same command as `mediagen-mock judge`.
#[cfg(feature = "mock")]
#[derive(Debug, clap::Subcommand)]
pub enum MockCommand {
    // Without a doc comment here: the help is the mock library's `JudgeArgs`'s.
    Judge(Box<JudgeCommand>),
    /// Show a running mock's live journal: requests, generation steps, ledger rows,
    /// webhook deliveries and verdict findings
    ///
    /// Reads GET {base URL}/_mock/events of the mock at --base-url (or MEDIAGEN_BASE_URL,
    /// or the profile's), which may be a world's baseUrl. A line per event, coloured on
    /// a terminal, and the events as JSON Lines in a pipe (--jq applies to each). With
    /// --follow it reconnects after a lost connection and resumes after the last event
    /// it printed, so nothing is lost or printed twice; it says so when it fell behind.
    ///
    ///   mediagen mock logs --base-url http://127.0.0.1:8080
    ///   mediagen mock logs -f --status 4xx
    ///   mediagen mock logs -f --history --generation 7d3f… --format jsonl
    #[command(verbatim_doc_comment)]
    Logs(LogsArgs),
}

/// `mediagen mock logs`.
#[cfg(feature = "mock")]
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Keep following, live; without it, print the history and end
    #[arg(short, long)]
    pub follow: bool,
    /// With --follow, start with the history
    ///
    /// What the mock's records tell of the time before: generation steps, ledger rows,
    /// webhook messages and attempts, top-ups, invoices and mails; not the requests, which
    /// the request log keeps (`GET /_mock/requests`).
    #[arg(long, requires = "follow")]
    pub history: bool,
    /// Only requests (and faults) of this status: 404, or a class such as 4xx
    #[arg(long, value_name = "STATUS", value_parser = crate::parse::status_filter)]
    pub status: Option<crate::parse::StatusFilter>,
    /// Only requests (and faults) whose path starts with this
    #[arg(long, value_name = "PREFIX")]
    pub path: Option<String>,
    /// Only events of these kinds: request, generation, attempt, …
    ///
    /// Comma-separated or repeated: request, fault, generation, ledger, message, attempt,
    /// topup, invoice, mail, clock, reset, verdict.finding, verdict.reset.
    #[arg(long, value_name = "KIND", value_delimiter = ',')]
    pub kind: Vec<String>,
    /// Only events of this generation: its steps, ledger rows, webhooks and requests
    #[arg(long, value_name = "ID", value_parser = crate::parse::generation_id)]
    pub generation: Option<uuid::Uuid>,
    /// The mock's admin token, or a world's control token
    #[arg(long, env = "MEDIAGEN_MOCK_ADMIN_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

// The options of `mediagen mock` that set up the judge's mock, then the judge's
// own, whose doc comment is the help (a doc comment here would take its place).
#[cfg(feature = "mock")]
#[derive(Debug, Args)]
#[command(mut_args = judge_help)]
pub struct JudgeCommand {
    /// A TOML file of options (see the mock server's config.default.toml)
    // The global `--config`'s id, as in `mock` itself.
    #[arg(long = "config", alias = "mock-config", env = CONFIG_ENV, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub options: mediagen_mock_server::config::Options,
    #[command(flatten)]
    pub judge: mediagen_mock_server::judge::JudgeArgs,
}

/// The help of `mediagen-mock judge`, but for `--json`, which is mediagen's
/// global option (JSON on stdout) here: the verdict's file is `--verdict-json`,
/// a name `mediagen-mock judge` takes too.
#[cfg(feature = "mock")]
fn judge_help(arg: clap::Arg) -> clap::Arg {
    let arg = mediagen_mock_server::judge::serving_help(arg);
    if arg.get_id() == "verdict_json" {
        arg.alias(None::<&str>).long("verdict-json")
    } else {
        arg
    }
}

#[cfg(feature = "mock")]
impl MockArgs {
    /// Drops a config file that came from `MEDIAGEN_CONFIG`, here and in `judge`.
    /// Sharing an id with the global `--config`, this option also receives the
    /// global's value, and mediagen's own file is no config of the mock's. Typed
    /// on the command line it is the mock's, wherever it stands; from the
    /// environment only `MEDIAGEN_MOCK_CONFIG` is.
    pub fn keep_own_config(&mut self, matches: &clap::ArgMatches) {
        if !own_config(matches) {
            self.config = None;
        }
        if let (Some(MockCommand::Judge(judge)), Some(matches)) =
            (&mut self.command, matches.subcommand_matches("judge"))
            && !own_config(matches)
        {
            judge.config = None;
        }
    }
}

/// Whether the `--config` of `matches` is the mock's own (or absent).
#[cfg(feature = "mock")]
fn own_config(matches: &clap::ArgMatches) -> bool {
    let from_environment =
        matches.value_source("config") == Some(clap::parser::ValueSource::EnvVariable);
    !from_environment || std::env::var_os(CONFIG_ENV).is_some_and(|value| !value.is_empty())
}

#[cfg(all(test, feature = "mock"))]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn config_of(args: &[&str]) -> Option<PathBuf> {
        match Cli::try_parse_from(args).unwrap().command {
            Command::Mock(args) => args.config,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_mocks_config_file_is_config_as_for_mediagen_mock_and_mock_config_still() {
        let file = Some(PathBuf::from("mock.toml"));
        assert_eq!(
            config_of(&["mediagen", "mock", "--config", "mock.toml"]),
            file
        );
        assert_eq!(
            config_of(&["mediagen", "mock", "--mock-config", "mock.toml"]),
            file
        );
    }
}
