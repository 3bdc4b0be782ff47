//! The command line: every flag and subcommand. The doc comments are the help text.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

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
    cmd.mut_subcommands(|sub| with_globals_in_brief(sub, &globals, &note))
}

/// `cmd` and its subcommands with the global options named in `note` at the
/// end of their help instead of described. Each gets hidden copies of them,
/// which clap's propagation then leaves in place; they stay global, so their
/// values reach the top as any global's do.
fn with_globals_in_brief(
    cmd: clap::Command,
    globals: &[clap::Arg],
    note: &clap::builder::StyledStr,
) -> clap::Command {
    let cmd = globals
        .iter()
        // A command's own option of the same name (`mock --config`) wins, as in
        // clap's propagation.
        .filter(|arg| cmd.get_arguments().all(|own| own.get_id() != arg.get_id()))
        .cloned()
        .collect::<Vec<_>>()
        .into_iter()
        .fold(cmd, |cmd, arg| cmd.arg(arg.hide(true)))
        .after_help(note.clone());
    cmd.mut_subcommands(|sub| with_globals_in_brief(sub, globals, note))
}

/// How to begin, at the end of `mediagen -h`.
pub const START: &str = "\
Start: export MEDIAGEN_BASE_URL=https://… MEDIAGEN_API_KEY=mg_live_… (both required),
then mediagen generate -w -m flux-schnell \"a fox\"; or try any command with --mock.";

/// The exit codes, shown at the end of `mediagen --help`.
pub const EXIT_CODES: &str = "\
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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a generation; with --wait, follow it to the end and print its results
    #[command(visible_alias = "gen")]
    Generate(GenerateArgs),
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
    #[command(verbatim_doc_comment)]
    Batch(BatchArgs),
    /// Show a generation; with --wait, follow it to the end
    Get(GetArgs),
    /// List generations, newest first
    #[command(visible_alias = "ls")]
    List(ListArgs),
    /// Cancel a generation that is still PENDING; the reserved cost returns
    Cancel {
        /// Generation id
        #[arg(value_parser = generation_id)]
        id: uuid::Uuid,
    },
    /// The catalog as a table, or one model's parameters and prices
    Models {
        /// A model's slug, such as flux-schnell
        slug: Option<String>,
    },
    /// The balance: available and reserved
    Balance,
    /// Billing history: top-ups, generation charges and refunds, adjustments
    History(HistoryArgs),
    /// The account that owns the API key
    Account,
    /// Spending and generations, for a period
    Summary(SummaryArgs),
    /// Start a card top-up and print the payment link
    Topup {
        /// Amount in roubles
        #[arg(value_parser = parse_amount, allow_hyphen_values = true)]
        amount: f64,
        /// Where the payment page sends the user back to
        #[arg(long, value_name = "URL")]
        return_url: Option<String>,
    },
    /// Invoices for bank transfer: list, create, and their PDF documents
    #[command(subcommand)]
    Invoices(InvoicesCommand),
    /// Input files for generations: upload, show, delete
    #[command(subcommand)]
    Files(FilesCommand),
    /// Webhook endpoints, their deliveries, and tools to verify and receive webhooks
    #[command(subcommand)]
    Webhooks(WebhooksCommand),
    /// Run the mock server of the service (the same as the mediagen-mock binary)
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
    #[command(verbatim_doc_comment)]
    Api(ApiArgs),
    /// Save an API key to a profile of the config file, once the service accepts it
    ///
    /// The key is asked for without echo on a terminal, or read from stdin when it is a pipe
    /// (`mediagen login < key.txt`); --api-key and MEDIAGEN_API_KEY are not used. The base
    /// URL is --base-url, MEDIAGEN_BASE_URL or the profile's, else asked for. Nothing is
    /// written unless the service accepts the key. The profile is --profile, else the file's
    /// default_profile, else "default"; the file is readable by its owner only.
    Login,
    /// Show the configuration in effect, or set and get a value of the config file
    Config(ConfigArgs),
    /// Print a shell completion script
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
}

