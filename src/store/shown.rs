//! How many commands omnish's own front ends showed in a recorded terminal, so that the record
//! of such a run folds to "showed N commands" rather than a count of lines
//! (`context::stages::own`).
//!
//! ```text
//! sessions/<id>/shown/<ms>.<pid>.<count>   an empty file per run of `context`, `search`,
//!                                          `sessions show` or `export` whose output went to
//!                                          that session's terminal: when it finished (ms since
//!                                          the epoch), its process, how many commands it showed
//! ```
//!
//! The front end writes it (created with O_EXCL, never written through; nothing the recorder
//! writes is touched, as for `attached/`), after printing, while the shell still runs it: its
//! time falls between the start and the end of the command's record, which is how a reader
//! finds it. Best effort both ways: a run that could not note its count folds by its lines.

use crate::store::{self, open};
use std::fs;
use std::path::Path;

/// The directory of a session that holds the counts.
pub const SHOWN: &str = "shown";
/// Entries read per session at most (the directory is listed whole otherwise).
const MAX_ENTRIES: usize = 16_384;

/// Notes that this process showed `count` commands on the terminal of the session `id` (best
/// effort, silent).
pub fn note(root: &Path, id: &str, count: usize) {
    let Some(dir) = store::session_dir(root, id) else {
        return;
    };
    let dir = dir.join(SHOWN);
    if store::create_store_dir(&dir).is_err() {
        return;
    }
    let name = format!("{}.{}.{count}", store::now_ms(), std::process::id());
    let _ = open::create_new(&dir.join(name));
}

/// The counts noted in the session `dir`: (time, count), by time.
pub fn counts(dir: &Path) -> Vec<(u64, u64)> {
    let Ok(entries) = fs::read_dir(dir.join(SHOWN)) else {
        return Vec::new();
    };
    let mut out: Vec<(u64, u64)> = entries
        .take(MAX_ENTRIES)
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let mut parts = name.to_str()?.split('.');
            let at = parts.next()?.parse().ok()?;
            let _pid: u32 = parts.next()?.parse().ok()?;
            let count = parts.next()?.parse().ok()?;
            parts.next().is_none().then_some((at, count))
        })
        .collect();
    out.sort_unstable();
    out
}

/// The count noted between `from` and `to` (ms, both included), the last one there.
pub fn within(counts: &[(u64, u64)], from: u64, to: u64) -> Option<u64> {
    let end = counts.partition_point(|&(at, _)| at <= to);
    counts[..end]
        .last()
        .filter(|&&(at, _)| at >= from)
        .map(|&(_, n)| n)
}

/// Notes `count` for the terminal this process prints on, when it is a recorded session's
/// (`OMNISH_SESSION_ID` names one and stdout is a terminal: what was shown reached it).
pub fn note_if_on_terminal(root: &Path, count: usize) {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return;
    }
    if let Ok(id) = std::env::var("OMNISH_SESSION_ID") {
        note(root, &id, count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_found_in_its_commands_time_only() {
        let tmp = tempfile::tempdir().unwrap();
        let id = "20261126T101500.123Z-abcdef";
        store::create_private_dir(&store::sessions_dir(tmp.path()).join(id)).unwrap();
        let before = store::now_ms();
        note(tmp.path(), id, 7);
        let after = store::now_ms();
        let dir = store::sessions_dir(tmp.path()).join(id);
        fs::write(dir.join(SHOWN).join("junk"), "").unwrap();
        let c = counts(&dir);
        assert_eq!(c.len(), 1);
        assert_eq!(within(&c, before, after), Some(7));
        assert_eq!(within(&c, after + 1, after + 10), None);
        assert_eq!(within(&c, 0, before.saturating_sub(1)), None);
        let many = [(10, 1), (20, 2), (30, 3)];
        assert_eq!(within(&many, 15, 25), Some(2));
        assert_eq!(within(&many, 15, 35), Some(3));
        assert_eq!(within(&many, 31, 40), None);
        // Not a session: nothing noted, nothing said.
        note(tmp.path(), "../x", 1);
        note(tmp.path(), "20261126T101500.123Z-ffffff", 1);
    }
}
