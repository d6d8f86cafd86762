//! Shared by the benches: deterministic generators for realistic terminal output, and running
//! the release binary with its wall time and peak RSS.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Small deterministic PRNG (xorshift), drawn once per line, never per byte, so
/// every run generates the same bytes.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Crate names for compiler-like output.
pub const CRATES: [&str; 10] = [
    "serde",
    "tokio",
    "regex-syntax",
    "proc-macro2",
    "clap_builder",
    "hyper",
    "libc",
    "unicode-width",
    "rustls",
    "tracing-subscriber",
];

pub fn omnish(bin: &Path, root: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(["context"])
        .args(args)
        .env("OMNISH_DATA_DIR", root)
        .env_remove("OMNISH_SESSION_ID")
        .stdin(Stdio::null());
    cmd
}

/// Runs once; returns wall time in ms and stdout bytes. A failing run is a broken bench.
pub fn run_once(bin: &Path, root: &Path, args: &[&str]) -> (f64, usize) {
    let start = Instant::now();
    let out = omnish(bin, root, args).output().expect("run omnish");
    let ms = start.elapsed().as_secs_f64() * 1e3;
    assert!(
        out.status.success(),
        "omnish context {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (ms, out.stdout.len())
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Peak RSS in KiB of one run, by `/usr/bin/time -f %M`.
pub fn rss_by_time(bin: &Path, root: &Path, args: &[&str]) -> Option<u64> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return None;
    }
    let out = Command::new(time)
        .args(["-f", "%M", "--"])
        .arg(bin)
        .arg("context")
        .args(args)
        .env("OMNISH_DATA_DIR", root)
        .env_remove("OMNISH_SESSION_ID")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr.lines().last()?.trim().parse().ok()
}

pub fn binary() -> PathBuf {
    // Set by cargo for benches and integration tests; `cargo bench` builds it in release.
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_omnish"));
    if bin.exists() {
        return bin;
    }
    let fallback = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/omnish");
    assert!(
        fallback.exists(),
        "no omnish binary at {} or {}; run `cargo build --release` first",
        bin.display(),
        fallback.display()
    );
    fallback
}
