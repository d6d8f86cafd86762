//! The relay driven with bytes: a terminal in memory ([`MemTty`]), a shell's side that keeps
//! what it is sent ([`FakePty`]), and a clock the test moves.

use super::*;
use crate::record::tty::MemTty;
use crate::store::{self, SessionMeta};
use std::path::{Path, PathBuf};

const T: &str = "0123abcd0123abcd0123abcd0123abcd";
/// The registration key of `omnish nest`, and a request key it registers.
const R: &str = "9999aaaa9999aaaa9999aaaa9999aaaa";
const Q: &str = "abcdabcdabcdabcdabcdabcdabcdabcd";

/// The shell's side: keeps what it is sent, with modes, a size and an exit the test sets.
struct FakePty {
    got: Vec<u8>,
    /// Bytes it takes before writes would block; `None`: any number.
    room: Option<usize>,
    echo: Option<EchoModes>,
    canonical: bool,
    size: Option<(u16, u16)>,
    signals: Vec<Signal>,
    /// The status it has ended with, once it has.
    exit: Option<i32>,
    waited: bool,
    /// Whether the shell is seen waiting for input; `None`: it cannot be seen.
    waiting: Option<bool>,
}

impl FakePty {
    fn new() -> FakePty {
        FakePty {
            got: Vec::new(),
            room: None,
            echo: Some(EchoModes::default()),
            canonical: false,
            size: None,
            signals: Vec::new(),
            exit: None,
            waited: false,
            waiting: None,
        }
    }
}

impl Pty for FakePty {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let n = match self.room {
            Some(0) => return Err(io::ErrorKind::WouldBlock.into()),
            Some(room) => room.min(bytes.len()),
            None => bytes.len(),
        };
        if let Some(room) = self.room.as_mut() {
            *room -= n;
        }
        self.got.extend_from_slice(&bytes[..n]);
        Ok(n)
    }

    fn echo_modes(&self) -> Option<EchoModes> {
        self.echo
    }

    fn canonical(&self) -> bool {
        self.canonical
    }

    fn shell_waits_for_input(&self) -> Option<bool> {
        self.waiting
    }

    fn resize(&mut self, cols: u16, rows: u16) {
        self.size = Some((cols, rows));
    }

    fn signal(&mut self, signal: Signal) {
        self.signals.push(signal);
        if signal == Signal::SIGKILL {
            self.exit = Some(137);
        }
    }

    fn try_wait(&mut self) -> Option<i32> {
        self.exit
    }

    fn wait(&mut self) -> i32 {
        self.waited = true;
        self.exit.expect("a shell that has ended")
    }
}

type TestRelay = Relay<MemTty, FakePty>;

fn osc(number: u16, key: &str, body: &str) -> String {
    format!("\x1b]{number};{key};{body}\x07")
}

fn ours(number: u16, body: &str) -> String {
    osc(number, T, body)
}

/// `ms` after `start`, on both clocks.
fn after(start: Now, ms: u64) -> Now {
    Now {
        at: start.at + Duration::from_millis(ms),
        ms: start.ms + ms,
    }
}

/// A recorder writing synchronously to `dir`, with the session's token.
fn recorder(dir: &Path) -> Recorder {
    let meta = SessionMeta {
        cwd: "/start".into(),
        ..store::testing::session_meta("s")
    };
    let mut r = Recorder::create(dir, meta).unwrap();
    r.set_token(T);
    r
}

/// A relay for a hooked shell (with a recorder in `dir`, if given).
fn hooked(tty: MemTty, dir: Option<&Path>) -> (TestRelay, Now) {
    let now = Now::read();
    let relay = Relay::new(
        tty,
        FakePty::new(),
        Some(Scanner::new(T)),
        dir.map(recorder),
        None,
        now,
    );
    (relay, now)
}

fn session_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    (tmp, dir)
}

