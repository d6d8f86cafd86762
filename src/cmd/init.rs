//! `omnish init bash|zsh|fish [--wrap]`: prints the snippet for the rc file (`eval "$(omnish init
//! zsh)"`): the key bindings for `ask` and `fix`, and with `--wrap` the start of a recorded
//! shell when this terminal can be recorded, is not recorded yet and was not wrapped before.
//! The snippets are real files in `shell/` (checked by `bash -n`, `zsh -n`, shellcheck and
//! `fish --no-execute`); fish's keys are written in its own notation (`fish`).
//!
//! It runs from the rc file at every shell start, so like `omnish wrap` it never fails on the
//! configuration: each problem is one line (said once per terminal: by the recorded shell's
//! `wrap`, else here) and its value falls back; only flags given to `init` itself are strict.
//! Its `--wrap` path is the safe auto-start the README recommends: `$(omnish init ...)` runs
//! before anything is replaced, so a missing or broken omnish leaves the plain shell, and it
//! starts `omnish wrap` only when the store can be written and a pseudo-terminal opened.

use crate::cli::{InitArgs, InitShell};
use crate::cmd::Run;
use crate::cmd::wrap::nested_session;
use crate::config::Config;
use crate::error::Error;
use anyhow::{Context, Result};
use std::io::{IsTerminal, Write};

const BASH: &str = include_str!("../../shell/init.bash");
const ZSH: &str = include_str!("../../shell/init.zsh");
const FISH: &str = include_str!("../../shell/init.fish");

mod fish;
pub(crate) mod nu;

