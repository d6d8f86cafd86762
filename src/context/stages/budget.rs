//! Budget stage: fits a document under a token ceiling.
//!
//! The caller truncates and folds first ([`crate::context::stages::truncate`]) and then calls [`fit`] with
//! a token budget, given directly (`--budget`) or taken from a model profile
//! ([`crate::context::tokens::models`]).
//!
//! ## Fitting a token budget
//!
//! [`fit`] guarantees that the rendered document counts at most `budget` tokens, if any
//! rendering can: it reduces step by step, in this order,
//!
//! 1. older commands (all but the most recent), oldest first, become one-line summaries;
//! 2. the file lists (`--files`, `--changed`) are laid out again in fewer lines, down to
//!    [`MIN_FILE_LINES`];
//! 3. the most recent command's output shrinks (head + tail, errors kept) down to
//!    [`MIN_RECENT_LINES`] lines;
//! 4. older commands are dropped, oldest first;
//! 5. the environment's variables are left out, then the file lists are dropped, then the
//!    environment;
//! 6. notes are dropped, lowest priority first (the last printed first);
//! 7. the most recent command's output shrinks further, down to one line;
//! 8. the most recent command becomes a summary, and finally is dropped too.
//!
//! So notes rank after the most recent command and before older ones, and the sections asked
//! for with `--env` and `--files` after the notes.
//!
//! Before any of that, a document that does not fit has each command line that alone costs more
//! than a quarter of the budget ([`MAX_LINE_SHARE`]) shortened to its head and tail around
//! `…[N chars omitted]…` until it costs no more ([`narrow_command_lines`]): a command whose
//! line is longer than the budget is shown, not dropped.
//!
//! Step 3 stops at a floor before step 4 because a few lines of the command the user asks about
//! are worth more than the one-line summaries of much older ones. If even the empty document
//! (which still says that everything was dropped) is over the budget, everything is dropped and
//! the report says so.
//!
//! A document small enough that it may fit (at most [`WHOLE_COUNT_BYTES_PER_TOKEN`] bytes per
//! token of the budget) is first counted whole, once: when it fits, that is all. Otherwise
//! per-command token costs are measured once, newest first, on small documents holding just
//! that command and its predecessor. Once the newer commands alone cost more than the budget,
//! the older ones can only be summarized or dropped: their full outputs are never tokenized, and
//! a document far over the budget is never counted whole, so fitting costs what is kept, not
//! what was selected; the reduction level is found by binary search over these estimates, and only
//! then is the whole document rendered and counted. Estimation errors (shared headers, the report
//! line) are corrected by moving to further levels until the full count fits.

use std::collections::HashMap;

use crate::context::model::{
    BudgetReport, CommandContext, ContextDoc, EnvSection, FilesSection, NoteEntry,
};
use crate::context::stages::truncate::truncate;
use crate::context::tokens::tokenizer::TokenCounter;

/// Reduces a command to a one-line summary: no output, `summarized` set.
/// The whole output counts as one gap, so `output.len() + sum(gaps) == output_lines` still holds.
fn summarize(ctx: &mut CommandContext) {
    ctx.output.clear();
    ctx.gaps.clear();
    if ctx.output_lines > 0 {
        ctx.gaps.push((0, ctx.output_lines));
    }
    ctx.summarized = true;
}

/// Kept lines of the most recent command below which older commands are dropped before its
/// output is cut further.
pub(crate) const MIN_RECENT_LINES: usize = 6;

/// How reduced one command is in a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Full,
    /// Output cut to this many kept lines (most recent command only).
    Lines(usize),
    Summarized,
    Dropped,
}

/// A document of at most this many bytes per token of the budget may fit, and is counted whole
/// once before anything is measured per command (text averages about 4 bytes per token).
const WHOLE_COUNT_BYTES_PER_TOKEN: usize = 6;

