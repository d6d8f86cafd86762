//! `omnish config`: the effective configuration, each value with where it came from (default,
//! file and line, environment variable, flag), as text or JSON.

use crate::cli::{ConfigArgs, ConfigFormat};
use crate::cmd::Run;
use crate::config::Config;
use crate::error::Error;
use anyhow::Result;
use std::io::Write;

impl Run for ConfigArgs {
    fn run(self) -> Result<i32> {
        let mut cfg = Config::load()?;
        for set in &self.set {
            let (key, value) = set
                .split_once('=')
                .ok_or_else(|| Error::usage(format!("--set: expected KEY=VALUE, got '{set}'")))?;
            cfg.set_text(key.trim(), value, &format!("--set {}", key.trim()))?;
        }
        let mut out = std::io::stdout().lock();
        match self.format {
            ConfigFormat::Text => out.write_all(cfg.render_text().as_bytes())?,
            ConfigFormat::Json => {
                let text = serde_json::to_string_pretty(&cfg.render_json())?;
                out.write_all(text.as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
        Ok(0)
    }
}
