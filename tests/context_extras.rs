//! The sections besides the commands, through real wrapped shells: pinned notes (`omnish
//! note`), the environment snapshot (`--env`), the project's files (`--files`, `--changed`) and
//! loops of failed attempts.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output};

/// `omnish ARGS` from a second terminal in `dir`, on the harness's store.
fn omnish_in(h: &Harness, dir: &Path, args: &[&str]) -> Output {
    Command::new(omnish_bin())
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// A recorded bash whose PATH finds the omnish under test, so commands typed in it can call it.
fn bash_with_omnish() -> Harness {
    let bin = Path::new(omnish_bin())
        .parent()
        .unwrap()
        .display()
        .to_string();
    let path = format!("{bin}:{}", std::env::var("PATH").unwrap_or_default());
    let h = Harness::start_with(
        &["bash"],
        &[(".bashrc", "PS1='READY> '\n")],
        &[("PATH", &path)],
    );
    h.wait_prompts(1);
    h
}

fn have_or_skip(program: &str) -> bool {
    require(program)
}

#[test]
fn notes_come_first_by_priority_scoped_and_expiring() {
    let mut h = bash_with_omnish();
    let home = h.home.path().to_path_buf();
    let proj = home.join("proj");
    std::fs::create_dir_all(proj.join("sub")).unwrap();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    // Typed in the recorded shell, as a person would.
    h.run("omnish note add 'low priority, added first'");
    h.run("omnish note add 'deploys go to staging, never prod' --priority 5 --source ops");
    h.run("omnish note add 'low priority, added second'");
    h.run(&format!("omnish note add 'ci token is {token}' --key ci"));
    h.run("cd proj && omnish note add 'this project uses port 5433' --here --key db; cd ~");
    let added = h.run("omnish note add 'gone soon' --ttl 1s --key temp");
    h.run("echo built");
    // The note expires a second after it was added, which was before its command ended.
    wait_clock_past(added.ended_at + 1000);

    let text = ok_stdout(omnish_in(&h, &home, &["context", "--last"]));
    let notes_block = text.split("\n\n").next().unwrap();
    assert_eq!(
        notes_block,
        "=== Notes ===\n\
         - deploys go to staging, never prod (source: ops)\n\
         - low priority, added first\n\
         - low priority, added second\n\
         - ci token is [REDACTED:github-token]",
        "{text}"
    );
    assert!(text.contains("=== Commands ===\n\n"), "{text}");
    assert!(text.ends_with("$ echo built\nbuilt\n"), "{text}");
    assert!(!text.contains("gone soon"), "expired: {text}");
    assert!(!text.contains("5433"), "scoped to proj: {text}");

    // In the project (or below it) the scoped note shows too.
    let there = ok_stdout(omnish_in(&h, &proj.join("sub"), &["context", "--last"]));
    assert!(there.contains("- this project uses port 5433\n"), "{there}");
    // --no-notes leaves them out; json carries them.
    let plain = ok_stdout(omnish_in(&h, &home, &["context", "--last", "--no-notes"]));
    assert_eq!(
        plain,
        format!("# cwd: {}\n$ echo built\nbuilt\n", home.display())
    );
    let json = ok_stdout(omnish_in(
        &h,
        &home,
        &["context", "--last", "--format", "json"],
    ));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["notes"][0]["priority"], 5);
    assert_eq!(v["notes"][0]["source"], "ops");
    assert_eq!(v["notes"].as_array().unwrap().len(), 4);

    // Listing cleans up the expired note; rm and clear --here.
    let list = ok_stdout(omnish_in(&h, &home, &["note", "list"]));
    assert!(!list.contains("gone soon"), "{list}");
    let stored = std::fs::read_to_string(h.data().join("notes.json")).unwrap();
    assert!(!stored.contains("gone soon"), "{stored}");
    ok_stdout(omnish_in(&h, &home, &["note", "rm", "ci"]));
    let missing = omnish_in(&h, &home, &["note", "rm", "ci"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no note has key ci"));
    let cleared = ok_stdout(omnish_in(&h, &proj, &["note", "clear", "--here"]));
    assert_eq!(cleared, "removed 1 note\n");
    let left = ok_stdout(omnish_in(&h, &home, &["note", "list", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&left).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 3, "{left}");
    // A bad duration is a usage error.
    let bad = omnish_in(&h, &home, &["note", "add", "x", "--ttl", "soon"]);
    assert_eq!(bad.status.code(), Some(2));
    // A damaged notes file never stops context (one warning), nor is it replaced unasked.
    std::fs::write(h.data().join("notes.json"), "{broken").unwrap();
    let out = omnish_in(&h, &home, &["context", "--last"]);
    let text = ok_stdout(omnish_in(&h, &home, &["context", "--last"]));
    assert!(text.contains("$ echo built\nbuilt\n"), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("omnish: warning: notes left out: ")
            && stderr.contains("not a valid notes file"),
        "{stderr}"
    );
    let add = omnish_in(&h, &home, &["note", "add", "y"]);
    assert_eq!(add.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(h.data().join("notes.json")).unwrap(),
        "{broken"
    );
    ok_stdout(omnish_in(&h, &home, &["note", "clear"]));
    ok_stdout(omnish_in(&h, &home, &["note", "add", "y"]));
}

#[test]
fn notes_fit_the_budget_between_the_newest_command_and_older_ones() {
    let mut h = bash_with_omnish();
    let home = h.home.path().to_path_buf();
    for i in 0..6 {
        h.run(&format!("seq {} {}", i * 100, i * 100 + 60));
    }
    h.run("omnish note add 'the one thing to remember' --priority 9");
    h.run("echo newest");
    let text = ok_stdout(omnish_in(
        &h,
        &home,
        &["context", "--budget", "120", "--tokenizer", "chars4"],
    ));
    assert!(text.len() <= 480, "{text}");
    assert!(
        text.starts_with("=== Notes ===\n- the one thing to remember\n"),
        "{text}"
    );
    assert!(text.contains("$ echo newest\nnewest\n"), "{text}");
    assert!(text.contains("[omnish: budget 120 tokens"), "{text}");
    // With room for the newest command but not the note too, the note goes first.
    let tiny = ok_stdout(omnish_in(
        &h,
        &home,
        &["context", "--budget", "35", "--tokenizer", "chars4"],
    ));
    assert!(!tiny.contains("remember"), "{tiny}");
    assert!(tiny.contains("$ echo newest\nnewest\n"), "{tiny}");
    assert!(!tiny.contains("=== Notes ==="), "{tiny}");
    assert!(tiny.contains("1 note dropped"), "{tiny}");
}

#[test]
fn concurrent_note_writers_lose_nothing() {
    let h = Harness::bash(&[]);
    let home = h.home.path().to_path_buf();
    let children: Vec<_> = (0..12)
        .map(|i| {
            Command::new(omnish_bin())
                .args(["note", "add", &format!("note number {i}")])
                .env("OMNISH_DATA_DIR", h.data())
                .current_dir(&home)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let list = ok_stdout(omnish_in(&h, &home, &["note", "list", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&list).unwrap();
    let mut keys: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["key"].as_str().unwrap().to_string())
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 12, "{list}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(h.data().join("notes.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn env_in_a_git_repo_with_a_virtualenv() {
    if !have_or_skip("git") {
        return;
    }
    let mut h = bash_with_omnish();
    let home = h.home.path().to_path_buf();
    h.run("mkdir repo && cd repo && git init -q -b main && git -c user.name=t -c user.email=t@e commit -q --allow-empty -m 'first commit'");
    h.run("echo hi > new.txt");
    // A real virtualenv when python3 can make one quickly, else the directory activate points
    // VIRTUAL_ENV at (what the snapshot reads).
    let venv = home.join("repo/.venv");
    let made = have("python3")
        && Command::new("python3")
            .args(["-m", "venv", "--without-pip"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success());
    if !made {
        std::fs::create_dir_all(&venv).unwrap();
        std::fs::write(venv.join("pyvenv.cfg"), "version = 3.12.1\n").unwrap();
    }
    h.run(&format!("export VIRTUAL_ENV={}", venv.display()));
    h.run("export MY_SERVICE_TOKEN=tok-s3cr3t-value AWS_PROFILE=prod EDITOR=vim");
    h.run("false");
    // Inside the recorded shell, so the snapshot describes that shell.
    h.run("omnish context --env --last > ../env.txt");
    let text = std::fs::read_to_string(home.join("env.txt")).unwrap();
    let repo = home.join("repo").display().to_string();
    let shell_version = Command::new("bash")
        .args([
            "-c",
            "echo ${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}.${BASH_VERSINFO[2]}",
        ])
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&shell_version.stdout)
        .trim()
        .to_string();
    assert!(text.starts_with("=== Environment ===\nos: "), "{text}");
    assert!(
        text.contains(&format!("\nshell: bash {version}\n")),
        "{text}"
    );
    assert!(text.contains("\nterminal: 80x24\n"), "{text}");
    assert!(text.contains(&format!("\ncwd: {repo}\n")), "{text}");
    assert!(
        text.contains("\ngit: branch main, HEAD ")
            && text.contains(" (first commit), dirty: 0 changed, 2 untracked\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("\nvirtualenv: {} (Python ", venv.display())),
        "{text}"
    );
    assert!(text.contains("\n  EDITOR=vim\n"), "{text}");
    assert!(text.contains("\n  LANG=C.UTF-8\n"), "{text}");
    assert!(text.contains("\n  PATH="), "{text}");
    assert!(!text.contains("s3cr3t"), "{text}");
    assert!(!text.contains("MY_SERVICE_TOKEN"), "{text}");
    assert!(!text.contains("AWS_PROFILE"), "{text}");
    assert!(
        text.ends_with(&format!(
            "=== Commands ===\n\n# cwd: {repo}\n$ false\n[exit 1]\n"
        )),
        "{text}"
    );
}

#[test]
fn files_of_a_generated_tree_and_what_changed() {
    let mut h = Harness::bash(&[]);
    let home = h.home.path().to_path_buf();
    let proj = home.join("proj");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let write = |rel: &str| {
        let p = proj.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "x").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(old)
            .unwrap();
    };
    for i in 0..412 {
        write(&format!("src/generated/g{i:03}.rs"));
    }
    for f in [
        "src/main.rs",
        "Cargo.toml",
        "node_modules/left-pad/index.js",
        "target/debug/app",
        "logs/today.log",
        "docs/guide.md",
        "docs/drafts/secret-plan.md",
    ] {
        write(f);
    }
    std::fs::write(proj.join(".gitignore"), "logs/\n").unwrap();
    std::fs::write(proj.join(".omnishignore"), "drafts/\n").unwrap();
    for f in [".gitignore", ".omnishignore"] {
        std::fs::File::options()
            .write(true)
            .open(proj.join(f))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    h.run("cd proj && cargo-like-build-that-fails");
    // Edited while the build failed.
    h.run("echo 'fn main() {}' > src/main.rs");
    let text = ok_stdout(omnish_in(
        &h,
        &proj,
        &["context", "--files", "--changed", "--recent", "2"],
    ));
    let root = proj.display().to_string();
    assert!(
        text.starts_with(&format!(
            "=== Files in {root} (417 files) ===\n\
             docs/\n  guide.md\n\
             src/\n  generated/ (412 files)\n  main.rs\n\
             .gitignore\n.omnishignore\nCargo.toml\n\n"
        )),
        "{text}"
    );
    let re = regex::Regex::new(r"\n\n=== Changed since \d\d:\d\d \(1 file\) ===\nsrc/main.rs\n\n")
        .unwrap();
    assert!(re.is_match(&text), "{text}");
    // --depth 1: the root's entries only.
    let shallow = ok_stdout(omnish_in(
        &h,
        &proj,
        &["context", "--files", "--depth", "1", "--last", "--no-notes"],
    ));
    assert!(
        shallow.starts_with(&format!(
            "=== Files in {root} (417 files) ===\ndocs/ (1 file)\nsrc/ (413 files)\n"
        )),
        "{shallow}"
    );
    // Inside a budget the list shrinks, and the report says so.
    let tight = ok_stdout(omnish_in(
        &h,
        &proj,
        &[
            "context",
            "--files",
            "--last",
            "--budget",
            "60",
            "--tokenizer",
            "chars4",
        ],
    ));
    assert!(tight.len() <= 240, "{tight}");
    assert!(
        tight.contains("$ echo 'fn main() {}' > src/main.rs"),
        "{tight}"
    );
    let json = ok_stdout(omnish_in(
        &h,
        &proj,
        &["context", "--files", "--last", "--format", "json"],
    ));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["files"]["total_files"], 417);
    let collapsed = v["files"]["tree"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["kind"] == "collapsed")
        .unwrap();
    assert_eq!(collapsed["path"], "src/generated");
    assert_eq!(collapsed["files"], 412);
}

#[test]
fn a_loop_of_five_identical_failures_is_one_entry() {
    let mut h = Harness::bash(&[]);
    h.run("echo start");
    for _ in 0..5 {
        h.run("ls /no-such-dir-for-omnish");
    }
    // Edit and retry: the same command, a different output each time.
    for i in 0..3 {
        h.run(&format!("echo {i} > n"));
        h.run("sh -c 'echo attempt $(cat n) failed; exit 3'");
    }
    let text = ok_stdout(h.context(&["--recent", "20", "--no-notes"]));
    assert_eq!(
        text.matches("$ ls /no-such-dir-for-omnish").count(),
        1,
        "{text}"
    );
    let re = regex::Regex::new(
        r"\n\[exit 2\]\n\[failed 5 times in a row with the same error since \d\d:\d\d\]\n",
    )
    .unwrap();
    assert!(re.is_match(&text), "{text}");
    // Separated by successful edits, the retries are not a loop: each is shown.
    assert_eq!(text.matches("failed; exit 3'").count(), 3, "{text}");

    // Back to back, they are: the last whole, the earlier ones one line each.
    let retry = "sh -c 'n=$(cat n); echo $((n+1)) > n; echo attempt $n failed; exit 3'";
    for _ in 0..3 {
        h.run(retry);
    }
    let text = ok_stdout(h.context(&["--recent", "3", "--no-notes"]));
    let re = regex::Regex::new(&format!(
        r"^(# cwd: .*\n)?\$ {}\nattempt 4 failed\n\[exit 3\]\n\[failed 3 times in a row since \d\d:\d\d; earlier attempts:\]\n- \d\d:\d\d exit 3: attempt 2 failed\n- \d\d:\d\d exit 3: attempt 3 failed\n$",
        regex::escape(retry)
    ))
    .unwrap();
    assert!(re.is_match(&text), "{text}");
    let json = ok_stdout(h.context(&["--recent", "3", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["commands"].as_array().unwrap().len(), 1, "{json}");
    assert_eq!(v["commands"][0]["loop"]["failures"], 3);
    assert_eq!(v["commands"][0]["loop"]["same_error"], false);
}