/// Makes `doc` render to at most `budget` tokens (see the module docs), fills `doc.report`, and
/// returns how many tokens the document now renders to (which `report.tokens` says too, unless
/// the count did not settle).
pub(crate) fn fit(
    doc: &mut ContextDoc,
    budget: usize,
    counter: &dyn TokenCounter,
    render: &dyn Fn(&ContextDoc) -> String,
) -> usize {
    doc.report.budget = Some(budget);
    doc.report.tokenizer = Some(counter.name().to_string());
    doc.report.tokens = Some(budget);
    let reducible = !doc.commands.is_empty()
        || !doc.notes.is_empty()
        || doc.env.is_some()
        || doc.files.is_some();
    if !reducible {
        return count_settled(doc, counter, render);
    }
    // The common case, a document that fits, costs one count of it (bounded by the budget).
    let mut counted_whole = render(doc).len() <= budget.saturating_mul(WHOLE_COUNT_BYTES_PER_TOKEN);
    if counted_whole {
        let tokens = count_settled(doc, counter, render);
        if tokens <= budget {
            return tokens;
        }
    }
    if narrow_command_lines(doc, budget, counter) {
        counted_whole = render(doc).len() <= budget.saturating_mul(WHOLE_COUNT_BYTES_PER_TOKEN);
        if counted_whole {
            let tokens = count_settled(doc, counter, render);
            if tokens <= budget {
                return tokens;
            }
        }
    }
    let original = std::mem::take(&mut doc.commands);
    let sections = Sections::take(doc);
    // Costs are measured newest first and stop once the newer commands alone are over the
    // budget, so a document far over it is never tokenized whole.
    let mut fitter = Fitter::new(doc, &original, sections, counter, render, budget);
    if !fitter.proven_over && !counted_whole {
        doc.commands = original.clone();
        fitter.sections.restore(doc);
        let tokens = count_settled(doc, counter, render);
        if tokens <= budget {
            return tokens;
        }
        doc.commands.clear();
    }
    let mut eff = budget as i64;
    let mut level = 0;
    // The highest level counted over the budget.
    let mut over: Option<usize> = None;
    let found_tokens = loop {
        level = fitter.level_for(eff).max(level + 1).min(fitter.max_level());
        fitter.apply(level, doc);
        let tokens = count_settled(doc, counter, render);
        if tokens <= budget || level == fitter.max_level() {
            break tokens;
        }
        over = Some(level);
        eff -= (tokens - budget) as i64;
    };
    // Estimates err (shared headings, the report's wording, a `# cwd:` line), and a correction
    // can jump past levels that fit: find the lowest one between the last level counted over
    // the budget and the one found. Each is smaller than the one counted over, so this never
    // counts a document far over the budget.
    let Some(mut lo) = over.map(|o| o + 1) else {
        return found_tokens;
    };
    let found = level;
    // The next few levels one by one (costs are not monotone there: a summary can cost more
    // than a one-line output), then a binary search over the rest.
    while lo < found && lo <= over.unwrap_or(0) + 4 {
        fitter.apply(lo, doc);
        let tokens = count_settled(doc, counter, render);
        if tokens <= budget {
            return tokens;
        }
        lo += 1;
    }
    let mut hi = found;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        fitter.apply(mid, doc);
        if count_settled(doc, counter, render) <= budget {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    fitter.apply(hi, doc);
    let tokens = count_settled(doc, counter, render);
    if tokens > budget && hi != found {
        fitter.apply(found, doc);
        return count_settled(doc, counter, render);
    }
    tokens
}

/// A command line may cost at most `budget / MAX_LINE_SHARE` tokens once the document does
/// not fit.
pub(crate) const MAX_LINE_SHARE: usize = 4;

/// Narrowest a command line is cut to, in chars.
const MIN_LINE_WIDTH: usize = 16;

/// Shortens every command line of `doc` that costs more than `budget / MAX_LINE_SHARE` tokens to
/// the widest head and tail (around `…[N chars omitted]…`) that cost no more, or to
/// [`MIN_LINE_WIDTH`] chars. Lines are at most [`crate::store::COMMAND_LINE_CAP`] chars (select
/// cut them), so each costs a few counts of a few KB. Whether any line changed.
fn narrow_command_lines(doc: &mut ContextDoc, budget: usize, counter: &dyn TokenCounter) -> bool {
    let cap = (budget / MAX_LINE_SHARE).max(1);
    let mut changed = false;
    for c in &mut doc.commands {
        // A token takes at least a byte: a line of no more bytes than `cap` fits uncounted.
        if c.command_line.len() <= cap.max(MIN_LINE_WIDTH) || counter.count(&c.command_line) <= cap
        {
            continue;
        }
        let (head, omitted, tail) = c.command_line_parts();
        let shown = head.chars().count() + tail.chars().count();
        // The widest width that fits, by bisection over the chars kept.
        let (mut lo, mut hi) = (MIN_LINE_WIDTH, shown.max(MIN_LINE_WIDTH));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            let (line, _, _) = narrowed(head, omitted, tail, mid);
            if counter.count(&line) <= cap {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let (line, head_len, omitted) = narrowed(head, omitted, tail, lo);
        c.command_line = line;
        c.command_line_head = head_len;
        c.command_line_omitted = omitted;
        changed = true;
    }
    changed
}

/// The line of `head`, `omitted` chars and `tail` kept to `width` chars: the line, its head's
/// length in bytes and the chars now left out. A whole line (`omitted` 0) is cut from its one
/// string.
fn narrowed(head: &str, omitted: u64, tail: &str, width: usize) -> (String, usize, u64) {
    let whole;
    let (head, tail) = if omitted == 0 {
        whole = format!("{head}{tail}");
        (whole.as_str(), whole.as_str())
    } else {
        (head, tail)
    };
    let (hn, tn) = (head.chars().count(), tail.chars().count());
    if omitted == 0 && hn <= width {
        return (head.to_string(), 0, 0);
    }
    let a = width.div_ceil(2).min(hn);
    let b = (width - width.div_ceil(2)).min(tn);
    let h_end = head.char_indices().nth(a).map_or(head.len(), |(i, _)| i);
    let t_start = tail
        .char_indices()
        .nth(tn - b)
        .map_or(tail.len(), |(i, _)| i);
    let left_out = if omitted == 0 {
        (hn - a - b) as u64
    } else {
        omitted + (hn - a) as u64 + (tn - b) as u64
    };
    let line = format!(
        "{}{}{}",
        &head[..h_end],
        crate::store::omitted_marker(left_out),
        &tail[t_start..]
    );
    (line, h_end, left_out)
}

/// Counts `doc`, updating `report.tokens` until it matches the count it is part of.
fn count_settled(
    doc: &mut ContextDoc,
    counter: &dyn TokenCounter,
    render: &dyn Fn(&ContextDoc) -> String,
) -> usize {
    let mut tokens = counter.count(&render(doc));
    for _ in 0..4 {
        if doc.report.tokens == Some(tokens) {
            break;
        }
        doc.report.tokens = Some(tokens);
        tokens = counter.count(&render(doc));
    }
    tokens
}

/// The sections besides the commands, as the document had them.
struct Sections {
    notes: Vec<NoteEntry>,
    env: Option<EnvSection>,
    files: Option<FilesSection>,
}

impl Sections {
    fn take(doc: &mut ContextDoc) -> Sections {
        Sections {
            notes: std::mem::take(&mut doc.notes),
            env: doc.env.take(),
            files: doc.files.take(),
        }
    }

    fn restore(&self, doc: &mut ContextDoc) {
        doc.notes = self.notes.clone();
        doc.env = self.env.clone();
        doc.files = self.files.clone();
    }

    /// Lines of the file section before any cut.
    fn files_len(&self) -> usize {
        self.files.as_ref().map_or(0, |f| {
            f.lines
                .len()
                .max(f.changed.as_ref().map_or(0, |c| c.files.len()))
        })
    }

    fn env_has_vars(&self) -> bool {
        self.env.as_ref().is_some_and(|e| !e.vars.is_empty())
    }
}

/// The file lists are cut down to this many lines before the most recent command's output is
/// cut; they are dropped after the older commands.
pub(crate) const MIN_FILE_LINES: usize = 10;

/// How reduced the sections are in a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SectionStates {
    /// The first this many notes are kept.
    notes: usize,
    /// The file lists cut to this many lines; `None`: dropped.
    files: Option<usize>,
    env_vars: bool,
    env: bool,
}

/// Plans reductions of one document. Levels are numbered from 0 (nothing reduced) to
/// `max_level()` (everything dropped); each level reduces at least as much as the one before.
struct Fitter<'a> {
    original: &'a [CommandContext],
    sections: Sections,
    counter: &'a dyn TokenCounter,
    render: &'a dyn Fn(&ContextDoc) -> String,
    /// The document without commands and sections, for rendering samples.
    shell: ContextDoc,
    /// Older commands whose summary is cheaper than their output, oldest first.
    summarizable: Vec<usize>,
    /// Marginal token cost of each command in full and summarized form.
    full: Vec<i64>,
    summary: Vec<i64>,
    /// Cost of the most recent command with its output cut to k lines.
    recent_lines: HashMap<usize, i64>,
    /// Kept lines of the most recent command before any cut, and the floor of step 2.
    recent_len: usize,
    floor: usize,
    /// Lines of the file lists before any cut, and the floor they are first cut to.
    files_len: usize,
    files_floor: usize,
    /// The newer commands alone cost more than the budget: the whole document cannot fit, and
    /// the full costs of the older ones (which no fitting level keeps) were not measured.
    proven_over: bool,
}

