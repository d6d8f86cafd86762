//! Detectors: the patterns that find secrets by their shape or their context, and the checks
//! around a match that tell a secret from code (`fn f(token: Token)`, `token = get_token()`).
//! Whether a value is obviously not a secret is [`super::values`]; passwords in short flags
//! are [`super::flags`], provider token shapes [`super::tokens`]: this module runs them all.

use regex::{Captures, Regex, RegexSet};
use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use super::values::{is_filler, is_identifier, is_non_secret, looks_random};
use super::{Cand, cand, flags, gate, tokens};

/// ASCII word boundary: keeps the patterns DFA-friendly on non-ASCII text.
const B: &str = r"(?-u:\b)";

/// Value of an assignment: double-quoted (escapes allowed, closing quote optional), single-quoted,
/// or unquoted.
const VALUE: &str = r#""(?:[^"\\\r\n]|\\.)*"?|'[^'\r\n]*'?|[^\s'"`]+"#;

/// Names that end in one of these words are looked at by the assignment detectors.
const NAME_END: &str = r"(?:token|secret|key|passwd|password|pwd|pass|passphrase|credentials?|apikey|key[_-]?data|key[_-]?base)";

struct Detector {
    pattern: fn() -> String,
    run: fn(&Regex, &str, bool, &mut Vec<Cand>),
    /// A cheap test that every text in which `run` finds something passes (a byte or a word
    /// the pattern or the checks after it need, see [`needs`]): a text that fails it skips the
    /// regex. Debug builds run the detector anyway and check that it finds nothing.
    needs: fn(&[u8]) -> bool,
}

impl Detector {
    /// `marker_follows`: `text` is a stretch that ends where an existing marker begins.
    fn run(&self, re: &Regex, text: &str, marker_follows: bool, out: &mut Vec<Cand>) {
        (self.run)(re, text, marker_follows, out)
    }
}

const P_GCP: u8 = 100;
const P_PRIVATE: u8 = 90;
const P_AWS_SECRET: u8 = 85;
const P_TOKEN: u8 = 80;
const P_JWT: u8 = 70;
const P_URL: u8 = 60;
const P_AUTH: u8 = 50;
const P_ASSIGN: u8 = 40;
/// A token found by its randomness alone (`tokens::detect_bare`).
pub(super) const P_BARE: u8 = 35;

