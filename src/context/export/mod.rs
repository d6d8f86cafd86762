//! `omnish export`: the commands a request selects, written whole for sharing: markdown with
//! each output folded in `<details>` ([`markdown`]), one self-contained HTML page in the
//! recorded colours ([`html`]), an asciinema recording, asciicast v3 or v2 ([`cast`]), or the
//! JSON document of `context --format json` (the pipeline itself, [`super::run`]).
//!
//! The selection is the pipeline's own (`pick`, the same filters as `context`; sessions of
//! `omnish exec` and agents' hooks merged into their terminal's by time, shown as part of it),
//! and so is redaction: each session's [`Redactor`], taught as `context` teaches it. The
//! writers stream: each output is read frame by frame and written as it is rendered, so memory
//! does not depend on the size of the session or of any output (lines are capped, see each
//! writer).
//!
//! Two passes, each over worker threads in command order ([`ordered`]): learning reads every
//! output's digest (rendered, or loaded from its cache) and keeps only its shape; writing
//! renders and redacts each command's part on a worker while this thread writes the parts in
//! order. Markdown and json write the lines learning rendered, spooled ([`spool`]), and check
//! again only the lines that may hold something to redact ([`scan`]); HTML and asciicast,
//! whose writers read the recorded bytes their own way, read them again and check every line
//! they write, once: learning checks only the digest's lines for them. Both passes use every
//! core.

mod cast;
mod html;
mod markdown;
pub(crate) mod ordered;
pub(crate) mod scan;
pub(crate) mod spool;

use std::io::Write;
use std::sync::Arc;

use crate::context::model::CommandContext;
use crate::context::stages::format::Format;
use crate::context::stages::read::{self, Digest};
use crate::context::stages::redact::{self, Redactor};
use crate::context::stages::select::Candidate;
use crate::context::{Outcome, Request};
use crate::error::Result;

/// What `export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExportFormat {
    Markdown,
    Html,
    /// asciicast v3.
    Asciicast,
    AsciicastV2,
    Json,
}

/// One selected command: its record, what is shown of it without its output (line, cwd,
/// status; redacted), the session it is shown with, and its session's redactor when redacting.
pub(crate) struct Item {
    pub candidate: Candidate,
    pub ctx: CommandContext,
    /// The id of the session the command is shown with: the terminal session a session of
    /// `omnish exec` or of an agent's hook is attached to (its commands are merged into the
    /// terminal's by time, as `context` merges them), else its own.
    pub group: String,
    pub redactor: Option<Arc<Redactor>>,
    /// Its output's digest as learning read it, without its lines ([`slim`]): what the writers
    /// need of it (line count, longest backtick run, erased lines, binary or unreadable), so
    /// that they do not read the digest again. `None` when not redacting (nothing was read).
    pub shape: Option<Digest>,
    /// What learning found in its lines, for the writer to skip checking the others again
    /// ([`scan::Known`]); `None`: every line is checked.
    pub known: Option<Arc<scan::Known>>,
    /// Its rendered lines, kept while learning ([`spool`]); `None`: rendered again.
    pub spooled: Option<Arc<spool::Spooled>>,
}

