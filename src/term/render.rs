//! Render stage: raw terminal output bytes → the text a terminal displayed.
//!
//! This module is the grid. The rows it lets go are assembled into lines (wrapped rows joined,
//! empty lines held back, the line cap) by the `lines` module, which owns [`Line`] and
//! [`LineSink`] (re-exported here, where the streaming API's callers name them).
//!
//! # Model
//!
//! A [`Renderer`] is a small terminal emulator without colours. Bytes are parsed with the
//! [`vte`] crate (`Parser` + `Perform`) and applied to a **screen-sized grid** of character
//! cells (`rows × cols`) with a cursor. Everything a program does to the screen — carriage
//! returns, backspaces, erases, cursor movement, insert/delete, scroll regions, deferred
//! auto-wrap — only changes that grid, so redraws (spinners, `\r` progress bars, cursor-up
//! multi-line progress as drawn by tqdm/cargo/docker/npm) resolve to their final frame.
//!
//! Finished text leaves the grid through a **scrollback sink** (a [`LineSink`]), exactly
//! where a terminal would move it into its history:
//!
//! * a line scrolled off the top of the screen (or of a scroll region) goes to the sink;
//! * a clear screen (`CSI 2J`, `CSI J` from the home position, `ESC c`) first sends the
//!   screen's lines (up to the last non-blank one) to the sink, so nothing is lost unless
//!   `CSI 3J` follows (below);
//! * `CSI 3J` (ED 3, erase scrollback; ncurses `clear` sends it after `CSI 2J`) follows the
//!   terminal: every line emitted so far has left its history, so the sink is told
//!   ([`LineSink::erase_scrollback`]; the collecting sink of `finish` drops what it
//!   collected), and the held-back empty lines and the scrolled-off part of a wrapped line
//!   being assembled are dropped too. The screen is untouched. While a full-screen program
//!   runs, ED 3 is ignored: the main-screen lines emitted on entering the alternate screen
//!   are still on the terminal's saved screen;
//! * entering the alternate screen (`CSI ?1049h`, `?47h`, `?1047h`) sends the lines above
//!   the cursor to the sink; leaving it restores the main screen (and for 1049 the cursor).
//!   What the program drew there leaves, as the renderer is told ([`Screens`]): one line
//!   `[full-screen program]` (the default), or its **last screen**: a header naming the
//!   program, the rows of the screen it showed when it left (all of them, or the first and
//!   last [`BRIEF_ROWS`]) and an end line. A program that clears its screen before leaving
//!   leaves the screen it showed before that clear (the two grids are swapped, not copied).
//!   At most [`MAX_SCREENS`] visits per renderer keep their screen; later ones leave their
//!   header line;
//! * [`Renderer::finish`] / [`Renderer::finish_into`] send the remaining screen lines.
//!
//! Rows that were auto-wrapped are joined with their continuation into one output line (as
//! `tmux capture-pane -J` does). Trailing blanks of every line are trimmed, and trailing
//! empty lines of the whole output are dropped: empty lines are held back as a *count* and
//! handed over only when a non-empty line follows them.
//!
//! # API
//!
//! * [`render`] and [`Renderer::new`] + [`Renderer::feed`] + [`Renderer::finish`] collect every
//!   line into a `Vec<String>` (no cap; memory grows with the output).
//! * [`Renderer::feed_into`] + [`Renderer::finish_into`] stream: each [`Line`] goes to the
//!   caller's [`LineSink`] as soon as it is final, and nothing is collected. With
//!   [`Renderer::with_line_cap`]`(cols, rows, cap)` a line longer than `cap` chars keeps only
//!   its first `cap/2` and last `cap/2` chars (`Line { head, omitted, tail }`); within the
//!   cap a line is byte-for-byte what `finish` returns. The line being assembled keeps its
//!   head, a rolling tail (at most about twice `cap/2` chars, trimmed in amortized O(1) per
//!   char) and a char count; its trailing blanks wait in a structure of the same bound until
//!   something non-blank follows them. Working state is therefore one grid (three while a
//!   full-screen program runs) plus O(cap), whatever the input size: a 100 MB line without a
//!   newline costs no more than a short one. (The `vte` parser buffers an unterminated OSC
//!   string; that is outside this bound.) `feed`/`finish` on a capped renderer collect a
//!   clipped line as `head[N chars omitted]tail`.
//!
//! # Cells
//!
//! Cells hold one `char`. Wide characters (CJK, emoji) take a lead cell plus a continuation
//! cell; other code points of a grapheme cluster are attached to the cell of its first one
//! (rule below). A tab that advances over blank cells is remembered and rendered as a literal
//! `\t` when that is equivalent to the cells it covered under 8-column tab stops; otherwise
//! it becomes spaces.
//! Colours/SGR, OSC (titles, hyperlinks — the link text stays), DCS, APC, PM and SOS
//! strings are dropped. Invalid UTF-8 becomes U+FFFD (as `vte` reports it).
//!
//! Edge semantics follow tmux (the reference the fixtures were captured with) — e.g. a
//! line feed keeps a row's wrapped flag, IL/DL keep the column, backspace at column 0
//! returns onto a wrapped previous row, REP repeats only a character printed just before
//! it — except where tmux departs from xterm/VT behaviour, where xterm is followed: IL/DL
//! outside the scroll region are ignored, DECSTBM homes to the region top in origin mode,
//! and HPR/VPR/CHT are implemented. The DEC special graphics set is translated to the
//! characters it draws (`ESC ( 0` / `ESC ) 0` designate it as G0 / G1, SO and SI switch
//! between them, `lqqk` prints `┌──┐`: the VT100 table), where tmux's `capture-pane` gives the
//! ASCII letters; DECALN (`ESC # 8`) fills the screen with `E`.
//!
//! # Grapheme clusters
//!
//! A cluster must occupy the columns the terminal gave it, or text after it and absolute
//! cursor moves land elsewhere. Terminals disagree on emoji widths, so the rule is the
//! reference terminal's (tmux 3.3a, the fixtures' oracle), with clusters found by the
//! `unicode-segmentation` crate (UAX #29 extended grapheme clusters) and code point widths
//! by `unicode-width` (`UnicodeWidthChar`, i.e. `wcwidth`):
//!
//! * a zero-width code point (combining mark, variation selector, ZWJ, keycap U+20E3, Hangul
//!   V/T jamo) joins the cell before the cursor, adding no width;
//! * a code point right after a ZWJ that continues the cluster (an emoji ZWJ sequence: no
//!   boundary per UAX #29 rule GB11) joins it too, adding no width: 👩‍💻 and 👨‍👩‍👧 take
//!   the two columns of their first pictograph, 🏳️‍🌈 and ❤‍🔥 one;
//! * every other code point takes its own `unicode-width` columns, even inside a cluster:
//!   a flag is two regional indicators of one column each (2 in all), 👍🏽 is 2 + 2 columns.
//!
//! Where terminals differ this follows tmux, not the emoji-aware terminals (kitty, WezTerm,
//! foot, Ghostty, and `unicode-width`'s own `str` width): VS16 does not widen a narrow base
//! (❤️ and the keycap 1️⃣ are one column, not two), VS15 does not narrow a wide one (⌚︎ stays
//! two), and an emoji modifier adds its own two columns. A ZWJ that does not continue an
//! emoji sequence (`a` ZWJ `b`) joins nothing, where tmux 3.3a sometimes swallows the next
//! character; the segmentation sees the cells before the cursor on its row (so a sequence
//! whose modifier wrapped onto the next row does not join); and a cell keeps every code point
//! of its cluster (tmux keeps at most 21 bytes). Only a code point right after a ZWJ costs a
//! segmentation query; everything else is a width lookup, as before.
//! Overwriting either half of a wide cluster blanks all of it.

use std::collections::VecDeque;
use unicode_segmentation::GraphemeCursor;
use unicode_width::UnicodeWidthChar;
use vte::{Params, Parser, Perform};

use super::lines::Lines;
// The streaming API hands out the line assembly's lines: its callers name them from here.
pub use super::lines::{Line, LineSink, clip_whole};

/// The sink behind [`Renderer::feed`]/[`Renderer::finish`]: collects every line.
#[derive(Default)]
struct Collect(Vec<String>);

impl LineSink for Collect {
    fn line(&mut self, line: Line<'_>) {
        if line.omitted == 0 && line.tail.is_empty() {
            self.0.push(line.head.to_string());
        } else {
            self.0.push(format!(
                "{}[{} chars omitted]{}",
                line.head, line.omitted, line.tail
            ));
        }
    }

    fn erase_scrollback(&mut self) {
        self.0.clear();
    }
}

/// Hand a row leaving the screen to the line assembly.
#[inline]
fn emit(lines: &mut Lines, row: &Row, out: &mut dyn LineSink) {
    lines.emit_row(
        row.wrapped,
        row.len,
        |s, base| row.render_into(s, base, row.len),
        out,
    );
}

/// The line emitted in place of everything a full-screen (alternate screen) program drew, in
/// [`Screens::Note`] mode.
pub const FULL_SCREEN_NOTE: &str = "[full-screen program]";

/// What a visit to the alternate screen (a full-screen program) leaves in the lines.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Screens {
    /// One line, [`FULL_SCREEN_NOTE`], where the program ran.
    #[default]
    Note,
    /// The program's last screen, its first and last [`BRIEF_ROWS`] non-blank rows.
    Brief,
    /// The program's whole last screen.
    Full,
}

/// Rows of a last screen shown from its top and from its bottom in [`Screens::Brief`].
pub const BRIEF_ROWS: usize = 3;
/// Visits to the alternate screen whose last screen is kept, per renderer (per command): the
/// later ones leave their header line only.
pub const MAX_SCREENS: usize = 64;

/// An empty cell.
const BLANK: char = ' ';
/// The right half of a wide character (its left half is the cell before).
const WIDE_CONT: char = '\0';
/// The first cell a tab advanced over, when all the cells it covered were blank.
const TAB: char = '\t';
/// The other cells covered by such a tab.
const TAB_FILL: char = '\u{1}';
/// At most this many combining marks are kept per row (bounded memory on byte soup).
const MAX_MARKS_PER_CELL: usize = 4;
/// ZERO WIDTH JOINER.
const ZWJ: char = '\u{200d}';
/// How many cells before the cursor the segmentation looks at (an emoji ZWJ sequence's
/// pictograph and modifiers take at most 4).
const CLUSTER_CONTEXT_CELLS: usize = 8;

/// The DEC special graphics character set (VT100 line drawing, `ESC ( 0`): what `c`, printed
/// while it is in use, shows; `None` for characters it leaves as they are (below `_`).
fn dec_graphics(c: char) -> Option<char> {
    const TABLE: [char; 32] = [
        ' ', '◆', '▒', '␉', '␌', '␍', '␊', '°', '±', '␤', '␋', '┘', '┐', '┌', '└', '┼', '⎺', '⎻',
        '─', '⎼', '⎽', '├', '┤', '┴', '┬', '│', '≤', '≥', 'π', '≠', '£', '·',
    ];
    (c as usize)
        .checked_sub(0x5f)
        .and_then(|i| TABLE.get(i))
        .copied()
}

fn is_blank_cell(c: char) -> bool {
    matches!(c, BLANK | TAB | TAB_FILL)
}

fn is_wide(c: char) -> bool {
    (c as u32) >= 0x1100 && c.width() == Some(2)
}

/// One screen row.
#[derive(Clone)]
struct Row {
    cells: Vec<char>,
    /// High-water mark: every cell at or after `len` is `BLANK`.
    len: usize,
    /// The row was auto-wrapped into the next one.
    wrapped: bool,
    /// Combining marks as (column, mark), in arrival order.
    marks: Vec<(u16, char)>,
}

impl Row {
    fn new(cols: usize) -> Row {
        Row {
            cells: vec![BLANK; cols],
            len: 0,
            wrapped: false,
            marks: Vec::new(),
        }
    }

    fn clear(&mut self) {
        self.cells[..self.len].fill(BLANK);
        self.len = 0;
        self.wrapped = false;
        self.marks.clear();
    }

    fn is_blank(&self) -> bool {
        self.marks.is_empty() && self.cells[..self.len].iter().all(|&c| is_blank_cell(c))
    }

    fn drop_marks(&mut self, from: usize, to: usize) {
        if !self.marks.is_empty() {
            self.marks
                .retain(|&(c, _)| (c as usize) < from || (c as usize) >= to);
        }
    }

