//! Shell detection and hook injection (SHELL-INTEGRATION.md §6 "Launch").
//!
//! bash: `bash --rcfile <private>/omnish.bash -i`; that file sources the user's startup files
//! (`~/.bashrc`, or the login files for `-l`) and then installs the hooks.
//! zsh: `ZDOTDIR=<private>`, whose `.zshenv`/`.zprofile`/`.zshrc`/`.zlogin` each give the user's
//! ZDOTDIR back and source the user's file of the same name; `.zshrc` then installs the hooks.
//! The private directory (0700, files 0600) holds the session token, which is never exported.
//! It holds the files of both shells and lives as long as the session: a shell that replaces the
//! recorded one (`exec bash`, `exec zsh`, `exec $SHELL`) is hooked again from it. For bash the
//! hooks export, for that exec only, `POSIXLY_CORRECT` and `ENV=<dir>/exec.bash` (a bash started
//! in POSIX mode reads `$ENV` instead of its startup files; exec.bash leaves POSIX mode and
//! reads them); for zsh `ZDOTDIR=<dir>`, as at the start.
//! fish: `fish --init-command`, and `XDG_DATA_DIRS` for an exec or a nested fish (the child
//! module `fish`).
//! nu: `nu --execute "source <private>/omnish.nu"`, run after the user's configuration (see
//! the `nu` module).
//! `-c`, a script argument or an unknown shell: no injection, the whole run is one command.

use anyhow::{Context, Result};
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub(crate) mod fish;
pub(crate) mod nu;

pub(crate) const BASH_HOOKS: &str = include_str!("../../shell/omnish.bash");
/// At how many of its first prompts a shell nested in a local one says again what it said as it
/// started (its token, program, user and host): a program between omnish and the shell may read
/// the first output away (`pipenv shell` drains everything up to its own activation, four
/// commands of its own, through pexpect). omnish hears it once and ignores the rest. Shells on
/// the far side of `omnish nest` say it once: their key is good for one marker.
pub(crate) const AGAIN_PROMPTS: u32 = 10;
pub(crate) const BASH_EXEC: &str = include_str!("../../shell/exec.bash");
pub(crate) const BASH_NEST: &str = include_str!("../../shell/nest.bash");
pub(crate) const ZSH_NEST: &str = include_str!("../../shell/zsh/nest.zsh");
pub(crate) const ZSHENV: &str = include_str!("../../shell/zsh/zshenv.zsh");
pub(crate) const ZPROFILE: &str = include_str!("../../shell/zsh/zprofile.zsh");
pub(crate) const ZSHRC: &str = include_str!("../../shell/zsh/zshrc.zsh");
pub(crate) const ZLOGIN: &str = include_str!("../../shell/zsh/zlogin.zsh");
pub(crate) const ZSH_HOOKS: &str = include_str!("../../shell/zsh/omnish.zsh");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellKind {
    Bash,
    Zsh,
    Fish,
    Nu,
    Other,
}

impl ShellKind {
    /// From a program name or path: `/usr/bin/zsh`, `-bash`, `bash5.2`.
    pub fn of(program: &str) -> ShellKind {
        let name = Path::new(program)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = name.trim_start_matches('-');
        if name.starts_with("bash") {
            ShellKind::Bash
        } else if name.starts_with("zsh") {
            ShellKind::Zsh
        } else if name.starts_with("fish") {
            ShellKind::Fish
        } else if name == "nu" {
            ShellKind::Nu
        } else {
            ShellKind::Other
        }
    }
}

/// What the user asked the shell to do, read from its arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellArgs {
    /// `-c STRING`: the command string.
    pub command: Option<String>,
    /// A script file to run.
    pub script: Option<String>,
    pub login: bool,
    /// bash `--rcfile`/`--init-file`.
    pub rcfile: Option<String>,
    /// bash `--norc`, zsh `-f`/`--no-rcs`, nu `-n`/`--no-config-file`.
    pub norc: bool,
    /// nu `-e`/`--execute`: commands to run before the first prompt.
    pub execute: Option<String>,
    /// The arguments to pass on when omnish injects its hooks (login and rc options removed for
    /// bash, which omnish replays itself).
    pub passthrough: Vec<String>,
}

