//! `omnish nest -- PROGRAM [ARGS...]` and `omnish ssh ARGS...`: run a program that starts an
//! interactive shell (`sudo -i`, `su - alice`, `ssh host`, `docker exec -it C bash`, `kubectl
//! exec -it P -- bash`) so that the shell gets omnish's hooks through the terminal (see
//! [`crate::record::nest`]) and its commands become records of their own.
//!
//! The program's arguments are rewritten only where the bootstrap goes (`plan`): ssh gets
//! `-t` and a remote command, sudo and su a command, docker and kubectl their command wrapped.
//! Everything else (options, destinations, jump hosts, the user's ssh config) is passed as it
//! is. Where the program would not start an interactive shell, or omnish does not know it, or
//! this is not a recorded terminal, it runs exactly as given, and the command's record says why.

use crate::cli::{NestArgs, SshArgs};
use crate::cmd::Run;
use crate::record::nest;
use crate::record::shell::NEST_KEY_FILE;
use anyhow::Result;
use std::io::Write;
use std::path::Path;

/// How to run the program: with the bootstrap, or as it is (and why, a code of
/// [`nest::reason`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    Boot(Vec<String>),
    AsIs(&'static str),
}

impl Run for NestArgs {
    fn run(self) -> Result<i32> {
        nest(self.program, self.auto)
    }
}

impl Run for SshArgs {
    fn run(self) -> Result<i32> {
        let mut argv = vec!["ssh".to_string()];
        argv.extend(self.args);
        nest(argv, false)
    }
}

/// `omnish nest -- argv`: exits with the program's status (it replaces this process).
fn nest(argv: Vec<String>, auto: bool) -> Result<i32> {
    if argv.is_empty() {
        return Err(crate::error::Error::usage(
            "give the program to run, as in: omnish nest -- ssh host",
        )
        .into());
    }
    let Some(key) = registration_key() else {
        if auto {
            // The hooks of a shell that outlived its recorder's directory: say nothing.
            return exec(&argv);
        }
        eprintln!(
            "omnish nest: not in a shell recorded by omnish wrap; running {} as it is",
            argv[0]
        );
        return exec(&argv);
    };
    let Ok(mut tty) = std::fs::OpenOptions::new().write(true).open("/dev/tty") else {
        return exec(&argv);
    };
    // A terminal inside the recorded one (a tmux pane) is not the recorder's: what is said
    // there never reaches it, and a bootstrap would wait for an answer in vain.
    if !crate::cmd::wrap::on_recorded_terminal() {
        if !auto {
            eprintln!(
                "omnish nest: this terminal is not the one omnish records (a tmux pane?); running {} as it is",
                argv[0]
            );
        }
        return exec(&argv);
    }
    let request = crate::store::secret_hex(16)?;
    // The default $SHELL of `sudo -s`: the one this runs under.
    let shell = std::env::var("SHELL").unwrap_or_default();
    let mut plan = plan(&argv, &request, &shell);
    if let Plan::Boot(boot) = &mut plan {
        if name(&boot[0]) == "su" {
            // su runs a `-c` command without the terminal as its controlling one (setsid): the
            // hooks, which write to /dev/tty, need it. util-linux's su gives the session a
            // terminal of its own with --pty; a su without it runs as it is.
            if su_has_pty(&boot[0]) {
                boot.insert(1, "--pty".to_string());
            } else {
                plan = Plan::AsIs("notty");
            }
        }
    }
    // Said on the terminal, where the recording omnish reads it (and takes it out). Run by
    // nest.auto, a program that starts no shell (`sudo make install`) is an ordinary command:
    // only `ssh host cmd`, which might have been meant as a login, says why it is one record.
    let said = match &plan {
        Plan::Boot(_) => format!("\x1b]633;{key};P;NestKey={request}\x07"),
        Plan::AsIs(code) if auto && !(*code == "command" && name(&argv[0]) == "ssh") => {
            String::new()
        }
        Plan::AsIs(code) => format!("\x1b]633;{key};P;NestFail={code}\x07"),
    };
    let _ = tty.write_all(said.as_bytes()).and_then(|_| tty.flush());
    drop(tty);
    match plan {
        Plan::Boot(argv) => exec(&argv),
        Plan::AsIs(_) => exec(&argv),
    }
}