impl Command {
    /// The command as typed, without its arguments (`generate`, `webhooks create`):
    /// what the hints after an error are chosen by.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Generate(_) => "generate",
            Self::Batch(_) => "batch",
            Self::Get(_) => "get",
            Self::List(_) => "list",
            Self::Cancel { .. } => "cancel",
            Self::Models { .. } => "models",
            Self::Balance => "balance",
            Self::History(_) => "history",
            Self::Account => "account",
            Self::Summary(_) => "summary",
            Self::Topup { .. } => "topup",
            Self::Invoices(command) => match command {
                InvoicesCommand::List => "invoices list",
                InvoicesCommand::Create { .. } => "invoices create",
                InvoicesCommand::Pdf(_) => "invoices pdf",
                InvoicesCommand::Act(_) => "invoices act",
            },
            Self::Files(command) => match command {
                FilesCommand::Upload { .. } => "files upload",
                FilesCommand::Get { .. } => "files get",
                FilesCommand::Delete { .. } => "files delete",
            },
            Self::Webhooks(command) => match command {
                WebhooksCommand::Create { .. } => "webhooks create",
                WebhooksCommand::List => "webhooks list",
                WebhooksCommand::Get { .. } => "webhooks get",
                WebhooksCommand::Update { .. } => "webhooks update",
                WebhooksCommand::Rotate { .. } => "webhooks rotate",
                WebhooksCommand::Delete { .. } => "webhooks delete",
                WebhooksCommand::Test { .. } => "webhooks test",
                WebhooksCommand::Deliveries { .. } => "webhooks deliveries",
                WebhooksCommand::Redeliver { .. } => "webhooks redeliver",
                WebhooksCommand::Verify(_) => "webhooks verify",
                WebhooksCommand::Listen(_) => "webhooks listen",
            },
            Self::Mock(_) => "mock",
            Self::Api(_) => "api",
            Self::Login => "login",
            Self::Config(_) => "config",
            Self::Completions { .. } => "completions",
        }
    }
}

#[derive(Debug, Args)]
pub struct ApiArgs {
    /// The HTTP method
    #[arg(value_parser = Suggest::new(&["GET", "POST", "PUT", "PATCH", "DELETE"], parse_method))]
    pub method: reqwest::Method,
    /// A path of the service, with its query if any, such as /v1/catalog/; never a URL,
    /// since the key goes only to the configured base URL
    #[arg(value_parser = parse_service_path)]
    pub path: String,
    /// A field of the JSON body (for GET, a query parameter); VALUE is read as JSON when it
    /// parses, else as text; `a.b=1` sets b inside object a
    #[arg(short, long = "field", value_name = "KEY=VALUE", value_parser = parse_param)]
    pub fields: Vec<(String, serde_json::Value)>,
    /// Send this file's JSON as the body; `-` reads it from stdin
    #[arg(long, value_name = "FILE", conflicts_with = "fields")]
    pub input: Option<PathBuf>,
    /// A header to send too, such as "Idempotency-Key: order-17"
    #[arg(short = 'H', long = "header", value_name = "NAME:VALUE", value_parser = parse_header)]
    pub headers: Vec<(String, String)>,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: Option<ConfigCommand>,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Set a value in the profile (--profile, else the file's default_profile, else
    /// "default"); the file keeps its comments and is readable by its owner only
    Set {
        /// The key
        key: ConfigKey,
        /// The value; `-` reads it from stdin, which keeps a key out of the shell's history
        value: String,
    },
    /// Print a value of the config file as it is there (an api_key shortened to its
    /// public part); `mediagen config` shows what is in effect
    Get {
        /// The key
        key: ConfigKey,
    },
}

/// The keys of the config file, named on the command line as in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum ConfigKey {
    /// The profile's API key
    ApiKey,
    /// The profile's base URL of the service
    BaseUrl,
    /// The profile used when --profile and MEDIAGEN_PROFILE are not set
    DefaultProfile,
}

impl ConfigKey {
    /// The name in the file.
    pub fn name(self) -> String {
        self.to_possible_value()
            .map(|value| value.get_name().to_owned())
            .unwrap_or_default()
    }
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Model slug (see `mediagen models`)
    #[arg(short, long, value_name = "SLUG")]
    pub model: String,
    /// A model parameter, such as aspect_ratio=16:9
    ///
    /// VALUE is read as JSON when it parses (numbers, true), else as text.
    #[arg(short, long = "param", value_name = "KEY=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, serde_json::Value)>,
    /// Upload a file as the model's input
    ///
    /// It is passed as the model's file parameter (image_file_id by default).
    #[arg(short, long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// The prompt; `-` reads it from stdin
    pub prompt: String,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Never start or charge twice for this key
    ///
    /// Running the command again with the same key returns the first generation
    /// [default: a new random key].
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
    /// Show the cost and the balance; start nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Refuse to start above this cost in roubles
    #[arg(long, value_name = "RUB", value_parser = parse_amount, allow_hyphen_values = true)]
    pub max_cost: Option<f64>,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Wait until the generation ends
    ///
    /// A spinner on stderr shows its status, the time and the cost.
    #[arg(short, long)]
    pub wait: bool,
    /// Download the results into DIR (implies --wait)
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Stop waiting after this long, such as 90s
    ///
    /// Such as 90s, 10m or 1h30m; the generation goes on on the service.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
}

