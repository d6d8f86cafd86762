//! Pinned notes on disk: `$OMNISH_DATA_DIR/notes.json`, written by `omnish note`, read by every
//! context front end.
//!
//! ```text
//! notes.json   {"version": 1, "next_id": 4, "notes": [Note, ...]}   0600, in insertion order
//! notes.lock   empty; held with flock(2) by every writer               0600
//! ```
//!
//! A writer takes an exclusive `flock` on `notes.lock`, reads `notes.json`, changes it and
//! replaces it atomically (a 0600 temp file beside it, then a rename) before letting go, so two
//! writers never lose each other's notes and a reader (which takes no lock) always sees a whole
//! file, old or new. Expired notes are removed by every writer ([`update`]).

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

pub const NOTES: &str = "notes.json";
pub const NOTES_LOCK: &str = "notes.lock";

/// One pinned note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// Given with `--key`, else the note's number (`1`, `2`, ...); unique.
    pub key: String,
    pub text: String,
    /// Higher first; 0 unless given.
    #[serde(default)]
    pub priority: i64,
    /// ms since the epoch.
    pub created_at: u64,
    /// ms since the epoch; absent: never expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The project directory (git root, else cwd) the note is scoped to; absent: everywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Who pinned it (`--source`: a person, a script, an agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Note {
    pub fn expired(&self, now_ms: u64) -> bool {
        self.expires_at.is_some_and(|t| t <= now_ms)
    }
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteFile {
    pub version: u32,
    /// The number the next note without a key gets.
    pub next_id: u64,
    /// In insertion order.
    pub notes: Vec<Note>,
}

impl Default for NoteFile {
    fn default() -> Self {
        NoteFile {
            version: 1,
            next_id: 1,
            notes: Vec::new(),
        }
    }
}

impl NoteFile {
    /// A key no note has: the next number.
    pub fn fresh_key(&mut self) -> String {
        loop {
            let key = self.next_id.to_string();
            self.next_id += 1;
            if !self.notes.iter().any(|n| n.key == key) {
                return key;
            }
        }
    }
}

pub fn notes_path(root: &Path) -> PathBuf {
    root.join(NOTES)
}

/// The notes stored under `root` (none when the file does not exist yet), expired ones
/// included. Takes no lock: the file is only ever replaced whole. A `notes.json` that is not a
/// regular file or is over [`super::open::NOTES_CAP`] is an error, like an invalid one.
pub fn load(root: &Path) -> Result<NoteFile> {
    let path = notes_path(root);
    let bytes = match super::open::read_capped(&path, super::open::NOTES_CAP) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(NoteFile::default()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{} is not a valid notes file; fix or remove it (`omnish note clear` starts over)",
            path.display()
        )
    })
}

/// Changes the notes under an exclusive lock: reads them, drops expired ones, calls `change`,
/// and writes the result atomically. Returns what `change` returned. A notes file that cannot be
/// parsed is an error here too (never silently replaced), unless `start_over` is set.
pub fn update<T>(
    root: &Path,
    now_ms: u64,
    start_over: bool,
    change: impl FnOnce(&mut NoteFile) -> Result<T>,
) -> Result<T> {
    super::create_private_dir(root)
        .with_context(|| format!("cannot create the data directory {}", root.display()))?;
    let lock_path = root.join(NOTES_LOCK);
    let file = super::open_private(&lock_path)
        .with_context(|| format!("cannot open {}", lock_path.display()))?;
    let _lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| io::Error::from(e))
        .with_context(|| format!("cannot lock {}", lock_path.display()))?;
    let mut notes = match load(root) {
        Ok(n) => n,
        Err(_) if start_over => NoteFile::default(),
        Err(e) => return Err(e),
    };
    notes.notes.retain(|n| !n.expired(now_ms));
    let result = change(&mut notes)?;
    let path = notes_path(root);
    super::write_json_atomic(&path, &notes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(result)
}

/// The notes a context built in `project` shows, at `now_ms`: unexpired, unscoped or scoped to
/// `project` or a directory above it, highest priority first, ties in insertion order.
pub fn visible(file: &NoteFile, now_ms: u64, project: Option<&Path>) -> Vec<Note> {
    let mut shown: Vec<Note> = file
        .notes
        .iter()
        .filter(|n| !n.expired(now_ms))
        .filter(|n| match &n.project {
            None => true,
            Some(p) => project.is_some_and(|here| here.starts_with(p)),
        })
        .cloned()
        .collect();
    // A stable sort keeps insertion order among equal priorities.
    shown.sort_by_key(|n| std::cmp::Reverse(n.priority));
    shown
}

