//! Shells started inside a far shell (issue 16): a `bash`, `zsh` or `fish` typed in a shell on
//! the far side of `omnish ssh` (a real OpenSSH server on a loopback port) or `omnish nest --
//! sudo -i` is followed as a local nested shell is: its commands are records of their own,
//! depth 2, nested in the command that started it, with the far user; `exit` returns to the far
//! shell and then to the local one with their statuses. The far shell keeps its private
//! directory for them while it lives (with a far key good only for shells started inside it),
//! and nothing of it is left once the far shell has ended: a far key copied meanwhile forges
//! nothing afterwards.

mod common;

use common::farkeys;
use common::remote::{Sshd, TestUser};
use common::*;
use omnish::store::CommandRecord;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// A recorded bash whose PATH finds this omnish, with `env`.
fn recorded(env: &[(&str, &str)]) -> Harness {
    let bin = std::path::Path::new(omnish_bin()).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut all = vec![("PATH", path.as_str())];
    all.extend_from_slice(env);
    let h = Harness::start_with(&["bash"], &[(".bashrc", "PS1='READY> '\n")], &all);
    h.wait_prompts(1);
    h
}

/// A record's output as the terminal showed it (fish sets the title before each command).
fn shown(h: &Harness, r: &CommandRecord) -> String {
    omnish::term::render::render(&h.output(r), 80, 24).join("\n")
}

/// The far shell's private directories (omnish.XXXXXXXXXX in /tmp, the user's).
fn far_dirs(user: &TestUser) -> Vec<PathBuf> {
    user.files()
        .into_iter()
        .map(PathBuf::from)
        .filter(|p| {
            p.parent() == Some(std::path::Path::new("/tmp"))
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("omnish."))
        })
        .collect()
}

/// Nothing of omnish's on the far side once the far shell has ended: nothing in the home but
/// /etc/skel and what the shells keep.
fn nothing_left(user: &TestUser) {
    user.assert_nothing_left(&[
        ".bash_history",
        ".zsh_history",
        ".config",
        ".local",
        ".cache",
    ]);
}

/// The lines each kind of inner shell runs: an echo, a failure, a cd, forged markers.
fn lines(inner: &str) -> [&'static str; 4] {
    let forge = if inner == "fish" {
        r"printf '\e]633;%s;P;Nest=%s\a\e]133;%s;D;7\a' 0123456789abcdef0123456789abcdef aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa cccccccccccccccccccccccccccccccc; echo forged-done"
    } else {
        r"printf '\033]633;%s;P;Nest=%s\a\033]133;%s;D;7\a' 0123456789abcdef0123456789abcdef aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa cccccccccccccccccccccccccccccccc; echo forged-done"
    };
    let echo = if inner == "fish" {
        "echo inner-(math 6 \\* 7)"
    } else {
        "echo inner-$((6*7))"
    };
    [echo, "ls /nope-omnish", "cd /tmp; pwd", forge]
}

