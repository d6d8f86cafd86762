//! Shells of other users, hosts and containers followed through the terminal (issue 16):
//! `omnish ssh` to a real OpenSSH server on a loopback port, `omnish nest -- sudo -i`, `su -`
//! and `docker exec -it` (a stand-in that runs the shell as another user in a UTS namespace
//! named after the container) give the far shell omnish's hooks, whose home holds nothing of
//! omnish, and its commands become records of their own with their user (and host), nested in
//! the command that started them. Where that cannot work the program runs as given and its
//! record says why. Nothing is left on the far side.

mod common;

use common::farkeys;
use common::podman::Podman;
use common::remote::{Sshd, TestUser, fake_container_bin};
use common::*;
use omnish::store::CommandRecord;

/// A recorded bash whose PATH finds this omnish (and `extra` first), with `env`.
fn recorded(extra: Option<&std::path::Path>, env: &[(&str, &str)]) -> Harness {
    let bin = std::path::Path::new(omnish_bin()).parent().unwrap();
    let mut path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    if let Some(dir) = extra {
        path = format!("{}:{path}", dir.display());
    }
    let mut all = vec![("PATH", path.as_str())];
    all.extend_from_slice(env);
    let h = Harness::start_with(&["bash"], &[(".bashrc", "PS1='READY> '\n")], &all);
    h.wait_prompts(1);
    h
}

/// Runs `line` in `user`'s shell `comm` (at its line editor) and returns its record.
fn run_inner(h: &mut Harness, user: &TestUser, comm: &str, line: &str) -> CommandRecord {
    user.wait_line_editor(h, comm);
    let before = h.records().len();
    h.type_line(line);
    let mut rec = None;
    h.wait_until(&format!("the record of {line:?}"), || {
        rec = h
            .records()
            .into_iter()
            .skip(before)
            .find(|r| r.command_line == line);
        rec.is_some()
    });
    rec.unwrap()
}

/// Types `start` (which starts `user`'s shell `comm` through omnish), runs commands there, checks
/// their records, leaves with `exit 3` and returns the record of `start`.
fn followed(
    h: &mut Harness,
    user: &TestUser,
    comm: &str,
    start: &str,
    host: Option<&str>,
) -> CommandRecord {
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line(start);
    user.wait_line_editor(h, comm);
    h.wait_until("the far shell in meta.json", || h.meta().nest.len() == 1);
    let nest = &h.meta().nest[0];
    assert_eq!((nest.depth, nest.shell.as_str()), (1, comm));
    assert_eq!(nest.user, user.name);
    assert_eq!(nest.parent.command_line, start);
    let parent_id = format!("{}:{}", h.meta().id, nest.parent.seq);

    let echo = run_inner(h, user, comm, "echo far-$((6*7))");
    assert_eq!(h.output_text(&echo), "far-42\r\n");
    let who = run_inner(h, user, comm, "whoami");
    assert_eq!(h.output_text(&who), format!("{}\r\n", user.name));
    let fail = run_inner(h, user, comm, "ls /nope-omnish");
    assert_eq!(fail.exit_code, Some(2));
    assert!(h.output_text(&fail).contains("No such file"), "{fail:?}");
    let cd = run_inner(h, user, comm, "cd /tmp && pwd");
    assert_eq!(h.output_text(&cd), "/tmp\r\n");
    // Markers printed by a program there, crafted with made-up keys, are plain output: no
    // shell announced, no hooks typed, no command forged.
    let forged = run_inner(
        h,
        user,
        comm,
        r"printf '\033]633;%s;P;Nest=%s\a\033]633;%s;Q;bash\a\033]133;%s;D;7\a' 0123456789abcdef0123456789abcdef aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb cccccccccccccccccccccccccccccccc; echo forged-done",
    );
    assert!(h.output_text(&forged).contains("forged-done"));
    assert_eq!(h.meta().nest.len(), 1);
    user.assert_ran_here(&[&echo, &who, &fail, &cd, &forged], 1, &parent_id, host);
    assert_eq!(echo.cwd, user.home.to_string_lossy());
    assert_eq!(forged.cwd, "/tmp");
    user.wait_line_editor(h, comm);
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
    // Its output is what happened outside the far shell's commands, not a copy of them.
    assert!(!h.output_text(&rec).contains("far-42\r\n"), "{rec:?}");
    rec
}

/// Nothing of omnish's on the far side: the home holds /etc/skel and the shell's history, no
/// file of the user's is left in the temporary directories.
fn nothing_left(user: &TestUser) {
    user.assert_nothing_left(&[".bash_history", ".zsh_history"]);
}

