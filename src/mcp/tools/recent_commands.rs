//! `recent_commands`: the newest commands of a recorded terminal, filtered, as one fitted
//! document (the library's, as `omnish context` prints it) between labels, with their ids.
//! `search` is this with a required pattern over all sessions.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;

use super::args::{Budget, Session, number};
use super::shared::{
    TOKENIZER, argument, counter, fence, label, session_out_schema, target, tokens_within,
};
use super::{Output, Tool, ToolResult};
use crate::context::model::{ContextDoc, Parts};
use crate::context::request::{Filters, Options};
use crate::context::stages::format::{self, Format};
use crate::context::support::pattern::quote;
use crate::context::{self, Frame};
use crate::mcp::Config;
use crate::term::visible;

pub(super) struct RecentCommands;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// How many of the most recent matching commands.
    #[serde(default = "number::<10>")]
    #[schemars(range(min = 1, max = 200))]
    count: u32,
    /// Only commands with a non-zero exit status.
    #[serde(default)]
    failed: bool,
    /// Only commands whose command line or output matches this regular expression (Rust regex syntax).
    #[serde(default)]
    #[schemars(with = "String", length(min = 1))]
    grep: Option<String>,
    /// Only commands run inside the project the server runs in (its git work tree).
    #[serde(default)]
    here: bool,
    /// Only commands run in this directory or below it (absolute path).
    #[serde(default)]
    #[schemars(with = "String", length(min = 1))]
    cwd: Option<String>,
    /// Only commands started within this duration: 90s, 15m, 2h, 1d.
    #[serde(default)]
    #[schemars(with = "String", length(min = 1))]
    since: Option<String>,
    /// Only commands that ran on this host, exactly: a nested shell's host or container (ssh, docker exec), else the session's.
    #[serde(default)]
    #[schemars(with = "String", length(min = 1))]
    host: Option<String>,
    /// Only commands that ran as this user, exactly: a nested shell's user (sudo, su, ssh), else the session's.
    #[serde(default)]
    #[schemars(with = "String", length(min = 1))]
    user: Option<String>,
    /// Whose commands: user (typed in the terminal), agents (agents' tool calls and omnish exec), an author's name (claude-code, codex, gemini, opencode, an exec label) or all (the default). Each command is labelled with its author when it is not the user.
    #[serde(default)]
    #[schemars(with = "String", length(min = 1))]
    author: Option<String>,
    #[serde(default = "Session::current")]
    session: Session,
    /// Output lines shown per command (head, tail and error lines kept).
    #[serde(default = "number::<20>")]
    #[schemars(range(min = 1, max = 256))]
    max_lines: u32,
    #[serde(default)]
    budget: Budget,
}

impl Tool for RecentCommands {
    const NAME: &'static str = "recent_commands";
    const TITLE: &'static str = "Recent terminal commands";
    const DESCRIPTION: &'static str = "The most recent commands run in the user's recorded \
        terminal, with their command line, working directory, exit status and output as the \
        terminal showed it (secrets redacted, long outputs cut to head, tail and error lines). \
        Use it to see what the user just ran and why it failed instead of asking them to paste \
        it. Filters combine: failed, grep, here/cwd, since, host, user. Each command has a host \
        and user (where and as whom it ran: commands of shells nested in ssh, sudo or a \
        container have theirs) and, in a nested shell, nested_in (the id of the command that \
        started it). Each command has an id (listed after \
        the text) to read its whole output with command_output.";
    type Args = Args;

    fn output_schema() -> Value {
        commands_output_schema()
    }

    fn call(config: &Config, a: Args) -> ToolResult {
        commands(
            config,
            Query {
                filters: Filters {
                    failed: a.failed,
                    grep: a.grep,
                    cwd: a.cwd.map(PathBuf::from),
                    here: a.here,
                    since: a.since,
                    host: a.host,
                    user: a.user,
                    author: a.author,
                    // Which session is the server's to say (see `target`).
                    session: None,
                    ids: Vec::new(),
                },
                grep_name: "grep",
                session: a.session,
                count: a.count,
                max_lines: a.max_lines,
                budget: a.budget,
            },
        )
    }
}

