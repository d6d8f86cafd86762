//! The session's marker token and long command lines under hostile use (issue 22, items 3 and
//! 8 on the recorder's side), through real bash and zsh in a real pseudo-terminal: the token is
//! in no child's environment, no prompt string and nothing omnish stores or shows; markers a
//! program prints forge nothing; command lines of any length are exact up to 1 Mi chars, cut
//! and marked past it, and their markers never become output.

mod common;

use common::*;
use omnish::store::CommandRecord;
use serde_json::json;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn zsh_or_skip() -> bool {
    require("zsh")
}

/// `omnish ARGS` on `h`'s store, from a second terminal.
fn omnish(h: &Harness, args: &[&str]) -> Output {
    Command::new(omnish_bin())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The token, as the shell has it: written to a file by the shell, the one way out of it.
fn session_token(h: &mut Harness, zsh: bool) -> String {
    h.run(if zsh {
        "print -rn -- $__omnish_token > ~/.token"
    } else {
        "printf '%s' \"$__omnish_token\" > ~/.token"
    });
    let t = std::fs::read_to_string(h.home.path().join(".token")).unwrap();
    assert_eq!(t.len(), 32, "{t:?}");
    assert!(t.bytes().all(|b| b.is_ascii_hexdigit()), "{t:?}");
    t
}

/// Every byte omnish keeps for the session's store, caches included.
fn store_bytes(dir: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for entry in walk(dir) {
        match std::fs::read(&entry) {
            Ok(bytes) => all.extend(bytes),
            // A temporary file the writer renamed away meanwhile (the recorder runs).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("{}: {e}", entry.display()),
        }
    }
    all
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files; // removed meanwhile (a cache being rebuilt)
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}

/// What every front end shows of the session: `context` in each format (unredacted),
/// `search`, `sessions show` and the MCP tools.
fn everything_shown(h: &Harness, token: &str) -> String {
    let mut all = String::new();
    for format in ["text", "markdown", "json"] {
        let out = omnish(
            h,
            &[
                "context",
                "--recent",
                "100",
                "--max-lines",
                "0",
                "--max-line-width",
                "0",
                "--no-redact",
                "--format",
                format,
            ],
        );
        all.push_str(&ok_stdout(out));
    }
    for args in [
        &["search", "-F", token][..],
        &["search", "-F", "omnish"],
        &["search", "-F", "REDACTED:omnish-token"],
        &["sessions", "show"],
        &["sessions", "show", "--format", "json"],
    ] {
        let out = omnish(h, args);
        all.push_str(&String::from_utf8_lossy(&out.stdout));
        all.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    let request = |id: u64, method: &str, params: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    let call = |id: u64, tool: &str, args: serde_json::Value| {
        request(id, "tools/call", json!({"name": tool, "arguments": args}))
    };
    let lines = [
        request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        ),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        call(
            2,
            "recent_commands",
            json!({"count": 100, "budget": 100000}),
        ),
        call(3, "search", json!({"pattern": "omnish", "budget": 100000})),
        call(4, "terminal_status", json!({})),
        call(5, "list_sessions", json!({})),
    ];
    let mut mcp = Command::new(omnish_bin());
    mcp.arg("mcp")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data())
        .current_dir(h.home.path());
    let out = run_piped(mcp, &(lines.join("\n") + "\n"));
    let responses = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(responses.contains("\"id\":5"), "{responses}");
    all.push_str(&responses);
    all
}

/// Asserts the token is nowhere in the session's files.
fn assert_not_stored(h: &Harness, token: &str) {
    let stored = store_bytes(&h.session_dir());
    assert!(
        memchr::memmem::find(&stored, token.as_bytes()).is_none(),
        "the token is in the store"
    );
}

/// Asserts the token is nowhere omnish writes or shows.
fn assert_nowhere(h: &Harness, token: &str) {
    assert_not_stored(h, token);
    let shown = everything_shown(h, token);
    assert!(!shown.contains(token), "the token is shown:\n{shown}");
}

