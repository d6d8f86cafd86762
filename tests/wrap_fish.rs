//! `omnish wrap fish`: real fish in a real pseudo-terminal, typed at as a person would; the same
//! scenarios as the bash and zsh suites, and fish's own: `$status` and `$pipestatus` intact for
//! the user's prompt, private mode, a real prompt framework (starship), fish 4's own OSC 133
//! marks. Each scenario is written once and takes the fish it runs in (common/fish.rs): every one
//! runs in Debian's fish 3.6 (module `fish3`), those where fish 4 behaves differently in fish 4.0
//! too (module `fish4`; the list there says why each is in it).

mod common;

use common::fish::{Fish, NO_GENERATED, in_fish};
use common::*;

const CONFIG: &str = ".config/fish/config.fish";
const PLAIN: &str = "set -g fish_greeting\nfunction fish_prompt; printf 'READY> '; end\n";

/// A record's output as the terminal showed it: fish sets the terminal's title and resets its
/// colours after the preexec event, so those sequences start every command's bytes.
fn shown(h: &Harness, r: &omnish::store::CommandRecord) -> String {
    omnish::term::render::render(&h.output(r), 80, 24).join("\n")
}

/// `omnish wrap ARGV` with HOME holding `files`, and fish's generated completions in place, `f`
/// the `fish` on PATH.
fn start(f: Fish, argv: &[&str], files: &[(&str, &str)]) -> Harness {
    let mut all = files.to_vec();
    all.extend_from_slice(NO_GENERATED);
    Harness::start_with(argv, &all, &[("PATH", &f.path())])
}

fn fish(f: Fish, config: &str) -> Harness {
    fish_args(f, &[], config)
}

fn fish_args(f: Fish, args: &[&str], config: &str) -> Harness {
    let mut argv = vec!["fish"];
    argv.extend_from_slice(args);
    let h = start(f, &argv, &[(CONFIG, config)]);
    h.wait_prompts(1);
    h
}

