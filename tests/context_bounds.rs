//! `omnish context` on the outputs that break naive readers: huge lines, binary output, damaged
//! files, and selections that match nothing. Recorded through a real wrapped bash.

mod common;

use common::*;
use std::process::Output;

fn context(h: &Harness, args: &[&str]) -> Output {
    h.context(args)
}

fn stdout_ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn a_ten_megabyte_line_keeps_its_head_and_tail() {
    let mut h = Harness::bash(&[]);
    h.run_huge("head -c 10000000 /dev/zero | tr '\\0' b; echo; echo end");
    let text = stdout_ok(&context(&h, &["--last"]));
    let b250 = "b".repeat(250);
    let want = format!("{b250}…[9999500 chars omitted]…{b250}\nend\n");
    assert!(text.ends_with(&want), "{}", &text[..text.len().min(2000)]);
    // A width of its own, in every format; and a budget that is a ceiling.
    let narrow = stdout_ok(&context(&h, &["--last", "--max-line-width", "10"]));
    assert!(
        narrow.contains("\nbbbbb…[9999990 chars omitted]…bbbbb\nend\n"),
        "{narrow}"
    );
    let json = stdout_ok(&context(
        &h,
        &["--last", "--format", "json", "--max-line-width", "4"],
    ));
    assert!(
        json.contains(r#""output": "bb…[9999996 chars omitted]…bb\nend""#),
        "{json}"
    );
    let fitted = stdout_ok(&context(&h, &["--last", "--budget", "2000"]));
    assert!(fitted.len() < 8000, "{} bytes", fitted.len());
    // Unlimited width, streamed: still bounded, with the middle of the line said.
    let wide = stdout_ok(&context(&h, &["--last", "--max-line-width", "0"]));
    assert!(
        wide.contains(&format!("…[{} chars omitted]…", 10_000_000 - (1 << 20))),
        "{}",
        wide.len()
    );
}

#[test]
fn fifty_megabytes_of_binary_output_is_one_line() {
    let mut h = Harness::bash(&[]);
    // Escape bytes are taken out so the test terminal's screen stays sane; the rest is random.
    h.run_huge("head -c 50000000 /dev/urandom | tr -d '\\033\\233'; echo");
    h.run("echo after");
    let text = stdout_ok(&context(&h, &["--recent", "2"]));
    let line = text
        .lines()
        .find(|l| l.starts_with("[binary output, "))
        .unwrap_or_else(|| panic!("{}", &text[..text.len().min(3000)]));
    assert!(
        line.ends_with(" MB]") && (line.contains(" 49.") || line.contains(" 50.")),
        "{line}"
    );
    assert!(text.contains("$ echo after\nafter\n"), "{text}");
    // Its random bytes are not error lines, and there is nothing else of it.
    assert!(text.lines().count() < 10, "{text}");
}

/// A finished bash session of three commands (and `exit`); returns the records.
fn three_commands() -> (Harness, Vec<omnish::store::CommandRecord>) {
    let mut h = Harness::bash(&[]);
    h.run("echo one");
    h.run("seq 1 5");
    h.run("echo three");
    h.type_line("exit");
    assert_eq!(h.wait_exit(), 0);
    // `exit` is recorded too, as the fourth command.
    let recs = h.records();
    assert_eq!(recs.len(), 4);
    (h, recs)
}

#[test]
fn a_damaged_stream_spoils_only_the_command_it_belongs_to() {
    let (h, recs) = three_commands();
    let stream = h.session_dir().join(omnish::store::STREAM);
    let mut bytes = std::fs::read(&stream).unwrap();
    // Garbage where the second command's first frame starts.
    bytes[recs[1].stream_offset as usize] = 0xc1;
    std::fs::write(&stream, &bytes).unwrap();
    let text = stdout_ok(&context(&h, &[]));
    assert!(text.contains("$ echo one\none\n"), "{text}");
    assert!(
        text.contains(&format!(
            "$ seq 1 5\n[output unreadable: stream.bin is damaged at byte {}]\n",
            recs[1].stream_offset
        )),
        "{text}"
    );
    assert!(text.contains("$ echo three\nthree\n"), "{text}");
}

#[test]
fn a_torn_stream_spoils_only_the_commands_past_the_tear() {
    let (h, recs) = three_commands();
    let stream = h.session_dir().join(omnish::store::STREAM);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&stream)
        .unwrap();
    // The file ends in the middle of the last command's output.
    f.set_len(recs[2].stream_offset + recs[2].stream_length / 2)
        .unwrap();
    let text = stdout_ok(&context(&h, &[]));
    assert!(text.contains("$ echo one\none\n"), "{text}");
    assert!(text.contains("$ seq 1 5\n1\n2\n3\n4\n5\n"), "{text}");
    assert!(
        text.contains(
            "$ echo three\n[output unreadable: stream.bin ends inside the frame at byte "
        ),
        "{text}"
    );
}

