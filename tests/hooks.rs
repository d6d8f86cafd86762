//! `omnish hooks` for Claude Code, Gemini CLI, Codex CLI and opencode: installed into a settings
//! file holding the user's own hooks (twice, then uninstalled), and the installed hook run as the
//! agent runs it (the command from the settings file, through the agent's shell, with the JSON
//! its hooks documentation and source give on stdin; opencode's plugin loaded by node and
//! called as opencode calls plugins), from an agent started in a recorded bash and from one
//! outside any terminal. No agent CLI runs here: each needs its model's network service to run
//! a tool at all, so the stand-ins send what the agents send (the sources are quoted at each).

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};

fn omnish(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(omnish_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", home)
        .env("OMNISH_DATA_DIR", home.join("data"))
        .current_dir(home)
        .stdin(Stdio::null());
    cmd
}

const USER_SETTINGS: &str = r#"{
  "model": "opus",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine.sh"}]}],
    "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}]
  },
  "permissions": {"allow": ["Bash(ls:*)"]}
}
"#;

/// The installed hook's commands for `event`, from the settings file.
fn installed(settings: &Path, event: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(settings).unwrap()).unwrap();
    v["hooks"][event]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|e| e["matcher"] == "Bash")
                .flat_map(|e| e["hooks"].as_array().unwrap().clone())
                .map(|h| h["command"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `command` as Claude Code runs a command hook (`sh -c`, the JSON on stdin), with `env`
/// added; returns its exit status, stdout and stderr.
fn run_hook(home: &Path, command: &str, input: &Value, env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", command])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", home)
        .env("OMNISH_DATA_DIR", home.join("data"))
        .env("CLAUDE_PROJECT_DIR", home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run_piped(cmd, &input.to_string());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), said)
}

fn post_tool_use(session: &str, command: &str, stdout: &str, stderr: &str) -> Value {
    json!({
        "session_id": session,
        "transcript_path": "/home/u/.claude/projects/p/t.jsonl",
        "cwd": "/home/u/project",
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run it"},
        "tool_use_id": "toolu_01",
        "tool_response": {"stdout": stdout, "stderr": stderr, "interrupted": false, "isImage": false}
    })
}

fn failure(session: &str, command: &str, error: &str) -> Value {
    json!({
        "session_id": session,
        "transcript_path": "/home/u/.claude/projects/p/t.jsonl",
        "cwd": "/home/u/project",
        "permission_mode": "default",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run it"},
        "tool_use_id": "toolu_02",
        "error": error,
        "is_interrupt": false
    })
}

