//! Sessions of commands run outside the terminal (`omnish exec`, agents' hooks), and how they
//! join the recorded terminal session they ran in.
//!
//! # Why a session of their own
//!
//! A live recorder owns its session's `stream.bin` and `commands.jsonl`: its writer thread
//! appends frames through a buffer and numbers commands in memory. A second process appending
//! to the same files would tear a frame or a line, or take a command number the recorder is
//! about to give. So a command run outside the terminal never touches those files. It is
//! recorded in a session directory of its own (`sessions/<id>/`, an ordinary session with its
//! own `meta.json`, `stream.bin` and `commands.jsonl`, whose `meta.json` has an `author` and,
//! when it belongs with a terminal session, `attached_to`), and the terminal session lists it:
//!
//! ```text
//! sessions/<terminal-id>/attached/<id>     an empty file per attached session (created with
//!                                          O_EXCL: nothing the recorder writes is touched)
//! ```
//!
//! Readers of the terminal session (`context`, `search`, `sessions show`, MCP) read the sessions
//! it lists too, and merge their commands with the terminal's by time
//! (`context::stages::select::sessions`). Ids stay unique (`<id>:<seq>`), each session's files
//! have one writer, and removing or pruning sessions works as for any other.
//!
//! # One writer per attached session
//!
//! Agents run commands one after another, and sometimes several at once. An attached session
//! is reused by the next run of the same author (and the same agent session, for hooks), so a
//! busy agent makes one session, not one per command: a run claims a session by taking
//! `exec.lock` in it exclusively without waiting ([`claim`]), and holds it while it writes;
//! one already held (a run still going) is passed over, and a new one is made when none is
//! free. The holder also holds the directory's shared lock, as a recorder does
//! ([`crate::store::prune::hold_session`]), so the session is not removed under it.

use crate::store::{self, SessionMeta, SessionState, open, prune};
use nix::fcntl::{Flock, FlockArg};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

/// The directory of a session that lists the sessions attached to it.
pub const ATTACHED: &str = "attached";
/// The lock a run holds exclusively while it writes an attached or exec session.
pub const EXEC_LOCK: &str = "exec.lock";
/// Attached sessions read per terminal session at most (the newest), so a hostile or runaway
/// directory cannot make a reader open without end.
pub const MAX_ATTACHED: usize = 1024;

/// Lists `child` as attached to the session in `parent_dir`.
pub fn attach(parent_dir: &Path, child: &str) -> io::Result<()> {
    let dir = parent_dir.join(ATTACHED);
    store::create_store_dir(&dir)?;
    match open::create_new(&dir.join(child)) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// The session directories attached to the session in `parent_dir` that exist, oldest first (at
/// most [`MAX_ATTACHED`], the newest).
pub fn attached_dirs(parent_dir: &Path) -> Vec<PathBuf> {
    let Some(sessions) = parent_dir.parent() else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(parent_dir.join(ATTACHED)) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|id| store::is_session_id(id))
        .collect();
    ids.sort();
    let skip = ids.len().saturating_sub(MAX_ATTACHED);
    ids.into_iter()
        .skip(skip)
        .map(|id| sessions.join(id))
        .filter(|d| d.is_dir())
        .collect()
}

/// A session claimed for writing: its directory, its metadata as read or made, and the locks
/// held until it is dropped.
pub struct Claimed {
    pub dir: PathBuf,
    pub meta: SessionMeta,
    /// The session was made for this run.
    pub fresh: bool,
    _lock: Flock<File>,
    _held: prune::SessionLock,
}

impl Claimed {
    /// The number the next command gets: one past the newest record's.
    pub fn next_seq(&self) -> u64 {
        store::RecordsBackwards::open(&self.dir.join(store::COMMANDS))
            .ok()
            .and_then(|mut r| r.next_record())
            .map_or(1, |r| r.seq + 1)
    }
}

/// Takes `dir`'s exec lock without waiting: `None` when another run holds it (or the
/// directory cannot hold one).
fn try_lock(dir: &Path) -> Option<Flock<File>> {
    let f = store::open_private(&dir.join(EXEC_LOCK)).ok()?;
    Flock::lock(f, FlockArg::LockExclusiveNonblock).ok()
}

/// Where a run's commands go: a session attached to `parent` (a terminal session's id), or one
/// of its own.
pub struct Target<'a> {
    pub root: &'a Path,
    /// The terminal session to attach to; `None`: a session of its own.
    pub parent: Option<&'a str>,
    /// Who runs the commands ([`store::CommandRecord::author`]).
    pub author: &'a str,
    /// Reuse a session of this author and key (`None` with no parent: always a new session).
    pub key: Option<&'a str>,
    /// Metadata for a session made now (its id, author, key and attachment are set here).
    pub meta: SessionMeta,
    /// Wait for a session of this key that another run holds, rather than making another (the
    /// hooks of one agent session, which write briefly and should share one session).
    pub wait: bool,
}

