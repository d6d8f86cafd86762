//! The relay: what `omnish wrap` does when the shell prints, a key is pressed, a signal comes,
//! the writer has a line to say, or time passes. [`Relay`] holds the session's state and has
//! one method per event; it makes no system call of its own: the user's terminal is a [`Tty`]
//! and the shell's side a [`Pty`], so unit tests drive it with bytes and a clock of their own.
//! The loop that waits for the events and calls these methods is [`crate::record::pty::run`].
//!
//! - Shell → screen ([`Relay::on_shell_output`]): the marker scanner takes the hooks' markers
//!   out of the output; the text goes to the screen and to the recorder, the markers to the
//!   recorder. A piece of a possible marker waits at most [`HOLD_LIMIT`] for the rest (while the
//!   output is read), then is shown as output. A bootstrap's request for hooks
//!   ([`crate::record::nest`]) is answered by typing the reply to the shell, ahead of any key
//!   typed since.
//! - Keyboard → shell ([`Relay::on_input`]): keys are queued for the shell and handed to the
//!   recorder, only while the terminal echoes (what is typed at a password prompt is never
//!   recorded).
//! - Both directions are written without blocking and queued, so a paste into a shell that is
//!   busy printing can never deadlock them, and a stopped terminal (Ctrl-S, a slow ssh link)
//!   cannot keep the keyboard from the shell. Past [`SCREEN_LIMIT`] bytes waiting for the
//!   screen the shell's output is no longer read: the shell waits, as for a slow terminal.
//! - Input from a pipe is typed ahead: it waits for the shell's first prompt and its line
//!   editor (echo off), at most [`PROMPT_WAIT`]; when it ends, a Ctrl-D follows once the shell
//!   is back at its prompt ([`Relay::send_to_shell`]).
//! - Lines of omnish's own (recording stopped, a shell the hooks cannot follow, the writer's
//!   notices: [`Relay::on_writer_notice`]) are shown where they split no output: at a prompt or
//!   a command's start, without hooks at the end of a line; on standard error when the output
//!   is not a terminal; those left at the end once the terminal's modes are back.
//! - The end: told to stop ([`Sig::Stop`]), the relay hangs up the shell, then sends SIGTERM,
//!   then SIGKILL, [`STOP_GRACE`] apart; once the shell has exited, output still held in the
//!   terminal is shown for [`EXIT_DRAIN`]; the writer gets [`WRITER_DRAIN`] to put the rest on
//!   disk.

use crate::record::farkey::FarKeys;
use crate::record::marker::{KeyAction, Marker, Piece, Scanner};
use crate::record::nest;
use crate::record::recorder::{FRAME_DELAY, Recorder};
use crate::record::tty::Tty;
use crate::record::typeahead::EchoModes;
use crate::store::now_ms;
use nix::sys::signal::Signal;
use std::io;
use std::time::{Duration, Instant};

/// How long a piece of a possible marker may wait for the rest before it is shown as output.
pub(crate) const HOLD_LIMIT: Duration = Duration::from_millis(500);
/// How long input from a pipe waits for the shell's first prompt before it is sent anyway.
pub(crate) const PROMPT_WAIT: Duration = Duration::from_secs(5);
/// After the first prompt, how long piped input waits for the line editor to turn echo off.
pub(crate) const EDITOR_WAIT: Duration = Duration::from_millis(500);
/// How long a hooked shell whose terminal stays canonical gets before piped input's Ctrl-D.
pub(crate) const EOT_WAIT: Duration = Duration::from_secs(1);
/// Most bytes read at once, and most keys queued for the shell before the keyboard waits.
pub(crate) const READ_SIZE: usize = 64 * 1024;
/// After the shell exited, how long output still held in the terminal is shown.
pub(crate) const EXIT_DRAIN: Duration = Duration::from_millis(200);
/// Told to stop, how long the shell gets after each signal before the next, stronger one.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(1);
/// At the end, how long the writer thread may take to put the rest on disk.
pub(crate) const WRITER_DRAIN: Duration = Duration::from_secs(5);
/// Most bytes waiting for the screen before the shell's output is no longer read (the shell
/// then waits, as it would for a slow terminal; the keyboard still reaches it).
pub(crate) const SCREEN_LIMIT: usize = 4 * READ_SIZE;
/// How often the loop wakes while a deadline of its own is near (a held marker, piped input's
/// Ctrl-D, the drain after the shell exited) ...
const SOON: Duration = Duration::from_millis(20);
/// ... and while piped input waits for the first prompt, or a shell told to stop for the next
/// signal.
const LATER: Duration = Duration::from_millis(50);

