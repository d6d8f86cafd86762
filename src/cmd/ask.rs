//! `omnish ask [QUESTION]`: the context of the last failed command (or what the context options
//! select), fenced in a prompt with the question, piped into the user's LLM command; the answer
//! streams to the terminal.

use crate::cli::AskArgs;
use crate::cmd::Run;
use crate::cmd::llm::{self, DEFAULT_QUESTION};
use crate::config::Config;
use anyhow::Result;
use std::io::{IsTerminal, Write};

/// What the model is asked to do with the record.
pub(crate) const INSTRUCTION: &str = "You are helping a user at their terminal. Answer their \
question about the shell commands below briefly and concretely: what went wrong, and the \
command or change that fixes it.";

impl Run for AskArgs {
    fn run(self) -> Result<i32> {
        let cfg = Config::load()?;
        let question = if self.question.is_empty() {
            DEFAULT_QUESTION.to_string()
        } else {
            self.question.join(" ")
        };
        let context = match llm::context_text(&self.context, &cfg, true)? {
            Ok(text) => text,
            Err(note) => {
                eprintln!("omnish: nothing to ask about: {note}");
                return Ok(1);
            }
        };
        let prompt = llm::prompt(INSTRUCTION, &context, &format!("Question: {question}"));
        let mut out = std::io::stdout().lock();
        if self.print_prompt {
            out.write_all(prompt.as_bytes())?;
            return Ok(0);
        }
        let Some((words, shown)) = llm::llm_command(self.command.as_deref(), &cfg)? else {
            out.write_all(prompt.as_bytes())?;
            out.flush()?;
            eprintln!("{}", llm::how_to_configure(&cfg));
            return Ok(0);
        };
        if std::io::stderr().is_terminal() {
            eprintln!("omnish: asking `{shown}`…");
        }
        llm::run_llm(&words, &shown, &prompt, &mut out)
    }
}
