//! The configuration: `config.toml` + environment + flags, with where each value came from.
//!
//! Every key is one line of [`KEYS`]: its dotted name, kind, default, environment variable and
//! documentation. Adding a key is adding a line there (and reading it where it is used with
//! [`Config::str`], [`Config::int`] or [`Config::bool`]); the file parser, `omnish config`, the
//! environment and the flag layer all follow the table.
//!
//! Precedence: flags > environment > file > defaults. The file is `$OMNISH_CONFIG`, else
//! `config.toml` in the platform config dir (`~/.config/omnish/config.toml`); a missing file is
//! an empty one. A bad file (bad TOML, an unknown key, a value of the wrong type or out of range)
//! is one error naming the file, the line and the key: never a panic, never a silent default.
//!
//! Besides the flat keys, `[models.NAME]` tables add model profiles (`window`, `tokenizer`,
//! optional `budget_share`) that `--model` and `ask.model` accept before the built-in ones.

use crate::error::ExitError;
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

/// How an environment variable maps onto a key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EnvMap {
    /// The variable's value is the key's value (parsed per [`Kind`]); empty means unset.
    Plain,
    /// For a bool key: the variable set to `1` means `false`, any other value `true`
    /// (`OMNISH_RECORD_PRIVATE=1` turns `record.private_leading_space` off).
    OneMeansFalse,
}

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
        doc,
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
    ),
    key(
        "keys.fix",
        Kind::Str,
        r"\C-xf",
        Some("OMNISH_KEYS_FIX"),
        "key that puts `omnish fix`'s command on the prompt line (readline syntax), used by `omnish init`",
    ),
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
        crate::context::env::DEFAULT_ALLOW,
        Some("OMNISH_ENV_ALLOW"),
        "environment variables `context --env` shows: glob patterns, case-insensitive",
    ),
    key(
        "env.deny",
        Kind::List,
        crate::context::env::DEFAULT_DENY,
        Some("OMNISH_ENV_DENY"),
        "environment variables `context --env` never shows, even when allowed: glob patterns",
    ),
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
    ),
    key(
        "data_dir",
        Kind::Path,
        "",
        Some("OMNISH_DATA_DIR"),
        "where sessions are stored; empty: the platform data dir (~/.local/share/omnish)",
    ),
    Key {
        name: "record.private_leading_space",
        kind: Kind::Bool,
        default: "true",
        env: Some(("OMNISH_RECORD_PRIVATE", EnvMap::OneMeansFalse)),
        doc: "a command the shell keeps out of history (leading space with ignorespace/HIST_IGNORE_SPACE, HISTIGNORE, set +o history, a refusing zshaddhistory) is private: only its times and status are recorded (OMNISH_RECORD_PRIVATE=1 sets false)",
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

/// The effective configuration.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// The file read (or that would be read: it may not exist).
    pub path: Option<PathBuf>,
    pub file_exists: bool,
    values: BTreeMap<&'static str, (Value, Source)>,
    pub models: Vec<UserModel>,
}

/// The environment as the config sees it (a function, so tests need not touch the process's).
pub(crate) type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
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
    ExitError::usage(msg).into()
}

impl Config {
    /// The configuration of this process: its file and environment, no flags yet.
    pub fn load() -> Result<Config> {
        Config::load_with(&process_env)
    }

