use super::*;
use crate::store::{StreamEntry, StreamWriter};

const O: u8 = store::OUTPUT;
const I: u8 = store::INPUT;

/// A stream file holding `frames`, and a source covering all of it.
fn stream(frames: &[(u8, &[u8])], next: Option<&str>) -> (tempfile::TempDir, Source) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(store::STREAM);
    let mut w = StreamWriter::create(&path).unwrap();
    for (d, data) in frames {
        w.write(0, *d, data).unwrap();
    }
    w.flush().unwrap();
    let len = w.offset();
    let src = Source {
        stream: path,
        offset: 0,
        length: Some(len),
        cols: 80,
        rows: 24,
        next_command_line: next.map(str::to_string),
        depth: 0,
        screens: Screens::Note,
        program: None,
    };
    (tmp, src)
}

fn bytes_of(src: &Source) -> Vec<u8> {
    let mut out = Vec::new();
    let end = output_chunks(src, &mut |c| {
        out.extend_from_slice(c);
        true
    });
    assert_eq!(end, ReadEnd::Complete);
    out
}

fn strip(spec: &[(u8, &str)], next: Option<&str>) -> Vec<u8> {
    let frames: Vec<(u8, &[u8])> = spec.iter().map(|(d, t)| (*d, t.as_bytes())).collect();
    let (_t, src) = stream(&frames, next);
    bytes_of(&src)
}

#[test]
fn reads_only_the_range_and_renders_it() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(store::STREAM);
    let mut w = StreamWriter::create(&path).unwrap();
    w.write(1, O, b"before\r\n").unwrap();
    let start = w.offset();
    w.write(2, O, b"\x1b[31mred\x1b[0m\r\n50%\r100%\r\n")
        .unwrap();
    w.write(2, I, b"typed").unwrap();
    w.write(3, O, b"done\r\n").unwrap();
    let end = w.offset();
    w.write(4, O, b"after\r\n").unwrap();
    w.flush().unwrap();
    let mut src = Source {
        stream: path,
        offset: start,
        length: Some(end - start),
        cols: 80,
        rows: 24,
        next_command_line: None,
        depth: 0,
        screens: Screens::Note,
        program: None,
    };
    assert_eq!(rendered_lines(&src), ["red", "100%", "done"]);
    src.length = None;
    assert_eq!(rendered_lines(&src), ["red", "100%", "done", "after"]);
}

#[test]
fn type_ahead_echo_for_the_next_command_is_left_out() {
    let spec = [
        (O, "building\r\n"),
        (I, "git status\r"),
        (O, "git status\r\n"),
        (O, "still building\r\n"),
    ];
    assert_eq!(
        strip(&spec, Some("git status")),
        b"building\r\nstill building\r\n"
    );
    // Read together with program output, the echo cannot be told apart: kept.
    let spec = [(I, "ls\r"), (O, "ls\r\nmore\r\n")];
    assert_eq!(strip(&spec, Some("ls")), b"ls\r\nmore\r\n");
    // Typed a key at a time, with output in between.
    let spec = [
        (I, "l"),
        (O, "l"),
        (O, "step 1\r\n"),
        (I, "s"),
        (O, "s"),
        (O, "step 2\r\n"),
        (I, "\r"),
        (O, "\r\n"),
    ];
    assert_eq!(strip(&spec, Some("ls")), b"step 1\r\nstep 2\r\n");
    // An echo split over two frames that ends where a frame ends is still the echo.
    let spec = [
        (O, "a\r\n"),
        (I, "ls\r"),
        (O, "ls"),
        (O, "\r\n"),
        (O, "b\r\n"),
    ];
    assert_eq!(strip(&spec, Some("ls")), b"a\r\nb\r\n");
}

/// Regression: under load the recorder read `\r` and the next line's keys before the echo of
/// the `\r` came out, and both echoes came in one read; the echo was kept in `context`.
#[test]
fn echoes_of_two_reads_of_keys_that_came_out_in_one_run_are_left_out() {
    let spec = [
        (O, "before\r\n"),
        (I, " echo one"),
        (O, " echo one"),
        (I, "\r"),
        (I, " echo two"),
        (O, "\r\n echo two"),
        (I, "\r"),
        (O, "\r\n"),
        (O, "after\r\n"),
    ];
    assert_eq!(strip(&spec, Some(" echo one")), b"before\r\nafter\r\n");
    // Read together with output after it, an echo is not told apart from the program's.
    let spec = [(I, "ls"), (I, "\r"), (O, "ls\r\nmore\r\n")];
    assert_eq!(strip(&spec, Some("ls")), b"ls\r\nmore\r\n");
}

