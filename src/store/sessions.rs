//! Finding and opening sessions: which directories under `sessions/` are sessions, their
//! metadata (or what can be said without it), and whether their recorder still runs.

use crate::store::{self, SessionMeta, SessionState};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Whether `name` has the form of a session id (`20261122T183045.123Z-9f3a1c`): anything else
/// under `sessions/` (a `backup` folder, an editor's temp file) is not a session.
pub fn is_session_id(name: &str) -> bool {
    let b = name.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    b.len() > 21
        && digits(0..8)
        && b[8] == b'T'
        && digits(9..15)
        && b[15] == b'.'
        && digits(16..19)
        && b[19] == b'Z'
        && b[20] == b'-'
        && b[21..].iter().all(|c| c.is_ascii_hexdigit())
}

/// Session directories under `root`, oldest first (ids sort by start time). Only real
/// directories count: an entry named like a session that is a symbolic link (which could point
/// anywhere, out of the store) is passed over, and said once ([`store::notice`]).
pub fn list_sessions(root: &Path) -> io::Result<Vec<PathBuf>> {
    let dir = store::sessions_dir(root);
    let mut out: Vec<PathBuf> = match fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_str().is_some_and(is_session_id))
            .filter(|e| match e.file_type() {
                // The entry itself, not what a link points to.
                Ok(t) if t.is_dir() => true,
                Ok(t) if t.is_symlink() => {
                    store::notice::skipped(
                        &e.path(),
                        "a symbolic link, not a session directory (it could point out of the store)",
                    );
                    false
                }
                _ => false,
            })
            .map(|e| e.path())
            .collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    out.sort();
    Ok(out)
}

/// The directory of session `id` under `root`, when `id` has the form of a session id and the
/// directory is a real one (not a symbolic link): for an id taken from the environment
/// (`OMNISH_SESSION_ID`), which must not lead out of the store.
pub fn session_dir(root: &Path, id: &str) -> Option<PathBuf> {
    if !is_session_id(id) {
        return None;
    }
    let dir = store::sessions_dir(root).join(id);
    fs::symlink_metadata(&dir)
        .is_ok_and(|m| m.is_dir())
        .then_some(dir)
}

/// [`list_sessions`], with an error in one line naming the directory that could not be listed.
pub fn session_dirs(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    list_sessions(root).map_err(|e| {
        anyhow::anyhow!(
            "cannot list sessions in {}: {e}",
            store::sessions_dir(root).display()
        )
    })
}

/// The id of the session in `dir`: the directory's name, whatever the files inside claim.
pub fn dir_id(dir: &Path) -> String {
    dir.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// The random suffix of a session id: the part after its last `-`, what a person reads and types.
pub fn id_suffix(id: &str) -> &str {
    id.rsplit('-').next().unwrap_or(id)
}

/// Which of `ids` `given` names: the id itself, else the one id it is a prefix of, else the one
/// id whose random suffix ([`id_suffix`]) it is a prefix of. `Err` lists every id it could name
/// (none: no match; several: ambiguous).
pub fn match_id<'a>(ids: &[&'a str], given: &str) -> Result<&'a str, Vec<&'a str>> {
    if given.is_empty() {
        return Err(Vec::new());
    }
    if let Some(id) = ids.iter().find(|id| **id == given) {
        return Ok(id);
    }
    let mut found: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| id.starts_with(given))
        .collect();
    if found.is_empty() {
        found = ids
            .iter()
            .copied()
            .filter(|id| id_suffix(id).starts_with(given))
            .collect();
    }
    match found.as_slice() {
        [one] => Ok(one),
        _ => Err(found),
    }
}

/// The directory of the session `given` names among those under `root` (see [`match_id`]),
/// or an error in one line saying what matched.
pub fn resolve_session(root: &Path, given: &str) -> anyhow::Result<PathBuf> {
    let names: Vec<String> = session_dirs(root)?.iter().map(|d| dir_id(d)).collect();
    let ids: Vec<&str> = names.iter().map(String::as_str).collect();
    match match_id(&ids, given) {
        Ok(id) => Ok(store::sessions_dir(root).join(id)),
        Err(many) if many.len() > 1 => {
            let shown: Vec<&str> = many.iter().rev().take(5).copied().collect();
            anyhow::bail!(
                "session '{given}' is ambiguous: {} sessions match it ({}{}); give more of the id",
                many.len(),
                shown.join(", "),
                if many.len() > shown.len() {
                    ", ..."
                } else {
                    ""
                }
            )
        }
        Err(_) if ids.is_empty() => anyhow::bail!(
            "no session '{given}': no recorded sessions in {}",
            store::sessions_dir(root).display()
        ),
        Err(_) => {
            let recent: Vec<&str> = ids.iter().rev().take(3).copied().collect();
            anyhow::bail!(
                "no session '{given}'; most recent: {} (`omnish sessions list` shows them all)",
                recent.join(", ")
            )
        }
    }
}

