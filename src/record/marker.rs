//! Finds omnish's own markers in the shell's output and separates them from everything else.
//!
//! The hooks in `shell/` emit these OSC sequences, BEL-terminated (`ESC \` is accepted too).
//! Each starts with a credential `K`: the session's random token `T`, or, for the few markers a
//! prompt string has to hold as text, a nonce the hooks announced with `T` just before:
//!
//! | bytes after `ESC ]`           | `K`                | meaning                                  |
//! |-------------------------------|--------------------|------------------------------------------|
//! | `133;K;A`                     | `T`, prompt nonce  | prompt start                             |
//! | `133;K;B`                     | `T`, prompt nonce  | prompt end, typed input follows (bash PS1) |
//! | `133;K;B;k=c`                 | `T`, prompt nonce  | continuation prompt end (bash PS2)       |
//! | `133;K;C`                     | `T`, prompt nonce  | input end, output start                  |
//! | `133;T;D;<status>`            | `T`                | end of the last command, if one ran, with `$?` |
//! | `133;K;Z`                     | `T`, end nonce     | output end: zsh's PROMPT_SP filler follows |
//! | `633;T;E;<escaped>`           | `T`                | the command line, escaped                |
//! | `633;T;P;Cwd=<escaped>`       | `T`                | the working directory, escaped           |
//! | `633;T;P;Typed=<escaped>`     | `T`                | the line as typed, before history expansion (zsh) |
//! | `633;T;P;HistIgnoreSpace=1`   | `T`                | a leading space keeps this line out of history |
//! | `633;T;P;Exec=1`              | `T`                | the hooks saw this line exec a bash or zsh |
//! | `633;T;P;Private=1`           | `T`                | the shell kept this line out of history on purpose |
//! | `633;T;P;Unsaved=<escaped>`   | `T`                | bash did not save this line; its last entry is this |
//! | `633;T;P;Waiting=0`           | `T`                | after `D`: no whole line typed ahead waits for the shell |
//! | `633;T;P;Nonce=<hex>`         | `T`                | the prompt nonce: valid for `A`, `B`, `C` until the next `C` |
//! | `633;T;P;EndNonce=<hex>`      | `T`                | the end nonce: valid for `Z` until the next `D` |
//! | `633;T;P;Nest=<token>`        | any known `T`      | a shell started from the running command has this token |
//! | `633;T;P;Shell=<escaped>`     | `T`                | the shell's name (nested shells say it)  |
//! | `633;T;P;User=<escaped>`      | `T`                | the user the shell runs as               |
//! | `633;T;P;Host=<escaped>`      | `T`                | the host the shell runs on               |
//! | `633;T;P;Key=ask` / `Key=fix` | `T`                | the ask or fix key, pressed in a shell omnish is not installed beside (see `record::farkey`) |
//! | `633;R;P;NestKey=<hex>`       | registration key   | `omnish nest` will start a program that asks with this request key |
//! | `633;R;P;NestFail=<code>`     | registration key   | `omnish nest` runs its program as it is (see [`crate::record::nest`]) |
//! | `633;R;P;Pause=<seconds>`     | registration key   | `omnish pause`: keep nothing for that long (0: until resumed) |
//! | `633;R;P;Resume=1`            | registration key   | `omnish resume`: keep commands again     |
//! | `633;Q;Q;<code>`              | a request key `Q`  | a bootstrap asks for the hooks of this shell (once per key) |
//! | `633;N;P;Nest=<token>`        | a nest key `N`     | the shell the bootstrap started has this token (once per key) |
//! | `633;N;P;NestFail=<code>`     | a nest key `N`     | the bootstrap could not hook it: it runs as it is |
//! | `633;F;P;Nest=<token>`        | a far key `F`      | a shell started inside the far shell `F` was given to has this token |
//!
//! The last six reach shells omnish cannot hand the token (sudo, ssh, containers: see
//! [`crate::record::nest`]). The registration key sits in omnish's private directory, for
//! `omnish nest`; a request key, which travels in the program's arguments, and a nest key, which
//! the relay types to the bootstrap, are each good for one marker. A far key comes with a nest
//! key: it belongs to the far shell that nest key announces, is good for `Nest=` only, as often
//! as shells start inside that far shell (a `bash` typed there), and for no marker once that
//! shell has ended.
//!
//! Shells nested in the recorded one (a `bash` typed at its prompt) take tokens of their own: the
//! scanner keeps the credentials of each shell, innermost last. `Nest` pushes a shell, or
//! replaces the innermost after its `Exec=1`; a marker carrying an outer shell's credential means
//! the shells inside it are gone ([`Marker::ShellsEnded`] comes first).
//!
//! Escaping (as VS Code's OSC 633): `\` → `\\`, `;` and bytes below 0x20 and 0x7f → `\xHH`.
//!
//! The token comes first, so a marker is known to be ours 38 bytes in: its payload then streams
//! into a bounded [`LineBuilder`] (a command line of any length costs at most
//! [`COMMAND_LINE_CAP`] chars, cut and marked past it), and nothing that carries the token is
//! ever handed back as output. A sequence whose credential does not match is ordinary output and
//! passes through untouched: `cat` of a log full of OSC 133, a nested shell or ssh with their own
//! integration can never forge or end a command. Our own markers are removed from the byte
//! stream.
//!
//! The token lives in shell variables only; no prompt string holds it as text, since a prompt
//! string may be exported (`export PS1`) or printed (`echo "$PS1"`). bash expands PS1, PS2 and PS0
//! under `promptvars`, so they name the variables holding the markers. Without it (bash
//! `shopt -u promptvars`, and zsh's PROMPT_EOL_MARK, which zsh expands without parameters unless
//! PROMPT_SUBST is set), the prompt strings hold a nonce instead, announced with the token by
//! the hook that runs just before, and spent before anything the shell runs could read it: the
//! prompt nonce at the output start, the end nonce at the command end. A nonce authenticates
//! only the markers its prompt string needs, so a spent or stolen one forges nothing: the end
//! nonce, live while the command runs, only marks where zsh's filler starts, and the recorder
//! keeps the last such mark before the command end, which zsh prints itself.
//!
//! The scanner is a small state machine rather than a full terminal parser: it only has to know
//! where an OSC starts and ends, which it decides exactly as `vte` does (any ESC ends an OSC,
//! CAN/SUB abort it; a property test checks the two agree). It holds back at most a few dozen
//! bytes of a candidate marker (an unterminated `ESC ]133;` flood from program output costs
//! nothing and is released as ordinary output at once).

use crate::record::line::{COMMAND_LINE_CAP, Line, LineBuilder};

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

/// Most bytes of a marker's kind (`P;HistIgnoreSpace=1`, `D;130`) before its value.
const MAX_HEADER: usize = 64;
/// Most chars kept of a working directory (cut past it like a command line): with a command
/// line and a typed line of [`COMMAND_LINE_CAP`] chars, a record stays well under the 16 MiB a
/// line of `commands.jsonl` may take.
const CWD_CAP: usize = 64 * 1024;
/// Most chars kept of a shell's, user's or host's name (and of a nested shell's token, which is
/// 32).
const NAME_CAP: usize = 256;
/// Longest nonce accepted (hex digits).
const MAX_NONCE: usize = 32;
/// Most bytes of a marker confirmed by a nonce (`ESC ]133;nonce;B;k=c`).
const MAX_NONCED: usize = 6 + MAX_NONCE + 1 + 8;

/// One of the hooks' markers, credential checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    PromptStart,
    PromptEnd,
    /// The end of a continuation prompt (PS2): the next line of a multi-line command follows.
    ContinuationEnd,
    OutputStart,
    /// The shell is back at its prompt with this `$?`; it ends the open command, if any (none
    /// after an empty line or Ctrl-C at the prompt).
    CommandEnd(i32),
    OutputEnd,
    CommandLine(Line),
    Cwd(Line),
    /// The line as the user typed it, before history expansion (zsh's line editor buffer).
    Typed(Line),
    /// The shell keeps lines starting with a space out of its history (bash `ignorespace` /
    /// `ignoreboth` for a line it did not save, zsh `HIST_IGNORE_SPACE`): such a line is private.
    HistIgnoreSpace,
    /// The shell kept this line out of its history on purpose (bash `set +o history`, a zsh
    /// `zshaddhistory` hook that refused it): it is private.
    Private,
    /// bash did not save this line; its last history entry is this. A line that repeats it
    /// was left out as a duplicate (ignoredups); any other was kept out on purpose
    /// (ignorespace, HISTIGNORE) and is private.
    Unsaved(Line),
    /// The hooks saw that this line replaces the shell with a bash or zsh (and prepared to hook
    /// it, or said why they cannot).
    ExecAnnounced,
    /// Checked after the command's end marker: no whole line typed ahead waits for the shell,
    /// so the command read the lines typed while it ran (see [`crate::record::typeahead`]).
    NoLineWaiting,
    /// A shell started from the running command (`Nest=<token>`, carried by the token of any
    /// shell the scanner knows) and is now the innermost: its markers carry `token`. With
    /// `replaces`, it replaced the innermost shell, whose last line was an exec of a shell
    /// (`Exec=1`); otherwise it is nested in that shell's running command.
    ShellStarted {
        token: String,
        replaces: bool,
    },
    /// A marker came from the shell at `depth` while shells deeper than it were known: they are
    /// gone (the inner shell exited, or was killed). Comes right before that marker; `status`
    /// is its status when that marker is the command end (the exit status of the inner shell).
    ShellsEnded {
        depth: u32,
        status: Option<i32>,
    },
    /// The shell's program name (`bash`, `zsh`), as the hooks of a nested shell say it.
    Shell(Line),
    /// The user the shell runs as.
    User(Line),
    /// The host the shell runs on.
    Host(Line),
    /// `omnish nest` registered a request key: the running command will ask for hooks.
    NestRegistered,
    /// A bootstrap asks for the hooks of `shell` (a code: `bash`, `zsh`, or the program's path
    /// when it is neither); the relay answers by typing them (see [`crate::record::nest`]).
    NestRequest {
        shell: String,
    },
    /// `omnish nest`, or a bootstrap, runs its program as it is, for this reason (a code).
    NestFailed(String),
    /// `omnish pause`: the commands that start from now on, for this many seconds (`None`:
    /// until resumed), are kept as private ones.
    Pause(Option<u64>),
    /// `omnish resume`: commands are kept again.
    Resume,
    /// The ask or fix key was pressed in a shell on the far side of `omnish nest`: the relay
    /// runs `omnish ask` or `omnish fix` for it (see `record::farkey`).
    Key(KeyAction),
}

