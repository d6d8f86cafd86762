//! The context pipeline, one way in for every front end: what it asks for (`request::Options`),
//! where it runs (`request::Facts`) and what the user configured (`request::Settings`) make one
//! `Request` (`Options::build`, where every value is parsed and checked once); the request
//! makes the document, written out as it is rendered (`run`, the command line) or handed back
//! fitted to its budget with whatever the caller puts around it (`fitted` and its `Frame`: the
//! MCP server's labels and command ids), in one pass. The words for how commands ended and what
//! sessions are in are in `words`; errors are [`crate::error::Error`], naming no flag.
//!
//! The folder shows the pipeline: [`stages`] are its steps in order, `sources` the sections a
//! document carries besides the commands, `tokens` what the budget counts with, `queries`
//! the other questions front ends ask of the same records (search, a command's output, session
//! summaries), and `support` what they share (parallel reads, bounded patterns).
//!
//! `select` picks command records → `read` reads and renders each one's output into a
//! bounded digest (through [`crate::term`]) → `truncate` keeps head, tail and error lines and
//! shortens long lines, and folds repeats → `loops` folds runs of failed attempts →
//! [`redact`] takes secrets out → `budget` fits a token ceiling → `format` prints text,
//! markdown or json. The types that join them are in `model`.
//!
//! Besides the commands, a document can carry sections, each asked for in the request and
//! printed before the commands: pinned `notes`, an environment snapshot (`env`) and the project's
//! `files`. They are redacted, fitted by the budget and formatted like the commands.
//!
//! Nothing here reads flags or the environment: the caller says which session it runs in, where
//! the store is and what time filters mean.
//!
//! # Bounded
//!
//! Memory never depends on the size of a recorded output: each command is read as a stream of
//! frames, rendered line by line, and only a `read::Digest` (line count, head, tail, error
//! lines, each line at most `read::LINE_CAP` chars) is kept. Options that need more than a
//! digest holds (`max_lines` above `read::HEAD_LINES`, or lines wider than
//! `MAX_DIGEST_WIDTH`) without a budget are served by *streaming*: the document is formatted
//! with a placeholder for each output, and the placeholder is replaced by the output's lines as a
//! second rendering pass produces them, straight to the writer. With a budget, outputs are
//! considered up to `read::HEAD_LINES` lines per command and `MAX_DIGEST_WIDTH` chars per
//! line, which no useful budget can exceed.

pub(crate) mod diff;
pub(crate) mod export;
pub(crate) mod model;
pub(crate) mod queries;
pub(crate) mod request;
pub(crate) mod sources;
pub mod stages;
pub(crate) mod support;
pub(crate) mod tokens;
pub(crate) mod words;

pub(crate) use request::Request;

// The stages by their own names, as the pipeline below uses them.
use sources::{env, files, notes};
use stages::{format, loops, read, redact, select, truncate};
use support::parallel;

use std::io::Write;
use std::sync::Arc;

use crate::context::model::{CommandContext, ContextDoc, Parts};
use crate::context::stages::format::Format;
use crate::context::stages::read::{Digest, Source, StoredLine};
use crate::context::stages::redact::Redactor;
use crate::context::stages::select::{Candidate, Query, SessionChoice};
use crate::error::{Error, Result};
use crate::term::render::Line;

/// The widest line (in chars, before the marker) served from a digest.
pub(crate) const MAX_DIGEST_WIDTH: usize = read::LINE_CAP / 2;
/// With no width limit, lines longer than this many chars still keep only head and tail.
pub(crate) const UNLIMITED_WIDTH_CAP: usize = 1 << 20;

/// What a run did, for the front end to report.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Commands in the document (after folding repeats).
    pub commands: usize,
    /// Lines for the user (a session read without its metadata, ...).
    pub warnings: Vec<String>,
    /// Set when nothing matched: which filters matched nothing where. Nothing was written.
    pub nothing_matched: Option<String>,
}

/// What a caller puts around the document (labels before it, a footer naming the commands it
/// shows), counted with it against the budget: the room it takes is reserved as the document
/// is fitted, whatever commands the budget keeps, so one pass makes a result that fits.
pub(crate) trait Frame {
    /// The whole text for `doc`, formatted as `body`; `warnings` are the lines the run has for
    /// the user (a session read without its metadata, ...).
    fn wrap(&self, doc: &ContextDoc, warnings: &[String], body: &str) -> String;
}

