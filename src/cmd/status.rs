//! `omnish status`: the session this shell records (if any), the innermost nested shell the
//! user types in when there is one (`bash` typed in the recorded shell, `sudo -i`, `ssh host`),
//! the project, the session store, and the settings in use. Paths, the shell and the loop's command line show control
//! characters visibly ([`visible`]); JSON escapes them.
//!
//! Sessions of `omnish exec` and of agents' hooks are not shells: those attached to the current
//! session are shown as part of it (`others` line: commands per author), and the store's count
//! says how many of its sessions are theirs.

use crate::cli::{PlainFormat, StatusArgs};
use crate::cmd::{RunWith, Setup};
use crate::context::queries::nest::{self, Nested};
use crate::context::queries::sessions::{human_size, local_time};
use crate::context::stages::redact;
use crate::context::stages::select::{Candidate, Session};
use crate::context::words;
use crate::store;
use crate::term::visible;
use anyhow::Result;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

impl RunWith for StatusArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        let status = Status::gather(setup)?;
        let mut out = std::io::stdout().lock();
        match self.format {
            PlainFormat::Json => {
                visible::json_writer(&mut out, &status.json(), true)?;
                writeln!(out)?;
            }
            PlainFormat::Text => status.write_text(&mut out)?,
        }
        Ok(0)
    }
}

/// Everything `status` reports.
struct Status {
    /// `OMNISH_SESSION_ID` of the shell this runs in.
    session_id: Option<String>,
    session: Option<store::SessionSummary>,
    cwd: Option<PathBuf>,
    project_root: Option<PathBuf>,
    data_dir: PathBuf,
    data_bytes: u64,
    sessions: usize,
    /// Of `sessions`, those of `omnish exec` or an agent's hook (with an author).
    authored_sessions: usize,
    /// The commands of the sessions attached to the current one, per author (name, commands,
    /// failed), by name.
    attached: Vec<(String, u64, u64)>,
    /// The effective `ask` command (`None`: none configured nor found on PATH), its model
    /// profile, and the config file in use (`None`: no file, defaults and environment only).
    ask_command: Option<String>,
    /// Failed attempts in a row at the end of the session (as `context` folds them).
    retry_loop: Option<crate::context::stages::loops::ActiveLoop>,
    /// The innermost live nested shell, and its last commands.
    nested: Option<Nested>,
    ask_model: Option<String>,
    config_file: Option<PathBuf>,
}

impl Status {
    fn gather(setup: &Setup) -> Result<Status> {
        let cfg = &setup.config;
        let facts = &setup.facts;
        let data_dir = facts.data_root.clone();
        let session_id = facts.current_session.clone();
        let session = session_id.as_ref().and_then(|id| {
            let dir = store::session_dir(&data_dir, id)?;
            store::open_session(&dir)
                .ok()
                .flatten()
                .map(store::summarize)
        });
        let dirs = store::list_sessions(&data_dir).unwrap_or_default();
        let sessions = dirs.len();
        let authored_sessions = dirs
            .iter()
            .filter(|d| store::read_meta(d).is_ok_and(|m| m.author.is_some()))
            .count();
        let attached = session
            .as_ref()
            .map(|s| attached_by_author(&s.session.dir))
            .unwrap_or_default();
        // The loop `omnish context` and the MCP server's terminal_status fold, with the same
        // settings. A loop that cannot be read is no reason to fail the status.
        let settings = setup.settings.loops(facts);
        let retry_loop = session
            .as_ref()
            .and_then(|s| crate::context::stages::loops::active(&s.session.dir, &settings).ok())
            .flatten();
        // Like the loop, a nested shell that cannot be read is no reason to fail the status.
        let nested = session
            .as_ref()
            .and_then(|s| {
                let opened = Session::open(&s.session.dir, facts.current_session.as_deref());
                opened.ok().flatten()
            })
            .and_then(|s| nest::innermost(&s).ok().flatten());
        Ok(Status {
            data_bytes: store::disk_usage(&store::sessions_dir(&data_dir)),
            session_id,
            session,
            cwd: facts.cwd.clone(),
            project_root: facts.git_root.clone(),
            data_dir,
            sessions,
            authored_sessions,
            attached,
            retry_loop,
            nested,
            ask_command: crate::cmd::llm::llm_command(None, cfg, setup.path.as_deref())?
                .map(|(_, shown)| shown),
            ask_model: Some(cfg.str("ask.model").to_string()).filter(|m| !m.is_empty()),
            config_file: cfg.path.clone().filter(|_| cfg.file_exists),
        })
    }

