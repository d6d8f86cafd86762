//! Budget stage: per-command truncation, repeat folding, model profiles and the token ceiling.
//!
//! The caller runs, in order: [`truncate`] on every command (`--max-lines`, default 20),
//! [`fold_repeats`] over the list, then [`fit`] with a token budget, either given directly
//! (`--budget`) or taken from a model profile ([`resolve_model`], [`ModelProfile::default_budget`]).
//!
//! ## Truncation
//!
//! Output longer than the cap keeps its head and tail, half each. Lines from the elided middle
//! that look like errors ([`is_error_line`]) are kept too, in order, taking slots from head and
//! tail (each keeps at least a quarter of the cap); when there are more such lines than slots, the
//! earliest win, since the first error is usually the cause. Warnings are not kept: builds often
//! print hundreds of them and they would crowd out the errors. Every elision is recorded in
//! `CommandContext::gaps`, so formatters can print
//! `... (N lines omitted) ...` at each.
//!
//! ## Fitting a token budget
//!
//! [`fit`] guarantees that the rendered document counts at most `budget` tokens, if any
//! rendering can: it reduces step by step, in this order,
//!
//! 1. older commands (all but the most recent), oldest first, become one-line summaries;
//! 2. the most recent command's output shrinks (head + tail, errors kept) down to
//!    [`MIN_RECENT_LINES`] lines;
//! 3. older commands are dropped, oldest first;
//! 4. the most recent command's output shrinks further, down to one line;
//! 5. the most recent command becomes a summary, and finally is dropped too.
//!
//! Step 2 stops at a floor before step 3 because a few lines of the command the user asks about
//! are worth more than the one-line summaries of much older ones. If even the empty document
//! (which still says that everything was dropped) is over the budget, everything is dropped and
//! the report says so.
//!
//! Per-command token costs are measured once, on small documents holding just that command and
//! its predecessor; the reduction level is found by binary search over these estimates, and only
//! then is the whole document rendered and counted. Estimation errors (shared headers, the report
//! line) are corrected by moving to further levels until the full count fits.

use std::collections::HashMap;
use std::sync::OnceLock;

use anyhow::{Result, bail};
use regex::Regex;

use crate::context::model::{BudgetReport, CommandContext, ContextDoc};
use crate::context::tokenizer::TokenCounter;

/// What omnish knows about a language model: how much it can read and how to count for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelProfile {
    /// Canonical name, as listed in errors and help.
    pub name: &'static str,
    /// Other name prefixes that select this profile (the name itself always does).
    pub aliases: &'static [&'static str],
    /// Context window in tokens. For local models this is the window they are usually *run*
    /// with (ollama's default `num_ctx`), not what the weights support.
    pub context_window: usize,
    /// Fraction of the window the shell context may take by default; the rest is left for the
    /// question, system prompt and answer.
    pub budget_share: f32,
    /// Tokenizer to count with (one of [`crate::context::tokenizer::TOKENIZERS`]).
    pub tokenizer: &'static str,
}

impl ModelProfile {
    /// Token budget for the context when none is given: `context_window * budget_share`.
    pub fn default_budget(&self) -> usize {
        (self.context_window as f64 * f64::from(self.budget_share)).floor() as usize
    }
}

const fn profile(
    name: &'static str,
    aliases: &'static [&'static str],
    context_window: usize,
    budget_share: f32,
    tokenizer: &'static str,
) -> ModelProfile {
    ModelProfile {
        name,
        aliases,
        context_window,
        budget_share,
        tokenizer,
    }
}

