//! The session store on disk: the contract between `omnish wrap` and everything that reads.
//!
//! ```text
//! $OMNISH_DATA_DIR (default: the platform data dir, e.g. ~/.local/share/omnish)
//!   sessions/<session-id>/          0700; ids sort by start time
//!     meta.json                     SessionMeta, replaced atomically (temp file + rename)
//!     stream.bin                    StreamEntry values back to back, each a MessagePack array
//!                                   [timestamp_ms, direction, data] with data as bin
//!     commands.jsonl                one CommandRecord per line, appended when a command ends
//!     cache/                        derived, rebuildable: digests ([`cache`]), rendered text
//!                                   for search ([`text`])
//!     attached/, shown/             written by other processes than the recorder: sessions of
//!                                   exec and hooks ([`attached`]), what omnish's front ends
//!                                   showed on the terminal ([`shown`])
//!   sessions/.lock                  taken shared while a recorder creates its directory,
//!                                   exclusively while sessions are removed ([`prune`])
//!   notes.json, notes.lock          pinned notes ([`notes`])
//! ```
//! Every file is 0600. Readers skip a torn last frame or line (crash, disk full).
//!
//! Every file is opened through [`open`] (regular files only, never through a symbolic link,
//! never blocking, read whole only within a cap) and whatever a reader skips, a file it refused
//! or a damaged line, is said once ([`notice`]): one bad file never stops the others from being
//! served.

pub mod access;
pub mod attached;
pub mod cache;
pub mod commands;
pub mod forget;
mod frames;
pub mod notes;
pub mod notice;
pub mod open;
pub mod prune;
mod sessions;
pub mod shown;
mod summary;
pub mod text;

pub use commands::{Records, RecordsBackwards, read_commands};
pub use frames::{FrameError, FrameHeader, Frames};
pub use sessions::{
    OpenSession, dir_id, id_suffix, is_session_id, list_sessions, match_id, open_session,
    process_alive, resolve_session, session_dir, session_dirs,
};
pub use summary::{SessionSummary, disk_usage, ended_the_shell, summarize, summarize_all};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Direction of a [`StreamEntry`]: bytes the shell wrote (at depth 0, see [`output_at`]).
pub const OUTPUT: u8 = 1;
/// Direction of a [`StreamEntry`]: bytes the user typed (only while the terminal echoed them),
/// at depth 0 (see [`input_at`]).
pub const INPUT: u8 = 0;

/// Deepest nesting of shells a direction byte says (`direction = depth * 2 + output`), kept
/// under 128 so that it stays a one-byte MessagePack integer (`frame_len` counts on it).
pub const MAX_DEPTH: u32 = 63;

/// The direction of output that belongs to a command at `depth` (see
/// [`CommandRecord::depth`]): `depth * 2 + 1`, so depth 0 is [`OUTPUT`].
pub fn output_at(depth: u32) -> u8 {
    (depth.min(MAX_DEPTH) * 2 + 1) as u8
}

/// The direction of keys typed into the shell at `depth`: `depth * 2`, so depth 0 is
/// [`INPUT`].
pub fn input_at(depth: u32) -> u8 {
    (depth.min(MAX_DEPTH) * 2) as u8
}

/// The depth a frame's direction says it belongs to.
pub fn frame_depth(direction: u8) -> u32 {
    u32::from(direction >> 1)
}

/// Whether a frame's direction says output (odd) rather than keys (even).
pub fn is_output(direction: u8) -> bool {
    direction & 1 == 1
}

pub const META: &str = "meta.json";
pub const STREAM: &str = "stream.bin";
pub const COMMANDS: &str = "commands.jsonl";

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub fn sessions_dir(root: &Path) -> PathBuf {
    root.join("sessions")
}

/// Creates `dir` and missing parents with mode 0700 (an existing `dir` is tightened to 0700).
/// For the store's root and `sessions/`, which a person may have made links to a directory
/// elsewhere; a directory of the store's own making is made with [`create_store_dir`].
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
}

/// [`create_private_dir`] for a directory of the store's own making (a session's, its
/// `cache/`): one that is a symbolic link is refused ([`open::open_dir`]), so nothing is written
/// through it and nothing it points to is changed.
pub fn create_store_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    open::open_dir(dir)?.set_permissions(fs::Permissions::from_mode(0o700))
}

