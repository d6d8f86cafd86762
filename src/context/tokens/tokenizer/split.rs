//! Pretokenization: tiktoken's split of a text into pieces, without fancy-regex.
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

use std::sync::{Mutex, MutexGuard, OnceLock};

use regex::Regex;
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::{Anchored, Input};

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

/// One pattern, compiled once per process on first use.
///
/// The pieces of a text are contiguous (every character starts a match of some alternative), so
/// each is found with an anchored forward search of a lazy DFA: its end is all that is unknown.
/// That skips the reverse search (and reverse automaton) the `regex` crate would run to find
/// where an unanchored match starts. The lazy DFA's states are built as the text needs them and
/// kept in its cache for the process. Should a search ever not match where the previous piece
/// ended, or the lazy DFA give up, the piece is found with an unanchored `regex::Regex` search,
/// as tiktoken's `find_iter` would find it.
struct Splitter {
    src: &'static str,
    dfa: DFA,
    cache: Mutex<Cache>,
    fallback: OnceLock<Regex>,
}

impl Splitter {
    fn new(src: &'static str) -> Splitter {
        // A constant pattern: the unit tests compile both.
        let dfa = DFA::new(src).expect("tokenizer pattern compiles");
        let cache = Mutex::new(dfa.create_cache());
        Splitter {
            src,
            dfa,
            cache,
            fallback: OnceLock::new(),
        }
    }

    /// The lazy DFA's cache, for one text's pieces.
    fn cache(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|poisoned| {
            let mut cache = poisoned.into_inner();
            cache.reset(&self.dfa);
            cache
        })
    }

    /// The (start, end) of the match of the pattern at or after `pos`, as tiktoken finds it.
    fn find(&self, cache: &mut Cache, text: &str, pos: usize) -> Option<(usize, usize)> {
        let input = Input::new(text).range(pos..).anchored(Anchored::Yes);
        match self.dfa.try_search_fwd(cache, &input) {
            Ok(Some(end)) if end.offset() > pos => Some((pos, end.offset())),
            _ => self.find_unanchored(text, pos),
        }
    }

    /// [`Splitter::find`] with the `regex` crate, unanchored: the fallback.
    fn find_unanchored(&self, text: &str, pos: usize) -> Option<(usize, usize)> {
        let regex = self
            .fallback
            .get_or_init(|| Regex::new(self.src).expect("tokenizer pattern compiles"));
        regex.find_at(text, pos).map(|m| (m.start(), m.end()))
    }
}

impl Pattern {
    fn splitter(self) -> &'static Splitter {
        static CL: OnceLock<Splitter> = OnceLock::new();
        static O2: OnceLock<Splitter> = OnceLock::new();
        match self {
            Pattern::Cl100k => CL.get_or_init(|| Splitter::new(CL100K)),
            Pattern::O200k => O2.get_or_init(|| Splitter::new(O200K)),
        }
    }
}

/// Calls `f` with each piece of `text`, in order, as tiktoken's `encode_ordinary` splits it.
pub(super) fn for_each_piece(text: &str, pattern: Pattern, mut f: impl FnMut(&str)) {
    if text.is_empty() {
        return;
    }
    let splitter = pattern.splitter();
    let mut cache = splitter.cache();
    let mut pos = 0;
    while pos < text.len() {
        let Some((start, mut end)) = splitter.find(&mut cache, text, pos) else {
            break;
        };
        let piece = &text[start..end];
        if end < text.len()
            && piece
                .chars()
                .all(|c| c.is_whitespace() && c != '\r' && c != '\n')
        {
            let mut chars = piece.char_indices();
            if let (Some(_), Some((last, _))) = (chars.next(), chars.next_back()) {
                end = start + last;
            }
        }
        f(&text[start..end]);
        pos = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchored_dfa_and_unanchored_fallback_find_the_same_pieces() {
        let text = "Hello,  world's  \t\r\n  42345 Привет ǅ e\u{301} 世界 😀!!\n\n  x  ";
        for pattern in [Pattern::Cl100k, Pattern::O200k] {
            let s = pattern.splitter();
            let mut cache = s.cache();
            let mut pos = 0;
            let mut n = 0;
            while pos < text.len() {
                let found = s.find(&mut cache, text, pos);
                assert_eq!(found, s.find_unanchored(text, pos), "{pattern:?} at {pos}");
                pos = found.unwrap().1;
                n += 1;
            }
            assert!(n > 15, "{pattern:?}: {n} pieces");
        }
    }
}
