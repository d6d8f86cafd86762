//! Shells started from a recorded shell (issue 16): a `bash` or `zsh` typed in a recorded bash
//! or zsh gets omnish's hooks with the user's own startup files, and its commands become records
//! of their own (depth, `nested_in`), exact as at the top level, while the command that started
//! it keeps only what happened outside them.

mod common;

use common::*;
use omnish::store::CommandRecord;

const RC: &[(&str, &str)] = &[
    (
        ".bashrc",
        "PS1='READY> '\nexport FROM_BASHRC=$((FROM_BASHRC+1))\n",
    ),
    (".zshrc", "PROMPT='READY> '\n"),
];

fn find<'a>(recs: &'a [CommandRecord], line: &str) -> &'a CommandRecord {
    recs.iter()
        .rev()
        .find(|r| r.command_line == line)
        .unwrap_or_else(|| panic!("no record of {line:?} in {recs:#?}"))
}

/// Types `inner` (a shell) in the recorded shell, runs a few commands in it, leaves it with
/// `exit 3`, and checks every record.
fn nested_session(outer: &str, inner: &str) {
    if (outer == "zsh" || inner.starts_with("zsh")) && !require("zsh") {
        return;
    }
    let mut h = Harness::start(&[outer], RC);
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
    let echo = h.run("echo inner-$((6*7))");
    let fail = h.run("false");
    let missing = h.run("ls /nope-omnish");
    let cd = h.run("cd /tmp");
    let pwd = h.run("pwd");
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line("exit 3");
    h.wait_prompts(prompts + 1);
    let after = h.run("echo outer-after");
    // `ask` with nothing selected explains the last command that failed on its own: not the
    // inner shell's `exit 3`, nor the `bash` that took its status.
    let ask = std::process::Command::new(omnish_bin())
        .args(["ask", "--print-prompt"])
        .env("HOME", h.data().parent().unwrap())
        .env("OMNISH_DATA_DIR", h.data())
        .env("OMNISH_CONFIG", "/dev/null")
        .env_remove("OMNISH_SESSION_ID")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let prompt = String::from_utf8_lossy(&ask.stdout);
    assert!(prompt.contains("$ ls /nope-omnish"), "{prompt}");
    assert!(!prompt.contains("$ exit 3"), "{prompt}");
    let recs = h.records();
    let started = find(&recs, inner);
    let exit = find(&recs, "exit 3");
    // The outer command: its shell's status, the top level.
    assert_eq!(started.exit_code, Some(3), "{started:?}");
    assert_eq!((started.depth, started.nested_in.as_deref()), (0, None));
    // Inner commands: records of their own, nested in it, exact.
    for (r, code) in [(&echo, 0), (&fail, 1), (&cd, 0), (&pwd, 0)] {
        assert_eq!(r.exit_code, Some(code), "{r:?}");
        assert_eq!(r.depth, 1, "{r:?}");
        assert_eq!(r.nested_in.as_deref(), Some(started.command_id.as_str()));
        assert_eq!(
            (r.host.as_deref(), r.user.as_deref()),
            (None, None),
            "{r:?}"
        );
    }
    assert_ne!(missing.exit_code, Some(0));
    assert_eq!(h.output_text(&echo), "inner-42\r\n");
    assert!(h.output_text(&missing).contains("/nope-omnish"));
    assert_eq!(h.output_text(&pwd), "/tmp\r\n");
    assert_eq!(pwd.cwd, "/tmp");
    assert_eq!((exit.depth, exit.exit_code), (1, Some(3)), "{exit:?}");
    assert!(exit.shell_status && started.shell_status && !missing.shell_status);
    // The outer command holds the inner prompts and lines typed there, not the inner output.
    let outer_out = h.output_text(started);
    assert!(outer_out.contains("echo inner-$((6*7))"), "{outer_out:?}");
    assert!(
        !outer_out
            .lines()
            .any(|l| l.trim_end() == "inner-42" || l.trim_end() == "/tmp"),
        "{outer_out:?}"
    );
    assert!(!outer_out.contains("No such file"), "{outer_out:?}");
    // Back at the top level.
    assert_eq!((after.depth, after.exit_code), (0, Some(0)));
    assert_eq!(h.output_text(&after), "outer-after\r\n");
    assert!(h.meta().nest.is_empty());
    // Inner records were numbered in the order they started, after the outer one.
    assert!(echo.seq > started.seq && after.seq > exit.seq);
}