/// No frame: the document alone.
pub(crate) struct Bare;

impl Frame for Bare {
    fn wrap(&self, _: &ContextDoc, _: &[String], body: &str) -> String {
        body.to_string()
    }
}

/// A document fitted to its budget, in its frame ([`fitted`]).
#[derive(Debug)]
pub(crate) struct Fitted {
    pub outcome: Outcome,
    /// The document as shown (after the budget); `None` when nothing matched.
    pub doc: Option<ContextDoc>,
    /// The frame around the formatted document; empty when nothing matched.
    pub text: String,
}

impl Fitted {
    /// Tokens `text` counts at most: the count made while fitting, else (it fit uncounted)
    /// its length in bytes; `None` without a budget.
    pub(crate) fn tokens(&self) -> Option<usize> {
        let doc = self.doc.as_ref()?;
        doc.report.budget?;
        Some(doc.report.tokens.unwrap_or(self.text.len()))
    }
}

/// Builds the document `req` asks for and writes it to `out`: streamed as its outputs are
/// rendered when no budget bounds it and it wants more than digests hold (see the module docs).
pub(crate) fn run(req: &Request, out: &mut dyn Write) -> Result<Outcome> {
    run_with(req, None, out)
}

/// Teaches the redactors of the commands selected (in place of `redact::session::learn`), and
/// hands back what writing their outputs can reuse (`export::learn`).
pub(crate) type Learner<'a> = dyn Fn(&[Candidate]) -> Result<export::Learned> + 'a;

/// [`run`], the redactors taught by `learner` when redacting. Its digests (`shapes`) must serve
/// what `req` asks (see `export`).
pub(crate) fn run_with(
    req: &Request,
    learner: Option<&Learner<'_>>,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let Prepared {
        outcome,
        mut doc,
        folded,
        pre_summarized,
        streaming,
        width,
    } = prepare(req, false, learner)?;
    if outcome.nothing_matched.is_some() {
        return Ok(outcome);
    }
    if streaming {
        write_streaming(req, doc, folded, width, out)?;
        return Ok(outcome);
    }
    finish(&mut doc, folded, pre_summarized);
    let text = fit_and_format(&mut doc, req, &Bare, &outcome.warnings)?;
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(outcome)
}

/// The document `req` asks for, held in memory (outputs served from their bounded digests:
/// at most [`read::HEAD_LINES`] lines of [`MAX_DIGEST_WIDTH`] chars each, never streamed) and
/// fitted to the request's budget with `frame` around it, in one pass.
pub(crate) fn fitted(req: &Request, frame: &dyn Frame) -> Result<Fitted> {
    let Prepared {
        outcome,
        mut doc,
        folded,
        pre_summarized,
        ..
    } = prepare(req, true, None)?;
    if outcome.nothing_matched.is_some() {
        return Ok(Fitted {
            outcome,
            doc: None,
            text: String::new(),
        });
    }
    finish(&mut doc, folded, pre_summarized);
    let text = fit_and_format(&mut doc, req, frame, &outcome.warnings)?;
    Ok(Fitted {
        outcome,
        doc: Some(doc),
        text,
    })
}

/// The selected commands read, folded and their sections gathered, before any budget.
struct Prepared {
    outcome: Outcome,
    /// The sections, no commands yet.
    doc: ContextDoc,
    folded: Vec<(CommandContext, Option<StreamPlan>)>,
    /// Commands summarized up front because the outputs held were far over the budget.
    pre_summarized: Vec<(String, u64)>,
    /// Outputs are to be streamed (see [`run`]).
    streaming: bool,
    /// Chars per output line.
    width: usize,
}

/// Puts the folded commands into `doc`, with those summarized up front in its report.
fn finish(
    doc: &mut ContextDoc,
    folded: Vec<(CommandContext, Option<StreamPlan>)>,
    mut pre_summarized: Vec<(String, u64)>,
) {
    doc.commands = folded.into_iter().map(|(c, _)| c).collect();
    pre_summarized.retain(|(s, q)| {
        doc.commands
            .iter()
            .any(|c| &c.session_id == s && c.seq == *q)
    });
    doc.report.summarized = pre_summarized;
}

