//! Select stage: which sessions, and which of their commands, make the context.
//!
//! Records are read from the end of `commands.jsonl` backwards, newest first, and scanning stops
//! as soon as the query is satisfied (`--recent N` matches found, or records older than
//! `--since`), so the cost grows with what is selected, never with the size of the session.
//! A command still running (or cut off by a crash) comes from `meta.json`'s `running_command`.
//!
//! Each option is a [`Filter`]; they combine with AND, and `--recent N` caps the matches.

use crate::context::read;
use crate::store::{self, CommandRecord, SessionMeta, SessionState};
use anyhow::{Context, Result, bail};
use regex::Regex;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// One recorded session, opened for selection.
#[derive(Debug, Clone)]
pub struct Session {
    pub dir: PathBuf,
    pub meta: SessionMeta,
    /// This process runs inside the session's shell: its running command is the one asking
    /// (`omnish context | llm`), not one to show.
    pub ours: bool,
}

impl Session {
    pub fn open(dir: &Path) -> Result<Session> {
        let meta = store::read_meta(dir)?;
        let ours = std::env::var("OMNISH_SESSION_ID").is_ok_and(|id| id == meta.id);
        Ok(Session {
            dir: dir.to_path_buf(),
            meta,
            ours,
        })
    }

    pub fn id(&self) -> &str {
        &self.meta.id
    }

    /// The recorder is still running (its process is alive and it has not sealed meta.json).
    pub fn live(&self) -> bool {
        self.meta.state == SessionState::Running && process_alive(self.meta.recorder_pid)
    }
}

