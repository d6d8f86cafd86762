//! Hooks for shells that cannot read omnish's private files: a root shell from `sudo -i`, a
//! login over `ssh`, a shell in a container. `omnish nest -- PROGRAM ...` (see
//! `src/cmd/nest.rs`) runs such a program with a bootstrap in its command, and the hooks reach
//! the new shell through the terminal itself, as kitty's ssh kitten carries its integration:
//!
//! 1. `omnish nest`, a process of the recording user, reads the registration key from omnish's
//!    private directory and prints `633;R;P;NestKey=Q` with a fresh request key `Q`: the
//!    scanner ([`crate::record::marker`]) then accepts one request carrying `Q`.
//! 2. The program's command becomes the bootstrap ([`boot_argv`], [`boot_command`]:
//!    `shell/nest/boot.sh`), with `Q` among its arguments. On the far side it makes the
//!    terminal raw and silent and prints `633;Q;Q;<shell>`.
//! 3. The relay answers ([`reply`]) by typing `#omnish-hooks <N>` and N bytes of sh (each line
//!    behind a `#`, so that an answer that reaches a shell, its bootstrap gone, runs nothing)
//!    (`shell/nest/stage2.sh` and the shell's startup files) that write the hooks into a private
//!    temporary directory and start the shell. The hooks hold a fresh nest key `N`, which the
//!    scanner accepts for one `Nest=` marker: the started shell makes a token of its own and
//!    announces it with `N`, as a local nested shell does with the session's token
//!    (`shell/nest.bash`, `shell/zsh/nest.zsh`, `shell/fish/nest.fish`; nu's hooks read it from
//!    a file `nu.token` beside them), then removes the directory.
//!
//! So no token of omnish's ever sits on the far side in a file another user can read, in the
//! environment, or in an argument list: `Q` is in the bootstrap's arguments while it runs and
//! spent by its request; `N` is in a 0600 file under a 0700 directory until the shell has
//! read it, and spent by its announcement. A program that prints crafted markers (a `cat` of a
//! file) has neither key. When the bootstrap cannot work it starts the shell exactly as the
//! program would have, and the command's record says why ([`reason`]).

use crate::record::shell::fish::{FISH_HOOKS, FISH_NEST};
use crate::record::shell::nu::NU_HOOKS;
use crate::record::shell::{BASH_HOOKS, BASH_NEST, ZLOGIN, ZPROFILE, ZSH_HOOKS, ZSH_NEST};
use crate::record::shell::{ZSHENV, ZSHRC};

const BOOT: &str = include_str!("../../shell/nest/boot.sh");
const STAGE2: &str = include_str!("../../shell/nest/stage2.sh");
const FAR_BASH: &str = include_str!("../../shell/nest/far.bash");
const FAR_ZSH: &str = include_str!("../../shell/nest/far.zsh");
const FAR_FISH: &str = include_str!("../../shell/nest/far.fish");
/// Ends every here-document of the startup files; no line of theirs is this.
const EOF_MARK: &str = "OMNISH_NEST_EOF";
/// The last line of an answer: a bootstrap evaluates only an answer that ends with it.
const END: &str = "# omnish-end";

