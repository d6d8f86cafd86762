//! `omnish context` on sessions recorded from real bash and zsh in a pseudo-terminal.

mod common;

use common::*;
use std::process::{Command, Output, Stdio};

/// `omnish context ARGS` run from "a second terminal": the test process, with the harness's
/// data dir.
fn context(h: &Harness, args: &[&str]) -> Output {
    h.context(args)
}

fn fake_aws_key() -> String {
    format!("AKIA{}", "Q7XZ3MPLK2JD9W4N")
}

/// A bash session with a representative mix of commands.
fn busy_bash() -> Harness {
    let mut h = Harness::bash(&[]);
    h.run("echo hello");
    h.run("ls /nonexistent-dir");
    h.run(&format!("echo key={}", fake_aws_key()));
    h.run("printf 'downloading 10%%\\rdownloading 55%%\\rdownloading 100%%\\n'");
    h.run("seq 1 100");
    h.run("echo same");
    h.run("echo same");
    h.run("cd /tmp && printf '\\e[1;31merror\\e[0m: in red\\n'; (exit 1)");
    h
}

#[test]
fn text_shows_what_the_user_saw() {
    let h = busy_bash();
    let text = ok_stdout(context(&h, &[]));
    let home = h.home.path().display().to_string();
    assert!(
        text.starts_with(&format!("# cwd: {home}\n$ echo hello\nhello\n\n")),
        "{text}"
    );
    assert!(text.contains("$ ls /nonexistent-dir\nls: cannot access '/nonexistent-dir': No such file or directory\n[exit 2]\n"), "{text}");
    // Secrets redacted in command lines and output.
    assert!(!text.contains(&fake_aws_key()), "{text}");
    assert!(text.contains("[REDACTED:aws-access-key]"), "{text}");
    // Progress redraws resolved; colours dropped.
    assert!(text.contains("\ndownloading 100%\n"), "{text}");
    assert!(!text.contains("\ndownloading 10%"), "{text}");
    assert!(text.contains("\nerror: in red\n[exit 1]"), "{text}");
    assert!(!text.contains('\x1b'), "{text}");
    // Long output: head and tail with the gap said.
    assert!(text.contains("$ seq 1 100\n1\n2\n"), "{text}");
    assert!(text.contains("... (80 lines omitted) ...\n91\n"), "{text}");
    // Repeats folded; cwd shown when it changes.
    assert_eq!(text.matches("$ echo same").count(), 1, "{text}");
    assert!(text.contains("[ran 2 times]"), "{text}");
    assert!(
        text.contains("# cwd: /tmp\n$ cd /tmp &&") || text.contains(&format!("# cwd: {home}")),
        "{text}"
    );
    // The prompt and the echo of the command line are never output.
    assert!(!text.contains("READY"), "{text}");
}

#[test]
fn markdown_and_json_formats() {
    let h = busy_bash();
    let md = ok_stdout(context(&h, &["--format", "markdown", "--recent", "2"]));
    assert!(md.contains("```"), "{md}");
    assert!(md.contains("$ echo same"), "{md}");
    assert!(!md.contains("$ seq 1 100"), "{md}");

    let json = ok_stdout(context(&h, &["--format", "json", "--max-lines", "0"]));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["version"], 1);
    let cmds = doc["commands"].as_array().unwrap();
    let first = &cmds[0];
    assert_eq!(first["command_line"], "echo hello");
    assert_eq!(first["output"], "hello");
    assert_eq!(first["exit_code"], 0);
    assert_eq!(first["seq"], 1);
    assert!(first["session_id"].as_str().unwrap().len() > 10);
    assert!(first["started_at"].as_u64().unwrap() <= first["ended_at"].as_u64().unwrap());
    let seq = cmds
        .iter()
        .find(|c| c["command_line"] == "seq 1 100")
        .unwrap();
    assert_eq!(seq["output_lines"], 100);
    assert_eq!(seq["omitted_lines"], 0);
    let failed = cmds.iter().find(|c| c["exit_code"] == 2).unwrap();
    assert_eq!(failed["command_line"], "ls /nonexistent-dir");
}