impl WaitArgs {
    pub fn waits(&self) -> bool {
        self.wait || self.output.is_some()
    }
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BatchArgs {
    #[command(subcommand)]
    pub command: Option<BatchCommand>,
    #[command(flatten)]
    pub run: BatchRunArgs,
}

#[derive(Debug, Subcommand)]
pub enum BatchCommand {
    /// How many lines of a manifest are in each state, from its journal
    Status {
        /// The manifest
        manifest: PathBuf,
        /// The journal [default: MANIFEST.journal]
        #[arg(long, value_name = "PATH")]
        state: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct BatchRunArgs {
    /// The manifest; - reads it from stdin (then --state is required)
    #[arg(required = true)]
    pub manifest: Option<PathBuf>,
    /// The model of lines that name none
    ///
    /// See `mediagen models`.
    #[arg(short, long, value_name = "SLUG")]
    pub model: Option<String>,
    /// A parameter for every line
    ///
    /// A line's own params win; VALUE is read as JSON when it parses, else as text.
    #[arg(short, long = "param", value_name = "KEY=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, serde_json::Value)>,
    /// Download each result into DIR as it ends
    ///
    /// As the line's "output", else LINE-ID-N.EXT.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Generations active at once
    ///
    /// The service allows 5 active generations per user.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub max_active: u16,
    /// Stop creating before the reserved total passes this
    ///
    /// In roubles; each create is priced first. What was left out is told, and the
    /// exit code is 4.
    #[arg(long, value_name = "RUB", value_parser = parse_amount, allow_hyphen_values = true)]
    pub max_cost: Option<f64>,
    /// The journal [default: MANIFEST.journal]
    ///
    /// The results go beside it, in MANIFEST.results.jsonl (or PATH.results.jsonl).
    #[arg(long, value_name = "PATH")]
    pub state: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// Generation id
    #[arg(value_parser = generation_id)]
    pub id: uuid::Uuid,
    #[command(flatten)]
    pub wait: WaitArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only generations in this status
    #[arg(long, value_parser = Suggest::new(mediagen::GenerationStatus::KNOWN, StringValueParser::new()))]
    pub status: Option<String>,
    /// Only generations of this model
    #[arg(short, long, value_name = "SLUG")]
    pub model: Option<String>,
    /// At most this many
    #[arg(short = 'n', long, default_value_t = 20, conflicts_with = "all")]
    pub limit: usize,
    /// Every generation, page after page
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Only operations of this type
    #[arg(long = "type", value_name = "TYPE",
          value_parser = Suggest::new(mediagen::BillingOperationType::KNOWN, StringValueParser::new()))]
    pub kind: Option<String>,
    /// From this time (RFC 3339, such as 2026-11-01T00:00:00Z)
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub from: Option<chrono::DateTime<chrono::Utc>>,
    /// Up to this time (RFC 3339)
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub to: Option<chrono::DateTime<chrono::Utc>>,
    /// At most this many
    #[arg(short = 'n', long, default_value_t = 20)]
    pub limit: usize,
}

#[derive(Debug, Args)]
pub struct SummaryArgs {
    /// From this time (RFC 3339)
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub from: Option<chrono::DateTime<chrono::Utc>>,
    /// Up to this time (RFC 3339)
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub to: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(Debug, Subcommand)]
pub enum InvoicesCommand {
    /// List invoices, newest first
    List,
    /// Issue an invoice for a bank transfer (needs requisites on the account)
    Create {
        /// Amount in roubles
        #[arg(value_parser = parse_amount, allow_hyphen_values = true)]
        amount: f64,
    },
    /// Save the invoice as PDF
    Pdf(DocumentArgs),
    /// Save the closing act of a paid invoice as PDF
    Act(DocumentArgs),
}

#[derive(Debug, Args)]
pub struct DocumentArgs {
    /// Invoice id
    #[arg(value_parser = invoice_id)]
    pub id: uuid::Uuid,
    /// The file to write [default: invoice-<ID>.pdf or act-<ID>.pdf]; `-` writes to stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum FilesCommand {
    /// Upload a file to use as a generation input
    Upload {
        /// The file
        path: PathBuf,
        /// Its type, such as image/png [default: from the extension]
        #[arg(long, value_name = "MIME")]
        content_type: Option<String>,
    },
    /// Show a file
    Get {
        /// File id
        #[arg(value_parser = file_id)]
        id: uuid::Uuid,
    },
    /// Delete a file
    Delete {
        /// File id
        #[arg(value_parser = file_id)]
        id: uuid::Uuid,
    },
}

#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// Register an endpoint; its signing secret is shown once
    Create {
        /// The URL deliveries are POSTed to
        url: String,
        /// An event to subscribe to (generation.completed, generation.failed, generation.*, *)
        /// [default: all]
        #[arg(short, long = "event", value_name = "EVENT", value_parser = event_filter(), hide_possible_values = true)]
        events: Vec<String>,
        /// A note for yourself
        #[arg(long)]
        description: Option<String>,
    },
    /// List the endpoints
    List,
    /// Show an endpoint
    Get {
        /// Endpoint id
        id: String,
    },
    /// Change an endpoint
    Update {
        /// Endpoint id
        id: String,
        /// A new URL
        #[arg(long)]
        url: Option<String>,
        /// Replace the subscribed events (generation.completed, generation.failed,
        /// generation.*, *)
        #[arg(short, long = "event", value_name = "EVENT", value_parser = event_filter(), hide_possible_values = true)]
        events: Vec<String>,
        /// A new description
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
        /// Resume deliveries
        #[arg(long, conflicts_with = "disable")]
        enable: bool,
        /// Pause deliveries
        #[arg(long)]
        disable: bool,
    },
    /// Replace the signing secret; the old one stops working at once
    Rotate {
        /// Endpoint id
        id: String,
    },
    /// Delete an endpoint
    Delete {
        /// Endpoint id
        id: String,
    },
    /// Send a signed test event to an endpoint
    Test {
        /// Endpoint id
        id: String,
        /// The event [default: generation.completed]
        #[arg(long, value_name = "EVENT", value_parser = Suggest::new(mediagen::EventType::KNOWN, StringValueParser::new()))]
        event: Option<String>,
    },
    /// The delivery attempts to an endpoint, newest first
    Deliveries {
        /// Endpoint id
        id: String,
        /// At most this many
        #[arg(short = 'n', long, default_value_t = 20)]
        limit: usize,
    },
    /// Send an earlier message again, with the same body and webhook-id
    Redeliver {
        /// Endpoint id
        id: String,
        /// The message's webhook-id
        #[arg(value_parser = message_id)]
        message_id: uuid::Uuid,
    },
    /// Check a delivery's signature: prints `valid`, or why not
    #[command(
        override_usage = "mediagen webhooks verify [OPTIONS] --secret <SECRET> --id <WEBHOOK_ID>\n       \
                                --timestamp <UNIX> --signature <HEADER>"
    )]
    Verify(VerifyArgs),
    /// Receive webhooks here: verify, skip duplicates, print each event
    ///
    /// With --forward-to, each verified delivery is also POSTed to a local app with its raw
    /// body and its webhook-id, webhook-timestamp and webhook-signature headers unchanged,
    /// and the app's status is printed beside the event. The service is answered at once,
    /// whatever the apps say. An --event after a --forward-to is what that app gets; one
    /// before any --forward-to is what listen takes at all:
    ///
    ///   mediagen webhooks listen --register \
    ///     --forward-to localhost:3000/hooks --event generation.completed \
    ///     --forward-to localhost:4000/alerts --event generation.failed
    #[command(verbatim_doc_comment)]
    Listen(ListenArgs),
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The endpoint's signing secret (whsec_…)
    #[arg(long, env = "MEDIAGEN_WEBHOOK_SECRET", hide_env_values = true)]
    pub secret: String,
    /// The webhook-id header
    #[arg(long, value_name = "WEBHOOK_ID")]
    pub id: String,
    /// The webhook-timestamp header (Unix seconds)
    #[arg(long, value_name = "UNIX")]
    pub timestamp: String,
    /// The webhook-signature header, such as "v1,K5oZ…="
    #[arg(long, value_name = "HEADER")]
    pub signature: String,
    /// Accept timestamps this far from now
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    pub tolerance: u64,
    /// Check as if the time were this (Unix seconds) [default: now]
    #[arg(long, value_name = "UNIX", allow_hyphen_values = true)]
    pub now: Option<i64>,
    /// Read the raw body from this file [default: stdin]
    #[arg(long, value_name = "PATH")]
    pub payload_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("trust").required(true).args(["secret", "register"]))]