    /// Blank cells `[from, to)`, also blanking the other half of any wide character cut.
    fn erase(&mut self, from: usize, to: usize) {
        let cols = self.cells.len();
        let to = to.min(cols);
        if from >= to {
            return;
        }
        if from == 0 && to == cols {
            self.clear();
            return;
        }
        let mut from = from;
        let mut to = to;
        if from > 0 && self.cells[from] == WIDE_CONT {
            from -= 1;
        }
        if to < cols && self.cells[to] == WIDE_CONT {
            to += 1;
        }
        if from < self.len {
            self.cells[from..to.min(self.len)].fill(BLANK);
            if to >= self.len {
                self.len = from;
            }
        }
        self.drop_marks(from, to);
    }

    /// Replace half-characters left by shifting cells with blanks.
    fn fix_wide(&mut self) {
        let cols = self.cells.len();
        for i in 0..self.len.min(cols) {
            let c = self.cells[i];
            if c == WIDE_CONT {
                if i == 0 || !is_wide(self.cells[i - 1]) {
                    self.cells[i] = BLANK;
                }
            } else if is_wide(c) && (i + 1 >= cols || self.cells[i + 1] != WIDE_CONT) {
                self.cells[i] = BLANK;
            }
        }
    }

    /// Insert `n` blank cells at `at`, pushing the rest right (cells pushed past the edge
    /// are lost).
    fn insert_blanks(&mut self, at: usize, n: usize) {
        let cols = self.cells.len();
        if at >= cols {
            return;
        }
        let n = n.min(cols - at);
        self.cells.copy_within(at..cols - n, at + n);
        self.cells[at..at + n].fill(BLANK);
        if !self.marks.is_empty() {
            self.marks.retain_mut(|(c, _)| {
                let col = *c as usize;
                if col >= at {
                    *c = (col + n) as u16;
                    col + n < cols
                } else {
                    true
                }
            });
        }
        if self.len > at {
            self.len = (self.len + n).min(cols);
        }
        self.fix_wide();
    }

    /// Delete `n` cells at `at`, pulling the rest left and filling the end with blanks.
    fn delete_cells(&mut self, at: usize, n: usize) {
        let cols = self.cells.len();
        if at >= cols {
            return;
        }
        let n = n.min(cols - at);
        self.cells.copy_within(at + n..cols, at);
        self.cells[cols - n..].fill(BLANK);
        if !self.marks.is_empty() {
            self.marks.retain_mut(|(c, _)| {
                let col = *c as usize;
                if col >= at + n {
                    *c = (col - n) as u16;
                    true
                } else {
                    col < at
                }
            });
        }
        if self.len > at {
            self.len = if self.len > at + n { self.len - n } else { at };
        }
        self.fix_wide();
    }

    /// Append the text of cells `[0, upto)` to `out`. `base` is the output column of cell 0
    /// (non-zero for the continuation of a wrapped line); it decides whether a remembered
    /// tab can be written as `\t`.
    fn render_into(&self, out: &mut String, base: usize, upto: usize) {
        // Fast path: a row of printable ASCII without marks is its cells, byte for byte (the
        // cell markers WIDE_CONT, TAB and TAB_FILL are all below ' '). Cells are narrowed in
        // blocks, without branches, so that the loop compiles to vector instructions.
        let end = upto.min(self.len);
        if self.marks.is_empty() {
            let start = out.len();
            let mut buf = [0u8; 64];
            let mut plain = true;
            for block in self.cells[..end].chunks(buf.len()) {
                let mut ok = true;
                for (b, &c) in buf.iter_mut().zip(block) {
                    let v = c as u32;
                    ok &= v.wrapping_sub(0x20) < 0x5f;
                    *b = v as u8;
                }
                if !ok {
                    plain = false;
                    break;
                }
                out.push_str(std::str::from_utf8(&buf[..block.len()]).expect("printable ASCII"));
            }
            if plain {
                out.extend(std::iter::repeat_n(BLANK, upto - end));
                return;
            }
            out.truncate(start);
        }
        let mut i = 0;
        while i < upto {
            let c = if i < self.len { self.cells[i] } else { BLANK };
            match c {
                WIDE_CONT => {}
                TAB_FILL => out.push(' '),
                TAB => {
                    let mut end = i + 1;
                    while end < self.len && self.cells[end] == TAB_FILL {
                        end += 1;
                    }
                    let (from, to) = (base + i, base + end);
                    if to == (from / 8 + 1) * 8 && end <= upto {
                        out.push('\t');
                        i = end;
                        continue;
                    }
                    out.push(' ');
                }
                _ => out.push(c),
            }
            if !self.marks.is_empty() {
                for &(col, m) in &self.marks {
                    if col as usize == i {
                        out.push(m);
                    }
                }
            }
            i += 1;
        }
    }
}

#[derive(Clone, Copy)]
struct SavedCursor {
    row: usize,
    col: usize,
    origin: bool,
    /// DECSC saves the character sets too.
    g_graphics: [bool; 2],
    shift_out: bool,
}

/// Terminal state driven by the parser.
struct Term {
    cols: usize,
    rows: usize,
    grid: VecDeque<Row>,
    /// The main screen while the alternate screen is active.
    main_saved: Option<VecDeque<Row>>,
    row: usize,
    /// `0..=cols`; `cols` means a wrap is pending (the last column was just written).
    col: usize,
    top: usize,
    bottom: usize,
    autowrap: bool,
    origin: bool,
    insert: bool,
    tabs: Vec<bool>,
    saved: Option<SavedCursor>,
    alt_saved: Option<SavedCursor>,
    /// The last printed character, while nothing else has come since (for REP).
    last_char: Option<char>,
    /// The last thing printed was a ZWJ, attached to the cell before the cursor: the next code
    /// point may continue an emoji ZWJ sequence.
    after_zwj: bool,
    /// Scratch for the text given to `unicode-segmentation`.
    seg: String,
    lines: Lines,
    /// What a full-screen program leaves in the lines.
    screens: Screens,
    /// The full-screen program's name, for the lines it leaves.
    program: Option<String>,
    /// The alternate screen as it was before it was last cleared, while its grid is blank:
    /// a program that clears its screen on the way out still leaves what it last showed.
    /// Swapped with the grid, never copied (a clear costs what clearing costs).
    alt_before_clear: Option<VecDeque<Row>>,
    /// Visits to the alternate screen so far.
    visits: usize,
    /// The character sets designated as G0 and G1 (true: DEC special graphics, line drawing).
    g_graphics: [bool; 2],
    /// G1 is invoked into GL (SO); else G0 (SI).
    shift_out: bool,
}

fn default_tabs(cols: usize) -> Vec<bool> {
    (0..cols).map(|c| c > 0 && c % 8 == 0).collect()
}

impl Term {
    fn new(cols: usize, rows: usize, cap: Option<usize>) -> Term {
        Term {
            cols,
            rows,
            grid: Self::blank_grid(cols, rows),
            main_saved: None,
            row: 0,
            col: 0,
            top: 0,
            bottom: rows - 1,
            autowrap: true,
            origin: false,
            insert: false,
            tabs: default_tabs(cols),
            saved: None,
            alt_saved: None,
            last_char: None,
            after_zwj: false,
            seg: String::new(),
            lines: Lines::new(cap),
            screens: Screens::Note,
            program: None,
            alt_before_clear: None,
            visits: 0,
            g_graphics: [false; 2],
            shift_out: false,
        }
    }

    /// Whether printed ASCII is translated to line drawing now.
    #[inline]
    fn graphics(&self) -> bool {
        self.g_graphics[usize::from(self.shift_out)]
    }

    fn blank_grid(cols: usize, rows: usize) -> VecDeque<Row> {
        (0..rows).map(|_| Row::new(cols)).collect()
    }

    fn in_alt(&self) -> bool {
        self.main_saved.is_some()
    }

    // ---- printing -------------------------------------------------------------------

    #[inline(always)]
    fn put_char(&mut self, c: char, w: usize, out: &mut dyn LineSink) {
        let cols = self.cols;
        if w > cols {
            return;
        }
        if self.col + w > cols {
            if self.autowrap {
                self.grid[self.row].wrapped = true;
                self.index(out);
                self.col = 0;
            } else {
                self.col = cols - w;
            }
        }
        if self.insert {
            self.grid[self.row].insert_blanks(self.col, w);
        }
        let col = self.col;
        let r = &mut self.grid[self.row];
        if r.cells[col] == WIDE_CONT && col > 0 {
            r.cells[col - 1] = BLANK;
            if !r.marks.is_empty() {
                r.drop_marks(col - 1, col);
            }
        }
        if col + w < cols && r.cells[col + w] == WIDE_CONT {
            r.cells[col + w] = BLANK;
        }
        r.cells[col] = c;
        if w == 2 {
            r.cells[col + 1] = WIDE_CONT;
        }
        if !r.marks.is_empty() {
            r.drop_marks(col, col + w);
        }
        if col + w > r.len {
            r.len = col + w;
        }
        self.col = col + w;
    }

    /// Attach a zero-width character to the cell before the cursor.
    /// Returns whether it was attached.
    fn combine(&mut self, m: char) -> bool {
        if self.col == 0 {
            return false;
        }
        let mut t = self.col.min(self.cols) - 1;
        let r = &mut self.grid[self.row];
        if r.cells[t] == WIDE_CONT && t > 0 {
            t -= 1;
        }
        if r.marks.len() >= MAX_MARKS_PER_CELL * self.cols {
            return false;
        }
        r.marks.push((t as u16, m));
        if t + 1 > r.len {
            r.len = t + 1;
        }
        true
    }

    // ---- scrolling --------------------------------------------------------------------

    fn full_region(&self) -> bool {
        self.top == 0 && self.bottom == self.rows - 1
    }

    /// Scroll the region up; lines leaving its top go to the scrollback (main screen only).
    fn scroll_up(&mut self, n: usize, out: &mut dyn LineSink) {
        let n = n.min(self.bottom - self.top + 1);
        let full = self.full_region();
        for _ in 0..n {
            let mut r = if full {
                self.grid.pop_front()
            } else {
                self.grid.remove(self.top)
            }
            .expect("row in grid");
            if self.main_saved.is_none() {
                emit(&mut self.lines, &r, out);
            }
            r.clear();
            if full {
                self.grid.push_back(r);
            } else {
                self.grid.insert(self.bottom, r);
            }
        }
    }

    /// Scroll the region down; lines leaving its bottom are lost (as on a terminal).
    fn scroll_down(&mut self, n: usize) {
        let n = n.min(self.bottom - self.top + 1);
        for _ in 0..n {
            let mut r = self.grid.remove(self.bottom).expect("row in grid");
            r.clear();
            self.grid.insert(self.top, r);
        }
    }

    /// IND: move down one line, scrolling at the bottom margin.
    fn index(&mut self, out: &mut dyn LineSink) {
        if self.row == self.bottom {
            self.scroll_up(1, out);
        } else if self.row + 1 < self.rows {
            self.row += 1;
        }
    }

    /// RI: move up one line, scrolling down at the top margin.
    fn reverse_index(&mut self) {
        if self.row == self.top {
            self.scroll_down(1);
        } else if self.row > 0 {
            self.row -= 1;
        }
    }

    // ---- cursor -------------------------------------------------------------------------

    fn clamp_col(&mut self) {
        if self.col >= self.cols {
            self.col = self.cols - 1;
        }
    }

    fn cursor_up(&mut self, n: usize) {
        self.clamp_col();
        let limit = if self.row >= self.top { self.top } else { 0 };
        self.row = self.row.saturating_sub(n).max(limit);
    }

    fn cursor_down(&mut self, n: usize) {
        self.clamp_col();
        let limit = if self.row <= self.bottom {
            self.bottom
        } else {
            self.rows - 1
        };
        self.row = self.row.saturating_add(n).min(limit);
    }

    fn cursor_right(&mut self, n: usize) {
        self.clamp_col();
        self.col = self.col.saturating_add(n).min(self.cols - 1);
    }

    fn cursor_left(&mut self, n: usize) {
        self.clamp_col();
        self.col = self.col.saturating_sub(n);
    }

    fn set_row(&mut self, n: usize) {
        let n = n.saturating_sub(1);
        self.row = if self.origin {
            self.top.saturating_add(n).min(self.bottom)
        } else {
            n.min(self.rows - 1)
        };
    }

    fn set_col(&mut self, n: usize) {
        self.col = n.saturating_sub(1).min(self.cols - 1);
    }

    fn home(&mut self) {
        self.row = if self.origin { self.top } else { 0 };
        self.col = 0;
    }

