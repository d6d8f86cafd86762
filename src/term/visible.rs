//! Text shown to a person or an agent never controls their terminal: control characters in
//! recorded fields (a directory named with `ESC [2J`, a command line holding OSC 52, a tampered
//! cache, an LLM's answer) are shown visibly instead of being sent as they are.
//!
//! - C0 controls and DEL in caret notation: ESC is `^[`, BEL `^G`, DEL `^?`.
//! - C1 controls (U+0080 to U+009F, which some terminals obey as CSI, OSC, ...) as `<U+009B>`.
//! - Bidirectional overrides and isolates (U+202A to U+202E, U+2066 to U+2069), which reorder
//!   what is shown ("Trojan Source"), as `<U+202E>`.
//!
//! [`line`](fn@line) is for one-line fields (a directory, a host, a command line shown on one line):
//! newline, carriage return and tab are shown too. [`text`] is for text that keeps its lines
//! (output, a multi-line command line, an answer): newline and tab stay, everything else is
//! shown. JSON shows nothing visibly, it escapes: serde_json escapes C0 controls itself, and
//! [`json_writer`] / [`json_string`] escape the rest (DEL, C1, bidi) as `\u00XX`, so a JSON
//! document holds the exact original and no byte of it controls a terminal it is printed on.

use std::borrow::Cow;
use std::io;

/// `s` for a one-line field: every control character shown visibly.
pub fn line(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// `s` for text that keeps its lines and tabs: every other control character shown visibly.
pub fn text(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// Whether `c` must be shown visibly; `keep_lines` lets newline and tab through.
fn hidden(c: char, keep_lines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_lines,
        '\0'..='\x1f' | '\x7f'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

fn escape(s: &str, keep_lines: bool) -> Cow<'_, str> {
    // The common case (nothing to show) costs one pass over the bytes and no allocation.
    let first = s
        .bytes()
        .position(|b| b < 0x20 || b == 0x7f || b >= 0xc2)
        .and_then(|at| {
            s[at..]
                .char_indices()
                .find(|&(_, c)| hidden(c, keep_lines))
                .map(|(i, _)| at + i)
        });
    let Some(first) = first else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if !hidden(c, keep_lines) {
            out.push(c);
        } else if c == '\x7f' {
            out.push_str("^?");
        } else if (c as u32) < 0x20 {
            out.push('^');
            out.push((b'@' + c as u8) as char);
        } else {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        }
    }
    Cow::Owned(out)
}

/// A serde_json formatter that writes like `F` and, besides what JSON must escape (C0
/// controls, `"` and `\`), escapes every other char [`line`](fn@line) would show visibly (DEL, C1
/// controls, bidi overrides) as `\uXXXX`: the document still parses to the exact original.
pub struct JsonFormatter<F>(pub F);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            fn $name<W: ?Sized + io::Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
                self.0.$name(w $(, $arg)*)
            }
        )*
    };
}

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for JsonFormatter<F> {
    delegate! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // The common case (nothing to escape) is one pass over the bytes.
        if !fragment.bytes().any(|b| b == 0x7f || b >= 0xc2) {
            return w.write_all(fragment.as_bytes());
        }
        let mut at = 0;
        for (i, c) in fragment.char_indices() {
            if hidden(c, true) {
                w.write_all(&fragment.as_bytes()[at..i])?;
                write!(w, "\\u{:04x}", c as u32)?;
                at = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[at..])
    }
}

/// Writes `value` as JSON (pretty or compact) through [`JsonFormatter`].
pub fn json_writer<W: io::Write, T: serde::Serialize + ?Sized>(
    w: W,
    value: &T,
    pretty: bool,
) -> serde_json::Result<()> {
    if pretty {
        let f = JsonFormatter(serde_json::ser::PrettyFormatter::new());
        value.serialize(&mut serde_json::Serializer::with_formatter(w, f))
    } else {
        let f = JsonFormatter(serde_json::ser::CompactFormatter);
        value.serialize(&mut serde_json::Serializer::with_formatter(w, f))
    }
}

/// `value` as JSON (pretty or compact) through [`JsonFormatter`].
pub fn json_string<T: serde::Serialize + ?Sized>(
    value: &T,
    pretty: bool,
) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(128);
    json_writer(&mut out, value, pretty)?;
    // The formatter writes only what serde_json and this module write: UTF-8.
    Ok(String::from_utf8(out).expect("JSON is UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(line("café /tmp/x"), Cow::Borrowed(_)));
        assert!(matches!(text("a\n\tb"), Cow::Borrowed(_)));
    }

    #[test]
    fn controls_are_shown_in_caret_notation() {
        assert_eq!(line("/tmp/\x1b]0;pwned\x07x"), "/tmp/^[]0;pwned^Gx");
        assert_eq!(line("a\nb\r\tc\x7f"), "a^Jb^M^Ic^?");
        assert_eq!(text("a\nb\r\tc\x1b[2J"), "a\nb^M\tc^[[2J");
        assert_eq!(line("\0"), "^@");
    }

    #[test]
    fn c1_controls_and_bidi_overrides_are_named() {
        assert_eq!(line("x\u{9b}31m"), "x<U+009B>31m");
        assert_eq!(text("rm \u{202e}gnp.x"), "rm <U+202E>gnp.x");
        assert_eq!(line("\u{2066}a\u{2069}"), "<U+2066>a<U+2069>");
    }

    #[test]
    fn json_escapes_every_hidden_char_and_keeps_the_original() {
        let original = "d\x1b]0;T\x07\x1b[2J\u{9b}31m\u{202e}x\x7f\ty\n\"\\ café 日本";
        for pretty in [false, true] {
            let doc = serde_json::json!({ original: [original] });
            let text = json_string(&doc, pretty).unwrap();
            assert!(
                !text.chars().any(|c| c != '\n' && hidden(c, false)),
                "{text:?}"
            );
            assert!(text.contains("\\u009b31m\\u202ex\\u007f\\ty"), "{text}");
            assert!(text.contains("café 日本"), "{text}");
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, doc);
            // The layout is serde_json's own.
            let clean = serde_json::json!({"a": [1, "b", null, true, {"c": []}]});
            assert_eq!(
                json_string(&clean, pretty).unwrap(),
                if pretty {
                    serde_json::to_string_pretty(&clean).unwrap()
                } else {
                    serde_json::to_string(&clean).unwrap()
                }
            );
        }
    }

    #[test]
    fn nothing_visible_is_lost_or_left_raw() {
        // Every char below U+0100 and the bidi range: the result holds no hidden char.
        for c in (0u32..0x100).chain(0x2060..0x2070).chain(0x2028..0x2030) {
            let c = char::from_u32(c).unwrap();
            let s = format!("a{c}b");
            let shown = line(&s);
            assert!(shown.starts_with('a') && shown.ends_with('b'), "{s:?}");
            assert!(
                !shown.chars().any(|c| hidden(c, false)),
                "{c:?} -> {shown:?}"
            );
        }
    }
}
