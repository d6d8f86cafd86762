//! Runs the shell in a pseudo-terminal: opens it and starts the shell with portable-pty, then
//! one thread, one `poll(2)` loop, waits for the events and hands each to the `Relay`
//! (`record::relay`): keys on the real terminal, the shell's output and room to write on the
//! PTY master, room on the screen, signals (through a self-pipe), and the writer thread's
//! notices (through a socket it writes to). The loop only moves bytes: every disk write goes
//! to the recorder's writer thread.
//!
//! `Native` is the shell's side for the relay: portable-pty's master and the shell's process,
//! read, written, polled, reaped and signalled with nix. The user's side is `Terminal`
//! (`record::tty`): in raw mode while the shell runs, restored on every way out: return,
//! error, panic, and SIGTERM/SIGHUP/SIGINT/SIGQUIT, which end the shell (SIGHUP, then SIGTERM,
//! then SIGKILL for a shell that ignores them) and the loop normally. The shell is killed and
//! reaped on every way out too. SIGXFSZ is caught, so a file size limit makes a write fail
//! (and recording stop) instead of killing omnish.

use crate::record::farkey::FarKeys;
use crate::record::marker::Scanner;
use crate::record::recorder::Recorder;
pub use crate::record::relay::Outcome;
use crate::record::relay::{self, Now, READ_SIZE, Relay, Sig};
pub(crate) use crate::record::tty::terminal_size;
use crate::record::tty::{Terminal, Tty};
use crate::record::typeahead::EchoModes;
use crate::store::now_ms;
use anyhow::{Context, Result};
use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, kill};
use nix::sys::termios::{self, LocalFlags};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use signal_hook::consts::signal::{SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What to run and how to watch it.
pub struct Session {
    pub command: CommandBuilder,
    pub scanner: Option<Scanner>,
    pub recorder: Option<Recorder>,
    /// Deleted once the shell showed its first prompt (it has read its rc files by then).
    pub rc_dir: Option<tempfile::TempDir>,
    /// For an unhooked run: the one command the whole run records.
    pub whole_run_command: Option<String>,
    /// The ask and fix keys that shells on the far side of `omnish nest` bind, answered here
    /// (record::farkey); `None`: none.
    pub far_keys: Option<crate::record::farkey::FarKeyNames>,
}

/// Catches SIGXFSZ (a file size limit, `ulimit -f`), which would kill omnish and leave the
/// terminal raw: the write that hit the limit fails with EFBIG instead, and recording stops.
/// Caught, not ignored, so the shell (exec resets handlers) still gets the default.
pub fn catch_file_size_signal() {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    let flag = FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)));
    let _ = signal_hook::flag::register(signal_hook::consts::signal::SIGXFSZ, Arc::clone(flag));
}

/// The shell in its pseudo-terminal: portable-pty's master, and the shell's process. Killed and
/// reaped when dropped, unless it was reaped.
pub(crate) struct Native {
    master: Box<dyn MasterPty + Send>,
    /// The master's descriptor, open as long as `master` is.
    fd: RawFd,
    pid: Pid,
    reaped: bool,
    /// The terminal's other side, the shell's (`/dev/pts/N`).
    slave: Option<std::path::PathBuf>,
}

