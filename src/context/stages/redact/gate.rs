//! The gate in front of the detectors: one pass over a text's byte pairs that finds which of a
//! few hundred literals it holds, and so whether any detector can find a secret there (the
//! prefilter literals of `rules`) and which patterns can match at all (each pattern's *gate*:
//! literals of which every match holds one). Only those patterns run, so no regex pass over
//! the whole pattern set is needed (a `RegexSet` of counted repetitions keeps building lazy DFA
//! states on random text and cost more than the detectors it spared).
//!
//! Case-insensitive literals are compared ASCII-only, so the gate is only used on ASCII text
//! (Unicode case folding matches `K` KELVIN SIGN for `k`); `rules` takes another way for the
//! rest.
//!
//! The cost: per byte, one look-up in a table of the literals' first two bytes; on a
//! hit (a few per line of ordinary output), a comparison with the literals that start so.

/// Pattern indices (detectors then token rows) as bits.
pub(super) type Mask = u128;

/// A literal given as `(?i)text` is matched in any ASCII case; otherwise exactly.
struct Lit {
    bytes: Vec<u8>,
    nocase: bool,
    /// The patterns it gates.
    mask: Mask,
    /// Whether it is one of the prefilter's literals.
    prefilter: bool,
}

pub(super) struct Gate {
    lits: Vec<Lit>,
    /// For each pair of bytes `(b0 << 8) | b1`, the literals starting with it (index into
    /// `buckets`, plus one; 0: none).
    bucket_of: Box<[u16]>,
    buckets: Vec<Vec<u16>>,
}

/// What [`Gate::scan`] found in a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Found {
    /// A prefilter literal is there: a detector may find a secret.
    pub prefilter: bool,
    /// The patterns whose gate literal is there.
    pub mask: Mask,
}

impl Gate {
    /// A gate over `prefilter` literals and, for pattern `i`, the literals of `gates[i]`.
    pub fn new(prefilter: &[&str], gates: &[Vec<String>]) -> Gate {
        assert!(
            gates.len() <= Mask::BITS as usize,
            "more patterns than mask bits"
        );
        let mut lits: Vec<Lit> = Vec::new();
        let mut add = |spec: &str, mask: Mask, prefilter: bool| {
            let (text, nocase) = match spec.strip_prefix("(?i)") {
                Some(t) => (t.to_ascii_lowercase(), true),
                None => (spec.to_string(), false),
            };
            assert!(text.len() >= 2 && text.is_ascii(), "gate literal {spec:?}");
            let bytes = text.into_bytes();
            match lits
                .iter_mut()
                .find(|l| l.bytes == bytes && l.nocase == nocase)
            {
                Some(l) => {
                    l.mask |= mask;
                    l.prefilter |= prefilter;
                }
                None => lits.push(Lit {
                    bytes,
                    nocase,
                    mask,
                    prefilter,
                }),
            }
        };
        for p in prefilter {
            add(p, 0, true);
        }
        for (i, g) in gates.iter().enumerate() {
            assert!(!g.is_empty(), "pattern {i} has no gate literal");
            for l in g {
                add(l, 1 << i, false);
            }
        }
        let mut bucket_of = vec![0u16; 1 << 16].into_boxed_slice();
        let mut buckets: Vec<Vec<u16>> = Vec::new();
        for (n, l) in lits.iter().enumerate() {
            let cases = |b: u8| -> Vec<u8> {
                if l.nocase && b.is_ascii_alphabetic() {
                    vec![b.to_ascii_lowercase(), b.to_ascii_uppercase()]
                } else {
                    vec![b]
                }
            };
            for b0 in cases(l.bytes[0]) {
                for b1 in cases(l.bytes[1]) {
                    let pair = (usize::from(b0) << 8) | usize::from(b1);
                    if bucket_of[pair] == 0 {
                        buckets.push(Vec::new());
                        bucket_of[pair] = u16::try_from(buckets.len()).expect("buckets");
                    }
                    buckets[usize::from(bucket_of[pair]) - 1]
                        .push(u16::try_from(n).expect("literals"));
                }
            }
        }
        Gate {
            lits,
            bucket_of,
            buckets,
        }
    }

