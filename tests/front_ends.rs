//! The front ends agree, because they go in one way: the same configuration, the same fitted
//! documents, the same words. Driven against sessions recorded from a real bash in a
//! pseudo-terminal, through the real `omnish status`, `omnish context`, `omnish sessions` and
//! `omnish mcp`.

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// `omnish ARGS` on the store at `data` with the configuration file `config`, from outside
/// any recorded shell unless `session` is given (then as if run inside it).
fn omnish(data: &Path, config: &Path, session: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = Command::new(omnish_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", data)
        .env("OMNISH_DATA_DIR", data)
        .env("OMNISH_CONFIG", config)
        .current_dir(data);
    if let Some(id) = session {
        cmd.env("OMNISH_SESSION_ID", id);
    }
    cmd
}

fn call(id: u64, tool: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
    .to_string()
}

/// Sends `calls` to `omnish mcp` after the handshake; the responses by id, in order.
fn mcp(cmd: Command, calls: &[String]) -> Vec<Value> {
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "t", "version": "1"}}})
        .to_string(),
    ];
    lines.extend_from_slice(calls);
    let mut input = lines.join("\n");
    input.push('\n');
    let out = run_piped(cmd, &input);
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut responses: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .filter(|r: &Value| r["id"] != json!(0))
        .collect();
    responses.sort_by_key(|r| r["id"].as_u64());
    assert_eq!(responses.len(), calls.len(), "{responses:#?}");
    responses
}

fn text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {r}"))
}

/// `loops.threshold = 2` in the configuration: `omnish status` and MCP `terminal_status` both
/// see two failures in a row as a loop, and with the default threshold (3) neither does. The
/// session's state is said in the same word by `sessions list`, `status` and the MCP server.
#[test]
fn status_and_terminal_status_honour_the_same_configuration() {
    let mut h = Harness::bash(&[]);
    h.run("echo start");
    h.run("ls /nonexistent-front-ends");
    let rec = h.run("ls /nonexistent-front-ends");
    let id = rec.session_id.clone();
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.toml");
    std::fs::write(&two, "[loops]\nthreshold = 2\n").unwrap();
    let default = Path::new("/dev/null");
    let data = h.data();

    for (config, looped) in [(two.as_path(), true), (default, false)] {
        let out = omnish(&data, config, Some(&id), &["status", "--format", "json"])
            .output()
            .unwrap();
        let status: Value = serde_json::from_str(&ok_stdout(out)).unwrap();
        let responses = mcp(
            omnish(&data, config, Some(&id), &["mcp"]),
            &[
                call(1, "terminal_status", json!({})),
                call(2, "list_sessions", json!({})),
            ],
        );
        let st = &responses[0]["result"]["structuredContent"];
        let what = format!(
            "{}: status {status:#}\nterminal_status {st:#}",
            config.display()
        );
        assert_eq!(!status["retry_loop"].is_null(), looped, "{what}");
        assert_eq!(!st["retry_loop"].is_null(), looped, "{what}");
        if looped {
            assert_eq!(status["retry_loop"]["failures"], 2, "{what}");
            assert_eq!(st["retry_loop"]["attempts"], 2, "{what}");
            assert_eq!(
                status["retry_loop"]["description"], st["retry_loop"]["description"],
                "{what}"
            );
        }
        // One word for the session's state everywhere.
        let out = omnish(
            &data,
            config,
            None,
            &["sessions", "list", "--format", "json"],
        )
        .output()
        .unwrap();
        let list: Value = serde_json::from_str(&ok_stdout(out)).unwrap();
        assert_eq!(list["sessions"][0]["state"], "running");
        assert_eq!(status["session"]["state"], "running");
        assert_eq!(st["session"]["state"], "running", "{what}");
        let listed = &responses[1]["result"]["structuredContent"]["sessions"][0];
        assert_eq!(listed["state"], "running", "{listed}");
        assert!(
            text(&responses[0]).contains(&format!("session: {id} (running)")),
            "{}",
            text(&responses[0])
        );
    }
}

/// The MCP server's results are as wide and as redacted as the configuration says, as
/// `omnish context`'s are: `context.max_line_width` cuts the lines of `recent_commands`, and
/// with `context.redact = false` a secret is shown and the label says redaction is off.
#[test]
fn mcp_results_follow_the_configured_width_and_redaction() {
    let mut h = Harness::bash(&[]);
    let token = format!("ghp_{}", "a1B2".repeat(9));
    let wide = "y".repeat(300);
    let rec = h.run(&format!("echo {wide}; echo token {token}"));
    let id = rec.session_id.clone();
    let data = h.data();
    let dir = tempfile::tempdir().unwrap();
    let narrow = dir.path().join("narrow.toml");
    std::fs::write(&narrow, "[context]\nmax_line_width = 40\nredact = false\n").unwrap();
    for (config, configured) in [(narrow.as_path(), true), (Path::new("/dev/null"), false)] {
        let responses = mcp(
            omnish(&data, config, Some(&id), &["mcp"]),
            &[call(1, "recent_commands", json!({"count": 1}))],
        );
        let t = text(&responses[0]);
        let cli = ok_stdout(
            omnish(&data, config, Some(&id), &["context", "--last"])
                .output()
                .unwrap(),
        );
        for shown in [t, cli.as_str()] {
            // The output line whole, or cut to its head and tail.
            let whole = shown.lines().any(|l| l == wide);
            assert_eq!(whole, !configured, "{}:\n{shown}", config.display());
            assert_eq!(
                shown.contains(&token),
                configured,
                "{}:\n{shown}",
                config.display()
            );
        }
        assert_eq!(
            t.contains("secrets not redacted: the user turned redaction off"),
            configured,
            "{t}"
        );
    }
}

