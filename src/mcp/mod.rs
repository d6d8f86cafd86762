//! `omnish mcp`: a Model Context Protocol server over stdio, so that coding agents (Claude
//! Code, Codex CLI, Cursor, Zed, ...) can ask for what happened in the terminal instead of
//! having it pasted in by hand. Every answer comes from the same library pipeline as
//! `omnish context` ([`crate::context`]): same selection, rendering, redaction and budget.
//!
//! # Protocol
//!
//! JSON-RPC 2.0, one message per line on stdin and stdout (`protocol`). The server is
//! *dual-era* as the current specification (2026-07-28) describes it:
//!
//! * modern requests carry `io.modelcontextprotocol/protocolVersion` and
//!   `io.modelcontextprotocol/clientCapabilities` in `params._meta` and are served statelessly
//!   (`server/discover`, `tools/list`, `tools/call`); results carry `resultType: "complete"` and
//!   `serverInfo` in their `_meta`, lists their caching hints; an unknown version is answered
//!   with `UnsupportedProtocolVersion` (-32022) listing the versions served;
//! * legacy clients (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05) open with `initialize`,
//!   which answers with the client's version when it is one of those, else the latest of them,
//!   and are then served under that version's rules (`ping` included; no `structuredContent` or
//!   `outputSchema` before 2025-06-18).
//!
//! Notifications (`notifications/initialized`, `notifications/cancelled`, ...) get no answer,
//! as JSON-RPC requires. A line that is not JSON gets a parse error (-32700) and the server
//! reads on; a message that is not a request gets -32600, an unknown method -32601, bad
//! request parameters and unknown tools -32602. Arguments a tool cannot use (wrong type, out
//! of range, an invalid regex, an unknown command id) are tool execution errors: a result with
//! `isError: true` whose text says what to change, so the model can correct itself. End of
//! input ends the server with status 0.
//!
//! Hostile input costs little: a line longer than `MAX_LINE` is one error and is never held
//! whole; request ids must be strings or integers and are echoed as their JSON text (an integer
//! of any size comes back exact, `1.5` is an Invalid Request); every error quotes at most a
//! short prefix of what it complains about; regular expressions are bounded
//! (`crate::context::support::pattern`).
//!
//! # One way in
//!
//! The tools map their JSON arguments onto the library's request options
//! (`context::request::Options`) and build them with the process's facts and the user's
//! settings ([`Config`]), like every other front end: durations, patterns, directories and
//! budgets are checked there, and errors name the argument. What is the server's own stays
//! here: its default budget and tokenizer, which session an agent means (`session`), and the
//! labels around every result, which the library fits with the document in one pass
//! (`context::fitted` and its `Frame`).
//!
//! # Hand-written framing, not `rmcp`
//!
//! The official Rust SDK (`rmcp`) was measured for this server (issue 20) and not taken: rmcp
//! 3.11 with tokio (the features a stdio server needs) and schemars grew the release binary by
//! 3,412,248 bytes (14.9 MB to 18.3 MB, +22.8 %, 52 more crates), over the 2 MB the move was
//! allowed, and no feature trimming brought it under. Its stdio transport also
//! breaks what `tests/hostile_mcp.rs` pins: it sent a 1 MB method name back in a 1 MB error,
//! exited with status 1 when input ended before `initialize` and quit on a notification sent
//! before it; keeping those guarantees would mean a custom transport re-implementing
//! `protocol` underneath it. Round trips were no better (ping 31-52 µs with rmcp over pipes
//! against 22-33 µs here). What rmcp would have brought that matters, typed tool arguments with
//! derived schemas, is here without it: schemars alone costs about 0.2 MB. So the framing stays
//! a loop over stdin lines (`protocol`, on `serde_json`; every call is bounded local disk work
//! answered in order, nothing to run concurrently), tested against the official Python SDK as
//! an independent client (`tests/mcp.rs`, `tests/mcp_client.py`).
//!
//! # Tools
//!
//! `tools`, one file each: `recent_commands`, `command_output`, `search`, `list_sessions`,
//! `terminal_status`, each with typed arguments whose derived JSON Schema is its `inputSchema`
//! and against which a call's arguments are checked. Their text is always redacted, within the
//! call's token budget, and fenced and labelled as recorded terminal data, not instructions
//! (every recorded field inside the fence, none in the labels around it); structured results
//! come with an output schema. Which session a call reads is decided in `session`, and every
//! result says which one and why.

