//! nushell: how `omnish wrap nu` starts it with omnish's hooks (`shell/nu/omnish.nu`).
//!
//! nushell evaluates `--execute` commands after `env.nu`, `config.nu`, `login.nu` and every
//! vendor and user autoload file, right before its first prompt: the launch adds
//! `--execute "source <dir>/omnish.nu"` (before the user's own `--execute` commands, if any), so
//! the hooks go in after everything the user's configuration did, a prompt that sets
//! `PROMPT_COMMAND` and a config that assigns `$env.config = {...}` whole included.
//!
//! A nu that replaces the recorded shell (`exec nu`) or starts from one of its commands (a
//! typed `nu`) cannot be given arguments: the hooks export `NU_VENDOR_AUTOLOAD_DIR=<dir>/nu-exec`
//! (or `nu-nest`) for that command only, which nushell reads at start as one more vendor
//! autoload directory (after `config.nu`), and the hooks there hide it again.
//!
//! The token is in `<dir>/nu.token` (0600), read by the hooks into a variable only their
//! closures capture: never in `$env` (nushell passes every string of it to the programs it
//! runs) nor in an argument.

use super::{ShellArgs, write_private};
use anyhow::{Context, Result};
use std::path::Path;

pub(crate) const NU_HOOKS: &str = include_str!("../../../shell/nu/omnish.nu");

/// The file that holds the session's token for the nu hooks.
pub(crate) const TOKEN_FILE: &str = "nu.token";

/// Options of nu that take a value (`-c STRING`, `--config PATH`).
const WITH_VALUE: &[&str] = &[
    "-c",
    "--commands",
    "-e",
    "--execute",
    "-m",
    "--table-mode",
    "-I",
    "--include-path",
    "--config",
    "--env-config",
    "--config-home",
    "--error-style",
    "--log-level",
    "--log-target",
    "--log-file",
    "--log-include",
    "--log-exclude",
    "--plugin-config",
    "--plugins",
    "--experimental-options",
    "--testbin",
    "--mcp-transport",
    "--mcp-port",
    "--ide-goto-def",
    "--ide-hover",
    "--ide-complete",
    "--ide-check",
];

/// Options after which nu runs no REPL (help, version, a language or MCP server, a test
/// binary, an IDE query).
const NO_REPL: &[&str] = &[
    "-h",
    "--help",
    "-v",
    "--version",
    "--lsp",
    "--mcp",
    "--testbin",
    "--ide-goto-def",
    "--ide-hover",
    "--ide-complete",
    "--ide-check",
    "--ide-ast",
];

