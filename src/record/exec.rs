//! `omnish exec`: one program run outside a recorded terminal (cron, CI, scripts, agents' tool
//! calls), passed through unchanged and recorded as one command.
//!
//! # Passing through
//!
//! The program is started directly (no shell) with omnish's standard input, its own process
//! group and controlling terminal (omnish's), so keys, job control and `/dev/tty` reach it as
//! without omnish. Its standard output and error each go where omnish's go, through omnish so
//! that they can be kept:
//!
//! - one that is a terminal is given a pseudo-terminal of the same size (one for both when they
//!   are the same terminal), so the program still sees a terminal (colours, line buffering,
//!   `isatty`); output processing is off on it, so the bytes reach the real terminal as the
//!   program wrote them and the real terminal processes them as it would have;
//! - one that is anything else (a pipe, a file, `/dev/null`) is given a pipe: a pipe stays a
//!   pipe. When the reader of omnish's end goes away (`| head`), omnish closes the program's
//!   pipe, so the program gets its SIGPIPE/EPIPE where it would have;
//! - one that is closed stays closed (inherited, not recorded).
//!
//! One loop polls the pipes and the pseudo-terminal and hands each chunk on as soon as it is
//! read, writing it whole before reading again: the program is paced by whoever reads omnish,
//! as with `PROGRAM | tee FILE`. Each chunk is also a frame of the session's `stream.bin` with
//! its own timestamp, stdout and stderr in the order they were read; two streams written by
//! the program within one read of each other may swap, which nothing outside the program can
//! order better (on a terminal shared by both, one pseudo-terminal keeps the exact order).
//!
//! # Signals and the exit status
//!
//! A signal from the terminal (Ctrl-C, Ctrl-\, a hangup) reaches the program directly, as it is
//! in the terminal's foreground process group with omnish; omnish catches it and waits. A
//! signal sent to omnish alone (`kill PID`, a CI job's timeout) is passed on to the program
//! (the handler reads `si_code` to tell the two apart). A window size change is copied to the
//! pseudo-terminal. When the program exits, omnish exits with its status; when a signal killed
//! it, omnish dies of the same signal (so a shell sees 128+N and a script's loop stops as it
//! would for the program), but for the signals that dump core, where it exits with 128+N.
//!
//! # Recording
//!
//! [`Recording`] writes the output frames, then the command's record, into a session claimed
//! through [`crate::store::attached`] (never the files a live recorder writes). Any storage
//! error stops the recording with one warning on stderr; the program, its output and its status
//! never change because of it.

use crate::store::{self, CommandRecord, RunningCommand, SessionState, StreamWriter, attached};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use std::io::{self, IsTerminal};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};

/// Bytes read from the program at a time.
const CHUNK: usize = 128 * 1024;

/// The write end of the self-pipe the signal handler writes to (-1: none).
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

/// The signals omnish catches while the program runs: those a terminal or a supervisor sends,
/// and the window size.
const CAUGHT: [Signal; 8] = [
    Signal::SIGINT,
    Signal::SIGQUIT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
    Signal::SIGALRM,
    Signal::SIGWINCH,
];

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // Async-signal-safe: one write(2), errno kept.
    // SAFETY: errno is thread-local; `info` is the kernel's siginfo for this signal or null.
    unsafe {
        let errno = *libc::__errno_location();
        let kernel = !info.is_null() && (*info).si_code == libc::SI_KERNEL;
        let buf = [sig as u8, u8::from(kernel)];
        let fd = SIGNAL_PIPE.load(Ordering::Relaxed);
        if fd >= 0 {
            libc::write(fd, buf.as_ptr().cast(), 2);
        }
        *libc::__errno_location() = errno;
    }
}

/// Where one of the program's output streams goes.
enum Out {
    /// Through omnish: omnish reads `read` and writes to its own descriptor `dest`.
    Relayed { read: OwnedFd, dest: RawFd },
    /// Left to the program (a closed descriptor).
    Inherited,
}

/// A terminal's size, if `fd` is one.
fn window_size(fd: RawFd) -> Option<libc::winsize> {
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes a winsize into `ws`.
    let r = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) };
    (r == 0).then_some(ws)
}

fn set_window_size(fd: RawFd, ws: &libc::winsize) {
    // SAFETY: TIOCSWINSZ reads a winsize.
    unsafe { libc::ioctl(fd, libc::TIOCSWINSZ, ws) };
}

