//! Select stage: which sessions, and which of their commands, make the context.
//!
//! Records are read from the end of `commands.jsonl` backwards, newest first, and scanning stops
//! as soon as the query is satisfied (`limit` matches found, or records older than `since`), so
//! the cost grows with what is selected, never with the size of the session. A command still
//! running (or cut off by a crash) comes from `meta.json`'s `running_command`.
//!
//! # Nested shells
//!
//! A command run in a shell started from a recorded command (a typed `bash`, `ssh host`) is a
//! record of its own with a `depth` and `nested_in`. Records are appended when commands end, so
//! the commands of a nested shell come before the command that started it in the file, though
//! they started after it. Only top-level (depth 0) records are in the order they started, so
//! scanning stops on a bound (`--since`, one command by its number) only at the second
//! top-level record past it: the records between belong to the shell started by the first.
//! The commands that started the nested shells still alive (`meta.json`'s `nest`) are running
//! too, and have no record yet. When nested commands are selected, they are returned in the
//! order they started (by number), so a nested shell's commands follow the command that
//! started it.
//!
//! Each condition on a record is a [`Filter`]; they combine with AND. Conditions on the output
//! (`--grep`) need the read stage, so the caller passes them as one predicate, tried last, after
//! every cheap filter has passed. Select itself never reads a command's output.
//!
//! # Long command lines
//!
//! A record's command line can be of any length (a hostile `commands.jsonl` can hold a 10 MB
//! one). A selected command's line and directory longer than
//! [`store::COMMAND_LINE_CAP`] chars are cut here, once, to their head and tail around
//! `…[N chars omitted]…` ([`Candidate::command_line_cut`] says where), so that every later stage
//! and front end costs what a short line costs. A test that must see the whole line (`--grep`,
//! `search`) is the query's [`Query::line_test`], run before the cut; its verdict is kept in
//! [`Candidate::line_matched`].

use crate::context::support::parallel;
use crate::store::{self, CommandRecord, OpenSession};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// One recorded session, opened for selection.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub dir: PathBuf,
    pub meta: store::SessionMeta,
    /// Why meta.json could not be used, if it could not.
    pub meta_problem: Option<String>,
    /// The asking process runs inside this session's shell: its running command is the one
    /// asking (`omnish context | llm`), not one to show.
    pub ours: bool,
    live: bool,
}

impl Session {
    fn new(open: OpenSession, current: Option<&str>) -> Session {
        let live = open.live();
        let id = open.id();
        Session {
            ours: current == Some(id.as_str()),
            dir: open.dir,
            meta: open.meta,
            meta_problem: open.meta_problem,
            live,
        }
    }

    /// Opens the session in `dir`; `None` for a directory still being created.
    pub fn open(dir: &Path, current: Option<&str>) -> Result<Option<Session>> {
        Ok(store::open_session(dir)?.map(|o| Session::new(o, current)))
    }

    /// The session's id (its directory's name).
    pub fn id(&self) -> &str {
        &self.meta.id
    }

    /// The recorder is still running.
    pub fn live(&self) -> bool {
        self.live
    }

    /// The session whose commands these are shown with: the terminal session it is attached
    /// to, else itself.
    pub fn group(&self) -> &str {
        self.meta.attached_to.as_deref().unwrap_or(self.id())
    }
}

/// Which sessions to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SessionChoice {
    /// The session the asker runs in, else the most recent session.
    Current,
    All,
    /// An id, a unique prefix of one, or a unique prefix of its random suffix (after the last
    /// `-`).
    Id(String),
}

impl std::str::FromStr for SessionChoice {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "current" | "" => SessionChoice::Current,
            "all" => SessionChoice::All,
            id => SessionChoice::Id(id.to_string()),
        })
    }
}

