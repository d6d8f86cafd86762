//! Every shell script in the repository passes its checker: the hooks and init snippets in
//! `shell/` (embedded in the binary), the test and CI scripts (`scripts/`, `.ci/run`), the fuzz
//! runner and the fixture programs (the `docker exec` stand-in). bash and sh files pass
//! shellcheck (every severity, sources followed); zsh files pass `zsh -n`, a syntax check only,
//! as shellcheck does not read zsh; fish files pass `fish --no-execute`; nushell files pass
//! `nu-check`, nushell's own parse check.
//! `completions/` is left out: clap_complete writes it, and `tests/cli_docs.rs` keeps it equal
//! to what clap_complete prints.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, PartialEq)]
enum Kind {
    /// bash or sh: checked by shellcheck, which takes the shell from the `#!` line, else a
    /// `# shellcheck shell=` line, else the name (`.bash`, `.sh`).
    Shellcheck,
    /// Checked by `zsh -n`.
    Zsh,
    /// Checked by `fish --no-execute`.
    Fish,
    /// Checked by nushell's `nu-check`.
    Nu,
}

/// What checks `path`, from its `#!` line, else its name; None for a file that is no shell
/// script.
fn kind(path: &Path) -> Option<Kind> {
    let text = std::fs::read(path).ok()?;
    let first = text.split(|&b| b == b'\n').next().unwrap_or_default();
    let interpreter = std::str::from_utf8(first)
        .ok()
        .and_then(|l| l.strip_prefix("#!"))
        .and_then(|l| l.split_whitespace().find(|w| !w.ends_with("/env")))
        .and_then(|w| w.rsplit('/').next());
    match interpreter {
        Some("bash" | "sh" | "dash") => return Some(Kind::Shellcheck),
        Some("zsh") => return Some(Kind::Zsh),
        Some("fish") => return Some(Kind::Fish),
        Some("nu") => return Some(Kind::Nu),
        Some(_) => return None,
        None => {}
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("bash" | "sh") => Some(Kind::Shellcheck),
        Some("zsh") => Some(Kind::Zsh),
        Some("fish") => Some(Kind::Fish),
        Some("nu") => Some(Kind::Nu),
        _ => None,
    }
}

/// The repository's files, as git would list them (ignored files such as `target/` left out),
/// hidden directories (`.ci`) included, `.git` and `completions/` not.
fn repository_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ignore::WalkBuilder::new(root)
        .hidden(false)
        .filter_entry(|e| e.file_name() != ".git" && e.file_name() != "completions")
        .build()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    files
}

fn output_text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn every_shell_script_passes_shellcheck_or_zsh_n() {
    if !(require("shellcheck") && require("zsh") && require("fish") && require("nu")) {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = Vec::new();
    let mut failures = Vec::new();
    for path in repository_files(root) {
        let name = path.strip_prefix(root).unwrap().to_path_buf();
        let Some(kind) = kind(&path) else {
            // Everything in shell/ is a script the binary embeds: it must be checked.
            assert!(
                !name.starts_with("shell"),
                "{}: no checker for this kind of file; add one here",
                name.display()
            );
            continue;
        };
        let out = match kind {
            // From the root, so that `# shellcheck source=scripts/...` is found.
            Kind::Shellcheck => Command::new("shellcheck")
                .args(["--external-sources", "--severity=style"])
                .arg(&name)
                .current_dir(root)
                .output(),
            Kind::Zsh => Command::new("zsh")
                .arg("-n")
                .arg(&name)
                .current_dir(root)
                .output(),
            Kind::Fish => Command::new("fish")
                .arg("--no-execute")
                .arg(&name)
                .current_dir(root)
                .output(),
            // No config files: the check must not depend on the user's.
            Kind::Nu => Command::new("nu")
                .args(["-n", "--no-std-lib", "-c"])
                .arg(format!("nu-check --debug r#'{}'#", name.display()))
                .current_dir(root)
                .output(),
        }
        .unwrap();
        if !out.status.success() {
            failures.push(format!(
                "{} ({kind:?}):\n{}",
                name.display(),
                output_text(&out)
            ));
        }
        checked.push(name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The walk found them all: the hooks, the init snippets and the CI scripts.
    for must in [
        "shell/omnish.bash",
        "shell/exec.bash",
        "shell/init.bash",
        "shell/init.zsh",
        "shell/zsh/omnish.zsh",
        "shell/zsh/zshenv.zsh",
        "shell/fish/omnish.fish",
        "shell/fish/vendor.fish",
        "shell/fish/nest.fish",
        "shell/init.fish",
        "shell/nu/omnish.nu",
        "shell/init.nu",
        "shell/nest/boot.sh",
        "shell/nest/stage2.sh",
        "scripts/test.sh",
        "scripts/test-deps.sh",
        ".ci/run",
        "fuzz/run-all.sh",
        "tests/fixtures/fake-docker.sh",
        "tests/fixtures/fake-kubectl.sh",
    ] {
        assert!(
            checked.iter().any(|p| p == Path::new(must)),
            "{must} not checked: {checked:?}"
        );
    }
}

#[test]
fn a_script_is_known_by_its_name_or_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    assert_eq!(kind(&write("a.zsh", "")), Some(Kind::Zsh));
    assert_eq!(kind(&write("a.bash", "# hooks\n")), Some(Kind::Shellcheck));
    assert_eq!(
        kind(&write("a.sh", "#!/bin/bash\n")),
        Some(Kind::Shellcheck)
    );
    assert_eq!(
        kind(&write("run", "#!/usr/bin/env bash\nset -e\n")),
        Some(Kind::Shellcheck)
    );
    assert_eq!(kind(&write("b", "#!/bin/sh -e\n")), Some(Kind::Shellcheck));
    assert_eq!(kind(&write("z", "#!/usr/bin/env zsh\n")), Some(Kind::Zsh));
    assert_eq!(kind(&write("f.fish", "")), Some(Kind::Fish));
    assert_eq!(kind(&write("a.nu", "")), Some(Kind::Nu));
    assert_eq!(kind(&write("c.sh", "#!/usr/bin/env python3\n")), None);
    assert_eq!(kind(&write("d.rs", "fn main() {}\n")), None);
    assert_eq!(kind(&write("e", "no script\n")), None);
}
