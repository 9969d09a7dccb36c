//! The editing tools and the raster operations behind them (pure functions on the arrays).
//!
//! Brushes act in dabs: a circle of `radius` metres centred on a point, whose effect fades from
//! the centre to the rim with a smooth (raised-cosine) fall-off for terrain and discomfort and a
//! hard edge for obstacles. A drag lays dabs along the pointer's path at a fixed spacing, so the
//! result does not depend on the frame rate.

use crate::doc::point_in_polygon;
use crowdfield::grid::Grid;
use ndarray::Array2;

/// Dabs are laid along a drag this fraction of the brush radius apart: a quarter keeps the
/// stroke smooth (each cell is touched by about eight dabs across a stroke's width).
pub const DAB_SPACING_FRACTION: f64 = 0.25;

/// Largest change of terrain height a single dab at full strength makes, metres: with the
/// default strength 0.2 a drag raises the ground a few centimetres per dab, slow enough to
/// control.
pub const MAX_HEIGHT_STEP: f32 = 0.25;

/// Every tool of the editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tool {
    /// Drag to pan (the middle and right buttons pan with any tool); a drag that starts on a
    /// moving obstacle of the running simulation moves the obstacle.
    Pan,
    /// Terrain brush: raise.
    Raise,
    /// Terrain brush: lower.
    Lower,
    /// Terrain brush: blend towards the local mean.
    Smooth,
    /// Terrain brush: blend towards the height under the stroke's first dab.
    Flatten,
    /// Obstacle rectangle: drag from corner to corner.
    WallRect,
    /// Obstacle polygon: click the vertices, double-click (or click the first) to close.
    WallPolygon,
    /// Obstacle brush.
    WallBrush,
    /// Obstacle eraser.
    Eraser,
    /// Discomfort brush: blend towards the chosen discomfort value.
    Discomfort,
    /// Goal area (rectangle) for the selected group.
    Goal,
    /// Spawn area (rectangle) for the selected group.
    Spawn,
}

impl Tool {
    /// Every tool, in the order of the tool panel.
    pub const ALL: [Tool; 12] = [
        Tool::Pan,
        Tool::Raise,
        Tool::Lower,
        Tool::Smooth,
        Tool::Flatten,
        Tool::WallRect,
        Tool::WallPolygon,
        Tool::WallBrush,
        Tool::Eraser,
        Tool::Discomfort,
        Tool::Goal,
        Tool::Spawn,
    ];

    /// The label of the tool's button (tests find the buttons by these).
    pub fn label(self) -> &'static str {
        match self {
            Tool::Pan => "Pan",
            Tool::Raise => "Raise",
            Tool::Lower => "Lower",
            Tool::Smooth => "Smooth",
            Tool::Flatten => "Flatten",
            Tool::WallRect => "Wall rectangle",
            Tool::WallPolygon => "Wall polygon",
            Tool::WallBrush => "Wall brush",
            Tool::Eraser => "Eraser",
            Tool::Discomfort => "Discomfort",
            Tool::Goal => "Goal area",
            Tool::Spawn => "Spawn area",
        }
    }

    /// The layer a brush tool paints, or `None` for shape and view tools.
    pub fn brush_layer(self) -> Option<LayerKind> {
        match self {
            Tool::Raise | Tool::Lower | Tool::Smooth | Tool::Flatten => Some(LayerKind::Height),
            Tool::WallBrush | Tool::Eraser => Some(LayerKind::Obstacle),
            Tool::Discomfort => Some(LayerKind::Discomfort),
            _ => None,
        }
    }

    /// True for tools that drag a rectangle.
    pub fn is_rect(self) -> bool {
        matches!(self, Tool::WallRect | Tool::Goal | Tool::Spawn)
    }
}

/// The three painted rasters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    /// Terrain height.
    Height,
    /// Obstacles.
    Obstacle,
    /// Discomfort.
    Discomfort,
}

/// Settings shared by the brushes.
#[derive(Clone, Debug, PartialEq)]
pub struct BrushSettings {
    /// Brush radius, metres.
    pub radius: f64,
    /// Strength in `[0, 1]`: the fraction of the full effect at the brush centre per dab.
    pub strength: f32,
    /// Value the discomfort brush blends towards (0 erases).
    pub discomfort_value: f32,
    /// Number of walkers a new spawn area gets.
    pub spawn_count: usize,
}

impl Default for BrushSettings {
    fn default() -> Self {
        Self {
            radius: 1.5,
            strength: 0.2,
            discomfort_value: 2.0,
            spawn_count: 20,
        }
    }
}

