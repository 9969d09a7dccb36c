//! Fast marching for isotropic costs with each cell's value, state and cost packed in 16 bytes.
//!
//! The same march as [`super::fmm`]'s isotropic path, operation for operation (the values are
//! bit-identical, tested there), on a different memory layout: per padded cell one pair of
//! `u64`, the value's bits, then the heap slot (low half) and the cost's bits (high half). A
//! relaxation reads a neighbour's state and cost, and the update reads the values of its
//! neighbours: on separate arrays that is three cache lines per cell touched, here one. On a
//! large grid the front is accepted in key order, which jumps around the grid, so most of
//! those lines are misses.

use super::heap::{FAR, FROZEN, IndexedHeap, SOURCE};
use super::quadratic::{Upwind, solve_two_axes};
use super::scratch::Scratch;

const INF: f64 = f64::INFINITY;

/// `u64`s per cell.
const WORDS: usize = 2;

/// The march's state: the packed cells (see the module documentation) and the front.
pub(super) struct Packed<'a> {
    pub cells: &'a mut [u64],
    pub heap: IndexedHeap,
    pub cell_size: f64,
    /// Padded row length.
    pub width: usize,
}

/// The heap's `slot` index of padded cell `n`: the low `u32` of its second word.
#[inline(always)]
fn slot_index(n: usize) -> usize {
    // Little-endian: the low half of word `2n + 1` is `u32` number `4n + 2`.
    WORDS * 2 * n + 2
}

impl Packed<'_> {
    /// The accepted value of padded cell `n` (`+inf` when not accepted).
    #[inline(always)]
    fn phi(&self, n: usize) -> f64 {
        f64::from_bits(self.cells[WORDS * n])
    }

    /// The state of padded cell `n`: a heap position, `FAR`, `SOURCE` or `FROZEN`.
    #[inline(always)]
    fn state(&self, n: usize) -> u32 {
        self.cells[WORDS * n + 1] as u32
    }

    /// The step cost of leaving padded cell `n` (`+inf` unless its unit cost is positive).
    #[inline(always)]
    fn step(&self, n: usize) -> f64 {
        let c = f32::from_bits((self.cells[WORDS * n + 1] >> 32) as u32);
        if c > 0.0 { self.cell_size * c as f64 } else { INF }
    }

    /// One axis's upwind pair (as `fmm::Marcher::axis` with one cost per cell).
    #[inline(always)]
    fn axis<const SECOND: bool>(&self, n: usize, off: usize) -> (Upwind, f64) {
        let s = self.step(n);
        let p_plus = self.phi(n + off);
        let p_minus = self.phi(n - off);
        let t_plus = p_plus + s;
        let t_minus = p_minus + s;
        let (m, total, forward) = if t_plus <= t_minus {
            (p_plus, t_plus, true)
        } else {
            (p_minus, t_minus, false)
        };
        let first = Upwind { m, s };
        if !SECOND || total == INF {
            return (first, total);
        }
        let (n1, n2) = if forward {
            (n + off, n + 2 * off)
        } else {
            (n - off, n - 2 * off)
        };
        let p2 = self.phi(n2);
        if p2 <= m && p2 > 0.0 && self.step(n1) < INF {
            return (
                Upwind {
                    m: ((4.0 * m - p2) / 3.0).max(m),
                    s: s * (2.0 / 3.0),
                },
                total,
            );
        }
        (first, total)
    }

    /// The update of the cell at padded `n` (as `fmm::Marcher::update`).
    #[inline(always)]
    fn update<const SECOND: bool>(&self, n: usize) -> f64 {
        let (x, tx) = self.axis::<SECOND>(n, 1);
        let (y, ty) = self.axis::<SECOND>(n, self.width);
        let one_axis = tx.min(ty);
        if tx == INF || ty == INF {
            if !SECOND || one_axis == INF {
                return one_axis;
            }
            let a = if tx == INF { y } else { x };
            return (a.m + a.s).min(one_axis);
        }
        solve_two_axes(x, y).min(one_axis)
    }

    #[inline(always)]
    fn relax<const SECOND: bool>(&mut self, n: usize) {
        let state = self.state(n);
        if state >= SOURCE {
            return;
        }
        let value = self.update::<SECOND>(n);
        if value < INF {
            let slot: &mut [u32] = bytemuck::cast_slice_mut(self.cells);
            if state == FAR {
                self.heap.push(value, slot_index(n) as u32, n as u32, slot);
            } else if value < self.heap.key_at(state) {
                self.heap.decrease(state, value, slot);
            }
        }
    }

    #[inline(always)]
    fn relax_neighbours<const SECOND: bool>(&mut self, i: usize) {
        let w = self.width;
        for n in [i + 1, i - 1, i + w, i - w] {
            self.relax::<SECOND>(n);
        }
        if SECOND {
            let v = self.phi(i);
            for o in [1, w] {
                if self.phi(i + o) == v {
                    self.relax::<SECOND>(i + 2 * o);
                }
                if self.phi(i - o) == v {
                    self.relax::<SECOND>(i - 2 * o);
                }
            }
        }
    }

    /// Accepts cells in increasing order until the heap is empty.
    pub fn run<const SECOND: bool>(&mut self, sources: &[usize]) {
        for &i in sources {
            self.relax_neighbours::<SECOND>(i);
        }
        loop {
            let slot: &mut [u32] = bytemuck::cast_slice_mut(self.cells);
            let Some((value, _, n)) = self.heap.pop(slot) else {
                break;
            };
            let i = n as usize;
            self.cells[WORDS * i] = value.to_bits();
            let word = &mut self.cells[WORDS * i + 1];
            *word = (*word & !u64::from(u32::MAX)) | u64::from(FROZEN);
            self.relax_neighbours::<SECOND>(i);
        }
    }
}

/// Packs one padded cell: `value`, `state`, unit cost `c`.
#[inline(always)]
pub(super) fn pack(value: f64, state: u32, c: f32) -> [u64; WORDS] {
    [value.to_bits(), u64::from(state) | (u64::from(c.to_bits()) << 32)]
}

/// The packed cells of a padded grid of `len` cells, all bits zero: the caller writes every
/// cell (`pack`), padding included.
pub(super) fn zeroed_cells(len: usize) -> Scratch<u64> {
    Scratch::zeroed(len * WORDS)
}