#[test]
fn input_the_program_read_itself_stays() {
    // `read name`: the answer is not the next command.
    let spec = [(O, "Name: "), (I, "Bob\r"), (O, "Bob\r\nHi Bob\r\n")];
    let want = b"Name: Bob\r\nHi Bob\r\n";
    assert_eq!(strip(&spec, Some("ls")), want);
    assert_eq!(strip(&spec, None), want);
    // Keys other than text and Enter (arrows, Ctrl-C): left as they are.
    let spec = [(I, "ls\x1b[A\r"), (O, "ls^[[A\r\n")];
    assert_eq!(strip(&spec, Some("ls")), b"ls^[[A\r\n");
    // An echo that is not right after its key: nothing is removed, not even a lookalike.
    let spec = [(O, "ls\r\n"), (I, "ls\r"), (O, "other ls\r\n")];
    assert_eq!(strip(&spec, Some("ls")), b"ls\r\nother ls\r\n");
    let spec = [(I, "s"), (O, "step 2\r\ns"), (I, "\r"), (O, "\r\n")];
    assert_eq!(strip(&spec, Some("s")), b"step 2\r\ns\r\n");
}

proptest::proptest! {
    #[test]
    fn stripping_type_ahead_leaves_exactly_the_program_output(
        chunks in proptest::collection::vec("[ -~]{0,12}(\r\n)?", 1..12),
        line in "[a-z][a-z ]{0,10}",
        keys_at in proptest::collection::vec(0usize..12, 0..12),
        late in proptest::collection::vec(proptest::bool::ANY, 12),
    ) {
        // Program output in chunks; the next command's line typed a key at a time in between.
        // The terminal echoes each key right after it, in order, and the recorder ends a frame
        // after it; an echo may come out later (`late`), in one run with the next key's.
        let typed: Vec<u8> = line.bytes().chain([b'\r']).collect();
        let mut keys_at = keys_at;
        keys_at.resize(typed.len(), 0);
        keys_at.sort();
        let mut entries = Vec::new();
        let mut program = Vec::new();
        let mut pending: Vec<u8> = Vec::new();
        let mut k = 0;
        for (i, chunk) in chunks.iter().enumerate() {
            while k < typed.len() && keys_at[k] <= i {
                let key = &typed[k..k + 1];
                let echo: &[u8] = if key == b"\r" { b"\r\n" } else { key };
                entries.push(StreamEntry(0, I, key.to_vec()));
                pending.extend_from_slice(echo);
                let last = k + 1 == typed.len() || keys_at[k + 1] > i;
                if last || !late[k % late.len()] {
                    entries.push(StreamEntry(0, O, std::mem::take(&mut pending)));
                }
                k += 1;
            }
            entries.push(StreamEntry(0, O, chunk.as_bytes().to_vec()));
            program.extend_from_slice(chunk.as_bytes());
        }
        proptest::prop_assume!(k > 0);
        let next_line = String::from_utf8(
            typed[..k].split(|&b| b == b'\r').next().unwrap().to_vec()
        ).unwrap();
        let frames: Vec<(u8, &[u8])> = entries.iter().map(|e| (e.1, e.2.as_slice())).collect();
        let recorded = store::output_bytes(&entries);
        let (_t, src) = stream(&frames, Some(&next_line));
        proptest::prop_assert_eq!(bytes_of(&src), program);
        // For another next command, or none, the output is as recorded.
        let (_t, src) = stream(&frames, Some(&format!("{next_line}x")));
        proptest::prop_assert_eq!(bytes_of(&src), recorded.clone());
        let (_t, src) = stream(&frames, None);
        proptest::prop_assert_eq!(bytes_of(&src), recorded);
    }

    #[test]
    fn a_digest_agrees_with_the_whole_rendering(
        lines in proptest::collection::vec("[a-z ]{0,30}(error)?[a-z]{0,5}", 0..700),
        width in 1usize..40,
    ) {
        let text: String = lines.iter().map(|l| format!("{l}\r\n")).collect();
        let (_t, mut src) = stream(&[(O, text.as_bytes())], None);
        src.cols = width as u16 + 10;
        let all = rendered_lines(&src);
        let d = digest(&src, Caps::STANDARD);
        proptest::prop_assert_eq!(d.lines, all.len() as u64);
        for i in 0..all.len() as u64 {
            if let Some(l) = d.line(i) {
                proptest::prop_assert_eq!(&l.head, &all[i as usize]);
            }
        }
        // Truncation from the digest keeps the same lines as truncation of the whole output.
        let errors: Vec<u64> = (0..all.len() as u64)
            .filter(|&i| is_error_line(&all[i as usize]))
            .collect();
        for max in [1usize, 2, 5, 20, 100, 256] {
            let from_digest = crate::context::stages::truncate::kept_lines(d.lines, max, &d.error_indices());
            let from_all = crate::context::stages::truncate::kept_lines(d.lines, max, &errors);
            proptest::prop_assert_eq!(&from_digest, &from_all);
            for i in from_digest {
                proptest::prop_assert!(d.line(i).is_some(), "line {} of {} not in the digest", i, d.lines);
            }
        }
    }
}

