//! The hexagonal lattice that spawning places agents on, and what the map check asks of it:
//! how many agents of a radius an area holds ([`area_capacity`]). Shared by [`crate::map`]
//! (which says how many fit) and [`crate::sim::spawn`] (which places them), so that the map
//! knows nothing of the simulation.

use crate::grid::Grid;
use crate::scene::CellMask;
use ndarray::Array2;

/// Agents are placed at least `2 * radius * (1 + SPAWN_CLEARANCE)` apart, so that rounding in
/// `f32` never makes two freshly spawned agents overlap.
pub(crate) const SPAWN_CLEARANCE: f64 = 1e-3;

/// Most lattice points one placement try or capacity count visits (beyond, a capacity is
/// estimated from the area, and a placement stops shrinking its spacing): with bodies of a
/// centimetre over a large area the lattice would have billions.
pub(crate) const MAX_LATTICE_POINTS: f64 = 1e7;

/// An area in m² as messages show it: at most two decimals, no trailing zeros (`4`, `2.25`);
/// below 0.01 m² (a few cells of a centimetre or two) two significant digits (`0.0025`), so an
/// area of free cells is never shown as 0.
pub(crate) fn square_metres(v: f64) -> String {
    let s = if v > 0.0 && v < 0.01 {
        let digits = (-v.log10().floor()) as usize + 1;
        format!("{v:.digits$}")
    } else {
        format!("{v:.2}")
    };
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Whether `(x, y)` (metres) lies in a cell of `mask` that is not an obstacle.
pub(crate) fn cell_is_free(grid: &Grid, mask: &CellMask, obstacle: &Array2<bool>, x: f64, y: f64) -> bool {
    grid.cell_of(x, y)
        .is_some_and(|rc| mask.get(rc) && !obstacle.get(rc).copied().unwrap_or(true))
}

/// The bounding box `(x0, y0, x1, y1)` (metres) of the free cells of `mask` and their number;
/// `None` when there are none.
pub(crate) fn free_bounds(
    grid: &Grid,
    mask: &CellMask,
    obstacle: &Array2<bool>,
) -> Option<((f64, f64, f64, f64), usize)> {
    let h = grid.cell_size;
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    let mut free_cells = 0usize;
    for (r, c) in mask.cells() {
        if !obstacle.get((r, c)).copied().unwrap_or(true) {
            free_cells += 1;
            x0 = x0.min(c as f64 * h);
            y0 = y0.min(r as f64 * h);
            x1 = x1.max((c + 1) as f64 * h);
            y1 = y1.max((r + 1) as f64 * h);
        }
    }
    (free_cells > 0).then_some(((x0, y0, x1, y1), free_cells))
}

/// The points of a hexagonal lattice of `spacing` over the box `(x0, y0, x1, y1)` that `keep`
/// accepts, row by row.
pub(crate) fn lattice(
    bbox: (f64, f64, f64, f64),
    spacing: f64,
    keep: impl Fn(f64, f64) -> bool,
) -> Vec<(f64, f64)> {
    let mut points = Vec::new();
    lattice_visit(bbox, spacing, |x, y| {
        if keep(x, y) {
            points.push((x, y));
        }
    });
    points
}

/// Calls `visit(x, y)` for every point of the hexagonal lattice of [`lattice`], row by row.
pub(crate) fn lattice_visit(
    (x0, y0, x1, y1): (f64, f64, f64, f64),
    spacing: f64,
    mut visit: impl FnMut(f64, f64),
) {
    let row_step = spacing * 3f64.sqrt() / 2.0;
    let mut row = 0usize;
    loop {
        let y = y0 + (row as f64 + 0.5) * row_step;
        if y >= y1 {
            break;
        }
        let shift = if row % 2 == 1 { 0.5 * spacing } else { 0.0 };
        let mut k = 0usize;
        loop {
            let x = x0 + shift + (k as f64 + 0.5) * spacing;
            if x >= x1 {
                break;
            }
            visit(x, y);
            k += 1;
        }
        row += 1;
    }
}

/// How many agents of `radius` the free cells of `mask` hold without overlap when nothing else
/// is placed: the points of the closest lattice spawning tries (so an area asking for more
/// fails to spawn, whatever the seed). Maps use it to say how many fit.
pub fn area_capacity(grid: &Grid, mask: &CellMask, obstacle: &Array2<bool>, radius: f64) -> usize {
    if !(radius.is_finite() && radius > 0.0) {
        return 0;
    }
    let Some((bbox, _)) = free_bounds(grid, mask, obstacle) else {
        return 0;
    };
    let min_spacing = 2.0 * radius * (1.0 + SPAWN_CLEARANCE);
    if lattice_size(bbox, min_spacing) > MAX_LATTICE_POINTS {
        // Estimated: the free area over the area each lattice point owns.
        let free_m2 = free_area(grid, mask, obstacle);
        return (free_m2 / (min_spacing * min_spacing * 3f64.sqrt() / 2.0)) as usize;
    }
    let mut count = 0;
    lattice_visit(bbox, min_spacing, |x, y| {
        count += usize::from(cell_is_free(grid, mask, obstacle, x, y));
    });
    count
}

/// Free (non-obstacle) area of `mask`, m².
pub(crate) fn free_area(grid: &Grid, mask: &CellMask, obstacle: &Array2<bool>) -> f64 {
    let cells = mask
        .cells()
        .filter(|&rc| !obstacle.get(rc).copied().unwrap_or(true))
        .count();
    cells as f64 * grid.cell_size * grid.cell_size
}

/// Points of [`lattice`] over `bbox` at `spacing` (an upper bound, edges included).
pub(crate) fn lattice_size((x0, y0, x1, y1): (f64, f64, f64, f64), spacing: f64) -> f64 {
    let row_step = spacing * 3f64.sqrt() / 2.0;
    ((x1 - x0) / spacing + 1.0) * ((y1 - y0) / row_step + 1.0)
}