/// Selects, reads and folds what `req` asks for; `in_memory`: never plan to stream (outputs
/// from digests only). Nothing read when nothing matched (`outcome.nothing_matched` says so).
fn prepare(req: &Request, in_memory: bool, learner: Option<&Learner<'_>>) -> Result<Prepared> {
    if req.limit == 0 {
        return Err(Error::usage(
            "the number of commands to show must be at least 1",
        ));
    }
    let mut outcome = Outcome::default();
    let sessions = req.sessions(&mut outcome.warnings)?;
    let group_sessions = req.selection.sessions == SessionChoice::All;
    let picked = pick(req, &sessions, &mut outcome)?;
    if picked.is_empty() {
        return Ok(Prepared {
            outcome,
            doc: ContextDoc::default(),
            folded: Vec::new(),
            pre_summarized: Vec::new(),
            streaming: false,
            width: 0,
        });
    }

    let streaming = !in_memory
        && req.budget.is_none()
        && req.parts != Parts::CommandsOnly
        && (req.max_lines == 0
            || req.max_lines > read::HEAD_LINES
            || req.max_line_width == 0
            || req.max_line_width > MAX_DIGEST_WIDTH);
    let (max_lines, width) = if req.budget.is_some() || in_memory {
        let lines = match req.max_lines {
            0 => read::HEAD_LINES,
            n => n.min(read::HEAD_LINES),
        };
        let width = match req.max_line_width {
            0 => MAX_DIGEST_WIDTH,
            w => w.min(MAX_DIGEST_WIDTH),
        };
        (lines, width)
    } else {
        (req.max_lines, req.max_line_width)
    };
    // Newest first, so that with a budget the outputs kept in memory stop growing once they
    // hold far more than the budget can show: older commands are then summarized up front
    // (the budget would summarize them first anyway).
    let kept_cap = req
        .budget
        .as_ref()
        .map(|b| b.tokens.saturating_mul(16).max(256 * 1024));
    let mut kept_bytes = 0usize;
    let mut pre_summarized = Vec::new();
    let mut commands = Vec::with_capacity(picked.len());
    let mut plans = Vec::with_capacity(picked.len());
    // Session-aware redaction: a redactor per session, and the digests it read to learn.
    let mut known = Vec::new();
    let mut spooled = Vec::new();
    let (redactors, mut early) = match (req.redact, learner) {
        (true, Some(learn)) => {
            let l = learn(&picked)?;
            known = l.known;
            spooled = l.spooled;
            (Some(l.redactors), l.shapes)
        }
        (true, None) => {
            let (r, early) = redact::session::learn(&picked, req.parts != Parts::CommandsOnly);
            (Some(r), early)
        }
        (false, _) => (None, Vec::new()),
    };
    // A private command's output was never stored.
    let has_output = |c: &Candidate| req.parts != Parts::CommandsOnly && !c.record.private;
    let mut own_counts = crate::context::stages::own::Counts::default();
    let newest_first: Vec<usize> = (0..picked.len()).rev().collect();
    for range in parallel::batches(&newest_first, |&i| is_big(&picked[i], &has_output)) {
        let batch = &newest_first[range];
        let digests = digests_of(&picked, batch, &mut early, &has_output);
        for (&i, digest) in batch.iter().zip(digests) {
            let c = &picked[i];
            let redactor = redactors.as_ref().map(|r| r.get(&c.session_dir));
            let mut ctx = base_context(c, redactor.as_deref());
            let Some(digest) = digest else {
                plans.push(None);
                commands.push(ctx);
                continue;
            };
            ctx.output_hash = digest.hash;
            // omnish's own output (`omnish context` run to preview) is one line.
            let own = own_counts.folded(c, digest.lines);
            if let Some(note) = own.or_else(|| digest.note()) {
                ctx.output = vec![note];
                ctx.output_lines = 1;
                plans.push(None);
            } else if streaming && digest.lines > 0 {
                let mut plan = stream_plan(c, &digest, max_lines, redactor);
                plan.known = known.get(i).cloned().flatten();
                plan.spooled = spooled.get(i).cloned().flatten();
                ctx.output_lines = digest.lines as usize;
                if let Some(keep) = &plan.keep {
                    ctx.gaps = truncate::gaps_of(keep, digest.lines);
                }
                plans.push(Some(plan));
            } else if kept_cap.is_some_and(|cap| kept_bytes > cap) {
                ctx.output_lines = digest.lines as usize;
                if digest.lines > 0 {
                    ctx.gaps = vec![(0, digest.lines as usize)];
                }
                ctx.summarized = true;
                pre_summarized.push((ctx.session_id.clone(), ctx.seq));
                plans.push(None);
            } else {
                fill_from_digest(&mut ctx, &digest, max_lines, width, redactor.as_deref());
                kept_bytes += ctx.output.iter().map(|l| l.len() + 1).sum::<usize>();
                plans.push(None);
            }
            commands.push(ctx);
        }
    }
    commands.reverse();
    plans.reverse();
    pre_summarized.reverse();
    let now = crate::store::now_ms();
    let first_started = commands.iter().map(|c| c.started_at).min().unwrap_or(now);
    // Fold repeated runs, then loops of failed attempts; a folded entry keeps the latest run.
    let folded = truncate::fold_repeats_with(commands.into_iter().zip(plans).collect());
    let folded = loops::fold(folded, &req.loops, now);
    outcome.commands = folded.len();
    let mut doc = sections(req, first_started, now, &mut outcome.warnings)?;
    doc.group_sessions = group_sessions;
    doc.parts = req.parts;

    Ok(Prepared {
        outcome,
        doc,
        folded,
        pre_summarized,
        streaming,
        width,
    })
}

