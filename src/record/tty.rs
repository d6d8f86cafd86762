//! The user's terminal as the relay ([`crate::record::relay`]) sees it: a [`Tty`] that hands out
//! what was typed, takes the shell's output without ever making the relay wait, has a size, and
//! is in raw mode while the shell runs.
//!
//! [`Terminal`] is the real one: standard input and output of `omnish wrap`. Opening it puts
//! stdin in raw mode (when it is a terminal) and stdout in non-blocking mode, so a terminal that
//! stops reading (Ctrl-S, a slow ssh link) cannot stall the relay; it puts both back on every way
//! out: [`Tty::restore`], drop (unwinding included), and a panic hook that restores them before
//! the panic message prints, so the message is readable. The open file of stdout may be shared
//! with the parent shell, so its flags go back as they were.
//!
//! `MemTty` (tests) is a terminal in memory: keys to hand out, a screen that takes as many bytes
//! as the test lets it, a size, and what was said on standard error.

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::termios::{self, SetArg, Termios};
use std::io::{self, IsTerminal, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Mutex;

/// The user's terminal, as the relay uses it.
pub(crate) trait Tty {
    /// Reads what was typed: `Ok(0)` when input ended, `WouldBlock` when nothing waits.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize>;
    /// Writes what the terminal takes now, without waiting: `WouldBlock` when it takes nothing
    /// (until [`Tty::wait_for_writes`]).
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize>;
    /// Columns and rows, if it is a terminal that knows.
    fn size(&self) -> Option<(u16, u16)>;
    /// Whether what is typed comes from a terminal (else a pipe or a file: typed ahead).
    fn input_is_terminal(&self) -> bool;
    /// Whether the output goes to a terminal (else lines of omnish's own go to standard error).
    fn output_is_terminal(&self) -> bool;
    /// Writes `text` as it is on standard error: omnish's own lines, outside the screen's bytes.
    fn say(&mut self, text: &str);
    /// From now on writes wait for the terminal: the end of the session, what is left is shown.
    fn wait_for_writes(&mut self);
    /// Puts the terminal's modes back as they were before (also done when it is dropped).
    fn restore(&mut self);
}

/// The terminal modes to put back, for the panic hook.
static SAVED_MODES: Mutex<Option<Termios>> = Mutex::new(None);
/// The file status flags of stdout before it was made non-blocking, for the panic hook.
static SAVED_OUT_FLAGS: Mutex<Option<OFlag>> = Mutex::new(None);

/// Standard input and output of `omnish wrap`: stdin raw, stdout non-blocking, until restored.
pub(crate) struct Terminal {
    stdin: io::Stdin,
    stdout: io::Stdout,
    input_tty: bool,
    output_tty: bool,
    /// The modes of stdin before raw mode, while it is raw.
    modes: Option<Termios>,
    /// The flags of stdout before it was made non-blocking, while it is.
    out_flags: Option<OFlag>,
}

impl Terminal {
    /// Takes over stdin and stdout: raw mode if stdin is a terminal, non-blocking writes.
    pub(crate) fn open() -> Terminal {
        let stdin = io::stdin();
        let stdout = io::stdout();
        let input_tty = stdin.is_terminal();
        let output_tty = stdout.is_terminal();
        let modes = if input_tty { raw_mode(&stdin) } else { None };
        let out_flags = non_blocking(&stdout).ok();
        Terminal {
            stdin,
            stdout,
            input_tty,
            output_tty,
            modes,
            out_flags,
        }
    }

    /// What the relay's loop polls for keys.
    pub(crate) fn input(&self) -> std::os::fd::BorrowedFd<'_> {
        self.stdin.as_fd()
    }

    /// What the relay's loop polls for room on the screen.
    pub(crate) fn output(&self) -> std::os::fd::BorrowedFd<'_> {
        self.stdout.as_fd()
    }
}

/// Puts stdin in raw mode; the modes before, saved for the panic hook too.
fn raw_mode(stdin: &io::Stdin) -> Option<Termios> {
    let saved = termios::tcgetattr(stdin).ok()?;
    let mut raw = saved.clone();
    termios::cfmakeraw(&mut raw);
    termios::tcsetattr(stdin, SetArg::TCSAFLUSH, &raw).ok()?;
    *SAVED_MODES.lock().unwrap_or_else(|e| e.into_inner()) = Some(saved.clone());
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(modes) = SAVED_MODES.lock().ok().and_then(|mut m| m.take()) {
                let _ = termios::tcsetattr(io::stdin(), SetArg::TCSANOW, &modes);
            }
            if let Some(flags) = SAVED_OUT_FLAGS.lock().ok().and_then(|mut m| m.take()) {
                let _ = fcntl(io::stdout(), FcntlArg::F_SETFL(flags));
            }
            default(info);
        }));
    });
    Some(saved)
}

