//! Select stage: which sessions, and which of their commands, make the context.
//!
//! Records are read from the end of `commands.jsonl` backwards, newest first, and scanning stops
//! as soon as the query is satisfied (`limit` matches found, or records older than `since`), so
//! the cost grows with what is selected, never with the size of the session. A command still
//! running (or cut off by a crash) comes from `meta.json`'s `running_command`.
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
    match choice {
        SessionChoice::Current => {
            let chosen = match current {
                Some(id) => open(&store::sessions_dir(root).join(id)),
                None => dirs.iter().rev().find_map(&mut open),
            };
            match chosen {
                Some(s) => Ok(vec![s]),
                None => Err(not_found(format!(
                    "no readable session in {}; start one with `omnish wrap`",
                    store::sessions_dir(root).display()
                ))),
            }
        }
        SessionChoice::Id(id) => {
            let dir = store::resolve_session(root, id).map_err(|e| not_found(e.to_string()))?;
            match open(&dir) {
                Some(s) => Ok(vec![s]),
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
        }
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
    /// Scanning newest-first, nothing at or before `c` can match any more.
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

/// The filters that read no output, as the `context` and `search` requests name them: failed
/// commands only, commands run within a directory, commands started since a time (ms).
pub(crate) fn cheap_filters(
    failed: bool,
    within: Option<&Path>,
    since_ms: Option<u64>,
) -> Vec<Box<dyn Filter>> {
    let mut filters: Vec<Box<dyn Filter>> = Vec::new();
    if failed {
        filters.push(Box::new(Failed));
    }
    if let Some(dir) = within {
        filters.push(Box::new(Within(dir.to_path_buf())));
    }
    if let Some(ms) = since_ms {
        filters.push(Box::new(Since(ms)));
    }
    filters
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
        let last_seq = next.as_ref().map_or(0, |r| r.seq);
        // The command in progress (or cut off) is newer than every record.
        let mut pending = running_candidate(session, last_seq);
        // Scanning newest first, the command line of the one that ran after the current one.
        let mut newer_line = session
            .meta
            .running_command
            .as_ref()
            .filter(|r| r.seq > last_seq && pending.is_none())
            .and_then(|r| typed_ahead(&r.command_line));
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
                let mut c = match pending.take() {
                    Some(c) => c,
                    None => match next.take().or_else(|| scan.next_record()) {
                        Some(record) => candidate(session, record),
                        None => {
                            ended = true;
                            break;
                        }
                    },
                };
                scanned += 1;
                c.next_command_line =
                    std::mem::replace(&mut newer_line, typed_ahead(&c.record.command_line));
                if self.filters.iter().any(|f| f.exhausted(&c)) {
                    ended = true;
                    break;
                }
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
        Ok(Selected {
            commands: found,
            scanned,
        })
    }
}

fn candidate(session: &Session, mut record: CommandRecord) -> Candidate {
    // A record's session is the directory it lives in, whatever its fields claim.
    record.session_id = session.id().to_string();
    let ended_shell = store::ended_the_shell(
        record.ended_at,
        record.exit_code,
        &record.command_source,
        &session.meta,
    );
    let mut c = Candidate::new(record, session.dir.clone(), session.meta.rows);
    c.ended_shell = ended_shell;
    c
}

/// The command `meta.json` says has started but has no record yet: running if the recorder
/// lives, else cut off. Its output runs to the end of the stream.
fn running_candidate(session: &Session, last_seq: u64) -> Option<Candidate> {
    let run = session
        .meta
        .running_command
        .as_ref()
        .filter(|r| r.seq > last_seq)?;
    let live = session.live();
    if live && session.ours {
        return None;
    }
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
        host: None,
        user: None,
        nested_in: None,
        depth: 0,
    };
    let mut c = candidate(session, record);
    c.running = live;
    c.cut_off = !live;
    Some(c)
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