    fn backspace(&mut self) {
        if self.col == 0 {
            // Reverse wrap onto the end of a wrapped previous row (as tmux does).
            if self.row > 0 && self.grid[self.row - 1].wrapped {
                self.row -= 1;
                self.col = self.cols - 1;
            }
        } else {
            self.col = self.col.min(self.cols) - 1;
        }
    }

    fn tab(&mut self, n: usize) {
        for _ in 0..n {
            if self.col + 1 >= self.cols {
                return;
            }
            let start = self.col;
            let mut end = start + 1;
            while end < self.cols - 1 && !self.tabs[end] {
                end += 1;
            }
            let r = &mut self.grid[self.row];
            if r.cells[start..end].iter().all(|&c| is_blank_cell(c)) {
                r.cells[start] = TAB;
                r.cells[start + 1..end].fill(TAB_FILL);
                r.drop_marks(start, end);
                r.len = r.len.max(end);
            }
            self.col = end;
        }
    }

    fn back_tab(&mut self, n: usize) {
        self.clamp_col();
        for _ in 0..n {
            if self.col == 0 {
                return;
            }
            self.col -= 1;
            while self.col > 0 && !self.tabs[self.col] {
                self.col -= 1;
            }
        }
    }

    fn save_cursor(&self) -> SavedCursor {
        SavedCursor {
            row: self.row,
            col: self.col,
            origin: self.origin,
            g_graphics: self.g_graphics,
            shift_out: self.shift_out,
        }
    }

    fn restore_cursor(&mut self, s: Option<SavedCursor>) {
        match s {
            Some(s) => {
                self.row = s.row.min(self.rows - 1);
                self.col = s.col.min(self.cols);
                self.origin = s.origin;
                self.g_graphics = s.g_graphics;
                self.shift_out = s.shift_out;
            }
            None => {
                self.origin = false;
                self.row = 0;
                self.col = 0;
                self.g_graphics = [false; 2];
                self.shift_out = false;
            }
        }
    }

    // ---- erasing ------------------------------------------------------------------------

    /// Clear the whole screen; on the main screen its lines first go to the scrollback.
    fn clear_screen(&mut self, out: &mut dyn LineSink) {
        if !self.in_alt() {
            if let Some(last) = self.grid.iter().rposition(|r| !r.is_blank()) {
                for r in self.grid.iter().take(last + 1) {
                    emit(&mut self.lines, r, out);
                }
                self.lines.flush_partial(out);
            }
        } else if self.screens != Screens::Note && self.grid.iter().any(|r| !r.is_blank()) {
            // What the program showed before it cleared the screen is kept, by swapping grids:
            // the grid kept before (if any) becomes the new, cleared, screen.
            let kept = self
                .alt_before_clear
                .take()
                .unwrap_or_else(|| Self::blank_grid(self.cols, self.rows));
            self.alt_before_clear = Some(std::mem::replace(&mut self.grid, kept));
        }
        for r in self.grid.iter_mut() {
            r.clear();
        }
    }

    fn erase_display(&mut self, mode: u16, out: &mut dyn LineSink) {
        match mode {
            0 => {
                if self.row == 0 && self.col == 0 {
                    self.clear_screen(out);
                    return;
                }
                let (row, col) = (self.row, self.col);
                self.grid[row].erase(col, self.cols);
                for r in self.grid.iter_mut().skip(row + 1) {
                    r.clear();
                }
            }
            1 => {
                let (row, col) = (self.row, self.col);
                for r in self.grid.iter_mut().take(row) {
                    r.clear();
                }
                self.grid[row].erase(0, col + 1);
            }
            2 => self.clear_screen(out),
            // The terminal's scrollback: everything emitted so far; the screen stays. While a
            // full-screen program runs, what we emitted includes main-screen lines the terminal
            // still holds (see `enter_alt`), so nothing is erased then.
            3 if !self.in_alt() => self.lines.erase_scrollback(out),
            _ => {}
        }
    }

    fn erase_line(&mut self, mode: u16) {
        let (row, col, cols) = (self.row, self.col, self.cols);
        let r = &mut self.grid[row];
        match mode {
            0 => r.erase(col, cols),
            1 => r.erase(0, col + 1),
            2 => r.clear(),
            _ => {}
        }
    }

    fn insert_lines(&mut self, n: usize) {
        if self.row < self.top || self.row > self.bottom {
            return;
        }
        let n = n.min(self.bottom - self.row + 1);
        for _ in 0..n {
            let mut r = self.grid.remove(self.bottom).expect("row in grid");
            r.clear();
            self.grid.insert(self.row, r);
        }
    }

    fn delete_lines(&mut self, n: usize) {
        if self.row < self.top || self.row > self.bottom {
            return;
        }
        let n = n.min(self.bottom - self.row + 1);
        for _ in 0..n {
            let mut r = self.grid.remove(self.row).expect("row in grid");
            r.clear();
            self.grid.insert(self.bottom, r);
        }
    }

    // ---- modes --------------------------------------------------------------------------

    /// Switch to the alternate screen. Returns false if it was already active.
    fn enter_alt(&mut self, out: &mut dyn LineSink) -> bool {
        if self.in_alt() {
            return false;
        }
        // Lines above the cursor are final for the program's purposes: emit them, then the
        // note, so that the note sits between what came before and what comes after.
        let k = self.row;
        for r in self.grid.iter().take(k) {
            emit(&mut self.lines, r, out);
        }
        if self.screens == Screens::Note {
            self.lines.push_line(FULL_SCREEN_NOTE, out);
        } else {
            // The last screen goes out when the program leaves it (nothing is emitted while it
            // runs, so it lands here); the line being assembled ends here.
            self.lines.flush_partial(out);
        }
        for _ in 0..k {
            let mut r = self.grid.pop_front().expect("row in grid");
            r.clear();
            self.grid.push_back(r);
        }
        self.row -= k;
        for s in [&mut self.saved, &mut self.alt_saved].into_iter().flatten() {
            s.row = s.row.saturating_sub(k);
        }
        let alt = Self::blank_grid(self.cols, self.rows);
        self.main_saved = Some(std::mem::replace(&mut self.grid, alt));
        true
    }

    /// Leave the alternate screen: its last screen goes to the lines (unless in
    /// [`Screens::Note`] mode), and the main screen comes back.
    fn exit_alt(&mut self, out: &mut dyn LineSink) -> bool {
        match self.main_saved.take() {
            Some(main) => {
                if self.screens != Screens::Note {
                    self.emit_last_screen(out);
                }
                self.alt_before_clear = None;
                self.grid = main;
                true
            }
            None => false,
        }
    }

    /// The lines a visit to the alternate screen leaves (see [`Screens`]): a header naming the
    /// program, the rows of the last screen it showed (blank rows at its top and bottom left
    /// out; in [`Screens::Brief`] only the first and last [`BRIEF_ROWS`]) and an end line.
    fn emit_last_screen(&mut self, out: &mut dyn LineSink) {
        self.visits += 1;
        let name = match &self.program {
            Some(p) => format!(": {p}"),
            None => String::new(),
        };
        let shown = if self.grid.iter().all(Row::is_blank) {
            self.alt_before_clear.as_ref().unwrap_or(&self.grid)
        } else {
            &self.grid
        };
        let first = shown.iter().position(|r| !r.is_blank());
        let (Some(first), true) = (first, self.visits <= MAX_SCREENS) else {
            self.lines
                .push_line(&format!("[full-screen program{name}]"), out);
            return;
        };
        let last = shown.iter().rposition(|r| !r.is_blank()).unwrap_or(first);
        let count = last + 1 - first;
        let cut = self.screens == Screens::Brief && count > 2 * BRIEF_ROWS + 1;
        let header = if cut {
            format!("[full-screen program{name}; its last screen, first and last rows:]")
        } else {
            format!("[full-screen program{name}; its last screen:]")
        };
        // The rows are rendered first: `shown` borrows the grid the line assembly sits beside.
        let mut rows: Vec<String> = Vec::with_capacity(count.min(2 * BRIEF_ROWS + 1));
        for (i, r) in shown.iter().enumerate().take(last + 1).skip(first) {
            if cut && i == first + BRIEF_ROWS {
                rows.push(format!("[{} more rows]", count - 2 * BRIEF_ROWS));
            }
            if cut && i >= first + BRIEF_ROWS && i <= last - BRIEF_ROWS {
                continue;
            }
            let mut s = String::new();
            r.render_into(&mut s, 0, r.len);
            s.truncate(s.trim_end_matches(' ').len());
            rows.push(s);
        }
        self.lines.push_line(&header, out);
        for row in &rows {
            self.lines.push_line(row, out);
        }
        self.lines.push_line("[end of the screen]", out);
    }

    /// DECALN (`ESC # 8`): the screen filled with `E`, margins reset, the cursor home.
    fn alignment_test(&mut self) {
        for r in self.grid.iter_mut() {
            r.clear();
            r.cells.fill('E');
            r.len = self.cols;
        }
        self.top = 0;
        self.bottom = self.rows - 1;
        self.origin = false;
        self.row = 0;
        self.col = 0;
    }

    fn set_private_mode(&mut self, mode: u16, on: bool, out: &mut dyn LineSink) {
        match mode {
            6 => {
                self.origin = on;
                self.home();
            }
            7 => self.autowrap = on,
            47 | 1047 => {
                if on {
                    self.enter_alt(out);
                } else {
                    self.exit_alt(out);
                }
            }
            1048 => {
                if on {
                    self.saved = Some(self.save_cursor());
                } else {
                    self.restore_cursor(self.saved);
                }
            }
            1049 => {
                if on {
                    if self.enter_alt(out) {
                        self.alt_saved = Some(self.save_cursor());
                    }
                } else {
                    // The cursor saved on entering is restored even when the alternate screen
                    // was left already (as tmux and xterm do: ncurses programs send it twice).
                    self.exit_alt(out);
                    if self.alt_saved.is_some() {
                        self.restore_cursor(self.alt_saved);
                    }
                }
            }
            _ => {}
        }
    }

    fn reset(&mut self, out: &mut dyn LineSink) {
        self.exit_alt(out);
        self.g_graphics = [false; 2];
        self.shift_out = false;
        self.clear_screen(out);
        self.top = 0;
        self.bottom = self.rows - 1;
        self.autowrap = true;
        self.origin = false;
        self.insert = false;
        self.tabs = default_tabs(self.cols);
        self.saved = None;
        self.alt_saved = None;
        self.last_char = None;
        self.row = 0;
        self.col = 0;
    }

    fn finish(mut self, out: &mut dyn LineSink) {
        self.exit_alt(out);
        for r in self.grid.iter() {
            emit(&mut self.lines, r, out);
        }
        self.lines.finish(out);
    }

    // ---- the parser's actions -------------------------------------------------------------

    /// Anything but a printed character: REP has nothing to repeat and the grapheme
    /// cluster being printed is over. Returns the character REP would repeat.
    #[inline]
    fn interrupt(&mut self) -> Option<char> {
        self.after_zwj = false;
        self.last_char.take()
    }

    #[inline]
    fn print(&mut self, c: char, out: &mut dyn LineSink) {
        if (c as u32) < 0x7f {
            if self.graphics() {
                if let Some(g) = dec_graphics(c) {
                    self.last_char = Some(g);
                    self.after_zwj = false;
                    self.put_char(g, 1, out);
                    return;
                }
            }
            // Printable ASCII always starts a new cluster (and is never pictographic).
            self.last_char = Some(c);
            self.after_zwj = false;
            self.put_char(c, 1, out);
            return;
        }
        self.print_non_ascii(c, out);
    }

    /// The grapheme rule of the module docs: zero-width code points join the cell before the
    /// cursor; a code point that a ZWJ joins to an emoji (no cluster boundary before it, per
    /// `unicode-segmentation`) joins it too, adding no width; anything else takes its own
    /// `unicode-width` cells.
    fn print_non_ascii(&mut self, c: char, out: &mut dyn LineSink) {
        let Some(w) = c.width() else { return };
        if std::mem::take(&mut self.after_zwj) && self.joins_emoji_sequence(c) {
            self.combine(c);
            return;
        }
        if w == 0 {
            self.after_zwj = self.combine(c) && c == ZWJ;
            return;
        }
        self.last_char = Some(c);
        self.put_char(c, w, out);
    }

