//! `omnish hooks install|uninstall|status AGENT [--project]` and `omnish hooks run AGENT`:
//! every shell command a coding agent runs becomes a record, through the agent's own hooks.
//!
//! # Claude Code
//!
//! Installed in `~/.claude/settings.json` (with `--project`, `.claude/settings.json` of the
//! project: the git work tree holding the working directory, else that directory), as Claude
//! Code's hooks documentation describes them: a `PostToolUse` entry and a `PostToolUseFailure`
//! entry (Claude Code runs the first after a tool call that succeeded, the second after one that
//! failed, a command's non-zero exit included), each matching its `Bash` tool and running
//! `<omnish> hooks run claude-code` (the absolute path of this omnish, so the agent's `PATH`
//! does not matter).
//!
//! What is kept of the file: every key, in its order, and every value but `hooks` byte for byte
//! (they are carried as raw JSON text, never parsed into values); under `hooks`, every event
//! and every entry of the user's the same way. Only the layout of the top-level object, of
//! `hooks` and of the two event arrays omnish adds to is written anew (two-space indentation).
//! Installing twice adds nothing; uninstalling removes omnish's entries only (those whose
//! command runs `hooks run claude-code` of a program named `omnish`), and an event array or a
//! `hooks` object left empty by it. A file that is not a JSON object is left alone, with one
//! line saying so (exit 1).
//!
//! # Gemini CLI
//!
//! Installed in `~/.gemini/settings.json` (with `--project`, the project's
//! `.gemini/settings.json`), as Gemini CLI's hooks reference describes them: an `AfterTool`
//! entry matching its `run_shell_command` tool, with one hook named `omnish` running
//! `<omnish> hooks run gemini`. The file is kept as for Claude Code. Gemini CLI reads its
//! settings as JSON with comments; a file with comments is left alone, with one line giving the
//! entry to add by hand.
//!
//! # Codex CLI
//!
//! Installed in `~/.codex/hooks.json` (with `--project`, the project's `.codex/hooks.json`), as
//! Codex's hooks documentation describes them: a `PostToolUse` entry matching its `Bash` tool
//! (the same shape as Claude Code's; Codex refuses a `hooks.json` whose top level has other
//! keys than `description` and `hooks`, and omnish adds none). The file is kept as for Claude
//! Code. Codex runs a hook it does not manage only once the user has reviewed and trusted it
//! (its `/hooks` command): `install` says so. Codex's hook input has no exit status
//! (`codex.rs`): its records have none.
//!
//! # opencode
//!
//! A plugin, `omnish.js`, in `~/.config/opencode/plugins/` (with `--project`, the project's
//! `.opencode/plugins/`): a file of omnish's own, written and removed whole; see `opencode.rs`.
//!
//! # The hook
//!
//! `omnish hooks run AGENT` reads the JSON the agent writes on its stdin (see `claude.rs`,
//! `gemini.rs`, `codex.rs` and `opencode.rs` for what each sends and what is taken of it) and appends one record: the command,
//! its directory, the output as the agent received it, its exit status where the agent reports
//! one, author the agent's name. The record goes to a session attached to the recorded terminal
//! the agent runs in (`OMNISH_SESSION_ID`, which the agent and its hooks inherit), else to a
//! session of the agent's session (its `session_id`), one per agent session
//! ([`crate::store::attached`]). It always exits 0 and writes nothing on stdout or stderr,
//! whatever goes wrong: a hook must never fail or disturb the agent's tool call (Gemini CLI
//! reads a hook's stdout as its answer; nothing is no answer).

mod claude;
mod codex;
mod gemini;
mod opencode;

use crate::cli::{HookAgent, HooksAction, HooksArgs};
use crate::cmd::Run;
use crate::error::Error;
use crate::record::exec::{self, Recording};
use crate::store::{self, attached};
use anyhow::{Context, Result};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where and how omnish's hook goes into an agent's JSON settings file.
struct JsonSpec {
    /// The agent's name on the command line and as author.
    agent: &'static str,
    /// The agent's program (the "shell" of its sessions).
    program: &'static str,
    /// The directory of its settings, in the home directory or the project.
    dir: &'static str,
    /// The file there that holds its hooks.
    file: &'static str,
    /// The events omnish's hook is installed for.
    events: &'static [&'static str],
    /// The tool it matches.
    matcher: &'static str,
    /// The hook's name (Gemini CLI shows it in its hooks panel).
    name: Option<&'static str>,
    /// What the user must do for the agent to run it, said by `install` and `status`.
    note: Option<&'static str>,
}

