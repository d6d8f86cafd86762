//! `omnish mcp`: the Model Context Protocol server on stdin/stdout ([`crate::mcp`]), with the
//! store (from the configuration), the session it runs in and its directory taken from the
//! environment.

use crate::cli::McpArgs;
use crate::cmd::Run;
use crate::mcp::{self, Config};
use anyhow::{Context, Result};

impl Run for McpArgs {
    fn run(self) -> Result<i32> {
        let root = crate::cmd::store_root(&crate::config::Config::load()?)?;
        let config = Config {
            data_root: root,
            env_session: std::env::var("OMNISH_SESSION_ID")
                .ok()
                .filter(|s| !s.is_empty()),
            cwd: std::env::current_dir().context("cannot read the current directory")?,
            utc_offset_secs: crate::cmd::context::utc_offset_secs(),
        };
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let stdout = std::io::stdout();
        let mut output = stdout.lock();
        mcp::serve(&config, &mut input, &mut output)?;
        Ok(0)
    }
}
