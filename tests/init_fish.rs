//! `omnish init fish`: the printed snippet passes `fish --no-execute`; the default keys shadow
//! nothing in a clean fish (emacs and vi modes); the keys pressed in a real fish under tmux show
//! the answer and put `fix`'s command on the line, and are never recorded; `--wrap` starts a
//! recorded fish only where it should, a login fish as a login fish. Each scenario is written
//! once and takes the fish it runs in (common/fish.rs): all in fish 3.6 (module `fish3`), those
//! where fish 4 differs (its `bind` notation and presets, its line editor, `status fish-path`)
//! in fish 4.0 too (module `fish4`).

mod common;
#[path = "common/tmux.rs"]
mod tmux;

use common::fish::{Fish, NO_GENERATED, in_fish};
use common::*;
use std::path::Path;
use std::process::Command;
use tmux::Tmux;

const CONFIG: &str = ".config/fish/config.fish";

/// A HOME with `files` and fish's generated completions in place.
fn home(files: &[(&str, &str)]) -> tempfile::TempDir {
    let mut all = files.to_vec();
    all.extend_from_slice(NO_GENERATED);
    home_with(&all)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn skip_without(tools: &[&str]) -> bool {
    !tools.iter().all(|t| require(t))
}

fn init(args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = Command::new(omnish_bin());
    cmd.arg("init").args(args).env("OMNISH_CONFIG", "/dev/null");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

fn printed_snippets_pass_fish_no_execute_and_keys_are_translated(f: Fish) {
    if !f.available() {
        return;
    }
    for (args, env, ask, fix) in [
        (&["fish"][..], &[][..], r"\coa", r"\cof"),
        (&["fish", "--wrap"][..], &[][..], r"\coa", r"\cof"),
        (
            &["fish", "--ask-key", r"\eq", "--fix-key", r"\C-x\C-f"][..],
            &[][..],
            r"\eq",
            r"\cx\cf",
        ),
        (
            &["fish"][..],
            &[("OMNISH_KEYS_ASK", r"\C-g")][..],
            r"\cg",
            r"\cof",
        ),
    ] {
        let (snippet, err) = init(args, env);
        assert!(err.is_empty(), "{err}");
        assert!(
            snippet.contains(&format!("set -g __omnish_ask_key {ask}\n")),
            "{snippet}"
        );
        assert!(
            snippet.contains(&format!("set -g __omnish_fix_key {fix}\n")),
            "{snippet}"
        );
        let mut cmd = Command::new("fish");
        cmd.arg("--no-execute").env("PATH", f.path());
        let out = run_piped(cmd, &snippet);
        assert!(out.status.success(), "fish -n: {}", text(&out.stderr));
    }
    // A key fish cannot bind: one line, and the default.
    let (snippet, err) = init(&["fish"], &[("OMNISH_KEYS_ASK", "é")]);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cannot be bound in fish"), "{err}");
    assert!(
        snippet.contains("set -g __omnish_ask_key \\coa\n"),
        "{snippet}"
    );
}

/// Every binding of a clean interactive fish, in tmux: emacs mode (fish's default), then all of
/// vi's modes; then the same after `omnish init fish | source`.
fn clean_fish_bindings(f: Fish, home: &Path) -> (String, String) {
    let t = Tmux::start(home, &[("PATH", f.path())], "fish");
    t.wait("fish's prompt", |_| {
        t.last_line().trim_end().ends_with(['#', '>'])
    });
    t.type_text(&format!(
        "cd; bind -a > plain.txt; fish_vi_key_bindings; bind -a >> plain.txt; fish_default_key_bindings; {b} init fish | source; bind -a > ours.txt; fish_vi_key_bindings; bind -a >> ours.txt; echo DUMPED",
        b = omnish_bin()
    ));
    t.keys(&["Enter"]);
    t.wait("the bindings dumped", |s| s.contains("\nDUMPED"));
    let read = |f: &str| std::fs::read_to_string(home.join(f)).unwrap();
    (read("plain.txt"), read("ours.txt"))
}

fn default_keys_shadow_nothing_in_a_clean_fish(f: Fish) {
    if !f.available() || skip_without(&["tmux"]) {
        return;
    }
    let home = home(&[]);
    let (plain, ours) = clean_fish_bindings(f, home.path());
    // fish 4 names keys anew (`ctrl-x`, `ctrl-o,a`), and reads the old notation omnish binds.
    let key = |k: &str| match f.major() {
        3 => format!(r"\c{k}"),
        _ => format!(
            "ctrl-{}",
            k.chars().map(String::from).collect::<Vec<_>>().join(",")
        ),
    };
    assert!(
        plain.contains(&format!("bind --preset {} fish_clipboard_copy", key("x"))),
        "{plain}"
    );
    assert!(plain.contains("-M insert"), "{plain}");
    // Neither key nor its Ctrl-O prefix is bound in any mode of fish 3.6 or 4 (fish 4 binds
    // Ctrl-G alone to `cancel`: a Ctrl-G prefix would make it wait for a second key).
    for line in plain.lines() {
        let mut words = line.split_whitespace().skip(1);
        let mut k = None;
        while let Some(w) = words.next() {
            if w == "-M" || w == "-m" {
                words.next();
            } else if !w.starts_with('-') {
                k = Some(w);
                break;
            }
        }
        if let Some(k) = k {
            assert!(!k.starts_with(&key("o")), "{line}");
        }
    }
    // And after init, they are ours, in emacs and vi insert mode.
    for (k, widget) in [
        ("oa", "ask"),
        ("of", "fix"),
        ("op", "pause"),
        ("ok", "pick"),
    ] {
        for mode in ["", "-M insert "] {
            let want = format!("bind {mode}{} __omnish_{widget}_widget", key(k));
            assert!(ours.lines().any(|l| l == want), "{want} in:\n{ours}");
        }
    }
}

/// The stand-in LLM (as in init_keys.rs): keeps the prompt, answers `ask` in two lines; for
/// `fix` a fenced command; sleeps first when `$HOME/slow` exists.
fn stand_in(home: &Path) -> String {
    let path = home.join("llm-stand-in");
    std::fs::write(
        &path,
        "#!/bin/sh\ncat > \"$HOME/prompt.txt\"\n\
         if [ -e \"$HOME/slow\" ]; then echo SLOW-START; sleep 30; echo SLOW-END; exit 0; fi\n\
         if grep -q 'fenced code block' \"$HOME/prompt.txt\"; then\n\
           printf 'Use:\\n```sh\\necho fixed-by-omnish\\n```\\n'\n\
         else\n\
           echo ANSWER-FIRST-LINE; echo ANSWER-SECOND-LINE\n\
         fi\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn wrap_config(extra: &str) -> String {
    format!(
        "set -g fish_greeting\nfunction fish_prompt; printf 'READY> '; end\n{extra}{} init fish --wrap | source\n",
        omnish_bin()
    )
}

fn keys_in_fish_under_tmux(f: Fish) {
    if !f.available() || skip_without(&["tmux"]) {
        return;
    }
    let home = home(&[(CONFIG, &wrap_config(""))]);
    let h = home.path();
    let data = h.join("data");
    let llm = stand_in(h);
    let t = Tmux::start(
        h,
        &[
            ("OMNISH_DATA_DIR", data.display().to_string()),
            ("OMNISH_ASK_COMMAND", llm),
            ("PATH", f.path()),
        ],
        "fish -i",
    );
    t.wait("the prompt", |s| s.contains("READY>"));
    t.type_text("ls /no-such-dir-omnish");
    t.keys(&["Enter"]);
    wait_records_in(&data, 1);
    t.wait("the second prompt", |s| s.matches("READY>").count() >= 2);

    // Ask, with a line being edited: the answer below, then the prompt and the line intact.
    t.type_text("echo half-typed");
    t.wait("the typed text", |s| s.contains("READY> echo half-typed"));
    t.keys(&["C-o", "a"]);
    let s = t.wait("the answer and the prompt after it", |s| {
        s.contains("ANSWER-SECOND-LINE")
            && s.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.trim_end() == "READY> echo half-typed")
    });
    let prompt = std::fs::read_to_string(h.join("prompt.txt")).unwrap();
    assert!(prompt.contains("$ ls /no-such-dir-omnish"), "{prompt}");
    assert!(
        s.find("ANSWER-FIRST-LINE") < s.find("ANSWER-SECOND-LINE"),
        "{s}"
    );

    // Fix: the command replaces the line and does not run.
    t.keys(&["C-o", "f"]);
    t.wait("fix's command on the line", |_| {
        t.last_line().trim_end() == "READY> echo fixed-by-omnish"
    });
    assert!(
        !t.screen().lines().any(|l| l.trim() == "fixed-by-omnish"),
        "{}",
        t.screen()
    );
    t.keys(&["Enter"]);
    wait_records_in(&data, 2);
    t.type_text("echo after-keys");
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 3);
    let lines: Vec<&str> = recs.iter().map(|r| r.command_line.as_str()).collect();
    assert_eq!(
        lines,
        [
            "ls /no-such-dir-omnish",
            "echo fixed-by-omnish",
            "echo after-keys"
        ]
    );
    let session = &sessions_in(&data)[0];
    let out = omnish::term::render::render(&common::output_of(session, &recs[1]), 100, 40);
    assert_eq!(out.join("\n"), "fixed-by-omnish");
    assert_eq!(sessions_in(&data).len(), 1);

    // Ctrl-C during an answer stops it and returns to the prompt.
    std::fs::write(h.join("slow"), "").unwrap();
    t.wait("the prompt", |s| s.matches("READY>").count() >= 5);
    t.keys(&["C-o", "a"]);
    t.wait("the slow answer", |s| s.contains("SLOW-START"));
    t.keys(&["C-c"]);
    t.wait("the interruption and a prompt", |s| {
        s.contains("was interrupted") && t.last_line().starts_with("READY>")
    });
    assert!(!t.screen().contains("SLOW-END"));
    std::fs::remove_file(h.join("slow")).unwrap();
    t.type_text("echo still-fine");
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 4);
    assert_eq!(recs[3].command_line, "echo still-fine");

    let out = Command::new(omnish_bin())
        .args(["context", "--recent", "20"])
        .env("OMNISH_DATA_DIR", &data)
        .env("OMNISH_CONFIG", "/dev/null")
        .env_remove("OMNISH_SESSION_ID")
        .output()
        .unwrap();
    let ctx = text(&out.stdout);
    for absent in ["ANSWER", "SLOW", "omnish ask", "half-typed", "interrupted"] {
        assert!(!ctx.contains(absent), "{absent:?} in the context:\n{ctx}");
    }
    assert!(ctx.contains("$ echo still-fine"), "{ctx}");

    // The pause key, with a line being edited: that line runs paused; the key again resumes.
    t.type_text("echo paused-by-key-zq");
    t.keys(&["C-o", "p"]);
    t.wait("the pause said, the line intact", |s| {
        s.contains("recording paused until")
            && t.last_line().trim_end() == "READY> echo paused-by-key-zq"
    });
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 5);
    assert!(
        recs[4].paused && recs[4].command_line.is_empty(),
        "{:?}",
        recs[4]
    );
    t.wait("the prompt", |_| t.last_line().starts_with("READY>"));
    t.keys(&["C-o", "p"]);
    t.wait("the resume said", |s| s.contains("recording resumed"));
    t.type_text("echo resumed-by-key");
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 6);
    assert_eq!(recs[5].command_line, "echo resumed-by-key");
    // Nothing of the paused line in any record or the context. (fish keeps it in its history,
    // and its autosuggestion may show it again while the next line is typed, in the prompt's
    // redraws: the screen as it was after the pause, not a record of the line.)
    for r in &recs {
        let out = text(&common::output_of(session, r));
        assert!(!out.contains("paused-by-key-zq"), "{r:?}: {out}");
        assert!(!r.command_line.contains("paused-by-key-zq"), "{r:?}");
    }
    let out = Command::new(omnish_bin())
        .args(["context", "--recent", "20", "--no-redact"])
        .env("OMNISH_DATA_DIR", &data)
        .env("OMNISH_CONFIG", "/dev/null")
        .env_remove("OMNISH_SESSION_ID")
        .output()
        .unwrap();
    assert!(!text(&out.stdout).contains("paused-by-key-zq"));
}