impl<'a> Fitter<'a> {
    fn new(
        doc: &ContextDoc,
        original: &'a [CommandContext],
        sections: Sections,
        counter: &'a dyn TokenCounter,
        render: &'a dyn Fn(&ContextDoc) -> String,
        budget: usize,
    ) -> Self {
        let shell = ContextDoc {
            group_sessions: doc.group_sessions,
            parts: doc.parts,
            report: doc.report.clone(),
            ..Default::default()
        };
        let n = original.len();
        let recent_len = original.last().map_or(0, |c| c.output.len());
        let files_len = sections.files_len();
        let mut f = Fitter {
            original,
            sections,
            counter,
            render,
            shell,
            summarizable: Vec::new(),
            full: vec![0; n],
            summary: vec![0; n],
            recent_lines: HashMap::new(),
            recent_len,
            floor: recent_len.min(MIN_RECENT_LINES),
            files_len,
            files_floor: files_len.min(MIN_FILE_LINES),
            proven_over: false,
        };
        // A level keeping command i in full keeps every newer one in full too (older commands
        // are reduced first), so once the newer ones cost more than the budget (with a margin
        // for estimation error), command i is never kept in full: its full cost is not
        // measured, only bounded, and its summary is measured after a summarized predecessor.
        let over = budget as i64 + budget as i64 / 8 + 16;
        let mut newer: i64 = 0;
        for i in (0..n).rev() {
            let c = &original[i];
            let skipped = newer > over;
            f.proven_over |= skipped;
            let mut s = c.clone();
            summarize(&mut s);
            let summary = f.marginal(i, &s, skipped);
            let full = match (skipped, c.summarized) {
                // Already a summary: in full it is that summary.
                (true, true) => summary,
                (true, false) => over + 1,
                (false, _) => f.marginal(i, c, false),
            };
            f.full[i] = full;
            f.summary[i] = summary;
            newer = newer.saturating_add(full);
        }
        f.proven_over |= newer > over;
        // Summaries of short outputs can cost more than the outputs; those stay as they are.
        f.summarizable = (0..n.saturating_sub(1))
            .filter(|&i| !original[i].summarized && f.summary[i] < f.full[i])
            .collect();
        f
    }

