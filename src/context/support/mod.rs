//! What the stages and queries share: [`parallel`] reads and bounded regex [`pattern`]s.

pub(crate) mod parallel;
pub(crate) mod pattern;