pub struct ListenArgs {
    /// Port on 127.0.0.1 (0 picks a free one)
    #[arg(short, long, default_value_t = 8787)]
    pub port: u16,
    /// Verify deliveries with this secret
    #[arg(long, env = "MEDIAGEN_WEBHOOK_SECRET", hide_env_values = true)]
    pub secret: Option<String>,
    /// Register an endpoint here while listening
    #[arg(long)]
    pub register: bool,
    /// With --register: the URL that reaches this port
    ///
    /// A tunnel's public URL [default: http://127.0.0.1:PORT/].
    #[arg(long, value_name = "URL", requires = "register")]
    pub public_url: Option<String>,
    #[command(flatten)]
    pub routes: Routes,
    /// Stop after this many events
    #[arg(long, value_name = "N")]
    pub max_events: Option<usize>,
}

/// The `--event` and `--forward-to` flags of `webhooks listen`, read in the order
/// given: an `--event` after a `--forward-to` filters that app, one before any
/// `--forward-to` filters what listen takes at all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Routes {
    /// What listen takes (with --register, the endpoint's subscription); empty: all.
    pub events: Vec<String>,
    /// The apps each verified delivery is forwarded to.
    pub targets: Vec<Target>,
}

/// A local app that `webhooks listen` forwards deliveries to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub url: url::Url,
    /// The events it gets; empty: all that listen takes.
    pub events: Vec<String>,
}

