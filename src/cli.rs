//! Command-line interface (clap derive).

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "omnish",
    version,
    about = "Record your shell; hand its recent commands and output to a language model",
    long_about = "Record your shell; hand its recent commands and output to a language model.\n\n\
`omnish wrap` runs your bash or zsh in a pseudo-terminal and records every command with its \
command line, working directory, exit status and output. `omnish context` prints recent \
commands as compact, secret-free context on stdout, for any LLM command-line client: \
`omnish context --last --failed | llm 'why did this fail?'`.\n\n\
Sessions are stored under $OMNISH_DATA_DIR (default ~/.local/share/omnish)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a shell in a recorded pseudo-terminal.
    Wrap(WrapArgs),
    /// Print recent commands and their output as context for a language model.
    Context(ContextArgs),
    /// Print the shell snippet for ~/.bashrc, ~/.zshrc or config.fish: key bindings, optionally a
    /// recorded shell.
    Init(InitArgs),
    /// Ask your LLM command about the last failed command (or the last one).
    Ask(AskArgs),
    /// Ask your LLM command for a corrected command for the last failed one and print it.
    Fix(FixArgs),
    /// Print the effective configuration and where each value came from.
    Config(ConfigArgs),
    /// Print the shell completion script for bash, zsh or fish.
    Completions(CompletionsArgs),
    /// Print the man page (roff).
    Man(ManArgs),
    /// Serve recent commands to coding agents over the Model Context Protocol (stdio).
    Mcp(McpArgs),
    /// Pin notes that every context starts with (add, rm, list, clear).
    Note(NoteArgs),
    /// List, show, remove and prune recorded sessions.
    Sessions(SessionsArgs),
    /// Search command lines and rendered output of recorded commands.
    Search(SearchArgs),
    /// Choose recent commands from a list with a preview of each output (fzf when installed)
    /// and print their ids; `context --pick` and `ask --pick` use them.
    Pick(PickArgs),
    /// Show the current session, the project and the session store.
    Status(StatusArgs),
    /// Run a program that starts a shell (sudo -i, su -, ssh, docker exec -it) so that the
    /// shell's commands are recorded one by one.
    Nest(NestArgs),
    /// ssh, with the remote shell's commands recorded one by one (omnish nest -- ssh ...).
    Ssh(SshArgs),
    /// Run a program (no shell) and record it as one command with its output: for cron, CI,
    /// scripts and agents' tool calls.
    Exec(ExecArgs),
    /// Record every shell command a coding agent runs, through the agent's own hooks
    /// (install, uninstall, status; run is what the agent runs).
    Hooks(HooksArgs),
    /// Keep nothing of what this terminal shows from the next command on, for DURATION or
    /// until `omnish resume`: commands are kept as private ones (times and status only).
    Pause(PauseArgs),
    /// Keep commands again after `omnish pause`.
    Resume(ResumeArgs),
    /// Destroy recorded commands (by id, or those matching a pattern) or a value (a pasted
    /// secret) wherever it was recorded.
    Forget(ForgetArgs),
    /// Export recorded commands to share them: markdown, one HTML page, an asciinema
    /// recording (asciicast v3 or v2) or JSON.
    Export(ExportArgs),
    /// Show how two commands' outputs differ (unified diff); by default the last command
    /// against the previous run of the same command line.
    Diff(DiffArgs),
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Run inside a shell recorded by `omnish wrap`. The shell the program starts gets omnish's\nhooks through the terminal (nothing is installed or left on the far side) and its commands\nbecome records of their own, with their host and user. Where that cannot work (a command\ngiven, no bash, zsh or fish there, a ForceCommand), the program runs exactly as given and its\nrecord says why.\n\nExamples:\n  omnish nest -- sudo -i\n  omnish nest -- su - alice\n  omnish nest -- ssh -p 2222 alice@host\n  omnish nest -- docker exec -it web bash\n  omnish nest -- kubectl exec -it pod -- bash"
)]
pub struct NestArgs {
    /// Run by the hooks for a program of `nest.auto`: where the program starts no shell to
    /// follow (`sudo apt update`), its record says nothing about it.
    #[arg(long, hide = true)]
    pub auto: bool,
    /// The program and its arguments.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true,
        value_name = "PROGRAM"
    )]
    pub program: Vec<String>,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Run inside a shell recorded by `omnish wrap`. From the next command on, until DURATION\nhas passed, `omnish resume` runs or the session ends, each command is kept as a private one:\nits times and exit status, marked paused; nothing typed or printed reaches the disk.\n`omnish status` says when the pause ends. `omnish wrap --paused` starts a session paused.\n\nExamples:\n  omnish pause 15m\n  omnish pause\n  omnish resume"
)]
pub struct PauseArgs {
    /// How long (90s, 15m, 2h); without it, until `omnish resume`.
    #[arg(value_name = "DURATION")]
    pub duration: Option<String>,
    /// Resume when paused, else pause (what the pause key of `omnish init` runs).
    #[arg(long)]
    pub toggle: bool,
}

