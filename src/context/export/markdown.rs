//! Markdown: a heading per command (its line as a code span), a line saying where it ran and
//! how it ended, and its output folded in `<details>`, in a fence longer than any run of
//! backticks in it (a line that would still close it is indented, see
//! [`crate::context::write_output`]). Outputs are streamed as `context` streams them, with
//! `--max-lines` and `--max-line-width` applied the same way.

use std::io::Write;

use super::{Item, has_output, status, took, utc};
use crate::context::stages::format::code_span;
use crate::context::stages::read;
use crate::context::{Request, Style, UNLIMITED_WIDTH_CAP, stream_plan, write_output};
use crate::error::Result;
use crate::term::visible;

pub(super) fn write(req: &Request, items: &[Item], out: &mut dyn Write) -> Result<()> {
    // Sessions of `omnish exec` and agents' hooks are shown as part of their terminal's.
    let sessions: std::collections::BTreeSet<&str> =
        items.iter().map(|i| i.group.as_str()).collect();
    writeln!(out, "# Terminal session export\n")?;
    let from = items.iter().map(|i| i.ctx.started_at).min().unwrap_or(0);
    let plural = if items.len() == 1 { "" } else { "s" };
    let which = match sessions.len() {
        1 => format!(
            "session {}",
            code_span(&visible::line(sessions.first().copied().unwrap_or("")))
        ),
        n => format!("{n} sessions"),
    };
    writeln!(
        out,
        "{} command{plural} from {which}, from {}.\n",
        items.len(),
        utc(from)
    )?;
    let line_cap = line_cap(req);
    let grouped = sessions.len() > 1;
    // Each command's section is written on a worker thread, in order (see `ordered`).
    super::ordered::write(
        items.len(),
        super::ordered::workers(),
        |n, out| section(req, n, &items[n], grouped, line_cap, out),
        &mut |_, _| Ok(()),
        out,
    )?;
    Ok(())
}

/// Chars of an output line written whole at most (as `context` streams them).
pub(super) fn line_cap(req: &Request) -> usize {
    match req.max_line_width {
        0 => UNLIMITED_WIDTH_CAP,
        w => w.saturating_mul(4).saturating_add(read::LINE_CAP),
    }
}

/// The section of command `n` (from 0) of the export.
fn section(
    req: &Request,
    n: usize,
    item: &Item,
    grouped: bool,
    line_cap: usize,
    out: &mut dyn Write,
) -> Result<()> {
    let ctx = &item.ctx;
    let line = visible::line(&ctx.command_line);
    writeln!(out, "## {}. {}\n", n + 1, code_span(&format!("$ {line}")))?;
    let mut facts = Vec::new();
    if !ctx.cwd.is_empty() {
        facts.push(code_span(&visible::line(&ctx.cwd)));
    }
    if let Some(place) = &ctx.elsewhere {
        facts.push(format!("on {}", code_span(&visible::line(place))));
    }
    if ctx.author != crate::store::USER {
        facts.push(format!("by {}", code_span(&visible::line(&ctx.author))));
    }
    if grouped {
        facts.push(format!(
            "session {}",
            code_span(&visible::line(&item.group))
        ));
    }
    facts.push(status(ctx));
    facts.push(utc(ctx.started_at));
    if let Some(t) = took(ctx) {
        facts.push(t);
    }
    writeln!(out, "{}\n", facts.join(" · "))?;
    if !has_output(item) {
        return Ok(());
    }
    let digest = super::digest(item, req.max_lines);
    if let Some(note) = digest.note() {
        writeln!(out, "*{}*\n", visible::line(&note))?;
        return Ok(());
    }
    if digest.lines == 0 {
        writeln!(out, "*No output.*\n")?;
        return Ok(());
    }
    let mut plan = stream_plan(
        &item.candidate,
        &digest,
        req.max_lines,
        item.redactor.clone(),
    );
    plan.known = item.known.clone();
    plan.spooled = item.spooled.clone();
    let fence = "`".repeat((digest.backticks + 1).max(3));
    let lines = match digest.lines {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    };
    let shown = match &plan.keep {
        Some(keep) => format!(", {} shown", keep.len()),
        None => String::new(),
    };
    write!(
        out,
        "<details>\n<summary>Output ({lines}{shown})</summary>\n\n{fence}console\n"
    )?;
    write_output(out, &plan, req.max_line_width, line_cap, Style::Markdown)?;
    writeln!(out, "\n{fence}\n\n</details>\n")?;
    Ok(())
}
