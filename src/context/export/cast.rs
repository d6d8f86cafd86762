//! asciicast v3 (and v2): a recording asciinema's player plays and its servers take.
//!
//! The header has the terminal's size and the first command's start; then, per command, a
//! resize event when its terminal size differs, a marker event labelled with its command line
//! (the player's chapter list), the line itself after a `$ ` prompt (the recording's own prompt
//! and keys are not in the command's range, and neither are the commands left out), and the
//! output events: the recorded output frames of its range, at their recorded times. No input
//! events: keys typed with echo on are already in the output as their echo, and keys typed
//! with echo off (passwords) were never stored.
//!
//! Redaction applies to the bytes of the events, and a secret may be cut by a frame boundary
//! (the terminal read it in two pieces). So output is held until a line ends (`\n` or `\r`,
//! which no secret spans) and redacted a line at a time: its escape sequences are set aside,
//! the detectors run on its text, and each secret's text bytes are replaced by the
//! `[REDACTED:kind]` marker while the sequences inside it are kept (a colour reset in the
//! middle of a secret still resets). Lines of a private key block become the marker whole. An
//! event then carries the output of its frame up to the last line end, at that frame's time;
//! what follows waits for the next frame. A line longer than [`HOLD`] bytes with no line end is
//! cut there, at its last blank if it has one: a secret across such a cut would be missed (no
//! known secret is that long without a blank before it). Memory: [`HOLD`] plus one frame per
//! command being read.
//!
//! Each command's output events are read and redacted on a worker thread, with their recorded
//! times; the calling thread writes them in order, turning times into the intervals (v3) or
//! offsets (v2) the format wants ([`super::ordered`]).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use super::ordered::Sink;
use super::{Item, has_output};
use crate::context::stages::read::{self, Source};
use crate::context::stages::redact::Redactor;
use crate::error::Result;
use crate::store::{self, Frames};
use crate::term::visible;

/// Output held back waiting for a line end, in bytes, at most.
pub(crate) const HOLD: usize = 64 * 1024;

/// Which asciicast.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Version {
    /// Event times are intervals since the event before.
    V3,
    /// Event times are seconds since the start.
    V2,
}

pub(super) fn write(items: &[Item], version: Version, out: &mut dyn Write) -> Result<()> {
    let Some(first) = items.first() else {
        return Ok(());
    };
    // The terminal's session (an attached session of `omnish exec` is shown as part of it).
    let dir = &first.candidate.session_dir;
    let meta = store::read_meta(&dir.with_file_name(&first.group))
        .or_else(|_| store::read_meta(dir))
        .ok();
    let size = |cols: u16, rows: u16| {
        let cols = if cols > 0 {
            cols
        } else {
            meta.as_ref().map_or(0, |m| m.cols)
        };
        let rows = if rows > 0 {
            rows
        } else {
            meta.as_ref().map_or(0, |m| m.rows)
        };
        (
            if cols > 0 { cols } else { 80 },
            if rows > 0 { rows } else { 24 },
        )
    };
    let (cols, rows) = size(first.candidate.record.cols, first.candidate.rows);
    let start = first.ctx.started_at;
    let title = format!("omnish: session {}", first.group);
    let header = match version {
        Version::V3 => serde_json::json!({
            "version": 3,
            "term": { "cols": cols, "rows": rows },
            "timestamp": start / 1000,
            "title": title,
        }),
        Version::V2 => serde_json::json!({
            "version": 2,
            "width": cols,
            "height": rows,
            "timestamp": start / 1000,
            "title": title,
        }),
    };
    writeln!(out, "{header}")?;
    let events = std::cell::RefCell::new(Events {
        out,
        version,
        start,
        last: start,
        size: (cols, rows),
    });
    // Per session, where the output already played ends: a nested shell's commands lie inside
    // the range of the command that started it, and are not played twice. Known from the
    // records, so that each command's output can be read on a worker of its own.
    let mut done: HashMap<&Path, u64> = HashMap::new();
    let froms: Vec<u64> = items
        .iter()
        .map(|item| {
            if !has_output(item) {
                return 0;
            }
            let src = Source::of(&item.candidate);
            let played = done.entry(&item.candidate.session_dir).or_insert(0);
            let from = *played;
            let end = src
                .length
                .map_or(u64::MAX, |len| src.offset.saturating_add(len));
            *played = from.max(end);
            from
        })
        .collect();
    // The command's line and marker here, in order; its output events are read and redacted
    // on a worker thread (see `ordered`), their times made intervals here.
    super::ordered::run(
        items.len(),
        super::ordered::workers(),
        super::ordered::IN_FLIGHT,
        |i, sink: &mut Sink<Vec<Played>>| {
            let item = &items[i];
            if has_output(item) {
                play(item, froms[i], sink)?;
            }
            Ok(())
        },
        &mut |i| {
            let item = &items[i];
            let mut events = events.borrow_mut();
            let c = &item.candidate;
            let at = item.ctx.started_at;
            let this = size(c.record.cols, c.rows);
            if this != events.size {
                events.size = this;
                events.event(at, "r", &format!("{}x{}", this.0, this.1))?;
            }
            let line = visible::line(&item.ctx.command_line);
            events.event(at, "m", &line)?;
            let shown = visible::text(&item.ctx.command_line).replace('\n', "\r\n");
            events.event(at, "o", &format!("\x1b[1m$\x1b[0m {shown}\r\n"))
        },
        &mut |_, batch: Vec<Played>| {
            let mut events = events.borrow_mut();
            for p in batch {
                events.json(p.at, "o", &p.data)?;
            }
            Ok(())
        },
    )?;
    events.into_inner().out.flush()?;
    Ok(())
}

