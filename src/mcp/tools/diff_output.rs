//! `diff_output`: how two commands' outputs differ, as `omnish diff` shows it (the same
//! library call, [`crate::context::diff`]), within the budget.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::args::{Budget, Session, number};
use super::shared::{counter, fence, label, session_out_schema, target, tokens_within};
use super::{Output, Tool, ToolResult};
use crate::context::diff::{self, CommandRef, DiffRequest};
use crate::context::stages::select::SessionChoice;
use crate::mcp::Config;
use crate::term::visible;

pub(super) struct DiffOutput;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    #[serde(default)]
    #[schemars(
        with = "String",
        length(min = 1, max = 256),
        description = "The newer command's id as recent_commands gives it ('<session_id>:<seq>' or '<seq>'); default: the last finished command."
    )]
    new: Option<String>,
    #[serde(default)]
    #[schemars(
        with = "String",
        length(min = 1, max = 256),
        description = "The older command's id; default: the previous run of the newer command's line (with ok: its last successful run)."
    )]
    old: Option<String>,
    /// Compare with the last successful run of the same command line ("what changed since it worked").
    #[serde(default)]
    ok: bool,
    /// Mask volatile tokens first: times, durations, pids, hex addresses, UUIDs, temp paths.
    #[serde(default)]
    normalize: bool,
    /// Unchanged lines shown around each change.
    #[serde(default = "number::<3>")]
    #[schemars(range(max = 50))]
    context: u32,
    /// Most lines of diff to return (fewer when the budget is reached).
    #[serde(default = "number::<400>")]
    #[schemars(range(min = 1, max = 5000))]
    max_lines: u32,
    #[serde(default = "Session::current")]
    session: Session,
    #[serde(default)]
    budget: Budget,
}

impl Tool for DiffOutput {
    const NAME: &'static str = "diff_output";
    const TITLE: &'static str = "How two outputs differ";
    const DESCRIPTION: &'static str = "The unified diff of two recorded commands' outputs, as \
        the terminal showed them, secrets redacted. Without ids: the last command against the \
        previous run of the same command line; ok: against its last successful run (what \
        changed since it worked); normalize masks times, pids and addresses.";
    type Args = Args;

    fn output_schema() -> Value {
        let side = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "command_line": {"type": "string"},
                "exit_code": {"type": ["integer", "null"]}
            },
            "required": ["id", "command_line", "exit_code"]
        });
        json!({
            "type": "object",
            "properties": {
                "session": session_out_schema(),
                "old": side,
                "new": side,
                "differ": {"type": "boolean"},
                "removed": {"type": "integer", "description": "lines of the old output not in the new"},
                "added": {"type": "integer", "description": "lines of the new output not in the old"},
                "diff": {"type": "string", "description": "the unified diff, as much as fits"},
                "lines_left_out": {"type": "integer", "description": "lines of diff the limits left out"}
            },
            "required": ["session", "old", "new", "differ", "removed", "added", "diff", "lines_left_out"]
        })
    }

    fn call(config: &Config, args: Args) -> ToolResult {
        diff_output(config, args)
    }
}

fn diff_output(config: &Config, args: Args) -> ToolResult {
    let id = |name: &str, v: &Option<String>| -> Result<Option<CommandRef>, String> {
        v.as_deref()
            .map(|s| CommandRef::parse(s).map_err(|e| format!("argument `{name}`: {e}")))
            .transpose()
    };
    let new = id("new", &args.new)?;
    let old = id("old", &args.old)?;
    if old.is_some() && new.is_none() {
        return Err("argument `old` needs `new` too (without ids: the last command)".into());
    }
    if old.is_some() && args.ok {
        return Err("argument `ok` picks the old command; give `old` or `ok`, not both".into());
    }
    let (session_id, which) = match target(config, &args.session.0)? {
        (SessionChoice::Id(full), which) => (full, which),
        _ => return Err("argument `session` names one session, not 'all'".into()),
    };
    let req = DiffRequest {
        data_root: config.data_root().to_path_buf(),
        current_session: config.env_session().map(str::to_string),
        session: session_id,
        old,
        new,
        ok: args.ok,
        normalize: args.normalize,
        redact: config.settings.redact,
        context: args.context as usize,
        max_lines: Some(args.max_lines as usize),
    };
    let mut bytes = Vec::new();
    let outcome = diff::diff(&req, &mut bytes).map_err(|e| e.to_string())?;
    let text_diff = String::from_utf8_lossy(&bytes).into_owned();
    let lines: Vec<&str> = text_diff.lines().collect();
    let budget = args.budget.tokens();
    let counter = counter();
    let head = label(config, &which);
    let side = |s: &diff::Side| json!({"id": s.id, "command_line": s.command_line, "exit_code": s.exit_code});
    let mut shown = lines.len();
    loop {
        let left_out = outcome.cut + (lines.len() - shown) as u64;
        let mut text = format!(
            "{head}\nOutput of {} against {}{}: ",
            visible::line(&outcome.new.id),
            visible::line(&outcome.old.id),
            if req.normalize { ", normalized" } else { "" }
        );
        let body = lines[..shown].join("\n");
        if !outcome.differ() {
            text.push_str("the same.");
        } else {
            text.push_str(&format!(
                "{} lines removed, {} added.\n",
                outcome.removed, outcome.added
            ));
            text.push_str(&fence(&visible::text(&body)));
            if left_out > 0 {
                text.push_str(&format!(
                    "\n{left_out} more lines of diff left out (max_lines, budget)."
                ));
            }
        }
        let (n, fits) = tokens_within(&text, budget, counter.as_ref());
        if fits {
            let structured = json!({
                "session": which,
                "old": side(&outcome.old),
                "new": side(&outcome.new),
                "differ": outcome.differ(),
                "removed": outcome.removed,
                "added": outcome.added,
                "diff": body,
                "lines_left_out": left_out,
            });
            return Ok(Output { text, structured });
        }
        if shown == 0 {
            return Err(format!(
                "budget {budget} is too small to show even the diff's header; give a larger budget"
            ));
        }
        let cut = (shown * (n - budget)).div_ceil(n).max(1);
        shown = shown.saturating_sub(cut);
    }
}
