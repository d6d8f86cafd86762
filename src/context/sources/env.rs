//! The environment source (`--env`): what a language model asks first. OS and kernel, shell
//! and version, terminal size, working directory, git state, active toolchains (virtualenv,
//! conda, nvm, rustup) and the environment variables that pass an allow list and no deny
//! pattern.
//!
//! The front end hands over the variables, working directory and terminal size to describe
//! ([`EnvSource`]); nothing here reads the process environment. What is read: `/etc/os-release`,
//! `/proc/sys/kernel/osrelease` (uname), `<shell> --version`, `git status --porcelain=v2
//! --branch` and `git log -1` in the cwd (run with the given variables and
//! `GIT_OPTIONAL_LOCKS=0`, so they never take the index lock), a virtualenv's `pyvenv.cfg`, a
//! `rust-toolchain(.toml)` above the cwd and rustup's `settings.toml`.
//!
//! Both variable lists are glob patterns (the `globset` crate, case-insensitive): a variable is
//! shown when its name matches an allow pattern and no deny pattern. Values are redacted as
//! `NAME=value` (so name-based rules apply) and shortened to [`VALUE_WIDTH`] chars.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::context::model::{EnvSection, GitState};
use crate::context::{stages::redact, stages::truncate};

/// Which variables the snapshot shows (config keys `env.allow` and `env.deny`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvSettings {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
}

/// Shown unless denied (comma-separated glob patterns, matched case-insensitively).
pub(crate) const DEFAULT_ALLOW: &str = "PATH, HOME, USER, LOGNAME, SHELL, TERM, TERM_PROGRAM, COLORTERM, LANG, \
     LANGUAGE, LC_*, TZ, EDITOR, VISUAL, PAGER, HOSTNAME, DISPLAY, WAYLAND_DISPLAY, \
     XDG_SESSION_TYPE, TMUX, VIRTUAL_ENV, CONDA_DEFAULT_ENV, CONDA_PREFIX, NVM_BIN, \
     NODE_ENV, PYTHONPATH, RUSTUP_TOOLCHAIN, CARGO_HOME, RUSTUP_HOME, GOPATH, \
     GOROOT, JAVA_HOME, CC, CXX, CI";

/// Never shown, even when allowed.
pub(crate) const DEFAULT_DENY: &str = "*_KEY, *_KEY_*, *KEY_ID, *_SECRET, *_SECRET_*, *_TOKEN, *_TOKEN_*, *_PASSWORD, \
     *_PASSWD, *_PASS, *_PWD, *_CREDENTIAL*, *_AUTH, *_AUTH_*, *_COOKIE*, \
     *_SESSION_KEY, *PRIVATE*, AWS_*, GITHUB_*, GH_*, GITLAB_*, AZURE_*, GOOGLE_*, \
     GCP_*, OPENAI_*, ANTHROPIC_*, HF_*, NPM_TOKEN, DATABASE_URL, *_DSN";

/// The patterns of a comma-separated list (as the config's `env.allow` and `env.deny` spell
/// their defaults).
pub(crate) fn patterns(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

impl Default for EnvSettings {
    fn default() -> Self {
        EnvSettings {
            allow: patterns(DEFAULT_ALLOW),
            deny: patterns(DEFAULT_DENY),
        }
    }
}

/// What to describe, handed over by the front end.
#[derive(Debug, Clone, Default)]
pub(crate) struct EnvSource {
    /// The environment variables of the shell being described.
    pub vars: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// Columns and rows, if known.
    pub terminal: Option<(u16, u16)>,
    /// The shell program (`/bin/bash`), if known better than `$SHELL` (the recorded session's).
    pub shell: Option<String>,
    pub settings: EnvSettings,
}

/// Widest variable value shown, in chars (head and tail kept).
pub(crate) const VALUE_WIDTH: usize = 400;

fn glob_set(patterns: &[String], which: &str) -> Result<GlobSet> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        let glob = GlobBuilder::new(p)
            .case_insensitive(true)
            .build()
            .with_context(|| format!("env.{which}: invalid pattern '{p}'"))?;
        b.add(glob);
    }
    b.build()
        .with_context(|| format!("env.{which}: invalid patterns"))
}

