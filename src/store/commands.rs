//! Reading `commands.jsonl`: forwards ([`Records`], [`read_commands`]) or from its end, newest
//! record first ([`RecordsBackwards`]), in blocks of 64 KiB either way.
//!
//! Both split the file into the same lines and take the same ones for records, so they always
//! agree (the `commands_backwards` fuzz target checks it):
//!
//! - a line of at most [`MAX_LINE`] bytes that parses is a record;
//! - a longer line (a NUL tail after a crash, a line written by something else) is skipped
//!   without being kept: memory stays within [`MAX_LINE`] plus a block, and every byte is
//!   looked at once, so a 200 MB line costs what reading 200 MB costs;
//! - a line that does not parse (invalid JSON or UTF-8, not a record) is skipped;
//! - the last line, when no newline ends it, is a record being written (a live session) or torn
//!   by a crash: skipped silently if it does not parse, unless it holds a NUL byte or is over
//!   the cap (which no write in progress does).
//!
//! The first skipped line of a file is said once ([`crate::store::notice`]). A file that cannot
//! be opened as a regular file ([`crate::store::open`]) holds no records, and says so.

use crate::store::{CommandRecord, notice, open};
use serde::de::DeserializeOwned;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek};
use std::marker::PhantomData;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The longest line taken for a record: 16 MiB (the recorder keeps at most about 1 MiB of a
/// command line, which JSON may escape to several times its size).
pub const MAX_LINE: usize = 16 << 20;

const BLOCK: usize = 64 * 1024;

/// One line of the file: its bytes (`None` when over the cap), where it starts, its length
/// and whether a newline ends it.
struct Line {
    bytes: Option<Vec<u8>>,
    at: u64,
    len: u64,
    complete: bool,
}

/// The record on `line`, or `None` (said once per file when the line is damaged).
fn record_of<T: DeserializeOwned>(path: &Path, line: Line) -> Option<T> {
    let Some(bytes) = line.bytes else {
        notice::skipped_part(
            path,
            &format!(
                "a damaged line of {} bytes at byte {} (over the {} MiB a command record may \
                 take), and any other damaged line in it",
                line.len,
                line.at,
                MAX_LINE >> 20
            ),
        );
        return None;
    };
    match serde_json::from_slice::<T>(&bytes) {
        Ok(r) => Some(r),
        Err(_) if bytes.iter().all(u8::is_ascii_whitespace) => None,
        // A record being appended, or torn by a crash: not damage.
        Err(_) if !line.complete && !bytes.contains(&0) => None,
        Err(e) => {
            let why = if bytes.contains(&0) {
                "it holds NUL bytes".to_string()
            } else {
                format!("not a command record: {e}")
            };
            notice::skipped_part(
                path,
                &format!(
                    "a damaged line at byte {} ({why}), and any other damaged line in it",
                    line.at
                ),
            );
            None
        }
    }
}

/// Opens `path` for reading: `None` when it does not exist, or when it cannot be read (said
/// once).
fn open_commands(path: &Path) -> Option<File> {
    match open::open_regular(path) {
        Ok(f) => Some(f),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            notice::skipped(path, &e.to_string());
            None
        }
    }
}

