//! The recorder's disk writes, off the terminal's thread.
//!
//! The terminal thread hands frames, command records and `meta.json` updates to a writer thread
//! over a channel bounded by the bytes it holds ([`QUEUE_LIMIT`]); it never waits for the disk.
//! The writer creates the session directory, appends frames, flushes whenever it has caught up,
//! and keeps the last `meta.json` it was given, so that when recording has to stop (a write
//! failed, or the queue outgrew its limit because the disk is too slow) it can leave the store
//! truthful: the command that was running is closed as `recording_stopped` with the output saved
//! until then, and `meta.json` says why recording stopped. After that only the session's end
//! (state, exit status, end time) is still written. Lines for the user (that warning, notices
//! from other threads) wait in the shared [`Status`]; the terminal thread polls a socket the
//! writer writes a byte to whenever one may wait ([`Notifier::subscribe`]).
//!
//! [`Writer::inline`] runs the same code on the caller's thread, for unit tests.

use crate::store::{self, CommandRecord, SessionMeta, StreamWriter};
use std::io::{self, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Most bytes of frames waiting for the disk before recording stops. Far above what a working
/// disk lets pile up (the writer keeps up with a pty's throughput), small enough for the
/// recorder's memory to stay modest.
pub const QUEUE_LIMIT: usize = 8 * 1024 * 1024;
/// What a queued frame costs beyond its data (the job, the allocation).
const JOB_COST: usize = 64;

pub(crate) enum Job {
    Frame {
        at: u64,
        direction: u8,
        data: Vec<u8>,
    },
    Command(Box<CommandRecord>),
    Meta(Box<SessionMeta>),
    /// Put what was written so far on disk.
    Flush,
    /// The terminal thread gave up on recording, for this reason.
    Stop(String),
    /// Answer once every job before this one is done.
    Sync(Sender<()>),
}

/// What the writer and the terminal thread share: whether recording stopped, and the one-time
/// warning about it; and notices that stop nothing (the store made private again, an
/// automatic prune that failed), shown one at a time.
#[derive(Default)]
pub struct Status {
    stopped: AtomicBool,
    warning: Mutex<Option<String>>,
    queued: AtomicUsize,
    notices: Mutex<std::collections::VecDeque<String>>,
    /// `notices` is not empty: the terminal thread looks without taking the lock.
    noticed: AtomicBool,
    /// The session directory was created, or could not be: notices wait until then.
    ready: AtomicBool,
    /// The session directory could not be created: the warning saying so covers the store,
    /// and notices about it (an automatic prune that failed on the same directory) are dropped.
    silenced: AtomicBool,
    /// Written a byte whenever a line may wait to be said, to wake the terminal thread.
    wake: std::sync::OnceLock<UnixStream>,
}

impl Status {
    /// Marks recording as stopped; the first call leaves the warning to show.
    fn stop(&self, warning: String) {
        if !self.stopped.swap(true, Ordering::AcqRel) {
            *self.warning.lock().unwrap_or_else(|e| e.into_inner()) = Some(warning);
            self.wake();
        }
    }

    /// The session directory was created, or could not be: notices may be said from now on.
    fn set_ready(&self) {
        self.ready.store(true, Ordering::Release);
        if self.noticed.load(Ordering::Acquire) {
            self.wake();
        }
    }

    /// Tells the terminal thread that a line may wait (never blocks: a full socket already
    /// says so).
    fn wake(&self) {
        if let Some(socket) = self.wake.get() {
            let _ = (&*socket).write(&[1]);
        }
    }

    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// The next line to show: the warning that recording stopped first, then the notices.
    pub fn take_warning(&self) -> Option<String> {
        if self.stopped() {
            let warning = self
                .warning
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            if warning.is_some() {
                return warning;
            }
        }
        if !self.noticed.load(Ordering::Acquire) || !self.ready.load(Ordering::Acquire) {
            return None;
        }
        let mut notices = self.notices.lock().unwrap_or_else(|e| e.into_inner());
        if self.silenced.load(Ordering::Acquire) {
            notices.clear();
        }
        let next = notices.pop_front();
        self.noticed.store(!notices.is_empty(), Ordering::Release);
        next
    }

    /// Queues a one-line notice for the user; recording goes on.
    pub fn notice(&self, line: String) {
        if self.silenced.load(Ordering::Acquire) {
            return;
        }
        let mut notices = self.notices.lock().unwrap_or_else(|e| e.into_inner());
        notices.push_back(line);
        self.noticed.store(true, Ordering::Release);
        drop(notices);
        self.wake();
    }
}

/// Says a line to the user of a recorded shell from another thread (the automatic prune), at
/// the next place where it splits no output.
#[derive(Clone)]
pub struct Notifier(Arc<Status>);

impl Notifier {
    pub fn notice(&self, line: String) {
        self.0.notice(line);
    }

    /// Wakes the terminal thread, which then looks at what may wait for it (a line to say,
    /// what a far key's `omnish ask` printed: record::farkey).
    pub fn wake(&self) {
        self.0.wake();
    }

    /// A socket that becomes readable whenever a line may wait to be said (a notice, or the
    /// warning that recording stopped): the terminal thread polls it. One per writer.
    pub fn subscribe(&self) -> io::Result<UnixStream> {
        let (read, write) = UnixStream::pair()?;
        read.set_nonblocking(true)?;
        write.set_nonblocking(true)?;
        self.0
            .wake
            .set(write)
            .map_err(|_| io::Error::other("the writer's notices have a reader already"))?;
        Ok(read)
    }
}

/// The warning shown once when recording stops.
fn warning(reason: &str) -> String {
    format!("omnish: recording stopped: {reason}. Your shell keeps running.")
}

/// The writer's side: the open files and the last known metadata.
struct State {
    dir: PathBuf,
    stream: Option<StreamWriter>,
    meta: SessionMeta,
    /// Recording stopped: only the session's end is still written.
    stopped: bool,
    status: Arc<Status>,
    /// Says to `omnish sessions rm`/`prune` that this session's recorder runs.
    _held: store::prune::SessionLock,
}

impl State {
    fn create(dir: &Path, meta: SessionMeta, status: Arc<Status>) -> io::Result<State> {
        // A session is never seen half created by a remover (see store::prune).
        let creating = store::prune::creation_lock(dir)?;
        store::create_store_dir(dir)?;
        // The store must be this user's alone (see store::access): `dir` is
        // ROOT/sessions/ID.
        let sessions = dir
            .parent()
            .filter(|p| p.file_name().is_some_and(|n| n == "sessions"));
        if let Some(root) = sessions.and_then(Path::parent) {
            for line in store::access::tighten(root) {
                status.notice(line);
            }
        }
        let stream = StreamWriter::create(&dir.join(store::STREAM))?;
        let commands = store::open_append(&dir.join(store::COMMANDS))?;
        store::reserve_commands(&commands);
        store::write_json_atomic(&dir.join(store::META), &meta)?;
        let held = store::prune::hold_session(dir);
        drop(creating);
        Ok(State {
            _held: held,
            dir: dir.to_path_buf(),
            stream: Some(stream),
            meta,
            stopped: false,
            status,
        })
    }

    fn handle(&mut self, job: Job) {
        match job {
            Job::Frame {
                at,
                direction,
                data,
            } => {
                self.status
                    .queued
                    .fetch_sub(data.len() + JOB_COST, Ordering::Relaxed);
                if let Some(stream) = self.stream.as_mut() {
                    if let Err(e) = stream.write(at, direction, &data) {
                        self.fail(store::STREAM, e);
                    }
                }
            }
            Job::Command(record) => {
                if self.stopped {
                    return;
                }
                // The frames go to disk before the record that points at them.
                self.flush();
                if self.stopped {
                    return;
                }
                if let Err(e) = store::append_command(&self.dir, &record) {
                    self.fail(store::COMMANDS, e);
                }
            }
            Job::Meta(meta) => {
                if self.stopped {
                    // Only the end of the session is news now.
                    self.meta.pid = meta.pid;
                    self.meta.ended_at = meta.ended_at;
                    self.meta.exit_status = meta.exit_status;
                    self.meta.state = meta.state;
                    let _ = store::write_json_atomic(&self.dir.join(store::META), &self.meta);
                    return;
                }
                self.meta = *meta;
                if let Err(e) = store::write_json_atomic(&self.dir.join(store::META), &self.meta) {
                    self.fail(store::META, e);
                }
            }
            Job::Flush => self.flush(),
            Job::Stop(reason) => self.stop(reason),
            Job::Sync(done) => {
                self.flush();
                let _ = done.send(());
            }
        }
    }

    fn flush(&mut self) {
        if let Some(stream) = self.stream.as_mut() {
            if let Err(e) = stream.flush() {
                self.fail(store::STREAM, e);
            }
        }
    }

    fn fail(&mut self, file: &str, e: io::Error) {
        let reason = format!("cannot write {}: {e}", self.dir.join(file).display());
        self.stop(reason);
    }

    /// Stops recording and leaves the store truthful: the running command is closed with what
    /// reached the disk, and `meta.json` says why.
    fn stop(&mut self, reason: String) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        self.status.stop(warning(&reason));
        if let Some(stream) = self.stream.take() {
            stream.abandon();
        }
        let now = store::now_ms();
        // What is on disk, a torn last frame included (readers skip it).
        let saved = std::fs::metadata(self.dir.join(store::STREAM)).map_or(0, |m| m.len());
        if let Some(run) = self.meta.running_command.take() {
            let record = CommandRecord {
                command_id: format!("{}:{}", self.meta.id, run.seq),
                session_id: self.meta.id.clone(),
                seq: run.seq,
                command_line: run.command_line,
                command_line_chars: run.command_line_chars,
                cwd: run.cwd,
                started_at: run.started_at,
                ended_at: now,
                exit_code: None,
                stream_offset: run.stream_offset,
                stream_length: saved.saturating_sub(run.stream_offset),
                cols: self.meta.cols,
                command_source: if self.meta.hooked { "hook" } else { "argv" }.to_string(),
                recording_stopped: true,
                typed: None,
                private: run.private,
                host: run.host,
                user: run.user,
                nested_in: run.nested_in,
                depth: run.depth,
                shell_status: false,
                paused: false,
                unsplit: None,
                author: None,
            };
            let _ = store::append_command(&self.dir, &record);
        }
        self.meta.recording_error = Some(reason);
        self.meta.recording_stopped_at = Some(now);
        let _ = store::write_json_atomic(&self.dir.join(store::META), &self.meta);
    }
}

