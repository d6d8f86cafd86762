//! `omnish diff [OLD] [NEW]`: the ids and flags made into the library's plain request
//! (`context::diff`), the unified diff written to standard output. Exit status as diff(1)'s:
//! 0 same, 1 different, 2 usage.

use std::io::{BufWriter, Write};

use anyhow::Result;

use crate::cli::DiffArgs;
use crate::cmd::{RunWith, Setup};
use crate::context::diff::{self, CommandRef, DiffRequest};
use crate::error::Error;

impl RunWith for DiffArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        let req = request(&self, setup)?;
        let mut out = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
        let outcome = diff::diff(&req, &mut out).map_err(Setup::flags)?;
        out.flush()?;
        for w in &outcome.warnings {
            eprintln!("omnish: warning: {}", crate::term::visible::line(w));
        }
        if !outcome.differ() {
            eprintln!(
                "omnish: the outputs of {} and {} are the same{}",
                outcome.old.id,
                outcome.new.id,
                if req.normalize { " (normalized)" } else { "" }
            );
            return Ok(0);
        }
        Ok(1)
    }
}

/// The library's request for these flags.
pub(crate) fn request(args: &DiffArgs, setup: &Setup) -> Result<DiffRequest> {
    let ids = args
        .ids
        .iter()
        .map(|id| CommandRef::parse(id))
        .collect::<crate::error::Result<Vec<_>>>()?;
    if args.ok && ids.len() == 2 {
        return Err(Error::usage(
            "--ok picks the old command (the last successful run); give one id or none with it",
        )
        .into());
    }
    let (old, new) = match ids.as_slice() {
        [] => (None, None),
        [new] => (None, Some(new.clone())),
        [old, new, ..] => (Some(old.clone()), Some(new.clone())),
    };
    Ok(DiffRequest {
        data_root: setup.facts.data_root.clone(),
        current_session: setup.facts.current_session.clone(),
        session: args.session.clone(),
        old,
        new,
        ok: args.ok,
        normalize: args.normalize,
        redact: !args.no_redact && setup.settings.redact,
        context: args.context,
        max_lines: None,
    })
}

/// Lines of diff a prompt carries at most.
const PROMPT_DIFF_LINES: usize = 400;

/// The diff `omnish ask --diff` adds to its context: the last command against its previous
/// run, normalized, at most [`PROMPT_DIFF_LINES`] lines; what went wrong finding it is said on
/// stderr and the prompt goes without.
pub(crate) fn for_prompt(setup: &Setup) -> String {
    let req = DiffRequest {
        data_root: setup.facts.data_root.clone(),
        current_session: setup.facts.current_session.clone(),
        session: "current".into(),
        old: None,
        new: None,
        ok: false,
        normalize: true,
        redact: setup.settings.redact,
        context: 3,
        max_lines: Some(PROMPT_DIFF_LINES),
    };
    let mut text = Vec::new();
    match diff::diff(&req, &mut text) {
        Ok(outcome) if !outcome.differ() => format!(
            "\n\n# The output of {} is the same as its previous run's ({}), times and ids masked.\n",
            outcome.new.id, outcome.old.id
        ),
        Ok(outcome) => {
            let mut s = format!(
                "\n\n# How the output of {} differs from its previous run's ({}), times and ids masked:\n{}",
                outcome.new.id,
                outcome.old.id,
                String::from_utf8_lossy(&text)
            );
            if outcome.cut > 0 {
                s.push_str(&format!("[{} more lines of diff left out]\n", outcome.cut));
            }
            s
        }
        Err(e) => {
            eprintln!("omnish: no diff in the prompt: {e}");
            String::new()
        }
    }
}