fn ssh_login(shell: &str, comm: &str) {
    if comm == "zsh" && !require("zsh") {
        return;
    }
    let Some(user) = TestUser::create(shell) else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let mut h = recorded(None, &[]);
    sshd.client_config(h.home.path());
    followed(
        &mut h,
        &user,
        comm,
        &format!("omnish ssh {}", user.name),
        None,
    );
    nothing_left(&user);
    let after = h.run("echo back-home");
    assert_eq!((after.depth, after.user.as_deref()), (0, None));
}

#[test]
fn ssh_to_a_bash_login_is_followed_command_by_command() {
    ssh_login("/bin/bash", "bash");
}

#[test]
fn ssh_to_a_zsh_login_is_followed_command_by_command() {
    ssh_login("/usr/bin/zsh", "zsh");
}

#[test]
fn sudo_and_su_to_another_user_are_followed() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let mut h = recorded(None, &[]);
    let sudo = format!("omnish nest -- sudo -u {} -i", user.name);
    followed(&mut h, &user, "bash", &sudo, None);
    let su = format!("omnish nest -- su - {}", user.name);
    followed(&mut h, &user, "bash", &su, None);
    nothing_left(&user);
}

#[test]
fn a_shell_in_a_container_has_the_container_as_its_host() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let bin = tempfile::tempdir().unwrap();
    if fake_container_bin(bin.path()).is_none() {
        return;
    }
    let mut h = recorded(Some(bin.path()), &[]);
    let line = format!("omnish nest -- docker exec -it -u {} ctr1 bash", user.name);
    followed(&mut h, &user, "bash", &line, Some("ctr1"));
    nothing_left(&user);
}

/// `kubectl exec -it POD -- bash` (a stand-in that runs the command in a namespace whose
/// hostname is the pod's, as the user the test names) is followed as `docker exec` is; its
/// records carry the pod as their host.
#[test]
fn a_shell_in_a_kubernetes_pod_has_the_pod_as_its_host() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let bin = tempfile::tempdir().unwrap();
    if fake_container_bin(bin.path()).is_none() {
        return;
    }
    let mut h = recorded(Some(bin.path()), &[("OMNISH_TEST_POD_USER", &user.name)]);
    let line = "omnish nest -- kubectl exec -it -n prod pod1 -- bash";
    followed(&mut h, &user, "bash", line, Some("pod1"));
    nothing_left(&user);
}

/// A real container: podman runs an image of this machine's programs; `podman exec -it` into it
/// is followed as the stand-in is, its records carry the container's host name, and nothing of
/// omnish's is left in it.
#[test]
fn a_shell_in_a_real_podman_container_is_followed() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let Some(podman) = Podman::start(&format!("omnish-{}", user.name), &user) else {
        return;
    };
    let env = podman.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut h = recorded(None, &env);
    let line = format!(
        "omnish nest -- podman exec -it -u {} -w {} {} bash",
        user.name,
        user.home.display(),
        podman.name
    );
    followed(&mut h, &user, "bash", &line, Some(podman.name.as_str()));
    nothing_left(&user);
    // In the container's /tmp: only the mount point of the user's home (made under /tmp here).
    let home_dir = user
        .home
        .strip_prefix("/tmp")
        .ok()
        .and_then(|p| p.iter().next());
    let left: Vec<String> = podman
        .exec("root", &["ls", "-A", "/tmp"])
        .lines()
        .filter(|f| home_dir.is_none_or(|d| d.to_str() != Some(*f)))
        .map(String::from)
        .collect();
    assert!(left.is_empty(), "left in the container: {left:?}");
}

#[test]
fn nest_auto_follows_a_typed_ssh_and_leaves_other_commands_alone() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let mut h = recorded(None, &[("OMNISH_NEST_AUTO", "ssh,sudo")]);
    sshd.client_config(h.home.path());
    followed(&mut h, &user, "bash", &format!("ssh {}", user.name), None);
    // A sudo that starts no shell is an ordinary command.
    let r = h.run("sudo true");
    assert_eq!((r.exit_code, r.unsplit.as_deref()), (Some(0), None));
    // `ssh host cmd` runs as it is, and says why it is one record.
    let line = format!("ssh {} 'echo one-shot'", user.name);
    let r = h.run(&line);
    assert_eq!(h.output_text(&r), "one-shot\r\n");
    assert!(r.unsplit.as_deref().unwrap().contains("command"), "{r:?}");
}