fn is_big(c: &Candidate, has_output: &dyn Fn(&Candidate) -> bool) -> bool {
    has_output(c) && c.record.stream_length >= parallel::BIG_OUTPUT_BYTES
}

/// The digests of the candidates at `batch` (indices into `picked`; `None` where `has_output`
/// says there is none): those already read to learn secrets (`early`) are taken from there, the
/// others are read, big outputs in parallel. Memory stays bounded: one digest per candidate of
/// the batch.
fn digests_of(
    picked: &[Candidate],
    batch: &[usize],
    early: &mut [Option<Digest>],
    has_output: &(dyn Fn(&Candidate) -> bool + Sync),
) -> Vec<Option<Digest>> {
    let mut digests: Vec<Option<Digest>> = batch
        .iter()
        .map(|&i| early.get_mut(i).and_then(Option::take))
        .collect();
    let missing: Vec<usize> = (0..batch.len())
        .filter(|&k| digests[k].is_none() && has_output(&picked[batch[k]]))
        .collect();
    let read = parallel::map(
        &missing,
        |&k| is_big(&picked[batch[k]], has_output),
        |&k| read::cached_digest(&picked[batch[k]]),
    );
    for (k, d) in missing.into_iter().zip(read) {
        digests[k] = Some(d);
    }
    digests
}

/// A document holding the sections `req` asks for (notes, environment, files) and no
/// commands. `first_started` is when the oldest selected command started (for `--changed`).
fn sections(
    req: &Request,
    first_started: u64,
    now: u64,
    warnings: &mut Vec<String>,
) -> Result<ContextDoc> {
    let mut doc = ContextDoc::default();
    if let Some(scope) = &req.notes {
        // Notes nobody asked for this time never stop the commands from being shown.
        match notes::entries(&req.data_root, scope, now, req.redact) {
            Ok(n) => doc.notes = n,
            Err(e) => warnings.push(format!("notes left out: {e:#}")),
        }
    }
    if let Some(src) = &req.env {
        doc.env = Some(env::snapshot(src, req.redact)?);
    }
    if let Some(f) = &req.files {
        let offset = req.loops.utc_offset_secs;
        let clock = |t: u64| loops::clock(t, offset, now);
        doc.files = Some(files::section(f, first_started, req.redact, &clock)?);
    }
    Ok(doc)
}

