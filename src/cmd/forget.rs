//! `omnish forget`: destroy recorded commands (by id, or every command a search finds) or a
//! value wherever it was recorded. The bytes are overwritten in place
//! ([`crate::store::forget`]), so a live session's recorder goes on appending undisturbed.
//!
//! The value of `--secret` is best not typed on the command line: without one it is read from
//! the terminal with echo off (or one line from standard input). A line that starts with
//! `omnish forget` is never recorded (the recorder keeps it private), so even `--secret VALUE`
//! leaves nothing in the session; the shell's own history is the shell's.

use crate::cli::ForgetArgs;
use crate::cmd::{RunWith, Setup};
use crate::context::queries::search::{self, SearchFormat, SearchRequest};
use crate::context::request::Filters;
use crate::context::stages::{redact, select::SessionChoice};
use crate::error::Error;
use crate::store::{self, forget};
use crate::term::visible;
use anyhow::{Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

impl RunWith for ForgetArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        if let Some(value) = &self.secret {
            if !self.ids.is_empty() {
                return Err(Error::usage(
                    "give either command ids or --secret, not both (run omnish forget twice)",
                )
                .into());
            }
            return forget_value(setup, value, self.dry_run);
        }
        if self.ids.is_empty() && self.grep.is_none() {
            return Err(Error::usage(
                "say what to forget: command ids (SESSION:SEQ, or SEQ in this session), --grep REGEX, or --secret",
            )
            .into());
        }
        let mut wanted: BTreeMap<PathBuf, BTreeSet<u64>> = BTreeMap::new();
        let mut asked: Vec<(PathBuf, u64, String)> = Vec::new();
        for id in &self.ids {
            let (dir, seq) = command_id(setup, id)?;
            wanted.entry(dir.clone()).or_default().insert(seq);
            asked.push((dir, seq, id.clone()));
        }
        let mut warnings = Vec::new();
        if let Some(pattern) = &self.grep {
            for (dir, seq) in grep(setup, &self, pattern, &mut warnings)? {
                wanted.entry(dir).or_default().insert(seq);
            }
        }
        let mut out = std::io::stdout().lock();
        let mut total = 0;
        let mut bytes = 0;
        let mut forgotten: BTreeSet<(PathBuf, u64)> = BTreeSet::new();
        for (dir, seqs) in &wanted {
            let done = forget::forget_commands(dir, seqs, self.dry_run)
                .with_context(|| format!("cannot forget in {}", dir.display()))?;
            for f in done {
                let r = &f.record;
                if self.dry_run {
                    let line = if r.private {
                        crate::context::words::PRIVATE_COMMAND.to_string()
                    } else {
                        visible::line(&redact::redact(&r.command_line).replace('\n', " ⏎ "))
                            .into_owned()
                    };
                    writeln!(out, "would forget {}  $ {line}", r.command_id)?;
                } else {
                    writeln!(out, "forgot {}", r.command_id)?;
                }
                total += 1;
                bytes += f.bytes;
                forgotten.insert((dir.clone(), r.seq));
            }
        }
        for (dir, seq, id) in &asked {
            if !forgotten.contains(&(dir.clone(), *seq)) {
                eprintln!(
                    "omnish: {} has no record to forget (no such command, forgotten already, or still running: forget it once it ends)",
                    visible::line(id)
                );
            }
        }
        for w in &warnings {
            eprintln!("omnish: warning: {}", visible::line(w));
        }
        if total == 0 {
            if self.grep.is_some() && asked.is_empty() {
                eprintln!("omnish: no finished command matches; nothing forgotten");
            }
            return Ok(1);
        }
        if !self.dry_run {
            eprintln!(
                "omnish: forgot {total} command{} ({bytes} bytes of output and keys overwritten)",
                if total == 1 { "" } else { "s" }
            );
        }
        Ok(0)
    }
}

