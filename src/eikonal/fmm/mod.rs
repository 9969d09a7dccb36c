//! CPU fast marching (SPEC §4): Dijkstra order over an indexed heap, upwind quadratic update,
//! optional second-order stencil.
//!
//! Layout, chosen for a tight inner loop: `phi` and the heap-slot/state array live on a grid
//! padded by [`PAD`] cells on every side, so the four neighbours and the second-order
//! neighbours two cells away are always in bounds. Padding cells are `+inf` and `FROZEN`: they
//! are never updated and never upwind. `phi` holds accepted values only (`+inf` otherwise); the
//! tentative values live in the heap, so reading an upwind neighbour is one load with no state
//! test. The cost array is read in place (row-major `(rows, cols, 4)`).
//!
//! Isotropic costs (one value per cell: speed maps, the `eikonal` command) march on the packed
//! layout of [`packed`] instead, a cell in one 64-bit word (its value once accepted, its cost
//! and state before): the same operations in the same order, so the same values bit for bit
//! (tested against the general path), with eight cells to a cache line where the separate
//! arrays hold one to two (BENCHMARKS.md has the figures).

mod packed;

use super::heap::{FAR, FROZEN, IndexedHeap, SOURCE};
use super::quadratic::{Upwind, solve_two_axes};
use super::scratch::Scratch;
use super::widest::with_widest_instructions;
use crate::grid::Dir;
use ndarray::{Array2, ArrayView2, ArrayView3, Axis};
use packed::{copy_out, pack_and_march};

pub(crate) use packed::{march_speed_over, packed_fits};

/// Padding around the grid: two cells, so that the second-order stencil's `phi_2` (two cells
/// upwind) is always in bounds.
pub(super) const PAD: usize = 2;

const INF: f64 = f64::INFINITY;

/// What a march returns: the potential (unpadded) and the number of cells left at `+inf`.
pub(crate) struct Marched {
    pub phi: Array2<f64>,
    pub unreachable: usize,
}

/// The step cost `cell_size * C` of a face, `+inf` unless `C` is finite and positive (NaN fails
/// the comparison).
#[inline(always)]
fn step(cell_size: f64, c: f32) -> f64 {
    if c > 0.0 { cell_size * c as f64 } else { INF }
}

/// The state of one march.
struct Marcher<'a> {
    /// Accepted values on the padded grid, `+inf` elsewhere.
    phi: &'a mut [f64],
    /// Per padded cell: heap position, or `FAR`, `SOURCE`, `FROZEN`.
    slot: &'a mut [u32],
    heap: IndexedHeap,
    /// Unit costs: row-major `(rows, cols, 4)`, or one per cell when the march is isotropic
    /// (the `ISO` parameter of the methods).
    cost: &'a [f32],
    cell_size: f64,
    cols: usize,
    /// Padded row length.
    width: usize,
    /// With an early stop: per padded cell, whether its value is needed.
    needed: Vec<bool>,
    /// With an early stop: needed cells not accepted yet (the march ends when none are left).
    needed_left: usize,
}

