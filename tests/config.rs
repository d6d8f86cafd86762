//! The config file, the environment and flags: precedence as `omnish config` reports it and as
//! `omnish context` applies it; bad files are one clear error naming file, line and key.

mod common;

use common::*;
use std::process::Command;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `omnish ARGS` with the config file `config` (written to a temp dir) and `env`.
fn run(
    home: &std::path::Path,
    config: Option<&str>,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let path = home.join("config.toml");
    if let Some(c) = config {
        std::fs::write(&path, c).unwrap();
    }
    let mut cmd = Command::new(omnish_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", home)
        // No file: /dev/null (a missing file named by OMNISH_CONFIG is an error).
        .env(
            "OMNISH_CONFIG",
            if config.is_some() {
                path.as_path()
            } else {
                std::path::Path::new("/dev/null")
            },
        );
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_piped(cmd, "")
}

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn flags_beat_environment_beat_file_beat_defaults() {
    let home = tempfile::tempdir().unwrap();
    let file = "# mine\n[context]\nmax_lines = 7\nrecent = 3\nformat = \"markdown\"\n\n[ask]\ncommand = \"llm -m gpt-4o-mini\"\n";
    let out = run(
        home.path(),
        Some(file),
        &["config", "--format", "json", "--set", "context.recent=5"],
        &[
            ("OMNISH_CONTEXT_RECENT", "4"),
            ("OMNISH_CONTEXT_FORMAT", "json"),
        ],
    );
    let v = json(&out);
    let key = |k: &str| &v["keys"][k];
    assert_eq!(key("context.max_lines")["value"], 7);
    assert_eq!(key("context.max_lines")["source"], "file");
    assert_eq!(key("context.max_lines")["detail"], 3);
    assert_eq!(key("context.format")["value"], "json");
    assert_eq!(key("context.format")["source"], "env");
    assert_eq!(key("context.recent")["value"], 5);
    assert_eq!(key("context.recent")["source"], "flag");
    assert_eq!(key("ask.command")["value"], "llm -m gpt-4o-mini");
    assert_eq!(key("context.max_line_width")["value"], 500);
    assert_eq!(key("context.max_line_width")["source"], "default");
    assert_eq!(key("keys.ask")["value"], "\\C-xa");

    let out = run(
        home.path(),
        Some(file),
        &["config"],
        &[("OMNISH_CONTEXT_RECENT", "4")],
    );
    let t = text(&out.stdout);
    assert!(t.contains("context.recent = 4"), "{t}");
    assert!(t.contains("# env OMNISH_CONTEXT_RECENT"), "{t}");
    assert!(t.contains("# file, line 3"), "{t}");
}

#[test]
fn context_takes_its_defaults_from_the_config_and_flags_win() {
    let mut h = Harness::bash(&[]);
    h.run("seq 1 50");
    h.run("echo second");
    h.run("echo third");
    let home = h.home.path().to_path_buf();
    let data = h.data();
    let data = data.to_str().unwrap();
    let file = "[context]\nrecent = 2\nmax_lines = 4\nformat = \"json\"\n";
    let ctx = |extra: &[&str], env: &[(&str, &str)]| {
        let mut env = env.to_vec();
        env.push(("OMNISH_DATA_DIR", data));
        let mut args = vec!["context"];
        args.extend_from_slice(extra);
        json(&run(&home, Some(file), &args, &env))
    };
    // File: 2 commands in json.
    let v = ctx(&[], &[]);
    assert_eq!(v["commands"].as_array().unwrap().len(), 2);
    // Environment beats the file, flags beat the environment.
    let v = ctx(&[], &[("OMNISH_CONTEXT_RECENT", "3")]);
    let cmds = v["commands"].as_array().unwrap();
    assert_eq!(cmds.len(), 3);
    assert_eq!(cmds[0]["output_lines"], 50);
    assert_eq!(cmds[0]["omitted_lines"], 46, "max_lines 4 from the file");
    let v = ctx(&["--recent", "1"], &[("OMNISH_CONTEXT_RECENT", "3")]);
    assert_eq!(v["commands"].as_array().unwrap().len(), 1);
    let v = ctx(&["--recent", "3", "--max-lines", "10"], &[]);
    assert_eq!(v["commands"][0]["omitted_lines"], 40);
    // The format flag beats the file.
    let out = run(
        &home,
        Some(file),
        &["context", "--format", "text"],
        &[("OMNISH_DATA_DIR", data)],
    );
    assert!(
        text(&out.stdout).contains("$ echo third"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn data_dir_from_the_file_is_absolute_and_env_still_wins() {
    let home = tempfile::tempdir().unwrap();
    let out = run(
        home.path(),
        Some("data_dir = \"store\"\n"),
        &["config", "--format", "json"],
        &[],
    );
    let v = json(&out);
    let want = home.path().join("store");
    assert_eq!(v["keys"]["data_dir"]["value"], want.to_str().unwrap());
    let out = run(
        home.path(),
        Some("data_dir = \"store\"\n"),
        &["config", "--format", "json"],
        &[
            ("OMNISH_DATA_DIR", "/tmp/elsewhere"),
            ("OMNISH_RECORD_PRIVATE", "1"),
        ],
    );
    let v = json(&out);
    assert_eq!(v["keys"]["data_dir"]["value"], "/tmp/elsewhere");
    assert_eq!(v["keys"]["record.private_leading_space"]["value"], false);
    assert_eq!(v["keys"]["record.private_leading_space"]["source"], "env");
}

#[test]
fn models_added_in_the_file_set_the_budget() {
    let mut h = Harness::bash(&[]);
    h.run("seq 1 3000");
    let home = h.home.path().to_path_buf();
    let data = h.data();
    let file = "[models.tiny-local]\nwindow = 1000\ntokenizer = \"chars4\"\nbudget_share = 0.3\n";
    let out = run(
        &home,
        Some(file),
        &[
            "context",
            "--model",
            "tiny-local",
            "--format",
            "json",
            "--max-lines",
            "0",
        ],
        &[("OMNISH_DATA_DIR", data.to_str().unwrap())],
    );
    let v = json(&out);
    assert_eq!(v["budget"]["budget"], 300);
    assert_eq!(v["budget"]["tokenizer"], "chars4");
    // An unknown model names the config table.
    let out = run(
        &home,
        Some(file),
        &["context", "--model", "nope-9"],
        &[("OMNISH_DATA_DIR", data.to_str().unwrap())],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("[models] table"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn bad_config_files_are_one_error_naming_file_line_and_key() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.toml");
    let file = path.display().to_string();
    let cases: &[(&str, &str)] = &[
        (
            "[context]\nrecent = 3\nmax_lnes = 5\n",
            ":3: unknown key 'context.max_lnes'",
        ),
        (
            "[ask]\nshell = \"yes\"\n",
            ":2: key 'ask.shell': expected true or false, found string",
        ),
        (
            "[context]\nrecent = \"ten\"\n",
            ":2: key 'context.recent': expected a non-negative integer",
        ),
        (
            "[context]\nformat = \"yaml\"\n",
            ":2: key 'context.format': 'yaml' is not one of text, markdown, json",
        ),
        ("verbose = true\n", ":1: unknown key 'verbose'"),
        ("[context\nrecent = 3\n", ":1: invalid TOML"),
        (
            "[models.x]\ntokenizer = \"gpt2\"\nwindow = 9\n",
            ":2: key 'models.x.tokenizer': unknown tokenizer 'gpt2'",
        ),
    ];
    for (body, want) in cases {
        for sub in [
            &["config"][..],
            &["context"][..],
            &["ask", "--print-prompt"][..],
        ] {
            let out = run(
                home.path(),
                Some(body),
                sub,
                &[("OMNISH_DATA_DIR", "/nonexistent")],
            );
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{sub:?} {body:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(&format!("{file}{want}")), "{body:?}: {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    // A bad environment value names the variable.
    let out = run(
        home.path(),
        Some(""),
        &["config"],
        &[("OMNISH_CONTEXT_MAX_LINES", "lots")],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("OMNISH_CONTEXT_MAX_LINES"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn readme_documents_every_key() {
    let home = tempfile::tempdir().unwrap();
    let v = json(&run(
        home.path(),
        None,
        &["config", "--format", "json"],
        &[],
    ));
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    for (name, k) in v["keys"].as_object().unwrap() {
        assert!(
            readme.contains(&format!("| `{name}` |")),
            "README lacks key {name}"
        );
        if let Some(env) = k["env"].as_str() {
            assert!(readme.contains(env), "README lacks {env}");
        }
    }
}

#[test]
fn completions_and_man_print_the_committed_files() {
    let root = env!("CARGO_MANIFEST_DIR");
    let home = tempfile::tempdir().unwrap();
    for (args, file) in [
        (&["completions", "bash"][..], "completions/omnish.bash"),
        (&["completions", "zsh"][..], "completions/_omnish"),
        (&["completions", "fish"][..], "completions/omnish.fish"),
        (&["man"][..], "man/omnish.1"),
    ] {
        let out = run(home.path(), None, args, &[]);
        assert!(out.status.success());
        assert_eq!(
            text(&out.stdout),
            std::fs::read_to_string(format!("{root}/{file}")).unwrap()
        );
    }
}
