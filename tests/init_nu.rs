//! `omnish init nu`: the printed file passes `nu-check`; the default keys shadow nothing in
//! nushell; the keys pressed in a real nu under tmux show the answer and put `fix`'s command on
//! the line, and are never recorded; `--wrap` starts a recorded shell only where it should.

mod common;
#[path = "common/tmux.rs"]
mod tmux;

use common::*;
use std::path::Path;
use std::process::Command;
use tmux::Tmux;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn skip_without(tools: &[&str]) -> bool {
    !tools.iter().all(|t| require(t))
}

/// `omnish init ARGS` with no config file: stdout and stderr.
fn init(args: &[&str]) -> (String, String) {
    let out = Command::new(omnish_bin())
        .arg("init")
        .args(args)
        .env("OMNISH_CONFIG", "/dev/null")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

/// `nu -n -c SCRIPT` in a clean environment with `home` as HOME.
fn nu_c(home: &Path, script: &str) -> std::process::Output {
    Command::new("nu")
        .args(["-n", "-c", script])
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The config.nu of the tests: the test prompt, then the two lines `omnish init nu` asks for.
fn config(home: &Path, extra_init_args: &str) -> String {
    format!(
        "$env.config.show_banner = false\n\
         $env.PROMPT_COMMAND = {{|| \"READY> \" }}\n\
         $env.PROMPT_COMMAND_RIGHT = \"\"\n\
         $env.PROMPT_INDICATOR = \"\"\n\
         $env.OMNISH_ASK_COMMAND = r#'{}'#\n\
         mkdir ($nu.data-dir | path join vendor/autoload)\n\
         ^r#'{}'# init nu --wrap{extra_init_args} | save -f ($nu.data-dir | path join vendor/autoload/omnish.nu)\n",
        home.join("llm-stand-in").display(),
        omnish_bin()
    )
}

#[test]
fn printed_files_pass_nu_check_and_say_what_config_nu_holds() {
    if skip_without(&["nu"]) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    for extra in [
        &[][..],
        &["--wrap"][..],
        &["--ask-key", r"\eq", "--fix-key", r"\C-g"][..],
    ] {
        let mut args = vec!["nu"];
        args.extend_from_slice(extra);
        let (snippet, _) = init(&args);
        // The first lines are comments that say what config.nu holds.
        let head: Vec<&str> = snippet.lines().take(4).collect();
        assert!(head.iter().all(|l| l.starts_with('#')), "{snippet}");
        assert!(
            snippet.contains("#   omnish init nu") && snippet.contains("vendor/autoload/omnish.nu"),
            "{snippet}"
        );
        let file = home.path().join("init.nu");
        std::fs::write(&file, &snippet).unwrap();
        let out = nu_c(
            home.path(),
            &format!("nu-check --debug r#'{}'#", file.display()),
        );
        assert!(
            out.status.success(),
            "{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        if extra.len() == 4 {
            assert!(
                snippet.contains("ask: {modifier: alt, keycode: char_q}"),
                "{snippet}"
            );
            assert!(
                snippet.contains("fix: {modifier: control, keycode: char_g}"),
                "{snippet}"
            );
        }
    }
    // A key nushell cannot bind (a sequence): one line, and the default.
    let (snippet, err) = init(&["nu", "--ask-key", r"\C-xq"]);
    assert_eq!(
        err,
        "omnish: nushell binds one key with modifiers, not \\C-xq (keys.ask); using Alt-a\n"
    );
    assert!(
        snippet.contains("ask: {modifier: alt, keycode: char_a}"),
        "{snippet}"
    );
}

#[test]
fn default_keys_shadow_nothing_in_nushell() {
    if skip_without(&["nu"]) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    // reedline's own keymaps, and the bindings of nushell's default config.
    let list = "keybindings default | where mode in [emacs vi_insert vi_normal] | each {|k| $\"($k.modifier) ($k.code)\" } | append ($env.config.keybindings | each {|k| $\"($k.modifier) ($k.keycode)\" }) | str join (char nl)";
    let out = nu_c(home.path(), list);
    let bound = text(&out.stdout).to_lowercase();
    assert!(
        bound.contains("control) char('r')") || bound.contains("control char_r"),
        "{bound}"
    );
    assert!(bound.contains("alt) char('b')"), "{bound}");
    for (modifier, key) in [("alt", 'a'), ("alt", 'x'), ("alt", 'p'), ("alt", 'k')] {
        assert!(
            !bound.contains(&format!("{modifier}) char('{key}')"))
                && !bound.contains(&format!("{modifier} char_{key}")),
            "{modifier}-{key} is bound in nushell:\n{bound}"
        );
    }
}

/// The stand-in LLM of tests/init_keys.rs: answers `ask` in two lines, `fix` with a fenced
/// command; sleeps first when `$HOME/slow` exists.
fn stand_in(home: &Path) {
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
}

#[test]
fn keys_in_a_wrapped_nu_under_tmux() {
    if skip_without(&["tmux", "nu"]) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    stand_in(h);
    let cfg = config(h, "");
    std::fs::create_dir_all(h.join(".config/nushell")).unwrap();
    std::fs::write(h.join(".config/nushell/config.nu"), cfg).unwrap();
    let data = h.join("data");
    let t = Tmux::start(h, &[("OMNISH_DATA_DIR", data.display().to_string())], "nu");
    t.wait("the prompt", |s| s.contains("READY>"));
    t.wait("the recorded shell", |_| !sessions_in(&data).is_empty());
    t.type_text("ls /no-such-dir-omnish");
    t.keys(&["Enter"]);
    wait_records_in(&data, 1);
    t.wait("the prompt after it", |_| t.last_line() == "READY>");

    // Ask, with a line being edited: the answer below, then the prompt and the line intact.
    t.type_text("print half-typed");
    t.wait("the typed text", |_| {
        t.last_line() == "READY> print half-typed"
    });
    t.keys(&["M-a"]);
    let s = t.wait("the answer and the prompt after it", |s| {
        s.contains("ANSWER-SECOND-LINE") && tmux::last_line(s) == "READY> print half-typed"
    });
    let prompt = std::fs::read_to_string(h.join("prompt.txt")).unwrap();
    assert!(prompt.contains("$ ls /no-such-dir-omnish"), "{prompt}");
    assert!(
        s.find("ANSWER-FIRST-LINE") < s.find("ANSWER-SECOND-LINE"),
        "{s}"
    );

    // Fix: the command replaces the line and does not run.
    t.keys(&["M-x"]);
    t.wait("fix's command on the line", |_| {
        t.last_line() == "READY> echo fixed-by-omnish"
    });
    t.keys(&["Enter"]);
    wait_records_in(&data, 2);
    t.type_text("print after-keys");
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 3);
    let lines: Vec<&str> = recs.iter().map(|r| r.command_line.as_str()).collect();
    assert_eq!(
        lines,
        [
            "ls /no-such-dir-omnish",
            "echo fixed-by-omnish",
            "print after-keys"
        ]
    );
    // One session: the recorded nu's config.nu did not wrap again.
    assert_eq!(sessions_in(&data).len(), 1);

    // Ctrl-C during an answer stops it and returns to the prompt.
    std::fs::write(h.join("slow"), "").unwrap();
    t.wait("the prompt", |_| t.last_line() == "READY>");
    t.keys(&["M-a"]);
    t.wait("the slow answer", |s| s.contains("SLOW-START"));
    t.keys(&["C-c"]);
    t.wait("a prompt", |_| t.last_line().starts_with("READY>"));
    assert!(!t.screen().contains("SLOW-END"));
    std::fs::remove_file(h.join("slow")).unwrap();
    t.type_text("print still-fine");
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 4);
    assert_eq!(recs[3].command_line, "print still-fine");
    let out = Command::new(omnish_bin())
        .args(["context", "--recent", "20"])
        .env("OMNISH_DATA_DIR", &data)
        .env("OMNISH_CONFIG", "/dev/null")
        .env_remove("OMNISH_SESSION_ID")
        .output()
        .unwrap();
    let ctx = text(&out.stdout);
    for absent in ["ANSWER", "SLOW", "__omnish", "half-typed"] {
        assert!(!ctx.contains(absent), "{absent:?} in the context:\n{ctx}");
    }

    // The pause key (Alt-p), with a line being edited: that line runs paused; again: resumed.
    t.wait("the prompt", |_| t.last_line() == "READY>");
    t.type_text("print paused-by-key-zq");
    t.keys(&["M-p"]);
    t.wait("the pause said, the line intact", |s| {
        s.contains("recording paused until") && t.last_line() == "READY> print paused-by-key-zq"
    });
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 5);
    assert!(
        recs[4].paused && recs[4].command_line.is_empty(),
        "{:?}",
        recs[4]
    );
    t.wait("the prompt", |_| t.last_line() == "READY>");
    t.keys(&["M-p"]);
    t.wait("the resume said", |s| s.contains("recording resumed"));
    t.wait("the prompt", |_| t.last_line() == "READY>");
    t.type_text("print resumed-by-key");
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 6);
    assert_eq!(recs[5].command_line, "print resumed-by-key");
    // Nothing of the paused line in any record or the context. (nushell itself keeps it in
    // its history, and its history hint shows it again while the next line is typed, in the
    // prompt's redraws: the screen as it was after the pause, not a record of the line.)
    let session = &sessions_in(&data)[0];
    for r in &recs {
        let out = text(&common::output_of(session, r));
        assert!(!out.contains("paused-by-key-zq"), "{r:?}: {out}");
        assert!(!r.command_line.contains("paused-by-key-zq"), "{r:?}");
    }
    let out = Command::new(omnish_bin())
        .args(["context", "--recent", "20", "--no-redact"])
        .env("OMNISH_DATA_DIR", &data)
        .env("OMNISH_CONFIG", "/dev/null")
        .env_remove("OMNISH_SESSION_ID")
        .output()
        .unwrap();
    assert!(!text(&out.stdout).contains("paused-by-key-zq"));

    // The pick key (Alt-k): fzf lists the commands; the one picked is asked about.
    if !require("fzf") {
        return;
    }
    std::fs::remove_file(h.join("prompt.txt")).unwrap();
    t.wait("the prompt", |_| t.last_line() == "READY>");
    t.keys(&["M-k"]);
    t.wait("fzf's list", |s| s.contains("omnish pick>"));
    t.type_text("still-fine");
    t.wait("the list narrowed", |s| !s.contains("resumed-by-key  ["));
    t.keys(&["Enter"]);
    t.wait("the answer", |_| {
        std::fs::read_to_string(h.join("prompt.txt")).is_ok_and(|p| p.contains("print still-fine"))
    });
    let prompt = std::fs::read_to_string(h.join("prompt.txt")).unwrap();
    assert!(!prompt.contains("resumed-by-key"), "{prompt}");
    t.wait("the prompt after the answer", |_| t.last_line() == "READY>");
}