/// Writes the commands `req` selects to `out` in `format`. Nothing is written when nothing
/// matched (the outcome says so).
pub(crate) fn export(req: &Request, format: ExportFormat, out: &mut dyn Write) -> Result<Outcome> {
    if format == ExportFormat::Json {
        let mut req = req.clone();
        req.format = Format::Json;
        // Whole outputs, streamed: learning here serves them (each output's shape, its lines
        // with findings, its lines spooled), else the pipeline learns as `context` does.
        if req.budget.is_none()
            && req.max_lines == 0
            && req.parts != crate::context::model::Parts::CommandsOnly
        {
            let whole = markdown::line_cap(&req);
            return super::run_with(
                &req,
                Some(&|picked| learn(picked, scan::Keep::Lines(whole))),
                out,
            );
        }
        return super::run(&req, out);
    }
    // Markdown writes the lines learning renders: they are spooled, not rendered again.
    let keep = match format {
        ExportFormat::Markdown => scan::Keep::Lines(markdown::line_cap(req)),
        _ => scan::Keep::Nothing,
    };
    let (outcome, items) = selected(req, keep)?;
    if outcome.nothing_matched.is_some() {
        return Ok(outcome);
    }
    match format {
        ExportFormat::Markdown => markdown::write(req, &items, out)?,
        ExportFormat::Html => html::write(&items, out)?,
        ExportFormat::Asciicast => cast::write(&items, cast::Version::V3, out)?,
        ExportFormat::AsciicastV2 => cast::write(&items, cast::Version::V2, out)?,
        ExportFormat::Json => unreachable!("served by the pipeline above"),
    }
    out.flush()?;
    Ok(outcome)
}

/// The commands `req` selects, oldest first (grouped by session), each with its context and
/// redactor.
fn selected(req: &Request, keep: scan::Keep) -> Result<(Outcome, Vec<Item>)> {
    let mut outcome = Outcome::default();
    let sessions = req.sessions(&mut outcome.warnings)?;
    let picked = super::pick(req, &sessions, &mut outcome)?;
    if picked.is_empty() {
        return Ok((outcome, Vec::new()));
    }
    let (redactors, mut shapes, mut known, mut spooled) = match req.redact {
        true => {
            let l = learn(&picked, keep)?;
            (Some(l.redactors), l.shapes, l.known, l.spooled)
        }
        false => (None, Vec::new(), Vec::new(), Vec::new()),
    };
    outcome.commands = picked.len();
    let group = |c: &Candidate| {
        sessions
            .iter()
            .find(|s| s.dir == c.session_dir)
            .map_or_else(|| c.record.session_id.clone(), |s| s.group().to_string())
    };
    let items = picked
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let redactor = redactors.as_ref().map(|r| r.get(&c.session_dir));
            let ctx = super::base_context(&c, redactor.as_deref());
            Item {
                group: group(&c),
                candidate: c,
                ctx,
                redactor,
                shape: shapes.get_mut(i).and_then(Option::take),
                known: known.get_mut(i).and_then(Option::take),
                spooled: spooled.get_mut(i).and_then(Option::take),
            }
        })
        .collect();
    Ok((outcome, items))
}

/// What learning leaves, per selected command (by index).
pub(crate) struct Learned {
    pub redactors: redact::session::SharedRedactors,
    /// Each output's digest without its lines ([`slim`]); `None` for a private command.
    pub shapes: Vec<Option<Digest>>,
    /// What writing each output needs to skip checking lines again ([`scan`]).
    pub known: Vec<Option<Arc<scan::Known>>>,
    /// Each output's lines, when spooled ([`spool`]).
    pub spooled: Vec<Option<Arc<spool::Spooled>>>,
}

