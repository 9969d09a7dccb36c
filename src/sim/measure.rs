//! Density as a pedestrian study measures it: persons counted in a measurement area of at
//! least 1 m², not the model's per-cell splat.
//!
//! The model's density (SPEC §2) spreads each agent over four cells with weights that need not
//! sum to one, and divides by one cell's area: what the speed field needs, but not what a
//! planner can compare with level-of-service tables (on 0.25 m cells one person alone reads
//! 16 persons/m² or more). Reported densities (the report's peak density and the peak-density
//! map) therefore follow the classical method of pedestrian studies: the persons standing in a
//! square window of `k x k` cells, the smallest with an area of at least
//! [`MEASUREMENT_AREA_M2`], over the window's area; on cells of 1 m or more the window is the
//! cell itself. The window keeps its size at the border of the grid (it is shifted inward), so
//! every value is a density over the same area.

use crate::grid::Grid;
use ndarray::{Array2, ArrayView2};

/// The least area a reported density is averaged over, m² (the classical measurement area of
/// pedestrian studies, and the unit of level-of-service tables).
pub const MEASUREMENT_AREA_M2: f64 = 1.0;

/// Cells along each side of the measurement window on cells of `cell_size` metres: the least
/// `k` with `(k * cell_size)² >= MEASUREMENT_AREA_M2`, at least 1 (the window logic the speed
/// field's density window shares, [`crate::fields::window::cells_covering`]).
pub fn window_cells(cell_size: f64) -> usize {
    window_cells_over(MEASUREMENT_AREA_M2, cell_size)
}

/// Cells along each side of a square window of at least `area_m2` on cells of `cell_size`
/// metres: the least `k` with `(k * cell_size)² >= area_m2`, at least 1.
pub fn window_cells_over(area_m2: f64, cell_size: f64) -> usize {
    crate::fields::window::cells_covering(area_m2, cell_size)
}

/// The area each measured density is averaged over on cells of `cell_size` metres, m².
pub fn window_area_m2(cell_size: f64) -> f64 {
    window_area_over(MEASUREMENT_AREA_M2, cell_size)
}

/// The area of the window of [`window_cells_over`] `(area_m2, cell_size)`, m².
pub fn window_area_over(area_m2: f64, cell_size: f64) -> f64 {
    let side = window_cells_over(area_m2, cell_size) as f64 * cell_size;
    side * side
}

/// Persons per cell: each agent at `(xs[i], ys[i])` counts once, in the cell that holds it
/// (agents outside the grid are not counted).
pub fn persons_per_cell(grid: &Grid, xs: &[f32], ys: &[f32]) -> Array2<f32> {
    let mut count = Array2::<f32>::zeros(grid.shape());
    for (&x, &y) in xs.iter().zip(ys) {
        if let Some(rc) = grid.cell_of(x as f64, y as f64) {
            count[rc] += 1.0;
        }
    }
    count
}

/// Measured density per cell, persons/m²: the persons in the `k x k` window around each cell
/// ([`window_cells`]; `persons` holds persons per cell) over the window's area. For even `k`
/// the cell is the lower-left one of the window's four central cells; at the grid's border the
/// window is shifted to lie inside the grid (a grid smaller than the window is taken whole).
pub fn measured_density(persons: ArrayView2<f32>, cell_size: f64) -> Array2<f32> {
    measured_density_over(persons, cell_size, MEASUREMENT_AREA_M2)
}

