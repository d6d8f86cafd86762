use super::*;
use crate::store::testing::command_record;
use crate::store::{StreamWriter, append_command, read_commands, read_range};

/// A session of three commands: `echo one` (output `one-out`), `pass show TOKEN` (output
/// split in two frames, with a key frame between), `echo three`; a nested command of depth 1
/// lies inside the second one's range.
fn session(dir: &Path) -> Vec<CommandRecord> {
    std::fs::create_dir_all(dir).unwrap();
    let mut w = StreamWriter::create(&dir.join(store::STREAM)).unwrap();
    let mut recs = Vec::new();
    let mut add = |w: &mut StreamWriter, seq: u64, line: &str, frames: &[(u8, &[u8])], depth| {
        let offset = w.offset();
        for (dir, data) in frames {
            w.write(seq, *dir, data).unwrap();
        }
        w.flush().unwrap();
        let rec = CommandRecord {
            command_line: line.into(),
            cwd: "/home/someone/project".into(),
            stream_offset: offset,
            stream_length: w.offset() - offset,
            depth,
            ..command_record("s", seq)
        };
        recs.push(rec);
    };
    add(&mut w, 1, "echo one", &[(1, b"one-out\r\n")], 0);
    add(
        &mut w,
        2,
        "pass show TOKEN-abc",
        &[
            (1, b"secret-TOK"),
            (0, b"typed-key"),
            (3, b"nested-out"),
            (1, b"EN-abc\r\n"),
        ],
        0,
    );
    add(
        &mut w,
        3,
        "echo three TOKEN-abc",
        &[(1, b"three-out TOKEN-abc\r\n")],
        0,
    );
    for r in &recs {
        append_command(dir, r).unwrap();
    }
    recs
}

fn stream_text(dir: &Path) -> String {
    let all = read_range(&dir.join(store::STREAM), 0, None).unwrap();
    all.iter()
        .map(|e| String::from_utf8_lossy(e.data()).into_owned())
        .collect::<Vec<_>>()
        .join("|")
}

#[test]
fn a_forgotten_command_keeps_its_times_and_nothing_of_its_line_or_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let before = session(&dir);
    std::fs::create_dir_all(store::cache::dir(&dir)).unwrap();
    let size = std::fs::metadata(dir.join(store::STREAM)).unwrap().len();

    // A dry run changes nothing.
    let dry = forget_commands(&dir, &BTreeSet::from([2]), true).unwrap();
    assert_eq!((dry.len(), dry[0].bytes, dry[0].placeholder), (1, 0, true));
    assert_eq!(read_commands(&dir).unwrap(), before);

    let done = forget_commands(&dir, &BTreeSet::from([2, 9]), false).unwrap();
    assert_eq!(done.len(), 1, "an unknown seq is left out");
    assert_eq!(done[0].record, before[1]);
    assert_eq!(done[0].bytes, b"secret-TOK".len() as u64 + 9 + 8);
    let after = read_commands(&dir).unwrap();
    assert_eq!(after.len(), 3);
    assert_eq!(after[0], before[0]);
    assert_eq!(after[2], before[2]);
    let gone = &after[1];
    assert_eq!(
        (
            gone.seq,
            gone.command_line.as_str(),
            gone.cwd.as_str(),
            gone.stream_length,
            gone.private,
            gone.command_source.as_str(),
            gone.exit_code,
            gone.started_at
        ),
        (
            2,
            "",
            "",
            0,
            true,
            FORGOTTEN,
            before[1].exit_code,
            before[1].started_at
        )
    );
    let text = stream_text(&dir);
    for absent in ["secret", "TOK|", "typed-key", "|EN-abc"] {
        assert!(!text.contains(absent), "{absent}: {text}");
    }
    // The nested shell's frame is its own command's; the others are intact; offsets hold.
    assert!(
        text.contains("nested-out") && text.contains("one-out"),
        "{text}"
    );
    assert_eq!(
        std::fs::metadata(dir.join(store::STREAM)).unwrap().len(),
        size
    );
    let raw = std::fs::read_to_string(dir.join(store::COMMANDS)).unwrap();
    assert!(!raw.contains("pass show"), "{raw}");
    assert!(!store::cache::dir(&dir).exists());
    // Forgetting it again finds nothing to do.
    assert!(
        forget_commands(&dir, &BTreeSet::from([2]), false)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_line_too_short_for_the_placeholder_is_blanked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    std::fs::create_dir_all(&dir).unwrap();
    // A record as short as a record can be: its placeholder needs more room.
    let short = CommandRecord {
        command_line: "x".into(),
        cwd: String::new(),
        ..command_record("s", 1)
    };
    append_command(&dir, &short).unwrap();
    append_command(&dir, &command_record("s", 2)).unwrap();
    let done = forget_commands(&dir, &BTreeSet::from([1]), false).unwrap();
    assert!(!done[0].placeholder);
    let after = read_commands(&dir).unwrap();
    assert_eq!(after.iter().map(|r| r.seq).collect::<Vec<_>>(), [2]);
}

#[test]
fn a_value_is_scrubbed_wherever_it_lies_even_split_across_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    session(&dir);
    assert_eq!(scrub_value(&dir, b"TOKEN-abc", true).unwrap(), 4);
    assert!(stream_text(&dir).contains("TOKEN-abc"));
    assert_eq!(scrub_value(&dir, b"TOKEN-abc", false).unwrap(), 4);
    let text = stream_text(&dir);
    assert!(!text.contains("TOKEN") && !text.contains("TOK|"), "{text}");
    // Split by a key frame and a nested frame: each byte where it was.
    assert!(
        text.contains("secret-***|typed-key|nested-out|******\r\n"),
        "{text}"
    );
    assert!(text.contains("three-out *********"), "{text}");
    let recs = read_commands(&dir).unwrap();
    assert_eq!(recs[1].command_line, "pass show *********");
    assert_eq!(recs[2].command_line, "echo three *********");
    assert_eq!(scrub_value(&dir, b"TOKEN-abc", false).unwrap(), 0);
}

#[test]
fn a_value_that_json_escapes_is_found_in_command_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    std::fs::create_dir_all(&dir).unwrap();
    let rec = CommandRecord {
        command_line: "login -p 'a\"b\\c'".into(),
        ..command_record("s", 1)
    };
    append_command(&dir, &rec).unwrap();
    assert_eq!(scrub_value(&dir, b"a\"b\\c", false).unwrap(), 1);
    let after = read_commands(&dir).unwrap();
    assert_eq!(after[0].command_line, "login -p '*******'");
}
