//! Issue 22, items 5 and 11, end to end through real wrapped bash and zsh:
//!
//! - A directory named with OSC 0 (title), `ESC [2J` (clear screen), OSC 52 (clipboard write), a
//!   C1 CSI and a bidi override, a command line typed with such bytes (Ctrl-V ESC), output
//!   holding a bidi override, a file with such a name, a git branch and a variable with such
//!   bytes, a note, a tampered digest cache and a tampered search text cache: every front end
//!   (`context` in text, markdown and json, streamed or not, with `--env` and `--files`;
//!   `sessions list|show`, `status`, `search`, `note list`, the MCP tools, the `ask` and `fix`
//!   prompts) prints no byte that controls a terminal, shows them visibly (`^[`, `<U+202E>`),
//!   and its JSON parses back to the exact original.
//! - Private commands are never folded together, and the command that ended the shell (`exit`,
//!   a private ` exit`; Ctrl-D leaves none) is never the last failed command.

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The hostile directory's name: OSC 0, `ESC [2J`, OSC 52, a C1 CSI, a bidi override.
const DIR: &str = "hostile\x1b]0;TITLE\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\u{9b}31m\u{202e}x";
/// The same, as `printf` makes it in the shell.
const DIR_PRINTF: &str =
    r"hostile\033]0;TITLE\007\033[2J\033]52;c;cHduZWQ=\007\302\23331m\342\200\256x";
/// How every text front end shows it.
const DIR_SHOWN: &str = "hostile^[]0;TITLE^G^[[2J^[]52;c;cHduZWQ=^G<U+009B>31m<U+202E>x";

/// A command line typed with raw control characters (Ctrl-V quotes the next key), and how it
/// is recorded and shown.
const CMD_TYPED: &str = "echo 'cmd\x16\x1b]0;CMDTITLE\x16\x07 c1\u{9b}31m bidi\u{202e}z'";
const CMD: &str = "echo 'cmd\x1b]0;CMDTITLE\x07 c1\u{9b}31m bidi\u{202e}z'";
const CMD_SHOWN: &str = "echo 'cmd^[]0;CMDTITLE^G c1<U+009B>31m bidi<U+202E>z'";

/// Output the renderer keeps: a bidi override.
const OUT_SHOWN: &str = "out<U+202E>put";

const FILE_SHOWN: &str = "file^[[2J<U+202E>.rs";
const BRANCH_SHOWN: &str = "br<U+009B>x<U+202E>y";
const EDITOR: &str = "vi\x1b]52;c;ZWRpdG9y\x07";
const EDITOR_SHOWN: &str = "vi^[]52;c;ZWRpdG9y^G";
const NOTE: &str = "pin\x1b]52;c;bm90ZQ==\x07ned\u{202e}note";
const NOTE_SHOWN: &str = "pin^[]52;c;bm90ZQ==^Gned<U+202E>note";

