//! Moving obstacles ("movers"): a shape (a rectangle or a disc, turned by a fixed angle) that
//! stands at a position and moves with a velocity, or travels a path at a speed. The map's
//! `"movers"` and the run-time API's obstacles are both a [`Mover`]; the simulation moves them
//! each step (`crate::sim::movers`).
//!
//! Two things read a mover's shape:
//! - the potentials, through the cells it covers ([`MoverShape::covered_cells`]: the cells whose
//!   centre lies within the shape widened by the largest walker's radius, where no walker's
//!   centre may stand), whose entries the step's cost closes ([`close_entries`]);
//! - the walk, through the signed distance of a point to the shape ([`MoverShape::distance`])
//!   and the push that puts a body back at its edge ([`MoverShape::push_out`]).

use crate::grid::{Dir, Grid};
use ndarray::Array3;

/// The outline of a mover in its own frame (metres, around the mover's position), turned by
/// `angle` about that position.
#[derive(Clone, Debug, PartialEq)]
pub struct MoverShape {
    /// The outline before the turn.
    pub kind: ShapeKind,
    /// Counter-clockwise turn about the mover's position, radians.
    pub angle: f64,
}

/// A mover's outline in its own frame.
#[derive(Clone, Debug, PartialEq)]
pub enum ShapeKind {
    /// A rectangle from `min` to `max` (`[x, y]`, metres from the mover's position).
    Rect {
        /// Lower-left corner.
        min: [f64; 2],
        /// Upper-right corner.
        max: [f64; 2],
    },
    /// A disc of `radius` metres centred `center` metres from the mover's position.
    Circle {
        /// Centre.
        center: [f64; 2],
        /// Radius, metres.
        radius: f64,
    },
}

impl MoverShape {
    /// A rectangle of `length` by `width` metres centred on the mover's position, not turned.
    pub fn rect(length: f64, width: f64) -> Self {
        Self {
            kind: ShapeKind::Rect {
                min: [-0.5 * length, -0.5 * width],
                max: [0.5 * length, 0.5 * width],
            },
            angle: 0.0,
        }
    }

    /// A disc of `radius` metres centred on the mover's position.
    pub fn circle(radius: f64) -> Self {
        Self {
            kind: ShapeKind::Circle {
                center: [0.0, 0.0],
                radius,
            },
            angle: 0.0,
        }
    }

    /// The same shape turned by `degrees` counter-clockwise.
    pub fn rotated(mut self, degrees: f64) -> Self {
        self.angle = degrees.to_radians();
        self
    }

    /// Why the shape cannot be a mover's, in words, or `None`: every number finite, a
    /// rectangle with `min < max` on both axes, a disc with a positive radius.
    pub fn problem(&self) -> Option<String> {
        if !self.angle.is_finite() {
            return Some(format!("angle {}: expected a finite angle", self.angle));
        }
        match &self.kind {
            ShapeKind::Rect { min, max } => {
                let finite = min.iter().chain(max).all(|v| v.is_finite());
                (!(finite && min[0] < max[0] && min[1] < max[1])).then(|| {
                    format!(
                        "rect from {min:?} to {max:?}: expected finite corners with min below max \
                         on both axes"
                    )
                })
            }
            ShapeKind::Circle { center, radius } => {
                let finite = center.iter().all(|v| v.is_finite());
                (!(finite && radius.is_finite() && *radius > 0.0)).then(|| {
                    format!("circle of radius {radius} at {center:?}: expected a finite centre and a radius above 0")
                })
            }
        }
    }

    /// The outline of the shape standing at `at` as a closed polygon (world, metres,
    /// counter-clockwise; a disc as 32 points on its circle), for drawing it.
    pub fn outline(&self, at: [f64; 2]) -> Vec<[f64; 2]> {
        let local: Vec<[f64; 2]> = match &self.kind {
            ShapeKind::Rect { min, max } => {
                vec![
                    [min[0], min[1]],
                    [max[0], min[1]],
                    [max[0], max[1]],
                    [min[0], max[1]],
                ]
            }
            ShapeKind::Circle { center, radius } => (0..32)
                .map(|k| {
                    let a = k as f64 * std::f64::consts::TAU / 32.0;
                    [center[0] + radius * a.cos(), center[1] + radius * a.sin()]
                })
                .collect(),
        };
        local
            .into_iter()
            .map(|q| {
                let w = self.world_dir(q);
                [at[0] + w[0], at[1] + w[1]]
            })
            .collect()
    }

    /// `p` (world, metres) in the shape's own frame when the mover stands at `at`.
    fn local(&self, at: [f64; 2], p: [f64; 2]) -> [f64; 2] {
        let (s, c) = self.angle.sin_cos();
        let (dx, dy) = (p[0] - at[0], p[1] - at[1]);
        [c * dx + s * dy, -s * dx + c * dy]
    }