/// nu's arguments: `-c`/`--commands STRING`, a script file, `-l`/`--login`, `-n`/
/// `--no-config-file`, `-e`/`--execute STRING` (kept apart: omnish's own `--execute` comes
/// first), and the options that run no REPL (`script` then names the option, so the run is
/// recorded as one command).
pub(crate) fn parse(args: &[String]) -> ShellArgs {
    let mut out = ShellArgs::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if !a.starts_with('-') || a == "-" {
            // The script, then its arguments.
            out.passthrough.extend(args[i..].iter().cloned());
            out.script = Some(a.clone());
            return out;
        }
        if a == "--" {
            out.passthrough.extend(args[i..].iter().cloned());
            out.script = args.get(i + 1).cloned();
            return out;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if a.starts_with("--") => (n, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let value = if WITH_VALUE.contains(&name) && inline.is_none() {
            i += 1;
            args.get(i).cloned()
        } else {
            inline
        };
        if NO_REPL.contains(&name) && out.script.is_none() {
            out.script = Some(name.to_string());
        }
        match name {
            "-c" | "--commands" => out.command = Some(value.clone().unwrap_or_default()),
            "-e" | "--execute" => {
                out.execute = value;
                i += 1;
                continue;
            }
            "-l" | "--login" => out.login = true,
            "-n" | "--no-config-file" => out.norc = true,
            // Short flags together (`-li`).
            s if !s.starts_with("--")
                && s.len() > 2
                && s[1..].chars().all(|c| "lin".contains(c)) =>
            {
                out.login |= s.contains('l');
                out.norc |= s.contains('n');
            }
            _ => {}
        }
        out.passthrough.push(name.to_string());
        if WITH_VALUE.contains(&name) {
            if let Some(v) = value {
                out.passthrough.push(v);
            }
        }
        i += 1;
    }
    out
}

/// Writes the nu hooks into the private directory `dir`: `omnish.nu` (the launch),
/// `nu-exec/omnish.nu` (a nu that replaces the recorded shell), `nu-nest/omnish.nu` (a nu that
/// starts from a command: it takes a token of its own) and the token.
pub(crate) fn write_files(dir: &Path, token: &str) -> Result<()> {
    write_private(&dir.join(TOKEN_FILE), &[token, "\n"])?;
    let d = nu_quote(&dir.to_string_lossy());
    write_private(
        &dir.join("omnish.nu"),
        &[NU_HOOKS, &format!("\n__omnish_hooks {d} top\n")],
    )?;
    for (sub, kind) in [("nu-exec", "exec"), ("nu-nest", "nest")] {
        let sub = dir.join(sub);
        crate::store::create_private_dir(&sub)
            .with_context(|| format!("cannot create {}", sub.display()))?;
        write_private(
            &sub.join("omnish.nu"),
            &[NU_HOOKS, &format!("\n__omnish_hooks {d} {kind}\n")],
        )?;
    }
    Ok(())
}

/// The arguments of the hooked launch: the user's (without `--execute`), then omnish's
/// `--execute`, which sources the hooks and then runs the user's `--execute` commands.
pub(crate) fn launch_args(dir: &Path, parsed: &ShellArgs) -> Vec<String> {
    let mut args = parsed.passthrough.clone();
    let mut execute = format!(
        "source {}",
        nu_quote(&dir.join("omnish.nu").to_string_lossy())
    );
    if let Some(user) = &parsed.execute {
        execute.push('\n');
        execute.push_str(user);
    }
    args.push("--execute".into());
    args.push(execute);
    args
}

/// A nu string literal for `s`: a raw string with enough `#` that nothing in it ends it.
pub(crate) fn nu_quote(s: &str) -> String {
    let mut hashes = String::from("#");
    while s.contains(&format!("'{hashes}")) {
        hashes.push('#');
    }
    format!("r{hashes}'{s}'{hashes}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(args: &[&str]) -> ShellArgs {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse(&args)
    }

    #[test]
    fn commands_scripts_and_servers_are_not_interactive() {
        let a = parse_str(&["-c", "ls | length"]);
        assert_eq!(a.command.as_deref(), Some("ls | length"));
        assert!(!a.interactive());
        let a = parse_str(&["--config", "/x/config.nu", "script.nu", "-l"]);
        assert_eq!(a.script.as_deref(), Some("script.nu"));
        assert!(!a.login, "-l after the script is the script's");
        for flag in ["--lsp", "--version", "-h", "--mcp"] {
            assert!(!parse_str(&[flag]).interactive(), "{flag}");
        }
        assert!(parse_str(&["-i"]).interactive());
        assert!(parse_str(&["--config", "c.nu", "-m", "light"]).interactive());
    }

    #[test]
    fn login_no_config_and_execute() {
        let a = parse_str(&["-l", "--execute", "print hi", "--env-config=/e.nu"]);
        assert!(a.login);
        assert_eq!(a.execute.as_deref(), Some("print hi"));
        assert_eq!(a.passthrough, vec!["-l", "--env-config", "/e.nu"]);
        let a = parse_str(&["-n", "--no-history"]);
        assert!(a.norc);
        let a = parse_str(&["-li"]);
        assert!(a.login && a.interactive());
    }

    #[test]
    fn the_launch_sources_the_hooks_then_the_users_execute() {
        let a = parse_str(&["-e", "print hi", "--login"]);
        let args = launch_args(Path::new("/run/omnish-x"), &a);
        assert_eq!(
            args,
            vec![
                "--login",
                "--execute",
                "source r#'/run/omnish-x/omnish.nu'#\nprint hi"
            ]
        );
    }

    #[test]
    fn raw_strings_outlast_their_content() {
        assert_eq!(nu_quote("/a b"), "r#'/a b'#");
        assert_eq!(nu_quote("/a'#b"), "r##'/a'#b'##");
    }
}
