//! Rendered lines kept between learning and writing, so that an output is rendered once.
//!
//! Learning renders every output to teach the redactors ([`super::scan`]); writing markdown
//! wants the same lines again, after every output was learned from. Instead of rendering
//! again, learning writes each line it rendered to a spool: one unnamed temporary file
//! (`O_TMPFILE` in the session's directory, 0600, gone when the export ends, whatever way it
//! ends), shared by the workers, each output's lines as a few extents of it. Memory: one
//! buffer of [`BUFFER`] bytes per worker (more only for a longer line), whatever the size of
//! the outputs; the disk holds the rendered text of the outputs until the export ends.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::term::render::{Line, LineSink};

/// Bytes of lines gathered before they are written to the spool.
const BUFFER: usize = 256 * 1024;

/// Set in a spooled line's length: the line is clipped (see [`Spooled`]).
const CLIPPED: u32 = 1 << 31;

/// The file, and where its end is.
pub(crate) struct Spool {
    file: File,
    end: Mutex<u64>,
}

impl Spool {
    /// A new spool in `dir`; `None` when it cannot be made (outputs are then rendered again).
    pub(crate) fn create(dir: &Path) -> Option<Arc<Spool>> {
        let file = tempfile::tempfile_in(dir).ok()?;
        Some(Arc::new(Spool {
            file,
            end: Mutex::new(0),
        }))
    }

    /// Writes `bytes` at the end; where they start.
    fn append(&self, bytes: &[u8]) -> io::Result<u64> {
        let at = {
            let mut end = self
                .end
                .lock()
                .map_err(|_| io::Error::other("spool lock"))?;
            let at = *end;
            *end += bytes.len() as u64;
            at
        };
        self.file.write_all_at(bytes, at)?;
        Ok(at)
    }
}

/// The lines of one output in a spool: extents of whole lines, each line its length (4 bytes,
/// little-endian) and its text; a line clipped to head and tail (longer than the writer's line
/// cap) has [`CLIPPED`] set in its length, which is its head's, and after the head the chars
/// omitted (8 bytes) and its tail's length (4 bytes) and text.
pub(crate) struct Spooled {
    spool: Arc<Spool>,
    extents: Vec<(u64, usize)>,
}

/// Writes the lines handed to it to a spool (a [`LineSink`]).
pub(crate) struct Writer {
    spool: Arc<Spool>,
    buf: Vec<u8>,
    extents: Vec<(u64, usize)>,
    err: Option<io::Error>,
}

impl Writer {
    pub(crate) fn new(spool: &Arc<Spool>) -> Writer {
        Writer {
            spool: Arc::clone(spool),
            buf: Vec::new(),
            extents: Vec::new(),
            err: None,
        }
    }

    fn flush(&mut self) {
        if self.buf.is_empty() || self.err.is_some() {
            return;
        }
        match self.spool.append(&self.buf) {
            Ok(at) => self.extents.push((at, self.buf.len())),
            Err(e) => self.err = Some(e),
        }
        self.buf.clear();
    }

    /// The lines written; `None` when writing failed.
    pub(crate) fn finish(mut self) -> Option<Spooled> {
        self.flush();
        if self.err.is_some() {
            return None;
        }
        Some(Spooled {
            spool: self.spool,
            extents: self.extents,
        })
    }
}

impl LineSink for Writer {
    /// Takes lines as rendered: whole, or clipped to head and tail.
    fn line(&mut self, line: Line<'_>) {
        if self.err.is_some() {
            return;
        }
        let clipped = line.omitted > 0 || !line.tail.is_empty();
        let (Ok(len), Ok(tail_len)) = (
            u32::try_from(line.head.len()),
            u32::try_from(line.tail.len()),
        ) else {
            self.err = Some(io::Error::other("line too long to spool"));
            return;
        };
        if len >= CLIPPED {
            self.err = Some(io::Error::other("line too long to spool"));
            return;
        }
        let flag = if clipped { CLIPPED } else { 0 };
        self.buf.extend_from_slice(&(len | flag).to_le_bytes());
        self.buf.extend_from_slice(line.head.as_bytes());
        if clipped {
            self.buf.extend_from_slice(&line.omitted.to_le_bytes());
            self.buf.extend_from_slice(&tail_len.to_le_bytes());
            self.buf.extend_from_slice(line.tail.as_bytes());
        }
        if self.buf.len() >= BUFFER {
            self.flush();
        }
    }

    /// Lines before an erase stay: the reader skips them, as a second rendering would.
    fn erase_scrollback(&mut self) {}
}

impl Spooled {
    /// Hands every line to `f` with its number, after skipping the first `erased` (as
    /// [`crate::context::stages::read::for_each_line`] does on the output itself).
    pub(crate) fn for_each_line(
        &self,
        erased: u64,
        f: &mut dyn FnMut(u64, Line<'_>),
    ) -> io::Result<()> {
        let mut buf = Vec::new();
        let mut seen = 0u64;
        for &(at, len) in &self.extents {
            buf.resize(len, 0);
            self.spool.file.read_exact_at(&mut buf, at)?;
            let mut rest = &buf[..];
            while !rest.is_empty() {
                let len = u32::from_le_bytes(take(&mut rest, 4)?.try_into().expect("4 bytes"));
                let head = text(take(&mut rest, (len & !CLIPPED) as usize)?)?;
                let (omitted, tail) = match len & CLIPPED {
                    0 => (0, ""),
                    _ => {
                        let omitted =
                            u64::from_le_bytes(take(&mut rest, 8)?.try_into().expect("8 bytes"));
                        let n =
                            u32::from_le_bytes(take(&mut rest, 4)?.try_into().expect("4 bytes"));
                        (omitted, text(take(&mut rest, n as usize)?)?)
                    }
                };
                if seen >= erased {
                    f(
                        seen - erased,
                        Line {
                            head,
                            omitted,
                            tail,
                        },
                    );
                }
                seen += 1;
            }
        }
        Ok(())
    }
}

/// The first `n` bytes of `rest`, taken off it.
fn take<'a>(rest: &mut &'a [u8], n: usize) -> io::Result<&'a [u8]> {
    if rest.len() < n {
        return Err(io::Error::other("spool cut short"));
    }
    let (taken, left) = rest.split_at(n);
    *rest = left;
    Ok(taken)
}

fn text(bytes: &[u8]) -> io::Result<&str> {
    std::str::from_utf8(bytes).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_back_as_spooled_clipped_or_whole() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::create(dir.path()).unwrap();
        let big = "y".repeat(3 * BUFFER);
        let lines = [
            ("", 0, ""),
            ("whole line é", 0, ""),
            ("head of a long line ", 1 << 40, " its tail"),
            (big.as_str(), 0, ""),
            ("h", 3, ""),
            ("", 7, "t"),
            ("after", 0, ""),
        ];
        let mut w = Writer::new(&spool);
        for (head, omitted, tail) in lines {
            w.line(Line {
                head,
                omitted,
                tail,
            });
        }
        let spooled = w.finish().unwrap();
        let mut got = Vec::new();
        spooled
            .for_each_line(1, &mut |i, l| {
                got.push((i, l.head.to_string(), l.omitted, l.tail.to_string()));
            })
            .unwrap();
        let want: Vec<_> = lines[1..]
            .iter()
            .enumerate()
            .map(|(i, (h, o, t))| (i as u64, h.to_string(), *o, t.to_string()))
            .collect();
        assert_eq!(got, want);
    }
}