#[derive(Debug, clap::Args)]
pub struct ResumeArgs {}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "What is forgotten is destroyed in the store, not hidden: a command's line, directory, keys and\noutput are overwritten in place (its times and exit status stay, as `[forgotten command]`),\na value is overwritten with `*` in every session, and the derived caches are dropped. It works\non a live session; the command still running cannot be forgotten until it ends. A line that\nstarts with `omnish forget` is never recorded. Without VALUE, --secret reads it from the\nterminal without echo (or one line from standard input), so it is in no history either.\n\nExit status: 0 when something was forgotten (or would be, with --dry-run), 1 when nothing\nmatched, 2 for a usage error.\n\nExamples:\n  omnish forget 20261126T101500.123Z-ab12cd:14\n  omnish forget 14 15          (commands of the current session)\n  omnish forget --grep 'vault read' --since 1h --dry-run\n  omnish forget --secret"
)]
pub struct ForgetArgs {
    /// Command ids (`SESSION:SEQ`, the session a unique prefix of its id; or `SEQ` alone in the
    /// current session).
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// Forget every command whose line or rendered output matches REGEX.
    #[arg(long, value_name = "REGEX", conflicts_with = "secret")]
    pub grep: Option<String>,
    /// With --grep: only commands started within DURATION (90s, 15m, 2h, 1d).
    #[arg(long, value_name = "DURATION", requires = "grep")]
    pub since: Option<String>,
    /// With --grep: the session to look in: an id, `current` or `all`.
    #[arg(
        long,
        value_name = "ID|current|all",
        default_value = "all",
        requires = "grep"
    )]
    pub session: String,
    /// Overwrite VALUE wherever it was recorded, in every session.
    #[arg(long, value_name = "VALUE", num_args = 0..=1, default_missing_value = "")]
    pub secret: Option<String>,
    /// Say what would be forgotten, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Claude Code: a PostToolUse and a PostToolUseFailure hook for its Bash tool, in\n~/.claude/settings.json (with --project, the project's .claude/settings.json).\nGemini CLI: an AfterTool hook for its run_shell_command tool, in ~/.gemini/settings.json (with\n--project, the project's .gemini/settings.json).\nCodex CLI: a PostToolUse hook for its Bash tool, in ~/.codex/hooks.json (with --project, the\nproject's .codex/hooks.json); Codex runs it once you have trusted it (its /hooks command), and\nreports no exit status to it.\nopencode: a plugin, omnish.js, in ~/.config/opencode/plugins/ (with --project, the project's\n.opencode/plugins/), which runs the hook for each call of its bash tool.\n\nThe rest of each settings file is kept: its keys in their order, their values as written. Each command\nthe agent runs becomes a record by the agent's name (`omnish context --author agents`), with\nits output as the agent got it: with the recorded terminal the agent runs in, else in a\nsession per agent session. The hook always exits 0 and prints nothing.\n\nExamples:\n  omnish hooks install claude-code\n  omnish hooks install gemini --project\n  omnish hooks status claude-code --project\n  omnish hooks uninstall claude-code"
)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub action: HooksAction,
}

