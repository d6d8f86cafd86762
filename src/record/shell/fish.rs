//! fish: its options, and the hook files omnish writes into its private directory.
//!
//! `omnish wrap fish` runs `fish --init-command 'source <dir>/omnish.fish' ARGS`: fish runs
//! `--init-command` after its configuration (config.fish, conf.d/, the user's functions and
//! prompt), in fish 3 as in fish 4, and also under `--no-config`, so the hooks load after
//! whatever the user's configuration set up. The file starts with the session's token in a
//! global, unexported variable; only its path is in fish's argument list.
//!
//! A fish that replaces a recorded shell (`exec fish` from fish, bash or zsh) or is started from
//! one (a typed `fish`) gets the hooks through the environment of that one command: the hooks
//! prepend `<dir>/fish/exec` (or `<dir>/fish/nest`) to `XDG_DATA_DIRS`, and fish reads
//! `fish/vendor_conf.d/*.fish` under each of those directories at startup (after the user's
//! conf.d, before config.fish). omnish's file there puts the user's `XDG_DATA_DIRS` back first,
//! then loads the hooks; the nested one takes a token of its own (see `shell/fish/nest.fish`).

use super::{ShellArgs, write_private};
use anyhow::{Context, Result};
use std::path::Path;

pub(crate) const FISH_HOOKS: &str = include_str!("../../../shell/fish/omnish.fish");
pub(crate) const FISH_VENDOR: &str = include_str!("../../../shell/fish/vendor.fish");
pub(crate) const FISH_NEST: &str = include_str!("../../../shell/fish/nest.fish");

/// The file omnish's fish hooks are read from at the start (`--init-command`).
pub(crate) const FISH_RC: &str = "omnish.fish";
/// The name of omnish's file in `vendor_conf.d` (unique, so no file of the user's or of a
/// package masks it: fish reads one file per name).
pub(crate) const VENDOR_FILE: &str = "omnish-hooks.fish";

/// Reads fish's options (fish 3.6 and 4): `-c`/`--command` runs a command string; `-C`,
/// `-d`, `-o`, `-f`, `-p` and their long forms take a value; the first operand is a script.
/// Everything is passed on as it is: fish handles `-l`, `-i`, `--private` and `--no-config`
/// itself, and omnish's hooks load through `--init-command` in every case.
pub(crate) fn parse(args: &[String]) -> ShellArgs {
    let mut out = ShellArgs {
        passthrough: args.to_vec(),
        ..ShellArgs::default()
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            out.script = args.get(i + 1).cloned();
            return out;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let takes_value = matches!(
                name,
                "command"
                    | "init-command"
                    | "debug"
                    | "debug-output"
                    | "features"
                    | "profile"
                    | "profile-startup"
            );
            let value = if takes_value && value.is_none() {
                i += 1;
                args.get(i).cloned()
            } else {
                value
            };
            match name {
                "command" => out.command = Some(value.unwrap_or_default()),
                "login" => out.login = true,
                "no-config" => out.norc = true,
                _ => {}
            }
            i += 1;
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            let flags: Vec<char> = a[1..].chars().collect();
            for (j, &c) in flags.iter().enumerate() {
                match c {
                    'c' | 'C' | 'd' | 'o' | 'f' | 'p' => {
                        // The rest of the word, else the next argument, is the value.
                        let rest: String = flags[j + 1..].iter().collect();
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i).cloned().unwrap_or_default()
                        } else {
                            rest
                        };
                        if c == 'c' {
                            out.command = Some(value);
                        }
                        break;
                    }
                    'l' => out.login = true,
                    'N' => out.norc = true,
                    _ => {}
                }
            }
            i += 1;
            continue;
        }
        out.script = Some(a.clone());
        return out;
    }
    out
}

/// Single-quotes `s` for fish (inside single quotes fish reads `\'` and `\\`).
pub(crate) fn fish_quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', r"\\").replace('\'', r"\'"))
}

