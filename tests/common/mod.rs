//! Drives `omnish wrap` in a real pseudo-terminal: types as a person would and reads the files
//! omnish wrote. Each harness has its own HOME, data dir and shell startup files.
#![allow(dead_code)]

pub mod cursor;
pub mod farkeys;
pub mod fish;
pub mod podman;
pub mod remote;
pub mod starters;

use omnish::store::{self, CommandRecord, SessionMeta};
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Every test prompt contains this (and no typed command does).
pub const PROMPT: &str = "READY";
pub const TIMEOUT: Duration = Duration::from_secs(30);

pub struct Harness {
    pub home: tempfile::TempDir,
    pub master: Box<dyn MasterPty + Send>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn Child + Send + Sync>,
    screen: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    /// While set, the terminal stops reading what omnish writes (as after Ctrl-S).
    paused: Arc<std::sync::atomic::AtomicBool>,
}

pub fn omnish_bin() -> &'static str {
    env!("CARGO_BIN_EXE_omnish")
}

/// A fresh HOME with the given startup files (name, contents).
pub fn home_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = home.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    home
}

pub fn base_env(cmd: &mut CommandBuilder, home: &Path) {
    cmd.env_clear();
    cmd.env("HOME", home);
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.env("TERM", "xterm-256color");
    cmd.env("LANG", "C.UTF-8");
    cmd.env("OMNISH_DATA_DIR", home.join("data"));
    cmd.env("HISTFILE", home.join(".history"));
    cmd.cwd(home);
}

impl Harness {
    /// `omnish wrap <argv>` in an 80x24 pty, HOME holding `files`.
    pub fn start(argv: &[&str], files: &[(&str, &str)]) -> Harness {
        Self::start_with(argv, files, &[])
    }

    pub fn start_with(argv: &[&str], files: &[(&str, &str)], env: &[(&str, &str)]) -> Harness {
        Self::start_via(&[], argv, files, env)
    }

