//! ORCA (optimal reciprocal collision avoidance, van den Berg et al. 2011): the half-plane
//! constraints ("lines") an agent gets from its neighbours and obstacles, and the 2-D linear
//! program that picks the velocity nearest the preferred one inside all of them, with the
//! fallback for infeasible (dense) cases. The algorithms follow RVO2's `Agent.cc`
//! (`linearProgram1/2/3`); this is an independent implementation in `f32`.
//!
//! A [`Line`] is the boundary of a half-plane of allowed velocities: the allowed side is the
//! **left** of `direction` (counter-clockwise), as in RVO2 and `dodgy_2d`.

use crate::vec2::V2;

/// Lines whose directions have a cross product below this are treated as parallel (RVO2's
/// `RVO_EPSILON`; small enough not to change well-conditioned cases, large enough to avoid
/// dividing by round-off).
pub const PARALLEL_EPSILON: f32 = 1e-5;

/// A half-plane of allowed velocities: those on the left of `direction` through `point`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Line {
    /// A point on the boundary.
    pub point: V2,
    /// Unit direction of the boundary; allowed velocities lie to its left.
    pub direction: V2,
}

impl Line {
    /// The half-plane `{v : v · normal >= offset}` (`normal` a unit vector).
    pub fn at_least(normal: V2, offset: f32) -> Line {
        Line {
            point: normal * offset,
            direction: V2::new(normal.y, -normal.x),
        }
    }

    /// How far `v` lies on the forbidden side (positive: violated).
    #[inline]
    pub fn violation(&self, v: V2) -> f32 {
        self.direction.det(self.point - v)
    }
}

/// Share of the avoidance an agent takes for one constraint: inside the velocity obstacle
/// (already on a collision course) and outside it. RVO2's reciprocal ORCA uses one half in both
/// cases ([`Share::RECIPROCAL`]); a one-sided constraint (static or non-reciprocating obstacle)
/// takes all of it ([`Share::ONE_SIDED`]). `dodgy_2d` takes `inside` by its responsibility ratio
/// and 1 outside, which [`Share`] can express for comparisons.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    /// Fraction of `u` taken when the relative velocity is inside the velocity obstacle.
    pub inside: f32,
    /// Fraction of `u` taken when it is outside.
    pub outside: f32,
}

impl Share {
    /// ORCA between two agents that both avoid: each takes half (RVO2).
    pub const RECIPROCAL: Share = Share {
        inside: 0.5,
        outside: 0.5,
    };
    /// Avoiding something that does not avoid back: take it all.
    pub const ONE_SIDED: Share = Share {
        inside: 1.0,
        outside: 1.0,
    };
}

/// The ORCA half-plane for an agent at `pos` moving at `vel` with radius `radius` against a
/// disc at `other_pos` moving at `other_vel` with radius `other_radius`, within `time_horizon`;
/// when the two already overlap, the constraint resolves the overlap within `dt` (RVO2's
/// `computeNewVelocity`, agent part).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn agent_line(
    pos: V2,
    vel: V2,
    radius: f32,
    other_pos: V2,
    other_vel: V2,
    other_radius: f32,
    time_horizon: f32,
    dt: f32,
    share: Share,
) -> Line {
    let rel_pos = other_pos - pos;
    let rel_vel = vel - other_vel;
    let dist_sq = rel_pos.len_sq();
    let r = radius + other_radius;
    let r_sq = r * r;
    let direction;
    let u;
    let inside;
    if dist_sq > r_sq {
        let inv_tau = 1.0 / time_horizon;
        // w: from the centre of the cut-off circle to the relative velocity.
        let w = rel_vel - rel_pos * inv_tau;
        let w_len_sq = w.len_sq();
        let dot1 = w.dot(rel_pos);
        if dot1 < 0.0 && dot1 * dot1 > r_sq * w_len_sq {
            // Project on the cut-off circle.
            let w_len = w_len_sq.sqrt();
            let unit_w = w * (1.0 / w_len);
            direction = V2::new(unit_w.y, -unit_w.x);
            u = unit_w * (r * inv_tau - w_len);
            inside = w_len < r * inv_tau;
        } else {
            // Project on a leg of the cone.
            let leg = (dist_sq - r_sq).sqrt();
            if rel_pos.det(w) > 0.0 {
                direction = V2::new(rel_pos.x * leg - rel_pos.y * r, rel_pos.x * r + rel_pos.y * leg)
                    * (1.0 / dist_sq);
            } else {
                direction = -V2::new(rel_pos.x * leg + rel_pos.y * r, -rel_pos.x * r + rel_pos.y * leg)
                    * (1.0 / dist_sq);
            }
            let dot2 = rel_vel.dot(direction);
            u = direction * dot2 - rel_vel;
            inside = rel_vel.det(direction) >= 0.0;
        }
    } else {
        // Already overlapping: leave the overlap within one step.
        let inv_dt = 1.0 / dt;
        let w = rel_vel - rel_pos * inv_dt;
        let w_len = w.len();
        let unit_w = w.normalize_or_zero();
        direction = V2::new(unit_w.y, -unit_w.x);
        u = unit_w * (r * inv_dt - w_len);
        inside = true;
    }
    let f = if inside { share.inside } else { share.outside };
    Line {
        point: vel + u * f,
        direction,
    }
}

