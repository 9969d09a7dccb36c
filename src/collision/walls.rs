//! Walls: moving a walker against blocked cells, for the simulation's walk (`sim`) and the
//! local layer (`local`) alike.
//!
//! Every move is built from one straight step, [`slide`]: the whole step when the walls allow
//! it, otherwise the step along x alone or along y alone (the walker slides along the wall),
//! otherwise none. What "allowed" means is the caller's rule, a test of a step from one place
//! to another:
//! - the scene's ([`passable`]: the step ends inside the domain and outside every obstacle
//!   cell, a point's cell found by [`crate::Grid::cell_of`]), which the simulation uses;
//! - a [`WallMap`]'s ([`WallMap::step_ok`]: the same question with a point's cell an `f32`
//!   product by `1 / cell`, as the GPU computes it, and no step cut diagonally between two
//!   blocked cells), which the local layer uses.
//!
//! Both rules also keep a body out of openings narrower than itself. The free floor across a
//! cell is its span ([`FreeRuns::span`]: the shorter of the unbroken runs of free cells along
//! its row and along its column that hold it); a body needs [`body_cells`] cells side by side,
//! and it never steps into a cell whose span is shorter than that by more than the span of the
//! cell it leaves ([`misfit`]). A door or corridor narrower than a body is such a cell all the
//! way across, so no body wider than the opening passes it, while a body spawned in a narrow
//! place may still walk out of it.
//!
//! On [`slide`] stand the two moves:
//! - [`slide_body`] (the simulation): one step of a [`Body`], its rim kept out of the obstacle
//!   cells it was not in; a rim of radius 0 moves the point, as the published model does;
//! - [`WallMap::move_agent`] (the local layer, and `move_agent` in `shaders/local_common.wgsl`):
//!   the move in sub-steps of at most half a cell, the velocity's blocked component zeroed
//!   (walkers) or reversed (a fish school bouncing).

use super::segments::WallSegments;
use crate::scene::Scene;
use crate::vec2::V2;
use ndarray::{Array2, ArrayView2};

/// What [`slide`] let through of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slide {
    /// The whole step.
    Whole,
    /// The step along x only (a wall stopped the y motion).
    AlongX,
    /// The step along y only (a wall stopped the x motion).
    AlongY,
    /// Nothing: the walker stays where it was.
    Stopped,
}

/// One straight step from `p` by `v * h` against the walls, `allowed(from, to)` saying whether
/// a step may be taken: the whole step when allowed, otherwise (when `v` has an x component)
/// the step along x alone, otherwise (when it has a y component) along y alone, otherwise
/// none. Returns where the step ends and what of it was taken.
#[inline]
pub fn slide(p: V2, v: V2, h: f32, allowed: impl Fn(V2, V2) -> bool) -> (V2, Slide) {
    let t = p + v * h;
    if allowed(p, t) {
        return (t, Slide::Whole);
    }
    let along_x = V2::new(t.x, p.y);
    if v.x != 0.0 && allowed(p, along_x) {
        return (along_x, Slide::AlongX);
    }
    let along_y = V2::new(p.x, t.y);
    if v.y != 0.0 && allowed(p, along_y) {
        return (along_y, Slide::AlongY);
    }
    (p, Slide::Stopped)
}

/// True when world point `(x, y)` is inside the domain and not in an obstacle cell (the cell
/// by [`crate::Grid::cell_of`]): where the simulation lets a walker's centre stand.
pub fn passable(scene: &Scene, x: f32, y: f32) -> bool {
    scene
        .grid
        .cell_of(x as f64, y as f64)
        .is_some_and(|rc| !scene.obstacle[rc])
}

/// The longest run [`FreeRuns`] counts, cells: a longer run reads as this many (far wider than
/// any body), so a span fits the 30 bits a GPU wall-map cell keeps for it.
pub const SPAN_MAX: u32 = (1 << 30) - 1;

/// The free floor through each cell of a grid: per cell, the number of free cells in the
/// unbroken run of its column (the floor across a walk along x) and of its row (across a walk
/// along y) that holds it, at most [`SPAN_MAX`]; 0 on an obstacle cell. The grid's edge ends a
/// run as an obstacle does.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FreeRuns {
    /// Per cell, the run of free cells in its column, `(rows, cols)`.
    pub column: Array2<u32>,
    /// Per cell, the run of free cells in its row, `(rows, cols)`.
    pub row: Array2<u32>,
}

impl FreeRuns {
    /// The runs of the obstacle mask `obstacle` (`(rows, cols)`, `true` on an obstacle).
    pub fn new(obstacle: ArrayView2<bool>) -> Self {
        let mut column = Array2::zeros(obstacle.dim());
        let mut row = Array2::zeros(obstacle.dim());
        for (line, mut out) in obstacle.columns().into_iter().zip(column.columns_mut()) {
            runs_along(line.iter().copied(), out.iter_mut());
        }
        for (line, mut out) in obstacle.rows().into_iter().zip(row.rows_mut()) {
            runs_along(line.iter().copied(), out.iter_mut());
        }
        Self { column, row }
    }