/// An output event read on a worker: its time (ms since the epoch) and its data, as JSON.
pub(crate) struct Played {
    at: u64,
    data: String,
}

/// Output events of one command, sent in batches of about [`BATCH`] bytes.
struct Batches<'a> {
    sink: &'a mut Sink<Vec<Played>>,
    batch: Vec<Played>,
    bytes: usize,
}

/// Bytes of event data per batch sent from a worker.
const BATCH: usize = 64 * 1024;

impl Batches<'_> {
    fn event(&mut self, at: u64, data: &str) -> Result<()> {
        let data = serde_json::to_string(data).map_err(std::io::Error::other)?;
        self.bytes += data.len();
        self.batch.push(Played { at, data });
        if self.bytes >= BATCH {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> Result<()> {
        if !self.batch.is_empty() {
            self.sink.send(std::mem::take(&mut self.batch))?;
            self.bytes = 0;
        }
        Ok(())
    }
}

/// Writes events one per line, times clamped so that they never go back.
struct Events<'a> {
    out: &'a mut dyn Write,
    version: Version,
    /// ms of time 0.
    start: u64,
    /// ms of the last event.
    last: u64,
    size: (u16, u16),
}

impl Events<'_> {
    fn event(&mut self, at_ms: u64, code: &str, data: &str) -> Result<()> {
        let data = serde_json::to_string(data).map_err(std::io::Error::other)?;
        self.json(at_ms, code, &data)
    }

    /// An event whose data is JSON already.
    fn json(&mut self, at_ms: u64, code: &str, data: &str) -> Result<()> {
        let at = at_ms.max(self.last);
        let time = match self.version {
            Version::V3 => at - self.last,
            Version::V2 => at - self.start,
        };
        self.last = at;
        writeln!(
            self.out,
            "[{}.{:03}, \"{code}\", {data}]",
            time / 1000,
            time % 1000
        )?;
        Ok(())
    }
}

/// Sends the output frames of `item` that start at or after `from` (a stream offset) as
/// events.
fn play(item: &Item, from: u64, sink: &mut Sink<Vec<Played>>) -> Result<()> {
    let src = Source::of(&item.candidate);
    let mut frames = match Frames::open(&src.stream, src.offset, src.length) {
        Ok(f) => f,
        Err(_) => return Ok(()),
    };
    let mut events = Batches {
        sink,
        batch: Vec::new(),
        bytes: 0,
    };
    let mut held = Held {
        bytes: Vec::new(),
        redactor: item.redactor.as_deref(),
        in_key: false,
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut last_at = item.ctx.started_at;
    // A damaged or torn frame ends the command's events; what came before is written.
    while let Ok(Some(h)) = frames.next_complete() {
        if h.offset < from
            || !store::is_output(h.direction)
            || store::frame_depth(h.direction) < src.depth
        {
            continue;
        }
        loop {
            // A payload cut short ends the frame (the next header says the rest).
            let n: usize = frames.read_payload(&mut buf).unwrap_or_default();
            if n == 0 {
                break;
            }
            held.bytes.extend_from_slice(&buf[..n]);
            if held.bytes.len() > HOLD + buf.len() {
                let out = held.take(false);
                events.event(h.timestamp_ms, &out)?;
            }
        }
        last_at = h.timestamp_ms;
        let out = held.take(false);
        if !out.is_empty() {
            events.event(h.timestamp_ms, &out)?;
        }
    }
    let out = held.take(true);
    if !out.is_empty() {
        events.event(last_at, &out)?;
    }
    events.send()
}

/// Output waiting for its line to end, and the redaction state.
struct Held<'a> {
    bytes: Vec<u8>,
    redactor: Option<&'a Redactor>,
    in_key: bool,
}

