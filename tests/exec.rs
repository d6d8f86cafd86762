//! `omnish exec`: a program passed through unchanged (pipes, a terminal, signals, exit
//! statuses, 100 MB of output in bounded memory, a full disk) and recorded as one command that
//! `omnish context` reads back; and the `author` of records in every front end and in MCP, with
//! a real wrapped bash whose session exec attaches to.

mod common;
#[path = "common/tmux.rs"]
mod tmux;

use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use tmux::Tmux;

/// `omnish ARGS` on the store under `home`, from outside any recorded terminal.
fn omnish(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(omnish_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("OMNISH_DATA_DIR", home.join("data"))
        .current_dir(home)
        .stdin(Stdio::null());
    cmd
}

fn output(mut cmd: Command) -> std::process::Output {
    cmd.output().unwrap()
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// Every record of every session under `home`.
fn all_records(home: &Path) -> Vec<(std::path::PathBuf, omnish::store::CommandRecord)> {
    let mut out = Vec::new();
    for dir in omnish::store::list_sessions(&home.join("data")).unwrap_or_default() {
        for r in omnish::store::read_commands(&dir).unwrap() {
            out.push((dir.clone(), r));
        }
    }
    out
}

/// Kills process `pid` if it still runs after a minute (a hang guard, not a timing check): the
/// test's blocked read then ends and the test fails.
struct Watchdog(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Watchdog {
    fn new(pid: u32) -> Watchdog {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&done);
        std::thread::spawn(move || {
            let start = std::time::Instant::now();
            while start.elapsed() < std::time::Duration::from_secs(60) {
                if flag.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            let _ = Command::new("pkill")
                .args(["-KILL", "-P", &pid.to_string()])
                .status();
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        });
        Watchdog(done)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Reads `from` until `want` has come (a line at a time).
fn read_until(from: &mut impl BufRead, want: &str) -> String {
    let mut got = String::new();
    while !got.ends_with(want) {
        let n = from.read_line(&mut got).unwrap();
        assert!(n > 0, "ended before {want:?}: {got:?}");
    }
    got
}

#[test]
fn pipes_stay_pipes_and_the_record_keeps_both_streams_in_order() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // Each write waits for the test to have seen the one before: the order is the program's.
    let script = "test -t 1 || echo stdout-is-a-pipe; read a; \
                  test -t 2 || echo stderr-is-a-pipe >&2; read b; echo $a $b; cat; exit 3";
    let mut cmd = omnish(h, &["exec", "--", "sh", "-c", script]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let _guard = Watchdog::new(child.id());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    assert_eq!(read_until(&mut stdout, "\n"), "stdout-is-a-pipe\n");
    stdin.write_all(b"from\n").unwrap();
    assert_eq!(read_until(&mut stderr, "\n"), "stderr-is-a-pipe\n");
    stdin.write_all(b"stdin\nand the rest\n").unwrap();
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "from stdin\nand the rest\n");
    let mut err_rest = String::new();
    stderr.read_to_string(&mut err_rest).unwrap();
    assert_eq!(err_rest, "");
    assert_eq!(child.wait().unwrap().code(), Some(3));
    let records = all_records(h);
    assert_eq!(records.len(), 1, "{records:?}");
    let (dir, r) = &records[0];
    assert_eq!(r.exit_code, Some(3));
    assert_eq!(r.author.as_deref(), Some("exec"));
    assert!(r.command_line.starts_with("sh -c "), "{}", r.command_line);
    assert_eq!(
        text(&output_of(dir, r)),
        "stdout-is-a-pipe\r\nstderr-is-a-pipe\r\nfrom stdin\r\nand the rest\r\n"
    );
    // Read back by `omnish context` (outside any recorded terminal: the newest session).
    let ctx = ok_stdout(output(omnish(h, &["context", "--last"])));
    assert!(ctx.contains("[exec] $ sh -c "), "{ctx}");
    assert!(
        ctx.contains("stdout-is-a-pipe\nstderr-is-a-pipe\nfrom stdin\nand the rest\n[exit 3]"),
        "{ctx}"
    );
}

#[test]
fn exit_statuses_pass_through() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    for code in [0, 1, 42, 255] {
        let out = output(omnish(
            h,
            &["exec", "--", "sh", "-c", &format!("exit {code}")],
        ));
        assert_eq!(out.status.code(), Some(code), "{}", text(&out.stderr));
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    }
    // Killed by a signal: omnish dies of it too, so a shell shows 128+N.
    let out = output(omnish(h, &["exec", "--", "sh", "-c", "kill -TERM $$"]));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGTERM));
    let mut sh = Command::new("sh");
    sh.args([
        "-c",
        &format!(
            "{} exec -- sh -c 'kill -KILL $$'; echo status=$?",
            omnish_bin()
        ),
    ])
    .env("OMNISH_DATA_DIR", h.join("data"));
    let shown = output(sh);
    assert_eq!(text(&shown.stdout), "status=137\n");
    // A program that is not there: 127, as a shell says it, and nothing recorded for it runs.
    let out = output(omnish(h, &["exec", "--", "no-such-program-xyz"]));
    assert_eq!(out.status.code(), Some(127));
    assert!(
        text(&out.stderr).contains("no-such-program-xyz"),
        "{}",
        text(&out.stderr)
    );
    let codes: Vec<Option<i32>> = all_records(h).iter().map(|(_, r)| r.exit_code).collect();
    for want in [Some(0), Some(1), Some(42), Some(255), Some(143), Some(137)] {
        assert!(codes.contains(&want), "{codes:?}");
    }
    // Usage errors: exit 2 before anything runs.
    for args in [
        &["exec", "--session", "current", "--", "true"][..],
        &["exec", "--session", "nope", "--", "true"],
        &["exec", "--label", "all", "--", "true"],
        &["exec", "--label", "", "--", "true"],
    ] {
        let out = output(omnish(h, args));
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("--session") || err.contains("--label"),
            "{err}"
        );
    }
}