    fn json(&self) -> serde_json::Value {
        let session = self.session.as_ref().map(|s| {
            let m = &s.session.meta;
            json!({
                "session_id": s.id(),
                "shell": m.shell,
                "started_at": m.started_at,
                "commands": s.commands,
                "failed": s.failed,
                "bytes": s.bytes,
                "recorder_alive": s.recorder_alive,
                "hooks_active": m.hooked,
                "state": words::session_state(s.state, s.recorder_alive),
                "recording_error": m.recording_error,
                "hostname": m.hostname,
                "user": m.user,
                "unsplit": unsplit(m).map(|(line, why)| json!({"command_line": line, "why": why})),
                "paused": paused(s).map(|p| json!({"since": p.since, "until": p.until})),
                // Whose session: a terminal's is the user's; one of `omnish exec` or an
                // agent's hook has an author and the terminal session it joined.
                "author": m.author.as_deref().unwrap_or(store::USER),
                "attached_to": m.attached_to,
                // The commands run beside it by `omnish exec` and agents' hooks, per author.
                "attached": self.attached.iter().map(|(a, n, f)| json!({
                    "author": a, "commands": n, "failed": f
                })).collect::<Vec<_>>(),
            })
        });
        let nested = self.nested.as_ref().map(|n| n.json(&command_json));
        json!({
            "version": 1,
            "recorded": self.session_id.is_some(),
            "session_id": self.session_id,
            "session": session,
            "nested_shell": nested,
            "cwd": self.cwd,
            "project_root": self.project_root,
            "data_dir": self.data_dir,
            "data_bytes": self.data_bytes,
            "sessions": self.sessions,
            "authored_sessions": self.authored_sessions,
            "retry_loop": self.retry_loop.as_ref().map(|l| json!({
                "command_line": l.command_line,
                "failures": l.failures,
                "at_least": l.at_least,
                "same_error": l.same_error,
                "since": l.since,
                "last_exit": l.last_exit,
                "description": l.describe(),
            })),
            "ask_command": self.ask_command,
            "ask_model": self.ask_model,
            "config_file": self.config_file,
        })
    }

    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        match (&self.session_id, &self.session) {
            (None, _) => writeln!(
                out,
                "session   none: this shell is not recorded (start one with `omnish wrap`)"
            )?,
            (Some(id), None) => writeln!(
                out,
                "session   {}: not found in {}",
                visible::line(id),
                visible::line(&store::sessions_dir(&self.data_dir).display().to_string())
            )?,
            (Some(_), Some(s)) => {
                let m = &s.session.meta;
                writeln!(
                    out,
                    "session   {} ({})",
                    s.id(),
                    words::session_state(s.state, s.recorder_alive)
                )?;
                match &m.author {
                    // Not a shell: `omnish exec`'s or an agent's, maybe with a terminal's.
                    Some(a) => writeln!(
                        out,
                        "author    {}{}",
                        visible::line(a),
                        m.attached_to
                            .as_deref()
                            .map_or_else(String::new, |t| format!(
                                " (with terminal session {})",
                                visible::line(t)
                            ))
                    )?,
                    None => writeln!(out, "shell     {}", visible::line(&m.shell))?,
                }
                writeln!(out, "started   {}", local_time(m.started_at))?;
                writeln!(out, "commands  {} ({} failed)", s.commands, s.failed)?;
                if !self.attached.is_empty() {
                    let by: Vec<String> = self
                        .attached
                        .iter()
                        .map(|(a, n, f)| {
                            format!(
                                "{}: {n} command{}{}",
                                visible::line(a),
                                if *n == 1 { "" } else { "s" },
                                if *f > 0 {
                                    format!(" ({f} failed)")
                                } else {
                                    String::new()
                                }
                            )
                        })
                        .collect();
                    writeln!(out, "others    {}", by.join(", "))?;
                }
                if let Some(p) = paused(s) {
                    let until = p.until.map_or_else(
                        || "until `omnish resume`".to_string(),
                        |t| format!("until {}", local_time(t)),
                    );
                    writeln!(
                        out,
                        "paused    since {}, {until}: commands are kept as private ones",
                        local_time(p.since)
                    )?;
                }
                if let Some(n) = &self.nested {
                    writeln!(out, "nested    {}", n.describe())?;
                    let line = |c: &Option<Candidate>| {
                        c.as_ref()
                            .map_or_else(|| "none yet".to_string(), command_text)
                    };
                    writeln!(out, "  last    {}", line(&n.last))?;
                    writeln!(out, "  failed  {}", line(&n.last_failed))?;
                }
                if let Some(l) = &self.retry_loop {
                    writeln!(out, "loop      {}", visible::line(&l.describe()))?;
                }
                if let Some((line, why)) = unsplit(m) {
                    writeln!(
                        out,
                        "one run   {}: {}",
                        visible::line(&line),
                        visible::line(why)
                    )?;
                }
                writeln!(out, "size      {}", human_size(s.bytes))?;
                writeln!(
                    out,
                    "recorder  {} (pid {})",
                    words::recorder(s.recorder_alive),
                    m.recorder_pid
                )?;
                writeln!(out, "hooks     {}", words::hooks(m.hooked))?;
                if let Some(why) = &m.recording_error {
                    writeln!(
                        out,
                        "note      {}; later commands are missing",
                        visible::line(&words::recording_stopped(why))
                    )?;
                }
            }
        }
        let path = |p: &std::path::Path| visible::line(&p.display().to_string()).into_owned();
        let shown = |p: &Option<PathBuf>| p.as_deref().map_or_else(|| "-".to_string(), path);
        writeln!(out, "cwd       {}", shown(&self.cwd))?;
        writeln!(
            out,
            "project   {}",
            self.project_root
                .as_deref()
                .map_or_else(|| "none (not in a git work tree)".to_string(), path)
        )?;
        let theirs = match self.authored_sessions {
            0 => String::new(),
            n => format!(", {n} of them by exec or agents"),
        };
        writeln!(
            out,
            "data dir  {} ({} sessions{theirs}, {})",
            path(&self.data_dir),
            self.sessions,
            human_size(self.data_bytes)
        )?;
        if let Some(c) = &self.ask_command {
            writeln!(out, "ask       {}", visible::line(c))?;
        }
        if let Some(m) = &self.ask_model {
            writeln!(out, "model     {}", visible::line(m))?;
        }
        if let Some(f) = &self.config_file {
            writeln!(out, "config    {}", path(f))?;
        }
        Ok(())
    }
}

