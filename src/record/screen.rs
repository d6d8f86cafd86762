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

use unicode_width::UnicodeWidthChar;
use vte::{Params, Parser, Perform};

/// Most rows kept; a longer drawing is cut (its command line is then inexact).
const MAX_ROWS: usize = 4096;

/// A position in the model: row index (from the first row fed after a reset) and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub row: usize,
    pub col: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Cell {
    Empty,
    Ch(char),
    /// A character with combining marks.
    Cluster(Box<str>),
    /// The right half of a wide character.
    Tail,
}

#[derive(Debug, Clone)]
struct Row {
    cells: Vec<Cell>,
    wrapped: bool,
}

impl Row {
    fn new(cols: usize) -> Row {
        Row {
            cells: vec![Cell::Empty; cols],
            wrapped: false,
        }
    }
}

struct Grid {
    cols: usize,
    rows: usize,
    lines: Vec<Row>,
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
            row.cells.resize(g.cols, Cell::Empty);
            if row.cells.last() == Some(&Cell::Tail) {
                // Half of a wide character is no character.
                let n = row.cells.len();
                row.cells[n - 1] = Cell::Empty;
                if n >= 2 {
                    row.cells[n - 2] = Cell::Empty;
                }
            }
        }
        g.cur.col = g.cur.col.min(g.cols - 1);
        g.pending_wrap = false;
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
        self.parser.advance(&mut self.grid, &bytes[..end]);
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

    /// The text from `start` on, through every row the terminal wrapped, stopping before `end`
    /// (exclusive). Returns the text and the first position after it. Cells never written in
    /// the middle of the text read as spaces; at its end they are not text.
    pub fn logical_line(&self, start: Pos, end: Option<Pos>) -> (String, Pos) {
        let g = &self.grid;
        let mut out = String::new();
        let mut row = start.row;
        let mut col = start.col;
        let mut gap = 0usize;
        let stop = |p: Pos| end.is_some_and(|e| p >= e);
        while let Some(line) = g.lines.get(row) {
            while col < line.cells.len() {
                if stop(Pos { row, col }) {
                    return (out, Pos { row, col });
                }
                match &line.cells[col] {
                    Cell::Empty => gap += 1,
                    Cell::Tail => {}
                    Cell::Ch(c) => {
                        out.extend(std::iter::repeat_n(' ', gap));
                        gap = 0;
                        out.push(*c);
                    }
                    Cell::Cluster(s) => {
                        out.extend(std::iter::repeat_n(' ', gap));
                        gap = 0;
                        out.push_str(s);
                    }
                }
                col += 1;
            }
            if !line.wrapped {
                return (
                    out,
                    Pos {
                        row: row + 1,
                        col: 0,
                    },
                );
            }
            // A wrapped row runs on. Cells never written at its end are no text: a wide
            // character that did not fit in the last column left one.
            gap = 0;
            row += 1;
            col = 0;
        }
        (out, Pos { row, col: 0 })
    }

    /// The text between `start` and `end`, rows joined by newlines, each row's trailing blanks
    /// dropped, leading and trailing empty rows dropped.
    pub fn text_between(&self, start: Pos, end: Pos) -> String {
        let mut rows = Vec::new();
        let mut pos = start;
        while pos < end && pos.row < self.grid.lines.len() {
            let (text, next) = self.logical_line(pos, Some(end));
            rows.push(text);
            if next <= pos {
                break;
            }
            pos = next;
        }
        let joined = rows.join("\n");
        joined.trim_matches('\n').to_string()
    }
}

impl Grid {
    /// The first row of the screen: rows above it have scrolled off and cannot be reached.
    fn top(&self) -> usize {
        self.lines.len().saturating_sub(self.rows)
    }

    /// The last row the cursor may reach.
    fn bottom(&self) -> usize {
        (self.top() + self.rows - 1).max(self.lines.len() - 1)
    }

    fn ensure_row(&mut self, row: usize) -> bool {
        if row >= MAX_ROWS {
            return false;
        }
        while self.lines.len() <= row {
            self.lines.push(Row::new(self.cols));
        }
        true
    }

    fn line_feed(&mut self) {
        self.pending_wrap = false;
        let next = self.cur.row + 1;
        if self.ensure_row(next) {
            self.cur.row = next;
        }
    }

