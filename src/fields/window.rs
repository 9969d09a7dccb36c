//! The density window: an opt-in to SPEC §2's per-cell splat ([`crate::params::Params::density_window`]).
//! The speed field then reads the splat averaged over a square of a fixed area around each
//! cell, so the density it sees no longer grows when the cells shrink (one person alone in a
//! 0.25 m cell is 16 persons/m² by the splat, about 1 over a 1 m² window).
//!
//! Choices, written down:
//! - **The window** is a square of exactly `density_window` m², centred on the cell's centre.
//!   Its cells are the smallest odd square of cells covering at least that area ([`cells_covering`],
//!   the window logic `sim::measure` uses for reported densities, made odd so that the window
//!   is centred); the cells of its outer ring count with the fraction of them the square covers
//!   ([`DensityWindow::edge`]), so the area is the same on any cell size (a 1 m² window is
//!   `[0.5, 1, 0.5]` x `[0.5, 1, 0.5]` on 0.5 m cells and 5 x 5 cells with a half-weighted ring on
//!   0.25 m). A window of at most one cell's area is the cell itself.
//! - **Border and walls**: the average is over the open cells inside the grid. The persons the
//!   splat put into a wall cell (an agent beside a wall) still count, so a crowd keeps its
//!   mass, but the area divided by is the walkable area of the window: a crowd pressed into a
//!   door reads the density of the door, not a mean with the wall around it. A cell whose
//!   window holds no open cell (deep inside a thick wall) reads 0.
//! - **Velocity**: the mean velocity is averaged over the same window, weighted by density (the
//!   window's momentum over its mass), so the flow speed a face reads ahead is that of the same
//!   persons whose density it reads; a lone walker at the window's edge counts with its weight,
//!   not as the window's whole flow.
//!
//! The average is separable: weighted sums along each row, then along each column, in f64 (cell
//! by cell for windows up to 9 cells across, by prefix sums for larger ones, so the cost does
//! not grow with the window), rows in parallel; every value
//! depends only on the input, so the result does not depend on the thread count. The GPU runs
//! the same two passes (`shaders/density_window_rows.wgsl`, `density_window_cols.wgsl`).

use super::Density;
use crate::grid::Grid;
use ndarray::ArrayView2;
use rayon::prelude::*;

/// Cells are counted with this margin: `cells_covering` of an area that is exactly `k` cells
/// across, give or take floating-point rounding in the division, is `k` (not `k + 1`).
const ROUNDING_MARGIN: f64 = 1e-9;

/// The least number of cells `k` along a side of a square of `k x k` cells of `cell_size`
/// metres whose area is at least `area_m2`, at least 1: `ceil(sqrt(area) / cell_size)`.
/// `sim::measure::window_cells` and [`DensityWindow`] share it.
pub fn cells_covering(area_m2: f64, cell_size: f64) -> usize {
    ((area_m2.sqrt() / cell_size) - ROUNDING_MARGIN).ceil().max(1.0) as usize
}

/// The geometry of a density window on a given cell size (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DensityWindow {
    /// Cells on each side of the centre cell: the window is `2 * half + 1` cells across.
    pub half: usize,
    /// Weight of the outer ring's cells (those `half` cells from the centre along an axis), in
    /// `(0, 1]`: the fraction of them inside the square. 1 when `half` is 0.
    pub edge: f64,
}

impl DensityWindow {
    /// The window of `area_m2` square metres on cells of `cell_size` metres; `None` (no
    /// window: the per-cell splat, SPEC §2) when the area is not positive and finite.
    pub fn new(area_m2: f64, cell_size: f64) -> Option<Self> {
        if !(area_m2 > 0.0 && area_m2.is_finite() && cell_size > 0.0 && cell_size.is_finite()) {
            return None;
        }
        // The smallest odd count covering the area: centred on the cell.
        let cells = cells_covering(area_m2, cell_size) | 1;
        let half = cells / 2;
        if half == 0 {
            return Some(Self { half, edge: 1.0 });
        }
        // The square's side in cells covers the centre cell, `half - 1` whole cells on each
        // side and this fraction of the outer ring's cells; positive since the count is the
        // least odd one covering the side (up to the rounding margin).
        let side = area_m2.sqrt() / cell_size;
        let edge = ((side - (cells - 2) as f64) / 2.0).clamp(f64::MIN_POSITIVE, 1.0);
        Some(Self { half, edge })
    }