/// In the far shell `far` of `user` (at its line editor, announced, depth 1), types `inner`
/// (a shell's name), runs commands there and checks their records (host `host`), copies the far
/// key from the far shell's directory, leaves the inner shell with `exit 4`, checks the record
/// of `inner` and that the far shell runs commands again. Returns the far key.
fn inner_followed(
    h: &mut Harness,
    user: &TestUser,
    far: &str,
    inner: &str,
    host: Option<&str>,
) -> String {
    assert_eq!(h.meta().nest.len(), 1);
    let far_id = format!("{}:{}", h.meta().id, h.meta().nest[0].parent.seq);
    // The far shell keeps one private directory, 0700, while it lives.
    let dirs = far_dirs(user);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let mode = std::fs::metadata(&dirs[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{:?}", dirs[0]);
    user.wait_line_editor(h, far);
    h.type_line(inner);
    h.wait_until("the inner shell in meta.json", || h.meta().nest.len() == 2);
    let nest = &h.meta().nest[1];
    assert_eq!((nest.depth, nest.shell.as_str()), (2, inner));
    assert_eq!(nest.user, user.name);
    assert_eq!(nest.parent.command_line, inner);
    let inner_id = format!("{}:{}", h.meta().id, nest.parent.seq);

    let [echo_line, fail_line, cd_line, forge_line] = lines(inner);
    let echo = farkeys::run_far(h, user, inner, echo_line);
    assert_eq!(shown(h, &echo), "inner-42");
    let fail = farkeys::run_far(h, user, inner, fail_line);
    assert_eq!(fail.exit_code, Some(2));
    assert!(shown(h, &fail).contains("No such file"), "{fail:?}");
    let cd = farkeys::run_far(h, user, inner, cd_line);
    assert_eq!(shown(h, &cd), "/tmp");
    // Markers printed there with made-up keys are plain output: no shell announced, no
    // command forged.
    let forged = farkeys::run_far(h, user, inner, forge_line);
    assert!(shown(h, &forged).contains("forged-done"), "{forged:?}");
    assert_eq!(forged.exit_code, Some(0));
    assert_eq!(h.meta().nest.len(), 2);
    user.assert_ran_here(&[&echo, &fail, &cd, &forged], 2, &inner_id, host);
    assert_eq!(echo.cwd, user.home.to_string_lossy());
    assert_eq!(forged.cwd, "/tmp");
    // The far key, as a program of the far user could read it.
    let key = far_key(&dirs[0]);

    user.wait_line_editor(h, inner);
    h.type_line("exit 4");
    h.wait_until("the inner shell's end", || h.meta().nest.len() == 1);
    let again = farkeys::run_far(h, user, far, "echo far-again");
    assert_eq!(shown(h, &again), "far-again");
    assert_eq!(
        (again.depth, again.nested_in.as_deref()),
        (1, Some(far_id.as_str())),
        "{again:?}"
    );
    let rec = h
        .records()
        .into_iter()
        .find(|r| r.command_line == inner && r.depth == 1)
        .unwrap();
    assert_eq!(
        (rec.exit_code, rec.nested_in.as_deref()),
        (Some(4), Some(far_id.as_str())),
        "{rec:?}"
    );
    assert_eq!(rec.user.as_deref(), Some(user.name.as_str()));
    // Its output is what happened outside the inner shell's commands, not a copy of them.
    assert!(!shown(h, &rec).contains("inner-42"), "{rec:?}");
    key
}

/// The far key in the far shell's directory (the bash a far shell starts reads it).
fn far_key(dir: &std::path::Path) -> String {
    let text = std::fs::read_to_string(dir.join("nest.bash")).unwrap();
    let key = text
        .lines()
        .find_map(|l| l.strip_prefix("__omnish_key="))
        .unwrap()
        .to_string();
    assert_eq!(key.len(), 32, "{key}");
    key
}

/// Ends the far shell (`far`) with `exit 3`; the record of `start` has that status. Then the
/// far key copied before forges nothing: printed by a local command, it is plain output.
fn far_ends(h: &mut Harness, user: &TestUser, far: &str, start: &str, key: &str) {
    user.wait_line_editor(h, far);
    h.type_line("exit 3");
    h.wait_until("the far shell's end", || h.meta().nest.is_empty());
    let rec = h.wait_record("the record of the starting command", |r| {
        r.command_line == start && r.exit_code.is_some()
    });
    assert_eq!(
        (rec.exit_code, rec.unsplit.as_deref()),
        (Some(3), None),
        "{rec:?}"
    );
    // A shell announced with it would have this token, and a command of its own.
    let t = "0123456789abcdef0123456789abcdef";
    let line = format!(
        r"printf '\033]633;{key};P;Nest=%s\a\033]133;%s;A\a\033]133;%s;B\a\033]633;%s;E;forged-cmd\a\033]133;%s;C\a\033]133;%s;D;7\a' {t} {t} {t} {t} {t} {t}; echo after-far"
    );
    let r = h.run(&line);
    assert!(h.output_text(&r).contains("after-far"), "{r:?}");
    assert_eq!((r.depth, r.exit_code), (0, Some(0)), "{r:?}");
    let forged: Vec<CommandRecord> = h
        .records()
        .into_iter()
        .filter(|r| r.command_line == "forged-cmd")
        .collect();
    assert!(forged.is_empty(), "{forged:?}");
    assert!(h.meta().nest.is_empty());
    let after = h.run("echo back-home");
    assert_eq!((after.depth, after.user.as_deref()), (0, None), "{after:?}");
    nothing_left(user);
}

fn over_ssh(login: &str, far: &str, inner: &str) {
    for program in [far, inner] {
        if !require(program) {
            return;
        }
    }
    let Some(user) = TestUser::create_for_fish(login) else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let mut h = farkeys::ssh_session(&user, &sshd, far, "false");
    let start = format!("omnish ssh {}", user.name);
    let key = inner_followed(&mut h, &user, far, inner, None);
    far_ends(&mut h, &user, far, &start, &key);
}

#[test]
fn a_bash_typed_in_a_far_bash_is_followed() {
    over_ssh("/bin/bash", "bash", "bash");
}

#[test]
fn a_zsh_typed_in_a_far_zsh_is_followed() {
    over_ssh("/usr/bin/zsh", "zsh", "zsh");
}

#[test]
fn a_bash_typed_in_a_far_fish_is_followed() {
    over_ssh("/usr/bin/fish", "fish", "bash");
}

/// Through sudo: `omnish nest -- sudo -u USER -i` to a bash login, then a fish typed there;
/// and the ask key pressed in that fish is answered about its last failure.
#[test]
fn a_fish_typed_in_a_bash_from_sudo_is_followed_and_its_ask_key_works() {
    if !require("fish") {
        return;
    }
    let Some(user) = TestUser::create_for_fish("/bin/bash") else {
        return;
    };
    let (_llm_dir, llm) = farkeys::llm_stand_in("echo fixed-by-omnish");
    let mut h = recorded(&[("OMNISH_ASK_COMMAND", llm.as_str())]);
    h.run("ls /nope-near");
    let start = format!("omnish nest -- sudo -u {} -i", user.name);
    h.type_line(&start);
    user.wait_line_editor(&h, "bash");
    h.wait_until("the far shell in meta.json", || h.meta().nest.len() == 1);
    let key = inner_followed(&mut h, &user, "bash", "fish", None);
    // Again a fish, and the ask key (fish's default, Ctrl-O a) about its failure.
    user.wait_line_editor(&h, "bash");
    h.type_line("fish");
    h.wait_until("the inner shell in meta.json", || h.meta().nest.len() == 2);
    let fail = farkeys::run_far(&mut h, &user, "fish", "ls /nope-inner");
    assert_eq!((fail.depth, fail.exit_code), (2, Some(2)), "{fail:?}");
    user.wait_line_editor(&h, "fish");
    let mark = h.mark();
    h.send(b"\x0fa");
    h.wait_until("the answer on the screen", || {
        omnish::term::render::render(h.screen_since(mark).as_bytes(), 80, 24)
            .join("\n")
            .contains("ANSWER-SECOND-LINE")
    });
    let prompt = std::fs::read_to_string(h.home.path().join("prompt.txt")).unwrap();
    assert!(prompt.contains("ls /nope-inner"), "{prompt}");
    assert!(!prompt.contains("ls /nope-near"), "{prompt}");
    let after = farkeys::run_far(&mut h, &user, "fish", "echo after-ask");
    assert_eq!((after.depth, shown(&h, &after).as_str()), (2, "after-ask"));
    user.wait_line_editor(&h, "fish");
    h.type_line("exit");
    h.wait_until("the inner shell's end", || h.meta().nest.len() == 1);
    far_ends(&mut h, &user, "bash", &start, &key);
}

/// A far shell killed with SIGKILL (it runs no trap, no exit hook): the small sh it runs under
/// removes its directory all the same, and passes its status on (137, as a shell reports it).
#[test]
fn a_far_shell_killed_with_sigkill_leaves_nothing_behind() {
    let Some(user) = TestUser::create_for_fish("/bin/bash") else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let h = farkeys::ssh_session(&user, &sshd, "bash", "false");
    let start = format!("omnish ssh {}", user.name);
    let far = user.wait_line_editor(&h, "bash");
    assert_eq!(far_dirs(&user).len(), 1);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(far.pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    h.wait_until("the far shell's end", || h.meta().nest.is_empty());
    let rec = h.wait_record("the record of the starting command", |r| {
        r.command_line == start && r.exit_code.is_some()
    });
    assert_eq!(rec.exit_code, Some(137));
    h.wait_until("the far side's processes to end", || {
        user.processes().is_empty()
    });
    nothing_left(&user);
}
