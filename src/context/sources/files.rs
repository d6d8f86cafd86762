//! The files source (`--files`, `--changed`): the project's file tree and what changed in it.
//!
//! The tree is walked from the project root (the git root, else the cwd; the front end says
//! which) with the `ignore` crate: `.gitignore` (also outside a git repository), `.ignore`,
//! `.git/info/exclude`, an `.omnishignore` in any directory (gitignore syntax), and built-in
//! ignores ([`BUILTIN_IGNORES`]). Hidden files are listed unless ignored.
//!
//! The listing ([`FileTree::lines`]) is laid out breadth first within a line limit: the root's
//! entries first, then subdirectories are expanded, shallowest first, while the lines fit;
//! a directory that stays folded is one line, `src/generated/ (412 files)`. A directory with more
//! than `collapse` entries is never expanded, and `depth` caps how deep expansion goes (1: the
//! root's entries only). The budget shrinks the listing by laying it out again within fewer
//! lines.
//!
//! `--changed` lists the files modified at or after a time (when the selected commands
//! started), newest first.
//!
//! The section's types are the model's ([`FilesSection`], [`TreeLine`]); the walked
//! [`FileTree`] goes into it as a [`TreeLayout`], so the budget lays it out again without
//! knowing this module: files → model, never back.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use anyhow::{Context, Result};

use crate::context::model::{Changed, FilesSection, TreeKind, TreeLayout, TreeLine};
use crate::context::stages::redact;

/// Directories never listed (and `.git` also as a file, as in a linked worktree).
pub(crate) const BUILTIN_IGNORES: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    "dist",
    "build",
    ".venv",
    "__pycache__",
    ".next",
    ".cache",
];

/// The per-directory ignore file omnish reads besides `.gitignore` and `.ignore`.
pub(crate) const IGNORE_FILE: &str = ".omnishignore";

/// How the listing is laid out (config keys `files.collapse`, `files.max_lines`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FilesSettings {
    /// Directories with more entries than this stay folded.
    pub collapse: usize,
    /// Most lines of the listing (and of the changed list).
    pub max_lines: usize,
}

impl Default for FilesSettings {
    fn default() -> Self {
        FilesSettings {
            collapse: 40,
            max_lines: 200,
        }
    }
}

/// What to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FilesRequest {
    /// The project root, absolute.
    pub root: PathBuf,
    /// List the tree (`--files`).
    pub tree: bool,
    /// Levels to expand (`--depth`); `None`: as many as fit.
    pub depth: Option<usize>,
    /// List files modified since the selected commands started (`--changed`).
    pub changed: bool,
    pub settings: FilesSettings,
}

/// A walked directory.
#[derive(Debug, Default)]
struct Dir {
    /// The path from the root, `/`-separated ("" for the root).
    path: String,
    depth: usize,
    /// Subdirectories (indices), sorted by name.
    dirs: Vec<usize>,
    /// File names, sorted.
    files: Vec<String>,
    /// Files at all depths below.
    total: usize,
}

/// The project's files, walked once; laid out as lines as often as the budget asks.
#[derive(Debug)]
pub(crate) struct FileTree {
    dirs: Vec<Dir>,
    depth: Option<usize>,
    collapse: usize,
    /// Paths are redacted as they are laid out (only the few shown cost a redaction).
    redacting: bool,
}

impl FileTree {
    pub fn total_files(&self) -> usize {
        self.dirs[0].total
    }

    fn entries(&self, d: usize) -> usize {
        self.dirs[d].dirs.len() + self.dirs[d].files.len()
    }

    fn clean(&self, path: String) -> String {
        if self.redacting {
            redact::redact(&path).into_owned()
        } else {
            path
        }
    }

    fn emit(&self, d: usize, expanded: &[bool], out: &mut Vec<TreeLine>) {
        let dir = &self.dirs[d];
        for &s in &dir.dirs {
            let sub = &self.dirs[s];
            if expanded[s] {
                out.push(TreeLine {
                    depth: sub.depth,
                    path: self.clean(sub.path.clone()),
                    kind: TreeKind::Dir,
                });
                self.emit(s, expanded, out);
            } else {
                out.push(TreeLine {
                    depth: sub.depth,
                    path: self.clean(sub.path.clone()),
                    kind: TreeKind::Collapsed(sub.total),
                });
            }
        }
        let shown = if d == 0 {
            dir.files.len().min(self.collapse)
        } else {
            dir.files.len()
        };
        for f in &dir.files[..shown] {
            out.push(TreeLine {
                depth: dir.depth + 1,
                path: self.clean(join(&dir.path, f)),
                kind: TreeKind::File,
            });
        }
        if shown < dir.files.len() {
            out.push(TreeLine {
                depth: dir.depth + 1,
                path: self.clean(join(&dir.path, "…")),
                kind: TreeKind::MoreFiles(dir.files.len() - shown),
            });
        }
    }
}