#[test]
fn exported_ps1_gives_a_nested_bash_a_clean_prompt_and_no_token() {
    let rc = "PS1='READY> '\nexport PS1\n";
    let mut h = Harness::start(&["bash"], &[(".bashrc", rc)]);
    h.wait_prompts(1);
    let token = session_token(&mut h, false);
    // Whatever the user prints of the prompt strings holds no token.
    h.run("{ echo \"$PS1\"; declare -p PS1 PS2 PS0; } > ~/prompts");
    let prompts = std::fs::read_to_string(h.home.path().join("prompts")).unwrap();
    assert!(!prompts.contains(&token), "{prompts}");
    // A nested interactive bash takes PS1 from its environment (no startup files): the
    // outer session's markers do not come with it, so its prompt is clean and its commands
    // stay the output of the outer command, where search finds them.
    let before = h.records().len();
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line("bash --norc");
    h.wait_until("the nested prompt", || {
        h.screen_tail(400).ends_with("READY> ") && h.screen().matches(PROMPT).count() > prompts
    });
    h.type_line("env > ~/inner-env; echo from-inner-$((6 * 7))");
    h.wait_screen("from-inner-42\r\n");
    h.type_line("exit 5");
    let recs = h.wait_records(before + 1);
    let r = recs.last().unwrap();
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        ("bash --norc", Some(5))
    );
    let out = h.output_text(r);
    assert!(out.contains("from-inner-42\r\n"), "{out:?}");
    assert!(out.contains("READY> "), "{out:?}");
    // Not even a stale marker: the prompt strings expand to nothing in a shell without them.
    assert!(!out.contains("\x1b]133"), "{out:?}");
    h.run("echo after-nested");
    assert_eq!(h.records().len(), before + 2);
    let env = std::fs::read_to_string(h.home.path().join("inner-env")).unwrap();
    assert!(!env.contains(&token), "{env}");
    assert!(env.contains("PS1="), "{env}");
    let hits = ok_stdout(omnish(&h, &["search", "from-inner-42"]));
    assert!(hits.contains("bash --norc"), "{hits}");
    assert_nowhere(&h, &token);
}

#[test]
fn without_promptvars_the_prompt_strings_hold_only_a_spent_nonce() {
    let rc = "PS1='READY> '\nexport PS1 PS0\nshopt -u promptvars\n";
    let mut h = Harness::start(&["bash"], &[(".bashrc", rc)]);
    h.wait_prompts(1);
    let token = session_token(&mut h, false);
    let r = h.run("echo plain");
    assert_eq!(
        (r.command_line.as_str(), r.command_source.as_str()),
        ("echo plain", "screen")
    );
    h.run("{ echo \"$PS1\"; declare -p PS1 PS2 PS0; env; } > ~/prompts");
    let prompts = std::fs::read_to_string(h.home.path().join("prompts")).unwrap();
    assert!(!prompts.contains(&token), "{prompts}");
    assert!(prompts.contains("133;"), "{prompts}");
    // Printed as escapes, the prompt strings' markers are spent: they split and end nothing.
    let before = h.records().len();
    let r = h.run("p=${PS1//'\\['/}; p=${p//'\\]'/}; printf \"$PS0$p\"; echo after-replay");
    assert_eq!(h.records().len(), before + 1);
    assert_eq!(r.exit_code, Some(0));
    assert!(h.output_text(&r).ends_with("after-replay\r\n"));
    // A nested bash (its own promptvars on) shows the exported PS1 with a spent nonce.
    h.type_line("bash --norc");
    // Its prompt ends with the spent nonce's `B` mark, shown as text.
    h.wait_until("the nested prompt", || {
        let tail = h.screen_tail(300);
        tail.rfind("bash --norc")
            .is_some_and(|at| tail[at..].contains("READY> "))
            && h.records().len() == before + 1
    });
    h.wait_line_editor();
    h.type_line("echo nested-$((2 + 3)); exit 6");
    let recs = h.wait_records(before + 2);
    let r = recs.last().unwrap();
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        ("bash --norc", Some(6))
    );
    assert!(h.output_text(r).contains("nested-5\r\n"));
    assert_nowhere(&h, &token);
}