/// Raised-cosine fall-off: 1 at the centre, 0 at the rim, flat at both ends.
pub fn falloff(t: f64) -> f32 {
    if t >= 1.0 {
        0.0
    } else {
        (0.5 * (1.0 + (std::f64::consts::PI * t.max(0.0)).cos())) as f32
    }
}

/// Calls `f(row, col, t)` for every cell whose centre lies within `radius` of `at`, with
/// `t = distance / radius` in `[0, 1]`.
pub fn for_cells_in_disc(grid: &Grid, at: [f64; 2], radius: f64, mut f: impl FnMut(usize, usize, f64)) {
    let h = grid.cell_size;
    let radius = radius.max(0.5 * h);
    let c0 = ((at[0] - radius) / h - 0.5).floor().max(0.0) as usize;
    let r0 = ((at[1] - radius) / h - 0.5).floor().max(0.0) as usize;
    let c1 = (((at[0] + radius) / h - 0.5).ceil().max(-1.0) as isize).min(grid.cols as isize - 1);
    let r1 = (((at[1] + radius) / h - 0.5).ceil().max(-1.0) as isize).min(grid.rows as isize - 1);
    if c1 < 0 || r1 < 0 {
        return;
    }
    for r in r0..=r1 as usize {
        for c in c0..=c1 as usize {
            let (x, y) = grid.cell_center(r, c);
            let d = ((x - at[0]).powi(2) + (y - at[1]).powi(2)).sqrt();
            if d <= radius {
                f(r, c, d / radius);
            }
        }
    }
}

/// What one terrain dab does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TerrainOp {
    /// Add height.
    Raise,
    /// Remove height.
    Lower,
    /// Blend towards the 3x3 mean.
    Smooth,
    /// Blend towards this height, metres.
    Flatten(f32),
}

/// One terrain dab at `at`.
pub fn terrain_dab(grid: &Grid, height: &mut Array2<f32>, at: [f64; 2], s: &BrushSettings, op: TerrainOp) {
    let before = match op {
        TerrainOp::Smooth => Some(height.clone()),
        _ => None,
    };
    for_cells_in_disc(grid, at, s.radius, |r, c, t| {
        let w = s.strength.clamp(0.0, 1.0) * falloff(t);
        let v = &mut height[(r, c)];
        match op {
            TerrainOp::Raise => *v += w * MAX_HEIGHT_STEP,
            TerrainOp::Lower => *v -= w * MAX_HEIGHT_STEP,
            TerrainOp::Flatten(target) => *v += w * (target - *v),
            TerrainOp::Smooth => {
                let src = before.as_ref().expect("copied above");
                let mut sum = 0.0;
                let mut n = 0.0;
                for dr in -1isize..=1 {
                    for dc in -1isize..=1 {
                        let (rr, cc) = (r as isize + dr, c as isize + dc);
                        if rr >= 0 && cc >= 0 && (rr as usize) < grid.rows && (cc as usize) < grid.cols {
                            sum += src[(rr as usize, cc as usize)];
                            n += 1.0;
                        }
                    }
                }
                *v += w * (sum / n - *v);
            }
        }
    });
}

/// One obstacle dab: sets (`block = true`) or clears every cell in the disc (hard edge).
pub fn obstacle_dab(grid: &Grid, obstacle: &mut Array2<bool>, at: [f64; 2], radius: f64, block: bool) {
    for_cells_in_disc(grid, at, radius, |r, c, _| obstacle[(r, c)] = block);
}

/// One discomfort dab: blends towards `s.discomfort_value`, never below 0.
pub fn discomfort_dab(grid: &Grid, g: &mut Array2<f32>, at: [f64; 2], s: &BrushSettings) {
    let target = s.discomfort_value.max(0.0);
    for_cells_in_disc(grid, at, s.radius, |r, c, t| {
        let w = s.strength.clamp(0.0, 1.0) * falloff(t);
        let v = &mut g[(r, c)];
        *v = (*v + w * (target - *v)).max(0.0);
    });
}

/// Blocks (or clears) every cell whose centre lies in the rectangle `[min, max)`.
pub fn fill_rect(grid: &Grid, obstacle: &mut Array2<bool>, min: [f64; 2], max: [f64; 2], block: bool) {
    for ((r, c), v) in obstacle.indexed_iter_mut() {
        let (x, y) = grid.cell_center(r, c);
        if x >= min[0] && x < max[0] && y >= min[1] && y < max[1] {
            *v = block;
        }
    }
}

/// Blocks every cell whose centre lies inside the polygon (even-odd rule).
pub fn fill_polygon(grid: &Grid, obstacle: &mut Array2<bool>, points: &[[f64; 2]]) {
    for ((r, c), v) in obstacle.indexed_iter_mut() {
        let (x, y) = grid.cell_center(r, c);
        if point_in_polygon(points, x, y) {
            *v = true;
        }
    }
}

