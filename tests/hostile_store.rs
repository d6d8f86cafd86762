//! Hostile or damaged store files never stop a reader: a FIFO, a link to `/dev/zero`, a NUL tail
//! of 200 MB, a 300 MB `meta.json`, a session directory that is a link out of the store, a
//! 10 MB command line. A real session is recorded through a wrapped bash; a copy of it under an
//! older id is then damaged by the test, and every reader (`context`, `search`, `sessions list`,
//! `sessions prune`, MCP) is run on the store, each under an address-space limit and a CPU-time
//! limit (so unbounded memory or quadratic time fails, whatever the machine's load) and a hang
//! guard. Each must finish, serve the healthy session, and name the damaged file at most once on
//! stderr (exactly once where it had to read it).

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Address space a reader may take (KiB): far above what reading a store needs, far below what
/// a 300 MB file read whole, or a link to /dev/zero, takes.
const MEMORY_KIB: u64 = 256 * 1024;
/// CPU seconds a reader may take: reading the 200 MB NUL tail once takes a fraction of that,
/// reading it in quadratic time (as blocks were once prepended) far more.
const CPU_SECONDS: u64 = 60;

/// The id of the damaged copy: older than the recorded session, so that the current session
/// (the default of `context`) is the healthy one.
const HOSTILE_ID: &str = "20000101T000000.000Z-0bad00";

struct Store {
    /// This test's HOME, its store in `data`.
    home: tempfile::TempDir,
    healthy: PathBuf,
    /// A pristine copy of the healthy session, copied to [`HOSTILE_ID`] before each run.
    template: PathBuf,
}

impl Store {
    fn data(&self) -> PathBuf {
        self.home.path().join("data")
    }

    fn hostile(&self) -> PathBuf {
        self.data().join("sessions").join(HOSTILE_ID)
    }

    fn healthy_id(&self) -> String {
        omnish::store::dir_id(&self.healthy)
    }

    /// Puts a fresh copy of the session at [`HOSTILE_ID`].
    fn reset(&self) {
        let dst = self.hostile();
        if std::fs::symlink_metadata(&dst).is_ok_and(|m| m.is_symlink()) {
            std::fs::remove_file(&dst).unwrap();
        } else if dst.exists() {
            std::fs::remove_dir_all(&dst).unwrap();
        }
        copy_dir(&self.template, &dst);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A finished bash session with a marker, an output large enough to have its digest cached,
/// and a failure, recorded once for all the tests here (recording is most of the time one
/// takes): the data directory it is in.
fn recording() -> &'static Path {
    static DATA: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DATA.get_or_init(|| {
        let mut h = Harness::bash(&[]);
        h.run("echo healthy-marker");
        h.run_huge("seq 1 300000");
        h.run("false");
        h.type_line("exit 0");
        assert_eq!(h.wait_exit(), 0);
        // Caches the digest of the large output.
        ok_stdout(h.context(&["--recent", "10"]));
        let big = h.records()[1].seq;
        assert!(
            omnish::store::cache::path(&h.session_dir(), big).exists(),
            "the digest is cached"
        );
        let kept = tempfile::tempdir().unwrap();
        copy_dir(&h.data(), kept.path());
        kept
    })
    .path()
}

/// The recorded session in a store of this test's own, and a pristine copy of it beside the
/// store.
fn recorded() -> Store {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    copy_dir(recording(), &data);
    let healthy = omnish::store::list_sessions(&data).unwrap().remove(0);
    let template = home.path().join("template");
    copy_dir(&healthy, &template);
    Store {
        home,
        healthy,
        template,
    }
}

/// `omnish ARGS` on the store, from outside the recorded shell, within [`MEMORY_KIB`] of address
/// space and [`CPU_SECONDS`] of CPU time, `stdin` on its input.
fn limited(s: &Store, args: &[&str], stdin: &str) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "ulimit -v {MEMORY_KIB} && ulimit -t {CPU_SECONDS} && exec \"$0\" \"$@\""
        ))
        .arg(omnish_bin())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", s.home.path())
        .env("OMNISH_DATA_DIR", s.data())
        // One malloc arena: the limit then measures memory used, not arenas reserved per thread.
        .env("MALLOC_ARENA_MAX", "1")
        .current_dir(s.home.path());
    run_piped(cmd, stdin)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// How many lines of stderr name `path`.
