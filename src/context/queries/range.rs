//! One command by its id, and a range of its output lines: for a front end that pages through
//! an output too large to show whole (the MCP server's `command_output`).
//!
//! The command is found by its number with the select stage ([`select::Seq`], newest first, so
//! the cost grows with how far back it is, not with the session). Its lines are read with the
//! streaming line reader ([`read::for_each_line_while`]), which stops after the last line
//! wanted: memory holds the lines of the range and nothing else, whatever the size of the
//! output. Each line is redacted and shortened exactly as in a context document
//! ([`crate::context::show_line`]), and private key blocks are tracked from the first line, so a
//! range starting inside a key block still hides it.

use anyhow::Result;
use std::path::Path;

use crate::context::stages::read::{self, Source};
use crate::context::stages::redact;
use crate::context::stages::select::{self, Candidate, Query, SessionChoice};

/// The command numbered `seq` in the session `session` (an id or a unique prefix of one), with
/// the session's own problems added to `warnings`. `Ok(None)` when the session has no such
/// command; an unknown or ambiguous session is an error naming it. `current` is the session the
/// asker runs in (its own running command is not one to show).
pub(crate) fn find_command(
    root: &Path,
    session: &str,
    seq: u64,
    current: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<Option<Candidate>> {
    let sessions = select::sessions(
        root,
        &SessionChoice::Id(session.to_string()),
        current,
        warnings,
    )?;
    let Some(s) = sessions.first() else {
        return Ok(None);
    };
    let query = Query {
        filters: vec![Box::new(select::Seq(seq))],
        line_test: None,
        output_filter: None,
        limit: 1,
    };
    Ok(query.select(s)?.commands.pop())
}

/// Some lines of one command's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutputRange {
    /// Lines the whole rendered output has.
    pub total: u64,
    /// Number (0-based) of the first line in `lines`.
    pub first: u64,
    /// The lines asked for that exist, redacted and shortened.
    pub lines: Vec<String>,
    /// The output in one line when it is not text (`[binary output, 48.2 MB]`, `[output
    /// unreadable: …]`); `lines` is then empty and `total` 1.
    pub note: Option<String>,
}

