//! `omnish wrap [SHELL [ARGS...]]`: run a shell in a recorded pseudo-terminal.

use crate::cli::WrapArgs;
use crate::cmd::Run;
use crate::error::Error;
use crate::record::marker::Scanner;
use crate::record::pty::{self, Session};
use crate::record::recorder::Recorder;
use crate::record::shell;
use crate::store::{self, SessionMeta};
use anyhow::{Context, Result};
use portable_pty::CommandBuilder;
use std::io::IsTerminal;
use std::path::PathBuf;

impl Run for WrapArgs {
    fn run(self) -> Result<i32> {
        let argv = shell_argv(self.shell);
        let program = resolve_program(&argv[0])?;
        if let Some(session) = nested_session() {
            eprintln!(
                "omnish: this terminal is already recorded by session {session}; starting {} without a second recorder",
                argv[0]
            );
            return exec_plain(&argv);
        }

        // The configuration never keeps the shell from starting (the rc line that runs
        // `omnish wrap` would close the terminal): each problem is one line, and the value
        // falls back (see config::Config::load_lenient). Without a known store the shell runs
        // unrecorded.
        let (cfg, problems) = crate::config::Config::load_lenient();
        for line in crate::config::warning_lines(&problems) {
            eprintln!("{line}");
        }
        let mut root = match cfg.data_root() {
            Ok(root) => Some(root),
            Err(e) => {
                eprintln!("omnish: {e:#}; starting {} without recording", argv[0]);
                None
            }
        };

        let started_at = store::now_ms();
        let id = store::new_session_id(started_at);
        // The token that authenticates the hooks' markers, from the operating system's
        // generator. Without one nothing could tell the hooks' markers from forged ones: the
        // shell runs unrecorded rather than recorded on a guessable token.
        let token = match store::secret_hex(16) {
            Ok(token) => Some(token),
            // Not recording anyway, and said so.
            Err(_) if root.is_none() => None,
            Err(e) => {
                eprintln!("omnish: {e}; starting {} without recording", argv[0]);
                root = None;
                None
            }
        };
        let mut resolved = argv.clone();
        resolved[0] = program.to_string_lossy().into_owned();
        let auto = shell::NestAuto {
            programs: cfg.list("nest.auto").to_vec(),
            omnish: std::env::current_exe()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "omnish".to_string()),
        };
        let launch = match token
            .as_deref()
            .map(|t| shell::prepare(&resolved, t, &auto))
        {
            Some(Ok(launch)) => launch,
            None => shell::plain(&resolved),
            // Not recording anyway, and said so.
            Some(Err(_)) if root.is_none() => shell::plain(&resolved),
            Some(Err(e)) => {
                // Hooks cannot be written (no usable temporary directory): the shell still
                // runs, in the pseudo-terminal and unrecorded, so a recorder started from its
                // rc file sees OMNISH_SESSION_ID and is not started again.
                eprintln!("omnish: {e:#}; starting {} without recording", argv[0]);
                root = None;
                shell::plain(&resolved)
            }
        };
        let (cols, rows) = pty::terminal_size()
            .or_else(size_from_env)
            .unwrap_or((80, 24));
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));

        // Before the first write: a file size limit must fail a write, not kill omnish.
        pty::catch_file_size_signal();
        let dir = root
            .as_ref()
            .map(|root| store::sessions_dir(root).join(&id));
        let meta = SessionMeta {
            id: id.clone(),
            cols,
            rows,
            hooked: launch.hooked,
            ..SessionMeta::starting(&launch.program, &argv, &cwd.to_string_lossy(), started_at)
        };
        // A recorder that cannot start must not keep the user from their shell. The writer
        // thread creates the directory, so a slow or hung disk cannot delay the shell either;
        // if it cannot, the warning says so at the first prompt.
        let recorder = match (&dir, token.as_deref()) {
            (Some(dir), Some(token)) => match Recorder::spawn(dir, meta) {
                Ok(mut r) => {
                    r.set_token(token);
                    // Lines kept out of history with a leading space are private unless asked.
                    r.set_record_private(!cfg.bool("record.private_leading_space"));
                    // Checked with the rest of the configuration (a bad pattern fell back to
                    // the default, none).
                    r.set_ignore(crate::config::command_globs(cfg.list("record.ignore")).ok());
                    if self.paused {
                        r.pause(started_at, None);
                    }
                    Some(r)
                }
                Err(e) => {
                    eprintln!(
                        "omnish: cannot record to {}: {e}; starting {} without recording",
                        dir.display(),
                        argv[0]
                    );
                    None
                }
            },
            _ => None,
        };
        if let (Some(r), Some(root)) = (&recorder, &root) {
            // Off the terminal's path: the shell starts whatever the prune does. The limits
            // were checked with the rest of the configuration.
            match cfg.prune_settings() {
                Ok(settings) => crate::cmd::sessions::prune_in_background(
                    root.clone(),
                    settings,
                    id.clone(),
                    r.notifier(),
                ),
                Err(e) => eprintln!("omnish: {e:#}; sessions are not pruned automatically"),
            }
        }
        if let (Some(_), Some(reason)) = (&recorder, launch.unhooked_reason) {
            eprintln!(
                "omnish: {reason}; the whole run of {} is recorded as one command",
                argv[0]
            );
        }

        let mut command = CommandBuilder::new(&launch.program);
        command.args(&launch.args);
        command.cwd(&cwd);
        for (k, v) in &launch.env {
            command.env(k, v);
        }
        command.env("OMNISH_SESSION_ID", &id);
        if let Some(dir) = &dir {
            command.env("OMNISH_SESSION_DIR", dir.as_os_str());
        }
        if let Some(root) = root.as_ref().filter(|_| !cfg.str("data_dir").is_empty()) {
            // Absolute, so `omnish context` finds the sessions after a `cd`.
            command.env("OMNISH_DATA_DIR", root.as_os_str());
        }
        if std::env::var_os("TERM").is_none_or(|t| t.is_empty()) {
            command.env("TERM", "xterm-256color");
        }

        let mut scanner = token.as_deref().filter(|_| launch.hooked).map(Scanner::new);
        // `omnish nest` (sudo, ssh, containers) registers its requests with a key of its own,
        // in the private directory, which the shell's commands find by OMNISH_RUNTIME_DIR.
        if let (Some(sc), Some(rc)) = (scanner.as_mut(), launch.rc_dir.as_ref()) {
            if let Ok(key) = store::secret_hex(16) {
                if shell::write_nest_key(rc.path(), &key).is_ok() {
                    sc.set_register_key(&key);
                    command.env("OMNISH_RUNTIME_DIR", rc.path().as_os_str());
                }
            }
        }
        let rc_dir = launch.rc_dir;
        let session = Session {
            command,
            scanner,
            recorder,
            // Kept until the session ends (below), not removed at the first prompt: a shell
            // that replaces the recorded one (`exec bash`) is hooked again from it.
            rc_dir: None,
            whole_run_command: (!launch.hooked).then(|| launch.command_line.clone()),
            far_keys: Some(far_key_names(&cfg)),
        };
        let outcome = pty::run(session, (cols, rows))?;
        drop(rc_dir);
        Ok(outcome.status)
    }
}

