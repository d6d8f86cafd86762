//! `omnish wrap fish`: real fish (3.6, Debian's) in a real pseudo-terminal, typed at as a person
//! would; the same scenarios as the bash and zsh suites, and fish's own: `$status` and
//! `$pipestatus` intact for the user's prompt, private mode, prompt frameworks, fish 4's own
//! OSC 133 marks.

mod common;

use common::*;

const CONFIG: &str = ".config/fish/config.fish";
const PLAIN: &str = "set -g fish_greeting\nfunction fish_prompt; printf 'READY> '; end\n";

/// A record's output as the terminal showed it: fish sets the terminal's title and resets its
/// colours after the preexec event, so those sequences start every command's bytes.
fn shown(h: &Harness, r: &omnish::store::CommandRecord) -> String {
    omnish::term::render::render(&h.output(r), 80, 24).join("\n")
}

/// A file in fish's generated_completions: with the directory there, a new fish does not parse
/// every man page in the background at its first start (which would load the machine).
pub const NO_GENERATED: (&str, &str) = (".local/share/fish/generated_completions/.omnish-test", "");

/// `omnish wrap ARGV` with HOME holding `files`, and fish's generated completions in place.
fn start(argv: &[&str], files: &[(&str, &str)]) -> Harness {
    let mut all = files.to_vec();
    all.push(NO_GENERATED);
    Harness::start(argv, &all)
}

fn fish_or_skip() -> bool {
    require("fish")
}

fn fish(config: &str) -> Harness {
    fish_args(&[], config)
}

fn fish_args(args: &[&str], config: &str) -> Harness {
    let mut argv = vec!["fish"];
    argv.extend_from_slice(args);
    let h = start(&argv, &[(CONFIG, config)]);
    h.wait_prompts(1);
    h
}

#[test]
fn records_commands_with_output_status_and_cwd() {
    if !fish_or_skip() {
        return;
    }
    let mut h = fish(PLAIN);
    let r = h.run("echo hello");
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        ("echo hello", Some(0))
    );
    assert_eq!(shown(&h, &r), "hello");
    assert_eq!(r.cwd, h.home.path().to_string_lossy());
    assert_eq!(h.run("false").exit_code, Some(1));
    assert_eq!(h.run("true | false").exit_code, Some(1));
    assert_eq!(h.run("false | true").exit_code, Some(0));
    assert_eq!(h.run("no-such-command-xyz").exit_code, Some(127));
    let r = h.run("printf foo");
    assert_eq!(shown(&h, &r), "foo");
    h.run("cd /tmp");
    assert_eq!(h.run("pwd").cwd, "/tmp");
    h.type_line("exit 7");
    assert_eq!(h.wait_exit(), 7);
    let last = h.records().pop().unwrap();
    assert_eq!(
        (last.command_line.as_str(), last.exit_code),
        ("exit 7", Some(7))
    );
    assert_eq!(h.meta().exit_status, Some(7));
}

/// The hooks run around the user's prompt: it sees the command's `$status` and `$pipestatus`
/// exactly, on the left and on the right.
#[test]
fn status_and_pipestatus_reach_the_users_prompts() {
    if !fish_or_skip() {
        return;
    }
    let config = r#"set -g fish_greeting
function fish_prompt; printf 'READY[%s|%s]> ' $status "$pipestatus"; end
function fish_right_prompt; printf 'R=%s|%s' $status "$pipestatus"; end
"#;
    let mut h = fish(config);
    let r = h.run("true | false | true");
    assert_eq!(r.exit_code, Some(0));
    h.wait_screen("READY[0|0 1 0]> ");
    h.wait_screen("R=0|0 1 0");
    let r = h.run("sh -c 'exit 5' | sh -c 'exit 3'");
    assert_eq!(r.exit_code, Some(3));
    h.wait_screen("READY[3|5 3]> ");
    h.wait_screen("R=3|5 3");
    // An empty line keeps them too.
    let prompts = h.screen().matches(PROMPT).count();
    h.send(b"\r");
    h.wait_prompts(prompts + 1);
    assert_eq!(h.screen().matches("READY[3|5 3]> ").count(), 2);
}

