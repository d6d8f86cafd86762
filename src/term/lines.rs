//! Line assembly: rows leaving the screen become output [`Line`]s, handed to a [`LineSink`] as
//! soon as they are final. Wrapped rows are joined, trailing blanks trimmed, empty lines held
//! back as a count until a non-empty one follows, and a line past its cap clipped to head and
//! tail ([`Clipped`]).
//!
//! The renderer (`render`, the grid) feeds rows in; the consumers of lines (the pipeline's
//! reader, search) implement [`LineSink`]. This module knows nothing of the grid: a row arrives
//! as a closure that writes its text.

/// A finished output line. When the line has more than the renderer's line cap in chars, only
/// its first `cap/2` and last `cap/2` chars are kept: `head` + (`omitted` chars left out) +
/// `tail`. Otherwise `head` is the whole line, `omitted == 0` and `tail` is empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Line<'a> {
    pub head: &'a str,
    pub omitted: u64,
    pub tail: &'a str,
}

/// Receives finished lines, in order, as soon as they are final.
pub trait LineSink {
    fn line(&mut self, line: Line<'_>);
    /// `ESC [ 3 J`: every line handed over so far has left the terminal's scrollback.
    fn erase_scrollback(&mut self);
}

/// The text of one line kept within a cap: the first `h` chars, and a rolling window holding at
/// least the last `t` chars (at most `2t` plus one push), plus a char count. Memory is
/// `O(h + t + push)`; every char is copied at most twice (amortized O(1)).
#[derive(Default)]
pub(crate) struct Clipped {
    h: usize,
    t: usize,
    head: String,
    head_chars: usize,
    tail: String,
    tail_chars: usize,
    total: u64,
    /// Whether the char after the head is not blank (`None`: nothing went past the head yet).
    after_head_word: Option<bool>,
    /// Whether the last char dropped from the front of the tail window is not blank (`None`:
    /// none was; unknown counts as not blank).
    before_tail_word: Option<bool>,
}

/// At most this many chars of a word cut by the line cap are left out with it (see
/// [`Clipped::emit`]); a longer word keeps its cut piece.
pub(crate) const CUT_WORD_SLACK: usize = 256;

fn word_char(c: char) -> bool {
    !c.is_whitespace()
}

impl Clipped {
    pub(crate) fn new(cap: usize) -> Clipped {
        Clipped {
            h: cap / 2,
            t: cap - cap / 2,
            ..Clipped::default()
        }
    }

    fn is_empty(&self) -> bool {
        self.total == 0
    }

    fn clear(&mut self) {
        self.head.clear();
        self.head_chars = 0;
        self.tail.clear();
        self.tail_chars = 0;
        self.total = 0;
        self.after_head_word = None;
        self.before_tail_word = None;
    }

    fn push_str(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        let n = s.chars().count();
        self.total += n as u64;
        let mut rest = s;
        let mut rest_n = n;
        if self.head_chars < self.h {
            let room = self.h - self.head_chars;
            if n <= room {
                self.head.push_str(s);
                self.head_chars += n;
                return;
            }
            let at = s.char_indices().nth(room).map_or(s.len(), |(i, _)| i);
            self.head.push_str(&s[..at]);
            self.head_chars += room;
            rest = &s[at..];
            rest_n = n - room;
        }
        if self.after_head_word.is_none() {
            self.after_head_word = rest.chars().next().map(word_char);
        }
        self.tail.push_str(rest);
        self.tail_chars += rest_n;
        if self.tail_chars > 2 * self.t {
            let drop = self.tail_chars - self.t;
            let at = self
                .tail
                .char_indices()
                .nth(drop)
                .map_or(self.tail.len(), |(i, _)| i);
            self.before_tail_word = self.tail[..at].chars().next_back().map(word_char);
            self.tail.drain(..at);
            self.tail_chars -= drop;
        }
    }

    /// Append `other` (same cap) as if its whole text were pushed.
    fn append(&mut self, other: &Clipped) {
        self.push_str(&other.head);
        let kept = (other.head_chars + other.tail_chars) as u64;
        if other.total > kept {
            // The chars in between will be followed by `other.tail`, at least `t` chars, which
            // push everything before them out of the window: only their count matters.
            self.total += other.total - kept;
            self.tail.clear();
            self.tail_chars = 0;
            // What was next to the cuts is not known any more: taken as part of a word.
            self.after_head_word.get_or_insert(true);
            self.before_tail_word = Some(true);
        }
        self.push_str(&other.tail);
    }