    /// The window's weight of a cell `offset` cells from the centre along one axis.
    pub fn weight(&self, offset: usize) -> f64 {
        if offset < self.half {
            1.0
        } else if offset == self.half {
            self.edge
        } else {
            0.0
        }
    }

    /// `half`, capped at `n` cells: on an axis of `n` cells, every cell further than `n` from
    /// the centre is outside the grid, so a larger window gives the same sums.
    pub fn half_on(&self, n: usize) -> usize {
        self.half.min(n)
    }
}

/// `N` channels of one cell (mass and momentum of the density; the open cells alone).
type Cell<const N: usize> = [f64; N];

#[inline(always)]
fn add<const N: usize>(a: Cell<N>, b: Cell<N>) -> Cell<N> {
    std::array::from_fn(|k| a[k] + b[k])
}

#[inline(always)]
fn sub<const N: usize>(a: Cell<N>, b: Cell<N>) -> Cell<N> {
    std::array::from_fn(|k| a[k] - b[k])
}

/// `a + edge * b`.
#[inline(always)]
fn add_scaled<const N: usize>(a: Cell<N>, edge: f64, b: Cell<N>) -> Cell<N> {
    std::array::from_fn(|k| a[k] + edge * b[k])
}

/// Windows up to this many cells on each side of the centre are summed cell by cell, larger
/// ones by prefix sums: up to here the direct sum reads about as many values as the prefix sums
/// write and read (a 1 m² window is 4 cells on each side on 0.125 m cells, 1 on 0.5 m), and it
/// needs no prefix table.
const DIRECT_MAX_HALF: usize = 4;

/// The window's weighted sums along one line of cells `x` into `out`, `half >= 1` (capped at
/// the line's length): the cells within `half - 1` of each cell (summed directly up to
/// [`DIRECT_MAX_HALF`], else from prefix sums in `prefix`, scratch of `x.len() + 1`), plus
/// `edge` times the two cells `half` away that lie on the line.
fn line_sums<const N: usize>(
    x: &[Cell<N>],
    half: usize,
    edge: f64,
    prefix: &mut [Cell<N>],
    out: &mut [Cell<N>],
) {
    let n = x.len();
    let direct = half <= DIRECT_MAX_HALF;
    if !direct {
        prefix[0] = [0.0; N];
        for i in 0..n {
            prefix[i + 1] = add(prefix[i], x[i]);
        }
    }
    for (i, out) in out.iter_mut().enumerate() {
        let lo = i.saturating_sub(half - 1);
        let hi = (i + half).min(n); // one past the last whole cell
        let mut sum = if direct {
            x[lo..hi].iter().fold([0.0; N], |s, &v| add(s, v))
        } else {
            sub(prefix[hi], prefix[lo])
        };
        if i >= half {
            sum = add_scaled(sum, edge, x[i - half]);
        }
        if i + half < n {
            sum = add_scaled(sum, edge, x[i + half]);
        }
        *out = sum;
    }
}