impl TreeLayout for FileTree {
    /// The listing in at most `max_lines` lines (see the module docs).
    fn lines(&self, max_lines: usize) -> Vec<TreeLine> {
        // Which directories are expanded, decided breadth first.
        let mut expanded = vec![false; self.dirs.len()];
        let mut used = 0usize;
        let mut queue = std::collections::VecDeque::from([0usize]);
        while let Some(d) = queue.pop_front() {
            let dir = &self.dirs[d];
            let depth_ok = self.depth.is_none_or(|max| dir.depth < max);
            if !depth_ok {
                continue;
            }
            let (cost, fits) = if d == 0 {
                // The root is always listed; files past the collapse limit become one line.
                let shown_files = dir.files.len().min(self.collapse);
                let more = usize::from(dir.files.len() > shown_files);
                let cost = dir.dirs.len() + shown_files + more;
                (cost, true)
            } else {
                let cost = self.entries(d);
                (cost, cost <= self.collapse && used + cost <= max_lines)
            };
            if !fits {
                continue;
            }
            expanded[d] = true;
            used += cost;
            queue.extend(dir.dirs.iter().copied());
        }
        let mut out = Vec::new();
        self.emit(0, &expanded, &mut out);
        if out.len() > max_lines {
            // Only the root's own entries can overflow: fold its files into one line.
            let files = self.dirs[0].files.len();
            out.retain(|l| l.depth != 1 || l.kind != TreeKind::File);
            out.retain(|l| !matches!(l.kind, TreeKind::MoreFiles(_)) || l.depth != 1);
            if files > 0 {
                out.push(TreeLine {
                    depth: 1,
                    path: "…".into(),
                    kind: TreeKind::MoreFiles(files),
                });
            }
            if out.len() > max_lines {
                // Even the root's directories do not fit: keep the first ones.
                let dirs_shown = max_lines.saturating_sub(1);
                let rest: usize = out[dirs_shown.min(out.len())..]
                    .iter()
                    .filter(|l| l.depth == 1)
                    .map(|l| match l.kind {
                        TreeKind::Collapsed(n) | TreeKind::MoreFiles(n) => n,
                        _ => 1,
                    })
                    .sum();
                out.truncate(dirs_shown);
                if max_lines > 0 {
                    out.push(TreeLine {
                        depth: 1,
                        path: "…".into(),
                        kind: TreeKind::MoreFiles(rest),
                    });
                }
            }
        }
        out
    }
}

/// A tree of the given files (`/`-separated paths from the root), as a walk would build it:
/// for tests of the stages that lay it out.
#[cfg(test)]
pub(crate) fn tree_of(paths: &[String], depth: Option<usize>, collapse: usize) -> FileTree {
    let mut dirs = vec![Dir::default()];
    let mut index: HashMap<String, usize> = HashMap::from([(String::new(), 0)]);
    for p in paths {
        let mut parent = 0;
        let parts: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
        let Some((file, path_dirs)) = parts.split_last() else {
            continue;
        };
        for d in path_dirs {
            let path = join(&dirs[parent].path, d);
            parent = match index.get(&path) {
                Some(&i) => i,
                None => {
                    let i = dirs.len();
                    dirs.push(Dir {
                        path: path.clone(),
                        depth: dirs[parent].depth + 1,
                        ..Dir::default()
                    });
                    dirs[parent].dirs.push(i);
                    index.insert(path, i);
                    i
                }
            };
        }
        if !dirs[parent].files.iter().any(|f| f == file) {
            dirs[parent].files.push(file.to_string());
        }
    }
    finish(dirs, depth, collapse, true)
}