#[test]
fn digests_keep_head_tail_and_the_earliest_errors() {
    let mut text = String::new();
    for i in 0..10_000 {
        if i % 100 == 50 {
            text.push_str(&format!("error at {i}\r\n"));
        } else {
            text.push_str(&format!("line {i}\r\n"));
        }
    }
    let (_t, src) = stream(&[(O, text.as_bytes())], None);
    let caps = Caps {
        head: 10,
        tail: 10,
        errors: 5,
        line_cap: LINE_CAP,
    };
    let d = digest(&src, caps);
    assert_eq!(d.lines, 10_000);
    assert_eq!(d.head.len(), 10);
    assert_eq!(d.tail.len(), 10);
    assert_eq!(d.tail[9].head, "line 9999");
    let errs: Vec<u64> = d.errors.iter().map(|(i, _)| *i).collect();
    assert_eq!(errs, [50, 150, 250, 350, 450]);
    assert!(d.errors_full);
    assert_eq!(d.line(150).unwrap().head, "error at 150");
    assert_eq!(d.line(9_995).unwrap().head, "line 9995");
    assert!(d.line(500).is_none());
    assert_eq!(d.kind, OutputKind::Text);
    // The same text, cut into other frames, digests the same.
    let mid = text.len() / 3;
    let (_t, src2) = stream(
        &[(O, &text.as_bytes()[..mid]), (O, &text.as_bytes()[mid..])],
        None,
    );
    assert_eq!(digest(&src2, caps), d);
}

#[test]
fn binary_output_is_one_line_and_has_no_error_lines() {
    // Random-looking bytes, with "error" sprinkled in.
    let mut bytes = Vec::new();
    let mut x: u32 = 12345;
    for i in 0..300_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        bytes.push((x >> 16) as u8);
        if i % 1000 == 0 {
            bytes.extend_from_slice(b"\nerror\n");
        }
    }
    let (_t, src) = stream(&[(O, &bytes)], None);
    let d = digest(&src, Caps::STANDARD);
    assert_eq!(
        d.kind,
        OutputKind::Binary {
            bytes: bytes.len() as u64
        }
    );
    assert_eq!(
        d.note().unwrap(),
        format!("[binary output, {}]", human_bytes(bytes.len() as u64))
    );
    // Text with colours and progress bars is not binary.
    let text = "\x1b[1;32mok\x1b[0m 50%\r100%\r\n\ttab\x07\r\n".repeat(5000);
    let (_t, src) = stream(&[(O, text.as_bytes())], None);
    assert_eq!(digest(&src, Caps::STANDARD).kind, OutputKind::Text);
    assert_eq!(human_bytes(48_200_000), "48.2 MB");
    assert_eq!(human_bytes(999), "999 bytes");
}

#[test]
fn damaged_frames_make_the_output_unreadable_but_a_torn_live_tail_does_not() {
    let (_t, mut src) = stream(&[(O, b"one\r\n"), (O, b"two\r\n")], None);
    let size = std::fs::metadata(&src.stream).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&src.stream)
        .unwrap();
    f.set_len(size - 2).unwrap();
    let d = digest(&src, Caps::STANDARD);
    assert!(
        matches!(&d.kind, OutputKind::Unreadable(why) if why.contains("ends inside")),
        "{:?}",
        d.kind
    );
    assert!(d.note().unwrap().starts_with("[output unreadable: "));
    // A running command reads to the end of the stream: a torn last frame is still being written.
    src.length = None;
    let d = digest(&src, Caps::STANDARD);
    assert_eq!(d.kind, OutputKind::Text);
    assert_eq!(d.head[0].head, "one");
}

