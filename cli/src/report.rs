//! Telling the error a command ended with, and its exit code: the envelope on
//! stdout for scripts, and for people one line on stderr with the hint below.

use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::cli::CommandId;
use crate::error::{Exit, Failure};
use crate::output::{self, Output};

/// Tells the error `command` ended with: the envelope on stdout for scripts, and for
/// people on stderr one line that says each thing once (what was being done, the
/// code, the HTTP status, the message, the request id), then the hint. `embedded`:
/// the command ran against the embedded mock (`--mock`).
pub fn error(out: &Output, err: &anyhow::Error, command: CommandId, embedded: bool) -> Exit {
    let failure = Failure::of(err);
    let failure = if embedded {
        failure.on_embedded_mock()
    } else {
        failure
    };
    let failure = failure.hinted(command);
    if out.is_json() {
        // A reader that has gone cannot be told.
        let _ = out.envelope(&failure.envelope());
    }
    out.note(failure.line(out));
    failure.exit
}

/// A wrong command line, or `--help` and `--version`, which print and succeed. A
/// wrong command line exits 2, with the error envelope on stdout when the output
/// is JSON.
pub fn usage(err: &clap::Error) -> Option<Exit> {
    // A closed stdout or stderr leaves nothing to do but exit.
    let _ = output::command_line_message(err);
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        return None;
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
        || !output::stdout_is_terminal();
    if json {
        let mut failure = Failure::new(Exit::Usage, "USAGE_ERROR", output::command_line_error(err))
            .hint("`mediagen --help` lists the commands and options");
        // A value outside a closed set: the envelope lists the set, as the service's does.
        if let Some(ContextValue::Strings(allowed)) = err.get(ContextKind::ValidValue) {
            failure = failure.detail("allowedValues", allowed.clone());
        }
        let _ = output::json_line(&failure.envelope());
    }
    Some(Exit::Usage)
}

/// Whether the error is stdout closed by its reader (`mediagen list | head`).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(|json| json.io_error_kind())
                == Some(std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_pipe_is_found_through_json_and_context() {
        let io = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let err = anyhow::Error::new(serde_json::Error::io(io)).context("while printing");
        assert!(is_broken_pipe(&err));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }
}