impl Marcher<'_> {
    /// The unit cost of the face of unpadded cell `u` in direction `d`.
    #[inline(always)]
    fn face<const ISO: bool>(&self, u: usize, d: Dir) -> f32 {
        if ISO {
            self.cost[u]
        } else {
            self.cost[u * 4 + d.index()]
        }
    }

    /// One axis's upwind contribution for the cell at padded `n` / unpadded `u`: the cheaper of
    /// the neighbours at `+off` (direction `plus`) and `-off` (direction `minus`). Returns the
    /// first-order pair, the total `m + s` (`+inf` when neither side is usable), and, for the
    /// second-order option, the effective pair where the stencil applies.
    #[inline(always)]
    fn axis<const SECOND: bool, const ISO: bool>(
        &self,
        n: usize,
        u: usize,
        off: usize,
        uoff: usize,
        plus: Dir,
        minus: Dir,
    ) -> (Upwind, f64) {
        let s_plus = step(self.cell_size, self.face::<ISO>(u, plus));
        let s_minus = step(self.cell_size, self.face::<ISO>(u, minus));
        let p_plus = self.phi[n + off];
        let p_minus = self.phi[n - off];
        let t_plus = p_plus + s_plus;
        let t_minus = p_minus + s_minus;
        let (m, s, total, forward) = if t_plus <= t_minus {
            (p_plus, s_plus, t_plus, true)
        } else {
            (p_minus, s_minus, t_minus, false)
        };
        let first = Upwind { m, s };
        if !SECOND || total == INF {
            return (first, total);
        }
        // Second order: phi_1 = m at M1, phi_2 two cells upwind, both accepted, monotone
        // (phi_2 <= phi_1), neither a source, and the face M1 -> M2 passable.
        let (n2, u1, dir) = if forward {
            (n + 2 * off, u + uoff, plus)
        } else {
            (n - 2 * off, u.wrapping_sub(uoff), minus)
        };
        let p2 = self.phi[n2];
        // A source is the only accepted cell at exactly 0 (every step is positive, so any other
        // accepted value is too): `p2 > 0` with `p2 <= m` rules out both being sources without
        // reading their state.
        if p2 <= m && p2 > 0.0 {
            let face = self.face::<ISO>(u1, dir);
            if step(self.cell_size, face) < INF {
                return (
                    Upwind {
                        // >= phi_1 in exact arithmetic (phi_2 <= phi_1); `max` keeps it so
                        // when rounding at large magnitudes would not.
                        m: ((4.0 * m - p2) / 3.0).max(m),
                        s: s * (2.0 / 3.0),
                    },
                    total,
                );
            }
        }
        (first, total)
    }

    /// The update of SPEC §4 for the cell at padded `n` / unpadded `u`, from accepted
    /// neighbours only; `+inf` when no neighbour can be reached through a passable face.
    #[inline(always)]
    fn update<const SECOND: bool, const ISO: bool>(&self, n: usize, u: usize) -> f64 {
        let (x, tx) = self.axis::<SECOND, ISO>(n, u, 1, 1, Dir::E, Dir::W);
        let (y, ty) = self.axis::<SECOND, ISO>(n, u, self.width, self.cols, Dir::N, Dir::S);
        // The first-order one-axis value bounds the result from above in both orders: phi never
        // exceeds the cost of one step to an accepted neighbour.
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

    /// Updates the four neighbours of the accepted (or source) cell at padded index `i`,
    /// unpadded index `u`.
    #[inline(always)]
    fn relax_neighbours<const SECOND: bool, const ISO: bool>(&mut self, i: usize, u: usize) {
        let w = self.width;
        let cols = self.cols;
        for (n, un) in [
            (i + 1, u + 1),
            (i - 1, u.wrapping_sub(1)),
            (i + w, u + cols),
            (i - w, u.wrapping_sub(cols)),
        ] {
            self.relax::<SECOND, ISO>(n, un);
        }
        if SECOND {
            // A cell two steps away uses this one as its `phi_2`. That only changes its update
            // when the cell between was accepted before this one with the same value (a tie):
            // otherwise `phi_2 <= phi_1` means this one came first. Relax it then, or a
            // second-order value would appear after larger values had been accepted.
            let v = self.phi[i];
            for (o, uo) in [(1, 1), (w, cols)] {
                if self.phi[i + o] == v {
                    self.relax::<SECOND, ISO>(i + 2 * o, u.wrapping_add(2 * uo));
                }
                if self.phi[i - o] == v {
                    self.relax::<SECOND, ISO>(i - 2 * o, u.wrapping_sub(2 * uo));
                }
            }
        }
    }

    /// Recomputes the cell at padded `n` / unpadded `un` unless it is accepted, and pushes or
    /// lowers its heap entry.
    #[inline(always)]
    fn relax<const SECOND: bool, const ISO: bool>(&mut self, n: usize, un: usize) {
        let state = self.slot[n];
        if state >= SOURCE {
            return;
        }
        let value = self.update::<SECOND, ISO>(n, un);
        if value < INF {
            if state == FAR {
                self.heap.push(value, n as u32, un as u32, self.slot);
            } else if value < self.heap.key_at(state) {
                self.heap.decrease(state, value, self.slot);
            }
        }
    }

    /// Accepts cells in increasing order until the heap is empty or, with `STOP`, until every
    /// needed cell is accepted.
    #[inline(always)]
    fn run<const SECOND: bool, const ISO: bool, const STOP: bool>(&mut self, sources: &[(usize, usize)]) {
        if STOP && self.needed_left == 0 {
            return;
        }
        for &(i, u) in sources {
            self.relax_neighbours::<SECOND, ISO>(i, u);
        }
        while let Some((value, cell, unpadded)) = self.heap.pop(self.slot) {
            let i = cell as usize;
            self.phi[i] = value;
            self.slot[i] = FROZEN;
            if STOP && self.needed[i] {
                self.needed_left -= 1;
                if self.needed_left == 0 {
                    // Every value accepted from here on would be at least `value`: none of
                    // them can change an accepted cell (see `march_near`).
                    return;
                }
            }
            self.relax_neighbours::<SECOND, ISO>(i, unpadded as usize);
        }
    }
}

