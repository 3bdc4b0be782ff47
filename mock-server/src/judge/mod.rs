//! `mediagen-mock judge` and `mediagen mock judge`: one command that holds a test
//! suite in any language to the mock's verdict on its client.
//!
//! The suite runs as a child process against a world of its own: the root of a
//! mock started in this process, or a world made on a running mock (`--url`) and
//! ended afterwards. Once the suite has exited and the world's webhook deliveries
//! have settled, the verdict is read over the control API like any client reads
//! it, told in words on stderr, and written as JUnit XML and as JSON for CI.
//!
//! Both binaries parse their command line into [`JudgeArgs`] (beside the serving
//! options, [`Options`]) and call [`run`]; the exit code it returns is theirs.

mod child;
mod report;
mod target;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;

use crate::config::Options;
use crate::verdict::rules::Rule;
use crate::verdict::{Severity, Strict, UnknownRule, known_ids};

use self::child::{Ended, Signals};
use self::report::Facts;
use self::target::{Settled, Target};

/// The exit codes of the judge, at the end of its `--help`.
pub const EXIT_CODES: &str = "\
Exit codes:
  0    COMMAND succeeded and no finding fails the run
  1    COMMAND succeeded and a finding fails the run: a violation, or advice
       of a rule made strict
  N    COMMAND failed with code N (128+S when signal S ended it); the verdict
       is still told and written
  2    usage: a wrong command line, or an unknown rule id in --strict
  125  the judge itself failed: the mock did not start, the world could not be
       made, or the verdict could not be read or written
  126  COMMAND could not be run (not executable, permission denied)
  127  COMMAND was not found";

/// A wrong command line.
const USAGE: u8 = 2;
/// The judge could not do its part.
const JUDGE_FAILED: u8 = 125;

/// The most real time spent waiting for webhook deliveries once the command
/// has exited.
const SETTLE: Duration = Duration::from_secs(15);

/// Run a command against the mock, then judge its client by the mock's verdict
///
/// Starts a mock on 127.0.0.1 at a free port with the serving options (those of
/// mediagen-mock; --listen and --state are not used), or with --url makes a world
/// of a running mock (with --admin-token when it needs one) and ends it afterwards.
/// COMMAND runs with stdin, stdout and stderr of its own and, in its environment:
///
///   MEDIAGEN_BASE_URL, MEDIAGEN_API_KEY  the world's base URL and its demo user's key
///   MEDIAGEN_MOCK_URL                    the same base URL: the control API is under
///                                        $MEDIAGEN_MOCK_URL/_mock/
///   MEDIAGEN_MOCK_API_KEY                the demo user's key again
///   MEDIAGEN_MOCK_CONTROL_TOKEN          the control API's bearer token, when it has one
///
/// SIGTERM is passed on to COMMAND, and Ctrl-C too unless it came from a terminal
/// (which sends it to COMMAND itself); a third signal kills COMMAND. Once COMMAND has
/// exited, the judge waits up to 15 seconds for the webhook deliveries that are due,
/// reads the verdict (GET /_mock/verdict), tells each finding on stderr, and writes
/// the reports asked for.
#[derive(Debug, Clone, Args)]
#[command(verbatim_doc_comment, after_long_help = EXIT_CODES)]
#[non_exhaustive]
pub struct JudgeArgs {
    /// Fail the run on advice too, of every rule or of RULES
    /// (--strict=poll-rate,read-after-final); a violation always fails it
    #[arg(
        long,
        value_name = "RULES",
        num_args = 0..=1,
        require_equals = true,
        value_delimiter = ','
    )]
    pub strict: Option<Vec<String>>,
    /// Write the verdict as JUnit XML: a test case per rule, failed by each finding
    /// that fails the run
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the verdict as the mock answered it (JSON)
    #[arg(
        long = "json",
        id = "verdict_json",
        alias = "verdict-json",
        value_name = "FILE"
    )]
    pub json: Option<PathBuf>,
    /// Judge in a new world of the mock running at URL instead of starting one
    #[arg(long, value_name = "URL")]
    pub url: Option<url::Url>,
    /// The command to run, and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// The help of the serving options beside [`JudgeArgs`], for the command that
/// flattens both (`#[command(mut_args = judge::serving_help)]`, after its
/// fields): under a heading of their own after the judge's options, in the
/// long help only, and those the judge does not use (the address, the state
/// file) not at all.
pub fn serving_help(arg: clap::Arg) -> clap::Arg {
    const OWN: [&str; 5] = ["strict", "junit", "verdict_json", "url", "command"];
    const UNUSED: [&str; 4] = ["listen", "open_control", "state", "state_interval"];
    let id = arg.get_id().as_str();
    if OWN.contains(&id) {
        arg
    } else if UNUSED.contains(&id) {
        arg.hide(true)
    } else {
        arg.help_heading("Options of the mock")
            .hide_short_help(true)
    }
}