/// What `recent_commands` and `search` ask of the library: one tool's arguments, the other's
/// mapped onto them.
pub(super) struct Query {
    /// The library's filters, `session` left to the server (see `target`).
    pub(super) filters: Filters,
    /// What the tool calls `grep` (`search` calls it `pattern`), for errors.
    pub(super) grep_name: &'static str,
    pub(super) session: Session,
    pub(super) count: u32,
    pub(super) max_lines: u32,
    pub(super) budget: Budget,
}

/// `recent_commands` and `search`: the arguments mapped onto the library's options, one fitted
/// document in the labels and id footer ([`Labels`]).
pub(super) fn commands(config: &Config, q: Query) -> ToolResult {
    let grep_name = q.grep_name;
    if let Some(dir) = &q.filters.cwd
        && !dir.is_absolute()
    {
        // The server's own rule: an agent names the directory it means whole.
        return Err(format!(
            "argument `cwd` must be an absolute path; got {}",
            quote(&dir.to_string_lossy())
        ));
    }
    let options = Options {
        filters: q.filters,
        recent: Some(q.count as usize),
        max_lines: Some(q.max_lines as usize),
        budget: Some(q.budget.tokens()),
        tokenizer: Some(TOKENIZER.to_string()),
        format: Some(Format::Text),
        ..Options::default()
    };
    let (sessions, which) = target(config, &q.session.0)?;
    let mut req = options
        .build(&config.facts, &config.settings)
        .map_err(|e| argument(e, grep_name))?;
    req.selection.sessions = sessions;
    let budget = q.budget.tokens();
    let labels = Labels {
        head: label(config, &which),
    };
    let fitted = context::fitted(&req, &labels).map_err(|e| argument(e, grep_name))?;
    let mut structured = json!({
        "session": which,
        "commands": [],
        "dropped": [],
        "nothing_matched": fitted.outcome.nothing_matched,
        "warnings": fitted.outcome.warnings,
        "budget": budget,
        "tokens": 0,
    });
    let text = match (&fitted.doc, &fitted.outcome.nothing_matched) {
        (Some(doc), _) => {
            structured["commands"] = index(doc);
            structured["dropped"] = json!(
                doc.report
                    .dropped
                    .iter()
                    .map(|(s, q)| format!("{s}:{q}"))
                    .collect::<Vec<_>>()
            );
            structured["tokens"] = json!(fitted.tokens().unwrap_or(fitted.text.len()));
            fitted.text
        }
        (None, note) => {
            let mut text = labels.head.clone();
            notes(&mut text, &fitted.outcome.warnings);
            let note = note.as_deref().unwrap_or("no command matched");
            text.push_str(&format!("\nNothing matched: {}.", visible::line(note)));
            let (n, fits) = tokens_within(&text, budget, counter().as_ref());
            if !fits {
                return Err(format!(
                    "argument `budget`: {budget} tokens cannot hold even the label saying that \
                     nothing matched ({n} tokens); give a larger budget"
                ));
            }
            structured["tokens"] = json!(n);
            text
        }
    };
    Ok(Output { text, structured })
}

/// What `recent_commands` and `search` put around the document: the label saying where it
/// comes from, the run's warnings, the fence, and the ids of the commands shown. The library
/// counts it with the document, so the budget holds for the whole text, whatever commands it
/// keeps.
pub(super) struct Labels {
    head: String,
}

impl Frame for Labels {
    fn wrap(&self, doc: &ContextDoc, warnings: &[String], body: &str) -> String {
        let mut text = self.head.clone();
        notes(&mut text, warnings);
        let ids: Vec<(String, u64)> = doc
            .commands
            .iter()
            .map(|c| (c.session_id.clone(), c.seq))
            .collect();
        text.push('\n');
        text.push_str(&fence(body.strip_suffix('\n').unwrap_or(body)));
        let footer = ids_footer(&ids);
        if !footer.is_empty() {
            text.push('\n');
            text.push_str(&footer);
        }
        text
    }
}

/// The run's warnings after the label, one line each.
fn notes(text: &mut String, warnings: &[String]) {
    for w in warnings {
        text.push_str(&format!("\nNote: {}", visible::line(w)));
    }
}

