//! `omnish wrap zsh`: real zsh in a real pseudo-terminal, typed at as a person would.

mod common;

use common::*;

fn zsh_or_skip() -> bool {
    require("zsh")
}

#[test]
fn records_commands_with_output_status_and_cwd() {
    if !zsh_or_skip() {
        return;
    }
    let mut h = Harness::zsh(&[]);
    let r = h.run("echo hello");
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        ("echo hello", Some(0))
    );
    assert_eq!(h.output_text(&r), "hello\r\n");
    assert_eq!(r.cwd, h.home.path().to_string_lossy());
    assert_eq!(h.run("false").exit_code, Some(1));
    assert_eq!(h.run("true | false").exit_code, Some(1));
    assert_eq!(h.run("no-such-command-xyz").exit_code, Some(127));
    h.run("cd /tmp");
    assert_eq!(h.run("pwd").cwd, "/tmp");
    h.type_line("exit 7");
    assert_eq!(h.wait_exit(), 7);
    let last = h.records().pop().unwrap();
    assert_eq!(
        (last.command_line.as_str(), last.exit_code),
        ("exit 7", Some(7))
    );
    assert_eq!(h.meta().exit_status, Some(7));
}

#[test]
fn prompt_sp_filler_is_not_output() {
    if !zsh_or_skip() {
        return;
    }
    let mut h = Harness::zsh(&[]);
    let r = h.run("printf foo");
    assert_eq!(h.output_text(&r), "foo");
    let r = h.run("echo bar");
    assert_eq!(h.output_text(&r), "bar\r\n");
    // At another width too, and with a custom end-of-line mark.
    h.resize(30, 133);
    h.run("PROMPT_EOL_MARK='<nl>'");
    let r = h.run("printf 'no newline'");
    assert_eq!(h.output_text(&r), "no newline");
}

#[test]
fn command_lines_are_exact_including_multi_line() {
    if !zsh_or_skip() {
        return;
    }
    let mut h = Harness::zsh(&[]);
    for line in [
        "echo 'a;b' \"c\\\\d\" ünïcödé 字",
        "echo one; echo two",
        " echo leading-space",
    ] {
        let r = h.run(line);
        assert_eq!(r.command_line, line);
    }
    h.type_line("for i in 1 2");
    h.type_line("do echo n=$i");
    h.type_line("done");
    let r = h.wait_records(4).remove(3);
    assert_eq!(r.command_line, "for i in 1 2\ndo echo n=$i\ndone");
    assert_eq!(h.output_text(&r), "n=1\r\nn=2\r\n");
}

#[test]
fn empty_enter_and_ctrl_c() {
    if !zsh_or_skip() {
        return;
    }
    let mut h = Harness::zsh(&[]);
    h.send(b"\r");
    h.wait_prompts(2);
    h.send(b"half typed\x03");
    h.wait_prompts(3);
    assert!(h.records().is_empty());
    h.type_line("sleep 30");
    h.wait_foreground("sleep");
    h.send(b"\x03");
    let r = h.wait_records(1).remove(0);
    assert_eq!(
        (r.command_line.as_str(), r.exit_code),
        ("sleep 30", Some(130))
    );
}

#[test]
fn user_hooks_options_and_prompts_survive() {
    if !zsh_or_skip() {
        return;
    }
    // .zshrc overwrites precmd_functions, turns on nounset and ksh_arrays, uses an
    // oh-my-zsh-style prompt with prompt_subst and RPROMPT, and a precmd that records `$?`.
    let zshrc = r#"
setopt nounset prompt_subst
my_precmd() { echo "st=$?" >> ~/st.log }
precmd_functions=(my_precmd)
PROMPT='%F{green}READY%f[%?]> '
RPROMPT='%F{blue}%~%f'
"#;
    let mut h = Harness::start(&["zsh"], &[(".zshrc", zshrc)]);
    h.wait_prompts(1);
    let r = h.run("(exit 5)");
    assert_eq!(r.exit_code, Some(5));
    h.wait_screen("[5]> ");
    let log = std::fs::read_to_string(h.home.path().join("st.log")).unwrap();
    assert!(log.ends_with("st=5\n"), "{log}");
    let r = h.run("echo fine");
    assert_eq!(h.output_text(&r), "fine\r\n");
    assert!(!h.screen().contains("parameter not set"), "{}", h.screen());
}

#[test]
fn user_zdotdir_from_env_and_from_zshenv() {
    if !zsh_or_skip() {
        return;
    }
    // ZDOTDIR in the environment.
    let home = home_with(&[]);
    let zd = home.path().join("zconf");
    std::fs::create_dir_all(&zd).unwrap();
    std::fs::write(zd.join(".zshrc"), "PROMPT='READY> '\nZRC=loaded\n").unwrap();
    let zd_s = zd.to_string_lossy().into_owned();
    let mut h = Harness::start_with(&["zsh"], &[], &[("ZDOTDIR", &zd_s)]);
    h.wait_prompts(1);
    let r = h.run("echo \"$ZRC $ZDOTDIR\"");
    assert_eq!(h.output_text(&r), format!("loaded {zd_s}\r\n"));

    // ZDOTDIR chosen by ~/.zshenv: zsh reads the rest from there.
    let files = [
        (".zshenv", "ZDOTDIR=$HOME/.config/zsh\n"),
        (".config/zsh/.zshrc", "PROMPT='READY> '\nZRC=from-config\n"),
    ];
    let mut h = Harness::start(&["zsh"], &files);
    h.wait_prompts(1);
    let r = h.run("echo \"$ZRC ${ZDOTDIR#$HOME}\"");
    assert_eq!(h.output_text(&r), "from-config /.config/zsh\r\n");
}

#[test]
fn login_shell_reads_zprofile_and_zlogin() {
    if !zsh_or_skip() {
        return;
    }
    let files = [
        (".zprofile", "export P=1\n"),
        (".zshrc", "PROMPT='READY> '\nexport R=1\n"),
        (".zlogin", "export L=1\n"),
    ];
    let mut h = Harness::start(&["zsh", "-l"], &files);
    h.wait_prompts(1);
    let r = h.run("echo \"$P$R$L ${ZDOTDIR-unset}\"");
    assert_eq!(h.output_text(&r), "111 unset\r\n");
}

#[test]
fn piped_input_runs_in_an_interactive_zsh() {
    if !zsh_or_skip() {
        return;
    }
    let home = home_with(&[(".zshrc", "PROMPT='READY> '\n")]);
    let mut cmd = std::process::Command::new(omnish_bin());
    cmd.args(["wrap", "zsh"]);
    cmd.env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var("PATH").unwrap())
        .env("OMNISH_DATA_DIR", home.path().join("data"))
        .current_dir(home.path());
    let out = run_piped(
        cmd,
        "echo hi\n[[ -o interactive ]] && echo interactive\nexit 3\n",
    );
    assert_eq!(out.status.code(), Some(3));
    let dir = &omnish::store::list_sessions(&home.path().join("data")).unwrap()[0];
    let recs = omnish::store::read_commands(dir).unwrap();
    let lines: Vec<&str> = recs.iter().map(|r| r.command_line.as_str()).collect();
    assert_eq!(
        lines,
        [
            "echo hi",
            "[[ -o interactive ]] && echo interactive",
            "exit 3"
        ]
    );
    assert_eq!(output_of(dir, &recs[1]), b"interactive\r\n");
}
