//! `omnish init nu`: nushell cannot evaluate a string, so the snippet is a file that nushell
//! reads itself. config.nu writes it at every start into nushell's vendor autoload directory,
//! which nushell reads right after config.nu:
//!
//! ```nu
//! mkdir ($nu.data-dir | path join vendor/autoload)
//! omnish init nu --wrap | save -f ($nu.data-dir | path join vendor/autoload/omnish.nu)
//! ```
//!
//! The keys: reedline binds one key with modifiers, not a sequence such as readline's `\C-xa`,
//! so the readline defaults become Alt-a (ask), Alt-x (fix), Alt-p (pause) and Alt-k (pick), which neither
//! reedline's emacs and vi-insert keymaps nor nushell's default config bind. A configured key that is one key
//! (`\ea`, `\M-a`, `\C-g`, `\e\C-a`) is translated; any other gets one line and the default.

use std::path::Path;

const INIT: &str = include_str!("../../../shell/init.nu");

/// nushell's keys for the readline defaults of keys.ask, keys.fix, keys.pause and keys.pick.
const DEFAULTS: [(&str, &str, &str); 4] = [
    (r"\C-xa", "alt", "a"),
    (r"\C-xf", "alt", "x"),
    (r"\C-xp", "alt", "p"),
    (r"\C-xk", "alt", "k"),
];

/// A keybinding: reedline's modifier name and the key (`a`, `f1`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Key {
    pub modifier: String,
    pub key: String,
}

impl Key {
    fn keycode(&self) -> String {
        if self.key.chars().count() == 1 {
            format!("char_{}", self.key)
        } else {
            self.key.clone()
        }
    }

    /// As a nushell record: `{modifier: alt, keycode: char_a}`.
    pub(crate) fn record(&self) -> String {
        format!(
            "{{modifier: {}, keycode: {}}}",
            self.modifier,
            self.keycode()
        )
    }

    /// As a person reads it: Alt-a, Ctrl-Alt-g.
    pub(crate) fn shown(&self) -> String {
        let mods: Vec<&str> = self
            .modifier
            .split('_')
            .filter(|m| *m != "none")
            .map(|m| match m {
                "control" => "Ctrl",
                "alt" => "Alt",
                "shift" => "Shift",
                _ => m,
            })
            .collect();
        let mut s = mods.join("-");
        if !s.is_empty() {
            s.push('-');
        }
        s + &self.key
    }
}

/// One key in readline syntax as a nushell keybinding, or None when reedline cannot bind it (a
/// sequence of keys, an escape sequence).
pub(crate) fn translate(readline: &str) -> Option<Key> {
    let mut rest = readline;
    let (mut ctrl, mut alt) = (false, false);
    loop {
        if let Some(r) = rest.strip_prefix(r"\C-") {
            ctrl = true;
            rest = r;
        } else if let Some(r) = rest.strip_prefix(r"\M-") {
            alt = true;
            rest = r;
        } else if rest.len() > 2 && rest.starts_with(r"\e") {
            alt = true;
            rest = &rest[2..];
        } else {
            break;
        }
    }
    let mut chars = rest.chars();
    let c = chars.next()?;
    let c = match (c, chars.next()) {
        ('\\', Some(e @ ('\\' | '"' | '\''))) => e,
        (c, None) if !c.is_control() && c != '\\' => c,
        _ => return None,
    };
    if chars.next().is_some() || (!ctrl && !alt) {
        // A sequence, or a key without a modifier (it would take a character from typing).
        return None;
    }
    let shift = c.is_ascii_uppercase() && !ctrl;
    let key = c.to_ascii_lowercase().to_string();
    let mods: Vec<&str> = [(ctrl, "control"), (alt, "alt"), (shift, "shift")]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, m)| m)
        .collect();
    Some(Key {
        modifier: mods.join("_"),
        key,
    })
}

