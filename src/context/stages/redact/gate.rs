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
//! The cost: per byte, one look-up in a table of the literals' first two bytes (seven pairs
//! read from one load of 8 bytes, with no bounds checks); on a hit, a look-up of the third
//! byte among those that follow the pair in a literal; on a hit of both (rare in ordinary
//! output), a comparison of the text's next 8 bytes, read as one word, with each literal that
//! starts so (one `or`, `and` and compare each; bytes past the 8th, in a few long literals,
//! compared one by one).

/// Pattern indices (detectors then token rows) as bits.
pub(super) type Mask = u128;

/// A literal given as `(?i)text` is matched in any ASCII case; otherwise exactly.
#[derive(Clone)]
struct Lit {
    bytes: Vec<u8>,
    nocase: bool,
    /// The patterns it gates.
    mask: Mask,
    /// Whether it is one of the prefilter's literals.
    prefilter: bool,
    /// Whether it is the first 8 bytes of a value a session learned ([`Gate::with_values`]).
    learned: bool,
}

#[derive(Clone)]
pub(super) struct Gate {
    lits: Vec<Lit>,
    /// For each pair of bytes `b0 b1`, read as a little-endian `u16`, the literals starting
    /// with it (index into `buckets`, plus one; 0: none).
    bucket_of: Box<[u16; 1 << 16]>,
    buckets: Vec<Box<[Entry]>>,
    /// For each bucket, the bytes that can follow its pair in a literal, as 256 bits (all of
    /// them where a literal is just the pair; 0 stands for the text's end): most pairs of
    /// ordinary text that start a literal (`re`, `st`, `co`) are turned away by their third
    /// byte before the bucket is read.
    thirds: Vec<[u64; 4]>,
}

/// A literal as the scan compares it: its first (up to) 8 bytes as one word, so that a
/// comparison is a load, an or, an and and a compare rather than a loop over bytes.
#[derive(Clone)]
struct Entry {
    /// The first bytes, lower case where the literal is matched in any case, little-endian.
    want: u64,
    /// Ones over the bytes of `want` (the literal's first 8 bytes or fewer).
    keep: u64,
    /// `0x20` at each letter that matches in any case: `or`ed into the text's bytes, it maps an
    /// ASCII upper-case letter to its lower case (and only an upper-case letter to a lower-case
    /// one, so a match is exact).
    fold: u64,
    /// The whole literal, for the bytes past the 8th.
    lit: u16,
    mask: Mask,
    prefilter: bool,
    learned: bool,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("literals", &self.lits.len())
            .field("buckets", &self.buckets.len())
            .finish_non_exhaustive()
    }
}