/// The agents whose hooks omnish installs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HookAgent {
    /// Claude Code (settings.json hooks).
    ClaudeCode,
    /// Gemini CLI (settings.json hooks).
    Gemini,
    /// Codex CLI (hooks.json hooks).
    Codex,
    /// opencode (a plugin).
    Opencode,
}

#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// Add omnish's hook to the agent's settings (again: nothing changes).
    Install {
        #[arg(value_enum, value_name = "AGENT")]
        agent: HookAgent,
        /// The project's settings (the git work tree, else this directory), not the user's.
        #[arg(long)]
        project: bool,
    },
    /// Remove omnish's hook from the agent's settings, and nothing else.
    Uninstall {
        #[arg(value_enum, value_name = "AGENT")]
        agent: HookAgent,
        /// The project's settings, not the user's.
        #[arg(long)]
        project: bool,
    },
    /// Say whether omnish's hook is installed (exit 1 when not).
    Status {
        #[arg(value_enum, value_name = "AGENT")]
        agent: HookAgent,
        /// The project's settings, not the user's.
        #[arg(long)]
        project: bool,
    },
    /// The hook: reads the agent's JSON on stdin and records the command (always exit 0,
    /// silent).
    Run {
        #[arg(value_enum, value_name = "AGENT")]
        agent: HookAgent,
    },
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The program's input, output, error output and exit status are its own: a pipe stays a pipe,\na terminal stays a terminal, a signal from the terminal reaches it, and when a signal kills it\nomnish dies of the same signal (a shell shows 128+N). Its output (stdout and stderr in the order\nthey came) is recorded as one command, by author LABEL (default `exec`): in a recorded terminal,\nwith that terminal's session (`omnish context` shows it among the terminal's commands), else\nin a session of its own. Typed at the prompt of a recorded terminal, with its output on that\nterminal, it adds no record (the terminal's has it) unless --session is given. If recording\nfails (a full disk), one warning goes to stderr and nothing else changes.\n\nExamples:\n  omnish exec -- make test\n  omnish exec --label nightly -- ./backup.sh\n  omnish exec --session new -- cargo build 2>&1 | tail -5\n  omnish exec -- sh -c 'make && make install'"
)]
pub struct ExecArgs {
    /// Where the record goes: `current` (the recorded terminal this runs in, the default there),
    /// `new` (a session of its own, the default elsewhere) or a session id to attach it to.
    #[arg(long, value_name = "ID|current|new")]
    pub session: Option<String>,
    /// The author the record is given (`omnish context --author LABEL`) [default: exec].
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// The program and its arguments.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true,
        value_name = "PROGRAM"
    )]
    pub program: Vec<String>,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Every ssh option works as with ssh itself. See `omnish nest --help`.\n\nExamples:\n  omnish ssh host\n  omnish ssh -J bastion -p 2222 alice@db1"
)]
pub struct SshArgs {
    /// ssh's arguments.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true,
        value_name = "ARGS"
    )]
    pub args: Vec<String>,
}

