//! [`Setup`]: where a command runs, learned once per process and in one place (`main`), for
//! every command that reads the store or the configuration's values (`context`, `ask`, `fix`,
//! `search`, `status`, `sessions`, `note`, `mcp`).
//!
//! It is the only place these commands read the environment: the configuration (file and
//! variables, strict: a problem stops the command), the store's root made absolute (and said
//! once when it is not private), the session this runs in (`OMNISH_SESSION_ID`, when it is a
//! session id), the working directory and its project (the git work tree, else the directory),
//! the time zone, the terminal's size and the variables an environment snapshot shows. The
//! library gets them as plain values (`context::request`'s `Facts` and `Settings`) and reads nothing itself.
//!
//! `wrap` and `init`, which start the user's shell, keep their own lenient load of the
//! configuration: nothing in it may keep the shell from starting.

use crate::config::Config;
use crate::context::request::{Facts, Settings, UserModel};
use crate::context::sources::{env::EnvSettings, files::FilesSettings};
use crate::context::stages::format::Format;
use crate::context::stages::select;
use crate::error::{Error, Usage};
use crate::store;
use anyhow::Result;
use std::ffi::OsString;
use std::path::PathBuf;

/// Where this process runs and what the user configured (see the module docs).
#[derive(Debug, Clone)]
pub struct Setup {
    pub(crate) config: Config,
    pub(crate) facts: Facts,
    pub(crate) settings: Settings,
    /// `NO_COLOR` is set and not empty: no colours, even on a terminal.
    pub(crate) no_color: bool,
    /// `PATH`, where `ask` and `fix` look for an LLM command.
    pub(crate) path: Option<OsString>,
}

impl Setup {
    /// The setup of this process: its configuration, environment and working directory. A bad
    /// configuration is the error (exit status 2).
    pub fn load() -> Result<Setup> {
        let config = Config::load()?;
        let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        let cwd = std::env::current_dir().ok();
        let setup = Setup::from_parts(
            config,
            &vars,
            cwd,
            crate::record::pty::terminal_size(),
            utc_offset_secs(),
        )?;
        for line in store::access::check(&setup.facts.data_root) {
            eprintln!("{line}");
        }
        Ok(setup)
    }

    /// The setup for `config`, the environment `vars`, the working directory `cwd` and a
    /// terminal of `terminal` columns and rows, in a zone `utc_offset_secs` east of UTC.
    pub(crate) fn from_parts(
        config: Config,
        vars: &[(OsString, OsString)],
        cwd: Option<PathBuf>,
        terminal: Option<(u16, u16)>,
        utc_offset_secs: i64,
    ) -> Result<Setup> {
        let var = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let text = |name: &str| var(name).and_then(|v| v.into_string().ok());
        let root = config.data_root()?;
        let data_root = match &cwd {
            Some(cwd) if root.is_relative() => cwd.join(&root),
            _ => std::path::absolute(&root).unwrap_or(root),
        };
        // An id that is not a session id names no session (and no path: it is never joined).
        let current_session = text("OMNISH_SESSION_ID").filter(|id| store::is_session_id(id));
        let size = |k: &str| text(k)?.trim().parse::<u16>().ok();
        let terminal = terminal.or_else(|| Some((size("COLUMNS")?, size("LINES")?)));
        let facts = Facts {
            data_root,
            current_session,
            git_root: cwd.as_deref().and_then(select::git_root),
            cwd,
            utc_offset_secs,
            vars: vars
                .iter()
                .filter_map(|(k, v)| {
                    Some((k.clone().into_string().ok()?, v.clone().into_string().ok()?))
                })
                .collect(),
            terminal,
        };
        let settings = settings(&config);
        Ok(Setup {
            no_color: var("NO_COLOR").is_some_and(|v| !v.is_empty()),
            path: var("PATH"),
            config,
            facts,
            settings,
        })
    }

    /// A usage error of the library named as the command line names things: `--since: ...`,
    /// or, for a value that came from the configuration, its key (`context.recent: ...`).
    pub(crate) fn flags(e: Error) -> anyhow::Error {
        e.named(|u: &Usage| {
            let field = u.field?;
            Some(
                if u.from_settings {
                    match field {
                        crate::error::Field::Recent => "context.recent",
                        crate::error::Field::Model => "ask.model",
                        f => f.flag(),
                    }
                } else {
                    field.flag()
                }
                .to_string(),
            )
        })
        .into()
    }
}

/// The configuration's values as the library uses them.
fn settings(config: &Config) -> Settings {
    Settings {
        recent: config.int("context.recent"),
        max_lines: config.int("context.max_lines"),
        max_line_width: config.int("context.max_line_width"),
        format: match config.str("context.format") {
            "markdown" => Format::Markdown,
            "json" => Format::Json,
            _ => Format::Text,
        },
        redact: config.bool("context.redact"),
        loop_threshold: config.int("loops.threshold"),
        env: EnvSettings {
            allow: config.list("env.allow").to_vec(),
            deny: config.list("env.deny").to_vec(),
        },
        files: FilesSettings {
            collapse: config.int("files.collapse"),
            max_lines: config.int("files.max_lines"),
        },
        models: config
            .models
            .iter()
            .map(|m| UserModel {
                name: m.name.clone(),
                budget: m.default_budget(),
                tokenizer: m.tokenizer.clone(),
            })
            .collect(),
    }
}

/// The local time's offset from UTC now, in seconds (0 when unknown).
pub(crate) fn utc_offset_secs() -> i64 {
    let now = store::now_ms() as libc::time_t / 1000;
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r reads `now` and writes a tm into the struct we own.
    if unsafe { libc::localtime_r(&now, &mut tm) }.is_null() {
        return 0;
    }
    tm.tm_gmtoff
}