/// (device, inode) of what `fd` is open on, `None` when it is closed.
fn identity(fd: RawFd) -> Option<(u64, u64)> {
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    nix::sys::stat::fstat(fd)
        .ok()
        .map(|st| (st.st_dev, st.st_ino))
}

/// A pseudo-terminal for output to the terminal `like`: its size, output processing off.
fn output_pty(like: RawFd) -> io::Result<(OwnedFd, OwnedFd)> {
    let ws = window_size(like);
    let pty = nix::pty::openpty(ws.as_ref(), None).map_err(io::Error::from)?;
    if let Ok(mut t) = nix::sys::termios::tcgetattr(&pty.slave) {
        t.output_flags.remove(nix::sys::termios::OutputFlags::OPOST);
        let _ = nix::sys::termios::tcsetattr(&pty.slave, nix::sys::termios::SetArg::TCSANOW, &t);
    }
    set_cloexec(&pty.master);
    Ok((pty.master, pty.slave))
}

fn set_cloexec(fd: &OwnedFd) {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    let _ = fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
}

/// The program's standard output and error: what it is given, and what omnish relays.
fn plan_outputs() -> io::Result<(Stdio, Stdio, Vec<Out>)> {
    let stdout_tty = io::stdout().is_terminal();
    let stderr_tty = io::stderr().is_terminal();
    let same_tty = stdout_tty && stderr_tty && identity(1) == identity(2);
    let mut outs = Vec::new();
    let mut give = |fd: RawFd, tty: bool| -> io::Result<Stdio> {
        if identity(fd).is_none() {
            outs.push(Out::Inherited);
            return Ok(Stdio::inherit());
        }
        if tty {
            let (master, slave) = output_pty(fd)?;
            outs.push(Out::Relayed {
                read: master,
                dest: fd,
            });
            return Ok(Stdio::from(slave));
        }
        let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(io::Error::from)?;
        outs.push(Out::Relayed { read: r, dest: fd });
        Ok(Stdio::from(w))
    };
    if same_tty {
        let (master, slave) = output_pty(1)?;
        let slave2 = slave.try_clone()?;
        outs.push(Out::Relayed {
            read: master,
            dest: 1,
        });
        return Ok((Stdio::from(slave), Stdio::from(slave2), outs));
    }
    let out = give(1, stdout_tty)?;
    let err = give(2, stderr_tty)?;
    Ok((out, err, outs))
}

/// How the run ended.
pub struct Ended {
    pub status: ExitStatus,
}

impl Ended {
    /// The status a shell would show: the code, or 128+N when signal N killed it.
    pub fn code(&self) -> i32 {
        match (self.status.code(), self.status.signal()) {
            (Some(c), _) => c,
            (None, Some(s)) => 128 + s,
            (None, None) => 1,
        }
    }

    /// Ends omnish as the program ended: its exit code, or death by its signal (see the
    /// module docs).
    pub fn exit(&self) -> ! {
        if let Some(sig) = self.status.signal() {
            let reraise = [
                libc::SIGHUP,
                libc::SIGINT,
                libc::SIGPIPE,
                libc::SIGTERM,
                libc::SIGKILL,
                libc::SIGUSR1,
                libc::SIGUSR2,
                libc::SIGALRM,
            ];
            if reraise.contains(&sig) {
                if let Ok(s) = Signal::try_from(sig) {
                    // SAFETY: restoring the default action.
                    unsafe {
                        let _ = signal::signal(s, SigHandler::SigDfl);
                    }
                    let mut set = SigSet::empty();
                    set.add(s);
                    let _ = set.thread_unblock();
                    let _ = signal::raise(s);
                }
            }
        }
        std::process::exit(self.code())
    }
}

/// Where the output is kept: the session claimed, and its stream from the command's start.
pub struct Recording {
    claimed: Option<attached::Claimed>,
    stream: Option<StreamWriter>,
    record: CommandRecord,
    /// Why recording stopped, when it did.
    failed: Option<String>,
    dir: PathBuf,
    /// The frame being made of a chunk (reused).
    frame: Vec<u8>,
    /// The last byte of the chunk before.
    last: u8,
    /// The session's metadata said the command runs (and must be read back at the end).
    marked_running: bool,
}

impl Recording {
    /// Starts recording `command_line` (run in `cwd` by `author`) in `claimed`: the session's
    /// metadata says it runs. `None` when the session cannot be written (said once).
    pub fn start(
        claimed: attached::Claimed,
        command_line: &str,
        cwd: &str,
        author: &str,
        size: (u16, u16),
    ) -> Option<Recording> {
        Self::start_as(claimed, command_line, cwd, author, size, true)
    }

