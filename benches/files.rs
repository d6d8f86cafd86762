//! `omnish context --files` on a project of 100,000 files: builds the tree (20 directories of
//! 50 directories of 100 files, plus 20,000 ignored files under node_modules/ and target/) and a
//! one-command session, then prints the median wall time of `--files`, `--files --changed` and
//! `--files --budget 2000`, and the command that reproduces them. The target is under 1 s.
//!
//! `cargo bench --bench files` (`-- --keep` keeps the tree and the store).

mod support;

use omnish::store::{self, CommandRecord, StreamWriter};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use support::{binary, command_record, finished_meta, load_average, median};

const RUNS: usize = 5;
const TOP: usize = 20;
const SUB: usize = 50;
const FILES: usize = 100;
const IGNORED: usize = 10_000;

fn build_tree(root: &Path) -> usize {
    let mut n = 0;
    for a in 0..TOP {
        for b in 0..SUB {
            let dir = root.join(format!("pkg{a:02}/mod{b:02}"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..FILES {
                std::fs::File::create(dir.join(format!("file{f:03}.rs"))).unwrap();
                n += 1;
            }
        }
    }
    for ignored in ["node_modules/dep", "target/debug"] {
        let dir = root.join(ignored);
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..IGNORED {
            std::fs::File::create(dir.join(format!("x{f}.js"))).unwrap();
        }
    }
    std::fs::write(root.join(".gitignore"), "*.log\n/tmp/\n").unwrap();
    std::fs::write(root.join("Cargo.toml"), "[package]\n").unwrap();
    n + 2
}

/// A finished session with one command, run in `cwd`.
fn build_session(data: &Path, cwd: &Path) {
    let now = store::now_ms();
    let id = store::new_session_id(now - 60_000);
    let dir = store::sessions_dir(data).join(&id);
    store::create_private_dir(&dir).unwrap();
    let meta = store::SessionMeta {
        pid: None,
        recorder_pid: 1,
        hostname: "bench".into(),
        cwd: cwd.display().to_string(),
        omnish_version: "bench".into(),
        cols: 80,
        rows: 24,
        ..finished_meta(&id, now - 60_000, now - 40_000)
    };
    store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
    let mut w = StreamWriter::create(&dir.join(store::STREAM)).unwrap();
    let offset = w.offset();
    w.write(now - 50_000, store::OUTPUT, b"error: build failed\r\n")
        .unwrap();
    w.flush().unwrap();
    let record = CommandRecord {
        command_line: "cargo build".into(),
        cwd: cwd.display().to_string(),
        started_at: now - 50_000,
        ended_at: now - 49_000,
        exit_code: Some(101),
        stream_offset: offset,
        stream_length: w.offset() - offset,
        cols: 80,
        ..command_record(&id, 1)
    };
    store::append_command(&dir, &record).unwrap();
}

/// User plus system CPU time of the children waited for so far, in ms.
fn children_cpu_ms() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes a rusage into the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    ms(ru.ru_utime) + ms(ru.ru_stime)
}

/// One run: wall ms, CPU ms (user + system) and stdout bytes.
fn run(bin: &Path, data: &Path, cwd: &Path, args: &[&str]) -> (f64, f64, usize) {
    let cpu = children_cpu_ms();
    let start = Instant::now();
    let out = Command::new(bin)
        .arg("context")
        .args(args)
        .current_dir(cwd)
        .env("OMNISH_DATA_DIR", data)
        .env_remove("OMNISH_SESSION_ID")
        .stdin(Stdio::null())
        .output()
        .expect("run omnish");
    let ms = start.elapsed().as_secs_f64() * 1e3;
    assert!(
        out.status.success(),
        "omnish context {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (ms, children_cpu_ms() - cpu, out.stdout.len())
}

fn main() {
    let keep = std::env::args().any(|a| a == "--keep");
    let bin = binary();
    let tmp = tempfile::Builder::new()
        .prefix("omnish-bench-files-")
        .tempdir()
        .unwrap();
    let proj = tmp.path().join("proj");
    let data = tmp.path().join("data");
    let start = Instant::now();
    let files = build_tree(&proj);
    build_session(&data, &proj);
    println!("binary: {}", bin.display());
    println!(
        "tree: {files} files listed ({} ignored under node_modules/ and target/), built in {:.1} s",
        2 * IGNORED,
        start.elapsed().as_secs_f64()
    );
    let cases: [&[&str]; 4] = [
        &["--last", "--no-notes", "--files"],
        &["--last", "--no-notes", "--files", "--changed"],
        &["--last", "--no-notes", "--files", "--budget", "2000"],
        &["--last", "--no-notes", "--files", "--depth", "2"],
    ];
    println!(
        "\nmedian of {RUNS} runs after one warm-up (load average {}; on a busy machine wall time is mostly waiting for a CPU):",
        load_average()
    );
    let mut worst: f64 = 0.0;
    for args in cases {
        run(&bin, &data, &proj, args);
        let (mut walls, mut cpus) = (Vec::new(), Vec::new());
        let mut bytes = 0;
        for _ in 0..RUNS {
            let (ms, cpu, n) = run(&bin, &data, &proj, args);
            walls.push(ms);
            cpus.push(cpu);
            bytes = n;
        }
        let (wall, cpu) = (median(walls), median(cpus));
        worst = worst.max(wall);
        println!(
            "omnish context {:<50} {wall:>8.1} ms wall {cpu:>8.1} ms CPU {bytes:>7} B out",
            args.join(" ")
        );
    }
    println!("\nslowest: {worst:.0} ms wall (target: under 1000 ms for {files} files)");
    if keep {
        let path = tmp.keep();
        println!(
            "kept: cd {}/proj && OMNISH_DATA_DIR={}/data omnish context --files",
            path.display(),
            path.display()
        );
    }
    println!("reproduce: cargo bench --bench files");
}
