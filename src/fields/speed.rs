//! Anisotropic walking speed f(x, theta) (SPEC §3): terrain speed from the slope across each
//! face, flow speed and density looked up `lookahead` metres ahead, blended linearly between
//! `rho_min` and `rho_max` (or Weidmann's fundamental diagram).
//!
//! Choices the SPEC leaves open, written down:
//! - The slope for direction theta is `(h(neighbour) - h(cell)) / cell_size`, the height
//!   difference across that face (a one-sided difference, so uphill and downhill differ).
//! - The flow speed is floored at `f_min` (not 0), so a dense crowd walking the other way makes
//!   a face slow but never impassable; the potential stays finite wherever a path exists.
//! - Weidmann's law uses the terrain speed as its free speed:
//!   `f = max(f_min, f_T (1 - exp(-gamma_w (1/rho - 1/rho_jam))))`, `f_T` where `rho <= 0`.
//! - `f` is 0 out of obstacle cells and across faces into obstacles or out of the domain.
//!
//! Two options of the model parameters change which density a face reads (both off by
//! default, which is SPEC §3 exactly): `density_window` first averages the splat over a square
//! of that area around each cell ([`super::window`]; the mean velocity too, weighted by
//! density), and `density_at_walker` makes each face read the larger of the density ahead and
//! the density of its own cell (the walker's).

use super::cost::face_cost;
use super::window::{DensityWindow, open_area, window_average};
use super::{AheadTaps, Density, lookahead_cells, sample_ahead};
use crate::grid::{Dir, Grid};
use crate::params::{Params, SpeedLaw};
use crate::scene::Scene;
use ndarray::{Array3, ArrayView2};
use rayon::prelude::*;

/// Terrain speed for slope `s` (height gained per metre walked), SPEC §3:
/// `f_max` at or below `s_min`, `f_min` at or above `s_max`, linear between.
pub fn terrain_speed(p: &Params, s: f64) -> f64 {
    if s <= p.s_min {
        return p.f_max;
    }
    if s >= p.s_max {
        return p.f_min;
    }
    let t = (s - p.s_min) / (p.s_max - p.s_min);
    p.f_max + t * (p.f_min - p.f_max)
}

/// Walking speed from the terrain speed `f_t`, the flow speed `f_v` and the density `rho`
/// (persons/m²) ahead, by the scene's speed law.
pub fn blend_speed(p: &Params, f_t: f64, f_v: f64, rho: f64) -> f64 {
    match p.speed_law {
        SpeedLaw::Linear => {
            if rho <= p.rho_min {
                f_t
            } else if rho >= p.rho_max {
                f_v
            } else {
                f_t + (rho - p.rho_min) / (p.rho_max - p.rho_min) * (f_v - f_t)
            }
        }
        SpeedLaw::Weidmann => {
            if rho <= 0.0 {
                return f_t;
            }
            weidmann_blend(p, f_t, weidmann_factor(p, rho))
        }
    }
}

/// The share of the free speed Weidmann's diagram keeps at density `rho > 0`:
/// `1 - exp(-gamma_w (1/rho - 1/rho_jam))`.
#[inline]
pub fn weidmann_factor(p: &Params, rho: f64) -> f64 {
    1.0 - (-p.weidmann_gamma * (1.0 / rho - 1.0 / p.weidmann_rho_jam)).exp()
}

/// Weidmann's speed for terrain speed `f_t` and [`weidmann_factor`] `factor`, floored at `f_min`.
#[inline]
fn weidmann_blend(p: &Params, f_t: f64, factor: f64) -> f64 {
    (f_t * factor).max(p.f_min)
}

/// Anisotropic walking speed f(x, theta), m/s, shape `(rows, cols, 4)`; 0 out of obstacle cells
/// and across faces into obstacles or out of the domain. Rows are computed in parallel; each
/// value depends only on the inputs, so the result does not depend on the thread count.
pub fn speed(scene: &Scene, density: &Density) -> Array3<f32> {
    speed_with(scene, &SceneFaces::new(scene), density)
}

/// What the speed and cost fields take from the scene alone, per face: whether it is open,
/// the terrain speed across it and the discomfort ahead of it; and with a density window
/// (`params.density_window`), the window and each cell's open area in it. A simulation computes it once
/// and reuses it every step ([`speed_with`], [`super::cost::unit_cost_with`]); the values are
/// exactly those [`speed`] and [`super::unit_cost`] compute on the fly.
#[derive(Clone, Debug)]
pub struct SceneFaces {
    /// Terrain speed `f_T` per face, `(rows, cols, 4)` row-major; `NaN` marks a closed face.
    terrain: Vec<f64>,
    /// Discomfort `g` sampled ahead per face (non-finite samples read as 0).
    discomfort: Vec<f64>,
    /// The density window of `params.density_window` and each cell's open area in it, or
    /// `None` without a window.
    window: Option<(DensityWindow, Vec<f64>)>,
}

