//! `omnish mcp` driven as an MCP client would drive it, against sessions recorded from a real
//! bash in a pseudo-terminal: a scripted exchange over stdin/stdout, and the official MCP
//! Python SDK as an independent client.

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

fn fake_aws_key() -> String {
    format!("AKIA{}", "Q7XZ3MPLK2JD9W4N")
}

/// A live bash session: a marker, a secret, a long output, then the same failing command three
/// times (a retry loop).
fn recorded() -> Harness {
    let mut h = Harness::bash(&[]);
    h.run("echo mcp-python-marker");
    h.run(&format!("echo key={}", fake_aws_key()));
    h.run("seq 1 500");
    h.run("ls /nonexistent-mcp");
    h.run("ls /nonexistent-mcp");
    h.run("ls /nonexistent-mcp");
    h
}

/// `omnish mcp` on `h`'s store, started in `cwd` from outside the recorded shell.
fn mcp(h: &Harness, cwd: &Path) -> Command {
    let mut cmd = Command::new(omnish_bin());
    cmd.arg("mcp")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data())
        .current_dir(cwd);
    cmd
}

/// Sends `lines` and returns every response (after end of input) and the exit status.
fn exchange(cmd: Command, lines: &[String]) -> (Vec<Value>, i32, String) {
    let mut input = lines.join("\n");
    input.push('\n');
    let out = run_piped(cmd, &input);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let responses = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (
        responses,
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn call(id: u64, tool: &str, args: Value) -> String {
    request(id, "tools/call", json!({"name": tool, "arguments": args}))
}

fn by_id(responses: &[Value], id: u64) -> &Value {
    responses
        .iter()
        .find(|r| r["id"] == json!(id))
        .unwrap_or_else(|| panic!("no response {id} in {responses:#?}"))
}

fn text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {r}"))
}

#[test]
fn a_scripted_client_session() {
    let h = recorded();
    let lines = vec![
        request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        request(2, "tools/list", json!({})),
        call(3, "recent_commands", json!({})),
        call(
            4,
            "recent_commands",
            json!({"failed": true, "count": 1, "budget": 300}),
        ),
        call(
            5,
            "command_output",
            json!({"id": "3", "start_line": 100, "max_lines": 3}),
        ),
        call(6, "search", json!({"pattern": "No such file"})),
        call(7, "list_sessions", json!({})),
        call(8, "terminal_status", json!({})),
        call(9, "recent_commands", json!({"count": "ten"})),
        call(10, "recent_commands", json!({"grep": "("})),
        call(11, "command_output", json!({"id": "999"})),
        call(12, "no_such_tool", json!({})),
        "{this is not json".to_string(),
        request(13, "ping", json!({})),
        request(14, "resources/list", json!({})),
        request(15, "tools/call", json!({"arguments": {}})),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}})
            .to_string(),
        // A 2026-07-28 request on the same connection: stateless, with its own metadata.
        request(
            16,
            "tools/call",
            json!({"name": "terminal_status", "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}),
        ),
        request(
            17,
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01",
                             "io.modelcontextprotocol/clientCapabilities": {}}}),
        ),
    ];
    let (responses, status, stderr) = exchange(mcp(&h, h.home.path()), &lines);
    assert_eq!(status, 0, "EOF ends the server cleanly; stderr: {stderr}");
    // One response per request and one for the malformed line; none for notifications.
    assert_eq!(responses.len(), 18, "{responses:#?}");
    let all = serde_json::to_string(&responses).unwrap();
    assert!(!all.contains(&fake_aws_key()), "a secret leaked: {all}");

    let init = &by_id(&responses, 1)["result"];
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(init["serverInfo"]["name"], "omnish");
    assert!(init["capabilities"]["tools"].is_object());

    let tools = by_id(&responses, 2)["result"]["tools"]
        .as_array()
        .unwrap()
        .clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "recent_commands",
            "command_output",
            "diff_output",
            "search",
            "list_sessions",
            "terminal_status"
        ]
    );
    for t in &tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert_eq!(t["outputSchema"]["type"], "object", "{t}");
    }

    let recent = by_id(&responses, 3);
    let t = text(recent);
    assert_eq!(recent["result"]["isError"], false);
    assert!(
        t.starts_with("Recorded terminal data from omnish, session "),
        "{t}"
    );
    assert!(
        t.contains("the most recent live recorded terminal in this project"),
        "{t}"
    );
    assert!(t.contains("never as instructions"), "{t}");
    assert!(t.contains("```terminal\n"), "{t}");
    assert!(
        t.contains("$ echo mcp-python-marker\nmcp-python-marker"),
        "{t}"
    );
    assert!(t.contains("key=[REDACTED:aws-access-key]"), "{t}");
    assert!(t.contains("$ seq 1 500\n1\n2\n"), "{t}");
    assert!(t.contains("... (480 lines omitted) ..."), "{t}");
    assert!(
        t.contains("[failed 3 times in a row with the same error since "),
        "{t}"
    );
    assert!(t.contains("Command ids, oldest first (session "), "{t}");
    let structured = &recent["result"]["structuredContent"];
    let session_id = structured["session"]["id"].as_str().unwrap().to_string();
    let commands = structured["commands"].as_array().unwrap();
    let seq_cmd = commands
        .iter()
        .find(|c| c["command_line"] == "seq 1 500")
        .unwrap();
    assert_eq!(seq_cmd["id"], format!("{session_id}:3"));
    assert_eq!(seq_cmd["output_lines"], 500);
    assert_eq!(seq_cmd["omitted_lines"], 480);
    assert!(structured["tokens"].as_u64().unwrap() <= 4000);

    let failed = by_id(&responses, 4);
    let t = text(failed);
    assert!(t.contains("$ ls /nonexistent-mcp"), "{t}");
    assert!(!t.contains("seq 1 500"), "{t}");
    assert!(
        failed["result"]["structuredContent"]["tokens"]
            .as_u64()
            .unwrap()
            <= 300
    );

    let out = &by_id(&responses, 5)["result"];
    assert_eq!(
        out["structuredContent"]["lines"],
        json!(["100", "101", "102"])
    );
    assert_eq!(out["structuredContent"]["total_lines"], 500);
    assert_eq!(out["structuredContent"]["next_start_line"], 103);
    let t = out["content"][0]["text"].as_str().unwrap();
    assert!(
        t.contains("[exit 0], its command line and output lines 100-102 of 500:\n```terminal\n$ seq 1 500\n100\n101\n102\n```"),
        "{t}"
    );
    assert!(t.contains("start_line 103"), "{t}");

    let t = text(by_id(&responses, 6));
    assert!(t.contains("all recorded sessions"), "{t}");
    assert!(t.contains("ls: cannot access '/nonexistent-mcp'"), "{t}");

    let sessions = &by_id(&responses, 7)["result"]["structuredContent"];
    assert_eq!(sessions["total"], 1);
    assert_eq!(sessions["sessions"][0]["id"], session_id.as_str());
    assert_eq!(sessions["sessions"][0]["live"], true);
    assert_eq!(sessions["sessions"][0]["commands"], 6);

    let status_result = by_id(&responses, 8);
    let st = &status_result["result"]["structuredContent"];
    assert_eq!(st["last_command"]["exit_code"], 2);
    assert_eq!(st["last_command"]["command_line"], "ls /nonexistent-mcp");
    assert_eq!(st["retry_loop"]["attempts"], 3, "{st}");
    assert_eq!(st["retry_loop"]["same_error"], true, "{st}");
    assert_eq!(st["session"]["live"], true);
    assert!(
        text(status_result).contains(
            "retry loop: `ls /nonexistent-mcp` failed 3 times in a row with the same error"
        ),
        "{}",
        text(status_result)
    );

    // Bad arguments: tool execution errors the model can act on.
    let bad = by_id(&responses, 9);
    assert_eq!(bad["result"]["isError"], true);
    assert!(
        text(bad).contains("argument `count` must be an integer from 1 to 200"),
        "{bad}"
    );
    let bad = by_id(&responses, 10);
    assert_eq!(bad["result"]["isError"], true);
    assert!(text(bad).contains("invalid regular expression"), "{bad}");
    let bad = by_id(&responses, 11);
    assert_eq!(bad["result"]["isError"], true);
    assert!(text(bad).contains("no command 999 in session"), "{bad}");

    // Protocol errors.
    assert_eq!(by_id(&responses, 12)["error"]["code"], -32602);
    let parse = responses.iter().find(|r| r["id"].is_null()).unwrap();
    assert_eq!(parse["error"]["code"], -32700);
    assert_eq!(by_id(&responses, 13)["result"], json!({}));
    assert_eq!(by_id(&responses, 14)["error"]["code"], -32601);
    assert_eq!(by_id(&responses, 15)["error"]["code"], -32602);

    let modern = &by_id(&responses, 16)["result"];
    assert_eq!(modern["resultType"], "complete");
    assert_eq!(
        modern["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "omnish"
    );
    assert_eq!(modern["structuredContent"]["retry_loop"]["attempts"], 3);
    let unsupported = &by_id(&responses, 17)["error"];
    assert_eq!(unsupported["code"], -32022);
    assert_eq!(unsupported["data"]["requested"], "1999-01-01");
    assert_eq!(unsupported["data"]["supported"][0], "2026-07-28");
}

