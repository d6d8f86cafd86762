//! `omnish search PATTERN`: turn the flags, the environment and the current directory into a
//! `SearchRequest` for the library (`crate::context::queries::search`); exit 1 when nothing matched.

use crate::cli::{PlainFormat, SearchArgs};
use crate::cmd::Run;
use crate::context::queries::search::{self, SearchFormat, SearchRequest};
use crate::context::stages::select;
use crate::error::ExitError;
use crate::store;
use anyhow::{Context, Result};
use std::io::IsTerminal;

impl Run for SearchArgs {
    fn run(self) -> Result<i32> {
        let request = self.request()?;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
        let outcome = search::search(&request, &mut out)?;
        drop(out);
        for w in &outcome.warnings {
            eprintln!("omnish: warning: {}", crate::term::visible::line(w));
        }
        if outcome.hits == 0 {
            return Ok(1);
        }
        Ok(0)
    }
}

impl SearchArgs {
    fn request(&self) -> Result<SearchRequest> {
        let within = if self.here {
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
        let root = crate::cmd::store_root(&crate::config::Config::load()?)?;
        Ok(SearchRequest {
            data_root: root,
            sessions: self.session.parse().unwrap_or(select::SessionChoice::All),
            current_session: std::env::var("OMNISH_SESSION_ID")
                .ok()
                .filter(|s| !s.is_empty()),
            pattern: self.pattern.clone(),
            case_insensitive: self.ignore_case,
            fixed_strings: self.fixed_strings,
            commands_only: self.commands,
            failed: self.failed,
            within,
            since_ms,
            context: self.context,
            format: match self.format {
                PlainFormat::Text => SearchFormat::Text,
                PlainFormat::Json => SearchFormat::Json,
            },
            color: self.format == PlainFormat::Text
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        })
    }
}