    /// [`Recording::start`] for a command that ended already, whose output is all at hand (an
    /// agent's hook): nothing says it runs meanwhile, so the session's metadata is written
    /// once, by [`Recording::finish`], not twice.
    pub fn ended(
        claimed: attached::Claimed,
        command_line: &str,
        cwd: &str,
        author: &str,
        size: (u16, u16),
    ) -> Option<Recording> {
        Self::start_as(claimed, command_line, cwd, author, size, false)
    }

    fn start_as(
        claimed: attached::Claimed,
        command_line: &str,
        cwd: &str,
        author: &str,
        size: (u16, u16),
        mark_running: bool,
    ) -> Option<Recording> {
        let mut claimed = claimed;
        let dir = claimed.dir.clone();
        let seq = claimed.next_seq();
        let started_at = store::now_ms();
        let started = (|| -> io::Result<(StreamWriter, store::SessionMeta)> {
            let stream = StreamWriter::create(&dir.join(store::STREAM))?;
            let mut meta = claimed.meta.clone();
            meta.state = SessionState::Running;
            meta.recorder_pid = std::process::id();
            meta.ended_at = None;
            meta.exit_status = None;
            meta.recording_error = None;
            meta.recording_stopped_at = None;
            meta.cols = size.0;
            meta.rows = size.1;
            meta.running_command = Some(RunningCommand {
                seq,
                command_line: command_line.to_string(),
                command_line_chars: None,
                cwd: cwd.to_string(),
                started_at,
                stream_offset: stream.offset(),
                private: false,
                host: None,
                user: None,
                nested_in: None,
                depth: 0,
                unsplit: None,
            });
            if mark_running {
                store::write_json_atomic(&dir.join(store::META), &meta)?;
            }
            Ok((stream, meta))
        })();
        let (stream, meta) = match started {
            Ok(s) => s,
            Err(e) => {
                warn(&dir, &e);
                return None;
            }
        };
        let id = meta.id.clone();
        if !mark_running {
            // What finish writes: this, ended.
            claimed.meta = meta;
        }
        let record = CommandRecord {
            command_id: format!("{id}:{seq}"),
            session_id: id,
            seq,
            command_line: command_line.to_string(),
            command_line_chars: None,
            cwd: cwd.to_string(),
            started_at,
            ended_at: started_at,
            exit_code: None,
            stream_offset: stream.offset(),
            stream_length: 0,
            cols: size.0,
            command_source: "exec".into(),
            typed: None,
            private: false,
            paused: false,
            recording_stopped: false,
            host: None,
            user: None,
            nested_in: None,
            depth: 0,
            shell_status: false,
            unsplit: None,
            author: Some(author.to_string()),
        };
        Some(Recording {
            claimed: Some(claimed),
            stream: Some(stream),
            record,
            failed: None,
            dir,
            frame: Vec::with_capacity(CHUNK + CHUNK / 8),
            last: 0,
            marked_running: mark_running,
        })
    }

    /// The session's directory.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// Keeps one chunk of output, as a terminal's line discipline would have passed it to the
    /// screen (a newline is a carriage return and a line feed: the stream holds what a
    /// terminal shows, and the renderer reads it as a terminal does).
    pub fn chunk(&mut self, data: &[u8]) {
        let Some(w) = self.stream.as_mut() else {
            return;
        };
        self.frame.clear();
        let mut from = 0;
        let mut added = false;
        for nl in memchr::memchr_iter(b'\n', data) {
            let before = if nl == 0 { self.last } else { data[nl - 1] };
            self.frame.extend_from_slice(&data[from..nl]);
            if before != b'\r' {
                self.frame.push(b'\r');
                added = true;
            }
            from = nl;
        }
        if let Some(&b) = data.last() {
            self.last = b;
        }
        let frame: &[u8] = if !added {
            data
        } else {
            self.frame.extend_from_slice(&data[from..]);
            &self.frame
        };
        if let Err(e) = w.write(store::now_ms(), store::OUTPUT, frame) {
            self.fail(e);
        }
    }

    fn fail(&mut self, e: io::Error) {
        warn(&self.dir, &e);
        if let Some(w) = self.stream.take() {
            w.abandon();
        }
        self.failed = Some(e.to_string());
    }