/// Neighbours handled at once by [`agent_lines`]: one AVX2 vector of f32.
pub const LINE_LANES: usize = 8;

/// Up to [`LINE_LANES`] other agents, one per lane: positions, velocities, radii.
#[derive(Clone, Copy, Debug, Default)]
pub struct Others {
    /// Positions x, m.
    pub x: [f32; LINE_LANES],
    /// Positions y, m.
    pub y: [f32; LINE_LANES],
    /// Velocities x, m/s.
    pub vx: [f32; LINE_LANES],
    /// Velocities y, m/s.
    pub vy: [f32; LINE_LANES],
    /// Radii, m.
    pub radius: [f32; LINE_LANES],
}

/// [`agent_line`] for the first `count` agents of `others` at once, appended to `out` in lane
/// order: the same operations lane by lane (no fused multiply-add, IEEE division and square
/// root), so the same lines bit for bit, but every branch computed and the right one selected,
/// so that the lanes stay in vector registers and no branch is mispredicted (the scalar
/// function's two data-dependent branches cost more than its arithmetic). Lanes past `count`
/// are computed and dropped.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn agent_lines(
    pos: V2,
    vel: V2,
    radius: f32,
    others: &Others,
    count: usize,
    time_horizon: f32,
    dt: f32,
    share: Share,
    out: &mut Vec<Line>,
) {
    const L: usize = LINE_LANES;
    let inv_tau = 1.0 / time_horizon;
    let inv_dt = 1.0 / dt;
    let (mut px, mut py, mut dx, mut dy) = ([0.0f32; L], [0.0f32; L], [0.0f32; L], [0.0f32; L]);
    for l in 0..L {
        let (rpx, rpy) = (others.x[l] - pos.x, others.y[l] - pos.y);
        let (rvx, rvy) = (vel.x - others.vx[l], vel.y - others.vy[l]);
        let dist_sq = rpx * rpx + rpy * rpy;
        let r = radius + others.radius[l];
        let r_sq = r * r;
        // Apart, on the cut-off circle.
        let (wx, wy) = (rvx - rpx * inv_tau, rvy - rpy * inv_tau);
        let w_len_sq = wx * wx + wy * wy;
        let dot1 = wx * rpx + wy * rpy;
        let on_circle = (dot1 < 0.0) & (dot1 * dot1 > r_sq * w_len_sq);
        let w_len = w_len_sq.sqrt();
        let inv_w = 1.0 / w_len;
        let (cwx, cwy) = (wx * inv_w, wy * inv_w);
        let c_scale = r * inv_tau - w_len;
        let (c_ux, c_uy) = (cwx * c_scale, cwy * c_scale);
        let c_inside = w_len < r * inv_tau;
        // Apart, on a leg of the cone.
        let leg = (dist_sq - r_sq).sqrt();
        let inv_d = 1.0 / dist_sq;
        let left = rpx * wy - rpy * wx > 0.0;
        let l_dx = if left {
            (rpx * leg - rpy * r) * inv_d
        } else {
            -(rpx * leg + rpy * r) * inv_d
        };
        let l_dy = if left {
            (rpx * r + rpy * leg) * inv_d
        } else {
            -(-rpx * r + rpy * leg) * inv_d
        };
        let dot2 = rvx * l_dx + rvy * l_dy;
        let (l_ux, l_uy) = (l_dx * dot2 - rvx, l_dy * dot2 - rvy);
        let l_inside = rvx * l_dy - rvy * l_dx >= 0.0;
        // Overlapping: leave the overlap within one step.
        let (ox, oy) = (rvx - rpx * inv_dt, rvy - rpy * inv_dt);
        let o_len = (ox * ox + oy * oy).sqrt();
        let o_unit = (o_len > 0.0) & o_len.is_finite();
        let inv_o = 1.0 / o_len;
        let (owx, owy) = if o_unit {
            (ox * inv_o, oy * inv_o)
        } else {
            (0.0, 0.0)
        };
        let o_scale = r * inv_dt - o_len;
        let (o_ux, o_uy) = (owx * o_scale, owy * o_scale);
        // The branch the scalar function takes.
        let apart = dist_sq > r_sq;
        let (dir_x, dir_y, ux, uy, inside) = if !apart {
            (owy, -owx, o_ux, o_uy, true)
        } else if on_circle {
            (cwy, -cwx, c_ux, c_uy, c_inside)
        } else {
            (l_dx, l_dy, l_ux, l_uy, l_inside)
        };
        let f = if inside { share.inside } else { share.outside };
        (px[l], py[l], dx[l], dy[l]) = (vel.x + ux * f, vel.y + uy * f, dir_x, dir_y);
    }
    out.extend((0..count.min(L)).map(|l| Line {
        point: V2::new(px[l], py[l]),
        direction: V2::new(dx[l], dy[l]),
    }));
}

