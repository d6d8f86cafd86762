//! Other questions front ends ask of the same records: [`search`] across sessions, a
//! command's output by line [`range`], and [`sessions`] summaries.

pub(crate) mod range;
pub(crate) mod search;
pub(crate) mod sessions;