#[test]
fn zsh_exported_prompt_strings_give_a_nested_zsh_no_token() {
    if !zsh_or_skip() {
        return;
    }
    let rc = "PROMPT='READY> '\nRPROMPT='[r]'\nexport PROMPT RPROMPT PS2 PROMPT_EOL_MARK\n";
    let mut h = Harness::start(&["zsh"], &[(".zshrc", rc)]);
    h.wait_prompts(1);
    let token = session_token(&mut h, true);
    h.run(
        "{ print -r -- $PROMPT $RPROMPT $PS2 $PROMPT_EOL_MARK; typeset -p PROMPT PS1 RPROMPT PS2 PROMPT_EOL_MARK; env } > ~/prompts",
    );
    let prompts = std::fs::read_to_string(h.home.path().join("prompts")).unwrap();
    assert!(!prompts.contains(&token), "{prompts}");
    // A nested zsh without startup files takes the exported prompt strings, PROMPT_EOL_MARK
    // with the mark of the outer command's end: that marks nothing of the outer command.
    let before = h.records().len();
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line("zsh -f");
    h.wait_until("the nested prompt", || {
        h.screen().matches(PROMPT).count() > prompts
    });
    h.wait_line_editor();
    h.type_line("printf no-newline-inner; env > ~/inner-env");
    // This zsh has no hooks: keys typed before its line editor reads them are typed ahead of
    // a line the outer shell never runs, and their echo may be taken out of the outer output.
    h.wait_screen("no-newline-inner");
    h.wait_line_editor();
    h.type_line("echo from-inner-$((6 * 7))");
    h.wait_screen("from-inner-42");
    h.wait_line_editor();
    h.type_line("exit 4");
    let recs = h.wait_records(before + 1);
    let r = recs.last().unwrap();
    assert_eq!((r.command_line.as_str(), r.exit_code), ("zsh -f", Some(4)));
    let out = h.output_text(r);
    assert!(out.contains("no-newline-inner"), "{out:?}");
    assert!(out.contains("from-inner-42"), "{out:?}");
    let env = std::fs::read_to_string(h.home.path().join("inner-env")).unwrap();
    assert!(!env.contains(&token), "{env}");
    assert!(env.contains("PROMPT="), "{env}");
    assert_nowhere(&h, &token);
}

#[test]
fn zsh_an_end_mark_printed_by_a_command_does_not_cut_its_output() {
    if !zsh_or_skip() {
        return;
    }
    let mut h = Harness::zsh(&[]);
    // PROMPT_EOL_MARK holds the mark of this command's end while it runs; printed, it comes
    // before the rest of the output, and zsh's own comes last.
    let r = h.run("print -rn -- $PROMPT_EOL_MARK; echo; echo after-the-mark; printf tail");
    let out = h.output_text(&r);
    assert!(out.ends_with("after-the-mark\r\ntail"), "{out:?}");
    let r = h.run("echo next");
    assert_eq!(h.output_text(&r), "next\r\n");
}

