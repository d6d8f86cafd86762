//! One self-contained HTML page: no script, no external asset (a Content-Security-Policy that
//! allows inline styles only says so to the browser too), so it works offline and recorded
//! output can never inject markup or script: every recorded char is escaped.
//!
//! Colours come from the recorded bytes: a small line renderer ([`Screen`]) follows what a
//! terminal does to one line (print, carriage return, backspace, tab, erase in line, cursor
//! left and right, SGR: the 16 colours, 256 colours, truecolor, bold, dim, italic,
//! underline, inverse, strikethrough), drops the other sequences, and shows what a full-screen
//! program drew (the alternate screen) as one line, as `context` does. Each finished line is
//! redacted on its text (the detectors and the session's values, and private key blocks as a
//! whole), and each secret's cells, whatever their colours, are replaced by the
//! `[REDACTED:kind]` marker: redaction holds on coloured text.
//!
//! Bounded: a line keeps its first [`LINE_CAP`] chars and says how many more it had; memory
//! does not depend on the output's size.

use std::io::{self, Write};

use vte::{Params, Parser, Perform};

use super::{Item, has_output, status, took, utc};
use crate::context::stages::read::{self, ReadEnd, Source};
use crate::context::stages::redact::Redactor;
use crate::error::Result;
use crate::term::visible;

/// Chars kept of one output line.
pub(crate) const LINE_CAP: usize = 16 * 1024;

/// The page's style: a dark terminal, the xterm palette.
const CSS: &str = "body{background:#1e1e1e;color:#d4d4d4;font-family:sans-serif;margin:2em}\
h1{font-size:1.3em}section{margin:1.5em 0}h2{font-size:1em;margin:0}\
h2 code{font-family:monospace;white-space:pre-wrap;color:#fff}\
.meta{color:#9a9a9a;font-size:.85em;margin:.2em 0}\
pre{background:#000;color:#d4d4d4;padding:.6em;overflow-x:auto;white-space:pre;\
font-family:monospace;line-height:1.25;margin:.3em 0}\
.red{background:#5a1d1d;color:#ffb0b0}.note{color:#9a9a9a;font-style:italic}\
.failed h2 code{color:#ff8080}";

pub(super) fn write(items: &[Item], out: &mut dyn Write) -> Result<()> {
    let title = match items.first() {
        Some(i) => format!("omnish: session {}", i.group),
        None => "omnish export".to_string(),
    };
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    )?;
    let from = items.iter().map(|i| i.ctx.started_at).min().unwrap_or(0);
    writeln!(
        out,
        "<p class=\"meta\">{} command{} from {}</p>",
        items.len(),
        if items.len() == 1 { "" } else { "s" },
        escape(&utc(from))
    )?;
    // Each command's section is rendered on a worker thread, in order (see `ordered`).
    super::ordered::write(
        items.len(),
        super::ordered::workers(),
        |i, out| section(&items[i], out),
        &mut |_, _| Ok(()),
        out,
    )?;
    writeln!(out, "</body>\n</html>")?;
    Ok(())
}

/// One command's section: its line, where and how it ran, its output.
fn section(item: &Item, out: &mut dyn Write) -> Result<()> {
    let ctx = &item.ctx;
    let failed = ctx.exit_code.is_some_and(|c| c != 0) && !ctx.ended_shell;
    writeln!(
        out,
        "<section{}>\n<h2><code>$ {}</code></h2>",
        if failed { " class=\"failed\"" } else { "" },
        escape(&visible::text(&ctx.command_line))
    )?;
    let mut facts = Vec::new();
    if !ctx.cwd.is_empty() {
        facts.push(visible::line(&ctx.cwd).into_owned());
    }
    if let Some(place) = &ctx.elsewhere {
        facts.push(format!("on {}", visible::line(place)));
    }
    if ctx.author != crate::store::USER {
        facts.push(format!("by {}", visible::line(&ctx.author)));
    }
    facts.push(status(ctx));
    facts.push(utc(ctx.started_at));
    if let Some(t) = took(ctx) {
        facts.push(t);
    }
    writeln!(out, "<p class=\"meta\">{}</p>", escape(&facts.join(" · ")))?;
    if has_output(item) {
        write_output(item, out)?;
    }
    writeln!(out, "</section>")?;
    Ok(())
}

