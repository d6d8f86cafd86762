//! What `omnish export` and `omnish diff` cost on big recordings: time and peak RSS.
//!
//! - export: the LARGE session of `benches/context.rs` (10,000 commands of coloured compiler
//!   and test output with progress redraws, five of 8 MiB, several hundred MiB of stream.bin),
//!   written through the store API; each format of the whole session, once with a cold cache
//!   (the first run renders every output once for its digest and for redaction learning) and
//!   once warm, output to a file.
//! - long lines: a session of one command of ten 10 MB lines (100 MB), each format.
//! - diff: a session of two commands of ~100 MB each (12.5 M lines with a time, a pid and a
//!   counter; a few hundred lines changed, inserted or removed), `omnish diff` and
//!   `omnish diff --normalize`.
//!
//! Peak RSS and CPU seconds (user + system, all threads) by `/usr/bin/time`: CPU over wall is
//! the cores an export used, which the machine's load bounds (printed at the start). It prints
//! figures; it asserts nothing.
//!
//! Run with: `cargo bench --bench export`. Smaller or narrower runs (for profiling):
//! `OMNISH_BENCH_COMMANDS=1000` (commands in the session; the huge outputs keep their places
//! in proportion), `OMNISH_BENCH_FORMATS=markdown,html` (the formats measured),
//! `OMNISH_BENCH_LARGE=0` (no LARGE session), `OMNISH_BENCH_LONG=0` (no long lines),
//! `OMNISH_BENCH_DIFF=0` (no diff), and `-- --keep` keeps the data (the path is printed).

mod support;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use support::{binary, build_session, command_record, finished_meta, load_average};

use omnish::store::{self, StreamWriter};

const COMMANDS: u64 = 10_000;
const HUGE_AT: [u64; 5] = [500, 2_500, 5_000, 7_500, 9_980];