    /// `<wrapper...> omnish wrap <argv>`: omnish started by another program (strace, a shell
    /// that sets a limit first).
    pub fn start_via(
        wrapper: &[&str],
        argv: &[&str],
        files: &[(&str, &str)],
        env: &[(&str, &str)],
    ) -> Harness {
        let home = home_with(files);
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 80,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = match wrapper.split_first() {
            Some((program, args)) => {
                let mut cmd = CommandBuilder::new(program);
                cmd.args(args);
                cmd.arg(omnish_bin());
                cmd
            }
            None => CommandBuilder::new(omnish_bin()),
        };
        cmd.arg("wrap");
        cmd.args(argv);
        base_env(&mut cmd, home.path());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = Arc::new(Mutex::new(pair.master.take_writer().unwrap()));
        // A terminal answers cursor position queries (nushell's line editor waits for them).
        let answer = Arc::clone(&writer);
        let mut cursor = cursor::Cursor::new(24, 80);
        let screen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&screen);
        let paused = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let pause = Arc::clone(&paused);
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                // Paused (a stopped terminal): look again every 10 ms until resumed.
                while pause.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                let Ok(n) = reader.read(&mut buf) else { break };
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
                for a in cursor.feed(&buf[..n]) {
                    let mut w = answer.lock().unwrap();
                    let _ = w.write_all(&a).and_then(|_| w.flush());
                }
            }
        });
        Harness {
            home,
            master: pair.master,
            writer,
            child,
            screen,
            reader: Some(reader),
            paused,
        }
    }

    /// Stops (true) or resumes (false) reading omnish's output, like a terminal after Ctrl-S.
    pub fn pause_screen(&self, paused: bool) {
        self.paused
            .store(paused, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn bash(files: &[(&str, &str)]) -> Harness {
        let mut all = vec![(".bashrc", "PS1='READY> '\n")];
        all.extend_from_slice(files);
        let h = Harness::start(&["bash"], &all);
        h.wait_prompts(1);
        h
    }

    pub fn zsh(files: &[(&str, &str)]) -> Harness {
        let mut all = vec![(".zshrc", "PROMPT='READY> '\n")];
        all.extend_from_slice(files);
        let h = Harness::start(&["zsh"], &all);
        h.wait_prompts(1);
        h
    }

    pub fn data(&self) -> PathBuf {
        self.home.path().join("data")
    }

    /// The harness's session: the first one in its data dir (ids sort by start time).
    pub fn session_dir(&self) -> PathBuf {
        let sessions = store::list_sessions(&self.data()).unwrap();
        sessions.first().expect("a session").clone()
    }

    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
    }

    /// The last `n` bytes of what the terminal received (cheap on huge outputs).
    pub fn screen_tail(&self, n: usize) -> String {
        let screen = self.screen.lock().unwrap();
        let from = screen.len().saturating_sub(n);
        String::from_utf8_lossy(&screen[from..]).into_owned()
    }

    /// Types `line` whose output is huge, and waits for its record (the `n`th) and the prompt
    /// after it without scanning the whole screen.
    pub fn run_huge(&mut self, line: &str) -> CommandRecord {
        let typed_at = store::now_ms();
        self.type_line(line);
        let start = Instant::now();
        let rec = loop {
            // Its record: the first that started after the typing did (as in `run`).
            if let Some(r) = self
                .records()
                .into_iter()
                .find(|r| r.started_at >= typed_at)
            {
                break r;
            }
            if start.elapsed() > TIMEOUT * 4 {
                panic!("timed out waiting for the record of {line:?}");
            }
            // Not wait_until: that shows the whole (huge) screen on a timeout.
            std::thread::sleep(Duration::from_millis(50));
        };
        self.wait_until("the prompt after a huge output", || {
            self.screen_tail(256).contains(PROMPT)
        });
        rec
    }

    pub fn send(&mut self, bytes: &[u8]) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    /// Types `line` a few keys at a time, then Enter.
    pub fn type_line(&mut self, line: &str) {
        // Never inside a character: a terminal sends each key's bytes in one piece (fish 4
        // drops a character whose bytes come apart).
        let mut chunks = Vec::new();
        let mut start = 0;
        for (i, c) in line.char_indices() {
            if i + c.len_utf8() - start > 16 {
                chunks.push(&line.as_bytes()[start..i]);
                start = i;
            }
        }
        chunks.push(&line.as_bytes()[start..]);
        for chunk in chunks.into_iter().filter(|c| !c.is_empty()) {
            self.send(chunk);
            // Pacing, as a person types (a paste comes in one piece); not a wait for state:
            // callers wait for the record, the prompt or the screen after it.
            std::thread::sleep(Duration::from_millis(2));
        }
        self.send(b"\r");
    }

    /// Waits until `pred` holds, or panics with `what` and the screen.
    pub fn wait_until(&self, what: &str, mut pred: impl FnMut() -> bool) {
        let start = Instant::now();
        while !pred() {
            if start.elapsed() > TIMEOUT {
                panic!("timed out waiting for {what}; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn wait_prompts(&self, n: usize) {
        self.wait_until(&format!("{n} prompts"), || {
            self.screen().matches(PROMPT).count() >= n
        });
    }

    pub fn wait_screen(&self, text: &str) {
        self.wait_until(&format!("{text:?} on screen"), || {
            self.screen().contains(text)
        });
    }

    pub fn records(&self) -> Vec<CommandRecord> {
        match store::list_sessions(&self.data()) {
            Ok(s) if !s.is_empty() => store::read_commands(&s[0]).unwrap(),
            _ => Vec::new(),
        }
    }

    /// Waits for the first record that `matches` (`what` names it in a timeout) and returns it.
    pub fn wait_record(
        &self,
        what: &str,
        matches: impl Fn(&CommandRecord) -> bool,
    ) -> CommandRecord {
        let mut rec = None;
        self.wait_until(what, || {
            rec = self.records().into_iter().find(&matches);
            rec.is_some()
        });
        rec.unwrap()
    }

    pub fn wait_records(&self, n: usize) -> Vec<CommandRecord> {
        self.wait_until(&format!("{n} records"), || self.records().len() >= n);
        self.records()
    }

    /// Types `line`, waits for its record and the prompt after it. Its record is the first
    /// that started after the typing did: the record of a command before it may reach the disk
    /// a moment after its prompt showed (the writer thread), so counting records would not do.
    pub fn run(&mut self, line: &str) -> CommandRecord {
        let prompts = self.screen().matches(PROMPT).count();
        let typed_at = store::now_ms();
        self.type_line(line);
        let mut rec = None;
        self.wait_until(&format!("the record of {line:?}"), || {
            rec = self
                .records()
                .into_iter()
                .find(|r| r.started_at >= typed_at);
            rec.is_some()
        });
        self.wait_prompts(prompts + 1);
        rec.unwrap()
    }

    /// The session's meta.json, once the writer thread (which the shell never waits for) has
    /// written it.
    pub fn meta(&self) -> SessionMeta {
        self.wait_until("meta.json", || {
            store::list_sessions(&self.data())
                .is_ok_and(|s| s.first().is_some_and(|d| d.join(store::META).exists()))
        });
        store::read_meta(&self.session_dir()).unwrap()
    }

    /// The output bytes in a record's range of stream.bin.
    pub fn output(&self, rec: &CommandRecord) -> Vec<u8> {
        output_of(&self.session_dir(), rec)
    }

    pub fn output_text(&self, rec: &CommandRecord) -> String {
        String::from_utf8_lossy(&self.output(rec)).into_owned()
    }

    /// Waits for omnish to exit and returns its status.
    pub fn wait_exit(&mut self) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                if let Some(r) = self.reader.take() {
                    let _ = r.join();
                }
                return s.exit_code();
            }
            if start.elapsed() > TIMEOUT {
                panic!("omnish did not exit; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().unwrap()
    }
}

/// A process as /proc shows it.
#[derive(Clone, Debug)]
pub struct Proc {
    pub pid: i32,
    pub comm: String,
    /// R running, S sleeping, T stopped, Z zombie, ...
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    /// The foreground process group of its terminal (-1: no terminal).
    pub tpgid: i32,
}

impl Proc {
    /// In the foreground of its terminal: what the terminal's keys (and Ctrl-C) reach.
    pub fn foreground(&self) -> bool {
        self.pgrp == self.tpgid
    }

    /// The system call it is asleep in and its arguments, if it is asleep in one.
    pub fn syscall(&self) -> Option<(i64, Vec<u64>)> {
        let text = std::fs::read_to_string(format!("/proc/{}/syscall", self.pid)).ok()?;
        let mut words = text.split_whitespace();
        let nr = words.next()?.parse().ok()?;
        let args = words
            .take(6)
            .map(|w| u64::from_str_radix(w.trim_start_matches("0x"), 16).unwrap_or(0))
            .collect();
        Some((nr, args))
    }

    /// Asleep until input comes, with no deadline: in read(2), or in select/poll without a
    /// timeout. (A line editor that has read ESC and waits a moment for the rest of a key
    /// sequence sleeps with a timeout: not yet waiting for the next key.)
    pub fn waiting_for_input(&self) -> bool {
        if self.state != 'S' {
            return false;
        }
        let Some((nr, args)) = self.syscall() else {
            return false;
        };
        let arg = |i: usize| args.get(i).copied().unwrap_or(0);
        #[cfg(target_arch = "x86_64")]
        if nr == libc::SYS_select {
            return arg(4) == 0;
        }
        #[cfg(target_arch = "x86_64")]
        if nr == libc::SYS_poll {
            return (arg(2) as i32) < 0;
        }
        nr == libc::SYS_read
            || (nr == libc::SYS_pselect6 && arg(4) == 0)
            || (nr == libc::SYS_ppoll && arg(2) == 0)
    }

    /// Asleep in a write(2): its output is not being read (a full terminal or pipe).
    pub fn blocked_writing(&self) -> bool {
        self.state == 'S' && self.syscall().is_some_and(|(nr, _)| nr == libc::SYS_write)
    }

    /// How many threads it has (/proc/PID/task).
    pub fn threads(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/task", self.pid)).map_or(0, |d| d.count())
    }

    /// Whether one of its eventfds holds a count not read yet: a thread of its has posted
    /// something to it (fish's background workers so wake its main thread with their results)
    /// that it has not taken.
    pub fn eventfd_posted(&self) -> bool {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{}/fdinfo", self.pid)) else {
            return false;
        };
        fds.flatten().any(|fd| {
            std::fs::read_to_string(fd.path())
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.strip_prefix("eventfd-count:"))
                .any(|c| u64::from_str_radix(c.trim(), 16).is_ok_and(|c| c != 0))
        })
    }

    /// Bytes waiting unread on its standard input (FIONREAD on /proc/PID/fd/0, opened for a
    /// look: not as a controlling terminal, without blocking); None when that cannot be asked.
    pub fn unread_input(&self) -> Option<usize> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let input = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
            .open(format!("/proc/{}/fd/0", self.pid))
            .ok()?;
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one c_int through the pointer, to a live local.
        let r = unsafe { libc::ioctl(input.as_raw_fd(), libc::FIONREAD, &mut n) };
        (r == 0).then_some(n as usize)
    }

    /// Bytes it has read so far with read(2) and the like (/proc/PID/io `rchar`).
    pub fn bytes_read(&self) -> Option<u64> {
        let io = std::fs::read_to_string(format!("/proc/{}/io", self.pid)).ok()?;
        io.lines()
            .find_map(|l| l.strip_prefix("rchar:"))
            .and_then(|v| v.trim().parse().ok())
    }
}

