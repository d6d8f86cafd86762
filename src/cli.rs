//! Command-line interface (clap derive).

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "omnish",
    version,
    about = "Record your shell; hand its recent commands and output to a language model"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a shell in a recorded pseudo-terminal.
    Wrap(WrapArgs),
}

#[derive(Debug, clap::Args)]
pub struct WrapArgs {
    /// The shell and its arguments (default: $SHELL, then /bin/sh).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "SHELL [ARGS]..."
    )]
    pub shell: Vec<String>,
}
