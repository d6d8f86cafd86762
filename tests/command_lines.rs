//! Exact command lines and the user's privacy settings, through real bash and zsh in a real
//! pseudo-terminal, typed at as a person would (issue 7).

mod common;

use common::*;

fn zsh_or_skip() -> bool {
    require("zsh")
}

const UP: &[u8] = b"\x1b[A";

/// `omnish context ARGS` from a second terminal.
fn context(h: &Harness, args: &[&str]) -> String {
    let out = h.context(args);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every byte omnish wrote for the session, as text.
fn session_files(h: &Harness) -> String {
    // Tolerates `meta.json`'s temporary file vanishing between the listing and the read.
    session_text(&h.session_dir())
}

/// Sends keys, waits until the line editor has read them all and waits for more (it has
/// redrawn the line), and checks `echo` is on the screen.
fn keys(h: &mut Harness, bytes: &[u8], echo: &str) {
    h.keys(bytes);
    h.wait_screen(echo);
}

/// Types Enter and waits for the record it makes (the `n`th).
fn enter(h: &mut Harness, n: usize) -> omnish::store::CommandRecord {
    let prompts = h.screen().matches(PROMPT).count();
    h.send(b"\r");
    let r = h.wait_records(n)[n - 1].clone();
    h.wait_prompts(prompts + 1);
    r
}

#[test]
fn bash_long_line_recalled_with_up_under_ignoreboth_is_exact() {
    // Debian's default: the recalled line is a duplicate, kept out of history, so omnish
    // reads it off the screen, where bash wrapped it and moved back with carriage returns.
    let rc = "PS1='READY> '\nHISTCONTROL=ignoreboth\n";
    let mut h = Harness::start(&["bash"], &[(".bashrc", rc)]);
    h.wait_prompts(1);
    let line = format!("echo {} {}", "x".repeat(100), "y".repeat(30));
    let r = h.run(&line);
    assert_eq!(
        (r.command_line.as_str(), r.command_source.as_str()),
        (line.as_str(), "hook")
    );
    keys(&mut h, UP, &"y".repeat(30));
    let r = enter(&mut h, 2);
    assert_eq!(
        (r.command_line.as_str(), r.command_source.as_str()),
        (line.as_str(), "screen")
    );
    // A line that exactly fills the first row (readline's " \r" wrap), recalled.
    let exact = format!("echo {}", "a".repeat(80 - "READY> echo ".len()));
    h.run(&exact);
    keys(&mut h, UP, "READY> echo a");
    let r = enter(&mut h, 4);
    assert_eq!(
        (r.command_line.as_str(), r.command_source.as_str()),
        (exact.as_str(), "screen")
    );
    // Longer than the whole screen (24 rows of 80), recalled: the rows scroll off the top.
    let huge = format!("echo {} end", "z".repeat(3000));
    h.run(&huge);
    keys(&mut h, UP, "zzzzzz end");
    let r = enter(&mut h, 6);
    assert_eq!(
        (r.command_line.as_str(), r.command_source.as_str()),
        (huge.as_str(), "screen")
    );
}

#[test]
fn bash_lines_read_off_the_screen_are_exact_across_widths_resizes_and_editing() {
    // With history off every line is read off the screen; earlier lines are still recalled.
    // (Lines typed with history off are private: recorded here because the test asks.)
    let long = format!("echo {} {} end", "p".repeat(70), "q".repeat(70));
    let rc =
        format!("PS1='READY> '\nhistory -s '{long}'\nhistory -s 'echo short'\nset +o history\n");
    let mut h = Harness::start_with(
        &["bash"],
        &[(".bashrc", rc.as_str())],
        &[("OMNISH_RECORD_PRIVATE", "1")],
    );
    h.wait_prompts(1);
    let check = |h: &mut Harness, want: &str| {
        let n = h.records().len() + 1;
        let r = enter(h, n);
        assert_eq!(
            (r.command_line.as_str(), r.command_source.as_str()),
            (want, "screen"),
            "record {n}"
        );
        assert_eq!(h.output_text(&r).trim_end(), &want[5..], "record {n}");
    };

    // Typed a few keys at a time at 80 columns, longer than two rows.
    let r = h.run(&long);
    assert_eq!(
        (r.command_line.as_str(), r.command_source.as_str()),
        (long.as_str(), "screen")
    );

    // Recalled (Up twice: past `echo short`), then edited in the first row: Home, three
    // characters right, insert; delete a character in the second row.
    keys(&mut h, UP, "echo short");
    keys(&mut h, UP, " end");
    h.keys(b"\x01\x1b[C\x1b[C\x1b[CZ");
    h.keys(b"\x05");
    h.keys(&[0x02; 8]);
    h.keys(b"\x04");
    // `echZo` is no command: bash complains; only the line matters here.
    let n = h.records().len() + 1;
    let r = enter(&mut h, n);
    let edited = format!("echZo {} {} end", "p".repeat(70), "q".repeat(69));
    assert_eq!(r.command_line, edited);

    // A prompt that starts mid-row, after output without a final newline: readline still
    // counts columns from the prompt's start (the terminal shows its edits garbled).
    let r = h.run("printf abc");
    assert_eq!(r.command_line, "printf abc");
    keys(&mut h, UP, "echo short");
    keys(&mut h, UP, " end");
    // Edited: readline moves up and back with carriage returns.
    h.keys(b"\x01\x06\x06\x06\x06\x06");
    h.keys(b"Z");
    check(&mut h, &long.replacen("echo ", "echo Z", 1));

    // Another width: 50 columns, then a resize to 61 while the line is half typed.
    h.resize(20, 50);
    let half = format!("echo {}", "r".repeat(60));
    keys(&mut h, half.as_bytes(), "rrrrrrrrrr");
    h.resize(20, 61);
    let rest = format!(" {} done", "s".repeat(55));
    keys(&mut h, rest.as_bytes(), " done");
    check(&mut h, &format!("{half}{rest}"));
    // And a shrink to 35 columns with the line on three rows, the cursor moved back into it.
    let first = format!("echo {}", "t".repeat(150));
    keys(&mut h, first.as_bytes(), "tttttttttt");
    h.keys(b"\x1b[D\x1b[D");
    h.resize(20, 35);
    keys(&mut h, b"UV", "UV");
    check(&mut h, &format!("echo {}UVtt", "t".repeat(148)));

    // vi mode: ESC k recalls (twice: past `echo short`), `A` appends.
    h.run("set -o vi");
    h.keys(b"\x1bk");
    h.keys(b"k");
    keys(&mut h, b"A again", " again");
    check(&mut h, &format!("{long} again"));
    // vi commands in a wrapped line: to the start, next word, delete a character; to the end,
    // back a word, insert.
    h.keys(b"\x1bk");
    h.keys(b"k");
    h.keys(b"0wx$bi");
    keys(&mut h, b"new-", "new-");
    check(
        &mut h,
        &format!("echo {} {} new-end", "p".repeat(69), "q".repeat(70)),
    );
}

#[test]
fn bash_leading_space_is_kept_as_typed() {
    // Recorded through history (no ignorespace) and read off the screen (private commands
    // recorded on request).
    let rc = "PS1='READY> '\n";
    let mut h = Harness::start(&["bash"], &[(".bashrc", rc)]);
    h.wait_prompts(1);
    let r = h.run(" echo spaced");
    assert_eq!(r.command_line, " echo spaced");
    let rc = "PS1='READY> '\nHISTCONTROL=ignoreboth\n";
    let mut h = Harness::start_with(
        &["bash"],
        &[(".bashrc", rc)],
        &[("OMNISH_RECORD_PRIVATE", "1")],
    );
    h.wait_prompts(1);
    let r = h.run(" echo private456");
    assert_eq!(
        (
            r.command_line.as_str(),
            r.command_source.as_str(),
            r.private
        ),
        (" echo private456", "screen", false)
    );
    assert_eq!(h.output_text(&r), "private456\r\n");
}

#[test]
fn bash_history_expansion_records_what_ran_and_what_was_typed() {
    for histcontrol in ["", "ignoreboth"] {
        let rc = format!("PS1='READY> '\nHISTCONTROL={histcontrol}\n");
        let mut h = Harness::start(&["bash"], &[(".bashrc", rc.as_str())]);
        h.wait_prompts(1);
        let r = h.run("echo first");
        assert_eq!(r.typed, None);
        for (typed, ran) in [
            ("!!", "echo first"),
            ("echo second", "echo second"),
            ("!-2", "echo first"),
            ("echo a b", "echo a b"),
            ("echo !$", "echo b"),
            ("^b^c", "echo c"),
        ] {
            let r = h.run(typed);
            let want_typed = (typed != ran).then(|| typed.to_string());
            assert_eq!(
                (r.command_line.as_str(), r.typed.clone()),
                (ran, want_typed),
                "HISTCONTROL={histcontrol}"
            );
            assert_eq!(h.output_text(&r), format!("{}\r\n", &ran[5..]));
        }
    }
}

fn assert_private(h: &Harness, r: &omnish::store::CommandRecord, exit: i32) {
    assert!(r.private, "{r:?}");
    assert_eq!(r.command_line, "");
    assert_eq!(r.cwd, "");
    assert_eq!(r.typed, None);
    assert_eq!(r.stream_length, 0);
    assert_eq!(r.exit_code, Some(exit));
    assert!(r.started_at <= r.ended_at);
    assert!(h.output(r).is_empty());
}

#[test]
fn bash_leading_space_command_is_private_under_ignorespace_and_ignoreboth() {
    for histcontrol in ["ignorespace", "ignoreboth", "erasedups:ignorespace"] {
        let rc = format!("PS1='READY> '\nHISTCONTROL={histcontrol}\n");
        let mut h = Harness::start(&["bash"], &[(".bashrc", rc.as_str())]);
        h.wait_prompts(1);
        h.run("echo before");
        let r = h.run(" echo -pSECRET1; (exit 3)");
        assert_private(&h, &r, 3);
        // Keystrokes typed into a private command (echo on) are not kept either.
        h.type_line(" cat");
        h.wait_until("cat running", || h.meta().running_command.is_some());
        assert_eq!(h.meta().running_command.unwrap().command_line, "");
        h.wait_reading("cat");
        h.send(b"SECRET2-typed\r");
        h.wait_screen("SECRET2-typed\r\nSECRET2-typed");
        h.send(b"\x04");
        let r = h.wait_records(3).remove(2);
        assert_private(&h, &r, 0);
        let r = h.run("echo after");
        assert_eq!(h.output_text(&r), "after\r\n");
        let files = session_files(&h);
        assert!(!files.contains("SECRET"), "HISTCONTROL={histcontrol}");
        let shown = context(&h, &["--recent", "10"]);
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("[private command]"), "{shown}");
        assert!(shown.contains("echo after"), "{shown}");
    }
    // Without ignorespace the user did not ask: the line is recorded.
    let mut h = Harness::bash(&[]);
    let r = h.run(" echo not-private");
    assert!(!r.private);
    assert_eq!(h.output_text(&r), "not-private\r\n");
}

