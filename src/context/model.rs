//! Types shared by the context pipeline stages.
//!
//! `select` yields [`crate::store::CommandRecord`]s; `read` + `render` + `redact` turn each into a
//! [`CommandContext`]; `budget` trims the list and fills a [`BudgetReport`]; `format` prints a
//! [`ContextDoc`].
//!
//! The sources fill the sections ([`NoteEntry`], [`EnvSection`], [`FilesSection`]). Stages and
//! sources use this module, never the reverse (the test builders in `testing` aside): the files
//! section's tree, which the budget lays out again, is a [`TreeLayout`] the files source
//! implements.

use serde::Serialize;

/// One command, prepared for a language model: what ran, where, how it ended, and the text the
/// user saw (already rendered and redacted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CommandContext {
    pub session_id: String,
    pub seq: u64,
    /// The command line exactly as typed (redacted). May contain newlines. A line longer than
    /// [`crate::store::COMMAND_LINE_CAP`] chars is its head and tail around
    /// `…[N chars omitted]…`, N in `command_line_omitted`.
    pub command_line: String,
    /// Chars left out of the middle of `command_line` (0: it is whole), where the marker
    /// stands after the first `command_line_head` bytes.
    pub command_line_omitted: u64,
    pub command_line_head: usize,
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
    /// The seq and start time of the first of those runs, if runs were folded into this one.
    pub first_run: Option<(u64, u64)>,
    /// The budget compressed this command to a one-line summary: `output` is empty and
    /// formatters print only command, status and `output_lines`.
    pub summarized: bool,
    /// A hash of the whole rendered output (0 when unknown), so that runs with the same kept
    /// lines but different omitted ones are not folded together.
    pub output_hash: u64,
    /// Recording stopped (disk full, write error) while this command ran: its output is what
    /// was saved until then and its exit status is unknown.
    pub recording_stopped: bool,
    /// This entry stands for a run of failed attempts ([`crate::context::stages::loops`]): it is the
    /// last attempt, and this says how many came before and how they went.
    pub attempts: Option<LoopInfo>,
    /// A command kept out of history on purpose: its line and output were never recorded, so
    /// nothing says two of them are the same (they are never folded together).
    pub private: bool,
    /// The command that ended the shell (`exit`, `logout`, zsh's `bye`): its status is the
    /// shell's, not a failure of its own (see [`crate::store::ended_the_shell`]).
    pub ended_shell: bool,
    /// Where it ran: the record's host (a nested shell on another host, a container), else
    /// the session's ("" when neither says).
    pub host: String,
    /// As whom: the record's user, else the session's (`None` when neither says).
    pub user: Option<String>,
    /// The id (`<session>:<seq>`) of the command that started the nested shell it ran in;
    /// `None` at the top level.
    pub nested_in: Option<String>,
    /// How deep that shell is (0: the session's own shell).
    pub depth: u32,
    /// Why the shell this command started was not recorded command by command, when omnish
    /// tried ([`crate::store::CommandRecord::unsplit`]).
    pub unsplit: Option<String>,
    /// `user@host` when it ran as another user or on another host than the session's: text
    /// formats show it beside the command line, as a prompt would.
    pub elsewhere: Option<String>,
    /// Who ran it ([`crate::store::CommandRecord::author`]): `user`, an agent, an `exec` label.
    pub author: String,
}

/// A run of consecutive failed attempts folded into its last one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct LoopInfo {
    /// Failed attempts in the run, the shown one included (each repeat counts).
    pub failures: usize,
    /// When the first attempt started (ms since the epoch), and as a local clock time.
    pub since: u64,
    pub since_clock: String,
    /// Every attempt printed the same output (a hash of the whole rendered output).
    pub same_error: bool,
    /// Every attempt had the same command line.
    pub same_command: bool,
    /// The earlier attempts, oldest first, one line each (empty when `same_error`: they were
    /// copies of the shown one).
    pub earlier: Vec<Attempt>,
}

/// One earlier attempt of a loop, summarized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Attempt {
    pub seq: u64,
    pub started_at: u64,
    pub clock: String,
    /// Set when it differs from the shown attempt's command line (redacted).
    pub command_line: Option<String>,
    pub exit_code: Option<i32>,
    /// Times it ran back to back with the same output.
    pub repeat: usize,
    /// Its first error-looking output line (redacted, shortened), if any was kept.
    pub first_error: Option<String>,
}

