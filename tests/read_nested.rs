//! The reading side of nested shells, on sessions written with the store's own writer as the
//! recorder writes a nested shell (frames of each depth, records appended as commands end):
//! `context` in every format, `--host`/`--user`, `--grep`, `search`, `sessions show`, `status`
//! and the MCP tools. (The recording side, with real shells, is in the nest tests.)

mod common;
#[path = "../benches/support/records.rs"]
mod records;

use common::{omnish_bin, run_piped};
use omnish::store::{
    self, CommandRecord, NestedShell, RunningCommand, SessionMeta, SessionState, StreamWriter,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ID: &str = "20261126T101500.000Z-9f3a1c";

fn record(seq: u64, line: &str, exit: i32, range: (u64, u64)) -> CommandRecord {
    CommandRecord {
        command_line: line.into(),
        cwd: "/home/me".into(),
        started_at: 1_700_000_000_000 + seq * 1000,
        ended_at: 1_700_000_000_000 + seq * 1000 + 500,
        exit_code: Some(exit),
        stream_offset: range.0,
        stream_length: range.1 - range.0,
        cols: 80,
        ..records::command_record(ID, seq)
    }
}

/// As root on web1, in the shell `ssh web1` (command 2) started.
fn on_web1(mut r: CommandRecord) -> CommandRecord {
    r.host = Some("web1".into());
    r.user = Some("root".into());
    r.nested_in = Some(format!("{ID}:2"));
    r.depth = 1;
    r.cwd = "/root".into();
    r
}

fn running(r: &CommandRecord) -> RunningCommand {
    RunningCommand {
        seq: r.seq,
        command_line: r.command_line.clone(),
        command_line_chars: None,
        cwd: r.cwd.clone(),
        started_at: r.started_at,
        stream_offset: r.stream_offset,
        private: false,
        host: r.host.clone(),
        user: r.user.clone(),
        nested_in: r.nested_in.clone(),
        depth: r.depth,
        unsplit: None,
    }
}

/// A store holding one session on `laptop` as `me`: `echo top`; `ssh web1`, in whose shell
/// `echo inner1`, `ls /nope` (exit 2) and `exit` ran as root on web1; then `echo after`. With
/// `live`, the session is still recording and `ssh web1` still runs: its shell is at the prompt
/// after `ls /nope`.
fn store(live: bool) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = store::sessions_dir(tmp.path()).join(ID);
    store::create_private_dir(&store::sessions_dir(tmp.path())).unwrap();
    store::create_private_dir(&dir).unwrap();
    let mut w = StreamWriter::create(&dir.join(store::STREAM)).unwrap();
    let (o0, o1, i1) = (store::output_at(0), store::output_at(1), store::input_at(1));
    let mut frame = |d: u8, data: &str| {
        let at = w.offset();
        w.write(1, d, data.as_bytes()).unwrap();
        (at, w.offset())
    };
    let one = frame(o0, "top\r\n");
    let ssh_start = frame(o0, "Welcome to web1\r\n").0;
    let inner1 = frame(o1, "inner1\r\n");
    // Typed at the inner prompt: keys and echo of depth 1.
    frame(i1, "ls /nope\r");
    frame(o1, "[root@web1 ~]# ls /nope\r\n");
    let nope = frame(
        o1,
        "ls: cannot access '/nope': No such file or directory\r\n",
    );
    let exit = frame(o1, "logout\r\n");
    let ssh_end = frame(o0, "Connection to web1 closed.\r\n").1;
    let after = frame(o0, "after\r\n");
    w.flush().unwrap();
    let top = record(1, "echo top", 0, one);
    let ssh = record(2, "ssh web1", 2, (ssh_start, ssh_end));
    let r3 = on_web1(record(3, "echo inner1", 0, inner1));
    let r4 = on_web1(record(4, "ls /nope", 2, nope));
    let r5 = on_web1(record(5, "exit", 2, exit));
    let r6 = record(6, "echo after", 0, after);
    let mut meta = SessionMeta {
        hostname: "laptop".into(),
        cwd: "/home/me".into(),
        cols: 80,
        rows: 24,
        user: Some("me".into()),
        ..records::finished_meta(ID, 1_700_000_000_000, 1_700_000_100_000)
    };
    let records = if live {
        // Recorded up to the inner prompt after `ls /nope`.
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join(store::STREAM))
            .unwrap()
            .set_len(nope.1)
            .unwrap();
        meta.state = SessionState::Running;
        meta.ended_at = None;
        meta.exit_status = None;
        // Alive as long as the test runs.
        meta.recorder_pid = std::process::id();
        meta.nest = vec![NestedShell {
            depth: 1,
            parent: running(&ssh),
            shell: "bash".into(),
            host: "web1".into(),
            user: "root".into(),
            started_at: ssh.started_at + 100,
        }];
        vec![top, r3, r4]
    } else {
        vec![top, r3, r4, r5, ssh, r6]
    };
    for r in &records {
        store::append_command(&dir, r).unwrap();
    }
    store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
    (tmp, dir)
}

