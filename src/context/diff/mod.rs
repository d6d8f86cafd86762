//! `omnish diff`: the unified diff of two commands' rendered outputs (what the terminal showed,
//! redacted, as `context` shows each line), optionally with volatile tokens masked
//! ([`normalize()`]).
//!
//! Which commands: two ids; one id, against the previous run of its command line; none, the
//! last finished command against the previous run of its line. With `ok`, the previous run
//! is the last one that succeeded ("what changed since it worked").
//!
//! # Bounded
//!
//! Each output is rendered once into an anonymous temporary file, a line at a time (lines
//! longer than [`LINE_CAP`] chars keep their head and tail), and the two files are read back
//! together. The diff is Myers' (the `similar` crate) over line hashes within a window of at
//! most [`WINDOW`] lines of each side: the edits in the window's first half are kept, the
//! rest is diffed again with the lines that follow. A hunk is written once it is complete,
//! or every [`HUNK_CAP`] lines. A window whose sides share few lines (fewer than one in
//! [`MIN_SHARED`]: every line stamped with a different time, say) is not run through Myers,
//! whose cost grows with the edits: its first halves are one change. So memory holds two
//! windows and one hunk, whatever the size of the outputs, and time is linear in their size.
//!
//! The limits: a change is aligned within a window, so a block of more than about
//! `WINDOW / 2` lines inserted, removed or moved, or a stretch where most lines differ, shows
//! as lines removed and lines added rather than as the shortest edit; the diff is always a
//! correct one (applying it to A gives B).

mod normalize;

pub(crate) use normalize::normalize;

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, BufWriter, Seek, Write};
use std::path::PathBuf;

use crate::context::stages::read::{self, Source};
use crate::context::stages::redact::{self, Redactor};
use crate::context::stages::select::{self, Candidate, Filter, Query, SessionChoice};
use crate::error::{Error, Result};
use crate::term::visible;

/// Lines of each side diffed at once.
pub(crate) const WINDOW: usize = 1024;
/// A window whose shorter side has fewer than one line in this many also in the other is
/// not run through Myers: its first halves are one change.
pub(crate) const MIN_SHARED: usize = 4;
/// Lines a hunk holds before it is written as it is.
pub(crate) const HUNK_CAP: usize = 4096;
/// Chars kept of a line (head and tail).
pub(crate) const LINE_CAP: usize = read::LINE_CAP;

/// A command named by the user: `SESSION:SEQ`, or `SEQ` in the default session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandRef {
    pub session: Option<String>,
    pub seq: u64,
}

impl CommandRef {
    /// Parses `SESSION:SEQ` or `SEQ`.
    pub(crate) fn parse(id: &str) -> Result<CommandRef> {
        let bad = || {
            Error::usage(format!(
                "{} is no command id; give SESSION:SEQ (as `omnish context --format json` shows \
                 session_id and seq) or SEQ in the session",
                crate::context::support::pattern::quote(id)
            ))
        };
        let (session, seq) = match id.rsplit_once(':') {
            Some((s, n)) if !s.is_empty() => (Some(s.to_string()), n),
            Some(_) => return Err(bad()),
            None => (None, id),
        };
        Ok(CommandRef {
            session,
            seq: seq.parse().map_err(|_| bad())?,
        })
    }
}

/// What a front end asks of `diff`.
#[derive(Debug, Clone)]
pub(crate) struct DiffRequest {
    pub data_root: PathBuf,
    /// The session the asker runs in.
    pub current_session: Option<String>,
    /// The session of ids given without one, and of the last command: an id, `current`.
    pub session: String,
    /// The old and the new command; `None`: see the module docs.
    pub old: Option<CommandRef>,
    pub new: Option<CommandRef>,
    /// The previous run is the last successful one.
    pub ok: bool,
    pub normalize: bool,
    pub redact: bool,
    /// Unchanged lines around each change.
    pub context: usize,
    /// Stop after this many lines of diff (`None`: all of it).
    pub max_lines: Option<usize>,
}

/// One side of a diff, described.
#[derive(Debug, Clone)]
pub(crate) struct Side {
    pub id: String,
    pub command_line: String,
    pub exit_code: Option<i32>,
    pub started_at: u64,
}

