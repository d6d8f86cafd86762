//! The context pipeline: [`select`] → [`read`] → render ([`crate::term`]) → [`redact`] →
//! [`budget`] → [`format`], one module per stage, joined by the types in [`model`].

pub mod budget;
pub mod format;
pub mod model;
pub mod models;
pub mod read;
pub mod redact;
pub mod select;
pub mod tokenizer;
pub mod truncate;