#[test]
fn a_session_with_an_invalid_meta_json_is_read_with_one_warning() {
    let (h, _) = three_commands();
    let dir = h.session_dir();
    for (bad, why) in [
        (&b"{\"id\": \"x\", "[..], "meta.json is not valid"),
        (&b""[..], "meta.json is empty"),
    ] {
        std::fs::write(dir.join(omnish::store::META), bad).unwrap();
        let out = context(&h, &[]);
        let text = stdout_ok(&out);
        assert!(text.contains("$ seq 1 5\n1\n"), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(why) && err.starts_with("omnish: warning: session "),
            "{err}"
        );
    }
    std::fs::remove_file(dir.join(omnish::store::META)).unwrap();
    let out = context(&h, &["--recent", "2"]);
    assert!(stdout_ok(&out).contains("$ echo three\nthree\n"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("meta.json is missing"));
}

#[test]
fn stray_entries_and_a_session_being_created_are_passed_over() {
    let (h, _) = three_commands();
    let sessions = h.data().join("sessions");
    std::fs::create_dir(sessions.join("backup")).unwrap();
    std::fs::write(sessions.join("notes.txt"), "x").unwrap();
    // Newer than the real session, nothing written yet: being created.
    std::fs::create_dir(sessions.join("29991231T235959.999Z-abcdef")).unwrap();
    let out = context(&h, &["--recent", "2"]);
    assert!(stdout_ok(&out).contains("$ echo three\nthree\n"));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let all = context(&h, &["--session", "all", "--commands-only"]);
    assert_eq!(stdout_ok(&all).matches("$ ").count(), 4);
}

#[test]
fn nothing_matched_says_so_and_exits_1() {
    let (h, _) = three_commands();
    let out = context(&h, &["--failed"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("omnish: no command matched (failed) in session ")
            && err.trim_end().ends_with("(4 commands looked at)")
            && err.lines().count() == 1,
        "{err}"
    );
    let zero = context(&h, &["--recent", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--recent: 0 selects nothing"));
}

#[test]
fn streaming_and_collecting_give_the_same_document() {
    let mut h = Harness::bash(&[]);
    h.run("seq 1 300");
    h.run("printf 'a\\nerror: b\\nc\\n'; (exit 3)");
    h.run("seq 1 40");
    // --max-lines 300 streams (over what a digest holds); 250 is served from digests. With
    // outputs of at most 300 lines both keep everything, so the documents are the same.
    for format in ["text", "markdown", "json"] {
        let streamed = stdout_ok(&context(&h, &["--max-lines", "300", "--format", format]));
        let collected = stdout_ok(&context(&h, &["--max-lines", "250", "--format", format]));
        let all = stdout_ok(&context(&h, &["--max-lines", "0", "--format", format]));
        assert_eq!(streamed, all, "{format}");
        if format != "json" {
            // 250 of 300 lines: the seq 1 300 block differs by its gap only.
            assert!(
                collected.contains("... (50 lines omitted) ..."),
                "{collected}"
            );
        }
        let wide = stdout_ok(&context(
            &h,
            &[
                "--max-line-width",
                "0",
                "--max-lines",
                "20",
                "--format",
                format,
            ],
        ));
        let narrow = stdout_ok(&context(&h, &["--max-lines", "20", "--format", format]));
        assert_eq!(wide, narrow, "{format}");
    }
}

/// Big outputs are read in parallel (one thread each): every digest must still land on its own
/// command, newest and oldest alike, with small commands in between.
#[test]
fn outputs_read_in_parallel_stay_with_their_commands() {
    let mut h = Harness::bash(&[]);
    h.run_huge("seq 1 200000");
    h.run("echo small-one");
    h.run_huge("seq 300001 500000");
    h.run_huge("seq 600001 800000");
    h.run("echo small-two");
    let text = stdout_ok(&context(&h, &["--recent", "5", "--max-lines", "4"]));
    // After the `# cwd:` header, one block per command.
    let blocks: Vec<&str> = text.split("\n$ ").skip(1).collect();
    let want = [
        ("seq 1 200000", "1\n2\n", "199999\n200000"),
        ("echo small-one", "small-one", "small-one"),
        ("seq 300001 500000", "300001\n300002\n", "499999\n500000"),
        ("seq 600001 800000", "600001\n600002\n", "799999\n800000"),
        ("echo small-two", "small-two", "small-two"),
    ];
    assert_eq!(blocks.len(), want.len(), "{text}");
    for (block, (cmd, head, tail)) in blocks.iter().zip(want) {
        let (line, output) = block.split_once('\n').unwrap_or((block, ""));
        let output = output.trim_end();
        assert_eq!(line, cmd, "{text}");
        assert!(
            output.starts_with(head) && output.ends_with(tail),
            "{cmd}: {output}"
        );
    }
    // A grep over big outputs tries several at once: each verdict must stay with its command.
    let grep = |pattern: &str| {
        let out = context(
            &h,
            &["--recent", "5", "--max-lines", "2", "--grep", pattern],
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let lines: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix("$ ").map(str::to_string))
            .collect();
        (out.status.code(), lines)
    };
    assert_eq!(
        grep("^7[0-9]{5}$"),
        (Some(0), vec!["seq 600001 800000".to_string()])
    );
    assert_eq!(
        grep("^(150000|350000|650000)$"),
        (
            Some(0),
            vec![
                "seq 1 200000".to_string(),
                "seq 300001 500000".to_string(),
                "seq 600001 800000".to_string()
            ]
        )
    );
    assert_eq!(grep("^no-such-line$"), (Some(1), vec![]));
    // Cached digests (second call) give the same document.
    assert_eq!(
        stdout_ok(&context(&h, &["--recent", "5", "--max-lines", "4"])),
        text
    );
}

/// A secret cut by the line cap (4,096 chars: the first and last 2,048 are kept) is left out
/// with the middle: the piece before the cut is no shape the redactor knows, so showing it
/// would show part of a secret. And a width cut never goes through a `[REDACTED:…]` marker.
#[test]
fn a_secret_cut_by_the_line_cap_shows_no_piece() {
    let mut h = Harness::bash(&[]);
    // The token starts 2,041 chars in and crosses the cut at 2,048.
    let body = "Zq9X".repeat(9);
    h.run(&format!(
        "printf '%s ghp_%s %s\\n' \"$(head -c 2040 /dev/zero | tr '\\0' a)\" {body} \"$(head -c 5000 /dev/zero | tr '\\0' b)\"; echo end-of-it"
    ));
    // search shows lines past the cap as their head and tail.
    let out = h.omnish(&["search", "-F", "aaaa"]);
    let found = String::from_utf8_lossy(&out.stdout);
    let line = found.lines().find(|l| l.contains("aaaa")).unwrap();
    assert!(
        // 7,082 chars: 4,096 kept less the token's 7 chars before the cut.
        line.contains(&format!(
            "{} …[2993 chars omitted]…{}",
            "a".repeat(40),
            "b".repeat(40)
        )),
        "{}",
        &line[line.len() - 200..]
    );
    // (The command line holds `ghp_%s`, the printf format; the output line, no piece of it.)
    assert!(!line.contains("ghp_") && !found.contains("Zq9X"), "{found}");
    // A width whose cut falls inside the token's marker leaves the marker out whole.
    let text = stdout_ok(&context(&h, &["--last", "--max-line-width", "4090"]));
    let line = text.lines().find(|l| l.starts_with("aaaa")).unwrap();
    assert!(
        line.contains(&format!("{} …[", "a".repeat(40))),
        "{}",
        &line[2000..2100]
    );
    assert!(
        !line.contains("[REDACT…") && !text.contains("Zq9X"),
        "{}",
        &line[2000..2100]
    );
}