/// Fast marching on `cost` (shape `(rows, cols, 4)`) from the cells where `goal` is true.
///
/// # Panics
/// If `goal`'s shape is not `cost`'s first two axes, or the padded grid has `u32::MAX - 2` cells
/// or more.
pub(crate) fn march(cost: ArrayView3<f32>, goal: ArrayView2<bool>, cell_size: f64, second: bool) -> Marched {
    march_with(cost, goal, cell_size, second, true, None)
}

/// [`march`] on the isotropic cost `unit_cost(speed)` of each cell, converted as the cells are
/// packed: the values of `march(isotropic(cost), ..)` bit for bit, without the cost array.
/// Grids too large for the packed layout convert and march as [`march`].
///
/// # Panics
/// If `goal`'s shape is not `speed`'s.
pub(crate) fn march_speed(
    speed: ArrayView2<f64>,
    goal: ArrayView2<bool>,
    unit_cost: impl Fn(f64) -> f32,
    cell_size: f64,
    second: bool,
) -> Marched {
    let (rows, cols) = speed.dim();
    assert_eq!(goal.dim(), (rows, cols), "goal and speed shapes differ");
    if !packed_fits(rows, cols) {
        return march_converted(speed, goal, unit_cost, cell_size, second);
    }
    let speed = speed.as_standard_layout();
    let goal = goal.as_standard_layout();
    let speed_flat = speed.as_slice().expect("standard layout is contiguous");
    let goal_flat = goal.as_slice().expect("standard layout is contiguous");
    let cells = pack_and_march(goal_flat, speed_flat, unit_cost, rows, cols, cell_size, second);
    copy_out(cells.as_slice(), rows, cols, Vec::new())
}

/// [`march`] on the per-cell cost `unit_cost(speed)`, converted into an array first: the path
/// of grids too large for the packed layout.
fn march_converted(
    speed: ArrayView2<f64>,
    goal: ArrayView2<bool>,
    unit_cost: impl Fn(f64) -> f32,
    cell_size: f64,
    second: bool,
) -> Marched {
    let cost = speed.mapv(unit_cost);
    march(super::isotropic(cost.view()), goal, cell_size, second)
}

/// [`march_speed`] writing the values over the memory of `speed`, which the march has read by
/// then: no second grid-sized array to fault in (on a 2048² grid that is 32 MB, a few per cent
/// of the solve). Grids too large for the packed layout convert and march as [`march`].
///
/// # Panics
/// If `goal`'s shape is not `speed`'s.
pub(crate) fn march_speed_in_place(
    speed: Array2<f64>,
    goal: ArrayView2<bool>,
    unit_cost: impl Fn(f64) -> f32,
    cell_size: f64,
    second: bool,
) -> Marched {
    let (rows, cols) = speed.dim();
    assert_eq!(goal.dim(), (rows, cols), "goal and speed shapes differ");
    if !packed_fits(rows, cols) {
        return march_converted(speed.view(), goal, unit_cost, cell_size, second);
    }
    let speed = if speed.is_standard_layout() {
        speed
    } else {
        speed.as_standard_layout().into_owned()
    };
    let goal = goal.as_standard_layout();
    let goal_flat = goal.as_slice().expect("standard layout is contiguous");
    let speed_flat = speed.as_slice().expect("standard layout is contiguous");
    let cells = pack_and_march(goal_flat, speed_flat, unit_cost, rows, cols, cell_size, second);
    let (memory, _) = speed.into_raw_vec_and_offset();
    copy_out(cells.as_slice(), rows, cols, memory)
}

