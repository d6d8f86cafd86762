//! `omnish pause [DURATION]`, `omnish resume`: stop keeping what the recorded terminal shows,
//! and start again. Run inside the recorded terminal, they say so to the recorder on the
//! terminal itself, with the registration key of `omnish nest` (a marker the recorder takes
//! out: see [`crate::record::marker`]); from the next command on, while paused, each command is
//! kept as a private one (times and exit status only, marked paused) and nothing typed or
//! printed reaches the disk. `omnish status` says when the pause ends.
//!
//! `--toggle` (what the pause key runs) resumes a paused session and pauses one that is not.

use crate::cli::{PauseArgs, ResumeArgs};
use crate::cmd::{RunWith, Setup};
use crate::context::request;
use crate::error::{Error, Field};
use crate::store;
use anyhow::Result;
use std::io::Write;

impl RunWith for PauseArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        let seconds = match &self.duration {
            Some(d) => {
                let ms = request::duration(Field::Duration, d)
                    .map_err(|e| e.named(|_| Some("DURATION".into())))?;
                if ms < 1000 {
                    return Err(Error::usage(
                        "DURATION: a pause shorter than a second keeps nothing out; give a longer one (90s, 15m, 2h)",
                    )
                    .into());
                }
                Some(ms / 1000)
            }
            None => None,
        };
        if self.toggle && paused_now(setup) {
            return say(Said::Resume);
        }
        say(Said::Pause(seconds))
    }
}

impl RunWith for ResumeArgs {
    fn run(self, _setup: &Setup) -> Result<i32> {
        say(Said::Resume)
    }
}

enum Said {
    Pause(Option<u64>),
    Resume,
}

/// Whether the session this runs in is paused now, as its meta.json says.
fn paused_now(setup: &Setup) -> bool {
    let Some(id) = &setup.facts.current_session else {
        return false;
    };
    let dir = store::sessions_dir(&setup.facts.data_root).join(id);
    store::read_meta(&dir)
        .ok()
        .and_then(|m| m.paused)
        .is_some_and(|p| p.holds_at(store::now_ms()))
}

/// Says `what` to the recorder of this terminal, and to the user what it means.
fn say(what: Said) -> Result<i32> {
    let Some(key) = crate::cmd::nest::registration_key() else {
        return Err(not_recorded("not in a shell recorded by omnish wrap"));
    };
    if !crate::cmd::wrap::on_recorded_terminal() {
        return Err(not_recorded(
            "this terminal is not the one omnish records (a tmux pane?)",
        ));
    }
    let mut tty = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/tty")
        .map_err(|e| not_recorded(&format!("cannot open the terminal: {e}")))?;
    let (marker, line) = match what {
        Said::Pause(Some(s)) => (
            format!("Pause={s}"),
            format!(
                "omnish: recording paused for {} (until {}); `omnish resume` resumes it",
                humantime::format_duration(std::time::Duration::from_secs(s)),
                clock(s)
            ),
        ),
        Said::Pause(None) => (
            "Pause=0".to_string(),
            "omnish: recording paused until `omnish resume` (or the session's end)".to_string(),
        ),
        Said::Resume => (
            "Resume=1".to_string(),
            "omnish: recording resumed".to_string(),
        ),
    };
    tty.write_all(format!("\x1b]633;{key};P;{marker}\x07").as_bytes())?;
    tty.flush()?;
    eprintln!("{line}");
    Ok(0)
}

fn not_recorded(why: &str) -> anyhow::Error {
    Error::Status {
        code: 1,
        message: format!("{why}; there is no recording to pause or resume here"),
    }
    .into()
}

/// The local time `secs` from now, as `HH:MM`.
fn clock(secs: u64) -> String {
    let now = std::time::SystemTime::now() + std::time::Duration::from_secs(secs);
    let offset = crate::cmd::setup::utc_offset_secs();
    let t = now
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64 + offset)
        .unwrap_or(0);
    let day = t.rem_euclid(86_400);
    format!("{:02}:{:02}", day / 3600, day % 3600 / 60)
}
