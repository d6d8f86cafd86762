//! The JSON format, schema v1 (see the parent module's docs).

use serde::Serialize;

use super::{Formatter, exit_explanation};
use crate::context::model::{
    CommandContext, ContextDoc, EnvSection, FilesSection, GitState, LoopInfo, NoteEntry, Parts,
    TreeKind,
};

/// One JSON document, schema v1 (see the module docs).
pub(crate) struct JsonFormatter;

#[derive(Serialize)]
struct JsonDoc<'a> {
    version: u32,
    parts: &'static str,
    notes: &'a [NoteEntry],
    environment: Option<JsonEnv<'a>>,
    files: Option<JsonFiles<'a>>,
    commands: Vec<JsonCommand<'a>>,
    sessions: Vec<JsonSession<'a>>,
    summarized: Vec<JsonId<'a>>,
    dropped: Vec<JsonId<'a>>,
    notes_dropped: &'a [String],
    sections_reduced: &'a [String],
    budget: Option<JsonBudget<'a>>,
}

#[derive(Serialize)]
struct JsonEnv<'a> {
    os: Option<&'a str>,
    kernel: Option<&'a str>,
    shell: Option<&'a str>,
    terminal: Option<JsonSize>,
    cwd: &'a str,
    git: Option<&'a GitState>,
    toolchains: Vec<JsonPair<'a>>,
    /// `null` when the budget left them out.
    variables: Option<Vec<JsonPair<'a>>>,
}

#[derive(Serialize)]
struct JsonSize {
    cols: u16,
    rows: u16,
}

#[derive(Serialize)]
struct JsonPair<'a> {
    name: &'a str,
    value: &'a str,
}

#[derive(Serialize)]
struct JsonFiles<'a> {
    root: &'a str,
    total_files: usize,
    /// `null` without `--files`.
    tree: Option<Vec<JsonTreeLine<'a>>>,
    changed: Option<JsonChanged<'a>>,
}

#[derive(Serialize)]
struct JsonTreeLine<'a> {
    path: &'a str,
    depth: usize,
    /// `file`, `dir` (its entries follow), `collapsed` (one line for `files` files), `more`
    /// (`files` more files of the directory above).
    kind: &'static str,
    files: Option<usize>,
}

#[derive(Serialize)]
struct JsonChanged<'a> {
    since: u64,
    files: Vec<JsonChangedFile<'a>>,
    more: usize,
}

#[derive(Serialize)]
struct JsonChangedFile<'a> {
    path: &'a str,
    modified_at: u64,
}

fn pairs(v: &[(String, String)]) -> Vec<JsonPair<'_>> {
    v.iter()
        .map(|(name, value)| JsonPair { name, value })
        .collect()
}

fn env_json(e: &EnvSection) -> JsonEnv<'_> {
    JsonEnv {
        os: e.os.as_deref(),
        kernel: e.kernel.as_deref(),
        shell: e.shell.as_deref(),
        terminal: e.terminal.map(|(cols, rows)| JsonSize { cols, rows }),
        cwd: &e.cwd,
        git: e.git.as_ref(),
        toolchains: pairs(&e.toolchains),
        variables: (!e.vars_dropped).then(|| pairs(&e.vars)),
    }
}

fn files_json(f: &FilesSection) -> JsonFiles<'_> {
    JsonFiles {
        root: &f.root,
        total_files: f.total_files,
        tree: f.tree.as_ref().map(|_| {
            f.lines
                .iter()
                .map(|l| {
                    let (kind, files) = match l.kind {
                        TreeKind::File => ("file", None),
                        TreeKind::Dir => ("dir", None),
                        TreeKind::Collapsed(n) => ("collapsed", Some(n)),
                        TreeKind::MoreFiles(n) => ("more", Some(n)),
                    };
                    JsonTreeLine {
                        path: &l.path,
                        depth: l.depth,
                        kind,
                        files,
                    }
                })
                .collect()
        }),
        changed: f.changed.as_ref().map(|c| JsonChanged {
            since: c.since,
            files: c
                .files
                .iter()
                .map(|(path, modified_at)| JsonChangedFile {
                    path,
                    modified_at: *modified_at,
                })
                .collect(),
            more: c.more,
        }),
    }
}

#[derive(Serialize)]
struct JsonCommand<'a> {
    session_id: &'a str,
    seq: u64,
    command_line: Option<&'a str>,
    /// Chars left out of the middle of a long `command_line` (0: whole).
    command_line_omitted_chars: u64,
    cwd: &'a str,
    started_at: u64,
    ended_at: Option<u64>,
    exit_code: Option<i32>,
    exit_explanation: Option<String>,
    running: bool,
    /// Where it ran: the record's host, else the session's.
    host: &'a str,
    /// As whom: the record's user, else the session's; absent when neither says.
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<&'a str>,
    /// The id of the command that started the nested shell it ran in; absent at the top level.
    #[serde(skip_serializing_if = "Option::is_none")]
    nested_in: Option<&'a str>,
    /// How deep that shell is; absent at the top level (0).
    #[serde(skip_serializing_if = "is_zero")]
    depth: u32,
    /// Why the shell it started was not recorded command by command; absent when omnish did
    /// not try, or did.
    #[serde(skip_serializing_if = "Option::is_none")]
    unsplit: Option<&'a str>,
    /// Who ran it: `user`, an agent's name, an `omnish exec` label.
    author: &'a str,
    output: Option<String>,
    gaps: Vec<JsonGap>,
    output_lines: usize,
    omitted_lines: usize,
    repeat: usize,
    summarized: bool,
    recording_stopped: bool,
    /// A loop of failed attempts folded into this one, else `null`.
    #[serde(rename = "loop")]
    attempts: Option<&'a LoopInfo>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
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
        command_line_omitted_chars: if parts == Parts::ResultsOnly {
            0
        } else {
            c.command_line_omitted
        },
        cwd: &c.cwd,
        started_at: c.started_at,
        ended_at: c.ended_at,
        exit_code: c.exit_code,
        exit_explanation: exit_explanation(c),
        running: c.running,
        host: &c.host,
        user: c.user.as_deref(),
        nested_in: c.nested_in.as_deref(),
        depth: c.depth,
        unsplit: c.unsplit.as_deref(),
        author: &c.author,
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
        attempts: c.attempts.as_ref(),
    }
}

/// One command as the JSON format gives it, as a value (for a front end that hands it on
/// inside a document of its own, as the MCP server's structured results do).
pub(crate) fn command_value(c: &CommandContext, parts: Parts) -> serde_json::Value {
    serde_json::to_value(command_json(c, parts)).unwrap_or(serde_json::Value::Null)
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
            notes: &doc.notes,
            environment: doc.env.as_ref().map(env_json),
            files: doc.files.as_ref().map(files_json),
            commands: doc
                .commands
                .iter()
                .map(|c| command_json(c, doc.parts))
                .collect(),
            sessions,
            summarized: id_list(&r.summarized),
            dropped: id_list(&r.dropped),
            notes_dropped: &r.notes_dropped,
            sections_reduced: &r.sections,
            budget: r.budget.map(|budget| JsonBudget {
                budget,
                tokens: r.tokens,
                tokenizer: r.tokenizer.as_deref(),
            }),
        };
        // Escapes C1 controls and bidi overrides too: no byte of it controls a terminal.
        let mut s =
            crate::term::visible::json_string(&v, true).expect("plain structs always serialize");
        s.push('\n');
        s
    }
}
