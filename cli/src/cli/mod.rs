//! The command line: every flag and subcommand, one file per noun as in `cmd/`.
//! The doc comments are the help text; the value parsers are in `parse.rs`.

pub mod account;
pub mod api;
pub mod batch;
pub mod billing;
pub mod config;
pub mod files;
pub mod generations;
pub mod mcp;
pub mod mock;
pub mod webhooks;

use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use self::account::AccountCommands;
use self::api::ApiArgs;
use self::batch::BatchArgs;
use self::billing::{BillingCommands, InvoicesCommand, RequisitesCommand};
use self::config::ConfigCommands;
use self::files::FilesCommand;
use self::generations::GenerationsCommands;
use self::mcp::McpArgs;
use self::mock::MockArgs;
use self::webhooks::WebhooksCommand;

/// Generate images, video, speech and music with the media generation service.
///
/// Set MEDIAGEN_BASE_URL (the service's address; none is built in) and MEDIAGEN_API_KEY,
/// or pass --base-url and --api-key, or keep both in a profile of the config file
/// (`mediagen login`); then `mediagen generate --wait -m flux-schnell "a lighthouse at
/// dusk"`. With --mock every command runs against an embedded mock of the service with a
/// demo account.
#[derive(Debug, Parser)]
#[command(
    name = "mediagen",
    version,
    max_term_width = 100,
    after_help = START,
    after_long_help = EXIT_CODES
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// How to begin, at the end of `mediagen -h`.
const START: &str = "\
Start: export MEDIAGEN_BASE_URL=https://… MEDIAGEN_API_KEY=mg_live_… (both required),
then mediagen generate -w -m flux-schnell \"a fox\"; or try any command with --mock.";

/// The exit codes, shown at the end of `mediagen --help`: `error::Exit` has one
/// variant per line.
const EXIT_CODES: &str = "\
Exit codes:
  0    success
  1    any other error (the service failed, the network, a local file)
  2    usage: a wrong command line, or a request the service refused as invalid
  3    authentication: no API key, or the key is invalid, revoked or not allowed
  4    insufficient balance, or the cost is above --max-cost
  5    rate limited: too many requests or active generations, or the daily top-up cap
  6    the generation failed or was cancelled
  7    timeout: the generation was still running at the --timeout deadline
  130  interrupted (Ctrl-C); the generation goes on, and the message says how to resume";

#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// API key [default: the profile's api_key]
    #[arg(long, global = true, env = "MEDIAGEN_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,

    /// Base URL of the service [default: the profile's base_url; there is no built-in host]
    #[arg(
        long,
        global = true,
        env = "MEDIAGEN_BASE_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub base_url: Option<String>,

    /// Profile of the config file to use [default: the file's default_profile, else "default"]
    #[arg(
        long,
        global = true,
        env = "MEDIAGEN_PROFILE",
        value_name = "NAME",
        hide_env_values = true
    )]
    pub profile: Option<String>,

    /// Config file [default: $XDG_CONFIG_HOME/mediagen/config.toml or ~/.config/mediagen/config.toml]
    #[arg(
        long,
        global = true,
        env = "MEDIAGEN_CONFIG",
        value_name = "FILE",
        hide_env_values = true
    )]
    pub config: Option<PathBuf>,

    /// Attempts of a request that fails for a temporary reason, with exponential back-off
    #[arg(long, global = true, env = "MEDIAGEN_MAX_ATTEMPTS", value_name = "N", default_value_t = 5, hide_env_values = true,
          value_parser = clap::value_parser!(u32).range(1..=20))]
    pub max_attempts: u32,

    /// Run against an embedded mock of the service with a demo account (no key needed)
    #[arg(long, global = true)]
    #[cfg_attr(
        not(feature = "mock"),
        arg(
            help = "An embedded mock of the service: not in this build, which says where to get one"
        )
    )]
    pub mock: bool,

    /// Print JSON on stdout, errors included (the default when stdout is not a terminal)
    #[arg(long, global = true, conflicts_with = "format")]
    pub json: bool,

    /// Output for people (tables), for scripts (JSON), or as JSON Lines (an object per line;
    /// lists stream page by page)
    #[arg(long, global = true, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Print what a jq filter makes of the JSON: raw strings, compact values, one per line
    ///
    /// The filter runs on each JSON document the command prints: the answer, or each line of
    /// a stream or of --format jsonl. It implies JSON output; an error keeps its envelope.
    /// It is jq as jaq runs it: computed whole floats print as 2.0, `del` may reorder keys,
    /// and there is no `input`, `tostream` or `$__loc__` (the README lists every difference).
    #[arg(long, global = true, value_name = "EXPR", value_parser = crate::parse::jq)]
    pub jq: Option<crate::jq::Filter>,

    /// When to use colour; NO_COLOR in the environment means never
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub color: ColorWhen,

    /// Tell each HTTP attempt on stderr: method, path, status, error code, request id and
    /// the delay before a retry; -vv adds the headers, the API key cut to its public part.
    /// MEDIAGEN_LOG=mediagen=debug prints the SDK's own events instead or as well
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    Jsonl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

