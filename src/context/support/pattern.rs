//! Regular expressions given by a person or an agent (`context --grep`, `search`, the MCP tools'
//! `grep` and `pattern`), compiled within bounds: a pattern longer than [`MAX_PATTERN_BYTES`] is
//! refused before it is parsed, and the compiled program and the lazy DFA's cache are held to
//! [`SIZE_LIMIT`] and [`DFA_SIZE_LIMIT`], so no pattern costs more than a few MiB however it is
//! written (`\w{1000}{1000}`, a 1 MiB alternation). Errors are one line that quotes at most a
//! short prefix of the pattern ([`quote`]), never the whole of it.

use regex::{Regex, RegexBuilder};

/// Longest pattern accepted, in bytes: far more than any search a person types, far less than
/// what would cost memory to parse.
pub(crate) const MAX_PATTERN_BYTES: usize = 4096;
/// Most bytes the compiled program of a pattern may take.
pub(crate) const SIZE_LIMIT: usize = 4 << 20;
/// Most bytes the lazy DFA's cache of a pattern may take (it falls back to slower engines,
/// never grows past it).
pub(crate) const DFA_SIZE_LIMIT: usize = 4 << 20;
/// Most chars of an argument an error message quotes.
pub(crate) const QUOTE_CHARS: usize = 60;

/// `pattern` compiled as [`regex::Regex`] within the bounds; `Err` is one line saying what is
/// wrong with it.
pub(crate) fn regex(pattern: &str) -> Result<Regex, String> {
    check_len(pattern)?;
    RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => too_big(pattern),
            e => invalid(pattern, &e.to_string()),
        })
}

/// `Err` (one line) when `pattern` is longer than [`MAX_PATTERN_BYTES`].
pub(crate) fn check_len(pattern: &str) -> Result<(), String> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "the regular expression {} is {} bytes long; at most {MAX_PATTERN_BYTES} are accepted",
            quote(pattern),
            pattern.len()
        ));
    }
    Ok(())
}

/// The error for a pattern whose compiled form is over the limits.
pub(crate) fn too_big(pattern: &str) -> String {
    format!(
        "the regular expression {} is too big once compiled (over {} MiB); use a simpler one \
         (fewer or smaller repetitions, fewer Unicode classes)",
        quote(pattern),
        SIZE_LIMIT >> 20
    )
}

/// The error for an invalid `pattern`, from the regex engine's `message` (which shows the whole
/// pattern over several lines): one line with the engine's reason and, when it says, where.
pub(crate) fn invalid(pattern: &str, message: &str) -> String {
    let lines: Vec<&str> = message.lines().filter(|l| !l.trim().is_empty()).collect();
    let reason = lines
        .last()
        .map(|l| l.trim().trim_start_matches("error:").trim())
        .unwrap_or("invalid");
    // regex-syntax shows a one-line pattern indented by 4, with carets under the bad part.
    let at = match lines.as_slice() {
        [_, shown, carets, ..]
            if !pattern.contains('\n')
                && shown.strip_prefix("    ") == Some(pattern)
                && carets.trim_start().starts_with('^') =>
        {
            let col = carets.chars().take_while(|&c| c == ' ').count();
            col.checked_sub(4).map(|c| format!(" (at char {})", c + 1))
        }
        _ => None,
    };
    format!(
        "invalid regular expression {}: {}{}",
        quote(pattern),
        reason,
        at.unwrap_or_default()
    )
}

/// `s` quoted for an error message: at most [`QUOTE_CHARS`] chars of it, control characters
/// escaped, and how long it was when it was cut.
pub(crate) fn quote(s: &str) -> String {
    let n = s.chars().count();
    if n <= QUOTE_CHARS {
        return format!("{s:?}");
    }
    let head: String = s.chars().take(QUOTE_CHARS).collect();
    format!("{head:?}… ({n} chars)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_patterns_are_one_line_with_reason_and_place() {
        let e = regex("ab(c").unwrap_err();
        assert_eq!(
            e,
            "invalid regular expression \"ab(c\": unclosed group (at char 3)"
        );
        let e = regex("x{2,1}").unwrap_err();
        assert!(
            e.starts_with("invalid regular expression \"x{2,1}\": "),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        // A pattern over several lines: the reason, no place.
        let e = regex("a\n(").unwrap_err();
        assert!(!e.contains('\n') && e.contains("unclosed group"), "{e}");
    }

    #[test]
    fn long_and_huge_patterns_are_refused_quoting_a_prefix() {
        let long = format!("({})", "a".repeat(1 << 20));
        let e = regex(&long).unwrap_err();
        assert!(e.len() < 200, "{e}");
        assert!(e.contains("1048578 bytes long"), "{e}");
        // Short to type, huge once compiled.
        let e = regex(r"\w{1000}{1000}").unwrap_err();
        assert!(e.contains("too big once compiled"), "{e}");
        assert!(e.len() < 300, "{e}");
        // The bound leaves room for real searches.
        assert!(regex(r"error\[E\d+\]|warning: unused \w+").is_ok());
        assert!(regex(&"abc|".repeat(MAX_PATTERN_BYTES / 4 - 1)).is_ok());
    }

    #[test]
    fn quotes_are_short_and_escaped() {
        assert_eq!(quote("a\"b"), r#""a\"b""#);
        assert_eq!(quote("\x1b[2J"), r#""\u{1b}[2J""#);
        let q = quote(&"é".repeat(1000));
        assert!(
            q.ends_with("… (1000 chars)") && q.chars().count() < 90,
            "{q}"
        );
    }
}