/// Every known model. To add one, add a line; the longest matching name or alias wins, so a more
/// specific entry (`gpt-4o-mini`) may sit beside a general one (`gpt-4o`).
///
/// Tokenizers: OpenAI models use their own (`o200k`, `cl100k`). Anthropic and Google do not
/// publish theirs; `o200k` is used as an approximation, and the generous windows leave room for
/// its error. Local models use `cl100k`, which is close to Llama 3's tokenizer; models with
/// small-vocabulary tokenizers (Mistral, Code Llama, DeepSeek Coder) need more tokens for the same
/// text, so their share is lower.
pub const MODELS: &[ModelProfile] = &[
    // OpenAI
    profile("gpt-5", &[], 400_000, 0.25, "o200k"),
    profile("gpt-4.1", &[], 1_047_576, 0.1, "o200k"),
    profile("gpt-4o", &["chatgpt-4o"], 128_000, 0.25, "o200k"),
    profile("gpt-4o-mini", &[], 128_000, 0.25, "o200k"),
    profile("o1", &[], 200_000, 0.25, "o200k"),
    profile("o3", &[], 200_000, 0.25, "o200k"),
    profile("o4-mini", &[], 200_000, 0.25, "o200k"),
    profile("gpt-4-turbo", &[], 128_000, 0.25, "cl100k"),
    profile("gpt-4", &[], 8_192, 0.5, "cl100k"),
    profile("gpt-3.5-turbo", &[], 16_385, 0.5, "cl100k"),
    // Anthropic (tokenizer approximated)
    profile(
        "claude",
        &["sonnet", "opus", "haiku"],
        200_000,
        0.25,
        "o200k",
    ),
    // Google (tokenizer approximated)
    profile("gemini", &[], 1_000_000, 0.1, "o200k"),
    // Local models, as ollama runs them by default
    profile("llama3", &["llama-3"], 8_192, 0.5, "cl100k"),
    profile("llama3.1", &["llama-3.1"], 8_192, 0.5, "cl100k"),
    profile("llama3.2", &["llama-3.2"], 8_192, 0.5, "cl100k"),
    profile("llama3.3", &["llama-3.3"], 8_192, 0.5, "cl100k"),
    profile("qwen2.5", &["qwen-2.5"], 8_192, 0.5, "cl100k"),
    profile("qwen3", &["qwen-3"], 8_192, 0.5, "cl100k"),
    profile("phi3", &["phi-3"], 4_096, 0.5, "cl100k"),
    profile("phi4", &["phi-4"], 8_192, 0.5, "cl100k"),
    profile("gemma2", &["gemma-2"], 8_192, 0.5, "cl100k"),
    profile("gemma3", &["gemma-3"], 8_192, 0.5, "cl100k"),
    profile("mistral", &[], 4_096, 0.4, "cl100k"),
    profile("codellama", &["code-llama"], 4_096, 0.4, "cl100k"),
    profile("deepseek-coder", &[], 4_096, 0.4, "cl100k"),
    profile("deepseek-r1", &[], 8_192, 0.5, "cl100k"),
    profile("gpt-oss", &[], 8_192, 0.5, "o200k"),
];

/// The profile for a model name as users write it: case-insensitive, with any `provider/` prefix
/// (`openai/gpt-4o`) and ollama `:tag` (`llama3.2:3b`) ignored; the longest known name or alias
/// that the rest starts with wins (`qwen2.5-coder:7b` → `qwen2.5`, `gpt-4o-mini-2024-07-18` →
/// `gpt-4o-mini`).
pub fn resolve_model(name: &str) -> Result<&'static ModelProfile> {
    let lower = name.trim().to_lowercase();
    let base = lower.rsplit('/').next().unwrap_or("");
    let base = base.split(':').next().unwrap_or("");
    let mut best: Option<(usize, &'static ModelProfile)> = None;
    if !base.is_empty() {
        for p in MODELS {
            for key in std::iter::once(&p.name).chain(p.aliases) {
                if base.starts_with(key) && best.is_none_or(|(len, _)| key.len() > len) {
                    best = Some((key.len(), p));
                }
            }
        }
    }
    match best {
        Some((_, p)) => Ok(p),
        None => {
            let names: Vec<&str> = MODELS.iter().map(|p| p.name).collect();
            bail!(
                "unknown model '{name}'; known models: {} (use --budget to set a token budget directly)",
                names.join(", ")
            )
        }
    }
}