/// `--format` of `sessions`, `search` and `status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PlainFormat {
    /// Lines for a person.
    Text,
    /// One JSON document.
    Json,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Session ids can be given by a unique prefix or by their random suffix (the part after\nthe last '-').\n\nExamples:\n  omnish sessions list\n  omnish sessions show 9f3a1c\n  omnish sessions rm 9f3a1c b7c2d4\n  omnish sessions prune --keep 20 --older-than 30d --max-size 1G --dry-run"
)]
pub struct SessionsArgs {
    #[command(subcommand)]
    pub command: SessionsCommand,
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Every session, newest first: id, start, last activity, shell, host, directory, commands,
    /// failed commands, size on disk and state.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: PlainFormat,
    },
    /// A session's metadata and its commands, one line each with a one-line summary.
    Show {
        /// Session id, unique prefix or random suffix (default: the current session, else the
        /// most recent one).
        #[arg(value_name = "ID")]
        id: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: PlainFormat,
        /// Whose commands: `user`, `agents`, an author's name or `all`.
        #[arg(long, value_name = "user|agents|NAME|all", default_value = "all")]
        author: String,
    },
    /// Remove sessions (never one whose recorder runs).
    Rm {
        /// Session ids, unique prefixes or random suffixes.
        #[arg(value_name = "ID", required = true)]
        ids: Vec<String>,
    },
    /// Remove old sessions; with no limit given, the configured ones (keep 100, at most 2 GiB).
    Prune {
        /// Keep only the N most recent sessions.
        #[arg(long, value_name = "N")]
        keep: Option<usize>,
        /// Remove sessions last active longer ago than DURATION (90m, 12h, 30d, 2w).
        #[arg(long, value_name = "DURATION")]
        older_than: Option<String>,
        /// Remove the oldest sessions until all take at most SIZE on disk (500M, 2G, 1.5GiB).
        #[arg(long, value_name = "SIZE")]
        max_size: Option<String>,
        /// Say what would be removed, remove nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Lists in fzf when it is installed (Tab marks several, Enter chooses, Esc\ncancels), else numbered on the terminal with the last lines of each output.\n\nExit status: 0 when something was picked, 130 when nothing was (Esc, an empty\nanswer), 1 when there is nothing to pick from, 2 for a usage error.\n\nExamples:\n  omnish pick\n  omnish context $(omnish pick | sed 's/^/--id /')\n  omnish ask --pick 'why do these differ?'"
)]
pub struct PickArgs {
    /// List the N most recent commands [default: 50].
    #[arg(long, value_name = "N")]
    pub recent: Option<usize>,
    /// Only commands that failed (non-zero exit status).
    #[arg(long)]
    pub failed: bool,
    /// Only commands whose command line or output matches REGEX.
    #[arg(long, value_name = "REGEX")]
    pub grep: Option<String>,
    /// Session to list: an id (or unique prefix), `current` or `all`.
    #[arg(long, value_name = "ID|current|all", default_value = "current")]
    pub session: String,
    /// The plain numbered list, even when fzf is installed.
    #[arg(long)]
    pub plain: bool,
    /// Print what the preview shows for command ID (fzf runs this).
    #[arg(long, value_name = "ID", hide = true)]
    pub preview: Option<String>,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 when something matched, 1 when nothing did, 2 for a usage error.\n\nExamples:\n  omnish search 'error\\[E[0-9]+\\]'\n  omnish search -i --failed --since 2h timeout\n  omnish search --commands -F 'git push'\n  omnish search --format json panic | jq '.hits[].command_line'"
)]
pub struct SearchArgs {
    /// Regular expression (Rust regex syntax), matched line by line.
    #[arg(value_name = "PATTERN")]
    pub pattern: String,
    /// Session to search: an id (unique prefix or random suffix), `current` or `all`.
    #[arg(long, value_name = "ID|current|all", default_value = "all")]
    pub session: String,
    /// Only commands run inside the current git work tree (else the current directory).
    #[arg(long)]
    pub here: bool,
    /// Only commands started within DURATION (90s, 15m, 2h, 1d).
    #[arg(long, value_name = "DURATION")]
    pub since: Option<String>,
    /// Only commands that failed (non-zero exit status).
    #[arg(long)]
    pub failed: bool,
    /// Only commands that ran on HOST (a nested shell's host or container, else the session's).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Only commands that ran as USER (a nested shell's user, else the session's).
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
    /// Whose commands: `user` (typed at the terminal), `agents` (agents' hooks and `omnish
    /// exec`), an author's name (claude-code, an exec --label) or `all`.
    #[arg(long, value_name = "user|agents|NAME|all", default_value = "all")]
    pub author: String,
    /// Search command lines only, not output.
    #[arg(long)]
    pub commands: bool,
    /// Case-insensitive.
    #[arg(short = 'i', long)]
    pub ignore_case: bool,
    /// PATTERN is a plain string, not a regular expression.
    #[arg(short = 'F', long)]
    pub fixed_strings: bool,
    /// Lines of context before and after each matching line.
    #[arg(short = 'C', long, value_name = "N", default_value_t = 2)]
    pub context: usize,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: PlainFormat,
}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: PlainFormat,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  omnish wrap                 your $SHELL, recorded\n  omnish wrap zsh             zsh instead\n  omnish wrap fish -l         a login fish\n  omnish wrap bash -l         a login bash\n  omnish wrap bash -c 'make'  one command, recorded\n\nInside, OMNISH_SESSION_ID and OMNISH_SESSION_DIR name the session.\nA command typed with a leading space where the shell keeps such lines out of history\n(bash ignorespace/ignoreboth, zsh HIST_IGNORE_SPACE, fish always) is private: only its times and\nexit status are recorded. OMNISH_RECORD_PRIVATE=1 (or record.private_leading_space = false\nin the config) records it like any other."
)]
pub struct WrapArgs {
    /// Start with recording paused, as after `omnish pause`, until `omnish resume`.
    #[arg(long)]
    pub paused: bool,
    /// The shell to run and its arguments (default: $SHELL, then /bin/sh).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "SHELL"
    )]
    pub shell: Vec<String>,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  omnish context --recent 5 | llm 'why did this fail?'\n  omnish context --failed --last --format markdown | ollama run llama3.2 'explain'\n  omnish context --since 15m --model gpt-4o --format json | jq ."
)]
pub struct ContextArgs {
    #[command(flatten)]
    pub opts: ContextOpts,
}

