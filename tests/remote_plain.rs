//! The test infrastructure for shells of other users, hosts and containers (issue 16:
//! tests/common/remote.rs), proven with the plain programs in a recorded bash: `ssh` to a
//! throwaway OpenSSH server on a loopback port, `sudo -u USER -i`, `su - USER` and the
//! `docker exec` stand-in each start a shell as a fresh user, and today, without nesting, the
//! whole session is one record of the command typed, holding what the shell printed, with its
//! last command's status.

mod common;

use common::remote::{Sshd, TestUser, fake_container_bin};
use common::*;
use omnish::store::CommandRecord;
use std::process::{Command, Stdio};

/// The machine's hostname: what a shell started by ssh, sudo or su prints.
fn this_host() -> String {
    nix::unistd::gethostname().unwrap().into_string().unwrap()
}

/// What [`login_session`] found.
struct Session {
    record: CommandRecord,
    /// Its output as the terminal showed it, line by line.
    lines: Vec<String>,
}

/// Types `line` in the recorded bash (a command that starts an interactive `comm`, "bash" or
/// "zsh", as `user`), waits for that shell's line editor, runs `echo remote-$((6*7)); hostname;
/// whoami; false` there and leaves it with `exit`; returns the record of `line`, once the
/// recorded bash's prompt is back.
fn login_session(h: &mut Harness, user: &TestUser, line: &str, comm: &str) -> Session {
    let prompts = h.screen().matches(PROMPT).count();
    let mark = h.mark();
    h.type_line(line);
    if comm == "zsh" {
        // The user's home has no zsh startup file (only /etc/skel's).
        user.answer_zsh_newuser(h, mark);
    }
    user.wait_line_editor(h, comm);
    h.type_line("echo remote-$((6*7)); hostname; whoami; false");
    // (The command line's echo holds `remote-$((6*7))`, and the user's name only before `@`.)
    let whoami = format!("\n{}\r\n", user.name);
    h.wait_until("the remote commands' output", || {
        let screen = h.screen_since(mark);
        screen.contains("remote-42\r\n") && screen.contains(&whoami)
    });
    // Back at its line editor after `false`: `exit` is its next line, not type-ahead.
    user.wait_line_editor(h, comm);
    h.type_line("exit");
    h.wait_prompts(prompts + 1);
    let mut record = None;
    h.wait_until(&format!("the record of {line:?}"), || {
        record = h.records().into_iter().find(|r| r.command_line == line);
        record.is_some()
    });
    let record = record.unwrap();
    let lines = omnish::term::render::render(&h.output(&record), 80, 24);
    Session { record, lines }
}

/// The checks every login session shares: one record of `line`, the whole session, with the
/// status of its last command (`false`), its output holding the commands' output.
fn assert_one_record(h: &Harness, s: &Session, line: &str, user: &TestUser, host: &str) {
    let recs = h.records();
    assert_eq!(
        recs.iter()
            .map(|r| r.command_line.as_str())
            .collect::<Vec<_>>(),
        [line],
        "the session is one record: {recs:#?}"
    );
    assert_eq!(s.record.exit_code, Some(1), "{:?}", s.record);
    assert_eq!((s.record.depth, s.record.nested_in.as_deref()), (0, None));
    for want in ["remote-42", host, &user.name] {
        assert!(
            s.lines.iter().any(|l| l == want),
            "no line {want:?} in {:#?}",
            s.lines
        );
    }
}

#[test]
fn ssh_to_a_bash_user_is_one_record() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let mut h = Harness::bash(&[]);
    sshd.client_config(h.home.path());
    let line = format!("ssh {}", user.name);
    let s = login_session(&mut h, &user, &line, "bash");
    assert_one_record(&h, &s, &line, &user, &this_host());
    assert!(
        sshd.log()
            .contains(&format!("Accepted publickey for {}", user.name)),
        "{}",
        sshd.log()
    );
}

#[test]
fn ssh_to_a_zsh_user_is_one_record() {
    if !require("zsh") {
        return;
    }
    let Some(user) = TestUser::create("/usr/bin/zsh") else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let mut h = Harness::bash(&[]);
    sshd.client_config(h.home.path());
    let line = format!("ssh {}", user.name);
    let s = login_session(&mut h, &user, &line, "zsh");
    assert_one_record(&h, &s, &line, &user, &this_host());
}

