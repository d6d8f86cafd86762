//! Faults around the recorder, made real: a disk that hangs or is slow (strace delays the
//! writer's renames), a file size limit (`ulimit -f`), a full disk (a small tmpfs), a shell that
//! ignores SIGHUP, a terminal that stops reading. Each runs through real bash and zsh.
//!
//! A test that cannot set up its fault (no strace, mount not permitted) fails, unless
//! `OMNISH_ALLOW_SKIP=1` asks to skip it (see `common::skip`).

mod common;

use common::*;
use omnish::store::SessionState;
use std::path::{Path, PathBuf};
use std::process::Command;

/// bash, and zsh where installed (CI installs it).
fn shells() -> Vec<&'static str> {
    let mut shells = vec!["bash"];
    if have("zsh") {
        shells.push("zsh");
    } else {
        skip("zsh not installed: only bash runs");
    }
    shells
}

/// `<wrapper> omnish wrap <shell>` with a READY prompt and `rc` in its startup file.
fn start(shell: &str, wrapper: &[&str], env: &[(&str, &str)], rc: &str) -> Harness {
    let (file, prompt) = match shell {
        "zsh" => (".zshrc", "PROMPT='READY> '\n"),
        _ => (".bashrc", "PS1='READY> '\n"),
    };
    let rc = format!("{prompt}{rc}");
    let h = Harness::start_via(wrapper, &[shell], &[(file, rc.as_str())], env);
    h.wait_prompts(1);
    h
}

/// Types `line` and waits for `text` on screen and the prompt after it, without looking at
/// the store (which may not be written).
fn type_and_see(h: &mut Harness, line: &str, text: &str) {
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line(line);
    h.wait_screen(text);
    h.wait_prompts(prompts + 1);
}

fn assert_modes_restored(h: &Harness, how: &str) {
    let want = (libc::ECHO | libc::ICANON) as libc::tcflag_t;
    let after = h.master.get_termios().unwrap();
    assert_eq!(after.local_flags.bits() & want, want, "{how}");
    assert_ne!(
        after.output_flags.bits() & libc::OPOST as libc::tcflag_t,
        0,
        "{how}"
    );
}

/// strace with every rename of omnish and its shell delayed by `micros`, or None (skipped).
fn strace_delaying_renames(micros: u64) -> Option<Vec<String>> {
    if !have("strace") {
        skip("strace not installed");
        return None;
    }
    let probe = Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null", "true"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        skip("strace cannot trace here (ptrace not permitted)");
        return None;
    }
    let set = "rename,renameat,renameat2";
    Some(vec![
        "strace".into(),
        "-f".into(),
        "-qq".into(),
        "--seccomp-bpf".into(),
        "-o".into(),
        "/dev/null".into(),
        "-e".into(),
        format!("trace={set}"),
        "-e".into(),
        format!("inject={set}:delay_enter={micros}"),
    ])
}

fn hung_disk_never_delays_the_terminal(shell: &str) {
    // Every rename (meta.json) hangs for an hour: the writer thread is stuck from the start.
    let Some(strace) = strace_delaying_renames(3_600_000_000) else {
        return;
    };
    let wrapper: Vec<&str> = strace.iter().map(String::as_str).collect();
    let mut h = start(shell, &wrapper, &[("HISTFILE", "/dev/null")], "");
    for word in ["one", "two", "three"] {
        type_and_see(
            &mut h,
            &format!("echo {word}-$((6*7))"),
            &format!("{word}-42\r\n"),
        );
    }
    // The writer is really stuck: not even the first meta.json is in place.
    assert!(h.records().is_empty());
    assert!(!h.session_dir().join("meta.json").exists());
    // At the end omnish waits a few seconds for the writer, then gives up and says so. (strace
    // itself may not exit while a delayed syscall is pending: the harness kills it.)
    h.type_line("exit 3");
    h.wait_screen("did not finish writing");
    assert_modes_restored(&h, shell);
}

#[test]
fn a_hung_disk_never_delays_the_terminal_bash() {
    hung_disk_never_delays_the_terminal("bash");
}

#[test]
fn a_hung_disk_never_delays_the_terminal_zsh() {
    if shells().contains(&"zsh") {
        hung_disk_never_delays_the_terminal("zsh");
    }
}

#[test]
fn a_slow_disk_catches_up_and_the_store_is_complete() {
    // Each rename delayed by 1 s, as on a sluggish network mount.
    let Some(strace) = strace_delaying_renames(1_000_000) else {
        return;
    };
    let wrapper: Vec<&str> = strace.iter().map(String::as_str).collect();
    for shell in shells() {
        let mut h = start(shell, &wrapper, &[("HISTFILE", "/dev/null")], "");
        for word in ["one", "two", "three"] {
            type_and_see(&mut h, &format!("echo {word}"), &format!("{word}\r\n"));
        }
        h.type_line("exit 0");
        assert_eq!(h.wait_exit(), 0);
        let lines: Vec<String> = h.records().into_iter().map(|r| r.command_line).collect();
        assert_eq!(
            lines,
            ["echo one", "echo two", "echo three", "exit 0"],
            "{shell}"
        );
        let meta = h.meta();
        assert_eq!(meta.state, SessionState::Exited, "{shell}");
        assert_eq!(meta.running_command, None, "{shell}");
        assert!(!h.screen().contains("recording stopped"), "{}", h.screen());
    }
}

