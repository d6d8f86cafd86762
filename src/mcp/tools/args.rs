//! Typed tool arguments: the input schema derived from a tool's `Args` (schemars, JSON Schema
//! 2020-12 as deserialized), and a call's arguments checked against that schema before serde
//! turns them into `Args`.
//!
//! The check is what makes errors useful to a model: serde's messages name no argument and
//! quote values whole (a 1 MB string comes back as 1 MB), so every name, type, range and
//! length the schema states is checked here first, and an error names the argument, says what
//! it accepts and quotes at most a short prefix of what it got ([`brief`]). Arguments sent as
//! `null` count as not sent (their default applies).

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;

use crate::context::support::pattern::quote;
use crate::mcp::rpc::brief;

/// Tokens a call may return when it does not say (a few thousand).
pub(crate) const DEFAULT_BUDGET: u64 = 4000;
const MIN_BUDGET: u64 = 200;
const MAX_BUDGET: u64 = 200_000;

/// `N`: a whole-number argument's default (`#[serde(default = "number::<N>")]`).
pub(crate) fn number<const N: u32>() -> u32 {
    N
}

/// The `budget` every tool but `terminal_status` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(transparent)]
pub(crate) struct Budget(pub(crate) u64);

impl Default for Budget {
    fn default() -> Budget {
        Budget(DEFAULT_BUDGET)
    }
}

impl Budget {
    pub(crate) fn tokens(self) -> usize {
        self.0 as usize
    }
}

impl JsonSchema for Budget {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Budget".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "integer", "minimum": MIN_BUDGET, "maximum": MAX_BUDGET,
            "description": "Most tokens (o200k) the text result may count, labels included. Older commands are summarized, then dropped, to fit."
        })
    }
}

/// The `session` a tool reads: an id or a prefix of one, `current` or `all` (checked with the
/// library's session parser when the call runs).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(transparent)]
pub(crate) struct Session(pub(crate) String);

impl Session {
    pub(crate) fn current() -> Session {
        Session("current".into())
    }

    pub(crate) fn all() -> Session {
        Session("all".into())
    }
}

impl JsonSchema for Session {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Session".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string", "minLength": 1,
            "description": "Which recorded terminal: a session id (or a unique prefix of one, or of its part after the last '-'), 'current' (the agent's own terminal, else the most recent live one in this project, else the most recent) or 'all'. list_sessions shows the ids."
        })
    }
}

/// The input schema of `T`: JSON Schema 2020-12 as serde deserializes `T`, every argument's
/// schema inline (no `$defs`), without the `$schema`, `title` and `description` of the whole
/// (the tool's description says what the tool does), without integer `format`s (the range
/// says it) and without the `null` default of an optional argument (not a value it takes).
pub(crate) fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(root) = schema.as_object_mut() {
        for key in ["$schema", "title", "description"] {
            root.remove(key);
        }
        if let Some(Value::Object(props)) = root.get_mut("properties") {
            for spec in props.values_mut().filter_map(Value::as_object_mut) {
                if spec.get("type").and_then(Value::as_str) == Some("integer") {
                    spec.remove("format");
                }
                if spec.get("default") == Some(&Value::Null) {
                    spec.remove("default");
                }
            }
        }
    }
    schema
}

/// `arguments` checked against `schema` (the tool's input schema, from [`schema_for`]) and
/// deserialized: an unknown name, a missing required argument, a wrong type, an integer out of
/// range or an empty string is an error naming the argument and what it takes.
pub(crate) fn parse<T: DeserializeOwned>(
    schema: &Value,
    arguments: &Map<String, Value>,
) -> Result<T, String> {
    let empty = Map::new();
    let props = schema["properties"].as_object().unwrap_or(&empty);
    for key in arguments.keys() {
        if !props.contains_key(key) {
            let known: Vec<&str> = props.keys().map(String::as_str).collect();
            return Err(format!(
                "unknown argument {}; this tool takes: {}",
                quote(key),
                known.join(", ")
            ));
        }
    }
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap_or_default();
        if arguments.get(name).is_none_or(Value::is_null) {
            return Err(format!("missing argument `{name}`"));
        }
    }
    let mut sent = Map::new();
    for (key, value) in arguments.iter().filter(|(_, v)| !v.is_null()) {
        check(key, &props[key], value)?;
        sent.insert(key.clone(), value.clone());
    }
    serde_json::from_value(Value::Object(sent)).map_err(|e| {
        // Not reached for arguments the schema check let through; short all the same.
        format!(
            "arguments: {}",
            brief(&Value::String(e.to_string())).trim_matches('"')
        )
    })
}

/// `value` of argument `key` against its schema `spec`.
fn check(key: &str, spec: &Value, value: &Value) -> Result<(), String> {
    match spec["type"].as_str() {
        Some("integer") => {
            let (min, max) = (spec["minimum"].as_i64(), spec["maximum"].as_i64());
            let fits = value
                .as_i64()
                .is_some_and(|n| min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m));
            if fits {
                return Ok(());
            }
            let range = match (min, max) {
                (Some(a), Some(b)) => format!("an integer from {a} to {b}"),
                (Some(a), None) => format!("an integer from {a}"),
                (None, Some(b)) => format!("an integer up to {b}"),
                (None, None) => "an integer".to_string(),
            };
            Err(format!(
                "argument `{key}` must be {range}; got {}",
                brief(value)
            ))
        }
        Some("boolean") if !value.is_boolean() => Err(format!(
            "argument `{key}` must be true or false; got {}",
            brief(value)
        )),
        Some("string") => match value {
            Value::String(s) if s.is_empty() && spec["minLength"].as_u64().unwrap_or(0) > 0 => {
                Err(format!("argument `{key}` must not be empty"))
            }
            Value::String(_) => Ok(()),
            _ => Err(format!(
                "argument `{key}` must be a string; got {}",
                brief(value)
            )),
        },
        _ => Ok(()),
    }
}
