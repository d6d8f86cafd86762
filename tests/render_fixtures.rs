//! Fixture tests for `omnish::term::render`: every `NAME.raw` (bytes a program wrote to a 120x50
//! pty) must render to `NAME.expected` (what tmux displayed, via `oracle.sh`).
//!
//! The fixtures live in the repository under `tests/fixtures/render/` (required), and the
//! shared originals in `$CARGO_MANIFEST_DIR/../shared/fixtures/render/` are checked too
//! when that directory exists (each must also have an identical in-repo copy).
//!
//! Comparison, as the fixture README says: tabs expanded to 8-column stops, U+FFFD
//! dropped, trailing blanks and trailing empty lines dropped, and the
//! `[full-screen program]` note (which stands in for an alternate-screen program) removed.
//!
//! Every fixture is also rendered through the streaming API (`feed_into`/`finish_into`) with
//! and without a line cap, which must give the lines of `finish` (clipped to the cap).

use std::fs;
use std::path::{Path, PathBuf};

use omnish::term::render::{
    FULL_SCREEN_NOTE, Line, LineSink, Renderer, Screens, clip_whole, render,
};
use unicode_width::UnicodeWidthChar;

const COLS: u16 = 120;
const ROWS: u16 = 50;

fn in_repo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/render")
}

fn shared_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/render")
}

/// Expand tabs to 8-column stops (counting display columns), drop U+FFFD, trim.
fn normalize_line(line: &str) -> String {
    let mut out = String::new();
    let mut col = 0;
    for c in line.chars() {
        match c {
            '\t' => {
                let next = (col / 8 + 1) * 8;
                out.extend(std::iter::repeat_n(' ', next - col));
                col = next;
            }
            '\u{fffd}' => {}
            _ => {
                out.push(c);
                col += c.width().unwrap_or(0);
            }
        }
    }
    out.trim_end().to_string()
}

fn normalize<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = lines
        .into_iter()
        .filter(|l| *l != FULL_SCREEN_NOTE)
        .map(normalize_line)
        .collect();
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

/// The `.raw` files of a fixture directory, sorted.
fn raw_files(dir: &Path) -> Vec<PathBuf> {
    let mut raws: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read fixture dir {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "raw"))
        .collect();
    raws.sort();
    raws
}

fn first_difference(actual: &[String], expected: &[String]) -> String {
    let n = actual.len().max(expected.len());
    for i in 0..n {
        let a = actual.get(i).map(String::as_str);
        let e = expected.get(i).map(String::as_str);
        if a != e {
            return format!("line {}: expected {e:?}, actual {a:?}", i + 1);
        }
    }
    String::new()
}

type Streamed = (String, u64, String);

/// Collects what the streaming API hands over.
#[derive(Default)]
struct Collect(Vec<Streamed>);

impl LineSink for Collect {
    fn line(&mut self, l: Line<'_>) {
        self.0
            .push((l.head.to_string(), l.omitted, l.tail.to_string()));
    }
    fn erase_scrollback(&mut self) {
        self.0.clear();
    }
}

/// `raw` through `feed_into` in `chunk`-byte pieces, then `finish_into`.
fn streamed(raw: &[u8], chunk: usize, cap: Option<usize>) -> Vec<Streamed> {
    let mut r = match cap {
        Some(c) => Renderer::with_line_cap(COLS, ROWS, c),
        None => Renderer::new(COLS, ROWS),
    };
    let mut sink = Collect::default();
    for piece in raw.chunks(chunk) {
        r.feed_into(piece, &mut sink);
    }
    r.finish_into(&mut sink);
    sink.0
}

/// A line of `finish()` as a renderer with `cap` hands it over.
fn clip(line: &str, cap: Option<usize>) -> Streamed {
    match cap {
        Some(cap) => clip_whole(line, cap),
        None => (line.to_string(), 0, String::new()),
    }
}

/// Render every fixture in `dir` (one feed, and fed in small chunks) and compare.
/// Returns the names checked; panics listing every failure.
fn check_dir(dir: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let mut names = Vec::new();
    for raw_path in raw_files(dir) {
        let name = raw_path.file_stem().unwrap().to_string_lossy().to_string();
        let raw = fs::read(&raw_path).unwrap();
        let expected_path = raw_path.with_extension("expected");
        let expected_text = fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
        let expected = normalize(expected_text.lines());

        let whole = render(&raw, COLS, ROWS);
        let actual = normalize(whole.iter().map(String::as_str));
        if actual != expected {
            failures.push(format!(
                "{name}: {}\n  full output:\n{}",
                first_difference(&actual, &expected),
                whole.join("\n")
            ));
        }

        for cap in [None, Some(8192), Some(40)] {
            let expected: Vec<Streamed> = whole.iter().map(|l| clip(l, cap)).collect();
            if streamed(&raw, 7, cap) != expected {
                failures.push(format!(
                    "{name}: streaming with cap {cap:?} differs from finish()"
                ));
            }
        }

        for chunk in [1, 3, 64] {
            let mut r = Renderer::new(COLS, ROWS);
            for piece in raw.chunks(chunk) {
                r.feed(piece);
            }
            if r.finish() != whole {
                failures.push(format!(
                    "{name}: output differs when fed in {chunk}-byte chunks"
                ));
            }
        }
        names.push(name);
    }
    assert!(
        failures.is_empty(),
        "{} fixture failure(s) in {}:\n{}",
        failures.len(),
        dir.display(),
        failures.join("\n\n")
    );
    names
}

