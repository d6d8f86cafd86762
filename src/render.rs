//! Render stage: raw terminal output bytes → the text a terminal displayed.
//!
//! Interface (to be implemented):
//! ```ignore
//! pub struct Renderer { .. }          // small working state: a screen-sized grid + scrollback sink
//! impl Renderer {
//!     pub fn new(cols: u16, rows: u16) -> Renderer;
//!     pub fn feed(&mut self, bytes: &[u8]);     // may be called with arbitrary splits
//!     pub fn finish(self) -> Vec<String>;       // all lines, trailing blanks trimmed
//! }
//! pub fn render(bytes: &[u8], cols: u16, rows: u16) -> Vec<String>;
//! ```
