//! Command lines as the recorder stores them, and the scrubber that keeps the session's marker
//! token out of everything it writes.
//!
//! A command line is exact up to [`COMMAND_LINE_CAP`] chars. A longer one keeps its first and
//! last `COMMAND_LINE_CAP / 2` chars around `…[N chars omitted]…` (the note `omnish context`
//! puts in long output lines), and its whole length in chars is kept beside it
//! (`command_line_chars` in `commands.jsonl`). Lines are built as they stream in ([`LineBuilder`]),
//! so however long the line, memory stays within the cap: a 10 MB line costs what a 1 MiB one
//! does.
//!
//! The token authenticates the hooks' markers, so it must never be on disk, where a reader
//! (`omnish context`, an agent through MCP) could learn it and a `cat`ed file could then forge
//! commands. The shell can still print it (`set`, `declare -p`, a `cat` of omnish's rc file):
//! [`Scrubber`] replaces it with [`TOKEN_NOTE`] in a byte stream cut into reads anywhere, keeping
//! back at most the token's length minus one byte that may start it.

use std::collections::VecDeque;

/// Most chars of a command line stored as they are (1 Mi chars); longer lines are cut.
pub const COMMAND_LINE_CAP: usize = 1 << 20;

/// What the token is replaced with wherever it appears in recorded bytes or text.
pub const TOKEN_NOTE: &str = "[REDACTED:omnish-token]";

/// The note put in place of the middle of a cut line (as `crate::context`'s long lines).
pub fn omitted_note(n: u64) -> String {
    format!("…[{n} chars omitted]…")
}

/// A command line (or a cwd, a typed line) as stored: `text` is the line itself, or its head and
/// tail around the omitted note when it was longer than the cap it was built with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    /// The whole line's length in chars.
    pub chars: u64,
    /// `text` holds only the head and tail of the line.
    pub cut: bool,
}

impl Line {
    /// `text`, cut to [`COMMAND_LINE_CAP`] if it is longer.
    pub fn new(text: &str) -> Line {
        let mut b = LineBuilder::new(COMMAND_LINE_CAP, None);
        b.push_str(text);
        b.finish()
    }

    /// The whole line's length in chars when the text is cut (what `command_line_chars` holds).
    pub fn cut_chars(&self) -> Option<u64> {
        self.cut.then_some(self.chars)
    }

    /// The same line with at most `cap` chars of it kept (`cap` at most [`COMMAND_LINE_CAP`]).
    pub fn shortened(&self, cap: usize) -> Line {
        let n = self.text.chars().count();
        if n as u64 <= cap as u64 && !self.cut {
            return self.clone();
        }
        let (head, tail) = halves(cap);
        // A cut text is head, note, tail, each half at least COMMAND_LINE_CAP / 2 chars: the
        // new halves lie within them.
        let head_end = self
            .text
            .char_indices()
            .nth(head)
            .map_or(self.text.len(), |(i, _)| i);
        let tail_start = if tail == 0 {
            self.text.len()
        } else {
            self.text
                .char_indices()
                .rev()
                .nth(tail - 1)
                .map_or(0, |(i, _)| i)
        };
        if head_end >= tail_start && !self.cut {
            return self.clone();
        }
        let omitted = self.chars.saturating_sub((head + tail) as u64);
        let mut text = self.text[..head_end].to_string();
        text.push_str(&omitted_note(omitted));
        text.push_str(&self.text[tail_start..]);
        Line {
            text,
            chars: self.chars,
            cut: true,
        }
    }
}

impl From<&str> for Line {
    fn from(text: &str) -> Line {
        Line::new(text)
    }
}

/// The chars kept before and after the note when a line is cut to `cap`.
fn halves(cap: usize) -> (usize, usize) {
    (cap.div_ceil(2), cap / 2)
}

/// Builds a [`Line`] from pieces of any size with memory bounded by its cap: the first `cap`
/// chars are kept, then only the last `cap / 2`. Bytes are decoded as UTF-8 (invalid sequences
/// become U+FFFD, a sequence split between two pieces is joined) after the token, when given,
/// has been scrubbed out.
pub struct LineBuilder {
    cap: usize,
    head: String,
    head_chars: usize,
    tail: VecDeque<char>,
    tail_keep: usize,
    total: u64,
    /// More than `cap` chars came: `tail` holds the last ones.
    overflow: bool,
    /// Chars were skipped (not seen at all): the tail holds only chars after the last skip.
    skipped: bool,
    /// The end of an incomplete UTF-8 sequence.
    utf8: Vec<u8>,
    scrubber: Option<Scrubber>,
    scrubbed: Vec<u8>,
}

