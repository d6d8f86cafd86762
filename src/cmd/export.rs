//! `omnish export`: the selection flags mapped onto the library's request options (shared with
//! `context`), the export written by the library (`context::export`) to standard output or to a
//! file, written atomically (a temporary file beside it, mode 0600, renamed over it once
//! complete: an interrupted export leaves no half file, and nothing is written when nothing
//! matched).

use std::io::{BufWriter, Write};

use anyhow::{Context, Result};

use crate::cli::{ExportArgs, ExportFormatArg};
use crate::cmd::{RunWith, Setup};
use crate::context::export::{self, ExportFormat};
use crate::context::request::Options;
use crate::context::stages::format::Format;

impl RunWith for ExportArgs {
    fn run(self, setup: &Setup) -> Result<i32> {
        let format = match self.format {
            ExportFormatArg::Markdown => ExportFormat::Markdown,
            ExportFormatArg::Html => ExportFormat::Html,
            ExportFormatArg::Asciicast => ExportFormat::Asciicast,
            ExportFormatArg::AsciicastV2 => ExportFormat::AsciicastV2,
            ExportFormatArg::Json => ExportFormat::Json,
        };
        let mut options = Options {
            filters: crate::cmd::context::filters(&self.select),
            recent: self.select.recent,
            last: self.select.last,
            max_lines: Some(self.max_lines.unwrap_or(0)),
            max_line_width: Some(self.max_line_width.unwrap_or(0)),
            format: Some(Format::Json),
            redact: self.no_redact.then_some(false),
            // What is shared is the commands: the pinned notes stay private.
            no_notes: true,
            ..Options::default()
        };
        if self.select.pick {
            // The list holds what `pick` lists by default; the export, what was picked.
            crate::cmd::pick::into(&mut options, setup)?;
        }
        // Without a count, the whole selection.
        options.recent = Some(options.recent.unwrap_or(usize::MAX));
        let request = crate::cmd::context::request(&options, setup)?;
        let outcome = match &self.output {
            None => {
                let stdout = std::io::stdout().lock();
                let mut out = BufWriter::with_capacity(64 * 1024, stdout);
                let outcome = export::export(&request, format, &mut out).map_err(Setup::flags)?;
                out.flush()?;
                outcome
            }
            Some(path) => {
                let shown = crate::term::visible::line(&path.to_string_lossy()).into_owned();
                let dir = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => std::path::PathBuf::from("."),
                };
                // tempfile creates it 0600.
                let tmp = tempfile::Builder::new()
                    .prefix(".omnish-export-")
                    .tempfile_in(&dir)
                    .with_context(|| format!("cannot write {shown}"))?;
                let mut out = BufWriter::with_capacity(64 * 1024, tmp);
                let outcome = export::export(&request, format, &mut out).map_err(Setup::flags)?;
                if outcome.nothing_matched.is_none() {
                    let tmp = out
                        .into_inner()
                        .map_err(|e| e.into_error())
                        .with_context(|| format!("cannot write {shown}"))?;
                    tmp.as_file()
                        .sync_all()
                        .with_context(|| format!("cannot write {shown}"))?;
                    tmp.persist(path)
                        .map_err(|e| e.error)
                        .with_context(|| format!("cannot write {shown}"))?;
                }
                outcome
            }
        };
        for w in &outcome.warnings {
            eprintln!("omnish: warning: {}", crate::term::visible::line(w));
        }
        if self.output.is_none() {
            crate::store::shown::note_if_on_terminal(&setup.facts.data_root, outcome.commands);
        }
        if let Some(note) = outcome.nothing_matched {
            eprintln!("omnish: {note}");
            return Ok(1);
        }
        if let Some(path) = &self.output {
            eprintln!(
                "omnish: exported {} command{} to {}",
                outcome.commands,
                if outcome.commands == 1 { "" } else { "s" },
                crate::term::visible::line(&path.to_string_lossy())
            );
        }
        Ok(0)
    }
}
