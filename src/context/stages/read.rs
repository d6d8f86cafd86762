//! Read stage: a selected command's byte range of `stream.bin` → its output, rendered, in
//! memory that does not depend on the size of the output.
//!
//! Only the command's own range is read (`stream_offset`, `stream_length`); a running or cut-off
//! command reads to the current end of the stream. Frames are streamed ([`crate::store::Frames`])
//! through the renderer ([`crate::term::render`]) into a [`Digest`]: the line count, the first
//! and last [`HEAD_LINES`]/[`TAIL_LINES`] lines, the earliest error-looking lines, a hash of the
//! whole text (to fold repeats) and what kind of output it was. Lines longer than [`LINE_CAP`]
//! chars keep only their head and tail. Everything later stages need for the usual options is in
//! the digest; for the rest, [`for_each_line`] renders the output again and hands over every
//! line in turn. A digest of a large finished output is cached beside the session
//! ([`crate::store::cache`]), so it is rendered once, not at every call.
//!
//! Keys typed ahead while a command runs are echoed by the terminal into that command's output,
//! though they are the next command's line. When the keystrokes recorded in the range are plain
//! text typing the next command's line, and each echo follows its key on its own, their echo is
//! left out. Input a program reads itself (`read name`, `cat`) is never touched: it is not the
//! next command.
//!
//! A command reads only the frames of its own depth ([`crate::store::CommandRecord::depth`]):
//! the range of a command that started a nested shell (`bash`, `ssh host`) also holds the frames
//! of the commands run in that shell, which are theirs, not its output. Frames of other depths
//! are skipped without reading their bytes; keys typed at another depth are no type-ahead of
//! this command's shell.
//!
//! A finished command whose frames are damaged or cut short becomes one line
//! `[output unreadable: …]`; output that is mostly not text (control bytes, invalid UTF-8)
//! becomes one line `[binary output, 48.2 MB]`.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::path::PathBuf;

use crate::context::stages::select::Candidate;
use crate::context::stages::truncate::is_error_line;
use crate::store::{self, FrameError, Frames};
use crate::term::render::{Line, LineSink, Renderer, Screens};

/// Lines kept from the start of an output.
pub(crate) const HEAD_LINES: usize = 256;
/// Lines kept from the end of an output.
pub(crate) const TAIL_LINES: usize = 256;
/// Error-looking lines kept from the rest of an output (the earliest).
pub(crate) const ERROR_LINES: usize = 256;
/// Chars kept of one line: its first and last `LINE_CAP / 2`.
pub(crate) const LINE_CAP: usize = 4096;
/// Bump when the renderer or the digest changes what it produces: cached digests of another
/// version are rebuilt.
pub(crate) const DIGEST_VERSION: u32 = 4;

/// Output bytes looked at before deciding that an output is binary.
const BINARY_PROBE: u64 = 64 * 1024;
/// Share of bytes that are neither text nor terminal control above which output is binary.
const BINARY_SHARE: f64 = 0.25;

/// One rendered line: the whole line, or its head and tail around `omitted` chars.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StoredLine {
    pub head: String,
    pub omitted: u64,
    pub tail: String,
    /// The line is part of a private key block (`-----BEGIN … PRIVATE KEY-----` … `-----END`).
    pub key_block: bool,
}

impl StoredLine {
    /// Whether the line looks like an error (judged on what is kept of it).
    pub fn is_error(&self) -> bool {
        !self.key_block && (is_error_line(&self.head) || is_error_line(&self.tail))
    }
}

/// What kind of output a command produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum OutputKind {
    Text,
    /// Mostly not text; `bytes` of output in all.
    Binary {
        bytes: u64,
    },
    /// The frames could not be read; why.
    Unreadable(String),
}

/// A bounded account of a command's rendered output (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Digest {
    /// Rendered lines in all.
    pub lines: u64,
    /// The first lines (at most the head cap).
    pub head: Vec<StoredLine>,
    /// The last lines (at most the tail cap); the first of them is line `lines - tail.len()`.
    pub tail: Vec<StoredLine>,
    /// The earliest error-looking lines at or after the head cap, with their line numbers.
    pub errors: Vec<(u64, StoredLine)>,
    /// Whether `errors` stopped at its cap (later error lines exist but are not listed).
    pub errors_full: bool,
    pub kind: OutputKind,
    /// A hash of every line, for folding repeated runs.
    pub hash: u64,
    /// Longest run of backticks in any line.
    pub backticks: usize,
    /// Output bytes read.
    pub bytes: u64,
    /// Lines handed over before the last erase of the scrollback (`ESC [ 3 J`): a second pass
    /// skips that many to see the same lines.
    pub erased: u64,
    /// The caps it was built with.
    pub caps: Caps,
}