#[test]
fn a_terminal_stays_a_terminal_and_ctrl_c_ends_with_130() {
    if !require("tmux") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let data = h.join("data");
    let t = Tmux::start(
        h,
        &[("OMNISH_DATA_DIR", data.display().to_string())],
        "bash --norc --noprofile",
    );
    t.wait("a prompt", |s| s.contains('$') || s.contains('#'));
    t.type_text(&format!(
        "{} exec -- sh -c 'test -t 1 && test -t 2 && echo TTY-\"YES\"; exec sleep 30'",
        omnish_bin()
    ));
    t.keys(&["Enter"]);
    t.wait("the program's output", |s| s.contains("TTY-YES"));
    // The program runs (its record is being written): then Ctrl-C.
    wait_for("the running command in meta.json", || {
        omnish::store::list_sessions(&data)
            .unwrap_or_default()
            .iter()
            .any(|d| omnish::store::read_meta(d).is_ok_and(|m| m.running_command.is_some()))
    });
    t.keys(&["C-c"]);
    t.type_text("echo status=$?");
    t.keys(&["Enter"]);
    t.wait("the status", |s| s.contains("status=130"));
    let records = all_records(h);
    assert_eq!(records.len(), 1);
    let (dir, r) = &records[0];
    assert_eq!(r.exit_code, Some(130));
    assert_eq!(text(&output_of(dir, r)), "TTY-YES\r\n");
}

