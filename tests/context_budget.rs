//! `omnish context` budgets and model names, on a session store built by hand (no shell runs).

#[path = "../benches/support/records.rs"]
mod records;

use omnish::store::{self, CommandRecord, SessionMeta, StreamWriter};
use records::{command_record, finished_meta};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const T0: u64 = 1_750_000_000_000;

/// A finished session of ten commands with a few dozen output lines each.
fn store_with_session() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let id = store::new_session_id(T0);
    let dir = store::sessions_dir(root.path()).join(&id);
    store::create_private_dir(&dir).unwrap();
    let mut stream = StreamWriter::create(&dir.join(store::STREAM)).unwrap();
    let mut now = T0;
    for seq in 1..=10u64 {
        let offset = stream.offset();
        let mut out = String::new();
        for k in 0..40 {
            out.push_str(&format!(
                "   Compiling crate{k} v0.{seq}.0 (/home/dev/src)\r\n"
            ));
        }
        now += 1000;
        stream.write(now, store::OUTPUT, out.as_bytes()).unwrap();
        let end = stream.offset();
        store::append_command(
            &dir,
            &CommandRecord {
                command_line: format!("cargo build -p crate{seq}"),
                cwd: "/home/dev/src".into(),
                started_at: now,
                ended_at: now + 5,
                exit_code: Some(if seq == 10 { 148 } else { 0 }),
                stream_offset: offset,
                stream_length: end - offset,
                ..command_record(&id, seq)
            },
        )
        .unwrap();
    }
    stream.flush().unwrap();
    let meta = SessionMeta {
        cwd: "/home/dev/src".into(),
        ..finished_meta(&id, T0, now + 100)
    };
    store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
    root
}

fn context(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_omnish"))
        .arg("context")
        .args(args)
        .env("OMNISH_DATA_DIR", root)
        .env_remove("OMNISH_SESSION_ID")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A budget too small for any document names where it came from: `--budget`, `--model`, or
/// the configuration's `ask.model` for `ask` and `fix`.
#[test]
fn a_budget_too_small_names_where_it_came_from() {
    let root = store_with_session();
    let config = root.path().join("config.toml");
    std::fs::write(
        &config,
        "[ask]\nmodel = \"tiny\"\n\n[models.tiny]\nwindow = 8\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_omnish"))
            .args(args)
            .env("OMNISH_DATA_DIR", root.path())
            .env("OMNISH_CONFIG", &config)
            .env_remove("OMNISH_SESSION_ID")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    for (args, named) in [
        (&["context", "--budget", "2"][..], "--budget"),
        (&["context", "--model", "tiny"][..], "--model"),
        (&["fix"][..], "ask.model"),
        (&["ask", "--budget", "2"][..], "--budget"),
    ] {
        let out = run(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("omnish: {named}: a budget of 2 tokens is below")),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_budget_below_the_smallest_document_is_a_usage_error_naming_the_minimum() {
    let root = store_with_session();
    for format in ["text", "markdown", "json"] {
        let out = context(root.path(), &["--budget", "1", "--format", format]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        let prefix = format!(
            "omnish: --budget: a budget of 1 token is below the smallest document in {format} ("
        );
        assert!(err.starts_with(&prefix), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        let min: usize = err
            .trim_end()
            .rsplit_once("give at least ")
            .unwrap()
            .1
            .parse()
            .unwrap();
        // The named minimum works, and its JSON report stays within it.
        let min_arg = min.to_string();
        let out = context(root.path(), &["--budget", &min_arg, "--format", format]);
        assert!(out.status.success(), "{}", stderr(&out));
        if format == "json" {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let tokens = v["budget"]["tokens"].as_u64().unwrap() as usize;
            assert!(tokens <= min, "{tokens} > {min}");
        }
    }
}

#[test]
fn budgets_are_ceilings_in_json() {
    let root = store_with_session();
    for budget in [500usize, 1000, 3000] {
        let b = budget.to_string();
        let out = context(root.path(), &["--budget", &b, "--format", "json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let tokens = v["budget"]["tokens"].as_u64().unwrap() as usize;
        assert!(tokens <= budget, "{tokens} > {budget}");
    }
}

#[test]
fn model_names_match_exactly_or_by_the_documented_rule() {
    let root = store_with_session();
    for ok in [
        "gpt-4o",
        "openai/gpt-4o-2024-08-06",
        "qwen2.5-coder:7b",
        "claude-3-5-sonnet-latest",
        "llama3.2:3b",
    ] {
        let out = context(root.path(), &["--model", ok]);
        assert!(out.status.success(), "{ok}: {}", stderr(&out));
    }
    let out = context(root.path(), &["--model", "gpt-4o-nonexistent-variant"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("unknown model 'gpt-4o-nonexistent-variant'") && err.contains("gpt-4o-mini"),
        "{err}"
    );
}

#[test]
fn ctrl_z_is_stopped_not_killed() {
    let root = store_with_session();
    let out = context(root.path(), &["--last"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("[exit 148: stopped (SIGTSTP)]"), "{text}");
}

#[test]
fn unknown_tokenizer_is_a_usage_error() {
    let root = store_with_session();
    let out = context(root.path(), &["--budget", "10", "--tokenizer", "gpt2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
