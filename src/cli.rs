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
    /// Pin notes that every context starts with (add, rm, list, clear).
    Note(NoteArgs),
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
