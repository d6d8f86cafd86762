//! nushell as the far shell of `omnish nest` (issue 16; issue 17's nushell half): `omnish ssh`
//! to a real OpenSSH server on a loopback port, logging in as a user whose login shell is nu
//! and whose home holds nothing of omnish. sshd runs the bootstrap through nu (`nu -c`), the far
//! nu gets the hooks through the terminal, its commands become records of their own with their
//! user, nested in the `omnish ssh` command, and nothing of omnish is left on the far side.

mod common;

use common::farkeys;
use common::remote::{Sshd, TestUser};
use common::*;
use omnish::store::CommandRecord;

/// A record's output as the terminal showed it.
fn shown(h: &Harness, r: &CommandRecord) -> String {
    omnish::term::render::render(&h.output(r), 80, 24).join("\n")
}

#[test]
fn ssh_to_a_nu_login_is_followed_command_by_command() {
    if !require("nu") {
        return;
    }
    let nu = which("nu");
    let Some(user) = TestUser::create(&nu) else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let bin = std::path::Path::new(omnish_bin()).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut h = Harness::start_with(
        &["bash"],
        &[(".bashrc", "PS1='READY> '\n")],
        &[("PATH", path.as_str())],
    );
    h.wait_prompts(1);
    sshd.client_config(h.home.path());
    let start = format!("omnish ssh {}", user.name);
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line(&start);
    user.wait_line_editor(&h, "nu");
    h.wait_until("the far shell in meta.json", || h.meta().nest.len() == 1);
    let nest = &h.meta().nest[0];
    assert_eq!((nest.depth, nest.shell.as_str()), (1, "nu"));
    assert_eq!(nest.user, user.name);
    let parent_id = format!("{}:{}", h.meta().id, nest.parent.seq);

    let echo = farkeys::run_far(&mut h, &user, "nu", "print $\"far-(6 * 7)\"");
    assert_eq!(shown(&h, &echo), "far-42");
    let who = farkeys::run_far(&mut h, &user, "nu", "^whoami");
    assert_eq!(shown(&h, &who), user.name);
    let fail = farkeys::run_far(&mut h, &user, "nu", "^ls /nope-omnish");
    assert_eq!(fail.exit_code, Some(2));
    let cd = farkeys::run_far(&mut h, &user, "nu", "cd /tmp");
    let forged = farkeys::run_far(
        &mut h,
        &user,
        "nu",
        r"print -n $'(char esc)]633;0123456789abcdef0123456789abcdef;P;Nest=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa(char bel)(char esc)]133;cccccccccccccccccccccccccccccccc;D;7(char bel)'; print forged-done",
    );
    assert!(shown(&h, &forged).contains("forged-done"), "{forged:?}");
    assert_eq!(h.meta().nest.len(), 1);
    for r in [&echo, &who, &fail, &cd, &forged] {
        assert_eq!(r.depth, 1, "{r:?}");
        assert_eq!(r.nested_in.as_deref(), Some(parent_id.as_str()), "{r:?}");
        assert_eq!(r.user.as_deref(), Some(user.name.as_str()), "{r:?}");
    }
    assert_eq!(echo.cwd, user.home.to_string_lossy());
    assert_eq!(forged.cwd, "/tmp");
    user.wait_line_editor(&h, "nu");
    h.type_line("exit 3");
    h.wait_prompts(prompts + 1);
    let rec = h.wait_record("the record of the starting command", |r| {
        r.command_line == start
    });
    assert_eq!(
        (rec.exit_code, rec.unsplit.as_deref()),
        (Some(3), None),
        "{rec:?}"
    );
    // Nothing of omnish's on the far side: /etc/skel and what nu keeps in .config (its history).
    user.assert_nothing_left(&[".config", ".local", ".cache"]);
    let after = h.run("echo back-home");
    assert_eq!((after.depth, after.user.as_deref()), (0, None));
}

/// The absolute path of `program` on PATH (a login shell is named by its path).
fn which(program: &str) -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .map(|p| {
            std::fs::canonicalize(p)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_else(|| format!("/nonexistent/{program}"))
}

/// The ask and fix keys in a far nu (nushell's defaults: Alt-a, Alt-x): the recording omnish
/// answers them, as for bash, zsh and fish.
#[test]
fn the_ask_and_fix_keys_in_a_far_nu_are_answered_by_the_recording_omnish() {
    if !require("nu") {
        return;
    }
    let Some(user) = TestUser::create(&which("nu")) else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let (_llm_dir, llm) = farkeys::llm_stand_in("print fixed-by-omnish");
    let mut h = farkeys::ssh_session(&user, &sshd, "nu", &llm);
    let (after, fixed) = farkeys::press_ask_and_fix(
        &mut h,
        &user,
        "nu",
        (b"\x1ba", b"\x1bx"),
        "^ls /nope-far",
        "print $\"after-(6 * 7)\"",
        "print fixed-by-omnish",
    );
    assert_eq!(shown(&h, &after), "after-42");
    assert_eq!(shown(&h, &fixed), "fixed-by-omnish");
    farkeys::exit_far(&mut h, &user, "nu");
}