/// What a key pressed in a far shell asks the relay for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAction {
    Ask,
    Fix,
}

/// What the scanner finds, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Bytes to forward to the terminal and record as output.
    Text(&'a [u8]),
    Marker(Marker),
}

/// Which credential a marker carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cred {
    Token,
    PromptNonce,
    EndNonce,
    /// The registration key of `omnish nest`.
    Register,
    /// A request key registered by `omnish nest` (one marker).
    Request,
    /// A nest key the relay typed to a bootstrap (one marker).
    NestKey,
    /// The far key of a live far shell (`Nest=` only, any number of them).
    FarKey,
}

/// Most request keys (and nest keys) waiting at once; the oldest goes first.
const MAX_ONE_TIME: usize = 8;
/// Most bytes of a nest marker's body (`P;NestKey=` and 32 hex digits, `Q;` and a shell's
/// code, `P;NestFail=` and a reason's code).
const MAX_NEST_BODY: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// `held` is `ESC`, which ended the previous call.
    Esc,
    /// `held` is `ESC ]`, then the start of `133;` or `633;`, then credential bytes that still
    /// match one.
    Candidate,
    /// A marker confirmed by the token: its body streams into `body`, nothing is held.
    Ours,
    /// Ours, and an ESC came: `\` ends it; anything else breaks it.
    OursEsc,
    /// A marker confirmed by a nonce: `held` keeps it whole (it is short) until its terminator.
    Nonced(Cred),
    /// Nonced, and an ESC came.
    NoncedEsc(Cred),
    /// An OSC whose credential began as the token's and then differed: dropped to its end,
    /// as a terminal would swallow it (BEL ends it; ESC, CAN and SUB end it and are output).
    Swallow,
}

/// The credentials of one shell: the session's own shell first, then each shell nested in the
/// one before (see [`Marker::ShellStarted`]).
#[derive(Debug, Clone)]
struct Creds {
    token: Vec<u8>,
    prompt_nonce: Option<Vec<u8>>,
    end_nonce: Option<Vec<u8>>,
    /// The shell's last line execs a shell (`Exec=1`, until its next prompt): a shell that
    /// announces itself now replaces it.
    exec: bool,
    /// The far key of a far shell (one `omnish nest` started): shells started inside it
    /// announce themselves with it, for as long as this shell lives.
    far_key: Option<Vec<u8>>,
}

impl Creds {
    fn new(token: &[u8]) -> Creds {
        Creds {
            token: token.to_vec(),
            prompt_nonce: None,
            end_nonce: None,
            exec: false,
            far_key: None,
        }
    }
}

/// Most shells nested in one another that the scanner follows (a deeper one is not hooked: its
/// announcement is dropped and its markers are output).
const MAX_LEVELS: usize = 16;

/// Splits a byte stream into text and markers; feed it reads of any size.
pub struct Scanner {
    levels: Vec<Creds>,
    /// `omnish nest`'s registration key, request keys, nest keys (see the module docs).
    register: Option<Vec<u8>>,
    requests: std::collections::VecDeque<Vec<u8>>,
    /// Nest keys, each with the far key the shell it announces gets.
    nest_keys: std::collections::VecDeque<(Vec<u8>, Option<Vec<u8>>)>,
    /// The one-time key of the marker being held, spent when the marker is whole.
    one_time: Option<Vec<u8>>,
    /// The far key of the nest key just spent, for the shell it announces.
    far_pending: Option<Vec<u8>>,
    /// The level whose credential the marker being read carries.
    level: usize,
    state: State,
    held: Vec<u8>,
    /// 133 or 633, once the candidate's prefix is known.
    number: u16,
    body: Option<Body>,
}

/// Where the current call is: the start of its pending text run (`None` inside our marker), and
/// where the held candidate began in it (`None` when it was held from an earlier call).
struct Call {
    text_start: Option<usize>,
    cand_at: Option<usize>,
}

const PREFIX_133: &[u8] = b"\x1b]133;";
const PREFIX_633: &[u8] = b"\x1b]633;";

impl Scanner {
    pub fn new(token: &str) -> Scanner {
        Scanner {
            levels: vec![Creds::new(token.as_bytes())],
            register: None,
            requests: std::collections::VecDeque::new(),
            nest_keys: std::collections::VecDeque::new(),
            one_time: None,
            far_pending: None,
            level: 0,
            state: State::Ground,
            held: Vec::new(),
            number: 0,
            body: None,
        }
    }

    /// The key `omnish nest` registers request keys with (kept in omnish's private directory).
    pub fn set_register_key(&mut self, key: &str) {
        self.register = Some(key.as_bytes().to_vec()).filter(|k| !k.is_empty());
    }

    /// A nest key the relay is about to type to a bootstrap: good for one `Nest=` or
    /// `NestFail=` marker. The shell it announces gets `far_key`, good for the `Nest=` of
    /// shells started inside that one while it lives.
    pub fn allow_nest_key(&mut self, key: &str, far_key: Option<&str>) {
        if self.nest_keys.len() >= MAX_ONE_TIME {
            self.nest_keys.pop_front();
        }
        let far = far_key
            .map(|k| k.as_bytes().to_vec())
            .filter(|k| !k.is_empty());
        self.nest_keys.push_back((key.as_bytes().to_vec(), far));
    }

    /// Whether bytes of a possible marker are held back that could be released as output if
    /// nothing more comes ([`Scanner::flush`]). Bytes that may be part of the token are never
    /// released: they wait for the bytes that decide.
    pub fn holding(&self) -> bool {
        match self.state {
            State::Esc | State::Nonced(_) | State::NoncedEsc(_) => true,
            State::Candidate => self.held.len() <= PREFIX_133.len(),
            _ => false,
        }
    }

    /// Bytes held back, for tests and the fuzz target: a few dozen at most.
    pub fn held_len(&self) -> usize {
        self.held.len()
    }