/// Redactors taught as `context` teaches them (`redact::session::learn`: the command lines, the
/// values kept beside the sessions, the digests of the outputs), but each digest dropped once
/// learned (an export reads every output of the session; `learn` keeps up to
/// `LEARN_KEPT_BYTES` of digests for a pipeline that reuses them), its [`slim`] shape kept per
/// command. Each output is rendered, and the detectors run over its lines, on worker threads,
/// oldest first ([`scan`]); the lines with findings are learned from on this one in the same
/// order ([`ordered`]).
pub(crate) fn learn(picked: &[Candidate], keep: scan::Keep) -> Result<Learned> {
    let mut redactors = redact::session::Redactors::learn_commands(picked);
    let mut shapes: Vec<Option<Digest>> = vec![None; picked.len()];
    let mut hits: Vec<Option<Vec<u64>>> = vec![None; picked.len()];
    let mut spooled: Vec<Option<Arc<spool::Spooled>>> = Vec::new();
    spooled.resize_with(picked.len(), || None);
    let spool = match (keep, picked.first()) {
        (scan::Keep::Lines(_), Some(c)) => spool::Spool::create(&c.session_dir),
        _ => None,
    };
    ordered::run(
        picked.len(),
        ordered::workers(),
        ordered::IN_FLIGHT,
        |i, sink: &mut ordered::Sink<Scanned>| {
            let c = &picked[i];
            if c.record.private {
                return Ok(());
            }
            let s = scan::scan(c, spool.as_ref(), keep);
            // The lines to learn in messages of about a chunk each: what waits stays bounded.
            let mut batch = Vec::new();
            let mut bytes = 0;
            for l in s.learn {
                bytes += l.head.len() + l.tail.len();
                batch.push(l);
                if bytes >= ordered::CHUNK {
                    sink.send(Scanned::Learn(std::mem::take(&mut batch)))?;
                    bytes = 0;
                }
            }
            if !batch.is_empty() {
                sink.send(Scanned::Learn(batch))?;
            }
            sink.send(Scanned::Done(Box::new((s.shape, s.hits, s.spooled))))?;
            Ok(())
        },
        &mut |_| Ok(()),
        &mut |i, s| {
            match s {
                Scanned::Learn(lines) => {
                    // Teaching these lines teaches what teaching every line of the digest would.
                    redactors.learn_output(&picked[i], &scan::digest_of(lines));
                }
                Scanned::Done(done) => {
                    let (shape, h, lines) = *done;
                    shapes[i] = Some(shape);
                    hits[i] = h;
                    spooled[i] = lines.map(Arc::new);
                }
            }
            Ok(())
        },
    )?;
    let redactors = redactors.into_shared();
    let mut values = scan::ValuesBySession::default();
    let known = picked
        .iter()
        .zip(hits)
        .map(|(c, h)| values.known(c, &redactors.get(&c.session_dir), h))
        .collect();
    Ok(Learned {
        redactors,
        shapes,
        known,
        spooled,
    })
}

/// What a worker sends of one output while learning: lines to learn, then its shape and the
/// lines with findings.
enum Scanned {
    Learn(Vec<read::StoredLine>),
    Done(Box<(Digest, Option<Vec<u64>>, Option<spool::Spooled>)>),
}

/// `d` without its lines.
pub(crate) fn slim(mut d: Digest) -> Digest {
    d.head = Vec::new();
    d.tail = Vec::new();
    d.errors = Vec::new();
    d
}

/// The digest of `item`'s output: its [`Item::shape`] when that serves (no line of it is
/// wanted: the whole output is shown, `max_lines` 0 or above its line count), else read.
fn digest(item: &Item, max_lines: usize) -> Digest {
    match &item.shape {
        Some(d) if max_lines == 0 || d.lines <= max_lines as u64 => d.clone(),
        _ => crate::context::stages::read::cached_digest(&item.candidate),
    }
}

/// How `ctx` ended, in words (`exit 0`, `exit 127: command not found`, `still running`).
fn status(ctx: &CommandContext) -> String {
    crate::context::words::status(crate::context::words::Ending {
        running: ctx.running,
        recording_stopped: ctx.recording_stopped,
        exit_code: ctx.exit_code,
        ended_shell: ctx.ended_shell,
    })
}

/// `2026-11-26 14:02:03 UTC` for a time in ms since the epoch.
fn utc(ms: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    let s = humantime::format_rfc3339_seconds(t).to_string();
    format!("{} UTC", s.trim_end_matches('Z').replace('T', " "))
}

/// How long `ctx` ran (`1.2 s`, `3 min 4 s`), when it ended.
fn took(ctx: &CommandContext) -> Option<String> {
    let ms = ctx.ended_at?.saturating_sub(ctx.started_at);
    Some(if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{} min {} s", ms / 60_000, (ms % 60_000) / 1000)
    })
}

/// Whether the command's output was recorded at all (a private command's never was).
fn has_output(item: &Item) -> bool {
    !item.candidate.record.private
}
