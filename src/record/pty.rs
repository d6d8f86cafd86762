//! Runs the shell in a pseudo-terminal and moves bytes: keyboard → shell, shell → screen, with
//! the recorder watching both.
//!
//! One thread, one `poll(2)` loop over the real terminal, the PTY master and a self-pipe for
//! signals. Writes to the shell are non-blocking and queued, so a paste into a shell that is busy
//! printing can never deadlock the two directions. The real terminal is in raw mode while the
//! shell runs and is restored on every way out: return, error, panic (a drop guard), and
//! SIGTERM/SIGHUP (which hang up the shell and end the loop normally).

use crate::record::marker::{Piece, Scanner};
use crate::record::recorder::Recorder;
use crate::store::now_ms;
use anyhow::{Context, Result};
use nix::sys::termios::{self, LocalFlags, SetArg, Termios};
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
    // SAFETY: the master descriptor stays open for the whole session.
    let fd = unsafe { BorrowedFd::borrow_raw(master) };
    termios::tcgetattr(fd)
        .map(|t| t.local_flags.contains(LocalFlags::ECHO))
        .unwrap_or(false)
}

/// Gives up on a held marker candidate (it waited too long, or the shell is gone): its bytes
/// are output after all, shown and recorded.
fn release_held(
    scanner: &mut Scanner,
    recorder: Option<&mut Recorder>,
    stdout: Option<&io::Stdout>,
) {
    let mut text = Vec::new();
    scanner.flush(&mut |p| {
        if let Piece::Text(t) = p {
            text.extend_from_slice(t);
        }
    });
    if let Some(r) = recorder {
        let now = now_ms();
        r.output(now, &text);
        r.end_of_read(now);
    }
    if let Some(out) = stdout {
        let mut out = out.lock();
        let _ = out.write_all(&text).and_then(|_| out.flush());
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
    let master = pair
        .master
        .as_raw_fd()
        .context("the pseudo-terminal has no file descriptor")?;
    set_nonblocking(master)?;

    let signals = Signals::install()?;
    let stdin_is_tty = io::stdin().is_terminal();
    let raw = if stdin_is_tty {
        RawMode::enable()
    } else {
        None
    };
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
    let mut screen: Vec<u8> = Vec::with_capacity(READ_SIZE);
    let mut stdout_open = true;
    let mut buf = vec![0u8; READ_SIZE];
    let mut held_since: Option<Instant> = None;
    let mut exit_status: Option<i32> = None;
    let mut interrupted = false;
    let mut master_eof = false;
    let mut exit_deadline: Option<Instant> = None;
    let mut prompt_ready = !hooked || stdin_is_tty;
    let mut first_prompt: Option<Instant> = None;
    let mut eot_pending = false;
    let mut eot_wait: Option<Instant> = None;
    let stdout = io::stdout();

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
            let mut fds = vec![
                libc::pollfd {
                    fd: master,
                    events: libc::POLLIN
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
            ];
            if read_stdin {
                fds.push(libc::pollfd {
                    fd: 0,
                    events: libc::POLLIN,
                    revents: 0,
                });
            }
            // Sleep until something happens, unless a deadline is near: buffered frames (on disk
            // within FLUSH_INTERVAL_MS), a held marker candidate, piped input waiting for the
            // prompt, a pending Ctrl-D, or the drain after the shell exited.
            let timeout = if exit_status.is_some() || eot_pending || held_since.is_some() {
                20
            } else if (!prompt_ready && stdin_open)
                || recorder.as_ref().is_some_and(|r| r.has_unflushed())
            {
                (crate::record::recorder::FLUSH_INTERVAL_MS / 2) as i32
            } else {
                -1
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
            if fds[0].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                match read_fd(master, &mut buf) {
                    Ok(0) => master_eof = true,
                    Ok(n) => {
                        screen.clear();
                        match scanner.as_mut() {
                            Some(sc) => {
                                let rec = &mut recorder;
                                sc.feed(&buf[..n], &mut |p| match p {
                                    Piece::Text(t) => {
                                        screen.extend_from_slice(t);
                                        if let Some(r) = rec.as_mut() {
                                            r.output(now, t);
                                        }
                                    }
                                    Piece::Marker(m) => {
                                        if let Some(r) = rec.as_mut() {
                                            r.marker(now, m);
                                        }
                                    }
                                });
                                held_since = if sc.holding() {
                                    held_since.or(Some(Instant::now()))
                                } else {
                                    None
                                };
                            }
                            None => {
                                screen.extend_from_slice(&buf[..n]);
                                if let Some(r) = recorder.as_mut() {
                                    r.output(now, &buf[..n]);
                                }
                            }
                        }
                        if let Some(r) = recorder.as_mut() {
                            r.end_of_read(now);
                        }
                        if stdout_open && !screen.is_empty() {
                            let mut out = stdout.lock();
                            if out.write_all(&screen).and_then(|_| out.flush()).is_err() {
                                stdout_open = false;
                            }
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    // EIO: every process holding the terminal has closed it.
                    Err(_) => master_eof = true,
                }
            }

            // Keyboard → shell.
            if read_stdin && fds.len() > 2 && fds[2].revents != 0 {
                match read_fd(0, &mut buf) {
                    Ok(0) => {
                        stdin_open = false;
                        // Input from a pipe ended: Ctrl-D, once the shell is back at its prompt.
                        eot_pending = !stdin_is_tty;
                    }
                    Ok(n) => {
                        if let Some(r) = recorder.as_mut() {
                            if pty_echoes(master) {
                                r.input(now, &buf[..n]);
                            }
                        }
                        to_shell.extend_from_slice(&buf[..n]);
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
            if signals.stop.swap(false, Ordering::Relaxed) && !interrupted {
                interrupted = true;
                // SAFETY: signals our own child.
                unsafe { libc::kill(pid, libc::SIGHUP) };
            }
            if signals.child.swap(false, Ordering::Relaxed) && exit_status.is_none() {
                exit_status = wait_status(pid, false);
            }

            // Housekeeping.
            if let Some(since) = held_since {
                if since.elapsed() >= HOLD_LIMIT {
                    if let Some(sc) = scanner.as_mut() {
                        release_held(sc, recorder.as_mut(), stdout_open.then_some(&stdout));
                    }
                    held_since = None;
                }
            }
            if let Some(r) = recorder.as_mut() {
                r.tick(now);
                if rc_dir.is_some() && r.prompts() > 0 {
                    rc_dir = None;
                }
                if let Some(warning) = r.take_warning() {
                    let _ = write!(io::stderr(), "\r\n{warning}\r\n");
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
        release_held(sc, recorder.as_mut(), stdout_open.then_some(&stdout));
    }
    let status = match exit_status {
        Some(s) => s,
        None => wait_status(pid, true)
            .unwrap_or_else(|| child.wait().map(|s| s.exit_code() as i32).unwrap_or(1)),
    };
    if let Some(mut r) = recorder {
        r.finish(now_ms(), Some(status), interrupted);
        if let Some(warning) = r.take_warning() {
            let _ = write!(io::stderr(), "\r\n{warning}\r\n");
        }
    }
    let _ = stdout.lock().flush();
    drop(raw);
    drop(signals);
    result?;
    Ok(Outcome {
        status,
        interrupted,
    })
}
