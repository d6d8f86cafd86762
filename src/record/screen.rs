//! The rows the shell's line editor draws on, modelled well enough to read back what the user
//! typed: a grid of cells that knows which rows the terminal *wrapped* (the cursor ran past
//! the right margin and continued on the next row) and which ended in a line break.
//!
//! The recorder feeds it from the prompt to the output start, and reads a command line as the
//! cells from the cursor position at the prompt's end, row after wrapped row. Line editors
//! move the cursor with carriage returns, cursor-up and cursor-forward while editing a line
//! longer than the terminal (readline finishes a full row with " \r" to force the wrap); only
//! the wrap flags say where the typed text continues, so the text is exact for any length and
//! width, with leading white space as typed.
//!
//! Terminal semantics followed (xterm's): printing in the last column leaves the cursor there
//! with a wrap pending; the next printable character wraps first and marks the row wrapped;
//! a carriage return, a cursor move or an erase cancels the pending wrap. An erase that
//! reaches the right margin (EL, ED, DCH, ECH) unmarks the row: it no longer runs on.
//!
//! This is the recorder's own small model, not the renderer of `crate::term`: it needs
//! positions and wrap flags, which the renderer's line API does not expose.
//!
//! Memory is bounded: a cell is 4 bytes, and a drawing of more than [`MAX_CELLS`] cells (a
//! line of a million chars or more) keeps its first half and its last quarter or more; rows in
//! between, long scrolled off and out of the cursor's reach, are dropped and counted, and a line
//! read across them is cut there ([`LineBuilder::skip`]).

use crate::record::line::{COMMAND_LINE_CAP, LineBuilder};
use unicode_width::UnicodeWidthChar;
use vte::{Params, Parser, Perform};

/// Most cells kept: twice the longest command line stored whole, so a line of
/// [`COMMAND_LINE_CAP`] wide chars is still read whole.
pub const MAX_CELLS: usize = 2 * COMMAND_LINE_CAP + 64 * 1024;
/// Most rows kept, whatever the width.
const MAX_ROWS: usize = 256 * 1024;
/// Most characters with combining marks remembered; more marks are left out of the model.
const MAX_CLUSTERS: usize = 64 * 1024;

/// A position in the model: row index (from the first row fed after a reset, dropped rows
/// included) and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub row: usize,
    pub col: usize,
}

/// A cell: [`EMPTY`], [`TAIL`] (the right half of a wide character), a character, or a
/// character with combining marks (an index into the clusters).
type Cell = u32;
const EMPTY: Cell = 0;
const TAIL: Cell = 1;
const CHAR_BASE: u32 = 2;
const CLUSTER_BASE: u32 = 0x11_0000 + CHAR_BASE;

fn char_cell(c: char) -> Cell {
    c as u32 + CHAR_BASE
}

#[derive(Debug, Clone)]
struct Row {
    cells: Vec<Cell>,
    wrapped: bool,
}

impl Row {
    fn new(cols: usize) -> Row {
        Row {
            cells: vec![EMPTY; cols],
            wrapped: false,
        }
    }
}

/// Rows dropped from the middle of a drawing: rows `at .. at + rows` are gone and held `chars`
/// characters.
#[derive(Debug, Clone, Copy, Default)]
struct Hole {
    at: usize,
    rows: usize,
    chars: u64,
}

struct Grid {
    cols: usize,
    rows: usize,
    /// The rows kept: those before the hole, then those after it.
    lines: Vec<Row>,
    hole: Hole,
    clusters: Vec<Box<str>>,
    cur: Pos,
    pending_wrap: bool,
    insert: bool,
    saved: Option<Pos>,
    /// Where the line editor last turned bracketed paste off: the end of its input.
    editor_end: Option<Pos>,
}

pub struct Screen {
    parser: Parser,
    grid: Grid,
    /// An incomplete UTF-8 sequence from the end of the last feed (vte mishandles a code point
    /// split across two `advance` calls).
    carry: Vec<u8>,
}

impl Screen {
    pub fn new(cols: u16, rows: u16) -> Screen {
        let cols = usize::from(cols.max(1));
        let rows = usize::from(rows.max(1));
        Screen {
            parser: Parser::new(),
            grid: Grid {
                cols,
                rows,
                lines: vec![Row::new(cols)],
                hole: Hole::default(),
                clusters: Vec::new(),
                cur: Pos { row: 0, col: 0 },
                pending_wrap: false,
                insert: false,
                saved: None,
                editor_end: None,
            },
            carry: Vec::new(),
        }
    }

