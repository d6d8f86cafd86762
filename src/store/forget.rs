//! Destroying what was recorded, in place: `omnish forget`.
//!
//! A session's files are appended to by its recorder as long as it lives, so nothing here
//! moves, renames or truncates them: bytes are overwritten where they lie, with `pwrite`, and
//! every offset stays valid.
//!
//! - A forgotten command ([`forget_commands`]): its line in `commands.jsonl` becomes a
//!   placeholder record of the same byte length (padded with spaces, which JSON allows): seq,
//!   times and exit status kept, `command_line` and `cwd` empty, `private`, `command_source`
//!   [`FORGOTTEN`] and no output (`stream_length` 0); where even that does not fit (a line of
//!   a few bytes), the line becomes spaces and the record is gone. The payloads of its own
//!   frames (output and keys of its depth in its range; those of shells nested in it are their
//!   commands') become spaces.
//! - A value ([`scrub_value`]): every occurrence in the payloads of `stream.bin`, also one split
//!   across frames of the same direction, and in `commands.jsonl` and `meta.json` (as JSON
//!   escapes it), becomes `*` of the same length (`meta.json`, which the recorder itself
//!   replaces whole, is replaced whole).
//!
//! Either way the session's derived caches (`cache/`) are removed, which is always safe: they
//! are rebuilt from the files. Memory is bounded: frames are read in pieces, a line of
//! `commands.jsonl` at most [`MAX_LINE`] bytes.

use crate::store::commands::MAX_LINE;
use crate::store::{self, CommandRecord, Frames};
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The `command_source` of a forgotten command's placeholder record.
pub const FORGOTTEN: &str = "forgotten";

/// What forgetting did to one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forgotten {
    /// The record as it was.
    pub record: CommandRecord,
    /// Payload bytes overwritten in `stream.bin`.
    pub bytes: u64,
    /// A placeholder stands in its place (else its line is gone).
    pub placeholder: bool,
}

/// Calls `f` with where each complete line of `commands.jsonl` of at most [`MAX_LINE`] bytes
/// starts and its bytes (newline excluded). A longer line is skipped; a last line without a
/// newline is a record being written: not ours to touch.
fn each_line(path: &Path, mut f: impl FnMut(u64, &[u8]) -> io::Result<()>) -> io::Result<()> {
    let file = store::open::open_regular(path)?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut at = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        if buf.last() == Some(&b'\n') {
            f(at, &buf[..n - 1])?;
            at += n as u64;
            continue;
        }
        if n <= MAX_LINE {
            return Ok(());
        }
        // Over the cap: skipped to its end.
        at += n as u64;
        loop {
            let (done, used) = {
                let b = reader.fill_buf()?;
                match b.iter().position(|&c| c == b'\n') {
                    Some(i) => (true, i + 1),
                    None => (b.is_empty(), b.len()),
                }
            };
            reader.consume(used);
            at += used as u64;
            if done {
                break;
            }
        }
    }
}

/// The placeholder that replaces `rec`, padded to `len` bytes; `None` when it does not fit.
fn placeholder(rec: &CommandRecord, len: usize) -> Option<Vec<u8>> {
    let stand_in = CommandRecord {
        command_line: String::new(),
        command_line_chars: None,
        cwd: String::new(),
        stream_length: 0,
        command_source: FORGOTTEN.to_string(),
        typed: None,
        private: true,
        unsplit: None,
        ..rec.clone()
    };
    let mut bytes = serde_json::to_vec(&stand_in).ok()?;
    if bytes.len() > len {
        return None;
    }
    bytes.resize(len, b' ');
    Some(bytes)
}

