//! Redact stage: secrets out of command lines and output.
//!
//! Interface (to be implemented): `pub fn redact(text: &str) -> std::borrow::Cow<'_, str>`,
//! replacing each secret by `[REDACTED:<kind>]`.