#[test]
fn the_token_printed_by_the_shell_never_reaches_the_store_or_a_front_end() {
    // bash: the variables, every shell variable, omnish's own rc file, and the token over and
    // over (so that it falls across reads), printed to the terminal.
    let mut h = Harness::bash(&[]);
    let token = session_token(&mut h, false);
    h.run("echo \"$PS1\"; declare -p PS1 PS2 __omnish_token");
    let r = h.run("set");
    assert!(h.output_text(&r).contains("[REDACTED:omnish-token]"));
    h.run("cat \"$__omnish_dir/omnish.bash\"");
    let r = h.run("for i in {1..3000}; do printf '%s' \"$__omnish_token\"; done; echo");
    assert_eq!(
        h.output_text(&r).matches("[REDACTED:omnish-token]").count(),
        3000
    );
    // Typed, it is echoed and kept as the command line: replaced there too.
    let r = h.run(&format!("echo typed-{token}"));
    assert_eq!(r.command_line, "echo typed-[REDACTED:omnish-token]");
    // The screen shows what the user asked for.
    assert!(h.screen().contains(&token));
    assert_nowhere(&h, &token);

    if !zsh_or_skip() {
        return;
    }
    let mut h = Harness::zsh(&[]);
    let token = session_token(&mut h, true);
    h.run("typeset -p PROMPT PS1 PROMPT_EOL_MARK __omnish_token");
    h.run("set");
    h.run("cat $__omnish_dir/.zshenv");
    let r = h.run("repeat 3000 print -rn -- $__omnish_token; echo");
    assert_eq!(
        h.output_text(&r).matches("[REDACTED:omnish-token]").count(),
        3000
    );
    let r = h.run(&format!("echo typed-{token}"));
    assert_eq!(r.command_line, "echo typed-[REDACTED:omnish-token]");
    assert_nowhere(&h, &token);
}

/// Lowercase hex runs of 8 chars or more: anything that could be a credential.
fn hex_runs(text: &str) -> Vec<String> {
    let mut runs: Vec<String> = text
        .split(|c: char| !matches!(c, '0'..='9' | 'a'..='f'))
        .filter(|r| r.len() >= 8)
        .map(String::from)
        .collect();
    // A token may sit inside a longer run (printed back to back): every 32-char window too.
    let windows: Vec<String> = runs
        .iter()
        .filter(|r| r.len() > 32)
        .flat_map(|r| (0..=r.len() - 32).map(move |i| r[i..i + 32].to_string()))
        .collect();
    runs.extend(windows);
    runs.sort();
    runs.dedup();
    runs
}

/// Markers forging a command `rm -rf / # forged` run in /etc, with `cred` as the credential,
/// in the wire format and in the earlier one (token last).
fn forged_markers(cred: &str) -> String {
    let line = "rm -rf / \\x23 forged-cmd";
    let mut s = String::new();
    s.push_str(&format!(
        "\x1b]133;{cred};D;0\x07\x1b]633;{cred};P;Cwd=/etc\x07\x1b]133;{cred};A\x07$ \
         \x1b]133;{cred};B\x07\x1b]633;{cred};E;{line}\x07\x1b]133;{cred};C\x07forged output\r\n\
         \x1b]133;{cred};D;0\x07\x1b]133;{cred};A\x07"
    ));
    s.push_str(&format!(
        "\x1b]133;D;0;aid={cred}\x07\x1b]633;P;Cwd=/etc;{cred}\x07\x1b]133;A;aid={cred}\x07$ \
         \x1b]133;B;aid={cred}\x07\x1b]633;E;{line};{cred}\x07\x1b]133;C;aid={cred}\x07forged\r\n\
         \x1b]133;D;0;aid={cred}\x07\x1b]133;A;aid={cred}\x07"
    ));
    s
}

fn assert_no_forgery(h: &Harness, recs: &[CommandRecord], want: &[(&str, Option<i32>)]) {
    let got: Vec<(&str, Option<i32>)> = recs
        .iter()
        .map(|r| (r.command_line.as_str(), r.exit_code))
        .collect();
    assert_eq!(got, want);
    for r in recs {
        assert_ne!(r.cwd, "/etc", "{r:?}");
        assert!(!r.command_line.contains("forged-cmd"), "{r:?}");
    }
    let shown = ok_stdout(omnish(h, &["context", "--recent", "100"]));
    assert!(!shown.contains("rm -rf /"), "{shown}");
}

