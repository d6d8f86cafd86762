//! `omnish exec [--session ID|current|new] [--label TEXT] -- PROGRAM ARGS...`: run a program
//! passed through unchanged ([`crate::record::exec`]) and record it as one command by author
//! `--label` (default `exec`), in a session attached to the recorded terminal it runs in (or the
//! one named), else in a session of its own ([`crate::store::attached`]).
//!
//! Typed at the prompt of a recorded terminal with both outputs on that terminal (and no
//! `--session`), it records nothing of its own: the terminal's record of the line holds the
//! output already. `--session current` records it anyway.
//!
//! Only what the user got wrong stops the program from running (exit 2: a bad `--session` or
//! `--label`, no program); nothing about the store does: a configuration or a store that cannot
//! be used costs one warning on stderr and the program runs unrecorded.

use crate::cli::ExecArgs;
use crate::cmd::Run;
use crate::error::Error;
use crate::record::exec::{self, Recording};
use crate::store::{self, attached};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// The author of a record `omnish exec` makes without `--label`.
pub(crate) const DEFAULT_LABEL: &str = "exec";
/// Longest label, in bytes.
const MAX_LABEL: usize = 64;

/// Where the record goes, as asked.
enum Where {
    New,
    Current,
    Id(String),
}

impl Run for ExecArgs {
    fn run(self) -> Result<i32> {
        let author = label(self.label.as_deref())?;
        let asked = match self.session.as_deref() {
            None => None,
            Some("new") => Some(Where::New),
            Some("current") => Some(Where::Current),
            Some(id) if id.is_empty() || id.len() > 128 => {
                return Err(Error::usage(
                    "--session: give `new`, `current` or a session id (see `omnish sessions list`)",
                )
                .into());
            }
            Some(id) => Some(Where::Id(id.to_string())),
        };
        let current = std::env::var("OMNISH_SESSION_ID")
            .ok()
            .filter(|id| store::is_session_id(id));
        let (cfg, _problems) = crate::config::Config::load_lenient();
        let root = cfg.data_root().map(|r| absolute(&r));
        // The terminal session to attach to, checked before anything runs.
        let parent: Option<String> = match (&asked, &root) {
            (Some(Where::New), _) => None,
            (Some(Where::Current), _) if current.is_none() => {
                return Err(Error::usage(
                    "--session current: this does not run in a terminal recorded by `omnish wrap` \
                     (OMNISH_SESSION_ID is not set); use --session new or a session id",
                )
                .into());
            }
            (Some(Where::Id(id)), Ok(root)) => {
                let dir = store::resolve_session(root, id)
                    .map_err(|e| Error::usage(format!("--session: {e:#}")))?;
                Some(store::dir_id(&dir))
            }
            (Some(Where::Id(_)), Err(e)) => {
                return Err(Error::usage(format!("--session: no session store: {e:#}")).into());
            }
            (Some(Where::Current) | None, _) => current.clone(),
        };
        // Typed in the recorded terminal, with its output on that terminal: the terminal's own
        // record of the line holds it already (a second record would show it twice).
        use std::io::IsTerminal;
        let seen_by_terminal = asked.is_none()
            && parent.is_some()
            && std::io::stdout().is_terminal()
            && std::io::stderr().is_terminal();
        let argv = self.program;
        // A file size limit must fail a write of the recording, not kill omnish.
        crate::record::pty::catch_file_size_signal();
        let recording = match &root {
            _ if seen_by_terminal => None,
            Ok(root) => start(root, parent.as_deref(), &author, &argv),
            Err(e) => {
                eprintln!("omnish: warning: {e:#}; the program runs unrecorded");
                None
            }
        };
        match exec::run(&argv, recording) {
            Ok(ended) => ended.exit(),
            Err(e) => {
                // As a shell says it: 127 for a program not found, 126 for one that cannot run.
                let code = if e.kind() == std::io::ErrorKind::NotFound {
                    127
                } else {
                    126
                };
                eprintln!("omnish: {}: {e}", argv[0]);
                Ok(code)
            }
        }
    }
}

/// The author for `--label`: a name of at most 64 bytes, printable, none of the words
/// `--author` gives a meaning to.
fn label(given: Option<&str>) -> Result<String> {
    let Some(l) = given else {
        return Ok(DEFAULT_LABEL.to_string());
    };
    let bad = |why: &str| -> Result<String> {
        Err(Error::usage(format!(
            "--label: {why}; give a short name such as `nightly` or `ci`"
        ))
        .into())
    };
    if l.trim().is_empty() {
        return bad("it is empty");
    }
    if l.len() > MAX_LABEL {
        return bad(&format!("it is longer than {MAX_LABEL} bytes"));
    }
    if l.chars().any(char::is_control) {
        return bad("it holds control characters");
    }
    if matches!(l, "user" | "agents" | "agent" | "all") {
        return bad(&format!("`{l}` means something else to --author"));
    }
    Ok(l.to_string())
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// The recording for `argv`, or `None` (said once) when the store cannot take it.
fn start(root: &Path, parent: Option<&str>, author: &str, argv: &[String]) -> Option<Recording> {
    let cwd = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    let line = shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "));
    let size = crate::record::pty::terminal_size().unwrap_or((80, 24));
    let target = attached::Target {
        root,
        parent,
        author,
        key: None,
        meta: attached::new_meta(&argv[0], argv, &cwd, store::now_ms()),
        wait: false,
    };
    match attached::claim(target) {
        Ok(claimed) => Recording::start(claimed, &line, &cwd, author, size),
        Err(e) => {
            eprintln!(
                "omnish: warning: cannot record to {}: {e}; the program runs on, unrecorded",
                store::sessions_dir(root).display()
            );
            None
        }
    }
}
