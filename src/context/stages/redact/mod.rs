//! Redact stage: secrets out of command lines and output.
//!
//! [`redact`] replaces every secret found in a text (a command line, or a whole command output
//! joined by `\n`) by `[REDACTED:<kind>]`; [`find_secrets`] returns what would be replaced.
//! A [`Redactor`] does the same and also replaces every value the session has shown as a secret
//! before (kind `session-secret`; see `learn` for what is learned and `session` for what the
//! pipeline teaches it, what it keeps beside each session, and how values learned in one
//! session protect the others), so `export DB_PASSWORD=…` then `printenv DB_PASSWORD` shows no
//! password.
//! The pipeline (`crate::context::run`) redacts with one `Redactor` per session, so every front
//! end gets session-aware redaction.
//!
//! The code: `rules` (the detectors), `tokens` (provider token shapes), `flags`
//! (passwords in short command-line flags), `values` (the value rules: what is obviously not a
//! secret), `learn` (learned values), `session` (learning in the pipeline); this module
//! merges candidates and writes the markers. The arrows point one way: `rules` runs `tokens`,
//! `flags` and asks `learn` (is a `.netrc` password learnable?); `rules`, `flags` and `learn`
//! ask `values`, which asks none of them.
//!
//! # Kinds
//!
//! | kind                      | what                                                              |
//! |---------------------------|-------------------------------------------------------------------|
//! | `private-key`             | a whole `-----BEGIN … PRIVATE KEY-----` … `-----END …-----` block (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP `PRIVATE KEY BLOCK`); an unterminated block runs to the end of the text |
//! | `gcp-service-account-key` | the value of `"private_key": "-----BEGIN…"` in service-account JSON |
//! | `aws-access-key`          | `AKIA`/`ASIA`/`ABIA`/`ACCA` + 16 upper-case letters or digits      |
//! | `aws-secret-key`          | the value assigned to `aws_secret_access_key`, `AWS_SECRET_ACCESS_KEY`, `SecretAccessKey`, … |
//! | `google-api-key`          | `AIza` + 35 characters                                            |
//! | `github-token`            | `ghp_ gho_ ghu_ ghs_ ghr_` + 36 or more, `github_pat_…`           |
//! | `gitlab-token`            | `glpat-…` (and `glptt- gldt- glrt- glcbt- glsoat- glffct-`)        |
//! | `openai-key`              | `sk-…`, `sk-proj-…` (body of ≥ 20 with an upper-case letter and a digit) |
//! | `anthropic-key`           | `sk-ant-…`                                                        |
//! | `slack-token`             | `xoxb- xoxp- xoxa- xoxr- xoxs- xoxo- xoxe-` + digits/letters      |
//! | `slack-webhook`           | the path after `https://hooks.slack.com/services/` (host kept)    |
//! | `stripe-key`              | `sk_live_ sk_test_ sk_prod_ rk_live_ rk_test_ rk_prod_` + ≥ 10 (publishable `pk_` keys are public) |
//! | `jwt`                     | `eyJ…`.`eyJ…`.signature                                            |
//! | `url-password`            | the password in `scheme://user:PASSWORD@host` (scheme, user, host kept) |
//! | `authorization`           | the credential of an `Authorization:`/`Proxy-Authorization:` header (any case, also in JSON and curl `-H`); header name and scheme word (`Bearer`, `Basic`, `token`, …) kept |
//! | `authorization` (also)    | the password of `curl -u user:PASSWORD` / `--user` / `--proxy-user` on a line mentioning `curl`, `wget` or `http` |
//! | `assignment`              | the value assigned to a secret-looking name (see below), and the `password` of a `.netrc` entry (`login u password p`, or `password p` alone on a line when `p` passes [`learnable`]) |
//! | `password-flag`           | passwords in short flags: `mysql -pX`, `sshpass -p X`, `docker login -p X`, `redis-cli -a X`, … (see `flags`) |
//! | `cookie`                  | the values of `Cookie:` (all) and `Set-Cookie:` (the first) headers, and of curl `-b`/`--cookie` |
//! | `docker-auth`             | `"auth": "…"` in a docker `config.json`                           |
//! | `password-hash`           | crypt/htpasswd/LDAP/Django hashes (`$apr1$…`, `$2y$…`, `$6$…`, `$argon2id$…`, `{SSHA}…`, `pbkdf2_sha256$…`) |
//! | `url-token`               | a token as the user part of a URL, `https://TOKEN@host` (20+ chars, letters and digits) |
//! | provider kinds            | the shapes in `tokens`: `huggingface-token`, `google-oauth-token`, `heroku-key`, `age-secret-key`, `doppler-token`, `stripe-webhook-secret`, `grafana-token`, `telegram-bot-token`, `alibaba-access-key`, `sentry-dsn`, `azure-sas-signature`, `npm-token`, `onepassword-token`, `planetscale-token`, … (rows for the fixed-prefix rules of gitleaks' rule set) |
//! | `token`                   | a token of a format no row knows, by its shape and randomness alone, anywhere (see *Unknown tokens*) |
//! | `session-secret`          | a value learned earlier in the session (only with a [`Redactor`]) |
//!
//! # Assignments
//!
//! A *secret-looking name* is split into words at `_ - .` and at camelCase humps; it is secret
//! when its last word is `token`, `secret`, `password`, `passwd`, `passphrase`, `apikey`,
//! `credential(s)` (or a word ending in `password`/`passwd`/`token`/`secret`, e.g. `PGPASSWORD`),
//! or `pwd`/`pass`/`key` preceded by at least one other word (`DB_PWD`, `FOO_KEY`, `api-key`).
//! Also `…key_data` and `…key_base` (kubeconfig `client-key-data`, Rails `secret_key_base`).
//! A lone `key`, `pass` or `PWD`, names with a `public`/`pub` word, and `…_key` names whose
//! previous word is benign (`sort_key`, `primaryKey`, `cache_key`, `--recv-key`, …) are not.
//! Words after the secret word that only say which one (`STRIPE_API_KEY_LIVE`,
//! `MYSQL_PASSWORD_ROOT`, `…_TOKEN_PROD`, `_B64`, `_2`) keep the name secret; other words do not
//! (`TOKEN_FILE`, `PASSWORD_HASH`, `KEY_LENGTH`). `?key=v` in a URL is an API key.
//! Recognised forms (name and operator kept, only the value replaced):
//! shell and env files (`export NAME=v`, `NAME='v w'`, `NAME="v"`), YAML/TOML/INI/JSON
//! (`name: v`, `name = "v"`, `"name": "v"`, `name => v`, `name := v`), header-like lines
//! (`X-Api-Key: v`), URL query parameters (`?access_token=v&…`) and long CLI flags
//! (`--password v`, `--password=v`, `--api-key v`; not switches such as `--no-password`,
//! `--ask-pass` before a space). Short flags are left to `flags`, which knows which tool takes a password after which flag.
//! An unquoted value ends at whitespace, a quote or a backtick, at a shell operator
//! (`; | < >`, `&&`, a trailing `&`, `&name=` in a query string), at a reference (`${`, `$(`),
//! at a closing bracket that closes something outside the value (`f(token=abc)`), or at the
//! bracket of a call (`get_token()`); other brackets belong to the value, so a key containing
//! `)` is replaced whole (a trailing `,` is dropped). A quoted value is replaced inside its
//! quotes. A value that is a URL is left to the URL detectors, which replace only its
//! credentials: host and path stay.
//!
//! With a name but no operator, where the value must also be one that cannot be a word (see
//! `learnable`; not an identifier made of words such as `refreshToken`): an XML element
//! (`<ApiKey>v</ApiKey>`) or a `key="Password" value="v"` attribute pair; a table row (`Secret
//! Key   v`: the name, two or more spaces, one value ending the line or its column); prose (`the
//! password is v`, `with password "v"`, `Created token 'v'`); the value alone on the line after
//! `API_KEY=` or `client secret:`; the strings of a JSON array (`"api_keys": ["v1", "v2"]`);
//! `curl -u TOKEN:` (a random user name with an empty password).
//!
//! # Unknown tokens
//!
//! A word of letters, digits and `_ - . ~` (`+ /` for base64) is a `token` when it reads as a
//! random string rather than words: either a provider-style prefix (one to three words of at
//! most 12 letters or digits, each followed by `_ - . ~`: `pnu_`, `tk-us-`, `p8e-`) and a body
//! of 20 or more chars, or 30 or more chars with no prefix and some lower case. Random means:
//! letters and digits (or both cases over 24 chars), the character class changing between at
//! least 3 in 10 neighbouring chars, and a run of 16 or more letters and digits; a body of hex
//! counts only whole, 32 chars or more and after a prefix word that is not hex (`live_…`).
//! Base64 counts after a provider prefix (`ops_eyJ…`) or from 200 chars on (a service-account
//! key or a kubeconfig token alone on a line). Not: hex with no prefix (commit ids, digests),
//! upper case and digits only (ULIDs, fingerprints), paths and URLs, file names (`….tar.gz`), a
//! word after a hash label (`sha256:`, `h1:`, `SHA256:`), public key material and certificates
//! (`AAAAC3NzaC1…`, `age1…`, `MII…`, base64 of `-----BEGIN CERTIFICATE`), ids printed in the
//! clear (`nonce-…`, `req_…`, Stripe's `cus_…`/`pi_…`), sealed ciphertext and placeholders
//! (below), a word cut short with `...`.
//!
//! # Not redacted
//!
//! * Anything not in a recognised context: bare hex (git commit ids, `sha256:` digests,
//!   `sha256sum` output, docker image ids), UUIDs, paths (`~/.ssh/id_ed25519.pub`,
//!   `src/token.rs`), identifiers (`tokenizer_key_test`), prose ("the key is to retry",
//!   "password prompt", "password: (none)"). Context decides: 40 hex digits after
//!   `Authorization: Bearer`, `token=` or `GITHUB_TOKEN=` are a secret, after `commit ` or alone
//!   they are not.
//! * Values that are obviously not secrets (for assignments, URL passwords and
//!   `Authorization` credentials): empty values; `true false null nil none yes no on off
//!   undefined empty n/a`; numbers of at most 8 digits (`KEY_SIZE`-like settings, PINs of
//!   that length are a known gap); variable references (`$VAR`, `${VAR…}`, `$(cmd)`,
//!   `%VAR%`); placeholders (`<token>`, `{{ token }}`, `(none)`, `[PASSWORD]`,
//!   `your_api_key_here`, `YOUR_API_KEY`, `INSERT_TOKEN_HERE`, `REPLACE_ME`, `changeme`, a value
//!   that is just `password` or `token`, `…EXAMPLE` and AWS's documented example keys, runs of
//!   the alphabet or the digits, a value ending in `...`); masks made only of `* x X . • …`
//!   (`***`, `xxx`) or holding a run of 4 `* x X #` (`gho_****…`, `****ABCD`, `sk-proj-xxxx…`),
//!   and values mostly made of one repeated char; sealed ciphertext, safe to show by design
//!   (sealed-secrets `AgB…`, SOPS `ENC[…]`, KMS `AQICAH…`, Vault `vault:v1:…`, Ansible
//!   `!vault`); paths (`~/…`, `./…`, `../…`, `/word/…`); file names with a
//!   key/config extension (`server.key`, `sa.json`, `id_rsa.pub`); values starting with `-`
//!   after a space-separated flag (the next option); unquoted values made only of `=`
//!   (`token == x`) or starting with `:` (`token::Token`).
//! * Code, not data: after `name:` an identifier followed by `) , = ; { < > ( [`
//!   (`fn f(token: Token)`, `api_key: Option<String>`), after `name =` an identifier
//!   followed by `(` or `[` (`token = get_token()`, `key = os.environ["KEY"]`) or a dotted one
//!   followed by `)` or `,` (`f(token=settings.TOKEN)`); a name inside a prompt string
//!   (`getpass("Password: ")`, `read -p "Password: " PASS`); `name:` inside an ARN
//!   (`arn:aws:secretsmanager:…:secret:prod/db/password-x`). `${TOKEN:-x}` and `$TOKEN=`
//!   (references) are not assignments. After a long flag, a short lower-case word, a type or a
//!   metavariable is prose or help text, not the value (`--password via the CLI`, `--api-key
//!   string`, `--token TOKEN`).
//! * A token shape filled with a placeholder (`ghp_xxxx…`, `AKIAXXXX…`, `A3-XXXXXX-…`).
//! * Text already redacted: an existing `[REDACTED:…]` is a barrier; detectors run separately on
//!   the text between markers, so no match touches a marker (an unterminated private key block
//!   runs to the next marker) and markers never nest. Where a value's end depends on what
//!   follows it, the text next to a new marker can read differently than before; so the
//!   detectors run again on the redacted text until they find nothing more (`settle`, two
//!   passes in practice, one for a line without secrets), and `redact` is idempotent.
//!
//! # Overlaps
//!
//! Matches that overlap are merged into one replacement covering their union (the outermost
//! range); its kind is the most specific one involved, in this order: `gcp-service-account-key`,
//! `private-key`, `aws-secret-key`, the token kinds (`github-token`, `aws-access-key`, …), `jwt`,
//! `url-password`, `authorization`, `cookie`, `password-flag`, `assignment`, `session-secret`. So `export GITHUB_TOKEN=ghp_…` becomes
//! `export GITHUB_TOKEN=[REDACTED:github-token]`.
//!
//! # Speed
//!
//! All patterns are compiled once. One pass over a line's byte pairs (the `gate`) finds the
//! literals every match needs: a line with none (most output) costs that pass and the
//! unknown-token scan, nothing more; on the rest only the patterns whose literals are there run
//! (per stretch between existing markers), with no pass of the whole pattern set (non-ASCII
//! text, where `(?i)` folds more than ASCII case, takes the prefilter regex and a
//! [`regex::RegexSet`] instead). The assignment detectors read their groups from the match by
//! hand rather than by a capture search. The unknown-token scan (`tokens::detect_bare`) reads
//! only the stretches of 20 or more word bytes that are not all hex (`runs`: 64 bytes
//! classified at a time into bit masks, with SSE2 on x86_64), and checks a word's shape before
//! its filters (a word of hex digits and separators is never a token). A [`Redactor`]'s gate
//! also holds the first 8 bytes of each learned value, so the learned-value search runs only on
//! a text where one of those is (or a text that is not ASCII). `cargo bench --bench redact`
//! prints the throughput (see the README's Benchmarks). Only the linear-time `regex`
//! crate is used, with ASCII `\b` so the lazy DFA handles non-ASCII output; context checks (what
//! precedes or follows a match, value rules) are done in code. A match a check rejects does not
//! hide matches that start inside it.