    /// Hand the line to `sink` (joined when it is within the cap), then clear.
    fn emit(&mut self, sink: &mut dyn LineSink) {
        let cap = (self.h + self.t) as u64;
        if self.total <= cap {
            self.head.push_str(&self.tail);
            sink.line(Line {
                head: &self.head,
                omitted: 0,
                tail: "",
            });
        } else {
            let keep = self.h;
            let at = if keep == 0 {
                self.tail.len()
            } else {
                self.tail
                    .char_indices()
                    .rev()
                    .nth(keep - 1)
                    .map_or(0, |(i, _)| i)
            };
            // A word cut by the cap (a token, a password) is left out with what is omitted,
            // up to `CUT_WORD_SLACK` chars: the redactor, which sees only what is kept, could
            // not tell a piece of a secret from a word.
            let before_tail = match self.tail[..at].chars().next_back() {
                Some(c) => word_char(c),
                None => self
                    .before_tail_word
                    .unwrap_or_else(|| self.head.chars().next_back().is_some_and(word_char)),
            };
            let (head, head_cut) = if self.after_head_word == Some(true) {
                trim_word_end(&self.head)
            } else {
                (self.head.as_str(), 0)
            };
            let (tail, tail_cut) = if before_tail {
                trim_word_start(&self.tail[at..])
            } else {
                (&self.tail[at..], 0)
            };
            sink.line(Line {
                head,
                omitted: self.total - 2 * keep as u64 + (head_cut + tail_cut) as u64,
                tail,
            });
        }
        self.clear();
    }
}

/// What a renderer with line cap `cap` hands over for the whole line `line`: the line itself
/// within the cap, else its first and last `cap / 2` chars, a word cut at either edge left out
/// with the middle (up to `CUT_WORD_SLACK` chars). The streaming `Clipped` gives the same
/// without holding the line; tests compare the two.
pub fn clip_whole(line: &str, cap: usize) -> (String, u64, String) {
    let chars: Vec<char> = line.chars().collect();
    let n = chars.len();
    if n <= cap {
        return (line.to_string(), 0, String::new());
    }
    let half = cap / 2;
    let head: String = chars[..half].iter().collect();
    let tail: String = chars[n - half..].iter().collect();
    let (head, head_cut) = if chars.get(half).is_some_and(|&c| word_char(c)) {
        trim_word_end(&head)
    } else {
        (head.as_str(), 0)
    };
    let before_tail = match (n - half).checked_sub(1) {
        Some(i) => word_char(chars[i]),
        None => false,
    };
    let (tail, tail_cut) = if before_tail {
        trim_word_start(&tail)
    } else {
        (tail.as_str(), 0)
    };
    (
        head.to_string(),
        (n - 2 * half + head_cut + tail_cut) as u64,
        tail.to_string(),
    )
}

/// `head` without the piece of a word at its end (when a blank comes within
/// [`CUT_WORD_SLACK`] chars of the end), and how many chars that left out.
fn trim_word_end(head: &str) -> (&str, usize) {
    let mut n = 0;
    for (i, c) in head.char_indices().rev() {
        if !word_char(c) {
            return (&head[..i + c.len_utf8()], n);
        }
        n += 1;
        if n > CUT_WORD_SLACK {
            break;
        }
    }
    (head, 0)
}

/// `tail` without the piece of a word at its start, as [`trim_word_end`].
fn trim_word_start(tail: &str) -> (&str, usize) {
    let mut n = 0;
    for (i, c) in tail.char_indices() {
        if !word_char(c) {
            return (&tail[i..], n);
        }
        n += 1;
        if n > CUT_WORD_SLACK {
            break;
        }
    }
    (tail, 0)
}

/// Where rows leaving the screen go: the line being assembled from wrapped rows, and the
/// empty lines held back until a non-empty one follows (so that trailing ones can be dropped).
pub(crate) struct Lines {
    /// Uncapped: the line so far (trailing blanks trimmed when it ends).
    partial: String,
    /// Capped: the line so far without its trailing blanks, which wait in `blanks` until
    /// something non-blank follows them.
    clipped: Option<(Clipped, Clipped)>,
    /// Scratch for one row's text (capped mode).
    scratch: String,
    /// Cells already in the line (from wrapped rows), i.e. the output column it ends at.
    pub(crate) width: usize,
    /// The line holds wrapped rows waiting for their continuation.
    open: bool,
    /// Empty lines not handed over yet.
    empties: u64,
}

impl Lines {
    pub(crate) fn new(cap: Option<usize>) -> Lines {
        Lines {
            partial: String::new(),
            clipped: cap.map(|c| (Clipped::new(c), Clipped::new(c))),
            scratch: String::new(),
            width: 0,
            open: false,
            empties: 0,
        }
    }