/// [`measured_density`] over a window of at least `area_m2` instead of 1 m²
/// ([`window_cells_over`]; the level-of-service maps count over 4 m²,
/// [`crate::sim::levels::LOS_AREA_M2`]).
pub fn measured_density_over(persons: ArrayView2<f32>, cell_size: f64, area_m2: f64) -> Array2<f32> {
    let k = window_cells_over(area_m2, cell_size);
    let cell_area = cell_size * cell_size;
    if k == 1 {
        return persons.mapv(|p| (p as f64 / cell_area) as f32);
    }
    let (rows, cols) = persons.dim();
    // Summed-area table with a zero row and column in front: sat[r][c] = sum of rho[..r, ..c].
    let mut sat = Array2::<f64>::zeros((rows + 1, cols + 1));
    for r in 0..rows {
        let mut run = 0.0;
        for c in 0..cols {
            run += persons[(r, c)] as f64;
            sat[(r + 1, c + 1)] = sat[(r, c + 1)] + run;
        }
    }
    // The window's first row (or column) for a cell at `i` on an axis of `n` cells.
    let span = |i: usize, n: usize| -> (usize, usize) {
        let w = k.min(n);
        let start = (i + 1).saturating_sub(k.div_ceil(2)).min(n - w);
        (start, start + w)
    };
    Array2::from_shape_fn((rows, cols), |(r, c)| {
        let (r0, r1) = span(r, rows);
        let (c0, c1) = span(c, cols);
        let sum = sat[(r1, c1)] - sat[(r0, c1)] - sat[(r1, c0)] + sat[(r0, c0)];
        (sum / ((r1 - r0) * (c1 - c0)) as f64 / cell_area) as f32
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_the_smallest_of_at_least_one_square_metre() {
        assert_eq!(window_cells(0.25), 4);
        assert_eq!(window_cells(0.5), 2);
        assert_eq!(window_cells(0.4), 3);
        assert_eq!(window_cells(1.0), 1);
        assert_eq!(window_cells(2.0), 1);
        for h in [0.1, 0.25, 0.3, 0.4, 0.5, 0.7, 1.0, 3.0] {
            let a = window_area_m2(h);
            assert!(a >= MEASUREMENT_AREA_M2 - 1e-9, "{h}: {a}");
            let smaller = (window_cells(h) - 1) as f64 * h;
            assert!(
                window_cells(h) == 1 || smaller * smaller < MEASUREMENT_AREA_M2,
                "{h}"
            );
        }
    }

    #[test]
    fn one_person_reads_one_person_per_window_not_per_cell() {
        // One person on 0.25 m cells: 16 persons/m² by the cell, 1 by the 1 m² window,
        // wherever the cell is (the window is shifted inward at the border).
        let grid = Grid::new(10, 10, 0.25);
        for (r, c) in [(5, 5), (0, 0), (9, 7), (0, 9)] {
            let (x, y) = grid.cell_center(r, c);
            let persons = persons_per_cell(&grid, &[x as f32], &[y as f32]);
            assert_eq!(persons.sum(), 1.0);
            assert_eq!(persons[(r, c)], 1.0);
            let m = measured_density(persons.view(), grid.cell_size);
            assert!((m[(r, c)] - 1.0).abs() < 1e-6, "({r}, {c}): {}", m[(r, c)]);
            let max = m.iter().fold(0.0f32, |a, &b| a.max(b));
            assert!((max - 1.0).abs() < 1e-6);
            // Every window holding the cell reads the person; windows away from it read 0.
            let reading = m.iter().filter(|&&v| v > 0.0).count();
            assert!((1..=16).contains(&reading), "{reading}");
        }
        // On 1 m cells and larger the window is the cell.
        let grid = Grid::new(4, 4, 2.0);
        let persons = persons_per_cell(&grid, &[3.0, 3.5, 100.0], &[1.0, 1.5, 1.0]);
        assert_eq!(persons.sum(), 2.0, "the agent off the grid is not counted");
        let m = measured_density(persons.view(), grid.cell_size);
        assert_eq!(m[(0, 1)], 0.5);
    }

    #[test]
    fn a_uniform_crowd_reads_its_density_everywhere() {
        for h in [0.25, 0.4, 0.5, 1.0] {
            // 2.5 persons/m² in every cell.
            let persons = Array2::from_elem((7, 13), (2.5 * h * h) as f32);
            let m = measured_density(persons.view(), h);
            assert!(m.iter().all(|&v| (v - 2.5).abs() < 1e-5), "{h}");
        }
    }

    #[test]
    fn the_window_sum_matches_a_direct_sum() {
        let (rows, cols, h) = (9, 11, 0.3);
        let persons = Array2::from_shape_fn((rows, cols), |(r, c)| ((r * 7 + c * 3) % 5) as f32);
        let m = measured_density(persons.view(), h);
        let k = window_cells(h);
        assert_eq!(k, 4);
        for r in 0..rows {
            for c in 0..cols {
                let r0 = (r + 1).saturating_sub(2).min(rows - k);
                let c0 = (c + 1).saturating_sub(2).min(cols - k);
                let mut sum = 0.0;
                for rr in r0..r0 + k {
                    for cc in c0..c0 + k {
                        sum += persons[(rr, cc)] as f64;
                    }
                }
                let want = sum / (k * k) as f64 / (h * h);
                assert!((m[(r, c)] as f64 - want).abs() < 1e-4, "({r}, {c})");
            }
        }
    }
}
