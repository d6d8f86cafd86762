//! The ask and fix keys pressed in a shell on the far side of `omnish ssh` (issue 16), for the
//! tests of each far shell: an LLM stand-in, and the presses with what each must show.

use super::remote::{Sshd, TestUser};
use super::{CommandRecord, Harness, omnish_bin};

/// A recorded bash (`READY> ` prompts, this omnish first on PATH, `llm` as the command `omnish
/// ask` runs) logged into `user` over `sshd` with `omnish ssh`: returned once the far shell
/// (`comm`) is at its line editor and announced.
pub fn ssh_session(user: &TestUser, sshd: &Sshd, comm: &str, llm: &str) -> Harness {
    let bin = std::path::Path::new(omnish_bin()).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut h = Harness::start_with(
        &["bash"],
        &[(".bashrc", "PS1='READY> '\n")],
        &[("PATH", path.as_str()), ("OMNISH_ASK_COMMAND", llm)],
    );
    h.wait_prompts(1);
    sshd.client_config(h.home.path());
    h.type_line(&format!("omnish ssh {}", user.name));
    user.wait_line_editor(&h, comm);
    h.wait_until("the far shell in meta.json", || h.meta().nest.len() == 1);
    h
}

/// Ends the far shell (`comm`, at its line editor) and waits until omnish knows it ended.
pub fn exit_far(h: &mut Harness, user: &TestUser, comm: &str) {
    user.wait_line_editor(h, comm);
    h.type_line("exit");
    h.wait_until("the far shell's end", || h.meta().nest.is_empty());
}

/// An LLM stand-in (an executable in the returned directory): keeps the prompt in
/// `$HOME/prompt.txt`; asked for a fix (the prompt asks for a fenced block), answers one holding
/// `fixed`; else two lines, ANSWER-FIRST-LINE and ANSWER-SECOND-LINE.
pub fn llm_stand_in(fixed: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let llm = dir.path().join("llm-stand-in");
    std::fs::write(
        &llm,
        format!(
            "#!/bin/sh\ncat > \"$HOME/prompt.txt\"\n\
             if grep -q 'fenced code block' \"$HOME/prompt.txt\"; then\n\
               printf 'Use:\\n```sh\\n%s\\n```\\n' '{fixed}'\n\
             else\n\
               echo ANSWER-FIRST-LINE; echo ANSWER-SECOND-LINE\n\
             fi\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&llm, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = llm.display().to_string();
    (dir, path)
}

/// Runs `line` in `user`'s far shell `comm` (at its line editor) and returns its record, once
/// it has ended.
pub fn run_far(h: &mut Harness, user: &TestUser, comm: &str, line: &str) -> CommandRecord {
    user.wait_line_editor(h, comm);
    let before = h.records().len();
    h.type_line(line);
    let mut rec = None;
    h.wait_until(&format!("the record of {line:?}"), || {
        rec = h
            .records()
            .into_iter()
            .skip(before)
            .find(|r| r.command_line == line && r.exit_code.is_some());
        rec.is_some()
    });
    rec.unwrap()
}

/// In `user`'s far shell `comm` (`h` runs [`llm_stand_in`] as its LLM): `failing` fails, the
/// ask key (`ask`, as typed) shows the stand-in's answer, about that failure, below the line;
/// `after` still runs; then, `failing` again, the fix key (`fix`) puts `fixed` on the line
/// (read as the terminal shows it) and Enter runs it on the far side. Returns the records of
/// `after` and of `fixed`.
pub fn press_ask_and_fix(
    h: &mut Harness,
    user: &TestUser,
    comm: &str,
    keys: (&[u8], &[u8]),
    failing: &str,
    after: &str,
    fixed: &str,
) -> (CommandRecord, CommandRecord) {
    let shown_since = |h: &Harness, mark: usize| {
        omnish::term::render::render(h.screen_since(mark).as_bytes(), 80, 24).join("\n")
    };
    let fail = run_far(h, user, comm, failing);
    assert_ne!(fail.exit_code, Some(0), "{fail:?}");
    user.wait_line_editor(h, comm);
    let mark = h.mark();
    h.send(keys.0);
    h.wait_until("the answer on the screen", || {
        shown_since(h, mark).contains("ANSWER-SECOND-LINE")
    });
    let prompt = std::fs::read_to_string(h.home.path().join("prompt.txt")).unwrap();
    assert!(prompt.contains(failing), "{prompt}");
    let after = run_far(h, user, comm, after);
    run_far(h, user, comm, failing);
    user.wait_line_editor(h, comm);
    let mark = h.mark();
    h.send(keys.1);
    h.wait_until("the corrected command on the line", || {
        shown_since(h, mark).contains(fixed)
    });
    user.wait_line_editor(h, comm);
    let before = h.records().len();
    h.send(b"\r");
    let mut rec = None;
    h.wait_until("the corrected command's record", || {
        rec = h
            .records()
            .into_iter()
            .skip(before)
            .find(|r| r.command_line == fixed && r.exit_code.is_some());
        rec.is_some()
    });
    let rec = rec.unwrap();
    assert_eq!((rec.depth, rec.exit_code), (1, Some(0)), "{rec:?}");
    assert_eq!(rec.user.as_deref(), Some(user.name.as_str()));
    (after, rec)
}
