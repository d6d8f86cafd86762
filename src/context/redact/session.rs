//! The pipeline's side of session learning: one [`Redactor`] per session, taught from what the
//! pipeline can read cheaply.
//!
//! * Command lines: the newest [`LEARN_RECORDS`] records of the session's `commands.jsonl`, read
//!   backwards (a few hundred bytes each), plus the selected commands (the running one has no
//!   record yet). So `export DB_PASSWORD=…` typed before the selected commands teaches the
//!   password even when its command is not shown.
//! * Output: the lines of the selected commands' digests ([`Digest`]: head, tail and error
//!   lines, each at most [`crate::context::read::LINE_CAP`] chars), which the pipeline reads
//!   anyway; a whole output is never loaded. A secret printed in the middle of a long output
//!   that no digest keeps is still redacted there by the detectors, but not learned.
//!
//! Learning never crosses sessions: a value is a secret in the session that showed it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Redactor;
use crate::context::read::{Digest, StoredLine};
use crate::context::select::Candidate;
use crate::store;

/// Records read back from the end of a session's `commands.jsonl` to learn from.
pub(crate) const LEARN_RECORDS: usize = 10_000;

/// The redactor of each session a selection covers.
#[derive(Debug, Default)]
pub(crate) struct Redactors {
    by_session: HashMap<PathBuf, Redactor>,
}

impl Redactors {
    /// Redactors for the sessions of `picked`, taught from their command lines.
    pub fn learn_commands(picked: &[Candidate]) -> Redactors {
        let mut by_session: HashMap<PathBuf, Redactor> = HashMap::new();
        for c in picked {
            let r = by_session.entry(c.session_dir.clone()).or_insert_with(|| {
                let mut r = Redactor::new();
                learn_records(&c.session_dir, &mut r);
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

/// Learns from the newest [`LEARN_RECORDS`] command lines of the session in `dir`. A session
/// whose records cannot be read teaches nothing (the detectors still run).
fn learn_records(dir: &Path, r: &mut Redactor) {
    let Ok(mut scan) = store::RecordsBackwards::open(&dir.join(store::COMMANDS)) else {
        return;
    };
    for _ in 0..LEARN_RECORDS {
        let Some(rec) = scan.next_record() else {
            break;
        };
        if !rec.private {
            r.learn(&rec.command_line);
        }
    }
}