impl LineBuilder {
    /// A builder keeping `cap` chars whole; with `token`, that token never reaches the line.
    pub fn new(cap: usize, token: Option<&[u8]>) -> LineBuilder {
        LineBuilder {
            cap,
            head: String::new(),
            head_chars: 0,
            tail: VecDeque::new(),
            tail_keep: halves(cap).1,
            total: 0,
            overflow: false,
            skipped: false,
            utf8: Vec::new(),
            scrubber: token.filter(|t| !t.is_empty()).map(Scrubber::new),
            scrubbed: Vec::new(),
        }
    }

    pub fn push_str(&mut self, s: &str) {
        self.push_bytes(s.as_bytes());
    }

    pub fn push_char(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.push_bytes(c.encode_utf8(&mut buf).as_bytes());
    }

    pub fn push_bytes(&mut self, bytes: &[u8]) {
        match self.scrubber.as_mut() {
            Some(s) => {
                let mut out = std::mem::take(&mut self.scrubbed);
                out.clear();
                s.feed(bytes, &mut out);
                self.decode(&out);
                self.scrubbed = out;
            }
            None => self.decode(bytes),
        }
    }

    /// `n` chars of the line were not seen (they were dropped before reaching the builder):
    /// the line is cut there.
    pub fn skip(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        self.flush_pending();
        self.total += n;
        self.overflow = true;
        self.skipped = true;
        self.tail.clear();
    }

    /// Chars pushed so far (skipped ones included).
    pub fn chars(&self) -> u64 {
        self.total
    }

    pub fn finish(mut self) -> Line {
        self.flush_pending();
        if !self.overflow {
            return Line {
                text: self.head,
                chars: self.total,
                cut: false,
            };
        }
        let (head_keep, tail_keep) = halves(self.cap);
        let head_end = self
            .head
            .char_indices()
            .nth(head_keep)
            .map_or(self.head.len(), |(i, _)| i);
        let kept_head = self.head_chars.min(head_keep);
        // Without a skip the chars of the head past its kept half come right before the tail.
        let mut tail: Vec<char> = Vec::new();
        if !self.skipped && self.tail.len() < tail_keep {
            let need = tail_keep - self.tail.len();
            let extra: Vec<char> = self.head[head_end..].chars().collect();
            tail.extend(&extra[extra.len().saturating_sub(need)..]);
        }
        tail.extend(self.tail.iter());
        let omitted = self.total - kept_head as u64 - tail.len() as u64;
        self.head.truncate(head_end);
        let mut text = self.head;
        if omitted > 0 {
            text.push_str(&omitted_note(omitted));
        }
        text.extend(tail);
        Line {
            text,
            chars: self.total,
            cut: omitted > 0,
        }
    }

    fn flush_pending(&mut self) {
        if let Some(s) = self.scrubber.as_mut() {
            let mut out = Vec::new();
            s.flush(&mut out);
            self.decode(&out);
        }
        if !self.utf8.is_empty() {
            self.utf8.clear();
            self.push_valid("\u{fffd}");
        }
    }

