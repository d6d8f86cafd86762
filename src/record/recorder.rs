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
//! Command lines: the hooks report each line (`633;E`); for a line the shell kept out of its
//! history (bash) omnish reads it off a model of the screen ([`Screen`]) from the prompt's end,
//! row after wrapped row. What was typed is kept beside it when a history expansion changed it.
//!
//! Private commands: a line the user kept out of history on purpose (a leading space under bash
//! ignorespace or zsh HIST_IGNORE_SPACE, a bash HISTIGNORE pattern or `set +o history`, a zsh
//! `zshaddhistory` hook that refused it; the hooks say which lines the shell left out) is
//! recorded without its line, cwd, keystrokes or output, unless
//! the recorder was told to record them (`OMNISH_RECORD_PRIVATE=1`). Frames from the prompt
//! to the output start are held back until the line is known to be private or not.
//!
//! The recorder does no disk I/O itself: frames, records and `meta.json` go to a
//! [`Writer`], which writes them on its own thread. A recorder that cannot write stops writing,
//! keeps a one-line warning for the user, and never fails the shell: every method is infallible.

use crate::record::marker::Marker;
use crate::record::screen::{Pos, Screen};
use crate::record::writer::Writer;
use crate::store::{self, CommandRecord, RunningCommand, SessionMeta, SessionState};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Most bytes of frames held back while a line is typed; beyond, they are written (a line that
/// long is not kept private).
const HELD_CAP: usize = 4 * 1024 * 1024;
/// An output frame is handed to the writer once it holds this much (a pty read is at most a
/// few KiB: one frame per read would wake the writer thread for every read).
const FRAME_TARGET: usize = 64 * 1024;
/// How long output may wait in an unfinished frame before it goes to the writer anyway.
pub const FRAME_DELAY: Duration = Duration::from_millis(10);

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
    typed: Option<String>,
    private: bool,
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
    /// The line as typed, when the hooks report it (zsh).
    typed: Option<String>,
    /// The hooks said a leading space keeps this line out of history.
    hist_ignore_space: bool,
    /// The hooks said the shell kept this line out of history on purpose.
    private_line: bool,
    /// The hooks said bash did not save this line, and what its last entry is.
    unsaved: Option<String>,
    /// The hooks saw this line exec a shell.
    exec_announced: bool,
    /// Record private commands anyway.
    record_private: bool,
    cwd: String,
    /// The screen from the prompt on, while `drawing`.
    screen: Screen,
    drawing: bool,
    /// Where each line of the command being typed starts on `screen` (the first after the
    /// prompt, then one per continuation prompt), and where the line editor ended it.
    input_lines: Vec<(Pos, Option<Pos>)>,
    /// Frames (time, direction, bytes) held from the prompt until the output start.
    held: Option<Vec<(u64, u8, Vec<u8>)>>,
    held_bytes: usize,
    /// The open command is private: its frames are dropped.
    dropping: bool,
    open: Option<Open>,
    pending: Vec<u8>,
    pending_at: u64,
    /// Frames handed over but not yet posted to the writer thread: they go together, within
    /// [`FRAME_DELAY`] or once [`FRAME_TARGET`] bytes wait, so that typing does not wake the
    /// writer at every key (which, on two cores, delays the echo the user waits for).
    outbox: Vec<(u64, u8, Vec<u8>)>,
    outbox_bytes: usize,
    outbox_at: u64,
    cols: u16,
    rows: u16,
    prompts: u64,
    /// A one-time warning of the recorder's own (the writer keeps those about the disk).
    warning: Option<String>,
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
            typed: None,
            hist_ignore_space: false,
            private_line: false,
            unsaved: None,
            exec_announced: false,
            record_private: false,
            screen: Screen::new(80, 24),
            drawing: false,
            input_lines: Vec::new(),
            held: None,
            held_bytes: 0,
            dropping: false,
            open: None,
            pending: Vec::new(),
            pending_at: 0,
            outbox: Vec::new(),
            outbox_bytes: 0,
            outbox_at: 0,
            prompts: 0,
            warning: None,
        }
    }

    /// Record private commands (kept out of history with a leading space) like any other.
    pub fn set_record_private(&mut self, on: bool) {
        self.record_private = on;
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many prompts (`A` markers) the hooks have announced.
    pub fn prompts(&self) -> u64 {
        self.prompts
    }

    /// A handle to say lines to the user from another thread (see [`Writer::notifier`]).
    pub fn notifier(&self) -> crate::record::writer::Notifier {
        self.writer.notifier()
    }

    /// The one-time warning to show the user: writing failed, or a shell could not be hooked.
    pub fn take_warning(&mut self) -> Option<String> {
        self.warning
            .take()
            .or_else(|| self.writer.status().take_warning())
    }

    /// Recording stopped (a write failed or the disk was too slow).
    pub fn stopped(&self) -> bool {
        self.writer.status().stopped()
    }

    /// Lets the writer finish what is queued, waiting at most `limit`; true if it did.
    pub fn close_writer(&mut self, limit: Duration) -> bool {
        self.post();
        self.writer.close(limit)
    }

    /// Waits until everything handed to the writer so far is done (tests).
    pub fn sync(&mut self) {
        self.post();
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
        self.screen.resize(cols, rows);
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
        if self.drawing {
            self.screen.feed(bytes);
        }
    }

    /// Keystrokes on their way to the shell. Only called while the terminal echoes input:
    /// what is typed with echo off (passwords) must never reach this.
    pub fn input(&mut self, now: u64, bytes: &[u8]) {
        self.cut();
        self.write(now, store::INPUT, bytes.to_vec());
    }

    /// Call after each read: a frame that is full or has waited [`FRAME_DELAY`] goes to the
    /// writer, which puts frames on disk as soon as it has caught up. Frames are also cut at
    /// every marker and before input, so they still never straddle two commands.
    pub fn end_of_read(&mut self, now: u64) {
        let delay = FRAME_DELAY.as_millis() as u64;
        if self.pending.len() >= FRAME_TARGET || now.saturating_sub(self.pending_at) >= delay {
            self.cut();
        }
        if !self.outbox.is_empty() && now.saturating_sub(self.outbox_at) >= delay {
            self.post();
        }
    }

    /// Whether output waits in an unfinished frame, or frames wait to be posted: call
    /// [`Recorder::end_of_read`] again within [`FRAME_DELAY`].
    pub fn frame_waiting(&self) -> bool {
        !self.pending.is_empty() || !self.outbox.is_empty()
    }

    pub fn marker(&mut self, now: u64, marker: Marker) {
        match marker {
            Marker::PromptStart => {
                if self.phase == Phase::Output {
                    self.close(now, None);
                }
                self.prompts += 1;
                // A prompt redrawn while a line is typed (completion listing, Ctrl-L) keeps
                // the line's state; a new prompt starts afresh.
                if self.phase != Phase::Input {
                    self.command_line = None;
                    self.typed = None;
                    self.hist_ignore_space = false;
                    self.private_line = false;
                    self.unsaved = None;
                    self.exec_announced = false;
                    self.start_drawing();
                    if self.held.is_none() {
                        // The line typed at this prompt may turn out private: hold the frames.
                        self.cut();
                        self.held = Some(Vec::new());
                        self.held_bytes = 0;
                    }
                }
                self.phase = Phase::Idle;
            }
            Marker::PromptEnd => {
                if self.phase != Phase::Output {
                    if !self.drawing {
                        self.start_drawing();
                    }
                    self.phase = Phase::Input;
                    self.screen.clear_editor_end();
                    self.input_lines = vec![(self.screen.cursor(), None)];
                }
            }
            Marker::ContinuationEnd => {
                if self.phase == Phase::Input {
                    if let Some(last) = self.input_lines.last_mut() {
                        last.1 = self.screen.editor_end();
                    }
                    self.screen.clear_editor_end();
                    self.input_lines.push((self.screen.cursor(), None));
                }
            }
            Marker::CommandLine(line) => self.command_line = Some(line),
            Marker::Typed(line) => self.typed = Some(line),
            Marker::HistIgnoreSpace => self.hist_ignore_space = true,
            Marker::Private => self.private_line = true,
            Marker::Unsaved(last) => self.unsaved = Some(last),
            Marker::ExecAnnounced => self.exec_announced = true,
            Marker::Cwd(cwd) => self.cwd = cwd,
            Marker::OutputStart => {
                if self.phase == Phase::Output {
                    self.close(now, None);
                }
                self.cut();
                let (line, source, typed) = self.command_line_at_start();
                let leading_space = self.hist_ignore_space
                    && [Some(&line), typed.as_ref()]
                        .into_iter()
                        .flatten()
                        .any(|l| l.starts_with([' ', '\t']));
                // Not saved, and no repeat of the last entry: kept out on purpose.
                let unsaved = self
                    .unsaved
                    .take()
                    .is_some_and(|last| line.trim_end() != last.trim_end());
                let private = leading_space || unsaved || std::mem::take(&mut self.private_line);
                let hide = private && !self.record_private;
                if !self.exec_announced {
                    if let Some(shell) = exec_of_a_shell(&line) {
                        // bash kept the line out of history: its hooks never saw it.
                        self.warning = Some(format!(
                            "omnish: {shell} will not be recorded command by command (the line was kept out of history, so omnish's hooks could not prepare it)"
                        ));
                    }
                }
                self.release_held(!hide);
                self.drawing = false;
                if hide {
                    self.open_record(now, String::new(), source, None, true);
                } else {
                    self.open_record(now, line, source, typed, false);
                }
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
                // Nothing ran (empty line, Ctrl-C): what was typed is written as it is.
                self.release_held(true);
                self.phase = Phase::Idle;
            }
        }
    }

    /// A new prompt. The screen model starts it in the first column, where the line editor
    /// believes it is: after output without a final newline it is not, and the editor's cursor
    /// moves are off on the real terminal, but they match the model, which so reads the line
    /// the editor holds.
    fn start_drawing(&mut self) {
        self.screen = Screen::new(self.cols, self.rows);
        self.drawing = true;
        self.input_lines.clear();
    }

    /// Writes the frames held since the prompt, or drops them (a private line).
    fn release_held(&mut self, write: bool) {
        self.cut();
        let Some(held) = self.held.take() else {
            return;
        };
        self.held_bytes = 0;
        if write {
            for (at, direction, data) in held {
                self.send(at, direction, data);
            }
        }
    }

    /// The command line at the output start, where it came from, and what was typed when that
    /// differs.
    ///
    /// bash reports lines it saved in its history (after history expansion); zsh reports every
    /// line and, separately, the line as typed. A line bash kept out of its history is read off
    /// the screen. bash prints a line changed by history expansion before running it: the
    /// screen then holds the typed line, then the expansion.
    fn command_line_at_start(&mut self) -> (String, &'static str, Option<String>) {
        let hook = self.command_line.take();
        let hook_typed = self.typed.take();
        if let Some(last) = self.input_lines.last_mut() {
            if last.1.is_none() {
                last.1 = self.screen.editor_end();
            }
        }
        let mut lines = Vec::new();
        let mut after = None;
        for &(start, end) in &self.input_lines {
            let (text, next) = self.screen.logical_line(start, end);
            lines.push(text);
            after = Some(end.unwrap_or(next));
        }
        let screen_typed = lines.join("\n");
        let echoed = after
            .map(|a| self.screen.text_between(a, self.screen.cursor()))
            .unwrap_or_default();
        // What bash printed between the line and the output is the expansion when it matches
        // the history entry or, for a line kept out of history, when the typed line holds a
        // history expansion character (other output there: `set -x` traces of the hooks).
        let expanded = |typed: &str| typed.contains('!') || typed.starts_with('^');
        let (line, source, typed) = match hook {
            Some(h) => {
                let typed = (!echoed.is_empty() && echoed == h).then(|| screen_typed.clone());
                (self.as_typed(h, &lines), "hook", typed)
            }
            None if !echoed.is_empty() && expanded(&screen_typed) => {
                (echoed, "screen", Some(screen_typed))
            }
            None => (screen_typed, "screen", None),
        };
        let typed = hook_typed.or(typed);
        let typed = typed.filter(|t| *t != line && !t.trim().is_empty());
        (line, source, typed)
    }

    /// Opens a command record for `sh -c`, where the whole run is one command.
    pub fn begin(&mut self, now: u64, command_line: String, source: &'static str) {
        self.open_record(now, command_line, source, None, false);
    }

    fn open_record(
        &mut self,
        now: u64,
        command_line: String,
        source: &'static str,
        typed: Option<String>,
        private: bool,
    ) {
        self.cut();
        self.seq += 1;
        let open = Open {
            seq: self.seq,
            command_line,
            source,
            cwd: if private {
                String::new()
            } else {
                self.cwd.clone()
            },
            started_at: now,
            offset: self.offset(),
            end: None,
            cols: self.cols,
            typed,
            private,
        };
        self.dropping = private;
        self.meta.running_command = Some(RunningCommand {
            seq: open.seq,
            command_line: open.command_line.clone(),
            cwd: open.cwd.clone(),
            started_at: open.started_at,
            stream_offset: open.offset,
            private: open.private,
        });
        self.open = Some(open);
        self.phase = Phase::Output;
        self.flush(now);
        self.write_meta();
    }

    /// The shell is gone: close the open command with the shell's status and seal meta.json.
    pub fn finish(&mut self, now: u64, exit_status: Option<i32>, interrupted: bool) {
        self.release_held(true);
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
            typed: open.typed,
            private: open.private,
            recording_stopped: false,
        };
        self.dropping = false;
        self.phase = Phase::Idle;
        // The writer puts the frames on disk before the record that points at them.
        self.post();
        self.writer.command(record);
        self.meta.running_command = None;
        self.write_meta();
    }

    /// bash's history joins the lines of a multi-line command (`for i in 1 2; do ...; done`).
    /// The screen shows them as typed: use those lines when they hold the same command (equal
    /// but for white space, `;` and `\`), so a redraw or completion listing can never leak in.
    fn as_typed(&self, history: String, lines: &[String]) -> String {
        if lines.len() < 2 {
            return history;
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
        // A full frame goes as it is, a small one as a copy of its size: a queued frame never
        // holds much more memory than its bytes, and the buffer is reused.
        let frame = if self.pending.len() >= FRAME_TARGET / 2 {
            std::mem::replace(&mut self.pending, Vec::with_capacity(FRAME_TARGET + 4096))
        } else {
            let frame = self.pending.clone();
            self.pending.clear();
            frame
        };
        self.write(self.pending_at, store::OUTPUT, frame);
    }

    /// Whether a frame is kept from the writer: held while a line is typed, dropped while a
    /// private command runs.
    fn withhold(&mut self, at: u64, direction: u8, data: &[u8]) -> bool {
        if self.dropping {
            return true;
        }
        let Some(held) = self.held.as_mut() else {
            return false;
        };
        if self.held_bytes + data.len() <= HELD_CAP {
            held.push((at, direction, data.to_vec()));
            self.held_bytes += data.len();
            return true;
        }
        // Too much to hold: write what was held, in order, and this frame after it.
        if let Some(held) = self.held.take() {
            for (at, direction, data) in held {
                self.send(at, direction, data);
            }
        }
        false
    }

    /// Hands a frame to the writer, unless it is withheld.
    fn write(&mut self, at: u64, direction: u8, data: Vec<u8>) {
        if self.withhold(at, direction, &data) {
            return;
        }
        self.send(at, direction, data);
    }

    /// Hands a frame to the writer; the offset of the next one is known at once.
    fn send(&mut self, at: u64, direction: u8, data: Vec<u8>) {
        if self.stopped() {
            return;
        }
        self.offset += store::frame_len(at, data.len());
        if self.outbox.is_empty() {
            self.outbox_at = at;
        }
        self.outbox_bytes += data.len();
        self.outbox.push((at, direction, data));
        if self.outbox_bytes >= FRAME_TARGET {
            self.post();
        }
    }

    /// Posts the frames waiting in the outbox to the writer, in order. Every other job for the
    /// writer is posted after them, so the writer sees everything in the order it happened.
    fn post(&mut self) {
        self.outbox_bytes = 0;
        for (at, direction, data) in std::mem::take(&mut self.outbox) {
            self.writer.frame(at, direction, data);
        }
    }

    /// Asks the writer to put the frames on disk now (it also does whenever it catches up).
    fn flush(&mut self, _now: u64) {
        self.post();
        self.writer.flush();
    }

    fn write_meta(&mut self) {
        self.post();
        self.writer.meta(&self.meta);
    }
}

