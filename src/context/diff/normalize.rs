//! `--normalize`: volatile tokens masked before two outputs are compared, so that a diff
//! shows what changed, not when or where it ran: times and dates, durations, process ids,
//! hex addresses and long hex ids, UUIDs, temporary paths.

use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

/// Each pattern and what stands for what it matches, applied in order.
static MASKS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    let r = |p: &str| Regex::new(p).expect("a valid pattern");
    vec![
        // Temporary paths first: their names hold digits and hex.
        (
            r(r#"(/private)?/(tmp|var/tmp|var/folders|dev/shm)/[^\s:'"`,;)\]]*"#),
            "<TMP>",
        ),
        (
            r(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
            "<UUID>",
        ),
        // ISO dates with their time and zone, then times of day.
        (
            r(r"\b\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?\b"),
            "<TIME>",
        ),
        (r(r"\b\d{1,2}:\d{2}:\d{2}([.,]\d+)?\b"), "<TIME>"),
        (r(r"\b0x[0-9a-fA-F]+\b"), "<ADDR>"),
        (r(r"\b[0-9a-f]{12,}\b"), "<HEX>"),
        // pid 1234, pid=1234, PID: 1234, [1234] (syslog), process 1234.
        (r(r"(?i)\b(pid|process)([ =:#]+)\d+\b"), "$1$2<PID>"),
        (r(r"\[\d{2,}\]"), "[<PID>]"),
        // 1.23s, 45 ms, 2m30s, 0.5 seconds, 3 min.
        (
            r(
                r"\b\d+(\.\d+)?\s?(ns|µs|us|ms|s|sec|secs|seconds?|m|mins?|minutes?|h|hours?)\b(\d+(\.\d+)?(ms|s))?",
            ),
            "<DURATION>",
        ),
    ]
});

/// `line` with its volatile tokens masked.
pub(crate) fn normalize(line: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(line);
    for (re, with) in MASKS.iter() {
        if let Cow::Owned(s) = re.replace_all(&out, *with) {
            out = Cow::Owned(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn volatile_tokens_are_masked_and_the_rest_kept() {
        let cases = [
            ("Finished in 1.32s", "Finished in <DURATION>"),
            ("took 45 ms", "took <DURATION>"),
            ("2026-11-26T14:02:03.123Z started", "<TIME> started"),
            ("at 14:02:03 ok", "at <TIME> ok"),
            ("worker pid=4242 up", "worker pid=<PID> up"),
            ("sshd[12345]: accepted", "sshd[<PID>]: accepted"),
            ("ptr 0x7ffd5e8a1b20 freed", "ptr <ADDR> freed"),
            ("wrote /tmp/tmp.Xy12ab/out.txt", "wrote <TMP>"),
            ("commit 1a2b3c4d5e6f7a8b", "commit <HEX>"),
            ("id 123e4567-e89b-12d3-a456-426614174000", "id <UUID>"),
            ("test result: ok. 12 passed", "test result: ok. 12 passed"),
            (
                "error[E0308]: mismatched types",
                "error[E0308]: mismatched types",
            ),
        ];
        for (line, want) in cases {
            assert_eq!(normalize(line), want, "{line}");
        }
    }
}