    /// Tokens `c`, standing at position `i`, adds to a document holding its predecessor (in
    /// full, or summarized).
    fn marginal(&self, i: usize, c: &CommandContext, summarized_pred: bool) -> i64 {
        let mut d = self.shell.clone();
        if i > 0 {
            let mut pred = self.original[i - 1].clone();
            if summarized_pred {
                summarize(&mut pred);
            }
            d.commands.push(pred);
        }
        let before = self.counter.count(&(self.render)(&d)) as i64;
        d.commands.push(c.clone());
        let after = self.counter.count(&(self.render)(&d)) as i64;
        (after - before).max(0)
    }

    fn recent_cost(&mut self, k: usize) -> i64 {
        if let Some(&c) = self.recent_lines.get(&k) {
            return c;
        }
        let n = self.original.len();
        let mut c = self.original[n - 1].clone();
        truncate(&mut c, k);
        let cost = self.marginal(n - 1, &c, false);
        self.recent_lines.insert(k, cost);
        cost
    }

    // Level layout: summarize older; cut the file lists to their floor; cut recent to
    // recent_len-1 .. floor; drop older one by one; leave out the environment variables; drop
    // the file lists; drop the environment; drop notes, lowest priority first; cut recent to
    // floor-1 .. 1; summarize recent; drop it.
    fn phase_sizes(&self) -> [usize; 11] {
        let n = self.original.len();
        let recent = self.original.last();
        [
            self.summarizable.len(),
            self.files_len - self.files_floor,
            self.recent_len - self.floor,
            n.saturating_sub(1),
            usize::from(self.sections.env_has_vars()),
            usize::from(self.sections.files.is_some()),
            usize::from(self.sections.env.is_some()),
            self.sections.notes.len(),
            self.floor.saturating_sub(1),
            usize::from(recent.is_some_and(|r| r.output_lines > 0 && !r.summarized)),
            usize::from(recent.is_some()),
        ]
    }

    fn max_level(&self) -> usize {
        self.phase_sizes().iter().sum()
    }

    /// The states of all commands and sections at `level`.
    fn states(&self, level: usize) -> (Vec<State>, SectionStates) {
        let n = self.original.len();
        let sizes = self.phase_sizes();
        let mut states = vec![State::Full; n];
        let mut sec = SectionStates {
            notes: self.sections.notes.len(),
            files: self.sections.files.as_ref().map(|_| self.files_len),
            env_vars: self.sections.env_has_vars(),
            env: self.sections.env.is_some(),
        };
        let mut rest = level;
        for (phase, &size) in sizes.iter().enumerate() {
            let r = rest.min(size);
            match phase {
                0 => {
                    for &i in self.summarizable.iter().take(r) {
                        states[i] = State::Summarized;
                    }
                }
                1 => {
                    if sec.files.is_some() {
                        sec.files = Some(self.files_len - r);
                    }
                }
                2 => {
                    if r > 0 {
                        states[n - 1] = State::Lines(self.recent_len - r);
                    }
                }
                3 => {
                    for st in states.iter_mut().take(r) {
                        *st = State::Dropped;
                    }
                }
                4 => sec.env_vars &= r == 0,
                5 => {
                    if r > 0 {
                        sec.files = None;
                    }
                }
                6 => {
                    if r > 0 {
                        sec.env = false;
                        sec.env_vars = false;
                    }
                }
                7 => sec.notes -= r,
                8 => {
                    if r > 0 {
                        states[n - 1] = State::Lines(self.floor - r);
                    }
                }
                9 => {
                    if r > 0 {
                        states[n - 1] = State::Summarized;
                    }
                }
                _ => {
                    if r > 0 {
                        states[n - 1] = State::Dropped;
                    }
                }
            }
            if rest <= size {
                break;
            }
            rest -= size;
        }
        (states, sec)
    }