#[test]
fn selection_options_combine() {
    let h = busy_bash();
    let failed = ok_stdout(context(&h, &["--failed", "--commands-only"]));
    assert!(failed.contains("$ ls /nonexistent-dir"), "{failed}");
    assert!(failed.contains("$ cd /tmp"), "{failed}");
    assert!(!failed.contains("echo hello"), "{failed}");
    assert!(!failed.contains("No such file"), "{failed}");

    let last = ok_stdout(context(&h, &["--last", "--results-only"]));
    assert_eq!(
        last.trim_end().lines().next(),
        Some("error: in red"),
        "{last}"
    );
    assert!(!last.contains("$ "), "{last}");

    let grep = ok_stdout(context(&h, &["--grep", "No such file"]));
    assert!(
        grep.contains("$ ls /nonexistent-dir") && !grep.contains("hello"),
        "{grep}"
    );
    let grep = ok_stdout(context(&h, &["--grep", "^seq"]));
    assert!(
        grep.contains("$ seq 1 100") && !grep.contains("hello"),
        "{grep}"
    );

    let home = h.home.path().to_str().unwrap();
    let here = ok_stdout(context(&h, &["--cwd", home, "--commands-only"]));
    assert!(here.contains("echo hello"), "{here}");
    // Nothing matched: nothing on stdout, one line on stderr naming the filter, status 1.
    let elsewhere = context(&h, &["--cwd", "/usr/share", "--commands-only"]);
    assert_eq!(elsewhere.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&elsewhere.stdout), "");
    let err = String::from_utf8_lossy(&elsewhere.stderr);
    assert!(
        err.starts_with("omnish: no command matched (cwd /usr/share) in session ")
            && err.lines().count() == 1,
        "{err}"
    );

    let recent = ok_stdout(context(
        &h,
        &["--since", "10m", "--recent", "1", "--commands-only"],
    ));
    assert_eq!(recent.matches("$ ").count(), 1, "{recent}");

    let plain = ok_stdout(context(&h, &["--no-redact", "--grep", "key="]));
    assert!(plain.contains(&fake_aws_key()), "{plain}");

    let none = context(&h, &["--grep", "matches-nothing-at-all"]);
    assert_eq!(none.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&none.stdout), "");
    assert!(String::from_utf8_lossy(&none.stderr).contains("(grep 'matches-nothing-at-all')"));
}

#[test]
fn budget_and_models() {
    let h = busy_bash();
    let full = ok_stdout(context(&h, &["--recent", "20"]));
    let tight = ok_stdout(context(&h, &["--recent", "20", "--budget", "100"]));
    assert!(tight.len() < full.len());
    assert!(
        tight
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .contains("budget 100"),
        "{tight}"
    );
    assert!(
        tight.contains("error: in red"),
        "the newest output survives: {tight}"
    );

    // A budget the output fits in (in bytes, so surely in tokens) changes nothing.
    let roomy = ok_stdout(context(&h, &["--recent", "20", "--budget", "100000"]));
    assert_eq!(roomy, full);
    let json: serde_json::Value = serde_json::from_str(&ok_stdout(context(
        &h,
        &["--budget", "100000", "--format", "json"],
    )))
    .unwrap();
    assert_eq!(json["budget"]["budget"], 100000);
    assert!(json["dropped"].as_array().unwrap().is_empty());

    assert!(ok_stdout(context(&h, &["--model", "llama3.2:3b"])).contains("$ echo hello"));
    let out = context(&h, &["--model", "no-such-model"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown model 'no-such-model'") && err.contains("gpt-4o"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn inside_the_shell_it_reads_its_own_session_without_itself() {
    let mut h = Harness::bash(&[]);
    h.run("echo first");
    h.run("(exit 3)");
    let r = h.run(&format!(
        "{} context --format json > ctx.json",
        omnish_bin()
    ));
    assert_eq!(r.exit_code, Some(0));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(h.home.path().join("ctx.json")).unwrap()).unwrap();
    let lines: Vec<&str> = doc["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command_line"].as_str().unwrap())
        .collect();
    assert_eq!(lines, ["echo first", "(exit 3)"]);
}

