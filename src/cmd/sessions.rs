//! `omnish sessions list|show|rm|prune`: the session store from the command line, and the
//! automatic prune a recorded shell starts in the background ([`prune_in_background`]).
//!
//! Recorded fields (directories, command lines, hosts, summaries) show control characters
//! visibly ([`visible`]); JSON escapes them.

use crate::cli::{PlainFormat, SessionsArgs, SessionsCommand};
use crate::cmd::{RunWith, Setup};
use crate::context::queries::sessions::{self, human_duration, human_size, local_time};
use crate::context::request;
use crate::context::stages::select::{self, SessionChoice};
use crate::context::words;
use crate::error::{Error, Field};
use crate::store::{self, SessionSummary, prune};
use crate::term::visible;
use anyhow::Result;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

impl RunWith for SessionsArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        let root = setup.facts.data_root.clone();
        let current = setup.facts.current_session.clone();
        let mut out = std::io::stdout().lock();
        match self.command {
            SessionsCommand::List { format } => list(&root, format, &mut out),
            SessionsCommand::Show { id, format, author } => {
                show(&root, id, current.as_deref(), format, &author, &mut out)
            }
            SessionsCommand::Rm { ids } => rm(&root, &ids, &mut out),
            SessionsCommand::Prune {
                keep,
                older_than,
                max_size,
                dry_run,
            } => {
                let mut policy = prune::Policy {
                    keep,
                    older_than: None,
                    max_size: None,
                };
                if let Some(d) = older_than {
                    let ms = request::duration(Field::Duration, &d)
                        .map_err(|e| e.named(|_| Some("--older-than".into())))?;
                    policy.older_than = Some(store::now_ms().saturating_sub(ms));
                }
                if let Some(s) = max_size {
                    policy.max_size = Some(
                        prune::parse_size(&s)
                            .map_err(|e| Error::usage(format!("--max-size: {e}")))?,
                    );
                }
                if policy == prune::Policy::default() {
                    // The configured limits (`sessions.keep`, `sessions.max_size`).
                    policy = setup.config.prune_settings()?.policy();
                }
                prune_now(&root, &policy, current.as_deref(), dry_run, &mut out)
            }
        }
    }
}

/// Starts the automatic prune of a recorded shell's start on its own thread: the shell never
/// waits for it, and the session `starting` is never touched. What goes wrong is one line at
/// the shell's next prompt (through `notify`, never onto the terminal from this thread; not
/// when the recorder could not create its own directory either: its warning covers the store);
/// removals cut short are finished by the next prune.
pub fn prune_in_background(
    root: PathBuf,
    settings: prune::PruneSettings,
    starting: String,
    notify: crate::record::writer::Notifier,
) {
    // Its stderr is the terminal the user types in: a damaged file it passes over is not said
    // there.
    store::notice::quiet();
    let _ = std::thread::Builder::new()
        .name("omnish-prune".into())
        .spawn(move || {
            let sessions = store::sessions_dir(&root);
            match prune::auto_prune(&root, settings, &starting) {
                Ok(removals) => {
                    let failed: Vec<&String> = removals
                        .iter()
                        .filter_map(|r| match &r.result {
                            Err(prune::Kept::Failed(why)) => Some(why),
                            _ => None,
                        })
                        .collect();
                    if let Some(why) = failed.first() {
                        notify.notice(format!(
                            "omnish: the automatic prune could not remove {} old session{} from {}: {why}; `omnish sessions prune` says more",
                            failed.len(),
                            if failed.len() == 1 { "" } else { "s" },
                            sessions.display()
                        ));
                    }
                }
                Err(e) => notify.notice(format!(
                    "omnish: the automatic prune of {} failed: {e} ({})",
                    sessions.display(),
                    store::access::write_advice(&e)
                )),
            }
        });
}

/// A removal that could not start (the store's lock cannot be taken or created: a read-only
/// file system, a directory of someone else's): one line naming the place and what to do.
fn removal_error(root: &Path, e: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot remove sessions from {}: {e}; {}",
        store::sessions_dir(root).display(),
        store::access::write_advice(&e)
    )
}

fn shell_name(shell: &str) -> &str {
    Path::new(shell)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(shell)
}

fn summary_json(s: &SessionSummary) -> serde_json::Value {
    let m = &s.session.meta;
    json!({
        "session_id": s.id(),
        "started_at": (m.started_at > 0).then_some(m.started_at),
        "ended_at": m.ended_at,
        "last_activity": s.last_activity,
        "shell": m.shell,
        "hostname": m.hostname,
        "user": m.user,
        // Whose commands: a session of `omnish exec` or an agent's hook has an author and,
        // when it joined a recorded terminal, that terminal's session.
        "author": m.author.as_deref().unwrap_or(store::USER),
        "attached_to": m.attached_to,
        "cwd": m.cwd,
        "commands": s.commands,
        "failed": s.failed,
        "bytes": s.bytes,
        "state": words::session_state(s.state, s.recorder_alive),
        "recorder_alive": s.recorder_alive,
        "hooked": m.hooked,
        "exit_status": m.exit_status,
        "running_command": s.running_command,
        "meta_problem": s.session.meta_problem,
    })
}