/// The keybinding for `configured` (keys.ask, keys.fix, keys.pause or keys.pick, `which`
/// being `ask`, `fix`, `pause` or `pick`), and the line to say when it cannot be bound.
pub(crate) fn key_for(which: &str, configured: &str) -> (Key, Option<String>) {
    let (default_readline, modifier, key) = match which {
        "ask" => DEFAULTS[0],
        "fix" => DEFAULTS[1],
        "pause" => DEFAULTS[2],
        _ => DEFAULTS[3],
    };
    let default = Key {
        modifier: modifier.into(),
        key: key.into(),
    };
    if configured == default_readline {
        return (default, None);
    }
    match translate(configured) {
        Some(k) => (k, None),
        None => {
            let line = format!(
                "omnish: nushell binds one key with modifiers, not {configured} (keys.{which}); using {}",
                default.shown()
            );
            (default, Some(line))
        }
    }
}

/// The keys `omnish init nu` binds (`None`: not bound, its key taken by another).
pub(crate) struct Keys {
    pub ask: Key,
    pub fix: Key,
    pub pause: Option<Key>,
    pub pick: Option<Key>,
}

/// The text of `omnish init nu`: the lines config.nu holds, the values this start decided, and
/// `shell/init.nu`.
pub(crate) fn snippet(
    bin: &Path,
    keys: &Keys,
    wrap: bool,
    tty: Option<&str>,
    with_wrap: bool,
) -> String {
    let q = |s: &str| crate::record::shell::nu::nu_quote(s);
    let flag = if with_wrap { " --wrap" } else { "" };
    let mut text = format!(
        "# omnish init nu{flag}: nushell reads this file from its vendor autoload directory. Add to\n\
         # the end of config.nu ($nu.config-path) these two lines, which write it at every start:\n\
         #   mkdir ($nu.data-dir | path join vendor/autoload)\n\
         #   omnish init nu{flag} | save -f ($nu.data-dir | path join vendor/autoload/omnish.nu)\n\
         # Keys: {} asks about the last failed command, {} puts a corrected command on the line\n\
         # (reedline binds one key with modifiers: readline's \\C-xa and \\C-xf cannot be bound).\n",
        keys.ask.shown(),
        keys.fix.shown()
    );
    let keyrec = Key::record;
    text += INIT;
    text += &format!(
        "__omnish_init {{bin: {}, ask: {}, fix: {}, pause: {}, pick: {}, wrap: {wrap}, tty: {}}}\n",
        q(&bin.to_string_lossy()),
        keyrec(&keys.ask),
        keyrec(&keys.fix),
        keys.pause
            .as_ref()
            .map_or_else(|| "null".to_string(), keyrec),
        keys.pick
            .as_ref()
            .map_or_else(|| "null".to_string(), keyrec),
        q(tty.unwrap_or("")),
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(m: &str, k: &str) -> Option<Key> {
        Some(Key {
            modifier: m.into(),
            key: k.into(),
        })
    }

    #[test]
    fn one_readline_key_becomes_a_keybinding() {
        assert_eq!(translate(r"\ea"), key("alt", "a"));
        assert_eq!(translate(r"\M-q"), key("alt", "q"));
        assert_eq!(translate(r"\C-g"), key("control", "g"));
        assert_eq!(translate(r"\e\C-a"), key("control_alt", "a"));
        assert_eq!(translate(r"\C-\M-a"), key("control_alt", "a"));
        assert_eq!(translate(r"\eA"), key("alt_shift", "a"));
        for sequence in [r"\C-xa", r"\e[15~", "a", r"\C-x\C-a", ""] {
            assert_eq!(translate(sequence), None, "{sequence}");
        }
    }

    #[test]
    fn readline_defaults_become_nushell_defaults_and_others_say_why() {
        assert_eq!(key_for("ask", r"\C-xa"), (key("alt", "a").unwrap(), None));
        assert_eq!(key_for("fix", r"\C-xf"), (key("alt", "x").unwrap(), None));
        assert_eq!(key_for("pause", r"\C-xp"), (key("alt", "p").unwrap(), None));
        assert_eq!(key_for("pick", r"\C-xk"), (key("alt", "k").unwrap(), None));
        let (k, line) = key_for("fix", r"\C-xg");
        assert_eq!(k, key("alt", "x").unwrap());
        assert_eq!(
            line.as_deref(),
            Some(
                r"omnish: nushell binds one key with modifiers, not \C-xg (keys.fix); using Alt-x"
            )
        );
    }
}