fn omnish(data: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(omnish_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", data)
        .env("OMNISH_DATA_DIR", data)
        .env("OMNISH_CONFIG", "/dev/null")
        .current_dir(data);
    cmd
}

fn run(data: &Path, args: &[&str]) -> Output {
    omnish(data, args).output().unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "status {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap()
}

#[test]
fn each_command_shows_its_own_output_with_its_place_beside_it() {
    let (tmp, _) = store(false);
    let text = stdout(&run(tmp.path(), &["context", "--recent", "20"]));
    assert!(
        text.contains(
            "$ ssh web1\nWelcome to web1\nConnection to web1 closed.\n[exit 2]\n\n\
             # cwd: /root\nroot@web1$ echo inner1\ninner1\n\n\
             root@web1$ ls /nope\n\
             ls: cannot access '/nope': No such file or directory\n[exit 2]\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("# cwd: /home/me\n$ echo top\ntop\n"),
        "{text}"
    );
    assert!(text.contains("$ echo after\nafter\n"), "{text}");
    assert!(
        !text.contains("me@laptop"),
        "the session's own place is not said: {text}"
    );
    let md = stdout(&run(
        tmp.path(),
        &["context", "--recent", "20", "--format", "markdown"],
    ));
    assert!(md.contains("```console\nroot@web1$ ls /nope\n"), "{md}");
    assert!(
        md.contains("```console\n$ ssh web1\nWelcome to web1\nConnection"),
        "{md}"
    );
}

#[test]
fn json_gives_every_command_its_host_and_user() {
    let (tmp, _) = store(false);
    let doc = json_of(&run(
        tmp.path(),
        &["context", "--recent", "20", "--format", "json"],
    ));
    let cmds = doc["commands"].as_array().unwrap();
    let seqs: Vec<u64> = cmds.iter().map(|c| c["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6], "in the order they started");
    let top = &cmds[0];
    assert_eq!(
        (&top["host"], &top["user"]),
        (&json!("laptop"), &json!("me"))
    );
    assert!(
        top.get("nested_in").is_none() && top.get("depth").is_none(),
        "{top}"
    );
    let ls = &cmds[3];
    assert_eq!((&ls["host"], &ls["user"]), (&json!("web1"), &json!("root")));
    assert_eq!(ls["nested_in"], json!(format!("{ID}:2")));
    assert_eq!(ls["depth"], 1);
    assert_eq!(
        cmds[1]["output"],
        "Welcome to web1\nConnection to web1 closed."
    );
}

#[test]
fn host_and_user_filters_match_exactly() {
    let (tmp, _) = store(false);
    let seqs = |args: &[&str]| -> Vec<u64> {
        let mut all = vec!["context", "--recent", "20", "--format", "json"];
        all.extend_from_slice(args);
        let doc = json_of(&run(tmp.path(), &all));
        doc["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["seq"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(seqs(&["--host", "web1"]), [3, 4, 5]);
    assert_eq!(seqs(&["--user", "me"]), [1, 2, 6]);
    assert_eq!(seqs(&["--user", "root", "--failed"]), [4, 5]);
    assert_eq!(seqs(&["--host", "laptop", "--user", "me"]), [1, 2, 6]);
    // The output filter reads each command's own frames: `inner1` is 3's output, not ssh's.
    assert_eq!(seqs(&["--grep", "inner1|closed"]), [2, 3]);
    let none = run(tmp.path(), &["context", "--host", "WEB1"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("no command matched (host \"WEB1\")"),
        "{}",
        String::from_utf8_lossy(&none.stderr)
    );
    let empty = run(tmp.path(), &["context", "--user", ""]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("--user: "));
    // ask's default pick looks there too: the last command that failed as root.
    let prompt = stdout(&run(
        tmp.path(),
        &["ask", "--print-prompt", "--host", "web1"],
    ));
    assert!(prompt.contains("root@web1$ exit"), "{prompt}");
}

#[test]
fn search_and_sessions_show_read_and_show_the_same_way() {
    let (tmp, _) = store(false);
    let hits = json_of(&run(tmp.path(), &["search", "--format", "json", "inner1"]));
    let hits = hits["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["seq"], 3);
    assert_eq!(
        (&hits[0]["host"], &hits[0]["user"]),
        (&json!("web1"), &json!("root"))
    );
    assert_eq!(hits[0]["depth"], 1);
    let text = stdout(&run(tmp.path(), &["search", "cannot access"]));
    assert!(text.contains("root@web1$ ls /nope"), "{text}");
    let only = stdout(&run(tmp.path(), &["search", "--user", "me", "o"]));
    assert!(!only.contains("root@web1"), "{only}");
    let show = stdout(&run(tmp.path(), &["sessions", "show", ID]));
    assert!(show.contains("user     me\n"), "{show}");
    assert!(
        show.contains("/root  root@web1$ ls /nope  (1 line)"),
        "{show}"
    );
    assert!(show.contains("/home/me  $ ssh web1  (2 lines)"), "{show}");
    let doc = json_of(&run(
        tmp.path(),
        &["sessions", "show", ID, "--format", "json"],
    ));
    let list = doc["command_list"].as_array().unwrap();
    assert_eq!(list[3]["host"], "web1");
    assert_eq!(list[3]["nested_in"], json!(format!("{ID}:2")));
    assert_eq!(list[0]["user"], "me");
}

#[test]
fn status_describes_the_innermost_live_shell() {
    let (tmp, _) = store(true);
    let mut cmd = omnish(tmp.path(), &["status"]);
    cmd.env("OMNISH_SESSION_ID", ID);
    let text = stdout(&cmd.output().unwrap());
    assert!(
        text.contains(&format!(
            "nested    bash as root@web1, depth 1, started by `ssh web1` ({ID}:2)\n  \
             last    {ID}:4 $ ls /nope [exit 2]\n  failed  {ID}:4 $ ls /nope [exit 2]\n"
        )),
        "{text}"
    );
    let mut cmd = omnish(tmp.path(), &["status", "--format", "json"]);
    cmd.env("OMNISH_SESSION_ID", ID);
    let doc = json_of(&cmd.output().unwrap());
    let n = &doc["nested_shell"];
    assert_eq!(
        (&n["shell"], &n["host"], &n["user"]),
        (&json!("bash"), &json!("web1"), &json!("root"))
    );
    assert_eq!(n["started_by"]["id"], json!(format!("{ID}:2")));
    assert_eq!(n["last_failed"]["command_line"], "ls /nope");
    // From another terminal, `ssh web1` runs, with its own output so far only.
    let text = stdout(&run(tmp.path(), &["context", "--recent", "20"]));
    assert!(
        text.contains("$ ssh web1\nWelcome to web1\n[still running]\n"),
        "{text}"
    );
    // From inside, it is the shell the asker runs in: left out.
    let mut cmd = omnish(
        tmp.path(),
        &["context", "--recent", "20", "--commands-only"],
    );
    cmd.env("OMNISH_SESSION_ID", ID);
    let inside = stdout(&cmd.output().unwrap());
    assert!(!inside.contains("ssh web1"), "{inside}");
    assert!(inside.contains("root@web1$ ls /nope"), "{inside}");
}

fn mcp(data: &Path, calls: &[(&str, Value)]) -> Vec<Value> {
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "t", "version": "1"}}})
        .to_string(),
    ];
    for (i, (tool, args)) in calls.iter().enumerate() {
        lines.push(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                   "params": {"name": tool, "arguments": args}})
            .to_string(),
        );
    }
    let out = run_piped(omnish(data, &["mcp"]), &(lines.join("\n") + "\n"));
    let mut responses: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &Value| r["id"] != json!(0))
        .collect();
    responses.sort_by_key(|r| r["id"].as_u64());
    assert_eq!(responses.len(), calls.len(), "{responses:#?}");
    responses
}

