//! Static obstacles for the local layer: the scene's obstacle mask and the domain border, as
//! (1) a free-space test used when moving agents (an agent's centre never leaves the domain
//! and never enters an obstacle cell), (2) ORCA's one-sided obstacle constraints and
//! (3) the boids' wall probes.
//!
//! **Choice of obstacle model for ORCA.** Obstacle cells are not turned into polygons. Each
//! obstacle cell that borders free space and lies within RVO2's obstacle range
//! (`obstacle_time_horizon * max_speed + radius`) contributes its **nearest point** as a static
//! point obstacle (a disc of radius 0), nearest cells first, skipping any whose velocity
//! obstacle is already excluded by the constraints taken so far (RVO2's "already covered"
//! test). The domain border contributes exact half-planes (a straight wall's velocity
//! obstacle). This is exact for the border and an approximation along walls (a wall's velocity
//! obstacle is the union over all its points; the cells' nearest points sample it once per
//! cell, always including the wall's nearest point); it needs no polygon extraction when a map
//! is edited and reads the mask directly, as a GPU shader would. The hard guarantee is the
//! move step's free-space test, not ORCA. Obstacle lines are all satisfied by velocity 0, which the LP fallback
//! requires.

use super::orca::{Line, V2, static_point_line};
use crate::scene::Scene;

/// At most this many obstacle-cell points constrain one agent: with the coverage test a
/// straight wall needs one or two and a corner three or four; the cap bounds the work in
/// cluttered maps.
pub const MAX_OBSTACLE_POINTS: usize = 8;

/// Probe rays of the boids' wall avoidance sample the mask every this fraction of a cell, so
/// no obstacle cell can be stepped over.
const PROBE_STEP_CELLS: f32 = 0.5;

/// Number of "around" probe rays (a ring of rays; 8 gives a ray every 45°).
const AROUND_PROBES: usize = 8;