impl ShellArgs {
    pub fn parse(kind: ShellKind, args: &[String]) -> ShellArgs {
        if kind == ShellKind::Fish {
            return fish::parse(args);
        }
        if kind == ShellKind::Nu {
            return nu::parse(args);
        }
        let mut out = ShellArgs::default();
        let mut wants_command = false;
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if a == "--" || a == "-" {
                out.passthrough.extend(args[i..].iter().cloned());
                let operand = args.get(i + 1).cloned();
                if wants_command {
                    out.command = operand;
                } else {
                    out.script = operand;
                }
                return out;
            }
            if let Some(long) = a.strip_prefix("--") {
                match long {
                    "login" => out.login = true,
                    "norc" | "no-rcs" => {
                        out.norc = true;
                        if kind != ShellKind::Bash {
                            out.passthrough.push(a.clone());
                        }
                    }
                    "rcfile" | "init-file" if kind == ShellKind::Bash => {
                        out.rcfile = args.get(i + 1).cloned();
                        i += 1;
                    }
                    _ => out.passthrough.push(a.clone()),
                }
                i += 1;
                continue;
            }
            if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
                let mut kept = String::from(&a[..1]);
                let mut takes_value = false;
                for c in a[1..].chars() {
                    match c {
                        'c' => {
                            wants_command = true;
                            kept.push(c);
                        }
                        'l' if a.starts_with('-') => {
                            out.login = true;
                            // bash's login is replayed by omnish's rcfile; zsh keeps its flag.
                            if kind != ShellKind::Bash {
                                kept.push(c);
                            }
                        }
                        'f' if kind == ShellKind::Zsh => {
                            out.norc = true;
                            kept.push(c);
                        }
                        'o' | 'O' => {
                            takes_value = true;
                            kept.push(c);
                        }
                        _ => kept.push(c),
                    }
                }
                if kept.len() > 1 {
                    out.passthrough.push(kept);
                }
                if takes_value {
                    if let Some(v) = args.get(i + 1) {
                        out.passthrough.push(v.clone());
                        i += 1;
                    }
                }
                i += 1;
                continue;
            }
            // The first operand: the command string after -c, else a script.
            out.passthrough.extend(args[i..].iter().cloned());
            if wants_command {
                out.command = Some(a.clone());
            } else {
                out.script = Some(a.clone());
            }
            return out;
        }
        out
    }

    /// Whether the shell will be interactive, so hooks make sense.
    pub fn interactive(&self) -> bool {
        self.command.is_none() && self.script.is_none()
    }
}

/// A prepared launch: program, arguments, extra environment, and the private rc directory.
pub struct Launch {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Hooks were injected: commands will be split by markers.
    pub hooked: bool,
    /// For an unhooked run, the one command it records (`-c` string or script and arguments).
    pub command_line: String,
    /// Private directory with the generated rc files; removed when dropped, which must not be
    /// before the session ends (a replacing shell reads it).
    pub rc_dir: Option<tempfile::TempDir>,
    /// Why an interactive shell runs without hooks (its commands cannot be told apart).
    pub unhooked_reason: Option<&'static str>,
}

/// The programs the hooks send through `omnish nest` by themselves (`nest.auto`), and the
/// omnish binary to run for them.
#[derive(Debug, Clone, Default)]
pub struct NestAuto {
    pub programs: Vec<String>,
    pub omnish: String,
}

