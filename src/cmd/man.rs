//! `omnish man`: prints the committed man page (`man -l <(omnish man)`); tests/cli_docs.rs fails
//! when it is stale.

use crate::cli::ManArgs;
use crate::cmd::Run;
use anyhow::Result;
use std::io::Write;

const PAGE: &str = include_str!("../../man/omnish.1");

impl Run for ManArgs {
    fn run(self) -> Result<i32> {
        std::io::stdout().lock().write_all(PAGE.as_bytes())?;
        Ok(0)
    }
}