/// The sessions to read, the current one last. `current` is the id of the session the asker
/// runs in, if any. Sessions that cannot be opened are passed over with a line in `warnings`;
/// one being created right now is passed over silently.
pub(crate) fn sessions(
    root: &Path,
    choice: &SessionChoice,
    current: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Session>> {
    let dirs = store::session_dirs(root)?;
    let not_found = |m: String| anyhow::Error::from(crate::error::Error::NotFound(m));
    if dirs.is_empty() {
        return Err(not_found(format!(
            "no recorded sessions in {}; start one with `omnish wrap`",
            store::sessions_dir(root).display()
        )));
    }
    let current = current.filter(|id| dirs.iter().any(|d| store::dir_id(d) == *id));
    let mut open = |dir: &PathBuf| -> Option<Session> {
        match Session::open(dir, current) {
            Ok(Some(s)) => {
                // A meta.json refused as not a regular file or too large was said already.
                let said = store::notice::said(&s.dir.join(store::META));
                if let Some(p) = s.meta_problem.as_ref().filter(|_| !said) {
                    warnings.push(format!(
                        "session {}: {p}; reading its commands without it",
                        s.id()
                    ));
                }
                if let Some(why) = &s.meta.recording_error {
                    warnings.push(format!(
                        "session {}: {}; later commands are missing",
                        s.id(),
                        crate::context::words::recording_stopped(why)
                    ));
                }
                Some(s)
            }
            Ok(None) => None,
            Err(e) => {
                warnings.push(format!(
                    "session {}: cannot be read: {e}",
                    store::dir_id(dir)
                ));
                None
            }
        }
    };
    // A session with those attached to it (`omnish exec`, agents' hooks; see
    // `store::attached`), the session itself last.
    let with_attached = |s: Session, open: &mut dyn FnMut(&PathBuf) -> Option<Session>| {
        let mut out: Vec<Session> = store::attached::attached_dirs(&s.dir)
            .iter()
            .filter_map(&mut *open)
            .filter(|a| a.meta.attached_to.as_deref() == Some(s.id()))
            .collect();
        out.push(s);
        out
    };
    match choice {
        SessionChoice::Current => {
            let chosen = match current {
                Some(id) => open(&store::sessions_dir(root).join(id)),
                // The most recent session of its own: one attached to another is part of that
                // one.
                None => dirs
                    .iter()
                    .rev()
                    .find_map(|d| open(d).filter(|s| s.meta.attached_to.is_none()))
                    .or_else(|| dirs.iter().rev().find_map(&mut open)),
            };
            match chosen {
                Some(s) => Ok(with_attached(s, &mut open)),
                None => Err(not_found(format!(
                    "no readable session in {}; start one with `omnish wrap`",
                    store::sessions_dir(root).display()
                ))),
            }
        }
        SessionChoice::Id(id) => {
            let dir = store::resolve_session(root, id).map_err(|e| not_found(e.to_string()))?;
            match open(&dir) {
                Some(s) => Ok(with_attached(s, &mut open)),
                None => Err(not_found(format!(
                    "session '{id}' has nothing recorded yet"
                ))),
            }
        }
        SessionChoice::All => {
            let mut out: Vec<Session> = dirs.iter().filter_map(&mut open).collect();
            if let Some(i) = out.iter().position(|s| s.ours) {
                let current = out.remove(i);
                out.push(current);
            }
            Ok(out)
        }
    }
}

/// A command that may be shown.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub record: CommandRecord,
    /// Still running: `record.ended_at`/`exit_code` mean nothing yet.
    pub running: bool,
    /// Neither ended nor running: the recording was cut off.
    pub cut_off: bool,
    pub session_dir: PathBuf,
    pub rows: u16,
    /// The command line of the command that ran next in the session, if any, when it is short
    /// enough to have been typed ahead ([`crate::context::stages::read::TYPED_CAP`]): keys typed ahead
    /// for it are echoed into this command's output (see [`crate::context::stages::read`]).
    pub next_command_line: Option<String>,
    /// The command that ended the shell (`exit`): its status is the shell's, never a failure
    /// ([`store::ended_the_shell`]).
    pub ended_shell: bool,
    /// `record.command_line` was cut (see the module docs): the byte length of its head, and
    /// the chars left out after it (where the marker stands).
    pub command_line_cut: Option<(usize, u64)>,
    /// The query's [`Query::line_test`] held for the whole command line.
    pub line_matched: bool,
    /// Where the command ran: the record's host, else the session's ("" when neither says).
    pub host: String,
    /// As whom: the record's user, else the session's (`None` when neither says).
    pub user: Option<String>,
    /// The record's host or user differs from the session's: front ends that show host and
    /// user only when they differ show them.
    pub elsewhere: bool,
    /// What full-screen programs leave in its output (the request's, set after selection).
    pub screens: crate::term::render::Screens,
}

impl Candidate {
    /// A candidate for `record` of the session in `session_dir`, as selection makes them.
    pub fn new(record: CommandRecord, session_dir: PathBuf, rows: u16) -> Candidate {
        Candidate {
            record,
            running: false,
            cut_off: false,
            session_dir,
            rows,
            next_command_line: None,
            ended_shell: false,
            command_line_cut: None,
            line_matched: false,
            host: String::new(),
            user: None,
            elsewhere: false,
            screens: crate::term::render::Screens::Brief,
        }
        .placed(None)
    }

    /// Sets [`Candidate::host`], [`Candidate::user`] and [`Candidate::elsewhere`] from the
    /// record and the session's `meta` (`None`: the record alone).
    fn placed(mut self, meta: Option<&store::SessionMeta>) -> Candidate {
        let r = &self.record;
        let (session_host, session_user) = match meta {
            Some(m) => (Some(m.hostname.as_str()), m.user.as_deref()),
            None => (None, None),
        };
        self.elsewhere = r.host.as_deref().is_some_and(|h| Some(h) != session_host)
            || r.user.as_deref().is_some_and(|u| Some(u) != session_user);
        self.host = r
            .host
            .as_deref()
            .or(session_host)
            .unwrap_or_default()
            .to_string();
        self.user = r.user.as_deref().or(session_user).map(str::to_string);
        self
    }

    /// `user@host` (or `host` when the user is unknown) when the command ran elsewhere than the
    /// session (another host or user), else `None`: what text formats show beside it.
    pub fn elsewhere_label(&self) -> Option<String> {
        self.elsewhere
            .then(|| crate::context::words::place(self.user.as_deref(), &self.host))
    }

    /// Whether the output runs to the current end of the stream (running or cut off).
    pub fn open_ended(&self) -> bool {
        self.record.stream_length == u64::MAX
    }

