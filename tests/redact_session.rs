//! Session-aware redaction through a real wrapped bash: a password typed once (in an `export`, a
//! password flag or an env file) is redacted wherever the session prints it later, in every
//! format, whether the command that taught it is shown or not.

mod common;

use common::*;

// Fake secrets, built at run time so that no literal secret sits in the source.
fn db_password() -> String {
    ["S3cr3t", "-Pa55", "w0rd!x"].concat()
}
fn api_token() -> String {
    ["q7Zx", "Lm2Vn8", "Rt4Ws6Kp"].concat()
}
fn mysql_password() -> String {
    ["My", "Sq1", "-pw-77aa"].concat()
}

fn session() -> Harness {
    let mut h = Harness::bash(&[("app.env", &format!("APP_API_TOKEN={}\n", api_token()))]);
    h.run(&format!("export DB_PASSWORD='{}'", db_password()));
    h.run("printenv DB_PASSWORD");
    h.run("echo \"connecting with $DB_PASSWORD now\"");
    h.run("cat app.env");
    h.run(&format!(
        "echo mysql -uroot -p{} -h db.local >> cmds.log",
        mysql_password()
    ));
    h.run("cat cmds.log | tr -d ' ' ; echo");
    h.run("source app.env && echo got $APP_API_TOKEN back");
    h.run("echo done-with-secrets");
    h
}

/// Neither secret, nor the shell-visible variants, survive; the text around them does.
fn assert_clean(out: &str, what: &str) {
    for s in [db_password(), api_token(), mysql_password()] {
        assert!(!out.contains(&s), "{what}: {s} leaked:\n{out}");
    }
    assert!(out.contains("done-with-secrets"), "{what}:\n{out}");
}

#[test]
fn a_password_typed_once_is_redacted_wherever_it_is_printed_later() {
    let h = session();
    for format in ["text", "markdown", "json"] {
        for extra in [
            &[][..],
            &["--max-lines", "0"][..],
            &["--budget", "2000"][..],
        ] {
            let mut args = vec!["--recent", "20", "--format", format];
            args.extend_from_slice(extra);
            let out = ok_stdout(h.context(&args));
            let what = format!("{format} {extra:?}");
            assert_clean(&out, &what);
            // The export itself: the detector; its value in later output: learned.
            assert!(
                out.contains("DB_PASSWORD='[REDACTED:assignment]'"),
                "{what}:\n{out}"
            );
            assert!(
                out.contains("connecting with [REDACTED:session-secret] now"),
                "{what}:\n{out}"
            );
            assert!(
                out.contains("got [REDACTED:session-secret] back"),
                "{what}:\n{out}"
            );
            assert!(
                out.contains("APP_API_TOKEN=[REDACTED:assignment]"),
                "{what}:\n{out}"
            );
            assert!(out.contains("-p[REDACTED:password-flag]"), "{what}:\n{out}");
            if format == "json" {
                let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                let cmds = v["commands"].as_array().unwrap();
                let printenv = cmds
                    .iter()
                    .find(|c| c["command_line"] == "printenv DB_PASSWORD")
                    .unwrap_or_else(|| panic!("{out}"));
                assert_eq!(
                    printenv["output"],
                    serde_json::json!("[REDACTED:session-secret]"),
                    "{out}"
                );
            } else {
                assert!(
                    out.contains("$ printenv DB_PASSWORD\n[REDACTED:session-secret]\n"),
                    "{what}:\n{out}"
                );
            }
        }
    }
}

#[test]
fn learning_reaches_back_before_the_commands_shown() {
    let h = session();
    // Only the newest five commands: the export and the password flag are not shown, but the
    // session's earlier command lines still teach their values.
    let out = ok_stdout(h.context(&["--recent", "5"]));
    assert!(!out.contains("export DB_PASSWORD"), "{out}");
    assert!(!out.contains(&db_password()), "{out}");
    assert!(!out.contains(&mysql_password()), "{out}");
    assert!(
        out.contains("-p[REDACTED:session-secret]-hdb.local"),
        "{out}"
    );
    // The token was only ever printed by `cat app.env`, an output not shown with `--recent 2`:
    // the short outputs of recent commands are learned too.
    let out = ok_stdout(h.context(&["--recent", "2"]));
    assert!(!out.contains("cat app.env"), "{out}");
    assert!(!out.contains(&api_token()), "{out}");
    assert!(out.contains("got [REDACTED:session-secret] back"), "{out}");
    // One command: the command shown teaches nothing, the history does.
    let out = ok_stdout(h.context(&["--grep", "printenv"]));
    assert!(
        out.contains("$ printenv DB_PASSWORD\n[REDACTED:session-secret]"),
        "{out}"
    );
    // Without redaction everything is there: the test above can fail.
    let raw = ok_stdout(h.context(&["--recent", "20", "--no-redact"]));
    assert!(raw.contains(&db_password()), "{raw}");
    assert!(raw.contains(&api_token()), "{raw}");
}