impl CommandContext {
    /// A context with no output yet; the other fields as given.
    pub fn new(session_id: impl Into<String>, seq: u64, command_line: impl Into<String>) -> Self {
        CommandContext {
            session_id: session_id.into(),
            seq,
            command_line: command_line.into(),
            command_line_omitted: 0,
            command_line_head: 0,
            cwd: String::new(),
            started_at: 0,
            ended_at: None,
            exit_code: None,
            running: false,
            output: Vec::new(),
            output_lines: 0,
            gaps: Vec::new(),
            repeat: 1,
            first_run: None,
            summarized: false,
            output_hash: 0,
            recording_stopped: false,
            attempts: None,
            private: false,
            ended_shell: false,
            host: String::new(),
            user: None,
            nested_in: None,
            unsplit: None,
            depth: 0,
            elsewhere: None,
            author: crate::store::USER.to_string(),
        }
    }
}

impl CommandContext {
    /// The command line as head, chars omitted and tail (the whole line, 0 and "" when it is
    /// whole).
    pub fn command_line_parts(&self) -> (&str, u64, &str) {
        let line = self.command_line.as_str();
        if self.command_line_omitted == 0 {
            return (line, 0, "");
        }
        let head = self.command_line_head.min(line.len());
        let marker = crate::store::omitted_marker(self.command_line_omitted);
        match line.get(head..).and_then(|rest| rest.strip_prefix(&marker)) {
            Some(tail) => (&line[..head], self.command_line_omitted, tail),
            // Not where it was said to be: the line as it is.
            None => (line, 0, ""),
        }
    }

    /// The seq of the first run this entry stands for.
    pub fn first_seq(&self) -> u64 {
        self.first_run.map_or(self.seq, |(seq, _)| seq)
    }

    /// When the first run this entry stands for started.
    pub fn first_started_at(&self) -> u64 {
        self.first_run.map_or(self.started_at, |(_, t)| t)
    }

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
    /// Notes left out, the lowest priority first (their keys).
    pub notes_dropped: Vec<String>,
    /// What the budget did to the other sections: `environment variables left out`,
    /// `file list cut to 12 lines`, `environment dropped`, `files dropped`.
    pub sections: Vec<String>,
}

impl BudgetReport {
    /// Whether anything was compressed or dropped.
    pub fn changed_anything(&self) -> bool {
        !self.summarized.is_empty()
            || !self.dropped.is_empty()
            || !self.notes_dropped.is_empty()
            || !self.sections.is_empty()
    }
}

/// A pinned note as shown in context (already redacted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct NoteEntry {
    pub key: String,
    pub text: String,
    pub priority: i64,
    /// Who pinned it (`--source`), if said.
    pub source: Option<String>,
    /// The project it is scoped to (`--here`), if any.
    pub project: Option<String>,
    pub created_at: u64,
    pub expires_at: Option<u64>,
}

/// The environment snapshot (`--env`), values redacted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct EnvSection {
    /// `Ubuntu 24.04.1 LTS`, from /etc/os-release.
    pub os: Option<String>,
    /// `Linux 6.8.0-45-generic x86_64`.
    pub kernel: Option<String>,
    /// `bash 5.2.21`.
    pub shell: Option<String>,
    /// Columns and rows.
    pub terminal: Option<(u16, u16)>,
    pub cwd: String,
    pub git: Option<GitState>,
    /// Active toolchains: (`virtualenv`, `/p/.venv (Python 3.12.1)`), (`conda`, ...),
    /// (`nvm`, `v20.11.0`), (`rustup`, `stable`).
    pub toolchains: Vec<(String, String)>,
    /// Variables that passed the allow list and no deny pattern, sorted by name.
    pub vars: Vec<(String, String)>,
    /// The budget left the variables out.
    pub vars_dropped: bool,
}

