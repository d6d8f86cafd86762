//! `omnish hooks install|uninstall|status AGENT [--project]` and `omnish hooks run AGENT`:
//! every shell command a coding agent runs becomes a record, through the agent's own hooks.
//!
//! # Claude Code
//!
//! Installed in `~/.claude/settings.json` (with `--project`, `.claude/settings.json` of the
//! project: the git work tree holding the working directory, else that directory), as Claude
//! Code's hooks documentation describes them: a `PostToolUse` entry and a `PostToolUseFailure`
//! entry (Claude Code runs the first after a tool call that succeeded, the second after one that
//! failed, a command's non-zero exit included), each matching its `Bash` tool and running
//! `<omnish> hooks run claude-code` (the absolute path of this omnish, so the agent's `PATH`
//! does not matter).
//!
//! What is kept of the file: every key, in its order, and every value but `hooks` byte for byte
//! (they are carried as raw JSON text, never parsed into values); under `hooks`, every event
//! and every entry of the user's the same way. Only the layout of the top-level object, of
//! `hooks` and of the two event arrays omnish adds to is written anew (two-space indentation).
//! Installing twice adds nothing; uninstalling removes omnish's entries only (those whose
//! command runs `hooks run claude-code` of a program named `omnish`), and an event array or a
//! `hooks` object left empty by it. A file that is not a JSON object is left alone, with one
//! line saying so (exit 1).
//!
//! # The hook
//!
//! `omnish hooks run claude-code` reads the JSON Claude Code writes on its stdin (`session_id`,
//! `cwd`, `hook_event_name`, `tool_name`, `tool_input.command`, and `tool_response.stdout` /
//! `.stderr` / `.interrupted` after a success, `error` after a failure) and appends one record:
//! the command, its directory, the output as the agent received it (stdout, then stderr; the
//! error text after a failure), exit status 0 after a success, the `Exit code N` a failure
//! reports (else unknown), author `claude-code`. The record goes to a session attached to the
//! recorded terminal the agent runs in (`OMNISH_SESSION_ID`, which the agent and its hooks
//! inherit), else to a session of the agent's session (`session_id`), one per agent session
//! ([`crate::store::attached`]). It always exits 0 and writes nothing on stdout or stderr,
//! whatever goes wrong: a hook must never fail or disturb the agent's tool call.

use crate::cli::{HookAgent, HooksAction, HooksArgs};
use crate::cmd::Run;
use crate::error::Error;
use crate::record::exec::{self, Recording};
use crate::store::{self, attached};
use anyhow::{Context, Result};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The events omnish's Claude Code hook is installed for.
const CLAUDE_EVENTS: [&str; 2] = ["PostToolUse", "PostToolUseFailure"];
/// The tool it matches.
const CLAUDE_MATCHER: &str = "Bash";
/// Most bytes of the agent's JSON read (a tool's whole output is in it).
const MAX_INPUT: u64 = 64 << 20;

impl Run for HooksArgs {
    fn run(self) -> Result<i32> {
        match self.action {
            HooksAction::Run { agent } => {
                // Whatever happens: exit 0, nothing said.
                exec::set_quiet();
                let _ = std::panic::catch_unwind(|| run_hook(agent));
                Ok(0)
            }
            HooksAction::Install { agent, project } => {
                let path = settings_path(agent, project)?;
                let command = hook_command()?;
                let changed = edit(&path, |s| install(s, &command))?;
                println!(
                    "{} {}: {}",
                    if changed {
                        "installed in"
                    } else {
                        "already installed in"
                    },
                    path.display(),
                    command
                );
                Ok(0)
            }
            HooksAction::Uninstall { agent, project } => {
                let path = settings_path(agent, project)?;
                if !path.exists() {
                    println!("not installed: {} does not exist", path.display());
                    return Ok(0);
                }
                let changed = edit(&path, uninstall)?;
                println!(
                    "{} {}",
                    if changed {
                        "removed from"
                    } else {
                        "not installed in"
                    },
                    path.display()
                );
                Ok(0)
            }
            HooksAction::Status { agent, project } => {
                let path = settings_path(agent, project)?;
                let installed = match std::fs::read(&path) {
                    Ok(bytes) => {
                        let s: Ordered = serde_json::from_slice(&bytes).map_err(|e| {
                            Error::usage(format!(
                                "{} is not a JSON object ({e}); fix it, then try again",
                                path.display()
                            ))
                        })?;
                        ours_in(&s)?
                    }
                    Err(_) => Vec::new(),
                };
                if installed.is_empty() {
                    println!("not installed in {}", path.display());
                    Ok(1)
                } else {
                    println!(
                        "installed in {} for {}: {}",
                        path.display(),
                        installed.join(", "),
                        hook_command().unwrap_or_default()
                    );
                    Ok(0)
                }
            }
        }
    }
}

