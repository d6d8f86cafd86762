//! Types shared by the context pipeline stages.
//!
//! `select` yields [`crate::store::CommandRecord`]s; `read` + `render` + `redact` turn each into a
//! [`CommandContext`]; `budget` trims the list and fills a [`BudgetReport`]; `format` prints a
//! [`ContextDoc`].

use serde::Serialize;

/// One command, prepared for a language model: what ran, where, how it ended, and the text the
/// user saw (already rendered and redacted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CommandContext {
    pub session_id: String,
    pub seq: u64,
    /// The command line exactly as typed (redacted). May contain newlines.
    pub command_line: String,
    /// Working directory the command ran in ("" when unknown).
    pub cwd: String,
    /// Milliseconds since the Unix epoch.
    pub started_at: u64,
    /// Milliseconds since the Unix epoch; `None` while the command is still running or when the
    /// recording was cut off.
    pub ended_at: Option<u64>,
    /// `None` when unknown (still running, or the recorder died before the command ended).
    pub exit_code: Option<i32>,
    /// The command had not finished when the context was taken.
    pub running: bool,
    /// Rendered output lines (no trailing newline characters). After truncation this holds only
    /// the kept lines; `gaps` says where the others stood.
    pub output: Vec<String>,
    /// Number of lines the full rendered output had.
    pub output_lines: usize,
    /// Every elision point, in order: `(index into output, lines omitted there)`. Formatters print
    /// a `... (N lines omitted) ...` line at each. Truncation that keeps error lines from the
    /// middle of the output leaves several gaps; a summarized command has one holding everything.
    pub gaps: Vec<(usize, usize)>,
    /// How many times this same command ran back to back with the same output (1 = once).
    pub repeat: usize,
    /// The budget compressed this command to a one-line summary: `output` is empty and
    /// formatters print only command, status and `output_lines`.
    pub summarized: bool,
    /// A hash of the whole rendered output (0 when unknown), so that runs with the same kept
    /// lines but different omitted ones are not folded together.
    pub output_hash: u64,
    /// Recording stopped (disk full, write error) while this command ran: its output is what
    /// was saved until then and its exit status is unknown.
    pub recording_stopped: bool,
}

impl CommandContext {
    /// A context with no output yet; the other fields as given.
    pub fn new(session_id: impl Into<String>, seq: u64, command_line: impl Into<String>) -> Self {
        CommandContext {
            session_id: session_id.into(),
            seq,
            command_line: command_line.into(),
            cwd: String::new(),
            started_at: 0,
            ended_at: None,
            exit_code: None,
            running: false,
            output: Vec::new(),
            output_lines: 0,
            gaps: Vec::new(),
            repeat: 1,
            summarized: false,
            output_hash: 0,
            recording_stopped: false,
        }
    }
}

impl CommandContext {
    /// Lines removed by truncation (`--max-lines`) or the budget: the sum of the gaps.
    pub fn omitted_lines(&self) -> usize {
        self.gaps.iter().map(|&(_, n)| n).sum()
    }
}

/// What the budget stage did, so the formatter can say it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct BudgetReport {
    /// The ceiling in tokens, if one was set.
    pub budget: Option<usize>,
    /// Tokens the formatted result counts, if a budget was set.
    pub tokens: Option<usize>,
    /// Name of the tokenizer used for counting.
    pub tokenizer: Option<String>,
    /// Commands compressed to one-line summaries (session_id, seq).
    pub summarized: Vec<(String, u64)>,
    /// Commands dropped entirely, oldest first (session_id, seq).
    pub dropped: Vec<(String, u64)>,
}

impl BudgetReport {
    /// Whether anything was compressed or dropped.
    pub fn changed_anything(&self) -> bool {
        !self.summarized.is_empty() || !self.dropped.is_empty()
    }
}

/// Which parts of each command to show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Parts {
    /// Command line, status and output.
    #[default]
    All,
    /// Only outputs, no command lines (`--results-only`).
    ResultsOnly,
    /// Command lines, statuses and cwd, no output (`--commands-only`).
    CommandsOnly,
}

/// Everything a formatter prints: the commands (oldest first, grouped by session when
/// `group_sessions` is set; the current session last) and what the budget did.
#[derive(Debug, Clone, Default)]
pub(crate) struct ContextDoc {
    pub commands: Vec<CommandContext>,
    pub group_sessions: bool,
    pub parts: Parts,
    pub report: BudgetReport,
}

/// Builders and checks shared by the stages' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{CommandContext, ContextDoc};

    /// A finished command of session `s` with `out` as its whole output.
    pub(crate) fn ctx(seq: u64, line: &str, out: &[String]) -> CommandContext {
        let mut c = CommandContext::new("s", seq, line);
        c.exit_code = Some(0);
        c.output = out.to_vec();
        c.output_lines = out.len();
        c
    }

    /// `line 0`, `line 1`, ...
    pub(crate) fn numbered(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("line {i}")).collect()
    }

    /// Kept lines and gaps account for every line of the output, gaps in order.
    pub(crate) fn check_consistent(c: &CommandContext) {
        let total: usize = c.gaps.iter().map(|g| g.1).sum();
        assert_eq!(c.omitted_lines(), total);
        assert_eq!(c.output.len() + total, c.output_lines);
        assert!(c.gaps.windows(2).all(|w| w[0].0 < w[1].0), "{:?}", c.gaps);
        assert!(c.gaps.iter().all(|&(at, n)| at <= c.output.len() && n > 0));
    }

    /// Random documents: multi-line commands, ASCII and wide outputs, running, summarized and
    /// repeated commands, several sessions, every part selection.
    pub(crate) fn arb_doc() -> impl proptest::strategy::Strategy<Value = ContextDoc> {
        use proptest::prelude::*;
        let command = (
            "[a-z ]{1,12}(\n[a-z ]{1,8})?",
            proptest::collection::vec("[ -~]{0,40}|[a-zé日本 ]{0,10}", 0..30),
            proptest::option::of(0i32..160),
            "(/[a-z]{1,3}){0,2}",
            0usize..2,
            (any::<bool>(), any::<bool>(), 1usize..4, 0usize..25),
        );
        (
            proptest::collection::vec(command, 0..10),
            any::<bool>(),
            0usize..3,
        )
            .prop_map(|(cmds, group, parts)| {
                let commands = cmds
                    .into_iter()
                    .enumerate()
                    .map(
                        |(i, (line, out, exit, cwd, sess, (running, summ, repeat, max)))| {
                            let mut c = CommandContext::new(format!("s{sess}"), i as u64, line);
                            c.cwd = cwd;
                            c.started_at = 1_700_000_000_000 + i as u64 * 1000;
                            c.ended_at = Some(c.started_at + 500);
                            c.output = out.iter().map(|s| s.to_string()).collect();
                            c.output_lines = out.len();
                            c.exit_code = exit;
                            c.running = running && exit.is_none();
                            c.repeat = repeat;
                            if c.running {
                                c.ended_at = None;
                            }
                            crate::context::truncate::truncate(&mut c, max);
                            if summ && !c.running {
                                c.output.clear();
                                c.gaps = if c.output_lines > 0 {
                                    vec![(0, c.output_lines)]
                                } else {
                                    vec![]
                                };
                                c.summarized = true;
                            }
                            c
                        },
                    )
                    .collect();
                let mut d = ContextDoc {
                    commands,
                    ..Default::default()
                };
                d.group_sessions = group;
                d.parts = [
                    super::Parts::All,
                    super::Parts::ResultsOnly,
                    super::Parts::CommandsOnly,
                ][parts];
                d
            })
    }
}