    fn decode(&mut self, bytes: &[u8]) {
        let mut joined;
        let mut rest = if self.utf8.is_empty() {
            bytes
        } else {
            joined = std::mem::take(&mut self.utf8);
            joined.extend_from_slice(bytes);
            &joined[..]
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    self.push_valid(s);
                    return;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    self.push_valid(std::str::from_utf8(&rest[..valid]).unwrap_or(""));
                    match e.error_len() {
                        Some(n) => {
                            self.push_valid("\u{fffd}");
                            rest = &rest[valid + n..];
                        }
                        None => {
                            self.utf8 = rest[valid..].to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }

    fn push_valid(&mut self, mut s: &str) {
        if s.is_empty() {
            return;
        }
        if !self.overflow {
            let room = self.cap - self.head_chars;
            match s.char_indices().nth(room) {
                None => {
                    let n = s.chars().count();
                    self.head.push_str(s);
                    self.head_chars += n;
                    self.total += n as u64;
                    return;
                }
                Some((at, _)) => {
                    self.head.push_str(&s[..at]);
                    self.head_chars += room;
                    self.total += room as u64;
                    self.overflow = true;
                    s = &s[at..];
                }
            }
        }
        let n = s.chars().count();
        self.total += n as u64;
        if self.tail_keep == 0 {
            return;
        }
        if n >= self.tail_keep {
            self.tail.clear();
            self.tail.extend(s.chars().skip(n - self.tail_keep));
        } else {
            let over = (self.tail.len() + n).saturating_sub(self.tail_keep);
            self.tail.drain(..over);
            self.tail.extend(s.chars());
        }
    }
}

/// Replaces every occurrence of a token (the session's, and those of shells nested in it) in a
/// byte stream fed in pieces of any size.
pub struct Scrubber {
    tokens: Vec<(Vec<u8>, memchr::memmem::Finder<'static>)>,
    /// The end of the last piece that may be the start of a token.
    carry: Vec<u8>,
}

/// Most tokens a scrubber keeps (the oldest nested shells' go first past it): every token is
/// one more pass over the output. The scanner follows at most as many shells, and the recorder
/// removes a shell's token when the shell ends.
const MAX_TOKENS: usize = 16;

impl Scrubber {
    pub fn new(token: &[u8]) -> Scrubber {
        let mut s = Scrubber {
            tokens: Vec::new(),
            carry: Vec::new(),
        };
        s.add(token);
        s
    }

    /// Replaces `token` too, from now on.
    pub fn add(&mut self, token: &[u8]) {
        if token.is_empty() || self.tokens.iter().any(|(t, _)| t == token) {
            return;
        }
        if self.tokens.len() >= MAX_TOKENS {
            // The session's own stays first.
            self.tokens.remove(1);
        }
        let finder = memchr::memmem::Finder::new(token).into_owned();
        self.tokens.push((token.to_vec(), finder));
    }

    /// Stops replacing `token` (a nested shell's that ended: it marks nothing any more).
    pub fn remove(&mut self, token: &[u8]) {
        self.tokens.retain(|(t, _)| t != token);
    }

    /// Appends `input` to `out` with every whole token replaced by [`TOKEN_NOTE`]. The end of
    /// the input that may begin a token is kept back for the next call (or [`Scrubber::flush`]).
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        if self.tokens.is_empty() {
            out.extend_from_slice(input);
            return;
        }
        let start = out.len();
        out.append(&mut self.carry);
        out.extend_from_slice(input);
        for (token, finder) in &self.tokens {
            if finder.find(&out[start..]).is_some() {
                let region = out.split_off(start);
                let mut at = 0;
                for m in finder.find_iter(&region) {
                    out.extend_from_slice(&region[at..m]);
                    out.extend_from_slice(TOKEN_NOTE.as_bytes());
                    at = m + token.len();
                }
                out.extend_from_slice(&region[at..]);
            }
        }
        // The longest end of the new bytes that is a proper start of a token. (The note never
        // ends in a start of one: it holds no hex digit.)
        let new = &out[start..];
        let mut keep_from = out.len();
        for (token, _) in &self.tokens {
            let most = new.len().min(token.len() - 1);
            let tail = &new[new.len() - most..];
            let first = token[0];
            if let Some(j) =
                (0..tail.len()).find(|&j| tail[j] == first && tail[j..] == token[..most - j])
            {
                keep_from = keep_from.min(out.len() - (most - j));
            }
        }
        if keep_from < out.len() {
            self.carry.extend_from_slice(&out[keep_from..]);
            out.truncate(keep_from);
        }
    }

    /// Gives up the bytes kept back: they are no token after all (the stream ended or paused).
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.carry);
    }

    /// Whether bytes are kept back.
    pub fn holding(&self) -> bool {
        !self.carry.is_empty()
    }
}

/// `text` with every occurrence of `token` replaced by [`TOKEN_NOTE`].
pub fn scrub_str(text: &str, token: &[u8]) -> String {
    if token.is_empty() || memchr::memmem::find(text.as_bytes(), token).is_none() {
        return text.to_string();
    }
    // The token is ASCII, so replacing it keeps valid UTF-8.
    let token = std::str::from_utf8(token).unwrap_or("");
    text.replace(token, TOKEN_NOTE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_scrubber_takes_out_every_token_added_across_any_split() {
        let a = b"0123abcd0123abcd0123abcd0123abcd";
        let b = b"55555555666666667777777788888888";
        let input = [&b"x "[..], a, b" y ", b, b" z"].concat();
        for cut in 0..input.len() {
            let mut s = Scrubber::new(a);
            s.add(b);
            let mut out = Vec::new();
            s.feed(&input[..cut], &mut out);
            s.feed(&input[cut..], &mut out);
            s.flush(&mut out);
            let want = format!("x {TOKEN_NOTE} y {TOKEN_NOTE} z");
            assert_eq!(String::from_utf8(out).unwrap(), want, "cut at {cut}");
        }
        // A removed token passes as it is; the others are still taken out.
        let mut s = Scrubber::new(a);
        s.add(b);
        s.remove(b);
        let mut out = Vec::new();
        s.feed(&input, &mut out);
        s.flush(&mut out);
        let b = std::str::from_utf8(b).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("x {TOKEN_NOTE} y {b} z")
        );
    }

    fn built(cap: usize, pieces: &[&str]) -> Line {
        let mut b = LineBuilder::new(cap, None);
        for p in pieces {
            b.push_str(p);
        }
        b.finish()
    }

    #[test]
    fn a_line_up_to_the_cap_is_exact() {
        let l = built(10, &["abcde", "fghij"]);
        assert_eq!((l.text.as_str(), l.chars, l.cut), ("abcdefghij", 10, false));
        assert_eq!(l.cut_chars(), None);
    }

    #[test]
    fn a_longer_line_keeps_head_and_tail_around_the_note() {
        let l = built(10, &["abcdefghij", "klmnopqrstuvwxyz"]);
        assert_eq!(l.text, "abcde…[16 chars omitted]…vwxyz");
        assert_eq!((l.chars, l.cut), (26, true));
        assert_eq!(l.cut_chars(), Some(26));
        // Just over the cap: the tail comes from what the head held.
        let l = built(10, &["abcdefghijk"]);
        assert_eq!(l.text, "abcde…[1 chars omitted]…ghijk");
        // An odd cap keeps one more char in front.
        let l = built(5, &["0123456789"]);
        assert_eq!(l.text, "012…[5 chars omitted]…89");
    }

    #[test]
    fn chars_not_bytes_are_counted_and_split_sequences_are_joined() {
        let s = "é字😀".repeat(4);
        let mut b = LineBuilder::new(6, None);
        for byte in s.as_bytes() {
            b.push_bytes(&[*byte]);
        }
        let l = b.finish();
        assert_eq!(l.chars, 12);
        assert_eq!(l.text, "é字😀…[6 chars omitted]…é字😀");
        let mut b = LineBuilder::new(10, None);
        b.push_bytes(b"a\xffb\xe5");
        let l = b.finish();
        assert_eq!(l.text, "a\u{fffd}b\u{fffd}");
    }

    #[test]
    fn skipped_chars_cut_the_line_where_they_were() {
        let mut b = LineBuilder::new(10, None);
        b.push_str("abc");
        b.skip(100);
        b.push_str("xyz");
        let l = b.finish();
        assert_eq!(l.text, "abc…[100 chars omitted]…xyz");
        assert_eq!(l.chars, 106);
        let mut b = LineBuilder::new(4, None);
        b.push_str("abcdefgh");
        b.skip(10);
        b.push_str("wxyz");
        let l = b.finish();
        assert_eq!(l.text, "ab…[18 chars omitted]…yz");
    }

    #[test]
    fn the_token_never_reaches_a_line() {
        let token = b"0123456789abcdef";
        let mut b = LineBuilder::new(100, Some(token));
        b.push_str("echo 01234567");
        b.push_str("89abcdef; echo 0123");
        let l = b.finish();
        assert_eq!(l.text, format!("echo {TOKEN_NOTE}; echo 0123"));
    }

    #[test]
    fn shortened_lines_keep_the_whole_length() {
        let long = Line::new(&"x".repeat(COMMAND_LINE_CAP + 10));
        assert!(long.cut);
        let short = long.shortened(8);
        assert_eq!(
            short.text,
            format!("xxxx{}xxxx", omitted_note(COMMAND_LINE_CAP as u64 + 2))
        );
        assert_eq!(short.chars, COMMAND_LINE_CAP as u64 + 10);
        let l = Line::new("abcdefghij");
        assert_eq!(l.shortened(20), l);
        assert_eq!(l.shortened(4).text, "ab…[6 chars omitted]…ij");
    }

    #[test]
    fn ten_megabytes_cost_the_cap() {
        let mut b = LineBuilder::new(COMMAND_LINE_CAP, None);
        let chunk = "0123456789".repeat(6554);
        for _ in 0..160 {
            b.push_str(&chunk);
        }
        assert!(b.head.capacity() <= 2 * COMMAND_LINE_CAP);
        assert!(b.tail.len() <= COMMAND_LINE_CAP / 2);
        let l = b.finish();
        assert_eq!(l.chars, 10_486_400);
        assert!(l.text.chars().count() < COMMAND_LINE_CAP + 40);
    }

    fn scrub_pieces(token: &[u8], pieces: &[&[u8]]) -> Vec<u8> {
        let mut s = Scrubber::new(token);
        let mut out = Vec::new();
        for p in pieces {
            s.feed(p, &mut out);
        }
        s.flush(&mut out);
        out
    }

    #[test]
    fn the_scrubber_replaces_tokens_split_anywhere() {
        let token = b"0123456789abcdef";
        let text = b"x=0123456789abcdef; y=0123456789abcde; z=0123456789abcdef0123";
        let want = format!("x={TOKEN_NOTE}; y=0123456789abcde; z={TOKEN_NOTE}0123");
        for cut in 0..=text.len() {
            for cut2 in cut..=text.len() {
                let out = scrub_pieces(token, &[&text[..cut], &text[cut..cut2], &text[cut2..]]);
                assert_eq!(String::from_utf8_lossy(&out), want, "cuts {cut} {cut2}");
            }
        }
        // Only what may start a token is kept back.
        let mut s = Scrubber::new(token);
        let mut out = Vec::new();
        s.feed(b"abc 012", &mut out);
        assert_eq!(out, b"abc ");
        assert!(s.holding());
        s.feed(b"x", &mut out);
        assert_eq!(out, b"abc 012x");
        assert!(!s.holding());
        assert_eq!(
            scrub_str("a 0123456789abcdef b", token),
            format!("a {TOKEN_NOTE} b")
        );
    }

    proptest! {
        #[test]
        fn scrubbing_does_not_depend_on_the_cuts(
            parts in proptest::collection::vec(
                prop_oneof![Just(b"0123".to_vec()), Just(b"4567".to_vec()), Just(b"01".to_vec()),
                            proptest::collection::vec(any::<u8>(), 0..6)], 0..20),
            cuts in proptest::collection::vec(0usize..80, 0..5),
        ) {
            let token = b"01234567";
            let input: Vec<u8> = parts.concat();
            let whole = scrub_pieces(token, &[&input]);
            // The note holds no hex digit, so replacing never makes a new token.
            prop_assert!(memchr::memmem::find(&whole, token).is_none());
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (input.len() + 1)).collect();
            cuts.sort();
            let mut pieces = Vec::new();
            let mut last = 0;
            for c in cuts { pieces.push(&input[last..c]); last = c; }
            pieces.push(&input[last..]);
            prop_assert_eq!(scrub_pieces(token, &pieces), whole);
        }

        #[test]
        fn a_built_line_is_the_input_or_its_head_and_tail(s in "\\PC{0,60}", cap in 1usize..30) {
            let mut b = LineBuilder::new(cap, None);
            for c in s.chars() { b.push_char(c); }
            let l = b.finish();
            let n = s.chars().count();
            prop_assert_eq!(l.chars, n as u64);
            if n <= cap {
                prop_assert_eq!(l.text, s);
            } else {
                let (h, t) = halves(cap);
                let head: String = s.chars().take(h).collect();
                let tail: String = s.chars().skip(n - t).collect();
                prop_assert_eq!(l.text, format!("{head}{}{tail}", omitted_note((n - h - t) as u64)));
            }
        }
    }
}
