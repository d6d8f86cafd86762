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

/// The session store's root for a command that reads or writes it: `data_dir` made absolute.
/// A store that is not private to this user says so first, one line per place (see
/// `store::access`), once per process.
pub(crate) fn store_root(cfg: &crate::config::Config) -> anyhow::Result<std::path::PathBuf> {
    static CHECKED: std::sync::Once = std::sync::Once::new();
    let root = cfg.data_root()?;
    let root = std::path::absolute(&root).unwrap_or(root);
    CHECKED.call_once(|| {
        for line in crate::store::access::check(&root) {
            eprintln!("{line}");
        }
    });
    Ok(root)
}

/// A subcommand: runs and returns the process exit status.
pub trait Run {
    fn run(self) -> anyhow::Result<i32>;
}