/// Runs jobs until the channel closes: in batches, a `meta.json` superseded within its batch is
/// skipped (on a slow disk each rewrite may take long), and the stream is flushed whenever the
/// queue is empty.
fn run(mut state: Option<State>, jobs: Receiver<Job>, status: &Status) {
    let mut batch = Vec::new();
    while let Ok(first) = jobs.recv() {
        batch.push(first);
        while batch.len() < 1024 {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let mut skip = vec![false; batch.len()];
        let mut later_meta = false;
        for (i, job) in batch.iter().enumerate().rev() {
            match job {
                Job::Meta(_) => {
                    skip[i] = later_meta;
                    later_meta = true;
                }
                Job::Stop(_) => later_meta = false,
                _ => {}
            }
        }
        for (job, skip) in batch.drain(..).zip(skip) {
            match state.as_mut() {
                Some(s) if !skip => s.handle(job),
                Some(_) => {}
                None => match job {
                    Job::Sync(done) => {
                        let _ = done.send(());
                    }
                    Job::Frame { data, .. } => {
                        status
                            .queued
                            .fetch_sub(data.len() + JOB_COST, Ordering::Relaxed);
                    }
                    _ => {}
                },
            }
        }
        if let Some(s) = state.as_mut() {
            s.flush();
        }
    }
}

enum Mode {
    Inline(Option<Box<State>>),
    Thread {
        jobs: Option<Sender<Job>>,
        done: Receiver<()>,
    },
}

/// The terminal thread's handle on the writer.
pub struct Writer {
    mode: Mode,
    status: Arc<Status>,
}

impl Writer {
    /// Starts the writer thread, which creates `dir` and its files and writes the first
    /// `meta.json`. If that fails, recording is stopped with a warning saying why.
    pub fn spawn(dir: &Path, meta: SessionMeta) -> io::Result<Writer> {
        let status = Arc::new(Status::default());
        let (jobs, rx) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let shared = Arc::clone(&status);
        let dir = dir.to_path_buf();
        std::thread::Builder::new()
            .name("omnish-writer".into())
            .spawn(move || {
                let state = match State::create(&dir, meta, Arc::clone(&shared)) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        shared.stop(format!(
                            "omnish: cannot record to {}: {e}; the shell runs without recording ({})",
                            dir.display(),
                            store::access::write_advice(&e)
                        ));
                        shared.silenced.store(true, Ordering::Release);
                        None
                    }
                };
                shared.set_ready();
                run(state, rx, &shared);
                let _ = done_tx.send(());
            })?;
        Ok(Writer {
            mode: Mode::Thread {
                jobs: Some(jobs),
                done,
            },
            status,
        })
    }

    /// Does the writing on the caller's thread, synchronously (unit tests).
    pub fn inline(dir: &Path, meta: SessionMeta) -> io::Result<Writer> {
        let status = Arc::new(Status::default());
        let state = State::create(dir, meta, Arc::clone(&status))?;
        status.set_ready();
        Ok(Writer {
            mode: Mode::Inline(Some(Box::new(state))),
            status,
        })
    }

    /// A handle to say lines to the user from another thread.
    pub fn notifier(&self) -> Notifier {
        Notifier(Arc::clone(&self.status))
    }

    pub fn status(&self) -> &Status {
        &self.status
    }

    fn send(&mut self, job: Job) {
        match &mut self.mode {
            Mode::Inline(state) => {
                if let Some(s) = state.as_mut() {
                    s.handle(job);
                }
            }
            Mode::Thread { jobs, .. } => {
                if let Some(tx) = jobs.as_ref() {
                    let _ = tx.send(job);
                }
            }
        }
    }

    /// Queues a frame, unless recording stopped. A queue past [`QUEUE_LIMIT`] means the disk
    /// cannot keep up: recording stops rather than the terminal waiting.
    pub fn frame(&mut self, at: u64, direction: u8, data: Vec<u8>) {
        if self.status.stopped() {
            return;
        }
        let cost = data.len() + JOB_COST;
        let queued = self.status.queued.fetch_add(cost, Ordering::Relaxed) + cost;
        if queued > QUEUE_LIMIT {
            self.status.queued.fetch_sub(cost, Ordering::Relaxed);
            let reason = format!(
                "the disk is too slow: {} MiB of output were waiting to be written",
                queued >> 20
            );
            self.status.stop(warning(&reason));
            self.send(Job::Stop(reason));
            return;
        }
        self.send(Job::Frame {
            at,
            direction,
            data,
        });
    }

    pub fn command(&mut self, record: CommandRecord) {
        if !self.status.stopped() {
            self.send(Job::Command(Box::new(record)));
        }
    }

    /// Sent even after recording stopped: the session's end is still recorded.
    pub fn meta(&mut self, meta: &SessionMeta) {
        self.send(Job::Meta(Box::new(meta.clone())));
    }

    pub fn flush(&mut self) {
        if !self.status.stopped() {
            self.send(Job::Flush);
        }
    }

    /// Waits until every job sent so far is done (tests).
    pub fn sync(&mut self) {
        let (tx, rx) = mpsc::channel();
        self.send(Job::Sync(tx));
        let _ = rx.recv();
    }

    /// Lets the writer finish what is queued, waiting at most `limit`; true if it did.
    pub fn close(&mut self, limit: Duration) -> bool {
        match &mut self.mode {
            Mode::Inline(state) => {
                if let Some(s) = state.as_mut() {
                    s.flush();
                }
                true
            }
            Mode::Thread { jobs, done } => {
                jobs.take();
                !matches!(
                    done.recv_timeout(limit),
                    Err(mpsc::RecvTimeoutError::Timeout)
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{RunningCommand, SessionState};
    use std::io::Read;

    fn meta() -> SessionMeta {
        crate::store::testing::session_meta("s")
    }

    #[test]
    fn a_session_appears_whole_to_a_remover_and_is_held_while_recording() {
        use nix::fcntl::{Flock, FlockArg};
        let tmp = tempfile::tempdir().unwrap();
        let sessions = tmp.path().join("sessions");
        std::fs::create_dir(&sessions).unwrap();
        let dir = sessions.join("20261122T000001.000Z-aa");
        // A remover holds the store lock: the writer must not create anything meanwhile.
        let lock = std::fs::File::create(sessions.join(store::prune::LOCK)).unwrap();
        let remover = Flock::lock(lock, FlockArg::LockExclusive).unwrap();
        let mut w = Writer::spawn(&dir, meta()).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(!dir.exists(), "created while a remover held the store");
        drop(remover);
        w.sync();
        assert!(dir.join(store::META).exists());
        assert!(store::prune::session_locked(&dir), "held while recording");
        assert!(w.close(Duration::from_secs(10)));
        assert!(!store::prune::session_locked(&dir), "released at the end");
    }

    #[test]
    fn a_disk_that_cannot_keep_up_stops_recording_without_blocking_and_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        std::fs::create_dir(&dir).unwrap();
        // stream.bin is a FIFO nobody reads yet: the writer thread blocks opening it, as on a
        // hung disk.
        let fifo = dir.join(store::STREAM);
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let mut w = Writer::spawn(&dir, meta()).unwrap();
        let mut running = meta();
        running.running_command = Some(RunningCommand {
            seq: 1,
            command_line: "cat big".into(),
            command_line_chars: None,
            cwd: "/".into(),
            started_at: 1001,
            stream_offset: 0,
            private: false,
            host: None,
            user: None,
            nested_in: None,
            depth: 0,
            unsplit: None,
        });
        w.meta(&running);
        // More than the queue holds: none of these calls may block.
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..(QUEUE_LIMIT / chunk.len() + 2) {
            w.frame(1002, store::OUTPUT, chunk.clone());
        }
        assert!(w.status().stopped());
        let warning = w.status().take_warning().expect("a warning");
        assert!(warning.contains("the disk is too slow"), "{warning}");
        assert_eq!(w.status().take_warning(), None);
        // The disk comes back: what was queued is written, then the stop is recorded.
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            std::fs::File::open(fifo)
                .unwrap()
                .read_to_end(&mut all)
                .unwrap();
            all.len()
        });
        let mut end = running.clone();
        end.running_command = None;
        end.ended_at = Some(2000);
        end.exit_status = Some(0);
        end.state = SessionState::Exited;
        w.meta(&end);
        assert!(w.close(Duration::from_secs(30)));
        assert!(reader.join().unwrap() >= QUEUE_LIMIT - chunk.len());
        let records = store::read_commands(&dir).unwrap();
        assert_eq!(records.len(), 1);
        assert!(records[0].recording_stopped);
        assert_eq!(records[0].exit_code, None);
        let m = store::read_meta(&dir).unwrap();
        assert!(m.recording_error.unwrap().contains("too slow"));
        assert!(m.recording_stopped_at.is_some());
        assert_eq!((m.state, m.exit_status), (SessionState::Exited, Some(0)));
        assert_eq!(m.running_command, None);
    }

    #[test]
    fn notices_wait_for_the_directory_and_are_dropped_when_it_cannot_be_made() {
        let tmp = tempfile::tempdir().unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        // Made: a notice from another thread shows, after the directory exists.
        let mut w = Writer::spawn(&tmp.path().join("sessions/a"), meta()).unwrap();
        let notify = w.notifier();
        notify.notice("omnish: one".into());
        notify.notice("omnish: two".into());
        w.sync();
        assert_eq!(w.status().take_warning().as_deref(), Some("omnish: one"));
        assert_eq!(w.status().take_warning().as_deref(), Some("omnish: two"));
        assert_eq!(w.status().take_warning(), None);
        assert!(w.close(Duration::from_secs(10)));
        // Not made (a file in the way): its warning says so, and a notice about the same
        // store (the automatic prune failing there) is not said again.
        std::fs::write(tmp.path().join("file"), "").unwrap();
        let mut w = Writer::spawn(&tmp.path().join("file/sessions/b"), meta()).unwrap();
        w.notifier()
            .notice("omnish: the automatic prune failed".into());
        w.sync();
        let warning = w.status().take_warning().expect("a warning");
        assert!(warning.contains("Not a directory"), "{warning}");
        assert!(warning.contains("a file is in the way"), "{warning}");
        w.notifier()
            .notice("omnish: the automatic prune failed".into());
        assert_eq!(w.status().take_warning(), None);
        w.close(Duration::from_secs(10));
    }

    #[test]
    fn a_line_to_say_wakes_the_subscriber() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = Writer::spawn(&tmp.path().join("s"), meta()).unwrap();
        let socket = w.notifier().subscribe().unwrap();
        assert!(w.notifier().subscribe().is_err(), "a second reader");
        w.sync();
        let mut buf = [0u8; 16];
        let woken = |buf: &mut [u8]| (&socket).read(buf).map_or(0, |n| n);
        assert_eq!(woken(&mut buf), 0, "woken with nothing to say");
        w.notifier().notice("omnish: one".into());
        assert!(woken(&mut buf) > 0, "a notice woke nobody");
        // Recording stops (the queue outgrew its limit): the warning wakes it too.
        w.frame(1, store::OUTPUT, vec![0; QUEUE_LIMIT + 1]);
        assert!(woken(&mut buf) > 0, "the stop woke nobody");
        assert!(w.status().take_warning().is_some());
        w.close(Duration::from_secs(10));
    }
}