#[test]
fn bash_in_bash_records_each_inner_command() {
    nested_session("bash", "bash");
}

#[test]
fn zsh_in_bash_records_each_inner_command() {
    nested_session("bash", "zsh");
}

#[test]
fn bash_in_zsh_records_each_inner_command() {
    nested_session("zsh", "bash");
}

#[test]
fn zsh_in_zsh_records_each_inner_command() {
    nested_session("zsh", "zsh -l");
}

/// Every byte omnish wrote for the session, as text.
fn session_files(h: &Harness) -> String {
    // Tolerates `meta.json`'s temporary file vanishing between the listing and the read.
    session_text(&h.session_dir())
}

/// Inside a nested shell, a private line and input typed with echo off never reach the disk,
/// an `exec` of a shell keeps recording at the same depth, and markers the shell's commands
/// print are plain output.
fn nested_privacy(outer: &str, inner: &str) {
    if (outer == "zsh" || inner == "zsh") && !require("zsh") {
        return;
    }
    let files = [
        (
            ".bashrc",
            "PS1='READY> '\nHISTCONTROL=ignoreboth\nHISTFILE=/dev/null\n",
        ),
        (".zshrc", "PROMPT='READY> '\nsetopt HIST_IGNORE_SPACE\n"),
    ];
    let mut h = Harness::start(&[outer], &files);
    h.wait_prompts(1);
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line(inner);
    h.wait_prompts(prompts + 1);
    h.wait_until("the nested shell", || h.meta().nest.len() == 1);
    let private = h.run(" echo SECRET-$((40+2))-LINE");
    assert!(private.private, "{private:?}");
    assert_eq!((private.depth, private.command_line.as_str()), (1, ""));
    // A password typed with echo off.
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line("printf '%s-PROMPT: ' PW; read -rs pw; echo; echo got-${#pw}");
    h.wait_screen("PW-PROMPT: ");
    // Typed only once `read -s` turned echo off (the line editor turns it off too).
    h.wait_until("echo off", || {
        !h.shell_terminal_modes()
            .contains(nix::sys::termios::LocalFlags::ECHO)
    });
    h.send(b"HUNTER2-PW\r");
    h.wait_prompts(prompts + 1);
    h.wait_screen("got-10");
    // Markers printed by a command of the nested shell, without its token: output.
    let forged = h.run(
        "printf '\\033]133;A\\007\\033]633;P;Nest=00112233445566778899aabbccddeeff\\007done\\n'",
    );
    assert_eq!(forged.depth, 1);
    assert!(h.output_text(&forged).ends_with("done\r\n"));
    assert_eq!(h.meta().nest.len(), 1);
    // exec of a shell: the new shell takes this one's place.
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line(&format!("exec {inner}"));
    h.wait_prompts(prompts + 1);
    let after = h.run("echo after-exec-$((2*3))");
    assert_eq!((after.depth, after.exit_code), (1, Some(0)), "{after:?}");
    assert_eq!(h.output_text(&after), "after-exec-6\r\n");
    let nest = h.meta().nest;
    assert_eq!(nest.len(), 1, "{nest:?}");
    assert_eq!(after.nested_in, private.nested_in);
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line("exit");
    h.wait_prompts(prompts + 1);
    let top = h.run("echo top");
    assert_eq!(top.depth, 0);
    let all = session_files(&h);
    assert!(!all.contains("SECRET-"), "a private line reached the disk");
    assert!(!all.contains("HUNTER2"), "echo-off input reached the disk");
    let recs = h.records();
    let exec = find(&recs, &format!("exec {inner}"));
    assert_eq!(exec.depth, 1, "{exec:?}");
}

#[test]
fn privacy_and_exec_hold_in_a_bash_nested_in_bash() {
    nested_privacy("bash", "bash");
}

