//! What can be said about a session without reading its output: its state (a `running` session
//! whose recorder died is `interrupted`), how many commands ran and failed, when it was last
//! active, and how much disk it takes (every file, caches included).
//!
//! Cost: one forward pass over `commands.jsonl` (records are parsed into two fields, never kept)
//! and a walk of the session's directory.

use crate::store::{self, OpenSession, SessionState};
use serde::Deserialize;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A session at a glance.
#[derive(Debug, Clone)]
pub struct SessionSummary {
    pub session: OpenSession,
    /// What the session is now: `running` only while its recorder lives.
    pub state: SessionState,
    pub recorder_alive: bool,
    /// Commands recorded, the one running included.
    pub commands: u64,
    /// Commands with a known non-zero exit status, but for the one that ended the shell
    /// ([`ended_the_shell`]).
    pub failed: u64,
    /// The latest time anything happened (ms): a command ended or started, the stream grew,
    /// the session ended.
    pub last_activity: u64,
    /// Bytes the session's files take on disk (allocated blocks), caches included.
    pub bytes: u64,
    /// A command still running: its line (one longer than [`store::COMMAND_LINE_CAP`] chars
    /// cut to its head and tail).
    pub running_command: Option<String>,
}

impl SessionSummary {
    pub fn id(&self) -> String {
        self.session.id()
    }
}

/// Whether a record of the session whose metadata is `meta` is that of the command that ended
/// the shell: `exit` (or `logout`, zsh's `bye`, a private ` exit`, a command still running when
/// the terminal closed). The recorder closes that command as the shell ends, with the shell's
/// exit status, at the very time it seals `meta.json`; for `exit` without an argument that
/// status is the one of the command before it. So it is never a failed command of its own:
/// not counted as failed, not the "last failed command" of `ask`, `fix` and the MCP server,
/// never part of a loop. A whole run recorded as one command (`omnish wrap bash -c ...`, an
/// unhooked shell: `command_source` `argv`) keeps its status: it is the command's.
pub fn ended_the_shell(
    ended_at: u64,
    exit_code: Option<i32>,
    command_source: &str,
    meta: &store::SessionMeta,
) -> bool {
    command_source != "argv"
        && meta.ended_at == Some(ended_at)
        && meta.exit_status == exit_code
        && meta.state != SessionState::Running
}

/// The fields of a record a summary needs.
#[derive(Deserialize)]
struct Brief {
    #[serde(default)]
    seq: u64,
    #[serde(default)]
    ended_at: u64,
    #[serde(default)]
    exit_code: Option<i32>,
    #[serde(default)]
    command_source: String,
}

/// Summarizes an opened session.
pub fn summarize(session: OpenSession) -> SessionSummary {
    let dir = session.dir.clone();
    let (mut commands, mut failed, mut last_seq, mut last_end) = (0u64, 0u64, 0u64, 0u64);
    for b in store::Records::<Brief>::open(&dir.join(store::COMMANDS)) {
        commands += 1;
        failed += u64::from(
            b.exit_code.is_some_and(|c| c != 0)
                && !ended_the_shell(b.ended_at, b.exit_code, &b.command_source, &session.meta),
        );
        last_seq = last_seq.max(b.seq);
        last_end = last_end.max(b.ended_at);
    }
    let recorder_alive = session.live();
    let meta = &session.meta;
    let running = meta
        .running_command
        .as_ref()
        .filter(|r| r.seq > last_seq && meta.state == SessionState::Running);
    let state = match meta.state {
        SessionState::Running if !recorder_alive => SessionState::Interrupted,
        s => s,
    };
    if running.is_some() {
        commands += 1;
    }
    let stream_mtime = fs::symlink_metadata(dir.join(store::STREAM))
        .ok()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64);
    let last_activity = [
        meta.started_at,
        meta.ended_at.unwrap_or(0),
        last_end,
        running.map_or(0, |r| r.started_at),
        stream_mtime,
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    SessionSummary {
        running_command: running.filter(|_| recorder_alive).map(|r| {
            store::cut_middle(&r.command_line, store::COMMAND_LINE_CAP)
                .map_or_else(|| r.command_line.clone(), |cut| cut.joined())
        }),
        state,
        recorder_alive,
        commands,
        failed,
        last_activity,
        bytes: disk_usage(&dir),
        session,
    }
}