static DETECTORS: &[Detector] = &[
    Detector {
        needs: |_| true,
        pattern: || r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----".into(),
        run: detect_private_key,
    },
    Detector {
        needs: |_| true,
        pattern: || r#""private_key"\s*:\s*"(-----BEGIN[^"]*)"?"#.into(),
        run: |re, text, _, out| simple(re, text, out, 1, "gcp-service-account-key", P_GCP),
    },
    Detector {
        needs: |_| true,
        pattern: || format!("{B}(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{{16}}{B}"),
        run: |re, text, _, out| simple(re, text, out, 0, "aws-access-key", P_TOKEN),
    },
    Detector {
        needs: |_| true,
        pattern: || format!("{B}AIza[0-9A-Za-z_-]{{35}}"),
        run: |re, text, _, out| {
            for m in re.find_iter(text) {
                let next = text[m.end()..].bytes().next();
                if !next.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
                    out.push(cand(m.range(), "google-api-key", P_TOKEN));
                }
            }
        },
    },
    Detector {
        needs: |_| true,
        pattern: || {
            format!("{B}(?:gh[pousr]_[A-Za-z0-9]{{36,}}|github_pat_[A-Za-z0-9_]{{22,}}){B}")
        },
        run: |re, text, _, out| simple(re, text, out, 0, "github-token", P_TOKEN),
    },
    Detector {
        needs: |_| true,
        pattern: || {
            format!(
                "{B}(?:glpat|glptt|gldt|glrt|glcbt|glsoat|glffct)-[A-Za-z0-9_-]{{20,}}(?:\\.[0-9a-z]{{9}}{B})?"
            )
        },
        run: |re, text, _, out| simple(re, text, out, 0, "gitlab-token", P_TOKEN),
    },
    Detector {
        needs: |_| true,
        pattern: || format!("{B}sk-([A-Za-z0-9_-]{{20,}})"),
        run: |re, text, _, out| {
            for c in re.captures_iter(text) {
                let body = &c[1];
                let upper = body.bytes().any(|b| b.is_ascii_uppercase());
                let digit = body.bytes().any(|b| b.is_ascii_digit());
                if !(upper && digit) {
                    continue;
                }
                let kind = if body.starts_with("ant-") {
                    "anthropic-key"
                } else {
                    "openai-key"
                };
                out.push(cand(c.get(0).unwrap().range(), kind, P_TOKEN));
            }
        },
    },
    Detector {
        needs: |_| true,
        pattern: || format!("{B}xox[abeoprs]-[A-Za-z0-9-]{{10,}}"),
        run: |re, text, _, out| {
            for m in re.find_iter(text) {
                if m.as_str()[5..].bytes().any(|b| b.is_ascii_digit()) {
                    out.push(cand(m.range(), "slack-token", P_TOKEN));
                }
            }
        },
    },
    Detector {
        needs: |_| true,
        pattern: || {
            r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9/_-]+)".into()
        },
        run: |re, text, _, out| simple(re, text, out, 1, "slack-webhook", P_TOKEN),
    },
    Detector {
        needs: |_| true,
        pattern: || format!("{B}(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{{10,}}{B}"),
        run: |re, text, _, out| simple(re, text, out, 0, "stripe-key", P_TOKEN),
    },
    Detector {
        needs: |_| true,
        pattern: || format!("{B}eyJ[A-Za-z0-9_-]{{4,}}\\.eyJ[A-Za-z0-9_-]{{4,}}\\.[A-Za-z0-9_-]*"),
        run: |re, text, _, out| simple(re, text, out, 0, "jwt", P_JWT),
    },
    Detector {
        needs: needs::at,
        pattern: || format!(r#"{B}[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@'"<>]*:([^\s/?#@'"<>]+)@"#),
        run: |re, text, _, out| {
            for c in re.captures_iter(text) {
                let pw = c.get(1).unwrap();
                if !is_non_secret(pw.as_str(), true) {
                    out.push(cand(pw.range(), "url-password", P_URL));
                }
            }
        },
    },
    Detector {
        needs: needs::colon,
        pattern: || {
            format!(
                r#"(?i){B}(?:proxy-)?authorization["']?[ \t]*:[ \t]*["']?(?:(bearer|basic|digest|token|bot|negotiate|ntlm|apikey|aws4-hmac-sha256|hoba|mutual|dpop|gnap)[ \t]+)?([^'"\r\n]+)"#
            )
        },
        run: detect_authorization,
    },
    Detector {
        needs: needs::operator,
        pattern: || {
            format!(
                r#"(?i)([A-Za-z0-9_.-]*{NAME_END}(?:[_.-][A-Za-z0-9]+){{0,2}})["']?[ \t]*(=>|:=|[:=])[ \t]*({VALUE})"#
            )
        },
        run: |re, text, marker, out| detect_assignment(re, text, marker, out, false),
    },
    Detector {
        needs: needs::long_flag,
        pattern: || format!(r"(?i)--([A-Za-z0-9-]*{NAME_END})[ \t]+({VALUE})"),
        run: |re, text, marker, out| detect_assignment(re, text, marker, out, true),
    },
    Detector {
        needs: needs::netrc,
        pattern: || format!(r#"(?i){B}(?:login|user)\s+\S+\s+password[ \t]+([^\s'"`]+)"#),
        run: |re, text, _, out| {
            for c in re.captures_iter(text) {
                let v = c.get(1).unwrap();
                // A `.netrc` entry starts with `machine <host>` or `default`.
                let before = &text[..c.get(0).unwrap().start()];
                let entry = before.contains("machine") || before.contains("default");
                if entry && !is_non_secret(v.as_str(), true) {
                    out.push(cand(v.range(), "assignment", P_ASSIGN));
                }
            }
        },
    },
    Detector {
        needs: |_| true,
        // A `.netrc` password on a line of its own, as context shows it line by line.
        pattern: || r"(?m)^[ \t]*password[ \t]+([^\s'`]+)[ \t]*$".into(),
        run: |re, text, marker_follows, out| {
            for c in re.captures_iter(text) {
                let v = c.get(1).unwrap();
                // Alone on its line: a marker right after it is more of the line.
                if marker_follows && c.get(0).unwrap().end() == text.len() {
                    continue;
                }
                if super::learnable(v.as_str()) {
                    out.push(cand(v.range(), "assignment", P_ASSIGN));
                }
            }
        },
    },
    Detector {
        needs: needs::colon,
        pattern: || {
            r#"(?:^|[ \t])(?:-u|--user|--proxy-user|-U)[ \t]*['"]?[^\s:'"]+:([^\s'"]+)"#.into()
        },
        run: detect_user_password,
    },
    Detector {
        needs: |_| true,
        pattern: || flags::PATTERN.into(),
        run: flags::detect,
    },
    Detector {
        needs: needs::colon,
        pattern: || format!(r#"(?i){B}(set-cookie|cookie)["']?[ \t]*:[ \t]*([^\r\n]+)"#),
        run: detect_cookie_header,
    },
    Detector {
        needs: needs::curl_pair,
        pattern: || r#"(?:^|[ \t])(?:-b|--cookie)[ \t]+(['"]?)([^\s'"=]+=[^'"\r\n]*)"#.into(),
        run: detect_cookie_flag,
    },
    Detector {
        needs: |_| true,
        pattern: || r#""auth"[ \t]*:[ \t]*"([^"\s]+)""#.into(),
        run: |re, text, _, out| {
            for c in re.captures_iter(text) {
                let v = c.get(1).unwrap();
                if !is_non_secret(v.as_str(), true) {
                    out.push(cand(v.range(), "docker-auth", P_TOKEN));
                }
            }
        },
    },
    Detector {
        needs: |_| true,
        pattern: || {
            concat!(
                r#"(?:^|[\s'"=:,])("#,
                r#"\$(?:1|2[abxy]?|5|6|7|y|gy|apr1|md5|sha1)\$[^\s:'"]*\$[./0-9A-Za-z]{16,}"#,
                r#"|\$argon2(?:id|i|d)\$[^\s:'"]{20,}"#,
                r#"|\{(?:SSHA|SHA|SHA256|SSHA256|SHA512|SSHA512|SMD5|MD5|CRYPT|PBKDF2[-A-Z0-9]*)\}[./0-9A-Za-z+=$-]{20,}"#,
                r#"|pbkdf2_sha(?:1|256)\$[0-9]+\$[^\s$'"]+\$[0-9A-Za-z+/=]{20,}"#,
                r#")"#
            )
            .into()
        },
        run: |re, text, _, out| simple(re, text, out, 1, "password-hash", P_TOKEN),
    },
    Detector {
        needs: needs::at,
        pattern: || format!(r#"{B}[A-Za-z][A-Za-z0-9+.-]*://([^\s:/?#@'"<>]{{20,}})@"#),
        run: |re, text, _, out| {
            for c in re.captures_iter(text) {
                let user = c.get(1).unwrap();
                let u = user.as_str();
                let letters = u.bytes().any(|b| b.is_ascii_alphabetic());
                let digits = u.bytes().any(|b| b.is_ascii_digit());
                if letters && digits && !u.contains('%') {
                    out.push(cand(user.range(), "url-token", P_URL));
                }
            }
        },
    },
    Detector {
        needs: needs::closing_tag,
        // An XML element named like a secret: `<ApiKey>v</ApiKey>`, `<Password>v</Password>`.
        pattern: || format!(r"(?i)<([A-Za-z0-9_.:-]*{NAME_END})>([^<\s][^<\r\n]*)</"),
        run: |re, text, _, out| {
            for c in re.captures_iter(text) {
                let (name, v) = (c.get(1).unwrap(), c.get(2).unwrap());
                if secret_name_kind(name.as_str()).is_some() && !is_non_secret(v.as_str(), true) {
                    out.push(cand(v.range(), "assignment", P_ASSIGN));
                }
            }
        },
    },
    Detector {
        needs: |_| true,
        // A name/value pair in attributes: `<add key="ClearTextPassword" value="v" />`.
        pattern: || {
            format!(
                r#"(?i)(?:key|name)[ \t]*=[ \t]*"([A-Za-z0-9_. :-]*{NAME_END})"[ \t]+value[ \t]*=[ \t]*"([^"\r\n]*)""#
            )
        },
        run: |re, text, _, out| {
            for c in re.captures_iter(text) {
                let (name, v) = (c.get(1).unwrap(), c.get(2).unwrap());
                if secret_name_kind(name.as_str()).is_some() && !is_non_secret(v.as_str(), true) {
                    out.push(cand(v.range(), "assignment", P_ASSIGN));
                }
            }
        },
    },
    Detector {
        needs: needs::column,
        // A table row: `Secret Key   VALUE`, `  Password        VALUE` (words, then two or more
        // spaces or a tab, then one value ending the line or followed by another column).
        pattern: || {
            format!(
                r"(?im)^[ \t]*((?:[A-Za-z][A-Za-z0-9]*[ ]){{0,4}}[A-Za-z]*{NAME_END})(?:[ ]{{2,}}|\t[ \t]*)([^\s]+)[ \t]*(?:$|[ \t]{{2,}})"
            )
        },
        run: |re, text, _, out| {
            for c in re.captures_iter(text) {
                let (name, v) = (c.get(1).unwrap(), c.get(2).unwrap());
                if secret_name_kind(name.as_str()).is_some() && strong_value(v.as_str()) {
                    out.push(cand(v.range(), "assignment", P_ASSIGN));
                }
            }
        },
    },
    Detector {
        needs: needs::prose,
        // Prose: `the password is X`, `Your new API key is X`, `with password "X"`,
        // `Created token 'X' for …`. Only values that cannot be words (see `strong_value`).
        pattern: || {
            r#"(?i)(?-u:\b)(?:password|passphrase|passwd|token|secret|key)(?:[ \t]+(?:is|was))?[ \t]+(["'])?([^\s"'`]+)"#.into()
        },
        run: |re, text, _, out| {
            for c in re.captures_iter(text) {
                let v = c.get(2).unwrap();
                let quoted = c.get(1).is_some();
                let said = c.get(0).unwrap().as_str();
                let is = said.to_ascii_lowercase().contains(" is ")
                    || said.to_ascii_lowercase().contains(" was ");
                if !(quoted || is) {
                    continue;
                }
                let mut value = v.as_str();
                if quoted {
                    let q = c.get(1).unwrap().as_str();
                    if !text[v.end()..].starts_with(q) {
                        continue;
                    }
                } else {
                    value = value.trim_end_matches(['.', ',', ';', ')']);
                }
                if strong_value(value) {
                    out.push(cand(
                        v.start()..v.start() + value.len(),
                        "assignment",
                        P_ASSIGN,
                    ));
                }
            }
        },
    },
    Detector {
        needs: needs::newline,
        // A value on the line after its name: `API_KEY=` or `client secret:`, then the value
        // alone on the next line.
        pattern: || {
            format!(
                r#"(?i)((?:[A-Za-z0-9_.-]+[ ]){{0,3}}[A-Za-z0-9_.-]*{NAME_END})["']?[ \t]*[:=][ \t]*\r?\n[ \t]*(["']?)([^\s"']+)["']?[ \t]*(?:\r?\n|$)"#
            )
        },
        run: |re, text, marker_follows, out| {
            for c in re.captures_iter(text) {
                let (name, v) = (c.get(1).unwrap(), c.get(3).unwrap());
                // Alone on its line: a marker right after it is more of the line.
                if marker_follows && c.get(0).unwrap().end() == text.len() && !c[0].ends_with('\n')
                {
                    continue;
                }
                if secret_name_kind(name.as_str().trim()).is_some() && strong_value(v.as_str()) {
                    out.push(cand(v.range(), "assignment", P_ASSIGN));
                }
            }
        },
    },
    Detector {
        needs: needs::json_array,
        // A JSON array of secrets: `"api_keys": ["v1", "v2"]`, on one line or several.
        pattern: || format!(r#"(?i)"([A-Za-z0-9_.-]*{NAME_END})s?"[ \t]*:[ \t]*\["#),
        run: |re, text, _, out| {
            for c in re.captures_iter(text) {
                let name = c.get(1).unwrap().as_str();
                if secret_name_kind(name).is_none() && !name.eq_ignore_ascii_case("key") {
                    continue;
                }
                let start = c.get(0).unwrap().end();
                let end = text[start..].find(']').map_or(text.len(), |i| start + i);
                let mut pos = start;
                while let Some(open) = text[pos..end].find('"') {
                    let vs = pos + open + 1;
                    let Some(close) = text[vs..end].find('"') else {
                        break;
                    };
                    let ve = vs + close;
                    if strong_value(&text[vs..ve]) {
                        out.push(cand(vs..ve, "assignment", P_ASSIGN));
                    }
                    pos = ve + 1;
                }
            }
        },
    },
    Detector {
        needs: needs::curl_user,
        // `curl -u TOKEN:` (a token as the user name, no password), on a curl line.
        pattern: || r#"(?:^|[ \t])(?:-u|--user)[ \t]*['"]?([^\s:'"<>$]+):(?:['"]|[ \t]|$)"#.into(),
        run: |re, text, _, out| {
            for c in re.captures_iter(text) {
                let user = c.get(1).unwrap();
                let line_start = text[..user.start()].rfind('\n').map_or(0, |i| i + 1);
                if text[line_start..user.start()].contains("curl")
                    && (looks_random(user.as_str())
                        || super::learnable(user.as_str()) && user.len() >= 16)
                {
                    out.push(cand(user.range(), "authorization", P_AUTH));
                }
            }
        },
    },
];

/// The detectors' `needs`: what a text must hold for the detector to find anything in it, read
/// off its pattern and its checks (so skipping a text that fails leaves the output as it was).
mod needs {
    use memchr::{memchr, memchr2, memmem};

    fn has(text: &[u8], word: &[u8]) -> bool {
        memmem::find(text, word).is_some()
    }

    /// `…@`: a URL with a user part.
    pub(super) fn at(text: &[u8]) -> bool {
        memchr(b'@', text).is_some()
    }

    /// `name: value` (a header).
    pub(super) fn colon(text: &[u8]) -> bool {
        memchr(b':', text).is_some()
    }

    /// An assignment's operator: `=`, `:`, `=>`, `:=`.
    pub(super) fn operator(text: &[u8]) -> bool {
        memchr2(b'=', b':', text).is_some()
    }

    /// `--name value`.
    pub(super) fn long_flag(text: &[u8]) -> bool {
        has(text, b"--")
    }

    /// A `.netrc` entry, which the detector checks for.
    pub(super) fn netrc(text: &[u8]) -> bool {
        has(text, b"machine") || has(text, b"default")
    }

    /// `-b name=value` on a curl line.
    pub(super) fn curl_pair(text: &[u8]) -> bool {
        memchr(b'=', text).is_some() && has(text, b"curl")
    }

    /// `curl -u TOKEN:`.
    pub(super) fn curl_user(text: &[u8]) -> bool {
        colon(text) && has(text, b"curl")
    }

    /// `<Name>value</`.
    pub(super) fn closing_tag(text: &[u8]) -> bool {
        has(text, b"</")
    }

    /// A table row's gap: two spaces or a tab.
    pub(super) fn column(text: &[u8]) -> bool {
        memchr(b'\t', text).is_some() || has(text, b"  ")
    }

    /// Prose takes a quoted value, or one after ` is ` or ` was ` (any case).
    pub(super) fn prose(text: &[u8]) -> bool {
        memchr2(b'"', b'\'', text).is_some()
            || memchr::memchr_iter(b' ', text).any(|i| {
                let r = &text[i + 1..];
                r.get(..3).is_some_and(|w| w.eq_ignore_ascii_case(b"is "))
                    || r.get(..4).is_some_and(|w| w.eq_ignore_ascii_case(b"was "))
            })
    }

    /// The value on the next line.
    pub(super) fn newline(text: &[u8]) -> bool {
        memchr(b'\n', text).is_some()
    }

    /// `"name": [`.
    pub(super) fn json_array(text: &[u8]) -> bool {
        memchr(b'"', text).is_some() && memchr(b'[', text).is_some()
    }
}

/// A value that cannot be a word of prose or code, for the detectors that read values with
/// little context (table rows, prose, the next line, JSON arrays): one that could be learned
/// (see [`super::learnable`]: 8 or more chars mixing classes, not a path, a version, a
/// placeholder, ...) and is not an identifier made of words (`Password_Reset_Link`,
/// `refreshToken`).
fn strong_value(v: &str) -> bool {
    super::learnable(v)
        && !(is_identifier(v)
            && !super::values::switches_often(v)
            && !v.bytes().any(|b| b.is_ascii_digit()))
}

/// `Cookie: a=1; b=2` (every value) and `Set-Cookie: a=1; Path=/` (the first value only): in
/// HTTP dumps, curl `-H`, JSON (`"Cookie": "a=1"`). A quoted header ends at its closing quote.
fn detect_cookie_header(re: &Regex, text: &str, _: bool, out: &mut Vec<Cand>) {
    for c in re.captures_iter(text) {
        let name = c.get(1).unwrap();
        let set = name.as_str().len() > "cookie".len();
        let v = c.get(2).unwrap();
        let mut start = v.start();
        let mut end = v.end();
        let opened = text[..name.start()].chars().next_back();
        let quote = match text[start..].chars().next() {
            Some(q @ ('"' | '\'')) => {
                start += 1;
                Some(q)
            }
            _ => opened.filter(|&q| q == '"' || q == '\''),
        };
        if let Some(q) = quote {
            end = text[start..end].find(q).map_or(end, |i| start + i);
        }
        cookie_pairs(text, start..end, set, out);
    }
}

/// curl `-b 'a=1; b=2'` / `--cookie`, on a line that runs curl.
fn detect_cookie_flag(re: &Regex, text: &str, _: bool, out: &mut Vec<Cand>) {
    for c in re.captures_iter(text) {
        let v = c.get(2).unwrap();
        let line_start = text[..v.start()].rfind('\n').map_or(0, |i| i + 1);
        if !text[line_start..v.start()].contains("curl") {
            continue;
        }
        let q = c.get(1).unwrap().as_str();
        let end = if q.is_empty() {
            v.start() + v.as_str().find(char::is_whitespace).unwrap_or(v.len())
        } else {
            v.end()
        };
        cookie_pairs(text, v.start()..end, false, out);
    }
}

fn cookie_pairs(text: &str, range: Range<usize>, first_only: bool, out: &mut Vec<Cand>) {
    let mut pos = range.start;
    for pair in text[range.clone()].split(';') {
        let at = pos;
        pos += pair.len() + 1;
        if let Some(eq) = pair
            .find('=')
            .filter(|&eq| !pair[..eq].trim().contains(' '))
        {
            let raw = &pair[eq + 1..];
            let v = raw.trim();
            let lead = raw.len() - raw.trim_start().len();
            let start = at + eq + 1 + lead;
            if !v.is_empty() && !is_non_secret(v, true) {
                out.push(cand(start..start + v.len(), "cookie", P_AUTH));
            }
        }
        if first_only {
            break;
        }
    }
}

/// Every pattern: the detectors', then the token table's.
fn patterns() -> impl Iterator<Item = String> {
    DETECTORS
        .iter()
        .map(|d| (d.pattern)())
        .chain(tokens::TOKENS.iter().map(|t| t.pattern.to_string()))
}

/// Each pattern's own regex, compiled the first time the set says it can match (most runs
/// need a handful of the patterns, and compiling all of them costs milliseconds).
static REGEXES: LazyLock<Vec<OnceLock<Regex>>> =
    LazyLock::new(|| patterns().map(|_| OnceLock::new()).collect());

fn regex(i: usize) -> &'static Regex {
    REGEXES[i].get_or_init(|| {
        let p = patterns().nth(i).expect("pattern index");
        Regex::new(&p).expect("redact pattern")
    })
}

/// One pass over a text says which patterns can match at all (on non-ASCII text; ASCII text
/// takes the [`gate`]).
static SET: LazyLock<RegexSet> =
    LazyLock::new(|| RegexSet::new(patterns()).expect("redact pattern set"));

/// Literals (as regex snippets) of which every match of every pattern contains at least one
/// (or, for a detector that checks its line, every line it accepts): a text with none of them
/// holds no secret, and costs one literal search instead of the whole [`SET`]. When adding a
/// pattern, add its literal here and to [`PREFILTER_LITERALS`], and its gate to
/// [`DETECTOR_GATES`] (`prefilter_covers_every_token_prefix` checks the token table; debug
/// builds check the gate against this and [`SET`] on every text).
const PREFILTER: &[&str] = &[
    // Names and headers (assignments, flags, .netrc, Authorization, Cookie, docker "auth").
    "(?i:token|secret|key|pass|pwd|credential|auth|cookie)",
    // Shapes.
    "AKIA|ASIA|ABIA|ACCA|A3T|AIza|gh[pousr]_|github_pat_|gl(?:pat|ptt|dt|rt|cbt|soat|ffct)-",
    r"sk-|xox|hooks\.slack\.com|_live_|_test_|eyJ|://",
    // curl -u user:pw.
    "-u|-U",
    // Tools that take a password in a short flag (see `flags`).
    "mysql|mariadb|sshpass|redis-cli|mongo|ldap|sqlcmd|bcp|smbclient|rpcclient|htpasswd",
    "openssl|login|zip|7z|xfreerdp|chpasswd|curl|stdin",
    // Password hashes.
    r"\$(?:1|2[abxy]?|5|6|7|y|gy|apr1|md5|sha1|argon2)|\{(?:SSHA|SHA|SMD5|MD5|CRYPT|PBKDF2)|pbkdf2_",
    // The token table.
    r"hf_|api_org_|ya29\.|1//0|GOCSPX-|HRKU-|AGE-SECRET-KEY-1|dp\.|whsec_|glsa_|glc_|:A|LTAI",
    r"npm_|pypi-|rubygems_|shp|SG\.|xkeysib-|SK|-us|_v1_|dapi|ATATT3|lin_|PMAK-|pul-",
    r"\.atlasv1\.|hv|NR|dt0c01\.|fm|fo1_|figd_|ntn_|discord|sq0|EAA",
    r"sbp_|gsk_|r8_|pplx-|xai-|AAAAAAAAAAAAAAAAAAAAA|Q~|v1\.0-|ATBB|sntry|django-insecure-",
    r"CCIPAT_|CFPAT-|dckr_pat_|tskey-|sig=",
    r"A3-|ops_eyJ|p8e-|AKCp|cmVmd|ABSK|4b1d|CLOJARS_|duffel_|EZ|FLWSECK|fio-u-",
    r"glft|glimt|glagent|gloas|GR1348941|eyJrIjoi|ico-|s-s4t2|_mmk|API-|sha256~",
    r"pscale_|pnu_|rdme_|tk-us-|sm_|shippo_|xapp-|xoxe|tfp_|t1\.|AQVN|dnkey-|sl\.|SG\.",
    r"access-",
    // XML elements, attribute pairs, table rows, prose, JSON arrays, curl -u TOKEN:.
    r"(?i:value|key|password|token|secret)",
];

static PREFILTER_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&PREFILTER.join("|")).expect("prefilter pattern"));

/// [`PREFILTER`] as plain literals, for the [`gate`] (`(?i)` before one matched in any ASCII
/// case). `prefilter_literals_are_the_prefilter` checks that the two say the same.
#[rustfmt::skip]
const PREFILTER_LITERALS: &[&str] = &[
    "(?i)token", "(?i)secret", "(?i)key", "(?i)pass", "(?i)pwd", "(?i)credential", "(?i)auth",
    "(?i)cookie", "(?i)value", "AKIA", "ASIA", "ABIA", "ACCA", "A3T", "AIza", "ghp_", "gho_",
    "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "glptt-", "gldt-", "glrt-", "glcbt-",
    "glsoat-", "glffct-", "sk-", "xox", "hooks.slack.com", "_live_", "_test_", "eyJ", "://", "-u",
    "-U", "mysql", "mariadb", "sshpass", "redis-cli", "mongo", "ldap", "sqlcmd", "bcp",
    "smbclient", "rpcclient", "htpasswd", "openssl", "login", "zip", "7z", "xfreerdp", "chpasswd",
    "curl", "stdin", "$1", "$2", "$5", "$6", "$7", "$y", "$gy", "$apr1", "$md5", "$sha1",
    "$argon2", "{SSHA", "{SHA", "{SMD5", "{MD5", "{CRYPT", "{PBKDF2", "pbkdf2_", "hf_", "api_org_",
    "ya29.", "1//0", "GOCSPX-", "HRKU-", "AGE-SECRET-KEY-1", "dp.", "whsec_", "glsa_", "glc_",
    ":A", "LTAI", "npm_", "pypi-", "rubygems_", "shp", "SG.", "xkeysib-", "SK", "-us", "_v1_",
    "dapi", "ATATT3", "lin_", "PMAK-", "pul-", ".atlasv1.", "hv", "NR", "dt0c01.", "fm", "fo1_",
    "figd_", "ntn_", "discord", "sq0", "EAA", "sbp_", "gsk_", "r8_", "pplx-", "xai-",
    "AAAAAAAAAAAAAAAAAAAAA", "Q~", "v1.0-", "ATBB", "sntry", "django-insecure-", "CCIPAT_",
    "CFPAT-", "dckr_pat_", "tskey-", "sig=", "A3-", "ops_eyJ", "p8e-", "AKCp", "cmVmd", "ABSK",
    "4b1d", "CLOJARS_", "duffel_", "EZ", "FLWSECK", "fio-u-", "glft", "glimt", "glagent", "gloas",
    "GR1348941", "eyJrIjoi", "ico-", "s-s4t2", "_mmk", "API-", "sha256~", "pscale_", "pnu_",
    "rdme_", "tk-us-", "sm_", "shippo_", "xapp-", "xoxe", "tfp_", "t1.", "AQVN", "dnkey-", "sl.",
    "access-",
];

/// The names the assignment-like detectors look for ([`NAME_END`]), as gate literals.
const NAME_LITERALS: &[&str] = &[
    "(?i)token",
    "(?i)secret",
    "(?i)key",
    "(?i)pass",
    "(?i)pwd",
    "(?i)credential",
];

/// Each detector's gate: literals of which every match of its pattern holds one, in the order
/// of [`DETECTORS`] (`None`: the names of [`NAME_LITERALS`]).
const DETECTOR_GATES: &[Option<&[&str]>] = &[
    Some(&["PRIVATE KEY"]),
    Some(&["\"private_key\""]),
    Some(&["AKIA", "ASIA", "ABIA", "ACCA", "A3T"]),
    Some(&["AIza"]),
    Some(&["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]),
    Some(&[
        "glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "glsoat-", "glffct-",
    ]),
    Some(&["sk-"]),
    Some(&["xox"]),
    Some(&["hooks.slack.com/"]),
    Some(&["_live_", "_test_", "_prod_"]),
    Some(&["eyJ"]),
    Some(&["://"]),
    Some(&["(?i)authorization"]),
    None,
    None,
    Some(&["(?i)password"]),
    Some(&["password"]),
    Some(&["-u", "-U"]),
    Some(&[
        "mysql",
        "mariadb",
        "sshpass",
        "redis-cli",
        "mongo",
        "ldap",
        "sqlcmd",
        "bcp",
        "smbclient",
        "rpcclient",
        "htpasswd",
        "openssl",
        "login",
        "zip",
        "7z",
        "xfreerdp",
        "chpasswd",
        "curl",
        "stdin",
    ]),
    Some(&["(?i)cookie"]),
    Some(&["-b", "--cookie"]),
    Some(&["\"auth\""]),
    Some(&[
        "$1",
        "$2",
        "$5",
        "$6",
        "$7",
        "$y",
        "$gy",
        "$apr1",
        "$md5",
        "$sha1",
        "$argon2",
        "{SSHA",
        "{SHA",
        "{SMD5",
        "{MD5",
        "{CRYPT",
        "{PBKDF2",
        "pbkdf2_sha",
    ]),
    Some(&["://"]),
    None,
    Some(&["(?i)value"]),
    None,
    Some(&["(?i)pass", "(?i)token", "(?i)secret", "(?i)key"]),
    None,
    None,
    Some(&["-u"]),
];

/// Every pattern's gate literals: the detectors', then the token table's.
fn gates() -> Vec<Vec<String>> {
    let detectors = DETECTOR_GATES.iter().map(|g| {
        g.unwrap_or(NAME_LITERALS)
            .iter()
            .map(|l| l.to_string())
            .collect()
    });
    let tokens = tokens::TOKENS.iter().map(|t| gate::token_gate(t.pattern));
    detectors.chain(tokens).collect()
}

/// The detectors' gate (see `gate`); a session's redactor holds this plus its learned values
/// ([`gate::Gate::with_values`]).
pub(super) static GATE: LazyLock<gate::Gate> =
    LazyLock::new(|| gate::Gate::new(PREFILTER_LITERALS, &gates()));

/// Run every detector that can match `text[seg]`, with ranges relative to `text`.
/// `marker_follows`: the stretch ends where an existing marker begins. `gate` is [`GATE`],
/// or it with a session's learned values; returns whether the stretch may hold one of those
/// (the first 8 bytes of one are there, or the stretch is not ASCII and the gate was not read).
pub(super) fn detect(
    text: &str,
    seg: Range<usize>,
    marker_follows: bool,
    gate: &gate::Gate,
    out: &mut Vec<Cand>,
) -> bool {
    let part = &text[seg.clone()];
    let first = out.len();
    tokens::detect_bare(part, out);
    let learned = if part.is_ascii() {
        // The gate: which patterns can match (see `gate`).
        let found = gate.scan(part.as_bytes());
        #[cfg(debug_assertions)]
        check_gate(part, found);
        if found.prefilter && found.mask != 0 {
            run_patterns(part, marker_follows, bits(found.mask), out);
        }
        found.learned
    } else {
        if PREFILTER_RE.is_match(part) {
            // Unicode case folding (`K` KELVIN SIGN is a `k` to `(?i)key`): the whole set
            // decides.
            let hits = SET.matches(part);
            run_patterns(part, marker_follows, hits.iter(), out);
        }
        true
    };
    for c in &mut out[first..] {
        c.range = c.range.start + seg.start..c.range.end + seg.start;
    }
    learned
}

/// The indices of the set bits of `mask`, lowest first.
fn bits(mut mask: gate::Mask) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}

/// In debug builds (the test suites), the gate is checked against what it replaces: the
/// prefilter regex, and the set of patterns that match.
#[cfg(debug_assertions)]
fn check_gate(part: &str, found: gate::Found) {
    assert_eq!(DETECTOR_GATES.len(), DETECTORS.len());
    assert_eq!(
        found.prefilter,
        PREFILTER_RE.is_match(part),
        "prefilter on {part:?}"
    );
    if !found.prefilter {
        return;
    }
    for i in SET.matches(part).iter() {
        assert!(
            found.mask & (1 << i) != 0,
            "gate misses pattern {i} on {part:?}"
        );
    }
}

fn run_patterns(
    part: &str,
    marker_follows: bool,
    patterns: impl Iterator<Item = usize>,
    out: &mut Vec<Cand>,
) {
    let first = out.len();
    for i in patterns {
        match DETECTORS.get(i) {
            Some(d) if !(d.needs)(part.as_bytes()) => {
                #[cfg(debug_assertions)]
                {
                    let mut found = Vec::new();
                    d.run(regex(i), part, marker_follows, &mut found);
                    assert!(
                        found.is_empty(),
                        "detector {i} finds {found:?} in {part:?}, which fails its `needs`"
                    );
                }
            }
            Some(d) => d.run(regex(i), part, marker_follows, out),
            None => {
                let kind = tokens::TOKENS[i - DETECTORS.len()].kind;
                let re = regex(i);
                let group = usize::from(re.captures_len() > 1);
                simple(re, part, out, group, kind, P_TOKEN);
            }
        }
    }
    // A token shape filled with a placeholder (`ghp_xxxx…`, `AKIA…EXAMPLE`) is no secret.
    let mut i = first;
    while i < out.len() {
        if out[i].prio == P_TOKEN && is_filler(&part[out[i].range.clone()]) {
            out.swap_remove(i);
        } else {
            i += 1;
        }
    }
}

static ANY_PRIVATE_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----").expect("end pattern")
});

