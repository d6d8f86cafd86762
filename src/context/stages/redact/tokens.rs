//! Provider tokens recognised by their published shape alone: a fixed prefix (or a fixed
//! structure) and a body of a known alphabet and length, so that they are secrets wherever they
//! appear, even printed alone on a line. Coverage follows the providers' documentation and the
//! rule sets of gitleaks and detect-secrets; the expressions are our own.
//!
//! Every pattern is anchored on ASCII word boundaries (`\b` before the prefix; after the body
//! where the alphabet allows it), so a token is never cut short and never eats surrounding text.
//! Look-alikes that share a prefix with a secret but are public by design (Stripe `pk_test_`,
//! Mapbox `pk.eyJ…`, Twilio account ids `AC…`) are not in the table.

use std::ops::Range;
use std::sync::LazyLock;

use super::Cand;
use super::values::{longest_alnum_run, looks_random};

/// One token shape: the kind written in `[REDACTED:<kind>]` and the expression that finds it
/// (the whole match is the secret, or capture group 1 when there is one).
pub(super) struct Token {
    pub kind: &'static str,
    pub pattern: &'static str,
}

const fn t(kind: &'static str, pattern: &'static str) -> Token {
    Token { kind, pattern }
}

/// The table, one row per provider format.
pub(super) static TOKENS: &[Token] = &[
    t("huggingface-token", r"(?-u:\b)hf_[A-Za-z]{30,}(?-u:\b)"),
    t(
        "huggingface-token",
        r"(?-u:\b)api_org_[A-Za-z]{30,}(?-u:\b)",
    ),
    t("google-oauth-token", r"(?-u:\b)ya29\.[0-9A-Za-z_-]{20,}"),
    t("google-oauth-token", r"(?-u:\b)1//0[0-9A-Za-z_-]{30,}"),
    t(
        "google-oauth-secret",
        r"(?-u:\b)GOCSPX-[0-9A-Za-z_-]{28}(?-u:\b)",
    ),
    t("heroku-key", r"(?-u:\b)HRKU-[0-9A-Za-z_-]{20,}"),
    t(
        "age-secret-key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    t(
        "doppler-token",
        r"(?-u:\b)dp\.(?:pt|st|ct|sa|scim|audit)\.[0-9A-Za-z]{40,}",
    ),
    t(
        "stripe-webhook-secret",
        r"(?-u:\b)whsec_[0-9A-Za-z+/=]{24,}",
    ),
    t(
        "grafana-token",
        r"(?-u:\b)glsa_[0-9A-Za-z]{32}_[0-9a-fA-F]{8}(?-u:\b)",
    ),
    t("grafana-token", r"(?-u:\b)glc_[0-9A-Za-z+/]{32,}={0,3}"),
    t(
        "telegram-bot-token",
        r"(?-u:\b)[0-9]{5,16}:A[0-9A-Za-z_-]{34}(?-u:\b)",
    ),
    t(
        "alibaba-access-key",
        r"(?-u:\b)LTAI[0-9A-Za-z]{12,20}(?-u:\b)",
    ),
    t("npm-token", r"(?-u:\b)npm_[0-9A-Za-z]{36}(?-u:\b)"),
    t("pypi-token", r"(?-u:\b)pypi-AgE[0-9A-Za-z_-]{50,}"),
    t("rubygems-key", r"(?-u:\b)rubygems_[0-9a-f]{48}(?-u:\b)"),
    t(
        "shopify-token",
        r"(?-u:\b)shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}(?-u:\b)",
    ),
    t(
        "sendgrid-key",
        r"(?-u:\b)SG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}",
    ),
    t(
        "sendinblue-key",
        r"(?-u:\b)xkeysib-[0-9a-f]{64}-[0-9A-Za-z]{16}(?-u:\b)",
    ),
    t("twilio-key", r"(?-u:\b)SK[0-9a-f]{32}(?-u:\b)"),
    t("mailgun-key", r"(?-u:\b)key-[0-9a-f]{32}(?-u:\b)"),
    t(
        "mailchimp-key",
        r"(?-u:\b)[0-9a-f]{32}-us[0-9]{1,2}(?-u:\b)",
    ),
    t(
        "digitalocean-token",
        r"(?-u:\b)do[opr]_v1_[0-9a-f]{64}(?-u:\b)",
    ),
    t(
        "databricks-token",
        r"(?-u:\b)dapi[0-9a-f]{32}(?:-[0-9])?(?-u:\b)",
    ),
    t("atlassian-token", r"(?-u:\b)ATATT3[0-9A-Za-z_=-]{100,}"),
    t(
        "linear-key",
        r"(?-u:\b)lin_(?:api|oauth)_[0-9A-Za-z]{40}(?-u:\b)",
    ),
    t(
        "postman-key",
        r"(?-u:\b)PMAK-[0-9a-f]{24}-[0-9a-f]{34}(?-u:\b)",
    ),
    t("pulumi-token", r"(?-u:\b)pul-[0-9a-f]{40}(?-u:\b)"),
    t(
        "terraform-token",
        r"(?-u:\b)[0-9A-Za-z]{14}\.atlasv1\.[0-9A-Za-z_=-]{60,}",
    ),
    t("vault-token", r"(?-u:\b)hv[sbr]\.[0-9A-Za-z_-]{24,}"),
    t(
        "newrelic-key",
        r"(?-u:\b)NR(?:AK|II|JS)-[0-9A-Za-z]{19,32}(?-u:\b)",
    ),
    t(
        "dynatrace-token",
        r"(?-u:\b)dt0c01\.[0-9A-Z]{24}\.[0-9A-Z]{64}(?-u:\b)",
    ),
    t("flyio-token", r"(?-u:\b)fm[12][ar]?_[0-9A-Za-z+/=_-]{40,}"),
    t("flyio-token", r"(?-u:\b)fo1_[0-9A-Za-z_-]{39,}"),
    t("figma-token", r"(?-u:\b)figd_[0-9A-Za-z_-]{40,}"),
    t("notion-token", r"(?-u:\b)ntn_[0-9A-Za-z]{40,}(?-u:\b)"),
    t("notion-token", r"(?-u:\b)secret_[0-9A-Za-z]{43}(?-u:\b)"),
    t(
        "discord-webhook",
        r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/([0-9A-Za-z_-]{60,})",
    ),
    t(
        "square-token",
        r"(?-u:\b)sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}(?-u:\b)",
    ),
    t("square-token", r"(?-u:\b)EAAA[0-9A-Za-z_-]{60}(?-u:\b)"),
    t("supabase-token", r"(?-u:\b)sbp_[0-9a-f]{40}(?-u:\b)"),
    t("groq-key", r"(?-u:\b)gsk_[0-9A-Za-z]{48,}(?-u:\b)"),
    t("replicate-token", r"(?-u:\b)r8_[0-9A-Za-z]{37}(?-u:\b)"),
    t("perplexity-key", r"(?-u:\b)pplx-[0-9A-Za-z]{48}(?-u:\b)"),
    t("xai-key", r"(?-u:\b)xai-[0-9A-Za-z]{80}(?-u:\b)"),
    t(
        "mapbox-secret-token",
        r"(?-u:\b)sk\.eyJ[0-9A-Za-z_-]{20,}\.[0-9A-Za-z_-]{20,}",
    ),
    t(
        "twitter-bearer-token",
        r"(?-u:\b)AAAAAAAAAAAAAAAAAAAAA[0-9A-Za-z%]{40,}",
    ),
    t(
        "facebook-token",
        r"(?-u:\b)EAA[CDM][0-9A-Za-z]{100,}(?-u:\b)",
    ),
    t(
        "azure-client-secret",
        r"(?-u:\b)[0-9A-Za-z_~.]{3}[0-9]Q~[0-9A-Za-z_~.-]{31,34}",
    ),
    t(
        "cloudflare-origin-key",
        r"(?-u:\b)v1\.0-[0-9a-f]{24}-[0-9a-f]{146}(?-u:\b)",
    ),
    t("bitbucket-token", r"(?-u:\b)ATBB[0-9A-Za-z_=-]{32,}"),
    t("sentry-token", r"(?-u:\b)sntry[su]_[0-9A-Za-z+/=_-]{40,}"),
    t(
        "django-secret-key",
        r"(?-u:\b)django-insecure-[!-&(-~]{30,}",
    ),
    t(
        "circleci-token",
        r"(?-u:\b)CCIPAT_[0-9A-Za-z]{22}_[0-9a-f]{40}(?-u:\b)",
    ),
    t(
        "contentful-token",
        r"(?-u:\b)CFPAT-[0-9A-Za-z_-]{43}(?-u:\b)",
    ),
    t("dockerhub-token", r"(?-u:\b)dckr_pat_[0-9A-Za-z_-]{27,}"),
    t(
        "tailscale-key",
        r"(?-u:\b)tskey-(?:auth|api|client|scim|webhook)-[0-9A-Za-z]+-[0-9A-Za-z]{20,}",
    ),
    t("openai-admin-key", r"(?-u:\b)sk-admin-[0-9A-Za-z_-]{40,}"),
    t("azure-sas-signature", r"[?&;]sig=([0-9A-Za-z%+/=]{20,})"),
    t(
        "sentry-dsn",
        r"[a-z]+://([0-9a-f]{32}(?::[0-9a-f]{32})?)@[0-9A-Za-z.-]*(?:sentry|ingest)[0-9A-Za-z.-]*",
    ), // Rows from gitleaks' public rule set (config/gitleaks.toml), written as our own expressions.
    t(
        "onepassword-secret-key",
        r"(?-u:\b)A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}(?-u:\b)",
    ),
    t(
        "onepassword-token",
        r"(?-u:\b)ops_eyJ[0-9A-Za-z+/]{100,}={0,3}",
    ),
    t(
        "adobe-client-secret",
        r"(?-u:\b)p8e-[0-9A-Za-z]{32}(?-u:\b)",
    ),
    t("artifactory-key", r"(?-u:\b)AKCp[0-9A-Za-z]{69}(?-u:\b)"),
    t("artifactory-key", r"(?-u:\b)cmVmd[0-9A-Za-z]{59}(?-u:\b)"),
    t("aws-bedrock-key", r"(?-u:\b)ABSK[0-9A-Za-z+/]{100,}={0,2}"),
    t("clickhouse-key", r"(?-u:\b)4b1d[0-9A-Za-z]{38}(?-u:\b)"),
    t("clojars-token", r"(?-u:\b)CLOJARS_[0-9A-Za-z]{60}(?-u:\b)"),
    t(
        "duffel-token",
        r"(?-u:\b)duffel_(?:test|live)_[0-9A-Za-z_=-]{43}",
    ),
    t("easypost-token", r"(?-u:\b)EZ[AT]K[0-9A-Za-z]{54}(?-u:\b)"),
    t(
        "flutterwave-key",
        r"(?-u:\b)FLWSECK(?:_TEST)?-[0-9A-Za-z]{12,32}(?:-X)?(?-u:\b)",
    ),
    t("frameio-token", r"(?-u:\b)fio-u-[0-9A-Za-z_=-]{64}"),
    t(
        "gitlab-token",
        r"(?-u:\b)(?:glft|glimt|glagent|gloas)-[0-9A-Za-z_-]{20,}",
    ),
    t("gitlab-token", r"(?-u:\b)GR1348941[0-9A-Za-z_-]{20}"),
    t("grafana-token", r"(?-u:\b)eyJrIjoi[0-9A-Za-z]{70,}={0,3}"),
    t("infracost-token", r"(?-u:\b)ico-[0-9A-Za-z]{32}(?-u:\b)"),
    t(
        "intra42-secret",
        r"(?-u:\b)s-s4t2(?:ud|af)-[0-9a-fA-F]{64}(?-u:\b)",
    ),
    t(
        "maxmind-key",
        r"(?-u:\b)[0-9A-Za-z]{6}_[0-9A-Za-z]{29}_mmk(?-u:\b)",
    ),
    t("octopus-deploy-key", r"(?-u:\b)API-[0-9A-Z]{26}(?-u:\b)"),
    t("openshift-token", r"(?-u:\b)sha256~[0-9A-Za-z_-]{43}"),
    t(
        "planetscale-token",
        r"(?-u:\b)pscale_(?:tkn|oauth|pw)_[0-9A-Za-z_=.-]{32,64}",
    ),
    t("prefect-token", r"(?-u:\b)pnu_[0-9A-Za-z]{36}(?-u:\b)"),
    t("readme-token", r"(?-u:\b)rdme_[0-9a-z]{70}(?-u:\b)"),
    t("scalingo-token", r"(?-u:\b)tk-us-[0-9A-Za-z_-]{48}"),
    t(
        "settlemint-token",
        r"(?-u:\b)sm_[aps]at_[0-9A-Za-z]{16}(?-u:\b)",
    ),
    t(
        "shippo-token",
        r"(?-u:\b)shippo_(?:live|test)_[0-9a-fA-F]{40}(?-u:\b)",
    ),
    t(
        "slack-token",
        r"(?-u:\b)xapp-[0-9]-[0-9A-Za-z]+-[0-9]+-[0-9A-Za-z]+",
    ),
    t(
        "slack-token",
        r"(?-u:\b)xoxe\.xox[bp]-[0-9]-[0-9A-Za-z]{100,}",
    ),
    t("typeform-token", r"(?-u:\b)tfp_[0-9A-Za-z_.=-]{59}"),
    t(
        "yandex-token",
        r"(?-u:\b)t1\.[0-9A-Za-z_-]+={0,2}\.[0-9A-Za-z_-]{86}",
    ),
    t("yandex-key", r"(?-u:\b)AQVN[0-9A-Za-z_-]{35,38}"),
    t(
        "dnkey-token",
        r"(?-u:\b)dnkey-[0-9A-Za-z_=-]{26}-[0-9A-Za-z_=-]{52}",
    ),
    t("dropbox-token", r"(?-u:\b)sl\.[0-9A-Za-z_=-]{130,}"),
    t(
        "plaid-token",
        r"(?-u:\b)access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    ),
    t("sendgrid-key", r"(?-u:\b)SG\.[0-9A-Za-z_=.-]{66}"),
];

/// Kind of a token found by its randomness alone (see [`detect_bare`]).
pub(super) const BARE_KIND: &str = "token";

/// Tokens of providers the table does not know, found by shape and randomness alone, wherever
/// they stand (alone on a line, a plain argument, a table column, prose, `curl -u TOKEN:`):
/// a word of `[A-Za-z0-9_.~-]` (with `+ / =` only after a provider-style prefix) that is either
///
/// * a prefix of 1 to 12 letters or digits, a separator (`_ - . ~`) and, after at most two more
///   such prefix words, a body of 20 or more chars that [`looks_random`]
///   (`pnu_…`, `tk-us-…`, `p8e-…`), or 32 or more hex digits (`live_…`, `sntryu_…`);
/// * or 30 or more chars with no prefix that look random (`EZAK…`, `AKCp…`).
///
/// Not: words with `/`, `\` or `://` (paths, URLs: their credentials are the URL detectors'),
/// hex with no prefix (commit ids, digests), UUIDs, file names (`….css`, `….tar.gz`), hash
/// prefixes (`sha256:`, `sha512-`, `h1:`), public key material (`ssh-ed25519 AAAA…`, `age1…`,
/// `npub1…`), sealed ciphertext, placeholders and the lines of a PEM block.
pub(super) fn detect_bare(text: &str, out: &mut Vec<Cand>) {
    let b = text.as_bytes();
    // Skipping SOPS ciphertext moves where words start: then every byte is read.
    static SOPS: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"ENC["));
    if memchr::memchr(b'[', b).is_some() && SOPS.find(b).is_some() {
        return scan_words(text, 0..b.len(), out);
    }
    // A word long enough to be a token, and not all hex, lies in such a stretch; a stretch
    // starts where a word starts, since the byte before it ends every word.
    super::runs::long_stretches(b, MIN_BARE, |r| scan_words(text, r, out));
}

