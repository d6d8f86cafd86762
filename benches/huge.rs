//! Does `omnish context` stay bounded on the outputs users most need explained, the huge ones?
//!
//! Builds sessions through the store API (no shell is run), with output framed as the recorder
//! frames it, then runs the release binary on each case and prints wall time and peak RSS:
//!
//! - BIG: 14 commands, three of which printed `seq 1 12000000` (~100 MB each), vs SMALL: 10
//!   commands of ordinary output. `--recent 14` first (no cache: one rendering pass over what is
//!   selected) and later (cached digests), and `--max-lines 0 --budget 500 --recent 50`.
//! - LINE: one command that printed a single 100 MB line, with default options and with
//!   `--budget 2000`.
//! - GREP: a 300 MB session where `--grep` matches nothing recent.
//! - BINARY: one command that printed 50 MB of random bytes.
//! - OSC: one command that printed a 100 MB escape sequence that never ends.
//!
//! Targets (issue 6): peak RSS ≤ 64 MiB everywhere; later `--recent 14` calls on BIG at most 3×
//! the same call on SMALL; a first call costs at most one pass at render speed. It prints
//! figures; it asserts no timings.
//!
//! Run with: `cargo bench --bench huge` (`-- --keep` keeps the generated data).

mod support;
use std::path::Path;
use std::time::Instant;
use support::{Rng, binary, command_record, finished_meta, median, omnish, rss_by_time};

use omnish::store::{self, CommandRecord, SessionMeta, StreamWriter};

const COLS: u16 = 120;
const ROWS: u16 = 40;
const T0: u64 = 1_750_000_000_000;
const RUNS: usize = 5;

/// Writes sessions the way the recorder does: prompt and typed line between commands, output
/// frames of pty-read size.
struct Builder {
    id: String,
    dir: std::path::PathBuf,
    stream: StreamWriter,
    records: Vec<CommandRecord>,
    now: u64,
}

impl Builder {
    fn new(root: &Path, seed: u64) -> Builder {
        let id = format!("{}{:x}", &store::new_session_id(T0)[..21], seed & 0xffffff);
        let dir = store::sessions_dir(root).join(&id);
        store::create_private_dir(&dir).unwrap();
        let stream = StreamWriter::create(&dir.join(store::STREAM)).unwrap();
        Builder {
            id,
            dir,
            stream,
            records: Vec::new(),
            now: T0,
        }
    }

    /// One command whose output `fill` produces in chunks (each call appends to the buffer and
    /// returns false when done).
    fn command(&mut self, line: &str, exit: i32, mut fill: impl FnMut(&mut Vec<u8>) -> bool) {
        self.now += 1000;
        let s = &mut self.stream;
        s.write(self.now, store::OUTPUT, b"dev@host:~/proj$ ")
            .unwrap();
        s.write(self.now, store::INPUT, line.as_bytes()).unwrap();
        s.write(self.now, store::OUTPUT, line.as_bytes()).unwrap();
        s.write(self.now, store::INPUT, b"\r").unwrap();
        s.write(self.now, store::OUTPUT, b"\r\n").unwrap();
        let offset = s.offset();
        let started_at = self.now;
        let mut buf = Vec::with_capacity(1 << 20);
        loop {
            buf.clear();
            let more = fill(&mut buf);
            for chunk in buf.chunks(4095) {
                s.write(self.now, store::OUTPUT, chunk).unwrap();
            }
            if !more {
                break;
            }
        }
        let seq = self.records.len() as u64 + 1;
        self.records.push(CommandRecord {
            command_line: line.to_string(),
            started_at,
            ended_at: self.now + 500,
            exit_code: Some(exit),
            stream_offset: offset,
            stream_length: s.offset() - offset,
            cols: COLS,
            ..command_record(&self.id, seq)
        });
    }

    fn finish(mut self) -> u64 {
        self.stream.flush().unwrap();
        for r in &self.records {
            store::append_command(&self.dir, r).unwrap();
        }
        let meta = SessionMeta {
            cols: COLS,
            rows: ROWS,
            ..finished_meta(&self.id, T0, self.now + 1000)
        };
        store::write_json_atomic(&self.dir.join(store::META), &meta).unwrap();
        self.stream.offset()
    }
}