#[test]
fn privacy_and_exec_hold_in_a_zsh_nested_in_bash() {
    nested_privacy("bash", "zsh");
}

#[test]
fn privacy_and_exec_hold_in_a_bash_nested_in_zsh() {
    nested_privacy("zsh", "bash");
}

#[test]
fn ask_inside_a_nested_shell_explains_that_shells_commands() {
    let mut h = Harness::start(&["bash"], RC);
    h.wait_prompts(1);
    h.run("ls /nope-outer");
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line("bash");
    h.wait_prompts(prompts + 1);
    h.wait_until("the nested shell in meta.json", || h.meta().nest.len() == 1);
    // As the ask key runs it there: nothing failed in this shell yet, so its last command.
    let ask = |n: u32| format!("{} ask --print-prompt > ~/prompt{n}", omnish_bin());
    let prompt = |h: &Harness, n: u32| {
        std::fs::read_to_string(h.home.path().join(format!("prompt{n}"))).unwrap()
    };
    h.run("echo inner-fine");
    h.run(&ask(1));
    let p = prompt(&h, 1);
    assert!(
        p.contains("$ echo inner-fine") && !p.contains("nope-outer"),
        "{p}"
    );
    h.run("ls /nope-inner");
    h.run("echo after-the-failure");
    h.run(&ask(2));
    let p = prompt(&h, 2);
    assert!(
        p.contains("$ ls /nope-inner") && !p.contains("nope-outer"),
        "{p}"
    );
    assert!(!p.contains("after-the-failure"), "{p}");
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line("exit");
    h.wait_prompts(prompts + 1);
    // Back at the top level: the last failure anywhere.
    h.run(&ask(3));
    let p = prompt(&h, 3);
    assert!(p.contains("$ ls /nope-inner"), "{p}");
}

/// A program that starts an interactive shell of its own for a project (`poetry shell`, `nix
/// develop`, `nix-shell`), typed in a recorded `outer`: the shell it starts is hooked as a typed
/// `bash` is, with the startup files the program gives it, and its commands are records nested
/// in the program's.
fn starter_session(outer: &str, line: &str, inner_shell: &str) {
    if outer == "zsh" && !require("zsh") {
        return;
    }
    let poetry = line.starts_with("poetry");
    let pipenv = line.starts_with("pipenv");
    let hatch = line.starts_with("hatch");
    if (poetry && !require("poetry"))
        || (pipenv && !require("pipenv"))
        || (hatch && !require("hatch"))
    {
        return;
    }
    let files = [
        (
            ".bashrc",
            "PS1='READY> '\nexport FROM_BASHRC=$((FROM_BASHRC+1))\n",
        ),
        (".zshrc", "PROMPT='READY> '\n"),
        ("proj/pyproject.toml", starters::PYPROJECT),
        ("proj/Pipfile", starters::PIPFILE),
        ("hatchproj/pyproject.toml", starters::HATCH_PYPROJECT),
    ];
    let (_bin, env) = starters::bin_dir();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut h = Harness::start_with(&[outer], &files, &env);
    h.wait_prompts(1);
    h.run(if hatch { "cd hatchproj" } else { "cd proj" });
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line(line);
    h.wait_until("the nested shell in meta.json", || h.meta().nest.len() == 1);
    let nest = h.meta().nest;
    assert_eq!(nest[0].shell, inner_shell, "{nest:?}");
    assert_eq!(nest[0].parent.command_line, line);
    if poetry || hatch {
        // poetry and hatch type the virtualenv's activation into the shell they started.
        h.wait_until("poetry's activation", || {
            h.records().iter().any(|r| {
                r.depth == 1 && r.command_line.contains("activate") && r.exit_code.is_some()
            })
        });
        h.wait_prompts(prompts + 2);
    } else {
        // pipenv types its activation and three more lines into the shell it started, and
        // reads all they print away before it hands the terminal over: the first prompt shown
        // is the one after them.
        h.wait_prompts(prompts + 1);
    }
    let echo = h.run("echo inner-$((6*7))");
    let env = h.run("echo \"${IN_NIX_SHELL-none} ${VIRTUAL_ENV##*/} ${FROM_BASHRC-0}\"");
    let fail = h.run("ls /nope-omnish");
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line("exit 3");
    h.wait_prompts(prompts + 1);
    let after = h.run("echo outer-after");
    let recs = h.records();
    let started = find(&recs, line);
    assert_eq!(started.exit_code, Some(3), "{started:?}");
    assert_eq!((started.depth, started.nested_in.as_deref()), (0, None));
    for r in [&echo, &env, &fail] {
        assert_eq!(r.depth, 1, "{r:?}");
        assert_eq!(r.nested_in.as_deref(), Some(started.command_id.as_str()));
    }
    assert_eq!(h.output_text(&echo), "inner-42\r\n");
    assert_ne!(fail.exit_code, Some(0));
    // The program's own startup files ran, once each: nix's rcfile (which reads ~/.bashrc),
    // poetry's activation.
    let bashrc_runs = match (outer, inner_shell) {
        ("bash", "bash") => 2,
        (_, "bash") => 1,
        _ => 0,
    };
    let want = if poetry || pipenv || hatch {
        format!("none .venv {bashrc_runs}\r\n")
    } else {
        format!("impure  {bashrc_runs}\r\n")
    };
    assert_eq!(h.output_text(&env), want);
    // The program's record keeps what was outside the inner commands, not their output.
    let outer_out = h.output_text(started);
    assert!(
        !outer_out.lines().any(|l| l.trim_end() == "inner-42"),
        "{outer_out:?}"
    );
    if !poetry && !pipenv && !hatch {
        assert!(outer_out.contains("shell-hook-ran"), "{outer_out:?}");
    }
    assert_eq!((after.depth, after.exit_code), (0, Some(0)));
    assert!(h.meta().nest.is_empty());
}