#[test]
fn ssh_with_a_command_is_one_record_and_leftovers_are_seen() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    // Its home holds what /etc/skel holds, nothing more: nothing of omnish.
    let mut skel: Vec<String> = Vec::new();
    for e in std::fs::read_dir("/etc/skel").unwrap() {
        skel.push(e.unwrap().file_name().to_string_lossy().into_owned());
    }
    skel.sort();
    assert_eq!(user.files(), skel);
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let mut h = Harness::bash(&[]);
    sshd.client_config(h.home.path());
    let line = format!("ssh {} 'echo one-shot'", user.name);
    let r = h.run(&line);
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        (line.as_str(), Some(0))
    );
    assert_eq!(h.output_text(&r), "one-shot\r\n");
    // What a session leaves on the "remote" shows in files(): in /tmp and in the home.
    let left = format!("/tmp/omnish-left-{}", user.name);
    h.run(&format!(
        "ssh {} 'touch {left} .left-in-home; echo made'",
        user.name
    ));
    let files = user.files();
    assert!(files.contains(&left), "{files:?}");
    assert!(files.contains(&".left-in-home".to_string()), "{files:?}");
    assert_eq!(h.records().len(), 2, "{:#?}", h.records());
    // Gone with the user: the account, its home and what it left in /tmp.
    let (name, home) = (user.name.clone(), user.home.clone());
    drop(sshd);
    drop(user);
    assert!(nix::unistd::User::from_name(&name).unwrap().is_none());
    assert!(!home.exists() && !std::path::Path::new(&left).exists());
}

#[test]
fn ssh_with_force_command_runs_the_forced_command() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let forced = format!("Match User {}\n    ForceCommand echo forced\n", user.name);
    let Some(sshd) = Sshd::start_with(&[&user], &forced) else {
        return;
    };
    let mut h = Harness::bash(&[]);
    sshd.client_config(h.home.path());
    let line = format!("ssh {}", user.name);
    let r = h.run(&line);
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        (line.as_str(), Some(0))
    );
    assert_eq!(h.output_text(&r), "forced\r\n");
    let line = format!("ssh {} whoami", user.name);
    let r = h.run(&line);
    assert_eq!(h.output_text(&r), "forced\r\n");
}