/// The chars of `s` that a terminal obeys or that reorder what it shows: C0 controls but
/// newline and tab, DEL, C1 controls, bidi overrides and isolates.
fn raw_controls(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| {
            (c < ' ' && c != '\n' && c != '\t')
                || ('\x7f'..='\u{9f}').contains(&c)
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
        .collect()
}

/// `out` holds no raw control character, and every one of `shown`.
fn assert_shown(what: &str, out: &str, shown: &[&str]) {
    let raw = raw_controls(out);
    assert!(
        raw.is_empty(),
        "{what}: raw control characters {raw:?} in:\n{out}"
    );
    for s in shown {
        assert!(out.contains(s), "{what}: no {s:?} in:\n{out}");
    }
}

/// Every string anywhere in `v`.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// `out` is JSON without a raw control character, and some string in it holds each of
/// `originals` exactly.
fn assert_json(what: &str, out: &str, originals: &[&str]) -> Value {
    assert_shown(what, out, &[]);
    let v: Value =
        serde_json::from_str(out).unwrap_or_else(|e| panic!("{what}: not JSON ({e}):\n{out}"));
    let mut all = Vec::new();
    strings(&v, &mut all);
    for o in originals {
        assert!(
            all.iter().any(|s| s.contains(o)),
            "{what}: no string holds {o:?}:\n{out}"
        );
    }
    v
}

/// `omnish ARGS` on `h`'s store from a second terminal, in `cwd`, with `env` besides.
fn omnish(h: &Harness, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(omnish_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("LANG", "C.UTF-8")
        .env("OMNISH_DATA_DIR", h.data())
        .current_dir(cwd)
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The stdout of `omnish ARGS`, which must succeed.
fn ok(h: &Harness, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> String {
    ok_stdout(omnish(h, args, cwd, env))
}

fn session_id(h: &Harness) -> String {
    h.session_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// A shell that made the hostile directory, went into it, and ran a command line and an
/// output holding such bytes.
fn hostile_session(mut h: Harness) -> (Harness, PathBuf) {
    h.run(&format!("mkdir \"$(printf '{DIR_PRINTF}')\""));
    h.run("cd hostile*");
    h.run(r#"git init -q . && git checkout -q -b "$(printf 'br\302\233x\342\200\256y')""#);
    h.run(r#"touch "$(printf 'file\033[2J\342\200\256.rs')""#);
    h.run(r"printf 'out\342\200\256put\n'");
    let rec = h.run(CMD_TYPED);
    assert_eq!(
        rec.command_line, CMD,
        "the command line is recorded as typed"
    );
    let dir = h.home.path().join(DIR);
    assert!(dir.is_dir());
    assert_eq!(rec.cwd, dir.to_str().unwrap());
    (h, dir)
}

/// Every front end over the hostile session.
fn check_every_front_end(h: &Harness, dir: &Path) {
    let home = h.home.path();
    let all = ["--session", "all", "--recent", "20"];
    let shown = [DIR_SHOWN, CMD_SHOWN, OUT_SHOWN];
    let with = |extra: &[&str]| -> Vec<String> {
        all.iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    let run = |args: Vec<String>, cwd: &Path, env: &[(&str, &str)]| -> String {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(h, &args, cwd, env)
    };

    // `context`: from digests and streamed (`--max-lines 0`), in each format.
    for lines in [None, Some("0")] {
        for format in ["text", "markdown"] {
            let mut args = vec!["context".to_string()];
            args.extend(with(&["--format", format]));
            if let Some(n) = lines {
                args.extend(["--max-lines".to_string(), n.to_string()]);
            }
            let what = format!("context {args:?}");
            assert_shown(&what, &run(args, home, &[]), &shown);
        }
        let mut args = vec!["context".to_string()];
        args.extend(with(&["--format", "json"]));
        if let Some(n) = lines {
            args.extend(["--max-lines".to_string(), n.to_string()]);
        }
        let out = run(args, home, &[]);
        let v = assert_json("context json", &out, &[DIR, CMD, "out\u{202e}put"]);
        assert!(
            v["commands"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["cwd"] == dir.to_str().unwrap() && c["command_line"] == CMD),
            "{out}"
        );
    }

    // `--env` and `--files` where the terminal is: the hostile directory.
    let env = [("EDITOR", EDITOR)];
    let sections = [DIR_SHOWN, FILE_SHOWN, EDITOR_SHOWN, BRANCH_SHOWN];
    for format in ["text", "markdown"] {
        let out = ok(
            h,
            &[
                "context",
                "--env",
                "--files",
                "--changed",
                "--last",
                "--format",
                format,
            ],
            dir,
            &env,
        );
        assert_shown(
            &format!("context --env --files ({format})"),
            &out,
            &sections,
        );
    }
    let out = ok(
        h,
        &["context", "--env", "--files", "--last", "--format", "json"],
        dir,
        &env,
    );
    let v = assert_json("context --env json", &out, &[DIR, EDITOR, "file\x1b[2J"]);
    assert_eq!(v["environment"]["cwd"], dir.to_str().unwrap());

    // `ask` and `fix` prompts hold the same context.
    let out = ok(
        h,
        &[
            "ask",
            "--print-prompt",
            "--session",
            "all",
            "--recent",
            "20",
        ],
        home,
        &[],
    );
    assert_shown("ask --print-prompt", &out, &shown);

    // `sessions list` and `show`.
    let out = ok(h, &["sessions", "list"], home, &[]);
    assert_shown("sessions list", &out, &[]);
    let json_list = ok(h, &["sessions", "list", "--format", "json"], home, &[]);
    assert_json("sessions list json", &json_list, &[]);
    let out = ok(h, &["sessions", "show"], home, &[]);
    assert_shown("sessions show", &out, &[DIR_SHOWN, CMD_SHOWN]);
    let out = ok(h, &["sessions", "show", "--format", "json"], home, &[]);
    assert_json("sessions show json", &out, &[DIR, CMD]);

    // `status` inside the recorded terminal (its session id) in the hostile directory.
    let id = session_id(h);
    let env = [("OMNISH_SESSION_ID", id.as_str())];
    let out = ok(h, &["status"], dir, &env);
    assert_shown("status", &out, &[DIR_SHOWN]);
    let out = ok(h, &["status", "--format", "json"], dir, &env);
    assert_json("status json", &out, &[DIR]);

    // `search`: output and command lines, text and json.
    let out = ok(h, &["search", "-F", "out"], home, &[]);
    assert_shown("search", &out, &[DIR_SHOWN, OUT_SHOWN]);
    let out = ok(h, &["search", "--commands", "CMDTITLE"], home, &[]);
    assert_shown("search --commands", &out, &[CMD_SHOWN]);
    let out = ok(h, &["search", "\\x1b\\]0;CMD"], home, &[]);
    assert_shown("search for an escape", &out, &[CMD_SHOWN]);
    let out = ok(h, &["search", "-F", "out", "--format", "json"], home, &[]);
    let v = assert_json("search json", &out, &[DIR, "out\u{202e}put"]);
    let line = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["lines"].as_array().unwrap())
        .find(|l| l["text"] == "out\u{202e}put")
        .unwrap_or_else(|| panic!("no output line: {out}"));
    assert_eq!(line["ranges"], json!([[0, 3]]));

    // `note list` and the note in `context`.
    ok(
        h,
        &["note", "add", NOTE, "--source", "a\x1b[2Jb"],
        home,
        &[],
    );
    let out = ok(h, &["note", "list"], home, &[]);
    assert_shown("note list", &out, &[NOTE_SHOWN, "a^[[2Jb"]);
    let out = ok(h, &["note", "list", "--json"], home, &[]);
    assert_json("note list --json", &out, &[NOTE]);
    let out = ok(h, &["context", "--last"], home, &[]);
    assert_shown("context with a note", &out, &[NOTE_SHOWN]);

    // The MCP tools' text.
    let seq = h
        .records()
        .iter()
        .find(|r| r.command_line.starts_with("printf 'out"))
        .unwrap()
        .seq;
    let responses = mcp(
        h,
        dir,
        &[
            ("recent_commands", json!({"count": 20})),
            ("command_output", json!({"id": format!("{id}:{seq}")})),
            ("list_sessions", json!({})),
            ("terminal_status", json!({})),
            ("search", json!({"pattern": "out"})),
        ],
    );
    let expect: [&[&str]; 5] = [
        &[DIR_SHOWN, CMD_SHOWN, OUT_SHOWN],
        &[OUT_SHOWN],
        &[DIR_SHOWN],
        &[DIR_SHOWN, CMD_SHOWN],
        &[DIR_SHOWN, OUT_SHOWN],
    ];
    for ((name, text), shown) in responses.iter().zip(expect) {
        assert_shown(&format!("MCP {name}"), text, shown);
    }
}

/// Calls each tool on `omnish mcp` in `cwd`; their text results.
fn mcp(h: &Harness, cwd: &Path, calls: &[(&str, Value)]) -> Vec<(String, String)> {
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    ];
    for (i, (name, args)) in calls.iter().enumerate() {
        lines.push(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                   "params": {"name": name, "arguments": args}})
            .to_string(),
        );
    }
    let mut cmd = Command::new(omnish_bin());
    cmd.arg("mcp")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data())
        .current_dir(cwd);
    let out = run_piped(cmd, &(lines.join("\n") + "\n"));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let responses: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    calls
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            let r = responses
                .iter()
                .find(|r| r["id"] == json!(i + 1))
                .unwrap_or_else(|| panic!("no response to {name}: {stdout}"));
            assert_eq!(r["result"]["isError"], false, "{name}: {r}");
            let text = r["result"]["content"][0]["text"].as_str().unwrap();
            (name.to_string(), text.to_string())
        })
        .collect()
}

#[test]
fn a_hostile_directory_and_command_line_show_visibly_in_every_front_end_bash() {
    if !require("git") {
        return;
    }
    let (h, dir) = hostile_session(Harness::bash(&[]));
    check_every_front_end(&h, &dir);
}

#[test]
fn a_hostile_directory_and_command_line_show_visibly_in_every_front_end_zsh() {
    if !require("zsh") || !require("git") {
        return;
    }
    let (h, dir) = hostile_session(Harness::zsh(&[]));
    check_every_front_end(&h, &dir);
}

/// A line that was never recorded, written into a cache by the test.
const TAMPERED: &str = "\x1b]52;c;dGFtcGVyZWQ=\x07\x1b[2Jtampered\u{9b}31m\u{202e}";
const TAMPERED_SHOWN: &str = "^[]52;c;dGFtcGVyZWQ=^G^[[2Jtampered<U+009B>31m<U+202E>";

#[test]
fn a_tampered_digest_cache_shows_visibly_and_cannot_close_a_markdown_fence() {
    let mut h = Harness::bash(&[]);
    // Over 1 MiB of output: its digest is cached by the first read. A line of six backticks
    // (made by printf, so the command line holds none).
    let big = h.run_huge(
        r"yes PAYLOAD-LINE-FOR-THE-DIGEST | head -n 60000; printf '\140\140\140\140\140\140\nlast\n'",
    );
    h.run("true");
    let home = h.home.path();
    ok(&h, &["context", "--recent", "5"], home, &[]);
    let cache = h.session_dir().join(format!("cache/{}.digest", big.seq));
    assert!(cache.exists(), "no digest cached at {}", cache.display());

    // The cache as it is (key, digest), its digest a MessagePack array: lines, head, tail,
    // errors, errors_full, kind, hash, backticks, ...
    let bytes = std::fs::read(&cache).unwrap();
    let (key, mut digest): (Value, Value) = rmp_serde::from_slice(&bytes).unwrap();
    assert_eq!(digest[1][0][0], "PAYLOAD-LINE-FOR-THE-DIGEST", "{digest:?}");
    assert_eq!(digest[7], 6, "the longest backtick run");
    digest[1][0][0] = json!(TAMPERED);
    let tail = digest[2].as_array_mut().unwrap();
    let last = tail.len() - 1;
    tail[last][0] = json!(TAMPERED);
    // It says no line holds a backtick.
    digest[7] = json!(0);
    std::fs::write(&cache, rmp_serde::to_vec(&(key, digest)).unwrap()).unwrap();

    for format in ["text", "markdown"] {
        let out = ok(
            &h,
            &["context", "--recent", "5", "--format", format],
            home,
            &[],
        );
        assert_shown(&format!("context ({format})"), &out, &[TAMPERED_SHOWN]);
    }
    let out = ok(
        &h,
        &["context", "--recent", "5", "--format", "json"],
        home,
        &[],
    );
    assert_json("context json", &out, &[TAMPERED]);
    let out = ok(&h, &["sessions", "show"], home, &[]);
    assert_shown("sessions show", &out, &[TAMPERED_SHOWN]);
    let responses = mcp(&h, home, &[("recent_commands", json!({"count": 5}))]);
    assert_shown("MCP recent_commands", &responses[0].1, &[TAMPERED_SHOWN]);

    // Streamed, the output comes from stream.bin, inside a fence made from the digest's
    // backtick count: the line of six backticks must not close it.
    let out = ok(
        &h,
        &[
            "context",
            "--recent",
            "5",
            "--format",
            "markdown",
            "--max-lines",
            "0",
        ],
        home,
        &[],
    );
    assert_shown("streamed markdown", &out, &["PAYLOAD-LINE-FOR-THE-DIGEST"]);
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start() == "``````")
        .unwrap_or_else(|| panic!("no backtick line:\n{}", &out[out.len() - 500..]));
    assert_eq!(
        lines[at], "    ``````",
        "the backtick line closes the fence"
    );
    assert_eq!(lines[at + 1], "last");
    let fence = lines[at + 2];
    assert!(
        fence.len() >= 3 && fence.bytes().all(|b| b == b'`'),
        "{fence}"
    );
}