/// The bootstrap as one line: `shell/nest/boot.sh` without its comments, joined by spaces.
pub fn boot_line() -> String {
    BOOT.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The bootstrap as arguments (for sudo, su, docker exec: programs that take a command as
/// arguments): `sh -c <boot> omnish KEY LOGIN PROGRAM ARGS...`. An empty `program` starts the
/// far side's `$SHELL`.
pub fn boot_argv(key: &str, login: bool, program: &str, args: &[String]) -> Vec<String> {
    let mut argv = vec![
        "sh".to_string(),
        "-c".to_string(),
        boot_line(),
        "omnish".to_string(),
        key.to_string(),
        if login { "1" } else { "0" }.to_string(),
        program.to_string(),
    ];
    argv.extend(args.iter().cloned());
    argv
}

/// The bootstrap as one command line for whatever shell the far side runs it with (ssh's
/// remote command, su's `-c`): every argument in single quotes, which sh, bash, zsh, fish and
/// csh read alike when they hold no single quote, no `!` and no newline.
pub fn boot_command(key: &str, login: bool, program: &str, args: &[String]) -> Option<String> {
    let argv = boot_argv(key, login, program, args);
    let plain = |a: &str| !a.contains(['\'', '!', '\n', '\r']);
    if !argv.iter().all(|a| plain(a)) {
        return None;
    }
    let quoted: Vec<String> = argv
        .iter()
        .map(|a| {
            if !a.is_empty() && a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
                a.clone()
            } else {
                format!("'{a}'")
            }
        })
        .collect();
    Some(format!("exec {}", quoted.join(" ")))
}

/// What a bootstrap asks about when the shell would have no controlling terminal: it waits
/// for no answer, and gets none.
pub const NO_TTY: &str = "notty";

/// Whether the relay answers a request about `shell` (every one but [`NO_TTY`]).
pub fn answered(shell: &str) -> bool {
    shell != NO_TTY
}

/// Why a bootstrap that asked about `shell` starts it without hooks, if it does.
pub fn unhooked(shell: &str) -> Option<String> {
    if shell == NO_TTY {
        Some(reason(NO_TTY))
    } else if supported(shell) {
        None
    } else {
        Some(unsupported_shell(shell))
    }
}

/// Whether omnish has hooks for the shell a bootstrap asked about (its program's name).
pub fn supported(shell: &str) -> bool {
    shell_kind(shell).is_some()
}

fn shell_kind(shell: &str) -> Option<&'static str> {
    let tail = |prefix: &str| {
        shell
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    };
    if tail("bash") {
        Some("bash")
    } else if tail("zsh") {
        Some("zsh")
    } else if tail("fish") {
        Some("fish")
    } else if shell == "nu" {
        Some("nu")
    } else {
        None
    }
}

/// Why the shell a bootstrap asked about runs without hooks.
pub fn unsupported_shell(shell: &str) -> String {
    if shell == "other" {
        "the shell there is not one omnish has hooks for (bash, zsh, fish, nu)".to_string()
    } else {
        format!("the shell there is {shell}, which omnish has no hooks for (bash, zsh, fish, nu)")
    }
}

/// The reason for a `NestFail=` code (sent by `omnish nest` or by a bootstrap).
pub fn reason(code: &str) -> String {
    match code {
        "never" => "the program never asked for omnish's hooks (a ForceCommand, a restricted shell, or a connection closed first)".to_string(),
        "tmp" => "no private temporary directory on the far side (mktemp -d failed)".to_string(),
        "command" => "a command was given: it runs as it is".to_string(),
        "options" => "its options start no interactive shell".to_string(),
        "program" => "omnish nest does not know how to start a shell through this program".to_string(),
        "notty" => "the shell there would have no terminal of its own (su without --pty)".to_string(),
        other => format!("omnish could not hook the shell ({other})"),
    }
}

/// What the relay types to a bootstrap that asked for `shell`'s hooks: a newline (after
/// whatever was typed before), `#omnish-hooks <N>`, and N bytes of sh ending in `# omnish-end`,
/// each line behind a `#` the bootstrap takes off (typed to a shell, it is comments). With
/// a nest key and a shell omnish has hooks for, that sh starts it hooked; otherwise it is
/// that line alone, and the bootstrap starts the shell as it is.
///
/// `keys`: the ask and fix keys the far shell binds (bash, zsh, fish, nu), answered by the relay
/// (`record::farkey`).
pub fn reply(shell: &str, nest_key: Option<&str>, keys: Option<(&str, &str)>) -> Vec<u8> {
    let script = match (shell_kind(shell), nest_key) {
        (Some(kind), Some(key)) => stage2(kind, key, keys),
        _ => END.to_string(),
    };
    let commented: String = script.lines().map(|l| format!("#{l}\n")).collect();
    let commented = commented.strip_suffix('\n').unwrap_or(&commented);
    let mut out = format!("\n#omnish-hooks {}\n", commented.len()).into_bytes();
    out.extend_from_slice(commented.as_bytes());
    out
}

