//! The value rules: whether a value, found where a secret could stand (an assignment, a URL
//! password, a flag's argument, a credential), is obviously not one: empty, a boolean or
//! `none`, a short number, a variable reference, a placeholder, a mask, a path or a key file's
//! name (see *Not redacted* in the [module docs](super)).
//!
//! The detectors (`rules`), the short-flag reader (`flags`) and learning (`learn`) all ask it;
//! it asks none of them.

use regex::Regex;
use std::sync::LazyLock;

/// Values that are obviously not secrets (see *Not redacted* in the [module docs](super)).
pub(super) fn is_non_secret(value: &str, quoted: bool) -> bool {
    let t = value.trim();
    if t.is_empty() {
        return true;
    }
    let lower = t.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "true"
            | "false"
            | "null"
            | "nil"
            | "none"
            | "yes"
            | "no"
            | "on"
            | "off"
            | "undefined"
            | "empty"
            | "n/a"
    ) {
        return true;
    }
    if t.starts_with("${")
        || t.starts_with("$(")
        || t.strip_prefix('$')
            .is_some_and(|v| is_identifier(v) && !v.contains(['.', ':']))
    {
        return true;
    }
    if (t.len() > 2 && t.starts_with('%') && t.ends_with('%'))
        || (t.starts_with('<') && t.ends_with('>'))
        || t.starts_with("{{")
    {
        return true;
    }
    if t.starts_with('(')
        && t[1..]
            .trim_end_matches(')')
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == ' ')
    {
        return true;
    }
    if t.chars()
        .all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '•' | '…'))
    {
        return true;
    }
    if t.len() <= 8 && t.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    if t.starts_with("~/") || t.starts_with("./") || t.starts_with("../") || ROOTED_PATH.is_match(t)
    {
        return true;
    }
    if KEY_FILE.is_match(t) {
        return true;
    }
    // Public by design: Stripe publishable test keys, Mapbox public tokens.
    if t.starts_with("pk_test_") || t.starts_with("pk.eyJ") {
        return true;
    }
    !quoted && t.starts_with(['{', '['])
}

/// An identifier, `::` and `.` paths included (`os.environ`, `token::Token`).
pub(super) fn is_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':' || b == b'.')
}

static ROOTED_PATH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^/[a-z][a-z0-9_.-]*/").expect("path pattern"));

static KEY_FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^[A-Za-z0-9_.-]+\.(?:pem|key|pub|crt|cer|csr|der|p8|p12|pfx|jks|json|txt|asc|gpg|env|ya?ml|toml|ini|conf|cfg)$",
    )
    .expect("key file pattern")
});