const CLAUDE: JsonSpec = JsonSpec {
    agent: "claude-code",
    program: "claude",
    dir: ".claude",
    file: "settings.json",
    events: &["PostToolUse", "PostToolUseFailure"],
    matcher: claude::MATCHER,
    name: None,
    note: None,
};

const CODEX: JsonSpec = JsonSpec {
    agent: "codex",
    program: "codex",
    dir: ".codex",
    file: "hooks.json",
    events: &["PostToolUse"],
    matcher: codex::MATCHER,
    name: None,
    note: Some(
        "Codex runs a hook once you have reviewed and trusted it: open /hooks in Codex to trust it",
    ),
};

const GEMINI: JsonSpec = JsonSpec {
    agent: "gemini",
    program: "gemini",
    dir: ".gemini",
    file: "settings.json",
    events: &["AfterTool"],
    matcher: gemini::MATCHER,
    name: Some("omnish"),
    note: None,
};

/// The JSON settings of `agent` (opencode has a plugin instead: never asked here).
fn spec(agent: HookAgent) -> &'static JsonSpec {
    match agent {
        HookAgent::ClaudeCode => &CLAUDE,
        HookAgent::Gemini => &GEMINI,
        HookAgent::Codex => &CODEX,
        HookAgent::Opencode => unreachable!("opencode's hook is a plugin"),
    }
}

/// The author of `agent`'s records, and its program (the "shell" of its sessions).
fn names(agent: HookAgent) -> (&'static str, &'static str) {
    match agent {
        HookAgent::Opencode => ("opencode", "opencode"),
        other => (spec(other).agent, spec(other).program),
    }
}

/// One command an agent ran, as its hook reported it.
pub(crate) struct Hooked {
    /// The agent's session (sessions outside a terminal are kept per agent session).
    pub(crate) session: String,
    pub(crate) cwd: String,
    pub(crate) command: String,
    /// The output as the agent received it.
    pub(crate) output: Vec<u8>,
    /// The exit status, where the agent reports one.
    pub(crate) code: Option<i32>,
}

/// Most bytes of the agent's JSON read (a tool's whole output is in it).
const MAX_INPUT: u64 = 64 << 20;

/// `omnish hooks run AGENT` before the command line is parsed (`main` asks first): the hook
/// runs after each of the agent's tool calls and must be quick, and clap building the whole
/// command line's definition to parse four words is most of what a hook costs but its writes.
/// `None`: not those words exactly (then clap parses them, as for any command).
pub fn run_early(args: &[std::ffi::OsString]) -> Option<i32> {
    use clap::ValueEnum;
    let [_, hooks, run, agent] = args else {
        return None;
    };
    if hooks != "hooks" || run != "run" {
        return None;
    }
    let agent = HookAgent::from_str(agent.to_str()?, false).ok()?;
    Some(hook(agent))
}

/// The hook, always exit status 0 (see the module docs).
fn hook(agent: HookAgent) -> i32 {
    // Whatever happens: exit 0, nothing said (not a storage failure, not a store's notice,
    // not a panic's message).
    exec::set_quiet();
    store::notice::quiet();
    std::panic::set_hook(Box::new(|_| {}));
    let _ = std::panic::catch_unwind(|| run_hook(agent));
    0
}

