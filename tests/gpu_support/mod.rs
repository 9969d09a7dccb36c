//! Shared helper of the GPU tests: one context per test binary, or a reason to skip.
//!
//! With `CROWDFIELD_REQUIRE_GPU=1` a missing adapter FAILS the test (CI on lavapipe sets it);
//! without it the test prints why and skips.

use crowdfield::gpu::GpuContext;
use std::sync::OnceLock;

static CONTEXT: OnceLock<Result<GpuContext, String>> = OnceLock::new();

/// The shared context, or `None` (after printing why) when there is no adapter and a GPU is
/// not required. Panics when `CROWDFIELD_REQUIRE_GPU=1` and no adapter opens.
pub fn gpu() -> Option<&'static GpuContext> {
    let ctx = CONTEXT.get_or_init(|| GpuContext::new().map_err(|e| e.to_string()));
    match ctx {
        Ok(c) => Some(c),
        Err(e) => {
            if std::env::var("CROWDFIELD_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("CROWDFIELD_REQUIRE_GPU=1 but no GPU context: {e}");
            }
            eprintln!("skipping GPU test: {e} (set CROWDFIELD_REQUIRE_GPU=1 to make this a failure)");
            None
        }
    }
}

/// A deterministic pseudo-random generator for test inputs (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    /// Next value in `[0, 1)`.
    pub fn next_f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 40) as f32 / (1u64 << 24) as f32
    }
}