/// The shell's side as the relay sees it: the pseudo-terminal's master and the shell on it.
pub(crate) trait Pty {
    /// Writes keys without waiting: `WouldBlock` when the terminal takes none now.
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize>;
    /// How the terminal echoes what is typed now, or `None` when it does not echo (password
    /// prompts turn echo off and keep canonical mode).
    fn echo_modes(&self) -> Option<EchoModes>;
    /// Whether the terminal reads a line at a time now (a command reads, not a line editor).
    fn canonical(&self) -> bool;
    /// Whether the shell itself sleeps waiting for input (in `read`, `poll` or the like), not
    /// running, not waiting for a command; `None` when that cannot be known.
    fn shell_waits_for_input(&self) -> Option<bool> {
        None
    }
    fn resize(&mut self, cols: u16, rows: u16);
    /// Sends `signal` to the shell.
    fn signal(&mut self, signal: Signal);
    /// The shell's exit status if it has ended (it is then reaped), 128+N when killed by
    /// signal N.
    fn try_wait(&mut self) -> Option<i32>;
    /// Waits for the shell to end and returns its exit status.
    fn wait(&mut self) -> i32;
}

/// The time of an event: for the relay's deadlines, and as the recorder stamps it (ms).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Now {
    pub(crate) at: Instant,
    pub(crate) ms: u64,
}

impl Now {
    pub(crate) fn read() -> Now {
        Now {
            at: Instant::now(),
            ms: now_ms(),
        }
    }
}

/// A signal, as the relay hears of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sig {
    /// SIGWINCH: the terminal was resized.
    Winch,
    /// SIGCHLD: the shell may have ended.
    Child,
    /// SIGTERM, SIGHUP, SIGINT, SIGQUIT: omnish is told to stop.
    Stop,
}

/// What the loop waits for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Interest {
    /// Read the shell's output (the screen is not full).
    pub(crate) read_shell: bool,
    /// Keys wait for the shell.
    pub(crate) write_shell: bool,
    /// Read the keyboard.
    pub(crate) read_input: bool,
    /// Output waits for the screen.
    pub(crate) write_screen: bool,
    /// Wake up after this long even if nothing happens; `None`: wait for an event.
    pub(crate) timeout: Option<Duration>,
}

/// How the shell ended.
pub struct Outcome {
    /// Exit status, 128+N when killed by signal N.
    pub status: i32,
    /// omnish was told to stop (SIGTERM, SIGHUP, ...) and hung up the shell.
    pub interrupted: bool,
}

/// Bytes on their way to the real terminal: written without blocking, the rest kept for when
/// the terminal can take more.
struct ScreenQueue {
    queue: Vec<u8>,
    written: usize,
    /// False once a write failed: the terminal is gone, output is dropped.
    open: bool,
    /// The last byte queued, to know whether a line is open.
    last: u8,
}

