//! The markdown format (see the parent module's docs).

use super::{
    Formatter, changed_heading, changed_lines, collect_blocks, command_lines, files_heading,
    has_sections, join_blocks, loop_lines, note_lines, output_with_gaps, prompt_line, report_note,
    status_note, summary_note, tree_line,
};
use crate::context::model::{ContextDoc, Parts};
use crate::term::visible;

/// Markdown: one `console` fenced block per command.
pub(crate) struct MarkdownFormatter;

/// A backtick fence longer than any run of backticks in `lines` (at least three).
fn fence_for(lines: &[String]) -> String {
    let mut longest = 0;
    for l in lines {
        let mut run = 0;
        for ch in l.chars() {
            if ch == '`' {
                run += 1;
                longest = longest.max(run);
            } else {
                run = 0;
            }
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// `text` as an inline code span that its own backticks cannot end.
pub(crate) fn code_span(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for ch in text.chars() {
        if ch == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let ticks = "`".repeat(longest + 1);
    if longest > 0 || text.starts_with(' ') || text.ends_with(' ') {
        format!("{ticks} {text} {ticks}")
    } else {
        format!("{ticks}{text}{ticks}")
    }
}

impl Formatter for MarkdownFormatter {
    fn format(&self, doc: &ContextDoc) -> String {
        let header = |id: &str| format!("## Session {}", visible::line(id));
        let mut blocks = collect_blocks(doc, &header, true, &|c, cwd_changed| {
            let mut b = Vec::new();
            let mut body: Vec<String> = Vec::new();
            if doc.parts != Parts::ResultsOnly {
                if cwd_changed {
                    b.push(format!("cwd: {}", code_span(&visible::line(&c.cwd))));
                }
                for (i, l) in command_lines(c).into_iter().enumerate() {
                    body.push(if i == 0 {
                        prompt_line(c, &l)
                    } else {
                        l.to_string()
                    });
                }
            }
            if doc.parts != Parts::CommandsOnly && !c.summarized {
                body.extend(output_with_gaps(c));
            }
            if c.summarized && doc.parts == Parts::All && body.len() == 1 {
                // One line, like the text format: `$ make` [exit 2, 240 lines of output omitted]
                b.push(format!("{} {}", code_span(&body[0]), summary_note(c)));
            } else {
                if !body.is_empty() {
                    let fence = fence_for(&body);
                    b.push(format!("{fence}console"));
                    b.extend(body);
                    b.push(fence);
                }
                if c.summarized && doc.parts != Parts::CommandsOnly {
                    b.push(summary_note(c));
                }
            }
            // A summary note already carries the status.
            let noted = c.summarized && doc.parts != Parts::CommandsOnly;
            if !noted && doc.parts != Parts::ResultsOnly {
                if let Some(s) = status_note(c) {
                    b.push(format!("[{s}]"));
                }
            }
            if c.repeat > 1 && doc.parts != Parts::ResultsOnly {
                b.push(format!("[ran {} times]", c.repeat));
            }
            if doc.parts != Parts::ResultsOnly {
                // The attempts become a list under the note.
                let lines = loop_lines(c, !c.summarized, &|cmd| code_span(cmd));
                if lines.len() > 1 {
                    b.push(String::new());
                }
                b.extend(lines);
            }
            b
        });
        let mut sections = section_blocks(doc);
        if !sections.is_empty() && !blocks.is_empty() {
            sections.push(vec!["## Commands".to_string()]);
        }
        sections.append(&mut blocks);
        let mut blocks = sections;
        if doc.report.changed_anything() {
            blocks.push(vec![format!("*{}*", report_note(doc))]);
        }
        join_blocks(&blocks)
    }
}

/// `lines` in a fenced `text` block.
fn fenced(lines: Vec<String>) -> Vec<String> {
    let fence = fence_for(&lines);
    let mut b = vec![format!("{fence}text")];
    b.extend(lines);
    b.push(fence);
    b
}

/// The notes, environment and files, each under a `## Heading`.
fn section_blocks(doc: &ContextDoc) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    if !has_sections(doc) {
        return blocks;
    }
    if !doc.notes.is_empty() {
        blocks.push(vec!["## Notes".to_string()]);
        let mut b = Vec::new();
        for n in &doc.notes {
            b.extend(note_lines(n));
        }
        blocks.push(b);
    }
    if let Some(env) = &doc.env {
        blocks.push(vec!["## Environment".to_string()]);
        let b: Vec<String> = env
            .facts()
            .into_iter()
            .map(|(k, v)| format!("- {k}: {}", code_span(&visible::line(&v))))
            .collect();
        if !b.is_empty() {
            blocks.push(b);
        }
        if !env.vars.is_empty() && !env.vars_dropped {
            blocks.push(fenced(
                env.vars
                    .iter()
                    .map(|(k, v)| format!("{}={}", visible::line(k), visible::line(v)))
                    .collect(),
            ));
        }
    }
    if let Some(files) = &doc.files {
        if files.tree.is_some() {
            blocks.push(vec![format!("## {}", files_heading(files))]);
            blocks.push(fenced(files.lines.iter().map(tree_line).collect()));
        }
        if let Some(c) = &files.changed {
            blocks.push(vec![format!("## {}", changed_heading(c))]);
            blocks.push(fenced(changed_lines(c)));
        }
    }
    blocks
}