fn wrap_starts_a_login_fish_as_a_login_fish(f: Fish) {
    if !f.available() || skip_without(&["tmux"]) {
        return;
    }
    let home = home(&[(CONFIG, &wrap_config("set -g CONFIG_READ yes\n"))]);
    let h = home.path();
    let data = h.join("data");
    let t = Tmux::start(
        h,
        &[
            ("OMNISH_DATA_DIR", data.display().to_string()),
            ("PATH", f.path()),
        ],
        "fish -l",
    );
    t.wait("the prompt", |s| s.contains("READY>"));
    t.type_text("status is-login; and echo LOGIN-$CONFIG_READ-(string replace -r '[0-9]+$' '' $OMNISH_INIT_WRAPPED)");
    t.keys(&["Enter"]);
    let recs = wait_records_in(&data, 1);
    let session = &sessions_in(&data)[0];
    let out = omnish::term::render::render(&common::output_of(session, &recs[0]), 100, 40);
    assert_eq!(out.join("\n"), "LOGIN-yes-/dev/pts/");
    let meta = omnish::store::read_meta(session).unwrap();
    assert_eq!(
        meta.argv.last().map(String::as_str),
        Some("-l"),
        "{:?}",
        meta.argv
    );
    assert!(meta.shell.ends_with("fish"), "{}", meta.shell);
    assert_eq!(sessions_in(&data).len(), 1);
}

