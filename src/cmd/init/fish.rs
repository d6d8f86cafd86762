//! `omnish init fish`: the keys in fish's `bind` notation, and the snippet's header.
//!
//! The keys come from `keys.ask` and `keys.fix` in readline syntax (`\C-xa`), as for bash and
//! zsh. Their defaults (Ctrl-X a, Ctrl-X f) would shadow fish's own Ctrl-X (copy to the
//! clipboard: a bound prefix makes fish wait for the key after it), so fish has defaults of its
//! own, Ctrl-O a, Ctrl-O f, Ctrl-O p (`keys.pause`) and Ctrl-O k (`keys.pick`): neither fish 3
//! nor fish 4 binds Ctrl-O in any mode (fish 4 binds Ctrl-G alone to `cancel`, which a Ctrl-G
//! prefix would make wait for a second key).

use crate::record::shell::fish::fish_quote;

/// fish's default keys (readline syntax), used while `keys.ask`/`keys.fix` are the defaults.
pub(crate) const ASK_DEFAULT: &str = r"\C-oa";
pub(crate) const FIX_DEFAULT: &str = r"\C-of";
pub(crate) const PAUSE_DEFAULT: &str = r"\C-op";
pub(crate) const PICK_DEFAULT: &str = r"\C-ok";

/// A key in readline syntax (`\C-xa`, `\ea`, `\M-q`, `\C-g`) as fish's `bind` reads it unquoted
/// (`\cxa`, `\ea`, `\eq`, `\cg`); works with fish 3 and 4 (which still reads this notation). None
/// for a key fish cannot bind this way: a control key outside `\C-@`..`\C-_`, a character
/// outside ASCII, an unknown escape, or nothing.
pub(crate) fn bind_notation(key: &str) -> Option<String> {
    let mut bytes = Vec::new();
    let mut chars = key.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            bytes.push(c);
            continue;
        }
        match chars.next()? {
            'C' => {
                if chars.next()? != '-' {
                    return None;
                }
                let k = chars.next()?;
                let k = if k == '\\' { chars.next()? } else { k };
                let up = k.to_ascii_uppercase();
                if !('@'..='_').contains(&up) {
                    return None;
                }
                bytes.push(char::from(up as u8 - b'@'));
            }
            'M' => {
                if chars.next()? != '-' {
                    return None;
                }
                bytes.push('\x1b');
                let k = chars.next()?;
                let k = if k == '\\' { chars.next()? } else { k };
                bytes.push(k);
            }
            'e' => bytes.push('\x1b'),
            c @ ('\\' | '"' | '\'') => bytes.push(c),
            _ => return None,
        }
    }
    if bytes.is_empty() {
        return None;
    }
    let mut out = String::new();
    for b in bytes {
        match b {
            '\x1b' => out.push_str(r"\e"),
            '\x00' => out.push_str(r"\c@"),
            c @ '\x01'..='\x1a' => {
                out.push_str(r"\c");
                out.push(char::from(c as u8 - 1 + b'a'));
            }
            c @ '\x1c'..='\x1f' => out.push_str(&format!(r"\x{:02x}", c as u8)),
            c if c.is_ascii_alphanumeric() || "-_.,/=:@%+!".contains(c) => out.push(c),
            c if c.is_ascii_graphic() => {
                out.push('\\');
                out.push(c);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// The header of the fish snippet: the variables shell/init.fish reads. The keys are set
/// unquoted, so fish turns their notation into the bytes `bind` takes.
pub(crate) fn header(bin: &str, keys: [&str; 4], wrap: bool, tty: &str) -> String {
    let [ask, fix, pause, pick] = keys;
    format!(
        "set -g __omnish_bin {}\nset -g __omnish_ask_key {ask}\nset -g __omnish_fix_key {fix}\nset -g __omnish_pause_key {pause}\nset -g __omnish_pick_key {pick}\nset -g __omnish_wrap {}\nset -g __omnish_tty {}\n",
        fish_quote(bin),
        u8::from(wrap),
        fish_quote(tty),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readline_keys_in_fish_notation() {
        for (readline, fish) in [
            (r"\C-xa", r"\cxa"),
            (r"\C-ga", r"\cga"),
            (r"\C-X\C-F", r"\cx\cf"),
            (r"\ea", r"\ea"),
            (r"\M-q", r"\eq"),
            (r"\C-g", r"\cg"),
            (r"\C-@", r"\c@"),
            (r"\C-\\", r"\x1c"),
            (r"\e\\", r"\e\\"),
            ("x;", r"x\;"),
            (r"\C-x$", r"\cx\$"),
        ] {
            assert_eq!(bind_notation(readline).as_deref(), Some(fish), "{readline}");
        }
        for bad in ["", r"\C-", r"\C-1", r"\q", "é", r"\M-", r"\C", "\\"] {
            assert_eq!(bind_notation(bad), None, "{bad}");
        }
        assert_eq!(bind_notation(ASK_DEFAULT).as_deref(), Some(r"\coa"));
        assert_eq!(bind_notation(FIX_DEFAULT).as_deref(), Some(r"\cof"));
        assert_eq!(bind_notation(PAUSE_DEFAULT).as_deref(), Some(r"\cop"));
        assert_eq!(bind_notation(PICK_DEFAULT).as_deref(), Some(r"\cok"));
    }
}