/// Commands of each of `SESSIONS` recorded sessions.
const COMMANDS: usize = 20;
const SESSIONS: usize = 4;

/// `SESSIONS` sessions of `COMMANDS` `seq` commands each (30 to 49 lines of output), recorded
/// by real bash shells that then exit, gathered in one store.
fn store_of_seq_sessions() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let store = tempfile::tempdir().unwrap();
    let sessions = store.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o700)).unwrap();
    // Recorded side by side: each shell waits on its own terminal.
    std::thread::scope(|scope| {
        for s in 0..SESSIONS {
            let sessions = &sessions;
            scope.spawn(move || {
                let mut h = Harness::bash(&[]);
                for i in 0..COMMANDS {
                    h.run(&format!("seq {} {}", s * 100 + 1, s * 100 + 30 + i));
                }
                h.type_line("exit");
                assert_eq!(h.wait_exit(), 0);
                let dir = h.session_dir();
                std::fs::rename(&dir, sessions.join(dir.file_name().unwrap())).unwrap();
            });
        }
    });
    assert_eq!(std::fs::read_dir(&sessions).unwrap().count(), SESSIONS);
    store
}

/// The command ids the footer of a `recent_commands` or `search` text names, as
/// `<session>:<seq>`, in order: `Command ids, oldest first (session S): 3, 4. ...` or
/// `Command ids, in the order shown: S:3, T:4. ...`.
fn footer_ids(text: &str) -> Vec<String> {
    let footer = text.lines().last().unwrap_or("");
    let list = |s: &str| -> Vec<String> {
        let s = s.split_once(". ").map_or(s, |(l, _)| l);
        s.split(", ").map(str::to_string).collect()
    };
    if let Some(rest) = footer.strip_prefix("Command ids, oldest first (session ") {
        let (session, seqs) = rest.split_once("): ").expect(footer);
        return list(seqs)
            .into_iter()
            .map(|q| format!("{session}:{q}"))
            .collect();
    }
    let rest = footer
        .strip_prefix("Command ids, in the order shown: ")
        .unwrap_or_else(|| panic!("no id footer: {footer}"));
    list(rest)
}

/// `recent_commands` and `search` over all sessions, 50 commands asked for, succeed at every
/// budget from 200 (the least they accept) to 8000 tokens, as `omnish context` does for the
/// same selection, and what they return fits: the text counts at most the budget (counted here
/// too), labels and ids included. More budget never shows fewer commands.
#[test]
fn every_budget_past_the_minimum_fits_in_mcp_as_in_the_cli() {
    let store = store_of_seq_sessions();
    let data = store.path();
    let config = Path::new("/dev/null");
    let budgets: Vec<u64> = (200..=8000).step_by(100).collect();
    let mut calls = Vec::new();
    for (k, b) in budgets.iter().enumerate() {
        let args = json!({"session": "all", "count": 50, "budget": b});
        calls.push(call(2 * k as u64 + 1, "recent_commands", args));
        let args = json!({"pattern": "seq", "session": "all", "count": 50, "budget": b});
        calls.push(call(2 * k as u64 + 2, "search", args));
    }
    let responses = mcp(omnish(data, config, None, &["mcp"]), &calls);
    let mut shown_before = [0usize; 2];
    for (k, budget) in budgets.iter().enumerate() {
        let budget = *budget as usize;
        for (which, r) in responses[2 * k..2 * k + 2].iter().enumerate() {
            let tool = ["recent_commands", "search"][which];
            let t = text(r);
            assert_eq!(
                r["result"]["isError"], false,
                "{tool} at budget {budget}: {t}"
            );
            let counted = omnish::count_tokens("o200k", t).unwrap();
            assert!(
                counted <= budget,
                "{tool} at {budget}: {counted} tokens:\n{t}"
            );
            let s = &r["result"]["structuredContent"];
            let said = s["tokens"].as_u64().unwrap() as usize;
            assert!(
                counted <= said && said <= budget,
                "{tool} at {budget}: says {said}, counts {counted}"
            );
            let shown = s["commands"].as_array().unwrap().len();
            let dropped = s["dropped"].as_array().unwrap().len();
            assert_eq!(shown + dropped, 50, "{tool} at {budget}: {s}");
            assert!(shown >= 1, "{tool} at {budget} shows nothing:\n{t}");
            // The footer names every command shown, in order, with the session it came from.
            let ids: Vec<&str> = s["commands"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap())
                .collect();
            assert_eq!(footer_ids(t), ids, "{tool} at {budget}:\n{t}");
            assert!(
                shown >= shown_before[which],
                "{tool}: {shown} commands at {budget}, {} with less",
                shown_before[which]
            );
            shown_before[which] = shown_before[which].max(shown);
        }
        // The command line, for the same selection and budget.
        let b = budget.to_string();
        let out = omnish(
            data,
            config,
            None,
            &[
                "context",
                "--session",
                "all",
                "--recent",
                "50",
                "--budget",
                &b,
            ],
        )
        .output()
        .unwrap();
        let doc = ok_stdout(out);
        assert!(omnish::count_tokens("o200k", &doc).unwrap() <= budget);
    }
    // The largest budget shows far more than the smallest.
    let first = |k: usize| {
        responses[k]["result"]["structuredContent"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["summarized"] == false)
            .count()
    };
    assert!(
        first(responses.len() - 2) > first(0),
        "8000 tokens show no more whole commands than 300"
    );
}
