//! Continuum fields on the grid (SPEC §2–3): density splat, speed, unit cost.
//!
//! (API fixed for the other modules; bodies being written.)

use crate::agents::Agents;
use crate::grid::Grid;
use crate::scene::Scene;
use ndarray::{Array2, Array3, ArrayView3};

/// Splatted density and average velocity.
#[derive(Clone, Debug, PartialEq)]
pub struct Density {
    /// Density at cell centres, persons/m².
    pub rho: Array2<f32>,
    /// Density-weighted average velocity x, m/s.
    pub vx: Array2<f32>,
    /// Density-weighted average velocity y, m/s.
    pub vy: Array2<f32>,
}

/// Splats all agents (every group together) onto the grid with fall-off `lambda`.
pub fn splat(grid: &Grid, lambda: f64, agents: &Agents) -> Density {
    let _ = (grid, lambda, agents);
    todo!("density splat")
}

/// Anisotropic walking speed f(x, theta), m/s, shape `(rows, cols, 4)`; 0 into/out of obstacles.
pub fn speed(scene: &Scene, density: &Density) -> Array3<f32> {
    let _ = (scene, density);
    todo!("speed field")
}

/// Anisotropic unit cost C = (alpha f + beta + gamma g) / f, shape `(rows, cols, 4)`;
/// `+inf` where the face cannot be crossed (obstacles, domain border).
pub fn unit_cost(scene: &Scene, speed: ArrayView3<f32>) -> Array3<f32> {
    let _ = (scene, speed);
    todo!("unit cost")
}

/// Every field of one continuum step.
#[derive(Clone, Debug, PartialEq)]
pub struct Fields {
    /// Density and average velocity.
    pub density: Density,
    /// Speed f(x, theta), m/s.
    pub speed: Array3<f32>,
    /// Unit cost C(x, theta).
    pub cost: Array3<f32>,
}

impl Fields {
    /// Splat, speed and cost for `agents` on `scene`.
    pub fn compute(scene: &Scene, agents: &Agents) -> Fields {
        let density = splat(&scene.grid, scene.params.lambda, agents);
        let speed = speed(scene, &density);
        let cost = unit_cost(scene, speed.view());
        Fields { density, speed, cost }
    }
}
