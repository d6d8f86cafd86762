//! Full-screen programs keep their last screen: `less` and `vim` run in a real wrapped bash, are
//! quit, and `omnish context` shows what they last showed (its first and last rows by default,
//! all of it with `--screens`); the MCP server's `command_output` has the whole screen.

mod common;

use common::*;

/// `less` on a file of 100 numbered rows, jumped to its end and quit.
fn less_session() -> Harness {
    let rows: String = (1..=100).map(|i| format!("row-{i}\n")).collect();
    let mut h = Harness::bash(&[("rows.txt", &rows)]);
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line("less rows.txt");
    h.wait_reading("less");
    let mark = h.mark();
    h.send(b"G");
    h.wait_until("less at the end of the file", || {
        h.screen_since(mark).contains("row-100")
    });
    h.wait_reading("less");
    h.send(b"q");
    h.wait_prompts(prompts + 1);
    h.wait_records(1);
    h
}

#[test]
fn less_leaves_its_last_screen_first_and_last_rows_by_default() {
    if !require("less") {
        return;
    }
    let h = less_session();
    let text = ok_stdout(h.context(&["--last"]));
    // 23 rows of the file on a 24-row terminal (less's prompt line is erased as it quits):
    // rows 78 to 100, the first and last three shown.
    let want = "$ less rows.txt\n\
        [full-screen program: less; its last screen, first and last rows:]\n\
        row-78\nrow-79\nrow-80\n[17 more rows]\nrow-98\nrow-99\nrow-100\n\
        [end of the screen]\n";
    assert!(text.contains(want), "{text}");
    assert!(!text.contains("row-50"), "{text}");

    let whole = ok_stdout(h.context(&["--last", "--screens"]));
    let rows: String = (78..=100).map(|i| format!("row-{i}\n")).collect();
    let want =
        format!("[full-screen program: less; its last screen:]\n{rows}[end of the screen]\n");
    assert!(whole.contains(&want), "{whole}");
    assert!(!whole.contains("more rows]"), "{whole}");
}

#[test]
fn vim_leaves_its_last_screen() {
    if !require("vim") {
        return;
    }
    let mut h = Harness::bash(&[]);
    let prompts = h.screen().matches(PROMPT).count();
    // No vimrc, no plugins: the screen is vim's own.
    h.type_line("vim -u NONE -i NONE -N notes.txt");
    h.wait_reading("vim");
    h.send(b"ifirst line of the notes\rsecond line\x1b");
    h.wait_until("the typed text in vim", || {
        h.screen().contains("second line")
    });
    h.wait_reading("vim");
    h.send(b":wq\r");
    h.wait_prompts(prompts + 1);
    let recs = h.wait_records(1);
    assert_eq!(recs[0].command_line, "vim -u NONE -i NONE -N notes.txt");
    assert_eq!(
        std::fs::read_to_string(h.home.path().join("notes.txt")).unwrap(),
        "first line of the notes\nsecond line\n"
    );

    let text = ok_stdout(h.context(&["--last", "--screens"]));
    let after_header = text
        .split("[full-screen program: vim; its last screen:]\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no last screen of vim: {text}"));
    let screen: Vec<&str> = after_header
        .split("[end of the screen]")
        .next()
        .unwrap()
        .lines()
        .collect();
    // The text, the empty-line markers below it, and the message of the write at the bottom
    // (vim ends that message with a new line as it quits: the screen scrolls up by one row
    // before it leaves, and its first row goes with it, as on the terminal).
    let second = screen.iter().position(|l| *l == "second line");
    assert!(second.is_some_and(|i| i < 2), "{text}");
    assert_eq!(screen[second.unwrap() + 1], "~", "{text}");
    assert!(screen.len() >= 20, "a whole 24-row screen: {text}");
    assert!(
        screen.last().unwrap().contains("notes.txt"),
        "vim's last line says what it wrote: {text}"
    );
    // By default: the first and last rows only.
    let brief = ok_stdout(h.context(&["--last"]));
    assert!(
        brief.contains("[full-screen program: vim; its last screen, first and last rows:]\n"),
        "{brief}"
    );
    assert!(brief.contains("second line\n~\n"), "{brief}");
    assert!(brief.contains("more rows]\n~\n"), "{brief}");
    assert!(brief.contains("notes.txt\" [New]"), "{brief}");
}

/// A program drawing 30 MB on the alternate screen (100 MB in `scripts/bench-screens.sh`,
/// which measures time and memory): what it leaves is one screen, read in bounded memory (the
/// renderer's grids), with the lines around it.
#[test]
fn thirty_megabytes_on_the_alternate_screen_leave_one_screen() {
    let mut h = Harness::bash(&[]);
    h.run_huge(
        "printf 'before\\n\\033[?1049h'; yes 'a full screen row' | head -c 29999988; \
         printf 'last row\\033[?1049l'; echo after",
    );
    let text = ok_stdout(h.context(&["--last", "--screens"]));
    let rows = "a full screen row\n".repeat(23);
    let want = format!(
        "before\n[full-screen program: printf; its last screen:]\n{rows}last row\n\
         [end of the screen]\nafter\n"
    );
    assert!(text.ends_with(&want), "{text}");
    assert!(text.len() < 2000, "{} bytes", text.len());
}

/// The MCP server's `command_output` pages through the whole output: the whole last screen.
#[test]
fn mcp_command_output_has_the_whole_last_screen() {
    if !require("less") {
        return;
    }
    let h = less_session();
    let lines = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
        .to_string(),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "command_output", "arguments": {"id": "1", "max_lines": 100}}})
        .to_string(),
    ];
    let mut cmd = std::process::Command::new(omnish_bin());
    cmd.arg("mcp")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data())
        .current_dir(h.home.path());
    let out = run_piped(cmd, &(lines.join("\n") + "\n"));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let answer: serde_json::Value = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["id"] == 2)
        .unwrap_or_else(|| panic!("no answer: {stdout}"));
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    let rows: String = (78..=100).map(|i| format!("row-{i}\n")).collect();
    let want = format!("[full-screen program: less; its last screen:]\n{rows}[end of the screen]");
    assert!(text.contains(&want), "{text}");
}