impl Native {
    /// Opens a pseudo-terminal of `size` (columns, rows) and starts `command` on it, with
    /// `OMNISH_PTY` naming the terminal.
    fn spawn(mut command: CommandBuilder, size: (u16, u16)) -> Result<Native> {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: size.1,
                cols: size.0,
                pixel_width: 0,
                pixel_height: 0,
            })
            .context("cannot open a pseudo-terminal")?;
        let slave = pair.master.tty_name();
        if let Some(name) = slave.as_ref() {
            command.env("OMNISH_PTY", name.to_string_lossy().as_ref());
        }
        let child = pair
            .slave
            .spawn_command(command)
            .context("cannot start the shell")?;
        drop(pair.slave);
        let pid = child
            .process_id()
            .and_then(|p| i32::try_from(p).ok())
            .context("the shell has no process id")?;
        let mut native = Native {
            fd: -1,
            master: pair.master,
            pid: Pid::from_raw(pid),
            reaped: false,
            slave,
        };
        native.fd = native
            .master
            .as_raw_fd()
            .context("the pseudo-terminal has no file descriptor")?;
        let flags = OFlag::from_bits_retain(fcntl(native.master(), FcntlArg::F_GETFL)?);
        fcntl(
            native.master(),
            FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK),
        )?;
        Ok(native)
    }

    /// The master's descriptor.
    fn master(&self) -> BorrowedFd<'_> {
        // SAFETY: `fd` belongs to `self.master`, which keeps it open as long as `self` lives.
        unsafe { BorrowedFd::borrow_raw(self.fd) }
    }

    fn pid(&self) -> u32 {
        self.pid.as_raw().unsigned_abs()
    }

    /// Reads the shell's output without waiting.
    fn read(&self, buf: &mut [u8]) -> nix::Result<usize> {
        nix::unistd::read(self.master(), buf)
    }

    fn termios(&self) -> Option<termios::Termios> {
        termios::tcgetattr(self.master()).ok()
    }

    /// How many bytes typed wait for the shell to read them (`TIOCINQ` on its side of the
    /// terminal, opened for the question and closed at once: a descriptor kept open would keep
    /// the terminal from hanging up when the shell ends).
    fn typed_unread(&self) -> Option<usize> {
        nix::ioctl_read_bad!(tiocinq, libc::TIOCINQ, libc::c_int);
        let fd = nix::fcntl::open(
            self.slave.as_deref()?,
            OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .ok()?;
        let mut n: libc::c_int = 0;
        // SAFETY: TIOCINQ writes one int, which we own, on a descriptor we hold open.
        let r = unsafe { tiocinq(fd.as_raw_fd(), &mut n) };
        r.ok().and_then(|_| usize::try_from(n).ok())
    }
}

/// What a line of `/proc/PID/syscall` says the process sleeps in.
#[derive(Debug, PartialEq, Eq)]
enum Sleep {
    /// A call that reads this descriptor.
    Read(RawFd),
    /// A call that waits for any of several descriptors (`poll`, `select` and the like).
    Wait,
    /// Anything else, or running.
    Other,
}

