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
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use support::{CRATES, Rng, binary, median, rss_by_time, run_once};

use omnish::store::{self, CommandRecord, SessionMeta, SessionState, StreamWriter};

const LARGE_COMMANDS: u64 = 10_000;
const SMALL_COMMANDS: u64 = 10;
/// Commands with an output of several MB (`cat build.log`-like), none among the last 20.
const HUGE_AT: [u64; 5] = [500, 2_500, 5_000, 7_500, 9_980];
const HUGE_BYTES: usize = 8 * 1024 * 1024;
const WARMUPS: usize = 3;
const RUNS: usize = 15;
const COLS: u16 = 120;
const ROWS: u16 = 40;
const T0: u64 = 1_750_000_000_000;

const COMMAND_LINES: [&str; 8] = [
    "cargo build --workspace",
    "cargo test --workspace",
    "pytest -x tests/",
    "make -j8",
    "cargo clippy --all-targets -- -D warnings",
    "npm run build",
    "cargo test -p omnish-core -- --nocapture",
    "python -m pytest tests/integration -q",
];

/// What kind of output a command line produces.
fn kind_of(command_line: &str) -> u8 {
    if command_line.contains("pytest") {
        1
    } else if command_line.contains("test") {
        2
    } else {
        0
    }
}

/// A coloured compiler line, a warning block, or a `\r` progress redraw.
fn compile_chunk(out: &mut String, rng: &mut Rng, n: u64) {
    let krate = CRATES[rng.below(CRATES.len() as u64) as usize];
    let r = rng.next();
    match r % 100 {
        0..=54 => {
            let _ = write!(
                out,
                "\x1b[1m\x1b[92m   Compiling\x1b[0m {krate} v1.{}.{} (/home/dev/src/{krate})\r\n",
                (r >> 8) % 40,
                (r >> 16) % 20
            );
        }
        55..=79 => {
            let line = (r >> 8) % 900 + 1;
            let _ = write!(
                out,
                "\x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m: unused variable: `x{n}`\x1b[0m\r\n\
                 \x1b[1m\x1b[94m  --> \x1b[0msrc/{krate}/lib.rs:{line}:9\r\n\
                 \x1b[1m\x1b[94m   |\x1b[0m\r\n\
                 \x1b[1m\x1b[94m{:<3}|\x1b[0m     let x{n} = compute(&input);\r\n\
                 \x1b[1m\x1b[94m   |\x1b[0m         \x1b[1m\x1b[33m^^^\x1b[0m \
                 \x1b[1m\x1b[33mhelp: if this is intentional, prefix it with an underscore: `_x{n}`\x1b[0m\r\n\
                 \x1b[1m\x1b[94m   |\x1b[0m\r\n",
                line % 1000
            );
        }
        _ => {
            // Cargo's progress bar, redrawn in place, then erased.
            let total = 120 + (r >> 8) % 200;
            let mut done = (r >> 20) % total;
            for _ in 0..6 {
                let width = 40 * done / total;
                let _ = write!(
                    out,
                    "\r\x1b[1m\x1b[96m    Building\x1b[0m [{:=<w$}>{:<s$}] {done}/{total}: {krate}, serde_derive\x1b[K",
                    "",
                    "",
                    w = width as usize,
                    s = 40 - width as usize
                );
                done = (done + 3).min(total);
            }
            out.push_str("\r\x1b[K");
        }
    }
}

/// A test-runner result line (cargo test or pytest style), sometimes a progress redraw.
fn test_chunk(out: &mut String, rng: &mut Rng, n: u64, pytest: bool) {
    let krate = CRATES[rng.below(CRATES.len() as u64) as usize];
    let r = rng.next();
    let ok = r % 40 != 0;
    if pytest {
        if r % 50 == 1 {
            let _ = write!(
                out,
                "\r\x1b[36mcollecting ... \x1b[0m{} items\x1b[K",
                (r >> 8) % 3000
            );
            return;
        }
        let _ = write!(
            out,
            "tests/test_{krate}.py::TestSuite::test_case_{n} {} \x1b[32m[{:>3}%]\x1b[0m\r\n",
            if ok {
                "\x1b[32mPASSED\x1b[0m"
            } else {
                "\x1b[31mFAILED\x1b[0m"
            },
            (r >> 8) % 101
        );
    } else {
        let _ = write!(
            out,
            "test {krate}::tests::case_{n}_handles_{} ... {}\r\n",
            ["empty_input", "unicode", "large_frames", "timeouts"][(r >> 8) as usize % 4],
            if ok {
                "\x1b[32mok\x1b[0m"
            } else {
                "\x1b[31mFAILED\x1b[0m"
            }
        );
    }
}