impl Held<'_> {
    /// The held output up to its last line end (with `all`: all of it), redacted; what follows
    /// stays held, but never more than [`HOLD`] bytes.
    fn take(&mut self, all: bool) -> String {
        let mut cut = if all {
            self.bytes.len()
        } else {
            match memchr::memrchr2(b'\n', b'\r', &self.bytes) {
                Some(i) => i + 1,
                None => 0,
            }
        };
        if self.bytes.len() - cut > HOLD {
            // No line end for too long: cut at the last blank, else anywhere (but never inside
            // a UTF-8 sequence).
            let limit = self.bytes.len() - HOLD / 2;
            cut = match memchr::memrchr2(b' ', b'\t', &self.bytes[cut..limit]) {
                Some(i) => cut + i + 1,
                None => limit,
            };
            while cut > 0 && cut < self.bytes.len() && self.bytes[cut] & 0xc0 == 0x80 {
                cut -= 1;
            }
        } else if !all {
            // An incomplete UTF-8 sequence at the end waits for its other bytes.
            let tail = crate::term::render::incomplete_utf8_tail(&self.bytes[..cut]);
            cut -= tail;
        }
        if cut == 0 {
            return String::new();
        }
        let rest = self.bytes.split_off(cut);
        let ready = std::mem::replace(&mut self.bytes, rest);
        let text = String::from_utf8_lossy(&ready);
        match self.redactor {
            None => text.into_owned(),
            Some(r) => redact_raw(&text, r, &mut self.in_key),
        }
    }
}

/// `raw` (terminal output, escape sequences and all) with the secrets of its text replaced, a
/// line at a time (see the module docs).
pub(crate) fn redact_raw(raw: &str, redactor: &Redactor, in_key: &mut bool) -> String {
    let mut out = String::with_capacity(raw.len());
    for line in raw.split_inclusive('\n') {
        redact_line(line, redactor, in_key, &mut out);
    }
    out
}

/// Where the escape sequences of `s` are: byte ranges, in order.
fn sequences(s: &str) -> Vec<std::ops::Range<usize>> {
    let b = s.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = memchr::memchr(0x1b, &b[i..]) {
        let start = i + at;
        let mut j = start + 1;
        match b.get(j) {
            // CSI: parameters and intermediates, then a final byte.
            Some(b'[') => {
                j += 1;
                while j < b.len() && !(0x40..=0x7e).contains(&b[j]) {
                    j += 1;
                }
                j = (j + 1).min(b.len());
            }
            // OSC, DCS, APC, PM, SOS: to BEL or ST.
            Some(b']' | b'P' | b'_' | b'^' | b'X') => {
                j += 1;
                while j < b.len() && b[j] != 0x07 && !(b[j] == 0x1b && b.get(j + 1) == Some(&b'\\'))
                {
                    j += 1;
                }
                j = match b.get(j) {
                    Some(0x07) => j + 1,
                    Some(_) => j + 2,
                    None => j,
                };
            }
            // ESC, intermediates, a final byte.
            Some(_) => {
                while j < b.len() && (0x20..=0x2f).contains(&b[j]) {
                    j += 1;
                }
                j = (j + 1).min(b.len());
            }
            None => {}
        }
        // Never inside a char (the final byte may have been a non-ASCII one).
        while j < b.len() && !s.is_char_boundary(j) {
            j += 1;
        }
        found.push(start..j);
        i = j;
    }
    found
}