/// The commands by noun, each group run by its `cmd/<noun>.rs`. A group of several
/// commands is flattened: `mediagen generate`, not `mediagen generations generate`.
/// `display_order` keeps `mediagen --help` in the order people look for things,
/// which is not the order of the nouns.
#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(flatten)]
    Generations(GenerationsCommands),
    /// Run many generations from a manifest, at the service's limits, safe to run again
    ///
    /// MANIFEST is a file (or - for stdin, with --state) of one prompt per line (with -m)
    /// or of JSON Lines objects {"model", "prompt", "params", "output"}; blank lines and
    /// lines starting with # are skipped. Every line is checked before anything starts.
    /// A journal beside the manifest (or --state) writes down each create before it is
    /// sent: after Ctrl-C, a crash or a reboot, the same command again pays for nothing
    /// twice, skips what ended, follows what runs, and downloads what is missing. A first
    /// Ctrl-C stops creating and follows the active generations to their end; a second
    /// exits at once.
    ///
    ///   mediagen batch -m flux-schnell prompts.txt -o out/
    ///   mediagen batch jobs.jsonl --max-cost 500 -p aspect_ratio=16:9
    ///   mediagen batch status jobs.jsonl
    #[command(verbatim_doc_comment, display_order = 2)]
    Batch(BatchArgs),
    /// The catalog as a table, or one model's parameters and prices
    #[command(display_order = 6)]
    Models {
        /// A model's slug, such as flux-schnell
        slug: Option<String>,
    },
    #[command(flatten)]
    Billing(BillingCommands),
    #[command(flatten)]
    Account(AccountCommands),
    /// Input files for generations: upload, show, delete
    #[command(subcommand, display_order = 14)]
    Files(FilesCommand),
    /// Webhook endpoints, their deliveries, and tools to verify and receive webhooks
    #[command(subcommand, display_order = 15)]
    Webhooks(WebhooksCommand),
    /// Run the mock server of the service (the same as the mediagen-mock binary)
    #[command(display_order = 16)]
    #[cfg_attr(
        not(feature = "mock"),
        command(
            about = "The mock server of the service: not in this build, which says where to get it"
        )
    )]
    Mock(MockArgs),
    /// Send any request to the service, with the key, retries and pacing of every command
    ///
    /// Prints the answer's JSON on stdout (pretty on a terminal, one line otherwise), or
    /// the service's error envelope with the exit code of that error. --field builds a
    /// JSON body (for GET, query parameters); --input sends the JSON of a file or stdin. A
    /// create (POST /v1/generations) gets an Idempotency-Key unless --header gives one,
    /// and a failure tells it, so that running it again never starts a second one:
    ///
    ///   mediagen api GET /v1/catalog/
    ///   mediagen api GET /v1/generations -f limit=5 -f status=FAILED
    ///   mediagen api POST /v1/generations -f modelSlug=flux-schnell -f prompt="a fox" \
    ///     -f params.aspect_ratio=16:9
    ///   echo '{"amountRub": 1500}' | mediagen api POST /v1/billing/topup --input -
    #[command(verbatim_doc_comment, display_order = 17)]
    Api(ApiArgs),
    /// Serve the service as tools for AI agents (MCP), with a spending cap
    ///
    /// Over stdio (a client starts `mediagen mcp`), or streamable HTTP on loopback with
    /// --listen. The tools: list_models, estimate_cost, generate (creates and waits, with
    /// progress), get_generation (looks up, or resumes a wait), get_balance; with --mock
    /// also mock_verdict. A generate with the same requestId and the same arguments is
    /// the same call: it returns the same generation and is charged once. See
    /// "For AI agents" in the command's README.
    ///
    ///   mediagen mcp --max-spend 500 --max-cost 50 --output-dir ~/media
    ///   mediagen --mock mcp --listen 127.0.0.1:8931
    #[command(verbatim_doc_comment, display_order = 21)]
    #[cfg_attr(
        not(feature = "mcp"),
        command(about = "The MCP server for AI agents: not in this build, which says so")
    )]
    Mcp(McpArgs),
    #[command(flatten)]
    Config(ConfigCommands),
    /// Print a shell completion script
    #[command(display_order = 20)]
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
}