/// The command's output as one `<pre>`, line by line as it is rendered.
fn write_output(item: &Item, out: &mut dyn Write) -> Result<()> {
    let src = Source::of(&item.candidate);
    let mut sink = HtmlLines {
        out,
        redactor: item.redactor.as_deref(),
        in_key: false,
        lines: 0,
        err: None,
        scratch: String::new(),
        starts: Vec::new(),
        styles: Styles::default(),
    };
    sink.out.write_all(b"<pre>")?;
    let mut screen = Screen::default();
    let mut parser = Parser::new();
    let mut carry: Vec<u8> = Vec::new();
    let end = read::output_chunks(&src, &mut |chunk| {
        feed(&mut parser, &mut screen, &mut carry, chunk, &mut sink);
        sink.err.is_none()
    });
    if !carry.is_empty() {
        let rest = std::mem::take(&mut carry);
        let mut active = Active {
            screen: &mut screen,
            sink: &mut sink,
        };
        crate::term::render::advance(&mut parser, &mut active, &rest);
    }
    screen.finish(&mut sink, false);
    if let Some(e) = sink.err.take() {
        return Err(e.into());
    }
    if let ReadEnd::Unreadable(why) = end {
        sink.note(&format!("[output unreadable: {why}]"))?;
    } else if sink.lines == 0 {
        sink.note("[no output]")?;
    }
    sink.out.write_all(b"</pre>\n")?;
    Ok(())
}

/// Feeds `chunk` to the parser, holding back a code point split at its end (vte skips bytes
/// after one completed across two calls; see [`crate::term::render::incomplete_utf8_tail`]).
fn feed(
    parser: &mut Parser,
    screen: &mut Screen,
    carry: &mut Vec<u8>,
    chunk: &[u8],
    sink: &mut HtmlLines<'_>,
) {
    let mut active = Active { screen, sink };
    if !carry.is_empty() {
        carry.extend_from_slice(chunk);
        let joined = std::mem::take(carry);
        let keep = crate::term::render::incomplete_utf8_tail(&joined);
        crate::term::render::advance(parser, &mut active, &joined[..joined.len() - keep]);
        carry.extend_from_slice(&joined[joined.len() - keep..]);
        return;
    }
    let keep = crate::term::render::incomplete_utf8_tail(chunk);
    crate::term::render::advance(parser, &mut active, &chunk[..chunk.len() - keep]);
    carry.extend_from_slice(&chunk[chunk.len() - keep..]);
}

/// A colour as SGR sets it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
enum Color {
    #[default]
    Default,
    Index(u8),
    Rgb(u8, u8, u8),
}

/// What SGR sets for a cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Pen {
    fg: Color,
    bg: Color,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    inverse: bool,
    strike: bool,
}

impl Pen {
    /// The inline style for this pen (`None`: the default one).
    fn css(&self) -> Option<String> {
        if *self == Pen::default() {
            return None;
        }
        let (mut fg, mut bg) = (self.fg, self.bg);
        if self.inverse {
            std::mem::swap(&mut fg, &mut bg);
            if fg == Color::Default {
                fg = Color::Rgb(0, 0, 0);
            }
            if bg == Color::Default {
                bg = Color::Rgb(0xd4, 0xd4, 0xd4);
            }
        }
        if self.bold {
            // Bold brightens the 8 basic colours, as most terminals do.
            if let Color::Index(i @ 0..=7) = fg {
                fg = Color::Index(i + 8);
            }
        }
        let mut s = String::new();
        if let Some(c) = hex(fg) {
            s.push_str(&format!("color:{c};"));
        }
        if let Some(c) = hex(bg) {
            s.push_str(&format!("background:{c};"));
        }
        if self.bold {
            s.push_str("font-weight:bold;");
        }
        if self.dim {
            s.push_str("opacity:.6;");
        }
        if self.italic {
            s.push_str("font-style:italic;");
        }
        match (self.underline, self.strike) {
            (true, true) => s.push_str("text-decoration:underline line-through;"),
            (true, false) => s.push_str("text-decoration:underline;"),
            (false, true) => s.push_str("text-decoration:line-through;"),
            (false, false) => {}
        }
        (!s.is_empty()).then_some(s)
    }