/// The recorder's registration key, from its private directory (`OMNISH_RUNTIME_DIR`): what
/// `omnish nest`, `pause` and `resume` say on the terminal carries it. `None` outside a
/// recorded shell.
pub(crate) fn registration_key() -> Option<String> {
    std::env::var_os("OMNISH_RUNTIME_DIR")
        .and_then(|dir| std::fs::read_to_string(Path::new(&dir).join(NEST_KEY_FILE)).ok())
        .map(|k| k.trim().to_string())
        .filter(|k| k.len() == 32 && k.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Replaces this process with `argv` (as a shell would, 127 when it cannot be run).
fn exec(argv: &[String]) -> Result<i32> {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    // The program's shell finds no recorded session to nest into by the environment.
    cmd.env_remove("OMNISH_RUNTIME_DIR");
    let err = cmd.exec();
    eprintln!("omnish nest: cannot run {}: {err}", argv[0]);
    Ok(if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    })
}

/// Whether this su can give the session a terminal of its own (util-linux 2.34 and later).
fn su_has_pty(su: &str) -> bool {
    std::process::Command::new(su)
        .arg("--help")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("--pty"))
}

fn name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// A shell omnish can start: bash or zsh (or sh and others, which the bootstrap runs plain
/// and says so), with only -i, -l, --login after it: whether it is a login shell (the
/// bootstrap starts it with `-l`, and passes no other argument).
fn shell_command(cmd: &[String]) -> Option<bool> {
    let first = name(cmd.first()?);
    let shells = ["bash", "zsh", "sh", "dash", "ash", "fish", "ksh", "mksh"];
    if !shells.iter().any(|s| {
        first == *s
            || (first.starts_with(s)
                && first[s.len()..]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b'.'))
    }) {
        return None;
    }
    let mut login = false;
    for a in &cmd[1..] {
        match a.as_str() {
            "-l" | "--login" => login = true,
            "-i" | "--interactive" => {}
            "-il" | "-li" => login = true,
            _ => return None,
        }
    }
    Some(login)
}

/// How to run `argv` with the bootstrap carrying `key`; `shell` is this user's `$SHELL`.
pub(crate) fn plan(argv: &[String], key: &str, shell: &str) -> Plan {
    match name(&argv[0]) {
        "ssh" => ssh(argv, key),
        "sudo" => sudo(argv, key, shell),
        "su" => su(argv, key),
        "docker" | "podman" => container(argv, key),
        "kubectl" | "oc" => kubectl(argv, key),
        // A shell itself.
        _ => match wrap_shell(argv, 0, key) {
            Plan::AsIs(_) => Plan::AsIs("program"),
            boot => boot,
        },
    }
}

/// ssh: `-t` first, then the user's arguments, then the bootstrap as the remote command.
fn ssh(argv: &[String], key: &str) -> Plan {
    const WITH_VALUE: &str = "BbcDEeFIiJLlmOoPpQRSWw";
    // Options that start no interactive shell, or no terminal.
    const NO_SHELL: &str = "NWOGVQsfT";
    // As OpenSSH reads them: options, the destination, and options again after it (`ssh host
    // -p 2222`) until `--` or the first word of a command.
    let mut destination = None;
    let mut command = false;
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        if a == "--" {
            if destination.is_none() {
                destination = (i + 1 < argv.len()).then_some(i + 1);
                command = i + 2 < argv.len();
            } else {
                command = i + 1 < argv.len();
            }
            break;
        }
        if let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) {
            for (n, c) in flags.char_indices() {
                if NO_SHELL.contains(c) {
                    return Plan::AsIs("options");
                }
                if WITH_VALUE.contains(c) {
                    if n + 1 == flags.len() {
                        i += 1;
                    }
                    break;
                }
            }
            i += 1;
            continue;
        }
        if destination.is_some() {
            command = true;
            break;
        }
        destination = Some(i);
        i += 1;
    }
    if destination.is_none() {
        return Plan::AsIs("options");
    }
    if command {
        return Plan::AsIs("command");
    }
    let Some(remote) = nest::boot_command(key, true, "", &[]) else {
        return Plan::AsIs("program");
    };
    let mut out = vec![argv[0].clone(), "-t".to_string()];
    out.extend(argv[1..].iter().cloned());
    out.push(remote);
    Plan::Boot(out)
}