    /// The literals of `text` (ASCII; see the module documentation).
    pub fn scan(&self, text: &[u8]) -> Found {
        let mut found = Found {
            prefilter: false,
            mask: 0,
        };
        for (i, pair) in text.windows(2).enumerate() {
            let bucket = self.bucket_of[(usize::from(pair[0]) << 8) | usize::from(pair[1])];
            if bucket == 0 {
                continue;
            }
            let rest = &text[i..];
            for &n in &self.buckets[usize::from(bucket) - 1] {
                let l = &self.lits[usize::from(n)];
                let here = rest.get(..l.bytes.len()).is_some_and(|r| {
                    if l.nocase {
                        r.eq_ignore_ascii_case(&l.bytes)
                    } else {
                        r == l.bytes
                    }
                });
                if here {
                    found.prefilter |= l.prefilter;
                    found.mask |= l.mask;
                }
            }
        }
        found
    }
}

/// The literal a pattern of the token table starts with (after its `\b`), when it starts with
/// one: escapes `\.` `\-` `\/` read as the char; the last char is dropped when a quantifier
/// that allows zero follows it.
pub(super) fn leading_literal(pattern: &str) -> Option<String> {
    let p = pattern.strip_prefix("(?-u:\\b)").unwrap_or(pattern);
    let mut lit = String::new();
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('.' | '-' | '/')) => lit.push(e),
                _ => break,
            },
            '?' | '*' | '{' => {
                lit.pop();
                break;
            }
            '[' | '(' | '+' | '|' | '^' | '$' | '.' | ')' => break,
            c => lit.push(c),
        }
    }
    (lit.len() >= 2).then_some(lit)
}

/// The gate of a token row whose pattern starts with no literal (a class or a group).
pub(super) fn token_gate(pattern: &str) -> Vec<String> {
    if let Some(l) = leading_literal(pattern) {
        return vec![l];
    }
    /// A piece of the pattern that says which row it is, and the row's literals.
    const INNER: &[(&str, &[&str])] = &[
        ("}:A[", &[":A"]),
        (
            "(?:glft|glimt|glagent|gloas)-",
            &["glft-", "glimt-", "glagent-", "gloas-"],
        ),
        ("sig=", &["sig="]),
        ("(?:sentry|ingest)", &["://"]),
        ("}-us[", &["-us"]),
        ("\\.atlasv1\\.", &[".atlasv1."]),
        ("]Q~[", &["Q~"]),
        ("}_mmk", &["_mmk"]),
    ];
    INNER
        .iter()
        .find(|(piece, _)| pattern.contains(piece))
        .map(|(_, lits)| lits.iter().map(|l| l.to_string()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate() -> Gate {
        let gates = vec![
            vec!["(?i)token".to_string()],
            vec!["ghp_".to_string(), "-u".to_string()],
        ];
        Gate::new(&["(?i)token", "-u", "AKIA"], &gates)
    }

    #[test]
    fn finds_literals_in_any_case_where_asked_and_at_the_end() {
        let g = gate();
        let found = |t: &str| g.scan(t.as_bytes());
        assert_eq!(found("x ToKeN y").mask, 0b01);
        assert!(found("x ToKeN y").prefilter);
        assert_eq!(found("curl -u").mask, 0b10);
        assert_eq!(found("GHP_ only").mask, 0, "case-sensitive literal");
        assert_eq!(found("ghp_").mask, 0b10);
        assert!(!found("ghp_").prefilter, "not a prefilter literal");
        assert!(found("...AKIA").prefilter);
        assert_eq!(
            found("...AKI"),
            Found {
                prefilter: false,
                mask: 0
            }
        );
        assert_eq!(found("toke").mask, 0, "a literal cut short by the end");
        assert_eq!(found("tok[n").mask, 0, "a bracket is no letter");
        assert_eq!(found("").mask, 0);
    }

    #[test]
    fn token_rows_that_start_with_a_class_have_a_gate() {
        assert_eq!(
            leading_literal(r"(?-u:\b)ya29\.[0-9]"),
            Some("ya29.".into())
        );
        assert_eq!(leading_literal(r"(?-u:\b)7za?x"), Some("7z".into()));
        assert_eq!(token_gate(r"(?-u:\b)[0-9]{5,16}:A[0-9]{34}"), [":A"]);
        assert!(token_gate(r"[0-9]+x").is_empty());
    }
}
