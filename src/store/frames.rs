//! Streaming reader of `stream.bin` frames: memory independent of frame and range sizes.
//!
//! A frame is the MessagePack array `[timestamp_ms, direction, data]` with `data` as bin (see
//! [`crate::store`]). [`Frames`] decodes one header at a time and hands the payload over in
//! chunks of the caller's buffer, so a multi-megabyte frame never has to sit in memory. Payloads
//! the caller does not want are skipped with a seek.
//!
//! A range that ends in the middle of a frame, or a frame that does not decode, is reported as a
//! [`FrameError`] with its byte offset; the caller decides whether that is a torn tail (a live or
//! crashed recording: skip it) or damage (a finished command: say its output is unreadable).

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek};

use std::path::Path;

/// The reader's buffer: small, so that a skipped payload costs a seek and one small read for
/// the header after it, not a refill of a frame's size (frames are up to 64 KiB, and the
/// commands of a nested shell lie whole inside the range of the command that started it).
/// Payload reads into a buffer at least this large bypass it.
const READ_BUFFER: usize = 4 * 1024;

/// Payloads larger than this are taken for damage, not data (the recorder writes frames of at
/// most a few megabytes).
const MAX_FRAME: u64 = 1 << 30;

/// The header of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    pub timestamp_ms: u64,
    pub direction: u8,
    /// Payload length in bytes.
    pub len: u64,
    /// Offset of the frame in the file.
    pub offset: u64,
}

/// Why frames stopped before the end of the range.
#[derive(Debug)]
pub enum FrameError {
    /// The range or the file ends inside the frame starting at this offset.
    Torn(u64),
    /// The bytes at this offset are not a frame.
    Corrupt(u64),
    Io(io::Error),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Torn(at) => write!(f, "stream.bin ends inside the frame at byte {at}"),
            FrameError::Corrupt(at) => write!(f, "stream.bin is damaged at byte {at}"),
            FrameError::Io(e) => write!(f, "cannot read stream.bin: {e}"),
        }
    }
}

impl std::error::Error for FrameError {}

impl From<io::Error> for FrameError {
    fn from(e: io::Error) -> Self {
        FrameError::Io(e)
    }
}

/// Frames of `[offset, offset + length)` of a stream file, read forwards.
pub struct Frames {
    reader: BufReader<File>,
    /// Offset of the next unread byte.
    pos: u64,
    /// End of the range (the file's length when no length was given).
    end: u64,
    /// Payload bytes of the current frame not yet read.
    left: u64,
    /// The range was open-ended: a torn last frame is the live end, not damage.
    open_ended: bool,
}

impl Frames {
    /// Opens the range; `length: None` reads to the current end of the file. The file must be
    /// a regular one ([`crate::store::open`]); one refused is said once.
    pub fn open(path: &Path, offset: u64, length: Option<u64>) -> io::Result<Frames> {
        let mut file = crate::store::open::open_regular(path).inspect_err(|e| {
            if crate::store::open::is_refused(e) {
                crate::store::notice::skipped(path, &e.to_string());
            }
        })?;
        let size = file.metadata()?.len();
        let end = match length {
            Some(len) => offset.saturating_add(len),
            None => size,
        };
        file.seek(io::SeekFrom::Start(offset))?;
        Ok(Frames {
            reader: BufReader::with_capacity(READ_BUFFER, file),
            pos: offset,
            end,
            left: 0,
            open_ended: length.is_none(),
        })
    }

    /// The offset in the file of the next byte to be read: right after a header, where its
    /// payload starts.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Whether the range was open-ended (read to the end of the file).
    pub fn open_ended(&self) -> bool {
        self.open_ended
    }

    /// The next frame's header, skipping what is left of the current payload. `Ok(None)` at the
    /// end of the range.
    pub fn next_header(&mut self) -> Result<Option<FrameHeader>, FrameError> {
        self.skip_payload()?;
        if self.pos >= self.end {
            return Ok(None);
        }
        let start = self.pos;
        let mut head = [0u8; 1];
        if !self.fill(&mut head)? {
            return Err(FrameError::Torn(start));
        }
        if head[0] != 0x93 {
            return Err(FrameError::Corrupt(start));
        }
        let timestamp_ms = self.uint(start)?;
        let direction = self.uint(start)?;
        let direction = u8::try_from(direction).map_err(|_| FrameError::Corrupt(start))?;
        let mut marker = [0u8; 1];
        if !self.fill(&mut marker)? {
            return Err(FrameError::Torn(start));
        }
        // The recorder writes bin; str is what other MessagePack writers use for bytes.
        let len = match marker[0] {
            0xc4 | 0xd9 => self.be(1, start)?,
            0xc5 | 0xda => self.be(2, start)?,
            0xc6 | 0xdb => self.be(4, start)?,
            m @ 0xa0..=0xbf => u64::from(m & 0x1f),
            _ => return Err(FrameError::Corrupt(start)),
        };
        if len > MAX_FRAME {
            return Err(FrameError::Corrupt(start));
        }
        if self.pos.saturating_add(len) > self.end {
            return Err(FrameError::Torn(start));
        }
        self.left = len;
        Ok(Some(FrameHeader {
            timestamp_ms,
            direction,
            len,
            offset: start,
        }))
    }

    /// [`Frames::next_header`], where a torn last frame of an open-ended range is its end (a
    /// live or crashed recording), not damage.
    pub fn next_complete(&mut self) -> Result<Option<FrameHeader>, FrameError> {
        match self.next_header() {
            Err(FrameError::Torn(_)) if self.open_ended => Ok(None),
            other => other,
        }
    }