#[test]
fn erased_scrollback_is_skipped_on_the_second_pass_too() {
    let mut text = String::new();
    for i in 0..100 {
        text.push_str(&format!("old {i}\r\n"));
    }
    text.push_str("\x1b[H\x1b[2J\x1b[3Jnew 1\r\nnew 2\r\n");
    let (_t, src) = stream(&[(O, text.as_bytes())], None);
    let d = digest(&src, Caps::STANDARD);
    let mut second = Vec::new();
    for_each_line(&src, LINE_CAP, d.erased, &mut |i, l| {
        second.push((i, l.head.to_string()))
    });
    let first: Vec<(u64, String)> = (0..d.lines)
        .map(|i| (i, d.line(i).unwrap().head.clone()))
        .collect();
    assert_eq!(second, first);
}

#[test]
fn private_key_blocks_are_flagged_line_by_line() {
    let text = "before\r\n-----BEGIN OPENSSH PRIVATE KEY-----\r\nb3BlbnNzaC1rZXktdjEAAAAA\r\nQyNTUxOQAAACDx\r\n-----END OPENSSH PRIVATE KEY-----\r\nafter\r\n";
    let (_t, src) = stream(&[(O, text.as_bytes())], None);
    let d = digest(&src, Caps::STANDARD);
    let flags: Vec<bool> = d.head.iter().map(|l| l.key_block).collect();
    assert_eq!(flags, [false, true, true, true, true, false]);
}

#[test]
fn grep_over_a_large_output_leaves_its_digest_cached() {
    // 2 MB of output: large enough to cache. Searching it digests it in the same pass, so the
    // command is not rendered again to be shown.
    let text: String = (0..200_000).map(|i| format!("row {i}\r\n")).collect();
    let (tmp, src) = stream(&[(O, text.as_bytes())], None);
    let record = store::CommandRecord {
        command_line: "seq".into(),
        stream_length: src.length.unwrap(),
        ..store::testing::command_record("s", 1)
    };
    let c = Candidate::new(record, tmp.path().to_path_buf(), 24);
    let cached = Cached::of(&c).expect("large enough to cache");
    assert!(cached.load().is_none());
    assert!(command_output_matches(
        &c,
        &regex::Regex::new("^row 199999$").unwrap()
    ));
    let d = cached.load().expect("cached by the search");
    assert_eq!(d, digest(&src, Caps::STANDARD));
    assert!(!command_output_matches(
        &c,
        &regex::Regex::new("^nowhere$").unwrap()
    ));
    assert_eq!(cached_digest(&c), d);
}

#[test]
fn odd_controls_are_counted_as_the_byte_rule_says() {
    let all: Vec<u8> = (0..=255u8).cycle().take(256 * 7 + 13).collect();
    for len in [0, 1, 254, 255, 256, 511, all.len()] {
        let want = all[..len].iter().filter(|&&b| is_odd_control(b)).count() as u64;
        assert_eq!(count_odd_controls(&all[..len]), want, "{len}");
    }
}

/// Frames as a nested session records them: `bash` at depth 0 starts a shell whose commands run
/// at depth 1 (their keys too), and one of them starts another at depth 2.
fn nested_frames() -> Vec<(u8, &'static [u8])> {
    let (o0, o1, o2) = (
        store::output_at(0),
        store::output_at(1),
        store::output_at(2),
    );
    let (i1, i2) = (store::input_at(1), store::input_at(2));
    vec![
        (o0, b"outer banner\r\n"),
        (i1, b"echo inner1\r"),
        (o1, b"echo inner1\r\n"),
        (o1, b"inner1\r\n"),
        (o2, b"deep\r\n"),
        (i2, b"ls /nope\r"),
        (o1, b"ls: cannot access '/nope'\r\n"),
        (o0, b"outer bye\r\n"),
    ]
}

#[test]
fn a_command_reads_only_the_frames_of_its_depth() {
    let (_t, mut src) = stream(&nested_frames(), None);
    assert_eq!(bytes_of(&src), b"outer banner\r\nouter bye\r\n");
    assert_eq!(rendered_lines(&src), ["outer banner", "outer bye"]);
    src.depth = 1;
    assert_eq!(
        rendered_lines(&src),
        ["echo inner1", "inner1", "ls: cannot access '/nope'"]
    );
    src.depth = 2;
    assert_eq!(rendered_lines(&src), ["deep"]);
    let d = digest(&src, Caps::STANDARD);
    assert_eq!((d.lines, d.bytes), (1, 6));
    src.depth = 3;
    assert!(rendered_lines(&src).is_empty());
    // Old sessions (every frame depth 0) read as before.
    let entries: Vec<StreamEntry> = nested_frames()
        .into_iter()
        .map(|(d, b)| StreamEntry(0, d, b.to_vec()))
        .collect();
    assert_eq!(
        store::output_bytes(&entries),
        b"outer banner\r\nouter bye\r\n"
    );
    assert_eq!(store::output_bytes_at(&entries, 2), b"deep\r\n");
}