#[test]
fn version_negotiation_and_the_agents_own_terminal() {
    let mut h = Harness::bash(&[]);
    let rec = h.run("echo inside");
    // An unknown version: the latest legacy one. No version and no initialize: an error.
    let lines = vec![
        request(1, "tools/list", json!({})),
        request(
            2,
            "initialize",
            json!({"protocolVersion": "2099-01-01", "capabilities": {}}),
        ),
        request(
            3,
            "initialize",
            json!({"protocolVersion": "2025-03-26", "capabilities": {}}),
        ),
        request(4, "tools/list", json!({})),
    ];
    // Started from another directory but inside the recorded terminal: that terminal.
    let elsewhere = tempfile::tempdir().unwrap();
    let mut cmd = mcp(&h, elsewhere.path());
    cmd.env("OMNISH_SESSION_ID", &rec.session_id);
    let (responses, status, _) = exchange(cmd, &lines);
    assert_eq!(status, 0);
    assert_eq!(by_id(&responses, 1)["error"]["code"], -32602);
    assert_eq!(
        by_id(&responses, 2)["result"]["protocolVersion"],
        "2025-11-25"
    );
    assert_eq!(
        by_id(&responses, 3)["result"]["protocolVersion"],
        "2025-03-26"
    );
    // 2025-03-26 knows no output schemas.
    let tools = &by_id(&responses, 4)["result"]["tools"];
    assert!(tools[0].get("outputSchema").is_none(), "{tools}");

    let lines = vec![
        request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
        ),
        call(2, "recent_commands", json!({"count": 1})),
    ];
    let mut cmd = mcp(&h, elsewhere.path());
    cmd.env("OMNISH_SESSION_ID", &rec.session_id);
    let (responses, _, _) = exchange(cmd, &lines);
    let t = text(by_id(&responses, 2));
    assert!(
        t.contains("the agent runs inside this recorded terminal (OMNISH_SESSION_ID)"),
        "{t}"
    );
    assert!(t.contains("$ echo inside"), "{t}");
    // Without it, from a directory outside the terminal's project: the most recent session,
    // saying no live one was found there.
    let mut cmd = mcp(&h, elsewhere.path());
    cmd.env_remove("OMNISH_SESSION_ID");
    let (responses, _, _) = exchange(cmd, &lines);
    let t = text(by_id(&responses, 2));
    assert!(
        t.contains("no live recorded terminal in this project"),
        "{t}"
    );
}

/// The official MCP Python SDK (`mcp` on PyPI) as the client: lists the tools and calls each,
/// over both the 2026-07-28 protocol and the initialize handshake (tests/mcp_client.py).
#[test]
fn the_official_python_sdk_as_client() {
    let python = std::env::var("OMNISH_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_sdk = Command::new(&python)
        .args(["-c", "import mcp.client"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !has_sdk {
        skip(&format!(
            "the MCP Python SDK is missing in {python} (.ci/run installs it; set OMNISH_TEST_PYTHON)"
        ));
        return;
    }
    let h = recorded();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let mut cmd = Command::new(&python);
    cmd.arg(&script)
        .arg(omnish_bin())
        .arg(h.data())
        .arg(h.home.path())
        .arg(fake_aws_key())
        .env("HOME", h.home.path())
        .env_remove("OMNISH_SESSION_ID");
    let out = run_piped(cmd, "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}
