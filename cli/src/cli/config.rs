//! `login`, `config`, `config set` and `config get`.

use clap::{Args, Subcommand, ValueEnum};

#[derive(Debug, Subcommand)]
pub enum ConfigCommands {
    /// Save an API key to a profile of the config file, once the service accepts it
    ///
    /// The key is asked for without echo on a terminal, or read from stdin when it is a pipe
    /// (`mediagen login < key.txt`); --api-key and MEDIAGEN_API_KEY are not used. The base
    /// URL is --base-url, MEDIAGEN_BASE_URL or the profile's, else asked for. Nothing is
    /// written unless the service accepts the key. The profile is --profile, else the file's
    /// default_profile, else "default"; the file is readable by its owner only.
    #[command(display_order = 18)]
    Login,
    /// Show the configuration in effect, or set and get a value of the config file
    #[command(display_order = 19)]
    Config(ConfigArgs),
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: Option<ValueCommand>,
}

/// `config set` and `config get`: one value of the config file.
#[derive(Debug, Subcommand)]
pub enum ValueCommand {
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
