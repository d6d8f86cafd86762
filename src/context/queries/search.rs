//! Search: a regular expression over command lines and rendered output, across sessions.
//!
//! Output is searched as `omnish context` shows it: rendered by [`crate::term`] through
//! [`read`], each line redacted by [`crate::context::stages::redact`] (private key blocks whole),
//! lines longer than [`read::LINE_CAP`] chars as their head and tail; binary or unreadable output
//! as its one-line note. Command lines and directories are redacted too. The output of omnish's
//! own front ends (an `omnish context` run to preview, [`own`]) is not searched, only their
//! line: it holds copies of other commands, which would be found twice (`forget --grep` still
//! searches it, to forget every copy).
//!
//! # Fast on a large store, bounded in memory
//!
//! Rendering costs about 100 MiB/s, so the rendered text of each *settled* command is kept in a
//! derived cache beside its session ([`crate::store::text`]), made at the first search that
//! needs it (sessions on up to four threads, each rendering one command at a time), and searched with ripgrep's own searcher (`grep-searcher`, `grep-regex`) reading
//! 64 KiB at a time. A settled command is a finished one whose rendering can no longer change:
//! not the newest record of a live session (keys typed ahead for the next command are left out
//! of its output once that command is known). The rest, and every command whose cache cannot be
//! written (a read-only store, or a disk that would keep less than [`CACHE_SPARE`] free for the
//! recorder), are rendered at each search. Building the cache also caches the
//! digest `omnish context` needs for large outputs, in the same rendering pass.
//!
//! Hits come oldest first, session by session, each written as soon as it is found: memory does
//! not grow with the number of hits or the size of an output.
//!
//! The pattern matches the text as recorded; the text format then shows control characters
//! visibly ([`crate::term::visible`]), each match highlighted in what is shown of it, and
//! JSON escapes them (the `ranges` are byte offsets into the exact recorded text).

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use crate::context::queries::sessions::local_time;
use crate::context::request::Selection;
use crate::context::stages::select::{self, Candidate, Query, Session};
use crate::context::stages::{own, read};
use crate::context::{show_line, stages::redact, stages::truncate, support::pattern};
use crate::error::{Error, Field};
use crate::store::{self, text::TextCache};
use crate::term::render::{Line, LineSink};
use crate::term::visible;

/// Bump when what the text cache holds for a rendering changes (redaction rules, the line
/// format); the renderer's own version ([`read::DIGEST_VERSION`]) is part of the cache's name.
pub(crate) const TEXT_VERSION: u32 = 2;

/// The text cache's version: renderer and text format.
pub(crate) fn cache_version() -> String {
    format!("{}.{}", read::DIGEST_VERSION, TEXT_VERSION)
}

/// How hits are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SearchFormat {
    Text,
    Json,
}

/// A search, resolved by the front end.
#[derive(Debug, Clone)]
pub(crate) struct SearchRequest {
    pub data_root: PathBuf,
    pub current_session: Option<String>,
    /// Which sessions and commands (its `grep` is not used: `pattern` is the search's).
    pub selection: Selection,
    pub pattern: String,
    pub case_insensitive: bool,
    pub fixed_strings: bool,
    /// Command lines only, not output.
    pub commands_only: bool,
    /// Lines of context before and after each matching line.
    pub context: usize,
    pub format: SearchFormat,
    /// Highlight matches with terminal colours.
    pub color: bool,
}

/// What a search found.
#[derive(Debug, Default)]
pub(crate) struct SearchOutcome {
    /// Commands with a match.
    pub hits: usize,
    pub warnings: Vec<String>,
}