    /// The command line as head, chars omitted and tail (the whole line and 0 and "" when it
    /// was not cut).
    pub fn command_line_parts(&self) -> (&str, u64, &str) {
        let line = self.record.command_line.as_str();
        match self.command_line_cut {
            Some((head, omitted)) => {
                let marker = store::omitted_marker(omitted).len();
                (&line[..head], omitted, &line[head + marker..])
            }
            None => (line, 0, ""),
        }
    }

    /// Cuts a long command line and directory (see the module docs).
    fn cut_long_lines(&mut self) {
        let r = &mut self.record;
        if let Some(cut) = store::cut_middle(&r.command_line, store::COMMAND_LINE_CAP) {
            self.command_line_cut = Some((cut.head.len(), cut.omitted));
            r.command_line = cut.joined();
        }
        if let Some(cut) = store::cut_middle(&r.cwd, store::COMMAND_LINE_CAP) {
            r.cwd = cut.joined();
        }
        if let Some(typed) = r.typed.as_deref() {
            if let Some(cut) = store::cut_middle(typed, store::COMMAND_LINE_CAP) {
                r.typed = Some(cut.joined());
            }
        }
    }
}

/// `line` as the next command's line of an older candidate: only a line short enough to have
/// been typed ahead matters (see [`Candidate::next_command_line`]).
fn typed_ahead(line: &str) -> Option<String> {
    (line.len() <= crate::context::stages::read::TYPED_CAP).then(|| line.to_string())
}

/// One condition on a command record.
pub(crate) trait Filter {
    fn keep(&self, c: &Candidate) -> bool;
    /// `c` is past the filter's bound: it does not match, and scanning newest first no record
    /// older than it can match, but for the commands of a nested shell it started (see the
    /// module docs).
    fn exhausted(&self, _c: &Candidate) -> bool {
        false
    }
}

/// Only commands with a known, non-zero exit status, but for the one that ended the shell
/// (`exit` after a failure carries that failure's status).
pub(crate) struct Failed;
impl Filter for Failed {
    fn keep(&self, c: &Candidate) -> bool {
        !c.running && !c.ended_shell && c.record.exit_code.is_some_and(|s| s != 0)
    }
}

/// Only commands run in a directory or below it.
pub(crate) struct Within(pub PathBuf);
impl Filter for Within {
    fn keep(&self, c: &Candidate) -> bool {
        Path::new(&c.record.cwd).starts_with(&self.0)
    }
}

/// Only commands started at or after a time (ms since the epoch).
pub(crate) struct Since(pub u64);
impl Filter for Since {
    fn keep(&self, c: &Candidate) -> bool {
        c.record.started_at >= self.0
    }
    fn exhausted(&self, c: &Candidate) -> bool {
        c.record.started_at < self.0
    }
}

/// Only commands that ran on this host ([`Candidate::host`]: the record's, else the session's).
pub(crate) struct Host(pub String);
impl Filter for Host {
    fn keep(&self, c: &Candidate) -> bool {
        c.host == self.0
    }
}

/// Only commands that ran as this user ([`Candidate::user`]: the record's, else the
/// session's).
pub(crate) struct User(pub String);
impl Filter for User {
    fn keep(&self, c: &Candidate) -> bool {
        c.user.as_deref() == Some(self.0.as_str())
    }
}

/// Only the commands of one nested shell: its depth, started from `nested_in` (the id,
/// `<session>:<seq>`, of the command that started it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InShell {
    pub depth: u32,
    pub nested_in: String,
}

impl Filter for InShell {
    fn keep(&self, c: &Candidate) -> bool {
        c.record.depth == self.depth && c.record.nested_in.as_deref() == Some(&self.nested_in)
    }
    fn exhausted(&self, c: &Candidate) -> bool {
        // Shallower: it ran before the shell started (its commands come before the command
        // that started it), or in a shell around it.
        c.record.depth < self.depth
    }
}

/// Whose commands (`--author`, MCP `author`): every record has an author
/// ([`CommandRecord::author`]): `user` for what was typed at the terminal, an agent's name for
/// what its hook recorded, the label of `omnish exec` (`exec` without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AuthorChoice {
    /// The user's own commands.
    User,
    /// Every command the user did not type: agents' and `omnish exec`'s.
    Agents,
    /// One author, by name.
    Name(String),
}

impl Filter for AuthorChoice {
    fn keep(&self, c: &Candidate) -> bool {
        let author = c.record.author();
        match self {
            AuthorChoice::User => author == store::USER,
            AuthorChoice::Agents => author != store::USER,
            AuthorChoice::Name(n) => author == n,
        }
    }
}

/// The conditions that read no output, as the `context` and `search` requests name them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Cheap<'a> {
    /// Failed commands only.
    pub failed: bool,
    /// Commands run within this directory.
    pub within: Option<&'a Path>,
    /// Commands started at or after this time (ms).
    pub since_ms: Option<u64>,
    /// Commands run on this host.
    pub host: Option<&'a str>,
    /// Commands run as this user.
    pub user: Option<&'a str>,
    /// Commands of this nested shell.
    pub shell: Option<&'a InShell>,
    /// Commands of these authors.
    pub author: Option<&'a AuthorChoice>,
}

