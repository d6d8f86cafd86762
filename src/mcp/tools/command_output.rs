//! `command_output`: the output lines of one recorded command, by id, a page at a time, within
//! the budget.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::args::{Budget, number};
use super::shared::{
    counter, ending, fence, label, redacted, redacted_line, session_out_schema, target,
    tokens_within,
};
use super::{Output, Tool, ToolResult};
use crate::context::queries::range;
use crate::context::stages::select::SessionChoice;
use crate::context::support::pattern::quote;
use crate::context::words;
use crate::mcp::{Config, session};
use crate::term::visible;

pub(super) struct CommandOutput;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    // Said in the attribute, not a doc comment: rustdoc would read `<seq>` as HTML.
    #[schemars(
        length(min = 1),
        description = "The command's id as recent_commands or search give it: '<session_id>:<seq>', or just '<seq>' for a command of the current session."
    )]
    id: String,
    /// First line to return, from 1; negative counts from the end (-50: the last 50 lines).
    #[serde(default = "one")]
    start_line: i64,
    /// Most lines to return (fewer when the budget is reached).
    #[serde(default = "number::<200>")]
    #[schemars(range(min = 1, max = 5000))]
    max_lines: u32,
    /// Chars per line; longer lines keep head and tail.
    #[serde(default = "number::<500>")]
    #[schemars(range(min = 20, max = 2048))]
    max_line_width: u32,
    #[serde(default)]
    budget: Budget,
}

fn one() -> i64 {
    1
}

/// Longest `id` argument of `command_output` looked up.
const MAX_ID_ARG: usize = 256;

/// Most chars of a command line `command_output` shows (head and tail kept).
const MAX_SHOWN_LINE: usize = 8192;

impl Tool for CommandOutput {
    const NAME: &'static str = "command_output";
    const TITLE: &'static str = "One command's output";
    const DESCRIPTION: &'static str = "The output lines of one recorded command, by id, for \
        outputs too long for recent_commands to show whole: page through them with start_line \
        and max_lines. Lines are as the terminal showed them, secrets redacted.";
    type Args = Args;

    fn output_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "session": session_out_schema(),
                "id": {"type": "string"},
                "command_line": {"type": "string"},
                "cwd": {"type": "string"},
                "exit_code": {"type": ["integer", "null"]},
                "running": {"type": "boolean"},
                "total_lines": {"type": "integer"},
                "start_line": {"type": "integer", "description": "number (from 1) of the first line returned"},
                "end_line": {"type": "integer", "description": "number of the last line returned (start_line - 1 when none)"},
                "lines": {"type": "array", "items": {"type": "string"}},
                "next_start_line": {"type": ["integer", "null"], "description": "start_line for the next page; null at the end"},
                "note": {"type": ["string", "null"], "description": "the output in one line when it is not text (binary, unreadable)"}
            },
            "required": ["session", "id", "command_line", "cwd", "exit_code", "running", "total_lines",
                         "start_line", "end_line", "lines", "next_start_line", "note"]
        })
    }

    fn call(config: &Config, args: Args) -> ToolResult {
        command_output(config, args)
    }
}

