//! Runs the shell in a pseudo-terminal and moves bytes: keyboard → shell, shell → screen, with
//! the recorder watching both.
//!
//! One thread, one `poll(2)` loop over the real terminal, the PTY master and a self-pipe for
//! signals; it only moves bytes. Every disk write goes to the recorder's writer thread. Writes
//! to the shell and to the screen are non-blocking and queued, so a paste into a shell that is
//! busy printing can never deadlock the two directions, and a stopped terminal (Ctrl-S, a slow
//! ssh link) cannot keep the keyboard from reaching the shell. The real terminal is in raw mode
//! while the shell runs and is restored on every way out: return, error, panic (a drop guard),
//! and SIGTERM/SIGHUP/SIGINT, which end the shell (SIGHUP, then SIGTERM, then SIGKILL for a
//! shell that ignores them) and the loop normally. SIGXFSZ is caught, so a file size limit
//! makes a write fail (and recording stop) instead of killing omnish.

use crate::record::marker::{Marker, Piece, Scanner};
use crate::record::nest;
use crate::record::recorder::{FRAME_DELAY, Recorder};
use crate::record::typeahead::EchoModes;
use crate::store::now_ms;
use anyhow::{Context, Result};
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::signal::{Signal, kill};
use nix::sys::termios::{self, LocalFlags, SetArg, Termios};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use signal_hook::consts::signal::{SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};
use std::io::{self, IsTerminal, Write};
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a piece of a possible marker may wait for the rest before it is shown as output.
const HOLD_LIMIT: Duration = Duration::from_millis(500);
/// How long input from a pipe waits for the shell's first prompt before it is sent anyway.
const PROMPT_WAIT: Duration = Duration::from_secs(5);
/// After the first prompt, how long piped input waits for the line editor to turn echo off.
const EDITOR_WAIT: Duration = Duration::from_millis(500);
const READ_SIZE: usize = 64 * 1024;
/// After the shell exited, how long output still held in the terminal is shown.
const EXIT_DRAIN: Duration = Duration::from_millis(200);
/// Told to stop, how long the shell gets after each signal before the next, stronger one.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// At the end, how long the writer thread may take to put the rest on disk.
const WRITER_DRAIN: Duration = Duration::from_secs(5);
/// Most bytes waiting for the screen before the shell's output is no longer read (the shell
/// then waits, as it would for a slow terminal; the keyboard still reaches it).
const SCREEN_LIMIT: usize = 4 * READ_SIZE;

/// What to run and how to watch it.
pub struct Session {
    pub command: CommandBuilder,
    pub scanner: Option<Scanner>,
    pub recorder: Option<Recorder>,
    /// Deleted once the shell showed its first prompt (it has read its rc files by then).
    pub rc_dir: Option<tempfile::TempDir>,
    /// For an unhooked run: the one command the whole run records.
    pub whole_run_command: Option<String>,
}

/// How the shell ended.
pub struct Outcome {
    /// Exit status, 128+N when killed by signal N.
    pub status: i32,
    /// omnish was told to stop (SIGTERM, SIGHUP, ...) and hung up the shell.
    pub interrupted: bool,
}

/// The terminal size of the first of stdout, stdin, stderr that is a terminal.
pub fn terminal_size() -> Option<(u16, u16)> {
    for fd in [1, 0, 2] {
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: TIOCGWINSZ writes a winsize into the pointer we own.
        if unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } == 0 && ws.ws_col > 0 {
            return Some((ws.ws_col, ws.ws_row.max(1)));
        }
    }
    None
}

/// The terminal modes to put back, for the panic hook.
static SAVED_MODES: Mutex<Option<Termios>> = Mutex::new(None);
/// The file status flags of stdout before it was made non-blocking, for the panic hook.
static SAVED_OUT_FLAGS: Mutex<Option<OFlag>> = Mutex::new(None);

/// Makes stdout non-blocking, so a terminal that stops reading cannot stall the loop, and
/// puts the flags back when dropped (the open file may be shared with the parent shell).
struct NonBlockingOut {
    saved: OFlag,
}