/// The records of `commands.jsonl`, oldest first: [`CommandRecord`]s, or only the fields a
/// reader needs (`T`, which then parses a record's other fields without keeping them).
pub struct Records<T = CommandRecord> {
    path: PathBuf,
    reader: Option<BufReader<File>>,
    /// Offset of the next byte.
    pos: u64,
    /// Offset just past the last complete line read (its newline).
    complete_to: u64,
    cap: usize,
    of: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> Records<T> {
    pub fn open(path: &Path) -> Records<T> {
        Records::with_cap(path, MAX_LINE)
    }

    fn with_cap(path: &Path, cap: usize) -> Records<T> {
        Records {
            path: path.to_path_buf(),
            reader: open_commands(path).map(|f| BufReader::with_capacity(BLOCK, f)),
            pos: 0,
            complete_to: 0,
            cap,
            of: PhantomData,
        }
    }

    /// The records from byte `offset` on, which must be where a line starts (where
    /// [`Records::complete_to`] said a read stopped): what was appended since.
    pub fn open_at(path: &Path, offset: u64) -> Records<T> {
        let mut r = Records::with_cap(path, MAX_LINE);
        if let Some(reader) = r.reader.as_mut() {
            if let Err(e) = reader.seek(io::SeekFrom::Start(offset)) {
                r.fail(e);
            }
        }
        r.pos = offset;
        r.complete_to = offset;
        r
    }

    /// Where the lines read so far end: just past the last newline read. A last line without
    /// one (a record being written) is not counted, so reading again from here reads it whole.
    pub fn complete_to(&self) -> u64 {
        self.complete_to
    }

    /// The next line, `None` at the end of the file (or at a read error, said once). A line
    /// longer than a block is not gathered: it is read again whole once its end is found (and
    /// only if it is within the cap).
    fn next_line(&mut self) -> Option<Line> {
        let reader = self.reader.as_mut()?;
        let at = self.pos;
        let mut bytes = Some(Vec::new());
        let mut len = 0u64;
        let complete = loop {
            let chunk = match reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.fail(e);
                    return None;
                }
            };
            if chunk.is_empty() {
                // The end of the file: a last line without a newline, or nothing.
                if len == 0 {
                    self.reader = None;
                    return None;
                }
                break false;
            }
            let (part, used, done) = match memchr::memchr(b'\n', chunk) {
                Some(nl) => (&chunk[..nl], nl + 1, true),
                None => (chunk, chunk.len(), false),
            };
            len += part.len() as u64;
            if len > BLOCK as u64 {
                bytes = None;
            }
            if let Some(b) = bytes.as_mut() {
                b.extend_from_slice(part);
            }
            reader.consume(used);
            self.pos += used as u64;
            if done {
                break true;
            }
        };
        if len > self.cap as u64 {
            bytes = None;
        } else if bytes.is_none() {
            let mut b = vec![0u8; len as usize];
            if let Err(e) = reader.get_ref().read_exact_at(&mut b, at) {
                self.fail(e);
                return None;
            }
            bytes = Some(b);
        }
        if complete {
            self.complete_to = self.pos;
        } else {
            self.reader = None;
        }
        Some(Line {
            bytes,
            at,
            len,
            complete,
        })
    }

    fn fail(&mut self, e: io::Error) {
        notice::skipped_part(&self.path, &format!("the rest, which cannot be read: {e}"));
        self.reader = None;
    }
}

impl<T: DeserializeOwned> Iterator for Records<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        loop {
            let line = self.next_line()?;
            if let Some(r) = record_of(&self.path, line) {
                return Some(r);
            }
        }
    }
}

/// All records of a session (`dir/commands.jsonl`), oldest first; damaged lines are skipped
/// (see the module docs). Memory grows with the records, each at most [`MAX_LINE`]: for
/// tests and tools; readers of a whole session use [`Records`] or [`RecordsBackwards`].
pub fn read_commands(dir: &Path) -> io::Result<Vec<CommandRecord>> {
    Ok(Records::<CommandRecord>::open(&dir.join(crate::store::COMMANDS)).collect())
}

/// Reads `commands.jsonl` from its end, one record at a time, in blocks: the cost grows with
/// the records read, never with the size of the file. A line longer than a block is read again
/// whole once its start is found, so it is held once, not in pieces.
pub struct RecordsBackwards {
    path: PathBuf,
    file: Option<File>,
    /// The block read last (from `block_at` in the file), of which the first `upto` bytes are
    /// not yet consumed.
    block: Vec<u8>,
    block_at: u64,
    upto: usize,
    /// Bytes of the current line already passed (after `upto`, up to its newline).
    len: u64,
    /// No line has been handed out yet: the next one is the file's last.
    last: bool,
    /// The file's length when it was opened.
    end: u64,
    cap: usize,
}