/// The variables of `vars` that `settings` lets through, sorted by name, values redacted (when
/// `redacting`) and shortened.
pub(crate) fn filter_vars(
    vars: &[(String, String)],
    settings: &EnvSettings,
    redacting: bool,
) -> Result<Vec<(String, String)>> {
    let allow = glob_set(&settings.allow, "allow")?;
    let deny = glob_set(&settings.deny, "deny")?;
    let mut out: Vec<(String, String)> = vars
        .iter()
        .filter(|(k, _)| allow.is_match(k) && !deny.is_match(k))
        .map(|(k, v)| {
            let v = if redacting {
                let line = format!("{k}={v}");
                let clean = redact::redact(&line);
                match clean.strip_prefix(&format!("{k}=")) {
                    Some(rest) => rest.to_string(),
                    None => "[REDACTED]".to_string(),
                }
            } else {
                v.clone()
            };
            (k.clone(), truncate::shorten(&v, 0, "", VALUE_WIDTH))
        })
        .collect();
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0);
    Ok(out)
}

/// The snapshot of `src`.
pub(crate) fn snapshot(src: &EnvSource, redacting: bool) -> Result<EnvSection> {
    let var = |name: &str| {
        src.vars
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    };
    let clean = |s: String| {
        if redacting {
            redact::redact(&s).into_owned()
        } else {
            s
        }
    };
    let shell_prog = src.shell.clone().or_else(|| var("SHELL").map(String::from));
    let mut env = EnvSection {
        os: os_name(),
        kernel: kernel(),
        shell: shell_prog.as_deref().map(|s| shell_version(s, &src.vars)),
        terminal: src.terminal,
        cwd: clean(src.cwd.display().to_string()),
        git: git_state(&src.cwd, &src.vars).map(|mut g| {
            g.subject = g.subject.map(clean);
            g.branch = g.branch.map(clean);
            g.upstream = g.upstream.map(clean);
            g
        }),
        toolchains: Vec::new(),
        vars: filter_vars(&src.vars, &src.settings, redacting)?,
        vars_dropped: false,
    };
    if let Some(v) = var("VIRTUAL_ENV") {
        let version = python_version(Path::new(v));
        let text = match version {
            Some(ver) => format!("{v} (Python {ver})"),
            None => v.to_string(),
        };
        env.toolchains.push(("virtualenv".into(), clean(text)));
    }
    if let Some(name) = var("CONDA_DEFAULT_ENV") {
        let text = match var("CONDA_PREFIX") {
            Some(p) if p != name => format!("{name} ({p})"),
            _ => name.to_string(),
        };
        env.toolchains.push(("conda".into(), clean(text)));
    }
    if let Some(bin) = var("NVM_BIN") {
        // ~/.nvm/versions/node/v20.11.0/bin
        let version = Path::new(bin)
            .parent()
            .and_then(|p| p.file_name())
            .map(|v| v.to_string_lossy().into_owned())
            .filter(|v| v.starts_with('v'))
            .unwrap_or_else(|| bin.to_string());
        env.toolchains
            .push(("nvm".into(), clean(format!("node {version}"))));
    }
    if let Some(t) = rustup_toolchain(&src.cwd, &var) {
        env.toolchains.push(("rustup".into(), clean(t)));
    }
    Ok(env)
}

/// `PRETTY_NAME` of /etc/os-release (else `NAME VERSION`).
fn os_name() -> Option<String> {
    let text = std::fs::read_to_string("/etc/os-release")
        .or_else(|_| std::fs::read_to_string("/usr/lib/os-release"))
        .ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches('"').to_string())
            .filter(|v| !v.is_empty())
    };
    field("PRETTY_NAME").or_else(|| {
        let name = field("NAME")?;
        Some(match field("VERSION") {
            Some(v) => format!("{name} {v}"),
            None => name,
        })
    })
}

