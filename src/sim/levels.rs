//! What a planner reads off a run place by place: the worst Fruin level of service each cell
//! reached, how long it spent at each level, and the time it was last occupied (its clear
//! time, the RSET map). Updated once per step from the measured density and the agents'
//! cells; no I/O (the images and arrays are written by [`crate::run::planner`]).
//!
//! Levels of service follow Fruin's walkway table (J. J. Fruin, *Pedestrian Planning and
//! Design*, 1971, walkways): area per pedestrian of at least 35, 25, 15, 10 and 5 ft² for
//! levels A to E, less than 5 ft² for F. As densities (persons/m², 1 ft² = 0.09290304 m²):
//! A up to 0.308, B up to 0.431, C up to 0.718, D up to 1.076, E up to 2.153, F above. A density
//! exactly on a boundary belongs to the better level (its area per person meets the better
//! level's minimum).
//!
//! Fruin's levels are areas per person over a walkway, so the density they are read from is
//! counted over a walkway-sized area: the persons in a square of at least [`LOS_AREA_M2`]
//! (2 m x 2 m) around the cell over the square's area ([`super::measure::measured_density_over`]),
//! never the model's per-cell splat nor the 1 m² of the peak density. On 1 m² one person
//! alone reads 1 person/m² (level D) and two people passing 2 (E); on 4 m² they read 0.25 (A)
//! and 0.5 (C), while a crowd of 2 persons/m² or more, such as the queue at a door, still reads
//! E or F. The square counts walls inside it as area, so a lone walker reads A anywhere.
//!
//! The levels count the walkers who have started, walking or queueing: a person still in
//! its pre-movement time stands where it was placed and is no queue, so a room full of people
//! waiting to start reads A (a place they stand on has a level, not "no one came near") until
//! those who walk crowd it.

use crate::grid::Grid;
use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

/// The least area a level of service's density is counted over, m²: a 2 m x 2 m square of
/// walkway (see the module comment).
pub const LOS_AREA_M2: f64 = 4.0;

/// The value of `los_worst.npy` for a wall and for a place no one came near (nobody stood in
/// the [`LOS_AREA_M2`] square around it during the run): no level.
pub const NO_LEVEL: u8 = 255;

/// Square metres in one square foot (exact by definition of the international foot).
const FT2_IN_M2: f64 = 0.092_903_04;

/// Fruin's walkway minimum area per pedestrian of levels A to E, ft² (F is below E's).
const FRUIN_WALKWAY_FT2: [f64; 5] = [35.0, 25.0, 15.0, 10.0, 5.0];

/// The six levels of service, best first.
pub const LEVELS: [char; 6] = ['A', 'B', 'C', 'D', 'E', 'F'];

/// Index of level E in [`LEVELS`]: from it on a place is crowded (the "time at E or F" map).
pub const LEVEL_E: usize = 4;

/// The highest density of levels A to E, persons/m² (level `i` holds densities up to and
/// including `fruin_upper_bounds()[i]`; F is everything above the last).
pub fn fruin_upper_bounds() -> [f64; 5] {
    FRUIN_WALKWAY_FT2.map(|ft2| 1.0 / (ft2 * FT2_IN_M2))
}

/// The level of service (index into [`LEVELS`]) of a density in persons/m².
pub fn level_of(density: f64) -> usize {
    let bounds = fruin_upper_bounds();
    bounds
        .iter()
        .position(|&b| density <= b)
        .unwrap_or(LEVELS.len() - 1)
}

/// The level of service of a measured density held in f32 (as the density maps are): the
/// bounds are rounded to f32 first, so a map holding a bound exactly reads the better level.
pub fn level_of_f32(density: f32) -> usize {
    let bounds = fruin_upper_bounds();
    bounds
        .iter()
        .position(|&b| density <= b as f32)
        .unwrap_or(LEVELS.len() - 1)
}