/// One prompt, one command `ls` with `output`, its end with `status`, and the next prompt.
fn command_cycle(output: &str, status: i32) -> String {
    [
        ours(633, "P;Cwd=/work"),
        ours(133, "A"),
        "$ ".to_string(),
        ours(133, "B"),
        "ls\r\n".to_string(),
        ours(633, "E;ls"),
        ours(133, "C"),
        output.to_string(),
        ours(133, &format!("D;{status}")),
        ours(633, "P;Waiting=0"),
        ours(133, "A"),
        "$ ".to_string(),
    ]
    .concat()
}

#[test]
fn markers_are_taken_out_the_screen_gets_the_rest_and_the_record_its_output() {
    let (_tmp, dir) = session_dir();
    let (mut r, now) = hooked(MemTty::new(), Some(&dir));
    let bytes = command_cycle("a b\r\n", 2).into_bytes();
    // Read in pieces that cut markers in two: the scanner's state carries over.
    for chunk in bytes.chunks(7) {
        r.on_shell_output(chunk, now);
    }
    assert_eq!(r.tty.shown(), "$ ls\r\na b\r\n$ ");
    let outcome = r.finish(now, 0);
    assert_eq!(outcome.status, 0);
    let recs = store::read_commands(&dir).unwrap();
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0].command_line, "ls");
    assert_eq!(recs[0].cwd, "/work");
    assert_eq!(recs[0].exit_code, Some(2));
    let entries = store::read_range(
        &dir.join(store::STREAM),
        recs[0].stream_offset,
        Some(recs[0].stream_length),
    )
    .unwrap();
    assert_eq!(store::output_bytes_at(&entries, 0), b"a b\r\n");
}

#[test]
fn keys_reach_the_shell_and_the_record_only_while_the_terminal_echoes() {
    let (_tmp, dir) = session_dir();
    let now = Now::read();
    // A run without hooks: every key typed with echo on is recorded as it comes.
    let mut rec = recorder(&dir);
    rec.begin(now.ms, "cat".into(), "argv");
    let mut r = Relay::new(MemTty::new(), FakePty::new(), None, Some(rec), None, now);
    r.on_input(b"seen\r", now);
    r.send_to_shell(now);
    // A password prompt turned echo off.
    r.pty.echo = None;
    r.on_input(b"hunter2\r", now);
    r.send_to_shell(now);
    r.pty.echo = Some(EchoModes::default());
    r.on_input(b"\x04", now);
    r.send_to_shell(now);
    assert_eq!(r.pty.got, b"seen\rhunter2\r\x04");
    r.finish(now, 0);
    let typed: Vec<u8> = store::read_range(&dir.join(store::STREAM), 0, None)
        .unwrap()
        .into_iter()
        .filter(|e| e.1 == store::INPUT)
        .flat_map(|e| e.2)
        .collect();
    assert_eq!(typed, b"seen\r\x04");
}

#[test]
fn a_bootstrap_request_is_answered_with_the_hooks_ahead_of_keys_typed_since() {
    let now = Now::read();
    let mut scanner = Scanner::new(T);
    scanner.set_register_key(R);
    let mut r = Relay::new(
        MemTty::new(),
        FakePty::new(),
        Some(scanner),
        None,
        None,
        now,
    );
    // Busy: the keys wait for the shell.
    r.pty.room = Some(0);
    r.on_input(b"typed before", now);
    r.send_to_shell(now);
    r.on_shell_output(osc(633, R, &format!("P;NestKey={Q}")).as_bytes(), now);
    r.on_shell_output(osc(633, Q, "Q;bash").as_bytes(), now);
    r.on_input(b"typed after", now);
    r.pty.room = None;
    r.send_to_shell(now);
    let got = String::from_utf8(r.pty.got.clone()).unwrap();
    let reply = got
        .strip_prefix("typed before\n#omnish-hooks ")
        .and_then(|rest| rest.strip_suffix("typed after"))
        .unwrap_or_else(|| panic!("not a reply between the keys: {got:?}"));
    assert!(reply.trim_end().ends_with("# omnish-end"), "{reply}");
    // The reply's nest key is good for the shell it starts: its announcement is a marker.
    let key = reply
        .lines()
        .find_map(|l| l.strip_prefix("#__k="))
        .expect("a nest key in the reply");
    r.on_shell_output(
        osc(633, key, &format!("P;Nest={}", "1".repeat(32))).as_bytes(),
        now,
    );
    assert_eq!(r.tty.shown(), "", "markers reached the screen");
    // A bootstrap that waits for no answer gets none.
    let before = r.pty.got.len();
    r.on_shell_output(
        osc(633, R, &format!("P;NestKey={}", "2".repeat(32))).as_bytes(),
        now,
    );
    r.on_shell_output(osc(633, &"2".repeat(32), "Q;notty").as_bytes(), now);
    r.send_to_shell(now);
    assert_eq!(r.pty.got.len(), before);
}

