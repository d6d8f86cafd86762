//! Finds omnish's own markers in the shell's output and separates them from everything else.
//!
//! The hooks in `shell/` emit these OSC sequences, always BEL-terminated, each carrying the
//! session's random token `T` (see SHELL-INTEGRATION.md §1 and §6):
//!
//! | bytes after `ESC ]`        | meaning                                              |
//! |----------------------------|------------------------------------------------------|
//! | `133;A;aid=T`              | prompt start                                         |
//! | `133;B;aid=T`              | prompt end, typed input follows (bash PS1)           |
//! | `133;B;k=c;aid=T`          | continuation prompt end (bash PS2)                   |
//! | `133;C;aid=T`              | input end, output start                              |
//! | `133;D;<status>;aid=T`     | end of the last command, if one ran, with `$?`       |
//! | `133;Z;aid=T`              | output end: zsh's PROMPT_SP filler follows           |
//! | `633;E;<escaped>;T`        | the command line, escaped                            |
//! | `633;P;Cwd=<escaped>;T`    | the working directory, escaped                       |
//! | `633;P;Typed=<escaped>;T`  | the line as typed, before history expansion (zsh)    |
//! | `633;P;HistIgnoreSpace=1;T`| a leading space keeps this line out of history       |
//! | `633;P;Exec=1;T`           | the hooks saw this line exec a bash or zsh           |
//! | `633;P;Private=1;T`        | the shell kept this line out of history on purpose   |
//! | `633;P;Unsaved=<esc>;T`    | bash did not save this line; its last entry is this  |
//! | `633;P;Waiting=0;T`        | after `D`: no whole line typed ahead waits for the shell |
//!
//! Escaping (as VS Code's OSC 633): `\` → `\\`, `;` and bytes below 0x20 and 0x7f → `\xHH`.
//!
//! A sequence without the token is ordinary output and passes through untouched: `cat` of a
//! log full of OSC 133, a nested shell or ssh with their own integration can never forge or end
//! a command. Our own markers are removed from the byte stream.
//!
//! The scanner is a small state machine rather than a full terminal parser: it only has to know
//! where an OSC starts and ends, which it decides exactly as `vte` does (any ESC ends an OSC,
//! CAN/SUB abort it; a property test checks the two agree). It holds back at most
//! [`MAX_MARKER`] bytes of a candidate marker, so an unterminated `ESC ]133;` flood from program
//! output costs bounded memory and is released as ordinary output.

/// Longest marker payload held back while waiting for its terminator.
pub const MAX_MARKER: usize = 256 * 1024;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

/// One of the hooks' markers, token checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    PromptStart,
    PromptEnd,
    /// The end of a continuation prompt (PS2): the next line of a multi-line command follows.
    ContinuationEnd,
    OutputStart,
    /// The shell is back at its prompt with this `$?`; it ends the open command, if any (none
    /// after an empty line or Ctrl-C at the prompt).
    CommandEnd(i32),
    OutputEnd,
    CommandLine(String),
    Cwd(String),
    /// The line as the user typed it, before history expansion (zsh's line editor buffer).
    Typed(String),
    /// The shell keeps lines starting with a space out of its history (bash `ignorespace` /
    /// `ignoreboth` for a line it did not save, zsh `HIST_IGNORE_SPACE`): such a line is private.
    HistIgnoreSpace,
    /// The shell kept this line out of its history on purpose (bash `set +o history`, a zsh
    /// `zshaddhistory` hook that refused it): it is private.
    Private,
    /// bash did not save this line; its last history entry is this. A line that repeats it
    /// was left out as a duplicate (ignoredups); any other was kept out on purpose
    /// (ignorespace, HISTIGNORE) and is private.
    Unsaved(String),
    /// The hooks saw that this line replaces the shell with a bash or zsh (and prepared to hook
    /// it, or said why they cannot).
    ExecAnnounced,
    /// Checked after the command's end marker: no whole line typed ahead waits for the shell,
    /// so the command read the lines typed while it ran (see [`crate::record::typeahead`]).
    NoLineWaiting,
}