    /// Per cell, its span: the shorter of its two runs, the most cells a body may be wide to
    /// stand there with its full width free along both axes.
    pub fn span(&self) -> Array2<u32> {
        let mut span = self.column.clone();
        span.zip_mut_with(&self.row, |a, &b| *a = (*a).min(b));
        span
    }
}

/// Writes to each cell of a line (`blocked` per cell) the length of the run of free cells it
/// belongs to, at most [`SPAN_MAX`]; blocked cells get 0.
fn runs_along<'a>(blocked: impl Iterator<Item = bool>, out: impl Iterator<Item = &'a mut u32>) {
    let blocked: Vec<bool> = blocked.collect();
    let mut lengths = vec![0u32; blocked.len()];
    let mut start = 0;
    while start < blocked.len() {
        let end = blocked[start..]
            .iter()
            .position(|&b| b)
            .map_or(blocked.len(), |k| start + k);
        lengths[start..end].fill((end - start).min(SPAN_MAX as usize) as u32);
        start = end + 1;
    }
    for (o, l) in out.zip(lengths) {
        *o = l;
    }
}

/// `1 / cell` in `f32`, as a point's cell and a body's width in cells are computed on the CPU
/// and the GPU alike ([`WallMap::inv_cell`]).
#[inline]
pub fn inv_cell(cell_size: f64) -> f32 {
    1.0 / cell_size as f32
}

/// How many cells side by side a body of radius `radius` (m) needs: `ceil(2 radius / cell)`,
/// with `inv_cell` from [`inv_cell`] (the product rounded in `f32`, as `body_cells` in
/// `shaders/local_common.wgsl` computes it); 0 for radius 0.
#[inline]
pub fn body_cells(radius: f32, inv_cell: f32) -> u32 {
    let width = 2.0 * radius * inv_cell;
    if width > 0.0 { width.ceil() as u32 } else { 0 }
}

/// How many cells a body `need` cells wide ([`body_cells`]) lacks in a cell of span `span`
/// ([`FreeRuns::span`]): 0 where it fits. A body never steps to a cell where it lacks more
/// than where it stands.
#[inline]
pub fn misfit(span: u32, need: u32) -> u32 {
    need.saturating_sub(span)
}

/// A body as the simulation's move ([`slide_body`]) keeps it off the walls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    /// Radius (m) of the rim kept out of obstacle cells: the walker's radius in the pedestrian
    /// model, 0 (the centre alone) in the published one.
    pub rim: f32,
    /// The cells side by side the body needs ([`body_cells`] of its radius, in either model).
    pub cells: u32,
}

impl Body {
    /// A body of radius `radius` on cells of `cell_size` m, its rim kept off walls when `rim`.
    pub fn new(radius: f32, cell_size: f64, rim: bool) -> Self {
        Self {
            rim: if rim { radius } else { 0.0 },
            cells: body_cells(radius, inv_cell(cell_size)),
        }
    }
}

/// A step of a body from `p` by `v * h`, the simulation's move, on the scene's walls and their
/// spans (`spans`, [`FreeRuns::span`] of the scene's obstacles). The centre moves as [`slide`]
/// moves it under the scene's rule ([`passable`]) with the body's width: a step is taken only
/// when it ends in a cell where the body lacks no more cells ([`misfit`]) than where it starts
/// and, for a step longer than a cell (a push out of a large body), every point a cell apart
/// along it is such a place too, so no step jumps a wall or an opening. Then each of the rim's
/// four points `body.rim` from its centre along the axes that has entered an obstacle cell it
/// was not in before the step pushes the centre back along its axis until the point is on the
/// cell's edge (when the centre may stand there); the grid's edge stops a rim too, except
/// beside a goal cell (`rim_free`). A body so keeps its radius from walls and slides along
/// them and into a door's opening (a 0.75 m door lets centres through a 0.25 m band for bodies
/// of 0.5 m), while a body already nearer a wall than its radius (spawned there) may still
/// move along it or away from it. With a rim of 0 the rim is the centre, which [`slide`]
/// already keeps passable: the step of a point.
pub fn slide_body(scene: &Scene, spans: ArrayView2<u32>, body: Body, p: V2, v: V2, h: f32) -> V2 {
    let grid = &scene.grid;
    // The cells the body lacks at a point: all of them outside the grid.
    let lacks = |q: V2| {
        grid.cell_of(q.x as f64, q.y as f64)
            .map_or(body.cells, |rc| misfit(spans[rc], body.cells))
    };
    let start = lacks(p);
    let may_stand = |q: V2| passable(scene, q.x, q.y) && lacks(q) <= start;
    let cell = grid.cell_size as f32;
    let allowed = |from: V2, to: V2| {
        if !may_stand(to) {
            return false;
        }
        let d = to - from;
        let len = d.len();
        // A step of at most a cell cannot cross a cell: the ends alone decide.
        if len <= cell {
            return true;
        }
        let n = ((len / cell).ceil() as usize).min(1 << 16);
        (1..n).all(|k| may_stand(from + d * (k as f32 / n as f32)))
    };
    let (q, _) = slide(p, v, h, allowed);
    let (x0, y0) = (p.x, p.y);
    let (mut x, mut y) = (q.x, q.y);
    if (x, y) == (x0, y0) {
        return q;
    }
    let r = body.rim;
    // Leaves a rim point this far (m) outside the obstacle cell it is pushed out of.
    const CLEAR: f32 = 1e-4;
    for sign in [1.0f32, -1.0] {
        if !rim_free(scene, x + sign * r, y) && rim_free(scene, x0 + sign * r, y0) {
            let edge = if sign > 0.0 {
                ((x + r) / cell).floor() * cell
            } else {
                ((x - r) / cell).ceil() * cell
            };
            let nx = edge - sign * (r + CLEAR);
            if may_stand(V2::new(nx, y)) {
                x = nx;
            }
        }
    }
    for sign in [1.0f32, -1.0] {
        if !rim_free(scene, x, y + sign * r) && rim_free(scene, x0, y0 + sign * r) {
            let edge = if sign > 0.0 {
                ((y + r) / cell).floor() * cell
            } else {
                ((y - r) / cell).ceil() * cell
            };
            let ny = edge - sign * (r + CLEAR);
            if may_stand(V2::new(x, ny)) {
                y = ny;
            }
        }
    }
    V2::new(x, y)
}

