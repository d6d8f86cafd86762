//! `omnish wrap nu`: real nushell in a real pseudo-terminal, typed at as a person would.

mod common;

use common::*;
use omnish::store::CommandRecord;
use std::path::PathBuf;

/// A config.nu with the test prompt (READY, which no typed command holds) and no banner.
const CONFIG: &str = r#"
$env.config.show_banner = false
$env.PROMPT_COMMAND = {|| "READY> " }
$env.PROMPT_COMMAND_RIGHT = ""
$env.PROMPT_INDICATOR = ""
"#;

fn nu_or_skip() -> bool {
    require("nu")
}

fn nu(extra: &[(&str, &str)]) -> Harness {
    let mut files = vec![(".config/nushell/config.nu", CONFIG)];
    files.extend_from_slice(extra);
    let h = Harness::start(&["nu"], &files);
    h.wait_prompts(1);
    h
}

/// omnish's private directory, from the nu's `--execute` argument.
fn private_dir(h: &Harness) -> PathBuf {
    let nu = h.process("nu").expect("nu runs");
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", nu.pid)).unwrap();
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let exec = args
        .iter()
        .find(|a| a.starts_with("source r#'"))
        .expect("the hooks' --execute");
    let file = exec["source r#'".len()..].split("'#").next().unwrap();
    PathBuf::from(file).parent().unwrap().to_path_buf()
}

fn token(h: &Harness) -> String {
    std::fs::read_to_string(private_dir(h).join("nu.token"))
        .unwrap()
        .trim()
        .to_string()
}

/// Every byte omnish stored for the session (`common::session_text`: a file the recorder
/// replaces meanwhile, `meta.json` through a temporary file, is passed over, not an error).
fn stored(h: &Harness) -> Vec<u8> {
    session_text(&h.session_dir()).into_bytes()
}

/// A record's output without the escape sequences nushell writes around every command (its own
/// OSC 133 `C` and `D`, the window title, OSC 7, the keypad mode), which a terminal does not
/// show and `omnish context` leaves out.
fn shown(h: &Harness, r: &CommandRecord) -> String {
    let raw = h.output_text(r);
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // OSC: up to BEL or ESC \.
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            // CSI: up to its final byte.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn line_and_status(r: &CommandRecord) -> (&str, Option<i32>) {
    (r.command_line.as_str(), r.exit_code)
}

#[test]
fn records_commands_with_output_status_and_cwd() {
    if !nu_or_skip() {
        return;
    }
    let mut h = nu(&[]);
    let r = h.run("print hello");
    assert_eq!(line_and_status(&r), ("print hello", Some(0)));
    assert_eq!(shown(&h, &r), "hello\r\n");
    assert_eq!(r.cwd, h.home.path().to_string_lossy());
    // Externals, their pipelines, internal errors, a command that does not exist.
    assert_eq!(h.run("^false").exit_code, Some(1));
    assert_eq!(h.run("^sh -c 'exit 3'").exit_code, Some(3));
    assert_eq!(h.run("^true | ^false").exit_code, Some(1));
    assert_eq!(h.run("error make {msg: boom}").exit_code, Some(1));
    assert_eq!(h.run("ls /no/such/dir").exit_code, Some(1));
    // nushell's own status for a command it cannot find (an error, 1; bash says 127).
    assert_eq!(h.run("no-such-command-xyz").exit_code, Some(1));
    // A success after a failure is a success.
    assert_eq!(h.run("[1 2 3] | math sum").exit_code, Some(0));
    h.run("cd /tmp");
    assert_eq!(h.run("pwd").cwd, "/tmp");
    h.type_line("exit 7");
    assert_eq!(h.wait_exit(), 7);
    let last = h.records().pop().unwrap();
    assert_eq!(line_and_status(&last), ("exit 7", Some(7)));
    assert_eq!(h.meta().exit_status, Some(7));
}

