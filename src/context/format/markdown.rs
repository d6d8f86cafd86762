//! The markdown format (see the parent module's docs).

use super::{
    Formatter, collect_blocks, command_lines, join_blocks, output_with_gaps, report_note,
    status_note, summary_note,
};
use crate::context::model::{ContextDoc, Parts};

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
fn code_span(text: &str) -> String {
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
        let header = |id: &str| format!("## Session {id}");
        let mut blocks = collect_blocks(doc, &header, true, &|c, cwd_changed| {
            let mut b = Vec::new();
            let mut body: Vec<String> = Vec::new();
            if doc.parts != Parts::ResultsOnly {
                if cwd_changed {
                    b.push(format!("cwd: {}", code_span(&c.cwd)));
                }
                for (i, l) in command_lines(c).into_iter().enumerate() {
                    body.push(if i == 0 {
                        format!("$ {l}")
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
            b
        });
        if doc.report.changed_anything() {
            blocks.push(vec![format!("*{}*", report_note(doc))]);
        }
        join_blocks(&blocks)
    }
}
