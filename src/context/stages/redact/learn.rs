//! Session learning: a value once seen as a secret is redacted wherever it appears again.
//!
//! [`Learned`] holds the values a [`super::Redactor`] was taught (by running the detectors over
//! the session's command lines and the output lines the pipeline already read) and finds every
//! occurrence of them in a text with one compiled alternation of literals, so `printenv
//! DB_PASSWORD` or `echo $DB_PASSWORD` after `export DB_PASSWORD=…` shows no password.
//!
//! # What is learned ([`learnable`])
//!
//! A learned value is matched anywhere, with no context, so only values that cannot be common
//! text are learned:
//!
//! * 8 to 256 chars, on one line, no control characters, not already a marker;
//! * not a value the detectors treat as a non-secret (a reference, a placeholder, a path, ...);
//! * at least one letter (so not a date, a number or an address), and not a version number;
//! * at least 2 character classes (lower case, upper case, digit, other) and 5 distinct chars,
//!   or, for a one-class value (`correcthorsebatterystaple`), at least 16 chars and 8 distinct.
//!
//! So `changeme`, `postgres`, `password`, `localhost` and `2026-11-23` are never learned, while
//! `S3cr3t-pa55`, `hunter2hunter2` and every provider token are. A value given with shell quoting
//! or backslash escapes is learned as written and as the shell prints it (`p\!x` → `p!x`).
//!
//! # Bounds
//!
//! At most [`MAX_LEARNED`] values per session (later ones are ignored); matching is one pass of
//! the `regex` crate's literal search over the text, and only over a text where the gate found
//! the first 8 bytes of a learned value (or a text that is not ASCII): [`Learned::gate`] is the
//! detectors' gate with those added, so a line with no learned value costs no pass of its own.

use regex::Regex;
use std::collections::HashSet;
use std::sync::{LazyLock, OnceLock};

use super::gate::Gate;
use super::values::is_non_secret;
use super::{Cand, cand};

/// The most values one session learns.
pub(crate) const MAX_LEARNED: usize = 1024;
/// The most values a redactor holds: its session's and those other sessions learned.
pub(crate) const MAX_HELD: usize = 8 * MAX_LEARNED;

/// Version numbers (`v1.2.3-rc1`, `2.0.0-beta.4`): letters, but common text.
static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[vV]?[0-9]+(?:\.[0-9]+)+(?:[-+][0-9A-Za-z.-]*)?$").expect("version pattern")
});

/// The kind written for an occurrence of a learned value.
pub(crate) const KIND: &str = "session-secret";
/// The least specific kind: any detector's match overlapping a learned value names the merged
/// replacement (see *Overlaps* in the [module docs](super)).
const PRIO: u8 = 30;

/// Whether `value`, found as a secret, may be redacted wherever it appears (see the module
/// documentation).
pub fn learnable(value: &str) -> bool {
    let n = value.chars().count();
    if !(8..=256).contains(&n)
        || value.chars().any(char::is_control)
        || value.contains("[REDACTED:")
        || is_non_secret(value, true)
    {
        return false;
    }
    if !value.chars().any(char::is_alphabetic) || VERSION.is_match(value) {
        return false;
    }
    let (mut lower, mut upper, mut digit, mut other) = (false, false, false, false);
    for c in value.chars() {
        match c {
            'a'..='z' => lower = true,
            'A'..='Z' => upper = true,
            '0'..='9' => digit = true,
            c if c.is_whitespace() => {}
            _ => other = true,
        }
    }
    let classes = [lower, upper, digit, other].iter().filter(|&&b| b).count();
    let distinct = value.chars().collect::<HashSet<_>>().len();
    if classes >= 2 {
        distinct >= 5
    } else {
        n >= 16 && distinct >= 8
    }
}

/// The values a session taught, and a matcher for them built on first use.
#[derive(Debug, Default)]
pub(crate) struct Learned {
    values: Vec<String>,
    seen: HashSet<String>,
    /// The values as one alternation of literals, built on first use.
    matcher: OnceLock<Option<Regex>>,
    /// The gate of [`Learned::gate`], built on first use.
    gate: OnceLock<Option<Gate>>,
}

impl Learned {
    /// Learns `value` (and its shell-unescaped spelling) when [`learnable`].
    pub fn add(&mut self, value: &str) {
        self.add_within(value, MAX_LEARNED);
    }