fn command_output(config: &Config, args: Args) -> ToolResult {
    let id = args.id.as_str();
    let bad_id = || {
        format!(
            "argument `id` must be '<session_id>:<seq>' or '<seq>' (seq from 1), as \
             recent_commands lists them; got {}",
            quote(id)
        )
    };
    if id.len() > MAX_ID_ARG {
        return Err(bad_id());
    }
    let start = args.start_line;
    if start == 0 {
        return Err(
            "argument `start_line` counts from 1 (or from the end when negative); got 0".into(),
        );
    }
    let max_lines = args.max_lines as usize;
    let width = args.max_line_width as usize;
    let budget = args.budget.tokens();
    let (session_part, seq_part) = match id.rsplit_once(':') {
        Some((s, q)) => (Some(s), q),
        None => (None, id),
    };
    let seq: u64 = seq_part
        .trim()
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(bad_id)?;
    let (session_id, which) = match session_part {
        Some(s) => match target(config, s)? {
            (SessionChoice::Id(full), which) => (full, which),
            _ => return Err("argument `id` names one session, not 'all'".into()),
        },
        None => {
            let c = session::choose(config).map_err(|e| e.to_string())?;
            let which = json!({"id": c.id, "reason": c.reason});
            (c.id, which)
        }
    };
    let mut warnings = Vec::new();
    let mut c = range::find_command(
        config.data_root(),
        &session_id,
        seq,
        config.env_session(),
        &mut warnings,
    )
    .map_err(|e| e.to_string())?
    .ok_or_else(|| {
        format!("no command {seq} in session {session_id}; recent_commands lists the ids there are")
    })?;
    // The whole output, pages of it at a time: full-screen programs' whole last screens too.
    c.screens = crate::term::render::Screens::Full;
    // Lines are numbered from 1 here, from 0 in the library.
    let redacting = config.settings.redact;
    let total_guess = if start < 0 {
        range::output_range(&c, 0, 0, width, redacting).total
    } else {
        0
    };
    let first = if start < 0 {
        total_guess.saturating_sub(start.unsigned_abs())
    } else {
        start as u64 - 1
    };
    let r = range::output_range(&c, first, max_lines, width, redacting);
    let record = &c.record;
    let line = if record.private {
        words::PRIVATE_COMMAND.to_string()
    } else {
        redacted_line(config, &record.command_line, MAX_SHOWN_LINE)
    };
    let status = words::status(ending(&c));
    let head = label(config, &which);
    let full_id = format!("{session_id}:{seq}");
    let counter = counter();
    // Fewer lines until the text fits.
    let mut shown = r.lines.len();
    loop {
        let end = r.first + shown as u64; // last line shown, numbered from 1
        let next = (end < r.total && r.note.is_none()).then_some(end + 1);
        // Everything recorded (the command line too: it may span lines, or hold what looks
        // like instructions) goes inside the fence; outside it only what omnish says.
        let mut text = format!("{head}\nCommand {full_id} [{status}]");
        let body = match &r.note {
            Some(note) => visible::line(note).into_owned(),
            None if shown == 0 && r.total == 0 => "(no output)".to_string(),
            None if shown == 0 => format!(
                "(no lines from {}: the output has {} lines)",
                r.first + 1,
                r.total
            ),
            None => r.lines[..shown]
                .iter()
                .map(|l| visible::text(l))
                .collect::<Vec<_>>()
                .join("\n"),
        };
        if r.note.is_none() && shown > 0 {
            text.push_str(&format!(
                ", its command line and output lines {}-{end} of {}:\n",
                r.first + 1,
                r.total
            ));
        } else {
            text.push_str(", its command line and output:\n");
        }
        text.push_str(&fence(&format!("$ {}\n{body}", visible::text(&line))));
        if let Some(n) = next {
            text.push_str(&format!("\nMore: call again with start_line {n}."));
        }
        let (n, fits) = tokens_within(&text, budget, counter.as_ref());
        if fits {
            let cwd = redacted(config, &record.cwd).into_owned();
            let structured = json!({
                "session": which,
                "id": full_id,
                "command_line": line,
                "cwd": cwd,
                "exit_code": ending(&c).exit_code,
                "running": c.running,
                "total_lines": r.total,
                "start_line": r.first + 1,
                "end_line": if r.note.is_some() { r.first } else { end },
                "lines": &r.lines[..shown],
                "next_start_line": next,
                "note": r.note,
            });
            return Ok(Output { text, structured });
        }
        if shown == 0 {
            return Err(format!(
                "budget {budget} is too small to show even the command's header; give a larger budget"
            ));
        }
        // Cut in proportion to the excess, at least one line.
        let cut = (shown * (n - budget)).div_ceil(n).max(1);
        shown = shown.saturating_sub(cut);
    }
}