    /// The configuration from the file named by `env` and `env` itself.
    pub fn load_with(env: Env) -> Result<Config> {
        let path = config_path(env);
        let text = match &path {
            Some(p) => match std::fs::read_to_string(p) {
                Ok(t) => Some(t),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("cannot read the config file {}", p.display()));
                }
            },
            None => None,
        };
        let mut cfg = Config {
            file_exists: text.is_some(),
            path: path.clone(),
            values: KEYS
                .iter()
                .map(|k| {
                    let v = parse_default(k);
                    (k.name, (v, Source::Default))
                })
                .collect(),
            models: Vec::new(),
        };
        if let (Some(text), Some(path)) = (text, &path) {
            cfg.apply_file(&text, path)?;
        }
        cfg.apply_env(env)?;
        Ok(cfg)
    }

    fn apply_file(&mut self, text: &str, path: &Path) -> Result<()> {
        let file = path.display().to_string();
        let line_at = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let table = match toml::de::DeTable::parse(text) {
            Ok(t) => t.into_inner(),
            Err(e) => {
                let line = e.span().map(|s| line_at(s.start)).unwrap_or(1);
                let msg = e.message().trim().replace('\n', " ");
                return Err(bad(format!("{file}:{line}: invalid TOML: {msg}")));
            }
        };
        let dir = path.parent().unwrap_or(Path::new("/"));
        for (k, v) in &table {
            let name: &str = k.get_ref();
            let line = line_at(k.span().start);
            match v.get_ref() {
                toml::de::DeValue::Table(section) if name == "models" => {
                    for (mk, mv) in section {
                        let mline = line_at(mk.span().start);
                        let model = parse_model(mk.get_ref(), mv.get_ref(), mline, &line_at)
                            .map_err(|e| bad(format!("{file}:{e}")))?;
                        self.models.push(model);
                    }
                }
                toml::de::DeValue::Table(section) => {
                    for (sk, sv) in section {
                        let full = format!("{name}.{}", sk.get_ref());
                        let sline = line_at(sk.span().start);
                        self.set_from_file(&full, sv.get_ref(), sline, dir)
                            .map_err(|e| bad(format!("{file}:{sline}: {e}")))?;
                    }
                }
                value => {
                    self.set_from_file(name, value, line, dir)
                        .map_err(|e| bad(format!("{file}:{line}: {e}")))?;
                }
            }
        }
        Ok(())
    }

    fn set_from_file(
        &mut self,
        name: &str,
        value: &toml::de::DeValue,
        line: usize,
        dir: &Path,
    ) -> std::result::Result<(), String> {
        let Some(key) = find_key(name) else {
            return Err(format!(
                "unknown key '{name}'; known keys: {}, models.NAME",
                KEYS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
            ));
        };
        let v = value_from_toml(key, value, dir)?;
        self.values.insert(key.name, (v, Source::File(line)));
        Ok(())
    }

    fn apply_env(&mut self, env: Env) -> Result<()> {
        for key in KEYS {
            let Some((var, map)) = key.env else { continue };
            let Some(raw) = env(var).filter(|v| !v.is_empty()) else {
                continue;
            };
            let value = match map {
                EnvMap::OneMeansFalse => Value::Bool(raw != "1"),
                EnvMap::Plain => parse_text(key, &raw, None)
                    .map_err(|e| bad(format!("environment variable {var}: {e}")))?,
            };
            self.values.insert(key.name, (value, Source::Env(var)));
        }
        Ok(())
    }

    /// Sets `name` from a flag (the flag's spelling for `omnish config` to show). Values are
    /// checked as the file's are.
    pub fn set_flag(&mut self, name: &str, value: Value, flag: &str) {
        if let Some(key) = find_key(name) {
            self.values
                .insert(key.name, (value, Source::Flag(flag.into())));
        }
    }

    /// Sets `name=text` as a flag would (`omnish config --set`).
    pub fn set_text(&mut self, name: &str, text: &str, flag: &str) -> Result<()> {
        let key = find_key(name).ok_or_else(|| {
            bad(format!(
                "{flag}: unknown key '{name}'; known keys: {}",
                KEYS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
            ))
        })?;
        let cwd = std::env::current_dir().ok();
        let v = parse_text(key, text, cwd.as_deref()).map_err(|e| bad(format!("{flag}: {e}")))?;
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

    #[cfg(test)]
    pub fn source(&self, name: &str) -> &Source {
        &self.get(name).1
    }

    /// The automatic and default prune limits (`sessions.keep`, `sessions.max_size`).
    pub fn prune_settings(&self) -> Result<crate::store::prune::PruneSettings> {
        let size = self.str("sessions.max_size");
        let max_size = crate::store::prune::parse_size(size)
            .map_err(|e| crate::error::ExitError::usage(format!("sessions.max_size: {e}")))?;
        Ok(crate::store::prune::PruneSettings {
            keep: self.int("sessions.keep"),
            max_size,
        })
    }

    /// The store's root: `data_dir` (absolute), else the platform data dir.
    pub fn data_root(&self) -> Result<PathBuf> {
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
            "key '{name}': '{s}' is not one of {}",
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
                "key '{}': expected {}, found '{raw}'",
                key.name,
                kind_name(key.kind)
            )
        }),
        Kind::Bool => match raw.trim() {
            "1" | "true" | "yes" | "on" => Ok(Value::Bool(true)),
            "0" | "false" | "no" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!(
                "key '{}': expected true or false (1/0), found '{raw}'",
                key.name
            )),
        },
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

fn parse_model(
    name: &str,
    value: &toml::de::DeValue,
    line: usize,
    line_at: &dyn Fn(usize) -> usize,
) -> std::result::Result<UserModel, String> {
    use toml::de::DeValue;
    let DeValue::Table(t) = value else {
        return Err(format!(
            "{line}: key 'models.{name}': expected a table {{ window = N, tokenizer = \"o200k\" }}, found {}",
            value.type_str()
        ));
    };
    let mut window = None;
    let mut tokenizer = None;
    let mut share = 0.25;
    for (k, v) in t {
        let l = line_at(k.span().start);
        let field: &str = k.get_ref();
        let full = format!("models.{name}.{field}");
        match (field, v.get_ref()) {
            ("window", DeValue::Integer(i)) => {
                window = Some(
                    parse_int(i.as_str(), i.radix())
                        .filter(|n| *n > 0)
                        .ok_or_else(|| format!("{l}: key '{full}': expected a positive integer"))?
                        as usize,
                );
            }
            ("tokenizer", DeValue::String(s)) => {
                if !crate::context::tokenizer::TOKENIZERS.contains(&s.as_ref()) {
                    return Err(format!(
                        "{l}: key '{full}': unknown tokenizer '{s}'; known: {}",
                        crate::context::tokenizer::TOKENIZERS.join(", ")
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
    let window = window.ok_or_else(|| format!("{line}: key 'models.{name}': missing window"))?;
    Ok(UserModel {
        name: name.to_string(),
        window,
        tokenizer: tokenizer.unwrap_or_else(|| "o200k".into()),
        budget_share: share,
        line,
    })
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
}