    /// The terminal was resized: later bytes are drawn at the new width. Rows already drawn
    /// are cut or padded to it, not reflowed (line editors redraw the line anyway).
    pub fn resize(&mut self, cols: u16, rows: u16) {
        let g = &mut self.grid;
        g.cols = usize::from(cols.max(1));
        g.rows = usize::from(rows.max(1));
        for row in &mut g.lines {
            row.cells.resize(g.cols, EMPTY);
            if row.cells.last() == Some(&TAIL) {
                // Half of a wide character is no character.
                let n = row.cells.len();
                row.cells[n - 1] = EMPTY;
                if n >= 2 {
                    row.cells[n - 2] = EMPTY;
                }
            }
        }
        g.cur.col = g.cur.col.min(g.cols - 1);
        g.pending_wrap = false;
        g.bound();
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        let mut joined;
        let bytes = if self.carry.is_empty() {
            bytes
        } else {
            joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(bytes);
            &joined[..]
        };
        let end = bytes.len() - crate::term::render::incomplete_utf8_tail(bytes);
        crate::term::render::advance(&mut self.parser, &mut self.grid, &bytes[..end]);
        self.carry = bytes[end..].to_vec();
    }

    pub fn cursor(&self) -> Pos {
        self.grid.cur
    }

    /// Forgets where the line editor last ended (a new line of input starts).
    pub fn clear_editor_end(&mut self) {
        self.grid.editor_end = None;
    }

    /// Where the line editor ended its input (bracketed paste turned off), if it did since the
    /// last [`Screen::clear_editor_end`].
    pub fn editor_end(&self) -> Option<Pos> {
        self.grid.editor_end
    }

    /// Cells the model holds (tests).
    pub fn cells(&self) -> usize {
        self.grid.lines.len() * self.grid.cols
    }

    /// Pushes the text from `start` on, through every row the terminal wrapped, stopping before
    /// `end` (exclusive), to `out`; returns the first position after it. Cells never written in
    /// the middle of the text read as spaces; at its end they are not text. Dropped rows on the
    /// way are skipped, counted in `out`.
    pub fn read_line(&self, start: Pos, end: Option<Pos>, out: &mut LineBuilder) -> Pos {
        let g = &self.grid;
        let mut row = start.row;
        let mut col = start.col;
        let mut text = String::new();
        let mut gap = 0usize;
        let stop = |p: Pos| end.is_some_and(|e| p >= e);
        loop {
            if g.in_hole(row) {
                out.push_str(&text);
                text.clear();
                out.skip(g.hole.chars);
                gap = 0;
                row = g.hole.at + g.hole.rows;
                col = 0;
                if end.is_some_and(|e| e.row < row) {
                    return Pos { row, col };
                }
                continue;
            }
            let Some(line) = g.line(row) else {
                break;
            };
            while col < line.cells.len() {
                if stop(Pos { row, col }) {
                    out.push_str(&text);
                    return Pos { row, col };
                }
                match line.cells[col] {
                    EMPTY => gap += 1,
                    TAIL => {}
                    cell => {
                        text.extend(std::iter::repeat_n(' ', gap));
                        gap = 0;
                        g.push_cell(cell, &mut text);
                    }
                }
                col += 1;
            }
            out.push_str(&text);
            text.clear();
            if !line.wrapped {
                return Pos {
                    row: row + 1,
                    col: 0,
                };
            }
            // A wrapped row runs on. Cells never written at its end are no text: a wide
            // character that did not fit in the last column left one.
            gap = 0;
            row += 1;
            col = 0;
        }
        Pos { row, col: 0 }
    }

    /// The text between `start` and `end`, rows joined by newlines, each row's trailing blanks
    /// dropped, leading and trailing empty rows dropped.
    pub fn text_between(&self, start: Pos, end: Pos, out: &mut LineBuilder) {
        let mut pos = start;
        let mut newlines = 0usize;
        let mut any = false;
        while pos < end && pos.row < self.grid.len() {
            // Whether the line holds text, before it goes to `out` after its newlines.
            let mut probe = LineBuilder::new(1, None);
            let next = self.read_line(pos, Some(end), &mut probe);
            if probe.chars() > 0 {
                if any {
                    for _ in 0..newlines {
                        out.push_char('\n');
                    }
                }
                newlines = 0;
                any = true;
                self.read_line(pos, Some(end), out);
            }
            newlines += 1;
            if next <= pos {
                break;
            }
            pos = next;
        }
    }
}

