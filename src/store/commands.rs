//! Reading `commands.jsonl` from its end, newest record first, in blocks: the cost grows with
//! the records read, never with the size of the file.

use crate::store::CommandRecord;
use anyhow::{Context, Result};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Reads `commands.jsonl` from its end, one record at a time, in blocks: a torn or invalid line
/// is skipped.
pub struct RecordsBackwards {
    file: Option<File>,
    pos: u64,
    buf: Vec<u8>,
}

const BLOCK: u64 = 64 * 1024;

impl RecordsBackwards {
    pub fn open(path: &Path) -> Result<RecordsBackwards> {
        let file = match File::open(path) {
            Ok(f) => Some(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let pos = match &file {
            Some(f) => f.metadata()?.len(),
            None => 0,
        };
        Ok(RecordsBackwards {
            file,
            pos,
            buf: Vec::new(),
        })
    }

    /// The previous complete line, newest first.
    fn next_line(&mut self) -> Option<Vec<u8>> {
        loop {
            // A line is complete once the newline before it (or the file start) is in `buf`.
            let trimmed =
                self.buf.len() - self.buf.iter().rev().take_while(|&&b| b == b'\n').count();
            if let Some(nl) = self.buf[..trimmed].iter().rposition(|&b| b == b'\n') {
                let line = self.buf[nl + 1..trimmed].to_vec();
                self.buf.truncate(nl + 1);
                return Some(line);
            }
            if self.pos == 0 {
                if trimmed == 0 {
                    return None;
                }
                let line = self.buf[..trimmed].to_vec();
                self.buf.clear();
                return Some(line);
            }
            let start = self.pos.saturating_sub(BLOCK);
            let mut block = vec![0u8; (self.pos - start) as usize];
            let file = self.file.as_mut()?;
            file.seek(SeekFrom::Start(start)).ok()?;
            file.read_exact(&mut block).ok()?;
            block.extend_from_slice(&self.buf);
            self.buf = block;
            self.pos = start;
        }
    }

    pub fn next_record(&mut self) -> Option<CommandRecord> {
        loop {
            let line = self.next_line()?;
            if let Ok(r) = serde_json::from_slice(&line) {
                return Some(r);
            }
        }
    }
}