/// Makes stdout non-blocking; the flags before, saved for the panic hook too.
fn non_blocking(stdout: &io::Stdout) -> io::Result<OFlag> {
    let saved = OFlag::from_bits_retain(fcntl(stdout, FcntlArg::F_GETFL)?);
    fcntl(stdout, FcntlArg::F_SETFL(saved | OFlag::O_NONBLOCK))?;
    *SAVED_OUT_FLAGS.lock().unwrap_or_else(|e| e.into_inner()) = Some(saved);
    Ok(saved)
}

impl Tty for Terminal {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(nix::unistd::read(self.stdin.as_fd(), buf)?)
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        Ok(nix::unistd::write(self.stdout.as_fd(), bytes)?)
    }

    fn size(&self) -> Option<(u16, u16)> {
        terminal_size()
    }

    fn input_is_terminal(&self) -> bool {
        self.input_tty
    }

    fn output_is_terminal(&self) -> bool {
        self.output_tty
    }

    fn say(&mut self, text: &str) {
        let _ = io::stderr().write_all(text.as_bytes());
    }

    fn wait_for_writes(&mut self) {
        if let Some(flags) = self.out_flags.take() {
            let _ = fcntl(&self.stdout, FcntlArg::F_SETFL(flags));
            SAVED_OUT_FLAGS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
        }
    }

    fn restore(&mut self) {
        self.wait_for_writes();
        if let Some(modes) = self.modes.take() {
            let _ = termios::tcsetattr(&self.stdin, SetArg::TCSAFLUSH, &modes);
            SAVED_MODES.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.restore();
    }
}

nix::ioctl_read_bad!(
    /// TIOCGWINSZ: the window size of a terminal.
    window_size,
    nix::libc::TIOCGWINSZ,
    nix::pty::Winsize
);

/// The terminal size of the first of stdout, stdin, stderr that is a terminal.
pub(crate) fn terminal_size() -> Option<(u16, u16)> {
    let fds = [
        io::stdout().as_raw_fd(),
        io::stdin().as_raw_fd(),
        io::stderr().as_raw_fd(),
    ];
    for fd in fds {
        let mut ws = nix::pty::Winsize {
            ws_row: 0,
            ws_col: 0,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCGWINSZ writes one winsize into `ws`, which lives through the call.
        if unsafe { window_size(fd, &mut ws) }.is_ok() && ws.ws_col > 0 {
            return Some((ws.ws_col, ws.ws_row.max(1)));
        }
    }
    None
}

/// A terminal in memory (tests): keys to hand out, a screen that takes at most `room` bytes
/// until the test makes room, a size, and the lines said on standard error.
#[cfg(test)]
pub(crate) struct MemTty {
    /// What is still to be typed; `None` once input ended.
    pub(crate) keys: Option<std::collections::VecDeque<u8>>,
    /// Everything the terminal took.
    pub(crate) screen: Vec<u8>,
    /// How many more bytes the terminal takes before writes would block; `None`: any number.
    pub(crate) room: Option<usize>,
    pub(crate) size: Option<(u16, u16)>,
    pub(crate) input_tty: bool,
    pub(crate) output_tty: bool,
    pub(crate) stderr: String,
    pub(crate) waits_for_writes: bool,
    pub(crate) restored: bool,
}

#[cfg(test)]
impl MemTty {
    /// A terminal of 80x24 on both sides, with nothing typed yet.
    pub(crate) fn new() -> MemTty {
        MemTty {
            keys: Some(Default::default()),
            screen: Vec::new(),
            room: None,
            size: Some((80, 24)),
            input_tty: true,
            output_tty: true,
            stderr: String::new(),
            waits_for_writes: false,
            restored: false,
        }
    }

    /// The screen's bytes as text.
    pub(crate) fn shown(&self) -> String {
        String::from_utf8_lossy(&self.screen).into_owned()
    }
}

#[cfg(test)]
impl Tty for MemTty {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(keys) = self.keys.as_mut() else {
            return Ok(0);
        };
        if keys.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(keys.len());
        for (slot, key) in buf.iter_mut().zip(keys.drain(..n)) {
            *slot = key;
        }
        Ok(n)
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let n = match self.room {
            _ if self.waits_for_writes => bytes.len(),
            Some(0) => return Err(io::ErrorKind::WouldBlock.into()),
            Some(room) => room.min(bytes.len()),
            None => bytes.len(),
        };
        if let Some(room) = self.room.as_mut() {
            *room = room.saturating_sub(n);
        }
        self.screen.extend_from_slice(&bytes[..n]);
        Ok(n)
    }

    fn size(&self) -> Option<(u16, u16)> {
        self.size
    }

    fn input_is_terminal(&self) -> bool {
        self.input_tty
    }

    fn output_is_terminal(&self) -> bool {
        self.output_tty
    }

    fn say(&mut self, text: &str) {
        self.stderr.push_str(text);
    }

    fn wait_for_writes(&mut self) {
        self.waits_for_writes = true;
    }

    fn restore(&mut self) {
        self.waits_for_writes = true;
        self.restored = true;
    }
}
