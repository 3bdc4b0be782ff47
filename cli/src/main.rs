//! The `mediagen` command: reads the command line, runs the command, and tells how
//! it ended with an exit code of `error::Exit` (listed in `mediagen --help`).

mod cli;
mod cmd;
mod config;
mod error;
mod error_answer;
mod hint;
mod jq;
mod output;
mod parse;
mod report;
mod sdk_error;
mod signal;
mod verbose;

use std::process::ExitCode;

use crate::error::Exit;
use crate::output::Output;

fn main() -> ExitCode {
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(err) => return report::usage(&err).map_or(ExitCode::SUCCESS, code),
    };
    let command = cli.command.id();
    let embedded = cli.global.mock;
    let out = Output::new(&cli.global);
    match cmd::run(cli, &out) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader has gone (`mediagen list | head`): nothing is wrong, and nobody to tell.
        Err(err) if report::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => code(report::error(&out, &err, command, embedded)),
    }
}

fn code(exit: Exit) -> ExitCode {
    ExitCode::from(exit as u8)
}
