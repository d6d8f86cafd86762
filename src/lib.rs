//! omnish: record a shell in a pseudo-terminal, split the recording into commands with
//! OSC 133 semantic-prompt markers, and turn recent commands into context for a language model.
//!
//! Layers, arrows pointing down only: [`cmd`] (one module per subcommand) → [`record`] |
//! [`context`] | [`mcp`] → [`term`] | [`store`].

pub mod cli;
pub mod cmd;
pub(crate) mod config;
#[doc(hidden)]
pub use config::fuzz_check as fuzz_config;
pub mod context;
#[doc(hidden)]
pub use context::tokens::tokenizer::count_with as count_tokens;
pub mod error;
pub mod mcp;
pub mod record;
pub mod store;
pub mod term;
