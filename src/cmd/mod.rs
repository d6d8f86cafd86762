//! One module per subcommand, each implementing [`Run`].

pub mod context;
pub mod search;
pub mod sessions;
pub mod status;
pub mod wrap;

/// A subcommand: runs and returns the process exit status.
pub trait Run {
    fn run(self) -> anyhow::Result<i32>;
}