impl Args for Routes {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        use clap::{Arg, ArgAction};
        cmd.arg(
            Arg::new("event")
                .short('e')
                .long("event")
                .value_name("EVENT")
                .action(ArgAction::Append)
                .value_parser(event_filter())
                .hide_possible_values(true)
                .help("An event to take [default: all]")
                .long_help(
                    "An event to take (generation.completed, generation.failed, generation.*, *): \
                     before any --forward-to, what listen takes (with --register, what the \
                     endpoint subscribes to); after a --forward-to, what that app gets \
                     [default: all]",
                ),
        )
        .arg(
            Arg::new("forward-to")
                .long("forward-to")
                .value_name("URL")
                .action(ArgAction::Append)
                .value_parser(parse_forward_url)
                .help("POST each verified delivery to this app too")
                .long_help(
                    "POST each verified delivery to this app too, its raw body and its \
                     webhook-id, webhook-timestamp and webhook-signature headers unchanged, \
                     and print the app's status; repeat for more apps (localhost:3000/hooks \
                     means http://)",
                ),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for Routes {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        // Each value with its place on the command line.
        fn placed<T: Clone + Send + Sync + 'static>(
            matches: &clap::ArgMatches,
            id: &str,
        ) -> Vec<(usize, T)> {
            let places = matches.indices_of(id).into_iter().flatten();
            let values = matches.get_many::<T>(id).into_iter().flatten().cloned();
            places.zip(values).collect()
        }
        let targets = placed::<url::Url>(matches, "forward-to");
        let starts: Vec<usize> = targets.iter().map(|(place, _)| *place).collect();
        let mut routes = Self {
            events: Vec::new(),
            targets: targets
                .into_iter()
                .map(|(_, url)| Target {
                    url,
                    events: Vec::new(),
                })
                .collect(),
        };
        for (place, event) in placed::<String>(matches, "event") {
            // The targets given before this event; it belongs to the last of them.
            match starts.partition_point(|start| *start < place) {
                0 => routes.events.push(event),
                before => routes.targets[before - 1].events.push(event),
            }
        }
        Ok(routes)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// A URL to forward to: http or https, and `localhost:3000/hooks` read as http.
fn parse_forward_url(raw: &str) -> Result<url::Url, String> {
    let full = if raw.contains("://") {
        raw.to_owned()
    } else {
        format!("http://{raw}")
    };
    let url = url::Url::parse(&full).map_err(|err| format!("`{raw}` is not a URL: {err}"))?;
    if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
        return Err(format!("`{raw}` is not an http or https URL"));
    }
    Ok(url)
}

/// The options of `mediagen mock`: the mock server's own, plus `--port`.
#[derive(Debug, Args)]
pub struct MockArgs {
    /// Port on 127.0.0.1 (0 picks a free one); --listen chooses the address too
    #[cfg(feature = "mock")]
    #[arg(short, long, conflicts_with = "listen")]
    pub port: Option<u16>,
    /// A TOML file of options (see the mock server's config.default.toml)
    #[cfg(feature = "mock")]
    #[arg(
        long = "mock-config",
        env = "MEDIAGEN_MOCK_CONFIG",
        value_name = "FILE"
    )]
    pub config: Option<PathBuf>,
    #[cfg(feature = "mock")]
    #[command(flatten)]
    pub options: mediagen_mock_server::config::Options,
    /// Options of a mock this build does not have: taken so that the answer is where
    /// to get the mock, not an unknown flag.
    #[cfg(not(feature = "mock"))]
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub ignored: Vec<String>,
}

