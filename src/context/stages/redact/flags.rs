//! Passwords typed as short command-line flags, which no name makes recognisable: `mysql
//! -pSECRET`, `sshpass -p SECRET`, `docker login -p SECRET`, `redis-cli -a SECRET`,
//! `ldapsearch -w SECRET`, `sqlcmd -P SECRET`, `smbclient -U user%SECRET`, `htpasswd -b file
//! user SECRET`, `openssl … -passin pass:SECRET`, `zip -P SECRET`, `7z -pSECRET`, `xfreerdp
//! /p:SECRET`, `curl --oauth2-bearer SECRET`, and a password piped from `echo`/`printf` into
//! `--password-stdin`, `passwd --stdin` or `chpasswd` (`user:SECRET`).
//!
//! A line that names one of these tools is split into shell words (quotes respected) and
//! simple commands (at `; | & ( )`); the flags are read among the words that follow the tool's
//! name in the same simple command, wherever it stands (after `sudo`, in `ps` or `history`
//! output). Only the value is replaced (inside its quotes when quoted); references (`-p$PW`),
//! placeholders and the next option are left alone. Kind: `password-flag`.

use regex::Regex;
use std::ops::Range;

use super::values::is_non_secret;
use super::{Cand, cand};

/// What makes a line worth splitting into words.
pub(super) const PATTERN: &str = r"(?-u:\b)(?:mysql[a-z]*|mariadb[a-z-]*|sshpass|redis-cli|mongo(?:sh|dump|restore|export|import)?|ldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn)|sqlcmd|bcp|smbclient|rpcclient|htpasswd|openssl|login|zip|unzip|7za?|xfreerdp|chpasswd|curl)(?-u:\b)|--password-stdin|--stdin";

const KIND: &str = "password-flag";
const PRIO: u8 = 45;

pub(super) fn detect(re: &Regex, text: &str, _: bool, out: &mut Vec<Cand>) {
    let mut done_to = 0;
    for m in re.find_iter(text) {
        if m.start() < done_to {
            continue;
        }
        let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
        let end = text[m.end()..]
            .find('\n')
            .map_or(text.len(), |i| m.end() + i);
        line(text, start..end, out);
        done_to = end;
    }
}

/// A shell word: where it is and what it says once quotes are removed.
#[derive(Debug)]
struct Word {
    range: Range<usize>,
    text: String,
}

/// The simple commands of `text[line]`, each a list of words, with the separator that ended
/// each one (`|` for a pipe).
fn split(text: &str, line: Range<usize>) -> Vec<(Vec<Word>, char)> {
    let mut cmds = Vec::new();
    let mut words = Vec::new();
    let mut cur: Option<(usize, String)> = None;
    let mut quote: Option<char> = None;
    let mut iter = text[line.clone()].char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let at = line.start + i;
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else if c == '\\' && q == '"' {
                if let Some((_, n)) = iter.next() {
                    cur.get_or_insert((at, String::new())).1.push(n);
                }
                continue;
            } else {
                cur.get_or_insert((at, String::new())).1.push(c);
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                cur.get_or_insert((at, String::new()));
            }
            '\\' => {
                let w = cur.get_or_insert((at, String::new()));
                if let Some((_, n)) = iter.next() {
                    w.1.push(n);
                }
            }
            c if c.is_whitespace() => end_word(&mut cur, &mut words, at),
            ';' | '|' | '&' | '(' | ')' => {
                end_word(&mut cur, &mut words, at);
                cmds.push((std::mem::take(&mut words), c));
            }
            c => cur.get_or_insert((at, String::new())).1.push(c),
        }
    }
    end_word(&mut cur, &mut words, line.end);
    cmds.push((words, '\n'));
    cmds
}

fn end_word(cur: &mut Option<(usize, String)>, words: &mut Vec<Word>, at: usize) {
    if let Some((start, text)) = cur.take() {
        words.push(Word {
            range: start..at,
            text,
        });
    }
}