/// How much a [`Digest`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Caps {
    pub head: usize,
    pub tail: usize,
    pub errors: usize,
    pub line_cap: usize,
}

impl Caps {
    pub const STANDARD: Caps = Caps {
        head: HEAD_LINES,
        tail: TAIL_LINES,
        errors: ERROR_LINES,
        line_cap: LINE_CAP,
    };
}

impl Digest {
    /// The output in one line when it is not text: binary or unreadable.
    pub fn note(&self) -> Option<String> {
        match &self.kind {
            OutputKind::Text => None,
            OutputKind::Binary { bytes } => {
                Some(format!("[binary output, {}]", human_bytes(*bytes)))
            }
            OutputKind::Unreadable(why) => Some(format!("[output unreadable: {why}]")),
        }
    }

    /// Line `i`, when the digest holds it.
    pub fn line(&self, i: u64) -> Option<&StoredLine> {
        if (i as usize) < self.head.len() {
            return self.head.get(i as usize);
        }
        let tail_start = self.lines - self.tail.len() as u64;
        if i >= tail_start {
            return self.tail.get((i - tail_start) as usize);
        }
        self.errors
            .binary_search_by_key(&i, |(n, _)| *n)
            .ok()
            .map(|k| &self.errors[k].1)
    }

    /// Sorted numbers of the error-looking lines the digest knows: complete up to the last one
    /// listed, which is all truncation to at most `caps.errors` lines needs.
    pub fn error_indices(&self) -> Vec<u64> {
        let mut out: Vec<u64> = self
            .head
            .iter()
            .enumerate()
            .filter(|(_, l)| l.is_error())
            .map(|(i, _)| i as u64)
            .collect();
        out.extend(self.errors.iter().map(|(i, _)| *i));
        if !self.errors_full {
            // Error lines in the tail past the listed ones (the list covers [head cap, end)).
            let tail_start = self.lines - self.tail.len() as u64;
            let after = out.last().map_or(0, |l| l + 1).max(self.caps.head as u64);
            for (k, l) in self.tail.iter().enumerate() {
                let i = tail_start + k as u64;
                if i >= after && l.is_error() && !out.contains(&i) {
                    out.push(i);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// `48.2 MB`, `512 bytes`.
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if n < 1000 {
        return format!("{n} bytes");
    }
    let mut v = n as f64 / 1000.0;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// Where a command's output is and how it was shown.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    pub stream: PathBuf,
    pub offset: u64,
    /// `None`: to the end of the stream (running or cut off).
    pub length: Option<u64>,
    pub cols: u16,
    pub rows: u16,
    /// The next command's line, for leaving out its typed-ahead echo.
    pub next_command_line: Option<String>,
    /// The depth of the shell the command ran in: only frames of this depth are read.
    pub depth: u32,
    /// What full-screen programs leave in the lines.
    pub screens: Screens,
    /// The program a full-screen visit is named after ([`program_name`] of the command line).
    pub program: Option<String>,
}

impl Source {
    pub fn of(c: &Candidate) -> Source {
        Source {
            stream: c.session_dir.join(store::STREAM),
            offset: c.record.stream_offset,
            // Recording stopped (disk full) while this command ran: its range ends where the
            // disk did, torn last frame included, like a live one's.
            length: (!c.open_ended() && !c.record.recording_stopped)
                .then_some(c.record.stream_length),
            cols: c.record.cols,
            rows: c.rows,
            next_command_line: c.next_command_line.clone(),
            depth: c.record.depth,
            screens: c.screens,
            program: program_name(&c.record.command_line),
        }
    }
}

/// Longest program name shown for a full-screen program, in chars.
const MAX_PROGRAM: usize = 64;

/// The program a command line runs, as a full-screen visit is named: the file name of its first
/// word, past variable assignments (`TERM=xterm`) and the commands that run another (`sudo`,
/// `env`, `exec`, `nice`, `time`, ... with their options). `git log` is `git` (its pager ran
/// full-screen); `None` for a line that names none. Control characters are left out.
pub(crate) fn program_name(line: &str) -> Option<String> {
    const RUNNERS: [&str; 12] = [
        "sudo", "doas", "env", "command", "exec", "nice", "time", "nohup", "builtin", "noglob",
        "stdbuf", "ionice",
    ];
    let mut after_runner = false;
    for word in line.split_whitespace().take(32) {
        if word.contains('=') && !word.starts_with(['=', '-']) && !word.starts_with('/') {
            continue;
        }
        // A runner's options and their numbers (`nice -n 5`, `ionice -c 3`).
        if after_runner && (word.starts_with('-') || word.parse::<i64>().is_ok()) {
            continue;
        }
        let name = word.rsplit('/').next().unwrap_or(word);
        if RUNNERS.contains(&name) {
            after_runner = true;
            continue;
        }
        let name: String = name
            .trim_matches(['"', '\''])
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_PROGRAM)
            .collect();
        return (!name.is_empty()).then_some(name);
    }
    None
}

/// Most typed bytes looked at for type-ahead; past that nothing is left out.
pub(crate) const TYPED_CAP: usize = 64 * 1024;

/// The typed-ahead echoes to leave out: `(output position, length)`, ascending, or nothing.
///
/// The terminal echoes keys in the order they were typed, each read of keys as one run, soon
/// after it: the echo of a read lies right where the output was when the keys came, or, when
/// the echo of the keys before it had not come out yet, right after that echo. The recorder
/// ends a frame after the first read of output that follows keys, so an echo read on its own
/// ends where a frame ends; several reads of keys may be echoed in one run, each echo then
/// ending where the next begins. Only echoes that lie exactly so are taken for echoes: the
/// same bytes after, or read together with, other output could be the program's own, and
/// then nothing is left out.
fn type_ahead_echoes(src: &Source, next_line: &str) -> Result<Vec<(u64, u64)>, FrameError> {
    let mut frames = Frames::open(&src.stream, src.offset, src.length)?;
    let mut typed: Vec<u8> = Vec::new();
    // (where the echo must lie, the echo, bytes of it matched so far)
    let mut checks: Vec<(u64, Vec<u8>, usize)> = Vec::new();
    // Where the next read's echo may start: after the echo before it.
    let mut echo_end = 0u64;
    let mut out_pos = 0u64;
    // The first check not matched whole.
    let mut first = 0;
    let mut buf = vec![0u8; 64 * 1024];
    let (input, output) = (store::input_at(src.depth), store::output_at(src.depth));
    while let Some(h) = frames.next_complete()? {
        if h.direction == input {
            if h.len as usize + typed.len() > TYPED_CAP {
                return Ok(Vec::new());
            }
            let mut data = Vec::with_capacity(h.len as usize);
            loop {
                let n = frames.read_payload(&mut buf)?;
                if n == 0 {
                    break;
                }
                data.extend_from_slice(&buf[..n]);
            }
            let mut echo = Vec::with_capacity(data.len() + 1);
            for &b in &data {
                // The terminal turns Enter into a newline (ICRNL) and echoes it as CR LF (ONLCR).
                if b == b'\r' {
                    echo.extend_from_slice(b"\r\n");
                } else {
                    echo.push(b);
                }
            }
            typed.extend_from_slice(&data);
            let at = out_pos.max(echo_end);
            echo_end = at + echo.len() as u64;
            checks.push((at, echo, 0));
            continue;
        }
        if h.direction != output {
            continue;
        }
        let frame_start = out_pos;
        let frame_end = out_pos + h.len;
        out_pos = frame_end;
        // Checks are matched in order, each after the one before: the open ones are those
        // from the first unmatched on whose place has come. Only their bytes are read (a huge
        // frame costs no more memory than the echoes); the rest is skipped.
        while first < checks.len() && checks[first].2 == checks[first].1.len() {
            first += 1;
        }
        let mut pos = frame_start;
        let mut k = first;
        while k < checks.len() {
            let (at, echo, matched) = &mut checks[k];
            let from = *at + *matched as u64;
            if from >= frame_end {
                break;
            }
            if from < pos {
                // Its place went by in a frame before (an echo that came in two pieces, the
                // first of which was not it).
                return Ok(Vec::new());
            }
            let upto = (*at + echo.len() as u64).min(frame_end);
            if !skip_payload(&mut frames, &mut buf, from - pos)? {
                return Ok(Vec::new());
            }
            let mut part = vec![0u8; (upto - from) as usize];
            if !read_payload_exact(&mut frames, &mut part)? {
                return Ok(Vec::new());
            }
            pos = upto;
            if part != echo[*matched..*matched + part.len()] {
                return Ok(Vec::new());
            }
            *matched += part.len();
            let (whole, end) = (*matched == echo.len(), *at + echo.len() as u64);
            // Read on its own, or in one run with the next read's echo.
            if whole && end != frame_end && checks.get(k + 1).is_none_or(|next| next.0 != end) {
                return Ok(Vec::new());
            }
            if !whole {
                break;
            }
            k += 1;
        }
    }
    let plain = typed
        .iter()
        .all(|&b| b == b'\r' || (b >= 0x20 && b != 0x7f));
    let first_line = typed.split(|&b| b == b'\r').next().unwrap_or_default();
    let all_in_place = checks.iter().all(|(_, e, m)| *m == e.len());
    if checks.is_empty() || !plain || first_line != next_line.as_bytes() || !all_in_place {
        return Ok(Vec::new());
    }
    Ok(checks
        .into_iter()
        .map(|(at, e, _)| (at, e.len() as u64))
        .collect())
}

/// Reads past `n` bytes of the current frame's payload; false if it ends first.
fn skip_payload(frames: &mut Frames, buf: &mut [u8], mut n: u64) -> Result<bool, FrameError> {
    while n > 0 {
        let room = (n as usize).min(buf.len());
        let got = frames.read_payload(&mut buf[..room])?;
        if got == 0 {
            return Ok(false);
        }
        n -= got as u64;
    }
    Ok(true)
}

/// Fills `out` from the current frame's payload; false if it ends first.
fn read_payload_exact(frames: &mut Frames, out: &mut [u8]) -> Result<bool, FrameError> {
    let mut at = 0;
    while at < out.len() {
        let got = frames.read_payload(&mut out[at..])?;
        if got == 0 {
            return Ok(false);
        }
        at += got;
    }
    Ok(true)
}

/// How reading a range ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadEnd {
    Complete,
    /// The consumer asked to stop; `bytes` of output in all (the rest counted, not read).
    Stopped {
        bytes: u64,
    },
    Unreadable(String),
}

/// Streams the output bytes of `src` (typed-ahead echo left out) to `f` in chunks. `f` returns
/// `false` to stop reading; the remaining output is then only counted.
pub(crate) fn output_chunks(src: &Source, f: &mut dyn FnMut(&[u8]) -> bool) -> ReadEnd {
    let unreadable = |e: FrameError| ReadEnd::Unreadable(e.to_string());
    let drops = match &src.next_command_line {
        Some(next) => match type_ahead_echoes(src, next) {
            Ok(d) => d,
            Err(e) => return unreadable(e),
        },
        None => Vec::new(),
    };
    let mut frames = match Frames::open(&src.stream, src.offset, src.length) {
        Ok(f) => f,
        Err(e) => return ReadEnd::Unreadable(format!("cannot read stream.bin: {e}")),
    };
    let mut buf = vec![0u8; 64 * 1024];
    let output = store::output_at(src.depth);
    let mut pos = 0u64;
    let mut d = 0;
    let mut stopped = false;
    loop {
        let h = match frames.next_complete() {
            Ok(Some(h)) => h,
            Ok(None) => break,
            Err(e) => return unreadable(e),
        };
        if h.direction != output {
            continue;
        }
        let frame_start = pos;
        if stopped {
            pos += h.len;
            continue;
        }
        loop {
            let n = match frames.read_payload(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(FrameError::Torn(_)) if frames.open_ended() => return ReadEnd::Complete,
                Err(e) => return unreadable(e),
            };
            // Hand over the chunk without the parts that are typed-ahead echo.
            let (start, end) = (pos, pos + n as u64);
            let mut from = start;
            while from < end && !stopped {
                while d < drops.len() && drops[d].0 + drops[d].1 <= from {
                    d += 1;
                }
                let (upto, skip_to) = match drops.get(d) {
                    Some(&(at, len)) if at < end => (at.max(from), (at + len).min(end)),
                    _ => (end, end),
                };
                if upto > from {
                    let part = &buf[(from - start) as usize..(upto - start) as usize];
                    stopped = !f(part);
                }
                from = skip_to.max(upto);
            }
            pos = end;
            if stopped {
                // The rest of this frame is counted, not read.
                pos = frame_start + h.len;
                break;
            }
        }
    }
    if stopped {
        ReadEnd::Stopped { bytes: pos }
    } else {
        ReadEnd::Complete
    }
}

/// A renderer for `src`'s terminal; lines longer than `line_cap` chars (0 = no cap) keep only
/// their head and tail.
fn renderer(src: &Source, line_cap: usize) -> Renderer {
    if line_cap == 0 {
        Renderer::new(src.cols, src.rows)
    } else {
        Renderer::with_line_cap(src.cols, src.rows, line_cap)
    }
    .with_screens(src.screens, src.program.clone())
}

/// Counts bytes that are neither text nor terminal control, for [`OutputKind::Binary`].
#[derive(Default)]
struct BinaryCounter {
    total: u64,
    odd: u64,
    /// An incomplete UTF-8 sequence at the end of the last chunk.
    carry: Vec<u8>,
}

impl BinaryCounter {
    fn feed(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let mut joined;
        let mut rest: &[u8] = if self.carry.is_empty() {
            bytes
        } else {
            joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(bytes);
            &joined
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    self.odd += count_odd_controls(s.as_bytes());
                    break;
                }
                Err(e) => {
                    let good = e.valid_up_to();
                    self.odd += count_odd_controls(&rest[..good]);
                    match e.error_len() {
                        Some(bad) => {
                            self.odd += bad as u64;
                            rest = &rest[good + bad..];
                        }
                        None => {
                            self.carry = rest[good..].to_vec();
                            break;
                        }
                    }
                }
            }
        }
    }

