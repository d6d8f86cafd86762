//! Read stage: a selected command's byte range of `stream.bin` → its output, rendered.
//!
//! Only the command's own range is read (`stream_offset`, `stream_length`); a running or cut-off
//! command reads to the current end of the stream. Torn frames are skipped by the store.
//!
//! Keys typed ahead while a command runs are echoed by the terminal into that command's output,
//! though they are the next command's line. When the keystrokes recorded in the range are plain
//! text typing the next command's line, their echo is left out ([`strip_type_ahead`]). Input a
//! program reads itself (`read name`, `cat`) is never touched: it is not the next command.

use crate::context::select::Candidate;
use crate::store::{self, StreamEntry};
use crate::term::render::Renderer;

/// The output bytes of a command (direction 1 frames of its range).
pub fn output_bytes(c: &Candidate) -> Vec<u8> {
    let length = (c.record.stream_length != u64::MAX).then_some(c.record.stream_length);
    match store::read_range(
        &c.session_dir.join(store::STREAM),
        c.record.stream_offset,
        length,
    ) {
        Ok(entries) => strip_type_ahead(&entries, c.next_command_line.as_deref()),
        Err(_) => Vec::new(),
    }
}

/// The output of `entries`, without the terminal's echo of keys typed ahead for the next command
/// (`next_line`). Only when every key typed in the range is printable text or Enter, and the
/// first line typed is exactly the next command's line; otherwise the output as recorded.
pub fn strip_type_ahead(entries: &[StreamEntry], next_line: Option<&str>) -> Vec<u8> {
    let mut out = Vec::new();
    // (where the output stood when the key was typed, what the terminal echoes for it)
    let mut echoes: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut typed = Vec::new();
    // Where each output frame ends: the terminal's echo of a key is read on its own.
    let mut frame_ends = Vec::new();
    for e in entries {
        if e.direction() == store::OUTPUT {
            out.extend_from_slice(e.data());
            frame_ends.push(out.len());
        } else {
            typed.extend_from_slice(e.data());
            let mut echo = Vec::with_capacity(e.data().len() + 1);
            for &b in e.data() {
                // The terminal turns Enter into a newline (ICRNL) and echoes it as CR LF (ONLCR).
                if b == b'\r' {
                    echo.extend_from_slice(b"\r\n");
                } else {
                    echo.push(b);
                }
            }
            echoes.push((out.len(), echo));
        }
    }
    let Some(next_line) = next_line else {
        return out;
    };
    let plain = typed
        .iter()
        .all(|&b| b == b'\r' || (b >= 0x20 && b != 0x7f));
    let first_line = typed.split(|&b| b == b'\r').next().unwrap_or_default();
    if echoes.is_empty() || !plain || first_line != next_line.as_bytes() {
        return out;
    }
    // The terminal echoes a key as it is typed, so the echo is exactly where the output goes on
    // after it, read on its own (it ends a frame). Anything else could be program output that
    // looks alike: then nothing is removed. Removing from the last keeps earlier positions valid.
    let at_place = echoes.iter().all(|(at, echo)| {
        let end = at + echo.len();
        out.get(*at..end) == Some(echo.as_slice()) && frame_ends.binary_search(&end).is_ok()
    });
    let overlapping = echoes.windows(2).any(|w| w[0].0 + w[0].1.len() > w[1].0);
    if !at_place || overlapping {
        return out;
    }
    for (at, echo) in echoes.iter().rev() {
        out.drain(*at..at + echo.len());
    }
    out
}