/// Whether a line looks like it reports an error, so truncation should keep it. Matches
/// (case-insensitive) `error`, `failed`, `failure`, `panicked`, `traceback`, `exception`,
/// `fatal`, `assert`, `segmentation fault`, `core dumped`, `undefined reference`, `cannot find`,
/// `not found`, `no such file`, `permission denied`, and pytest's `E   ` detail lines.
pub fn is_error_line(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?i)error|fail(ed|ure)|panicked|traceback|exception|fatal|assert|segmentation fault|core dumped|undefined reference|cannot find|not found|no such file|permission denied|(?-i:^E {3})",
        )
        .expect("static regex")
    });
    re.is_match(line)
}

/// Caps `ctx.output` at `max_lines` kept lines (0 = unlimited): head and tail, plus error lines
/// from the middle (see the module docs). Composes with earlier truncation: existing gaps are
/// kept and merged with new ones.
pub fn truncate(ctx: &mut CommandContext, max_lines: usize) {
    let n = ctx.output.len();
    if max_lines == 0 || n <= max_lines {
        return;
    }
    let keep = kept_indices(&ctx.output, max_lines);
    apply_keep(ctx, &keep);
}

/// Which of `lines` to keep, ascending, at most `max` (which is > 0 and < `lines.len()`).
fn kept_indices(lines: &[String], max: usize) -> Vec<usize> {
    let n = lines.len();
    let min_tail = max.div_ceil(4);
    let min_head = max / 4;
    let slots = max - min_head - min_tail;
    let split = |errors: usize| {
        let rest = max - errors;
        let head = rest / 2;
        (head, rest - head)
    };
    // Error lines outside head and tail, given how many slots errors take.
    let middle_errors = |head: usize, tail: usize| -> Vec<usize> {
        (head..n - tail)
            .filter(|&i| is_error_line(&lines[i]))
            .collect()
    };
    // Fewer error slots make head and tail longer and the middle shorter, so this settles.
    let mut e = slots;
    let (mut head, mut tail) = split(e);
    let mut errors = middle_errors(head, tail);
    loop {
        let want = errors.len().min(slots);
        if want >= e {
            break;
        }
        e = want;
        (head, tail) = split(e);
        errors = middle_errors(head, tail);
    }
    // The loop ends with at least `e` middle errors; the earliest `e` are kept.
    errors.truncate(e);
    let mut keep: Vec<usize> = (0..head).collect();
    keep.extend(errors);
    keep.extend(n - tail..n);
    keep
}

/// Keeps only `output[i]` for `i` in `keep` (ascending), merging the removed lines into gaps.
fn apply_keep(ctx: &mut CommandContext, keep: &[usize]) {
    let old_gaps = std::mem::take(&mut ctx.gaps);
    let mut g = old_gaps.iter().peekable();
    let mut k = keep.iter().peekable();
    let mut output = Vec::with_capacity(keep.len());
    let mut gaps = Vec::new();
    let mut pending = 0;
    for (i, line) in std::mem::take(&mut ctx.output).into_iter().enumerate() {
        while let Some(&&(at, count)) = g.peek() {
            if at > i {
                break;
            }
            pending += count;
            g.next();
        }
        if k.peek() == Some(&&i) {
            k.next();
            if pending > 0 {
                gaps.push((output.len(), pending));
                pending = 0;
            }
            output.push(line);
        } else {
            pending += 1;
        }
    }
    pending += g.map(|&(_, count)| count).sum::<usize>();
    if pending > 0 {
        gaps.push((output.len(), pending));
    }
    ctx.output = output;
    ctx.gaps = gaps;
}

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

/// Folds runs of the same command (same session, command line, output and exit code) into one
/// entry with `repeat` set to the run's total; the entry keeps the latest run's seq and
/// timestamps. Running commands are never folded.
pub fn fold_repeats(cmds: Vec<CommandContext>) -> Vec<CommandContext> {
    let mut out: Vec<CommandContext> = Vec::with_capacity(cmds.len());
    for c in cmds {
        if let Some(prev) = out.last_mut()
            && same_run(prev, &c)
        {
            let repeat = prev.repeat + c.repeat;
            *prev = c;
            prev.repeat = repeat;
            continue;
        }
        out.push(c);
    }
    out
}