impl Grid {
    /// Rows, dropped ones included.
    fn len(&self) -> usize {
        self.lines.len() + self.hole.rows
    }

    fn in_hole(&self, row: usize) -> bool {
        self.hole.rows > 0 && row >= self.hole.at && row < self.hole.at + self.hole.rows
    }

    fn index(&self, row: usize) -> Option<usize> {
        if self.hole.rows == 0 || row < self.hole.at {
            Some(row)
        } else if row < self.hole.at + self.hole.rows {
            None
        } else {
            Some(row - self.hole.rows)
        }
    }

    fn line(&self, row: usize) -> Option<&Row> {
        self.index(row).and_then(|i| self.lines.get(i))
    }

    fn line_mut(&mut self, row: usize) -> Option<&mut Row> {
        self.index(row).and_then(|i| self.lines.get_mut(i))
    }

    fn push_cell(&self, cell: Cell, text: &mut String) {
        if cell >= CLUSTER_BASE {
            if let Some(s) = self.clusters.get((cell - CLUSTER_BASE) as usize) {
                text.push_str(s);
            }
        } else if let Some(c) = char::from_u32(cell - CHAR_BASE) {
            text.push(c);
        }
    }

    /// Characters a row holds, as [`Screen::read_line`] would read them.
    fn row_chars(&self, row: &Row) -> u64 {
        let Some(last) = row.cells.iter().rposition(|&c| c != EMPTY) else {
            return 0;
        };
        row.cells[..=last]
            .iter()
            .map(|&c| match c {
                TAIL => 0,
                c if c >= CLUSTER_BASE => self
                    .clusters
                    .get((c - CLUSTER_BASE) as usize)
                    .map_or(1, |s| s.chars().count() as u64),
                _ => 1,
            })
            .sum()
    }

    /// The first row of the screen: rows above it have scrolled off and cannot be reached.
    fn top(&self) -> usize {
        self.len().saturating_sub(self.rows)
    }

    /// The last row the cursor may reach.
    fn bottom(&self) -> usize {
        (self.top() + self.rows - 1).max(self.len() - 1)
    }

    fn ensure_row(&mut self, row: usize) {
        while self.len() <= row {
            self.lines.push(Row::new(self.cols));
        }
        self.bound();
    }

    /// Keeps the drawing within [`MAX_CELLS`] and [`MAX_ROWS`]: past them, rows after the first
    /// half are dropped (scrolled off long ago, out of the cursor's reach), down to a quarter
    /// of the limit after the hole and never a row of the screen.
    fn bound(&mut self) {
        let cols = self.cols.max(1);
        if self.lines.len() * cols <= MAX_CELLS && self.lines.len() <= MAX_ROWS {
            return;
        }
        let max_rows = (MAX_CELLS / cols).min(MAX_ROWS).max(2 * self.rows + 2);
        if self.hole.rows == 0 {
            self.hole.at = (max_rows / 2).max(1);
        }
        let first = self.hole.at;
        let keep_after = (max_rows / 4).max(self.rows + 1);
        if self.lines.len() <= first + keep_after {
            return;
        }
        let last = self.lines.len() - keep_after;
        let mut chars = 0;
        for row in &self.lines[first..last] {
            chars += self.row_chars(row);
        }
        self.lines.drain(first..last);
        self.hole.rows += last - first;
        self.hole.chars += chars;
    }

    fn line_feed(&mut self) {
        self.pending_wrap = false;
        let next = self.cur.row + 1;
        self.ensure_row(next);
        self.cur.row = next;
    }

    fn row_mut(&mut self) -> &mut Row {
        let r = self.cur.row;
        self.line_mut(r)
            .expect("the cursor is on a row of the screen")
    }

    /// The row at the cursor no longer reaches the right margin.
    fn unwrap_if_cleared(&mut self) {
        let cols = self.cols;
        let row = self.row_mut();
        if row.cells.get(cols - 1).is_none_or(|c| *c == EMPTY) {
            row.wrapped = false;
        }
    }

