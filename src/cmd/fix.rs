//! `omnish fix`: asks the LLM command for a corrected version of the last failed command and
//! prints the command it answered (a fenced block or a single line) on stdout. It runs nothing:
//! the key binding from `omnish init` puts the command on the prompt line.
//!
//! The answer is read as it streams (`Scan`): only the command is kept (at most
//! `MAX_COMMAND` bytes), never the whole answer, however long it is. The command is printed
//! with its control characters visible ([`crate::term::visible::text`]), so what lands on the
//! prompt line is what the person sees.

use crate::cli::FixArgs;
use crate::cmd::llm;
use crate::cmd::{RunWith, Setup};
use crate::term::visible;
use anyhow::Result;
use std::io::{IsTerminal, Write};

/// What the model is asked to do with the record.
pub(crate) const INSTRUCTION: &str = "You are helping a user at their terminal. The last \
command in the record below failed. Work out the corrected command that does what the user \
meant.";

/// The request after the record: the answer's shape, for [`Scan`].
pub(crate) const REQUEST: &str = "Reply with only the corrected shell command, in one fenced \
code block (```sh), and no explanation.";

/// Most bytes of a command taken from an answer: far more than a command line anyone edits at
/// a prompt.
pub(crate) const MAX_COMMAND: usize = 64 * 1024;
/// Chars of the answer's first line quoted when it holds no command.
const QUOTED: usize = 80;

impl RunWith for FixArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        let cfg = &setup.config;
        let context = match llm::context_text(&self.context, setup, false)? {
            Ok(text) => text,
            Err(note) => {
                eprintln!("omnish: nothing to fix: {note}");
                return Ok(1);
            }
        };
        let prompt = llm::prompt(INSTRUCTION, &context, REQUEST);
        let Some((words, shown)) =
            llm::llm_command(self.command.as_deref(), cfg, setup.path.as_deref())?
        else {
            eprintln!("{}", llm::how_to_configure(cfg));
            return Ok(1);
        };
        if std::io::stderr().is_terminal() {
            eprintln!("omnish: asking `{shown}` for a fix…");
        }
        let mut scan = Scan::default();
        let code = llm::run_llm(&words, &shown, &prompt, &mut scan)?;
        if code != 0 {
            return Ok(code);
        }
        let command = scan.end()?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", visible::text(&command))?;
        Ok(0)
    }
}

/// Where the scan of an answer is.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Before any fence: a single-line answer is still possible.
    #[default]
    Before,
    /// Inside the first fenced block, opened with `ticks` backticks.
    Fenced { ticks: usize },
    /// Past the first fenced block: the rest is not needed.
    Done,
}

/// Finds the command in an answer read piece by piece: the first fenced block's contents (each
/// line's `$ ` prompt taken off), or the answer itself when it is one line (surrounding
/// backticks and a `$ ` taken off). Lines end at `\n` (a `\r` before it is dropped), as
/// [`str::lines`] splits them. Keeps at most [`MAX_COMMAND`] bytes of the command, of the first
/// line and of the line being read.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    part: Part,
    /// The line being read, at most `MAX_COMMAND + 1` bytes of it (more says it was longer).
    line: Vec<u8>,
    /// The first line that is not blank (bounded like `line`).
    first: Option<Vec<u8>>,
    /// Lines that are not blank before a fence, counted up to 2.
    nonempty: u8,
    /// The block's lines so far, joined by newlines.
    body: String,
    /// The block was longer than [`MAX_COMMAND`].
    body_cut: bool,
}