impl Side {
    /// `SESSION:SEQ $ LINE (exit N, TIME)`: the diff's header line for this side.
    fn label(&self) -> String {
        let status = match self.exit_code {
            Some(c) => format!("exit {c}"),
            None => "exit status unknown".to_string(),
        };
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(self.started_at);
        format!(
            "{}\t$ {} ({status}, {})",
            self.id,
            visible::line(&self.command_line),
            humantime::format_rfc3339_seconds(t)
        )
    }
}

/// What a diff found.
#[derive(Debug, Clone)]
pub(crate) struct DiffOutcome {
    pub old: Side,
    pub new: Side,
    /// Lines removed and added.
    pub removed: u64,
    pub added: u64,
    /// Diff lines left out by `max_lines` (the diff says nothing of them: the front end does).
    pub cut: u64,
    pub warnings: Vec<String>,
}

impl DiffOutcome {
    pub(crate) fn differ(&self) -> bool {
        self.removed + self.added > 0
    }
}

/// Writes the unified diff `req` asks for to `out` (nothing when the outputs are the same).
pub(crate) fn diff(req: &DiffRequest, out: &mut dyn Write) -> Result<DiffOutcome> {
    let mut warnings = Vec::new();
    let (old, new) = resolve(req, &mut warnings)?;
    // What the sessions taught, from the two commands and their digests.
    let digests = [read::cached_digest(&old), read::cached_digest(&new)];
    let redactors = req.redact.then(|| {
        let pair = [old.clone(), new.clone()];
        let mut r = redact::session::Redactors::learn_commands(&pair);
        r.learn_output(&old, &digests[0]);
        r.learn_output(&new, &digests[1]);
        r.into_shared()
    });
    let redactor_of = |c: &Candidate| redactors.as_ref().map(|r| r.get(&c.session_dir));
    let side = |c: &Candidate| {
        let r = redactor_of(c);
        let line = match &r {
            Some(r) => r.redact(&c.record.command_line).into_owned(),
            None => c.record.command_line.clone(),
        };
        Side {
            id: format!("{}:{}", c.record.session_id, c.record.seq),
            command_line: line,
            exit_code: (!c.running).then_some(c.record.exit_code).flatten(),
            started_at: c.record.started_at,
        }
    };
    let mut outcome = DiffOutcome {
        old: side(&old),
        new: side(&new),
        removed: 0,
        added: 0,
        cut: 0,
        warnings,
    };
    let a = spill(
        &old,
        &digests[0],
        redactor_of(&old).as_deref(),
        req.normalize,
    )?;
    let b = spill(
        &new,
        &digests[1],
        redactor_of(&new).as_deref(),
        req.normalize,
    )?;
    let mut unified = Unified::new(
        out,
        req.context,
        req.max_lines,
        format!("--- {}\n+++ {}\n", outcome.old.label(), outcome.new.label()),
    );
    windowed(a, b, &mut unified)?;
    unified.finish()?;
    outcome.removed = unified.removed;
    outcome.added = unified.added;
    outcome.cut = unified.cut;
    Ok(outcome)
}

/// Only commands that ended (the one asking, still running, is not one to compare).
struct Finished;
impl Filter for Finished {
    fn keep(&self, c: &Candidate) -> bool {
        !c.running && !c.record.private
    }
}

/// Only runs of this command line before this one.
struct EarlierRun {
    line: String,
    before_seq: u64,
    ok: bool,
}
impl Filter for EarlierRun {
    fn keep(&self, c: &Candidate) -> bool {
        c.record.seq < self.before_seq
            && !c.running
            && !c.record.private
            && c.record.command_line == self.line
            && (!self.ok || c.record.exit_code == Some(0))
    }
}