/// The matcher for a pattern; an invalid one is a usage error.
/// The pattern is bounded like every other ([`pattern`]): its length, its compiled size.
pub(crate) fn matcher(req: &SearchRequest) -> anyhow::Result<RegexMatcher> {
    pattern::check_len(&req.pattern).map_err(|e| Error::bad(Field::Grep, e))?;
    RegexMatcherBuilder::new()
        .case_insensitive(req.case_insensitive)
        .fixed_strings(req.fixed_strings)
        .line_terminator(Some(b'\n'))
        .size_limit(pattern::SIZE_LIMIT)
        .dfa_size_limit(pattern::DFA_SIZE_LIMIT)
        .build(&req.pattern)
        .map_err(|e| {
            let e = e.to_string();
            Error::bad(
                Field::Grep,
                if e.contains("exceeds size limit") {
                    pattern::too_big(&req.pattern)
                } else {
                    pattern::invalid(&req.pattern, &e)
                },
            )
            .into()
        })
}

/// The matcher, an outcome holding the sessions' warnings, and the sessions a search reads.
fn start(req: &SearchRequest) -> anyhow::Result<(RegexMatcher, SearchOutcome, Vec<Session>)> {
    let matcher = matcher(req)?;
    let mut outcome = SearchOutcome::default();
    let sessions = select::sessions(
        &req.data_root,
        &req.selection.sessions,
        req.current_session.as_deref(),
        &mut outcome.warnings,
    )?;
    Ok((matcher, outcome, sessions))
}

/// Runs the search, writing hits to `out` as they are found.
pub(crate) fn search(req: &SearchRequest, out: &mut dyn Write) -> anyhow::Result<SearchOutcome> {
    let (matcher, mut outcome, sessions) = start(req)?;
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(req.context)
        .after_context(req.context)
        .bom_sniffing(false)
        .heap_limit(Some(4 << 20))
        .build();
    let mut printer: Box<dyn Printer> = match req.format {
        SearchFormat::Text => Box::new(TextPrinter {
            out,
            color: req.color,
            first: true,
        }),
        SearchFormat::Json => Box::new(JsonPrinter {
            out,
            first: true,
            first_line: true,
        }),
    };
    if !req.commands_only {
        warm_caches(req, &sessions);
    }
    printer.start()?;
    for s in &sessions {
        outcome.hits += search_session(req, &matcher, &mut searcher, s, &mut *printer, true)?;
    }
    printer.finish()?;
    Ok(outcome)
}

/// A command a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HitId {
    pub session_id: String,
    pub seq: u64,
    /// Still running when the search read it.
    pub running: bool,
}

/// Runs the search for the commands it finds, not their lines (`forget --grep`): memory grows
/// with the number of commands found, never with what matched in their output. `req.format`,
/// `context` and `color` are not used.
pub(crate) fn search_ids(req: &SearchRequest) -> anyhow::Result<(Vec<HitId>, SearchOutcome)> {
    let (matcher, mut outcome, sessions) = start(req)?;
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .bom_sniffing(false)
        .heap_limit(Some(4 << 20))
        .build();
    let req = SearchRequest {
        context: 0,
        ..req.clone()
    };
    if !req.commands_only {
        warm_caches(&req, &sessions);
    }
    let mut printer = IdPrinter { ids: Vec::new() };
    for s in &sessions {
        // forget finds every copy, omnish's own output's too.
        outcome.hits += search_session(&req, &matcher, &mut searcher, s, &mut printer, false)?;
    }
    Ok((printer.ids, outcome))
}

/// Keeps the id of each hit and nothing of its lines.
struct IdPrinter {
    ids: Vec<HitId>,
}