/// The shortest word [`detect_bare`] reads as a token.
const MIN_BARE: usize = 20;

/// [`detect_bare`] on the words starting in `range` (from a word's start).
fn scan_words(text: &str, range: Range<usize>, out: &mut Vec<Cand>) {
    let b = text.as_bytes();
    let mut i = range.start;
    while i < range.end {
        if !is_word_byte(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        // SOPS ciphertext, `ENC[AES256_GCM,data:…,iv:…,tag:…,type:str]`, is safe to show.
        if b[i] == b'E' && b[i..].starts_with(b"ENC[") {
            i = b[i..]
                .iter()
                .position(|&c| c == b']')
                .map_or(b.len(), |j| i + j + 1);
            continue;
        }
        // A run of dashes ends a word (PEM armor, `--flag`): redacted or not, what follows it
        // leaves the word the same, so a second pass judges it as the first did.
        // Whether the word holds a byte that is neither a hex digit nor a separator: a word
        // without one (a commit id, a digest, a UUID) never has a token's shape (see
        // `bare_shape`), so its filters are skipped.
        let mut classes = 0u8;
        while let Some(&c) = b.get(i) {
            let class = WORD[usize::from(c)];
            if class & (IN_WORD | DASH) != IN_WORD && (class == 0 || b.get(i + 1) == Some(&b'-')) {
                break;
            }
            classes |= class;
            i += 1;
        }
        if i == start {
            // The dashes themselves.
            i += 1;
            continue;
        }
        if i - start >= MIN_BARE && classes & NOT_HEXISH != 0 {
            // Word boundaries: a token is not glued to a path or a longer non-ASCII word.
            let before = start.checked_sub(1).map(|j| b[j]);
            let after = b.get(i).copied();
            if before.is_some_and(|c| c == b'/' || c == b'\\' || c >= 0x80)
                || after.is_some_and(|c| c == b'/' || c == b'\\' || c >= 0x80 || c == b'@')
            {
                continue;
            }
            if hash_label_before(&b[..start]) {
                continue;
            }
            // `ops_eyJzaWdu...`: cut short in documentation.
            if text[..i].ends_with("...") {
                continue;
            }
            if let Some(mut r) = bare_token(text, start, i) {
                // Facebook's `APPID|TOKEN` (or `%7C`-less `%`): the app id goes with it.
                let digits = b[..r.start.saturating_sub(1)]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                if r.start > 0
                    && matches!(b[r.start - 1], b'|' | b'%')
                    && (15..=16).contains(&digits)
                {
                    r.start -= digits + 1;
                }
                out.push(super::cand(r, BARE_KIND, super::rules::P_BARE));
            }
        }
    }
}

/// `sha256:`, `SHA256:`, `h1:`, `md5=` just before a word: the word is a digest.
fn hash_label_before(b: &[u8]) -> bool {
    let Some((&sep, rest)) = b.split_last() else {
        return false;
    };
    if !matches!(sep, b':' | b'=' | b'-') {
        return false;
    }
    let n = rest
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    let label = &rest[rest.len() - n..];
    label.eq_ignore_ascii_case(b"h1")
        || label.eq_ignore_ascii_case(b"md5")
        || (label.len() >= 4
            && label[..3].eq_ignore_ascii_case(b"sha")
            && label[3..].iter().all(u8::is_ascii_digit))
        || (label.len() >= 5 && label[..5].eq_ignore_ascii_case(b"blake"))
}

fn is_word_byte(c: u8) -> bool {
    WORD[c as usize] != 0
}

/// [`WORD`]: a byte of a word.
pub(super) const IN_WORD: u8 = 1;
/// [`WORD`]: a byte of a word that is neither a hex digit nor one of `- _ . ~`.
pub(super) const NOT_HEXISH: u8 = 2;
/// [`WORD`]: `-` (two end a word).
const DASH: u8 = 4;

/// The scan's inner loop: one load per byte instead of a chain of range tests. For each byte,
/// [`IN_WORD`], [`NOT_HEXISH`] and [`DASH`] bits.
pub(super) static WORD: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'~' | b'+' | b'/') {
            t[c] = IN_WORD;
            if !(b.is_ascii_hexdigit() || matches!(b, b'_' | b'-' | b'.' | b'~')) {
                t[c] |= NOT_HEXISH;
            }
            if b == b'-' {
                t[c] |= DASH;
            }
        }
        c += 1;
    }
    t
};