/// Opens `path` for appending, creating it 0600 (never through a symbolic link; only a regular
/// file).
pub fn open_append(path: &Path) -> io::Result<File> {
    open::open_writable(path, true)
}

/// Opens `path` to read and write, creating it 0600 and keeping what it holds (a lock file, a
/// cache); never through a symbolic link, only a regular file.
pub fn open_private(path: &Path) -> io::Result<File> {
    open::open_writable(path, false)
}

/// A session id: UTC start time to the millisecond, then random hex, so ids are unique and sort
/// by start time (`20261122T183045.123Z-9f3a1c`).
pub fn new_session_id(started_at_ms: u64) -> String {
    let t = UNIX_EPOCH + std::time::Duration::from_millis(started_at_ms);
    let stamp = humantime::format_rfc3339_millis(t).to_string();
    let compact: String = stamp.chars().filter(|c| *c != '-' && *c != ':').collect();
    format!("{compact}-{}", random_hex(3))
}

/// `n` random bytes as lowercase hex, from the operating system's generator: unique, not
/// necessarily secret.
pub fn random_hex(n: usize) -> String {
    let mut buf = vec![0u8; n];
    if getrandom::fill(&mut buf).is_err() {
        // No generator (a strange chroot or sandbox): time and pid still separate sessions and
        // trash directories. Never use this where the value must stay secret: see
        // [`secret_hex`].
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
            ^ (std::process::id() as u128) << 64;
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (seed >> ((i % 16) * 8)) as u8;
        }
    }
    hex(&buf)
}

/// `n` random bytes from the operating system's generator, as hex: a secret (the session's
/// marker token). Fails when there is no generator; there is no fallback.
pub fn secret_hex(n: usize) -> io::Result<String> {
    secret_hex_from(n, getrandom::fill)
}

/// [`secret_hex`] with the generator given (tests make one that fails).
pub fn secret_hex_from(
    n: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<(), getrandom::Error>,
) -> io::Result<String> {
    let mut buf = vec![0u8; n];
    fill(&mut buf).map_err(|e| {
        io::Error::other(format!(
            "the operating system's random number generator failed: {e}"
        ))
    })?;
    Ok(hex(&buf))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionState {
    Running,
    Exited,
    Interrupted,
}

/// The command that has started but not ended, so readers can show it with its output so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningCommand {
    pub seq: u64,
    /// At most 64 Ki chars of the line (head and tail around `…[N chars omitted]…` past that).
    pub command_line: String,
    /// The whole line's length in chars, when `command_line` is cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_line_chars: Option<u64>,
    pub cwd: String,
    pub started_at: u64,
    pub stream_offset: u64,
    /// A private command (see [`CommandRecord::private`]): `command_line` and `cwd` are empty.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub private: bool,
    /// As in [`CommandRecord`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_in: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub depth: u32,
    /// As in [`CommandRecord`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsplit: Option<String>,
}

/// `meta.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: String,
    /// Path of the shell program.
    pub shell: String,
    pub argv: Vec<String>,
    /// Process id of the shell.
    pub pid: Option<u32>,
    /// Process id of the recorder.
    pub recorder_pid: u32,
    pub hostname: String,
    pub cwd: String,
    pub started_at: u64,
    pub ended_at: Option<u64>,
    /// The shell's exit status (128+N when killed by signal N).
    pub exit_status: Option<i32>,
    pub omnish_version: String,
    pub state: SessionState,
    /// Terminal width at the start.
    pub cols: u16,
    /// Terminal height, kept current when the terminal is resized (full-screen programs'
    /// screens are rendered at this height).
    pub rows: u16,
    /// Whether the shell's hooks were loaded (commands are split); false for `-c` and for
    /// shells omnish cannot hook.
    pub hooked: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_command: Option<RunningCommand>,
    /// Why recording stopped before the session ended (a write failed, the disk was too slow);
    /// nothing after `recording_stopped_at` was saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording_stopped_at: Option<u64>,
    /// The login name of the user who started the session (absent in sessions recorded before
    /// it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The nested shells alive now, outermost first (empty when only the session's own shell
    /// runs): the last one is where the user types.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nest: Vec<NestedShell>,
    /// Recording is paused (`omnish pause`, `omnish wrap --paused`): commands that start now
    /// are kept as private ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<Paused>,
    /// A session of commands run outside a terminal (`omnish exec`, agents' hooks): who ran
    /// them (see [`CommandRecord::author`]); absent for a session `omnish wrap` records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The recorded terminal session these commands belong with (the one `omnish exec` or an
    /// agent ran in): readers of that session read this one's commands too, merged by time
    /// (see [`attached`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attached_to: Option<String>,
    /// The agent's own session id, for a session its hooks write (one per agent session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_session: Option<String>,
}

