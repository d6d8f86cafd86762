//! The one way in: what a front end asks for ([`Options`], plain values, no flags), where it
//! runs ([`Facts`], gathered once per process by the front end) and what the user configured
//! ([`Settings`], the configuration's values) become one [`Request`] for the pipeline
//! ([`Options::build`]).
//!
//! Every value a person or an agent gives is parsed and checked here, once, for every front end:
//! durations ([`duration`], [`since`]), regular expressions (bounded, [`pattern`]), directories
//! ([`within`]), sessions ([`session`]), models, tokenizers and budgets ([`budget`]). Errors are
//! [`Error::Usage`] naming the [`Field`] they are about and no flag: the command line says
//! `--since: ...`, the MCP server `argument `since`: ...`.
//!
//! What is particular to one front end stays there: the MCP server's default budget and how it
//! picks the session an agent means, `ask`'s last failed command.

use regex::Regex;
use std::path::{Path, PathBuf};

use crate::context::model::Parts;
use crate::context::sources::{env, files, notes};
use crate::context::stages::format::Format;
use crate::context::stages::{loops, select, select::SessionChoice};
use crate::context::support::pattern as bounded;
use crate::context::tokens::{models, tokenizer};
use crate::error::{Error, Field, Result, Usage};
use crate::store;

/// Output lines per command at least, when whole screens of full-screen programs are asked for
/// and no line limit is.
pub(crate) const SCREENS_MAX_LINES: usize = 200;
/// Longest duration accepted (`90s`, `2h 30m`), in bytes.
pub(crate) const MAX_DURATION: usize = 64;
/// Longest session argument looked up (session ids are about 30 chars).
pub(crate) const MAX_SESSION: usize = 128;
/// Longest directory accepted, in bytes (PATH_MAX is 4096).
pub(crate) const MAX_DIR: usize = 4096;
/// Longest host or user name accepted, in bytes (a DNS name has at most 253 chars, a
/// container name or login rarely more than 64).
pub(crate) const MAX_NAME: usize = 255;

/// A token ceiling and the tokenizer that counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Budget {
    pub tokens: usize,
    /// One of [`tokenizer::TOKENIZERS`].
    pub tokenizer: String,
    /// Where it came from ([`Field::Budget`], or [`Field::Model`] for a profile's) and whether
    /// from the settings: an error about it (below the smallest document) names that.
    pub source: (Field, bool),
}

/// Everything the pipeline needs, resolved ([`Options::build`]).
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// The store's root (`$OMNISH_DATA_DIR`), absolute.
    pub data_root: PathBuf,
    /// The session the asker runs in (`OMNISH_SESSION_ID`), if any.
    pub current_session: Option<String>,
    /// Which sessions, and which of their commands.
    pub selection: Selection,
    /// At most this many commands, the newest (≥ 1).
    pub limit: usize,
    pub parts: Parts,
    /// Output lines per command (0 = all).
    pub max_lines: usize,
    /// Chars per output line (0 = no limit).
    pub max_line_width: usize,
    pub redact: bool,
    pub budget: Option<Budget>,
    pub format: Format,
    /// Show pinned notes (`None`: left out).
    pub notes: Option<notes::NotesScope>,
    /// Describe this environment.
    pub env: Option<env::EnvSource>,
    /// List the project's files.
    pub files: Option<files::FilesRequest>,
    /// How runs of failed attempts are folded.
    pub loops: loops::LoopSettings,
    /// What full-screen programs show of their last screen.
    pub screens: crate::term::render::Screens,
}

impl Request {
    /// The sessions this request reads, the current one last (see [`select::sessions`]).
    pub(crate) fn sessions(
        &self,
        warnings: &mut Vec<String>,
    ) -> anyhow::Result<Vec<select::Session>> {
        select::sessions(
            &self.data_root,
            &self.selection.sessions,
            self.current_session.as_deref(),
            warnings,
        )
    }
}

