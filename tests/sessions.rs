//! `omnish sessions`, `omnish search` and `omnish status` on stores recorded by real wrapped
//! shells, including removal racing recorders that are starting and search over a live session.

mod common;

use common::*;
use omnish::store;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// `omnish ARGS` on `data`, from outside any recorded shell, in `home`.
fn omnish_on(home: &Path, data: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(omnish_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("OMNISH_DATA_DIR", data)
        .current_dir(home);
    run_piped(cmd, "")
}

fn omnish(h: &Harness, args: &[&str]) -> Output {
    omnish_on(h.home.path(), &h.data(), args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "status {:?}; stdout: {}; stderr: {}",
        o.status,
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

fn json(o: Output) -> Value {
    serde_json::from_str(&ok(o)).expect("a JSON document")
}

fn name(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// An ended session written through the store API: `id`, one command, a stream of `bytes`.
fn ended_session(data: &Path, id: &str, bytes: usize) -> PathBuf {
    let dir = store::sessions_dir(data).join(id);
    store::create_private_dir(&dir).unwrap();
    let meta = serde_json::json!({
        "id": id, "shell": "/bin/bash", "argv": ["bash"], "pid": 1, "recorder_pid": 1,
        "hostname": "h", "cwd": "/", "started_at": 1_600_000_000_000u64,
        "ended_at": 1_600_000_001_000u64, "exit_status": 0, "omnish_version": "0",
        "state": "exited", "cols": 80, "rows": 24, "hooked": true
    });
    store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
    let mut w = store::StreamWriter::create(&dir.join(store::STREAM)).unwrap();
    w.write(1_600_000_000_500, store::OUTPUT, &vec![b'x'; bytes])
        .unwrap();
    w.flush().unwrap();
    dir
}

#[test]
fn list_show_and_status_of_a_live_shell() {
    let mut h = Harness::bash(&[]);
    h.run("echo one");
    h.run("false");
    h.run("printf 'a\\nerror: boom\\nz\\n'");
    let id = name(&h.session_dir());
    let suffix = id.rsplit('-').next().unwrap().to_string();

    let list = json(omnish(&h, &["sessions", "list", "--format", "json"]));
    let s = &list["sessions"][0];
    assert_eq!(s["session_id"], id.as_str());
    assert_eq!(s["state"], "running");
    assert_eq!(s["recorder_alive"], true);
    assert_eq!(s["commands"], 3);
    assert_eq!(s["failed"], 1);
    assert!(s["bytes"].as_u64().unwrap() > 0);
    let text = ok(omnish(&h, &["sessions", "list"]));
    assert!(text.contains(&id) && text.contains("running"), "{text}");

    // By random suffix, and by a prefix of it.
    for given in [suffix.as_str(), &suffix[..3], &id[..10]] {
        let show = ok(omnish(&h, &["sessions", "show", given]));
        assert!(show.contains(&format!("session  {id}")), "{show}");
        assert!(
            show.contains("$ false") && show.contains("exit 1"),
            "{show}"
        );
        // The one-line summary of a command is its first error line.
        assert!(show.contains("      error: boom"), "{show}");
    }
    let show = json(omnish(
        &h,
        &["sessions", "show", &suffix, "--format", "json"],
    ));
    let cmds = show["command_list"].as_array().unwrap();
    assert_eq!(cmds.len(), 3);
    assert_eq!(cmds[2]["output_lines"], 3);
    assert_eq!(cmds[2]["summary"], "error: boom");
    assert_eq!(cmds[1]["exit_code"], 1);
    // context --session takes the suffix too.
    let ctx = ok(omnish(&h, &["context", "--session", &suffix, "--last"]));
    assert!(ctx.contains("error: boom"), "{ctx}");
    let bad = omnish(&h, &["sessions", "show", "zzzz"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("no session 'zzzz'"),
        "{}",
        stderr(&bad)
    );
    // `all` is no one session.
    let all = omnish(&h, &["sessions", "show", "all"]);
    assert_eq!(all.status.code(), Some(2), "{}", stderr(&all));
    assert!(stderr(&all).starts_with("omnish: ID: 'all' names every session"));

    // Status from inside the recorded shell, then from outside.
    let st = h.home.path().join("st.json");
    h.run(&format!(
        "{} status --format json > {}",
        omnish_bin(),
        st.display()
    ));
    let inside: Value = serde_json::from_str(&std::fs::read_to_string(&st).unwrap()).unwrap();
    assert_eq!(inside["recorded"], true);
    assert_eq!(inside["session"]["session_id"], id.as_str());
    assert_eq!(inside["session"]["recorder_alive"], true);
    assert_eq!(inside["session"]["hooks_active"], true);
    // Three finished, and `status` itself once the recorder's writer thread has put it in
    // meta.json (it may not have yet: the terminal never waits for the disk).
    let commands = inside["session"]["commands"].as_u64();
    assert!(matches!(commands, Some(3 | 4)), "{inside}");
    assert!(inside["data_bytes"].as_u64().unwrap() > 0);
    h.run(&format!("{} status > {}", omnish_bin(), st.display()));
    let text = std::fs::read_to_string(&st).unwrap();
    assert!(
        text.contains(&format!("session   {id} (running)")),
        "{text}"
    );
    assert!(text.contains("recorder  running"), "{text}");
    let outside = ok(omnish(&h, &["status"]));
    assert!(outside.contains("not recorded"), "{outside}");
    assert!(
        outside.contains(&h.data().display().to_string()),
        "{outside}"
    );
    let outside = json(omnish(&h, &["status", "--format", "json"]));
    assert_eq!(outside["recorded"], false);
    assert_eq!(outside["session"], Value::Null);

    // The same command failing again and again is a loop, which status shows.
    assert_eq!(inside["retry_loop"], Value::Null);
    for _ in 0..3 {
        h.run("ls /nope-loop");
    }
    h.run(&format!(
        "{} status --format json > {}",
        omnish_bin(),
        st.display()
    ));
    let looping: Value = serde_json::from_str(&std::fs::read_to_string(&st).unwrap()).unwrap();
    assert_eq!(looping["retry_loop"]["failures"], 3, "{looping}");
    assert_eq!(looping["retry_loop"]["same_error"], true, "{looping}");
    // That status succeeded, which ended the loop; fail three times again for the text.
    for _ in 0..3 {
        h.run("ls /nope-loop");
    }
    h.run(&format!("{} status > {}", omnish_bin(), st.display()));
    let text = std::fs::read_to_string(&st).unwrap();
    assert!(
        text.contains("loop      `ls /nope-loop` failed 3 times in a row with the same error"),
        "{text}"
    );

    // After the shell ends the session is exited; a killed recorder's session is interrupted.
    h.type_line("exit");
    h.wait_exit();
    let list = json(omnish(&h, &["sessions", "list", "--format", "json"]));
    assert_eq!(list["sessions"][0]["state"], "exited");
    let dir = h.session_dir();
    let mut meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(store::META)).unwrap()).unwrap();
    meta["state"] = "running".into();
    meta["recorder_pid"] = u32::MAX.into();
    store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
    let list = json(omnish(&h, &["sessions", "list", "--format", "json"]));
    assert_eq!(list["sessions"][0]["state"], "interrupted");
}

#[test]
fn rm_and_prune_never_remove_a_live_session() {
    let mut h = Harness::bash(&[]);
    h.run("echo live");
    let live = h.session_dir();
    let suffix = name(&live).rsplit('-').next().unwrap().to_string();
    let old: Vec<PathBuf> = (1..=3)
        .map(|i| ended_session(&h.data(), &format!("20991122T00000{i}.000Z-0{i}aa"), 50_000))
        .collect();

    let out = omnish(&h, &["sessions", "rm", &suffix]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("recorder is running"),
        "{}",
        stderr(&out)
    );
    assert!(live.join(store::META).exists());

    // Keeping 1 of 4 would remove 3, but the oldest is live: 2 go.
    let dry = ok(omnish(
        &h,
        &["sessions", "prune", "--keep", "1", "--dry-run"],
    ));
    assert_eq!(dry.matches("would remove").count(), 2, "{dry}");
    assert!(!dry.contains(&name(&old[2])), "{dry}");
    assert!(!dry.contains(&name(&live)), "{dry}");
    assert!(old.iter().all(|d| d.exists()), "a dry run removes nothing");

    let out = ok(omnish(&h, &["sessions", "prune", "--max-size", "200K"]));
    // 3 x ~56 KiB and the live session (~76 KiB): the oldest go until at most 200 KiB remain;
    // the live session, the oldest of all, is never one of them.
    assert!(out.contains("removed 20991122T000001"), "{out}");
    assert!(out.contains("freed"), "{out}");
    assert!(!old[0].exists() && old[2].exists(), "{out}");
    assert!(live.exists());
    let out = ok(omnish(&h, &["sessions", "prune", "--keep", "0"]));
    assert!(!out.contains(&name(&live)), "{out}");
    assert!(old.iter().all(|d| !d.exists()), "{out}");
    assert!(live.join(store::META).exists());

    h.type_line("exit");
    h.wait_exit();
    let out = ok(omnish(&h, &["sessions", "rm", &suffix]));
    assert!(out.contains(&format!("removed {}", name(&live))), "{out}");
    assert!(!live.exists());
    let left: Vec<String> = std::fs::read_dir(store::sessions_dir(&h.data()))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.iter().all(|n| n == ".lock"), "{left:?}");
    let out = omnish(&h, &["sessions", "prune", "--max-size", "lots"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// strace delaying every rename of the program it runs by `micros` (so the recorder's first
/// `meta.json` comes late), or None when it cannot be had (a failure in CI).
fn strace_delaying_renames(micros: u64) -> Option<Vec<String>> {
    let works = have("strace")
        && Command::new("strace")
            .args(["-f", "-qq", "-o", "/dev/null", "true"])
            .status()
            .is_ok_and(|s| s.success());
    if !works {
        skip("strace is missing or not permitted");
        return None;
    }
    let set = "rename,renameat,renameat2";
    Some(
        [
            "strace",
            "-f",
            "-qq",
            "--seccomp-bpf",
            "-o",
            "/dev/null",
            "-e",
            &format!("trace={set}"),
            "-e",
            &format!("inject={set}:delay_enter={micros}"),
        ]
        .map(String::from)
        .to_vec(),
    )
}

/// `[wrapper...] omnish wrap bash -c SCRIPT` with no terminal, on `data`.
fn wrap_script(home: &Path, data: &Path, wrapper: &[String], script: &str) -> Output {
    let mut cmd = match wrapper.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(omnish_bin());
            c
        }
        None => Command::new(omnish_bin()),
    };
    cmd.args(["wrap", "bash", "-c", script])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", home)
        .env("OMNISH_DATA_DIR", data)
        .current_dir(home);
    run_piped(cmd, "")
}

#[test]
fn prune_racing_starting_sessions_never_takes_their_directory() {
    let home = home_with(&[]);
    let data = home.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let pruner = {
        let (stop, home, data) = (Arc::clone(&stop), home.path().to_path_buf(), data.clone());
        std::thread::spawn(move || {
            let mut runs = 0;
            while !stop.load(Ordering::Relaxed) {
                let out = omnish_on(&home, &data, &["sessions", "prune", "--keep", "0"]);
                assert!(out.status.success(), "{}", stderr(&out));
                runs += 1;
            }
            runs
        })
    };
    // Each recorder checks, while it runs, that its directory and files are there; the pruner
    // removes every session the moment its recorder ends.
    let check = "test -s \"$OMNISH_SESSION_DIR/meta.json\" && test -f \"$OMNISH_SESSION_DIR/stream.bin\" && echo RECORDED-OK";
    let recorded = |out: &Output| {
        assert!(
            stdout(out).contains("RECORDED-OK"),
            "stdout: {}; stderr: {}",
            stdout(out),
            stderr(out)
        );
        assert!(
            !stderr(out).contains("recording stopped"),
            "{}",
            stderr(out)
        );
    };
    for _ in 0..12 {
        recorded(&wrap_script(
            home.path(),
            &data,
            &[],
            &format!("sleep 0.1; {check}"),
        ));
    }
    // A recorder whose disk is slow: its first meta.json comes a second after its directory and
    // stream.bin, a second in which the pruner must not take the half-made session.
    if let Some(strace) = strace_delaying_renames(1_000_000) {
        recorded(&wrap_script(
            home.path(),
            &data,
            &strace,
            &format!("sleep 2.5; {check}"),
        ));
    }
    // An interactive shell started during the race records its commands.
    let mut h = Harness::start_with(
        &["bash"],
        &[(".bashrc", "PS1='READY> '\n")],
        &[("OMNISH_DATA_DIR", data.to_str().unwrap())],
    );
    h.wait_prompts(1);
    // Its own: the one live session (older ones may still be on their way out).
    let mut mine = None;
    h.wait_until("the live session", || {
        mine = store::list_sessions(&data).unwrap().into_iter().find(|d| {
            store::open_session(d)
                .ok()
                .flatten()
                .is_some_and(|s| s.live())
        });
        mine.is_some()
    });
    let mine = mine.unwrap();
    h.type_line("echo still-recorded");
    h.wait_screen("still-recorded\r\n");
    stop.store(true, Ordering::Relaxed);
    let runs = pruner.join().unwrap();
    assert!(runs > 1, "the pruner ran during the race ({runs} runs)");
    h.wait_until("its record", || {
        !store::read_commands(&mine).unwrap().is_empty()
    });
    let recs = store::read_commands(&mine).unwrap();
    assert_eq!(recs[0].command_line, "echo still-recorded");
    // One last prune after the race: every ended session goes, the live one stays.
    ok(omnish_on(
        home.path(),
        &data,
        &["sessions", "prune", "--keep", "0"],
    ));
    assert_eq!(store::list_sessions(&data).unwrap(), vec![mine]);
}

#[test]
fn a_starting_shell_prunes_old_sessions_in_the_background() {
    let home = home_with(&[(".bashrc", "PS1='READY> '\n")]);
    let data = home.path().join("data");
    // 105 ended sessions older than the one about to start: the default keeps 100 sessions.
    let old: Vec<PathBuf> = (0..105)
        .map(|i| ended_session(&data, &format!("20200101T000{i:03}.000Z-{i:04x}"), 100))
        .collect();
    let mut h = Harness::start_with(
        &["bash"],
        &[(".bashrc", "PS1='READY> '\n")],
        &[("OMNISH_DATA_DIR", data.to_str().unwrap())],
    );
    h.wait_prompts(1);
    h.wait_until("the prune to finish", || {
        store::list_sessions(&data).unwrap().len() == 100
    });
    assert!(old[..6].iter().all(|d| !d.exists()), "the oldest six went");
    assert!(old[6..].iter().all(|d| d.exists()));
    let newest = store::list_sessions(&data).unwrap().pop().unwrap();
    assert!(!name(&newest).starts_with("2020"), "the new session stays");
    h.type_line("echo after-prune");
    h.wait_screen("after-prune\r\n");
    drop(home);
}

#[test]
fn search_finds_rendered_output_and_command_lines_in_a_live_session() {
    let mut h = Harness::bash(&[]);
    h.run("printf 'alpha\\nbeta\\nneedle-1\\ngamma\\ndelta\\nomega\\n'");
    h.run("echo other");
    let id = name(&h.session_dir());
    let out = ok(omnish(&h, &["search", "needle"]));
    assert!(out.contains(&format!("{id} #1")), "{out}");
    // Two lines of context on each side, numbered like grep.
    assert!(
        out.contains("1-alpha\n2-beta\n3:needle-1\n4-gamma\n5-delta\n"),
        "{out}"
    );
    assert!(!out.contains("6-omega"), "{out}");
    assert!(!out.contains('\x1b'), "no colours off a terminal: {out}");
    let out = ok(omnish(&h, &["search", "-C", "0", "needle"]));
    assert!(
        out.contains("3:needle-1\n") && !out.contains("2-beta"),
        "{out}"
    );

    // On a terminal (here: inside the recorded shell), matches are highlighted, and the search
    // does not find itself running.
    h.run(&format!("{} search -C 0 needle-1", omnish_bin()));
    let screen = h.screen();
    assert!(screen.contains("\x1b[1;31mneedle-1\x1b[0m"), "{screen}");
    assert_eq!(screen.matches("search -C 0 ").count(), 1, "{screen}");

    // Later commands are found too, the newest (not cached yet) and one still running.
    h.run("printf 'x\\nneedle-2\\n'; false");
    let out = ok(omnish(&h, &["search", "needle-[0-9]"]));
    assert!(
        out.contains("needle-1") && out.contains("needle-2"),
        "{out}"
    );
    assert!(out.contains("exit 1"), "{out}");
    h.type_line("echo needle-3; sleep 30");
    h.wait_screen("needle-3\r\n");
    let out = ok(omnish(&h, &["search", "needle-3"]));
    assert!(
        out.contains("running") && out.contains("1:needle-3"),
        "{out}"
    );
    let cache = h.session_dir().join("cache");
    assert!(
        std::fs::read_dir(&cache).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".txt")),
        "a text cache was made"
    );

    // Options.
    let failed = ok(omnish(&h, &["search", "--failed", "needle"]));
    assert!(
        failed.contains("needle-2") && !failed.contains("needle-1"),
        "{failed}"
    );
    let ci = ok(omnish(&h, &["search", "-i", "NEEDLE-1"]));
    assert!(ci.contains("3:needle-1"), "{ci}");
    assert_eq!(omnish(&h, &["search", "NEEDLE-1"]).status.code(), Some(1));
    let fixed = omnish(&h, &["search", "-F", "needle-[0-9]"]);
    assert_eq!(fixed.status.code(), Some(1), "{}", stdout(&fixed));
    let cmds = ok(omnish(&h, &["search", "--commands", "sleep"]));
    assert!(cmds.contains("$ echo needle-3; sleep 30"), "{cmds}");
    assert!(!cmds.contains("1:needle-3"), "{cmds}");
    // A whole output line, never a command line.
    ok(omnish(&h, &["search", "^needle-1$"]));
    assert_eq!(
        omnish(&h, &["search", "--commands", "^needle-1$"])
            .status
            .code(),
        Some(1)
    );
    ok(omnish(&h, &["search", "--since", "1h", "needle-1"]));
    // A second after the newest finished command started (the running one holds no needle-1).
    let newest = h.records().iter().map(|r| r.started_at).max().unwrap();
    wait_clock_past(newest + 1000);
    let since = omnish(&h, &["search", "--since", "1s", "needle-1"]);
    assert_eq!(since.status.code(), Some(1), "{}", stdout(&since));
    let suffix = id.rsplit('-').next().unwrap();
    ok(omnish(&h, &["search", "--session", suffix, "needle-1"]));
    // --here: the commands ran in HOME (no git work tree: the directory itself counts).
    ok(omnish(&h, &["search", "--here", "needle-1"]));
    let elsewhere = h.home.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let out = run_piped(
        {
            let mut c = Command::new(omnish_bin());
            c.args(["search", "--here", "needle-1"])
                .env_clear()
                .env("PATH", std::env::var("PATH").unwrap())
                .env("OMNISH_DATA_DIR", h.data())
                .current_dir(&elsewhere);
            c
        },
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let bad = omnish(&h, &["search", "("]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("invalid regular expression"),
        "{}",
        stderr(&bad)
    );
    assert_eq!(
        omnish(&h, &["search", "nothing-like-this"]).status.code(),
        Some(1)
    );

    let doc = json(omnish(&h, &["search", "--format", "json", "needle-1"]));
    let hit = &doc["hits"][0];
    assert_eq!(hit["session_id"], id.as_str());
    assert_eq!(hit["seq"], 1);
    assert_eq!(hit["exit_code"], 0);
    let lines = hit["lines"].as_array().unwrap();
    let matched: Vec<&Value> = lines.iter().filter(|l| l["match"] == true).collect();
    assert_eq!(matched.len(), 1);
    assert_eq!(matched[0]["line"], 3);
    assert_eq!(matched[0]["text"], "needle-1");
    assert_eq!(matched[0]["ranges"][0], serde_json::json!([0, 8]));
    assert_eq!(lines.len(), 5);
}

#[test]
fn search_sees_what_context_shows_not_the_raw_bytes() {
    let mut h = Harness::bash(&[]);
    // A progress line redrawn with a carriage return, colours, and a secret.
    // (The command line spells neither word, so only output can match.)
    h.run("p=prog r=red; printf \"${p}ress 10%%\\r${p}ress 100%%\\n\\033[31m$r-word\\033[0m\\n\"");
    h.run("echo token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB");
    assert_eq!(
        omnish(&h, &["search", "progress 10%"]).status.code(),
        Some(1)
    );
    let out = ok(omnish(&h, &["search", "progress 100%"]));
    assert!(out.contains("1:progress 100%"), "{out}");
    let out = ok(omnish(&h, &["search", "-C", "0", "red-word"]));
    assert!(out.contains("2:red-word\n"), "{out}");
    // A secret is searched as it is shown: redacted.
    assert_eq!(omnish(&h, &["search", "ghp_abcdef"]).status.code(), Some(1));
    let out = ok(omnish(&h, &["search", "REDACTED:github"]));
    assert!(out.contains("1:token [REDACTED:github-token]"), "{out}");
    // The newest command of a live session is rendered at each search; once the session ends
    // it is served from the cache, and says the same, context lines, numbers and groups.
    h.run("printf 'm1\\nx\\ny\\nz\\nm2\\nm3\\n'");
    let searches: [&[&str]; 4] = [
        &["search", "-C", "5", "red-word|token"],
        &["search", "-C", "0", "^m[0-9]$"],
        &["search", "-C", "1", "^m[0-9]$"],
        &["search", "-C", "2", "^m[0-9]$"],
    ];
    let live: Vec<String> = searches.iter().map(|a| ok(omnish(&h, a))).collect();
    assert!(
        live[0].contains("1-progress 100%\n2:red-word\n"),
        "{}",
        live[0]
    );
    assert!(live[1].contains("1:m1\n5:m2\n6:m3\n"), "{}", live[1]);
    assert!(
        live[2].contains("1:m1\n2-x\n--\n4-z\n5:m2\n6:m3\n"),
        "{}",
        live[2]
    );
    assert!(
        live[3].contains("1:m1\n2-x\n3-y\n4-z\n5:m2\n"),
        "{}",
        live[3]
    );
    h.type_line("exit");
    h.wait_exit();
    let cached: Vec<String> = searches.iter().map(|a| ok(omnish(&h, a))).collect();
    assert_eq!(live, cached);
    let text = std::fs::read_to_string(
        std::fs::read_dir(h.session_dir().join("cache"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "txt"))
            .unwrap(),
    )
    .unwrap();
    assert!(text.contains("token [REDACTED:github-token]\n"), "{text}");
    assert!(!text.contains("ghp_"), "the cache holds no secret");
}

#[test]
fn search_covers_every_session_oldest_first() {
    let home = home_with(&[]);
    let data = home.path().join("data");
    let data_env = data.to_str().unwrap().to_string();
    for word in ["first", "second", "third"] {
        let mut h = Harness::start_with(
            &["bash"],
            &[(".bashrc", "PS1='READY> '\n")],
            &[("OMNISH_DATA_DIR", &data_env)],
        );
        h.wait_prompts(1);
        // (The harness's own record helpers read its own data dir, not this shared one.)
        h.type_line(&format!("w={word}; echo \"hay-$w\""));
        h.wait_screen(&format!("hay-{word}\r\n"));
        h.wait_prompts(2);
        h.type_line("exit");
        h.wait_exit();
    }
    let out = ok(omnish_on(
        home.path(),
        &data,
        &["search", "-C", "0", "^hay-"],
    ));
    let at = |w: &str| out.find(&format!("1:hay-{w}")).unwrap_or(usize::MAX);
    assert!(
        at("first") < at("second") && at("second") < at("third") && at("third") < usize::MAX,
        "{out}"
    );
    // Every session got its cache, and a second search says the same.
    for dir in store::list_sessions(&data).unwrap() {
        assert!(dir.join("cache").exists(), "{}", dir.display());
    }
    assert_eq!(
        out,
        ok(omnish_on(
            home.path(),
            &data,
            &["search", "-C", "0", "^hay-"]
        ))
    );
    let current = ok(omnish_on(
        home.path(),
        &data,
        &["search", "--session", "current", "^hay-"],
    ));
    assert!(
        current.contains("hay-third") && !current.contains("hay-first"),
        "{current}"
    );
}