#[test]
fn nix_shell_in_bash_gets_its_rcfile_and_records_each_inner_command() {
    starter_session("bash", "nix-shell", "bash");
}

#[test]
fn nix_develop_in_zsh_gets_its_rcfile_and_records_each_inner_command() {
    starter_session("zsh", "nix develop .#default", "bash");
}

#[test]
fn poetry_shell_in_bash_records_each_inner_command() {
    starter_session("bash", "poetry shell", "bash");
}

#[test]
fn poetry_shell_in_zsh_records_each_inner_command() {
    starter_session("zsh", "poetry shell", "zsh");
}

/// `hatch shell` starts the shell it runs under through pexpect and types `source
/// <venv>/bin/activate` into it, as poetry does.
#[test]
fn hatch_shell_in_bash_records_each_inner_command() {
    starter_session("bash", "hatch shell", "bash");
}

#[test]
fn hatch_shell_in_zsh_records_each_inner_command() {
    starter_session("zsh", "hatch shell", "zsh");
}

/// `pipenv shell` reads the started shell's first output away (pexpect, up to its activation),
/// announcement included: the shell says it again at its first prompts.
#[test]
fn pipenv_shell_in_bash_records_each_inner_command() {
    starter_session("bash", "pipenv shell", "bash");
}

#[test]
fn pipenv_shell_in_zsh_records_each_inner_command() {
    starter_session("zsh", "pipenv shell", "zsh");
}

/// A line that gives the program a command to run starts no interactive shell: nothing is
/// prepared for it (the command sees none of omnish's variables), and it is one record.
#[test]
fn nix_shell_given_a_command_is_one_record() {
    let (bin, env) = starters::bin_dir();
    starters::add(
        bin.path(),
        "show-env",
        "#!/bin/sh\necho ${POSIXLY_CORRECT-unset} ${ENV-unset} $((6*7))\n",
    );
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut h = Harness::start_with(&["bash"], &[(".bashrc", "PS1='READY> '\n")], &env);
    h.wait_prompts(1);
    let r = h.run("nix-shell --run show-env");
    assert_eq!(h.output_text(&r), "unset unset 42\r\n", "{r:?}");
    assert!(h.meta().nest.is_empty());
    assert!(h.records().iter().all(|r| r.depth == 0));
}
