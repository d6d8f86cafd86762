//! omnish's own output is not context: the record of an `omnish context` run at the prompt to
//! preview holds a copy of earlier commands, and showing it would hand the next `context` or
//! `ask` that copy again (and again after each preview). Such a record keeps its line and
//! status; its output is folded to one line saying what it was, the way a repeat is folded.
//!
//! # How omnish knows its own records
//!
//! By the command line the shell reported, not by a marker: the line is one simple command
//! whose program is named `omnish` (any path to it) and whose subcommand prints what omnish has
//! recorded or knows (`context`, `search`, `sessions`, `status`, `export`, `config`, `note`,
//! `completions`, `man`). A line with a pipe, a list or a redirection (`omnish context | llm`,
//! `omnish context; make`) is not folded: what reached the terminal there is another program's
//! (`llm`'s answer is the conversation the user had), and `ask`, `fix` and `exec` print answers
//! and programs' output, which stay. A marker emitted by omnish's process through the recorder
//! would also catch an alias (`oc` for `omnish context`) but would need the registration key in
//! every front end's environment; the line is what the user sees and can predict.
//!
//! # How many commands it showed
//!
//! The fold says how many commands the front end showed, not how many lines it printed: the
//! front end knows (it chose them), so it says so itself. `context`, `search`, `sessions show`
//! and `export`, run with their output on a recorded terminal (`OMNISH_SESSION_ID` set, stdout
//! a terminal), note the count in the session's `shown/` directory when they finish
//! ([`crate::store::shown`]); the fold takes the count noted between the start and the end of
//! the command's record. Parsing what the front end printed would guess (an output can hold
//! lines that look like `$ command`) and could not tell a count in a format that has none
//! (JSON, markdown); a marker through the recorder would put bytes on the user's terminal. A
//! front end that noted nothing (`status`, `config`, a run in a nested shell on another host,
//! a store that could not be written) folds by its lines, as before.

use crate::store::shown;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// omnish's subcommands whose output is omnish's own (see the module docs).
const OWN: [&str; 9] = [
    "context",
    "search",
    "sessions",
    "status",
    "export",
    "config",
    "note",
    "completions",
    "man",
];

/// The subcommand, when `line` runs one of omnish's own front ends alone.
pub(crate) fn own_front_end(line: &str) -> Option<&'static str> {
    if line.contains(['|', ';', '&', '<', '>', '\n', '`', '$', '(']) {
        return None;
    }
    let words = shlex::split(line)?;
    let program = std::path::Path::new(words.first()?).file_name()?;
    if program != "omnish" {
        return None;
    }
    let sub = words.get(1)?;
    OWN.iter().find(|s| *s == sub).copied()
}

/// The one line that stands for the output of `line` (of `lines` lines), when it is omnish's
/// own; `shown`: the commands it showed, when it noted them.
pub(crate) fn folded(line: &str, lines: u64, shown: Option<u64>) -> Option<String> {
    let sub = own_front_end(line)?;
    let plural = |n: u64| if n == 1 { "" } else { "s" };
    Some(match shown {
        Some(n) => format!(
            "[omnish {sub} showed {n} command{}: left out (omnish's output is not context)]",
            plural(n)
        ),
        None => format!(
            "[omnish {sub}'s own output, {lines} line{}: left out (omnish's output is not context)]",
            plural(lines)
        ),
    })
}

/// The counts front ends noted, read once per session ([`shown::counts`]).
#[derive(Default)]
pub(crate) struct Counts(HashMap<PathBuf, Vec<(u64, u64)>>);

impl Counts {
    /// The commands the front end run as the record (`session_dir`, `started_at`..`ended_at`)
    /// showed, when it noted them.
    pub(crate) fn of(&mut self, session_dir: &Path, started_at: u64, ended_at: u64) -> Option<u64> {
        let counts = self
            .0
            .entry(session_dir.to_path_buf())
            .or_insert_with(|| shown::counts(session_dir));
        shown::within(counts, started_at, ended_at)
    }

    /// [`folded`] for the record of a candidate command.
    pub(crate) fn folded(
        &mut self,
        c: &crate::context::stages::select::Candidate,
        lines: u64,
    ) -> Option<String> {
        own_front_end(&c.record.command_line)?;
        let shown = self.of(&c.session_dir, c.record.started_at, c.record.ended_at);
        folded(&c.record.command_line, lines, shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_front_ends_alone_are_folded_and_nothing_else() {
        assert_eq!(own_front_end("omnish context --last"), Some("context"));
        assert_eq!(
            own_front_end("/usr/local/bin/omnish sessions show 9f3a"),
            Some("sessions")
        );
        assert_eq!(own_front_end("omnish search 'a b'"), Some("search"));
        for kept in [
            "omnish context | llm 'why'",
            "omnish ask",
            "omnish fix",
            "omnish exec -- make",
            "omnish context > ctx.txt",
            "omnish context; make",
            "omnishx context",
            "echo omnish context",
            "omnish",
        ] {
            assert_eq!(own_front_end(kept), None, "{kept}");
        }
        assert_eq!(
            folded("omnish context", 12, None).unwrap(),
            "[omnish context's own output, 12 lines: left out (omnish's output is not context)]"
        );
        assert_eq!(
            folded("omnish search err", 12, Some(1)).unwrap(),
            "[omnish search showed 1 command: left out (omnish's output is not context)]"
        );
    }
}
