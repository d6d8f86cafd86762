//! Whether the session store is private and writable, said in one line with what to do.
//!
//! Recordings hold whatever the terminal showed (tokens printed by `cat .env`, a database
//! dump), so the store must be its user's alone: `sessions/` and every session directory owned
//! by the user, neither readable nor writable by group or others (omnish creates them 0700),
//! and the data dir owned by the user and writable by no one else (someone who may write it
//! can put a `sessions/` of their own in its place). A data dir others may only read is fine:
//! it shows them the names `sessions` and `notes.json`, nothing recorded (a directory made with
//! `mkdir` for `data_dir` is 0755, and a warning at every command about it would teach users
//! to ignore the warnings). A store that is not private says so in one line per place, naming
//! the path and the command that fixes it ([`check`], from the commands that read or write the
//! store).
//!
//! `omnish wrap` goes further ([`tighten`], on its writer thread, never on the terminal's
//! path): `sessions/` and the session directories hold nothing but recordings and are made by
//! omnish, so a loose mode there (a `cp -r` or a restored backup under a wide umask) is put
//! back to private and said once. The data dir itself may be a directory the user chose and uses
//! for other things (`data_dir`), and a directory owned by someone else cannot be fixed by
//! chmod: those are only reported.
//!
//! A write that fails ([`write_advice`]) says what to do about it: a read-only file system, a
//! directory the user cannot write, a full disk.

use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// Mode bits that let group or others read or write.
const OPEN_BITS: u32 = 0o066;
/// Mode bits that let group or others write (what matters of the data dir).
const WRITE_BITS: u32 = 0o022;

/// What to do after a write to the store at `path` failed with `e`, for the end of a line.
pub fn write_advice(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::ReadOnlyFilesystem => {
            "its file system is read-only: remount it read-write, or set data_dir (OMNISH_DATA_DIR) to a writable directory"
        }
        io::ErrorKind::PermissionDenied => {
            "you may not write there: fix its owner or mode, or set data_dir (OMNISH_DATA_DIR) to a directory of yours"
        }
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => {
            "the disk is full: free some space (`omnish sessions prune` removes old sessions)"
        }
        io::ErrorKind::NotADirectory | io::ErrorKind::AlreadyExists => {
            "a file is in the way of the directory: move it, or set data_dir (OMNISH_DATA_DIR) elsewhere"
        }
        _ => "set data_dir (OMNISH_DATA_DIR) to a directory you can write",
    }
}

/// `path` as a shell word for a command to copy, control characters shown visibly.
fn shell_word(path: &Path) -> String {
    let s = path.to_string_lossy();
    let quoted = shlex::try_quote(&s).unwrap_or(s.clone());
    crate::term::visible::line(&quoted).into_owned()
}

fn shown(path: &Path) -> String {
    crate::term::visible::line(&path.to_string_lossy()).into_owned()
}

/// "read by other users", "read and written by its group and other users": who may do what,
/// from the mode's group and other bits.
fn exposure(mode: u32) -> String {
    let read = mode & 0o044 != 0;
    let write = mode & 0o022 != 0;
    let group = mode & 0o060 != 0;
    let others = mode & 0o006 != 0;
    let what = match (read, write) {
        (true, true) => "read and written",
        (false, true) => "written",
        _ => "read",
    };
    let who = match (group, others) {
        (true, true) => "its group and other users",
        (true, false) => "its group",
        _ => "other users",
    };
    format!("{what} by {who}")
}

/// The user name of `uid`, else the number.
fn user_name(uid: u32) -> String {
    match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
        Ok(Some(u)) => format!("{} (uid {uid})", u.name),
        _ => format!("uid {uid}"),
    }
}

