//! Builders of store records for the benches and tests that write a session store by hand:
//! sensible defaults that callers adjust with struct update syntax.

use omnish::store::{CommandRecord, SessionMeta, SessionState};

/// Command `seq` of session `id`: a hooked `true` in `/home/dev/proj` that exited 0 in a
/// 120-column terminal, with no output, at time 0.
pub fn command_record(id: &str, seq: u64) -> CommandRecord {
    CommandRecord {
        command_id: format!("{id}:{seq}"),
        session_id: id.into(),
        seq,
        command_line: "true".into(),
        command_line_chars: None,
        cwd: "/home/dev/proj".into(),
        started_at: 0,
        ended_at: 0,
        exit_code: Some(0),
        stream_offset: 0,
        stream_length: 0,
        cols: 120,
        command_source: "hook".into(),
        typed: None,
        private: false,
        recording_stopped: false,
        host: None,
        user: None,
        nested_in: None,
        depth: 0,
        shell_status: false,
        paused: false,
        unsplit: None,
        author: None,
    }
}

/// The metadata of bash session `id` on `host`, in `/home/dev/proj` in a 120x40 terminal, that
/// ran from `started_at` to `ended_at` and exited 0.
pub fn finished_meta(id: &str, started_at: u64, ended_at: u64) -> SessionMeta {
    SessionMeta {
        id: id.into(),
        shell: "/bin/bash".into(),
        argv: vec!["bash".into()],
        pid: Some(4242),
        recorder_pid: 4241,
        hostname: "host".into(),
        cwd: "/home/dev/proj".into(),
        started_at,
        ended_at: Some(ended_at),
        exit_status: Some(0),
        omnish_version: env!("CARGO_PKG_VERSION").into(),
        state: SessionState::Exited,
        cols: 120,
        rows: 40,
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
    }
}
