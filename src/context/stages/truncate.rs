//! Truncation and folding: long outputs keep their head, tail and error lines; repeated runs
//! of the same command fold into one entry.
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

use std::sync::OnceLock;

use regex::Regex;

use crate::context::model::CommandContext;

/// Whether a line looks like it reports an error, so truncation should keep it. Matches
/// (case-insensitive) `error`, `failed`, `failure`, `panicked`, `traceback`, `exception`,
/// `fatal`, `assert`, `segmentation fault`, `core dumped`, `undefined reference`, `cannot find`,
/// `not found`, `no such file`, `permission denied`, and pytest's `E   ` detail lines.
pub(crate) fn is_error_line(line: &str) -> bool {
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
pub(crate) fn truncate(ctx: &mut CommandContext, max_lines: usize) {
    let n = ctx.output.len();
    if max_lines == 0 || n <= max_lines {
        return;
    }
    let keep = kept_indices(&ctx.output, max_lines);
    apply_keep(ctx, &keep);
}

/// Which of `lines` to keep, ascending, at most `max` (which is > 0 and < `lines.len()`).
fn kept_indices(lines: &[String], max: usize) -> Vec<usize> {
    let errors: Vec<u64> = (0..lines.len())
        .filter(|&i| is_error_line(&lines[i]))
        .map(|i| i as u64)
        .collect();
    kept_lines(lines.len() as u64, max, &errors)
        .into_iter()
        .map(|i| i as usize)
        .collect()
}

/// Which of `n` lines to keep, ascending, at most `max` (0 = all): head and tail, plus error
/// lines from the middle (see the module docs). `errors` holds the numbers of error-looking
/// lines, ascending; it may stop early as long as it holds the earliest `max` of those at or
/// after the head, which is all that is ever kept.
pub(crate) fn kept_lines(n: u64, max: usize, errors: &[u64]) -> Vec<u64> {
    if max == 0 || n <= max as u64 {
        return (0..n).collect();
    }
    let min_tail = max.div_ceil(4);
    let min_head = max / 4;
    let slots = max - min_head - min_tail;
    let split = |errors: usize| {
        let rest = max - errors;
        let head = rest / 2;
        (head as u64, (rest - head) as u64)
    };
    // Error lines outside head and tail, given how many slots errors take.
    let middle_errors = |head: u64, tail: u64| -> Vec<u64> {
        let from = errors.partition_point(|&i| i < head);
        let to = errors.partition_point(|&i| i < n - tail);
        errors[from..to.max(from)].to_vec()
    };
    // Fewer error slots make head and tail longer and the middle shorter, so this settles.
    let mut e = slots;
    let (mut head, mut tail) = split(e);
    let mut middle = middle_errors(head, tail);
    loop {
        let want = middle.len().min(slots);
        if want >= e {
            break;
        }
        e = want;
        (head, tail) = split(e);
        middle = middle_errors(head, tail);
    }
    // The loop ends with at least `e` middle errors; the earliest `e` are kept.
    middle.truncate(e);
    let mut keep: Vec<u64> = (0..head).collect();
    keep.extend(middle);
    keep.extend(n - tail..n);
    keep
}

/// The gaps left by keeping only `keep` (ascending) of `n` lines: `(index into the kept lines,
/// lines omitted there)`.
pub(crate) fn gaps_of(keep: &[u64], n: u64) -> Vec<(usize, usize)> {
    let mut gaps = Vec::new();
    let mut next = 0u64;
    for (k, &i) in keep.iter().enumerate() {
        if i > next {
            gaps.push((k, (i - next) as usize));
        }
        next = i + 1;
    }
    if n > next {
        gaps.push((keep.len(), (n - next) as usize));
    }
    gaps
}

/// Marker put in place of the middle of a shortened line.
pub(crate) fn omitted_chars_marker(n: u64) -> String {
    crate::store::omitted_marker(n)
}

/// Shortens a line of `head` + `omitted` chars + `tail` to at most `width` chars (0 = no limit)
/// plus a marker saying how many chars were left out: the first `ceil(width / 2)` and the last
/// `floor(width / 2)` chars are kept.
pub(crate) fn shorten(head: &str, omitted: u64, tail: &str, width: usize) -> String {
    let hn = head.chars().count();
    let tn = tail.chars().count();
    let total = hn as u64 + omitted + tn as u64;
    if omitted == 0 && (width == 0 || total <= width as u64) {
        let mut s = head.to_string();
        s.push_str(tail);
        return s;
    }
    let (a, b) = if width == 0 {
        (hn, tn)
    } else {
        let a = width.div_ceil(2);
        let b = width - a;
        // A line kept as head and tail has its middle missing: take from each side what it has.
        if omitted == 0 {
            (a, b)
        } else {
            (a.min(hn), b.min(tn))
        }
    };
    // When the line is whole (`omitted == 0`), head and tail are cut from the one string.
    let whole: String;
    let (h_src, t_src, t_len) = if omitted == 0 {
        whole = format!("{head}{tail}");
        (whole.as_str(), whole.as_str(), hn + tn)
    } else {
        (head, tail, tn)
    };
    let h_end = h_src.char_indices().nth(a).map_or(h_src.len(), |(i, _)| i);
    let t_start = t_src
        .char_indices()
        .nth(t_len - b)
        .map_or(t_src.len(), |(i, _)| i);
    // Never through a `[REDACTED:…]` marker: what is kept of one side is whole markers.
    let h_end = marker_around(h_src, h_end).map_or(h_end, |m| m.start);
    let t_start = marker_around(t_src, t_start).map_or(t_start, |m| m.end);
    let kept = (h_src[..h_end].chars().count() + t_src[t_start..].chars().count()) as u64;
    format!(
        "{}{}{}",
        &h_src[..h_end],
        omitted_chars_marker(total - kept),
        &t_src[t_start..]
    )
}

/// Where a `[REDACTED:…]` marker of `text` spans byte `at` (strictly inside it), its range.
pub(crate) fn marker_around(text: &str, at: usize) -> Option<std::ops::Range<usize>> {
    const OPEN: &str = "[REDACTED:";
    // A marker is short: look back no further than the longest one could reach.
    let from = at.saturating_sub(64);
    let from = (from..=at)
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(at);
    // Up to where a marker opened just before `at` could still be spelling its opening.
    let to = (at + OPEN.len()).min(text.len());
    let to = (to..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    let start = from + text[from..to].rfind(OPEN)?;
    let end = start + text[start..].find(']')? + 1;
    let name = &text[start + OPEN.len()..end - 1];
    let is_marker = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    (is_marker && end > at && start < at).then_some(start..end)
}

/// The first `n` chars of `text`, ending before a marker the cut would go through.
pub(crate) fn first_chars(text: &str, n: usize) -> &str {
    let at = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
    let at = marker_around(text, at).map_or(at, |m| m.start);
    &text[..at]
}

/// The last `n` chars of `text`, starting after a marker the cut would go through.
pub(crate) fn last_chars(text: &str, n: usize) -> &str {
    let total = text.chars().count();
    let at = text
        .char_indices()
        .nth(total.saturating_sub(n))
        .map_or(text.len(), |(i, _)| i);
    let at = marker_around(text, at).map_or(at, |m| m.end);
    &text[at..]
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

/// [`fold_repeats_with`] over plain commands.
#[cfg(test)]
pub(crate) fn fold_repeats(cmds: Vec<CommandContext>) -> Vec<CommandContext> {
    let with: Vec<(CommandContext, ())> = cmds.into_iter().map(|c| (c, ())).collect();
    fold_repeats_with(with)
        .into_iter()
        .map(|(c, ())| c)
        .collect()
}

/// Folds runs of the same command (same session, command line, output and exit code) into one
/// entry with `repeat` set to the run's total; the entry keeps the latest run's seq and
/// timestamps, and what the caller gave with it. Running commands are never folded.
pub(crate) fn fold_repeats_with<T>(cmds: Vec<(CommandContext, T)>) -> Vec<(CommandContext, T)> {
    let mut out: Vec<(CommandContext, T)> = Vec::with_capacity(cmds.len());
    for (c, extra) in cmds {
        if let Some((prev, prev_extra)) = out.last_mut()
            && same_run(prev, &c)
        {
            let repeat = prev.repeat + c.repeat;
            let first = (prev.first_seq(), prev.first_started_at());
            *prev = c;
            prev.repeat = repeat;
            prev.first_run = Some(first);
            *prev_extra = extra;
            continue;
        }
        out.push((c, extra));
    }
    out
}

/// Whether `b` ran `a` again with the same result. Private commands never do: their lines were
/// never recorded, so two of them (` export A=1`, ` rm x`) cannot be told to be the same.
fn same_run(a: &CommandContext, b: &CommandContext) -> bool {
    !a.running
        && !b.running
        && !a.private
        && !b.private
        && !a.summarized
        && !b.summarized
        && a.session_id == b.session_id
        && a.command_line == b.command_line
        && a.host == b.host
        && a.user == b.user
        && a.exit_code == b.exit_code
        && a.output == b.output
        && a.output_lines == b.output_lines
        && a.gaps == b.gaps
        && a.output_hash == b.output_hash
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::model::ContextDoc;
    use crate::context::model::testing::{check_consistent, ctx, numbered};
    use crate::context::stages::format::{Format, format};
    use proptest::prelude::*;

    // ---- model profiles ----

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

    #[test]
    fn private_commands_are_never_folded_together() {
        // Three different private commands look alike: no line, no output, the same status.
        let private = |seq| {
            let mut c = ctx(seq, crate::context::words::PRIVATE_COMMAND, &[]);
            c.private = true;
            c
        };
        let folded = fold_repeats(vec![private(1), private(2), private(3)]);
        assert_eq!(folded.len(), 3);
        assert!(folded.iter().all(|c| c.repeat == 1));
        // Public commands around them still fold.
        let folded = fold_repeats(vec![ctx(4, "ls", &[]), ctx(5, "ls", &[]), private(6)]);
        assert_eq!(folded.len(), 2);
        assert_eq!(folded[0].repeat, 2);
    }

    // ---- fit ----

    #[test]
    fn gaps_say_where_lines_were_left_out() {
        assert_eq!(gaps_of(&[0, 1, 5, 9], 10), [(2, 3), (3, 3)]);
        assert_eq!(gaps_of(&[3], 5), [(0, 3), (1, 1)]);
        assert_eq!(gaps_of(&[0, 1, 2], 3), []);
        assert_eq!(gaps_of(&[], 4), [(0, 4)]);
    }

    #[test]
    fn shortening_never_cuts_through_a_marker() {
        let line = format!(
            "{} [REDACTED:github-token] {}",
            "a".repeat(40),
            "b".repeat(40)
        );
        // Both cuts (45 chars from each end) fall inside the marker: it goes whole.
        assert_eq!(
            shorten(&line, 0, "", 90),
            format!("{} …[23 chars omitted]… {}", "a".repeat(40), "b".repeat(40))
        );
        // The tail's cut inside a marker: the tail starts after it; the count adds up.
        let line = format!("{}[REDACTED:token]{}", "c".repeat(60), "d".repeat(5));
        assert_eq!(
            shorten(&line, 0, "", 40),
            format!("{}…[56 chars omitted]…ddddd", "c".repeat(20))
        );
        // Head and tail given apart (a line past the cap), the same.
        assert_eq!(
            shorten("xx [REDACTED:jwt] yy", 100, "zz", 8),
            "xx …[117 chars omitted]…zz"
        );
    }

    #[test]
    fn shortening_keeps_head_and_tail_and_counts_the_rest() {
        assert_eq!(shorten("abcdefghij", 0, "", 4), "ab…[6 chars omitted]…ij");
        assert_eq!(shorten("abcdefghij", 0, "", 5), "abc…[5 chars omitted]…ij");
        assert_eq!(shorten("abcdefghij", 0, "", 10), "abcdefghij");
        assert_eq!(shorten("abcdefghij", 0, "", 0), "abcdefghij");
        // A line already kept as head and tail: the middle stays counted.
        assert_eq!(shorten("abcd", 100, "wxyz", 4), "ab…[104 chars omitted]…yz");
        assert_eq!(
            shorten("abcd", 100, "wxyz", 0),
            "abcd…[100 chars omitted]…wxyz"
        );
        // Chars, not bytes.
        assert_eq!(shorten("ééééé", 0, "", 2), "é…[3 chars omitted]…é");
    }

    proptest! {
        #[test]
        fn kept_lines_agree_with_truncating_the_lines(
            n in 0usize..200,
            max in 0usize..40,
            errs in proptest::collection::vec(0usize..200, 0..20),
        ) {
            let lines: Vec<String> = (0..n)
                .map(|i| if errs.contains(&i) { format!("error {i}") } else { format!("line {i}") })
                .collect();
            let errors: Vec<u64> = (0..n as u64).filter(|&i| errs.contains(&(i as usize))).collect();
            let keep = kept_lines(n as u64, max, &errors);
            let mut c = CommandContext::new("s", 1, "x");
            c.output = lines.clone();
            c.output_lines = n;
            truncate(&mut c, max);
            let kept: Vec<String> = keep.iter().map(|&i| lines[i as usize].clone()).collect();
            prop_assert_eq!(&kept, &c.output);
            prop_assert_eq!(gaps_of(&keep, n as u64), c.gaps);
            // An error list cut after the earliest `max` past the head (which holds at most
            // `max / 2` lines) changes nothing: that is all a digest keeps.
            if errors.len() > max {
                let more: Vec<u64> = errors.iter().copied().take(max + (max / 2) + 1).collect();
                prop_assert_eq!(kept_lines(n as u64, max, &more), keep.clone());
            }
        }
    }
}