    fn binary(&self) -> bool {
        self.total >= 32 && self.odd as f64 > self.total as f64 * BINARY_SHARE
    }
}

/// Control bytes that text and terminal output do not use.
#[cfg(test)]
fn is_odd_control(b: u8) -> bool {
    matches!(b, 0x00..=0x06 | 0x0e..=0x1a | 0x1c..=0x1f | 0x7f)
}

/// How many bytes of `bytes` are control bytes that text and terminal output do not use
/// (0x00-0x06, 0x0e-0x1a, 0x1c-0x1f, 0x7f; `is_odd_control` in the tests): written without
/// branches, in blocks whose count fits a byte, so that it compiles to vector instructions
/// (this runs over every byte read).
fn count_odd_controls(bytes: &[u8]) -> u64 {
    bytes
        .chunks(255)
        .map(|block| {
            block.iter().fold(0u8, |n, &b| {
                n + (u8::from(b <= 0x06)
                    | u8::from(b.wrapping_sub(0x0e) <= 0x1a - 0x0e)
                    | u8::from(b.wrapping_sub(0x1c) <= 0x1f - 0x1c)
                    | u8::from(b == 0x7f))
            })
        })
        .map(u64::from)
        .sum()
}

/// Builds a [`Digest`] from rendered lines.
struct Builder {
    d: Digest,
    tail: VecDeque<StoredLine>,
    in_key: bool,
    /// Lines handed over in all, erased ones included.
    emitted: u64,
}

