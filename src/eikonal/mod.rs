//! Eikonal solvers: |grad phi| = C with phi = 0 on the sources (SPEC §4).
//!
//! The cost array is the anisotropic unit cost `C(cell, dir)` in cost per metre (s/m with the
//! default parameters), shape `(rows, cols, 4)` (see [`crate::grid`]); `+inf` (or any
//! non-finite or non-positive value) marks a face that cannot be crossed. A step from a cell to
//! its neighbour in direction `d` costs `cell_size * C(cell, d)`.

//!
//! The CPU solver is fast marching ([`solve_fmm`]): cells are accepted in increasing order of
//! phi from an indexed 4-ary heap; a cell's value comes from the upwind quadratic of SPEC §4
//! ([`quadratic::solve_two_axes`]) over its accepted neighbours, choosing on each axis the
//! neighbour `M` with the smaller `phi_M + h C(cell -> M)`. [`Order::Second`] replaces an axis's
//! first-order difference by the one-sided `(3 phi - 4 phi_1 + phi_2) / 2` where `phi_1` and
//! `phi_2` are both accepted, monotone (`phi_2 <= phi_1`), neither is a source and the face
//! between them is passable; otherwise that axis stays first order. In both orders a cell's value
//! never exceeds `phi_M + h C(cell -> M)` for any accepted neighbour `M`.
//!
//! [`levelset`] is scikit-fmm's `distance` and `travel_time`: the front is the zero contour of
//! a level-set function, interpolated between cells, with per-axis spacing and scikit-fmm's own
//! updates (the Python package's `crowdfield.distance` / `travel_time`).
//!
//! ```
//! use crowdfield::eikonal::{cost_from_speed, solve_fmm, Order};
//! use ndarray::Array2;
//! let speed = Array2::from_elem((5, 5), 2.0); // metres per second
//! let mut goal = Array2::from_elem((5, 5), false);
//! goal[(2, 0)] = true;
//! let sol = solve_fmm(cost_from_speed(speed.view()).view(), goal.view(), 0.5, Order::First);
//! assert_eq!(sol.phi[(2, 0)], 0.0);
//! assert!((sol.phi[(2, 4)] - 1.0).abs() < 1e-12); // 4 cells of 0.5 m at 2 m/s
//! assert_eq!(sol.unreachable, 0);
//! ```

mod fmm;
pub mod grids;
mod heap;
pub mod levelset;

pub mod quadratic;
mod scratch;
mod speed_grid;
mod split_heap;
mod widest;

pub use speed_grid::{PhiGrid, SpeedGrid};

/// The [`Solution::solver`] name of the CPU fast marching, the reports' and `--timing`'s.
pub const FMM_CPU: &str = "fmm-cpu";

use ndarray::{Array2, Array3, ArrayView2, ArrayView3};
use rayon::prelude::*;
use std::time::Instant;

/// Order of accuracy of the fast-marching update ([`crate::plan::PlanOptions::order`]; see the
/// [`crate::plan` module](mod@crate::plan) example).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Order {
    /// First-order upwind update.
    #[default]
    First,
    /// Second-order one-sided stencil where two monotone upwind values are known.
    Second,
}

/// `1` or `2`, as the command's `--order` and Python's `order` give it. The serde names stay
/// `First` and `Second` (the options a batch hashes into its completion markers).
impl crate::names::Named for Order {
    const WHAT: &'static str = "Order";
    const ALL: &'static [Self] = &[Self::First, Self::Second];

    fn name(self) -> &'static str {
        match self {
            Order::First => "1",
            Order::Second => "2",
        }
    }
}

impl std::fmt::Display for Order {
    /// "first order" or "second order", for messages (the CLI's `--order` takes 1 or 2).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Order::First => "first order",
            Order::Second => "second order",
        })
    }
}