impl Printer for IdPrinter {
    fn start(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn hit(&mut self, hit: &Hit, _: &RegexMatcher) -> io::Result<()> {
        self.ids.push(HitId {
            session_id: hit.session_id.clone(),
            seq: hit.seq,
            running: hit.running,
        });
        Ok(())
    }
    fn line(&mut self, _: u64, _: &str, _: bool, _: &RegexMatcher) -> io::Result<()> {
        Ok(())
    }
    fn gap(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn end_hit(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What a hit says about its command.
#[derive(Debug, Clone, Serialize)]
struct Hit {
    session_id: String,
    seq: u64,
    command_line: String,
    cwd: String,
    started_at: u64,
    ended_at: Option<u64>,
    exit_code: Option<i32>,
    /// What the status means ([`crate::context::words::explanation`]).
    exit_explanation: Option<String>,
    running: bool,
    command_matched: bool,
    /// Where it ran: the record's host, else the session's.
    host: String,
    /// As whom: the record's user, else the session's; absent when neither says.
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<String>,
    /// The id of the command that started the nested shell it ran in.
    #[serde(skip_serializing_if = "Option::is_none")]
    nested_in: Option<String>,
    #[serde(skip_serializing_if = "is_zero")]
    depth: u32,
    /// Who ran it: `user`, an agent, an `omnish exec` label.
    author: String,
    /// `user@host` when it ran elsewhere than its session.
    #[serde(skip)]
    elsewhere: Option<String>,
    #[serde(skip)]
    ending: crate::context::words::Ending,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The key a command's cached text is made from, beyond the cache's version.
fn text_key(c: &Candidate) -> u64 {
    let src = read::Source::of(c);
    let (offset, length) = (
        c.record.stream_offset.to_le_bytes(),
        c.record.stream_length.to_le_bytes(),
    );
    let (cols, rows, depth) = (
        src.cols.to_le_bytes(),
        src.rows.to_le_bytes(),
        src.depth.to_le_bytes(),
    );
    let mut parts: Vec<&[u8]> = vec![
        &offset,
        &length,
        &cols,
        &rows,
        src.next_command_line.as_deref().unwrap_or("\0").as_bytes(),
    ];
    // A nested command reads other frames of the same range: another key. Depth 0 keeps the
    // key of the versions before nesting (same text).
    if src.depth > 0 {
        parts.push(&depth);
    }
    store::text::key(&parts)
}

/// Whether `c` has output to search at all.
fn has_output(c: &Candidate) -> bool {
    !c.record.private && (c.open_ended() || c.record.stream_length > 0)
}

/// The commands of `session` the request selects, oldest first, and which of them are settled
/// (see the module docs).
fn candidates_of(
    req: &SearchRequest,
    matcher: Option<&RegexMatcher>,
    session: &Session,
) -> anyhow::Result<(Vec<Candidate>, Vec<bool>)> {
    let filters = select::cheap_filters(req.selection.cheap());
    // The whole command line is matched (redacted, as it is shown), before a long one is cut.
    let line_test = matcher
        .map(|m| move |line: &str| m.is_match(redact::redact(line).as_bytes()).unwrap_or(false));
    let query = Query {
        filters,
        line_test: line_test
            .as_ref()
            .map(|t| t as &(dyn Fn(&str) -> bool + Sync)),
        output_filter: None,
        limit: usize::MAX,
    };
    let candidates = query.select(session)?.commands;
    // In a live session the newest record is not settled: the next command, which decides
    // what of its output is typed-ahead echo, is not known yet.
    let newest = store::RecordsBackwards::open(&session.dir.join(store::COMMANDS))?
        .next_record()
        .map(|r| r.seq);
    let settled = candidates
        .iter()
        .map(|c| {
            let unsettled_newest = session.live() && Some(c.record.seq) == newest;
            !(c.running || c.cut_off || unsettled_newest)
        })
        .collect();
    Ok((candidates, settled))
}

/// Brings the text cache of `session` up to date for `candidates` (those `settled`), and
/// returns the entries that serve them.
fn update_cache(
    cache: &TextCache,
    session: &Session,
    candidates: &[Candidate],
    settled: &[bool],
) -> HashMap<u64, store::text::Entry> {
    let read_entries = || -> HashMap<u64, store::text::Entry> {
        cache.entries().into_iter().map(|e| (e.seq, e)).collect()
    };
    let missing = |entries: &HashMap<u64, store::text::Entry>| -> Vec<&Candidate> {
        candidates
            .iter()
            .zip(settled)
            .filter(|(c, s)| **s && has_output(c))
            .map(|(c, _)| c)
            .filter(|c| {
                entries
                    .get(&c.record.seq)
                    .is_none_or(|e| e.key != text_key(c))
            })
            .collect()
    };
    let mut entries = read_entries();
    if !missing(&entries).is_empty() {
        if let Ok(mut appender) = cache.append() {
            // A search running meanwhile may have cached some of them: look again under the
            // lock.
            entries = read_entries();
            for c in missing(&entries) {
                if !room_for(&session.dir, c) {
                    break;
                }
                match cache_command(&mut appender, c) {
                    Ok(e) => {
                        entries.insert(e.seq, e);
                    }
                    Err(_) => break,
                }
            }
        }
    }
    candidates
        .iter()
        .zip(settled)
        .filter(|(_, s)| **s)
        .filter_map(|(c, _)| {
            entries
                .get(&c.record.seq)
                .filter(|e| e.key == text_key(c))
                .map(|e| (c.record.seq, *e))
        })
        .collect()
}

/// Builds the text caches of `sessions` on a few threads (each renders one command at a time),
/// so a first search over many sessions uses every core; errors are left to the search itself.
fn warm_caches(req: &SearchRequest, sessions: &[Session]) {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4)
        .min(sessions.len());
    if workers < 2 {
        return;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(session) = sessions.get(i) else {
                        break;
                    };
                    if let Ok((candidates, settled)) = candidates_of(req, None, session) {
                        let cache = TextCache::new(&session.dir, &cache_version());
                        update_cache(&cache, session, &candidates, &settled);
                    }
                }
            });
        }
    });
}