fn same_run(a: &CommandContext, b: &CommandContext) -> bool {
    !a.running
        && !b.running
        && !a.summarized
        && !b.summarized
        && a.session_id == b.session_id
        && a.command_line == b.command_line
        && a.exit_code == b.exit_code
        && a.output == b.output
        && a.output_lines == b.output_lines
        && a.gaps == b.gaps
}

/// Kept lines of the most recent command below which older commands are dropped before its
/// output is cut further.
pub const MIN_RECENT_LINES: usize = 6;

/// How reduced one command is in a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Full,
    /// Output cut to this many kept lines (most recent command only).
    Lines(usize),
    Summarized,
    Dropped,
}

/// Makes `doc` render to at most `budget` tokens (see the module docs) and fills `doc.report`.
pub fn fit(
    doc: &mut ContextDoc,
    budget: usize,
    counter: &dyn TokenCounter,
    render: &dyn Fn(&ContextDoc) -> String,
) {
    doc.report.budget = Some(budget);
    doc.report.tokenizer = Some(counter.name().to_string());
    doc.report.tokens = Some(budget);
    let mut tokens = count_settled(doc, counter, render);
    if tokens <= budget || doc.commands.is_empty() {
        return;
    }
    let original = std::mem::take(&mut doc.commands);
    let mut fitter = Fitter::new(doc, &original, counter, render);
    let mut eff = budget as i64;
    let mut level = 0;
    loop {
        level = fitter.level_for(eff).max(level + 1).min(fitter.max_level());
        fitter.apply(level, doc);
        tokens = count_settled(doc, counter, render);
        if tokens <= budget || level == fitter.max_level() {
            break;
        }
        eff -= (tokens - budget) as i64;
    }
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

/// Plans reductions of one document. Levels are numbered from 0 (nothing reduced) to
/// `max_level()` (everything dropped); each level reduces at least as much as the one before.
struct Fitter<'a> {
    original: &'a [CommandContext],
    counter: &'a dyn TokenCounter,
    render: &'a dyn Fn(&ContextDoc) -> String,
    /// The document without commands, for rendering samples.
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
}

impl<'a> Fitter<'a> {
    fn new(
        doc: &ContextDoc,
        original: &'a [CommandContext],
        counter: &'a dyn TokenCounter,
        render: &'a dyn Fn(&ContextDoc) -> String,
    ) -> Self {
        let shell = ContextDoc {
            commands: Vec::new(),
            group_sessions: doc.group_sessions,
            parts: doc.parts,
            report: doc.report.clone(),
        };
        let n = original.len();
        let recent_len = original[n - 1].output.len();
        let mut f = Fitter {
            original,
            counter,
            render,
            shell,
            summarizable: Vec::new(),
            full: Vec::with_capacity(n),
            summary: Vec::with_capacity(n),
            recent_lines: HashMap::new(),
            recent_len,
            floor: recent_len.min(MIN_RECENT_LINES),
        };
        for (i, c) in original.iter().enumerate() {
            let full = f.marginal(i, c);
            let mut s = c.clone();
            summarize(&mut s);
            let summary = f.marginal(i, &s);
            f.full.push(full);
            f.summary.push(summary);
        }
        // Summaries of short outputs can cost more than the outputs; those stay as they are.
        f.summarizable = (0..n - 1)
            .filter(|&i| !original[i].summarized && f.summary[i] < f.full[i])
            .collect();
        f
    }

