//! `omnish ask [QUESTION]`: the context of the last failed command (or what the context options
//! select), fenced in a prompt with the question, piped into the user's LLM command; the answer
//! streams to the terminal.

use crate::cli::AskArgs;
use crate::cmd::llm::{self, DEFAULT_QUESTION};
use crate::cmd::{RunWith, Setup};
use anyhow::Result;
use std::io::{IsTerminal, Write};

/// What the model is asked to do with the record.
pub(crate) const INSTRUCTION: &str = "You are helping a user at their terminal. Answer their \
question about the shell commands below briefly and concretely: what went wrong, and the \
command or change that fixes it.";

impl RunWith for AskArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        let cfg = &setup.config;
        let question = if self.question.is_empty() {
            DEFAULT_QUESTION.to_string()
        } else {
            self.question.join(" ")
        };
        let context = match llm::context_text(&self.context, setup, true)? {
            Ok(text) => text,
            Err(note) => {
                eprintln!("omnish: nothing to ask about: {note}");
                return Ok(1);
            }
        };
        let context = if self.diff {
            context + &crate::cmd::diff::for_prompt(setup)
        } else {
            context
        };
        let prompt = llm::prompt(INSTRUCTION, &context, &format!("Question: {question}"));
        let mut out = std::io::stdout().lock();
        if self.print_prompt {
            out.write_all(prompt.as_bytes())?;
            return Ok(0);
        }
        let Some((words, shown)) =
            llm::llm_command(self.command.as_deref(), cfg, setup.path.as_deref())?
        else {
            out.write_all(prompt.as_bytes())?;
            out.flush()?;
            eprintln!("{}", llm::how_to_configure(cfg));
            return Ok(0);
        };
        if std::io::stderr().is_terminal() {
            eprintln!("omnish: asking `{shown}`…");
        }
        let mut shown_answer = Visible::new(out);
        let code = llm::run_llm(&words, &shown, &prompt, &mut shown_answer)?;
        shown_answer.finish()?;
        Ok(code)
    }
}

/// Shows an answer as it streams with every control character visible
/// ([`crate::term::visible::text`]: lines and tabs kept), so an answer cannot move the cursor,
/// hide text, retitle the terminal or write the clipboard. A UTF-8 sequence split between two
/// reads is joined before it is shown (a C1 control split so is still caught); invalid UTF-8 is
/// shown as U+FFFD. Holds at most 3 bytes between writes.
pub(crate) struct Visible<W: Write> {
    out: W,
    /// The start of a UTF-8 sequence the last write ended in.
    carry: Vec<u8>,
    /// The last byte shown, to end the answer with a newline.
    last: u8,
}

impl<W: Write> Visible<W> {
    pub(crate) fn new(out: W) -> Self {
        Visible {
            out,
            carry: Vec::new(),
            last: b'\n',
        }
    }

    fn show(&mut self, s: &str) -> std::io::Result<()> {
        if let Some(&b) = s.as_bytes().last() {
            self.last = b;
        }
        self.out.write_all(crate::term::visible::text(s).as_bytes())
    }

    /// The answer ended: an unfinished sequence is shown as U+FFFD, and the answer ends its line.
    pub(crate) fn finish(&mut self) -> std::io::Result<()> {
        if !self.carry.is_empty() {
            self.carry.clear();
            self.show("\u{FFFD}")?;
        }
        if self.last != b'\n' {
            self.show("\n")?;
        }
        self.out.flush()
    }
}

impl<W: Write> Write for Visible<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let joined;
        let mut rest: &[u8] = if self.carry.is_empty() {
            buf
        } else {
            let mut j = std::mem::take(&mut self.carry);
            j.extend_from_slice(buf);
            joined = j;
            &joined
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    self.show(s)?;
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    self.show(std::str::from_utf8(valid).unwrap_or_default())?;
                    match e.error_len() {
                        // Cut off at the end: the next read completes it.
                        None => {
                            self.carry = after.to_vec();
                            break;
                        }
                        Some(n) => {
                            self.show("\u{FFFD}")?;
                            rest = &after[n..];
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn shown_in_pieces(pieces: &[&[u8]]) -> String {
        let mut v = Visible::new(Vec::new());
        for p in pieces {
            v.write_all(p).unwrap();
        }
        v.finish().unwrap();
        String::from_utf8(v.out).unwrap()
    }

    #[test]
    fn escapes_are_shown_and_split_sequences_joined() {
        assert_eq!(
            shown_in_pieces(&[b"rm -rf ~\x1b[8m", b"\x1b]52;c;eA==\x07ok\n"]),
            "rm -rf ~^[[8m^[]52;c;eA==^Gok\n"
        );
        // é and a C1 CSI (U+009B) cut between two reads.
        assert_eq!(
            shown_in_pieces(&[b"caf\xc3", b"\xa9 \xc2", b"\x9b2J"]),
            "café <U+009B>2J\n"
        );
        assert_eq!(shown_in_pieces(&[b"\xe2\x82", b""]), "\u{FFFD}\n");
        assert_eq!(shown_in_pieces(&[b"a\xffb\tc\n"]), "a\u{FFFD}b\tc\n");
        assert_eq!(shown_in_pieces(&[]), "");
    }

    proptest! {
        /// However the answer is cut into reads, what is shown is the whole answer shown at
        /// once, and holds no control character but newline and tab.
        #[test]
        fn pieces_show_as_the_whole(
            bytes in proptest::collection::vec(
                prop_oneof![Just(0x1bu8), Just(0xc2), Just(0x9b), Just(0xe2), Just(0x80),
                            Just(0xae), Just(b'\n'), Just(b'\t'), Just(b'\r'), 0x20u8..0x7f, any::<u8>()],
                0..64),
            cuts in proptest::collection::vec(0usize..64, 0..6),
        ) {
            let mut at: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            at.sort();
            let mut pieces = Vec::new();
            let mut from = 0;
            for c in at {
                pieces.push(&bytes[from..c]);
                from = c;
            }
            pieces.push(&bytes[from..]);
            let whole = shown_in_pieces(&[&bytes]);
            prop_assert_eq!(shown_in_pieces(&pieces), whole.clone());
            let mut expected = crate::term::visible::text(&String::from_utf8_lossy(&bytes)).into_owned();
            if !bytes.is_empty() && !expected.ends_with('\n') {
                expected.push('\n');
            }
            prop_assert_eq!(&whole, &expected);
            prop_assert!(!whole.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "{:?}", whole);
        }
    }
}
