//! The configuration: `config.toml` + environment + flags, with where each value came from.
//!
//! Every key is one line of [`KEYS`]: its dotted name, kind, default, environment variable,
//! check and documentation. Adding a key is adding a line there (and reading it where it is
//! used with [`Config::str`], [`Config::int`] or [`Config::bool`]); the file parser, `omnish
//! config`, the environment and the flag layer all follow the table.
//!
//! Precedence: flags > environment > file > defaults. The file is `$OMNISH_CONFIG`, else
//! `config.toml` in the platform config dir (`~/.config/omnish/config.toml`); the default file
//! missing is an empty one, a file named by `OMNISH_CONFIG` missing is a problem.
//!
//! Every problem (a file that is not a regular file, over [`MAX_FILE_BYTES`] or not UTF-8, bad
//! TOML, an unknown key, a value of the wrong type or one its key's check refuses, a bad
//! environment value) is a [`Problem`] naming the file and line and the key, or the variable.
//! Two ways to load:
//! - [`Config::load`] (every command that reads the values): the first problem is the error,
//!   exit status 2; never a panic, never a silent default.
//! - [`Config::load_lenient`] (`omnish wrap` and `omnish init`, which start the user's shell: a
//!   recorder must never cost the user their shell): each problem is one warning line saying
//!   what was used instead (the value is ignored: the default, or the file's value under a bad
//!   environment value). `data_dir` has no safe default: when it cannot be known,
//!   [`Config::data_root`] says so and the shell runs unrecorded.
//!
//! Besides the flat keys, `[models.NAME]` tables add model profiles (`window`, `tokenizer`,
//! optional `budget_share`) that `--model` and `ask.model` accept before the built-in ones.
//! Reading is linear in the file's size (at most 1 MiB): line numbers come from one index.

use crate::error::Error;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Str,
    /// A non-negative integer.
    Int,
    Bool,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A list of strings: a TOML array in the file, comma-separated in the environment and
    /// `--set` (for allow/deny lists; no key of this build is one yet).
    #[allow(dead_code)]
    List,
    /// A directory; relative paths in the file are taken from the file's directory, `~/` is
    /// the home directory; the effective value is absolute.
    Path,
}

/// How an environment variable maps onto a key's value; empty means unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EnvMap {
    /// The variable's value is the key's value (parsed per [`Kind`]).
    Plain,
    /// For a bool key, the variable says the opposite: `OMNISH_RECORD_PRIVATE=1` (or `true`,
    /// `yes`, `on`) records private commands, so it sets `record.private_leading_space` to
    /// false. Anything but the eight boolean words is a problem.
    Inverted,
}

/// A key's check of a value: why it is refused.
pub(crate) type Check = fn(&Value) -> std::result::Result<(), String>;

/// One configuration key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Key {
    /// Dotted name, as in `omnish config` and the file (`context.max_lines` is `max_lines` in
    /// the `[context]` table).
    pub name: &'static str,
    pub kind: Kind,
    /// The default as TOML would spell the value (without quotes for strings); `""` for a
    /// string key means unset.
    pub default: &'static str,
    pub env: Option<(&'static str, EnvMap)>,
    /// What a value must also satisfy beyond its kind (a glob that compiles, a size that
    /// parses, a key in readline syntax); the error says why, after `key 'NAME': `.
    pub check: Option<Check>,
    pub doc: &'static str,
}

const fn key(
    name: &'static str,
    kind: Kind,
    default: &'static str,
    env: Option<&'static str>,
    doc: &'static str,
) -> Key {
    Key {
        name,
        kind,
        default,
        env: match env {
            Some(e) => Some((e, EnvMap::Plain)),
            None => None,
        },
        check: None,
        doc,
    }
}

impl Key {
    const fn checked(self, check: Check) -> Key {
        Key {
            check: Some(check),
            ..self
        }
    }
}

pub(crate) const FORMATS: &[&str] = &["text", "markdown", "json"];

/// Every key. To add one, add a line (sections are the part before the last dot).
pub(crate) const KEYS: &[Key] = &[
    key(
        "ask.command",
        Kind::Str,
        "",
        Some("OMNISH_ASK_COMMAND"),
        "LLM command `ask` and `fix` pipe the prompt into (e.g. `llm -m gpt-4o-mini`, `ollama run llama3.2`); empty: `llm`, else `ollama run llama3.2`, found on PATH",
    ),
    key(
        "ask.shell",
        Kind::Bool,
        "false",
        Some("OMNISH_ASK_SHELL"),
        "run ask.command through `sh -c` (pipes, variables) instead of splitting it into words",
    ),
    key(
        "ask.model",
        Kind::Str,
        "",
        Some("OMNISH_ASK_MODEL"),
        "model profile that sets the context budget of `ask` and `fix` (as --model); empty: no budget",
    ),
    key(
        "keys.ask",
        Kind::Str,
        r"\C-xa",
        Some("OMNISH_KEYS_ASK"),
        "key that runs `omnish ask` at the prompt (readline syntax), used by `omnish init`",
    )
    .checked(check_key),
    key(
        "keys.fix",
        Kind::Str,
        r"\C-xf",
        Some("OMNISH_KEYS_FIX"),
        "key that puts `omnish fix`'s command on the prompt line (readline syntax), used by `omnish init`",
    )
    .checked(check_key),
    key(
        "keys.pause",
        Kind::Str,
        r"\C-xp",
        Some("OMNISH_KEYS_PAUSE"),
        "key that pauses recording, or resumes it when paused (`omnish pause --toggle`; readline syntax), used by `omnish init`",
    )
    .checked(check_key),
    key(
        "keys.pick",
        Kind::Str,
        r"\C-xk",
        Some("OMNISH_KEYS_PICK"),
        "key that lists recent commands to pick and asks about them (`omnish ask --pick`; readline syntax), used by `omnish init`",
    )
    .checked(check_key),
    key(
        "context.recent",
        Kind::Int,
        "10",
        Some("OMNISH_CONTEXT_RECENT"),
        "commands `omnish context` shows (--recent)",
    ),
    key(
        "context.max_lines",
        Kind::Int,
        "20",
        Some("OMNISH_CONTEXT_MAX_LINES"),
        "output lines per command, head and tail kept; 0 = all (--max-lines)",
    ),
    key(
        "context.max_line_width",
        Kind::Int,
        "500",
        Some("OMNISH_CONTEXT_MAX_LINE_WIDTH"),
        "chars per output line; 0 = unlimited (--max-line-width)",
    ),
    key(
        "context.format",
        Kind::Choice(FORMATS),
        "text",
        Some("OMNISH_CONTEXT_FORMAT"),
        "text, markdown or json (--format)",
    ),
    key(
        "context.redact",
        Kind::Bool,
        "true",
        Some("OMNISH_CONTEXT_REDACT"),
        "redact secrets (--no-redact turns it off)",
    ),
    key(
        "env.allow",
        Kind::List,
        crate::context::sources::env::DEFAULT_ALLOW,
        Some("OMNISH_ENV_ALLOW"),
        "environment variables `context --env` shows: glob patterns, case-insensitive",
    )
    .checked(check_globs),
    key(
        "env.deny",
        Kind::List,
        crate::context::sources::env::DEFAULT_DENY,
        Some("OMNISH_ENV_DENY"),
        "environment variables `context --env` never shows, even when allowed: glob patterns",
    )
    .checked(check_globs),
    key(
        "files.collapse",
        Kind::Int,
        "40",
        Some("OMNISH_FILES_COLLAPSE"),
        "`context --files`: a directory with more entries than this is one line (`dir/ (412 files)`)",
    ),
    key(
        "files.max_lines",
        Kind::Int,
        "200",
        Some("OMNISH_FILES_MAX_LINES"),
        "`context --files`: most lines of the file tree and of the changed files",
    ),
    key(
        "loops.threshold",
        Kind::Int,
        "3",
        Some("OMNISH_LOOPS_THRESHOLD"),
        "failed attempts in a row that context folds into one loop entry; 0 = never fold",
    ),
    key(
        "sessions.keep",
        Kind::Int,
        "100",
        Some("OMNISH_SESSIONS_KEEP"),
        "sessions kept by the automatic prune at `wrap` start and by `sessions prune` without limits (the newest); 0 = no limit",
    ),
    key(
        "sessions.max_size",
        Kind::Str,
        "2GiB",
        Some("OMNISH_SESSIONS_MAX_SIZE"),
        "most disk all sessions may take (500M, 2GiB, 800MB) before the oldest are pruned; 0 = no limit",
    )
    .checked(check_size),
    key(
        "data_dir",
        Kind::Path,
        "",
        Some("OMNISH_DATA_DIR"),
        "where sessions are stored; empty: the platform data dir (~/.local/share/omnish)",
    ),
    key(
        "nest.auto",
        Kind::List,
        "",
        Some("OMNISH_NEST_AUTO"),
        "programs a recorded bash or zsh runs through `omnish nest` by themselves, so that the shells they start are recorded command by command: any of ssh, sudo, su, docker, podman, kubectl, oc (each changes what the program is given to run: see the README)",
    )
    .checked(check_nest_auto),
    key(
        "record.ignore",
        Kind::List,
        "",
        Some("OMNISH_RECORD_IGNORE"),
        "command lines never kept, as if private (times and status only), whatever the shell does with them: shell glob patterns matched against the whole line, e.g. [\"pass *\", \"*vault read*\", \"op item get *\"]",
    )
    .checked(check_command_globs),
    Key {
        name: "record.private_leading_space",
        kind: Kind::Bool,
        default: "true",
        env: Some(("OMNISH_RECORD_PRIVATE", EnvMap::Inverted)),
        check: None,
        doc: "a command the shell keeps out of history (leading space with ignorespace/HIST_IGNORE_SPACE, HISTIGNORE, set +o history, a refusing zshaddhistory) is private: only its times and status are recorded (OMNISH_RECORD_PRIVATE=1/true/yes/on sets false: record them; 0/false/no/off sets true)",
    },
];

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    Default,
    /// The file and the line.
    File(usize),
    /// The environment variable.
    Env(&'static str),
    /// The flag.
    Flag(String),
}