impl NonBlockingOut {
    fn enable() -> io::Result<NonBlockingOut> {
        let out = io::stdout();
        let saved = OFlag::from_bits_retain(fcntl(&out, FcntlArg::F_GETFL)?);
        fcntl(&out, FcntlArg::F_SETFL(saved | OFlag::O_NONBLOCK))?;
        *SAVED_OUT_FLAGS.lock().unwrap_or_else(|e| e.into_inner()) = Some(saved);
        Ok(NonBlockingOut { saved })
    }
}

fn restore_out_flags(flags: OFlag) {
    let _ = fcntl(io::stdout(), FcntlArg::F_SETFL(flags));
}

impl Drop for NonBlockingOut {
    fn drop(&mut self) {
        restore_out_flags(self.saved);
        SAVED_OUT_FLAGS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }
}

/// Catches SIGXFSZ (a file size limit, `ulimit -f`), which would kill omnish and leave the
/// terminal raw: the write that hit the limit fails with EFBIG instead, and recording stops.
/// Caught, not ignored, so the shell (exec resets handlers) still gets the default.
pub fn catch_file_size_signal() {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    let flag = FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)));
    let _ = signal_hook::flag::register(signal_hook::consts::signal::SIGXFSZ, Arc::clone(flag));
}

/// Kills and reaps the shell unless it was reaped, on every way out of [`run`].
struct ChildGuard {
    pid: Pid,
    reaped: bool,
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if !self.reaped && self.pid.as_raw() > 0 {
            let _ = kill(self.pid, Signal::SIGKILL);
            let _ = waitpid(self.pid, None);
        }
    }
}

/// Puts stdin in raw mode and restores it when dropped (unwinding included). A panic hook puts
/// the modes back before the panic message prints, so the message is readable.
struct RawMode {
    saved: Termios,
}