    fn report_for(&self, states: &[State], sec: &SectionStates) -> BudgetReport {
        let mut r = self.shell.report.clone();
        for (c, st) in self.original.iter().zip(states) {
            let id = (c.session_id.clone(), c.seq);
            match st {
                State::Summarized => r.summarized.push(id),
                State::Dropped => r.dropped.push(id),
                State::Full | State::Lines(_) => {}
            }
        }
        r.notes_dropped = self.sections.notes[sec.notes..]
            .iter()
            .rev()
            .map(|n| n.key.clone())
            .collect();
        if self.sections.env.is_some() {
            if !sec.env {
                r.sections.push("environment dropped".into());
            } else if self.sections.env_has_vars() && !sec.env_vars {
                r.sections.push("environment variables left out".into());
            }
        }
        if self.sections.files.is_some() {
            match sec.files {
                None => r.sections.push("file lists dropped".into()),
                Some(k) if k < self.files_len => {
                    r.sections.push(format!("file lists cut to {k} lines"))
                }
                Some(_) => {}
            }
        }
        r
    }

    /// `doc`'s sections as `sec` has them.
    fn set_sections(&self, sec: &SectionStates, doc: &mut ContextDoc) {
        doc.notes = self.sections.notes[..sec.notes].to_vec();
        doc.env = self.sections.env.clone().filter(|_| sec.env).map(|mut e| {
            if !sec.env_vars {
                e.vars_dropped = true;
            }
            e
        });
        doc.files = match sec.files {
            None => None,
            Some(k) => self.sections.files.clone().map(|mut f| {
                if k < self.files_len {
                    f.cut(k);
                }
                f
            }),
        };
    }

    /// Estimated tokens of the document at `level`: the sections and the report counted
    /// together, plus each command's measured cost.
    fn estimate(&mut self, level: usize) -> i64 {
        let (states, sec) = self.states(level);
        let mut empty = self.shell.clone();
        empty.report = self.report_for(&states, &sec);
        self.set_sections(&sec, &mut empty);
        let mut total = self.counter.count(&(self.render)(&empty)) as i64;
        for (i, st) in states.iter().enumerate() {
            total += match *st {
                State::Full => self.full[i],
                State::Lines(k) => self.recent_cost(k),
                State::Summarized => self.summary[i],
                State::Dropped => 0,
            };
        }
        total
    }

