//! Throughput of the redactor, which context runs on every kept output line and command line:
//! lines per second of `redact` (the detectors) over realistic output in which most lines hold
//! no candidate, some hold secret-sounding names and a few hold secrets; and of a session
//! `Redactor` that has learned 100 values (detectors plus the learned-value search).
//!
//! Run with: `cargo bench --bench redact` (plain std::time, no harness). Set
//! `OMNISH_BENCH_LINES` to change the number of lines (default 400,000).

mod support;
use std::hint::black_box;
use std::time::Instant;
use support::{CRATES, Rng};

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
    let input = lines(n);
    let bytes: usize = input.iter().map(|l| l.len() + 1).sum();
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
}

/// Times `redact` over every line of `input` (`bytes` in all) and prints the rate after `label`.
fn throughput<'a>(
    label: &str,
    input: &'a [String],
    bytes: usize,
    redact: impl Fn(&'a str) -> std::borrow::Cow<'a, str>,
) {
    let n = input.len();
    let start = Instant::now();
    let mut changed = 0usize;
    for l in input {
        if matches!(black_box(redact(l)), std::borrow::Cow::Owned(_)) {
            changed += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{label} {n} lines, {:.1} MB in {secs:.3} s: {:.0} lines/s, {:.1} MB/s ({changed} lines changed)",
        bytes as f64 / 1e6,
        n as f64 / secs,
        bytes as f64 / 1e6 / secs
    );
}
