//! The JSON format, schema v1 (see the parent module's docs).

use serde::Serialize;

use super::{Formatter, explain_status};
use crate::context::model::{CommandContext, ContextDoc, Parts};

/// One JSON document, schema v1 (see the module docs).
pub(crate) struct JsonFormatter;

#[derive(Serialize)]
struct JsonDoc<'a> {
    version: u32,
    parts: &'static str,
    commands: Vec<JsonCommand<'a>>,
    sessions: Vec<JsonSession<'a>>,
    summarized: Vec<JsonId<'a>>,
    dropped: Vec<JsonId<'a>>,
    budget: Option<JsonBudget<'a>>,
}

#[derive(Serialize)]
struct JsonCommand<'a> {
    session_id: &'a str,
    seq: u64,
    command_line: Option<&'a str>,
    cwd: &'a str,
    started_at: u64,
    ended_at: Option<u64>,
    exit_code: Option<i32>,
    exit_explanation: Option<String>,
    running: bool,
    output: Option<String>,
    gaps: Vec<JsonGap>,
    output_lines: usize,
    omitted_lines: usize,
    repeat: usize,
    summarized: bool,
    recording_stopped: bool,
}

#[derive(Serialize)]
struct JsonGap {
    at: usize,
    omitted: usize,
}

#[derive(Serialize)]
struct JsonSession<'a> {
    session_id: &'a str,
    commands: usize,
}

#[derive(Serialize)]
struct JsonId<'a> {
    session_id: &'a str,
    seq: u64,
}

#[derive(Serialize)]
struct JsonBudget<'a> {
    budget: usize,
    tokens: Option<usize>,
    tokenizer: Option<&'a str>,
}

fn id_list(ids: &[(String, u64)]) -> Vec<JsonId<'_>> {
    ids.iter()
        .map(|(s, q)| JsonId {
            session_id: s,
            seq: *q,
        })
        .collect()
}

fn command_json(c: &CommandContext, parts: Parts) -> JsonCommand<'_> {
    let with_output = parts != Parts::CommandsOnly;
    JsonCommand {
        session_id: &c.session_id,
        seq: c.seq,
        command_line: (parts != Parts::ResultsOnly).then_some(c.command_line.as_str()),
        cwd: &c.cwd,
        started_at: c.started_at,
        ended_at: c.ended_at,
        exit_code: c.exit_code,
        exit_explanation: c.exit_code.and_then(explain_status),
        running: c.running,
        output: with_output.then(|| c.output.join("\n")),
        gaps: if with_output {
            c.gaps
                .iter()
                .map(|&(at, omitted)| JsonGap { at, omitted })
                .collect()
        } else {
            Vec::new()
        },
        output_lines: c.output_lines,
        omitted_lines: c.omitted_lines(),
        repeat: c.repeat,
        summarized: c.summarized,
        recording_stopped: c.recording_stopped,
    }
}

impl Formatter for JsonFormatter {
    fn format(&self, doc: &ContextDoc) -> String {
        let mut sessions: Vec<JsonSession> = Vec::new();
        for c in &doc.commands {
            match sessions.iter_mut().find(|s| s.session_id == c.session_id) {
                Some(s) => s.commands += 1,
                None => sessions.push(JsonSession {
                    session_id: &c.session_id,
                    commands: 1,
                }),
            }
        }
        let r = &doc.report;
        let v = JsonDoc {
            version: 1,
            parts: match doc.parts {
                Parts::All => "all",
                Parts::ResultsOnly => "results-only",
                Parts::CommandsOnly => "commands-only",
            },
            commands: doc
                .commands
                .iter()
                .map(|c| command_json(c, doc.parts))
                .collect(),
            sessions,
            summarized: id_list(&r.summarized),
            dropped: id_list(&r.dropped),
            budget: r.budget.map(|budget| JsonBudget {
                budget,
                tokens: r.tokens,
                tokenizer: r.tokenizer.as_deref(),
            }),
        };
        let mut s = serde_json::to_string_pretty(&v).expect("plain structs always serialize");
        s.push('\n');
        s
    }
}