/// Reads a line of `/proc/PID/syscall`: the call's number, then its arguments in hex; `running`
/// or `-1` when in no call.
fn sleep_of(syscall: &str) -> Sleep {
    let mut words = syscall.split_whitespace();
    let Some(nr) = words.next().and_then(|w| w.parse::<libc::c_long>().ok()) else {
        return Sleep::Other;
    };
    let is = |calls: &[libc::c_long]| calls.contains(&nr);
    if is(&[libc::SYS_read, libc::SYS_readv]) {
        let fd = words
            .next()
            .and_then(|w| i64::from_str_radix(w.trim_start_matches("0x"), 16).ok())
            .and_then(|fd| RawFd::try_from(fd).ok());
        return fd.map_or(Sleep::Other, Sleep::Read);
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    let legacy = [libc::SYS_poll, libc::SYS_select, libc::SYS_epoll_wait];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
    let legacy: [libc::c_long; 0] = [];
    if is(&legacy)
        || is(&[
            libc::SYS_ppoll,
            libc::SYS_pselect6,
            libc::SYS_epoll_pwait,
            libc::SYS_epoll_pwait2,
        ])
    {
        return Sleep::Wait;
    }
    Sleep::Other
}

/// Waits for the shell (`hang`: until it ends), and reaps it: its exit status as a shell says
/// it, the code or 128+N when killed by signal N. `Ok(None)`: it has not ended (or only
/// stopped). libc's `waitpid`, not nix's: nix's `WaitStatus` has no name for a real-time signal
/// and reports an error for one, after the process was reaped, its number lost.
fn reap(pid: Pid, hang: bool) -> Result<Option<i32>, Errno> {
    let mut raw: libc::c_int = 0;
    let flags = if hang { 0 } else { libc::WNOHANG };
    // SAFETY: waitpid writes the status into the int we own.
    let r = unsafe { libc::waitpid(pid.as_raw(), &mut raw, flags) };
    if r < 0 {
        return Err(Errno::last());
    }
    if r == 0 {
        return Ok(None);
    }
    Ok(if libc::WIFEXITED(raw) {
        Some(libc::WEXITSTATUS(raw))
    } else if libc::WIFSIGNALED(raw) {
        Some(128 + libc::WTERMSIG(raw))
    } else {
        None
    })
}

impl relay::Pty for Native {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        Ok(nix::unistd::write(self.master(), bytes)?)
    }

    fn echo_modes(&self) -> Option<EchoModes> {
        let t = self.termios()?;
        t.local_flags
            .contains(LocalFlags::ECHO)
            .then(|| EchoModes::from_termios(&t))
    }

    fn canonical(&self) -> bool {
        self.termios()
            .is_none_or(|t| t.local_flags.contains(LocalFlags::ICANON))
    }

    /// From `/proc/PID/syscall`: the shell sleeps reading its terminal (zsh's `read`), or in a
    /// call that waits for input (bash's readline in `pselect6`, fish and nushell in `poll`),
    /// and nothing typed waits on its terminal (a process woken by input still shows the call
    /// it sleeps in until it runs). A `read` of anything else (a pipe from `$(...)` in a prompt
    /// hook, while the terminal is still canonical) is not waiting for input.
    fn shell_waits_for_input(&self) -> Option<bool> {
        if self.reaped {
            return None;
        }
        let text = std::fs::read_to_string(format!("/proc/{}/syscall", self.pid)).ok()?;
        let waits = match sleep_of(&text) {
            Sleep::Read(fd) => {
                let file = std::fs::read_link(format!("/proc/{}/fd/{fd}", self.pid)).ok();
                file.is_some() && file == self.slave
            }
            Sleep::Wait => true,
            Sleep::Other => false,
        };
        Some(waits && self.typed_unread().is_none_or(|n| n == 0))
    }

    fn resize(&mut self, cols: u16, rows: u16) {
        let _ = self.master.resize(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        });
    }

    fn signal(&mut self, signal: Signal) {
        if !self.reaped {
            let _ = kill(self.pid, signal);
        }
    }

    fn try_wait(&mut self) -> Option<i32> {
        match reap(self.pid, false) {
            Ok(status) => {
                self.reaped |= status.is_some();
                status
            }
            Err(_) => None,
        }
    }

    fn wait(&mut self) -> i32 {
        loop {
            match reap(self.pid, true) {
                Ok(Some(status)) => {
                    self.reaped = true;
                    return status;
                }
                Ok(None) => {}
                Err(Errno::EINTR) => {}
                Err(_) => {
                    self.reaped = true;
                    return 1;
                }
            }
        }
    }
}

impl Drop for Native {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = kill(self.pid, Signal::SIGKILL);
            let _ = waitpid(self.pid, None);
        }
    }
}

/// The signals the relay hears of: a flag each, and a self-pipe that wakes the loop.
struct Signals {
    pipe: UnixStream,
    flags: [(Arc<AtomicBool>, Sig); 3],
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    fn install() -> Result<Signals> {
        let (read, write) = UnixStream::pair()?;
        read.set_nonblocking(true)?;
        write.set_nonblocking(true)?;
        let flags = [Sig::Winch, Sig::Stop, Sig::Child].map(|s| (Arc::default(), s));
        let [(winch, _), (stop, _), (child, _)] = &flags;
        let mut ids = Vec::new();
        for (sig, flag) in [
            (SIGWINCH, winch),
            (SIGCHLD, child),
            (SIGTERM, stop),
            (SIGHUP, stop),
            (SIGINT, stop),
            (SIGQUIT, stop),
        ] {
            ids.push(signal_hook::flag::register(sig, Arc::clone(flag))?);
            ids.push(signal_hook::low_level::pipe::register(
                sig,
                write.try_clone()?,
            )?);
        }
        Ok(Signals {
            pipe: read,
            flags,
            ids,
        })
    }