/// Formats the document in `frame`, fitting both under the budget when there is one.
fn fit_and_format(
    doc: &mut ContextDoc,
    req: &Request,
    frame: &dyn Frame,
    warnings: &[String],
) -> Result<String> {
    let budget = req
        .budget
        .as_ref()
        .map(|b| (b.tokens, b.tokenizer.as_str()));
    let wrap = |d: &ContextDoc, body: &str| frame.wrap(d, warnings, body);
    format::render_within(doc, req.format, budget, &wrap).map_err(|e| match (e, &req.budget) {
        // A budget below the smallest document is about where the budget came from: a
        // budget asked for, or a model's.
        (Error::Usage(u), Some(b)) if u.field == Some(crate::error::Field::Budget) => {
            Error::Usage(crate::error::Usage {
                field: Some(b.source.0),
                from_settings: b.source.1,
                ..u
            })
        }
        (e, _) => e,
    })
}

/// Selects from every session and keeps the newest `limit` overall, grouped by session with the
/// current session last (the order `sessions` gives). Cheap filters first; `grep` reads output
/// only for commands that passed them.
fn pick(
    req: &Request,
    sessions: &[select::Session],
    outcome: &mut Outcome,
) -> Result<Vec<Candidate>> {
    let mut filters = select::cheap_filters(req.selection.cheap());
    if let Some(ids) = &req.selection.ids {
        filters.push(Box::new(select::Ids(ids.clone())));
    }
    // The whole command line is matched, before a long one is cut.
    let line_test = req
        .selection
        .grep
        .as_ref()
        .map(|re| move |line: &str| re.is_match(line));
    let grep = req
        .selection
        .grep
        .as_ref()
        .map(|re| move |c: &Candidate| c.line_matched || read::command_output_matches(c, re));
    let query = Query {
        filters,
        line_test: line_test
            .as_ref()
            .map(|t| t as &(dyn Fn(&str) -> bool + Sync)),
        output_filter: grep
            .as_ref()
            .map(|g| g as &(dyn Fn(&Candidate) -> bool + Sync)),
        limit: req.limit,
    };
    let mut picked: Vec<Candidate> = Vec::new();
    let mut scanned = Vec::new();
    for s in sessions {
        let found = query.select(s)?;
        scanned.push((s.id().to_string(), found.scanned));
        picked.extend(found.commands);
    }
    // Sessions attached to another (`omnish exec`, agents' hooks) are shown with it, their
    // commands among its own by time.
    let attached = sessions.iter().any(|s| s.group() != s.id());
    if picked.len() > req.limit || attached {
        picked.sort_by_key(|c| std::cmp::Reverse((c.record.started_at, c.record.seq)));
        picked.truncate(req.limit);
        let group = |c: &Candidate| {
            let s = sessions.iter().find(|s| s.dir == c.session_dir);
            let g = s.map(|s| s.group());
            sessions
                .iter()
                .position(|s| Some(s.id()) == g)
                .or_else(|| sessions.iter().position(|s| s.dir == c.session_dir))
        };
        picked.sort_by_key(|c| (group(c), c.record.started_at, c.record.seq));
    }
    if picked.is_empty() {
        outcome.nothing_matched = Some(nothing_matched(req, &scanned));
    }
    for c in &mut picked {
        c.screens = req.screens;
    }
    Ok(picked)
}

/// `no command matched (failed, grep 'x') in session S (12 commands looked at)`.
fn nothing_matched(req: &Request, scanned: &[(String, usize)]) -> String {
    let mut filters = Vec::new();
    if req.selection.failed {
        filters.push("failed".to_string());
    }
    if let Some(re) = &req.selection.grep {
        filters.push(format!("grep '{}'", re.as_str()));
    }
    if let Some(dir) = &req.selection.within {
        filters.push(format!("cwd {}", dir.display()));
    }
    if req.selection.since_ms.is_some() {
        filters.push("since".to_string());
    }
    if let Some(host) = &req.selection.host {
        filters.push(format!(
            "host {}",
            crate::context::support::pattern::quote(host)
        ));
    }
    if let Some(user) = &req.selection.user {
        filters.push(format!(
            "user {}",
            crate::context::support::pattern::quote(user)
        ));
    }
    let what = if filters.is_empty() {
        "no recorded command".to_string()
    } else {
        format!("no command matched ({})", filters.join(", "))
    };
    let total: usize = scanned.iter().map(|(_, n)| n).sum();
    let looked = if total == 1 {
        "1 command looked at".to_string()
    } else {
        format!("{total} commands looked at")
    };
    match scanned {
        [(id, _)] => format!("{what} in session {id} ({looked})"),
        _ => format!("{what} in {} sessions ({looked})", scanned.len()),
    }
}