/// The commands of the sessions attached to the session in `dir`, per author, by name.
fn attached_by_author(dir: &std::path::Path) -> Vec<(String, u64, u64)> {
    let mut by: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for d in store::attached::attached_dirs(dir) {
        let Ok(Some(open)) = store::open_session(&d) else {
            continue;
        };
        let author = open.meta.author.clone().unwrap_or_else(|| "exec".into());
        let s = store::summarize(open);
        let e = by.entry(author).or_default();
        e.0 += s.commands;
        e.1 += s.failed;
    }
    by.into_iter().map(|(a, (n, f))| (a, n, f)).collect()
}

/// The session's pause, while it holds and the recorder runs.
fn paused(s: &store::SessionSummary) -> Option<store::Paused> {
    s.session
        .meta
        .paused
        .filter(|p| s.recorder_alive && p.holds_at(store::now_ms()))
}

/// The running command that omnish tried to follow into the shell it started and could not
/// (`omnish nest -- ssh host` to a host without bash or zsh): its line (redacted, on one line)
/// and why it is recorded as one command.
fn unsplit(m: &store::SessionMeta) -> Option<(String, &str)> {
    let r = m.running_command.as_ref()?;
    let why = r.unsplit.as_deref()?;
    let line = if r.private {
        words::PRIVATE_COMMAND.to_string()
    } else {
        redact::redact(&r.command_line).replace('\n', " ⏎ ")
    };
    Some((line, why))
}

/// A command of a nested shell on one line: `SESSION:8 $ ls /nope [exit 2]`, its line redacted
/// and shortened, shown visibly.
fn command_text(c: &Candidate) -> String {
    format!(
        "{}:{} $ {} [{}]",
        c.record.session_id,
        c.record.seq,
        visible::line(&command_line(c)),
        words::status(ending(c))
    )
}

/// The line of a command as `status` shows it: redacted, on one line, at most 200 chars.
fn command_line(c: &Candidate) -> String {
    if c.record.private {
        return words::PRIVATE_COMMAND.to_string();
    }
    let (head, omitted, tail) = c.command_line_parts();
    let one = |s: &str| redact::redact(s).replace('\n', " ⏎ ");
    crate::context::stages::truncate::shorten(&one(head), omitted, &one(tail), 200)
}

fn ending(c: &Candidate) -> words::Ending {
    let ended = !c.running && !c.cut_off;
    words::Ending {
        running: c.running,
        recording_stopped: c.record.recording_stopped,
        exit_code: ended.then_some(c.record.exit_code).flatten(),
        ended_shell: c.ended_shell,
    }
}

/// A command of a nested shell in JSON: its id, line (as [`command_line`]), status.
fn command_json(c: &Candidate) -> serde_json::Value {
    let e = ending(c);
    json!({
        "id": format!("{}:{}", c.record.session_id, c.record.seq),
        "command_line": command_line(c),
        "cwd": c.record.cwd,
        "exit_code": e.exit_code,
        "exit_explanation": e.exit_code.and_then(|code| words::explanation(code, c.ended_shell)),
        "ended_at": c.record.ended_at,
    })
}