/// Where a front end runs, gathered once per process (the command line's `Setup`, the MCP
/// server's start): nothing in the library reads the environment itself.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    /// The store's root, absolute.
    pub data_root: PathBuf,
    /// The recorded session this runs in (`OMNISH_SESSION_ID`, when it is a session id).
    pub current_session: Option<String>,
    /// The working directory (`None`: it cannot be read, deleted under the process).
    pub cwd: Option<PathBuf>,
    /// The git work tree holding `cwd`, if any.
    pub git_root: Option<PathBuf>,
    /// The local time's offset from UTC, in seconds.
    pub utc_offset_secs: i64,
    /// The environment's variables (for an environment snapshot).
    pub vars: Vec<(String, String)>,
    /// The terminal's columns and rows, when known.
    pub terminal: Option<(u16, u16)>,
}

impl Facts {
    /// Facts for a process that knows only its store and directory (tests, the fuzz target).
    pub(crate) fn at(data_root: PathBuf, cwd: PathBuf) -> Facts {
        Facts {
            data_root,
            current_session: None,
            git_root: select::git_root(&cwd),
            cwd: Some(cwd),
            utc_offset_secs: 0,
            vars: Vec::new(),
            terminal: None,
        }
    }

    /// The project: the git work tree holding the working directory, else that directory.
    pub(crate) fn project(&self) -> Option<&Path> {
        self.git_root.as_deref().or(self.cwd.as_deref())
    }

    /// The working directory, or the usage error saying it cannot be read.
    fn cwd_or(&self, what: &str) -> Result<&Path> {
        self.cwd.as_deref().ok_or_else(|| {
            Error::usage(format!(
                "{what} needs the current directory, which cannot be read (was it removed?)"
            ))
        })
    }
}

/// A model profile added by the user (the configuration's `[models.NAME]`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UserModel {
    pub name: String,
    /// The budget it gives when none is asked for.
    pub budget: usize,
    pub tokenizer: String,
}

/// What the user configured, as the pipeline uses it: the defaults of every option, and the
/// settings no option overrides. [`Settings::default`] is the built-in configuration.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Commands shown when the request does not say (`context.recent`).
    pub recent: usize,
    /// Output lines per command (`context.max_lines`, 0 = all).
    pub max_lines: usize,
    /// Chars per output line (`context.max_line_width`, 0 = unlimited).
    pub max_line_width: usize,
    pub format: Format,
    /// Redact secrets (`context.redact`).
    pub redact: bool,
    /// Failed attempts in a row folded into one loop (`loops.threshold`, 0 = never).
    pub loop_threshold: usize,
    pub env: env::EnvSettings,
    pub files: files::FilesSettings,
    /// Models of the user's own, looked up before the built-in profiles.
    pub models: Vec<UserModel>,
}

impl Default for Settings {
    fn default() -> Self {
        let list = |s: &str| s.split(',').map(|p| p.trim().to_string()).collect();
        Settings {
            recent: 10,
            max_lines: 20,
            max_line_width: 500,
            format: Format::Text,
            redact: true,
            loop_threshold: loops::DEFAULT_THRESHOLD,
            env: env::EnvSettings {
                allow: list(env::DEFAULT_ALLOW),
                deny: list(env::DEFAULT_DENY),
            },
            files: files::FilesSettings::default(),
            models: Vec::new(),
        }
    }
}

impl Settings {
    /// How loops are folded here: the configured threshold, times in the local zone.
    pub(crate) fn loops(&self, facts: &Facts) -> loops::LoopSettings {
        loops::LoopSettings {
            threshold: self.loop_threshold,
            utc_offset_secs: facts.utc_offset_secs,
        }
    }

    /// A user model by name (case-insensitive, surrounding blanks ignored).
    fn user_model(&self, name: &str) -> Option<&UserModel> {
        let lower = name.trim().to_lowercase();
        self.models.iter().find(|m| m.name.to_lowercase() == lower)
    }
}

