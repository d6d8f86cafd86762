//! Where the unknown-token scan (`tokens::detect_bare`) has to look: the stretches of a text
//! made of word bytes (letters, digits, `_ - . ~ + /`) that are long enough to hold a token and
//! hold a byte that is neither a hex digit nor one of `_ - . ~`. A word of a token's length
//! lies inside such a stretch, so the scan reads only those (on ordinary output, a few paths
//! and ids a line) instead of every byte.
//!
//! The bytes are classified 64 at a time into two bit masks (word bytes, non-hex word bytes):
//! with SSE2 on x86_64 (part of its baseline, so no detection at run time), by a table
//! elsewhere; the stretches are then read from the masks a run of bits at a time.

use std::ops::Range;

/// The bit masks of up to 64 bytes: bit `i` of `.0` is set when byte `i` is a word byte, of
/// `.1` when it is a word byte but neither a hex digit nor one of `_ - . ~`.
type Masks = (u64, u64);

/// Calls `f` with each maximal stretch of word bytes of `text` that is `min` bytes or longer
/// (`1..=64`) and holds a non-hex word byte, in order.
#[inline]
pub(super) fn long_stretches(text: &[u8], min: usize, mut f: impl FnMut(Range<usize>)) {
    debug_assert!((1..=64).contains(&min));
    // The masks of every block of 64 bytes: on the stack for a line of ordinary length.
    let blocks = text.len().div_ceil(64);
    let mut stack = [(0u64, 0u64); 8];
    let mut heap = Vec::new();
    let masks: &mut [Masks] = if blocks <= stack.len() {
        &mut stack[..blocks]
    } else {
        heap.resize(blocks, (0, 0));
        &mut heap
    };
    for (k, m) in masks.iter_mut().enumerate() {
        *m = classify(&text[64 * k..text.len().min(64 * k + 64)]);
    }
    let word = |k: usize| masks.get(k).map_or(0, |m| m.0);
    // Where the last stretch read ended: a stretch starts at or after it.
    let mut done = 0;
    for k in 0..blocks {
        // Bit `i`: the `min` bytes from byte `64 k + i` on are word bytes (doubling the run
        // each step, then the rest of `min`).
        let pair = (u128::from(word(k + 1)) << 64) | u128::from(word(k));
        let mut long = pair;
        let mut have = 1;
        while have * 2 <= min {
            long &= long >> have;
            have *= 2;
        }
        if have < min {
            long &= long >> (min - have);
        }
        let mut starts = long as u64;
        let base = 64 * k;
        if done > base {
            starts &= u64::MAX.checked_shl((done - base) as u32).unwrap_or(0);
        }
        while starts != 0 {
            // The first such byte after the last stretch starts a stretch (the byte before it is
            // no word byte, or it would start there).
            let start = base + starts.trailing_zeros() as usize;
            let end = stretch_end(masks, start);
            if not_hex(masks, start..end) {
                f(start..end);
            }
            done = end;
            if end - base >= 64 {
                break;
            }
            starts &= u64::MAX << (end - base);
        }
    }
}

/// Where the stretch of word bytes from `start` ends.
fn stretch_end(masks: &[Masks], start: usize) -> usize {
    let (mut k, mut bit) = (start / 64, start % 64);
    while k < masks.len() {
        let ones = (!(masks[k].0 >> bit)).trailing_zeros() as usize;
        if bit + ones < 64 {
            return 64 * k + bit + ones;
        }
        k += 1;
        bit = 0;
    }
    64 * masks.len()
}

/// Whether a byte of `range` is a non-hex word byte.
fn not_hex(masks: &[Masks], range: Range<usize>) -> bool {
    let mut at = range.start;
    while at < range.end {
        let (k, bit) = (at / 64, at % 64);
        let n = (range.end - at).min(64 - bit);
        let span = if n == 64 {
            u64::MAX
        } else {
            ((1u64 << n) - 1) << bit
        };
        if masks[k].1 & span != 0 {
            return true;
        }
        at += n;
    }
    false
}

/// The masks of `bytes` (at most 64; bits past its end are clear).
fn classify(bytes: &[u8]) -> Masks {
    debug_assert!(bytes.len() <= 64);
    #[cfg(target_arch = "x86_64")]
    {
        sse2::classify(bytes)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        classify_bytes(bytes)
    }
}

