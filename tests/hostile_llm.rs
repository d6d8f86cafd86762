//! `ask` and `fix` against hostile LLM commands: one that ignores Ctrl-C and SIGTERM and keeps
//! children on the answer's pipe (Ctrl-C, through the keys in real bash and zsh under tmux and
//! typed at the prompt, comes back with status 130 and leaves no process behind), one that
//! exits leaving a child on the pipe, one that wants the terminal, a 300 MB answer (memory stays
//! bounded, also for a slow reader), and answers full of escape sequences (shown visibly; the
//! command `fix` puts on the line holds no raw control character).

mod common;
#[path = "common/tmux.rs"]
mod tmux;

use common::*;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tmux::Tmux;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The stand-in LLM command, in `home`. What it does is chosen by `$HOME/mode`:
/// - `stubborn`: ignores SIGINT and SIGTERM (as do its children), reads the prompt, starts a
///   `sleep` in the background, writes its pid to `llm-pid`, says `STUBBORN-WAITING` and sleeps;
/// - `hostile-fix`: answers `fix` with a command hiding text behind `ESC [8m`;
/// - `tty`: reads the terminal.
fn stand_in(home: &Path) -> String {
    let path = home.join("llm-stand-in");
    std::fs::write(
        &path,
        "#!/bin/sh\n\
         trap '' INT TERM\n\
         case $(cat \"$HOME/mode\") in\n\
         stubborn)\n\
           cat >/dev/null\n\
           sleep 1000 &\n\
           echo $$ > \"$HOME/llm-pid.tmp\" && mv \"$HOME/llm-pid.tmp\" \"$HOME/llm-pid\"\n\
           echo STUBBORN-WAITING\n\
           sleep 1000 ;;\n\
         hostile-fix)\n\
           cat >/dev/null\n\
           printf 'Run:\\n```sh\\necho fixed-line\\033[8m hidden-part\\n```\\n' ;;\n\
         tty)\n\
           cat >/dev/null\n\
           read x </dev/tty; echo \"READ:$x\" ;;\n\
         esac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn set_mode(home: &Path, mode: &str) {
    std::fs::write(home.join("mode"), mode).unwrap();
    let _ = std::fs::remove_file(home.join("llm-pid"));
}

/// The stubborn stand-in's pid (its process group), once it has started its children.
fn wait_llm_pid(home: &Path) -> i32 {
    let file = home.join("llm-pid");
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(start.elapsed() < TIMEOUT, "the stand-in never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Processes of process group `pgid` that are not zombies: `pid comm` each.
fn live_in_group(pgid: i32) -> Vec<String> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may hold anything but ends at the last ')'.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            live.push(head.replace(" (", " "));
        }
    }
    live
}

