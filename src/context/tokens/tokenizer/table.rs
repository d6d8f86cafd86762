//! The static BPE tables written by `build.rs`, and the merge that counts a piece's tokens.
//!
//! A table is three byte arrays embedded with `include_bytes!`: the tokens' bytes by rank, their
//! `u32` offsets, and an open-addressing hash table of `u32` slots (`rank + 1`, 0 = empty) placed
//! by [`token_hash`] (one source file shared with `build.rs`) with linear probing. Numbers are
//! read with `u32::from_le_bytes`, so nothing is assumed about alignment and nothing is built at
//! load: a lookup touches a few cache lines of the mapped binary.
//!
//! The merge is tiktoken's (`byte_pair_encode` in tiktoken-rs): repeatedly merge the adjacent
//! pair whose concatenation is the lowest-ranked token, the leftmost on a tie, until no adjacent
//! pair is a token. Pieces shorter than [`LARGE_PIECE`] bytes use tiktoken's linear scan; longer
//! ones its heap, so a long run of one letter costs O(n log n), not O(n²). Only the number of
//! parts is kept.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

include!("token_hash.rs");

/// One encoding's static tables.
pub(super) struct Table {
    bytes: &'static [u8],
    offsets: &'static [u8],
    slots: &'static [u8],
    /// `64 - log2(number of slots)`: a hash's slot is `hash >> shift`.
    shift: u32,
    mask: usize,
}

impl Table {
    const fn new(bytes: &'static [u8], offsets: &'static [u8], slots: &'static [u8]) -> Table {
        let n = slots.len() / 4;
        assert!(n.is_power_of_two() && n > 1);
        Table {
            bytes,
            offsets,
            slots,
            shift: 64 - n.trailing_zeros(),
            mask: n - 1,
        }
    }

    /// The rank of the token whose bytes are `piece`, if there is one.
    #[inline]
    pub(super) fn rank(&self, piece: &[u8]) -> Option<u32> {
        let mut i = (token_hash(piece) >> self.shift) as usize;
        loop {
            let slot = read_u32(self.slots, i)?;
            let rank = slot.checked_sub(1)?;
            let start = read_u32(self.offsets, rank as usize)? as usize;
            let end = read_u32(self.offsets, rank as usize + 1)? as usize;
            if end.wrapping_sub(start) == piece.len() && self.bytes.get(start..end) == Some(piece) {
                return Some(rank);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Rank of `piece` as a token, or `u32::MAX` when it is not one (tiktoken's `Rank::MAX`).
    #[inline]
    fn rank_or_max(&self, piece: &[u8]) -> u32 {
        self.rank(piece).unwrap_or(u32::MAX)
    }

    /// Number of tokens `piece` (one pretokenized piece) encodes to.
    pub(super) fn count_piece(&self, piece: &[u8]) -> usize {
        if piece.is_empty() {
            return 0;
        }
        // Also every single byte: the build checks that each is a token.
        if self.rank(piece).is_some() {
            return 1;
        }
        if piece.len() < LARGE_PIECE {
            self.merge_small(piece)
        } else {
            self.merge_large(piece)
        }
    }

    /// tiktoken's `_byte_pair_merge`: `parts` holds (start, rank of the pair starting there);
    /// the lowest rank is merged by removing the next part, O(parts) per merge.
    fn merge_small(&self, piece: &[u8]) -> usize {
        let mut parts = [(0usize, u32::MAX); LARGE_PIECE + 1];
        let mut n = 0;
        for i in 0..piece.len() - 1 {
            parts[n] = (i, self.rank_or_max(&piece[i..i + 2]));
            n += 1;
        }
        parts[n] = (piece.len() - 1, u32::MAX);
        parts[n + 1] = (piece.len(), u32::MAX);
        n += 2;

        // Rank of the pair starting at part `i` once part `i + 1` is gone.
        let pair_rank = |parts: &[(usize, u32)], n: usize, i: usize| {
            if i + 3 < n {
                self.rank_or_max(&piece[parts[i].0..parts[i + 3].0])
            } else {
                u32::MAX
            }
        };
        loop {
            let mut min = (u32::MAX, 0);
            for (i, &(_, rank)) in parts[..n - 1].iter().enumerate() {
                if rank < min.0 {
                    min = (rank, i);
                }
            }
            if min.0 == u32::MAX {
                break;
            }
            let i = min.1;
            if i > 0 {
                parts[i - 1].1 = pair_rank(&parts, n, i - 1);
            }
            parts[i].1 = pair_rank(&parts, n, i);
            parts.copy_within(i + 2..n, i + 1);
            n -= 1;
        }
        n - 1
    }

    /// tiktoken's `_byte_pair_merge_large`: candidate merges in a min-heap by (rank, start),
    /// stale entries skipped; parts are a linked list over the piece's byte positions.
    fn merge_large(&self, piece: &[u8]) -> usize {
        struct State {
            prev: usize,
            end: usize,
            next_end: usize,
            next_rank: u32,
        }
        let len = piece.len();
        let mut state: Vec<State> = (0..len)
            .map(|i| State {
                prev: i.wrapping_sub(1),
                end: i + 1,
                next_end: i + 2,
                next_rank: u32::MAX,
            })
            .collect();
        let mut heap = BinaryHeap::with_capacity(len);
        for i in 0..len - 1 {
            let rank = self.rank_or_max(&piece[i..i + 2]);
            if rank != u32::MAX {
                heap.push(Reverse((rank, i)));
                state[i].next_rank = rank;
            }
        }
        let potential_merge =
            |state: &mut [State], heap: &mut BinaryHeap<_>, start: usize, next_end: usize| {
                state[start].next_end = next_end;
                state[start].next_rank = u32::MAX;
                if next_end <= len {
                    let rank = self.rank_or_max(&piece[start..next_end]);
                    if rank != u32::MAX {
                        heap.push(Reverse((rank, start)));
                        state[start].next_rank = rank;
                    }
                }
            };
        let mut parts = len;
        while let Some(Reverse((rank, left_start))) = heap.pop() {
            if rank != state[left_start].next_rank {
                continue; // invalidated by an earlier merge
            }
            let right_start = state[left_start].end;
            let right_end = state[left_start].next_end;
            let right_next_end = state[right_start].next_end;
            state[left_start].end = right_end;
            potential_merge(&mut state, &mut heap, left_start, right_next_end);
            if right_end < len {
                state[right_end].prev = left_start;
            }
            if left_start > 0 {
                let prev_start = state[left_start].prev;
                potential_merge(&mut state, &mut heap, prev_start, right_end);
            }
            state[right_start].next_rank = u32::MAX;
            parts -= 1;
        }
        parts
    }
}

/// Pieces this long or longer are merged with the heap (tiktoken's threshold).
const LARGE_PIECE: usize = 100;

/// The `i`th little-endian `u32` of `data`, if it has one.
#[inline]
fn read_u32(data: &[u8], i: usize) -> Option<u32> {
    let b = data.get(i * 4..i * 4 + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

macro_rules! table {
    ($name:literal) => {
        Table::new(
            include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".bytes")),
            include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".offsets")),
            include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".slots")),
        )
    };
}

/// OpenAI's `o200k_base`.
pub(super) static O200K: Table = table!("o200k");
/// OpenAI's `cl100k_base`.
pub(super) static CL100K: Table = table!("cl100k");
