//! `omnish context`: the flags mapped onto the library's request options (`options`, shared
//! with `ask` and `fix`), built into a request with the process's [`Setup`] and run through the
//! pipeline (`context::run`); what it did is reported on stderr.

use crate::cli::{ContextArgs, ContextOpts, SelectOpts};
use crate::cmd::{RunWith, Setup};
use crate::context::model::Parts;
use crate::context::request::{Filters, Options};
use crate::context::{self, Request};
use anyhow::Result;

impl RunWith for ContextArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        let mut options = options(&self.opts);
        if self.opts.select.pick {
            crate::cmd::pick::into(&mut options, setup)?;
        }
        let request = request(&options, setup)?;
        let mut out = std::io::stdout().lock();
        let outcome = context::run(&request, &mut out).map_err(Setup::flags)?;
        for w in &outcome.warnings {
            eprintln!("omnish: warning: {}", crate::term::visible::line(w));
        }
        // How many commands the terminal was shown, for the fold of this run's record.
        crate::store::shown::note_if_on_terminal(&setup.facts.data_root, outcome.commands);
        if let Some(note) = outcome.nothing_matched {
            // grep's convention: nothing found is status 1, so `omnish context --failed | llm`
            // does not send an empty prompt unnoticed.
            eprintln!("omnish: {note}");
            return Ok(1);
        }
        Ok(0)
    }
}

/// The library's options for these flags (the configuration fills in what they leave out).
pub(crate) fn options(opts: &ContextOpts) -> Options {
    Options {
        filters: filters(&opts.select),
        recent: opts.select.recent,
        last: opts.select.last,
        parts: if opts.results_only {
            Parts::ResultsOnly
        } else if opts.commands_only {
            Parts::CommandsOnly
        } else {
            Parts::All
        },
        max_lines: opts.max_lines,
        max_line_width: opts.max_line_width,
        budget: opts.budget,
        model: opts.model.clone(),
        default_model: None,
        tokenizer: opts.tokenizer.clone(),
        format: opts.format.map(Into::into),
        redact: opts.no_redact.then_some(false),
        no_notes: opts.no_notes,
        env: opts.env,
        files: opts.files,
        depth: opts.depth,
        changed: opts.changed,
        screens: opts.screens,
    }
}

/// The filters the selection flags make (`context`, `ask`, `fix`, `export`).
pub(crate) fn filters(opts: &SelectOpts) -> Filters {
    Filters {
        failed: opts.failed,
        grep: opts.grep.clone(),
        cwd: opts.cwd.clone(),
        here: opts.here,
        since: opts.since.clone(),
        session: Some(opts.session.clone()),
        host: opts.host.clone(),
        user: opts.user.clone(),
        ids: opts.id.clone(),
        author: Some(opts.author.clone()),
    }
}

/// The request `options` make here, its errors naming the flags.
pub(crate) fn request(options: &Options, setup: &Setup) -> Result<Request> {
    options
        .build(&setup.facts, &setup.settings)
        .map_err(Setup::flags)
}