/// Waits until nothing of group `pgid` is left; fails naming what is.
fn wait_group_gone(pgid: i32) {
    let start = Instant::now();
    loop {
        let live = live_in_group(pgid);
        if live.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < TIMEOUT,
            "the LLM command's group {pgid} outlived omnish: {live:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills what is left of the stand-in's processes when a test fails half-way.
struct Reap(Vec<i32>);

impl Drop for Reap {
    fn drop(&mut self) {
        for &pgid in &self.0 {
            for p in live_in_group(pgid) {
                let mut words = p.split(' ');
                let (Some(pid), Some(comm)) = (words.next(), words.next()) else {
                    continue;
                };
                if ["sleep", "sh", "cat", "llm-stand-in"].contains(&comm) {
                    let _ = Command::new("kill").args(["-KILL", pid]).status();
                }
            }
        }
    }
}

/// The line of a startup file that makes `shell` wrap itself and bind the keys.
fn wrap_line(shell: &str) -> String {
    format!("eval \"$({} init {shell} --wrap)\"\n", omnish_bin())
}

/// A recorded `shell` (started by `init --wrap`) in tmux, with the stand-in as its LLM command
/// and one failed command recorded; the prompt is `READY> `.
fn wrapped_shell_with_a_failure(shell: &str) -> Option<(tempfile::TempDir, Tmux)> {
    if !(require("tmux") && require(shell)) {
        return None;
    }
    let rc = wrap_line(shell);
    let home = match shell {
        "bash" => home_with(&[(".bashrc", &format!("PS1='READY> '\n{rc}"))]),
        _ => home_with(&[(".zshrc", &format!("PROMPT='READY> '\n{rc}"))]),
    };
    let h = home.path();
    let data = h.join("data");
    let llm = stand_in(h);
    let t = Tmux::start(
        h,
        &[
            ("OMNISH_DATA_DIR", data.display().to_string()),
            ("OMNISH_ASK_COMMAND", llm),
        ],
        &format!("{shell} -i"),
    );
    t.wait("the prompt", |s| s.contains("READY>"));
    t.type_text("ls /no-such-dir-omnish");
    t.keys(&["Enter"]);
    wait_records_in(&data, 1);
    t.wait("the second prompt", |s| s.matches("READY>").count() >= 2);
    Some((home, t))
}

/// Ctrl-C after the ask key, after the fix key and during `omnish ask` typed at the prompt,
/// with an LLM command that ignores SIGINT and SIGTERM and keeps children on the answer's pipe:
/// each time the prompt and the edited line come back, and nothing of the command is left.
fn ctrl_c_comes_back_from_a_stubborn_llm_command(shell: &str) {
    let Some((home, t)) = wrapped_shell_with_a_failure(shell) else {
        return;
    };
    let h = home.path();
    let mut reap = Reap(Vec::new());
    let interrupted = "was interrupted (Ctrl-C, status 130)";

    // The ask key, with a line being edited.
    set_mode(h, "stubborn");
    t.type_text("echo half-typed");
    t.wait("the typed text", |s| s.contains("READY> echo half-typed"));
    t.keys(&["C-x", "a"]);
    let pgid = wait_llm_pid(h);
    reap.0.push(pgid);
    t.wait("the stubborn command's first line", |s| {
        s.contains("STUBBORN-WAITING")
    });
    t.keys(&["C-c"]);
    t.wait("the interruption, then the prompt and the line", |s| {
        s.contains(interrupted) && tmux::last_line(s) == "READY> echo half-typed"
    });
    wait_group_gone(pgid);

    // The fix key: the line stays as it was.
    set_mode(h, "stubborn");
    t.keys(&["C-x", "f"]);
    let pgid = wait_llm_pid(h);
    reap.0.push(pgid);
    t.keys(&["C-c"]);
    t.wait(
        "the second interruption, then the prompt and the line",
        |s| s.matches(interrupted).count() >= 2 && tmux::last_line(s) == "READY> echo half-typed",
    );
    wait_group_gone(pgid);

    // `omnish ask` typed at the prompt: status 130.
    set_mode(h, "stubborn");
    t.keys(&["C-u"]);
    t.type_text(&format!("{} ask", omnish_bin()));
    t.keys(&["Enter"]);
    let pgid = wait_llm_pid(h);
    reap.0.push(pgid);
    t.wait("the stubborn command's first line again", |s| {
        s.matches("STUBBORN-WAITING").count() >= 2
    });
    t.keys(&["C-c"]);
    t.wait("the third interruption and a prompt", |s| {
        s.matches(interrupted).count() >= 3 && tmux::last_line(s) == "READY>"
    });
    t.type_text("echo status=$?");
    t.keys(&["Enter"]);
    t.wait("the status of omnish ask", |s| s.contains("\nstatus=130"));
    wait_group_gone(pgid);
}

#[test]
fn ctrl_c_comes_back_from_a_stubborn_llm_command_in_bash() {
    ctrl_c_comes_back_from_a_stubborn_llm_command("bash");
}

#[test]
fn ctrl_c_comes_back_from_a_stubborn_llm_command_in_zsh() {
    ctrl_c_comes_back_from_a_stubborn_llm_command("zsh");
}

/// The fix key with an answer hiding text behind `ESC [8m`: the line holds `^[` as text, and
/// running it records no raw escape.
fn the_fix_key_puts_no_raw_control_character_on_the_line(shell: &str) {
    let Some((home, t)) = wrapped_shell_with_a_failure(shell) else {
        return;
    };
    let h = home.path();
    set_mode(h, "hostile-fix");
    t.keys(&["C-x", "f"]);
    t.wait("fix's command on the line", |s| {
        tmux::last_line(s).starts_with("READY> echo fixed-line")
    });
    t.keys(&["Enter"]);
    let recs = wait_records_in(&h.join("data"), 2);
    assert_eq!(
        recs[1].command_line, "echo fixed-line^[[8m hidden-part",
        "{:?}",
        recs[1].command_line
    );
}

#[test]
fn the_fix_key_puts_no_raw_control_character_on_the_line_in_bash() {
    the_fix_key_puts_no_raw_control_character_on_the_line("bash");
}

#[test]
fn the_fix_key_puts_no_raw_control_character_on_the_line_in_zsh() {
    the_fix_key_puts_no_raw_control_character_on_the_line("zsh");
}

/// An LLM command that reads the terminal (it runs in a background process group) is stopped
/// by the terminal; omnish kills it and says why instead of waiting forever.
#[test]
fn an_llm_command_that_wants_the_terminal_is_killed_and_said_so() {
    let Some((home, t)) = wrapped_shell_with_a_failure("bash") else {
        return;
    };
    set_mode(home.path(), "tty");
    t.type_text("echo half-typed");
    t.wait("the typed text", |s| s.contains("READY> echo half-typed"));
    t.keys(&["C-x", "a"]);
    let s = t.wait("the reason and the prompt with the line", |s| {
        s.contains("wanted the terminal (stopped by SIGTTIN)")
            && tmux::last_line(s) == "READY> echo half-typed"
    });
    assert!(!s.contains("READ:"), "{s}");
}

/// A bash session where `ls` of a missing directory failed.
fn failed_session() -> Harness {
    let mut h = Harness::bash(&[]);
    let r = h.run("ls /no-such-dir-omnish");
    assert_ne!(r.exit_code, Some(0));
    h
}

/// `omnish SUB` on `h`'s store with `llm` as its LLM command, stdout and stderr piped.
fn omnish(h: &Harness, sub: &str, llm: &str) -> Command {
    let mut cmd = Command::new(omnish_bin());
    cmd.arg(sub)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", h.home.path())
        .env("OMNISH_DATA_DIR", h.data())
        .env("OMNISH_CONFIG", "/dev/null")
        .env("OMNISH_ASK_COMMAND", llm)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// An executable script in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_string_lossy().into_owned()
}

/// Waits for `child` to exit, failing after a minute (a hang guard, not a timing check).
fn wait_exit(child: &mut std::process::Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("omnish did not come back within a minute");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Ctrl-C (SIGINT to omnish's process group, as a terminal sends it) during `ask` and `fix`
/// with the stubborn command: status 130, one line saying so, nothing of the command left.
#[test]
fn ctrl_c_stops_a_stubborn_llm_command_and_everything_it_started() {
    let h = failed_session();
    let home = h.home.path();
    let llm = stand_in(home);
    let mut reap = Reap(Vec::new());
    for sub in ["ask", "fix"] {
        set_mode(home, "stubborn");
        let mut cmd = omnish(&h, sub, &llm);
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        let mut child = cmd.spawn().unwrap();
        let pgid = wait_llm_pid(home);
        reap.0.push(pgid);
        let pressed = Instant::now();
        nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGINT,
        )
        .unwrap();
        let status = wait_exit(&mut child);
        let back = pressed.elapsed();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert_eq!(status.code(), Some(130), "{sub}: {err}");
        assert_eq!(err.lines().count(), 1, "{sub}: {err}");
        assert!(
            err.contains("was interrupted (Ctrl-C, status 130)"),
            "{sub}: {err}"
        );
        wait_group_gone(pgid);
        eprintln!("{sub}: back {} ms after Ctrl-C", back.as_millis());
    }
}

/// An LLM command that exits leaving a child that holds the answer's pipe open: the answer is
/// shown and omnish returns (it stops reading once the command is gone and the pipe is quiet).
#[test]
fn an_llm_command_that_exits_leaving_a_child_on_the_pipe_does_not_hang() {
    let h = failed_session();
    let home = h.home.path();
    let llm = script(
        home,
        "leaky-llm",
        "cat >/dev/null; echo the-answer; sleep 1000 & echo $! > \"$HOME/bg-pid\"\n",
    );
    let mut child = omnish(&h, "ask", &llm).spawn().unwrap();
    let status = wait_exit(&mut child);
    let bg: i32 = std::fs::read_to_string(home.join("bg-pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(bg),
        nix::sys::signal::Signal::SIGKILL,
    );
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(out, "the-answer\n");
    assert!(
        err.contains("kept its output open; stopped reading"),
        "{err}"
    );
}

/// Runs `cmd` to its end, reading its stdout with `read` (which may be slow) while sampling its
/// peak resident memory (VmHWM, a high-water mark); returns its status, the bytes read, its
/// stdout's last bytes and the peak in KiB.
fn run_measured(
    mut cmd: Command,
    mut read: impl FnMut(&mut dyn Read, &mut Vec<u8>) -> usize + Send + 'static,
) -> (std::process::ExitStatus, usize, String, u64) {
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut tail = Vec::new();
        let n = read(&mut stdout, &mut tail);
        (n, tail)
    });
    let mut peak = 0;
    let status = loop {
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kb);
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (n, tail) = reader.join().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(err.lines().count() <= 1, "{err}");
    (status, n, text(&tail), peak)
}

/// Reads everything, keeping the last 64 bytes.
fn read_all(from: &mut dyn Read, tail: &mut Vec<u8>, pause_every: Option<usize>) -> usize {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0;
    let mut reads = 0;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => return total,
            Ok(n) => n,
        };
        total += n;
        tail.extend_from_slice(&buf[..n]);
        let keep = tail.len().saturating_sub(64);
        tail.drain(..keep);
        reads += 1;
        // A slow reader: a terminal that cannot keep up, a pager, a slow pipe.
        if pause_every.is_some_and(|every| reads % every == 0) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Most memory `ask` and `fix` may take for a 300 MB answer (they took 302 MB and 577 MB).
const PEAK_LIMIT_KIB: u64 = 64 * 1024;
const ANSWER_BYTES: usize = 300_000_000;

#[test]
fn fix_keeps_only_the_command_of_a_300_mb_answer() {
    let h = failed_session();
    let llm = script(
        h.home.path(),
        "huge-fix-llm",
        &format!(
            "cat >/dev/null; printf 'Here:\\n```sh\\necho fixed\\n```\\n'; \
             yes 'and then a very long explanation of it' | head -c {ANSWER_BYTES}\n"
        ),
    );
    let (status, _, out, peak) =
        run_measured(omnish(&h, "fix", &llm), |r, tail| read_all(r, tail, None));
    assert!(status.success(), "{status:?}");
    assert_eq!(out, "echo fixed\n");
    eprintln!("fix of a {ANSWER_BYTES}-byte answer: peak RSS {peak} KiB");
    assert!(peak < PEAK_LIMIT_KIB, "peak RSS {peak} KiB");
}

#[test]
fn ask_relays_a_300_mb_answer_to_a_slow_reader_in_bounded_memory() {
    let h = failed_session();
    let llm = script(
        h.home.path(),
        "huge-ask-llm",
        &format!("cat >/dev/null; yes 'a line of a long answer' | head -c {ANSWER_BYTES}\n"),
    );
    let (status, n, tail, peak) = run_measured(omnish(&h, "ask", &llm), |r, tail| {
        read_all(r, tail, Some(4))
    });
    assert!(status.success(), "{status:?}");
    assert_eq!(n, ANSWER_BYTES);
    assert!(tail.ends_with("a line of a long answer\n"), "{tail:?}");
    eprintln!("ask of a {ANSWER_BYTES}-byte answer to a slow reader: peak RSS {peak} KiB");
    assert!(peak < PEAK_LIMIT_KIB, "peak RSS {peak} KiB");
}

/// Escape sequences in the answer (hidden text, a clipboard write, a C1 CSI and a character
/// split between two writes of the command) are shown visibly by `ask`; `fix` prints the
/// command with them visible.
#[test]
fn ask_and_fix_show_control_characters_in_the_answer_visibly() {
    let h = failed_session();
    let home = h.home.path();
    let llm = script(
        home,
        "escapes-llm",
        "cat >/dev/null\n\
         printf 'safe\\033[8m; rm -rf ~\\033[0m\\n\\033]52;c;cm0gLXJmIH4=\\007done\\n'\n\
         printf 'caf\\303'; sleep 0.2; printf '\\251 \\302'; sleep 0.2; printf '\\2332J\\n'\n",
    );
    let out = omnish(&h, "ask", &llm).output().unwrap();
    let shown = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        shown,
        "safe^[[8m; rm -rf ~^[[0m\n^[]52;c;cm0gLXJmIH4=^Gdone\ncafé <U+009B>2J\n"
    );
    let fix = script(
        home,
        "escapes-fix-llm",
        "cat >/dev/null; printf '```sh\\necho ok\\033[8m; rm -rf ~\\n```\\n'\n",
    );
    let out = omnish(&h, "fix", &fix).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "echo ok^[[8m; rm -rf ~\n");
}
