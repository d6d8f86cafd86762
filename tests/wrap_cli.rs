//! `omnish wrap` from scripts and pipes: no terminal on either side.

mod common;

use common::*;
use std::process::{Command, Output};

fn omnish(home: &std::path::Path, args: &[&str], env: &[(&str, &str)], input: &str) -> Output {
    let mut cmd = Command::new(omnish_bin());
    cmd.args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap())
        .env("OMNISH_DATA_DIR", home.join("data"))
        .current_dir(home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_piped(cmd, input)
}

fn only_session(home: &std::path::Path) -> std::path::PathBuf {
    let s = omnish::store::list_sessions(&home.join("data")).unwrap();
    assert_eq!(s.len(), 1);
    s[0].clone()
}

#[test]
fn piped_lines_run_in_an_interactive_bash_and_exit_with_its_status() {
    let home = home_with(&[(".bashrc", "PS1='READY> '\n")]);
    let out = omnish(
        home.path(),
        &["wrap", "bash"],
        &[],
        "echo hi\nls /nonexistent\nexit 3\n",
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = only_session(home.path());
    let recs = omnish::store::read_commands(&dir).unwrap();
    let got: Vec<(&str, Option<i32>)> = recs
        .iter()
        .map(|r| (r.command_line.as_str(), r.exit_code))
        .collect();
    assert_eq!(
        got,
        [
            ("echo hi", Some(0)),
            ("ls /nonexistent", Some(2)),
            ("exit 3", Some(3))
        ]
    );
    assert_eq!(output_of(&dir, &recs[0]), b"hi\r\n");
    // Typed-ahead input is not echoed twice.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("echo hi").count(), 1, "{stdout}");
}

#[test]
fn piped_input_without_exit_ends_like_ctrl_d() {
    let home = home_with(&[(".bashrc", "PS1='READY> '\n")]);
    let out = omnish(home.path(), &["wrap", "bash"], &[], "false\n");
    assert_eq!(out.status.code(), Some(1));
    let recs = omnish::store::read_commands(&only_session(home.path())).unwrap();
    assert_eq!(recs.len(), 1);
}

#[test]
fn dash_c_runs_and_records_one_command() {
    let home = home_with(&[]);
    let out = omnish(
        home.path(),
        &["wrap", "bash", "-c", "echo out; echo err >&2; exit 4"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "out\r\nerr\r\n");
    let dir = only_session(home.path());
    let meta = omnish::store::read_meta(&dir).unwrap();
    assert!(!meta.hooked);
    assert_eq!(meta.argv, ["bash", "-c", "echo out; echo err >&2; exit 4"]);
    let recs = omnish::store::read_commands(&dir).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].command_line, "echo out; echo err >&2; exit 4");
    assert_eq!(recs[0].exit_code, Some(4));
    assert_eq!(output_of(&dir, &recs[0]), b"out\r\nerr\r\n");
}

#[test]
fn signal_death_is_128_plus_the_signal() {
    let home = home_with(&[]);
    let out = omnish(
        home.path(),
        &["wrap", "bash", "-c", "kill -TERM $$"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(143));
}

#[test]
fn default_shell_comes_from_the_shell_variable() {
    let home = home_with(&[(".bashrc", "PS1='READY> '\n")]);
    let out = omnish(
        home.path(),
        &["wrap"],
        &[("SHELL", "/bin/bash")],
        "echo $BASH_VERSION\n",
    );
    assert_eq!(out.status.code(), Some(0));
    let dir = only_session(home.path());
    assert_eq!(omnish::store::read_meta(&dir).unwrap().shell, "/bin/bash");
    assert_eq!(omnish::store::read_commands(&dir).unwrap().len(), 1);
}

#[test]
fn shells_without_hooks_are_recorded_whole() {
    let home = home_with(&[]);
    let out = omnish(home.path(), &["wrap", "sh"], &[], "echo from-sh\nexit 2\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hooks for bash, zsh"));
    let dir = only_session(home.path());
    let recs = omnish::store::read_commands(&dir).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].exit_code, Some(2));
    assert!(String::from_utf8_lossy(&output_of(&dir, &recs[0])).contains("from-sh"));
}

#[test]
fn an_unwritable_store_still_runs_the_shell() {
    let home = home_with(&[]);
    let blocker = home.path().join("not-a-dir");
    std::fs::write(&blocker, "").unwrap();
    let data = blocker.join("data");
    let out = omnish(
        home.path(),
        &["wrap", "bash", "-c", "echo ran; exit 5"],
        &[("OMNISH_DATA_DIR", data.to_str().unwrap())],
        "",
    );
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\r\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cannot record"), "{err}");
}

#[test]
fn nested_wrap_without_a_terminal_runs_plainly() {
    let home = home_with(&[]);
    let out = omnish(
        home.path(),
        &["wrap", "bash", "-c", "echo plain; exit 6"],
        &[("OMNISH_SESSION_ID", "outer")],
        "",
    );
    assert_eq!(out.status.code(), Some(6));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "plain\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("already recorded by session outer"));
    assert!(
        omnish::store::list_sessions(&home.path().join("data"))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_missing_shell_is_a_clear_error() {
    let home = home_with(&[]);
    for shell in ["/no/such/shell", "no-such-shell"] {
        let out = omnish(home.path(), &["wrap", shell], &[], "");
        assert_eq!(out.status.code(), Some(127));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("omnish: cannot run shell '{shell}'")),
            "{err}"
        );
    }
    // Nothing was recorded for a shell that never ran.
    assert!(!home.path().join("data").exists());
}

#[test]
fn without_a_shell_variable_it_runs_bin_sh() {
    let home = home_with(&[]);
    let mut cmd = Command::new(omnish_bin());
    cmd.arg("wrap")
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var("PATH").unwrap())
        .env("OMNISH_DATA_DIR", home.path().join("data"))
        .current_dir(home.path());
    let out = run_piped(cmd, "echo from-default-shell\nexit 7\n");
    assert_eq!(out.status.code(), Some(7));
    let meta = omnish::store::read_meta(&only_session(home.path())).unwrap();
    assert_eq!(meta.shell, "/bin/sh");
    assert!(String::from_utf8_lossy(&out.stdout).contains("from-default-shell"));
}