/// Per-cell level-of-service and clear-time bookkeeping of a run.
#[derive(Clone, Debug)]
pub struct PlaceLog {
    /// Worst level reached in each cell (index into [`LEVELS`]); obstacle cells, and cells no
    /// one came near, stay 0 (A) here ([`PlaceLog::worst_level_map`] marks them).
    pub worst_level: Array2<u8>,
    /// Whether anyone (walking, queueing or waiting to start) stood in the square around each
    /// cell at some sample.
    pub reached: Array2<bool>,
    /// Seconds each cell spent at each level: `seconds_at[level]` is a per-cell map.
    pub seconds_at: Vec<Array2<f32>>,
    /// Time each cell was last seen occupied at the end of a step (or at the start), seconds;
    /// NaN for a cell nobody stood on.
    pub last_occupied: Array2<f64>,
    /// Whether each cell was occupied at the last sample.
    pub occupied_now: Array2<bool>,
    /// Interval between samples (the time step), seconds.
    pub dt: f64,
}

impl PlaceLog {
    /// An empty log on `grid`, sampled every `dt` seconds.
    pub fn new(grid: &Grid, dt: f64) -> Self {
        Self {
            worst_level: Array2::zeros(grid.shape()),
            reached: Array2::from_elem(grid.shape(), false),
            seconds_at: (0..LEVELS.len()).map(|_| Array2::zeros(grid.shape())).collect(),
            last_occupied: Array2::from_elem(grid.shape(), f64::NAN),
            occupied_now: Array2::from_elem(grid.shape(), false),
            dt,
        }
    }

    /// Adds one step of `dt` seconds to the cells that are not obstacles, at the measured
    /// densities (persons/m², over [`LOS_AREA_M2`]) of the walkers who have started
    /// (`started`); `everyone` is the same count over every person, those still in their
    /// pre-movement time too, and marks the places someone came near.
    pub fn record_levels(
        &mut self,
        started: ArrayView2<f32>,
        everyone: ArrayView2<f32>,
        obstacle: ArrayView2<bool>,
    ) {
        let dt = self.dt as f32;
        for (((rc, &rho), &anyone), &blocked) in
            started.indexed_iter().zip(everyone.iter()).zip(obstacle.iter())
        {
            if blocked {
                continue;
            }
            if anyone > 0.0 || rho > 0.0 {
                self.reached[rc] = true;
            }
            let level = level_of_f32(rho);
            let worst = &mut self.worst_level[rc];
            *worst = (*worst).max(level as u8);
            self.seconds_at[level][rc] += dt;
        }
    }

    /// The worst level of each cell as `los_worst.npy` holds it: an index into [`LEVELS`]
    /// (0 = A … 5 = F), [`NO_LEVEL`] for the obstacles of `obstacle` and for the cells no one
    /// came near.
    pub fn worst_level_map(&self, obstacle: ArrayView2<bool>) -> Array2<u8> {
        let mut map = self.worst_level.clone();
        for ((level, &blocked), &reached) in map.iter_mut().zip(obstacle.iter()).zip(self.reached.iter()) {
            if blocked || !reached {
                *level = NO_LEVEL;
            }
        }
        map
    }

    /// Notes which cells hold an agent (`xs`, `ys`) at time `t`.
    pub fn record_occupancy(&mut self, grid: &Grid, xs: &[f32], ys: &[f32], t: f64) {
        self.occupied_now.fill(false);
        for (&x, &y) in xs.iter().zip(ys) {
            if let Some(rc) = grid.cell_of(x as f64, y as f64) {
                self.occupied_now[rc] = true;
                self.last_occupied[rc] = t;
            }
        }
    }

    /// The clear time of each cell, seconds: the first sample time at which the cell was found
    /// empty after its last occupant left (the last time it was occupied plus one step); NaN
    /// where nobody ever stood, `+inf` where someone still stands at the end of the run.
    pub fn clear_time(&self) -> Array2<f64> {
        let mut clear = self.last_occupied.mapv(|t| t + self.dt);
        for (c, &now) in clear.iter_mut().zip(self.occupied_now.iter()) {
            if now {
                *c = f64::INFINITY;
            }
        }
        clear
    }

    /// Seconds each cell spent at level E or F.
    pub fn seconds_crowded(&self) -> Array2<f32> {
        &self.seconds_at[LEVEL_E] + &self.seconds_at[LEVEL_E + 1]
    }