impl Source {
    fn label(&self) -> String {
        match self {
            Source::Default => "default".into(),
            Source::File(line) => format!("file, line {line}"),
            Source::Env(var) => format!("env {var}"),
            Source::Flag(flag) => format!("flag {flag}"),
        }
    }
}

/// A key's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Str(String),
    Int(u64),
    Bool(bool),
    List(Vec<String>),
}

impl Value {
    fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Str(s) => s.clone().into(),
            Value::Int(n) => (*n).into(),
            Value::Bool(b) => (*b).into(),
            Value::List(l) => l.clone().into(),
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::List(l) => write!(f, "{l:?}"),
        }
    }
}

/// A model profile added in the file (`[models.NAME]`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UserModel {
    pub name: String,
    pub window: usize,
    pub tokenizer: String,
    pub budget_share: f64,
    pub line: usize,
}

impl UserModel {
    pub fn default_budget(&self) -> usize {
        (self.window as f64 * self.budget_share).floor() as usize
    }
}

/// The largest config file read. A config is a few lines; anything larger is a mistake (a log
/// named by `OMNISH_CONFIG`) and must cost neither memory nor time.
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 20;

/// Most warnings a lenient load prints; the others are counted in one more line.
const MAX_WARNINGS: usize = 5;

/// Longest key name or value quoted in a message (the rest is elided): a hostile file cannot
/// make an error a megabyte long.
const MAX_QUOTED: usize = 80;

/// One problem with the configuration (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// What is wrong, naming the file and line and the key, or the variable: one line.
    pub what: String,
    /// How to put it right, said by the strict error only (the known keys, ...); may be empty.
    pub hint: std::borrow::Cow<'static, str>,
    /// What a lenient load did instead ("ignored", "using the default 10").
    pub instead: String,
    /// The strict error's exit status: 2, or 1 for an I/O error.
    pub code: i32,
}

impl Problem {
    fn new(what: String, instead: impl Into<String>) -> Problem {
        Problem {
            what,
            hint: "".into(),
            instead: instead.into(),
            code: 2,
        }
    }

    fn hint(mut self, hint: impl Into<std::borrow::Cow<'static, str>>) -> Problem {
        self.hint = hint.into();
        self
    }

    /// The strict error: one line.
    pub fn error(&self) -> anyhow::Error {
        let message = if self.hint.is_empty() {
            self.what.clone()
        } else {
            format!("{}; {}", self.what, self.hint)
        };
        match self.code {
            2 => Error::usage(message),
            code => Error::Status { code, message },
        }
        .into()
    }

    /// The lenient warning: one line.
    pub fn warning(&self) -> String {
        format!("omnish: {}; {}", self.what, self.instead)
    }
}

/// The warning lines of a lenient load: one per problem, at most [`MAX_WARNINGS`], then one
/// line counting the rest.
pub(crate) fn warning_lines(problems: &[Problem]) -> Vec<String> {
    let mut lines: Vec<String> = problems
        .iter()
        .take(MAX_WARNINGS)
        .map(Problem::warning)
        .collect();
    if problems.len() > MAX_WARNINGS {
        lines.push(format!(
            "omnish: {} more problems in the configuration; `omnish config` names them one at a time",
            problems.len() - MAX_WARNINGS
        ));
    }
    lines
}

/// `s` quoted in a message: control characters shown visibly, at most [`MAX_QUOTED`] chars.
fn shown(s: &str) -> String {
    let s = crate::term::visible::line(s);
    match s.char_indices().nth(MAX_QUOTED) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.into_owned(),
    }
}

/// The effective configuration.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// The file read (or that would be read: it may not exist).
    pub path: Option<PathBuf>,
    pub file_exists: bool,
    values: BTreeMap<&'static str, (Value, Source)>,
    pub models: Vec<UserModel>,
    /// Why the session store cannot be known (a lenient load only): `data_dir` had a bad value,
    /// or the file that may set it could not be read.
    store_unknown: Option<String>,
}