    /// The bytes held for the line being assembled (for tests of bounded memory).
    #[cfg(test)]
    pub(crate) fn held_bytes(&self) -> usize {
        self.partial.capacity()
            + self.scratch.capacity()
            + self.clipped.as_ref().map_or(0, |(l, b)| {
                l.head.capacity() + l.tail.capacity() + b.head.capacity() + b.tail.capacity()
            })
    }

    /// Emit a row's text: `render` appends it to the given string, starting at output column
    /// `self.width`. A wrapped row is joined with the next one emitted.
    #[inline]
    pub(crate) fn emit_row(
        &mut self,
        wrapped: bool,
        len: usize,
        render: impl FnOnce(&mut String, usize),
        sink: &mut dyn LineSink,
    ) {
        match &mut self.clipped {
            None => render(&mut self.partial, self.width),
            Some((line, blanks)) => {
                self.scratch.clear();
                render(&mut self.scratch, self.width);
                let s = self.scratch.as_str();
                let body = s.trim_end_matches([' ', '\t']).len();
                if !wrapped && !self.open {
                    // A line of one row (the common case) goes from the scratch straight to the
                    // sink when it is within the cap: what `end_line` would hand over.
                    let cap = line.h + line.t;
                    if body == 0 {
                        self.empties += 1;
                        return;
                    }
                    if body <= cap || s[..body].chars().count() <= cap {
                        for _ in 0..std::mem::take(&mut self.empties) {
                            sink.line(Line::default());
                        }
                        sink.line(Line {
                            head: &s[..body],
                            omitted: 0,
                            tail: "",
                        });
                        return;
                    }
                }
                if body > 0 {
                    if !blanks.is_empty() {
                        line.append(blanks);
                        blanks.clear();
                    }
                    line.push_str(&s[..body]);
                }
                blanks.push_str(&s[body..]);
            }
        }
        if wrapped {
            self.width += len;
            self.open = true;
        } else {
            self.end_line(sink);
        }
    }

    fn end_line(&mut self, sink: &mut dyn LineSink) {
        self.width = 0;
        self.open = false;
        match &mut self.clipped {
            None => {
                let trimmed = self.partial.trim_end_matches([' ', '\t']).len();
                self.partial.truncate(trimmed);
                if self.partial.is_empty() {
                    self.empties += 1;
                    return;
                }
                self.flush_empties(sink);
                sink.line(Line {
                    head: &self.partial,
                    omitted: 0,
                    tail: "",
                });
                self.partial.clear();
            }
            Some((line, blanks)) => {
                blanks.clear();
                if line.is_empty() {
                    self.empties += 1;
                    return;
                }
                for _ in 0..std::mem::take(&mut self.empties) {
                    sink.line(Line::default());
                }
                line.emit(sink);
            }
        }
    }

    fn flush_empties(&mut self, sink: &mut dyn LineSink) {
        for _ in 0..std::mem::take(&mut self.empties) {
            sink.line(Line::default());
        }
    }

    /// End a line whose wrapped continuation will never be emitted.
    pub(crate) fn flush_partial(&mut self, sink: &mut dyn LineSink) {
        if self.open {
            self.end_line(sink);
        }
    }

    /// Emit a line of our own (the full-screen note).
    pub(crate) fn push_line(&mut self, text: &str, sink: &mut dyn LineSink) {
        self.flush_partial(sink);
        self.flush_empties(sink);
        match &mut self.clipped {
            None => sink.line(Line {
                head: text,
                omitted: 0,
                tail: "",
            }),
            Some((line, _)) => {
                line.push_str(text);
                line.emit(sink);
            }
        }
    }

    /// `CSI 3J`: everything handed over, held back or half-assembled has left the scrollback.
    pub(crate) fn erase_scrollback(&mut self, sink: &mut dyn LineSink) {
        self.partial.clear();
        if let Some((line, blanks)) = &mut self.clipped {
            line.clear();
            blanks.clear();
        }
        self.width = 0;
        self.open = false;
        self.empties = 0;
        sink.erase_scrollback();
    }