pub(crate) mod protocol;
pub(crate) mod rpc;
pub(crate) mod session;
pub(crate) mod tools;

use anyhow::Result;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::context::request::{Facts, Settings};

/// What the server knows of where it runs and what the user configured, from the process's
/// one setup (`omnish mcp`'s `Setup`: no environment reads in here): the same facts and
/// settings every other front end builds its requests with, so `terminal_status` folds loops
/// as `omnish status` does and results are as wide and as redacted as `omnish context` makes
/// them.
#[derive(Debug, Clone)]
pub struct Config {
    /// The store, the session the agent runs in (`OMNISH_SESSION_ID`), the server's working
    /// directory (the agent's project), the time zone.
    pub(crate) facts: Facts,
    /// The configuration's values.
    pub(crate) settings: Settings,
}

impl Config {
    /// A server over the store at `data_root`, run in `cwd`, with the built-in settings and no
    /// session of its own. Public for the fuzz target (`fuzz/fuzz_targets/mcp_request.rs`).
    pub fn at(data_root: PathBuf, cwd: PathBuf) -> Config {
        Config {
            facts: Facts::at(data_root, cwd),
            settings: Settings::default(),
        }
    }

    /// A server with these facts (a working directory among them) and settings.
    pub(crate) fn new(facts: Facts, settings: Settings) -> Config {
        Config { facts, settings }
    }

    /// The store's root, absolute.
    pub(crate) fn data_root(&self) -> &Path {
        &self.facts.data_root
    }

    /// The recorded terminal the agent (and so this server) runs in.
    pub(crate) fn env_session(&self) -> Option<&str> {
        self.facts.current_session.as_deref()
    }

    /// The server's working directory: the agent's project.
    pub(crate) fn cwd(&self) -> &Path {
        self.facts.cwd.as_deref().unwrap_or(Path::new("/"))
    }
}

/// Longest line read: a larger message is answered with an error and skipped, never held
/// whole (an MCP request is a few hundred bytes).
pub(crate) const MAX_LINE: usize = 1 << 20;

/// Serves requests from `input` until it ends, writing one response per line to `output`.
/// Public for the fuzz target.
pub fn serve(config: &Config, input: &mut dyn BufRead, output: &mut dyn Write) -> Result<()> {
    let mut server = protocol::Server::new(config.clone());
    let mut line = Vec::new();
    loop {
        line.clear();
        let (n, too_long) = read_line(input, &mut line, MAX_LINE)?;
        if n == 0 {
            return Ok(());
        }
        let reply = if too_long {
            Some(protocol::Reply::error(
                protocol::Id::null(),
                rpc::INVALID_REQUEST,
                &format!(
                    "Invalid Request: message longer than {} MiB ({MAX_LINE} bytes); skipped. \
                     Send one JSON-RPC message per line.",
                    MAX_LINE >> 20
                ),
                None,
            ))
        } else {
            server.handle_line(&line)
        };
        if let Some(reply) = reply {
            let mut text = reply.to_line();
            text.push('\n');
            output.write_all(text.as_bytes())?;
            output.flush()?;
        }
    }
}

/// Reads one line (without its newline) into `buf`, keeping at most `cap` bytes; returns the
/// bytes consumed (0 at end of input) and whether the line was longer than `cap`.
fn read_line(input: &mut dyn BufRead, buf: &mut Vec<u8>, cap: usize) -> Result<(usize, bool)> {
    let mut consumed = 0;
    let mut too_long = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            return Ok((consumed, too_long));
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let data = &chunk[..if done { take - 1 } else { take }];
        if buf.len() + data.len() > cap {
            too_long = true;
        } else {
            buf.extend_from_slice(data);
        }
        input.consume(take);
        consumed += take;
        if done {
            return Ok((consumed, too_long));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_whole_or_skipped_when_too_long() {
        let mut input = std::io::Cursor::new(b"abc\r\nlonger line\nlast".to_vec());
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut input, &mut buf, 8).unwrap(), (5, false));
        assert_eq!(buf, b"abc\r");
        buf.clear();
        assert_eq!(read_line(&mut input, &mut buf, 8).unwrap(), (12, true));
        buf.clear();
        assert_eq!(read_line(&mut input, &mut buf, 8).unwrap(), (4, false));
        assert_eq!(buf, b"last");
        buf.clear();
        assert_eq!(read_line(&mut input, &mut buf, 8).unwrap(), (0, false));
    }
}