/// What every way of losing the disk must leave: the shell alive, one warning on a line of its
/// own after the output, the running command closed as `recording_stopped` with what was saved,
/// meta.json saying why, and no later record pretending to be complete.
fn stop_and_check(h: &mut Harness, shell: &str, reason: &str) {
    type_and_see(h, "seq 1 300000", "299999\r\n300000\r\n");
    type_and_see(h, "echo after-$((6*7))", "after-42\r\n");
    h.type_line("exit 3");
    assert_eq!(h.wait_exit(), 3, "{shell}");
    assert_modes_restored(h, shell);

    let screen = h.screen();
    assert_eq!(screen.matches("recording stopped").count(), 1, "{screen}");
    let at = screen.find("omnish: recording stopped").unwrap();
    assert!(
        screen[..at].ends_with('\n'),
        "{shell}: warning splits a line"
    );
    assert!(screen[at..].contains(reason), "{shell}: {}", &screen[at..]);
    // Shown at the prompt after the command, not in its output.
    let seq_end = screen.find("300000\r\n").unwrap();
    assert!(
        at > seq_end,
        "{shell}: the warning came before the output ended"
    );

    let records = h.records();
    let last = records.last().expect("the cut-off command's record");
    assert_eq!(last.command_line, "seq 1 300000", "{shell}");
    assert!(last.recording_stopped, "{shell}");
    assert_eq!(last.exit_code, None, "{shell}");
    let saved = h.output_text(last);
    assert!(saved.starts_with("1\r\n2\r\n3\r\n"), "{shell}");
    assert!(
        !saved.contains("300000\r\n"),
        "{shell}: more saved than fits"
    );
    let meta = h.meta();
    assert!(
        meta.recording_error
            .as_deref()
            .is_some_and(|e| e.contains(reason)),
        "{shell}: {:?}",
        meta.recording_error
    );
    assert_eq!(meta.running_command, None, "{shell}");
    assert_eq!(meta.state, SessionState::Exited, "{shell}");
    assert_eq!(meta.exit_status, Some(3), "{shell}");

    // And `omnish context` says so: the command is incomplete, later ones are missing.
    let out = std::process::Command::new(omnish_bin())
        .args(["context", "--last"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("OMNISH_DATA_DIR", h.data())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.starts_with("# cwd: ")
            && text.contains("$ seq 1 300000\n1\n2\n")
            && text.ends_with("[recording stopped here: output incomplete, exit status unknown]\n"),
        "{shell}: {text}"
    );
    assert!(
        err.contains("recording stopped: ")
            && err.contains(reason)
            && err.contains("later commands are missing"),
        "{shell}: {err}"
    );
    // `omnish status` in that session says it in the same words.
    let dir = h.session_dir();
    let id = dir.file_name().unwrap().to_str().unwrap();
    let out = std::process::Command::new(omnish_bin())
        .arg("status")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("OMNISH_DATA_DIR", h.data())
        .env("OMNISH_SESSION_ID", id)
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(
        status.contains("note      recording stopped: ")
            && status.contains(reason)
            && status.contains(&format!("session   {id} (exited)")),
        "{shell}: {status}"
    );
}

#[test]
fn a_file_size_limit_stops_recording_but_not_the_shell() {
    // `ulimit -f 1000` in the parent: stream.bin may not grow past 1,024,000 bytes.
    let wrapper = ["sh", "-c", "ulimit -f 1000 && exec \"$@\"", "sh"];
    for shell in shells() {
        let mut h = start(shell, &wrapper, &[], "");
        stop_and_check(&mut h, shell, "File too large");
    }
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap().keep();
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(&dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            Ok(o) => {
                let _ = std::fs::remove_dir(&dir);
                skip(&format!(
                    "cannot mount a tmpfs: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
                None
            }
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                skip(&format!("cannot run mount: {e}"));
                None
            }
        }
    }

    fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn a_full_disk_stops_recording_truthfully() {
    for shell in shells() {
        let Some(disk) = Tmpfs::mount("1m") else {
            return;
        };
        let data = disk.path().join("data");
        let data = data.to_str().unwrap();
        let mut h = start(shell, &[], &[("OMNISH_DATA_DIR", data)], "");
        // The harness reads the store from HOME/data: point it at the tmpfs.
        std::os::unix::fs::symlink(data, h.home.path().join("data")).unwrap();
        stop_and_check(&mut h, shell, "No space left on device");
    }
}

#[test]
fn sigterm_ends_a_shell_that_ignores_sighup() {
    for shell in shells() {
        let mut h = start(shell, &[], &[], "trap '' HUP\n");
        h.run("echo up");
        let pid = nix::unistd::Pid::from_raw(h.pid() as i32);
        // Twice, the second once the first was taken (two pending SIGTERMs are one).
        for _ in 0..2 {
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
            wait_for("SIGTERM taken", || {
                !signal_pending(pid.as_raw(), libc::SIGTERM)
            });
        }
        h.wait_exit();
        assert_eq!(h.meta().state, SessionState::Interrupted, "{shell}");
        assert_modes_restored(&h, shell);
    }
}

#[test]
fn a_clean_exit_is_exited_not_interrupted() {
    for shell in shells() {
        let mut h = start(shell, &[], &[], "");
        h.run("echo up");
        h.type_line("exit 0");
        assert_eq!(h.wait_exit(), 0);
        assert_eq!(h.meta().state, SessionState::Exited, "{shell}");
    }
}

#[test]
fn a_relative_data_dir_is_found_after_cd() {
    for shell in shells() {
        // HOME is the working directory: "data" is HOME/data.
        let mut h = start(shell, &[], &[("OMNISH_DATA_DIR", "data")], "");
        h.run("echo marker-$((6*7))");
        h.run("cd /");
        let r = h.run(&format!("{} context --recent 5", omnish_bin()));
        let shown = h.output_text(&r);
        assert!(shown.contains("marker-42"), "{shell}: {shown}");
        let r = h.run("echo \"$OMNISH_DATA_DIR\"");
        let want = format!("{}\r\n", h.home.path().join("data").display());
        assert_eq!(h.output_text(&r), want, "{shell}");
    }
}

#[test]
fn running_command_is_cleared_when_its_command_ends() {
    for shell in shells() {
        let mut h = start(shell, &[], &[], "");
        h.run("echo done");
        h.wait_until("meta.json without a running command", || {
            h.meta().running_command.is_none()
        });
    }
}

#[test]
fn a_stopped_terminal_does_not_block_the_keyboard() {
    for shell in shells() {
        let mut h = start(shell, &[], &[], "");
        let got = h.home.path().join("got-int");
        h.type_line(&format!(
            "sh -c 'trap \"touch {}; exit 1\" INT; while :; do echo flood; done'",
            got.display()
        ));
        h.wait_screen("flood\r\nflood\r\n");
        // The terminal stops reading: omnish's writes to it would block, its queue for the
        // screen fills and it stops reading the shell, whose writes then block.
        h.pause_screen(true);
        h.wait_until("the flood held up", || {
            h.process("sh").is_some_and(|p| p.blocked_writing())
        });
        h.send(b"\x03");
        h.wait_until("Ctrl-C to reach the shell", || got.exists());
        h.pause_screen(false);
        h.wait_prompts(2);
        h.type_line("exit");
        h.wait_exit();
        assert_modes_restored(&h, shell);
    }
}

#[test]
fn terminal_modes_are_restored_on_every_way_out_of_a_failed_start() {
    // A shell in the test's pty sets modes of its own, saves them (`stty -g`), runs omnish,
    // and saves them again after omnish is gone, however it ended.
    let around = "stty -echoctl -ixon intr ^G; chmod +x badshell; : >not-a-dir; \
                  stty -g >before; \"$@\"; echo $? >status; stty -g >after";
    let files = [("badshell", "#!/nonexistent/interpreter\n")];
    for (how, argv, env, want) in [
        (
            "a shell that cannot be found",
            &["/nonexistent/shell"][..],
            &[][..],
            127,
        ),
        ("a shell that cannot be executed", &["./badshell"], &[], -1),
        (
            "a data dir that cannot be created",
            &["sh", "-c", "exit 3"],
            &[("OMNISH_DATA_DIR", "not-a-dir/data")][..],
            3,
        ),
        (
            "a shell that exits at once",
            &["sh", "-c", "exit 4"],
            &[],
            4,
        ),
        (
            "a shell killed by a signal",
            &["sh", "-c", "kill -KILL $$"],
            &[],
            137,
        ),
        // A real-time signal (nix's WaitStatus has no name for it): 128 + its number all the
        // same.
        (
            "a shell killed by a real-time signal",
            &["sh", "-c", "kill -36 $$"],
            &[],
            164,
        ),
    ] {
        let mut h = Harness::start_via(&["sh", "-c", around, "sh"], argv, &files, env);
        h.wait_exit();
        let home = h.home.path();
        let read = |f: &str| {
            std::fs::read_to_string(home.join(f))
                .unwrap_or_else(|e| panic!("{how}: {f}: {e}; screen:\n{}", h.screen()))
        };
        let status: i32 = read("status").trim().parse().unwrap();
        if want >= 0 {
            assert_eq!(status, want, "{how}; screen:\n{}", h.screen());
        } else {
            assert_ne!(status, 0, "{how}; screen:\n{}", h.screen());
        }
        let before = read("before");
        assert!(before.contains(':'), "{how}: {before}");
        assert_eq!(read("after"), before, "{how}; screen:\n{}", h.screen());
    }
}
