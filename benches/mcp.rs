//! How long does `omnish mcp` take to answer `recent_commands` on a 10,000-command session?
//!
//! Builds the same LARGE session as `benches/context.rs` (10,000 commands, ~30 KB of coloured
//! compiler and test output each, five outputs of 8 MiB) through the store API, starts the
//! release binary's `omnish mcp` on it once, as a client does, and times request → response
//! round trips over its stdin/stdout: the first call (which may build the o200k tables, unless
//! the server's start-up warm-up got there first), then 5 warm-ups and 41 timed calls per case,
//! one at a time. Prints medians, p90 and max of the round trips, the server's CPU time per
//! call (from /proc, less sensitive than wall time to other load on the machine) and the load
//! average; it asserts no timings.
//!
//! Run with: `cargo bench --bench mcp`.

mod support;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;
use support::{binary, build_session, load_average, median};

const COMMANDS: u64 = 10_000;
/// Commands with an output of several MB, none among the last 20.
const HUGE_AT: [u64; 5] = [500, 2_500, 5_000, 7_500, 9_980];
const WARMUPS: usize = 5;
const RUNS: usize = 41;

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(bin: &Path, root: &Path) -> Server {
        let mut child = Command::new(bin)
            .arg("mcp")
            .env("OMNISH_DATA_DIR", root)
            .env_remove("OMNISH_SESSION_ID")
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start omnish mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = Server {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        let init = s.send(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}),
        );
        assert_eq!(init.1["result"]["protocolVersion"], "2025-11-25");
        s
    }

    /// One request; its round-trip time in ms and the response.
    fn send(&mut self, method: &str, params: Value) -> (f64, Value) {
        self.next_id += 1;
        let mut line =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
                .to_string();
        line.push('\n');
        let start = Instant::now();
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
        let mut reply = String::new();
        self.stdout.read_line(&mut reply).unwrap();
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let v: Value = serde_json::from_str(&reply).expect("a JSON response");
        assert!(v.get("error").is_none(), "{method} failed: {v}");
        (ms, v)
    }

    fn call(&mut self, tool: &str, args: Value) -> (f64, Value) {
        let (ms, v) = self.send("tools/call", json!({"name": tool, "arguments": args}));
        assert_eq!(v["result"]["isError"], false, "{tool} failed: {v}");
        (ms, v)
    }
}

/// CPU time (user + system) the process `pid` has used so far, in ms.
fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let hz = 100.0; // USER_HZ on Linux
    (ticks(11) + ticks(12)) * 1000.0 / hz
}

fn p90(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[(v.len() * 9) / 10]
}

fn main() {
    let bin = binary();
    let tmp = tempfile::Builder::new()
        .prefix("omnish-bench-mcp-")
        .tempdir()
        .expect("temp dir");
    let root = tmp.path().join("large");
    let start = Instant::now();
    let (id, len) = build_session(&root, COMMANDS, &HUGE_AT, 0x9e37_79b9);
    println!("binary: {}", bin.display());
    println!(
        "session {id}: {COMMANDS} commands, stream.bin {:.1} MiB, generated in {:.1} s",
        len as f64 / (1024.0 * 1024.0),
        start.elapsed().as_secs_f64()
    );

    let mut server = Server::start(&bin, &root);
    let (first, v) = server.call("recent_commands", json!({}));
    let text = v["result"]["content"][0]["text"].as_str().unwrap_or("");
    println!(
        "first recent_commands call: {first:.2} ms ({} bytes of text, {} tokens)",
        text.len(),
        v["result"]["structuredContent"]["tokens"]
    );

    let huge_id = format!("{id}:{}", HUGE_AT[2]);
    let cases: Vec<(&str, &str, Value)> = vec![
        ("recent_commands {}", "recent_commands", json!({})),
        (
            "recent_commands {failed}",
            "recent_commands",
            json!({"failed": true}),
        ),
        (
            "recent_commands {count: 50}",
            "recent_commands",
            json!({"count": 50}),
        ),
        (
            "recent_commands {budget: 1000}",
            "recent_commands",
            json!({"budget": 1000}),
        ),
        ("terminal_status {}", "terminal_status", json!({})),
        (
            "command_output {8 MiB output, lines 1000-1199}",
            "command_output",
            json!({"id": huge_id, "start_line": 1000}),
        ),
    ];
    println!(
        "\nround trip over stdin/stdout, {RUNS} calls after {WARMUPS} warm-ups, one at a time:"
    );
    println!(
        "{:<50} {:>10} {:>10} {:>10} {:>12}",
        "tools/call ...", "median ms", "p90 ms", "max ms", "CPU ms/call"
    );
    let pid = server.child.id();
    let mut recent_median = 0.0;
    let mut recent_cpu = 0.0;
    for (label, tool, args) in cases {
        for _ in 0..WARMUPS {
            server.call(tool, args.clone());
        }
        let cpu_before = cpu_ms(pid);
        let times: Vec<f64> = (0..RUNS)
            .map(|_| server.call(tool, args.clone()).0)
            .collect();
        let cpu = (cpu_ms(pid) - cpu_before) / RUNS as f64;
        let max = times.iter().cloned().fold(0.0, f64::max);
        let m = median(times.clone());
        if label == "recent_commands {}" {
            recent_median = m;
            recent_cpu = cpu;
        }
        println!(
            "{label:<50} {m:>10.2} {:>10.2} {max:>10.2} {cpu:>12.2}",
            p90(times)
        );
    }
    drop(server.stdin);
    let status = server.child.wait().expect("wait for omnish mcp");
    assert!(status.success(), "omnish mcp exited with {status}");
    println!(
        "\nrecent_commands (default: 10 commands, budget 4000) on {COMMANDS} commands: median {recent_median:.2} ms round trip, {recent_cpu:.2} ms of server CPU per call (target: under 20 ms)"
    );
    println!(
        "load average while measuring: {} (2 cores here; wall times grow with load, CPU time much less)",
        load_average()
    );
    println!("reproduce: cargo bench --bench mcp");
}