/// Whether any note has expired (so a reader may ask a writer to clean up).
pub fn any_expired(file: &NoteFile, now_ms: u64) -> bool {
    file.notes.iter().any(|n| n.expired(now_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn note(key: &str, priority: i64, project: Option<&str>) -> Note {
        Note {
            key: key.into(),
            text: format!("note {key}"),
            priority,
            created_at: 1,
            expires_at: None,
            project: project.map(String::from),
            source: None,
        }
    }

    #[test]
    fn update_round_trips_with_private_modes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("data");
        let key = update(&root, 10, false, |f| {
            let k = f.fresh_key();
            f.notes.push(note(&k, 0, None));
            Ok(k)
        })
        .unwrap();
        assert_eq!(key, "1");
        let f = load(&root).unwrap();
        assert_eq!(f.notes.len(), 1);
        assert_eq!(f.next_id, 2);
        for name in [NOTES, NOTES_LOCK] {
            let mode = std::fs::metadata(root.join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}");
        }
        let mode = std::fs::metadata(&root).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn fresh_keys_skip_taken_ones() {
        let mut f = NoteFile::default();
        f.notes.push(note("1", 0, None));
        f.notes.push(note("2", 0, None));
        assert_eq!(f.fresh_key(), "3");
        assert_eq!(f.next_id, 4);
    }

    #[test]
    fn visible_orders_by_priority_then_insertion_and_scopes() {
        let mut f = NoteFile {
            notes: vec![
                note("a", 0, None),
                note("b", 5, None),
                note("c", 0, Some("/p")),
                note("d", 5, Some("/q")),
                note("e", 5, None),
            ],
            ..NoteFile::default()
        };
        let mut gone = note("x", 9, None);
        gone.expires_at = Some(100);
        f.notes.push(gone);
        let keys = |v: Vec<Note>| v.into_iter().map(|n| n.key).collect::<Vec<_>>();
        assert_eq!(keys(visible(&f, 100, None)), ["b", "e", "a"]);
        assert_eq!(
            keys(visible(&f, 100, Some(Path::new("/p")))),
            ["b", "e", "a", "c"]
        );
        assert_eq!(keys(visible(&f, 99, None)), ["x", "b", "e", "a"]);
        assert_eq!(
            keys(visible(&f, 100, Some(Path::new("/p/sub")))),
            ["b", "e", "a", "c"]
        );
        assert_eq!(
            keys(visible(&f, 100, Some(Path::new("/pq")))),
            ["b", "e", "a"]
        );
        assert!(any_expired(&f, 100));
        assert!(!any_expired(&f, 99));
    }

    #[test]
    fn update_drops_expired_and_refuses_a_broken_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        update(root, 0, false, |f| {
            let mut n = note("t", 0, None);
            n.expires_at = Some(50);
            f.notes.push(n);
            f.notes.push(note("k", 0, None));
            Ok(())
        })
        .unwrap();
        update(root, 60, false, |_| Ok(())).unwrap();
        let f = load(root).unwrap();
        assert_eq!(f.notes.len(), 1);
        assert_eq!(f.notes[0].key, "k");
        std::fs::write(notes_path(root), "{not json").unwrap();
        let err = update(root, 60, false, |_| Ok(())).unwrap_err();
        assert!(
            format!("{err:#}").contains("not a valid notes file"),
            "{err:#}"
        );
        assert_eq!(
            std::fs::read_to_string(notes_path(root)).unwrap(),
            "{not json",
            "a broken file is never replaced unasked"
        );
        update(root, 60, true, |_| Ok(())).unwrap();
        assert!(load(root).unwrap().notes.is_empty());
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let root = root.clone();
                std::thread::spawn(move || {
                    for i in 0..20 {
                        update(&root, 0, false, |f| {
                            let k = f.fresh_key();
                            let mut n = note(&k, 0, None);
                            n.text = format!("{t}-{i}");
                            f.notes.push(n);
                            Ok(())
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let f = load(&root).unwrap();
        assert_eq!(f.notes.len(), 160);
        let mut keys: Vec<_> = f.notes.iter().map(|n| n.key.clone()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 160);
    }
}