/// Whether a body's rim may stand at `(x, y)` ([`slide_body`]): a passable point, or a point
/// past the grid's edge beside a goal cell (the goal leads out of the map there, so a goal
/// strip along the edge narrower than a body's radius still takes its centre).
fn rim_free(scene: &Scene, x: f32, y: f32) -> bool {
    if passable(scene, x, y) {
        return true;
    }
    let g = &scene.grid;
    let (xf, yf) = (x as f64, y as f64);
    if g.cell_of(xf, yf).is_some() {
        return false;
    }
    // The grid cell nearest the point outside it.
    let h = g.cell_size;
    let c = ((xf / h).floor().max(0.0) as usize).min(g.cols.saturating_sub(1));
    let r = ((yf / h).floor().max(0.0) as usize).min(g.rows.saturating_sub(1));
    !scene.obstacle[(r, c)]
        && scene
            .groups
            .iter()
            .any(|group| group.goals.iter().any(|area| area.mask[(r, c)]))
}

/// How far, metres, a body pushed off a wall is left from it.
pub const WALL_CLEARANCE: f32 = 1e-4;

/// How much deeper, metres, a step may leave a body in a wall than it was before the step
/// (rounding of the push).
const PENETRATION_SLACK: f64 = 1e-4;

/// A step of a body of rim `rim` (its radius) and of `group` from `p` by `v * h`, the
/// simulation's move on a map with exact walls (`"walls": "exact"`, the pedestrian model),
/// against the walls as drawn (`walls`, [`WallSegments`]) and the scene's cells.
///
/// The body tries the whole step, then (when a wall holds it back) turned steps and the steps
/// along x and along y, each pushed out of the walls it would reach into
/// ([`WallSegments::push_out`]: along the nearest wall's normal, so a body slides along a wall
/// at any angle and round a door's jamb); of those that pass no wall
/// ([`WallSegments::blocks`]), end in a cell of the floor ([`passable`]; a step longer than a
/// cell checks a point every cell along it) and leave the body no deeper in a wall than it was
/// (a body spawned against a wall may move along it or away), it takes the one that gets
/// farthest along the intended step. A step through an opening of the map's edge that is one
/// of the group's open goals ([`WallSegments::crossed_opening`]) is always taken: the walker
/// leaves there. No opening narrower than a body lets it through, since both sides push.
pub fn slide_body_exact(
    scene: &Scene,
    walls: &WallSegments,
    rim: f32,
    group: u32,
    p: V2,
    v: V2,
    h: f32,
) -> V2 {
    let step = v * h;
    let want = step.len();
    if want == 0.0 {
        return p;
    }
    let cell = scene.grid.cell_size as f32;
    let may_stand = |q: V2| passable(scene, q.x, q.y);
    let depth_before = walls.penetration(p, rim, group).0.max(0.0);
    let ok = |q: V2| {
        if !may_stand(q) || walls.blocks(p, q, group) {
            return false;
        }
        let d = q - p;
        let len = d.len();
        if len > cell {
            let n = ((len / cell).ceil() as usize).min(1 << 16);
            if !(1..n).all(|k| may_stand(p + d * (k as f32 / n as f32))) {
                return false;
            }
        }
        walls.penetration(q, rim, group).0 <= depth_before + PENETRATION_SLACK
    };
    let place = |target: V2| -> Option<V2> {
        if walls.crossed_opening(p, target, group).is_some() {
            return Some(target);
        }
        let q = walls.push_out(target, rim, group, WALL_CLEARANCE);
        ok(q).then_some(q)
    };
    // The steps tried: the whole step, then (when walls hold it back by more than a share of
    // it) the step turned by 30 and 60 degrees either way, round a door's jamb or along a
    // wall met head-on, then along x and along y; the one that gets farthest along the
    // intended step is taken.
    let progress = |q: V2| (q - p).dot(step) / want;
    let whole = place(p + step);
    if let Some(q) = whole
        && progress(q) >= HELD_BACK * want
    {
        return q;
    }
    let turned = TURNS.map(|(c, s)| p + V2::new(c * step.x - s * step.y, s * step.x + c * step.y));
    let along_x = (step.x != 0.0).then(|| V2::new(p.x + step.x, p.y));
    let along_y = (step.y != 0.0).then(|| V2::new(p.x, p.y + step.y));
    let others = turned.into_iter().chain(along_x).chain(along_y).filter_map(place);
    let mut best = whole.map(|q| (progress(q), q));
    for q in others {
        let gain = progress(q);
        if gain > 0.0 && best.is_none_or(|(b, _)| gain > b) {
            best = Some((gain, q));
        }
    }
    best.map_or(p, |(_, q)| q)
}