/// Every process on the machine (those that end while being read are left out).
pub fn all_processes() -> Vec<Proc> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Some(p) = process(pid) {
            all.push(p);
        }
    }
    all
}

/// Process `pid`, if it exists.
pub fn process(pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // pid (comm) state ppid pgrp session tty_nr tpgid ...; comm ends at the last ')'.
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    if fields.len() < 6 {
        return None;
    }
    let num = |i: usize| fields[i].parse::<i32>().unwrap_or(-1);
    Some(Proc {
        pid,
        comm: stat[open + 1..close].to_string(),
        state: fields[0].chars().next().unwrap_or('?'),
        ppid: num(1),
        pgrp: num(2),
        tpgid: num(5),
    })
}

/// Whether process `pid` has signal `sig` pending: sent, not yet taken by a handler.
pub fn signal_pending(pid: i32, sig: i32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let bit = 1u64 << (sig - 1);
    status.lines().any(|l| {
        l.strip_prefix("ShdPnd:")
            .or_else(|| l.strip_prefix("SigPnd:"))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .is_some_and(|mask| mask & bit != 0)
    })
}

/// Waits until the clock is past `ms` (milliseconds since the epoch, as the store keeps
/// times): for what depends on time having passed (`--since`, a note's expiry), waiting for
/// that very moment, however slow the machine.
pub fn wait_clock_past(ms: u64) {
    while store::now_ms() <= ms {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until `pred` holds, or panics with `what` (a poll every 20 ms, for 30 s).
pub fn wait_for(what: &str, mut pred: impl FnMut() -> bool) {
    let start = Instant::now();
    while !pred() {
        assert!(start.elapsed() < TIMEOUT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Harness {
    /// omnish's descendants: the shell and everything it started.
    pub fn processes(&self) -> Vec<Proc> {
        let all = all_processes();
        let parent: std::collections::HashMap<i32, i32> =
            all.iter().map(|p| (p.pid, p.ppid)).collect();
        let root = self.pid() as i32;
        all.into_iter()
            .filter(|p| {
                let mut at = p.ppid;
                for _ in 0..64 {
                    if at == root {
                        return true;
                    }
                    match parent.get(&at) {
                        Some(&up) if up > 0 => at = up,
                        _ => return false,
                    }
                }
                false
            })
            .collect()
    }

    /// The first of omnish's descendants named `comm`.
    pub fn process(&self, comm: &str) -> Option<Proc> {
        self.processes().into_iter().find(|p| p.comm == comm)
    }

    /// Waits until a process named `comm` is in the foreground of the shell's terminal, where
    /// keys and Ctrl-C reach it (not the shell still starting it).
    pub fn wait_foreground(&self, comm: &str) -> Proc {
        let mut found = None;
        self.wait_until(&format!("{comm} in the foreground"), || {
            found = self
                .processes()
                .into_iter()
                .find(|p| p.comm == comm && p.foreground());
            found.is_some()
        });
        found.unwrap()
    }

    /// Waits until a process named `comm` is in the foreground and asleep waiting for input:
    /// what is typed next is its input.
    pub fn wait_reading(&self, comm: &str) -> Proc {
        let mut found = None;
        self.wait_until(&format!("{comm} waiting for input"), || {
            found = self
                .processes()
                .into_iter()
                .find(|p| p.comm == comm && p.foreground() && p.waiting_for_input());
            found.is_some()
        });
        found.unwrap()
    }

    /// The process in the foreground of the shell's terminal that waits for input, if one
    /// does.
    fn input_reader(&self) -> Option<Proc> {
        self.processes()
            .into_iter()
            .find(|p| p.foreground() && p.waiting_for_input())
    }

    /// Waits until a line editor has the terminal: a program in the foreground waits for input
    /// and reads it key by key without echo (a shell at its prompt, a pager), so the next keys
    /// are its input and nothing is echoed twice or held until Enter.
    pub fn wait_line_editor(&self) {
        use nix::sys::termios::LocalFlags;
        self.wait_until("a line editor reading keys", || {
            self.input_reader().is_some()
                && !self
                    .shell_terminal_modes()
                    .intersects(LocalFlags::ICANON | LocalFlags::ECHO)
        });
    }

    /// Waits until the program reading the terminal is idle: its only thread asleep waiting for
    /// input, nothing posted to it that would wake it (an eventfd's count). Only then does a
    /// key the terminal turns into a signal surely reach a line editor that takes signals only
    /// in its wait for input, as fish does: fish leaves ISIG on at its prompt, so Ctrl-C is
    /// SIGINT, and it acts on SIGINT only when the signal interrupts its wait for keys. One that
    /// lands while it is out of that wait (after echoing keys it repaints, then takes its
    /// background workers' results, highlighting and autosuggestion, each with a repaint) is
    /// left until the next signal, and the line stays. The workers end a moment after their
    /// last job: with one thread left, none is working.
    pub fn wait_reader_idle(&self) {
        self.wait_until("the line editor idle", || {
            self.input_reader().is_some_and(|p| {
                p.threads() == 1
                    && !p.eventfd_posted()
                    && process(p.pid).is_some_and(|p| p.waiting_for_input())
            })
        });
    }

    /// Sends keys to the program reading the terminal (the shell's line editor, mostly) and
    /// waits until it has read every one and waits for the next: it has done what they ask
    /// and redrawn the line. Not for keys the terminal turns into signals (Ctrl-C, Ctrl-Z),
    /// which no program reads. Read means both: its reads count as many bytes more (`rchar`,
    /// which also counts what it reads elsewhere, as fish 4's 8-byte eventfd reads), and
    /// nothing is left unread on its terminal.
    pub fn keys(&mut self, bytes: &[u8]) {
        let mut reader = None;
        self.wait_until("a program waiting for keys", || {
            reader = self.input_reader();
            reader.is_some()
        });
        let reader = reader.unwrap();
        let before = reader.bytes_read().expect("/proc/PID/io");
        self.send(bytes);
        let want = before + bytes.len() as u64;
        self.wait_until(
            &format!(
                "{} to read {:?} and wait for more",
                reader.comm,
                text(bytes)
            ),
            || {
                process(reader.pid).is_some_and(|p| {
                    p.bytes_read().is_some_and(|n| n >= want)
                        && p.unread_input().unwrap_or(0) == 0
                        && p.waiting_for_input()
                })
            },
        );
    }

    /// The shell's terminal (the pseudo-terminal omnish made), opened for a look: not as a
    /// controlling terminal, and closed again at once by the caller.
    fn shell_terminal(&self) -> std::fs::File {
        use std::os::unix::fs::OpenOptionsExt;
        let shell = self
            .processes()
            .into_iter()
            .find(|p| p.ppid == self.pid() as i32)
            .expect("the shell omnish started");
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
            .open(format!("/proc/{}/fd/0", shell.pid))
            .expect("the shell's terminal")
    }

    /// The local modes of the shell's terminal (ECHO, ICANON, ...).
    pub fn shell_terminal_modes(&self) -> nix::sys::termios::LocalFlags {
        nix::sys::termios::tcgetattr(self.shell_terminal())
            .unwrap()
            .local_flags
    }

    /// The shell's terminal size: (rows, cols).
    pub fn shell_terminal_size(&self) -> (u16, u16) {
        use std::os::fd::AsRawFd;
        let tty = self.shell_terminal();
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: TIOCGWINSZ fills the winsize it is given, on a descriptor open here.
        let r = unsafe { libc::ioctl(tty.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) };
        assert_eq!(r, 0, "TIOCGWINSZ: {}", std::io::Error::last_os_error());
        (ws.ws_row, ws.ws_col)
    }

    /// Resizes the terminal, as a window resized by hand, and waits until omnish has passed
    /// the size on to the shell's terminal (which signals the shell; a line editor takes the
    /// signal before it reads another key).
    pub fn resize(&self, rows: u16, cols: u16) {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        self.wait_until(&format!("the shell's terminal at {rows}x{cols}"), || {
            self.shell_terminal_size() == (rows, cols)
        });
    }

    /// How many bytes the terminal has received so far: a mark for [`Harness::screen_since`].
    pub fn mark(&self) -> usize {
        self.screen.lock().unwrap().len()
    }

    /// What the terminal received after `mark`.
    pub fn screen_since(&self, mark: usize) -> String {
        let screen = self.screen.lock().unwrap();
        String::from_utf8_lossy(&screen[mark.min(screen.len())..]).into_owned()
    }

    /// Makes the FIFO `~/gate`: a command that reads it (`cat gate`, run in HOME) runs until
    /// [`Harness::open_gate`], however slow the machine, so what the test does meanwhile
    /// (keys typed ahead) surely happens while it runs.
    pub fn gate(&self) {
        nix::unistd::mkfifo(
            &self.home.path().join("gate"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
    }

    /// Lets the command reading `~/gate` go on: opens the FIFO and closes it (it reads the
    /// end). Fails if nothing reads it.
    pub fn open_gate(&self) {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.home.path().join("gate"))
            .expect("a command reading ~/gate");
    }

    /// Waits until the session's stream.bin holds `text` in the shell's output (the recorder
    /// writes output while the command runs).
    pub fn wait_output_on_disk(&self, text: &str) {
        self.wait_until(&format!("{text:?} in stream.bin"), || {
            store::list_sessions(&self.data()).is_ok_and(|s| {
                s.first().is_some_and(|dir| {
                    store::read_range(&dir.join(store::STREAM), 0, None).is_ok_and(|frames| {
                        String::from_utf8_lossy(&store::output_bytes(&frames)).contains(text)
                    })
                })
            })
        });
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

pub fn output_of(dir: &Path, rec: &CommandRecord) -> Vec<u8> {
    let entries = store::read_range(
        &dir.join(store::STREAM),
        rec.stream_offset,
        Some(rec.stream_length),
    )
    .unwrap();
    store::output_bytes_at(&entries, rec.depth)
}

/// Every frame of a session, both directions.
pub fn all_frames(dir: &Path) -> Vec<store::StreamEntry> {
    store::read_range(&dir.join(store::STREAM), 0, None).unwrap()
}

/// The stdout of a run that must have succeeded; else the test fails showing its stderr.
pub fn ok_stdout(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "status {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A prerequisite of the calling test is missing (a program, a fault that cannot be set up).
/// The test fails, unless skipping was asked for with `OMNISH_ALLOW_SKIP=1`: then this says
/// "skipped" on the terminal where `cargo test` shows its results (not into the captured
/// output, which only a failure shows) and the caller returns.
pub fn skip(why: &str) {
    let allowed = std::env::var("OMNISH_ALLOW_SKIP").is_ok_and(|v| v == "1");
    let test = std::thread::current()
        .name()
        .unwrap_or("this test")
        .to_string();
    assert!(
        allowed,
        "{test}: {why}. The README's test command installs every prerequisite; \
         set OMNISH_ALLOW_SKIP=1 to skip such tests instead"
    );
    // Not eprintln!: the harness captures that; this reaches the terminal.
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
}

/// Whether `program` is on PATH; when it is not, [`skip`] (which fails the test unless
/// skipping was asked for) and false.
pub fn require(program: &str) -> bool {
    if have(program) {
        return true;
    }
    skip(&format!("{program} is not installed"));
    false
}

pub fn have(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Runs `cmd` with `input` on its stdin and collects its output. A run that has not ended after
/// a minute is killed and fails the test (a hang guard, not a timing check).
pub fn run_piped(cmd: std::process::Command, input: &str) -> std::process::Output {
    run_piped_peak(cmd, input).0
}

/// [`run_piped`], also sampling the process's peak resident memory (VmHWM, a high-water mark)
/// every few milliseconds: returns it in KiB with the output.
pub fn run_piped_peak(mut cmd: std::process::Command, input: &str) -> (std::process::Output, u64) {
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let pid = child.id();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let guard = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let start = Instant::now();
            let mut peak = 0;
            while start.elapsed() < Duration::from_secs(60) {
                if done.load(std::sync::atomic::Ordering::SeqCst) {
                    return (false, peak);
                }
                if let Some(kib) = std::fs::read_to_string(format!("/proc/{pid}/status"))
                    .ok()
                    .and_then(|s| {
                        s.lines()
                            .find_map(|l| l.strip_prefix("VmHWM:"))
                            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                    })
                {
                    peak = u64::max(peak, kib);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            (true, peak)
        })
    };
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let (hung, peak) = guard.join().unwrap_or((false, 0));
    assert!(
        !hung,
        "hung for a minute and was killed; stdout: {}; stderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, peak)
}

impl Harness {
    /// `omnish context ARGS` on this harness's store, from a second terminal (not inside the
    /// recorded shell).
    pub fn context(&self, args: &[&str]) -> std::process::Output {
        let mut all = vec!["context"];
        all.extend_from_slice(args);
        self.omnish(&all)
    }

    /// `omnish ARGS` on this harness's store, from a second terminal.
    pub fn omnish(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new(omnish_bin())
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap())
            .env("HOME", self.home.path())
            .env("OMNISH_DATA_DIR", self.data())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    }
}

/// Every byte of every file under a session's directory (its caches included), as text. A file
/// the recorder replaces meanwhile (`meta.json` through a temporary file) may vanish between
/// the listing and the read: it is passed over, its successor read if listed.
pub fn session_text(dir: &Path) -> String {
    let mut all = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                dirs.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                all.extend(bytes);
            }
        }
    }
    String::from_utf8_lossy(&all).into_owned()
}

/// The sessions of the store at `data`, newest first (none when it has none yet).
pub fn sessions_in(data: &Path) -> Vec<PathBuf> {
    store::list_sessions(data).unwrap_or_default()
}

/// The records of the newest session of the store at `data`.
pub fn records_in(data: &Path) -> Vec<CommandRecord> {
    match sessions_in(data).first() {
        Some(s) => store::read_commands(s).unwrap(),
        None => Vec::new(),
    }
}

/// Waits until the newest session of the store at `data` has `n` records; returns them.
pub fn wait_records_in(data: &Path, n: usize) -> Vec<CommandRecord> {
    let start = Instant::now();
    while records_in(data).len() < n {
        assert!(
            start.elapsed() < TIMEOUT,
            "timed out waiting for {n} records: {:?}",
            records_in(data)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    records_in(data)
}