/// The settings file of `agent`: the user's, or the project's.
fn settings_path(agent: HookAgent, project: bool) -> Result<PathBuf> {
    let HookAgent::ClaudeCode = agent;
    if project {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        let root = crate::context::stages::select::git_root_or(&cwd);
        return Ok(root.join(".claude").join("settings.json"));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()))
        .ok_or_else(|| Error::usage("no home directory (HOME is not set); use --project"))?;
    Ok(home.join(".claude").join("settings.json"))
}

/// The command the hook runs: this omnish, by absolute path.
fn hook_command() -> Result<String> {
    let exe = std::env::current_exe().context("cannot find omnish's own path")?;
    let exe = exe.to_string_lossy();
    let quoted = shlex::try_quote(&exe).map_err(|_| anyhow::anyhow!("omnish's path is odd"))?;
    Ok(format!("{quoted} hooks run claude-code"))
}

/// Whether `command` is omnish's Claude Code hook (any omnish's path).
fn is_ours(command: &str) -> bool {
    let words = shlex::split(command).unwrap_or_default();
    words.len() == 4
        && Path::new(&words[0])
            .file_name()
            .is_some_and(|n| n == "omnish")
        && words[1..] == ["hooks", "run", "claude-code"]
}

/// A JSON object with its keys in order and its values as they were written.
#[derive(Default)]
struct Ordered(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Box<RawValue>>()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl Ordered {
    fn get(&self, key: &str) -> Option<&RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| &**v)
    }
}

/// A part of the settings being written: text kept as it was, or an object or array omnish
/// writes (two-space indentation at its depth, so the user's text beside it stays aligned).
enum Node {
    Raw(Box<RawValue>),
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
}

impl Node {
    fn string(s: &str) -> Node {
        Node::Raw(RawValue::from_string(serde_json::to_string(s).unwrap_or_default()).unwrap())
    }