fn list(root: &Path, format: PlainFormat, out: &mut dyn Write) -> Result<i32> {
    let mut all = store::summarize_all(root).map_err(|e| {
        anyhow::anyhow!(
            "cannot list sessions in {}: {e}",
            store::sessions_dir(root).display()
        )
    })?;
    all.reverse();
    if format == PlainFormat::Json {
        let sessions: Vec<_> = all.iter().map(summary_json).collect();
        visible::json_writer(
            &mut *out,
            &json!({"version": 1, "sessions": sessions}),
            true,
        )?;
        writeln!(out)?;
        return Ok(0);
    }
    if all.is_empty() {
        eprintln!(
            "omnish: no recorded sessions in {}; start one with `omnish wrap`",
            store::sessions_dir(root).display()
        );
        return Ok(0);
    }
    let rows: Vec<[String; 10]> = all
        .iter()
        .map(|s| {
            let m = &s.session.meta;
            [
                s.id(),
                local_time(m.started_at),
                local_time(s.last_activity),
                // Not a shell: `omnish exec` or an agent's hook, by its author.
                match &m.author {
                    Some(a) => format!("[{}]", visible::line(a)),
                    None => visible::line(shell_name(&m.shell)).into_owned(),
                },
                visible::line(&m.hostname).into_owned(),
                s.commands.to_string(),
                s.failed.to_string(),
                human_size(s.bytes),
                words::session_state(s.state, s.recorder_alive).to_string(),
                visible::line(&m.cwd).into_owned(),
            ]
        })
        .collect();
    let header = [
        "ID",
        "STARTED",
        "LAST ACTIVE",
        "SHELL",
        "HOST",
        "CMDS",
        "FAILED",
        "SIZE",
        "STATE",
        "CWD",
    ];
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len() - 1;
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i == last {
                s.push_str(c);
            } else if (5..=7).contains(&i) {
                s.push_str(&format!("{c:>w$}  ", w = widths[i]));
            } else {
                s.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        s
    };
    writeln!(out, "{}", line(header.to_vec()))?;
    for r in &rows {
        writeln!(out, "{}", line(r.iter().map(String::as_str).collect()))?;
    }
    let total: u64 = all.iter().map(|s| s.bytes).sum();
    writeln!(out, "{} sessions, {} on disk", all.len(), human_size(total))?;
    Ok(0)
}

fn show(
    root: &Path,
    id: Option<String>,
    current: Option<&str>,
    format: PlainFormat,
    author: &str,
    out: &mut dyn Write,
) -> Result<i32> {
    let author = request::author(author).map_err(|e| e.named(|_| Some("--author".into())))?;
    let choice = match id {
        Some(id) => request::session(&id).map_err(|e| e.named(|_| Some("ID".into())))?,
        None => SessionChoice::Current,
    };
    if choice == SessionChoice::All {
        return Err(Error::usage(
            "ID: 'all' names every session; `sessions show` shows one (an id, a unique prefix of one, or 'current')",
        )
        .into());
    }
    let mut warnings = Vec::new();
    // The session last, those attached to it before.
    let all = select::sessions(root, &choice, current, &mut warnings)?;
    let session = all
        .last()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("no such session"))?;
    for w in &warnings {
        eprintln!("omnish: warning: {w}");
    }
    let summary = store::summarize(store::OpenSession {
        dir: session.dir.clone(),
        meta: session.meta.clone(),
        meta_problem: session.meta_problem.clone(),
    });
    let commands = sessions::commands(&all, author.as_ref())?;
    store::shown::note_if_on_terminal(root, commands.len());
    if format == PlainFormat::Json {
        let mut doc = summary_json(&summary);
        doc["version"] = json!(1);
        doc["argv"] = json!(summary.session.meta.argv);
        doc["recorder_pid"] = json!(summary.session.meta.recorder_pid);
        doc["recording_error"] = json!(summary.session.meta.recording_error);
        doc["command_list"] = serde_json::to_value(&commands)?;
        visible::json_writer(&mut *out, &doc, true)?;
        writeln!(out)?;
        return Ok(0);
    }
    let m = &summary.session.meta;
    let state = words::session_state(summary.state, summary.recorder_alive);
    let status = match m.exit_status {
        Some(code) if !summary.recorder_alive => format!("{state}, exit status {code}"),
        _ => state.to_string(),
    };
    writeln!(out, "session  {} ({status})", summary.id())?;
    if let Some(p) = &summary.session.meta_problem {
        writeln!(out, "note     {}", visible::line(p))?;
    }
    writeln!(out, "shell    {}", visible::line(&m.argv.join(" ")))?;
    writeln!(out, "host     {}", visible::line(&m.hostname))?;
    if let Some(user) = &m.user {
        writeln!(out, "user     {}", visible::line(user))?;
    }
    writeln!(out, "cwd      {}", visible::line(&m.cwd))?;
    writeln!(out, "started  {}", local_time(m.started_at))?;
    if let Some(end) = m.ended_at {
        writeln!(
            out,
            "ended    {} (after {})",
            local_time(end),
            human_duration(end.saturating_sub(m.started_at))
        )?;
    }
    writeln!(
        out,
        "commands {} ({} failed)",
        summary.commands, summary.failed
    )?;
    writeln!(out, "size     {}", human_size(summary.bytes))?;
    writeln!(
        out,
        "recorder pid {}, {}; hooks {}",
        m.recorder_pid,
        words::recorder(summary.recorder_alive),
        words::hooks(m.hooked)
    )?;
    if let Some(e) = &m.recording_error {
        writeln!(out, "{}", visible::line(&words::recording_stopped(e)))?;
    }
    writeln!(out)?;
    let statuses: Vec<String> = commands.iter().map(|c| words::status(c.ending())).collect();
    let status_width = statuses
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0);
    for (c, status) in commands.iter().zip(&statuses) {
        let duration = c
            .ended_at
            .map(|e| human_duration(e.saturating_sub(c.started_at)))
            .unwrap_or_else(|| "-".to_string());
        let lines = if c.output_lines == 1 {
            "1 line".to_string()
        } else {
            format!("{} lines", c.output_lines)
        };
        writeln!(
            out,
            "{:>4}  {}  {:>7}  {:<status_width$}  {}  {}{}$ {}  ({lines})",
            c.seq,
            local_time(c.started_at),
            duration,
            status,
            visible::line(if c.cwd.is_empty() { "?" } else { &c.cwd }),
            if c.author == store::USER {
                String::new()
            } else {
                format!("[{}] ", visible::line(&c.author))
            },
            c.elsewhere.as_deref().unwrap_or(""),
            visible::line(&c.command_line.replace('\n', " ↵ ")),
        )?;
        if !c.summary.is_empty() {
            writeln!(out, "      {}", visible::text(&c.summary))?;
        }
    }
    Ok(0)
}

