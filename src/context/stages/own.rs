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
/// own.
pub(crate) fn folded(line: &str, lines: u64) -> Option<String> {
    let sub = own_front_end(line)?;
    Some(format!(
        "[omnish {sub}'s own output, {lines} line{}: left out (omnish's output is not context)]",
        if lines == 1 { "" } else { "s" }
    ))
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
            folded("omnish context", 12).unwrap(),
            "[omnish context's own output, 12 lines: left out (omnish's output is not context)]"
        );
    }
}
