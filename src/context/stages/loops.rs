//! Loops: what has been tried. A run of failed attempts at the same thing becomes one entry.
//!
//! After exact repeats are folded ([`crate::context::stages::truncate::fold_repeats_with`]), consecutive
//! commands of one session form a *loop* when each failed (a known non-zero exit status) and
//! each has the command line of an earlier attempt in the loop, or the same output (the hash of
//! its whole rendered output) as the attempt before it. A loop of at least `threshold` failed attempts
//! (each repeat counts) is folded into its last attempt, shown whole, with a [`LoopInfo`]:
//!
//! * the same error every time: `[failed 5 times in a row with the same error since 14:02]`;
//! * edit and retry (the output changed between attempts): `[failed 4 times in a row since
//!   14:02; earlier attempts:]` followed by one line per earlier attempt, with its time, exit
//!   status, command line when it differed, and its first error line.
//!
//! A success ends a loop, and so does any command in between (one a selection left out
//! too); running commands never join one, nor do private commands (their lines were never
//! recorded: nothing says two of them are the same thing), nor the command that ended the
//! shell (`exit` carries the status of the failure before it, it is no attempt of its own). [`active`] tells whether a session's
//! newest commands form a loop right now (for `omnish status` and the MCP server).

use std::path::Path;

use anyhow::Result;

use crate::context::model::{Attempt, CommandContext, LoopInfo};
use crate::context::{stages::read, stages::redact, stages::select, stages::truncate};

/// Failed attempts that make a loop, unless configured (`loops.threshold`).
pub(crate) const DEFAULT_THRESHOLD: usize = 3;

/// How loops are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LoopSettings {
    /// Failed attempts in a row that make a loop; 0 turns loop folding off.
    pub threshold: usize,
    /// Local time's offset from UTC in seconds, for the clock times shown.
    pub utc_offset_secs: i64,
}

impl Default for LoopSettings {
    fn default() -> Self {
        LoopSettings {
            threshold: DEFAULT_THRESHOLD,
            utc_offset_secs: 0,
        }
    }
}

fn failed(c: &CommandContext) -> bool {
    !c.running
        && !c.recording_stopped
        && !c.ended_shell
        && matches!(c.exit_code, Some(code) if code != 0)
}

/// Whether `b` continues the loop `run` (failed attempts, oldest first): it failed too, right
/// after the last attempt in the same session (a selection that left commands out between
/// them is no loop), with a command line of the run or the same output as the last attempt.
fn continues<T>(run: &[(CommandContext, T)], b: &CommandContext) -> bool {
    let Some((a, _)) = run.last() else {
        return false;
    };
    failed(b)
        && !a.private
        && !b.private
        && a.session_id == b.session_id
        && b.first_seq() == a.seq + 1
        && ((a.output_hash != 0 && a.output_hash == b.output_hash)
            || run
                .iter()
                .any(|(c, _)| !c.private && c.command_line == b.command_line))
}

/// `14:02` (local time by `offset`), with the date in front when it is not the day of `now`.
pub(crate) fn clock(ms: u64, offset_secs: i64, now_ms: u64) -> String {
    let local = |t: u64| (t / 1000) as i64 + offset_secs;
    let secs = local(ms);
    let day = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    let hm = format!("{:02}:{:02}", of_day / 3600, (of_day % 3600) / 60);
    if day == local(now_ms).div_euclid(86_400) {
        return hm;
    }
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs((day * 86_400).max(0) as u64);
    let date = humantime::format_rfc3339_seconds(t).to_string();
    format!("{} {hm}", &date[..10])
}