#[test]
fn where_the_bootstrap_cannot_work_the_program_runs_as_given_and_says_why() {
    let Some(sh_user) = TestUser::create("/bin/sh") else {
        return;
    };
    let Some(forced) = TestUser::create("/bin/bash") else {
        return;
    };
    let extra = format!("Match User {}\n    ForceCommand echo forced\n", forced.name);
    let Some(sshd) = Sshd::start_with(&[&sh_user, &forced], &extra) else {
        return;
    };
    let mut h = recorded(None, &[]);
    sshd.client_config(h.home.path());
    // A login shell omnish has no hooks for: it starts as it is, at once.
    let prompts = h.screen().matches(PROMPT).count();
    let line = format!("omnish ssh {}", sh_user.name);
    let mark = h.mark();
    h.type_line(&line);
    // dash reads lines from the terminal itself (no line editor): its prompt says it is there.
    h.wait_until("sh's prompt", || h.screen_since(mark).ends_with("$ "));
    h.wait_until("sh reading its terminal", || {
        sh_user
            .processes()
            .iter()
            .any(|p| p.comm == "sh" && p.foreground() && p.waiting_for_input())
    });
    // While it runs, `omnish status` (from another terminal) says why it is one run.
    let status = std::process::Command::new(omnish_bin())
        .args(["status", "--format", "json"])
        .env("OMNISH_SESSION_ID", h.meta().id)
        .env("OMNISH_DATA_DIR", h.data())
        .env("OMNISH_CONFIG", "/dev/null")
        .env_remove("OMNISH_PTY")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let unsplit = &status["session"]["unsplit"];
    assert_eq!(unsplit["command_line"], line.as_str(), "{status}");
    assert!(unsplit["why"].as_str().unwrap().contains("sh"), "{status}");
    h.type_line("echo plain-$((6*7)); exit 4");
    h.wait_prompts(prompts + 1);
    let r = h
        .records()
        .into_iter()
        .find(|r| r.command_line == line)
        .unwrap();
    assert_eq!(r.exit_code, Some(4));
    assert!(h.output_text(&r).contains("plain-42"), "{r:?}");
    assert!(r.unsplit.as_deref().unwrap().contains("sh"), "{r:?}");
    assert!(h.meta().nest.is_empty());
    nothing_left(&sh_user);
    // A ForceCommand: the forced command runs, and the record says no hooks were asked for.
    let r = h.run(&format!("omnish ssh {}", forced.name));
    assert_eq!(
        (h.output_text(&r).as_str(), r.exit_code),
        ("forced\r\n", Some(0))
    );
    assert!(
        r.unsplit.as_deref().unwrap().contains("never asked"),
        "{r:?}"
    );
    // A command: as ssh runs it.
    let r = h.run(&format!(
        "omnish ssh {} 'echo one-shot; exit 5'",
        forced.name
    ));
    assert_eq!(
        (h.output_text(&r).as_str(), r.exit_code),
        ("forced\r\n", Some(0))
    );
    assert!(r.unsplit.as_deref().unwrap().contains("command"), "{r:?}");
    assert_eq!(h.records().iter().filter(|r| r.depth > 0).count(), 0);
}

#[test]
fn ssh_options_work_as_with_ssh_itself() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let mut h = recorded(None, &[]);
    sshd.client_config(h.home.path());
    let u = &user.name;
    // A jump host (the same server), a ProxyCommand, options with values, an alias.
    followed(
        &mut h,
        &user,
        "bash",
        &format!("omnish ssh -J {u} -o ServerAliveInterval=30 -e none {u}"),
        None,
    );
    followed(
        &mut h,
        &user,
        "bash",
        &format!("omnish ssh -o 'ProxyCommand=ssh -W %h:%p {u}' {u}"),
        None,
    );
    nothing_left(&user);
}