const HASH_SEED: u64 = 0xcbf2_9ce4_8422_2325;
const HASH_MUL: u64 = 0x9e37_79b9_7f4a_7c15;

/// Folds `bytes` into the running hash `h`, eight bytes at a time (a hash for telling outputs
/// apart, not a cryptographic one; stable across versions, as cached digests keep it).
fn mix(mut h: u64, bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(HASH_MUL).rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(last) ^ (rest.len() as u64) << 59)
            .wrapping_mul(HASH_MUL)
            .rotate_left(29);
    }
    h
}

fn longest_backtick_run(s: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for b in s.bytes() {
        if b == b'`' {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// Tracks private key blocks across lines: whether `line` belongs to one.
pub(crate) fn key_block_state(in_key: &mut bool, head: &str, tail: &str) -> bool {
    // Most lines have no dash at all: a byte search settles them.
    let dashes = |s: &str| s.contains('-') && s.contains("-----");
    if !*in_key && !dashes(head) && !dashes(tail) {
        return false;
    }
    let has = |s: &str| head.contains(s) || tail.contains(s);
    if !*in_key && has("-----BEGIN ") && has("PRIVATE KEY") {
        *in_key = true;
    }
    if *in_key {
        // The END line belongs to the block.
        let ends = has("-----END ");
        let begins_again = has("-----BEGIN ");
        if ends && !(begins_again && !tail.contains("-----END ") && !head.contains("-----END ")) {
            *in_key = false;
        }
        return true;
    }
    false
}

impl Builder {
    fn new(caps: Caps) -> Builder {
        Builder {
            d: Digest {
                lines: 0,
                head: Vec::new(),
                tail: Vec::new(),
                errors: Vec::new(),
                errors_full: false,
                kind: OutputKind::Text,
                hash: HASH_SEED,
                backticks: 0,
                bytes: 0,
                erased: 0,
                caps,
            },
            tail: VecDeque::new(),
            in_key: false,
            emitted: 0,
        }
    }

    fn finish(mut self) -> Digest {
        self.d.tail = self.tail.into_iter().collect();
        self.d
    }
}

impl LineSink for Builder {
    fn line(&mut self, line: Line<'_>) {
        self.emitted += 1;
        let key_block = key_block_state(&mut self.in_key, line.head, line.tail);
        let fill = |l: &mut StoredLine| {
            l.head.clear();
            l.head.push_str(line.head);
            l.tail.clear();
            l.tail.push_str(line.tail);
            l.omitted = line.omitted;
            l.key_block = key_block;
        };
        let d = &mut self.d;
        let i = d.lines;
        d.lines += 1;
        d.hash = mix(d.hash, line.head.as_bytes());
        d.hash = mix(d.hash, &line.omitted.to_le_bytes());
        d.hash = mix(d.hash, line.tail.as_bytes());
        if line.head.contains('`') || line.tail.contains('`') {
            d.backticks = d
                .backticks
                .max(longest_backtick_run(line.head))
                .max(longest_backtick_run(line.tail));
        }
        if i >= d.caps.head as u64
            && !d.errors_full
            && !key_block
            && (looks_like_error(line.head) || looks_like_error(line.tail))
        {
            if d.errors.len() < d.caps.errors {
                let mut l = StoredLine::default();
                fill(&mut l);
                d.errors.push((i, l));
            } else {
                d.errors_full = true;
            }
        }
        if (i as usize) < d.caps.head {
            let mut l = StoredLine::default();
            fill(&mut l);
            d.head.push(l);
        }
        if d.caps.tail > 0 {
            // The line falling out of the tail lends its buffers to the new one.
            let mut l = if self.tail.len() == d.caps.tail {
                self.tail.pop_front().unwrap_or_default()
            } else {
                StoredLine::default()
            };
            fill(&mut l);
            self.tail.push_back(l);
        }
    }

    fn erase_scrollback(&mut self) {
        let caps = self.d.caps;
        self.d = Builder::new(caps).d;
        self.d.erased = self.emitted;
        self.tail.clear();
    }
}

/// [`is_error_line`], with a quick answer for lines without letters (numbers, blank lines).
fn looks_like_error(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_alphabetic()) && is_error_line(s)
}

/// Reads and renders `src` into a digest with `caps`.
pub(crate) fn digest(src: &Source, caps: Caps) -> Digest {
    digest_with(src, caps, &mut NoLines)
}

/// Lines go nowhere.
struct NoLines;
impl LineSink for NoLines {
    fn line(&mut self, _: Line<'_>) {}
    fn erase_scrollback(&mut self) {}
}

/// Hands every line to both sinks; with `whole`, lines are rendered whole up to a cap above
/// the digest's: `also` gets them as rendered, the builder as rendering at its cap would have
/// made them ([`crate::term::render::clip_whole`], [`reclip`]), and a line whose clip at the
/// builder's cap cannot be told sets `over`.
struct Both<'a> {
    b: &'a mut Builder,
    also: &'a mut dyn LineSink,
    whole: bool,
    over: bool,
}
impl LineSink for Both<'_> {
    fn line(&mut self, line: Line<'_>) {
        if !self.whole {
            self.also.line(Line {
                head: line.head,
                omitted: line.omitted,
                tail: line.tail,
            });
            self.b.line(line);
            return;
        }
        if self.over {
            return;
        }
        let cap = self.b.d.caps.line_cap;
        if line.omitted > 0 || !line.tail.is_empty() {
            // Longer than `whole`: `also` gets it clipped as a renderer at `whole` clips it
            // (what a writer at that cap renders), the builder as one at its own cap would.
            let Some((head, omitted, tail)) = reclip(line, cap) else {
                self.over = true;
                return;
            };
            self.also.line(line);
            self.b.line(Line {
                head: &head,
                omitted,
                tail: &tail,
            });
            return;
        }
        self.also.line(Line {
            head: line.head,
            omitted: 0,
            tail: "",
        });
        if line.head.len() <= cap {
            self.b.line(line);
        } else {
            let (head, omitted, tail) = crate::term::render::clip_whole(line.head, cap);
            self.b.line(Line {
                head: &head,
                omitted,
                tail: &tail,
            });
        }
    }
    fn erase_scrollback(&mut self) {
        self.b.erase_scrollback();
        self.also.erase_scrollback();
    }
}

/// What a renderer with line cap `cap` hands over for a line that one with a larger cap
/// handed over as `line` (clipped: `head`, `omitted` chars, `tail`); `None` when `line` keeps
/// too little of either end to tell (its cap is not above `cap` by more than the chars a cut
/// word leaves out, see [`crate::term::render::clip_whole`]).
///
/// The clip at `cap` depends only on the line's first `cap / 2 + 1` chars, its last
/// `cap / 2 + 1` chars and its length: clipping those ends, joined, and adding the chars
/// between them to what is omitted gives the same as clipping the whole line.
fn reclip(line: Line<'_>, cap: usize) -> Option<(String, u64, String)> {
    let half = cap / 2;
    let head_end = line
        .head
        .char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .nth(half)?;
    let tail_start = line.tail.char_indices().rev().nth(half)?.0;
    let mut ends = String::with_capacity(head_end + line.tail.len() - tail_start);
    ends.push_str(&line.head[..head_end]);
    ends.push_str(&line.tail[tail_start..]);
    let kept = 2 * (half as u64 + 1);
    let chars = line.head.chars().count() as u64 + line.omitted + line.tail.chars().count() as u64;
    let (head, omitted, tail) = crate::term::render::clip_whole(&ends, cap);
    Some((head, omitted + (chars - kept), tail))
}

/// [`digest`], also handing every line to `also` (one rendering pass for both).
fn digest_with(src: &Source, caps: Caps, also: &mut dyn LineSink) -> Digest {
    digest_rendered(src, caps, None, also).0
}

/// [`digest_with`], rendering lines whole up to `whole` chars (at least the caps' line cap)
/// for `also` when given (see [`Both`]); also whether a line was longer than that.
fn digest_rendered(
    src: &Source,
    caps: Caps,
    whole: Option<usize>,
    also: &mut dyn LineSink,
) -> (Digest, bool) {
    let mut r = renderer(src, whole.unwrap_or(caps.line_cap));
    let mut b = Builder::new(caps);
    let mut both = Both {
        b: &mut b,
        also,
        whole: whole.is_some(),
        over: false,
    };
    let mut counter = BinaryCounter::default();
    let end = output_chunks(src, &mut |chunk| {
        counter.feed(chunk);
        if counter.total >= BINARY_PROBE && counter.binary() {
            return false;
        }
        r.feed_into(chunk, &mut both);
        !both.over
    });
    if end == ReadEnd::Complete {
        r.finish_into(&mut both);
    }
    let over = both.over;
    let d = match end {
        ReadEnd::Complete => {
            let mut d = b.finish();
            d.bytes = counter.total;
            if counter.binary() {
                d.kind = OutputKind::Binary { bytes: d.bytes };
            }
            d
        }
        ReadEnd::Stopped { bytes } => {
            let mut d = b.finish();
            d.bytes = bytes;
            d.kind = OutputKind::Binary { bytes };
            d
        }
        ReadEnd::Unreadable(why) => {
            let mut d = b.finish();
            d.bytes = counter.total;
            d.kind = OutputKind::Unreadable(why);
            d
        }
    };
    (d, over)
}

/// [`digest_and_lines`], handing `also` every line whole up to `whole` chars (at least
/// [`LINE_CAP`]), a longer one as a renderer with line cap `whole` clips it, while the digest
/// keeps them as usual. `None` when a line was longer than `whole` and `whole` is too close to
/// [`LINE_CAP`] for the digest's clip of it to be known from that one ([`reclip`]; reading
/// stopped there; nothing is cached).
pub(crate) fn digest_and_whole_lines(
    c: &Candidate,
    whole: usize,
    also: &mut dyn LineSink,
) -> Option<Digest> {
    let (d, over) = digest_rendered(&Source::of(c), Caps::STANDARD, Some(whole), also);
    if over {
        return None;
    }
    if let Some(cached) = Cached::of(c) {
        cached.save(&d);
    }
    Some(d)
}

/// Renders `src` again and hands every line to `f` with its number, skipping the `erased`
/// lines an erase of the scrollback removed (as its [`Digest`] says). Lines longer than
/// `line_cap` chars keep their head and tail.
pub(crate) fn for_each_line(
    src: &Source,
    line_cap: usize,
    erased: u64,
    f: &mut dyn FnMut(u64, Line<'_>),
) {
    for_each_line_while(src, line_cap, erased, &mut |i, line| {
        f(i, line);
        true
    });
}

/// [`for_each_line`] until `f` returns `false`: reading stops there, so the lines after the
/// last one wanted are never rendered (a range from the start of a huge output costs what
/// the range costs).
pub(crate) fn for_each_line_while(
    src: &Source,
    line_cap: usize,
    erased: u64,
    f: &mut dyn FnMut(u64, Line<'_>) -> bool,
) {
    struct Emit<'a> {
        seen: u64,
        erased: u64,
        stop: bool,
        f: &'a mut dyn FnMut(u64, Line<'_>) -> bool,
    }
    impl LineSink for Emit<'_> {
        fn line(&mut self, line: Line<'_>) {
            if self.stop {
                return;
            }
            if self.seen >= self.erased {
                self.stop = !(self.f)(self.seen - self.erased, line);
            }
            self.seen += 1;
        }
        fn erase_scrollback(&mut self) {}
    }
    let mut r = renderer(src, line_cap);
    let mut sink = Emit {
        seen: 0,
        erased,
        stop: false,
        f,
    };
    let end = output_chunks(src, &mut |chunk| {
        r.feed_into(chunk, &mut sink);
        !sink.stop
    });
    if end == ReadEnd::Complete && !sink.stop {
        r.finish_into(&mut sink);
    }
}

