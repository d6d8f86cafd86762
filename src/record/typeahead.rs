//! Keys typed while the terminal echoes them, and where that echo lies in the shell's output.
//!
//! While a command runs, bash and zsh leave the terminal in canonical mode with ECHO: a key typed
//! then is echoed by the terminal itself, into the command's output, though it may be the start
//! of the shell's next line ("type-ahead"), and that line may turn out private. The shell says
//! so only when it runs the line. [`Tracker`] follows every key typed while the terminal echoes
//! (the recorder only ever sees keys typed then):
//!
//! - It runs each key through a model of the Linux line discipline ([`EchoModes`], from the
//!   pseudo-terminal's termios when the key was read): what the terminal echoes for it (a
//!   character as it is, Enter as CR LF, a control key as `^X`, an erase as `\b \b`, ...) and
//!   where the lines the terminal hands to a reader end (Enter, Ctrl-D; Ctrl-C discards the
//!   line). Keys whose echo cannot be foretold (erasing a tab, unusual output modes) are marked
//!   so.
//! - It finds each key's echo in the output as it arrives: the terminal echoes keys in the
//!   order they were typed, each as one run, after the key, so the echo of a key is at or
//!   after the first occurrence of its predicted bytes after the key (and after the echo of
//!   the key before it). An echo found right where the search began (no output of the command
//!   in between) is certain. One found after other output (the kernel echoes from a worker
//!   thread: on a busy machine the command's next output often comes first) may be a
//!   coincidence in the command's output, so the output from there on is watched for the same
//!   bytes until the shell runs a line (`Again`): if they are not there again (the echoes of
//!   other keys aside, or only in output dropped anyway), that one place is the echo;
//!   otherwise all from it to the end of its window counts as possibly its echo.
//! - It decides, once the recorder knows who read a line ([`Reader`]), each line's fate
//!   ([`Fate`]): the command read it, or the shell ran it and recorded it, so its echo and keys
//!   stay where they are; or it is private, or not known yet, so its echo is taken out of
//!   what the recorder holds and its keys are held until the shell runs it.
//!
//! Lines are matched to what the shell ran by their text: a line's keys are only ever written
//! when the command that ran reads the same (or when an earlier command read them), and a
//! private line clears everything typed ahead. Everything here is bounded ([`TRACK_CAP`]): keys
//! past the bound are neither kept nor searched for, and everything from them on is treated as
//! possibly their echo.
//!
//! What this rests on, and its limits:
//! - The terminal echoes a key within microseconds of its being written, so its echo lies before
//!   the shell's next line starts (the shell must read the key first), or right at its start:
//!   a search still open when the shell runs a line accepts only an echo right there.
//! - An echo is taken as certain when nothing of the command's came between the key and it. A
//!   command that printed, at that very instant (before the terminal echoed the key), the
//!   very bytes the key echoes would be taken for the echo, and the echo itself left in place.
//! - The bytes of a late echo that are common in the output (a space among spaces, Enter among
//!   lines) are there again: then the output from the echo's first possible place to the line
//!   the shell runs next is lost, never a private line.
//! - Only keys read while the terminal echoes are followed. A key read just before a program
//!   turns echo on, but handled by the terminal just after, is echoed unseen; this needs two
//!   reads of the keyboard within the instant the shell starts a command (a paste arrives in
//!   one read, and is read by the line editor as a whole).

use std::collections::VecDeque;
use std::ops::Range;

/// Most bytes of keys (and their predicted echo) followed at once.
pub const TRACK_CAP: usize = 1024 * 1024;
/// Output scanned for a key's echo before it counts as not found.
const SEARCH_SPAN: u64 = 256 * 1024;
/// A run of a long echo this long, then other output, is a piece of it: the terminal writes a
/// long echo in pieces, between which a command's output can land.
const PIECE_MIN: usize = 64;
/// The line discipline's longest line (N_TTY_BUF_SIZE - 1); past it the model stops.
const LINE_MAX: usize = 4095;
/// Most reads of keys followed at once.
const MAX_BATCHES: usize = 4096;
/// Most echoes found after other output watched at once for their bytes coming again.
const MAX_WATCHED: usize = 64;
/// Longest echo watched so.
const WATCH_MAX: usize = 4096;

pub type LineId = u64;
pub type BatchId = u64;

/// A terminal's control characters (Linux's `_POSIX_VDISABLE`, 0, is off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlChars {
    pub erase: u8,
    pub kill: u8,
    pub werase: u8,
    pub eof: u8,
    pub eol: u8,
    pub eol2: u8,
    pub intr: u8,
    pub quit: u8,
    pub susp: u8,
    pub lnext: u8,
    pub reprint: u8,
    pub start: u8,
    pub stop: u8,
}

/// How the terminal treats typed bytes, as far as their echo goes: the pseudo-terminal's
/// termios when a key was read, with echo on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EchoModes {
    pub icanon: bool,
    pub echoctl: bool,
    pub echoe: bool,
    pub echok: bool,
    pub echoke: bool,
    pub iexten: bool,
    pub isig: bool,
    pub noflsh: bool,
    pub icrnl: bool,
    pub igncr: bool,
    pub inlcr: bool,
    pub ixon: bool,
    pub istrip: bool,
    pub iutf8: bool,
    pub opost: bool,
    pub onlcr: bool,
    /// Modes the model does not follow (ECHOPRT, IUCLC, IXANY, OLCUC, OCRNL, ONOCR, ONLRET,
    /// tab expansion, EXTPROC): the echo of keys typed under them is not foretold.
    pub unusual: bool,
    pub cc: ControlChars,
}