#[test]
fn command_lines_are_exact_including_multi_line() {
    if !nu_or_skip() {
        return;
    }
    let mut h = nu(&[]);
    for line in ["print 'a;b' \"c\\\\d\" ünïcödé 字", "print one; print two"] {
        let r = h.run(line);
        assert_eq!(r.command_line, line);
    }
    // An open brace: Enter goes on to the next line.
    h.type_line("for i in [1 2] {");
    h.type_line("print $\"n=($i)\"");
    h.type_line("}");
    let r = h.wait_records(3).remove(2);
    assert_eq!(r.command_line, "for i in [1 2] {\nprint $\"n=($i)\"\n}");
    assert_eq!(shown(&h, &r), "n=1\r\nn=2\r\n");
}

#[test]
fn empty_enter_and_ctrl_c() {
    if !nu_or_skip() {
        return;
    }
    let mut h = nu(&[]);
    h.send(b"\r");
    h.wait_prompts(2);
    h.wait_line_editor();
    h.send(b"half typed\x03");
    h.wait_prompts(3);
    assert!(h.records().is_empty(), "{:?}", h.records());
    h.type_line("^sleep 30");
    h.wait_foreground("sleep");
    h.send(b"\x03");
    let r = h.wait_records(1).remove(0);
    assert_eq!(r.command_line, "^sleep 30");
    // nushell says -2 (killed by SIGINT): the record says 128+2, as for bash and zsh.
    assert_eq!(r.exit_code, Some(130));
    let r = h.run("print after");
    assert_eq!(shown(&h, &r), "after\r\n");
}

#[test]
fn private_lines_and_echo_off_input_are_never_stored() {
    if !nu_or_skip() {
        return;
    }
    let mut h = nu(&[]);
    // A leading space keeps a line out of nushell's history: out of the record too.
    let r = h.run(" print private-xyzzy");
    assert_eq!(r.command_line, "");
    assert!(h.screen().contains("private-xyzzy"));
    // `input -s` reads with echo off.
    h.type_line("let pw = (input -s 'pw: '); print ($pw | str length)");
    h.wait_screen("pw: ");
    h.wait_line_editor();
    h.send(b"hunter2-secret\r");
    let r = h.wait_records(2).remove(1);
    assert_eq!(shown(&h, &r).trim_start_matches("pw: ").trim(), "14");
    let r = h.run("print public");
    assert_eq!(shown(&h, &r), "public\r\n");
    let all = stored(&h);
    for secret in ["private-xyzzy", "hunter2-secret"] {
        assert!(
            memchr::memmem::find(&all, secret.as_bytes()).is_none(),
            "{secret} is stored"
        );
    }
}

#[test]
fn nu_no_history_keeps_every_line_private() {
    if !nu_or_skip() {
        return;
    }
    let files = [(".config/nushell/config.nu", CONFIG)];
    let mut h = Harness::start(&["nu", "--no-history"], &files);
    h.wait_prompts(1);
    let r = h.run("print nohist-xyzzy");
    assert_eq!(r.command_line, "");
    assert!(memchr::memmem::find(&stored(&h), b"nohist-xyzzy").is_none());
}

#[test]
fn the_token_is_in_no_env_argument_or_record_and_crafted_markers_are_output() {
    if !nu_or_skip() {
        return;
    }
    let mut h = nu(&[]);
    let token = token(&h);
    assert_eq!(token.len(), 32);
    // Not in the environment nu hands its programs, nor in any argument list.
    let r = h.run("^env | save -f ~/env.txt; $env | to text | save -f ~/nuenv.txt");
    assert_eq!(r.exit_code, Some(0));
    for f in ["env.txt", "nuenv.txt"] {
        let text = std::fs::read_to_string(h.home.path().join(f)).unwrap();
        assert!(!text.contains(&token), "{f}: {text}");
    }
    for p in h.processes() {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", p.pid)).unwrap_or_default();
        assert!(memchr::memmem::find(&cmdline, token.as_bytes()).is_none());
    }
    // Markers in a file (without the token) are the output of the command that prints them.
    let crafted = "\x1b]133;A\x07\x1b]633;E;rm -rf /\x07\x1b]133;C\x07forged\x1b]133;D;0\x07\n";
    std::fs::write(h.home.path().join("crafted.txt"), crafted).unwrap();
    let r = h.run("open --raw crafted.txt");
    assert_eq!(line_and_status(&r), ("open --raw crafted.txt", Some(0)));
    assert!(shown(&h, &r).contains("forged"));
    let r = h.run("^cat crafted.txt");
    assert!(shown(&h, &r).contains("forged"));
    assert_eq!(h.records().len(), 3);
    // The token printed by the user reaches neither the store nor the front ends.
    h.run(&format!(
        "open --raw {}",
        private_dir(&h).join("nu.token").display()
    ));
    assert!(memchr::memmem::find(&stored(&h), token.as_bytes()).is_none());
}