/// The peak resident memory of `pid`, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[test]
fn a_hundred_megabytes_pass_through_in_bounded_memory() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    const SIZE: u64 = 100_000_000;
    // 100 MB, then it waits for a line on stdin, so omnish's memory is read while it lives.
    let script = format!("head -c {SIZE} /dev/zero | tr '\\0' x; read line");
    let mut cmd = omnish(h, &["exec", "--label", "big", "--", "sh", "-c", &script]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let _guard = Watchdog::new(child.id());
    let mut out = child.stdout.take().unwrap();
    let mut buf = vec![0u8; 1 << 16];
    let mut seen = 0u64;
    while seen < SIZE {
        let n = out.read(&mut buf).unwrap();
        assert!(n > 0, "output ended after {seen} bytes");
        assert!(buf[..n].iter().all(|&b| b == b'x'));
        seen += n as u64;
    }
    let peak = peak_kib(child.id());
    child.stdin.take().unwrap().write_all(b"\n").unwrap();
    let mut rest = Vec::new();
    out.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    assert!(child.wait().unwrap().success());
    assert!(peak < 32 * 1024, "omnish exec peaked at {peak} KiB");
    let records = all_records(h);
    let (dir, r) = &records[0];
    assert_eq!(r.exit_code, Some(0));
    let frames = std::fs::metadata(dir.join("stream.bin")).unwrap().len();
    assert!(frames >= SIZE && r.stream_length >= SIZE, "{frames}");
    let ctx = ok_stdout(output(omnish(
        h,
        &["context", "--last", "--max-line-width", "20"],
    )));
    assert!(ctx.contains("[big] $ sh -c"), "{ctx}");
    assert!(ctx.contains("chars omitted"), "{ctx}");
}

#[test]
fn a_full_disk_warns_once_and_changes_nothing_else() {
    let Some(disk) = Tmpfs::mount("1m") else {
        return;
    };
    let h = disk.path();
    // 4 MB through a 1 MB disk, then a status of its own.
    let script = "head -c 4000000 /dev/zero | tr '\\0' y; echo; echo tail; exit 7";
    let out = output(omnish(h, &["exec", "--", "sh", "-c", script]));
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(out.stdout.len(), 4_000_000 + 1 + 5);
    assert!(out.stdout.ends_with(b"y\ntail\n"));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("omnish: warning: cannot record to "),
        "{err}"
    );
    assert!(err.contains("No space left on device"), "{err}");
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            Ok(o) => {
                skip(&format!("cannot mount a tmpfs: {}", text(&o.stderr).trim()));
                None
            }
            Err(e) => {
                skip(&format!("cannot run mount: {e}"));
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Sends `lines` to `omnish mcp` and returns the responses.
fn mcp(home: &Path, lines: &[Value]) -> Vec<Value> {
    let mut input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    input.insert_str(
        0,
        &format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}})
        ),
    );
    let mut cmd = omnish(home, &["mcp"]);
    cmd.stdin(Stdio::piped());
    let out = run_piped(cmd, &input);
    out.stdout
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect()
}

fn call(id: u64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
}

fn result(responses: &[Value], id: u64) -> &Value {
    let r = responses.iter().find(|r| r["id"] == json!(id)).unwrap();
    &r["result"]
}