/// What [`Gate::scan`] found in a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Found {
    /// A prefilter literal is there: a detector may find a secret.
    pub prefilter: bool,
    /// The patterns whose gate literal is there.
    pub mask: Mask,
    /// The first 8 bytes of a learned value are there (only with [`Gate::with_values`]).
    pub learned: bool,
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
                    learned: false,
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
        Gate::index(lits)
    }

    /// This gate, also finding where `values` (learned values: ASCII, 8 bytes or more, matched
    /// exactly) may start: [`Found::learned`] is set where the first 8 bytes of one are in the
    /// text. Values that are not ASCII are left out: they cannot be in the ASCII text the gate
    /// reads.
    pub fn with_values<'v>(&self, values: impl IntoIterator<Item = &'v str>) -> Gate {
        let mut lits = self.lits.clone();
        let mut seen = std::collections::HashSet::new();
        for v in values {
            let v = v.as_bytes();
            if v.len() < 8 || !v.is_ascii() || !seen.insert(&v[..8]) {
                continue;
            }
            lits.push(Lit {
                bytes: v[..8].to_vec(),
                nocase: false,
                mask: 0,
                prefilter: false,
                learned: true,
            });
        }
        Gate::index(lits)
    }

    /// The gate over `lits`: the tables the scan reads.
    fn index(lits: Vec<Lit>) -> Gate {
        let mut bucket_of: Box<[u16; 1 << 16]> = vec![0u16; 1 << 16]
            .into_boxed_slice()
            .try_into()
            .expect("65536 pairs");
        let mut buckets: Vec<Vec<Entry>> = Vec::new();
        let mut thirds: Vec<[u64; 4]> = Vec::new();
        for (n, l) in lits.iter().enumerate() {
            let cases = |b: u8| -> Vec<u8> {
                if l.nocase && b.is_ascii_alphabetic() {
                    vec![b.to_ascii_lowercase(), b.to_ascii_uppercase()]
                } else {
                    vec![b]
                }
            };
            let (mut want, mut keep, mut fold) = (0u64, 0u64, 0u64);
            for (j, &b) in l.bytes.iter().take(8).enumerate() {
                want |= u64::from(b) << (8 * j);
                keep |= 0xff << (8 * j);
                if l.nocase && b.is_ascii_alphabetic() {
                    fold |= 0x20 << (8 * j);
                }
            }
            for b0 in cases(l.bytes[0]) {
                for b1 in cases(l.bytes[1]) {
                    let pair = usize::from(u16::from_le_bytes([b0, b1]));
                    if bucket_of[pair] == 0 {
                        buckets.push(Vec::new());
                        thirds.push([0; 4]);
                        bucket_of[pair] = u16::try_from(buckets.len()).expect("buckets");
                    }
                    let third = &mut thirds[usize::from(bucket_of[pair]) - 1];
                    match l.bytes.get(2) {
                        None => *third = [u64::MAX; 4],
                        Some(&b2) => {
                            for c in cases(b2) {
                                third[usize::from(c >> 6)] |= 1 << (c & 63);
                            }
                        }
                    }
                    buckets[usize::from(bucket_of[pair]) - 1].push(Entry {
                        want,
                        keep,
                        fold,
                        lit: u16::try_from(n).expect("literals"),
                        mask: l.mask,
                        prefilter: l.prefilter,
                        learned: l.learned,
                    });
                }
            }
        }
        Gate {
            lits,
            bucket_of,
            buckets: buckets.into_iter().map(Vec::into_boxed_slice).collect(),
            thirds,
        }
    }

    /// The literals of `text` (ASCII; see the module documentation).
    pub fn scan(&self, text: &[u8]) -> Found {
        let mut found = Found {
            prefilter: false,
            mask: 0,
            learned: false,
        };
        let n = text.len();
        let mut at = 0;
        // The pairs starting at `at..at + 7`, from one load of 8 bytes: most are in no bucket.
        while at + 8 <= n {
            let word = u64::from_le_bytes(text[at..at + 8].try_into().expect("8 bytes"));
            let buckets: [u16; 7] =
                std::array::from_fn(|k| self.bucket_of[usize::from((word >> (8 * k)) as u16)]);
            let mut hits = 0u32;
            for (k, &b) in buckets.iter().enumerate() {
                hits |= u32::from(b != 0) << k;
            }
            while hits != 0 {
                let k = hits.trailing_zeros() as usize;
                hits &= hits - 1;
                // The third byte, in the word but for the last pair (`at` reads it).
                if k == 6 || self.follows(buckets[k], (word >> (8 * (k + 2))) as u8) {
                    self.at(text, at + k, buckets[k], &mut found);
                }
            }
            at += 7;
        }
        while at + 1 < n {
            let bucket = self.bucket_of[usize::from(u16::from_le_bytes([text[at], text[at + 1]]))];
            if bucket != 0 {
                self.at(text, at, bucket, &mut found);
            }
            at += 1;
        }
        found
    }

    /// Whether `third` can follow the pair of `bucket` in a literal.
    #[inline]
    fn follows(&self, bucket: u16, third: u8) -> bool {
        self.thirds[usize::from(bucket) - 1][usize::from(third >> 6)] >> (third & 63) & 1 != 0
    }

    /// Adds to `found` the literals starting at `text[at]`, whose pair is in `bucket` (not 0).
    #[inline]
    fn at(&self, text: &[u8], at: usize, bucket: u16, found: &mut Found) {
        let n = text.len();
        let third = text.get(at + 2).copied().unwrap_or(0);
        if !self.follows(bucket, third) {
            return;
        }
        // The text's next 8 bytes (zeros past its end: no literal byte is 0).
        let word = match text.get(at..at + 8) {
            Some(w) => u64::from_le_bytes(w.try_into().expect("8 bytes")),
            None => {
                let mut w = [0u8; 8];
                w[..n - at].copy_from_slice(&text[at..]);
                u64::from_le_bytes(w)
            }
        };
        for e in self.buckets[usize::from(bucket) - 1].iter() {
            if (word | e.fold) & e.keep == e.want && self.rest_matches(e, &text[at..]) {
                found.prefilter |= e.prefilter;
                found.mask |= e.mask;
                found.learned |= e.learned;
            }
        }
    }

    /// Whether `rest` (starting where `e`'s first 8 bytes matched) holds the rest of its literal.
    #[inline]
    fn rest_matches(&self, e: &Entry, rest: &[u8]) -> bool {
        let l = &self.lits[usize::from(e.lit)];
        if l.bytes.len() <= 8 {
            return true;
        }
        rest.get(8..l.bytes.len()).is_some_and(|r| {
            if l.nocase {
                r.eq_ignore_ascii_case(&l.bytes[8..])
            } else {
                r == &l.bytes[8..]
            }
        })
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
                mask: 0,
                learned: false,
            }
        );
        assert_eq!(found("toke").mask, 0, "a literal cut short by the end");
        assert_eq!(found("tok[n").mask, 0, "a bracket is no letter");
        assert_eq!(found("").mask, 0);
    }

    #[test]
    fn finds_literals_at_every_offset_of_the_pairs_read_at_once() {
        let g = gate();
        for before in 0..24 {
            for after in 0..10 {
                let pad = |n: usize| "ab".repeat(n)[..n].to_string();
                let text = format!("{}ToKeN{}", pad(before), pad(after));
                assert_eq!(g.scan(text.as_bytes()).mask, 0b01, "{text:?}");
                let text = format!("{}x-u{}", pad(before), pad(after));
                assert_eq!(g.scan(text.as_bytes()).mask, 0b10, "{text:?}");
                let text = format!("{}toke{}", pad(before), pad(after));
                assert_eq!(g.scan(text.as_bytes()).mask, 0, "{text:?}");
            }
        }
    }

    #[test]
    fn learned_values_are_found_by_their_first_8_bytes_at_every_offset() {
        let base = gate();
        let g = base.with_values([
            "S3cr3t-pa55",
            "S3cr3t-pa99-more",
            "caf\u{e9}-S3cr3t",
            "short1",
        ]);
        let learned = |t: &str| g.scan(t.as_bytes()).learned;
        for before in 0..20 {
            let pad = "ab".repeat(before)[..before].to_string();
            assert!(learned(&format!("{pad}S3cr3t-p")), "{pad}");
            assert!(learned(&format!("{pad}S3cr3t-pa55 and on")), "{pad}");
            assert!(!learned(&format!("{pad}S3cr3t- x")), "{pad}: 7 bytes");
            assert!(!learned(&format!("{pad}s3cr3t-pa55")), "{pad}: exact case");
        }
        assert!(!learned("short1 short1"), "under 8 bytes: never learned");
        assert!(
            !learned("caf-S3cr"),
            "a value that is not ASCII is left out"
        );
        // The detectors' literals are still found, and the base gate finds no learned value.
        assert_eq!(g.scan(b"x ToKeN S3cr3t-pa55").mask, 0b01);
        assert!(!base.scan(b"S3cr3t-pa55").learned);
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
