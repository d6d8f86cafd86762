//! omnish: parse, dispatch, and map errors to exit statuses in one place.

use clap::Parser;
use omnish::cli::{Cli, Command};
use omnish::cmd::Run;
use omnish::error::ExitError;
use std::io::ErrorKind;

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Wrap(args) => args.run(),
        Command::Context(args) => args.run(),
        Command::Init(args) => args.run(),
        Command::Ask(args) => args.run(),
        Command::Fix(args) => args.run(),
        Command::Config(args) => args.run(),
        Command::Completions(args) => args.run(),
        Command::Man(args) => args.run(),
        Command::Mcp(args) => args.run(),
        Command::Note(args) => args.run(),
        Command::Sessions(args) => args.run(),
        Command::Search(args) => args.run(),
        Command::Status(args) => args.run(),
    };
    let code = match result {
        Ok(code) => code,
        Err(err) => exit_code_for(&err),
    };
    std::process::exit(code);
}

/// Prints the error in one line and picks the exit status. A closed stdout (`| head`) is
/// success: the reader got what it wanted.
fn exit_code_for(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.kind() == ErrorKind::BrokenPipe {
                return 0;
            }
        }
    }
    let message: Vec<String> = err.chain().map(|c| c.to_string()).collect();
    eprintln!("omnish: {}", message.join(": "));
    err.downcast_ref::<ExitError>().map_or(1, |e| e.code)
}