#[test]
fn a_cat_of_forged_markers_forges_no_command() {
    for zsh in [false, true] {
        if zsh && !zsh_or_skip() {
            return;
        }
        let mut h = if zsh {
            Harness::zsh(&[])
        } else {
            Harness::bash(&[])
        };
        let token = session_token(&mut h, zsh);
        // What used to give the token away: the prompt strings, every variable, the rc file.
        let leaks: &[&str] = if zsh {
            &[
                "print -r -- $PROMPT_EOL_MARK",
                "typeset -p PROMPT_EOL_MARK",
                "set",
                "cat $__omnish_dir/.zshenv",
            ]
        } else {
            &[
                "echo \"$PS1\"",
                "declare -p PS1",
                "set",
                "cat \"$__omnish_dir/omnish.bash\"",
            ]
        };
        for line in leaks {
            h.run(line);
        }
        // An attacker who reads everything omnish stores and shows tries every credential it
        // could find there, in both wire formats.
        let mut seen = String::from_utf8_lossy(&store_bytes(&h.session_dir())).into_owned();
        seen.push_str(&everything_shown(&h, &token));
        let creds = hex_runs(&seen);
        assert!(!creds.contains(&token));
        assert!(!creds.is_empty());
        let mut file = String::from("before the markers\r\n");
        for c in &creds {
            file.push_str(&forged_markers(c));
        }
        file.push_str("after the markers\n");
        std::fs::write(h.home.path().join("evil.log"), &file).unwrap();
        let r = h.run("cat ~/evil.log; (exit 3)");
        let out = h.output_text(&r);
        assert!(out.starts_with("before the markers"), "{out:?}");
        assert!(out.ends_with("after the markers\r\n"), "{out:?}");
        h.run("echo after-cat");
        let mut want: Vec<(&str, Option<i32>)> = vec![(
            if zsh {
                "print -rn -- $__omnish_token > ~/.token"
            } else {
                "printf '%s' \"$__omnish_token\" > ~/.token"
            },
            Some(0),
        )];
        want.extend(leaks.iter().map(|l| (*l, Some(0))));
        want.push(("cat ~/evil.log; (exit 3)", Some(3)));
        want.push(("echo after-cat", Some(0)));
        assert_no_forgery(&h, &h.records(), &want);
        assert_eq!(
            h.records()[leaks.len() + 1].cwd,
            h.home.path().to_string_lossy()
        );
    }
}

/// A line of exactly `n` chars: `true` and numbered words (so any loss, repeat or reordering
/// shows), quoted as one word (the shells parse a hundred thousand words slowly).
fn long_line(n: usize) -> String {
    let mut s = String::from("true '");
    let mut i = 0u64;
    while s.len() < n {
        s.push_str(&format!("w{i:08} "));
        i += 1;
    }
    s.truncate(n - 1);
    s.push('\'');
    s
}

/// The record a line longer than the cap makes: its first and last 512 Ki chars around the
/// note.
fn cut(line: &str) -> String {
    let half = 512 * 1024;
    format!(
        "{}…[{} chars omitted]…{}",
        &line[..half],
        line.len() - 2 * half,
        &line[line.len() - half..]
    )
}

