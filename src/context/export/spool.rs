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
/// little-endian) and its text.
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
    /// Takes lines whole (a line kept as head and tail is not spooled: see
    /// [`crate::context::stages::read::digest_and_whole_lines`]).
    fn line(&mut self, line: Line<'_>) {
        if self.err.is_some() {
            return;
        }
        let Ok(len) = u32::try_from(line.head.len()) else {
            self.err = Some(io::Error::other("line too long to spool"));
            return;
        };
        self.buf.extend_from_slice(&len.to_le_bytes());
        self.buf.extend_from_slice(line.head.as_bytes());
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
            while rest.len() >= 4 {
                let n = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
                let text = rest
                    .get(4..4 + n)
                    .ok_or_else(|| io::Error::other("spool cut short"))?;
                let text = std::str::from_utf8(text).map_err(io::Error::other)?;
                if seen >= erased {
                    f(
                        seen - erased,
                        Line {
                            head: text,
                            omitted: 0,
                            tail: "",
                        },
                    );
                }
                seen += 1;
                rest = &rest[4 + n..];
            }
        }
        Ok(())
    }
}