/// The filters that read no output (see [`Cheap`]).
pub(crate) fn cheap_filters(cheap: Cheap<'_>) -> Vec<Box<dyn Filter>> {
    let mut filters: Vec<Box<dyn Filter>> = Vec::new();
    if cheap.failed {
        filters.push(Box::new(Failed));
    }
    if let Some(dir) = cheap.within {
        filters.push(Box::new(Within(dir.to_path_buf())));
    }
    if let Some(ms) = cheap.since_ms {
        filters.push(Box::new(Since(ms)));
    }
    if let Some(host) = cheap.host {
        filters.push(Box::new(Host(host.to_string())));
    }
    if let Some(user) = cheap.user {
        filters.push(Box::new(User(user.to_string())));
    }
    if let Some(shell) = cheap.shell {
        filters.push(Box::new(shell.clone()));
    }
    if let Some(author) = cheap.author {
        filters.push(Box::new(author.clone()));
    }
    filters
}

/// Only these commands: (session id or a prefix of one, seq). Scanning a session newest first,
/// nothing older can match once its lowest number named is passed.
pub(crate) struct Ids(pub Vec<(String, u64)>);
impl Ids {
    fn of<'a>(&'a self, c: &'a Candidate) -> impl Iterator<Item = u64> + 'a {
        self.0
            .iter()
            .filter(|(s, _)| c.record.session_id.starts_with(s.as_str()))
            .map(|(_, q)| *q)
    }
}
impl Filter for Ids {
    fn keep(&self, c: &Candidate) -> bool {
        self.of(c).any(|q| q == c.record.seq)
    }
    fn exhausted(&self, c: &Candidate) -> bool {
        self.of(c).all(|q| c.record.seq < q)
    }
}

/// Only the command numbered `seq` (one command by its id): scanning newest first, nothing
/// older can match once a lower number is reached.
pub(crate) struct Seq(pub u64);
impl Filter for Seq {
    fn keep(&self, c: &Candidate) -> bool {
        c.record.seq == self.0
    }
    fn exhausted(&self, c: &Candidate) -> bool {
        c.record.seq < self.0
    }
}

/// The selection: filters, and at most `limit` matches (the newest).
pub(crate) struct Query<'a> {
    pub filters: Vec<Box<dyn Filter>>,
    /// A test of the whole command line of each command that passed the filters, run before a
    /// long line is cut; its verdict is [`Candidate::line_matched`].
    pub line_test: Option<&'a (dyn Fn(&str) -> bool + Sync)>,
    /// A condition that needs the command's output, tried after every filter passed (on
    /// several big outputs at once, see [`crate::context::support::parallel`]).
    pub output_filter: Option<&'a (dyn Fn(&Candidate) -> bool + Sync)>,
    pub limit: usize,
}

/// What selecting from one session found.
#[derive(Debug, Default)]
pub(crate) struct Selected {
    /// The matching commands, oldest first.
    pub commands: Vec<Candidate>,
    /// Records looked at.
    pub scanned: usize,
}

impl Query<'_> {
    /// The matching commands of `session`, oldest first.
    pub fn select(&self, session: &Session) -> Result<Selected> {
        let mut found = Vec::new();
        let mut scanned = 0;
        let mut scan = store::RecordsBackwards::open(&session.dir.join(store::COMMANDS))?;
        let mut next = scan.next_record();
        // The commands in progress (or cut off) are newer than every record, the innermost
        // first.
        let running = running_commands(session, next.as_ref());
        // Scanning newest first, the command line of the one that ran after the current one in
        // the same shell, by depth: the one after the newest record of a depth is the command
        // of that depth still running, if any.
        let mut newer: Vec<Option<String>> = Vec::new();
        for r in &running {
            let d = depth_index(r.depth);
            if newer.len() <= d {
                newer.resize(d + 1, None);
            }
            newer[d] = typed_ahead(&r.command_line);
        }
        let mut pending: std::collections::VecDeque<Candidate> =
            running_candidates(session, &running).into();
        // A top-level command past a filter's bound was seen: the next one ends the scan.
        let mut past_top = false;
        // With an output filter, the next few candidates that pass every other filter are
        // tried together: never more than are still needed, so nothing is read for nothing.
        let at_once = if self.output_filter.is_some() {
            parallel::workers()
        } else {
            1
        };
        let mut ended = false;
        while found.len() < self.limit && !ended {
            let mut batch = Vec::new();
            while batch.len() < at_once.min(self.limit - found.len()) {
                let mut c = match pending.pop_front() {
                    Some(c) => c,
                    None => match next.take().or_else(|| scan.next_record()) {
                        Some(record) => {
                            let mut c = candidate(session, record);
                            let d = depth_index(c.record.depth);
                            if newer.len() <= d {
                                newer.resize(d + 1, None);
                            }
                            c.next_command_line = std::mem::replace(
                                &mut newer[d],
                                typed_ahead(&c.record.command_line),
                            );
                            // Deeper ones ran in a shell this command started (or one before).
                            newer.truncate(d + 1);
                            c
                        }
                        None => {
                            ended = true;
                            break;
                        }
                    },
                };
                if self.filters.iter().any(|f| f.exhausted(&c)) {
                    if c.record.depth == 0 {
                        if past_top {
                            ended = true;
                            break;
                        }
                        past_top = true;
                    }
                    scanned += 1;
                    continue;
                }
                scanned += 1;
                if self.filters.iter().all(|f| f.keep(&c)) {
                    if let Some(test) = self.line_test {
                        c.line_matched = test(&c.record.command_line);
                    }
                    c.cut_long_lines();
                    batch.push(c);
                }
            }
            let keep = match self.output_filter {
                None => vec![true; batch.len()],
                Some(f) => parallel::map(
                    &batch,
                    |c| c.record.stream_length >= parallel::BIG_OUTPUT_BYTES,
                    |c| f(c),
                ),
            };
            found.extend(
                batch
                    .into_iter()
                    .zip(keep)
                    .filter_map(|(c, k)| k.then_some(c)),
            );
        }
        found.reverse();
        if found.iter().any(|c| c.record.depth > 0) {
            // In the order they started: a nested shell's commands after the one that started
            // it (see the module docs).
            found.sort_by_key(|c| c.record.seq);
        }
        Ok(Selected {
            commands: found,
            scanned,
        })
    }
}

