//! Gemini CLI's hook input: what its `AfterTool` hook receives on stdin for its
//! `run_shell_command` tool, made into a [`Hooked`] command.
//!
//! Gemini CLI's hooks reference (docs/hooks/reference.md) gives the base fields every hook
//! receives (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp`) and, for
//! `AfterTool`, `tool_name`, `tool_input` (the model's arguments: for the shell tool `command`,
//! `description`, `dir_path`, `is_background`) and `tool_response` (`llmContent`,
//! `returnDisplay`, `error`). The shell tool (packages/core/src/tools/shell.ts) makes
//! `llmContent` of lines `Output: <output or (empty)>`, then `Error: <message>`,
//! `Exit Code: <n>` (when not 0), `Signal: <n>`, `Background PIDs: <pids>` and
//! `Process Group PGID: <pid>` when they apply, all wrapped in `<untrusted_context>` ... (newer
//! versions); a cancelled or backgrounded command gets a sentence instead. That text is what the
//! agent received, so the record keeps it: the output (with an `Error:` line, which the agent
//! got as part of it), and the status from `Exit Code:` (absent: 0; a signal, a cancelled or a
//! background command: unknown). The PGID and background PIDs lines are the tool's
//! bookkeeping, not the command's output, and are left out. Versions before 2026-01 began with
//! `Command:` and `Directory:` lines and wrote every line, `(none)` where it did not apply; they
//! are read the same way.

use super::Hooked;
use serde::Deserialize;
use std::path::Path;

/// The tool omnish's hook matches (Gemini CLI tests the matcher as a regular expression).
pub(crate) const MATCHER: &str = "^run_shell_command$";
/// The shell tool's name.
const TOOL: &str = "run_shell_command";

/// What Gemini CLI writes on an `AfterTool` hook's stdin, the fields omnish reads.
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
    tool_response: ToolResponse,
}

#[derive(Deserialize, Default)]
struct ToolInput {
    #[serde(default)]
    command: String,
    #[serde(default)]
    dir_path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ToolResponse {
    #[serde(default)]
    llm_content: serde_json::Value,
    #[serde(default)]
    error: serde_json::Value,
}

/// The command, where it ran, its output as the agent received it, and its status.
pub(crate) fn hooked(input: Input) -> Option<Hooked> {
    if input.hook_event_name != "AfterTool"
        || input.tool_name != TOOL
        || input.tool_input.command.is_empty()
    {
        return None;
    }
    let text = match &input.tool_response.llm_content {
        serde_json::Value::String(s) => s.as_str(),
        _ => "",
    };
    let failed = !input.tool_response.error.is_null();
    let (output, code) = shell_result(text, failed);
    let cwd = match input.tool_input.dir_path.as_deref() {
        Some(d) if !d.is_empty() => Path::new(&input.cwd).join(d).to_string_lossy().into_owned(),
        _ => input.cwd,
    };
    Some(Hooked {
        session: input.session_id,
        cwd,
        command: input.tool_input.command,
        output: output.into_bytes(),
        code,
    })
}

/// The output and status in the shell tool's `llmContent` (see the module docs); `failed`: the
/// tool reported an error.
fn shell_result(text: &str, failed: bool) -> (String, Option<i32>) {
    let text = match text
        .strip_prefix("<untrusted_context>\n")
        .and_then(|t| t.strip_suffix("\n</untrusted_context>"))
    {
        Some(inner) => inner.replace("&lt;/untrusted_context&gt;", "</untrusted_context>"),
        None => text.to_string(),
    };
    // Older versions began with `Command: ...` and `Directory: ...` lines.
    let body = match text.find("Output: ") {
        Some(0) => &text["Output: ".len()..],
        Some(at)
            if text.starts_with("Command: ")
                && text[..at].ends_with('\n')
                && text[..at].lines().all(|l| !l.starts_with("Output: ")) =>
        {
            &text[at + "Output: ".len()..]
        }
        // A cancelled or backgrounded command: the sentence the agent got.
        _ => return (text, None),
    };
    let mut body = body;
    let mut code = None;
    let mut signalled = false;
    for (label, kept) in [
        ("Process Group PGID: ", false),
        ("Background PIDs: ", false),
        ("Signal: ", true),
        ("Exit Code: ", true),
    ] {
        let Some(nl) = body.rfind('\n') else { break };
        let Some(value) = body[nl + 1..].strip_prefix(label) else {
            continue;
        };
        // Older versions wrote every line, `(none)` for what did not apply.
        let value = value.trim();
        if kept && label == "Exit Code: " {
            code = value.parse().ok();
        } else if kept && value != "(none)" {
            signalled = true;
        }
        body = &body[..nl];
    }
    body = body.strip_suffix("\nError: (none)").unwrap_or(body);
    let mut out = match body.strip_prefix("(empty)") {
        Some("") => String::new(),
        Some(rest) if rest.starts_with("\nError: ") => rest[1..].to_string(),
        _ => body.to_string(),
    };
    if signalled {
        code = None;
    } else if code.is_none() && !failed {
        code = Some(0);
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    (out, code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_tools_text_becomes_output_and_status() {
        let wrap = |s: &str| format!("<untrusted_context>\n{s}\n</untrusted_context>");
        assert_eq!(
            shell_result(&wrap("Output: a\nb\nProcess Group PGID: 4242"), false),
            ("a\nb\n".into(), Some(0))
        );
        assert_eq!(
            shell_result(
                &wrap("Output: make: *** no rule\nExit Code: 2\nProcess Group PGID: 7"),
                false
            ),
            ("make: *** no rule\n".into(), Some(2))
        );
        assert_eq!(
            shell_result(&wrap("Output: (empty)\nProcess Group PGID: 7"), false),
            (String::new(), Some(0))
        );
        assert_eq!(
            shell_result(
                &wrap("Output: (empty)\nError: spawn sh ENOENT\nExit Code: 127"),
                true
            ),
            ("Error: spawn sh ENOENT\n".into(), Some(127))
        );
        assert_eq!(
            shell_result(&wrap("Output: x\nSignal: 9\nProcess Group PGID: 7"), false),
            ("x\n".into(), None)
        );
        // What the command printed is kept even where it looks like the tool's lines.
        assert_eq!(
            shell_result(&wrap("Output: Exit Code: 5\nok"), false),
            ("Exit Code: 5\nok\n".into(), Some(0))
        );
        let cancelled = "Command was cancelled by user before it could complete. There was no output before it was cancelled.";
        assert_eq!(
            shell_result(&wrap(cancelled), false),
            (cancelled.into(), None)
        );
        assert_eq!(
            shell_result(
                "Command: ls\nDirectory: (root)\nOutput: a\nError: (none)\nExit Code: (none)\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: (none)",
                false
            )
            .0,
            "a\n"
        );
        assert_eq!(
            shell_result(
                "Command: false\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 9",
                false
            ),
            (String::new(), Some(1))
        );
    }
}