#[test]
fn a_second_terminal_sees_the_running_command_so_far() {
    let mut h = Harness::bash(&[]);
    h.run("echo before");
    h.type_line("echo partial-output; sleep 30");
    h.wait_screen("partial-output\r\n");
    // On disk within the flush interval, long before the command ends.
    let want = "$ echo partial-output; sleep 30\npartial-output\n[still running]";
    h.wait_until("the output on disk", || {
        ok_stdout(context(&h, &["--last"])).contains(want)
    });
    let json = ok_stdout(context(&h, &["--last", "--format", "json"]));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["commands"][0]["running"], true);
    assert!(doc["commands"][0]["exit_code"].is_null());
    h.send(b"\x03");
    h.wait_records(2);
    let text = ok_stdout(context(&h, &["--last"]));
    assert!(text.contains("[exit 130: interrupted"), "{text}");
}

#[test]
fn full_screen_programs_leave_their_last_screen() {
    let mut h = Harness::bash(&[]);
    h.run("printf '\\e[?1049h\\e[Hfull screen stuff\\e[?1049l'; echo after-it");
    let text = ok_stdout(context(&h, &["--last"]));
    // The program (the command line's first word) and what it showed, then what followed.
    assert!(
        text.contains(
            "\n[full-screen program: printf; its last screen:]\nfull screen stuff\n\
             [end of the screen]\nafter-it\n"
        ),
        "{text}"
    );
    // The command line and the screen.
    assert_eq!(text.matches("full screen stuff").count(), 2, "{text}");
}