#[test]
fn authors_in_every_front_end_and_in_mcp() {
    let mut t = Harness::bash(&[]);
    t.run("echo typed-by-me");
    let home = t.home.path().to_path_buf();
    let id = omnish::store::dir_id(&t.session_dir());
    // An agent's command, from outside the terminal, attached to its session; and one by exec.
    let out = output(omnish(
        &home,
        &[
            "exec",
            "--session",
            &id,
            "--label",
            "bot",
            "--",
            "sh",
            "-c",
            "echo bot-was-here; exit 4",
        ],
    ));
    assert_eq!(out.status.code(), Some(4));
    let out = output(omnish(
        &home,
        &["exec", "--session", &id, "--", "echo", "exec-ran"],
    ));
    assert!(out.status.success());
    t.run("echo typed-again");
    // A command typed in the terminal that runs exec itself: the terminal's record has it.
    t.run(&format!("{} exec -- echo inside-terminal", omnish_bin()));
    let execs: Vec<_> = all_records(&home)
        .into_iter()
        .filter(|(_, r)| r.author.is_some())
        .collect();
    assert_eq!(execs.len(), 2, "{execs:?}");

    let ctx = |args: &[&str]| {
        let mut all = vec!["context", "--recent", "20"];
        all.extend_from_slice(args);
        ok_stdout(output(omnish(&home, &all)))
    };
    let every = ctx(&[]);
    let at = |s: &str| {
        every
            .find(s)
            .unwrap_or_else(|| panic!("{s} missing: {every}"))
    };
    // Merged by time, labelled when not the user's.
    assert!(at("$ echo typed-by-me") < at("[bot] $ sh -c"), "{every}");
    assert!(
        at("[bot] $ sh -c") < at("[exec] $ echo exec-ran"),
        "{every}"
    );
    assert!(
        at("[exec] $ echo exec-ran") < at("$ echo typed-again"),
        "{every}"
    );
    assert!(every.contains("bot-was-here\n[exit 4]"), "{every}");
    assert_eq!(
        every.matches("inside-terminal").count(),
        2,
        "line and output once: {every}"
    );
    let user = ctx(&["--author", "user"]);
    assert!(
        user.contains("typed-by-me") && !user.contains("bot-was-here"),
        "{user}"
    );
    assert!(!user.contains("exec-ran"), "{user}");
    let agents = ctx(&["--author", "agents"]);
    assert!(
        agents.contains("bot-was-here") && agents.contains("exec-ran"),
        "{agents}"
    );
    assert!(!agents.contains("typed-by-me"), "{agents}");
    let bot = ctx(&["--author", "bot"]);
    assert!(
        bot.contains("bot-was-here") && !bot.contains("exec-ran"),
        "{bot}"
    );
    let md = ctx(&["--author", "bot", "--format", "markdown"]);
    assert!(md.contains("[bot] $ sh -c"), "{md}");
    // sessions list: the attached sessions by their authors, with the terminal's id.
    let listed = ok_stdout(output(omnish(&home, &["sessions", "list"])));
    assert!(
        listed.contains("[bot]") && listed.contains("[exec]"),
        "{listed}"
    );
    let listed: Value = serde_json::from_str(&ok_stdout(output(omnish(
        &home,
        &["sessions", "list", "--format", "json"],
    ))))
    .unwrap();
    let bot = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["author"] == "bot")
        .expect("the bot's session");
    assert_eq!(bot["attached_to"], id.as_str(), "{bot}");
    // export: the selection's --author, and who ran it said beside where and how it ended.
    let exported = ok_stdout(output(omnish(&home, &["export", "--author", "agents"])));
    let said = |who: &str, end: &str| {
        exported
            .lines()
            .any(|l| l.contains(&format!("· by `{who}` ·")) && l.contains(end))
    };
    assert!(
        said("bot", "· exit 4 ·") && said("exec", "· exit 0 ·"),
        "{exported}"
    );
    assert!(!exported.contains("typed-by-me"), "{exported}");
    let json: Value = serde_json::from_str(&ctx(&["--format", "json"])).unwrap();
    let authors: Vec<&str> = json["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["author"].as_str().unwrap())
        .collect();
    assert!(
        authors.contains(&"user") && authors.contains(&"bot"),
        "{authors:?}"
    );
    let bad = output(omnish(&home, &["context", "--author", ""]));
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("--author"),
        "{}",
        text(&bad.stderr)
    );

    // search
    let found = output(omnish(
        &home,
        &["search", "bot-was-here", "--author", "user"],
    ));
    assert_eq!(found.status.code(), Some(1), "{}", text(&found.stdout));
    let found = ok_stdout(output(omnish(
        &home,
        &["search", "bot-was-here", "--author", "bot"],
    )));
    assert!(found.contains("[bot] $ sh -c"), "{found}");

    // sessions show
    let shown = ok_stdout(output(omnish(&home, &["sessions", "show", &id])));
    assert!(
        shown.contains("[bot] $ sh -c") && shown.contains("$ echo typed-by-me"),
        "{shown}"
    );
    let shown = ok_stdout(output(omnish(
        &home,
        &["sessions", "show", &id, "--author", "user"],
    )));
    assert!(
        !shown.contains("bot") && shown.contains("typed-again"),
        "{shown}"
    );

    // MCP: recent_commands and search by author; terminal_status says whose the failure was.
    let responses = mcp(
        &home,
        &[
            call(1, "recent_commands", json!({"author": "user"})),
            call(2, "recent_commands", json!({"author": "bot"})),
            call(
                3,
                "search",
                json!({"pattern": "ran|here", "author": "agents"}),
            ),
            call(4, "terminal_status", json!({})),
            call(5, "terminal_status", json!({"author": "user"})),
            call(6, "recent_commands", json!({"author": ""})),
        ],
    );
    let body = |i| {
        result(&responses, i)["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(body(1).contains("typed-by-me") && !body(1).contains("bot-was-here"));
    assert!(body(2).contains("[bot] $ sh -c") && !body(2).contains("typed-by-me"));
    assert!(body(3).contains("bot-was-here") && body(3).contains("exec-ran"));
    assert!(!body(3).contains("typed-by-me"), "{}", body(3));
    let status = &result(&responses, 4)["structuredContent"];
    assert_eq!(status["last_failure"]["author"], "bot", "{status}");
    assert!(body(4).contains("last failure: ") && body(4).contains(" by bot $ sh -c"));
    let status = &result(&responses, 5)["structuredContent"];
    assert!(status["last_failure"].is_null(), "{status}");
    assert_eq!(result(&responses, 6)["isError"], true);
    assert!(body(6).contains("argument `author`"), "{}", body(6));
}

#[test]
fn omnish_own_output_is_one_line_and_ask_style_answers_stay() {
    let mut t = Harness::bash(&[]);
    t.run("echo marker-one-xyz");
    t.run("echo marker-two-xyz");
    // A preview of the context in the terminal, then a pipeline whose output is another
    // program's.
    t.run(&format!("{} context --recent 2", omnish_bin()));
    t.run(&format!("{} context --recent 3 | tr a-z A-Z", omnish_bin()));
    t.run(&format!("{} search marker-one-xyz", omnish_bin()));
    let home = t.home.path().to_path_buf();
    let ctx = ok_stdout(output(omnish(&home, &["context", "--recent", "5"])));
    // The count the preview noted, not its lines: it showed two commands.
    assert!(
        ctx.contains("context --recent 2\n[omnish context showed 2 commands: left out (omnish's output is not context)]"),
        "{ctx}"
    );
    assert!(
        ctx.contains("search marker-one-xyz\n[omnish search showed 1 command: left out"),
        "{ctx}"
    );
    // In the echo's line and its output, and in the search's line; the preview's copy is
    // gone; the pipeline's output (upper case) stays.
    assert_eq!(ctx.matches("marker-one-xyz").count(), 3, "{ctx}");
    assert!(ctx.contains("MARKER-ONE-XYZ"), "{ctx}");
    // search finds the echo, not the copy in the preview's output (nor the search's own).
    let found = ok_stdout(output(omnish(
        &home,
        &["search", "marker-two-xyz", "--format", "json"],
    )));
    let found: Value = serde_json::from_str(&found).unwrap();
    let lines: Vec<&str> = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["command_line"].as_str())
        .collect();
    assert!(
        !lines.iter().any(|l| l.contains("context --recent 2")),
        "{found}"
    );
    assert!(lines.contains(&"echo marker-two-xyz"), "{found}");
    // sessions show summarizes the preview by the fold, not by a line of its copy.
    let show = ok_stdout(output(omnish(
        &home,
        &["sessions", "show", "--format", "json"],
    )));
    let v: Value = serde_json::from_str(&show).unwrap();
    let preview = v["command_list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["command_line"]
                .as_str()
                .unwrap()
                .ends_with("context --recent 2")
        })
        .unwrap_or_else(|| panic!("{show}"));
    assert_eq!(
        preview["summary"],
        "[omnish context showed 2 commands: left out (omnish's output is not context)]"
    );
}