impl SceneFaces {
    /// The scene's faces (rows in parallel).
    pub fn new(scene: &Scene) -> Self {
        let grid = scene.grid;
        let p = &scene.params;
        let ahead = lookahead_cells(p.lookahead, grid.cell_size);
        let per_row = grid.cols * 4;
        let mut terrain = vec![f64::NAN; grid.len() * 4];
        let mut discomfort = vec![0.0; grid.len() * 4];
        terrain
            .par_chunks_mut(per_row.max(1))
            .zip(discomfort.par_chunks_mut(per_row.max(1)))
            .enumerate()
            .for_each(|(r, (t_row, g_row))| {
                for c in 0..grid.cols {
                    for d in Dir::ALL {
                        if !face_open(&grid, scene.obstacle.view(), r, c, d) {
                            continue;
                        }
                        let (nr, nc) = grid.neighbor(r, c, d).expect("open face has a neighbour");
                        let slope =
                            (scene.height[[nr, nc]] as f64 - scene.height[[r, c]] as f64) / grid.cell_size;
                        t_row[c * 4 + d.index()] =
                            terrain_speed(p, if slope.is_finite() { slope } else { 0.0 });
                        let g = sample_ahead(scene.discomfort.view(), r, c, d, ahead);
                        g_row[c * 4 + d.index()] = if g.is_finite() { g } else { 0.0 };
                    }
                }
            });
        let window = DensityWindow::new(p.density_window, grid.cell_size)
            .map(|w| (w, open_area(scene.obstacle.view(), w)));
        Self {
            terrain,
            discomfort,
            window,
        }
    }

    /// The density the speed field reads: `density` itself without a density window, else its
    /// window average ([`super::window::window_average`]).
    pub fn density_read<'a>(&self, grid: &Grid, density: &'a Density) -> std::borrow::Cow<'a, Density> {
        match &self.window {
            None => std::borrow::Cow::Borrowed(density),
            Some((w, open)) => std::borrow::Cow::Owned(window_average(grid, density, open, *w)),
        }
    }

    /// Terrain speed across face `d` of cell `i` (row-major index), `None` when closed.
    #[inline]
    pub fn terrain(&self, i: usize, d: Dir) -> Option<f64> {
        let t = self.terrain[i * 4 + d.index()];
        (!t.is_nan()).then_some(t)
    }

    /// Discomfort ahead across face `d` of cell `i` (0 on closed faces).
    #[inline]
    pub fn discomfort(&self, i: usize, d: Dir) -> f64 {
        self.discomfort[i * 4 + d.index()]
    }
}

/// [`speed`] with the scene's faces computed beforehand (the same values). Rows in parallel
/// over contiguous slices, the look-ahead sample positions taken from [`AheadTaps`].
/// `density` is the splat; with a density window the speed reads its window average
/// ([`SceneFaces::density_read`]).
pub fn speed_with(scene: &Scene, faces: &SceneFaces, density: &Density) -> Array3<f32> {
    speed_and_cost_with(scene, faces, density).0
}

