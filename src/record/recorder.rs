//! Turns the shell's output, its markers and the user's keystrokes into the session store.
//!
//! The phases follow the hooks' markers (SHELL-INTEGRATION.md §6): `A` prompt → `B` input →
//! `C` output → `D` end. Output frames are cut at every marker, so a command's
//! `stream_offset..+stream_length` holds exactly the frames written between its `C` and its `D`
//! (or zsh's `Z`, which comes before the PROMPT_SP filler). A `D` without a `C` in the cycle
//! (empty line, Ctrl-C at the prompt) makes no record. A `C` while a command is still open means
//! its `D` was lost (hooks removed by the user): the open command is closed with an unknown
//! status rather than merged into the next.
//!
//! The recorder does no disk I/O itself: frames, records and `meta.json` go to a
//! [`Writer`], which writes them on its own thread. A recorder that cannot write stops writing,
//! keeps a one-line warning for the user, and never fails the shell: every method is infallible.

use crate::record::marker::Marker;
use crate::record::writer::Writer;
use crate::store::{self, CommandRecord, RunningCommand, SessionMeta, SessionState};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;
/// Most bytes of prompt echo kept to read back a command line the shell did not report.
const ECHO_CAP: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// At or before a prompt: no command open, no input being typed.
    Idle,
    /// After the prompt's end: the echo of what is typed is kept.
    Input,
    Output,
}

#[derive(Debug)]
struct Open {
    seq: u64,
    command_line: String,
    source: &'static str,
    cwd: String,
    started_at: u64,
    offset: u64,
    /// Where the output ended, when a `Z` marker said so before the `D`.
    end: Option<u64>,
    cols: u16,
}

pub struct Recorder {
    dir: PathBuf,
    meta: SessionMeta,
    writer: Writer,
    /// Where the next frame starts in stream.bin.
    offset: u64,
    phase: Phase,
    seq: u64,
    command_line: Option<String>,
    cwd: String,
    echo: Vec<u8>,
    /// Where in `echo` each continuation line of a multi-line command starts.
    continuations: Vec<usize>,
    open: Option<Open>,
    pending: Vec<u8>,
    pending_at: u64,
    cols: u16,
    rows: u16,
    prompts: u64,
}

impl Recorder {
    /// Creates the session directory and its files, and writes the first `meta.json`, all on
    /// this thread; every later write is synchronous too (tests).
    pub fn create(dir: &Path, meta: SessionMeta) -> io::Result<Recorder> {
        let writer = Writer::inline(dir, meta.clone())?;
        Ok(Recorder::with_writer(dir, meta, writer))
    }

    /// Starts a writer thread that creates the session directory and does every write; the
    /// caller never waits for the disk. If the directory cannot be created, the warning says so.
    pub fn spawn(dir: &Path, meta: SessionMeta) -> io::Result<Recorder> {
        let writer = Writer::spawn(dir, meta.clone())?;
        Ok(Recorder::with_writer(dir, meta, writer))
    }

