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
    /// Options of a mock this build does not have: taken so that the answer is where
    /// to get the mock, not an unknown flag.
    #[cfg(not(feature = "mock"))]
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub ignored: Vec<String>,
}

#[cfg(feature = "mock")]
impl MockArgs {
    /// Drops a config file that came from `MEDIAGEN_CONFIG`. Sharing an id with the
    /// global `--config`, this option also receives the global's value, and
    /// mediagen's own file is no config of the mock's. Typed on the command line it
    /// is the mock's, wherever it stands; from the environment only
    /// `MEDIAGEN_MOCK_CONFIG` is.
    pub fn keep_own_config(&mut self, matches: &clap::ArgMatches) {
        let from_environment =
            matches.value_source("config") == Some(clap::parser::ValueSource::EnvVariable);
        let own = std::env::var_os(CONFIG_ENV).is_some_and(|value| !value.is_empty());
        if from_environment && !own {
            self.config = None;
        }
    }
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