/// A command as typed, without its arguments (`generate`, `webhooks create`): what
/// the hints after an error are chosen by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandId {
    Generate,
    Batch,
    Get,
    List,
    Cancel,
    Models,
    Balance,
    History,
    Account,
    Summary,
    Topup,
    InvoicesList,
    InvoicesCreate,
    InvoicesPdf,
    InvoicesAct,
    Requisites,
    RequisitesSet,
    FilesUpload,
    FilesGet,
    FilesDelete,
    WebhooksCreate,
    WebhooksList,
    WebhooksGet,
    WebhooksUpdate,
    WebhooksRotate,
    WebhooksDelete,
    WebhooksTest,
    WebhooksDeliveries,
    WebhooksRedeliver,
    WebhooksVerify,
    WebhooksTrigger,
    WebhooksListen,
    Mock,
    Mcp,
    Api,
    Login,
    Config,
    Completions,
}

impl Command {
    /// Which command this is.
    pub fn id(&self) -> CommandId {
        use CommandId as Id;
        match self {
            Self::Generations(command) => match command {
                GenerationsCommands::Generate(_) => Id::Generate,
                GenerationsCommands::Get(_) => Id::Get,
                GenerationsCommands::List(_) => Id::List,
                GenerationsCommands::Cancel { .. } => Id::Cancel,
            },
            Self::Batch(_) => Id::Batch,
            Self::Models { .. } => Id::Models,
            Self::Billing(command) => match command {
                BillingCommands::Balance => Id::Balance,
                BillingCommands::History(_) => Id::History,
                BillingCommands::Topup { .. } => Id::Topup,
                BillingCommands::Invoices(command) => match command {
                    InvoicesCommand::List => Id::InvoicesList,
                    InvoicesCommand::Create { .. } => Id::InvoicesCreate,
                    InvoicesCommand::Pdf(_) => Id::InvoicesPdf,
                    InvoicesCommand::Act(_) => Id::InvoicesAct,
                },
                BillingCommands::Requisites(args) => match args.command {
                    None => Id::Requisites,
                    Some(RequisitesCommand::Set(_)) => Id::RequisitesSet,
                },
            },
            Self::Account(command) => match command {
                AccountCommands::Account => Id::Account,
                AccountCommands::Summary(_) => Id::Summary,
            },
            Self::Files(command) => match command {
                FilesCommand::Upload { .. } => Id::FilesUpload,
                FilesCommand::Get { .. } => Id::FilesGet,
                FilesCommand::Delete { .. } => Id::FilesDelete,
            },
            Self::Webhooks(command) => match command {
                WebhooksCommand::Create { .. } => Id::WebhooksCreate,
                WebhooksCommand::List => Id::WebhooksList,
                WebhooksCommand::Get { .. } => Id::WebhooksGet,
                WebhooksCommand::Update { .. } => Id::WebhooksUpdate,
                WebhooksCommand::Rotate { .. } => Id::WebhooksRotate,
                WebhooksCommand::Delete { .. } => Id::WebhooksDelete,
                WebhooksCommand::Test { .. } => Id::WebhooksTest,
                WebhooksCommand::Deliveries { .. } => Id::WebhooksDeliveries,
                WebhooksCommand::Redeliver { .. } => Id::WebhooksRedeliver,
                WebhooksCommand::Verify(_) => Id::WebhooksVerify,
                WebhooksCommand::Trigger(_) => Id::WebhooksTrigger,
                WebhooksCommand::Listen(_) => Id::WebhooksListen,
            },
            Self::Mock(_) => Id::Mock,
            Self::Mcp(_) => Id::Mcp,
            Self::Api(_) => Id::Api,
            Self::Config(command) => match command {
                ConfigCommands::Login => Id::Login,
                ConfigCommands::Config(_) => Id::Config,
            },
            Self::Completions { .. } => Id::Completions,
        }
    }
}