/// `seq 1 n` as a terminal receives it.
fn seq_output(n: u64) -> impl FnMut(&mut Vec<u8>) -> bool {
    let mut i = 1;
    move |buf| {
        while i <= n && buf.len() < 1 << 20 {
            buf.extend_from_slice(i.to_string().as_bytes());
            buf.extend_from_slice(b"\r\n");
            i += 1;
        }
        i <= n
    }
}

/// Ordinary build output: a few hundred lines, an error among them.
fn build_output(rng: &mut Rng, failed: bool) -> impl FnMut(&mut Vec<u8>) -> bool + '_ {
    let mut done = false;
    move |buf| {
        if done {
            return false;
        }
        let lines = 200 + rng.below(200);
        for i in 0..lines {
            let crate_name = support::CRATES[rng.below(10) as usize];
            buf.extend_from_slice(
                format!("\x1b[1;32m   Compiling\x1b[0m {crate_name} v1.{i}.0\r\n").as_bytes(),
            );
        }
        if failed {
            buf.extend_from_slice(b"\x1b[1;31merror[E0308]\x1b[0m: mismatched types\r\n");
        }
        done = true;
        false
    }
}

/// `n` bytes of one line without a newline, then one.
fn one_line(n: u64) -> impl FnMut(&mut Vec<u8>) -> bool {
    let mut left = n;
    move |buf| {
        let take = left.min(1 << 20);
        buf.resize(take as usize, b'b');
        left -= take;
        if left == 0 {
            buf.extend_from_slice(b"\r\n");
        }
        left > 0
    }
}

fn random_bytes(n: u64, rng: &mut Rng) -> impl FnMut(&mut Vec<u8>) -> bool + '_ {
    let mut left = n;
    move |buf| {
        let take = left.min(1 << 20);
        for _ in 0..take / 8 {
            buf.extend_from_slice(&rng.next().to_le_bytes());
        }
        left -= take;
        left > 0
    }
}