#[test]
fn user_hooks_prompts_and_a_whole_config_assignment_survive() {
    if !nu_or_skip() {
        return;
    }
    // config.nu assigns `$env.config` whole (hooks included), prompts are closures as
    // starship's and oh-my-posh's are, and a pre_prompt hook logs the status it sees.
    let config = r#"
$env.config = {
    show_banner: false
    hooks: {
        pre_prompt: [{|| $"st=($env.LAST_EXIT_CODE)\n" | save -a ~/st.log }]
        pre_execution: [{|| $"ran=(commandline)\n" | save -a ~/ran.log }]
    }
}
$env.PROMPT_COMMAND = {|| $"READY[($env.LAST_EXIT_CODE)]" }
$env.PROMPT_COMMAND_RIGHT = {|| $"right:(pwd | path basename)" }
$env.PROMPT_INDICATOR = {|| "> " }
"#;
    let mut h = Harness::start(&["nu"], &[(".config/nushell/config.nu", config)]);
    h.wait_prompts(1);
    let r = h.run("^sh -c 'exit 5'");
    assert_eq!(r.exit_code, Some(5));
    h.wait_screen("READY[5]");
    let r = h.run("print fine");
    assert_eq!(shown(&h, &r), "fine\r\n");
    let st = std::fs::read_to_string(h.home.path().join("st.log")).unwrap();
    assert!(st.contains("st=5\n"), "{st}");
    let ran = std::fs::read_to_string(h.home.path().join("ran.log")).unwrap();
    assert!(ran.contains("ran=print fine\n"), "{ran}");
    assert!(h.screen().contains("right:"));
}

#[test]
fn default_configuration_in_a_fresh_home() {
    if !nu_or_skip() {
        return;
    }
    // No config files at all: nushell's defaults (its own OSC 133 and 633 marks on).
    let mut h = Harness::start(&["nu"], &[]);
    h.wait_line_editor();
    h.type_line("print default-config");
    let r = h.wait_records(1).remove(0);
    assert_eq!(line_and_status(&r), ("print default-config", Some(0)));
    assert!(shown(&h, &r).contains("default-config\r\n"));
    h.wait_line_editor();
    h.type_line("^false");
    let r = h.wait_records(2).remove(1);
    assert_eq!(line_and_status(&r), ("^false", Some(1)));
    // nushell's own marks (OSC 133 A, B, C, D) reach the terminal once; omnish's never do.
    let screen = h.screen();
    assert!(
        screen.contains("\x1b]133;A") && screen.contains("\x1b]133;D;1"),
        "{screen:?}"
    );
    let token = token(&h);
    assert!(!screen.contains(&token), "{screen:?}");
    // nushell wrote its (commented) default files at the first start, under omnish too.
    let config_dir = h.home.path().join(".config/nushell");
    assert!(config_dir.join("config.nu").exists() && config_dir.join("env.nu").exists());
}