impl ScreenQueue {
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
    fn write(&mut self, tty: &mut impl Tty) {
        while self.open && self.pending() > 0 {
            match tty.write(&self.queue[self.written..]) {
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

/// The keyboard's side: a terminal, or a pipe whose bytes are typed ahead.
struct Input {
    /// Standard input is a terminal.
    tty: bool,
    /// Not ended yet.
    open: bool,
    /// The shell may be sent what comes: it showed its first prompt with its line editor
    /// (or never will: no hooks, a terminal typing, [`PROMPT_WAIT`] passed).
    prompt_ready: bool,
    first_prompt: Option<Instant>,
    /// Piped input ended: a Ctrl-D goes once the shell is back at its prompt.
    eot_pending: bool,
    /// Since when the Ctrl-D waits: for a hooked shell seen waiting for input, since the first
    /// of the checks in a row that saw it so; else since the first check.
    eot_wait: Option<Instant>,
    /// How many prompts the hooks had announced when keys were last written to the shell.
    prompts_at_write: Option<u64>,
}

/// Sends the next, stronger signal to a shell that was told to stop: SIGHUP (a hangup, as when
/// a terminal closes), then SIGTERM, then SIGKILL for a shell that ignores both.
struct Stopper {
    step: usize,
    next: Option<Instant>,
}

impl Stopper {
    const SIGNALS: [Signal; 3] = [Signal::SIGHUP, Signal::SIGTERM, Signal::SIGKILL];

    fn escalate(&mut self, pty: &mut impl Pty, now: Instant) {
        if let Some(&sig) = Self::SIGNALS.get(self.step) {
            pty.signal(sig);
            self.step += 1;
            self.next = (self.step < Self::SIGNALS.len()).then(|| now + STOP_GRACE);
        }
    }
}

/// How far the shell is from its end.
struct Exit {
    /// The shell was reaped with this status.
    status: Option<i32>,
    /// Every process holding the terminal has closed it.
    closed: bool,
    /// With the shell gone, when to stop showing what the terminal still holds.
    deadline: Option<Instant>,
    /// omnish was told to stop.
    interrupted: bool,
    stopper: Stopper,
}

/// The relay's state between events (see the module documentation).
pub(crate) struct Relay<T: Tty, P: Pty> {
    tty: T,
    pty: P,
    scanner: Option<Scanner>,
    recorder: Option<Recorder>,
    /// The hooks' private directory: deleted once the shell showed its first prompt.
    rc_dir: Option<tempfile::TempDir>,
    screen: ScreenQueue,
    to_shell: Vec<u8>,
    /// Shells a bootstrap asks hooks for, found in this read (see record::nest).
    requests: Vec<String>,
    /// Keys pressed in far shells, found in this read, and how they are answered
    /// (record::farkey).
    keys: Vec<KeyAction>,
    far: Option<FarKeys>,
    input: Input,
    /// Since when a piece of a possible marker waits for the rest.
    held_since: Option<Instant>,
    /// The warning that recording stopped (or a notice), waiting for a place where it splits no
    /// output: the next prompt or command start, or (without hooks) the end of the current line.
    warning: Option<String>,
    exit: Exit,
    started: Instant,
    /// The shell's output is read in this turn of the loop (the screen is not full).
    reading_shell: bool,
}

impl<T: Tty, P: Pty> Relay<T, P> {
    /// A relay between `tty` and the shell on `pty`, started at `now`. With a scanner the shell
    /// is hooked: its markers are taken out of the output.
    pub(crate) fn new(
        tty: T,
        pty: P,
        scanner: Option<Scanner>,
        recorder: Option<Recorder>,
        rc_dir: Option<tempfile::TempDir>,
        now: Now,
    ) -> Relay<T, P> {
        let input_tty = tty.input_is_terminal();
        let hooked = scanner.is_some();
        Relay {
            tty,
            pty,
            scanner,
            recorder,
            rc_dir,
            screen: ScreenQueue {
                queue: Vec::with_capacity(READ_SIZE),
                written: 0,
                open: true,
                last: 0,
            },
            to_shell: Vec::new(),
            requests: Vec::new(),
            keys: Vec::new(),
            far: None,
            input: Input {
                tty: input_tty,
                open: true,
                prompt_ready: !hooked || input_tty,
                first_prompt: None,
                eot_pending: false,
                eot_wait: None,
                prompts_at_write: None,
            },
            held_since: None,
            warning: None,
            exit: Exit {
                status: None,
                closed: false,
                deadline: None,
                interrupted: false,
                stopper: Stopper {
                    step: 0,
                    next: None,
                },
            },
            started: now.at,
            reading_shell: true,
        }
    }

    /// Answers the ask and fix keys of far shells so (without, they are ignored).
    pub(crate) fn set_far_keys(&mut self, far: FarKeys) {
        self.far = Some(far);
    }

    pub(crate) fn tty_mut(&mut self) -> &mut T {
        &mut self.tty
    }

    pub(crate) fn tty(&self) -> &T {
        &self.tty
    }

    pub(crate) fn pty(&self) -> &P {
        &self.pty
    }

    fn hooked(&self) -> bool {
        self.scanner.is_some()
    }

    /// What to wait for now, and for how long at most. Input from a pipe waits until the
    /// shell's line editor has the terminal (prompt shown, echo off), or the terminal would echo
    /// it a second time.
    pub(crate) fn interest(&mut self, now: Now) -> Interest {
        if !self.input.prompt_ready {
            let prompts = self.recorder.as_ref().map_or(1, |r| r.prompts());
            if prompts > 0 {
                let since = *self.input.first_prompt.get_or_insert(now.at);
                self.input.prompt_ready = self.pty.echo_modes().is_none()
                    || now.at.saturating_duration_since(since) >= EDITOR_WAIT;
            }
            self.input.prompt_ready |=
                now.at.saturating_duration_since(self.started) >= PROMPT_WAIT;
        }
        self.reading_shell = self.screen.pending() < SCREEN_LIMIT;
        // Sleep until something happens, unless a deadline is near: a held marker candidate,
        // piped input waiting for the prompt, a pending Ctrl-D, the next signal for a shell told
        // to stop, or the drain after the shell exited.
        let mut timeout =
            if self.exit.status.is_some() || self.input.eot_pending || self.held_since.is_some() {
                Some(SOON)
            } else if (!self.input.prompt_ready && self.input.open)
                || self.exit.stopper.next.is_some()
            {
                Some(LATER)
            } else {
                None
            };
        // Output waiting in an unfinished frame goes to the writer within FRAME_DELAY; a record
        // held for keys typed ahead, at its deadline.
        let sooner = |t: Option<Duration>, d: Duration| Some(t.map_or(d, |t| t.min(d)));
        if let Some(r) = self.recorder.as_ref() {
            if r.frame_waiting() {
                timeout = sooner(timeout, FRAME_DELAY);
            }
            if let Some(at) = r.wake_at() {
                let ms = at.saturating_sub(now.ms).min(60_000);
                timeout = sooner(timeout, Duration::from_millis(ms));
            }
        }
        Interest {
            read_shell: self.reading_shell,
            write_shell: !self.to_shell.is_empty(),
            read_input: self.input.open
                && self.input.prompt_ready
                && self.to_shell.len() < READ_SIZE,
            write_screen: self.screen.pending() > 0,
            timeout,
        }
    }

    /// The shell printed `bytes`: markers out, text to the screen (first) and the recorder.
    pub(crate) fn on_shell_output(&mut self, bytes: &[u8], now: Now) {
        let Relay {
            scanner,
            recorder,
            screen,
            warning,
            requests,
            keys,
            far,
            to_shell,
            held_since,
            ..
        } = self;
        match scanner.as_mut() {
            Some(sc) => {
                sc.feed(bytes, &mut |p| match p {
                    Piece::Text(t) => {
                        screen.push(t);
                        if let Some(r) = recorder.as_mut() {
                            r.output(now.ms, t);
                        }
                    }
                    Piece::Marker(m) => {
                        if let Marker::NestRequest { shell } = &m {
                            requests.push(shell.clone());
                        }
                        if let Marker::Key(action) = m {
                            keys.push(action);
                        }
                        let boundary = matches!(m, Marker::PromptStart | Marker::OutputStart);
                        if let Some(r) = recorder.as_mut() {
                            r.marker(now.ms, m);
                            // The marker itself may raise one (a shell the hooks cannot
                            // follow).
                            if boundary && warning.is_none() {
                                *warning = r.take_warning();
                            }
                        }
                        // At a prompt, or before the next command's output: never inside
                        // output.
                        if boundary {
                            if let Some(w) = warning.take() {
                                screen.notice(&w);
                            }
                        }
                    }
                });
                // A bootstrap asked for hooks: they are typed to it, ahead of any key typed
                // since (see record::nest).
                for shell in requests.drain(..).filter(|s| nest::answered(s)) {
                    // The nest key, and the far key of the shell it will announce (for the
                    // shells started inside that one).
                    let keys_of = || -> Option<(String, String)> {
                        Some((
                            crate::store::secret_hex(16).ok()?,
                            crate::store::secret_hex(16).ok()?,
                        ))
                    };
                    let key = nest::supported(&shell).then(keys_of).flatten();
                    if let Some((key, far_key)) = &key {
                        sc.allow_nest_key(key, Some(far_key));
                    }
                    let far_keys = |kind: &str| {
                        far.as_ref()
                            .and_then(|f| f.keys(kind))
                            .map(|(a, f)| (a.to_string(), f.to_string()))
                    };
                    let key = key.as_ref().map(|(k, f)| (k.as_str(), f.as_str()));
                    to_shell.extend_from_slice(&nest::reply(&shell, key, &far_keys));
                }
                for action in keys.drain(..) {
                    if let Some(f) = far.as_ref() {
                        f.start(action);
                    }
                }
                *held_since = if sc.holding() {
                    held_since.or(Some(now.at))
                } else {
                    None
                };
            }
            None => {
                // Without hooks a warning waits for the end of a line.
                match (warning.is_some(), bytes.iter().rposition(|&b| b == b'\n')) {
                    (true, Some(eol)) => {
                        screen.push(&bytes[..=eol]);
                        screen.notice(&warning.take().unwrap_or_default());
                        screen.push(&bytes[eol + 1..]);
                    }
                    _ => screen.push(bytes),
                }
                if let Some(r) = recorder.as_mut() {
                    r.output(now.ms, bytes);
                }
            }
        }
        // The screen first, then the frame goes to the writer.
        self.screen.write(&mut self.tty);
        if let Some(r) = self.recorder.as_mut() {
            r.end_of_read(now.ms);
        }
    }

    /// Every process holding the shell's terminal has closed it (end of file, or EIO).
    pub(crate) fn on_shell_end(&mut self) {
        self.exit.closed = true;
    }

    /// The screen can take more.
    pub(crate) fn on_screen_writable(&mut self) {
        self.screen.write(&mut self.tty);
    }

    /// Keys typed: queued for the shell, and recorded while the terminal echoes them.
    pub(crate) fn on_input(&mut self, bytes: &[u8], now: Now) {
        // Ctrl-C while a far key's `omnish` runs stops it (the far widget gets it too).
        if let Some(f) = self.far.as_ref().filter(|f| f.busy()) {
            if bytes.contains(&0x03) {
                f.cancel();
            }
        }
        self.to_shell.extend_from_slice(bytes);
        if let Some(r) = self.recorder.as_mut() {
            if let Some(modes) = self.pty.echo_modes() {
                r.input(now.ms, bytes, &modes);
            }
        }
    }

    /// Input ended. From a pipe: Ctrl-D, once the shell is back at its prompt.
    pub(crate) fn on_input_end(&mut self) {
        self.input.open = false;
        self.input.eot_pending = !self.input.tty;
    }

    /// Input cannot be read any more (an error): nothing more is typed.
    pub(crate) fn on_input_lost(&mut self) {
        self.input.open = false;
    }

    /// Writes what waits for the shell, with the Ctrl-D that ends piped input when it is due.
    pub(crate) fn send_to_shell(&mut self, now: Now) {
        if self.input.eot_pending && self.to_shell.is_empty() && self.eot_due(now) {
            self.to_shell.push(0x04);
            self.input.eot_pending = false;
        }
        if !self.to_shell.is_empty() && !self.exit.closed {
            match self.pty.write(&self.to_shell) {
                Ok(n) => {
                    self.to_shell.drain(..n);
                    // What was just written is not read yet: a Ctrl-D waits for the shell
                    // to be seen waiting again, at a prompt shown since.
                    self.input.eot_wait = None;
                    self.input.prompts_at_write = self.recorder.as_ref().map(|r| r.prompts());
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => self.to_shell.clear(),
            }
        }
    }

    /// Whether a Ctrl-D ending piped input can go now. The Ctrl-D must reach the shell's line
    /// editor while it waits for a key: a terminal in canonical mode turns a Ctrl-D into
    /// end-of-file for whoever reads next (a running command), and, if nobody reads before the
    /// line editor switches canonical mode off, into a NUL byte that the editor takes as a key
    /// (readline's set-mark), so the shell never ends (`wrap_cli` tests hung so, about 1 run in
    /// 20 under load). It goes when the shell is seen sleeping for input with nothing typed
    /// unread, twice [`SOON`] apart with nothing written in between, and the hooks announced a
    /// prompt since the last keys were written (it read them and ran what they made); a line
    /// left unfinished shows no prompt of the hooks (a continuation): then after [`EOT_WAIT`]
    /// seen so. The terminal's mode does not matter then: a shell reading lines canonically
    /// takes the Ctrl-D as end-of-file, the same. Where the kernel does not say what the shell
    /// does: at once when canonical mode is off, else after a quiet [`EOT_WAIT`].
    fn eot_due(&mut self, now: Now) -> bool {
        if !self.hooked() {
            return true;
        }
        match self.pty.shell_waits_for_input() {
            Some(true) => {
                let prompted = match (self.recorder.as_ref(), self.input.prompts_at_write) {
                    (Some(r), Some(at)) => r.prompts() > at,
                    _ => true,
                };
                let since = *self.input.eot_wait.get_or_insert(now.at);
                now.at.saturating_duration_since(since) >= if prompted { SOON } else { EOT_WAIT }
            }
            Some(false) => {
                self.input.eot_wait = None;
                false
            }
            None => {
                if !self.pty.canonical() {
                    return true;
                }
                let since = *self.input.eot_wait.get_or_insert(now.at);
                now.at.saturating_duration_since(since) >= EOT_WAIT
            }
        }
    }

    pub(crate) fn on_signal(&mut self, sig: Sig, now: Now) {
        match sig {
            Sig::Winch => {
                if let Some((cols, rows)) = self.tty.size() {
                    self.pty.resize(cols, rows);
                    if let Some(r) = self.recorder.as_mut() {
                        r.resize(cols, rows);
                    }
                }
            }
            // Told to stop (again): the next signal at once.
            Sig::Stop => {
                if self.exit.status.is_none() {
                    self.exit.interrupted = true;
                    self.exit.stopper.escalate(&mut self.pty, now.at);
                }
            }
            Sig::Child => {
                if self.exit.status.is_none() {
                    self.exit.status = self.pty.try_wait();
                }
            }
        }
    }

    /// The writer has a line for the user (recording stopped, a notice).
    pub(crate) fn on_writer_notice(&mut self) {
        self.collect_warning();
        // A far key's answer: to the screen, then Ctrl-] (and a fix) to the far widget.
        if let Some(f) = self.far.as_ref() {
            let taken = f.take();
            if !taken.screen.is_empty() {
                self.screen.push(&taken.screen);
                self.screen.write(&mut self.tty);
            }
            self.to_shell.extend_from_slice(&taken.to_shell);
        }
    }

    /// Takes the next line of the recorder's or writer's to show, unless one already waits.
    fn collect_warning(&mut self) {
        let Some(r) = self.recorder.as_mut() else {
            return;
        };
        if self.warning.is_none() {
            self.warning = r.take_warning();
            // Not a terminal: the warning cannot split what the user sees.
            if !self.tty.output_is_terminal() {
                if let Some(w) = self.warning.take() {
                    self.tty.say(&format!("{w}\n"));
                }
            }
        }
    }

    /// Time passed (after every turn of the loop): deadlines.
    pub(crate) fn on_tick(&mut self, now: Now) {
        // A shell told to stop gets the next signal after the grace period.
        if self.exit.status.is_none() && self.exit.stopper.next.is_some_and(|t| now.at >= t) {
            self.exit.stopper.escalate(&mut self.pty, now.at);
        }
        // A candidate waits for the bytes that decide it only while the shell's output is
        // read: not while a stopped terminal (Ctrl-S) holds it back.
        if !self.reading_shell {
            self.held_since = self.held_since.map(|_| now.at);
        }
        if let Some(since) = self.held_since {
            if now.at.saturating_duration_since(since) >= HOLD_LIMIT {
                self.release_held(now);
                self.screen.write(&mut self.tty);
                self.held_since = None;
            }
        }
        if let Some(r) = self.recorder.as_mut() {
            if r.frame_waiting() || r.wake_at().is_some_and(|at| now.ms >= at) {
                r.end_of_read(now.ms);
            }
            if self.rc_dir.is_some() && r.prompts() > 0 {
                self.rc_dir = None;
            }
        }
        self.collect_warning();
    }

    /// Whether the loop ends after this turn: the terminal is closed, or the shell exited and
    /// what the terminal still held was shown (nothing came in this turn, `idle`, or
    /// [`EXIT_DRAIN`] passed: background jobs may hold the terminal open).
    pub(crate) fn finished(&mut self, now: Now, idle: bool) -> bool {
        if self.exit.closed {
            return true;
        }
        if self.exit.status.is_some() {
            let deadline = *self.exit.deadline.get_or_insert(now.at + EXIT_DRAIN);
            return now.at >= deadline || idle;
        }
        false
    }

    /// Gives up on a held marker candidate (it waited too long, or the shell is gone): its bytes
    /// are output after all, recorded and queued for the screen.
    fn release_held(&mut self, now: Now) {
        let Some(sc) = self.scanner.as_mut() else {
            return;
        };
        let mut text = Vec::new();
        sc.flush(&mut |p| {
            if let Piece::Text(t) = p {
                text.extend_from_slice(t);
            }
        });
        self.screen.push(&text);
        if let Some(r) = self.recorder.as_mut() {
            r.output(now.ms, &text);
            r.end_of_read(now.ms);
        }
    }

    /// The loop is over: what is held is output after all, and the shell's exit status (the
    /// shell is ended first when the loop `failed` with it still running).
    pub(crate) fn end(&mut self, now: Now, failed: bool) -> i32 {
        self.release_held(now);
        match self.exit.status {
            Some(s) => s,
            None => {
                if failed {
                    self.pty.signal(Signal::SIGKILL);
                }
                self.pty.wait()
            }
        }
    }

    /// Shows the rest, closes the recording with the shell's `status` and puts the terminal
    /// back; omnish's own lines left come last, on standard error.
    pub(crate) fn finish(&mut self, now: Now, status: i32) -> Outcome {
        // What the terminal has not taken yet, now waiting for it.
        self.tty.wait_for_writes();
        self.screen.write(&mut self.tty);
        let mut notices = Vec::new();
        if let Some(mut r) = self.recorder.take() {
            r.finish(now.ms, Some(status), self.exit.interrupted);
            if !r.close_writer(WRITER_DRAIN) {
                notices.push(format!(
                    "omnish: the disk did not finish writing within {} s; the recording of {} may end early",
                    WRITER_DRAIN.as_secs(),
                    r.dir().display()
                ));
            }
            notices.extend(self.warning.take());
            notices.extend(std::iter::from_fn(|| r.take_warning()));
        }
        self.tty.restore();
        for n in notices {
            if self.tty.output_is_terminal() && self.screen.last != b'\n' && self.screen.last != 0 {
                self.tty.say("\r\n");
            }
            self.tty.say(&format!("{n}\n"));
            self.screen.last = b'\n';
        }
        Outcome {
            status,
            interrupted: self.exit.interrupted,
        }
    }
}

#[cfg(test)]
mod tests;