/// The one-line warning about one directory, or `None` when it is this user's and the `bits`
/// of its mode that matter ([`OPEN_BITS`], [`WRITE_BITS`]) are clear.
fn warn_dir(path: &Path, meta: &fs::Metadata, what: &str, bits: u32) -> Option<String> {
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        let mine = nix::unistd::User::from_uid(nix::unistd::geteuid())
            .ok()
            .flatten()
            .map_or_else(|| me.to_string(), |u| u.name);
        return Some(format!(
            "omnish: warning: {what} {} is owned by {}, not by you, so it is not private to you; run: sudo chown -R {mine} {}",
            shown(path),
            user_name(meta.uid()),
            shell_word(path)
        ));
    }
    let mode = meta.mode() & 0o777;
    let fix = if bits == WRITE_BITS { "go-w" } else { "go-rwx" };
    (mode & bits != 0).then(|| {
        format!(
            "omnish: warning: {what} {} can be {} (mode {mode:o}); run: chmod {fix} {}",
            shown(path),
            exposure(mode & bits),
            shell_word(path)
        )
    })
}

/// The session directories under `sessions` that are not private to this user: (path, mode,
/// owner) of each.
fn open_sessions(sessions: &Path) -> Vec<(std::path::PathBuf, u32, u32)> {
    let me = nix::unistd::geteuid().as_raw();
    let Ok(entries) = fs::read_dir(sessions) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(super::is_session_id))
        .filter_map(|e| {
            // The entry itself (a symlink is not followed): that is what a reader opens.
            let meta = e.metadata().ok()?;
            let mode = meta.mode() & 0o777;
            (meta.is_dir() && (meta.uid() != me || mode & OPEN_BITS != 0))
                .then(|| (e.path(), mode, meta.uid()))
        })
        .collect()
}

/// One line for the session directories that are not private (`open`, from [`open_sessions`]).
fn warn_sessions(sessions: &Path, open: &[(std::path::PathBuf, u32, u32)]) -> Option<String> {
    let (first, mode, uid) = open.first()?;
    let me = nix::unistd::geteuid().as_raw();
    let id = first.file_name().unwrap_or_default().to_string_lossy();
    let why = if *uid != me {
        format!("{id} is owned by {}", user_name(*uid))
    } else {
        format!("{id} can be {} (mode {mode:o})", exposure(*mode))
    };
    let fix = if *uid != me {
        format!(
            "sudo chown -R {} {}",
            nix::unistd::User::from_uid(nix::unistd::geteuid())
                .ok()
                .flatten()
                .map_or_else(|| me.to_string(), |u| u.name),
            shell_word(sessions)
        )
    } else {
        format!("chmod -R go-rwx {}", shell_word(sessions))
    };
    Some(if open.len() == 1 {
        format!(
            "omnish: warning: a session in {} is not private: {why}; run: {fix}",
            shown(sessions)
        )
    } else {
        format!(
            "omnish: warning: {} sessions in {} are not private ({why}, ...); run: {fix}",
            open.len(),
            shown(sessions)
        )
    })
}

/// Whether someone else can pass through the directory `meta` describes: it is not this
/// user's, or group or others may search it.
fn passable(meta: &fs::Metadata) -> bool {
    meta.uid() != nix::unistd::geteuid().as_raw() || meta.mode() & 0o011 != 0
}

/// The warnings about a store at `root` that is not private to this user: the data dir,
/// `sessions/` and the session directories (one line for all of those). Nothing when the store
/// does not exist yet or is private. Two `stat`s; the session directories are looked at (one
/// `stat` each) only when others can reach them, through a data dir and a `sessions/` that let
/// them pass: behind a private one they are private, however they are set.
pub fn check(root: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    let Ok(root_meta) = fs::metadata(root) else {
        return lines;
    };
    lines.extend(warn_dir(root, &root_meta, "the session store", WRITE_BITS));
    let sessions = super::sessions_dir(root);
    let Ok(meta) = fs::metadata(&sessions) else {
        return lines;
    };
    lines.extend(warn_dir(
        &sessions,
        &meta,
        "the sessions directory",
        OPEN_BITS,
    ));
    if passable(&root_meta) && passable(&meta) {
        lines.extend(warn_sessions(&sessions, &open_sessions(&sessions)));
    }
    lines
}