impl RawMode {
    fn enable() -> Option<RawMode> {
        let stdin = io::stdin();
        let saved = termios::tcgetattr(&stdin).ok()?;
        let mut raw = saved.clone();
        termios::cfmakeraw(&mut raw);
        termios::tcsetattr(&stdin, SetArg::TCSAFLUSH, &raw).ok()?;
        *SAVED_MODES.lock().unwrap_or_else(|e| e.into_inner()) = Some(saved.clone());
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| {
            let default = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if let Some(modes) = SAVED_MODES.lock().ok().and_then(|mut m| m.take()) {
                    let _ = termios::tcsetattr(io::stdin(), SetArg::TCSANOW, &modes);
                }
                if let Some(flags) = SAVED_OUT_FLAGS.lock().ok().and_then(|mut m| m.take()) {
                    restore_out_flags(flags);
                }
                default(info);
            }));
        });
        Some(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(io::stdin(), SetArg::TCSAFLUSH, &self.saved);
        SAVED_MODES.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

struct Signals {
    pipe: UnixStream,
    winch: Arc<AtomicBool>,
    child: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    fn install() -> Result<Signals> {
        let (read, write) = UnixStream::pair()?;
        read.set_nonblocking(true)?;
        write.set_nonblocking(true)?;
        let winch = Arc::new(AtomicBool::new(false));
        let child = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for (sig, flag) in [
            (SIGWINCH, &winch),
            (SIGCHLD, &child),
            (SIGTERM, &stop),
            (SIGHUP, &stop),
            (SIGINT, &stop),
            (SIGQUIT, &stop),
        ] {
            ids.push(signal_hook::flag::register(sig, Arc::clone(flag))?);
            ids.push(signal_hook::low_level::pipe::register(
                sig,
                write.try_clone()?,
            )?);
        }
        Ok(Signals {
            pipe: read,
            winch,
            child,
            stop,
            ids,
        })
    }

    fn drain(&self) {
        let mut buf = [0u8; 64];
        while matches!(io::Read::read(&mut &self.pipe, &mut buf), Ok(n) if n > 0) {}
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain fcntl on a descriptor we own for the duration of the session.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

fn read_fd(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: reads into a buffer we own.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

fn write_fd(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: writes from a buffer we own.
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Whether the PTY currently echoes what is typed. Password prompts turn echo off and keep
/// canonical mode; what is typed then must never be recorded.
fn pty_echoes(master: RawFd) -> bool {
    echo_modes(master).is_some()
}

/// How the PTY echoes what is typed now, or `None` when it does not echo (one `tcgetattr`).
fn echo_modes(master: RawFd) -> Option<EchoModes> {
    // SAFETY: the master descriptor stays open for the whole session.
    let fd = unsafe { BorrowedFd::borrow_raw(master) };
    let t = termios::tcgetattr(fd).ok()?;
    t.local_flags
        .contains(LocalFlags::ECHO)
        .then(|| EchoModes::from_termios(&t))
}

/// Gives up on a held marker candidate (it waited too long, or the shell is gone): its bytes
/// are output after all, recorded and queued for the screen.
fn release_held(scanner: &mut Scanner, recorder: Option<&mut Recorder>, screen: &mut Screen) {
    let mut text = Vec::new();
    scanner.flush(&mut |p| {
        if let Piece::Text(t) = p {
            text.extend_from_slice(t);
        }
    });
    screen.push(&text);
    if let Some(r) = recorder {
        let now = now_ms();
        r.output(now, &text);
        r.end_of_read(now);
    }
}

/// Bytes on their way to the real terminal: written without blocking, the rest kept for when
/// the terminal can take more.
struct Screen {
    queue: Vec<u8>,
    written: usize,
    open: bool,
    /// The last byte queued, to know whether a line is open.
    last: u8,
}

impl Screen {
    fn push(&mut self, bytes: &[u8]) {
        if self.open && !bytes.is_empty() {
            self.queue.extend_from_slice(bytes);
            self.last = bytes[bytes.len() - 1];
        }
    }

    fn pending(&self) -> usize {
        self.queue.len() - self.written
    }

    /// Writes what the terminal takes now.
    fn write(&mut self) {
        while self.open && self.pending() > 0 {
            match write_fd(1, &self.queue[self.written..]) {
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => self.open = false,
            }
        }
        if self.pending() == 0 || !self.open {
            self.queue.clear();
            self.written = 0;
        }
    }

    /// A line of our own, on a line of its own.
    fn notice(&mut self, text: &str) {
        if self.last != b'\n' && self.last != 0 {
            self.push(b"\r\n");
        }
        self.push(text.as_bytes());
        self.push(b"\r\n");
    }
}

/// Whether a Ctrl-D ending piped input can go now. Written while a command runs, the terminal
/// (in canonical mode) would swallow it as end-of-file for that command; the line editors of
/// bash and zsh read in non-canonical mode, so the prompt is back when canonical mode is off.
/// Shells without a line editor read canonically at the prompt too: after a quiet second, send.
fn eot_due(master: RawFd, hooked: bool, waiting: &mut Option<Instant>) -> bool {
    // SAFETY: the master descriptor stays open for the whole session.
    let fd = unsafe { BorrowedFd::borrow_raw(master) };
    let canonical = termios::tcgetattr(fd)
        .map(|t| t.local_flags.contains(LocalFlags::ICANON))
        .unwrap_or(true);
    if !hooked || !canonical {
        return true;
    }
    waiting.get_or_insert_with(Instant::now).elapsed() >= Duration::from_secs(1)
}

fn wait_status(pid: i32, block: bool) -> Option<i32> {
    let mut status = 0;
    let flags = if block { 0 } else { libc::WNOHANG };
    // SAFETY: waits for our own child.
    let r = unsafe { libc::waitpid(pid, &mut status, flags) };
    if r != pid {
        return None;
    }
    if libc::WIFEXITED(status) {
        Some(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Some(128 + libc::WTERMSIG(status))
    } else {
        None
    }
}

/// Sends the next, stronger signal to a shell that was told to stop: SIGHUP (a hangup, as when
/// a terminal closes), then SIGTERM, then SIGKILL for a shell that ignores both.
struct Stopper {
    step: usize,
    next: Option<Instant>,
}

impl Stopper {
    fn escalate(&mut self, pid: Pid) {
        let signal = [Signal::SIGHUP, Signal::SIGTERM, Signal::SIGKILL];
        if let Some(&sig) = signal.get(self.step) {
            let _ = kill(pid, sig);
            self.step += 1;
            self.next = (self.step < signal.len()).then(|| Instant::now() + STOP_GRACE);
        }
    }
}

/// Runs the session to the end and returns how the shell ended.
pub fn run(mut session: Session, size: (u16, u16)) -> Result<Outcome> {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: size.1,
            cols: size.0,
            pixel_width: 0,
            pixel_height: 0,
        })
        .context("cannot open a pseudo-terminal")?;
    if let Some(name) = pair.master.tty_name() {
        session
            .command
            .env("OMNISH_PTY", name.to_string_lossy().as_ref());
    }
    let mut child = pair
        .slave
        .spawn_command(session.command)
        .context("cannot start the shell")?;
    drop(pair.slave);
    let pid = child.process_id().map(|p| p as i32).unwrap_or(0);
    let mut guard = ChildGuard {
        pid: Pid::from_raw(pid),
        reaped: false,
    };
    let master = pair
        .master
        .as_raw_fd()
        .context("the pseudo-terminal has no file descriptor")?;
    set_nonblocking(master)?;

    let signals = Signals::install()?;
    let stdin_is_tty = io::stdin().is_terminal();
    let stdout_is_tty = io::stdout().is_terminal();
    let raw = if stdin_is_tty {
        RawMode::enable()
    } else {
        None
    };
    let nonblocking_out = NonBlockingOut::enable().ok();
    let started = Instant::now();
    let mut recorder = session.recorder;
    if let Some(r) = recorder.as_mut() {
        r.set_shell_pid(pid as u32);
    }
    let mut scanner = session.scanner;
    let mut rc_dir = session.rc_dir;
    if let (Some(rec), Some(line)) = (recorder.as_mut(), session.whole_run_command) {
        rec.begin(now_ms(), line, "argv");
    }
    let hooked = scanner.is_some();

    let mut stdin_open = true;
    let mut to_shell: Vec<u8> = Vec::new();
    // Shells a bootstrap asks hooks for, found in this read (see record::nest).
    let mut requests: Vec<String> = Vec::new();
    let mut screen = Screen {
        queue: Vec::with_capacity(READ_SIZE),
        written: 0,
        open: true,
        last: 0,
    };
    let mut buf = vec![0u8; READ_SIZE];
    let mut held_since: Option<Instant> = None;
    let mut exit_status: Option<i32> = None;
    let mut interrupted = false;
    let mut stopper = Stopper {
        step: 0,
        next: None,
    };
    let mut master_eof = false;
    let mut exit_deadline: Option<Instant> = None;
    let mut prompt_ready = !hooked || stdin_is_tty;
    let mut first_prompt: Option<Instant> = None;
    let mut eot_pending = false;
    let mut eot_wait: Option<Instant> = None;
    // The warning that recording stopped, waiting for a place where it splits no output: the
    // next prompt or command start, or (without hooks) the end of the current line.
    let mut warning: Option<String> = None;

    let result: Result<()> = (|| {
        loop {
            // Input from a pipe is typed ahead: it waits until the shell's line editor has the
            // terminal (prompt shown, echo off), or the tty would echo it a second time.
            if !prompt_ready {
                let prompts = recorder.as_ref().map_or(1, |r| r.prompts());
                if prompts > 0 {
                    let since = *first_prompt.get_or_insert_with(Instant::now);
                    prompt_ready = !pty_echoes(master) || since.elapsed() >= EDITOR_WAIT;
                }
                prompt_ready |= started.elapsed() >= PROMPT_WAIT;
            }
            let read_stdin = stdin_open && prompt_ready && to_shell.len() < READ_SIZE;
            let read_master = screen.pending() < SCREEN_LIMIT;
            let mut fds = [
                libc::pollfd {
                    fd: master,
                    events: if read_master { libc::POLLIN } else { 0 }
                        | if to_shell.is_empty() {
                            0
                        } else {
                            libc::POLLOUT
                        },
                    revents: 0,
                },
                libc::pollfd {
                    fd: signals.pipe.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: if read_stdin { 0 } else { -1 },
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: if screen.pending() > 0 { 1 } else { -1 },
                    events: libc::POLLOUT,
                    revents: 0,
                },
            ];
            // Sleep until something happens, unless a deadline is near: a held marker
            // candidate, piped input waiting for the prompt, a pending Ctrl-D, the next signal
            // for a shell told to stop, or the drain after the shell exited.
            let timeout = if exit_status.is_some() || eot_pending || held_since.is_some() {
                20
            } else if (!prompt_ready && stdin_open) || stopper.next.is_some() {
                50
            } else {
                -1
            };
            // Output waiting in an unfinished frame goes to the writer within FRAME_DELAY; a
            // record held for keys typed ahead, at its deadline.
            let wake = |timeout: i32, ms: i32| if timeout < 0 { ms } else { timeout.min(ms) };
            let timeout = match recorder.as_ref() {
                Some(r) if r.frame_waiting() => wake(timeout, FRAME_DELAY.as_millis() as i32),
                _ => timeout,
            };
            let timeout = match recorder.as_ref().and_then(|r| r.wake_at()) {
                Some(at) => wake(timeout, at.saturating_sub(now_ms()).min(60_000) as i32),
                None => timeout,
            };
            // SAFETY: fds is a valid slice of pollfd for the call's duration.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e.into());
                }
            }
            let now = now_ms();

            // Shell → screen.
            if read_master && fds[0].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                match read_fd(master, &mut buf) {
                    Ok(0) => master_eof = true,
                    Ok(n) => {
                        match scanner.as_mut() {
                            Some(sc) => {
                                let rec = &mut recorder;
                                let screen = &mut screen;
                                let warning = &mut warning;
                                sc.feed(&buf[..n], &mut |p| match p {
                                    Piece::Text(t) => {
                                        screen.push(t);
                                        if let Some(r) = rec.as_mut() {
                                            r.output(now, t);
                                        }
                                    }
                                    Piece::Marker(m) => {
                                        if let Marker::NestRequest { shell } = &m {
                                            requests.push(shell.clone());
                                        }
                                        let boundary =
                                            matches!(m, Marker::PromptStart | Marker::OutputStart);
                                        if let Some(r) = rec.as_mut() {
                                            r.marker(now, m);
                                            // The marker itself may raise one (a shell the
                                            // hooks cannot follow).
                                            if boundary && warning.is_none() {
                                                *warning = r.take_warning();
                                            }
                                        }
                                        // At a prompt, or before the next command's
                                        // output: never inside output.
                                        if boundary {
                                            if let Some(w) = warning.take() {
                                                screen.notice(&w);
                                            }
                                        }
                                    }
                                });
                                // A bootstrap asked for hooks: they are typed to it, ahead
                                // of any key typed since (see record::nest).
                                for shell in requests.drain(..).filter(|s| nest::answered(s)) {
                                    let key = nest::supported(&shell)
                                        .then(|| crate::store::secret_hex(16).ok())
                                        .flatten();
                                    if let Some(key) = &key {
                                        sc.allow_nest_key(key);
                                    }
                                    to_shell
                                        .extend_from_slice(&nest::reply(&shell, key.as_deref()));
                                }
                                held_since = if sc.holding() {
                                    held_since.or(Some(Instant::now()))
                                } else {
                                    None
                                };
                            }
                            None => {
                                let out = &buf[..n];
                                match (warning.is_some(), out.iter().rposition(|&b| b == b'\n')) {
                                    (true, Some(eol)) => {
                                        screen.push(&out[..=eol]);
                                        screen.notice(&warning.take().unwrap_or_default());
                                        screen.push(&out[eol + 1..]);
                                    }
                                    _ => screen.push(out),
                                }
                                if let Some(r) = recorder.as_mut() {
                                    r.output(now, out);
                                }
                            }
                        }
                        // The screen first, then the frame goes to the writer.
                        screen.write();
                        if let Some(r) = recorder.as_mut() {
                            r.end_of_read(now);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    // EIO: every process holding the terminal has closed it.
                    Err(_) => master_eof = true,
                }
            } else if fds[3].revents != 0 {
                screen.write();
            }

            // Keyboard → shell.
            if read_stdin && fds[2].revents != 0 {
                match read_fd(0, &mut buf) {
                    Ok(0) => {
                        stdin_open = false;
                        // Input from a pipe ended: Ctrl-D, once the shell is back at its prompt.
                        eot_pending = !stdin_is_tty;
                    }
                    Ok(n) => {
                        to_shell.extend_from_slice(&buf[..n]);
                        if let Some(r) = recorder.as_mut() {
                            if let Some(modes) = echo_modes(master) {
                                r.input(now, &buf[..n], &modes);
                            }
                        }
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                        ) => {}
                    Err(_) => stdin_open = false,
                }
            }
            if eot_pending && to_shell.is_empty() && eot_due(master, hooked, &mut eot_wait) {
                to_shell.push(0x04);
                eot_pending = false;
            }
            if !to_shell.is_empty() && !master_eof {
                match write_fd(master, &to_shell) {
                    Ok(n) => {
                        to_shell.drain(..n);
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                        ) => {}
                    Err(_) => to_shell.clear(),
                }
            }

            // Signals.
            if fds[1].revents != 0 {
                signals.drain();
            }
            if signals.winch.swap(false, Ordering::Relaxed) {
                if let Some((cols, rows)) = terminal_size() {
                    let _ = pair.master.resize(PtySize {
                        rows,
                        cols,
                        pixel_width: 0,
                        pixel_height: 0,
                    });
                    if let Some(r) = recorder.as_mut() {
                        r.resize(cols, rows);
                    }
                }
            }
            // Told to stop (again): the next signal at once; else after the grace period.
            if signals.stop.swap(false, Ordering::Relaxed) && exit_status.is_none() {
                interrupted = true;
                stopper.escalate(guard.pid);
            } else if stopper.next.is_some_and(|t| Instant::now() >= t) && exit_status.is_none() {
                stopper.escalate(guard.pid);
            }
            if signals.child.swap(false, Ordering::Relaxed) && exit_status.is_none() {
                exit_status = wait_status(pid, false);
                guard.reaped = exit_status.is_some();
            }

            // Housekeeping. A candidate waits for the bytes that decide it only while the
            // shell's output is read: not while a stopped terminal (Ctrl-S) holds it back.
            if !read_master {
                held_since = held_since.map(|_| Instant::now());
            }
            if let Some(since) = held_since {
                if since.elapsed() >= HOLD_LIMIT {
                    if let Some(sc) = scanner.as_mut() {
                        release_held(sc, recorder.as_mut(), &mut screen);
                        screen.write();
                    }
                    held_since = None;
                }
            }
            if let Some(r) = recorder.as_mut() {
                if r.frame_waiting() || r.wake_at().is_some_and(|at| now_ms() >= at) {
                    r.end_of_read(now_ms());
                }
                if rc_dir.is_some() && r.prompts() > 0 {
                    rc_dir = None;
                }
                if warning.is_none() {
                    warning = r.take_warning();
                    // Not a terminal: the warning cannot split what the user sees.
                    if !stdout_is_tty {
                        if let Some(w) = warning.take() {
                            let _ = writeln!(io::stderr(), "{w}");
                        }
                    }
                }
            }
            if master_eof {
                break;
            }
            if exit_status.is_some() {
                // The shell is gone, but background jobs may hold the terminal open: show what
                // is still buffered for a moment, then stop.
                let deadline = *exit_deadline.get_or_insert_with(|| Instant::now() + EXIT_DRAIN);
                if Instant::now() >= deadline || n == 0 {
                    break;
                }
            }
        }
        Ok(())
    })();

    if let Some(sc) = scanner.as_mut() {
        release_held(sc, recorder.as_mut(), &mut screen);
    }
    let status = match exit_status {
        Some(s) => s,
        None => {
            if result.is_err() {
                // The loop failed with the shell still running: end it.
                let _ = kill(guard.pid, Signal::SIGKILL);
            }
            wait_status(pid, true)
                .unwrap_or_else(|| child.wait().map(|s| s.exit_code() as i32).unwrap_or(1))
        }
    };
    guard.reaped = true;
    // What the terminal has not taken yet, now waiting for it.
    drop(nonblocking_out);
    screen.write();
    let mut notices = Vec::new();
    if let Some(mut r) = recorder {
        r.finish(now_ms(), Some(status), interrupted);
        if !r.close_writer(WRITER_DRAIN) {
            notices.push(format!(
                "omnish: the disk did not finish writing within {} s; the recording of {} may end early",
                WRITER_DRAIN.as_secs(),
                r.dir().display()
            ));
        }
        notices.extend(warning.take());
        notices.extend(std::iter::from_fn(|| r.take_warning()));
    }
    drop(raw);
    drop(signals);
    for n in notices {
        if stdout_is_tty && screen.last != b'\n' && screen.last != 0 {
            let _ = write!(io::stderr(), "\r\n");
        }
        let _ = writeln!(io::stderr(), "{n}");
        screen.last = b'\n';
    }
    result?;
    Ok(Outcome {
        status,
        interrupted,
    })
}