/// Folds loops of at least `settings.threshold` failed attempts into their last attempt (see
/// the module docs). Each entry carries something of the caller's; a folded entry keeps the
/// last attempt's.
pub(crate) fn fold<T>(
    cmds: Vec<(CommandContext, T)>,
    settings: &LoopSettings,
    now_ms: u64,
) -> Vec<(CommandContext, T)> {
    if settings.threshold == 0 {
        return cmds;
    }
    let mut out: Vec<(CommandContext, T)> = Vec::with_capacity(cmds.len());
    let mut run: Vec<(CommandContext, T)> = Vec::new();
    let flush = |run: &mut Vec<(CommandContext, T)>, out: &mut Vec<(CommandContext, T)>| {
        let failures: usize = run.iter().map(|(c, _)| c.repeat).sum();
        if run.is_empty() {
            return;
        }
        if failures < settings.threshold {
            out.append(run);
            return;
        }
        let (mut last, extra) = run.pop().expect("non-empty");
        let first = run.first().map_or(&last, |(c, _)| c);
        let since = first.first_started_at();
        let same_error =
            last.output_hash != 0 && run.iter().all(|(c, _)| c.output_hash == last.output_hash);
        let same_command = run.iter().all(|(c, _)| c.command_line == last.command_line);
        let earlier = if same_error && same_command {
            Vec::new()
        } else {
            run.iter()
                .map(|(c, _)| attempt(c, &last, settings, now_ms))
                .collect()
        };
        last.attempts = Some(LoopInfo {
            failures,
            since,
            since_clock: clock(since, settings.utc_offset_secs, now_ms),
            same_error,
            same_command,
            earlier,
        });
        // The loop note carries the count.
        last.repeat = 1;
        run.clear();
        out.push((last, extra));
    };
    for (c, extra) in cmds {
        if !run.is_empty() && !continues(&run, &c) {
            flush(&mut run, &mut out);
        }
        if failed(&c) {
            run.push((c, extra));
        } else {
            flush(&mut run, &mut out);
            out.push((c, extra));
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Widest first error line kept for an earlier attempt.
const ATTEMPT_WIDTH: usize = 160;

fn attempt(c: &CommandContext, last: &CommandContext, s: &LoopSettings, now_ms: u64) -> Attempt {
    let first_error = c
        .output
        .iter()
        .find(|l| truncate::is_error_line(l))
        .or_else(|| c.output.iter().rev().find(|l| !l.trim().is_empty()))
        .map(|l| truncate::shorten(l.trim(), 0, "", ATTEMPT_WIDTH));
    Attempt {
        seq: c.seq,
        started_at: c.first_started_at(),
        clock: clock(c.first_started_at(), s.utc_offset_secs, now_ms),
        command_line: (c.command_line != last.command_line).then(|| c.command_line.clone()),
        exit_code: c.exit_code,
        repeat: c.repeat,
        first_error,
    }
}

/// A loop going on at the end of a session.
// Read by `omnish status` and the MCP server (built on other branches) and by the tests.
#[allow(dead_code)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ActiveLoop {
    /// The last attempt's command line (redacted).
    pub command_line: String,
    pub failures: usize,
    pub since: u64,
    pub since_clock: String,
    pub same_error: bool,
    pub last_exit: Option<i32>,
    /// More attempts than were looked at: `failures` is a lower bound.
    pub at_least: bool,
}

impl ActiveLoop {
    /// `cargo build failed 5 times in a row with the same error since 14:02`.
    pub fn describe(&self) -> String {
        let n = if self.at_least {
            format!("at least {}", self.failures)
        } else {
            self.failures.to_string()
        };
        let how = if self.same_error {
            " with the same error"
        } else {
            ""
        };
        format!(
            "`{}` failed {n} times in a row{how} since {}",
            self.command_line.lines().next().unwrap_or(""),
            self.since_clock
        )
    }
}

/// Newest commands looked at by [`active`].
const ACTIVE_WINDOW: usize = 64;

/// Whether the session in `session_dir` ends with a loop: its newest finished commands (at most
/// the last 64) fold into a loop of at least `settings.threshold` failed attempts, and no
/// success came after it. Reads the digests (cached) of the failures after the last success only.
pub(crate) fn active(session_dir: &Path, settings: &LoopSettings) -> Result<Option<ActiveLoop>> {
    if settings.threshold == 0 {
        return Ok(None);
    }
    let Some(session) = select::Session::open(session_dir, None)? else {
        return Ok(None);
    };
    let query = select::Query {
        filters: Vec::new(),
        line_test: None,
        output_filter: None,
        limit: ACTIVE_WINDOW,
    };
    let found = query.select(&session)?;
    let full_window = found.commands.len() >= ACTIVE_WINDOW;
    // The command that ended the shell (`exit`) is no attempt: the loop before it is the
    // session's last.
    let finished: Vec<(&select::Candidate, CommandContext)> = found
        .commands
        .iter()
        .filter(|c| !c.running && !c.ended_shell)
        .map(|c| {
            let r = &c.record;
            let mut ctx = CommandContext::new(r.session_id.clone(), r.seq, r.command_line.clone());
            ctx.started_at = r.started_at;
            ctx.exit_code = if c.cut_off { None } else { r.exit_code };
            ctx.recording_stopped = r.recording_stopped;
            ctx.private = r.private;
            (c, ctx)
        })
        .collect();
    // Only the failures after the last command that did not fail can make an active loop:
    // only their outputs are read (for their hashes), so a session that just succeeded costs
    // no output at all.
    let tail = finished
        .iter()
        .rposition(|(_, ctx)| !failed(ctx))
        .map_or(0, |i| i + 1);
    let mut cmds: Vec<(CommandContext, ())> = Vec::new();
    for (c, mut ctx) in finished.into_iter().skip(tail) {
        if !c.record.private {
            ctx.output_hash = read::cached_digest(c).hash;
        }
        cmds.push((ctx, ()));
    }
    let folded = fold(
        truncate::fold_repeats_with(cmds),
        settings,
        crate::store::now_ms(),
    );
    let Some((last, ())) = folded.last() else {
        return Ok(None);
    };
    let Some(info) = &last.attempts else {
        return Ok(None);
    };
    Ok(Some(ActiveLoop {
        command_line: redact::redact(&last.command_line).into_owned(),
        failures: info.failures,
        since: info.since,
        since_clock: info.since_clock.clone(),
        same_error: info.same_error,
        last_exit: last.exit_code,
        // The loop may have started before the window.
        at_least: full_window && tail == 0 && folded.len() == 1,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::model::testing::ctx;

    fn fail(seq: u64, line: &str, out: &[&str], hash: u64) -> (CommandContext, u64) {
        let out: Vec<String> = out.iter().map(|s| s.to_string()).collect();
        let mut c = ctx(seq, line, &out);
        c.exit_code = Some(1);
        c.output_hash = hash;
        c.started_at = 1_700_000_000_000 + seq * 60_000;
        (c, seq)
    }

    fn ok(seq: u64, line: &str) -> (CommandContext, u64) {
        let mut c = ctx(seq, line, &[]);
        c.started_at = 1_700_000_000_000 + seq * 60_000;
        (c, seq)
    }

    fn settings(threshold: usize) -> LoopSettings {
        LoopSettings {
            threshold,
            utc_offset_secs: 0,
        }
    }

    const NOW: u64 = 1_700_000_000_000 + 3_600_000;

    #[test]
    fn same_error_folds_into_one_entry() {
        let mut cmds = vec![ok(0, "ls")];
        for s in 1..=5 {
            cmds.push(fail(s, "make", &["error: boom"], 7));
        }
        cmds.push(ok(6, "ls"));
        let out = fold(cmds, &settings(3), NOW);
        assert_eq!(out.len(), 3);
        let (c, extra) = &out[1];
        assert_eq!(*extra, 5, "the last attempt's own data");
        assert_eq!(c.seq, 5);
        let info = c.attempts.as_ref().unwrap();
        assert_eq!(info.failures, 5);
        assert!(info.same_error && info.same_command);
        assert!(info.earlier.is_empty());
        assert_eq!(info.since, 1_700_000_060_000);
        assert_eq!(info.since_clock, "22:14");
    }

    #[test]
    fn exact_repeats_count_as_attempts() {
        let mut a = fail(1, "make", &["error: boom"], 7);
        a.0.repeat = 2;
        let b = fail(2, "make", &["error: boom"], 7);
        let out = fold(vec![a, b.clone()], &settings(3), NOW);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0.attempts.as_ref().unwrap().failures, 3);
        assert_eq!(out[0].0.repeat, 1);
        // Below the threshold nothing changes.
        let out = fold(vec![fail(1, "make", &["x"], 7), b], &settings(3), NOW);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|(c, _)| c.attempts.is_none()));
    }

    #[test]
    fn edit_and_retry_keeps_the_last_whole_and_summarizes_the_rest() {
        let cmds = vec![
            fail(
                1,
                "cargo build",
                &["compiling", "error[E0308]: mismatched types"],
                1,
            ),
            fail(
                2,
                "cargo build",
                &["compiling", "error[E0425]: cannot find `y`"],
                2,
            ),
            fail(
                3,
                "cargo build --release",
                &["error[E0425]: cannot find `y`"],
                2,
            ),
            fail(4, "cargo build", &["error: linking failed", "more"], 3),
        ];
        let last = cmds[3].0.clone();
        let out = fold(cmds, &settings(3), NOW);
        assert_eq!(out.len(), 1);
        let c = &out[0].0;
        assert_eq!(c.output, last.output);
        let info = c.attempts.as_ref().unwrap();
        assert_eq!(info.failures, 4);
        assert!(!info.same_error && !info.same_command);
        let firsts: Vec<_> = info
            .earlier
            .iter()
            .map(|a| a.first_error.as_deref().unwrap())
            .collect();
        assert_eq!(
            firsts,
            [
                "error[E0308]: mismatched types",
                "error[E0425]: cannot find `y`",
                "error[E0425]: cannot find `y`"
            ]
        );
        assert_eq!(info.earlier[0].command_line, None);
        assert_eq!(
            info.earlier[2].command_line.as_deref(),
            Some("cargo build --release")
        );
    }

    #[test]
    fn a_success_or_another_command_breaks_a_loop() {
        let cmds = vec![
            fail(1, "make", &["e"], 1),
            fail(2, "make", &["f"], 2),
            ok(3, "make"),
            fail(4, "make", &["e"], 1),
            fail(5, "npm test", &["other"], 9),
            fail(6, "make", &["e"], 1),
        ];
        let out = fold(cmds, &settings(3), NOW);
        assert_eq!(out.len(), 6);
        assert!(out.iter().all(|(c, _)| c.attempts.is_none()));
        // Different commands with the same failing output do make a loop.
        let cmds = vec![
            fail(1, "python app.py", &["ImportError: x"], 4),
            fail(2, "python3 app.py", &["ImportError: x"], 4),
            fail(3, "./app.py", &["ImportError: x"], 4),
        ];
        let out = fold(cmds, &settings(3), NOW);
        assert_eq!(out.len(), 1);
        let info = out[0].0.attempts.as_ref().unwrap();
        assert!(info.same_error && !info.same_command);
        assert_eq!(info.earlier.len(), 2);
        // Failures with commands left out between them (`--failed`) are not in a row.
        let cmds = vec![
            fail(1, "make", &["e"], 1),
            fail(3, "make", &["e"], 1),
            fail(5, "make", &["e"], 1),
        ];
        assert_eq!(fold(cmds, &settings(3), NOW).len(), 3);
        // Threshold 0 turns it off.
        let cmds = vec![
            fail(1, "m", &[], 1),
            fail(2, "m", &[], 1),
            fail(3, "m", &[], 1),
        ];
        assert_eq!(fold(cmds, &settings(0), NOW).len(), 3);
    }

    #[test]
    fn private_commands_and_the_shell_exit_are_no_attempts() {
        // Failing private commands share a line and an (unrecorded) output: no loop.
        let private = |seq| {
            let (mut c, x) = fail(seq, crate::context::words::PRIVATE_COMMAND, &[], 0);
            c.private = true;
            (c, x)
        };
        let out = fold(vec![private(1), private(2), private(3)], &settings(3), NOW);
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|(c, _)| c.attempts.is_none()));
        // Nor do they continue a loop of public attempts.
        let cmds = vec![
            fail(1, "make", &["e"], 1),
            fail(2, "make", &["e"], 1),
            private(3),
        ];
        assert!(
            fold(cmds, &settings(3), NOW)
                .iter()
                .all(|(c, _)| c.attempts.is_none())
        );
        // `exit` after two failures carries their status: no third attempt.
        let (mut exit, x) = fail(3, "make", &["e"], 1);
        exit.ended_shell = true;
        let cmds = vec![
            fail(1, "make", &["e"], 1),
            fail(2, "make", &["e"], 1),
            (exit, x),
        ];
        let out = fold(cmds, &settings(3), NOW);
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|(c, _)| c.attempts.is_none()));
    }

    /// A finished session of `cmds` (command line, exit status, output) written through the
    /// store API.
    fn session(cmds: &[(&str, i32, &str)]) -> tempfile::TempDir {
        use crate::store::{self, CommandRecord, SessionMeta, SessionState};
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let meta = SessionMeta {
            ended_at: Some(2),
            exit_status: Some(0),
            state: SessionState::Exited,
            ..store::testing::session_meta("s")
        };
        store::write_json_atomic(&dir.join(store::META), &meta).unwrap();
        let mut w = store::StreamWriter::create(&dir.join(store::STREAM)).unwrap();
        for (i, (line, exit, out)) in cmds.iter().enumerate() {
            let seq = i as u64 + 1;
            let offset = w.offset();
            w.write(1000 + seq, store::OUTPUT, out.as_bytes()).unwrap();
            w.flush().unwrap();
            let record = CommandRecord {
                command_line: line.to_string(),
                started_at: 1_700_000_000_000 + seq * 1000,
                ended_at: 1_700_000_000_500 + seq * 1000,
                exit_code: Some(*exit),
                stream_offset: offset,
                stream_length: w.offset() - offset,
                ..store::testing::command_record("s", seq)
            };
            store::append_command(dir, &record).unwrap();
        }
        tmp
    }

    #[test]
    fn an_active_loop_reads_only_the_outputs_of_the_failures_since_the_last_success() {
        // Outputs of 1 MiB or more get a cached digest when read: the cache tells which were.
        let big = "x".repeat(1 << 20) + "\r\n";
        let cmds = [("build", 0, big.as_str()), ("make", 2, big.as_str())];
        let s = session(&cmds);
        assert_eq!(active(s.path(), &settings(3)).unwrap(), None);
        let cached =
            |dir: &tempfile::TempDir, seq| crate::store::cache::path(dir.path(), seq).exists();
        assert!(!cached(&s, 1), "the success before the failures was read");
        assert!(cached(&s, 2));
        // A session that ends with a success reads no output at all.
        let s = session(&[cmds[1], cmds[0]]);
        assert_eq!(active(s.path(), &settings(3)).unwrap(), None);
        assert!(!cached(&s, 1) && !cached(&s, 2));
    }

    #[test]
    fn active_loop_at_the_end_of_a_session() {
        let err = "make: *** [all] Error 2\r\n";
        let mut cmds = vec![("ls", 0, "a\r\n")];
        cmds.extend(std::iter::repeat_n(("make", 2, err), 5));
        let s = session(&cmds);
        let found = active(s.path(), &settings(3)).unwrap().expect("a loop");
        assert_eq!(found.failures, 5);
        assert!(found.same_error && !found.at_least);
        assert_eq!(found.last_exit, Some(2));
        assert_eq!(found.since, 1_700_000_002_000);
        assert!(
            found
                .describe()
                .starts_with("`make` failed 5 times in a row with the same error since "),
            "{}",
            found.describe()
        );
        // A success after it ends it; fewer failures than the threshold are no loop.
        cmds.push(("make", 0, "ok\r\n"));
        assert_eq!(active(session(&cmds).path(), &settings(3)).unwrap(), None);
        let two = [("make", 2, err), ("make", 2, err)];
        assert_eq!(active(session(&two).path(), &settings(3)).unwrap(), None);
        assert!(
            active(session(&two).path(), &settings(2))
                .unwrap()
                .is_some()
        );
        // Edit and retry: the same command, a different output each time.
        let retry = [
            ("cargo t", 101, "e1\r\n"),
            ("cargo t", 101, "e2\r\n"),
            ("cargo t", 101, "e3\r\n"),
        ];
        let found = active(session(&retry).path(), &settings(3))
            .unwrap()
            .unwrap();
        assert!(!found.same_error);
        assert_eq!(found.failures, 3);
    }

    #[test]
    fn clock_shows_the_date_on_another_day() {
        let t = 1_700_000_000_000; // 2023-11-14T22:13:20Z
        assert_eq!(clock(t, 0, t + 60_000), "22:13");
        assert_eq!(clock(t, 3600, t), "23:13");
        assert_eq!(clock(t, 0, t + 86_400_000), "2023-11-14 22:13");
    }
}