impl Run for InitArgs {
    fn run(self) -> Result<i32> {
        // Run from the rc file at every shell start, like `omnish wrap`: a bad configuration
        // costs neither the keys nor the recorded shell. Each problem is one line and its value
        // falls back (config::Config::load_lenient); flags given here are checked strictly.
        let (mut cfg, problems) = Config::load_lenient();
        if let Some(k) = &self.ask_key {
            cfg.set_text("keys.ask", k, "--ask-key")?;
        }
        if let Some(k) = &self.fix_key {
            cfg.set_text("keys.fix", k, "--fix-key")?;
        }
        let mut conflict = None;
        if cfg.str("keys.ask") == cfg.str("keys.fix") {
            let key = cfg.str("keys.ask").to_string();
            if self.ask_key.is_some() || self.fix_key.is_some() {
                return Err(Error::usage(format!(
                    "the ask and fix keys are both {key}; give them different keys"
                ))
                .into());
            }
            conflict = Some(format!(
                "omnish: keys.ask and keys.fix are both {key}; using the default keys"
            ));
            cfg.reset("keys.ask");
            cfg.reset("keys.fix");
        }
        // The pause key gives way to the ask and fix keys.
        let pause = cfg.str("keys.pause").to_string();
        if pause == cfg.str("keys.ask") || pause == cfg.str("keys.fix") {
            conflict.get_or_insert(format!(
                "omnish: keys.pause is {pause}, as the ask or fix key; using its default"
            ));
            cfg.reset("keys.pause");
        }
        // The pick key gives way to the three others.
        let pick = cfg.str("keys.pick").to_string();
        if ["keys.ask", "keys.fix", "keys.pause"]
            .iter()
            .any(|k| cfg.str(k) == pick)
        {
            conflict.get_or_insert(format!(
                "omnish: keys.pick is {pick}, as the ask, fix or pause key; using its default"
            ));
            cfg.reset("keys.pick");
        }
        let ask_key = cfg.str("keys.ask");
        let fix_key = cfg.str("keys.fix");
        // Its default taken by the ask or fix key too: no pause key.
        let pause_key = Some(cfg.str("keys.pause"))
            .filter(|k| ![ask_key, fix_key].contains(k))
            .unwrap_or_default();
        // Likewise for the pick key.
        let pick_key = Some(cfg.str("keys.pick"))
            .filter(|k| ![ask_key, fix_key, pause_key].contains(k))
            .unwrap_or_default();
        let bin = std::env::current_exe().context("cannot find omnish's own path")?;
        let tty = this_tty();
        // In a shell that is recorded already (or that a recorder fell back to), `omnish wrap`
        // has said the configuration's problems at its start: not again.
        let recorded_here = nested_session().is_some()
            || tty.as_deref().is_some_and(|t| {
                std::env::var("OMNISH_INIT_WRAPPED").is_ok_and(|wrapped| wrapped == t)
            });
        let wrap = match tty {
            Some(_) if self.wrap && !recorded_here => can_record(&cfg).map(|()| true),
            _ => Ok(false),
        };
        // The recorded shell about to start says the configuration's problems itself.
        if !recorded_here {
            if !matches!(wrap, Ok(true)) {
                for line in crate::config::warning_lines(&problems) {
                    eprintln!("{line}");
                }
            }
            if let Some(line) = conflict {
                eprintln!("{line}");
            }
        }
        let wrap = match wrap {
            Ok(wrap) => wrap,
            Err(why) => {
                eprintln!(
                    "omnish: cannot start a recorded shell ({why:#}); this shell is not recorded"
                );
                false
            }
        };
        if self.shell == InitShell::Nu {
            let (ask, ask_why) = nu::key_for("ask", ask_key);
            let (fix, fix_why) = nu::key_for("fix", fix_key);
            let (pause, pause_why) = nu::key_for("pause", cfg.str("keys.pause"));
            // The pause key gives way to the other two, the pick key to the three.
            let pause = (pause != ask && pause != fix).then_some(pause);
            let (pick, pick_why) = nu::key_for("pick", cfg.str("keys.pick"));
            let pick =
                (pick != ask && pick != fix && Some(&pick) != pause.as_ref()).then_some(pick);
            if !recorded_here {
                for line in [ask_why, fix_why, pause_why, pick_why]
                    .into_iter()
                    .flatten()
                {
                    eprintln!("{line}");
                }
            }
            let keys = nu::Keys {
                ask,
                fix,
                pause,
                pick,
            };
            let text = nu::snippet(&bin, &keys, wrap, tty.as_deref(), self.wrap);
            std::io::stdout().lock().write_all(text.as_bytes())?;
            return Ok(0);
        }
        let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
        let shell = match self.shell {
            InitShell::Bash => "bash",
            InitShell::Zsh => "zsh",
            InitShell::Fish => {
                let text = fish_snippet(&cfg, &bin.to_string_lossy(), wrap, tty.as_deref());
                std::io::stdout().lock().write_all(text.as_bytes())?;
                return Ok(0);
            }
            InitShell::Nu => unreachable!("nu has its own snippet"),
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
        text += &format!("__omnish_pause_key={}\n", quote(pause_key));
        text += &format!("__omnish_pick_key={}\n", quote(pick_key));
        text += &format!("__omnish_wrap={}\n", u8::from(wrap));
        text += &format!("__omnish_tty={}\n", quote(tty.as_deref().unwrap_or("")));
        text += match self.shell {
            InitShell::Bash => BASH,
            InitShell::Zsh => ZSH,
            InitShell::Fish => FISH,
            InitShell::Nu => unreachable!("nu has its own snippet"),
        };
        std::io::stdout().lock().write_all(text.as_bytes())?;
        Ok(0)
    }
}

/// The snippet for `omnish init fish | source`: the keys in fish's notation, fish's own
/// defaults while keys.ask and keys.fix are the readline defaults (Ctrl-X is fish's copy key),
/// and one line and the default for a key fish cannot bind.
fn fish_snippet(cfg: &Config, bin: &str, wrap: bool, tty: Option<&str>) -> String {
    let [ask, fix, pause, pick] = fish_keys(cfg, true);
    let mut text = format!(
        "# omnish init fish{}: omnish init fish | source in config.fish
",
        if wrap { " --wrap" } else { "" }
    );
    text += &fish::header(bin, [&ask, &fix, &pause, &pick], wrap, tty.unwrap_or(""));
    text += FISH;
    text
}

/// The ask, fix, pause and pick keys in fish's `bind` notation (fish's own defaults while
/// the keys are the defaults; a key that gives way to another: none). `warn`: say on stderr
/// which key fish cannot bind.
pub(crate) fn fish_keys(cfg: &Config, warn: bool) -> [String; 4] {
    let key = |name: &str, default: &str| {
        let value = cfg.str(name);
        if *cfg.source(name) == crate::config::Source::Default {
            return fish::bind_notation(default).unwrap_or_default();
        }
        fish::bind_notation(value).unwrap_or_else(|| {
            if warn {
                eprintln!(
                    "omnish: {name} '{value}' cannot be bound in fish; using {default} (readline syntax)"
                );
            }
            fish::bind_notation(default).unwrap_or_default()
        })
    };
    let ask = key("keys.ask", fish::ASK_DEFAULT);
    let mut fix = key("keys.fix", fish::FIX_DEFAULT);
    if fix == ask {
        fix = fish::bind_notation(fish::FIX_DEFAULT).unwrap_or_default();
    }
    // The pause key gives way to the other two (none when its default is taken too).
    let mut pause = key("keys.pause", fish::PAUSE_DEFAULT);
    if pause == ask || pause == fix {
        pause = fish::bind_notation(fish::PAUSE_DEFAULT).unwrap_or_default();
        if pause == ask || pause == fix {
            pause.clear();
        }
    }
    // Likewise the pick key, which gives way to the three others.
    let taken = |k: &String| *k == ask || *k == fix || *k == pause;
    let mut pick = key("keys.pick", fish::PICK_DEFAULT);
    if taken(&pick) {
        pick = fish::bind_notation(fish::PICK_DEFAULT).unwrap_or_default();
        if taken(&pick) {
            pick.clear();
        }
    }
    [ask, fix, pause, pick]
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

/// Whether omnish can record here (`--wrap` on a terminal, not inside a recorded shell, not
/// wrapped from this terminal before: a recorder that fell back to the plain shell must not be
/// started again by that shell's rc file): the store is known and can be created and written,
/// a pseudo-terminal opened. The error says why not, and what to do.
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
