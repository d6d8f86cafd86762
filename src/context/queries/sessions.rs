//! What `omnish sessions show` prints about each command of a session (times, status, output
//! lines and a one-line summary: the first error line, else the last line), and the time,
//! duration and size formats that `sessions`, `search` and `status` share.
//!
//! Outputs are read through [`read::cached_digest`], so a large output is rendered once and
//! its digest cached; summaries are redacted like everything `context` shows.

use crate::context::stages::select::{AuthorChoice, Filter, Query, Session};
use crate::context::stages::{own, read};
use crate::context::words::{self, PRIVATE_COMMAND};
use crate::context::{show_line, stages::redact};
use serde::Serialize;

/// Chars of a command's one-line summary.
const SUMMARY_WIDTH: usize = 120;

/// One command of a session, as `sessions show` lists it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ShownCommand {
    /// `<session>:<seq>` (a command run by `omnish exec` or an agent is in a session of its
    /// own, attached to the terminal's).
    pub id: String,
    pub seq: u64,
    /// Who ran it: `user`, an agent, an `omnish exec` label.
    pub author: String,
    pub command_line: String,
    pub cwd: String,
    pub started_at: u64,
    /// `None` while running or when the recording was cut off.
    pub ended_at: Option<u64>,
    pub exit_code: Option<i32>,
    /// What the status means ([`words::explanation`]).
    pub exit_explanation: Option<String>,
    pub running: bool,
    pub output_lines: u64,
    /// The first error-looking line of the output, else its last non-blank line.
    pub summary: String,
    /// Where it ran: the record's host, else the session's.
    pub host: String,
    /// As whom: the record's user, else the session's; absent when neither says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The id of the command that started the nested shell it ran in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nested_in: Option<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub depth: u32,
    /// `user@host` when it ran elsewhere than its session (shown beside its line).
    #[serde(skip)]
    pub elsewhere: Option<String>,
    /// Recording stopped while it ran.
    #[serde(skip)]
    pub recording_stopped: bool,
    /// The command that ended the shell.
    #[serde(skip)]
    pub ended_shell: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl ShownCommand {
    /// How it ended, for [`words::status`].
    pub(crate) fn ending(&self) -> words::Ending {
        words::Ending {
            running: self.running,
            recording_stopped: self.recording_stopped,
            exit_code: self.exit_code,
            ended_shell: self.ended_shell,
        }
    }
}

/// Every command of `sessions` (a session and those attached to it, see
/// [`crate::store::attached`]) by `author` (`None`: all), oldest first.
pub(crate) fn commands(
    sessions: &[Session],
    author: Option<&AuthorChoice>,
) -> anyhow::Result<Vec<ShownCommand>> {
    let filters: Vec<Box<dyn Filter>> = author
        .map(|a| Box::new(a.clone()) as Box<dyn Filter>)
        .into_iter()
        .collect();
    let query = Query {
        filters,
        line_test: None,
        output_filter: None,
        limit: usize::MAX,
    };
    let mut picked = Vec::new();
    for session in sessions {
        picked.extend(query.select(session)?.commands);
    }
    if sessions.len() > 1 {
        picked.sort_by_key(|c| (c.record.started_at, c.record.seq));
    }
    let mut out = Vec::new();
    let mut own = own::Counts::default();
    for c in picked {
        let r = &c.record;
        let ended = !c.running && !c.cut_off;
        let (lines, summary) = if r.private {
            (0, String::new())
        } else {
            let d = read::cached_digest(&c);
            // omnish's own output (an `omnish context` run to preview) is not summarized.
            let summary = match own.folded(&c, d.lines).or_else(|| d.note()) {
                Some(note) => note,
                None => {
                    let pick =
                        d.error_indices()
                            .first()
                            .and_then(|&i| d.line(i))
                            .or_else(|| {
                                d.tail.iter().rev().chain(d.head.iter().rev()).find(|l| {
                                    !(l.head.trim().is_empty() && l.tail.trim().is_empty())
                                })
                            });
                    pick.map(|l| {
                        show_line(
                            l.head.trim_start(),
                            l.omitted,
                            &l.tail,
                            l.key_block,
                            SUMMARY_WIDTH,
                            Some(&crate::context::stages::redact::Redactor::new()),
                        )
                    })
                    .unwrap_or_default()
                }
            };
            (d.lines, summary)
        };
        out.push(ShownCommand {
            id: format!("{}:{}", r.session_id, r.seq),
            seq: r.seq,
            author: r.author().to_string(),
            command_line: if r.private {
                PRIVATE_COMMAND.to_string()
            } else {
                redact::redact(&r.command_line).into_owned()
            },
            cwd: redact::redact(&r.cwd).into_owned(),
            started_at: r.started_at,
            ended_at: ended.then_some(r.ended_at),
            exit_code: if ended { r.exit_code } else { None },
            exit_explanation: r
                .exit_code
                .filter(|_| ended)
                .and_then(|code| words::explanation(code, c.ended_shell)),
            running: c.running,
            output_lines: lines,
            summary,
            host: c.host.clone(),
            user: c.user.clone(),
            nested_in: r.nested_in.clone(),
            depth: r.depth,
            elsewhere: c.elsewhere_label(),
            recording_stopped: r.recording_stopped,
            ended_shell: c.ended_shell,
        });
    }
    Ok(out)
}

/// `2026-11-23 16:31:15` in the local time zone (`-` for 0, unknown).
pub(crate) fn local_time(ms: u64) -> String {
    if ms == 0 {
        return "-".to_string();
    }
    let secs = (ms / 1000) as libc::time_t;
    // SAFETY: localtime_r only writes the tm it is given.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { libc::localtime_r(&secs, &mut tm) }.is_null() {
        return humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms),
        )
        .to_string();
    }
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// `850ms`, `12.3s`, `4m05s`, `2h07m`, `3d04h`.
pub(crate) fn human_duration(ms: u64) -> String {
    let s = ms / 1000;
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{:.1}s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{}m{:02}s", s / 60, s % 60),
        3_600_000..86_400_000 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

/// `512 B`, `12.3 KiB`, `1.5 GiB`.
pub(crate) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_sizes_read_well() {
        assert_eq!(human_duration(850), "850ms");
        assert_eq!(human_duration(12_345), "12.3s");
        assert_eq!(human_duration(245_000), "4m05s");
        assert_eq!(human_duration(7_620_000), "2h07m");
        assert_eq!(human_duration(273_600_000), "3d04h");
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(2 << 30), "2.0 GiB");
        assert_eq!(local_time(0), "-");
        assert_eq!(local_time(1_700_000_000_000).len(), 19);
    }
}
