//! `files upload`, `files get` and `files delete`.

use std::path::PathBuf;

use clap::Subcommand;

use crate::parse::{self, Suggest};

#[derive(Debug, Subcommand)]
pub enum FilesCommand {
    /// Upload a file to use as a generation input
    Upload {
        /// The file
        path: PathBuf,
        /// Its type, such as image/png [default: from the extension]
        #[arg(long, value_name = "MIME", hide_possible_values = true,
              value_parser = Suggest::text(mediagen::FileContentType::KNOWN))]
        content_type: Option<String>,
    },
    /// Show a file
    Get {
        /// File id
        #[arg(value_parser = parse::file_id)]
        id: uuid::Uuid,
    },
    /// Delete a file
    Delete {
        /// File id
        #[arg(value_parser = parse::file_id)]
        id: uuid::Uuid,
    },
}