#[test]
fn bash_histignore_and_history_off_commands_are_private() {
    let rc = "PS1='READY> '\nHISTIGNORE='*SECRET*:true'\nHISTCONTROL=ignoredups\n";
    let mut h = Harness::start(&["bash"], &[(".bashrc", rc)]);
    h.wait_prompts(1);
    h.run("echo before");
    let r = h.run("echo -pSECRET1; (exit 4)");
    assert_private(&h, &r, 4);
    let r = h.run("true");
    assert_private(&h, &r, 0);
    // A repeat ignoredups left out was saved before: not private.
    let r = h.run("echo before");
    assert_eq!((r.command_line.as_str(), r.private), ("echo before", false));
    assert_eq!(h.output_text(&r), "before\r\n");
    // `set +o history` is saved; what follows is not, until history is back on.
    let r = h.run("set +o history");
    assert!(!r.private, "{r:?}");
    let r = h.run("echo SECRET2-history-off");
    assert_private(&h, &r, 0);
    let r = h.run("set -o history");
    assert_private(&h, &r, 0);
    let r = h.run("echo after");
    assert_eq!((r.command_line.as_str(), r.private), ("echo after", false));
    assert_eq!(h.output_text(&r), "after\r\n");
    assert!(!session_files(&h).contains("SECRET"));
    let shown = context(&h, &["--recent", "20"]);
    assert!(!shown.contains("SECRET"), "{shown}");
}