    /// Tokens `c`, standing at position `i`, adds to a document holding its predecessor.
    fn marginal(&self, i: usize, c: &CommandContext) -> i64 {
        let mut d = self.shell.clone();
        if i > 0 {
            d.commands.push(self.original[i - 1].clone());
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
        let cost = self.marginal(n - 1, &c);
        self.recent_lines.insert(k, cost);
        cost
    }

    // Level layout: [0, s] summarize older; then cut recent to recent_len-1 .. floor; then drop
    // older one by one; then cut recent to floor-1 .. 1; then summarize recent; then drop it.
    fn phase_sizes(&self) -> [usize; 6] {
        let n = self.original.len();
        [
            self.summarizable.len(),
            self.recent_len - self.floor,
            n - 1,
            self.floor.saturating_sub(1),
            usize::from(self.original[n - 1].output_lines > 0 && !self.original[n - 1].summarized),
            1,
        ]
    }

    fn max_level(&self) -> usize {
        self.phase_sizes().iter().sum()
    }

    /// The states of all commands at `level`.
    fn states(&self, level: usize) -> Vec<State> {
        let n = self.original.len();
        let [s, cut1, drop, cut2, summ, _] = self.phase_sizes();
        let mut states = vec![State::Full; n];
        let mut rest = level;
        for &i in self.summarizable.iter().take(rest.min(s)) {
            states[i] = State::Summarized;
        }
        if rest <= s {
            return states;
        }
        rest -= s;
        if rest <= cut1 {
            states[n - 1] = State::Lines(self.recent_len - rest);
            return states;
        }
        rest -= cut1;
        if self.recent_len > self.floor {
            states[n - 1] = State::Lines(self.floor);
        }
        for st in states.iter_mut().take(rest.min(drop)) {
            *st = State::Dropped;
        }
        if rest <= drop {
            return states;
        }
        rest -= drop;
        if rest <= cut2 {
            states[n - 1] = State::Lines(self.floor - rest);
            return states;
        }
        rest -= cut2;
        if rest <= summ {
            states[n - 1] = State::Summarized;
            return states;
        }
        states[n - 1] = State::Dropped;
        states
    }

    fn report_for(&self, states: &[State]) -> BudgetReport {
        let mut r = self.shell.report.clone();
        for (c, st) in self.original.iter().zip(states) {
            let id = (c.session_id.clone(), c.seq);
            match st {
                State::Summarized => r.summarized.push(id),
                State::Dropped => r.dropped.push(id),
                State::Full | State::Lines(_) => {}
            }
        }
        r
    }

    /// Estimated tokens of the document at `level`.
    fn estimate(&mut self, level: usize) -> i64 {
        let states = self.states(level);
        let mut empty = self.shell.clone();
        empty.report = self.report_for(&states);
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
        let states = self.states(level);
        doc.report = self.report_for(&states);
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
    use crate::context::format::{Format, format};
    use crate::context::model::Parts;
    use crate::context::tokenizer::tokenizer;
    use proptest::prelude::*;

    fn ctx(seq: u64, line: &str, out: &[String]) -> CommandContext {
        let mut c = CommandContext::new("s", seq, line);
        c.exit_code = Some(0);
        c.output = out.to_vec();
        c.output_lines = out.len();
        c
    }

    fn numbered(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("line {i}")).collect()
    }

    fn check_consistent(c: &CommandContext) {
        let total: usize = c.gaps.iter().map(|g| g.1).sum();
        assert_eq!(c.omitted_lines(), total);
        assert_eq!(c.output.len() + total, c.output_lines);
        assert!(c.gaps.windows(2).all(|w| w[0].0 < w[1].0), "{:?}", c.gaps);
        assert!(c.gaps.iter().all(|&(at, n)| at <= c.output.len() && n > 0));
    }

    // ---- model profiles ----

    #[test]
    fn resolves_names_tags_and_providers() {
        let cases = [
            ("gpt-4o", "gpt-4o"),
            ("GPT-4o", "gpt-4o"),
            ("openai/gpt-4o", "gpt-4o"),
            ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
            ("gpt-4.1-nano", "gpt-4.1"),
            ("gpt-4-0613", "gpt-4"),
            ("gpt-4-turbo-preview", "gpt-4-turbo"),
            ("gpt-3.5-turbo-16k", "gpt-3.5-turbo"),
            ("o3-mini", "o3"),
            ("o4-mini", "o4-mini"),
            ("gpt-5-mini", "gpt-5"),
            ("anthropic/claude-sonnet-4", "claude"),
            ("claude-3-5-haiku-latest", "claude"),
            ("sonnet", "claude"),
            ("gemini-2.5-pro", "gemini"),
            ("llama3.2:3b", "llama3.2"),
            ("llama3:8b", "llama3"),
            ("ollama/llama3.1:latest", "llama3.1"),
            ("qwen2.5-coder:7b", "qwen2.5"),
            ("qwen3:4b", "qwen3"),
            ("phi3:mini", "phi3"),
            ("phi4", "phi4"),
            ("gemma3:1b", "gemma3"),
            ("mistral:7b-instruct", "mistral"),
            ("codellama:13b", "codellama"),
            ("deepseek-coder:6.7b", "deepseek-coder"),
            ("deepseek-r1:8b", "deepseek-r1"),
            ("gpt-oss:20b", "gpt-oss"),
            (
                "hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M",
                "llama3.2",
            ),
        ];
        for (input, want) in cases {
            let got = resolve_model(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(got.name, want, "{input}");
        }
    }

    #[test]
    fn budgets_are_tight_for_local_models_and_generous_for_apis() {
        assert_eq!(resolve_model("llama3.2").unwrap().default_budget(), 4096);
        assert_eq!(resolve_model("phi3").unwrap().default_budget(), 2048);
        assert_eq!(resolve_model("gpt-4o").unwrap().default_budget(), 32_000);
        assert_eq!(
            resolve_model("claude-opus-4").unwrap().default_budget(),
            50_000
        );
        assert_eq!(resolve_model("gpt-4").unwrap().tokenizer, "cl100k");
        assert_eq!(resolve_model("gpt-4o").unwrap().tokenizer, "o200k");
        for p in MODELS {
            assert!(
                p.default_budget() > 0 && p.default_budget() < p.context_window,
                "{}",
                p.name
            );
            assert!(tokenizer(p.tokenizer).is_ok(), "{}", p.name);
        }
    }

    #[test]
    fn unknown_model_lists_names() {
        for bad in ["", "davinci", "foo/bar:baz", "/", ":x"] {
            let err = resolve_model(bad).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("unknown model '{bad}'; known models: ")),
                "{err}"
            );
            assert!(err.contains("gpt-4o, gpt-4o-mini"), "{err}");
            assert!(err.contains("llama3.2"), "{err}");
            assert!(
                err.ends_with("(use --budget to set a token budget directly)"),
                "{err}"
            );
        }
    }