/// Finds the first line that matches a pattern (head and tail of lines longer than the cap).
struct Find<'a> {
    re: &'a regex::Regex,
    found: bool,
}

impl LineSink for Find<'_> {
    fn line(&mut self, line: Line<'_>) {
        self.found = self.found || self.re.is_match(line.head) || self.re.is_match(line.tail);
    }
    fn erase_scrollback(&mut self) {}
}

/// Whether any rendered line of `src` matches `re` (lines longer than [`LINE_CAP`] chars are
/// matched on their head and tail). Stops reading at the first match.
fn output_matches(src: &Source, re: &regex::Regex) -> bool {
    let mut r = renderer(src, LINE_CAP);
    let mut sink = Find { re, found: false };
    let end = output_chunks(src, &mut |chunk| {
        r.feed_into(chunk, &mut sink);
        !sink.found
    });
    if end == ReadEnd::Complete && !sink.found {
        r.finish_into(&mut sink);
    }
    sink.found
}

/// Whether the output of `c` matches `re`. A large output without a cached digest is digested
/// in the same pass and the digest cached, so a command that matched is not rendered again to
/// be shown. (Output recognised as binary is searched only as far as it was read.)
pub(crate) fn command_output_matches(c: &Candidate, re: &regex::Regex) -> bool {
    let src = Source::of(c);
    match Cached::of(c) {
        Some(cached) if cached.load().is_none() => {
            let mut find = Find { re, found: false };
            let d = digest_with(&src, Caps::STANDARD, &mut find);
            cached.save(&d);
            find.found
        }
        _ => output_matches(&src, re),
    }
}

