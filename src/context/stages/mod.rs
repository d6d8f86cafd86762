//! The pipeline's steps, in the order a document goes through them: `select` → `read` →
//! `truncate` → `loops` → [`redact`] → `budget` → `format`.

pub(crate) mod budget;
pub(crate) mod format;
pub(crate) mod loops;
pub(crate) mod own;
pub(crate) mod read;
pub mod redact;
pub(crate) mod select;
pub(crate) mod truncate;
