//! Gradient of a potential and the walking velocity it gives (SPEC §4, last paragraph).
//!
//! (API fixed for the other modules; bodies being written.)

use crate::grid::Grid;
use ndarray::{Array2, ArrayView2, ArrayView3};

/// Upwind gradient of phi at cell centres (per metre). Zero on sources and where phi is
/// infinite or no finite neighbour exists.
#[derive(Clone, Debug, PartialEq)]
pub struct Gradient {
    /// d phi / d x.
    pub gx: Array2<f32>,
    /// d phi / d y.
    pub gy: Array2<f32>,
}

/// Upwind gradient of `phi`, taking on each axis the side the solver took (the neighbour with
/// the smaller `phi_M + h C(cell -> M)`).
pub fn gradient(phi: ArrayView2<f64>, cost: ArrayView3<f32>, cell_size: f64) -> Gradient {
    let _ = (phi, cost, cell_size);
    todo!("upwind gradient")
}

/// Walking velocity at world point `(x, y)`: direction `-grad phi / |grad phi|` (interpolated),
/// speed `f` in that direction interpolated between the two faces it falls between. `[0, 0]`
/// where there is no direction.
pub fn velocity_at(grid: &Grid, grad: &Gradient, speed: ArrayView3<f32>, x: f32, y: f32) -> [f32; 2] {
    let _ = (grid, grad, speed, x, y);
    todo!("velocity sampling")
}