impl EnvSection {
    /// The facts as (label, value) lines, in print order, variables excluded.
    pub fn facts(&self) -> Vec<(&'static str, String)> {
        let mut f = Vec::new();
        if let Some(os) = &self.os {
            f.push(("os", os.clone()));
        }
        if let Some(k) = &self.kernel {
            f.push(("kernel", k.clone()));
        }
        if let Some(s) = &self.shell {
            f.push(("shell", s.clone()));
        }
        if let Some((c, r)) = self.terminal {
            f.push(("terminal", format!("{c}x{r}")));
        }
        if !self.cwd.is_empty() {
            f.push(("cwd", self.cwd.clone()));
        }
        if let Some(g) = &self.git {
            f.push(("git", g.describe()));
        }
        for (k, v) in &self.toolchains {
            f.push((toolchain_label(k), v.clone()));
        }
        f
    }
}

fn toolchain_label(k: &str) -> &'static str {
    match k {
        "virtualenv" => "virtualenv",
        "conda" => "conda",
        "nvm" => "nvm",
        "rustup" => "rustup",
        _ => "toolchain",
    }
}

/// The state of the git work tree holding the cwd.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct GitState {
    /// `None` when HEAD is detached.
    pub branch: Option<String>,
    /// Abbreviated commit id; `None` before the first commit.
    pub head: Option<String>,
    /// HEAD's subject line (redacted).
    pub subject: Option<String>,
    pub upstream: Option<String>,
    pub ahead: u64,
    pub behind: u64,
    /// Tracked files with changes (staged or not), and untracked files.
    pub changed: u64,
    pub untracked: u64,
}

impl GitState {
    /// `branch main, HEAD 1a2b3c4 (fix the parser), upstream origin/main ahead 1 behind 2,
    /// dirty: 3 changed, 1 untracked`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        parts.push(match &self.branch {
            Some(b) => format!("branch {b}"),
            None => "detached HEAD".to_string(),
        });
        match (&self.head, &self.subject) {
            (Some(h), Some(s)) => parts.push(format!("HEAD {h} ({s})")),
            (Some(h), None) => parts.push(format!("HEAD {h}")),
            (None, _) => parts.push("no commits yet".to_string()),
        }
        if let Some(u) = &self.upstream {
            let mut s = format!("upstream {u}");
            match (self.ahead, self.behind) {
                (0, 0) => s.push_str(" up to date"),
                (a, 0) => s.push_str(&format!(" ahead {a}")),
                (0, b) => s.push_str(&format!(" behind {b}")),
                (a, b) => s.push_str(&format!(" ahead {a} behind {b}")),
            }
            parts.push(s);
        }
        if self.changed == 0 && self.untracked == 0 {
            parts.push("clean".to_string());
        } else {
            parts.push(format!(
                "dirty: {} changed, {} untracked",
                self.changed, self.untracked
            ));
        }
        parts.join(", ")
    }
}

/// One line of the project's file tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct TreeLine {
    /// 1 for entries of the root.
    pub depth: usize,
    /// The path from the root (redacted), `/`-separated, without a trailing slash.
    pub path: String,
    pub kind: TreeKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TreeKind {
    File,
    /// A directory whose entries follow.
    Dir,
    /// A directory shown as one line: it holds this many files (all depths).
    Collapsed(usize),
    /// This many more files of the directory above, not listed.
    MoreFiles(usize),
}

/// A file tree the budget can lay out again within fewer lines, as often as it asks: the files
/// source (`sources::files`) walks the project once and hands one over.
pub(crate) trait TreeLayout: std::fmt::Debug + Send + Sync {
    /// The listing in at most `max_lines` lines.
    fn lines(&self, max_lines: usize) -> Vec<TreeLine>;
}

/// The project's files (`--files`, `--changed`).
#[derive(Debug, Clone, Default)]
pub(crate) struct FilesSection {
    /// The directory listed (redacted).
    pub root: String,
    /// Files under it, after ignores.
    pub total_files: usize,
    /// The tree, when `--files` asked for it; re-rendered to fewer lines by the budget.
    pub tree: Option<std::sync::Arc<dyn TreeLayout>>,
    pub lines: Vec<TreeLine>,
    /// Files modified since the selected commands started (`--changed`), newest first.
    pub changed: Option<Changed>,
}

impl PartialEq for FilesSection {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
            && self.total_files == other.total_files
            && self.lines == other.lines
            && self.changed == other.changed
    }
}