    /// Whether `c`, printed right after a ZWJ, continues the grapheme cluster before the
    /// cursor: `unicode-segmentation` finds no boundary between the text of the cells before
    /// the cursor on its row (up to `CLUSTER_CONTEXT_CELLS`, with their marks) and `c`.
    fn joins_emoji_sequence(&mut self, c: char) -> bool {
        let row = &self.grid[self.row];
        let end = self.col.min(self.cols);
        self.seg.clear();
        for i in end.saturating_sub(CLUSTER_CONTEXT_CELLS)..end {
            match if i < row.len { row.cells[i] } else { BLANK } {
                WIDE_CONT => {}
                TAB | TAB_FILL => self.seg.push(' '),
                cell => self.seg.push(cell),
            }
            for &(col, m) in &row.marks {
                if col as usize == i {
                    self.seg.push(m);
                }
            }
        }
        let n = self.seg.len();
        self.seg.push(c);
        let mut cursor = GraphemeCursor::new(n, self.seg.len(), true);
        matches!(cursor.is_boundary(&self.seg, 0), Ok(false))
    }

    fn execute(&mut self, byte: u8, out: &mut dyn LineSink) {
        self.interrupt();
        match byte {
            0x08 => self.backspace(),
            0x09 => self.tab(1),
            0x0a..=0x0c => self.index(out),
            0x0d => self.col = 0,
            // SO, SI: G1 or G0 into GL.
            0x0e => self.shift_out = true,
            0x0f => self.shift_out = false,
            _ => {}
        }
    }

    fn csi_dispatch(
        &mut self,
        params: &Params,
        intermediates: &[u8],
        ignore: bool,
        action: char,
        out: &mut dyn LineSink,
    ) {
        // REP repeats only a character printed immediately before it (as tmux does).
        let last_char = self.interrupt();
        if ignore {
            return;
        }
        let private = match intermediates {
            [] => false,
            [b'?'] => true,
            _ => return,
        };
        let mut args = [0u16; 16];
        let mut n = 0;
        for p in params.iter() {
            if n < args.len() {
                args[n] = p.first().copied().unwrap_or(0);
                n += 1;
            }
        }
        let raw = args[0];
        // Count-like argument: absent or 0 means 1.
        let arg = |i: usize| -> usize { (args[i] as usize).max(1) };
        if private {
            match action {
                'h' | 'l' => {
                    for &m in &args[..n] {
                        self.set_private_mode(m, action == 'h', out);
                    }
                }
                _ => {}
            }
            return;
        }
        match action {
            'A' => self.cursor_up(arg(0)),
            'B' | 'e' => self.cursor_down(arg(0)),
            'C' | 'a' => self.cursor_right(arg(0)),
            'D' => self.cursor_left(arg(0)),
            'E' => {
                self.cursor_down(arg(0));
                self.col = 0;
            }
            'F' => {
                self.cursor_up(arg(0));
                self.col = 0;
            }
            'G' | '`' => self.set_col(arg(0)),
            'd' => {
                self.clamp_col();
                self.set_row(arg(0));
            }
            'H' | 'f' => {
                self.set_row(arg(0));
                self.set_col(arg(1));
            }
            // ED 3 with a second parameter is not "erase scrollback" (as in tmux).
            'J' if raw == 3 && args[1] != 0 => {}
            'J' => self.erase_display(raw, out),
            'K' => self.erase_line(raw),
            'L' => self.insert_lines(arg(0)),
            'M' => self.delete_lines(arg(0)),
            '@' => {
                let (row, col) = (self.row, self.col);
                self.grid[row].insert_blanks(col, arg(0));
            }
            'P' => {
                let (row, col) = (self.row, self.col);
                self.grid[row].delete_cells(col, arg(0));
            }
            'X' => {
                let (row, col) = (self.row, self.col);
                let end = col.saturating_add(arg(0));
                self.grid[row].erase(col, end);
            }
            'S' => self.scroll_up(arg(0), out),
            'T' => self.scroll_down(arg(0)),
            'r' => {
                let top = arg(0);
                let bottom = if n > 1 && args[1] != 0 {
                    (args[1] as usize).min(self.rows)
                } else {
                    self.rows
                };
                if top < bottom {
                    self.top = top - 1;
                    self.bottom = bottom - 1;
                    self.home();
                }
            }
            's' => self.saved = Some(self.save_cursor()),
            'u' => self.restore_cursor(self.saved),
            'g' => match raw {
                0 => {
                    let c = self.col.min(self.cols - 1);
                    self.tabs[c] = false;
                }
                3 => self.tabs.fill(false),
                _ => {}
            },
            'I' => self.tab(arg(0)),
            'Z' => self.back_tab(arg(0)),
            'b' => {
                if let Some(c) = last_char {
                    let w = c.width().unwrap_or(1).max(1);
                    // Repeats stop at the end of the line.
                    let times = arg(0).min(self.cols.saturating_sub(self.col));
                    for _ in 0..times {
                        self.put_char(c, w, out);
                    }
                }
            }
            'h' | 'l' => {
                for &m in &args[..n] {
                    if m == 4 {
                        self.insert = action == 'h';
                    }
                }
            }
            _ => {}
        }
    }

    fn esc_dispatch(
        &mut self,
        intermediates: &[u8],
        ignore: bool,
        byte: u8,
        out: &mut dyn LineSink,
    ) {
        self.interrupt();
        if ignore {
            return;
        }
        match (intermediates, byte) {
            ([], b'7') => self.saved = Some(self.save_cursor()),
            ([], b'8') => self.restore_cursor(self.saved),
            ([], b'D') => self.index(out),
            ([], b'E') => {
                self.col = 0;
                self.index(out);
            }
            ([], b'M') => self.reverse_index(),
            ([], b'H') => {
                let c = self.col.min(self.cols - 1);
                self.tabs[c] = true;
            }
            ([], b'c') => self.reset(out),
            // Designate G0 / G1: `0` DEC special graphics; any other set (`B` ASCII, `A` UK,
            // ...) is taken for ASCII.
            ([b'('], set) => self.g_graphics[0] = set == b'0',
            ([b')'], set) => self.g_graphics[1] = set == b'0',
            ([b'#'], b'8') => self.alignment_test(),
            _ => {}
        }
    }
}

/// The terminal and the sink its lines go to, for the length of one `advance`.
struct Active<'a> {
    term: &'a mut Term,
    out: &'a mut dyn LineSink,
}

impl Perform for Active<'_> {
    #[inline]
    fn print(&mut self, c: char) {
        self.term.print(c, self.out);
    }

    fn execute(&mut self, byte: u8) {
        self.term.execute(byte, self.out);
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: char) {
        self.term
            .csi_dispatch(params, intermediates, ignore, action, self.out);
    }

    fn osc_dispatch(&mut self, _params: &[&[u8]], _bell_terminated: bool) {
        self.term.interrupt();
    }

    fn hook(&mut self, _params: &Params, _intermediates: &[u8], _ignore: bool, _action: char) {
        self.term.interrupt();
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], ignore: bool, byte: u8) {
        self.term
            .esc_dispatch(intermediates, ignore, byte, self.out);
    }
}

/// Renders terminal output incrementally; see the [module documentation](self).
pub struct Renderer {
    parser: Parser,
    term: Term,
    /// An incomplete UTF-8 sequence held back from the end of the last chunk (≤ 3 bytes).
    carry: Vec<u8>,
    /// What [`Renderer::feed`] collected.
    collected: Collect,
}

/// Length of the incomplete UTF-8 sequence at the end of `bytes`, if any.
///
/// `vte` 0.15.0 mishandles a code point split across two `advance` calls: after completing
/// it, it skips the bytes that followed within the 4-byte window (e.g. a `\r`). Holding
/// such a tail back until the next chunk means `vte` never sees a split code point, so the
/// output does not depend on how the stream is chunked.
pub(crate) fn incomplete_utf8_tail(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for back in 1..=n.min(3) {
        let b = bytes[n - back];
        if b & 0xc0 == 0x80 {
            continue; // continuation byte: look further back for the lead byte
        }
        let need = match b {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => return 0,
        };
        return if back < need { back } else { 0 };
    }
    0
}

/// Feeds `bytes` to `parser` as one [`Parser::advance`] call would, in time linear in their
/// length whatever they hold.
///
/// `vte` 0.15.0, in its ground state, looks for the next `ESC` to the end of the slice it was
/// given once per invalid UTF-8 sequence, so a 64 KiB chunk of Latin-1 text or of binary
/// output took thousands of passes over itself (quadratic in the chunk). Here each call gets
/// the text up to and including one invalid sequence. The cut right after it is one `vte`
/// handles as if there were none: the bytes it holds back there (an unfinished lead byte)
/// cannot start a valid code point with what follows, so it prints the same `�` (see
/// `incomplete_utf8_tail` for the cut it does not handle, which the callers hold back).
pub fn advance<P: Perform>(parser: &mut Parser, performer: &mut P, bytes: &[u8]) {
    let mut rest = bytes;
    while !rest.is_empty() {
        let end = piece_end(rest);
        parser.advance(performer, &rest[..end]);
        rest = &rest[end..];
    }
}

/// Where [`advance`]'s next piece of `rest` ends: just after its first invalid UTF-8
/// sequence, when `vte` can be handed the bytes there in two calls; else at its end.
fn piece_end(rest: &[u8]) -> usize {
    match std::str::from_utf8(rest) {
        Err(e) => match e.error_len() {
            Some(bad) if clean_cut(rest, e.valid_up_to() + bad) => e.valid_up_to() + bad,
            _ => rest.len(),
        },
        Ok(_) => rest.len(),
    }
}

/// Whether `vte` reads `bytes[..at]` then `bytes[at..]` as it reads `bytes` whole: the
/// piece ends on no code point's start that the bytes after it complete.
fn clean_cut(bytes: &[u8], at: usize) -> bool {
    let held = incomplete_utf8_tail(&bytes[..at]);
    if held == 0 {
        return true;
    }
    let from = at - held;
    let window = &bytes[from..bytes.len().min(from + 4)];
    matches!(std::str::from_utf8(window), Err(e) if e.valid_up_to() == 0 && e.error_len().is_some())
}

impl Renderer {
    /// A renderer for a terminal of `cols × rows` cells (0 means 80 columns / 24 rows).
    pub fn new(cols: u16, rows: u16) -> Renderer {
        Self::build(cols, rows, None)
    }

    /// As [`Renderer::new`], but lines longer than `line_cap` chars keep only their first and
    /// last `line_cap / 2` chars (bounded memory); see [`Line`].
    pub fn with_line_cap(cols: u16, rows: u16, line_cap: usize) -> Renderer {
        Self::build(cols, rows, Some(line_cap))
    }

    /// What full-screen programs leave in the lines (default [`Screens::Note`]), and the
    /// program's name for them.
    pub fn with_screens(mut self, screens: Screens, program: Option<String>) -> Renderer {
        self.term.screens = screens;
        self.term.program = program;
        self
    }

    fn build(cols: u16, rows: u16, cap: Option<usize>) -> Renderer {
        let cols = if cols == 0 { 80 } else { cols as usize };
        let rows = if rows == 0 { 24 } else { rows as usize };
        Renderer {
            parser: Parser::new(),
            term: Term::new(cols, rows, cap),
            carry: Vec::new(),
            collected: Collect::default(),
        }
    }

    /// Feed the next bytes of the stream; splits may fall anywhere, even inside a UTF-8
    /// sequence or an escape sequence. Finished lines are kept for [`Renderer::finish`].
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut collected = std::mem::take(&mut self.collected);
        self.feed_into(bytes, &mut collected);
        self.collected = collected;
    }

    /// Feed bytes; finished lines go to `sink` as soon as they are final (scrolled off,
    /// pushed away by a clear, ...).
    pub fn feed_into(&mut self, bytes: &[u8], sink: &mut dyn LineSink) {
        let mut active = Active {
            term: &mut self.term,
            out: sink,
        };
        if self.carry.is_empty() {
            let end = bytes.len() - incomplete_utf8_tail(bytes);
            advance(&mut self.parser, &mut active, &bytes[..end]);
            self.carry.extend_from_slice(&bytes[end..]);
        } else {
            let mut joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(bytes);
            let end = joined.len() - incomplete_utf8_tail(&joined);
            advance(&mut self.parser, &mut active, &joined[..end]);
            joined.drain(..end);
            self.carry = joined;
        }
    }

    /// Every displayed line in order: scrollback, then the screen. Trailing blanks of
    /// each line and trailing empty lines are dropped. (With a line cap, a clipped line is
    /// collected as `head[N chars omitted]tail`.)
    pub fn finish(mut self) -> Vec<String> {
        let mut collected = std::mem::take(&mut self.collected);
        self.finish_into(&mut collected);
        collected.0
    }

    /// The rest (the screen) goes to `sink`; trailing empty lines are dropped, as `finish` does.
    pub fn finish_into(self, sink: &mut dyn LineSink) {
        // An incomplete UTF-8 sequence at the very end is dropped, as before.
        self.term.finish(sink);
    }
}

