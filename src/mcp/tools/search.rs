//! `search`: commands whose command line or output matches a pattern, across all recorded
//! sessions by default; `recent_commands` with a required pattern.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::{Budget, Session, number};
use super::recent_commands::{Query, commands, commands_output_schema};
use super::{Tool, ToolResult};
use crate::context::request::Filters;
use crate::mcp::Config;
use std::path::PathBuf;

pub(super) struct Search;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    /// Regular expression (Rust regex syntax) matched against command lines and rendered output lines.
    #[schemars(length(min = 1))]
    pattern: String,
    /// How many of the most recent matches.
    #[serde(default = "number::<10>")]
    #[schemars(range(min = 1, max = 200))]
    count: u32,
    /// Only commands with a non-zero exit status.
    #[serde(default)]
    failed: bool,
    /// Only commands run inside the project the server runs in.
    #[serde(default)]
    here: bool,
    /// Only commands run in this directory or below it.
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
    #[serde(default = "Session::all")]
    session: Session,
    /// Output lines shown per command.
    #[serde(default = "number::<20>")]
    #[schemars(range(min = 1, max = 256))]
    max_lines: u32,
    #[serde(default)]
    budget: Budget,
}

impl Tool for Search {
    const NAME: &'static str = "search";
    const TITLE: &'static str = "Search terminal history";
    const DESCRIPTION: &'static str = "Finds commands whose command line or output matches a \
        regular expression, across all recorded terminal sessions by default, newest last, with \
        their output (redacted, cut to head, tail and error lines). Use it to find when \
        something was run or where an error appeared.";
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
                    grep: Some(a.pattern),
                    cwd: a.cwd.map(PathBuf::from),
                    here: a.here,
                    since: a.since,
                    host: a.host,
                    user: a.user,
                    author: a.author,
                    session: None,
                    ids: Vec::new(),
                },
                grep_name: "pattern",
                session: a.session,
                count: a.count,
                max_lines: a.max_lines,
                budget: a.budget,
            },
        )
    }
}