/// Files modified since a time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Changed {
    pub since: u64,
    pub since_clock: String,
    /// (path from the root, modified at ms), newest first.
    pub files: Vec<(String, u64)>,
    /// Changed files not listed.
    pub more: usize,
}

impl FilesSection {
    /// Cuts the section to about `k` lines: the tree re-laid out within `k` lines, the changed
    /// list to its newest `k`.
    pub fn cut(&mut self, k: usize) {
        if let Some(tree) = &self.tree {
            self.lines = tree.lines(k);
        }
        if let Some(c) = &mut self.changed
            && c.files.len() > k
        {
            c.more += c.files.len() - k;
            c.files.truncate(k);
        }
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

/// Everything a formatter prints: the notes, the environment and the files when asked for,
/// then the commands (oldest first, grouped by session when
/// `group_sessions` is set; the current session last) and what the budget did.
#[derive(Debug, Clone, Default)]
pub(crate) struct ContextDoc {
    /// Pinned notes, printed first, highest priority first.
    pub notes: Vec<NoteEntry>,
    pub env: Option<EnvSection>,
    pub files: Option<FilesSection>,
    pub commands: Vec<CommandContext>,
    pub group_sessions: bool,
    pub parts: Parts,
    pub report: BudgetReport,
}

/// Builders and checks shared by the stages' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{CommandContext, ContextDoc, TreeLayout};

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
            arb_sections(),
        )
            .prop_map(|(cmds, group, parts, (notes, env, files))| {
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
                            crate::context::stages::truncate::truncate(&mut c, max);
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
                    notes,
                    env,
                    files,
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

    type Sections = (
        Vec<super::NoteEntry>,
        Option<super::EnvSection>,
        Option<super::FilesSection>,
    );

    /// Random sections: notes, an environment with variables, a file tree and a changed list;
    /// each present or not.
    pub(crate) fn arb_sections() -> impl proptest::strategy::Strategy<Value = Sections> {
        use proptest::prelude::*;
        let note = ("[a-z ]{1,30}(\n[a-z ]{1,10})?", -2i64..3, any::<bool>());
        let env = proptest::option::of((
            proptest::collection::vec(("[A-Z_]{1,8}", "[ -~]{0,30}"), 0..6),
            any::<bool>(),
        ));
        let files = proptest::option::of((
            proptest::collection::vec("([a-c]/){0,3}[a-z]{1,5}", 0..40),
            any::<bool>(),
            proptest::collection::vec("[a-z]{1,6}", 0..12),
            1usize..12,
        ));
        (proptest::collection::vec(note, 0..4), env, files).prop_map(|(notes, env, files)| {
            let notes = notes
                .into_iter()
                .enumerate()
                .map(|(i, (text, priority, sourced))| super::NoteEntry {
                    key: i.to_string(),
                    text,
                    priority,
                    source: sourced.then(|| "me".to_string()),
                    project: None,
                    created_at: 0,
                    expires_at: None,
                })
                .collect();
            let env = env.map(|(vars, git)| super::EnvSection {
                os: Some("Debian GNU/Linux 12".into()),
                kernel: Some("Linux 6.1.0 x86_64".into()),
                shell: Some("bash 5.2.15".into()),
                terminal: Some((80, 24)),
                cwd: "/home/me/p".into(),
                git: git.then(|| super::GitState {
                    branch: Some("main".into()),
                    head: Some("1a2b3c4d5e".into()),
                    ..Default::default()
                }),
                toolchains: vec![("virtualenv".into(), "/home/me/p/.venv".into())],
                vars,
                vars_dropped: false,
            });
            let files = files.map(|(paths, tree, changed, collapse)| {
                let t = crate::context::sources::files::tree_of(&paths, None, collapse);
                let total_files = t.total_files();
                let t = std::sync::Arc::new(t);
                super::FilesSection {
                    root: "/home/me/p".into(),
                    total_files,
                    lines: if tree { t.lines(200) } else { Vec::new() },
                    tree: tree.then_some(t),
                    changed: (!changed.is_empty() || !tree).then(|| super::Changed {
                        since: 0,
                        since_clock: "14:02".into(),
                        files: changed.into_iter().map(|p| (p, 1)).collect(),
                        more: 0,
                    }),
                }
            });
            (notes, env, files)
        })
    }
}