/// sudo: `-i` and `-s` are done by the bootstrap (sudo hands a command given with them to the
/// target's shell with `$` unquoted, which would expand the bootstrap's own variables): `-i`
/// becomes `-H` and a login shell in the target's home, `-s` the shell `$SHELL` names.
fn sudo(argv: &[String], key: &str, shell: &str) -> Plan {
    const WITH_VALUE: &str = "CDghpRrTtUu";
    const LONG_WITH_VALUE: &[&str] = &[
        "--close-from",
        "--chdir",
        "--group",
        "--host",
        "--prompt",
        "--chroot",
        "--role",
        "--command-timeout",
        "--type",
        "--other-user",
        "--user",
    ];
    let mut out = vec![argv[0].clone()];
    let (mut login, mut shell_mode) = (false, false);
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long {
                "login" => login = true,
                "shell" => shell_mode = true,
                "edit" | "list" | "validate" | "reset-timestamp" | "remove-timestamp"
                | "version" | "help" | "background" => return Plan::AsIs("options"),
                _ => {
                    out.push(a.clone());
                    if LONG_WITH_VALUE.contains(&a.as_str()) {
                        i += 1;
                        if let Some(v) = argv.get(i) {
                            out.push(v.clone());
                        }
                    }
                }
            }
            i += 1;
            continue;
        }
        if let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) {
            let mut kept = String::new();
            let mut value = None;
            for (n, c) in flags.char_indices() {
                match c {
                    'i' => login = true,
                    's' => shell_mode = true,
                    'e' | 'l' | 'v' | 'k' | 'K' | 'V' | 'b' => return Plan::AsIs("options"),
                    // `-h` alone is help; with a value it names a host.
                    'h' if n + 1 == flags.len() && flags.len() == 1 => {
                        return Plan::AsIs("options");
                    }
                    c if WITH_VALUE.contains(c) => {
                        kept.push_str(&flags[n..]);
                        if n + 1 == flags.len() {
                            value = Some(i + 1);
                        }
                        break;
                    }
                    c => kept.push(c),
                }
            }
            if !kept.is_empty() {
                out.push(format!("-{kept}"));
            }
            if let Some(v) = value {
                if let Some(v) = argv.get(v) {
                    out.push(v.clone());
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    let command = &argv[i.min(argv.len())..];
    let (login, program) = if command.is_empty() {
        if login {
            (true, String::new())
        } else if shell_mode {
            (false, shell.to_string())
        } else {
            return Plan::AsIs("options");
        }
    } else {
        match shell_command(command) {
            Some(l) if !login && !shell_mode => (l, command[0].clone()),
            _ => return Plan::AsIs("command"),
        }
    };
    if login {
        out.push("-H".to_string());
    }
    out.push("--".to_string());
    out.extend(nest::boot_argv(key, login, &program, &[]));
    Plan::Boot(out)
}

/// su: the bootstrap as its `-c` command, run by the target's shell.
fn su(argv: &[String], key: &str) -> Plan {
    const WITH_VALUE: &[&str] = &[
        "-s",
        "--shell",
        "-g",
        "--group",
        "-G",
        "--supp-group",
        "-w",
        "--whitelist-environment",
    ];
    let mut login = false;
    let mut user = None;
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        match a {
            "-" | "-l" | "--login" => login = true,
            "-c" | "--command" | "--session-command" => return Plan::AsIs("command"),
            "-m" | "-p" | "--preserve-environment" | "-P" | "--pty" | "-f" | "--fast" => {}
            "-h" | "--help" | "-V" | "--version" => return Plan::AsIs("options"),
            _ if WITH_VALUE.contains(&a) => i += 1,
            _ if a.starts_with("--") && a.contains('=') => {
                if a.starts_with("--command=") || a.starts_with("--session-command=") {
                    return Plan::AsIs("command");
                }
            }
            _ if a.starts_with('-') => return Plan::AsIs("options"),
            _ if user.is_none() => user = Some(i),
            // Arguments for the target's shell.
            _ => return Plan::AsIs("command"),
        }
        i += 1;
    }
    let Some(command) = nest::boot_command(key, login, "", &[]) else {
        return Plan::AsIs("program");
    };
    let mut out = argv.to_vec();
    out.push("-c".to_string());
    out.push(command);
    Plan::Boot(out)
}

/// `docker run`'s (and podman's) options that take a value in the next argument (or after
/// `=`); its short ones are `a c e h l m p u v w`. An option not known here is not guessed at:
/// the command runs as it is.
const RUN_WITH_VALUE: &[&str] = &[
    "--add-host",
    "--annotation",
    "--attach",
    "--blkio-weight",
    "--blkio-weight-device",
    "--cap-add",
    "--cap-drop",
    "--cgroup-parent",
    "--cgroupns",
    "--cidfile",
    "--cpu-period",
    "--cpu-quota",
    "--cpu-rt-period",
    "--cpu-rt-runtime",
    "--cpu-shares",
    "--cpus",
    "--cpuset-cpus",
    "--cpuset-mems",
    "--detach-keys",
    "--device",
    "--device-cgroup-rule",
    "--device-read-bps",
    "--device-read-iops",
    "--device-write-bps",
    "--device-write-iops",
    "--dns",
    "--dns-option",
    "--dns-search",
    "--domainname",
    "--entrypoint",
    "--env",
    "--env-file",
    "--expose",
    "--gpus",
    "--group-add",
    "--health-cmd",
    "--health-interval",
    "--health-retries",
    "--health-start-interval",
    "--health-start-period",
    "--health-timeout",
    "--hostname",
    "--ip",
    "--ip6",
    "--ipc",
    "--isolation",
    "--kernel-memory",
    "--label",
    "--label-file",
    "--link",
    "--link-local-ip",
    "--log-driver",
    "--log-opt",
    "--mac-address",
    "--memory",
    "--memory-reservation",
    "--memory-swap",
    "--memory-swappiness",
    "--mount",
    "--name",
    "--network",
    "--network-alias",
    "--oom-score-adj",
    "--pid",
    "--pids-limit",
    "--platform",
    "--publish",
    "--pull",
    "--restart",
    "--runtime",
    "--security-opt",
    "--shm-size",
    "--stop-signal",
    "--stop-timeout",
    "--storage-opt",
    "--sysctl",
    "--tmpfs",
    "--ulimit",
    "--user",
    "--userns",
    "--uts",
    "--volume",
    "--volume-driver",
    "--volumes-from",
    "--workdir",
];
/// `docker run`'s options without a value.
const RUN_FLAGS: &[&str] = &[
    "--rm",
    "--init",
    "--privileged",
    "--read-only",
    "--no-healthcheck",
    "--oom-kill-disable",
    "--quiet",
    "--publish-all",
    "--sig-proxy",
    "--interactive",
    "--tty",
    "--use-api-socket",
];

/// docker/podman exec -it, and run -it with a shell as its command: the container's command
/// wrapped in the bootstrap.
fn container(argv: &[String], key: &str) -> Plan {
    if argv.get(1).map(String::as_str) == Some("run") {
        return container_run(argv, key);
    }
    if argv.get(1).map(String::as_str) != Some("exec") {
        return Plan::AsIs("program");
    }
    const WITH_VALUE: &[&str] = &[
        "-e",
        "--env",
        "--env-file",
        "-u",
        "--user",
        "-w",
        "--workdir",
        "--detach-keys",
    ];
    let (mut stdin, mut tty) = (false, false);
    let mut i = 2;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') {
            break;
        }
        match a {
            "--interactive" => stdin = true,
            "--tty" => tty = true,
            "-d" | "--detach" => return Plan::AsIs("options"),
            _ if WITH_VALUE.contains(&a) => i += 1,
            _ if a.starts_with("--") => {}
            _ => {
                for c in a[1..].chars() {
                    match c {
                        'i' => stdin = true,
                        't' => tty = true,
                        'd' => return Plan::AsIs("options"),
                        // A value follows in the next argument (or the rest of this one).
                        'e' | 'u' | 'w' => {
                            if a.ends_with(c) {
                                i += 1;
                            }
                            break;
                        }
                        _ => {}
                    }
                }
            }
        }
        i += 1;
    }
    if !(stdin && tty) {
        return Plan::AsIs("options");
    }
    // The container, then its command.
    wrap_shell(argv, i + 1, key)
}