/// [`march`] that stops as soon as every cell where `needed` is true has its value (or when
/// the heap runs empty: a needed cell that cannot be reached keeps the march going to the end).
///
/// Cells are accepted in nondecreasing order of value and an accepted value is final, so every
/// cell accepted before the stop holds exactly the value the full march gives it, bit for bit;
/// the cells not reached are left at `+inf` (and counted in `unreachable`). A cell's upwind
/// neighbours (lower values) are accepted before it, so the upwind gradient of an accepted cell
/// is the full march's too.
///
/// # Panics
/// As [`march`], and if `needed`'s shape is not `goal`'s.
pub(crate) fn march_near(
    cost: ArrayView3<f32>,
    goal: ArrayView2<bool>,
    needed: ArrayView2<bool>,
    cell_size: f64,
    second: bool,
) -> Marched {
    march_with(cost, goal, cell_size, second, true, Some(needed))
}

/// [`march`], with the isotropic fast path allowed or not (tests compare the two), and with an
/// early stop once the `needed` cells are accepted ([`march_near`]).
fn march_with(
    cost: ArrayView3<f32>,
    goal: ArrayView2<bool>,
    cell_size: f64,
    second: bool,
    allow_isotropic: bool,
    needed: Option<ArrayView2<bool>>,
) -> Marched {
    march_on(cost, goal, cell_size, second, allow_isotropic, true, needed)
}