fn wrap_never_starts_for_fish_scripts_or_fish_c(f: Fish) {
    if !f.available() || skip_without(&["tmux"]) {
        return;
    }
    let home = home(&[(
        "script.fish",
        &format!(
            "{} init fish --wrap | source\necho script-went-on\n",
            omnish_bin()
        ),
    )]);
    let h = home.path();
    let data = h.join("data");
    let cmd = format!(
        "sh -c 'fish -c \"{b} init fish --wrap | source; echo fish-c-went-on\"; fish {s}; echo ALL-DONE; sleep 30'",
        b = omnish_bin(),
        s = h.join("script.fish").display()
    );
    let t = Tmux::start(h, &[("OMNISH_DATA_DIR", data.display().to_string())], &cmd);
    let s = t.wait("the commands", |s| s.contains("ALL-DONE"));
    for line in ["fish-c-went-on", "script-went-on"] {
        assert!(s.contains(line), "{s}");
    }
    assert!(!s.contains("omnish:"), "{s}");
    assert!(sessions_in(&data).is_empty(), "a session was started");
}

fn inside_a_recorded_fish_init_wrap_installs_the_keys_only(f: Fish) {
    if !f.available() {
        return;
    }
    let mut h = Harness::start_with(
        &["fish"],
        &[&[(CONFIG, wrap_config("").as_str())][..], NO_GENERATED].concat(),
        &[("PATH", &f.path())],
    );
    h.wait_prompts(1);
    let r = h.run("bind | string match -e __omnish_ | count; echo $OMNISH_SESSION_ID");
    let shown = omnish::term::render::render(&h.output(&r), 80, 24);
    // The four keys (ask, fix, pause, pick), in emacs and vi insert mode.
    assert_eq!(shown[0], "8", "{shown:?}");
    assert_eq!(sessions_in(&h.data()).len(), 1);
    let r = h.run(&format!(
        "{} init fish --wrap | source; echo still-here",
        omnish_bin()
    ));
    let shown = omnish::term::render::render(&h.output(&r), 80, 24);
    assert_eq!(shown.join("\n"), "still-here");
    assert_eq!(sessions_in(&h.data()).len(), 1);
}

