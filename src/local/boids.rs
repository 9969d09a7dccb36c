//! Boids (SPEC §5): cohesion, separation and alignment over the bin grid.
//!
//! For agent `i` with boids parameters `P`, over the other agents `j` within each radius:
//! - cohesion: toward the centre of the same-group agents within `r_coh`;
//! - separation: away from the mean offset of **all** agents within `r_sep` (walkers of other
//!   groups are still bodies to keep clear of);
//! - alignment: toward the mean velocity of the same-group agents within `r_align`, i.e. along
//!   `v_mean - v_i`.
//!
//! Each direction is normalised, weighted by `k_coh, k_sep, k_align`, summed and clamped to
//! `a_max`: the steering `s`. The standalone flock integrates it as an
//! acceleration, `v' = clamp(v + s dt, v_max)`; the velocity model of the local layer reads it as a
//! velocity offset reached in one second, `v_pref = clamp(v_field + s * 1 s, max_speed)`.
//! Both read only the previous step's state (double-buffered).

use super::scan::Scratch;
use super::{PackedAgent, PackedAgents};
use crate::neighbors::NeighborGrid;
use crate::params::BoidsParams;
use crate::vec2::V2;

/// Boids parameters of one group in `f32`, as the per-agent kernel reads them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoidsF32 {
    /// Cohesion radius, m.
    pub r_coh: f32,
    /// Separation radius, m.
    pub r_sep: f32,
    /// Alignment radius, m.
    pub r_align: f32,
    /// Cohesion weight.
    pub k_coh: f32,
    /// Separation weight.
    pub k_sep: f32,
    /// Alignment weight.
    pub k_align: f32,
    /// Maximum acceleration (steering magnitude), m/s².
    pub a_max: f32,
    /// Maximum speed of the standalone flock, m/s.
    pub v_max: f32,
}

impl BoidsF32 {
    /// Every radius, weight and limit zero: what stands in for a group without boids where
    /// parameters are needed anyway (a branch-free kernel, the GPU's group records).
    pub const NONE: BoidsF32 = BoidsF32 {
        r_coh: 0.0,
        r_sep: 0.0,
        r_align: 0.0,
        k_coh: 0.0,
        k_sep: 0.0,
        k_align: 0.0,
        a_max: 0.0,
        v_max: 0.0,
    };
}

impl From<&BoidsParams> for BoidsF32 {
    fn from(p: &BoidsParams) -> Self {
        Self {
            r_coh: p.r_coh as f32,
            r_sep: p.r_sep as f32,
            r_align: p.r_align as f32,
            k_coh: p.k_coh as f32,
            k_sep: p.k_sep as f32,
            k_align: p.k_align as f32,
            a_max: p.a_max as f32,
            v_max: p.v_max as f32,
        }
    }
}

impl BoidsF32 {
    /// The largest of the three radii: how far the neighbour query must reach.
    pub fn reach(&self) -> f32 {
        self.r_coh.max(self.r_sep).max(self.r_align)
    }
}

/// Running sums of the three rules for one agent, fed neighbour by neighbour (shared by
/// [`steer`] and the fused boids+ORCA scan, so both give the same steering).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Accum {
    /// Sum of the cohesion neighbours' positions.
    pub(crate) sum_pos: V2,
    /// How many neighbours cohesion counted.
    pub(crate) n_coh: u32,
    /// Sum of the separation neighbours' offsets from the agent.
    pub(crate) sum_off: V2,
    /// How many neighbours separation counted.
    pub(crate) n_sep: u32,
    /// Sum of the alignment neighbours' velocities.
    pub(crate) sum_vel: V2,
    /// How many neighbours alignment counted.
    pub(crate) n_align: u32,
}

impl Accum {
    /// Adds neighbour `o` at squared distance `d2` from `me` ([`Accum::add_parts`]).
    #[cfg(test)]
    pub(crate) fn add(&mut self, p: &BoidsF32, me: &PackedAgent, o: &PackedAgent, d2: f32) {
        self.add_parts(p, me, o.p, o.v, o.group, d2);
    }

    /// Adds the neighbour at position `op` with velocity `ov` in group `og`, at squared
    /// distance `d2` from `me` (the neighbour as the frame's columns hold it).
    ///
    /// Without branches: a neighbour outside a rule's radius adds `-0.0` to its sums, which
    /// leaves every float unchanged bit for bit (`x + -0.0 == x`, signed zeros included), and
    /// 0 to its count. Which rules a neighbour falls under is close to random, so branches
    /// here were mispredicted about half the time.
    #[inline(always)]
    pub(crate) fn add_parts(&mut self, p: &BoidsF32, me: &PackedAgent, op: V2, ov: V2, og: u32, d2: f32) {
        const NOTHING: V2 = V2 { x: -0.0, y: -0.0 };
        let same = og == me.group;
        let coh = same & (d2 < p.r_coh * p.r_coh);
        let sep = d2 < p.r_sep * p.r_sep;
        let align = same & (d2 < p.r_align * p.r_align);
        self.sum_pos = self.sum_pos + if coh { op } else { NOTHING };
        self.n_coh += coh as u32;
        self.sum_off = self.sum_off + if sep { op - me.p } else { NOTHING };
        self.n_sep += sep as u32;
        self.sum_vel = self.sum_vel + if align { ov } else { NOTHING };
        self.n_align += align as u32;
    }