/// [`march_with`], with the packed layout of the isotropic path allowed or not (tests compare
/// it with the isotropic path on separate arrays, which grids too large for it use).
fn march_on(
    cost: ArrayView3<f32>,
    goal: ArrayView2<bool>,
    cell_size: f64,
    second: bool,
    allow_isotropic: bool,
    allow_packed: bool,
    needed: Option<ArrayView2<bool>>,
) -> Marched {
    // The early stop runs the general path only (two instances of the march rather than four).
    let allow_isotropic = allow_isotropic && needed.is_none();
    let (rows, cols, dirs) = cost.dim();
    assert_eq!(dirs, 4, "cost must have shape (rows, cols, 4)");
    assert_eq!(goal.dim(), (rows, cols), "goal and cost shapes differ");
    let width = cols + 2 * PAD;
    let padded_len = width * (rows + 2 * PAD);
    assert!(
        padded_len < FAR as usize,
        "grid of {rows} x {cols} cells is too large for 32-bit cell indices"
    );
    let goal = goal.as_standard_layout();
    let goal_flat = goal.as_slice().expect("standard layout is contiguous");

    let marching = cell_size > 0.0 && cell_size.is_finite();
    // The per-cell cost when every cell has the same cost in all four directions (speed maps,
    // the raw `eikonal` command): then a face is one load from a quarter of the memory. A cost
    // broadcast from one value per cell (stride 0 on the direction axis) is isotropic without
    // looking, and is never copied into a (rows, cols, 4) array.
    let broadcast = cost.strides()[2] == 0;
    // A broadcast over a row-major per-cell array (what [`super::isotropic`] makes) is read in
    // place; any other isotropic cost is copied to one value per cell.
    let broadcast_flat = if allow_isotropic && broadcast {
        cost.index_axis_move(Axis(2), 0).to_slice()
    } else {
        None
    };
    let copy = allow_isotropic && broadcast_flat.is_none();
    let mut isotropic = Scratch::filled(if copy { rows * cols } else { 0 }, 0.0f32);
    let mut is_isotropic = allow_isotropic;
    if copy {
        let first = cost.index_axis(Axis(2), 0);
        for ((lane, &c), iso) in cost
            .lanes(Axis(2))
            .into_iter()
            .zip(first.iter())
            .zip(isotropic.as_mut_slice())
        {
            if !broadcast && lane.iter().any(|f| f.to_bits() != c.to_bits()) {
                is_isotropic = false;
                break;
            }
            *iso = c;
        }
    }
    // The general path reads the cost in place, row-major (a copy only if the caller's view is
    // not laid out that way).
    let cost = if is_isotropic {
        None
    } else {
        Some(cost.as_standard_layout())
    };
    let cost_flat = match (&cost, broadcast_flat) {
        (Some(c), _) => c.as_slice().expect("standard layout is contiguous"),
        (None, Some(flat)) => flat,
        (None, None) => isotropic.as_slice(),
    };
    // Faces per cell in `cost_flat`.
    let faces_per_cell = if is_isotropic { 1 } else { 4 };
    if is_isotropic && allow_packed && packed_fits(rows, cols) {
        // No early stop here (`allow_isotropic` excludes it).
        let cells = pack_and_march(goal_flat, cost_flat, |c| c, rows, cols, cell_size, second);
        return copy_out(cells.as_slice(), rows, cols, Vec::new());
    }
    let mut phi_buf = Scratch::filled(padded_len, INF);
    let mut slot_buf = Scratch::filled(padded_len, FROZEN);
    let (phi, slot) = (phi_buf.as_mut_slice(), slot_buf.as_mut_slice());
    let mut sources = Vec::new();
    for r in 0..rows {
        let row_base = (r + PAD) * width + PAD;
        let goal_row = &goal_flat[r * cols..(r + 1) * cols];
        let cost_row = &cost_flat[r * cols * faces_per_cell..(r + 1) * cols * faces_per_cell];
        let slot_row = &mut slot[row_base..row_base + cols];
        for (c, ((state, &is_goal), faces)) in slot_row
            .iter_mut()
            .zip(goal_row)
            .zip(cost_row.chunks_exact(faces_per_cell))
            .enumerate()
        {
            if is_goal {
                *state = SOURCE;
                sources.push((row_base + c, r * cols + c));
            } else if marching && faces.iter().any(|&v| step(cell_size, v) < INF) {
                *state = FAR;
            }
        }
    }
    for &(i, _) in &sources {
        phi[i] = 0.0;
    }
    // The early stop counts the needed cells the march could accept (sources are set already,
    // impassable cells never are).
    let mut needed_padded = Vec::new();
    let mut needed_left = 0;
    if let Some(needed) = needed {
        assert_eq!(needed.dim(), (rows, cols), "needed and cost shapes differ");
        needed_padded = vec![false; padded_len];
        for ((r, c), &need) in needed.indexed_iter() {
            let i = (r + PAD) * width + PAD + c;
            if need && slot[i] == FAR {
                needed_padded[i] = true;
                needed_left += 1;
            }
        }
    }
    let stop = needed.is_some();

    let mut marcher = Marcher {
        phi,
        slot,
        // The front of a march is a band of a few cells around a curve: a few times the
        // perimeter is plenty to start with; the heap grows if needed.
        heap: IndexedHeap::with_capacity(4 * (rows + cols)),
        cost: cost_flat,
        cell_size,
        cols,
        width,
        needed: needed_padded,
        needed_left,
    };
    with_widest_instructions(
        #[inline(always)]
        || match (second, is_isotropic, stop) {
            (true, true, false) => marcher.run::<true, true, false>(&sources),
            (true, false, false) => marcher.run::<true, false, false>(&sources),
            (false, true, false) => marcher.run::<false, true, false>(&sources),
            (false, false, false) => marcher.run::<false, false, false>(&sources),
            // `is_isotropic` is false with an early stop (see the top).
            (true, _, true) => marcher.run::<true, false, true>(&sources),
            (false, _, true) => marcher.run::<false, false, true>(&sources),
        },
    );

    let mut out = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let row_base = (r + PAD) * width + PAD;
        out.extend_from_slice(&marcher.phi[row_base..row_base + cols]);
    }
    let unreachable = out.iter().filter(|&&v| v == INF).count();
    let phi = Array2::from_shape_vec((rows, cols), out).expect("rows * cols values");
    Marched { phi, unreachable }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, Array3};

    /// A deterministic scramble in `[0, 1)`.
    fn scramble(i: usize) -> f32 {
        ((i.wrapping_mul(2654435761) % 1_000_003) as f32) / 1_000_003.0
    }

    #[test]
    fn isotropic_fast_path_gives_the_general_paths_values() {
        let (rows, cols) = (37, 52);
        // Isotropic costs from 0.5 to 3, a few walls (inf, 0, NaN), two sources.
        let cost = Array3::from_shape_fn((rows, cols, 4), |(r, c, _)| {
            let i = r * cols + c;
            match i % 23 {
                0 => f32::INFINITY,
                7 => 0.0,
                11 => f32::NAN,
                _ => 0.5 + 2.5 * scramble(i),
            }
        });
        let mut goal = Array2::from_elem((rows, cols), false);
        goal[(3, 4)] = true;
        goal[(30, 40)] = true;
        for second in [false, true] {
            let packed = march_with(cost.view(), goal.view(), 0.7, second, true, None);
            let fast = march_on(cost.view(), goal.view(), 0.7, second, true, false, None);
            let general = march_with(cost.view(), goal.view(), 0.7, second, false, None);
            assert_eq!(fast.unreachable, general.unreachable);
            assert_eq!(packed.unreachable, general.unreachable);
            assert!(fast.unreachable > 0, "the walls leave some cells unreachable");
            // Bit for bit: the fast paths read the same cost through smaller arrays.
            for ((a, b), p) in fast.phi.iter().zip(general.phi.iter()).zip(packed.phi.iter()) {
                assert_eq!(a.to_bits(), b.to_bits(), "second order: {second}");
                assert_eq!(p.to_bits(), b.to_bits(), "packed, second order: {second}");
            }
        }
    }

    #[test]
    fn the_packed_layout_gives_the_general_values_where_keys_tie() {
        // A point source in a uniform field (every value in symmetric groups of equal keys), a
        // field of two speeds, and a source on the grid's edge (the padding next to it).
        let n = 121;
        for (cost, source, label) in [
            (Array3::from_elem((n, n, 4), 1.0f32), (n / 2, n / 2), "uniform"),
            (
                Array3::from_shape_fn((n, n, 4), |(r, _, _)| if r < n / 3 { 0.5 } else { 2.0 }),
                (n / 2, n / 2),
                "layered",
            ),
            (Array3::from_elem((n, n, 4), 1.5f32), (0, n - 1), "corner"),
        ] {
            let mut goal = Array2::from_elem((n, n), false);
            goal[source] = true;
            for second in [false, true] {
                let packed = march_with(cost.view(), goal.view(), 0.25, second, true, None);
                let general = march_with(cost.view(), goal.view(), 0.25, second, false, None);
                assert_eq!(packed.unreachable, 0);
                for (a, b) in packed.phi.iter().zip(general.phi.iter()) {
                    assert_eq!(a.to_bits(), b.to_bits(), "{label}, second order: {second}");
                }
            }
        }
    }

    #[test]
    fn a_broadcast_cost_is_read_in_place_and_walled_off_cells_stay_unreachable() {
        // A per-cell cost with a walled-off pocket of open cells (never reached: the packed
        // march leaves them as open cells, which must come out as +inf) and a wall cell.
        let (rows, cols) = (40, 33);
        let mut cell_cost = Array2::from_shape_fn((rows, cols), |(r, c)| 0.5 + scramble(r * cols + c));
        for r in 10..=20 {
            for c in 10..=20 {
                if r == 10 || r == 20 || c == 10 || c == 20 {
                    cell_cost[(r, c)] = f32::INFINITY;
                }
            }
        }
        let mut goal = Array2::from_elem((rows, cols), false);
        goal[(2, 30)] = true;
        let full = Array3::from_shape_fn((rows, cols, 4), |(r, c, _)| cell_cost[(r, c)]);
        for second in [false, true] {
            let broadcast = march(
                super::super::isotropic(cell_cost.view()),
                goal.view(),
                0.5,
                second,
            );
            let general = march_with(full.view(), goal.view(), 0.5, second, false, None);
            // The wall ring (40 cells) and the 9 x 9 pocket inside it.
            assert_eq!(broadcast.unreachable, 40 + 81);
            assert_eq!(general.unreachable, 40 + 81);
            assert_eq!(broadcast.phi[(15, 15)], INF);
            for (a, b) in broadcast.phi.iter().zip(general.phi.iter()) {
                assert_eq!(a.to_bits(), b.to_bits(), "second order: {second}");
            }
        }
    }

    #[test]
    fn marching_from_speeds_gives_the_values_of_the_cost_array() {
        let (rows, cols) = (45, 38);
        // Speeds from 0.2 to 3 m/s, with walls of every kind (0, negative, NaN, inf) and
        // speeds whose cost is clamped (above f32::MAX) or overflows (below 3e-39).
        let speed = Array2::from_shape_fn((rows, cols), |(r, c)| {
            let i = r * cols + c;
            match i % 31 {
                0 => 0.0,
                3 => -1.0,
                5 => f64::NAN,
                9 => f64::INFINITY,
                13 => 1e300,
                17 => 1e-300,
                _ => 0.2 + 2.8 * f64::from(scramble(i)),
            }
        });
        let mut goal = Array2::from_elem((rows, cols), false);
        goal[(1, 1)] = true;
        goal[(40, 30)] = true;
        let cost = super::super::cell_cost_from_speed(speed.view());
        for second in [false, true] {
            let fused = march_speed(speed.view(), goal.view(), super::super::unit_cost, 0.4, second);
            let plain = march(super::super::isotropic(cost.view()), goal.view(), 0.4, second);
            assert_eq!(fused.unreachable, plain.unreachable);
            assert!(fused.unreachable > 0);
            // Over the speeds' own memory: a plain array, a transposed one (not in standard
            // layout: copied first) and one cut from a larger array (its data at an offset).
            let mut transposed = Array2::zeros(ndarray::ShapeBuilder::f((rows, cols)));
            transposed.assign(&speed);
            assert!(!transposed.is_standard_layout());
            let mut larger = Array2::from_elem((rows + 3, cols + 2), 1.0);
            larger.slice_mut(ndarray::s![3.., 2..]).assign(&speed);
            let cut = larger.slice_move(ndarray::s![3.., 2..]);
            for (owned, label) in [(speed.clone(), "plain"), (transposed, "transposed"), (cut, "cut")] {
                let same = owned
                    .iter()
                    .zip(speed.iter())
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same && owned.dim() == speed.dim(), "{label}");
                let in_place = march_speed_in_place(owned, goal.view(), super::super::unit_cost, 0.4, second);
                assert_eq!(in_place.unreachable, plain.unreachable, "{label}");
                for (a, b) in in_place.phi.iter().zip(plain.phi.iter()) {
                    assert_eq!(a.to_bits(), b.to_bits(), "{label}, second order: {second}");
                }
            }
            for (a, b) in fused.phi.iter().zip(plain.phi.iter()) {
                assert_eq!(a.to_bits(), b.to_bits(), "second order: {second}");
            }
        }
    }

    #[test]
    fn the_baseline_build_gives_the_widest_builds_values_on_every_path() {
        let (rows, cols) = (45, 61);
        let aniso = anisotropic_cost(rows, cols);
        let iso = Array3::from_shape_fn((rows, cols, 4), |(r, c, _)| {
            let i = r * cols + c;
            if i % 31 == 0 {
                f32::INFINITY
            } else {
                0.5 + 2.0 * scramble(i)
            }
        });
        let mut goal = Array2::from_elem((rows, cols), false);
        goal[(7, 9)] = true;
        goal[(40, 50)] = true;
        let mut needed = Array2::from_elem((rows, cols), false);
        needed[(30, 3)] = true;
        for second in [false, true] {
            // Packed, isotropic on separate arrays, general, general with an early stop.
            let all = || {
                [
                    march_with(iso.view(), goal.view(), 0.4, second, true, None),
                    march_on(iso.view(), goal.view(), 0.4, second, true, false, None),
                    march_with(aniso.view(), goal.view(), 0.4, second, false, None),
                    march_with(aniso.view(), goal.view(), 0.4, second, false, Some(needed.view())),
                ]
            };
            let widest = all();
            let baseline = crate::eikonal::widest::tests::on_the_baseline(all);
            for (path, (w, b)) in widest.iter().zip(&baseline).enumerate() {
                assert_eq!(w.unreachable, b.unreachable, "path {path}");
                assert!(
                    w.phi
                        .iter()
                        .zip(b.phi.iter())
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "path {path}"
                );
            }
        }
    }

    /// An anisotropic cost with walls, as a simulation makes.
    fn anisotropic_cost(rows: usize, cols: usize) -> Array3<f32> {
        Array3::from_shape_fn((rows, cols, 4), |(r, c, d)| {
            let i = r * cols + c;
            if i.is_multiple_of(29) || (c == cols / 2 && r > 3) {
                f32::INFINITY
            } else {
                0.6 + 1.5 * scramble(4 * i + d)
            }
        })
    }

    #[test]
    fn an_early_stop_keeps_every_reached_value_bit_for_bit() {
        let (rows, cols) = (40, 60);
        let cost = anisotropic_cost(rows, cols);
        let mut goal = Array2::from_elem((rows, cols), false);
        goal[(20, 5)] = true;
        // Needed: a few cells on the source's side of the wall and one beyond it.
        let mut needed = Array2::from_elem((rows, cols), false);
        for rc in [(10, 10), (30, 20), (2, 40)] {
            needed[rc] = true;
        }
        for second in [false, true] {
            let full = march_with(cost.view(), goal.view(), 0.5, second, false, None);
            let near = march_with(cost.view(), goal.view(), 0.5, second, false, Some(needed.view()));
            // The needed cells have their values...
            let worst_needed = needed
                .indexed_iter()
                .filter(|&(_, &n)| n)
                .map(|(rc, _)| full.phi[rc])
                .fold(0.0, f64::max);
            for (rc, &n) in needed.indexed_iter() {
                if n {
                    assert_eq!(near.phi[rc].to_bits(), full.phi[rc].to_bits(), "{rc:?}");
                }
            }
            // ...and every cell is either the full march's value or not reached, and then at
            // least the largest needed value.
            let mut skipped = 0;
            for (a, b) in near.phi.iter().zip(full.phi.iter()) {
                if *a == INF {
                    assert!(*b >= worst_needed, "{b} left out below {worst_needed}");
                    skipped += (*b < INF) as usize;
                } else {
                    assert_eq!(a.to_bits(), b.to_bits());
                }
            }
            assert!(skipped > 100, "the march stopped early ({skipped} cells skipped)");
            assert_eq!(near.unreachable, full.unreachable + skipped);
        }
    }

    #[test]
    fn a_needed_cell_that_cannot_be_reached_runs_the_march_to_the_end() {
        let (rows, cols) = (20, 30);
        let mut cost = anisotropic_cost(rows, cols);
        // Wall the last column off completely.
        for r in 0..rows {
            for d in 0..4 {
                cost[[r, cols - 2, d]] = f32::INFINITY;
            }
        }
        let mut goal = Array2::from_elem((rows, cols), false);
        goal[(3, 3)] = true;
        let mut needed = Array2::from_elem((rows, cols), false);
        needed[(5, cols - 1)] = true;
        needed[(0, 0)] = true;
        let full = march_with(cost.view(), goal.view(), 0.5, false, false, None);
        let near = march_with(cost.view(), goal.view(), 0.5, false, false, Some(needed.view()));
        assert_eq!(near.phi[(5, cols - 1)], INF);
        for (a, b) in near.phi.iter().zip(full.phi.iter()) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        // Nothing needed (or only sources): nothing is marched.
        let mut only_goal = Array2::from_elem((rows, cols), false);
        only_goal[(3, 3)] = true;
        let none = march_with(
            cost.view(),
            goal.view(),
            0.5,
            false,
            false,
            Some(only_goal.view()),
        );
        assert_eq!(none.phi[(3, 3)], 0.0);
        assert_eq!(none.unreachable, rows * cols - 1);
    }
}