/// The shell a line `exec [-l] [-a NAME] bash|zsh|$SHELL [options]` brings, as the hooks read
/// it: an interactive bash or zsh replacing the recorded shell.
fn exec_of_a_shell(line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    if words.next()? != "exec" {
        return None;
    }
    let mut cmd = words.next()?;
    while cmd.starts_with('-') {
        if cmd == "-a" {
            words.next()?;
        }
        cmd = words.next()?;
    }
    let cmd = cmd.trim_matches(['"', '\'']);
    let name = match cmd {
        "$SHELL" | "${SHELL}" => "$SHELL",
        _ => cmd.rsplit('/').next().unwrap_or(cmd),
    };
    if !(name.starts_with("bash") || name.starts_with("zsh") || name == "$SHELL") {
        return None;
    }
    // A command string or a script: not an interactive shell.
    let interactive = words
        .all(|a| a.starts_with('-') && !(a == "-c" || (!a.starts_with("--") && a.contains('c'))));
    interactive.then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{SessionState, StreamEntry};

    fn meta(id: &str) -> SessionMeta {
        SessionMeta {
            cwd: "/start".into(),
            ..crate::store::testing::session_meta(id)
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
    fn typing_posts_frames_to_the_writer_together_and_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut r = Recorder::create(&dir, meta("s")).unwrap();
        let stream = dir.join(store::STREAM);
        // What the writer has put on disk (without posting what waits in the outbox).
        let on_disk = |r: &mut Recorder| {
            r.writer.sync();
            store::read_range(&stream, 0, None).unwrap()
        };
        // Keys and their echoes within FRAME_DELAY: nothing reaches the writer yet.
        let start = 100;
        for (i, key) in [b"a", b"b", b"c"].into_iter().enumerate() {
            let t = start + i as u64;
            r.input(t, key);
            r.output(t, key);
            r.end_of_read(t);
        }
        assert_eq!(on_disk(&mut r), Vec::new());
        assert!(r.frame_waiting());
        // Once the first has waited FRAME_DELAY, all go, in the order they happened.
        r.end_of_read(start + FRAME_DELAY.as_millis() as u64);
        let want: Vec<StreamEntry> = [b"a", b"b", b"c"]
            .into_iter()
            .enumerate()
            .flat_map(|(i, key)| {
                let t = start + i as u64;
                [
                    StreamEntry(t, store::INPUT, key.to_vec()),
                    StreamEntry(t, store::OUTPUT, key.to_vec()),
                ]
            })
            .collect();
        // The last echo is still an unfinished frame: it goes after its own delay.
        assert_eq!(on_disk(&mut r), want[..5].to_vec());
        r.end_of_read(start + 2 + FRAME_DELAY.as_millis() as u64);
        assert_eq!(on_disk(&mut r), want);
        assert!(!r.frame_waiting());
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

    #[test]
    fn a_private_line_leaves_no_bytes_and_an_empty_line_keeps_its_keystrokes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut r = Recorder::create(&dir, meta("s")).unwrap();
        let cycle = |r: &mut Recorder, typed: &[u8], private_flag: bool, run: bool| {
            r.marker(1, Marker::PromptStart);
            r.output(1, b"$ ");
            r.marker(1, Marker::PromptEnd);
            r.input(1, typed);
            r.output(1, typed);
            r.output(1, b"\r\n");
            r.end_of_read(1);
            if !run {
                r.marker(2, Marker::CommandEnd(0));
                return;
            }
            if private_flag {
                r.marker(2, Marker::HistIgnoreSpace);
            }
            r.marker(2, Marker::OutputStart);
            r.output(2, b"out-");
            r.output(2, typed);
            r.input(2, b"typed-while-running");
            r.end_of_read(2);
            r.marker(3, Marker::CommandEnd(4));
        };
        cycle(&mut r, b" secret-1", true, true);
        cycle(&mut r, b" shown-1", false, true);
        cycle(&mut r, b"abandoned", false, false);
        r.finish(4, Some(0), false);
        let recs = store::read_commands(&dir).unwrap();
        assert!(recs[0].private);
        assert_eq!(
            (
                recs[0].command_line.as_str(),
                recs[0].stream_length,
                recs[0].exit_code
            ),
            ("", 0, Some(4))
        );
        assert_eq!(recs[1].command_line, " shown-1");
        assert!(!recs[1].private);
        assert_eq!(output_of(&dir, &recs[1]), b"out- shown-1");
        let all = std::fs::read(dir.join(store::STREAM)).unwrap();
        let all = String::from_utf8_lossy(&all);
        assert!(!all.contains("secret"), "{all}");
        assert!(all.contains("abandoned"), "{all}");
        assert_eq!(all.matches("typed-while-running").count(), 1);
    }

    #[test]
    fn only_a_printed_expansion_makes_a_typed_line() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut r = Recorder::create(&dir, meta("s")).unwrap();
        let cycle = |r: &mut Recorder, typed: &str, printed: &str, history: Option<&str>| {
            r.marker(1, Marker::PromptStart);
            r.output(1, b"$ ");
            r.marker(1, Marker::PromptEnd);
            r.output(1, typed.as_bytes());
            r.output(1, b"\r\n\x1b[?2004l\r");
            r.output(1, printed.as_bytes());
            if let Some(h) = history {
                r.marker(2, Marker::CommandLine(h.into()));
            }
            r.marker(2, Marker::OutputStart);
            r.marker(3, Marker::CommandEnd(0));
        };
        cycle(&mut r, "!!", "echo one\r\n", Some("echo one"));
        cycle(&mut r, "!!", "echo one\r\n", None);
        // `set -x` traces of the hooks are no expansion.
        cycle(&mut r, "echo two", "+ trace\r\n", Some("echo two"));
        cycle(&mut r, "echo two", "+ trace\r\n", None);
        let got: Vec<(String, Option<String>)> = store::read_commands(&dir)
            .unwrap()
            .into_iter()
            .map(|c| (c.command_line, c.typed))
            .collect();
        let want = [
            ("echo one", Some("!!")),
            ("echo one", Some("!!")),
            ("echo two", None),
            ("echo two", None),
        ]
        .map(|(l, t)| (l.to_string(), t.map(String::from)));
        assert_eq!(got, want);
    }

    #[test]
    fn execs_of_interactive_shells_are_recognised() {
        for (line, want) in [
            ("exec bash", Some("bash")),
            ("exec -l /usr/bin/zsh -i", Some("zsh")),
            ("exec -a x $SHELL", Some("$SHELL")),
            ("exec bash -c 'echo'", None),
            ("exec bash script.sh", None),
            ("exec bash -lc x", None),
            ("exec cat", None),
            ("echo exec bash", None),
        ] {
            assert_eq!(exec_of_a_shell(line).as_deref(), want, "{line}");
        }
    }
}
