//! The words omnish uses for how a command ended and what state a session is in: one place
//! that names them, used by every format (text, markdown, json) and every front end
//! (`context`, `ask`, `fix`, `search`, `sessions`, `status`, the MCP server), so that no two
//! of them say one thing two ways.
//!
//! A command ([`status`]): `exit 0`, `exit 2`, `exit 127: command not found` (the number
//! explained where it says little, [`explain_status`]), `exit 1: the shell ended with this
//! status` for the `exit` that ended the shell, `still running`, `exit status unknown` (the
//! recording was cut off), `recording stopped here: output incomplete, exit status unknown`;
//! a command kept out of history is shown as [`PRIVATE_COMMAND`], one run while recording was
//! paused as [`PAUSED_COMMAND`].
//!
//! A session ([`session_state`]): `running` while its recorder runs, `exited` when the shell
//! ended, `interrupted` when omnish was told to stop or its recorder died; `recording stopped:
//! WHY` when it stopped early ([`recording_stopped`]). Its recorder ([`recorder`]): `running`
//! or `not running`; its hooks ([`hooks`]): `loaded` or `not loaded`.
//!
//! Where a command ran ([`place`]): `alice@web1`, as a prompt says it, shown beside a command
//! that ran as another user or on another host than its session's.

use crate::store::SessionState;

/// Shown in place of the line of a command kept out of history on purpose: the line was never
/// recorded.
pub(crate) const PRIVATE_COMMAND: &str = "[private command]";
/// Shown in place of the line of a command that ran while recording was paused (`omnish
/// pause`): nothing of it was recorded.
pub(crate) const PAUSED_COMMAND: &str = "[command run while paused]";
/// Shown in place of the line of a command destroyed by `omnish forget`.
pub(crate) const FORGOTTEN_COMMAND: &str = "[forgotten command]";
/// A command that has not ended yet.
pub(crate) const STILL_RUNNING: &str = "still running";
/// A command whose end was never recorded (the recorder was cut off).
pub(crate) const STATUS_UNKNOWN: &str = "exit status unknown";
/// A command that was running when recording stopped (a full disk, a write error).
pub(crate) const RECORDING_STOPPED: &str =
    "recording stopped here: output incomplete, exit status unknown";
/// Said of the `exit` that ended the shell, whose status is the shell's.
pub(crate) const SHELL_ENDED: &str = "the shell ended with this status";

/// A session whose recording stopped early (a full disk, a write error), and why: `recording
/// stopped: No space left on device`. Its later commands were not recorded.
pub(crate) fn recording_stopped(why: &str) -> String {
    format!("recording stopped: {why}")
}

/// Where a command ran, as a prompt says it: `alice@web1`; `web1` when the user is unknown.
/// Both are shown visibly ([`crate::term::visible::line`]): a recorded name cannot control the
/// terminal.
pub(crate) fn place(user: Option<&str>, host: &str) -> String {
    let host = crate::term::visible::line(host);
    match user {
        Some(u) => format!("{}@{host}", crate::term::visible::line(u)),
        None => host.into_owned(),
    }
}

/// How a command ended, as far as the store knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ending {
    pub running: bool,
    /// Recording stopped while it ran.
    pub recording_stopped: bool,
    /// `None`: unknown (cut off, still running).
    pub exit_code: Option<i32>,
    /// The command that ended the shell.
    pub ended_shell: bool,
}

/// What an exit status means when the number alone says little: 126, 127 and deaths by signal
/// (128 + N, named by the platform's signal numbers). A stopping signal (Ctrl-Z sends SIGTSTP)
/// says "stopped", not "killed". Ordinary failures (1, 2, ...) give `None`.
pub(crate) fn explain_status(code: i32) -> Option<String> {
    use nix::sys::signal::Signal;
    match code {
        126 => Some("not executable".into()),
        127 => Some("command not found".into()),
        130 => Some("interrupted (Ctrl-C)".into()),
        137 => Some("killed (SIGKILL, often out of memory)".into()),
        143 => Some("terminated (SIGTERM)".into()),
        129..=192 => {
            let n = code - 128;
            Some(match Signal::try_from(n) {
                Ok(
                    sig @ (Signal::SIGTSTP | Signal::SIGSTOP | Signal::SIGTTIN | Signal::SIGTTOU),
                ) => format!("stopped ({})", sig.as_str()),
                Ok(sig) => format!("killed by signal {n} ({})", sig.as_str()),
                Err(_) => format!("killed by signal {n}"),
            })
        }
        _ => None,
    }
}

