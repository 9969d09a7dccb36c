//! The unit tests' random numbers: a xorshift64 generator (fixed seeds, so every run draws the
//! same cases). Compiled for tests only.

/// Whole numbers below the argument, from a xorshift64 sequence started at `seed` (non-zero).
pub(crate) fn below(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    }
}

/// Numbers in `[0, 1)` with 24 bits, from a xorshift64 sequence started at `seed` (non-zero).
pub(crate) fn unit(mut seed: u64) -> impl FnMut() -> f32 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32
    }
}