    // ---- error lines ----

    #[test]
    fn error_line_detection() {
        for yes in [
            "error[E0308]: mismatched types",
            "TypeError: x is undefined",
            "FAILED tests/test_a.py::test_b",
            "test result: FAILED. 1 passed; 1 failed",
            "thread 'main' panicked at src/main.rs:2:5",
            "Traceback (most recent call last):",
            "Exception in thread \"main\" java.lang.NullPointerException",
            "fatal: not a git repository",
            "AssertionError: 1 != 2",
            "Segmentation fault (core dumped)",
            "main.c:(.text+0x1a): undefined reference to `foo'",
            "error: cannot find value `x` in this scope",
            "bash: foo: command not found",
            "E       assert 1 == 2",
            "cat: x: No such file or directory",
        ] {
            assert!(is_error_line(yes), "{yes}");
        }
        for no in [
            "   Compiling omnish v0.1.0",
            "warning: unused variable: `x`",
            "test a ... ok",
            "Everything up-to-date",
            "e   lowercase e is not pytest",
        ] {
            assert!(!is_error_line(no), "{no}");
        }
    }

    // ---- truncate ----

    #[test]
    fn truncate_keeps_head_and_tail() {
        let mut c = ctx(1, "seq 100", &numbered(100));
        truncate(&mut c, 20);
        check_consistent(&c);
        assert_eq!(c.output.len(), 20);
        assert_eq!(c.output[..10], numbered(10)[..]);
        assert_eq!(c.output[10], "line 90");
        assert_eq!(c.output[19], "line 99");
        assert_eq!(c.gaps, vec![(10, 80)]);
        assert_eq!(c.omitted_lines(), 80);
    }