    fn with_writer(dir: &Path, meta: SessionMeta, writer: Writer) -> Recorder {
        Recorder {
            dir: dir.to_path_buf(),
            cwd: meta.cwd.clone(),
            cols: meta.cols,
            rows: meta.rows,
            meta,
            writer,
            offset: 0,
            phase: Phase::Idle,
            seq: 0,
            command_line: None,
            echo: Vec::new(),
            continuations: Vec::new(),
            open: None,
            pending: Vec::new(),
            pending_at: 0,
            prompts: 0,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many prompts (`A` markers) the hooks have announced.
    pub fn prompts(&self) -> u64 {
        self.prompts
    }

    /// The one-time warning to show the user, if writing failed.
    pub fn take_warning(&mut self) -> Option<String> {
        self.writer.status().take_warning()
    }

    /// Recording stopped (a write failed or the disk was too slow).
    pub fn stopped(&self) -> bool {
        self.writer.status().stopped()
    }

    /// Lets the writer finish what is queued, waiting at most `limit`; true if it did.
    pub fn close_writer(&mut self, limit: Duration) -> bool {
        self.writer.close(limit)
    }

    /// Waits until everything handed to the writer so far is done (tests).
    pub fn sync(&mut self) {
        self.writer.sync();
    }

    /// The shell started with this process id.
    pub fn set_shell_pid(&mut self, pid: u32) {
        self.meta.pid = Some(pid);
        self.write_meta();
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.cols = cols;
        self.rows = rows;
    }

    /// Output of the shell (markers already removed), as forwarded to the terminal.
    pub fn output(&mut self, now: u64, bytes: &[u8]) {
        if bytes.is_empty() || self.stopped() {
            return;
        }
        if self.pending.is_empty() {
            self.pending_at = now;
        }
        self.pending.extend_from_slice(bytes);
        if self.phase == Phase::Input && self.echo.len() < ECHO_CAP {
            self.echo.extend_from_slice(bytes);
        }
    }

    /// Keystrokes on their way to the shell. Only called while the terminal echoes input:
    /// what is typed with echo off (passwords) must never reach this.
    pub fn input(&mut self, now: u64, bytes: &[u8]) {
        self.cut();
        self.write(now, store::INPUT, bytes.to_vec());
    }

    /// Ends the current output frame; call after each read so frames follow the reads. The
    /// writer puts frames on disk as soon as it has caught up.
    pub fn end_of_read(&mut self, _now: u64) {
        self.cut();
    }

    pub fn marker(&mut self, now: u64, marker: Marker) {
        match marker {
            Marker::PromptStart => {
                if self.phase == Phase::Output {
                    self.close(now, None);
                }
                self.prompts += 1;
                self.phase = Phase::Idle;
                self.command_line = None;
                self.echo.clear();
            }
            Marker::PromptEnd => {
                if self.phase != Phase::Output {
                    self.phase = Phase::Input;
                    self.echo.clear();
                    self.continuations.clear();
                }
            }
            Marker::ContinuationEnd => {
                if self.phase == Phase::Input {
                    self.continuations.push(self.echo.len());
                }
            }
            Marker::CommandLine(line) => self.command_line = Some(line),
            Marker::Cwd(cwd) => self.cwd = cwd,
            Marker::OutputStart => {
                if self.phase == Phase::Output {
                    self.close(now, None);
                }
                let (line, source) = match self.command_line.take() {
                    Some(line) => (self.as_typed(line), "hook"),
                    None => (self.screen_command_line(), "screen"),
                };
                self.begin(now, line, source);
            }
            Marker::OutputEnd => {
                if self.phase == Phase::Output {
                    self.cut();
                    let offset = self.offset();
                    if let Some(open) = self.open.as_mut() {
                        open.end.get_or_insert(offset);
                    }
                }
            }
            Marker::CommandEnd(status) => {
                // Hooks send it at every prompt; only an end after a start closes a command.
                if self.phase == Phase::Output {
                    self.close(now, Some(status));
                }
                self.phase = Phase::Idle;
            }
        }
    }

    /// Opens a command record: at an output-start marker, or for `sh -c` where the whole run is
    /// one command.
    pub fn begin(&mut self, now: u64, command_line: String, source: &'static str) {
        self.cut();
        self.seq += 1;
        let open = Open {
            seq: self.seq,
            command_line,
            source,
            cwd: self.cwd.clone(),
            started_at: now,
            offset: self.offset(),
            end: None,
            cols: self.cols,
        };
        self.meta.running_command = Some(RunningCommand {
            seq: open.seq,
            command_line: open.command_line.clone(),
            cwd: open.cwd.clone(),
            started_at: open.started_at,
            stream_offset: open.offset,
        });
        self.open = Some(open);
        self.phase = Phase::Output;
        self.flush(now);
        self.write_meta();
    }

    /// The shell is gone: close the open command with the shell's status and seal meta.json.
    pub fn finish(&mut self, now: u64, exit_status: Option<i32>, interrupted: bool) {
        self.cut();
        if self.open.is_some() {
            self.close(now, exit_status);
        }
        self.meta.ended_at = Some(now);
        self.meta.exit_status = exit_status;
        self.meta.state = if interrupted {
            SessionState::Interrupted
        } else {
            SessionState::Exited
        };
        self.meta.running_command = None;
        self.flush(now);
        self.write_meta();
    }

    fn close(&mut self, now: u64, exit_code: Option<i32>) {
        self.cut();
        let Some(open) = self.open.take() else {
            return;
        };
        let end = open.end.unwrap_or_else(|| self.offset());
        let record = CommandRecord {
            command_id: format!("{}:{}", self.meta.id, open.seq),
            session_id: self.meta.id.clone(),
            seq: open.seq,
            command_line: open.command_line,
            cwd: open.cwd,
            started_at: open.started_at,
            ended_at: now,
            exit_code,
            stream_offset: open.offset,
            stream_length: end.saturating_sub(open.offset),
            cols: open.cols,
            command_source: open.source.to_string(),
            recording_stopped: false,
        };
        self.phase = Phase::Idle;
        // The writer puts the frames on disk before the record that points at them.
        self.writer.command(record);
        self.meta.running_command = None;
        self.write_meta();
    }

    /// What the terminal showed between the end of the prompt and the output: the command line
    /// as the user saw it, for shells that keep a line out of their history.
    fn screen_command_line(&self) -> String {
        let rows = self.rows.max(1);
        let lines = crate::term::render::render(&self.echo, self.cols, rows);
        lines.join("\n").trim().to_string()
    }

    /// bash's history joins the lines of a multi-line command (`for i in 1 2; do ...; done`).
    /// The screen shows them as typed: use those lines when they hold the same command (equal
    /// but for white space, `;` and `\`), so a redraw or completion listing can never leak in.
    fn as_typed(&self, history: String) -> String {
        if self.continuations.is_empty() {
            return history;
        }
        let mut starts = vec![0];
        starts.extend(&self.continuations);
        let mut lines = Vec::new();
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(self.echo.len());
            let rendered =
                crate::term::render::render(&self.echo[start..end], self.cols, self.rows.max(1));
            lines.push(rendered.into_iter().next().unwrap_or_default());
        }
        let typed = lines.join("\n");
        let essence = |s: &str| -> String {
            s.chars()
                .filter(|c| !c.is_whitespace() && *c != ';' && *c != '\\')
                .collect()
        };
        if essence(&typed) == essence(&history) {
            typed
        } else {
            history
        }
    }

    fn offset(&self) -> u64 {
        self.offset
    }

    fn cut(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        self.write(self.pending_at, store::OUTPUT, pending);
    }

    /// Hands a frame to the writer; the offset of the next one is known at once.
    fn write(&mut self, at: u64, direction: u8, data: Vec<u8>) {
        if self.stopped() {
            return;
        }
        self.offset += store::frame_len(at, data.len());
        self.writer.frame(at, direction, data);
    }

    /// Asks the writer to put the frames on disk now (it also does whenever it catches up).
    fn flush(&mut self, _now: u64) {
        self.writer.flush();
    }

    fn write_meta(&mut self) {
        self.writer.meta(&self.meta);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{SessionState, StreamEntry};

    fn meta(id: &str) -> SessionMeta {
        SessionMeta {
            id: id.into(),
            shell: "/bin/bash".into(),
            argv: vec!["bash".into()],
            pid: Some(1),
            recorder_pid: 2,
            hostname: "h".into(),
            cwd: "/start".into(),
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
        }
    }

    fn output_of(dir: &Path, r: &CommandRecord) -> Vec<u8> {
        let entries = store::read_range(
            &dir.join(store::STREAM),
            r.stream_offset,
            Some(r.stream_length),
        )
        .unwrap();
        store::output_bytes(&entries)
    }

    #[test]
    fn a_command_cycle_records_exactly_its_output() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut r = Recorder::create(&dir, meta("s")).unwrap();
        r.marker(1, Marker::Cwd("/work".into()));
        r.marker(1, Marker::PromptStart);
        r.output(1, b"$ ");
        r.marker(1, Marker::PromptEnd);
        r.output(2, b"ls\r\n");
        r.input(2, b"typed");
        r.marker(3, Marker::CommandLine("ls".into()));
        r.marker(3, Marker::OutputStart);
        r.output(4, b"a b\r\n");
        r.end_of_read(4);
        r.output(5, b"c\r\n");
        r.marker(6, Marker::CommandEnd(2));
        r.marker(6, Marker::PromptStart);
        r.output(6, b"$ ");
        r.end_of_read(7);
        let recs = store::read_commands(&dir).unwrap();
        assert_eq!(recs.len(), 1);
        let rec = &recs[0];
        assert_eq!(rec.command_id, "s:1");
        assert_eq!(rec.command_line, "ls");
        assert_eq!(rec.cwd, "/work");
        assert_eq!(rec.exit_code, Some(2));
        assert_eq!((rec.started_at, rec.ended_at), (3, 6));
        assert_eq!(output_of(&dir, rec), b"a b\r\nc\r\n");
        let all = store::read_range(&dir.join(store::STREAM), 0, None).unwrap();
        assert!(all.contains(&StreamEntry(2, store::INPUT, b"typed".to_vec())));
    }

    #[test]
    fn empty_line_and_ctrl_c_at_prompt_make_no_record() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut r = Recorder::create(&dir, meta("s")).unwrap();
        for _ in 0..3 {
            r.marker(1, Marker::PromptStart);
            r.marker(1, Marker::PromptEnd);
            r.output(1, b"^C\r\n");
            r.marker(2, Marker::CommandEnd(130));
        }
        r.finish(3, Some(0), false);
        assert!(store::read_commands(&dir).unwrap().is_empty());
        let m = store::read_meta(&dir).unwrap();
        assert_eq!(m.state, SessionState::Exited);
        assert_eq!(m.exit_status, Some(0));
    }

