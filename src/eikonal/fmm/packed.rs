//! Fast marching for isotropic costs with each cell in one 64-bit word: the lay-out of the
//! cells (from costs, or from speeds in the march's own memory), the march and the copy-out.
//!
//! The same march as [`super::fmm`]'s isotropic path, operation for operation (the values are
//! bit-identical, tested there), on a different memory layout: one `u64` per padded cell that
//! holds what the march needs of the cell at the time.
//!
//! - An accepted cell (a source included) holds its value's bits: a finite `f64` >= 0.
//! - A cell that can never be accepted (impassable, border padding) holds `+inf`.
//! - A cell still to be accepted holds its unit cost's `f32` bits with the sign bit set in the
//!   high half (as an `f64` a negative number, so "not accepted" is one sign test) and its state
//!   in the low half: a heap position, or [`FAR`].
//!
//! A relaxation reads a neighbour's state and cost and the update reads the values of its
//! neighbours: on separate arrays that is three cache lines per cell touched, here one, with
//! eight cells to a line. On a large grid the front is accepted in key order, which jumps
//! around the grid, so most of those lines are misses; fewer bytes per cell is fewer misses
//! (and half the memory of the earlier 16-byte layout to fault in).
//!
//! An accepted cell's cost is gone, which the march never needs: the second-order stencil's
//! check that the face behind the upwind neighbour is passable always holds in an isotropic
//! march (a cell with an impassable cost is never reached, and a source as upwind neighbour
//! fails the stencil's `phi_2 > 0` test before the face is looked at).

use super::{Marched, PAD, step};
use crate::eikonal::heap::FAR;
use crate::eikonal::quadratic::{Upwind, solve_two_axes};
use crate::eikonal::scratch::Scratch;
use crate::eikonal::split_heap::SplitHeap;
use crate::eikonal::widest::with_widest_instructions;
use ndarray::Array2;

const INF: f64 = f64::INFINITY;

/// The sign bit: set in the word of a cell still to be accepted.
const OPEN: u64 = 1 << 63;

/// The march's state: the cells (see the module documentation) and the front.
pub(super) struct Packed<'a> {
    pub cells: &'a mut [u64],
    pub heap: SplitHeap,
    pub cell_size: f64,
    /// Padded row length.
    pub width: usize,
}