fn simple(re: &Regex, text: &str, out: &mut Vec<Cand>, group: usize, kind: &'static str, prio: u8) {
    for c in re.captures_iter(text) {
        if let Some(m) = c.get(group) {
            out.push(cand(m.range(), kind, prio));
        }
    }
}

fn detect_private_key(re: &Regex, text: &str, _: bool, out: &mut Vec<Cand>) {
    for c in re.captures_iter(text) {
        let begin = c.get(0).unwrap();
        let rest = &text[begin.end()..];
        let end_line = format!("-----END {}-----", &c[1]);
        let end = rest
            .find(&end_line)
            .map(|i| i + end_line.len())
            .or_else(|| ANY_PRIVATE_END.find(rest).map(|m| m.end()))
            .map_or(text.len(), |e| begin.end() + e);
        out.push(cand(begin.start()..end, "private-key", P_PRIVATE));
    }
}

const AUTH_SCHEMES: &[&str] = &[
    "bearer",
    "basic",
    "digest",
    "token",
    "bot",
    "negotiate",
    "ntlm",
    "apikey",
    "aws4-hmac-sha256",
    "hoba",
    "mutual",
    "dpop",
    "gnap",
];

/// Like `captures_iter`, but a match that `check` rejects (returns `Err(resume)`) does not hide
/// the matches starting inside it: the search resumes at `resume`. Without this, redacting an
/// accepted match could uncover a match that was hidden the first time, breaking idempotence
/// (`Authorization: ${Authorization: x}` or `TOKEN=--token --token x`).
fn scan<'t>(
    re: &Regex,
    text: &'t str,
    mut check: impl FnMut(&Captures<'t>) -> Result<Option<Cand>, usize>,
    out: &mut Vec<Cand>,
) {
    let mut pos = 0;
    while let Some(c) = re.captures_at(text, pos) {
        let whole = c.get(0).unwrap();
        pos = match check(&c) {
            // Go on from where the value ends, not the match: an unquoted value is cut short
            // (`TOKEN=a${--password=TOKEN=b`), and what follows the cut is looked at as it
            // would be after a marker, so that redacting twice changes nothing.
            Ok(Some(found)) => {
                let next = found.range.end.min(whole.end());
                out.push(found);
                next.max(whole.start() + 1)
            }
            Ok(None) => whole.end().max(whole.start() + 1),
            Err(resume) => resume.max(whole.start() + 1),
        };
        while !text.is_char_boundary(pos) {
            pos += 1;
        }
        if pos > text.len() {
            break;
        }
    }
}