impl Run for HooksArgs {
    fn run(self) -> Result<i32> {
        match self.action {
            HooksAction::Run { agent } => Ok(hook(agent)),
            HooksAction::Install {
                agent: HookAgent::Opencode,
                project,
            } => {
                let path = plugin_path(project)?;
                let exe = std::env::current_exe().context("cannot find omnish's own path")?;
                let changed = opencode::install(&path, &exe.to_string_lossy())?;
                println!(
                    "{} {}",
                    if changed {
                        "installed"
                    } else {
                        "already installed"
                    },
                    path.display()
                );
                Ok(0)
            }
            HooksAction::Uninstall {
                agent: HookAgent::Opencode,
                project,
            } => {
                let path = plugin_path(project)?;
                let removed = opencode::uninstall(&path)?;
                println!(
                    "{} {}",
                    if removed { "removed" } else { "not installed:" },
                    path.display()
                );
                Ok(0)
            }
            HooksAction::Status {
                agent: HookAgent::Opencode,
                project,
            } => {
                let path = plugin_path(project)?;
                if opencode::installed(&path) {
                    println!("installed: {}", path.display());
                    Ok(0)
                } else {
                    println!("not installed: no {}", path.display());
                    Ok(1)
                }
            }
            HooksAction::Install { agent, project } => {
                let spec = spec(agent);
                let path = settings_path(spec, project)?;
                let command = hook_command(spec.agent)?;
                let changed = edit(&path, |s| install(s, spec, &command))
                    .map_err(|e| by_hand(e, &path, spec, &command))?;
                println!(
                    "{} {}: {}",
                    if changed {
                        "installed in"
                    } else {
                        "already installed in"
                    },
                    path.display(),
                    command
                );
                if let Some(note) = spec.note {
                    println!("{note}");
                }
                Ok(0)
            }
            HooksAction::Uninstall { agent, project } => {
                let spec = spec(agent);
                let path = settings_path(spec, project)?;
                if !path.exists() {
                    println!("not installed: {} does not exist", path.display());
                    return Ok(0);
                }
                let changed = edit(&path, |s| uninstall(s, spec))?;
                println!(
                    "{} {}",
                    if changed {
                        "removed from"
                    } else {
                        "not installed in"
                    },
                    path.display()
                );
                Ok(0)
            }
            HooksAction::Status { agent, project } => {
                let spec = spec(agent);
                let path = settings_path(spec, project)?;
                let installed = match std::fs::read(&path) {
                    Ok(bytes) => {
                        let s: Ordered = serde_json::from_slice(&bytes).map_err(|e| {
                            Error::usage(format!(
                                "{} is not a JSON object ({e}){}; fix it, then try again",
                                path.display(),
                                comments_hint(&bytes)
                            ))
                        })?;
                        ours_in(&s, spec)?
                    }
                    Err(_) => Vec::new(),
                };
                if installed.is_empty() {
                    println!("not installed in {}", path.display());
                    Ok(1)
                } else {
                    println!(
                        "installed in {} for {}: {}",
                        path.display(),
                        installed.join(", "),
                        hook_command(spec.agent).unwrap_or_default()
                    );
                    if let Some(note) = spec.note {
                        println!("{note}");
                    }
                    Ok(0)
                }
            }
        }
    }
}

/// The settings file of `spec`'s agent: the user's, or the project's.
fn settings_path(spec: &JsonSpec, project: bool) -> Result<PathBuf> {
    if project {
        return Ok(project_root()?.join(spec.dir).join(spec.file));
    }
    Ok(home()?.join(spec.dir).join(spec.file))
}

/// The project: the git work tree holding the working directory, else that directory.
fn project_root() -> Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(crate::context::stages::select::git_root_or(&cwd))
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()))
        .ok_or_else(|| Error::usage("no home directory (HOME is not set); use --project").into())
}

/// Where omnish's opencode plugin goes: the project's `.opencode/plugins/`, or opencode's
/// configuration directory's (`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`).
fn plugin_path(project: bool) -> Result<PathBuf> {
    let dir = if project {
        project_root()?.join(".opencode")
    } else {
        match std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
            Some(d) => PathBuf::from(d).join("opencode"),
            None => home()?.join(".config").join("opencode"),
        }
    };
    Ok(dir.join("plugins").join(opencode::FILE))
}

/// What to say of a file that may have comments (JSON with comments is not edited).
fn comments_hint(bytes: &[u8]) -> &'static str {
    let has = |pat: &[u8]| memchr::memmem::find(bytes, pat).is_some();
    if has(b"//") || has(b"/*") {
        " (if it has comments: omnish does not edit a file with comments)"
    } else {
        ""
    }
}