fn mentions(out: &Output, path: &Path) -> usize {
    let p = path.to_string_lossy();
    stderr(out).lines().filter(|l| l.contains(&*p)).count()
}

fn mcp_lines() -> String {
    let request = |id: u64, method: &str, params: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    let call = |id: u64, tool: &str, args: Value| {
        request(id, "tools/call", json!({"name": tool, "arguments": args}))
    };
    [
        request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        call(2, "recent_commands", json!({"session": "all", "count": 20})),
        call(3, "list_sessions", json!({})),
        call(4, "search", json!({"pattern": "healthy-marker"})),
        call(5, "terminal_status", json!({})),
        call(6, "recent_commands", json!({"session": "all", "count": 20})),
    ]
    .join("\n")
        + "\n"
}

/// Runs every reader on the store with a freshly damaged copy (`plant` damages the session
/// directory it is given and returns the file it damaged). Each must finish and serve the
/// healthy session; the damaged file is named at most once on stderr, and exactly once by the
/// readers in `must_say` (those that read it).
fn every_reader_serves_the_rest(s: &Store, plant: &dyn Fn(&Path) -> PathBuf, must_say: &[&str]) {
    let healthy = s.healthy_id();
    let readers: Vec<(&str, Vec<&str>, String)> = vec![
        (
            "context",
            vec![
                "context",
                "--session",
                "all",
                "--recent",
                "20",
                "--format",
                "json",
            ],
            String::new(),
        ),
        (
            "context --budget",
            vec!["context", "--session", "all", "--budget", "2000"],
            String::new(),
        ),
        ("search", vec!["search", "healthy-marker"], String::new()),
        (
            "sessions list",
            vec!["sessions", "list", "--format", "json"],
            String::new(),
        ),
        (
            "sessions prune",
            vec!["sessions", "prune", "--dry-run", "--keep", "100"],
            String::new(),
        ),
        ("mcp", vec!["mcp"], mcp_lines()),
    ];
    for (name, args, stdin) in readers {
        s.reset();
        let planted = plant(&s.hostile());
        let out = limited(s, &args, &stdin);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {:?}; stderr: {}; stdout: {}",
            out.status,
            stderr(&out),
            &stdout[..stdout.len().min(2000)]
        );
        assert!(
            name == "sessions prune" || stdout.contains(&healthy),
            "{name} serves the healthy session: {}",
            &stdout[..stdout.len().min(3000)]
        );
        let said = mentions(&out, &planted);
        assert!(
            said <= 1,
            "{name} names {} {said} times: {}",
            planted.display(),
            stderr(&out)
        );
        if must_say.contains(&name) {
            assert_eq!(
                said,
                1,
                "{name} names {}: {}",
                planted.display(),
                stderr(&out)
            );
        }
        match name {
            "context" => {
                let doc: Value = serde_json::from_str(&stdout).unwrap();
                let ids: Vec<&str> = doc["commands"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["session_id"].as_str().unwrap())
                    .collect();
                assert!(
                    ids.iter().filter(|i| **i == healthy).count() >= 3,
                    "{ids:?}"
                );
            }
            "mcp" => {
                for line in stdout.lines() {
                    let r: Value = serde_json::from_str(line).unwrap();
                    assert!(r.get("error").is_none(), "{r}");
                    assert_ne!(r["result"]["isError"], json!(true), "{r}");
                }
                assert_eq!(stdout.lines().count(), 6, "{stdout}");
            }
            _ => {}
        }
    }
}

fn fifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
}

fn link_to_dev_zero(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

/// The digest cached for the session's large output.
fn digest_of(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "digest"))
        .expect("a cached digest")
}

#[test]
fn a_fifo_as_meta_json_blocks_no_reader() {
    let s = recorded();
    every_reader_serves_the_rest(
        &s,
        &|dir| {
            let p = dir.join(omnish::store::META);
            fifo(&p);
            p
        },
        &[
            "context",
            "context --budget",
            "search",
            "sessions list",
            "mcp",
        ],
    );
}

#[test]
fn a_fifo_as_commands_jsonl_blocks_no_reader() {
    let s = recorded();
    every_reader_serves_the_rest(
        &s,
        &|dir| {
            let p = dir.join(omnish::store::COMMANDS);
            fifo(&p);
            p
        },
        &[
            "context",
            "context --budget",
            "search",
            "sessions list",
            "mcp",
        ],
    );
}