fn detect_authorization(re: &Regex, text: &str, _: bool, out: &mut Vec<Cand>) {
    let check = |c: &Captures<'_>| {
        let cred = c.get(2).unwrap();
        let value = cred.as_str().trim_end();
        if value.is_empty()
            || is_non_secret(value, true)
            || AUTH_SCHEMES.contains(&value.to_ascii_lowercase().as_str())
        {
            return Err(cred.start());
        }
        let start = cred.start();
        Ok(Some(cand(
            start..start + value.len(),
            "authorization",
            P_AUTH,
        )))
    };
    scan(re, text, check, out);
}

/// `curl -u user:password` (also `--user`, `--proxy-user`, `wget`-style `-U`): only on a line
/// that mentions `curl`, `wget` or `http`, as `-u uid:gid` means something else elsewhere.
fn detect_user_password(re: &Regex, text: &str, _: bool, out: &mut Vec<Cand>) {
    for c in re.captures_iter(text) {
        let pw = c.get(1).unwrap();
        if c.get(0).unwrap().as_str().contains('<') {
            continue; // `curl -u <user:password>`: a placeholder.
        }
        let line_start = text[..pw.start()].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[pw.end()..]
            .find('\n')
            .map_or(text.len(), |i| pw.end() + i);
        let line = &text[line_start..line_end];
        let web = ["curl", "wget", "http"].iter().any(|w| line.contains(w));
        if web && !is_non_secret(pw.as_str(), true) {
            out.push(cand(pw.range(), "authorization", P_AUTH));
        }
    }
}

fn detect_assignment(
    re: &Regex,
    text: &str,
    marker_follows: bool,
    out: &mut Vec<Cand>,
    flag: bool,
) {
    if !text.is_ascii() {
        let check = |c: &Captures<'_>| {
            let g = Groups::of(c, flag);
            match assignment(&g, text, marker_follows, flag) {
                Some(found) => Ok(Some(found)),
                None => Err(g.value.start),
            }
        };
        scan(re, text, check, out);
        return;
    }
    // As `scan`, with the groups read from the match by hand (see `Groups::read`): the
    // capture search costs several times the search for the match.
    let mut pos = 0;
    while let Some(m) = re.find_at(text, pos) {
        let g = Groups::read(text, m.range(), flag);
        #[cfg(debug_assertions)]
        {
            let c = re.captures_at(text, pos).expect("the same match");
            assert_eq!(Groups::of(&c, flag), g, "groups of {:?}", m.as_str());
        }
        pos = match assignment(&g, text, marker_follows, flag) {
            Some(found) => {
                let next = found.range.end.min(m.end());
                out.push(found);
                next.max(m.start() + 1)
            }
            None => g.value.start.max(m.start() + 1),
        };
        while !text.is_char_boundary(pos) {
            pos += 1;
        }
        if pos > text.len() {
            break;
        }
    }
}

/// The groups of a match of an assignment pattern (`flag`: the long-flag one): the whole
/// match, the name, the operator (empty for a flag) and the value.
#[derive(Debug, PartialEq, Eq)]
struct Groups {
    whole: Range<usize>,
    name: Range<usize>,
    op: Range<usize>,
    value: Range<usize>,
}

impl Groups {
    fn of(c: &Captures<'_>, flag: bool) -> Groups {
        let range = |i: usize| c.get(i).unwrap().range();
        let value = range(if flag { 2 } else { 3 });
        Groups {
            whole: range(0),
            name: range(1),
            op: if flag {
                value.start..value.start
            } else {
                range(2)
            },
            value,
        }
    }

