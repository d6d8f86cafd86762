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
    /// List, show, remove and prune recorded sessions.
    Sessions(SessionsArgs),
    /// Search command lines and rendered output of recorded commands.
    Search(SearchArgs),
    /// Show the current session, the project and the session store.
    Status(StatusArgs),
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
    after_help = "Examples:\n  omnish wrap                 your $SHELL, recorded\n  omnish wrap zsh             zsh instead\n  omnish wrap bash -l         a login bash\n  omnish wrap bash -c 'make'  one command, recorded\n\nInside, OMNISH_SESSION_ID and OMNISH_SESSION_DIR name the session.\nA command typed with a leading space where the shell keeps such lines out of history\n(bash ignorespace/ignoreboth, zsh HIST_IGNORE_SPACE) is private: only its times and\nexit status are recorded. OMNISH_RECORD_PRIVATE=1 records it like any other."
)]
pub struct WrapArgs {
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
    /// The N most recent matching commands.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub recent: usize,
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
    /// Session to read: an id (or unique prefix), `current` (the wrapped shell this runs in,
    /// else the most recent session) or `all`.
    #[arg(long, value_name = "ID|current|all", default_value = "current")]
    pub session: String,
    /// Most output lines per command, head and tail kept (0 = unlimited).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub max_lines: usize,
    /// Most chars per output line, head and tail kept (0 = unlimited); error lines get twice
    /// as many.
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub max_line_width: usize,
    /// Hard ceiling in tokens for the whole output; older commands are summarized first.
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<usize>,
    /// Fit the output to a model's profile (budget and tokenizer), e.g. gpt-4o, claude-sonnet-4,
    /// llama3.2, qwen2.5-coder:7b.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Tokenizer for counting the budget: o200k, cl100k or chars4.
    #[arg(long, value_name = "NAME")]
    pub tokenizer: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
    /// Outputs only, without command lines.
    #[arg(long, conflicts_with = "commands_only")]
    pub results_only: bool,
    /// Command lines, statuses and directories only, no output.
    #[arg(long)]
    pub commands_only: bool,
    /// Show secrets instead of redacting them.
    #[arg(long)]
    pub no_redact: bool,
}

/// `--format` values; mapped onto the library's [`crate::context::format::Format`], which knows
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

impl From<FormatArg> for crate::context::format::Format {
    fn from(f: FormatArg) -> Self {
        use crate::context::format::Format;
        match f {
            FormatArg::Text => Format::Text,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Json => Format::Json,
        }
    }
}
