//! The text format (see the parent module's docs).

use super::{
    Formatter, changed_heading, changed_lines, collect_blocks, command_lines, files_heading,
    has_sections, join_blocks, loop_lines, note_lines, output_with_gaps, prompt_line, report_note,
    status_note, summary_note, tree_line,
};
use crate::context::model::{ContextDoc, Parts};
use crate::term::visible;

/// Plain text, close to what the terminal showed.
pub(crate) struct TextFormatter;

impl Formatter for TextFormatter {
    fn format(&self, doc: &ContextDoc) -> String {
        let header = |id: &str| format!("=== Session {} ===", visible::line(id));
        let mut blocks = collect_blocks(doc, &header, false, &|c, cwd_changed| {
            let mut b = Vec::new();
            if doc.parts != Parts::ResultsOnly {
                if cwd_changed {
                    b.push(format!("# cwd: {}", visible::line(&c.cwd)));
                }
                let cmd = command_lines(c);
                let last = cmd.len() - 1;
                for (i, l) in cmd.iter().enumerate() {
                    let mut line = if i == 0 {
                        prompt_line(c, l)
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
            if doc.parts != Parts::ResultsOnly {
                b.extend(loop_lines(c, !c.summarized, &|cmd| format!("`{cmd}`")));
            }
            b
        });
        let mut sections = section_blocks(doc);
        if !sections.is_empty() && !blocks.is_empty() {
            sections.push(vec!["=== Commands ===".to_string()]);
        }
        sections.append(&mut blocks);
        let mut blocks = sections;
        if doc.report.changed_anything() {
            blocks.push(vec![format!("[{}]", report_note(doc))]);
        }
        join_blocks(&blocks)
    }
}

/// The notes, environment and files, each a block under a `=== Heading ===` line.
fn section_blocks(doc: &ContextDoc) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    if !has_sections(doc) {
        return blocks;
    }
    if !doc.notes.is_empty() {
        let mut b = vec!["=== Notes ===".to_string()];
        for n in &doc.notes {
            b.extend(note_lines(n));
        }
        blocks.push(b);
    }
    if let Some(env) = &doc.env {
        let mut b = vec!["=== Environment ===".to_string()];
        for (k, v) in env.facts() {
            b.push(format!("{k}: {}", visible::line(&v)));
        }
        if !env.vars.is_empty() && !env.vars_dropped {
            b.push("variables:".into());
            for (k, v) in &env.vars {
                b.push(format!("  {}={}", visible::line(k), visible::line(v)));
            }
        }
        blocks.push(b);
    }
    if let Some(files) = &doc.files {
        if files.tree.is_some() {
            let mut b = vec![format!("=== {} ===", files_heading(files))];
            b.extend(files.lines.iter().map(tree_line));
            blocks.push(b);
        }
        if let Some(c) = &files.changed {
            let mut b = vec![format!("=== {} ===", changed_heading(c))];
            b.extend(changed_lines(c));
            blocks.push(b);
        }
    }
    blocks
}
