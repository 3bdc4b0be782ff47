//! The judged command as a child process: started with the world in its
//! environment, signals passed on to it, and its end as an exit code.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::process::{Command, ExitStatus};

/// How the command ended.
pub(super) enum Ended {
    /// It ran: its exit code (128+S for signal S) and that in words.
    Exited { code: u8, how: String },
    /// It could not be started: 127 when it is not found, 126 otherwise.
    NotStarted { code: u8, why: String },
}

/// A signal the judge was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Caught {
    Interrupt,
    Terminate,
}

/// Ctrl-C and SIGTERM, listened for from the moment this is made. Once made,
/// neither ends the judge: it passes them on and still reads the verdict.
pub(super) struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    #[cfg(unix)]
    pub(super) fn listen() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    #[cfg(not(unix))]
    pub(super) fn listen() -> std::io::Result<Self> {
        Ok(Self {})
    }

    /// The next signal.
    pub(super) async fn recv(&mut self) -> Caught {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => Caught::Interrupt,
                _ = self.terminate.recv() => Caught::Terminate,
            }
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c().await.ok();
            Caught::Interrupt
        }
    }
}

/// Runs `command` with `environment` set (a `None` value removes the variable)
/// and waits for it, passing signals on.
pub(super) async fn run(
    command: &[OsString],
    environment: &[(&'static str, Option<String>)],
    signals: &mut Signals,
) -> Ended {
    let Some((program, args)) = command.split_first() else {
        return Ended::NotStarted {
            code: 127,
            why: "no command given".into(),
        };
    };
    let mut process = Command::new(program);
    process.args(args);
    for (name, value) in environment {
        match value {
            Some(value) => process.env(name, value),
            None => process.env_remove(name),
        };
    }
    let mut child = match process.spawn() {
        Ok(child) => child,
        Err(err) => return not_started(&err),
    };
    let pid = child.id();
    // A blocking wait on a thread of its own: the mock goes on serving meanwhile.
    let mut waiting = tokio::task::spawn_blocking(move || child.wait());
    let mut caught = 0;
    let status = loop {
        tokio::select! {
            waited = &mut waiting => break waited,
            signal = signals.recv() => {
                caught += 1;
                pass_on(pid, signal, caught);
            }
        }
    };
    match status {
        Ok(Ok(status)) => exited(status),
        Ok(Err(err)) => Ended::Exited {
            code: super::JUDGE_FAILED,
            how: format!("could not be waited for: {err}"),
        },
        Err(err) => Ended::Exited {
            code: super::JUDGE_FAILED,
            how: format!("could not be waited for: {err}"),
        },
    }
}

fn not_started(err: &std::io::Error) -> Ended {
    match err.kind() {
        std::io::ErrorKind::NotFound => Ended::NotStarted {
            code: 127,
            why: "not found (is it on PATH, and its interpreter too?)".into(),
        },
        std::io::ErrorKind::PermissionDenied => Ended::NotStarted {
            code: 126,
            why: "permission denied (is it executable?)".into(),
        },
        _ => Ended::NotStarted {
            code: 126,
            why: err.to_string(),
        },
    }
}

fn exited(status: ExitStatus) -> Ended {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let number = u8::try_from(signal).unwrap_or(127).min(127);
            return Ended::Exited {
                code: 128 + number,
                how: format!("was ended by signal {signal}{}", signal_name(signal)),
            };
        }
    }
    match status.code() {
        Some(0) => Ended::Exited {
            code: 0,
            how: "exited with 0".into(),
        },
        Some(code) => Ended::Exited {
            // A code beyond a byte (Windows) still says that it failed.
            code: u8::try_from(code).ok().filter(|c| *c != 0).unwrap_or(1),
            how: format!("exited with {code}"),
        },
        None => Ended::Exited {
            code: 1,
            how: "ended without an exit code".into(),
        },
    }
}

#[cfg(unix)]
fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => " (SIGHUP)",
        2 => " (SIGINT)",
        3 => " (SIGQUIT)",
        6 => " (SIGABRT)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        13 => " (SIGPIPE)",
        15 => " (SIGTERM)",
        _ => "",
    }
}

/// Passes a signal the judge got on to the command. A Ctrl-C typed at a
/// terminal reached the command already (the terminal sends it to the whole
/// foreground group), so only one from elsewhere is passed on; SIGTERM comes
/// to the judge alone (a supervisor, a CI runner cancelling) and always is.
/// The third signal kills the command, for one that ignores the others.
fn pass_on(pid: u32, signal: Caught, caught: u32) {
    if caught >= 3 {
        eprintln!("judge: a third signal: the command is killed");
        send(pid, "KILL");
        return;
    }
    match signal {
        Caught::Terminate => {
            eprintln!("judge: SIGTERM passed on to the command; the verdict follows when it ends");
            send(pid, "TERM");
        }
        Caught::Interrupt if std::io::stdin().is_terminal() => {
            eprintln!("judge: interrupted; the verdict follows when the command ends");
        }
        Caught::Interrupt => {
            eprintln!("judge: SIGINT passed on to the command; the verdict follows when it ends");
            send(pid, "INT");
        }
    }
}

/// Sends `signal` to process `pid`. The workspace forbids unsafe code, so there
/// is no kill(2) here: the shell's own `kill` (POSIX) sends it.
#[cfg(unix)]
fn send(pid: u32, signal: &str) {
    let sent = Command::new("sh")
        .args(["-c", "kill -s \"$1\" \"$2\" 2>/dev/null", "sh", signal])
        .arg(pid.to_string())
        .stdin(std::process::Stdio::null())
        .status();
    if let Err(err) = sent {
        eprintln!("judge: could not send SIG{signal} to the command: {err}");
    }
}

/// Elsewhere the console sends Ctrl-C to the command itself.
#[cfg(not(unix))]
fn send(_pid: u32, _signal: &str) {}

/// The command as a person would type it.
pub(super) fn shown(command: &[OsString]) -> String {
    command
        .iter()
        .map(|arg| {
            let arg = arg.to_string_lossy();
            let plain = !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
            if plain {
                arg.into_owned()
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_shown_as_typed_with_quotes_where_a_shell_needs_them() {
        let command: Vec<OsString> = ["sh", "-c", "exit 3", "it's"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(shown(&command), r"sh -c 'exit 3' 'it'\''s'");
    }
}