#[test]
fn command_lines_are_exact_including_multi_line() {
    if !fish_or_skip() {
        return;
    }
    let mut h = fish(PLAIN);
    for line in [
        "echo 'a;b' \"c\\\\d\" ünïcödé 字",
        "echo one; echo two",
        "echo tab\\t(printf 'x\\ty')",
    ] {
        let r = h.run(line);
        assert_eq!(r.command_line, line);
    }
    // An open block continues on the next line; so does a trailing backslash.
    h.type_line("for i in 1 2");
    h.type_line("echo n=$i");
    h.type_line("end");
    let r = h.wait_records(4).remove(3);
    assert_eq!(r.command_line, "for i in 1 2\necho n=$i\nend");
    assert_eq!(shown(&h, &r), "n=1\nn=2");
    h.wait_prompts(5);
    h.type_line("echo a \\");
    h.type_line("b");
    let r = h.wait_records(5).remove(4);
    assert_eq!(r.command_line, "echo a \\\nb");
    assert_eq!(shown(&h, &r), "a b");
}

#[test]
fn empty_enter_and_ctrl_c() {
    if !fish_or_skip() {
        return;
    }
    let mut h = fish(PLAIN);
    h.send(b"\r");
    h.wait_prompts(2);
    h.keys(b"half typed");
    h.send(b"\x03");
    // fish 3.6 draws a new prompt below the cancelled line.
    h.wait_prompts(3);
    let r = h.run("echo after");
    assert_eq!(r.command_line, "echo after");
    assert_eq!(h.records().len(), 1, "{:?}", h.records());
    h.type_line("sleep 30");
    h.wait_foreground("sleep");
    h.send(b"\x03");
    let r = h.wait_records(2).remove(1);
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        ("sleep 30", Some(130))
    );
}

/// A line starting with a space (fish keeps it out of history) is private; in `fish --private`
/// every line is.
#[test]
fn private_lines_and_private_mode() {
    if !fish_or_skip() {
        return;
    }
    let mut h = fish(PLAIN);
    let r = h.run(" echo secret-$(math 6 \\* 7)");
    assert!(r.private, "{r:?}");
    assert_eq!(r.command_line, "");
    let r = h.run("echo public");
    assert!(!r.private);
    let files = session_text(&h);
    assert!(!files.contains("secret-"), "{files}");
    assert!(files.contains("public"));

    let mut h = fish_args(&["--private"], PLAIN);
    let r = h.run("echo hidden-$(math 6 \\* 7)");
    assert!(r.private, "{r:?}");
    let files = session_text(&h);
    assert!(!files.contains("hidden-"), "{files}");
}

/// Every file of the session, as text.
fn session_text(h: &Harness) -> String {
    // Tolerates `meta.json`'s temporary file vanishing between the listing and the read.
    common::session_text(&h.session_dir())
}

#[test]
fn password_typed_with_echo_off_is_never_written() {
    if !fish_or_skip() {
        return;
    }
    let mut h = fish(PLAIN);
    // fish's own `read -s`, then a program that turns echo off itself.
    // (The prompts are built so that the echo of the typed line does not show them.)
    h.type_line("read -s -P 'p''w: ' pw; echo len=(string length -- $pw)");
    h.wait_screen("pw: ");
    h.wait_line_editor();
    h.send(b"hunter2-secret\r");
    let r = h.wait_records(1).remove(0);
    assert!(
        h.output_text(&r).contains("len=14"),
        "{}",
        h.output_text(&r)
    );
    h.wait_prompts(2);
    h.type_line("sh -c 'stty -echo; printf \"pw%s: \" 2; read p; stty echo; echo; echo len=${#p}'");
    h.wait_screen("pw2: ");
    h.wait_reading("sh");
    h.wait_until("echo off", || {
        !h.shell_terminal_modes()
            .contains(nix::sys::termios::LocalFlags::ECHO)
    });
    h.send(b"swordfish-2\r");
    let r = h.wait_records(2).remove(1);
    assert!(
        h.output_text(&r).contains("len=11"),
        "{}",
        h.output_text(&r)
    );
    let files = session_text(&h);
    assert!(!files.contains("hunter2"), "{files}");
    assert!(!files.contains("swordfish"), "{files}");
}

