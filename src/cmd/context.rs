//! `omnish context`: select → read → render → redact → budget → format, onto stdout.

use crate::cli::ContextArgs;
use crate::cmd::Run;
use crate::context::format;
use crate::context::model::{CommandContext, ContextDoc, Parts};
use crate::context::redact::redact;
use crate::context::select::{self, Candidate, Filter, Query};
use crate::context::{models, truncate};
use crate::error::ExitError;
use crate::store;
use anyhow::{Context, Result};
use std::io::Write;

impl Run for ContextArgs {
    fn run(self) -> Result<i32> {
        let parts = if self.results_only {
            Parts::ResultsOnly
        } else if self.commands_only {
            Parts::CommandsOnly
        } else {
            Parts::All
        };
        let query = self.query()?;
        let root = store::data_root()?;
        let sessions = select::sessions(&root, &self.session)?;
        let group_sessions = self.session == select::SessionChoice::All;

        // Select per session, then keep the newest `limit` overall, grouped by session with the
        // current session last (the order `sessions` gives).
        let mut picked: Vec<Candidate> = Vec::new();
        for s in &sessions {
            picked.extend(query.select(s)?);
        }
        if picked.len() > query.limit {
            picked.sort_by_key(|c| std::cmp::Reverse((c.record.started_at, c.record.seq)));
            picked.truncate(query.limit);
            let order = |c: &Candidate| sessions.iter().position(|s| s.dir == c.session_dir);
            picked.sort_by_key(|c| (order(c), c.record.started_at, c.record.seq));
        }

        let redacting = !self.no_redact;
        let mut commands: Vec<CommandContext> = picked
            .into_iter()
            .map(|c| prepare(c, parts, redacting))
            .collect();
        commands = truncate::fold_repeats(commands);
        if parts != Parts::CommandsOnly {
            for c in &mut commands {
                truncate::truncate(c, self.max_lines);
            }
        }
        let mut doc = ContextDoc {
            commands,
            group_sessions,
            parts,
            report: Default::default(),
        };

        let budget = self.budget_and_tokenizer()?;
        let text = format::render_within(
            &mut doc,
            self.format.into(),
            budget.as_ref().map(|(limit, name)| (*limit, name.as_str())),
        )
        .map_err(|e| match e.downcast_ref::<ExitError>() {
            Some(_) if self.budget.is_some() => e.context("--budget"),
            _ => e,
        })?;
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())
            .context("cannot write to stdout")?;
        out.flush().context("cannot write to stdout")?;
        Ok(0)
    }
}

impl ContextArgs {
    fn query(&self) -> Result<Query> {
        let mut filters: Vec<Box<dyn Filter>> = Vec::new();
        if self.failed {
            filters.push(Box::new(select::Failed));
        }
        if let Some(pattern) = &self.grep {
            let re = regex::Regex::new(pattern).map_err(|e| {
                ExitError::usage(format!(
                    "--grep: invalid regular expression '{pattern}': {e}"
                ))
            })?;
            filters.push(Box::new(select::Grep(re)));
        }
        if let Some(dir) = &self.cwd {
            let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
            filters.push(Box::new(select::Within(dir)));
        }
        if self.here {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            filters.push(Box::new(select::Within(select::git_root_or(&cwd))));
        }
        if let Some(since) = &self.since {
            let ms = select::parse_duration(since)
                .map_err(|e| ExitError::usage(format!("--since: {e}")))?;
            filters.push(Box::new(select::Since(store::now_ms().saturating_sub(ms))));
        }
        let limit = if self.last { 1 } else { self.recent };
        Ok(Query { filters, limit })
    }

    /// The token ceiling and tokenizer, from --budget, --model and --tokenizer.
    fn budget_and_tokenizer(&self) -> Result<Option<(usize, String)>> {
        let profile = match &self.model {
            Some(name) => {
                Some(models::resolve_model(name).map_err(|e| ExitError::usage(e.to_string()))?)
            }
            None => None,
        };
        let limit = self.budget.or(profile.map(|p| p.default_budget()));
        let Some(limit) = limit else {
            if self.tokenizer.is_some() {
                return Err(ExitError::usage("--tokenizer needs --budget or --model").into());
            }
            return Ok(None);
        };
        let name = self
            .tokenizer
            .clone()
            .or(profile.map(|p| p.tokenizer.to_string()))
            .unwrap_or_else(|| "o200k".to_string());
        if !crate::context::tokenizer::TOKENIZERS.contains(&name.as_str()) {
            return Err(ExitError::usage(format!(
                "--tokenizer: unknown tokenizer '{name}'; known tokenizers: {}",
                crate::context::tokenizer::TOKENIZERS.join(", ")
            ))
            .into());
        }
        Ok(Some((limit, name)))
    }
}

/// Read, render and redact one selected command.
fn prepare(mut c: Candidate, parts: Parts, redacting: bool) -> CommandContext {
    let r = &c.record;
    let mut ctx = CommandContext::new(r.session_id.clone(), r.seq, r.command_line.clone());
    ctx.cwd = r.cwd.clone();
    ctx.started_at = r.started_at;
    ctx.running = c.running;
    if !c.running && !c.cut_off {
        ctx.ended_at = Some(r.ended_at);
        ctx.exit_code = r.exit_code;
    }
    if parts != Parts::CommandsOnly {
        ctx.output = c.rendered().to_vec();
        ctx.output_lines = ctx.output.len();
    }
    if redacting {
        ctx.command_line = redact(&ctx.command_line).into_owned();
        ctx.cwd = redact(&ctx.cwd).into_owned();
        if !ctx.output.is_empty() {
            let joined = ctx.output.join("\n");
            if let std::borrow::Cow::Owned(clean) = redact(&joined) {
                ctx.output = clean.split('\n').map(str::to_string).collect();
                ctx.output_lines = ctx.output.len();
            }
        }
    }
    ctx
}