use regex::Regex;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

mod flags;
mod gate;
mod learn;
mod rules;
mod runs;
pub(crate) mod session;
mod tokens;
mod values;

pub use learn::learnable;

/// One secret found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// Short lowercase kind name, as written in `[REDACTED:<kind>]`.
    pub kind: &'static str,
    /// Byte range of the replaced text.
    pub range: Range<usize>,
}

/// Replace every secret in `text` by `[REDACTED:<kind>]`. Borrowed when nothing changed.
pub fn redact(text: &str) -> Cow<'_, str> {
    apply(text, find_secrets(text))
}

/// The secrets [`redact`] replaces in `text`: sorted, non-overlapping, non-empty ranges.
pub fn find_secrets(text: &str) -> Vec<Secret> {
    settle(text, |t, cands| {
        detect_all(t, &rules::GATE, cands);
    })
}

/// Redaction for one session: the detectors plus the secret values the session has shown
/// (see *Session learning* in the module documentation).
#[derive(Debug, Default)]
pub struct Redactor {
    learned: learn::Learned,
}

impl Redactor {
    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// Learns the secrets the detectors find in `text` (a command line or an output line):
    /// each value that passes [`learnable`] is redacted by this redactor wherever it appears.
    pub fn learn(&mut self, text: &str) {
        for s in find_secrets(text) {
            self.learned.add(&text[s.range]);
        }
    }