#[test]
fn install_twice_run_as_claude_code_runs_it_then_uninstall() {
    let mut t = Harness::bash(&[]);
    t.run("echo typed-by-me");
    let home = t.home.path().to_path_buf();
    let settings = home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, USER_SETTINGS).unwrap();
    let status = omnish(&home, &["hooks", "status", "claude-code"])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));
    for _ in 0..2 {
        let out = ok_stdout(
            omnish(&home, &["hooks", "install", "claude-code"])
                .output()
                .unwrap(),
        );
        assert!(out.contains("installed in"), "{out}");
    }
    let once = std::fs::read_to_string(&settings).unwrap();
    for kept in [
        r#"{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine.sh"}]}"#,
        r#"{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}"#,
        r#"  "permissions": {"allow": ["Bash(ls:*)"]}"#,
    ] {
        assert!(once.contains(kept), "{kept} lost:\n{once}");
    }
    let post = installed(&settings, "PostToolUse");
    let fail = installed(&settings, "PostToolUseFailure");
    assert_eq!((post.len(), fail.len()), (1, 1), "once each:\n{once}");
    ok_stdout(
        omnish(&home, &["hooks", "status", "claude-code"])
            .output()
            .unwrap(),
    );

    // The agent runs in the recorded terminal: its commands go with that terminal's.
    let id = omnish::store::dir_id(&t.session_dir());
    let inside = [("OMNISH_SESSION_ID", id.as_str())];
    let (code, said) = run_hook(
        &home,
        &post[0],
        &post_tool_use(
            "agent-1",
            "cargo build",
            "Compiling x\nFinished",
            "warning: unused",
        ),
        &inside,
    );
    assert_eq!((code, said.as_str()), (0, ""));
    let (code, said) = run_hook(
        &home,
        &fail[0],
        &failure(
            "agent-1",
            "cargo test",
            "Exit code 101\ntest it_works ... FAILED",
        ),
        &inside,
    );
    assert_eq!((code, said.as_str()), (0, ""));
    // Outside any terminal: a session of the agent's session.
    let (code, said) = run_hook(
        &home,
        &post[0],
        &post_tool_use("agent-2", "ls", "a", ""),
        &[],
    );
    assert_eq!((code, said.as_str()), (0, ""));
    // Whatever goes wrong: exit 0, nothing said.
    for bad in [
        json!("not an object"),
        json!({"tool_name": "Bash"}),
        json!([1, 2]),
    ] {
        assert_eq!(run_hook(&home, &post[0], &bad, &inside), (0, String::new()));
    }
    let ctx = ok_stdout(
        omnish(&home, &["context", "--session", &id, "--recent", "5"])
            .output()
            .unwrap(),
    );
    let at = |s: &str| ctx.find(s).unwrap_or_else(|| panic!("{s} missing:\n{ctx}"));
    assert!(
        at("$ echo typed-by-me") < at("[claude-code] $ cargo build"),
        "{ctx}"
    );
    assert!(
        ctx.contains("Compiling x\nFinished\nwarning: unused\n\n[claude-code] $ cargo test"),
        "{ctx}"
    );
    assert!(at("[claude-code] $ cargo build") < at("[claude-code] $ cargo test"));
    assert!(
        ctx.contains("test it_works ... FAILED\n[exit 101]"),
        "{ctx}"
    );
    assert!(
        !ctx.contains("$ ls"),
        "the other agent's session is its own:\n{ctx}"
    );
    // status in the terminal counts the agent's commands with it; the store's sessions say
    // whose they are; MCP list_sessions shows the agent's sessions with their terminal's.
    let status = ok_stdout(
        omnish(&home, &["status"])
            .env("OMNISH_SESSION_ID", &id)
            .output()
            .unwrap(),
    );
    assert!(
        status.contains("\nothers    claude-code: 2 commands (1 failed)\n"),
        "{status}"
    );
    assert!(
        status.contains(" sessions, 2 of them by exec or agents, "),
        "{status}"
    );
    let json_status: Value = serde_json::from_str(&ok_stdout(
        omnish(&home, &["status", "--format", "json"])
            .env("OMNISH_SESSION_ID", &id)
            .output()
            .unwrap(),
    ))
    .unwrap();
    assert_eq!(
        json_status["session"]["attached"],
        json!([{"author": "claude-code", "commands": 2, "failed": 1}]),
        "{json_status:#}"
    );
    assert_eq!(json_status["session"]["author"], "user");
    assert_eq!(json_status["authored_sessions"], 2);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}});
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "list_sessions", "arguments": {}}});
    let mut mcp = omnish(&home, &["mcp"]);
    mcp.env("OMNISH_SESSION_ID", &id);
    let out = run_piped(mcp, &format!("{init}\n{list}\n"));
    let listed: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|r| r["id"] == 1)
        .unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(&out.stdout)));
    let rows = listed["result"]["structuredContent"]["sessions"]
        .as_array()
        .unwrap()
        .clone();
    let text = listed["result"]["content"][0]["text"].as_str().unwrap();
    let agent = rows
        .iter()
        .find(|r| r["attached_to"] == json!(id))
        .unwrap_or_else(|| panic!("{listed:#}"));
    assert_eq!(agent["author"], "claude-code");
    assert!(text.contains(&format!("[claude-code] with {id}")), "{text}");
    let own = rows.iter().find(|r| r["id"] == json!(id)).unwrap();
    assert_eq!(
        (own["author"].clone(), own["attached_to"].clone()),
        (json!("user"), Value::Null)
    );
    let alone = rows
        .iter()
        .find(|r| r["author"] == "claude-code" && r["attached_to"].is_null())
        .unwrap_or_else(|| panic!("{listed:#}"));
    assert!(
        text.contains(&format!(
            "{}  exited  [claude-code] in",
            alone["id"].as_str().unwrap()
        )),
        "{text}"
    );

    let user = ok_stdout(
        omnish(&home, &["context", "--session", &id, "--author", "user"])
            .output()
            .unwrap(),
    );
    assert!(!user.contains("cargo"), "{user}");
    let all = ok_stdout(
        omnish(
            &home,
            &["context", "--session", "all", "--author", "claude-code"],
        )
        .output()
        .unwrap(),
    );
    assert!(all.contains("[claude-code] $ ls\na\n"), "{all}");

    let out = ok_stdout(
        omnish(&home, &["hooks", "uninstall", "claude-code"])
            .output()
            .unwrap(),
    );
    assert!(out.contains("removed from"), "{out}");
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let before: Value = serde_json::from_str(USER_SETTINGS).unwrap();
    assert_eq!(after, before);
    let status = omnish(&home, &["hooks", "status", "claude-code"])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));
}

