//! `omnish context`: turn the flags and the environment into a [`Request`] for the library
//! pipeline ([`crate::context::run`]) and report what it did.

use crate::cli::ContextArgs;
use crate::cmd::Run;
use crate::context::model::Parts;
use crate::context::{self, Budget, Request, env, files, loops, models, notes, select};
use crate::error::ExitError;
use crate::store;
use anyhow::{Context, Result};

impl Run for ContextArgs {
    fn run(self) -> Result<i32> {
        let request = self.request()?;
        let mut out = std::io::stdout().lock();
        let outcome = context::run(&request, &mut out).map_err(|e| {
            // The library names no flags; a budget below the smallest document came from here.
            if e.downcast_ref::<ExitError>().is_some() && self.budget.is_some() {
                e.context("--budget")
            } else {
                e
            }
        })?;
        for w in &outcome.warnings {
            eprintln!("omnish: warning: {w}");
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

impl ContextArgs {
    /// The library request for these flags, the environment and the current directory.
    fn request(&self) -> Result<Request> {
        if self.recent == 0 {
            return Err(ExitError::usage(
                "--recent 0 selects nothing; give at least 1 (or leave it out for 10)",
            )
            .into());
        }
        let parts = if self.results_only {
            Parts::ResultsOnly
        } else if self.commands_only {
            Parts::CommandsOnly
        } else {
            Parts::All
        };
        let grep = match &self.grep {
            Some(pattern) => Some(regex::Regex::new(pattern).map_err(|e| {
                ExitError::usage(format!(
                    "--grep: invalid regular expression '{pattern}': {e}"
                ))
            })?),
            None => None,
        };
        let within = if let Some(dir) = &self.cwd {
            Some(std::path::absolute(dir).unwrap_or_else(|_| dir.clone()))
        } else if self.here {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            Some(select::git_root_or(&cwd))
        } else {
            None
        };
        let since_ms = match &self.since {
            Some(since) => {
                let ms = select::parse_duration(since)
                    .map_err(|e| ExitError::usage(format!("--since: {e}")))?;
                Some(store::now_ms().saturating_sub(ms))
            }
            None => None,
        };
        let root = store::data_root()?;
        let data_root = std::path::absolute(&root).unwrap_or(root);
        let current_session = std::env::var("OMNISH_SESSION_ID")
            .ok()
            .filter(|s| !s.is_empty());
        // Notes, environment and files describe where this runs.
        let cwd = std::env::current_dir().ok();
        let project = cwd.as_deref().map(files::project_root);
        let env = if self.env {
            let cwd = cwd
                .clone()
                .context("--env: cannot read the current directory")?;
            let meta = current_session
                .as_deref()
                .filter(|id| store::is_session_id(id))
                .and_then(|id| store::read_meta(&store::sessions_dir(&data_root).join(id)).ok());
            Some(env::EnvSource {
                vars: std::env::vars_os()
                    .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                    .collect(),
                cwd,
                terminal: crate::record::pty::terminal_size()
                    .or_else(size_from_vars)
                    .or(meta.as_ref().map(|m| (m.cols, m.rows))),
                shell: meta.map(|m| m.shell).filter(|s| !s.is_empty()),
                settings: env::EnvSettings::default(),
            })
        } else {
            None
        };
        let files = if self.files || self.changed {
            let root = project
                .clone()
                .context("--files: cannot read the current directory")?;
            Some(files::FilesRequest {
                root,
                tree: self.files,
                depth: self.depth,
                changed: self.changed,
                settings: files::FilesSettings::default(),
            })
        } else {
            None
        };
        if self.depth == Some(0) {
            return Err(ExitError::usage("--depth 0 shows nothing; give at least 1").into());
        }
        Ok(Request {
            data_root,
            sessions: self
                .session
                .parse()
                .unwrap_or(select::SessionChoice::Current),
            current_session,
            failed: self.failed,
            grep,
            within,
            since_ms,
            limit: if self.last { 1 } else { self.recent },
            parts,
            max_lines: self.max_lines,
            max_line_width: self.max_line_width,
            redact: !self.no_redact,
            budget: self.budget()?,
            format: self.format.into(),
            notes: (!self.no_notes).then_some(notes::NotesScope { project }),
            env,
            files,
            loops: loops::LoopSettings {
                threshold: loops::DEFAULT_THRESHOLD,
                utc_offset_secs: utc_offset_secs(),
            },
        })
    }

    /// The token ceiling and tokenizer, from --budget, --model and --tokenizer.
    fn budget(&self) -> Result<Option<Budget>> {
        let profile = match &self.model {
            Some(name) => Some(
                models::resolve_model(name)
                    .map_err(|e| ExitError::usage(format!("--model: {e}")))?,
            ),
            None => None,
        };
        let limit = self.budget.or(profile.map(|p| p.default_budget()));
        let Some(tokens) = limit else {
            if self.tokenizer.is_some() {
                return Err(ExitError::usage("--tokenizer needs --budget or --model").into());
            }
            return Ok(None);
        };
        let tokenizer = self
            .tokenizer
            .clone()
            .or(profile.map(|p| p.tokenizer.to_string()))
            .unwrap_or_else(|| "o200k".to_string());
        if !context::tokenizer::TOKENIZERS.contains(&tokenizer.as_str()) {
            return Err(ExitError::usage(format!(
                "--tokenizer: unknown tokenizer '{tokenizer}'; known tokenizers: {}",
                context::tokenizer::TOKENIZERS.join(", ")
            ))
            .into());
        }
        Ok(Some(Budget { tokens, tokenizer }))
    }
}

/// `COLUMNS` and `LINES`, when the shell exported them.
fn size_from_vars() -> Option<(u16, u16)> {
    let get = |k: &str| std::env::var(k).ok()?.trim().parse::<u16>().ok();
    Some((get("COLUMNS")?, get("LINES")?))
}

/// The local time's offset from UTC now, in seconds (0 when unknown).
fn utc_offset_secs() -> i64 {
    let now = store::now_ms() as libc::time_t / 1000;
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r reads `now` and writes a tm into the struct we own.
    if unsafe { libc::localtime_r(&now, &mut tm) }.is_null() {
        return 0;
    }
    tm.tm_gmtoff
}
