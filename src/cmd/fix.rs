//! `omnish fix`: asks the LLM command for a corrected version of the last failed command and
//! prints the command it answered (a fenced block or a single line) on stdout. It runs nothing:
//! the key binding from `omnish init` puts the command on the prompt line.

use crate::cli::FixArgs;
use crate::cmd::Run;
use crate::cmd::llm;
use crate::config::Config;
use anyhow::Result;
use std::io::{IsTerminal, Write};

/// What the model is asked to do with the record.
pub(crate) const INSTRUCTION: &str = "You are helping a user at their terminal. The last \
command in the record below failed. Work out the corrected command that does what the user \
meant.";

/// The request after the record: the answer's shape, for [`llm::extract_command`].
pub(crate) const REQUEST: &str = "Reply with only the corrected shell command, in one fenced \
code block (```sh), and no explanation.";

impl Run for FixArgs {
    fn run(self) -> Result<i32> {
        let cfg = Config::load()?;
        let context = match llm::context_text(&self.context, &cfg, false)? {
            Ok(text) => text,
            Err(note) => {
                eprintln!("omnish: nothing to fix: {note}");
                return Ok(1);
            }
        };
        let prompt = llm::prompt(INSTRUCTION, &context, REQUEST);
        let Some((words, shown)) = llm::llm_command(self.command.as_deref(), &cfg)? else {
            eprintln!("{}", llm::how_to_configure(&cfg));
            return Ok(1);
        };
        if std::io::stderr().is_terminal() {
            eprintln!("omnish: asking `{shown}` for a fix…");
        }
        let mut answer = Vec::new();
        let code = llm::run_llm(&words, &shown, &prompt, &mut answer)?;
        if code != 0 {
            return Ok(code);
        }
        let answer = String::from_utf8_lossy(&answer);
        let command = llm::extract_command(&answer).ok_or_else(|| llm::no_command(&answer))?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{command}")?;
        Ok(0)
    }
}