impl SessionMeta {
    /// The metadata of a session this process starts recording now: `program` run as `argv` in
    /// `cwd`, by this user on this host, running, 80x24, not hooked, with no id yet (the caller
    /// sets what differs).
    pub fn starting(program: &str, argv: &[String], cwd: &str, started_at: u64) -> SessionMeta {
        SessionMeta {
            id: String::new(),
            shell: program.to_string(),
            argv: argv.to_vec(),
            pid: None,
            recorder_pid: std::process::id(),
            hostname: nix::unistd::gethostname()
                .map(|h| h.to_string_lossy().into_owned())
                .unwrap_or_default(),
            cwd: cwd.to_string(),
            started_at,
            ended_at: None,
            exit_status: None,
            omnish_version: env!("CARGO_PKG_VERSION").to_string(),
            state: SessionState::Running,
            cols: 80,
            rows: 24,
            hooked: false,
            running_command: None,
            recording_error: None,
            recording_stopped_at: None,
            user: nix::unistd::User::from_uid(nix::unistd::getuid())
                .ok()
                .flatten()
                .map(|u| u.name),
            nest: Vec::new(),
            paused: None,
            author: None,
            attached_to: None,
            agent_session: None,
        }
    }
}

/// A pause of the recording (see [`SessionMeta::paused`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paused {
    /// Since when (ms since the epoch).
    pub since: u64,
    /// Until when (ms since the epoch); `None`: until `omnish resume` or the session's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<u64>,
}

impl Paused {
    /// Whether the pause holds at `now` (ms since the epoch).
    pub fn holds_at(&self, now: u64) -> bool {
        self.until.is_none_or(|until| now < until)
    }
}

/// A shell started from a recorded command (a `bash` typed in the recorded shell, `sudo -i`,
/// `ssh host`) whose commands are recorded as commands of their own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NestedShell {
    /// 1 for a shell started from a top-level command, 2 for one started from that shell, ...
    pub depth: u32,
    /// The command that started it (`parent.seq` makes its `command_id`): still running.
    pub parent: RunningCommand,
    /// Its program's name (`bash`, `zsh`), as it said.
    pub shell: String,
    pub host: String,
    pub user: String,
    pub started_at: u64,
}

/// One line of `commands.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRecord {
    /// `<session_id>:<seq>`.
    pub command_id: String,
    pub session_id: String,
    /// 1, 2, 3, ... in the order the commands started.
    pub seq: u64,
    /// The line, exact up to 1 Mi chars; a longer one keeps its first and last 512 Ki chars
    /// around `…[N chars omitted]…` (see `command_line_chars`).
    pub command_line: String,
    /// The whole line's length in chars, present only when `command_line` was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_line_chars: Option<u64>,
    pub cwd: String,
    pub started_at: u64,
    pub ended_at: u64,
    /// `None` when the end was never seen (the recorder lost its hooks).
    pub exit_code: Option<i32>,
    /// Byte offset in stream.bin of this command's first output frame.
    pub stream_offset: u64,
    /// Length in bytes of the frames holding exactly this command's output (keystroke frames
    /// typed meanwhile may sit among them).
    pub stream_length: u64,
    /// Terminal width when the command started (for rendering).
    pub cols: u16,
    /// Where `command_line` came from: `hook` (the shell reported it) or `screen` (read back
    /// from what the terminal showed, when the shell kept the line out of its history).
    pub command_source: String,
    /// What the user typed, when it differs from `command_line` (what ran): a history
    /// expansion such as `!!`, `!-2`, `!$` or `^a^b`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed: Option<String>,
    /// The user kept this command out of the shell's history on purpose (a leading space with
    /// bash's `ignorespace`/`ignoreboth` or zsh's `HIST_IGNORE_SPACE`): `command_line` and `cwd`
    /// are empty and no output was kept (`stream_length` 0), only its times and exit status.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub private: bool,
    /// It ran while recording was paused (`omnish pause`): private, whatever the line was.
    #[serde(default, skip_serializing_if = "is_false")]
    pub paused: bool,
    /// Recording stopped while this command ran (see `SessionMeta::recording_error`): its
    /// output holds what was saved until then and `exit_code` is unknown.
    #[serde(default, skip_serializing_if = "is_false")]
    pub recording_stopped: bool,
    /// Where the command ran (a hostname, or a container's name): absent when it ran where the
    /// session runs ([`SessionMeta::hostname`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// As whom the command ran: absent when it ran as the session's user
    /// ([`SessionMeta::user`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The `command_id` of the command that started the shell this command ran in (a `bash`
    /// typed in the recorded shell, `sudo -i`, `ssh host`); absent at the top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_in: Option<String>,
    /// How deep that shell is: 0 at the top level, 1 in a shell started from a top-level
    /// command, ... Only frames of this depth within the command's range are its own (see
    /// [`frame_depth`]): the output of commands nested in it lies in its range but is theirs.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub depth: u32,
    /// Its exit status is that of a nested shell, not a failure of its own: it started one
    /// (`bash`, `ssh host`: the shell's exit status is its), or was the last command of one
    /// (`exit 3`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub shell_status: bool,
    /// Why the shell this command started (`omnish nest -- ssh host`, `sudo -i` with
    /// `nest.auto`) was not recorded command by command, when omnish tried: the whole run is
    /// this one record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsplit: Option<String>,
    /// Who ran it: absent for the user at the terminal (every record written before the field
    /// existed is the user's), else the agent's name (`claude-code`, `codex`, ...), set by its
    /// hook, or the label of `omnish exec` (`exec` without one). See [`CommandRecord::author`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