impl Packed<'_> {
    /// The accepted value of padded cell `n` (`+inf` when not accepted).
    #[inline(always)]
    fn phi(&self, n: usize) -> f64 {
        value(self.cells[n])
    }

    /// The step cost of leaving padded cell `n`, which is still to be accepted.
    #[inline(always)]
    fn step(&self, n: usize) -> f64 {
        let c = f32::from_bits((self.cells[n] >> 32) as u32 & !(1 << 31));
        self.cell_size * c as f64
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
        // phi_2 two cells upwind; the face between it and phi_1 is passable (see the module
        // documentation).
        let n2 = if forward { n + 2 * off } else { n - 2 * off };
        let p2 = self.phi(n2);
        if p2 <= m && p2 > 0.0 {
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
        let word = self.cells[n];
        if word & OPEN == 0 {
            return;
        }
        let state = word as u32;
        let value = self.update::<SECOND>(n);
        if value < INF {
            let slot: &mut [u32] = bytemuck::cast_slice_mut(self.cells);
            if state == FAR {
                self.heap.push(value, slot_index(n) as u32, slot);
            } else if value < self.heap.key_at(state) {
                self.heap.decrease(state, value, slot);
            }
        }
    }

    #[inline(always)]
    fn relax_neighbours<const SECOND: bool>(&mut self, i: usize) {
        let w = self.width;
        // The rows above and below are other cache lines, likely misses: load them all up
        // front so the misses overlap, rather than one after another as each relaxation gets
        // to them (3-6 % off a 2048² second-order march, ~1 % in first order; BENCHMARKS.md).
        let rows = self.cells[i + w] ^ self.cells[i - w] ^ self.cells[i + 2 * w] ^ self.cells[i - 2 * w];
        std::hint::black_box(rows);
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
    #[inline(always)]
    pub fn run<const SECOND: bool>(&mut self, sources: &[usize]) {
        for &i in sources {
            self.relax_neighbours::<SECOND>(i);
        }
        loop {
            let slot: &mut [u32] = bytemuck::cast_slice_mut(self.cells);
            let Some((value, slot_n)) = self.heap.pop(slot) else {
                break;
            };
            // Both `u32`s of a word index its cell.
            let n = slot_n as usize / 2;
            self.cells[n] = value.to_bits();
            self.relax_neighbours::<SECOND>(n);
        }
    }
}

/// The heap's `slot` index of padded cell `n`: the low `u32` of its word (the first of its two
/// `u32`s on a little-endian machine, the second on a big-endian one).
#[inline(always)]
fn slot_index(n: usize) -> usize {
    if cfg!(target_endian = "little") {
        2 * n
    } else {
        2 * n + 1
    }
}

/// The value a word stands for: an accepted value, or `+inf` (never accepted, or not yet).
#[inline(always)]
pub(super) fn value(word: u64) -> f64 {
    if word & OPEN == 0 {
        f64::from_bits(word)
    } else {
        INF
    }
}

/// The word of an accepted cell (a source: `0.0`) or of one never accepted (`+inf`).
#[inline(always)]
pub(super) fn fixed(value: f64) -> u64 {
    value.to_bits()
}

/// The word of a cell still to be accepted, with unit cost `c` (finite, > 0).
#[inline(always)]
pub(super) fn open(c: f32) -> u64 {
    OPEN | (u64::from(c.to_bits()) << 32) | u64::from(FAR)
}

/// The cells of a padded grid of `len` cells, all bits zero: the caller writes every cell
/// ([`fixed`], [`open`]), padding included.
pub(super) fn zeroed_cells(len: usize) -> Scratch<u64> {
    Scratch::zeroed(len)
}

/// Whether a grid of `rows x cols` cells fits the packed layout's 32-bit heap slots.
pub(crate) fn packed_fits(rows: usize, cols: usize) -> bool {
    let padded_len = (cols + 2 * PAD).saturating_mul(rows + 2 * PAD);
    padded_len < (u32::MAX as usize) / 4
}

/// The isotropic march on the packed layout ([`packed`]) up to its accepted cells (padded,
/// one word each; [`copy_out`] takes the values): the same values as [`Marcher`] with `ISO`
/// (tested), fewer cache lines per cell. `cost` holds one value per cell, which `unit_cost`
/// turns into the cell's unit cost (the identity for costs, `1 / speed` for speeds: the
/// conversion happens as the cells are packed, with no cost array in between).
pub(super) fn pack_and_march<T: Copy>(
    goal: &[bool],
    cost: &[T],
    unit_cost: impl Fn(T) -> f32,
    rows: usize,
    cols: usize,
    cell_size: f64,
    second: bool,
) -> Scratch<u64> {
    let padded_len = (cols + 2 * PAD) * (rows + 2 * PAD);
    let mut cells_buf = zeroed_cells(padded_len);
    let cells = cells_buf.as_mut_slice();
    let sources = lay_out_cells(cells, goal, rows, cols, cell_size, |_, i| unit_cost(cost[i]));
    march_cells(cells, &sources, rows, cols, cell_size, second);
    cells_buf
}

/// [`march_speed`] on speeds that sit at the front of the march's own `cells` (row-major, the
/// first `rows * cols` words as `f64`; `cells` holds the padded grid): the cells are laid out
/// over the speeds, and the values written back over the front of `cells` (as `f64` bits, row-
/// major) when the march is done, the same values as [`march_speed`] (tested). Returns the
/// number of unreachable cells. The grid must fit the packed layout ([`packed_fits`]).
///
/// # Panics
/// If `goal` does not hold `rows * cols` cells or `cells` not the padded grid's.
pub(crate) fn march_speed_over(
    cells: &mut [u64],
    goal: &[bool],
    unit_cost: impl Fn(f64) -> f32,
    rows: usize,
    cols: usize,
    cell_size: f64,
    second: bool,
) -> usize {
    debug_assert!(packed_fits(rows, cols));
    let sources = lay_out_cells(cells, goal, rows, cols, cell_size, |before, i| {
        unit_cost(f64::from_bits(before[i]))
    });
    march_cells(cells, &sources, rows, cols, cell_size, second);
    // Front to back: value `o` lands at or before the padded word it comes from, which is read
    // first, and every word still to be read lies after it.
    let width = cols + 2 * PAD;
    let mut unreachable = 0;
    for r in 0..rows {
        let row_base = (r + PAD) * width + PAD;
        for c in 0..cols {
            let v = value(cells[row_base + c]);
            unreachable += usize::from(v == INF);
            cells[r * cols + c] = v.to_bits();
        }
    }
    unreachable
}

/// Writes the packed words of a `rows x cols` grid, padding included, into `cells` (the padded
/// grid), and returns the sources' padded indices in row-major order. `unit_of(before, i)` is
/// the unit cost of cell `i` (row-major), `before` being the words of `cells` before the padded
/// words of `i`'s row. The rows are written from the last to the first, and cell
/// `i = r * cols + c` lands at padded index `(r + PAD) * width + PAD + c`, which is
/// `i + 2 * PAD * r + PAD * width + PAD`: after `i`, and after the whole of row `r`'s values
/// (`PAD * width > cols`). So every word written lies after every value still to be read, and
/// the cells may be laid out over per-cell values at the front of `cells` itself
/// ([`march_speed_over`]).
///
/// # Panics
/// If `goal` does not hold `rows * cols` cells or `cells` not the padded grid's.
fn lay_out_cells(
    cells: &mut [u64],
    goal: &[bool],
    rows: usize,
    cols: usize,
    cell_size: f64,
    unit_of: impl Fn(&[u64], usize) -> f32,
) -> Vec<usize> {
    let width = cols + 2 * PAD;
    assert_eq!(
        cells.len(),
        width * (rows + 2 * PAD),
        "cells hold the padded grid"
    );
    assert_eq!(goal.len(), rows * cols, "one goal flag per cell");
    let marching = cell_size > 0.0 && cell_size.is_finite();
    let padding = fixed(INF);
    // The bottom padding rows, then each row from the last (its right padding, its cells, its
    // left padding), then the top padding rows.
    cells[(rows + PAD) * width..].fill(padding);
    for r in (0..rows).rev() {
        let row_start = (r + PAD) * width;
        let row_base = row_start + PAD;
        let (before, row) = cells.split_at_mut(row_base);
        let (row, right) = row[..cols + PAD].split_at_mut(cols);
        right.fill(padding);
        let goal_row = &goal[r * cols..(r + 1) * cols];
        for (c, (word, &is_goal)) in row.iter_mut().zip(goal_row).enumerate() {
            let unit = unit_of(before, r * cols + c);
            let passable = marching & (step(cell_size, unit) < INF);
            let open = if passable { open(unit) } else { padding };
            *word = if is_goal { fixed(0.0) } else { open };
        }
        before[row_start..].fill(padding);
    }
    cells[..PAD * width].fill(padding);
    let mut sources = Vec::new();
    if cols > 0 {
        for (r, goal_row) in goal.chunks_exact(cols).enumerate() {
            if goal_row.contains(&true) {
                let row_base = (r + PAD) * width + PAD;
                sources.extend(
                    goal_row
                        .iter()
                        .enumerate()
                        .filter(|(_, g)| **g)
                        .map(|(c, _)| row_base + c),
                );
            }
        }
    }
    sources
}

/// Runs the packed march on cells laid out by [`lay_out_cells`].
fn march_cells(cells: &mut [u64], sources: &[usize], rows: usize, cols: usize, cell_size: f64, second: bool) {
    let mut marcher = Packed {
        cells,
        heap: SplitHeap::with_capacity(4 * (rows + cols)),
        cell_size,
        width: cols + 2 * PAD,
    };
    with_widest_instructions(
        #[inline(always)]
        || {
            if second {
                marcher.run::<true>(sources);
            } else {
                marcher.run::<false>(sources);
            }
        },
    );
}

/// The values of the packed march's `cells` (padded), written into `out` (cleared first; its
/// memory is reused where it has room: see [`march_speed_in_place`]).
pub(super) fn copy_out(cells: &[u64], rows: usize, cols: usize, mut out: Vec<f64>) -> Marched {
    let width = cols + 2 * PAD;
    out.clear();
    out.reserve(rows * cols);
    let mut unreachable = 0;
    for r in 0..rows {
        let row_base = (r + PAD) * width + PAD;
        out.extend(cells[row_base..row_base + cols].iter().map(|&w| {
            let v = value(w);
            unreachable += usize::from(v == INF);
            v
        }));
    }
    let phi = Array2::from_shape_vec((rows, cols), out).expect("rows * cols values");
    Marched { phi, unreachable }
}