    fn write(&self, depth: usize, out: &mut String) {
        let pad = |d: usize| "  ".repeat(d);
        match self {
            Node::Raw(r) => out.push_str(r.get()),
            Node::Object(items) if items.is_empty() => out.push_str("{}"),
            Node::Array(items) if items.is_empty() => out.push_str("[]"),
            Node::Object(items) => {
                out.push_str("{\n");
                for (i, (k, v)) in items.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push_str(": ");
                    v.write(depth + 1, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push('}');
            }
            Node::Array(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    v.write(depth + 1, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push(']');
            }
        }
    }
}

/// Omnish's entry for one event.
fn our_entry(command: &str) -> Node {
    Node::Object(vec![
        ("matcher".into(), Node::string(CLAUDE_MATCHER)),
        (
            "hooks".into(),
            Node::Array(vec![Node::Object(vec![
                ("type".into(), Node::string("command")),
                ("command".into(), Node::string(command)),
            ])]),
        ),
    ])
}

/// The settings to write: `settings` with `hooks` replaced by `hooks` (`None`: removed), each
/// event in `events` by its new entries.
fn rebuild(
    settings: &Ordered,
    hooks: &Ordered,
    events: Vec<(String, Option<Vec<Node>>)>,
) -> String {
    let mut hook_items: Vec<(String, Node)> = Vec::new();
    let mut events = events;
    for (k, v) in &hooks.0 {
        match events.iter().position(|(e, _)| e == k) {
            Some(i) => {
                if let (_, Some(entries)) = events.remove(i) {
                    hook_items.push((k.clone(), Node::Array(entries)));
                }
            }
            None => hook_items.push((k.clone(), Node::Raw(v.clone()))),
        }
    }
    for (e, entries) in events {
        if let Some(entries) = entries {
            hook_items.push((e, Node::Array(entries)));
        }
    }
    let mut top: Vec<(String, Node)> = Vec::new();
    let mut placed = false;
    for (k, v) in &settings.0 {
        if k == "hooks" {
            placed = true;
            if !hook_items.is_empty() {
                top.push((k.clone(), Node::Object(std::mem::take(&mut hook_items))));
            }
        } else {
            top.push((k.clone(), Node::Raw(v.clone())));
        }
    }
    if !placed && !hook_items.is_empty() {
        top.push(("hooks".into(), Node::Object(hook_items)));
    }
    let mut out = String::new();
    Node::Object(top).write(0, &mut out);
    out.push('\n');
    out
}

/// Whether an entry of an event array (`{"matcher", "hooks": [...]}`) runs omnish's hook.
fn entry_is_ours(entry: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct Entry {
        #[serde(default)]
        hooks: Vec<serde_json::Value>,
    }
    serde_json::from_str::<Entry>(entry.get()).is_ok_and(|e| {
        !e.hooks.is_empty()
            && e.hooks
                .iter()
                .all(|h| h["command"].as_str().is_some_and(is_ours))
    })
}

/// The `hooks` object of `settings`.
fn hooks_of(settings: &Ordered) -> Result<Ordered> {
    match settings.get("hooks") {
        Some(h) => serde_json::from_str(h.get())
            .map_err(|e| Error::usage(format!("its `hooks` is not a JSON object ({e})")).into()),
        None => Ok(Ordered::default()),
    }
}

/// The entries of one event's array.
fn event_entries(hooks: &Ordered, event: &str) -> Result<Vec<Box<RawValue>>> {
    match hooks.get(event) {
        Some(a) => serde_json::from_str(a.get()).map_err(|e| {
            Error::usage(format!("its `hooks.{event}` is not a JSON array ({e})")).into()
        }),
        None => Ok(Vec::new()),
    }
}

/// The events omnish's hook is installed for in `settings`.
fn ours_in(settings: &Ordered) -> Result<Vec<String>> {
    let hooks = hooks_of(settings)?;
    let mut out = Vec::new();
    for event in CLAUDE_EVENTS {
        if event_entries(&hooks, event)?
            .iter()
            .any(|e| entry_is_ours(e))
        {
            out.push(event.to_string());
        }
    }
    Ok(out)
}

fn install(settings: &Ordered, command: &str) -> Result<Option<String>> {
    let hooks = hooks_of(settings)?;
    let mut events = Vec::new();
    for event in CLAUDE_EVENTS {
        let entries = event_entries(&hooks, event)?;
        if entries.iter().any(|e| entry_is_ours(e)) {
            continue;
        }
        let mut nodes: Vec<Node> = entries.into_iter().map(Node::Raw).collect();
        nodes.push(our_entry(command));
        events.push((event.to_string(), Some(nodes)));
    }
    Ok((!events.is_empty()).then(|| rebuild(settings, &hooks, events)))
}

fn uninstall(settings: &Ordered) -> Result<Option<String>> {
    let hooks = hooks_of(settings)?;
    let mut events = Vec::new();
    for event in CLAUDE_EVENTS {
        let entries = event_entries(&hooks, event)?;
        let before = entries.len();
        let kept: Vec<Node> = entries
            .into_iter()
            .filter(|e| !entry_is_ours(e))
            .map(Node::Raw)
            .collect();
        if kept.len() != before {
            events.push((event.to_string(), (!kept.is_empty()).then_some(kept)));
        }
    }
    Ok((!events.is_empty()).then(|| rebuild(settings, &hooks, events)))
}

/// Applies `change` to the settings file at `path` (a missing one is an empty object) and
/// writes it back when it changed, atomically, keeping its permissions.
fn edit(path: &Path, change: impl FnOnce(&Ordered) -> Result<Option<String>>) -> Result<bool> {
    let named = |e: anyhow::Error| -> anyhow::Error {
        match crate::error::Error::from(e) {
            Error::Usage(u) => Error::Usage(crate::error::Usage {
                message: format!(
                    "{}: {}; fix it, then try again (nothing was changed)",
                    path.display(),
                    u.message
                ),
                ..u
            })
            .into(),
            other => other.into(),
        }
    };
    let settings = match std::fs::read(path) {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ordered::default(),
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| named(Error::usage(format!("not a JSON object ({e})")).into()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ordered::default(),
        Err(e) => return Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
    };
    let Some(text) = change(&settings).map_err(named)? else {
        return Ok(false);
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = path.with_extension("json.omnish-tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    if let Ok(m) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, m.permissions());
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(true)
}

/// What Claude Code writes on a hook's stdin, the fields omnish reads.
#[derive(Deserialize, Default)]
struct ClaudeInput {
    #[serde(default)]
    session_id: String,
    #[serde(default)]
    cwd: String,
    #[serde(default)]
    hook_event_name: String,
    #[serde(default)]
    tool_name: String,
    #[serde(default)]
    tool_input: ToolInput,
    #[serde(default)]
    tool_response: Option<ToolResponse>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize, Default)]
struct ToolInput {
    #[serde(default)]
    command: String,
}

#[derive(Deserialize, Default)]
struct ToolResponse {
    #[serde(default)]
    stdout: String,
    #[serde(default)]
    stderr: String,
    #[serde(default)]
    interrupted: bool,
}

/// The command, its output as the agent received it, and its status, from Claude Code's JSON.
fn claude_record(input: &ClaudeInput) -> Option<(String, Vec<u8>, Option<i32>)> {
    if input.tool_name != CLAUDE_MATCHER || input.tool_input.command.is_empty() {
        return None;
    }
    let command = input.tool_input.command.clone();
    match input.hook_event_name.as_str() {
        "PostToolUse" => {
            let r = input.tool_response.as_ref()?;
            let mut out = r.stdout.clone().into_bytes();
            if !r.stderr.is_empty() {
                if !out.is_empty() && !out.ends_with(b"\n") {
                    out.push(b'\n');
                }
                out.extend_from_slice(r.stderr.as_bytes());
            }
            Some((command, out, (!r.interrupted).then_some(0)))
        }
        "PostToolUseFailure" => {
            let error = match &input.error {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => String::new(),
            };
            Some((command, error.clone().into_bytes(), exit_code_in(&error)))
        }
        _ => None,
    }
}

/// The status in an error text like `Exit code 2\n...`.
fn exit_code_in(error: &str) -> Option<i32> {
    let rest = error.trim_start().strip_prefix("Exit code ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The hook itself (see the module docs): any failure is silent.
fn run_hook(agent: HookAgent) -> Option<()> {
    let HookAgent::ClaudeCode = agent;
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT)
        .read_to_end(&mut bytes)
        .ok()?;
    let input: ClaudeInput = serde_json::from_slice(&bytes).ok()?;
    let (command, output, code) = claude_record(&input)?;
    let (cfg, _) = crate::config::Config::load_lenient();
    let root = cfg.data_root().ok()?;
    let parent = std::env::var("OMNISH_SESSION_ID")
        .ok()
        .filter(|id| store::is_session_id(id))
        .filter(|id| store::sessions_dir(&root).join(id).is_dir());
    let key = (!input.session_id.is_empty()).then_some(input.session_id.as_str());
    let author = "claude-code";
    let target = attached::Target {
        root: &root,
        parent: parent.as_deref(),
        author,
        // In a terminal, the agent's sessions share its attached sessions (one at a time).
        key: if parent.is_some() { None } else { key },
        meta: attached::new_meta(
            "claude",
            &["claude".to_string()],
            &input.cwd,
            store::now_ms(),
        ),
        wait: true,
    };
    let claimed = attached::claim(target).ok()?;
    let mut rec = Recording::start(claimed, &command, &input.cwd, author, (80, 24))?;
    rec.chunk(&output);
    rec.finish(code);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_twice_then_uninstall_keeps_the_rest_byte_for_byte() {
        let user = r#"{
  "model": "opus",
  "env": {"B": "2",   "A": "1"},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine.sh"}]}],
    "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}]
  },
  "permissions": {"allow": ["Bash(ls:*)"]}
}"#;
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(".claude/settings.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, user).unwrap();
        let cmd = "/opt/bin/omnish hooks run claude-code";
        assert!(edit(&path, |s| install(s, cmd)).unwrap());
        let once = std::fs::read_to_string(&path).unwrap();
        assert!(!edit(&path, |s| install(s, cmd)).unwrap(), "idempotent");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), once);
        // The user's values, as written, in their order.
        for kept in [
            r#""model": "opus""#,
            r#"{"B": "2",   "A": "1"}"#,
            r#"[{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine.sh"}]}]"#,
            r#"{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}"#,
            r#"{"allow": ["Bash(ls:*)"]}"#,
        ] {
            assert!(once.contains(kept), "{kept} lost:\n{once}");
        }
        let at = |s: &str| once.find(s).unwrap();
        assert!(at("\"model\"") < at("\"env\"") && at("\"env\"") < at("\"hooks\""));
        assert!(at("\"hooks\"") < at("\"permissions\""));
        let v: serde_json::Value = serde_json::from_str(&once).unwrap();
        assert_eq!(v["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(v["hooks"]["PostToolUse"][1]["hooks"][0]["command"], cmd);
        assert_eq!(v["hooks"]["PostToolUseFailure"][0]["matcher"], "Bash");
        let s: Ordered = serde_json::from_str(&once).unwrap();
        assert_eq!(ours_in(&s).unwrap(), CLAUDE_EVENTS);
        assert!(edit(&path, uninstall).unwrap());
        // The same settings; every value omnish did not add to is back byte for byte, and
        // the user's entry in the array it added to too (only that array's layout is new).
        let after = std::fs::read_to_string(&path).unwrap();
        let (a, b): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&after).unwrap(),
            serde_json::from_str(user).unwrap(),
        );
        assert_eq!(a, b);
        for kept in [
            r#"  "model": "opus",
  "env": {"B": "2",   "A": "1"},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine.sh"}]}],"#,
            r#"{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}"#,
            r#"  "permissions": {"allow": ["Bash(ls:*)"]}
}
"#,
        ] {
            assert!(after.contains(kept), "{kept} changed:\n{after}");
        }
        assert!(!edit(&path, uninstall).unwrap());
    }

    #[test]
    fn a_file_that_is_not_an_object_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.json");
        std::fs::write(&path, "[1, 2").unwrap();
        let e = edit(&path, |s| install(s, "omnish hooks run claude-code")).unwrap_err();
        assert!(e.to_string().contains("nothing was changed"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[1, 2");
    }

    #[test]
    fn the_agents_json_becomes_command_output_and_status() {
        let ok: ClaudeInput = serde_json::from_str(
            r#"{"session_id":"abc","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Bash",
                "tool_input":{"command":"ls","description":"list"},"tool_use_id":"t",
                "tool_response":{"stdout":"a\nb","stderr":"warn","interrupted":false,"isImage":false}}"#,
        )
        .unwrap();
        assert_eq!(
            claude_record(&ok),
            Some(("ls".into(), b"a\nb\nwarn".to_vec(), Some(0)))
        );
        let failed: ClaudeInput = serde_json::from_str(
            r#"{"session_id":"abc","cwd":"/p","hook_event_name":"PostToolUseFailure",
                "tool_name":"Bash","tool_input":{"command":"make"},"tool_use_id":"t",
                "error":"Exit code 2\nmake: *** no rule","is_interrupt":false}"#,
        )
        .unwrap();
        let (_, out, code) = claude_record(&failed).unwrap();
        assert_eq!(
            (out, code),
            (b"Exit code 2\nmake: *** no rule".to_vec(), Some(2))
        );
        let other: ClaudeInput = serde_json::from_str(
            r#"{"hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{}}"#,
        )
        .unwrap();
        assert_eq!(claude_record(&other), None);
        assert!(is_ours("/usr/local/bin/omnish hooks run claude-code"));
        assert!(!is_ours("omnish-other hooks run claude-code"));
        assert!(!is_ours("mine.sh"));
    }
}