/// One-sided constraint against a static point (the nearest point of an obstacle cell) at
/// `point`, for an agent of `radius` at `pos` moving at `vel`, within `time_horizon`. While the
/// agent overlaps the point, the constraint only forbids approaching it (it is satisfied by
/// velocity 0, which [`solve`]'s fallback requires of obstacle lines).
pub fn static_point_line(pos: V2, vel: V2, radius: f32, point: V2, time_horizon: f32, dt: f32) -> Line {
    let rel = point - pos;
    if rel.len_sq() <= radius * radius {
        let away = (-rel).normalize_or_zero();
        return Line::at_least(away, 0.0);
    }
    agent_line(
        pos,
        vel,
        radius,
        point,
        V2::ZERO,
        0.0,
        time_horizon,
        dt,
        Share::ONE_SIDED,
    )
}

/// RVO2's `linearProgram1`: the best point on line `lines[k]` inside the disc of `radius` and
/// the half-planes `lines[..k]`; `None` when there is none.
#[inline(always)]
fn program_on_line(lines: &[Line], k: usize, radius: f32, opt: V2, opt_is_direction: bool) -> Option<V2> {
    let line = lines[k];
    let dot = line.point.dot(line.direction);
    let disc = dot * dot + radius * radius - line.point.len_sq();
    if disc < 0.0 {
        return None;
    }
    let s = disc.sqrt();
    let mut t_left = -dot - s;
    let mut t_right = -dot + s;
    for other in &lines[..k] {
        let denom = line.direction.det(other.direction);
        let numer = other.direction.det(line.point - other.point);
        if denom.abs() <= PARALLEL_EPSILON {
            if numer < 0.0 {
                return None;
            }
            continue;
        }
        let t = numer / denom;
        if denom >= 0.0 {
            t_right = t_right.min(t);
        } else {
            t_left = t_left.max(t);
        }
        if t_left > t_right {
            return None;
        }
    }
    let t = if opt_is_direction {
        if opt.dot(line.direction) > 0.0 {
            t_right
        } else {
            t_left
        }
    } else {
        line.direction.dot(opt - line.point).clamp(t_left, t_right)
    };
    Some(line.point + line.direction * t)
}

/// RVO2's `linearProgram2`: the velocity in the disc of `radius` nearest `opt` (or farthest
/// along the unit direction `opt`) satisfying every line. Returns the index of the first line
/// that made the program infeasible (`lines.len()` on success) and the result so far.
#[inline(always)]
fn program_2d(lines: &[Line], radius: f32, opt: V2, opt_is_direction: bool, result: &mut V2) -> usize {
    *result = if opt_is_direction {
        opt * radius
    } else {
        opt.clamp_len(radius)
    };
    for k in 0..lines.len() {
        if lines[k].violation(*result) > 0.0 {
            match program_on_line(lines, k, radius, opt, opt_is_direction) {
                Some(v) => *result = v,
                None => return k,
            }
        }
    }
    lines.len()
}