/// `Command ids ...` after a document, for `command_output`.
pub(super) fn ids_footer(ids: &[(String, u64)]) -> String {
    let Some((first, _)) = ids.first() else {
        return String::new();
    };
    if ids.iter().all(|(s, _)| s == first) {
        let seqs: Vec<String> = ids.iter().map(|(_, q)| q.to_string()).collect();
        format!(
            "Command ids, oldest first (session {first}): {}. command_output takes \"{first}:<seq>\" \
             for a command's whole output.",
            seqs.join(", ")
        )
    } else {
        let all: Vec<String> = ids.iter().map(|(s, q)| format!("{s}:{q}")).collect();
        format!(
            "Command ids, in the order shown: {}. command_output takes one for a command's whole \
             output.",
            all.join(", ")
        )
    }
}

/// The structured index of a fitted document: each command as the JSON format gives it,
/// without its output, with its id.
fn index(doc: &ContextDoc) -> Value {
    let commands = doc
        .commands
        .iter()
        .map(|ctx| {
            let mut c = format::command_value(ctx, Parts::CommandsOnly);
            if let Value::Object(m) = &mut c {
                m.remove("output");
                m.remove("gaps");
                m.insert(
                    "id".into(),
                    json!(format!("{}:{}", ctx.session_id, ctx.seq)),
                );
                // Summarized or not, the index says how many lines the text left out.
                let omitted = if ctx.summarized {
                    ctx.output_lines
                } else {
                    ctx.omitted_lines()
                };
                m.insert("omitted_lines".into(), json!(omitted));
            }
            c
        })
        .collect();
    Value::Array(commands)
}

/// What a context document's commands look like in structured results.
pub(super) fn commands_output_schema() -> Value {
    let command = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "<session_id>:<seq>, for command_output"},
            "session_id": {"type": "string"},
            "seq": {"type": "integer"},
            "command_line": {"type": ["string", "null"]},
            "cwd": {"type": "string"},
            "started_at": {"type": "integer", "description": "ms since the Unix epoch"},
            "ended_at": {"type": ["integer", "null"]},
            "exit_code": {"type": ["integer", "null"]},
            "exit_explanation": {"type": ["string", "null"]},
            "running": {"type": "boolean"},
            "host": {"type": "string", "description": "where it ran: a nested shell's host or container, else the session's"},
            "user": {"type": "string", "description": "as whom it ran (absent when unknown)"},
            "nested_in": {"type": "string", "description": "id of the command that started the nested shell it ran in (absent at the top level)"},
            "depth": {"type": "integer", "description": "how deeply nested its shell is (absent at the top level)"},
            "unsplit": {"type": "string", "description": "why the shell this command started (omnish nest -- ssh host) was not recorded command by command (absent when omnish did not try, or did)"},
            "output_lines": {"type": "integer", "description": "lines the whole output has"},
            "omitted_lines": {"type": "integer", "description": "lines of it not in the text result"},
            "repeat": {"type": "integer"},
            "summarized": {"type": "boolean"},
            "recording_stopped": {"type": "boolean"}
        },
        "required": ["id", "session_id", "seq", "command_line", "cwd", "started_at", "ended_at",
                     "exit_code", "running", "host", "output_lines", "omitted_lines", "repeat", "summarized"]
    });
    json!({
        "type": "object",
        "properties": {
            "session": session_out_schema(),
            "commands": {"type": "array", "items": command, "description": "oldest first, as in the text"},
            "dropped": {"type": "array", "items": {"type": "string"}, "description": "ids of matching commands the budget left out"},
            "nothing_matched": {"type": ["string", "null"]},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "budget": {"type": "integer"},
            "tokens": {"type": "integer", "description": "the text result counts at most this many o200k tokens (never more than budget)"}
        },
        "required": ["session", "commands", "dropped", "nothing_matched", "warnings", "budget", "tokens"]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsent_arguments_take_their_defaults() {
        let a: Args = serde_json::from_value(json!({})).unwrap();
        assert_eq!((a.count, a.max_lines), (10, 20));
        assert_eq!((a.failed, a.here), (false, false));
        assert_eq!((a.grep, a.cwd, a.since), (None, None, None));
        assert_eq!((a.host, a.user), (None, None));
        assert_eq!(a.session, Session::current());
        assert_eq!(a.budget, Budget::default());
    }

    #[test]
    fn id_footer_is_short_for_one_session() {
        let f = ids_footer(&[("S".into(), 3), ("S".into(), 4)]);
        assert!(
            f.starts_with("Command ids, oldest first (session S): 3, 4."),
            "{f}"
        );
        let f = ids_footer(&[("S".into(), 3), ("T".into(), 4)]);
        assert!(f.contains("S:3, T:4"), "{f}");
    }
}