impl Default for EchoModes {
    /// Linux's defaults for a new terminal (`stty sane`), as bash and zsh leave it for a command.
    fn default() -> EchoModes {
        EchoModes {
            icanon: true,
            echoctl: true,
            echoe: true,
            echok: true,
            echoke: true,
            iexten: true,
            isig: true,
            noflsh: false,
            icrnl: true,
            igncr: false,
            inlcr: false,
            ixon: true,
            istrip: false,
            iutf8: false,
            opost: true,
            onlcr: true,
            unusual: false,
            cc: ControlChars {
                erase: 0x7f,
                kill: 0x15,
                werase: 0x17,
                eof: 0x04,
                eol: 0,
                eol2: 0,
                intr: 0x03,
                quit: 0x1c,
                susp: 0x1a,
                lnext: 0x16,
                reprint: 0x12,
                start: 0x11,
                stop: 0x13,
            },
        }
    }
}

impl EchoModes {
    pub fn from_termios(t: &nix::sys::termios::Termios) -> EchoModes {
        use nix::sys::termios::{
            InputFlags as I, LocalFlags as L, OutputFlags as O, SpecialCharacterIndices as C,
        };
        let (i, o, l) = (t.input_flags, t.output_flags, t.local_flags);
        let cc = |c: C| t.control_chars[c as usize];
        let unusual = l.intersects(L::ECHOPRT | L::EXTPROC)
            || i.intersects(I::IUCLC | I::IXANY)
            || (o.contains(O::OPOST)
                && (o.intersects(O::OLCUC | O::OCRNL | O::ONOCR | O::ONLRET)
                    || o.contains(O::TAB3)));
        EchoModes {
            icanon: l.contains(L::ICANON),
            echoctl: l.contains(L::ECHOCTL),
            echoe: l.contains(L::ECHOE),
            echok: l.contains(L::ECHOK),
            echoke: l.contains(L::ECHOKE),
            iexten: l.contains(L::IEXTEN),
            isig: l.contains(L::ISIG),
            noflsh: l.contains(L::NOFLSH),
            icrnl: i.contains(I::ICRNL),
            igncr: i.contains(I::IGNCR),
            inlcr: i.contains(I::INLCR),
            ixon: i.contains(I::IXON),
            istrip: i.contains(I::ISTRIP),
            iutf8: i.contains(I::IUTF8),
            opost: o.contains(O::OPOST),
            onlcr: o.contains(O::ONLCR),
            unusual,
            cc: ControlChars {
                erase: cc(C::VERASE),
                kill: cc(C::VKILL),
                werase: cc(C::VWERASE),
                eof: cc(C::VEOF),
                eol: cc(C::VEOL),
                eol2: cc(C::VEOL2),
                intr: cc(C::VINTR),
                quit: cc(C::VQUIT),
                susp: cc(C::VSUSP),
                lnext: cc(C::VLNEXT),
                reprint: cc(C::VREPRINT),
                start: cc(C::VSTART),
                stop: cc(C::VSTOP),
            },
        }
    }
}

/// `byte` is the control character `cc`, which is not disabled.
fn is(byte: u8, cc: u8) -> bool {
    cc != 0 && byte == cc
}

/// The kernel's `iscntrl` (its table leaves 0x80-0x9f alone).
fn is_cntrl(c: u8) -> bool {
    c < 0x20 || c == 0x7f
}

/// The kernel's `isalnum` (Latin-1).
fn is_alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric() || (c >= 0xc0 && c != 0xd7 && c != 0xf7)
}

fn is_continuation(c: u8) -> bool {
    c & 0xc0 == 0x80
}

/// A byte through output processing (OPOST), as the terminal writes its echo.
fn out_char(m: &EchoModes, c: u8, echo: &mut Vec<u8>) {
    if m.opost && m.onlcr && c == b'\n' {
        echo.extend_from_slice(b"\r\n");
    } else {
        echo.push(c);
    }
}

/// The echo of a character: a control character as `^X` (with ECHOCTL), others as they are.
fn echo_char(m: &EchoModes, c: u8, echo: &mut Vec<u8>) {
    if m.echoctl && is_cntrl(c) && c != b'\t' {
        echo.extend_from_slice(&[b'^', c ^ 0x40]);
    } else {
        out_char(m, c, echo);
    }
}

/// What a typed byte did to the terminal's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// Added to the line, edited it, or nothing.
    Plain,
    /// Ended the line: a reader can have it.
    End,
    /// A signal key (Ctrl-C): the terminal threw away the line and everything unread.
    Discard,
}

/// The line discipline's state that the echo depends on: the line being typed.
#[derive(Debug, Default, Clone)]
struct Discipline {
    line: Vec<u8>,
    /// The text of the line that ended last (what a reader gets).
    ended: Vec<u8>,
    /// The last key was the literal-next key (Ctrl-V).
    lnext: bool,
}

