//! The signals that stop a command: Ctrl-C for a wait, and also SIGTERM for a
//! receiver that a supervisor or a test runs in the background.

/// Signals listened for from the moment this is made, so that one sent as soon as
/// the command says it is ready is not missed.
#[derive(Debug)]
pub struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    /// Ctrl-C (SIGINT) only.
    pub fn interrupt() -> anyhow::Result<Self> {
        Self::listen(false)
    }

    /// Ctrl-C or SIGTERM.
    pub fn interrupt_or_terminate() -> anyhow::Result<Self> {
        Self::listen(true)
    }

    #[cfg(unix)]
    fn listen(terminate: bool) -> anyhow::Result<Self> {
        use anyhow::Context as _;
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            interrupt: signal(SignalKind::interrupt()).context("while listening for Ctrl-C")?,
            terminate: terminate
                .then(|| signal(SignalKind::terminate()))
                .transpose()
                .context("while listening for SIGTERM")?,
        })
    }

    #[cfg(not(unix))]
    fn listen(_terminate: bool) -> anyhow::Result<Self> {
        Ok(Self {})
    }

    /// Resolves at the first of the signals.
    pub async fn recv(&mut self) {
        #[cfg(unix)]
        match &mut self.terminate {
            Some(terminate) => {
                tokio::select! {
                    _ = self.interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
            }
            None => {
                self.interrupt.recv().await;
            }
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c().await.ok();
    }
}