/// The session `given` names (an id, or `current`), as `context` finds it.
fn session(
    req: &DiffRequest,
    given: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<select::Session> {
    let choice = crate::context::request::session(given.unwrap_or(&req.session))?;
    let choice = match choice {
        SessionChoice::All => SessionChoice::Current,
        c => c,
    };
    select::sessions(
        &req.data_root,
        &choice,
        req.current_session.as_deref(),
        warnings,
    )?
    .into_iter()
    .next()
    .ok_or_else(|| Error::NotFound("no recorded session".into()))
}

fn first(session: &select::Session, filters: Vec<Box<dyn Filter>>) -> Result<Option<Candidate>> {
    let query = Query {
        filters,
        line_test: None,
        output_filter: None,
        limit: 1,
    };
    Ok(query.select(session)?.commands.pop())
}

/// The old and the new command `req` names.
fn resolve(req: &DiffRequest, warnings: &mut Vec<String>) -> Result<(Candidate, Candidate)> {
    let by_id = |r: &CommandRef, warnings: &mut Vec<String>| -> Result<Candidate> {
        let s = session(req, r.session.as_deref(), warnings)?;
        let c = first(&s, vec![Box::new(select::Seq(r.seq))])?.ok_or_else(|| {
            Error::NotFound(format!("session {} has no command {}", s.id(), r.seq))
        })?;
        if c.record.private {
            return Err(Error::NotFound(format!(
                "command {}:{} is private: its output was never recorded",
                s.id(),
                r.seq
            )));
        }
        Ok(c)
    };
    let new = match &req.new {
        Some(r) => by_id(r, warnings)?,
        None => {
            let s = session(req, None, warnings)?;
            first(&s, vec![Box::new(Finished)])?.ok_or_else(|| {
                Error::NotFound(format!("session {} has no finished command", s.id()))
            })?
        }
    };
    let old = match &req.old {
        Some(r) => by_id(r, warnings)?,
        None => {
            let s = session(req, Some(&new.record.session_id), warnings)?;
            let earlier = EarlierRun {
                line: new.record.command_line.clone(),
                before_seq: new.record.seq,
                ok: req.ok,
            };
            first(&s, vec![Box::new(earlier)])?.ok_or_else(|| {
                Error::NotFound(format!(
                    "no {}earlier run of `{}` in session {} to compare command {} with",
                    if req.ok { "successful " } else { "" },
                    visible::line(&new.record.command_line),
                    s.id(),
                    new.record.seq
                ))
            })?
        }
    };
    Ok((old, new))
}

/// `c`'s rendered lines, redacted and (with `normalize`) masked, one per line in an anonymous
/// temporary file, rewound.
fn spill(
    c: &Candidate,
    digest: &read::Digest,
    redactor: Option<&Redactor>,
    normalize_lines: bool,
) -> Result<BufReader<std::fs::File>> {
    let file = tempfile::tempfile()?;
    let mut w = BufWriter::with_capacity(64 * 1024, file);
    let mut err: Option<std::io::Error> = None;
    let mut put = |w: &mut BufWriter<std::fs::File>, line: &str| {
        if err.is_some() {
            return;
        }
        let line = if normalize_lines {
            normalize(line)
        } else {
            line.into()
        };
        let shown = visible::line(&line);
        if let Err(e) = w
            .write_all(shown.as_bytes())
            .and_then(|()| w.write_all(b"\n"))
        {
            err = Some(e);
        }
    };
    if let Some(note) = digest.note() {
        put(&mut w, &note);
    } else if !c.record.private {
        let src = Source::of(c);
        let mut in_key = false;
        read::for_each_line(&src, LINE_CAP, digest.erased, &mut |_, line| {
            let key_block = read::key_block_state(&mut in_key, line.head, line.tail);
            let shown = crate::context::show_line(
                line.head,
                line.omitted,
                line.tail,
                key_block,
                LINE_CAP / 2,
                redactor,
            );
            put(&mut w, &shown);
        });
    }
    if let Some(e) = err {
        return Err(e.into());
    }
    let mut file = w.into_inner().map_err(|e| e.into_error())?;
    file.rewind()?;
    Ok(BufReader::with_capacity(64 * 1024, file))
}

/// Reads the next line of `r` (without its newline) into the back of `win`; false at the end.
fn pull(r: &mut BufReader<std::fs::File>, win: &mut VecDeque<String>) -> Result<bool> {
    let mut line = String::new();
    // Lines were written capped, so this is bounded.
    let n = r.read_line(&mut line)?;
    if n == 0 {
        return Ok(false);
    }
    if line.ends_with('\n') {
        line.pop();
    }
    win.push_back(line);
    Ok(true)
}

fn hash(line: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    line.hash(&mut h);
    h.finish()
}

/// The windowed diff of the lines of `a` and `b` (see the module docs), fed to `u`.
fn windowed(
    mut a: BufReader<std::fs::File>,
    mut b: BufReader<std::fs::File>,
    u: &mut Unified<'_>,
) -> Result<()> {
    let (mut wa, mut wb) = (VecDeque::new(), VecDeque::new());
    let (mut a_done, mut b_done) = (false, false);
    loop {
        while !a_done && wa.len() < WINDOW {
            a_done = !pull(&mut a, &mut wa)?;
        }
        while !b_done && wb.len() < WINDOW {
            b_done = !pull(&mut b, &mut wb)?;
        }
        if wa.is_empty() && wb.is_empty() {
            return Ok(());
        }
        // Equal lines at the front need no diff.
        let mut same = 0;
        while same < wa.len() && same < wb.len() && wa[same] == wb[same] {
            same += 1;
        }
        if same > 0 {
            for _ in 0..same {
                let line = wa.pop_front().unwrap_or_default();
                wb.pop_front();
                u.equal(&line)?;
            }
            continue;
        }
        let ha: Vec<u64> = wa.iter().map(|l| hash(l)).collect();
        let hb: Vec<u64> = wb.iter().map(|l| hash(l)).collect();
        // What may be kept: everything at the end of both, else the first half of a window
        // that has more to come.
        let half_a = if a_done { wa.len() } else { wa.len() / 2 };
        let half_b = if b_done { wb.len() } else { wb.len() / 2 };
        let ops = if shared(&ha, &hb) * MIN_SHARED < ha.len().min(hb.len()) {
            // Mostly different (every line stamped with a time, say): Myers would cost
            // O(WINDOW * edits) for a diff that is mostly removed and added lines anyway.
            vec![similar::DiffOp::Replace {
                old_index: 0,
                old_len: half_a,
                new_index: 0,
                new_len: half_b,
            }]
        } else {
            // The deadline only guards against a machine too loaded to run a bounded diff.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
            similar::capture_diff_slices_deadline(
                similar::Algorithm::Myers,
                &ha,
                &hb,
                Some(deadline),
            )
        };
        let (mut used_a, mut used_b) = (0, 0);
        for (k, op) in ops.iter().enumerate() {
            let (tag, ra, rb) = op.as_tag_tuple();
            if k > 0 && (ra.end > half_a || rb.end > half_b) {
                break;
            }
            match tag {
                similar::DiffTag::Equal => {
                    for i in ra.clone() {
                        u.equal(&wa[i])?;
                    }
                }
                _ => {
                    for i in ra.clone() {
                        u.change(b'-', &wa[i])?;
                    }
                    for i in rb.clone() {
                        u.change(b'+', &wb[i])?;
                    }
                }
            }
            used_a = ra.end;
            used_b = rb.end;
        }
        wa.drain(..used_a);
        wb.drain(..used_b);
    }
}

/// How many lines `a` and `b` have in common, counted as multisets.
fn shared(a: &[u64], b: &[u64]) -> usize {
    let mut count: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for h in a {
        *count.entry(*h).or_default() += 1;
    }
    let mut n = 0;
    for h in b {
        if let Some(c) = count.get_mut(h).filter(|c| **c > 0) {
            *c -= 1;
            n += 1;
        }
    }
    n
}

/// Writes a unified diff from a stream of equal and changed lines, a hunk at a time.
struct Unified<'a> {
    out: &'a mut dyn Write,
    context: usize,
    /// The header, written before the first hunk (nothing is written when nothing differs).
    header: Option<String>,
    /// Lines of each side seen so far.
    a_seen: u64,
    b_seen: u64,
    /// The last equal lines, for the context before a change.
    before: VecDeque<String>,
    hunk: Option<Hunk>,
    removed: u64,
    added: u64,
    /// Lines of diff written, and the most that may be.
    written: u64,
    max_lines: Option<u64>,
    cut: u64,
}