/// Bytes the files under `dir` take on disk (allocated blocks), recursively; what cannot be
/// read counts as nothing.
pub fn disk_usage(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut total = 0;
    for e in entries.flatten() {
        let Ok(m) = e.path().symlink_metadata() else {
            continue;
        };
        if m.is_dir() {
            total += disk_usage(&e.path());
        } else {
            total += m.blocks() * 512;
        }
    }
    total
}

/// Every session under `root` that can be opened, summarized, oldest first; one being created
/// right now is passed over.
pub fn summarize_all(root: &Path) -> std::io::Result<Vec<SessionSummary>> {
    let mut out = Vec::new();
    for dir in store::list_sessions(root)? {
        if let Ok(Some(s)) = store::open_session(&dir) {
            out.push(summarize(s));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::session_meta;

    #[test]
    fn counts_commands_failures_and_every_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("20261122T183045.123Z-9f3a1c");
        store::create_private_dir(&dir).unwrap();
        let mut meta = session_meta("x");
        meta.recorder_pid = u32::MAX; // no such process: the recorder died
        store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
        for (seq, exit) in [(1, Some(0)), (2, Some(1)), (3, None), (4, Some(127))] {
            let line = serde_json::json!({"seq": seq, "ended_at": 5000 + seq, "exit_code": exit});
            fs::write(
                dir.join(store::COMMANDS),
                format!(
                    "{}{line}\n",
                    fs::read_to_string(dir.join(store::COMMANDS)).unwrap_or_default()
                ),
            )
            .unwrap();
        }
        store::create_private_dir(&dir.join("cache")).unwrap();
        fs::write(dir.join("cache/1.digest"), vec![7u8; 100_000]).unwrap();
        let s = summarize(store::open_session(&dir).unwrap().unwrap());
        assert_eq!((s.commands, s.failed), (4, 2));
        assert_eq!(s.state, SessionState::Interrupted, "recorder is dead");
        assert!(!s.recorder_alive);
        assert!(s.bytes >= 100_000, "the cache counts: {}", s.bytes);
        assert!(s.last_activity >= 5004);
    }

    #[test]
    fn the_command_that_ended_the_shell_is_not_a_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("20261122T183045.123Z-9f3a1c");
        store::create_private_dir(&dir).unwrap();
        let mut meta = session_meta("x");
        meta.state = SessionState::Exited;
        meta.ended_at = Some(6000);
        meta.exit_status = Some(1);
        store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
        // `false`, then `exit`: closed as the shell ended, with its status (that of `false`).
        let lines = [
            serde_json::json!({"seq": 1, "ended_at": 5000, "exit_code": 1, "command_source": "hook"}),
            serde_json::json!({"seq": 2, "ended_at": 6000, "exit_code": 1, "command_source": "hook"}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        fs::write(dir.join(store::COMMANDS), text).unwrap();
        let s = summarize(store::open_session(&dir).unwrap().unwrap());
        assert_eq!((s.commands, s.failed), (2, 1));
        assert!(ended_the_shell(6000, Some(1), "hook", &meta));
        assert!(ended_the_shell(6000, Some(1), "screen", &meta));
        assert!(!ended_the_shell(5000, Some(1), "hook", &meta));
        // A whole run recorded as one command keeps its status: it is the command's.
        assert!(!ended_the_shell(6000, Some(1), "argv", &meta));
        // A live session has no such command yet.
        meta.state = SessionState::Running;
        meta.ended_at = None;
        assert!(!ended_the_shell(6000, Some(1), "hook", &meta));
    }
}
