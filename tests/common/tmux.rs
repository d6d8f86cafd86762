//! A real terminal for tests that press keys: a tmux server with one pane, in a clean
//! environment, read back with `capture-pane`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::TIMEOUT;

/// A tmux server with one pane running a command.
pub struct Tmux {
    sock: PathBuf,
}

impl Tmux {
    /// Starts `command` in a 100x40 pane with HOME `home`, the test's PATH, no config file and
    /// `env`.
    pub fn start(home: &Path, env: &[(&str, String)], command: &str) -> Tmux {
        let sock = home.join("tmux.sock");
        let mut line = String::from("env -i");
        let mut all = vec![
            ("HOME", home.display().to_string()),
            ("PATH", std::env::var("PATH").unwrap()),
            ("TERM", "xterm-256color".into()),
            ("LANG", "C.UTF-8".into()),
            // No config file (a missing file named by OMNISH_CONFIG is an error).
            ("OMNISH_CONFIG", "/dev/null".into()),
            ("HISTFILE", home.join(".history").display().to_string()),
        ];
        all.extend(env.iter().cloned());
        for (k, v) in &all {
            line += &format!(" {k}='{v}'");
        }
        line += " ";
        line += command;
        let ok = Command::new("tmux")
            .arg("-S")
            .arg(&sock)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "100",
                "-y",
                "40",
                &line,
            ])
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux did not start");
        Tmux { sock }
    }

    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.sock)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Presses keys (tmux key names: `C-x`, `Enter`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Types `text` literally.
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "0", "-l", text]);
    }

    /// The pane with 100 lines of history.
    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0", "-S", "-100"])
    }

    /// Waits until `pred` holds for the screen; returns that screen, or panics showing it.
    pub fn wait(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            if start.elapsed() > TIMEOUT {
                panic!(
                    "timed out waiting for {what}; last line {:?}; screen:\n{s}",
                    last_line(&s)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The screen's last line that is not blank.
    pub fn last_line(&self) -> String {
        last_line(&self.screen())
    }
}

/// The last line of `screen` that is not blank, without trailing spaces.
pub fn last_line(screen: &str) -> String {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim_end()
        .to_string()
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.sock)
            .arg("kill-server")
            .status();
    }
}