/// What `omnish wrap` does at the start of a session (on its writer thread, once the session's
/// directory exists): `sessions/` and the session directories that are this user's but open to
/// others are made private again (`go-rwx`), with one line saying so; the data dir and
/// directories owned by someone else are reported as by [`check`].
pub fn tighten(root: &Path) -> Vec<String> {
    let me = nix::unistd::geteuid().as_raw();
    let mut lines = Vec::new();
    if let Ok(meta) = fs::metadata(root) {
        lines.extend(warn_dir(root, &meta, "the session store", WRITE_BITS));
    }
    let sessions = super::sessions_dir(root);
    let private = |path: &Path, mode: u32| {
        fs::set_permissions(path, fs::Permissions::from_mode(mode & !0o077)).is_ok()
    };
    if let Ok(meta) = fs::metadata(&sessions) {
        let mode = meta.mode() & 0o777;
        if meta.is_dir() && meta.uid() == me && mode & OPEN_BITS != 0 && private(&sessions, mode) {
            lines.push(format!(
                "omnish: {} could be {} (mode {mode:o}); omnish made it private (chmod go-rwx)",
                shown(&sessions),
                exposure(mode)
            ));
        } else {
            lines.extend(warn_dir(
                &sessions,
                &meta,
                "the sessions directory",
                OPEN_BITS,
            ));
        }
    }
    let open = open_sessions(&sessions);
    let (mine, left): (Vec<_>, Vec<_>) = open
        .into_iter()
        .partition(|(path, mode, uid)| *uid == me && private(path, *mode));
    if !mine.is_empty() {
        lines.push(format!(
            "omnish: {} session{} in {} could be read or written by others; omnish made {} private (chmod go-rwx)",
            mine.len(),
            if mine.len() == 1 { "" } else { "s" },
            shown(&sessions),
            if mine.len() == 1 { "it" } else { "them" }
        ));
    }
    lines.extend(warn_sessions(&sessions, &left));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().mode() & 0o777
    }

    #[test]
    fn exposure_names_who_and_what() {
        assert_eq!(exposure(0o755), "read by its group and other users");
        assert_eq!(exposure(0o704), "read by other users");
        assert_eq!(exposure(0o770), "read and written by its group");
        assert_eq!(exposure(0o702), "written by other users");
    }

    #[test]
    fn a_private_store_says_nothing_and_an_open_one_names_path_and_fix() {
        let root = tempfile::tempdir().unwrap();
        let sessions = super::super::sessions_dir(root.path());
        let a = sessions.join("20261122T183045.123Z-9f3a1c");
        let b = sessions.join("20261122T183046.123Z-9f3a1d");
        for d in [&a, &b] {
            super::super::create_private_dir(d).unwrap();
        }
        fs::set_permissions(root.path(), fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(check(root.path()), Vec::<String>::new());
        // Behind a private data dir, an open session is out of others' reach: not looked at.
        fs::set_permissions(&a, fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(check(root.path()), Vec::<String>::new());

        // A data dir others may read but not write is fine.
        fs::set_permissions(root.path(), fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(check(root.path()), Vec::<String>::new());
        fs::set_permissions(root.path(), fs::Permissions::from_mode(0o775)).unwrap();
        fs::set_permissions(&sessions, fs::Permissions::from_mode(0o750)).unwrap();
        fs::set_permissions(&a, fs::Permissions::from_mode(0o777)).unwrap();
        let lines = check(root.path());
        assert_eq!(lines.len(), 3, "{lines:?}");
        let r = root.path().display().to_string();
        assert!(
            lines[0].contains(&format!(
                "{r} can be written by its group (mode 775); run: chmod go-w {r}"
            )),
            "{lines:?}"
        );
        assert!(
            lines[1].contains("can be read by its group (mode 750)"),
            "{lines:?}"
        );
        assert!(
            lines[2].contains("20261122T183045.123Z-9f3a1c can be read and written by its group and other users (mode 777); run: chmod -R go-rwx"),
            "{lines:?}"
        );

        // wrap puts sessions/ and the session back to private, and only reports the data dir.
        let lines = tighten(root.path());
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].contains("chmod go-w"), "{lines:?}");
        assert!(lines[1].contains("omnish made it private"), "{lines:?}");
        assert!(lines[2].contains("1 session in"), "{lines:?}");
        assert_eq!((mode(&sessions), mode(&a), mode(&b)), (0o700, 0o700, 0o700));
        assert_eq!(mode(root.path()), 0o775);
    }
}