/// The shell to run: as given, else `$SHELL`, else /bin/sh.
fn shell_argv(given: Vec<String>) -> Vec<String> {
    if !given.is_empty() {
        return given;
    }
    let shell = std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/bin/sh".to_string());
    vec![shell]
}

fn size_from_env() -> Option<(u16, u16)> {
    let cols = std::env::var("COLUMNS").ok()?.parse().ok()?;
    let rows = std::env::var("LINES").ok()?.parse().ok()?;
    Some((cols, rows))
}

/// The session already recording this terminal, if any: `OMNISH_SESSION_ID` is set and one of
/// our standard streams is the recorder's terminal (or none is a terminal at all). A new
/// terminal inside a recorded shell (a tmux pane) is not nested and gets its own recorder.
pub(crate) fn nested_session() -> Option<String> {
    let id = std::env::var("OMNISH_SESSION_ID")
        .ok()
        .filter(|s| !s.is_empty())?;
    on_recorded_terminal().then_some(id)
}

/// Whether one of our standard streams is the terminal `OMNISH_PTY` names (or none is a
/// terminal at all, or no recorder named one).
pub(crate) fn on_recorded_terminal() -> bool {
    let recorded = std::env::var_os("OMNISH_PTY").map(PathBuf::from);
    let ours: Vec<PathBuf> = [0, 1, 2]
        .into_iter()
        .filter_map(|fd| {
            // SAFETY: borrows a standard descriptor for the call.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            fd.is_terminal()
                .then(|| nix::unistd::ttyname(fd).ok())
                .flatten()
        })
        .collect();
    match recorded {
        Some(pty) => ours.is_empty() || ours.contains(&pty),
        None => true,
    }
}

/// Finds `name` as a shell would: a path as given, else the first executable on PATH.
fn resolve_program(name: &str) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &std::path::Path| {
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    let not_found = |why: &str| {
        anyhow::Error::new(Error::Status {
            code: 127,
            message: format!(
                "cannot run shell '{name}': {why}; name one, as in `omnish wrap bash`"
            ),
        })
    };
    if name.contains('/') {
        let p = PathBuf::from(name);
        return if executable(&p) {
            Ok(p)
        } else {
            Err(not_found("no such executable file"))
        };
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|p| executable(p))
        .ok_or_else(|| not_found("not found in PATH"))
}

/// Replaces omnish with the plain shell.
fn exec_plain(argv: &[String]) -> Result<i32> {
    use std::os::unix::process::CommandExt;
    let err = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
    Err(err).with_context(|| format!("cannot run {}", argv[0]))
}

/// The ask and fix keys for the shells on the far side of `omnish nest` (record::farkey), as
/// `omnish init` would bind them: readline syntax for bash and zsh (the defaults when both are
/// the same key), fish's notation for fish, keybinding records for nu.
fn far_key_names(cfg: &crate::config::Config) -> crate::record::farkey::FarKeyNames {
    let (mut ask, mut fix) = (cfg.str("keys.ask"), cfg.str("keys.fix"));
    if ask == fix {
        (ask, fix) = (r"\C-xa", r"\C-xf");
    }
    let [fish_ask, fish_fix, ..] = crate::cmd::init::fish_keys(cfg, false);
    let nu = |which: &str| {
        crate::cmd::init::nu::key_for(which, cfg.str(&format!("keys.{which}")))
            .0
            .record()
    };
    crate::record::farkey::FarKeyNames {
        readline: (ask.to_string(), fix.to_string()),
        fish: (fish_ask, fish_fix),
        nu: (nu("ask"), nu("fix")),
    }
}