/// Sorts and counts the walked directories (children before parents: a child's index is above
/// its parent's).
fn finish(mut dirs: Vec<Dir>, depth: Option<usize>, collapse: usize, redacting: bool) -> FileTree {
    for d in (0..dirs.len()).rev() {
        let mut subs = std::mem::take(&mut dirs[d].dirs);
        subs.sort_by(|a, b| dirs[*a].path.cmp(&dirs[*b].path));
        dirs[d].total = dirs[d].files.len() + subs.iter().map(|&s| dirs[s].total).sum::<usize>();
        dirs[d].dirs = subs;
        dirs[d].files.sort();
    }
    FileTree {
        dirs,
        depth,
        collapse: collapse.max(1),
        redacting,
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Walks `req.root` and builds the section: the tree laid out within
/// `req.settings.max_lines`, and the files changed at or after `changed_since` (ms) when
/// `req.changed`. `clock` turns a time into the text shown.
pub(crate) fn section(
    req: &FilesRequest,
    changed_since: u64,
    redacting: bool,
    clock: &dyn Fn(u64) -> String,
) -> Result<FilesSection> {
    let meta = std::fs::metadata(&req.root)
        .with_context(|| format!("cannot list the files of {}", req.root.display()))?;
    if !meta.is_dir() {
        anyhow::bail!(
            "cannot list the files of {}: not a directory",
            req.root.display()
        );
    }
    let clean = |s: &str| -> String {
        if redacting {
            redact::redact(s).into_owned()
        } else {
            s.to_string()
        }
    };
    let mut dirs = vec![Dir::default()];
    let mut index: HashMap<PathBuf, usize> = HashMap::from([(req.root.clone(), 0)]);
    // (directory, file name, modified at): paths are only made (and redacted) for those kept.
    let mut changed: Vec<(usize, String, u64)> = Vec::new();
    let walker = ignore::WalkBuilder::new(&req.root)
        .hidden(false)
        .parents(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .ignore(true)
        .add_custom_ignore_filename(IGNORE_FILE)
        .follow_links(false)
        .filter_entry(|e| {
            // `.git` is a file in a linked worktree; the others are left out as directories.
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let name = e.file_name();
            e.depth() == 0
                || !(name == ".git" || is_dir && BUILTIN_IGNORES.iter().any(|n| name == *n))
        })
        .build();
    for entry in walker {
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let Some(parent) = entry.path().parent() else {
            continue;
        };
        let Some(&p) = index.get(parent) else {
            continue;
        };
        let name = entry.file_name().to_string_lossy();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if is_dir {
            let i = dirs.len();
            dirs.push(Dir {
                path: join(&dirs[p].path, &name),
                depth: dirs[p].depth + 1,
                ..Dir::default()
            });
            dirs[p].dirs.push(i);
            index.insert(entry.path().to_path_buf(), i);
        } else {
            if req.changed
                && let Ok(m) = entry.metadata()
                && let Ok(t) = m.modified()
            {
                let ms = t
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or(0);
                if ms >= changed_since {
                    changed.push((p, name.to_string(), ms));
                }
            }
            dirs[p].files.push(name.into_owned());
        }
    }
    let tree = finish(dirs, req.depth, req.settings.collapse, redacting);
    let total_files = tree.total_files();
    let changed = req.changed.then(|| {
        let path = |(d, name, _): &(usize, String, u64)| join(&tree.dirs[*d].path, name);
        // Newest first; ties in walk order.
        changed.sort_unstable_by(|a, b| b.2.cmp(&a.2).then_with(|| (a.0, &a.1).cmp(&(b.0, &b.1))));
        let more = changed.len().saturating_sub(req.settings.max_lines);
        changed.truncate(req.settings.max_lines);
        Changed {
            since: changed_since,
            since_clock: clock(changed_since),
            files: changed.iter().map(|c| (clean(&path(c)), c.2)).collect(),
            more,
        }
    });
    let tree = req.tree.then(|| Arc::new(tree) as Arc<dyn TreeLayout>);
    Ok(FilesSection {
        root: clean(&req.root.display().to_string()),
        total_files,
        lines: tree
            .as_ref()
            .map(|t| t.lines(req.settings.max_lines))
            .unwrap_or_default(),
        tree,
        changed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
    }

    fn req(root: &Path) -> FilesRequest {
        FilesRequest {
            root: root.to_path_buf(),
            tree: true,
            depth: None,
            changed: false,
            settings: FilesSettings::default(),
        }
    }

    fn shown(lines: &[TreeLine]) -> Vec<String> {
        lines
            .iter()
            .map(|l| match l.kind {
                TreeKind::File => l.path.clone(),
                TreeKind::Dir => format!("{}/", l.path),
                TreeKind::Collapsed(n) => format!("{}/ ({n})", l.path),
                TreeKind::MoreFiles(n) => format!("{} (+{n})", l.path),
            })
            .collect()
    }

    fn listing(r: &FilesRequest) -> Vec<String> {
        shown(&section(r, 0, true, &|_| String::new()).unwrap().lines)
    }

    #[test]
    fn ignores_builtin_gitignore_and_omnishignore() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "Cargo.toml",
            "src/main.rs",
            "src/lib.rs",
            "target/debug/omnish",
            "sub/.git",
            "sub/build",
            "node_modules/x/index.js",
            ".git/HEAD",
            "secret.log",
            "notes/private.md",
            "notes/public.md",
            ".github/workflows/ci.yml",
            "web/.next/cache.json",
            "py/__pycache__/a.pyc",
            "py/a.py",
        ] {
            touch(root, f);
        }
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("notes/.omnishignore"), "private.md\n").unwrap();
        let got = listing(&req(root));
        assert_eq!(
            got,
            [
                ".github/",
                ".github/workflows/",
                ".github/workflows/ci.yml",
                "notes/",
                "notes/.omnishignore",
                "notes/public.md",
                "py/",
                "py/a.py",
                "src/",
                "src/lib.rs",
                "src/main.rs",
                "sub/",
                "sub/build",
                "web/",
                ".gitignore",
                "Cargo.toml",
            ]
        );
    }

    #[test]
    fn big_directories_collapse_and_depth_limits() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for i in 0..412 {
            touch(root, &format!("src/generated/g{i:03}.rs"));
        }
        touch(root, "src/main.rs");
        touch(root, "src/a/b/c/deep.rs");
        touch(root, "README.md");
        let got = listing(&req(root));
        assert_eq!(
            got,
            [
                "src/",
                "src/a/",
                "src/a/b/",
                "src/a/b/c/",
                "src/a/b/c/deep.rs",
                "src/generated/ (412)",
                "src/main.rs",
                "README.md"
            ]
        );
        let mut r = req(root);
        r.depth = Some(1);
        assert_eq!(listing(&r), ["src/ (414)", "README.md"]);
        r.depth = Some(2);
        assert_eq!(
            listing(&r),
            [
                "src/",
                "src/a/ (1)",
                "src/generated/ (412)",
                "src/main.rs",
                "README.md"
            ]
        );
        let s = section(&req(root), 0, true, &|_| String::new()).unwrap();
        assert_eq!(s.total_files, 415);
    }

    #[test]
    fn layout_fits_the_line_limit_breadth_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in 0..5 {
            for f in 0..10 {
                touch(root, &format!("d{d}/f{f}"));
            }
        }
        for f in 0..60 {
            touch(root, &format!("top{f:02}"));
        }
        let s = section(&req(root), 0, true, &|_| String::new()).unwrap();
        let tree = s.tree.as_ref().unwrap();
        for k in [0usize, 1, 3, 5, 20, 46, 80, 200] {
            let lines = tree.lines(k);
            assert!(lines.len() <= k, "{k}: {}", lines.len());
        }
        // With room for everything but the root's 60 files: 5 dirs + 40 files + "more" line.
        let all = shown(&tree.lines(200));
        assert_eq!(all.len(), 5 + 50 + 40 + 1, "{all:?}");
        assert_eq!(all.last().unwrap(), "… (+20)");
        // Tight: directories stay folded, the root's files fold into one line.
        let tight = shown(&tree.lines(6));
        assert_eq!(
            tight,
            [
                "d0/ (10)",
                "d1/ (10)",
                "d2/ (10)",
                "d3/ (10)",
                "d4/ (10)",
                "… (+60)"
            ]
        );
    }

    #[test]
    fn changed_lists_newer_files_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(root, "old.txt");
        touch(root, "src/new.rs");
        touch(root, "newer.txt");
        let set = |rel: &str, secs: u64| {
            let f = std::fs::File::options()
                .write(true)
                .open(root.join(rel))
                .unwrap();
            f.set_modified(UNIX_EPOCH + std::time::Duration::from_secs(secs))
                .unwrap();
        };
        set("old.txt", 1_000);
        set("src/new.rs", 2_000);
        set("newer.txt", 3_000);
        let mut r = req(root);
        r.tree = false;
        r.changed = true;
        let s = section(&r, 1_500_000, true, &|t| format!("t{t}")).unwrap();
        assert!(s.tree.is_none() && s.lines.is_empty());
        let c = s.changed.unwrap();
        assert_eq!(
            c.files,
            [
                ("newer.txt".to_string(), 3_000_000),
                ("src/new.rs".to_string(), 2_000_000)
            ]
        );
        assert_eq!(c.since_clock, "t1500000");
    }
}
