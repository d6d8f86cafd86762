//! Read stage: a selected command's byte range of `stream.bin` → its output, rendered.
//!
//! Only the command's own range is read (`stream_offset`, `stream_length`); a running or cut-off
//! command reads to the current end of the stream. Torn frames are skipped by the store.

use crate::render::Renderer;
use crate::select::Candidate;
use crate::store;

/// The output bytes of a command (direction 1 frames of its range).
pub fn output_bytes(c: &Candidate) -> Vec<u8> {
    let length = (c.record.stream_length != u64::MAX).then_some(c.record.stream_length);
    match store::read_range(
        &c.session_dir.join(store::STREAM),
        c.record.stream_offset,
        length,
    ) {
        Ok(entries) => store::output_bytes(&entries),
        Err(_) => Vec::new(),
    }
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
        };
        let mut c = Candidate {
            record,
            running: false,
            cut_off: false,
            session_dir: dir.to_path_buf(),
            rows: 24,
            rendered: None,
        };
        assert_eq!(c.rendered(), ["red", "100%", "done"]);
        c.record.stream_length = u64::MAX;
        c.rendered = None;
        assert_eq!(c.rendered(), ["red", "100%", "done", "after"]);
    }
}