#[test]
fn login_interactive_and_no_config() {
    if !fish_or_skip() {
        return;
    }
    let config = format!("{PLAIN}set -g FROM_CONFIG yes\n");
    let mut h = fish_args(&["-l"], &config);
    let r = h.run("status is-login; and echo login-$FROM_CONFIG");
    assert_eq!(shown(&h, &r), "login-yes");
    let mut h = fish_args(&["--login", "-i"], &config);
    let r = h.run("status is-login; and echo login-$FROM_CONFIG");
    assert_eq!(shown(&h, &r), "login-yes");
    // --no-config: no config.fish (fish's default prompt), still recorded; fish then keeps no
    // history (it sets fish_private_mode), so every line is private.
    let mut h = start(&["fish", "--no-config"], &[(CONFIG, &config)]);
    h.wait_until("fish's own prompt", || h.screen().contains("~"));
    h.wait_line_editor();
    h.type_line("echo cfg=$FROM_CONFIG");
    let r = h.wait_records(1).remove(0);
    assert!(r.private && r.command_line.is_empty(), "{r:?}");
    h.type_line("set -e fish_private_mode; echo cfg=$FROM_CONFIG");
    let r = h.wait_records(2).remove(1);
    h.wait_line_editor();
    h.type_line("echo now-public");
    let r2 = h.wait_records(3).remove(2);
    assert!(r.private, "{r:?}");
    assert_eq!(r2.command_line, "echo now-public");
    assert_eq!(shown(&h, &r2), "now-public");
}

#[test]
fn a_command_string_or_script_is_one_command() {
    if !fish_or_skip() {
        return;
    }
    let mut h = start(&["fish", "-c", "echo one; echo two; exit 4"], &[]);
    assert_eq!(h.wait_exit(), 4);
    let recs = h.records();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].command_line, "echo one; echo two; exit 4");
    assert_eq!(recs[0].exit_code, Some(4));
}

/// fish 4 marks its own prompts (`133;A;click_events=1`, `133;C;cmdline_url=...`, `133;D;N`):
/// a prompt and handlers of the user's that print those stand in for it (only fish 3.6 is
/// installable here). They neither end nor start a record, and reach the terminal exactly once
/// each, while omnish's own marks never do.
#[test]
fn fish_4s_own_marks_neither_confuse_the_recorder_nor_reach_the_terminal_twice() {
    if !fish_or_skip() {
        return;
    }
    let config = r#"set -g fish_greeting
function fish_prompt; printf '\e]133;A;click_events=1\a'; printf 'READY> '; printf '\e]133;B\a'; end
function __f4_pre --on-event fish_preexec
    printf '\e]133;C;cmdline_url=%s\a' (string escape --style=url -- $argv)
end
function __f4_post --on-event fish_postexec; printf '\e]133;D;%s\a' $status; end
"#;
    let mut h = fish(config);
    let r = h.run("false");
    assert_eq!((r.command_line.as_str(), r.exit_code), ("false", Some(1)));
    // A mark printed by the command itself ends nothing.
    let r = h.run("echo x; printf '\\e]133;D;0\\a\\e]133;A\\a'; echo y; sh -c 'exit 4'");
    assert_eq!(r.exit_code, Some(4));
    assert_eq!(shown(&h, &r), "x\ny");
    let r = h.run("echo z");
    assert_eq!(shown(&h, &r), "z");
    assert_eq!(h.records().len(), 3);
    let screen = h.screen();
    let prompts = screen.matches(PROMPT).count();
    assert_eq!(
        screen.matches("\x1b]133;A;click_events=1\x07").count(),
        prompts
    );
    assert_eq!(screen.matches("\x1b]133;B\x07").count(), prompts);
    assert_eq!(screen.matches("\x1b]133;C;cmdline_url=").count(), 3);
    assert_eq!(
        screen
            .matches("\x1b]133;C;cmdline_url=echo%20z\x07")
            .count(),
        1
    );
    // fish's own D for each command, and the one `printf` printed.
    assert_eq!(screen.matches("\x1b]133;D;").count(), 4, "{screen:?}");
    assert!(!screen.contains("\x1b]633;"), "{screen:?}");
    assert!(!screen.contains("133;A\x07") || screen.matches("133;A\x07").count() == 1);
}