#[test]
fn zsh_lines_a_zshaddhistory_hook_refuses_are_private() {
    if !zsh_or_skip() {
        return;
    }
    // A zshaddhistory function (status 1: not saved) and a hook in the array (status 2: kept
    // out of the history file only), as users write them to keep secrets out of history.
    let rc = "PROMPT='READY> '\nHISTFILE=~/.zhist\nSAVEHIST=100\nHISTSIZE=100\n\
              zshaddhistory() { [[ $1 != *SECRET* ]] }\n\
              no_pw() { [[ $1 != *PW* ]] || return 2 }\n\
              zshaddhistory_functions+=(no_pw)\n";
    let mut h = Harness::start(&["zsh"], &[(".zshrc", rc)]);
    h.wait_prompts(1);
    h.run("echo before");
    let r = h.run("echo SECRET1; (exit 5)");
    assert_private(&h, &r, 5);
    let r = h.run("echo PW2");
    assert_private(&h, &r, 0);
    let r = h.run("echo after");
    assert_eq!((r.command_line.as_str(), r.private), ("echo after", false));
    assert!(!session_files(&h).contains("SECRET1"));
    assert!(!session_files(&h).contains("PW2"));
    // The user's hooks still decide what zsh keeps: SECRET1 is not in its history, PW2 is
    // (internally).
    let r = h.run("fc -ln 1");
    let history = h.output_text(&r);
    assert!(!history.contains("SECRET1"), "{history}");
    assert!(history.contains("echo PW2"), "{history}");
    assert!(history.contains("echo after"), "{history}");
}