    fn put(&mut self, cell: Cell, width: usize) {
        if self.pending_wrap || self.cur.col + width > self.cols {
            self.row_mut().wrapped = true;
            self.pending_wrap = false;
            let next = self.cur.row + 1;
            self.ensure_row(next);
            self.cur = Pos { row: next, col: 0 };
        }
        let cols = self.cols;
        let col = self.cur.col;
        let insert = self.insert;
        let row = self.row_mut();
        if insert {
            for _ in 0..width {
                row.cells.insert(col, EMPTY);
            }
            row.cells.truncate(cols);
        }
        // Overwriting half of a wide character blanks its other half.
        if row.cells.get(col) == Some(&TAIL) && col > 0 {
            row.cells[col - 1] = EMPTY;
        }
        if col + width < row.cells.len() && row.cells[col + width] == TAIL {
            row.cells[col + width] = EMPTY;
        }
        row.cells[col] = cell;
        for k in 1..width {
            row.cells[col + k] = TAIL;
        }
        if col + width >= cols {
            self.cur.col = cols - 1;
            self.pending_wrap = true;
        } else {
            self.cur.col = col + width;
        }
    }

    /// Attaches a zero-width character to the cell before the cursor.
    fn attach(&mut self, c: char) {
        let col = if self.pending_wrap {
            self.cur.col
        } else if self.cur.col > 0 {
            self.cur.col - 1
        } else {
            return;
        };
        let row = self.cur.row;
        let Some(line) = self.line(row) else {
            return;
        };
        let mut at = col;
        while at > 0 && line.cells[at] == TAIL {
            at -= 1;
        }
        let mut joined = String::new();
        match line.cells[at] {
            EMPTY | TAIL => return,
            cell => self.push_cell(cell, &mut joined),
        }
        joined.push(c);
        let cell = match line.cells[at] {
            // The cluster grows in place.
            cell if cell >= CLUSTER_BASE => cell,
            _ if self.clusters.len() >= MAX_CLUSTERS => return,
            _ => {
                self.clusters.push(String::new().into_boxed_str());
                CLUSTER_BASE + (self.clusters.len() - 1) as u32
            }
        };
        if let Some(slot) = self.clusters.get_mut((cell - CLUSTER_BASE) as usize) {
            *slot = joined.into_boxed_str();
        }
        self.row_mut().cells[at] = cell;
    }

    fn erase(&mut self, row: usize, from: usize, to: usize) {
        let cols = self.cols;
        if let Some(line) = self.line_mut(row) {
            let to = to.min(line.cells.len());
            for c in &mut line.cells[from.min(to)..to] {
                *c = EMPTY;
            }
            if to >= cols {
                line.wrapped = false;
            }
        }
    }

    fn move_to(&mut self, row: usize, col: usize) {
        self.pending_wrap = false;
        let row = row.clamp(self.top(), self.bottom());
        self.ensure_row(row);
        self.cur.row = row;
        self.cur.col = col.min(self.cols - 1);
    }
}

fn param(params: &Params, i: usize, default: usize) -> usize {
    params
        .iter()
        .nth(i)
        .and_then(|p| p.first().copied())
        .map(usize::from)
        .filter(|&v| v != 0)
        .unwrap_or(default)
}