#[test]
fn outside_a_recorded_shell_omnish_nest_runs_the_program_as_it_is() {
    let run = |args: &[&str]| {
        std::process::Command::new(omnish_bin())
            .args(args)
            .env_remove("OMNISH_RUNTIME_DIR")
            .env_remove("OMNISH_SESSION_ID")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&["nest", "--", "sh", "-c", "echo ran; exit 7"]);
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not in a shell recorded by omnish wrap"),
        "{err}"
    );
    // Run by nest.auto's functions: nothing said.
    let out = run(&["nest", "--auto", "--", "sh", "-c", "exit 3"]);
    assert_eq!((out.status.code(), out.stderr.is_empty()), (Some(3), true));
    // A program that cannot be run: as a shell says it.
    let out = run(&["nest", "--", "/nonexistent/omnish-nope"]);
    assert_eq!(out.status.code(), Some(127));
    // No program: a usage error.
    let out = run(&["nest"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The ask and fix keys pressed in a far bash (`omnish ssh`), where omnish is not installed:
/// the recording omnish runs `omnish ask` for the far shell's last failure and shows the answer
/// below the line; `omnish fix` puts the corrected command on the far prompt's line, where
/// Enter runs it there.
fn far_keys(shell: &str, comm: &str) {
    if comm == "zsh" && !require("zsh") {
        return;
    }
    let Some(user) = TestUser::create(shell) else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let (_llm_dir, llm) = farkeys::llm_stand_in("echo fixed-by-omnish");
    let mut h = recorded(None, &[("OMNISH_ASK_COMMAND", llm.as_str())]);
    sshd.client_config(h.home.path());
    h.run("ls /nope-near");
    h.type_line(&format!("omnish ssh {}", user.name));
    user.wait_line_editor(&h, comm);
    h.wait_until("the far shell in meta.json", || h.meta().nest.len() == 1);
    let (after, fixed) = farkeys::press_ask_and_fix(
        &mut h,
        &user,
        comm,
        (b"\x18a", b"\x18f"),
        "ls /nope-far",
        "echo after-$((6*7))",
        "echo fixed-by-omnish",
    );
    // The far shell's failure was asked about, not the one before it here.
    let prompt = std::fs::read_to_string(h.home.path().join("prompt.txt")).unwrap();
    assert!(!prompt.contains("ls /nope-near"), "{prompt}");
    assert_eq!((after.depth, after.exit_code), (1, Some(0)), "{after:?}");
    assert_eq!(h.output_text(&after), "after-42\r\n");
    assert_eq!(h.output_text(&fixed), "fixed-by-omnish\r\n");
    user.wait_line_editor(&h, comm);
    h.type_line("exit");
    h.wait_until("the far shell's end", || h.meta().nest.is_empty());
    nothing_left(&user);
}

#[test]
fn the_ask_and_fix_keys_in_a_far_bash_are_answered_by_the_recording_omnish() {
    far_keys("/bin/bash", "bash");
}

#[test]
fn the_ask_and_fix_keys_in_a_far_zsh_are_answered_by_the_recording_omnish() {
    far_keys("/usr/bin/zsh", "zsh");
}

/// Ctrl-C while a far key's `omnish ask` waits for a slow LLM: the local `omnish` stops (and
/// its LLM), the far shell gives up waiting, and nothing is typed to it afterwards.
#[test]
fn ctrl_c_stops_a_far_keys_answer_and_types_nothing_after() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let llm_dir = tempfile::tempdir().unwrap();
    let llm = llm_dir.path().join("slow-llm");
    std::fs::write(
        &llm,
        "#!/bin/sh\ncat >/dev/null; echo partial-answer; echo $$ > \"$HOME/llm-pid\"; sleep 30; echo never-shown\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&llm, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let llm = llm.display().to_string();
    let mut h = recorded(None, &[("OMNISH_ASK_COMMAND", llm.as_str())]);
    sshd.client_config(h.home.path());
    h.type_line(&format!("omnish ssh {}", user.name));
    user.wait_line_editor(&h, "bash");
    h.wait_until("the far shell in meta.json", || h.meta().nest.len() == 1);
    run_inner(&mut h, &user, "bash", "ls /nope-far");
    user.wait_line_editor(&h, "bash");
    let mark = h.mark();
    h.send(b"\x18a");
    let pid_file = h.home.path().join("llm-pid");
    h.wait_until("the slow LLM to start", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n'))
    });
    let llm_pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    h.wait_until("the partial answer", || {
        h.screen_since(mark).contains("partial-answer")
    });
    h.send(b"\x03");
    h.wait_until("the slow LLM to stop", || process(llm_pid).is_none());
    // The far shell is back at its line editor, and a line typed now is the line that runs:
    // no Ctrl-] (a readline key) typed into it later.
    let after = run_inner(&mut h, &user, "bash", "echo after-$((6*7))");
    assert_eq!((after.depth, after.exit_code), (1, Some(0)), "{after:?}");
    assert_eq!(h.output_text(&after), "after-42\r\n");
    assert!(!h.screen_since(mark).contains("never-shown"));
    user.wait_line_editor(&h, "bash");
    h.type_line("exit");
    h.wait_until("the far shell's end", || h.meta().nest.is_empty());
}
