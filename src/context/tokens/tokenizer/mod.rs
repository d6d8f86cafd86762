//! Token counting for the budget stage.
//!
//! A [`TokenCounter`] says how many tokens a text costs a language model. Three are built in
//! (see [`TOKENIZERS`]):
//!
//! * `o200k`: OpenAI's `o200k_base` BPE (gpt-4o, gpt-4.1, o3, o4, gpt-5); also the approximation
//!   used for models whose tokenizer is not public (Anthropic, Google).
//! * `cl100k`: OpenAI's `cl100k_base` BPE (gpt-4, gpt-3.5-turbo); also the approximation used for
//!   local models (Llama 3's tokenizer is cl100k plus 28k extra tokens).
//! * `chars4`: `ceil(chars / 4)`, a cheap fallback that needs no tables.
//!
//! The counts are exactly tiktoken's (`encode_ordinary(text).len()` in tiktoken-rs, which the
//! tests check), so special tokens such as `<|endoftext|>` that appear in recorded output are
//! counted as the ordinary text they are. tiktoken-rs builds its hash maps at run time from
//! base64 text (~120 ms for o200k); here `build.rs` writes static tables that are embedded in
//! the binary and cost nothing to load ([`table`]), the text is split with a lazy DFA of the
//! `regex` crate's engine ([`split`]) and each piece is merged as tiktoken does. The only
//! run-time set-up is compiling one pattern on first use (~4.5 million instructions, about
//! 1.5 ms).

use anyhow::{Result, bail};

#[cfg(test)]
mod reference;
mod split;
mod table;

use split::Pattern;
use table::Table;

/// Counts the tokens a text costs.
pub(crate) trait TokenCounter {
    /// The name this counter is selected by (one of [`TOKENIZERS`]).
    fn name(&self) -> &str;
    /// Number of tokens in `text`.
    fn count(&self, text: &str) -> usize;
}

/// Names accepted by [`tokenizer`].
pub(crate) const TOKENIZERS: &[&str] = &["o200k", "cl100k", "chars4"];

/// Tokens `text` counts with the tokenizer `name` (`o200k`, `cl100k`, `chars4`); `None` for an
/// unknown name. Public for the tests, which check that what a front end says fits a budget
/// does.
pub fn count_with(name: &str, text: &str) -> Option<usize> {
    tokenizer(name).ok().map(|t| t.count(text))
}

/// The counter called `name` (one of [`TOKENIZERS`]).
pub(crate) fn tokenizer(name: &str) -> Result<Box<dyn TokenCounter>> {
    match name {
        "o200k" => Ok(Box::new(Bpe {
            name: "o200k",
            table: &table::O200K,
            pattern: Pattern::O200k,
        })),
        "cl100k" => Ok(Box::new(Bpe {
            name: "cl100k",
            table: &table::CL100K,
            pattern: Pattern::Cl100k,
        })),
        "chars4" => Ok(Box::new(Chars4)),
        other => bail!(
            "unknown tokenizer '{other}'; known tokenizers: {}",
            TOKENIZERS.join(", ")
        ),
    }
}

struct Bpe {
    name: &'static str,
    table: &'static Table,
    pattern: Pattern,
}

impl TokenCounter for Bpe {
    fn name(&self) -> &str {
        self.name
    }

    fn count(&self, text: &str) -> usize {
        let mut n = 0;
        split::for_each_piece(text, self.pattern, |piece| {
            n += self.table.count_piece(piece.as_bytes());
        });
        n
    }
}

struct Chars4;

impl TokenCounter for Chars4 {
    fn name(&self) -> &str {
        "chars4"
    }

    fn count(&self, text: &str) -> usize {
        text.chars().count().div_ceil(4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in TOKENIZERS {
            assert_eq!(tokenizer(name).unwrap().name(), *name);
        }
    }

    #[test]
    fn o200k_known_counts() {
        let t = tokenizer("o200k").unwrap();
        assert_eq!(t.count(""), 0);
        assert_eq!(t.count("hello world"), 2);
        assert_eq!(t.count("$ cargo build"), 3);
        assert_eq!(t.count("error[E0308]: mismatched types"), 8);
        assert_eq!(t.count("Привет, как дела?"), 6);
        assert_eq!(t.count("こんにちは世界"), 2);
    }

    #[test]
    fn cl100k_known_counts() {
        let t = tokenizer("cl100k").unwrap();
        assert_eq!(t.count(""), 0);
        assert_eq!(t.count("hello world"), 2);
        assert_eq!(t.count("$ cargo build"), 3);
        assert_eq!(t.count("error[E0308]: mismatched types"), 8);
        // cl100k has fewer non-Latin merges than o200k: the two tables really differ.
        assert_eq!(t.count("Привет, как дела?"), 8);
        assert_eq!(t.count("こんにちは世界"), 4);
    }

    #[test]
    fn special_tokens_are_counted_as_text() {
        let t = tokenizer("o200k").unwrap();
        // As a special token this would be 1; as ordinary text it is several.
        assert_eq!(t.count("<|endoftext|>"), 7);
    }

    #[test]
    fn chars4_rounds_up_and_counts_chars_not_bytes() {
        let t = tokenizer("chars4").unwrap();
        assert_eq!(t.count(""), 0);
        assert_eq!(t.count("a"), 1);
        assert_eq!(t.count("abcd"), 1);
        assert_eq!(t.count("abcde"), 2);
        assert_eq!(t.count("ééééé"), 2); // 5 chars, 10 bytes
    }

    #[test]
    fn longer_text_costs_more() {
        for name in TOKENIZERS {
            let t = tokenizer(name).unwrap();
            let line = "   Compiling omnish v0.1.0 (/home/user/omnish)\n";
            let one = t.count(line);
            let ten = t.count(&line.repeat(10));
            assert!(one > 0, "{name}");
            assert!(ten > one * 5 && ten <= one * 10 + 10, "{name}: {one} {ten}");
        }
    }

    #[test]
    fn unknown_name_lists_known_names() {
        let err = tokenizer("gpt2").err().unwrap().to_string();
        assert!(err.contains("'gpt2'"), "{err}");
        for name in TOKENIZERS {
            assert!(err.contains(name), "{err}");
        }
    }
}