/// Renders the output of `c` once, handing every line to `also`, and returns its digest (cached
/// for later calls when the output is large and finished, as [`cached_digest`] would).
pub(crate) fn digest_and_lines(c: &Candidate, also: &mut dyn LineSink) -> Digest {
    let d = digest_with(&Source::of(c), Caps::STANDARD, also);
    if let Some(cached) = Cached::of(c) {
        cached.save(&d);
    }
    d
}

/// The numbers of the first `limit` error-looking lines of `src` (after the `erased` ones).
pub(crate) fn error_line_numbers(src: &Source, erased: u64, limit: usize) -> Vec<u64> {
    let mut out = Vec::new();
    for_each_line(src, LINE_CAP, erased, &mut |i, line| {
        if out.len() < limit && (is_error_line(line.head) || is_error_line(line.tail)) {
            out.push(i);
        }
    });
    out
}

/// The digest of `c`, from the cache when a valid one is there; large finished outputs are
/// cached for the next call.
pub(crate) fn cached_digest(c: &Candidate) -> Digest {
    let cached = Cached::of(c);
    if let Some(d) = cached.as_ref().and_then(Cached::load) {
        return d;
    }
    let d = digest(&Source::of(c), Caps::STANDARD);
    if let Some(cached) = cached {
        cached.save(&d);
    }
    d
}