    /// Reads the next part of the current payload into `buf`; 0 when the payload is done.
    pub fn read_payload(&mut self, buf: &mut [u8]) -> Result<usize, FrameError> {
        let want = (buf.len() as u64).min(self.left) as usize;
        if want == 0 {
            return Ok(0);
        }
        let start = self.pos;
        let n = self.reader.read(&mut buf[..want])?;
        if n == 0 {
            return Err(FrameError::Torn(start));
        }
        self.pos += n as u64;
        self.left -= n as u64;
        Ok(n)
    }

    /// Skips what is left of the current payload.
    pub fn skip_payload(&mut self) -> Result<(), FrameError> {
        if self.left > 0 {
            let left = self.left;
            self.reader.seek_relative(left as i64)?;
            self.pos += left;
            self.left = 0;
            if self.pos > self.end {
                return Err(FrameError::Torn(self.pos - left));
            }
        }
        Ok(())
    }

    /// Fills `buf` from the range; `false` when the range or the file ends first.
    fn fill(&mut self, buf: &mut [u8]) -> Result<bool, FrameError> {
        if self.pos + buf.len() as u64 > self.end {
            return Ok(false);
        }
        match self.reader.read_exact(buf) {
            Ok(()) => {
                self.pos += buf.len() as u64;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// A big-endian unsigned integer of `n` bytes.
    fn be(&mut self, n: usize, start: u64) -> Result<u64, FrameError> {
        let mut b = [0u8; 8];
        if !self.fill(&mut b[8 - n..])? {
            return Err(FrameError::Torn(start));
        }
        Ok(u64::from_be_bytes(b))
    }

    /// A non-negative MessagePack integer (positive fixint, uint 8/16/32/64, or an int 8/16/32/64
    /// holding a non-negative value).
    fn uint(&mut self, start: u64) -> Result<u64, FrameError> {
        let mut m = [0u8; 1];
        if !self.fill(&mut m)? {
            return Err(FrameError::Torn(start));
        }
        let signed = |v: u64, bits: u32| {
            if v >> (bits - 1) & 1 == 1 {
                Err(FrameError::Corrupt(start))
            } else {
                Ok(v)
            }
        };
        match m[0] {
            0x00..=0x7f => Ok(u64::from(m[0])),
            0xcc => self.be(1, start),
            0xcd => self.be(2, start),
            0xce => self.be(4, start),
            0xcf => self.be(8, start),
            0xd0 => signed(self.be(1, start)?, 8),
            0xd1 => signed(self.be(2, start)?, 16),
            0xd2 => signed(self.be(4, start)?, 32),
            0xd3 => signed(self.be(8, start)?, 64),
            _ => Err(FrameError::Corrupt(start)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{self, StreamEntry, StreamWriter};
    use proptest::prelude::*;

    fn read_all(path: &Path, offset: u64, len: Option<u64>) -> (Vec<StreamEntry>, Option<String>) {
        let mut f = Frames::open(path, offset, len).unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 7];
        loop {
            match f.next_header() {
                Ok(Some(h)) => {
                    let mut data = Vec::new();
                    loop {
                        match f.read_payload(&mut buf) {
                            Ok(0) => break,
                            Ok(n) => data.extend_from_slice(&buf[..n]),
                            Err(e) => return (out, Some(e.to_string())),
                        }
                    }
                    assert_eq!(data.len() as u64, h.len);
                    out.push(StreamEntry(h.timestamp_ms, h.direction, data));
                }
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e.to_string())),
            }
        }
    }

    #[test]
    fn damage_and_torn_tails_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(store::STREAM);
        let mut w = StreamWriter::create(&path).unwrap();
        w.write(1, store::OUTPUT, b"one").unwrap();
        let second = w.offset();
        w.write(2, store::OUTPUT, &vec![b'x'; 300]).unwrap();
        w.flush().unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        // The range ends inside the second frame.
        let (got, err) = read_all(&path, 0, Some(size - 1));
        assert_eq!(got.len(), 1);
        assert!(err.unwrap().contains(&format!("frame at byte {second}")));
        // The file was cut short under a finished range.
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(size - 10).unwrap();
        let (got, err) = read_all(&path, 0, Some(size));
        assert_eq!(got.len(), 1);
        assert!(err.unwrap().contains("ends inside"));
        // Garbage where a frame should start.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[second as usize] = 0x42;
        std::fs::write(&path, &bytes).unwrap();
        let (_, err) = read_all(&path, 0, None);
        assert!(err.unwrap().contains(&format!("damaged at byte {second}")));
    }

    proptest! {
        #[test]
        fn frames_agree_with_the_whole_range_decoder(
            frames in proptest::collection::vec((any::<u64>(), 0u8..2, proptest::collection::vec(any::<u8>(), 0..600)), 0..12),
            cut in 0usize..5000,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(store::STREAM);
            let mut w = StreamWriter::create(&path).unwrap();
            for (t, d, data) in &frames {
                w.write(*t, *d, data).unwrap();
            }
            w.flush().unwrap();
            let all: Vec<StreamEntry> = frames.iter().map(|(t, d, x)| StreamEntry(*t, *d, x.clone())).collect();
            let (got, err) = read_all(&path, 0, None);
            prop_assert_eq!(got, all.clone());
            prop_assert!(err.is_none());
            // A cut anywhere gives a prefix, and an error unless the cut falls between frames.
            let bytes = std::fs::read(&path).unwrap();
            let cut = cut.min(bytes.len());
            let (got, _) = read_all(&path, 0, Some(cut as u64));
            prop_assert!(all.starts_with(&got));
            prop_assert_eq!(got, store::decode_entries(&bytes[..cut]));
        }
    }
}