    #[test]
    fn truncate_noop_when_short_or_unlimited() {
        let mut c = ctx(1, "x", &numbered(20));
        let before = c.clone();
        truncate(&mut c, 20);
        assert_eq!(c, before);
        let mut c = ctx(1, "x", &numbered(500));
        let before = c.clone();
        truncate(&mut c, 0);
        assert_eq!(c, before);
    }

    #[test]
    fn truncate_keeps_middle_errors_with_gaps() {
        let mut lines = numbered(100);
        lines[40] = "error: first".into();
        lines[41] = "error: adjacent".into();
        lines[70] = "thread 'main' panicked".into();
        let mut c = ctx(1, "cargo run", &lines);
        truncate(&mut c, 20);
        check_consistent(&c);
        assert_eq!(c.output.len(), 20);
        // 3 error slots taken: head 8, tail 9.
        assert_eq!(c.output[..8], numbered(8)[..]);
        assert_eq!(
            c.output[8..11],
            ["error: first", "error: adjacent", "thread 'main' panicked"]
        );
        assert_eq!(c.output[11], "line 91");
        assert_eq!(c.gaps, vec![(8, 32), (10, 28), (11, 20)]);
        assert_eq!(c.omitted_lines(), 80);
        let text = format(
            &ContextDoc {
                commands: vec![c],
                ..Default::default()
            },
            Format::Text,
        );
        assert!(text.contains("line 7\n... (32 lines omitted) ...\nerror: first\nerror: adjacent\n... (28 lines omitted) ...\nthread 'main' panicked\n... (20 lines omitted) ...\nline 91\n"), "{text}");
    }

    #[test]
    fn truncate_error_slots_are_capped_and_earliest_win() {
        let mut lines = numbered(200);
        for (k, line) in lines.iter_mut().enumerate().take(180).skip(20) {
            *line = format!("error {k}");
        }
        let mut c = ctx(1, "make", &lines);
        truncate(&mut c, 20);
        check_consistent(&c);
        assert_eq!(c.output.len(), 20);
        // at least a quarter each for head and tail
        assert_eq!(c.output[..5], numbered(5)[..]);
        assert_eq!(c.output[5], "error 20");
        assert_eq!(c.output[14], "error 29");
        assert_eq!(c.output[15], "line 195");
        assert_eq!(c.output[19], "line 199");
    }

    #[test]
    fn truncate_errors_near_edges_are_not_double_counted() {
        // The error sits where the tail would reach with no error slots taken.
        let mut lines = numbered(30);
        lines[21] = "error: late".into();
        let mut c = ctx(1, "x", &lines);
        truncate(&mut c, 20);
        check_consistent(&c);
        assert_eq!(c.output.len(), 20);
        assert!(c.output.contains(&"error: late".to_string()));
        assert_eq!(c.output[19], "line 29");
    }

    #[test]
    fn truncate_composes_with_earlier_gaps() {
        let mut c = ctx(1, "seq", &numbered(100));
        truncate(&mut c, 20);
        truncate(&mut c, 4);
        check_consistent(&c);
        assert_eq!(c.output, ["line 0", "line 1", "line 98", "line 99"]);
        assert_eq!(c.gaps, vec![(2, 96)]);
        // tiny caps keep the tail
        truncate(&mut c, 1);
        check_consistent(&c);
        assert_eq!(c.output, ["line 99"]);
        assert_eq!(c.gaps, vec![(0, 99)]);
    }

