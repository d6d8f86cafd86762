//! The marker scanner on arbitrary shell output, cut into arbitrary reads: it never panics, holds
//! back a bounded amount, and what it finds does not depend on where the reads were cut.
#![no_main]

use libfuzzer_sys::fuzz_target;
use omnish::record::marker::{Piece, Scanner};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

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
        at = end;
    }
    s.feed(&input[at..], &mut sink);
    s.flush(&mut sink);
    (text, markers)
}

fuzz_target!(|data: &[u8]| {
    let (cut_bytes, input) = data.split_at(data.len().min(8));
    // Markers with our token are likelier when the input carries it.
    let mut with_token = input.to_vec();
    if let Some(i) = with_token.iter().position(|&b| b == b'%') {
        with_token.splice(i..i + 1, TOKEN.bytes());
    }
    let cuts: Vec<usize> = cut_bytes.iter().map(|&b| usize::from(b) + 1).collect();
    let whole = scan(&with_token, &[]);
    let pieces = scan(&with_token, &cuts);
    assert_eq!(whole, pieces);
    // Nothing but markers is removed: the text is never longer than the input.
    assert!(whole.0.len() <= with_token.len());
});