/// A command's context without output: what ran, where, how it ended. A long command line was
/// cut by select; its head and tail are redacted apart, as an output line's are.
fn base_context(c: &Candidate, redactor: Option<&Redactor>) -> CommandContext {
    let r = &c.record;
    let (head, omitted, tail) = c.command_line_parts();
    let (line, head_len) = if r.command_source == crate::store::forget::FORGOTTEN {
        (words::FORGOTTEN_COMMAND.to_string(), 0)
    } else if r.paused {
        (words::PAUSED_COMMAND.to_string(), 0)
    } else if r.private {
        (words::PRIVATE_COMMAND.to_string(), 0)
    } else if omitted > 0 {
        let (head, tail) = match redactor {
            Some(red) => (red.redact(head), red.redact(tail)),
            None => (head.into(), tail.into()),
        };
        let line = format!("{head}{}{tail}", truncate::omitted_chars_marker(omitted));
        (line, head.len())
    } else {
        (r.command_line.clone(), 0)
    };
    let mut ctx = CommandContext::new(r.session_id.clone(), r.seq, line);
    if !r.private && omitted > 0 {
        ctx.command_line_omitted = omitted;
        ctx.command_line_head = head_len;
    }
    ctx.cwd = r.cwd.clone();
    ctx.started_at = r.started_at;
    ctx.running = c.running;
    ctx.recording_stopped = r.recording_stopped;
    ctx.private = r.private;
    ctx.ended_shell = c.ended_shell;
    ctx.host = c.host.clone();
    ctx.user = c.user.clone();
    ctx.nested_in = r.nested_in.clone();
    ctx.depth = r.depth;
    ctx.unsplit = r.unsplit.clone();
    ctx.elsewhere = c.elsewhere_label();
    ctx.author = r.author().to_string();
    if !c.running && !c.cut_off {
        ctx.ended_at = Some(r.ended_at);
        ctx.exit_code = r.exit_code;
    }
    if let Some(r) = redactor {
        if omitted == 0 {
            ctx.command_line = r.redact(&ctx.command_line).into_owned();
        }
        ctx.cwd = r.redact(&ctx.cwd).into_owned();
    }
    ctx
}

/// The text shown for one output line: redacted, then shortened to `width` chars (twice that for
/// error-looking lines, which keep priority as they do when lines are left out).
pub(crate) fn show_line(
    head: &str,
    omitted: u64,
    tail: &str,
    key_block: bool,
    width: usize,
    redactor: Option<&Redactor>,
) -> String {
    if redactor.is_some() && key_block {
        return "[REDACTED:private-key]".to_string();
    }
    let error = crate::context::stages::truncate::is_error_line(head)
        || crate::context::stages::truncate::is_error_line(tail);
    let width = if error {
        width.saturating_mul(2)
    } else {
        width
    };
    if let Some(r) = redactor {
        let h = r.redact(head);
        let t = r.redact(tail);
        truncate::shorten(&h, omitted, &t, width)
    } else {
        truncate::shorten(head, omitted, tail, width)
    }
}

/// Fills `ctx`'s output from a digest: at most `max_lines` lines (head, tail, error lines), each
/// at most `width` chars.
fn fill_from_digest(
    ctx: &mut CommandContext,
    d: &Digest,
    max_lines: usize,
    width: usize,
    redactor: Option<&Redactor>,
) {
    let keep = truncate::kept_lines(d.lines, max_lines, &d.error_indices());
    ctx.output_lines = d.lines as usize;
    ctx.gaps = truncate::gaps_of(&keep, d.lines);
    ctx.output = keep
        .iter()
        .map(|&i| {
            let l = d.line(i).cloned().unwrap_or_else(StoredLine::default);
            show_line(&l.head, l.omitted, &l.tail, l.key_block, width, redactor)
        })
        .collect();
}

/// Which lines of a streamed output to write.
struct StreamPlan {
    src: Source,
    erased: u64,
    lines: u64,
    /// `None`: every line.
    keep: Option<Vec<u64>>,
    backticks: usize,
    /// The session's redactor, when redacting.
    redactor: Option<Arc<Redactor>>,
    /// What learning found in the output's lines: lines it says need no redaction are
    /// written as they are (`export::scan`).
    known: Option<Arc<export::scan::Known>>,
    /// The output's lines as learning rendered them (`export::spool`), rendered whole up to
    /// the writer's line cap: read from there instead of rendering again.
    spooled: Option<Arc<export::spool::Spooled>>,
}