/// An install that failed on a file with comments says what to add by hand.
fn by_hand(e: anyhow::Error, path: &Path, spec: &JsonSpec, command: &str) -> anyhow::Error {
    let commented = std::fs::read(path).is_ok_and(|b| !comments_hint(&b).is_empty());
    match crate::error::Error::from(e) {
        Error::Usage(u) if commented => {
            let mut entry = String::new();
            our_entry(spec, command).write(0, &mut entry);
            let entry = entry.split_whitespace().collect::<Vec<_>>().join(" ");
            Error::Usage(crate::error::Usage {
                message: format!(
                    "{}; or add omnish's hook by hand, to the array of hooks.{} there: {entry}",
                    u.message,
                    spec.events.join(" and of hooks.")
                ),
                ..u
            })
            .into()
        }
        other => other.into(),
    }
}

/// The command the hook runs: this omnish, by absolute path.
fn hook_command(agent: &str) -> Result<String> {
    let exe = std::env::current_exe().context("cannot find omnish's own path")?;
    let exe = exe.to_string_lossy();
    let quoted = shlex::try_quote(&exe).map_err(|_| anyhow::anyhow!("omnish's path is odd"))?;
    Ok(format!("{quoted} hooks run {agent}"))
}

/// Whether `command` is omnish's hook for `agent` (any omnish's path).
fn is_ours(command: &str, agent: &str) -> bool {
    let words = shlex::split(command).unwrap_or_default();
    words.len() == 4
        && Path::new(&words[0])
            .file_name()
            .is_some_and(|n| n == "omnish")
        && words[1..] == ["hooks", "run", agent]
}

/// A JSON object with its keys in order and its values as they were written.
#[derive(Default)]
struct Ordered(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Box<RawValue>>()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl Ordered {
    fn get(&self, key: &str) -> Option<&RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| &**v)
    }
}

/// A part of the settings being written: text kept as it was, or an object or array omnish
/// writes (two-space indentation at its depth, so the user's text beside it stays aligned).
enum Node {
    Raw(Box<RawValue>),
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
}

impl Node {
    fn string(s: &str) -> Node {
        Node::Raw(RawValue::from_string(serde_json::to_string(s).unwrap_or_default()).unwrap())
    }

