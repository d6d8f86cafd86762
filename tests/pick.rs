//! `omnish pick` in a real recorded bash under tmux: typing into fzf (a query, Tab to mark
//! several, Enter, Esc), its preview of a command's output, `context --pick` and the pick key
//! of `omnish init` (`ask --pick`), and the plain numbered list.

mod common;
#[path = "common/tmux.rs"]
mod tmux;

use common::*;
use std::path::{Path, PathBuf};
use tmux::Tmux;

/// A recorded bash (started by `omnish init bash --wrap`) in tmux, where three commands ran:
/// `echo alpha-one`, `ls /no-such-pick` and `echo gamma-three`. The stand-in LLM keeps the
/// prompt it is given in `~/prompt.txt`.
fn session() -> Option<(tempfile::TempDir, Tmux, PathBuf)> {
    if !require("tmux") {
        return None;
    }
    let rc = format!(
        "PS1='READY> '\neval \"$({} init bash --wrap)\"\n",
        omnish_bin()
    );
    let home = home_with(&[(".bashrc", &rc)]);
    let h = home.path();
    let llm = h.join("llm-stand-in");
    std::fs::write(
        &llm,
        "#!/bin/sh\ncat > \"$HOME/prompt.txt\"\necho STAND-IN-ANSWERED\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&llm, std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = h.join("data");
    let t = Tmux::start(
        h,
        &[
            ("OMNISH_DATA_DIR", data.display().to_string()),
            ("OMNISH_ASK_COMMAND", llm.display().to_string()),
        ],
        "bash -i",
    );
    t.wait("the prompt", |s| s.contains("READY>"));
    for (n, line) in ["echo alpha-one", "ls /no-such-pick", "echo gamma-three"]
        .iter()
        .enumerate()
    {
        t.type_text(line);
        t.keys(&["Enter"]);
        wait_records(&data, n + 1);
    }
    t.wait("the fourth prompt", |s| s.matches("READY>").count() >= 4);
    Some((home, t, data))
}

/// The records of the one session in `data`, once there are `n`.
fn wait_records(data: &Path, n: usize) -> Vec<omnish::store::CommandRecord> {
    let mut recs = Vec::new();
    wait_for(&format!("{n} records"), || {
        recs = omnish::store::list_sessions(data)
            .ok()
            .and_then(|s| s.first().cloned())
            .and_then(|d| omnish::store::read_commands(&d).ok())
            .unwrap_or_default();
        recs.len() >= n
    });
    recs
}

/// The id of the record whose line is `line`.
fn id_of(data: &Path, line: &str) -> String {
    wait_records(data, 3)
        .into_iter()
        .find(|r| r.command_line == line)
        .unwrap()
        .command_id
}

fn read(home: &Path, name: &str) -> String {
    std::fs::read_to_string(home.join(name)).unwrap_or_default()
}

#[test]
fn typing_into_fzf_picks_commands_for_pick_and_context() {
    if !require("fzf") {
        return;
    }
    let Some((home, t, data)) = session() else {
        return;
    };
    let h = home.path();

    // One command by a query; the preview shows the highlighted command's output.
    t.type_text(&format!(
        "{} pick > ~/picked.txt; echo pick-status=$?",
        omnish_bin()
    ));
    t.keys(&["Enter"]);
    t.wait("fzf's list and the preview of the newest command", |s| {
        s.contains("omnish pick>") && s.contains("$ echo gamma-three")
    });
    t.type_text("alpha-one");
    t.wait("the list narrowed", |s| !s.contains("[exit 2]"));
    t.keys(&["Enter"]);
    t.wait("pick's status", |s| s.contains("pick-status=0"));
    assert_eq!(read(h, "picked.txt"), id_of(&data, "echo alpha-one") + "\n");

    // Several, marked with Tab across two queries: their context, oldest first.
    t.type_text(&format!(
        "{} context --pick > ~/ctx.txt; echo ctx-status=$?",
        omnish_bin()
    ));
    t.keys(&["Enter"]);
    t.wait("fzf's list", |s| s.contains("omnish pick>"));
    t.type_text("gamma-three");
    t.wait("the list narrowed", |s| !s.contains("alpha-one  ["));
    t.keys(&["Tab", "C-u"]);
    t.type_text("no-such-pick");
    t.wait("the list narrowed again", |s| !s.contains("gamma-three  ["));
    t.keys(&["Tab", "Enter"]);
    t.wait("context's status", |s| s.contains("ctx-status=0"));
    let ctx = read(h, "ctx.txt");
    let ls = ctx.find("$ ls /no-such-pick").expect(&ctx);
    let gamma = ctx.find("$ echo gamma-three").expect(&ctx);
    assert!(ls < gamma, "{ctx}");
    assert!(!ctx.contains("alpha-one"), "{ctx}");
    assert!(ctx.contains("No such file or directory"), "{ctx}");

    // Esc picks nothing: status 130, nothing printed, and context runs nothing.
    t.type_text(&format!(
        "{} pick > ~/none.txt; echo esc-status=$?",
        omnish_bin()
    ));
    t.keys(&["Enter"]);
    t.wait("fzf's list", |s| s.contains("omnish pick>"));
    t.keys(&["Escape"]);
    t.wait("pick's status", |s| s.contains("esc-status=130"));
    assert_eq!(read(h, "none.txt"), "");
    t.type_text(&format!(
        "{} context --pick > ~/none2.txt; echo ctx-esc=$?",
        omnish_bin()
    ));
    t.keys(&["Enter"]);
    t.wait("fzf's list", |s| s.contains("omnish pick>"));
    t.keys(&["Escape"]);
    let s = t.wait("context's status", |s| s.contains("ctx-esc=130"));
    assert!(s.contains("omnish: nothing picked"), "{s}");
    assert_eq!(read(h, "none2.txt"), "");
}

#[test]
fn the_pick_key_asks_about_the_commands_picked() {
    if !require("fzf") {
        return;
    }
    let Some((home, t, _data)) = session() else {
        return;
    };
    t.keys(&["C-x", "k"]);
    t.wait("fzf's list", |s| s.contains("omnish pick>"));
    // The oldest: were the pick ignored, the newest command would be asked about.
    t.type_text("alpha-one");
    t.wait("the list narrowed", |s| !s.contains("gamma-three  ["));
    t.keys(&["Enter"]);
    t.wait("the answer", |s| s.contains("STAND-IN-ANSWERED"));
    let prompt = read(home.path(), "prompt.txt");
    assert!(prompt.contains("$ echo alpha-one"), "{prompt}");
    assert!(!prompt.contains("gamma-three"), "{prompt}");
    assert!(!prompt.contains("no-such-pick"), "{prompt}");
}

#[test]
fn the_plain_list_is_numbered_and_reads_the_answer_from_the_terminal() {
    let Some((home, t, data)) = session() else {
        return;
    };
    let h = home.path();
    t.type_text(&format!(
        "{} pick --plain > ~/plain.txt; echo plain-status=$?",
        omnish_bin()
    ));
    t.keys(&["Enter"]);
    // Newest last, numbered from it, with the last lines of each output.
    let s = t.wait("the list and the question", |s| {
        s.contains("Commands to pick")
    });
    for want in [
        "  3  echo alpha-one  [exit 0]",
        "  2  ls /no-such-pick  [exit 2]",
        "       │ ls: cannot access '/no-such-pick': No such file or directory",
        "  1  echo gamma-three  [exit 0]",
        "       │ gamma-three",
    ] {
        assert!(s.contains(want), "{want:?} not in:\n{s}");
    }
    // A number not in the list: said, and asked again.
    t.type_text("9");
    t.keys(&["Enter"]);
    t.wait("the complaint", |s| {
        s.contains("'9' is not a number from the list (1 to 3)")
    });
    t.type_text("1-2");
    t.keys(&["Enter"]);
    t.wait("pick's status", |s| s.contains("plain-status=0"));
    assert_eq!(
        read(h, "plain.txt"),
        format!(
            "{}\n{}\n",
            id_of(&data, "ls /no-such-pick"),
            id_of(&data, "echo gamma-three")
        )
    );
    // An empty answer picks nothing.
    t.type_text(&format!(
        "{} pick --plain; echo plain-none=$?",
        omnish_bin()
    ));
    t.keys(&["Enter"]);
    t.wait("the question", |s| {
        s.matches("Commands to pick").count() >= 2
    });
    t.keys(&["Enter"]);
    t.wait("pick's status", |s| s.contains("plain-none=130"));
}