    /// How many values were learned (at most `learn::MAX_LEARNED`).
    pub fn learned(&self) -> usize {
        self.learned.len()
    }

    /// Adds a value learned before (kept beside a session, this one or another), if
    /// [`learn::learnable`].
    pub(crate) fn add_value(&mut self, value: &str) {
        self.learned.add_within(value, learn::MAX_HELD);
    }

    /// The values learned, in the order they were.
    pub(crate) fn values(&self) -> Vec<String> {
        self.learned.values().to_vec()
    }

    /// [`redact`], plus every occurrence of a learned value (kind `session-secret`).
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        apply(text, self.find_secrets(text))
    }

    /// What [`Redactor::redact`] replaces in `text`.
    pub fn find_secrets(&self, text: &str) -> Vec<Secret> {
        // The detectors' gate with the learned values' first 8 bytes: the learned-value search
        // runs only where one of those is.
        let gate = self.learned.gate(&rules::GATE);
        settle(text, |t, cands| {
            if detect_all(t, gate, cands) {
                self.learned.find(t, cands);
            } else {
                #[cfg(debug_assertions)]
                {
                    let mut missed = Vec::new();
                    self.learned.find(t, &mut missed);
                    assert!(
                        missed.is_empty(),
                        "the gate missed a learned value in {t:?}"
                    );
                }
            }
        })
    }
}

