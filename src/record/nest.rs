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
//!    a file `nu.token` beside them).
//! 4. The directory stays while the shell lives: it also holds, as the local private directory
//!    does, the startup files of a bash, zsh or fish started inside the far shell (a typed
//!    `bash`, `zsh -l`, `fish`, `poetry shell`, or an `exec zsh` there), for those the far side
//!    has (the request says which). They hold the far key `F` instead of a token: the scanner
//!    ties `F` to the far shell `N` announced and accepts it for `Nest=` only, as often as
//!    shells start inside it, and for nothing once that shell has ended. The shell runs as the
//!    child of a small sh that removes the directory when it ends, however it ends.
//!
//! So no token of omnish's ever sits on the far side in a file another user can read, in the
//! environment, or in an argument list: `Q` is in the bootstrap's arguments while it runs and
//! spent by its request; `N` is in a 0600 file under a 0700 directory and spent by its
//! announcement; `F` is in 0600 files under that directory while the far shell lives, good for
//! announcing shells nested in it and nothing else, and dead once it ends (a directory left
//! behind by a SIGKILL of the whole far session holds only keys omnish no longer accepts). A
//! program that prints crafted markers (a `cat` of a file) has none of them. When the bootstrap
//! cannot work it starts the shell exactly as the program would have, and the command's record
//! says why ([`reason`]).

use crate::record::shell::fish::{FISH_HOOKS, FISH_NEST, FISH_VENDOR, VENDOR_FILE};
use crate::record::shell::nu::NU_HOOKS;
use crate::record::shell::{
    BASH_EXEC, BASH_HOOKS, BASH_NEST, ZLOGIN, ZPROFILE, ZSH_HOOKS, ZSH_NEST,
};
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
    split_request(shell).0 != NO_TTY
}

