//! Corpus and property tests for `omnish::context::stages::redact`.

use omnish::context::stages::redact::{Redactor, find_secrets, learnable, redact};
use proptest::prelude::*;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// One corpus case: its name, the input, and what redaction must turn it into.
struct Case {
    name: String,
    input: String,
    expected: String,
    /// The secrets in the input.
    secrets: Vec<String>,
}

/// Deterministic fake characters for `⟨cN⟩` (see tests/fixtures/redact/secrets.txt).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn chars(&mut self, class: char, n: usize) -> String {
        let alphabet: &str = match class {
            'a' => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            'L' => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            'l' => "abcdefghijklmnopqrstuvwxyz",
            'H' => "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            'h' => "0123456789abcdef",
            'd' => "0123456789",
            'b' => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
            'j' => "abcdefghijklmnopqrstuvwxyz0123456789!@#%^&*(-_=+)",
            'g' => "qpzry9x8gf2tvdw0s3jn54khce6mua7l",
            'G' => "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
            _ => panic!("unknown class {class}"),
        };
        let a: Vec<char> = alphabet.chars().collect();
        // Mixed classes start with one of each kind, so bodies that must mix them do.
        let mut out: String = match class {
            'a' if n >= 3 => "aZ3".to_string(),
            'H' if n >= 2 => "Q7".to_string(),
            _ => String::new(),
        };
        while out.chars().count() < n {
            out.push(a[(self.next() % a.len() as u64) as usize]);
        }
        out
    }
}

