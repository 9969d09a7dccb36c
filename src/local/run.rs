//! The run helpers of the local layer's passes: how a pass's per-slot function is spread over
//! the backend's workers (one thread, or rayon), and the scatter that packs agents into their
//! slots. Results never depend on which worker ran a slot.

use super::LocalBackend;
#[cfg(test)]
use crate::neighbors::NeighborGrid;
#[cfg(test)]
use crate::vec2::V2;
use rayon::prelude::*;

/// Calls `visit(k)` for the packed index `k` of every agent in the 3x3 bins around `p`, in the
/// same order as [`NeighborGrid::for_each_near`] (the scalar scan the tests compare
/// [`scan::scan`] with).
#[cfg(test)]
pub(crate) fn for_each_near(grid: &NeighborGrid, p: V2, mut visit: impl FnMut(usize)) {
    let b = grid.bin_of(p.x, p.y);
    let (bx, by) = (b % grid.bins_x, b / grid.bins_x);
    let (x0, x1) = (bx.saturating_sub(1), (bx + 1).min(grid.bins_x - 1));
    for ny in by.saturating_sub(1)..=(by + 1).min(grid.bins_y - 1) {
        let row = (ny * grid.bins_x) as usize;
        // Bins x0..=x1 of one row are contiguous in the packed order.
        let start = grid.bin_start[row + x0 as usize] as usize;
        let end = grid.bin_start[row + x1 as usize + 1] as usize;
        for k in start..end {
            visit(k);
        }
    }
}

/// Writes `f(i)` to `out[slot_of[i]]` for every agent `i` (`slot_of` a permutation of
/// `out`'s indices): the agents' own columns are read front to back and each agent costs one
/// write, where a gather in packed order misses the cache once per column. On
/// [`LocalBackend::CpuMulti`] each thread owns a contiguous part of `out` and writes the agents
/// whose slots fall in it (every thread reads every `slot_of`, cheap next to the writes).
pub(super) fn scatter_to_slots<T: Send>(
    backend: LocalBackend,
    slot_of: &[u32],
    out: &mut [T],
    f: impl Fn(usize) -> T + Sync + Send,
) {
    let fill = |start: usize, part: &mut [T]| {
        let end = start + part.len();
        for (i, &k) in slot_of.iter().enumerate() {
            let k = k as usize;
            if (start..end).contains(&k) {
                part[k - start] = f(i);
            }
        }
    };
    if backend == LocalBackend::CpuMulti {
        let part = out.len().div_ceil(rayon::current_num_threads()).max(1);
        out.par_chunks_mut(part)
            .enumerate()
            .for_each(|(c, chunk)| fill(c * part, chunk));
    } else {
        fill(0, out);
    }
}

/// Runs `f(scratch, k)` for every slot `k` of `out` on the chosen backend. `init` makes one
/// scratch value per worker; results never depend on which worker ran a slot.
pub(super) fn for_each_slot<T: Send, S>(
    backend: LocalBackend,
    out: &mut [T],
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, usize) -> T + Sync + Send,
) {
    match backend {
        LocalBackend::CpuSingle | LocalBackend::Gpu => {
            let mut s = init();
            for (k, o) in out.iter_mut().enumerate() {
                *o = f(&mut s, k);
            }
        }
        LocalBackend::CpuMulti => {
            out.par_iter_mut()
                .enumerate()
                .for_each_init(init, |s, (k, o)| *o = f(s, k));
        }
    }
}

/// Runs `f(scratch, k0, block)` for every block of `B` slots of `out` (the last one shorter),
/// `k0` the block's first slot, on the chosen backend; as [`for_each_slot`], results never
/// depend on which worker ran a block.
pub(super) fn for_each_block<const B: usize, T: Send, S>(
    backend: LocalBackend,
    out: &mut [T],
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, usize, &mut [T]) + Sync + Send,
) {
    match backend {
        LocalBackend::CpuSingle | LocalBackend::Gpu => {
            let mut s = init();
            for (b, block) in out.chunks_mut(B).enumerate() {
                f(&mut s, b * B, block);
            }
        }
        LocalBackend::CpuMulti => {
            out.par_chunks_mut(B)
                .enumerate()
                .for_each_init(init, |s, (b, block)| f(s, b * B, block));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::*;

    #[test]
    fn scatter_to_slots_puts_each_agent_in_its_slot_on_every_backend() {
        // A permutation of 11 slots, split unevenly over 3 threads (parts of 4, 4 and 3).
        let slot_of: Vec<u32> = (0..11u32).map(|i| (i * 7 + 3) % 11).collect();
        let want: Vec<usize> = (0..11)
            .map(|k| slot_of.iter().position(|&s| s == k).unwrap())
            .collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for backend in [LocalBackend::CpuSingle, LocalBackend::CpuMulti] {
            let mut out = vec![usize::MAX; 11];
            pool.install(|| scatter_to_slots(backend, &slot_of, &mut out, |i| i));
            assert_eq!(out, want, "{backend:?}");
        }
    }
}