/// The window's weighted sums around every cell of `x` (`rows x cols`, row-major), both axes,
/// handed row by row to `emit(r, sums of row r)` (rows in parallel). Along rows: line by line
/// ([`line_sums`]); along columns: each output row the sum of the window's rows (or, for a
/// large window, the difference of two rows of a prefix table over rows) plus the two ring rows.
fn window_sums_by_row<const N: usize>(
    x: &[Cell<N>],
    rows: usize,
    cols: usize,
    w: DensityWindow,
    emit: impl Fn(usize, &[Cell<N>]) + Sync,
) {
    let (half_c, half_r) = (w.half_on(cols), w.half_on(rows));
    // Sums along rows.
    let along_rows: Vec<Cell<N>> = if half_c == 0 {
        x.to_vec()
    } else {
        let mut sums = vec![[0.0; N]; rows * cols];
        sums.par_chunks_mut(cols).zip(x.par_chunks(cols)).for_each_init(
            || vec![[0.0; N]; cols + 1],
            |prefix, (out, line)| line_sums(line, half_c, w.edge, prefix, out),
        );
        sums
    };
    let row = |r: usize| &along_rows[r * cols..(r + 1) * cols];
    if half_r == 0 {
        (0..rows).into_par_iter().for_each(|r| emit(r, row(r)));
        return;
    }
    // Then along columns; for a large window, table[r] = the sum of rows ..r.
    let table = if half_r <= DIRECT_MAX_HALF {
        Vec::new()
    } else {
        let mut table = vec![[0.0; N]; (rows + 1) * cols];
        for r in 0..rows {
            let (done, next) = table.split_at_mut((r + 1) * cols);
            let last = &done[r * cols..];
            for ((t, &a), &v) in next[..cols].iter_mut().zip(last).zip(row(r)) {
                *t = add(a, v);
            }
        }
        table
    };
    (0..rows).into_par_iter().for_each_init(
        || vec![[0.0; N]; cols],
        |out, r| {
            let lo = r.saturating_sub(half_r - 1);
            let hi = (r + half_r).min(rows); // one past the last whole row
            if table.is_empty() {
                out.copy_from_slice(row(lo));
                for i in lo + 1..hi {
                    for (o, &v) in out.iter_mut().zip(row(i)) {
                        *o = add(*o, v);
                    }
                }
            } else {
                let (t_hi, t_lo) = (
                    &table[hi * cols..(hi + 1) * cols],
                    &table[lo * cols..(lo + 1) * cols],
                );
                for ((o, &a), &b) in out.iter_mut().zip(t_hi).zip(t_lo) {
                    *o = sub(a, b);
                }
            }
            for ring in [r.checked_sub(half_r), Some(r + half_r).filter(|&i| i < rows)]
                .into_iter()
                .flatten()
            {
                for (o, &v) in out.iter_mut().zip(row(ring)) {
                    *o = add_scaled(*o, w.edge, v);
                }
            }
            emit(r, out);
        },
    );
}

/// The window's weighted sum of `src` (`rows x cols`, row-major) around every cell.
#[cfg(test)]
fn window_sums(src: &[f64], rows: usize, cols: usize, w: DensityWindow) -> Vec<f64> {
    let x: Vec<Cell<1>> = src.iter().map(|&v| [v]).collect();
    let out = std::sync::Mutex::new(vec![0.0; rows * cols]);
    window_sums_by_row(&x, rows, cols, w, |r, sums| {
        let mut out = out.lock().expect("not poisoned");
        for (o, s) in out[r * cols..(r + 1) * cols].iter_mut().zip(sums) {
            *o = s[0];
        }
    });
    out.into_inner().expect("not poisoned")
}

/// The open area of each cell's window, in cells (the window's weights of the open cells
/// inside the grid), for `obstacle` (`rows x cols`). It depends on the scene alone:
/// [`super::SceneFaces`] computes it once.
pub fn open_area(obstacle: ArrayView2<bool>, w: DensityWindow) -> Vec<f64> {
    let (rows, cols) = obstacle.dim();
    let open: Vec<Cell<1>> = obstacle.iter().map(|&o| [if o { 0.0 } else { 1.0 }]).collect();
    let mut area = vec![0.0; rows * cols];
    let rows_out: Vec<std::sync::Mutex<&mut [f64]>> =
        area.chunks_mut(cols.max(1)).map(std::sync::Mutex::new).collect();
    window_sums_by_row(&open, rows, cols, w, |r, sums| {
        let mut row = rows_out[r].lock().expect("not poisoned");
        for (o, s) in row.iter_mut().zip(sums) {
            *o = s[0];
        }
    });
    drop(rows_out);
    area
}