fn process_alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0 && (unsafe { libc::kill(pid as i32, 0) } == 0 || errno() == libc::EPERM)
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Which sessions `--session` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionChoice {
    /// The wrapped shell we run in (`OMNISH_SESSION_ID`), else the most recent session.
    Current,
    All,
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

/// The sessions to read, the current one last.
pub fn sessions(root: &Path, choice: &SessionChoice) -> Result<Vec<Session>> {
    let dirs = store::list_sessions(root)
        .with_context(|| format!("cannot list sessions in {}", root.display()))?;
    if dirs.is_empty() {
        bail!(
            "no recorded sessions in {}; start one with `omnish wrap`",
            store::sessions_dir(root).display()
        );
    }
    let name = |d: &PathBuf| {
        d.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    let current_id = std::env::var("OMNISH_SESSION_ID")
        .ok()
        .filter(|id| dirs.iter().any(|d| &name(d) == id));
    match choice {
        SessionChoice::Current => {
            let dir = match &current_id {
                Some(id) => store::sessions_dir(root).join(id),
                None => dirs.last().cloned().expect("not empty"),
            };
            Ok(vec![Session::open(&dir)?])
        }
        SessionChoice::Id(id) => {
            let matching: Vec<&PathBuf> = dirs
                .iter()
                .filter(|d| name(d).starts_with(id.as_str()))
                .collect();
            match matching.as_slice() {
                [one] => Ok(vec![Session::open(one)?]),
                [] => {
                    let recent: Vec<String> = dirs.iter().rev().take(3).map(name).collect();
                    bail!(
                        "no session '{id}'; most recent: {} (or use --session all)",
                        recent.join(", ")
                    )
                }
                many => bail!(
                    "session '{id}' is ambiguous: {} sessions start with it; give more of the id",
                    many.len()
                ),
            }
        }
        SessionChoice::All => {
            let mut out: Vec<Session> = dirs.iter().filter_map(|d| Session::open(d).ok()).collect();
            if let Some(id) = &current_id {
                if let Some(i) = out.iter().position(|s| s.id() == id) {
                    let current = out.remove(i);
                    out.push(current);
                }
            }
            Ok(out)
        }
    }
}

/// A command that may be shown.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub record: CommandRecord,
    /// Still running: `record.ended_at`/`exit_code` mean nothing yet.
    pub running: bool,
    /// Neither ended nor running: the recording was cut off.
    pub cut_off: bool,
    pub session_dir: PathBuf,
    pub rows: u16,
    /// The command line of the command that ran next in the session, if any: keys typed ahead
    /// for it are echoed into this command's output (see [`crate::context::read`]).
    pub next_command_line: Option<String>,
    /// Rendered output, once some stage needed it.
    pub rendered: Option<Vec<String>>,
}

impl Candidate {
    /// The rendered output lines, read and rendered on first use.
    pub fn rendered(&mut self) -> &[String] {
        if self.rendered.is_none() {
            self.rendered = Some(read::rendered_output(self));
        }
        self.rendered.as_deref().unwrap_or(&[])
    }
}

/// One condition on a command; the options of `omnish context` each add one.
pub trait Filter {
    fn keep(&self, c: &mut Candidate) -> bool;
    /// Scanning newest-first, nothing at or before `c` can match any more.
    fn exhausted(&self, _c: &Candidate) -> bool {
        false
    }
}

/// `--failed`: a known, non-zero exit status.
pub struct Failed;
impl Filter for Failed {
    fn keep(&self, c: &mut Candidate) -> bool {
        !c.running && c.record.exit_code.is_some_and(|s| s != 0)
    }
}

/// `--grep REGEX`: the command line or the rendered output matches.
pub struct Grep(pub Regex);
impl Filter for Grep {
    fn keep(&self, c: &mut Candidate) -> bool {
        self.0.is_match(&c.record.command_line) || c.rendered().iter().any(|l| self.0.is_match(l))
    }
}

/// `--cwd DIR` / `--here`: ran in DIR or below it.
pub struct Within(pub PathBuf);
impl Filter for Within {
    fn keep(&self, c: &mut Candidate) -> bool {
        Path::new(&c.record.cwd).starts_with(&self.0)
    }
}

/// `--since DURATION`: started at or after a time (ms since the epoch).
pub struct Since(pub u64);
impl Filter for Since {
    fn keep(&self, c: &mut Candidate) -> bool {
        c.record.started_at >= self.0
    }
    fn exhausted(&self, c: &Candidate) -> bool {
        c.record.started_at < self.0
    }
}

/// The selection: filters, and at most `limit` matches (the newest).
pub struct Query {
    pub filters: Vec<Box<dyn Filter>>,
    pub limit: usize,
}

impl Query {
    /// The matching commands of `session`, oldest first.
    pub fn select(&self, session: &Session) -> Result<Vec<Candidate>> {
        let mut found = Vec::new();
        let mut scan = RecordsBackwards::open(&session.dir.join(store::COMMANDS))?;
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
            .map(|r| r.command_line.clone());
        while found.len() < self.limit {
            let mut c = match pending.take() {
                Some(c) => c,
                None => match next.take().or_else(|| scan.next_record()) {
                    Some(record) => candidate(session, record),
                    None => break,
                },
            };
            c.next_command_line = newer_line.replace(c.record.command_line.clone());
            if self.filters.iter().any(|f| f.exhausted(&c)) {
                break;
            }
            if self.filters.iter().all(|f| f.keep(&mut c)) {
                found.push(c);
            }
        }
        found.reverse();
        Ok(found)
    }
}

fn candidate(session: &Session, record: CommandRecord) -> Candidate {
    Candidate {
        record,
        running: false,
        cut_off: false,
        session_dir: session.dir.clone(),
        rows: session.meta.rows,
        next_command_line: None,
        rendered: None,
    }
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
        cwd: run.cwd.clone(),
        started_at: run.started_at,
        ended_at: 0,
        exit_code: None,
        stream_offset: run.stream_offset,
        stream_length: u64::MAX,
        cols: session.meta.cols,
        command_source: "hook".into(),
        recording_stopped: false,
    };
    let mut c = candidate(session, record);
    c.running = live;
    c.cut_off = !live;
    Some(c)
}

/// Reads `commands.jsonl` from its end, one record at a time, in blocks: a torn or invalid line
/// is skipped.
pub struct RecordsBackwards {
    file: Option<File>,
    pos: u64,
    buf: Vec<u8>,
}

const BLOCK: u64 = 64 * 1024;