/// Overwrites with spaces the payloads of the frames of `rec`'s own depth in its range.
fn wipe_frames(stream: &File, path: &Path, rec: &CommandRecord) -> io::Result<u64> {
    if rec.stream_length == 0 {
        return Ok(0);
    }
    let mut frames = Frames::open(path, rec.stream_offset, Some(rec.stream_length))?;
    let mut wiped = 0;
    let spaces = vec![b' '; 64 * 1024];
    while let Some(h) = frames.next_complete().map_err(io::Error::other)? {
        if store::frame_depth(h.direction) != rec.depth {
            continue;
        }
        let mut at = frames.position();
        let mut left = h.len;
        while left > 0 {
            let n = left.min(spaces.len() as u64) as usize;
            stream.write_all_at(&spaces[..n], at)?;
            at += n as u64;
            left -= n as u64;
        }
        wiped += h.len;
    }
    Ok(wiped)
}

/// Forgets the commands `seqs` of the session in `dir` (see the module docs). Returns what was
/// forgotten, in order; a seq with no record on disk (still running, unknown) is left out.
/// With `dry_run`, nothing is written.
pub fn forget_commands(
    dir: &Path,
    seqs: &BTreeSet<u64>,
    dry_run: bool,
) -> io::Result<Vec<Forgotten>> {
    let commands_path = dir.join(store::COMMANDS);
    let stream_path = dir.join(store::STREAM);
    let mut found = Vec::new();
    each_line(&commands_path, |at, line| {
        if let Ok(r) = serde_json::from_slice::<CommandRecord>(line) {
            if seqs.contains(&r.seq) && r.command_source != FORGOTTEN {
                found.push((at, line.len(), r));
            }
        }
        Ok(())
    })?;
    if dry_run || found.is_empty() {
        return Ok(found
            .into_iter()
            .map(|(_, len, record)| Forgotten {
                placeholder: placeholder(&record, len).is_some(),
                record,
                bytes: 0,
            })
            .collect());
    }
    let commands = store::open_private(&commands_path)?;
    let stream = store::open_private(&stream_path)?;
    let mut out = Vec::new();
    for (at, len, record) in found {
        // The output first: a record that says nothing is there is never left pointing at it.
        let bytes = wipe_frames(&stream, &stream_path, &record)?;
        let line = placeholder(&record, len);
        let written = line.clone().unwrap_or_else(|| vec![b' '; len]);
        commands.write_all_at(&written, at)?;
        out.push(Forgotten {
            record,
            bytes,
            placeholder: line.is_some(),
        });
    }
    stream.sync_data()?;
    commands.sync_data()?;
    drop_caches(dir);
    Ok(out)
}

/// Removes the session's derived caches (rebuilt when next needed).
fn drop_caches(dir: &Path) {
    let _ = std::fs::remove_dir_all(store::cache::dir(dir));
}

/// Where `value` occurs in the concatenation of the payloads of one direction: kept as the
/// last `value.len() - 1` bytes seen, with their offsets in the file, so an occurrence split
/// across frames is found too.
struct Carry {
    bytes: Vec<u8>,
    at: Vec<u64>,
}