impl Discipline {
    /// One typed byte through the line discipline (Linux's `n_tty`): appends what the terminal
    /// echoes for it to `echo` and says what it did; `None` when its echo cannot be foretold.
    fn key(&mut self, m: &EchoModes, byte: u8, echo: &mut Vec<u8>) -> Option<Effect> {
        let mut c = if m.istrip { byte & 0x7f } else { byte };
        if std::mem::take(&mut self.lnext) {
            echo_char(m, c, echo);
            return self.push(c);
        }
        if m.ixon && (is(c, m.cc.start) || is(c, m.cc.stop)) {
            return Some(Effect::Plain);
        }
        if m.isig && (is(c, m.cc.intr) || is(c, m.cc.quit) || is(c, m.cc.susp)) {
            echo_char(m, c, echo);
            if m.noflsh {
                return Some(Effect::Plain);
            }
            self.line.clear();
            return Some(Effect::Discard);
        }
        let mut translated = false;
        if c == b'\r' {
            if m.igncr {
                return Some(Effect::Plain);
            }
            if m.icrnl {
                c = b'\n';
                translated = true;
            }
        } else if c == b'\n' && m.inlcr {
            c = b'\r';
        }
        if m.icanon {
            if is(c, m.cc.erase) || is(c, m.cc.kill) || (m.iexten && is(c, m.cc.werase)) {
                return self.erase(m, c, echo).map(|()| Effect::Plain);
            }
            if m.iexten && is(c, m.cc.lnext) {
                self.lnext = true;
                if m.echoctl {
                    echo.extend_from_slice(b"^\x08");
                }
                return Some(Effect::Plain);
            }
            if m.iexten && is(c, m.cc.reprint) {
                echo_char(m, c, echo);
                out_char(m, b'\n', echo);
                for &b in &self.line {
                    echo_char(m, b, echo);
                }
                return Some(Effect::Plain);
            }
            if c == b'\n' {
                out_char(m, b'\n', echo);
                self.ended = std::mem::take(&mut self.line);
                return Some(Effect::End);
            }
            if is(c, m.cc.eof) {
                self.ended = std::mem::take(&mut self.line);
                return Some(Effect::End);
            }
            if is(c, m.cc.eol) || (m.iexten && is(c, m.cc.eol2)) {
                echo_char(m, c, echo);
                self.ended = std::mem::take(&mut self.line);
                return Some(Effect::End);
            }
        }
        if c == b'\n' && (m.icanon || translated) {
            out_char(m, b'\n', echo);
        } else {
            echo_char(m, c, echo);
        }
        self.push(c)
    }

    fn push(&mut self, c: u8) -> Option<Effect> {
        if self.line.len() >= LINE_MAX {
            return None;
        }
        self.line.push(c);
        Some(Effect::Plain)
    }

    /// Erase, word erase and kill (the kernel's `eraser`).
    fn erase(&mut self, m: &EchoModes, c: u8, echo: &mut Vec<u8>) -> Option<()> {
        #[derive(PartialEq)]
        enum Kind {
            Erase,
            Word,
            Kill,
        }
        if self.line.is_empty() {
            return Some(());
        }
        let kind = if is(c, m.cc.erase) {
            Kind::Erase
        } else if is(c, m.cc.werase) {
            Kind::Word
        } else {
            Kind::Kill
        };
        if kind == Kind::Kill && !(m.echok && m.echoke && m.echoe) {
            self.line.clear();
            echo_char(m, c, echo);
            if m.echok {
                out_char(m, b'\n', echo);
            }
            return Some(());
        }
        let mut seen_alnums = 0;
        let mut known = true;
        while !self.line.is_empty() {
            let mut start = self.line.len() - 1;
            if m.iutf8 {
                while start > 0 && is_continuation(self.line[start]) {
                    start -= 1;
                }
            }
            let first = self.line[start];
            if m.iutf8 && is_continuation(first) {
                break;
            }
            if kind == Kind::Word {
                if is_alnum(first) || first == b'_' {
                    seen_alnums += 1;
                } else if seen_alnums > 0 {
                    break;
                }
            }
            self.line.truncate(start);
            if kind == Kind::Erase && !m.echoe {
                echo_char(m, m.cc.erase, echo);
            } else if first == b'\t' {
                // How far back a tab goes depends on the column it started in.
                known = false;
            } else {
                if is_cntrl(first) && m.echoctl {
                    echo.extend_from_slice(b"\x08 \x08");
                }
                if !is_cntrl(first) || m.echoctl {
                    echo.extend_from_slice(b"\x08 \x08");
                }
            }
            if kind == Kind::Erase {
                break;
            }
        }
        known.then_some(())
    }
}

/// Where a key's echo is, as far as is known.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Echo {
    /// Not found yet: these bytes are expected, in one run, after the key.
    Expected(Vec<u8>),
    /// Found: these output ranges. `certain` unless other output came between the key and it
    /// (then it may be a coincidence, and anything from the key on may be the echo).
    Found {
        pieces: Vec<(u64, u64)>,
        certain: bool,
    },
    /// Not foretold, or not found where it had to be: anything from the key to the end of its
    /// window may be its echo.
    Unknown,
}

/// The keys of one line typed in one read.
#[derive(Debug)]
struct Batch {
    id: BatchId,
    line: LineId,
    at: u64,
    /// Output position when the key was typed: its echo comes after.
    key_pos: u64,
    keys: Vec<u8>,
    /// The keys' frame was taken out of what was written: they are written when the line turns
    /// out to be kept.
    withheld: bool,
    /// The key frame was never to be written (typed into a private command).
    unwritable: bool,
    echo: Echo,
    /// For an echo found after other output: whether its bytes came again in its window.
    again: Again,
    /// Where the echo can no longer be (the shell ran a line after this key was typed).
    window_end: Option<u64>,
}

/// Whether the bytes of an echo found after other output came again before its window closed.
/// The echo lies in its window, at or after the first place its bytes are found; when they are
/// there only once (or again only in output that is dropped anyway), that once is the echo,
/// and only it is taken out. Otherwise any of them may be the echo, and all of the window from
/// the first may be.
#[derive(Debug)]
enum Again {
    /// Not watched: the echo is certain, or was found in pieces, or too many were watched.
    Unwatched,
    /// Output from `from` on is watched for the bytes `want` (the KMP state as in [`Search`]).
    Watching {
        from: u64,
        want: Vec<u8>,
        fail: Vec<usize>,
        matched: usize,
    },
    /// The window closed and the bytes were there only once.
    Once,
    /// The bytes came again at this output position (or were watched only up to it).
    At(u64),
}