#[test]
fn a_tampered_search_text_cache_shows_visibly() {
    let mut h = Harness::bash(&[]);
    h.run("seq 1 3 | sed 's/^/PAYLOAD-LINE-FOR-THE-TEXT-CACHE-WITH-ROOM-FOR-THE-HOSTILE-BYTES /'");
    h.run("true");
    let home = h.home.path();
    let out = ok(&h, &["search", "-F", "PAYLOAD"], home, &[]);
    assert!(
        out.contains("PAYLOAD-LINE-FOR-THE-TEXT-CACHE-WITH-ROOM-FOR-THE-HOSTILE-BYTES 2"),
        "{out}"
    );
    let cache = std::fs::read_dir(h.session_dir().join("cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("text-") && name.ends_with(".txt")
        })
        .expect("a text cache");
    // The second line, replaced in place by bytes of the same length (the index stays valid).
    let text = std::fs::read(&cache).unwrap();
    let line = b"PAYLOAD-LINE-FOR-THE-TEXT-CACHE-WITH-ROOM-FOR-THE-HOSTILE-BYTES 2";
    let at = text
        .windows(line.len())
        .position(|w| w == line)
        .expect("the line in the cache");
    let mut hostile = format!("PAYLOAD{TAMPERED}");
    assert!(hostile.len() <= line.len(), "{}", hostile.len());
    while hostile.len() < line.len() {
        hostile.push('X');
    }
    let mut tampered = text.clone();
    tampered[at..at + line.len()].copy_from_slice(hostile.as_bytes());
    std::fs::write(&cache, tampered).unwrap();

    let out = ok(&h, &["search", "PAYLOAD\\x1b"], home, &[]);
    assert_shown(
        "search",
        &out,
        &[&format!("2:PAYLOAD{TAMPERED_SHOWN}X"), "1-PAYLOAD-LINE"],
    );
    let out = ok(
        &h,
        &["search", "PAYLOAD\\x1b", "--format", "json"],
        home,
        &[],
    );
    let v = assert_json("search json", &out, &[&hostile]);
    let hit = &v["hits"][0]["lines"];
    let matched = hit
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["match"] == true)
        .unwrap();
    assert_eq!(matched["line"], 2);
    assert_eq!(matched["text"], hostile.as_str());
    assert_eq!(matched["ranges"], json!([[0, 8]]));
}

