//! The pipeline's side of session learning: one [`Redactor`] per session, taught from what the
//! pipeline can read cheaply.
//!
//! * Command lines: the newest [`LEARN_RECORDS`] records of the session's `commands.jsonl`, read
//!   backwards (a few hundred bytes each), plus the selected commands (the running one has no
//!   record yet). So `export DB_PASSWORD=…` typed before the selected commands teaches the
//!   password even when its command is not shown.
//! * Output: the lines of the selected commands' digests ([`Digest`]: head, tail and error
//!   lines, each at most [`crate::context::stages::read::LINE_CAP`] chars), which the pipeline reads
//!   anyway; and, in a bounded pass, the digests of the newest [`LEARN_OUTPUTS`] other commands
//!   of the session whose output is at most [`LEARN_OUTPUT_BYTES`] long (`cat .env`, `printenv`,
//!   `aws configure get …`: the short outputs that print credentials). A whole output is never
//!   loaded. A secret printed in the middle of a long output that no digest keeps, or by an
//!   older command, is still redacted there by the detectors, but not learned.
//!
//! Learning never crosses sessions: a value is a secret in the session that showed it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Redactor;
use crate::context::stages::read::{self, Digest, StoredLine};
use crate::context::stages::select::Candidate;
use crate::context::support::parallel;
use crate::store;

/// Records read back from the end of a session's `commands.jsonl` to learn from.
pub(crate) const LEARN_RECORDS: usize = 2_000;
/// Of those, the newest commands not selected whose output is also read.
pub(crate) const LEARN_OUTPUTS: usize = 16;
/// The longest output (recorded bytes) read by that pass.
pub(crate) const LEARN_OUTPUT_BYTES: u64 = 16 * 1024;

/// Redactors for the sessions of `picked`, taught from their command lines and (when
/// `outputs`) from the digests of their outputs. The digests read here are handed back, by
/// index into `picked`, for the pipeline to use, while they hold at most [`LEARN_KEPT_BYTES`];
/// the rest it reads again (from their cache, or by rendering a short output again).
pub(crate) fn learn(picked: &[Candidate], outputs: bool) -> (SharedRedactors, Vec<Option<Digest>>) {
    let mut redactors = Redactors::learn_commands(picked);
    let mut early = Vec::new();
    if outputs {
        let mut kept = 0usize;
        // Big outputs are read several at once (a first call over huge outputs).
        let is_big = |c: &Candidate| {
            !c.record.private && c.record.stream_length >= parallel::BIG_OUTPUT_BYTES
        };
        for range in parallel::batches(picked, is_big) {
            let chunk = &picked[range];
            let digests = parallel::map(chunk, is_big, |c| {
                (!c.record.private).then(|| read::cached_digest(c))
            });
            for (c, d) in chunk.iter().zip(digests) {
                let Some(d) = d else {
                    early.push(None);
                    continue;
                };
                redactors.learn_output(c, &d);
                let size = digest_bytes(&d);
                if kept + size <= LEARN_KEPT_BYTES {
                    kept += size;
                    early.push(Some(d));
                } else {
                    early.push(None);
                }
            }
        }
    }
    (redactors.into_shared(), early)
}

/// Digests kept in memory between learning and rendering, in bytes of line text.
pub(crate) const LEARN_KEPT_BYTES: usize = 32 << 20;

fn digest_bytes(d: &Digest) -> usize {
    let line = |l: &StoredLine| l.head.len() + l.tail.len() + 64;
    d.head.iter().chain(&d.tail).map(line).sum::<usize>()
        + d.errors.iter().map(|(_, l)| line(l)).sum::<usize>()
}

/// The redactor of each session a selection covers.
#[derive(Debug, Default)]
pub(crate) struct Redactors {
    by_session: HashMap<PathBuf, Redactor>,
}

impl Redactors {
    /// Redactors for the sessions of `picked`, taught from their command lines and from the
    /// short outputs of recent commands that are not picked (their outputs are learned by
    /// [`Redactors::learn_output`]).
    pub fn learn_commands(picked: &[Candidate]) -> Redactors {
        let mut by_session: HashMap<PathBuf, Redactor> = HashMap::new();
        for c in picked {
            let r = by_session.entry(c.session_dir.clone()).or_insert_with(|| {
                let mut r = Redactor::new();
                learn_records(c, picked, &mut r);
                r
            });
            if !c.record.private {
                r.learn(&c.record.command_line);
            }
        }
        Redactors { by_session }
    }

    /// Teaches `c`'s session the secrets in the lines of its output's digest.
    pub fn learn_output(&mut self, c: &Candidate, d: &Digest) {
        if d.note().is_some() {
            return;
        }
        let r = self.by_session.entry(c.session_dir.clone()).or_default();
        let lines = d
            .head
            .iter()
            .chain(&d.tail)
            .chain(d.errors.iter().map(|(_, l)| l));
        for l in lines {
            learn_line(r, l);
        }
    }

    /// The redactors, shareable by the commands of each session.
    pub fn into_shared(self) -> SharedRedactors {
        SharedRedactors {
            by_session: self
                .by_session
                .into_iter()
                .map(|(k, v)| (k, Arc::new(v)))
                .collect(),
            empty: Arc::new(Redactor::new()),
        }
    }
}

/// [`Redactors`] once learning is over.
#[derive(Debug, Clone)]
pub(crate) struct SharedRedactors {
    by_session: HashMap<PathBuf, Arc<Redactor>>,
    empty: Arc<Redactor>,
}

impl SharedRedactors {
    /// The redactor of the session in `session_dir`.
    pub fn get(&self, session_dir: &Path) -> Arc<Redactor> {
        self.by_session
            .get(session_dir)
            .unwrap_or(&self.empty)
            .clone()
    }
}

fn learn_line(r: &mut Redactor, l: &StoredLine) {
    if l.key_block {
        return;
    }
    r.learn(&l.head);
    if l.omitted > 0 || !l.tail.is_empty() {
        r.learn(&l.tail);
    }
}

/// Learns from the newest [`LEARN_RECORDS`] command lines of the session of `c`, and from the
/// short outputs of the newest [`LEARN_OUTPUTS`] of them that are not in `picked`. A session
/// whose records cannot be read teaches nothing (the detectors still run).
fn learn_records(c: &Candidate, picked: &[Candidate], r: &mut Redactor) {
    let dir = &c.session_dir;
    let Ok(mut scan) = store::RecordsBackwards::open(&dir.join(store::COMMANDS)) else {
        return;
    };
    let mut outputs = 0;
    for _ in 0..LEARN_RECORDS {
        let Some(rec) = scan.next_record() else {
            break;
        };
        if rec.private {
            continue;
        }
        r.learn(&rec.command_line);
        let shown = picked
            .iter()
            .any(|p| p.session_dir == *dir && p.record.seq == rec.seq);
        if outputs < LEARN_OUTPUTS && !shown && rec.stream_length <= LEARN_OUTPUT_BYTES {
            outputs += 1;
            let other = Candidate::new(rec, dir.clone(), c.rows);
            let d = read::cached_digest(&other);
            if d.note().is_none() {
                for l in d.head.iter().chain(&d.tail) {
                    learn_line(r, l);
                }
            }
        }
    }
}