    /// A direction of the shape's own frame in world coordinates.
    fn world_dir(&self, d: [f64; 2]) -> [f64; 2] {
        let (s, c) = self.angle.sin_cos();
        [c * d[0] - s * d[1], s * d[0] + c * d[1]]
    }

    /// The signed distance from `p` to the outline of the shape standing at `at` (metres:
    /// positive outside, negative inside), and the outward direction (world, unit) that
    /// increases it fastest. A point inside a rectangle leaves by its nearest side (ties in
    /// the order east, north, west, south); the centre of a disc leaves along +x of its frame.
    pub fn distance(&self, at: [f64; 2], p: [f64; 2]) -> (f64, [f64; 2]) {
        let q = self.local(at, p);
        let (d, n) = match &self.kind {
            ShapeKind::Rect { min, max } => {
                let cx = q[0].clamp(min[0], max[0]);
                let cy = q[1].clamp(min[1], max[1]);
                let (ox, oy) = (q[0] - cx, q[1] - cy);
                let out = ox.hypot(oy);
                if out > 0.0 {
                    (out, [ox / out, oy / out])
                } else {
                    let sides = [
                        (max[0] - q[0], [1.0, 0.0]),
                        (max[1] - q[1], [0.0, 1.0]),
                        (q[0] - min[0], [-1.0, 0.0]),
                        (q[1] - min[1], [0.0, -1.0]),
                    ];
                    let (depth, n) = sides.into_iter().fold((f64::INFINITY, [1.0, 0.0]), |best, s| {
                        if s.0 < best.0 { s } else { best }
                    });
                    (-depth, n)
                }
            }
            ShapeKind::Circle { center, radius } => {
                let (vx, vy) = (q[0] - center[0], q[1] - center[1]);
                let len = vx.hypot(vy);
                let n = if len > 0.0 {
                    [vx / len, vy / len]
                } else {
                    [1.0, 0.0]
                };
                (len - radius, n)
            }
        };
        (d, self.world_dir(n))
    }

    /// The displacement (world, metres) that puts a body of `radius` centred at `p` just clear
    /// of the shape standing at `at` (its centre `radius + clear` from the outline), or `None`
    /// when it is that far already.
    pub fn push_out(&self, at: [f64; 2], p: [f64; 2], radius: f64, clear: f64) -> Option<[f64; 2]> {
        let (d, n) = self.distance(at, p);
        let need = radius + clear - d;
        (d < radius).then_some([n[0] * need, n[1] * need])
    }

    /// The radius of the disc about the mover's position that holds the whole shape, metres.
    pub fn reach(&self) -> f64 {
        match &self.kind {
            ShapeKind::Rect { min, max } => {
                let x = min[0].abs().max(max[0].abs());
                let y = min[1].abs().max(max[1].abs());
                x.hypot(y)
            }
            ShapeKind::Circle { center, radius } => center[0].hypot(center[1]) + radius,
        }
    }

    /// The row-major indices, ascending, of the cells of `grid` whose centre lies within
    /// `widen` metres of the shape standing at `at` (inside it or at most `widen` outside).
    pub fn covered_cells(&self, grid: &Grid, at: [f64; 2], widen: f64) -> Vec<usize> {
        let mut cells = Vec::new();
        if grid.is_empty() || !(at[0].is_finite() && at[1].is_finite()) {
            return cells;
        }
        let h = grid.cell_size;
        let reach = self.reach() + widen.max(0.0);
        let span = |lo: f64, hi: f64, n: usize| -> Option<(usize, usize)> {
            // Cells whose centre (k + 0.5) h lies in [lo, hi].
            let first = ((lo / h - 0.5).ceil()).max(0.0);
            let last = ((hi / h - 0.5).floor()).min(n as f64 - 1.0);
            (first <= last).then_some((first as usize, last as usize))
        };
        let (Some((c0, c1)), Some((r0, r1))) = (
            span(at[0] - reach, at[0] + reach, grid.cols),
            span(at[1] - reach, at[1] + reach, grid.rows),
        ) else {
            return cells;
        };
        for r in r0..=r1 {
            for c in c0..=c1 {
                let (x, y) = grid.cell_center(r, c);
                if self.distance(at, [x, y]).0 <= widen {
                    cells.push(r * grid.cols + c);
                }
            }
        }
        cells
    }
}

/// How a mover moves.
#[derive(Clone, Debug, PartialEq)]
pub enum Motion {
    /// From where it stands at `velocity` m/s (`[0, 0]`: it stands still), until moved.
    Free {
        /// Metres per second, `[vx, vy]`.
        velocity: [f64; 2],
    },
    /// Along the polyline `points` at `speed` m/s from time `from` on (standing at the first
    /// point before), back to the first point and round again when `looped`, else standing at
    /// the last point once there.
    Path {
        /// The points `[x, y]`, metres, at least one.
        points: Vec<[f64; 2]>,
        /// Metres per second along the path.
        speed: f64,
        /// When it sets off, seconds of the run.
        from: f64,
        /// Whether it goes round again from the last point to the first.
        looped: bool,
    },
}

