//! `omnish init`: the printed scripts pass `bash -n`, `zsh -n` and shellcheck; the default keys
//! shadow nothing in plain bash and zsh; the keys pressed in real bash and zsh under tmux show
//! the answer and put `fix`'s command on the line, and are never recorded; `--wrap` starts a
//! recorded shell only where it should.

mod common;
#[path = "common/tmux.rs"]
mod tmux;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use tmux::Tmux;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn skip_without(tools: &[&str]) -> bool {
    !tools.iter().all(|t| require(t))
}

fn init(args: &[&str]) -> String {
    let out = Command::new(omnish_bin())
        .arg("init")
        .args(args)
        .env("OMNISH_CONFIG", "/dev/null")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// Runs `program args` with `input` on stdin; its output and status.
fn check(program: &str, args: &[&str], input: &str) -> (bool, String) {
    let mut cmd = Command::new(program);
    cmd.args(args);
    let out = run_piped(cmd, input);
    (
        out.status.success(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

#[test]
fn printed_scripts_pass_bash_n_zsh_n_and_shellcheck() {
    if skip_without(&["zsh", "shellcheck"]) {
        return;
    }
    for extra in [
        &[][..],
        &["--wrap"][..],
        &["--ask-key", r"\eq", "--fix-key", r"\C-g"][..],
    ] {
        let mut args = vec!["bash"];
        args.extend_from_slice(extra);
        let bash = init(&args);
        assert!(bash.contains("bind -m emacs -x"), "{bash}");
        let (ok, msg) = check("bash", &["-n"], &bash);
        assert!(ok, "bash -n: {msg}");
        let (ok, msg) = check("shellcheck", &["-"], &bash);
        assert!(ok, "shellcheck: {msg}");
        args[0] = "zsh";
        let zsh = init(&args);
        assert!(zsh.contains("bindkey -M viins"), "{zsh}");
        let (ok, msg) = check("zsh", &["-n"], &zsh);
        assert!(ok, "zsh -n: {msg}");
    }
    // Keys that would break the quoting are refused.
    let out = Command::new(omnish_bin())
        .args(["init", "bash", "--ask-key", "\\C-x\"a"])
        .env("OMNISH_CONFIG", "/dev/null")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Bindings (`"key": what`) of a fresh, plain shell's keymaps, one per line.
fn plain_bash_bindings(home: &Path) -> String {
    shell_stdout(
        "bash",
        &[
            "--norc",
            "--noprofile",
            "-i",
            "-c",
            "bind -p; bind -s; bind -X",
        ],
        home,
    )
}

fn zsh_bindings(home: &Path, keymap: &str, rc: &str) -> String {
    shell_stdout(
        "zsh",
        &["-f", "-i", "-c", &format!("{rc}\nbindkey -M {keymap}")],
        home,
    )
}

/// The stdout of `shell ARGS` in a clean environment with `home` as HOME, on no terminal.
fn shell_stdout(shell: &str, args: &[&str], home: &Path) -> String {
    let out = Command::new(shell)
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("TERM", "xterm-256color")
        .env("PATH", std::env::var("PATH").unwrap())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    text(&out.stdout)
}

#[test]
fn default_keys_shadow_nothing_in_plain_bash_and_zsh() {
    if skip_without(&["zsh"]) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let bash = plain_bash_bindings(home.path());
    assert!(
        bash.contains("\"\\C-x\\C-e\": edit-and-execute-command"),
        "{bash}"
    );
    // Neither key nor its \C-x prefix alone is bound to anything.
    for key in [
        r#""\C-xa""#,
        r#""\C-xf""#,
        r#""\C-xp""#,
        r#""\C-xk""#,
        r#""\C-x""#,
    ] {
        assert!(
            !bash.lines().any(|l| l.starts_with(key)),
            "{key} is bound in plain bash:\n{bash}"
        );
    }
    for keymap in ["emacs", "viins"] {
        let zsh = zsh_bindings(home.path(), keymap, "");
        assert!(zsh.lines().count() > 20, "{zsh}");
        for key in [r#""^Xa""#, r#""^Xf""#, r#""^Xp""#, r#""^Xk""#, r#""^X" "#] {
            assert!(
                !zsh.lines().any(|l| l.starts_with(key)),
                "{key} is bound in zsh {keymap}:\n{zsh}"
            );
        }
        // And after init, they are ours.
        let rc = format!("eval \"$({} init zsh)\"", omnish_bin());
        let zsh = zsh_bindings(home.path(), keymap, &rc);
        assert!(zsh.contains("\"^Xa\" __omnish_ask_widget"), "{zsh}");
        assert!(zsh.contains("\"^Xf\" __omnish_fix_widget"), "{zsh}");
        assert!(zsh.contains("\"^Xp\" __omnish_pause_widget"), "{zsh}");
        assert!(zsh.contains("\"^Xk\" __omnish_pick_widget"), "{zsh}");
    }
}

/// The stand-in LLM: keeps the prompt, answers `ask` in two lines; for `fix` (the prompt asks
/// for a fenced block) a fenced command; sleeps first when `$HOME/slow` exists.
fn stand_in(home: &Path) -> String {
    let path = home.join("llm-stand-in");
    std::fs::write(
        &path,
        "#!/bin/sh\ncat > \"$HOME/prompt.txt\"\n\
         if [ -e \"$HOME/slow\" ]; then echo SLOW-START; sleep 30; echo SLOW-END; exit 0; fi\n\
         if grep -q 'fenced code block' \"$HOME/prompt.txt\"; then\n\
           printf 'Use:\\n```sh\\necho fixed-by-omnish\\n```\\n'\n\
         else\n\
           echo ANSWER-FIRST-LINE; echo ANSWER-SECOND-LINE\n\
         fi\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// The line of a startup file that makes `shell` wrap itself: `eval "$(omnish init SHELL --wrap)"`.
fn wrap_line(shell: &str) -> String {
    format!("eval \"$({} init {shell} --wrap)\"\n", omnish_bin())
}

/// Presses the keys in a shell started by `init --wrap` and checks the screen and the records.
fn keys_in_a_wrapped_shell(shell: &str) {
    if skip_without(&["tmux", shell]) {
        return;
    }
    let rc = wrap_line(shell);
    let home = match shell {
        "bash" => home_with(&[(".bashrc", &format!("PS1='READY> '\n{rc}"))]),
        _ => home_with(&[(".zshrc", &format!("PROMPT='READY> '\n{rc}"))]),
    };
    let h = home.path();
    let data = h.join("data");
    let llm = stand_in(h);
    let t = Tmux::start(
        h,
        &[
            ("OMNISH_DATA_DIR", data.display().to_string()),
            ("OMNISH_ASK_COMMAND", llm),
        ],
        &format!("{shell} -i"),
    );
    t.wait("the prompt", |s| s.contains("READY>"));
    t.type_text("ls /no-such-dir-omnish");
    t.keys(&["Enter"]);
    wait_records_in(&data, 1);
    t.wait("the second prompt", |s| s.matches("READY>").count() >= 2);

    // Ask, with a line being edited: the answer below, then the prompt and the line intact.
    t.type_text("echo half-typed");
    t.wait("the typed text", |s| s.contains("READY> echo half-typed"));
    t.keys(&["C-x", "a"]);
    let s = t.wait("the answer and the prompt after it", |s| {
        s.contains("ANSWER-SECOND-LINE")
            && s.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.trim_end() == "READY> echo half-typed")
    });
    let prompt = std::fs::read_to_string(h.join("prompt.txt")).unwrap();
    assert!(prompt.contains("$ ls /no-such-dir-omnish"), "{prompt}");
    assert!(
        s.find("ANSWER-FIRST-LINE") < s.find("ANSWER-SECOND-LINE"),
        "{s}"
    );

    // Fix: the command replaces the line and does not run (had it run, the records below
    // would hold it twice: they are checked whole, once the next command's record is in).
    t.keys(&["C-x", "f"]);
    t.wait("fix's command on the line", |_| {
        t.last_line().trim_end() == "READY> echo fixed-by-omnish"
    });
    assert!(
        !t.screen().lines().any(|l| l.trim() == "fixed-by-omnish"),
        "{}",
        t.screen()
    );

    // Enter runs it like a typed command; the next command is recorded exactly.
    t.keys(&["Enter"]);
    wait_records_in(&data, 2);
    t.type_text("echo after-keys");
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 3);
    let lines: Vec<&str> = recs.iter().map(|r| r.command_line.as_str()).collect();
    assert_eq!(
        lines,
        [
            "ls /no-such-dir-omnish",
            "echo fixed-by-omnish",
            "echo after-keys"
        ]
    );
    if shell == "bash" {
        // bash's hooks take the line from `history 1` only when it went into history.
        assert_eq!(recs[1].command_source, "hook");
    }
    let session = &sessions_in(&data)[0];
    assert_eq!(common::output_of(session, &recs[1]), b"fixed-by-omnish\r\n");
    assert_eq!(common::output_of(session, &recs[2]), b"after-keys\r\n");
    // One session: the recorded shell's rc did not wrap again.
    assert_eq!(sessions_in(&data).len(), 1);

    // Ctrl-C during an answer stops it and returns to the prompt.
    std::fs::write(h.join("slow"), "").unwrap();
    t.wait("the prompt", |s| s.matches("READY>").count() >= 5);
    t.keys(&["C-x", "a"]);
    t.wait("the slow answer", |s| s.contains("SLOW-START"));
    t.keys(&["C-c"]);
    t.wait("the interruption and a prompt", |s| {
        s.contains("was interrupted") && t.last_line().starts_with("READY>")
    });
    assert!(!t.screen().contains("SLOW-END"));
    std::fs::remove_file(h.join("slow")).unwrap();
    t.type_text("echo still-fine");
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 4);
    assert_eq!(recs[3].command_line, "echo still-fine");

    // Nothing of the key presses is in the context.
    let out = Command::new(omnish_bin())
        .args(["context", "--recent", "20"])
        .env("OMNISH_DATA_DIR", &data)
        .env("OMNISH_CONFIG", "/dev/null")
        .env_remove("OMNISH_SESSION_ID")
        .output()
        .unwrap();
    let ctx = text(&out.stdout);
    for absent in [
        "ANSWER",
        "asking",
        "SLOW",
        "omnish ask",
        "half-typed",
        "interrupted",
    ] {
        assert!(!ctx.contains(absent), "{absent:?} in the context:\n{ctx}");
    }
    assert!(ctx.contains("$ echo still-fine"), "{ctx}");

    // The pause key, with a line being edited: that line runs paused; the key again resumes.
    t.type_text("echo paused-by-key-zq");
    t.keys(&["C-x", "p"]);
    t.wait("the pause said, the line intact", |s| {
        s.contains("recording paused until")
            && t.last_line().trim_end() == "READY> echo paused-by-key-zq"
    });
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 5);
    assert!(
        recs[4].paused && recs[4].command_line.is_empty(),
        "{:?}",
        recs[4]
    );
    t.wait("the prompt", |_| t.last_line().starts_with("READY>"));
    t.keys(&["C-x", "p"]);
    t.wait("the resume said", |s| s.contains("recording resumed"));
    t.type_text("echo resumed-by-key");
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 6);
    assert_eq!(recs[5].command_line, "echo resumed-by-key");
    let stream = std::fs::read(session.join(omnish::store::STREAM)).unwrap();
    assert!(!text(&stream).contains("paused-by-key-zq"));
}

#[test]
fn keys_in_bash_under_tmux() {
    keys_in_a_wrapped_shell("bash");
}

#[test]
fn keys_in_zsh_under_tmux() {
    keys_in_a_wrapped_shell("zsh");
}

#[test]
fn wrap_starts_a_login_shell_as_a_login_shell() {
    if skip_without(&["tmux"]) {
        return;
    }
    let home = home_with(&[(
        ".bash_profile",
        &format!("PS1='READY> '\nPROFILE_READ=yes\n{}", wrap_line("bash")),
    )]);
    let h = home.path();
    // The recorded shell read the login files itself (the variable is not exported).
    let (out, _) = in_wrapped_login_shell(
        h,
        "bash -l",
        "echo LOGIN-$PROFILE_READ-$OMNISH_INIT_WRAPPED",
    );
    assert!(out.starts_with("LOGIN-yes-/dev/"), "{out}");
}

/// Starts `command`, a login shell that wraps itself, in tmux with its store in `h`/data, runs
/// `line` at its first `READY>` prompt and returns what `line` printed (as recorded) and the
/// session's metadata. Checks that exactly one session was recorded and that it ran a login
/// shell (its argv ends in `-l`).
fn in_wrapped_login_shell(
    h: &Path,
    command: &str,
    line: &str,
) -> (String, omnish::store::SessionMeta) {
    let data = h.join("data");
    let t = Tmux::start(
        h,
        &[("OMNISH_DATA_DIR", data.display().to_string())],
        command,
    );
    t.wait("the prompt", |s| s.contains("READY>"));
    t.type_text(line);
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 1);
    let out = text(&common::output_of(&sessions_in(&data)[0], &recs[0]));
    let meta = omnish::store::read_meta(&sessions_in(&data)[0]).unwrap();
    assert_eq!(
        meta.argv.last().map(String::as_str),
        Some("-l"),
        "{:?}",
        meta.argv
    );
    assert_eq!(sessions_in(&data).len(), 1);
    (out, meta)
}

#[test]
fn wrap_starts_a_login_zsh_as_a_login_zsh() {
    if skip_without(&["tmux", "zsh"]) {
        return;
    }
    let home = home_with(&[
        (".zprofile", "PROFILE_READ=yes\n"),
        (".zshrc", &format!("PROMPT='READY> '\n{}", wrap_line("zsh"))),
    ]);
    let h = home.path();
    let (out, meta) = in_wrapped_login_shell(
        h,
        "zsh -l",
        "[[ -o login ]] && echo LOGIN-$PROFILE_READ-${OMNISH_INIT_WRAPPED%%[0-9]*}",
    );
    assert_eq!(out, "LOGIN-yes-/dev/pts/\r\n");
    assert!(meta.shell.ends_with("zsh"), "{}", meta.shell);
}

#[test]
fn wrap_never_starts_for_scripts_or_non_interactive_shells() {
    if skip_without(&["tmux", "zsh"]) {
        return;
    }
    let home = home_with(&[(
        "script.sh",
        &format!("{}echo script-went-on\n", wrap_line("bash")),
    )]);
    let h = home.path();
    let data = h.join("data");
    // On a terminal (tmux), yet not interactive: `bash -c`, a script, `zsh -c`.
    let cmd = format!(
        "sh -c 'bash -c \"eval \\\"\\$({b} init bash --wrap)\\\"; echo bash-c-went-on\"; bash {s}; zsh -c \"eval \\\"\\$({b} init zsh --wrap)\\\"; echo zsh-c-went-on\"; echo ALL-DONE; sleep 30'",
        b = omnish_bin(),
        s = h.join("script.sh").display()
    );
    let t = Tmux::start(h, &[("OMNISH_DATA_DIR", data.display().to_string())], &cmd);
    let s = t.wait("the commands", |s| s.contains("ALL-DONE"));
    for line in ["bash-c-went-on", "script-went-on", "zsh-c-went-on"] {
        assert!(s.contains(line), "{s}");
    }
    assert!(!s.contains("omnish:"), "{s}");
    assert!(sessions_in(&data).is_empty(), "a session was started");
}

#[test]
fn inside_a_recorded_shell_init_wrap_installs_the_keys_only() {
    let rc = format!("PS1='READY> '\n{}", wrap_line("bash"));
    let mut h = Harness::bash(&[(".bashrc", &rc)]);
    let r = h.run("bind -X | grep -c __omnish_; echo $OMNISH_SESSION_ID");
    let out = h.output_text(&r);
    // ask, fix, pause and pick.
    assert!(out.starts_with("4\r\n"), "{out}");
    assert_eq!(store_sessions(&h).len(), 1);
    // Evaluated again by hand inside: still no second recorder.
    let r = h.run(&format!(
        "eval \"$({} init bash --wrap)\"; echo still-here",
        omnish_bin()
    ));
    assert_eq!(h.output_text(&r), "still-here\r\n");
    assert_eq!(store_sessions(&h).len(), 1);
}

fn store_sessions(h: &Harness) -> Vec<PathBuf> {
    sessions_in(&h.data())
}

#[test]
fn wrap_falls_back_to_the_plain_shell_with_one_line_when_omnish_cannot_record() {
    if skip_without(&["tmux"]) {
        return;
    }
    // The store cannot be created under a regular file.
    let home = home_with(&[
        (".bashrc", &format!("PS1='READY> '\n{}", wrap_line("bash"))),
        ("file", ""),
    ]);
    let h = home.path();
    let t = Tmux::start(
        h,
        &[("OMNISH_DATA_DIR", h.join("file/data").display().to_string())],
        "bash -i",
    );
    let s = t.wait("the prompt", |s| s.contains("READY>"));
    let lines: Vec<&str> = s.lines().filter(|l| l.contains("omnish")).collect();
    assert_eq!(lines.len(), 1, "{s}");
    assert!(lines[0].contains("cannot start a recorded shell"), "{s}");
    t.type_text("echo plain-$OMNISH_SESSION_ID-shell");
    t.keys(&["Enter"]);
    t.wait("the plain shell", |s| s.contains("\nplain--shell"));
}