impl Perform for Grid {
    fn print(&mut self, c: char) {
        match c.width() {
            Some(0) => self.attach(c),
            Some(2) => self.put(char_cell(c), 2.min(self.cols)),
            _ => self.put(char_cell(c), 1),
        }
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\r' => {
                self.pending_wrap = false;
                self.cur.col = 0;
            }
            b'\n' | 0x0b | 0x0c => self.line_feed(),
            0x08 => {
                self.pending_wrap = false;
                self.cur.col = self.cur.col.saturating_sub(1);
            }
            b'\t' => {
                self.pending_wrap = false;
                self.cur.col = ((self.cur.col / 8 + 1) * 8).min(self.cols - 1);
            }
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: char) {
        if ignore {
            return;
        }
        let private = intermediates.first() == Some(&b'?');
        if private {
            if matches!(action, 'l') && params.iter().any(|p| p.first() == Some(&2004)) {
                self.editor_end = Some(self.cur);
            }
            return;
        }
        if !intermediates.is_empty() {
            return;
        }
        let n = param(params, 0, 1);
        let (row, col) = (self.cur.row, self.cur.col);
        match action {
            'A' => self.move_to(row.saturating_sub(n), col),
            'B' | 'e' => self.move_to(row + n, col),
            'C' | 'a' => self.move_to(row, col + n),
            'D' => self.move_to(row, col.saturating_sub(n)),
            'E' => self.move_to(row + n, 0),
            'F' => self.move_to(row.saturating_sub(n), 0),
            'G' | '`' => self.move_to(row, n - 1),
            'd' => {
                let top = self.top();
                self.move_to(top + n - 1, col)
            }
            'H' | 'f' => {
                let top = self.top();
                let c = param(params, 1, 1);
                self.move_to(top + n - 1, c - 1)
            }
            'K' => {
                self.pending_wrap = false;
                let cols = self.cols;
                match param(params, 0, 0) {
                    0 => self.erase(row, col, cols),
                    1 => self.erase(row, 0, col + 1),
                    _ => self.erase(row, 0, cols),
                }
            }
            'J' => {
                self.pending_wrap = false;
                let cols = self.cols;
                let (first, last) = match param(params, 0, 0) {
                    0 => {
                        self.erase(row, col, cols);
                        (row + 1, self.len())
                    }
                    1 => {
                        self.erase(row, 0, col + 1);
                        (self.top(), row)
                    }
                    _ => (self.top(), self.len()),
                };
                for r in first..last {
                    self.erase(r, 0, cols);
                }
            }
            'P' => {
                self.pending_wrap = false;
                let cols = self.cols;
                let line = self.row_mut();
                for _ in 0..n.min(cols - col) {
                    line.cells.remove(col);
                    line.cells.push(EMPTY);
                }
                self.unwrap_if_cleared();
            }
            '@' => {
                self.pending_wrap = false;
                let cols = self.cols;
                let line = self.row_mut();
                for _ in 0..n.min(cols - col) {
                    line.cells.insert(col, EMPTY);
                }
                line.cells.truncate(cols);
            }
            'X' => {
                self.pending_wrap = false;
                self.erase(row, col, col + n);
                self.unwrap_if_cleared();
            }
            'h' | 'l' if params.iter().any(|p| p.first() == Some(&4)) => {
                self.insert = action == 'h';
            }
            's' => self.saved = Some(self.cur),
            'u' => {
                if let Some(p) = self.saved {
                    self.move_to(p.row, p.col);
                }
            }
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _ignore: bool, byte: u8) {
        if !intermediates.is_empty() {
            return;
        }
        match byte {
            b'7' => self.saved = Some(self.cur),
            b'8' => {
                if let Some(p) = self.saved {
                    self.move_to(p.row, p.col);
                }
            }
            b'D' => self.line_feed(),
            b'E' => {
                self.line_feed();
                self.cur.col = 0;
            }
            b'M' => {
                let (row, col) = (self.cur.row, self.cur.col);
                self.move_to(row.saturating_sub(1), col);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of the line from `start` to `end`, and where it stops.
    fn logical(s: &Screen, start: Pos, end: Option<Pos>) -> (String, Pos) {
        let mut b = LineBuilder::new(COMMAND_LINE_CAP, None);
        let next = s.read_line(start, end, &mut b);
        (b.finish().text, next)
    }

    fn between(s: &Screen, start: Pos, end: Pos) -> String {
        let mut b = LineBuilder::new(COMMAND_LINE_CAP, None);
        s.text_between(start, end, &mut b);
        b.finish().text
    }

    fn typed(prompt: &str, bytes: &[u8], cols: u16) -> String {
        let mut s = Screen::new(cols, 24);
        s.feed(prompt.as_bytes());
        let start = s.cursor();
        s.feed(bytes);
        logical(&s, start, s.editor_end()).0
    }

    #[test]
    fn readline_wrap_and_carriage_return_is_not_a_return_to_the_start() {
        // What bash 5.2 draws on an 80-column terminal when a line exactly fills the first row
        // ("READY> " + 73 characters), then more is typed.
        let mut bytes = b"echo ".to_vec();
        bytes.extend(b"a".repeat(68));
        bytes.extend(b" \rbbb");
        let want = format!("echo {}bbb", "a".repeat(68));
        assert_eq!(typed("READY> ", &bytes, 80), want);
        // Recalled with Up, drawn in one go: the terminal wraps it.
        let line = format!("echo {} {}", "x".repeat(80), "y".repeat(10));
        assert_eq!(typed("READY> ", line.as_bytes(), 80), line);
    }

    #[test]
    fn editing_a_wrapped_line_in_place() {
        // Insert `Q` in the first row of a two-row line, then delete the character after it
        // (readline's redraw: rewrite from the cursor, " \r", clear the next row, move back).
        let mut bytes = b"echo ".to_vec();
        bytes.extend(b"a".repeat(68));
        bytes.extend(b" \r");
        bytes.extend(b"\x1b[A\x1b[10C");
        bytes.extend(b"Qo ");
        bytes.extend(b"a".repeat(68));
        bytes.extend(b"\x1b[A\x1b[10C");
        bytes.extend(b" ");
        bytes.extend(b"a".repeat(68));
        bytes.extend(b" \r\x1b[K\x1b[A\x1b[11C\r\n\r\x1b[?2004l\r");
        let want = format!("echQ {}", "a".repeat(68));
        assert_eq!(typed("READY> ", &bytes, 80), want);
    }

    #[test]
    fn leading_space_is_kept_and_the_editor_end_bounds_the_line() {
        assert_eq!(
            typed("$ ", b" echo x\r\n\x1b[?2004l\recho x\r\n", 20),
            " echo x"
        );
        let mut s = Screen::new(20, 5);
        s.feed(b"$ ");
        let start = s.cursor();
        s.feed(b"!!\r\n\x1b[?2004l\recho first\r\n");
        let end = s.editor_end().unwrap();
        assert_eq!(logical(&s, start, Some(end)).0, "!!");
        assert_eq!(between(&s, end, s.cursor()), "echo first");
    }

    #[test]
    fn a_shrink_cuts_the_rows_drawn_before() {
        // bash at 61 columns, a line on three rows; shrunk to 35 columns, readline clears the
        // rows from the bottom up and draws prompt and line again.
        let mut s = Screen::new(61, 20);
        let line = format!("echo {}", "t".repeat(150));
        s.feed(format!("READY> {line}").as_bytes());
        s.resize(35, 20);
        s.feed(b"\r\x1b[K\r\x1b[A\x1b[K\r\x1b[A\x1b[K\rREADY> ");
        let start = s.cursor();
        s.feed(line.as_bytes());
        assert_eq!(logical(&s, start, None).0, line);
    }

    #[test]
    fn wide_characters_and_combining_marks() {
        assert_eq!(typed("$ ", "echo 字é".as_bytes(), 8), "echo 字é");
        // A wide character that does not fit in the last column wraps whole.
        assert_eq!(typed("", "abcdefg字h".as_bytes(), 8), "abcdefg字h");
    }

    #[test]
    fn a_million_chars_are_read_whole_and_more_are_cut_with_bounded_memory() {
        // Drawn as readline draws a line it was given whole: one go, wrapped by the terminal.
        let line: String = (0..100_000).map(|i| format!("{i:09} ")).collect();
        assert_eq!(line.len(), 1_000_000);
        for cols in [80u16, 20] {
            let mut s = Screen::new(cols, 24);
            s.feed(b"READY> ");
            let start = s.cursor();
            for chunk in line.as_bytes().chunks(4096) {
                s.feed(chunk);
            }
            assert_eq!(logical(&s, start, None).0, line, "{cols} columns");
        }
        // Three million: the middle rows are dropped as they scroll off, the line keeps its
        // head and tail and says how much is left out.
        let long: String = (0..300_000).map(|i| format!("{i:09} ")).collect();
        let mut s = Screen::new(80, 24);
        s.feed(b"READY> ");
        let start = s.cursor();
        for chunk in long.as_bytes().chunks(4096) {
            s.feed(chunk);
            assert!(s.cells() <= MAX_CELLS + 80);
        }
        let mut b = LineBuilder::new(COMMAND_LINE_CAP, None);
        s.read_line(start, None, &mut b);
        let got = b.finish();
        assert!(got.cut);
        assert_eq!(got.chars, 3_000_000);
        let (head, rest) = got.text.split_once("…[").unwrap();
        let (note, tail) = rest.split_once("]…").unwrap();
        assert!(long.starts_with(head) && long.ends_with(tail));
        assert_eq!(head.chars().count(), COMMAND_LINE_CAP / 2);
        assert_eq!(tail.chars().count(), COMMAND_LINE_CAP / 2);
        assert_eq!(
            note,
            format!("{} chars omitted", 3_000_000 - COMMAND_LINE_CAP)
        );
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_and_resizes_never_panic(
            chunks in proptest::collection::vec(
                (proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200), 0u16..6),
                0..20,
            ),
            tail in "[ -~\u{e9}\u{5b57}\u{301}\r\n\x08\x1b\\[0-9;?@ABCDGHJKPXhl]{0,300}",
        ) {
            let mut s = Screen::new(7, 3);
            let start = s.cursor();
            for (bytes, size) in &chunks {
                s.feed(bytes);
                if *size > 0 {
                    s.resize(*size * 3, *size);
                }
            }
            s.feed(tail.as_bytes());
            let (_, next) = logical(&s, start, s.editor_end());
            let _ = between(&s, start, next.max(s.cursor()));
        }
    }
}