/// The value part of `w` that starts `skip` bytes into its raw text, without surrounding
/// quotes; `None` when it is empty, a reference, a placeholder or the next option.
fn value(text: &str, w: &Word, skip: usize) -> Option<Range<usize>> {
    let mut r = w.range.start + skip..w.range.end;
    let raw = text.get(r.clone())?;
    if raw.starts_with(['\'', '"']) {
        // Quoted: inside the quotes (an unclosed quote runs to the end of the word).
        let closed = raw.len() >= 2 && raw.ends_with(&raw[..1]);
        r = r.start + 1..r.end - usize::from(closed);
    }
    let v = &text[r.clone()];
    let quoted = r.start > w.range.start + skip;
    if v.is_empty() || v.starts_with('-') || is_non_secret(v, quoted) || v.contains('$') {
        return None;
    }
    Some(r)
}

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn line(text: &str, line: Range<usize>, out: &mut Vec<Cand>) {
    let cmds = split(text, line);
    for (k, (words, _)) in cmds.iter().enumerate() {
        for (i, w) in words.iter().enumerate() {
            let tool = base(&w.text);
            let rest = &words[i + 1..];
            match tool {
                t if t.starts_with("mysql") || t.starts_with("mariadb") => {
                    attached(text, rest, "-p", out)
                }
                "sshpass" => short(text, rest, "-p", true, out),
                "redis-cli" => {
                    short(text, rest, "-a", false, out);
                    short(text, rest, "--pass", false, out);
                }
                t if t.starts_with("mongo") => short(text, rest, "-p", false, out),
                t if t.starts_with("ldap") => short(text, rest, "-w", false, out),
                "sqlcmd" | "bcp" => short(text, rest, "-P", false, out),
                "zip" | "unzip" => short(text, rest, "-P", false, out),
                "7z" | "7za" => attached(text, rest, "-p", out),
                "smbclient" | "rpcclient" => user_percent(text, rest, out),
                "htpasswd" => htpasswd(text, rest, out),
                "openssl" => openssl(text, rest, out),
                "xfreerdp" => attached(text, rest, "/p:", out),
                "curl" => short(text, rest, "--oauth2-bearer", false, out),
                // `docker login -p`, `helm registry login -p`, `az login -p`: not `login` itself.
                "login" if i > 0 && !matches!(words[i - 1].text.as_str(), "sudo" | "exec") => {
                    short(text, rest, "-p", true, out)
                }
                _ => {}
            }
        }
        let has = |f: &dyn Fn(&str) -> bool| words.iter().any(|w| f(&w.text));
        let stdin = has(&|w| w == "--password-stdin" || base(w) == "chpasswd")
            || (has(&|w| w == "--stdin") && has(&|w| base(w) == "passwd"));
        if stdin && k > 0 && cmds[k - 1].1 == '|' {
            piped(text, &cmds[k - 1].0, words, out);
        }
    }
}

/// `FLAG VALUE`, and `FLAGVALUE` too when `joined`.
fn short(text: &str, rest: &[Word], flag: &str, joined: bool, out: &mut Vec<Cand>) {
    for (j, w) in rest.iter().enumerate() {
        if w.text == flag {
            if let Some(r) = rest.get(j + 1).and_then(|next| value(text, next, 0)) {
                out.push(cand(r, KIND, PRIO));
            }
        } else if joined && w.text.len() > flag.len() && w.text.starts_with(flag) {
            attached(text, std::slice::from_ref(w), flag, out);
        }
    }
}

/// `FLAGVALUE` only (`mysql -pSECRET`; `-p` alone prompts, `-P3306` is a port).
fn attached(text: &str, rest: &[Word], flag: &str, out: &mut Vec<Cand>) {
    for w in rest {
        let raw = &text[w.range.clone()];
        if raw.len() > flag.len() && raw.starts_with(flag) {
            if let Some(r) = value(text, w, flag.len()) {
                out.push(cand(r, KIND, PRIO));
            }
        }
    }
}