impl Motion {
    /// Where a mover on a path stands at time `t` and its velocity there (`None` for
    /// [`Motion::Free`], whose place is its own state).
    pub fn on_path_at(&self, t: f64) -> Option<([f64; 2], [f64; 2])> {
        let Motion::Path {
            points,
            speed,
            from,
            looped,
        } = self
        else {
            return None;
        };
        let first = *points.first()?;
        let mut legs: Vec<([f64; 2], [f64; 2])> = points.windows(2).map(|w| (w[0], w[1])).collect();
        if *looped && points.len() > 1 {
            legs.push((points[points.len() - 1], first));
        }
        let lengths: Vec<f64> = legs
            .iter()
            .map(|(a, b)| (b[0] - a[0]).hypot(b[1] - a[1]))
            .collect();
        let total: f64 = lengths.iter().sum();
        if t < *from || total <= 0.0 || *speed <= 0.0 {
            return Some((first, [0.0, 0.0]));
        }
        let mut s = speed * (t - from);
        if *looped {
            s %= total;
        } else if s >= total {
            return Some((points[points.len() - 1], [0.0, 0.0]));
        }
        for ((a, b), len) in legs.iter().zip(&lengths) {
            if s <= *len && *len > 0.0 {
                let f = s / len;
                let dir = [(b[0] - a[0]) / len, (b[1] - a[1]) / len];
                let at = [a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])];
                return Some((at, [dir[0] * speed, dir[1] * speed]));
            }
            s -= len;
        }
        Some((points[points.len() - 1], [0.0, 0.0]))
    }
}

/// A moving obstacle as a map or the API gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Mover {
    /// Its name (the map's, or empty).
    pub name: String,
    /// Its outline.
    pub shape: MoverShape,
    /// Where it stands at the start (a mover on a path starts at the path's first point).
    pub position: [f64; 2],
    /// How it moves.
    pub motion: Motion,
}

/// The faces an obstacle's way ahead closes in a cell `offset` metres from where the obstacle
/// will stand, travelling at velocity `v` ([`close_entries`]), as bits `1 << Dir::index()`:
/// those that lead along the travel (a positive share of `v`) and those that lead toward its
/// line of travel (from the side of it where the cell lies; the left side for a cell on the
/// line). A walker in the way so leaves it by the nearer side, never ahead of the obstacle,
/// which it cannot outrun, nor across its line.
pub fn way_faces(v: [f64; 2], offset: [f64; 2]) -> u8 {
    // The unit normal of the line of travel on the cell's side (unnormalised: signs only).
    let left = [-v[1], v[0]];
    let side = if left[0] * offset[0] + left[1] * offset[1] >= 0.0 {
        1.0
    } else {
        -1.0
    };
    let n = [side * left[0], side * left[1]];
    Dir::ALL
        .into_iter()
        .filter(|d| {
            let (ux, uy) = d.unit();
            ux * v[0] + uy * v[1] > 0.0 || ux * n[0] + uy * n[1] < 0.0
        })
        .fold(0, |bits, d| bits | (1 << d.index()))
}

