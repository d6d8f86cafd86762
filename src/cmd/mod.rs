//! One module per subcommand. Those that read the store or the configuration's values
//! implement [`RunWith`] and take the process's one [`Setup`] (made in `main`); `wrap`, `init`,
//! `config`, `completions`, `man`, `nest`, `ssh`, `exec` and `hooks` implement [`Run`].

pub mod ask;
pub mod completions;
pub mod config;
pub mod context;
pub mod diff;
pub mod exec;
pub mod export;
pub mod fix;
pub mod forget;
pub mod hooks;
pub mod init;
pub(crate) mod llm;
pub mod man;
pub mod mcp;
pub mod nest;
pub mod note;
pub mod pause;
pub mod pick;
pub mod search;
pub mod sessions;
pub mod setup;
pub mod status;
pub mod wrap;

pub use setup::Setup;

/// A subcommand: runs and returns the process exit status.
pub trait Run {
    fn run(self) -> anyhow::Result<i32>;
}

/// A subcommand that runs with the process's [`Setup`] and returns its exit status.
pub trait RunWith {
    fn run(self, setup: &Setup) -> anyhow::Result<i32>;
}
