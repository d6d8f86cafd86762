//! `omnish search PATTERN`: the flags, checked by the library's request builder (its
//! `Filters`) where they are the same as `context`'s, made into a `SearchRequest` with the
//! process's [`Setup`] for the library (`context::queries::search`); exit 1 when nothing
//! matched.

use crate::cli::{PlainFormat, SearchArgs};
use crate::cmd::{RunWith, Setup};
use crate::context::queries::search::{self, SearchFormat, SearchRequest};
use crate::context::request::Filters;
use crate::context::stages::select::SessionChoice;
use crate::error::Field;
use crate::store;
use anyhow::Result;
use std::io::IsTerminal;

impl RunWith for SearchArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        let request = self.request(setup)?;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
        let outcome = search::search(&request, &mut out).map_err(named)?;
        drop(out);
        for w in &outcome.warnings {
            eprintln!("omnish: warning: {}", crate::term::visible::line(w));
        }
        crate::store::shown::note_if_on_terminal(&setup.facts.data_root, outcome.hits);
        if outcome.hits == 0 {
            return Ok(1);
        }
        Ok(0)
    }
}

/// A library error named as `search` names things: the PATTERN's errors say what is wrong
/// with it and need no name.
fn named(e: anyhow::Error) -> anyhow::Error {
    let e = crate::error::Error::from(e);
    match e.as_usage().and_then(|u| u.field) {
        Some(Field::Grep) => e.into(),
        _ => Setup::flags(e),
    }
}

impl SearchArgs {
    fn request(&self, setup: &Setup) -> Result<SearchRequest> {
        let filters = Filters {
            failed: self.failed,
            grep: None,
            cwd: None,
            here: self.here,
            since: self.since.clone(),
            session: Some(self.session.clone()),
            host: self.host.clone(),
            user: self.user.clone(),
            ids: Vec::new(),
            author: Some(self.author.clone()),
        };
        let selection = filters
            .resolve(&setup.facts, store::now_ms(), SessionChoice::All)
            .map_err(Setup::flags)?;
        Ok(SearchRequest {
            data_root: setup.facts.data_root.clone(),
            current_session: setup.facts.current_session.clone(),
            selection,
            pattern: self.pattern.clone(),
            case_insensitive: self.ignore_case,
            fixed_strings: self.fixed_strings,
            commands_only: self.commands,
            context: self.context,
            format: match self.format {
                PlainFormat::Text => SearchFormat::Text,
                PlainFormat::Json => SearchFormat::Json,
            },
            color: self.format == PlainFormat::Text
                && std::io::stdout().is_terminal()
                && !setup.no_color,
        })
    }
}
