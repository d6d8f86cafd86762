//! The rendered-text cache beside a session, for search: `cache/text-<version>.txt` holds the
//! rendered, redacted output lines of finished commands, one after another, each line ending in
//! `\n`; `cache/text-<version>.idx` says where each command's lines are, one fixed-size
//! [`Entry`] per command, appended after its text is on disk.
//!
//! Like every cache it is derived, never the source of truth: `<version>` names the renderer
//! and format that made it (files of any other version are deleted when the cache is next
//! written), each entry carries a key of the inputs it was made from (a reader ignores an entry
//! whose key differs), a torn last entry or text past the last entry is cut off before appending,
//! and deleting `cache/` is always safe. Writers hold `cache/text.lock` exclusively; readers only
//! read text an entry points at, which is never rewritten. Files are 0600 in a 0700 directory.

use crate::store;
use nix::fcntl::{Flock, FlockArg};
use std::fs::{self, File};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Bytes of one [`Entry`] in the index.
const ENTRY_LEN: usize = 40;

/// Where one command's text is: `len` bytes from `offset`, `lines` lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub seq: u64,
    /// A hash of the inputs the text was made from (see [`key`]).
    pub key: u64,
    pub offset: u64,
    pub len: u64,
    pub lines: u64,
}

impl Entry {
    fn encode(&self) -> [u8; ENTRY_LEN] {
        let mut b = [0u8; ENTRY_LEN];
        for (i, v) in [self.seq, self.key, self.offset, self.len, self.lines]
            .into_iter()
            .enumerate()
        {
            b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    fn decode(b: &[u8]) -> Entry {
        let v = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        Entry {
            seq: v(0),
            key: v(1),
            offset: v(2),
            len: v(3),
            lines: v(4),
        }
    }
}

/// A stable hash of the parts of a key (FNV-1a over each part and its length).
pub fn key(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in (p.len() as u64).to_le_bytes().iter().chain(p.iter()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// A session's text cache of one version.
#[derive(Debug, Clone)]
pub struct TextCache {
    session_dir: PathBuf,
    pub text: PathBuf,
    index: PathBuf,
    version: String,
}

impl TextCache {
    /// The cache of `session_dir` made by renderer version `version` (letters, digits, dots).
    pub fn new(session_dir: &Path, version: &str) -> TextCache {
        let dir = store::cache::dir(session_dir);
        TextCache {
            session_dir: session_dir.to_path_buf(),
            text: dir.join(format!("text-{version}.txt")),
            index: dir.join(format!("text-{version}.idx")),
            version: version.to_string(),
        }
    }

    /// The complete entries of the index (none when there is no cache, or when the index is
    /// not a regular file or is over [`store::open::TEXT_INDEX_CAP`], which is said once).
    pub fn entries(&self) -> Vec<Entry> {
        let bytes = match store::open::read_capped(&self.index, store::open::TEXT_INDEX_CAP) {
            Ok(b) => b,
            Err(e) => {
                if store::open::is_refused(&e) {
                    store::notice::skipped(&self.index, &e.to_string());
                }
                return Vec::new();
            }
        };
        bytes.chunks_exact(ENTRY_LEN).map(Entry::decode).collect()
    }

    /// Opens the cached text for reading (a regular file only; one refused is said once).
    pub fn open_text(&self) -> Option<File> {
        match store::open::open_regular(&self.text) {
            Ok(f) => Some(f),
            Err(e) => {
                if store::open::is_refused(&e) {
                    store::notice::skipped(&self.text, &e.to_string());
                }
                None
            }
        }
    }

    /// Opens the cache for appending, holding its lock until the [`Appender`] is dropped (a
    /// second writer waits). Text past the last entry and a torn last entry are cut off, and
    /// caches of other versions are deleted.
    pub fn append(&self) -> io::Result<Appender> {
        let dir = store::cache::dir(&self.session_dir);
        store::create_store_dir(&dir)?;
        let lock = store::open_private(&dir.join("text.lock"))?;
        let lock = Flock::lock(lock, FlockArg::LockExclusive)
            .map_err(|(_, e)| io::Error::other(format!("cannot lock the text cache: {e}")))?;
        if let Ok(rd) = fs::read_dir(&dir) {
            let ours = format!("text-{}.", self.version);
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with("text-") && !name.starts_with(&ours) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
        let index = store::open_private(&self.index)?;
        let size = index.metadata()?.len();
        // An index too large to be read is no use: start over.
        let size = if size > store::open::TEXT_INDEX_CAP {
            0
        } else {
            size
        };
        let whole = size / ENTRY_LEN as u64 * ENTRY_LEN as u64;
        index.set_len(whole)?;
        let end = self
            .entries()
            .iter()
            .map(|e| e.offset + e.len)
            .max()
            .unwrap_or(0);
        let mut text = store::open_private(&self.text)?;
        text.set_len(end)?;
        text.seek(SeekFrom::Start(end))?;
        let mut index = index;
        index.seek(SeekFrom::End(0))?;
        Ok(Appender {
            text: BufWriter::with_capacity(256 * 1024, text),
            index,
            pos: end,
            start: end,
            lines: 0,
            _lock: lock,
        })
    }
}

/// Appends commands' text to a [`TextCache`]: [`Appender::line`] for each line, then
/// [`Appender::commit`] (or [`Appender::restart`] to drop what this command wrote so far).
pub struct Appender {
    text: BufWriter<File>,
    index: File,
    pos: u64,
    start: u64,
    lines: u64,
    _lock: Flock<File>,
}

impl Appender {
    /// Adds a line (a `\n` inside it would split it, so it becomes a space).
    pub fn line(&mut self, line: &str) -> io::Result<()> {
        let bytes = line.as_bytes();
        if bytes.contains(&b'\n') {
            self.text.write_all(line.replace('\n', " ").as_bytes())?;
        } else {
            self.text.write_all(bytes)?;
        }
        self.text.write_all(b"\n")?;
        self.pos += bytes.len() as u64 + 1;
        self.lines += 1;
        Ok(())
    }

    /// Drops the lines written since the last commit.
    pub fn restart(&mut self) -> io::Result<()> {
        self.text.flush()?;
        let f = self.text.get_mut();
        f.set_len(self.start)?;
        f.seek(SeekFrom::Start(self.start))?;
        self.pos = self.start;
        self.lines = 0;
        Ok(())
    }

    /// Ends command `seq`'s text: once it is on disk, its entry is appended to the index.
    pub fn commit(&mut self, seq: u64, key: u64) -> io::Result<Entry> {
        self.text.flush()?;
        let e = Entry {
            seq,
            key,
            offset: self.start,
            len: self.pos - self.start,
            lines: self.lines,
        };
        self.index.write_all(&e.encode())?;
        self.start = self.pos;
        self.lines = 0;
        Ok(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn entries_point_at_their_text_and_torn_ends_are_cut() {
        let tmp = tempfile::tempdir().unwrap();
        let c = TextCache::new(tmp.path(), "2.1");
        assert!(c.entries().is_empty());
        {
            let mut a = c.append().unwrap();
            a.line("one").unwrap();
            a.line("two\nlines").unwrap();
            a.commit(1, 11).unwrap();
            a.line("dropped").unwrap();
            a.restart().unwrap();
            a.line("three").unwrap();
            a.commit(2, 22).unwrap();
            a.line("never committed").unwrap();
        }
        let e = c.entries();
        assert_eq!(e.len(), 2);
        let text = fs::read_to_string(&c.text).unwrap();
        let of = |e: &Entry| &text[e.offset as usize..(e.offset + e.len) as usize];
        assert_eq!(of(&e[0]), "one\ntwo lines\n");
        assert_eq!((e[0].seq, e[0].key, e[0].lines), (1, 11, 2));
        assert_eq!(of(&e[1]), "three\n");
        // A torn entry and uncommitted text are cut off by the next writer.
        fs::OpenOptions::new()
            .append(true)
            .open(tmp.path().join("cache/text-2.1.idx"))
            .unwrap()
            .write_all(b"torn")
            .unwrap();
        {
            let mut a = c.append().unwrap();
            a.line("four").unwrap();
            a.commit(3, 33).unwrap();
        }
        let e = c.entries();
        assert_eq!(e.len(), 3);
        let text = fs::read_to_string(&c.text).unwrap();
        assert_eq!(text, "one\ntwo lines\nthree\nfour\n");
        let mode = fs::metadata(&c.text).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Another version's files go when this one is written.
        let other = TextCache::new(tmp.path(), "3.1");
        drop(other.append().unwrap());
        assert!(!c.text.exists());
        assert_ne!(key(&[b"a", b"bc"]), key(&[b"ab", b"c"]));
    }
}