/// `SESSION:SEQ` (the session a unique prefix of an id) or `SEQ` of the current session: the
/// session's directory and the seq.
fn command_id(setup: &Setup, id: &str) -> Result<(PathBuf, u64)> {
    let bad = || {
        Error::usage(format!(
            "{} is no command id; give SESSION:SEQ (as `omnish context --format json` shows command_id) or SEQ in this session",
            visible::line(id)
        ))
    };
    let (session, seq) = match id.rsplit_once(':') {
        Some((s, n)) => (Some(s), n),
        None => (None, id),
    };
    let seq: u64 = seq.parse().map_err(|_| bad())?;
    let root = &setup.facts.data_root;
    let dir = match session {
        Some(s) if !s.is_empty() => {
            store::resolve_session(root, s).map_err(|e| Error::NotFound(format!("{e:#}")))?
        }
        Some(_) => return Err(bad().into()),
        None => {
            let Some(current) = &setup.facts.current_session else {
                return Err(Error::usage(format!(
                    "{} names a command of the current session, and this shell is not recorded; give SESSION:SEQ",
                    visible::line(id)
                ))
                .into());
            };
            store::session_dir(root, current)
                .ok_or_else(|| Error::NotFound(format!("session {current} is not in the store")))?
        }
    };
    Ok((dir, seq))
}

/// The finished commands whose line or rendered output matches `pattern` (as `omnish search`
/// finds them).
fn grep(
    setup: &Setup,
    args: &ForgetArgs,
    pattern: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<(PathBuf, u64)>> {
    let filters = Filters {
        failed: false,
        grep: None,
        cwd: None,
        here: false,
        since: args.since.clone(),
        session: Some(args.session.clone()),
        host: None,
        user: None,
        ids: Vec::new(),
        author: None,
    };
    let selection = filters
        .resolve(&setup.facts, store::now_ms(), SessionChoice::All)
        .map_err(Setup::flags)?;
    let request = SearchRequest {
        data_root: setup.facts.data_root.clone(),
        current_session: setup.facts.current_session.clone(),
        selection,
        pattern: pattern.to_string(),
        case_insensitive: false,
        fixed_strings: false,
        commands_only: false,
        context: 0,
        format: SearchFormat::Json,
        color: false,
    };
    let (found, outcome) = search::search_ids(&request).map_err(|e| {
        let e = Error::from(e);
        match e.as_usage() {
            Some(_) => Setup::flags(e.named(|_| Some("--grep".into()))),
            None => e.into(),
        }
    })?;
    warnings.extend(outcome.warnings);
    Ok(found
        .into_iter()
        .filter(|h| !h.running)
        .filter_map(|h| {
            Some((
                store::session_dir(&setup.facts.data_root, &h.session_id)?,
                h.seq,
            ))
        })
        .collect())
}

/// `--secret [VALUE]`: overwrites the value in every session.
fn forget_value(setup: &Setup, value: &str, dry_run: bool) -> Result<i32> {
    let value = if value.is_empty() {
        read_value()?
    } else {
        value.to_string()
    };
    if value.chars().count() < 4 {
        return Err(Error::usage(
            "--secret: a value shorter than 4 characters would overwrite ordinary text; give the whole secret",
        )
        .into());
    }
    let mut found = 0;
    let mut sessions = 0;
    for dir in store::list_sessions(&setup.facts.data_root).unwrap_or_default() {
        let n = forget::scrub_value(&dir, value.as_bytes(), dry_run)
            .with_context(|| format!("cannot scrub {}", dir.display()))?;
        if n > 0 {
            found += n;
            sessions += 1;
        }
    }
    let s = |n: u64| if n == 1 { "" } else { "s" };
    if found == 0 {
        eprintln!("omnish: the value is nowhere in the recorded sessions");
        return Ok(1);
    }
    eprintln!(
        "omnish: {} {found} occurrence{} in {sessions} session{}",
        if dry_run { "found" } else { "overwrote" },
        s(found),
        s(sessions)
    );
    Ok(0)
}

/// The value to forget, from the terminal with echo off, or one line of standard input.
fn read_value() -> Result<String> {
    let stdin = std::io::stdin();
    let mut line = String::new();
    if stdin.is_terminal() {
        use nix::sys::termios::{self, LocalFlags, SetArg};
        let saved = termios::tcgetattr(&stdin).context("cannot read the terminal's modes")?;
        let mut quiet = saved.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        eprint!("value to forget (not shown): ");
        termios::tcsetattr(&stdin, SetArg::TCSANOW, &quiet)
            .context("cannot turn the terminal's echo off")?;
        let read = stdin.read_line(&mut line);
        let _ = termios::tcsetattr(&stdin, SetArg::TCSANOW, &saved);
        eprintln!();
        read?;
    } else {
        stdin.read_line(&mut line)?;
    }
    let value = line.trim_end_matches(['\n', '\r']).to_string();
    if value.is_empty() {
        return Err(Error::usage("--secret: no value given").into());
    }
    Ok(value)
}
