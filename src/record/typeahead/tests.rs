use super::*;
use nix::pty::openpty;
use nix::sys::termios::{self, LocalFlags, SetArg};
use proptest::prelude::*;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

/// A real pseudo-terminal with nobody reading its slave: what the terminal echoes for typed keys
/// is all the master reads.
struct Pty {
    master: OwnedFd,
    slave: OwnedFd,
}

impl Pty {
    fn new() -> Pty {
        let p = openpty(None, None).unwrap();
        Pty {
            master: p.master,
            slave: p.slave,
        }
    }

    fn modes(&self) -> EchoModes {
        EchoModes::from_termios(&termios::tcgetattr(self.slave.as_fd()).unwrap())
    }

    fn set(&self, f: impl FnOnce(&mut termios::Termios)) {
        let mut t = termios::tcgetattr(self.slave.as_fd()).unwrap();
        f(&mut t);
        termios::tcsetattr(self.slave.as_fd(), SetArg::TCSANOW, &t).unwrap();
    }

    fn type_keys(&self, keys: &[u8]) {
        assert_eq!(nix::unistd::write(&self.master, keys).unwrap(), keys.len());
    }

    /// Reads the master until `n` bytes came (the terminal echoes soon; a hang guard, not a
    /// timing check).
    fn read(&self, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let start = Instant::now();
        while out.len() < n && start.elapsed() < Duration::from_secs(10) {
            let mut fds = [nix::poll::PollFd::new(
                self.master.as_fd(),
                nix::poll::PollFlags::POLLIN,
            )];
            if nix::poll::poll(&mut fds, 100u16).unwrap() > 0 {
                let mut buf = [0u8; 4096];
                let k = nix::unistd::read(&self.master, &mut buf).unwrap();
                out.extend_from_slice(&buf[..k]);
            }
        }
        out
    }
}

/// The echo the model foretells for `keys` typed in reads of `chunks`, or `None` if it cannot.
fn model_echo(m: &EchoModes, d: &mut Discipline, keys: &[u8]) -> Option<Vec<u8>> {
    let mut echo = Vec::new();
    let mut known = true;
    for &k in keys {
        known &= d.key(m, k, &mut echo).is_some();
    }
    known.then_some(echo)
}

/// Types `keys` a read at a time into a real terminal and checks that the model foretells the
/// echo exactly; a final `Z` proves that nothing more came.
fn check_against_kernel(pty: &Pty, reads: &[Vec<u8>]) {
    let m = pty.modes();
    let mut d = Discipline::default();
    let mut want = Vec::new();
    for keys in reads {
        match model_echo(&m, &mut d, keys) {
            Some(e) => want.extend_from_slice(&e),
            None => return,
        }
        pty.type_keys(keys);
    }
    want.extend_from_slice(&model_echo(&m, &mut d, b"Z").unwrap());
    pty.type_keys(b"Z");
    let got = pty.read(want.len());
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want),
        "keys {reads:?}"
    );
}