/// `-U user%SECRET`, `--user=user%SECRET`.
fn user_percent(text: &str, rest: &[Word], out: &mut Vec<Cand>) {
    for (j, w) in rest.iter().enumerate() {
        let target = if w.text == "-U" || w.text == "--user" {
            rest.get(j + 1)
        } else if w.text.starts_with("--user=") || (w.text.starts_with("-U") && w.text.len() > 2) {
            Some(w)
        } else {
            None
        };
        let Some(t) = target else { continue };
        let raw = &text[t.range.clone()];
        if let Some(p) = raw.find('%') {
            let mut r = t.range.start + p + 1..t.range.end;
            if text[r.clone()].ends_with(['\'', '"']) {
                r.end -= 1;
            }
            let v = &text[r.clone()];
            if !v.is_empty() && !is_non_secret(v, false) && !v.contains('$') {
                out.push(cand(r, KIND, PRIO));
            }
        }
    }
}

/// `htpasswd -b[c…] FILE USER SECRET`, `htpasswd -nb USER SECRET`.
fn htpasswd(text: &str, rest: &[Word], out: &mut Vec<Cand>) {
    let flags: String = rest
        .iter()
        .filter(|w| w.text.starts_with('-'))
        .map(|w| w.text.as_str())
        .collect();
    if !flags.contains('b') {
        return;
    }
    let args: Vec<&Word> = rest.iter().filter(|w| !w.text.starts_with('-')).collect();
    let at = if flags.contains('n') { 1 } else { 2 };
    if let Some(r) = args.get(at).and_then(|w| value(text, w, 0)) {
        out.push(cand(r, KIND, PRIO));
    }
}

/// `-passin pass:SECRET`, `-passout pass:SECRET`, `-pass pass:SECRET`, `-k SECRET`.
fn openssl(text: &str, rest: &[Word], out: &mut Vec<Cand>) {
    for (j, w) in rest.iter().enumerate() {
        let Some(next) = rest.get(j + 1) else { break };
        match w.text.as_str() {
            "-passin" | "-passout" | "-pass" | "-password" | "-kfile" => {
                let raw = &text[next.range.clone()];
                let skip = raw.find("pass:").map(|p| p + 5);
                if let Some(r) = skip.and_then(|s| value(text, next, s)) {
                    out.push(cand(r, KIND, PRIO));
                }
            }
            "-k" => {
                if let Some(r) = value(text, next, 0) {
                    out.push(cand(r, KIND, PRIO));
                }
            }
            _ => {}
        }
    }
}

/// `echo SECRET | docker login --password-stdin`, `echo 'user:SECRET' | chpasswd`.
fn piped(text: &str, from: &[Word], to: &[Word], out: &mut Vec<Cand>) {
    let Some(first) = from.first() else { return };
    if !matches!(base(&first.text), "echo" | "printf") {
        return;
    }
    let Some(last) = from
        .last()
        .filter(|w| from.len() > 1 && !w.text.starts_with('-'))
    else {
        return;
    };
    let chpasswd = to.iter().any(|w| base(&w.text) == "chpasswd");
    let raw = &text[last.range.clone()];
    let skip = if chpasswd {
        match raw.find(':') {
            Some(p) => p + 1,
            None => return,
        }
    } else {
        0
    };
    let Some(mut r) = value(text, last, skip) else {
        return;
    };
    if chpasswd && text[r.clone()].ends_with(['\'', '"']) {
        r.end -= 1;
    }
    if r.start < r.end {
        out.push(cand(r, KIND, PRIO));
    }
}

#[cfg(test)]
mod tests {
    use crate::context::stages::redact::redact;

    fn r(s: &str) -> String {
        redact(s).into_owned()
    }