struct Hunk {
    /// 0-based first line of each side.
    a_start: u64,
    b_start: u64,
    a_len: u64,
    b_len: u64,
    lines: Vec<(u8, String)>,
    /// Equal lines at its end.
    trailing: usize,
}

impl<'a> Unified<'a> {
    fn new(
        out: &'a mut dyn Write,
        context: usize,
        max_lines: Option<usize>,
        header: String,
    ) -> Self {
        Unified {
            out,
            context,
            header: Some(header),
            a_seen: 0,
            b_seen: 0,
            before: VecDeque::new(),
            hunk: None,
            removed: 0,
            added: 0,
            written: 0,
            max_lines: max_lines.map(|m| m as u64),
            cut: 0,
        }
    }

    fn equal(&mut self, line: &str) -> Result<()> {
        self.a_seen += 1;
        self.b_seen += 1;
        match &mut self.hunk {
            Some(h) => {
                h.lines.push((b' ', line.to_string()));
                h.a_len += 1;
                h.b_len += 1;
                h.trailing += 1;
                if h.trailing > 2 * self.context {
                    self.close()?;
                }
            }
            None => {
                if self.context > 0 {
                    self.before.push_back(line.to_string());
                    if self.before.len() > self.context {
                        self.before.pop_front();
                    }
                }
            }
        }
        Ok(())
    }

