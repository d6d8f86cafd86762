//! Does `omnish context` cost follow what it shows, not how much was recorded?
//!
//! Builds two sessions in a temp dir through the store API (no shell is run):
//! - LARGE: 10,000 commands, ~30 KB of coloured compiler/test-runner output each (with `\r`
//!   progress redraws), plus a few multi-MB outputs: several hundred MB of `stream.bin`;
//! - SMALL: 10 commands with the same kind of output.
//!
//! Frames are cut per command as the recorder does (`StreamWriter::offset()` before the first
//! output frame and after the last), with a prompt and the echoed keystrokes between commands.
//!
//! Then it runs the release binary against each session (`OMNISH_DATA_DIR` holding only that
//! session), 3 warm-up runs and 15 timed runs per case, and prints medians, the large/small
//! ratio, and the peak RSS of one `omnish context --recent 10` on the large session. It prints
//! figures; it asserts no timings.
//!
//! Run with: `cargo bench --bench context` (`-- --keep` keeps the generated data dir).

mod support;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use support::{binary, build_session, median, rss_by_time, run_once};

use omnish::store;

const LARGE_COMMANDS: u64 = 10_000;
const SMALL_COMMANDS: u64 = 10;
/// Commands with an output of several MB (`cat build.log`-like), none among the last 20.
const HUGE_AT: [u64; 5] = [500, 2_500, 5_000, 7_500, 9_980];
const WARMUPS: usize = 3;
const RUNS: usize = 15;

/// Largest peak RSS in KiB of the children waited for so far.
fn rss_of_children() -> u64 {
    // SAFETY: getrusage fills the struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    ru.ru_maxrss as u64
}

