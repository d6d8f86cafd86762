//! Removing sessions safely, and the policy that keeps the store in bounds.
//!
//! # Never a live session, never one being born
//!
//! Two advisory locks (`flock`) make removal safe against the recorder:
//!
//! - A recorder holds a shared lock on its session directory for as long as it runs
//!   ([`hold_session`]); the lock goes away with the process, however it ends, so it cannot be
//!   fooled by a reused pid.
//! - A recorder creates its directory, its files and its first `meta.json` while holding a shared
//!   lock on `sessions/.lock` ([`creation_lock`]); a remover holds that lock exclusively while
//!   it decides and moves directories away. So a remover never sees a directory that is half
//!   created.
//!
//! A session is removed only when its directory lock can be taken, and, for sessions recorded
//! before recorders took that lock, when `meta.json` does not say `running` with a live recorder
//! pid. Removal first renames the directory to `sessions/.trash-<id>` under the store lock (fast,
//! atomic: readers see the whole session or nothing), then deletes it with no lock held; a
//! deletion that was cut short is finished by the next removal.

use crate::store::{self, SessionState, SessionSummary};
use nix::fcntl::{Flock, FlockArg};
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// The store-wide lock file, beside the session directories.
pub const LOCK: &str = ".lock";
/// Prefix of a removed session's directory on its way out.
pub const TRASH_PREFIX: &str = ".trash-";

/// How the store is kept in bounds when a recorded shell starts (config keys `sessions.keep`
/// and `sessions.max_size`); 0 turns a limit off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PruneSettings {
    /// Most sessions kept (the newest).
    pub keep: usize,
    /// Most bytes all sessions together take on disk.
    pub max_size: u64,
}

impl Default for PruneSettings {
    fn default() -> Self {
        PruneSettings {
            keep: 100,
            max_size: 2 << 30,
        }
    }
}

impl PruneSettings {
    pub fn policy(&self) -> Policy {
        Policy {
            keep: (self.keep > 0).then_some(self.keep),
            older_than: None,
            max_size: (self.max_size > 0).then_some(self.max_size),
        }
    }
}

/// Which sessions a prune removes: any of the conditions is enough.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// Keep only the newest N sessions.
    pub keep: Option<usize>,
    /// Remove sessions last active before this time (ms since the epoch).
    pub older_than: Option<u64>,
    /// Remove the oldest sessions until all together take at most this many bytes.
    pub max_size: Option<u64>,
}

/// Indices into `sessions` (oldest first) of the sessions `policy` removes, oldest first. Sessions
/// whose recorder lives and the session `protect` (the one starting) are never chosen; they still
/// count towards `keep` and `max_size`.
pub fn plan(sessions: &[SessionSummary], policy: &Policy, protect: Option<&str>) -> Vec<usize> {
    let removable =
        |s: &SessionSummary| !s.recorder_alive && protect.is_none_or(|p| s.session.id() != p);
    let mut chosen = vec![false; sessions.len()];
    if let Some(keep) = policy.keep {
        let excess = sessions.len().saturating_sub(keep);
        for (i, s) in sessions.iter().enumerate().take(excess) {
            chosen[i] = removable(s);
        }
    }
    if let Some(before) = policy.older_than {
        for (i, s) in sessions.iter().enumerate() {
            chosen[i] |= removable(s) && s.last_activity < before;
        }
    }
    if let Some(max) = policy.max_size {
        let mut total: u64 = sessions
            .iter()
            .zip(&chosen)
            .filter(|(_, c)| !**c)
            .map(|(s, _)| s.bytes)
            .sum();
        for (i, s) in sessions.iter().enumerate() {
            if total <= max {
                break;
            }
            if !chosen[i] && removable(s) {
                chosen[i] = true;
                total -= s.bytes;
            }
        }
    }
    (0..sessions.len()).filter(|&i| chosen[i]).collect()
}

