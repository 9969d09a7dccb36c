//! Eikonal solvers: |grad phi| = C with phi = 0 on the sources (SPEC §4).
//!
//! (API fixed for the other modules; bodies being written.)
//! The cost array is the anisotropic unit cost `C(cell, dir)` in cost per metre (s/m with the
//! default parameters), shape `(rows, cols, 4)` (see [`crate::grid`]); `+inf` (or any
//! non-finite or non-positive value) marks a face that cannot be crossed. A step from a cell to
//! its neighbour in direction `d` costs `cell_size * C(cell, d)`.

use ndarray::{Array2, Array3, ArrayView2, ArrayView3};

/// Order of accuracy of the fast-marching update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Order {
    /// First-order upwind update.
    #[default]
    First,
    /// Second-order one-sided stencil where two monotone upwind values are known.
    Second,
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
}

/// Solves one potential with CPU fast marching.
pub fn solve_fmm(cost: ArrayView3<f32>, goal: ArrayView2<bool>, cell_size: f64, order: Order) -> Solution {
    let _ = (cost, goal, cell_size, order);
    todo!("fast marching")
}

/// Solves one potential per goal mask, in parallel (rayon), sharing one cost array.
pub fn solve_groups(
    cost: ArrayView3<f32>,
    goals: &[Array2<bool>],
    cell_size: f64,
    order: Order,
) -> Vec<Solution> {
    let _ = (cost, goals, cell_size, order);
    todo!("parallel group solve")
}

/// Isotropic unit cost `1 / speed` for every direction; `+inf` where speed <= 0 or not finite.
pub fn cost_from_speed(speed: ArrayView2<f64>) -> Array3<f32> {
    let _ = speed;
    todo!("cost from speed")
}