/// Bytes `seq 1 n` prints through a terminal (CR LF line ends).
fn seq_bytes(n: u64) -> u64 {
    let mut total = 0;
    let mut lo = 1;
    let mut digits = 1;
    while lo <= n {
        let hi = (lo * 10 - 1).min(n);
        total += (hi - lo + 1) * (digits + 2);
        lo *= 10;
        digits += 1;
    }
    total
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Runs once; wall time in ms and stdout bytes. Exit 1 (nothing matched) is a result, not a
/// failure.
fn run_once(bin: &Path, root: &Path, args: &[&str]) -> (f64, usize) {
    let start = Instant::now();
    let out = omnish(bin, root, args).output().expect("run omnish");
    let ms = start.elapsed().as_secs_f64() * 1e3;
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "omnish context {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (ms, out.stdout.len())
}

/// Runs `args` RUNS times (after `prepare` before each run) and prints the median and the peak
/// RSS of one run.
fn case(bin: &Path, root: &Path, label: &str, args: &[&str], prepare: &dyn Fn()) -> f64 {
    let mut times = Vec::new();
    let mut out = 0;
    for _ in 0..RUNS {
        prepare();
        let (ms, n) = run_once(bin, root, args);
        times.push(ms);
        out = n;
    }
    prepare();
    let rss = rss_by_time(bin, root, args).map_or("n/a".to_string(), |k| {
        format!("{:.1} MiB", k as f64 / 1024.0)
    });
    let ms = median(times);
    println!(
        "{label:<34} {:<46} {ms:>9.1} ms {rss:>10} {out:>9} B",
        args.join(" ")
    );
    ms
}

fn clear_caches(root: &Path) {
    for dir in store::list_sessions(root).unwrap() {
        let _ = std::fs::remove_dir_all(store::cache::dir(&dir));
    }
}

fn main() {
    let keep = std::env::args().any(|a| a == "--keep");
    let bin = binary();
    let tmp = tempfile::Builder::new()
        .prefix("omnish-bench-huge-")
        .tempdir()
        .unwrap();
    let root = |name: &str| tmp.path().join(name);
    let mut rng = Rng(0x5eed);
    let start = Instant::now();

    let mut big = Builder::new(&root("big"), 1);
    for i in 0..14 {
        if [3, 7, 11].contains(&i) {
            big.command("seq 1 12000000", 0, seq_output(12_000_000));
        } else {
            big.command(
                "cargo build",
                i32::from(i % 4 == 1),
                build_output(&mut rng, i % 4 == 1),
            );
        }
    }
    let big_len = big.finish();
    let mut small = Builder::new(&root("small"), 2);
    for i in 0..10 {
        small.command(
            "cargo build",
            i32::from(i % 4 == 1),
            build_output(&mut rng, i % 4 == 1),
        );
    }
    small.finish();
    let mut line = Builder::new(&root("line"), 3);
    line.command(
        "head -c 100000000 /dev/zero | tr '\\0' b",
        0,
        one_line(100_000_000),
    );
    line.finish();
    let mut grep = Builder::new(&root("grep"), 4);
    for i in 0..3 {
        grep.command("seq 1 12000000", 0, seq_output(12_000_000));
        grep.command("cargo build", i % 2, build_output(&mut rng, i % 2 == 1));
    }
    let grep_len = grep.finish();
    let mut binary_out = Builder::new(&root("binary"), 5);
    let mut rng2 = Rng(0xb1);
    binary_out.command(
        "cat /dev/urandom | head -c 50000000",
        0,
        random_bytes(50_000_000, &mut rng2),
    );
    binary_out.finish();
    // An escape sequence that never ends: a terminal title of 100 MB (the parser keeps at most a
    // bounded prefix of an OSC string).
    let mut osc = Builder::new(&root("osc"), 6);
    let mut started = false;
    let mut body = one_line(100_000_000);
    osc.command("cat title.bin", 0, move |buf| {
        if !started {
            buf.extend_from_slice(b"\x1b]0;");
            started = true;
        }
        body(buf)
    });
    osc.finish();
    println!("binary: {}", bin.display());
    println!(
        "generated in {:.1} s: BIG stream.bin {:.0} MiB, GREP {:.0} MiB",
        start.elapsed().as_secs_f64(),
        mib(big_len),
        mib(grep_len)
    );
    println!("\nmedian of {RUNS} runs; peak RSS of one run (/usr/bin/time -f %M):");

    let none = || {};
    let r = root("big");
    let cold = || clear_caches(&root("big"));
    let first = case(
        &bin,
        &r,
        "BIG first call (no cache)",
        &["--recent", "14"],
        &cold,
    );
    let later = case(
        &bin,
        &r,
        "BIG later call (cached)",
        &["--recent", "14"],
        &none,
    );
    let small_ms = case(&bin, &root("small"), "SMALL", &["--recent", "14"], &none);
    case(
        &bin,
        &r,
        "BIG budget, no cache",
        &["--max-lines", "0", "--budget", "500", "--recent", "50"],
        &cold,
    );
    case(
        &bin,
        &r,
        "BIG budget, cached",
        &["--max-lines", "0", "--budget", "500", "--recent", "50"],
        &none,
    );
    let lr = root("line");
    let cold_line = || clear_caches(&root("line"));
    case(
        &bin,
        &lr,
        "100 MB line, no cache",
        &["--recent", "1"],
        &cold_line,
    );
    case(&bin, &lr, "100 MB line, cached", &["--recent", "1"], &none);
    case(
        &bin,
        &lr,
        "100 MB line --budget 2000",
        &["--recent", "1", "--budget", "2000"],
        &none,
    );
    let gr = root("grep");
    case(
        &bin,
        &gr,
        "GREP matches nothing (exit 1)",
        &["--grep", "no-such-text-anywhere", "--recent", "3"],
        &none,
    );
    case(
        &bin,
        &root("binary"),
        "50 MB binary output",
        &["--recent", "1"],
        &none,
    );

    let selected = 3.0 * mib(seq_bytes(12_000_000));
    println!(
        "\nBIG later/SMALL: {:.2} (target: at most 3); BIG first call renders {:.0} MiB at {:.0} MiB/s",
        later / small_ms,
        selected,
        selected / ((first - small_ms).max(1.0) / 1000.0)
    );
    if keep {
        let path = tmp.keep();
        println!("kept data in {}", path.display());
    }
    println!("reproduce: cargo bench --bench huge");
}