fn candidate(session: &Session, mut record: CommandRecord) -> Candidate {
    // A record's session is the directory it lives in, whatever its fields claim.
    record.session_id = session.id().to_string();
    let ended_shell = record.shell_status
        || store::ended_the_shell(
            record.ended_at,
            record.exit_code,
            &record.command_source,
            &session.meta,
        );
    let mut c =
        Candidate::new(record, session.dir.clone(), session.meta.rows).placed(Some(&session.meta));
    c.ended_shell = ended_shell;
    c
}

/// Index of a depth in per-depth tables (a hostile record's depth is capped).
fn depth_index(depth: u32) -> usize {
    depth.min(store::MAX_DEPTH) as usize
}

/// The commands `meta.json` says have started and have no record yet, the innermost first: the
/// running command and the commands that started the nested shells alive. `newest` is the
/// newest record, the last command that ended: a command it records, or one that it shows had
/// ended, is left out (`meta.json` is replaced after the record is appended, so it can be
/// behind). A command is still running after the newest record ended when that record is one
/// of its nested commands (deeper, started later), or started before it without being one of
/// the commands whose shells it runs in (those end after it).
fn running_commands<'a>(
    session: &'a Session,
    newest: Option<&CommandRecord>,
) -> Vec<&'a store::RunningCommand> {
    let meta = &session.meta;
    let mut out: Vec<&store::RunningCommand> = Vec::new();
    let chain = meta
        .running_command
        .iter()
        .chain(meta.nest.iter().rev().map(|n| &n.parent));
    for r in chain {
        let around = |seq: u64| {
            meta.nest
                .iter()
                .any(|n| n.parent.seq == seq && n.parent.depth < r.depth)
                || r.nested_in.as_deref() == Some(&format!("{}:{seq}", session.id()))
        };
        let unrecorded = newest.is_none_or(|n| {
            (n.seq > r.seq && n.depth > r.depth) || (n.seq < r.seq && !around(n.seq))
        });
        if unrecorded && !out.iter().any(|o| o.seq == r.seq) {
            out.push(r);
        }
    }
    out
}

/// Candidates for the commands in progress ([`running_commands`]): running if the recorder
/// lives, else cut off. Their output runs to the end of the stream. When the asker runs in the
/// session, they are the command asking and the shells it runs in: none is one to show.
fn running_candidates(session: &Session, running: &[&store::RunningCommand]) -> Vec<Candidate> {
    let live = session.live();
    if live && session.ours {
        return Vec::new();
    }
    running
        .iter()
        .map(|run| running_candidate(session, run, live))
        .collect()
}

fn running_candidate(session: &Session, run: &store::RunningCommand, live: bool) -> Candidate {
    let record = CommandRecord {
        command_id: format!("{}:{}", session.id(), run.seq),
        session_id: session.id().to_string(),
        seq: run.seq,
        command_line: run.command_line.clone(),
        command_line_chars: run.command_line_chars,
        cwd: run.cwd.clone(),
        started_at: run.started_at,
        ended_at: 0,
        exit_code: None,
        stream_offset: run.stream_offset,
        stream_length: u64::MAX,
        cols: session.meta.cols,
        command_source: "hook".into(),
        typed: None,
        private: run.private,
        recording_stopped: false,
        host: run.host.clone(),
        user: run.user.clone(),
        nested_in: run.nested_in.clone(),
        depth: run.depth,
        shell_status: false,
        paused: false,
        unsplit: run.unsplit.clone(),
        author: session.meta.author.clone(),
    };
    let mut c = candidate(session, record);
    c.running = live;
    c.cut_off = !live;
    c
}

/// Parses `15m`, `2h`, `1h30m`, `90s`, `1d` into milliseconds.
pub(crate) fn parse_duration(s: &str) -> Result<u64> {
    let d = humantime::parse_duration(s.trim()).map_err(|e| {
        anyhow::anyhow!("invalid duration '{s}': {e}; use forms like 90s, 15m, 2h, 1d")
    })?;
    Ok(d.as_millis() as u64)
}

/// The root of the git work tree holding `dir`, else `dir` itself.
pub(crate) fn git_root_or(dir: &Path) -> PathBuf {
    git_root(dir).unwrap_or_else(|| dir.to_path_buf())
}

