//! The `mediagen` command.

mod cli;
mod cmd;
mod config;
mod error;
mod hint;
mod output;
mod signal;
mod verbose;

use std::io::Write;
use std::process::ExitCode;

use clap::FromArgMatches;

use crate::error::{Exit, Failure};

fn main() -> ExitCode {
    let cli = match cli::command()
        .try_get_matches()
        .and_then(|matches| cli::Cli::from_arg_matches(&matches))
    {
        Ok(cli) => cli,
        Err(err) => return usage(&err),
    };
    hint::set_command(cli.command.name());
    let out = output::Output::new(&cli.global);
    if let Err(err) = verbose::install(cli.global.verbose, &out) {
        return code(error::report(&out, &err));
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => return code(error::report(&out, &anyhow::Error::new(err))),
    };
    match runtime.block_on(cmd::run(cli, out.clone())) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader has gone (`mediagen list | head`): nothing is wrong, and nobody to tell.
        Err(err) if error::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => code(error::report(&out, &err)),
    }
}

/// `--help` and `--version` print and succeed; a wrong command line exits 2, with
/// the error envelope on stdout when the output is JSON.
fn usage(err: &clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    // A closed stdout or stderr leaves nothing to do but exit.
    let _ = err.print();
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        return ExitCode::SUCCESS;
    }
    // Read as bytes: an argument that is not UTF-8 is itself a usage error to tell.
    let args: Vec<String> = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let for_scripts = |format: &str| matches!(format, "json" | "jsonl");
    let json = args
        .iter()
        .any(|arg| arg == "--json" || arg.strip_prefix("--format=").is_some_and(for_scripts))
        || args
            .windows(2)
            .any(|pair| pair[0] == "--format" && for_scripts(&pair[1]))
        || !std::io::IsTerminal::is_terminal(&std::io::stdout());
    if json {
        let rendered = err.render().to_string();
        let message = rendered.lines().next().unwrap_or_default();
        let message = message.strip_prefix("error: ").unwrap_or(message);
        let mut failure = Failure::new(Exit::Usage, "USAGE_ERROR", message)
            .hint("`mediagen --help` lists the commands and options");
        // A value outside a closed set: the envelope lists the set, as the service's does.
        if let Some(ContextValue::Strings(allowed)) = err.get(ContextKind::ValidValue) {
            failure = failure.detail("allowedValues", allowed.clone());
        }
        let _ = writeln!(std::io::stdout().lock(), "{}", failure.envelope());
    }
    code(Exit::Usage)
}

fn code(exit: Exit) -> ExitCode {
    ExitCode::from(exit as u8)
}
