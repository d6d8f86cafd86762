//! Which recorded terminal a call reads when it names none, and why.
//!
//! 1. The agent's own terminal: the server runs inside a recorded shell (`OMNISH_SESSION_ID`),
//!    because the agent does.
//! 2. Else the most recent *live* session (its recorder still runs) whose terminal was last in
//!    the server's project: the git work tree holding the server's working directory, else that
//!    directory. An agent started beside a terminal in the same project sees that terminal.
//! 3. Else the most recent session, saying that no live one was found in the project.

use anyhow::{Result, bail};
use std::path::Path;

use crate::context::stages::select;
use crate::mcp::Config;
use crate::store::{self, OpenSession};

/// The session chosen and the reason, in words for the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chosen {
    pub id: String,
    pub reason: String,
}

/// Where the terminal of `s` was last seen: the running command's directory, else the newest
/// record's, else where the session started. A directory longer than
/// [`store::COMMAND_LINE_CAP`] chars (a hostile record) is cut like a long command line.
pub(crate) fn last_cwd(s: &OpenSession) -> String {
    let cwd = last_cwd_whole(s);
    match store::cut_middle(&cwd, store::COMMAND_LINE_CAP) {
        Some(cut) => cut.joined(),
        None => cwd,
    }
}

fn last_cwd_whole(s: &OpenSession) -> String {
    if let Some(run) = &s.meta.running_command {
        if !run.cwd.is_empty() {
            return run.cwd.clone();
        }
    }
    let newest = store::RecordsBackwards::open(&s.dir.join(store::COMMANDS))
        .ok()
        .and_then(|mut r| {
            std::iter::from_fn(|| r.next_record())
                .take(16)
                .find(|rec| !rec.cwd.is_empty())
        });
    match newest {
        Some(r) => r.cwd,
        None => s.meta.cwd.clone(),
    }
}

/// The session a call without a `session` argument reads (see the module docs).
pub(crate) fn choose(config: &Config) -> Result<Chosen> {
    let root = config.data_root();
    let dirs = store::session_dirs(root)?;
    if dirs.is_empty() {
        bail!(
            "no recorded sessions in {}; the user starts one with `omnish wrap`",
            store::sessions_dir(root).display()
        );
    }
    if let Some(id) = config.env_session() {
        if dirs.iter().any(|d| store::dir_id(d) == id) {
            return Ok(Chosen {
                id: id.to_string(),
                reason: "the agent runs inside this recorded terminal (OMNISH_SESSION_ID)".into(),
            });
        }
    }
    let project = select::git_root_or(config.cwd());
    let mut newest: Option<OpenSession> = None;
    for dir in dirs.iter().rev() {
        let Ok(Some(s)) = store::open_session(dir) else {
            continue;
        };
        // A session attached to a terminal's (`omnish exec`, agents' hooks) is read with it.
        if s.meta.attached_to.is_some() {
            continue;
        }
        if s.live() && Path::new(&last_cwd(&s)).starts_with(&project) {
            return Ok(Chosen {
                id: s.id(),
                reason: format!(
                    "the most recent live recorded terminal in this project ({})",
                    project.display()
                ),
            });
        }
        if newest.is_none() {
            newest = Some(s);
        }
    }
    match newest {
        Some(s) => {
            let state = if s.live() { "live" } else { "ended" };
            Ok(Chosen {
                id: s.id(),
                reason: format!(
                    "no live recorded terminal in this project ({}); the most recent session \
                     ({state}) instead",
                    project.display()
                ),
            })
        }
        None => bail!(
            "no readable session in {}",
            store::sessions_dir(root).display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{CommandRecord, SessionMeta, SessionState};

    fn make(root: &Path, id: &str, cwd: &str, live: bool) {
        let dir = store::sessions_dir(root).join(id);
        store::create_private_dir(&dir).unwrap();
        let meta = SessionMeta {
            state: if live {
                SessionState::Running
            } else {
                SessionState::Exited
            },
            // A live session's recorder: this test process, which is alive.
            recorder_pid: if live { std::process::id() } else { 0 },
            cwd: "/start".into(),
            ..store::testing::session_meta(id)
        };
        store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
        store::append_command(
            &dir,
            &CommandRecord {
                cwd: cwd.into(),
                ..store::testing::command_record(id, 1)
            },
        )
        .unwrap();
    }

    const A: &str = "20261122T100000.000Z-aa";
    const B: &str = "20261122T110000.000Z-bb";
    const C: &str = "20261122T120000.000Z-cc";

    fn config(root: &Path, env: Option<&str>, cwd: &str) -> Config {
        let mut c = Config::at(root.to_path_buf(), cwd.into());
        c.facts.current_session = env.map(str::to_string);
        c
    }

    #[test]
    fn own_terminal_then_live_in_project_then_most_recent() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        make(root, A, "/proj/sub", true);
        make(root, B, "/other", true);
        make(root, C, "/proj", false);
        // OMNISH_SESSION_ID wins.
        let c = choose(&config(root, Some(B), "/proj")).unwrap();
        assert_eq!(c.id, B);
        assert!(c.reason.contains("OMNISH_SESSION_ID"), "{}", c.reason);
        // An id that is not a session falls through to the live one in the project (C is
        // newer and in the project, but ended).
        let c = choose(&config(root, Some("gone"), "/proj")).unwrap();
        assert_eq!(c.id, A);
        assert!(
            c.reason.contains("live") && c.reason.contains("/proj"),
            "{}",
            c.reason
        );
        // No live one in the project: the most recent.
        let c = choose(&config(root, None, "/elsewhere")).unwrap();
        assert_eq!(c.id, C);
        assert!(c.reason.starts_with("no live"), "{}", c.reason);
    }

    #[test]
    fn an_empty_store_says_how_to_start() {
        let tmp = tempfile::tempdir().unwrap();
        let err = choose(&config(tmp.path(), None, "/")).unwrap_err();
        assert!(err.to_string().contains("omnish wrap"), "{err}");
    }
}