/// The digest of `c` when a valid one is cached (nothing is rendered).
pub(crate) fn digest_if_cached(c: &Candidate) -> Option<Digest> {
    Cached::of(c)?.load()
}

/// Where the digest of a large finished output is cached, and under which key.
struct Cached<'a> {
    dir: &'a std::path::Path,
    path: PathBuf,
    key: CacheKey,
}

impl<'a> Cached<'a> {
    /// `None` for outputs not worth caching: small, or still growing.
    fn of(c: &'a Candidate) -> Option<Cached<'a>> {
        if c.open_ended() || c.record.stream_length < store::cache::MIN_CACHED_LENGTH {
            return None;
        }
        let src = Source::of(c);
        Some(Cached {
            dir: &c.session_dir,
            path: store::cache::path(&c.session_dir, c.record.seq),
            key: CacheKey {
                version: DIGEST_VERSION,
                stream_offset: c.record.stream_offset,
                stream_length: c.record.stream_length,
                cols: src.cols,
                rows: src.rows,
                next_command_line: src.next_command_line,
                depth: src.depth,
                screens: src.screens,
            },
        })
    }

    fn load(&self) -> Option<Digest> {
        store::cache::load::<CacheKey, Digest>(&self.path, &self.key)
            .filter(|d| d.caps == Caps::STANDARD)
    }

    /// Caches `d` (not an unreadable one: the damage may be repaired). Failing to write is
    /// ignored: it is only a cache.
    fn save(&self, d: &Digest) {
        if !matches!(d.kind, OutputKind::Unreadable(_)) {
            let _ = store::cache::save(self.dir, &self.path, &self.key, d);
        }
    }
}

/// What a cached digest was made from: a cache entry serves only the same inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct CacheKey {
    version: u32,
    stream_offset: u64,
    stream_length: u64,
    cols: u16,
    rows: u16,
    next_command_line: Option<String>,
    /// Absent in entries of versions that read only depth 0 (their digests are the same).
    #[serde(default)]
    depth: u32,
    /// What full-screen programs left in the lines.
    #[serde(default)]
    screens: Screens,
}

/// The whole rendered output of `src` as lines.
#[cfg(test)]
pub(crate) fn rendered_lines(src: &Source) -> Vec<String> {
    let mut out = Vec::new();
    for_each_line(src, 0, 0, &mut |_, l| {
        let mut s = l.head.to_string();
        s.push_str(l.tail);
        out.push(s);
    });
    out
}

#[cfg(test)]
mod tests;
