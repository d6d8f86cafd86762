//! `omnish context`: turn the flags, the configuration and the environment into a `Request`
//! for the library pipeline (`crate::context::run`) and report what it did. The mapping
//! (`request`) is shared with `ask` and `fix`.

use crate::cli::{ContextArgs, ContextOpts};
use crate::cmd::Run;
use crate::config::Config;
use crate::context::model::Parts;
use crate::context::stages::format::Format;
use crate::context::{
    self, Budget, Request, sources::env, sources::files, sources::notes, stages::loops,
    stages::select, tokens::models,
};
use crate::error::ExitError;
use crate::store;
use anyhow::{Context, Result};

impl Run for ContextArgs {
    fn run(self) -> Result<i32> {
        let cfg = Config::load()?;
        let request = request(&self.opts, &cfg, None)?;
        let mut out = std::io::stdout().lock();
        let outcome =
            context::run(&request, &mut out).map_err(|e| with_budget_flag(e, &self.opts))?;
        for w in &outcome.warnings {
            eprintln!("omnish: warning: {}", crate::term::visible::line(w));
        }
        if let Some(note) = outcome.nothing_matched {
            // grep's convention: nothing found is status 1, so `omnish context --failed | llm`
            // does not send an empty prompt unnoticed.
            eprintln!("omnish: {note}");
            return Ok(1);
        }
        Ok(0)
    }
}

/// The library names no flags; a budget below the smallest document came from `--budget`.
pub(crate) fn with_budget_flag(e: anyhow::Error, opts: &ContextOpts) -> anyhow::Error {
    if e.downcast_ref::<ExitError>().is_some() && opts.budget.is_some() {
        e.context("--budget")
    } else {
        e
    }
}

/// Whether any option that picks commands was given (`ask` and `fix` pick the last failed
/// command otherwise).
pub(crate) fn selects(opts: &ContextOpts) -> bool {
    opts.recent.is_some()
        || opts.last
        || opts.failed
        || opts.grep.is_some()
        || opts.cwd.is_some()
        || opts.here
        || opts.since.is_some()
}

fn format_of(name: &str) -> Format {
    match name {
        "markdown" => Format::Markdown,
        "json" => Format::Json,
        _ => Format::Text,
    }
}