/// The author of the commands typed at the terminal (a record without `author`).
pub const USER: &str = "user";

impl CommandRecord {
    /// Who ran it: [`USER`] when the record does not say.
    pub fn author(&self) -> &str {
        self.author.as_deref().unwrap_or(USER)
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Chars of a command line that readers hand on whole (4,096); a longer one is shown as its
/// first and last `COMMAND_LINE_CAP / 2` chars at most around `…[N chars omitted]…`, as an
/// output line longer than a digest's line cap is. Whatever a record holds (a hostile 10 MB
/// line included), what is shown of it then costs the same.
pub const COMMAND_LINE_CAP: usize = 4096;

/// A line cut to its head and tail (see [`cut_middle`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut<'a> {
    pub head: &'a str,
    /// Chars left out between `head` and `tail`.
    pub omitted: u64,
    pub tail: &'a str,
}

impl Cut<'_> {
    /// Head, `…[N chars omitted]…`, tail.
    pub fn joined(&self) -> String {
        format!("{}{}{}", self.head, omitted_marker(self.omitted), self.tail)
    }
}

/// What stands for the `n` chars left out of the middle of a line.
pub fn omitted_marker(n: u64) -> String {
    format!("…[{n} chars omitted]…")
}

/// Where a cut may fall: between a separator and what follows it, so that a word (a token, a
/// password) is not split, its first chars shown and its last left out.
fn separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '=' | ';' | ',' | '|' | '&' | '(' | ')')
}

/// Chars a cut moves back (or forward) at most to fall on a separator.
const CUT_SLACK: usize = 256;

/// `line` cut to at most `cap / 2` chars of its start and of its end, when it has more than
/// `cap` chars; `None` when it is short enough to keep whole. The head ends after a separator
/// (white space, a quote, `=`, ...) and the tail starts at one, when there is one within
/// `CUT_SLACK` chars of the cut. One pass over the line.
pub fn cut_middle(line: &str, cap: usize) -> Option<Cut<'_>> {
    if line.len() <= cap {
        return None;
    }
    let total = line.chars().count();
    if total <= cap {
        return None;
    }
    let keep = cap / 2;
    // The head: `keep` chars, moved back to just after a separator near its end.
    let head_end = line.char_indices().nth(keep).map_or(line.len(), |(i, _)| i);
    let head_end = line[..head_end]
        .char_indices()
        .rev()
        .take(CUT_SLACK)
        .find(|&(_, c)| separator(c))
        .map_or(head_end, |(i, c)| i + c.len_utf8());
    // The tail: the last `keep` chars, moved forward to a separator near its start.
    let tail_start = line
        .char_indices()
        .rev()
        .nth(keep - 1)
        .map_or(0, |(i, _)| i)
        .max(head_end);
    let tail_start = line[tail_start..]
        .char_indices()
        .take(CUT_SLACK)
        .find(|&(_, c)| separator(c))
        .map_or(tail_start, |(i, _)| tail_start + i);
    let (head, tail) = (&line[..head_end], &line[tail_start..]);
    let kept = head.chars().count() + tail.chars().count();
    Some(Cut {
        head,
        omitted: (total - kept) as u64,
        tail,
    })
}