/// A prompt framework as fisher installs one (tide, hydro, pure: conf.d/ and functions/ files):
/// its own fish_prompt, fish_right_prompt and fish_mode_prompt (vi mode), a preexec handler
/// that prints, a postexec handler that keeps the duration for the prompt, a prompt handler
/// that prints, and an asynchronous part that repaints the prompt when a background job
/// signals it. No framework installs from a registry this machine reaches, so this is a
/// stand-in doing what they do to the prompt.
#[test]
fn a_prompt_framework_with_vi_mode_and_async_repaint() {
    if !fish_or_skip() {
        return;
    }
    let files = [
        (
            ".config/fish/conf.d/_fw_init.fish",
            r#"set -g fish_greeting
fish_vi_key_bindings
set -g _fw_async pending
function _fw_preexec --on-event fish_preexec
    set -g _fw_start (date +%s%N)
    echo fw-pre
end
function _fw_postexec --on-event fish_postexec
    set -g _fw_status $status
    set -g _fw_took took
end
function _fw_prompt_event --on-event fish_prompt
    echo fw-prompt-event
    set -g _fw_async pending
    command sh -c "sleep 0.3; kill -USR1 $fish_pid" &
    disown
end
function _fw_repaint --on-signal SIGUSR1
    set -g _fw_async ready
    commandline -f repaint
end
"#,
        ),
        (
            ".config/fish/functions/fish_prompt.fish",
            "function fish_prompt\n    printf 'READY:%s:%s:%s> ' $status \"$_fw_took\" $_fw_async\nend\n",
        ),
        (
            ".config/fish/functions/fish_right_prompt.fish",
            "function fish_right_prompt\n    printf 'RP%s' $status\nend\n",
        ),
        (
            ".config/fish/functions/fish_mode_prompt.fish",
            "function fish_mode_prompt\n    printf '[%s] ' $fish_bind_mode\nend\n",
        ),
    ];
    let mut h = start(&["fish"], &files);
    h.wait_screen("READY:0::ready> ");
    let r = h.run("sh -c 'echo out; exit 3'");
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        ("sh -c 'echo out; exit 3'", Some(3))
    );
    // The preexec handler printed before the output start; the prompt handler after the end.
    assert_eq!(shown(&h, &r), "out");
    h.wait_screen("READY:3:took:ready> ");
    h.wait_screen("RP3");
    // vi mode: Escape, then keys of the normal mode, then insert again.
    h.keys(b"echo vi-mod");
    h.keys(b"\x1b");
    h.wait_screen("[default] ");
    h.keys(b"ae");
    h.send(b"\r");
    let recs = h.wait_records(2);
    assert_eq!(recs[1].command_line, "echo vi-mode");
    assert_eq!(shown(&h, &recs[1]), "vi-mode");
    h.wait_until("the third prompt", || {
        h.screen().matches("fw-prompt-event").count() == 3
    });
}

/// The token is in no child's environment, even after the user exported every variable, nor
/// in a trace (`fish_trace`), nor anywhere omnish stores; markers a `cat` prints forge nothing.
#[test]
fn the_token_stays_out_of_children_and_the_store_and_forged_marks_forge_nothing() {
    if !fish_or_skip() {
        return;
    }
    let mut h = fish(PLAIN);
    // The token, as the shell has it: written to a file, the one way out.
    h.run("printf %s $__omnish_token > tok");
    let token = std::fs::read_to_string(h.home.path().join("tok")).unwrap();
    assert_eq!(token.len(), 32, "{token:?}");
    let r = h.run("env | grep -c -- $__omnish_token; true");
    assert_eq!(shown(&h, &r), "0");
    // Every variable exported: the hooks take the token back at the next prompt.
    h.run("for v in (set -n); set -gx $v $$v 2>/dev/null; end; true");
    let r = h.run("env | grep -c -- $__omnish_token; true");
    assert_eq!(shown(&h, &r), "0");
    let r = h.run("set fish_trace 1; echo traced; set -e fish_trace");
    assert!(shown(&h, &r).contains("traced"));
    h.run("set");
    // Forged markers with a wrong token and with none.
    let forged = format!(
        "\x1b]133;{t};C\x07\x1b]633;{t};E;rm -rf /\x07\x1b]133;{t};D;0\x07\x1b]133;D;0\x07\x1b]133;A\x07forged-end\n",
        t = "0".repeat(32)
    );
    std::fs::write(h.home.path().join("forged"), forged).unwrap();
    let r = h.run("cat forged; false");
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        ("cat forged; false", Some(1))
    );
    assert!(shown(&h, &r).contains("forged-end"));
    let recs = h.records();
    assert!(recs.iter().all(|r| !r.command_line.contains("rm -rf")));
    let stored = session_text(&h);
    // `set` and fish_trace showed it on the terminal (the user asked for them): never stored.
    assert!(h.screen().contains(&token));
    assert!(!stored.contains(&token), "the token reached the store");
}