/// The environment as the config sees it (a function, so tests need not touch the process's).
pub(crate) type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A variable of this process; one that is not UTF-8 comes with U+FFFD in place of its bad
/// bytes (a path holding one is refused, see `apply_env`), never as unset.
fn process_env(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

/// The config file's path: `$OMNISH_CONFIG`, else the platform config dir's `config.toml`.
pub(crate) fn config_path(env: Env) -> Option<PathBuf> {
    if let Some(p) = env("OMNISH_CONFIG").filter(|p| !p.is_empty()) {
        return Some(std::path::absolute(&p).unwrap_or_else(|_| PathBuf::from(p)));
    }
    directories::ProjectDirs::from("", "", "omnish").map(|d| d.config_dir().join("config.toml"))
}

fn find_key(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

fn bad(msg: String) -> anyhow::Error {
    Error::usage(msg).into()
}

/// "known keys: ...", made once: a file of many unknown keys costs one line each, not a list.
fn known_keys() -> &'static str {
    static KNOWN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KNOWN.get_or_init(|| {
        format!(
            "known keys: {}, models.NAME",
            KEYS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
        )
    })
}

/// What kind of file `meta` describes, for "is not a regular file (a FIFO)".
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The config file's bytes: `None` when it does not exist and was not named by
/// `OMNISH_CONFIG` (`explicit`). Only a regular file of at most [`MAX_FILE_BYTES`] is read, and
/// it is opened without blocking: a FIFO, `/dev/zero` or a directory is one problem, at once.
/// `/dev/null` is the one exception, an empty file: `OMNISH_CONFIG=/dev/null` reads no config.
fn read_file(path: &Path, explicit: bool) -> std::result::Result<Option<Vec<u8>>, Problem> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = shown(&path.display().to_string());
    let unreadable = |what: String, code: i32| Problem {
        what,
        hint: "".into(),
        instead: "ignoring the file".into(),
        code,
    };
    let io_problem = |e: std::io::Error| {
        let code = if e.kind() == std::io::ErrorKind::PermissionDenied {
            2
        } else {
            1
        };
        unreadable(format!("cannot read the config file {file}: {e}"), code)
    };
    if std::fs::canonicalize(path).is_ok_and(|p| p == Path::new("/dev/null")) {
        return Ok(Some(Vec::new()));
    }
    // Looked at before it is opened: opening a device can have effects of its own.
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !explicit {
                return Ok(None);
            }
            return Err(unreadable(
                format!("the config file {file} named by OMNISH_CONFIG does not exist"),
                2,
            )
            .hint("create it, or unset OMNISH_CONFIG to use the default file"));
        }
        Err(e) => return Err(io_problem(e)),
    };
    let not_regular = |meta: &std::fs::Metadata| {
        unreadable(
            format!(
                "the config file {file} is {}, not a regular file",
                file_kind(meta)
            ),
            2,
        )
    };
    let too_large = || {
        unreadable(
            format!(
                "the config file {file} is larger than {} KiB; a config file is a few lines",
                MAX_FILE_BYTES >> 10
            ),
            2,
        )
    };
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_NOCTTY).bits())
        .open(path)
        .map_err(io_problem)?;
    // Replaced between the two looks: the open file decides.
    let meta = f.metadata().map_err(io_problem)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_problem)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large());
    }
    Ok(Some(bytes))
}

/// Line numbers of byte offsets in one text, by binary search over its newlines: linear time
/// for a file of any number of keys.
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &[u8]) -> Lines {
        Lines(memchr::memchr_iter(b'\n', text).collect())
    }

    /// The 1-based line of byte `offset`.
    fn at(&self, offset: usize) -> usize {
        self.0.partition_point(|&nl| nl < offset) + 1
    }
}

impl Config {
    /// The configuration of this process, for a command that reads its values: its file and
    /// environment, no flags yet; the first problem is the error.
    pub fn load() -> Result<Config> {
        Config::load_with(&process_env)
    }

    /// The configuration of this process, for `omnish wrap` and `omnish init`: never fails;
    /// each problem is one warning line (see [`warning_lines`]) and the value is ignored.
    pub fn load_lenient() -> (Config, Vec<Problem>) {
        Config::load_all(&process_env)
    }

    /// [`Config::load`] from the file named by `env` and `env` itself.
    pub fn load_with(env: Env) -> Result<Config> {
        let (cfg, problems) = Config::load_all(env);
        match problems.first() {
            Some(p) => Err(p.error()),
            None => Ok(cfg),
        }
    }

    /// The configuration and every problem met on the way: the file's (by table and key, as
    /// the TOML parser lists them), then the environment's (in [`KEYS`] order), then
    /// `ask.model`'s.
    pub fn load_all(env: Env) -> (Config, Vec<Problem>) {
        let path = config_path(env);
        let explicit = env("OMNISH_CONFIG").is_some_and(|p| !p.is_empty());
        let contents = match &path {
            Some(p) => read_file(p, explicit),
            None => Ok(None),
        };
        Config::from_contents(path, contents, env)
    }

    /// The configuration from the file's bytes (or why they could not be read) and `env`.
    fn from_contents(
        path: Option<PathBuf>,
        contents: std::result::Result<Option<Vec<u8>>, Problem>,
        env: Env,
    ) -> (Config, Vec<Problem>) {
        let mut cfg = Config {
            file_exists: !matches!(contents, Ok(None)),
            path: path.clone(),
            values: KEYS
                .iter()
                .map(|k| {
                    let v = parse_default(k);
                    (k.name, (v, Source::Default))
                })
                .collect(),
            models: Vec::new(),
            store_unknown: None,
        };
        let mut problems = Vec::new();
        match (contents, &path) {
            (Ok(Some(bytes)), Some(path)) => cfg.apply_file(&bytes, path, &mut problems),
            (Err(p), Some(path)) => {
                // A file that is not there sets nothing; one that is, may set data_dir.
                if path.symlink_metadata().is_ok() {
                    cfg.file_unusable(path, None);
                }
                problems.push(p);
            }
            _ => {}
        }
        cfg.apply_env(env, &mut problems);
        cfg.check_model(&mut problems);
        (cfg, problems)
    }

    /// The file could not be used: the store is unknown if it may set `data_dir` (`bytes`
    /// holding the word, or unreadable).
    fn file_unusable(&mut self, path: &Path, bytes: Option<&[u8]>) {
        if bytes.is_none_or(|b| memchr::memmem::find(b, b"data_dir").is_some()) {
            self.store_unknown = Some(format!(
                "the session store is unknown: data_dir may be set in {}, which cannot be used",
                shown(&path.display().to_string())
            ));
        }
    }

