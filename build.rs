//! Writes the static BPE tables that `src/context/tokens/tokenizer/table.rs` embeds.
//!
//! For each encoding (`o200k_base`, `cl100k_base`) this takes every ordinary token's bytes by
//! rank from tiktoken-rs (a build-dependency only) and writes three little-endian files to
//! `OUT_DIR`:
//!
//! * `NAME.bytes`: the tokens' bytes, concatenated in rank order;
//! * `NAME.offsets`: `u32` start offsets by rank, plus the end: token `r` is
//!   `bytes[offsets[r]..offsets[r + 1]]` (a rank with no ordinary token, a gap or a special
//!   token, is an empty range that no slot points to);
//! * `NAME.slots`: an open-addressing hash table of a power-of-two number of `u32` slots (load at
//!   most 1/2), each `rank + 1` or 0 for empty, placed by `token_hash` (shared with the crate)
//!   with linear probing.
//!
//! The program then needs no work at load: building tiktoken's hash maps costs ~120 ms (o200k)
//! per process, these tables cost nothing until a token is looked up.

use std::collections::HashSet;
use std::path::Path;

use tiktoken_rs::CoreBPE;

include!("src/context/tokens/tokenizer/token_hash.rs");

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/context/tokens/tokenizer/token_hash.rs");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    write_tables(
        out,
        "o200k",
        &tiktoken_rs::o200k_base().expect("o200k_base"),
    );
    write_tables(
        out,
        "cl100k",
        &tiktoken_rs::cl100k_base().expect("cl100k_base"),
    );
}

fn write_tables(out: &Path, name: &str, bpe: &CoreBPE) {
    let special: HashSet<u32> = bpe
        .special_tokens()
        .into_iter()
        .map(|s| {
            let ranks = bpe.encode_with_special_tokens(s);
            assert_eq!(ranks.len(), 1, "{name}: special token {s:?}");
            ranks[0]
        })
        .collect();
    assert!(!special.is_empty(), "{name}: no special tokens found");

    // Ordinary ranks are dense from 0; look a little past the last one so a gap before the
    // special tokens cannot end the scan early.
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    let mut misses = 0;
    for rank in 0u32.. {
        if special.contains(&rank) {
            tokens.push(None);
            continue;
        }
        match bpe.decode_bytes(&[rank]) {
            Ok(bytes) => {
                misses = 0;
                tokens.push(Some(bytes));
            }
            Err(_) => {
                misses += 1;
                if misses > 1024 {
                    break;
                }
                tokens.push(None);
            }
        }
    }
    while tokens.last().is_some_and(Option::is_none) {
        tokens.pop();
    }
    let n_tokens = tokens.iter().flatten().count();
    // Every single byte is a token, so a merge always ends in tokens.
    let mut single = [false; 256];
    for t in tokens.iter().flatten() {
        assert!(!t.is_empty(), "{name}: empty token");
        if t.len() == 1 {
            single[t[0] as usize] = true;
        }
    }
    assert!(single.iter().all(|&b| b), "{name}: a byte is not a token");

    let mut bytes = Vec::new();
    let mut offsets = Vec::with_capacity((tokens.len() + 1) * 4);
    for t in &tokens {
        offsets.extend_from_slice(&u32::try_from(bytes.len()).unwrap().to_le_bytes());
        if let Some(t) = t {
            bytes.extend_from_slice(t);
        }
    }
    offsets.extend_from_slice(&u32::try_from(bytes.len()).unwrap().to_le_bytes());

    let bits = (2 * n_tokens).next_power_of_two().trailing_zeros();
    let mask = (1usize << bits) - 1;
    let mut slots = vec![0u32; 1 << bits];
    let mut longest_probe = 0;
    for (rank, t) in tokens.iter().enumerate() {
        let Some(t) = t else { continue };
        let mut i = (token_hash(t) >> (64 - bits)) as usize;
        let mut probe = 0;
        while slots[i] != 0 {
            let other = &tokens[slots[i] as usize - 1];
            assert_ne!(other.as_deref(), Some(&t[..]), "{name}: duplicate token");
            i = (i + 1) & mask;
            probe += 1;
        }
        longest_probe = longest_probe.max(probe);
        slots[i] = rank as u32 + 1;
    }
    let slot_bytes: Vec<u8> = slots.iter().flat_map(|s| s.to_le_bytes()).collect();

    std::fs::write(out.join(format!("{name}.bytes")), &bytes).unwrap();
    std::fs::write(out.join(format!("{name}.offsets")), &offsets).unwrap();
    std::fs::write(out.join(format!("{name}.slots")), &slot_bytes).unwrap();
    // Probes stay short at this load (17 at most for both tables when written).
    assert!(
        longest_probe < 64,
        "{name}: hash clusters, longest probe {longest_probe}"
    );
}