/// The size in bytes of the frame [`StreamWriter::write`] writes for `len` bytes of data at
/// `timestamp_ms`: lets the recorder know offsets without waiting for the writer thread.
pub fn frame_len(timestamp_ms: u64, len: usize) -> u64 {
    let ts = match timestamp_ms {
        0..=0x7f => 1,
        0x80..=0xff => 2,
        0x100..=0xffff => 3,
        0x1_0000..=0xffff_ffff => 5,
        _ => 9,
    };
    let bin = match len {
        0..=0xff => 2,
        0x100..=0xffff => 3,
        _ => 5,
    };
    // fixarray(3) + timestamp + direction (a positive fixint) + bin header + data
    1 + ts + 1 + bin + len as u64
}

/// A frame of `stream.bin`, borrowed for writing.
#[derive(Serialize)]
struct EntryRef<'a>(u64, u8, #[serde(with = "serde_bytes")] &'a [u8]);

/// A frame of `stream.bin`: `[timestamp_ms, direction, data]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamEntry(pub u64, pub u8, #[serde(with = "serde_bytes")] pub Vec<u8>);

impl StreamEntry {
    pub fn timestamp_ms(&self) -> u64 {
        self.0
    }
    pub fn direction(&self) -> u8 {
        self.1
    }
    pub fn data(&self) -> &[u8] {
        &self.2
    }
}

/// Appends frames to `stream.bin`, knowing the offset of the next one.
pub struct StreamWriter {
    out: BufWriter<File>,
    offset: u64,
    encoded: Vec<u8>,
}

impl StreamWriter {
    pub fn create(path: &Path) -> io::Result<StreamWriter> {
        let file = open_append(path)?;
        let offset = file.metadata()?.len();
        Ok(StreamWriter {
            out: BufWriter::with_capacity(64 * 1024, file),
            offset,
            encoded: Vec::with_capacity(64 * 1024),
        })
    }

    /// Offset in the file where the next frame will start.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn write(&mut self, timestamp_ms: u64, direction: u8, data: &[u8]) -> io::Result<()> {
        self.encoded.clear();
        rmp_serde::encode::write(&mut self.encoded, &EntryRef(timestamp_ms, direction, data))
            .map_err(io::Error::other)?;
        self.out.write_all(&self.encoded)?;
        self.offset += self.encoded.len() as u64;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Closes the file without writing what is still buffered (after a failed write).
    pub fn abandon(self) {
        let _ = self.out.into_parts();
    }
}

/// Decodes frames from `bytes`, stopping silently at a torn or corrupt frame.
pub fn decode_entries(bytes: &[u8]) -> Vec<StreamEntry> {
    let mut entries = Vec::new();
    let mut cursor = io::Cursor::new(bytes);
    while (cursor.position() as usize) < bytes.len() {
        match rmp_serde::decode::from_read::<_, StreamEntry>(&mut cursor) {
            Ok(e) => entries.push(e),
            Err(_) => break,
        }
    }
    entries
}

