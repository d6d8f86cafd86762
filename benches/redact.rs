//! Throughput of the redactor, which context runs on every kept output line and command line:
//! lines per second of `redact` (the detectors) over realistic output in which most lines hold
//! no candidate, some hold secret-sounding names and a few hold secrets; and of a session
//! `Redactor` that has learned 100 values (detectors plus the learned-value search).
//!
//! Run with: `cargo bench --bench redact` (plain std::time, no harness). Each figure is the
//! median of `OMNISH_BENCH_ROUNDS` passes over the lines (default 7), with the slowest and
//! fastest pass beside it and the load average before: on a shared machine of 2 cores one pass
//! can take twice as long as the next. Set `OMNISH_BENCH_LINES` to change the number of lines
//! (default 400,000).
//!
//! `OMNISH_REDACT_DIFF=FILE cargo bench --bench redact` times nothing: it writes what `redact`
//! and a session `Redactor` make of ~100,000 generated texts (the redaction corpora's lines and
//! cases, cut, joined, recased, spliced with markers, non-ASCII and random words, plus random
//! soups of the detectors' literals) to FILE, one line each, so that two builds can be compared
//! byte for byte (`cmp old new`): a change made for speed must leave every output as it was.

mod support;
use std::hint::black_box;
use std::time::Instant;
use support::{CRATES, Rng, load_average, median};

use omnish::context::stages::redact::redact;

fn lines(n: usize) -> Vec<String> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let hex = |rng: &mut Rng, n: usize| -> String {
        (0..n)
            .map(|_| char::from(b"0123456789abcdef"[rng.below(16) as usize]))
            .collect()
    };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let krate = CRATES[rng.below(CRATES.len() as u64) as usize];
        let line = match rng.below(100) {
            0..=24 => format!(
                "   Compiling {krate} v1.{}.{} (/home/dev/src/{krate})",
                i % 40,
                i % 7
            ),
            25..=44 => format!("test {krate}::tests::case_{i} ... ok"),
            45..=54 => format!("commit {}", hex(&mut rng, 40)),
            55..=64 => format!(
                "2026-11-23T10:{:02}:{:02}Z INFO request_id={}-{}-4{}-a{}-{} path=/api/v1/items status=200",
                i % 60,
                (i / 60) % 60,
                hex(&mut rng, 8),
                hex(&mut rng, 4),
                hex(&mut rng, 3),
                hex(&mut rng, 3),
                hex(&mut rng, 12)
            ),
            65..=74 => format!(
                "-rw-r--r--  1 dev dev {:>6} Nov 23 10:00 src/{krate}/mod_{i}.rs",
                i % 99_999
            ),
            75..=82 => format!("{}  target/release/{krate}-{i}.tar.gz", hex(&mut rng, 64)),
            83..=89 => format!(
                "    \"{krate}\": {{ \"version\": \"1.{}.0\", \"features\": [\"std\"] }},",
                i % 30
            ),
            90..=93 => format!(
                "warning: unused variable: `token_{i}` in fn check(token: Token, key: &str)"
            ),
            94..=96 => format!(
                "export {}_API_KEY=${{{}_API_KEY:-}}",
                krate.to_uppercase().replace('-', "_"),
                "X"
            ),
            97 => format!("DB_PASSWORD=S3cr3t-{}-pw", hex(&mut rng, 8)),
            98 => format!("Authorization: Bearer {}", hex(&mut rng, 40)),
            _ => format!("GITHUB_TOKEN=ghp_{}", "aB3dE5".repeat(6)),
        };
        out.push(line);
    }
    out
}