#[test]
fn wrap_starts_a_login_nu_as_a_login_nu() {
    if skip_without(&["tmux", "nu"]) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    std::fs::create_dir_all(h.join(".config/nushell")).unwrap();
    std::fs::write(h.join(".config/nushell/config.nu"), config(h, "")).unwrap();
    let data = h.join("data");
    let t = Tmux::start(
        h,
        &[("OMNISH_DATA_DIR", data.display().to_string())],
        "nu -l",
    );
    t.wait("the prompt", |s| s.contains("READY>"));
    t.type_text("print $\"LOGIN-($nu.is-login)-($env.OMNISH_INIT_WRAPPED | str substring 0..8)\"");
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 1);
    let session = &sessions_in(&data)[0];
    let out = text(&common::output_of(session, &recs[0]));
    assert!(out.contains("LOGIN-true-/dev/pts"), "{out:?}");
    let meta = omnish::store::read_meta(session).unwrap();
    assert_eq!(
        meta.argv.last().map(String::as_str),
        Some("-l"),
        "{:?}",
        meta.argv
    );
    assert!(meta.shell.ends_with("/nu"), "{}", meta.shell);
    assert_eq!(sessions_in(&data).len(), 1);
}

#[test]
fn wrap_never_starts_for_scripts_and_says_one_line_when_omnish_cannot_run() {
    if skip_without(&["tmux", "nu"]) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let data = h.join("data");
    // On a terminal, with --wrap decided yes: a script and `nu -c` source it, and go on.
    let snippet = h.join("snippet.nu");
    let script = h.join("script.nu");
    std::fs::write(
        &script,
        format!("source r#'{}'#\nprint script-went-on\n", snippet.display()),
    )
    .unwrap();
    // The same file with an omnish that is gone, in an interactive nu.
    let broken = h.join(".local/share/nushell/vendor/autoload/omnish.nu");
    std::fs::create_dir_all(broken.parent().unwrap()).unwrap();
    std::fs::create_dir_all(h.join(".config/nushell")).unwrap();
    std::fs::write(
        h.join(".config/nushell/config.nu"),
        "$env.config.show_banner = false\n$env.PROMPT_COMMAND = {|| \"READY> \" }\n$env.PROMPT_INDICATOR = \"\"\n",
    )
    .unwrap();
    let cmd = format!(
        "sh -c '{b} init nu --wrap > {s}; sed \"s|bin: r#[^#]*#|bin: r#\\x27/no/omnish\\x27#|\" {s} > {x}; nu {script}; nu -c \"source {s}; print nu-c-went-on\"; echo ALL-DONE; nu'",
        b = omnish_bin(),
        s = snippet.display(),
        x = broken.display(),
        script = script.display(),
    );
    let t = Tmux::start(h, &[("OMNISH_DATA_DIR", data.display().to_string())], &cmd);
    let s = t.wait("the commands and the plain nu", |s| {
        s.contains("ALL-DONE") && s.contains("READY>")
    });
    let snippet = std::fs::read_to_string(&snippet).unwrap();
    assert!(snippet.contains("wrap: true"), "{snippet}");
    for line in ["script-went-on", "nu-c-went-on"] {
        assert!(s.contains(line), "{s}");
    }
    let said: Vec<&str> = s.lines().filter(|l| l.contains("omnish:")).collect();
    assert_eq!(
        said,
        ["omnish: cannot run /no/omnish; this shell is not recorded"],
        "{s}"
    );
    assert!(sessions_in(&data).is_empty(), "a session was started");
}

#[test]
fn nushell_completions_parse_and_complete_omnish() {
    if skip_without(&["nu"]) {
        return;
    }
    // `omnish completions nu` prints the committed file (tests/cli_docs.rs keeps it current).
    let out = Command::new(omnish_bin())
        .args(["completions", "nu"])
        .output()
        .unwrap();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/omnish.nu");
    assert_eq!(text(&out.stdout), std::fs::read_to_string(&file).unwrap());
    let home = tempfile::tempdir().unwrap();
    let out = nu_c(
        home.path(),
        &format!(
            "source r#'{}'#; use completions *; scope commands | where name =~ '^omnish( |$)' | where type == external | get name | str join ','",
            file.display()
        ),
    );
    let names = text(&out.stdout);
    assert!(out.status.success(), "{names}{}", text(&out.stderr));
    for name in [
        "omnish",
        "omnish init",
        "omnish context",
        "omnish completions",
    ] {
        assert!(names.split(',').any(|n| n == name), "{name} not in {names}");
    }
}