/// The output of one command, about `target` bytes, ending as the command's status says.
fn command_output(out: &mut String, rng: &mut Rng, kind: u8, target: usize, failed: bool) {
    out.clear();
    let mut n = 0u64;
    while out.len() < target {
        n += 1;
        match kind {
            0 => compile_chunk(out, rng, n),
            1 => test_chunk(out, rng, n, true),
            _ => test_chunk(out, rng, n, false),
        }
    }
    if failed {
        out.push_str(
            "\x1b[1m\x1b[91merror[E0308]\x1b[0m\x1b[1m: mismatched types\x1b[0m\r\n\
             \x1b[1m\x1b[94m  --> \x1b[0msrc/store.rs:212:17\r\n\
             \x1b[1m\x1b[91merror\x1b[0m: could not compile `omnish` (lib) due to 1 previous error\r\n",
        );
    } else {
        let _ = write!(
            out,
            "\x1b[1m\x1b[92m    Finished\x1b[0m `dev` profile [unoptimized + debuginfo] target(s) in {}.{:02}s\r\n",
            rng.below(90),
            rng.below(100)
        );
    }
}

/// pty-like read sizes: most reads fill the 4 KiB line discipline buffer.
const READS: [usize; 7] = [4095, 4095, 1537, 4095, 880, 4095, 2048];

/// Writes a session of `commands` commands into `root/sessions/<id>`; returns its id and the
/// size of stream.bin.
fn build_session(root: &Path, commands: u64, huge: &[u64], seed: u64) -> (String, u64) {
    let id = store::new_session_id(T0);
    let dir = store::sessions_dir(root).join(&id);
    store::create_private_dir(&dir).expect("create session dir");
    let mut stream = StreamWriter::create(&dir.join(store::STREAM)).expect("stream.bin");
    let mut rng = Rng(seed);
    let mut body = String::with_capacity(HUGE_BYTES + 64 * 1024);
    let mut records = Vec::with_capacity(commands as usize);
    let mut now = T0;
    let mut read_no = 0usize;
    for seq in 1..=commands {
        let command_line = COMMAND_LINES[(seq as usize * 7 + 3) % COMMAND_LINES.len()];
        let failed = seq % 7 == 3;
        let target = if huge.contains(&seq) {
            HUGE_BYTES
        } else {
            24_000 + rng.below(12_000) as usize
        };
        command_output(&mut body, &mut rng, kind_of(command_line), target, failed);

        // Prompt, then the keystrokes and their echo, as the recorder stores them.
        now += 1_500;
        let prompt = "\x1b[01;32mdev@build-host\x1b[00m:\x1b[01;34m~/src/omnish\x1b[00m$ ";
        stream.write(now, store::OUTPUT, prompt.as_bytes()).unwrap();
        stream
            .write(now + 400, store::INPUT, command_line.as_bytes())
            .unwrap();
        stream
            .write(now + 401, store::OUTPUT, command_line.as_bytes())
            .unwrap();
        stream.write(now + 700, store::INPUT, b"\r").unwrap();
        stream.write(now + 701, store::OUTPUT, b"\r\n").unwrap();

        let started_at = now + 702;
        let offset = stream.offset();
        let mut rest = body.as_bytes();
        while !rest.is_empty() {
            let take = READS[read_no % READS.len()].min(rest.len());
            read_no += 1;
            now += 1;
            stream.write(now, store::OUTPUT, &rest[..take]).unwrap();
            rest = &rest[take..];
        }
        let end = stream.offset();
        records.push(CommandRecord {
            command_id: format!("{id}:{seq}"),
            session_id: id.clone(),
            seq,
            command_line: command_line.to_string(),
            cwd: "/home/dev/src/omnish".into(),
            started_at,
            ended_at: now + 5,
            exit_code: Some(if failed { 101 } else { 0 }),
            stream_offset: offset,
            stream_length: end - offset,
            cols: COLS,
            command_source: "hook".into(),
            typed: None,
            private: false,
            recording_stopped: false,
        });
        now += 10;
    }
    // The last prompt, after which the user typed `exit`.
    stream
        .write(
            now,
            store::OUTPUT,
            b"\x1b[01;32mdev@build-host\x1b[00m$ exit\r\n",
        )
        .unwrap();
    stream.flush().unwrap();
    let stream_len = stream.offset();
    for r in &records {
        store::append_command(&dir, r).expect("commands.jsonl");
    }
    let meta = SessionMeta {
        id: id.clone(),
        shell: "/bin/bash".into(),
        argv: vec!["bash".into()],
        pid: Some(4242),
        recorder_pid: 4241,
        hostname: "build-host".into(),
        cwd: "/home/dev/src/omnish".into(),
        started_at: T0,
        ended_at: Some(now + 100),
        exit_status: Some(0),
        omnish_version: env!("CARGO_PKG_VERSION").into(),
        state: SessionState::Exited,
        cols: COLS,
        rows: ROWS,
        hooked: true,
        running_command: None,
        recording_error: None,
        recording_stopped_at: None,
    };
    store::write_json_atomic(&dir.join(store::META), &meta).expect("meta.json");
    (id, stream_len)
}

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
    let cases: [(&[&str], bool); 6] = [
        (&["--recent", "10"], true),
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