/// A value parsed by `parser`, with the values this version knows offered to the
/// help and to shell completion. Any other value is taken as well and goes to the
/// service as typed: its sets are open, and a newer service may know more.
#[derive(Clone)]
pub struct Suggest<P> {
    known: &'static [&'static str],
    parser: P,
}

impl<P> Suggest<P> {
    pub fn new(known: &'static [&'static str], parser: P) -> Self {
        Self { known, parser }
    }
}

impl<P: TypedValueParser> TypedValueParser for Suggest<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        self.parser.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.known.iter().copied().map(PossibleValue::new)))
    }
}

/// The event filters of an endpoint: the events this version knows, every
/// generation event, or all.
fn event_filter() -> Suggest<StringValueParser> {
    const FILTERS: &[&str] = &[
        "generation.completed",
        "generation.failed",
        "generation.*",
        "*",
    ];
    Suggest::new(FILTERS, StringValueParser::new())
}

/// A UUID, or a refusal that says what `what` looks like.
fn uuid_of(raw: &str, what: &str) -> Result<uuid::Uuid, String> {
    uuid::Uuid::parse_str(raw)
        .map_err(|_| format!("{what} is a UUID, such as 3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19"))
}

fn generation_id(raw: &str) -> Result<uuid::Uuid, String> {
    uuid_of(raw, "a generation id")
}

fn invoice_id(raw: &str) -> Result<uuid::Uuid, String> {
    uuid_of(raw, "an invoice id")
}

fn file_id(raw: &str) -> Result<uuid::Uuid, String> {
    uuid_of(raw, "a file id")
}

fn message_id(raw: &str) -> Result<uuid::Uuid, String> {
    uuid_of(raw, "a message's webhook-id")
}

/// Roubles: a number above 0, with a dot for the kopecks.
fn parse_amount(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(amount) if amount.is_finite() && amount > 0.0 => Ok(amount),
        _ => Err("an amount is a number of roubles above 0, such as 1500 or 99.50".to_owned()),
    }
}

/// A time: RFC 3339, or a date for its midnight UTC.
fn parse_time(raw: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    chrono::DateTime::parse_from_rfc3339(raw)
        .map(|time| time.to_utc())
        .or_else(|_| {
            chrono::NaiveDate::parse_from_str(raw, "%Y-%m-%d")
                .map(|date| date.and_time(chrono::NaiveTime::MIN).and_utc())
        })
        .map_err(|_| {
            "a time is RFC 3339, such as 2026-11-01T09:30:00Z, or a date, such as 2026-11-01"
                .to_owned()
        })
}

fn parse_param(raw: &str) -> Result<(String, serde_json::Value), String> {
    let (key, value) = raw
        .split_once('=')
        .ok_or_else(|| format!("`{raw}` is not KEY=VALUE"))?;
    if key.is_empty() {
        return Err(format!("`{raw}` has no KEY before ="));
    }
    // `16:9` and `1024x1024` stay text; `4`, `true` and `[1,2]` become JSON.
    let value =
        serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_owned()));
    Ok((key.to_owned(), value))
}

fn parse_method(raw: &str) -> Result<reqwest::Method, String> {
    reqwest::Method::from_bytes(raw.to_ascii_uppercase().as_bytes())
        .map_err(|_| format!("`{raw}` is not an HTTP method such as GET or POST"))
}