/// Runs the command of `args` against a mock set up from `config_file` and
/// `options` (as `mediagen-mock` takes them), judges its client, and returns the
/// code to exit with ([`EXIT_CODES`]). Tells what it does on stderr.
pub async fn run(args: JudgeArgs, config_file: Option<&Path>, options: Options) -> u8 {
    let strict = match strict_rules(args.strict.as_deref()) {
        Ok(rules) => rules,
        Err(unknown) => {
            eprintln!("judge: --strict: {unknown}");
            return USAGE;
        }
    };
    // Listened for before anything starts, so that none is missed.
    let mut signals = match Signals::listen() {
        Ok(signals) => signals,
        Err(err) => {
            eprintln!("judge: while listening for signals: {err}");
            return JUDGE_FAILED;
        }
    };
    let target = match &args.url {
        Some(url) => Target::world_of(url, config_file, options).await,
        None => Target::start(config_file, options).await,
    };
    let target = match target {
        Ok(target) => target,
        Err(err) => {
            eprintln!("judge: {err:#}");
            return JUDGE_FAILED;
        }
    };
    let started = Instant::now();
    let ended = child::run(&args.command, &target.environment(), &mut signals).await;
    let elapsed = started.elapsed();
    let command = child::shown(&args.command);
    let own = match ended {
        Ended::NotStarted { code, why } => {
            eprintln!("judge: cannot run `{command}`: {why}");
            target.close().await;
            return code;
        }
        Ended::Exited { code, how } => {
            eprintln!("judge: `{command}` {how}");
            code
        }
    };
    match target.settle(SETTLE, &mut signals).await {
        Ok(Settled::Quiet) => {}
        Ok(settled) => eprintln!("judge: {settled}"),
        Err(err) => eprintln!("judge: could not see the webhook deliveries: {err:#}"),
    }
    let answer = target.verdict(&strict).await;
    target.close().await;
    let (raw, verdict) = match answer {
        Ok(answer) => answer,
        Err(err) => {
            eprintln!("judge: {err:#}");
            return if own != 0 { own } else { JUDGE_FAILED };
        }
    };
    let facts = Facts {
        command: &command,
        code: own,
        elapsed,
        strict: &strict,
    };
    eprint!("{}", report::words(&verdict, &facts));
    let mut written = true;
    if let Some(path) = &args.json {
        written &= write(path, &raw);
    }
    if let Some(path) = &args.junit {
        let known: Vec<&str> = known_ids().collect();
        written &= write(path, report::junit(&verdict, &facts, &known).as_bytes());
    }
    if own != 0 {
        own
    } else if !written {
        JUDGE_FAILED
    } else if verdict.fails(&strict) {
        1
    } else {
        0
    }
}

/// The rule ids `--strict` makes fail the run: none without it, every rule of
/// advice when it names none, else the ones it names, each a rule's (or an old
/// id the mock still takes).
fn strict_rules(given: Option<&[String]>) -> Result<Vec<String>, UnknownRule> {
    let Some(given) = given else {
        return Ok(Vec::new());
    };
    let named: Vec<String> = given
        .iter()
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty())
        .collect();
    if named.is_empty() {
        return Ok(Rule::ALL
            .into_iter()
            .filter(|rule| rule.severity() == Severity::Advice)
            .map(|rule| rule.id().to_owned())
            .collect());
    }
    Strict::of(named.iter().map(String::as_str))?;
    Ok(named)
}

/// Writes a report, making its folder; says so when it cannot.
fn write(path: &Path, bytes: &[u8]) -> bool {
    let made = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir),
        _ => Ok(()),
    };
    match made.and_then(|()| std::fs::write(path, bytes)) {
        Ok(()) => true,
        Err(err) => {
            eprintln!("judge: cannot write {}: {err}", path.display());
            false
        }
    }
}

impl std::fmt::Display for Settled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Quiet => f.write_str("no webhook delivery is pending"),
            Self::Later(n) => write!(
                f,
                "{} still pending, not waited for (a retry further off than the wait, or \
                 after an attempt nobody answered): the verdict judges the attempts made",
                deliveries(*n)
            ),
            Self::GaveUp(n) => write!(
                f,
                "stopped waiting after {} s, with {} due or in flight",
                SETTLE.as_secs(),
                deliveries(*n)
            ),
            Self::Interrupted(n) => write!(
                f,
                "stopped waiting (interrupted), with {} due or in flight",
                deliveries(*n)
            ),
        }
    }
}

fn deliveries(n: usize) -> String {
    if n == 1 {
        "1 webhook delivery".to_owned()
    } else {
        format!("{n} webhook deliveries")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_alone_makes_every_rule_of_advice_fail_and_nothing_else() {
        let rules = strict_rules(Some(&[])).unwrap();
        assert!(
            rules.contains(&"create-without-key".to_owned()),
            "{rules:?}"
        );
        assert!(
            !rules.contains(&"create-retry-new-key".to_owned()),
            "{rules:?}"
        );
        assert_eq!(strict_rules(None).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn strict_refuses_an_unknown_rule_naming_the_known_ones() {
        let given = ["poll-rate".to_owned(), "no-such-rule".to_owned()];
        let refused = strict_rules(Some(&given)).unwrap_err().to_string();
        assert!(refused.contains("no-such-rule"), "{refused}");
        assert!(refused.contains("create-retry-new-key"), "{refused}");
        let given = [" poll-rate".to_owned()];
        assert_eq!(strict_rules(Some(&given)).unwrap(), ["poll-rate"]);
    }
}