/// The library request for these options: flags first, then the configuration (which holds
/// the environment and the file), then defaults. `default_model` is the profile used when
/// `--model` is absent (`ask.model` for `ask` and `fix`).
pub(crate) fn request(
    opts: &ContextOpts,
    cfg: &Config,
    default_model: Option<&str>,
) -> Result<Request> {
    let recent = opts.recent.unwrap_or_else(|| cfg.int("context.recent"));
    if recent == 0 {
        let what = if opts.recent.is_some() {
            "--recent 0"
        } else {
            "context.recent = 0"
        };
        return Err(ExitError::usage(format!(
            "{what} selects nothing; give at least 1 (or leave it out for 10)"
        ))
        .into());
    }
    let parts = if opts.results_only {
        Parts::ResultsOnly
    } else if opts.commands_only {
        Parts::CommandsOnly
    } else {
        Parts::All
    };
    let grep = match &opts.grep {
        Some(pattern) => Some(
            context::support::pattern::regex(pattern)
                .map_err(|e| ExitError::usage(format!("--grep: {e}")))?,
        ),
        None => None,
    };
    let within = if let Some(dir) = &opts.cwd {
        Some(std::path::absolute(dir).unwrap_or_else(|_| dir.clone()))
    } else if opts.here {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        Some(select::git_root_or(&cwd))
    } else {
        None
    };
    let since_ms = match &opts.since {
        Some(since) => {
            let ms = select::parse_duration(since)
                .map_err(|e| ExitError::usage(format!("--since: {e}")))?;
            Some(store::now_ms().saturating_sub(ms))
        }
        None => None,
    };
    let data_root = crate::cmd::store_root(cfg)?;
    let current_session = std::env::var("OMNISH_SESSION_ID")
        .ok()
        .filter(|s| !s.is_empty());
    // Notes, environment and files describe where this runs.
    let cwd = std::env::current_dir().ok();
    let project = cwd.as_deref().map(select::git_root_or);
    let env = if opts.env {
        let cwd = cwd
            .clone()
            .context("--env: cannot read the current directory")?;
        let meta = current_session
            .as_deref()
            .and_then(|id| store::session_dir(&data_root, id))
            .and_then(|dir| store::read_meta(&dir).ok());
        Some(env::EnvSource {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
            cwd,
            terminal: crate::record::pty::terminal_size()
                .or_else(size_from_vars)
                .or(meta.as_ref().map(|m| (m.cols, m.rows))),
            shell: meta.map(|m| m.shell).filter(|s| !s.is_empty()),
            settings: env::EnvSettings {
                allow: cfg.list("env.allow").to_vec(),
                deny: cfg.list("env.deny").to_vec(),
            },
        })
    } else {
        None
    };
    if opts.depth == Some(0) {
        return Err(ExitError::usage("--depth 0 shows nothing; give at least 1").into());
    }
    let files = if opts.files || opts.changed {
        let root = project
            .clone()
            .context("--files: cannot read the current directory")?;
        Some(files::FilesRequest {
            root,
            tree: opts.files,
            depth: opts.depth,
            changed: opts.changed,
            settings: files::FilesSettings {
                collapse: cfg.int("files.collapse"),
                max_lines: cfg.int("files.max_lines"),
            },
        })
    } else {
        None
    };
    let format = match opts.format {
        Some(f) => f.into(),
        None => format_of(cfg.str("context.format")),
    };
    Ok(Request {
        data_root,
        sessions: opts
            .session
            .parse()
            .unwrap_or(select::SessionChoice::Current),
        current_session,
        failed: opts.failed,
        grep,
        within,
        since_ms,
        limit: if opts.last { 1 } else { recent },
        parts,
        max_lines: opts
            .max_lines
            .unwrap_or_else(|| cfg.int("context.max_lines")),
        max_line_width: opts
            .max_line_width
            .unwrap_or_else(|| cfg.int("context.max_line_width")),
        redact: !opts.no_redact && cfg.bool("context.redact"),
        budget: budget(opts, cfg, default_model)?,
        format,
        notes: (!opts.no_notes).then_some(notes::NotesScope { project }),
        env,
        files,
        loops: loops::LoopSettings {
            threshold: cfg.int("loops.threshold"),
            utc_offset_secs: utc_offset_secs(),
        },
    })
}

/// The token ceiling and tokenizer, from --budget, --model (or `default_model`) and
/// --tokenizer. Models added in the config come before the built-in ones.
fn budget(opts: &ContextOpts, cfg: &Config, default_model: Option<&str>) -> Result<Option<Budget>> {
    let (model, what) = match (&opts.model, default_model) {
        (Some(m), _) => (Some(m.as_str()), "--model"),
        (None, Some(m)) if !m.is_empty() => (Some(m), "ask.model"),
        _ => (None, "--model"),
    };
    // (default budget, tokenizer) of the profile.
    let profile: Option<(usize, String)> = match model {
        Some(name) => match cfg.user_model(name) {
            Some(m) => Some((m.default_budget(), m.tokenizer.clone())),
            None => {
                let p = models::resolve_model(name).map_err(|e| {
                    ExitError::usage(format!(
                        "{what}: {e}; or add it to the config file's [models] table"
                    ))
                })?;
                Some((p.default_budget(), p.tokenizer.to_string()))
            }
        },
        None => None,
    };
    let limit = opts.budget.or(profile.as_ref().map(|p| p.0));
    let Some(tokens) = limit else {
        if opts.tokenizer.is_some() {
            return Err(ExitError::usage("--tokenizer needs --budget or --model").into());
        }
        return Ok(None);
    };
    let tokenizer = opts
        .tokenizer
        .clone()
        .or(profile.map(|p| p.1))
        .unwrap_or_else(|| "o200k".to_string());
    if !context::tokens::tokenizer::TOKENIZERS.contains(&tokenizer.as_str()) {
        return Err(ExitError::usage(format!(
            "--tokenizer: unknown tokenizer '{tokenizer}'; known tokenizers: {}",
            context::tokens::tokenizer::TOKENIZERS.join(", ")
        ))
        .into());
    }
    Ok(Some(Budget { tokens, tokenizer }))
}

/// `COLUMNS` and `LINES`, when the shell exported them.
fn size_from_vars() -> Option<(u16, u16)> {
    let get = |k: &str| std::env::var(k).ok()?.trim().parse::<u16>().ok();
    Some((get("COLUMNS")?, get("LINES")?))
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