    fn apply_file(&mut self, bytes: &[u8], path: &Path, problems: &mut Vec<Problem>) {
        let file = shown(&path.display().to_string());
        let lines = Lines::new(bytes);
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let at = e.valid_up_to();
                let line = lines.at(at);
                let line_start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |nl| nl + 1);
                problems.push(
                    Problem::new(
                        format!(
                            "{file}:{line}:{}: invalid UTF-8 (byte 0x{:02x})",
                            at - line_start + 1,
                            bytes[at]
                        ),
                        "ignoring the file",
                    )
                    .hint("save the file as UTF-8"),
                );
                self.file_unusable(path, Some(bytes));
                return;
            }
        };
        let table = match toml::de::DeTable::parse(text) {
            Ok(t) => t.into_inner(),
            Err(e) => {
                let line = e.span().map(|s| lines.at(s.start)).unwrap_or(1);
                let msg = e.message().trim().replace('\n', " ");
                problems.push(Problem::new(
                    format!("{file}:{line}: invalid TOML: {}", shown(&msg)),
                    "ignoring the file",
                ));
                self.file_unusable(path, Some(bytes));
                return;
            }
        };
        let dir = path.parent().unwrap_or(Path::new("/"));
        for (k, v) in &table {
            let name: &str = k.get_ref();
            let line = lines.at(k.span().start);
            match v.get_ref() {
                toml::de::DeValue::Table(section) if name == "models" => {
                    for (mk, mv) in section {
                        let mline = lines.at(mk.span().start);
                        match parse_model(mk.get_ref(), mv.get_ref(), mline, &lines) {
                            Ok(model) => self.models.push(model),
                            Err(e) => problems.push(Problem::new(
                                format!("{file}:{e}"),
                                format!("model '{}' ignored", shown(mk.get_ref())),
                            )),
                        }
                    }
                }
                _ if name == "models" => problems.push(Problem::new(
                    format!(
                        "{file}:{line}: key 'models': expected [models.NAME] tables, found {}",
                        v.get_ref().type_str()
                    ),
                    "ignored",
                )),
                toml::de::DeValue::Table(section) => {
                    for (sk, sv) in section {
                        let full = format!("{name}.{}", sk.get_ref());
                        let sline = lines.at(sk.span().start);
                        self.set_from_file(&full, sv.get_ref(), sline, dir, &file, problems);
                    }
                }
                value => self.set_from_file(name, value, line, dir, &file, problems),
            }
        }
    }

    fn set_from_file(
        &mut self,
        name: &str,
        value: &toml::de::DeValue,
        line: usize,
        dir: &Path,
        file: &str,
        problems: &mut Vec<Problem>,
    ) {
        let Some(key) = find_key(name) else {
            problems.push(
                Problem::new(
                    format!("{file}:{line}: unknown key '{}'", shown(name)),
                    "ignored",
                )
                .hint(known_keys()),
            );
            return;
        };
        match value_from_toml(key, value, dir).and_then(|v| checked(key, v)) {
            Ok(v) => {
                self.values.insert(key.name, (v, Source::File(line)));
            }
            Err(e) => {
                let mut instead = self.instead(key);
                if key.kind == Kind::Path {
                    instead = "ignored".into();
                    self.store_unknown = Some(format!(
                        "the session store is unknown: {file}:{line}: key '{}' is not a path",
                        key.name
                    ));
                }
                problems.push(Problem::new(format!("{file}:{line}: {e}"), instead));
            }
        }
    }

    /// What a lenient load keeps when a value for `key` is refused: its current value (a long
    /// list shortened).
    fn instead(&self, key: &Key) -> String {
        let (v, src) = self.get(key.name);
        let v = match v {
            Value::List(l) if l.len() > 3 => {
                format!("[{}, … ({} patterns)]", l[..3].join(", "), l.len())
            }
            v => shown(&v.to_string()),
        };
        match src {
            Source::Default => format!("using the default {v}"),
            other => format!("using {v} ({})", other.label()),
        }
    }

    fn apply_env(&mut self, env: Env, problems: &mut Vec<Problem>) {
        for key in KEYS {
            let Some((var, map)) = key.env else { continue };
            let Some(raw) = env(var).filter(|v| !v.is_empty()) else {
                continue;
            };
            let parsed = match map {
                EnvMap::Inverted => parse_bool(&raw).map(|b| Value::Bool(!b)).ok_or_else(|| {
                    format!(
                        "expected 1, true, yes or on (record private commands) or 0, false, no or off (keep them private), found '{}'",
                        shown(&raw)
                    )
                }),
                EnvMap::Plain if key.kind == Kind::Path && raw.contains('\u{fffd}') => {
                    Err("not a path omnish can use (it is not valid UTF-8)".to_string())
                }
                EnvMap::Plain => parse_text(key, &raw, None).and_then(|v| checked(key, v)),
            };
            match parsed {
                Ok(value) => {
                    self.values.insert(key.name, (value, Source::Env(var)));
                    if key.kind == Kind::Path {
                        self.store_unknown = None;
                    }
                }
                Err(e) => {
                    let instead = match map {
                        // The safe side: private commands stay private.
                        EnvMap::Inverted => {
                            self.values
                                .insert(key.name, (Value::Bool(true), Source::Default));
                            "private commands stay private".to_string()
                        }
                        EnvMap::Plain if key.kind == Kind::Path => {
                            self.store_unknown = Some(format!(
                                "the session store is unknown: {var} cannot be used"
                            ));
                            "ignored".to_string()
                        }
                        EnvMap::Plain => self.instead(key),
                    };
                    problems.push(Problem::new(
                        format!("environment variable {var}: {e}"),
                        instead,
                    ));
                }
            }
        }
    }

    /// `ask.model` names a model: one of the file's, else a built-in profile. Checked once the
    /// whole file is read (the table may come after the key).
    fn check_model(&mut self, problems: &mut Vec<Problem>) {
        let name = self.str("ask.model").to_string();
        if name.is_empty() || self.user_model(&name).is_some() {
            return;
        }
        let Err(e) = crate::context::tokens::models::resolve_model(&name) else {
            return;
        };
        let at = match self.get("ask.model").1 {
            Source::File(line) => format!(
                "{}:{line}: key 'ask.model'",
                shown(
                    &self
                        .path
                        .as_deref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                )
            ),
            Source::Env(var) => format!("environment variable {var}"),
            _ => "key 'ask.model'".to_string(),
        };
        let msg = e.to_string();
        let (what, hint) = msg.split_once("; ").unwrap_or((&msg, ""));
        problems.push(
            Problem::new(
                format!("{at}: {}", shown(what)),
                "using no model (no budget)",
            )
            .hint(format!("{hint}; or add it as a [models.NAME] table")),
        );
        self.values
            .insert("ask.model", (Value::Str(String::new()), Source::Default));
    }

    /// Sets `name` from a flag (the flag's spelling for `omnish config` to show). Values are
    /// checked as the file's are.
    pub fn set_flag(&mut self, name: &str, value: Value, flag: &str) {
        if let Some(key) = find_key(name) {
            self.values
                .insert(key.name, (value, Source::Flag(flag.into())));
        }
    }

    /// Puts `name` back to its default.
    pub fn reset(&mut self, name: &str) {
        if let Some(key) = find_key(name) {
            self.values
                .insert(key.name, (parse_default(key), Source::Default));
        }
    }

    /// Sets `name=text` as a flag would (`omnish config --set`).
    pub fn set_text(&mut self, name: &str, text: &str, flag: &str) -> Result<()> {
        let key = find_key(name).ok_or_else(|| {
            bad(format!(
                "{flag}: unknown key '{}'; {}",
                shown(name),
                known_keys()
            ))
        })?;
        let cwd = std::env::current_dir().ok();
        let v = parse_text(key, text, cwd.as_deref())
            .and_then(|v| checked(key, v))
            .map_err(|e| bad(format!("{flag}: {e}")))?;
        self.set_flag(name, v, flag);
        Ok(())
    }
    fn get(&self, name: &str) -> &(Value, Source) {
        self.values
            .get(name)
            .unwrap_or_else(|| panic!("config key {name} is not in KEYS"))
    }

    /// A string key (empty when unset).
    pub fn str(&self, name: &str) -> &str {
        match &self.get(name).0 {
            Value::Str(s) => s,
            _ => "",
        }
    }

    pub fn int(&self, name: &str) -> usize {
        match &self.get(name).0 {
            Value::Int(n) => usize::try_from(*n).unwrap_or(usize::MAX),
            _ => 0,
        }
    }

    /// A list key.
    pub fn list(&self, name: &str) -> &[String] {
        match &self.get(name).0 {
            Value::List(l) => l,
            _ => &[],
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        matches!(self.get(name).0, Value::Bool(true))
    }

    /// Where the value of `name` came from (the default, the file, the environment, a flag).
    pub(crate) fn source(&self, name: &str) -> &Source {
        &self.get(name).1
    }

    /// The automatic and default prune limits (`sessions.keep`, `sessions.max_size`).
    pub fn prune_settings(&self) -> Result<crate::store::prune::PruneSettings> {
        let size = self.str("sessions.max_size");
        let max_size = crate::store::prune::parse_size(size)
            .map_err(|e| Error::usage(format!("sessions.max_size: {e}")))?;
        Ok(crate::store::prune::PruneSettings {
            keep: self.int("sessions.keep"),
            max_size,
        })
    }

    /// The store's root: `data_dir` (absolute), else the platform data dir. An error when
    /// `data_dir` cannot be known (a lenient load whose file could not be used): recording
    /// somewhere the user did not choose is no fallback.
    pub fn data_root(&self) -> Result<PathBuf> {
        if let Some(why) = &self.store_unknown {
            return Err(anyhow::anyhow!("{why}"));
        }
        let dir = self.str("data_dir");
        if !dir.is_empty() {
            return Ok(PathBuf::from(dir));
        }
        directories::ProjectDirs::from("", "", "omnish")
            .map(|d| d.data_dir().to_path_buf())
            .context("cannot find a home directory for the session store; set OMNISH_DATA_DIR")
    }

    /// A model added in the file, by exact (case-insensitive) name.
    pub fn user_model(&self, name: &str) -> Option<&UserModel> {
        let lower = name.trim().to_lowercase();
        self.models.iter().find(|m| m.name.to_lowercase() == lower)
    }

    /// `omnish config`'s text: one `key = value  # source` line per key, then the models.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        match &self.path {
            Some(p) if self.file_exists => out.push_str(&format!("# file: {}\n", p.display())),
            Some(p) => out.push_str(&format!("# file: {} (not found)\n", p.display())),
            None => out.push_str("# file: none (no home directory; set OMNISH_CONFIG)\n"),
        }
        let width = KEYS
            .iter()
            .map(|k| k.name.len() + 3 + self.get(k.name).0.to_string().len())
            .max()
            .unwrap_or(0);
        for k in KEYS {
            let (v, src) = self.get(k.name);
            let left = format!("{} = {v}", k.name);
            out.push_str(&format!("{left:<width$}  # {}\n", src.label()));
        }
        for m in &self.models {
            out.push_str(&format!(
                "models.{:?} = {{ window = {}, tokenizer = {:?}, budget_share = {} }}  # file, line {}\n",
                m.name, m.window, m.tokenizer, m.budget_share, m.line
            ));
        }
        out
    }

    /// `omnish config --format json`.
    pub fn render_json(&self) -> serde_json::Value {
        let keys: serde_json::Map<String, serde_json::Value> = KEYS
            .iter()
            .map(|k| {
                let (v, src) = self.get(k.name);
                let (source, detail) = match src {
                    Source::Default => ("default", serde_json::Value::Null),
                    Source::File(line) => ("file", (*line).into()),
                    Source::Env(var) => ("env", (*var).into()),
                    Source::Flag(flag) => ("flag", flag.clone().into()),
                };
                (
                    k.name.to_string(),
                    serde_json::json!({
                        "value": v.to_json(),
                        "source": source,
                        "detail": detail,
                        "default": parse_default(k).to_json(),
                        "env": k.env.map(|(e, _)| e),
                        "doc": k.doc,
                    }),
                )
            })
            .collect();
        let models: Vec<serde_json::Value> = self
            .models
            .iter()
            .map(|m| {
                serde_json::json!({"name": m.name, "window": m.window, "tokenizer": m.tokenizer,
                    "budget_share": m.budget_share, "line": m.line})
            })
            .collect();
        serde_json::json!({
            "file": self.path.as_ref().map(|p| p.display().to_string()),
            "file_exists": self.file_exists,
            "keys": keys,
            "models": models,
        })
    }
}

