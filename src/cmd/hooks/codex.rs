//! Codex CLI's hook input: what its `PostToolUse` hook receives on stdin for its `Bash` tool,
//! made into a [`Hooked`] command.
//!
//! Codex's generated schema (codex-rs/hooks/schema/generated/post-tool-use.command.input.schema.json)
//! lists the fields: `session_id`, `turn_id`, `transcript_path`, `cwd`, `hook_event_name`
//! (`PostToolUse`), `model`, `permission_mode`, `tool_name`, `tool_input`, `tool_response` and
//! `tool_use_id`. For a shell command (codex-rs/hooks/src/events/post_tool_use.rs: "Shell-like
//! tools pass `{ "command": ... }` as `tool_input`"), `tool_input.command` is the command line
//! and `tool_response` the text of what the command printed, cut to the model's budget as the
//! agent received it (codex-rs/core/src/tools/context.rs, `post_tool_use_response`). The exit
//! status is not in it: Codex's records have none (unknown), rather than a guess.

use super::Hooked;
use serde::Deserialize;

/// The tool omnish's hook matches.
pub(crate) const MATCHER: &str = "Bash";

/// What Codex writes on a `PostToolUse` hook's stdin, the fields omnish reads.
#[derive(Deserialize, Default)]
pub(crate) struct Input {
    #[serde(default)]
    session_id: String,
    #[serde(default)]
    cwd: String,
    #[serde(default)]
    hook_event_name: String,
    #[serde(default)]
    tool_name: String,
    #[serde(default)]
    tool_input: serde_json::Value,
    #[serde(default)]
    tool_response: serde_json::Value,
}

/// The command, its directory and its output as the agent received it (status unknown).
pub(crate) fn hooked(input: Input) -> Option<Hooked> {
    if input.hook_event_name != "PostToolUse" || input.tool_name != MATCHER {
        return None;
    }
    let command = match &input.tool_input["command"] {
        serde_json::Value::String(s) => s.clone(),
        // An argv, as older versions gave it.
        serde_json::Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(|w| w.as_str()).collect();
            shlex::try_join(words).ok()?
        }
        _ => return None,
    };
    if command.is_empty() {
        return None;
    }
    let output = match input.tool_response {
        serde_json::Value::String(s) => s,
        serde_json::Value::Null => String::new(),
        // Not a shell's text (another version's shape): what it holds, as JSON.
        other => other.to_string(),
    };
    Some(Hooked {
        session: input.session_id,
        cwd: input.cwd,
        command,
        output: output.into_bytes(),
        code: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_json_becomes_command_and_output() {
        let h = hooked(
            serde_json::from_str(
                r#"{"session_id":"019a","turn_id":"t1","transcript_path":null,"cwd":"/p",
                "hook_event_name":"PostToolUse","model":"gpt-5","permission_mode":"default",
                "tool_name":"Bash","tool_input":{"command":"cargo test"},
                "tool_response":"running 1 test\ntest ok ... ok\n","tool_use_id":"call_1"}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            (
                h.session.as_str(),
                h.command.as_str(),
                h.cwd.as_str(),
                h.code
            ),
            ("019a", "cargo test", "/p", None)
        );
        assert_eq!(h.output, b"running 1 test\ntest ok ... ok\n");
        let argv = hooked(
            serde_json::from_str(
                r#"{"hook_event_name":"PostToolUse","tool_name":"Bash",
                "tool_input":{"command":["bash","-lc","echo 'a b'"]},"tool_response":"a b"}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(argv.command, r#"bash -lc "echo 'a b'""#);
        for other in [
            r#"{"hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":{"command":"x"}}"#,
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"x"}}"#,
            r#"{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{}}"#,
        ] {
            assert!(
                hooked(serde_json::from_str(other).unwrap()).is_none(),
                "{other}"
            );
        }
    }
}