    fn change(&mut self, sign: u8, line: &str) -> Result<()> {
        if self.hunk.is_none() {
            let n = self.before.len() as u64;
            let (a0, b0) = (self.a_seen - n, self.b_seen - n);
            let lines: Vec<(u8, String)> = self.before.drain(..).map(|l| (b' ', l)).collect();
            self.hunk = Some(Hunk {
                a_start: a0,
                b_start: b0,
                a_len: n,
                b_len: n,
                lines,
                trailing: 0,
            });
        }
        let h = self.hunk.as_mut().expect("opened above");
        h.lines.push((sign, line.to_string()));
        h.trailing = 0;
        if sign == b'-' {
            h.a_len += 1;
            self.a_seen += 1;
            self.removed += 1;
        } else {
            h.b_len += 1;
            self.b_seen += 1;
            self.added += 1;
        }
        if h.lines.len() >= HUNK_CAP {
            self.write_hunk()?;
        }
        Ok(())
    }

    /// Ends the open hunk after `context` of its trailing equal lines; the rest become the
    /// context before the next one.
    fn close(&mut self) -> Result<()> {
        let Some(h) = &mut self.hunk else {
            return Ok(());
        };
        let extra = h.trailing.saturating_sub(self.context);
        let keep = h.lines.len() - extra;
        let rest: Vec<String> = h.lines.drain(keep..).map(|(_, l)| l).collect();
        h.a_len -= extra as u64;
        h.b_len -= extra as u64;
        self.write_hunk()?;
        for l in rest.into_iter().rev().take(self.context).rev() {
            self.before.push_back(l);
        }
        Ok(())
    }