/// A recorded shell with private commands (bash `ignoreboth`, zsh `HIST_IGNORE_SPACE`).
fn private_shell(zsh: bool) -> Harness {
    if zsh {
        Harness::zsh(&[(".zshrc", "PROMPT='READY> '\nsetopt HIST_IGNORE_SPACE\n")])
    } else {
        Harness::bash(&[(".bashrc", "PS1='READY> '\nHISTCONTROL=ignoreboth\n")])
    }
}

fn private_commands_are_never_folded_together(zsh: bool) {
    let mut h = private_shell(zsh);
    for line in [
        " true",
        " echo one",
        " ls /",
        " false",
        " ls /nonexistent",
        " false",
    ] {
        let rec = h.run(line);
        assert!(rec.private, "{line:?} is private: {rec:?}");
    }
    let home = h.home.path();
    let out = ok(&h, &["context", "--recent", "10"], home, &[]);
    assert_eq!(out.matches("[private command]").count(), 6, "{out}");
    assert!(!out.contains("[ran "), "private commands folded:\n{out}");
    assert!(
        !out.contains("[failed "),
        "private commands made a loop:\n{out}"
    );
    let out = ok(
        &h,
        &["context", "--recent", "10", "--format", "json"],
        home,
        &[],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let commands = v["commands"].as_array().unwrap();
    assert_eq!(commands.len(), 6, "{out}");
    assert!(
        commands
            .iter()
            .all(|c| c["repeat"] == 1 && c["loop"].is_null())
    );
    // Nor does an agent see a retry loop.
    let responses = mcp(&h, home, &[("terminal_status", json!({}))]);
    assert!(
        responses[0].1.contains("retry loop: none"),
        "{}",
        responses[0].1
    );
}

#[test]
fn private_commands_are_never_folded_together_bash() {
    private_commands_are_never_folded_together(false);
}

#[test]
fn private_commands_are_never_folded_together_zsh() {
    if require("zsh") {
        private_commands_are_never_folded_together(true);
    }
}

/// How the shell is left after a failure.
#[derive(Clone, Copy, Debug)]
enum Leave {
    /// `exit`, which carries the failure's status.
    Exit,
    /// ` exit`, kept out of history: a private record.
    PrivateExit,
    /// Ctrl-D at the prompt.
    CtrlD,
}

/// Fails `ls` three times (a retry loop) and leaves the shell; then nothing takes the end of
/// the shell for the last failed command.
fn exit_is_never_the_last_failed_command(zsh: bool, leave: Leave) {
    let mut h = private_shell(zsh);
    h.run("echo before");
    for _ in 0..3 {
        let rec = h.run("ls /nonexistent-omnish-dir");
        assert_eq!(rec.exit_code, Some(2));
    }
    let id = session_id(&h);
    match leave {
        Leave::Exit => h.type_line("exit"),
        Leave::PrivateExit => h.type_line(" exit"),
        Leave::CtrlD => h.send(b"\x04"),
    }
    let status = h.wait_exit();
    assert_eq!(status, 2, "the shell ends with the failure's status");
    let records = h.records();
    let last = records.last().unwrap();
    match leave {
        Leave::CtrlD => assert!(last.command_line.starts_with("ls "), "{records:?}"),
        Leave::Exit => {
            assert_eq!(last.command_line, "exit");
            assert_eq!(
                last.exit_code,
                Some(2),
                "`exit` carries the failure's status"
            );
        }
        Leave::PrivateExit => {
            assert!(last.private && last.exit_code == Some(2), "{last:?}");
        }
    }
    let home = h.home.path();
    let what = format!("{leave:?} ({})", if zsh { "zsh" } else { "bash" });

    // `context --failed` and the prompts of `ask` and `fix`: the last failure is `ls`.
    let out = ok(&h, &["context", "--failed", "--last"], home, &[]);
    assert!(
        out.contains("$ ls /nonexistent-omnish-dir"),
        "{what}: {out}"
    );
    let out = ok(&h, &["context", "--failed", "--recent", "10"], home, &[]);
    assert!(
        !out.contains("exit\n") && !out.contains("[private command]"),
        "{what}: {out}"
    );
    let out = ok(&h, &["ask", "--print-prompt"], home, &[]);
    assert!(
        out.contains("$ ls /nonexistent-omnish-dir"),
        "{what}: {out}"
    );
    assert!(
        !out.contains("$ exit") && !out.contains("[private command]"),
        "{what}: {out}"
    );
    let prompt = home.join("fix-prompt.txt");
    let fix_cmd = format!("sh -c 'cat > {}; echo ls /tmp'", prompt.display());
    let out = ok(&h, &["fix", "--command", &fix_cmd], home, &[]);
    assert_eq!(out.trim(), "ls /tmp", "{what}");
    let sent = std::fs::read_to_string(&prompt).unwrap();
    assert!(
        sent.contains("$ ls /nonexistent-omnish-dir"),
        "{what}: {sent}"
    );
    assert!(!sent.contains("$ exit"), "{what}: {sent}");

    // The MCP server's status: the last command is `ls`, the loop before the end is still
    // the session's last, and the session line says how the shell ended.
    let responses = mcp(&h, home, &[("terminal_status", json!({}))]);
    let text = &responses[0].1;
    assert!(
        text.contains("$ ls /nonexistent-omnish-dir  [exit 2]"),
        "{what}: {text}"
    );
    assert!(
        text.contains("retry loop: `ls /nonexistent-omnish-dir` failed 3 times"),
        "{what}: {text}"
    );
    match leave {
        Leave::Exit => assert!(
            text.contains("ended by `exit`, the shell's exit status 2"),
            "{text}"
        ),
        Leave::PrivateExit => assert!(text.contains("ended by `[private command]`"), "{text}"),
        Leave::CtrlD => assert!(text.contains(" (ended)"), "{text}"),
    }

    // `omnish status` for that session and `sessions list`: three failures.
    let env = [("OMNISH_SESSION_ID", id.as_str())];
    let out = ok(&h, &["status"], home, &env);
    assert!(
        out.contains("commands  ") && out.contains(" (3 failed)"),
        "{what}: {out}"
    );
    assert!(
        out.contains("loop      `ls /nonexistent-omnish-dir` failed 3 times"),
        "{what}: {out}"
    );
    let out = ok(&h, &["sessions", "list", "--format", "json"], home, &[]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["sessions"][0]["failed"], 3, "{what}: {out}");

    // Shown, `exit` says that its status is the shell's.
    if let Leave::Exit = leave {
        let out = ok(&h, &["context", "--last"], home, &[]);
        assert!(out.contains("$ exit\n"), "{what}: {out}");
        assert!(
            out.contains("\n[exit 2: the shell ended with this status]\n"),
            "{what}: {out}"
        );
    }
}

#[test]
fn exit_is_never_the_last_failed_command_bash() {
    exit_is_never_the_last_failed_command(false, Leave::Exit);
}

#[test]
fn a_private_exit_is_never_the_last_failed_command_bash() {
    exit_is_never_the_last_failed_command(false, Leave::PrivateExit);
}

#[test]
fn exit_is_never_the_last_failed_command_zsh() {
    if require("zsh") {
        exit_is_never_the_last_failed_command(true, Leave::Exit);
    }
}

#[test]
fn ctrl_d_leaves_the_last_failed_command_as_it_was_zsh() {
    if require("zsh") {
        exit_is_never_the_last_failed_command(true, Leave::CtrlD);
    }
}
