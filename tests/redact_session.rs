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
    h.run("source app.env && echo token is $APP_API_TOKEN");
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
                out.contains("token is [REDACTED:session-secret]"),
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
    assert!(out.contains("token is [REDACTED:session-secret]"), "{out}");
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