    /// [`Learned::add`], holding at most `cap` values: values learned before, from this
    /// session and others ([`MAX_HELD`]).
    pub fn add_within(&mut self, value: &str, cap: usize) {
        let unescaped = unescape(value);
        for v in [Some(value), unescaped.as_deref()].into_iter().flatten() {
            if self.values.len() < cap && learnable(v) && self.seen.insert(v.to_string()) {
                self.values.push(v.to_string());
                self.matcher = OnceLock::new();
                self.gate = OnceLock::new();
            }
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// `base` (the detectors' gate) with the first 8 bytes of every learned value added: where
    /// its scan of a text finds none ([`super::gate::Found::learned`]), [`Learned::find`] finds
    /// nothing. `base` is the same at every call.
    pub fn gate<'g>(&'g self, base: &'g Gate) -> &'g Gate {
        let values = || self.values.iter().map(String::as_str);
        let gate = self
            .gate
            .get_or_init(|| (!self.values.is_empty()).then(|| base.with_values(values())));
        gate.as_ref().unwrap_or(base)
    }

    /// Every occurrence of a learned value in `text` (the longest one where several start at
    /// the same place), except inside an existing marker.
    pub fn find(&self, text: &str, out: &mut Vec<Cand>) {
        let Some(re) = self.matcher.get_or_init(|| self.build()) else {
            return;
        };
        let markers: Vec<_> = if super::has_marker(text) {
            super::MARKER.find_iter(text).map(|m| m.range()).collect()
        } else {
            Vec::new()
        };
        for m in re.find_iter(text) {
            let r = m.range();
            if !markers.iter().any(|k| k.start < r.end && r.start < k.end) {
                out.push(cand(r, KIND, PRIO));
            }
        }
    }

    fn build(&self) -> Option<Regex> {
        if self.values.is_empty() {
            return None;
        }
        let mut sorted: Vec<&str> = self.values.iter().map(String::as_str).collect();
        // Longest first: with leftmost-first semantics the longest value starting at a place wins.
        sorted.sort_by_key(|v| std::cmp::Reverse(v.len()));
        let alternation = sorted
            .iter()
            .map(|v| regex::escape(v))
            .collect::<Vec<_>>()
            .join("|");
        Regex::new(&alternation).ok()
    }
}

/// `value` as the shell prints it when it was typed with backslash escapes, if that differs.
fn unescape(value: &str) -> Option<String> {
    if !value.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_and_short_values_are_not_learned() {
        for v in [
            "changeme",
            "postgres",
            "password",
            "localhost",
            "2026-11-23",
            "10.0.0.12",
            "1234567890123",
            "v1.2.3-rc1",
            "S3cr3t",
            "aaaaaaa1",
            "$DB_PASSWORD",
            "/run/secrets/db",
            "<password>",
            "secret\nvalue",
        ] {
            assert!(!learnable(v), "{v:?}");
        }
    }

    #[test]
    fn secret_looking_values_are_learned() {
        for v in [
            "S3cr3t-pa55",
            "hunter2hunter2",
            "correcthorsebatterystaple",
            "wJa1rXUtnF3MI/K7MDENGbPxRfiCYzEXAMPLEKEY",
            "p@ss w0rd!",
        ] {
            assert!(learnable(v), "{v:?}");
        }
    }

    #[test]
    fn finds_every_occurrence_longest_first_and_skips_markers() {
        let mut l = Learned::default();
        l.add("S3cr3t-pa55");
        l.add("S3cr3t-pa55-longer");
        l.add("S3cr3t");
        assert_eq!(l.len(), 2);
        l.add("ted:assignment");
        let text = "a S3cr3t-pa55 b S3cr3t-pa55-longer c [REDACTED:assignment] ted:assignment";
        let mut out = Vec::new();
        l.find(text, &mut out);
        let found: Vec<&str> = out.iter().map(|c| &text[c.range.clone()]).collect();
        assert_eq!(
            found,
            ["S3cr3t-pa55", "S3cr3t-pa55-longer", "ted:assignment"]
        );
    }

    #[test]
    fn escaped_values_are_learned_as_printed() {
        let mut l = Learned::default();
        l.add(r"p4ss\!w0rd\$x");
        let mut out = Vec::new();
        l.find("p4ss!w0rd$x", &mut out);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn bounded() {
        let mut l = Learned::default();
        for i in 0..MAX_LEARNED + 10 {
            l.add(&format!("Secret-{i:06}-x"));
        }
        assert_eq!(l.len(), MAX_LEARNED);
    }
}
