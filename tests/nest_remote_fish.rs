//! fish as the far shell of `omnish nest` (issue 16, issue 17's fish half): `omnish ssh` to a
//! real OpenSSH server on a loopback port, logging in as a user whose login shell is fish and
//! whose home holds nothing of omnish. The far fish gets the hooks through the terminal, its
//! commands become records of their own with their user, nested in the `omnish ssh` command,
//! and nothing of omnish is left on the far side.

mod common;

use common::farkeys;
use common::remote::{Sshd, TestUser};
use common::*;
use omnish::store::CommandRecord;

/// A record's output as the terminal showed it (fish sets the title before each command).
fn shown(h: &Harness, r: &CommandRecord) -> String {
    omnish::term::render::render(&h.output(r), 80, 24).join("\n")
}

#[test]
fn ssh_to_a_fish_login_is_followed_command_by_command() {
    if !require("fish") {
        return;
    }
    let Some(user) = TestUser::create_for_fish("/usr/bin/fish") else {
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
    user.wait_line_editor(&h, "fish");
    h.wait_until("the far shell in meta.json", || h.meta().nest.len() == 1);
    let nest = &h.meta().nest[0];
    assert_eq!((nest.depth, nest.shell.as_str()), (1, "fish"));
    assert_eq!(nest.user, user.name);
    let parent_id = format!("{}:{}", h.meta().id, nest.parent.seq);

    let echo = farkeys::run_far(&mut h, &user, "fish", "echo far-(math 6 \\* 7)");
    assert_eq!(shown(&h, &echo), "far-42");
    let who = farkeys::run_far(&mut h, &user, "fish", "whoami");
    assert_eq!(shown(&h, &who), user.name);
    let fail = farkeys::run_far(&mut h, &user, "fish", "ls /nope-omnish");
    assert_eq!(fail.exit_code, Some(2));
    let cd = farkeys::run_far(&mut h, &user, "fish", "cd /tmp; and pwd");
    assert_eq!(shown(&h, &cd), "/tmp");
    // A line fish keeps out of its history is private: its record has no line.
    user.wait_line_editor(&h, "fish");
    let before = h.records().len();
    h.type_line(" echo far-private");
    let private = h.wait_records(before + 1).remove(before);
    let forged = farkeys::run_far(
        &mut h,
        &user,
        "fish",
        r"printf '\e]633;%s;P;Nest=%s\a\e]133;%s;D;7\a' 0123456789abcdef0123456789abcdef aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa cccccccccccccccccccccccccccccccc; echo forged-done",
    );
    assert!(shown(&h, &forged).contains("forged-done"));
    assert_eq!(h.meta().nest.len(), 1);
    for r in [&echo, &who, &fail, &cd, &forged] {
        assert_eq!(r.depth, 1, "{r:?}");
        assert_eq!(r.nested_in.as_deref(), Some(parent_id.as_str()), "{r:?}");
        assert_eq!(r.user.as_deref(), Some(user.name.as_str()), "{r:?}");
    }
    assert!(private.private, "{private:?}");
    assert_eq!(echo.cwd, user.home.to_string_lossy());
    assert_eq!(forged.cwd, "/tmp");
    user.wait_line_editor(&h, "fish");
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
    // Nothing of omnish's on the far side: /etc/skel and what fish keeps (.config, .local in
    // the home, and its universal variables' notifier in /tmp/fish.USER, as without omnish).
    user.assert_nothing_left(&[".config", ".local", ".cache"]);
    let after = h.run("echo back-home");
    assert_eq!((after.depth, after.user.as_deref()), (0, None));
}

/// The ask and fix keys in a far fish (fish's defaults: Ctrl-O a, Ctrl-O f): the recording
/// omnish answers them, as for bash and zsh (tests/nest_remote.rs).
#[test]
fn the_ask_and_fix_keys_in_a_far_fish_are_answered_by_the_recording_omnish() {
    if !require("fish") {
        return;
    }
    let Some(user) = TestUser::create_for_fish("/usr/bin/fish") else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let (_llm_dir, llm) = farkeys::llm_stand_in("echo fixed-by-omnish");
    let mut h = farkeys::ssh_session(&user, &sshd, "fish", &llm);
    let (after, fixed) = farkeys::press_ask_and_fix(
        &mut h,
        &user,
        "fish",
        (b"\x0fa", b"\x0ff"),
        "ls /nope-far",
        "echo after-(math 6 \\* 7)",
        "echo fixed-by-omnish",
    );
    assert_eq!(shown(&h, &after), "after-42");
    assert_eq!(shown(&h, &fixed), "fixed-by-omnish");
    farkeys::exit_far(&mut h, &user, "fish");
}