/// A line as the terminal hands it to a reader.
#[derive(Debug)]
pub struct Line {
    pub id: LineId,
    /// What the reader gets: the line after the terminal's editing keys.
    text: Vec<u8>,
    /// `text` is what the keys made of the line (no key the model does not follow).
    exact: bool,
    /// A line end was typed: a reader can have it.
    ended: bool,
    /// A signal key threw it away: nobody reads it.
    discarded: bool,
}

/// What happens to a line's echo and keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Read by the command, or run by the shell and recorded: echo and keys stay.
    Keep,
    /// Private or not known yet: the echo is taken out, the keys are held.
    Strip,
    /// Echo taken out, keys dropped, line forgotten (private, or given up).
    Drop,
}

/// Who read the lines typed ahead, as far as the recorder knows.
#[derive(Debug, Clone, Copy)]
pub enum Reader<'a> {
    /// The shell ran this line, recorded (`hidden` false) or private; `typed` is how it was
    /// typed when history expansion changed it.
    Ran {
        line: &'a str,
        typed: Option<&'a str>,
        hidden: bool,
    },
    /// The shell read an empty line, or the line was given up (Ctrl-C at the prompt).
    NothingRan,
    /// Not known (yet).
    Unknown,
}

/// What to do to the frames about to be written.
#[derive(Debug, Default)]
pub struct Plan {
    /// Output ranges to take out (sorted, disjoint).
    pub removals: Vec<Range<u64>>,
    /// Key frames to take out (sorted).
    pub keys_out: Vec<BatchId>,
    /// Keys withheld earlier whose line is now kept, to be written (time, bytes).
    pub keys_in: Vec<(u64, Vec<u8>)>,
}

/// The fate of every line followed, in typing order.
#[derive(Debug, Default)]
pub struct Decision {
    fates: Vec<(LineId, Fate)>,
    /// The output from here on is dropped whatever the lines' fates (the frames held since a
    /// command ended, when the shell ran a private line).
    dropped_from: Option<u64>,
}

impl Decision {
    /// The same decision, knowing that the output from `pos` on is dropped anyway.
    pub fn dropping_from(mut self, pos: u64) -> Decision {
        self.dropped_from = Some(pos);
        self
    }

    pub fn fate(&self, line: LineId) -> Option<Fate> {
        // In line order, which is id order.
        let i = self.fates.binary_search_by_key(&line, |&(l, _)| l).ok()?;
        Some(self.fates[i].1)
    }

    /// Whether some line's echo is taken out.
    pub fn strips(&self) -> bool {
        self.fates.iter().any(|(_, f)| *f != Fate::Keep)
    }
}

/// The search for the echo of the oldest key whose echo has not been found.
#[derive(Debug)]
struct Search {
    batch: BatchId,
    /// Where the search began: an echo found here is certain.
    from: u64,
    /// Only an echo right at `from` counts (the shell has run a line since the key).
    strict: bool,
    /// The part of the echo still to find, with its KMP failure table.
    want: Vec<u8>,
    fail: Vec<usize>,
    matched: usize,
    pieces: Vec<(u64, u64)>,
}

impl Search {
    fn new(batch: BatchId, from: u64, strict: bool, want: Vec<u8>) -> Search {
        let fail = failure(&want);
        Search {
            batch,
            from,
            strict,
            want,
            fail,
            matched: 0,
            pieces: Vec::new(),
        }
    }
}

/// The KMP failure function of `p`.
fn failure(p: &[u8]) -> Vec<usize> {
    let mut f = vec![0; p.len()];
    let mut k = 0;
    for i in 1..p.len() {
        while k > 0 && p[i] != p[k] {
            k = f[k - 1];
        }
        if p[i] == p[k] {
            k += 1;
        }
        f[i] = k;
    }
    f
}

/// Follows the keys typed while the terminal echoes, their lines, and their echo.
#[derive(Debug, Default)]
pub struct Tracker {
    lines: VecDeque<Line>,
    batches: VecDeque<Batch>,
    discipline: Discipline,
    next_id: u64,
    /// Where the last echo found ends: the next key's echo comes after it.
    echo_end: u64,
    /// No batch before this one waits for its echo.
    scan_from: BatchId,
    search: Option<Search>,
    /// Bytes of keys and predicted echo held.
    bytes: usize,
    /// Keys came past the bounds from this output position on; anything from there to the end
    /// of their window (the next line the shell runs) may be their echo.
    overflow: Option<(u64, Option<u64>)>,
    /// Batches in [`Again::Watching`].
    watched: usize,
}