/// What the scanner finds, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Bytes to forward to the terminal and record as output.
    Text(&'a [u8]),
    Marker(Marker),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// `held` is `ESC`.
    Esc,
    /// `held` is `ESC ]` plus a payload that may still be one of ours.
    Osc,
    /// `held` is `ESC ] payload ESC`.
    OscEsc,
}

/// Splits a byte stream into text and markers; feed it reads of any size.
pub struct Scanner {
    token: Vec<u8>,
    state: State,
    held: Vec<u8>,
}

impl Scanner {
    pub fn new(token: &str) -> Scanner {
        Scanner {
            token: token.as_bytes().to_vec(),
            state: State::Ground,
            held: Vec::new(),
        }
    }

    /// Whether bytes of a possible marker are held back, waiting for more input.
    pub fn holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// Scans `input`, calling `sink` with text runs and markers in order. Bytes of an unfinished
    /// candidate marker are held until a later call decides what they are.
    ///
    /// Output without our markers comes out as one text run per call, however many escape
    /// sequences it holds: a candidate that began in this call and turns out not to be ours
    /// stays part of the run around it, and only an OSC is ever held.
    pub fn feed(&mut self, input: &[u8], sink: &mut dyn FnMut(Piece<'_>)) {
        let mut i = 0;
        // Start of the current run of plain text inside `input`.
        let mut text_start = 0;
        // Where the held candidate starts in `input`, when it started in this call (its bytes
        // are then still in the text run); `None` when it was held from an earlier call.
        let mut held_at: Option<usize> = None;
        while i < input.len() {
            match self.state {
                State::Ground => match osc_start().find(&input[i..]) {
                    Some(k) => {
                        let at = i + k;
                        self.held.extend_from_slice(OSC_START);
                        self.state = State::Osc;
                        held_at = Some(at);
                        i = at + 2;
                    }
                    // An ESC ending the input may start an OSC.
                    None if input[input.len() - 1] == ESC => {
                        self.held.push(ESC);
                        self.state = State::Esc;
                        held_at = Some(input.len() - 1);
                        i = input.len();
                    }
                    None => i = input.len(),
                },
                // Only at the start of a call: an ESC ended the previous one.
                State::Esc => {
                    if input[i] == b']' {
                        self.held.push(b']');
                        self.state = State::Osc;
                        i += 1;
                    } else {
                        self.reject(&mut held_at, &mut text_start, i, sink);
                    }
                }
                State::Osc => {
                    let b = input[i];
                    match b {
                        BEL => {
                            i += 1;
                            self.finish_osc(&[BEL], &mut held_at, &mut text_start, i, input, sink);
                        }
                        ESC => {
                            self.held.push(ESC);
                            self.state = State::OscEsc;
                            i += 1;
                        }
                        CAN | SUB => self.reject(&mut held_at, &mut text_start, i, sink),
                        _ => {
                            self.held.push(b);
                            i += 1;
                            if !could_be_ours(&self.held[2..]) || self.held.len() > MAX_MARKER {
                                self.reject(&mut held_at, &mut text_start, i, sink);
                            }
                        }
                    }
                }
                State::OscEsc => {
                    // The ESC that ended the payload, without it.
                    self.held.pop();
                    if input[i] == b'\\' {
                        i += 1;
                        self.finish_osc(b"\x1b\\", &mut held_at, &mut text_start, i, input, sink);
                    } else if i > 0 {
                        // ESC ended the OSC (not ours: we always terminate properly); the ESC,
                        // in this call, starts a new sequence.
                        i -= 1;
                        self.reject(&mut held_at, &mut text_start, i, sink);
                    } else {
                        // The ESC ended the previous call: it is held alone.
                        self.reject(&mut held_at, &mut text_start, i, sink);
                        self.held.push(ESC);
                        self.state = State::Esc;
                    }
                }
            }
        }
        let end = match (self.state, held_at) {
            (State::Ground, _) => input.len(),
            (_, Some(at)) => at,
            (_, None) => 0,
        };
        if end > text_start {
            sink(Piece::Text(&input[text_start..end]));
        }
    }

    /// Gives up on a held candidate (end of stream, or it waited too long): its bytes are text.
    pub fn flush(&mut self, sink: &mut dyn FnMut(Piece<'_>)) {
        if !self.held.is_empty() {
            self.release(sink);
        }
    }

    fn release(&mut self, sink: &mut dyn FnMut(Piece<'_>)) {
        let held = std::mem::take(&mut self.held);
        sink(Piece::Text(&held));
        self.held = held;
        self.held.clear();
        self.state = State::Ground;
    }

    /// The held candidate is not ours: its bytes are text. Begun in this call, they stay in the
    /// text run; held from an earlier call, they go out now and a new run starts at `i`.
    fn reject(
        &mut self,
        held_at: &mut Option<usize>,
        text_start: &mut usize,
        i: usize,
        sink: &mut dyn FnMut(Piece<'_>),
    ) {
        if held_at.take().is_some() {
            self.held.clear();
            self.state = State::Ground;
        } else {
            self.release(sink);
            *text_start = i;
        }
    }

    /// `held` is `ESC ] payload`, terminated by `terminator`, which ends at `i` in `input`.
    fn finish_osc(
        &mut self,
        terminator: &[u8],
        held_at: &mut Option<usize>,
        text_start: &mut usize,
        i: usize,
        input: &[u8],
        sink: &mut dyn FnMut(Piece<'_>),
    ) {
        match parse(&self.held[2..], &self.token) {
            Some(marker) => {
                if let Some(at) = held_at.take() {
                    if at > *text_start {
                        sink(Piece::Text(&input[*text_start..at]));
                    }
                }
                self.held.clear();
                self.state = State::Ground;
                *text_start = i;
                sink(Piece::Marker(marker));
            }
            None => {
                if held_at.is_none() {
                    self.held.extend_from_slice(terminator);
                }
                self.reject(held_at, text_start, i, sink);
            }
        }
    }
}

const OSC_START: &[u8] = b"\x1b]";

/// Finds `ESC ]` without stopping at every other escape sequence (colours are frequent).
fn osc_start() -> &'static memchr::memmem::Finder<'static> {
    static FINDER: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    FINDER.get_or_init(|| memchr::memmem::Finder::new(OSC_START))
}

/// Whether an OSC payload seen so far can still become one of our markers.
fn could_be_ours(payload: &[u8]) -> bool {
    let n = payload.len().min(4);
    payload[..n] == b"133;"[..n] || payload[..n] == b"633;"[..n]
}

/// Parses a complete OSC payload; `None` unless it is one of ours with the right token.
pub fn parse(payload: &[u8], token: &[u8]) -> Option<Marker> {
    if let Some(rest) = payload.strip_prefix(b"133;") {
        let rest = rest.strip_suffix(token)?.strip_suffix(b"aid=")?;
        return match rest {
            b"A;" => Some(Marker::PromptStart),
            b"B;" => Some(Marker::PromptEnd),
            b"B;k=c;" => Some(Marker::ContinuationEnd),
            b"C;" => Some(Marker::OutputStart),
            b"Z;" => Some(Marker::OutputEnd),
            _ => {
                let status = rest.strip_prefix(b"D;")?.strip_suffix(b";")?;
                let status = std::str::from_utf8(status).ok()?.parse().ok()?;
                Some(Marker::CommandEnd(status))
            }
        };
    }
    let rest = payload.strip_prefix(b"633;")?;
    let rest = rest.strip_suffix(token)?.strip_suffix(b";")?;
    if let Some(cmd) = rest.strip_prefix(b"E;") {
        return Some(Marker::CommandLine(unescape(cmd)?));
    }
    if let Some(cwd) = rest.strip_prefix(b"P;Cwd=") {
        return Some(Marker::Cwd(unescape(cwd)?));
    }
    if let Some(typed) = rest.strip_prefix(b"P;Typed=") {
        return Some(Marker::Typed(unescape(typed)?));
    }
    if rest == b"P;HistIgnoreSpace=1" {
        return Some(Marker::HistIgnoreSpace);
    }
    if rest == b"P;Exec=1" {
        return Some(Marker::ExecAnnounced);
    }
    if rest == b"P;Private=1" {
        return Some(Marker::Private);
    }
    if rest == b"P;Waiting=0" {
        return Some(Marker::NoLineWaiting);
    }
    if let Some(last) = rest.strip_prefix(b"P;Unsaved=") {
        return Some(Marker::Unsaved(unescape(last)?));
    }
    None
}

/// Escapes a value for a marker payload, as the hooks do.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\x3b"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Reverses [`escape`]; `None` when the payload holds raw control bytes or a broken escape,
/// which our hooks never send.
pub fn unescape(payload: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(payload.len());
    let mut i = 0;
    while i < payload.len() {
        let b = payload[i];
        if b < 0x20 || b == b';' {
            return None;
        }
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        match payload.get(i + 1) {
            Some(b'\\') => {
                out.push(b'\\');
                i += 2;
            }
            Some(b'x' | b'X') => {
                let hex = payload.get(i + 2..i + 4)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 4;
            }
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const T: &str = "0123abcd";

    /// Text and markers with adjacent text runs merged, so splits do not matter.
    fn scan_chunks(chunks: &[&[u8]]) -> (Vec<u8>, Vec<(usize, Marker)>) {
        let mut s = Scanner::new(T);
        let mut text = Vec::new();
        let mut markers = Vec::new();
        let mut sink = |p: Piece<'_>| match p {
            Piece::Text(t) => text.extend_from_slice(t),
            Piece::Marker(m) => markers.push((text.len(), m)),
        };
        for c in chunks {
            s.feed(c, &mut sink);
        }
        s.flush(&mut sink);
        (text, markers)
    }

    fn scan(bytes: &[u8]) -> (Vec<u8>, Vec<(usize, Marker)>) {
        scan_chunks(&[bytes])
    }

    fn osc(payload: &str) -> String {
        format!("\x1b]{payload}\x07")
    }

    #[test]
    fn own_markers_are_removed_and_reported_in_place() {
        let input = format!(
            "prompt$ {}ls\r\n{}a b\r\n{}{}",
            osc(&format!("133;B;aid={T}")),
            osc(&format!("133;C;aid={T}")),
            osc(&format!("133;D;0;aid={T}")),
            osc(&format!("133;A;aid={T}")),
        );
        let (text, markers) = scan(input.as_bytes());
        assert_eq!(text, b"prompt$ ls\r\na b\r\n");
        assert_eq!(
            markers,
            vec![
                (8, Marker::PromptEnd),
                (12, Marker::OutputStart),
                (17, Marker::CommandEnd(0)),
                (17, Marker::PromptStart),
            ]
        );
    }

    #[test]
    fn forged_marker_without_token_is_plain_output() {
        let forged = format!("{}{}", osc("133;D;0"), osc("133;D;1;aid=wrongtoken"));
        let (text, markers) = scan(forged.as_bytes());
        assert_eq!(text, forged.as_bytes());
        assert!(markers.is_empty());
    }

    #[test]
    fn other_osc_sequences_pass_through() {
        let input = "\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x1b[31mred";
        let (text, markers) = scan(input.as_bytes());
        assert_eq!(text, input.as_bytes());
        assert!(markers.is_empty());
    }

    #[test]
    fn st_terminated_marker_is_accepted() {
        let input = format!("a\x1b]133;C;aid={T}\x1b\\b");
        let (text, markers) = scan(input.as_bytes());
        assert_eq!(text, b"ab");
        assert_eq!(markers, vec![(1, Marker::OutputStart)]);
    }

    #[test]
    fn command_line_and_cwd_are_unescaped() {
        let cmd = "echo 'a;b' \\ \t\x1b[1m\nnext ünï 字";
        let input = format!(
            "{}{}",
            osc(&format!("633;E;{};{T}", escape(cmd))),
            osc(&format!("633;P;Cwd={};{T}", escape("/tmp/x;y"))),
        );
        let (text, markers) = scan(input.as_bytes());
        assert!(text.is_empty());
        assert_eq!(
            markers,
            vec![
                (0, Marker::CommandLine(cmd.to_string())),
                (0, Marker::Cwd("/tmp/x;y".to_string()))
            ]
        );
    }

    #[test]
    fn typed_line_and_history_flag_need_the_token() {
        let input = format!(
            "{}{}",
            osc(&format!("633;P;Typed={};{T}", escape(" !!; x"))),
            osc(&format!("633;P;HistIgnoreSpace=1;{T}")),
        );
        let (text, markers) = scan(input.as_bytes());
        assert!(text.is_empty());
        assert_eq!(
            markers,
            vec![
                (0, Marker::Typed(" !!; x".to_string())),
                (0, Marker::HistIgnoreSpace)
            ]
        );
        let forged = osc("633;P;HistIgnoreSpace=1;0000");
        let (text, markers) = scan(forged.as_bytes());
        assert!(markers.is_empty());
        assert_eq!(text, forged.as_bytes());
        // Nothing typed ahead waits: only with the token.
        let (_, markers) = scan(osc(&format!("633;P;Waiting=0;{T}")).as_bytes());
        assert_eq!(markers, vec![(0, Marker::NoLineWaiting)]);
        let forged = osc("633;P;Waiting=0;0000");
        let (text, markers) = scan(forged.as_bytes());
        assert!(markers.is_empty());
        assert_eq!(text, forged.as_bytes());
    }

    #[test]
    fn negative_and_large_statuses_parse() {
        let (_, m) = scan(osc(&format!("133;D;130;aid={T}")).as_bytes());
        assert_eq!(m, vec![(0, Marker::CommandEnd(130))]);
        // The hooks always send the status: a bare D is not ours.
        let (_, m) = scan(osc(&format!("133;D;aid={T}")).as_bytes());
        assert!(m.is_empty());
        let (t, m) = scan(osc(&format!("133;D;x1;aid={T}")).as_bytes());
        assert!(m.is_empty());
        assert!(!t.is_empty());
    }

    #[test]
    fn can_aborts_a_candidate() {
        let input = format!("\x1b]133;C;aid=\x18{T}\x07rest");
        let (text, markers) = scan(input.as_bytes());
        assert_eq!(text, input.as_bytes());
        assert!(markers.is_empty());
    }

    #[test]
    fn unterminated_flood_is_released_with_bounded_memory() {
        let mut s = Scanner::new(T);
        let mut out = 0usize;
        let mut sink = |p: Piece<'_>| {
            if let Piece::Text(t) = p {
                out += t.len()
            }
        };
        s.feed(b"\x1b]133;", &mut sink);
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..10 {
            s.feed(&chunk, &mut sink);
            assert!(s.held.len() <= MAX_MARKER + 1);
        }
        s.flush(&mut sink);
        assert_eq!(out, 6 + 640 * 1024);
    }

    #[test]
    fn output_without_markers_is_one_text_run_per_read() {
        // Colours, a title and a held ESC at the end of a read: the terminal thread copies
        // each read once, not once per escape sequence.
        let mut s = Scanner::new(T);
        let mut pieces = Vec::new();
        let mut feed = |bytes: &[u8], pieces: &mut Vec<Vec<u8>>| {
            s.feed(bytes, &mut |p| match p {
                Piece::Text(t) => pieces.push(t.to_vec()),
                Piece::Marker(m) => panic!("{m:?}"),
            })
        };
        let read = b"\x1b[1m\x1b[92m   Compiling\x1b[0m x\r\n\x1b]0;title\x07\x1b[32mok\x1b";
        feed(read, &mut pieces);
        assert_eq!(pieces, vec![read[..read.len() - 1].to_vec()]);
        feed(b"[0m\r\n", &mut pieces);
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces[1..], [b"\x1b".to_vec(), b"[0m\r\n".to_vec()]);
    }

    #[test]
    fn raw_control_byte_in_payload_is_not_ours() {
        let input = format!("\x1b]633;E;a\nb;{T}\x07");
        let (text, markers) = scan(input.as_bytes());
        assert!(markers.is_empty());
        assert_eq!(text, input.as_bytes());
    }

    #[test]
    fn escape_round_trips_every_control_byte() {
        let all: String = (0u8..=0x7f).map(char::from).collect();
        assert_eq!(
            unescape(escape(&all).as_bytes()).as_deref(),
            Some(all.as_str())
        );
    }

    fn sample_stream() -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(osc(&format!("133;A;aid={T}")).as_bytes());
        v.extend_from_slice(b"\x1b[1mme@host\x1b[0m $ ");
        v.extend_from_slice(osc(&format!("133;B;aid={T}")).as_bytes());
        v.extend_from_slice(b"cat log\r\n");
        v.extend_from_slice(osc(&format!("633;E;{};{T}", escape("cat log; echo ü"))).as_bytes());
        v.extend_from_slice(format!("\x1b]133;C;aid={T}\x1b\\").as_bytes());
        v.extend_from_slice(b"\x1b]133;D;0\x07forged\x1b]0;t\x07\x1b]133;A;aid=zz\x1b\\x\x1b");
        v.extend_from_slice(b"[K\x1b]1");
        v.extend_from_slice(osc(&format!("133;D;7;aid={T}")).as_bytes());
        v.extend_from_slice(b"tail");
        v
    }

    #[test]
    fn markers_split_across_reads_at_every_byte() {
        let stream = sample_stream();
        let whole = scan(&stream);
        assert_eq!(whole.1.len(), 5);
        for cut in 0..=stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(scan_chunks(&[a, b]), whole, "split at {cut}");
        }
    }

    /// Records where vte dispatches OSCs and what they contain.
    struct VteOscs(Vec<Vec<Vec<u8>>>);
    impl vte::Perform for VteOscs {
        fn osc_dispatch(&mut self, params: &[&[u8]], _bell: bool) {
            self.0.push(params.iter().map(|p| p.to_vec()).collect());
        }
    }

    proptest! {
        #[test]
        fn any_split_gives_the_same_result(cuts in proptest::collection::vec(0usize..400, 0..6)) {
            let stream = sample_stream();
            let whole = scan(&stream);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (stream.len() + 1)).collect();
            cuts.sort();
            let mut chunks = Vec::new();
            let mut last = 0;
            for c in cuts { chunks.push(&stream[last..c]); last = c; }
            chunks.push(&stream[last..]);
            prop_assert_eq!(scan_chunks(&chunks), whole);
        }

        #[test]
        fn foreign_bytes_pass_through_unchanged(bytes in proptest::collection::vec(
            prop_oneof![Just(0x1bu8), Just(b']'), Just(0x07u8), Just(b'1'), Just(b'3'), Just(b';'),
                        Just(0x18u8), Just(b'\\'), any::<u8>()], 0..300)) {
            // Without the token nothing can be a marker, so the text is the input.
            let (text, markers) = scan(&bytes);
            prop_assert!(markers.is_empty());
            prop_assert_eq!(text, bytes);
        }

        #[test]
        fn our_markers_agree_with_vte(pre in "[a-z \\x1b\\[0-9;m]{0,20}", cmd in "\\PC{0,30}") {
            // Whatever precedes it, vte sees our marker as an OSC exactly when the scanner does.
            let marker = osc(&format!("633;E;{};{T}", escape(&cmd)));
            let input = format!("{pre}\x07{marker}");
            let (_, markers) = scan(input.as_bytes());
            let mut vte_oscs = VteOscs(Vec::new());
            let mut parser = vte::Parser::new();
            parser.advance(&mut vte_oscs, input.as_bytes());
            let vte_found = vte_oscs.0.iter().any(|p| p.len() == 4 && p[0] == b"633" && p[1] == b"E");
            prop_assert_eq!(vte_found, !markers.is_empty());
            if let Some((_, Marker::CommandLine(c))) = markers.first() {
                prop_assert_eq!(c, &cmd);
            }
        }
    }
}