/// A path of the service. A full URL is refused: the request carries the API key,
/// which must never go to a host the user did not configure.
fn parse_service_path(raw: &str) -> Result<String, String> {
    if raw.starts_with('/') && !raw.starts_with("//") {
        return Ok(raw.to_owned());
    }
    // `//host/…` is a URL too, to whatever scheme the base URL has.
    if raw.contains("://") || raw.starts_with("//") {
        return Err(format!(
            "`{raw}` is a URL; give the path alone, such as /v1/catalog/: the request goes to \
             the configured base URL only, since it carries the API key"
        ));
    }
    Err(format!(
        "`{raw}` is not a path of the service: it starts with one /, such as /v1/catalog/"
    ))
}

fn parse_header(raw: &str) -> Result<(String, String), String> {
    match raw.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(format!("`{raw}` is not NAME:VALUE")),
    }
}

fn parse_duration(raw: &str) -> Result<Duration, String> {
    humantime::parse_duration(raw)
        .ok()
        .or_else(|| Duration::try_from_secs_f64(raw.parse().ok()?).ok())
        .ok_or_else(|| format!("`{raw}` is not a duration such as 90s, 10m or 1h30m"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn params_are_json_when_they_parse_and_text_otherwise() {
        assert_eq!(parse_param("steps=4").unwrap().1, serde_json::json!(4));
        assert_eq!(
            parse_param("aspect_ratio=16:9").unwrap().1,
            serde_json::json!("16:9")
        );
        assert_eq!(parse_param("seed=").unwrap().1, serde_json::json!(""));
        assert!(parse_param("=4").is_err());
        assert!(parse_param("steps").is_err());
    }

    fn routes(args: &[&str]) -> Routes {
        let cli = Cli::try_parse_from(
            ["mediagen", "webhooks", "listen", "--secret", "whsec_x"]
                .iter()
                .chain(args),
        )
        .unwrap();
        match cli.command {
            Command::Webhooks(WebhooksCommand::Listen(listen)) => listen.routes,
            other => panic!("not listen: {other:?}"),
        }
    }

    #[test]
    fn each_event_belongs_to_the_forward_to_before_it() {
        let parsed = routes(&[
            "-e",
            "generation.*",
            "--forward-to",
            "localhost:3000/hooks",
            "--event",
            "generation.failed",
            "--forward-to",
            "https://127.0.0.1:4000/",
            "--forward-to",
            "http://[::1]:5000/w",
            "-e",
            "generation.completed",
            "-e",
            "*",
        ]);
        let url = |raw: &str| url::Url::parse(raw).unwrap();
        assert_eq!(
            parsed,
            Routes {
                events: vec!["generation.*".to_owned()],
                targets: vec![
                    Target {
                        url: url("http://localhost:3000/hooks"),
                        events: vec!["generation.failed".to_owned()],
                    },
                    Target {
                        url: url("https://127.0.0.1:4000/"),
                        events: vec![],
                    },
                    Target {
                        url: url("http://[::1]:5000/w"),
                        events: vec!["generation.completed".to_owned(), "*".to_owned()],
                    },
                ],
            }
        );
        assert_eq!(routes(&[]), Routes::default());
    }

    #[test]
    fn forward_to_takes_only_http_urls() {
        assert!(parse_forward_url("ftp://example.com/").is_err());
        assert!(parse_forward_url("http://").is_err());
        assert!(parse_forward_url("localhost:notaport").is_err());
    }

    #[test]
    fn api_takes_a_path_of_the_service_and_never_a_url() {
        assert_eq!(
            parse_service_path("/v1/generations?limit=5").unwrap(),
            "/v1/generations?limit=5"
        );
        assert!(parse_service_path("https://elsewhere.example/v1/catalog/").is_err());
        assert!(parse_service_path("//elsewhere.example/v1/catalog/").is_err());
        assert!(parse_service_path("v1/catalog/").is_err());
        assert_eq!(parse_method("patch").unwrap(), reqwest::Method::PATCH);
        assert!(parse_method("GET POST").is_err());
        assert_eq!(
            parse_header("Idempotency-Key: order-17").unwrap(),
            ("Idempotency-Key".to_owned(), "order-17".to_owned())
        );
        assert!(parse_header("no colon").is_err());
    }

    #[test]
    fn durations_take_units_or_plain_seconds() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("2.5").unwrap(), Duration::from_millis(2500));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("inf").is_err());
    }
}
