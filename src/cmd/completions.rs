//! `omnish completions bash|zsh|fish|nushell`: prints the committed completion script (tests/cli_docs.rs
//! fails when it is stale).

use crate::cli::{CompletionShell, CompletionsArgs};
use crate::cmd::Run;
use anyhow::Result;
use std::io::Write;

const BASH: &str = include_str!("../../completions/omnish.bash");
const ZSH: &str = include_str!("../../completions/_omnish");
const FISH: &str = include_str!("../../completions/omnish.fish");
const NUSHELL: &str = include_str!("../../completions/omnish.nu");

impl Run for CompletionsArgs {
    fn run(self) -> Result<i32> {
        let text = match self.shell {
            CompletionShell::Bash => BASH,
            CompletionShell::Zsh => ZSH,
            CompletionShell::Fish => FISH,
            CompletionShell::Nushell => NUSHELL,
        };
        std::io::stdout().lock().write_all(text.as_bytes())?;
        Ok(0)
    }
}