/// Overwrites every occurrence of `value` in the session in `dir` with `*` (see the module
/// docs). Returns how many occurrences there were; with `dry_run`, nothing is written.
pub fn scrub_value(dir: &Path, value: &[u8], dry_run: bool) -> io::Result<u64> {
    if value.is_empty() {
        return Ok(0);
    }
    let mut found = 0;
    let stream_path = dir.join(store::STREAM);
    if stream_path.exists() {
        let stream = if dry_run {
            None
        } else {
            Some(store::open_private(&stream_path)?)
        };
        let needle = literal(value);
        let mut frames = Frames::open(&stream_path, 0, None)?;
        let mut carries: std::collections::HashMap<u8, Carry> = Default::default();
        let stars = vec![b'*'; value.len()];
        let mut buf = vec![0u8; 64 * 1024];
        while let Some(h) = frames.next_complete().map_err(io::Error::other)? {
            let carry = carries.entry(h.direction).or_insert(Carry {
                bytes: Vec::new(),
                at: Vec::new(),
            });
            loop {
                let start = frames.position();
                let n = frames.read_payload(&mut buf).map_err(io::Error::other)?;
                if n == 0 {
                    break;
                }
                // The carried bytes, then this piece: positions of each.
                let mut window = carry.bytes.clone();
                window.extend_from_slice(&buf[..n]);
                let pos = |i: usize| -> u64 {
                    if i < carry.at.len() {
                        carry.at[i]
                    } else {
                        start + (i - carry.at.len()) as u64
                    }
                };
                let mut i = 0;
                while let Some(k) = needle.find(&window[i..]) {
                    let s = i + k;
                    found += 1;
                    if let Some(stream) = &stream {
                        // Byte by byte where the occurrence spans frames, else in one write.
                        let first = pos(s);
                        let last = pos(s + value.len() - 1);
                        if last - first + 1 == value.len() as u64 {
                            stream.write_all_at(&stars, first)?;
                        } else {
                            for j in s..s + value.len() {
                                stream.write_all_at(b"*", pos(j))?;
                            }
                        }
                    }
                    for b in &mut window[s..s + value.len()] {
                        *b = b'*';
                    }
                    i = s + value.len();
                }
                let keep = (value.len() - 1).min(window.len());
                let from = window.len() - keep;
                let at: Vec<u64> = (from..window.len()).map(pos).collect();
                carry.at = at;
                carry.bytes = window[from..].to_vec();
            }
        }
        if let Some(stream) = &stream {
            stream.sync_data()?;
        }
    }
    let commands_path = dir.join(store::COMMANDS);
    if commands_path.exists() {
        let escaped = &json_escaped(value)[..];
        let commands = if dry_run {
            None
        } else {
            Some(store::open_private(&commands_path)?)
        };
        let needle = literal(escaped);
        each_line(&commands_path, |at, line| {
            let mut i = 0;
            while let Some(k) = needle.find(&line[i..]) {
                found += 1;
                if let Some(commands) = &commands {
                    commands.write_all_at(&vec![b'*'; escaped.len()], at + (i + k) as u64)?;
                }
                i += k + escaped.len();
            }
            Ok(())
        })?;
        if let Some(commands) = &commands {
            commands.sync_data()?;
        }
    }
    found += scrub_meta(dir, value, dry_run)?;
    if found > 0 && !dry_run {
        drop_caches(dir);
    }
    Ok(found)
}

/// The value in `meta.json` (the shell's arguments, the running command's line): replaced as
/// the recorder replaces the file, whole and atomically. A live recorder writes the file again
/// from what it holds, so a value in its running command comes back until that command ends
/// and is recorded (then forget it again).
fn scrub_meta(dir: &Path, value: &[u8], dry_run: bool) -> io::Result<u64> {
    let path = dir.join(store::META);
    let Ok(bytes) = store::open::read_capped(&path, store::open::META_CAP) else {
        return Ok(0);
    };
    let escaped = json_escaped(value);
    let finder = literal(&escaped);
    let found = finder.find_iter(&bytes).count() as u64;
    if found == 0 || dry_run {
        return Ok(found);
    }
    let mut text = bytes.clone();
    let mut i = 0;
    while let Some(k) = finder.find(&text[i..]) {
        text[i + k..i + k + escaped.len()].fill(b'*');
        i += k + escaped.len();
    }
    let meta: store::SessionMeta = serde_json::from_slice(&text).map_err(io::Error::other)?;
    store::write_json_atomic(&path, &meta).map_err(io::Error::other)?;
    Ok(found)
}

/// `value` as JSON writes it inside a string (without the quotes).
fn json_escaped(value: &[u8]) -> Vec<u8> {
    let quoted = serde_json::to_vec(&String::from_utf8_lossy(value)).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_vec()
}

/// A finder of the bytes `value`, as they are.
fn literal(value: &[u8]) -> memchr::memmem::Finder<'_> {
    memchr::memmem::Finder::new(value)
}

#[cfg(test)]
mod tests;