/// Reads the frames in `[offset, offset+length)` of a stream file: cost grows with `length`
/// only. A range running past the end of the file (a live session) reads what is there.
pub fn read_range(path: &Path, offset: u64, length: Option<u64>) -> io::Result<Vec<StreamEntry>> {
    let mut file = open::open_regular(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    match length {
        Some(len) => file.take(len).read_to_end(&mut bytes)?,
        None => file.read_to_end(&mut bytes)?,
    };
    Ok(decode_entries(&bytes))
}

/// Concatenated output bytes of a top-level command (direction [`OUTPUT`], depth 0) in a range
/// of frames: [`output_bytes_at`] at depth 0.
pub fn output_bytes(entries: &[StreamEntry]) -> Vec<u8> {
    output_bytes_at(entries, 0)
}

/// Concatenated output bytes of a command at `depth` (see [`CommandRecord::depth`]) in a range
/// of frames: only frames of that depth, so the range of a command that started a nested shell
/// gives its own output, not its inner commands'.
pub fn output_bytes_at(entries: &[StreamEntry], depth: u32) -> Vec<u8> {
    let direction = output_at(depth);
    let mut out = Vec::new();
    for e in entries.iter().filter(|e| e.direction() == direction) {
        out.extend_from_slice(e.data());
    }
    out
}

/// Writes `value` as JSON to `path` atomically: a 0600 temp file beside it, then a rename.
/// Whatever is at the temp file's name is replaced, never written through (a symbolic link
/// planted there stays pointing at an untouched file), and `path` itself is replaced by the
/// rename, so a link there is replaced too.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> io::Result<()> {
    let mut text = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    text.push(b'\n');
    let tmp = path.with_extension("json.tmp");
    let created = open::create_new(&tmp).or_else(|e| {
        if e.kind() != io::ErrorKind::AlreadyExists {
            return Err(e);
        }
        // Left by a crash (or planted): removed, not written through.
        fs::remove_file(&tmp)?;
        open::create_new(&tmp)
    });
    let written = created.and_then(|mut f| f.write_all(&text));
    match written {
        Ok(()) => fs::rename(&tmp, path),
        Err(e) if is_out_of_space(&e) && path.exists() => {
            // A full disk has no room for a second copy: overwrite the blocks the file already
            // has (a few hundred bytes, so they suffice), then cut it to length.
            let _ = fs::remove_file(&tmp);
            let mut f = open::open_writable(path, false)?;
            f.write_all(&text)?;
            f.set_len(text.len() as u64)
        }
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// The disk or the quota is full.
pub fn is_out_of_space(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// Room kept allocated past the end of `commands.jsonl`, so the record that says recording
/// stopped still fits on a disk that filled up.
const COMMANDS_RESERVE: i64 = 64 * 1024;

/// Appends one record to `commands.jsonl` (opened per append, so a removed directory is noticed),
/// then keeps `COMMANDS_RESERVE` bytes allocated past its end where the filesystem can.
pub fn append_command(dir: &Path, record: &CommandRecord) -> io::Result<()> {
    let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
    line.push(b'\n');
    let mut file = open_append(&dir.join(COMMANDS))?;
    file.write_all(&line)?;
    reserve_commands(&file);
    Ok(())
}

/// Allocates room past the end of an open `commands.jsonl` (best effort: not every
/// filesystem can).
pub fn reserve_commands(file: &File) {
    use nix::fcntl::{FallocateFlags, fallocate};
    if let Ok(len) = file.metadata().map(|m| m.len() as i64) {
        let _ = fallocate(
            file,
            FallocateFlags::FALLOC_FL_KEEP_SIZE,
            len,
            COMMANDS_RESERVE,
        );
    }
}

/// The session's `meta.json` (read within [`open::META_CAP`], as a regular file only).
pub fn read_meta(dir: &Path) -> Result<SessionMeta> {
    let path = dir.join(META);
    let bytes = open::read_capped(&path, open::META_CAP)
        .with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{} is not valid", path.display()))
}

/// Builders shared by unit tests across the crate.
#[cfg(test)]
pub(crate) mod testing {
    use super::{CommandRecord, SessionMeta, SessionState};

    /// The metadata of a running bash session `id` in an 80x24 terminal, started at 1000 in `/`.
    pub(crate) fn session_meta(id: &str) -> SessionMeta {
        SessionMeta {
            id: id.into(),
            shell: "/bin/bash".into(),
            argv: vec!["bash".into()],
            pid: Some(1),
            recorder_pid: 2,
            hostname: "h".into(),
            cwd: "/".into(),
            started_at: 1000,
            ended_at: None,
            exit_status: None,
            omnish_version: "0".into(),
            state: SessionState::Running,
            cols: 80,
            rows: 24,
            hooked: true,
            running_command: None,
            recording_error: None,
            recording_stopped_at: None,
            user: None,
            nest: Vec::new(),
            paused: None,
            author: None,
            attached_to: None,
            agent_session: None,
        }
    }

    /// Command `seq` of session `session_id`: `ls` in `/`, hooked, started at 1 and ended at 2
    /// with status 0 in an 80-column terminal, with no output. Adjust with struct update syntax.
    pub(crate) fn command_record(session_id: &str, seq: u64) -> CommandRecord {
        CommandRecord {
            command_id: format!("{session_id}:{seq}"),
            session_id: session_id.into(),
            seq,
            command_line: "ls".into(),
            command_line_chars: None,
            cwd: "/".into(),
            started_at: 1,
            ended_at: 2,
            exit_code: Some(0),
            stream_offset: 0,
            stream_length: 0,
            cols: 80,
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_marker_token_comes_from_the_operating_system_generator_or_not_at_all() {
        let a = secret_hex(16).unwrap();
        let b = secret_hex(16).unwrap();
        assert_eq!(a.len(), 32);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
        let given = secret_hex_from(16, |buf| {
            buf.copy_from_slice(&[0xab; 16]);
            Ok(())
        });
        assert_eq!(given.unwrap(), "ab".repeat(16));
        // No generator: no token, and no guessable stand-in.
        let err = secret_hex_from(16, |_| Err(getrandom::Error::UNSUPPORTED)).unwrap_err();
        assert!(
            err.to_string().contains("random number generator failed"),
            "{err}"
        );
    }

    #[test]
    fn session_ids_sort_by_start_time() {
        let a = new_session_id(1_700_000_000_000);
        let b = new_session_id(1_700_000_000_001);
        let c = new_session_id(1_800_000_000_000);
        assert!(a < b && b < c, "{a} {b} {c}");
        assert!(a.starts_with("20231114T221320.000Z-"), "{a}");
    }

    #[test]
    fn frames_are_msgpack_arrays_with_bin_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(STREAM);
        let mut w = StreamWriter::create(&path).unwrap();
        w.write(5, OUTPUT, b"hi").unwrap();
        w.flush().unwrap();
        let bytes = fs::read(&path).unwrap();
        // fixarray(3), positive fixint 5, 1, bin8 len 2, "hi"
        assert_eq!(bytes, [0x93, 0x05, 0x01, 0xc4, 0x02, b'h', b'i']);
        assert_eq!(w.offset(), 7);
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn torn_last_frame_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(STREAM);
        let mut w = StreamWriter::create(&path).unwrap();
        w.write(1, OUTPUT, b"one").unwrap();
        w.write(2, INPUT, b"two").unwrap();
        w.flush().unwrap();
        let mut bytes = fs::read(&path).unwrap();
        bytes.truncate(bytes.len() - 1);
        let entries = decode_entries(&bytes);
        assert_eq!(entries, vec![StreamEntry(1, OUTPUT, b"one".to_vec())]);
    }

    #[test]
    fn torn_last_command_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let rec = testing::command_record("s", 1);
        append_command(dir.path(), &rec).unwrap();
        let mut f = open_append(&dir.path().join(COMMANDS)).unwrap();
        f.write_all(b"{\"command_id\":\"s:2\",\"sess").unwrap();
        assert_eq!(read_commands(dir.path()).unwrap(), vec![rec]);
    }

    #[test]
    fn atomic_json_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(META);
        write_json_atomic(&path, &serde_json::json!({"a": 1})).unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(!path.with_extension("json.tmp").exists());
    }

    #[test]
    fn a_data_directory_that_is_a_link_to_another_disk_is_used() {
        let tmp = tempfile::tempdir().unwrap();
        let disk = tmp.path().join("disk");
        fs::create_dir(&disk).unwrap();
        let root = tmp.path().join("data");
        std::os::unix::fs::symlink(&disk, &root).unwrap();
        notes::update(&root, 0, false, |_| Ok(())).unwrap();
        create_private_dir(&sessions_dir(&root)).unwrap();
        let dir = sessions_dir(&root).join("20261122T183045.123Z-9f3a1c");
        create_store_dir(&dir).unwrap();
        assert!(disk.join("sessions/20261122T183045.123Z-9f3a1c").is_dir());
        assert!(disk.join(notes::NOTES).is_file());
    }

    #[test]
    fn a_link_planted_where_the_writers_write_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        let meta = dir.path().join(META);
        std::os::unix::fs::symlink(&victim, meta.with_extension("json.tmp")).unwrap();
        write_json_atomic(&meta, &serde_json::json!({"a": 1})).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        assert!(fs::read_to_string(&meta).unwrap().contains("\"a\": 1"));
        // A link as the file itself: replaced by the rename, not followed.
        fs::remove_file(&meta).unwrap();
        std::os::unix::fs::symlink(&victim, &meta).unwrap();
        write_json_atomic(&meta, &serde_json::json!({"b": 2})).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!fs::symlink_metadata(&meta).unwrap().is_symlink());
        // Appends and a cache directory that are links.
        let commands = dir.path().join(COMMANDS);
        std::os::unix::fs::symlink(&victim, &commands).unwrap();
        let rec = testing::command_record("s", 1);
        assert!(append_command(dir.path(), &rec).is_err());
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        let elsewhere = tempfile::tempdir().unwrap();
        fs::set_permissions(elsewhere.path(), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), cache::dir(dir.path())).unwrap();
        assert!(cache::save(dir.path(), &cache::path(dir.path(), 1), &1u8, &2u8).is_err());
        assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
        let mode = fs::metadata(elsewhere.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755, "what the link points to is left alone");
    }

    #[test]
    fn long_lines_keep_their_head_and_tail_without_splitting_a_word() {
        assert_eq!(cut_middle("short", 10), None);
        assert_eq!(cut_middle(&"é".repeat(10), 10), None, "chars, not bytes");
        let x = "x".repeat(10_000);
        let cut = cut_middle(&x, 4096).unwrap();
        assert_eq!(
            (cut.head.len(), cut.omitted, cut.tail.len()),
            (2048, 5904, 2048)
        );
        assert_eq!(
            cut.joined(),
            format!("{}…[5904 chars omitted]…{}", &x[..2048], &x[..2048])
        );
        // Words of 100 chars: the cut falls between words, never inside one.
        let words: Vec<String> = (0..100).map(|i| format!("{i:0>99}")).collect();
        let line = words.join(" ");
        let cut = cut_middle(&line, 4096).unwrap();
        assert!(
            cut.head.ends_with(' ') && cut.tail.starts_with(' '),
            "{cut:?}"
        );
        assert!(cut.head.len() > 2048 - 100 && cut.tail.len() > 2048 - 100);
        let shown: Vec<&str> = cut.head.split(' ').chain(cut.tail.split(' ')).collect();
        assert!(
            shown.iter().all(|w| w.is_empty() || w.len() == 99),
            "{shown:?}"
        );
        assert_eq!(
            cut.head.len() + cut.omitted as usize + cut.tail.len(),
            line.len()
        );
    }

    proptest! {
        #[test]
        fn a_cut_keeps_a_head_and_a_tail_and_counts_the_rest(
            line in "[a-c é\\n=\"]{0,300}",
            cap in 2usize..120,
        ) {
            let n = line.chars().count();
            match cut_middle(&line, cap) {
                None => prop_assert!(n <= cap),
                Some(cut) => {
                    prop_assert!(n > cap);
                    prop_assert!(line.starts_with(cut.head) && line.ends_with(cut.tail));
                    let (h, t) = (cut.head.chars().count(), cut.tail.chars().count());
                    prop_assert!(h <= cap / 2 && t <= cap / 2);
                    prop_assert!(cut.omitted > 0);
                    prop_assert_eq!(h + t + cut.omitted as usize, n);
                }
            }
        }

        #[test]
        fn frames_round_trip_and_ranges_read_exactly(
            frames in proptest::collection::vec((any::<u64>(), 0u8..2, proptest::collection::vec(any::<u8>(), 0..300)), 0..20),
            pick in any::<proptest::sample::Index>(),
            cut in 0usize..4000,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(STREAM);
            let mut w = StreamWriter::create(&path).unwrap();
            let mut offsets = Vec::new();
            for (t, d, data) in &frames {
                offsets.push(w.offset());
                w.write(*t, *d, data).unwrap();
                prop_assert_eq!(w.offset() - offsets[offsets.len() - 1], frame_len(*t, data.len()));
            }
            offsets.push(w.offset());
            w.flush().unwrap();
            let all: Vec<StreamEntry> = frames.iter().map(|(t, d, x)| StreamEntry(*t, *d, x.clone())).collect();
            prop_assert_eq!(read_range(&path, 0, None).unwrap(), all.clone());
            if !frames.is_empty() {
                let i = pick.index(frames.len());
                let one = read_range(&path, offsets[i], Some(offsets[i + 1] - offsets[i])).unwrap();
                prop_assert_eq!(one, vec![all[i].clone()]);
            }
            // Any truncation yields a prefix of the frames, never an error or garbage.
            let bytes = fs::read(&path).unwrap();
            let cut = cut.min(bytes.len());
            let got = decode_entries(&bytes[..cut]);
            prop_assert!(all.starts_with(&got));
        }
    }
}
