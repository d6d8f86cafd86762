//! Learning in one pass per output, on the workers, and what it leaves for writing.
//!
//! A session's redactor is taught from the lines of its outputs' digests (head, tail, error
//! lines: [`crate::context::stages::redact::session`]), in command order, before anything is
//! written. Teaching a line runs the detectors over it ([`Redactor::learn`]), and an output
//! line holding no secret the detectors see teaches nothing. So each output is rendered on a
//! worker ([`scan`]) with the detectors run over every line there; the calling thread is
//! handed only the digest lines with a finding, and teaches its redactor those, in order: the
//! same values, in the same order, as teaching every digest line, for a fraction of the work
//! on the one thread that must do it in order.
//!
//! The lines with a finding are kept ([`Known`], up to [`MAX_HITS`] per output): when the
//! output is written, a line the detectors found nothing in, and in which no value the session
//! learned occurs, is written as it is, without running the detectors over it again (they
//! would find nothing: [`Redactor::find_secrets`] is the detectors' findings and the learned
//! values' occurrences, nothing else). A line is checked in full when that cannot be known:
//! longer than the lines learning saw ([`LINE_CAP`] chars, kept there as head and tail), in an
//! output with more than [`MAX_HITS`] lines with findings, or when the learned values cannot
//! be matched at once. So the detectors run once over each line, not twice, and memory stays
//! bounded: a few KiB per output.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::context::stages::read::{self, Digest, LINE_CAP, StoredLine};
use crate::context::stages::redact::{self, Redactor};
use crate::context::stages::select::Candidate;
use crate::term::render::{Line, LineSink};

use super::spool::{Spool, Spooled};

/// Line numbers with a finding kept per output at most; past that every line of the output
/// is checked in full when written.
pub(crate) const MAX_HITS: usize = 4096;

/// What a worker made of one output while learning.
pub(crate) struct Found {
    /// Its digest without its lines ([`super::slim`]).
    pub shape: Digest,
    /// The digest lines (head, tail, error lines, in that order) the detectors found something
    /// in: what teaching the whole digest would teach.
    pub learn: Vec<StoredLine>,
    /// The numbers of the lines with a finding (as the digest numbers them), ascending; `None`
    /// when there were more than [`MAX_HITS`], or when the digest was not rendered.
    pub hits: Option<Vec<u64>>,
    /// Its lines, whole, when spooled.
    pub spooled: Option<Spooled>,
}

/// What learning keeps of each output for writing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Its lines as a renderer with this line cap renders them (whole up to it, head and
    /// tail past it: what the writer renders at that cap), spooled (markdown, json), and the
    /// lines the detectors found something in.
    Lines(usize),
    /// Nothing: the writer reads the output and checks every line itself (HTML and
    /// asciicast, whose writers render the recorded bytes their own way). Only the digest's
    /// lines are checked here, to learn from.
    Nothing,
}

/// Renders `c`'s output once (its digest cached as [`read::cached_digest`] caches it), running
/// the detectors over every line; or, when its digest is cached and there is no `spool`, over
/// the digest's lines only. With a `spool`, a finished output's lines are also rendered at
/// the line cap [`Keep::Lines`] says and kept there for writing ([`super::spool`]), in the
/// same pass, a line longer than that cap too. With
/// [`Keep::Nothing`], only the digest's lines are checked (the writer checks every line it
/// writes: what the detectors find in the other lines here would never be looked up).
pub(crate) fn scan(c: &Candidate, spool: Option<&Arc<Spool>>, keep: Keep) -> Found {
    let finished = !c.open_ended() && !c.record.recording_stopped;
    let mut spooled = None;
    let (d, hits) = match keep {
        Keep::Nothing => (read::cached_digest(c), None),
        Keep::Lines(whole) => match (spool, read::digest_if_cached(c)) {
            (None, Some(d)) => (d, None),
            (Some(spool), _) if finished && whole >= LINE_CAP => {
                let mut lines = Findings::default();
                let mut writer = super::spool::Writer::new(spool);
                let mut both = Pair(&mut lines, &mut writer);
                match read::digest_and_whole_lines(c, whole, &mut both) {
                    Some(d) => {
                        spooled = writer.finish();
                        (d, (!lines.dense).then_some(lines.hits))
                    }
                    None => rendered(c),
                }
            }
            _ => rendered(c),
        },
    };
    let hits_of = |i: u64, l: &StoredLine| match &hits {
        // A line the digest keeps as head and tail: learning saw it whole.
        Some(h) if l.omitted == 0 && l.tail.is_empty() => h.binary_search(&i).is_ok(),
        _ => has_secret(&l.head) || has_secret(&l.tail),
    };
    let learn = if d.note().is_some() {
        Vec::new()
    } else {
        let tail_start = d.lines - d.tail.len() as u64;
        let numbered = (d.head.iter().enumerate().map(|(i, l)| (i as u64, l)))
            .chain(
                d.tail
                    .iter()
                    .enumerate()
                    .map(|(k, l)| (tail_start + k as u64, l)),
            )
            .chain(d.errors.iter().map(|(i, l)| (*i, l)));
        numbered
            .filter(|(i, l)| !l.key_block && hits_of(*i, l))
            .map(|(_, l)| l.clone())
            .collect()
    };
    Found {
        shape: super::slim(d),
        learn,
        hits,
        spooled,
    }
}