#[test]
fn zsh_leading_space_command_is_private_under_hist_ignore_space() {
    if !zsh_or_skip() {
        return;
    }
    let rc = "PROMPT='READY> '\nsetopt HIST_IGNORE_SPACE\n";
    let mut h = Harness::start(&["zsh"], &[(".zshrc", rc)]);
    h.wait_prompts(1);
    h.run("echo before");
    let r = h.run(" echo -pSECRET1; (exit 3)");
    assert_private(&h, &r, 3);
    let r = h.run("echo after");
    assert_eq!(h.output_text(&r), "after\r\n");
    assert!(!session_files(&h).contains("SECRET"));
    let shown = context(&h, &["--recent", "10"]);
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(shown.contains("[private command]"), "{shown}");
    // Recorded, leading space and all, when asked to.
    let mut h = Harness::start_with(
        &["zsh"],
        &[(".zshrc", rc)],
        &[("OMNISH_RECORD_PRIVATE", "1")],
    );
    h.wait_prompts(1);
    let r = h.run(" echo kept");
    assert_eq!((r.command_line.as_str(), r.private), (" echo kept", false));
    // Without the option, a leading space is just a space.
    let mut h = Harness::zsh(&[]);
    let r = h.run(" echo not-private");
    assert_eq!(
        (r.command_line.as_str(), r.private),
        (" echo not-private", false)
    );
}

#[test]
fn zsh_history_expansion_records_what_ran_and_what_was_typed() {
    if !zsh_or_skip() {
        return;
    }
    let mut h = Harness::zsh(&[]);
    let r = h.run("echo first");
    assert_eq!(r.typed, None);
    for (typed, ran) in [
        ("!!", "echo first"),
        ("echo second", "echo second"),
        ("!-2", "echo first"),
        ("echo a b", "echo a b"),
        ("echo !$", "echo b"),
        ("^b^c", "echo c"),
    ] {
        let r = h.run(typed);
        let want_typed = (typed != ran).then(|| typed.to_string());
        assert_eq!(
            (r.command_line.as_str(), r.typed.clone()),
            (ran, want_typed)
        );
    }
    // A multi-line command is no expansion.
    h.type_line("for i in 1 2");
    h.type_line("do echo n=$i");
    h.type_line("done");
    let r = h.wait_records(8).remove(7);
    assert_eq!(
        (r.command_line.as_str(), r.typed),
        ("for i in 1 2\ndo echo n=$i\ndone", None)
    );
}

/// Runs `exec <shell>` in `h`, then a command in the replacement, and checks each is its own
/// record with its own output: the new shell is hooked.
fn exec_keeps_recording(h: &mut Harness, exec_line: &str, first: u64) {
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line(exec_line);
    h.wait_prompts(prompts + 1);
    let r = h.run("echo after-exec; echo $((6*7))");
    let recs = h.records();
    let exec = &recs[recs.len() - 2];
    assert_eq!((exec.seq, exec.command_line.as_str()), (first, exec_line));
    assert_eq!(exec.exit_code, Some(0), "{exec:?}");
    assert_eq!((r.seq, r.exit_code), (first + 1, Some(0)));
    assert_eq!(h.output_text(&r), "after-exec\r\n42\r\n");
    let r = h.run("false");
    assert_eq!((r.command_line.as_str(), r.exit_code), ("false", Some(1)));
}

