//! Static obstacles as the local layer steers around them: ORCA's one-sided obstacle
//! constraints ([`WallMap::push_lines`]) and the boids' wall probes ([`WallMap::probe_steer`]),
//! read from the scene's [`WallMap`] ([`crate::collision`], which also moves agents against
//! the walls: an agent's centre never leaves the domain and never enters an obstacle cell).
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
//! move step's free-space test ([`WallMap::move_agent`]), not ORCA. Obstacle lines are all
//! satisfied by velocity 0, which the LP fallback requires.

use super::orca::{Line, static_point_line};
use crate::collision::WallMap;
use crate::vec2::V2;

/// At most this many obstacle-cell points constrain one agent: with the coverage test a
/// straight wall needs one or two and a corner three or four; the cap bounds the work in
/// cluttered maps.
pub const MAX_OBSTACLE_POINTS: usize = 8;

/// Probe rays of the boids' wall avoidance sample the mask every this fraction of a cell, so
/// no obstacle cell can be stepped over.
const PROBE_STEP_CELLS: f32 = 0.5;

/// Number of "around" probe rays (a ring of rays; 8 gives a ray every 45°).
const AROUND_PROBES: usize = 8;

impl WallMap {
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
    use crate::scene::Scene;

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