fn search_session(
    req: &SearchRequest,
    matcher: &RegexMatcher,
    searcher: &mut Searcher,
    session: &Session,
    printer: &mut dyn Printer,
    fold_own: bool,
) -> anyhow::Result<usize> {
    let (candidates, settled) = candidates_of(req, Some(matcher), session)?;
    let mut cached: HashMap<u64, store::text::Entry> = HashMap::new();
    let mut text_file = None;
    if !req.commands_only {
        let cache = TextCache::new(&session.dir, &cache_version());
        cached = update_cache(&cache, session, &candidates, &settled);
        if !cached.is_empty() {
            text_file = cache.open_text();
        }
    }

    let mut hits = 0;
    for c in &candidates {
        if c.record.private {
            continue;
        }
        let hit = hit_of(c);
        let mut emit = Emit {
            printer: &mut *printer,
            hit: &hit,
            started: false,
            matcher,
        };
        if hit.command_matched {
            emit.begin()?;
        }
        // omnish's own output (an `omnish context` run to preview) holds copies of other
        // commands: only its line is searched, as `context` folds it.
        let own = fold_own && own::own_front_end(&c.record.command_line).is_some();
        if !req.commands_only && has_output(c) && !own {
            match (cached.get(&c.record.seq), text_file.as_ref()) {
                (Some(e), Some(file)) => {
                    let mut f = file;
                    f.seek(SeekFrom::Start(e.offset))?;
                    searcher.search_reader(matcher, f.take(e.len), &mut emit)?;
                }
                _ => search_live(c, matcher, req.context, &mut emit)?,
            }
        }
        if emit.started {
            printer.end_hit()?;
            hits += 1;
        }
    }
    Ok(hits)
}

