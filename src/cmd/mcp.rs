//! `omnish mcp`: the Model Context Protocol server on stdin/stdout ([`crate::mcp`]), with the
//! process's [`Setup`]: the store, the session it runs in, its directory and the user's
//! configuration, the same every other command builds its requests with.

use crate::cli::McpArgs;
use crate::cmd::{RunWith, Setup};
use crate::mcp::{self, Config};
use anyhow::{Context, Result};

impl RunWith for McpArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        // The server's directory is the agent's project: it must be known.
        setup
            .facts
            .cwd
            .as_ref()
            .context("cannot read the current directory")?;
        let config = Config::new(setup.facts.clone(), setup.settings.clone());
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let stdout = std::io::stdout();
        let mut output = stdout.lock();
        mcp::serve(&config, &mut input, &mut output)?;
        Ok(0)
    }
}