/// The startup files of all three shells, each with the test prompt.
const ALL_RC: &[(&str, &str)] = &[
    (".bashrc", "PS1='READY> '\n"),
    (".zshrc", "PROMPT='READY> '\n"),
    (CONFIG, PLAIN),
];

/// In a recorded `outer`, `exec inner` replaces the shell with one that is hooked again: the
/// exec's record ends at the new shell's first prompt, the next lines are records, and the
/// variables that handed it the hooks are gone.
fn exec_session(outer: &str, inner: &str) {
    if !(fish_or_skip() && require("zsh")) {
        return;
    }
    let mut h = start(&[outer], ALL_RC);
    h.wait_prompts(1);
    h.run("echo before");
    let exec = h.run(&format!("exec {inner}"));
    assert_eq!(exec.exit_code, Some(0), "{exec:?}");
    let r = h.run("echo after-exec");
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        ("echo after-exec", Some(0))
    );
    assert_eq!(shown(&h, &r), "after-exec");
    let r = h.run("echo \"[$XDG_DATA_DIRS|$ENV|$ZDOTDIR|$POSIXLY_CORRECT]\"");
    assert_eq!(shown(&h, &r), "[|||]");
    assert_eq!(h.run("false").exit_code, Some(1));
    h.type_line("exit 5");
    assert_eq!(h.wait_exit(), 5);
}

#[test]
fn exec_fish_from_fish_bash_and_zsh_is_hooked_again() {
    exec_session("fish", "fish");
    exec_session("bash", "fish");
    exec_session("zsh", "fish");
}

#[test]
fn exec_bash_and_zsh_from_fish_are_hooked_again() {
    exec_session("fish", "bash");
    exec_session("fish", "zsh");
}

fn find<'a>(
    recs: &'a [omnish::store::CommandRecord],
    line: &str,
) -> &'a omnish::store::CommandRecord {
    recs.iter()
        .rev()
        .find(|r| r.command_line == line)
        .unwrap_or_else(|| panic!("no record of {line:?} in {recs:#?}"))
}

/// Types `inner` (a shell) in the recorded `outer`, runs a few commands in it, leaves it with
/// `exit 3`, and checks every record (as tests/nest.rs does for bash and zsh).
fn nested_session(outer: &str, inner: &str) {
    if !(fish_or_skip() && require("zsh")) {
        return;
    }
    let mut h = start(&[outer], ALL_RC);
    h.wait_prompts(1);
    h.run("echo outer-before");
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line(inner);
    h.wait_prompts(prompts + 1);
    h.wait_until("the nested shell in meta.json", || h.meta().nest.len() == 1);
    let nest = h.meta().nest;
    assert_eq!(nest[0].depth, 1);
    assert_eq!(nest[0].parent.command_line, inner);
    assert_eq!(nest[0].shell, inner.split(' ').next().unwrap());
    let echo = h.run("echo inner-42");
    let fail = h.run("false");
    let cd = h.run("cd /tmp");
    let pwd = h.run("pwd");
    let private = h.run(" echo inner-private");
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line("exit 3");
    h.wait_prompts(prompts + 1);
    let after = h.run("echo outer-after");
    let recs = h.records();
    let started = find(&recs, inner);
    assert_eq!(started.exit_code, Some(3), "{started:?}");
    assert_eq!((started.depth, started.nested_in.as_deref()), (0, None));
    for (r, code) in [(&echo, 0), (&fail, 1), (&cd, 0), (&pwd, 0)] {
        assert_eq!(r.exit_code, Some(code), "{r:?}");
        assert_eq!(r.depth, 1, "{r:?}");
        assert_eq!(r.nested_in.as_deref(), Some(started.command_id.as_str()));
    }
    assert_eq!(shown(&h, &echo), "inner-42");
    assert_eq!(shown(&h, &pwd), "/tmp");
    assert_eq!(pwd.cwd, "/tmp");
    // The private line of a shell that keeps such lines out of its history (fish always; bash
    // and zsh here do not).
    if inner.starts_with("fish") {
        assert!(
            private.private && private.command_line.is_empty(),
            "{private:?}"
        );
    }
    let outer_out = shown(&h, started);
    assert!(
        !outer_out
            .lines()
            .any(|l| l.trim_end() == "inner-42" || l.trim_end() == "/tmp"),
        "{outer_out:?}"
    );
    assert_eq!((after.depth, after.exit_code), (0, Some(0)));
    assert_eq!(shown(&h, &after), "outer-after");
    assert!(h.meta().nest.is_empty());
    let r = h.run("echo \"[$XDG_DATA_DIRS|$ENV|$ZDOTDIR]\"");
    assert_eq!(shown(&h, &r), "[||]");
}