/// What a hit says about `c`; whether its whole command line matched was found by select
/// ([`Candidate::line_matched`]), and a long one is shown cut, head and tail redacted apart.
fn hit_of(c: &Candidate) -> Hit {
    let r = &c.record;
    let (head, omitted, tail) = c.command_line_parts();
    let command_line = if omitted > 0 {
        truncate::shorten(&redact::redact(head), omitted, &redact::redact(tail), 0)
    } else {
        redact::redact(&r.command_line).into_owned()
    };
    let command_matched = c.line_matched;
    let ended = !c.running && !c.cut_off;
    let ending = crate::context::words::Ending {
        running: c.running,
        recording_stopped: r.recording_stopped,
        exit_code: ended.then_some(r.exit_code).flatten(),
        ended_shell: c.ended_shell,
    };
    Hit {
        session_id: r.session_id.clone(),
        seq: r.seq,
        cwd: redact::redact(&r.cwd).into_owned(),
        started_at: r.started_at,
        ended_at: ended.then_some(r.ended_at),
        exit_code: ending.exit_code,
        exit_explanation: ending
            .exit_code
            .and_then(|code| crate::context::words::explanation(code, c.ended_shell)),
        running: c.running,
        command_matched,
        command_line,
        host: c.host.clone(),
        user: c.user.clone(),
        nested_in: r.nested_in.clone(),
        depth: r.depth,
        author: r.author().to_string(),
        elsewhere: c.elsewhere_label(),
        ending,
    }
}

/// A rendered line as search sees it: redacted, whole (head and tail of a line past the cap):
/// what [`show_line`] gives with no width limit, without its look for error lines, which only
/// matters to a width.
fn shown(line: &Line<'_>, key_block: bool) -> String {
    if key_block {
        // Rule-based redaction only: a cached line cannot follow what the session learns later.
        return show_line(
            line.head,
            line.omitted,
            line.tail,
            key_block,
            0,
            Some(&redact::Redactor::new()),
        );
    }
    let head = redact::redact(line.head);
    let tail = redact::redact(line.tail);
    truncate::shorten(&head, line.omitted, &tail, 0)
}

/// Free space the text cache always leaves on the store's filesystem, beyond the output being
/// cached: the recorder needs the disk more than search needs its cache.
const CACHE_SPARE: u64 = 1 << 30;

/// Whether caching `c`'s text leaves the disk room for the recorder (the text is at most about
/// as large as the output's frames). Where free space cannot be told, yes.
fn room_for(dir: &std::path::Path, c: &Candidate) -> bool {
    match nix::sys::statvfs::statvfs(dir) {
        // The field types differ between platforms (u64 here).
        #[allow(clippy::unnecessary_cast)]
        Ok(st) => {
            let free = (st.blocks_available() as u64).saturating_mul(st.fragment_size() as u64);
            free > CACHE_SPARE.saturating_add(c.record.stream_length)
        }
        Err(_) => true,
    }
}

/// Renders `c` into the cache: its lines, or its one-line note when it is not text.
fn cache_command(app: &mut store::text::Appender, c: &Candidate) -> io::Result<store::text::Entry> {
    struct ToCache<'a> {
        app: &'a mut store::text::Appender,
        in_key: bool,
        failed: Option<io::Error>,
    }
    impl LineSink for ToCache<'_> {
        fn line(&mut self, line: Line<'_>) {
            let key_block = read::key_block_state(&mut self.in_key, line.head, line.tail);
            if self.failed.is_none() {
                if let Err(e) = self.app.line(&shown(&line, key_block)) {
                    self.failed = Some(e);
                }
            }
        }
        fn erase_scrollback(&mut self) {
            if self.failed.is_none() {
                if let Err(e) = self.app.restart() {
                    self.failed = Some(e);
                }
            }
        }
    }
    let mut sink = ToCache {
        app,
        in_key: false,
        failed: None,
    };
    let digest = read::digest_and_lines(c, &mut sink);
    if let Some(e) = sink.failed {
        let _ = app.restart();
        return Err(e);
    }
    if let Some(note) = digest.note() {
        app.restart()?;
        app.line(&note)?;
    }
    app.commit(c.record.seq, text_key(c))
}

