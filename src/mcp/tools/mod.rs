//! The server's tools, one file each: its typed arguments (`Args`, whose derived JSON Schema
//! is the tool's `inputSchema`), its output schema and its call, all through the library
//! ([`crate::context`]). This file holds the [`Tool`] trait and the table `tools/list` and
//! `tools/call` use; `args` checks a call's arguments against the derived schema, `shared`
//! holds what every tool's text has in common.
//!
//! Every text result starts with a line saying which session it comes from and why, and that
//! what follows is recorded terminal data, not instructions; the data itself sits in a fence
//! longer than any run of backticks inside it. Recorded fields in text show control characters
//! visibly ([`crate::term::visible`]); structured results hold them as recorded. Text is
//! redacted and counted with the o200k tokenizer against the call's `budget` (default
//! [`args::DEFAULT_BUDGET`]), labels and footer included. Structured results (2025-06-18 and
//! later) match the tool's `outputSchema`.
//!
//! Arguments that do not fit the tool's input schema (an unknown name, a wrong type, a value
//! out of range) are tool execution errors (`isError: true`), as the specification asks of
//! input validation errors: their text names the argument and what it accepts, so the model
//! can retry. Only a call that names no known tool, or whose `arguments` is not an object, is
//! a protocol error (-32602).

mod args;
mod command_output;
mod diff_output;
mod list_sessions;
mod recent_commands;
mod search;
mod shared;
mod terminal_status;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::sync::OnceLock;

use crate::context::support::pattern::quote;
use crate::mcp::Config;
use crate::mcp::rpc::{INVALID_PARAMS, RpcError, Version};

/// How long a client may cache `tools/list` (the list changes only with the binary).
pub(crate) const LIST_TTL_MS: u64 = 3_600_000;

/// One tool: what `tools/list` says of it and what `tools/call` runs.
trait Tool {
    const NAME: &'static str;
    /// A short human-readable name (2025-06-18 and later).
    const TITLE: &'static str;
    /// What it gives and when to use it: what the model reads to choose a tool.
    const DESCRIPTION: &'static str;
    /// Its arguments, as a call sends them; their derived schema is the `inputSchema`.
    type Args: DeserializeOwned + schemars::JsonSchema;
    /// The schema of its structured result.
    fn output_schema() -> Value;
    /// The call, with arguments that passed the schema.
    fn call(config: &Config, args: Self::Args) -> ToolResult;
}

/// What a tool produced: text for the model, and the structured result.
struct Output {
    text: String,
    structured: Value,
}

/// A tool execution error: text for the model to act on.
type ToolResult = std::result::Result<Output, String>;

/// A [`Tool`] with its types erased, for the table.
struct Entry {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    input: fn() -> Value,
    output: fn() -> Value,
    /// Checks the arguments against the input schema (given), then calls.
    run: fn(&Config, &Value, &Map<String, Value>) -> ToolResult,
}

const fn entry<T: Tool>() -> Entry {
    Entry {
        name: T::NAME,
        title: T::TITLE,
        description: T::DESCRIPTION,
        input: args::schema_for::<T::Args>,
        output: T::output_schema,
        run: run::<T>,
    }
}

fn run<T: Tool>(config: &Config, input: &Value, arguments: &Map<String, Value>) -> ToolResult {
    T::call(config, args::parse(input, arguments)?)
}

/// Every tool, in the order `tools/list` gives them.
const TOOLS: [Entry; 6] = [
    entry::<recent_commands::RecentCommands>(),
    entry::<command_output::CommandOutput>(),
    entry::<diff_output::DiffOutput>(),
    entry::<search::Search>(),
    entry::<list_sessions::ListSessions>(),
    entry::<terminal_status::TerminalStatus>(),
];

/// The input schemas of [`TOOLS`], derived once per process.
fn input_schemas() -> &'static [Value] {
    static SCHEMAS: OnceLock<Vec<Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| TOOLS.iter().map(|t| (t.input)()).collect())
}