/// Render a complete byte stream shown on a `cols × rows` terminal.
pub fn render(bytes: &[u8], cols: u16, rows: u16) -> Vec<String> {
    let mut r = Renderer::new(cols, rows);
    r.feed(bytes);
    r.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_osc_string_is_dropped_and_what_follows_is_shown() {
        // vte keeps a bounded prefix of an OSC string (its std feature, which buffers the whole
        // string, is off); the renderer drops OSC strings anyway.
        let mut bytes = b"\x1b]0;".to_vec();
        bytes.extend(std::iter::repeat_n(b'a', 200_000));
        bytes.extend_from_slice(b"\x07visible\r\n");
        let mut r = Renderer::new(80, 24);
        for chunk in bytes.chunks(4096) {
            r.feed(chunk);
        }
        assert_eq!(r.finish(), vec!["visible".to_string()]);
    }
    use proptest::prelude::*;

    fn r(bytes: &str) -> Vec<String> {
        render(bytes.as_bytes(), 20, 5)
    }

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn plain_lines_round_trip() {
        assert_eq!(r("hello\r\nworld\r\n"), lines(&["hello", "world"]));
    }

    #[test]
    fn zero_size_means_80x24() {
        let long = "x".repeat(80);
        assert_eq!(
            render(format!("{long}y").as_bytes(), 0, 0),
            vec![format!("{long}y")]
        );
        let mut term = Renderer::new(0, 0).term;
        assert_eq!((term.cols, term.rows, term.grid.len()), (80, 24, 24));
        term.print('a', &mut Collect::default());
        assert_eq!(term.grid[0].len, 1);
    }

    #[test]
    fn trailing_blanks_and_trailing_empty_lines_dropped() {
        assert_eq!(r("a   \r\n\r\nb  \r\n\r\n\r\n"), lines(&["a", "", "b"]));
    }

    #[test]
    fn carriage_return_overwrites() {
        assert_eq!(r("hello world\rHELLO\r\n"), lines(&["HELLO world"]));
    }

    #[test]
    fn progress_bar_with_carriage_returns_resolves_to_final_frame() {
        assert_eq!(
            r("[#   ] 25%\r[##  ] 50%\r[####] 100%\r\n"),
            lines(&["[####] 100%"])
        );
    }

    #[test]
    fn backspace_overstrike_keeps_last_char() {
        assert_eq!(r("ab\x08\x08XY\r\n_\x08f\r\n"), lines(&["XY", "f"]));
    }

    #[test]
    fn backspace_at_column_zero_stays() {
        assert_eq!(r("\x08\x08ab\r\n"), lines(&["ab"]));
    }

    #[test]
    fn backspace_at_pending_wrap_moves_onto_last_column() {
        let full = "x".repeat(20);
        assert_eq!(
            r(&format!("{full}\x08Z\r\n")),
            vec![format!("{}Z", "x".repeat(19))]
        );
    }

    #[test]
    fn backspace_reverse_wraps_onto_wrapped_row() {
        let full = "x".repeat(20);
        assert_eq!(
            r(&format!("{full}ab\x08\x08\x08Q\r\n")),
            vec![format!("{}Qab", "x".repeat(19))]
        );
    }

    #[test]
    fn erase_in_line_to_end() {
        assert_eq!(r("abcdef\x1b[3D\x1b[K\r\n"), lines(&["abc"]));
        assert_eq!(r("abcdef\x1b[3D\x1b[0K\r\n"), lines(&["abc"]));
    }

    #[test]
    fn erase_in_line_to_start() {
        assert_eq!(r("abcdef\x1b[3D\x1b[1K\r\n"), lines(&["    ef"]));
    }

    #[test]
    fn erase_whole_line() {
        assert_eq!(r("abcdef\x1b[2Kxy\r\n"), lines(&["      xy"]));
    }

    #[test]
    fn erase_in_line_cuts_wide_char_in_half_blanks_both_halves() {
        assert_eq!(r("ab名cd\x1b[4G\x1b[K\r\n"), lines(&["ab"]));
        assert_eq!(r("ab名cd\x1b[4G\x1b[1K\r\n"), lines(&["    cd"]));
    }

    #[test]
    fn erase_below_cursor() {
        assert_eq!(
            r("one\r\ntwo\r\nthree\x1b[2;2H\x1b[J"),
            lines(&["one", "t"])
        );
    }

    #[test]
    fn erase_above_cursor() {
        assert_eq!(
            r("one\r\ntwo\r\nthree\x1b[2;2H\x1b[1J"),
            lines(&["", "  o", "three"])
        );
    }

    #[test]
    fn clear_screen_keeps_scrollback() {
        assert_eq!(
            r("one\r\n\r\nthree\r\n\x1b[H\x1b[2Jafter\r\n"),
            lines(&["one", "", "three", "after"])
        );
    }

    #[test]
    fn clear_screen_does_not_move_cursor() {
        assert_eq!(r("one\r\ntwo\x1b[2Jx"), lines(&["one", "two", "", "   x"]));
    }

    #[test]
    fn erase_display_from_home_keeps_scrollback() {
        assert_eq!(
            r("one\r\ntwo\r\n\x1b[H\x1b[Jnew\r\n"),
            lines(&["one", "two", "new"])
        );
    }

    #[test]
    fn erase_scrollback_keeps_the_screen() {
        assert_eq!(r("one\r\ntwo\x1b[3Jthree\r\n"), lines(&["one", "twothree"]));
    }

    #[test]
    fn erase_scrollback_drops_what_scrolled_away() {
        // 5 rows: "1" and "2" scrolled off, then ED3.
        assert_eq!(
            r("1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n\x1b[3Jx\r\n"),
            lines(&["3", "4", "5", "6", "x"])
        );
        // A line still being assembled from wrapped rows loses its scrolled-off part.
        assert_eq!(render(b"abcdefghij\x1b[3J\r\n", 3, 2), lines(&["ghij"]));
        // Held-back empty lines went with the scrollback.
        assert_eq!(r("a\r\n\r\n\r\n\r\n\r\n\r\n\x1b[3J\x1b[Hb"), lines(&["b"]));
    }

    #[test]
    fn clear_then_erase_scrollback_is_what_clear_does() {
        // ncurses `clear`: home, erase screen, erase scrollback.
        assert_eq!(r("a\r\n\x1b[H\x1b[2J\x1b[3Jb\r\n"), lines(&["b"]));
        // A clear without ED3 keeps the lines it pushed away.
        assert_eq!(r("a\r\n\x1b[H\x1b[2Jb\r\n"), lines(&["a", "b"]));
    }

    #[test]
    fn erase_display_3_with_a_second_parameter_is_not_erase_scrollback() {
        assert_eq!(
            r("1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n\x1b[3;1Jx"),
            lines(&["1", "2", "3", "4", "5", "6", "x"])
        );
        assert_eq!(
            r("1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n\x1b[3;0Jx"),
            lines(&["3", "4", "5", "6", "x"])
        );
    }

    #[test]
    fn erase_scrollback_during_full_screen_program_is_ignored() {
        assert_eq!(
            r("1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n\x1b[?1049h\x1b[3J\x1b[?1049lx\r\n"),
            lines(&["1", "2", "3", "4", "5", "6", FULL_SCREEN_NOTE, "x"])
        );
    }

    #[test]
    fn erase_scrollback_reaches_the_sink() {
        let mut rd = Renderer::with_line_cap(10, 2, 100);
        let mut rec = Record::default();
        rd.feed_into(b"1\r\n2\r\n3\r\n", &mut rec);
        assert_eq!(rec.0.len(), 2);
        rd.feed_into(b"\x1b[3J", &mut rec);
        assert!(rec.0.is_empty());
        rd.feed_into(b"4\r\n5\r\n", &mut rec);
        rd.finish_into(&mut rec);
        let got: Vec<&str> = rec.0.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(got, ["3", "4", "5"]);
    }

    #[test]
    fn reset_keeps_scrollback() {
        assert_eq!(r("before\r\n\x1bcafter\r\n"), lines(&["before", "after"]));
    }

    #[test]
    fn cursor_up_redraw_resolves_to_last_frame() {
        let mut s = String::new();
        for pct in [0, 50, 100] {
            if pct > 0 {
                s.push_str("\x1b[2A");
            }
            s.push_str(&format!("\rfetch {pct}%\x1b[K\r\nbuild {pct}%\x1b[K\r\n"));
        }
        s.push_str("done\r\n");
        assert_eq!(r(&s), lines(&["fetch 100%", "build 100%", "done"]));
    }

    #[test]
    fn cursor_up_stops_at_top_of_screen() {
        assert_eq!(r("a\r\nb\x1b[9AX"), lines(&["aX", "b"]));
    }

    #[test]
    fn cursor_down_forward_back() {
        assert_eq!(r("ab\x1b[2B\x1b[3Cc\x1b[2Dd"), lines(&["ab", "", "    dc"]));
    }

    #[test]
    fn cursor_forward_stops_at_right_margin() {
        assert_eq!(r("\x1b[99Cx\r\n"), vec![format!("{}x", " ".repeat(19))]);
    }

    #[test]
    fn cursor_position_cup_and_hvp() {
        assert_eq!(r("\x1b[2;3Hx\x1b[1;1fy\x1b[Hz"), lines(&["z", "  x"]));
        assert_eq!(
            r("\x1b[99;99Hx"),
            lines(&["", "", "", "", &format!("{}x", " ".repeat(19))])
        );
    }

    #[test]
    fn cursor_horizontal_and_vertical_absolute() {
        assert_eq!(
            r("\x1b[5Ga\x1b[2Gb\x1b[3dc\x1b[1`d"),
            lines(&[" b  a", "", "d c"])
        );
    }

    #[test]
    fn relative_moves_hpr_vpr() {
        assert_eq!(r("a\x1b[2ab\x1b[1ec"), lines(&["a  b", "    c"]));
    }

    #[test]
    fn next_and_previous_line_go_to_column_zero() {
        assert_eq!(r("abc\x1b[Ed\x1b[Fe"), lines(&["ebc", "d"]));
    }

    #[test]
    fn index_reverse_index_and_next_line() {
        assert_eq!(r("a\x1bDb\x1bMc\x1bEd"), lines(&["a c", "db"]));
    }

    #[test]
    fn reverse_index_at_top_scrolls_down() {
        assert_eq!(r("one\r\x1bMzero\r\n"), lines(&["zero", "one"]));
    }

    #[test]
    fn save_restore_cursor_esc_7_8() {
        assert_eq!(r("ab\x1b7\r\nnext\x1b8X\r\n"), lines(&["abX", "next"]));
    }

    #[test]
    fn save_restore_cursor_csi_s_u() {
        assert_eq!(r("ab\x1b[s\r\nnext\x1b[uX\r\n"), lines(&["abX", "next"]));
        // Restore with nothing saved goes home.
        assert_eq!(r("ab\x1b[uX"), lines(&["Xb"]));
    }

    #[test]
    fn insert_chars_shift_right() {
        assert_eq!(r("abcdef\x1b[4D\x1b[2@--\r\n"), lines(&["ab--cdef"]));
        // Pushed past the right edge: lost.
        let full = "0123456789abcdefghij";
        assert_eq!(
            r(&format!("{full}\r\x1b[3@")),
            vec![format!("   {}", &full[..17])]
        );
    }

    #[test]
    fn delete_chars_shift_left() {
        assert_eq!(r("abcdef\x1b[4D\x1b[2P\r\n"), lines(&["abef"]));
    }

    #[test]
    fn erase_chars_blank_without_shifting() {
        assert_eq!(r("abcdef\x1b[4D\x1b[2X\r\n"), lines(&["ab  ef"]));
    }

    #[test]
    fn insert_lines_push_down_within_screen() {
        assert_eq!(
            r("a\r\nb\r\nc\x1b[2;1H\x1b[Lnew"),
            lines(&["a", "new", "b", "c"])
        );
    }

    #[test]
    fn delete_lines_pull_up() {
        assert_eq!(r("a\r\nb\r\nc\x1b[1;1H\x1b[2M"), lines(&["c"]));
    }

    #[test]
    fn bare_line_feed_keeps_column() {
        assert_eq!(
            r("ab\ncd\x0bef\x0cg\r\n"),
            lines(&["ab", "  cd", "    ef", "      g"])
        );
    }

    #[test]
    fn insert_and_delete_lines_outside_region_do_nothing() {
        let s = "a\r\nb\r\nc\r\nd\r\ne\x1b[1;3r\x1b[5;1H";
        assert_eq!(r(&format!("{s}\x1b[L")), lines(&["a", "b", "c", "d", "e"]));
        assert_eq!(r(&format!("{s}\x1b[M")), lines(&["a", "b", "c", "d", "e"]));
    }

    #[test]
    fn insert_and_delete_lines_keep_column() {
        assert_eq!(r("abc\x1b[Lx"), lines(&["   x", "abc"]));
    }

    #[test]
    fn scroll_region_keeps_header_and_footer() {
        // Header on row 1, footer (progress) on row 5, log scrolling in rows 2-4.
        let mut s = String::from("HEADER\x1b[5;1HFOOTER 0%\x1b[2;4r\x1b[2;1H");
        for i in 0..6 {
            s.push_str(&format!("log {i}\r\n"));
        }
        s.push_str("\x1b7\x1b[5;1HFOOTER 100%\x1b[K\x1b8");
        assert_eq!(
            r(&s),
            lines(&[
                "log 0",
                "log 1",
                "log 2",
                "log 3",
                "HEADER",
                "log 4",
                "log 5",
                "",
                "FOOTER 100%"
            ])
        );
    }

    #[test]
    fn scroll_region_cursor_up_down_clamp_at_margins() {
        assert_eq!(
            r("\x1b[2;3r\x1b[3;1H\x1b[9Aa\x1b[9Bb"),
            lines(&["", "a", " b"])
        );
    }

    #[test]
    fn scroll_up_sends_lines_to_scrollback() {
        assert_eq!(r("a\r\nb\r\nc\x1b[2S"), lines(&["a", "b", "c"]));
        assert_eq!(r("a\r\nb\r\nc\x1b[2Sx"), lines(&["a", "b", "c", "", " x"]));
    }

    #[test]
    fn scroll_down_inserts_blank_lines_at_top() {
        assert_eq!(r("a\r\nb\x1b[1T"), lines(&["", "a", "b"]));
    }

    #[test]
    fn pending_wrap_at_right_margin() {
        let full = "x".repeat(20);
        // Writing the last column does not wrap yet: CR + LF lands on the next row.
        assert_eq!(
            r(&format!("{full}\r\nnext\r\n")),
            vec![full.clone(), "next".into()]
        );
        // The next printable character wraps.
        assert_eq!(r(&format!("{full}y\r\n")), vec![format!("{full}y")]);
        // A cursor move cancels the pending wrap.
        // (CUB counts from the last column.)
        assert_eq!(
            r(&format!("{full}\x1b[DZ\r\n")),
            vec![format!("{}Zx", "x".repeat(18))]
        );
        // Erase to end of line at a pending wrap erases nothing.
        assert_eq!(r(&format!("{full}\x1b[Ky\r\n")), vec![format!("{full}y")]);
    }

    #[test]
    fn auto_wrapped_rows_join_into_one_line() {
        let text = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ";
        assert_eq!(r(&format!("{text}\r\nend\r\n")), lines(&[text, "end"]));
    }

    #[test]
    fn autowrap_off_overwrites_last_column() {
        let text = "abcdefghijklmnopqrstuvwxyz";
        assert_eq!(
            r(&format!("\x1b[?7l{text}\x1b[?7h\r\n")),
            vec![format!("{}z", &text[..19])]
        );
    }

    #[test]
    fn lines_scrolled_off_top_are_kept() {
        let mut s = String::new();
        for i in 0..30_000 {
            s.push_str(&format!("line {i}\r\n"));
        }
        let out = render(s.as_bytes(), 80, 24);
        assert_eq!(out.len(), 30_000);
        assert_eq!(out[0], "line 0");
        assert_eq!(out[29_999], "line 29999");
    }

    #[test]
    fn working_state_stays_screen_sized() {
        let mut rd = Renderer::new(40, 10);
        for i in 0..5_000 {
            rd.feed(format!("\x1b[31mline {i}\x1b[0m {}\r\n", "é".repeat(i % 50)).as_bytes());
        }
        assert_eq!(rd.term.grid.len(), 10);
        assert!(rd.term.grid.iter().all(|row| row.cells.len() == 40));
        // Only the wrapped line still on screen is pending.
        assert!(rd.term.lines.held_bytes() <= 40 * 10 * 4);
        assert!(rd.carry.is_empty());
    }

    #[test]
    fn tab_over_blank_cells_is_kept() {
        assert_eq!(r("name\tsize\r\n\tx\r\n"), lines(&["name\tsize", "\tx"]));
    }

    #[test]
    fn tab_over_text_only_moves_the_cursor() {
        assert_eq!(r("abcdefghij\rab\tX\r\n"), lines(&["abcdefghXj"]));
    }

    #[test]
    fn tab_partly_overwritten_becomes_spaces() {
        assert_eq!(r("a\tb\r\x1b[3Cxy\r\n"), lines(&["a  xy   b"]));
    }

    #[test]
    fn tab_stops_at_last_column() {
        // The last stop is the last column (19), which is not an 8-column stop.
        assert_eq!(r("\t\t\tx\r\n"), lines(&["\t\t   x"]));
        assert_eq!(r("\t\t\t\tx\r\n"), lines(&["\t\t   x"]));
    }

    #[test]
    fn tab_set_clear_and_back_tab() {
        // HTS at column 3, TBC 3 clears all stops, CBT moves back.
        assert_eq!(r("\x1b[3g\x1b[4G\x1bH\r\tx\r\n"), lines(&["   x"]));
        assert_eq!(r("\x1b[3g\tx\r\n"), vec![format!("{}x", " ".repeat(19))]);
        assert_eq!(r("\x1b[13Ga\x1b[2Zb\r\n"), lines(&["b           a"]));
        assert_eq!(r("\x1b[2Ix\r\n"), lines(&["\t\tx"]));
    }

    #[test]
    fn tab_in_wrapped_continuation_uses_spaces_when_stops_differ() {
        // 10 columns: the second row starts at output column 10, so a tab to row column 8
        // is output column 18, not the tab stop 16.
        let out = render(b"0123456789ab\tx\r\n", 10, 3);
        assert_eq!(out, vec![format!("0123456789ab{}x", " ".repeat(6))]);
        // A tab at a pending wrap does nothing (as in tmux).
        assert_eq!(render(b"0123456789\tx\r\n", 10, 3), vec!["0123456789x"]);
    }

    #[test]
    fn wide_chars_take_two_cells() {
        assert_eq!(r("名前x\r\n名\x1b[Dy\r\n"), lines(&["名前x", " y"]));
        assert_eq!(r("名前\x1b[3GX\r\n"), lines(&["名X"]));
    }

    #[test]
    fn wide_char_half_overwritten_is_blanked() {
        assert_eq!(r("名前\x1b[2GX\r\n"), lines(&[" X前"]));
    }

    #[test]
    fn wide_char_at_last_column_wraps_whole() {
        let text = "x".repeat(19);
        assert_eq!(r(&format!("{text}名\r\n")), vec![format!("{text}名")]);
        assert_eq!(render("名".as_bytes(), 1, 2), Vec::<String>::new());
    }

    #[test]
    fn combining_mark_attaches_to_previous_cell() {
        assert_eq!(r("e\u{301}te\u{301}\r\n"), lines(&["e\u{301}te\u{301}"]));
        assert_eq!(r("名\u{301}x\r\n"), lines(&["名\u{301}x"]));
        // Nothing to attach to at column 0.
        assert_eq!(r("\u{301}a\r\n"), lines(&["a"]));
        // Overwriting the base drops its marks.
        assert_eq!(r("e\u{301}\rx\r\n"), lines(&["x"]));
    }

    /// `text`, then `|` at column 11: the line as rendered, to see the columns `text` took.
    fn at_col_11(text: &str) -> String {
        render(format!("{text}\x1b[11G|\r\n").as_bytes(), 20, 5).remove(0)
    }

    #[test]
    fn emoji_zwj_sequence_takes_the_width_of_its_first_pictograph() {
        assert_eq!(at_col_11("👩\u{200d}💻x"), "👩\u{200d}💻x       |");
        assert_eq!(
            at_col_11("👨\u{200d}👩\u{200d}👧x"),
            "👨\u{200d}👩\u{200d}👧x       |"
        );
        // A narrow first pictograph: one column (🏳️‍🌈, ❤‍🔥).
        assert_eq!(
            at_col_11("🏳\u{fe0f}\u{200d}🌈x"),
            "🏳\u{fe0f}\u{200d}🌈x        |"
        );
        assert_eq!(at_col_11("❤\u{200d}🔥x"), "❤\u{200d}🔥x        |");
    }

    #[test]
    fn variation_selectors_and_keycaps_keep_the_base_width() {
        assert_eq!(at_col_11("❤\u{fe0f}x"), "❤\u{fe0f}x        |");
        assert_eq!(at_col_11("❤\u{fe0e}x"), "❤\u{fe0e}x        |");
        assert_eq!(
            at_col_11("1\u{fe0f}\u{20e3}x"),
            "1\u{fe0f}\u{20e3}x        |"
        );
        assert_eq!(at_col_11("⌚\u{fe0e}x"), "⌚\u{fe0e}x       |");
    }

    #[test]
    fn flags_and_emoji_modifiers_take_a_cell_per_code_point() {
        // Regional indicators are one column each: a flag is two.
        assert_eq!(at_col_11("🇫🇷x"), "🇫🇷x       |");
        // An emoji modifier is wide on its own (as in tmux): 👍🏽 is four columns, and a ZWJ
        // sequence after it still joins.
        assert_eq!(at_col_11("👍🏽x"), "👍🏽x     |");
        assert_eq!(at_col_11("👩🏽\u{200d}💻x"), "👩🏽\u{200d}💻x     |");
    }

    #[test]
    fn zwj_joins_only_inside_an_emoji_sequence() {
        // Not after a letter (no cluster continues there), nor after anything else came.
        assert_eq!(at_col_11("a\u{200d}bx"), "a\u{200d}bx       |");
        assert_eq!(at_col_11("名\u{200d}名x"), "名\u{200d}名x     |");
        assert_eq!(at_col_11("👩\u{200d}\x1b[m💻x"), "👩\u{200d}💻x     |");
        assert_eq!(
            at_col_11("👩\u{200d}\u{200b}💻x"),
            "👩\u{200d}\u{200b}💻x     |"
        );
    }

    #[test]
    fn clusters_wrap_and_overwrite_like_their_first_cell() {
        // The sequence at the last two columns joins there; the next character wraps.
        let pad = "-".repeat(18);
        assert_eq!(
            r(&format!("{pad}👩\u{200d}💻x\r\n")),
            vec![format!("{pad}👩\u{200d}💻x")]
        );
        // At the last column it does not fit: it wraps whole, then joins.
        let pad = "-".repeat(19);
        assert_eq!(
            r(&format!("{pad}👩\u{200d}💻x\r\n")),
            vec![format!("{pad}👩\u{200d}💻x")]
        );
        // Overwriting either half blanks the whole sequence.
        assert_eq!(r("👩\u{200d}💻x\x1b[3Dz\r\n"), lines(&["z x"]));
        assert_eq!(r("👩\u{200d}💻x\x1b[2Dz\r\n"), lines(&[" zx"]));
    }

    #[test]
    fn invalid_utf8_becomes_replacement_char() {
        assert_eq!(
            render(b"a\xffb\xe2\x82c\r\n", 20, 5),
            lines(&["a\u{fffd}b\u{fffd}c"])
        );
    }

    #[test]
    fn sgr_and_other_sequences_are_dropped() {
        assert_eq!(
            r("\x1b[1;31mred\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[m\x1b[?25l\x1b[>4;1m\r\n"),
            lines(&["red rgb"])
        );
    }

    #[test]
    fn osc_dcs_apc_pm_sos_are_dropped() {
        let s = "\x1b]0;title\x07a\x1b]2;t\x1b\\b\x1bPqpayload\x1b\\c\x1b_apc\x1b\\d\x1b^pm\x1b\\e\x1bXsos\x1b\\f\r\n";
        assert_eq!(r(s), lines(&["abcdef"]));
    }

    #[test]
    fn hyperlink_keeps_text() {
        assert_eq!(
            r("see \x1b]8;;https://example.com\x1b\\the docs\x1b]8;;\x1b\\ now\r\n"),
            lines(&["see the docs now"])
        );
    }

    #[test]
    fn delete_char_is_not_printed() {
        assert_eq!(r("a\x7fb\r\n"), lines(&["ab"]));
    }

    #[test]
    fn alt_screen_becomes_one_line() {
        assert_eq!(
            r("before\r\n\x1b[?1049h\x1b[H\x1b[2Jeditor\r\n~\r\n~\x1b[?1049lafter\r\n"),
            lines(&["before", FULL_SCREEN_NOTE, "after"])
        );
    }

    #[test]
    fn alt_screen_1049_restores_cursor() {
        assert_eq!(
            r("$ vim\r\nab\x1b[?1049h\x1b[5;5Hjunk\x1b[?1049lc\r\n"),
            lines(&["$ vim", FULL_SCREEN_NOTE, "abc"])
        );
    }

    #[test]
    fn alt_screen_47_and_1047_restore_main_screen() {
        for mode in ["47", "1047"] {
            let s = format!("one\r\n\x1b[?{mode}h\x1b[2Jjunk\x1b[H\x1b[?{mode}ltwo\r\n");
            assert_eq!(
                r(&s),
                lines(&["one", FULL_SCREEN_NOTE, "two"]),
                "mode {mode}"
            );
        }
    }

    #[test]
    fn alt_screen_note_once_per_visit() {
        // The second 1049l restores the cursor saved by the first 1049h again (as tmux does):
        // `b` overwrites `y`.
        let visit = "\x1b[?1049hx\x1b[?1049h\x1b[?1049ly\x1b[?1049l";
        assert_eq!(
            r(&format!("a\r\n{visit}b\r\n{visit}c\r\n")),
            lines(&["a", FULL_SCREEN_NOTE, "b", FULL_SCREEN_NOTE, "c"])
        );
    }

    #[test]
    fn alt_screen_scrolling_and_clearing_emit_nothing() {
        let mut s = String::from("main\r\n\x1b[?1049h");
        for i in 0..20 {
            s.push_str(&format!("alt {i}\r\n"));
        }
        s.push_str("\x1b[2J\x1bc");
        assert_eq!(r(&s), lines(&["main", FULL_SCREEN_NOTE]));
    }

    #[test]
    fn finish_inside_alt_screen_keeps_main_screen() {
        assert_eq!(
            r("main\r\n\x1b[?1049hdrawn"),
            lines(&["main", FULL_SCREEN_NOTE])
        );
    }

    /// `bytes` on a 20x5 terminal with last screens shown as `mode` says, program `prog`.
    fn screens(bytes: &str, mode: Screens) -> Vec<String> {
        let mut r = Renderer::new(20, 5).with_screens(mode, Some("prog".into()));
        r.feed(bytes.as_bytes());
        r.finish()
    }

    #[test]
    fn alt_screen_leaves_its_last_screen() {
        let s = "before\r\n\x1b[?1049h\x1b[H\x1b[2Jfirst\r\n\r\n\x1b[5;1H(END)\x1b[?1049lafter\r\n";
        let whole = lines(&[
            "before",
            "[full-screen program: prog; its last screen:]",
            "first",
            "",
            "",
            "",
            "(END)",
            "[end of the screen]",
            "after",
        ]);
        assert_eq!(screens(s, Screens::Full), whole);
        // Five rows fit the brief form whole.
        assert_eq!(screens(s, Screens::Brief), whole);
        assert_eq!(
            screens(s, Screens::Note),
            lines(&["before", FULL_SCREEN_NOTE, "after"])
        );
    }

    #[test]
    fn a_tall_last_screen_is_cut_to_its_first_and_last_rows() {
        let mut s = String::from("$ less f\r\n\x1b[?1049h");
        for i in 1..=12 {
            s.push_str(&format!("\x1b[{i};1Hrow {i}"));
        }
        s.push_str("\x1b[?1049l$ \r\n");
        let mut r = Renderer::new(20, 12).with_screens(Screens::Brief, None);
        r.feed(s.as_bytes());
        assert_eq!(
            r.finish(),
            lines(&[
                "$ less f",
                "[full-screen program; its last screen, first and last rows:]",
                "row 1",
                "row 2",
                "row 3",
                "[6 more rows]",
                "row 10",
                "row 11",
                "row 12",
                "[end of the screen]",
                "$",
            ])
        );
    }

    #[test]
    fn a_screen_cleared_on_the_way_out_leaves_what_it_showed_before() {
        let s = "\x1b[?1049hshown\x1b[H\x1b[2Jagain\x1b[H\x1b[2J\x1b[?1049l";
        assert_eq!(
            screens(s, Screens::Full),
            lines(&[
                "[full-screen program: prog; its last screen:]",
                "again",
                "[end of the screen]"
            ])
        );
        // A screen never drawn leaves the header alone.
        assert_eq!(
            screens("a\r\n\x1b[?1049h\x1b[?1049lb\r\n", Screens::Full),
            lines(&["a", "[full-screen program: prog]", "b"])
        );
    }

    #[test]
    fn a_program_still_running_leaves_its_screen_and_the_main_screen_after() {
        assert_eq!(
            screens("main\r\nkept\x1b[?1049hdrawn", Screens::Brief),
            lines(&[
                "main",
                "[full-screen program: prog; its last screen:]",
                // 1049 keeps the cursor where it was: column 4.
                "    drawn",
                "[end of the screen]",
                "kept"
            ])
        );
    }

    #[test]
    fn screens_are_kept_for_at_most_max_screens_visits() {
        let visit = "\x1b[?1049hx\x1b[?1049l";
        let out = screens(&visit.repeat(MAX_SCREENS + 2), Screens::Full);
        let headers = out.iter().filter(|l| l.starts_with("[full-screen")).count();
        let kept = out.iter().filter(|l| *l == "x").count();
        assert_eq!((headers, kept), (MAX_SCREENS + 2, MAX_SCREENS));
        assert_eq!(out.last().unwrap(), "[full-screen program: prog]");
    }

    #[test]
    fn dec_special_graphics_draw_lines() {
        assert_eq!(
            r("\x1b(0lqqk\x1b(B ok\r\n\x1b(0x\x1b(Bab\x1b(0x\r\n\x1b(0mqvqj\x1b(B\r\n"),
            lines(&["┌──┐ ok", "│ab│", "└─┴─┘"])
        );
        // The whole VT100 table, `_` (a blank) to `~`.
        let all: String = (0x5f_u8..=0x7e).map(char::from).collect();
        assert_eq!(
            r(&format!("\x1b(0{all}\r\n")),
            lines(&[" ◆▒␉␌␍␊°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·"])
        );
        // Letters below `_` and digits are as they are.
        assert_eq!(r("\x1b(0AZ09\r\n"), lines(&["AZ09"]));
    }

    #[test]
    fn shift_out_and_in_switch_between_g1_and_g0() {
        // G1 designated as line drawing; SO uses it, SI goes back to G0 (ASCII).
        assert_eq!(r("\x1b)0a\x0eqq\x0fqq\x0eq\r\n"), lines(&["a──qq─"]));
        // SO before G1 is designated prints ASCII; G0 graphics with SI.
        assert_eq!(r("\x0eq\x1b)0q\x0f\x1b(0q\r\n"), lines(&["q──"]));
    }

    #[test]
    fn charsets_are_saved_with_the_cursor_and_reset() {
        assert_eq!(
            r("a\x1b(0\x1b7\x1b(Bq\x1b8q\r\n\x1bcq\r\n"),
            lines(&["a─", "q"])
        );
    }

    #[test]
    fn decaln_fills_the_screen_with_e() {
        // It overwrites the whole screen, resets the margins and homes the cursor.
        let s = "gone\r\n\x1b[2;4r\x1b#8\x1b[3;2Hx\x1b[Hy";
        let e = "E".repeat(20);
        let x = format!("ExE{}", "E".repeat(17));
        let y = format!("y{}", "E".repeat(19));
        assert_eq!(r(s), vec![y, e.clone(), x, e.clone(), e]);
    }

    #[test]
    fn repeat_last_char() {
        assert_eq!(r("a\x1b[4b-\r\n"), lines(&["aaaaa-"]));
    }

    #[test]
    fn repeat_needs_a_char_printed_just_before() {
        assert_eq!(r("a\x08\x1b[4b\r\n"), lines(&["a"]));
        assert_eq!(r("a\x1b[m\x1b[4b\r\n"), lines(&["a"]));
        assert_eq!(r("a\x1b[2b\x1b[2b\r\n"), lines(&["aaa"]));
    }

    #[test]
    fn repeat_stops_at_end_of_line() {
        assert_eq!(r("a\x1b[99b\r\nb\r\n"), vec!["a".repeat(20), "b".into()]);
    }

    #[test]
    fn insert_mode_shifts_text() {
        assert_eq!(r("abcdef\r\x1b[4hXY\x1b[4l\r\n"), lines(&["XYabcdef"]));
    }

    #[test]
    fn origin_mode_positions_relative_to_region() {
        assert_eq!(
            r("\x1b[3;4r\x1b[?6h\x1b[1;1Hx\x1b[9;1Hy\x1b[?6l"),
            lines(&["", "", "x", "y"])
        );
    }

    #[test]
    fn feed_split_mid_utf8_and_escape() {
        let bytes = "x\x1b[31m名\x1b]8;;u\x1b\\é\x1b[2Dz\r\n".as_bytes();
        let whole = render(bytes, 20, 5);
        for i in 0..bytes.len() {
            let mut rd = Renderer::new(20, 5);
            rd.feed(&bytes[..i]);
            rd.feed(&bytes[i..]);
            assert_eq!(rd.finish(), whole, "split at {i}");
        }
    }

    /// Every call a `vte` parser makes, in order.
    #[derive(Default)]
    struct Calls(Vec<String>);

    impl Perform for Calls {
        fn print(&mut self, c: char) {
            self.0.push(format!("print {c:?}"));
        }
        fn execute(&mut self, byte: u8) {
            self.0.push(format!("execute {byte:#x}"));
        }
        fn hook(&mut self, params: &Params, inter: &[u8], ignore: bool, action: char) {
            self.0
                .push(format!("hook {params:?} {inter:?} {ignore} {action:?}"));
        }
        fn put(&mut self, byte: u8) {
            self.0.push(format!("put {byte:#x}"));
        }
        fn unhook(&mut self) {
            self.0.push("unhook".into());
        }
        fn osc_dispatch(&mut self, params: &[&[u8]], bell: bool) {
            self.0.push(format!("osc {params:?} {bell}"));
        }
        fn csi_dispatch(&mut self, params: &Params, inter: &[u8], ignore: bool, action: char) {
            self.0
                .push(format!("csi {params:?} {inter:?} {ignore} {action:?}"));
        }
        fn esc_dispatch(&mut self, inter: &[u8], ignore: bool, byte: u8) {
            self.0.push(format!("esc {inter:?} {ignore} {byte:#x}"));
        }
    }

    /// A 64 KiB chunk of Latin-1 text (an invalid byte every few) costs `vte` about one pass
    /// over it, not one per invalid byte: the parser is handed pieces ending after each.
    #[test]
    fn advance_hands_vte_one_invalid_sequence_at_a_time() {
        let chunk: Vec<u8> = b"caf\xe9 cr\xe8me \xff\xfe\x80 d\xe9j\xe0 vu\r\n".repeat(2000);
        let (mut count, mut longest) = (0, 0);
        let mut rest: &[u8] = &chunk;
        while !rest.is_empty() {
            let end = piece_end(rest);
            count += 1;
            longest = longest.max(end);
            rest = &rest[end..];
        }
        // Seven invalid sequences a repeat, and the text after the last; the longest piece is
        // " vu\r\ncaf\xe9".
        assert_eq!(count, 7 * 2000 + 1);
        assert_eq!(longest, 9);
    }

    /// Bytes biased towards the sequences the renderer interprets.
    fn token() -> impl Strategy<Value = Vec<u8>> {
        let csi = (
            proptest::collection::vec(0u16..30, 0..3),
            prop::sample::select(b"@ABCDEFGHIJKLMPSTXZ`abdefghlmrsu".to_vec()),
            any::<bool>(),
        )
            .prop_map(|(ps, fin, private)| {
                let ps: Vec<String> = ps.iter().map(|p| p.to_string()).collect();
                let q = if private { "?" } else { "" };
                format!("\x1b[{q}{}{}", ps.join(";"), fin as char).into_bytes()
            });
        prop_oneof![
            4 => "[a-z ]{1,8}".prop_map(String::into_bytes),
            2 => prop::sample::select(vec![
                "\r\n", "\r", "\n", "\x08", "\t", "\x1b7", "\x1b8", "\x1bM", "\x1bD", "\x1bE",
                "\x1bc", "\x1b[?1049h", "\x1b[?1049l", "\x1b[?47h", "\x1b[?47l", "\x1b[2J",
                "\x1b]8;;x\x1b\\", "\x1b]0;t\x07", "\x1bPq\x1b\\", "名", "é", "\u{301}", "🎉",
                "\x1b[3J", "\u{200d}", "👩\u{200d}💻", "🏽", "🇫", "\u{fe0f}", "❤",
            ])
            .prop_map(|s| s.as_bytes().to_vec()),
            2 => csi,
            1 => proptest::collection::vec(any::<u8>(), 1..6),
        ]
    }

    fn stream() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(token(), 0..120).prop_map(|t| t.concat())
    }

    proptest! {
        #[test]
        fn chunk_splits_do_not_change_output(
            bytes in stream(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
            cols in 1u16..30,
            rows in 1u16..8,
        ) {
            let whole = render(&bytes, cols, rows);
            let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
            at.sort_unstable();
            let mut rd = Renderer::new(cols, rows);
            let mut prev = 0;
            for a in at {
                rd.feed(&bytes[prev..a]);
                prev = a;
            }
            rd.feed(&bytes[prev..]);
            prop_assert_eq!(rd.finish(), whole);
        }

        /// [`advance`] makes exactly the calls one `vte` `advance` over the same bytes makes.
        #[test]
        fn advance_in_pieces_is_one_advance(
            bytes in prop_oneof![
                stream(),
                proptest::collection::vec(any::<u8>(), 0..600),
                proptest::collection::vec(
                    prop::sample::select(vec![
                        b'a', b'\r', b'\n', 0x1b, b'[', b'1', b';', b'm', b']', 0x07, 0x80,
                        0x85, 0x9b, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe9, 0xed, 0xef,
                        0xf0, 0xf4, 0xf5, 0xff,
                    ]),
                    0..600,
                ),
            ],
        ) {
            let mut whole = Calls::default();
            Parser::new().advance(&mut whole, &bytes);
            let mut pieces = Calls::default();
            advance(&mut Parser::new(), &mut pieces, &bytes);
            prop_assert_eq!(pieces.0, whole.0);
        }

        #[test]
        fn byte_soup_never_panics_and_has_no_control_chars(
            bytes in prop_oneof![stream(), proptest::collection::vec(any::<u8>(), 0..3000)],
            cols in 0u16..40,
            rows in 0u16..10,
        ) {
            for line in render(&bytes, cols, rows) {
                prop_assert!(
                    !line.chars().any(|c| c.is_control() && c != '\t'),
                    "control char in {:?}", line
                );
                prop_assert!(!line.ends_with([' ', '\t']), "untrimmed {:?}", line);
            }
        }

        #[test]
        fn printable_ascii_lines_round_trip(
            text in proptest::collection::vec("[ -~]{0,39}", 0..60),
            rows in 1u16..10,
        ) {
            let bytes: String = text.iter().map(|l| format!("{l}\r\n")).collect();
            let mut expected: Vec<String> =
                text.iter().map(|l| l.trim_end().to_string()).collect();
            while expected.last().is_some_and(|l| l.is_empty()) {
                expected.pop();
            }
            prop_assert_eq!(render(bytes.as_bytes(), 40, rows), expected);
        }
    }

    /// Records what a streaming renderer hands over.
    #[derive(Default)]
    struct Record(Vec<(String, u64, String)>);

    impl LineSink for Record {
        fn line(&mut self, l: Line<'_>) {
            self.0
                .push((l.head.to_string(), l.omitted, l.tail.to_string()));
        }
        fn erase_scrollback(&mut self) {
            self.0.clear();
        }
    }

    /// Feed `bytes` cut at `cuts` into a renderer with `cap` (None: `new`), streaming.
    fn stream_lines(
        bytes: &[u8],
        cuts: &[usize],
        cols: u16,
        rows: u16,
        cap: Option<usize>,
    ) -> Vec<(String, u64, String)> {
        let mut rd = match cap {
            Some(c) => Renderer::with_line_cap(cols, rows, c),
            None => Renderer::new(cols, rows),
        };
        let mut rec = Record::default();
        let mut prev = 0;
        for &a in cuts {
            rd.feed_into(&bytes[prev..a], &mut rec);
            prev = a;
        }
        rd.feed_into(&bytes[prev..], &mut rec);
        rd.finish_into(&mut rec);
        rec.0
    }

    /// What a line of `finish()` becomes under `cap`.
    fn clip_line(line: &str, cap: usize) -> (String, u64, String) {
        clip_whole(line, cap)
    }

    /// Byte soup with long auto-wrapped lines, blank runs, CRs, clears and the alternate screen.
    fn long_line_stream() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            3 => token(),
            2 => "[a-z]{20,200}".prop_map(String::into_bytes),
            1 => " {1,90}".prop_map(String::into_bytes),
            1 => "(\\t| ){1,12}".prop_map(|s| s.replace("\\t", "\t").into_bytes()),
            1 => prop::sample::select(vec![
                "\r", "\r\n", "\r\n\r\n\r\n", "\x1b[2J", "\x1b[H\x1b[2J", "\x1bc", "\x1b[3J",
                "\x1b[?1049h", "\x1b[?1049l", "\x1b[K", "\x1b[3A", "名", "é", "\u{301}",
            ])
            .prop_map(|s| s.as_bytes().to_vec()),
        ];
        proptest::collection::vec(piece, 0..80).prop_map(|t| t.concat())
    }

    fn sorted_cuts(cuts: &[prop::sample::Index], len: usize) -> Vec<usize> {
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(len + 1)).collect();
        at.sort_unstable();
        at
    }

    proptest! {
        #[test]
        fn streaming_without_cap_equals_finish(
            bytes in prop_oneof![long_line_stream(), stream()],
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
            cols in 1u16..30,
            rows in 1u16..8,
        ) {
            let whole = render(&bytes, cols, rows);
            let got = stream_lines(&bytes, &sorted_cuts(&cuts, bytes.len()), cols, rows, None);
            let expected: Vec<(String, u64, String)> =
                whole.iter().map(|l| (l.clone(), 0, String::new())).collect();
            prop_assert_eq!(got, expected);
        }

        #[test]
        fn streaming_with_cap_clips_the_lines_of_finish(
            bytes in prop_oneof![long_line_stream(), stream()],
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
            cols in 1u16..30,
            rows in 1u16..8,
            cap in 0usize..50,
        ) {
            let whole = render(&bytes, cols, rows);
            let got = stream_lines(&bytes, &sorted_cuts(&cuts, bytes.len()), cols, rows, Some(cap));
            let expected: Vec<(String, u64, String)> =
                whole.iter().map(|l| clip_line(l, cap)).collect();
            prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn with_line_cap_collects_clipped_lines_in_finish() {
        let mut rd = Renderer::with_line_cap(10, 3, 6);
        rd.feed(b"abcdefghijklmnopqrstuvwxyz\r\nshort\r\n");
        assert_eq!(rd.finish(), lines(&["abc[20 chars omitted]xyz", "short"]));
    }

    #[test]
    fn streaming_hands_lines_over_as_soon_as_they_are_final() {
        let mut rd = Renderer::with_line_cap(10, 2, 100);
        let mut rec = Record::default();
        rd.feed_into(b"one\r\ntwo\r\n", &mut rec);
        // "one" scrolled off a 2-row screen; "two" is still on it.
        assert_eq!(rec.0, vec![("one".to_string(), 0, String::new())]);
        rd.feed_into(b"\r\n\r\n", &mut rec);
        // Empty lines are held back until something non-empty follows.
        assert_eq!(rec.0.len(), 2);
        rd.feed_into(b"x\r\n\r\n", &mut rec);
        assert_eq!(rec.0.len(), 5);
        rd.feed_into(b"\r\n\r\n", &mut rec);
        rd.finish_into(&mut rec);
        let got: Vec<&str> = rec.0.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(got, ["one", "two", "", "", "x"]);
    }

    /// 200 MB of one line without a newline, generated on the fly: memory stays bounded and the
    /// line keeps its first and last 4096 chars. Fast enough in debug builds? It takes a while
    /// there, so it is ignored by default; `cargo bench --bench render` runs the same check in
    /// release mode, and `cargo test --release -- --ignored` runs it here.
    #[test]
    #[ignore = "slow in debug builds; run by the render bench and with --release --ignored"]
    fn a_200_mb_line_keeps_head_and_tail_in_bounded_memory() {
        huge_line_check(200 * 1000 * 1000);
    }

    #[test]
    fn a_long_run_of_blanks_inside_a_line_is_held_in_bounded_memory() {
        let mut rd = Renderer::with_line_cap(80, 5, 64);
        let mut rec = Record::default();
        rd.feed_into(b"a", &mut rec);
        let blanks = vec![b' '; 65_536];
        let mut max_held = 0;
        for _ in 0..32 {
            rd.feed_into(&blanks, &mut rec);
            max_held = max_held.max(rd.term.lines.held_bytes());
        }
        rd.feed_into(b"b\r\n", &mut rec);
        rd.finish_into(&mut rec);
        let n = 32 * 65_536 + 2;
        assert_eq!(
            rec.0,
            vec![(
                format!("a{}", " ".repeat(31)),
                (n - 64) as u64,
                format!("{}b", " ".repeat(31))
            )]
        );
        assert!(max_held < 1024, "held {max_held} bytes");
    }

    #[test]
    fn a_20_mb_line_keeps_head_and_tail_in_bounded_memory() {
        huge_line_check(20 * 1000 * 1000);
    }

    fn huge_line_check(total: usize) {
        const CAP: usize = 8192;
        let mut rd = Renderer::with_line_cap(120, 50, CAP);
        let mut rec = Record::default();
        // Position-dependent text so that head and tail can be checked: byte i is digit i % 10
        // ... except the last 3 bytes, "END".
        let chunk: Vec<u8> = (0..65_536u32).map(|i| b'0' + (i % 10) as u8).collect();
        let mut sent = 0;
        let mut max_held = 0;
        while sent < total {
            let n = chunk.len().min(total - sent);
            // 65536 is not a multiple of 10: shift so that the digit of byte i is i % 10.
            let shift = sent % 10;
            let mut piece = chunk[shift..].to_vec();
            piece.extend_from_slice(&chunk[..shift]);
            piece.truncate(n);
            if sent + n == total {
                piece[n - 3..].copy_from_slice(b"END");
            }
            rd.feed_into(&piece, &mut rec);
            sent += n;
            max_held = max_held.max(rd.term.lines.held_bytes());
        }
        assert!(rec.0.is_empty(), "nothing is final before the end");
        rd.finish_into(&mut rec);
        assert_eq!(rec.0.len(), 1);
        let (head, omitted, tail) = &rec.0[0];
        let digits = |from: usize, n: usize| -> String {
            (from..from + n)
                .map(|i| char::from(b'0' + (i % 10) as u8))
                .collect()
        };
        assert_eq!(*head, digits(0, CAP / 2));
        assert_eq!(*omitted, (total - CAP) as u64);
        assert_eq!(
            *tail,
            format!("{}END", digits(total - CAP / 2, CAP / 2 - 3))
        );
        // Head, a rolling tail of at most twice its size, one row of scratch, slack.
        assert!(max_held < 8 * CAP, "held {max_held} bytes");
    }

    #[test]
    fn split_code_point_does_not_swallow_following_bytes() {
        // vte 0.15.0 alone loses the `\r` here when fed in two pieces.
        let bytes = b"abc\xc2\x80\rX\r\n";
        let whole = render(bytes, 20, 5);
        assert_eq!(whole, lines(&["Xbc"]));
        let mut rd = Renderer::new(20, 5);
        rd.feed(&bytes[..4]);
        rd.feed(&bytes[4..]);
        assert_eq!(rd.finish(), whole);
    }

    #[test]
    fn incomplete_utf8_tail_lengths() {
        assert_eq!(incomplete_utf8_tail(b"abc"), 0);
        assert_eq!(incomplete_utf8_tail(b"a\xe2"), 1);
        assert_eq!(incomplete_utf8_tail(b"a\xe2\x82"), 2);
        assert_eq!(incomplete_utf8_tail(b"a\xe2\x82\xac"), 0);
        assert_eq!(incomplete_utf8_tail(b"\xf0\x9f\x8e"), 3);
        assert_eq!(incomplete_utf8_tail(b"\x80\x80"), 0);
        assert_eq!(incomplete_utf8_tail(b"\xff"), 0);
    }
}