/// Renders `c` now (a command that is not settled, or whose cache cannot be written) and
/// matches its lines with `context` lines around each match.
fn search_live(
    c: &Candidate,
    matcher: &RegexMatcher,
    context: usize,
    emit: &mut Emit<'_>,
) -> io::Result<()> {
    let digest = read::cached_digest(c);
    let mut ctx = LiveContext {
        matcher,
        context,
        before: VecDeque::new(),
        after_left: 0,
        last: None,
        in_key: false,
        failed: None,
    };
    if let Some(note) = digest.note() {
        ctx.feed(1, note, emit);
    } else {
        let src = read::Source::of(c);
        read::for_each_line(&src, read::LINE_CAP, digest.erased, &mut |i, line| {
            let key_block = read::key_block_state(&mut ctx.in_key, line.head, line.tail);
            let text = shown(&line, key_block);
            ctx.feed(i + 1, text, emit);
        });
    }
    match ctx.failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// grep's context rules, one line at a time.
struct LiveContext<'a> {
    matcher: &'a RegexMatcher,
    context: usize,
    before: VecDeque<(u64, String)>,
    after_left: usize,
    /// The number of the last line written.
    last: Option<u64>,
    in_key: bool,
    failed: Option<io::Error>,
}

impl LiveContext<'_> {
    fn feed(&mut self, n: u64, text: String, emit: &mut Emit<'_>) {
        if self.failed.is_some() {
            return;
        }
        let matched = self.matcher.is_match(text.as_bytes()).unwrap_or(false);
        let result = if matched {
            let mut r = Ok(());
            for (k, t) in std::mem::take(&mut self.before) {
                r = r.and_then(|()| self.write(k, &t, false, emit));
            }
            self.after_left = self.context;
            r.and_then(|()| self.write(n, &text, true, emit))
        } else if self.after_left > 0 {
            self.after_left -= 1;
            self.write(n, &text, false, emit)
        } else {
            if self.context > 0 {
                if self.before.len() == self.context {
                    self.before.pop_front();
                }
                self.before.push_back((n, text));
            }
            Ok(())
        };
        if let Err(e) = result {
            self.failed = Some(e);
        }
    }

    fn write(&mut self, n: u64, text: &str, matched: bool, emit: &mut Emit<'_>) -> io::Result<()> {
        // Like grep-searcher's context_break: only with context lines.
        if self.context > 0 && self.last.is_some_and(|l| n > l + 1) {
            emit.gap()?;
        }
        self.last = Some(n);
        emit.line(n, text.as_bytes(), matched)
    }
}

/// Writes one command's hit, its header when the first thing to show comes.
struct Emit<'a> {
    printer: &'a mut dyn Printer,
    hit: &'a Hit,
    started: bool,
    matcher: &'a RegexMatcher,
}

impl Emit<'_> {
    fn begin(&mut self) -> io::Result<()> {
        if !self.started {
            self.started = true;
            self.printer.hit(self.hit, self.matcher)?;
        }
        Ok(())
    }

    fn line(&mut self, n: u64, text: &[u8], matched: bool) -> io::Result<()> {
        self.begin()?;
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let text = String::from_utf8_lossy(text);
        self.printer.line(n, &text, matched, self.matcher)
    }

    fn gap(&mut self) -> io::Result<()> {
        if self.started {
            self.printer.gap()?;
        }
        Ok(())
    }
}

impl Sink for Emit<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let first = m.line_number().unwrap_or(0);
        for (k, line) in m.lines().enumerate() {
            self.line(first + k as u64, line, true)?;
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        self.line(c.line_number().unwrap_or(0), c.bytes(), false)?;
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        self.gap()?;
        Ok(true)
    }
}

/// Byte ranges of the matches in `text`, widened to whole chars (a byte-level pattern can match
/// inside one).
fn match_ranges(matcher: &RegexMatcher, text: &str) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let _ = matcher.find_iter(text.as_bytes(), |m| {
        let mut start = m.start().min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = m.end().min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        if start < end {
            match out.last_mut() {
                Some(last) if last.1 >= start => last.1 = last.1.max(end),
                _ => out.push((start, end)),
            }
        }
        true
    });
    out
}

