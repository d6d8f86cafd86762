//! The terminal renderer: output bytes → the text a terminal showed. Used by the recorder (to
//! read command lines off the screen) and by the context pipeline.
//!
//! `render` is the grid (a small terminal emulator: bytes through `vte` onto screen cells);
//! rows leaving it go to the line assembly (`lines`: wrapped rows joined, lines capped), which
//! hands each finished `render::Line` to a `render::LineSink`. The arrow points one way,
//! render → lines: the assembly owns `Line` and `LineSink` and knows nothing of the grid
//! (`render` re-exports both, the streaming API's types). `visible` shows control characters
//! visibly in text printed for a person or an agent; it uses neither.
//!
//! Whatever changes the lines it produces must bump `crate::context::stages::read::DIGEST_VERSION`, so
//! that cached digests made by the old renderer are rebuilt.

mod lines;
pub mod render;
pub mod visible;