/// The root of the git work tree holding `dir`, if any.
pub(crate) fn git_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{SessionMeta, SessionState};
    use proptest::prelude::*;

    fn record(seq: u64, started_at: u64, exit: Option<i32>, cwd: &str) -> CommandRecord {
        CommandRecord {
            command_line: format!("cmd {seq}"),
            cwd: cwd.into(),
            started_at,
            ended_at: started_at + 1,
            exit_code: exit,
            ..store::testing::command_record("s", seq)
        }
    }

    fn session_with(records: &[CommandRecord]) -> (tempfile::TempDir, Session) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        std::fs::create_dir_all(&dir).unwrap();
        for r in records {
            store::append_command(&dir, r).unwrap();
        }
        let meta = SessionMeta {
            ended_at: Some(1),
            exit_status: Some(0),
            state: SessionState::Exited,
            ..store::testing::session_meta("s")
        };
        store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
        let s = Session::open(&dir, None).unwrap().unwrap();
        (tmp, s)
    }

    fn seqs(c: &Selected) -> Vec<u64> {
        c.commands.iter().map(|c| c.record.seq).collect()
    }

    #[test]
    fn recent_takes_the_newest_in_order() {
        let recs: Vec<_> = (1..=30).map(|i| record(i, i * 10, Some(0), "/")).collect();
        let (_t, s) = session_with(&recs);
        let q = Query {
            filters: vec![],
            line_test: None,
            output_filter: None,
            limit: 3,
        };
        assert_eq!(seqs(&q.select(&s).unwrap()), [28, 29, 30]);
    }

    #[test]
    fn filters_combine() {
        let recs = vec![
            record(1, 10, Some(1), "/a"),
            record(2, 20, Some(0), "/a"),
            record(3, 30, Some(2), "/b"),
            record(4, 40, Some(1), "/a/sub"),
            record(5, 50, None, "/a"),
        ];
        let (_t, s) = session_with(&recs);
        let q = Query {
            filters: vec![Box::new(Failed), Box::new(Within("/a".into()))],
            line_test: None,
            output_filter: None,
            limit: 10,
        };
        assert_eq!(seqs(&q.select(&s).unwrap()), [1, 4]);
        let q = Query {
            filters: vec![Box::new(Since(30))],
            line_test: None,
            output_filter: None,
            limit: 10,
        };
        assert_eq!(seqs(&q.select(&s).unwrap()), [3, 4, 5]);
        let q = Query {
            filters: vec![],
            line_test: None,
            output_filter: Some(&|c: &Candidate| {
                c.record.command_line.contains('4') || c.record.command_line.contains('2')
            }),
            limit: 1,
        };
        assert_eq!(seqs(&q.select(&s).unwrap()), [4]);
    }

    #[test]
    fn seq_finds_one_command_and_stops_below_it() {
        let recs: Vec<_> = (1..=50).map(|i| record(i, i * 10, Some(0), "/")).collect();
        let (_t, s) = session_with(&recs);
        let q = Query {
            filters: vec![Box::new(Seq(37))],
            line_test: None,
            output_filter: None,
            limit: 1,
        };
        let found = q.select(&s).unwrap();
        assert_eq!(seqs(&found), [37]);
        assert_eq!(found.scanned, 14, "scans 50..=37 only");
        let q = Query {
            filters: vec![Box::new(Seq(51))],
            line_test: None,
            output_filter: None,
            limit: 1,
        };
        let found = q.select(&s).unwrap();
        assert!(found.commands.is_empty());
        assert_eq!(found.scanned, 1, "stops at the newest, below 51");
    }

    #[test]
    fn a_long_command_line_is_tested_whole_then_cut_once() {
        let long = format!(
            "echo {} needle {}",
            "a".repeat(600_000),
            "b".repeat(600_000)
        );
        let mut recs = vec![record(1, 1, Some(0), "/"), record(2, 2, Some(0), "/")];
        recs[0].command_line = long.clone();
        recs[1].command_line = long.clone();
        let (_t, s) = session_with(&recs);
        let test = |l: &str| l.contains("needle");
        let q = Query {
            filters: vec![],
            line_test: Some(&test),
            output_filter: None,
            limit: 10,
        };
        let found = q.select(&s).unwrap().commands;
        assert_eq!(found.len(), 2);
        for c in &found {
            assert!(c.line_matched, "the whole line was tested");
            let (head, omitted, tail) = c.command_line_parts();
            assert!(
                head.starts_with("echo aaa") && tail.ends_with("bbb"),
                "{head}"
            );
            assert_eq!(
                head.chars().count() + omitted as usize + tail.chars().count(),
                long.len()
            );
            assert!(c.record.command_line.chars().count() < store::COMMAND_LINE_CAP + 40);
            assert!(
                c.record
                    .command_line
                    .contains(&format!("…[{omitted} chars omitted]…"))
            );
        }
        // A next command line too long to have been typed ahead is not kept.
        assert_eq!(found[0].next_command_line, None);
    }

    #[test]
    fn within_matches_whole_path_components() {
        let recs = vec![record(1, 1, Some(0), "/ab"), record(2, 2, Some(0), "/a")];
        let (_t, s) = session_with(&recs);
        let q = Query {
            filters: vec![Box::new(Within("/a".into()))],
            line_test: None,
            output_filter: None,
            limit: 10,
        };
        assert_eq!(seqs(&q.select(&s).unwrap()), [2]);
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("15m").unwrap(), 900_000);
        assert_eq!(parse_duration("1h 30m").unwrap(), 5_400_000);
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .to_string()
                .contains("15m")
        );
    }

    /// A record of a nested shell: `depth`, started by command `parent`, as `user@host`.
    fn inner(seq: u64, started_at: u64, parent: u64, depth: u32, host: &str) -> CommandRecord {
        CommandRecord {
            nested_in: Some(format!("s:{parent}")),
            depth,
            host: Some(host.into()),
            user: Some("root".into()),
            ..record(seq, started_at, Some(0), "/root")
        }
    }

    /// A session on `laptop` as `me`: `cmd 1`, then `cmd 2` starts a shell on web1 whose
    /// commands 3, 4 and 7 run as root (4 fails), 4 starting a shell of its own (5 and 6 at
    /// depth 2, after it in time, before it in the file), then `cmd 8`. The file holds them as
    /// they ended.
    fn nested_records() -> Vec<CommandRecord> {
        let mut four = inner(4, 40, 2, 1, "web1");
        four.exit_code = Some(1);
        vec![
            record(1, 10, Some(0), "/"),
            inner(3, 30, 2, 1, "web1"),
            inner(5, 50, 4, 2, "web1"),
            inner(6, 60, 4, 2, "web1"),
            four,
            inner(7, 70, 2, 1, "web1"),
            record(2, 20, Some(0), "/"),
            record(8, 80, Some(0), "/"),
        ]
    }

    fn nested_session(recs: &[CommandRecord]) -> (tempfile::TempDir, Session) {
        let (t, mut s) = session_with(recs);
        s.meta.hostname = "laptop".into();
        s.meta.user = Some("me".into());
        (t, s)
    }

    fn all() -> Query<'static> {
        Query {
            filters: vec![],
            line_test: None,
            output_filter: None,
            limit: 100,
        }
    }

    #[test]
    fn nested_commands_come_in_the_order_they_started_with_their_place() {
        let (_t, s) = nested_session(&nested_records());
        let found = all().select(&s).unwrap();
        assert_eq!(seqs(&found), [1, 2, 3, 4, 5, 6, 7, 8]);
        let c = &found.commands;
        assert_eq!(
            (c[0].host.as_str(), c[0].user.as_deref()),
            ("laptop", Some("me"))
        );
        assert!(!c[0].elsewhere && c[0].elsewhere_label().is_none());
        assert_eq!(
            (c[2].host.as_str(), c[2].user.as_deref()),
            ("web1", Some("root"))
        );
        assert_eq!(c[2].elsewhere_label().as_deref(), Some("root@web1"));
        // The next command in the same shell, for type-ahead: never one of another depth.
        let next = |seq: u64| {
            c.iter()
                .find(|c| c.record.seq == seq)
                .unwrap()
                .next_command_line
                .clone()
        };
        assert_eq!(next(1).as_deref(), Some("cmd 2"));
        assert_eq!(next(2).as_deref(), Some("cmd 8"));
        assert_eq!(next(3).as_deref(), Some("cmd 4"));
        assert_eq!(next(4).as_deref(), Some("cmd 7"));
        assert_eq!(next(5).as_deref(), Some("cmd 6"));
        assert_eq!(next(6), None, "the last of its shell");
        assert_eq!(next(7), None, "the last of its shell");
        assert_eq!(next(8), None);
        // Two shells nested in turn in one: the last command of the first has no next one.
        let recs = vec![
            record(1, 10, Some(0), "/"),
            inner(4, 40, 3, 2, "web1"),
            inner(3, 30, 2, 1, "web1"),
            inner(6, 60, 5, 2, "web1"),
            inner(5, 50, 2, 1, "web1"),
            record(2, 20, Some(0), "/"),
        ];
        let (_t, s) = nested_session(&recs);
        let found = all().select(&s).unwrap();
        let next = |seq: u64| {
            let c = found.commands.iter().find(|c| c.record.seq == seq);
            c.unwrap().next_command_line.clone()
        };
        assert_eq!((next(4), next(6)), (None, None));
        assert_eq!(next(3).as_deref(), Some("cmd 5"));
        // A record that claims a depth past what a frame can say is read at the deepest.
        let mut deep = nested_records();
        deep[2].depth = u32::MAX;
        let (_t, s) = nested_session(&deep);
        assert_eq!(all().select(&s).unwrap().commands.len(), 8);
    }

    #[test]
    fn host_and_user_filters_match_the_record_else_the_session() {
        let (_t, s) = nested_session(&nested_records());
        let q = |cheap: Cheap<'_>| Query {
            filters: cheap_filters(cheap),
            ..all()
        };
        let web1 = q(Cheap {
            host: Some("web1"),
            ..Cheap::default()
        });
        assert_eq!(seqs(&web1.select(&s).unwrap()), [3, 4, 5, 6, 7]);
        let laptop = q(Cheap {
            host: Some("laptop"),
            ..Cheap::default()
        });
        assert_eq!(seqs(&laptop.select(&s).unwrap()), [1, 2, 8]);
        let me = q(Cheap {
            user: Some("me"),
            failed: true,
            ..Cheap::default()
        });
        assert!(me.select(&s).unwrap().commands.is_empty());
        let root_failed = q(Cheap {
            user: Some("root"),
            failed: true,
            ..Cheap::default()
        });
        assert_eq!(seqs(&root_failed.select(&s).unwrap()), [4]);
        // Exact: no prefix, no case folding.
        let web = q(Cheap {
            host: Some("WEB1"),
            ..Cheap::default()
        });
        assert!(web.select(&s).unwrap().commands.is_empty());
    }

    #[test]
    fn bounds_stop_the_scan_only_past_the_nested_commands_of_a_top_level_one() {
        let (_t, s) = nested_session(&nested_records());
        // Started at 30 or later: command 2 (at 20) ended after its nested ones, which are
        // newer.
        let since = Query {
            filters: vec![Box::new(Since(30))],
            ..all()
        };
        let found = since.select(&s).unwrap();
        assert_eq!(seqs(&found), [3, 4, 5, 6, 7, 8]);
        assert_eq!(
            found.scanned, 7,
            "command 1, past 2 and its nested ones, ends it"
        );
        for seq in 1..=8 {
            let one = Query {
                filters: vec![Box::new(Seq(seq))],
                limit: 1,
                ..all()
            };
            assert_eq!(seqs(&one.select(&s).unwrap()), [seq], "seq {seq}");
        }
        // No nesting: one record past the bound ends it, as before.
        let recs: Vec<_> = (1..=10).map(|i| record(i, i * 10, Some(0), "/")).collect();
        let (_t, s) = session_with(&recs);
        let since = Query {
            filters: vec![Box::new(Since(75))],
            ..all()
        };
        let found = since.select(&s).unwrap();
        assert_eq!((seqs(&found), found.scanned), (vec![8, 9, 10], 4));
    }

    #[test]
    fn the_commands_that_started_live_nested_shells_are_running() {
        // Command 2 started a shell on web1 whose command 7 runs now: 3 to 6 ended.
        let recs: Vec<_> = nested_records().into_iter().take(5).collect();
        let (_t, mut s) = nested_session(&recs);
        let running = |seq: u64, depth: u32, line: &str| store::RunningCommand {
            seq,
            command_line: line.into(),
            command_line_chars: None,
            cwd: "/".into(),
            started_at: seq * 10,
            stream_offset: 0,
            private: false,
            host: (depth > 0).then(|| "web1".into()),
            user: (depth > 0).then(|| "root".into()),
            nested_in: (depth > 0).then(|| "s:2".into()),
            depth,
            unsplit: None,
        };
        s.meta.running_command = Some(running(7, 1, "make"));
        s.meta.nest = vec![store::NestedShell {
            depth: 1,
            parent: running(2, 0, "ssh web1"),
            shell: "bash".into(),
            host: "web1".into(),
            user: "root".into(),
            started_at: 21,
        }];
        // Another terminal: the recorder is dead here, so both are cut off, not running.
        let found = all().select(&s).unwrap();
        assert_eq!(seqs(&found), [1, 2, 3, 4, 5, 6, 7]);
        let c = &found.commands;
        assert!(c[1].cut_off && c[1].open_ended() && c[1].record.depth == 0);
        assert!(c[6].cut_off && c[6].record.depth == 1);
        assert_eq!(c[6].elsewhere_label().as_deref(), Some("root@web1"));
        // The newest record shows command 2 is not recorded yet: it is kept. Once its record is
        // the newest, meta.json's stale entries are not shown twice.
        let (_t, mut s2) = nested_session(&nested_records()[..7]);
        s2.meta.nest = s.meta.nest.clone();
        s2.meta.running_command = s.meta.running_command.clone();
        let again = all().select(&s2).unwrap();
        assert_eq!(seqs(&again), [1, 2, 3, 4, 5, 6, 7]);
        assert!(again.commands.iter().all(|c| !c.cut_off && !c.running));
        // Asked from inside the session, they are the asker and the shells it runs in.
        s.ours = true;
        s.live = true;
        let found = all().select(&s).unwrap();
        assert_eq!(seqs(&found), [1, 3, 4, 5, 6]);
        let four = found.commands.iter().find(|c| c.record.seq == 4).unwrap();
        assert_eq!(four.next_command_line.as_deref(), Some("make"));
        let one = found.commands.iter().find(|c| c.record.seq == 1).unwrap();
        assert_eq!(one.next_command_line.as_deref(), Some("ssh web1"));
    }

    proptest! {
        #[test]
        fn backwards_reading_sees_every_record_even_across_blocks(
            lens in proptest::collection::vec(0usize..40_000, 0..12),
            torn in proptest::bool::ANY,
        ) {
            let recs: Vec<_> = lens.iter().enumerate().map(|(i, n)| {
                let mut r = record(i as u64 + 1, i as u64, Some(0), "/");
                r.command_line = "x".repeat(*n);
                r
            }).collect();
            let (_t, s) = session_with(&recs);
            if torn {
                let mut f = store::open_append(&s.dir.join(store::COMMANDS)).unwrap();
                std::io::Write::write_all(&mut f, b"{\"command_id\":\"s:99\",\"se").unwrap();
            }
            let mut scan = store::RecordsBackwards::open(&s.dir.join(store::COMMANDS)).unwrap();
            let mut got: Vec<_> = std::iter::from_fn(|| scan.next_record()).collect();
            got.reverse();
            prop_assert_eq!(got, recs);
        }
    }
}