    /// The groups of the match `whole` of the assignment pattern in ASCII `text`, as the regex
    /// reads them: the name is the run of name chars the match starts with (no char that can
    /// follow it is one); then an optional quote and blanks; the operator is the first of `=>`,
    /// `:=`, `:`, `=` after which blanks and a value can follow; the value is [`VALUE`]'s first
    /// alternative that matches. Debug builds check it against the capture search.
    fn read(text: &str, whole: Range<usize>, flag: bool) -> Groups {
        let b = text.as_bytes();
        let blank = |mut i: usize| {
            while i < b.len() && matches!(b[i], b' ' | b'\t') {
                i += 1;
            }
            i
        };
        let name_start = whole.start + if flag { 2 } else { 0 };
        let mut i = name_start;
        while i < b.len()
            && (b[i].is_ascii_alphanumeric()
                || matches!(b[i], b'-' | b'_')
                || !flag && b[i] == b'.')
        {
            i += 1;
        }
        let name = name_start..i;
        let op;
        if flag {
            i = blank(i);
            op = i..i;
        } else {
            if i < b.len() && matches!(b[i], b'"' | b'\'') {
                i += 1;
            }
            i = blank(i);
            let value_can_start = |at: usize| {
                let at = blank(at);
                at < b.len() && !(is_space(b[at]) || b[at] == b'`')
            };
            let rest = &b[i..];
            let len =
                if (rest.starts_with(b"=>") || rest.starts_with(b":=")) && value_can_start(i + 2) {
                    2
                } else {
                    1
                };
            op = i..i + len;
            i = blank(i + len);
        }
        let start = i;
        match b.get(i) {
            Some(b'"') => {
                i += 1;
                while i < b.len() {
                    match b[i] {
                        b'"' => {
                            i += 1;
                            break;
                        }
                        b'\\' if i + 1 < b.len() && b[i + 1] != b'\n' => i += 2,
                        b'\\' | b'\r' | b'\n' => break,
                        _ => i += 1,
                    }
                }
            }
            Some(b'\'') => {
                i += 1;
                while i < b.len() && !matches!(b[i], b'\'' | b'\r' | b'\n') {
                    i += 1;
                }
                if i < b.len() && b[i] == b'\'' {
                    i += 1;
                }
            }
            _ => {
                while i < b.len() && !(matches!(b[i], b'\'' | b'"' | b'`') || is_space(b[i])) {
                    i += 1;
                }
            }
        }
        Groups {
            whole,
            name,
            op,
            value: start..i,
        }
    }
}

/// `\s` on ASCII: space, tab, newline, vertical tab, form feed, carriage return.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn assignment(g: &Groups, text: &str, marker_follows: bool, flag: bool) -> Option<Cand> {
    let name = &text[g.name.clone()];
    let op = if flag { " " } else { &text[g.op.clone()] };
    let raw = &text[g.value.clone()];
    let before = &text[..g.whole.start];
    // `$TOKEN=`, `${TOKEN:-x}`: references, not assignments.
    if before.ends_with('$') || before.ends_with("${") {
        return None;
    }
    // `https://x-access-token:TOKEN@host/path`: the user part of a URL, not an assignment (the
    // URL detectors take the password and leave host and path).
    if before.ends_with("://") {
        return None;
    }
    // `…:secret:prod/db/password-x` inside an ARN is a path, not `name: value`.
    let word_start = before
        .rfind(|c: char| c.is_whitespace() || c == '"' || c == '\'')
        .map_or(0, |i| i + 1);
    if before[word_start..].starts_with("arn:") {
        return None;
    }
    // `?key=v` in a URL: an API key, though `key` alone is not a secret-looking name.
    let query_key = name.eq_ignore_ascii_case("key") && op == "=" && before.ends_with(['?', '&']);
    let kind = match secret_name_kind(name) {
        Some(k) => k,
        None if query_key && super::learnable(raw) => "assignment",
        None => return None,
    };
    // `--no-password db`, `--ask-pass site.yml`: switches, the next word is not their value.
    if flag {
        let first = split_name(name).into_iter().next().unwrap_or_default();
        if SWITCH_PREFIX.contains(&first.as_str()) {
            return None;
        }
    }
    let quote = raw.chars().next().filter(|&q| q == '"' || q == '\'');
    // `getpass("Password: ")`, `read -p "Password: " PASS`: the name is inside a string (a
    // prompt) and the "value" is that string's closing quote.
    if let Some(q) = quote {
        let after_name = &text[g.name.end..];
        if before.ends_with(q) && !after_name.starts_with(q) {
            return None;
        }
    }
    let (inner, range) = match quote {
        Some(q) => {
            let end = if raw.len() >= 2 && raw.ends_with(q) {
                raw.len() - 1
            } else {
                raw.len()
            };
            (&raw[1..end], g.value.start + 1..g.value.start + end)
        }
        None => {
            let v = &raw[..unquoted_len(raw)];
            let v = v.strip_suffix(',').unwrap_or(v);
            (v, g.value.start..g.value.start + v.len())
        }
    };
    if quote.is_none() {
        // `token == x`, `token::Token`, `--password --next-flag`.
        let comparison = !inner.is_empty() && inner.bytes().all(|b| b == b'=');
        if comparison || inner.starts_with(':') || (flag && inner.starts_with('-')) {
            return None;
        }
        // `--password via the CLI`, `--api-key string   API key`, `--token TOKEN`: prose, a
        // type or a metavariable after a flag, not its value.
        if flag
            && (PROSE_WORDS.contains(&inner)
                || inner.len() >= 2 && inner.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
                || matches!(
                    inner,
                    "string" | "str" | "int" | "bool" | "value" | "file" | "path" | "text"
                ))
        {
            return None;
        }
        if is_identifier(inner) {
            let mut follow = text[range.end..].trim_start_matches([' ', '\t']);
            if follow.is_empty() && marker_follows {
                follow = "["; // what the following marker starts with
            }
            let code = if op == ":" {
                looks_like_type(inner)
                    && follow.starts_with([')', ',', '=', ';', '{', '<', '>', '(', '['])
            } else {
                // `token = get_token()`, `f(token=settings.TOKEN)`.
                follow.starts_with(['(', '['])
                    || inner.contains('.')
                        && inner
                            .split('.')
                            .all(|p| is_identifier(p) && !looks_random(p))
                        && follow.starts_with([')', ','])
            };
            if code {
                return None;
            }
        }
    }
    if is_non_secret(inner, quote.is_some()) {
        return None;
    }
    // A URL is not one secret: its credentials are (`url-password`, `url-token`), its host and
    // path are not.
    if URL_START.is_match(inner) {
        return None;
    }
    let prio = if kind == "aws-secret-key" {
        P_AWS_SECRET
    } else {
        P_ASSIGN
    };
    Some(cand(range, kind, prio))
}

/// Where an unquoted value ends: at whitespace (already), at a shell operator (`; | < > \``,
/// `&&`, a trailing `&`, `&name=` in a query string), at a reference (`${`, `$(`), at a closing bracket that closes
/// something outside the value (`f(token=abc)`, `{password: abc}`, `f(key=x){…}`), or at the bracket of a
/// call or index (`get_token()`, `os.environ[`). Other brackets are part of the value, so a
/// key containing `)` or `(` is redacted whole.
fn unquoted_len(v: &str) -> usize {
    let b = v.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b';' | b'|' | b'<' | b'>' | b'`' => break,
            b'&' if i == 0
                || b.get(i + 1).is_none_or(|&n| n == b'&')
                || QUERY_PARAM.is_match(&v[i + 1..]) =>
            {
                break;
            }
            b'$' if matches!(b.get(i + 1), Some(b'{' | b'(')) => break,
            b'(' | b'[' | b'{' => {
                let rest = &v[i..];
                let call =
                    rest.len() == 1 || rest.trim_end_matches([';', ',']).ends_with([')', ']']);
                if depth == 0 && i > 0 && is_identifier(&v[..i]) && call {
                    break;
                }
                depth += 1;
            }
            b')' | b']' | b'}' => {
                let trailing = v[i..]
                    .bytes()
                    .all(|c| matches!(c, b')' | b']' | b'}' | b',' | b';'))
                    || matches!(b.get(i + 1), Some(b'(' | b'[' | b'{' | b'.'));
                if depth == 0 && trailing {
                    break;
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// `name=` after a `&`: the next parameter of a query string.
static QUERY_PARAM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9_.\[\]-]+=").expect("query pattern"));

static URL_START: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z][A-Za-z0-9+.-]*://").expect("url pattern"));

/// A type in a declaration such as `token: Token,` or `key: str)`.
fn looks_like_type(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase())
        || s.contains("::")
        || matches!(
            s,
            "str"
                | "bool"
                | "char"
                | "u8"
                | "u16"
                | "u32"
                | "u64"
                | "u128"
                | "usize"
                | "i8"
                | "i16"
                | "i32"
                | "i64"
                | "i128"
                | "isize"
                | "f32"
                | "f64"
                | "string"
                | "number"
                | "boolean"
                | "int"
                | "float"
                | "bytes"
                | "any"
                | "object"
        )
}

/// First words of long flags that are switches (`--no-password`, `--ask-pass`).
const SWITCH_PREFIX: &[&str] = &[
    "no", "ask", "prompt", "show", "print", "require", "skip", "disable", "enable", "generate",
    "reset", "change", "use", "with",
];

/// Words of prose that follow a flag's name in a sentence (`Using --password via the CLI`).
const PROSE_WORDS: &[&str] = &[
    "via", "the", "on", "in", "to", "from", "for", "is", "are", "was", "and", "or", "with", "when",
    "if", "at", "by", "as", "of", "an", "a", "be", "it", "not", "no", "option", "flag", "instead",
    "only", "must", "should", "can", "will",
];

/// Words after a secret word that only say which secret it is (`…_TOKEN_PROD`).
const QUALIFIERS: &[&str] = &[
    "prod",
    "production",
    "dev",
    "development",
    "staging",
    "stage",
    "test",
    "live",
    "sandbox",
    "root",
    "admin",
    "ops",
    "old",
    "new",
    "current",
    "next",
    "prev",
    "previous",
    "primary",
    "secondary",
    "backup",
    "b64",
    "base64",
    "raw",
    "value",
    "local",
    "remote",
    "ci",
    "main",
    "master",
    "rw",
    "ro",
    "v1",
    "v2",
    "v3",
];

