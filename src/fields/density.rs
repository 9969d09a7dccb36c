//! Density splat (SPEC §2): every agent spreads `min(..)^lambda` weights over the four cells
//! around it; the same weights carry its velocity, so the average velocity is a weighted mean.
//!
//! Determinism: agents are counting-sorted by the row of their cell A (ascending agent index
//! inside a row), and each output row sums its contributions in that fixed order (first the
//! agents whose A is the row below, then those whose A is the row itself). Rows are independent,
//! so they run in parallel and the result is bit-identical for any thread count.

use super::Density;
use crate::agents::Agents;
use crate::grid::Grid;
use ndarray::{Array2, Zip};
use rayon::prelude::*;

/// Where one agent's splat lands: cell A's `(row, col)` (may be -1 at the lower/left border)
/// and the four weights for A, B (col + 1), C (row + 1, col + 1), D (row + 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Footprint {
    /// Row of cell A, in `-1 ..= rows - 1`.
    pub row: i64,
    /// Column of cell A, in `-1 ..= cols - 1`.
    pub col: i64,
    /// Weights of A, B, C, D (persons, before dividing by the cell area).
    pub w: [f64; 4],
}

/// The footprint of an agent at world `(x, y)` with fall-off `lambda`, or `None` when none of
/// its four cells lies on the grid (far outside, or a non-finite position).
pub(crate) fn footprint(grid: &Grid, lambda: f64, x: f64, y: f64) -> Option<Footprint> {
    if !(x.is_finite() && y.is_finite()) {
        return None;
    }
    // Position in "cell-centre" units: cell (r, c) has its centre at (c, r).
    let u = x / grid.cell_size - 0.5;
    let v = y / grid.cell_size - 0.5;
    let (fu, fv) = (u.floor(), v.floor());
    // Reject far-away agents before converting to integers (no overflow on huge values).
    if fu < -1.0 || fv < -1.0 || fu > grid.cols as f64 - 1.0 || fv > grid.rows as f64 - 1.0 {
        return None;
    }
    let (dx, dy) = (u - fu, v - fv);
    let p = |a: f64, b: f64| a.min(b).max(0.0).powf(lambda);
    Some(Footprint {
        row: fv as i64,
        col: fu as i64,
        w: [p(1.0 - dx, 1.0 - dy), p(dx, 1.0 - dy), p(dx, dy), p(1.0 - dx, dy)],
    })
}

/// Splats all agents (every group together) onto the grid with fall-off `lambda`; see the module
/// comment for the summation order. Density is returned in persons/m² (the splat weights divided
/// by the cell area); the average velocity is `sum(w v) / sum(w)`, 0 where no agent contributes.
pub fn splat(grid: &Grid, lambda: f64, agents: &Agents) -> Density {
    let (rows, cols) = grid.shape();
    let n = agents.len();
    let feet: Vec<Option<Footprint>> = (0..n)
        .into_par_iter()
        .map(|i| footprint(grid, lambda, agents.x[i] as f64, agents.y[i] as f64))
        .collect();

    // Counting sort by A's row + 1 (bucket 0 is row -1), ascending agent index inside a bucket.
    let buckets = rows + 1;
    let mut start = vec![0usize; buckets + 1];
    for f in feet.iter().flatten() {
        start[(f.row + 1) as usize + 1] += 1;
    }
    for b in 0..buckets {
        start[b + 1] += start[b];
    }
    let mut cursor = start[..buckets].to_vec();
    let mut sorted = vec![0usize; start[buckets]];
    for (i, f) in feet.iter().enumerate() {
        if let Some(f) = f {
            let slot = &mut cursor[(f.row + 1) as usize];
            sorted[*slot] = i;
            *slot += 1;
        }
    }

    let mut rho = Array2::<f32>::zeros((rows, cols));
    let mut vx = Array2::<f32>::zeros((rows, cols));
    let mut vy = Array2::<f32>::zeros((rows, cols));
    let area = grid.cell_size * grid.cell_size;
    Zip::indexed(rho.rows_mut())
        .and(vx.rows_mut())
        .and(vy.rows_mut())
        .par_for_each(|r, mut rho_row, mut vx_row, mut vy_row| {
            let mut mass = vec![0.0f64; cols];
            let mut mom_x = vec![0.0f64; cols];
            let mut mom_y = vec![0.0f64; cols];
            // Agents whose A is row r - 1 (bucket r) reach this row through D and C; agents whose
            // A is row r (bucket r + 1) through A and B.
            for (bucket, (left, right)) in [(r, (3, 2)), (r + 1, (0, 1))] {
                for &i in &sorted[start[bucket]..start[bucket + 1]] {
                    let f = feet[i].expect("sorted agents have a footprint");
                    let (ax, ay) = (agents.vx[i] as f64, agents.vy[i] as f64);
                    let (ax, ay) = if ax.is_finite() && ay.is_finite() {
                        (ax, ay)
                    } else {
                        (0.0, 0.0)
                    };
                    for (c, k) in [(f.col, left), (f.col + 1, right)] {
                        if c >= 0 && (c as usize) < cols {
                            let w = f.w[k];
                            mass[c as usize] += w;
                            mom_x[c as usize] += w * ax;
                            mom_y[c as usize] += w * ay;
                        }
                    }
                }
            }
            for c in 0..cols {
                rho_row[c] = (mass[c] / area) as f32;
                if mass[c] > 0.0 {
                    vx_row[c] = (mom_x[c] / mass[c]) as f32;
                    vy_row[c] = (mom_y[c] / mass[c]) as f32;
                }
            }
        });
    Density { rho, vx, vy }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footprint_at_a_cell_centre_is_all_in_that_cell() {
        let g = Grid::new(4, 3, 0.5);
        let (x, y) = g.cell_center(1, 2);
        let f = footprint(&g, 1.5, x, y).unwrap();
        assert_eq!((f.row, f.col), (1, 2));
        assert_eq!(f.w, [1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn footprint_rejects_far_and_non_finite_positions() {
        let g = Grid::new(4, 3, 1.0);
        assert!(footprint(&g, 1.5, -5.0, 1.0).is_none());
        assert!(footprint(&g, 1.5, 1.0, 1e30).is_none());
        assert!(footprint(&g, 1.5, f64::NAN, 1.0).is_none());
        // Just outside the lower-left corner still reaches cell (0, 0) through C.
        let f = footprint(&g, 1.0, -0.25, -0.25).unwrap();
        assert_eq!((f.row, f.col), (-1, -1));
        assert!((f.w[2] - 0.25).abs() < 1e-12);
    }
}