    /// The summary per level for the report: area whose worst level it is, and the longest
    /// time one place spent at it, over the open cells of `obstacle`.
    pub fn summary(&self, grid: &Grid, obstacle: ArrayView2<bool>) -> Vec<LevelSummary> {
        let cell_area = grid.cell_size * grid.cell_size;
        LEVELS
            .iter()
            .enumerate()
            .map(|(i, &letter)| {
                let cells = self
                    .worst_level
                    .iter()
                    .zip(obstacle.iter())
                    .filter(|&(&l, &b)| !b && l as usize == i)
                    .count();
                let longest = self.seconds_at[i]
                    .iter()
                    .zip(obstacle.iter())
                    .filter(|&(_, &b)| !b)
                    .fold(0.0f32, |m, (&s, _)| m.max(s));
                let upper = fruin_upper_bounds().get(i).copied();
                LevelSummary {
                    level: letter.to_string(),
                    max_density: upper,
                    worst_area_m2: cells as f64 * cell_area,
                    longest_seconds: (longest as f64 * 1e3).round() / 1e3,
                }
            })
            .collect()
    }
}

/// One level of service in the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelSummary {
    /// The level, `"A"` to `"F"`.
    pub level: String,
    /// Highest density of the level, persons/m² (`null` for F, which has none).
    pub max_density: Option<f64>,
    /// Area whose worst level over the run is this one, m².
    pub worst_area_m2: f64,
    /// The longest time one place spent at this level over the run, seconds.
    pub longest_seconds: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fruin_bounds_in_persons_per_square_metre() {
        let b = fruin_upper_bounds();
        let want = [0.3075, 0.4306, 0.7176, 1.0764, 2.1528];
        for (got, want) in b.iter().zip(want) {
            assert!((got - want).abs() < 1e-4, "{got} vs {want}");
        }
    }

    #[test]
    fn each_boundary_belongs_to_the_better_level() {
        let b = fruin_upper_bounds();
        assert_eq!(level_of(0.0), 0);
        for (i, &bound) in b.iter().enumerate() {
            assert_eq!(level_of(bound), i, "on the bound of {}", LEVELS[i]);
            let above = bound * (1.0 + 1e-12);
            assert_eq!(level_of(above), i + 1, "just above the bound of {}", LEVELS[i]);
        }
        assert_eq!(level_of(100.0), 5);
    }

    #[test]
    fn hand_built_density_grids_land_on_the_right_levels() {
        // One column per boundary value (exactly on it, in f32) and one just above.
        let grid = Grid::new(6, 2, 1.0);
        let b = fruin_upper_bounds();
        let mut rho = Array2::<f32>::zeros((2, 6));
        let mut want = Array2::<u8>::zeros((2, 6));
        for i in 0..5 {
            rho[(0, i)] = b[i] as f32;
            want[(0, i)] = i as u8;
            rho[(1, i)] = (b[i] * 1.01) as f32;
            want[(1, i)] = (i + 1) as u8;
        }
        rho[(0, 5)] = 0.0;
        rho[(1, 5)] = 6.0;
        want[(1, 5)] = 5;
        let obstacle = Array2::from_elem((2, 6), false);
        let mut log = PlaceLog::new(&grid, 0.5);
        log.record_levels(rho.view(), rho.view(), obstacle.view());
        assert_eq!(log.worst_level, want);
        // Time: two steps at D in one cell, one of them after a step at F elsewhere.
        let mut log = PlaceLog::new(&grid, 0.5);
        let mut d = Array2::<f32>::zeros((2, 6));
        d[(0, 0)] = 1.0;
        log.record_levels(d.view(), d.view(), obstacle.view());
        d[(1, 1)] = 3.0;
        log.record_levels(d.view(), d.view(), obstacle.view());
        assert_eq!(log.seconds_at[3][(0, 0)], 1.0);
        assert_eq!(log.seconds_at[5][(1, 1)], 0.5);
        assert_eq!(log.seconds_crowded()[(1, 1)], 0.5);
        assert_eq!(log.seconds_crowded()[(0, 0)], 0.0);
        let s = log.summary(&grid, obstacle.view());
        assert_eq!(s[5].worst_area_m2, 1.0);
        assert_eq!(s[3].worst_area_m2, 1.0);
        assert_eq!(s[0].worst_area_m2, 10.0);
        assert_eq!(s[3].longest_seconds, 1.0);
        assert_eq!(s[5].max_density, None);
    }

    #[test]
    fn obstacles_take_no_level() {
        let grid = Grid::new(2, 1, 1.0);
        let rho = Array2::from_elem((1, 2), 5.0f32);
        let mut obstacle = Array2::from_elem((1, 2), false);
        obstacle[(0, 1)] = true;
        let mut log = PlaceLog::new(&grid, 1.0);
        log.record_levels(rho.view(), rho.view(), obstacle.view());
        assert_eq!(log.worst_level[(0, 0)], 5);
        assert_eq!(log.worst_level[(0, 1)], 0);
        assert_eq!(log.summary(&grid, obstacle.view())[5].worst_area_m2, 1.0);
        assert_eq!(
            log.worst_level_map(obstacle.view()),
            ndarray::array![[5, NO_LEVEL]]
        );
    }

    /// Fruin's levels read off the walkway square: one person alone is A wherever it stands
    /// and on any cell size, two people passing side by side are no worse than C, and a crowd
    /// of 2.5 persons/m² (a queue at a door) is F.
    #[test]
    fn a_lone_walker_is_a_two_passing_are_not_crowded_and_a_queue_is_f() {
        use crate::sim::measure::{measured_density_over, persons_per_cell};
        let worst = |grid: &Grid, xs: &[f32], ys: &[f32]| {
            let persons = persons_per_cell(grid, xs, ys);
            let rho = measured_density_over(persons.view(), grid.cell_size, LOS_AREA_M2);
            rho.iter().map(|&r| level_of_f32(r)).max().unwrap()
        };
        for h in [0.125, 0.25, 0.4, 0.5, 1.0, 2.0] {
            let grid = Grid::new((12.0 / h) as usize, (8.0 / h) as usize, h);
            for (x, y) in [(0.1f32, 0.1f32), (5.0, 4.0), (11.9, 7.9), (6.3, 0.2)] {
                assert_eq!(worst(&grid, &[x], &[y]), 0, "{h} m cells, one at ({x}, {y})");
            }
            // Two bodies of 0.25 m radius passing shoulder to shoulder.
            let two = worst(&grid, &[6.0, 6.0], &[4.0, 4.5]);
            assert!(two <= 2, "{h} m cells: two passing read {}", LEVELS[two]);
            // A queue: 2.5 persons/m² on a 4 m x 4 m square.
            let (mut xs, mut ys) = (Vec::new(), Vec::new());
            for i in 0..40 {
                xs.push(4.0 + 0.2 + (i % 8) as f32 * 0.5);
                ys.push(2.0 + 0.2 + (i / 8) as f32 * 0.8);
            }
            assert_eq!(worst(&grid, &xs, &ys), 5, "{h} m cells: a queue");
        }
    }

    #[test]
    fn places_no_one_came_near_take_no_level_in_the_map_but_count_as_a_in_the_table() {
        let grid = Grid::new(3, 1, 1.0);
        let obstacle = Array2::from_elem((1, 3), false);
        let mut log = PlaceLog::new(&grid, 1.0);
        let (first, second) = (
            ndarray::array![[0.2f32, 0.0, 0.0]],
            ndarray::array![[0.0f32, 0.5, 0.0]],
        );
        log.record_levels(first.view(), first.view(), obstacle.view());
        log.record_levels(second.view(), second.view(), obstacle.view());
        assert_eq!(
            log.worst_level_map(obstacle.view()),
            ndarray::array![[0, 2, NO_LEVEL]]
        );
        let s = log.summary(&grid, obstacle.view());
        assert_eq!((s[0].worst_area_m2, s[2].worst_area_m2), (2.0, 1.0));
    }

    #[test]
    fn clear_time_is_one_step_after_the_last_occupancy() {
        let grid = Grid::new(3, 1, 1.0);
        let mut log = PlaceLog::new(&grid, 0.5);
        log.record_occupancy(&grid, &[0.5], &[0.5], 0.0);
        log.record_occupancy(&grid, &[1.5], &[0.5], 0.5);
        log.record_occupancy(&grid, &[1.6], &[0.5], 1.0);
        let clear = log.clear_time();
        assert_eq!(clear[(0, 0)], 0.5);
        assert_eq!(clear[(0, 1)], f64::INFINITY, "still occupied");
        assert!(clear[(0, 2)].is_nan(), "never occupied");
        log.record_occupancy(&grid, &[], &[], 1.5);
        assert_eq!(log.clear_time()[(0, 1)], 1.5);
    }
}
