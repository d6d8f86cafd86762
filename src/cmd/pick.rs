//! `omnish pick`: choose recent commands from a list with a preview of each output, and print
//! their ids (`<session>:<seq>`, one a line, oldest first). `omnish context --pick` and
//! `omnish ask --pick` open the same list and use what was chosen as their selection (the
//! request's `ids`, `into`).
//!
//! With `fzf` on the PATH the list is fzf's (Tab marks several, Enter chooses, Esc cancels), its
//! preview `omnish pick --preview ID` (the command's rendered, redacted output). Without it (or
//! with `--plain`) the list is printed on the terminal, numbered from the newest, each command
//! with the last lines of its output, and the answer (`1 3-5`) read from the terminal.
//!
//! Exit status: 0 with something chosen; 130 when nothing was (Esc, Ctrl-C, an empty answer:
//! fzf's status, the shell's for an interrupted command, so `ids=$(omnish pick) || exit` stops
//! there); 1 when there is nothing to pick from; 2 for a bad flag or no terminal to ask on.

use crate::cli::PickArgs;
use crate::cmd::{RunWith, Setup};
use crate::context::queries::{pick, range};
use crate::context::request::{Filters, Options};
use crate::error::Error;
use anyhow::{Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// Commands listed when the request does not say.
pub(crate) const DEFAULT_RECENT: usize = 50;
/// Output lines shown under each command in the plain list.
const PLAIN_TAIL: usize = 2;
/// Output lines a preview shows at most.
const PREVIEW_LINES: usize = 500;
/// Answers the plain list asks for before giving up.
const TRIES: usize = 3;
/// What nothing chosen exits with (as fzf does on Esc and Ctrl-C).
pub(crate) const CANCELLED: i32 = 130;

impl RunWith for PickArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        if let Some(id) = &self.preview {
            return preview(id, setup);
        }
        let options = Options {
            filters: Filters {
                failed: self.failed,
                grep: self.grep.clone(),
                session: Some(self.session.clone()),
                ..Filters::default()
            },
            recent: Some(self.recent.unwrap_or(DEFAULT_RECENT)),
            ..Options::default()
        };
        let ids = choose(&options, self.plain, setup)?;
        let mut out = std::io::stdout().lock();
        for id in ids {
            writeln!(out, "{id}")?;
        }
        out.flush()?;
        Ok(0)
    }
}

/// `--pick`: the commands `options` select are listed, and the ones chosen become its ids
/// (the selection). Nothing chosen is the error of status [`CANCELLED`].
pub(crate) fn into(options: &mut Options, setup: &Setup) -> Result<()> {
    let mut listing = options.clone();
    listing.recent = Some(listing.recent.unwrap_or(DEFAULT_RECENT));
    listing.last = false;
    let ids = choose(&listing, false, setup)?;
    options.filters.ids.extend(ids);
    Ok(())
}

/// The ids chosen from what `options` select (fzf, else the plain list), oldest first.
fn choose(options: &Options, plain: bool, setup: &Setup) -> Result<Vec<String>> {
    let req = options
        .build(&setup.facts, &setup.settings)
        .map_err(Setup::flags)?;
    let tail = if plain { PLAIN_TAIL } else { 0 };
    let (mut entries, outcome) = pick::list(&req, tail).map_err(Setup::flags)?;
    for w in &outcome.warnings {
        eprintln!("omnish: warning: {}", crate::term::visible::line(w));
    }
    if let Some(note) = outcome.nothing_matched {
        return Err(Error::Status {
            code: 1,
            message: format!("nothing to pick from: {note}"),
        }
        .into());
    }
    let chosen = if plain { None } else { with_fzf(&entries)? };
    let chosen = match chosen {
        Some(chosen) => chosen,
        None => {
            if !plain {
                // fzf is not installed: the plain list, with the outputs' last lines.
                let (again, _) = pick::list(&req, PLAIN_TAIL).map_err(Setup::flags)?;
                entries = again;
            }
            with_plain_list(&entries)?
        }
    };
    if chosen.is_empty() {
        return Err(Error::Status {
            code: CANCELLED,
            message: "nothing picked".into(),
        }
        .into());
    }
    // Oldest first, as a document shows them.
    let mut ids: Vec<String> = entries
        .iter()
        .rev()
        .filter(|e| chosen.contains(&e.id))
        .map(|e| e.id.clone())
        .collect();
    ids.dedup();
    Ok(ids)
}

/// Quotes `s` for `sh` (fzf runs its preview command with the shell).
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The ids chosen in fzf; `None` when fzf cannot be started (not installed).
fn with_fzf(entries: &[pick::Entry]) -> Result<Option<Vec<String>>> {
    let me = std::env::current_exe().context("cannot find omnish's own path")?;
    let preview = format!("{} pick --preview {{1}}", sh_quote(&me.to_string_lossy()));
    let child = Command::new("fzf")
        .args([
            "--multi",
            "--delimiter",
            "\t",
            "--with-nth",
            "2..",
            "--tiebreak",
            "index",
            "--prompt",
            "omnish pick> ",
            "--header",
            "Tab: mark several   Enter: choose   Esc: cancel",
            "--preview-window",
            "down,60%,wrap",
            "--preview",
            &preview,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).context("cannot run fzf"),
    };
    {
        let mut input = std::io::BufWriter::new(child.stdin.take().expect("piped"));
        for e in entries {
            // fzf may quit (Esc) before it read everything: a closed pipe is no error.
            if writeln!(input, "{}\t{}\t[{}]", e.id, e.line, e.status).is_err() {
                break;
            }
        }
        let _ = input.flush();
    }
    let out = child.wait_with_output().context("cannot run fzf")?;
    match out.status.code() {
        Some(0) => Ok(Some(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| l.split('\t').next())
                .filter(|id| !id.is_empty())
                .map(str::to_string)
                .collect(),
        )),
        // 1: nothing matched the query; 130: Esc or Ctrl-C.
        Some(1) | Some(130) | None => Ok(Some(Vec::new())),
        Some(code) => Err(Error::Status {
            code: 2,
            message: format!("fzf failed (exit status {code})"),
        }
        .into()),
    }
}