/// The result of one solve.
#[derive(Clone, Debug)]
pub struct Solution {
    /// Potential at cell centres; `0` on sources, `+inf` where no source is reachable; never NaN.
    pub phi: Array2<f64>,
    /// Number of cells left at `+inf`.
    pub unreachable: usize,
    /// Which solver produced it, e.g. `"fmm-cpu"`, `"fim-gpu"`.
    pub solver: &'static str,
    /// Passes/iterations the solver needed (1 for fast marching).
    pub passes: usize,
    /// Wall time of the solve alone, seconds.
    pub seconds: f64,
    /// What the GPU solver did (`None` for fast marching); one solve's figures, shared by the
    /// groups solved together.
    pub counters: Option<SolveCounters>,
}

/// The work counters of one iterative solve (the GPU block FIM or its CPU twin): the figures
/// that track the solver's cost on any adapter, a software one included.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct SolveCounters {
    /// Passes that relaxed at least one tile (the largest over the groups solved together).
    pub passes: usize,
    /// Compute dispatches encoded, empty passes after convergence included (0 on the CPU).
    pub dispatches: usize,
    /// Times the host read the solver's state back to test convergence (0 on the CPU; the
    /// potentials' final read-back is not counted).
    pub read_backs: usize,
    /// Local updates evaluated, every group together.
    pub relaxations: u64,
    /// `relaxations` over the cells some source reaches, every group together (1 would be fast
    /// marching's one acceptance per cell).
    pub relaxations_per_reachable_cell: f64,
    /// Edge of the solver's square tiles, cells.
    pub tile: usize,
}

/// Solves one potential with CPU fast marching (single thread).
///
/// `goal` marks the sources (phi = 0 exactly, whatever their cost). Faces whose cost is not
/// finite and positive cannot be crossed; a `cell_size` that is not finite and positive leaves
/// every non-source cell unreachable. The result is never NaN and `unreachable` counts the
/// `+inf` cells.
///
/// # Panics
/// If `cost` is not of shape `(rows, cols, 4)` with `goal` of shape `(rows, cols)` (a caller's
/// bug, not bad input: check shapes where arrays come from files), or if the grid has about
/// 4 billion cells or more.
pub fn solve_fmm(cost: ArrayView3<f32>, goal: ArrayView2<bool>, cell_size: f64, order: Order) -> Solution {
    let start = Instant::now();
    fmm_solution(fmm::march(cost, goal, cell_size, order == Order::Second), start)
}

/// [`solve_fmm`] on the isotropic cost `1 / speed` of each cell: the values of
/// `solve_fmm(isotropic(cell_cost_from_speed(speed).view()), ..)` bit for bit, faster on large
/// grids (the speeds are converted as the march lays out its cells, with no cost array in
/// between). Speeds that are not finite and positive are impassable.
///
/// ```
/// use crowdfield::eikonal::{cell_cost_from_speed, isotropic, solve_fmm, solve_fmm_speed, Order};
/// use ndarray::Array2;
/// let speed = Array2::from_shape_fn((6, 7), |(r, c)| if c == 3 && r > 0 { 0.0 } else { 1.5 });
/// let mut goal = Array2::from_elem((6, 7), false);
/// goal[(5, 0)] = true;
/// let fused = solve_fmm_speed(speed.view(), goal.view(), 0.5, Order::Second);
/// let cost = cell_cost_from_speed(speed.view());
/// let plain = solve_fmm(isotropic(cost.view()), goal.view(), 0.5, Order::Second);
/// assert_eq!(fused.phi, plain.phi);
/// assert_eq!(fused.unreachable, 5); // the wall
/// ```
///
/// # Panics
/// If `goal`'s shape is not `speed`'s, or as [`solve_fmm`].
pub fn solve_fmm_speed(
    speed: ArrayView2<f64>,
    goal: ArrayView2<bool>,
    cell_size: f64,
    order: Order,
) -> Solution {
    let start = Instant::now();
    let marched = fmm::march_speed(speed, goal, unit_cost, cell_size, order == Order::Second);
    fmm_solution(marched, start)
}

