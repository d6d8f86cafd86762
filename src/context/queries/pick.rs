//! The commands a person picks from (`omnish pick`): those a request selects, newest first,
//! each with its id, its command line and how it ended (redacted as a context document shows
//! them), and on request the last lines of its output (from its bounded digest).
//!
//! Selection is the pipeline's own (`select` with the request's filters and limit): a picker
//! lists exactly what `context` with the same options would show, unfolded.

use crate::context::model::Parts;
use crate::context::stages::read;
use crate::context::stages::redact;
use crate::context::stages::select::Candidate;
use crate::context::words::{self, Ending};
use crate::context::{Outcome, Request};
use crate::error::Result;

/// Chars of a command line shown in a list.
pub(crate) const LINE_WIDTH: usize = 200;
/// Chars of an output line shown under a command in a list.
pub(crate) const TAIL_WIDTH: usize = 120;

/// One command to pick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// `<session>:<seq>`.
    pub id: String,
    /// The command line, redacted, on one line (newlines and control characters visible).
    pub line: String,
    /// How it ended: `exit 0`, `exit 2`, `still running`, ...
    pub status: String,
    /// The last lines of its output (redacted, shortened), when asked for.
    pub tail: Vec<String>,
}

/// The commands `req` selects, newest first, with the last `tail_lines` lines of each output;
/// `outcome.nothing_matched` says when there are none.
pub(crate) fn list(req: &Request, tail_lines: usize) -> Result<(Vec<Entry>, Outcome)> {
    let mut outcome = Outcome::default();
    let sessions = req.sessions(&mut outcome.warnings)?;
    let picked = crate::context::pick(req, &sessions, &mut outcome)?;
    let outputs = tail_lines > 0 && req.parts != Parts::CommandsOnly;
    let (redactors, _) = match req.redact {
        true => {
            let (r, early) = redact::session::learn(&picked, false);
            (Some(r), early)
        }
        false => (None, Vec::new()),
    };
    let mut entries = Vec::with_capacity(picked.len());
    for c in picked.iter().rev() {
        let redactor = redactors.as_ref().map(|r| r.get(&c.session_dir));
        let ctx = crate::context::base_context(c, redactor.as_deref());
        let line = crate::term::visible::line(&ctx.command_line);
        let line = crate::context::stages::truncate::shorten(&line, 0, "", LINE_WIDTH);
        let mut tail = Vec::new();
        if outputs && !c.record.private {
            tail = output_tail(c, tail_lines, redactor.as_deref());
        }
        entries.push(Entry {
            id: c.record.command_id.clone(),
            line,
            status: words::status(ending(c)),
            tail,
        });
    }
    Ok((entries, outcome))
}

fn ending(c: &Candidate) -> Ending {
    Ending {
        running: c.running,
        recording_stopped: c.record.recording_stopped,
        exit_code: (!c.running && !c.cut_off)
            .then_some(c.record.exit_code)
            .flatten(),
        ended_shell: c.ended_shell,
    }
}

/// The last `n` non-empty lines of `c`'s output, from its digest (its note when not text).
fn output_tail(c: &Candidate, n: usize, redactor: Option<&redact::Redactor>) -> Vec<String> {
    let d = read::cached_digest(c);
    if let Some(note) = d.note() {
        return vec![note];
    }
    let mut out: Vec<String> = d
        .tail
        .iter()
        .rev()
        .filter(|l| !(l.head.trim().is_empty() && l.tail.trim().is_empty()))
        .take(n)
        .map(|l| {
            let shown = crate::context::show_line(
                &l.head,
                l.omitted,
                &l.tail,
                l.key_block,
                TAIL_WIDTH,
                redactor,
            );
            crate::term::visible::line(&shown).into_owned()
        })
        .collect();
    out.reverse();
    out
}
