//! The terminal renderer: output bytes → the text a terminal showed. Used by the recorder (to
//! read command lines off the screen) and by the context pipeline.
//!
//! Whatever changes the lines it produces must bump `crate::context::stages::read::DIGEST_VERSION`, so
//! that cached digests made by the old renderer are rebuilt.

mod lines;
pub mod render;
pub mod visible;
