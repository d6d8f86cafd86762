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
    if is_placeholder(t) || is_sealed(t) {
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

/// A token shape filled with a placeholder rather than a secret: a run of 8 or more of one mask
/// character (`ghp_xxxxxxxx…`, `AKIAXXXXXXXXXXXXXXXX`), a value mostly made of one repeated
/// character, or a documentation example (`…EXAMPLE`, AWS's example keys). Narrower than
/// [`is_placeholder`]: a provider's shape already says "secret", so only obvious filler undoes it.
pub(crate) fn is_filler(v: &str) -> bool {
    let b = v.as_bytes();
    let mut run = 0;
    let mut prev = 0u8;
    let mut longest = 0;
    for &c in b {
        run = if c == prev { run + 1 } else { 1 };
        prev = c;
        longest = longest.max(run);
        if run >= 8 && matches!(c, b'*' | b'x' | b'X' | b'#') {
            return true;
        }
    }
    b.len() >= 8 && longest * 2 >= b.len()
        || b.len() >= 7 && b[b.len() - 7..].eq_ignore_ascii_case(b"example")
        || v.contains("EXAMPLEEXAMPLE")
        || AWS_EXAMPLES.contains(&v)
}

/// A value that stands for a secret without being one: a mask or a run of one character
/// (`xxxx-xxxx`, `****ABCD`, `gho_*****`, `AKIAXXXXXXXXXXXXXXXX`, `0000…`), a documentation
/// example (`…EXAMPLE`, `your_api_key_here`, `YOUR_API_KEY`, `INSERT_TOKEN_HERE`, `REPLACE_ME`,
/// `changeme`, `[PASSWORD]`), or a run of the alphabet or the digits (`abcdefghij…`, `01234567…`).
pub(crate) fn is_placeholder(v: &str) -> bool {
    let b = v.as_bytes();
    // A run of 4 or more mask characters, or a value mostly made of one repeated character.
    let mut run = 0;
    let mut prev = 0u8;
    let mut longest = 0;
    for &c in b {
        run = if c == prev { run + 1 } else { 1 };
        prev = c;
        if run > longest {
            longest = run;
        }
        if run >= 4 && matches!(c, b'*' | b'x' | b'X' | b'#') {
            return true;
        }
    }
    if b.len() >= 8 && longest * 2 >= b.len() {
        return true;
    }
    if b.len() > 2 && b[0] == b'[' && b[b.len() - 1] == b']' {
        let inner = &b[1..b.len() - 1];
        if inner
            .iter()
            .all(|c| c.is_ascii_uppercase() || matches!(c, b'_' | b' ' | b'-'))
        {
            return true;
        }
    }
    // Documentation examples (`AKIAIOSFODNN7EXAMPLE`, `sk_live_EXAMPLEEXAMPLE`, AWS's example
    // secret keys), and a value cut short in documentation (`ops_eyJzaWdu…`, `sk-…`).
    if b.len() >= 7 && b[b.len() - 7..].eq_ignore_ascii_case(b"example")
        || v.contains("EXAMPLEEXAMPLE")
        || AWS_EXAMPLES.contains(&v)
        || v.ends_with("...")
        || v.ends_with('…')
    {
        return true;
    }
    let starts = |p: &str| b.len() >= p.len() && b[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    let ends =
        |p: &str| b.len() >= p.len() && b[b.len() - p.len()..].eq_ignore_ascii_case(p.as_bytes());
    // `…_here` in words only (`your_api_key_here`, `token-goes-here`): a value with digits
    // before it (`s3cr3t-value-here`) is a password that happens to end so.
    let words_only = !b.iter().any(u8::is_ascii_digit);
    if starts("your") && b.get(4).is_none_or(|c| !c.is_ascii_digit())
        || (ends("_here") || ends("-here")) && words_only
        || starts("insert")
        || starts("replace")
        || starts("changeme")
        || starts("placeholder")
        || ["password", "secret", "token", "apikey", "api_key"]
            .iter()
            .any(|w| v.eq_ignore_ascii_case(w))
    {
        return true;
    }
    // `abcdefghijklmnop`, `0123456789abcdef…`: most neighbours are successive characters.
    if b.len() >= 8 {
        let steps = b
            .windows(2)
            .filter(|w| w[1] == w[0].wrapping_add(1))
            .count();
        if steps * 10 >= (b.len() - 1) * 8 {
            return true;
        }
    }
    false
}

/// The example secret access keys of AWS's documentation.
const AWS_EXAMPLES: &[&str] = &[
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
];

/// Ciphertext that is safe to show by design: sealed-secrets (`AgB…`, long), SOPS (`ENC[…]`),
/// AWS KMS blobs (`AQICAH…`), Vault transit (`vault:v1:…`), Ansible vault (`$ANSIBLE_VAULT;…`,
/// `!vault |`).
pub(crate) fn is_sealed(v: &str) -> bool {
    v.starts_with("ENC[")
        || v.starts_with("AQICAH")
        || v.starts_with("vault:v")
        || v.starts_with("$ANSIBLE_VAULT;")
        || v.starts_with("!vault")
        || (v.len() >= 200 && v.starts_with("Ag") && v.as_bytes()[2].is_ascii_uppercase())
}

/// Whether `s` (letters and digits, perhaps with `_ - . ~ + / =`) reads as random rather than
/// as words: at least 16 chars, letters and digits (or both cases over at least 24 chars), and
/// the character class (lower case, upper case, digit) changes between at least 3 in 10
/// neighbouring chars. Random text over letters and digits changes class about 6 times in 10,
/// over lower case and digits 4 in 10; identifiers, words and paths rarely 2 in 10.
pub(crate) fn looks_random(s: &str) -> bool {
    let b = s.as_bytes();
    let class = |c: u8| match c {
        b'a'..=b'z' => 1u8,
        b'A'..=b'Z' => 2,
        b'0'..=b'9' => 3,
        _ => 0,
    };
    let (mut lower, mut upper, mut digit, mut n, mut switches) = (0, 0, 0, 0usize, 0usize);
    let mut prev = 0u8;
    for &c in b {
        let k = class(c);
        match k {
            1 => lower += 1,
            2 => upper += 1,
            3 => digit += 1,
            _ => continue,
        }
        if prev != 0 && k != prev {
            switches += 1;
        }
        prev = k;
        n += 1;
    }
    if n < 16 {
        return false;
    }
    let letters = lower + upper;
    let mixed = (letters > 0 && digit >= 2) || (lower >= 3 && upper >= 3 && n >= 24);
    mixed && switches * 10 >= (n - 1) * 3 && !is_placeholder(s)
}

/// Whether the character class (lower case, upper case, digit) changes between at least 3 in
/// 10 neighbouring letters or digits of `s` (see [`looks_random`]).
pub(crate) fn switches_often(s: &str) -> bool {
    let (mut n, mut switches, mut prev) = (0usize, 0usize, 0u8);
    for c in s.bytes() {
        let k = match c {
            b'a'..=b'z' => 1u8,
            b'A'..=b'Z' => 2,
            b'0'..=b'9' => 3,
            _ => continue,
        };
        if prev != 0 && k != prev {
            switches += 1;
        }
        prev = k;
        n += 1;
    }
    n >= 2 && switches * 10 >= (n - 1) * 3
}

/// The longest run of ASCII letters and digits in `s`.
pub(crate) fn longest_alnum_run(s: &str) -> usize {
    s.split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::len)
        .max()
        .unwrap_or(0)
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