    /// Writes the command's record and the session's metadata: the command ended with `code`
    /// (`None`: a status nobody reported).
    pub fn finish(mut self, code: Option<i32>) {
        if let Some(w) = self.stream.as_mut() {
            if let Err(e) = w.flush() {
                self.fail(e);
            }
        }
        let end = self.stream.as_ref().map(StreamWriter::offset);
        let now = store::now_ms();
        let r = &mut self.record;
        r.ended_at = now;
        match end {
            Some(end) => {
                r.stream_length = end - r.stream_offset;
                r.exit_code = code;
            }
            None => {
                // What reached the disk before the failure is the command's output; how much
                // of it is whole is for the reader to find (a torn last frame is skipped).
                r.stream_length = std::fs::metadata(self.dir.join(store::STREAM))
                    .map_or(0, |m| m.len().saturating_sub(r.stream_offset));
                r.recording_stopped = true;
                r.exit_code = code;
            }
        }
        let written = store::append_command(&self.dir, &self.record);
        let Some(claimed) = self.claimed.take() else {
            return;
        };
        let mut meta = claimed.meta.clone();
        if self.marked_running {
            if let Ok(m) = store::read_meta(&self.dir) {
                meta = m;
            }
        }
        meta.state = SessionState::Exited;
        meta.running_command = None;
        meta.ended_at = Some(now);
        // No shell ended: the status is the command's, in its record.
        meta.exit_status = None;
        meta.recording_error = None;
        meta.recording_stopped_at = None;
        let saved = store::write_json_atomic(&self.dir.join(store::META), &meta);
        if self.failed.is_none() {
            if let Err(e) = written.and(saved) {
                warn(&self.dir, &e);
            }
        }
        drop(claimed);
    }
}

/// Storage failures are not said (an agent's hook must say nothing on the agent's channel).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on, a storage failure costs no warning.
pub fn set_quiet() {
    QUIET.store(true, Ordering::Relaxed);
}

/// The one warning a storage failure costs.
fn warn(dir: &std::path::Path, e: &io::Error) {
    if QUIET.load(Ordering::Relaxed) {
        return;
    }
    eprintln!(
        "omnish: warning: cannot record to {}: {e}; the program runs on, unrecorded",
        dir.display()
    );
}

