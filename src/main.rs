//! omnish: parse, make the one [`Setup`] of the process for the commands that need it,
//! dispatch, and map errors to exit statuses in one place ([`omnish::error::exit_status`]).

use clap::Parser;
use omnish::cli::{Cli, Command};
use omnish::cmd::{Run, RunWith, Setup};

fn main() {
    // An agent's hook, after each of its tool calls: answered before clap is built.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(code) = omnish::cmd::hooks::run_early(&args) {
        std::process::exit(code);
    }
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        // These start the user's shell or need no store: no Setup.
        Command::Wrap(args) => args.run(),
        Command::Init(args) => args.run(),
        Command::Config(args) => args.run(),
        Command::Completions(args) => args.run(),
        Command::Man(args) => args.run(),
        Command::Nest(args) => args.run(),
        Command::Ssh(args) => args.run(),
        Command::Exec(args) => args.run(),
        Command::Hooks(args) => args.run(),
        Command::Context(args) => with_setup(|s| args.run(s)),
        Command::Ask(args) => with_setup(|s| args.run(s)),
        Command::Fix(args) => with_setup(|s| args.run(s)),
        Command::Mcp(args) => with_setup(|s| args.run(s)),
        Command::Note(args) => with_setup(|s| args.run(s)),
        Command::Sessions(args) => with_setup(|s| args.run(s)),
        Command::Search(args) => with_setup(|s| args.run(s)),
        Command::Status(args) => with_setup(|s| args.run(s)),
        Command::Pause(args) => with_setup(|s| args.run(s)),
        Command::Resume(args) => with_setup(|s| args.run(s)),
        Command::Forget(args) => with_setup(|s| args.run(s)),
        Command::Pick(args) => with_setup(|s| args.run(s)),
        Command::Export(args) => with_setup(|s| args.run(s)),
        Command::Diff(args) => with_setup(|s| args.run(s)),
    };
    let code = match result {
        Ok(code) => code,
        Err(err) => {
            let (code, line) = omnish::error::exit_status(&err);
            if let Some(line) = line {
                eprintln!("{line}");
            }
            code
        }
    };
    std::process::exit(code);
}

/// Runs `command` with the process's one [`Setup`], made here.
fn with_setup(command: impl FnOnce(&Setup) -> anyhow::Result<i32>) -> anyhow::Result<i32> {
    command(&Setup::load()?)
}