#[test]
fn the_model_echoes_editing_keys_as_the_kernel_does() {
    for reads in [
        vec![b"echo SECRET\r".to_vec()],
        vec![b"ab\x7f".to_vec(), b"\x7f\x7f".to_vec(), b"c\r".to_vec()],
        vec![b"x\x1b[A\r".to_vec()],
        vec![b"one two\x17\x17\x17three\r".to_vec()],
        vec![b"kill me\x15again\r".to_vec()],
        vec![b"zz\x12yy\r".to_vec()],
        vec![b"\x16\x01\x16\x7f\r".to_vec()],
        vec!["\u{20ac}\u{e9}\x7f\x7f\r".as_bytes().to_vec()],
        vec![b"\x01\x7f\x1b\x15\r".to_vec()],
        vec![b"eof\x04".to_vec(), b"\x04".to_vec()],
        vec![b"tab\tx\x7f\r".to_vec()],
    ] {
        check_against_kernel(&Pty::new(), &reads);
    }
    // Without the echo of control characters, a kill that echoes the kill key.
    let pty = Pty::new();
    pty.set(|t| {
        t.local_flags
            .remove(LocalFlags::ECHOCTL | LocalFlags::ECHOKE)
    });
    check_against_kernel(&pty, &[b"a\x01b\x7f\x15c\r".to_vec()]);
    // Erase that echoes the erase key.
    let pty = Pty::new();
    pty.set(|t| t.local_flags.remove(LocalFlags::ECHOE));
    check_against_kernel(&pty, &[b"abc\x7f\x7f\r".to_vec()]);
    // UTF-8 aware erase.
    let pty = Pty::new();
    pty.set(|t| t.input_flags.insert(termios::InputFlags::IUTF8));
    check_against_kernel(&pty, &["d\u{e9}\u{20ac}\x7f\x7f\x17\r".as_bytes().to_vec()]);
    // Non-canonical input with echo (`read -n 1`).
    let pty = Pty::new();
    pty.set(|t| t.local_flags.remove(LocalFlags::ICANON));
    check_against_kernel(&pty, &[b"raw\r\n\x7f\x01".to_vec()]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Any keys (text, UTF-8, Enter, the terminal's editing keys, escapes, Ctrl-D; not the
    /// signal or flow-control keys, which act on processes and output) typed in any reads.
    #[test]
    fn the_model_foretells_the_kernels_echo(
        reads in proptest::collection::vec(
            proptest::collection::vec(
                prop_oneof![
                    8 => proptest::char::range('a', 'z').prop_map(|c| vec![c as u8]),
                    2 => Just(b" ".to_vec()),
                    1 => Just("\u{e9}".as_bytes().to_vec()),
                    1 => Just("\u{20ac}".as_bytes().to_vec()),
                    2 => Just(b"\r".to_vec()),
                    3 => Just(b"\x7f".to_vec()),
                    1 => Just(b"\x17".to_vec()),
                    1 => Just(b"\x15".to_vec()),
                    1 => Just(b"\x12".to_vec()),
                    1 => Just(b"\x16".to_vec()),
                    1 => Just(b"\x1b[A".to_vec()),
                    1 => Just(b"\x01".to_vec()),
                    1 => Just(b"\t".to_vec()),
                    1 => Just(b"\x04".to_vec()),
                ],
                1..6,
            ).prop_map(|v| v.concat()),
            1..6,
        ),
        utf8 in proptest::bool::ANY,
    ) {
        let pty = Pty::new();
        if utf8 {
            pty.set(|t| t.input_flags.insert(termios::InputFlags::IUTF8));
        }
        check_against_kernel(&pty, &reads);
    }
}

/// Types `keys` at output position `pos` under the default modes.
fn typed(t: &mut Tracker, pos: u64, keys: &[u8]) -> Vec<(BatchId, Range<usize>)> {
    t.typed(1, pos, keys, &EchoModes::default(), true)
}

fn fates(t: &Tracker, d: &Decision) -> Vec<(String, Fate)> {
    t.lines
        .iter()
        .map(|l| {
            (
                String::from_utf8_lossy(&l.text).into_owned(),
                d.fate(l.id).unwrap(),
            )
        })
        .collect()
}

#[test]
fn keys_split_into_the_lines_the_terminal_hands_over() {
    let mut t = Tracker::new();
    let pieces = typed(&mut t, 0, b"ls -l\r echo SECRET\x7f\x7fXY\rpar");
    assert_eq!(
        pieces.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>(),
        [0..6, 6..23, 23..26]
    );
    assert_eq!(
        t.texts(),
        [
            ("ls -l".to_string(), true),
            (" echo SECRXY".to_string(), true),
            ("par".to_string(), false)
        ]
    );
    // The echo of each batch, in order, right where it was typed: found, certain.
    t.scan(0, b"ls -l\r\n echo SECRET\x08 \x08\x08 \x08XY\r\npar");
    assert!(!t.searching());
    assert!(
        t.batches
            .iter()
            .all(|b| matches!(b.echo, Echo::Found { certain: true, .. }))
    );
}

#[test]
fn a_command_that_read_its_lines_keeps_them_and_the_shell_run_decides_the_rest() {
    let mut t = Tracker::new();
    typed(&mut t, 10, b"yes\r");
    t.scan(10, b"yes\r\n");
    typed(&mut t, 20, b"git st");
    t.scan(20, b"git st");
    // The command ended at 30 and no whole line waited: it read `yes`; `git st` is the
    // shell's, whose verdict is not known yet.
    let d = t.decide(Reader::Unknown, Some(30));
    assert_eq!(
        fates(&t, &d),
        [
            ("yes".to_string(), Fate::Keep),
            ("git st".to_string(), Fate::Strip)
        ]
    );
    assert_eq!(t.removals(&d), vec![20..26]);
    assert!(!t.loses_output(&d, 30));
    let plan = t.carry_out(&d);
    assert_eq!(plan.keys_out.len(), 1);
    // Finished at the prompt and recorded: its keys are written then.
    t.close_windows(40);
    let d = t.decide(
        Reader::Ran {
            line: "git status",
            typed: None,
            hidden: false,
        },
        None,
    );
    assert_eq!(fates(&t, &d), [("git st".to_string(), Fate::Keep)]);
    let plan = t.carry_out(&d);
    assert_eq!(plan.keys_in, [(1, b"git st".to_vec())]);
    assert!(t.is_idle());
}

#[test]
fn lines_before_the_one_the_shell_ran_were_read_before_it_and_those_after_wait() {
    let mut t = Tracker::new();
    typed(
        &mut t,
        0,
        b"y\recho one\rfor i in 1\rdo x\rdone\r echo SECRET\r",
    );
    t.close_windows(100);
    let d = t.decide(
        Reader::Ran {
            line: "for i in 1\ndo x\ndone",
            typed: None,
            hidden: false,
        },
        None,
    );
    let f: Vec<Fate> = fates(&t, &d).into_iter().map(|(_, f)| f).collect();
    assert_eq!(
        f,
        [
            Fate::Keep,
            Fate::Keep,
            Fate::Keep,
            Fate::Keep,
            Fate::Keep,
            Fate::Strip
        ]
    );
    t.carry_out(&d);
    // A private line: everything typed ahead goes, keys and all.
    let d = t.decide(
        Reader::Ran {
            line: " echo SECRET",
            typed: None,
            hidden: true,
        },
        None,
    );
    assert_eq!(fates(&t, &d), [(" echo SECRET".to_string(), Fate::Drop)]);
    let plan = t.carry_out(&d);
    assert!(plan.keys_in.is_empty());
    assert!(t.is_idle());
}

#[test]
fn a_line_the_shell_changed_waits_and_history_expansion_matches_as_typed() {
    let mut t = Tracker::new();
    typed(&mut t, 0, b"ls\x1b[A\r!!\r");
    let ran = |line, typed| Reader::Ran {
        line,
        typed,
        hidden: false,
    };
    // The arrow key made the line editor run something else: nothing matches, all wait.
    let d = t.decide(ran("cat notes", None), None);
    assert!(fates(&t, &d).iter().all(|(_, f)| *f == Fate::Strip));
    let d = t.decide(ran("echo one", Some("!!")), None);
    assert_eq!(
        fates(&t, &d),
        [
            ("ls\x1b[A".to_string(), Fate::Keep),
            ("!!".to_string(), Fate::Keep)
        ]
    );
}

#[test]
fn ctrl_c_throws_the_line_away_and_an_empty_line_matches_nothing_ran() {
    let mut t = Tracker::new();
    typed(&mut t, 0, b"rm -rf x\x03");
    typed(&mut t, 0, b"\r");
    t.scan(0, b"^C\r\n");
    let d = t.decide(Reader::NothingRan, None);
    assert_eq!(
        fates(&t, &d),
        [("".to_string(), Fate::Keep), ("".to_string(), Fate::Keep)]
    );
    // The signal key's echo replaces what the terminal threw away.
    assert!(
        t.batches
            .iter()
            .all(|b| matches!(b.echo, Echo::Found { certain: true, .. }))
    );
}

#[test]
fn an_echo_after_other_output_may_be_a_lookalike_so_all_from_it_may_be_it() {
    let mut t = Tracker::new();
    typed(&mut t, 5, b" x\r");
    t.scan(0, b"tick\nta x\r\ntock\n");
    let d = t.decide(Reader::Unknown, None);
    assert!(t.loses_output(&d, 100));
    // The echo is at the first place its bytes are, or later.
    assert_eq!(t.removals(&d), vec![7..u64::MAX]);
    // They come again before the shell runs a line: either may be the echo.
    t.scan(16, b"and x\r\n");
    t.close_windows(50);
    assert_eq!(t.removals(&d), vec![7..50]);
    assert!(t.loses_output(&d, 100));
}

/// Regression: under load the terminal echoed a key typed ahead only after the command's next
/// output (the kernel echoes from a worker thread); all from the key on was taken out, and the
/// command's record lost output the user saw.
#[test]
fn an_echo_after_other_output_whose_bytes_are_there_once_is_taken_out_alone() {
    let mut t = Tracker::new();
    typed(&mut t, 5, b" x\r");
    t.scan(0, b"tick\nta x\r\ntock\n");
    t.scan(16, b"more output");
    t.close_windows(50);
    let d = t.decide(Reader::Unknown, None);
    assert!(!t.loses_output(&d, 100));
    assert_eq!(t.removals(&d), vec![7..11]);
}

/// The same bytes as the echo of a later key of the line, found at a certain place, are that
/// key's echo, not these bytes again.
#[test]
fn the_echo_of_a_later_key_is_not_the_bytes_again() {
    let mut t = Tracker::new();
    typed(&mut t, 0, b"T");
    t.scan(0, b"<1>T");
    typed(&mut t, 4, b"XT");
    t.scan(4, b"XT<2>");
    t.close_windows(20);
    let d = t.decide(Reader::Unknown, None);
    assert_eq!(t.removals(&d), vec![3..6]);
    assert!(!t.loses_output(&d, 20));
}

/// The shell ran a private line and drops what it held from the command's end on: the echo's
/// bytes coming again there (the line editor shows the line) do not matter.
#[test]
fn bytes_of_an_echo_again_only_in_what_is_dropped_leave_the_echo_alone_taken_out() {
    let mut t = Tracker::new();
    typed(&mut t, 5, b" x\r");
    t.scan(0, b"tick\nta x\r\ntock\n");
    // The command ends at 16; the shell shows the line at its prompt.
    t.scan(16, b"$  x\r\n");
    t.close_windows(30);
    let d = t.decide(Reader::Unknown, None);
    assert_eq!(t.removals(&d), vec![7..30]);
    let d = t.decide(Reader::Unknown, None).dropping_from(16);
    assert_eq!(t.removals(&d), vec![7..11]);
    // Again before what is dropped: all from the first.
    let d = t.decide(Reader::Unknown, None).dropping_from(19);
    assert_eq!(t.removals(&d), vec![7..30]);
}

#[test]
fn a_search_that_passes_the_shells_next_line_only_takes_an_echo_right_there() {
    let mut t = Tracker::new();
    typed(&mut t, 0, b"ab");
    t.close_windows(10);
    t.scan(0, b"0123456789");
    assert!(t.searching());
    t.scan(10, b"ab-out");
    assert!(!t.searching());
    assert!(matches!(
        t.batches[0].echo,
        Echo::Found { certain: true, .. }
    ));
    let mut t = Tracker::new();
    typed(&mut t, 0, b"ab");
    t.close_windows(10);
    t.scan(0, b"0123456789xab");
    assert!(!t.searching());
    assert_eq!(t.batches[0].echo, Echo::Unknown);
}

#[test]
fn keys_past_the_bounds_are_not_kept_and_all_after_them_may_be_their_echo() {
    let mut t = Tracker::new();
    // Lines typed ahead whose echo never came, until the bounds: past the bytes kept, keys are
    // not kept; past the number of reads, not followed one by one.
    let mut line = vec![b'a'; 3000];
    line.push(b'\r');
    let mut n = 0;
    while !typed(&mut t, 0, &line).is_empty() {
        n += 1;
        assert!(n <= MAX_BATCHES);
    }
    assert!(t.full());
    assert!(t.bytes <= TRACK_CAP);
    assert!(
        t.batches
            .iter()
            .any(|b| b.unwritable && b.echo == Echo::Unknown)
    );
    assert!(typed(&mut t, 7, b"more").is_empty());
    let d = t.decide(Reader::Unknown, None);
    assert!(
        t.removals(&d)
            .iter()
            .any(|r| r.start == 0 && r.end == u64::MAX)
    );
    assert!(t.loses_output(&d, 100));
}

#[test]
fn only_lines_whose_echo_is_out_of_everything_held_are_forgotten() {
    let mut t = Tracker::new();
    let mut line = vec![b'b'; 3000];
    line.push(b'\r');
    let mut pos = 0;
    while !t.full() {
        typed(&mut t, pos, &line);
        let mut echo = line.clone();
        echo.push(b'\n');
        t.scan(pos, &echo);
        pos += echo.len() as u64;
    }
    let lines = t.lines.len();
    // Not decided yet: their echo may still have to be taken out.
    t.shed(pos);
    assert_eq!(t.lines.len(), lines);
    // Kept out and written without their echo: the oldest go, up to what is still held.
    let d = t.decide(Reader::Unknown, None);
    t.carry_out(&d);
    t.shed(3002 * 3);
    assert_eq!(t.lines.len(), lines - 3);
    t.shed(pos);
    assert!(!t.full());
}

#[test]
fn a_long_line_never_ended_is_followed_past_the_bounds() {
    // A key and an erase at a time, thousands of times, into a command that reads nothing.
    let mut t = Tracker::new();
    let mut pos = 0;
    for _ in 0..3 * MAX_BATCHES {
        for (key, echo) in [(&b"x"[..], &b"x"[..]), (b"\x7f", b"\x08 \x08")] {
            if t.full() {
                // What the recorder does: what it held goes without the echo, then this.
                let d = t.decide(Reader::Unknown, None);
                t.carry_out(&d);
                t.shed(pos);
                assert!(!t.full());
            }
            assert!(!typed(&mut t, pos, key).is_empty());
            t.scan(pos, echo);
            pos += echo.len() as u64;
        }
    }
    assert_eq!(t.lines.len(), 1);
    assert!(t.overflow.is_none());
}
