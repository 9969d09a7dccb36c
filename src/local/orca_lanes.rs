//! ORCA's 2-D linear programs of up to [`AGENT_LANES`] agents at once, one agent per lane.
//!
//! [`orca::solve`] works through an agent's lines one by one, and each violated line starts a
//! one-line program (RVO2's `linearProgram1`): a square root, then a division per earlier line,
//! on one chain of dependencies. One agent at a time, that chain's latency is the cost, not its
//! arithmetic. Here the lines of eight agents are laid out in columns (line `k` of every agent
//! side by side) and the programs run lane by lane: line `k` is checked in all eight lanes at
//! once, and the one-line program on it runs in every lane that violates it, the others keeping
//! their result. Each lane performs exactly the operations [`orca::solve`] performs for its
//! agent, in the same order (no fused multiply-add, IEEE square roots and divisions; a lane that
//! does not need a step computes it and drops it), so every velocity is the same bit for bit.
//! Lanes whose program turns out infeasible finish with the scalar fallback
//! (`orca::program_fallback`) from the line that failed, as [`orca::solve`] does.

use super::orca::{self, Line, PARALLEL_EPSILON, Solution};
use crate::vec2::V2;

/// Agents whose programs run at once: one AVX2 vector of `f32`.
pub const AGENT_LANES: usize = 8;
const L: usize = AGENT_LANES;

/// One value per lane.
type Lanes = [f32; L];

/// The lines of up to [`AGENT_LANES`] agents as columns: `px[k][l]` is the point's x of line
/// `k` of lane `l`. Lines past a lane's count hold whatever was there (never read for it).
#[derive(Debug, Default)]
pub(crate) struct LaneLines {
    px: Vec<Lanes>,
    py: Vec<Lanes>,
    dx: Vec<Lanes>,
    dy: Vec<Lanes>,
    len: [usize; L],
}

impl LaneLines {
    /// Lays out `lines` (one list per lane, at most [`AGENT_LANES`] lists) as columns.
    #[inline(always)]
    fn fill(&mut self, lines: &[&[Line]]) {
        let longest = lines.iter().map(|l| l.len()).max().unwrap_or(0);
        for col in [&mut self.px, &mut self.py, &mut self.dx, &mut self.dy] {
            if col.len() < longest {
                col.resize(longest, [0.0; L]);
            }
        }
        self.len = [0; L];
        for (l, lane) in lines.iter().enumerate() {
            self.len[l] = lane.len();
            for (k, line) in lane.iter().enumerate() {
                self.px[k][l] = line.point.x;
                self.py[k][l] = line.point.y;
                self.dx[k][l] = line.direction.x;
                self.dy[k][l] = line.direction.y;
            }
        }
    }
}

/// `f32::clamp` without its `min <= max` assertion (a lane that fails its program clamps to
/// an empty interval and drops the result): the same two comparisons in the same order.
#[inline(always)]
fn clamp(mut x: f32, min: f32, max: f32) -> f32 {
    if x < min {
        x = min;
    }
    if x > max {
        x = max;
    }
    x
}

/// `orca::program_2d` (nearest `opt`, not a direction) in every lane: the result of each lane
/// and the index of the line that made its program infeasible (its line count on success).
/// (The negated comparisons are the scalar program's, NaN cases included.)
#[inline(always)]
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn program_2d_lanes(
    lines: &LaneLines,
    radius: &Lanes,
    opt_x: &Lanes,
    opt_y: &Lanes,
) -> (Lanes, Lanes, [usize; L]) {
    let (mut rx, mut ry) = ([0.0f32; L], [0.0f32; L]);
    for l in 0..L {
        let r = V2::new(opt_x[l], opt_y[l]).clamp_len(radius[l]);
        (rx[l], ry[l]) = (r.x, r.y);
    }
    let len = lines.len;
    let mut failed = len;
    // Lanes still working (not yet infeasible).
    let mut live = [true; L];
    let longest = len.iter().copied().max().unwrap_or(0);
    for k in 0..longest {
        let (px, py, dx, dy) = (&lines.px[k], &lines.py[k], &lines.dx[k], &lines.dy[k]);
        // `Line::violation(result) > 0`, in the lanes that have a line `k`.
        let mut need = [false; L];
        for l in 0..L {
            let violation = dx[l] * (py[l] - ry[l]) - dy[l] * (px[l] - rx[l]);
            need[l] = live[l] & (k < len[l]) & (violation > 0.0);
        }
        if !need.iter().any(|&n| n) {
            continue;
        }
        // `orca::program_on_line` on line `k`, in every lane.
        let (mut t_left, mut t_right, mut ok) = ([0.0f32; L], [0.0f32; L], [true; L]);
        for l in 0..L {
            let dot = px[l] * dx[l] + py[l] * dy[l];
            let disc = dot * dot + radius[l] * radius[l] - (px[l] * px[l] + py[l] * py[l]);
            ok[l] = !(disc < 0.0);
            let s = disc.sqrt();
            t_left[l] = -dot - s;
            t_right[l] = -dot + s;
        }
        for j in 0..k {
            let (opx, opy, odx, ody) = (&lines.px[j], &lines.py[j], &lines.dx[j], &lines.dy[j]);
            for l in 0..L {
                let denom = dx[l] * ody[l] - dy[l] * odx[l];
                let numer = odx[l] * (py[l] - opy[l]) - ody[l] * (px[l] - opx[l]);
                let parallel = denom.abs() <= PARALLEL_EPSILON;
                let t = numer / denom;
                let right = denom >= 0.0;
                t_right[l] = if !parallel & right {
                    t_right[l].min(t)
                } else {
                    t_right[l]
                };
                t_left[l] = if !parallel & !right {
                    t_left[l].max(t)
                } else {
                    t_left[l]
                };
                // The scalar program stops at the first failure; the bounds only narrow, so
                // failing at any step is failing at the end.
                ok[l] &= !(parallel & (numer < 0.0)) & !(t_left[l] > t_right[l]);
            }
        }
        for l in 0..L {
            let along = dx[l] * (opt_x[l] - px[l]) + dy[l] * (opt_y[l] - py[l]);
            let t = clamp(along, t_left[l], t_right[l]);
            let (x, y) = (px[l] + dx[l] * t, py[l] + dy[l] * t);
            let take = need[l] & ok[l];
            rx[l] = if take { x } else { rx[l] };
            ry[l] = if take { y } else { ry[l] };
            let fail = need[l] & !ok[l];
            failed[l] = if fail { k } else { failed[l] };
            live[l] &= !fail;
        }
    }
    (rx, ry, failed)
}