impl RecordsBackwards {
    /// Opens `path`; a missing file, or one that cannot be read as a regular file (said once),
    /// holds no records.
    pub fn open(path: &Path) -> anyhow::Result<RecordsBackwards> {
        Ok(RecordsBackwards::with_cap(path, MAX_LINE))
    }

    fn with_cap(path: &Path, cap: usize) -> RecordsBackwards {
        let file = open_commands(path);
        let end = file
            .as_ref()
            .and_then(|f| f.metadata().ok())
            .map_or(0, |m| m.len());
        RecordsBackwards {
            path: path.to_path_buf(),
            file,
            block: Vec::new(),
            block_at: end,
            upto: 0,
            len: 0,
            last: true,
            end,
            cap,
        }
    }

    /// The line of `len` bytes from `at`: its bytes are those of the current block from
    /// `in_block` when it lies within it, else read again from the file (none over the cap).
    fn take_line(&mut self, at: u64, len: u64, in_block: Option<usize>) -> Option<Line> {
        let complete = !std::mem::replace(&mut self.last, false);
        self.len = 0;
        let bytes = if len > self.cap as u64 {
            None
        } else if let Some(from) = in_block {
            Some(self.block[from..from + len as usize].to_vec())
        } else {
            let mut b = vec![0u8; len as usize];
            let file = self.file.as_ref()?;
            if let Err(e) = file.read_exact_at(&mut b, at) {
                self.fail(e);
                return None;
            }
            Some(b)
        };
        Some(Line {
            bytes,
            at,
            len,
            complete,
        })
    }

    fn fail(&mut self, e: io::Error) {
        notice::skipped_part(&self.path, &format!("the rest, which cannot be read: {e}"));
        self.file = None;
        self.block.clear();
        self.block_at = 0;
        self.upto = 0;
    }

    /// The previous line, newest first; `None` at the start of the file.
    fn next_line(&mut self) -> Option<Line> {
        loop {
            if let Some(nl) = memchr::memrchr(b'\n', &self.block[..self.upto]) {
                let in_block = (self.len == 0).then_some(nl + 1);
                let len = self.len + (self.upto - nl - 1) as u64;
                self.upto = nl;
                let at = self.block_at + nl as u64 + 1;
                // The newline that ends the file does not start an empty last line.
                if self.last && len == 0 && at == self.end {
                    self.last = false;
                    continue;
                }
                return self.take_line(at, len, in_block);
            }
            let in_block = (self.len == 0).then_some(0);
            self.len += self.upto as u64;
            self.upto = 0;
            if self.block_at == 0 {
                if self.len == 0 {
                    return None;
                }
                let len = self.len;
                return self.take_line(0, len, in_block);
            }
            let start = self.block_at.saturating_sub(BLOCK as u64);
            let size = (self.block_at - start) as usize;
            self.block.resize(size, 0);
            let read = match self.file.as_ref() {
                Some(f) => f.read_exact_at(&mut self.block, start),
                None => return None,
            };
            if let Err(e) = read {
                self.fail(e);
                return None;
            }
            self.block_at = start;
            self.upto = size;
        }
    }

