//! The ask and fix keys of a shell on the far side of `omnish nest` (a root shell, a login over
//! ssh, a shell in a container), where omnish is not installed and cannot run.
//!
//! The far shell's hooks bind the keys (`keys.ask`, `keys.fix`, sent with the hooks: see
//! [`crate::record::nest::reply`]) to a widget that prints `633;T;P;Key=ask` (or `fix`) with
//! the shell's own token and then waits, reading the terminal, for Ctrl-]. The relay, on that
//! marker ([`crate::record::marker::Marker::Key`]), runs `omnish ask` (or `omnish fix`) here,
//! on the recording side, for the session (which then keeps to the innermost shell, where the
//! key was pressed), on a thread of its own:
//!
//! - what `omnish ask` prints (and what `omnish fix` says on its standard error) goes to the
//!   user's terminal below the line, through the relay's screen queue, not into the recording;
//! - when it ends, the relay types Ctrl-] to the far widget, after the corrected command for
//!   `fix` (its control characters taken out: nothing typed can send a signal or end a line),
//!   which the widget puts on the line being edited.
//!
//! Ctrl-C typed meanwhile stops the local `omnish` (the far widget gets the Ctrl-C as well and
//! gives up waiting), and nothing is typed for it. The terminal thread only starts the thread
//! and moves bytes: the process runs, and its output is read, elsewhere; the thread wakes the
//! terminal thread through the writer's notice socket.

use crate::record::marker::KeyAction;
use crate::record::writer::Notifier;
use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The byte that ends a far widget's wait.
pub(crate) const DONE: u8 = 0x1d;
/// Most bytes of a corrected command taken from `omnish fix`.
const MAX_FIX: usize = 64 * 1024;
/// Most bytes of the answer queued for the screen at once (the reader waits for the terminal
/// thread to take them).
const MAX_QUEUED: usize = 256 * 1024;

/// The ask and fix keys far shells bind: in readline syntax for bash and zsh (`keys.ask`,
/// `keys.fix`), in fish's `bind` notation and as nushell keybindings (as `omnish init fish`
/// and `omnish init nu` bind them).
#[derive(Debug, Clone, Default)]
pub struct FarKeyNames {
    pub readline: (String, String),
    pub fish: (String, String),
    /// nushell keybinding records (`{modifier: alt, keycode: char_a}`).
    pub nu: (String, String),
}

/// How the relay runs `omnish ask` and `omnish fix` for a far key.
pub(crate) struct FarKeys {
    /// omnish's own program.
    program: PathBuf,
    /// Added to the environment: the session (`OMNISH_SESSION_ID`), where the store is.
    env: Vec<(OsString, OsString)>,
    notifier: Notifier,
    shared: Arc<Mutex<Shared>>,
    /// `Shared::busy`, read without the lock: the terminal thread asks at every key typed.
    busy: AtomicBool,
    /// The ask and fix keys, for the far hooks.
    keys: FarKeyNames,
}

#[derive(Default)]
struct Shared {
    /// Output for the user's terminal, newlines made CR LF (the terminal is raw).
    screen: Vec<u8>,
    /// Bytes to type to the far widget once the answer is complete.
    done: Option<Vec<u8>>,
    /// The running `omnish`'s process id.
    pid: Option<u32>,
    /// A key's `omnish` runs (from the marker until its bytes were typed).
    busy: bool,
    /// Ctrl-C was typed: the answer types nothing.
    cancelled: bool,
}

/// What a turn of the loop takes from the far key's thread.
#[derive(Default)]
pub(crate) struct Taken {
    pub screen: Vec<u8>,
    pub to_shell: Vec<u8>,
}

impl FarKeys {
    /// `keys`: the ask and fix keys, which the far hooks bind (see [`FarKeys::keys`]).
    pub(crate) fn new(
        program: PathBuf,
        env: Vec<(OsString, OsString)>,
        notifier: Notifier,
        keys: FarKeyNames,
    ) -> Self {
        FarKeys {
            program,
            env,
            notifier,
            shared: Arc::new(Mutex::new(Shared::default())),
            busy: AtomicBool::new(false),
            keys,
        }
    }

