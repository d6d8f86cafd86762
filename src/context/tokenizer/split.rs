//! Pretokenization: tiktoken's split of a text into pieces, with the `regex` crate.
//!
//! tiktoken's patterns (`tiktoken_ext/openai_public.rs` in tiktoken-rs) need fancy-regex for
//! one alternative, `\s+(?!\S)`: a run of whitespace followed by more whitespace or the end.
//! The patterns here drop it and end in `\s+` instead (cl100k's last alternative is `\s`); the
//! lookahead is then emulated on the match: a whitespace-only match without `\r` or `\n` that
//! stops before a non-whitespace character (it cannot stop anywhere else, `\s+` is greedy) and
//! is at least two characters long gives back its last character, which starts the next piece
//! (as `" word"`). That is exactly what `\s+(?!\S)` matches there; a one-character run is what
//! `\s` (cl100k) or `\s+` (o200k) matched. Whitespace-only matches of the other alternatives
//! either reach the end of the text (`\s+$`) or hold a newline (`\s*[\r\n]`), so the rule never
//! applies to them. Possessive quantifiers (cl100k) become greedy: each is followed by nothing
//! its class could give back to, so the matches are the same.

use std::sync::OnceLock;

use regex::Regex;

/// `cl100k_base`'s pattern, as described in the module docs.
const CL100K: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)",
    r"|[^\r\n\p{L}\p{N}]?\p{L}+",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s+$",
    r"|\s*[\r\n]",
    r"|\s+",
);

/// `o200k_base`'s pattern, as described in the module docs.
const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+",
);

/// Which encoding's pattern to split with.
#[derive(Clone, Copy, Debug)]
pub(super) enum Pattern {
    Cl100k,
    O200k,
}

impl Pattern {
    /// The compiled pattern, built once per process on first use.
    fn regex(self) -> &'static Regex {
        static CL: OnceLock<Regex> = OnceLock::new();
        static O2: OnceLock<Regex> = OnceLock::new();
        let (cell, src) = match self {
            Pattern::Cl100k => (&CL, CL100K),
            Pattern::O200k => (&O2, O200K),
        };
        // A constant pattern: the unit tests compile both.
        cell.get_or_init(|| Regex::new(src).expect("tokenizer pattern compiles"))
    }
}

/// The pieces of `text`, in order, as tiktoken's `encode_ordinary` splits it.
pub(super) fn pieces(text: &str, pattern: Pattern) -> Pieces<'_> {
    Pieces {
        text,
        pos: 0,
        regex: pattern.regex(),
    }
}

/// Iterator returned by [`pieces`].
pub(super) struct Pieces<'t> {
    text: &'t str,
    pos: usize,
    regex: &'static Regex,
}

impl<'t> Iterator for Pieces<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let m = self.regex.find_at(self.text, self.pos)?;
        let piece = m.as_str();
        let mut end = m.end();
        if end < self.text.len()
            && piece
                .chars()
                .all(|c| c.is_whitespace() && c != '\r' && c != '\n')
        {
            let mut chars = piece.char_indices();
            if let (Some(_), Some((last, _))) = (chars.next(), chars.next_back()) {
                end = m.start() + last;
            }
        }
        self.pos = end;
        Some(&self.text[m.start()..end])
    }
}
