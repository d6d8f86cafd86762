//! Privacy the user controls (issue 19): `omnish pause` / `omnish resume` typed in the recorded
//! shell, `omnish wrap --paused`, and `record.ignore`. Real bash and zsh in a real
//! pseudo-terminal: what ran while paused (or matched a pattern) leaves its times and status,
//! and nothing of its line, output or keys in any file of the store, nor in what `context` and
//! `search` show; what ran before and after is recorded as ever.

mod common;

use common::*;
use std::process::{Command, Output};

/// Every byte omnish wrote for the session, as text.
fn session_files(h: &Harness) -> String {
    session_text(&h.session_dir())
}

/// `omnish ARGS` from a second terminal, as the session's shell would see it
/// (`OMNISH_SESSION_ID` set: `status` describes this session).
fn omnish(h: &Harness, args: &[&str]) -> Output {
    let mut cmd = Command::new(omnish_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("LANG", "C.UTF-8")
        .env("OMNISH_DATA_DIR", h.data())
        .env("OMNISH_SESSION_ID", h.meta().id)
        .current_dir(h.home.path());
    run_piped(cmd, "")
}

/// Nothing of `secret` anywhere omnish wrote, nor in what `context` and `search` show.
fn assert_nowhere(h: &Harness, secret: &str) {
    let files = session_files(h);
    assert!(!files.contains(secret), "{secret} on disk: {files:?}");
    let shown = ok_stdout(omnish(h, &["context", "--recent", "50", "--no-redact"]));
    assert!(!shown.contains(secret), "{shown}");
    let found = omnish(h, &["search", "-F", secret]);
    assert_eq!(found.status.code(), Some(1), "{found:?}");
}

fn status_json(h: &Harness) -> serde_json::Value {
    serde_json::from_str(&ok_stdout(omnish(h, &["status", "--format", "json"]))).unwrap()
}

/// pause, a command that prints, one that reads keys, resume: the two in between are kept as
/// paused private commands with their status, and nothing else of them.
fn pause_and_resume(mut h: Harness) {
    let bin = omnish_bin();
    let before = h.run("echo kept-before");
    assert!(!before.private);
    let pause = h.run(&format!("{bin} pause 30m"));
    assert!(!pause.paused && pause.exit_code == Some(0), "{pause:?}");
    assert!(
        h.screen().contains("recording paused for 30m"),
        "{}",
        h.screen()
    );
    let paused = status_json(&h)["session"]["paused"].clone();
    assert!(paused["until"].as_u64().is_some(), "{paused}");
    let text = ok_stdout(omnish(&h, &["status"]));
    assert!(text.contains("paused    since"), "{text}");

    let out = h.run("echo SEC$((6*7))RET-printed; false && line-secret-zq");
    assert!(out.private && out.paused, "{out:?}");
    assert_eq!(
        (out.exit_code, out.command_line.as_str(), out.stream_length),
        (Some(1), "", 0)
    );
    // Keys typed into a paused command that reads them.
    let n = h.records().len();
    h.type_line("read -r v; echo got-${#v}");
    h.wait_until("the read running", || {
        h.meta()
            .running_command
            .is_some_and(|c| c.seq == n as u64 + 1)
    });
    h.type_line("typed-secret-kk");
    h.wait_screen("got-15");
    let read = h.wait_records(n + 1).pop().unwrap();
    assert!(read.paused, "{read:?}");

    let resume = h.run(&format!("{bin} resume"));
    assert!(resume.paused, "resume runs paused: {resume:?}");
    assert!(h.screen().contains("recording resumed"));
    assert!(status_json(&h)["session"]["paused"].is_null());
    let after = h.run("echo kept-after");
    assert!(!after.private && !after.paused, "{after:?}");
    assert_eq!(h.output_text(&after), "kept-after\r\n");

    for secret in ["SEC42RET", "line-secret-zq", "typed-secret-kk", "got-15"] {
        assert_nowhere(&h, secret);
    }
    let files = session_files(&h);
    assert!(files.contains("kept-before") && files.contains("kept-after"));
    let shown = ok_stdout(omnish(&h, &["context", "--recent", "50"]));
    assert!(shown.contains("[command run while paused]"), "{shown}");
}

#[test]
fn bash_pause_keeps_nothing_until_resume() {
    pause_and_resume(Harness::bash(&[]));
}

#[test]
fn zsh_pause_keeps_nothing_until_resume() {
    if !require("zsh") {
        return;
    }
    pause_and_resume(Harness::zsh(&[]));
}

#[test]
fn wrap_paused_starts_paused() {
    let mut h = Harness::start(&["--paused", "bash"], &[(".bashrc", "PS1='READY> '\n")]);
    h.wait_prompts(1);
    assert!(status_json(&h)["session"]["paused"]["since"].is_u64());
    let first = h.run("echo first-secret-pp");
    assert!(first.paused, "{first:?}");
    h.run(&format!("{} resume", omnish_bin()));
    let later = h.run("echo later-kept");
    assert!(!later.paused);
    assert_nowhere(&h, "first-secret-pp");
    assert!(session_files(&h).contains("later-kept"));
}

#[test]
fn pause_outside_a_recorded_shell_says_so_and_fails() {
    let out = Command::new(omnish_bin())
        .arg("pause")
        .env_remove("OMNISH_RUNTIME_DIR")
        .env_remove("OMNISH_SESSION_ID")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not in a shell recorded by omnish wrap"),
        "{err}"
    );
    // A bad duration is a usage error.
    let out = Command::new(omnish_bin())
        .args(["pause", "soon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// `record.ignore` patterns: a matching line is private (no line, output or cwd), whatever the
/// shell's history does with it; others are kept.
fn ignore(shell: &str, rc: (&str, &str)) {
    let h = Harness::start_with(
        &[shell],
        &[rc],
        &[("OMNISH_RECORD_IGNORE", "pass *, *vault read*")],
    );
    h.wait_prompts(1);
    let mut h = h;
    let hidden = h.run("pass show prod/db-zz");
    assert!(hidden.private && !hidden.paused, "{hidden:?}");
    assert_eq!(hidden.exit_code, Some(0));
    let piped = h.run("echo x | vault read secret/v-zz; true");
    assert!(piped.private, "{piped:?}");
    let kept = h.run("echo passport-kept");
    assert!(!kept.private);
    for secret in ["prod/db-zz", "pw-42-SECRET", "secret/v-zz"] {
        assert_nowhere(&h, secret);
    }
    assert!(session_files(&h).contains("passport-kept"));
}

const PASS: &str = "pass() { printf 'pw-%s\\n' \"$((40+2))-SECRET\"; }\nvault() { cat >/dev/null; echo \"$2\"; }\n";

#[test]
fn bash_record_ignore_keeps_matching_commands_private() {
    ignore("bash", (".bashrc", &format!("PS1='READY> '\n{PASS}")));
}

#[test]
fn zsh_record_ignore_keeps_matching_commands_private() {
    if !require("zsh") {
        return;
    }
    ignore("zsh", (".zshrc", &format!("PROMPT='READY> '\n{PASS}")));
}

/// `omnish ARGS` from a second terminal with `input` on stdin.
fn omnish_with(h: &Harness, args: &[&str], input: &str) -> Output {
    let mut cmd = Command::new(omnish_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("LANG", "C.UTF-8")
        .env("OMNISH_DATA_DIR", h.data())
        .current_dir(h.home.path());
    run_piped(cmd, input)
}

/// forget by id and by pattern, on the live session while it records, from another terminal:
/// the lines and output are gone from every file, the rest (and what is recorded after) intact.
#[test]
fn bash_forget_on_a_live_session_destroys_only_what_it_names() {
    forget_on_a_live_session(Harness::bash(&[]));
}

#[test]
fn zsh_forget_on_a_live_session_destroys_only_what_it_names() {
    if !require("zsh") {
        return;
    }
    forget_on_a_live_session(Harness::zsh(&[]));
}

fn forget_on_a_live_session(mut h: Harness) {
    let keep = h.run("echo keep-before-zz");
    let gone = h.run("echo forget-by-id-$((40+2))-zz");
    let also = h.run("printf 'grep-target-%s\\n' zz-$((6*7))");
    // Caches made by a search that sees them.
    let seen = omnish(&h, &["search", "-F", "forget-by-id-42-zz"]);
    assert_eq!(seen.status.code(), Some(0), "{seen:?}");
    let id = format!("{}:{}", h.meta().id, gone.seq);
    // A dry run changes nothing.
    let dry = omnish_with(&h, &["forget", "--dry-run", &id], "");
    assert!(ok_stdout(dry).contains(&format!("would forget {id}")));
    assert!(session_files(&h).contains("forget-by-id-42-zz"));

    let out = omnish_with(&h, &["forget", &id], "");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = omnish_with(&h, &["forget", "--grep", "grep-target-zz"], "");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!(":{}", also.seq)));
    // Nothing matches any more: exit 1.
    let again = omnish_with(&h, &["forget", "--grep", "grep-target-zz"], "");
    assert_eq!(again.status.code(), Some(1), "{again:?}");

    // The recorder goes on: later commands are whole.
    let after = h.run("echo keep-after-zz");
    assert_eq!(h.output_text(&after), "keep-after-zz\r\n");
    assert_eq!(h.output_text(&keep), "keep-before-zz\r\n");
    for secret in ["forget-by-id-42", "grep-target-zz", "zz-42"] {
        assert_nowhere(&h, secret);
    }
    let recs = h.records();
    let placeholders: Vec<u64> = recs
        .iter()
        .filter(|r| r.command_source == "forgotten")
        .map(|r| r.seq)
        .collect();
    assert_eq!(placeholders, [gone.seq, also.seq]);
    let shown = ok_stdout(omnish(&h, &["context", "--recent", "10"]));
    assert_eq!(shown.matches("[forgotten command]").count(), 2, "{shown}");
    assert!(shown.contains("keep-after-zz") && shown.contains("keep-before-zz"));
}

/// `--secret`, read without echo from stdin here, overwrites a value in every session; typed
/// on the command line of a recorded shell, the line itself is never recorded.
#[test]
fn forget_secret_scrubs_every_session_and_is_never_recorded_itself() {
    let mut h = Harness::bash(&[]);
    h.run("echo pasted sk-live-SCRUBME-0123456789");
    // A second, finished session in the same store.
    let mut other = Command::new(omnish_bin());
    other
        .args([
            "wrap",
            "bash",
            "-c",
            "echo also sk-live-SCRUBME-0123456789 here",
        ])
        .env("OMNISH_DATA_DIR", h.data())
        .env("HOME", h.home.path())
        .env_remove("OMNISH_SESSION_ID")
        .env_remove("OMNISH_RUNTIME_DIR");
    let done = run_piped(other, "");
    assert!(done.status.success(), "{done:?}");
    assert_eq!(sessions_in(&h.data()).len(), 2);

    let dry = omnish_with(
        &h,
        &["forget", "--secret", "--dry-run"],
        "sk-live-SCRUBME-0123456789\n",
    );
    assert_eq!(dry.status.code(), Some(0), "{dry:?}");
    let out = omnish_with(&h, &["forget", "--secret"], "sk-live-SCRUBME-0123456789\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in 2 sessions"), "{err}");
    for dir in sessions_in(&h.data()) {
        let text = session_text(&dir);
        assert!(!text.contains("SCRUBME"), "{}: {text}", dir.display());
    }
    assert!(session_files(&h).contains(&"*".repeat(26)));
    // Typed in the recorded shell, with the value: the line is private.
    let typed = h.run(&format!(
        "{} forget --secret typed-VALUE-9876 --dry-run",
        omnish_bin()
    ));
    assert!(typed.private, "{typed:?}");
    assert_nowhere(&h, "typed-VALUE-9876");
}

#[test]
fn forget_says_what_is_wrong_with_what_it_is_given() {
    let h = Harness::bash(&[]);
    let usage = omnish_with(&h, &["forget"], "");
    assert_eq!(usage.status.code(), Some(2), "{usage:?}");
    let bad = omnish_with(&h, &["forget", "not-an-id"], "");
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    let short = omnish_with(&h, &["forget", "--secret", "ab"], "");
    assert_eq!(short.status.code(), Some(2), "{short:?}");
    let unknown = omnish_with(&h, &["forget", &format!("{}:999", h.meta().id)], "");
    assert_eq!(unknown.status.code(), Some(1), "{unknown:?}");
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// `forget --grep` over 300,000 different lines (10 MB) that all match: what it keeps of a hit
/// is its id, never its lines (it once kept the whole search, as JSON, in memory: 42 MB peak
/// here, against 17 MB now).
#[test]
fn forget_grep_keeps_ids_not_lines() {
    let mut h = Harness::bash(&[]);
    let rec = h.run_huge("seq -f needle-%.0f-abcdefghij-0123456789 1 300000");
    let mut cmd = Command::new(omnish_bin());
    cmd.args(["forget", "--dry-run", "--grep", "needle-"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("LANG", "C.UTF-8")
        .env("OMNISH_DATA_DIR", h.data())
        .current_dir(h.home.path());
    let (out, peak) = run_piped_peak(cmd, "");
    let text = ok_stdout(out);
    assert!(
        text.contains(&format!("would forget {}", rec.command_id)),
        "{text}"
    );
    eprintln!("forget --grep over 10 MB of matching lines: peak RSS {peak} KiB");
    assert!(peak > 0 && peak < 24 * 1024, "peak RSS {peak} KiB");
}