fn stream_plan(
    c: &Candidate,
    d: &Digest,
    max_lines: usize,
    redactor: Option<Arc<Redactor>>,
) -> StreamPlan {
    let src = Source::of(c);
    let keep = if max_lines == 0 || d.lines <= max_lines as u64 {
        None
    } else if max_lines <= d.caps.errors.min(d.caps.head).min(d.caps.tail) {
        Some(truncate::kept_lines(d.lines, max_lines, &d.error_indices()))
    } else {
        let errors = read::error_line_numbers(&src, d.erased, max_lines);
        Some(truncate::kept_lines(d.lines, max_lines, &errors))
    };
    StreamPlan {
        src,
        erased: d.erased,
        lines: d.lines,
        keep,
        backticks: d.backticks,
        redactor,
        known: None,
        spooled: None,
    }
}

/// The placeholder standing for output `k` in the formatted document; its backticks make a
/// markdown fence as long as the real output needs. `nonce` is random, so no command line can
/// spell a placeholder (rendered output never holds the control character around it; text and
/// markdown show it visibly, as they show every output line).
fn placeholder(nonce: &str, k: usize, backticks: usize) -> String {
    format!(
        "\u{1}omnish-output-{nonce}-{k}\u{1}{}",
        "`".repeat(backticks)
    )
}

