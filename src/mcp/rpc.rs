//! What the JSON-RPC framing and the tools share, below both: error codes and [`RpcError`],
//! the protocol revisions served and [`Version`], and [`brief`] for quoting a hostile value in
//! an error. `protocol` (messages, lifecycle) and `tools` (the tools) both use it; it uses
//! neither, so the arrows point one way: protocol -> tools -> rpc.

use serde_json::Value;

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// The request's protocol version is not served (2026-07-28).
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The stateless revision: version, capabilities and identity on every request.
pub(crate) const MODERN_VERSION: &str = "2026-07-28";
/// Revisions reached through the `initialize` handshake, newest first.
pub(crate) const LEGACY_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Every version served, newest first.
pub(crate) fn supported_versions() -> Vec<&'static str> {
    let mut v = vec![MODERN_VERSION];
    v.extend(LEGACY_VERSIONS);
    v
}

/// The protocol revision a request is answered under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Version(pub &'static str);

impl Version {
    pub fn modern(self) -> bool {
        self.0 == MODERN_VERSION
    }
    /// Tools may declare `outputSchema` and return `structuredContent`, and have a `title`
    /// (2025-06-18 and later).
    pub fn structured(self) -> bool {
        !matches!(self.0, "2024-11-05" | "2025-03-26")
    }
}

pub(crate) fn known(v: &str) -> Option<&'static str> {
    supported_versions().into_iter().find(|s| *s == v)
}

/// A protocol-level error: code, message, optional data.
#[derive(Debug)]
pub(crate) struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }
}

/// Most chars of a JSON value an error message shows.
const BRIEF_CHARS: usize = 60;

/// `v` for an error message: its JSON text, at most [`BRIEF_CHARS`] chars of it, and how long
/// it was when it was cut.
pub(crate) fn brief(v: &Value) -> String {
    let text = v.to_string();
    let n = text.chars().count();
    if n <= BRIEF_CHARS {
        return text;
    }
    let head: String = text.chars().take(BRIEF_CHARS).collect();
    format!("{head}… ({n} chars)")
}