/// RVO2's `linearProgram3`: when the constraints from `begin` on cannot all be met, the
/// velocity that violates the soft lines (`lines[obstacle_lines..]`) the least, keeping the
/// hard obstacle lines `lines[..obstacle_lines]`. `scratch` is reused working memory.
pub(crate) fn program_fallback(
    lines: &[Line],
    obstacle_lines: usize,
    begin: usize,
    radius: f32,
    result: &mut V2,
    scratch: &mut Vec<Line>,
) {
    let mut distance = 0.0f32;
    for i in begin..lines.len() {
        if lines[i].violation(*result) > distance {
            scratch.clear();
            scratch.extend_from_slice(&lines[..obstacle_lines]);
            for j in obstacle_lines..i {
                let det = lines[i].direction.det(lines[j].direction);
                let point = if det.abs() <= PARALLEL_EPSILON {
                    if lines[i].direction.dot(lines[j].direction) > 0.0 {
                        continue;
                    }
                    (lines[i].point + lines[j].point) * 0.5
                } else {
                    lines[i].point
                        + lines[i].direction * (lines[j].direction.det(lines[i].point - lines[j].point) / det)
                };
                scratch.push(Line {
                    point,
                    direction: (lines[j].direction - lines[i].direction).normalize_or_zero(),
                });
            }
            let previous = *result;
            let opt = lines[i].direction.perp();
            if program_2d(scratch, radius, opt, true, result) < scratch.len() {
                // Round-off only: the previous result is feasible by construction.
                *result = previous;
            }
            distance = lines[i].violation(*result);
        }
    }
}

/// Outcome of [`solve`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Solution {
    /// The new velocity.
    pub velocity: V2,
    /// True when the constraints could not all be met and the least-violating velocity
    /// (RVO2's `linearProgram3`) was taken.
    pub infeasible: bool,
}