/// The options that select and shape context, shared by `context`, `ask` and `fix`. Those
/// without a value here take theirs from the configuration (`omnish config`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ContextOpts {
    #[command(flatten)]
    pub select: SelectOpts,
    /// Most output lines per command, head and tail kept (0 = unlimited) [default:
    /// context.max_lines, 20].
    #[arg(long, value_name = "N")]
    pub max_lines: Option<usize>,
    /// Most chars per output line, head and tail kept (0 = unlimited); error lines get twice
    /// as many [default: context.max_line_width, 500].
    #[arg(long, value_name = "N")]
    pub max_line_width: Option<usize>,
    /// Hard ceiling in tokens for the whole output; older commands are summarized first.
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<usize>,
    /// Fit the output to a model's profile (budget and tokenizer), e.g. gpt-4o, claude-sonnet-4,
    /// llama3.2, qwen2.5-coder:7b, or one added in the config's [models] table.
    // The line above is `--help` text: `[models]` names the config file's table, not a link.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Tokenizer for counting the budget: o200k, cl100k or chars4.
    #[arg(long, value_name = "NAME")]
    pub tokenizer: Option<String>,
    /// Output format [default: context.format, text].
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Outputs only, without command lines.
    #[arg(long, conflicts_with = "commands_only")]
    pub results_only: bool,
    /// Command lines, statuses and directories only, no output.
    #[arg(long)]
    pub commands_only: bool,
    /// Show secrets instead of redacting them.
    #[arg(long)]
    pub no_redact: bool,
    /// Leave the pinned notes (`omnish note`) out.
    #[arg(long)]
    pub no_notes: bool,
    /// Add an environment snapshot: OS, shell, terminal, cwd, git state, active toolchains and
    /// allowed environment variables.
    #[arg(long)]
    pub env: bool,
    /// Add the project's file tree (git root, else the current directory), without ignored
    /// files.
    #[arg(long)]
    pub files: bool,
    /// Levels of the file tree to expand (1: the root's entries only).
    #[arg(long, value_name = "N", requires = "files")]
    pub depth: Option<usize>,
    /// Add the project's files modified since the selected commands started.
    #[arg(long)]
    pub changed: bool,
    /// Show the whole last screen of each full-screen program (vim, less, htop), not only its
    /// first and last rows (--max-lines is then 200 unless given).
    #[arg(long)]
    pub screens: bool,
}