#[test]
fn piped_input_waits_for_the_first_prompt_and_the_line_editor() {
    let (_tmp, dir) = session_dir();
    let mut tty = MemTty::new();
    tty.input_tty = false;
    let (mut r, start) = hooked(tty, Some(&dir));
    assert!(!r.interest(start).read_input, "read before any prompt");
    // The first prompt; the terminal still echoes (the line editor has not started).
    let t = after(start, 100);
    r.on_shell_output((ours(133, "A") + "$ ").as_bytes(), t);
    assert!(!r.interest(t).read_input, "read while the terminal echoes");
    assert!(r.interest(t).timeout.is_some(), "no deadline to wake for");
    r.pty.echo = None;
    assert!(r.interest(after(t, 1)).read_input);

    // Without a prompt, input goes after PROMPT_WAIT; after a prompt, after EDITOR_WAIT.
    let (mut r, start) = hooked(
        MemTty {
            input_tty: false,
            ..MemTty::new()
        },
        Some(&dir.with_extension("2")),
    );
    let wait = PROMPT_WAIT.as_millis() as u64;
    assert!(!r.interest(after(start, wait - 1)).read_input);
    assert!(r.interest(after(start, wait)).read_input);
    let (mut r, start) = hooked(
        MemTty {
            input_tty: false,
            ..MemTty::new()
        },
        Some(&dir.with_extension("3")),
    );
    r.on_shell_output(ours(133, "A").as_bytes(), start);
    let wait = EDITOR_WAIT.as_millis() as u64;
    assert!(!r.interest(after(start, 1)).read_input);
    assert!(!r.interest(after(start, wait)).read_input);
    assert!(r.interest(after(start, wait + 1)).read_input);
}

#[test]
fn piped_input_ends_with_ctrl_d_once_the_shell_is_back_at_its_prompt() {
    let mut tty = MemTty::new();
    tty.input_tty = false;
    let (mut r, start) = hooked(tty, None);
    r.on_input(b"sleep 1\r", start);
    r.on_input_end();
    // A command runs: the terminal is canonical, a Ctrl-D would be its end of file.
    r.pty.canonical = true;
    r.send_to_shell(start);
    r.send_to_shell(after(start, 10));
    assert_eq!(r.interest(after(start, 10)).timeout, Some(SOON));
    r.send_to_shell(after(start, 500));
    assert_eq!(r.pty.got, b"sleep 1\r");
    // The line editor is back (canonical off): the Ctrl-D goes, once.
    r.pty.canonical = false;
    r.send_to_shell(after(start, 600));
    r.send_to_shell(after(start, 700));
    assert_eq!(r.pty.got, b"sleep 1\r\x04");
    assert!(!r.interest(after(start, 700)).read_input);

    // A shell whose terminal stays canonical gets it after a quiet EOT_WAIT.
    let mut tty = MemTty::new();
    tty.input_tty = false;
    let (mut r, start) = hooked(tty, None);
    r.pty.canonical = true;
    r.on_input_end();
    let wait = EOT_WAIT.as_millis() as u64;
    r.send_to_shell(start);
    r.send_to_shell(after(start, wait - 1));
    assert_eq!(r.pty.got, b"");
    r.send_to_shell(after(start, wait));
    assert_eq!(r.pty.got, b"\x04");

    // Input from a terminal that ends sends nothing.
    let (mut r, start) = hooked(MemTty::new(), None);
    r.on_input_end();
    r.send_to_shell(after(start, 10_000));
    assert_eq!(r.pty.got, b"");
}