#[test]
fn a_fifo_as_stream_bin_blocks_no_reader() {
    let s = recorded();
    every_reader_serves_the_rest(
        &s,
        &|dir| {
            let p = dir.join(omnish::store::STREAM);
            fifo(&p);
            p
        },
        &["context", "context --budget", "mcp"],
    );
    // The damaged session's commands are still listed, their output said to be unreadable.
    s.reset();
    fifo(&s.hostile().join(omnish::store::STREAM));
    let out = limited(&s, &["context", "--session", HOSTILE_ID], "");
    let text = ok_stdout(out);
    assert!(
        text.contains(
            "$ echo healthy-marker\n[output unreadable: cannot read stream.bin: a FIFO, not a regular file]"
        ),
        "{text}"
    );
}

#[test]
fn a_fifo_as_a_cached_digest_blocks_no_reader() {
    let s = recorded();
    every_reader_serves_the_rest(
        &s,
        &|dir| {
            let p = digest_of(dir);
            fifo(&p);
            p
        },
        &["context", "context --budget", "mcp"],
    );
}

#[test]
fn a_digest_linked_to_dev_zero_is_not_read() {
    let s = recorded();
    every_reader_serves_the_rest(
        &s,
        &|dir| {
            let p = digest_of(dir);
            link_to_dev_zero(&p);
            p
        },
        &["context", "context --budget", "mcp"],
    );
    // The link is replaced by a digest of its own (never written through).
    s.reset();
    let digest = digest_of(&s.hostile());
    link_to_dev_zero(&digest);
    let text = ok_stdout(limited(&s, &["context", "--session", HOSTILE_ID], ""));
    assert!(text.contains("$ seq 1 300000\n1\n2\n"), "{text}");
    assert!(std::fs::symlink_metadata(&digest).unwrap().is_file());
}

#[test]
fn a_meta_json_linked_to_dev_zero_is_not_read() {
    let s = recorded();
    every_reader_serves_the_rest(
        &s,
        &|dir| {
            let p = dir.join(omnish::store::META);
            link_to_dev_zero(&p);
            p
        },
        &[
            "context",
            "context --budget",
            "search",
            "sessions list",
            "mcp",
        ],
    );
}

#[test]
fn a_300_megabyte_meta_json_is_not_read() {
    let s = recorded();
    every_reader_serves_the_rest(
        &s,
        &|dir| {
            let p = dir.join(omnish::store::META);
            // Sparse: 300 MB to read, nothing on the disk.
            let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            f.set_len(300_000_000).unwrap();
            p
        },
        &[
            "context",
            "context --budget",
            "search",
            "sessions list",
            "mcp",
        ],
    );
}

#[test]
fn a_200_megabyte_nul_tail_in_commands_jsonl_costs_one_read() {
    let s = recorded();
    every_reader_serves_the_rest(
        &s,
        &|dir| {
            // What a crash leaves on some filesystems: the size grew, the data never came.
            let p = dir.join(omnish::store::COMMANDS);
            let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            let len = f.metadata().unwrap().len();
            f.set_len(len + 200_000_000).unwrap();
            p
        },
        &[
            "context",
            "context --budget",
            "search",
            "sessions list",
            "mcp",
        ],
    );
    // The records before the tail are all served.
    s.reset();
    let p = s.hostile().join(omnish::store::COMMANDS);
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(f.metadata().unwrap().len() + 200_000_000)
        .unwrap();
    let out = limited(
        &s,
        &["context", "--session", HOSTILE_ID, "--commands-only"],
        "",
    );
    assert_eq!(mentions(&out, &p), 1, "{}", stderr(&out));
    let text = ok_stdout(out);
    for line in [
        "$ echo healthy-marker",
        "$ seq 1 300000",
        "$ false",
        "$ exit 0",
    ] {
        assert!(text.contains(line), "{text}");
    }
}