/// The secret in `text[start..end]` (a word of [`is_word_byte`]), if it is one.
fn bare_token(text: &str, start: usize, end: usize) -> Option<Range<usize>> {
    let word = &text[start..end];
    // Trailing sentence punctuation and a leading dash (`--flag`) are not part of a token.
    let trimmed_end = word.trim_end_matches(['.', '-', '~']);
    let w = trimmed_end.trim_start_matches(['-', '.', '~', '+', '/']);
    let lead = trimmed_end.len() - w.len();
    let range = bare_shape(text, w, start + lead)?;
    // The filters cost more than the shape: run them on candidates only.
    if is_public_or_hash(w) || super::values::is_sealed(w) || super::values::is_placeholder(w) {
        return None;
    }
    Some(range)
}

/// Where the token `w` (at `at` in `text`) is, if its shape is a token's (see [`detect_bare`]).
fn bare_shape(text: &str, w: &str, at: usize) -> Option<Range<usize>> {
    if w.len() < 20 || w.len() < 44 && w.contains(['+', '/']) {
        return None;
    }
    let mut range = at..at + w.len();
    // Base64 padding after the word.
    let pad = text[range.end..].bytes().take_while(|&c| c == b'=').count();
    if pad <= 3 {
        range.end += pad;
    }
    if w.contains(['+', '/']) {
        // Base64: a long credential (a service-account key, a kubeconfig token), or a
        // provider-prefixed one (`ops_eyJ…`); not a path, a certificate or a public key.
        let body = provider_prefix(w).map_or(w, |p| &w[p..]);
        let long = w.len() >= 200;
        return ((long || body.len() < w.len() && body.len() >= 40) && looks_random(body))
            .then_some(range);
    }
    // File names: `app-3f9a….css`, `backup-….tar.gz`.
    if let Some(dot) = w.rfind('.') {
        let ext = &w[dot + 1..];
        if (2..=4).contains(&ext.len()) && ext.bytes().all(|c| c.is_ascii_lowercase()) {
            return None;
        }
    }
    // A provider-style prefix: up to three words of 1 to 12 letters or digits, each followed by
    // a separator, then the body.
    let mut body = w;
    // Whether a prefix word is more than hex (`live_`, not the `965f1453~` of an id).
    let mut named = false;
    for _ in 0..3 {
        let Some(sep) = body.find(['_', '-', '.', '~']) else {
            break;
        };
        let head = &body[..sep];
        if sep == 0 || sep > 12 || !head.bytes().all(|c| c.is_ascii_alphanumeric()) {
            break;
        }
        // `nonce-…`, `req_…`, `cus_…`, `pi_…`: ids of a request or an object, public.
        if body.len() == w.len() && ID_PREFIXES.iter().any(|p| head.eq_ignore_ascii_case(p)) {
            return None;
        }
        named |= head
            .bytes()
            .any(|c| c.is_ascii_alphabetic() && !c.is_ascii_hexdigit());
        body = &body[sep + 1..];
        let alnum = body.bytes().filter(u8::is_ascii_alphanumeric).count();
        // A hex body counts only whole and long (`live_…`, `sntryu_…`): hex with separators
        // is an id (`965f1453~47~…`, UUIDs).
        let hex = body
            .bytes()
            .all(|c| c.is_ascii_hexdigit() || !c.is_ascii_alphanumeric());
        if hex {
            if named && alnum >= 32 && alnum == body.len() {
                return Some(range);
            }
        } else if alnum >= 20 && longest_alnum_run(body) >= 16 && looks_random(body) {
            return Some(range);
        }
    }
    // No prefix: long, random, not hex, not a UUID.
    let hexish = w
        .bytes()
        .all(|c| c.is_ascii_hexdigit() || matches!(c, b'-' | b'_' | b'.' | b'~'));
    // Upper case and digits only is an id (a ULID, a license or order number, a fingerprint).
    let lower = w.bytes().any(|c| c.is_ascii_lowercase());
    (w.len() >= 30 && lower && !hexish && longest_alnum_run(w) >= 16 && looks_random(w))
        .then_some(range)
}