/// [`solve_fmm_speed`] taking the speeds by value and writing the potential over their memory
/// (`Solution::phi` owns the speeds' allocation): the same values, with no second grid-sized
/// array to fault in. What `crowdfield eikonal` runs on the CPU.
///
/// # Panics
/// As [`solve_fmm_speed`].
pub fn solve_fmm_speed_in_place(
    speed: Array2<f64>,
    goal: ArrayView2<bool>,
    cell_size: f64,
    order: Order,
) -> Solution {
    let start = Instant::now();
    let marched = fmm::march_speed_in_place(speed, goal, unit_cost, cell_size, order == Order::Second);
    fmm_solution(marched, start)
}

/// The [`Solution`] of a CPU march that began at `start`.
fn fmm_solution(marched: fmm::Marched, start: Instant) -> Solution {
    Solution {
        counters: None,
        phi: marched.phi,
        unreachable: marched.unreachable,
        solver: FMM_CPU,
        passes: 1,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Solves one potential per goal mask, in parallel (rayon), sharing one cost array. The
/// solutions come back in the order of `goals`; each is one single-threaded [`solve_fmm`], so the
/// results do not depend on the number of threads.
///
/// # Panics
/// As [`solve_fmm`], for any goal mask.
pub fn solve_groups(
    cost: ArrayView3<f32>,
    goals: &[Array2<bool>],
    cell_size: f64,
    order: Order,
) -> Vec<Solution> {
    goals
        .par_iter()
        .map(|goal| solve_fmm(cost, goal.view(), cell_size, order))
        .collect()
}

/// [`solve_groups`], each march stopping as soon as every cell of its `needed` mask (same
/// order as `goals`) has its value: those cells, and every cell accepted before them, hold the
/// values the full solve gives them, bit for bit, as do their upwind gradients (see
/// [`crate::gradient::gradient`]); the cells not reached are `+inf` and counted in
/// `unreachable`. A needed cell that no source reaches makes that march run to the end.
///
/// This is how a simulation solves only as far as its walkers: fast marching accepts cells in
/// increasing order of potential, so the cells beyond the farthest walker are never needed.
///
/// # Panics
/// As [`solve_fmm`], for any goal mask, or if `needed` and `goals` differ in length or shape.
pub fn solve_groups_near(
    cost: ArrayView3<f32>,
    goals: &[Array2<bool>],
    needed: &[Array2<bool>],
    cell_size: f64,
    order: Order,
) -> Vec<Solution> {
    assert_eq!(goals.len(), needed.len(), "one needed mask per goal mask");
    goals
        .par_iter()
        .zip(needed)
        .map(|(goal, needed)| {
            let start = Instant::now();
            let second = order == Order::Second;
            let marched = fmm::march_near(cost, goal.view(), needed.view(), cell_size, second);
            fmm_solution(marched, start)
        })
        .collect()
}

/// Fastest speed the solvers represent, 2^126 (about 8.5e37): above it the unit cost
/// `1 / speed` falls below `f32`'s smallest normal number, where [`cell_cost_from_speed`] keeps
/// it (so the cell stays passable) but the potential comes out too large. `crowdfield eikonal`
/// refuses such speeds.
pub const MAX_SPEED: f64 = 1.0 / f32::MIN_POSITIVE as f64;

/// Largest cell edge `crowdfield eikonal` takes: the step cost (cell size times a cost of at most
/// `f32::MAX`, about 3.4e38) squared, as the quadratic update squares it, stays finite in `f64`
/// (1e100 × 3.4e38 = 3.4e138, whose square is about 1e277 < 1.8e308).
pub const MAX_CELL_SIZE: f64 = 1e100;

/// The first cell (row, column) whose speed is above [`MAX_SPEED`] (finite or `+inf` speeds
/// only count as too fast when finite: `+inf` is impassable), with its speed.
pub fn first_unrepresentable_speed(speed: ArrayView2<f64>) -> Option<((usize, usize), f64)> {
    speed
        .indexed_iter()
        .find(|(_, v)| v.is_finite() && **v > MAX_SPEED)
        .map(|(at, v)| (at, *v))
}

/// Unit cost `1 / speed` per cell; `+inf` where speed <= 0 or not finite (and where `1 / speed`
/// overflows `f32`, i.e. speed below about `3e-39`). See [`isotropic`] to solve with it.
pub fn cell_cost_from_speed(speed: ArrayView2<f64>) -> Array2<f32> {
    speed.mapv(unit_cost)
}

/// `1 / speed` as `f32`: `+inf` for an impassable speed (<= 0 or not finite), and never 0 for a
/// passable one. A speed above `f32::MAX` would round its cost to 0, which the solvers read as
/// impassable; it is kept at the smallest normal `f32` instead, so the cell stays passable.
#[inline(always)]
fn unit_cost(speed: f64) -> f32 {
    // Both sides computed and one selected (no branch): conversion loops vectorise.
    let passable = (speed > 0.0) & (speed < f64::INFINITY);
    let cost = ((1.0 / speed) as f32).max(f32::MIN_POSITIVE);
    if passable { cost } else { f32::INFINITY }
}

/// A per-cell cost seen as the anisotropic `(rows, cols, 4)` cost the solvers take, the same
/// value in every direction, without copying (the direction axis has stride 0; the CPU solver
/// recognises it and reads one value per cell).
///
/// # Panics
/// If `cell_cost` is not in standard (row-major, contiguous) layout, as an `Array2` is.
pub fn isotropic(cell_cost: ArrayView2<'_, f32>) -> ArrayView3<'_, f32> {
    use ndarray::ShapeBuilder;
    let (rows, cols) = cell_cost.dim();
    let data = cell_cost.to_slice().expect("cell cost in standard layout");
    ArrayView3::from_shape((rows, cols, 4).strides((cols, 1, 0)), data).expect("strides fit the data")
}

/// Isotropic unit cost `1 / speed` for every direction; `+inf` where speed <= 0 or not finite
/// (and where `1 / speed` overflows `f32`, i.e. speed below about `3e-39`).
pub fn cost_from_speed(speed: ArrayView2<f64>) -> Array3<f32> {
    let (rows, cols) = speed.dim();
    // One flat pass in memory order (a large grid's cost array is 16 bytes per cell, and this
    // conversion is inside the timed solve of `crowdfield eikonal`).
    let mut flat = Vec::with_capacity(rows * cols * 4);
    for &f in speed.iter() {
        flat.extend_from_slice(&[unit_cost(f); 4]);
    }
    Array3::from_shape_vec((rows, cols, 4), flat).expect("rows * cols * 4 values")
}

#[cfg(test)]
mod tests {
    use super::unit_cost;

    #[test]
    fn unit_costs_of_impassable_and_extreme_speeds() {
        for speed in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(unit_cost(speed), f32::INFINITY, "speed {speed}");
        }
        assert_eq!(unit_cost(2.0), 0.5);
        assert_eq!(unit_cost(1.0 / 3.0), 3.0);
        // Beyond f32's range either way: passable stays passable (never 0), and a speed whose
        // inverse overflows f32 is impassable.
        assert_eq!(unit_cost(f64::MAX), f32::MIN_POSITIVE);
        assert_eq!(unit_cost(1e-300), f32::INFINITY);
        assert_eq!(unit_cost(f64::MIN_POSITIVE), f32::INFINITY);
    }

    #[test]
    fn the_fastest_speed_is_the_last_whose_cost_is_a_normal_f32() {
        assert_eq!(unit_cost(super::MAX_SPEED), f32::MIN_POSITIVE);
        assert!(((1.0 / (super::MAX_SPEED * 1.0001)) as f32) < f32::MIN_POSITIVE);
        let speeds = ndarray::array![[1.0, f64::INFINITY], [1e39, 1e300]];
        assert_eq!(
            super::first_unrepresentable_speed(speeds.view()),
            Some(((1, 0), 1e39))
        );
    }
}
