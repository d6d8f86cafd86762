//! The marker scanner on arbitrary shell output, cut into arbitrary reads: it never panics, holds
//! back a bounded amount, what it finds does not depend on where the reads were cut, and the
//! token of a marker (whole, cut short or broken anywhere) never comes out as output.
#![no_main]

use libfuzzer_sys::fuzz_target;
use omnish::record::marker::{Piece, Scanner};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

/// Most bytes the scanner may hold back between reads.
const MAX_HELD: usize = 64;

/// Text and markers found, text runs joined.
fn scan(input: &[u8], cuts: &[usize]) -> (Vec<u8>, Vec<String>) {
    let mut s = Scanner::new(TOKEN);
    let mut text = Vec::new();
    let mut markers = Vec::new();
    let mut sink = |p: Piece<'_>| match p {
        Piece::Text(t) => text.extend_from_slice(t),
        other => markers.push(format!("{other:?}")),
    };
    let mut at = 0;
    for &c in cuts {
        let end = (at + c).min(input.len());
        s.feed(&input[at..end], &mut sink);
        assert!(s.held_len() <= MAX_HELD, "held {}", s.held_len());
        at = end;
    }
    s.feed(&input[at..], &mut sink);
    assert!(s.held_len() <= MAX_HELD, "held {}", s.held_len());
    s.flush(&mut sink);
    (text, markers)
}

/// Whether every occurrence of the token in `input` is where a marker's credential goes:
/// right after `ESC ]133;` or `ESC ]633;`.
fn token_only_as_credential(input: &[u8]) -> bool {
    memchr::memmem::find_iter(input, TOKEN.as_bytes()).all(|p| {
        p >= 6 && (&input[p - 6..p] == b"\x1b]133;" || &input[p - 6..p] == b"\x1b]633;")
    })
}

fuzz_target!(|data: &[u8]| {
    let (cut_bytes, input) = data.split_at(data.len().min(8));
    // Markers of ours are likelier when the input carries the token: `%` stands for it, and
    // `#` for `ESC ]633;` and the token (the start of a marker of ours).
    let mut with_token = Vec::with_capacity(input.len());
    for &b in input {
        match b {
            b'%' => with_token.extend_from_slice(TOKEN.as_bytes()),
            b'#' => {
                with_token.extend_from_slice(b"\x1b]633;");
                with_token.extend_from_slice(TOKEN.as_bytes());
            }
            b => with_token.push(b),
        }
    }
    let cuts: Vec<usize> = cut_bytes.iter().map(|&b| usize::from(b) + 1).collect();
    let whole = scan(&with_token, &[]);
    let pieces = scan(&with_token, &cuts);
    assert_eq!(whole, pieces);
    // Nothing but markers is removed: the text is never longer than the input.
    assert!(whole.0.len() <= with_token.len());
    // A token that only ever stood in markers is never output, however they were cut short.
    if token_only_as_credential(&with_token) {
        assert!(
            memchr::memmem::find(&whole.0, TOKEN.as_bytes()).is_none(),
            "the token came out"
        );
    }
});