/// The share of a step below which a body held back by a wall tries turned steps.
const HELD_BACK: f32 = 0.7;

/// Cosine and sine of the turns a body held back by a wall tries: 30 and 60 degrees each way.
const TURNS: [(f32, f32); 4] = [
    (0.866_025_4, 0.5),
    (0.866_025_4, -0.5),
    (0.5, 0.866_025_4),
    (0.5, -0.866_025_4),
];

/// The obstacle mask and domain of a scene in the form the local layer reads: its free-space
/// test, the cells that border free space (ORCA's obstacle points, `local::obstacles`), each
/// cell's distance to the nearest obstacle and its span (the free floor across it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WallMap {
    /// Cells along x.
    pub cols: usize,
    /// Cells along y.
    pub rows: usize,
    /// Cell edge, m.
    pub cell: f32,
    /// `1 / cell` in f32: a point's cell is `floor(p * inv_cell)`, here and on the GPU (a
    /// product is rounded alike everywhere; a GPU's quotient may be off by an ulp or two).
    pub inv_cell: f32,
    /// Domain width, m.
    pub width: f32,
    /// Domain height, m.
    pub height: f32,
    /// Obstacle flag per cell, row-major (`r * cols + c`).
    pub blocked: Vec<bool>,
    /// Obstacle cells with at least one free 4-neighbour (only these can be nearest).
    pub boundary: Vec<bool>,
    /// Per cell, the chessboard distance in cells to the nearest obstacle cell (0 on one,
    /// `u32::MAX` with none in the map): lets the wall probes and the obstacle scan skip agents
    /// with nothing in reach, which is most of them in open space.
    pub clearance: Vec<u32>,
    /// Per cell, its span ([`FreeRuns::span`], at most [`SPAN_MAX`]): where a body wider than
    /// the floor across a cell may not step ([`misfit`]).
    pub span: Vec<u32>,
}

/// Chessboard distance (cells) from every cell to the nearest `blocked` one, by the two-pass
/// distance transform (exact for the chessboard metric); `u32::MAX` where none is blocked.
fn chessboard_clearance(blocked: &[bool], rows: usize, cols: usize) -> Vec<u32> {
    let mut d: Vec<u32> = blocked.iter().map(|&b| if b { 0 } else { u32::MAX }).collect();
    let relax = |d: &mut Vec<u32>, i: usize, j: usize| {
        let via = d[j].saturating_add(1);
        if via < d[i] {
            d[i] = via;
        }
    };
    for r in 0..rows {
        for c in 0..cols {
            let i = r * cols + c;
            if c > 0 {
                relax(&mut d, i, i - 1);
            }
            if r > 0 {
                relax(&mut d, i, i - cols);
                if c > 0 {
                    relax(&mut d, i, i - cols - 1);
                }
                if c + 1 < cols {
                    relax(&mut d, i, i - cols + 1);
                }
            }
        }
    }
    for r in (0..rows).rev() {
        for c in (0..cols).rev() {
            let i = r * cols + c;
            if c + 1 < cols {
                relax(&mut d, i, i + 1);
            }
            if r + 1 < rows {
                relax(&mut d, i, i + cols);
                if c + 1 < cols {
                    relax(&mut d, i, i + cols + 1);
                }
                if c > 0 {
                    relax(&mut d, i, i + cols - 1);
                }
            }
        }
    }
    d
}

