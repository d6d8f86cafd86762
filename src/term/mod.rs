//! The terminal renderer: output bytes → the text a terminal showed. Used by the recorder (to
//! read command lines off the screen) and by the context pipeline.

mod lines;
pub mod render;
