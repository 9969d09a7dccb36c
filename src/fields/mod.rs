//! Continuum fields on the grid (SPEC §2–3): density splat ([`density`]), the optional
//! density window ([`window`]), anisotropic speed ([`speed()`]) and unit cost ([`cost`]).
//!
//! Values that the SPEC samples "r ahead" (density, average velocity, discomfort) are read
//! along the face's axis at `max(lookahead, cell_size)` metres from the cell centre, linearly
//! interpolated between the two cells around that point, clamped to the domain (a sample past
//! the border reads the last cell on the line).

pub mod cost;
pub mod density;
pub mod speed;
pub mod window;

pub use cost::{unit_cost, unit_cost_with};
pub use density::splat;
pub use speed::{SceneFaces, speed, speed_and_cost_with, speed_with};

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
    if dc != 0 {
        AheadTap::new(c, cols, (dr + dc) as f64, ahead).sample(|i| field[[r, i]])
    } else {
        AheadTap::new(r, rows, (dr + dc) as f64, ahead).sample(|i| field[[i, c]])
    }
}

/// Where [`sample_ahead`] reads for one start index on an axis of `n` cells: the two cells
/// around the point `ahead` cells away and the interpolation weight. It depends on the start
/// index only (the column for east and west, the row for north and south), so the per-step
/// fields compute it once per column and row ([`AheadTaps`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AheadTap {
    lo: usize,
    hi: usize,
    t: f64,
}

impl AheadTap {
    /// The tap for `start` on an axis of `n > 0` cells, looking `ahead` cells toward `sign`
    /// (`+1.0` or `-1.0`).
    pub fn new(start: usize, n: usize, sign: f64, ahead: f64) -> Self {
        let pos = (start as f64 + sign * ahead).clamp(0.0, (n - 1) as f64);
        let lo = pos.floor() as usize;
        Self {
            lo,
            hi: (lo + 1).min(n - 1),
            t: pos - lo as f64,
        }
    }

    /// The one index this tap reads, when the point falls on a cell centre (`sample` then
    /// gives that cell's value exactly), else `None`.
    #[inline(always)]
    pub fn exact(&self) -> Option<usize> {
        (self.t == 0.0).then_some(self.lo)
    }

    /// The interpolated value, with `at(i)` the field at index `i` along the axis.
    #[inline(always)]
    pub fn sample(&self, at: impl Fn(usize) -> f32) -> f64 {
        let a = at(self.lo) as f64;
        if self.t == 0.0 {
            a
        } else {
            a + self.t * (at(self.hi) as f64 - a)
        }
    }
}

/// The [`AheadTap`]s of a grid for every direction: per column for east and west, per row for
/// north and south.
#[derive(Clone, Debug)]
pub struct AheadTaps {
    east: Vec<AheadTap>,
    west: Vec<AheadTap>,
    north: Vec<AheadTap>,
    south: Vec<AheadTap>,
}

impl AheadTaps {
    /// The taps of a `rows x cols` grid (both non-zero) looking `ahead` cells.
    pub fn new(rows: usize, cols: usize, ahead: f64) -> Self {
        let axis = |n: usize, sign: f64| (0..n).map(|k| AheadTap::new(k, n, sign, ahead)).collect();
        Self {
            east: axis(cols, 1.0),
            west: axis(cols, -1.0),
            north: axis(rows, 1.0),
            south: axis(rows, -1.0),
        }
    }

    /// The row-major index of the one cell [`AheadTaps::sample`] reads for `(r, c, d)`, when it
    /// reads one cell's value exactly ([`AheadTap::exact`]), else `None`.
    #[inline(always)]
    pub fn cell_read(&self, cols: usize, r: usize, c: usize, d: Dir) -> Option<usize> {
        match d {
            Dir::E => self.east[c].exact().map(|i| r * cols + i),
            Dir::W => self.west[c].exact().map(|i| r * cols + i),
            Dir::N => self.north[r].exact().map(|i| i * cols + c),
            Dir::S => self.south[r].exact().map(|i| i * cols + c),
        }
    }

    /// [`sample_ahead`] of a row-major `field` with `cols` columns: the same value, bit for bit.
    #[inline(always)]
    pub fn sample(&self, field: &[f32], cols: usize, r: usize, c: usize, d: Dir) -> f64 {
        match d {
            Dir::E => self.east[c].sample(|i| field[r * cols + i]),
            Dir::W => self.west[c].sample(|i| field[r * cols + i]),
            Dir::N => self.north[r].sample(|i| field[i * cols + c]),
            Dir::S => self.south[r].sample(|i| field[i * cols + c]),
        }
    }
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
        let taps = AheadTaps::new(2, 4, 1.5);
        let flat = f.as_slice().expect("row-major");
        for (r, c, d) in [(0, 0, Dir::E), (0, 3, Dir::W), (1, 1, Dir::S), (0, 2, Dir::N)] {
            assert_eq!(
                taps.sample(flat, 4, r, c, d),
                sample_ahead(f.view(), r, c, d, 1.5)
            );
        }
        assert_eq!(lookahead_cells(2.0, 0.5), 4.0);
    }
}