impl WallMap {
    /// Reads the scene's obstacle mask.
    pub fn from_scene(scene: &Scene) -> Self {
        let g = scene.grid;
        let (rows, cols) = (g.rows, g.cols);
        let mut blocked = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                blocked.push(scene.obstacle[(r, c)]);
            }
        }
        let mut boundary = vec![false; rows * cols];
        for r in 0..rows {
            for c in 0..cols {
                if !blocked[r * cols + c] {
                    continue;
                }
                let free = |rr: isize, cc: isize| {
                    rr >= 0
                        && cc >= 0
                        && (rr as usize) < rows
                        && (cc as usize) < cols
                        && !blocked[rr as usize * cols + cc as usize]
                };
                let (ri, ci) = (r as isize, c as isize);
                boundary[r * cols + c] =
                    free(ri + 1, ci) || free(ri - 1, ci) || free(ri, ci + 1) || free(ri, ci - 1);
            }
        }
        let clearance = chessboard_clearance(&blocked, rows, cols);
        let span = FreeRuns::new(scene.obstacle.view()).span().into_iter().collect();
        Self {
            cols,
            rows,
            cell: g.cell_size as f32,
            inv_cell: inv_cell(g.cell_size),
            width: g.width() as f32,
            height: g.height() as f32,
            blocked,
            boundary,
            clearance,
            span,
        }
    }

    /// How far (cells, chessboard) from the cell of `p` the nearest obstacle cell and the
    /// nearest cell past the domain border are; `None` when `p` is not in the domain.
    #[inline]
    pub(crate) fn clearances(&self, p: V2) -> Option<(u64, u64)> {
        if !(p.x >= 0.0 && p.y >= 0.0 && p.x < self.width && p.y < self.height) {
            return None;
        }
        let c = ((p.x * self.inv_cell) as usize).min(self.cols - 1);
        let r = ((p.y * self.inv_cell) as usize).min(self.rows - 1);
        let border = (c + 1).min(self.cols - c).min(r + 1).min(self.rows - r) as u64;
        Some((self.clearance[r * self.cols + c] as u64, border))
    }

    /// Cells (chessboard) a point within `dist` metres can be from the cell of the centre: at
    /// most `dist / cell + 1` on each axis, one more for rounding.
    #[inline]
    pub(crate) fn reach_cells(&self, dist: f32) -> u64 {
        (dist.max(0.0) * self.inv_cell) as u64 + 2
    }

    /// True when no obstacle cell and no point outside the domain lies within `dist` metres of
    /// `p`, judged conservatively from its cell's clearances: then no probe ray up to `dist`
    /// hits anything.
    #[inline]
    pub(crate) fn nothing_within(&self, p: V2, dist: f32) -> bool {
        self.clearances(p)
            .is_some_and(|(obstacle, border)| obstacle.min(border) > self.reach_cells(dist))
    }

    /// True when this map was built from a scene with the same grid and obstacles.
    pub fn matches(&self, scene: &Scene) -> bool {
        let g = scene.grid;
        g.rows == self.rows
            && g.cols == self.cols
            && g.cell_size as f32 == self.cell
            && scene.obstacle.iter().zip(&self.blocked).all(|(a, b)| a == b)
    }

    /// True when `(x, y)` lies in the domain and outside every obstacle cell.
    #[inline]
    pub fn is_free(&self, p: V2) -> bool {
        if !(p.x >= 0.0 && p.y >= 0.0 && p.x < self.width && p.y < self.height) {
            return false;
        }
        let c = ((p.x * self.inv_cell) as usize).min(self.cols - 1);
        let r = ((p.y * self.inv_cell) as usize).min(self.rows - 1);
        !self.blocked[r * self.cols + c]
    }

    /// How many cells a body `need` cells wide ([`body_cells`]) lacks at `p` ([`misfit`] of
    /// the span of its cell); all of them outside the domain.
    #[inline]
    pub fn lacks(&self, p: V2, need: u32) -> u32 {
        if !(p.x >= 0.0 && p.y >= 0.0 && p.x < self.width && p.y < self.height) {
            return need;
        }
        let c = ((p.x * self.inv_cell) as usize).min(self.cols - 1);
        let r = ((p.y * self.inv_cell) as usize).min(self.rows - 1);
        misfit(self.span[r * self.cols + c], need)
    }

    /// True when a straight move from free `a` to `b` (shorter than a cell) ends free and does
    /// not cut diagonally between two obstacle cells.
    pub fn step_ok(&self, a: V2, b: V2) -> bool {
        if !self.is_free(b) {
            return false;
        }
        // Both points lie in the domain (non-negative): truncation is their floor, without a
        // call to `floorf` on baseline x86-64 (no SSE4.1 rounding instruction).
        let same_col = (a.x * self.inv_cell) as u32 == (b.x * self.inv_cell) as u32;
        let same_row = (a.y * self.inv_cell) as u32 == (b.y * self.inv_cell) as u32;
        same_col || same_row || self.is_free(V2::new(b.x, a.y)) || self.is_free(V2::new(a.x, b.y))
    }

    /// Moves an agent of radius `radius` from `pos` at `vel` for `dt`, in sub-steps of at most
    /// half a cell, each a [`slide`] under [`Self::step_ok`] that also keeps the body out of
    /// openings narrower than itself: a sub-step may not end where the body lacks more cells
    /// than where it began ([`Self::lacks`] of its [`body_cells`]). A sub-step that a wall
    /// shortens keeps whichever axis still can move, and the blocked velocity component is
    /// reversed (`bounce`: a fish school) or zeroed (walkers sliding along a wall). An agent
    /// that starts outside free space moves freely (it can only get out). Returns the new
    /// position and velocity and whether a wall was hit.
    pub fn move_agent(&self, pos: V2, vel: V2, dt: f32, radius: f32, bounce: bool) -> (V2, V2, bool) {
        if !self.is_free(pos) {
            return (pos + vel * dt, vel, false);
        }
        let travel = vel.len() * dt;
        let max_sub = 0.5 * self.cell;
        let n = if travel.is_finite() {
            // `ceil` of a non-negative quotient without a call to `ceilf` (baseline x86-64 has
            // no rounding instruction): its truncation, plus one when that fell short.
            let q = travel / max_sub;
            let whole = q as usize;
            (whole + usize::from((whole as f32) < q)).clamp(1, 64)
        } else {
            1
        };
        let h = dt / n as f32;
        // One sub-step with no wall or border within its length and the body's width: it
        // cannot be blocked (the loop below would take it as it is).
        if n == 1 && self.nothing_within(pos, travel + 2.0 * radius) {
            return (pos + vel * h, vel, false);
        }
        let need = body_cells(radius, self.inv_cell);
        let (mut p, mut v, mut hit) = (pos, vel, false);
        let blocked_component = |c: f32| if bounce { -c } else { 0.0 };
        let allowed = |a: V2, b: V2| self.step_ok(a, b) && self.lacks(b, need) <= self.lacks(a, need);
        for _ in 0..n {
            let (to, taken) = slide(p, v, h, allowed);
            p = to;
            match taken {
                Slide::Whole => continue,
                Slide::AlongX => v.y = blocked_component(v.y),
                Slide::AlongY => v.x = blocked_component(v.x),
                Slide::Stopped => v = V2::new(blocked_component(v.x), blocked_component(v.y)),
            }
            hit = true;
        }
        (p, v, hit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    /// 10 x 10 cells of 1 m, a wall along column 5 except row 5 (a door).
    fn walled_scene() -> Scene {
        let mut s = Scene::empty("t", Grid::new(10, 10, 1.0));
        for r in 0..10 {
            if r != 5 {
                s.obstacle[(r, 5)] = true;
            }
        }
        s
    }

    #[test]
    fn a_move_with_nothing_within_its_length_is_never_blocked() {
        // `move_agent`'s shortcut: one sub-step with no wall or border within its length is
        // taken as it is; the sub-step check must agree, for every cell size and speed.
        let mut unit = crate::test_rng::unit(0x5DEE_CE66_D1CE_4E5B);
        let mut shortcuts = 0;
        for cell in [0.25f32, 1.0, 2.0] {
            let (cols, rows) = (24, 20);
            let mut s = Scene::empty("t", Grid::new(cols, rows, cell as f64));
            for _ in 0..30 {
                let (r, c) = ((unit() * rows as f32) as usize, (unit() * cols as f32) as usize);
                s.obstacle[(r.min(rows - 1), c.min(cols - 1))] = true;
            }
            let w = WallMap::from_scene(&s);
            for _ in 0..20_000 {
                let pos = V2::new(unit() * w.width, unit() * w.height);
                let vel = V2::new(unit() * 2.0 - 1.0, unit() * 2.0 - 1.0) * (2.0 * cell);
                let dt = 0.05 + 0.2 * unit();
                let radius = 0.3 * unit();
                let travel = vel.len() * dt;
                if !w.is_free(pos) || travel > 0.5 * w.cell || !w.nothing_within(pos, travel + 2.0 * radius) {
                    continue;
                }
                shortcuts += 1;
                let target = pos + vel * dt;
                let need = body_cells(radius, w.inv_cell);
                assert!(w.step_ok(pos, target), "{pos:?} + {vel:?} * {dt}");
                assert!(
                    w.lacks(target, need) <= w.lacks(pos, need),
                    "{pos:?} + {vel:?} * {dt}"
                );
                assert_eq!(w.move_agent(pos, vel, dt, radius, false), (target, vel, false));
            }
        }
        assert!(shortcuts > 5000, "{shortcuts} moves took the shortcut");
    }

    #[test]
    fn clearance_is_the_chessboard_distance_to_the_nearest_obstacle() {
        let (rows, cols) = (13, 17);
        let mut s = Scene::empty("t", Grid::new(cols, rows, 1.0));
        for (r, c) in [(2, 3), (9, 14), (12, 0), (6, 8)] {
            s.obstacle[(r, c)] = true;
        }
        let w = WallMap::from_scene(&s);
        for r in 0..rows {
            for c in 0..cols {
                let brute = (0..rows)
                    .flat_map(|rr| (0..cols).map(move |cc| (rr, cc)))
                    .filter(|&(rr, cc)| s.obstacle[(rr, cc)])
                    .map(|(rr, cc)| r.abs_diff(rr).max(c.abs_diff(cc)) as u32)
                    .min()
                    .unwrap();
                assert_eq!(w.clearance[r * cols + c], brute, "({r}, {c})");
            }
        }
        let open = WallMap::from_scene(&Scene::empty("open", Grid::new(4, 3, 1.0)));
        assert!(open.clearance.iter().all(|&d| d == u32::MAX));
    }

    #[test]
    fn moves_stop_at_walls_and_slide() {
        let w = WallMap::from_scene(&walled_scene());
        // Running into the wall at 45 degrees keeps the y motion, loses x.
        let (p, v, hit) = w.move_agent(V2::new(4.8, 2.5), V2::new(1.0, 1.0), 1.0, 0.0, false);
        assert!(hit);
        assert!(w.is_free(p));
        assert!(p.x < 5.0 && p.y > 2.5, "{p:?}");
        assert_eq!(v.x, 0.0);
        // Bouncing reverses the blocked component.
        let (_, v, _) = w.move_agent(V2::new(4.8, 2.5), V2::new(1.0, 0.0), 0.5, 0.0, true);
        assert!(v.x < 0.0);
        // Through the door is fine.
        let (p, _, hit) = w.move_agent(V2::new(4.5, 5.5), V2::new(1.0, 0.0), 1.0, 0.0, false);
        assert!(!hit && (p.x - 5.5).abs() < 1e-5);
        // Never out of the domain.
        let (p, _, _) = w.move_agent(V2::new(0.2, 0.2), V2::new(-3.0, -3.0), 1.0, 0.0, false);
        assert!(w.is_free(p));
    }

    #[test]
    fn a_body_keeps_its_radius_from_walls_and_a_point_steps_as_slide_steps() {
        let s = walled_scene();
        let spans = FreeRuns::new(s.obstacle.view()).span();
        let (body, point) = (Body::new(0.25, 1.0, true), Body::new(0.0, 1.0, true));
        let slide_body = |body, p, v, h| slide_body(&s, spans.view(), body, p, v, h);
        // Walking into the wall (its face at x = 5) at 45 degrees: the centre stops its radius
        // (and the clearance) short of the face and keeps the y motion.
        let q = slide_body(body, V2::new(4.5, 2.5), V2::new(1.0, 1.0), 0.4);
        assert!((q.x - (5.0 - 0.25 - 1e-4)).abs() < 1e-5 && q.y > 2.8, "{q:?}");
        // A point goes up to the face.
        let q = slide_body(point, V2::new(4.5, 2.5), V2::new(1.0, 1.0), 0.4);
        assert!((q - V2::new(4.9, 2.9)).len() < 1e-6, "{q:?}");
        // Radius 0 is the point rule of `slide`, for every step of at most a cell.
        let mut unit = crate::test_rng::unit(0x2545_F491_4F6C_DD1D);
        let (mut slid, mut blocked) = (0, 0);
        for _ in 0..20_000 {
            let p = V2::new(unit() * 10.0, unit() * 10.0);
            let v = V2::new(unit() * 4.0 - 2.0, unit() * 4.0 - 2.0);
            let (q, taken) = slide(p, v, 0.35, |_, b| passable(&s, b.x, b.y));
            assert_eq!(slide_body(point, p, v, 0.35), q, "{p:?} {v:?}");
            slid += usize::from(matches!(taken, Slide::AlongX | Slide::AlongY));
            blocked += usize::from(taken != Slide::Whole);
            assert!(taken == Slide::Stopped || passable(&s, q.x, q.y));
        }
        assert!(slid > 500 && blocked > 1000, "{slid} slid, {blocked} blocked");
    }

    #[test]
    fn free_runs_count_the_free_cells_of_a_column_and_a_row() {
        // 4 x 3 cells: an obstacle at (1, 1) and (0, 3).
        let mut s = Scene::empty("t", Grid::new(4, 3, 1.0));
        s.obstacle[(1, 1)] = true;
        s.obstacle[(0, 3)] = true;
        let runs = FreeRuns::new(s.obstacle.view());
        assert_eq!(
            runs.column,
            ndarray::array![[3, 1, 3, 0], [3, 0, 3, 2], [3, 1, 3, 2]]
        );
        assert_eq!(
            runs.row,
            ndarray::array![[3, 3, 3, 0], [1, 0, 2, 2], [4, 4, 4, 4]]
        );
        assert_eq!(
            runs.span(),
            ndarray::array![[3, 1, 3, 0], [1, 0, 2, 2], [3, 1, 3, 2]]
        );
        // A body needs its width in whole cells; it lacks what the span falls short of.
        assert_eq!(body_cells(0.25, inv_cell(0.25)), 2);
        assert_eq!(body_cells(0.2, inv_cell(0.25)), 2);
        assert_eq!(body_cells(0.1, inv_cell(0.25)), 1);
        assert_eq!(body_cells(0.0, inv_cell(0.25)), 0);
        assert_eq!(body_cells(2.0, inv_cell(0.25)), 16);
        assert_eq!((misfit(1, 2), misfit(3, 2), misfit(0, 0)), (1, 0, 0));
    }

    /// 16 m x 10 m in cells of 0.25 m: a wall across x from 8 m to `8 + thick` m with an
    /// opening of `cells` cells from y = 4.5 m up.
    fn opening(cells: usize, thick: usize) -> Scene {
        let mut s = Scene::empty("t", Grid::new(64, 40, 0.25));
        for r in 0..40 {
            for c in 32..32 + thick {
                s.obstacle[(r, c)] = !(18..18 + cells).contains(&r);
            }
        }
        s
    }

    /// Whether a body walking east at 1.3 m/s from x = 6 m on the middle line of the opening
    /// of `cells` cells gets past the wall of `scene` within 30 s, moved by `step` (from,
    /// velocity, seconds) -> to.
    fn gets_through(scene: &Scene, cells: usize, mut step: impl FnMut(V2, V2, f32) -> V2) -> bool {
        let wall_end = (0..scene.grid.cols)
            .rev()
            .find(|&c| scene.obstacle.column(c).iter().any(|&b| b))
            .unwrap();
        let past = (wall_end + 1) as f32 * scene.grid.cell_size as f32;
        let mut p = V2::new(6.0, 4.5 + 0.125 * cells as f32);
        for _ in 0..300 {
            p = step(p, V2::new(1.3, 0.0), 0.1);
            assert!(passable(scene, p.x, p.y), "{p:?}");
        }
        p.x > past
    }

    #[test]
    fn no_body_passes_an_opening_narrower_than_itself() {
        // (opening cells, wall thickness in cells, radius, passes): a door of 1 m and a
        // corridor of 0.25 m x 2 m.
        let cases = [
            (4, 2, 2.0, false),
            (4, 2, 0.51, false),
            (4, 2, 0.45, true),
            (4, 2, 0.25, true),
            (1, 8, 0.25, false),
            (1, 8, 0.12, true),
        ];
        for (cells, thick, radius, passes) in cases {
            let s = opening(cells, thick);
            let spans = FreeRuns::new(s.obstacle.view()).span();
            for rim in [true, false] {
                let body = Body::new(radius, s.grid.cell_size, rim);
                let through = gets_through(&s, cells, |p, v, h| slide_body(&s, spans.view(), body, p, v, h));
                assert_eq!(
                    through, passes,
                    "slide_body: {cells} cells, radius {radius} m, rim {rim}"
                );
            }
            let w = WallMap::from_scene(&s);
            let through = gets_through(&s, cells, |p, v, h| w.move_agent(p, v, h, radius, false).0);
            assert_eq!(through, passes, "move_agent: {cells} cells, radius {radius} m");
        }
    }

    #[test]
    fn a_body_spawned_in_a_narrow_place_may_walk_out_of_it() {
        // A body of 0.5 m spawned in the 0.25 m corridor lacks one cell there: it may walk
        // along the corridor (no narrower) and out of it.
        let s = opening(1, 8);
        let spans = FreeRuns::new(s.obstacle.view()).span();
        let body = Body::new(0.25, 0.25, false);
        let w = WallMap::from_scene(&s);
        let start = V2::new(8.5, 4.6);
        let mut p = start;
        let mut q = start;
        for _ in 0..40 {
            p = slide_body(&s, spans.view(), body, p, V2::new(1.3, 0.0), 0.1);
            q = w.move_agent(q, V2::new(1.3, 0.0), 0.1, 0.25, false).0;
        }
        assert!(p.x > 10.0 && q.x > 10.0, "{p:?} {q:?}");
    }

    #[test]
    fn a_long_push_does_not_jump_a_wall() {
        // A wall one cell (0.25 m) thick with no opening; a push of 0.6 m from 0.1 m before it
        // would end past it.
        let s = opening(0, 1);
        let spans = FreeRuns::new(s.obstacle.view()).span();
        for (radius, rim) in [(0.3, true), (0.3, false), (1.5, true)] {
            let body = Body::new(radius, s.grid.cell_size, rim);
            let q = slide_body(&s, spans.view(), body, V2::new(7.9, 5.0), V2::new(0.6, 0.1), 1.0);
            assert!(q.x < 8.0, "radius {radius} m, rim {rim}: {q:?}");
        }
    }
}