/// An `AfterTool` input as Gemini CLI sends it: the base fields of
/// packages/core/src/hooks/hookEventHandler.ts `createBaseInput` (`session_id`,
/// `transcript_path`, `cwd`, `hook_event_name`, `timestamp`), then `tool_name`, `tool_input` (the
/// model's arguments) and `tool_response` (`llmContent`, `returnDisplay`, `error`) as
/// packages/core/src/core/coreToolHookTriggers.ts passes them; `llmContent` as
/// packages/core/src/tools/shell.ts makes it (`Output: ...`, `Exit Code: N` when not 0,
/// `Process Group PGID: N`, wrapped by `wrapUntrusted`).
fn after_tool(session: &str, command: &str, dir: Option<&str>, output: &str, code: i32) -> Value {
    let mut llm = format!(
        "Output: {}",
        if output.is_empty() { "(empty)" } else { output }
    );
    if code != 0 {
        llm.push_str(&format!("\nExit Code: {code}"));
    }
    llm.push_str("\nProcess Group PGID: 31337");
    let mut input = json!({"command": command, "description": "Run it"});
    if let Some(d) = dir {
        input["dir_path"] = json!(d);
    }
    json!({
        "session_id": session,
        "transcript_path": "/home/u/.gemini/tmp/abc/chats/session-1.json",
        "cwd": "/home/u/project",
        "hook_event_name": "AfterTool",
        "timestamp": "2026-11-26T10:00:00.000Z",
        "tool_name": "run_shell_command",
        "tool_input": input,
        "tool_response": {
            "llmContent": format!("<untrusted_context>\n{llm}\n</untrusted_context>"),
            "returnDisplay": output,
            "error": null
        }
    })
}

/// Runs `command` as Gemini CLI's hook runner does (packages/core/src/hooks/hookRunner.ts:
/// `bash -c COMMAND` in the input's `cwd`, with GEMINI_PROJECT_DIR, GEMINI_CWD,
/// GEMINI_SESSION_ID and CLAUDE_PROJECT_DIR set, the JSON on stdin).
fn run_gemini_hook(
    home: &Path,
    command: &str,
    input: &Value,
    env: &[(&str, &str)],
) -> (i32, String) {
    let mut cmd = Command::new("bash");
    cmd.args(["-c", command])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", home)
        .env("OMNISH_DATA_DIR", home.join("data"))
        .env("GEMINI_PROJECT_DIR", home)
        .env("GEMINI_CWD", home)
        .env(
            "GEMINI_SESSION_ID",
            input["session_id"].as_str().unwrap_or(""),
        )
        .env("CLAUDE_PROJECT_DIR", home)
        .current_dir(home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run_piped(cmd, &input.to_string());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), said)
}