/// The command line of this process, parsed as [`command`] shows it.
pub fn parse() -> Result<Cli, clap::Error> {
    let matches = command().try_get_matches()?;
    #[cfg_attr(not(feature = "mock"), expect(unused_mut))]
    let mut cli = Cli::from_arg_matches(&matches)?;
    if cli.global.jq.is_some() && cli.global.format == Some(Format::Human) {
        return Err(command().error(
            clap::error::ErrorKind::ArgumentConflict,
            "--jq filters JSON, so it cannot be used with --format human (use --format json or jsonl, or leave --format out)",
        ));
    }
    #[cfg(feature = "mock")]
    if let (Command::Mock(args), Some(mock)) =
        (&mut cli.command, matches.subcommand_matches("mock"))
    {
        args.keep_own_config(mock);
    }
    Ok(cli)
}

/// The command line as parsed and shown. `mediagen --help` describes the global
/// options; every other command's help names them on one line under their own
/// heading, so that its own options come first and a short help fits a screen.
pub fn command() -> clap::Command {
    let cmd = Cli::command();
    let globals: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|arg| arg.is_global_set())
        .cloned()
        .collect();
    cmd.mut_subcommands(|sub| with_globals_in_brief(sub, &globals))
}

/// `cmd` and its subcommands with the global options named at the end of their
/// help instead of described. Each gets hidden copies of them, which clap's
/// propagation then leaves in place; they stay global, so their values reach the
/// top as any global's do.
fn with_globals_in_brief(cmd: clap::Command, globals: &[clap::Arg]) -> clap::Command {
    // A command's own option of the same name (`mock --config`) wins, as in clap's
    // propagation, and is not named as a global.
    let globals: Vec<clap::Arg> = globals
        .iter()
        .filter(|arg| cmd.get_arguments().all(|own| own.get_id() != arg.get_id()))
        .cloned()
        .collect();
    let names: Vec<String> = globals
        .iter()
        .filter_map(|arg| {
            arg.get_short()
                .map(|short| format!("-{short}"))
                .or_else(|| arg.get_long().map(|long| format!("--{long}")))
        })
        .collect();
    let header = cmd.get_styles().get_header();
    let note = clap::builder::StyledStr::from(format!(
        "{header}Global options{header:#} (`mediagen --help` tells them):\n  {}",
        names.join(" ")
    ));
    let cmd = globals
        .iter()
        .fold(cmd, |cmd, arg| cmd.arg(arg.clone().hide(true)))
        .after_help(note)
        // A group's own `help` would take a line of its short help, which must fit a
        // screen; `mediagen help webhooks trigger` and `--help` tell the same.
        .disable_help_subcommand(true);
    cmd.mut_subcommands(|sub| with_globals_in_brief(sub, &globals))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_command_has_a_place_of_its_own_in_the_help() {
        let command = Cli::command();
        let mut places: Vec<usize> = command
            .get_subcommands()
            .map(clap::Command::get_display_order)
            .collect();
        let count = places.len();
        places.sort_unstable();
        places.dedup();
        assert_eq!(places.len(), count, "two commands share a display_order");
    }
}