/// The command's output as the terminal showed it, at the width it ran with.
pub fn rendered_output(c: &Candidate) -> Vec<String> {
    let mut r = Renderer::new(c.record.cols, c.rows);
    r.feed(&output_bytes(c));
    r.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{CommandRecord, StreamWriter};

    #[test]
    fn reads_only_the_range_and_renders_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let mut w = StreamWriter::create(&dir.join(store::STREAM)).unwrap();
        w.write(1, store::OUTPUT, b"before\r\n").unwrap();
        let start = w.offset();
        w.write(2, store::OUTPUT, b"\x1b[31mred\x1b[0m\r\n50%\r100%\r\n")
            .unwrap();
        w.write(2, store::INPUT, b"typed").unwrap();
        w.write(3, store::OUTPUT, b"done\r\n").unwrap();
        let end = w.offset();
        w.write(4, store::OUTPUT, b"after\r\n").unwrap();
        w.flush().unwrap();
        let record = CommandRecord {
            command_id: "s:1".into(),
            session_id: "s".into(),
            seq: 1,
            command_line: "x".into(),
            cwd: "/".into(),
            started_at: 2,
            ended_at: 3,
            exit_code: Some(0),
            stream_offset: start,
            stream_length: end - start,
            cols: 80,
            command_source: "hook".into(),
            recording_stopped: false,
        };
        let mut c = Candidate {
            record,
            running: false,
            cut_off: false,
            session_dir: dir.to_path_buf(),
            rows: 24,
            next_command_line: None,
            rendered: None,
        };
        assert_eq!(c.rendered(), ["red", "100%", "done"]);
        c.record.stream_length = u64::MAX;
        c.rendered = None;
        assert_eq!(c.rendered(), ["red", "100%", "done", "after"]);
    }

    fn frames(spec: &[(u8, &str)]) -> Vec<StreamEntry> {
        spec.iter()
            .map(|&(d, t)| StreamEntry(0, d, t.as_bytes().to_vec()))
            .collect()
    }

    const O: u8 = store::OUTPUT;
    const I: u8 = store::INPUT;

    #[test]
    fn type_ahead_echo_for_the_next_command_is_left_out() {
        let entries = frames(&[
            (O, "building\r\n"),
            (I, "git status\r"),
            (O, "git status\r\n"),
            (O, "still building\r\n"),
        ]);
        let out = strip_type_ahead(&entries, Some("git status"));
        assert_eq!(out, b"building\r\nstill building\r\n");
        // Read together with program output, the echo cannot be told apart: kept.
        let entries = frames(&[(I, "ls\r"), (O, "ls\r\nmore\r\n")]);
        assert_eq!(strip_type_ahead(&entries, Some("ls")), b"ls\r\nmore\r\n");
        // Typed a key at a time, with output in between.
        let entries = frames(&[
            (I, "l"),
            (O, "l"),
            (O, "step 1\r\n"),
            (I, "s"),
            (O, "s"),
            (O, "step 2\r\n"),
            (I, "\r"),
            (O, "\r\n"),
        ]);
        assert_eq!(
            strip_type_ahead(&entries, Some("ls")),
            b"step 1\r\nstep 2\r\n"
        );
    }

    #[test]
    fn input_the_program_read_itself_stays() {
        // `read name`: the answer is not the next command.
        let entries = frames(&[(O, "Name: "), (I, "Bob\r"), (O, "Bob\r\nHi Bob\r\n")]);
        let want = b"Name: Bob\r\nHi Bob\r\n";
        assert_eq!(strip_type_ahead(&entries, Some("ls")), want);
        assert_eq!(strip_type_ahead(&entries, None), want);
        // Keys other than text and Enter (arrows, Ctrl-C): left as they are.
        let entries = frames(&[(I, "ls\x1b[A\r"), (O, "ls^[[A\r\n")]);
        assert_eq!(strip_type_ahead(&entries, Some("ls")), b"ls^[[A\r\n");
        // An echo that is not right after its key: nothing is removed, not even a lookalike.
        let entries = frames(&[(O, "ls\r\n"), (I, "ls\r"), (O, "other ls\r\n")]);
        assert_eq!(
            strip_type_ahead(&entries, Some("ls")),
            b"ls\r\nother ls\r\n"
        );
        let entries = frames(&[(I, "s"), (O, "step 2\r\ns"), (I, "\r"), (O, "\r\n")]);
        assert_eq!(strip_type_ahead(&entries, Some("s")), b"step 2\r\ns\r\n");
    }

    proptest::proptest! {
        #[test]
        fn stripping_type_ahead_leaves_exactly_the_program_output(
            chunks in proptest::collection::vec("[ -~]{0,12}(\r\n)?", 1..12),
            line in "[a-z][a-z ]{0,10}",
            keys_at in proptest::collection::vec(0usize..12, 0..12),
        ) {
            // Program output in chunks; the next command's line typed a key at a time in
            // between, each key echoed on its own right after it, as a terminal does.
            let typed: Vec<u8> = line.bytes().chain([b'\r']).collect();
            let mut keys_at = keys_at;
            keys_at.resize(typed.len(), 0);
            keys_at.sort();
            let mut entries = Vec::new();
            let mut program = Vec::new();
            let mut k = 0;
            for (i, chunk) in chunks.iter().enumerate() {
                while k < typed.len() && keys_at[k] <= i {
                    let key = &typed[k..k + 1];
                    let echo: &[u8] = if key == b"\r" { b"\r\n" } else { key };
                    entries.push(StreamEntry(0, I, key.to_vec()));
                    entries.push(StreamEntry(0, O, echo.to_vec()));
                    k += 1;
                }
                entries.push(StreamEntry(0, O, chunk.as_bytes().to_vec()));
                program.extend_from_slice(chunk.as_bytes());
            }
            proptest::prop_assume!(k > 0);
            let typed_now = &typed[..k];
            let next_line = String::from_utf8(
                typed_now.split(|&b| b == b'\r').next().unwrap().to_vec()
            ).unwrap();
            let recorded = store::output_bytes(&entries);
            let stripped = strip_type_ahead(&entries, Some(&next_line));
            proptest::prop_assert_eq!(stripped, program);
            // For another next command, or none, the output is as recorded.
            let other = format!("{next_line}x");
            proptest::prop_assert_eq!(strip_type_ahead(&entries, Some(&other)), recorded.clone());
            proptest::prop_assert_eq!(strip_type_ahead(&entries, None), recorded);
        }
    }
}