/// Regression (`wrap_cli` piped tests hung about 1 run in 20 under load): a Ctrl-D sent while
/// the line editor is still raw but has just read the last line reaches the terminal after it
/// switched to canonical mode, becomes a NUL, and the shell never ends. Where the shell can be
/// seen waiting for input, the Ctrl-D goes only when it was seen so twice, SOON apart, with
/// nothing written in between, and a prompt was announced since the last keys were written.
#[test]
fn piped_input_ends_with_ctrl_d_only_when_the_shell_is_seen_waiting_for_it() {
    /// A recorded shell at its first prompt, seen waiting, given `input` from a pipe that
    /// then ends.
    fn piped(input: &[u8]) -> (tempfile::TempDir, TestRelay, Now) {
        let (tmp, dir) = session_dir();
        let mut tty = MemTty::new();
        tty.input_tty = false;
        let (mut r, start) = hooked(tty, Some(&dir));
        r.on_shell_output(ours(133, "A").as_bytes(), start);
        r.pty.waiting = Some(true);
        r.on_input(input, start);
        r.on_input_end();
        (tmp, r, start)
    }
    let soon = SOON.as_millis() as u64;
    let (_tmp, mut r, start) = piped(b"false\r");
    // Written now. Seen waiting, raw: not yet, it may not have read the line.
    r.send_to_shell(start);
    assert_eq!(r.pty.got, b"false\r");
    r.send_to_shell(after(start, soon));
    r.send_to_shell(after(start, 2 * soon));
    assert_eq!(
        r.pty.got, b"false\r",
        "no prompt since the line was written"
    );
    // It runs the line: neither waiting nor raw.
    r.pty.waiting = Some(false);
    r.pty.canonical = true;
    r.send_to_shell(after(start, 5000));
    assert_eq!(
        r.pty.got, b"false\r",
        "never while the shell does something else"
    );
    // Back at its prompt: seen waiting once, then again SOON later.
    r.on_shell_output(ours(133, "A").as_bytes(), after(start, 5000));
    r.pty.canonical = false;
    r.pty.waiting = Some(true);
    r.send_to_shell(after(start, 5001));
    assert_eq!(r.pty.got, b"false\r");
    r.send_to_shell(after(start, 5001 + soon));
    assert_eq!(r.pty.got, b"false\r\x04");
    r.send_to_shell(after(start, 6000));
    assert_eq!(r.pty.got, b"false\r\x04", "once");

    // A line left unfinished shows no prompt: the Ctrl-D goes after EOT_WAIT seen waiting.
    let (_tmp, mut r, start) = piped(b"echo 'a\r");
    r.send_to_shell(start);
    let wait = EOT_WAIT.as_millis() as u64;
    r.send_to_shell(after(start, 1));
    r.send_to_shell(after(start, wait));
    assert_eq!(r.pty.got, b"echo 'a\r");
    r.send_to_shell(after(start, wait + 1));
    assert_eq!(r.pty.got, b"echo 'a\r\x04");

    // A shell reading lines canonically (no line editor), seen waiting: end of file, the same.
    let mut tty = MemTty::new();
    tty.input_tty = false;
    let (mut r, start) = hooked(tty, None);
    r.pty.waiting = Some(true);
    r.pty.canonical = true;
    r.on_input_end();
    r.send_to_shell(start);
    r.send_to_shell(after(start, soon));
    assert_eq!(r.pty.got, b"\x04");
}

#[test]
fn a_full_screen_stops_reading_the_shell_but_not_the_keyboard() {
    let mut tty = MemTty::new();
    tty.room = Some(1000);
    let (mut r, now) = hooked(tty, None);
    let chunk: Vec<u8> = (0..READ_SIZE).map(|i| b'a' + (i % 26) as u8).collect();
    let mut sent = Vec::new();
    while r.interest(now).read_shell {
        assert!(sent.len() <= SCREEN_LIMIT + 1000, "never stopped reading");
        r.on_shell_output(&chunk, now);
        sent.extend_from_slice(&chunk);
    }
    assert_eq!(sent.len(), SCREEN_LIMIT + READ_SIZE);
    let want = r.interest(now);
    assert!(want.write_screen && want.read_input);
    r.on_input(b"\x03", now);
    r.send_to_shell(now);
    assert_eq!(r.pty.got, b"\x03");
    // The terminal takes it all again: every byte shown once, in order, and reading resumes.
    r.tty.room = None;
    r.on_screen_writable();
    assert_eq!(r.tty.screen, sent);
    let want = r.interest(now);
    assert!(want.read_shell && !want.write_screen);
}