/// Which commands: what every query over recorded commands can ask.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filters {
    /// Only commands with a non-zero exit status.
    pub failed: bool,
    /// Only commands whose line or output matches this regular expression.
    pub grep: Option<String>,
    /// Only commands run in this directory or below (relative: to the working directory).
    pub cwd: Option<PathBuf>,
    /// Only commands run in the project (the git work tree, else the working directory).
    pub here: bool,
    /// Only commands started within this duration (`90s`, `15m`, `2h`, `1d`).
    pub since: Option<String>,
    /// `current`, `all`, or a session id (a unique prefix, or of its random suffix); `None`:
    /// the front end's default.
    pub session: Option<String>,
    /// Only commands that ran on this host (exactly; a command of a nested shell on another
    /// host or in a container has that host, the others the session's).
    pub host: Option<String>,
    /// Only commands that ran as this user (exactly; the record's user, else the session's).
    pub user: Option<String>,
    /// Only these commands, by id (`<session>:<seq>`, as `omnish pick` prints them; the
    /// session may be a unique prefix): they say which sessions are read, whatever `session`
    /// says.
    pub ids: Vec<String>,
    /// Whose commands: `user`, `agents`, an author's name or `all` (`None`: all).
    pub author: Option<String>,
}

/// Most command ids one request names.
pub(crate) const MAX_IDS: usize = 1000;

/// [`Filters`], parsed and checked.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    pub sessions: SessionChoice,
    /// Only commands with a non-zero exit status.
    pub failed: bool,
    /// Only commands whose command line or rendered output matches.
    pub grep: Option<Regex>,
    /// Only commands run in this directory or below it.
    pub within: Option<PathBuf>,
    /// Only commands started at or after this time (ms since the epoch).
    pub since_ms: Option<u64>,
    /// Only commands that ran on this host (the record's, else the session's).
    pub host: Option<String>,
    /// Only commands that ran as this user (the record's, else the session's).
    pub user: Option<String>,
    /// Only the commands of one nested shell (set by a front end, not by a filter: `ask` and
    /// `fix` run inside a nested shell keep to it).
    pub shell: Option<select::InShell>,
    /// Only these commands: (session id or unique prefix, seq).
    pub ids: Option<Vec<(String, u64)>>,
    /// Only the commands of these authors (`None`: all).
    pub author: Option<select::AuthorChoice>,
}

impl Selection {
    /// The conditions that read no output.
    pub(crate) fn cheap(&self) -> select::Cheap<'_> {
        select::Cheap {
            failed: self.failed,
            within: self.within.as_deref(),
            since_ms: self.since_ms,
            host: self.host.as_deref(),
            user: self.user.as_deref(),
            shell: self.shell.as_ref(),
            author: self.author.as_ref(),
        }
    }
}

impl Filters {
    /// The selection these filters make at `now` (ms); `default` is the session read when
    /// `session` is not given.
    pub(crate) fn resolve(
        &self,
        facts: &Facts,
        now: u64,
        default: SessionChoice,
    ) -> Result<Selection> {
        let ids = match self.ids.is_empty() {
            true => None,
            false => Some(command_ids(&self.ids)?),
        };
        Ok(Selection {
            sessions: match (&ids, &self.session) {
                // The ids name their sessions: one, or several.
                (Some(ids), _) => match ids.split_first() {
                    Some(((first, _), rest)) if rest.iter().all(|(s, _)| s == first) => {
                        session(first)?
                    }
                    _ => SessionChoice::All,
                },
                (None, Some(s)) => session(s)?,
                (None, None) => default,
            },
            failed: self.failed,
            grep: self
                .grep
                .as_deref()
                .map(|p| pattern(Field::Grep, p))
                .transpose()?,
            within: within(self.cwd.as_deref(), self.here, facts)?,
            since_ms: self.since.as_deref().map(|s| since(s, now)).transpose()?,
            host: self
                .host
                .as_deref()
                .map(|h| name(Field::Host, h))
                .transpose()?,
            user: self
                .user
                .as_deref()
                .map(|u| name(Field::User, u))
                .transpose()?,
            shell: None,
            ids,
            author: self.author.as_deref().map(author).transpose()?.flatten(),
        })
    }
}