/// `Linux 6.8.0-45-generic x86_64`.
fn kernel() -> Option<String> {
    let u = nix::sys::utsname::uname().ok()?;
    Some(format!(
        "{} {} {}",
        u.sysname().to_string_lossy(),
        u.release().to_string_lossy(),
        u.machine().to_string_lossy()
    ))
}

/// Runs `cmd` for at most `limit`, returning its stdout when it exited 0.
fn output_within(mut cmd: Command, limit: Duration) -> Option<String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(2)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `bash 5.2.21`: the shell's name and the first version number its `--version` prints (the
/// name alone for shells without `--version`, or when it takes too long).
fn shell_version(shell: &str, vars: &[(String, String)]) -> String {
    let name = Path::new(shell)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| shell.to_string());
    if !matches!(
        name.as_str(),
        "bash" | "zsh" | "fish" | "ksh" | "mksh" | "tcsh" | "nu" | "elvish" | "xonsh"
    ) {
        return name;
    }
    let mut cmd = Command::new(shell);
    cmd.arg("--version").env_clear().envs(vars.iter().cloned());
    let version = output_within(cmd, Duration::from_secs(2)).and_then(|out| {
        let first = out.lines().next()?.to_string();
        let re = regex::Regex::new(r"\d+(\.\d+)+").expect("static regex");
        re.find(&first).map(|m| m.as_str().to_string())
    });
    match version {
        Some(v) => format!("{name} {v}"),
        None => name,
    }
}

/// The git state of the work tree holding `cwd`, if any.
fn git_state(cwd: &Path, vars: &[(String, String)]) -> Option<GitState> {
    let git = |args: &[&str]| {
        let mut cmd = Command::new("git");
        cmd.arg("-C")
            .arg(cwd)
            .args(args)
            .env_clear()
            .envs(vars.iter().cloned())
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("LC_ALL", "C");
        output_within(cmd, Duration::from_secs(5))
    };
    let status = git(&["status", "--porcelain=v2", "--branch"])?;
    let mut g = parse_status(&status);
    if g.head.is_some() {
        g.subject = git(&["log", "-1", "--format=%s"])
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .map(|s| match s.char_indices().nth(SUBJECT_WIDTH) {
                Some((at, _)) => format!("{}…", &s[..at]),
                None => s,
            });
    }
    Some(g)
}

/// Widest HEAD subject shown, in chars (the rest becomes `…`).
const SUBJECT_WIDTH: usize = 72;

/// Parses `git status --porcelain=v2 --branch`.
fn parse_status(text: &str) -> GitState {
    let mut g = GitState::default();
    for line in text.lines() {
        if let Some(oid) = line.strip_prefix("# branch.oid ") {
            if oid != "(initial)" {
                g.head = Some(oid.chars().take(10).collect());
            }
        } else if let Some(head) = line.strip_prefix("# branch.head ") {
            if head != "(detached)" {
                g.branch = Some(head.to_string());
            }
        } else if let Some(up) = line.strip_prefix("# branch.upstream ") {
            g.upstream = Some(up.to_string());
        } else if let Some(ab) = line.strip_prefix("# branch.ab ") {
            for part in ab.split_whitespace() {
                if let Some(a) = part.strip_prefix('+') {
                    g.ahead = a.parse().unwrap_or(0);
                } else if let Some(b) = part.strip_prefix('-') {
                    g.behind = b.parse().unwrap_or(0);
                }
            }
        } else if line.starts_with("? ") {
            g.untracked += 1;
        } else if line.starts_with("1 ") || line.starts_with("2 ") || line.starts_with("u ") {
            g.changed += 1;
        }
    }
    g
}