/// A value from the file as `key`'s value; relative paths resolve against `dir`.
fn value_from_toml(
    key: &Key,
    value: &toml::de::DeValue,
    dir: &Path,
) -> std::result::Result<Value, String> {
    use toml::de::DeValue;
    let name = key.name;
    Ok(match (key.kind, value) {
        (Kind::Str, DeValue::String(s)) => Value::Str(s.to_string()),
        (Kind::Choice(choices), DeValue::String(s)) => {
            check_choice(name, s, choices)?;
            Value::Str(s.to_string())
        }
        (Kind::Path, DeValue::String(s)) => Value::Str(absolute_in(s, dir)),
        (Kind::List, DeValue::Array(items)) => Value::List(
            items
                .iter()
                .map(|i| match i.get_ref() {
                    DeValue::String(s) => Ok(s.to_string()),
                    other => Err(format!(
                        "key '{name}': expected an array of strings, found an array holding {}",
                        other.type_str()
                    )),
                })
                .collect::<std::result::Result<_, _>>()?,
        ),
        (Kind::Bool, DeValue::Boolean(b)) => Value::Bool(*b),
        (Kind::Int, DeValue::Integer(i)) => {
            Value::Int(parse_int(i.as_str(), i.radix()).ok_or_else(|| {
                format!("key '{name}': expected a non-negative integer, found {i}")
            })?)
        }
        (kind, other) => {
            return Err(format!(
                "key '{name}': expected {}, found {}",
                kind_name(kind),
                other.type_str()
            ));
        }
    })
}

fn kind_name(kind: Kind) -> String {
    match kind {
        Kind::Str => "a string".into(),
        Kind::Int => "a non-negative integer".into(),
        Kind::Bool => "true or false".into(),
        Kind::Choice(c) => format!("one of {}", c.join(", ")),
        Kind::Path => "a path (string)".into(),
        Kind::List => "an array of strings".into(),
    }
}

fn check_choice(name: &str, s: &str, choices: &[&str]) -> std::result::Result<(), String> {
    if choices.contains(&s) {
        Ok(())
    } else {
        Err(format!(
            "key '{name}': '{}' is not one of {}",
            shown(s),
            choices.join(", ")
        ))
    }
}

fn parse_int(digits: &str, radix: u32) -> Option<u64> {
    let digits = digits.replace('_', "");
    let digits = digits.trim_start_matches('+');
    let digits = match radix {
        16 => digits.trim_start_matches("0x"),
        8 => digits.trim_start_matches("0o"),
        2 => digits.trim_start_matches("0b"),
        _ => digits,
    };
    u64::from_str_radix(digits, radix).ok()
}

/// `raw` as `key`'s value (environment, `--set`, defaults). Relative paths resolve against `cwd`.
fn parse_text(key: &Key, raw: &str, cwd: Option<&Path>) -> std::result::Result<Value, String> {
    match key.kind {
        Kind::Str => Ok(Value::Str(raw.to_string())),
        Kind::Choice(choices) => {
            check_choice(key.name, raw, choices)?;
            Ok(Value::Str(raw.to_string()))
        }
        Kind::List => Ok(Value::List(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        )),
        Kind::Path => {
            if raw.is_empty() {
                return Ok(Value::Str(String::new()));
            }
            let p = expand_home(raw);
            let abs = match cwd {
                Some(c) => c.join(p),
                None => std::path::absolute(&p).unwrap_or(p),
            };
            Ok(Value::Str(abs.to_string_lossy().into_owned()))
        }
        Kind::Int => raw.trim().parse::<u64>().map(Value::Int).map_err(|_| {
            format!(
                "key '{}': expected {}, found '{}'",
                key.name,
                kind_name(key.kind),
                shown(raw)
            )
        }),
        Kind::Bool => parse_bool(raw).map(Value::Bool).ok_or_else(|| {
            format!(
                "key '{}': expected 1, true, yes or on, or 0, false, no or off, found '{}'",
                key.name,
                shown(raw)
            )
        }),
    }
}

/// A boolean in the environment or `--set`: `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`,
/// any case, surrounding blanks ignored; anything else is `None`.
fn parse_bool(raw: &str) -> Option<bool> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// `v` if `key`'s check takes it.
fn checked(key: &Key, v: Value) -> std::result::Result<Value, String> {
    match key.check.map(|check| check(&v)) {
        Some(Err(e)) => Err(format!("key '{}': {e}", key.name)),
        _ => Ok(v),
    }
}

/// `keys.ask`, `keys.fix`: a key in readline syntax that the `init` snippets can quote safely.
fn check_key(v: &Value) -> std::result::Result<(), String> {
    let Value::Str(key) = v else { return Ok(()) };
    if key.is_empty()
        || key
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || c == '"' || c == '\'')
    {
        return Err(format!(
            "'{}' is not a key in readline syntax such as \\C-xa or \\ea (no spaces or quotes)",
            shown(key)
        ));
    }
    Ok(())
}