#[test]
fn values_that_are_not_secrets_are_not_learned() {
    let mut h = Harness::bash(&[]);
    // Short or common values are not learned (they would black out ordinary text).
    h.run("export DB_PASSWORD=postgres API_TOKEN=changeme");
    h.run("echo postgres changeme postgres-data");
    let out = ok_stdout(h.context(&["--recent", "5"]));
    assert!(out.contains("\npostgres changeme postgres-data\n"), "{out}");
    assert!(out.contains("DB_PASSWORD=[REDACTED:assignment]"), "{out}");
}

/// The learned values a session keeps beside it (`cache/learned.bin`): how much of
/// commands.jsonl they cover, and how many.
fn learned_cache(dir: &std::path::Path) -> Option<(u64, Vec<String>)> {
    let bytes = std::fs::read(dir.join("cache").join("learned.bin")).ok()?;
    let (_key, value): (u32, (u64, Vec<String>)) = rmp_serde::from_slice(&bytes).ok()?;
    Some(value)
}

#[test]
fn learning_is_kept_and_grows_with_what_is_appended() {
    let mut h = session();
    let dir = h.session_dir();
    assert!(learned_cache(&dir).is_none());
    let out = ok_stdout(h.context(&["--recent", "1"]));
    assert!(out.contains("done-with-secrets"), "{out}");
    let (covered, values) = learned_cache(&dir).expect("the cache, after a context call");
    let len = std::fs::metadata(dir.join("commands.jsonl")).unwrap().len();
    assert_eq!(covered, len);
    assert!(values.contains(&db_password()), "{values:?}");
    // A value typed later is learned from the records appended since, and kept.
    let later = ["L4ter", "-Secr3t", "-v4lue"].concat();
    h.run(&format!("export LATER_TOKEN={later}"));
    h.run("echo \"then $LATER_TOKEN again\"");
    h.run("echo last");
    let out = ok_stdout(h.context(&["--recent", "1"]));
    assert!(out.contains("last"), "{out}");
    let (covered2, values2) = learned_cache(&dir).unwrap();
    assert!(covered2 > covered);
    assert!(values2.contains(&later), "{values2:?}");
    assert!(values2.starts_with(&values), "kept, in order");
    let out = ok_stdout(h.context(&["--recent", "2"]));
    assert!(
        out.contains("then [REDACTED:session-secret] again"),
        "{out}"
    );
    // forget drops what was learned with the rest of the caches.
    let forget = std::process::Command::new(omnish_bin())
        .args(["forget", "--secret", &later])
        .env("OMNISH_DATA_DIR", h.data())
        .env_remove("OMNISH_SESSION_ID")
        .output()
        .unwrap();
    assert!(forget.status.success(), "{forget:?}");
    assert!(learned_cache(&dir).is_none());
}

#[test]
fn a_value_learned_in_one_session_protects_another() {
    let h = session();
    // Learned in the first session (a context call on it keeps what it taught).
    ok_stdout(h.context(&["--recent", "3"]));
    a_second_session_prints_the_password(&h);
}

/// A session nobody asked about teaches too: the first call about another session learns from
/// it (and keeps what it taught beside it).
#[test]
fn a_session_nobody_asked_about_protects_another() {
    let h = session();
    let first = h.session_dir();
    assert!(!first.join("cache").join("learned.bin").exists());
    a_second_session_prints_the_password(&h);
    let (_, values) = learned_cache(&first).expect("the first session's cache, started");
    assert!(values.contains(&db_password()), "{values:?}");
}

/// A second session, in the same store as `h`'s, prints the password with nothing in it to
/// teach it; `context` on it shows the password redacted.
fn a_second_session_prints_the_password(h: &Harness) {
    // A second session, in the same store, prints the password with nothing to teach it.
    let mut second = std::process::Command::new(omnish_bin());
    second
        .args([
            "wrap",
            "bash",
            "-c",
            &format!("echo leaked {} here", db_password()),
        ])
        .env("OMNISH_DATA_DIR", h.data())
        .env("HOME", h.home.path())
        .env_remove("OMNISH_SESSION_ID")
        .env_remove("OMNISH_RUNTIME_DIR");
    assert!(run_piped(second, "").status.success());
    let sessions = sessions_in(&h.data());
    assert_eq!(sessions.len(), 2);
    let second = sessions
        .iter()
        .find(|d| omnish::store::read_meta(d).is_ok_and(|m| m.argv.len() == 3))
        .expect("the bash -c session");
    let second_id = omnish::store::dir_id(second);
    let out = ok_stdout(h.context(&["--session", &second_id, "--recent", "1"]));
    assert!(out.contains("leaked"), "{out}");
    assert!(!out.contains(&db_password()), "{out}");
    assert!(
        out.contains("leaked [REDACTED:session-secret] here"),
        "{out}"
    );
}