/// `docker run -it [OPTIONS] IMAGE SHELL` (podman too): the shell wrapped in the bootstrap. Without a
/// command the image's own runs (which omnish cannot know): as it is.
fn container_run(argv: &[String], key: &str) -> Plan {
    let (mut stdin, mut tty) = (false, false);
    let mut i = 2;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let name = format!("--{}", long.split('=').next().unwrap_or(long));
            match name.as_str() {
                "--interactive" => stdin = true,
                "--tty" => tty = true,
                "--detach" => return Plan::AsIs("options"),
                n if RUN_WITH_VALUE.contains(&n) => {
                    if !long.contains('=') {
                        i += 1;
                    }
                }
                n if RUN_FLAGS.contains(&n) => {}
                _ => return Plan::AsIs("options"),
            }
        } else {
            for (n, c) in a[1..].char_indices() {
                match c {
                    'i' => stdin = true,
                    't' => tty = true,
                    'd' => return Plan::AsIs("options"),
                    'P' | 'q' => {}
                    'a' | 'c' | 'e' | 'h' | 'l' | 'm' | 'p' | 'u' | 'v' | 'w' => {
                        if n + 2 == a.len() {
                            i += 1;
                        }
                        break;
                    }
                    _ => return Plan::AsIs("options"),
                }
            }
        }
        i += 1;
    }
    if !(stdin && tty) {
        return Plan::AsIs("options");
    }
    // The image, then its command.
    wrap_shell(argv, i + 1, key)
}