/// The speed ([`speed_with`]) and the unit cost ([`super::cost::unit_cost_with`] of that speed)
/// in one pass over the faces, the same values bit for bit: each face's cost is computed from
/// its speed while both are in registers, so a step reads the density and the scene's faces
/// once and writes each field once.
pub fn speed_and_cost_with(
    scene: &Scene,
    faces: &SceneFaces,
    density: &Density,
) -> (Array3<f32>, Array3<f32>) {
    let grid = scene.grid;
    let p = &scene.params;
    let mut f = Array3::<f32>::zeros(grid.dir_shape());
    let mut cost = Array3::<f32>::from_elem(grid.dir_shape(), f32::INFINITY);
    if grid.is_empty() {
        return (f, cost);
    }
    let density = faces.density_read(&grid, density);
    let at_walker = p.density_at_walker;
    let cols = grid.cols;
    let taps = AheadTaps::new(grid.rows, cols, lookahead_cells(p.lookahead, grid.cell_size));
    let (rho, vx, vy) = (
        density.rho.as_standard_layout(),
        density.vx.as_standard_layout(),
        density.vy.as_standard_layout(),
    );
    let contiguous = "standard layout is contiguous";
    let (rho, vx, vy) = (
        rho.as_slice().expect(contiguous),
        vx.as_slice().expect(contiguous),
        vy.as_slice().expect(contiguous),
    );
    // Weidmann's factor per cell: where a face reads the density of one cell (a whole number
    // of cells ahead, or its own cell), it takes that cell's factor, one `exp` per cell rather
    // than one per face.
    let factors: Vec<f64> = if p.speed_law == SpeedLaw::Weidmann {
        rho.par_iter()
            .map(|&v| {
                if v > 0.0 {
                    weidmann_factor(p, v as f64)
                } else {
                    f64::NAN
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let fresh = "a new array is contiguous";
    f.as_slice_mut()
        .expect(fresh)
        .par_chunks_mut(cols * 4)
        .zip(cost.as_slice_mut().expect(fresh).par_chunks_mut(cols * 4))
        .enumerate()
        .for_each(|(r, (row, cost_row))| {
            for c in 0..cols {
                let i = r * cols + c;
                for d in Dir::ALL {
                    let Some(f_t) = faces.terrain(i, d) else {
                        continue;
                    };
                    let sample = |field: &[f32]| taps.sample(field, cols, r, c, d);
                    let (ux, uy) = d.unit();
                    let v_along = sample(vx) * ux + sample(vy) * uy;
                    let mut rho_face = sample(rho);
                    // The cell whose density the face reads, when it reads one cell's.
                    let mut source = taps.cell_read(cols, r, c, d);
                    if at_walker {
                        if rho[i] as f64 > rho_face {
                            source = Some(i);
                        }
                        rho_face = rho_face.max(rho[i] as f64);
                    }
                    let speed = match source {
                        Some(k) if !factors.is_empty() && rho_face > 0.0 => {
                            finite_speed(weidmann_blend(p, f_t, factors[k]))
                        }
                        _ => face_speed(p, f_t, rho_face, v_along),
                    } as f32;
                    let k = c * 4 + d.index();
                    row[k] = speed;
                    cost_row[k] =
                        face_cost(p.alpha, p.beta, p.gamma, speed as f64, faces.discomfort(i, d)) as f32;
                }
            }
        });
    (f, cost)
}

/// True when a walker may leave cell `(r, c)` in direction `d`: the cell is free and the
/// neighbour exists and is free.
pub fn face_open(grid: &Grid, obstacle: ArrayView2<bool>, r: usize, c: usize, d: Dir) -> bool {
    if obstacle[[r, c]] {
        return false;
    }
    match grid.neighbor(r, c, d) {
        Some((nr, nc)) => !obstacle[[nr, nc]],
        None => false,
    }
}

/// Speed across one open face with terrain speed `f_t`, the density `rho` ahead and the average
/// velocity ahead along the face's direction `v_along`, see [`speed`].
fn face_speed(p: &Params, f_t: f64, rho: f64, v_along: f64) -> f64 {
    let f_v = if v_along.is_finite() {
        v_along.max(p.f_min)
    } else {
        p.f_min
    };
    finite_speed(blend_speed(p, f_t, f_v, rho))
}

/// A face's speed as the field holds it: non-negative, 0 where not finite.
#[inline]
fn finite_speed(f: f64) -> f64 {
    if f.is_finite() { f.max(0.0) } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The speed of one face computed the first way, through [`sample_ahead`] on views.
    fn reference_face(scene: &Scene, density: &Density, r: usize, c: usize, d: Dir) -> f32 {
        let p = &scene.params;
        if !face_open(&scene.grid, scene.obstacle.view(), r, c, d) {
            return 0.0;
        }
        let ahead = lookahead_cells(p.lookahead, scene.grid.cell_size);
        let (nr, nc) = scene.grid.neighbor(r, c, d).expect("open face");
        let slope = (scene.height[[nr, nc]] as f64 - scene.height[[r, c]] as f64) / scene.grid.cell_size;
        let f_t = terrain_speed(p, slope);
        let rho = sample_ahead(density.rho.view(), r, c, d, ahead);
        let (ux, uy) = d.unit();
        let v_along = sample_ahead(density.vx.view(), r, c, d, ahead) * ux
            + sample_ahead(density.vy.view(), r, c, d, ahead) * uy;
        face_speed(p, f_t, rho, v_along) as f32
    }

    #[test]
    fn speed_matches_per_face_sampling_bit_for_bit() {
        let grid = crate::grid::Grid::new(23, 17, 0.4);
        let mut scene = Scene::empty("speed", grid);
        // A non-integer look-ahead (2.75 cells), a slope, a few obstacles, a dense moving crowd.
        scene.params.lookahead = 1.1;
        let scramble = |i: usize| ((i.wrapping_mul(2654435761) % 1_000_003) as f32) / 1_000_003.0;
        for ((r, c), h) in scene.height.indexed_iter_mut() {
            *h = 0.05 * (r * c) as f32;
        }
        for ((r, c), o) in scene.obstacle.indexed_iter_mut() {
            *o = (r * 23 + c) % 19 == 0;
        }
        let density = Density {
            rho: ndarray::Array2::from_shape_fn(grid.shape(), |(r, c)| 6.0 * scramble(r * 23 + c)),
            vx: ndarray::Array2::from_shape_fn(grid.shape(), |(r, c)| scramble(r * 31 + c) - 0.5),
            vy: ndarray::Array2::from_shape_fn(grid.shape(), |(r, c)| 1.2 * scramble(r * 7 + c * 3) - 0.4),
        };
        let f = speed(&scene, &density);
        let mut between = 0;
        for ((r, c, k), &v) in f.indexed_iter() {
            let want = reference_face(&scene, &density, r, c, Dir::ALL[k]);
            assert_eq!(v.to_bits(), want.to_bits(), "({r}, {c}, {k})");
            between += (v > scene.params.f_min as f32 && v < 1.0) as usize;
        }
        assert!(between > 100, "the density blend is exercised: {between} faces");
    }

    #[test]
    fn speed_and_cost_in_one_pass_are_those_of_each_face_on_its_own() {
        let grid = crate::grid::Grid::new(21, 15, 0.25);
        let scramble = |i: usize| ((i.wrapping_mul(2654435761) % 1_000_003) as f32) / 1_000_003.0;
        let density = Density {
            // Empty cells among the crowd: faces that read no one beside faces that do.
            rho: ndarray::Array2::from_shape_fn(grid.shape(), |(r, c)| {
                let v = scramble(r * 21 + c);
                if v < 0.3 { 0.0 } else { 8.0 * v * v }
            }),
            vx: ndarray::Array2::from_shape_fn(grid.shape(), |(r, c)| scramble(r * 31 + c) - 0.5),
            vy: ndarray::Array2::from_shape_fn(grid.shape(), |(r, c)| scramble(r * 7 + c * 3) - 0.4),
        };
        // The pedestrian preset (Weidmann, a 1 m² window, the density at the walker) with the
        // look-ahead a whole number of cells (one cell's factor per face) and not (interpolated).
        for (lookahead, at_walker) in [(1.0, true), (1.1, true), (1.0, false)] {
            let mut scene = Scene::empty("one pass", grid);
            scene.params = Params::pedestrian();
            scene.params.lookahead = lookahead;
            scene.params.density_at_walker = at_walker;
            for ((r, c), o) in scene.obstacle.indexed_iter_mut() {
                *o = (r * 21 + c) % 17 == 0;
            }
            for ((r, c), g) in scene.discomfort.indexed_iter_mut() {
                *g = scramble(r * 5 + c * 11);
            }
            let faces = SceneFaces::new(&scene);
            let (speed, cost) = speed_and_cost_with(&scene, &faces, &density);
            let read = faces.density_read(&grid, &density);
            let p = &scene.params;
            let ahead = lookahead_cells(p.lookahead, grid.cell_size);
            let mut slowed = 0;
            for ((r, c, k), &v) in speed.indexed_iter() {
                let d = Dir::ALL[k];
                let i = r * grid.cols + c;
                let (want_speed, want_cost) = match faces.terrain(i, d) {
                    None => (0.0f32, f32::INFINITY),
                    Some(f_t) => {
                        let mut rho = sample_ahead(read.rho.view(), r, c, d, ahead);
                        if at_walker {
                            rho = rho.max(read.rho[[r, c]] as f64);
                        }
                        let (ux, uy) = d.unit();
                        let v_along = sample_ahead(read.vx.view(), r, c, d, ahead) * ux
                            + sample_ahead(read.vy.view(), r, c, d, ahead) * uy;
                        let f = face_speed(p, f_t, rho, v_along) as f32;
                        let g = faces.discomfort(i, d);
                        (f, face_cost(p.alpha, p.beta, p.gamma, f as f64, g) as f32)
                    }
                };
                assert_eq!(v.to_bits(), want_speed.to_bits(), "{lookahead} ({r}, {c}, {k})");
                assert_eq!(
                    cost[[r, c, k]].to_bits(),
                    want_cost.to_bits(),
                    "{lookahead} ({r}, {c}, {k})"
                );
                slowed += (v > 0.0 && (v as f64) < p.f_max * 0.9) as usize;
            }
            assert!(slowed > 100, "the diagram is exercised: {slowed} faces");
        }
    }

    #[test]
    fn density_at_walker_slows_a_face_leaving_a_dense_cell_into_an_empty_one() {
        let grid = crate::grid::Grid::new(12, 5, 0.5);
        // A packed cell (5 persons/m²) with nobody ahead of its east face (the look-ahead of
        // 1 m is two cells): the door of a packed room.
        let mut density = Density::empty(&grid);
        density.rho[(2, 5)] = 5.0;
        density.vx[(2, 5)] = 0.2;
        for law in [SpeedLaw::Linear, SpeedLaw::Weidmann] {
            let mut scene = Scene::empty("walker", grid);
            scene.params.speed_law = law;
            let before = speed(&scene, &density);
            let east = (2, 5, Dir::E.index());
            assert_eq!(
                before[east] as f64, scene.params.f_max as f32 as f64,
                "{law:?}: free ahead"
            );
            scene.params.density_at_walker = true;
            let after = speed(&scene, &density);
            assert!(
                after[east] <= 0.2,
                "{law:?}: {} m/s out of the packed cell",
                after[east]
            );
            // Faces of the empty cells around, which read nobody ahead or at themselves, keep
            // their speed; a face reading the packed cell ahead was slow already.
            assert_eq!(after[(2, 8, 0)], before[(2, 8, 0)]);
            assert_eq!(after[(2, 3, 0)], before[(2, 3, 0)]);
            assert!(before[(2, 3, 0)] <= 0.2);
        }
    }

    #[test]
    fn a_density_window_is_the_speed_of_the_window_average() {
        let grid = crate::grid::Grid::new(19, 14, 0.25);
        let mut scene = Scene::empty("window", grid);
        for r in 3..11 {
            scene.obstacle[(r, 12)] = r != 7;
        }
        let scramble = |i: usize| ((i.wrapping_mul(2654435761) % 1_000_003) as f32) / 1_000_003.0;
        let density = Density {
            rho: ndarray::Array2::from_shape_fn(grid.shape(), |(r, c)| 30.0 * scramble(r * 19 + c).powi(3)),
            vx: ndarray::Array2::from_shape_fn(grid.shape(), |(r, c)| scramble(r * 31 + c) - 0.5),
            vy: ndarray::Array2::from_shape_fn(grid.shape(), |(r, c)| scramble(r * 7 + c * 3) - 0.4),
        };
        let plain = speed(&scene, &density);
        scene.params.density_window = 1.0;
        let windowed = speed(&scene, &density);
        let w = crate::fields::window::DensityWindow::new(1.0, 0.25).unwrap();
        let open = open_area(scene.obstacle.view(), w);
        let average = window_average(&grid, &density, &open, w);
        scene.params.density_window = 0.0;
        assert_eq!(windowed, speed(&scene, &average));
        assert_ne!(windowed, plain, "the window changes the speed");
    }

    #[test]
    fn terrain_speed_is_linear_between_the_slope_limits() {
        let p = Params::default();
        assert_eq!(terrain_speed(&p, -1.0), p.f_max);
        assert_eq!(terrain_speed(&p, 0.0), p.f_max);
        assert_eq!(terrain_speed(&p, 0.5), p.f_min);
        assert_eq!(terrain_speed(&p, 2.0), p.f_min);
        let mid = terrain_speed(&p, 0.25);
        assert!((mid - 0.5 * (p.f_min + p.f_max)).abs() < 1e-12);
    }

    #[test]
    fn linear_blend_hits_both_ends() {
        let p = Params::default();
        assert_eq!(blend_speed(&p, 1.2, 0.3, 1.0), 1.2);
        assert_eq!(blend_speed(&p, 1.2, 0.3, 6.0), 0.3);
        assert!((blend_speed(&p, 1.2, 0.3, 3.5) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn weidmann_matches_the_fundamental_diagram() {
        let p = Params {
            speed_law: SpeedLaw::Weidmann,
            ..Params::default()
        };
        assert_eq!(blend_speed(&p, 1.34, 0.0, 0.0), 1.34);
        // Weidmann (1993): about 1.06 m/s at 1 person/m².
        let v1 = blend_speed(&p, 1.34, 0.0, 1.0);
        assert!((v1 - 1.06).abs() < 0.01, "{v1}");
        // At and past the jam density the floor f_min holds.
        assert_eq!(blend_speed(&p, 1.34, 0.0, 5.4), p.f_min);
        assert_eq!(blend_speed(&p, 1.34, 0.0, 9.0), p.f_min);
    }
}
