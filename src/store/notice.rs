//! Saying which store file was skipped, once.
//!
//! A reader that skips a file it refused ([`crate::store::open`]) or found damaged (a line of
//! `commands.jsonl` that is not a record) says so in one line on stderr, naming the file and
//! why, the first time in the process for that file: a session with a thousand damaged lines
//! costs one line, and a long-running process (the MCP server) says it once, not at every
//! call. Everything else is served as usual.
//!
//! A process whose stderr is a terminal someone is typing in (the recorder, whose background
//! prune reads the store) asks for silence with [`quiet`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static SAID: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
static QUIET: AtomicBool = AtomicBool::new(false);

/// Skipped files are no longer said on stderr (they are still remembered).
pub fn quiet() {
    QUIET.store(true, Ordering::Relaxed);
}

/// Records that the file `path` was skipped because of `why`; the first time for this path,
/// says so on stderr: `omnish: warning: skipped PATH: WHY`.
pub fn skipped(path: &Path, why: &str) {
    say(path, |shown| format!("skipped {shown}: {}", visible(why)));
}

/// Records that `what`, a part of the file `path`, was skipped (a damaged line); the first time
/// for this path, says so on stderr: `omnish: warning: PATH: skipped WHAT`.
pub fn skipped_part(path: &Path, what: &str) {
    say(path, |shown| format!("{shown}: skipped {}", visible(what)));
}

fn visible(s: &str) -> String {
    crate::term::visible::line(s).into_owned()
}

fn say(path: &Path, line: impl FnOnce(&str) -> String) {
    if first(path) && !QUIET.load(Ordering::Relaxed) {
        let shown = visible(&path.to_string_lossy());
        eprintln!("omnish: warning: {}", line(&shown));
    }
}

/// Whether something was said (or would have been) about `path` in this process.
pub fn said(path: &Path) -> bool {
    SAID.lock()
        .map(|s| s.as_ref().is_some_and(|s| s.contains(path)))
        .unwrap_or(false)
}

/// Remembers `path`: `true` the first time.
fn first(path: &Path) -> bool {
    match SAID.lock() {
        Ok(mut s) => s
            .get_or_insert_with(HashSet::new)
            .insert(path.to_path_buf()),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_is_remembered_once() {
        let p = Path::new("/nonexistent/omnish-notice-test");
        assert!(!said(p));
        assert!(first(p));
        assert!(!first(p));
        assert!(said(p));
    }
}