/// Claims a session for `target`: a free one it already has (same parent, author and key),
/// else a new one, made and (with a parent) attached.
pub fn claim(target: Target<'_>) -> io::Result<Claimed> {
    let sessions = store::sessions_dir(target.root);
    let reusable = |m: &SessionMeta| {
        m.author.as_deref() == Some(target.author)
            && m.attached_to.as_deref() == target.parent
            && m.agent_session.as_deref() == target.key
    };
    let candidates: Vec<PathBuf> = match (target.parent, target.key) {
        (Some(parent), _) => attached_dirs(&sessions.join(parent)),
        (None, Some(key)) => keyed_dirs(&sessions, target.author, key),
        (None, None) => Vec::new(),
    };
    for dir in candidates.iter().rev() {
        let Ok(meta) = store::read_meta(dir) else {
            continue;
        };
        if !reusable(&meta) {
            continue;
        }
        let lock = match try_lock(dir) {
            Some(l) => Some(l),
            None if target.wait => store::open_private(&dir.join(EXEC_LOCK))
                .ok()
                .and_then(|f| Flock::lock(f, FlockArg::LockExclusive).ok()),
            None => None,
        };
        if let Some(lock) = lock {
            // Read again under the lock: the holder before may have changed it.
            let meta = store::read_meta(dir).unwrap_or(meta);
            return Ok(Claimed {
                _held: prune::hold_session(dir),
                dir: dir.clone(),
                meta,
                fresh: false,
                _lock: lock,
            });
        }
    }
    let mut meta = target.meta;
    meta.id = store::new_session_id(meta.started_at);
    meta.author = Some(target.author.to_string());
    meta.attached_to = target.parent.map(str::to_string);
    meta.agent_session = target.key.map(str::to_string);
    let dir = sessions.join(&meta.id);
    {
        let _creating = prune::creation_lock(&dir)?;
        store::create_store_dir(&dir)?;
    }
    let held = prune::hold_session(&dir);
    let lock = try_lock(&dir).ok_or_else(|| io::Error::other("cannot lock the new session"))?;
    store::write_json_atomic(&dir.join(store::META), &meta)?;
    if let Some(parent) = target.parent {
        attach(&sessions.join(parent), &meta.id)?;
    } else if let Some(key) = target.key {
        remember_key(&sessions, target.author, key, &meta.id);
    }
    Ok(Claimed {
        dir,
        meta,
        fresh: true,
        _lock: lock,
        _held: held,
    })
}

/// The index of sessions made for agent sessions outside any terminal:
/// `sessions/.agents/<author>/<key>` holds the session's id (best effort: without it, the next
/// run makes another session).
fn key_file(sessions: &Path, author: &str, key: &str) -> Option<PathBuf> {
    let safe = |s: &str| {
        !s.is_empty()
            && s.len() <= 128
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && !s.starts_with('.')
    };
    (safe(author) && safe(key)).then(|| sessions.join(".agents").join(author).join(key))
}

fn keyed_dirs(sessions: &Path, author: &str, key: &str) -> Vec<PathBuf> {
    key_file(sessions, author, key)
        .and_then(|f| open::read_capped(&f, 256).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .map(|id| id.trim().to_string())
        .filter(|id| store::is_session_id(id))
        .map(|id| vec![sessions.join(id)])
        .unwrap_or_default()
}

fn remember_key(sessions: &Path, author: &str, key: &str, id: &str) {
    if let Some(f) = key_file(sessions, author, key) {
        if let Some(dir) = f.parent() {
            if store::create_private_dir(dir).is_ok() {
                let tmp = f.with_extension("tmp");
                let _ = fs::remove_file(&tmp);
                if let Ok(mut w) = open::create_new(&tmp) {
                    use std::io::Write;
                    if w.write_all(id.as_bytes()).is_ok() {
                        let _ = fs::rename(&tmp, &f);
                    }
                }
            }
        }
    }
}

/// The metadata of a session of commands run outside a terminal, before [`claim`] names it.
pub fn new_meta(program: &str, argv: &[String], cwd: &str, started_at: u64) -> SessionMeta {
    SessionMeta {
        state: SessionState::Exited,
        hooked: true,
        ..SessionMeta::starting(program, argv, cwd, started_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target<'a>(root: &'a Path, parent: Option<&'a str>, key: Option<&'a str>) -> Target<'a> {
        Target {
            root,
            parent,
            author: "ci",
            key,
            meta: new_meta("make", &["make".into()], "/", store::now_ms()),
            wait: false,
        }
    }

    #[test]
    fn a_free_session_is_reused_and_a_held_one_passed_over() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let parent = "20261126T101500.123Z-abcdef";
        store::create_private_dir(&store::sessions_dir(root).join(parent)).unwrap();
        let a = claim(target(root, Some(parent), None)).unwrap();
        assert!(a.fresh);
        // Held: a second run at once gets a session of its own.
        let b = claim(target(root, Some(parent), None)).unwrap();
        assert!(b.fresh);
        assert_ne!(a.dir, b.dir);
        let a_dir = a.dir.clone();
        drop(a);
        let c = claim(target(root, Some(parent), None)).unwrap();
        assert!(!c.fresh);
        assert_eq!(c.dir, a_dir);
        let listed = attached_dirs(&store::sessions_dir(root).join(parent));
        assert_eq!(listed.len(), 2);
        assert_eq!(c.meta.attached_to.as_deref(), Some(parent));
        assert_eq!(c.meta.author.as_deref(), Some("ci"));
    }

    #[test]
    fn without_a_parent_a_key_finds_its_session_again() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let a = claim(target(root, None, Some("abc-123"))).unwrap();
        let dir = a.dir.clone();
        drop(a);
        let b = claim(target(root, None, Some("abc-123"))).unwrap();
        assert_eq!(b.dir, dir);
        let c = claim(target(root, None, None)).unwrap();
        assert_ne!(c.dir, dir);
        drop(b);
        let d = claim(target(root, None, Some("other"))).unwrap();
        assert_ne!(d.dir, dir);
    }
}