/// `env.allow`, `env.deny`: glob patterns as `context --env` compiles them (case-insensitive,
/// see `context::sources::env`).
fn check_globs(v: &Value) -> std::result::Result<(), String> {
    let Value::List(patterns) = v else {
        return Ok(());
    };
    let mut set = globset::GlobSetBuilder::new();
    for p in patterns {
        let glob = globset::GlobBuilder::new(p)
            .case_insensitive(true)
            .build()
            .map_err(|e| format!("invalid glob pattern '{}': {}", shown(p), e.kind()))?;
        set.add(glob);
    }
    set.build()
        .map(drop)
        .map_err(|e| format!("invalid glob patterns: {}", shown(&e.to_string())))
}

/// `sessions.max_size`: a size as `sessions prune --max-size` reads it.
fn check_size(v: &Value) -> std::result::Result<(), String> {
    match v {
        Value::Str(s) => crate::store::prune::parse_size(s).map(drop).map_err(|_| {
            format!(
                "invalid size '{}'; use forms like 500M, 2G, 1.5GiB, 800MB, or 0 for no limit",
                shown(s)
            )
        }),
        _ => Ok(()),
    }
}

/// `record.ignore`: command-line patterns in shell glob syntax, as the recorder matches them:
/// against the whole line (white space around it left out), case-sensitive, `*` and `?`
/// matching any char (`/` and newlines included), `[...]` a class, `\\` quoting.
pub(crate) fn command_globs(patterns: &[String]) -> std::result::Result<globset::GlobSet, String> {
    let mut set = globset::GlobSetBuilder::new();
    for p in patterns {
        let glob = globset::GlobBuilder::new(p)
            .literal_separator(false)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|e| format!("invalid glob pattern '{}': {}", shown(p), e.kind()))?;
        set.add(glob);
    }
    set.build()
        .map_err(|e| format!("invalid glob patterns: {}", shown(&e.to_string())))
}

fn check_command_globs(v: &Value) -> std::result::Result<(), String> {
    match v {
        Value::List(patterns) => command_globs(patterns).map(drop),
        _ => Ok(()),
    }
}

/// The programs `omnish nest` knows how to start a shell through.
pub(crate) const NEST_PROGRAMS: &[&str] =
    &["ssh", "sudo", "su", "docker", "podman", "kubectl", "oc"];

/// `nest.auto`: programs `omnish nest` knows.
fn check_nest_auto(v: &Value) -> std::result::Result<(), String> {
    let Value::List(names) = v else {
        return Ok(());
    };
    match names.iter().find(|n| !NEST_PROGRAMS.contains(&n.as_str())) {
        Some(bad) => Err(format!(
            "'{}' is not a program omnish nest knows; use any of {}",
            shown(bad),
            NEST_PROGRAMS.join(", ")
        )),
        None => Ok(()),
    }
}

fn parse_default(key: &Key) -> Value {
    match key.kind {
        Kind::Int => Value::Int(key.default.parse().unwrap_or(0)),
        Kind::Bool => Value::Bool(key.default == "true"),
        Kind::List => parse_text(key, key.default, None).unwrap_or(Value::List(Vec::new())),
        _ => Value::Str(key.default.to_string()),
    }
}

fn expand_home(p: &str) -> PathBuf {
    if let Some(rest) = p.strip_prefix("~/") {
        if let Some(home) = directories::BaseDirs::new() {
            return home.home_dir().join(rest);
        }
    }
    PathBuf::from(p)
}

fn absolute_in(p: &str, dir: &Path) -> String {
    if p.is_empty() {
        return String::new();
    }
    dir.join(expand_home(p)).to_string_lossy().into_owned()
}

/// Largest `window` of a `[models.NAME]` table, in tokens: far above any model's, a bound on
/// what a typo can make the budget.
pub(crate) const MAX_WINDOW: u64 = 1_000_000_000;

/// Longest model name, in chars.
const MAX_MODEL_NAME: usize = 100;

/// A `[models.NAME]` table; the error starts with its line (`12: key 'models.x.window': ...`).
fn parse_model(
    name: &str,
    value: &toml::de::DeValue,
    line: usize,
    lines: &Lines,
) -> std::result::Result<UserModel, String> {
    use toml::de::DeValue;
    let shown_name = shown(name);
    if name.trim().is_empty()
        || name.chars().count() > MAX_MODEL_NAME
        || name.chars().any(char::is_control)
    {
        return Err(format!(
            "{line}: key 'models.{shown_name}': a model name is printable, not blank, and at most {MAX_MODEL_NAME} chars"
        ));
    }
    let DeValue::Table(t) = value else {
        return Err(format!(
            "{line}: key 'models.{shown_name}': expected a table {{ window = N, tokenizer = \"o200k\" }}, found {}",
            value.type_str()
        ));
    };
    let mut window = None;
    let mut tokenizer = None;
    let mut share = 0.25;
    for (k, v) in t {
        let l = lines.at(k.span().start);
        let field: &str = k.get_ref();
        let full = format!("models.{shown_name}.{}", shown(field));
        match (field, v.get_ref()) {
            ("window", DeValue::Integer(i)) => {
                window = Some(
                    parse_int(i.as_str(), i.radix())
                        .filter(|n| (1..=MAX_WINDOW).contains(n))
                        .ok_or_else(|| {
                            format!(
                                "{l}: key '{full}': expected a positive integer of at most {MAX_WINDOW}"
                            )
                        })? as usize,
                );
            }
            ("tokenizer", DeValue::String(s)) => {
                if !crate::context::tokens::tokenizer::TOKENIZERS.contains(&s.as_ref()) {
                    return Err(format!(
                        "{l}: key '{full}': unknown tokenizer '{}'; known: {}",
                        shown(s),
                        crate::context::tokens::tokenizer::TOKENIZERS.join(", ")
                    ));
                }
                tokenizer = Some(s.to_string());
            }
            ("budget_share", DeValue::Float(f)) => {
                let x: f64 = f.as_str().replace('_', "").parse().unwrap_or(f64::NAN);
                if !(x > 0.0 && x <= 1.0) {
                    return Err(format!(
                        "{l}: key '{full}': expected a number above 0 and at most 1"
                    ));
                }
                share = x;
            }
            ("window" | "tokenizer" | "budget_share", other) => {
                return Err(format!(
                    "{l}: key '{full}': wrong type ({}); expected window = integer, tokenizer = string, budget_share = float",
                    other.type_str()
                ));
            }
            _ => {
                return Err(format!(
                    "{l}: unknown key '{full}'; a model has window, tokenizer and budget_share"
                ));
            }
        }
    }
    let window =
        window.ok_or_else(|| format!("{line}: key 'models.{shown_name}': missing window"))?;
    Ok(UserModel {
        name: name.to_string(),
        window,
        tokenizer: tokenizer.unwrap_or_else(|| "o200k".into()),
        budget_share: share,
        line,
    })
}

