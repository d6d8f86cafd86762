//! `omnish export`: the commands a request selects, written whole for sharing: markdown with
//! each output folded in `<details>` ([`markdown`]), one self-contained HTML page in the
//! recorded colours ([`html`]), an asciinema recording, asciicast v3 or v2 ([`cast`]), or the
//! JSON document of `context --format json` (the pipeline itself, [`super::run`]).
//!
//! The selection is the pipeline's own (`pick`, the same filters as `context`), and so is
//! redaction: each session's [`Redactor`], taught as `context` teaches it. The writers stream:
//! each output is read frame by frame and written as it is rendered, so memory does not
//! depend on the size of the session or of any output (lines are capped, see each writer).

mod cast;
mod html;
mod markdown;

use std::io::Write;
use std::sync::Arc;

use crate::context::model::CommandContext;
use crate::context::stages::format::Format;
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
/// status; redacted), and its session's redactor when redacting.
pub(crate) struct Item {
    pub candidate: Candidate,
    pub ctx: CommandContext,
    pub redactor: Option<Arc<Redactor>>,
}

/// Writes the commands `req` selects to `out` in `format`. Nothing is written when nothing
/// matched (the outcome says so).
pub(crate) fn export(req: &Request, format: ExportFormat, out: &mut dyn Write) -> Result<Outcome> {
    if format == ExportFormat::Json {
        let mut req = req.clone();
        req.format = Format::Json;
        return super::run(&req, out);
    }
    let (outcome, items) = selected(req)?;
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
fn selected(req: &Request) -> Result<(Outcome, Vec<Item>)> {
    let mut outcome = Outcome::default();
    let sessions = req.sessions(&mut outcome.warnings)?;
    let picked = super::pick(req, &sessions, &mut outcome)?;
    if picked.is_empty() {
        return Ok((outcome, Vec::new()));
    }
    let redactors = req.redact.then(|| learn(&picked));
    outcome.commands = picked.len();
    let items = picked
        .into_iter()
        .map(|c| {
            let redactor = redactors.as_ref().map(|r| r.get(&c.session_dir));
            let ctx = super::base_context(&c, redactor.as_deref());
            Item {
                candidate: c,
                ctx,
                redactor,
            }
        })
        .collect();
    Ok((outcome, items))
}

/// Redactors taught as `context` teaches them (`redact::session::learn`: the command lines, the
/// values kept beside the sessions, the digests of the outputs, big ones read several at
/// once), but each digest dropped once learned: an export reads every output of the session,
/// and `learn` keeps up to `LEARN_KEPT_BYTES` of digests for a pipeline that reuses them.
fn learn(picked: &[Candidate]) -> redact::session::SharedRedactors {
    use crate::context::stages::read;
    use crate::context::support::parallel;
    let mut redactors = redact::session::Redactors::learn_commands(picked);
    let is_big =
        |c: &Candidate| !c.record.private && c.record.stream_length >= parallel::BIG_OUTPUT_BYTES;
    for range in parallel::batches(picked, is_big) {
        let chunk = &picked[range];
        let digests = parallel::map(chunk, is_big, |c| {
            (!c.record.private).then(|| read::cached_digest(c))
        });
        for (c, d) in chunk.iter().zip(digests) {
            if let Some(d) = d {
                redactors.learn_output(c, &d);
            }
        }
    }
    redactors.into_shared()
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