    /// Writes the open hunk as it is.
    fn write_hunk(&mut self) -> Result<()> {
        let Some(h) = self.hunk.take() else {
            return Ok(());
        };
        if let Some(header) = self.header.take() {
            self.out.write_all(header.as_bytes())?;
        }
        let range = |start: u64, len: u64| match len {
            0 => format!("{start},0"),
            1 => format!("{}", start + 1),
            n => format!("{},{n}", start + 1),
        };
        // Within `max_lines`: the hunk's first lines, its header counting only those.
        let room = match self.max_lines {
            Some(m) => (m.saturating_sub(self.written) as usize).saturating_sub(1),
            None => usize::MAX,
        };
        if room == 0 {
            self.cut += h.lines.len() as u64 + 1;
            return Ok(());
        }
        let shown = &h.lines[..h.lines.len().min(room)];
        self.cut += (h.lines.len() - shown.len()) as u64;
        let (a_len, b_len) = if shown.len() < h.lines.len() {
            let count = |skip: u8| shown.iter().filter(|(s, _)| *s != skip).count() as u64;
            (count(b'+'), count(b'-'))
        } else {
            (h.a_len, h.b_len)
        };
        self.written += shown.len() as u64 + 1;
        writeln!(
            self.out,
            "@@ -{} +{} @@",
            range(h.a_start, a_len),
            range(h.b_start, b_len)
        )?;
        for (sign, line) in shown {
            self.out.write_all(&[*sign])?;
            self.out.write_all(line.as_bytes())?;
            self.out.write_all(b"\n")?;
        }
        // A hunk cut at HUNK_CAP goes on in a new one where it ended.
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        if self.hunk.is_some() {
            self.close()?;
        }
        self.out.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The diff of two texts through the windowed engine, as a string.
    fn udiff(a: &str, b: &str, context: usize) -> String {
        udiff_max(a, b, context, None).0
    }

    fn udiff_max(a: &str, b: &str, context: usize, max: Option<usize>) -> (String, u64) {
        let file = |s: &str| {
            let mut f = tempfile::tempfile().unwrap();
            f.write_all(s.as_bytes()).unwrap();
            f.rewind().unwrap();
            BufReader::new(f)
        };
        let mut out = Vec::new();
        let mut u = Unified::new(&mut out, context, max, "--- a\n+++ b\n".into());
        windowed(file(a), file(b), &mut u).unwrap();
        u.finish().unwrap();
        let cut = u.cut;
        (String::from_utf8(out).unwrap(), cut)
    }

    #[test]
    fn a_limit_keeps_the_first_lines_of_a_hunk_with_a_header_that_counts_them() {
        let b: String = (1..=10).map(|i| format!("{i}\n")).collect();
        let (d, cut) = udiff_max("x\n", &b, 3, Some(4));
        assert_eq!(d, "--- a\n+++ b\n@@ -1 +1,2 @@\n-x\n+1\n+2\n");
        assert_eq!(cut, 8);
    }

    /// Applies a unified diff (as written here) to `a`.
    fn apply(a: &str, diff: &str) -> String {
        let a: Vec<&str> = a.lines().collect();
        let mut out: Vec<String> = Vec::new();
        let mut at = 0usize;
        for l in diff.lines().skip(2) {
            if let Some(h) = l.strip_prefix("@@ -") {
                let start: usize = h.split([',', ' ']).next().unwrap().parse().unwrap();
                let len_zero = h.split(' ').next().unwrap().ends_with(",0");
                let start = if len_zero { start } else { start - 1 };
                while at < start {
                    out.push(a[at].to_string());
                    at += 1;
                }
            } else if let Some(x) = l.strip_prefix(' ') {
                assert_eq!(a[at], x);
                out.push(x.to_string());
                at += 1;
            } else if let Some(x) = l.strip_prefix('-') {
                assert_eq!(a[at], x);
                at += 1;
            } else if let Some(x) = l.strip_prefix('+') {
                out.push(x.to_string());
            }
        }
        out.extend(a[at..].iter().map(|s| s.to_string()));
        let mut s = out.join("\n");
        s.push('\n');
        s
    }

    #[test]
    fn small_changes_make_gnu_style_hunks() {
        let a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let b = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n";
        let d = udiff(a, b, 3);
        assert_eq!(
            d, "--- a\n+++ b\n@@ -2,9 +2,10 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n+11\n",
            "as GNU diff -u: changes 6 lines apart share a hunk"
        );
        assert_eq!(
            udiff(a, b, 1),
            "--- a\n+++ b\n@@ -4,3 +4,3 @@\n 4\n-5\n+five\n 6\n@@ -10 +10,2 @@\n 10\n+11\n"
        );
        assert_eq!(udiff(a, a, 3), "", "nothing when nothing differs");
    }

    #[test]
    fn long_inputs_diff_within_windows_and_the_diff_applies() {
        let a: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let b: String = (0..20_000)
            .filter(|i| i % 997 != 0)
            .map(|i| {
                if i % 1500 == 7 {
                    format!("changed {i}\n")
                } else {
                    format!("line {i}\n")
                }
            })
            .chain((0..3000).map(|i| format!("new tail {i}\n")))
            .collect();
        let d = udiff(&a, &b, 3);
        assert_eq!(apply(&a, &d), b);
        // Close to the shortest edit: 21 lines removed, 14 changed, 3000 added.
        let removed = d.lines().filter(|l| l.starts_with('-')).count() - 1;
        let added = d.lines().filter(|l| l.starts_with('+')).count() - 1;
        assert_eq!((removed, added), (21 + 14, 14 + 3000));
        // Every line different (stamped with its run's pid): blocks of removed and added
        // lines, without Myers, still a correct diff.
        let stamp =
            |pid: u32| -> String { (0..20_000).map(|i| format!("[{pid}] {i}\n")).collect() };
        let (a, b) = (stamp(41), stamp(42));
        let d = udiff(&a, &b, 3);
        assert_eq!(apply(&a, &d), b);
        assert_eq!(d.lines().filter(|l| l.starts_with('-')).count() - 1, 20_000);
    }
}