#[test]
fn the_server_lets_in_only_its_users() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let Some(other) = TestUser::create("/bin/bash") else {
        return;
    };
    let Some(sshd) = Sshd::start(&[&user]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    sshd.client_config(home.path());
    let ssh = |target: &str| {
        Command::new("ssh")
            .args(["-F", &home.path().join(".ssh/config").display().to_string()])
            .args(["-o", "BatchMode=yes"])
            .args(["-o", "StrictHostKeyChecking=yes"])
            .args(["-i", &sshd.client_key.display().to_string()])
            .args(["-o", "IdentitiesOnly=yes"])
            .args([
                "-o",
                &format!(
                    "UserKnownHostsFile={}/.ssh/known_hosts",
                    home.path().display()
                ),
            ])
            .args(["-p", &sshd.port.to_string(), target, "whoami"])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let ok = ssh(&format!("{}@127.0.0.1", user.name));
    assert_eq!(ok_stdout(ok), format!("{}\n", user.name));
    // Another user, with the same key authorized: not in AllowUsers.
    let authorized = sshd.dir.path().join("authorized");
    std::fs::copy(authorized.join(&user.name), authorized.join(&other.name)).unwrap();
    let refused = ssh(&format!("{}@127.0.0.1", other.name));
    assert_eq!(refused.status.code(), Some(255), "{refused:?}");
    let said = format!(
        "User {} from 127.0.0.1 not allowed because not listed in AllowUsers",
        other.name
    );
    assert!(sshd.log().contains(&said), "{}", sshd.log());
    // Only on 127.0.0.1 (and no IPv6 socket).
    let listening = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let port = format!(":{:04X} ", sshd.port);
    let lines: Vec<&str> = listening
        .lines()
        .filter(|l| l.contains(&port) && l.split_whitespace().nth(3) == Some("0A"))
        .collect();
    assert!(
        !lines.is_empty() && lines.iter().all(|l| l.contains(&format!("0100007F{port}"))),
        "{lines:?}"
    );
    let tcp6 = std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    assert!(
        !tcp6
            .lines()
            .any(|l| l.contains(&port) && l.split_whitespace().nth(3) == Some("0A")),
        "{tcp6}"
    );
    // Gone on drop: the port is closed.
    let port = sshd.port;
    drop(sshd);
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn sudo_to_a_user_is_one_record() {
    if !require("sudo") {
        return;
    }
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let mut h = Harness::bash(&[]);
    let line = format!("sudo -u {} -i", user.name);
    let s = login_session(&mut h, &user, &line, "bash");
    assert_one_record(&h, &s, &line, &user, &this_host());
}

#[test]
fn su_to_a_user_is_one_record() {
    if !require("su") {
        return;
    }
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let mut h = Harness::bash(&[]);
    let line = format!("su - {}", user.name);
    let s = login_session(&mut h, &user, &line, "bash");
    assert_one_record(&h, &s, &line, &user, &this_host());
}

/// A recorded bash with the `docker exec` stand-in first on its PATH, or None (skipped).
fn bash_with_docker() -> Option<(Harness, tempfile::TempDir)> {
    let bin = tempfile::tempdir().unwrap();
    fake_container_bin(bin.path())?;
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let h = Harness::start_with(
        &["bash"],
        &[(".bashrc", "PS1='READY> '\n")],
        &[("PATH", &path)],
    );
    h.wait_prompts(1);
    Some((h, bin))
}

#[test]
fn docker_exec_stand_in_is_one_record() {
    let Some(user) = TestUser::create("/bin/bash") else {
        return;
    };
    let Some((mut h, _bin)) = bash_with_docker() else {
        return;
    };
    let line = format!("docker exec -it -u {} ctr1 bash", user.name);
    let s = login_session(&mut h, &user, &line, "bash");
    assert_one_record(&h, &s, &line, &user, "ctr1");
    // The machine's own hostname is untouched.
    assert_ne!(this_host(), "ctr1");
}

#[test]
fn docker_exec_stand_in_runs_as_the_user_in_its_container() {
    let Some(user) = TestUser::create("/bin/sh") else {
        return;
    };
    let bin = tempfile::tempdir().unwrap();
    let Some(docker) = fake_container_bin(bin.path()) else {
        return;
    };
    let run = |args: &[&str]| {
        Command::new(&docker)
            .args(args)
            .env("OUTSIDE", "1")
            .env("TERM", "xterm-test")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let script = "echo \"$(whoami) $(hostname) $(pwd) $HOME $USER $SHELL $TERM [$OUTSIDE] $A $B\"";
    let out = run(&[
        "exec",
        "-i",
        "-t",
        "--user",
        &user.name,
        "-e",
        "A=x y",
        "--env=B='q'",
        "-w",
        "/tmp",
        "box-2",
        "sh",
        "-c",
        script,
    ]);
    let want = format!(
        "{name} box-2 /tmp {home} {name} /bin/sh xterm-test [] x y 'q'\n",
        name = user.name,
        home = user.home.display()
    );
    assert_eq!(ok_stdout(out), want);
    // Defaults: root, in root's home.
    let out = run(&["exec", "-it", "c3", "sh", "-c", "id -u; pwd; hostname"]);
    assert_eq!(ok_stdout(out), "0\n/root\nc3\n");
    // The status of the command.
    assert_eq!(
        run(&["exec", "c", "sh", "-c", "exit 7"]).status.code(),
        Some(7)
    );
    // What it does not stand in for: status 125, as docker's own errors.
    for args in [
        &["run", "-it", "debian", "sh"][..],
        &["exec", "--privileged", "c", "sh"],
        &["exec", "-d", "c", "sh"],
        &["exec", "c"],
        &[],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(125), "{args:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).starts_with("docker: "),
            "{out:?}"
        );
    }
    let out = run(&["exec", "-u", "omnish-no-such-user", "c", "true"]);
    assert_eq!(out.status.code(), Some(126), "{out:?}");
}