fn wrap_falls_back_to_the_plain_fish_with_one_line_when_omnish_cannot_record(f: Fish) {
    if !f.available() || skip_without(&["tmux"]) {
        return;
    }
    let home = home(&[(CONFIG, &wrap_config("")), ("file", "")]);
    let h = home.path();
    let t = Tmux::start(
        h,
        &[("OMNISH_DATA_DIR", h.join("file/data").display().to_string())],
        "fish -i",
    );
    let s = t.wait("the prompt", |s| s.contains("READY>"));
    let lines: Vec<&str> = s.lines().filter(|l| l.contains("omnish")).collect();
    assert_eq!(lines.len(), 1, "{s}");
    assert!(lines[0].contains("cannot start a recorded shell"), "{s}");
    t.type_text("echo \"plain-$OMNISH_SESSION_ID-shell\"");
    t.keys(&["Enter"]);
    t.wait("the plain shell", |s| s.contains("\nplain--shell"));
}

/// Every scenario, in Debian's fish 3.6.
mod fish3 {
    use super::*;
    in_fish!(V3:
        printed_snippets_pass_fish_no_execute_and_keys_are_translated,
        default_keys_shadow_nothing_in_a_clean_fish,
        keys_in_fish_under_tmux,
        wrap_starts_a_login_fish_as_a_login_fish,
        wrap_never_starts_for_fish_scripts_or_fish_c,
        inside_a_recorded_fish_init_wrap_installs_the_keys_only,
        wrap_falls_back_to_the_plain_fish_with_one_line_when_omnish_cannot_record,
    );
}

/// In fish 4.0, the scenarios where it differs: its parser (`--no-execute` of the snippet), its
/// `bind` (key notation, presets), its line editor (the keys pressed in tmux, which fish 4 reads
/// through the kitty keyboard protocol where the terminal has it), `status fish-path` (which
/// `--wrap` runs) and `bind` inside a recorded fish. Left to 3.6: scripts and `fish -c` (no
/// line editor) and the fallback line (omnish's, not fish's).
mod fish4 {
    use super::*;
    in_fish!(V4:
        printed_snippets_pass_fish_no_execute_and_keys_are_translated,
        default_keys_shadow_nothing_in_a_clean_fish,
        keys_in_fish_under_tmux,
        wrap_starts_a_login_fish_as_a_login_fish,
        inside_a_recorded_fish_init_wrap_installs_the_keys_only,
    );
}