const GEMINI_USER_SETTINGS: &str = r#"{
  "theme": "GitHub",
  "hooks": {
    "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"name": "guard", "type": "command", "command": "guard.sh"}]}],
    "AfterTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "fmt.sh"}]}]
  },
  "general": {"vimMode": true}
}
"#;

#[test]
fn gemini_install_twice_run_as_gemini_runs_it_then_uninstall() {
    let mut t = Harness::bash(&[]);
    t.run("echo typed-by-me");
    let home = t.home.path().to_path_buf();
    let settings = home.join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, GEMINI_USER_SETTINGS).unwrap();
    for _ in 0..2 {
        ok_stdout(
            omnish(&home, &["hooks", "install", "gemini"])
                .output()
                .unwrap(),
        );
    }
    let once = std::fs::read_to_string(&settings).unwrap();
    for kept in [
        r#"    "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"name": "guard", "type": "command", "command": "guard.sh"}]}],"#,
        r#"{"matcher": "write_file", "hooks": [{"type": "command", "command": "fmt.sh"}]}"#,
        r#"  "general": {"vimMode": true}"#,
    ] {
        assert!(once.contains(kept), "{kept} lost:\n{once}");
    }
    let v: Value = serde_json::from_str(&once).unwrap();
    let ours: Vec<String> = v["hooks"]["AfterTool"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["matcher"] == "^run_shell_command$")
        .flat_map(|e| e["hooks"].as_array().unwrap().clone())
        .map(|h| h["command"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ours.len(), 1, "once:\n{once}");
    ok_stdout(
        omnish(&home, &["hooks", "status", "gemini"])
            .output()
            .unwrap(),
    );
    // Claude Code's hooks are another file's.
    let status = omnish(&home, &["hooks", "status", "claude-code"])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));

    let id = omnish::store::dir_id(&t.session_dir());
    let inside = [("OMNISH_SESSION_ID", id.as_str())];
    let runs = [
        after_tool("g-1", "cargo build", None, "Compiling x\nFinished", 0),
        after_tool(
            "g-1",
            "make check",
            Some("sub"),
            "make: *** [check] Error 2",
            2,
        ),
    ];
    for input in &runs {
        assert_eq!(
            run_gemini_hook(&home, &ours[0], input, &inside),
            (0, String::new())
        );
    }
    assert_eq!(
        run_gemini_hook(&home, &ours[0], &after_tool("g-2", "ls", None, "", 0), &[]),
        (0, String::new())
    );
    for bad in [
        json!("x"),
        json!({"tool_name": "run_shell_command"}),
        json!({}),
    ] {
        assert_eq!(
            run_gemini_hook(&home, &ours[0], &bad, &inside),
            (0, String::new())
        );
    }
    let ctx = ok_stdout(
        omnish(
            &home,
            &[
                "context",
                "--session",
                &id,
                "--recent",
                "5",
                "--format",
                "json",
            ],
        )
        .output()
        .unwrap(),
    );
    let v: Value = serde_json::from_str(&ctx).unwrap();
    let cmds = v["commands"].as_array().unwrap();
    let got: Vec<(String, String, String, Value)> = cmds
        .iter()
        .map(|c| {
            (
                c["author"].as_str().unwrap_or("").to_string(),
                c["command_line"].as_str().unwrap_or("").to_string(),
                c["cwd"].as_str().unwrap_or("").to_string(),
                c["exit_code"].clone(),
            )
        })
        .collect();
    let text = ok_stdout(
        omnish(&home, &["context", "--session", &id, "--recent", "5"])
            .output()
            .unwrap(),
    );
    assert!(
        text.contains("[gemini] $ cargo build\nCompiling x\nFinished\n"),
        "{text}"
    );
    assert!(
        text.contains("make: *** [check] Error 2\n[exit 2]"),
        "{text}"
    );
    assert!(
        !text.contains("PGID") && !text.contains("untrusted"),
        "{text}"
    );
    assert!(
        got.iter().any(|g| g.0 == "gemini"
            && g.1 == "make check"
            && g.2 == "/home/u/project/sub"
            && g.3 == json!(2)),
        "{got:?}\n{ctx}"
    );
    let all = ok_stdout(
        omnish(
            &home,
            &["context", "--session", "all", "--author", "gemini"],
        )
        .output()
        .unwrap(),
    );
    assert!(all.contains("[gemini] $ ls\n"), "{all}");

    ok_stdout(
        omnish(&home, &["hooks", "uninstall", "gemini"])
            .output()
            .unwrap(),
    );
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let before: Value = serde_json::from_str(GEMINI_USER_SETTINGS).unwrap();
    assert_eq!(after, before);
}

