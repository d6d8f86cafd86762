//! The text format (see the parent module's docs).

use super::{
    Formatter, collect_blocks, command_lines, join_blocks, output_with_gaps, report_note,
    status_note, summary_note,
};
use crate::context::model::{ContextDoc, Parts};

/// Plain text, close to what the terminal showed.
pub(crate) struct TextFormatter;

impl Formatter for TextFormatter {
    fn format(&self, doc: &ContextDoc) -> String {
        let header = |id: &str| format!("=== Session {id} ===");
        let mut blocks = collect_blocks(doc, &header, false, &|c, cwd_changed| {
            let mut b = Vec::new();
            if doc.parts != Parts::ResultsOnly {
                if cwd_changed {
                    b.push(format!("# cwd: {}", c.cwd));
                }
                let cmd = command_lines(c);
                let last = cmd.len() - 1;
                for (i, l) in cmd.iter().enumerate() {
                    let mut line = if i == 0 {
                        format!("$ {l}")
                    } else {
                        l.to_string()
                    };
                    if i == last && c.summarized && doc.parts == Parts::All {
                        line.push_str("  ");
                        line.push_str(&summary_note(c));
                    }
                    b.push(line);
                }
            }
            match doc.parts {
                Parts::All => {
                    if !c.summarized {
                        b.extend(output_with_gaps(c));
                    }
                }
                Parts::ResultsOnly => {
                    if c.summarized {
                        b.push(summary_note(c));
                    } else {
                        b.extend(output_with_gaps(c));
                    }
                }
                Parts::CommandsOnly => {}
            }
            if doc.parts != Parts::ResultsOnly && !(c.summarized && doc.parts == Parts::All) {
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
            blocks.push(vec![format!("[{}]", report_note(doc))]);
        }
        join_blocks(&blocks)
    }
}