fn rm(root: &Path, ids: &[String], out: &mut dyn Write) -> Result<i32> {
    let mut dirs = Vec::new();
    for id in ids {
        let dir = store::resolve_session(root, id)?;
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    let removals = prune::remove_sessions(root, &dirs).map_err(|e| removal_error(root, e))?;
    report(&removals, false, out)
}

fn prune_now(
    root: &Path,
    policy: &prune::Policy,
    current: Option<&str>,
    dry_run: bool,
    out: &mut dyn Write,
) -> Result<i32> {
    let all = store::summarize_all(root)?;
    let chosen = prune::plan(&all, policy, current);
    if chosen.is_empty() {
        let total: u64 = all.iter().map(|s| s.bytes).sum();
        writeln!(
            out,
            "nothing to prune: {} sessions, {} on disk",
            all.len(),
            human_size(total)
        )?;
        return Ok(0);
    }
    if dry_run {
        let mut freed = 0;
        for &i in &chosen {
            let s = &all[i];
            freed += s.bytes;
            writeln!(
                out,
                "would remove {} ({}, last active {})",
                s.id(),
                human_size(s.bytes),
                local_time(s.last_activity)
            )?;
        }
        writeln!(
            out,
            "would free {} in {} sessions",
            human_size(freed),
            chosen.len()
        )?;
        return Ok(0);
    }
    let dirs: Vec<PathBuf> = chosen.iter().map(|&i| all[i].session.dir.clone()).collect();
    let removals = prune::remove_sessions(root, &dirs).map_err(|e| removal_error(root, e))?;
    report(&removals, true, out)
}

/// One line per session, then the total; exit 1 when a session asked for was kept.
fn report(removals: &[prune::Removal], pruning: bool, out: &mut dyn Write) -> Result<i32> {
    let mut freed = 0;
    let mut removed = 0;
    let mut kept = false;
    for r in removals {
        let id = r.dir.file_name().unwrap_or_default().to_string_lossy();
        match &r.result {
            Ok(bytes) => {
                freed += bytes;
                removed += 1;
                writeln!(out, "removed {id} ({})", human_size(*bytes))?;
            }
            Err(prune::Kept::Live) => {
                // A prune planned it before its recorder started: not an error.
                kept |= !pruning;
                eprintln!("omnish: kept {id}: its recorder is running");
            }
            Err(prune::Kept::Missing) => {
                kept |= !pruning;
                eprintln!("omnish: {id} is gone already");
            }
            Err(prune::Kept::Failed(why)) => {
                kept = true;
                eprintln!("omnish: cannot remove {id}: {why}");
            }
        }
    }
    writeln!(
        out,
        "freed {} in {removed} session{}",
        human_size(freed),
        if removed == 1 { "" } else { "s" }
    )?;
    Ok(if kept { 1 } else { 0 })
}