/// The `tools/list` result for `version`.
pub(crate) fn list(version: Version) -> Map<String, Value> {
    let tools: Vec<Value> = TOOLS
        .iter()
        .zip(input_schemas())
        .map(|(tool, input)| {
            let mut t = json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": input,
                "annotations": {"readOnlyHint": true, "openWorldHint": false},
            });
            if version.structured() {
                t["title"] = json!(tool.title);
                t["outputSchema"] = (tool.output)();
            }
            t
        })
        .collect();
    let mut m = Map::new();
    m.insert("tools".into(), Value::Array(tools));
    if version.modern() {
        m.insert("ttlMs".into(), json!(LIST_TTL_MS));
        m.insert("cacheScope".into(), json!("public"));
    }
    m
}

/// Serves `tools/call`.
pub(crate) fn call(
    config: &Config,
    version: Version,
    params: &Map<String, Value>,
) -> std::result::Result<Map<String, Value>, RpcError> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "Invalid params: tools/call needs \"name\" (a string)",
        ));
    };
    let empty = Map::new();
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(a)) => a,
        Some(_) => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "Invalid params: \"arguments\" must be an object",
            ));
        }
    };
    let Some(i) = TOOLS.iter().position(|t| t.name == name) else {
        let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        return Err(RpcError::new(
            INVALID_PARAMS,
            format!("Unknown tool: {}; tools: {}", quote(name), names.join(", ")),
        ));
    };
    let result = (TOOLS[i].run)(config, &input_schemas()[i], arguments);
    let mut m = Map::new();
    match result {
        Ok(out) => {
            m.insert(
                "content".into(),
                json!([{"type": "text", "text": out.text}]),
            );
            if version.structured() {
                m.insert("structuredContent".into(), out.structured);
            }
            m.insert("isError".into(), json!(false));
        }
        Err(why) => {
            m.insert("content".into(), json!([{"type": "text", "text": why}]));
            m.insert("isError".into(), json!(true));
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> usize {
        TOOLS.iter().position(|t| t.name == name).unwrap()
    }

    /// `arguments` as `name` takes them (schema check and deserialization, not the call).
    fn parse_as<T: Tool>(arguments: Value) -> std::result::Result<T::Args, String> {
        args::parse(
            &input_schemas()[tool(T::NAME)],
            arguments.as_object().unwrap(),
        )
    }

    #[test]
    fn every_tool_has_a_schema_that_names_its_arguments() {
        let l = list(Version("2025-11-25"));
        let tools = l["tools"].as_array().unwrap();
        assert_eq!(tools.len(), TOOLS.len());
        for t in tools {
            assert_eq!(t["inputSchema"]["type"], "object");
            assert_eq!(t["inputSchema"]["additionalProperties"], false, "{t}");
            assert!(t["outputSchema"]["type"] == "object", "{t}");
            assert!(t["description"].as_str().unwrap().len() > 80);
        }
        // Before 2025-06-18 there is no outputSchema; the modern list carries cache hints.
        let old = list(Version("2025-03-26"));
        assert!(old["tools"][0].get("outputSchema").is_none());
        assert!(old.get("ttlMs").is_none());
        let modern = list(Version("2026-07-28"));
        assert_eq!(modern["cacheScope"], "public");
    }

    /// The input schemas as `tools/list` gives them, pinned: what clients read to call a tool
    /// (names, types, required, ranges, defaults, descriptions). A change to an `Args` struct
    /// that changes them fails here; review the new schema and update `input_schemas.json`.
    #[test]
    fn input_schemas_are_the_reviewed_ones() {
        let derived: Map<String, Value> = TOOLS
            .iter()
            .zip(input_schemas())
            .map(|(t, s)| (t.name.to_string(), s.clone()))
            .collect();
        let pinned: Value = serde_json::from_str(include_str!("input_schemas.json")).unwrap();
        assert!(
            Value::Object(derived.clone()) == pinned,
            "input schemas changed; if the change is meant, src/mcp/tools/input_schemas.json \
             becomes:\n{}",
            serde_json::to_string_pretty(&derived).unwrap()
        );
    }

    /// A value `schema` accepts for an argument it names: its default, else its minimum, else
    /// one of its type.
    fn valid(name: &str, spec: &Value) -> Value {
        if let Some(d) = spec.get("default") {
            return d.clone();
        }
        match spec["type"].as_str() {
            Some("integer") => spec["minimum"].clone(),
            Some("boolean") => json!(true),
            Some("string") if name == "cwd" => json!("/"),
            Some("string") if name == "id" => json!("S:1"),
            Some("string") => json!("x"),
            other => panic!("argument {name}: no value for type {other:?}"),
        }
    }

    fn accepts_every_named_argument<T: Tool>() {
        let schema = &input_schemas()[tool(T::NAME)];
        let props = schema["properties"].as_object().unwrap();
        assert!(!props.is_empty(), "{}", T::NAME);
        let all: Map<String, Value> = props
            .iter()
            .map(|(k, s)| (k.clone(), valid(k, s)))
            .collect();
        if let Err(e) = parse_as::<T>(Value::Object(all.clone())) {
            panic!("{}: {all:?} refused: {e}", T::NAME);
        }
        // Each alone (with what is required), and sent as null (as not sent).
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (key, value) in &all {
            let mut one: Map<String, Value> = required
                .iter()
                .map(|r| (r.to_string(), all[*r].clone()))
                .collect();
            one.insert(key.clone(), value.clone());
            assert!(parse_as::<T>(Value::Object(one.clone())).is_ok(), "{one:?}");
            if !required.contains(&key.as_str()) {
                one.insert(key.clone(), Value::Null);
                assert!(parse_as::<T>(Value::Object(one.clone())).is_ok(), "{one:?}");
            }
        }
        // A name the schema does not have is refused, named, with the names it has.
        let mut unknown = all.clone();
        unknown.insert("cuont".into(), json!(3));
        let e = parse_as::<T>(Value::Object(unknown)).err().unwrap();
        assert!(
            e.starts_with("unknown argument \"cuont\"; this tool takes: "),
            "{e}"
        );
        for key in props.keys() {
            assert!(e.contains(key.as_str()), "{e}");
        }
    }

    #[test]
    fn every_argument_a_schema_names_is_accepted_and_no_other() {
        accepts_every_named_argument::<recent_commands::RecentCommands>();
        accepts_every_named_argument::<command_output::CommandOutput>();
        accepts_every_named_argument::<diff_output::DiffOutput>();
        accepts_every_named_argument::<search::Search>();
        accepts_every_named_argument::<list_sessions::ListSessions>();
        accepts_every_named_argument::<terminal_status::TerminalStatus>();
        assert_eq!(TOOLS.len(), 6, "a new tool: add it above");
    }

    #[test]
    fn arguments_are_checked_against_the_schema() {
        use recent_commands::RecentCommands as Recent;
        let e = |v: Value| parse_as::<Recent>(v).err().unwrap();
        assert_eq!(
            e(json!({"count": 0})),
            "argument `count` must be an integer from 1 to 200; got 0"
        );
        assert_eq!(
            e(json!({"count": "3"})),
            "argument `count` must be an integer from 1 to 200; got \"3\""
        );
        assert_eq!(
            e(json!({"budget": 100})),
            "argument `budget` must be an integer from 200 to 200000; got 100"
        );
        assert_eq!(
            e(json!({"failed": "yes"})),
            "argument `failed` must be true or false; got \"yes\""
        );
        assert_eq!(e(json!({"grep": ""})), "argument `grep` must not be empty");
        assert_eq!(
            e(json!({"since": 5})),
            "argument `since` must be a string; got 5"
        );
        // Values are quoted short, however long.
        let long = e(json!({"count": "9".repeat(1_000_000)}));
        assert!(long.len() < 200, "{long}");
        let e = parse_as::<command_output::CommandOutput>(json!({}))
            .err()
            .unwrap();
        assert_eq!(e, "missing argument `id`");
        let e = parse_as::<command_output::CommandOutput>(json!({"id": null}))
            .err()
            .unwrap();
        assert_eq!(e, "missing argument `id`");
    }
}