/// A `PostToolUse` input as Codex sends it: the fields of its generated schema
/// (codex-rs/hooks/schema/generated/post-tool-use.command.input.schema.json, all required),
/// `tool_input` `{"command": ...}` as shell-like tools pass it and `tool_response` the text of
/// the output (codex-rs/hooks/src/events/post_tool_use.rs, codex-rs/core/src/tools/context.rs).
fn codex_post_tool_use(session: &str, command: &str, output: &str) -> Value {
    json!({
        "session_id": session,
        "turn_id": "turn-1",
        "transcript_path": null,
        "cwd": "/home/u/project",
        "hook_event_name": "PostToolUse",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_response": output,
        "tool_use_id": "call_abc"
    })
}

const CODEX_USER_HOOKS: &str = r#"{
  "description": "my hooks",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]
  }
}
"#;

#[test]
fn codex_install_twice_run_as_codex_runs_it_then_uninstall() {
    let mut t = Harness::bash(&[]);
    t.run("echo typed-by-me");
    let home = t.home.path().to_path_buf();
    let file = home.join(".codex/hooks.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, CODEX_USER_HOOKS).unwrap();
    for _ in 0..2 {
        let out = ok_stdout(
            omnish(&home, &["hooks", "install", "codex"])
                .output()
                .unwrap(),
        );
        assert!(out.contains("/hooks"), "says to trust it: {out}");
    }
    let once = std::fs::read_to_string(&file).unwrap();
    assert!(
        once.starts_with("{\n  \"description\": \"my hooks\",\n"),
        "{once}"
    );
    assert!(
        once.contains(r#"    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],"#),
        "{once}"
    );
    let post = installed(&file, "PostToolUse");
    assert_eq!(post.len(), 1, "{once}");
    // Codex refuses other top-level keys: omnish adds none.
    let v: Value = serde_json::from_str(&once).unwrap();
    assert_eq!(v.as_object().unwrap().len(), 2, "{once}");

    let id = omnish::store::dir_id(&t.session_dir());
    let inside = [("OMNISH_SESSION_ID", id.as_str())];
    let (code, said) = run_hook(
        &home,
        &post[0],
        &codex_post_tool_use(
            "019a-thread",
            "cargo test",
            "running 1 test\ntest it ... FAILED\n",
        ),
        &inside,
    );
    assert_eq!((code, said.as_str()), (0, ""));
    assert_eq!(
        run_hook(
            &home,
            &post[0],
            &json!({"hook_event_name": "PostToolUse"}),
            &inside
        ),
        (0, String::new())
    );
    let ctx = ok_stdout(
        omnish(
            &home,
            &[
                "context",
                "--session",
                &id,
                "--recent",
                "3",
                "--format",
                "json",
            ],
        )
        .output()
        .unwrap(),
    );
    let v: Value = serde_json::from_str(&ctx).unwrap();
    let c = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["author"] == "codex")
        .unwrap_or_else(|| panic!("{ctx}"));
    assert_eq!(c["command_line"], "cargo test");
    assert_eq!(c["output"], "running 1 test\ntest it ... FAILED");
    // Codex does not tell the hook the status: unknown, not a guess.
    assert_eq!(c["exit_code"], Value::Null);

    ok_stdout(
        omnish(&home, &["hooks", "uninstall", "codex"])
            .output()
            .unwrap(),
    );
    assert_eq!(
        serde_json::from_str::<Value>(&std::fs::read_to_string(&file).unwrap()).unwrap(),
        serde_json::from_str::<Value>(CODEX_USER_HOOKS).unwrap()
    );
}

/// The installed opencode plugin, loaded by node and called as opencode calls a plugin
/// (packages/plugin/src/index.ts: the plugin function with opencode's context, then
/// `tool.execute.after(input, output)` with `input` `{tool, sessionID, callID, args}` and
/// `output` `{title, output, metadata}`; packages/opencode/src/tool/bash.ts: `title` the
/// command, `metadata` `{output, exit, description}`).
const OPENCODE_DRIVER: &str = r#"
const [plugin, calls] = [process.argv[2], JSON.parse(process.argv[3])]
const mod = await import(plugin)
for (const make of Object.values(mod)) {
  const hooks = await make({ directory: "/home/u/project", worktree: "/home/u/project" })
  for (const [input, output] of calls) await hooks["tool.execute.after"](input, output)
}
console.log("done")
"#;

#[test]
fn opencode_plugin_installed_twice_run_as_opencode_runs_it_then_uninstalled() {
    // node runs the plugin as opencode's Bun would.
    if !require("node") {
        return;
    }
    let mut t = Harness::bash(&[]);
    t.run("echo typed-by-me");
    let home = t.home.path().to_path_buf();
    let project = home.join("project");
    std::fs::create_dir_all(project.join(".opencode/plugins")).unwrap();
    let mine = project.join(".opencode/plugins/mine.ts");
    std::fs::write(&mine, "export const Mine = async () => ({})\n").unwrap();
    for _ in 0..2 {
        ok_stdout(
            omnish(&home, &["hooks", "install", "opencode", "--project"])
                .current_dir(&project)
                .output()
                .unwrap(),
        );
    }
    let plugin = project.join(".opencode/plugins/omnish.js");
    ok_stdout(
        omnish(&home, &["hooks", "status", "opencode", "--project"])
            .current_dir(&project)
            .output()
            .unwrap(),
    );
    let id = omnish::store::dir_id(&t.session_dir());
    let calls = json!([
        [
            {"tool": "bash", "sessionID": "ses_1", "callID": "c1", "args": {"command": "make test", "description": "Run tests"}},
            {"title": "make test", "output": "ok 1\nnot ok 2\n", "metadata": {"output": "ok 1\nnot ok 2\n", "exit": 2, "description": "Run tests"}}
        ],
        [
            {"tool": "read", "sessionID": "ses_1", "callID": "c2", "args": {"filePath": "/etc/hosts"}},
            {"title": "hosts", "output": "127.0.0.1 localhost", "metadata": {}}
        ],
        [
            {"tool": "bash", "sessionID": "ses_1", "callID": "c3"},
            {"title": "ls", "output": "a\nb\n", "metadata": {"output": "a\nb\n", "exit": 0}}
        ]
    ]);
    let driver = home.join("driver.mjs");
    std::fs::write(&driver, OPENCODE_DRIVER).unwrap();
    let mut node = Command::new("node");
    node.arg("--experimental-detect-module")
        .arg(&driver)
        .arg(format!("file://{}", plugin.display()))
        .arg(calls.to_string())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", &home)
        .env("OMNISH_DATA_DIR", home.join("data"))
        .env("OMNISH_SESSION_ID", &id)
        .current_dir(&project);
    let out = node.output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "done\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ctx = ok_stdout(
        omnish(&home, &["context", "--session", &id, "--recent", "4"])
            .output()
            .unwrap(),
    );
    assert!(
        ctx.contains("[opencode] $ make test\nok 1\nnot ok 2\n[exit 2]"),
        "{ctx}"
    );
    assert!(ctx.contains("[opencode] $ ls\na\nb\n"), "{ctx}");
    assert!(!ctx.contains("localhost"), "only bash calls: {ctx}");

    ok_stdout(
        omnish(&home, &["hooks", "uninstall", "opencode", "--project"])
            .current_dir(&project)
            .output()
            .unwrap(),
    );
    assert!(!plugin.exists());
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        "export const Mine = async () => ({})\n"
    );
}