/// Expands `⟨cN⟩` placeholders.
fn expand(text: &str, g: &mut Gen) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('⟨') {
        out.push_str(&rest[..open]);
        let after = &rest[open + '⟨'.len_utf8()..];
        let close = after.find('⟩').expect("unclosed ⟨");
        let spec = &after[..close];
        let class = spec.chars().next().unwrap();
        let n: usize = spec[1..].parse().expect("⟨cN⟩");
        out.push_str(&g.chars(class, n));
        rest = &after[close + '⟩'.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// The cases of a corpus file: paragraphs headed `== name: where`.
fn corpus(file: &str) -> Vec<Case> {
    let path = format!(
        "{}/tests/fixtures/redact/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let mut cases = Vec::new();
    for (i, block) in text.split("\n== ").skip(1).enumerate() {
        let (head, body) = block.split_once('\n').unwrap();
        let name = head.split(':').next().unwrap().trim().to_string();
        let body = body.trim_end_matches('\n');
        let body = expand(body, &mut Gen(i as u64 + 1));
        let (mut input, mut expected, mut secrets) = (String::new(), String::new(), Vec::new());
        let mut rest = body.as_str();
        while let Some(open) = rest.find('«') {
            input.push_str(&rest[..open]);
            expected.push_str(&rest[..open]);
            let after = &rest[open + '«'.len_utf8()..];
            let close = after.find('»').expect("unclosed «");
            let (kind, secret) = after[..close].split_once('|').expect("«kind|secret»");
            input.push_str(secret);
            expected.push_str(&format!("[REDACTED:{kind}]"));
            secrets.push(secret.to_string());
            rest = &after[close + '»'.len_utf8()..];
        }
        input.push_str(rest);
        expected.push_str(rest);
        cases.push(Case {
            name,
            input,
            expected,
            secrets,
        });
    }
    cases
}

#[test]
fn every_secret_kind_is_redacted_exactly() {
    let cases = corpus("secrets.txt");
    let names: BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), cases.len(), "duplicate case names");
    assert!(cases.len() >= 60, "only {} secret kinds", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        assert!(!c.secrets.is_empty(), "{}: no secret marked", c.name);
        let out = redact(&c.input);
        if out != c.expected {
            failures.push(format!(
                "{}:\n  input:    {:?}\n  got:      {:?}\n  expected: {:?}",
                c.name, c.input, out, c.expected
            ));
        }
        // Redacting again changes nothing.
        assert_eq!(redact(&out), out, "{}", c.name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_lookalike_is_untouched() {
    let cases = corpus("lookalikes.txt");
    let names: BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), cases.len(), "duplicate case names");
    assert!(cases.len() >= 30, "only {} look-alike kinds", cases.len());
    for c in &cases {
        assert!(c.secrets.is_empty(), "{}: a look-alike has no «»", c.name);
        assert_untouched(&c.name, &c.input);
    }
}

/// Each secret, once seen, is redacted when printed bare later (as `printenv` or `echo` would),
/// and a session that saw every secret still leaves every look-alike alone.
#[test]
fn learned_secrets_are_redacted_later_and_lookalikes_stay() {
    let cases = corpus("secrets.txt");
    let mut all = Redactor::new();
    for c in &cases {
        let mut r = Redactor::new();
        for line in c.input.lines() {
            r.learn(line);
            all.learn(line);
        }
        for secret in c.secrets.iter().filter(|s| !s.contains('\n')) {
            let later = format!("$ echo \"$VALUE\"\n{secret}\nvalue: {secret} (end)");
            let out = r.redact(&later);
            assert!(!out.contains(secret.as_str()), "{}: {out}", c.name);
            assert!(
                out.starts_with("$ echo \"$VALUE\"\n[REDACTED:"),
                "{}: {out}",
                c.name
            );
            assert!(out.ends_with("] (end)"), "{}: {out}", c.name);
        }
    }
    assert!(all.learned() >= 60, "learned only {}", all.learned());
    for c in corpus("lookalikes.txt") {
        let found = all.find_secrets(&c.input);
        assert!(
            found.is_empty(),
            "{}: {:?}",
            c.name,
            found
                .iter()
                .map(|s| &c.input[s.range.clone()])
                .collect::<Vec<_>>()
        );
    }
}

fn assert_untouched(name: &str, text: &str) {
    let found = find_secrets(text);
    assert!(
        found.is_empty(),
        "{name}: unexpected secrets {:?}",
        found
            .iter()
            .map(|s| (s.kind, &text[s.range.clone()]))
            .collect::<Vec<_>>()
    );
    assert!(matches!(redact(text), Cow::Borrowed(_)), "{name}");
}

const GIT_LOG: &str = "\
commit 3f2a9c1d4b5e6f708192a3b4c5d6e7f8091a2b3c (HEAD -> main, origin/main)
Author: Ada Lovelace <ada@example.com>
Date:   Sat Nov 21 10:12:33 2026 +0000

    Fix token refresh: the key is to retry after a 401

    Also rename src/token.rs helpers; tokenizer_key_test covers it.
    Reviewed-by: Bob <bob@example.com>

commit 0e1d2c3b4a5f60718293a4b5c6d7e8f9a0b1c2d3
Merge: 1a2b3c4 5d6e7f8
Author: Bob <bob@example.com>
Date:   Fri Nov 20 09:00:00 2026 +0000

    Merge pull request #42 from ada/password-prompt

    Show a password prompt instead of failing (password: (none) is allowed)
3f2a9c1 Fix token refresh
0e1d2c3 Merge pull request #42 from ada/password-prompt";

const SHA256SUM: &str = "\
e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt
9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  keys/api_key.txt
sha256:4bcb2a9f0b7c3a1e8d6f5e4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a";

const DOCKER_IMAGES: &str = "\
REPOSITORY               TAG       IMAGE ID       CREATED        SIZE
ghcr.io/acme/token-svc   latest    4bcb2a9f0b7c   2 days ago     87.3MB
postgres                 16        d1a2b3c4d5e6   3 weeks ago    432MB
<none>                   <none>    0a1b2c3d4e5f   5 weeks ago    1.2GB
$ docker inspect --format '{{.Id}}' postgres:16
sha256:d1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8";

const UUIDGEN: &str = "\
$ uuidgen
5b3f8e2a-9c4d-4e1f-8a7b-6c5d4e3f2a1b
$ cat /proc/sys/kernel/random/uuid
0f9e8d7c-6b5a-4321-9fed-cba987654321
session_id=5b3f8e2a-9c4d-4e1f-8a7b-6c5d4e3f2a1b";

const LS_SSH: &str = "\
$ ls -la ~/.ssh
total 32
drwx------  2 ada ada 4096 Nov 21 10:00 .
drwxr-x--- 30 ada ada 4096 Nov 21 09:58 ..
-rw-------  1 ada ada  411 Nov  1 12:00 id_ed25519
-rw-r--r--  1 ada ada  102 Nov  1 12:00 id_ed25519.pub
-rw-r--r--  1 ada ada 2842 Nov 19 08:12 known_hosts
$ ssh-keygen -lf ~/.ssh/id_ed25519.pub
256 SHA256:Xq3vJ8k2m9Lp4Rt7Yw1Zs6Bn0Cv5Hf2Gd8Ja3Ke4Mu ada@laptop (ED25519)
The key fingerprint is:
The key's randomart image is:";

const CARGO: &str = "\
   Compiling tokenizers v0.15.2
   Compiling omnish v0.1.0 (/home/ada/src/omnish)
warning: unused variable: `api_key`
  --> src/token.rs:12:9
   |
12 |     let api_key = env::var(\"API_KEY\")?;
   |         ^^^^^^^ help: if this is intentional, prefix it with an underscore: `_api_key`
error[E0308]: mismatched types
  --> src/secret.rs:30:5
   |
28 | fn check(token: Token, key: &str) -> bool {
29 |     let password: String = read_password();
   |
test token::tests::parses_key ... ok
test redact::tests::password_prompt ... ok
test result: ok. 42 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out
    Finished `dev` profile [unoptimized + debuginfo] target(s) in 4.20s";

const MISC: &str = "\
the key is to retry; enter the password prompt, then the token expires
KEY_LENGTH=32 MAX_TOKENS=4096 TOKEN_TTL=3600 ENABLE_TOKEN=true
export GITHUB_TOKEN=$(gh auth token)
export API_KEY=${API_KEY:-}
password: <your-password>
api_key: \"***\"
secret: xxx
git remote -v
origin\tgit@github.com:acme/omnish.git (fetch)
origin\thttps://github.com/acme/omnish.git (push)
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEexample
-----END PUBLIC KEY-----";

#[test]
fn negative_corpus_is_untouched() {
    for (name, text) in [
        ("git log", GIT_LOG),
        ("sha256sum", SHA256SUM),
        ("docker images", DOCKER_IMAGES),
        ("uuidgen", UUIDGEN),
        ("ls ~/.ssh", LS_SSH),
        ("cargo", CARGO),
        ("misc", MISC),
    ] {
        assert_untouched(name, text);
    }
    let all = [
        GIT_LOG,
        SHA256SUM,
        DOCKER_IMAGES,
        UUIDGEN,
        LS_SSH,
        CARGO,
        MISC,
    ]
    .join("\n");
    assert_untouched("all", &all);
}

#[test]
fn mixed_output_redacts_only_the_secrets() {
    let token = format!("ghp_{}", "Zq9X".repeat(9));
    let aws = format!("{}{}", "AKIA", "Q7ZX3M9PL2R8TK4V");
    let text = format!(
        "{GIT_LOG}\n$ env | grep -i token\nGITHUB_TOKEN={token}\n$ cat ~/.aws/credentials\n[default]\naws_access_key_id = {aws}\naws_secret_access_key = {}\n{SHA256SUM}",
        "wJa1rXUtnF3MI/K7MDENGbPxRfiCYzEXAMPLEKEY"
    );
    let out = redact(&text);
    assert!(out.contains("GITHUB_TOKEN=[REDACTED:github-token]\n"));
    assert!(out.contains("aws_access_key_id = [REDACTED:aws-access-key]\n"));
    assert!(out.contains("aws_secret_access_key = [REDACTED:aws-secret-key]\n"));
    assert!(out.starts_with(GIT_LOG));
    assert!(out.ends_with(SHA256SUM));
    assert_eq!(out.matches("[REDACTED:").count(), 3);
}

/// Well-formed fake secrets of every kind; each must disappear from the output.
fn secret_strategy() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        "[A-Za-z0-9]{36}".prop_map(|s| (format!("ghp_{s}"), format!("ghp_{s}"))),
        "[A-Z0-9]{16}".prop_map(|s| (format!("AKIA{s}"), format!("AKIA{s}"))),
        "[A-Za-z0-9_-]{35}".prop_map(|s| (format!("AIza{s}"), format!("AIza{s}"))),
        "[A-Za-z0-9_-]{20,40}".prop_map(|s| (format!("glpat-{s}"), format!("glpat-{s}"))),
        "[a-z]{10}[A-Z][0-9][A-Za-z0-9]{30}"
            .prop_map(|s| (format!("sk-proj-{s}"), format!("sk-proj-{s}"))),
        "[0-9]{10}-[A-Za-z0-9]{24}".prop_map(|s| (format!("xoxb-{s}"), format!("xoxb-{s}"))),
        "[A-Za-z0-9]{24,40}".prop_map(|s| (format!("sk_live_{s}"), format!("sk_live_{s}"))),
        (
            "[A-Za-z0-9_-]{10,30}",
            "[A-Za-z0-9_-]{10,30}",
            "[A-Za-z0-9_-]{20,43}"
        )
            .prop_map(|(a, b, c)| {
                let jwt = format!("eyJ{a}.eyJ{b}.{c}");
                (jwt.clone(), jwt)
            }),
        "[A-Za-z0-9][A-Za-z0-9!%^*+~]{5,29}"
            .prop_map(|p| (format!("postgres://app:{p}@db:5432/x"), p)),
        "[A-Za-z0-9][A-Za-z0-9._~+/-]{11,59}"
            .prop_map(|t| (format!("Authorization: Bearer {t}"), t)),
        "[A-Za-z0-9][A-Za-z0-9!%^*+~/=-]{8,39}"
            .prop_map(|v| (format!("export MY_API_TOKEN={v}"), v)),
        "[A-Za-z0-9][A-Za-z0-9 !%^*+~/=-]{8,39}".prop_map(|v| (format!("password: \"{v}\""), v)),
        "[A-Za-z0-9]{9,40}".prop_map(|v| (format!("--client-secret {v}"), v)),
        "[A-Za-z0-9][A-Za-z0-9!%^*+~]{5,29}"
            .prop_map(|v| (format!("machine h.example\n  login ada\n  password {v}"), v)),
        "[A-Za-z0-9][A-Za-z0-9!%^*+~]{5,29}"
            .prop_map(|v| (format!("curl -u ada:{v} https://h.example/"), v)),
        "[A-Za-z0-9+/=\n]{20,200}".prop_map(|b| (
            format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{b}\n-----END OPENSSH PRIVATE KEY-----"),
            b
        )),
    ]
    .prop_filter(
        "a mask or a one-character run is a placeholder",
        |(_, s)| !masked(s),
    )
}

/// What the redactor reads as a placeholder by design (`A****0` is how tools show a masked
/// value): four mask characters in a row, or a value that is mostly one character.
fn masked(v: &str) -> bool {
    let b = v.as_bytes();
    let mut run = 0;
    let mut longest = 0;
    for (i, &c) in b.iter().enumerate() {
        run = if i > 0 && b[i - 1] == c { run + 1 } else { 1 };
        longest = longest.max(run);
        if run >= 4 && matches!(c, b'*' | b'x' | b'X' | b'#') {
            return true;
        }
    }
    b.len() >= 8 && longest * 2 >= b.len()
}

/// Pieces of the recognised shapes, glued together at random by the idempotence test.
const FRAGMENTS: &[&str] = &[
    "TOKEN=",
    "export DB_PASSWORD=",
    "api_key: ",
    "\"password\": \"",
    "\"",
    "'",
    " ",
    "\n",
    "--token ",
    "--password=",
    "Authorization: ",
    "Bearer ",
    "Basic ",
    "proxy-authorization:",
    "postgres://",
    "app:",
    "@",
    ":",
    "/",
    "=",
    "==",
    "$",
    "${",
    "}",
    "(",
    ")",
    ",",
    "&",
    "?",
    "[REDACTED:assignment]",
    "[REDACTED:",
    "]",
    "[",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "\"private_key\": \"",
    "sk-",
    "sk-ant-",
    "ghp_",
    "AKIA",
    "AIza",
    "xoxb-",
    "glpat-",
    "sk_live_",
    "eyJ",
    ".",
    "-",
    "_",
    "https://hooks.slack.com/services/",
    "0123456789ABCDEFGHIJ",
    "abcdefghijKLMNOPQRST",
];

/// Surrounding text: words and punctuation that cannot glue onto a secret.
fn filler() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-z0-9 .,:/=#-]{0,12}", 0..6).prop_map(|w| w.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_secrets_never_survive(
        (text, secret) in secret_strategy(),
        before in filler(),
        after in filler(),
    ) {
        let input = format!("{before}\n{text}\n{after}");
        let out = redact(&input);
        prop_assert!(!out.contains(&secret), "{input:?} -> {out:?}");
        prop_assert!(out.contains("[REDACTED:"));
    }

    #[test]
    fn redact_is_idempotent(
        parts in prop::collection::vec(
            prop_oneof![
                secret_strategy().prop_map(|(t, _)| t),
                filler(),
                "[ -~\n]{0,40}",
            ],
            0..6,
        ),
    ) {
        let input = parts.join("\n");
        let once = redact(&input).into_owned();
        let twice = redact(&once);
        prop_assert!(matches!(twice, Cow::Borrowed(_)), "{input:?} -> {once:?} -> {twice:?}");
        let nested = once.split("[REDACTED:").skip(1).any(|rest| {
            rest.find('[').is_some_and(|open| rest.find(']').is_none_or(|close| open < close))
        });
        prop_assert!(!nested, "nested marker in {once:?}");
    }

    #[test]
    fn redact_is_idempotent_on_pattern_fragments(
        parts in prop::collection::vec(
            prop_oneof![
                prop::sample::select(FRAGMENTS.to_vec()).prop_map(str::to_string),
                "[A-Za-z0-9]{1,8}",
            ],
            0..14,
        ),
    ) {
        let input = parts.concat();
        let once = redact(&input).into_owned();
        let twice = redact(&once);
        prop_assert!(matches!(twice, Cow::Borrowed(_)), "{input:?} -> {once:?} -> {twice:?}");
    }

    /// A learned value is redacted wherever it is printed: at any offset (a line's gate reads 8
    /// bytes at a time), next to a marker, beside other learned values sharing its first bytes,
    /// in text that is not ASCII. The redactor searches for learned values only where its gate
    /// saw the first 8 bytes of one; debug builds (these tests) also check on every call that
    /// the search would have found nothing elsewhere.
    #[test]
    fn learned_values_are_redacted_wherever_they_are_printed(
        values in prop::collection::vec(
            prop_oneof![
                "[a-z]{2}[A-Z]{2}[0-9]{2}[a-zA-Z0-9_.@-]{2,24}",
                "Pw-[0-9]{3}-[a-zA-Z0-9]{2,10}",
                "[a-zé]{3}[A-Z0-9]{3}[a-zA-Z0-9é]{2,12}",
            ],
            1..6,
        ),
        parts in prop::collection::vec((0usize..6, "[a-zA-Z0-9 .,:=é-]{0,9}"), 0..8),
    ) {
        let values: Vec<String> = values.into_iter().filter(|v| learnable(v)).collect();
        let mut r = Redactor::new();
        for v in &values {
            r.learn(&format!("export SERVICE_PASSWORD='{v}'"));
        }
        prop_assert_eq!(r.learned(), values.iter().collect::<BTreeSet<_>>().len());
        // Values, their first 7 bytes (no value), text and markers, glued together.
        let mut input = String::new();
        for (pick, text) in &parts {
            match (values.get(*pick), pick) {
                (Some(v), _) => input.push_str(v),
                (None, 5) => input.push_str("[REDACTED:token]"),
                _ => {}
            }
            if let Some(v) = values.get(pick / 2) {
                input.push_str(&v[..v.char_indices().nth(7).map_or(v.len(), |(i, _)| i)]);
            }
            input.push_str(text);
        }
        let out = r.redact(&input);
        for v in &values {
            prop_assert!(!out.contains(v.as_str()), "{v:?} in {input:?} -> {out:?}");
        }
        prop_assert_eq!(r.redact(&out), out.clone(), "idempotent");
    }

    #[test]
    fn secret_free_alphabet_is_borrowed(text in "[0-9a-f \n.:/=_-]{0,400}") {
        prop_assert!(matches!(redact(&text), Cow::Borrowed(_)));
        prop_assert!(find_secrets(&text).is_empty());
    }
}

/// Inputs on which a second `redact` used to find more (CI, proptest): a value cut short by what
/// follows it, a value alone on its line followed by a marker, a value next to a longer match.
#[test]
fn redacting_twice_changes_nothing_regressions() {
    for input in [
        "TOKEN=A${--password=TOKEN=a",
        "TOKEN=\nproxy-authorization:[REDACTED:",
        "TOKEN=------BEGIN RSA PRIVATE KEY-----",
    ] {
        let once = redact(input).into_owned();
        let twice = redact(&once);
        assert!(
            matches!(twice, Cow::Borrowed(_)),
            "{input:?} -> {once:?} -> {twice:?}"
        );
    }
}