/// The fuzz target's check (`fuzz/fuzz_targets/config.rs`): loads `file` as the config file
/// (written to a temporary file named by `OMNISH_CONFIG`) with `env` as the whole environment,
/// strictly and leniently, and panics when a promise of this module is broken: a strict load
/// is a config or one error of one line naming the file and line, the key or the variable; a
/// lenient load never fails, says each problem in one line, and has problems exactly when the
/// strict load fails, and otherwise the same values.
#[doc(hidden)]
pub fn fuzz_check(file: &[u8], env: &[(String, String)]) {
    thread_local! {
        static DIR: tempfile::TempDir = tempfile::tempdir().expect("a temporary directory");
    }
    let path = DIR.with(|d| d.path().join("config.toml"));
    std::fs::write(&path, file).expect("the config file written");
    let shown_path = shown(&path.display().to_string());
    let path_text = path.to_string_lossy().into_owned();
    let lookup = |name: &str| {
        if name == "OMNISH_CONFIG" {
            return Some(path_text.clone());
        }
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    };
    let strict = Config::load_with(&lookup);
    let (lenient, problems) = Config::load_all(&lookup);
    // Bounded: the longest hint is the list of known models.
    const LONGEST: usize = 4096;
    for p in &problems {
        let w = p.warning();
        assert!(!w.contains('\n') && !w.contains('\r'), "{w:?}");
        assert!(w.len() < LONGEST, "{} chars: {w}", w.len());
        let named = w.contains(&format!("{shown_path}:"))
            || w.contains("environment variable OMNISH_")
            || w.contains(&format!("the config file {shown_path}"));
        assert!(
            named,
            "a problem naming neither file and line nor variable: {w}"
        );
    }
    match strict {
        Ok(cfg) => {
            assert!(
                problems.is_empty(),
                "strict took what lenient refused: {problems:?}"
            );
            assert_eq!(cfg.render_json(), lenient.render_json());
            let _ = cfg.data_root();
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "{msg:?}");
            assert!(msg.len() < LONGEST, "{} chars: {msg}", msg.len());
            let first = problems
                .first()
                .expect("a strict error is a lenient problem");
            assert!(msg.starts_with(&first.what), "{msg} vs {first:?}");
            let _ = lenient.data_root();
            let _ = lenient.render_text();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(file: &str, env: &[(&str, &str)]) -> Result<Config> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, file).unwrap();
        let path = path.to_string_lossy().into_owned();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let lookup = move |name: &str| {
            if name == "OMNISH_CONFIG" {
                return Some(path.clone());
            }
            env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        };
        Config::load_with(&lookup)
    }

    #[test]
    fn defaults_parse_to_their_kinds() {
        let c = load("", &[]).unwrap();
        for k in KEYS {
            assert_eq!(c.source(k.name), &Source::Default, "{}", k.name);
        }
        assert_eq!(c.int("context.recent"), 10);
        assert_eq!(c.int("context.max_lines"), 20);
        assert!(c.bool("context.redact"));
        assert!(c.bool("record.private_leading_space"));
        assert_eq!(c.str("keys.ask"), r"\C-xa");
    }

    #[test]
    fn file_then_env_then_flag() {
        let file = "[context]\nmax_lines = 7\nrecent = 3\n";
        let c = load(file, &[("OMNISH_CONTEXT_RECENT", "4")]).unwrap();
        assert_eq!(c.int("context.max_lines"), 7);
        assert_eq!(c.source("context.max_lines"), &Source::File(2));
        assert_eq!(c.int("context.recent"), 4);
        let mut c = c;
        c.set_flag("context.recent", Value::Int(5), "--recent");
        assert_eq!(c.int("context.recent"), 5);
    }

    #[test]
    fn bad_files_name_line_and_key() {
        let e = load("[context]\n\nmax_lnes = 3\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains(":3: unknown key 'context.max_lnes'"), "{e}");
        let e = load("[ask]\nshell = \"yes\"\n", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(":2: key 'ask.shell': expected true or false"),
            "{e}"
        );
        let e = load("x = = 1\n", &[]).unwrap_err().to_string();
        assert!(e.contains(":1: invalid TOML"), "{e}");
        let e = load("[context]\nrecent = -1\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains(":2: key 'context.recent'"), "{e}");
        let e = load("[context]\nformat = \"yaml\"\n", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'yaml' is not one of text, markdown, json"),
            "{e}"
        );
        let e = load("[models.mine]\nwindow = 10\ntoken = 1\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains(":3: unknown key 'models.mine.token'"), "{e}");
    }

    #[test]
    fn list_keys_read_arrays_and_comma_separated_text() {
        const LIST: Key = key("env.allow", Kind::List, "PATH, HOME", None, "test");
        let list = |v: &[&str]| Value::List(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(parse_default(&LIST), list(&["PATH", "HOME"]));
        assert_eq!(parse_text(&LIST, "A,,B ", None), Ok(list(&["A", "B"])));
        let table = toml::de::DeTable::parse("x = [\"A\", 1]\ny = [\"A\", \"B\"]\nz = \"A\"\n")
            .unwrap()
            .into_inner();
        let get = |k: &str| {
            let v = table.iter().find(|(n, _)| n.get_ref() == k).unwrap().1;
            value_from_toml(&LIST, v.get_ref(), Path::new("/"))
        };
        assert_eq!(get("y"), Ok(list(&["A", "B"])));
        assert!(get("x").unwrap_err().contains("array holding integer"));
        assert!(
            get("z")
                .unwrap_err()
                .contains("expected an array of strings")
        );
        let mut c = load("", &[]).unwrap();
        c.values
            .insert("env.allow", (list(&["X"]), Source::Default));
        assert_eq!(c.list("env.allow"), ["X"]);
    }

    #[test]
    fn models_table_and_private_env() {
        let c = load(
            "[models.my-llm]\nwindow = 32768\ntokenizer = \"cl100k\"\nbudget_share = 0.5\n",
            &[("OMNISH_RECORD_PRIVATE", "1")],
        )
        .unwrap();
        let m = c.user_model("My-LLM").unwrap();
        assert_eq!((m.window, m.default_budget()), (32768, 16384));
        assert!(!c.bool("record.private_leading_space"));
    }

    fn load_lenient(file: &[u8], env: &[(&str, &str)]) -> (Config, Vec<Problem>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, file).unwrap();
        let path = path.to_string_lossy().into_owned();
        let lookup = |name: &str| {
            if name == "OMNISH_CONFIG" {
                return Some(path.clone());
            }
            env.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        Config::load_all(&lookup)
    }

    #[test]
    fn a_lenient_load_ignores_each_bad_value_and_says_what_it_used_instead() {
        let file = b"[context]\nrecent = \"ten\"\nmax_lines = 7\n[record]\nmax_frame_size = 65536\n[ask]\nshell = true\n";
        let (c, problems) = load_lenient(
            file,
            &[
                ("OMNISH_CONTEXT_MAX_LINES", "lots"),
                ("OMNISH_CONTEXT_FORMAT", "xml"),
            ],
        );
        let lines: Vec<String> = problems.iter().map(Problem::warning).collect();
        assert_eq!(lines.len(), 4, "{lines:#?}");
        assert!(
            lines[0].ends_with(":2: key 'context.recent': expected a non-negative integer, found string; using the default 10"),
            "{lines:#?}"
        );
        assert!(
            lines[1].ends_with(":5: unknown key 'record.max_frame_size'; ignored"),
            "{lines:#?}"
        );
        assert!(lines[2].ends_with("using 7 (file, line 3)"), "{lines:#?}");
        assert!(
            lines[3].ends_with("using the default \"text\""),
            "{lines:#?}"
        );
        // Everything else is taken.
        assert_eq!(c.int("context.recent"), 10);
        assert_eq!(c.int("context.max_lines"), 7);
        assert!(c.bool("ask.shell"));
        assert_eq!(c.str("context.format"), "text");
        assert!(c.data_root().is_ok());
        // The strict load fails with the first of them, saying the known keys.
        let e = load(std::str::from_utf8(file).unwrap(), &[]).unwrap_err();
        assert_eq!(crate::error::exit_status(&e).0, 2);
        assert!(e.to_string().contains(":2: key 'context.recent'"), "{e}");
        // Too many problems: the first five, then a count.
        let many: String = (0..8).map(|i| format!("bad{i} = 1\n")).collect();
        let (_, problems) = load_lenient(many.as_bytes(), &[]);
        let lines = warning_lines(&problems);
        assert_eq!(lines.len(), 6, "{lines:#?}");
        assert!(
            lines[5].starts_with("omnish: 3 more problems"),
            "{lines:#?}"
        );
    }

    #[test]
    fn record_private_env_means_record_them_and_refuses_other_words() {
        for (raw, keep_private) in [
            ("1", false),
            ("true", false),
            ("YES", false),
            ("on", false),
            ("0", true),
            ("false", true),
            ("no", true),
            ("Off", true),
        ] {
            let c = load("", &[("OMNISH_RECORD_PRIVATE", raw)]).unwrap();
            assert_eq!(
                c.bool("record.private_leading_space"),
                keep_private,
                "{raw}"
            );
        }
        let e = load("", &[("OMNISH_RECORD_PRIVATE", "2")])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "environment variable OMNISH_RECORD_PRIVATE: expected 1, true, yes or on"
            ),
            "{e}"
        );
        // Leniently: private commands stay private, even where the file said to record them.
        let (c, problems) = load_lenient(
            b"[record]\nprivate_leading_space = false\n",
            &[("OMNISH_RECORD_PRIVATE", "please")],
        );
        assert!(c.bool("record.private_leading_space"));
        assert!(
            problems[0]
                .warning()
                .ends_with("; private commands stay private")
        );
    }

    #[test]
    fn checked_keys_refuse_bad_values_at_load_with_their_line() {
        let cases = [
            (
                "[env]\nallow = [\"PATH\", \"a[\"]\n",
                ":2: key 'env.allow': invalid glob pattern 'a['",
            ),
            (
                "[sessions]\n\nmax_size = \"2 lots\"\n",
                ":3: key 'sessions.max_size': invalid size '2 lots'",
            ),
            (
                "[keys]\nfix = \"\"\n",
                ":2: key 'keys.fix': '' is not a key in readline syntax",
            ),
            (
                "[ask]\nmodel = \"gpt-nope-1\"\n",
                ":2: key 'ask.model': unknown model 'gpt-nope-1'",
            ),
            (
                "[models.\"\"]\nwindow = 3\n",
                ":1: key 'models.': a model name is printable",
            ),
            (
                "[models.big]\nwindow = 1_000_000_001\n",
                ":2: key 'models.big.window': expected a positive integer of at most 1000000000",
            ),
            (
                "models = 3\n",
                ":1: key 'models': expected [models.NAME] tables, found integer",
            ),
        ];
        for (file, want) in cases {
            let e = load(file, &[]).unwrap_err();
            assert!(e.to_string().contains(want), "{file:?}: {e}");
            assert_eq!(crate::error::exit_status(&e).0, 2);
        }
        let e = load("", &[("OMNISH_ENV_DENY", "*_KEY,{")]).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "environment variable OMNISH_ENV_DENY: key 'env.deny': invalid glob pattern '{'"
            ),
            "{e}"
        );
        // A model of the file's own, even one whose table comes after the key.
        let c = load(
            "[ask]\nmodel = \"mine\"\n[models.mine]\nwindow = 100\n",
            &[],
        )
        .unwrap();
        assert_eq!(c.str("ask.model"), "mine");
        assert!(load("[ask]\nmodel = \"gpt-4o-2024-08-06\"\n", &[]).is_ok());
    }

    #[test]
    fn invalid_utf8_names_line_and_column() {
        let (_, problems) = load_lenient(b"[context]\nrecent = 3 # na\xefve\n", &[]);
        let w = problems[0].warning();
        assert!(
            w.contains("config.toml:2:16: invalid UTF-8 (byte 0xef); ignoring the file"),
            "{w}"
        );
    }

    #[test]
    fn the_store_is_unknown_only_when_the_file_may_set_it_and_the_environment_does_not() {
        let unknown = |file: &[u8], env: &[(&str, &str)]| {
            let (c, problems) = load_lenient(file, env);
            assert!(!problems.is_empty());
            c.data_root().is_err()
        };
        assert!(!unknown(b"[context\n", &[]));
        assert!(unknown(b"data_dir = '/x'\n[context\n", &[]));
        assert!(unknown(b"\xff data_dir", &[]));
        assert!(unknown(b"data_dir = 42\n", &[]));
        assert!(!unknown(
            b"data_dir = 42\n",
            &[("OMNISH_DATA_DIR", "/tmp/s")]
        ));
        assert!(unknown(b"", &[("OMNISH_DATA_DIR", "/tmp/\u{fffd}")]));
        let (c, _) = load_lenient(b"data_dir = 42\n", &[("OMNISH_DATA_DIR", "/tmp/s")]);
        assert_eq!(c.data_root().unwrap(), PathBuf::from("/tmp/s"));
    }

    #[test]
    fn files_that_are_not_regular_or_too_large_are_one_problem_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; MAX_FILE_BYTES as usize + 1]).unwrap();
        let just = dir.path().join("just.toml");
        let mut text = vec![b'#'; MAX_FILE_BYTES as usize - 1];
        text.push(b'\n');
        std::fs::write(&just, text).unwrap();
        for (path, want) in [
            (fifo.as_path(), "is a FIFO, not a regular file"),
            (Path::new("/dev/zero"), "is a device, not a regular file"),
            (dir.path(), "is a directory, not a regular file"),
            (big.as_path(), "is larger than 1024 KiB"),
            (
                &dir.path().join("none.toml"),
                "named by OMNISH_CONFIG does not exist",
            ),
        ] {
            let p = path.display().to_string();
            let e = Config::load_with(&|n: &str| (n == "OMNISH_CONFIG").then(|| p.clone()))
                .unwrap_err();
            assert!(e.to_string().contains(want), "{p}: {e}");
            assert_eq!(crate::error::exit_status(&e).0, 2);
        }
        for ok in [just.as_path(), Path::new("/dev/null")] {
            let p = ok.display().to_string();
            let c = Config::load_with(&|n: &str| (n == "OMNISH_CONFIG").then(|| p.clone()));
            assert!(c.is_ok_and(|c| c.file_exists), "{p}");
        }
        // Leniently, a missing file sets nothing: the store is the default one.
        let p = dir.path().join("none.toml").display().to_string();
        let (c, problems) = Config::load_all(&|n: &str| (n == "OMNISH_CONFIG").then(|| p.clone()));
        assert_eq!(problems.len(), 1);
        assert!(c.data_root().is_ok());
    }

    proptest::proptest! {
        #[test]
        fn line_numbers_match_counting_newlines(text in "[a\n]{0,200}", at in 0usize..220) {
            let at = at.min(text.len());
            let lines = Lines::new(text.as_bytes());
            proptest::prop_assert_eq!(lines.at(at), text[..at].matches('\n').count() + 1);
        }

        #[test]
        fn any_file_and_environment_keep_the_loaders_promises(
            file in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            toml_like in "(\\[[a-z.]{0,12}\\]\n|[a-z_.]{1,12} = (\"[^\"\n]{0,8}\"|[0-9-]{1,4}|true|\\[\"[a-z*\\[{]{0,4}\"\\])\n|#.{0,5}\n){0,8}",
            recent in "[0-9a-z -]{0,4}",
            private in "[0-9a-zA-Z]{0,5}",
        ) {
            let env = vec![
                ("OMNISH_CONTEXT_RECENT".to_string(), recent),
                ("OMNISH_RECORD_PRIVATE".to_string(), private),
            ];
            fuzz_check(&file, &env);
            fuzz_check(toml_like.as_bytes(), &env);
        }
    }
}