    /// The end of the stream: held-back empty lines are trailing ones and are dropped.
    pub(crate) fn finish(&mut self, sink: &mut dyn LineSink) {
        self.flush_partial(sink);
        self.empties = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Got(Vec<(String, u64, String)>);
    impl LineSink for Got {
        fn line(&mut self, l: Line<'_>) {
            self.0.push((l.head.into(), l.omitted, l.tail.into()));
        }
        fn erase_scrollback(&mut self) {
            self.0.clear();
        }
    }

    fn clip(cap: usize, pieces: &[&str]) -> (String, u64, String) {
        let mut c = Clipped::new(cap);
        for p in pieces {
            c.push_str(p);
        }
        let mut g = Got::default();
        c.emit(&mut g);
        g.0.pop().unwrap()
    }

    #[test]
    fn clipped_keeps_whole_line_within_cap() {
        assert_eq!(clip(5, &["ab", "cde"]), ("abcde".into(), 0, "".into()));
        assert_eq!(clip(4, &["é名x"]), ("é名x".into(), 0, "".into()));
    }

    #[test]
    fn clipped_keeps_head_and_tail_beyond_cap() {
        assert_eq!(clip(4, &["abcdef"]), ("ab".into(), 2, "ef".into()));
        assert_eq!(clip(5, &["a", "bcd", "efg"]), ("ab".into(), 3, "fg".into()));
        let long: Vec<String> = (0..1000).map(|i| format!("{:03}", i % 1000)).collect();
        let refs: Vec<&str> = long.iter().map(String::as_str).collect();
        assert_eq!(clip(8, &refs), ("0000".into(), 2992, "8999".into()));
        assert_eq!(clip(0, &["abc"]), ("".into(), 3, "".into()));
        assert_eq!(clip(1, &["abc"]), ("".into(), 3, "".into()));
    }

    #[test]
    fn clipped_append_equals_pushing_the_text() {
        for cap in 0..9 {
            for n in 0..20 {
                let text: String = "é0123456789abcdefghij".chars().take(n).collect();
                let mut other = Clipped::new(cap);
                other.push_str(&text);
                let mut a = Clipped::new(cap);
                a.push_str("xy");
                a.append(&other);
                let mut g = Got::default();
                a.emit(&mut g);
                assert_eq!(g.0[0], clip(cap, &["xy", &text]), "cap {cap} n {n}");
            }
        }
    }

    /// A secret cut by the cap would be shown as a piece the redactor cannot recognise: the
    /// piece is left out with the middle, and the count says so.
    #[test]
    fn a_word_cut_by_the_cap_is_left_out_whole() {
        let token = format!("ghp_{}", "Zq9X".repeat(9));
        let line = format!("{} {token} {}", "a".repeat(90), "b".repeat(300));
        let (head, omitted, tail) = clip(200, &[&line]);
        // The head ends in the token's first chars: they go.
        assert_eq!(head, format!("{} ", "a".repeat(90)));
        assert_eq!(tail, "b".repeat(100));
        let total = line.chars().count() as u64;
        assert_eq!(head.chars().count() as u64 + omitted + 100, total);

        let line = format!("{} {token} {}", "c".repeat(300), "d".repeat(80));
        let (head, _, tail) = clip(200, &[&line]);
        assert_eq!(head, "c".repeat(100));
        // The tail starts inside the token: its piece goes.
        assert_eq!(tail, format!(" {}", "d".repeat(80)));

        // Pushed in small pieces, the same.
        let pieces: Vec<String> = line.chars().map(String::from).collect();
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(clip(200, &refs), clip(200, &[&line]));
    }

    #[test]
    fn a_word_longer_than_the_slack_keeps_its_pieces() {
        let line = "x".repeat(10_000);
        assert_eq!(clip(100, &[&line]), ("x".repeat(50), 9_900, "x".repeat(50)));
        // Blanks at the cut: nothing to leave out.
        let line = format!("{} {}", "a ".repeat(100), " b".repeat(100));
        let (head, omitted, tail) = clip(100, &[&line]);
        assert_eq!((head.chars().count(), tail.chars().count()), (50, 50));
        assert_eq!(omitted, line.chars().count() as u64 - 100);
    }
}