    /// Scans `input`, calling `sink` with text runs and markers in order. Bytes of an unfinished
    /// candidate marker are held until a later call decides what they are.
    ///
    /// Output without our markers comes out as one text run per call, however many escape
    /// sequences it holds: a candidate that began in this call and turns out not to be ours
    /// stays part of the run around it, and only an OSC is ever held.
    pub fn feed(&mut self, input: &[u8], sink: &mut dyn FnMut(Piece<'_>)) {
        let mut call = Call {
            text_start: match self.state {
                State::Ours | State::OursEsc | State::Swallow => None,
                _ => Some(0),
            },
            cand_at: None,
        };
        let mut i = 0;
        while i < input.len() {
            match self.state {
                State::Ground => match osc_start().find(&input[i..]) {
                    Some(k) => {
                        let at = i + k;
                        self.held.extend_from_slice(b"\x1b]");
                        self.state = State::Candidate;
                        call.cand_at = Some(at);
                        i = at + 2;
                    }
                    // An ESC ending the input may start an OSC.
                    None if input[input.len() - 1] == ESC => {
                        self.held.push(ESC);
                        self.state = State::Esc;
                        call.cand_at = Some(input.len() - 1);
                        i = input.len();
                    }
                    None => i = input.len(),
                },
                // Only at the start of a call: an ESC ended the previous one.
                State::Esc => {
                    if input[i] == b']' {
                        self.held.push(b']');
                        self.state = State::Candidate;
                        i += 1;
                    } else {
                        self.reject(&mut call, i, input, sink);
                    }
                }
                State::Candidate => {
                    let b = input[i];
                    if b < 0x20 {
                        // BEL or ESC ends the OSC, CAN/SUB abort it, other C0 bytes are no
                        // part of ours: before the credential is whole, none of it is ours.
                        self.reject(&mut call, i, input, sink);
                    } else if self.held.len() < PREFIX_133.len() {
                        self.held.push(b);
                        let n = self.held.len();
                        if self.held[..] == PREFIX_133[..n] || self.held[..] == PREFIX_633[..n] {
                            i += 1;
                        } else {
                            self.held.pop();
                            self.reject(&mut call, i, input, sink);
                        }
                    } else if b == b';' {
                        match self.credential() {
                            Some(cred) => {
                                i += 1;
                                self.number = if self.held[2] == b'1' { 133 } else { 633 };
                                self.confirm(cred, &mut call, input, sink);
                            }
                            None => self.reject(&mut call, i, input, sink),
                        }
                    } else {
                        self.held.push(b);
                        if self.credential_prefix() {
                            i += 1;
                        } else {
                            self.held.pop();
                            self.reject(&mut call, i, input, sink);
                        }
                    }
                }
                State::Ours => {
                    let rest = &input[i..];
                    let n = rest.iter().position(|&b| b < 0x20).unwrap_or(rest.len());
                    if let Some(body) = self.body.as_mut() {
                        body.feed(&rest[..n]);
                    }
                    i += n;
                    if i < input.len() {
                        match input[i] {
                            BEL => {
                                i += 1;
                                self.finish_ours(&mut call, i, sink);
                            }
                            ESC => {
                                i += 1;
                                self.state = State::OursEsc;
                            }
                            // CAN and SUB abort an OSC: the marker is dropped, the byte is
                            // output.
                            CAN | SUB => self.drop_ours(&mut call, i),
                            // Another control byte is no part of our payloads (a terminal
                            // ignores it inside an OSC): the marker is broken, and dropped at
                            // its end.
                            _ => {
                                if let Some(body) = self.body.as_mut() {
                                    body.broken = true;
                                }
                                i += 1;
                            }
                        }
                    }
                }
                State::Swallow => match input[i] {
                    BEL => {
                        i += 1;
                        self.state = State::Ground;
                        call.text_start = Some(i);
                    }
                    ESC | CAN | SUB => {
                        self.state = State::Ground;
                        call.text_start = Some(i);
                    }
                    _ => i += 1,
                },
                State::OursEsc => {
                    if input[i] == b'\\' {
                        i += 1;
                        self.finish_ours(&mut call, i, sink);
                    } else {
                        // The ESC ended the OSC without ST: not a marker of ours. The ESC starts
                        // whatever follows.
                        self.drop_ours(&mut call, i);
                        self.held.push(ESC);
                        self.state = State::Esc;
                        call.cand_at = None;
                    }
                }
                State::Nonced(cred) => {
                    let b = input[i];
                    match b {
                        BEL => {
                            i += 1;
                            self.finish_nonced(cred, &[BEL], &mut call, i, input, sink);
                        }
                        ESC => {
                            self.held.push(ESC);
                            self.state = State::NoncedEsc(cred);
                            i += 1;
                        }
                        _ if b < 0x20 || self.held.len() > max_held(cred) => {
                            self.reject(&mut call, i, input, sink)
                        }
                        _ => {
                            self.held.push(b);
                            i += 1;
                        }
                    }
                }
                State::NoncedEsc(cred) => {
                    self.held.pop();
                    if input[i] == b'\\' {
                        i += 1;
                        self.finish_nonced(cred, b"\x1b\\", &mut call, i, input, sink);
                    } else if i > 0 {
                        // The ESC, in this call, starts a new sequence.
                        i -= 1;
                        self.reject(&mut call, i, input, sink);
                    } else {
                        // The ESC ended the previous call: it is held alone.
                        self.reject(&mut call, i, input, sink);
                        self.held.push(ESC);
                        self.state = State::Esc;
                    }
                }
            }
        }
        let end = match self.state {
            State::Ground => Some(input.len()),
            State::Ours | State::OursEsc | State::Swallow => None,
            // A candidate from an earlier call: nothing of this call is text yet.
            _ => call.cand_at,
        };
        if let (Some(start), Some(end)) = (call.text_start, end) {
            if end > start {
                sink(Piece::Text(&input[start..end]));
            }
        }
    }

    /// Gives up on a held candidate (it waited too long, or the stream ended): its bytes are
    /// text. Bytes that may be part of the token, and a marker of ours cut short, are not
    /// released; they are dropped when the stream ends.
    pub fn flush(&mut self, sink: &mut dyn FnMut(Piece<'_>)) {
        if self.holding() && !self.held.is_empty() {
            self.release(sink);
        }
    }

    fn release(&mut self, sink: &mut dyn FnMut(Piece<'_>)) {
        let held = std::mem::take(&mut self.held);
        sink(Piece::Text(&held));
        self.held = held;
        self.held.clear();
        self.state = State::Ground;
    }

    /// The held candidate is not ours: its bytes are text. Begun in this call, they stay in the
    /// text run; held from an earlier call, they go out now and a new run starts at `i`. A
    /// candidate whose credential had begun to match is dropped instead, with the rest of its
    /// OSC: its bytes may be part of the token (a hook cut off mid-marker), a terminal shows
    /// nothing of an OSC anyway, and no other program's OSC 133 or 633 goes on with a
    /// lowercase hex digit.
    fn reject(&mut self, call: &mut Call, i: usize, input: &[u8], sink: &mut dyn FnMut(Piece<'_>)) {
        let secret = self.state == State::Candidate && self.held.len() > PREFIX_133.len();
        match call.cand_at.take() {
            Some(at) if secret => {
                if let Some(start) = call.text_start {
                    if at > start {
                        sink(Piece::Text(&input[start..at]));
                    }
                }
            }
            Some(_) => {}
            None => {
                if !secret {
                    let held = std::mem::take(&mut self.held);
                    sink(Piece::Text(&held));
                    self.held = held;
                }
                call.text_start = Some(i);
            }
        }
        self.held.clear();
        if secret {
            call.text_start = None;
            self.state = State::Swallow;
        } else {
            self.state = State::Ground;
        }
    }

    /// The credential bytes held so far.
    fn held_credential(&self) -> &[u8] {
        &self.held[PREFIX_133.len()..]
    }

    /// Every credential a marker may carry now, with its level: the innermost shell's first.
    /// The keys of nesting belong to no shell: they count as the innermost's, so that they end
    /// none.
    fn candidates(&self) -> impl Iterator<Item = (usize, Cred, &[u8])> {
        let inner = self.levels.len() - 1;
        let shells = self.levels.iter().enumerate().rev().flat_map(|(n, l)| {
            [
                (Cred::Token, Some(&l.token[..])),
                (Cred::PromptNonce, l.prompt_nonce.as_deref()),
                (Cred::EndNonce, l.end_nonce.as_deref()),
            ]
            .into_iter()
            .filter_map(move |(cred, c)| c.filter(|c| !c.is_empty()).map(|c| (n, cred, c)))
        });
        let keys = self
            .register
            .iter()
            .map(|k| (Cred::Register, &k[..]))
            .chain(self.requests.iter().map(|k| (Cred::Request, &k[..])))
            .chain(self.nest_keys.iter().map(|(k, _)| (Cred::NestKey, &k[..])))
            .chain(
                self.levels
                    .iter()
                    .filter_map(|l| l.far_key.as_deref())
                    .map(|k| (Cred::FarKey, k)),
            )
            .map(move |(cred, k)| (inner, cred, k));
        shells.chain(keys)
    }

    fn credential_prefix(&self) -> bool {
        let got = self.held_credential();
        self.candidates().any(|(_, _, c)| c.starts_with(got))
    }

    fn credential(&mut self) -> Option<Cred> {
        let got = self.held_credential();
        let (level, cred) = self
            .candidates()
            .find(|(_, _, c)| *c == got)
            .map(|(level, cred, _)| (level, cred))?;
        self.one_time = matches!(cred, Cred::Request | Cred::NestKey).then(|| got.to_vec());
        self.level = level;
        Some(cred)
    }

    /// A marker of `self.level`'s shell is whole: a marker from an outer shell says the shells
    /// inside it are gone; a shell announcing itself becomes the innermost. Then the marker
    /// goes to `sink`.
    fn deliver(&mut self, marker: Marker, sink: &mut dyn FnMut(Piece<'_>)) {
        if let Marker::ShellStarted { token, .. } = &marker {
            let fresh = token.len() == 32
                && token
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                && !self.levels.iter().any(|l| l.token == token.as_bytes());
            let replaces = self.levels.last().is_some_and(|l| l.exec) && self.levels.len() > 1;
            if !fresh || (!replaces && self.levels.len() >= MAX_LEVELS) {
                self.far_pending = None;
                return;
            }
            // A far key comes with the nest key that announced the shell; a shell that
            // replaces a far shell (`exec zsh` there) keeps its far key.
            let mut far_key = self.far_pending.take();
            if replaces {
                let gone = self.levels.pop();
                far_key = far_key.or(gone.and_then(|l| l.far_key));
            }
            let mut creds = Creds::new(token.as_bytes());
            creds.far_key = far_key;
            self.levels.push(creds);
            sink(Piece::Marker(Marker::ShellStarted {
                token: token.clone(),
                replaces,
            }));
            return;
        }
        let level = self.level.min(self.levels.len() - 1);
        if level + 1 < self.levels.len() {
            self.levels.truncate(level + 1);
            let status = match marker {
                Marker::CommandEnd(st) => Some(st),
                _ => None,
            };
            sink(Piece::Marker(Marker::ShellsEnded {
                depth: level as u32,
                status,
            }));
        }
        let creds = &mut self.levels[level];
        match marker {
            Marker::OutputStart => creds.prompt_nonce = None,
            Marker::CommandEnd(_) => creds.end_nonce = None,
            Marker::ExecAnnounced => creds.exec = true,
            Marker::PromptStart => creds.exec = false,
            _ => {}
        }
        sink(Piece::Marker(marker));
    }

    /// How many shells the scanner follows: 1 for the session's own, 2 with one nested in it.
    #[cfg(test)]
    fn levels(&self) -> usize {
        self.levels.len()
    }

    /// The credential matched: a token marker is ours from here on and streams; a nonce marker
    /// is held whole until its kind says whether the nonce may carry it.
    fn confirm(
        &mut self,
        cred: Cred,
        call: &mut Call,
        input: &[u8],
        sink: &mut dyn FnMut(Piece<'_>),
    ) {
        if cred != Cred::Token {
            self.held.push(b';');
            self.state = State::Nonced(cred);
            return;
        }
        if let (Some(at), Some(start)) = (call.cand_at.take(), call.text_start) {
            if at > start {
                sink(Piece::Text(&input[start..at]));
            }
        }
        call.text_start = None;
        self.held.clear();
        self.body = Some(Body::new(self.number, &self.levels[self.level].token));
        self.state = State::Ours;
    }

    /// Our marker ended at `i`.
    fn finish_ours(&mut self, call: &mut Call, i: usize, sink: &mut dyn FnMut(Piece<'_>)) {
        self.state = State::Ground;
        call.text_start = Some(i);
        let Some(body) = self.body.take() else {
            return;
        };
        match body.finish() {
            Some(Parsed::Marker(m)) => self.deliver(m, sink),
            Some(Parsed::Nonce(n)) => self.levels[self.level].prompt_nonce = Some(n),
            Some(Parsed::EndNonce(n)) => self.levels[self.level].end_nonce = Some(n),
            // Ours but malformed: dropped.
            None => {}
        }
    }

    /// Our marker broke off before `i`; output resumes there.
    fn drop_ours(&mut self, call: &mut Call, i: usize) {
        self.body = None;
        self.state = State::Ground;
        call.text_start = Some(i);
    }

    /// A nonce marker ended at `i` (its terminator, which `held` lacks, was `terminator`).
    fn finish_nonced(
        &mut self,
        cred: Cred,
        terminator: &[u8],
        call: &mut Call,
        i: usize,
        input: &[u8],
        sink: &mut dyn FnMut(Piece<'_>),
    ) {
        // `held` is `ESC ] 133 ; nonce ; kind`.
        let body_at = PREFIX_133.len() + self.held_credential_len() + 1;
        let body = self.held.get(body_at..).unwrap_or_default();
        let value = |prefix: &[u8]| body.strip_prefix(prefix);
        let marker = match (cred, self.number, body) {
            (Cred::PromptNonce, 133, b"A") => Some(Marker::PromptStart),
            (Cred::PromptNonce, 133, b"B") => Some(Marker::PromptEnd),
            (Cred::PromptNonce, 133, b"B;k=c") => Some(Marker::ContinuationEnd),
            (Cred::PromptNonce, 133, b"C") => Some(Marker::OutputStart),
            (Cred::EndNonce, 133, b"Z") => Some(Marker::OutputEnd),
            (Cred::Register, 633, _) => {
                if let Some(key) = value(b"P;NestKey=").and_then(hex32) {
                    if self.requests.len() >= MAX_ONE_TIME {
                        self.requests.pop_front();
                    }
                    self.requests.push_back(key.into_bytes());
                    Some(Marker::NestRegistered)
                } else if let Some(secs) = value(b"P;Pause=").and_then(seconds) {
                    Some(Marker::Pause((secs > 0).then_some(secs)))
                } else if body == b"P;Resume=1" {
                    Some(Marker::Resume)
                } else {
                    value(b"P;NestFail=")
                        .and_then(nest_code)
                        .map(Marker::NestFailed)
                }
            }
            (Cred::Request, 633, _) => value(b"Q;")
                .and_then(nest_code)
                .map(|shell| Marker::NestRequest { shell }),
            (Cred::FarKey, 633, _) => {
                value(b"P;Nest=")
                    .and_then(hex32)
                    .map(|token| Marker::ShellStarted {
                        token,
                        replaces: false,
                    })
            }
            (Cred::NestKey, 633, _) => match value(b"P;Nest=").and_then(hex32) {
                Some(token) => Some(Marker::ShellStarted {
                    token,
                    replaces: false,
                }),
                None => value(b"P;NestFail=")
                    .and_then(nest_code)
                    .map(Marker::NestFailed),
            },
            _ => None,
        };
        if marker.is_some() {
            // A one-time key is spent.
            if let Some(key) = self.one_time.take() {
                self.requests.retain(|k| *k != key);
                if let Some(at) = self.nest_keys.iter().position(|(k, _)| *k == key) {
                    let (_, far) = self.nest_keys.remove(at).unwrap_or_default();
                    self.far_pending =
                        far.filter(|_| matches!(marker, Some(Marker::ShellStarted { .. })));
                }
            }
        }
        match marker {
            Some(m) => {
                if let (Some(at), Some(start)) = (call.cand_at.take(), call.text_start) {
                    if at > start {
                        sink(Piece::Text(&input[start..at]));
                    }
                }
                self.held.clear();
                self.state = State::Ground;
                call.text_start = Some(i);
                self.deliver(m, sink);
            }
            None => {
                if call.cand_at.is_none() {
                    self.held.extend_from_slice(terminator);
                }
                self.reject(call, i, input, sink);
            }
        }
    }

    /// Length of the credential of a nonce candidate (held up to its `;`).
    fn held_credential_len(&self) -> usize {
        let cred = &self.held[PREFIX_133.len()..];
        cred.iter().position(|&b| b == b';').unwrap_or(cred.len())
    }
}

/// Most bytes held of a marker confirmed by `cred` (not the token).
fn max_held(cred: Cred) -> usize {
    match cred {
        Cred::PromptNonce | Cred::EndNonce | Cred::Token => MAX_NONCED,
        Cred::Register | Cred::Request | Cred::NestKey | Cred::FarKey => {
            6 + MAX_NONCE + 1 + MAX_NEST_BODY
        }
    }
}

/// A code in a nest marker: a shell's name, a reason (`[-_./a-z0-9]`, bounded).
fn nest_code(v: &[u8]) -> Option<String> {
    (!v.is_empty()
        && v.len() <= MAX_NEST_BODY
        && v.iter()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'/')))
    .then(|| String::from_utf8_lossy(v).into_owned())
}

/// A count of seconds: 1 to 12 digits.
fn seconds(v: &[u8]) -> Option<u64> {
    (!v.is_empty() && v.len() <= 12 && v.iter().all(u8::is_ascii_digit))
        .then(|| std::str::from_utf8(v).ok()?.parse().ok())
        .flatten()
}

fn hex32(v: &[u8]) -> Option<String> {
    (v.len() == 32 && v.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| String::from_utf8_lossy(v).into_owned())
}

/// Finds `ESC ]` without stopping at every other escape sequence (colours are frequent).
fn osc_start() -> &'static memchr::memmem::Finder<'static> {
    static FINDER: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    FINDER.get_or_init(|| memchr::memmem::Finder::new(b"\x1b]"))
}

/// What a marker confirmed by the token turned out to be.
enum Parsed {
    Marker(Marker),
    Nonce(Vec<u8>),
    EndNonce(Vec<u8>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    CommandLine,
    Cwd,
    Typed,
    Unsaved,
    Nest,
    Shell,
    User,
    Host,
}

/// The body of a marker confirmed by the token, after `K;`: its kind, then for the kinds that
/// carry one, an escaped value streamed into a bounded line.
struct Body {
    number: u16,
    header: Vec<u8>,
    value: Option<(ValueKind, Value)>,
    token: Vec<u8>,
    broken: bool,
}

impl Body {
    fn new(number: u16, token: &[u8]) -> Body {
        Body {
            number,
            header: Vec::new(),
            value: None,
            token: token.to_vec(),
            broken: false,
        }
    }

    /// Bytes of the body (never a control byte).
    fn feed(&mut self, mut bytes: &[u8]) {
        while self.value.is_none() && !bytes.is_empty() && !self.broken {
            if self.header.len() >= MAX_HEADER {
                self.broken = true;
                return;
            }
            self.header.push(bytes[0]);
            bytes = &bytes[1..];
            let kind = match (self.number, &self.header[..]) {
                (633, b"E;") => Some(ValueKind::CommandLine),
                (633, b"P;Cwd=") => Some(ValueKind::Cwd),
                (633, b"P;Typed=") => Some(ValueKind::Typed),
                (633, b"P;Unsaved=") => Some(ValueKind::Unsaved),
                (633, b"P;Nest=") => Some(ValueKind::Nest),
                (633, b"P;Shell=") => Some(ValueKind::Shell),
                (633, b"P;User=") => Some(ValueKind::User),
                (633, b"P;Host=") => Some(ValueKind::Host),
                _ => None,
            };
            if let Some(kind) = kind {
                let cap = match kind {
                    ValueKind::Cwd => CWD_CAP,
                    ValueKind::Nest | ValueKind::Shell | ValueKind::User | ValueKind::Host => {
                        NAME_CAP
                    }
                    _ => COMMAND_LINE_CAP,
                };
                self.value = Some((kind, Value::new(cap, &self.token)));
            }
        }
        if let Some((_, v)) = self.value.as_mut() {
            v.feed(bytes);
        }
    }

    fn finish(self) -> Option<Parsed> {
        if self.broken {
            return None;
        }
        if let Some((kind, value)) = self.value {
            let line = value.finish()?;
            return Some(Parsed::Marker(match kind {
                ValueKind::CommandLine => Marker::CommandLine(line),
                ValueKind::Cwd => Marker::Cwd(line),
                ValueKind::Typed => Marker::Typed(line),
                ValueKind::Unsaved => Marker::Unsaved(line),
                ValueKind::Nest => Marker::ShellStarted {
                    token: line.text,
                    replaces: false,
                },
                ValueKind::Shell => Marker::Shell(line),
                ValueKind::User => Marker::User(line),
                ValueKind::Host => Marker::Host(line),
            }));
        }
        let h = &self.header[..];
        if self.number == 133 {
            let m = match h {
                b"A" => Marker::PromptStart,
                b"B" => Marker::PromptEnd,
                b"B;k=c" => Marker::ContinuationEnd,
                b"C" => Marker::OutputStart,
                b"Z" => Marker::OutputEnd,
                _ => {
                    let status = h.strip_prefix(b"D;")?;
                    Marker::CommandEnd(std::str::from_utf8(status).ok()?.parse().ok()?)
                }
            };
            return Some(Parsed::Marker(m));
        }
        let m = match h {
            b"P;HistIgnoreSpace=1" => Marker::HistIgnoreSpace,
            b"P;Exec=1" => Marker::ExecAnnounced,
            b"P;Private=1" => Marker::Private,
            b"P;Waiting=0" => Marker::NoLineWaiting,
            b"P;Key=ask" => Marker::Key(KeyAction::Ask),
            b"P;Key=fix" => Marker::Key(KeyAction::Fix),
            _ => {
                let nonce = |v: &[u8]| {
                    (!v.is_empty() && v.len() <= MAX_NONCE && v.iter().all(u8::is_ascii_hexdigit))
                        .then(|| v.to_vec())
                };
                if let Some(v) = h.strip_prefix(b"P;Nonce=") {
                    return nonce(v).map(Parsed::Nonce);
                }
                if let Some(v) = h.strip_prefix(b"P;EndNonce=") {
                    return nonce(v).map(Parsed::EndNonce);
                }
                return None;
            }
        };
        Some(Parsed::Marker(m))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    Backslash,
    /// `\x` and the hex digits so far.
    Hex(u8, u8),
}

/// An escaped value, unescaped as it streams in.
struct Value {
    line: LineBuilder,
    escape: Escape,
    broken: bool,
}

impl Value {
    fn new(cap: usize, token: &[u8]) -> Value {
        Value {
            line: LineBuilder::new(cap, Some(token)),
            escape: Escape::None,
            broken: false,
        }
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && !self.broken {
            match self.escape {
                Escape::None => {
                    let n = memchr::memchr2(b'\\', b';', bytes).unwrap_or(bytes.len());
                    self.line.push_bytes(&bytes[..n]);
                    bytes = &bytes[n..];
                    match bytes.first() {
                        Some(b'\\') => self.escape = Escape::Backslash,
                        // A raw `;`: no value of our hooks.
                        Some(_) => self.broken = true,
                        None => return,
                    }
                }
                Escape::Backslash => match bytes[0] {
                    b'\\' => {
                        self.line.push_bytes(b"\\");
                        self.escape = Escape::None;
                    }
                    b'x' | b'X' => self.escape = Escape::Hex(0, 0),
                    _ => self.broken = true,
                },
                Escape::Hex(n, v) => match (bytes[0] as char).to_digit(16) {
                    Some(d) => {
                        let v = v * 16 + d as u8;
                        if n == 1 {
                            self.line.push_bytes(&[v]);
                            self.escape = Escape::None;
                        } else {
                            self.escape = Escape::Hex(1, v);
                        }
                    }
                    None => self.broken = true,
                },
            }
            bytes = &bytes[1..];
        }
    }

    fn finish(self) -> Option<Line> {
        (!self.broken && self.escape == Escape::None).then(|| self.line.finish())
    }
}

/// Escapes a value for a marker payload, as the hooks do.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\x3b"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::line::{TOKEN_NOTE, omitted_note};
    use proptest::prelude::*;

    const T: &str = "0123abcd0123abcd0123abcd0123abcd";

    /// Text and markers with adjacent text runs merged, so splits do not matter.
    fn scan_with(s: &mut Scanner, chunks: &[&[u8]]) -> (Vec<u8>, Vec<(usize, Marker)>) {
        let mut text = Vec::new();
        let mut markers = Vec::new();
        let mut sink = |p: Piece<'_>| match p {
            Piece::Text(t) => text.extend_from_slice(t),
            Piece::Marker(m) => markers.push((text.len(), m)),
        };
        for c in chunks {
            s.feed(c, &mut sink);
        }
        s.flush(&mut sink);
        (text, markers)
    }

    fn scan_chunks(chunks: &[&[u8]]) -> (Vec<u8>, Vec<(usize, Marker)>) {
        scan_with(&mut Scanner::new(T), chunks)
    }

    fn scan(bytes: &[u8]) -> (Vec<u8>, Vec<(usize, Marker)>) {
        scan_chunks(&[bytes])
    }

    fn osc(payload: &str) -> String {
        format!("\x1b]{payload}\x07")
    }

    fn ours(number: u16, body: &str) -> String {
        osc(&format!("{number};{T};{body}"))
    }

    fn line(s: &str) -> Line {
        Line::new(s)
    }

    const N1: &str = "11111111222222223333333344444444";
    const N2: &str = "55555555666666667777777788888888";

    fn of(number: u16, token: &str, body: &str) -> String {
        osc(&format!("{number};{token};{body}"))
    }

    fn markers_of(s: &mut Scanner, input: &str) -> Vec<Marker> {
        scan_with(s, &[input.as_bytes()])
            .1
            .into_iter()
            .map(|(_, m)| m)
            .collect()
    }

    const R: &str = "9999aaaa9999aaaa9999aaaa9999aaaa";
    const Q: &str = "abcdabcdabcdabcdabcdabcdabcdabcd";
    const NK: &str = "ffff0000ffff0000ffff0000ffff0000";

    #[test]
    fn pause_and_resume_come_with_the_registration_key_only() {
        let mut s = Scanner::new(T);
        // No key known: plain output.
        let early = of(633, R, "P;Pause=60");
        assert!(markers_of(&mut s, &early).is_empty());
        s.set_register_key(R);
        assert_eq!(
            markers_of(&mut s, &of(633, R, "P;Pause=60")),
            [Marker::Pause(Some(60))]
        );
        assert_eq!(
            markers_of(&mut s, &of(633, R, "P;Pause=0")),
            [Marker::Pause(None)]
        );
        assert_eq!(
            markers_of(&mut s, &of(633, R, "P;Resume=1")),
            [Marker::Resume]
        );
        // The key is not one-time: again.
        assert_eq!(
            markers_of(&mut s, &of(633, R, "P;Resume=1")),
            [Marker::Resume]
        );
        // Not the key (the token, another key), or not a count: plain output.
        assert!(markers_of(&mut s, &ours(633, "P;Pause=60")).is_empty());
        assert!(markers_of(&mut s, &of(633, Q, "P;Pause=60")).is_empty());
        for bad in [
            "P;Pause=",
            "P;Pause=-1",
            "P;Pause=1m",
            "P;Pause=9999999999999",
            "P;Resume=0",
        ] {
            assert!(markers_of(&mut s, &of(633, R, bad)).is_empty(), "{bad}");
        }
    }

    #[test]
    fn a_request_key_is_registered_with_the_key_and_good_for_one_request() {
        let mut s = Scanner::new(T);
        s.set_register_key(R);
        // Before it is registered, a request is plain output.
        let early = of(633, Q, "Q;bash");
        let (text, m) = scan_with(&mut s, &[early.as_bytes()]);
        assert!(m.is_empty());
        assert_eq!(text, early.as_bytes());
        assert_eq!(
            markers_of(&mut s, &of(633, R, &format!("P;NestKey={Q}"))),
            [Marker::NestRegistered]
        );
        let (text, m) = scan_with(&mut s, &[of(633, Q, "Q;bash").as_bytes(), b"after"]);
        assert_eq!(text, b"after");
        assert_eq!(
            m,
            [(
                0,
                Marker::NestRequest {
                    shell: "bash".into()
                }
            )]
        );
        // Spent: the same request again is output.
        let again = of(633, Q, "Q;bash");
        let (text, m) = scan_with(&mut s, &[again.as_bytes()]);
        assert!(m.is_empty());
        assert_eq!(text, again.as_bytes());
        // The registration key carries nothing else, and the token registers nothing.
        assert!(markers_of(&mut s, &of(633, R, "P;Nest=".to_string().as_str())).is_empty());
        assert!(markers_of(&mut s, &of(633, R, "133;A")).is_empty());
        assert!(markers_of(&mut s, &ours(633, &format!("P;NestKey={Q}"))).is_empty());
        assert_eq!(
            markers_of(&mut s, &of(633, R, "P;NestFail=command")),
            [Marker::NestFailed("command".into())]
        );
    }

    #[test]
    fn a_far_key_announces_shells_inside_its_far_shell_while_it_lives_and_nothing_else() {
        const FK: &str = "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f";
        const N3: &str = "99999999888888887777777766666666";
        let started = |t: &str| Marker::ShellStarted {
            token: t.into(),
            replaces: false,
        };
        let mut s = Scanner::new(T);
        // Before its far shell announces itself, the far key is nothing.
        s.allow_nest_key(NK, Some(FK));
        assert!(markers_of(&mut s, &of(633, FK, &format!("P;Nest={N1}"))).is_empty());
        assert_eq!(
            markers_of(&mut s, &of(633, NK, &format!("P;Nest={N1}"))),
            [started(N1)]
        );
        // A shell inside the far shell, then one inside that: each with the far key.
        assert_eq!(
            markers_of(&mut s, &of(633, FK, &format!("P;Nest={N2}"))),
            [started(N2)]
        );
        assert_eq!(s.levels(), 3);
        // Said again (at its first prompts): heard once.
        assert!(markers_of(&mut s, &of(633, FK, &format!("P;Nest={N2}"))).is_empty());
        assert_eq!(
            markers_of(&mut s, &of(633, FK, &format!("P;Nest={N3}"))),
            [started(N3)]
        );
        assert_eq!(s.levels(), 4);
        // Good for nothing else: no prompt, no end, no request, no failure, and it ends no
        // shell.
        for body in [
            "133;A",
            "D;0",
            "P;Cwd=/",
            "Q;bash",
            "P;NestFail=tmp",
            "P;Key=ask",
        ] {
            assert!(markers_of(&mut s, &of(633, FK, body)).is_empty(), "{body}");
        }
        assert!(markers_of(&mut s, &of(133, FK, "D;0")).is_empty());
        assert_eq!(s.levels(), 4);
        // The far shell's own marker ends the shells inside it; the far key still works.
        markers_of(&mut s, &of(133, N1, "D;0"));
        assert_eq!(s.levels(), 2);
        // `exec zsh` in the far shell: the shell replacing it keeps the far key.
        markers_of(&mut s, &of(633, N1, "P;Exec=1"));
        const N4: &str = "44444444333333332222222211111111";
        assert_eq!(
            markers_of(&mut s, &of(633, FK, &format!("P;Nest={N4}"))),
            [Marker::ShellStarted {
                token: N4.into(),
                replaces: true
            }]
        );
        assert_eq!(s.levels(), 2);
        assert_eq!(
            markers_of(&mut s, &of(633, FK, &format!("P;Nest={N2}"))),
            [started(N2)]
        );
        // Once the far shell has ended (the session's shell marks again), the far key is
        // nothing: a key left behind on the far side forges no shell.
        markers_of(&mut s, &ours(133, "D;0"));
        assert_eq!(s.levels(), 1);
        assert!(markers_of(&mut s, &of(633, FK, &format!("P;Nest={N3}"))).is_empty());
        assert_eq!(s.levels(), 1);
        // A nest key without a far key gives its shell none.
        s.allow_nest_key(NK, None);
        markers_of(&mut s, &of(633, NK, &format!("P;Nest={N1}")));
        assert!(markers_of(&mut s, &of(633, FK, &format!("P;Nest={N2}"))).is_empty());
        assert_eq!(s.levels(), 2);
    }

    #[test]
    fn a_nest_key_starts_one_shell_nested_in_the_innermost_and_ends_none() {
        let mut s = Scanner::new(T);
        // A shell nested already: the nest keys count as the innermost's.
        markers_of(&mut s, &ours(633, &format!("P;Nest={N1}")));
        s.allow_nest_key(NK, None);
        assert_eq!(
            markers_of(&mut s, &of(633, NK, &format!("P;Nest={N2}"))),
            [Marker::ShellStarted {
                token: N2.into(),
                replaces: false
            }]
        );
        assert_eq!(s.levels(), 3);
        // Spent.
        assert!(markers_of(&mut s, &of(633, NK, &format!("P;Nest={}", "1".repeat(32)))).is_empty());
        assert_eq!(s.levels(), 3);
        s.allow_nest_key(NK, None);
        assert_eq!(
            markers_of(&mut s, &of(633, NK, "P;NestFail=tmp")),
            [Marker::NestFailed("tmp".into())]
        );
        // A nest key is good for nothing else, a bad code is nothing.
        s.allow_nest_key(NK, None);
        assert!(markers_of(&mut s, &of(633, NK, "133;A")).is_empty());
        assert!(markers_of(&mut s, &of(633, NK, "P;NestFail=Bad Code")).is_empty());
        assert!(markers_of(&mut s, &of(633, NK, "P;Nest=short")).is_empty());
        // The oldest of too many waiting keys goes.
        let keys: Vec<String> = (0..=MAX_ONE_TIME).map(|i| format!("{i:032x}")).collect();
        for k in &keys {
            s.allow_nest_key(k, None);
        }
        assert!(markers_of(&mut s, &of(633, &keys[0], "P;NestFail=tmp")).is_empty());
        assert_eq!(
            markers_of(&mut s, &of(633, &keys[1], "P;NestFail=tmp")),
            [Marker::NestFailed("tmp".into())]
        );
    }

    #[test]
    fn a_nested_shell_speaks_with_its_own_token_until_an_outer_shell_speaks() {
        let mut s = Scanner::new(T);
        // Its markers before the announcement are output.
        let (text, m) = scan_with(&mut s, &[of(133, N1, "A").as_bytes()]);
        assert!(m.is_empty() && !text.is_empty());
        let got = markers_of(
            &mut s,
            &format!(
                "{}{}{}{}",
                ours(633, &format!("P;Nest={N1}")),
                of(633, N1, "P;User=alice"),
                of(133, N1, "A"),
                of(133, N1, "C"),
            ),
        );
        assert_eq!(
            got,
            vec![
                Marker::ShellStarted {
                    token: N1.into(),
                    replaces: false
                },
                Marker::User(line("alice")),
                Marker::PromptStart,
                Marker::OutputStart,
            ]
        );
        assert_eq!(s.levels(), 2);
        // A shell nested in that one, announced with the session's token.
        let got = markers_of(
            &mut s,
            &format!(
                "{}{}",
                ours(633, &format!("P;Nest={N2}")),
                of(133, N2, "D;0")
            ),
        );
        assert_eq!(
            got[0],
            Marker::ShellStarted {
                token: N2.into(),
                replaces: false
            }
        );
        assert_eq!(s.levels(), 3);
        // The session's shell speaks: both are gone, the end's status goes with them.
        let got = markers_of(&mut s, &ours(133, "D;3"));
        assert_eq!(
            got,
            vec![
                Marker::ShellsEnded {
                    depth: 0,
                    status: Some(3)
                },
                Marker::CommandEnd(3)
            ]
        );
        assert_eq!(s.levels(), 1);
        // Their tokens are spent: output again.
        assert!(markers_of(&mut s, &of(133, N2, "A")).is_empty());
    }

    #[test]
    fn a_shell_announced_after_an_exec_replaces_the_innermost() {
        let mut s = Scanner::new(T);
        markers_of(&mut s, &ours(633, &format!("P;Nest={N1}")));
        // The session's own shell execs: no nested shell to replace, the new one nests.
        let got = markers_of(
            &mut s,
            &format!(
                "{}{}",
                of(633, N1, "P;Exec=1"),
                ours(633, &format!("P;Nest={N2}"))
            ),
        );
        assert_eq!(
            got,
            vec![
                Marker::ExecAnnounced,
                Marker::ShellStarted {
                    token: N2.into(),
                    replaces: true
                }
            ]
        );
        assert_eq!(s.levels(), 2);
        assert!(
            markers_of(&mut s, &of(133, N1, "A")).is_empty(),
            "the old token"
        );
        assert_eq!(
            markers_of(&mut s, &of(133, N2, "A")),
            vec![Marker::PromptStart]
        );
    }

    #[test]
    fn bad_announcements_are_dropped() {
        let mut s = Scanner::new(T);
        for bad in ["short", "0123ABCD0123ABCD0123ABCD0123ABCD", T] {
            assert!(markers_of(&mut s, &ours(633, &format!("P;Nest={bad}"))).is_empty());
        }
        // Without a known token, an announcement is output.
        let (text, m) = scan_with(&mut s, &[of(633, N1, &format!("P;Nest={N2}")).as_bytes()]);
        assert!(m.is_empty() && !text.is_empty());
        assert_eq!(s.levels(), 1);
    }

    #[test]
    fn an_outer_shells_end_nonce_ends_the_shells_inside_it() {
        let mut s = Scanner::new(T);
        let got = markers_of(
            &mut s,
            &format!(
                "{}{}{}{}",
                ours(633, "P;EndNonce=abcd"),
                ours(133, "C"),
                ours(633, &format!("P;Nest={N1}")),
                osc("133;abcd;Z")
            ),
        );
        assert_eq!(
            &got[2..],
            &[
                Marker::ShellsEnded {
                    depth: 0,
                    status: None
                },
                Marker::OutputEnd
            ]
        );
    }

    #[test]
    fn own_markers_are_removed_and_reported_in_place() {
        let input = format!(
            "prompt$ {}ls\r\n{}a b\r\n{}{}",
            ours(133, "B"),
            ours(133, "C"),
            ours(133, "D;0"),
            ours(133, "A"),
        );
        let (text, markers) = scan(input.as_bytes());
        assert_eq!(text, b"prompt$ ls\r\na b\r\n");
        assert_eq!(
            markers,
            vec![
                (8, Marker::PromptEnd),
                (12, Marker::OutputStart),
                (17, Marker::CommandEnd(0)),
                (17, Marker::PromptStart),
            ]
        );
    }

    #[test]
    fn forged_marker_without_token_is_plain_output() {
        let forged = format!(
            "{}{}{}{}",
            osc("133;D;0"),
            osc("133;D;1;aid=wrongtoken"),
            osc("133;f123abcd0123abcd0123abcd0123abcd;D;1"),
            // The token at the end (the old wire format) is no marker either.
            osc(&format!("133;D;1;aid={T}")),
        );
        let (text, markers) = scan(forged.as_bytes());
        assert_eq!(text, forged.as_bytes());
        assert!(markers.is_empty());
        // A credential that begins as the token and then differs, is shorter or longer, is no
        // marker; its bytes may be part of the token, so they are no output either.
        for cred in [
            &T[..31],
            &format!("{T}0")[..],
            "0123abcd0123abcd0123abcd0123abce",
        ] {
            let forged = format!("a{}b", osc(&format!("133;{cred};C")));
            let (text, markers) = scan(forged.as_bytes());
            assert!(markers.is_empty());
            assert!(text.starts_with(b"a") && text.ends_with(b"b"), "{text:?}");
            assert!(
                !String::from_utf8_lossy(&text).contains("0123abcd"),
                "{text:?}"
            );
        }
    }

    #[test]
    fn other_osc_sequences_pass_through() {
        let input = "\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x1b[31mred";
        let (text, markers) = scan(input.as_bytes());
        assert_eq!(text, input.as_bytes());
        assert!(markers.is_empty());
    }

    #[test]
    fn st_terminated_marker_is_accepted() {
        let input = format!("a\x1b]133;{T};C\x1b\\b");
        let (text, markers) = scan(input.as_bytes());
        assert_eq!(text, b"ab");
        assert_eq!(markers, vec![(1, Marker::OutputStart)]);
    }

    #[test]
    fn command_line_and_cwd_are_unescaped() {
        let cmd = "echo 'a;b' \\ \t\x1b[1m\nnext ünï 字";
        let input = format!(
            "{}{}",
            ours(633, &format!("E;{}", escape(cmd))),
            ours(633, &format!("P;Cwd={}", escape("/tmp/x;y"))),
        );
        let (text, markers) = scan(input.as_bytes());
        assert!(text.is_empty());
        assert_eq!(
            markers,
            vec![
                (0, Marker::CommandLine(line(cmd))),
                (0, Marker::Cwd(line("/tmp/x;y")))
            ]
        );
    }

    #[test]
    fn typed_line_and_history_flag_need_the_token() {
        let input = format!(
            "{}{}",
            ours(633, &format!("P;Typed={}", escape(" !!; x"))),
            ours(633, "P;HistIgnoreSpace=1"),
        );
        let (text, markers) = scan(input.as_bytes());
        assert!(text.is_empty());
        assert_eq!(
            markers,
            vec![
                (0, Marker::Typed(line(" !!; x"))),
                (0, Marker::HistIgnoreSpace)
            ]
        );
        let forged = osc("633;ffff;P;HistIgnoreSpace=1");
        let (text, markers) = scan(forged.as_bytes());
        assert!(markers.is_empty());
        assert_eq!(text, forged.as_bytes());
        // Nothing typed ahead waits: only with the token.
        let (_, markers) = scan(ours(633, "P;Waiting=0").as_bytes());
        assert_eq!(markers, vec![(0, Marker::NoLineWaiting)]);
        let (_, markers) = scan(ours(633, "P;Key=fix").as_bytes());
        assert_eq!(markers, vec![(0, Marker::Key(KeyAction::Fix))]);
        let (text, markers) = scan(osc("633;ffff;P;Key=ask").as_bytes());
        assert!(markers.is_empty() && !text.is_empty());
        let forged = osc("633;ffff;P;Waiting=0");
        let (text, markers) = scan(forged.as_bytes());
        assert!(markers.is_empty());
        assert_eq!(text, forged.as_bytes());
    }

    #[test]
    fn negative_and_large_statuses_parse() {
        let (_, m) = scan(ours(133, "D;130").as_bytes());
        assert_eq!(m, vec![(0, Marker::CommandEnd(130))]);
        let (_, m) = scan(ours(133, "D;-1").as_bytes());
        assert_eq!(m, vec![(0, Marker::CommandEnd(-1))]);
        // The hooks always send the status: a bare D, or a bad one, is dropped (it is ours, so
        // it is no output either).
        for bad in ["D", "D;x1", "Q", "E;x"] {
            let (t, m) = scan(ours(133, bad).as_bytes());
            assert!(m.is_empty() && t.is_empty(), "{bad}");
        }
    }

    #[test]
    fn can_aborts_a_candidate_and_breaks_a_marker_of_ours() {
        let input = format!("\x1b]133;A\x18{T}\x07rest");
        let (text, markers) = scan(input.as_bytes());
        assert_eq!(text, input.as_bytes());
        assert!(markers.is_empty());
        // A marker of ours cut off by a control byte: dropped, never shown, and what follows
        // is output.
        let input = format!("\x1b]633;{T};E;echo secret\x18rest\r\n{}", ours(133, "C"));
        let (text, markers) = scan(input.as_bytes());
        assert_eq!(text, b"\x18rest\r\n");
        assert_eq!(markers, vec![(7, Marker::OutputStart)]);
    }

    #[test]
    fn an_esc_without_st_ends_a_marker_of_ours_as_nothing() {
        let input = format!("\x1b]633;{T};E;ls\x1b[1mbold");
        let (text, markers) = scan(input.as_bytes());
        assert_eq!(text, b"\x1b[1mbold");
        assert!(markers.is_empty());
    }

    #[test]
    fn unterminated_flood_is_released_at_once() {
        let mut s = Scanner::new(T);
        let mut out = 0usize;
        let mut sink = |p: Piece<'_>| {
            if let Piece::Text(t) = p {
                out += t.len()
            }
        };
        s.feed(b"\x1b]133;", &mut sink);
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..10 {
            s.feed(&chunk, &mut sink);
            assert_eq!(s.held_len(), 0);
        }
        s.flush(&mut sink);
        assert_eq!(out, 6 + 640 * 1024);
    }

    #[test]
    fn a_ten_megabyte_command_line_is_ours_and_costs_the_cap() {
        // As the hook sends it, in pty-sized reads: never released as output, memory bounded,
        // the line cut to its head and tail around the note.
        let cmd: String = (0..1_000_000).map(|i| format!("{:09} ", i)).collect();
        assert_eq!(cmd.len(), 10_000_000);
        let marker = ours(633, &format!("E;{}", escape(&cmd)));
        let mut s = Scanner::new(T);
        let mut text = 0usize;
        let mut found = Vec::new();
        for chunk in marker.as_bytes().chunks(4096) {
            s.feed(chunk, &mut |p| match p {
                Piece::Text(t) => text += t.len(),
                Piece::Marker(m) => found.push(m),
            });
            assert!(s.held_len() <= 64);
        }
        assert_eq!(text, 0);
        let [Marker::CommandLine(l)] = &found[..] else {
            panic!("{found:?}")
        };
        assert_eq!(l.chars, 10_000_000);
        assert!(l.cut);
        let half = COMMAND_LINE_CAP / 2;
        let want = format!(
            "{}{}{}",
            &cmd[..half],
            omitted_note(10_000_000 - 2 * half as u64),
            &cmd[cmd.len() - half..]
        );
        assert!(l.text == want);
    }

    #[test]
    fn the_token_in_a_value_is_scrubbed() {
        let input = ours(633, &format!("E;echo {T}"));
        let (_, m) = scan(input.as_bytes());
        assert_eq!(
            m,
            vec![(0, Marker::CommandLine(line(&format!("echo {TOKEN_NOTE}"))))]
        );
    }

    #[test]
    fn a_prompt_nonce_carries_prompt_markers_until_the_output_starts() {
        let mut s = Scanner::new(T);
        let nonce = "c0ffee00";
        let n = |body: &str| osc(&format!("133;{nonce};{body}"));
        // Before it is announced, a nonce is nothing.
        let early = n("B");
        assert_eq!(scan_with(&mut s, &[early.as_bytes()]).0, early.as_bytes());
        let prompt = format!(
            "{}{}$ {}ls\r\n{}",
            ours(633, &format!("P;Nonce={nonce}")),
            n("A"),
            n("B"),
            n("C")
        );
        let (text, markers) = scan_with(&mut s, &[prompt.as_bytes()]);
        assert_eq!(text, b"$ ls\r\n");
        assert_eq!(
            markers,
            vec![
                (0, Marker::PromptStart),
                (2, Marker::PromptEnd),
                (6, Marker::OutputStart)
            ]
        );
        // Spent at the output start: the command's output (an exported PS1 in a nested shell,
        // `echo -e "$PS0"`) cannot use it.
        for body in ["B", "C", "A"] {
            let later = n(body);
            let (text, markers) = scan_with(&mut s, &[later.as_bytes()]);
            assert_eq!((text, markers.len()), (later.into_bytes(), 0));
        }
        // A nonce carries prompt markers only.
        let mut s = Scanner::new(T);
        scan_with(&mut s, &[ours(633, &format!("P;Nonce={nonce}")).as_bytes()]);
        for body in ["D;0", "Z", "E;rm -rf /"] {
            let forged = osc(&format!("133;{nonce};{body}"));
            let (text, markers) = scan_with(&mut s, &[forged.as_bytes()]);
            assert_eq!((text, markers.len()), (forged.into_bytes(), 0), "{body}");
        }
    }

    #[test]
    fn an_end_nonce_carries_only_the_output_end_until_the_command_ends() {
        let mut s = Scanner::new(T);
        let z = osc("133;77aa;Z");
        let c = osc("133;77aa;C");
        let input = format!("{}out{z}{c}{z}", ours(633, "P;EndNonce=77aa"));
        let (text, markers) = scan_with(&mut s, &[input.as_bytes()]);
        assert_eq!(text, format!("out{c}").as_bytes());
        assert_eq!(
            markers,
            vec![(3, Marker::OutputEnd), (3 + c.len(), Marker::OutputEnd)]
        );
        let input = format!("{}{z}", ours(133, "D;0"));
        let (text, markers) = scan_with(&mut s, &[input.as_bytes()]);
        assert_eq!(text, z.as_bytes());
        assert_eq!(markers, vec![(0, Marker::CommandEnd(0))]);
    }

    #[test]
    fn output_without_markers_is_one_text_run_per_read() {
        // Colours, a title and a held ESC at the end of a read: the terminal thread copies
        // each read once, not once per escape sequence.
        let mut s = Scanner::new(T);
        let mut pieces = Vec::new();
        let mut feed = |bytes: &[u8], pieces: &mut Vec<Vec<u8>>| {
            s.feed(bytes, &mut |p| match p {
                Piece::Text(t) => pieces.push(t.to_vec()),
                Piece::Marker(m) => panic!("{m:?}"),
            })
        };
        let read = b"\x1b[1m\x1b[92m   Compiling\x1b[0m x\r\n\x1b]0;title\x07\x1b[32mok\x1b";
        feed(read, &mut pieces);
        assert_eq!(pieces, vec![read[..read.len() - 1].to_vec()]);
        feed(b"[0m\r\n", &mut pieces);
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces[1..], [b"\x1b".to_vec(), b"[0m\r\n".to_vec()]);
    }

    #[test]
    fn held_token_bytes_are_never_released_by_a_flush() {
        // A read that ends inside the credential: the wait may be long (a stopped terminal),
        // but the bytes may be the token and are never shown as output.
        let mut s = Scanner::new(T);
        let mut text = Vec::new();
        s.feed(format!("x\x1b]133;{}", &T[..20]).as_bytes(), &mut |p| {
            if let Piece::Text(t) = p {
                text.extend_from_slice(t)
            }
        });
        assert!(!s.holding());
        s.flush(&mut |p| {
            if let Piece::Text(t) = p {
                text.extend_from_slice(t)
            }
        });
        assert_eq!(text, b"x");
        let (rest, markers) = scan_with(&mut s, &[format!("{};C\x07", &T[20..]).as_bytes()]);
        assert!(rest.is_empty());
        assert_eq!(markers, vec![(0, Marker::OutputStart)]);
        // A prefix alone may be released.
        let mut s = Scanner::new(T);
        s.feed(b"\x1b]133", &mut |_| {});
        assert!(s.holding());
    }

    #[test]
    fn raw_control_byte_in_payload_drops_the_marker() {
        // A terminal ignores it inside an OSC; our payloads never hold one: the whole marker
        // goes, to its end.
        let input = format!("\x1b]633;{T};E;a\nb\x07after");
        let (text, markers) = scan(input.as_bytes());
        assert!(markers.is_empty());
        assert_eq!(text, b"after");
    }

    #[test]
    fn escape_round_trips_every_control_byte() {
        let all: String = (0u8..=0x7f).map(char::from).collect();
        let (_, m) = scan(ours(633, &format!("E;{}", escape(&all))).as_bytes());
        assert_eq!(m, vec![(0, Marker::CommandLine(line(&all)))]);
    }

    fn sample_stream() -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(ours(133, "A").as_bytes());
        v.extend_from_slice(b"\x1b[1mme@host\x1b[0m $ ");
        v.extend_from_slice(ours(633, "P;Nonce=5eed").as_bytes());
        v.extend_from_slice(osc("133;5eed;B").as_bytes());
        v.extend_from_slice(b"cat log\r\n");
        v.extend_from_slice(ours(633, &format!("E;{}", escape("cat log; echo ü"))).as_bytes());
        v.extend_from_slice(format!("\x1b]133;{T};C\x1b\\").as_bytes());
        v.extend_from_slice(b"\x1b]133;D;0\x07forged\x1b]0;t\x07\x1b]133;A;aid=zz\x1b\\x\x1b");
        v.extend_from_slice(b"[K\x1b]1");
        v.extend_from_slice(osc("133;5eed;B").as_bytes());
        v.extend_from_slice(format!("\x1b]633;{}x\x07", &T[..9]).as_bytes());
        v.extend_from_slice(ours(133, "D;7").as_bytes());
        v.extend_from_slice(b"tail");
        v
    }

    #[test]
    fn markers_split_across_reads_at_every_byte() {
        let stream = sample_stream();
        let whole = scan(&stream);
        assert_eq!(whole.1.len(), 5, "{:?}", whole.1);
        assert!(!String::from_utf8_lossy(&whole.0).contains("5eed;B\x07cat"));
        for cut in 0..=stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(scan_chunks(&[a, b]), whole, "split at {cut}");
        }
    }

    /// Records where vte dispatches OSCs and what they contain.
    struct VteOscs(Vec<Vec<Vec<u8>>>);
    impl vte::Perform for VteOscs {
        fn osc_dispatch(&mut self, params: &[&[u8]], _bell: bool) {
            self.0.push(params.iter().map(|p| p.to_vec()).collect());
        }
    }

    proptest! {
        #[test]
        fn any_split_gives_the_same_result(cuts in proptest::collection::vec(0usize..600, 0..6)) {
            let stream = sample_stream();
            let whole = scan(&stream);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (stream.len() + 1)).collect();
            cuts.sort();
            let mut chunks = Vec::new();
            let mut last = 0;
            for c in cuts { chunks.push(&stream[last..c]); last = c; }
            chunks.push(&stream[last..]);
            prop_assert_eq!(scan_chunks(&chunks), whole);
        }

        #[test]
        fn foreign_bytes_pass_through_unchanged(bytes in proptest::collection::vec(
            prop_oneof![Just(0x1bu8), Just(b']'), Just(0x07u8), Just(b'1'), Just(b'3'), Just(b';'),
                        Just(b'6'), Just(0x18u8), Just(b'\\'), any::<u8>()], 0..300)) {
            // Without the start of the token nothing can be a marker, so the text is the input.
            let has = |p: &[u8]| memchr::memmem::find(&bytes, p).is_some();
            prop_assume!(!has(b"\x1b]133;0") && !has(b"\x1b]633;0"));
            let (text, markers) = scan(&bytes);
            prop_assert!(markers.is_empty());
            prop_assert_eq!(text, bytes);
        }

        #[test]
        fn no_piece_of_a_marker_of_ours_is_ever_output(
            cuts in proptest::collection::vec((0usize..80, 0usize..4), 1..6),
            after in "[a-z\\x1b\\x07\\r\\n\\]]{0,20}",
        ) {
            // Markers of ours cut short anywhere (a hook interrupted), each followed by other
            // output: whatever happens, the token is never in the text.
            let full = ours(633, &format!("E;{}", escape("echo 'a;b'")));
            let mut input = Vec::new();
            for (cut, kind) in cuts {
                let part = &full.as_bytes()[..cut.min(full.len())];
                input.extend_from_slice(part);
                input.extend_from_slice([&b"\r\n"[..], b"\x1b[0m", b"\x18", b"\x07"][kind]);
                input.extend_from_slice(after.as_bytes());
            }
            let (text, _) = scan(&input);
            prop_assert!(memchr::memmem::find(&text, T.as_bytes()).is_none());
            prop_assert!(memchr::memmem::find(&text, &T.as_bytes()[..16]).is_none());
        }

        #[test]
        fn our_markers_agree_with_vte(pre in "[a-z \\x1b\\[0-9;m]{0,20}", cmd in "\\PC{0,30}") {
            // Whatever precedes it, vte sees our marker as an OSC exactly when the scanner does.
            let marker = ours(633, &format!("E;{}", escape(&cmd)));
            let input = format!("{pre}\x07{marker}");
            let (_, markers) = scan(input.as_bytes());
            let mut vte_oscs = VteOscs(Vec::new());
            let mut parser = vte::Parser::new();
            parser.advance(&mut vte_oscs, input.as_bytes());
            let vte_found = vte_oscs.0.iter().any(|p| p.len() == 4 && p[0] == b"633" && p[2] == b"E");
            prop_assert_eq!(vte_found, !markers.is_empty());
            if let Some((_, Marker::CommandLine(c))) = markers.first() {
                prop_assert_eq!(&c.text, &cmd);
            }
        }
    }
}