/// kubectl exec -it POD -- COMMAND: the command wrapped in the bootstrap.
fn kubectl(argv: &[String], key: &str) -> Plan {
    if argv.get(1).map(String::as_str) != Some("exec") {
        return Plan::AsIs("program");
    }
    let Some(dash) = argv.iter().position(|a| a == "--") else {
        return Plan::AsIs("command");
    };
    let opts = &argv[2..dash];
    let flag = |short: char, long: &str| {
        opts.iter().any(|a| {
            a == long
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..].contains(short)
                    && a.len() <= 4)
        })
    };
    if !(flag('i', "--stdin") && flag('t', "--tty")) {
        return Plan::AsIs("options");
    }
    wrap_shell(argv, dash + 1, key)
}

/// `argv` with its command (from `at` on) wrapped in the bootstrap, when that command is a
/// shell omnish can start (see `shell_command`); else as it is.
fn wrap_shell(argv: &[String], at: usize, key: &str) -> Plan {
    let command = argv.get(at..).unwrap_or_default();
    let Some(login) = shell_command(command) else {
        return Plan::AsIs("command");
    };
    let mut out = argv[..at].to_vec();
    out.extend(nest::boot_argv(key, login, &command[0], &[]));
    Plan::Boot(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: &str = "0123456789abcdef0123456789abcdef";

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn boot(p: Plan) -> Vec<String> {
        match p {
            Plan::Boot(argv) => argv,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ssh_gets_a_terminal_and_the_bootstrap_and_keeps_every_option() {
        let argv = boot(plan(
            &v("ssh -p 2222 -J jump -A -o ServerAliveInterval=5 alice@host"),
            K,
            "",
        ));
        assert_eq!(
            argv[..10],
            v("ssh -t -p 2222 -J jump -A -o ServerAliveInterval=5 alice@host")[..]
        );
        assert!(
            argv[10].starts_with("exec sh -c '") && argv[10].contains(K),
            "{argv:?}"
        );
        assert_eq!(argv.len(), 11);
        // An option's value is no destination; joined values too.
        assert!(matches!(
            plan(&v("ssh -p2222 -i key host"), K, ""),
            Plan::Boot(_)
        ));
        assert!(matches!(plan(&v("ssh -- host"), K, ""), Plan::Boot(_)));
        // OpenSSH reads options after the destination too.
        let argv = boot(plan(&v("ssh host -p 2222 -A"), K, ""));
        assert_eq!(argv[..6], v("ssh -t host -p 2222 -A")[..]);
        assert_eq!(
            plan(&v("ssh host -p 2222 uptime"), K, ""),
            Plan::AsIs("command")
        );
        assert_eq!(plan(&v("ssh -- host uptime"), K, ""), Plan::AsIs("command"));
        assert_eq!(plan(&v("ssh host -- uptime"), K, ""), Plan::AsIs("command"));
        for (line, why) in [
            ("ssh host uptime", "command"),
            ("ssh -t host top", "command"),
            ("ssh -N -L 8080:x:80 host", "options"),
            ("ssh -W x:22 jump", "options"),
            ("ssh -T host", "options"),
            ("ssh -V", "options"),
            ("ssh", "options"),
        ] {
            assert_eq!(plan(&v(line), K, ""), Plan::AsIs(why), "{line}");
        }
    }

    #[test]
    fn sudo_login_and_shell_modes_are_done_by_the_bootstrap() {
        let argv = boot(plan(&v("sudo -i"), K, "/bin/bash"));
        assert_eq!(argv[..5], v("sudo -H -- sh -c")[..]);
        assert_eq!(argv[7..], [K, "1", ""]);
        let argv = boot(plan(&v("sudo -u alice -s"), K, "/usr/bin/zsh"));
        assert_eq!(argv[..6], v("sudo -u alice -- sh -c")[..]);
        assert_eq!(argv[8..], [K, "0", "/usr/bin/zsh"]);
        let argv = boot(plan(&v("sudo -iu alice"), K, ""));
        assert_eq!(argv[..5], v("sudo -u alice -H --")[..]);
        let argv = boot(plan(&v("sudo -u alice bash -l"), K, ""));
        assert_eq!(argv[argv.len() - 3..], [K, "1", "bash"]);
        for (line, why) in [
            ("sudo apt update", "command"),
            ("sudo -i make", "command"),
            ("sudo -l", "options"),
            ("sudo -e /etc/hosts", "options"),
            ("sudo", "options"),
        ] {
            assert_eq!(plan(&v(line), K, ""), Plan::AsIs(why), "{line}");
        }
    }

    #[test]
    fn su_gets_the_bootstrap_as_its_command() {
        let argv = boot(plan(&v("su - alice"), K, ""));
        assert_eq!(argv[..4], v("su - alice -c")[..]);
        assert!(argv[4].contains(&format!("{K} 1 ''")), "{argv:?}");
        let argv = boot(plan(&v("su alice"), K, ""));
        assert!(argv[3].contains(&format!("{K} 0 ''")), "{argv:?}");
        assert_eq!(plan(&v("su -c id alice"), K, ""), Plan::AsIs("command"));
        assert_eq!(plan(&v("su alice -c id"), K, ""), Plan::AsIs("command"));
    }

    #[test]
    fn containers_get_their_shell_wrapped() {
        let argv = boot(plan(
            &v("docker exec -it -u alice -e A=1 web bash -l"),
            K,
            "",
        ));
        assert_eq!(
            argv[..10],
            v("docker exec -it -u alice -e A=1 web sh -c")[..]
        );
        assert_eq!(argv[12..], [K, "1", "bash"]);
        let argv = boot(plan(&v("podman exec --interactive --tty c1 zsh"), K, ""));
        assert_eq!(argv[argv.len() - 3..], [K, "0", "zsh"]);
        let argv = boot(plan(
            &v("docker run --rm -it -v /a:/b --name=x -e A=1 -p8080:80 debian:12 bash"),
            K,
            "",
        ));
        assert_eq!(
            argv[..13],
            v("docker run --rm -it -v /a:/b --name=x -e A=1 -p8080:80 debian:12 sh -c")[..]
        );
        assert_eq!(argv[argv.len() - 3..], [K, "0", "bash"]);
        for (line, why) in [
            ("docker run -it debian:12", "command"),
            ("docker run -it debian:12 make", "command"),
            ("docker run -d -it debian:12 bash", "options"),
            ("docker run --rm debian:12 bash", "options"),
            (
                "docker run -it --made-up-option x debian:12 bash",
                "options",
            ),
        ] {
            assert_eq!(plan(&v(line), K, ""), Plan::AsIs(why), "{line}");
        }
        let argv = boot(plan(&v("kubectl exec -it -n prod pod -- bash"), K, ""));
        assert_eq!(argv[..7], v("kubectl exec -it -n prod pod --")[..]);
        for (line, why) in [
            ("docker exec c1 bash", "options"),
            ("docker exec -i c1 bash", "options"),
            ("docker exec -it c1 ls", "command"),
            ("docker exec -it c1 bash -c ls", "command"),
            ("docker ps", "program"),
            ("kubectl exec pod -- bash", "options"),
            ("kubectl get pods", "program"),
        ] {
            assert_eq!(plan(&v(line), K, ""), Plan::AsIs(why), "{line}");
        }
    }

    #[test]
    fn a_shell_itself_goes_through_the_bootstrap_and_other_programs_as_they_are() {
        let argv = boot(plan(&v("bash -l"), K, ""));
        assert_eq!(argv[argv.len() - 3..], [K, "1", "bash"]);
        assert_eq!(plan(&v("make"), K, ""), Plan::AsIs("program"));
        assert_eq!(plan(&v("bash script.sh"), K, ""), Plan::AsIs("program"));
    }
}
