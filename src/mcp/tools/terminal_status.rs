//! `terminal_status`: where the recorded terminal is now (session, directory, project, last
//! and running command, an active retry loop, the innermost nested shell the user types in),
//! in a few lines: a cheap first call.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::args::Session;
use super::shared::{SHORT_LINE, ending, fence, label, redacted, redacted_line, short, target};
use super::{Output, Tool, ToolResult};
use crate::context::queries::nest;
use crate::context::stages::select::{self, Query};
use crate::context::words;
use crate::mcp::{Config, session};
use crate::store;
use crate::term::visible;

pub(super) struct TerminalStatus;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    #[serde(default = "Session::current")]
    session: Session,
    /// Whose commands count for the last command and the last failure: user, agents, an author's name (claude-code, an exec label) or all (the default).
    #[serde(default)]
    #[schemars(with = "String", length(min = 1))]
    author: Option<String>,
}

impl Tool for TerminalStatus {
    const NAME: &'static str = "terminal_status";
    const TITLE: &'static str = "Terminal status";
    const DESCRIPTION: &'static str = "Where the user's recorded terminal is now: which session \
        (and why that one), its working directory and project, the last command and its exit \
        status, a command still running, an active retry loop (failed attempts in a row at \
        the end of the session, as `omnish context` folds them), and the nested shell the user \
        is in (a shell started by bash, sudo -i, ssh or docker exec: which shell, as whom, \
        where, started by which command, its last and last failed command). Commands agents \
        and `omnish exec` ran for this terminal count too, each with its author (user, or the \
        agent's name): last_failure says whose the last failure was. A cheap first call.";
    type Args = Args;

    fn output_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "session": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "reason": {"type": "string"},
                        "live": {"type": "boolean"},
                        "state": {"type": "string", "description": "running (its recorder runs), exited or interrupted"},
                        "shell": {"type": "string"},
                        "hostname": {"type": "string"},
                        "started_at": {"type": "integer"},
                        "ended_with": {"type": ["object", "null"], "description": "the command that ended the shell (exit, logout): its status is the shell's, so it is never the last (failed) command", "properties": {
                            "id": {"type": "string"},
                            "command_line": {"type": "string"},
                            "exit_code": {"type": ["integer", "null"]}
                        }}
                    },
                    "required": ["id", "reason", "live", "shell", "hostname", "started_at"]
                },
                "cwd": {"type": "string", "description": "where the terminal last ran a command"},
                "project_root": {"type": "string", "description": "the git work tree holding cwd, else cwd"},
                "server_cwd": {"type": "string"},
                "last_command": {"type": ["object", "null"], "properties": {
                    "id": {"type": "string"},
                    "command_line": {"type": "string"},
                    "exit_code": {"type": ["integer", "null"]},
                    "exit_explanation": {"type": ["string", "null"]},
                    "ended_at": {"type": "integer"},
                    "author": {"type": "string", "description": "who ran it: user, an agent's name, an omnish exec label"}
                }},
                "last_failure": {"type": ["object", "null"], "description": "the newest command that failed, and whose it was", "properties": {
                    "id": {"type": "string"},
                    "command_line": {"type": "string"},
                    "exit_code": {"type": ["integer", "null"]},
                    "exit_explanation": {"type": ["string", "null"]},
                    "ended_at": {"type": "integer"},
                    "author": {"type": "string"}
                }},
                "running_command": {"type": ["object", "null"], "properties": {
                    "id": {"type": "string"},
                    "command_line": {"type": "string"},
                    "started_at": {"type": "integer"}
                }},
                "nested_shell": {"type": ["object", "null"], "description": "the innermost nested shell alive (started from a recorded command: bash, sudo -i, ssh, docker exec), where the user types now", "properties": {
                    "depth": {"type": "integer"},
                    "shell": {"type": "string"},
                    "host": {"type": "string"},
                    "user": {"type": "string"},
                    "started_at": {"type": "integer"},
                    "elsewhere": {"type": "boolean", "description": "its host or user differs from the session's"},
                    "outer": {"type": "array", "description": "the shells around it, outermost first", "items": {"type": "object"}},
                    "started_by": {"type": "object", "properties": {
                        "id": {"type": "string"},
                        "command_line": {"type": "string"}
                    }},
                    "last_command": {"type": ["object", "null"]},
                    "last_failed": {"type": ["object", "null"]},
                    "description": {"type": "string"}
                }},
                "retry_loop": {"type": ["object", "null"], "properties": {
                    "command_line": {"type": "string"},
                    "attempts": {"type": "integer"},
                    "at_least": {"type": "boolean"},
                    "same_error": {"type": "boolean"},
                    "exit_code": {"type": ["integer", "null"]},
                    "since": {"type": "integer"},
                    "description": {"type": "string"}
                }}
            },
            "required": ["session", "cwd", "project_root", "server_cwd", "last_command",
                         "running_command", "retry_loop"]
        })
    }

    fn call(config: &Config, args: Args) -> ToolResult {
        terminal_status(config, args)
    }
}

