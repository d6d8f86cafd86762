//! Edge cases from SHELL-INTEGRATION.md §7, in real shells.

mod common;

use common::*;

fn zsh_available() -> bool {
    require("zsh")
}

#[test]
fn promptvars_off_keeps_the_prompt_clean_and_still_records() {
    let rc = "PS1='READY> '\nshopt -u promptvars\n";
    let mut h = Harness::start(&["bash"], &[(".bashrc", rc)]);
    h.wait_prompts(1);
    let r = h.run("echo hi");
    assert_eq!(
        (r.command_line.as_str(), r.command_source.as_str()),
        ("echo hi", "screen")
    );
    assert_eq!(h.output_text(&r), "hi\r\n");
    assert!(!h.screen().contains("__omnish"), "{}", h.screen());
    // Turned back on interactively: the hook reports lines again.
    h.run("shopt -s promptvars");
    let r = h.run("echo back");
    assert_eq!(
        (r.command_line.as_str(), r.command_source.as_str()),
        ("echo back", "hook")
    );
    assert!(!h.screen().contains("__omnish"), "{}", h.screen());
}

#[test]
fn ignoredups_and_erasedups_do_not_repeat_stale_lines() {
    let rc = "PS1='READY> '\nHISTCONTROL=ignoredups:erasedups\n";
    let mut h = Harness::start(&["bash"], &[(".bashrc", rc)]);
    h.wait_prompts(1);
    h.run("echo a");
    h.run("echo b");
    let r = h.run("echo b");
    assert_eq!(r.command_line, "echo b");
    let r = h.run("echo a");
    assert_eq!(r.command_line, "echo a");
}

#[test]
fn ctrl_c_at_a_continuation_prompt_makes_no_record() {
    let mut h = Harness::bash(&[]);
    let mark = h.mark();
    h.type_line("for i in 1 2");
    // At the continuation prompt, in the line editor (Ctrl-C there cancels the command).
    h.wait_until("the continuation prompt", || {
        h.screen_since(mark).contains("> ")
    });
    h.wait_line_editor();
    h.send(b"\x03");
    h.wait_prompts(2);
    let r = h.run("echo next");
    assert_eq!((r.seq, r.command_line.as_str()), (1, "echo next"));
    if zsh_available() {
        let mut h = Harness::zsh(&[]);
        h.type_line("for i in 1 2");
        h.wait_screen("for> ");
        h.send(b"\x03");
        h.wait_prompts(2);
        let r = h.run("echo next");
        assert_eq!((r.seq, r.command_line.as_str()), (1, "echo next"));
    }
}

#[test]
fn redraws_clear_screen_and_vi_mode_at_the_prompt() {
    let rc = "PS1='READY> '\nHISTCONTROL=ignorespace\n";
    // Lines kept out of history with a leading space are recorded here, to read them.
    let mut h = Harness::start_with(
        &["bash"],
        &[(".bashrc", rc)],
        &[("OMNISH_RECORD_PRIVATE", "1")],
    );
    h.wait_prompts(1);
    h.send(b"echo par");
    h.send(b"\x0c"); // Ctrl-L: clear and redraw the prompt and the line
    h.wait_prompts(2);
    h.type_line("tial");
    let r = h.wait_records(1).remove(0);
    assert_eq!(r.command_line, "echo partial");
    assert_eq!(h.output_text(&r), "partial\r\n");
    // A line read off the screen after a redraw is the line, not the prompt.
    h.send(b" echo hid");
    h.send(b"\x0c");
    h.wait_prompts(4);
    h.type_line("den");
    let r = h.wait_records(2).remove(1);
    assert_eq!(
        (r.command_line.as_str(), r.command_source.as_str()),
        (" echo hidden", "screen")
    );
    // vi editing mode: ESC to command mode, `0` to the line start, `i` to insert.
    h.run("set -o vi");
    h.keys(b"cho vi-mode\x1b0i");
    h.type_line("e");
    let r = h.wait_records(4).remove(3);
    assert_eq!(r.command_line, "echo vi-mode");
    assert_eq!(h.output_text(&r), "vi-mode\r\n");
}

#[test]
fn multi_line_prompts_with_command_substitution() {
    let rc = "PS1='$(printf \"top\\\\nmid\")\\nREADY> '\n";
    let mut h = Harness::start(&["bash"], &[(".bashrc", rc)]);
    h.wait_prompts(1);
    let r = h.run("echo one");
    assert_eq!(h.output_text(&r), "one\r\n");
    let screen = h.screen();
    assert!(screen.contains("top") && screen.contains("mid"), "{screen}");
}

#[test]
fn missing_startup_files_and_the_c_locale() {
    // No ~/.bashrc at all: the system's default prompt, still recorded.
    let mut h = Harness::start(&["bash"], &[]);
    h.wait_until("a prompt", || {
        h.screen().contains("$ ") || h.screen().contains("# ")
    });
    h.type_line("echo no-rc");
    let r = h.wait_records(1).remove(0);
    assert_eq!(h.output_text(&r), "no-rc\r\n");
    // C locale: UTF-8 bytes in the command line still arrive exactly.
    let rc = "PS1='READY> '\n";
    let mut h = Harness::start_with(
        &["bash"],
        &[(".bashrc", rc)],
        &[("LANG", "C"), ("LC_ALL", "C")],
    );
    h.wait_prompts(1);
    let r = h.run("echo 'caf\u{e9} \u{5b57}'");
    assert_eq!(r.command_line, "echo 'caf\u{e9} \u{5b57}'");
}

