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
//! On [`slide`] stand the two moves:
//! - [`slide_body`] (the simulation): one step of a body of radius `r`, its rim kept out of the
//!   obstacle cells it was not in; radius 0 moves the point, as the published model does;
//! - [`WallMap::move_agent`] (the local layer, and `move_agent` in `shaders/local_common.wgsl`):
//!   the move in sub-steps of at most half a cell, the velocity's blocked component zeroed
//!   (walkers) or reversed (a fish school bouncing).

use crate::scene::Scene;
use crate::vec2::V2;

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

/// A step of a body of radius `r` from `p` by `v * h`, the simulation's move: the centre moves
/// as [`slide`] moves it under the scene's rule ([`passable`]), then each of the body's four
/// points `r` from its centre along the axes that has entered an obstacle cell it was not in
/// before the step pushes the centre back along its axis until the point is on the cell's edge
/// (when the centre stays passable); the grid's edge stops a rim too, except beside a goal
/// cell (`rim_free`). A body so keeps its radius from walls and slides along them and into a
/// door's opening (a 0.75 m door lets centres through a 0.25 m band for bodies of 0.5 m), while
/// a body already nearer a wall than `r` (spawned there) may still move along it or away from
/// it. With `r` 0 the rim is the centre, which [`slide`] already keeps passable: the step of a
/// point.
pub fn slide_body(scene: &Scene, r: f32, p: V2, v: V2, h: f32) -> V2 {
    let (q, _) = slide(p, v, h, |_, to| passable(scene, to.x, to.y));
    let (x0, y0) = (p.x, p.y);
    let (mut x, mut y) = (q.x, q.y);
    if (x, y) == (x0, y0) {
        return q;
    }
    let h = scene.grid.cell_size as f32;
    // Leaves a rim point this far (m) outside the obstacle cell it is pushed out of.
    const CLEAR: f32 = 1e-4;
    for sign in [1.0f32, -1.0] {
        if !rim_free(scene, x + sign * r, y) && rim_free(scene, x0 + sign * r, y0) {
            let edge = if sign > 0.0 {
                ((x + r) / h).floor() * h
            } else {
                ((x - r) / h).ceil() * h
            };
            let nx = edge - sign * (r + CLEAR);
            if passable(scene, nx, y) {
                x = nx;
            }
        }
    }
    for sign in [1.0f32, -1.0] {
        if !rim_free(scene, x, y + sign * r) && rim_free(scene, x0, y0 + sign * r) {
            let edge = if sign > 0.0 {
                ((y + r) / h).floor() * h
            } else {
                ((y - r) / h).ceil() * h
            };
            let ny = edge - sign * (r + CLEAR);
            if passable(scene, x, ny) {
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

/// The obstacle mask and domain of a scene in the form the local layer reads: its free-space
/// test, the cells that border free space (ORCA's obstacle points, `local::obstacles`) and each
/// cell's distance to the nearest obstacle.
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
        Self {
            cols,
            rows,
            cell: g.cell_size as f32,
            inv_cell: 1.0 / g.cell_size as f32,
            width: g.width() as f32,
            height: g.height() as f32,
            blocked,
            boundary,
            clearance,
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

    /// Moves an agent from `pos` at `vel` for `dt`, in sub-steps of at most half a cell, each a
    /// [`slide`] under [`Self::step_ok`]. A sub-step that a wall shortens keeps whichever axis
    /// still can move, and the blocked velocity component is reversed (`bounce`: a fish school)
    /// or zeroed (walkers sliding along a wall). An agent that starts outside free space moves
    /// freely (it can only get out). Returns the new position and velocity and whether a wall
    /// was hit.
    pub fn move_agent(&self, pos: V2, vel: V2, dt: f32, bounce: bool) -> (V2, V2, bool) {
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
        // One sub-step with no wall or border within its length: it cannot be blocked (the
        // loop below would take it as it is).
        if n == 1 && self.nothing_within(pos, travel) {
            return (pos + vel * h, vel, false);
        }
        let (mut p, mut v, mut hit) = (pos, vel, false);
        let blocked_component = |c: f32| if bounce { -c } else { 0.0 };
        for _ in 0..n {
            let (to, taken) = slide(p, v, h, |a, b| self.step_ok(a, b));
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
                let travel = vel.len() * dt;
                if !w.is_free(pos) || travel > 0.5 * w.cell || !w.nothing_within(pos, travel) {
                    continue;
                }
                shortcuts += 1;
                let target = pos + vel * dt;
                assert!(w.step_ok(pos, target), "{pos:?} + {vel:?} * {dt}");
                assert_eq!(w.move_agent(pos, vel, dt, false), (target, vel, false));
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
        let (p, v, hit) = w.move_agent(V2::new(4.8, 2.5), V2::new(1.0, 1.0), 1.0, false);
        assert!(hit);
        assert!(w.is_free(p));
        assert!(p.x < 5.0 && p.y > 2.5, "{p:?}");
        assert_eq!(v.x, 0.0);
        // Bouncing reverses the blocked component.
        let (_, v, _) = w.move_agent(V2::new(4.8, 2.5), V2::new(1.0, 0.0), 0.5, true);
        assert!(v.x < 0.0);
        // Through the door is fine.
        let (p, _, hit) = w.move_agent(V2::new(4.5, 5.5), V2::new(1.0, 0.0), 1.0, false);
        assert!(!hit && (p.x - 5.5).abs() < 1e-5);
        // Never out of the domain.
        let (p, _, _) = w.move_agent(V2::new(0.2, 0.2), V2::new(-3.0, -3.0), 1.0, false);
        assert!(w.is_free(p));
    }

    #[test]
    fn a_body_keeps_its_radius_from_walls_and_a_point_steps_as_slide_steps() {
        let s = walled_scene();
        // Walking into the wall (its face at x = 5) at 45 degrees: the centre stops its radius
        // (and the clearance) short of the face and keeps the y motion.
        let q = slide_body(&s, 0.25, V2::new(4.5, 2.5), V2::new(1.0, 1.0), 0.4);
        assert!((q.x - (5.0 - 0.25 - 1e-4)).abs() < 1e-5 && q.y > 2.8, "{q:?}");
        // A point goes up to the face.
        let q = slide_body(&s, 0.0, V2::new(4.5, 2.5), V2::new(1.0, 1.0), 0.4);
        assert!((q - V2::new(4.9, 2.9)).len() < 1e-6, "{q:?}");
        // Radius 0 is the point rule of `slide`, for every step.
        let mut unit = crate::test_rng::unit(0x2545_F491_4F6C_DD1D);
        let (mut slid, mut blocked) = (0, 0);
        for _ in 0..20_000 {
            let p = V2::new(unit() * 10.0, unit() * 10.0);
            let v = V2::new(unit() * 4.0 - 2.0, unit() * 4.0 - 2.0);
            let (q, taken) = slide(p, v, 0.5, |_, b| passable(&s, b.x, b.y));
            assert_eq!(slide_body(&s, 0.0, p, v, 0.5), q, "{p:?} {v:?}");
            slid += usize::from(matches!(taken, Slide::AlongX | Slide::AlongY));
            blocked += usize::from(taken != Slide::Whole);
            assert!(taken == Slide::Stopped || passable(&s, q.x, q.y));
        }
        assert!(slid > 500 && blocked > 1000, "{slid} slid, {blocked} blocked");
    }
}