fn terminal_status(config: &Config, args: Args) -> ToolResult {
    let (choice, which) = target(config, &args.session.0)?;
    let mut warnings = Vec::new();
    let sessions = select::sessions(
        config.data_root(),
        &choice,
        config.env_session(),
        &mut warnings,
    )
    .map_err(|e| e.to_string())?;
    // The session is the last; those attached to it (`omnish exec`, agents) come before.
    let s = sessions
        .last()
        .ok_or_else(|| "no readable session".to_string())?;
    let author = crate::context::request::author(args.author.as_deref().unwrap_or("all"))
        .map_err(|e| super::shared::argument(e, "grep"))?;
    // The newest commands, enough to see a retry loop, of the session and those attached to
    // it, by time.
    let query = Query {
        filters: author
            .map(|a| Box::new(a) as Box<dyn select::Filter>)
            .into_iter()
            .collect(),
        line_test: None,
        output_filter: None,
        limit: 50,
    };
    let mut recent = Vec::new();
    for one in &sessions {
        recent.extend(query.select(one).map_err(|e| e.to_string())?.commands);
    }
    recent.sort_by_key(|c| (c.record.started_at, c.record.seq));
    let running = recent.iter().rev().find(|c| c.running);
    // The command that ended the shell (`exit`) is not the last command: its status is the
    // shell's (after a failure, that failure's). The session line says how it ended.
    let ended_with = recent.iter().rev().find(|c| c.ended_shell);
    let finished: Vec<&select::Candidate> = recent
        .iter()
        .filter(|c| !c.running && !c.cut_off && !c.ended_shell)
        .collect();
    let last = finished.last();
    let shown_line = |c: &select::Candidate| {
        let (head, omitted, tail) = c.command_line_parts();
        if c.record.private {
            words::PRIVATE_COMMAND.to_string()
        } else if omitted > 0 {
            // Cut by select: the chars left out in the middle still count.
            let one = |s: &str| redacted(config, s).replace('\n', " ⏎ ");
            crate::context::stages::truncate::shorten(&one(head), omitted, &one(tail), SHORT_LINE)
        } else {
            short(&redacted_line(config, &c.record.command_line, SHORT_LINE))
        }
    };
    // The same loop `omnish context` folds and `omnish status` reports, with the user's
    // threshold: failed attempts in a row at the end of the session.
    let settings = config.settings.loops(&config.facts);
    let retry = crate::context::stages::loops::active(&s.dir, &settings)
        .map_err(|e| e.to_string())?
        .map(|l| {
            json!({
                "command_line": short(&l.command_line),
                "attempts": l.failures,
                "at_least": l.at_least,
                "same_error": l.same_error,
                "exit_code": l.last_exit,
                "since": l.since,
                "description": l.describe(),
            })
        });
    let open = store::open_session(&s.dir)
        .ok()
        .flatten()
        .ok_or_else(|| format!("session {} cannot be read", s.id()))?;
    let cwd = session::last_cwd(&open);
    let project = if cwd.is_empty() {
        String::new()
    } else {
        select::git_root_or(std::path::Path::new(&cwd))
            .display()
            .to_string()
    };
    let command_json = |l: &select::Candidate| {
        json!({
            "id": format!("{}:{}", l.record.session_id, l.record.seq),
            "command_line": shown_line(l),
            "exit_code": l.record.exit_code,
            "exit_explanation": ending(l).exit_code.and_then(|code| words::explanation(code, false)),
            "ended_at": l.record.ended_at,
            "author": l.record.author(),
        })
    };
    let last_json = last.map(|l| command_json(l));
    let failure = finished
        .iter()
        .rev()
        .find(|c| c.record.exit_code.is_some_and(|code| code != 0));
    let failure_json = failure.map(|l| command_json(l));
    // Where the user types now, when that is a nested shell. One that cannot be read is no
    // reason to fail the call.
    let nested = nest::innermost(s).ok().flatten();
    let nested_json = nested.as_ref().map(|n| n.json(&command_json));
    let running_json = running.map(|r| {
        json!({
            "id": format!("{}:{}", r.record.session_id, r.record.seq),
            "command_line": shown_line(r),
            "started_at": r.record.started_at,
        })
    });
    let ended_json = ended_with.map(|e| {
        json!({
            "id": format!("{}:{}", s.id(), e.record.seq),
            "command_line": shown_line(e),
            "exit_code": e.record.exit_code,
        })
    });
    let structured = json!({
        "session": {
            "id": s.id(),
            "reason": which["reason"],
            "live": s.live(),
            "state": words::session_state(s.meta.state, s.live()),
            "shell": s.meta.shell,
            "hostname": s.meta.hostname,
            "started_at": s.meta.started_at,
            "ended_with": ended_json,
        },
        "cwd": redacted(config, &cwd),
        "project_root": redacted(config, &project),
        "server_cwd": config.cwd().display().to_string(),
        "last_command": last_json,
        "last_failure": failure_json,
        "running_command": running_json,
        "nested_shell": nested_json,
        "retry_loop": retry,
    });
    let state = words::session_state(s.meta.state, s.live());
    let state = match (s.live(), ended_with) {
        (false, Some(e)) => format!(
            "{state}: ended by `{}`, the shell's exit status {}",
            visible::line(&shown_line(e)),
            e.record
                .exit_code
                .map_or_else(|| "unknown".to_string(), |c| c.to_string())
        ),
        _ => state.to_string(),
    };
    let mut lines = vec![
        format!("session: {} ({state})", s.id()),
        format!(
            "cwd: {}",
            visible::line(structured["cwd"].as_str().unwrap_or(""))
        ),
        format!(
            "project: {}",
            visible::line(structured["project_root"].as_str().unwrap_or(""))
        ),
    ];
    let by = |c: &select::Candidate| match c.record.author() {
        store::USER => String::new(),
        a => format!("[{}] ", visible::line(a)),
    };
    match last {
        Some(l) => lines.push(format!(
            "last command: {}:{} {}$ {}  [{}]",
            l.record.session_id,
            l.record.seq,
            by(l),
            visible::line(&shown_line(l)),
            words::status(ending(l))
        )),
        None => lines.push("last command: none recorded yet".into()),
    }
    if let Some(f) = failure {
        lines.push(format!(
            "last failure: {}:{} by {} $ {}  [{}]",
            f.record.session_id,
            f.record.seq,
            visible::line(f.record.author()),
            visible::line(&shown_line(f)),
            words::status(ending(f))
        ));
    }
    if let Some(r) = running {
        lines.push(format!(
            "{}: {}:{} $ {}",
            words::STILL_RUNNING,
            s.id(),
            r.record.seq,
            visible::line(&shown_line(r))
        ));
    }
    if let Some(n) = &nested {
        lines.push(format!("nested shell: {}", n.describe()));
        let one = |c: &Option<select::Candidate>| match c {
            Some(c) => format!(
                "{}:{} $ {}  [{}]",
                s.id(),
                c.record.seq,
                visible::line(&shown_line(c)),
                words::status(ending(c))
            ),
            None => "none yet".to_string(),
        };
        lines.push(format!("last command in it: {}", one(&n.last)));
        lines.push(format!("last failed in it: {}", one(&n.last_failed)));
    }
    match &retry {
        Some(r) => lines.push(format!(
            "retry loop: {}",
            visible::line(r["description"].as_str().unwrap_or(""))
        )),
        None => lines.push("retry loop: none".into()),
    }
    for w in &warnings {
        lines.push(format!("note: {}", visible::line(w)));
    }
    let text = format!("{}\n{}", label(config, &which), fence(&lines.join("\n")));
    Ok(Output { text, structured })
}
