//! Drives `omnish wrap` in a real pseudo-terminal: types as a person would and reads the files
//! omnish wrote. Each harness has its own HOME, data dir and shell startup files.
#![allow(dead_code)]

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
    writer: Box<dyn Write + Send>,
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
        let writer = pair.master.take_writer().unwrap();
        let screen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&screen);
        let paused = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let pause = Arc::clone(&paused);
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                while pause.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                let Ok(n) = reader.read(&mut buf) else { break };
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
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
        let n = self.records().len() + 1;
        self.type_line(line);
        let start = Instant::now();
        while self.records().len() < n {
            if start.elapsed() > TIMEOUT * 4 {
                panic!("timed out waiting for the record of {line:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.wait_until("the prompt after a huge output", || {
            self.screen_tail(256).contains(PROMPT)
        });
        self.records()[n - 1].clone()
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    /// Types `line` a few keys at a time, then Enter.
    pub fn type_line(&mut self, line: &str) {
        for chunk in line.as_bytes().chunks(16) {
            self.send(chunk);
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

    pub fn wait_records(&self, n: usize) -> Vec<CommandRecord> {
        self.wait_until(&format!("{n} records"), || self.records().len() >= n);
        self.records()
    }

    /// Types `line`, waits for its record (the `n`th) and the prompt after it.
    pub fn run(&mut self, line: &str) -> CommandRecord {
        let n = self.records().len() + 1;
        let prompts = self.screen().matches(PROMPT).count();
        self.type_line(line);
        let rec = self.wait_records(n)[n - 1].clone();
        self.wait_prompts(prompts + 1);
        rec
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
    store::output_bytes(&entries)
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
pub fn run_piped(mut cmd: std::process::Command, input: &str) -> std::process::Output {
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
            while start.elapsed() < Duration::from_secs(60) {
                if done.load(std::sync::atomic::Ordering::SeqCst) {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            true
        })
    };
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let hung = guard.join().unwrap_or(false);
    assert!(
        !hung,
        "hung for a minute and was killed; stdout: {}; stderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Harness {
    /// `omnish context ARGS` on this harness's store, from a second terminal (not inside the
    /// recorded shell).
    pub fn context(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new(omnish_bin())
            .arg("context")
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