/// [`classify`] a byte at a time, by the scan's table.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_bytes(bytes: &[u8]) -> Masks {
    use super::tokens::{IN_WORD, NOT_HEXISH, WORD};
    let (mut word, mut nh) = (0u64, 0u64);
    for (i, &c) in bytes.iter().enumerate() {
        let class = WORD[usize::from(c)];
        word |= u64::from(class & IN_WORD != 0) << i;
        nh |= u64::from(class & NOT_HEXISH != 0) << i;
    }
    (word, nh)
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::Masks;
    use std::arch::x86_64::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_sub_epi8,
    };

    /// [`super::classify`], 16 bytes at a time.
    pub(super) fn classify(bytes: &[u8]) -> Masks {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { classify64(bytes) }
    }

    #[target_feature(enable = "sse2")]
    fn classify64(bytes: &[u8]) -> Masks {
        let (mut word, mut nh) = (0u64, 0u64);
        let mut chunks = bytes.chunks_exact(16);
        let mut k = 0;
        for chunk in &mut chunks {
            // SAFETY: `chunk` is 16 readable bytes, and `_mm_loadu_si128` reads them unaligned.
            let v = unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) };
            let (w, n) = classify16(v);
            word |= u64::from(w) << (16 * k);
            nh |= u64::from(n) << (16 * k);
            k += 1;
        }
        let rest = chunks.remainder().len();
        if rest > 0 {
            // The last 16 bytes of `bytes` when there are that many (their first bits, already
            // read, shifted out), or the rest copied after zeros, which are no word bytes.
            let (w, n) = if bytes.len() >= 16 {
                let last = &bytes[bytes.len() - 16..];
                // SAFETY: as above.
                classify16(unsafe { _mm_loadu_si128(last.as_ptr().cast()) })
            } else {
                let mut last = [0u8; 16];
                last[16 - rest..].copy_from_slice(chunks.remainder());
                // SAFETY: as above.
                classify16(unsafe { _mm_loadu_si128(last.as_ptr().cast()) })
            };
            word |= u64::from(w >> (16 - rest)) << (16 * k);
            nh |= u64::from(n >> (16 - rest)) << (16 * k);
        }
        (word, nh)
    }

    /// Bytes of `v` in `lo..=hi` (unsigned), as 0xff.
    #[target_feature(enable = "sse2")]
    fn in_range(v: __m128i, lo: u8, hi: u8) -> __m128i {
        // `v - lo` is in `0..=hi-lo` exactly when `v` is in range; shifted by 128, that is a
        // signed comparison.
        let shifted = _mm_sub_epi8(v, _mm_set1_epi8(lo.wrapping_add(128) as i8));
        _mm_cmplt_epi8(shifted, _mm_set1_epi8((i32::from(hi - lo) + 1 - 128) as i8))
    }

    #[target_feature(enable = "sse2")]
    fn eq(v: __m128i, c: u8) -> __m128i {
        _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8))
    }

    /// The masks of 16 bytes.
    #[target_feature(enable = "sse2")]
    fn classify16(v: __m128i) -> (u16, u16) {
        // Upper-case letters to lower case (and nothing else into a-z).
        let lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
        let alpha = in_range(lower, b'a', b'z');
        let digit = in_range(v, b'0', b'9');
        let hex_alpha = in_range(lower, b'a', b'f');
        let seps = _mm_or_si128(
            _mm_or_si128(eq(v, b'_'), eq(v, b'-')),
            _mm_or_si128(eq(v, b'.'), eq(v, b'~')),
        );
        let b64 = _mm_or_si128(eq(v, b'+'), eq(v, b'/'));
        let word = _mm_or_si128(_mm_or_si128(alpha, digit), _mm_or_si128(seps, b64));
        let not_hex = _mm_or_si128(_mm_andnot_si128(hex_alpha, alpha), b64);
        (
            _mm_movemask_epi8(word) as u16,
            _mm_movemask_epi8(not_hex) as u16,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every stretch the way the scan's table reads them, a byte at a time.
    fn slow(text: &[u8], min: usize) -> Vec<Range<usize>> {
        use super::super::tokens::{IN_WORD, NOT_HEXISH, WORD};
        let mut out = Vec::new();
        let mut i = 0;
        while i < text.len() {
            if WORD[usize::from(text[i])] & IN_WORD == 0 {
                i += 1;
                continue;
            }
            let start = i;
            let mut nh = false;
            while i < text.len() && WORD[usize::from(text[i])] & IN_WORD != 0 {
                nh |= WORD[usize::from(text[i])] & NOT_HEXISH != 0;
                i += 1;
            }
            if i - start >= min && nh {
                out.push(start..i);
            }
        }
        out
    }

    fn fast(text: &[u8], min: usize) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        long_stretches(text, min, |r| out.push(r));
        out
    }

    #[test]
    fn every_byte_is_classified_as_the_table_says() {
        let all: Vec<u8> = (0..=255u8).collect();
        for chunk in all.chunks(64) {
            assert_eq!(classify(chunk), classify_bytes(chunk), "{chunk:?}");
            // And every length, for the last bytes of a text (read with the ones before).
            for len in 0..=64 {
                let part = &chunk[..len];
                assert_eq!(classify(part), classify_bytes(part), "{part:?}");
            }
        }
    }

    #[test]
    fn stretches_are_the_byte_loops_across_blocks_and_at_the_ends() {
        let mut texts: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"commit 0123456789abcdef0123456789abcdef01234567".to_vec(),
            b"   Compiling tracing-subscriber v1.2.3 (/home/dev/src/tracing-subscriber)".to_vec(),
            b"x".repeat(64),
            b"x".repeat(200),
            [b"a ".repeat(31), b"g".repeat(40)].concat(),
            [b"0".repeat(63), b"g".to_vec(), b"0".repeat(100)].concat(),
        ];
        // Random texts over a small alphabet, so that stretches of every length occur.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for n in 0..400 {
            let mut t = Vec::new();
            for _ in 0..n {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                t.push(b"a0g/ -=\xc3Z~"[(seed % 10) as usize]);
            }
            texts.push(t);
        }
        for t in &texts {
            for min in [1, 2, 3, 20, 63, 64] {
                assert_eq!(
                    fast(t, min),
                    slow(t, min),
                    "{min} {:?}",
                    String::from_utf8_lossy(t)
                );
            }
        }
    }
}