impl RecordsBackwards {
    pub fn open(path: &Path) -> Result<RecordsBackwards> {
        let file = match File::open(path) {
            Ok(f) => Some(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let pos = match &file {
            Some(f) => f.metadata()?.len(),
            None => 0,
        };
        Ok(RecordsBackwards {
            file,
            pos,
            buf: Vec::new(),
        })
    }

    /// The previous complete line, newest first.
    fn next_line(&mut self) -> Option<Vec<u8>> {
        loop {
            // A line is complete once the newline before it (or the file start) is in `buf`.
            let trimmed =
                self.buf.len() - self.buf.iter().rev().take_while(|&&b| b == b'\n').count();
            if let Some(nl) = self.buf[..trimmed].iter().rposition(|&b| b == b'\n') {
                let line = self.buf[nl + 1..trimmed].to_vec();
                self.buf.truncate(nl + 1);
                return Some(line);
            }
            if self.pos == 0 {
                if trimmed == 0 {
                    return None;
                }
                let line = self.buf[..trimmed].to_vec();
                self.buf.clear();
                return Some(line);
            }
            let start = self.pos.saturating_sub(BLOCK);
            let mut block = vec![0u8; (self.pos - start) as usize];
            let file = self.file.as_mut()?;
            file.seek(SeekFrom::Start(start)).ok()?;
            file.read_exact(&mut block).ok()?;
            block.extend_from_slice(&self.buf);
            self.buf = block;
            self.pos = start;
        }
    }

    pub fn next_record(&mut self) -> Option<CommandRecord> {
        loop {
            let line = self.next_line()?;
            if let Ok(r) = serde_json::from_slice(&line) {
                return Some(r);
            }
        }
    }
}

/// Parses `15m`, `2h`, `1h30m`, `90s`, `1d` into milliseconds.
pub fn parse_duration(s: &str) -> Result<u64> {
    let d = humantime::parse_duration(s.trim()).map_err(|e| {
        anyhow::anyhow!("invalid duration '{s}': {e}; use forms like 90s, 15m, 2h, 1d")
    })?;
    Ok(d.as_millis() as u64)
}

/// The root of the git work tree holding `dir`, else `dir` itself.
pub fn git_root_or(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir)
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn record(seq: u64, started_at: u64, exit: Option<i32>, cwd: &str) -> CommandRecord {
        CommandRecord {
            command_id: format!("s:{seq}"),
            session_id: "s".into(),
            seq,
            command_line: format!("cmd {seq}"),
            cwd: cwd.into(),
            started_at,
            ended_at: started_at + 1,
            exit_code: exit,
            stream_offset: 0,
            stream_length: 0,
            cols: 80,
            command_source: "hook".into(),
            recording_stopped: false,
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
            id: "s".into(),
            shell: "bash".into(),
            argv: vec![],
            pid: None,
            recorder_pid: 0,
            hostname: String::new(),
            cwd: "/".into(),
            started_at: 0,
            ended_at: Some(1),
            exit_status: Some(0),
            omnish_version: String::new(),
            state: SessionState::Exited,
            cols: 80,
            rows: 24,
            hooked: true,
            running_command: None,
            recording_error: None,
            recording_stopped_at: None,
        };
        store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
        let s = Session::open(&dir).unwrap();
        (tmp, s)
    }

    fn seqs(c: &[Candidate]) -> Vec<u64> {
        c.iter().map(|c| c.record.seq).collect()
    }

    #[test]
    fn recent_takes_the_newest_in_order() {
        let recs: Vec<_> = (1..=30).map(|i| record(i, i * 10, Some(0), "/")).collect();
        let (_t, s) = session_with(&recs);
        let q = Query {
            filters: vec![],
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
            limit: 10,
        };
        assert_eq!(seqs(&q.select(&s).unwrap()), [1, 4]);
        let q = Query {
            filters: vec![Box::new(Since(30))],
            limit: 10,
        };
        assert_eq!(seqs(&q.select(&s).unwrap()), [3, 4, 5]);
        let q = Query {
            filters: vec![Box::new(Grep(Regex::new("cmd [24]").unwrap()))],
            limit: 1,
        };
        assert_eq!(seqs(&q.select(&s).unwrap()), [4]);
    }

    #[test]
    fn within_matches_whole_path_components() {
        let recs = vec![record(1, 1, Some(0), "/ab"), record(2, 2, Some(0), "/a")];
        let (_t, s) = session_with(&recs);
        let q = Query {
            filters: vec![Box::new(Within("/a".into()))],
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
            let mut scan = RecordsBackwards::open(&s.dir.join(store::COMMANDS)).unwrap();
            let mut got: Vec<_> = std::iter::from_fn(|| scan.next_record()).collect();
            got.reverse();
            prop_assert_eq!(got, recs);
        }
    }
}