#[test]
fn nested_shells_with_their_own_integration_stay_inside_the_outer_command() {
    // The inner bash's rc emits its own (token-less) OSC 133 marks, as a terminal's shell
    // integration would.
    let rc = "PS1='READY> '\nif [ -n \"${INNER-}\" ]; then PS1='inner$ '; PROMPT_COMMAND='printf \"\\033]133;D;0\\007\\033]133;A\\007\"'; fi\n";
    let mut h = Harness::start(&["bash"], &[(".bashrc", rc)]);
    h.wait_prompts(1);
    h.type_line("INNER=1 bash");
    h.wait_screen("inner$ ");
    h.type_line("echo from-inner; false");
    h.wait_screen("from-inner\r\n");
    h.type_line("exit 4");
    let r = h.wait_records(1).remove(0);
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        ("INNER=1 bash", Some(4))
    );
    let out = h.output_text(&r);
    assert!(
        out.contains("from-inner") && out.contains("\x1b]133;D;0\x07"),
        "{out:?}"
    );
    assert_eq!(h.records().len(), 1);
    if zsh_available() {
        let r = h.run("zsh -fc 'echo in-zsh; exit 3'");
        assert_eq!(r.exit_code, Some(3));
        assert!(h.output_text(&r).contains("in-zsh"));
    }
}

#[test]
fn tmux_passthrough_and_unterminated_escape_floods_are_output() {
    let mut h = Harness::bash(&[]);
    // A marker wrapped for tmux passthrough: not ours, whatever it says.
    let r = h.run("printf '\\ePtmux;\\e\\e]133;D;0\\a\\e\\\\'; echo passthrough");
    assert_eq!(r.exit_code, Some(0));
    assert!(h.output_text(&r).ends_with("passthrough\r\n"));
    // An OSC that never ends, larger than what omnish holds back: shown and recorded, and the
    // next command is unaffected.
    let r = h.run("printf '\\e]133;'; head -c 300000 /dev/zero | tr '\\0' x; printf '\\n'");
    let out = h.output(&r);
    assert_eq!(out.iter().filter(|&&b| b == b'x').count(), 300000);
    let r = h.run("echo after-flood");
    assert_eq!(h.output_text(&r), "after-flood\r\n");
}

#[test]
fn full_screen_programs_are_recorded_and_the_prompt_comes_back() {
    if !require("less") {
        return;
    }
    let mut h = Harness::bash(&[]);
    h.type_line("seq 1 200 | less");
    h.wait_until("less on the alternate screen", || {
        h.screen().contains("\x1b[?1049h")
    });
    h.wait_reading("less");
    h.send(b"q");
    let r = h.wait_records(1).remove(0);
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        ("seq 1 200 | less", Some(0))
    );
    assert!(h.output_text(&r).contains("\x1b[?1049h"));
    let lines = omnish::term::render::render(&h.output(&r), 80, 24);
    assert!(
        lines.iter().any(|l| l.contains("[full-screen program]")),
        "{lines:?}"
    );
}

#[test]
fn output_reaches_the_disk_while_the_command_runs() {
    let mut h = Harness::bash(&[]);
    h.type_line("echo early; sleep 30");
    h.wait_screen("early\r\n");
    // Long before the command ends, its output so far is in stream.bin.
    h.wait_until("output on disk", || {
        let frames = all_frames(&h.session_dir());
        frames
            .iter()
            .any(|f| f.data().windows(5).any(|w| w == b"early"))
    });
    h.send(b"\x03");
    h.wait_records(1);
}

#[test]
fn zsh_edge_cases() {
    if !zsh_available() {
        return;
    }
    // RPS1 instead of RPROMPT, a transient prompt that rewrites itself when a line is accepted,
    // and type-ahead while a command runs.
    let zshrc = r#"
PROMPT='READY> '
RPS1='[right]'
zle-line-finish() { PROMPT='> '; zle reset-prompt; PROMPT='READY> ' }
zle -N zle-line-finish
"#;
    let mut h = Harness::start(&["zsh"], &[(".zshrc", zshrc)]);
    h.wait_prompts(1);
    let r = h.run("echo transient");
    assert_eq!(h.output_text(&r), "transient\r\n");
    h.gate();
    h.type_line("cat gate; echo first");
    h.wait_foreground("cat");
    h.type_line("echo second");
    h.wait_screen("echo second\r\n");
    h.open_gate();
    let recs = h.wait_records(3);
    assert_eq!(recs[1].command_line, "cat gate; echo first");
    assert_eq!(recs[2].command_line, "echo second");
    assert!(h.output_text(&recs[2]).ends_with("second\r\n"));
    let long = format!("echo {} | wc -c", "y".repeat(17000));
    let r = h.run(&long);
    assert_eq!(r.command_line, long);
    assert_eq!(h.output_text(&r).trim(), "17001");
}

#[test]
fn a_tmux_pane_inside_a_recorded_shell_gets_its_own_recorder() {
    if !require("tmux") {
        return;
    }
    let mut h = Harness::bash(&[]);
    let sock = h.home.path().join("tmux.sock");
    let sock = sock.to_str().unwrap();
    // A pane is a new terminal: `omnish wrap` there records it, in a session of its own.
    let r = h.run(&format!(
        "tmux -S {sock} -f /dev/null new-session -d -x 80 -y 24 \"{} wrap bash -c 'echo in-pane'\"; sleep 1; tmux -S {sock} kill-server 2>/dev/null; true",
        omnish_bin()
    ));
    assert_eq!(r.exit_code, Some(0));
    let sessions = omnish::store::list_sessions(&h.data()).unwrap();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    let inner = sessions
        .iter()
        .find(|d| {
            omnish::store::read_commands(d)
                .unwrap()
                .iter()
                .any(|c| c.command_line == "echo in-pane")
        })
        .expect("the pane's session");
    let rec = &omnish::store::read_commands(inner).unwrap()[0];
    assert_eq!(output_of(inner, rec), b"in-pane\r\n");
}