fn records_commands_with_output_status_and_cwd(f: Fish) {
    if !f.available() {
        return;
    }
    let mut h = fish(f, PLAIN);
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
fn status_and_pipestatus_reach_the_users_prompts(f: Fish) {
    if !f.available() {
        return;
    }
    let config = r#"set -g fish_greeting
function fish_prompt; printf 'READY[%s|%s]> ' $status "$pipestatus"; end
function fish_right_prompt; printf 'R=%s|%s' $status "$pipestatus"; end
"#;
    let mut h = fish(f, config);
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

fn command_lines_are_exact_including_multi_line(f: Fish) {
    if !f.available() {
        return;
    }
    let mut h = fish(f, PLAIN);
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

fn empty_enter_and_ctrl_c(f: Fish) {
    if !f.available() {
        return;
    }
    let mut h = fish(f, PLAIN);
    h.send(b"\r");
    h.wait_prompts(2);
    h.keys(b"half typed");
    h.wait_until("the keys echoed", || {
        let screen = omnish::term::render::render(h.screen().as_bytes(), 80, 24);
        screen.iter().any(|l| l.trim_end() == "READY> half typed")
    });
    // fish leaves ISIG on at its prompt: the Ctrl-C below is SIGINT, which fish takes only in
    // its wait for keys. After the echo it still repaints and takes its workers' highlighting
    // and autosuggestion; a SIGINT meanwhile stays unseen, and the line with it (the line then
    // ran with the next one, in CI under load).
    h.wait_reader_idle();
    if f.major() == 3 {
        // fish 3.6 draws a new prompt below the cancelled line.
        h.send(b"\x03");
        h.wait_prompts(3);
    } else {
        // fish 4 clears the line (its Ctrl-C binding, clear-commandline), the prompt stays.
        h.send(b"\x03");
        h.wait_until("the line cleared", || {
            let screen = omnish::term::render::render(h.screen().as_bytes(), 80, 24);
            screen
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim_end())
                == Some("READY>")
        });
    }
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

/// A line starting with a space (fish keeps it out of history) is private, and so is a line the
/// user's `fish_should_add_to_history` refuses (fish 4 asks it; omnish asks it in fish 3.6 too);
/// in `fish --private` every line is.
fn private_lines_and_private_mode(f: Fish) {
    if !f.available() {
        return;
    }
    let config = format!(
        "{PLAIN}function fish_should_add_to_history; not string match -q -- '*tok3n*' $argv; end\n"
    );
    let mut h = fish(f, &config);
    let r = h.run(" echo secret-$(math 6 \\* 7)");
    assert!(r.private, "{r:?}");
    assert_eq!(r.command_line, "");
    let r = h.run("echo public");
    assert!(!r.private);
    let r = h.run("echo tok3n-$(math 6 \\* 7)");
    assert!(r.private && r.command_line.is_empty(), "{r:?}");
    let r = h.run(
        "history search --prefix 'echo tok' | count; history search --prefix 'echo public' | count",
    );
    assert!(!r.private);
    if f.major() == 4 {
        // fish 4 itself kept it out of its history.
        assert_eq!(shown(&h, &r), "0\n1");
    }
    let files = session_text(&h);
    assert!(!files.contains("secret-"), "{files}");
    assert!(!files.contains("tok3n-42"), "{files}");
    assert!(files.contains("public"));

    let mut h = fish_args(f, &["--private"], PLAIN);
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

fn password_typed_with_echo_off_is_never_written(f: Fish) {
    if !f.available() {
        return;
    }
    let mut h = fish(f, PLAIN);
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

fn login_interactive_and_no_config(f: Fish) {
    if !f.available() {
        return;
    }
    let config = format!("{PLAIN}set -g FROM_CONFIG yes\n");
    let mut h = fish_args(f, &["-l"], &config);
    let r = h.run("status is-login; and echo login-$FROM_CONFIG");
    assert_eq!(shown(&h, &r), "login-yes");
    let mut h = fish_args(f, &["--login", "-i"], &config);
    let r = h.run("status is-login; and echo login-$FROM_CONFIG");
    assert_eq!(shown(&h, &r), "login-yes");
    // --no-config: no config.fish (fish's default prompt), still recorded; fish then keeps no
    // history (it sets fish_private_mode), so every line is private.
    let mut h = start(f, &["fish", "--no-config"], &[(CONFIG, &config)]);
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

fn a_command_string_or_script_is_one_command(f: Fish) {
    if !f.available() {
        return;
    }
    let mut h = start(f, &["fish", "-c", "echo one; echo two; exit 4"], &[]);
    assert_eq!(h.wait_exit(), 4);
    let recs = h.records();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].command_line, "echo one; echo two; exit 4");
    assert_eq!(recs[0].exit_code, Some(4));
}

/// fish 4 marks its own prompts (`133;A;special_key=1` in 4.0, `133;C;cmdline_url=...`,
/// `133;D;N`). In fish 4 those are its own; in fish 3.6 a prompt and handlers of the user's
/// that print the same stand in for them. They neither end nor start a record, and reach the
/// terminal exactly once each, while omnish's own marks never do.
fn fish_4s_own_marks_neither_confuse_the_recorder_nor_reach_the_terminal_twice(f: Fish) {
    if !f.available() {
        return;
    }
    let stand_in = r#"set -g fish_greeting
function fish_prompt; printf '\e]133;A;special_key=1\a'; printf 'READY> '; end
function __f4_pre --on-event fish_preexec
    printf '\e]133;C;cmdline_url=%s\a' (string escape --style=url -- $argv)
end
function __f4_post --on-event fish_postexec; printf '\e]133;D;%s\a' $status; end
"#;
    let config = if f.major() == 3 { stand_in } else { PLAIN };
    let mut h = fish(f, config);
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
        screen.matches("\x1b]133;A;special_key=1\x07").count(),
        prompts,
        "{screen:?}"
    );
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

/// Lines typed while a command runs, which the command reads itself: at its end nothing waits
/// for the shell (the hook asks `bash -c 'read -t 0'`, which reads nothing), so their echo is
/// the command's output and stays in its record; a line typed ahead of the shell still runs as
/// its own record.
fn lines_a_command_read_stay_in_its_output(f: Fish) {
    if !(f.available() && require("bash")) {
        return;
    }
    let mut h = fish(f, PLAIN);
    // (Running 300 ms at least: the hook asks only after a command that ran 200 ms.)
    h.type_line("sh -c 'sleep 0.3; read a; read b; echo got=$a,$b'");
    h.wait_reading("sh");
    h.type_line("one");
    h.wait_screen("one\r\n");
    h.wait_reading("sh");
    h.type_line("two");
    let r = h.wait_records(1).remove(0);
    assert_eq!(r.exit_code, Some(0));
    assert_eq!(shown(&h, &r), "one\ntwo\ngot=one,two");
    h.wait_prompts(2);
    // Lines typed ahead while `sleep` runs are the shell's: records of their own, and the echo
    // of a private one is nowhere on disk.
    h.type_line("sleep 1");
    h.wait_foreground("sleep");
    h.type_line(" echo SECRET-ahead-7");
    h.type_line("echo ahead");
    let recs = h.wait_records(4);
    let lines: Vec<&str> = recs.iter().map(|r| r.command_line.as_str()).collect();
    assert_eq!(lines[1..], ["sleep 1", "", "echo ahead"]);
    assert!(recs[2].private, "{:?}", recs[2]);
    assert_eq!(shown(&h, &recs[3]), "ahead");
    h.wait_prompts(5);
    let files = session_text(&h);
    assert!(!files.contains("SECRET-ahead"), "{files}");
}

/// The screen as the terminal shows it, its lines without trailing blanks.
fn rendered(h: &Harness) -> Vec<String> {
    omnish::term::render::render(h.screen().as_bytes(), 80, 24)
        .into_iter()
        .map(|l| l.trim_end().to_string())
        .collect()
}

/// starship's configuration for the test: its prompt shows the cwd, the status and
/// `$pipestatus` (starship's own modules, fed by its fish init), the vi mode, and READY.
const STARSHIP_TOML: &str = r#"add_newline = false
command_timeout = 10000
format = "$directory$status$character"
[directory]
format = "in:$path "
[status]
disabled = false
pipestatus = true
format = "st=$status "
pipestatus_format = "ps=$pipestatus st=$status "
pipestatus_segment_format = "$status"
pipestatus_separator = "|"
[character]
success_symbol = "READY>"
error_symbol = "READY!"
vimcmd_symbol = "READY:N>"
"#;

/// A real prompt framework, installed as starship's users install it: `starship init fish |
/// source` at the end of config.fish (here with vi keys). Commands are recorded exactly, with
/// their status; starship's prompt shows the status and `$pipestatus` the hooks left intact,
/// the cwd and the vi mode; no mark of omnish's reaches the terminal, and the only OSC 133
/// marks there are fish 4's own.
fn starship_prompt_installed_as_its_users_do(f: Fish) {
    if !(f.available() && require("starship")) {
        return;
    }
    let files = [
        (".config/starship.toml", STARSHIP_TOML),
        (
            CONFIG,
            "set -g fish_greeting\nfish_vi_key_bindings\nstarship init fish | source\n",
        ),
    ];
    let mut h = start(f, &["fish"], &files);
    h.wait_until("starship's prompt", || {
        rendered(&h).iter().any(|l| l == "in:~ READY>")
    });
    let line = "sh -c 'exit 5' | sh -c 'exit 3'";
    let r = h.run(line);
    assert_eq!((r.command_line.as_str(), r.exit_code), (line, Some(3)));
    assert_eq!(shown(&h, &r), "");
    h.wait_until("starship's prompt with the statuses", || {
        rendered(&h).iter().any(|l| l == "in:~ ps=5|3 st=3 READY!")
    });
    let r = h.run("cd /tmp; echo star-out");
    assert_eq!(r.exit_code, Some(0));
    assert_eq!(shown(&h, &r), "star-out");
    h.wait_until("starship's prompt in /tmp", || {
        rendered(&h).iter().any(|l| l == "in:/tmp READY>")
    });
    // vi mode: Escape, the normal mode's prompt, then `a` appends.
    h.keys(b"echo vi-mod");
    h.keys(b"\x1b");
    h.wait_until("starship's normal-mode prompt", || {
        rendered(&h)
            .iter()
            .any(|l| l == "in:/tmp READY:N> echo vi-mod")
    });
    h.keys(b"ae");
    h.send(b"\r");
    let recs = h.wait_records(3);
    assert_eq!(recs[2].command_line, "echo vi-mode");
    assert_eq!(shown(&h, &recs[2]), "vi-mode");
    h.wait_until("the prompt after it", || {
        rendered(&h).last().is_some_and(|l| l == "in:/tmp READY>")
    });
    assert_eq!(h.records().len(), 3);
    let screen = h.screen();
    assert!(!screen.contains("\x1b]633;"), "{screen:?}");
    for (i, _) in screen.match_indices("\x1b]133;") {
        let mark = &screen[i + 6..];
        assert!(
            f.major() == 4
                && ["A;special_key=1\x07", "C;cmdline_url=", "D;"]
                    .iter()
                    .any(|m| mark.starts_with(m)),
            "a stray mark: {:?}",
            &screen[i..(i + 40).min(screen.len())]
        );
    }
}

/// A prompt framework as fisher installs one (tide, hydro, pure: conf.d/ and functions/ files):
/// its own fish_prompt, fish_right_prompt and fish_mode_prompt (vi mode), a preexec handler
/// that prints, a postexec handler that keeps the duration for the prompt, a prompt handler
/// that prints, and an asynchronous part that repaints the prompt when a background job
/// signals it. fisher and its plugins install from GitHub, which this machine does not reach:
/// this is a stand-in doing what they do to the prompt, beside starship, the real framework
/// (above), which has no asynchronous part.
fn a_prompt_framework_with_vi_mode_and_async_repaint(f: Fish) {
    if !f.available() {
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
    let mut h = start(f, &["fish"], &files);
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
fn the_token_stays_out_of_children_and_the_store_and_forged_marks_forge_nothing(f: Fish) {
    if !f.available() {
        return;
    }
    let mut h = fish(f, PLAIN);
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
fn exec_session(f: Fish, outer: &str, inner: &str) {
    if !(f.available() && require("zsh")) {
        return;
    }
    let mut h = start(f, &[outer], ALL_RC);
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

fn exec_fish_from_fish_bash_and_zsh_is_hooked_again(f: Fish) {
    exec_session(f, "fish", "fish");
    exec_session(f, "bash", "fish");
    exec_session(f, "zsh", "fish");
}

fn exec_bash_and_zsh_from_fish_are_hooked_again(f: Fish) {
    exec_session(f, "fish", "bash");
    exec_session(f, "fish", "zsh");
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
fn nested_session(f: Fish, outer: &str, inner: &str) {
    if !(f.available() && require("zsh")) {
        return;
    }
    let mut h = start(f, &[outer], ALL_RC);
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

fn fish_nested_in_bash_zsh_and_fish_records_each_inner_command(f: Fish) {
    nested_session(f, "bash", "fish");
    nested_session(f, "zsh", "fish -l");
    nested_session(f, "fish", "fish");
}

fn bash_and_zsh_nested_in_fish_record_each_inner_command(f: Fish) {
    nested_session(f, "fish", "bash");
    nested_session(f, "fish", "zsh");
}

/// bash can hand fish its hooks only through an unset XDG_DATA_DIRS (PS0 assigns nothing
/// else): when it is set, one line says so and fish runs as it would without omnish.
fn exec_fish_from_bash_with_xdg_data_dirs_set_says_why_in_one_line(f: Fish) {
    if !f.available() {
        return;
    }
    let rc = [
        (
            ".bashrc",
            "PS1='READY> '\nexport XDG_DATA_DIRS=/usr/local/share:/usr/share\n",
        ),
        (CONFIG, PLAIN),
    ];
    let mut h = start(f, &["bash"], &rc);
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
fn poetry_shell_and_nix_shell_in_fish_record_each_inner_command(f: Fish) {
    if !(f.available() && require("poetry")) {
        return;
    }
    let (_bin, env) = starters::bin_dir();
    // (Run in fish 3.6 only: fish 4 would add nothing poetry does not do in it.)
    assert_eq!(f, Fish::V3);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut files = ALL_RC.to_vec();
    files.push(("proj/pyproject.toml", starters::PYPROJECT));
    files.extend_from_slice(NO_GENERATED);
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

/// Every scenario, in Debian's fish 3.6.
mod fish3 {
    use super::*;
    in_fish!(V3:
        records_commands_with_output_status_and_cwd,
        status_and_pipestatus_reach_the_users_prompts,
        command_lines_are_exact_including_multi_line,
        empty_enter_and_ctrl_c,
        private_lines_and_private_mode,
        password_typed_with_echo_off_is_never_written,
        login_interactive_and_no_config,
        a_command_string_or_script_is_one_command,
        lines_a_command_read_stay_in_its_output,
        fish_4s_own_marks_neither_confuse_the_recorder_nor_reach_the_terminal_twice,
        starship_prompt_installed_as_its_users_do,
        a_prompt_framework_with_vi_mode_and_async_repaint,
        the_token_stays_out_of_children_and_the_store_and_forged_marks_forge_nothing,
        exec_fish_from_fish_bash_and_zsh_is_hooked_again,
        exec_bash_and_zsh_from_fish_are_hooked_again,
        fish_nested_in_bash_zsh_and_fish_records_each_inner_command,
        bash_and_zsh_nested_in_fish_record_each_inner_command,
        exec_fish_from_bash_with_xdg_data_dirs_set_says_why_in_one_line,
        poetry_shell_and_nix_shell_in_fish_record_each_inner_command,
    );
}

/// The scenarios where fish 4 differs from 3.6, in fish 4.0: its line editor and terminal
/// handling were rewritten (Rust; kitty keyboard protocol, bracketed paste and its own OSC 133
/// marks around every prompt and command), Ctrl-C clears the line instead of drawing a new
/// prompt, it asks `fish_should_add_to_history`, and it starts nested and replacing fish
/// from its own data directory. Left to fish 3.6 only: a command string (no line editor),
/// `--login`/`--no-config` (the same startup code), the token and forged marks (the hooks'
/// code, not fish's), the stand-in framework's async repaint, poetry and nix, and bash or zsh
/// nested in fish (their hooks, not fish's).
mod fish4 {
    use super::*;
    in_fish!(V4:
        records_commands_with_output_status_and_cwd,
        status_and_pipestatus_reach_the_users_prompts,
        command_lines_are_exact_including_multi_line,
        empty_enter_and_ctrl_c,
        private_lines_and_private_mode,
        password_typed_with_echo_off_is_never_written,
        lines_a_command_read_stay_in_its_output,
        fish_4s_own_marks_neither_confuse_the_recorder_nor_reach_the_terminal_twice,
        starship_prompt_installed_as_its_users_do,
        exec_fish_from_fish_bash_and_zsh_is_hooked_again,
        fish_nested_in_bash_zsh_and_fish_records_each_inner_command,
    );
}
