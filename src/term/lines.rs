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
        self.tail.push_str(rest);
        self.tail_chars += rest_n;
        if self.tail_chars > 2 * self.t {
            let drop = self.tail_chars - self.t;
            let at = self
                .tail
                .char_indices()
                .nth(drop)
                .map_or(self.tail.len(), |(i, _)| i);
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
            sink.line(Line {
                head: &self.head,
                omitted: self.total - 2 * keep as u64,
                tail: &self.tail[at..],
            });
        }
        self.clear();
    }
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
}