#[test]
fn fish_nested_in_bash_zsh_and_fish_records_each_inner_command() {
    nested_session("bash", "fish");
    nested_session("zsh", "fish -l");
    nested_session("fish", "fish");
}

#[test]
fn bash_and_zsh_nested_in_fish_record_each_inner_command() {
    nested_session("fish", "bash");
    nested_session("fish", "zsh");
}

/// bash can hand fish its hooks only through an unset XDG_DATA_DIRS (PS0 assigns nothing
/// else): when it is set, one line says so and fish runs as it would without omnish.
#[test]
fn exec_fish_from_bash_with_xdg_data_dirs_set_says_why_in_one_line() {
    if !fish_or_skip() {
        return;
    }
    let rc = [
        (
            ".bashrc",
            "PS1='READY> '\nexport XDG_DATA_DIRS=/usr/local/share:/usr/share\n",
        ),
        (CONFIG, PLAIN),
    ];
    let mut h = start(&["bash"], &rc);
    h.wait_prompts(1);
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line("exec fish");
    h.wait_screen("omnish: fish will not be recorded command by command (XDG_DATA_DIRS is set)");
    h.wait_prompts(prompts + 1);
    h.wait_line_editor();
    h.type_line("echo still-here; exit 6");
    assert_eq!(h.wait_exit(), 6);
    let recs = h.records();
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0].exit_code, Some(6));
    assert!(shown(&h, &recs[0]).contains("still-here"));
}

/// `poetry shell` and `nix-shell` typed in a recorded fish (issue 16): poetry starts a fish
/// (`fish -i --init-command 'source …/activate.fish'`), nix a bash with its rcfile; each is
/// hooked, its commands records nested in the program's, the program's status the inner one's.
#[test]
fn poetry_shell_and_nix_shell_in_fish_record_each_inner_command() {
    if !(fish_or_skip() && require("poetry")) {
        return;
    }
    let (_bin, env) = starters::bin_dir();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut files = ALL_RC.to_vec();
    files.push(("proj/pyproject.toml", starters::PYPROJECT));
    files.push(NO_GENERATED);
    let mut h = Harness::start_with(&["fish"], &files, &env);
    h.wait_prompts(1);
    h.run("cd proj");
    for (line, inner, probe, want) in [
        ("poetry shell", "fish", "basename $VIRTUAL_ENV", ".venv"),
        ("nix-shell", "bash", "echo $IN_NIX_SHELL", "impure"),
    ] {
        let prompts = h.screen().matches(PROMPT).count();
        h.type_line(line);
        h.wait_until("the nested shell in meta.json", || h.meta().nest.len() == 1);
        assert_eq!(h.meta().nest[0].shell, inner);
        h.wait_prompts(prompts + 1);
        let echo = h.run("echo inner-42");
        let probe = h.run(probe);
        let prompts = h.screen().matches(PROMPT).count();
        h.type_line("exit 3");
        h.wait_prompts(prompts + 1);
        h.wait_until("the program's record", || {
            h.records().iter().any(|r| r.command_line == line)
        });
        let recs = h.records();
        let started = find(&recs, line);
        assert_eq!(
            (started.exit_code, started.depth),
            (Some(3), 0),
            "{started:?}"
        );
        for r in [&echo, &probe] {
            assert_eq!((r.exit_code, r.depth), (Some(0), 1), "{r:?}");
            assert_eq!(r.nested_in.as_deref(), Some(started.command_id.as_str()));
        }
        assert_eq!(shown(&h, &echo), "inner-42");
        assert_eq!(shown(&h, &probe), want);
        assert!(h.meta().nest.is_empty());
    }
}