/// The options that pick commands, shared by `context`, `ask`, `fix` and `export`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SelectOpts {
    /// The N most recent matching commands [default: context.recent, 10; export: all of them].
    #[arg(long, value_name = "N")]
    pub recent: Option<usize>,
    /// Only the most recent matching command (same as --recent 1).
    #[arg(long)]
    pub last: bool,
    /// Only commands that failed (non-zero exit status).
    #[arg(long)]
    pub failed: bool,
    /// Only commands whose command line or output matches REGEX.
    #[arg(long, value_name = "REGEX")]
    pub grep: Option<String>,
    /// Only commands run in DIR or below it.
    #[arg(long, value_name = "DIR", conflicts_with = "here")]
    pub cwd: Option<std::path::PathBuf>,
    /// Only commands run inside the current git work tree (else the current directory).
    #[arg(long)]
    pub here: bool,
    /// Only commands started within DURATION (90s, 15m, 2h, 1d).
    #[arg(long, value_name = "DURATION")]
    pub since: Option<String>,
    /// Only commands that ran on HOST (a nested shell's host or container, else the session's).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Only commands that ran as USER (a nested shell's user, else the session's).
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
    /// Session to read: an id (or unique prefix), `current` (the wrapped shell this runs in,
    /// else the most recent session) or `all`.
    #[arg(long, value_name = "ID|current|all", default_value = "current")]
    pub session: String,
    /// Whose commands: `user` (typed at the terminal), `agents` (agents' hooks and `omnish
    /// exec`), an author's name (claude-code, an exec --label) or `all`.
    #[arg(long, value_name = "user|agents|NAME|all", default_value = "all")]
    pub author: String,
    /// Only the command with this id (SESSION:NUMBER, as `omnish pick` prints them;
    /// repeatable, or comma-separated). The ids say which sessions are read.
    #[arg(long, value_name = "ID", value_delimiter = ',')]
    pub id: Vec<String>,
    /// Choose the commands from a list first (`omnish pick`; Esc cancels, exit status 130).
    #[arg(long)]
    pub pick: bool,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Without --recent or --last, every matching command of the session is exported. Secrets are\nredacted (in the asciicast, in the bytes of its events); --no-redact keeps them.\n--max-lines and --max-line-width shorten outputs in markdown and json (default: all of it);\nhtml and asciicast keep every byte of the output as the terminal showed it.\n\nExamples:\n  omnish export --format html -o session.html\n  omnish export --failed --since 1h --format markdown | pbcopy\n  omnish export --format asciicast -o demo.cast && asciinema play demo.cast\n  omnish export --session all --format json | jq '.commands | length'"
)]
pub struct ExportArgs {
    #[command(flatten)]
    pub select: SelectOpts,
    /// Output format.
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: ExportFormatArg,
    /// Write to FILE (atomically, mode 0600) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Markdown and json: most output lines per command, head and tail kept (0 = all, the
    /// default).
    #[arg(long, value_name = "N")]
    pub max_lines: Option<usize>,
    /// Markdown and json: most chars per output line (0 = unlimited, the default).
    #[arg(long, value_name = "N")]
    pub max_line_width: Option<usize>,
    /// Keep secrets instead of redacting them.
    #[arg(long)]
    pub no_redact: bool,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Outputs are compared as the terminal showed them (colours and redraws resolved), redacted.\nIds are SESSION:SEQ (as `omnish context --format json` shows session_id and seq) or SEQ\nin the session (--session, default the current one).\n\nExit status: 0 when the outputs are the same, 1 when they differ (or a command is not found),\n2 for a usage error.\n\nExamples:\n  omnish diff                 the last command against its previous run\n  omnish diff --ok            ... against its last successful run\n  omnish diff --normalize 14  command 14 against its previous run, times and pids masked\n  omnish diff 12 14"
)]
pub struct DiffArgs {
    /// `OLD NEW`, or `NEW` alone (compared with the previous run of its command line).
    #[arg(value_name = "ID", num_args = 0..=2)]
    pub ids: Vec<String>,
    /// Compare with the last successful run of the same command line.
    #[arg(long)]
    pub ok: bool,
    /// Mask volatile tokens first: times, durations, pids, hex addresses, UUIDs, temp paths.
    #[arg(long)]
    pub normalize: bool,
    /// Session of ids given as SEQ and of the last command: an id (or unique prefix) or
    /// `current` (the wrapped shell this runs in, else the most recent session).
    #[arg(long, value_name = "ID|current", default_value = "current")]
    pub session: String,
    /// Unchanged lines shown around each change.
    #[arg(short = 'U', long = "unified", value_name = "N", default_value_t = 3)]
    pub context: usize,
    /// Keep secrets instead of redacting them.
    #[arg(long)]
    pub no_redact: bool,
}