/// Writes hits in one format.
trait Printer {
    fn start(&mut self) -> io::Result<()>;
    fn hit(&mut self, hit: &Hit, matcher: &RegexMatcher) -> io::Result<()>;
    fn line(&mut self, n: u64, text: &str, matched: bool, matcher: &RegexMatcher)
    -> io::Result<()>;
    fn gap(&mut self) -> io::Result<()>;
    fn end_hit(&mut self) -> io::Result<()>;
    fn finish(&mut self) -> io::Result<()>;
}

const MATCH: &str = "\x1b[1;31m";
const HEADER: &str = "\x1b[35m";
const NUMBER: &str = "\x1b[32m";
const RESET: &str = "\x1b[0m";

/// `20261123T163115.123Z-9f3a1c #12 · 2026-11-23 16:31:15 · /home/me/proj · exit 1`, the
/// command line, then numbered lines (`12:` a match, `11-` context, `--` between groups).
struct TextPrinter<'a> {
    out: &'a mut dyn Write,
    color: bool,
    first: bool,
}

impl TextPrinter<'_> {
    /// `text` shown visibly, its matches highlighted when colouring: each piece is shown on its
    /// own, so a highlight covers exactly what is shown of its match (`^[` for an ESC).
    fn highlighted(&self, text: &str, matcher: &RegexMatcher) -> String {
        if !self.color {
            return visible::text(text).into_owned();
        }
        let mut s = String::with_capacity(text.len() + 16);
        let mut at = 0;
        for (a, b) in match_ranges(matcher, text) {
            s.push_str(&visible::text(&text[at..a]));
            s.push_str(MATCH);
            s.push_str(&visible::text(&text[a..b]));
            s.push_str(RESET);
            at = b;
        }
        s.push_str(&visible::text(&text[at..]));
        s
    }
}

/// `exit 1`, `exit 127: command not found`, `still running`, `exit status unknown`
/// ([`crate::context::words`]).
fn status_text(h: &Hit) -> String {
    crate::context::words::status(h.ending)
}

impl Printer for TextPrinter<'_> {
    fn start(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn hit(&mut self, h: &Hit, matcher: &RegexMatcher) -> io::Result<()> {
        if !self.first {
            writeln!(self.out)?;
        }
        self.first = false;
        let cwd = if h.cwd.is_empty() { "?" } else { &h.cwd };
        let header = format!(
            "{} #{} · {} · {} · {}",
            h.session_id,
            h.seq,
            local_time(h.started_at),
            visible::line(cwd),
            status_text(h)
        );
        if self.color {
            writeln!(self.out, "{HEADER}{header}{RESET}")?;
        } else {
            writeln!(self.out, "{header}")?;
        }
        for (i, l) in h.command_line.split('\n').enumerate() {
            let shown = if h.command_matched {
                self.highlighted(l, matcher)
            } else {
                visible::text(l).into_owned()
            };
            let by = if h.author == crate::store::USER {
                String::new()
            } else {
                format!("[{}] ", visible::line(&h.author))
            };
            match (&h.elsewhere, i) {
                (Some(place), 0) => writeln!(self.out, "{by}{place}$ {shown}")?,
                (_, 0) => writeln!(self.out, "{by}$ {shown}")?,
                _ => writeln!(self.out, "> {shown}")?,
            }
        }
        Ok(())
    }

    fn line(
        &mut self,
        n: u64,
        text: &str,
        matched: bool,
        matcher: &RegexMatcher,
    ) -> io::Result<()> {
        let sep = if matched { ':' } else { '-' };
        let text = if matched {
            self.highlighted(text, matcher)
        } else {
            visible::text(text).into_owned()
        };
        if self.color {
            writeln!(self.out, "{NUMBER}{n}{RESET}{sep}{text}")
        } else {
            writeln!(self.out, "{n}{sep}{text}")
        }
    }

    fn gap(&mut self) -> io::Result<()> {
        writeln!(self.out, "--")
    }

    fn end_hit(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// One JSON document, written as hits come: `{"version":1,"hits":[{...,"lines":[...]}]}`.
struct JsonPrinter<'a> {
    out: &'a mut dyn Write,
    first: bool,
    first_line: bool,
}

/// One output line of a hit in JSON.
#[derive(Serialize)]
struct JsonLine<'a> {
    line: u64,
    text: &'a str,
    #[serde(rename = "match")]
    matched: bool,
    /// Byte ranges of the matches in `text` (UTF-8).
    ranges: Vec<(usize, usize)>,
}