impl Write for Scan {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = memchr::memchr(b'\n', rest) {
            self.keep(&rest[..at]);
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.line_done(&line);
            line.clear();
            self.line = line;
            rest = &rest[at + 1..];
        }
        self.keep(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Scan {
    /// Adds `bytes` to the line being read, up to the bound (nothing once the block is read).
    fn keep(&mut self, bytes: &[u8]) {
        if self.part == Part::Done {
            return;
        }
        let room = (MAX_COMMAND + 1).saturating_sub(self.line.len());
        self.line.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn line_done(&mut self, bytes: &[u8]) {
        if self.part == Part::Done {
            return;
        }
        let cut = bytes.len() > MAX_COMMAND;
        let line = String::from_utf8_lossy(bytes);
        match self.part {
            Part::Done => {}
            Part::Before => {
                if line.trim().is_empty() {
                    return;
                }
                if self.first.is_none() {
                    self.first = Some(bytes.to_vec());
                }
                let t = line.trim_start();
                let ticks = t.chars().take_while(|&c| c == '`').count();
                if ticks >= 3 {
                    self.part = Part::Fenced { ticks };
                } else {
                    self.nonempty = (self.nonempty + 1).min(2);
                }
            }
            Part::Fenced { ticks } => {
                let t = line.trim_start();
                if !cut
                    && t.chars().take_while(|&c| c == '`').count() >= ticks
                    && line.trim().trim_start_matches('`').is_empty()
                {
                    self.part = Part::Done;
                    return;
                }
                let l = line.strip_prefix("$ ").unwrap_or(&line);
                let sep = usize::from(!self.body.is_empty());
                if cut || self.body.len() + sep + l.len() > MAX_COMMAND {
                    self.body_cut = true;
                    self.part = Part::Done;
                    return;
                }
                if sep == 1 {
                    self.body.push('\n');
                }
                self.body.push_str(l);
            }
        }
    }

    /// The answer ended: the command in it, or an error that says why there is none.
    pub(crate) fn end(mut self) -> Result<String> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line);
        }
        let too_long = || {
            anyhow::anyhow!(
                "the command in the LLM's answer is longer than {} KiB; not put on the line",
                MAX_COMMAND / 1024
            )
        };
        let command = match self.part {
            Part::Fenced { .. } | Part::Done => {
                if self.body_cut {
                    return Err(too_long());
                }
                self.body.trim().to_string()
            }
            Part::Before if self.nonempty == 1 => {
                let first = self.first.as_deref().unwrap_or_default();
                if first.len() > MAX_COMMAND {
                    return Err(too_long());
                }
                let first = String::from_utf8_lossy(first);
                let one = first.trim().trim_matches('`').trim();
                one.strip_prefix("$ ").unwrap_or(one).trim().to_string()
            }
            Part::Before => String::new(),
        };
        if !command.is_empty() {
            return Ok(command);
        }
        let Some(first) = &self.first else {
            anyhow::bail!("the LLM gave an empty answer; no command to put on the line");
        };
        let first = String::from_utf8_lossy(first);
        let mut short: String = first.trim().chars().take(QUOTED).collect();
        if short.len() < first.trim().len() {
            short.push('…');
        }
        anyhow::bail!(
            "no command found in the LLM's answer (neither a fenced block nor a single line): {}",
            visible::line(&short)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn extract(answer: &str) -> Option<String> {
        let mut scan = Scan::default();
        scan.write_all(answer.as_bytes()).unwrap();
        scan.end().ok()
    }

    /// What `fix` did before it streamed: the whole answer in memory, the same rules.
    fn whole(answer: &str) -> Option<String> {
        let mut lines = answer.lines();
        while let Some(line) = lines.next() {
            let t = line.trim_start();
            let ticks = t.chars().take_while(|&c| c == '`').count();
            if ticks >= 3 {
                let fence = &t[..ticks];
                let mut body = Vec::new();
                for l in lines.by_ref() {
                    if l.trim_start().starts_with(fence)
                        && l.trim().trim_start_matches('`').is_empty()
                    {
                        break;
                    }
                    body.push(l);
                }
                let cmd: Vec<&str> = body
                    .iter()
                    .map(|l| l.strip_prefix("$ ").unwrap_or(l))
                    .collect();
                let cmd = cmd.join("\n").trim().to_string();
                return (!cmd.is_empty()).then_some(cmd);
            }
        }
        let nonempty: Vec<&str> = answer.lines().filter(|l| !l.trim().is_empty()).collect();
        if nonempty.len() == 1 {
            let one = nonempty[0].trim().trim_matches('`').trim();
            let one = one.strip_prefix("$ ").unwrap_or(one).trim();
            return (!one.is_empty()).then(|| one.to_string());
        }
        None
    }

    #[test]
    fn extracts_fenced_block_or_single_line() {
        assert_eq!(
            extract("Try this:\n```bash\n$ cargo build --release\n```\nthen run it").as_deref(),
            Some("cargo build --release")
        );
        assert_eq!(extract("`ls -la`\n").as_deref(), Some("ls -la"));
        assert_eq!(
            extract("\n  git push -u origin main  \r\n").as_deref(),
            Some("git push -u origin main")
        );
        assert_eq!(extract("You could\nrun ls"), None);
        assert_eq!(extract("```\n```"), None);
        assert_eq!(
            extract("````sh\nfor f in *; do\n  echo \"$f\"\ndone\n````").as_deref(),
            Some("for f in *; do\n  echo \"$f\"\ndone")
        );
    }

    #[test]
    fn says_why_there_is_no_command() {
        let err = |a: &str| {
            let mut scan = Scan::default();
            scan.write_all(a.as_bytes()).unwrap();
            scan.end().unwrap_err().to_string()
        };
        assert!(err(" \n\n").contains("empty answer"));
        let e = err("Well,\x1b[8m it\ndepends.");
        assert!(e.ends_with(": Well,^[[8m it"), "{e}");
        // Past the bound: a clear error, not a command cut short.
        let e = err(&format!("```\n{}\n```\n", "x".repeat(MAX_COMMAND + 1)));
        assert!(e.contains("longer than 64 KiB"), "{e}");
        let e = err(&"y".repeat(3 * MAX_COMMAND));
        assert!(e.contains("longer than 64 KiB"), "{e}");
    }

    #[test]
    fn a_huge_answer_is_read_in_bounded_memory() {
        let mut scan = Scan::default();
        scan.write_all(b"Here:\n```sh\necho ok\n```\n").unwrap();
        let filler = vec![b'z'; 1 << 20];
        for _ in 0..64 {
            scan.write_all(&filler).unwrap();
            assert!(scan.line.capacity() <= 2 * MAX_COMMAND + 64);
        }
        scan.write_all(b"\nmore\n").unwrap();
        assert_eq!(scan.end().unwrap(), "echo ok");
        // Before the block, a long line is kept only up to the bound.
        let mut scan = Scan::default();
        for _ in 0..16 {
            scan.write_all(&filler).unwrap();
        }
        assert!(scan.line.len() <= MAX_COMMAND + 1);
        scan.write_all(b"\n```\nls\n```\n").unwrap();
        assert_eq!(scan.end().unwrap(), "ls");
    }

    proptest! {
        /// However the answer arrives in pieces, the command found is the one the whole answer
        /// holds.
        #[test]
        fn pieces_find_what_the_whole_answer_holds(
            parts in proptest::collection::vec(
                prop_oneof![Just("```"), Just("````"), Just("`"), Just("$ "), Just("\n"),
                            Just("\r\n"), Just(" "), Just("ls -la"), Just("sh"), Just("é"),
                            Just("\r")],
                0..24),
            cut in 0usize..200,
        ) {
            let answer: String = parts.concat();
            let mut scan = Scan::default();
            let bytes = answer.as_bytes();
            let cut = cut.min(bytes.len());
            // A cut may fall inside a UTF-8 sequence.
            scan.write_all(&bytes[..cut]).unwrap();
            scan.write_all(&bytes[cut..]).unwrap();
            prop_assert_eq!(scan.end().ok(), whole(&answer));
        }
    }
}