/// The obstacle mask and domain of a scene in the form the local layer reads.
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
    fn clearances(&self, p: V2) -> Option<(u64, u64)> {
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
    fn reach_cells(&self, dist: f32) -> u64 {
        (dist.max(0.0) * self.inv_cell) as u64 + 2
    }

    /// True when no obstacle cell and no point outside the domain lies within `dist` metres of
    /// `p`, judged conservatively from its cell's clearances: then no probe ray up to `dist`
    /// hits anything.
    #[inline]
    fn nothing_within(&self, p: V2, dist: f32) -> bool {
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
    fn step_ok(&self, a: V2, b: V2) -> bool {
        if !self.is_free(b) {
            return false;
        }
        // Both points lie in the domain (non-negative): truncation is their floor, without a
        // call to `floorf` on baseline x86-64 (no SSE4.1 rounding instruction).
        let same_col = (a.x * self.inv_cell) as u32 == (b.x * self.inv_cell) as u32;
        let same_row = (a.y * self.inv_cell) as u32 == (b.y * self.inv_cell) as u32;
        same_col || same_row || self.is_free(V2::new(b.x, a.y)) || self.is_free(V2::new(a.x, b.y))
    }

    /// Moves an agent from `pos` at `vel` for `dt`, in sub-steps of at most half a cell. A
    /// sub-step that would end outside free space keeps whichever axis still can move, and the
    /// blocked velocity component is reversed (`bounce`, the seeds' fish) or zeroed (walkers
    /// sliding along a wall). An agent that starts outside free space moves freely (it can
    /// only get out). Returns the new position and velocity and whether a wall was hit.
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
            let t = p + v * h;
            if self.step_ok(p, t) {
                p = t;
                continue;
            }
            hit = true;
            let tx = V2::new(t.x, p.y);
            let ty = V2::new(p.x, t.y);
            if v.x != 0.0 && self.step_ok(p, tx) {
                p = tx;
                v.y = blocked_component(v.y);
            } else if v.y != 0.0 && self.step_ok(p, ty) {
                p = ty;
                v.x = blocked_component(v.x);
            } else {
                v = V2::new(blocked_component(v.x), blocked_component(v.y));
            }
        }
        (p, v, hit)
    }

    /// Appends ORCA's one-sided obstacle lines for an agent (see the module comment): the
    /// domain border's half-planes, then the nearest points of nearby obstacle cells not
    /// already covered. Returns how many lines were added.
    #[allow(clippy::too_many_arguments)]
    pub fn push_lines(
        &self,
        pos: V2,
        vel: V2,
        radius: f32,
        max_speed: f32,
        time_horizon: f32,
        dt: f32,
        lines: &mut Vec<Line>,
    ) -> usize {
        let start = lines.len();
        let range = time_horizon * max_speed + radius;
        let inv_tau = 1.0 / time_horizon;
        // Domain border: a straight wall at clearance s allows approaching at (s - r) / tau.
        let walls = [
            (pos.x, V2::new(1.0, 0.0)),
            (self.width - pos.x, V2::new(-1.0, 0.0)),
            (pos.y, V2::new(0.0, 1.0)),
            (self.height - pos.y, V2::new(0.0, -1.0)),
        ];
        for (clearance, inward) in walls {
            if clearance < range {
                let slack = (clearance - radius).max(0.0) * inv_tau;
                lines.push(Line::at_least(inward, -slack));
            }
        }
        // Obstacle cells: nearest points, nearest first (none when the clearance says that no
        // obstacle cell lies in the scanned window).
        if self
            .clearances(pos)
            .is_some_and(|(obstacle, _)| obstacle > self.reach_cells(range))
        {
            return lines.len() - start;
        }
        let mut nearest: [(f32, V2); MAX_OBSTACLE_POINTS] = [(f32::INFINITY, V2::ZERO); MAX_OBSTACLE_POINTS];
        let mut count = 0usize;
        // `as usize` truncates and saturates (negative and NaN to 0): `floor(v).max(0)`.
        let c0 = ((pos.x - range) * self.inv_cell) as usize;
        let r0 = ((pos.y - range) * self.inv_cell) as usize;
        let c1 = (((pos.x + range) * self.inv_cell) as usize).min(self.cols.saturating_sub(1));
        let r1 = (((pos.y + range) * self.inv_cell) as usize).min(self.rows.saturating_sub(1));
        let range_sq = range * range;
        for r in r0..=r1 {
            for c in c0..=c1 {
                let idx = r * self.cols + c;
                if idx >= self.boundary.len() || !self.boundary[idx] {
                    continue;
                }
                let lo = V2::new(c as f32 * self.cell, r as f32 * self.cell);
                let q = V2::new(
                    pos.x.clamp(lo.x, lo.x + self.cell),
                    pos.y.clamp(lo.y, lo.y + self.cell),
                );
                let d2 = (q - pos).len_sq();
                if d2 >= range_sq {
                    continue;
                }
                // Insertion into the sorted short list (ties keep scan order: deterministic).
                if count < MAX_OBSTACLE_POINTS || d2 < nearest[count - 1].0 {
                    let mut i = count.min(MAX_OBSTACLE_POINTS - 1);
                    while i > 0 && nearest[i - 1].0 > d2 {
                        nearest[i] = nearest[i - 1];
                        i -= 1;
                    }
                    nearest[i] = (d2, q);
                    count = (count + 1).min(MAX_OBSTACLE_POINTS);
                }
            }
        }
        for &(_, q) in &nearest[..count] {
            // Already covered: the point's cut-off disc lies wholly on the forbidden side of an
            // obstacle line taken so far (then so does its whole cone, as 0 is allowed).
            let centre = (q - pos) * inv_tau;
            let disc_radius = radius * inv_tau;
            let covered = lines[start..].iter().any(|l| l.violation(centre) >= disc_radius);
            if !covered {
                lines.push(static_point_line(pos, vel, radius, q, time_horizon, dt));
            }
        }
        lines.len() - start
    }

    /// Distance along the ray from `pos` in unit direction `dir` to the first non-free sample,
    /// if one lies within `max_dist`.
    fn ray_hit(&self, pos: V2, dir: V2, max_dist: f32) -> Option<f32> {
        let step = PROBE_STEP_CELLS * self.cell;
        let mut d = step;
        while d <= max_dist {
            if !self.is_free(pos + dir * d) {
                return Some(d);
            }
            d += step;
        }
        None
    }

    /// The boids' wall steering, a unit vector or zero: the "around" rays (a ring
    /// of probes, each hit within `keep_dist` pushing away by the inverse of its distance),
    /// plus, when the ray along the heading is blocked within `keep_dist`, the first free
    /// direction found by turning left and right in 30° steps.
    pub fn probe_steer(&self, pos: V2, vel: V2, keep_dist: f32) -> V2 {
        // No probe can hit: the sums below would be zero (the same result, skipped).
        if self.nothing_within(pos, keep_dist) {
            return V2::ZERO;
        }
        let heading = vel.normalize_or_zero();
        let heading = if heading == V2::ZERO {
            V2::new(1.0, 0.0)
        } else {
            heading
        };
        let mut push = V2::ZERO;
        for k in 0..AROUND_PROBES {
            let a = k as f32 * std::f32::consts::TAU / AROUND_PROBES as f32;
            let dir = rotate(heading, a);
            if let Some(d) = self.ray_hit(pos, dir, keep_dist) {
                push = push - dir * (1.0 / d);
            }
        }
        let mut steer = push.normalize_or_zero();
        if self.ray_hit(pos, heading, keep_dist).is_some() {
            for step in 1..=6 {
                let a = step as f32 * std::f32::consts::FRAC_PI_6;
                let found = [a, -a]
                    .into_iter()
                    .map(|t| rotate(heading, t))
                    .find(|&d| self.ray_hit(pos, d, keep_dist).is_none());
                if let Some(d) = found {
                    steer = steer + d;
                    break;
                }
            }
        }
        steer.normalize_or_zero()
    }
}