#[test]
fn exec_bash_inside_a_wrapped_bash_keeps_recording_with_hooks() {
    let rc = "PS1='READY> '\nexport FROM_BASHRC=$((FROM_BASHRC+1))\n";
    let files = [(".bashrc", rc), (".bash_profile", ". ~/.bashrc\n")];
    let mut h = Harness::start_with(&["bash"], &files, &[("SHELL", "/bin/bash")]);
    h.wait_prompts(1);
    h.run("echo before");
    exec_keeps_recording(&mut h, "exec bash", 2);
    // The replacement read ~/.bashrc once, is not in POSIX mode and leaks nothing.
    let r = h.run("echo \"rc=$FROM_BASHRC posix=$(shopt -qo posix && echo on || echo off) env=${ENV-unset}${POSIXLY_CORRECT-unset}\"");
    assert_eq!(h.output_text(&r), "rc=2 posix=off env=unsetunset\r\n");
    // Again, through $SHELL and as a login shell.
    exec_keeps_recording(&mut h, "exec -l $SHELL", 6);
    // omnish's private directory (the token, the startup files) lives as long as the session.
    let r = h.run("echo \"$__omnish_dir\"; stat -c %a \"$__omnish_dir\"");
    let out = h.output_text(&r);
    let mut lines = out.lines();
    let dir = std::path::PathBuf::from(lines.next().unwrap());
    assert_eq!(lines.next(), Some("700"));
    assert!(dir.join("exec.bash").exists());
    h.type_line("exit 3");
    assert_eq!(h.wait_exit(), 3);
    assert!(!dir.exists(), "{dir:?}");
    let last = h.records().pop().unwrap();
    assert_eq!(
        (last.command_line.as_str(), last.exit_code),
        ("exit 3", Some(3))
    );
}

#[test]
fn exec_zsh_inside_a_wrapped_zsh_and_across_shells_keeps_recording() {
    if !zsh_or_skip() {
        return;
    }
    let files = [
        (".zshrc", "PROMPT='READY> '\n"),
        (".bashrc", "PS1='READY> '\n"),
    ];
    let mut h = Harness::start(&["zsh"], &files);
    h.wait_prompts(1);
    h.run("echo before");
    exec_keeps_recording(&mut h, "exec zsh", 2);
    exec_keeps_recording(&mut h, "exec bash", 5);
    exec_keeps_recording(&mut h, "exec zsh -l", 8);
    let r = h.run("echo ${ZDOTDIR-unset}");
    assert_eq!(h.output_text(&r), "unset\r\n");
    let mut h = Harness::start(&["bash"], &files);
    h.wait_prompts(1);
    exec_keeps_recording(&mut h, "exec zsh", 1);
}

#[test]
fn exec_of_a_shell_that_cannot_be_hooked_says_so_and_anything_else_ends_the_session() {
    // ENV is the user's: a bash in POSIX mode would read it, not omnish's.
    let rc = "PS1='READY> '\nexport ENV=$HOME/.shrc\n";
    let mut h = Harness::start(&["bash"], &[(".bashrc", rc)]);
    h.wait_prompts(1);
    h.type_line("exec bash");
    h.wait_screen(
        "omnish: bash will not be recorded command by command (ENV or POSIXLY_CORRECT is set)",
    );
    h.wait_prompts(2);
    assert_eq!(h.screen().matches("omnish:").count(), 1);
    // A line bash keeps out of history never reaches its hooks: omnish itself says so.
    let mut h = Harness::bash(&[]);
    h.run("set +o history");
    h.type_line("exec bash");
    h.wait_screen(
        "omnish: bash will not be recorded command by command (the line was kept out of history",
    );
    h.wait_prompts(3);
    assert_eq!(h.screen().matches("omnish:").count(), 1);
    // A failed exec leaves nothing behind.
    let mut h = Harness::bash(&[]);
    h.type_line("exec zsh-does-not-exist-xyz");
    h.wait_prompts(2);
    h.type_line("exec bash-does-not-exist-xyz");
    h.wait_prompts(3);
    let r = h.run("echo \"${ZDOTDIR-unset} ${ENV-unset} $(shopt -qo posix && echo posix)\"");
    assert_eq!(h.output_text(&r), "unset unset \r\n");
    // Anything else replaces the shell and the session ends with it.
    h.type_line("exec cat");
    h.wait_until("cat running", || {
        h.meta()
            .running_command
            .is_some_and(|c| c.command_line == "exec cat")
    });
    h.wait_reading("cat");
    h.send(b"typed-to-cat\r");
    h.wait_screen("typed-to-cat\r\ntyped-to-cat");
    h.send(b"\x04");
    assert_eq!(h.wait_exit(), 0);
    let last = h.records().pop().unwrap();
    assert_eq!(
        (last.command_line.as_str(), last.exit_code),
        ("exec cat", Some(0))
    );
    assert_eq!(h.meta().state, omnish::store::SessionState::Exited);
}