    /// The lowest level whose estimate is within `eff` (binary search; estimates fall with the
    /// level, up to noise that the caller's full count corrects).
    fn level_for(&mut self, eff: i64) -> usize {
        let (mut lo, mut hi) = (0, self.max_level());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.estimate(mid) <= eff {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    /// Sets `doc` to the document at `level`.
    fn apply(&self, level: usize, doc: &mut ContextDoc) {
        let (states, sec) = self.states(level);
        doc.report = self.report_for(&states, &sec);
        self.set_sections(&sec, doc);
        doc.commands = self
            .original
            .iter()
            .zip(&states)
            .filter_map(|(c, st)| {
                let mut c = c.clone();
                match *st {
                    State::Full => {}
                    State::Lines(k) => truncate(&mut c, k),
                    State::Summarized => summarize(&mut c),
                    State::Dropped => return None,
                }
                Some(c)
            })
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::model::TreeLayout;
    use crate::context::model::testing::{arb_doc, check_consistent, ctx, numbered};
    use crate::context::stages::format::{Format, format};
    use crate::context::tokens::tokenizer::tokenizer;
    use proptest::prelude::*;

    // ---- model profiles ----

    fn text(d: &ContextDoc) -> String {
        format(d, Format::Text)
    }

    fn big_doc(n: usize, lines: usize) -> ContextDoc {
        let commands = (0..n)
            .map(|i| {
                let mut c = ctx(i as u64, &format!("cmd {i}"), &numbered(lines));
                c.cwd = "/p".into();
                c.exit_code = Some(if i % 3 == 0 { 1 } else { 0 });
                truncate(&mut c, 20);
                c
            })
            .collect();
        ContextDoc {
            commands,
            ..Default::default()
        }
    }

    /// A counter that remembers the longest text it was asked to count.
    struct Spy {
        longest: std::cell::Cell<usize>,
        total: std::cell::Cell<usize>,
    }
    impl TokenCounter for Spy {
        fn name(&self) -> &str {
            "chars4"
        }
        fn count(&self, text: &str) -> usize {
            self.longest.set(self.longest.get().max(text.len()));
            self.total.set(self.total.get() + text.len());
            text.chars().count().div_ceil(4)
        }
    }

    #[test]
    fn a_document_that_fits_is_counted_whole_and_nothing_else() {
        // 50 commands of 20 lines: about 10 KB, well within 5,000 tokens but over 5,000 bytes.
        let mut doc = big_doc(50, 40);
        let len = text(&doc).len();
        assert!(len > 5_000, "{len}");
        let spy = Spy {
            longest: Default::default(),
            total: Default::default(),
        };
        let tokens = fit(&mut doc, 5_000, &spy, &text);
        assert_eq!(tokens, spy.count(&text(&doc)));
        assert!(doc.report.summarized.is_empty() && doc.report.dropped.is_empty());
        // One count with the provisional report, one to settle it (+ the check above): no
        // per-command measurements.
        assert!(
            spy.total.get() <= 4 * (len + 100),
            "{} for a {len}-byte document",
            spy.total.get()
        );
    }

    #[test]
    fn fit_never_tokenizes_a_document_far_over_the_budget_whole() {
        // 200 commands of 2,000 lines each, kept whole: about 3 MB of text for a budget of
        // 1,000 tokens. Costs are measured newest first and stop once the newer commands alone
        // are over the budget, so no count covers more than a few commands.
        let commands: Vec<CommandContext> = (0..200)
            .map(|i| ctx(i, &format!("cmd {i}"), &numbered(2_000)))
            .collect();
        let whole: usize = commands
            .iter()
            .map(|c| c.output.iter().map(|l| l.len() + 1).sum::<usize>())
            .sum();
        let mut doc = ContextDoc {
            commands,
            ..Default::default()
        };
        let spy = Spy {
            longest: Default::default(),
            total: Default::default(),
        };
        fit(&mut doc, 1_000, &spy, &text);
        assert!(spy.count(&text(&doc)) <= 1_000);
        assert!(
            spy.longest.get() < whole / 20,
            "{} of {whole}",
            spy.longest.get()
        );
        assert!(spy.total.get() < whole, "{} of {whole}", spy.total.get());
    }

    #[test]
    fn fit_leaves_small_docs_alone_but_reports() {
        let t = tokenizer("o200k").unwrap();
        let mut d = big_doc(3, 2);
        let before = d.commands.clone();
        fit(&mut d, 10_000, t.as_ref(), &text);
        assert_eq!(d.commands, before);
        assert_eq!(d.report.budget, Some(10_000));
        assert_eq!(d.report.tokenizer.as_deref(), Some("o200k"));
        assert_eq!(d.report.tokens, Some(t.count(&text(&d))));
        assert!(!d.report.changed_anything());
    }

    #[test]
    fn a_command_line_longer_than_the_budget_is_narrowed_not_dropped() {
        let t = tokenizer("o200k").unwrap();
        // Base64-like text costs about a token per 1.3 chars: 4,000 chars are over 2,000.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let blob: String = (0..4000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                    [(x % 64) as usize] as char
            })
            .collect();
        let line = format!("curl -d {blob} https://example.com");
        assert!(t.count(&line) > 2000);
        let mut c = ctx(1, &line, &numbered(3));
        c.exit_code = Some(1);
        let mut doc = ContextDoc {
            commands: vec![c],
            ..Default::default()
        };
        let tokens = fit(&mut doc, 2000, t.as_ref(), &text);
        assert!(tokens <= 2000);
        assert_eq!(
            doc.commands.len(),
            1,
            "shown, not dropped: {:?}",
            doc.report
        );
        let c = &doc.commands[0];
        assert_eq!(c.output.len(), 3, "its output kept whole");
        assert!(t.count(&c.command_line) <= 2000 / MAX_LINE_SHARE);
        let (head, omitted, tail) = c.command_line_parts();
        assert!(
            head.starts_with("curl -d ") && tail.ends_with("https://example.com"),
            "{}",
            c.command_line
        );
        assert_eq!(
            head.chars().count() + omitted as usize + tail.chars().count(),
            line.chars().count()
        );
        // A line select already cut keeps counting what select left out.
        let (h, o, tl) = (&line[..1000], 5_000_000u64, &line[1000..]);
        let (narrow, head_len, left) = narrowed(h, o, tl, 100);
        assert_eq!(left, 5_000_000 + line.len() as u64 - 100);
        assert_eq!(
            narrow.chars().count(),
            100 + format!("…[{left} chars omitted]…").chars().count()
        );
        assert_eq!(head_len, 50);
        // A document that fits is left alone, long line included.
        let mut doc = ContextDoc {
            commands: vec![ctx(1, &line, &[])],
            ..Default::default()
        };
        fit(&mut doc, 10_000, t.as_ref(), &text);
        assert_eq!(doc.commands[0].command_line, line);
    }

    #[test]
    fn fit_summarizes_older_before_cutting_recent() {
        let t = tokenizer("o200k").unwrap();
        let mut d = big_doc(6, 40);
        let full_recent = d.commands[5].clone();
        let mut all_summarized = d.clone();
        for c in &mut all_summarized.commands[..5] {
            summarize(c);
        }
        let needed = t.count(&text(&all_summarized)) + 40; // room for the report line
        fit(&mut d, needed, t.as_ref(), &text);
        let rendered = text(&d);
        assert!(t.count(&rendered) <= needed, "{rendered}");
        assert_eq!(d.report.tokens, Some(t.count(&rendered)));
        assert_eq!(d.commands.len(), 6);
        assert_eq!(d.commands[5], full_recent, "recent command kept whole");
        assert!(d.commands[0].summarized, "oldest summarized first");
        assert!(d.report.dropped.is_empty());
        let n = d.report.summarized.len();
        assert!(n >= 1);
        // summarized ones are exactly the oldest n
        for (i, c) in d.commands.iter().enumerate() {
            assert_eq!(c.summarized, i < n, "{i}");
        }
        assert_eq!(
            d.report.summarized,
            (0..n as u64)
                .map(|s| ("s".to_string(), s))
                .collect::<Vec<_>>()
        );
        assert!(rendered.contains("[omnish: budget"), "{rendered}");
    }

    #[test]
    fn fit_cuts_recent_before_dropping_and_keeps_its_errors() {
        let t = tokenizer("o200k").unwrap();
        let mut d = big_doc(4, 10);
        let mut recent = numbered(20);
        recent[9] = "error: the cause".into();
        let mut last = ctx(9, "cargo build", &recent);
        last.exit_code = Some(101);
        d.commands.push(last);
        // Enough for summaries of the older commands and a few lines of the recent one.
        let mut probe = d.clone();
        for c in &mut probe.commands[..4] {
            summarize(c);
        }
        truncate(&mut probe.commands[4], 8);
        let budget = t.count(&text(&probe)) + 30;
        fit(&mut d, budget, t.as_ref(), &text);
        let rendered = text(&d);
        assert!(t.count(&rendered) <= budget, "{rendered}");
        assert_eq!(d.commands.len(), 5, "{rendered}");
        assert!(d.commands[..4].iter().all(|c| c.summarized), "{rendered}");
        let recent = &d.commands[4];
        assert!(!recent.summarized);
        assert!(recent.output.len() < 20 && recent.output.len() >= MIN_RECENT_LINES);
        assert!(
            recent.output.contains(&"error: the cause".to_string()),
            "{rendered}"
        );
        assert_eq!(recent.output.last().unwrap(), "line 19");
        check_consistent(recent);
    }

    #[test]
    fn fit_drops_oldest_when_summaries_do_not_fit() {
        let t = tokenizer("chars4").unwrap();
        let mut d = big_doc(30, 30);
        fit(&mut d, 150, t.as_ref(), &text);
        let rendered = text(&d);
        assert!(t.count(&rendered) <= 150, "{rendered}");
        assert!(!d.report.dropped.is_empty());
        // dropped are the oldest, in order
        let dropped_seqs: Vec<u64> = d.report.dropped.iter().map(|x| x.1).collect();
        assert_eq!(
            dropped_seqs,
            (0..dropped_seqs.len() as u64).collect::<Vec<_>>()
        );
        // the most recent survives
        assert_eq!(d.commands.last().unwrap().seq, 29);
        // report lists every command exactly once across kept/summarized/dropped
        assert_eq!(d.commands.len() + d.report.dropped.len(), 30);
        for (sid, seq) in &d.report.summarized {
            assert!(
                d.commands
                    .iter()
                    .any(|c| &c.session_id == sid && c.seq == *seq && c.summarized)
            );
        }
        assert!(rendered.contains("dropped]"), "{rendered}");
    }

    #[test]
    fn fit_tiny_budget_drops_everything_and_says_so() {
        let t = tokenizer("o200k").unwrap();
        let mut d = big_doc(3, 5);
        fit(&mut d, 1, t.as_ref(), &text);
        assert!(d.commands.is_empty());
        assert_eq!(d.report.dropped.len(), 3);
        assert!(d.report.summarized.is_empty());
        let rendered = text(&d);
        assert!(rendered.contains("nothing fit"), "{rendered}");
        assert_eq!(d.report.tokens, Some(t.count(&rendered)));
    }

    #[test]
    fn fit_works_with_json_and_markdown() {
        let t = tokenizer("o200k").unwrap();
        for f in [Format::Json, Format::Markdown] {
            let render = move |d: &ContextDoc| format(d, f);
            let mut d = big_doc(20, 25);
            d.group_sessions = true;
            fit(&mut d, 900, t.as_ref(), &render);
            let out = render(&d);
            assert!(t.count(&out) <= 900, "{f:?}");
            assert_eq!(d.report.tokens, Some(t.count(&out)), "{f:?}");
            assert!(d.report.changed_anything());
        }
    }

    #[test]
    fn fit_is_fast_for_many_commands() {
        let t = tokenizer("chars4").unwrap();
        let calls = std::cell::Cell::new(0usize);
        let render = |d: &ContextDoc| {
            calls.set(calls.get() + d.commands.len().max(1));
            text(d)
        };
        let mut d = big_doc(2000, 30);
        fit(&mut d, 5000, t.as_ref(), &render);
        assert!(t.count(&text(&d)) <= 5000);
        // Rendering work is linear-ish in n, not quadratic: well under n² / 10 command renders.
        assert!(calls.get() < 2000 * 200, "{}", calls.get());
    }

    #[test]
    fn fit_cuts_file_lists_before_the_recent_command_and_drops_sections_after_older_ones() {
        use crate::context::model::{EnvSection, FilesSection};
        let t = tokenizer("chars4").unwrap();
        let paths: Vec<String> = (0..30)
            .flat_map(|d| (0..8).map(move |f| format!("dir{d:02}/file{f}.rs")))
            .collect();
        let tree = std::sync::Arc::new(crate::context::sources::files::tree_of(&paths, None, 40));
        let mut d = big_doc(3, 12);
        d.files = Some(FilesSection {
            root: "/p".into(),
            total_files: 240,
            lines: tree.lines(200),
            tree: Some(tree),
            changed: None,
        });
        d.env = Some(EnvSection {
            cwd: "/p".into(),
            vars: vec![("PATH".into(), "/usr/bin:/bin".into())],
            ..Default::default()
        });
        let whole = t.count(&text(&d));
        let recent = d.commands[2].clone();
        // A little less than everything: the file list is cut, the commands stay.
        let mut cut = d.clone();
        fit(&mut cut, whole - 200, t.as_ref(), &text);
        let r = &cut.report;
        assert!(
            r.sections
                .iter()
                .any(|s| s.starts_with("file lists cut to")),
            "{r:?}"
        );
        let shown = cut.files.as_ref().unwrap().lines.len();
        assert!((MIN_FILE_LINES..200).contains(&shown), "{shown}");
        assert_eq!(cut.commands.last(), Some(&recent));
        assert!(cut.env.as_ref().is_some_and(|e| !e.vars_dropped));
        // Room for little more than the recent command: older commands, the variables, the
        // file lists and the environment go, in that order, before the recent command's last
        // lines.
        let mut tight = d.clone();
        let mut alone = d.clone();
        alone.commands.drain(..2);
        alone.env = None;
        alone.files = None;
        fit(&mut tight, t.count(&text(&alone)) + 30, t.as_ref(), &text);
        assert!(
            tight.files.is_none() && tight.env.is_none(),
            "{:?}",
            tight.report
        );
        // The recent command was cut to its floor before anything was dropped.
        assert_eq!(tight.commands.len(), 1);
        assert_eq!(tight.commands[0].seq, recent.seq);
        assert_eq!(tight.commands[0].output.len(), MIN_RECENT_LINES);
        assert_eq!(tight.report.dropped.len(), 2);
        assert_eq!(
            tight.report.sections,
            ["environment dropped", "file lists dropped"]
        );
        assert!(
            text(&tight).contains("environment dropped, file lists dropped]"),
            "{}",
            text(&tight)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn fit_is_a_hard_ceiling(doc in arb_doc(), budget in 0usize..600, fmt in 0usize..3) {
            let f = [Format::Text, Format::Markdown, Format::Json][fmt];
            let t = tokenizer("chars4").unwrap();
            let render = move |d: &ContextDoc| format(d, f);
            let n = doc.commands.len();
            let mut d = doc.clone();
            fit(&mut d, budget, t.as_ref(), &render);
            let tokens = t.count(&render(&d));
            prop_assert_eq!(d.report.tokens, Some(tokens));
            if tokens > budget {
                // only when even the empty document does not fit
                prop_assert!(d.commands.is_empty());
                prop_assert_eq!(d.report.dropped.len(), n);
            }
            prop_assert_eq!(d.commands.len() + d.report.dropped.len(), n);
            if tokens > budget {
                prop_assert!(d.notes.is_empty() && d.env.is_none() && d.files.is_none());
            }
            for c in &d.commands { check_consistent(c); }
            // Notes rank after the newest command and before older ones: a note is dropped
            // only once every older command is, and the newest command is cut below its floor
            // only once every note is dropped.
            prop_assert_eq!(d.notes.len() + d.report.notes_dropped.len(), doc.notes.len());
            if !d.report.notes_dropped.is_empty() {
                prop_assert!(d.commands.len() <= 1, "{:?}", d.report);
                // The lowest priority (printed last) goes first.
                let kept: Vec<&str> = d.notes.iter().map(|n| n.key.as_str()).collect();
                let want: Vec<&str> = doc.notes[..d.notes.len()].iter().map(|n| n.key.as_str()).collect();
                prop_assert_eq!(kept, want);
            }
            if d.commands.len() > 1 {
                prop_assert_eq!(d.notes.len(), doc.notes.len());
                prop_assert_eq!(d.env.is_some(), doc.env.is_some());
                prop_assert_eq!(d.files.is_some(), doc.files.is_some());
            }
            if let (Some(last), Some(orig)) = (d.commands.last(), doc.commands.last()) {
                let cut_below_floor = last.summarized && !orig.summarized
                    || last.output.len() < orig.output.len().min(MIN_RECENT_LINES);
                if cut_below_floor {
                    prop_assert!(d.notes.is_empty(), "{:?}", d.report);
                }
            }
            // the most recent command is never dropped while others remain
            if let Some(last) = doc.commands.last() {
                if !d.commands.is_empty() {
                    prop_assert_eq!(d.commands.last().unwrap().seq, last.seq);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn fit_is_a_hard_ceiling_o200k(doc in arb_doc(), budget in 0usize..600) {
            let t = tokenizer("o200k").unwrap();
            let mut d = doc.clone();
            fit(&mut d, budget, t.as_ref(), &text);
            let tokens = t.count(&text(&d));
            prop_assert!(tokens <= budget || d.commands.is_empty());
        }
    }
}