/// The splat `density` averaged over the window `w` around every cell (see the module
/// comment): density = the window's persons over its open area (`open`, from [`open_area`]),
/// velocity = the window's momentum over its mass; 0 where the window holds no open cell, or no
/// person for the velocity.
pub fn window_average(grid: &Grid, density: &Density, open: &[f64], w: DensityWindow) -> Density {
    let (rows, cols) = grid.shape();
    assert_eq!(open.len(), rows * cols, "open area of another grid");
    let mut out = Density::empty(grid);
    if grid.is_empty() {
        return out;
    }
    // Mass and momentum per cell, row-major.
    for f in [&density.rho, &density.vx, &density.vy] {
        assert_eq!(f.dim(), (rows, cols), "density of another grid");
    }
    let x: Vec<Cell<3>> = density
        .rho
        .iter()
        .zip(density.vx.iter())
        .zip(density.vy.iter())
        .map(|((&rho, &vx), &vy)| {
            let m = rho as f64;
            [m, m * vx as f64, m * vy as f64]
        })
        .collect();
    let contiguous = "a new array is contiguous";
    let rows_out: Vec<std::sync::Mutex<(&mut [f32], &mut [f32], &mut [f32])>> = out
        .rho
        .as_slice_mut()
        .expect(contiguous)
        .chunks_mut(cols)
        .zip(out.vx.as_slice_mut().expect(contiguous).chunks_mut(cols))
        .zip(out.vy.as_slice_mut().expect(contiguous).chunks_mut(cols))
        .map(|((a, b), c)| std::sync::Mutex::new((a, b, c)))
        .collect();
    window_sums_by_row(&x, rows, cols, w, |r, sums| {
        let mut guard = rows_out[r].lock().expect("not poisoned");
        let (rho, vx, vy) = &mut *guard;
        let open = &open[r * cols..(r + 1) * cols];
        for c in 0..cols {
            let [mass, mom_x, mom_y] = sums[c];
            if open[c] > 0.0 {
                rho[c] = (mass / open[c]).max(0.0) as f32;
            }
            if mass > 0.0 {
                vx[c] = (mom_x / mass) as f32;
                vy[c] = (mom_y / mass) as f32;
            }
        }
    });
    drop(rows_out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Agents;
    use crate::fields::splat;
    use ndarray::Array2;

    #[test]
    fn the_window_is_the_least_odd_square_with_a_fractional_ring() {
        // 1 m² on 0.5 m cells: 3 x 3 cells, the ring half in (side 2 cells = 0.5 + 1 + 0.5).
        assert_eq!(
            DensityWindow::new(1.0, 0.5),
            Some(DensityWindow { half: 1, edge: 0.5 })
        );
        // 0.25 m: 5 x 5, ring half in (side 4 = 0.5 + 3 + 0.5); 0.125 m: 9 x 9.
        assert_eq!(
            DensityWindow::new(1.0, 0.25),
            Some(DensityWindow { half: 2, edge: 0.5 })
        );
        assert_eq!(
            DensityWindow::new(1.0, 0.125),
            Some(DensityWindow { half: 4, edge: 0.5 })
        );
        // An odd number of cells across: the ring is whole.
        let w = DensityWindow::new(0.09 * 9.0, 0.3).unwrap();
        assert_eq!(w.half, 1);
        assert!((w.edge - 1.0).abs() < 1e-9);
        // A cell or less: the cell itself.
        assert_eq!(
            DensityWindow::new(1.0, 1.0),
            Some(DensityWindow { half: 0, edge: 1.0 })
        );
        assert_eq!(
            DensityWindow::new(0.01, 0.5),
            Some(DensityWindow { half: 0, edge: 1.0 })
        );
        // Off.
        for a in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(DensityWindow::new(a, 0.5), None, "{a}");
        }
        // The weights always add up to the area, in cells, along each axis.
        for h in [0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1.0] {
            for area in [0.5, 1.0, 2.0, 3.3] {
                let w = DensityWindow::new(area, h).unwrap();
                let side: f64 = (0..=w.half)
                    .map(|o| if o == 0 { 1.0 } else { 2.0 * w.weight(o) })
                    .sum();
                let want = (area.sqrt() / h).max(1.0);
                assert!((side - want).abs() < 1e-6, "{h} {area}: {side} vs {want}");
                assert!(w.edge > 0.0 && w.edge <= 1.0);
            }
        }
    }

    /// The window sum of one cell by the definition: every cell of the grid with its weight.
    fn direct(src: &[f64], rows: usize, cols: usize, w: DensityWindow, r: usize, c: usize) -> f64 {
        let mut sum = 0.0;
        for i in 0..rows {
            for j in 0..cols {
                sum += w.weight(i.abs_diff(r)) * w.weight(j.abs_diff(c)) * src[i * cols + j];
            }
        }
        sum
    }

    #[test]
    fn window_sums_match_the_definition_including_borders_and_huge_windows() {
        let (rows, cols) = (9, 13);
        let src: Vec<f64> = (0..rows * cols)
            .map(|i| ((i * 7919) % 23) as f64 * 0.37)
            .collect();
        for w in [
            DensityWindow { half: 0, edge: 1.0 },
            DensityWindow { half: 1, edge: 0.5 },
            DensityWindow { half: 2, edge: 0.3 },
            DensityWindow { half: 5, edge: 1.0 },
            DensityWindow { half: 40, edge: 0.5 },
        ] {
            let got = window_sums(&src, rows, cols, w);
            for r in 0..rows {
                for c in 0..cols {
                    let want = direct(&src, rows, cols, w, r, c);
                    assert!((got[r * cols + c] - want).abs() < 1e-9, "{w:?} ({r}, {c})");
                }
            }
        }
    }

    fn constant(grid: &Grid, rho: f32, vx: f32) -> Density {
        Density {
            rho: Array2::from_elem(grid.shape(), rho),
            vx: Array2::from_elem(grid.shape(), vx),
            vy: Array2::from_elem(grid.shape(), -0.5),
        }
    }

    #[test]
    fn the_window_average_of_a_constant_density_is_that_constant() {
        for h in [0.125, 0.25, 0.4, 0.5, 1.0] {
            let grid = Grid::new(17, 11, h);
            let mut obstacle = Array2::from_elem(grid.shape(), false);
            // A wall across, with a gap: open cells beside it average over the open cells only.
            for r in 0..11 {
                obstacle[(r, 8)] = r != 5;
            }
            let w = DensityWindow::new(1.0, h).unwrap();
            for obstacle in [Array2::from_elem(grid.shape(), false), obstacle] {
                // Nobody stands inside a wall.
                let mut d = constant(&grid, 2.5, 1.2);
                d.rho
                    .zip_mut_with(&obstacle, |v, &o| *v = if o { 0.0 } else { *v });
                let open = open_area(obstacle.view(), w);
                let a = window_average(&grid, &d, &open, w);
                for ((rc, &rho), &o) in a.rho.indexed_iter().zip(obstacle.iter()) {
                    if !o {
                        assert!((rho - 2.5).abs() < 1e-5, "{h} {rc:?}: {rho}");
                        assert!((a.vx[rc] - 1.2).abs() < 1e-5 && (a.vy[rc] + 0.5).abs() < 1e-5);
                    }
                }
            }
        }
    }

    #[test]
    fn one_agents_mass_is_conserved_by_the_window_average_away_from_borders() {
        for h in [0.125, 0.25, 0.5] {
            let grid = Grid::new(40, 40, h);
            let mut agents = Agents::default();
            agents.push(0, (17.3 * h) as f32, (21.6 * h) as f32, 0, 0.25, 1.3);
            agents.vx[0] = 1.1;
            let d = splat(&grid, 1.5, &agents);
            let w = DensityWindow::new(1.0, h).unwrap();
            let open = open_area(Array2::from_elem(grid.shape(), false).view(), w);
            let a = window_average(&grid, &d, &open, w);
            let mass = |d: &Density| d.rho.iter().map(|&v| v as f64).sum::<f64>() * h * h;
            assert!((mass(&a) - mass(&d)).abs() < 1e-5 * mass(&d), "{h}");
            // Spread over about a square metre: one person reads about 1 /m², not 1 / h².
            let peak = a.rho.iter().fold(0.0f32, |m, &v| m.max(v));
            assert!(peak < 2.0 && peak > 0.3, "{h}: peak {peak}");
            // Every cell that reads the agent reads its velocity.
            for (rc, &rho) in a.rho.indexed_iter() {
                if rho > 0.0 {
                    assert!((a.vx[rc] - 1.1).abs() < 1e-5, "{rc:?}");
                }
            }
        }
    }

    #[test]
    fn the_window_averages_velocity_by_density() {
        // Two cells: 3 persons at 1 m/s and 1 person at -1 m/s, in one 3-cell window: 0.5 m/s.
        let grid = Grid::new(3, 1, 1.0);
        let d = Density {
            rho: Array2::from_shape_vec((1, 3), vec![3.0, 0.0, 1.0]).unwrap(),
            vx: Array2::from_shape_vec((1, 3), vec![1.0, 0.0, -1.0]).unwrap(),
            vy: Array2::zeros((1, 3)),
        };
        let w = DensityWindow { half: 1, edge: 1.0 };
        let open = open_area(Array2::from_elem((1, 3), false).view(), w);
        let a = window_average(&grid, &d, &open, w);
        assert!((a.vx[(0, 1)] - 0.5).abs() < 1e-6);
        assert!((a.rho[(0, 1)] - 4.0 / 3.0).abs() < 1e-6);
        // At the border the window holds two cells.
        assert!((a.rho[(0, 0)] - 1.5).abs() < 1e-6 && (a.vx[(0, 0)] - 1.0).abs() < 1e-6);
    }
}
