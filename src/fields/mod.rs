//! Continuum fields on the grid (SPEC §2–3): density splat ([`density`]), anisotropic speed
//! ([`speed`]) and unit cost ([`cost`]).
//!
//! Values that the SPEC samples "r ahead" (density, average velocity, discomfort) are read
//! along the face's axis at `max(lookahead, cell_size)` metres from the cell centre, linearly
//! interpolated between the two cells around that point, clamped to the domain (a sample past
//! the border reads the last cell on the line).

pub mod cost;
pub mod density;
pub mod speed;

pub use cost::{unit_cost, unit_cost_with};
pub use density::splat;
pub use speed::{SceneFaces, speed, speed_with};

use crate::agents::Agents;
use crate::grid::Dir;
use crate::scene::Scene;
use ndarray::{Array2, Array3, ArrayView2};

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

impl Density {
    /// No agents: zero density and velocity everywhere.
    pub fn empty(grid: &crate::grid::Grid) -> Self {
        Self {
            rho: Array2::zeros(grid.shape()),
            vx: Array2::zeros(grid.shape()),
            vy: Array2::zeros(grid.shape()),
        }
    }
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

/// Look-ahead distance in cells: `lookahead / cell_size`, at least one cell (a non-finite or
/// non-positive look-ahead also gives one cell).
pub fn lookahead_cells(lookahead: f64, cell_size: f64) -> f64 {
    let k = lookahead / cell_size;
    if k.is_finite() && k > 1.0 { k } else { 1.0 }
}

/// `field` sampled `ahead` cells from the centre of `(r, c)` in direction `d`: linear
/// interpolation between the two cells on the axis around that point, indices clamped to the
/// domain.
pub fn sample_ahead(field: ArrayView2<f32>, r: usize, c: usize, d: Dir, ahead: f64) -> f64 {
    let (rows, cols) = field.dim();
    let (dr, dc) = d.offset();
    let (start, n) = if dc != 0 { (c, cols) } else { (r, rows) };
    let sign = (dr + dc) as f64;
    let pos = (start as f64 + sign * ahead).clamp(0.0, (n - 1) as f64);
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let t = pos - lo as f64;
    let at = |i: usize| -> f64 {
        if dc != 0 {
            field[[r, i]] as f64
        } else {
            field[[i, c]] as f64
        }
    };
    let a = at(lo);
    if t == 0.0 { a } else { a + t * (at(hi) - a) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn sample_ahead_interpolates_and_clamps() {
        let f = array![[0.0f32, 1.0, 2.0, 3.0], [10.0, 11.0, 12.0, 13.0]];
        assert_eq!(sample_ahead(f.view(), 0, 0, Dir::E, 1.5), 1.5);
        assert_eq!(sample_ahead(f.view(), 0, 3, Dir::W, 2.0), 1.0);
        assert_eq!(
            sample_ahead(f.view(), 0, 2, Dir::E, 3.0),
            3.0,
            "clamped to the last cell"
        );
        assert_eq!(sample_ahead(f.view(), 0, 1, Dir::N, 1.0), 11.0);
        assert_eq!(sample_ahead(f.view(), 1, 1, Dir::S, 5.0), 1.0);
        assert_eq!(lookahead_cells(0.2, 0.5), 1.0);
        assert_eq!(lookahead_cells(2.0, 0.5), 4.0);
    }
}