    #[test]
    fn zsh_prompt_sp_filler_after_z_is_outside_the_range() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut r = Recorder::create(&dir, meta("s")).unwrap();
        r.marker(1, Marker::PromptStart);
        r.marker(1, Marker::CommandLine("printf foo".into()));
        r.marker(1, Marker::OutputStart);
        r.output(2, b"foo");
        r.marker(2, Marker::OutputEnd);
        r.output(2, b"\x1b[7m%\x1b[0m      \r \r");
        r.marker(2, Marker::CommandEnd(0));
        let recs = store::read_commands(&dir).unwrap();
        assert_eq!(output_of(&dir, &recs[0]), b"foo");
    }

    #[test]
    fn exit_closes_the_open_command_with_the_shell_status() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut r = Recorder::create(&dir, meta("s")).unwrap();
        r.marker(1, Marker::CommandLine("exit 3".into()));
        r.marker(1, Marker::OutputStart);
        assert_eq!(
            store::read_meta(&dir)
                .unwrap()
                .running_command
                .map(|c| c.seq),
            Some(1)
        );
        r.output(2, b"exit\r\n");
        r.finish(3, Some(3), false);
        let recs = store::read_commands(&dir).unwrap();
        assert_eq!(recs[0].exit_code, Some(3));
        assert_eq!(recs[0].command_line, "exit 3");
        assert_eq!(store::read_meta(&dir).unwrap().running_command, None);
    }

    #[test]
    fn lost_end_marker_closes_with_unknown_status() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut r = Recorder::create(&dir, meta("s")).unwrap();
        r.marker(1, Marker::CommandLine("one".into()));
        r.marker(1, Marker::OutputStart);
        r.output(1, b"1\r\n");
        r.marker(2, Marker::CommandLine("two".into()));
        r.marker(2, Marker::OutputStart);
        r.output(2, b"2\r\n");
        r.marker(3, Marker::CommandEnd(0));
        let recs = store::read_commands(&dir).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!((recs[0].exit_code, recs[1].exit_code), (None, Some(0)));
        assert_eq!(output_of(&dir, &recs[0]), b"1\r\n");
        assert_eq!(output_of(&dir, &recs[1]), b"2\r\n");
    }

    #[test]
    fn a_removed_directory_warns_once_and_keeps_going() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut r = Recorder::create(&dir, meta("s")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        r.marker(1, Marker::OutputStart);
        r.output(1, b"x");
        r.marker(2, Marker::CommandEnd(0));
        let w = r.take_warning().expect("a warning");
        assert!(w.contains("recording stopped"), "{w}");
        r.marker(3, Marker::OutputStart);
        r.marker(4, Marker::CommandEnd(0));
        r.finish(5, Some(0), false);
        assert_eq!(r.take_warning(), None);
    }

    #[test]
    fn multi_line_commands_keep_the_typed_lines_only_when_they_match_history() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut r = Recorder::create(&dir, meta("s")).unwrap();
        let cycle = |r: &mut Recorder, lines: &[&str], history: &str| {
            r.marker(1, Marker::PromptStart);
            r.output(1, b"$ ");
            r.marker(1, Marker::PromptEnd);
            for (i, line) in lines.iter().enumerate() {
                if i > 0 {
                    r.output(1, b"> ");
                    r.marker(1, Marker::ContinuationEnd);
                }
                r.output(1, line.as_bytes());
                r.output(1, b"\r\n");
            }
            r.marker(2, Marker::CommandLine(history.into()));
            r.marker(2, Marker::OutputStart);
            r.marker(3, Marker::CommandEnd(0));
        };
        cycle(
            &mut r,
            &["for i in 1 2", "do echo $i", "done"],
            "for i in 1 2; do echo $i; done",
        );
        // A completion listing below a line is not part of it.
        cycle(
            &mut r,
            &["if x", "then y\r\nlisting  of  matches", "fi"],
            "if x; then y; fi",
        );
        // A redraw that repeated a continuation prompt: the screen no longer matches, history wins.
        cycle(
            &mut r,
            &["if x", "then y", "then y", "fi"],
            "if x; then y; fi",
        );
        // One line: history as it is.
        cycle(&mut r, &["echo   spaced"], "echo   spaced");
        let lines: Vec<String> = store::read_commands(&dir)
            .unwrap()
            .into_iter()
            .map(|c| c.command_line)
            .collect();
        assert_eq!(
            lines,
            [
                "for i in 1 2\ndo echo $i\ndone",
                "if x\nthen y\nfi",
                "if x; then y; fi",
                "echo   spaced"
            ]
        );
    }
}
