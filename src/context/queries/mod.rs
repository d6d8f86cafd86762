//! Other questions front ends ask of the same records: [`search`] across sessions, a
//! command's output by line [`range`], [`sessions`] summaries, and the innermost live
//! [`nest`]ed shell.

pub(crate) mod nest;
pub(crate) mod pick;
pub(crate) mod range;
pub(crate) mod search;
pub(crate) mod sessions;