/// What an exit status means ([`explain_status`]); for the command that ended the shell, whose
/// status is the shell's (after a failure, that failure's), it says so.
pub(crate) fn explanation(code: i32, ended_shell: bool) -> Option<String> {
    let why = explain_status(code);
    if !ended_shell || code == 0 {
        return why;
    }
    Some(match why {
        Some(why) => format!("{why}; {SHELL_ENDED}"),
        None => SHELL_ENDED.to_string(),
    })
}

/// How the command ended, in words: `exit 0`, `exit 127: command not found`, `still running`,
/// `exit status unknown`, ...
pub(crate) fn status(e: Ending) -> String {
    note(e).unwrap_or_else(|| "exit 0".to_string())
}

/// [`status`], but `None` for success (where a document says nothing of it).
pub(crate) fn note(e: Ending) -> Option<String> {
    if e.running {
        return Some(STILL_RUNNING.into());
    }
    if e.recording_stopped {
        return Some(RECORDING_STOPPED.into());
    }
    match e.exit_code {
        Some(0) => None,
        Some(code) => Some(match explanation(code, e.ended_shell) {
            Some(why) => format!("exit {code}: {why}"),
            None => format!("exit {code}"),
        }),
        None => Some(STATUS_UNKNOWN.into()),
    }
}

/// A session's state in words: `running` while its recorder runs (`live`), else `exited` or
/// `interrupted` (omnish was told to stop, or its recorder is gone while `meta.json` still
/// says running).
pub(crate) fn session_state(state: SessionState, live: bool) -> &'static str {
    match state {
        _ if live => "running",
        SessionState::Exited => "exited",
        SessionState::Running | SessionState::Interrupted => "interrupted",
    }
}

/// A session's recorder process in words.
pub(crate) fn recorder(alive: bool) -> &'static str {
    if alive { "running" } else { "not running" }
}

/// A session's shell hooks in words.
pub(crate) fn hooks(loaded: bool) -> &'static str {
    if loaded {
        "loaded"
    } else {
        "not loaded (the whole run is one command)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(exit_code: Option<i32>) -> Ending {
        Ending {
            running: false,
            recording_stopped: false,
            exit_code,
            ended_shell: false,
        }
    }

    #[test]
    fn every_ending_has_one_way_to_say_it() {
        assert_eq!(status(ended(Some(0))), "exit 0");
        assert_eq!(note(ended(Some(0))), None);
        assert_eq!(status(ended(Some(2))), "exit 2");
        assert_eq!(status(ended(Some(127))), "exit 127: command not found");
        assert_eq!(status(ended(None)), "exit status unknown");
        let running = Ending {
            running: true,
            ..ended(None)
        };
        assert_eq!(status(running), "still running");
        let stopped = Ending {
            recording_stopped: true,
            ..ended(None)
        };
        assert_eq!(status(stopped), RECORDING_STOPPED);
        let exit = Ending {
            ended_shell: true,
            ..ended(Some(1))
        };
        assert_eq!(status(exit), "exit 1: the shell ended with this status");
        let exit = Ending {
            ended_shell: true,
            ..ended(Some(130))
        };
        assert_eq!(
            status(exit),
            "exit 130: interrupted (Ctrl-C); the shell ended with this status"
        );
    }

    #[test]
    fn a_session_whose_recorder_is_gone_is_interrupted() {
        assert_eq!(session_state(SessionState::Running, true), "running");
        assert_eq!(session_state(SessionState::Running, false), "interrupted");
        assert_eq!(session_state(SessionState::Exited, false), "exited");
        assert_eq!(
            session_state(SessionState::Interrupted, false),
            "interrupted"
        );
    }
}