    proptest! {
        #[test]
        fn truncate_invariants(n in 0usize..120, max in 0usize..30, errs in proptest::collection::vec(0usize..120, 0..10)) {
            let mut lines = numbered(n);
            for e in errs { if e < n { lines[e] = format!("error {e}"); } }
            let mut c = ctx(1, "x", &lines);
            truncate(&mut c, max);
            check_consistent(&c);
            if max == 0 || n <= max {
                prop_assert_eq!(&c.output, &lines);
            } else {
                prop_assert_eq!(c.output.len(), max);
                // kept lines are a subsequence of the original, in order, last line kept
                let mut it = lines.iter();
                for l in &c.output { prop_assert!(it.any(|x| x == l)); }
                prop_assert_eq!(c.output.last(), lines.last());
            }
        }
    }

    // ---- fold ----

    #[test]
    fn folds_back_to_back_repeats() {
        let out = vec!["ok".to_string()];
        let mut a = ctx(1, "make", &out);
        a.started_at = 10;
        let mut b = ctx(2, "make", &out);
        b.started_at = 20;
        let mut c = ctx(3, "make", &out);
        c.started_at = 30;
        c.ended_at = Some(31);
        let d = ctx(4, "ls", &out);
        let e = ctx(5, "make", &out);
        let folded = fold_repeats(vec![a, b, c, d, e]);
        assert_eq!(folded.len(), 3);
        assert_eq!(folded[0].repeat, 3);
        assert_eq!(folded[0].seq, 3);
        assert_eq!(folded[0].started_at, 30);
        assert_eq!(folded[0].ended_at, Some(31));
        assert_eq!(folded[1].repeat, 1);
        assert_eq!(folded[2].repeat, 1);
        assert_eq!(folded[2].seq, 5);
    }

    #[test]
    fn does_not_fold_different_output_status_session_or_running() {
        let out = vec!["ok".to_string()];
        let a = ctx(1, "make", &out);
        let b = ctx(2, "make", &["other".to_string()]);
        let mut c = ctx(3, "make", &["other".to_string()]);
        c.exit_code = Some(2);
        let mut d = ctx(1, "make", &["other".to_string()]);
        d.exit_code = Some(2);
        d.session_id = "t".into();
        let mut e = d.clone();
        e.seq = 2;
        e.running = true;
        e.exit_code = Some(2);
        assert_eq!(fold_repeats(vec![a, b, c, d, e]).len(), 5);
        assert!(fold_repeats(vec![]).is_empty());
    }

    // ---- fit ----

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

    fn arb_doc() -> impl Strategy<Value = (ContextDoc, usize)> {
        let cmd = (
            "[a-z ]{1,12}(\n[a-z ]{1,8})?",
            proptest::collection::vec("[ -~]{0,30}", 0..25),
            proptest::option::of(0i32..140),
            "(/[a-z]{1,3}){0,2}",
            0usize..2,
            any::<bool>(),
        );
        (
            proptest::collection::vec(cmd, 0..12),
            0usize..600,
            any::<bool>(),
            0usize..3,
            0usize..25,
        )
            .prop_map(|(cmds, budget, group, parts, max_lines)| {
                let commands = cmds
                    .into_iter()
                    .enumerate()
                    .map(|(i, (line, out, exit, cwd, sess, running))| {
                        let mut c = ctx(i as u64, &line, &out);
                        c.session_id = format!("s{sess}");
                        c.exit_code = exit;
                        c.cwd = cwd;
                        c.running = running && exit.is_none();
                        truncate(&mut c, max_lines);
                        c
                    })
                    .collect();
                let parts = [Parts::All, Parts::ResultsOnly, Parts::CommandsOnly][parts];
                (
                    ContextDoc {
                        commands,
                        group_sessions: group,
                        parts,
                        report: BudgetReport::default(),
                    },
                    budget,
                )
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn fit_is_a_hard_ceiling((doc, budget) in arb_doc(), fmt in 0usize..3) {
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
            for c in &d.commands { check_consistent(c); }
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
        fn fit_is_a_hard_ceiling_o200k((doc, budget) in arb_doc()) {
            let t = tokenizer("o200k").unwrap();
            let mut d = doc.clone();
            fit(&mut d, budget, t.as_ref(), &text);
            let tokens = t.count(&text(&d));
            prop_assert!(tokens <= budget || d.commands.is_empty());
        }
    }
}