/// The velocity of length at most `max_speed` nearest `preferred` satisfying all `lines`; the
/// first `obstacle_lines` are hard (obstacles, each satisfied by velocity 0) and the rest soft
/// (agents): if all cannot be met, the velocity minimising the largest soft violation is
/// returned. `scratch` is reused working memory.
#[inline(always)]
pub fn solve(
    lines: &[Line],
    obstacle_lines: usize,
    max_speed: f32,
    preferred: V2,
    scratch: &mut Vec<Line>,
) -> Solution {
    let mut result = V2::ZERO;
    let failed = program_2d(lines, max_speed, preferred, false, &mut result);
    let infeasible = failed < lines.len();
    if infeasible {
        program_fallback(lines, obstacle_lines, failed, max_speed, &mut result, scratch);
    }
    Solution {
        velocity: result,
        infeasible,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane version gives `agent_line`'s lines bit for bit, in every branch (apart on the
    /// cut-off circle, on either leg, overlapping, at the same position, at rest), for every
    /// count of lanes used, reciprocal and one-sided.
    #[test]
    fn agent_lines_are_agent_line_bit_for_bit() {
        let mut unit = crate::test_rng::unit(0x9E37_79B9_7F4A_7C15);
        let mut rnd = move |lo: f32, hi: f32| lo + (hi - lo) * unit();
        let mut branches = [0usize; 3];
        for case in 0..4000 {
            let pos = V2::new(rnd(0.0, 20.0), rnd(0.0, 20.0));
            let vel = V2::new(rnd(-1.5, 1.5), rnd(-1.5, 1.5));
            let radius = rnd(0.15, 0.35);
            let count = 1 + case % LINE_LANES;
            let mut others = Others::default();
            for l in 0..LINE_LANES {
                // Near (often overlapping) to far, sometimes exactly on the agent or at rest.
                let reach = [0.3, 1.0, 4.0][l % 3];
                others.x[l] = pos.x + rnd(-reach, reach);
                others.y[l] = pos.y + rnd(-reach, reach);
                (others.vx[l], others.vy[l]) = (rnd(-1.5, 1.5), rnd(-1.5, 1.5));
                others.radius[l] = rnd(0.15, 0.35);
                if case % 97 == 0 && l == 0 {
                    (others.x[l], others.y[l]) = (pos.x, pos.y);
                }
                if case % 89 == 0 && l == 1 {
                    (others.vx[l], others.vy[l]) = (vel.x, vel.y);
                }
            }
            let (tau, dt) = (rnd(0.5, 3.0), 0.1);
            let share = if case % 2 == 0 {
                Share::RECIPROCAL
            } else {
                Share::ONE_SIDED
            };
            let mut got = Vec::new();
            agent_lines(pos, vel, radius, &others, count, tau, dt, share, &mut got);
            assert_eq!(got.len(), count);
            for (l, line) in got.iter().enumerate() {
                let o = V2::new(others.x[l], others.y[l]);
                let ov = V2::new(others.vx[l], others.vy[l]);
                let want = agent_line(pos, vel, radius, o, ov, others.radius[l], tau, dt, share);
                let bits = |v: V2| (v.x.to_bits(), v.y.to_bits());
                assert_eq!(bits(line.point), bits(want.point), "case {case} lane {l}");
                assert_eq!(bits(line.direction), bits(want.direction), "case {case} lane {l}");
                let rel = o - pos;
                let r = radius + others.radius[l];
                let w = (vel - ov) - rel * (1.0 / tau);
                let dot1 = w.dot(rel);
                branches[if rel.len_sq() <= r * r {
                    0
                } else if dot1 < 0.0 && dot1 * dot1 > r * r * w.len_sq() {
                    1
                } else {
                    2
                }] += 1;
            }
        }
        assert!(
            branches.iter().all(|&b| b > 500),
            "every branch exercised: {branches:?}"
        );
    }

    #[test]
    fn no_constraints_clamps_preferred_to_speed() {
        let mut s = Vec::new();
        let r = solve(&[], 0, 1.0, V2::new(3.0, 4.0), &mut s);
        assert!((r.velocity - V2::new(0.6, 0.8)).len() < 1e-6);
        assert!(!r.infeasible);
    }

    #[test]
    fn single_half_plane_projects_onto_its_boundary() {
        // Allowed: v.x >= 0.5. Preferred (0, 0.2) projects to (0.5, 0.2).
        let l = Line::at_least(V2::new(1.0, 0.0), 0.5);
        let mut s = Vec::new();
        let r = solve(&[l], 0, 2.0, V2::new(0.0, 0.2), &mut s);
        assert!((r.velocity - V2::new(0.5, 0.2)).len() < 1e-6, "{:?}", r);
    }

    #[test]
    fn contradictory_soft_lines_meet_in_the_middle() {
        // v.x >= 1 and v.x <= -1 cannot both hold: the least violation is v.x = 0.
        let a = Line::at_least(V2::new(1.0, 0.0), 1.0);
        let b = Line::at_least(V2::new(-1.0, 0.0), 1.0);
        let mut s = Vec::new();
        let r = solve(&[a, b], 0, 2.0, V2::new(0.3, 0.0), &mut s);
        assert!(r.infeasible);
        assert!(r.velocity.x.abs() < 1e-5, "{:?}", r);
    }

    #[test]
    fn hard_lines_win_over_soft_ones() {
        // Hard: v.x >= 0 (a wall on the left). Soft: v.x <= -1 and v.x >= 1.
        let hard = Line::at_least(V2::new(1.0, 0.0), 0.0);
        let a = Line::at_least(V2::new(-1.0, 0.0), 1.0);
        let b = Line::at_least(V2::new(1.0, 0.0), 1.0);
        let mut s = Vec::new();
        let r = solve(&[hard, a, b], 1, 2.0, V2::ZERO, &mut s);
        assert!(r.velocity.x >= -1e-6, "{:?}", r);
    }

    #[test]
    fn head_on_agents_each_take_half() {
        // Two agents 4 m apart approaching at 1 m/s each: relative velocity 2 m/s, time to
        // contact 1.5 s < horizon 2 s. Each line must leave room for the other half.
        let a = agent_line(
            V2::ZERO,
            V2::new(1.0, 0.0),
            0.5,
            V2::new(4.0, 0.0),
            V2::new(-1.0, 0.0),
            0.5,
            2.0,
            0.1,
            Share::RECIPROCAL,
        );
        let b = agent_line(
            V2::new(4.0, 0.0),
            V2::new(-1.0, 0.0),
            0.5,
            V2::ZERO,
            V2::new(1.0, 0.0),
            0.5,
            2.0,
            0.1,
            Share::RECIPROCAL,
        );
        let mut s = Vec::new();
        let va = solve(&[a], 0, 1.0, V2::new(1.0, 0.0), &mut s).velocity;
        let vb = solve(&[b], 0, 1.0, V2::new(-1.0, 0.0), &mut s).velocity;
        // Symmetric: b's choice mirrors a's through the midpoint.
        assert!((va + vb).len() < 1e-5, "{va:?} {vb:?}");
        // And no collision within the horizon at the new velocities.
        assert!(min_distance_within(V2::ZERO, va, V2::new(4.0, 0.0), vb, 2.0) >= 1.0 - 1e-3);
    }

    /// Smallest distance between two points moving linearly over `[0, t]`.
    fn min_distance_within(pa: V2, va: V2, pb: V2, vb: V2, t: f32) -> f32 {
        let dp = pb - pa;
        let dv = vb - va;
        let s = if dv.len_sq() > 0.0 {
            (-dp.dot(dv) / dv.len_sq()).clamp(0.0, t)
        } else {
            0.0
        };
        (dp + dv * s).len()
    }
}