/// A shared lock on the store, held by a recorder while it creates its session directory.
pub struct CreationLock(#[allow(dead_code)] Option<Flock<File>>);

fn lock_file(sessions_dir: &Path) -> io::Result<File> {
    store::open_private(&sessions_dir.join(LOCK))
}

/// Takes the store's lock shared before creating the session directory `dir` (creating its
/// parent). Best effort: where locks are not supported the creation goes ahead unlocked.
pub fn creation_lock(dir: &Path) -> io::Result<CreationLock> {
    let Some(parent) = dir.parent() else {
        return Ok(CreationLock(None));
    };
    // Created like the session directory's other parents: 0700, and left alone if it exists.
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent)?;
    let lock = lock_file(parent)
        .ok()
        .and_then(|f| Flock::lock(f, FlockArg::LockShared).ok());
    Ok(CreationLock(lock))
}

/// The recorder's shared lock on its session directory, held while it runs.
pub struct SessionLock(#[allow(dead_code)] Option<Flock<File>>);

/// Takes the shared lock on the session directory `dir` that says its recorder runs. Best
/// effort, like [`creation_lock`].
pub fn hold_session(dir: &Path) -> SessionLock {
    SessionLock(
        store::open::open_dir(dir)
            .ok()
            .and_then(|f| Flock::lock(f, FlockArg::LockSharedNonblock).ok()),
    )
}

/// Whether a recorder holds `dir`'s lock now (see [`hold_session`]).
pub fn session_locked(dir: &Path) -> bool {
    match store::open::open_dir(dir) {
        Ok(f) => matches!(
            Flock::lock(f, FlockArg::LockExclusiveNonblock),
            Err((_, nix::errno::Errno::EWOULDBLOCK))
        ),
        Err(_) => false,
    }
}

/// Why a session was not removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// Its recorder runs.
    Live,
    /// It is gone already.
    Missing,
    /// Removing it failed.
    Failed(String),
}

/// What became of one session asked to be removed.
#[derive(Debug, Clone)]
pub struct Removal {
    pub dir: PathBuf,
    /// `Ok(bytes freed)` or why it was kept.
    pub result: Result<u64, Kept>,
}

/// Removes the sessions in `dirs` (directories under `sessions/` of `root`) that no recorder
/// holds, and finishes removals a previous run left in the trash. Each session's bytes on disk
/// are counted just before it goes.
pub fn remove_sessions(root: &Path, dirs: &[PathBuf]) -> io::Result<Vec<Removal>> {
    let sessions_dir = store::sessions_dir(root);
    let mut results = Vec::with_capacity(dirs.len());
    let mut trashed = Vec::new();
    {
        let _store = match lock_file(&sessions_dir) {
            Ok(f) => Some(Flock::lock(f, FlockArg::LockExclusive).map_err(|(_, e)| {
                io::Error::other(format!(
                    "cannot lock {}: {e}",
                    sessions_dir.join(LOCK).display()
                ))
            })?),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        for dir in dirs {
            let result = trash(&sessions_dir, dir);
            if let Ok((to, _)) = &result {
                trashed.push(to.clone());
            }
            results.push(Removal {
                dir: dir.clone(),
                result: result.map(|(_, bytes)| bytes),
            });
        }
    }
    for t in trashed {
        let _ = fs::remove_dir_all(t);
    }
    empty_trash(&sessions_dir);
    Ok(results)
}

/// Moves one session to the trash (the store lock held): `(where it went, its bytes)`.
fn trash(sessions_dir: &Path, dir: &Path) -> Result<(PathBuf, u64), Kept> {
    // The directory itself (a link in its place is not followed, and nothing blocks).
    let file = match store::open::open_dir(dir) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Kept::Missing),
        Err(e) => return Err(Kept::Failed(e.to_string())),
    };
    // Held until the rename is done: no recorder can be holding it meanwhile.
    let _lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(l) => Some(l),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => return Err(Kept::Live),
        Err(_) => None,
    };
    // Recorders from before the directory lock: trust meta.json and the pid.
    if let Ok(Some(open)) = store::open_session(dir) {
        if open.meta_problem.is_none()
            && open.meta.state == SessionState::Running
            && store::process_alive(open.meta.recorder_pid)
        {
            return Err(Kept::Live);
        }
    }
    let bytes = store::disk_usage(dir);
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let to = sessions_dir.join(format!("{TRASH_PREFIX}{name}-{}", store::random_hex(4)));
    fs::rename(dir, &to).map_err(|e| Kept::Failed(e.to_string()))?;
    Ok((to, bytes))
}