fn stage2(kind: &str, key: &str, keys: Option<(&str, &str)>) -> String {
    let mut s = format!("__k={key}\n__s={kind}\n__omnish_files() {{\n");
    // `cat` of a here-document, to standard output or to a file of the directory ($1).
    let doc = |s: &mut String, target: Option<&str>, parts: &[&str]| {
        match target {
            Some(t) => s.push_str(&format!("cat >\"$1/{t}\" <<'{EOF_MARK}' &&\n")),
            None => s.push_str(&format!("cat <<'{EOF_MARK}'\n")),
        }
        for p in parts {
            s.push_str(p);
            if !p.ends_with('\n') {
                s.push('\n');
            }
        }
        s.push_str(EOF_MARK);
        s.push('\n');
    };
    if kind == "bash" {
        // The header, then the removal of the directory: bash reads an rc file whole before it
        // runs a line of it.
        s.push_str(
            "{\nprintf '__omnish_key=%s\\n__omnish_dir=%s\\n__omnish_nested=1\\n__omnish_login=%s\\n__omnish_rcfile=\\n__omnish_norc=0\\n__omnish_sysrc=1\\n' \"$__k\" \"$1\" \"${l:-0}\"\n",
        );
        // The far keys: their values hold no quote (record::farkey checks).
        let far = keys
            .map(|(ask, fix)| {
                format!("__omnish_ask_key='{ask}'\n__omnish_fix_key='{fix}'\n{FAR_BASH}")
            })
            .unwrap_or_default();
        doc(
            &mut s,
            None,
            &[
                "command rm -rf -- \"$__omnish_dir\"\n",
                BASH_NEST,
                BASH_HOOKS,
                &far,
            ],
        );
        s.push_str("} >\"$1/rc\"\n");
    } else if kind == "fish" {
        // The header, then the removal of the directory: fish reads a sourced file whole before
        // it runs a line of it.
        s.push_str("{\nprintf 'set -g __omnish_key %s\\nset -g __omnish_dir %s\\nset -g __omnish_nested 1\\n' \"$__k\" \"$1\"\n");
        // The far keys, set unquoted so that fish reads their notation (bind_notation's
        // output: no quote, no space).
        let far = keys
            .map(|(ask, fix)| {
                format!("set -g __omnish_ask_key {ask}\nset -g __omnish_fix_key {fix}\n{FAR_FISH}")
            })
            .unwrap_or_default();
        doc(
            &mut s,
            None,
            &[
                "command rm -rf -- $__omnish_dir\n",
                FISH_NEST,
                FISH_HOOKS,
                &far,
            ],
        );
        s.push_str("} >\"$1/omnish.fish\"\n");
    } else if kind == "nu" {
        // The nest key in a file the hooks read once (nu keeps it out of `$env`); the hooks,
        // the call that names this directory, then its removal: nu parses a sourced file whole
        // before it runs a line of it. The directory's name holds only [A-Za-z0-9_./-]
        // (stage2.sh checks), so it goes in double quotes as it is.
        s.push_str("printf '%s\\n' \"$__k\" >\"$1/nu.token\" &&\n{\n");
        doc(&mut s, None, &[NU_HOOKS]);
        // With the far keys, a record of their keybindings (no quote in it: record::farkey).
        let far = keys
            .map(|(ask, fix)| format!(" {{ask: {ask}, fix: {fix}}}"))
            .unwrap_or_default();
        s.push_str(&format!(
            "printf '\\n__omnish_hooks \"%s\" nest%s\\n^rm -rf -- \"%s\"\\n' \"$1\" '{far}' \"$1\"\n"
        ));
        s.push_str("} >\"$1/omnish.nu\"\n");
    } else {
        s.push_str("__zs=0\n[ -n \"${ZDOTDIR+x}\" ] && __zs=1\n{\n");
        s.push_str(
            "printf 'typeset -g __omnish_key=%s __omnish_dir=%s __omnish_user_zdotdir=%s __omnish_user_zdotdir_set=%s __omnish_nested=1\\n' \"$__k\" \"$1\" \"$__z\" \"$__zs\"\n",
        );
        // Each of omnish's files removes the directory when no file of its is read after it.
        doc(
            &mut s,
            None,
            &[
                ZSH_NEST,
                ZSHENV,
                "[[ -o interactive && -o rcs ]] || command rm -rf -- $__omnish_dir\n",
            ],
        );
        s.push_str("} >\"$1/.zshenv\" &&\n");
        doc(&mut s, Some(".zprofile"), &[ZPROFILE]);
        let far = keys
            .map(|(ask, fix)| {
                format!("__omnish_ask_key='{ask}'\n__omnish_fix_key='{fix}'\n{FAR_ZSH}")
            })
            .unwrap_or_default();
        doc(
            &mut s,
            Some(".zshrc"),
            &[
                ZSHRC,
                ZSH_HOOKS,
                &far,
                "[[ -o login ]] || command rm -rf -- $__omnish_dir\n",
            ],
        );
        doc(
            &mut s,
            Some(".zlogin"),
            &[ZLOGIN, "command rm -rf -- $__omnish_dir\n"],
        );
        s.push_str("true\n");
    }
    s.push_str("}\n");
    s.push_str(STAGE2);
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(END);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bootstrap_is_one_line_without_quotes_or_bangs() {
        let line = boot_line();
        assert!(!line.contains(['\'', '!', '\n', '\r']), "{line}");
        assert!(line.starts_with("k=$1;"), "{line}");
        let cmd = boot_command(&"a".repeat(32), true, "", &[]).unwrap();
        assert!(cmd.starts_with("exec sh -c '"), "{cmd}");
        assert!(
            cmd.ends_with(&format!("omnish {} 1 ''", "a".repeat(32))),
            "{cmd}"
        );
        // An argument that cannot travel so is refused.
        assert!(boot_command("k", false, "bash", &["it's".into()]).is_none());
    }

    #[test]
    fn a_reply_is_framed_and_holds_no_ssh_escape_and_no_end_of_document_inside() {
        for shell in ["bash", "zsh", "bash5.2", "fish", "nu"] {
            let r = reply(shell, Some(&"b".repeat(32)), Some(("\\C-xa", "\\C-xf")));
            let text = String::from_utf8(r).unwrap();
            let (head, body) = text[1..].split_once('\n').unwrap();
            assert_eq!(head, format!("#omnish-hooks {}", body.len()));
            // Every line is a comment to a shell that reads it by mistake.
            assert!(body.lines().all(|l| l.starts_with('#')), "{shell}");
            let body: String = body.lines().map(|l| format!("{}\n", &l[1..])).collect();
            let body = body.trim_end_matches('\n');
            assert!(body.ends_with(END));
            // ssh takes `~` after a newline as its escape character.
            assert!(!body.contains("\n~") && !body.contains('\r'), "{shell}");
            // Here-documents end only where they should.
            let ends = body.lines().filter(|l| *l == EOF_MARK).count();
            let starts = body.matches(&format!("<<'{EOF_MARK}'")).count();
            assert_eq!(ends, starts);
            // The nest key is in the answer once, where the bootstrap sets it; no other key.
            assert_eq!(body.matches(&"b".repeat(32)).count(), 1, "{shell}");
            assert!(
                body.contains(&format!("__k={}\n", "b".repeat(32))),
                "{shell}"
            );
        }
        let plain = String::from_utf8(reply("tcsh", Some("k"), None)).unwrap();
        assert_eq!(plain, format!("\n#omnish-hooks {}\n#{END}", END.len() + 1));
        assert_eq!(String::from_utf8(reply("bash", None, None)).unwrap(), plain);
    }

    #[test]
    fn shells_are_known_by_name() {
        assert!(supported("bash") && supported("zsh") && supported("zsh5.9"));
        assert!(supported("fish") && supported("fish4.0") && supported("nu"));
        assert!(
            !supported("bashful")
                && !supported("fishy")
                && !supported("nu2")
                && !supported("other")
        );
        assert!(unsupported_shell("fish").contains("fish"));
        assert!(reason("never").contains("never asked"));
        assert!(reason("x-y").contains("x-y"));
    }
}
