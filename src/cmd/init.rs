//! `omnish init bash|zsh [--wrap]`: prints the snippet for the rc file (`eval "$(omnish init
//! zsh)"`): the key bindings for `ask` and `fix`, and with `--wrap` the start of a recorded
//! shell when this terminal can be recorded, is not recorded yet and was not wrapped before.
//! The snippets are real files in `shell/` (checked by `bash -n`, `zsh -n` and shellcheck).

use crate::cli::{InitArgs, InitShell};
use crate::cmd::Run;
use crate::cmd::wrap::nested_session;
use crate::config::Config;
use crate::error::ExitError;
use anyhow::{Context, Result};
use std::io::{IsTerminal, Write};

const BASH: &str = include_str!("../../shell/init.bash");
const ZSH: &str = include_str!("../../shell/init.zsh");

impl Run for InitArgs {
    fn run(self) -> Result<i32> {
        let mut cfg = Config::load()?;
        if let Some(k) = &self.ask_key {
            cfg.set_text("keys.ask", k, "--ask-key")?;
        }
        if let Some(k) = &self.fix_key {
            cfg.set_text("keys.fix", k, "--fix-key")?;
        }
        let ask_key = checked_key(cfg.str("keys.ask"), "keys.ask")?;
        let fix_key = checked_key(cfg.str("keys.fix"), "keys.fix")?;
        if ask_key == fix_key {
            return Err(ExitError::usage(format!(
                "the ask and fix keys are both {ask_key}; give them different keys"
            ))
            .into());
        }
        let bin = std::env::current_exe().context("cannot find omnish's own path")?;
        let tty = this_tty();
        let wrap = self.wrap && should_wrap(&cfg, tty.as_deref());
        let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
        let shell = match self.shell {
            InitShell::Bash => "bash",
            InitShell::Zsh => "zsh",
        };
        let mut text = String::new();
        if self.shell == InitShell::Bash {
            text += "# shellcheck shell=bash\n";
        }
        text += &format!(
            "# omnish init {shell}{}: eval \"$(omnish init {shell})\" in your rc file\n",
            if self.wrap { " --wrap" } else { "" }
        );
        text += &format!("__omnish_bin={}\n", quote(&bin.to_string_lossy()));
        text += &format!("__omnish_ask_key={}\n", quote(ask_key));
        text += &format!("__omnish_fix_key={}\n", quote(fix_key));
        text += &format!("__omnish_wrap={}\n", u8::from(wrap));
        text += &format!("__omnish_tty={}\n", quote(tty.as_deref().unwrap_or("")));
        text += match self.shell {
            InitShell::Bash => BASH,
            InitShell::Zsh => ZSH,
        };
        std::io::stdout().lock().write_all(text.as_bytes())?;
        Ok(0)
    }
}

/// A key in readline syntax that the snippets can quote safely.
fn checked_key<'a>(key: &'a str, name: &str) -> Result<&'a str> {
    if key.is_empty()
        || key
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || c == '"' || c == '\'')
    {
        return Err(ExitError::usage(format!(
            "{name}: '{key}' is not a key in readline syntax such as \\C-xa or \\ea (no spaces or quotes)"
        ))
        .into());
    }
    Ok(key)
}

/// The terminal on stdin (the rc file's `$(...)` keeps stdin on the terminal).
fn this_tty() -> Option<String> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return None;
    }
    nix::unistd::ttyname(&stdin)
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// Whether `--wrap` should start a recorded shell here: on a terminal, not inside a recorded
/// shell, not wrapped from this terminal before (a recorder that fell back to the plain shell
/// must not be started again by that shell's rc file), and omnish can record (the store can be
/// created, a pseudo-terminal opened). When it cannot, one line says so.
fn should_wrap(cfg: &Config, tty: Option<&str>) -> bool {
    let Some(tty) = tty else { return false };
    if nested_session().is_some() {
        return false;
    }
    if std::env::var("OMNISH_INIT_WRAPPED").is_ok_and(|t| t == tty) {
        return false;
    }
    if let Err(why) = can_record(cfg) {
        eprintln!("omnish: cannot start a recorded shell ({why:#}); this shell is not recorded");
        return false;
    }
    true
}

fn can_record(cfg: &Config) -> Result<()> {
    let root = cfg.data_root()?;
    let sessions = crate::store::sessions_dir(&root);
    let advice = |e: &std::io::Error| crate::store::access::write_advice(e);
    crate::store::create_private_dir(&sessions).map_err(|e| {
        anyhow::anyhow!("cannot create {}: {e}; {}", sessions.display(), advice(&e))
    })?;
    let probe = tempfile::tempfile_in(&sessions).map_err(|e| {
        anyhow::anyhow!(
            "cannot write in {}: {e}; {}",
            sessions.display(),
            advice(&e)
        )
    })?;
    drop(probe);
    portable_pty::native_pty_system()
        .openpty(portable_pty::PtySize::default())
        .map_err(|e| anyhow::anyhow!("cannot open a pseudo-terminal: {e}"))?;
    Ok(())
}