    fn row_mut(&mut self) -> &mut Row {
        let r = self.cur.row;
        &mut self.lines[r]
    }

    /// The row at the cursor no longer reaches the right margin.
    fn unwrap_if_cleared(&mut self) {
        let cols = self.cols;
        let row = self.row_mut();
        if row.cells.get(cols - 1).is_none_or(|c| *c == Cell::Empty) {
            row.wrapped = false;
        }
    }

    fn put(&mut self, cell: Cell, width: usize) {
        if self.pending_wrap || self.cur.col + width > self.cols {
            self.row_mut().wrapped = true;
            self.pending_wrap = false;
            let next = self.cur.row + 1;
            if !self.ensure_row(next) {
                return;
            }
            self.cur = Pos { row: next, col: 0 };
        }
        let cols = self.cols;
        let col = self.cur.col;
        let insert = self.insert;
        let row = self.row_mut();
        if insert {
            for _ in 0..width {
                row.cells.insert(col, Cell::Empty);
            }
            row.cells.truncate(cols);
        }
        // Overwriting half of a wide character blanks its other half.
        if row.cells.get(col) == Some(&Cell::Tail) && col > 0 {
            row.cells[col - 1] = Cell::Empty;
        }
        if col + width < row.cells.len() && row.cells[col + width] == Cell::Tail {
            row.cells[col + width] = Cell::Empty;
        }
        row.cells[col] = cell;
        for k in 1..width {
            row.cells[col + k] = Cell::Tail;
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
        let row = self.row_mut();
        let mut at = col;
        while at > 0 && row.cells[at] == Cell::Tail {
            at -= 1;
        }
        let joined = match &row.cells[at] {
            Cell::Ch(b) => format!("{b}{c}"),
            Cell::Cluster(s) => format!("{s}{c}"),
            _ => return,
        };
        row.cells[at] = Cell::Cluster(joined.into_boxed_str());
    }

    fn erase(&mut self, row: usize, from: usize, to: usize) {
        if let Some(line) = self.lines.get_mut(row) {
            let to = to.min(line.cells.len());
            for c in &mut line.cells[from.min(to)..to] {
                *c = Cell::Empty;
            }
            if to >= self.cols {
                line.wrapped = false;
            }
        }
    }

    fn move_to(&mut self, row: usize, col: usize) {
        self.pending_wrap = false;
        let row = row.clamp(self.top(), self.bottom());
        if self.ensure_row(row) {
            self.cur.row = row;
        }
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
            Some(2) => self.put(Cell::Ch(c), 2.min(self.cols)),
            _ => self.put(Cell::Ch(c), 1),
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
                        (row + 1, self.lines.len())
                    }
                    1 => {
                        self.erase(row, 0, col + 1);
                        (self.top(), row)
                    }
                    _ => (self.top(), self.lines.len()),
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
                    line.cells.push(Cell::Empty);
                }
                self.unwrap_if_cleared();
            }
            '@' => {
                self.pending_wrap = false;
                let cols = self.cols;
                let line = self.row_mut();
                for _ in 0..n.min(cols - col) {
                    line.cells.insert(col, Cell::Empty);
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

    fn typed(prompt: &str, bytes: &[u8], cols: u16) -> String {
        let mut s = Screen::new(cols, 24);
        s.feed(prompt.as_bytes());
        let start = s.cursor();
        s.feed(bytes);
        s.logical_line(start, s.editor_end()).0
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
        assert_eq!(s.logical_line(start, Some(end)).0, "!!");
        assert_eq!(s.text_between(end, s.cursor()), "echo first");
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
        assert_eq!(s.logical_line(start, None).0, line);
    }

    #[test]
    fn wide_characters_and_combining_marks() {
        assert_eq!(typed("$ ", "echo 字é".as_bytes(), 8), "echo 字é");
        // A wide character that does not fit in the last column wraps whole.
        assert_eq!(typed("", "abcdefg字h".as_bytes(), 8), "abcdefg字h");
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
            let (_, next) = s.logical_line(start, s.editor_end());
            let _ = s.text_between(start, next.max(s.cursor()));
        }
    }
}