/// Why a bootstrap that asked about `shell` starts it without hooks, if it does.
pub fn unhooked(shell: &str) -> Option<String> {
    let shell = split_request(shell).0;
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
    shell_kind(split_request(shell).0).is_some()
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

/// What a bootstrap asked for: `<shell>-<have>` (`bash-bzf`), the shell it starts and which of
/// bash (`b`), zsh (`z`) and fish (`f`) the far side has. A request without `-` (an older
/// bootstrap, `notty`) names the shell alone; the far side is then taken to have all three.
pub fn split_request(code: &str) -> (&str, &str) {
    code.split_once('-').unwrap_or((code, "bzf"))
}

/// The keys a shell of each kind binds as the far ask and fix keys (see `record::farkey`).
pub type FarKeysOf<'a> = &'a dyn Fn(&str) -> Option<(String, String)>;

/// What the relay types to a bootstrap that asked for `shell`'s hooks (a request code: see
/// [`split_request`]): a newline (after whatever was typed before), `#omnish-hooks <N>`, and N
/// bytes of sh ending in `# omnish-end`, each line behind a `#` the bootstrap takes off (typed
/// to a shell, it is comments). With keys (the nest key and the far key) and a shell omnish has
/// hooks for, that sh starts it hooked, with the hooks of a bash, zsh or fish started inside it
/// beside its own (those the far side has); otherwise it is that line alone, and the bootstrap
/// starts the shell as it is.
///
/// `far_keys`: the ask and fix keys each kind of far shell binds, answered by the relay
/// (`record::farkey`).
pub fn reply(shell: &str, keys: Option<(&str, &str)>, far_keys: FarKeysOf<'_>) -> Vec<u8> {
    let (name, have) = split_request(shell);
    let script = match (shell_kind(name), keys) {
        (Some(kind), Some((key, far_key))) => stage2(kind, key, far_key, have, far_keys),
        _ => END.to_string(),
    };
    let commented: String = script.lines().map(|l| format!("#{l}\n")).collect();
    let commented = commented.strip_suffix('\n').unwrap_or(&commented);
    let mut out = format!("\n#omnish-hooks {}\n", commented.len()).into_bytes();
    out.extend_from_slice(commented.as_bytes());
    out
}

/// Appends to `s` a `cat` of a here-document holding `parts`, to `target` (a shell word).
fn doc(s: &mut String, target: &str, parts: &[&str]) {
    s.push_str(&format!("cat >{target} <<'{EOF_MARK}' &&\n"));
    for p in parts {
        s.push_str(p);
        if !p.is_empty() && !p.ends_with('\n') {
            s.push('\n');
        }
    }
    s.push_str(EOF_MARK);
    s.push('\n');
}

fn stage2(kind: &str, key: &str, far_key: &str, have: &str, far_keys: FarKeysOf<'_>) -> String {
    // Hooks for the far shell's kind, and for every kind of shell that may start inside it.
    let bash = kind == "bash" || have.contains('b');
    let zsh = kind == "zsh" || have.contains('z');
    let fish = kind == "fish" || have.contains('f');
    let mut s = format!("__k={key}\n__f={far_key}\n__s={kind}\n__omnish_files() {{\n");
    let again = crate::record::shell::AGAIN_PROMPTS;
    if bash {
        // The far keys: their values hold no quote (record::farkey checks).
        let far = far_keys("bash")
            .map(|(ask, fix)| {
                format!("__omnish_ask_key='{ask}'\n__omnish_fix_key='{fix}'\n{FAR_BASH}")
            })
            .unwrap_or_default();
        // Each part once (the answer travels through the terminal), put together below.
        doc(&mut s, "\"$1/b.nest\"", &[BASH_NEST]);
        doc(&mut s, "\"$1/b.hooks\"", &[BASH_HOOKS, &far]);
        if kind == "bash" {
            s.push_str(
                "{ printf '__omnish_key=%s\\n__omnish_dir=%s\\n__omnish_nested=1\\n__omnish_login=%s\\n__omnish_rcfile=\\n__omnish_norc=0\\n__omnish_sysrc=1\\n' \"$__k\" \"$1\" \"${l:-0}\" && cat \"$1/b.nest\" \"$1/b.hooks\"; } >\"$1/rc\" &&\n",
            );
        }
        // A bash started inside the far shell (a typed `bash`, or `exec bash` there) reads
        // nest.bash as $ENV, as a local nested shell does, with the far key.
        s.push_str(&format!(
            "{{ printf '__omnish_key=%s\\n__omnish_dir=%s\\n__omnish_nested=1\\n__omnish_again_prompts={again}\\n' \"$__f\" \"$1\" && cat \"$1/b.nest\" && cat <<'{EOF_MARK}' && cat \"$1/b.hooks\"; }} >\"$1/nest.bash\" &&\n{BASH_EXEC}"
        ));
        if !BASH_EXEC.ends_with('\n') {
            s.push('\n');
        }
        s.push_str(EOF_MARK);
        s.push('\n');
        s.push_str("rm -f -- \"$1/b.nest\" \"$1/b.hooks\" &&\n");
    }
    if zsh {
        let far = far_keys("zsh")
            .map(|(ask, fix)| {
                format!("__omnish_ask_key='{ask}'\n__omnish_fix_key='{fix}'\n{FAR_ZSH}")
            })
            .unwrap_or_default();
        doc(&mut s, "\"$1/z.env\"", &[ZSH_NEST, ZSHENV]);
        let header = |k: &str, extra: &str| {
            format!(
                "printf 'typeset -g __omnish_key=%s __omnish_dir=%s __omnish_user_zdotdir=%s __omnish_user_zdotdir_set=%s __omnish_nested=1{extra}\\n' \"${k}\" \"$1\" \"$__z\" \"$__zs\""
            )
        };
        if kind == "zsh" {
            s.push_str(&format!(
                "{{ {} && cat \"$1/z.env\"; }} >\"$1/.zshenv\" &&\n",
                header("__k", "")
            ));
        }
        // A zsh started inside the far shell: ZDOTDIR=$1/nest, whose .zshenv names $1 for the
        // rest, as locally.
        s.push_str(&format!(
            "mkdir -- \"$1/nest\" && {{ {} && cat \"$1/z.env\"; }} >\"$1/nest/.zshenv\" &&\nrm -f -- \"$1/z.env\" &&\n",
            header("__f", &format!(" __omnish_again_prompts={again}"))
        ));
        doc(&mut s, "\"$1/.zprofile\"", &[ZPROFILE]);
        doc(&mut s, "\"$1/.zshrc\"", &[ZSHRC, ZSH_HOOKS, &far]);
        doc(&mut s, "\"$1/.zlogin\"", &[ZLOGIN]);
    }
    if fish {
        // The far keys, set unquoted so that fish reads their notation (bind_notation's
        // output: no quote, no space).
        let far = far_keys("fish")
            .map(|(ask, fix)| {
                format!("set -g __omnish_ask_key {ask}\nset -g __omnish_fix_key {fix}\n{FAR_FISH}")
            })
            .unwrap_or_default();
        doc(&mut s, "\"$1/f.hooks\"", &[FISH_NEST, FISH_HOOKS, &far]);
        if kind == "fish" {
            s.push_str("{ printf 'set -g __omnish_key %s\\nset -g __omnish_dir %s\\nset -g __omnish_nested 1\\n' \"$__k\" \"$1\" && cat \"$1/f.hooks\"; } >\"$1/omnish.fish\" &&\n");
        }
        // A fish started inside the far shell reads vendor_conf.d under $1/fish/nest (put in
        // XDG_DATA_DIRS for that command), as locally.
        s.push_str(&format!(
            "mkdir -p -- \"$1/fish/nest/fish/vendor_conf.d\" && {{ printf 'set -g __omnish_self %s/fish/nest\\nset -g __omnish_key %s\\nset -g __omnish_nested 1\\nset -g __omnish_again_prompts {again}\\nset -g __omnish_dir %s\\n' \"$1\" \"$__f\" \"$1\" && cat <<'{EOF_MARK}' && cat \"$1/f.hooks\"; }} >\"$1/fish/nest/fish/vendor_conf.d/{VENDOR_FILE}\" &&\n{FISH_VENDOR}"
        ));
        if !FISH_VENDOR.ends_with('\n') {
            s.push('\n');
        }
        s.push_str(EOF_MARK);
        s.push('\n');
        s.push_str("rm -f -- \"$1/f.hooks\" &&\n");
    }
    if kind == "nu" {
        // The nest key in a file the hooks read once (nu keeps it out of `$env`); the hooks,
        // then the call that names this directory: nu parses a sourced file whole before it
        // runs a line of it. The directory's name holds only [A-Za-z0-9_./-] (stage2.sh
        // checks), so it goes in double quotes as it is.
        s.push_str("printf '%s\\n' \"$__k\" >\"$1/nu.token\" &&\n{\n");
        s.push_str(&format!("cat <<'{EOF_MARK}'\n{NU_HOOKS}"));
        if !NU_HOOKS.ends_with('\n') {
            s.push('\n');
        }
        s.push_str(EOF_MARK);
        s.push('\n');
        // With the far keys, a record of their keybindings (no quote in it: record::farkey).
        let far = far_keys("nu")
            .map(|(ask, fix)| format!(" {{ask: {ask}, fix: {fix}}}"))
            .unwrap_or_default();
        s.push_str(&format!(
            "printf '\\n__omnish_hooks \"%s\" nest%s\\n' \"$1\" '{far}'\n"
        ));
        s.push_str("} >\"$1/omnish.nu\" &&\n");
    }
    s.push_str("true\n}\n");
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
        let keys = |_: &str| Some(("\\C-xa".to_string(), "\\C-xf".to_string()));
        let (nk, fk) = ("b".repeat(32), "f".repeat(32));
        for shell in [
            "bash", "zsh", "bash5.2", "fish", "nu", "bash-bzf", "zsh-z", "fish-b", "nu-",
        ] {
            let r = reply(shell, Some((&nk, &fk)), &keys);
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
            // The nest key and the far key are in the answer once each, where the bootstrap
            // sets them; no other key.
            assert_eq!(body.matches(&nk).count(), 1, "{shell}");
            assert!(body.contains(&format!("__k={nk}\n")), "{shell}");
            assert_eq!(body.matches(&fk).count(), 1, "{shell}");
            assert!(body.contains(&format!("__f={fk}\n")), "{shell}");
            // Nothing removes the directory but the sh the shell runs under, once it ends.
            let rms = |t: &str| t.matches("rm -rf").count();
            assert_eq!(rms(body), rms(STAGE2), "{shell}");
            // The hooks of the shells the far side has, for the shells started inside it.
            let (name, have) = split_request(shell);
            for (c, file) in [
                ('b', "$1/nest.bash"),
                ('z', "$1/nest/.zshenv"),
                ('f', "$1/fish/nest"),
            ] {
                let own = name.starts_with(c);
                assert_eq!(
                    body.contains(file),
                    own || have.contains(c),
                    "{shell} {file}"
                );
            }
        }
        let none = |_: &str| None;
        let plain = String::from_utf8(reply("tcsh-bzf", Some(("k", "f")), &none)).unwrap();
        assert_eq!(plain, format!("\n#omnish-hooks {}\n#{END}", END.len() + 1));
        assert_eq!(
            String::from_utf8(reply("bash", None, &none)).unwrap(),
            plain
        );
    }

    #[test]
    fn shells_are_known_by_name() {
        assert!(supported("bash") && supported("zsh") && supported("zsh5.9"));
        assert!(supported("fish") && supported("fish4.0") && supported("nu"));
        assert!(supported("bash-bzf") && supported("nu-") && !supported("tcsh-b"));
        assert!(answered("bash-b") && !answered(NO_TTY));
        assert!(unhooked("tcsh-bz").unwrap().contains("is tcsh,"));
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
