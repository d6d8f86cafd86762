//! The innermost live nested shell of a session (a `bash` typed in the recorded shell, `sudo -i`,
//! `ssh host`), for `omnish status` and the MCP server's `terminal_status`: which shell, as whom,
//! where, how deep, started by which command, and its own last command and last failed command.
//!
//! The shells come from `meta.json`'s `nest` (outermost first; the last is where the user
//! types), read only while the recorder runs: a dead recorder's list is no live shell. The last
//! commands are the records of that shell: its depth, `nested_in` its starting command. Records
//! are read newest first and reading stops past the shell's start ([`crate::context::stages::select::Query`]).

use crate::context::stages::redact;
use crate::context::stages::select::{Candidate, Failed, Filter, InShell, Query, Session};
use crate::context::stages::truncate;
use crate::store::{self, NestedShell};

/// Chars of the starting command's line shown in [`Nested::describe`].
const LINE_WIDTH: usize = 200;

/// The innermost live nested shell of a session and its last commands.
#[derive(Debug, Clone)]
pub(crate) struct Nested {
    pub shell: NestedShell,
    /// The id (`<session>:<seq>`) of the command that started it.
    pub parent_id: String,
    /// The shells around it, outermost first.
    pub outer: Vec<NestedShell>,
    /// Its newest finished command.
    pub last: Option<Candidate>,
    /// Its newest failed command.
    pub last_failed: Option<Candidate>,
    /// Its host or user differs from the session's.
    pub elsewhere: bool,
}

/// Only commands that ended.
struct Finished;
impl Filter for Finished {
    fn keep(&self, c: &Candidate) -> bool {
        !c.running && !c.cut_off
    }
}

/// The innermost live nested shell of `session`, if one is alive now.
pub(crate) fn innermost(session: &Session) -> anyhow::Result<Option<Nested>> {
    let Some(shell) = session.meta.nest.last().filter(|_| session.live()) else {
        return Ok(None);
    };
    let parent_id = format!("{}:{}", session.id(), shell.parent.seq);
    let newest = |failed: bool| -> anyhow::Result<Option<Candidate>> {
        let mut filters: Vec<Box<dyn Filter>> = vec![
            Box::new(InShell {
                depth: shell.depth,
                nested_in: parent_id.clone(),
            }),
            Box::new(Finished),
        ];
        if failed {
            filters.push(Box::new(Failed));
        }
        let query = Query {
            filters,
            line_test: None,
            output_filter: None,
            limit: 1,
        };
        Ok(query.select(session)?.commands.pop())
    };
    let m = &session.meta;
    let elsewhere = shell.host != m.hostname || m.user.as_deref() != Some(shell.user.as_str());
    let last = newest(false)?;
    // When the newest command failed, it is the newest failed one too: no second scan.
    let last_failed = match &last {
        Some(c) if Failed.keep(c) => last.clone(),
        _ => newest(true)?,
    };
    Ok(Some(Nested {
        shell: shell.clone(),
        parent_id: parent_id.clone(),
        outer: m.nest[..m.nest.len() - 1].to_vec(),
        last,
        last_failed,
        elsewhere,
    }))
}

impl Nested {
    /// The shell in JSON, as `omnish status` and MCP's `terminal_status` give it; `command`
    /// writes one of its commands the front end's way.
    pub(crate) fn json(
        &self,
        command: &dyn Fn(&Candidate) -> serde_json::Value,
    ) -> serde_json::Value {
        let sh = &self.shell;
        let place = |s: &NestedShell| {
            serde_json::json!({
                "depth": s.depth,
                "shell": s.shell,
                "host": s.host,
                "user": s.user,
            })
        };
        let mut v = place(sh);
        v["started_at"] = sh.started_at.into();
        v["elsewhere"] = self.elsewhere.into();
        v["started_by"] = serde_json::json!({
            "id": self.parent_id,
            "command_line": parent_line(&sh.parent),
        });
        v["outer"] = self.outer.iter().map(place).collect();
        v["last_command"] = self.last.as_ref().map(command).into();
        v["last_failed"] = self.last_failed.as_ref().map(command).into();
        v["description"] = self.describe().into();
        v
    }

    /// `zsh as root@web1, depth 1, started by `sudo -i` (SESSION:5)`: the starting command's
    /// line redacted, on one line, at most [`LINE_WIDTH`] chars; names shown visibly.
    pub(crate) fn describe(&self) -> String {
        let s = &self.shell;
        format!(
            "{} as {}, depth {}, started by `{}` ({})",
            crate::term::visible::line(&s.shell),
            crate::context::words::place(Some(&s.user), &s.host),
            s.depth,
            crate::term::visible::line(&parent_line(&s.parent)),
            self.parent_id
        )
    }
}

/// The line of the command that started a nested shell: redacted, on one line, shortened.
pub(crate) fn parent_line(run: &store::RunningCommand) -> String {
    if run.private {
        return crate::context::words::PRIVATE_COMMAND.to_string();
    }
    let line = redact::redact(&run.command_line).replace('\n', " ⏎ ");
    let n = line.chars().count();
    if n <= LINE_WIDTH {
        return line;
    }
    let head: String = line.chars().take(LINE_WIDTH / 2).collect();
    let tail: String = line.chars().skip(n - LINE_WIDTH / 2).collect();
    truncate::shorten(&head, (n - LINE_WIDTH) as u64, &tail, LINE_WIDTH)
}