/// `omnish export --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormatArg {
    /// Markdown, each command's output folded in `<details>`.
    Markdown,
    /// One self-contained HTML page with the recorded colours.
    Html,
    /// asciicast v3, for asciinema's player and servers.
    Asciicast,
    /// asciicast v2, for older asciinema players.
    #[value(name = "asciicast-v2")]
    AsciicastV2,
    /// One JSON document, as `omnish context --format json`.
    Json,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  omnish note add 'deploys go to staging, never prod' --priority 5\n  omnish note add 'use the compose db on port 5433' --here --key db\n  omnish note add 'release freeze until Friday' --ttl 3d\n  omnish note list\n  omnish note rm db"
)]
pub struct NoteArgs {
    #[command(subcommand)]
    pub action: NoteAction,
}

#[derive(Debug, Subcommand)]
pub enum NoteAction {
    /// Pin a note; a note with the same --key is replaced.
    Add {
        /// The note's text.
        text: String,
        /// A name to replace or remove it by (default: its number).
        #[arg(long, value_name = "K")]
        key: Option<String>,
        /// Higher priorities are printed first and dropped last (default 0).
        #[arg(
            long,
            value_name = "P",
            default_value_t = 0,
            allow_negative_numbers = true
        )]
        priority: i64,
        /// Forget the note after DURATION (90s, 15m, 2h, 3d).
        #[arg(long, value_name = "DURATION")]
        ttl: Option<String>,
        /// Only for context built in this project (the git root, else the current directory).
        #[arg(long)]
        here: bool,
        /// Who pinned it (a person, a script, an agent).
        #[arg(long, value_name = "S")]
        source: Option<String>,
    },
    /// Remove the note with key (or number) K.
    Rm {
        #[arg(value_name = "K")]
        key: String,
    },
    /// List the notes, with keys, priorities, scopes and expiry.
    List {
        /// One JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Remove every note (with --here: this project's notes only).
    Clear {
        #[arg(long)]
        here: bool,
    },
}

