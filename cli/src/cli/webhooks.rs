//! `webhooks`: the endpoint commands, `verify` and `listen`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::parse::{self, Suggest};

#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// Register an endpoint; its signing secret is shown once
    Create {
        /// The URL deliveries are POSTed to
        url: String,
        /// An event to subscribe to (generation.completed, generation.failed, generation.*, *)
        /// [default: all]
        #[arg(short, long = "event", value_name = "EVENT", value_parser = parse::event_filter(), hide_possible_values = true)]
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
        #[arg(short, long = "event", value_name = "EVENT", value_parser = parse::event_filter(), hide_possible_values = true)]
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
        #[arg(long, value_name = "EVENT", value_parser = Suggest::text(mediagen::EventType::KNOWN))]
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
        #[arg(value_parser = parse::message_id)]
        message_id: uuid::Uuid,
    },
    /// Check a delivery's signature: prints `valid`, or why not
    #[command(
        override_usage = "mediagen webhooks verify [OPTIONS] --secret <SECRET> --id <WEBHOOK_ID>\n       \
                                --timestamp <UNIX> --signature <HEADER>"
    )]
    Verify(VerifyArgs),
    /// Send a signed event to a receiver, to test it without the service
    ///
    /// The body is the contract's example of the event, with a new id and time; each --set
    /// is checked against the event's schema before anything is sent. The answer is told
    /// with what the service would do with it (done, retried, endpoint disabled). With
    /// --endpoint, a running mock delivers it to one of its endpoints instead, through its
    /// own delivery path (its journal and its verdict see it):
    ///
    ///   mediagen webhooks trigger generation.completed --to localhost:3000/hooks \
    ///     --secret whsec_… --set data.generation.cost_rub=12.5
    ///   mediagen webhooks trigger generation.failed --to http://127.0.0.1:8787/ \
    ///     --secret whsec_… --webhook-id 3b2c… --timestamp 1795870000
    ///   mediagen webhooks trigger generation.completed --endpoint we_2Hk9… \
    ///     --base-url http://127.0.0.1:8080
    #[command(verbatim_doc_comment)]
    Trigger(TriggerArgs),
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

/// `webhooks trigger`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("target").required(true).args(["to", "endpoint"]))]
pub struct TriggerArgs {
    /// generation.completed or generation.failed
    pub event: String,
    /// The receiver: an app, or a `webhooks listen`
    #[arg(long, value_name = "URL", value_parser = parse::forward_url, requires = "secret")]
    pub to: Option<url::Url>,
    /// With --to: the receiver's signing secret (whsec_…)
    #[arg(long, env = "MEDIAGEN_WEBHOOK_SECRET", hide_env_values = true)]
    pub secret: Option<String>,
    /// Instead: an endpoint of the mock at --base-url
    ///
    /// The mock delivers the event through its own delivery path: signed with the
    /// endpoint's secret, retried on its schedule, in its journal and its verdict.
    #[arg(long, value_name = "ID", conflicts_with_all = ["secret", "webhook_id", "timestamp"])]
    pub endpoint: Option<String>,
    /// With --endpoint: the mock's admin token, or a world's control token
    #[arg(
        long,
        env = "MEDIAGEN_MOCK_ADMIN_TOKEN",
        hide_env_values = true,
        requires = "endpoint"
    )]
    pub token: Option<String>,
    /// Set a field, checked against the schema first
    ///
    /// A path such as data.generation.cost_rub or data.generation.output_urls[0], and a
    /// value (JSON, else a string). An unknown member or a mistyped value is refused
    /// before anything is sent.
    #[arg(long = "set", value_name = "PATH=VALUE", value_parser = parse::param)]
    pub sets: Vec<(String, serde_json::Value)>,
    /// The webhook-id header [default: a new UUID]
    ///
    /// The same one twice tests a receiver's dedupe: it must acknowledge the repeat and
    /// act once.
    #[arg(long, value_name = "ID")]
    pub webhook_id: Option<String>,
    /// The webhook-timestamp header [default: now]
    ///
    /// In Unix seconds; one more than 5 minutes off tests a receiver's tolerance: it must
    /// refuse the delivery.
    #[arg(long, value_name = "UNIX", allow_hyphen_values = true)]
    pub timestamp: Option<i64>,
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
                .value_parser(parse::event_filter())
                .hide_possible_values(true)
                .help("An event to take [default: all]")
                .long_help(format!(
                    "An event to take ({}): before any --forward-to, what listen takes (with \
                     --register, what the endpoint subscribes to); after a --forward-to, what \
                     that app gets [default: all]",
                    mediagen::EventTypeFilter::KNOWN.join(", ")
                )),
        )
        .arg(
            Arg::new("forward-to")
                .long("forward-to")
                .value_name("URL")
                .action(ArgAction::Append)
                .value_parser(parse::forward_url)
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// `webhooks listen` alone.
    #[derive(Debug, Parser)]
    struct Listen {
        #[command(flatten)]
        args: ListenArgs,
    }

    fn routes(args: &[&str]) -> Routes {
        Listen::try_parse_from(["listen", "--secret", "whsec_x"].iter().chain(args))
            .unwrap()
            .args
            .routes
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
}