#[test]
fn a_piece_of_a_marker_is_shown_after_the_hold_limit_while_output_is_read() {
    let (mut r, start) = hooked(MemTty::new(), None);
    r.on_shell_output(b"abc\x1b]133;", start);
    assert_eq!(r.tty.shown(), "abc");
    let limit = HOLD_LIMIT.as_millis() as u64;
    assert_eq!(r.interest(start).timeout, Some(SOON));
    r.on_tick(after(start, limit - 1));
    assert_eq!(r.tty.shown(), "abc");
    r.on_tick(after(start, limit));
    assert_eq!(r.tty.shown(), "abc\x1b]133;");

    // While the screen is full (Ctrl-S) the wait does not count.
    let mut tty = MemTty::new();
    tty.room = Some(0);
    let (mut r, start) = hooked(tty, None);
    r.on_shell_output(&vec![b'x'; SCREEN_LIMIT], start);
    r.on_shell_output(b"\x1b]133;", start);
    assert!(!r.interest(start).read_shell);
    r.on_tick(after(start, 10 * limit));
    r.tty.room = None;
    r.on_screen_writable();
    assert!(r.interest(after(start, 10 * limit)).read_shell);
    r.on_tick(after(start, 11 * limit - 1));
    assert!(!r.tty.shown().ends_with("133;"));
    r.on_tick(after(start, 11 * limit));
    assert!(r.tty.shown().ends_with("x\x1b]133;"));
}

#[test]
fn told_to_stop_the_shell_is_hung_up_then_terminated_then_killed() {
    let (mut r, start) = hooked(MemTty::new(), None);
    r.on_signal(Sig::Stop, start);
    assert_eq!(r.pty.signals, [Signal::SIGHUP]);
    assert_eq!(r.interest(start).timeout, Some(LATER));
    let grace = STOP_GRACE.as_millis() as u64;
    r.on_tick(after(start, grace - 1));
    assert_eq!(r.pty.signals, [Signal::SIGHUP]);
    r.on_tick(after(start, grace));
    assert_eq!(r.pty.signals, [Signal::SIGHUP, Signal::SIGTERM]);
    // Told again: the next one at once.
    r.on_signal(Sig::Stop, after(start, grace + 1));
    assert_eq!(
        r.pty.signals,
        [Signal::SIGHUP, Signal::SIGTERM, Signal::SIGKILL]
    );
    r.on_tick(after(start, 10 * grace));
    assert_eq!(r.pty.signals.len(), 3);
    r.on_signal(Sig::Child, after(start, 10 * grace));
    let end = after(start, 10 * grace);
    assert!(r.finished(end, true));
    let status = r.end(end, false);
    assert!(!r.pty.waited, "waited for a shell already reaped");
    let outcome = r.finish(end, status);
    assert_eq!((outcome.status, outcome.interrupted), (137, true));
}

#[test]
fn a_resize_reaches_the_shell() {
    let mut tty = MemTty::new();
    tty.size = Some((100, 30));
    let (mut r, now) = hooked(tty, None);
    r.on_signal(Sig::Winch, now);
    assert_eq!(r.pty.size, Some((100, 30)));
}

