//! One module per subcommand, each implementing [`Run`].

pub mod ask;
pub mod completions;
pub mod config;
pub mod context;
pub mod fix;
pub mod init;
pub(crate) mod llm;
pub mod man;
pub mod mcp;
pub mod note;
pub mod search;
pub mod sessions;
pub mod status;
pub mod wrap;

/// A subcommand: runs and returns the process exit status.
pub trait Run {
    fn run(self) -> anyhow::Result<i32>;
}