/// Writes the fish files into the private directory `dir` (the session's token `token`,
/// `auto` the fish lines of nest.auto) and returns the arguments that load the hooks at the
/// start.
pub(crate) fn write_files(dir: &Path, token: &str, auto: &str) -> Result<Vec<String>> {
    let dir_s = dir.to_string_lossy();
    let common = format!("set -g __omnish_dir {}\n{auto}", fish_quote(&dir_s));
    let rc = dir.join(FISH_RC);
    let header = format!("set -g __omnish_token {token}\n{common}");
    write_private(&rc, &[&header, FISH_HOOKS])?;
    let fish_dir = dir.join("fish");
    for (name, nested) in [("exec", false), ("nest", true)] {
        let base = fish_dir.join(name);
        let vendor = base.join("fish").join("vendor_conf.d");
        for d in [&fish_dir, &base, &base.join("fish"), &vendor] {
            if !d.exists() {
                crate::store::create_private_dir(d)
                    .with_context(|| format!("cannot create {}", d.display()))?;
            }
        }
        let self_line = format!(
            "set -g __omnish_self {}\n",
            fish_quote(&base.to_string_lossy())
        );
        let file = vendor.join(VENDOR_FILE);
        if nested {
            let header = format!(
                "{self_line}set -g __omnish_key {token}\nset -g __omnish_nested 1\nset -g __omnish_again_prompts {}\n{common}",
                super::AGAIN_PROMPTS
            );
            write_private(&file, &[&header, FISH_VENDOR, FISH_NEST, FISH_HOOKS])?;
        } else {
            let header = format!("{self_line}set -g __omnish_token {token}\n{common}");
            write_private(&file, &[&header, FISH_VENDOR, FISH_HOOKS])?;
        }
    }
    Ok(vec![
        "--init-command".to_string(),
        format!("source {}", fish_quote(&rc.to_string_lossy())),
    ])
}

/// nest.auto for fish: the programs and the omnish binary, as fish globals.
pub(crate) fn auto_lines(programs: &str, omnish: &str) -> String {
    format!(
        "set -g __omnish_auto {}\nset -g __omnish_bin {}\n",
        fish_quote(programs),
        fish_quote(omnish)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::shell::ShellKind;

    fn parse(args: &[&str]) -> ShellArgs {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        ShellArgs::parse(ShellKind::Fish, &args)
    }

    #[test]
    fn kinds() {
        assert_eq!(ShellKind::of("/usr/bin/fish"), ShellKind::Fish);
        assert_eq!(ShellKind::of("-fish"), ShellKind::Fish);
    }

    #[test]
    fn fish_options() {
        let a = parse(&["-l", "--private", "-i"]);
        assert!(a.login && a.interactive());
        assert_eq!(a.passthrough, ["-l", "--private", "-i"]);
        assert!(parse(&["--login"]).login);
        assert!(parse(&["--no-config"]).norc && parse(&["-N"]).interactive());
        assert_eq!(
            parse(&["-c", "echo hi"]).command.as_deref(),
            Some("echo hi")
        );
        assert_eq!(parse(&["-lc", "ls"]).command.as_deref(), Some("ls"));
        assert_eq!(parse(&["--command=ls"]).command.as_deref(), Some("ls"));
        assert_eq!(parse(&["--command", "ls"]).command.as_deref(), Some("ls"));
        // Options taking a value do not make a script of it.
        assert!(parse(&["-C", "set x 1", "--features", "qmark-noglob", "-d", "x"]).interactive());
        assert!(parse(&["--init-command=echo", "-Cecho"]).interactive());
        let a = parse(&["-i", "script.fish", "arg"]);
        assert_eq!(a.script.as_deref(), Some("script.fish"));
    }

    #[test]
    fn quoting() {
        assert_eq!(fish_quote(r"a'b\c"), r"'a\'b\\c'");
    }
}