/// Writes `[REDACTED:<kind>]` over each of `secrets` (sorted, non-overlapping).
fn apply(text: &str, secrets: Vec<Secret>) -> Cow<'_, str> {
    if secrets.is_empty() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(applied(text, &secrets))
}

fn applied(text: &str, secrets: &[Secret]) -> String {
    let mut out = String::with_capacity(text.len() + 24 * secrets.len());
    let mut pos = 0;
    for s in secrets {
        out.push_str(&text[pos..s.range.start]);
        out.push_str("[REDACTED:");
        out.push_str(s.kind);
        out.push(']');
        pos = s.range.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// At most this many passes over a text whose markers keep revealing secrets (in practice two:
/// each pass replaces text by markers, so it always ends).
const MAX_PASSES: usize = 8;

/// The secrets `detect` finds in `text`, and then in the text with those replaced by markers,
/// until a pass finds nothing more: what [`redact`] returns is then redacted already, whatever
/// the detectors do next to a marker. A value's end can depend on what follows it
/// (`TOKEN=a${…`, a value alone on its line), and text next to a marker is read as a stretch
/// of its own; without this, a second `redact` could find more. Lines without secrets (nearly
/// all) take one pass.
fn settle(text: &str, detect: impl Fn(&str, &mut Vec<Cand>)) -> Vec<Secret> {
    let mut cands = Vec::new();
    detect(text, &mut cands);
    let mut secrets = merge(cands);
    for _ in 1..MAX_PASSES {
        if secrets.is_empty() {
            break;
        }
        let shown = applied(text, &secrets);
        let mut cands = Vec::new();
        detect(&shown, &mut cands);
        let more = merge(cands);
        if more.is_empty() {
            break;
        }
        // Back to `text`'s offsets: a new secret lies between markers, so before it, each
        // marker stands for its secret's bytes.
        let mut shift: isize = 0;
        let mut next = 0;
        let mut found = Vec::with_capacity(more.len());
        for m in more {
            let mut at = 0usize;
            while next < secrets.len() {
                let s = &secrets[next];
                let marker = "[REDACTED:]".len() + s.kind.len();
                let start = (s.range.start as isize + shift) as usize;
                if start >= m.range.end {
                    break;
                }
                at = start + marker;
                shift += marker as isize - s.range.len() as isize;
                next += 1;
            }
            debug_assert!(m.range.start >= at, "a new secret inside a marker");
            let start = (m.range.start as isize - shift) as usize;
            found.push(Secret {
                kind: m.kind,
                range: start..start + m.range.len(),
            });
        }
        secrets.extend(found);
        secrets.sort_by_key(|s| s.range.start);
    }
    secrets
}

/// Every detector's candidates in `text`, read through `gate` ([`rules::GATE`], or it with a
/// session's learned values); returns whether a learned value may be in `text` (see
/// [`rules::detect`]). Text already redacted is a barrier: detectors run on the stretches
/// between markers, so no match starts in, spans or swallows a marker, and `redact` is
/// idempotent (a learned value is not matched across a marker either).
fn detect_all(text: &str, gate: &gate::Gate, cands: &mut Vec<Cand>) -> bool {
    let mut pos = 0;
    let mut learned = false;
    if has_marker(text) {
        for m in MARKER.find_iter(text) {
            learned |= rules::detect(text, pos..m.start(), true, gate, cands);
            pos = m.end();
        }
    }
    learned | rules::detect(text, pos..text.len(), false, gate, cands)
}

/// A possible secret: where, which kind, and how specific that kind is (see *Overlaps*).
#[derive(Debug)]
struct Cand {
    range: Range<usize>,
    kind: &'static str,
    prio: u8,
}

/// Whether `text` holds `[REDACTED:` (a searcher built once: `str::contains` prepares one per
/// call; and first a search for `[`, which costs less on a short line and is rare in output).
fn has_marker(text: &str) -> bool {
    static FINDER: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"[REDACTED:"));
    memchr::memchr(b'[', text.as_bytes()).is_some() && FINDER.find(text.as_bytes()).is_some()
}

static MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[REDACTED:[a-z0-9-]+\]").expect("marker pattern"));

fn cand(range: Range<usize>, kind: &'static str, prio: u8) -> Cand {
    Cand { range, kind, prio }
}

/// Merge overlapping candidates into their union, keeping the most specific kind.
fn merge(mut cands: Vec<Cand>) -> Vec<Secret> {
    if cands.is_empty() {
        return Vec::new();
    }
    cands.retain(|c| c.range.start < c.range.end);
    cands.sort_by_key(|c| (c.range.start, std::cmp::Reverse(c.range.end)));
    let mut merged: Vec<Cand> = Vec::new();
    for c in cands {
        match merged.last_mut() {
            Some(last) if c.range.start < last.range.end => {
                last.range.end = last.range.end.max(c.range.end);
                if c.prio > last.prio {
                    last.prio = c.prio;
                    last.kind = c.kind;
                }
            }
            _ => merged.push(c),
        }
    }
    merged
        .into_iter()
        .map(|c| Secret {
            kind: c.kind,
            range: c.range,
        })
        .collect()
}