/// A session directory with its metadata.
#[derive(Debug, Clone)]
pub struct OpenSession {
    pub dir: PathBuf,
    pub meta: SessionMeta,
    /// Why `meta.json` could not be used, when the metadata was pieced together without it.
    pub meta_problem: Option<String>,
}

impl OpenSession {
    /// The session's id: its directory's name, whatever the files inside claim.
    pub fn id(&self) -> String {
        dir_id(&self.dir)
    }

    /// The recorder is still running (its process is alive and it has not sealed meta.json).
    pub fn live(&self) -> bool {
        self.meta_problem.is_none()
            && self.meta.state == SessionState::Running
            && process_alive(self.meta.recorder_pid)
    }
}

/// Opens a session. A missing, empty or invalid `meta.json` is not fatal: the session is still
/// read from its commands and stream, and `meta_problem` says what was wrong; one that is not a
/// regular file or is over [`store::open::META_CAP`] is not read at all, and is also said once
/// ([`store::notice`]). `Ok(None)` for a directory that holds none of the three files (a session
/// being created right now).
pub fn open_session(dir: &Path) -> io::Result<Option<OpenSession>> {
    let id = dir_id(dir);
    let meta_path = dir.join(store::META);
    let problem = match store::open::read_capped(&meta_path, store::open::META_CAP) {
        Ok(bytes) => match serde_json::from_slice::<SessionMeta>(&bytes) {
            Ok(mut meta) => {
                meta.id = id;
                return Ok(Some(OpenSession {
                    dir: dir.to_path_buf(),
                    meta,
                    meta_problem: None,
                }));
            }
            Err(_) if bytes.iter().all(u8::is_ascii_whitespace) => "meta.json is empty".to_string(),
            Err(e) => format!("meta.json is not valid ({e})"),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => "meta.json is missing".to_string(),
        Err(e) if store::open::is_refused(&e) => {
            store::notice::skipped(&meta_path, &e.to_string());
            format!("meta.json is not read ({e})")
        }
        Err(e) => format!("cannot read meta.json ({e})"),
    };
    // Whatever is there counts, a link included (not followed).
    let has = |name: &str| fs::symlink_metadata(dir.join(name)).is_ok();
    if !has(store::COMMANDS) && !has(store::STREAM) && !has(store::META) {
        return Ok(None);
    }
    // What the newest record says stands in for the metadata.
    let last = store::RecordsBackwards::open(&dir.join(store::COMMANDS))
        .ok()
        .and_then(|mut r| r.next_record());
    let meta = SessionMeta {
        id: id.clone(),
        shell: String::new(),
        argv: Vec::new(),
        pid: None,
        recorder_pid: 0,
        hostname: String::new(),
        cwd: last.as_ref().map(|r| r.cwd.clone()).unwrap_or_default(),
        started_at: 0,
        ended_at: last.as_ref().map(|r| r.ended_at),
        exit_status: None,
        omnish_version: String::new(),
        state: SessionState::Interrupted,
        cols: last.as_ref().map_or(80, |r| r.cols),
        rows: 24,
        hooked: true,
        running_command: None,
        recording_error: None,
        recording_stopped_at: None,
        user: None,
        nest: Vec::new(),
        paused: None,
        agent_session: None,
        attached_to: None,
        author: None,
    };
    Ok(Some(OpenSession {
        dir: dir.to_path_buf(),
        meta,
        meta_problem: Some(problem),
    }))
}

/// Whether a process with this id exists (signal 0 checks without sending anything).
pub fn process_alive(pid: u32) -> bool {
    use nix::errno::Errno;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    pid > 0 && matches!(kill(Pid::from_raw(pid), None), Ok(()) | Err(Errno::EPERM))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_session_ids_count_as_sessions() {
        assert!(is_session_id("20261122T183045.123Z-9f3a1c"));
        for name in [
            "backup",
            "20261122T183045.123Z-",
            "20261122T183045.123Z-xyz",
            ".tmp",
            "",
        ] {
            assert!(!is_session_id(name), "{name}");
        }
        let tmp = tempfile::tempdir().unwrap();
        let s = store::sessions_dir(tmp.path());
        for d in [
            "backup",
            "20261122T183045.123Z-9f3a1c",
            "20261122T183046.000Z-00aa",
        ] {
            fs::create_dir_all(s.join(d)).unwrap();
        }
        fs::write(s.join("20261122T183047.000Z-ff"), "a file").unwrap();
        let got: Vec<String> = list_sessions(tmp.path())
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            got,
            ["20261122T183045.123Z-9f3a1c", "20261122T183046.000Z-00aa"]
        );
    }

    #[test]
    fn a_session_without_usable_metadata_is_still_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("20261122T183045.123Z-9f3a1c");
        fs::create_dir_all(&dir).unwrap();
        assert!(open_session(&dir).unwrap().is_none(), "being created");
        fs::write(dir.join(store::STREAM), b"").unwrap();
        let s = open_session(&dir).unwrap().unwrap();
        assert_eq!(s.meta_problem.as_deref(), Some("meta.json is missing"));
        assert!(!s.live());
        fs::write(dir.join(store::META), b"\n").unwrap();
        let s = open_session(&dir).unwrap().unwrap();
        assert_eq!(s.meta_problem.as_deref(), Some("meta.json is empty"));
        fs::write(dir.join(store::META), b"{\"id\": 3").unwrap();
        let s = open_session(&dir).unwrap().unwrap();
        assert!(
            s.meta_problem
                .as_deref()
                .unwrap()
                .starts_with("meta.json is not valid")
        );
        assert_eq!(s.id(), "20261122T183045.123Z-9f3a1c");
    }

    #[test]
    fn ids_are_chosen_by_prefix_or_by_random_suffix() {
        let ids = [
            "20261122T183045.123Z-9f3a1c",
            "20261122T183046.000Z-9f00aa",
            "20261123T090000.000Z-b7c2d4",
        ];
        let m = |given: &str| match_id(&ids, given);
        assert_eq!(m("20261123"), Ok(ids[2]));
        assert_eq!(m("20261122T183045"), Ok(ids[0]));
        assert_eq!(m(ids[1]), Ok(ids[1]));
        // The random suffix, whole or a prefix of it.
        assert_eq!(m("b7c2d4"), Ok(ids[2]));
        assert_eq!(m("9f3"), Ok(ids[0]));
        assert_eq!(m("b7"), Ok(ids[2]));
        // Ambiguous: both listed; nothing: none.
        assert_eq!(m("2026112"), Err(ids.to_vec()));
        assert_eq!(m("9f"), Err(vec![ids[0], ids[1]]));
        assert_eq!(m("zz"), Err(vec![]));
        assert_eq!(m(""), Err(vec![]));
        // A prefix of the whole id wins over a suffix that happens to start the same.
        let odd = ["20261122T183045.123Z-2026ab", "20261123T090000.000Z-ffffff"];
        assert_eq!(match_id(&odd, "20261123"), Ok(odd[1]));
        assert_eq!(id_suffix(ids[0]), "9f3a1c");
    }

    #[test]
    fn resolving_names_the_matches_in_its_error() {
        let tmp = tempfile::tempdir().unwrap();
        let s = store::sessions_dir(tmp.path());
        let e = resolve_session(tmp.path(), "x").unwrap_err().to_string();
        assert!(e.contains("no recorded sessions"), "{e}");
        for d in ["20261122T183045.123Z-9f3a1c", "20261122T183046.000Z-9f00aa"] {
            fs::create_dir_all(s.join(d)).unwrap();
        }
        assert_eq!(
            resolve_session(tmp.path(), "9f3").unwrap(),
            s.join("20261122T183045.123Z-9f3a1c")
        );
        let e = resolve_session(tmp.path(), "9f").unwrap_err().to_string();
        assert!(e.contains("ambiguous: 2 sessions"), "{e}");
        let e = resolve_session(tmp.path(), "abc").unwrap_err().to_string();
        assert!(
            e.contains("most recent: 20261122T183046.000Z-9f00aa"),
            "{e}"
        );
    }

    #[test]
    fn process_liveness() {
        assert!(process_alive(std::process::id()));
        assert!(!process_alive(0));
        assert!(!process_alive(u32::MAX));
    }
}