/// [`orca::solve`] for up to [`AGENT_LANES`] agents at once: `lines[l]` are agent `l`'s lines
/// (its first `obstacle_lines[l]` hard), `max_speed[l]` and `preferred[l]` its speed limit and
/// preferred velocity. Writes one solution per agent into `out` (as long as `lines`), each
/// equal bit for bit to what [`orca::solve`] gives. `columns` and `scratch` are reused working
/// memory.
#[inline(always)]
pub(crate) fn solve_lanes(
    lines: &[&[Line]],
    obstacle_lines: &[usize],
    max_speed: &[f32],
    preferred: &[V2],
    columns: &mut LaneLines,
    scratch: &mut Vec<Line>,
    out: &mut [Solution],
) {
    let n = lines.len();
    assert!(
        n <= L && obstacle_lines.len() == n && max_speed.len() == n && preferred.len() == n && out.len() == n
    );
    columns.fill(lines);
    let (mut radius, mut opt_x, mut opt_y) = ([0.0f32; L], [0.0f32; L], [0.0f32; L]);
    for l in 0..n {
        (radius[l], opt_x[l], opt_y[l]) = (max_speed[l], preferred[l].x, preferred[l].y);
    }
    let (rx, ry, failed) = program_2d_lanes(columns, &radius, &opt_x, &opt_y);
    for l in 0..n {
        let mut velocity = V2::new(rx[l], ry[l]);
        let infeasible = failed[l] < lines[l].len();
        if infeasible {
            orca::program_fallback(
                lines[l],
                obstacle_lines[l],
                failed[l],
                radius[l],
                &mut velocity,
                scratch,
            );
        }
        out[l] = Solution { velocity, infeasible };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random programs, feasible and not: lines through points near the origin in random
    /// directions, some parallel or opposite to an earlier one, some far off the speed disc.
    #[test]
    fn every_lane_gives_solves_velocity_bit_for_bit() {
        let mut unit = crate::test_rng::unit(0x2545_F491_4F6C_DD1D);
        let mut rnd = move |lo: f32, hi: f32| lo + (hi - lo) * unit();
        let (mut columns, mut scratch, mut single) = (LaneLines::default(), Vec::new(), Vec::new());
        let (mut infeasible, mut feasible_with_lines) = (0, 0);
        for case in 0..3000 {
            let lanes = 1 + case % L;
            let mut lines: Vec<Vec<Line>> = Vec::new();
            let mut obstacles = Vec::new();
            let (mut speed, mut preferred) = (Vec::new(), Vec::new());
            for l in 0..lanes {
                let count = (case * 7 + l * 3) % 15;
                let mut own: Vec<Line> = Vec::new();
                for k in 0..count {
                    let angle = rnd(0.0, std::f32::consts::TAU);
                    let mut direction = V2::new(angle.cos(), angle.sin());
                    if k > 0 && (case + k) % 11 == 0 {
                        // Parallel or opposite to the previous line.
                        let sign = if (case + k) % 2 == 0 { 1.0 } else { -1.0 };
                        direction = own[k - 1].direction * sign;
                    }
                    let reach = [0.3, 1.0, 3.0][(case + l + k) % 3];
                    own.push(Line {
                        point: V2::new(rnd(-reach, reach), rnd(-reach, reach)),
                        direction,
                    });
                }
                obstacles.push(if count > 0 { (case + l) % (count + 1) } else { 0 });
                speed.push(rnd(0.5, 2.0));
                preferred.push(V2::new(rnd(-2.0, 2.0), rnd(-2.0, 2.0)));
                lines.push(own);
            }
            let mut out = vec![
                Solution {
                    velocity: V2::ZERO,
                    infeasible: false
                };
                lanes
            ];
            let lanes_lines: Vec<&[Line]> = lines.iter().map(Vec::as_slice).collect();
            solve_lanes(
                &lanes_lines,
                &obstacles,
                &speed,
                &preferred,
                &mut columns,
                &mut scratch,
                &mut out,
            );
            for l in 0..lanes {
                let want = orca::solve(&lines[l], obstacles[l], speed[l], preferred[l], &mut single);
                let bits = |s: &Solution| (s.velocity.x.to_bits(), s.velocity.y.to_bits(), s.infeasible);
                assert_eq!(
                    bits(&out[l]),
                    bits(&want),
                    "case {case}, lane {l}: {:?}",
                    lines[l]
                );
                infeasible += usize::from(want.infeasible);
                feasible_with_lines += usize::from(!want.infeasible && lines[l].len() > 3);
            }
        }
        assert!(
            infeasible > 1000 && feasible_with_lines > 1000,
            "both outcomes exercised: {infeasible} infeasible, {feasible_with_lines} feasible"
        );
    }
}