/// `3.12.1` from a virtualenv's `pyvenv.cfg`.
fn python_version(venv: &Path) -> Option<String> {
    let text = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        matches!(k.trim(), "version" | "version_info").then(|| v.trim().to_string())
    })
}

/// The rustup toolchain in effect: `RUSTUP_TOOLCHAIN`, else a `rust-toolchain(.toml)` in the
/// cwd or above it, else rustup's default (`$RUSTUP_HOME/settings.toml`, default
/// `~/.rustup`); `None` when there is no rustup.
fn rustup_toolchain<'a>(cwd: &Path, var: &dyn Fn(&str) -> Option<&'a str>) -> Option<String> {
    if let Some(t) = var("RUSTUP_TOOLCHAIN") {
        return Some(format!("{t} (RUSTUP_TOOLCHAIN)"));
    }
    let quoted = |text: &str, key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
        })
    };
    for dir in cwd.ancestors() {
        if let Ok(text) = std::fs::read_to_string(dir.join("rust-toolchain.toml")) {
            if let Some(c) = quoted(&text, "channel") {
                return Some(format!(
                    "{c} ({})",
                    dir.join("rust-toolchain.toml").display()
                ));
            }
        }
        if let Ok(text) = std::fs::read_to_string(dir.join("rust-toolchain")) {
            let t = text.trim();
            if !t.is_empty() && !t.contains('\n') && !t.starts_with('[') {
                return Some(format!("{t} ({})", dir.join("rust-toolchain").display()));
            }
        }
    }
    let home = var("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| Path::new(h).join(".rustup")))?;
    let text = std::fs::read_to_string(home.join("settings.toml")).ok()?;
    quoted(&text, "default_toolchain").map(|t| format!("{t} (default)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn allow_and_deny_lists_with_globs() {
        let v = vars(&[
            ("PATH", "/usr/bin:/bin"),
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "C"),
            ("HOME", "/home/me"),
            ("RANDOM_THING", "x"),
            ("AWS_REGION", "eu-west-1"),
            ("EDITOR", "vim"),
        ]);
        let got = filter_vars(&v, &EnvSettings::default(), true).unwrap();
        let names: Vec<_> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["EDITOR", "HOME", "LANG", "LC_ALL", "PATH"]);
        // A custom allow list with a glob, and a deny pattern that wins over it.
        let s = EnvSettings {
            allow: vec!["MY_*".into(), "path".into()],
            deny: vec!["*_token".into()],
        };
        let v = vars(&[
            ("MY_APP", "1"),
            ("MY_API_TOKEN", "abc"),
            ("PATH", "/bin"),
            ("HOME", "/h"),
        ]);
        let got = filter_vars(&v, &s, true).unwrap();
        assert_eq!(got, vars(&[("MY_APP", "1"), ("PATH", "/bin")]));
        let bad = EnvSettings {
            allow: vec!["[".into()],
            deny: vec![],
        };
        let err = filter_vars(&v, &bad, true).unwrap_err();
        assert!(
            format!("{err:#}").contains("env.allow: invalid pattern '['"),
            "{err:#}"
        );
    }

    #[test]
    fn allowed_values_are_still_redacted_and_shortened() {
        let key = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        let s = EnvSettings {
            allow: vec!["*".into()],
            deny: vec![],
        };
        let long = "x".repeat(2000);
        let v = vars(&[
            ("SOME_TOKEN", "s3cr3t-value-here"),
            ("PLAIN", &key),
            ("LONG", &long),
        ]);
        let got = filter_vars(&v, &s, true).unwrap();
        let text = format!("{got:?}");
        assert!(!text.contains("s3cr3t-value-here"), "{text}");
        assert!(!text.contains(&key), "{text}");
        let long_shown = &got.iter().find(|(k, _)| k == "LONG").unwrap().1;
        assert!(long_shown.chars().count() < 500, "{long_shown}");
        assert!(long_shown.contains("chars omitted"));
        // Without redaction the value is as it was.
        let raw = filter_vars(&v, &s, false).unwrap();
        assert!(format!("{raw:?}").contains("s3cr3t-value-here"));
    }

    #[test]
    fn default_deny_covers_the_usual_secrets() {
        let s = EnvSettings {
            allow: vec!["*".into()],
            ..EnvSettings::default()
        };
        let v = vars(&[
            ("OPENAI_API_KEY", "x"),
            ("STRIPE_SECRET", "x"),
            ("GITHUB_TOKEN", "x"),
            ("DB_PASSWORD", "x"),
            ("GOOGLE_APPLICATION_CREDENTIALS", "x"),
            ("AWS_PROFILE", "x"),
            ("SLACK_BOT_TOKEN", "x"),
            ("MY_CREDENTIALS_FILE", "x"),
            ("TERM", "xterm"),
        ]);
        let got = filter_vars(&v, &s, true).unwrap();
        assert_eq!(got, vars(&[("TERM", "xterm")]));
    }

    #[test]
    fn git_status_parses() {
        let g = parse_status(
            "# branch.oid 1234567890abcdef1234567890abcdef12345678\n\
             # branch.head main\n\
             # branch.upstream origin/main\n\
             # branch.ab +2 -1\n\
             1 .M N... 100644 100644 100644 aa bb src/a.rs\n\
             2 R. N... 100644 100644 100644 aa bb R100 b.rs\ta.rs\n\
             ? new.txt\n",
        );
        assert_eq!(g.branch.as_deref(), Some("main"));
        assert_eq!(g.head.as_deref(), Some("1234567890"));
        assert_eq!((g.ahead, g.behind, g.changed, g.untracked), (2, 1, 2, 1));
        assert_eq!(
            g.describe(),
            "branch main, HEAD 1234567890, upstream origin/main ahead 2 behind 1, \
             dirty: 2 changed, 1 untracked"
        );
        let g = parse_status("# branch.oid (initial)\n# branch.head (detached)\n");
        assert_eq!(g.describe(), "detached HEAD, no commits yet, clean");
    }

    #[test]
    fn toolchains_from_files() {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join(".venv");
        std::fs::create_dir_all(&venv).unwrap();
        std::fs::write(
            venv.join("pyvenv.cfg"),
            "home = /usr/bin\nversion = 3.12.1\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("rust-toolchain.toml"),
            "[toolchain]\nchannel = \"1.85.0\"\n",
        )
        .unwrap();
        let sub = dir.path().join("src");
        std::fs::create_dir_all(&sub).unwrap();
        let src = EnvSource {
            vars: vars(&[
                ("VIRTUAL_ENV", venv.to_str().unwrap()),
                ("NVM_BIN", "/h/.nvm/versions/node/v20.11.0/bin"),
                ("CONDA_DEFAULT_ENV", "base"),
                ("CONDA_PREFIX", "/opt/conda"),
            ]),
            cwd: sub.clone(),
            terminal: Some((120, 40)),
            shell: Some("/bin/sh".into()),
            settings: EnvSettings::default(),
        };
        let env = snapshot(&src, true).unwrap();
        let tc: Vec<(&str, &str)> = env
            .toolchains
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            tc[0],
            (
                "virtualenv",
                &*format!("{} (Python 3.12.1)", venv.display())
            )
        );
        assert_eq!(tc[1], ("conda", "base (/opt/conda)"));
        assert_eq!(tc[2], ("nvm", "node v20.11.0"));
        assert!(tc[3].1.starts_with("1.85.0 ("), "{tc:?}");
        assert_eq!(env.terminal, Some((120, 40)));
        assert_eq!(env.shell.as_deref(), Some("sh"));
        assert_eq!(env.cwd, sub.display().to_string());
        assert!(env.git.is_none(), "not a git repo");
        let facts = env.facts();
        assert!(facts.iter().any(|(k, v)| *k == "terminal" && v == "120x40"));
    }
}
