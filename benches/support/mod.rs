//! Shared by the benches: deterministic generators for realistic terminal output, and running
//! the release binary with its wall time and peak RSS.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use omnish::store::{self, StreamWriter};

mod records;
pub use records::{command_record, finished_meta};
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

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`), as `"0.12 0.30 0.25"`: what else ran
/// bounds what a wall-clock figure means on a machine of 2 cores.
pub fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
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

// A realistic session, written through the store API as the recorder writes it (no shell is
// run): coloured compiler and test-runner output with `\r` progress redraws, a prompt and the
// echoed keystrokes between commands, frames cut per command.

/// Bytes of each output listed in `build_session`'s `huge`.
pub const HUGE_BYTES: usize = 8 * 1024 * 1024;
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
    let ok = !r.is_multiple_of(40);
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
pub fn build_session(root: &Path, commands: u64, huge: &[u64], seed: u64) -> (String, u64) {
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
        records.push(store::CommandRecord {
            command_line: command_line.to_string(),
            cwd: "/home/dev/src/omnish".into(),
            started_at,
            ended_at: now + 5,
            exit_code: Some(if failed { 101 } else { 0 }),
            stream_offset: offset,
            stream_length: end - offset,
            cols: COLS,
            ..command_record(&id, seq)
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
    let meta = store::SessionMeta {
        hostname: "build-host".into(),
        cwd: "/home/dev/src/omnish".into(),
        cols: COLS,
        rows: ROWS,
        ..finished_meta(&id, T0, now + 100)
    };
    store::write_json_atomic(&dir.join(store::META), &meta).expect("meta.json");
    (id, stream_len)
}