/// Prepares the launch of `argv` (program first) with hooks carrying `token`.
pub fn prepare(argv: &[String], token: &str, auto: &NestAuto) -> Result<Launch> {
    let program = argv[0].clone();
    let kind = ShellKind::of(&program);
    let parsed = ShellArgs::parse(kind, &argv[1..]);
    let mut launch = Launch {
        program,
        args: argv[1..].to_vec(),
        env: Vec::new(),
        hooked: false,
        command_line: unhooked_command_line(argv, &parsed),
        rc_dir: None,
        unhooked_reason: None,
    };
    if !parsed.interactive() {
        return Ok(launch);
    }
    if kind == ShellKind::Other {
        launch.unhooked_reason = Some("omnish has hooks for bash, zsh, fish and nu only");
        return Ok(launch);
    }
    if kind == ShellKind::Zsh && parsed.norc {
        launch.unhooked_reason =
            Some("zsh -f reads no startup files, so omnish's hooks cannot load");
        return Ok(launch);
    }
    let dir = private_dir()?;
    let dir_path = dir.path().to_string_lossy().into_owned();
    // bash: the launch, and a bash that replaces the recorded shell.
    let rc = dir.path().join("omnish.bash");
    // nest.auto, for the hooks of every bash and zsh of the session.
    let auto_vars = format!(
        "__omnish_auto={} __omnish_bin={}",
        sh_quote(&auto.programs.join(" ")),
        sh_quote(&auto.omnish)
    );
    let header = format!(
        "__omnish_token={}\n__omnish_dir={}\n__omnish_login={}\n__omnish_rcfile={}\n__omnish_norc={}\n{auto_vars}\n",
        token,
        sh_quote(&dir_path),
        u8::from(kind == ShellKind::Bash && parsed.login),
        sh_quote(parsed.rcfile.as_deref().unwrap_or("")),
        u8::from(kind == ShellKind::Bash && parsed.norc),
    );
    write_private(&rc, &[&header, BASH_HOOKS])?;
    let exec_header = format!(
        "__omnish_token={}\n__omnish_dir={}\n{auto_vars}\n",
        token,
        sh_quote(&dir_path)
    );
    write_private(
        &dir.path().join("exec.bash"),
        &[&exec_header, BASH_EXEC, BASH_HOOKS],
    )?;
    // A bash started from a command (nested): it takes a token of its own, and says so again
    // at its first prompts.
    let nest_header = format!(
        "__omnish_key={}\n__omnish_dir={}\n__omnish_nested=1\n__omnish_again_prompts={AGAIN_PROMPTS}\n{auto_vars}\n",
        token,
        sh_quote(&dir_path)
    );
    write_private(
        &dir.path().join("nest.bash"),
        &[&nest_header, BASH_NEST, BASH_EXEC, BASH_HOOKS],
    )?;
    // zsh: a ZDOTDIR whose files chain to the user's.
    let user = std::env::var("ZDOTDIR").ok();
    let zsh_vars = format!(
        "__omnish_dir={} __omnish_user_zdotdir={} __omnish_user_zdotdir_set={} {auto_vars}",
        sh_quote(&dir_path),
        sh_quote(user.as_deref().unwrap_or("")),
        u8::from(user.is_some()),
    );
    let header = format!("typeset -g __omnish_token={token} {zsh_vars}\n");
    write_private(&dir.path().join(".zshenv"), &[&header, ZSHENV])?;
    // A zsh started from a command (nested) reads nest/.zshenv, then the files above.
    let nest_dir = dir.path().join("nest");
    crate::store::create_private_dir(&nest_dir)
        .with_context(|| format!("cannot create {}", nest_dir.display()))?;
    let nest_header = format!(
        "typeset -g __omnish_key={token} {zsh_vars} __omnish_nested=1 __omnish_again_prompts={AGAIN_PROMPTS}\n"
    );
    write_private(&nest_dir.join(".zshenv"), &[&nest_header, ZSH_NEST, ZSHENV])?;
    write_private(&dir.path().join(".zprofile"), &[ZPROFILE])?;
    write_private(&dir.path().join(".zshrc"), &[ZSHRC, ZSH_HOOKS])?;
    write_private(&dir.path().join(".zlogin"), &[ZLOGIN])?;
    let fish_args = fish::write_files(
        dir.path(),
        token,
        &fish::auto_lines(&auto.programs.join(" "), &auto.omnish),
    )?;
    nu::write_files(dir.path(), token)?;
    match kind {
        ShellKind::Bash => {
            let mut args = vec![
                "--rcfile".to_string(),
                rc.to_string_lossy().into_owned(),
                "-i".to_string(),
            ];
            args.extend(parsed.passthrough.iter().cloned());
            launch.args = args;
        }
        ShellKind::Zsh => launch.env.push(("ZDOTDIR".into(), dir_path)),
        ShellKind::Fish => {
            launch.args = fish_args;
            launch.args.extend(parsed.passthrough.iter().cloned());
        }
        ShellKind::Nu => launch.args = nu::launch_args(dir.path(), &parsed),
        ShellKind::Other => unreachable!(),
    }
    launch.hooked = true;
    launch.rc_dir = Some(dir);
    Ok(launch)
}

/// The launch of `argv` as it is, without hooks (nothing is recorded).
pub fn plain(argv: &[String]) -> Launch {
    let parsed = ShellArgs::parse(ShellKind::of(&argv[0]), &argv[1..]);
    Launch {
        program: argv[0].clone(),
        args: argv[1..].to_vec(),
        env: Vec::new(),
        hooked: false,
        command_line: unhooked_command_line(argv, &parsed),
        rc_dir: None,
        unhooked_reason: None,
    }
}