#[test]
fn type_ahead_is_matched_with_the_keys_and_echo_of_the_commands_depth() {
    // At depth 1: `sleep` runs, `make` is typed ahead and echoed; depth-0 and depth-2 keys and
    // output around it are another shell's.
    let (o0, o1, o2) = (
        store::output_at(0),
        store::output_at(1),
        store::output_at(2),
    );
    let (i0, i1, i2) = (store::input_at(0), store::input_at(1), store::input_at(2));
    let frames: Vec<(u8, &[u8])> = vec![
        (o1, b"waiting\r\n"),
        (i0, b"outer keys\r"),
        (o0, b"outer keys\r\n"),
        (i1, b"make"),
        (o1, b"make"),
        (i2, b"x"),
        (o2, b"x"),
        (o1, b"done\r\n"),
    ];
    let (_t, mut src) = stream(&frames, Some("make"));
    src.depth = 1;
    assert_eq!(bytes_of(&src), b"waiting\r\ndone\r\n");
    // Depth 0's own keys do not type the next line: nothing is left out there.
    src.depth = 0;
    assert_eq!(bytes_of(&src), b"outer keys\r\n");
    src.next_command_line = Some("outer keys".into());
    assert_eq!(bytes_of(&src), b"");
}

#[test]
fn full_screen_visits_are_named_after_the_program_the_line_runs() {
    assert_eq!(program_name("vim notes.txt").as_deref(), Some("vim"));
    assert_eq!(program_name("/usr/bin/less -R f").as_deref(), Some("less"));
    assert_eq!(
        program_name("TERM=xterm sudo -E nice -n 5 htop").as_deref(),
        Some("htop")
    );
    assert_eq!(program_name("git log -p").as_deref(), Some("git"));
    assert_eq!(program_name("  ").as_deref(), None);
    assert_eq!(program_name("a=1 b=2").as_deref(), None);
    // Control characters never reach the header.
    assert_eq!(program_name("vi\x1b[2Jm x").as_deref(), Some("vi[2Jm"));
    assert_eq!(
        program_name(&"x".repeat(500)).map(|p| p.chars().count()),
        Some(64)
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Learning renders lines whole up to a larger cap than the digest's and hands the digest
    /// its own clip of each (`Both`, `reclip`): the digest and the lines are what rendering at
    /// each cap gives, for lines longer than both caps too (words cut at either edge, wide and
    /// multibyte chars, words longer than what a cut leaves out).
    #[test]
    fn rendering_at_a_larger_cap_gives_the_digest_and_the_lines_of_each_cap(
        lines in proptest::collection::vec(
            proptest::collection::vec("[a-z\u{e9}\u{6f22}]{1,400}", 0..40), 1..5),
        extra in 600usize..3 * LINE_CAP,
    ) {
        let whole = LINE_CAP + extra;
        let text: String = lines.iter().map(|w| format!("{}\r\n", w.join(" "))).collect();
        let (_t, src) = stream(&[(O, text.as_bytes())], None);
        struct Collect(Vec<(String, u64, String)>);
        impl LineSink for Collect {
            fn line(&mut self, l: Line<'_>) {
                self.0.push((l.head.to_string(), l.omitted, l.tail.to_string()));
            }
            fn erase_scrollback(&mut self) {}
        }
        let mut got = Collect(Vec::new());
        let (d, over) = digest_rendered(&src, Caps::STANDARD, Some(whole), &mut got);
        proptest::prop_assert!(!over);
        proptest::prop_assert_eq!(d, digest(&src, Caps::STANDARD));
        let mut want = Vec::new();
        for_each_line(&src, whole, 0, &mut |_, l| {
            want.push((l.head.to_string(), l.omitted, l.tail.to_string()));
        });
        proptest::prop_assert_eq!(got.0, want);
    }
}

#[test]
fn a_line_over_a_cap_too_close_to_the_digests_stops_the_whole_line_rendering() {
    // At a cap of LINE_CAP the head kept may be shorter than the digest's head (a cut word is
    // left out): its clip cannot be told, and the caller renders again.
    let line = format!(
        "{} {}\r\n",
        "w".repeat(LINE_CAP / 2 - 10),
        "x".repeat(LINE_CAP)
    );
    let (_t, src) = stream(&[(O, line.as_bytes())], None);
    let (_, over) = digest_rendered(&src, Caps::STANDARD, Some(LINE_CAP), &mut NoLines);
    assert!(over);
}