#[test]
fn in_repo_fixtures_render_like_tmux() {
    let dir = in_repo_dir();
    assert!(
        dir.is_dir(),
        "fixture copy missing: {} (copy ../shared/fixtures/render here)",
        dir.display()
    );
    let names = check_dir(&dir);
    // The 8 shared fixtures plus at least 4 captured from real programs.
    assert!(
        names.len() >= 12,
        "only {} fixtures found: {names:?}",
        names.len()
    );
}

/// The fixtures of issue 12 (erase scrollback, grapheme clusters) are present, so that
/// `in_repo_fixtures_render_like_tmux` checks them.
#[test]
fn erase_scrollback_and_grapheme_fixtures_are_present() {
    for name in [
        "clear-scrollback",
        "clear-keep-scrollback",
        "printf-erase-scrollback",
        "grapheme-clusters",
    ] {
        let raw = in_repo_dir().join(format!("{name}.raw"));
        assert!(raw.is_file(), "{} missing", raw.display());
    }
    // `clear` after 80 lines: the terminal keeps only what follows it.
    let clear = render(
        &fs::read(in_repo_dir().join("clear-scrollback.raw")).unwrap(),
        COLS,
        ROWS,
    );
    assert_eq!(clear, vec!["after clear".to_string()]);
}

#[test]
fn every_raw_fixture_has_an_expected_file_and_back() {
    let dir = in_repo_dir();
    for entry in fs::read_dir(&dir).expect("fixture dir") {
        let p = entry.unwrap().path();
        match p.extension().and_then(|x| x.to_str()) {
            Some("raw") => assert!(p.with_extension("expected").is_file(), "{}", p.display()),
            Some("expected") => assert!(p.with_extension("raw").is_file(), "{}", p.display()),
            _ => {}
        }
    }
}

#[test]
fn shared_fixtures_render_like_tmux_and_are_copied_into_the_repo() {
    let shared = shared_dir();
    if !shared.is_dir() {
        // Outside the workspace layout the in-repo copy is the source of truth.
        return;
    }
    let names = check_dir(&shared);
    assert!(!names.is_empty(), "no fixtures in {}", shared.display());
    for name in names {
        for ext in ["raw", "expected"] {
            let file = format!("{name}.{ext}");
            let original = fs::read(shared.join(&file)).unwrap();
            let copy = fs::read(in_repo_dir().join(&file))
                .unwrap_or_else(|e| panic!("{file} is not copied into tests/fixtures/render: {e}"));
            assert_eq!(
                original, copy,
                "{file}: in-repo copy differs from shared fixture"
            );
        }
    }
}

#[test]
fn normalization_expands_tabs_and_drops_replacement_chars() {
    assert_eq!(normalize_line("a\tb"), "a       b");
    assert_eq!(normalize_line("名\tx"), "名      x");
    assert_eq!(normalize_line("x\u{fffd}y  "), "xy");
    assert_eq!(
        normalize(["a", FULL_SCREEN_NOTE, "b", "", ""]),
        vec!["a".to_string(), "b".to_string()]
    );
}

/// `NAME.raw` rendered with full-screen programs' last screens kept (`mode`).
fn with_screens(name: &str, mode: Screens, program: &str) -> Vec<String> {
    let raw = fs::read(in_repo_dir().join(format!("{name}.raw"))).unwrap();
    let mut r = Renderer::new(COLS, ROWS).with_screens(mode, Some(program.to_string()));
    r.feed(&raw);
    r.finish()
}

/// The real vim and ncurses captures keep their last screen between the lines around them.
#[test]
fn full_screen_fixtures_keep_their_last_screen() {
    let vim = with_screens("vim", Screens::Full, "vim");
    let header = "[full-screen program: vim; its last screen:]";
    let at = vim.iter().position(|l| l == header).expect("a last screen");
    assert_eq!(vim[..at], ["before vim"]);
    assert_eq!(vim[at + 1], "hello from vim");
    assert_eq!(vim[at + 2], "~");
    let end = vim.iter().position(|l| l == "[end of the screen]").unwrap();
    // 50 rows: the text, 48 `~` rows and the command line (`q!` shows nothing there).
    assert!(end - at > 49, "{vim:#?}");
    assert_eq!(vim[end + 1..], ["after vim"]);

    let brief = with_screens("vim", Screens::Brief, "vim");
    assert_eq!(
        brief[1],
        "[full-screen program: vim; its last screen, first and last rows:]"
    );
    assert_eq!(brief[2..5], ["hello from vim", "~", "~"]);
    assert!(brief[5].ends_with(" more rows]"), "{brief:#?}");
    assert_eq!(brief.last().unwrap(), "after vim");
    assert!(brief.len() <= 13, "{brief:#?}");

    let curses = with_screens("curses-alt-screen", Screens::Full, "python3");
    assert!(
        curses
            .iter()
            .any(|l| l == "[full-screen program: python3; its last screen:]"),
        "{curses:#?}"
    );
}

/// `dialog` draws its box with the DEC special graphics set; the renderer shows box drawing
/// characters (the `.expected` is tmux's screen with the cells tmux marks as line drawing
/// translated, `oracle-acs.sh`).
#[test]
fn dialog_box_is_drawn_with_box_characters() {
    let raw = fs::read(in_repo_dir().join("dialog-box.raw")).unwrap();
    let lines = render(&raw, COLS, ROWS);
    let top = lines
        .iter()
        .find(|l| l.contains("omnish"))
        .expect("the box");
    assert_eq!(top.trim(), "┌──────────omnish────────────┐", "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l.trim() == "│ line drawing               │")
    );
    assert!(
        lines
            .iter()
            .any(|l| l.trim().starts_with("└───") && l.trim().ends_with('┘'))
    );
    assert!(!lines.iter().any(|l| l.contains("lqq")), "{lines:#?}");
}