/// Formats the document with placeholders and writes it, streaming each output in place of its
/// placeholder.
fn write_streaming(
    req: &Request,
    mut doc: ContextDoc,
    folded: Vec<(CommandContext, Option<StreamPlan>)>,
    width: usize,
    out: &mut dyn Write,
) -> Result<()> {
    let json = req.format == Format::Json;
    let markdown = req.format == Format::Markdown;
    let mut commands = Vec::with_capacity(folded.len());
    let mut streams = Vec::new();
    let nonce = crate::store::random_hex(8);
    for (mut ctx, plan) in folded {
        if let Some(plan) = plan {
            let mark = placeholder(&nonce, streams.len(), plan.backticks);
            ctx.output = vec![mark.clone()];
            if !json {
                // Text and markdown print gap lines among the output: the stream writes them.
                ctx.gaps.clear();
            }
            // The placeholder as the formatter writes it.
            let needle = if json {
                let quoted = crate::term::visible::json_string(&mark, false)
                    .map_err(std::io::Error::other)?;
                quoted[1..quoted.len() - 1].to_string()
            } else {
                crate::term::visible::text(&mark).into_owned()
            };
            streams.push((needle, plan));
        }
        commands.push(ctx);
    }
    doc.commands = commands;
    let text = format::format(&doc, req.format);
    let line_cap = match width {
        0 => UNLIMITED_WIDTH_CAP,
        w => w.saturating_mul(4).saturating_add(read::LINE_CAP),
    };
    let style = match (json, markdown) {
        (true, _) => Style::Json,
        (false, true) => Style::Markdown,
        (false, false) => Style::Text,
    };
    // The text before each output, and the output's plan.
    let mut rest = text.as_str();
    let mut parts = Vec::with_capacity(streams.len());
    for (needle, plan) in streams {
        let Some(at) = rest.find(&needle) else {
            continue;
        };
        parts.push((&rest[..at], plan));
        rest = &rest[at + needle.len()..];
    }
    // Outputs rendered on worker threads, written in order (`export::ordered`).
    export::ordered::write(
        parts.len(),
        export::ordered::workers(),
        |i, out| write_output(out, &parts[i].1, width, line_cap, style),
        &mut |i, out| Ok(out.write_all(parts[i].0.as_bytes())?),
        out,
    )?;
    out.write_all(rest.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// How a streamed output is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Text,
    /// Text inside a fence made longer than the digest's longest backtick run.
    Markdown,
    Json,
}

/// Whether `line` would close a markdown fence of more than `backticks` backticks: up to three
/// spaces, a longer run of backticks, nothing after it but blanks (CommonMark's closing fence).
fn closes_fence(line: &str, backticks: usize) -> bool {
    let rest = line.trim_start_matches(' ');
    if line.len() - rest.len() > 3 {
        return false;
    }
    let run = rest.len() - rest.trim_start_matches('`').len();
    run > backticks && rest[run..].trim_matches([' ', '\t']).is_empty()
}

/// Writes one streamed output: its kept lines, shown visibly and joined by newlines (escaped
/// for json), with gap lines where lines were left out (text and markdown).
///
/// The markdown fence around it was made from the digest's longest backtick run; a line the
/// digest did not account for (a cache that does not match the stream) that would close the
/// fence is indented by four spaces, which no closing fence can be.
fn write_output(
    out: &mut dyn Write,
    plan: &StreamPlan,
    width: usize,
    line_cap: usize,
    style: Style,
) -> Result<()> {
    let json = style == Style::Json;
    let keep = plan.keep.as_deref();
    let mut k = 0usize; // next index into keep
    let mut next_line = 0u64; // the line after the last one written or skipped
    let mut first = true;
    let mut in_key = false;
    let mut err: Option<std::io::Error> = None;
    let sep: &[u8] = if json { b"\\n" } else { b"\n" };
    let write_piece = |out: &mut dyn Write, s: &str, first: &mut bool| -> std::io::Result<()> {
        if !*first {
            out.write_all(sep)?;
        }
        *first = false;
        match style {
            // Printable ASCII but `"` and `\\`: JSON as it is (what the escaper would write).
            Style::Json
                if s.bytes()
                    .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\') =>
            {
                out.write_all(s.as_bytes())
            }
            Style::Json => {
                let q =
                    crate::term::visible::json_string(s, false).map_err(std::io::Error::other)?;
                out.write_all(&q.as_bytes()[1..q.len() - 1])
            }
            Style::Markdown if closes_fence(s, plan.backticks) => {
                out.write_all(b"    ")?;
                out.write_all(crate::term::visible::text(s).as_bytes())
            }
            Style::Markdown | Style::Text => {
                out.write_all(crate::term::visible::text(s).as_bytes())
            }
        }
    };
    let mut each = |i, line: Line<'_>| {
        if err.is_some() || i >= plan.lines {
            return;
        }
        let key_block = read::key_block_state(&mut in_key, line.head, line.tail);
        let wanted = match keep {
            None => true,
            Some(keep) => {
                while k < keep.len() && keep[k] < i {
                    k += 1;
                }
                k < keep.len() && keep[k] == i
            }
        };
        if !wanted {
            return;
        }
        let redactor = match (&plan.redactor, &plan.known) {
            (Some(_), Some(known))
                if !key_block && !known.may_hold_secret(i, line.head, line.omitted, line.tail) =>
            {
                None
            }
            (r, _) => r.as_deref(),
        };
        let shown = show_line(
            line.head,
            line.omitted,
            line.tail,
            key_block,
            width,
            redactor,
        );
        let result = (|| {
            if !json && i > next_line {
                write_piece(out, &format::gap_line((i - next_line) as usize), &mut first)?;
            }
            write_piece(out, &shown, &mut first)
        })();
        if let Err(e) = result {
            err = Some(e);
        }
        next_line = i + 1;
    };
    match &plan.spooled {
        Some(lines) => lines.for_each_line(plan.erased, &mut each)?,
        None => read::for_each_line(&plan.src, line_cap, plan.erased, &mut each),
    }
    if let Some(e) = err {
        return Err(e.into());
    }
    if !json && plan.lines > next_line && plan.keep.is_some() {
        write_piece(
            out,
            &format::gap_line((plan.lines - next_line) as usize),
            &mut first,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod stream_tests {
    use super::closes_fence;

    #[test]
    fn only_a_closing_fence_longer_than_the_digest_said_is_caught() {
        assert!(closes_fence("```", 0));
        assert!(closes_fence("   ````  ", 3));
        assert!(closes_fence("```\t", 2));
        assert!(!closes_fence("```", 3), "the fence is longer");
        assert!(
            !closes_fence("    ````", 0),
            "indented four spaces: code, no fence"
        );
        assert!(
            !closes_fence("```rust", 0),
            "an info string opens, never closes"
        );
        assert!(!closes_fence("a ```", 0));
        assert!(!closes_fence("", 0));
    }
}