/// The digest of `c` rendered (at the digest's line cap), with the lines with findings.
fn rendered(c: &Candidate) -> (Digest, Option<Vec<u64>>) {
    let mut lines = Findings::default();
    let d = read::digest_and_lines(c, &mut lines);
    (d, (!lines.dense).then_some(lines.hits))
}

/// Hands every line to two sinks.
struct Pair<'a>(&'a mut dyn LineSink, &'a mut dyn LineSink);

impl LineSink for Pair<'_> {
    fn line(&mut self, line: Line<'_>) {
        self.0.line(Line {
            head: line.head,
            omitted: line.omitted,
            tail: line.tail,
        });
        self.1.line(line);
    }
    fn erase_scrollback(&mut self) {
        self.0.erase_scrollback();
        self.1.erase_scrollback();
    }
}

/// A digest holding `lines` as its head and nothing else: teaching it teaches those lines.
pub(crate) fn digest_of(lines: Vec<StoredLine>) -> Digest {
    Digest {
        lines: lines.len() as u64,
        head: lines,
        tail: Vec::new(),
        errors: Vec::new(),
        errors_full: false,
        kind: read::OutputKind::Text,
        hash: 0,
        backticks: 0,
        bytes: 0,
        erased: 0,
        caps: read::Caps::STANDARD,
    }
}

/// Whether the detectors find anything in `s`.
fn has_secret(s: &str) -> bool {
    !s.is_empty() && !redact::find_secrets(s).is_empty()
}

/// The numbers of the lines the detectors found something in.
#[derive(Default)]
struct Findings {
    /// The next line's number (reset by an erase of the scrollback, as the digest's).
    next: u64,
    hits: Vec<u64>,
    /// More than [`MAX_HITS`] lines with findings: no more are looked for.
    dense: bool,
}

impl LineSink for Findings {
    fn line(&mut self, line: Line<'_>) {
        let i = self.next;
        self.next += 1;
        // A line longer than learning's line cap is checked in full when written
        // ([`Known::may_hold_secret`]), and the digest keeps it as head and tail, checked
        // apart when taught: what the detectors find in it whole is never looked up.
        if self.dense || line.omitted > 0 || !line.tail.is_empty() || over_cap(line.head) {
            return;
        }
        if has_secret(line.head) || has_secret(line.tail) {
            if self.hits.len() == MAX_HITS {
                self.dense = true;
                self.hits = Vec::new();
                return;
            }
            self.hits.push(i);
        }
    }

    fn erase_scrollback(&mut self) {
        *self = Findings::default();
    }
}

/// What writing a finished output needs to know to skip checking a line (see the module
/// docs).
#[derive(Debug)]
pub(crate) struct Known {
    hits: Vec<u64>,
    values: Arc<Values>,
}

/// The values a session's redactor learned, matched at once.
#[derive(Debug)]
pub(crate) enum Values {
    None,
    Some(regex::Regex),
    /// Too many to match at once: every line is checked.
    Unknown,
}

impl Values {
    fn of(r: &Redactor) -> Values {
        let values = r.values();
        if values.is_empty() {
            return Values::None;
        }
        let alternation = values
            .iter()
            .map(|v| regex::escape(v))
            .collect::<Vec<_>>()
            .join("|");
        match regex::Regex::new(&alternation) {
            Ok(re) => Values::Some(re),
            Err(_) => Values::Unknown,
        }
    }

    fn may_occur_in(&self, s: &str) -> bool {
        match self {
            Values::None => false,
            Values::Some(re) => re.is_match(s),
            Values::Unknown => true,
        }
    }
}

/// The matcher of each session's learned values, built once per session.
#[derive(Default)]
pub(crate) struct ValuesBySession(HashMap<PathBuf, Arc<Values>>);

impl ValuesBySession {
    /// What writing `c`'s output needs to skip lines, when learning `hits` them.
    pub(crate) fn known(
        &mut self,
        c: &Candidate,
        redactor: &Redactor,
        hits: Option<Vec<u64>>,
    ) -> Option<Arc<Known>> {
        // A command still running (or whose recording stopped) may have more of its last
        // line by the time it is written than learning saw.
        if c.open_ended() || c.record.recording_stopped {
            return None;
        }
        let hits = hits?;
        let values = self
            .0
            .entry(c.session_dir.clone())
            .or_insert_with(|| Arc::new(Values::of(redactor)))
            .clone();
        Some(Arc::new(Known { hits, values }))
    }
}

impl Known {
    /// Whether line `i` (as the digest numbers it; `head`, `omitted` and `tail` as the writer
    /// rendered it) may hold something the redactor replaces. `false`: redacting it changes
    /// nothing.
    pub(crate) fn may_hold_secret(&self, i: u64, head: &str, omitted: u64, tail: &str) -> bool {
        if omitted > 0 || !tail.is_empty() {
            return true;
        }
        // Learning saw the line whole when it was at most LINE_CAP chars.
        if over_cap(head) {
            return true;
        }
        self.hits.binary_search(&i).is_ok() || self.values.may_occur_in(head)
    }
}

/// Whether `s` has more than [`LINE_CAP`] chars (the digest keeps it as head and tail).
fn over_cap(s: &str) -> bool {
    // A char is at most 4 bytes.
    s.len() > LINE_CAP && (s.len() > 4 * LINE_CAP || s.chars().count() > LINE_CAP)
}