/// Lines `first .. first + count` (0-based) of `c`'s rendered output, each shortened to `width`
/// chars (twice that for error lines; 0 = up to [`read::LINE_CAP`]) and, when `redacting`,
/// redacted with what the session taught ([`redact::session`]). Reading stops after the last
/// line wanted.
pub(crate) fn output_range(
    c: &Candidate,
    first: u64,
    count: usize,
    width: usize,
    redacting: bool,
) -> OutputRange {
    // The digest knows the line count and how many lines an erase of the scrollback removed;
    // large outputs have it cached.
    let digest = read::cached_digest(c);
    if let Some(note) = digest.note() {
        return OutputRange {
            total: 1,
            first: 0,
            lines: Vec::new(),
            note: Some(note),
        };
    }
    let total = digest.lines;
    // What the session taught, from its command lines and this output's digest (already read:
    // `learn` would read it a second time).
    let redactor = redacting.then(|| {
        let mut redactors = redact::session::Redactors::learn_commands(std::slice::from_ref(c));
        redactors.learn_output(c, &digest);
        redactors.into_shared().get(&c.session_dir)
    });
    let end = first.saturating_add(count as u64).min(total);
    let width = if width == 0 { read::LINE_CAP } else { width };
    let mut lines = Vec::new();
    if first < end && !c.record.private {
        let src = Source::of(c);
        let mut in_key = false;
        read::for_each_line_while(&src, read::LINE_CAP, digest.erased, &mut |i, line| {
            let key_block = read::key_block_state(&mut in_key, line.head, line.tail);
            if i >= first && i < end {
                lines.push(crate::context::show_line(
                    line.head,
                    line.omitted,
                    line.tail,
                    key_block,
                    width,
                    redactor.as_deref(),
                ));
            }
            i + 1 < end
        });
    }
    OutputRange {
        total,
        first,
        lines,
        note: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{self, CommandRecord, SessionMeta, SessionState, StreamWriter};

    const ID: &str = "20261122T183045.123Z-9f3a1c";

    /// A session whose commands printed `outputs` (raw terminal bytes), one command each.
    fn session(outputs: &[&[u8]]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let dir = store::sessions_dir(tmp.path()).join(ID);
        store::create_private_dir(&dir).unwrap();
        let mut w = StreamWriter::create(&dir.join(store::STREAM)).unwrap();
        for (i, out) in outputs.iter().enumerate() {
            w.write(1, store::OUTPUT, b"$ prompt\r\n").unwrap();
            let offset = w.offset();
            // In several frames, as a pty delivers it.
            for chunk in out.chunks(7) {
                w.write(2, store::OUTPUT, chunk).unwrap();
            }
            let seq = i as u64 + 1;
            store::append_command(
                &dir,
                &CommandRecord {
                    command_line: format!("cmd {seq}"),
                    started_at: seq,
                    ended_at: seq,
                    stream_offset: offset,
                    stream_length: w.offset() - offset,
                    ..store::testing::command_record(ID, seq)
                },
            )
            .unwrap();
        }
        w.flush().unwrap();
        let meta = SessionMeta {
            ended_at: Some(9),
            exit_status: Some(0),
            state: SessionState::Exited,
            ..store::testing::session_meta(ID)
        };
        store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
        tmp
    }

    fn numbered(n: usize) -> Vec<u8> {
        (1..=n)
            .map(|i| format!("line {i}\r\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn finds_a_command_by_number_and_session_prefix() {
        let tmp = session(&[b"a\r\n", b"b\r\n", b"c\r\n"]);
        let mut w = Vec::new();
        let c = find_command(tmp.path(), "20261122T18", 2, None, &mut w)
            .unwrap()
            .unwrap();
        assert_eq!(c.record.command_line, "cmd 2");
        assert!(
            find_command(tmp.path(), ID, 4, None, &mut w)
                .unwrap()
                .is_none()
        );
        let err = find_command(tmp.path(), "nope", 1, None, &mut w).unwrap_err();
        assert!(err.to_string().contains("no session 'nope'"), "{err}");
    }

    #[test]
    fn a_range_holds_exactly_the_lines_asked_for() {
        let out = numbered(1000);
        let tmp = session(&[&out]);
        let c = find_command(tmp.path(), ID, 1, None, &mut Vec::new())
            .unwrap()
            .unwrap();
        let r = output_range(&c, 500, 3, 80, true);
        assert_eq!(r.total, 1000);
        assert_eq!(r.first, 500);
        assert_eq!(r.lines, ["line 501", "line 502", "line 503"]);
        // Past the end: what exists.
        let r = output_range(&c, 998, 10, 80, true);
        assert_eq!(r.lines, ["line 999", "line 1000"]);
        let r = output_range(&c, 5000, 10, 80, true);
        assert!(r.lines.is_empty());
        assert_eq!(r.total, 1000);
    }

    #[test]
    fn lines_are_rendered_redacted_and_shortened() {
        let key = format!("AKIA{}", "Q7XZ3MPLK2JD9W4N");
        let long = "x".repeat(300);
        let out = format!(
            "50%\r100%\r\n\x1b[31mkey={key}\x1b[0m\r\n{long}\r\n-----BEGIN RSA PRIVATE KEY-----\r\nMIIEpAIBAAKCAQEA\r\nabcdef\r\n-----END RSA PRIVATE KEY-----\r\nafter\r\n"
        );
        let tmp = session(&[out.as_bytes()]);
        let c = find_command(tmp.path(), ID, 1, None, &mut Vec::new())
            .unwrap()
            .unwrap();
        let r = output_range(&c, 0, 100, 40, true);
        assert_eq!(r.lines[0], "100%");
        assert_eq!(r.lines[1], "key=[REDACTED:aws-access-key]");
        assert!(
            r.lines[2].len() < 100 && r.lines[2].contains("omitted"),
            "{}",
            r.lines[2]
        );
        // A range that starts inside a private key block still hides it.
        let r = output_range(&c, 4, 2, 40, true);
        assert_eq!(
            r.lines,
            ["[REDACTED:private-key]", "[REDACTED:private-key]"]
        );
        let r = output_range(&c, 7, 1, 40, true);
        assert_eq!(r.lines, ["after"]);
        let r = output_range(&c, 1, 1, 0, false);
        assert_eq!(r.lines, [format!("key={key}")]);
    }

    #[test]
    fn binary_output_is_one_note() {
        let out: Vec<u8> = (0..4096u32).map(|i| (i % 7) as u8).collect();
        let tmp = session(&[&out]);
        let c = find_command(tmp.path(), ID, 1, None, &mut Vec::new())
            .unwrap()
            .unwrap();
        let r = output_range(&c, 0, 10, 80, true);
        assert!(r.lines.is_empty());
        assert!(r.note.unwrap().starts_with("[binary output"));
    }
}
