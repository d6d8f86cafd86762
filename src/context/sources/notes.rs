//! The notes source: pinned notes ([`crate::store::notes`]) as the document's first section.
//!
//! A context built in a project shows the notes scoped to that project (`omnish note add
//! --here`) and the unscoped ones, unexpired, highest priority first, ties in insertion order;
//! their text and source pass through redaction like everything else.

use std::path::Path;

use anyhow::Result;

use crate::context::model::NoteEntry;
use crate::context::stages::redact;
use crate::store::notes;

/// Which notes a request shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotesScope {
    /// The project the context is built in (git root, else cwd); `None`: only unscoped notes.
    pub project: Option<std::path::PathBuf>,
}

/// The notes stored under `data_root` that a context built in `scope` shows at `now_ms`.
pub(crate) fn entries(
    data_root: &Path,
    scope: &NotesScope,
    now_ms: u64,
    redacting: bool,
) -> Result<Vec<NoteEntry>> {
    let file = notes::load(data_root)?;
    Ok(notes::visible(&file, now_ms, scope.project.as_deref())
        .into_iter()
        .map(|n| {
            let clean = |s: String| {
                if redacting {
                    redact::redact(&s).into_owned()
                } else {
                    s
                }
            };
            NoteEntry {
                key: n.key,
                text: clean(n.text),
                priority: n.priority,
                source: n.source.map(clean),
                project: n.project,
                created_at: n.created_at,
                expires_at: n.expires_at,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::notes::{Note, update};

    #[test]
    fn entries_are_scoped_ordered_and_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let secret = format!("AKIA{}", "Q7XZ3MPLK2JD9W4N");
        update(dir.path(), 0, false, |f| {
            for (key, prio, project, text) in [
                ("low", 0, None, "plain".to_string()),
                ("key", 3, None, format!("the key is {secret}")),
                ("here", 1, Some("/p"), "only in /p".to_string()),
            ] {
                f.notes.push(Note {
                    key: key.into(),
                    text,
                    priority: prio,
                    created_at: 0,
                    expires_at: None,
                    project: project.map(String::from),
                    source: None,
                });
            }
            Ok(())
        })
        .unwrap();
        let scope = NotesScope {
            project: Some("/p".into()),
        };
        let e = entries(dir.path(), &scope, 1, true).unwrap();
        let keys: Vec<_> = e.iter().map(|n| n.key.as_str()).collect();
        assert_eq!(keys, ["key", "here", "low"]);
        assert!(!e[0].text.contains(&secret), "{}", e[0].text);
        assert!(e[0].text.contains("[REDACTED:"), "{}", e[0].text);
        let elsewhere = NotesScope { project: None };
        assert_eq!(entries(dir.path(), &elsewhere, 1, true).unwrap().len(), 2);
        let raw = entries(dir.path(), &scope, 1, false).unwrap();
        assert!(raw[0].text.contains(&secret));
    }
}