/// Previous words that make `…_key` a non-secret name.
const BENIGN_KEY_PREFIX: &[&str] = &[
    "sort",
    "primary",
    "foreign",
    "partition",
    "cache",
    "hash",
    "map",
    "lookup",
    "group",
    "row",
    "unique",
    "index",
    "composite",
    "routing",
    "object",
    "idempotency",
    "translation",
    "i18n",
    "hot",
    "short",
    "shortcut",
    "keyboard",
    "search",
    "dedup",
    "order",
    "secondary",
    "range",
    "recv",
    "receive",
    "send",
    "import",
    "export",
    "delete",
    "edit",
    "default",
    "list",
    "trusted",
    "gen",
    "ssh",
    "host",
    "known",
    "dict",
    "json",
    "yaml",
    "toml",
    "config",
    "meta",
    "s3",
    "bucket",
    "storage",
    "state",
];

/// The kind of a value assigned to `name`, when `name` looks like it holds a secret.
fn secret_name_kind(name: &str) -> Option<&'static str> {
    let mut words = split_name(name);
    // `STRIPE_API_KEY_LIVE`, `MYSQL_PASSWORD_ROOT`, `SLACK_TOKEN_OPS`: a secret word followed
    // by words that only say which one.
    while words.len() > 1
        && words.last().is_some_and(|w| {
            QUALIFIERS.contains(&w.as_str()) || w.bytes().all(|b| b.is_ascii_digit())
        })
    {
        words.pop();
    }
    let last = words.last()?;
    if words
        .iter()
        .any(|w| w == "public" || w == "pub" || w == "publishable")
    {
        return None;
    }
    let several = words.len() > 1;
    let strong = match last.as_str() {
        "token" | "secret" | "password" | "passwd" | "passphrase" | "apikey" | "credential"
        | "credentials" => true,
        "pwd" | "pass" => several,
        // kubeconfig `client-key-data`, Rails `secret_key_base`.
        "data" | "base" => {
            let n = words.len();
            n > 2 && words[n - 2] == "key" && !BENIGN_KEY_PREFIX.contains(&words[n - 3].as_str())
        }
        "key" => several && !BENIGN_KEY_PREFIX.contains(&words[words.len() - 2].as_str()),
        w => {
            w.ends_with("password")
                || w.ends_with("passwd")
                || w.ends_with("token")
                || w.ends_with("secret")
        }
    };
    if !strong {
        return None;
    }
    let aws_secret = words.windows(3).any(|w| w == ["secret", "access", "key"])
        || (words.iter().any(|w| w == "aws") && words.iter().any(|w| w == "secret"));
    Some(if aws_secret {
        "aws-secret-key"
    } else {
        "assignment"
    })
}