/// Closes faces in a step's `speed` and `cost` fields (`(rows, cols, 4)`: speed 0, cost
/// `+inf`) for the moving obstacles' cells (row-major indices, ascending):
/// - every face into a cell of `body` (where a walker's centre would overlap an obstacle);
/// - for a cell of `ahead` (where one is about to be, with the [`way_faces`] of the travel
///   that covers it), every face into it from a cell of neither, and its faces of the way.
///
/// No potential routes into or through an obstacle, and none into the way ahead of it; a
/// walker caught ahead of one leaves that way sideways by the nearer side (it cannot outrun
/// the obstacle, which a route straight ahead would ask of it).
pub fn close_entries(
    grid: &Grid,
    body: &[usize],
    ahead: &[(usize, u8)],
    speed: &mut Array3<f32>,
    cost: &mut Array3<f32>,
) {
    let in_ahead = |i: usize| ahead.binary_search_by_key(&i, |&(k, _)| k).is_ok();
    let outside = |i: usize| body.binary_search(&i).is_err() && !in_ahead(i);
    let mut close = |r: usize, c: usize, d: Dir| {
        speed[[r, c, d.index()]] = 0.0;
        cost[[r, c, d.index()]] = f32::INFINITY;
    };
    for &k in body {
        let (r, c) = (k / grid.cols, k % grid.cols);
        for d in Dir::ALL {
            if let Some((nr, nc)) = grid.neighbor(r, c, d) {
                close(nr, nc, d.opposite());
            }
        }
    }
    for &(k, forward) in ahead {
        let (r, c) = (k / grid.cols, k % grid.cols);
        for d in Dir::ALL {
            if forward & (1 << d.index()) != 0 {
                close(r, c, d);
            }
            if let Some((nr, nc)) = grid.neighbor(r, c, d)
                && outside(nr * grid.cols + nc)
            {
                close(nr, nc, d.opposite());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outline_lies_on_the_shape() {
        for shape in [MoverShape::rect(4.0, 2.0).rotated(30.0), MoverShape::circle(1.5)] {
            let outline = shape.outline([7.0, 3.0]);
            assert!(outline.len() >= 4);
            for p in outline {
                let (d, _) = shape.distance([7.0, 3.0], p);
                assert!(d.abs() < 1e-9, "{p:?} is {d} m off the outline");
            }
        }
    }

    #[test]
    fn distances_to_a_turned_rectangle_and_a_disc() {
        let rect = MoverShape::rect(4.0, 2.0);
        assert_eq!(rect.distance([10.0, 5.0], [13.0, 5.0]), (1.0, [1.0, 0.0]));
        assert_eq!(rect.distance([10.0, 5.0], [10.0, 5.5]), (-0.5, [0.0, 1.0]));
        let turned = MoverShape::rect(4.0, 2.0).rotated(90.0);
        let (d, n) = turned.distance([10.0, 5.0], [10.0, 8.0]);
        assert!((d - 1.0).abs() < 1e-12 && (n[1] - 1.0).abs() < 1e-12, "{d} {n:?}");
        let disc = MoverShape::circle(1.0);
        assert_eq!(disc.distance([0.0, 0.0], [0.0, 3.0]), (2.0, [0.0, 1.0]));
        let push = disc
            .push_out([0.0, 0.0], [0.5, 0.0], 0.25, 0.0)
            .expect("overlaps");
        assert!((push[0] - 0.75).abs() < 1e-12 && push[1] == 0.0);
        assert_eq!(disc.push_out([0.0, 0.0], [2.0, 0.0], 0.25, 0.0), None);
    }

    #[test]
    fn covered_cells_are_those_with_a_centre_within_the_widened_shape() {
        let grid = Grid::new(10, 10, 1.0);
        // A 2 x 2 square on (5, 5): centres 4.5 and 5.5 on each axis.
        let cells = MoverShape::rect(2.0, 2.0).covered_cells(&grid, [5.0, 5.0], 0.0);
        assert_eq!(cells, vec![44, 45, 54, 55]);
        // Widened by 0.6 the next centres (3.5, 6.5) are 0.5 away on one axis: 4 x 4 minus corners.
        assert_eq!(
            MoverShape::rect(2.0, 2.0)
                .covered_cells(&grid, [5.0, 5.0], 0.6)
                .len(),
            12
        );
        assert!(
            MoverShape::circle(1.0)
                .covered_cells(&grid, [-5.0, 5.0], 0.5)
                .is_empty()
        );
    }

    #[test]
    fn the_way_ahead_closes_the_faces_forward_and_toward_the_line_of_travel() {
        let bit = |d: Dir| 1u8 << d.index();
        // Travelling east, a cell north of the line: east (forward) and south (toward it).
        assert_eq!(way_faces([2.0, 0.0], [1.0, 0.5]), bit(Dir::E) | bit(Dir::S));
        assert_eq!(way_faces([2.0, 0.0], [1.0, -0.5]), bit(Dir::E) | bit(Dir::N));
        // Travelling north-east, a cell to its right (south-east).
        assert_eq!(
            way_faces([1.0, 1.0], [1.0, -1.0]),
            bit(Dir::E) | bit(Dir::N) | bit(Dir::W)
        );
    }

    #[test]
    fn a_path_is_walked_at_its_speed_and_looped() {
        let motion = Motion::Path {
            points: vec![[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]],
            speed: 2.0,
            from: 1.0,
            looped: false,
        };
        assert_eq!(motion.on_path_at(0.0), Some(([0.0, 0.0], [0.0, 0.0])));
        assert_eq!(motion.on_path_at(3.0), Some(([4.0, 0.0], [2.0, 0.0])));
        assert_eq!(motion.on_path_at(8.0), Some(([10.0, 4.0], [0.0, 2.0])));
        assert_eq!(motion.on_path_at(100.0), Some(([10.0, 10.0], [0.0, 0.0])));
        let looped = Motion::Path {
            points: vec![[0.0, 0.0], [4.0, 0.0]],
            speed: 1.0,
            from: 0.0,
            looped: true,
        };
        assert_eq!(looped.on_path_at(1.0), Some(([1.0, 0.0], [1.0, 0.0])));
        assert_eq!(looped.on_path_at(13.0), Some(([3.0, 0.0], [-1.0, 0.0])));
    }
}