impl Printer for JsonPrinter<'_> {
    fn start(&mut self) -> io::Result<()> {
        write!(self.out, "{{\"version\":1,\"hits\":[")
    }

    fn hit(&mut self, h: &Hit, matcher: &RegexMatcher) -> io::Result<()> {
        if !self.first {
            write!(self.out, ",")?;
        }
        self.first = false;
        let mut v = serde_json::to_value(h).map_err(io::Error::other)?;
        let ranges = if h.command_matched {
            match_ranges(matcher, &h.command_line)
        } else {
            Vec::new()
        };
        v["command_ranges"] = serde_json::to_value(ranges).map_err(io::Error::other)?;
        let text = visible::json_string(&v, false).map_err(io::Error::other)?;
        // The object stays open for its lines.
        write!(
            self.out,
            "\n{},\"lines\":[",
            text.strip_suffix('}').unwrap_or(&text)
        )?;
        self.first_line = true;
        Ok(())
    }

    fn line(
        &mut self,
        n: u64,
        text: &str,
        matched: bool,
        matcher: &RegexMatcher,
    ) -> io::Result<()> {
        if !std::mem::replace(&mut self.first_line, false) {
            write!(self.out, ",")?;
        }
        let line = JsonLine {
            line: n,
            text,
            matched,
            ranges: if matched {
                match_ranges(matcher, text)
            } else {
                Vec::new()
            },
        };
        visible::json_writer(&mut *self.out, &line, false).map_err(io::Error::other)
    }

    fn gap(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn end_hit(&mut self) -> io::Result<()> {
        write!(self.out, "]}}")
    }

    fn finish(&mut self) -> io::Result<()> {
        writeln!(self.out, "\n]}}")?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_cover_what_is_shown_of_each_match() {
        let matcher = RegexMatcherBuilder::new().build(r"\x1b\]52|é").unwrap();
        let mut out = Vec::new();
        let mut p = TextPrinter {
            out: &mut out,
            color: true,
            first: true,
        };
        let text = "a\x1b]52;c;eA==\x07b\u{202e}é\tc";
        assert_eq!(
            p.highlighted(text, &matcher),
            format!("a{MATCH}^[]52{RESET};c;eA==^Gb<U+202E>{MATCH}é{RESET}\tc")
        );
        p.color = false;
        assert_eq!(
            p.highlighted(text, &matcher),
            "a^[]52;c;eA==^Gb<U+202E>é\tc"
        );
        // A byte-level match inside a char is widened to the whole char.
        let bytes = RegexMatcherBuilder::new().build(r"(?-u:\xA9)").unwrap();
        assert_eq!(match_ranges(&bytes, "xéy"), [(1, 3)]);
    }

    #[test]
    fn search_lines_are_what_context_shows_with_no_width_limit() {
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
        let cases = [
            ("error: a plain line", 0, ""),
            ("export GITHUB_TOKEN=", 0, token),
            ("head of a long line", 5000, " its tail: error"),
            ("", 0, ""),
        ];
        for (head, omitted, tail) in cases {
            let line = Line {
                head,
                omitted,
                tail,
            };
            for key_block in [false, true] {
                assert_eq!(
                    shown(&line, key_block),
                    show_line(
                        head,
                        omitted,
                        tail,
                        key_block,
                        0,
                        Some(&redact::Redactor::new())
                    ),
                    "{head:?} {omitted} {tail:?} {key_block}"
                );
            }
        }
        let line = Line {
            head: "x",
            omitted: 0,
            tail: token,
        };
        assert!(!shown(&line, false).contains("ghp_"));
    }
}
