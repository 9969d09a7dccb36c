//! Speed regions in the planner's fields: inside a region every face leaving one of its cells
//! has its speed scaled by the region's factor and its unit cost recomputed with the region's
//! discomfort added, so the potentials see a slow zone (and a change of it) in the step it
//! happens. The walkers' own speed is scaled by [`RegionState::factor_at`] (`crate::sim`).
//! The regions' fields are the CPU's: a run with regions keeps its continuum step on the CPU.

use crate::fields::cost::face_cost;
use crate::grid::Dir;
use crate::routes::Region;
use crate::scene::Scene;
use ndarray::{Array2, Array3};

/// The regions of a run with their current values.
#[derive(Clone, Debug, Default)]
pub struct RegionState {
    /// Each region's cells, speed factor and discomfort.
    regions: Vec<Region>,
    /// Per cell, the product of the factors of the regions over it (empty without regions).
    factor: Array2<f32>,
    /// Per cell, the sum of the discomforts of the regions over it (empty without regions).
    discomfort: Array2<f32>,
}

impl RegionState {
    /// The regions of `scene` at their map values.
    pub fn new(scene: &Scene) -> Self {
        let mut s = Self {
            regions: scene.schedule.routes.regions.clone(),
            ..Self::default()
        };
        s.rebuild(scene.grid.shape());
        s
    }

    /// Whether there is any region.
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }

    /// The regions with their current values.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// Sets region `k`'s speed factor and discomfort (`None` leaves one as it is); returns
    /// whether anything changed.
    pub fn set(&mut self, k: usize, speed_factor: Option<f64>, discomfort: Option<f64>) -> bool {
        let Some(r) = self.regions.get_mut(k) else {
            return false;
        };
        let before = (r.speed_factor, r.discomfort);
        r.speed_factor = speed_factor.unwrap_or(r.speed_factor);
        r.discomfort = discomfort.unwrap_or(r.discomfort);
        if before == (r.speed_factor, r.discomfort) {
            return false;
        }
        let shape = self.factor.dim();
        self.rebuild(shape);
        true
    }

    fn rebuild(&mut self, shape: (usize, usize)) {
        if self.regions.is_empty() {
            return;
        }
        self.factor = Array2::from_elem(shape, 1.0);
        self.discomfort = Array2::zeros(shape);
        for r in &self.regions {
            for rc in r.mask.cells() {
                if let Some(f) = self.factor.get_mut(rc) {
                    *f *= r.speed_factor as f32;
                    self.discomfort[rc] += r.discomfort as f32;
                }
            }
        }
    }

    /// The speed factor at cell `rc` (1 outside every region).
    #[inline]
    pub fn factor_at(&self, rc: (usize, usize)) -> f32 {
        self.factor.get(rc).copied().unwrap_or(1.0)
    }

    /// Scales the speed of every face leaving a region's cell and recomputes its cost with the
    /// region's discomfort added (`speed`, `cost`: `(rows, cols, 4)`, as
    /// [`crate::fields::speed_and_cost_with`] gives them).
    pub fn apply(
        &self,
        scene: &Scene,
        faces: &crate::fields::SceneFaces,
        speed: &mut Array3<f32>,
        cost: &mut Array3<f32>,
    ) {
        if self.regions.is_empty() {
            return;
        }
        let p = &scene.params;
        let cols = scene.grid.cols;
        for ((r, c), &f) in self.factor.indexed_iter() {
            let g = self.discomfort[(r, c)];
            if f == 1.0 && g == 0.0 {
                continue;
            }
            for d in Dir::ALL {
                let k = d.index();
                if faces.terrain(r * cols + c, d).is_none() {
                    continue;
                }
                let s = speed[(r, c, k)] * f;
                speed[(r, c, k)] = s;
                let discomfort = faces.discomfort(r * cols + c, d) + g as f64;
                cost[(r, c, k)] = face_cost(p.alpha, p.beta, p.gamma, s as f64, discomfort) as f32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::{Density, SceneFaces};
    use crate::grid::Grid;
    use crate::routes::Region;
    use ndarray::Array2;

    #[test]
    fn a_region_scales_its_faces_speed_and_adds_its_discomfort_to_their_cost() {
        let mut scene = Scene::empty("regions", Grid::new(4, 3, 1.0));
        let window = Array2::from_elem((1, 2), true);
        let mask = crate::scene::CellMask::from_window((3, 4), (1, 1), window);
        scene.schedule.routes.regions.push(Region {
            name: "slow".into(),
            mask: mask.clone(),
            speed_factor: 0.5,
            discomfort: 0.0,
        });
        scene.schedule.routes.regions.push(Region {
            name: "smoky".into(),
            mask,
            speed_factor: 0.5,
            discomfort: 2.0,
        });
        let faces = SceneFaces::new(&scene);
        let density = Density::empty(&scene.grid);
        let (speed0, cost0) = crate::fields::speed_and_cost_with(&scene, &faces, &density);
        let (mut speed, mut cost) = (speed0.clone(), cost0.clone());
        let state = RegionState::new(&scene);
        assert_eq!(state.factor_at((1, 1)), 0.25);
        assert_eq!(state.factor_at((0, 0)), 1.0);
        state.apply(&scene, &faces, &mut speed, &mut cost);
        let p = &scene.params;
        for ((r, c, k), &s) in speed.indexed_iter() {
            let inside = r == 1 && (c == 1 || c == 2);
            if inside && speed0[(r, c, k)] > 0.0 {
                assert_eq!(s, speed0[(r, c, k)] * 0.25);
                let expected = (p.alpha * s as f64 + p.beta + p.gamma * 2.0) / s as f64;
                assert!((cost[(r, c, k)] as f64 - expected).abs() < 1e-5 * expected);
            } else {
                assert_eq!((s, cost[(r, c, k)]), (speed0[(r, c, k)], cost0[(r, c, k)]));
            }
        }
    }
}