    /// The ask and fix keys a far shell of `kind` (`bash`, `zsh`, `fish`, `nu`) binds: only keys
    /// plain enough to travel in the hooks (printable ASCII, no quote) that differ.
    pub(crate) fn keys(&self, kind: &str) -> Option<(&str, &str)> {
        let (ask, fix) = match kind {
            "fish" => &self.keys.fish,
            "nu" => &self.keys.nu,
            _ => &self.keys.readline,
        };
        let plain = |k: &str| {
            !k.is_empty()
                && k.bytes()
                    .all(|b| (b.is_ascii_graphic() || b == b' ') && b != b'\'' && b != b'"')
        };
        (plain(ask) && plain(fix) && ask != fix).then_some((ask.as_str(), fix.as_str()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A far shell asked: runs `omnish ask` or `omnish fix` on a thread. One at a time: the
    /// widget that asked reads every key until its answer, so a second request while one runs
    /// comes from no waiting widget, and the first one's Ctrl-] ends any wait.
    pub(crate) fn start(&self, action: KeyAction) {
        {
            let mut s = self.lock();
            if s.busy {
                return;
            }
            *s = Shared {
                busy: true,
                ..Shared::default()
            };
            self.busy.store(true, Ordering::Relaxed);
        }
        let mut cmd = Command::new(&self.program);
        cmd.arg(match action {
            KeyAction::Ask => "ask",
            KeyAction::Fix => "fix",
        });
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        // Not the terminal of an outer session: no standard stream of it is a terminal.
        cmd.env_remove("OMNISH_PTY");
        let shared = Arc::clone(&self.shared);
        let notifier = self.notifier.clone();
        let spawned = std::thread::Builder::new()
            .name("omnish-far-key".into())
            .spawn(move || run(cmd, action, &shared, &notifier));
        if spawned.is_err() {
            let mut s = self.lock();
            s.done = Some(vec![DONE]);
            drop(s);
            self.notifier.wake();
        }
    }

    /// Ctrl-C was typed: stops the running `omnish`, whose answer then types nothing.
    pub(crate) fn cancel(&self) {
        let mut s = self.lock();
        if !s.busy {
            return;
        }
        s.cancelled = true;
        if let Some(pid) = s.pid.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGINT,
            );
        }
    }

    /// Whether a key's `omnish` runs (only the terminal thread changes it, in `start` and
    /// `take`).
    pub(crate) fn busy(&self) -> bool {
        self.busy.load(Ordering::Relaxed)
    }

    /// What waits for the terminal thread: output for the screen, and (the answer complete)
    /// the bytes to type to the far widget.
    pub(crate) fn take(&self) -> Taken {
        let mut s = self.lock();
        let mut taken = Taken {
            screen: std::mem::take(&mut s.screen),
            to_shell: Vec::new(),
        };
        if let Some(done) = s.done.take() {
            if !s.cancelled {
                taken.to_shell = done;
            }
            s.busy = false;
            s.pid = None;
            self.busy.store(false, Ordering::Relaxed);
        }
        taken
    }
}

/// Runs `cmd` and hands what it printed to the terminal thread.
fn run(mut cmd: Command, action: KeyAction, shared: &Mutex<Shared>, notifier: &Notifier) {
    let lock = || shared.lock().unwrap_or_else(|e| e.into_inner());
    let finish = |typed: Vec<u8>| {
        lock().done = Some(typed);
        notifier.wake();
    };
    let Ok((mut reader, writer)) = std::io::pipe() else {
        return finish(vec![DONE]);
    };
    let Ok(copy) = writer.try_clone() else {
        return finish(vec![DONE]);
    };
    cmd.stdin(Stdio::null()).stderr(copy);
    match action {
        KeyAction::Ask => cmd.stdout(writer),
        KeyAction::Fix => {
            drop(writer);
            cmd.stdout(Stdio::piped())
        }
    };
    let child = cmd.spawn();
    // The pipe's writing ends are the child's alone now: its end is the pipe's.
    drop(cmd);
    let Ok(mut child) = child else {
        return finish(vec![DONE]);
    };
    {
        let mut s = lock();
        s.pid = Some(child.id());
        // Ctrl-C came before the process was there to stop.
        if s.cancelled {
            let _ = child.kill();
        }
    }
    let mut buf = [0u8; 4096];
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                // The terminal thread is slow to take it (a stopped terminal): wait a little,
                // never hold more than MAX_QUEUED.
                while lock().screen.len() > MAX_QUEUED {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                let mut s = lock();
                // Cancelled: what it still prints is dropped.
                if s.cancelled {
                    continue;
                }
                for &b in &buf[..n] {
                    if b == b'\n' {
                        s.screen.push(b'\r');
                    }
                    s.screen.push(b);
                }
                drop(s);
                notifier.wake();
            }
        }
    }
    let mut fixed = Vec::new();
    if let Some(out) = child.stdout.take() {
        let _ = out.take(MAX_FIX as u64).read_to_end(&mut fixed);
    }
    let ok = child.wait().is_ok_and(|s| s.success());
    let mut typed: Vec<u8> = Vec::new();
    if ok && action == KeyAction::Fix {
        let text = String::from_utf8_lossy(&fixed);
        let line = text.trim_end_matches('\n');
        typed.extend(
            line.chars()
                .filter(|c| !c.is_control())
                .collect::<String>()
                .bytes(),
        );
    }
    typed.push(DONE);
    finish(typed);
}