    #[test]
    fn database_clients() {
        assert_eq!(
            r("mysql -uroot -pS3cr3t-x db < dump.sql"),
            "mysql -uroot -p[REDACTED:password-flag] db < dump.sql"
        );
        assert_eq!(
            r("sudo /usr/bin/mysqldump -u app -p'p a)ss' app"),
            "sudo /usr/bin/mysqldump -u app -p'[REDACTED:password-flag]' app"
        );
        assert_eq!(
            r("mongosh -u admin -p Hunter22 --authenticationDatabase admin"),
            "mongosh -u admin -p [REDACTED:password-flag] --authenticationDatabase admin"
        );
        assert_eq!(
            r("redis-cli -h cache -a r3dis-pw ping"),
            "redis-cli -h cache -a [REDACTED:password-flag] ping"
        );
        assert_eq!(
            r("sqlcmd -S db -U sa -P 'Str0ng!Pass' -Q 'select 1'"),
            "sqlcmd -S db -U sa -P '[REDACTED:password-flag]' -Q 'select 1'"
        );
        assert_eq!(
            r("ldapsearch -x -D cn=admin -w ldapPW9 -b dc=x"),
            "ldapsearch -x -D cn=admin -w [REDACTED:password-flag] -b dc=x"
        );
        // Prompting forms and ports stay.
        let untouched = [
            "mysql -u root -p db",
            "mysql -P3306 -h db -p",
            "mysql -p$MYSQL_PW db",
            "mongosh -p --port 27017",
            "ssh -p 2222 host",
            "docker run -p 8080:80 nginx",
            "login -p root",
        ];
        for s in untouched {
            assert_eq!(r(s), s);
        }
    }

    #[test]
    fn logins_and_tools() {
        assert_eq!(
            r("sshpass -p 'pa ss' ssh u@h"),
            "sshpass -p '[REDACTED:password-flag]' ssh u@h"
        );
        assert_eq!(
            r("sshpass -pS3cret ssh u@h"),
            "sshpass -p[REDACTED:password-flag] ssh u@h"
        );
        assert_eq!(
            r("docker login -u bot -p dckrPW77 registry.example.com"),
            "docker login -u bot -p [REDACTED:password-flag] registry.example.com"
        );
        assert_eq!(
            r("helm registry login ghcr.io -u me -p hp4ss"),
            "helm registry login ghcr.io -u me -p [REDACTED:password-flag]"
        );
        assert_eq!(
            r("echo 'regPW-99' | docker login -u bot --password-stdin reg"),
            "echo '[REDACTED:password-flag]' | docker login -u bot --password-stdin reg"
        );
        assert_eq!(
            r("echo 'ada:N3wPass' | sudo chpasswd"),
            "echo 'ada:[REDACTED:password-flag]' | sudo chpasswd"
        );
        assert_eq!(
            r("smbclient //srv/share -U ada%Sm8pw"),
            "smbclient //srv/share -U ada%[REDACTED:password-flag]"
        );
        assert_eq!(
            r("htpasswd -bc .htpasswd ada ht-pw-1"),
            "htpasswd -bc .htpasswd ada [REDACTED:password-flag]"
        );
        assert_eq!(
            r("htpasswd -nb ada htpw2"),
            "htpasswd -nb ada [REDACTED:password-flag]"
        );
        assert_eq!(
            r("openssl pkcs12 -export -in c.pem -passout pass:Exp0rt -out c.p12"),
            "openssl pkcs12 -export -in c.pem -passout pass:[REDACTED:password-flag] -out c.p12"
        );
        assert_eq!(
            r("openssl enc -aes-256-cbc -k encPW5 -in f"),
            "openssl enc -aes-256-cbc -k [REDACTED:password-flag] -in f"
        );
        assert_eq!(
            r("zip -P zipPW1 -r out.zip dir && 7z x -p7zPW2 a.7z"),
            "zip -P [REDACTED:password-flag] -r out.zip dir && 7z x -p[REDACTED:password-flag] a.7z"
        );
        assert_eq!(
            r("xfreerdp /v:host /u:ada /p:Rdp-pw3"),
            "xfreerdp /v:host /u:ada /p:[REDACTED:password-flag]"
        );
        assert_eq!(
            r("curl --oauth2-bearer abc123tok https://api"),
            "curl --oauth2-bearer [REDACTED:password-flag] https://api"
        );
        for s in [
            "openssl x509 -in cert.pem -passin env:PW",
            "htpasswd -c .htpasswd ada",
            "echo hi | cat --stdin",
            "echo $PW | docker login --password-stdin",
        ] {
            assert_eq!(r(s), s);
        }
    }

    #[test]
    fn in_ps_output() {
        assert_eq!(
            r("root  4242  0.1 mysqld_safe; root 4343 mysql -ubackup -pBkp-77x"),
            "root  4242  0.1 mysqld_safe; root 4343 mysql -ubackup -p[REDACTED:password-flag]"
        );
    }
}