    pub fn next_record(&mut self) -> Option<CommandRecord> {
        loop {
            let line = self.next_line()?;
            if let Some(r) = record_of(&self.path, line) {
                return Some(r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::command_record;
    use proptest::prelude::*;
    use std::io::Write;

    fn forwards(path: &Path, cap: usize) -> Vec<CommandRecord> {
        Records::<CommandRecord>::with_cap(path, cap).collect()
    }

    fn backwards(path: &Path, cap: usize) -> Vec<CommandRecord> {
        let mut r = RecordsBackwards::with_cap(path, cap);
        let mut got: Vec<_> = std::iter::from_fn(|| r.next_record()).collect();
        got.reverse();
        got
    }

    fn line(seq: u64, command_len: usize) -> Vec<u8> {
        let mut r = command_record("s", seq);
        r.command_line = "x".repeat(command_len);
        let mut l = serde_json::to_vec(&r).unwrap();
        l.push(b'\n');
        l
    }

    #[test]
    fn a_huge_damaged_line_is_skipped_both_ways() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("commands.jsonl");
        let mut f = File::create(&path).unwrap();
        f.write_all(&line(1, 10)).unwrap();
        // Three blocks of NUL bytes, a newline, then a good record, then a NUL tail.
        f.write_all(&vec![0u8; 3 * BLOCK + 17]).unwrap();
        f.write_all(b"\n").unwrap();
        f.write_all(&line(2, 10)).unwrap();
        f.write_all(&vec![0u8; 2 * BLOCK]).unwrap();
        drop(f);
        let want: Vec<u64> = vec![1, 2];
        let seqs = |v: Vec<CommandRecord>| v.into_iter().map(|r| r.seq).collect::<Vec<_>>();
        assert_eq!(seqs(forwards(&path, 1000)), want);
        assert_eq!(seqs(backwards(&path, 1000)), want);
        assert_eq!(seqs(forwards(&path, MAX_LINE)), want);
        assert_eq!(seqs(backwards(&path, MAX_LINE)), want);
        assert!(notice::said(&path));
    }

    #[test]
    fn a_record_over_the_cap_is_skipped_and_one_under_it_read() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("commands.jsonl");
        let mut bytes = line(1, 100);
        let long = line(2, 3 * BLOCK);
        bytes.extend_from_slice(&long);
        bytes.extend_from_slice(&line(3, 100));
        std::fs::write(&path, &bytes).unwrap();
        let cap = long.len() - 1; // the newline does not count
        assert_eq!(forwards(&path, cap).len(), 3);
        assert_eq!(backwards(&path, cap).len(), 3);
        assert_eq!(forwards(&path, cap - 1).len(), 2);
        assert_eq!(backwards(&path, cap - 1).len(), 2);
    }

    #[test]
    fn a_fifo_or_a_link_holds_no_records_and_never_blocks() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo.jsonl");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(forwards(&fifo, MAX_LINE).is_empty());
        assert!(backwards(&fifo, MAX_LINE).is_empty());
        assert!(notice::said(&fifo));
        let link = tmp.path().join("zero.jsonl");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(forwards(&link, MAX_LINE).is_empty());
        assert!(backwards(&link, MAX_LINE).is_empty());
        assert!(forwards(&tmp.path().join("none"), MAX_LINE).is_empty());
    }

    proptest! {
        /// Any bytes, any cap: both readers find the same records; and they are those of the
        /// lines that parse and fit, which splitting the whole file in memory finds.
        #[test]
        fn both_readers_agree_with_splitting_in_memory(
            parts in proptest::collection::vec(
                prop_oneof![
                    (1u64..50, 0usize..3000).prop_map(|(s, n)| line(s, n)),
                    // Longer than a block: read again whole once its start or end is found.
                    (1u64..50, BLOCK - 400..3 * BLOCK).prop_map(|(s, n)| line(s, n)),
                    proptest::collection::vec(any::<u8>(), 0..200),
                    Just(b"\n".to_vec()),
                    (0usize..200_000).prop_map(|n| vec![0u8; n]),
                ],
                0..12,
            ),
            cap in prop_oneof![1usize..4000, 100_000usize..200_000, Just(MAX_LINE)],
        ) {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("commands.jsonl");
            let bytes = parts.concat();
            std::fs::write(&path, &bytes).unwrap();
            let want: Vec<CommandRecord> = bytes
                .split(|&b| b == b'\n')
                .filter(|l| l.len() <= cap)
                .filter_map(|l| serde_json::from_slice(l).ok())
                .collect();
            prop_assert_eq!(&forwards(&path, cap), &want);
            prop_assert_eq!(&backwards(&path, cap), &want);
        }
    }
}
