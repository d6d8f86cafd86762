//! Shared by the benches: deterministic generators for realistic terminal output.

/// Small deterministic PRNG (xorshift), drawn once per line, never per byte, so
/// every run generates the same bytes.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Crate names for compiler-like output.
pub const CRATES: [&str; 10] = [
    "serde",
    "tokio",
    "regex-syntax",
    "proc-macro2",
    "clap_builder",
    "hyper",
    "libc",
    "unicode-width",
    "rustls",
    "tracing-subscriber",
];