/// What a front end can ask of the context pipeline. `None` (and `false`) take the
/// [`Settings`]' value.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub filters: Filters,
    /// The N most recent matching commands.
    pub recent: Option<usize>,
    /// Only the most recent matching command.
    pub last: bool,
    pub parts: Parts,
    pub max_lines: Option<usize>,
    pub max_line_width: Option<usize>,
    /// A token ceiling for the whole document.
    pub budget: Option<usize>,
    /// A model profile giving budget and tokenizer.
    pub model: Option<String>,
    /// The model profile used when `model` is absent, from the configuration (`ask.model`):
    /// an error about it names the setting.
    pub default_model: Option<String>,
    /// The tokenizer counting the budget.
    pub tokenizer: Option<String>,
    pub format: Option<Format>,
    /// `Some(false)`: keep secrets, whatever the settings say.
    pub redact: Option<bool>,
    /// Leave the pinned notes out.
    pub no_notes: bool,
    /// Add an environment snapshot.
    pub env: bool,
    /// Add the project's file tree, expanded `depth` levels.
    pub files: bool,
    pub depth: Option<usize>,
    /// Add the project's files changed since the selected commands started.
    pub changed: bool,
    /// Show full-screen programs' whole last screens (else their first and last rows); the
    /// line limit left to the settings is then at least [`SCREENS_MAX_LINES`].
    pub screens: bool,
}

impl Options {
    /// The request these options make, where `facts` say this runs, with `settings` for what
    /// they leave out. The session is the current one unless the filters say.
    pub(crate) fn build(&self, facts: &Facts, settings: &Settings) -> Result<Request> {
        let now = store::now_ms();
        let selection = self.filters.resolve(facts, now, SessionChoice::Current)?;
        let recent = self.recent.unwrap_or(settings.recent);
        if recent == 0 && !self.last {
            return Err(Error::Usage(Usage {
                field: Some(Field::Recent),
                from_settings: self.recent.is_none(),
                message: "0 selects nothing; give at least 1 (or leave it out for 10)".into(),
            }));
        }
        if self.depth == Some(0) {
            return Err(Error::bad(Field::Depth, "0 shows nothing; give at least 1"));
        }
        let env = if self.env {
            let cwd = facts.cwd_or("the environment snapshot")?.to_path_buf();
            let meta = facts
                .current_session
                .as_deref()
                .and_then(|id| store::session_dir(&facts.data_root, id))
                .and_then(|dir| store::read_meta(&dir).ok());
            Some(env::EnvSource {
                vars: facts.vars.clone(),
                cwd,
                terminal: facts.terminal.or(meta.as_ref().map(|m| (m.cols, m.rows))),
                shell: meta.map(|m| m.shell).filter(|s| !s.is_empty()),
                settings: settings.env.clone(),
            })
        } else {
            None
        };
        let files = if self.files || self.changed {
            facts.cwd_or("the file list")?;
            Some(files::FilesRequest {
                root: facts.project().unwrap_or(Path::new("/")).to_path_buf(),
                tree: self.files,
                depth: self.depth,
                changed: self.changed,
                settings: settings.files,
            })
        } else {
            None
        };
        let limit = match &selection.ids {
            Some(ids) => ids.len(),
            None if self.last => 1,
            None => recent,
        };
        Ok(Request {
            data_root: facts.data_root.clone(),
            current_session: facts.current_session.clone(),
            selection,
            limit,
            parts: self.parts,
            max_lines: match (self.max_lines, settings.max_lines) {
                (Some(n), _) => n,
                // Whole screens asked for: the configured line limit, raised to show them.
                (None, n) if self.screens && n != 0 => n.max(SCREENS_MAX_LINES),
                (None, n) => n,
            },
            max_line_width: self.max_line_width.unwrap_or(settings.max_line_width),
            redact: self.redact.unwrap_or(true) && settings.redact,
            budget: budget(
                self.budget,
                self.model.as_deref(),
                self.default_model.as_deref(),
                self.tokenizer.as_deref(),
                settings,
            )?,
            format: self.format.unwrap_or(settings.format),
            notes: (!self.no_notes).then(|| notes::NotesScope {
                project: facts.project().map(Path::to_path_buf),
            }),
            env,
            files,
            loops: settings.loops(facts),
            screens: if self.screens {
                crate::term::render::Screens::Full
            } else {
                crate::term::render::Screens::Brief
            },
        })
    }