/// The end of the screen as text: escape sequences (a line editor highlights a paste) and
/// carriage returns left out.
fn visible_tail(h: &Harness, n: usize) -> String {
    let raw = h.screen_tail(n);
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    while chars
                        .next()
                        .is_some_and(|c| !c.is_ascii_alphabetic() && c != '~')
                    {}
                }
                Some(']') => while chars.next().is_some_and(|c| c != '\x07' && c != '\x1b') {},
                _ => {}
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// Waits (generously: megabytes go through the line editor and the shell's hooks) until
/// `pred`, or fails showing the end of the screen.
fn wait_long(h: &Harness, what: &str, mut pred: impl FnMut() -> bool) {
    let start = Instant::now();
    while !pred() {
        assert!(
            start.elapsed() < TIMEOUT * 6,
            "timed out waiting for {what}; the screen ends:\n{}",
            visible_tail(h, 3000)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Puts `line` on the prompt as the key binding `Ctrl-X l` does (the line editor draws it
/// whole, as after a paste), presses Enter and waits for its record.
fn enter_long(h: &mut Harness, line: &str) -> CommandRecord {
    std::fs::write(h.home.path().join("line"), line).unwrap();
    let n = h.records().len() + 1;
    h.send(b"\x18l");
    let end = &line[line.len() - 24..];
    wait_long(h, "the line drawn", || visible_tail(h, 8192).contains(end));
    h.send(b"\r");
    wait_record(h, n)
}

/// Pastes `line` (bracketed paste, as a terminal sends a paste), presses Enter and waits for
/// its record.
fn paste_long(h: &mut Harness, line: &str) -> CommandRecord {
    let n = h.records().len() + 1;
    let mut paste = b"\x1b[200~".to_vec();
    paste.extend_from_slice(line.as_bytes());
    paste.extend_from_slice(b"\x1b[201~");
    h.send(&paste);
    let end = &line[line.len() - 24..];
    wait_long(h, "the paste drawn", || visible_tail(h, 8192).contains(end));
    h.send(b"\r");
    wait_record(h, n)
}

/// Waits for record `n` and the prompt after it.
fn wait_record(h: &Harness, n: usize) -> CommandRecord {
    wait_long(h, &format!("record {n}"), || h.records().len() >= n);
    wait_long(h, "the prompt", || {
        visible_tail(h, 256).trim_end().ends_with("READY>")
    });
    h.records()[n - 1].clone()
}

/// Peak resident memory of a process, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn check_exact(h: &Harness, r: &CommandRecord, line: &str, source: &str) {
    assert_eq!(r.command_source, source, "{} chars", line.len());
    assert!(r.command_line == line, "{} chars: not exact", line.len());
    assert_eq!(r.command_line_chars, None);
    assert_eq!(r.exit_code, Some(0));
    assert!(h.output(r).is_empty(), "{} chars", line.len());
}

fn check_cut(h: &Harness, r: &CommandRecord, line: &str, source: &str) {
    assert_eq!(r.command_source, source, "{} chars", line.len());
    assert!(
        r.command_line == cut(line),
        "{} chars: not cut as said",
        line.len()
    );
    assert_eq!(r.command_line_chars, Some(line.len() as u64));
    assert_eq!(r.exit_code, Some(0));
    // The marker that carried it is no output.
    assert!(h.output(r).is_empty(), "{} chars", line.len());
}

#[test]
fn bash_command_lines_are_exact_to_a_mebichar_and_cut_and_marked_past_it() {
    // ignoredups: the first run of a line is reported by the hook, the same line again is
    // kept out of history and read off the screen.
    let rc = "PS1='READY> '\nHISTCONTROL=ignoredups\n\
              __load() { READLINE_LINE=$(<~/line); READLINE_POINT=${#READLINE_LINE}; }\n\
              bind -x '\"\\C-xl\": __load'\n";
    let mut h = Harness::start(&["bash"], &[(".bashrc", rc)]);
    h.wait_prompts(1);
    let token = session_token(&mut h, false);
    // Pasted, then the same line again, drawn by the line editor from a key binding.
    // (readline takes time quadratic in the line to draw it: longer lines come from history.)
    let line = long_line(300_000);
    let r = paste_long(&mut h, &line);
    check_exact(&h, &r, &line, "hook");
    let r = enter_long(&mut h, &line);
    check_exact(&h, &r, &line, "screen");
    // Recalled from history: bash prints the line it expanded. `!!` repeats the last entry,
    // so bash leaves it out of history and omnish reads the expansion off the screen; `!-2`
    // after another command is saved, and the hook reports it.
    for n in [600_000, 1_000_000, 3_000_000] {
        let line = long_line(n);
        std::fs::write(h.home.path().join("line"), &line).unwrap();
        h.run("history -s \"$(<~/line)\"");
        for (typed, source) in [("!!", "screen"), ("!-2", "hook")] {
            if typed == "!-2" {
                h.run(": between");
            }
            let m = h.records().len() + 1;
            h.type_line(typed);
            let r = wait_record(&h, m);
            assert_eq!(r.typed.as_deref(), Some(typed));
            if n <= 1 << 20 {
                check_exact(&h, &r, &line, source);
            } else {
                check_cut(&h, &r, &line, source);
            }
        }
    }
    let r = h.run("echo after-the-long-lines");
    assert_eq!(h.output_text(&r), "after-the-long-lines\r\n");
    // Memory stays bounded: a few times the cap, whatever the length.
    let peak = peak_rss_kib(h.pid());
    assert!(peak < 64 * 1024, "omnish peaked at {peak} KiB");
    // No record holds the token, and the screen never showed a marker. (The front ends on
    // lines this long are another test's business.)
    assert_not_stored(&h, &token);
    assert!(!h.screen_tail(50_000_000).contains("\x1b]633;"));
}

#[test]
fn zsh_command_lines_are_exact_to_a_mebichar_and_cut_and_marked_past_it() {
    if !zsh_or_skip() {
        return;
    }
    let rc = "PROMPT='READY> '\n\
              __load() { BUFFER=$(<~/line); CURSOR=$#BUFFER }\n\
              zle -N __load\nbindkey '^Xl' __load\n";
    let mut h = Harness::start(&["zsh"], &[(".zshrc", rc)]);
    h.wait_prompts(1);
    let token = session_token(&mut h, true);
    let pasted = long_line(300_000);
    let r = paste_long(&mut h, &pasted);
    check_exact(&h, &r, &pasted, "hook");
    for n in [600_000, 1_000_000] {
        let line = long_line(n);
        let r = enter_long(&mut h, &line);
        check_exact(&h, &r, &line, "hook");
    }
    let line = long_line(3_000_000);
    let r = enter_long(&mut h, &line);
    check_cut(&h, &r, &line, "hook");
    let r = h.run("echo after-the-long-lines");
    assert_eq!(h.output_text(&r), "after-the-long-lines\r\n");
    let peak = peak_rss_kib(h.pid());
    assert!(peak < 64 * 1024, "omnish peaked at {peak} KiB");
    assert_not_stored(&h, &token);
}

#[test]
fn without_a_random_generator_wrap_runs_the_shell_unrecorded_with_one_line() {
    if !require("strace") {
        return;
    }
    // Every getrandom(2) of omnish itself fails (the shell's are untouched: no -f).
    let mut h = Harness::start_via(
        &[
            "strace",
            "-qq",
            "-o",
            "/dev/null",
            "-e",
            "inject=getrandom:error=EIO",
        ],
        &["bash"],
        &[(".bashrc", "PS1='READY> '\n")],
        &[],
    );
    h.wait_prompts(1);
    let screen = h.screen();
    let notes: Vec<&str> = screen.lines().filter(|l| l.contains("omnish:")).collect();
    assert_eq!(notes.len(), 1, "{screen}");
    assert!(
        notes[0].contains("random number generator") && notes[0].contains("without recording"),
        "{screen}"
    );
    h.type_line("echo unrecorded-$((1 + 1))");
    h.wait_screen("unrecorded-2\r\n");
    h.type_line("exit 7");
    assert_eq!(h.wait_exit(), 7);
    let sessions = h.data().join("sessions");
    let stored = if sessions.exists() {
        walk(&sessions)
    } else {
        Vec::new()
    };
    assert!(
        stored.iter().all(|p| !p.ends_with("stream.bin")),
        "{stored:?}"
    );
}