/// `v` turned by `angle` radians counter-clockwise.
#[inline]
fn rotate(v: V2, angle: f32) -> V2 {
    let (s, c) = angle.sin_cos();
    V2::new(c * v.x - s * v.y, s * v.x + c * v.y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    fn walled() -> WallMap {
        // 10 x 10 cells of 1 m, a wall along column 5 except row 5 (a door).
        let mut s = Scene::empty("t", Grid::new(10, 10, 1.0));
        for r in 0..10 {
            if r != 5 {
                s.obstacle[(r, 5)] = true;
            }
        }
        WallMap::from_scene(&s)
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

    /// Probes and ORCA's obstacle lines skip agents with nothing in reach: the results are
    /// those of the full scan (a map with its clearance zeroed never skips), bit for bit.
    #[test]
    fn skipping_clear_agents_changes_nothing() {
        let (rows, cols, cell) = (30, 40, 0.5);
        let mut s = Scene::empty("t", Grid::new(cols, rows, cell));
        for r in 0..rows {
            for c in 0..cols {
                s.obstacle[(r, c)] = (r * 7 + c * 13) % 97 == 0 || (c == 20 && r > 5);
            }
        }
        let fast = WallMap::from_scene(&s);
        let full = WallMap {
            clearance: vec![0; rows * cols],
            ..fast.clone()
        };
        let mut rnd = crate::test_rng::unit(0x9E37_79B9_7F4A_7C15);
        let (mut skipped, mut hits) = (0, 0);
        for _ in 0..3000 {
            let p = V2::new(rnd() * fast.width, rnd() * fast.height);
            let v = V2::new(rnd() * 3.0 - 1.5, rnd() * 3.0 - 1.5);
            let keep = rnd() * 2.0;
            let a = fast.probe_steer(p, v, keep);
            assert_eq!(a, full.probe_steer(p, v, keep), "{p:?} {v:?} {keep}");
            skipped += fast.nothing_within(p, keep) as usize;
            hits += (a != V2::ZERO) as usize;
            let (mut la, mut lb) = (Vec::new(), Vec::new());
            let na = fast.push_lines(p, v, 0.25, 1.5, 1.0, 0.1, &mut la);
            let nb = full.push_lines(p, v, 0.25, 1.5, 1.0, 0.1, &mut lb);
            assert_eq!((na, &la), (nb, &lb), "{p:?}");
        }
        assert!(
            skipped > 300 && hits > 300,
            "both paths exercised: {skipped} skipped, {hits} steered"
        );
    }

    #[test]
    fn moves_stop_at_walls_and_slide() {
        let w = walled();
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
    fn obstacle_lines_forbid_walking_into_the_wall_but_not_along_it() {
        let w = walled();
        let pos = V2::new(4.4, 2.5);
        let mut lines = Vec::new();
        // Walking along the wall (current velocity +y) at 0.6 m from its face.
        let n = w.push_lines(pos, V2::new(0.0, 1.0), 0.25, 1.5, 1.0, 0.1, &mut lines);
        assert!((1..=MAX_OBSTACLE_POINTS).contains(&n));
        let ok = |v: V2| lines.iter().all(|l| l.violation(v) <= 1e-6);
        assert!(
            !ok(V2::new(1.0, 0.0)),
            "turning straight into the wall: contact in 0.35 s < 1 s"
        );
        assert!(ok(V2::new(0.0, 1.0)), "along the wall");
        assert!(ok(V2::ZERO));
        assert!(ok(V2::new(-1.0, 0.0)));
    }

    #[test]
    fn probes_turn_away_from_a_wall_ahead() {
        let w = walled();
        let s = w.probe_steer(V2::new(4.5, 2.5), V2::new(1.0, 0.0), 1.5);
        assert!(s.x < 0.0 || s.y.abs() > 0.5, "{s:?}");
        let free = w.probe_steer(V2::new(2.0, 2.5), V2::new(0.0, 1.0), 0.5);
        assert_eq!(free, V2::ZERO);
    }
}
