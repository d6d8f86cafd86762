//! Is `omnish search` fast on a large store, and bounded in memory?
//!
//! Builds a store of about 1 GiB of recorded output through the store API (8 sessions of
//! coloured log and build output framed as the recorder frames it; no shell runs), then runs the
//! release binary and prints, side by side:
//!
//! - the first search (no text cache yet: one rendering pass over everything, which also writes
//!   the cache),
//! - later searches (served from the cache; median of 3),
//! - `rg -a PATTERN` over the raw `stream.bin` files (median of 3, after one warm-up run so both
//!   read from the page cache), which does not even give correct results through escape codes,
//! - peak RSS of each (`/usr/bin/time -f %M`).
//!
//! Target (issue 9): a later search at most 3x `rg` over the same session files; peak RSS at
//! most 64 MiB. It prints figures; it asserts no timings, only that the searches found what was
//! planted.
//!
//! Run with: `cargo bench --bench search` (`-- --keep` keeps the generated store, `-- --mib N`
//! builds N MiB instead of 1024).

mod support;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use support::{Rng, binary, command_record, finished_meta, median};

use omnish::store::{self, CommandRecord, SessionMeta, StreamWriter};

const COLS: u16 = 120;
const ROWS: u16 = 40;
const T0: u64 = 1_750_000_000_000;
const SESSIONS: u64 = 8;
const RUNS: usize = 3;
/// Planted in a few outputs, and only there.
const NEEDLE: &str = "needle-in-the-haystack";

const LEVELS: [(&str, &str); 4] = [
    ("\x1b[32mINFO\x1b[0m ", "INFO "),
    ("\x1b[36mDEBUG\x1b[0m", "DEBUG"),
    ("\x1b[33mWARN\x1b[0m ", "WARN "),
    ("\x1b[31mERROR\x1b[0m", "ERROR"),
];

/// One session of `bytes` of output: commands printing a few hundred to tens of thousands of
/// log lines, a progress bar now and then, and the needle in the commands `plant` names.
/// Returns the bytes of stream.bin and how many needles were planted.
fn build_session(root: &Path, k: u64, bytes: u64, rng: &mut Rng, plant: &[u64]) -> (u64, usize) {
    let id = format!("{}{:06x}", &store::new_session_id(T0 + k)[..21], k);
    let dir = store::sessions_dir(root).join(&id);
    store::create_private_dir(&dir).unwrap();
    let mut s = StreamWriter::create(&dir.join(store::STREAM)).unwrap();
    let mut records = Vec::new();
    let mut now = T0 + k * 86_400_000;
    let mut buf = Vec::with_capacity(1 << 20);
    let mut planted = 0;
    while s.offset() < bytes {
        let seq = records.len() as u64 + 1;
        now += 1000;
        let line = format!("./run-job --worker {seq}");
        s.write(now, store::OUTPUT, b"dev@host:~/proj$ ").unwrap();
        s.write(now, store::INPUT, line.as_bytes()).unwrap();
        s.write(now, store::OUTPUT, line.as_bytes()).unwrap();
        s.write(now, store::INPUT, b"\r").unwrap();
        s.write(now, store::OUTPUT, b"\r\n").unwrap();
        let offset = s.offset();
        let lines = 200 + rng.below(20_000);
        let needle_at = plant.contains(&seq).then(|| rng.below(lines));
        let mut failed = false;
        for i in 0..lines {
            let (level, _) = LEVELS[(rng.below(100) / 33).min(3) as usize];
            let ms = rng.below(1000);
            if i % 5000 == 4999 {
                // A progress bar redrawn in place.
                for p in (0..=100).step_by(20) {
                    buf.extend_from_slice(
                        format!("\rdownloading [{:<20}] {p}%", "#".repeat(p / 5)).as_bytes(),
                    );
                }
                buf.extend_from_slice(b"\r\n");
            }
            if needle_at == Some(i) {
                buf.extend_from_slice(
                    format!(
                        "thread 'main' panicked at src/worker.rs:{}:5: {NEEDLE}\r\n",
                        40 + seq
                    )
                    .as_bytes(),
                );
                failed = true;
                planted += 1;
            }
            buf.extend_from_slice(
                format!(
                    "2025-06-15T10:{:02}:{:02}.{ms:03}Z {level} worker[{seq}] {} id={:016x} took {ms}ms\r\n",
                    i / 60 % 60,
                    i % 60,
                    support::CRATES[rng.below(10) as usize],
                    rng.next(),
                )
                .as_bytes(),
            );
            if buf.len() >= 1 << 20 {
                for chunk in buf.chunks(4095) {
                    s.write(now, store::OUTPUT, chunk).unwrap();
                }
                buf.clear();
            }
        }
        for chunk in buf.chunks(4095) {
            s.write(now, store::OUTPUT, chunk).unwrap();
        }
        buf.clear();
        records.push(CommandRecord {
            command_line: line,
            started_at: now,
            ended_at: now + 500,
            exit_code: Some(if failed { 101 } else { 0 }),
            stream_offset: offset,
            stream_length: s.offset() - offset,
            cols: COLS,
            ..command_record(&id, seq)
        });
    }
    s.flush().unwrap();
    for r in &records {
        store::append_command(&dir, r).unwrap();
    }
    let meta = SessionMeta {
        cols: COLS,
        rows: ROWS,
        ..finished_meta(&id, T0, now + 1000)
    };
    store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
    (s.offset(), planted)
}