#[test]
fn mcp_tools_filter_and_describe_nested_commands() {
    let (tmp, _) = store(true);
    let r = mcp(
        tmp.path(),
        &[
            ("recent_commands", json!({"session": ID, "host": "web1"})),
            ("search", json!({"pattern": "inner1", "user": "root"})),
            ("terminal_status", json!({"session": ID})),
            ("command_output", json!({"id": format!("{ID}:2")})),
            ("recent_commands", json!({"session": ID, "user": ""})),
        ],
    );
    let s = &r[0]["result"]["structuredContent"];
    let cmds = s["commands"].as_array().unwrap();
    let seqs: Vec<u64> = cmds.iter().map(|c| c["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [3, 4]);
    assert_eq!(
        (&cmds[0]["host"], &cmds[0]["user"]),
        (&json!("web1"), &json!("root"))
    );
    assert_eq!(cmds[0]["nested_in"], json!(format!("{ID}:2")));
    let text = r[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("root@web1$ ls /nope"), "{text}");
    let found = &r[1]["result"]["structuredContent"]["commands"];
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    let status = &r[2]["result"];
    let n = &status["structuredContent"]["nested_shell"];
    assert_eq!(n["depth"], 1);
    assert_eq!(n["last_command"]["id"], json!(format!("{ID}:4")));
    let text = status["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "nested shell: bash as root@web1, depth 1, started by `ssh web1` ({ID}:2)"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("last failed in it: {ID}:4 $ ls /nope  [exit 2]")),
        "{text}"
    );
    let out = r[3]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(out.contains("Welcome to web1"), "{out}");
    assert!(!out.contains("inner1") && !out.contains("/nope"), "{out}");
    assert_eq!(r[4]["result"]["isError"], true, "{}", r[4]);
    let why = r[4]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(why.contains("argument `user`"), "{why}");
}