/// The length of a provider-style prefix before base64 (`ops_`, `glc_`): 2 to 8 letters
/// then `_`.
fn provider_prefix(w: &str) -> Option<usize> {
    w.find('_')
        .filter(|&i| (2..=8).contains(&i) && w[..i].bytes().all(|c| c.is_ascii_alphabetic()))
        .map(|i| i + 1)
}

/// First words of ids that are printed in the clear by design: CSP nonces, request and trace
/// ids, Stripe object ids (`cus_…`, `pi_…`; its keys are `sk_`/`rk_`).
const ID_PREFIXES: &[&str] = &[
    "nonce", "req", "request", "trace", "span", "msg", "evt", "event", "job", "run", "build",
    "cus", "pi", "ch", "in", "sub", "price", "prod", "acct", "txn", "pm", "seti", "cs", "po", "ii",
    "ba", "card", "src", "py", "re", "tr", "payout",
];

/// Digests and public key material, printed with a prefix that says so.
fn is_public_or_hash(w: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "sha1",
        "sha224",
        "sha256",
        "sha384",
        "sha512",
        "md5",
        "blake2",
        "blake3",
        "age1",
        "npub1",
        "aaaab3nzac1",
        "aaaac3nzac1",
        "aaaae2vjzhnh",
        "mii",
        "ivborw0kggo",
        "pk_live_",
        "pk_test_",
        "pk.",
        // Base64 of `-----BEGIN CERTIFICATE`, `-----BEGIN PUBLIC `, and of public keys in DER
        // (EC P-256, P-384, Ed25519).
        "LS0tLS1CRUdJTiBDRVJUSUZJQ0FUR",
        "LS0tLS1CRUdJTiBQVUJMSUMg",
        "MFkwEwYHKoZIzj0",
        "MHYwEAYHKoZIzj0",
        "MCowBQYDK2Vw",
    ];
    let b = w.as_bytes();
    PREFIXES
        .iter()
        .any(|p| b.len() >= p.len() && b[..p.len()].eq_ignore_ascii_case(p.as_bytes()))
        && !w.starts_with("sha256~")
}
