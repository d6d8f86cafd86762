//! opencode: a plugin file of omnish's that calls `omnish hooks run opencode`, and what that
//! hook reads.
//!
//! opencode has no hooks in its settings: it runs plugins, JavaScript or TypeScript modules it
//! loads at startup from `.opencode/plugins/` of the project and `~/.config/opencode/plugins/`
//! (opencode.ai/docs/plugins; its loader globs `{plugin,plugins}/*.{ts,js}`). A plugin is a
//! function of opencode's context returning hooks; `tool.execute.after` is called after each
//! tool call with `(input, output)`: `input` holds `tool`, `sessionID`, `callID` and (newer
//! versions) `args`, `output` holds `title`, `output` and `metadata`
//! (packages/plugin/src/index.ts). For its `bash` tool (packages/opencode/src/tool/bash.ts)
//! `args.command` and `title` are the command line, `output` what the agent received (stdout
//! and stderr as they came, cut at 30,000 chars with a note), `metadata.exit` the exit status.
//!
//! omnish's plugin, `omnish.js`, is a file of omnish's own: `install` writes it (the same bytes
//! again: nothing changes), `uninstall` removes it, and both leave a file of that name alone
//! when it is not omnish's (its first line says whose it is). No other file is touched. For a
//! `bash` call it runs `<omnish> hooks run opencode` with one JSON object on its stdin
//! (`session_id`, `cwd`, `command`, `output`, `exit`), waits for it, and swallows every error:
//! a failing plugin must not fail the agent's tool call.

use super::Hooked;
use serde::Deserialize;

/// The plugin's file name.
pub(crate) const FILE: &str = "omnish.js";
/// The first line of omnish's plugin (how `uninstall` knows it is omnish's).
pub(crate) const MARK: &str = "// omnish: records every command opencode's bash tool runs";

/// The plugin that runs `command` (this omnish, by absolute path, as a JSON string literal).
pub(crate) fn plugin(omnish: &str) -> String {
    let exe = serde_json::to_string(omnish).unwrap_or_default();
    format!(
        r#"{MARK}
// (`omnish hooks install opencode` wrote it; `omnish hooks uninstall opencode` removes it).
import {{ spawn }} from "node:child_process"

const OMNISH = {exe}

export const OmnishPlugin = async ({{ directory }}) => ({{
  "tool.execute.after": async (input, output) => {{
    try {{
      if (input?.tool !== "bash") return
      const command = input.args?.command ?? output?.title
      if (typeof command !== "string" || command === "") return
      const record = JSON.stringify({{
        session_id: input.sessionID ?? "",
        cwd: directory ?? "",
        command,
        output: typeof output?.output === "string" ? output.output : "",
        exit: typeof output?.metadata?.exit === "number" ? output.metadata.exit : null,
      }})
      await new Promise((resolve) => {{
        const child = spawn(OMNISH, ["hooks", "run", "opencode"], {{
          stdio: ["pipe", "ignore", "ignore"],
        }})
        child.on("error", resolve)
        child.on("close", resolve)
        child.stdin.on("error", () => {{}})
        child.stdin.end(record)
      }})
    }} catch {{}}
  }},
}})
"#
    )
}

/// What omnish's plugin writes on the hook's stdin.
#[derive(Deserialize, Default)]
pub(crate) struct Input {
    #[serde(default)]
    session_id: String,
    #[serde(default)]
    cwd: String,
    #[serde(default)]
    command: String,
    #[serde(default)]
    output: String,
    #[serde(default)]
    exit: Option<i32>,
}

/// The command, its directory, its output as the agent received it and its status.
pub(crate) fn hooked(input: Input) -> Option<Hooked> {
    if input.command.is_empty() {
        return None;
    }
    Some(Hooked {
        session: input.session_id,
        cwd: input.cwd,
        command: input.command,
        output: input.output.into_bytes(),
        code: input.exit,
    })
}

/// Writes omnish's plugin at `path` for `omnish`: `false` when it is there already, as is. A
/// file there that is not omnish's is left alone (an error saying so).
pub(crate) fn install(path: &std::path::Path, omnish: &str) -> anyhow::Result<bool> {
    let text = plugin(omnish);
    match std::fs::read(path) {
        Ok(old) if old == text.as_bytes() => return Ok(false),
        Ok(old) if !old.starts_with(MARK.as_bytes()) => {
            return Err(crate::error::Error::usage(format!(
                "{} is not omnish's plugin; nothing was changed (move it away, then try again)",
                path.display()
            ))
            .into());
        }
        _ => {}
    }
    let dir = path
        .parent()
        .ok_or_else(|| anyhow::anyhow!("{} has no directory", path.display()))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let tmp = path.with_extension("js.omnish-tmp");
    std::fs::write(&tmp, text)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(true)
}

/// Removes omnish's plugin at `path`: `false` when there is none (a file there that is not
/// omnish's stays).
pub(crate) fn uninstall(path: &std::path::Path) -> anyhow::Result<bool> {
    if !installed(path) {
        return Ok(false);
    }
    std::fs::remove_file(path)
        .map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", path.display()))?;
    Ok(true)
}

/// Whether omnish's plugin is at `path`.
pub(crate) fn installed(path: &std::path::Path) -> bool {
    crate::store::open::read_capped(path, 64 * 1024).is_ok_and(|b| b.starts_with(MARK.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_is_omnishs_alone_and_installs_once() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(".opencode/plugins").join(FILE);
        assert!(install(&path, "/opt/omnish").unwrap());
        assert!(!install(&path, "/opt/omnish").unwrap());
        assert!(installed(&path));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#"const OMNISH = "/opt/omnish""#), "{text}");
        // Another omnish's path: rewritten.
        assert!(install(&path, "/usr/bin/omnish").unwrap());
        assert!(uninstall(&path).unwrap());
        assert!(!path.exists() && !uninstall(&path).unwrap());
        // A user's file of that name is not omnish's.
        std::fs::write(&path, "export const Mine = async () => ({})\n").unwrap();
        assert!(install(&path, "/opt/omnish").is_err());
        assert!(!uninstall(&path).unwrap());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "export const Mine = async () => ({})\n"
        );
        let h = hooked(
            serde_json::from_str(
                r#"{"session_id":"ses_1","cwd":"/p","command":"make","output":"ok\n","exit":2}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            (h.command.as_str(), h.code, h.output),
            ("make", Some(2), b"ok\n".to_vec())
        );
    }
}
