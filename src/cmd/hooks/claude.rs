//! Claude Code's hook input: what its `PostToolUse` and `PostToolUseFailure` hooks receive on
//! stdin for its `Bash` tool, made into a [`Hooked`] command.
//!
//! Claude Code's hooks documentation gives the JSON: `session_id`, `transcript_path`, `cwd`,
//! `permission_mode`, `hook_event_name`, `tool_name`, `tool_input` (`command`, `description`),
//! `tool_use_id`, and `tool_response` (`stdout`, `stderr`, `interrupted`, `isImage`) after a
//! success, `error` (a text beginning `Exit code N` for a command's non-zero exit) and
//! `is_interrupt` after a failure.

use super::Hooked;
use serde::Deserialize;

/// The tool omnish's hook matches.
pub(crate) const MATCHER: &str = "Bash";

/// What Claude Code writes on a hook's stdin, the fields omnish reads.
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

/// The command, its output as the agent received it (stdout, then stderr; the error text after
/// a failure), and its status (0 after a success, the `Exit code N` a failure reports, else
/// unknown).
pub(crate) fn hooked(input: Input) -> Option<Hooked> {
    if input.tool_name != MATCHER || input.tool_input.command.is_empty() {
        return None;
    }
    let (output, code) = match input.hook_event_name.as_str() {
        "PostToolUse" => {
            let r = input.tool_response?;
            let mut out = r.stdout.into_bytes();
            if !r.stderr.is_empty() {
                if !out.is_empty() && !out.ends_with(b"\n") {
                    out.push(b'\n');
                }
                out.extend_from_slice(r.stderr.as_bytes());
            }
            (out, (!r.interrupted).then_some(0))
        }
        "PostToolUseFailure" => {
            let error = match input.error {
                Some(serde_json::Value::String(s)) => s,
                Some(v) => v.to_string(),
                None => String::new(),
            };
            let code = exit_code_in(&error);
            (error.into_bytes(), code)
        }
        _ => return None,
    };
    Some(Hooked {
        session: input.session_id,
        cwd: input.cwd,
        command: input.tool_input.command,
        output,
        code,
    })
}

/// The status in an error text like `Exit code 2\n...`.
fn exit_code_in(error: &str) -> Option<i32> {
    let rest = error.trim_start().strip_prefix("Exit code ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Option<(String, Vec<u8>, Option<i32>)> {
        hooked(serde_json::from_str(json).unwrap()).map(|h| (h.command, h.output, h.code))
    }

    #[test]
    fn the_agents_json_becomes_command_output_and_status() {
        assert_eq!(
            parse(
                r#"{"session_id":"abc","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Bash",
                "tool_input":{"command":"ls","description":"list"},"tool_use_id":"t",
                "tool_response":{"stdout":"a\nb","stderr":"warn","interrupted":false,"isImage":false}}"#
            ),
            Some(("ls".into(), b"a\nb\nwarn".to_vec(), Some(0)))
        );
        let (_, out, code) = parse(
            r#"{"session_id":"abc","cwd":"/p","hook_event_name":"PostToolUseFailure",
                "tool_name":"Bash","tool_input":{"command":"make"},"tool_use_id":"t",
                "error":"Exit code 2\nmake: *** no rule","is_interrupt":false}"#,
        )
        .unwrap();
        assert_eq!(
            (out, code),
            (b"Exit code 2\nmake: *** no rule".to_vec(), Some(2))
        );
        assert_eq!(
            parse(r#"{"hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{}}"#),
            None
        );
    }
}