/// Writes all of `data` to `fd`, waiting while it is full (a non-blocking descriptor) and
/// handling the signals that arrive meanwhile with `on_signal`. `Err` when it cannot take more
/// (EPIPE: its reader is gone).
fn write_all(fd: RawFd, mut data: &[u8], on_signal: &mut dyn FnMut()) -> io::Result<()> {
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    while !data.is_empty() {
        match nix::unistd::write(borrowed, data) {
            Ok(n) => data = &data[n..],
            Err(Errno::EINTR) => on_signal(),
            Err(Errno::EAGAIN) => {
                let mut fds = [PollFd::new(borrowed, PollFlags::POLLOUT)];
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) | Err(Errno::EINTR) => on_signal(),
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// The signal handlers, installed for the run and put back when dropped.
struct Handlers {
    old: Vec<(Signal, SigAction)>,
    read: OwnedFd,
    write: OwnedFd,
}

impl Handlers {
    fn install() -> io::Result<Handlers> {
        use nix::fcntl::OFlag;
        let (read, write) =
            nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK).map_err(io::Error::from)?;
        SIGNAL_PIPE.store(write.as_raw_fd(), Ordering::Relaxed);
        // No SA_RESTART: a blocking write or wait returns EINTR, so a signal is passed on
        // at once.
        let action = SigAction::new(
            SigHandler::SigAction(on_signal),
            SaFlags::empty(),
            SigSet::empty(),
        );
        let mut old = Vec::new();
        for s in CAUGHT {
            // SAFETY: the handler only writes to a pipe.
            if let Ok(prev) = unsafe { signal::sigaction(s, &action) } {
                old.push((s, prev));
            }
        }
        Ok(Handlers { old, read, write })
    }

    /// The signals received since the last call: (signal, sent by the kernel).
    fn take(&self) -> Vec<(Signal, bool)> {
        let mut buf = [0u8; 256];
        let mut out = Vec::new();
        while let Ok(n) = nix::unistd::read(&self.read, &mut buf) {
            if n == 0 {
                break;
            }
            for pair in buf[..n].chunks_exact(2) {
                if let Ok(s) = Signal::try_from(i32::from(pair[0])) {
                    out.push((s, pair[1] == 1));
                }
            }
        }
        out
    }
}

impl Drop for Handlers {
    fn drop(&mut self) {
        for (s, prev) in &self.old {
            // SAFETY: putting back the action that was there.
            unsafe {
                let _ = signal::sigaction(*s, prev);
            }
        }
        SIGNAL_PIPE.store(-1, Ordering::Relaxed);
        let _ = &self.write;
    }
}

/// Runs `argv` as the module docs say, keeping its output in `recording` (when there is one),
/// and returns how it ended. `Err` only when the program could not be started.
pub fn run(argv: &[String], mut recording: Option<Recording>) -> io::Result<Ended> {
    let handlers = Handlers::install()?;
    let (out, err, mut outs) = plan_outputs()?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).stdout(out).stderr(err);
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            drop(handlers);
            return Err(e);
        }
    };
    // The program's ends of the pipes and the pseudo-terminal are closed here, so their end
    // of file is the program's.
    drop(cmd);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let ttys: Vec<(RawFd, RawFd)> = outs
        .iter()
        .filter_map(|o| match o {
            Out::Relayed { read, dest } if window_size(read.as_raw_fd()).is_some() => {
                Some((read.as_raw_fd(), *dest))
            }
            _ => None,
        })
        .collect();
    let pass_on = |signals: Vec<(Signal, bool)>| {
        for (s, kernel) in signals {
            if s == Signal::SIGWINCH {
                for &(master, dest) in &ttys {
                    if let Some(ws) = window_size(dest) {
                        set_window_size(master, &ws);
                    }
                }
            } else if !kernel {
                // Sent to omnish alone: the program's. One from the terminal reached it too.
                let _ = signal::kill(pid, s);
            }
        }
    };
    let mut buf = vec![0u8; CHUNK];
    loop {
        let live: Vec<usize> = (0..outs.len())
            .filter(|&i| matches!(outs[i], Out::Relayed { .. }))
            .collect();
        if live.is_empty() {
            break;
        }
        let mut fds: Vec<PollFd> = live
            .iter()
            .map(|&i| match &outs[i] {
                Out::Relayed { read, .. } => PollFd::new(read.as_fd(), PollFlags::POLLIN),
                Out::Inherited => unreachable!(),
            })
            .collect();
        fds.push(PollFd::new(handlers.read.as_fd(), PollFlags::POLLIN));
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(Errno::EINTR) => {
                pass_on(handlers.take());
                continue;
            }
            Err(e) => return Err(e.into()),
        }
        let ready: Vec<bool> = fds[..live.len()]
            .iter()
            .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
            .collect();
        let signalled = fds[live.len()]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLIN));
        drop(fds);
        if signalled {
            pass_on(handlers.take());
        }
        for (k, &i) in live.iter().enumerate() {
            if !ready[k] {
                continue;
            }
            let Out::Relayed { read, dest } = &outs[i] else {
                continue;
            };
            let dest = *dest;
            match nix::unistd::read(read, &mut buf) {
                Ok(0) | Err(Errno::EIO) => outs[i] = Out::Inherited,
                Ok(n) => {
                    if let Some(r) = recording.as_mut() {
                        r.chunk(&buf[..n]);
                    }
                    let mut on_sig = || pass_on(handlers.take());
                    if write_all(dest, &buf[..n], &mut on_sig).is_err() {
                        // Its reader is gone: so is the program's, which hears of it when it
                        // next writes.
                        outs[i] = Out::Inherited;
                    }
                }
                Err(Errno::EINTR) | Err(Errno::EAGAIN) => {}
                Err(_) => outs[i] = Out::Inherited,
            }
        }
    }
    let status = loop {
        match nix::sys::wait::waitpid(pid, None) {
            Ok(nix::sys::wait::WaitStatus::Exited(_, code)) => {
                break ExitStatus::from_raw((code & 0xff) << 8);
            }
            Ok(nix::sys::wait::WaitStatus::Signaled(_, s, core)) => {
                break ExitStatus::from_raw(s as i32 | if core { 0x80 } else { 0 });
            }
            Ok(_) => continue,
            Err(Errno::EINTR) => pass_on(handlers.take()),
            Err(e) => return Err(e.into()),
        }
    };
    drop(handlers);
    let ended = Ended { status };
    if let Some(r) = recording.take() {
        r.finish(Some(ended.code()));
    }
    Ok(ended)
}