    /// How many neighbours each rule counted: `(cohesion, separation, alignment)`.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (u32, u32, u32) {
        (self.n_coh, self.n_sep, self.n_align)
    }

    /// [`Accum::steer`] without branches, for an agent at `me_p` moving at `me_v`: every
    /// rule's term computed and the ones with neighbours added, in the same order, so the
    /// same bits. Run for several agents side by side, their chains of square roots and
    /// divisions overlap, where each agent's branches would serialise them.
    #[inline(always)]
    pub(crate) fn steer_select(&self, p: &BoidsF32, me_p: V2, me_v: V2) -> V2 {
        let coh = (self.sum_pos * (1.0 / self.n_coh as f32) - me_p).normalize_or_zero_select() * p.k_coh;
        let sep = (self.sum_off * (1.0 / self.n_sep as f32)).normalize_or_zero_select() * p.k_sep;
        let align =
            (self.sum_vel * (1.0 / self.n_align as f32) - me_v).normalize_or_zero_select() * p.k_align;
        let mut s = V2::ZERO;
        s = if self.n_coh > 0 { s + coh } else { s };
        s = if self.n_sep > 0 { s - sep } else { s };
        if self.n_align > 0 { s + align } else { s }
    }

    /// The weighted sum of the normalised rule directions (not yet clamped to `a_max`).
    #[inline(always)]
    pub(crate) fn steer(&self, p: &BoidsF32, me: &PackedAgent) -> V2 {
        let mut s = V2::ZERO;
        if self.n_coh > 0 {
            s = s + (self.sum_pos * (1.0 / self.n_coh as f32) - me.p).normalize_or_zero() * p.k_coh;
        }
        if self.n_sep > 0 {
            s = s - (self.sum_off * (1.0 / self.n_sep as f32)).normalize_or_zero() * p.k_sep;
        }
        if self.n_align > 0 {
            s = s + (self.sum_vel * (1.0 / self.n_align as f32) - me.v).normalize_or_zero() * p.k_align;
        }
        s
    }
}

/// The boids steering of packed agent `k` (before clamping to `a_max`, so a caller can add
/// wall terms first), reading the previous state in `frame`; `s` is the worker's scratch.
pub(crate) fn steer(
    frame: &PackedAgents,
    grid: &NeighborGrid,
    k: usize,
    p: &BoidsF32,
    s: &mut Scratch,
) -> V2 {
    super::scan::scan(frame, grid, k, Some(p), 0.0, 0, s).steer(p, &frame.agents[k])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(ps: &[(f32, f32, f32, f32)]) -> (PackedAgents, NeighborGrid) {
        let xs: Vec<f32> = ps.iter().map(|p| p.0).collect();
        let ys: Vec<f32> = ps.iter().map(|p| p.1).collect();
        let mut g = NeighborGrid::new(20.0, 20.0, 3.0);
        g.rebuild(&xs, &ys);
        let agents = g
            .sorted
            .iter()
            .map(|&i| {
                let (x, y, vx, vy) = ps[i as usize];
                PackedAgent {
                    p: V2::new(x, y),
                    v: V2::new(vx, vy),
                    radius: 0.2,
                    max_speed: 1.5,
                    group: 0,
                    agent: i,
                }
            })
            .collect();
        (PackedAgents::of(agents), g)
    }

    fn packed_of(g: &NeighborGrid, agent: u32) -> usize {
        g.sorted.iter().position(|&i| i == agent).unwrap()
    }

    #[test]
    fn each_rule_points_the_right_way() {
        let only = |k_coh, k_sep, k_align| BoidsF32 {
            k_coh,
            k_sep,
            k_align,
            ..BoidsF32::from(&BoidsParams::default())
        };
        // Agent 0 at (10,10) at rest; agent 1 at (11.8,10) moving +y; agent 2 at (10.5,10) at rest.
        let (f, g) = frame(&[
            (10.0, 10.0, 0.0, 0.0),
            (11.8, 10.0, 0.0, 1.0),
            (10.5, 10.0, 0.0, 0.0),
        ]);
        let k = packed_of(&g, 0);
        let coh = steer(&f, &g, k, &only(1.0, 0.0, 0.0), &mut Scratch::default());
        assert!(coh.x > 0.99, "cohesion toward the centre (11.15, 10): {coh:?}");
        let sep = steer(&f, &g, k, &only(0.0, 1.0, 0.0), &mut Scratch::default());
        assert!(
            sep.x < -0.99,
            "separation away from the close agent at +x: {sep:?}"
        );
        let ali = steer(&f, &g, k, &only(0.0, 0.0, 1.0), &mut Scratch::default());
        assert!(
            ali.y > 0.99,
            "alignment toward the mean velocity (0, 0.5): {ali:?}"
        );
        assert!((coh.len() - 1.0).abs() < 1e-5, "each rule is normalised");
    }

    #[test]
    fn a_lone_boid_does_not_steer() {
        let (f, g) = frame(&[(1.0, 1.0, 1.0, 0.0), (15.0, 15.0, 0.0, 0.0)]);
        assert_eq!(
            steer(
                &f,
                &g,
                packed_of(&g, 0),
                &BoidsF32::from(&BoidsParams::default()),
                &mut Scratch::default()
            ),
            V2::ZERO
        );
    }
}