fn redact_line(line: &str, redactor: &Redactor, in_key: &mut bool, out: &mut String) {
    // Most lines have no sequence: their text is the line itself (nothing is allocated).
    let seqs = match memchr::memchr(0x1b, line.as_bytes()) {
        Some(_) => sequences(line),
        None => Vec::new(),
    };
    // The text: the line without its sequences, and where each text piece lies in both.
    let mut pieces: Vec<(usize, std::ops::Range<usize>)> = Vec::new(); // (text start, raw range)
    let text = if seqs.is_empty() {
        std::borrow::Cow::Borrowed(line)
    } else {
        let mut text = String::with_capacity(line.len());
        let mut at = 0;
        for s in seqs
            .iter()
            .chain(std::iter::once(&(line.len()..line.len())))
        {
            if s.start > at {
                pieces.push((text.len(), at..s.start));
                text.push_str(&line[at..s.start]);
            }
            at = s.end;
        }
        std::borrow::Cow::Owned(text)
    };
    let body = text.trim_end_matches(['\n', '\r']);
    if read::key_block_state(in_key, body, "") {
        out.push_str("[REDACTED:private-key]");
        // The sequences stay (colours reset), and the line end.
        for s in &seqs {
            out.push_str(&line[s.clone()]);
        }
        if line.ends_with('\n') {
            out.push_str("\r\n");
        }
        return;
    }
    let secrets = redactor.find_secrets(&text);
    if secrets.is_empty() {
        out.push_str(line);
        return;
    }
    if seqs.is_empty() && !line.is_empty() {
        pieces.push((0, 0..line.len()));
    }
    // Walk the raw line: sequences copied, text copied unless inside a secret, each secret's
    // marker written where its text starts.
    let mut next_piece = 0;
    let mut raw = 0;
    let mut k = 0;
    let mut marked = usize::MAX;
    while raw < line.len() {
        let piece = pieces.get(next_piece);
        match piece {
            Some((t0, r)) if r.start == raw => {
                for (off, ch) in line[r.clone()].char_indices() {
                    let t = t0 + off;
                    while k < secrets.len() && secrets[k].range.end <= t {
                        k += 1;
                    }
                    match secrets.get(k) {
                        Some(s) if s.range.contains(&t) => {
                            if marked != k {
                                marked = k;
                                out.push_str("[REDACTED:");
                                out.push_str(s.kind);
                                out.push(']');
                            }
                        }
                        _ => out.push(ch),
                    }
                }
                raw = r.end;
                next_piece += 1;
            }
            _ => {
                // A sequence up to the next piece.
                let until = piece.map_or(line.len(), |(_, r)| r.start);
                out.push_str(&line[raw..until]);
                raw = until;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "ghp_0123456789abcdefABCDEF0123456789abcd";

    #[test]
    fn secrets_cut_by_escape_sequences_are_redacted_and_the_sequences_kept() {
        let (a, b) = TOKEN.split_at(10);
        let raw = format!("export T=\x1b[1m{a}\x1b[0m{b} done\r\n");
        let r = Redactor::new();
        let out = redact_raw(&raw, &r, &mut false);
        assert!(!out.contains(a) && !out.contains(b), "{out:?}");
        assert!(out.contains("[REDACTED:"), "{out:?}");
        assert!(
            out.contains("\x1b[1m") && out.contains("\x1b[0m"),
            "{out:?}"
        );
        assert!(out.ends_with(" done\r\n"), "{out:?}");
    }

    #[test]
    fn a_secret_split_across_frames_is_held_until_its_line_ends() {
        let r = Redactor::new();
        let mut held = Held {
            bytes: Vec::new(),
            redactor: Some(&r),
            in_key: false,
        };
        let (a, b) = TOKEN.split_at(20);
        held.bytes
            .extend_from_slice(format!("one\r\ntoken {a}").as_bytes());
        let first = held.take(false);
        assert_eq!(first, "one\r\n");
        held.bytes.extend_from_slice(format!("{b}\r\n").as_bytes());
        let second = held.take(false);
        assert!(!second.contains(a) && !second.contains(b), "{second:?}");
        assert!(second.starts_with("token [REDACTED:"), "{second:?}");
    }

    #[test]
    fn private_key_blocks_go_whole_and_long_lines_are_cut() {
        let r = Redactor::new();
        let raw = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter\n";
        let out = redact_raw(raw, &r, &mut false);
        assert!(!out.contains("b3Blbn"), "{out}");
        assert!(out.ends_with("after\n"), "{out}");
        let mut held = Held {
            bytes: vec![b'x'; HOLD * 2],
            redactor: None,
            in_key: false,
        };
        let out = held.take(false);
        assert!(
            !out.is_empty() && held.bytes.len() <= HOLD,
            "{}",
            held.bytes.len()
        );
    }
}
