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
//! What a session taught is kept beside it (`cache/learned.bin`, see [`session_values`]): the
//! values, and how much of `commands.jsonl` they cover. The next call learns only from the
//! records appended since, so what learning costs follows what is new, not how long the session
//! is. The first call on a session learns as above (the newest records, backwards) and starts the
//! cache.
//!
//! A value learned in one session protects the others: each session's redactor also holds what
//! the [`SHARED_SESSIONS`] newest sessions of the store taught, each brought up to date the same
//! way (a session nobody asked about yet is learned from on the first call that reads it, and
//! its cache started; a finished session whose cache covers it costs the cache's read).

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
/// Sessions (the newest of the store) whose learned values every redactor also holds.
pub(crate) const SHARED_SESSIONS: usize = 32;
/// Bump when what is learned from a record changes (the detectors, [`super::learn::learnable`]).
const LEARNED_VERSION: u32 = 1;
/// The file of a session's learned values, in its cache directory.
const LEARNED_FILE: &str = "learned.bin";

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
        let mut shared: Option<Vec<(PathBuf, Vec<String>)>> = None;
        for c in picked {
            let r = by_session.entry(c.session_dir.clone()).or_insert_with(|| {
                let shared = shared.get_or_insert_with(|| shared_values(&c.session_dir, c.rows));
                // Its own values first (they are kept when the values held reach their cap):
                // learned with the others when it is one of the newest.
                let own = match shared.iter().find(|(dir, _)| *dir == c.session_dir) {
                    Some((_, values)) => values.clone(),
                    None => session_values(&c.session_dir, c.rows),
                };
                let mut r = Redactor::new();
                for v in own
                    .iter()
                    .chain(shared.iter().flat_map(|(_, values)| values))
                {
                    r.add_value(v);
                }
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

/// The values the session in `dir` taught: those cached beside it, plus what the records
/// appended since teach (their command lines, and the short outputs of the newest
/// [`LEARN_OUTPUTS`] of them, their digests rendered `rows` high); on a first call, what the
/// newest [`LEARN_RECORDS`] records teach (read backwards). The cache is brought up to date
/// (best effort: a store that cannot be written learns again next time).
fn session_values(dir: &Path, rows: u16) -> Vec<String> {
    let path = dir.join(store::COMMANDS);
    let cache = store::cache::dir(dir).join(LEARNED_FILE);
    let key = LEARNED_VERSION;
    // The cache directory read from (see the save below), before reading it.
    let before = store::cache::identity(dir, false);
    let cached: Option<(u64, Vec<String>)> = store::cache::load(&cache, &key);
    let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let cached = match cached {
        // Nothing appended since (every call but the first on a finished session).
        Some((covered, values)) if covered == len => return values,
        // No command yet (or no session here): nothing to learn, no cache to start.
        None if len == 0 => return Vec::new(),
        cached => cached,
    };
    // No cache directory yet: nothing was read from one, so the one made now is the one.
    let before = before.or_else(|| store::cache::identity(dir, true));
    let mut r = Redactor::new();
    let covered = match cached {
        Some((covered, values)) if covered < len => {
            for v in &values {
                r.add_value(v);
            }
            let mut new = store::Records::<store::CommandRecord>::open_at(&path, covered);
            let mut short = std::collections::VecDeque::new();
            for rec in new.by_ref().take(LEARN_RECORDS) {
                if rec.private {
                    continue;
                }
                r.learn(&rec.command_line);
                if rec.stream_length <= LEARN_OUTPUT_BYTES {
                    if short.len() == LEARN_OUTPUTS {
                        short.pop_front();
                    }
                    short.push_back(rec);
                }
            }
            for rec in short {
                learn_output_of(rec, dir, rows, &mut r);
            }
            new.complete_to()
        }
        _ => learn_newest(dir, rows, &path, &mut r),
    };
    let values = r.values();
    // Kept only in the cache directory learning started with (see `store::cache::identity`):
    // never values learned from what a concurrent `omnish forget` destroyed.
    if before.is_some() && store::cache::identity(dir, false) == before {
        let _ = store::cache::save(dir, &cache, &key, &(covered, &values));
    }
    values
}

/// Learns from the newest [`LEARN_RECORDS`] command lines of the session in `dir`, read
/// backwards, and from the short outputs of the newest [`LEARN_OUTPUTS`] of them; returns where
/// the complete lines it covers end.
fn learn_newest(dir: &Path, rows: u16, path: &Path, r: &mut Redactor) -> u64 {
    let covered = complete_end(path);
    let Ok(mut scan) = store::RecordsBackwards::open(path) else {
        return 0;
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
        if outputs < LEARN_OUTPUTS && rec.stream_length <= LEARN_OUTPUT_BYTES {
            outputs += 1;
            learn_output_of(rec, dir, rows, r);
        }
    }
    covered
}

/// Learns from the digest of `rec`'s output (a command of the session in `dir`).
fn learn_output_of(rec: store::CommandRecord, dir: &Path, rows: u16, r: &mut Redactor) {
    let other = Candidate::new(rec, dir.to_path_buf(), rows);
    let d = read::cached_digest(&other);
    if d.note().is_none() {
        for l in d.head.iter().chain(&d.tail) {
            learn_line(r, l);
        }
    }
}

/// Where the last complete line of `path` ends (just past its newline): what a read of the file
/// from its end covers, a record being written left out.
fn complete_end(path: &Path) -> u64 {
    use std::os::unix::fs::FileExt;
    let Ok(file) = store::open::open_regular(path) else {
        return 0;
    };
    let mut end = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut block = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let part = &mut block[..(end - start) as usize];
        if file.read_exact_at(part, start).is_err() {
            return 0;
        }
        if let Some(i) = memchr::memrchr(b'\n', part) {
            return start + i as u64 + 1;
        }
        end = start;
    }
    0
}

/// What each of the [`SHARED_SESSIONS`] newest sessions of the store that holds `session_dir`
/// taught ([`session_values`] of each: its cache, brought up to date or started), by directory.
fn shared_values(session_dir: &Path, rows: u16) -> Vec<(PathBuf, Vec<String>)> {
    let Some(sessions) = session_dir.parent() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(sessions) else {
        return Vec::new();
    };
    let mut ids: Vec<std::ffi::OsString> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| n.to_str().is_some_and(store::is_session_id))
        .collect();
    ids.sort_unstable_by(|a, b| b.cmp(a));
    ids.into_iter()
        .take(SHARED_SESSIONS)
        .map(|id| {
            let dir = sessions.join(id);
            let values = session_values(&dir, rows);
            (dir, values)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::command_record;

    #[test]
    fn learning_is_kept_only_in_the_cache_directory_it_started_with() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("20250615T150640.000Z-a6978e");
        std::fs::create_dir(&dir).unwrap();
        assert!(session_values(&dir, 24).is_empty());
        assert!(
            !store::cache::dir(&dir).exists(),
            "no command: no cache started"
        );
        let secret = ["S3cr3t", "-Pa55", "w0rd!x"].concat();
        let rec = store::CommandRecord {
            command_line: format!("export DB_PASSWORD='{secret}'"),
            ..command_record("s", 1)
        };
        let line = serde_json::to_string(&rec).unwrap() + "\n";
        std::fs::write(dir.join(store::COMMANDS), line).unwrap();
        assert_eq!(session_values(&dir, 24), std::slice::from_ref(&secret));
        let cache = store::cache::dir(&dir).join(LEARNED_FILE);
        assert!(cache.exists(), "learned and kept");
        // `omnish forget` removes the directory; one made again is another.
        let before = store::cache::identity(&dir, false).unwrap();
        std::fs::remove_dir_all(store::cache::dir(&dir)).unwrap();
        assert_eq!(store::cache::identity(&dir, false), None);
        let again = store::cache::identity(&dir, true).unwrap();
        assert_ne!(again, before);
        assert_eq!(
            store::cache::identity(&dir, false),
            Some(again),
            "stable while untouched"
        );
    }
}