/// Peak RSS in KiB of one run, by getrusage(RUSAGE_CHILDREN) in a fresh copy of this bench.
///
/// Not measured from this process: std spawns with vfork/posix_spawn, and Linux then carries
/// the spawning process's own high-water RSS (the generator's buffers) into the child's
/// ru_maxrss at exec. A fresh copy of the bench, still small, spawns the run instead.
fn rss_by_probe(bin: &Path, root: &Path, args: &[&str]) -> Option<u64> {
    let out = Command::new(std::env::current_exe().ok()?)
        .arg(RSS_PROBE)
        .arg(bin)
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

const RSS_PROBE: &str = "--rss-probe";

/// `context --rss-probe BIN ROOT ARGS...`: run BIN once and print the child's peak RSS in KiB.
fn rss_probe(rest: &[String]) {
    let [bin, root, args @ ..] = rest else {
        panic!("{RSS_PROBE} BIN ROOT ARGS...");
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_once(Path::new(bin), Path::new(root), &args);
    println!("{}", rss_of_children());
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if let Some(i) = argv.iter().position(|a| a == RSS_PROBE) {
        return rss_probe(&argv[i + 1..]);
    }
    let keep = argv.iter().any(|a| a == "--keep");
    let bin = binary();
    let tmp = tempfile::Builder::new()
        .prefix("omnish-bench-context-")
        .tempdir()
        .expect("temp dir");
    let large_root = tmp.path().join("large");
    let small_root = tmp.path().join("small");

    let start = Instant::now();
    let (large_id, large_len) = build_session(&large_root, LARGE_COMMANDS, &HUGE_AT, 0x9e37_79b9);
    let (small_id, small_len) = build_session(&small_root, SMALL_COMMANDS, &[], 0x7f4a_7c15);
    let gen_secs = start.elapsed().as_secs_f64();
    let jsonl = |root: &Path, id: &str| {
        std::fs::metadata(store::sessions_dir(root).join(id).join(store::COMMANDS))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    println!("binary: {}", bin.display());
    println!(
        "LARGE session {large_id}: {LARGE_COMMANDS} commands, stream.bin {:.1} MiB, commands.jsonl {:.1} MiB",
        mib(large_len),
        mib(jsonl(&large_root, &large_id))
    );
    println!(
        "SMALL session {small_id}: {SMALL_COMMANDS} commands, stream.bin {:.2} MiB",
        mib(small_len)
    );
    println!(
        "generated in {gen_secs:.1} s ({:.0} MiB/s)",
        mib(large_len + small_len) / gen_secs
    );

    let recent = ["--recent", "10"];
    let kib = |k: Option<u64>| {
        k.map_or("n/a".to_string(), |k| {
            format!("{:.1} MiB", k as f64 / 1024.0)
        })
    };
    println!(
        "peak RSS of `omnish context --recent 10`: LARGE {}, SMALL {} (/usr/bin/time -f %M); LARGE {}, SMALL {} (getrusage(RUSAGE_CHILDREN))",
        kib(rss_by_time(&bin, &large_root, &recent)),
        kib(rss_by_time(&bin, &small_root, &recent)),
        kib(rss_by_probe(&bin, &large_root, &recent)),
        kib(rss_by_probe(&bin, &small_root, &recent)),
    );

    // `--failed` selects 10 commands on LARGE but only the 2 failed ones on SMALL, so its ratio
    // compares different work; `--failed --recent 2` selects 2 on each. `--tokenizer chars4`
    // shows how much of `--budget` is the o200k tokenizer's start-up.
    let cases: [(&[&str], bool); 7] = [
        (&["--recent", "10"], true),
        // What redaction (detectors and session learning) adds: compare with the line above.
        (&["--recent", "10", "--no-redact"], true),
        (&["--recent", "10", "--format", "json"], true),
        (&["--failed"], false),
        (&["--failed", "--recent", "2"], true),
        (&["--recent", "10", "--budget", "2000"], true),
        (
            &[
                "--recent",
                "10",
                "--budget",
                "2000",
                "--tokenizer",
                "chars4",
            ],
            true,
        ),
    ];
    println!(
        "\nmedian wall time of {RUNS} runs after {WARMUPS} warm-ups (large and small alternate):"
    );
    println!(
        "{:<48} {:>10} {:>10} {:>7} {:>12} {:>12}",
        "omnish context ...", "LARGE ms", "SMALL ms", "ratio", "LARGE out B", "SMALL out B"
    );
    let mut worst: f64 = 0.0;
    for (args, same_work) in cases {
        for _ in 0..WARMUPS {
            run_once(&bin, &large_root, args);
            run_once(&bin, &small_root, args);
        }
        let (mut large, mut small) = (Vec::new(), Vec::new());
        let (mut large_out, mut small_out) = (0, 0);
        for _ in 0..RUNS {
            let (ms, n) = run_once(&bin, &large_root, args);
            large.push(ms);
            large_out = n;
            let (ms, n) = run_once(&bin, &small_root, args);
            small.push(ms);
            small_out = n;
        }
        let (l, s) = (median(large), median(small));
        if same_work {
            worst = worst.max(l / s);
        }
        println!(
            "{:<48} {l:>10.2} {s:>10.2} {:>7.2} {large_out:>12} {small_out:>12}{}",
            args.join(" "),
            l / s,
            if same_work {
                ""
            } else {
                "  (10 vs 2 selected)"
            }
        );
    }
    println!(
        "\nworst LARGE/SMALL ratio where both select the same commands: {worst:.2} (target: at most 1.5)"
    );
    shared_learning(
        &bin,
        tmp.path(),
        &large_root.join("sessions").join(&large_id),
    );
    if keep {
        let path = tmp.keep();
        println!(
            "kept data in {} (OMNISH_DATA_DIR={}/large or {}/small)",
            path.display(),
            path.display(),
            path.display()
        );
    }
    println!("reproduce: cargo bench --bench context");
}

/// What learning from the other sessions of a store costs (each redactor holds what the 32
/// newest sessions taught): a store of a 10-command session and 31 copies (hard links) of the
/// LARGE session that nobody has asked about; the first `--recent 10` learns from them all and
/// keeps what each taught beside it, later calls read that.
fn shared_learning(bin: &Path, tmp: &Path, large: &Path) {
    let root = tmp.join("shared");
    build_session(&root, SMALL_COMMANDS, &[], 0x7f4a_7c15);
    let sessions = store::sessions_dir(&root);
    for i in 10..41 {
        let dir = sessions.join(format!("20250614T1500{i:02}.000Z-aaaa{i:02}"));
        store::create_private_dir(&dir).expect("session dir");
        for f in [store::COMMANDS, store::META, store::STREAM] {
            std::fs::hard_link(large.join(f), dir.join(f)).expect("hard link");
        }
    }
    let recent = ["--recent", "10"];
    let (first, _) = run_once(bin, &root, &recent);
    let later = median((0..RUNS).map(|_| run_once(bin, &root, &recent).0).collect());
    println!(
        "\nshared learning, a store of 32 sessions (31 of {LARGE_COMMANDS} commands nobody asked about): first `--recent 10` {first:.1} ms (learns from them all), later calls {later:.2} ms median"
    );
}