    fn drain(&self) {
        drain(&self.pipe);
    }

    /// The signals that came since the last call, in the order the relay takes them.
    fn take(&self) -> impl Iterator<Item = Sig> + '_ {
        self.flags
            .iter()
            .filter(|(flag, _)| flag.swap(false, Ordering::Relaxed))
            .map(|(_, sig)| *sig)
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Runs the session to the end and returns how the shell ended.
pub fn run(session: Session, size: (u16, u16)) -> Result<Outcome> {
    let Session {
        command,
        scanner,
        mut recorder,
        rc_dir,
        whole_run_command,
        far_keys,
    } = session;
    // What `omnish ask` run for a far key needs of the shell's environment: the session, and
    // the store when the config names it.
    let far_env: Vec<(std::ffi::OsString, std::ffi::OsString)> =
        ["OMNISH_SESSION_ID", "OMNISH_DATA_DIR"]
            .into_iter()
            .filter_map(|k| command.get_env(k).map(|v| (k.into(), v.to_os_string())))
            .collect();
    let pty = Native::spawn(command, size)?;
    let signals = Signals::install()?;
    // The writer's notices wake the loop (one byte each, rarely).
    let notices = recorder
        .as_ref()
        .and_then(|r| r.notifier().subscribe().ok());
    let tty = Terminal::open();
    if let Some(r) = recorder.as_mut() {
        r.set_shell_pid(pty.pid());
    }
    if let (Some(r), Some(line)) = (recorder.as_mut(), whole_run_command) {
        r.begin(now_ms(), line, "argv");
    }
    let far = match (far_keys, recorder.as_ref(), std::env::current_exe()) {
        (Some(keys), Some(r), Ok(program)) if notices.is_some() && !far_env.is_empty() => {
            Some(FarKeys::new(program, far_env, r.notifier(), keys))
        }
        _ => None,
    };
    let mut relay = Relay::new(tty, pty, scanner, recorder, rc_dir, Now::read());
    if let Some(far) = far {
        relay.set_far_keys(far);
    }
    let result = relay_events(&mut relay, &signals, notices.as_ref());
    let status = relay.end(Now::read(), result.is_err());
    let outcome = relay.finish(Now::read(), status);
    drop(relay);
    drop(signals);
    result?;
    Ok(outcome)
}

/// What `poll` saw on each source in one turn of the loop.
struct Ready {
    shell: PollFlags,
    signals: bool,
    input: bool,
    screen: bool,
    notices: bool,
    /// Nothing happened: the wait timed out.
    idle: bool,
}

/// The loop: waits for what the relay is interested in, then hands it each event.
fn relay_events(
    relay: &mut Relay<Terminal, Native>,
    signals: &Signals,
    notices: Option<&UnixStream>,
) -> Result<()> {
    let mut buf = vec![0u8; READ_SIZE];
    // The time of the last events: what the relay is interested in next follows from them.
    let mut now = Now::read();
    loop {
        let want = relay.interest(now);
        let ready = wait(relay, want, signals, notices)?;
        now = Now::read();

        // Shell → screen.
        let hangup = PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR;
        if want.read_shell && ready.shell.intersects(hangup) {
            match relay.pty().read(&mut buf) {
                Ok(0) => relay.on_shell_end(),
                Ok(n) => relay.on_shell_output(&buf[..n], now),
                Err(Errno::EAGAIN | Errno::EINTR) => {}
                // EIO: every process holding the terminal has closed it.
                Err(_) => relay.on_shell_end(),
            }
        } else if ready.screen {
            relay.on_screen_writable();
        }

        // Keyboard → shell.
        if want.read_input && ready.input {
            match relay.tty_mut().read(&mut buf) {
                Ok(0) => relay.on_input_end(),
                Ok(n) => relay.on_input(&buf[..n], now),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => relay.on_input_lost(),
            }
        }
        relay.send_to_shell(now);

        if ready.signals {
            signals.drain();
        }
        for sig in signals.take() {
            relay.on_signal(sig, now);
        }
        if ready.notices {
            if let Some(n) = notices {
                drain(n);
            }
            relay.on_writer_notice();
        }
        relay.on_tick(now);
        if relay.finished(now, ready.idle) {
            return Ok(());
        }
    }
}

/// The descriptors of one `poll(2)`: at most five, kept on the stack (the loop allocates
/// nothing per turn).
struct PollSet<'fd> {
    fds: [PollFd<'fd>; 5],
    len: usize,
}

impl<'fd> PollSet<'fd> {
    /// A set holding `fd`, waited on for `events`, at index 0.
    fn new(fd: BorrowedFd<'fd>, events: PollFlags) -> PollSet<'fd> {
        PollSet {
            fds: std::array::from_fn(|_| PollFd::new(fd, events)),
            len: 1,
        }
    }

    /// Adds `fd`, waited on for `events`; its index.
    fn add(&mut self, fd: BorrowedFd<'fd>, events: PollFlags) -> usize {
        self.fds[self.len] = PollFd::new(fd, events);
        self.len += 1;
        self.len - 1
    }

    /// What happened on the descriptor at `i` (flags nix does not know count as all of them:
    /// the source is looked at).
    fn got(&self, i: Option<usize>) -> PollFlags {
        i.map_or(PollFlags::empty(), |i| {
            self.fds[i].revents().unwrap_or(PollFlags::all())
        })
    }
}

/// One `poll(2)` over the sources the relay is interested in, the signals and the notices.
fn wait(
    relay: &Relay<Terminal, Native>,
    want: relay::Interest,
    signals: &Signals,
    notices: Option<&UnixStream>,
) -> Result<Ready> {
    let mut set = PollSet::new(signals.pipe.as_fd(), PollFlags::POLLIN);
    let mut shell_events = PollFlags::empty();
    if want.read_shell {
        shell_events |= PollFlags::POLLIN;
    }
    if want.write_shell {
        shell_events |= PollFlags::POLLOUT;
    }
    let shell = set.add(relay.pty().master(), shell_events);
    let input = want
        .read_input
        .then(|| set.add(relay.tty().input(), PollFlags::POLLIN));
    let screen = want
        .write_screen
        .then(|| set.add(relay.tty().output(), PollFlags::POLLOUT));
    let notice = notices.map(|socket| set.add(socket.as_fd(), PollFlags::POLLIN));
    let timeout = want.timeout.map_or(PollTimeout::NONE, |d| {
        PollTimeout::try_from(d).unwrap_or(PollTimeout::MAX)
    });
    let n = match poll(&mut set.fds[..set.len], timeout) {
        Ok(n) => n,
        Err(Errno::EINTR) => -1,
        Err(e) => return Err(e.into()),
    };
    Ok(Ready {
        shell: set.got(Some(shell)),
        signals: !set.got(Some(0)).is_empty(),
        input: !set.got(input).is_empty(),
        screen: !set.got(screen).is_empty(),
        notices: !set.got(notice).is_empty(),
        idle: n == 0,
    })
}

/// Reads what a wake-up socket holds, so that it wakes the loop once per event.
fn drain(socket: &UnixStream) {
    let mut buf = [0u8; 64];
    while matches!(io::Read::read(&mut &*socket, &mut buf), Ok(n) if n > 0) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::relay::Pty;
    use std::time::{Duration, Instant};

    fn shell(script: &str) -> Native {
        let mut command = CommandBuilder::new("sh");
        command.args(["-c", script]);
        Native::spawn(command, (80, 24)).unwrap()
    }

    /// Reads the shell's output until it holds `want` (at most 10 s).
    fn read_until(pty: &Native, want: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        while !String::from_utf8_lossy(&got).contains(want) {
            assert!(Instant::now() < deadline, "no {want:?} in {got:?}");
            let mut fds = [PollFd::new(pty.master(), PollFlags::POLLIN)];
            let _ = poll(&mut fds, PollTimeout::from(100u16));
            match pty.read(&mut buf) {
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(Errno::EAGAIN | Errno::EINTR) => {}
                Err(e) => panic!("read: {e}"),
            }
        }
        String::from_utf8_lossy(&got).into_owned()
    }

    /// Waits (at most 10 s) until the shell is seen waiting for input, or not, as `want`.
    fn seen_waiting(pty: &Native, want: bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while pty.shell_waits_for_input() != Some(want) {
            assert!(Instant::now() < deadline, "never seen waiting={want}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The kernel says when the shell sleeps reading its terminal, and when it does something
    /// else (here: waits for a child), which is what the Ctrl-D ending piped input waits on.
    #[test]
    fn the_shell_is_seen_waiting_for_input_only_while_it_reads() {
        let mut pty = shell("echo ready; read line; echo \"got $line\"; sleep 30");
        read_until(&pty, "ready");
        seen_waiting(&pty, true);
        pty.write(b"x\n").unwrap();
        read_until(&pty, "got x");
        // sh now waits for `sleep`: not for input.
        seen_waiting(&pty, false);
        pty.signal(Signal::SIGKILL);
        pty.wait();
        assert_eq!(pty.shell_waits_for_input(), None, "reaped");
    }

    #[test]
    fn syscall_lines_are_read_by_number() {
        let line = |nr: libc::c_long, fd: &str| format!("{nr} {fd} 0x7ffc 0x1 0x0 0x0 0x0 0x7ffd");
        assert_eq!(sleep_of(&line(libc::SYS_read, "0xa")), Sleep::Read(10));
        assert_eq!(sleep_of(&line(libc::SYS_pselect6, "0x1")), Sleep::Wait);
        assert_eq!(sleep_of(&line(libc::SYS_ppoll, "0x7ffc")), Sleep::Wait);
        assert_eq!(sleep_of(&line(libc::SYS_wait4, "0xffffffff")), Sleep::Other);
        assert_eq!(sleep_of("running"), Sleep::Other);
        assert_eq!(sleep_of("-1 0x7ffd 0x7f00"), Sleep::Other);
        assert_eq!(sleep_of(""), Sleep::Other);
    }

    /// A shell reading a pipe (`$(...)` in a prompt hook) does not wait for input.
    #[test]
    fn a_shell_reading_a_pipe_is_not_waiting_for_input() {
        let mut pty = shell("echo ready; x=$(sleep 30); echo done");
        read_until(&pty, "ready");
        let deadline = Instant::now() + Duration::from_secs(10);
        let syscall = format!("/proc/{}/syscall", pty.pid);
        let reading = format!("{} ", libc::SYS_read);
        while !std::fs::read_to_string(&syscall).is_ok_and(|t| t.starts_with(&reading)) {
            assert!(Instant::now() < deadline, "sh never read its pipe");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(pty.shell_waits_for_input(), Some(false));
        pty.signal(Signal::SIGKILL);
        pty.wait();
    }

    #[test]
    fn the_shell_runs_on_its_terminal_and_its_status_is_its_own() {
        let mut pty = shell("stty -echo; echo ready; read line; echo \"got $line\"; exit 3");
        read_until(&pty, "ready");
        // Written without blocking; the terminal's modes are the shell's.
        assert_eq!(pty.echo_modes(), None);
        assert!(pty.canonical());
        assert_eq!(pty.write(b"hello\n").unwrap(), 6);
        read_until(&pty, "got hello");
        assert_eq!(pty.wait(), 3);
        assert_eq!(pty.try_wait(), None, "reaped twice");

        let mut pty = shell("echo $(stty size); exec sleep 60");
        assert!(read_until(&pty, "\n").contains("24 80"));
        assert!(pty.echo_modes().is_some());
        assert_eq!(pty.try_wait(), None);
        pty.signal(Signal::SIGTERM);
        assert_eq!(pty.wait(), 128 + 15);
    }

    #[test]
    fn a_shell_left_running_is_killed_and_reaped_on_drop() {
        let pty = shell("exec sleep 60");
        let pid = pty.pid;
        drop(pty);
        // Reaped: no such process any more, not even a zombie.
        assert_eq!(kill(pid, None), Err(Errno::ESRCH));
    }
}
