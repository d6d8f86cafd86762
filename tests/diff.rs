//! `omnish diff` on commands recorded from a real bash: reruns of one script whose output has
//! volatile tokens (a time, a pid, a temporary path) and, once it breaks, a changed line and a
//! secret; with and without `--normalize`, `--ok`, ids, and large outputs.

mod common;

use common::*;
use std::process::{Command, Output, Stdio};

const KEY: &str = "AKIAQ7XZ3MPLK2JD9W4N";

fn diff(h: &Harness, args: &[&str]) -> Output {
    Command::new(omnish_bin())
        .arg("diff")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(out: &Output) -> (Option<i32>, String, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The script every run of `sh run.sh` runs: volatile tokens, then a step that fails once
/// `broken` exists (printing the key in `keyfile`).
const SCRIPT: &str = r#"echo "started at $(date +%H:%M:%S.%N)"
echo "worker pid=$$"
echo "scratch $(mktemp -d)"
echo "step A ok"
if [ -e broken ]; then echo "step B failed"; echo "key=$(cat keyfile)"; echo "took 0.$$ s"; exit 1; fi
echo "step B ok"
echo "took 0.$$ s"
"#;

fn session() -> Harness {
    let mut h = Harness::bash(&[("run.sh", SCRIPT), ("keyfile", KEY)]);
    h.run("sh run.sh"); // 1: works
    h.run("touch broken"); // 2
    h.run("sh run.sh"); // 3: fails
    h.run("sh run.sh"); // 4: fails the same way
    h
}

fn changed(d: &str, prefix: &str) -> Vec<String> {
    d.lines()
        .filter(|l| l.starts_with(prefix) && !l.starts_with("---") && !l.starts_with("+++"))
        .map(|l| l[1..].to_string())
        .collect()
}

#[test]
fn reruns_differ_in_volatile_tokens_until_normalized() {
    let h = session();
    // The last command against the previous run of its line: only volatile lines differ.
    let (code, d, err) = text(&diff(&h, &[]));
    assert_eq!(code, Some(1), "{d}{err}");
    let header: Vec<&str> = d.lines().take(2).collect();
    assert!(
        header[0].starts_with("--- ") && header[0].contains(":3\t$ sh run.sh (exit 1, "),
        "{d}"
    );
    assert!(
        header[1].starts_with("+++ ") && header[1].contains(":4\t$ sh run.sh (exit 1, "),
        "{d}"
    );
    let minus = changed(&d, "-");
    assert!(minus.iter().any(|l| l.starts_with("started at ")), "{d}");
    assert!(minus.iter().any(|l| l.starts_with("worker pid=")), "{d}");
    assert!(!minus.iter().any(|l| l.contains("step")), "{d}");
    assert!(
        !d.contains(KEY) && d.contains("[REDACTED:aws-access-key]"),
        "{d}"
    );
    // Normalized, they are the same: status 0, nothing on stdout.
    let (code, d, err) = text(&diff(&h, &["--normalize"]));
    assert_eq!((code, d.as_str()), (Some(0), ""), "{err}");
    assert!(err.contains("are the same (normalized)"), "{err}");
}

#[test]
fn ok_compares_with_the_last_success_and_ids_pick_any_two() {
    let h = session();
    let (code, d, err) = text(&diff(&h, &["--ok", "--normalize"]));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        d.lines()
            .next()
            .unwrap()
            .contains(":1\t$ sh run.sh (exit 0, "),
        "{d}"
    );
    assert_eq!(changed(&d, "-"), ["step B ok"], "{d}");
    assert_eq!(
        changed(&d, "+"),
        ["step B failed", "key=[REDACTED:aws-access-key]"],
        "{d}"
    );
    // Masked lines show masked, as compared.
    assert!(d.contains("\n worker pid=<PID>\n scratch <TMP>\n"), "{d}");
    // The same with ids; --no-redact shows the key.
    let (_, by_ids, _) = text(&diff(&h, &["--normalize", "1", "4"]));
    assert_eq!(by_ids, d);
    let (_, raw, _) = text(&diff(&h, &["--normalize", "--no-redact", "1", "4"]));
    assert!(raw.contains(&format!("+key={KEY}")), "{raw}");
    // -U 0: only the changed lines.
    let (_, tight, _) = text(&diff(&h, &["--normalize", "-U", "0", "1", "4"]));
    assert!(
        tight.contains("@@ -5 +5,2 @@\n-step B ok\n+step B failed\n+key="),
        "{tight}"
    );
}

#[test]
fn bad_ids_and_missing_runs_are_one_line() {
    let h = session();
    let (code, _, err) = text(&diff(&h, &["x"]));
    assert_eq!(code, Some(2));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("\"x\" is no command id"), "{err}");
    let (code, _, err) = text(&diff(&h, &["--ok", "1", "3"]));
    assert_eq!(code, Some(2), "{err}");
    let (code, _, err) = text(&diff(&h, &["99"]));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("has no command 99"), "{err}");
    // `touch broken` ran once: there is no run before it.
    let (code, _, err) = text(&diff(&h, &["2"]));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no earlier run of `touch broken`"), "{err}");
}

#[test]
fn ask_carries_the_diff_in_its_prompt() {
    let mut h = session();
    let ask = |h: &Harness| {
        Command::new(omnish_bin())
            .args(["ask", "--diff", "--print-prompt", "what changed?"])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap())
            .env("HOME", h.home.path())
            .env("OMNISH_DATA_DIR", h.data())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let (code, prompt, err) = text(&ask(&h));
    assert_eq!(code, Some(0), "{err}");
    // Runs 3 and 4 differ only in volatile tokens: normalized, the prompt says they are the same.
    assert!(
        prompt.contains(":4 is the same as its previous run's (") && prompt.contains(":3)"),
        "{prompt}"
    );
    assert!(prompt.contains("Question: what changed?"), "{prompt}");
    // Fixed: the prompt carries what changed.
    h.run("rm broken");
    h.run("sh run.sh");
    let (code, prompt, err) = text(&ask(&h));
    assert_eq!(code, Some(0), "{err}");
    assert!(
        prompt.contains("differs from its previous run's"),
        "{prompt}"
    );
    assert!(
        prompt.contains("\n-step B failed\n") && prompt.contains("\n+step B ok\n"),
        "{prompt}"
    );
    assert!(!prompt.contains(KEY), "{prompt}");
}
