//! Key press to LLM command start: how long `omnish ask` (what the key binding runs) takes from
//! its start until the user's LLM command is running, on a session of 10,000 commands.
//!
//! Builds a session in a temp dir through the store API (no shell is run): 10,000 commands,
//! every 7th failed, each with 2-6 KB of coloured compiler output, the last failure a few
//! commands back (so `ask` has to look past successful ones). The LLM command is this bench
//! binary itself (`--stand-in FILE`), which writes the wall-clock time it started (ns) to FILE
//! and exits, so the figure is spawn of `omnish ask` → the LLM command's `main`. Fork and exec
//! of the LLM command are included; the shell's key dispatch before `omnish ask` (a function
//! call and one fork/exec, the same as the LLM command's) is not.
//!
//! Run with: `cargo bench --bench ask`. Prints medians and 90th percentiles; asserts no timings.

mod support;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};
use support::{CRATES, Rng, binary, command_record, finished_meta, median};

use omnish::store::{self, CommandRecord, SessionMeta, StreamWriter};

const COMMANDS: u64 = 10_000;
const RUNS: usize = 25;
const WARMUPS: usize = 3;
const T0: u64 = 1_750_000_000_000;
const STAND_IN: &str = "--stand-in";

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

fn output(rng: &mut Rng, failed: bool) -> String {
    let mut out = String::new();
    let target = 2_000 + rng.below(4_000) as usize;
    while out.len() < target {
        let krate = CRATES[rng.below(CRATES.len() as u64) as usize];
        let _ = write!(
            out,
            "\x1b[1m\x1b[92m   Compiling\x1b[0m {krate} v1.{}.{} (/home/dev/src/{krate})\r\n",
            rng.below(40),
            rng.below(20)
        );
    }
    if failed {
        out.push_str(
            "\x1b[1m\x1b[91merror[E0308]\x1b[0m\x1b[1m: mismatched types\x1b[0m\r\n\
             \x1b[1m\x1b[91merror\x1b[0m: could not compile `omnish` (lib) due to 1 previous error\r\n",
        );
    }
    out
}

/// Writes the session into `root`; returns the size of its stream.bin.
fn build(root: &Path, commands: u64) -> u64 {
    let id = store::new_session_id(T0);
    let dir = store::sessions_dir(root).join(&id);
    store::create_private_dir(&dir).expect("session dir");
    let mut stream = StreamWriter::create(&dir.join(store::STREAM)).expect("stream.bin");
    let mut rng = Rng(0x5eed_a5c0);
    let mut now = T0;
    let mut records = Vec::with_capacity(commands as usize);
    for seq in 1..=commands {
        // Every 7th fails, none of the last three.
        let failed = seq % 7 == 0 && seq + 3 <= commands;
        let line = if failed { "cargo build" } else { "cargo test" };
        now += 1_000;
        stream.write(now, store::OUTPUT, b"dev$ ").unwrap();
        stream
            .write(now + 1, store::OUTPUT, line.as_bytes())
            .unwrap();
        stream.write(now + 2, store::OUTPUT, b"\r\n").unwrap();
        let offset = stream.offset();
        let body = output(&mut rng, failed);
        for chunk in body.as_bytes().chunks(4095) {
            now += 1;
            stream.write(now, store::OUTPUT, chunk).unwrap();
        }
        let end = stream.offset();
        records.push(CommandRecord {
            command_line: line.into(),
            cwd: "/home/dev/src/omnish".into(),
            started_at: now,
            ended_at: now + 5,
            exit_code: Some(if failed { 101 } else { 0 }),
            stream_offset: offset,
            stream_length: end - offset,
            ..command_record(&id, seq)
        });
    }
    stream.flush().unwrap();
    for r in &records {
        store::append_command(&dir, r).expect("commands.jsonl");
    }
    let meta = SessionMeta {
        hostname: "build-host".into(),
        cwd: "/home/dev/src/omnish".into(),
        ..finished_meta(&id, T0, now + 100)
    };
    store::write_json_atomic(&dir.join(store::META), &meta).expect("meta.json");
    stream.offset()
}

/// Milliseconds from spawning `omnish SUB ARGS` to the stand-in LLM command's start.
fn once(bin: &Path, root: &Path, stamp: &Path, sub: &str, args: &[&str]) -> f64 {
    let _ = std::fs::remove_file(stamp);
    let me = std::env::current_exe().unwrap();
    let llm = format!("{} {STAND_IN} {}", me.display(), stamp.display());
    let start = now_ns();
    let out = Command::new(bin)
        .arg(sub)
        .args(args)
        .env("OMNISH_DATA_DIR", root)
        .env("OMNISH_CONFIG", "/dev/null")
        .env("OMNISH_ASK_COMMAND", llm)
        .env_remove("OMNISH_SESSION_ID")
        .stdin(Stdio::null())
        .output()
        .expect("run omnish");
    let started: u128 = std::fs::read_to_string(stamp)
        .unwrap_or_else(|_| {
            panic!(
                "the LLM command did not start: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
        .trim()
        .parse()
        .unwrap();
    (started.saturating_sub(start)) as f64 / 1e6
}

fn p90(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[(v.len() * 9 / 10).min(v.len() - 1)]
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if let Some(i) = argv.iter().position(|a| a == STAND_IN) {
        // The stand-in LLM command: note the time first, then drain stdin.
        let t = now_ns();
        std::fs::write(&argv[i + 1], t.to_string()).unwrap();
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        return;
    }
    let bin = binary();
    let tmp = tempfile::Builder::new()
        .prefix("omnish-bench-ask-")
        .tempdir()
        .unwrap();
    let large = tmp.path().join("large");
    let small = tmp.path().join("small");
    let bytes = build(&large, COMMANDS);
    build(&small, 10);
    let stamp = tmp.path().join("started");
    println!(
        "ask: key press (omnish ask spawned) -> LLM command started; session of {COMMANDS} commands, {:.1} MiB of stream.bin",
        bytes as f64 / (1024.0 * 1024.0)
    );
    let cases: &[(&str, &[&str])] = &[
        ("ask", &[]),
        ("fix", &[]),
        ("ask", &["--recent", "10"]),
        ("ask", &["--model", "llama3.2"]),
    ];
    for (sub, args) in cases {
        for (name, root) in [("10,000 commands", &large), ("10 commands", &small)] {
            for _ in 0..WARMUPS {
                once(&bin, root, &stamp, sub, args);
            }
            let v: Vec<f64> = (0..RUNS)
                .map(|_| once(&bin, root, &stamp, sub, args))
                .collect();
            println!(
                "  omnish {sub} {:<18} {name:<16} median {:6.2} ms  p90 {:6.2} ms",
                args.join(" "),
                median(v.clone()),
                p90(v)
            );
        }
    }
    println!("reproduce: cargo bench --bench ask");
}
