//! The marches compiled for the widest instruction set the processor has.
//!
//! A march is one long loop of loads, compares and a few floating-point operations, inlined
//! into [`with_widest_instructions`]'s closure. On x86-64 processors with AVX2, BMI and FMA
//! (x86-64-v3, every x86-64 processor since about 2015) the closure runs compiled for those
//! features: three-operand instructions and wider vectors, about a sixth fewer instructions per
//! cell (BENCHMARKS.md). Elsewhere it runs as compiled for the target. Both do the same
//! arithmetic in the same order (Rust never fuses a multiply and an add by itself), so they give
//! the same bits; the tests hold both builds to the same values.

/// Runs `march` compiled for x86-64-v3 where the processor has it (and the calling test does
/// not ask for the baseline), else as compiled for the target.
#[inline(always)]
pub(super) fn with_widest_instructions<R>(march: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if has_x86_64_v3() {
        // SAFETY: the processor has every feature the function is compiled for.
        return unsafe { on_x86_64_v3(march) };
    }
    march()
}

/// Whether the processor has the features of [`on_x86_64_v3`] (detected once, then cached by
/// the standard library), and no test on this thread asks for the baseline.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn has_x86_64_v3() -> bool {
    !tests::baseline_only()
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("lzcnt")
        && std::arch::is_x86_feature_detected!("popcnt")
}

/// `march`, inlined here and compiled for x86-64-v3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,bmi1,bmi2,fma,lzcnt,popcnt")]
fn on_x86_64_v3<R>(march: impl FnOnce() -> R) -> R {
    march()
}

#[cfg(test)]
pub(super) mod tests {
    use std::cell::Cell;

    thread_local! {
        static BASELINE_ONLY: Cell<bool> = const { Cell::new(false) };
    }

    /// Runs `f` with this thread's marches compiled for the target's baseline.
    pub fn on_the_baseline<R>(f: impl FnOnce() -> R) -> R {
        BASELINE_ONLY.with(|b| b.set(true));
        let out = f();
        BASELINE_ONLY.with(|b| b.set(false));
        out
    }

    /// Whether this thread's test asks for the baseline build.
    pub(super) fn baseline_only() -> bool {
        BASELINE_ONLY.with(|b| b.get())
    }
}

#[cfg(not(test))]
mod tests {
    /// Outside the tests, never.
    #[inline(always)]
    pub(super) fn baseline_only() -> bool {
        false
    }
}
