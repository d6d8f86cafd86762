use clap::Parser;
use omnish::cli::{Cli, Command};

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Wrap(_) => 0,
    };
    std::process::exit(code);
}
