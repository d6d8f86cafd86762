// The hash that places a token's bytes in the static BPE tables.
//
// Shared, with `include!`, by `build.rs` (which writes the tables) and by
// `src/context/tokens/tokenizer/table.rs` (which reads them), so both compute the same slot for the same
// bytes. Changing it rebuilds the tables (`build.rs` reruns when this file changes).
//
// Eight bytes at a time, each word xor-ed into a rotated state and multiplied by an odd constant
// (FxHash's step); the length is the seed, so a token and the same token padded with zero bytes
// differ. Slots are taken from the high bits, which the last multiply mixes best.

/// Hash of a token's bytes; the table slot is its top `bits` bits.
#[inline]
fn token_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(26) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(26) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    // One more round so short tokens (a single word) still spread over the high bits.
    (h ^ (h >> 32)).wrapping_mul(K)
}