#[test]
fn nushells_default_config_files() {
    if !nu_or_skip() {
        return;
    }
    // The files `config env --default` and `config nu --default` print, as a user who asked
    // nushell for its defaults has them.
    let default = |which: &str| {
        let out = std::process::Command::new("nu")
            .args(["-n", "-c", &format!("config {which} --default")])
            .env("HOME", std::env::temp_dir())
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let (env, config) = (default("env"), default("nu"));
    assert!(env.contains("PROMPT_COMMAND"), "{env}");
    let files = [
        (".config/nushell/env.nu", env.as_str()),
        (".config/nushell/config.nu", config.as_str()),
    ];
    let mut h = Harness::start(&["nu"], &files);
    h.wait_line_editor();
    h.type_line("print with-defaults");
    let r = h.wait_records(1).remove(0);
    assert_eq!(line_and_status(&r), ("print with-defaults", Some(0)));
    assert!(shown(&h, &r).contains("with-defaults\r\n"));
}

/// Types `inner` (a shell) in a recorded `outer`, runs two commands in it and leaves it with
/// `exit 3`: the inner commands are records of their own, nested in the one that started it,
/// which ends with the inner shell's status.
fn nested(outer: &str, inner: &str) {
    if [outer, inner].iter().any(|s| s.starts_with("zsh")) && !require("zsh") {
        return;
    }
    let files = [
        (".config/nushell/config.nu", CONFIG),
        (".bashrc", "PS1='READY> '\n"),
        (".zshrc", "PROMPT='READY> '\n"),
    ];
    let mut h = Harness::start(&[outer], &files);
    h.wait_prompts(1);
    let prompts = h.screen().matches(PROMPT).count();
    h.type_line(inner);
    h.wait_prompts(prompts + 1);
    h.wait_until("the nested shell in meta.json", || h.meta().nest.len() == 1);
    let nest = h.meta().nest;
    assert_eq!(nest[0].parent.command_line, inner);
    assert_eq!(nest[0].shell, inner.split(' ').next().unwrap());
    let in_nu = inner.starts_with("nu");
    let echo = h.run(if in_nu {
        "print inner-ok"
    } else {
        "echo inner-ok"
    });
    let fail = h.run(if in_nu { "^false" } else { "false" });
    // nushell redraws its prompt on Enter: wait for the outer command's record instead.
    h.type_line("exit 3");
    h.wait_until("the outer command's end", || {
        h.records().iter().any(|r| r.command_line == inner)
    });
    let outer_echo = if outer == "nu" {
        "print outer-after"
    } else {
        "echo outer-after"
    };
    let after = h.run(outer_echo);
    assert_eq!((after.command_line.as_str(), after.depth), (outer_echo, 0));
    let recs = h.records();
    let started = recs.iter().find(|r| r.command_line == inner).unwrap();
    assert_eq!(
        (started.exit_code, started.depth),
        (Some(3), 0),
        "{recs:#?}"
    );
    for (r, code) in [(&echo, 0), (&fail, 1)] {
        assert_eq!((r.exit_code, r.depth), (Some(code), 1), "{r:?}");
        assert_eq!(r.nested_in.as_deref(), Some(started.command_id.as_str()));
    }
    assert_eq!(shown(&h, &echo), "inner-ok\r\n");
}

#[test]
fn nu_nested_in_nu() {
    if nu_or_skip() {
        nested("nu", "nu");
    }
}

#[test]
fn bash_and_zsh_nested_in_nu() {
    if nu_or_skip() {
        nested("nu", "bash");
        nested("nu", "zsh -l");
    }
}

#[test]
fn nu_nested_in_bash_and_zsh() {
    if nu_or_skip() {
        nested("bash", "nu");
        nested("zsh", "nu");
    }
}

#[test]
fn exec_nu_from_bash_and_zsh_is_hooked() {
    if !nu_or_skip() {
        return;
    }
    for outer in ["bash", "zsh"] {
        if outer == "zsh" && !require("zsh") {
            return;
        }
        let files = [
            (".config/nushell/config.nu", CONFIG),
            (".bashrc", "PS1='READY> '\n"),
            (".zshrc", "PROMPT='READY> '\n"),
        ];
        let mut h = Harness::start(&[outer], &files);
        h.wait_prompts(1);
        let r = h.run("exec nu");
        assert_eq!(r.command_line, "exec nu");
        let r = h.run("print $\"in-nu-(1 + 1)\"");
        assert_eq!((r.exit_code, r.depth), (Some(0), 0), "{outer}");
        assert_eq!(shown(&h, &r), "in-nu-2\r\n", "{outer}");
        let r = h.run("^false");
        assert_eq!(r.exit_code, Some(1), "{outer}");
        let r = h.run("^env");
        assert!(!shown(&h, &r).contains("NU_VENDOR_AUTOLOAD_DIR"), "{outer}");
    }
}

#[test]
fn exec_replaces_nu_with_a_hooked_shell() {
    if !nu_or_skip() {
        return;
    }
    // A command defined before the exec is gone after it; the new shell's commands are
    // records of their own at the top level.
    for (to, check, want) in [
        (
            "nu",
            "print (scope commands | where name == my-marker | length)",
            "0\r\n",
        ),
        ("bash", "echo ${BASH_VERSION%%.*}", "5\r\n"),
    ] {
        let files = [
            (".config/nushell/config.nu", CONFIG),
            (".bashrc", "PS1='READY> '\n"),
        ];
        let mut h = Harness::start(&["nu"], &files);
        h.wait_prompts(1);
        h.run("def my-marker [] {}");
        let r = h.run(&format!("exec {to}"));
        assert_eq!(r.command_line, format!("exec {to}"));
        let r = h.run(check);
        assert_eq!((r.exit_code, r.depth), (Some(0), 0), "{to}");
        assert_eq!(shown(&h, &r), want, "{to}");
        let r = h.run("^false".trim_start_matches(if to == "nu" { "" } else { "^" }));
        assert_eq!(r.exit_code, Some(1), "{to}");
        // Nothing of the hooks' exec is left for the programs the new shell starts.
        let r = h.run("env");
        let env = shown(&h, &r);
        assert!(
            !env.contains("NU_VENDOR_AUTOLOAD_DIR") && !env.contains("POSIXLY"),
            "{env}"
        );
    }
}

#[test]
fn command_strings_and_scripts_are_one_command() {
    if !nu_or_skip() {
        return;
    }
    let mut h = Harness::start(&["nu", "-c", "print from-c; exit 3"], &[]);
    assert_eq!(h.wait_exit(), 3);
    let recs = h.records();
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(line_and_status(&recs[0]), ("print from-c; exit 3", Some(3)));
    assert!(shown(&h, &recs[0]).contains("from-c"));
    assert!(!h.meta().hooked);
}

#[test]
fn hooks_a_command_removes_or_moves_come_back_at_the_next_prompt() {
    if !nu_or_skip() {
        return;
    }
    let mut h = nu(&[]);
    // A hook that prints, put first, and the pre_execution hooks emptied.
    let r = h.run(
        "$env.config.hooks.pre_prompt = ([{|| print -n hook-said }] ++ $env.config.hooks.pre_prompt); $env.config.hooks.pre_execution = []",
    );
    assert_eq!(r.exit_code, Some(0));
    let r = h.run("print back");
    assert_eq!(line_and_status(&r), ("print back", Some(0)));
    // omnish's pre_prompt hook runs first again: what the other prints is after the end.
    assert_eq!(shown(&h, &r), "back\r\n");
    assert!(h.screen().contains("hook-said"));
}

/// `poetry shell` and `nix-shell` typed in a recorded nu (issue 16): poetry starts a nu (`nu -e
/// 'overlay use …/activate.nu'`), nix a bash with its rcfile; each is hooked, its commands
/// records nested in the program's, the program's status the inner one's.
#[test]
fn poetry_shell_and_nix_shell_in_nu_record_each_inner_command() {
    if !(nu_or_skip() && require("poetry")) {
        return;
    }
    let (_bin, env) = starters::bin_dir();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let files = [
        (".config/nushell/config.nu", CONFIG),
        (".bashrc", "PS1='READY> '\n"),
        ("proj/pyproject.toml", starters::PYPROJECT),
    ];
    let mut h = Harness::start_with(&["nu"], &files, &env);
    h.wait_prompts(1);
    h.run("cd proj");
    for (line, inner, echo, probe, want) in [
        (
            "poetry shell",
            "nu",
            "print inner-42",
            "$env.VIRTUAL_ENV | path basename",
            ".venv\r\n",
        ),
        (
            "nix-shell",
            "bash",
            "echo inner-42",
            "echo $IN_NIX_SHELL",
            "impure\r\n",
        ),
    ] {
        let prompts = h.screen().matches(PROMPT).count();
        h.type_line(line);
        h.wait_until("the nested shell in meta.json", || h.meta().nest.len() == 1);
        assert_eq!(h.meta().nest[0].shell, inner);
        h.wait_prompts(prompts + 1);
        let echo = h.run(echo);
        let probe = h.run(probe);
        // nushell redraws its prompt on Enter: wait for the program's record instead.
        h.type_line("exit 3");
        h.wait_until("the program's record", || {
            h.records().iter().any(|r| r.command_line == line)
        });
        let recs = h.records();
        let started = recs.iter().rev().find(|r| r.command_line == line).unwrap();
        assert_eq!(
            (started.exit_code, started.depth),
            (Some(3), 0),
            "{recs:#?}"
        );
        for r in [&echo, &probe] {
            assert_eq!((r.exit_code, r.depth), (Some(0), 1), "{r:?}");
            assert_eq!(r.nested_in.as_deref(), Some(started.command_id.as_str()));
        }
        assert_eq!(shown(&h, &echo), "inner-42\r\n");
        assert_eq!(shown(&h, &probe), want);
        h.wait_until("the nested shell's end", || h.meta().nest.is_empty());
    }
}

const REHOOK: &str = "__omnish_rehook";

/// Waits for the prompt that runs ` __omnish_rehook` (the screen held `before` of its name),
/// its end, then the next prompt. (A line typed while the first was shown was once lost on a
/// loaded CI machine: not understood, not reproduced in tmux or in 14 runs here, under load as
/// well.)
fn after_rehook(h: &Harness, before: usize) {
    h.wait_until("the prompt after the rehook", || {
        let s = h.screen();
        s.matches(REHOOK).count() > before
            && s.rfind(REHOOK)
                .is_some_and(|i| s[i..].contains("133;D") && s[i..].contains(PROMPT))
    });
}

/// Runs `line` (an assignment to `$env.config` that drops omnish's hooks), waits for the prompt
/// after the rehook, and checks that `print after` is then a record with its output.
fn assign_then_print_after(h: &mut Harness, line: &str) {
    let rehooks = h.screen().matches(REHOOK).count();
    let r = h.run(line);
    assert_eq!(line_and_status(&r), (line, Some(0)));
    after_rehook(h, rehooks);
    let r = h.run("print after");
    assert_eq!(line_and_status(&r), ("print after", Some(0)));
    assert_eq!(shown(h, &r), "after\r\n");
}

/// `$env.config = {...}` typed at the prompt with hook lists in it replaces those lists whole,
/// omnish's hooks with them: the prompt (a closure around the user's, outside `$env.config`)
/// ends that command and has nushell put the hooks back before the next line, with the user's
/// new hooks kept. The commands after it are records, and the line that put them back is none.
#[test]
fn a_config_assignment_typed_at_the_prompt_loses_no_command() {
    if !nu_or_skip() {
        return;
    }
    let mut h = nu(&[]);
    h.run("print before");
    let line = "$env.config = {show_banner: false, hooks: {pre_prompt: [{|| 'pp\n' | save -a ~/pp.log }], pre_execution: []}}";
    assign_then_print_after(&mut h, line);
    let r = h.run("^sh -c 'exit 4'");
    assert_eq!(line_and_status(&r), ("^sh -c 'exit 4'", Some(4)));
    let lines: Vec<String> = h.records().into_iter().map(|r| r.command_line).collect();
    assert_eq!(
        lines,
        ["print before", line, "print after", "^sh -c 'exit 4'"],
        "{lines:?}"
    );
    // The user's new hook runs at each prompt since, beside omnish's.
    let pp = std::fs::read_to_string(h.home.path().join("pp.log")).unwrap();
    assert!(pp.lines().count() >= 3, "{pp:?}");
    // Again, with the user's prompt set anew in the same session: still put back.
    h.run("$env.PROMPT_COMMAND = {|| 'READY2> ' }");
    let rehooks = h.screen().matches(REHOOK).count();
    let r = h.run("$env.config = {hooks: {pre_prompt: [], pre_execution: []}}");
    assert_eq!(r.exit_code, Some(0));
    after_rehook(&h, rehooks);
    let r = h.run("print again");
    assert_eq!(line_and_status(&r), ("print again", Some(0)));
    assert!(h.screen().contains("READY2> "));
}

/// starship, installed as its documentation says for nushell: `starship init nu` saved into
/// nushell's vendor autoload directory. Commands are recorded with their status, starship's
/// prompt shows the status omnish left intact, the token never reaches the terminal, and a
/// `$env.config = {...}` typed at the prompt loses no command under starship's prompt either.
#[test]
fn starship_installed_as_its_docs_say() {
    if !(nu_or_skip() && require("starship")) {
        return;
    }
    let init = std::process::Command::new("starship")
        .args(["init", "nu"])
        .output()
        .unwrap();
    assert!(init.status.success());
    let init = String::from_utf8(init.stdout).unwrap();
    let toml = "add_newline = false\ncommand_timeout = 10000\n\
                format = \"$directory$status$character\"\n\
                [directory]\nformat = \"in:$path \"\n\
                [status]\ndisabled = false\nformat = \"st=$status \"\n\
                [character]\nsuccess_symbol = \"READY>\"\nerror_symbol = \"READY!\"\n";
    let files = [
        (
            ".config/nushell/config.nu",
            "$env.config.show_banner = false\n",
        ),
        (
            ".local/share/nushell/vendor/autoload/starship.nu",
            init.as_str(),
        ),
        (".config/starship.toml", toml),
    ];
    let mut h = Harness::start(&["nu"], &files);
    h.wait_screen("in:~ READY>");
    let r = h.run("^sh -c 'exit 3'");
    assert_eq!(line_and_status(&r), ("^sh -c 'exit 3'", Some(3)));
    h.wait_screen("in:~ st=3 READY!");
    let r = h.run("cd /tmp; print star-out");
    assert_eq!(line_and_status(&r), ("cd /tmp; print star-out", Some(0)));
    assert_eq!(shown(&h, &r), "star-out\r\n");
    h.wait_screen("in:/tmp READY>");
    let line = "$env.config = {hooks: {pre_prompt: [], pre_execution: []}}";
    assign_then_print_after(&mut h, line);
    let lines: Vec<String> = h.records().into_iter().map(|r| r.command_line).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    let screen = h.screen();
    assert!(screen.matches("in:/tmp READY>").count() >= 3, "{screen:?}");
    assert!(!screen.contains(&token(&h)), "{screen:?}");
}

/// Lines typed while a command runs, which the command reads itself: at its end no line waits
/// for the shell (the hook asks `bash -c 'read -t 0'`, which reads nothing), so their echo is
/// the command's output and stays in its record; a line typed ahead of the shell is a record of
/// its own, and the echo of a private one is nowhere on disk.
#[test]
fn lines_a_command_read_stay_in_its_output() {
    if !(nu_or_skip() && require("bash")) {
        return;
    }
    let mut h = nu(&[]);
    // (Running 300 ms at least: the hook asks only after a command that ran 200 ms.)
    h.type_line("^sh -c 'sleep 0.3; read a; read b; echo got=$a,$b'");
    h.wait_reading("sh");
    h.type_line("one");
    h.wait_screen("one\r\n");
    h.wait_reading("sh");
    h.type_line("two");
    let r = h.wait_records(1).remove(0);
    assert_eq!(r.exit_code, Some(0));
    assert_eq!(shown(&h, &r), "one\r\ntwo\r\ngot=one,two\r\n");
    h.wait_prompts(2);
    h.type_line("^sleep 1");
    h.wait_foreground("sleep");
    // (One line: reedline keeps only the first of several lines typed ahead.)
    h.type_line(" print SECRET-ahead-7");
    let recs = h.wait_records(3);
    h.wait_prompts(4);
    let r = h.run("print after");
    let lines: Vec<&str> = recs.iter().map(|r| r.command_line.as_str()).collect();
    assert_eq!(lines[1..], ["^sleep 1", ""]);
    assert!(recs[2].private, "{:?}", recs[2]);
    assert_eq!(shown(&h, &r), "after\r\n");
    assert!(!String::from_utf8_lossy(&stored(&h)).contains("SECRET-ahead"));
}
