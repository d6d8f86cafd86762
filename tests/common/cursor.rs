//! Answers a program's cursor position query (`ESC [ 6 n`, DSR) as a terminal does: nushell's
//! line editor (reedline) asks at every prompt and waits for the answer. The position is
//! followed well enough for that: printing, line feeds, carriage returns, backspace and the
//! cursor moves and erases line editors use.

use vte::{Params, Parser, Perform};

pub struct Cursor {
    parser: Parser,
    state: State,
}

struct State {
    rows: u16,
    cols: u16,
    row: u16,
    col: u16,
    answers: Vec<Vec<u8>>,
}

impl Cursor {
    pub fn new(rows: u16, cols: u16) -> Cursor {
        Cursor {
            parser: Parser::new(),
            state: State {
                rows,
                cols,
                row: 0,
                col: 0,
                answers: Vec::new(),
            },
        }
    }

    /// Follows `bytes` the program wrote; returns the answers it asked for.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        // Not `vte`'s own `advance`: binary output would take it a pass per invalid byte.
        omnish::term::render::advance(&mut self.parser, &mut self.state, bytes);
        std::mem::take(&mut self.state.answers)
    }
}

impl State {
    fn line_feed(&mut self) {
        self.row = (self.row + 1).min(self.rows - 1);
    }
}

impl Perform for State {
    fn print(&mut self, _c: char) {
        if self.col >= self.cols {
            self.col = 0;
            self.line_feed();
        }
        self.col += 1;
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' | 0x0b | 0x0c => self.line_feed(),
            b'\r' => self.col = 0,
            0x08 => self.col = self.col.saturating_sub(1),
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, inter: &[u8], _ignore: bool, action: char) {
        if !inter.is_empty() {
            return;
        }
        let p: Vec<u16> = params.iter().map(|p| p[0]).collect();
        let n = |i: usize| p.get(i).copied().filter(|v| *v > 0).unwrap_or(1);
        match action {
            'A' => self.row = self.row.saturating_sub(n(0)),
            'B' => self.row = (self.row + n(0)).min(self.rows - 1),
            'C' => self.col = (self.col + n(0)).min(self.cols - 1),
            'D' => self.col = self.col.saturating_sub(n(0)),
            'E' => {
                self.row = (self.row + n(0)).min(self.rows - 1);
                self.col = 0;
            }
            'F' => {
                self.row = self.row.saturating_sub(n(0));
                self.col = 0;
            }
            'G' => self.col = (n(0) - 1).min(self.cols - 1),
            'H' | 'f' => {
                self.row = (n(0) - 1).min(self.rows - 1);
                self.col = (n(1) - 1).min(self.cols - 1);
            }
            'd' => self.row = (n(0) - 1).min(self.rows - 1),
            'S' => {}
            'n' if p.first() == Some(&6) => self.answers.push(
                format!("\x1b[{};{}R", self.row + 1, self.col.min(self.cols - 1) + 1).into_bytes(),
            ),
            _ => {}
        }
    }
}