/// Runs `cmd` once: wall ms, stdout, and peak RSS in KiB when `/usr/bin/time` is there.
fn timed(program: &Path, args: &[&str], root: &Path) -> (f64, String, Option<u64>) {
    let time = Path::new("/usr/bin/time");
    let mut cmd = if time.exists() {
        let mut c = Command::new(time);
        c.args(["-f", "%M", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    cmd.args(args)
        .env("OMNISH_DATA_DIR", root)
        .env_remove("OMNISH_SESSION_ID")
        .stdin(Stdio::null());
    let start = Instant::now();
    let out = cmd.output().expect("run");
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rss = stderr.lines().last().and_then(|l| l.trim().parse().ok());
    (ms, String::from_utf8_lossy(&out.stdout).into_owned(), rss)
}

/// `RUNS` runs of `program ARGS` (see [`timed`]): the median wall ms and the highest peak RSS.
/// `check` sees the stdout of each run.
fn runs(program: &Path, args: &[&str], root: &Path, check: impl Fn(&str)) -> (f64, Option<u64>) {
    let mut times = Vec::new();
    let mut peak = None;
    for _ in 0..RUNS {
        let (ms, out, r) = timed(program, args, root);
        check(&out);
        times.push(ms);
        peak = peak.max(r);
    }
    (median(times), peak)
}

fn rss(kib: Option<u64>) -> String {
    kib.map_or("?".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let keep = args.iter().any(|a| a == "--keep");
    let mib: u64 = args
        .iter()
        .position(|a| a == "--mib")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let bin = binary();
    let rg = ["/usr/bin/rg", "/usr/local/bin/rg"]
        .map(PathBuf::from)
        .into_iter()
        .find(|p| p.exists());
    // On disk, not in a tmpfs: the store and its cache are about twice `mib`.
    let tmp = tempfile::Builder::new()
        .prefix("omnish-bench-search-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let root = tmp.path().to_path_buf();

    let start = Instant::now();
    let mut rng = Rng(0x5eed_5eed);
    let mut total = 0;
    let mut planted = 0;
    for k in 0..SESSIONS {
        let plant: &[u64] = if k % 3 == 0 { &[7, 40] } else { &[] };
        let (bytes, n) = build_session(&root, k, mib * (1 << 20) / SESSIONS, &mut rng, plant);
        total += bytes;
        planted += n;
    }
    println!(
        "store: {SESSIONS} sessions, {:.0} MiB of stream.bin, built in {:.1} s",
        total as f64 / (1 << 20) as f64,
        start.elapsed().as_secs_f64()
    );

    let streams: Vec<String> = store::list_sessions(&root)
        .unwrap()
        .iter()
        .map(|d| d.join(store::STREAM).to_string_lossy().into_owned())
        .collect();
    for (label, pattern) in [
        ("literal", NEEDLE),
        ("regex", r"panicked at src/[a-z]+\.rs:\d+:\d+: needle"),
    ] {
        println!("\npattern ({label}): {pattern}");
        let search = ["search", pattern];
        // Warm the page cache for the raw files (rg's read) before anything is timed.
        if let Some(rg) = &rg {
            let mut a = vec!["-a", pattern];
            a.extend(streams.iter().map(String::as_str));
            timed(rg, &a, &root);
        }
        // Each pattern's first search starts without a text cache.
        for d in store::list_sessions(&root).unwrap() {
            let _ = std::fs::remove_dir_all(d.join("cache"));
        }
        let (first_ms, out, first_rss) = timed(&bin, &search, &root);
        let hits = out.matches(&format!(": {NEEDLE}")).count();
        assert_eq!(
            hits, planted,
            "first search found the planted lines:\n{out}"
        );
        let (later, later_rss) = runs(&bin, &search, &root, |out| {
            assert_eq!(out.matches(&format!(": {NEEDLE}")).count(), planted);
        });
        println!(
            "  omnish search, first (renders, writes the cache): {:>9.1} ms   peak RSS {}",
            first_ms,
            rss(first_rss)
        );
        println!(
            "  omnish search, later (median of {RUNS}):            {:>9.1} ms   peak RSS {}",
            later,
            rss(later_rss)
        );
        match &rg {
            Some(rg) => {
                let mut a = vec!["-a", pattern];
                a.extend(streams.iter().map(String::as_str));
                let (rg_ms, rg_rss) = runs(rg, &a, &root, |_| {});
                println!(
                    "  rg -a over the raw stream.bin (median of {RUNS}):   {:>9.1} ms   peak RSS {}",
                    rg_ms,
                    rss(rg_rss)
                );
                println!(
                    "  later search / rg: {:.2}x (target: at most 3x)",
                    later / rg_ms
                );
            }
            None => println!("  rg: not installed (apt-get install ripgrep), no comparison"),
        }
    }
    let cache: u64 = store::list_sessions(&root)
        .unwrap()
        .iter()
        .map(|d| store::disk_usage(&d.join("cache")))
        .sum();
    println!(
        "\ntext cache on disk: {:.0} MiB for {:.0} MiB of stream.bin",
        cache as f64 / (1 << 20) as f64,
        total as f64 / (1 << 20) as f64
    );
    println!("reproduce: cargo bench --bench search");
    if keep {
        let kept = tmp.keep();
        println!("store kept in {}", kept.display());
    }
}