/// Prunes the store by `settings` when a recorded shell starts, never touching the session
/// `protect` (the one starting): what it removed. Nothing to do when both limits are off.
pub fn auto_prune(root: &Path, settings: PruneSettings, protect: &str) -> io::Result<Vec<Removal>> {
    let mut policy = settings.policy();
    if policy == Policy::default() {
        return Ok(Vec::new());
    }
    let sessions = store::summarize_all(root)?;
    // The starting session's directory may not be there yet: it is one of those kept all the
    // same.
    if !sessions.iter().any(|s| s.session.id() == protect) {
        policy.keep = policy.keep.map(|k| k.saturating_sub(1));
    }
    let chosen = plan(&sessions, &policy, Some(protect));
    let dirs: Vec<PathBuf> = chosen
        .iter()
        .map(|&i| sessions[i].session.dir.clone())
        .collect();
    if dirs.is_empty() {
        return Ok(Vec::new());
    }
    remove_sessions(root, &dirs)
}

/// Deletes what earlier removals left in the trash (a removal cut short).
fn empty_trash(sessions_dir: &Path) {
    let Ok(entries) = fs::read_dir(sessions_dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with(TRASH_PREFIX) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// Parses a size: `500`, `200K`, `1.5G`, `2GiB`, `800MB`. K, M, G, T alone or with `iB` are
/// powers of 1024; with `B` alone (`KB`, `MB`) powers of 1000. Case-insensitive.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || format!("invalid size '{s}'; use forms like 500M, 2G, 1.5GiB, 800MB");
    let value: f64 = num.parse().map_err(|_| bad())?;
    let unit = unit.trim().to_ascii_lowercase();
    let scale: u64 = match unit.as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return Err(bad()),
    };
    let bytes = value * scale as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::session_meta;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("500"), Ok(500));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("2gib"), Ok(2 << 30));
        assert_eq!(parse_size("1.5K"), Ok(1536));
        assert_eq!(parse_size("800MB"), Ok(800_000_000));
        assert_eq!(parse_size(" 3 M "), Ok(3 << 20));
        for bad in ["", "G", "12x", "1.2.3M", "-5M", "1e400G"] {
            assert!(parse_size(bad).unwrap_err().contains("500M"), "{bad}");
        }
    }

    fn summary(id: &str, bytes: u64, last: u64, alive: bool) -> SessionSummary {
        SessionSummary {
            session: store::OpenSession {
                dir: PathBuf::from("/s").join(id),
                meta: session_meta(id),
                meta_problem: None,
            },
            state: SessionState::Exited,
            recorder_alive: alive,
            commands: 0,
            failed: 0,
            last_activity: last,
            bytes,
            running_command: None,
        }
    }

    #[test]
    fn plans_keep_age_and_size_and_spare_the_living() {
        let s: Vec<SessionSummary> = (0..6)
            .map(|i| summary(&format!("s{i}"), 100, i * 10, i == 1))
            .collect();
        let p = |policy: Policy, protect| plan(&s, &policy, protect);
        let keep = |n| Policy {
            keep: Some(n),
            ..Policy::default()
        };
        assert_eq!(p(keep(3), None), [0, 2], "s1 is live");
        assert_eq!(p(keep(3), Some("s0")), [2]);
        assert_eq!(p(keep(10), None), Vec::<usize>::new());
        let old = Policy {
            older_than: Some(35),
            ..Policy::default()
        };
        assert_eq!(p(old, None), [0, 2, 3]);
        let size = Policy {
            max_size: Some(250),
            ..Policy::default()
        };
        // 600 bytes, at most 250: the oldest removable go until 200 remain (s1 stays).
        assert_eq!(p(size, None), [0, 2, 3, 4]);
        let both = Policy {
            keep: Some(5),
            max_size: Some(450),
            ..Policy::default()
        };
        assert_eq!(p(both, None), [0, 2]);
        assert_eq!(
            PruneSettings {
                keep: 0,
                max_size: 0
            }
            .policy(),
            Policy::default()
        );
    }

    fn make_session(root: &Path, id: &str, state: SessionState, pid: u32) -> PathBuf {
        let dir = store::sessions_dir(root).join(id);
        store::create_private_dir(&dir).unwrap();
        let meta = store::SessionMeta {
            state,
            recorder_pid: pid,
            ..session_meta(id)
        };
        store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
        fs::write(dir.join(store::STREAM), vec![1u8; 10_000]).unwrap();
        dir
    }

    #[test]
    fn removal_spares_locked_and_live_sessions() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let ended = make_session(root, "20261122T000001.000Z-aa", SessionState::Exited, 1);
        let locked = make_session(root, "20261122T000002.000Z-bb", SessionState::Exited, 1);
        let alive = make_session(
            root,
            "20261122T000003.000Z-cc",
            SessionState::Running,
            std::process::id(),
        );
        let dead = make_session(
            root,
            "20261122T000004.000Z-dd",
            SessionState::Running,
            u32::MAX,
        );
        let held = hold_session(&locked);
        assert!(session_locked(&locked));
        assert!(!session_locked(&ended));
        fs::create_dir_all(store::sessions_dir(root).join(".trash-old/x")).unwrap();
        let dirs = [ended.clone(), locked.clone(), alive.clone(), dead.clone()];
        let r = remove_sessions(root, &dirs).unwrap();
        let results: Vec<_> = r.iter().map(|r| r.result.clone().map(|_| ())).collect();
        assert_eq!(
            results,
            [Ok(()), Err(Kept::Live), Err(Kept::Live), Ok(())],
            "{r:?}"
        );
        assert!(r[0].result.as_ref().unwrap() >= &10_000);
        assert!(!ended.exists() && !dead.exists());
        assert!(locked.exists() && alive.exists());
        drop(held);
        let again = remove_sessions(root, &[locked.clone(), ended.clone()]).unwrap();
        assert!(again[0].result.is_ok());
        assert_eq!(again[1].result, Err(Kept::Missing));
        let left: Vec<_> = fs::read_dir(store::sessions_dir(root))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            left.iter().all(|n| !n.starts_with(TRASH_PREFIX)),
            "{left:?}"
        );
    }

    #[test]
    fn auto_prune_counts_the_starting_session_before_its_directory_exists() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let ids = [
            "20261122T000001.000Z-aa",
            "20261122T000002.000Z-bb",
            "20261122T000003.000Z-cc",
        ];
        let dirs: Vec<PathBuf> = ids
            .iter()
            .map(|id| make_session(root, id, SessionState::Exited, 1))
            .collect();
        let settings = PruneSettings {
            keep: 2,
            max_size: 0,
        };
        // Not created yet: the newest existing one and it make two.
        let r = auto_prune(root, settings, "20261122T000004.000Z-dd").unwrap();
        assert_eq!(r.len(), 2);
        assert!(!dirs[0].exists() && !dirs[1].exists() && dirs[2].exists());
        // There already: it counts as itself.
        make_session(
            root,
            "20261122T000004.000Z-dd",
            SessionState::Running,
            std::process::id(),
        );
        assert!(
            auto_prune(root, settings, "20261122T000004.000Z-dd")
                .unwrap()
                .is_empty()
        );
        let off = PruneSettings {
            keep: 0,
            max_size: 0,
        };
        assert!(auto_prune(root, off, "x").unwrap().is_empty());
        assert!(dirs[2].exists());
    }

    #[test]
    fn a_remover_waits_for_a_session_being_created() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let dir = store::sessions_dir(&root).join("20261122T000001.000Z-aa");
        let creating = creation_lock(&dir).unwrap();
        store::create_private_dir(&dir).unwrap();
        fs::write(dir.join(store::STREAM), b"").unwrap();
        // meta.json is not there yet: a remover must not see this directory before it is.
        let (r, d) = (root.clone(), dir.clone());
        let remover = std::thread::spawn(move || remove_sessions(&r, &[d]).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!remover.is_finished(), "the remover waits for the creation");
        let meta = store::SessionMeta {
            recorder_pid: std::process::id(),
            ..session_meta("x")
        };
        store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
        let held = hold_session(&dir);
        drop(creating);
        let r = remover.join().unwrap();
        assert_eq!(r[0].result, Err(Kept::Live));
        assert!(dir.join(store::META).exists());
        drop(held);
    }
}