impl Tracker {
    pub fn new() -> Tracker {
        Tracker::default()
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Whether anything is followed.
    pub fn is_idle(&self) -> bool {
        self.lines.is_empty() && self.batches.is_empty()
    }

    /// Whether output is being searched for an echo.
    pub fn searching(&self) -> bool {
        self.search.is_some()
    }

    /// Whether output must be handed to [`Tracker::scan`]: an echo is searched for, or one
    /// found after other output is watched for its bytes coming again.
    pub fn scanning(&self) -> bool {
        self.search.is_some() || self.watched > 0
    }

    /// Keys typed at `at` while the output was at `key_pos`, under `modes`. Returns the pieces
    /// of `bytes` that belong to one line each, with their batch ids, to be written as key
    /// frames of their own. `writable`: false for keys typed into a private command (never
    /// written, whatever their line turns out to be).
    pub fn typed(
        &mut self,
        at: u64,
        key_pos: u64,
        bytes: &[u8],
        modes: &EchoModes,
        writable: bool,
    ) -> Vec<(BatchId, Range<usize>)> {
        if self.overflow.is_some_and(|(_, end)| end.is_some()) {
            // The keys past the bounds before the shell ran a line are done with.
            self.overflow = None;
        }
        if self.overflow.is_some() || self.full() {
            // Too much pending: these keys are not followed one by one; all from here on may
            // be their echo until the shell has run a line.
            self.overflow.get_or_insert((key_pos, None));
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut echo = Vec::new();
        let mut known = !modes.unusual;
        for (i, &b) in bytes.iter().enumerate() {
            let effect = match self.discipline.key(modes, b, &mut echo) {
                Some(e) => e,
                None => {
                    known = false;
                    Effect::Plain
                }
            };
            if effect == Effect::Discard {
                // The terminal threw away what it had not written yet, echo included: the
                // echo of earlier keys may never come, and this piece's is the signal key's.
                for batch in self.batches.iter_mut() {
                    if matches!(batch.echo, Echo::Expected(_)) {
                        batch.echo = Echo::Unknown;
                    }
                }
                self.search = None;
                echo.clear();
                echo_char(modes, b, &mut echo);
            }
            let raw_end = !modes.icanon && i + 1 == bytes.len();
            if effect != Effect::Plain || raw_end {
                let text = match effect {
                    Effect::End => std::mem::take(&mut self.discipline.ended),
                    Effect::Discard => Vec::new(),
                    Effect::Plain => std::mem::take(&mut self.discipline.line),
                };
                let end = Some((text, effect == Effect::Discard));
                let piece = start..i + 1;
                let id = self.batch(
                    at,
                    key_pos,
                    &bytes[piece.clone()],
                    &mut echo,
                    known,
                    writable,
                    end,
                );
                out.push((id, piece));
                start = i + 1;
                known = !modes.unusual;
            }
        }
        if start < bytes.len() {
            let piece = start..bytes.len();
            let id = self.batch(
                at,
                key_pos,
                &bytes[piece.clone()],
                &mut echo,
                known,
                writable,
                None,
            );
            out.push((id, piece));
        }
        if self.search.is_none() {
            self.next_search();
        }
        out
    }

    /// The line being typed (a new one after a line end).
    fn current_line(&mut self) -> &mut Line {
        if self.lines.back().is_none_or(|l| l.ended) {
            let id = self.id();
            self.lines.push_back(Line {
                id,
                text: Vec::new(),
                exact: true,
                ended: false,
                discarded: false,
            });
        }
        self.lines.back_mut().unwrap()
    }

    /// Records one line's keys of one read. `end`: the keys ended the line, which reads as this
    /// text (or a signal key threw it away).
    #[allow(clippy::too_many_arguments)]
    fn batch(
        &mut self,
        at: u64,
        key_pos: u64,
        keys: &[u8],
        echo: &mut Vec<u8>,
        known: bool,
        writable: bool,
        end: Option<(Vec<u8>, bool)>,
    ) -> BatchId {
        let id = self.id();
        let echo = std::mem::take(echo);
        let size = keys.len() + echo.len();
        let fits = self.bytes + size <= TRACK_CAP;
        if fits {
            self.bytes += size;
        }
        let typing = self.discipline.line.clone();
        let line = self.current_line();
        line.exact &= known && fits;
        match end {
            Some((text, discarded)) => {
                line.text = text;
                line.ended = true;
                line.discarded = discarded;
            }
            None => line.text = typing,
        }
        let line = line.id;
        let echo = if !known || !fits {
            Echo::Unknown
        } else if echo.is_empty() {
            Echo::Found {
                pieces: Vec::new(),
                certain: true,
            }
        } else {
            Echo::Expected(echo)
        };
        self.batches.push_back(Batch {
            id,
            line,
            at,
            key_pos,
            keys: if writable && fits {
                keys.to_vec()
            } else {
                Vec::new()
            },
            withheld: false,
            unwritable: !(writable && fits),
            echo,
            again: Again::Unwatched,
            window_end: None,
        });
        id
    }

    /// Index of the first batch whose id is `id` or later.
    fn index_from(&self, id: BatchId) -> usize {
        self.batches.partition_point(|b| b.id < id)
    }

    /// Starts the search for the oldest key whose echo is expected (none before `scan_from`
    /// is).
    fn next_search(&mut self) {
        let echo_end = self.echo_end;
        let start = self.index_from(self.scan_from);
        let Some(b) = self
            .batches
            .range(start..)
            .find(|b| matches!(b.echo, Echo::Expected(_)))
        else {
            return;
        };
        self.scan_from = b.id;
        let Echo::Expected(want) = &b.echo else {
            return;
        };
        let from = b.key_pos.max(echo_end);
        let strict = b.window_end.is_some();
        let from = b.window_end.map_or(from, |w| from.max(w));
        self.search = Some(Search::new(b.id, from, strict, want.clone()));
    }

    fn batch_mut(&mut self, id: BatchId) -> Option<&mut Batch> {
        let i = self.index_from(id);
        self.batches.get_mut(i).filter(|b| b.id == id)
    }

    /// Output that arrived at `pos`: finds the echo of the keys in it, and watches it for the
    /// bytes of echoes found after other output.
    pub fn scan(&mut self, pos: u64, bytes: &[u8]) {
        self.search_scan(pos, bytes);
        if self.watched > 0 {
            self.watch(pos, bytes);
        }
    }

    /// Looks for the bytes of watched echoes coming again (see [`Again`]). A batch is watched
    /// for at most [`SEARCH_SPAN`] bytes past its echo: past that, it counts as come again.
    fn watch(&mut self, pos: u64, bytes: &[u8]) {
        // The echoes of later keys found at a certain place are theirs, not these bytes again.
        let theirs: Vec<(u64, u64)> = self
            .batches
            .iter()
            .filter_map(|b| match &b.echo {
                Echo::Found {
                    pieces,
                    certain: true,
                } => Some(pieces.iter().copied().filter(|&(_, e)| e > pos)),
                _ => None,
            })
            .flatten()
            .collect();
        let mut done = 0;
        for b in self.batches.iter_mut() {
            let Again::Watching {
                from,
                want,
                fail,
                matched,
            } = &mut b.again
            else {
                continue;
            };
            let span_end = *from + SEARCH_SPAN;
            let mut again = None;
            let mut i = from.saturating_sub(pos).min(bytes.len() as u64) as usize;
            while i < bytes.len() && again.is_none() {
                let p = pos + i as u64;
                if p >= span_end {
                    again = Some(p);
                    break;
                }
                let c = bytes[i];
                while *matched > 0 && c != want[*matched] {
                    *matched = fail[*matched - 1];
                }
                if c == want[*matched] {
                    *matched += 1;
                }
                if *matched == want.len() {
                    let at = p + 1 - want.len() as u64;
                    if theirs.iter().any(|&(s, e)| s <= at && p < e) {
                        *matched = fail[*matched - 1];
                    } else {
                        again = Some(at);
                    }
                }
                i += 1;
            }
            if let Some(at) = again {
                b.again = Again::At(at);
                done += 1;
            }
        }
        self.watched -= done;
    }

    /// Output that arrived at `pos`: finds the echo of the keys in it.
    fn search_scan(&mut self, pos: u64, bytes: &[u8]) {
        let mut i = 0usize;
        while i < bytes.len() {
            let Some(s) = self.search.as_mut() else {
                return;
            };
            let p = pos + i as u64;
            if p < s.from {
                i = (s.from - pos).min(bytes.len() as u64) as usize;
                continue;
            }
            let b = bytes[i];
            let at_start = s.matched == 0;
            let start = p - s.matched as u64;
            if b == s.want[s.matched] {
                s.matched += 1;
                i += 1;
                if s.matched == s.want.len() {
                    s.pieces.push((p + 1 - s.matched as u64, p + 1));
                    let done = std::mem::take(&mut s.pieces);
                    let certain = done[0].0 == s.from && done.len() == 1;
                    let id = s.batch;
                    let want = std::mem::take(&mut s.want);
                    let fail = std::mem::take(&mut s.fail);
                    self.echo_end = p + 1;
                    self.search = None;
                    let watch = !certain
                        && done.len() == 1
                        && want.len() <= WATCH_MAX
                        && self.watched < MAX_WATCHED;
                    if let Some(batch) = self.batch_mut(id) {
                        batch.echo = Echo::Found {
                            pieces: done,
                            certain,
                        };
                        if watch {
                            batch.again = Again::Watching {
                                from: p + 1,
                                want,
                                fail,
                                matched: 0,
                            };
                        }
                    }
                    if watch {
                        self.watched += 1;
                    }
                    self.next_search();
                }
                continue;
            }
            // A mismatch.
            if s.strict {
                let id = s.batch;
                self.give_up(id, p);
                continue;
            }
            if s.matched >= PIECE_MIN {
                // A long echo written in pieces: this one is done, the rest comes later.
                s.pieces.push((start, p));
                s.want.drain(..s.matched);
                s.fail = failure(&s.want);
                s.matched = 0;
                continue;
            }
            if at_start {
                i += 1;
            } else {
                s.matched = s.fail[s.matched - 1];
            }
            if s.matched == 0 && p + 1 - s.from > SEARCH_SPAN {
                let id = s.batch;
                self.give_up(id, p + 1);
            }
        }
    }

    /// The echo of `id` was not found: it is unknown, and so is that of every later key typed
    /// before `pos` (its echo may lie in output already scanned).
    fn give_up(&mut self, id: BatchId, pos: u64) {
        self.search = None;
        let start = self.index_from(id);
        for b in self.batches.range_mut(start..) {
            if b.key_pos < pos && matches!(b.echo, Echo::Expected(_)) {
                b.echo = Echo::Unknown;
            }
        }
        self.echo_end = self.echo_end.max(pos);
        self.next_search();
    }

    /// The shell ran (or gave up) a line at output position `pos`: every key typed so far was
    /// handed over by then, so its echo is before `pos`, or (in a race with the shell) right
    /// after it.
    pub fn close_windows(&mut self, pos: u64) {
        for b in self.batches.iter_mut() {
            b.window_end.get_or_insert(pos);
            // All output before `pos` was scanned: an echo watched that far was there once.
            if matches!(b.again, Again::Watching { .. }) {
                b.again = Again::Once;
                self.watched -= 1;
            }
        }
        if let Some((_, end)) = self.overflow.as_mut() {
            end.get_or_insert(pos);
        }
        if let Some(s) = self.search.as_mut() {
            if !s.strict {
                s.strict = true;
                s.matched = 0;
                s.from = s.from.max(pos);
            }
        }
    }

    /// The lines of keys typed before `end` whose echo came before `end`, ended: the command
    /// that ended at `end` read them (the hooks said no whole line waited for the shell then),
    /// or a signal key threw them away.
    fn read_by_command(&self, line: &Line, last: Option<&Batch>, end: u64) -> bool {
        if line.discarded {
            return true;
        }
        if !line.ended {
            return false;
        }
        // The batch that ended the line: its echo (processed with the line end) came before.
        let Some(last) = last else {
            return false;
        };
        last.key_pos < end
            && match &last.echo {
                Echo::Found { pieces, .. } => pieces.first().is_none_or(|&(s, _)| s < end),
                _ => false,
            }
    }

    /// Decides the fate of every line followed. `command_end`: the command that just ended
    /// read what it wanted (no whole line waited for the shell when it ended, at that output
    /// position).
    pub fn decide(&self, reader: Reader<'_>, command_end: Option<u64>) -> Decision {
        let mut fates: Vec<(LineId, Fate)> = Vec::new();
        let mut rest: Vec<&Line> = Vec::new();
        // The last batch of each line (batches are in line order).
        let mut last: Vec<Option<&Batch>> = vec![None; self.lines.len()];
        let mut k = 0;
        for b in &self.batches {
            while k < self.lines.len() && self.lines[k].id < b.line {
                k += 1;
            }
            if k < self.lines.len() && self.lines[k].id == b.line {
                last[k] = Some(b);
            }
        }
        for (k, line) in self.lines.iter().enumerate() {
            let read = command_end.is_some_and(|end| self.read_by_command(line, last[k], end));
            if read {
                fates.push((line.id, Fate::Keep));
            } else {
                rest.push(line);
            }
        }
        let matched = |parts: &[&str]| -> Option<(usize, usize)> {
            (0..rest.len()).find_map(|i| {
                if !line_matches(rest[i], parts[0]) {
                    return None;
                }
                let mut n = 1;
                while n < parts.len()
                    && i + n < rest.len()
                    && rest[i + n - 1].ended
                    && line_matches(rest[i + n], parts[n])
                {
                    n += 1;
                }
                Some((i, n))
            })
        };
        match reader {
            Reader::Ran { hidden: true, .. } => {
                fates.extend(rest.iter().map(|l| (l.id, Fate::Drop)));
            }
            Reader::Ran {
                line,
                typed,
                hidden: false,
            } => {
                let parts: Vec<&str> = line.split('\n').collect();
                let typed_parts: Option<Vec<&str>> = typed.map(|t| t.split('\n').collect());
                let found = matched(&parts).or_else(|| typed_parts.as_deref().and_then(matched));
                settle_rest(&mut fates, &rest, found);
            }
            Reader::NothingRan => {
                let found = (0..rest.len())
                    .find(|&i| {
                        let l = rest[i];
                        l.ended && l.exact && !l.discarded && l.text.trim_ascii().is_empty()
                    })
                    .map(|i| (i, 1));
                settle_rest(&mut fates, &rest, found);
            }
            Reader::Unknown => {
                fates.extend(rest.iter().map(|l| (l.id, Fate::Strip)));
            }
        }
        Decision {
            fates,
            dropped_from: None,
        }
    }

    /// The output ranges that may hold the echo of the lines whose echo is taken out (sorted,
    /// disjoint).
    fn removals(&self, decision: &Decision) -> Vec<Range<u64>> {
        let mut out = Vec::new();
        let mut add = |r: Range<u64>| {
            if r.start < r.end {
                out.push(r);
            }
        };
        for b in &self.batches {
            if !matches!(decision.fate(b.line), Some(Fate::Strip | Fate::Drop)) {
                continue;
            }
            // Anything from the key to the end of its window may be an echo not found at a
            // certain place.
            let window = b.key_pos..b.window_end.unwrap_or(u64::MAX);
            match &b.echo {
                Echo::Found {
                    pieces,
                    certain: true,
                } => pieces.iter().for_each(|&(s, e)| add(s..e)),
                // Found after other output, at the first place its bytes were: the echo is
                // there or later. There only once (or again only where all is dropped anyway):
                // there.
                Echo::Found { pieces, .. } if pieces.len() == 1 => {
                    let (s, e) = pieces[0];
                    let once = match b.again {
                        Again::Once => true,
                        Again::At(at) => {
                            b.window_end.is_some() && decision.dropped_from.is_some_and(|d| at >= d)
                        }
                        Again::Unwatched | Again::Watching { .. } => false,
                    };
                    add(if once { s..e } else { s..window.end });
                }
                Echo::Found { .. } | Echo::Unknown => add(window),
                // Not found yet: it comes after what was scanned, unless a search in progress
                // has seen part of it.
                Echo::Expected(_) => {
                    if self
                        .search
                        .as_ref()
                        .is_some_and(|s| s.batch == b.id && (!s.pieces.is_empty() || s.matched > 0))
                    {
                        add(window);
                    }
                }
            }
        }
        if let Some((start, end)) = self.overflow {
            add(start..end.unwrap_or(u64::MAX));
        }
        out.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<u64>> = Vec::with_capacity(out.len());
        for r in out {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        merged
    }

    /// Whether taking out the echo of the lines the decision keeps out, from output before
    /// `end`, would take out more than their echo (it was not found at a certain place).
    pub fn loses_output(&self, decision: &Decision, end: u64) -> bool {
        self.removals(decision).iter().any(|r| r.start < end)
            && (self.overflow.is_some()
                || self.batches.iter().any(|b| {
                    matches!(decision.fate(b.line), Some(Fate::Strip | Fate::Drop))
                        && b.key_pos < end
                        && match &b.echo {
                            Echo::Found { certain, .. } => {
                                !certain && !matches!(b.again, Again::Once)
                            }
                            Echo::Unknown => true,
                            Echo::Expected(_) => self.search.as_ref().is_some_and(|s| {
                                s.batch == b.id && (!s.pieces.is_empty() || s.matched > 0)
                            }),
                        }
                }))
    }

    /// Carries out a decision on the frames about to be written: what to take out of them, and
    /// the withheld keys of lines now kept. Lines kept or dropped are done with.
    pub fn carry_out(&mut self, decision: &Decision) -> Plan {
        let removals = self.removals(decision);
        let mut keys_out = Vec::new();
        let mut keys_in = Vec::new();
        for b in self.batches.iter_mut() {
            match decision.fate(b.line) {
                Some(Fate::Strip) => {
                    b.withheld = true;
                    keys_out.push(b.id);
                }
                Some(Fate::Drop) => keys_out.push(b.id),
                Some(Fate::Keep) if b.withheld && !b.unwritable => {
                    keys_in.push((b.at, std::mem::take(&mut b.keys)));
                    b.withheld = false;
                }
                _ => {}
            }
        }
        self.settle(decision);
        Plan {
            removals,
            keys_out,
            keys_in,
        }
    }

    /// Whether the bounds are reached: the recorder then writes what it holds, taking out the
    /// echo of every line (see [`Tracker::shed`]).
    pub fn full(&self) -> bool {
        self.bytes >= TRACK_CAP || self.batches.len() >= MAX_BATCHES
    }

    /// Forgets the oldest lines whose echo was taken out of everything written, and can no
    /// longer be in what is held from output position `held_from` on: their keys are not
    /// written. Lines kept out are dropped, never written.
    pub fn shed(&mut self, held_from: u64) {
        // Down to half the bounds, so that this happens once in a while, not at every key.
        while (self.bytes > TRACK_CAP / 2 || self.batches.len() > MAX_BATCHES / 2)
            && self.lines.len() > 1
        {
            let id = self.lines[0].id;
            let start = self.index_from(0);
            let out = self
                .batches
                .range(start..)
                .take_while(|b| b.line == id)
                .all(|b| match &b.echo {
                    Echo::Found {
                        pieces,
                        certain: true,
                    } => b.withheld && pieces.iter().all(|&(_, e)| e <= held_from),
                    _ => b.withheld && b.window_end.is_some_and(|w| w <= held_from),
                });
            if !out {
                break;
            }
            self.settle(&Decision {
                fates: vec![(id, Fate::Drop)],
                dropped_from: None,
            });
        }
        // A line's batches whose echo was taken out of everything written, and is not in what
        // is held, become one (a long line typed into a command, never ended).
        let searched = self.search.as_ref().map(|s| s.batch);
        let done = |b: &Batch| {
            b.withheld
                && Some(b.id) != searched
                && matches!(&b.echo, Echo::Found { pieces, certain: true }
                    if pieces.iter().all(|&(_, e)| e <= held_from))
        };
        let mut merged: VecDeque<Batch> = VecDeque::with_capacity(self.batches.len());
        for b in std::mem::take(&mut self.batches) {
            if let Some(last) = merged.back_mut() {
                if last.line == b.line && done(last) && done(&b) {
                    last.keys.extend_from_slice(&b.keys);
                    last.unwritable |= b.unwritable;
                    last.echo = Echo::Found {
                        pieces: Vec::new(),
                        certain: true,
                    };
                    continue;
                }
            }
            merged.push_back(b);
        }
        self.batches = merged;
        self.recount();
        self.bytes = self
            .batches
            .iter()
            .map(|b| {
                b.keys.len()
                    + match &b.echo {
                        Echo::Expected(e) => e.len(),
                        _ => 0,
                    }
            })
            .sum();
    }

    /// Forgets the lines kept or dropped.
    fn settle(&mut self, decision: &Decision) {
        // In id order, as the decision's lines are.
        let done: Vec<LineId> = decision
            .fates
            .iter()
            .filter(|(_, f)| *f != Fate::Strip)
            .map(|&(l, _)| l)
            .collect();
        let mut freed = 0;
        self.batches.retain(|b| {
            let keep = done.binary_search(&b.line).is_err();
            if !keep {
                freed += b.keys.len()
                    + match &b.echo {
                        Echo::Expected(e) => e.len(),
                        _ => 0,
                    };
            }
            keep
        });
        self.bytes = self.bytes.saturating_sub(freed);
        self.recount();
        self.lines.retain(|l| done.binary_search(&l.id).is_err());
        if let Some(id) = self.search.as_ref().map(|s| s.batch) {
            if self
                .batches
                .get(self.index_from(id))
                .is_none_or(|b| b.id != id)
            {
                self.search = None;
                self.next_search();
            }
        }
        if self.overflow.is_some_and(|(_, end)| end.is_some()) && self.lines.is_empty() {
            self.overflow = None;
        }
        if self.lines.is_empty() && self.overflow.is_none() {
            // Nothing typed ahead is pending: start afresh.
            self.batches.clear();
            self.watched = 0;
            self.bytes = 0;
            self.search = None;
        }
    }

    /// Counts the batches watched (after batches were forgotten).
    fn recount(&mut self) {
        self.watched = self
            .batches
            .iter()
            .filter(|b| matches!(b.again, Again::Watching { .. }))
            .count();
    }

    /// Forgets everything (keys held are dropped).
    pub fn clear(&mut self) {
        let echo_end = self.echo_end;
        *self = Tracker::default();
        self.echo_end = echo_end;
    }

    /// The lines followed (tests).
    #[cfg(test)]
    fn texts(&self) -> Vec<(String, bool)> {
        self.lines
            .iter()
            .map(|l| (String::from_utf8_lossy(&l.text).into_owned(), l.ended))
            .collect()
    }
}

/// `line` is the one the shell read as `part` (the same text; a line not ended yet may have been
/// finished at the prompt).
fn line_matches(line: &Line, part: &str) -> bool {
    if !line.exact || line.discarded {
        return false;
    }
    let text = line.text.trim_ascii_end();
    let part = part.as_bytes().trim_ascii_end();
    if line.ended {
        text == part
    } else {
        part.starts_with(text)
    }
}

/// Fates of the lines the command did not read, given the line the shell read (`found`: its
/// index among them and how many lines it spans). The lines before it were read before it (by
/// the command, or by the shell at an earlier prompt that was not private: a private one clears
/// everything) or thrown away; those after it wait for their own turn. Without a match (the
/// line editor changed the line, or it was typed at the prompt) every line waits.
fn settle_rest(fates: &mut Vec<(LineId, Fate)>, rest: &[&Line], found: Option<(usize, usize)>) {
    let kept = found.map_or(0, |(i, n)| i + n);
    for (k, l) in rest.iter().enumerate() {
        let fate = if k < kept || l.discarded {
            Fate::Keep
        } else {
            Fate::Strip
        };
        fates.push((l.id, fate));
    }
}

#[cfg(test)]
mod tests;