#[test]
fn a_session_directory_linked_out_of_the_store_is_not_read() {
    let s = recorded();
    // A real session, outside the store.
    let outside = s.home.path().join("outside");
    copy_dir(&s.template, &outside);
    every_reader_serves_the_rest(
        &s,
        &|dir| {
            std::fs::remove_dir_all(dir).unwrap();
            std::os::unix::fs::symlink(&outside, dir).unwrap();
            dir.to_path_buf()
        },
        &[
            "context",
            "context --budget",
            "search",
            "sessions list",
            "sessions prune",
            "mcp",
        ],
    );
    // Not listed, not pruned, not removed through the link.
    s.reset();
    std::fs::remove_dir_all(s.hostile()).unwrap();
    std::os::unix::fs::symlink(&outside, s.hostile()).unwrap();
    let list = ok_stdout(limited(&s, &["sessions", "list", "--format", "json"], ""));
    assert!(!list.contains(HOSTILE_ID), "{list}");
    let out = limited(&s, &["sessions", "prune", "--keep", "0"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(outside.join(omnish::store::COMMANDS).exists());
    assert!(std::fs::symlink_metadata(s.hostile()).is_ok_and(|m| m.is_symlink()));
}

#[test]
fn a_ten_megabyte_command_line_is_shown_cut_and_costs_what_a_short_one_does() {
    let s = recorded();
    s.reset();
    // A hostile record: its command line is 10 MB, with a word to find in the middle.
    let dir = s.hostile();
    let mut rec = omnish::store::read_commands(&dir).unwrap()[0].clone();
    rec.seq = 99;
    rec.stream_length = 0;
    // Failed, so that `ask` asks about it.
    rec.exit_code = Some(1);
    rec.command_line = format!(
        "echo {} needle-in-the-middle {}",
        "a".repeat(5_000_000),
        "z".repeat(5_000_000)
    );
    rec.started_at = u64::MAX / 2;
    rec.ended_at = rec.started_at + 1;
    omnish::store::append_command(&dir, &rec).unwrap();
    let total = rec.command_line.chars().count();
    let session = ["--session", HOSTILE_ID];
    for format in ["text", "markdown", "json"] {
        for extra in [&[][..], &["--budget", "2000"], &["--model", "llama3.2"]] {
            let mut args = vec!["context", "--last", "--format", format];
            args.extend_from_slice(&session);
            args.extend_from_slice(extra);
            let text = ok_stdout(limited(&s, &args, ""));
            assert!(
                text.len() < 12_000,
                "{format} {extra:?}: {} bytes",
                text.len()
            );
            assert!(
                text.contains("echo aaaa") && text.contains("zzzz"),
                "{text}"
            );
            let omitted = text
                .split("…[")
                .nth(1)
                .and_then(|r| r.split(" chars omitted]…").next())
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or_else(|| panic!("a marker: {text}"));
            assert!(omitted > total - 4200 && omitted < total, "{omitted}");
            if format == "json" {
                let doc: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(
                    doc["commands"][0]["command_line_omitted_chars"],
                    json!(omitted)
                );
            }
        }
    }
    // The whole line is matched: the word in its middle is found, by --grep and by search.
    let mut args = vec![
        "context",
        "--grep",
        "needle-in-the-middle",
        "--commands-only",
    ];
    args.extend_from_slice(&session);
    let text = ok_stdout(limited(&s, &args, ""));
    assert!(text.contains(" chars omitted]…"), "{text}");
    let out = limited(
        &s,
        &["search", "needle-in-the-middle", "--format", "json"],
        "",
    );
    let text = ok_stdout(out);
    let doc: Value = serde_json::from_str(&text).unwrap();
    let hit = &doc["hits"][0];
    assert_eq!(hit["command_matched"], json!(true), "{text}");
    assert!(hit["command_line"].as_str().unwrap().len() < 5000);
    // The prompt of `ask`, `sessions show` and MCP are bounded too.
    let prompt = ok_stdout(limited(
        &s,
        &[
            "ask",
            "--print-prompt",
            "--model",
            "llama3.2",
            "--session",
            HOSTILE_ID,
        ],
        "",
    ));
    assert!(
        prompt.len() < 20_000 && prompt.contains(" chars omitted]…"),
        "{prompt}"
    );
    let show = ok_stdout(limited(&s, &["sessions", "show", HOSTILE_ID], ""));
    assert!(show.len() < 20_000, "{} bytes", show.len());
    let out = limited(&s, &["mcp"], &mcp_lines());
    let text = ok_stdout(out);
    assert!(text.len() < 100_000, "{} bytes", text.len());
}