    /// Whether any option that picks commands was given (`ask` and `fix` pick the last failed
    /// command otherwise). The host and user do not pick: they say where that last failed
    /// command is looked for (`ask --user root`: the last one that failed as root).
    pub(crate) fn selects(&self) -> bool {
        let f = &self.filters;
        self.recent.is_some()
            || self.last
            || f.failed
            || f.grep.is_some()
            || f.cwd.is_some()
            || f.here
            || f.since.is_some()
            || !f.ids.is_empty()
    }
}

/// Command ids (`<session>:<seq>`), checked: each names a session (an id or a unique prefix of
/// one) and a command number.
pub(crate) fn command_ids(ids: &[String]) -> Result<Vec<(String, u64)>> {
    if ids.len() > MAX_IDS {
        return Err(Error::bad(
            Field::Id,
            format!("{} ids given; at most {MAX_IDS} at once", ids.len()),
        ));
    }
    let mut out: Vec<(String, u64)> = Vec::with_capacity(ids.len());
    for id in ids {
        let parsed = id
            .trim()
            .rsplit_once(':')
            .filter(|(s, _)| !s.is_empty() && s.len() <= MAX_SESSION && *s != "all")
            .and_then(|(s, n)| Some((s.to_string(), n.parse::<u64>().ok()?)));
        match parsed {
            Some(p) if !out.contains(&p) => out.push(p),
            Some(_) => {}
            None => {
                return Err(Error::bad(
                    Field::Id,
                    format!(
                        "{} is no command id; give SESSION:NUMBER, as `omnish pick` prints them",
                        bounded::quote(id)
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// A host or user name to match exactly: not empty, at most [`MAX_NAME`] bytes.
/// An author choice: `all` (`None`), `user`, `agents`, or an author's name (`claude-code`, an
/// `omnish exec --label`).
pub(crate) fn author(s: &str) -> Result<Option<select::AuthorChoice>> {
    Ok(match s.trim() {
        "all" => None,
        "user" => Some(select::AuthorChoice::User),
        "agents" | "agent" => Some(select::AuthorChoice::Agents),
        other => {
            if other.is_empty() {
                return Err(Error::bad(
                    Field::Author,
                    "an empty author matches nothing; give user, agents, all or an author's name",
                ));
            }
            Some(select::AuthorChoice::Name(name(Field::Author, other)?))
        }
    })
}

pub(crate) fn name(field: Field, s: &str) -> Result<String> {
    if s.is_empty() {
        return Err(Error::bad(field, "an empty name matches nothing; give one"));
    }
    if s.len() > MAX_NAME {
        return Err(Error::bad(
            field,
            format!(
                "{} is longer than {MAX_NAME} bytes: no host, user or author has such a name",
                bounded::quote(s)
            ),
        ));
    }
    Ok(s.to_string())
}

/// A duration (`90s`, `15m`, `2h`, `1d`, `2w`) in ms; `field` says what it is for.
pub(crate) fn duration(field: Field, s: &str) -> Result<u64> {
    if s.len() > MAX_DURATION {
        return Err(Error::bad(
            field,
            format!(
                "invalid duration {}: longer than {MAX_DURATION} bytes; use forms like 90s, 15m, 2h, 1d",
                bounded::quote(s)
            ),
        ));
    }
    select::parse_duration(s).map_err(|e| Error::bad(field, e.to_string()))
}

/// The time (ms since the epoch) `s` back from `now`.
pub(crate) fn since(s: &str, now: u64) -> Result<u64> {
    Ok(now.saturating_sub(duration(Field::Since, s)?))
}

/// A regular expression given by a person or an agent, compiled within bounds.
pub(crate) fn pattern(field: Field, p: &str) -> Result<Regex> {
    bounded::regex(p).map_err(|e| Error::bad(field, e))
}

/// `current`, `all`, or an id (a unique prefix of one, or of its random suffix).
pub(crate) fn session(s: &str) -> Result<SessionChoice> {
    if s.len() > MAX_SESSION {
        return Err(Error::bad(
            Field::Session,
            format!(
                "{} is no session id (ids are about 30 chars); give an id, a unique prefix of one, 'current' or 'all'",
                bounded::quote(s)
            ),
        ));
    }
    Ok(match s {
        "current" | "" => SessionChoice::Current,
        "all" => SessionChoice::All,
        id => SessionChoice::Id(id.to_string()),
    })
}

/// The directory commands must have run in: `dir` (relative to the working directory), or
/// with `here` the project; `None` for neither.
pub(crate) fn within(dir: Option<&Path>, here: bool, facts: &Facts) -> Result<Option<PathBuf>> {
    match (dir, here) {
        (Some(_), true) => Err(Error::bad(
            Field::Cwd,
            "give a directory or the project (here), not both",
        )),
        (Some(dir), false) => {
            if dir.as_os_str().len() > MAX_DIR {
                return Err(Error::bad(
                    Field::Cwd,
                    format!("a directory of at most {MAX_DIR} bytes"),
                ));
            }
            if dir.is_absolute() {
                return Ok(Some(dir.to_path_buf()));
            }
            let cwd = facts.cwd_or("a relative directory")?;
            Ok(Some(
                std::path::absolute(cwd.join(dir)).unwrap_or_else(|_| cwd.join(dir)),
            ))
        }
        (None, true) => {
            facts.cwd_or("the project")?;
            Ok(facts.project().map(Path::to_path_buf))
        }
        (None, false) => Ok(None),
    }
}

/// The token ceiling and its tokenizer: `tokens` given, else the profile of `model` (else of
/// `default_model`, from the settings); the tokenizer given, else the profile's, else o200k.
/// Models the user added come before the built-in profiles. `None` without a budget.
pub(crate) fn budget(
    tokens: Option<usize>,
    model: Option<&str>,
    default_model: Option<&str>,
    tokenizer: Option<&str>,
    settings: &Settings,
) -> Result<Option<Budget>> {
    let (model, from_settings) = match (model, default_model) {
        (Some(m), _) => (Some(m), false),
        (None, Some(m)) if !m.is_empty() => (Some(m), true),
        _ => (None, false),
    };
    let profile: Option<(usize, String)> = match model {
        Some(name) => match settings.user_model(name) {
            Some(m) => Some((m.budget, m.tokenizer.clone())),
            None => {
                let p = models::resolve_model(name).map_err(|e| {
                    Error::Usage(Usage {
                        field: Some(Field::Model),
                        from_settings,
                        message: format!("{e}; or add it to the config file's [models] table"),
                    })
                })?;
                Some((p.default_budget(), p.tokenizer.to_string()))
            }
        },
        None => None,
    };
    let Some(limit) = tokens.or(profile.as_ref().map(|p| p.0)) else {
        if tokenizer.is_some() {
            return Err(Error::bad(
                Field::Tokenizer,
                "a tokenizer counts a budget: give a budget or a model too",
            ));
        }
        return Ok(None);
    };
    let name = tokenizer
        .map(str::to_string)
        .or(profile.map(|p| p.1))
        .unwrap_or_else(|| "o200k".to_string());
    if !tokenizer::TOKENIZERS.contains(&name.as_str()) {
        return Err(Error::bad(
            Field::Tokenizer,
            format!(
                "unknown tokenizer '{}'; known tokenizers: {}",
                crate::term::visible::line(&name),
                tokenizer::TOKENIZERS.join(", ")
            ),
        ));
    }
    Ok(Some(Budget {
        tokens: limit,
        tokenizer: name,
        source: match tokens {
            Some(_) => (Field::Budget, false),
            None => (Field::Model, from_settings),
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(cwd: &str) -> Facts {
        Facts::at(PathBuf::from("/store"), PathBuf::from(cwd))
    }

    fn usage(e: Error) -> Usage {
        e.as_usage()
            .cloned()
            .unwrap_or_else(|| panic!("not usage: {e}"))
    }

    #[test]
    fn options_take_the_settings_for_what_they_leave_out() {
        let settings = Settings {
            recent: 7,
            max_lines: 3,
            max_line_width: 40,
            format: Format::Markdown,
            redact: false,
            loop_threshold: 2,
            ..Settings::default()
        };
        let req = Options::default().build(&facts("/p"), &settings).unwrap();
        assert_eq!(req.limit, 7);
        assert_eq!((req.max_lines, req.max_line_width), (3, 40));
        assert_eq!(req.format, Format::Markdown);
        assert!(!req.redact);
        assert_eq!(req.loops.threshold, 2);
        assert_eq!(req.selection.sessions, SessionChoice::Current);
        let opts = Options {
            recent: Some(4),
            max_lines: Some(0),
            redact: Some(false),
            format: Some(Format::Json),
            ..Options::default()
        };
        let req = opts.build(&facts("/p"), &Settings::default()).unwrap();
        assert_eq!((req.limit, req.max_lines), (4, 0));
        assert!(!req.redact, "keeping secrets is asked for");
        assert_eq!(req.format, Format::Json);
        assert!(req.budget.is_none());
    }

    #[test]
    fn values_are_checked_once_and_errors_name_their_field() {
        let f = facts("/p");
        let s = Settings::default();
        let bad = |filters: Filters| {
            usage(
                Options {
                    filters,
                    ..Options::default()
                }
                .build(&f, &s)
                .unwrap_err(),
            )
        };
        let u = bad(Filters {
            since: Some("soon".into()),
            ..Filters::default()
        });
        assert_eq!(u.field, Some(Field::Since));
        assert!(
            u.message.starts_with("invalid duration 'soon'"),
            "{}",
            u.message
        );
        assert!(!u.message.contains("--"), "no flag named: {}", u.message);
        let u = bad(Filters {
            since: Some("1".repeat(100)),
            ..Filters::default()
        });
        assert!(u.message.contains("longer than 64 bytes"), "{}", u.message);
        let u = bad(Filters {
            grep: Some("(".into()),
            ..Filters::default()
        });
        assert_eq!(u.field, Some(Field::Grep));
        assert!(
            u.message.starts_with("invalid regular expression"),
            "{}",
            u.message
        );
        let u = bad(Filters {
            session: Some("x".repeat(200)),
            ..Filters::default()
        });
        assert_eq!(u.field, Some(Field::Session));
        let u = bad(Filters {
            cwd: Some("/a".into()),
            here: true,
            ..Filters::default()
        });
        assert_eq!(u.field, Some(Field::Cwd));
        let u = bad(Filters {
            host: Some(String::new()),
            ..Filters::default()
        });
        assert_eq!(u.field, Some(Field::Host));
        let u = bad(Filters {
            user: Some("u".repeat(256)),
            ..Filters::default()
        });
        assert_eq!(u.field, Some(Field::User));
        assert!(u.message.contains("longer than 255 bytes"), "{}", u.message);
        // The settings' value is named as such.
        let zero = Settings {
            recent: 0,
            ..Settings::default()
        };
        let u = usage(Options::default().build(&f, &zero).unwrap_err());
        assert_eq!((u.field, u.from_settings), (Some(Field::Recent), true));
        let u = usage(
            Options {
                recent: Some(0),
                ..Options::default()
            }
            .build(&f, &s)
            .unwrap_err(),
        );
        assert_eq!((u.field, u.from_settings), (Some(Field::Recent), false));
    }

    #[test]
    fn command_ids_name_a_session_and_a_number_and_select_exactly_those() {
        let ids = |v: &[&str]| command_ids(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            ids(&["20261122T183045.123Z-9f3a1c:7", " abc:12 ", "abc:12"]).unwrap(),
            vec![
                ("20261122T183045.123Z-9f3a1c".to_string(), 7),
                ("abc".to_string(), 12)
            ]
        );
        for bad in ["7", ":7", "abc:", "abc:x", "all:3", "abc:-1"] {
            let u = usage(ids(&[bad]).unwrap_err());
            assert_eq!(u.field, Some(Field::Id), "{bad}");
            assert!(u.message.contains("is no command id"), "{}", u.message);
        }
        // The ids say the sessions and the number of commands.
        let f = facts("/p");
        let opts = |v: &[&str]| Options {
            filters: Filters {
                session: Some("current".into()),
                ids: v.iter().map(|s| s.to_string()).collect(),
                ..Filters::default()
            },
            recent: Some(1),
            ..Options::default()
        };
        let req = opts(&["s1:3", "s1:5"])
            .build(&f, &Settings::default())
            .unwrap();
        assert_eq!(req.selection.sessions, SessionChoice::Id("s1".into()));
        assert_eq!(req.limit, 2);
        let req = opts(&["s1:3", "s2:5", "s2:6"])
            .build(&f, &Settings::default())
            .unwrap();
        assert_eq!(req.selection.sessions, SessionChoice::All);
        assert_eq!(req.limit, 3);
    }

    #[test]
    fn directories_resolve_against_the_facts_not_the_process() {
        let f = facts("/work/sub");
        assert_eq!(
            within(Some(Path::new("rel")), false, &f).unwrap(),
            Some(PathBuf::from("/work/sub/rel"))
        );
        assert_eq!(
            within(Some(Path::new("/abs")), false, &f).unwrap(),
            Some(PathBuf::from("/abs"))
        );
        // No git work tree above /work/sub: the project is the directory itself.
        assert_eq!(
            within(None, true, &f).unwrap(),
            Some(PathBuf::from("/work/sub"))
        );
        let lost = Facts {
            cwd: None,
            git_root: None,
            ..f
        };
        assert!(within(None, true, &lost).is_err());
        assert!(within(Some(Path::new("rel")), false, &lost).is_err());
    }

    #[test]
    fn budgets_come_from_the_request_then_the_model_then_the_settings() {
        let s = Settings {
            models: vec![UserModel {
                name: "Mine".into(),
                budget: 1234,
                tokenizer: "chars4".into(),
            }],
            ..Settings::default()
        };
        let b = budget(None, Some("mine"), None, None, &s).unwrap().unwrap();
        assert_eq!((b.tokens, b.tokenizer.as_str()), (1234, "chars4"));
        let b = budget(Some(99), Some("mine"), None, Some("cl100k"), &s)
            .unwrap()
            .unwrap();
        assert_eq!((b.tokens, b.tokenizer.as_str()), (99, "cl100k"));
        assert_eq!(b.source, (Field::Budget, false));
        let b = budget(Some(99), None, None, None, &s).unwrap().unwrap();
        assert_eq!(b.tokenizer, "o200k");
        let b = budget(None, None, Some("mine"), None, &s).unwrap().unwrap();
        assert_eq!(b.source, (Field::Model, true), "ask.model's budget");
        let b = budget(None, Some("mine"), Some("gpt-4o"), None, &s)
            .unwrap()
            .unwrap();
        assert_eq!((b.tokens, b.source), (1234, (Field::Model, false)));
        assert!(
            budget(None, None, Some("gpt-4o"), None, &s)
                .unwrap()
                .is_some()
        );
        let u = usage(budget(None, None, Some("nonsense-model"), None, &s).unwrap_err());
        assert_eq!((u.field, u.from_settings), (Some(Field::Model), true));
        let u = usage(budget(None, None, None, Some("o200k"), &s).unwrap_err());
        assert_eq!(u.field, Some(Field::Tokenizer));
        let u = usage(budget(Some(5), None, None, Some("gpt2"), &s).unwrap_err());
        assert!(
            u.message.starts_with("unknown tokenizer 'gpt2'"),
            "{}",
            u.message
        );
    }
}