/// Shells `omnish init` and `omnish completions` know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InitShell {
    Bash,
    Zsh,
    Fish,
    /// nushell: a file config.nu writes into the vendor autoload directory (see the output).
    Nu,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Add to the end of ~/.bashrc, ~/.zshrc or ~/.config/fish/config.fish:\n  eval \"$(omnish init bash --wrap)\"\n  eval \"$(omnish init zsh --wrap)\"\n  omnish init fish --wrap | source\n\nKeys (readline syntax, as in `bind`; zsh's bindkey reads the same): Ctrl-X a asks about the\nlast failed command, Ctrl-X f puts a corrected command on the prompt line. In fish, whose\nCtrl-X copies, the defaults are Ctrl-O a and Ctrl-O f.\nWith --wrap an interactive terminal shell becomes a recorded one (omnish wrap), never for\nscripts, never twice, never inside a recorded shell; the same line inside it installs the keys.\nnushell (Alt-a, Alt-x): the first lines of `omnish init nu` say what config.nu holds."
)]
pub struct InitArgs {
    /// The shell to print the snippet for.
    #[arg(value_enum)]
    pub shell: InitShell,
    /// Also start a recorded shell (`omnish wrap`) for interactive terminals.
    #[arg(long)]
    pub wrap: bool,
    /// Key for `omnish ask` [default: keys.ask, \C-xa].
    #[arg(long, value_name = "KEY")]
    pub ask_key: Option<String>,
    /// Key for `omnish fix` [default: keys.fix, \C-xf].
    #[arg(long, value_name = "KEY")]
    pub fix_key: Option<String>,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  omnish ask\n  omnish ask 'is this a permissions problem?'\n  omnish ask --recent 5 --here 'what was I doing?'\n  OMNISH_ASK_COMMAND='ollama run llama3.2' omnish ask\n\nWithout a selection option, the context is the last failed command of the session, or the\nlast command if none failed. The LLM command is ask.command (OMNISH_ASK_COMMAND), else `llm`\nor `ollama` found on PATH; without one, the prompt is printed."
)]
pub struct AskArgs {
    /// The question [default: "Why did this fail and how do I fix it?"].
    #[arg(value_name = "QUESTION")]
    pub question: Vec<String>,
    /// The LLM command to run [default: ask.command].
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
    /// Print the prompt instead of running the LLM command.
    #[arg(long)]
    pub print_prompt: bool,
    /// Add to the prompt how the last command's output differs from its previous run's
    /// (`omnish diff`).
    #[arg(long)]
    pub diff: bool,
    #[command(flatten)]
    pub context: ContextOpts,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Prints the corrected command on stdout and runs nothing. The key binding from\n`omnish init` puts it on the prompt line to edit and run."
)]
pub struct FixArgs {
    /// The LLM command to run [default: ask.command].
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
    #[command(flatten)]
    pub context: ContextOpts,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The file is $OMNISH_CONFIG, else config.toml in the platform config dir\n(~/.config/omnish/config.toml). Precedence: flags, environment, file, defaults."
)]
pub struct ConfigArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ConfigFormat,
    /// Override KEY as a flag would, to see the result (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ConfigFormat {
    Text,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    /// nushell's `extern` definitions, for `source` in config.nu.
    #[value(alias = "nu")]
    Nushell,
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {}
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Serve the recorded terminal to coding agents over the Model Context Protocol: \
JSON-RPC 2.0 on stdin and stdout, one message per line. Tools: recent_commands, command_output, \
diff_output, \
search, list_sessions, terminal_status; every result redacted and within a token budget.",
    after_help = "Examples:\n  claude mcp add omnish -- omnish mcp\n  {\"mcpServers\": {\"omnish\": {\"command\": \"omnish\", \"args\": [\"mcp\"]}}}\n\nRun inside a recorded terminal (OMNISH_SESSION_ID set) it reads that terminal; else the most\nrecent live session in the same project, else the most recent session."
)]
pub struct McpArgs {}

/// `--format` values; mapped onto the library's `crate::context::stages::format::Format`, which knows
/// nothing of clap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// Plain text, like the terminal showed it.
    Text,
    /// Markdown with fenced blocks.
    Markdown,
    /// One JSON document (schema v1).
    Json,
}

impl From<FormatArg> for crate::context::stages::format::Format {
    fn from(f: FormatArg) -> Self {
        use crate::context::stages::format::Format;
        match f {
            FormatArg::Text => Format::Text,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Json => Format::Json,
        }
    }
}