fn main() {
    let n: usize = std::env::var("OMNISH_BENCH_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400_000);
    if let Some(file) = std::env::var_os("OMNISH_REDACT_DIFF") {
        return diff::dump(std::path::Path::new(&file), &lines(20_000));
    }
    let input = lines(n);
    let bytes: usize = input.iter().map(|l| l.len() + 1).sum();
    println!("load average before: {}", load_average());
    // Warm up: compile the patterns.
    black_box(redact("warm up TOKEN=abc"));

    throughput("redact (detectors):     ", &input, bytes, redact);
    session(&input, bytes);
    println!("reproduce: cargo bench --bench redact");
}

/// The same lines through a session redactor that has learned 100 values.
fn session(input: &[String], bytes: usize) {
    use omnish::context::stages::redact::Redactor;
    let mut r = Redactor::new();
    for i in 0..100 {
        r.learn(&format!(
            "export SERVICE_{i}_PASSWORD='Pw-{i:03}-{}'",
            "x9Y".repeat(4)
        ));
    }
    assert_eq!(r.learned(), 100);
    black_box(r.redact("warm up"));
    throughput("Redactor (100 learned): ", input, bytes, |l| r.redact(l));

    // What the first calls after learning pay (once per session and call of the pipeline), for
    // a session's most values: the gate is built for the first line, the alternation for the
    // first line that may hold a learned value.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut r = Redactor::new();
    let mut value = String::new();
    while r.learned() < 1024 {
        const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789";
        value = (0..20)
            .map(|_| char::from(ALPHABET[rng.below(ALPHABET.len() as u64) as usize]))
            .collect();
        r.learn(&format!("export API_TOKEN='{value}'"));
    }
    let start = Instant::now();
    black_box(r.redact("the first line after learning"));
    let gate = start.elapsed().as_secs_f64() * 1e3;
    let start = Instant::now();
    assert!(r.redact(&format!("echo {value}")).contains("[REDACTED:"));
    println!(
        "Redactor with 1024 learned values: first line {gate:.2} ms (builds the gate), first line holding one {:.2} ms (builds the alternation)",
        start.elapsed().as_secs_f64() * 1e3
    );
}

/// Times `redact` over every line of `input` (`bytes` in all), as many times as asked, and
/// prints the median rate after `label`, with the slowest and fastest pass.
fn throughput<'a>(
    label: &str,
    input: &'a [String],
    bytes: usize,
    redact: impl Fn(&'a str) -> std::borrow::Cow<'a, str>,
) {
    let rounds: usize = std::env::var("OMNISH_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&r| r > 0)
        .unwrap_or(7);
    let n = input.len();
    let mut secs = Vec::with_capacity(rounds);
    let mut changed = 0usize;
    for _ in 0..rounds {
        let start = Instant::now();
        changed = 0;
        for l in input {
            if matches!(black_box(redact(l)), std::borrow::Cow::Owned(_)) {
                changed += 1;
            }
        }
        secs.push(start.elapsed().as_secs_f64());
    }
    let rate = |s: f64| n as f64 / s / 1e6;
    let (fastest, slowest) = secs
        .iter()
        .fold((f64::MAX, 0f64), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    let mid = median(secs);
    println!(
        "{label} {n} lines, {:.1} MB: {:.2} M lines/s, {:.1} MB/s (median of {rounds}; passes {:.2} to {:.2} M lines/s; {changed} lines changed)",
        bytes as f64 / 1e6,
        rate(mid),
        bytes as f64 / 1e6 / mid,
        rate(slowest),
        rate(fastest),
    );
}

/// The differential corpus (see the module documentation).
mod diff {
    use super::Rng;
    use omnish::context::stages::redact::{Redactor, redact};
    use std::fmt::Write as _;
    use std::path::Path;

    /// Literals and shapes the detectors look for, and words around them.
    #[rustfmt::skip]
    const WORDS: &[&str] = &[
        "token", "TOKEN", "Token", "password", "PASSWORD", "passwd", "pass", "pwd", "secret",
        "SECRET", "key", "KEY", "api_key", "apiKey", "API_KEY", "client_secret", "access_token",
        "private_key", "credentials", "passphrase", "key_data", "secret_key_base", "auth",
        "Authorization", "authorization", "Bearer", "Basic", "Cookie", "Set-Cookie", "cookie",
        "curl", "-u", "--user", "-p", "-P", "-a", "--password", "--token", "--api-key", "mysql",
        "sshpass", "docker", "login", "redis-cli", "machine", "default", "password", "user",
        "ghp_", "gho_", "github_pat_", "glpat-", "sk-", "sk-ant-", "sk-proj-", "xoxb-", "sk_live_",
        "rk_test_", "AKIA", "ASIA", "AIza", "eyJ", "hf_", "ya29.", "npm_", "SG.", "dapi", "hvs.",
        "https://", "http://", "postgres://", "://", "@", "=", ":", ":=", "=>", "\"", "'", "`",
        "${", "$(", "$", "%", "|", ";", "&&", "&", "?", "&sig=", "<", ">", "</", "[", "]", "{",
        "}", "(", ")", ",", ".", "...", "-", "--", "_", "~", "/", "+", "\\", "\t", "  ", " ",
        " ", " ", " ", "\n", "is", "was", "the", "with", "Created", "export", "set", "ENC[",
        "sha256:", "h1:", "commit", "$2y$", "$6$", "{SSHA}", "pbkdf2_sha256$", "-----BEGIN",
        "PRIVATE KEY-----", "-----END", "<Password>", "</Password>", "value=\"", "key=\"",
        "hooks.slack.com/services/", "[REDACTED:assignment]", "[REDACTED:token]", "é", "K",
        "…", "xxxx", "XXXXXXXX", "****", "EXAMPLE", "changeme", "your_api_key_here", "null",
        "true", "12345678", "A3-", "ops_", "Q~", ":A", "-us1", ".atlasv1.", "sentry.io",
    ];

    fn pick<'a>(rng: &mut Rng, v: &[&'a str]) -> &'a str {
        v[rng.below(v.len() as u64) as usize]
    }

    fn chars(rng: &mut Rng, n: usize) -> String {
        const ALPHABETS: &[&str] = &[
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            "0123456789abcdef",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            "abcdefghijklmnopqrstuvwxyz",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
        ];
        let a = pick(rng, ALPHABETS).as_bytes();
        (0..n)
            .map(|_| char::from(a[rng.below(a.len() as u64) as usize]))
            .collect()
    }

    /// The corpora's texts: `⟨cN⟩` filled with N random chars, `«kind|text»` and `«text»`
    /// marks dropped; each case whole, and each of its lines.
    fn corpus(rng: &mut Rng) -> Vec<String> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/redact");
        let mut out = Vec::new();
        for file in [
            "secrets.txt",
            "lookalikes.txt",
            "heldout/secrets.gen.txt",
            "heldout/secrets.hand.txt",
            "heldout/lookalikes.txt",
        ] {
            let text = std::fs::read_to_string(format!("{dir}/{file}")).expect("corpus");
            for block in text.split("\n== ").skip(1) {
                let body = block.split_once('\n').map_or("", |(_, b)| b);
                let mut plain = String::new();
                let mut rest = body.trim_end_matches('\n');
                while let Some(i) = rest.find(['⟨', '«', '»']) {
                    plain.push_str(&rest[..i]);
                    let c = rest[i..].chars().next().unwrap();
                    rest = &rest[i + c.len_utf8()..];
                    match c {
                        '⟨' => {
                            let close = rest.find('⟩').expect("⟨cN⟩");
                            let n: usize = rest[1..close].parse().unwrap_or(8);
                            plain.push_str(&chars(rng, n));
                            rest = &rest[close + '⟩'.len_utf8()..];
                        }
                        '«' => {
                            let bar = rest.find('|');
                            let close = rest.find('»').unwrap_or(rest.len());
                            if let Some(b) = bar.filter(|&b| b < close && !rest[..b].contains(' '))
                            {
                                rest = &rest[b + 1..];
                            }
                        }
                        _ => {}
                    }
                }
                plain.push_str(rest);
                out.extend(plain.lines().map(str::to_string));
                out.push(plain);
            }
        }
        out
    }

    fn boundary(s: &str, rng: &mut Rng) -> usize {
        let mut i = rng.below(s.len() as u64 + 1) as usize;
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    }

    /// A variant of `seed` (`other`: a second text to join).
    fn variant(seed: &str, other: &str, rng: &mut Rng) -> String {
        let mut s = seed.to_string();
        let at = boundary(&s, rng);
        match rng.below(12) {
            0 => s,
            1 => format!("{} {s}", pick(rng, WORDS)),
            2 => format!("{s}{}{}", pick(rng, WORDS), pick(rng, WORDS)),
            3 => s[..at].to_string(),
            4 => s[at..].to_string(),
            5 => {
                let end = at + boundary(&s[at..], rng);
                let mid = if rng.below(2) == 0 {
                    s[at..end].to_ascii_uppercase()
                } else {
                    s[at..end].to_ascii_lowercase()
                };
                format!("{}{mid}{}", &s[..at], &s[end..])
            }
            6 => format!("{s}\n{other}"),
            7 => {
                s.insert_str(
                    at,
                    pick(rng, &["[REDACTED:assignment]", "[REDACTED:github-token]"]),
                );
                s
            }
            8 => {
                s.insert_str(at, pick(rng, &["é", "K", "…", "日本", "\u{1b}[31m"]));
                s
            }
            9 => {
                let n = rng.below(60) as usize + 1;
                s.insert_str(at, &chars(rng, n));
                s
            }
            10 => {
                s.insert_str(at, pick(rng, WORDS));
                s
            }
            _ => {
                let end = at + boundary(&s[at..], rng);
                format!("{}{}", &s[..at], &s[end..])
            }
        }
    }

    /// A random soup of the literals, random words and separators.
    fn soup(rng: &mut Rng) -> String {
        let mut s = String::new();
        for _ in 0..rng.below(14) + 1 {
            if rng.below(3) == 0 {
                let n =
                    [4, 8, 12, 16, 20, 24, 32, 36, 40, 48, 64, 100, 210][rng.below(13) as usize];
                s.push_str(&chars(rng, n));
            } else {
                s.push_str(pick(rng, WORDS));
            }
        }
        s
    }

    pub fn dump(file: &Path, bench_lines: &[String]) {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let seeds = corpus(&mut rng);
        let mut texts: Vec<String> = bench_lines.to_vec();
        for (i, seed) in seeds.iter().enumerate() {
            for _ in 0..40 {
                let other = &seeds[(i * 7 + rng.below(seeds.len() as u64) as usize) % seeds.len()];
                texts.push(variant(seed, other, &mut rng));
            }
        }
        for _ in 0..30_000 {
            texts.push(soup(&mut rng));
        }
        // A session that learned from some of the texts.
        let mut session = Redactor::new();
        for t in texts.iter().step_by(97) {
            session.learn(t);
        }
        let mut out = String::new();
        let mut changed = 0;
        for t in &texts {
            let a = redact(t);
            let b = session.redact(t);
            changed += usize::from(a != t.as_str());
            writeln!(out, "{a:?}\t{b:?}").unwrap();
        }
        std::fs::write(file, out).expect("write the dump");
        println!(
            "{} texts ({changed} redacted), {} learned, written to {}",
            texts.len(),
            session.learned(),
            file.display()
        );
    }
}