/// The dab centres for a drag from `from` (already dabbed) to `to`: evenly spaced, at most
/// `spacing` apart, ending exactly at `to`.
pub fn dabs_along(from: [f64; 2], to: [f64; 2], spacing: f64) -> Vec<[f64; 2]> {
    let d = ((to[0] - from[0]).powi(2) + (to[1] - from[1]).powi(2)).sqrt();
    let n = (d / spacing.max(1e-9)).ceil().max(1.0) as usize;
    (1..=n)
        .map(|i| {
            let t = i as f64 / n as f64;
            [from[0] + t * (to[0] - from[0]), from[1] + t * (to[1] - from[1])]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raise_is_symmetric_and_peaks_at_centre() {
        let grid = Grid::new(21, 21, 1.0);
        let mut h = Array2::zeros(grid.shape());
        let s = BrushSettings {
            radius: 5.0,
            strength: 1.0,
            ..Default::default()
        };
        terrain_dab(&grid, &mut h, [10.5, 10.5], &s, TerrainOp::Raise);
        assert_eq!(h[(10, 10)], MAX_HEIGHT_STEP);
        assert_eq!(h[(10, 13)], h[(10, 7)]);
        assert_eq!(h[(13, 10)], h[(7, 10)]);
        assert!(h[(10, 12)] > h[(10, 14)]);
        assert_eq!(h[(10, 16)], 0.0, "outside the radius");
        terrain_dab(&grid, &mut h, [10.5, 10.5], &s, TerrainOp::Lower);
        assert!(h.iter().all(|&v| v.abs() < 1e-6), "lower undoes raise");
    }

    #[test]
    fn flatten_at_full_strength_sets_the_centre_and_smooth_keeps_a_plane() {
        let grid = Grid::new(11, 11, 1.0);
        let mut h = Array2::from_shape_fn(grid.shape(), |(r, _)| r as f32);
        let s = BrushSettings {
            radius: 3.0,
            strength: 1.0,
            ..Default::default()
        };
        let mut flat = h.clone();
        terrain_dab(&grid, &mut flat, [5.5, 5.5], &s, TerrainOp::Flatten(2.0));
        assert_eq!(flat[(7, 5)], 7.0 + falloff(2.0 / 3.0) * (2.0 - 7.0));
        assert_eq!(flat[(5, 5)], 2.0);
        // A linear ramp is its own 3x3 mean away from the border.
        terrain_dab(&grid, &mut h, [5.5, 5.5], &s, TerrainOp::Smooth);
        assert!((h[(5, 5)] - 5.0).abs() < 1e-6);
    }

    #[test]
    fn obstacle_dab_and_eraser() {
        let grid = Grid::new(10, 10, 0.5);
        let mut o = Array2::from_elem(grid.shape(), false);
        obstacle_dab(&grid, &mut o, [2.5, 2.5], 0.6, true);
        let n = o.iter().filter(|&&b| b).count();
        assert!((4..=9).contains(&n), "{n}");
        assert!(o[grid.cell_of(2.4, 2.4).unwrap()]);
        obstacle_dab(&grid, &mut o, [2.5, 2.5], 1.0, false);
        assert!(o.iter().all(|&b| !b));
    }

    #[test]
    fn discomfort_never_negative_and_reaches_target() {
        let grid = Grid::new(5, 5, 1.0);
        let mut g = Array2::from_elem(grid.shape(), 1.0f32);
        let s = BrushSettings {
            radius: 1.0,
            strength: 1.0,
            discomfort_value: -3.0,
            ..Default::default()
        };
        discomfort_dab(&grid, &mut g, [2.5, 2.5], &s);
        assert_eq!(g[(2, 2)], 0.0);
        assert!(g.iter().all(|&v| v >= 0.0));
    }

    #[test]
    fn dabs_are_evenly_spaced_and_end_at_target() {
        let d = dabs_along([0.0, 0.0], [1.0, 0.0], 0.3);
        assert_eq!(d.len(), 4);
        assert_eq!(*d.last().unwrap(), [1.0, 0.0]);
        assert_eq!(dabs_along([0.0, 0.0], [0.0, 0.0], 0.3).len(), 1);
    }

    #[test]
    fn disc_at_the_border_is_clipped() {
        let grid = Grid::new(4, 4, 1.0);
        let mut n = 0;
        for_cells_in_disc(&grid, [-0.2, -0.2], 1.0, |_, _, _| n += 1);
        assert_eq!(n, 1);
        n = 0;
        for_cells_in_disc(&grid, [50.0, 50.0], 1.0, |_, _, _| n += 1);
        assert_eq!(n, 0);
    }
}