    fn write(&self, depth: usize, out: &mut String) {
        let pad = |d: usize| "  ".repeat(d);
        match self {
            Node::Raw(r) => out.push_str(r.get()),
            Node::Object(items) if items.is_empty() => out.push_str("{}"),
            Node::Array(items) if items.is_empty() => out.push_str("[]"),
            Node::Object(items) => {
                out.push_str("{\n");
                for (i, (k, v)) in items.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push_str(": ");
                    v.write(depth + 1, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push('}');
            }
            Node::Array(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    v.write(depth + 1, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push(']');
            }
        }
    }
}

/// Omnish's entry for one event.
fn our_entry(spec: &JsonSpec, command: &str) -> Node {
    let mut hook = Vec::new();
    if let Some(name) = spec.name {
        hook.push(("name".into(), Node::string(name)));
    }
    hook.push(("type".into(), Node::string("command")));
    hook.push(("command".into(), Node::string(command)));
    Node::Object(vec![
        ("matcher".into(), Node::string(spec.matcher)),
        ("hooks".into(), Node::Array(vec![Node::Object(hook)])),
    ])
}

/// The settings to write: `settings` with `hooks` replaced by `hooks` (`None`: removed), each
/// event in `events` by its new entries.
fn rebuild(
    settings: &Ordered,
    hooks: &Ordered,
    events: Vec<(String, Option<Vec<Node>>)>,
) -> String {
    let mut hook_items: Vec<(String, Node)> = Vec::new();
    let mut events = events;
    for (k, v) in &hooks.0 {
        match events.iter().position(|(e, _)| e == k) {
            Some(i) => {
                if let (_, Some(entries)) = events.remove(i) {
                    hook_items.push((k.clone(), Node::Array(entries)));
                }
            }
            None => hook_items.push((k.clone(), Node::Raw(v.clone()))),
        }
    }
    for (e, entries) in events {
        if let Some(entries) = entries {
            hook_items.push((e, Node::Array(entries)));
        }
    }
    let mut top: Vec<(String, Node)> = Vec::new();
    let mut placed = false;
    for (k, v) in &settings.0 {
        if k == "hooks" {
            placed = true;
            if !hook_items.is_empty() {
                top.push((k.clone(), Node::Object(std::mem::take(&mut hook_items))));
            }
        } else {
            top.push((k.clone(), Node::Raw(v.clone())));
        }
    }
    if !placed && !hook_items.is_empty() {
        top.push(("hooks".into(), Node::Object(hook_items)));
    }
    let mut out = String::new();
    Node::Object(top).write(0, &mut out);
    out.push('\n');
    out
}

/// Whether an entry of an event array (`{"matcher", "hooks": [...]}`) runs omnish's hook.
fn entry_is_ours(entry: &RawValue, agent: &str) -> bool {
    #[derive(Deserialize)]
    struct Entry {
        #[serde(default)]
        hooks: Vec<serde_json::Value>,
    }
    serde_json::from_str::<Entry>(entry.get()).is_ok_and(|e| {
        !e.hooks.is_empty()
            && e.hooks
                .iter()
                .all(|h| h["command"].as_str().is_some_and(|c| is_ours(c, agent)))
    })
}

/// The `hooks` object of `settings`.
fn hooks_of(settings: &Ordered) -> Result<Ordered> {
    match settings.get("hooks") {
        Some(h) => serde_json::from_str(h.get())
            .map_err(|e| Error::usage(format!("its `hooks` is not a JSON object ({e})")).into()),
        None => Ok(Ordered::default()),
    }
}

/// The entries of one event's array.
fn event_entries(hooks: &Ordered, event: &str) -> Result<Vec<Box<RawValue>>> {
    match hooks.get(event) {
        Some(a) => serde_json::from_str(a.get()).map_err(|e| {
            Error::usage(format!("its `hooks.{event}` is not a JSON array ({e})")).into()
        }),
        None => Ok(Vec::new()),
    }
}

/// The events omnish's hook is installed for in `settings`.
fn ours_in(settings: &Ordered, spec: &JsonSpec) -> Result<Vec<String>> {
    let hooks = hooks_of(settings)?;
    let mut out = Vec::new();
    for event in spec.events {
        if event_entries(&hooks, event)?
            .iter()
            .any(|e| entry_is_ours(e, spec.agent))
        {
            out.push(event.to_string());
        }
    }
    Ok(out)
}

fn install(settings: &Ordered, spec: &JsonSpec, command: &str) -> Result<Option<String>> {
    let hooks = hooks_of(settings)?;
    let mut events = Vec::new();
    for event in spec.events {
        let entries = event_entries(&hooks, event)?;
        if entries.iter().any(|e| entry_is_ours(e, spec.agent)) {
            continue;
        }
        let mut nodes: Vec<Node> = entries.into_iter().map(Node::Raw).collect();
        nodes.push(our_entry(spec, command));
        events.push((event.to_string(), Some(nodes)));
    }
    Ok((!events.is_empty()).then(|| rebuild(settings, &hooks, events)))
}

fn uninstall(settings: &Ordered, spec: &JsonSpec) -> Result<Option<String>> {
    let hooks = hooks_of(settings)?;
    let mut events = Vec::new();
    for event in spec.events {
        let entries = event_entries(&hooks, event)?;
        let before = entries.len();
        let kept: Vec<Node> = entries
            .into_iter()
            .filter(|e| !entry_is_ours(e, spec.agent))
            .map(Node::Raw)
            .collect();
        if kept.len() != before {
            events.push((event.to_string(), (!kept.is_empty()).then_some(kept)));
        }
    }
    Ok((!events.is_empty()).then(|| rebuild(settings, &hooks, events)))
}

/// Applies `change` to the settings file at `path` (a missing one is an empty object) and
/// writes it back when it changed, atomically, keeping its permissions.
fn edit(path: &Path, change: impl FnOnce(&Ordered) -> Result<Option<String>>) -> Result<bool> {
    let named = |e: anyhow::Error| -> anyhow::Error {
        match crate::error::Error::from(e) {
            Error::Usage(u) => Error::Usage(crate::error::Usage {
                message: format!(
                    "{}: {}; fix it, then try again (nothing was changed)",
                    path.display(),
                    u.message
                ),
                ..u
            })
            .into(),
            other => other.into(),
        }
    };
    let settings = match std::fs::read(path) {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ordered::default(),
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            named(Error::usage(format!("not a JSON object ({e}){}", comments_hint(&bytes))).into())
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ordered::default(),
        Err(e) => return Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
    };
    let Some(text) = change(&settings).map_err(named)? else {
        return Ok(false);
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = path.with_extension("json.omnish-tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    if let Ok(m) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, m.permissions());
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(true)
}

/// The hook itself (see the module docs): any failure is silent.
fn run_hook(agent: HookAgent) -> Option<()> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT)
        .read_to_end(&mut bytes)
        .ok()?;
    let hooked = match agent {
        HookAgent::ClaudeCode => claude::hooked(serde_json::from_slice(&bytes).ok()?),
        HookAgent::Gemini => gemini::hooked(serde_json::from_slice(&bytes).ok()?),
        HookAgent::Codex => codex::hooked(serde_json::from_slice(&bytes).ok()?),
        HookAgent::Opencode => opencode::hooked(serde_json::from_slice(&bytes).ok()?),
    }?;
    drop(bytes);
    record(agent, hooked)
}

/// Appends `hooked` as a command by `agent` (see the module docs).
fn record(agent: HookAgent, hooked: Hooked) -> Option<()> {
    let (author, program) = names(agent);
    let (cfg, _) = crate::config::Config::load_lenient();
    let root = cfg.data_root().ok()?;
    let parent = std::env::var("OMNISH_SESSION_ID")
        .ok()
        .filter(|id| store::is_session_id(id))
        .filter(|id| store::sessions_dir(&root).join(id).is_dir());
    let key = (!hooked.session.is_empty()).then_some(hooked.session.as_str());
    let target = attached::Target {
        root: &root,
        parent: parent.as_deref(),
        author,
        // In a terminal, the agent's sessions share its attached sessions (one at a time).
        key: if parent.is_some() { None } else { key },
        meta: attached::new_meta(
            program,
            &[program.to_string()],
            &hooked.cwd,
            store::now_ms(),
        ),
        wait: true,
    };
    let claimed = attached::claim(target).ok()?;
    let mut rec = Recording::ended(claimed, &hooked.command, &hooked.cwd, author, (80, 24))?;
    rec.chunk(&hooked.output);
    rec.finish(hooked.code);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_twice_then_uninstall_keeps_the_rest_byte_for_byte() {
        let user = r#"{
  "model": "opus",
  "env": {"B": "2",   "A": "1"},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine.sh"}]}],
    "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}]
  },
  "permissions": {"allow": ["Bash(ls:*)"]}
}"#;
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(".claude/settings.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, user).unwrap();
        let cmd = "/opt/bin/omnish hooks run claude-code";
        assert!(edit(&path, |s| install(s, &CLAUDE, cmd)).unwrap());
        let once = std::fs::read_to_string(&path).unwrap();
        assert!(
            !edit(&path, |s| install(s, &CLAUDE, cmd)).unwrap(),
            "idempotent"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), once);
        // The user's values, as written, in their order.
        for kept in [
            r#""model": "opus""#,
            r#"{"B": "2",   "A": "1"}"#,
            r#"[{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine.sh"}]}]"#,
            r#"{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}"#,
            r#"{"allow": ["Bash(ls:*)"]}"#,
        ] {
            assert!(once.contains(kept), "{kept} lost:\n{once}");
        }
        let at = |s: &str| once.find(s).unwrap();
        assert!(at("\"model\"") < at("\"env\"") && at("\"env\"") < at("\"hooks\""));
        assert!(at("\"hooks\"") < at("\"permissions\""));
        let v: serde_json::Value = serde_json::from_str(&once).unwrap();
        assert_eq!(v["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(v["hooks"]["PostToolUse"][1]["hooks"][0]["command"], cmd);
        assert_eq!(v["hooks"]["PostToolUseFailure"][0]["matcher"], "Bash");
        let s: Ordered = serde_json::from_str(&once).unwrap();
        assert_eq!(ours_in(&s, &CLAUDE).unwrap(), CLAUDE.events);
        assert!(ours_in(&s, &GEMINI).unwrap().is_empty());
        assert!(edit(&path, |s| uninstall(s, &CLAUDE)).unwrap());
        // The same settings; every value omnish did not add to is back byte for byte, and
        // the user's entry in the array it added to too (only that array's layout is new).
        let after = std::fs::read_to_string(&path).unwrap();
        let (a, b): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&after).unwrap(),
            serde_json::from_str(user).unwrap(),
        );
        assert_eq!(a, b);
        for kept in [
            r#"  "model": "opus",
  "env": {"B": "2",   "A": "1"},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine.sh"}]}],"#,
            r#"{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}"#,
            r#"  "permissions": {"allow": ["Bash(ls:*)"]}
}
"#,
        ] {
            assert!(after.contains(kept), "{kept} changed:\n{after}");
        }
        assert!(!edit(&path, |s| uninstall(s, &CLAUDE)).unwrap());
    }

    #[test]
    fn a_file_that_is_not_an_object_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.json");
        std::fs::write(&path, "[1, 2").unwrap();
        let e = edit(&path, |s| {
            install(s, &CLAUDE, "omnish hooks run claude-code")
        })
        .unwrap_err();
        assert!(e.to_string().contains("nothing was changed"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[1, 2");
        // Gemini CLI allows comments; omnish does not edit around them.
        let commented = "{\n  // mine\n  \"theme\": \"dark\"\n}\n";
        std::fs::write(&path, commented).unwrap();
        let cmd = "omnish hooks run gemini";
        let e = edit(&path, |s| install(s, &GEMINI, cmd)).unwrap_err();
        let e = by_hand(e, &path, &GEMINI, cmd).to_string();
        assert!(
            e.contains("comments") && e.contains("nothing was changed"),
            "{e}"
        );
        assert!(
            e.contains(r#"hooks.AfterTool there: { "matcher": "^run_shell_command$", "hooks": [ { "name": "omnish", "type": "command", "command": "omnish hooks run gemini" } ] }"#),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), commented);
    }

    #[test]
    fn gemini_gets_an_after_tool_hook_beside_the_users() {
        let user = r#"{
  "theme": "GitHub",
  "hooksConfig": {"enabled": true},
  "hooks": {
    "AfterTool": [{"matcher": "write_file", "hooks": [{"name": "fmt", "type": "command", "command": "fmt.sh"}]}]
  }
}
"#;
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.json");
        std::fs::write(&path, user).unwrap();
        let cmd = "/opt/bin/omnish hooks run gemini";
        assert!(edit(&path, |s| install(s, &GEMINI, cmd)).unwrap());
        assert!(!edit(&path, |s| install(s, &GEMINI, cmd)).unwrap());
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let after = v["hooks"]["AfterTool"].as_array().unwrap();
        assert_eq!(after.len(), 2);
        assert_eq!(after[1]["matcher"], "^run_shell_command$");
        assert_eq!(after[1]["hooks"][0]["name"], "omnish");
        assert_eq!(after[1]["hooks"][0]["command"], cmd);
        // Claude Code's hook is another agent's: not this one.
        assert!(!edit(&path, |s| uninstall(s, &CLAUDE)).unwrap());
        assert!(edit(&path, |s| uninstall(s, &GEMINI)).unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            serde_json::from_str::<serde_json::Value>(user).unwrap()
        );
        assert!(
            text.starts_with(
                "{\n  \"theme\": \"GitHub\",\n  \"hooksConfig\": {\"enabled\": true},"
            )
        );
    }

    #[test]
    fn ours_is_omnish_running_the_hook_of_that_agent() {
        assert!(is_ours(
            "/usr/local/bin/omnish hooks run claude-code",
            "claude-code"
        ));
        assert!(is_ours("'/a b/omnish' hooks run gemini", "gemini"));
        assert!(!is_ours(
            "/usr/local/bin/omnish hooks run gemini",
            "claude-code"
        ));
        assert!(!is_ours(
            "omnish-other hooks run claude-code",
            "claude-code"
        ));
        assert!(!is_ours("mine.sh", "claude-code"));
    }
}