#[test]
fn zsh_sessions_render_without_prompt_sp_marks() {
    if !require("zsh") {
        return;
    }
    let mut h = Harness::zsh(&[]);
    h.run("printf foo");
    h.run("echo bar; false");
    let text = ok_stdout(context(&h, &[]));
    assert!(
        text.contains("$ printf foo\nfoo\n\n$ echo bar; false\nbar\n[exit 1]\n"),
        "{text}"
    );
    let md = ok_stdout(context(&h, &["--format", "markdown"]));
    assert!(md.contains("$ printf foo\nfoo\n"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&ok_stdout(context(&h, &["--format", "json"]))).unwrap();
    assert_eq!(json["commands"][0]["output"], "foo");
}

#[test]
fn all_sessions_are_grouped() {
    let mut h = Harness::bash(&[]);
    h.run("echo in-first");
    h.type_line("exit");
    h.wait_exit();
    // A second session in the same data dir, from the CLI.
    let out = Command::new(omnish_bin())
        .args(["wrap", "bash", "-c", "echo in-second"])
        .env("OMNISH_DATA_DIR", h.data())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = ok_stdout(context(&h, &["--session", "all"]));
    let first = text.find("in-first").unwrap();
    let second = text.find("in-second").unwrap();
    assert!(first < second, "{text}");
    assert_eq!(text.matches("=== Session ").count(), 2, "{text}");
    // Default: the most recent session only.
    let text = ok_stdout(context(&h, &[]));
    assert!(
        text.contains("in-second") && !text.contains("in-first"),
        "{text}"
    );
    // Run from inside the older session: that one is current, so it comes last, and it is the
    // default session.
    let first_id = omnish::store::list_sessions(&h.data()).unwrap()[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let inside = |args: &[&str]| {
        let out = Command::new(omnish_bin())
            .arg("context")
            .args(args)
            .env("OMNISH_DATA_DIR", h.data())
            .env("OMNISH_SESSION_ID", &first_id)
            .output()
            .unwrap();
        ok_stdout(out)
    };
    let text = inside(&["--session", "all"]);
    assert!(
        text.find("in-second").unwrap() < text.find("in-first").unwrap(),
        "{text}"
    );
    let text = inside(&[]);
    assert!(
        text.contains("in-first") && !text.contains("in-second"),
        "{text}"
    );
    // A unique prefix of an id selects that session.
    let text = ok_stdout(context(&h, &["--session", &first_id[..first_id.len() - 2]]));
    assert!(text.contains("in-first"), "{text}");
}

#[test]
fn errors_are_one_clear_line() {
    let home = home_with(&[]);
    let run = |args: &[&str]| {
        Command::new(omnish_bin())
            .arg("context")
            .args(args)
            .env("OMNISH_DATA_DIR", home.path().join("data"))
            .env_remove("OMNISH_SESSION_ID")
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("omnish: no recorded sessions") && err.contains("omnish wrap"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    let out = run(&["--grep", "("]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--grep"));
    let out = run(&["--since", "soon"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `omnish ARGS | head -1` on a document several times what a pipe holds (64 KiB): the reader
/// closes the pipe after one line while omnish is still writing, so omnish's next write fails
/// with EPIPE. That is success, said nowhere: the reader got what it wanted.
#[test]
fn a_closed_pipe_is_success() {
    use std::io::BufRead;
    let mut h = Harness::bash(&[]);
    h.run_huge("seq 1 60000");
    for args in [
        &["context", "--max-lines", "0"][..],
        &["context", "--max-lines", "0", "--format", "json"],
        &["search", "0"],
    ] {
        // The whole document, to know that a pipe cannot hold it.
        let whole = omnish_cmd(&h, args).output().unwrap();
        assert!(whole.status.success(), "{args:?}: {whole:?}");
        assert!(
            whole.stdout.len() > 4 * (64 << 10),
            "{args:?}: {} bytes",
            whole.stdout.len()
        );
        let mut child = omnish_cmd(&h, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        assert!(
            whole.stdout.starts_with(first.as_bytes()),
            "{args:?}: {first:?}"
        );
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).as_ref()
            ),
            (Some(0), ""),
            "{args:?}"
        );
    }
}

/// `omnish ARGS` on the harness's store, from a second terminal.
fn omnish_cmd(h: &Harness, args: &[&str]) -> Command {
    let mut cmd = Command::new(omnish_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data())
        .stdin(Stdio::null());
    cmd
}

#[test]
fn keys_typed_ahead_for_the_next_command_are_not_output() {
    let mut h = Harness::bash(&[]);
    h.gate();
    // The command prints well after the line typed ahead: output within the recorder's frame
    // delay (10 ms) of the echo shares the echo's frame, and the echo is then kept.
    h.type_line("cat gate; sleep 1; echo first");
    h.wait_foreground("cat");
    h.type_line("echo typed-ahead");
    // Typed while the command runs: the terminal echoes it, Enter too.
    h.wait_screen("echo typed-ahead\r\n");
    h.open_gate();
    h.wait_records(2);
    // The terminal showed the echo inside the first command's output; the recording keeps it...
    let first = h.records()[0].clone();
    assert!(h.output_text(&first).contains("echo typed-ahead"));
    // ...but the context knows it was the next command's line.
    let text = ok_stdout(context(&h, &[]));
    assert!(
        text.contains(
            "$ cat gate; sleep 1; echo first\nfirst\n\n$ echo typed-ahead\ntyped-ahead\n"
        ),
        "{text}"
    );
}

#[test]
fn a_command_cut_off_by_a_crash_shows_its_output_and_an_unknown_status() {
    let mut h = Harness::bash(&[]);
    h.run("echo before");
    h.type_line("echo partial-before-crash; sleep 30");
    h.wait_screen("partial-before-crash\r\n");
    h.wait_output_on_disk("partial-before-crash\r\n");
    // The recorder dies without a chance to write anything more.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(h.pid() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    h.wait_exit();
    let meta = h.meta();
    assert_eq!(
        meta.state,
        omnish::store::SessionState::Running,
        "never sealed"
    );
    let text = ok_stdout(context(&h, &[]));
    assert!(
        text.contains(
            "$ echo partial-before-crash; sleep 30\npartial-before-crash\n[exit status unknown]"
        ),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok_stdout(context(&h, &["--last", "--format", "json"]))).unwrap();
    let c = &json["commands"][0];
    assert_eq!(
        (c["running"].clone(), c["exit_code"].clone()),
        (false.into(), serde_json::Value::Null)
    );
    assert!(c["ended_at"].is_null());
}