#[test]
fn after_the_shell_exits_what_the_terminal_holds_is_shown_for_a_moment() {
    let (mut r, start) = hooked(MemTty::new(), None);
    r.on_signal(Sig::Child, start);
    assert!(
        !r.finished(start, false),
        "a SIGCHLD without an exit ended the loop"
    );
    r.pty.exit = Some(3);
    r.on_signal(Sig::Child, start);
    let drain = EXIT_DRAIN.as_millis() as u64;
    assert!(!r.finished(start, false));
    r.on_shell_output(b"bye\r\n", after(start, 10));
    assert!(!r.finished(after(start, drain - 1), false));
    assert!(r.finished(after(start, drain), false));
    // Nothing more comes: no need to wait.
    let (mut r, start) = hooked(MemTty::new(), None);
    r.pty.exit = Some(3);
    r.on_signal(Sig::Child, start);
    assert!(r.finished(start, true));
    // The terminal closed: at once, and the shell is waited for.
    let (mut r, start) = hooked(MemTty::new(), None);
    r.on_shell_end();
    assert!(r.finished(start, false));
    r.pty.exit = Some(4);
    assert_eq!(r.end(start, false), 4);
    assert!(r.pty.waited);
    // The loop failed with the shell running: it is killed.
    let (mut r, start) = hooked(MemTty::new(), None);
    assert_eq!(r.end(start, true), 137);
    assert_eq!(r.pty.signals, [Signal::SIGKILL]);
}

#[test]
fn a_notice_waits_for_a_prompt_on_a_terminal_and_goes_to_stderr_otherwise() {
    let (_tmp, dir) = session_dir();
    let (mut r, now) = hooked(MemTty::new(), Some(&dir));
    let notify = r.recorder.as_ref().unwrap().notifier();
    r.on_shell_output((ours(133, "C") + "output").as_bytes(), now);
    notify.notice("omnish: a notice".into());
    r.on_writer_notice();
    // Not inside output, not at a marker that is no boundary (the working directory).
    r.on_shell_output(
        (" more".to_string() + &ours(633, "P;Cwd=/w") + ".").as_bytes(),
        now,
    );
    assert_eq!(r.tty.shown(), "output more.");
    r.on_shell_output((ours(133, "A") + "$ ").as_bytes(), now);
    assert_eq!(r.tty.shown(), "output more.\r\nomnish: a notice\r\n$ ");
    assert_eq!(r.tty.stderr, "");

    let mut tty = MemTty::new();
    tty.output_tty = false;
    let (mut r, _) = hooked(tty, Some(&dir.with_extension("2")));
    r.recorder
        .as_ref()
        .unwrap()
        .notifier()
        .notice("omnish: a notice".into());
    r.on_writer_notice();
    assert_eq!(r.tty.stderr, "omnish: a notice\n");
    assert_eq!(r.tty.shown(), "");
}

#[test]
fn without_hooks_a_notice_waits_for_the_end_of_a_line() {
    let (_tmp, dir) = session_dir();
    let now = Now::read();
    let mut r = Relay::new(
        MemTty::new(),
        FakePty::new(),
        None,
        Some(recorder(&dir)),
        None,
        now,
    );
    r.recorder
        .as_ref()
        .unwrap()
        .notifier()
        .notice("omnish: a notice".into());
    r.on_writer_notice();
    r.on_shell_output(b"no line end", now);
    r.on_shell_output(b" yet\nnext\nline", now);
    assert_eq!(
        r.tty.shown(),
        "no line end yet\nnext\nomnish: a notice\r\nline"
    );
}

#[test]
fn lines_left_at_the_end_come_after_the_screen_with_the_terminal_restored() {
    let (_tmp, dir) = session_dir();
    let mut tty = MemTty::new();
    tty.room = Some(2);
    let (mut r, now) = hooked(tty, Some(&dir));
    r.recorder
        .as_ref()
        .unwrap()
        .notifier()
        .notice("omnish: a notice".into());
    r.on_shell_output(b"$ exit", now);
    assert_eq!(r.tty.shown(), "$ ");
    r.on_tick(now);
    r.pty.exit = Some(0);
    r.on_signal(Sig::Child, now);
    let status = r.end(now, false);
    let outcome = r.finish(now, status);
    assert_eq!((outcome.status, outcome.interrupted), (0, false));
    // What the terminal had not taken is shown whole, then the notice on a line of its own.
    assert!(r.tty.restored);
    assert_eq!(r.tty.shown(), "$ exit");
    assert_eq!(r.tty.stderr, "\r\nomnish: a notice\n");
}
