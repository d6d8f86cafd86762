//! omnish: record a shell in a pseudo-terminal, split the recording into commands with
//! OSC 133 semantic-prompt markers, and turn recent commands into context for a language model.
//!
//! Recording (`omnish wrap`): [`shell`] builds the hooked shell, [`pty`] runs it, [`marker`]
//! finds the hooks' markers in its output and [`recorder`] writes the [`store`].
//!
//! Context (`omnish context`): [`select`] → [`read`] → [`render`] → [`redact`] → [`budget`] →
//! [`format`], one module per stage, joined by the types in [`model`].

pub mod budget;
pub mod cli;
pub mod cmd;
pub mod error;
pub mod format;
pub mod marker;
pub mod model;
pub mod pty;
pub mod read;
pub mod recorder;
pub mod redact;
pub mod render;
pub mod select;
pub mod shell;
pub mod store;
pub mod tokenizer;