/// The plain numbered list on the terminal (`/dev/tty`: stdout may be a pipe to the caller);
/// the answer is read from it.
fn with_plain_list(entries: &[pick::Entry]) -> Result<Vec<String>> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| {
            Error::usage(format!(
                "omnish pick needs a terminal to ask on ({e}); give the ids with --id instead"
            ))
        })?;
    let mut out = tty.try_clone()?;
    let mut input = BufReader::new(tty);
    let n = entries.len();
    // Oldest at the top, the newest (1) last, nearest the question.
    for (i, e) in entries.iter().enumerate().rev() {
        writeln!(out, "{:>3}  {}  [{}]", i + 1, e.line, e.status)?;
        for l in &e.tail {
            writeln!(out, "       │ {l}")?;
        }
    }
    for _ in 0..TRIES {
        write!(
            out,
            "Commands to pick (numbers from 1, the newest, to {n}; ranges like 2-4), Enter for none: "
        )?;
        out.flush()?;
        let mut answer = String::new();
        if input.read_line(&mut answer)? == 0 {
            writeln!(out)?;
            return Ok(Vec::new());
        }
        match parse_answer(&answer, n) {
            Ok(picked) => return Ok(picked.into_iter().map(|i| entries[i].id.clone()).collect()),
            Err(why) => writeln!(out, "omnish: {why}")?,
        }
    }
    Err(Error::usage(format!("no valid answer in {TRIES} tries; nothing picked")).into())
}

/// `1 3-5,7` → indices (0-based) into a list of `n`; empty or `q` → none.
fn parse_answer(answer: &str, n: usize) -> std::result::Result<Vec<usize>, String> {
    let answer = answer.trim();
    if answer.is_empty() || answer.eq_ignore_ascii_case("q") {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for word in answer.split([' ', ',', '\t']).filter(|w| !w.is_empty()) {
        let number = |s: &str| -> std::result::Result<usize, String> {
            match s.trim().parse::<usize>() {
                Ok(k) if (1..=n).contains(&k) => Ok(k - 1),
                _ => Err(format!(
                    "'{}' is not a number from the list (1 to {n}); give numbers like 1 3-5",
                    crate::term::visible::line(word)
                )),
            }
        };
        match word.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                out.extend(a.min(b)..=a.max(b));
            }
            None => out.push(number(word)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// `--preview ID`: the command line, how it ended and its rendered output (redacted as the
/// configuration says), for fzf's preview window.
fn preview(id: &str, setup: &Setup) -> Result<i32> {
    let ids = crate::context::request::command_ids(&[id.to_string()]).map_err(Setup::flags)?;
    let (session, seq) = &ids[0];
    let mut warnings = Vec::new();
    let Some(c) = range::find_command(
        &setup.facts.data_root,
        session,
        *seq,
        setup.facts.current_session.as_deref(),
        &mut warnings,
    )?
    else {
        println!("no command {}", crate::term::visible::line(id));
        return Ok(1);
    };
    let redact = setup.settings.redact;
    let r = range::output_range(&c, 0, PREVIEW_LINES, 0, redact);
    let mut out = std::io::stdout().lock();
    let line = if c.record.private {
        crate::context::words::PRIVATE_COMMAND.to_string()
    } else if redact {
        crate::context::stages::redact::Redactor::default()
            .redact(&c.record.command_line)
            .into_owned()
    } else {
        c.record.command_line.clone()
    };
    writeln!(out, "$ {}", crate::term::visible::line(&line))?;
    if let Some(note) = r.note {
        writeln!(out, "{note}")?;
    }
    for l in &r.lines {
        writeln!(out, "{}", crate::term::visible::line(l))?;
    }
    if r.total > r.lines.len() as u64 {
        writeln!(out, "[{} more lines]", r.total - r.lines.len() as u64)?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_numbers_and_ranges_from_the_list() {
        assert_eq!(parse_answer("1\n", 5), Ok(vec![0]));
        assert_eq!(parse_answer(" 3-5,1 2 ", 5), Ok(vec![0, 1, 2, 3, 4]));
        assert_eq!(parse_answer("4-2", 5), Ok(vec![1, 2, 3]));
        assert_eq!(parse_answer("", 5), Ok(vec![]));
        assert_eq!(parse_answer("q\n", 5), Ok(vec![]));
        let e = parse_answer("6", 5).unwrap_err();
        assert!(
            e.contains("'6' is not a number from the list (1 to 5)"),
            "{e}"
        );
        assert!(parse_answer("0", 5).is_err());
        assert!(parse_answer("x", 5).is_err());
        assert!(parse_answer("1-", 5).is_err());
    }
}