    /// Applies one SGR sequence.
    fn sgr(&mut self, params: &Params) {
        let mut it = params.iter().peekable();
        if params.is_empty() {
            *self = Pen::default();
            return;
        }
        while let Some(p) = it.next() {
            let code = p.first().copied().unwrap_or(0);
            match code {
                0 => *self = Pen::default(),
                1 => self.bold = true,
                2 => self.dim = true,
                3 => self.italic = true,
                4 => self.underline = p.get(1).is_none_or(|&s| s != 0),
                7 => self.inverse = true,
                9 => self.strike = true,
                21 => self.underline = true,
                22 => {
                    self.bold = false;
                    self.dim = false;
                }
                23 => self.italic = false,
                24 => self.underline = false,
                27 => self.inverse = false,
                29 => self.strike = false,
                30..=37 => self.fg = Color::Index((code - 30) as u8),
                39 => self.fg = Color::Default,
                40..=47 => self.bg = Color::Index((code - 40) as u8),
                49 => self.bg = Color::Default,
                90..=97 => self.fg = Color::Index((code - 90 + 8) as u8),
                100..=107 => self.bg = Color::Index((code - 100 + 8) as u8),
                38 | 48 => {
                    // `38;5;N`, `38;2;R;G;B`, or the same with colons (`38:2::R:G:B`).
                    let color = if p.len() > 1 {
                        extended(&p[1..])
                    } else {
                        let mut rest: Vec<u16> = Vec::new();
                        if let Some(kind) = it.next() {
                            rest.push(kind.first().copied().unwrap_or(0));
                            let n = if rest[0] == 5 { 1 } else { 3 };
                            for _ in 0..n {
                                match it.next() {
                                    Some(v) => rest.push(v.first().copied().unwrap_or(0)),
                                    None => break,
                                }
                            }
                        }
                        extended(&rest)
                    };
                    if let Some(c) = color {
                        if code == 38 {
                            self.fg = c;
                        } else {
                            self.bg = c;
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// The colour of `5;N` or `2;R;G;B` (`2;ID;R;G;B`, with a colour space id, as ITU T.416 has it).
fn extended(p: &[u16]) -> Option<Color> {
    let byte = |v: u16| u8::try_from(v).ok();
    match p {
        [5, n, ..] => Some(Color::Index(byte(*n)?)),
        [2, _, r, g, b] => Some(Color::Rgb(byte(*r)?, byte(*g)?, byte(*b)?)),
        [2, r, g, b, ..] => Some(Color::Rgb(byte(*r)?, byte(*g)?, byte(*b)?)),
        _ => None,
    }
}

/// `#rrggbb` for a colour (`None` for the default).
fn hex(c: Color) -> Option<String> {
    const BASIC: [(u8, u8, u8); 16] = [
        (0x00, 0x00, 0x00),
        (0xcd, 0x31, 0x31),
        (0x0d, 0xbc, 0x79),
        (0xe5, 0xe5, 0x10),
        (0x24, 0x72, 0xc8),
        (0xbc, 0x3f, 0xbc),
        (0x11, 0xa8, 0xcd),
        (0xe5, 0xe5, 0xe5),
        (0x66, 0x66, 0x66),
        (0xf1, 0x4c, 0x4c),
        (0x23, 0xd1, 0x8b),
        (0xf5, 0xf5, 0x43),
        (0x3b, 0x8e, 0xea),
        (0xd6, 0x70, 0xd6),
        (0x29, 0xb8, 0xdb),
        (0xff, 0xff, 0xff),
    ];
    let (r, g, b) = match c {
        Color::Default => return None,
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Index(i @ 0..=15) => BASIC[i as usize],
        Color::Index(i @ 16..=231) => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            (level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        Color::Index(i) => {
            let v = 8 + (i - 232) * 10;
            (v, v, v)
        }
    };
    Some(format!("#{r:02x}{g:02x}{b:02x}"))
}

/// One line of a terminal, as far as a line goes: cells with their pens, the cursor's column,
/// the pen, and whether a full-screen program has the screen.
#[derive(Default)]
struct Screen {
    cells: Vec<(char, Pen)>,
    /// Chars printed past [`LINE_CAP`] on this line.
    omitted: u64,
    col: usize,
    pen: Pen,
    /// In the alternate screen: what is drawn there is not kept.
    alternate: bool,
    /// Something was printed in the alternate screen since it was entered.
    drew: bool,
}

impl Screen {
    fn print(&mut self, c: char) {
        if self.alternate {
            self.drew = true;
            return;
        }
        if self.col >= LINE_CAP {
            self.omitted += 1;
            self.col += 1;
            return;
        }
        let cell = (c, self.pen);
        if self.col < self.cells.len() {
            self.cells[self.col] = cell;
        } else {
            self.cells.resize(self.col, (' ', Pen::default()));
            self.cells.push(cell);
        }
        self.col += 1;
    }

    /// Ends the line (a newline, or the end of the output: `last`), handing it to `sink`.
    fn finish(&mut self, sink: &mut HtmlLines<'_>, newline: bool) {
        if self.alternate {
            return;
        }
        if !newline && self.cells.is_empty() {
            return;
        }
        // Trailing blanks with no background are not shown.
        while self
            .cells
            .last()
            .is_some_and(|&(c, p)| c == ' ' && p.bg == Color::Default && !p.inverse)
        {
            self.cells.pop();
        }
        sink.line(&self.cells, self.omitted);
        self.cells.clear();
        self.omitted = 0;
        self.col = 0;
    }

    fn alternate(&mut self, on: bool, sink: &mut HtmlLines<'_>) {
        if on && !self.alternate {
            self.finish(sink, false);
            self.alternate = true;
            self.drew = false;
        } else if !on && self.alternate {
            self.alternate = false;
            if self.drew {
                sink.note_line("[full-screen program]");
            }
        }
    }
}

struct Active<'a, 'b> {
    screen: &'a mut Screen,
    sink: &'a mut HtmlLines<'b>,
}

impl Perform for Active<'_, '_> {
    fn print(&mut self, c: char) {
        self.screen.print(c);
    }

    fn execute(&mut self, byte: u8) {
        let s = &mut *self.screen;
        match byte {
            b'\n' | 0x0b | 0x0c => s.finish(self.sink, true),
            b'\r' => s.col = 0,
            0x08 => s.col = s.col.saturating_sub(1),
            b'\t' => {
                let to = (s.col / 8 + 1) * 8;
                while s.col < to && s.col < LINE_CAP {
                    s.print(' ');
                }
            }
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: char) {
        if ignore {
            return;
        }
        let s = &mut *self.screen;
        let first = params
            .iter()
            .next()
            .and_then(|p| p.first().copied())
            .unwrap_or(0);
        let n = first.max(1) as usize;
        match (intermediates, action) {
            ([], 'm') => s.pen.sgr(params),
            ([], 'K') if !s.alternate => match first {
                0 => s.cells.truncate(s.col),
                1 => {
                    for cell in s.cells.iter_mut().take(s.col + 1) {
                        *cell = (' ', Pen::default());
                    }
                }
                _ => s.cells.clear(),
            },
            ([], 'C') => s.col = (s.col + n).min(LINE_CAP),
            ([], 'D') => s.col = s.col.saturating_sub(n),
            ([], 'G') => s.col = (n - 1).min(LINE_CAP),
            ([b'?'], 'h' | 'l') => {
                let alt = params
                    .iter()
                    .any(|p| matches!(p.first(), Some(47 | 1047 | 1049)));
                if alt {
                    s.alternate(action == 'h', self.sink);
                }
            }
            _ => {}
        }
    }
}

/// Writes finished lines as HTML, redacted.
struct HtmlLines<'a> {
    out: &'a mut dyn Write,
    redactor: Option<&'a Redactor>,
    /// Inside a private key block.
    in_key: bool,
    lines: u64,
    err: Option<io::Error>,
    scratch: String,
    /// Where each cell of the line starts in `scratch`.
    starts: Vec<usize>,
    styles: Styles,
}

/// The inline style of each pen seen lately (a page uses few; building one is several
/// allocations, and runs of colour are many).
#[derive(Default)]
struct Styles(
    std::collections::HashMap<Pen, Option<String>, std::hash::BuildHasherDefault<PenHasher>>,
);

/// A hasher for the few bytes of a pen, cheaper than the default one (looked up once per run
/// of colour). Keys come from recorded output, but the map is bounded ([`Styles::MAX`]): a
/// crafted run of colliding pens costs at most that many comparisons per lookup.
#[derive(Default)]
struct PenHasher(u64);

impl std::hash::Hasher for PenHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
}

impl Styles {
    /// Pens remembered at most.
    const MAX: usize = 1024;

    fn of(&mut self, pen: Pen) -> Option<&str> {
        if self.0.len() >= Self::MAX && !self.0.contains_key(&pen) {
            self.0.clear();
        }
        self.0.entry(pen).or_insert_with(|| pen.css()).as_deref()
    }
}

impl HtmlLines<'_> {
    fn line(&mut self, cells: &[(char, Pen)], omitted: u64) {
        if self.err.is_some() {
            return;
        }
        let result = self.write_line(cells, omitted);
        if let Err(e) = result {
            self.err = Some(e);
        }
    }

    fn write_line(&mut self, cells: &[(char, Pen)], omitted: u64) -> io::Result<()> {
        if self.lines > 0 {
            self.out.write_all(b"\n")?;
        }
        self.lines += 1;
        // The line's text, with where each cell starts in it.
        let text = &mut self.scratch;
        text.clear();
        let starts = &mut self.starts;
        starts.clear();
        for &(c, _) in cells {
            starts.push(text.len());
            text.push(c);
        }
        let secrets: Vec<(std::ops::Range<usize>, &str)> = match self.redactor {
            None => Vec::new(),
            Some(_) if read::key_block_state(&mut self.in_key, text, "") => {
                return write!(
                    self.out,
                    "<span class=\"red\">{}</span>",
                    escape("[REDACTED:private-key]")
                );
            }
            Some(r) => r
                .find_secrets(text)
                .into_iter()
                .map(|s| (s.range, s.kind))
                .collect(),
        };
        write_cells(self.out, cells, starts, &secrets, &mut self.styles)?;
        if omitted > 0 {
            write!(
                self.out,
                "<span class=\"note\">…[{omitted} chars omitted]</span>"
            )?;
        }
        Ok(())
    }

    /// A line of omnish's own (in the note style).
    fn note_line(&mut self, note: &str) {
        if self.err.is_some() {
            return;
        }
        let r = (|| {
            if self.lines > 0 {
                self.out.write_all(b"\n")?;
            }
            self.lines += 1;
            write!(self.out, "<span class=\"note\">{}</span>", escape(note))
        })();
        if let Err(e) = r {
            self.err = Some(e);
        }
    }

    fn note(&mut self, note: &str) -> io::Result<()> {
        self.note_line(note);
        match self.err.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Writes `cells` as runs of one pen each, the `secrets` (byte ranges of `text`, sorted, not
/// overlapping) replaced by their markers.
fn write_cells(
    out: &mut dyn Write,
    cells: &[(char, Pen)],
    starts: &[usize],
    secrets: &[(std::ops::Range<usize>, &str)],
    styles: &mut Styles,
) -> io::Result<()> {
    let mut run = String::new();
    let mut run_pen: Option<Pen> = None;
    let mut flush = |out: &mut dyn Write, run: &mut String, pen: Option<Pen>| -> io::Result<()> {
        if run.is_empty() {
            return Ok(());
        }
        let shown = visible::text(run);
        match pen.and_then(|p| styles.of(p)) {
            Some(css) => {
                out.write_all(b"<span style=\"")?;
                out.write_all(css.as_bytes())?;
                out.write_all(b"\">")?;
                out.write_all(escape(&shown).as_bytes())?;
                out.write_all(b"</span>")?;
            }
            None => out.write_all(escape(&shown).as_bytes())?,
        }
        run.clear();
        Ok(())
    };
    let mut s = 0;
    // The secret whose marker was written.
    let mut marked = None;
    for (i, &(c, pen)) in cells.iter().enumerate() {
        let at = starts[i];
        while s < secrets.len() && secrets[s].0.end <= at {
            s += 1;
        }
        if let Some((range, kind)) = secrets.get(s) {
            if range.contains(&at) {
                if marked != Some(s) {
                    marked = Some(s);
                    flush(out, &mut run, run_pen)?;
                    write!(
                        out,
                        "<span class=\"red\">{}</span>",
                        escape(&format!("[REDACTED:{kind}]"))
                    )?;
                }
                continue;
            }
        }
        if run_pen != Some(pen) {
            flush(out, &mut run, run_pen)?;
            run_pen = Some(pen);
        }
        run.push(c);
    }
    flush(out, &mut run, run_pen)
}

/// `s` with `&`, `<`, `>`, `"` and `'` escaped: text that can never be markup.
pub(crate) fn escape(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains(['&', '<', '>', '"', '\'']) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(bytes: &[u8], redactor: Option<&Redactor>) -> String {
        let mut out = Vec::new();
        let mut sink = HtmlLines {
            out: &mut out,
            redactor,
            in_key: false,
            lines: 0,
            err: None,
            scratch: String::new(),
            starts: Vec::new(),
            styles: Styles::default(),
        };
        let mut screen = Screen::default();
        let mut parser = Parser::new();
        let mut carry = Vec::new();
        feed(&mut parser, &mut screen, &mut carry, bytes, &mut sink);
        screen.finish(&mut sink, false);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn colours_become_spans_and_markup_is_text() {
        let html = render(
            b"\x1b[1;31merror\x1b[0m: <script>alert(1)</script>\r\n\x1b[38;5;208mo\x1b[38;2;1;2;3mt\x1b[0m\n",
            None,
        );
        assert!(
            html.contains("<span style=\"color:#f14c4c;font-weight:bold;\">error</span>"),
            "{html}"
        );
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("color:#ff8700"), "256 colours: {html}");
        assert!(html.contains("color:#010203"), "truecolor: {html}");
    }

    #[test]
    fn carriage_returns_and_erases_leave_the_final_line() {
        let html = render(b"10%\r50%\r\x1b[Kdone\nab\x08c\n", None);
        assert_eq!(html, "done\nac");
    }

    #[test]
    fn secrets_are_redacted_across_colours() {
        let token = "ghp_0123456789abcdefABCDEF0123456789abcd";
        let (a, b) = token.split_at(12);
        let bytes = format!("token \x1b[32m{a}\x1b[35m{b}\x1b[0m end\n");
        let r = Redactor::new();
        let html = render(bytes.as_bytes(), Some(&r));
        assert!(!html.contains(a) && !html.contains(b), "{html}");
        assert!(html.contains("[REDACTED:"), "{html}");
        assert!(html.contains(" end"), "{html}");
    }

    #[test]
    fn full_screen_programs_are_one_line_and_lines_are_capped() {
        let html = render(b"a\n\x1b[?1049hvim stuff\x1b[?1049lb\n", None);
        assert_eq!(
            html,
            "a\n<span class=\"note\">[full-screen program]</span>\nb"
        );
        let long = "x".repeat(LINE_CAP + 10);
        let html = render(long.as_bytes(), None);
        assert!(
            html.ends_with("…[10 chars omitted]</span>"),
            "{}",
            &html[html.len() - 60..]
        );
    }
}