/// `OMNISH_BENCH_<name>`, when set.
fn setting(name: &str) -> Option<String> {
    std::env::var(format!("OMNISH_BENCH_{name}")).ok()
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// What one run cost.
struct Cost {
    secs: f64,
    /// Peak RSS, KiB.
    rss: Option<u64>,
    /// User and system CPU seconds.
    cpu: Option<f64>,
    code: i32,
}

/// Runs `omnish ARGS` on `root` with stdout to `out`: what it cost.
fn measure(bin: &Path, root: &Path, args: &[&str], out: &Path) -> Cost {
    let time = Path::new("/usr/bin/time");
    let start = Instant::now();
    let mut cmd = if time.exists() {
        let mut c = Command::new(time);
        c.args(["-f", "%M %U %S", "--"]).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    let o = cmd
        .args(args)
        .env("OMNISH_DATA_DIR", root)
        .env_remove("OMNISH_SESSION_ID")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(Stdio::piped())
        .output()
        .expect("run omnish");
    let secs = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let last: Vec<&str> = stderr
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let num = |i: usize| last.get(i).and_then(|v| v.parse::<f64>().ok());
    Cost {
        secs,
        rss: last.first().and_then(|v| v.parse().ok()),
        cpu: num(1).zip(num(2)).map(|(u, s)| u + s),
        code: o.status.code().unwrap_or(-1),
    }
}

/// Two commands of ~`bytes` each: the same lines but for a few, each with volatile tokens.
fn diff_session(root: &Path, bytes: usize) -> (String, u64) {
    let t0 = 1_760_000_000_000u64;
    let id = store::new_session_id(t0);
    let dir = store::sessions_dir(root).join(&id);
    store::create_private_dir(&dir).unwrap();
    let mut stream = StreamWriter::create(&dir.join(store::STREAM)).unwrap();
    let mut records = Vec::new();
    let mut now = t0;
    for seq in 1..=2u64 {
        let started = now;
        let offset = stream.offset();
        let mut buf = String::with_capacity(64 * 1024);
        let mut written = 0usize;
        let mut line = 0u64;
        while written < bytes {
            line += 1;
            // The second run: a line changed every 100,000, one inserted every 250,000, one
            // removed every 400,000.
            if seq == 2 && line.is_multiple_of(400_000) {
                continue;
            }
            let text = if seq == 2 && line.is_multiple_of(100_000) {
                "CHANGED".to_string()
            } else {
                format!("ok {line}")
            };
            use std::fmt::Write as _;
            let _ = write!(
                buf,
                "12:{:02}:{:02}.{:03} [{}] {text}\r\n",
                (line / 60) % 60,
                line % 60,
                line % 1000,
                4000 + seq
            );
            if seq == 2 && line.is_multiple_of(250_000) {
                buf.push_str("inserted line\r\n");
            }
            if buf.len() >= 60 * 1024 {
                now += 1;
                stream.write(now, store::OUTPUT, buf.as_bytes()).unwrap();
                written += buf.len();
                buf.clear();
            }
        }
        if !buf.is_empty() {
            stream.write(now, store::OUTPUT, buf.as_bytes()).unwrap();
        }
        let end = stream.offset();
        records.push(store::CommandRecord {
            command_line: "./long-job".into(),
            started_at: started,
            ended_at: now + 5,
            stream_offset: offset,
            stream_length: end - offset,
            ..command_record(&id, seq)
        });
        now += 1000;
    }
    stream.flush().unwrap();
    for r in &records {
        store::append_command(&dir, r).unwrap();
    }
    let meta = finished_meta(&id, t0, now);
    store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
    (id, stream.offset())
}

/// One command of `lines` lines of `line_bytes` each (words with a counter, no newline inside).
fn long_line_session(root: &Path, lines: usize, line_bytes: usize) -> (String, u64) {
    let t0 = 1_760_000_000_000u64;
    let id = store::new_session_id(t0);
    let dir = store::sessions_dir(root).join(&id);
    store::create_private_dir(&dir).unwrap();
    let mut stream = StreamWriter::create(&dir.join(store::STREAM)).unwrap();
    let offset = stream.offset();
    let mut now = t0;
    let mut word = 0u64;
    for _ in 0..lines {
        let mut written = 0usize;
        let mut buf = String::with_capacity(64 * 1024);
        while written < line_bytes {
            use std::fmt::Write as _;
            word += 1;
            let _ = write!(buf, "item-{word} ");
            if buf.len() >= 60 * 1024 {
                now += 1;
                stream.write(now, store::OUTPUT, buf.as_bytes()).unwrap();
                written += buf.len();
                buf.clear();
            }
        }
        buf.push_str("\r\n");
        stream.write(now, store::OUTPUT, buf.as_bytes()).unwrap();
    }
    let end = stream.offset();
    stream.flush().unwrap();
    let record = store::CommandRecord {
        command_line: "./print-long-lines".into(),
        started_at: t0,
        ended_at: now + 5,
        stream_offset: offset,
        stream_length: end - offset,
        ..command_record(&id, 1)
    };
    store::append_command(&dir, &record).unwrap();
    let meta = finished_meta(&id, t0, now + 5);
    store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
    (id, end)
}

/// Exports the session under `root` in each of `formats` once; prints time and peak RSS.
fn export_each(bin: &Path, root: &Path, formats: &str, out: &Path, passes: &[&str]) {
    for (i, format) in formats.split(',').enumerate() {
        for &pass in passes {
            if i > 0 && pass == "cold" {
                continue;
            }
            let args = ["export", "--session", "all", "--format", format];
            let c = measure(bin, root, &args, out);
            assert_eq!(c.code, 0, "export {format} failed");
            let size = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
            println!(
                "{:<44} {:>9.2} {:>9} {:>11} {:>8.1} MiB",
                format!("--format {format} ({pass} cache)"),
                c.secs,
                c.cpu.map_or("n/a".into(), |s| format!("{s:.2}")),
                c.rss
                    .map_or("n/a".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0)),
                mib(size)
            );
        }
    }
}

fn main() {
    let keep = std::env::args().any(|a| a == "--keep");
    let bin = binary();
    let tmp = tempfile::Builder::new()
        .prefix("omnish-bench-export-")
        .tempdir()
        .expect("temp dir");
    let out = tmp.path().join("out");
    let formats = setting("FORMATS").unwrap_or("markdown,html,asciicast,asciicast-v2,json".into());
    println!("binary: {}", bin.display());
    // What else runs bounds the cores an export can use: CPU over wall says nothing without it.
    println!("load average: {}", load_average());
    if setting("LARGE").as_deref() != Some("0") {
        let root = tmp.path().join("large");
        let start = Instant::now();
        let commands: u64 = setting("COMMANDS").map_or(COMMANDS, |n| n.parse().expect("a number"));
        let huge_at = HUGE_AT.map(|at| at * commands / COMMANDS);
        let (id, len) = build_session(&root, commands, &huge_at, 0x9e37_79b9);
        println!(
            "LARGE session {id}: {commands} commands, stream.bin {:.1} MiB (generated in {:.1} s)",
            mib(len),
            start.elapsed().as_secs_f64()
        );
        println!(
            "\n{:<44} {:>9} {:>9} {:>11} {:>11}",
            "omnish export --session all ...", "seconds", "CPU s", "peak RSS", "output"
        );
        export_each(&bin, &root, &formats, &out, &["cold", "warm"]);
        let c = measure(
            &bin,
            &root,
            &[
                "export",
                "--session",
                "all",
                "--format",
                "markdown",
                "--no-redact",
            ],
            &out,
        );
        println!(
            "{:<44} {:>9.2} {:>9} {:>11}",
            "--format markdown --no-redact",
            c.secs,
            c.cpu.map_or("n/a".into(), |s| format!("{s:.2}")),
            c.rss
                .map_or("n/a".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
        );
    }
    if setting("LONG").as_deref() != Some("0") {
        let lroot = tmp.path().join("long");
        let (lid, llen) = long_line_session(&lroot, 10, 10_000_000);
        println!(
            "\nLONG session {lid}: one command of ten 10 MB lines, stream.bin {:.1} MiB",
            mib(llen)
        );
        export_each(&bin, &lroot, &formats, &out, &["first"]);
    }

    if setting("DIFF").as_deref() == Some("0") {
        if keep {
            println!("kept data in {}", tmp.keep().display());
        }
        return;
    }
    let droot = tmp.path().join("diff");
    let (did, dlen) = diff_session(&droot, 100_000_000);
    println!(
        "\nDIFF session {did}: two outputs, stream.bin {:.1} MiB",
        mib(dlen)
    );
    for args in [
        &["diff", "--session", &did][..],
        &["diff", "--session", &did][..],
        &["diff", "--session", &did, "--normalize"][..],
    ] {
        let c = measure(&bin, &droot, args, &out);
        let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
        println!(
            "omnish {:<40} {:>7.2} s, peak RSS {}, exit {}, diff {:.1} MiB",
            args.join(" ").replace(&did, "ID"),
            c.secs,
            c.rss
                .map_or("n/a".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0)),
            c.code,
            mib(size)
        );
    }
    let _ = std::io::stdout().flush();
    if keep {
        println!("kept data in {}", tmp.keep().display());
    }
    println!("reproduce: cargo bench --bench export");
}
