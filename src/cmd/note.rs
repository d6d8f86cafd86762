//! `omnish note add|rm|list|clear`: pinned notes that every context starts with. The notes live
//! in the data directory ([`crate::store::notes`]); `omnish context` prints them first.

use std::io::Write;

use anyhow::Result;

use crate::cli::{NoteAction, NoteArgs};
use crate::cmd::{RunWith, Setup};
use crate::context::request;
use crate::error::{Error, Field};
use crate::store::{self, notes};

impl RunWith for NoteArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        let root = setup.facts.data_root.clone();
        let now = store::now_ms();
        let mut out = std::io::stdout().lock();
        match self.action {
            NoteAction::Add {
                text,
                key,
                priority,
                ttl,
                here,
                source,
            } => {
                if text.trim().is_empty() {
                    return Err(Error::usage("the note is empty; give its text").into());
                }
                if let Some(k) = &key
                    && (k.trim().is_empty() || k.chars().any(char::is_control))
                {
                    return Err(Error::usage(
                        "--key: a key needs at least one visible character and no control characters",
                    )
                    .into());
                }
                let expires_at = match &ttl {
                    Some(d) => {
                        let ms = request::duration(Field::Duration, d)
                            .map_err(|e| e.named(|_| Some("--ttl".into())))?;
                        if ms == 0 {
                            return Err(Error::usage(
                                "--ttl: a note that expires at once is never shown; give a longer duration",
                            )
                            .into());
                        }
                        Some(now.saturating_add(ms))
                    }
                    None => None,
                };
                let project = if here {
                    Some(project_dir(setup)?)
                } else {
                    None
                };
                let (key, replaced) = notes::update(&root, now, false, |f| {
                    let note = notes::Note {
                        key: String::new(),
                        text,
                        priority,
                        created_at: now,
                        expires_at,
                        project,
                        source,
                    };
                    let key = match key {
                        Some(k) => k,
                        None => f.fresh_key(),
                    };
                    let note = notes::Note {
                        key: key.clone(),
                        ..note
                    };
                    // Replaced in place: it keeps its position among equal priorities.
                    match f.notes.iter_mut().find(|n| n.key == key) {
                        Some(old) => {
                            *old = note;
                            Ok((key, true))
                        }
                        None => {
                            f.notes.push(note);
                            Ok((key, false))
                        }
                    }
                })?;
                let what = if replaced { "replaced" } else { "pinned" };
                writeln!(out, "{what} note {key}")?;
                Ok(0)
            }
            NoteAction::Rm { key } => {
                let removed = notes::update(&root, now, false, |f| {
                    let before = f.notes.len();
                    f.notes.retain(|n| n.key != key);
                    Ok(before != f.notes.len())
                })?;
                if !removed {
                    eprintln!("omnish: no note has key {key}; `omnish note list` shows them");
                    return Ok(1);
                }
                writeln!(out, "removed note {key}")?;
                Ok(0)
            }
            NoteAction::List { json } => {
                let file = notes::load(&root)?;
                if notes::any_expired(&file, now) {
                    // Clean up what has expired; a failure to write does not stop the listing.
                    let _ = notes::update(&root, now, false, |_| Ok(()));
                }
                let mut shown: Vec<&notes::Note> =
                    file.notes.iter().filter(|n| !n.expired(now)).collect();
                shown.sort_by_key(|n| std::cmp::Reverse(n.priority));
                if json {
                    crate::term::visible::json_writer(&mut out, &shown, true)?;
                    writeln!(out)?;
                    return Ok(0);
                }
                if shown.is_empty() {
                    eprintln!("omnish: no notes; add one with `omnish note add TEXT`");
                    return Ok(0);
                }
                for n in shown {
                    let mut about = vec![format!("priority {}", n.priority)];
                    if let Some(t) = n.expires_at {
                        about.push(format!("expires in {}", remaining(t.saturating_sub(now))));
                    }
                    // A note shows control characters visibly, as `context` shows it.
                    use crate::term::visible;
                    if let Some(p) = &n.project {
                        about.push(format!("only in {}", visible::line(p)));
                    }
                    if let Some(s) = &n.source {
                        about.push(format!("source {}", visible::line(s)));
                    }
                    writeln!(out, "{}  [{}]", visible::line(&n.key), about.join(", "))?;
                    for line in n.text.lines() {
                        writeln!(out, "    {}", visible::text(line))?;
                    }
                }
                Ok(0)
            }
            NoteAction::Clear { here } => {
                let project = if here {
                    Some(project_dir(setup)?)
                } else {
                    None
                };
                // Clearing everything also starts over from a notes file that cannot be read.
                let removed = notes::update(&root, now, project.is_none(), |f| {
                    let before = f.notes.len();
                    match &project {
                        Some(p) => f.notes.retain(|n| n.project.as_ref() != Some(p)),
                        None => f.notes.clear(),
                    }
                    Ok(before - f.notes.len())
                })?;
                let s = if removed == 1 { "" } else { "s" };
                writeln!(out, "removed {removed} note{s}")?;
                Ok(0)
            }
        }
    }
}

/// The project a `--here` note belongs to: the git root above the current directory, else the
/// current directory (as `omnish context --here` finds it).
fn project_dir(setup: &Setup) -> Result<String> {
    let project = setup
        .facts
        .project()
        .ok_or_else(|| Error::usage("--here: the current directory cannot be read"))?;
    Ok(project.display().to_string())
}

/// `2h 5m`, `40s`: a remaining time, to the largest two units.
fn remaining(ms: u64) -> String {
    let s = ms.div_ceil(1000);
    let (d, h, m, sec) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{sec}s"),
        (0, 0, _) => format!("{m}m {sec}s"),
        (0, _, _) => format!("{h}h {m}m"),
        _ => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::remaining;

    #[test]
    fn remaining_times() {
        assert_eq!(remaining(0), "0s");
        assert_eq!(remaining(40_000), "40s");
        assert_eq!(remaining(125_000), "2m 5s");
        assert_eq!(remaining(7_500_000), "2h 5m");
        assert_eq!(remaining(3 * 86_400_000 + 3_600_000), "3d 1h");
    }
}