fn unhooked_command_line(argv: &[String], parsed: &ShellArgs) -> String {
    if let Some(c) = &parsed.command {
        return c.clone();
    }
    argv.iter()
        .map(|a| sh_quote_if_needed(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A new 0700 directory under `$XDG_RUNTIME_DIR` (else the temp dir) for the rc files.
fn private_dir() -> Result<tempfile::TempDir> {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .prefix("omnish-")
        .permissions(fs::Permissions::from_mode(0o700))
        .tempdir_in(&base)
        .with_context(|| format!("cannot create a private directory in {}", base.display()))
}

fn write_private(path: &Path, parts: &[&str]) -> Result<()> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    for p in parts {
        f.write_all(p.as_bytes())?;
    }
    Ok(())
}

/// The file in omnish's private directory that holds the key `omnish nest` registers its
/// requests with (see [`crate::record::nest`]); the directory is `OMNISH_RUNTIME_DIR`.
pub const NEST_KEY_FILE: &str = "nest.key";

/// Writes the registration key of `omnish nest` into the private directory `dir`.
pub fn write_nest_key(dir: &Path, key: &str) -> Result<()> {
    write_private(&dir.join(NEST_KEY_FILE), &[key, "\n"])
}

/// Single-quotes `s` for bash and zsh.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn sh_quote_if_needed(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain { s.to_string() } else { sh_quote(s) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(kind: ShellKind, args: &[&str]) -> ShellArgs {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        ShellArgs::parse(kind, &args)
    }

    #[test]
    fn kinds_from_paths() {
        assert_eq!(ShellKind::of("/usr/bin/zsh"), ShellKind::Zsh);
        assert_eq!(ShellKind::of("-bash"), ShellKind::Bash);
        assert_eq!(ShellKind::of("bash5.2"), ShellKind::Bash);
        assert_eq!(ShellKind::of("/bin/sh"), ShellKind::Other);
    }

    #[test]
    fn command_strings_and_scripts_are_not_interactive() {
        let a = parse(ShellKind::Bash, &["-c", "echo hi", "arg0"]);
        assert_eq!(a.command.as_deref(), Some("echo hi"));
        assert!(!a.interactive());
        let a = parse(ShellKind::Bash, &["-lc", "ls"]);
        assert_eq!(a.command.as_deref(), Some("ls"));
        assert!(a.login);
        let a = parse(ShellKind::Zsh, &["script.zsh", "x"]);
        assert_eq!(a.script.as_deref(), Some("script.zsh"));
        assert!(parse(ShellKind::Bash, &["-i"]).interactive());
        assert!(parse(ShellKind::Bash, &["-o", "vi"]).interactive());
    }

    #[test]
    fn bash_login_and_rc_options_are_replayed_by_the_hooks() {
        let a = parse(
            ShellKind::Bash,
            &["-l", "--rcfile", "/x/rc", "-O", "extglob"],
        );
        assert!(a.login);
        assert_eq!(a.rcfile.as_deref(), Some("/x/rc"));
        assert_eq!(a.passthrough, vec!["-O", "extglob"]);
        let a = parse(ShellKind::Bash, &["--login", "--norc"]);
        assert!(a.login && a.norc);
        assert!(a.passthrough.is_empty());
    }

    #[test]
    fn zsh_keeps_its_own_flags() {
        let a = parse(ShellKind::Zsh, &["-l", "-i"]);
        assert!(a.login);
        assert_eq!(a.passthrough, vec!["-l", "-i"]);
        assert!(parse(ShellKind::Zsh, &["-f"]).norc);
    }

    #[test]
    fn bash_launch_uses_a_private_rcfile_holding_the_token() {
        use std::os::unix::fs::PermissionsExt;
        let argv = vec!["bash".to_string()];
        let l = prepare(&argv, "tok123", &NestAuto::default()).unwrap();
        assert!(l.hooked);
        assert_eq!(l.args[0], "--rcfile");
        let rc = Path::new(&l.args[1]);
        let text = fs::read_to_string(rc).unwrap();
        assert!(text.starts_with("__omnish_token=tok123\n"));
        // Both shells' files, for a shell that replaces the recorded one.
        for f in ["exec.bash", ".zshenv", ".zshrc"] {
            assert!(rc.with_file_name(f).exists(), "{f}");
        }
        assert!(l.env.iter().all(|(_, v)| !v.contains("tok123")));
        let dir = l.rc_dir.as_ref().unwrap().path();
        assert_eq!(
            fs::metadata(dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(
            fs::metadata(rc).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn unhooked_runs_name_their_command() {
        let argv: Vec<String> = ["bash", "-c", "make test"].map(String::from).to_vec();
        let l = prepare(&argv, "t", &NestAuto::default()).unwrap();
        assert!(!l.hooked);
        assert_eq!(l.command_line, "make test");
        let argv: Vec<String> = ["sh", "my script.sh"].map(String::from).to_vec();
        assert_eq!(
            prepare(&argv, "t", &NestAuto::default())
                .unwrap()
                .command_line,
            "sh 'my script.sh'"
        );
    }
}