/// Lower-case words of a name: split at `_ - . " '` and at camelCase humps.
fn split_name(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in name.chars() {
        if !ch.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if ch.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
        cur.push(ch.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::stages::redact::{find_secrets, redact};
    use std::borrow::Cow;

    fn r(text: &str) -> String {
        redact(text).into_owned()
    }

    fn kinds(text: &str) -> Vec<&'static str> {
        find_secrets(text).into_iter().map(|s| s.kind).collect()
    }

    fn unchanged(text: &str) {
        let out = redact(text);
        assert!(
            matches!(out, Cow::Borrowed(_)),
            "should be untouched: {text:?} -> {out:?}"
        );
    }

    // Fake but well-formed secrets, built at run time.
    fn ghp() -> String {
        format!("ghp_{}", "a1B2".repeat(9))
    }
    fn aws_id() -> String {
        format!("{}{}", "AKIA", "Q7ZX3M9PL2R8TK4V")
    }
    fn aws_secret() -> String {
        format!("{}/{}", "wJa1rXUtnF3MI", "K7MDENGbPxRfiCYzEXAMPLEKEY")
    }
    fn hex40() -> String {
        "3f2a9c1d".repeat(5)
    }

    #[test]
    fn aws_access_key() {
        let id = aws_id();
        assert_eq!(
            r(&format!("aws_access_key_id = {id}")),
            "aws_access_key_id = [REDACTED:aws-access-key]"
        );
        let asia = format!("ASIA{}", "ABCDEFGH23456789");
        assert_eq!(r(&format!("id {asia}.")), "id [REDACTED:aws-access-key].");
        // Too short / part of a longer word: not a key id.
        unchanged("AKIA1234 and XAKIAQ7ZX3M9PL2R8TK4V9");
    }

    #[test]
    fn aws_secret_key() {
        let s = aws_secret();
        assert_eq!(
            r(&format!("aws_secret_access_key = {s}")),
            "aws_secret_access_key = [REDACTED:aws-secret-key]"
        );
        assert_eq!(
            r(&format!("export AWS_SECRET_ACCESS_KEY={s}")),
            "export AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]"
        );
        assert_eq!(
            r(&format!("    \"SecretAccessKey\": \"{s}\",")),
            "    \"SecretAccessKey\": \"[REDACTED:aws-secret-key]\","
        );
    }

    #[test]
    fn google_api_key() {
        let k = format!("AIza{}", "Sy9-x_Q2w3E4r5T6y7U8i9O0pAsDfGhJkLm");
        assert_eq!(k.len(), 39);
        assert_eq!(
            r(&format!("curl 'https://maps.googleapis.com/x?key={k}'")),
            "curl 'https://maps.googleapis.com/x?key=[REDACTED:google-api-key]'"
        );
        assert_eq!(kinds(&k), ["google-api-key"]);
    }

    #[test]
    fn gcp_service_account_key() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC".repeat(3);
        let json = format!(
            "{{\n  \"type\": \"service_account\",\n  \"private_key_id\": \"{}\",\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n\",\n  \"client_email\": \"x@p.iam.gserviceaccount.com\"\n}}",
            hex40()
        );
        let out = r(&json);
        assert!(out.contains("\"private_key\": \"[REDACTED:gcp-service-account-key]\",\n"));
        assert!(out.contains(&hex40()), "key id is not the secret");
        assert!(!out.contains(&body));
        assert!(out.contains("client_email"));
    }

    #[test]
    fn github_token() {
        let t = ghp();
        assert_eq!(r(&t), "[REDACTED:github-token]");
        for p in ["gho_", "ghu_", "ghs_", "ghr_"] {
            assert_eq!(kinds(&format!("x {p}{}", &t[4..])), ["github-token"]);
        }
        let pat = format!("github_pat_{}_{}", "11ABCDEFG0".repeat(2), "xY9".repeat(20));
        assert_eq!(
            r(&format!("gh auth login --with-token <<< {pat}")),
            "gh auth login --with-token <<< [REDACTED:github-token]"
        );
        // Value of an assignment: the more specific kind wins.
        assert_eq!(
            r(&format!("export GITHUB_TOKEN={t}")),
            "export GITHUB_TOKEN=[REDACTED:github-token]"
        );
        unchanged("ghp_short and src/ghp_helpers.rs");
    }

    #[test]
    fn gitlab_token() {
        let t = format!("glpat-{}", "Zx8-Qw7_Er6Ty5Ui4Op3");
        assert_eq!(
            r(&format!("git clone https://oauth2:{t}@gitlab.com/g/p.git")),
            "git clone https://oauth2:[REDACTED:gitlab-token]@gitlab.com/g/p.git"
        );
    }

    #[test]
    fn openai_and_anthropic_keys() {
        let oa = format!("sk-{}", "T3BlbkFJ9xYz".repeat(4));
        let proj = format!("sk-proj-{}", "Ab3_Cd4-Ef5".repeat(10));
        let ant = format!("sk-ant-api03-{}AA", "Qr7-St8_Uv9W".repeat(8));
        assert_eq!(
            r(&format!("OPENAI_API_KEY={oa} llm 'hi'")),
            "OPENAI_API_KEY=[REDACTED:openai-key] llm 'hi'"
        );
        assert_eq!(kinds(&proj), ["openai-key"]);
        assert_eq!(
            r(&format!("x-api-key: {ant}")),
            "x-api-key: [REDACTED:anthropic-key]"
        );
        // Lower-case hyphenated words after `sk-` are branch names, not keys.
        unchanged("git checkout sk-fix-the-parser-for-real-now");
    }

    #[test]
    fn slack_token_and_webhook() {
        for p in ["xoxb", "xoxp", "xoxa", "xoxr", "xoxs"] {
            let t = format!("{p}-{}-{}-{}", "1234567890", "9876543210", "aBcDeFgHiJkL");
            assert_eq!(kinds(&format!("token {t}")), ["slack-token"], "{p}");
        }
        let hook = format!(
            "https://hooks.slack.com/services/{}/{}/{}",
            "T00000000", "B00000000", "XXXXxxxxXXXXxxxx1234"
        );
        assert_eq!(
            r(&format!("curl -X POST {hook} -d @msg.json")),
            "curl -X POST https://hooks.slack.com/services/[REDACTED:slack-webhook] -d @msg.json"
        );
    }

    #[test]
    fn stripe_key() {
        for p in ["sk_live_", "sk_test_", "rk_live_", "sk_prod_"] {
            let k = format!("{p}{}", "51HxYz9AbCdEf".repeat(3));
            assert_eq!(r(&format!("key {k}")), "key [REDACTED:stripe-key]", "{p}");
        }
        unchanged("pk_test_ is publishable; sk_live_ alone is nothing");
        // Publishable keys are public by design (they are in every checkout page).
        unchanged(&format!("key pk_live_{}", "51HxYz9AbCdEf".repeat(3)));
    }

    #[test]
    fn private_key_blocks() {
        let body = "MIIEowIBAAKCAQEAx9Zf3lYq\nb3BlbnNzaC1rZXktdjEAAAAA\n";
        for label in [
            "RSA PRIVATE KEY",
            "EC PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "PGP PRIVATE KEY BLOCK",
        ] {
            let text = format!(
                "$ cat key\n-----BEGIN {label}-----\n{body}-----END {label}-----\n$ echo done"
            );
            assert_eq!(
                r(&text),
                "$ cat key\n[REDACTED:private-key]\n$ echo done",
                "{label}"
            );
        }
        // Cut-off output: to the end of the text.
        let cut = format!("before\n-----BEGIN RSA PRIVATE KEY-----\n{body}");
        assert_eq!(r(&cut), "before\n[REDACTED:private-key]");
        // Public material is not a secret.
        unchanged(
            "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
        );
        unchanged("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----");
    }

    #[test]
    fn two_private_key_blocks() {
        let text = "-----BEGIN EC PRIVATE KEY-----\nAAA\n-----END EC PRIVATE KEY-----\nmiddle\n-----BEGIN EC PRIVATE KEY-----\nBBB\n-----END EC PRIVATE KEY-----";
        assert_eq!(
            r(text),
            "[REDACTED:private-key]\nmiddle\n[REDACTED:private-key]"
        );
    }

    #[test]
    fn jwt() {
        let jwt = format!(
            "{}.{}.{}",
            "eyJhbGciOiJIUzI1NiJ9",
            "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
            "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
        );
        assert_eq!(
            r(&format!("id_token {jwt} ok")),
            "id_token [REDACTED:jwt] ok"
        );
        assert_eq!(
            r(&format!("Authorization: Bearer {jwt}")),
            "Authorization: Bearer [REDACTED:jwt]"
        );
    }

    #[test]
    fn url_password() {
        assert_eq!(
            r("psql postgres://app:s3cr3t-pw@db:5432/x"),
            "psql postgres://app:[REDACTED:url-password]@db:5432/x"
        );
        assert_eq!(
            r("REDIS_URL=redis://:hunter2@cache:6379/0"),
            "REDIS_URL=redis://:[REDACTED:url-password]@cache:6379/0"
        );
        unchanged("https://user@example.com/ and git@github.com:o/r.git and ssh://git@h:22/x");
        unchanged("postgres://app:${DB_PASSWORD}@db/x and https://u:***@h/");
    }

    #[test]
    fn authorization_headers() {
        let hex = hex40();
        assert_eq!(
            r(&format!(
                "curl -H 'Authorization: Bearer {hex}' https://api.x/y"
            )),
            "curl -H 'Authorization: Bearer [REDACTED:authorization]' https://api.x/y"
        );
        assert_eq!(
            r("> authorization: Basic dXNlcjpwYXNzd29yZA==\n> Accept: */*"),
            "> authorization: Basic [REDACTED:authorization]\n> Accept: */*"
        );
        assert_eq!(
            r(&format!("-H \"Authorization: token {hex}\"")),
            "-H \"Authorization: token [REDACTED:authorization]\""
        );
        assert_eq!(
            r("Proxy-Authorization: Negotiate YIIabc123=="),
            "Proxy-Authorization: Negotiate [REDACTED:authorization]"
        );
        assert_eq!(
            r("AUTHORIZATION: rawcredential123"),
            "AUTHORIZATION: [REDACTED:authorization]"
        );
        assert_eq!(
            r("{\"Authorization\": \"Bearer abc.def\"}"),
            "{\"Authorization\": \"Bearer [REDACTED:authorization]\"}"
        );
        unchanged("Authorization: Bearer $TOKEN");
        unchanged("Authorization: Bearer");
    }

    #[test]
    fn shell_assignments() {
        let hex = hex40();
        assert_eq!(
            r("export GITHUB_TOKEN=abc"),
            "export GITHUB_TOKEN=[REDACTED:assignment]"
        );
        assert_eq!(
            r("FOO_KEY='x y' cmd"),
            "FOO_KEY='[REDACTED:assignment]' cmd"
        );
        assert_eq!(
            r("DB_PASSWORD=\"p a\\\"ss\"; run"),
            "DB_PASSWORD=\"[REDACTED:assignment]\"; run"
        );
        assert_eq!(
            r(&format!("GITHUB_TOKEN={hex} gh pr list")),
            "GITHUB_TOKEN=[REDACTED:assignment] gh pr list"
        );
        assert_eq!(
            r("PGPASSWORD=pw psql"),
            "PGPASSWORD=[REDACTED:assignment] psql"
        );
        assert_eq!(r("DB_PWD=pw1"), "DB_PWD=[REDACTED:assignment]");
        assert_eq!(
            r("SECRET=s TOKEN=t"),
            "SECRET=[REDACTED:assignment] TOKEN=[REDACTED:assignment]"
        );
        assert_eq!(
            r("https://x/cb?access_token=abc123&state=9"),
            "https://x/cb?access_token=[REDACTED:assignment]&state=9"
        );
    }

    #[test]
    fn config_assignments() {
        assert_eq!(r("api_key: abc"), "api_key: [REDACTED:assignment]");
        assert_eq!(
            r("{\"password\": \"abc\", \"user\": \"bob\"}"),
            "{\"password\": \"[REDACTED:assignment]\", \"user\": \"bob\"}"
        );
        assert_eq!(
            r("password = \"abc\""),
            "password = \"[REDACTED:assignment]\""
        );
        assert_eq!(
            r("client_secret=abc"),
            "client_secret=[REDACTED:assignment]"
        );
        assert_eq!(r("apikey: abc"), "apikey: [REDACTED:assignment]");
        assert_eq!(r("passwd=abc"), "passwd=[REDACTED:assignment]");
        assert_eq!(
            r("'password' => 'abc'"),
            "'password' => '[REDACTED:assignment]'"
        );
        assert_eq!(r("X-Api-Key: abc123"), "X-Api-Key: [REDACTED:assignment]");
        assert_eq!(
            r("{password: abc, user: x}"),
            "{password: [REDACTED:assignment], user: x}"
        );
    }

    #[test]
    fn cli_flags() {
        assert_eq!(
            r("login --password abc"),
            "login --password [REDACTED:assignment]"
        );
        assert_eq!(
            r("login --password=abc"),
            "login --password=[REDACTED:assignment]"
        );
        assert_eq!(
            r("x --token=abc --v"),
            "x --token=[REDACTED:assignment] --v"
        );
        assert_eq!(
            r("x --api-key 'a b'"),
            "x --api-key '[REDACTED:assignment]'"
        );
        unchanged("mysql -p secret -u root");
        unchanged("login --password --user bob");
        unchanged("ssh-add --key ~/.ssh/id_ed25519 && x --private-key server.key");
        unchanged("gpg --recv-key 0123ABCD");
    }

    #[test]
    fn netrc_and_curl_user() {
        assert_eq!(
            r("machine api.example.com\n  login ada\n  password s3cret!\n"),
            "machine api.example.com\n  login ada\n  password [REDACTED:assignment]\n"
        );
        assert_eq!(
            r("machine h login u password p4ss"),
            "machine h login u password [REDACTED:assignment]"
        );
        assert_eq!(
            r("curl -u ada:s3cret https://api.x/"),
            "curl -u ada:[REDACTED:authorization] https://api.x/"
        );
        assert_eq!(
            r("curl --user 'ada:pa55' -X GET http://h"),
            "curl --user 'ada:[REDACTED:authorization]' -X GET http://h"
        );
        unchanged("docker run -u 1000:1000 img && docker exec -u root:root c sh");
        unchanged("git push -u origin main");
        unchanged("login with password prompt");
        unchanged("curl -u ada https://api.x/ # prompts for the password");
    }

    #[test]
    fn realistic_tool_outputs() {
        let session = format!("IQoJb3JpZ2luX2VjE{}", "Pz9Xr2Lq".repeat(12));
        let sts = format!(
            "{{\n    \"Credentials\": {{\n        \"AccessKeyId\": \"{}\",\n        \"SecretAccessKey\": \"{}\",\n        \"SessionToken\": \"{session}\",\n        \"Expiration\": \"2026-11-22T19:00:00+00:00\"\n    }}\n}}",
            ["ASIA", "Q7ZX3M9PL2R8TK4V"].concat(),
            aws_secret()
        );
        let out = r(&sts);
        assert!(out.contains("\"AccessKeyId\": \"[REDACTED:aws-access-key]\""));
        assert!(out.contains("\"SecretAccessKey\": \"[REDACTED:aws-secret-key]\""));
        assert!(out.contains("\"SessionToken\": \"[REDACTED:assignment]\""));
        assert!(out.contains("2026-11-22T19:00:00+00:00"));

        let kube = "apiVersion: v1\ndata:\n  password: cGFzc3dvcmQxMjM=\n  tls.key: LS0tLS1CRUdJTg==\n  username: YWRh\nkind: Secret\nmetadata:\n  name: db-creds\ntype: Opaque";
        assert_eq!(
            r(kube),
            kube.replace("cGFzc3dvcmQxMjM=", "[REDACTED:assignment]")
                .replace("LS0tLS1CRUdJTg==", "[REDACTED:assignment]")
        );

        let npmrc = "//registry.npmjs.org/:_authToken=npm_abcDEF123456";
        assert_eq!(
            r(npmrc),
            "//registry.npmjs.org/:_authToken=[REDACTED:assignment]"
        );

        unchanged(
            "SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.1\nGIT_ASKPASS=/usr/lib/ssh/ssh-askpass\nKEYTIMEOUT=1\n\
             GNOME_KEYRING_CONTROL=/run/user/1000/keyring\nPasswordAuthentication=no\nuser.signingkey=4BCB2A9F",
        );
    }

    #[test]
    fn templates_switches_and_unicode() {
        unchanged(
            "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  password: \"{{ vault_pw }}\"",
        );
        unchanged("psql --no-password db && ansible-playbook --ask-pass site.yml");
        let t = ghp();
        assert_eq!(r(&format!("→ «{t}» ✓")), "→ «[REDACTED:github-token]» ✓");
        assert_eq!(
            r("пароль: x\nGITHUB_TOKEN=ключ42 ✓"),
            "пароль: x\nGITHUB_TOKEN=[REDACTED:assignment] ✓"
        );
        unchanged("ünïcödé ─ token │ key ═ password…");
    }

    #[test]
    fn non_secret_values() {
        unchanged("KEY_LENGTH=32");
        unchanged("API_KEY=1234");
        for v in [
            "",
            "true",
            "false",
            "null",
            "none",
            "yes",
            "no",
            "$VAR",
            "${VAR}",
            "${VAR:-x}",
            "$(pass show x)",
            "<placeholder>",
            "***",
            "xxx",
            "XXXXXXXX",
            "{{ token }}",
            "%TOKEN%",
            "~/.secrets/token",
            "/run/secrets/db",
            "./token.txt",
        ] {
            unchanged(&format!("GITHUB_TOKEN={v}"));
            unchanged(&format!("password: \"{v}\""));
        }
        unchanged("password: (none)");
        unchanged("password: (not set)");
        unchanged("enter the password prompt; the key is to retry");
        unchanged("PWD=/home/u OLDPWD=/tmp");
        unchanged("key: value");
        unchanged("sort_key=name primaryKey=id public_key=abc pubkey=zzz");
        unchanged("if token == expected { }");
        unchanged("echo $GITHUB_TOKEN=x ${TOKEN:-fallback}");
    }

    #[test]
    fn code_is_not_data() {
        unchanged("fn check(token: Token, api_key: &str) -> bool {");
        unchanged("    pub api_key: Option<String>,");
        unchanged("let token: Token = lex();");
        unchanged("let api_key = env::var(\"X\")?;");
        unchanged("token = get_token()\nkey = os.environ[\"KEY\"]");
        unchanged("use crate::token::Token;");
    }

    #[test]
    fn context_decides_for_hex() {
        let hex = hex40();
        unchanged(&format!("commit {hex}\nAuthor: A <a@b.c>"));
        unchanged(&hex);
        assert_eq!(r(&format!("token={hex}")), "token=[REDACTED:assignment]");
        assert_eq!(
            r(&format!("Authorization: Bearer {hex}")),
            "Authorization: Bearer [REDACTED:authorization]"
        );
    }

    #[test]
    fn idempotent_and_never_nested() {
        let samples = [
            format!("export GITHUB_TOKEN={}", ghp()),
            "postgres://app:pw@db/x".to_string(),
            "Authorization: Custom abc".to_string(),
            "FOO_KEY='x y'".to_string(),
            "-----BEGIN RSA PRIVATE KEY-----\nabc".to_string(),
            "\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nabc\\n-----END PRIVATE KEY-----\\n\""
                .to_string(),
            format!("TOKEN=abc[REDACTED:x] {}", aws_id()),
        ];
        let nested = Regex::new(r"\[REDACTED:[^\]]*\[").unwrap();
        for s in &samples {
            let once = r(s);
            let twice = r(&once);
            assert_eq!(once, twice, "{s:?}");
            assert!(matches!(redact(&once), Cow::Borrowed(_)));
            assert!(!once.contains("[REDACTED:[") && once.matches("[REDACTED:").count() >= 1);
            assert!(!nested.is_match(&once), "{once}");
        }
        // Found by the fragment proptest in `tests/redact_corpus.rs`.
        for s in [
            "TOKEN=0${--token a",
            "TOKEN=--token --token \"private_key\": \"",
            "-----BEGIN RSA PRIVATE KEY-----\"password\": \"[REDACTED:assignment]TOKEN=--token ",
            "api_key: Aapi_key: =-----BEGIN RSA PRIVATE KEY-----",
            "--token Authorization: ${Authorization: --token ",
        ] {
            let once = r(s);
            assert_eq!(r(&once), once, "{s:?}");
        }
    }

    #[test]
    fn overlaps_merge_to_the_most_specific_kind() {
        // Assignment value wider than the token inside: one replacement, specific kind.
        let t = ghp();
        assert_eq!(
            r(&format!("TOKEN=\"prefix {t}\"")),
            "TOKEN=\"[REDACTED:github-token]\""
        );
        let found = find_secrets(&format!("a {t} b"));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].range, 2..2 + t.len());
    }

    #[test]
    fn urls_keep_host_and_path() {
        assert_eq!(
            r("export GIT_TOKEN=https://ada:s3cr3tTok@git.example.com/acme/repo.git"),
            "export GIT_TOKEN=https://ada:[REDACTED:url-password]@git.example.com/acme/repo.git"
        );
        let user = "Xy7abcdefghijklmnop123";
        assert_eq!(
            r(&format!("REPO_TOKEN=https://{user}@github.com/a/b.git x")),
            "REPO_TOKEN=https://[REDACTED:url-token]@github.com/a/b.git x"
        );
        let t = format!("ghs_{}", "a1B2".repeat(9));
        assert_eq!(
            r(&format!(
                "git push https://x-access-token:{t}@github.com/o/r.git HEAD"
            )),
            "git push https://x-access-token:[REDACTED:github-token]@github.com/o/r.git HEAD"
        );
        unchanged("WEBHOOK_TOKEN_URL=https://hooks.example.com/ci and https://ada@h/x");
    }

    #[test]
    fn values_are_never_cut_at_a_bracket_inside_them() {
        assert_eq!(
            r("SECRET_KEY=k#3)x!a&b(*f=9+2)v end"),
            "SECRET_KEY=[REDACTED:assignment] end"
        );
        assert_eq!(
            r("call(token=abc123) && f(api_key=zz9){x}"),
            "call(token=[REDACTED:assignment]) && f(api_key=[REDACTED:assignment]){x}"
        );
        assert_eq!(
            r("{password: abc, user: x} [token=t0k]"),
            "{password: [REDACTED:assignment], user: x} [token=[REDACTED:assignment]]"
        );
        assert_eq!(
            r("TOKEN=abc;echo; PASSWORD=p4ss|cat"),
            "TOKEN=[REDACTED:assignment];echo; PASSWORD=[REDACTED:assignment]|cat"
        );
        unchanged("token = get_token(); key = os.environ[\"KEY\"]; let token: Token = lex();");
    }

    #[test]
    fn cookies() {
        assert_eq!(
            r("Cookie: sid=abc123; theme=dark"),
            "Cookie: sid=[REDACTED:cookie]; theme=[REDACTED:cookie]"
        );
        assert_eq!(
            r("Set-Cookie: sid=abc123; Path=/; HttpOnly"),
            "Set-Cookie: sid=[REDACTED:cookie]; Path=/; HttpOnly"
        );
        assert_eq!(
            r("curl -H 'Cookie: a=x1' -b \"b=y2; c=z3\" https://h"),
            "curl -H 'Cookie: a=[REDACTED:cookie]' -b \"b=[REDACTED:cookie]; c=[REDACTED:cookie]\" https://h"
        );
        assert_eq!(
            r("{\"Cookie\": \"s=q9\", \"Accept\": \"*/*\"}"),
            "{\"Cookie\": \"s=[REDACTED:cookie]\", \"Accept\": \"*/*\"}"
        );
        unchanged("cookie: none; tar -b 20 -cf x.tar . ; ldapsearch -b dc=x,dc=y");
    }

    #[test]
    fn docker_auth_and_kube_keys() {
        assert_eq!(
            r("      \"auth\": \"YWRhOnMzY3JldA==\""),
            "      \"auth\": \"[REDACTED:docker-auth]\""
        );
        assert_eq!(
            r("    client-key-data: LS0tLS1CRUdJTg=="),
            "    client-key-data: [REDACTED:assignment]"
        );
        assert_eq!(
            r("secret_key_base: 9f8e7d6c5b4a"),
            "secret_key_base: [REDACTED:assignment]"
        );
        unchanged("    client-certificate-data: LS0tLS1CRUdJTg==\n  \"auths\": {}");
        unchanged("cache_key_data: abc primary_key_base: x");
    }

    #[test]
    fn password_hashes() {
        let h = format!("$apr1$Ab3dE6gH${}", "Xy9".repeat(8));
        assert_eq!(r(&format!("ada:{h}")), "ada:[REDACTED:password-hash]");
        let b = format!("$2b$12${}", "Qw8e".repeat(13));
        assert_eq!(
            r(&format!("hash={b} ok")),
            "hash=[REDACTED:password-hash] ok"
        );
        assert_eq!(
            r(&format!("root:$6$s4lt${}:19700:0:::", "Zx7".repeat(20))),
            "root:[REDACTED:password-hash]:19700:0:::"
        );
        unchanged("awk '{print $1$2}' file; echo $1 $2; root:*:19700:0:::");
    }

    #[test]
    fn netrc_password_alone_on_a_line() {
        assert_eq!(
            r("  password Zq9-Wx8-Ab"),
            "  password [REDACTED:assignment]"
        );
        unchanged("password required\n  password changeme");
    }

    #[test]
    fn provider_tokens_alone_on_a_line() {
        let cases = [
            (
                format!("hf_{}", "AbCdEfGhIj".repeat(4)),
                "huggingface-token",
            ),
            (
                format!("ya29.{}", "a0AfB_byC9".repeat(6)),
                "google-oauth-token",
            ),
            (format!("HRKU-AA{}", "x1Y2z3W4v5".repeat(6)), "heroku-key"),
            (
                format!("AGE-SECRET-KEY-1{}", &"QPZRY9X8GF".repeat(6)[..58]),
                "age-secret-key",
            ),
            (format!("dp.pt.{}", "Ab1Cd2Ef3G".repeat(5)), "doppler-token"),
            (
                format!("whsec_{}", "Ab1Cd2Ef3G".repeat(4)),
                "stripe-webhook-secret",
            ),
            (
                format!("glsa_{}_{}", "Ab1Cd2Ef".repeat(4), "0a1b2c3d"),
                "grafana-token",
            ),
            (
                format!("123456789:AA{}", &"Ab1Cd2Ef3G".repeat(4)[..33]),
                "telegram-bot-token",
            ),
            (
                format!("LTAI{}", "Ab1Cd2Ef3G".repeat(2)),
                "alibaba-access-key",
            ),
        ];
        for (t, kind) in cases {
            assert_eq!(kinds(&t), [kind], "{t}");
            assert_eq!(r(&format!("> {t}\n")), format!("> [REDACTED:{kind}]\n"));
        }
        let dsn = format!(
            "https://{}@o1.ingest.sentry.io/2",
            "0123456789abcdef".repeat(2)
        );
        assert_eq!(
            r(&dsn),
            "https://[REDACTED:sentry-dsn]@o1.ingest.sentry.io/2"
        );
        let sas = format!(
            "https://a.blob.core.windows.net/c?sp=r&sig={}%3D",
            "Ab1Cd2".repeat(7)
        );
        assert_eq!(
            r(&sas),
            "https://a.blob.core.windows.net/c?sp=r&sig=[REDACTED:azure-sas-signature]"
        );
    }

    #[test]
    fn prefilter_covers_every_token_row() {
        // Some literal piece of every row's pattern is one of the prefilter's literals.
        for t in tokens::TOKENS {
            let p = t.pattern.replace(B, "");
            let mut runs = vec![String::new()];
            let mut chars = p.chars();
            let mut depth = 0;
            while let Some(c) = chars.next() {
                match c {
                    '[' | '{' => depth += 1,
                    ']' | '}' => {
                        depth -= 1;
                        runs.push(String::new());
                    }
                    _ if depth > 0 => {}
                    '\\' => match chars.next() {
                        Some(e @ ('.' | '-' | '/')) => runs.last_mut().unwrap().push(e),
                        _ => runs.push(String::new()),
                    },
                    c if "()?*+|^$".contains(c) => runs.push(String::new()),
                    c => runs.last_mut().unwrap().push(c),
                }
            }
            let covered = runs
                .iter()
                .filter(|r| r.len() >= 2)
                .any(|r| PREFILTER_RE.is_match(r));
            assert!(covered, "{}: {runs:?}", t.kind);
        }
    }

    #[test]
    fn name_words() {
        assert_eq!(split_name("SecretAccessKey"), ["secret", "access", "key"]);
        assert_eq!(split_name("--api-key"), ["api", "key"]);
        assert_eq!(
            split_name("AWS_SECRET_ACCESS_KEY"),
            ["aws", "secret", "access", "key"]
        );
        assert_eq!(secret_name_kind("PGPASSWORD"), Some("assignment"));
        assert_eq!(secret_name_kind("key"), None);
        assert_eq!(secret_name_kind("PWD"), None);
        assert_eq!(secret_name_kind("user.signingkey"), None);
    }
}
