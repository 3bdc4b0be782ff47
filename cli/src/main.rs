//! The `mediagen` command.

use clap::Parser;

/// Generate images, video, speech and music with the media generation service.
#[derive(Debug, Parser)]
#[command(name = "mediagen", version, about)]
struct Cli {}

fn main() {
    Cli::parse();
}
