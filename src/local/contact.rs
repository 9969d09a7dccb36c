//! The contact pass, the last of the local layer's ORCA modes: agents without ORCA's guarantee
//! may end the move inside another body, and are pushed back out of it.
//!
//! ORCA guarantees no collision only while every agent's 2-D program is feasible and its
//! velocity is taken as it is. In a dense knot (the antipodal circle meeting in its centre, a
//! crowd at a door) programs turn infeasible, RVO2's fallback picks the velocity that violates
//! the lines least, and two such agents can overlap by a centimetre or so
//! ([`super::ORCA_CLEARANCE`] absorbs most of it, not all); a move that a wall stops or turns
//! is not the velocity ORCA chose either. Measured on the scenario tests: every overlapping
//! pair had both programs infeasible. So after the move, each agent without the guarantee (an
//! infeasible program, or a move the walls changed) looks at the bodies around its new
//! position and steps out of those it overlaps:
//! - by half the overlap when the other agent lacks the guarantee too (it steps out the other
//!   half), by all of it otherwise (the other agent keeps its place), to [`CONTACT_GAP`]
//!   beyond touching;
//! - in sweeps over those agents, every push of a sweep computed from the positions before it
//!   (Jacobi steps: the result does not depend on the order or the thread count), until a
//!   sweep pushes nobody, at most [`CONTACT_SWEEPS`];
//! - no push longer than the agent's radius, and the push moves with the walls
//!   ([`super::obstacles::WallMap::move_agent`]: it stops at them, so an agent pinned against
//!   a wall may keep a few millimetres of overlap);
//! - the agent's velocity becomes its displacement over the step.
//!
//! Only the agents without the guarantee run it (a few per cent of a crowd). The GPU runs the
//! same pass (`contact_sweep` in `shaders/local_common.wgsl`, all [`CONTACT_SWEEPS`] sweeps:
//! those after the CPU's last one change nothing).
//!
//! Neighbours are found in the bins of the step's start (the 3x3 bins around the agent's start
//! position): two bodies that overlap after the move were, at the start, at most the sum of
//! their radii plus both steps apart, within one bin (bins are at least the ORCA neighbour
//! distance, 3 m by default) as long as `r_i + r_j + (v_i + v_j) dt` stays below it.

use super::Frame;
use super::orca::V2;
use crate::neighbors::NeighborGrid;

/// Gap (m) the contact pass leaves between two bodies it separates: 1 mm beyond touching, so
/// that f32 rounding cannot leave them overlapping by a hair.
pub const CONTACT_GAP: f32 = 1e-3;

/// Most sweeps of the contact pass in one step. The first sweep runs over every agent without
/// ORCA's guarantee, each later one over those of them next to an agent the sweep before
/// pushed; a knot of several bodies needs a few (measured on the antipodal circle: one sweep
/// left overlaps of up to 12 mm, four up to 2.6 mm, sixteen none). Whatever is left is carried
/// into the next step.
pub const CONTACT_SWEEPS: usize = 16;

/// The unit vector agent `a` steps along out of agent `b` when both stand on the same point:
/// a direction fixed by their indices, opposite for the two (the simulation's separation
/// does the same).
#[inline]
pub(crate) fn coincident_direction(a: u32, b: u32) -> V2 {
    let (lo, hi) = (a.min(b), a.max(b));
    let angle = (lo.wrapping_mul(7919).wrapping_add(hi) % 65_536) as f32 * 2.399_963;
    let sign = if a < b { 1.0 } else { -1.0 };
    V2::new(sign * angle.cos(), sign * angle.sin())
}

/// The step out of the bodies it overlaps of packed agent `k`, from the positions after the
/// move (`pos(j)` for packed agent `j`), with `unguaranteed(j)` telling who lacks ORCA's
/// guarantee (and steps out half of a shared overlap). Zero when it overlaps nobody.
#[inline]
pub(crate) fn push(
    frame: &Frame,
    grid: &NeighborGrid,
    pos: impl Fn(usize) -> V2,
    unguaranteed: impl Fn(usize) -> bool,
    k: usize,
) -> V2 {
    let me = &frame.agents[k];
    let p = pos(k);
    let mut push = V2::ZERO;
    for row in super::scan::bin_rows(grid, me.p) {
        for j in row {
            if j == k {
                continue;
            }
            let other = &frame.agents[j];
            let d = p - pos(j);
            let touch = me.radius + other.radius;
            let d2 = d.len_sq();
            if d2 >= touch * touch {
                continue;
            }
            let dist = d2.sqrt();
            let dir = if dist > 1e-6 {
                d * (1.0 / dist)
            } else {
                coincident_direction(me.agent, other.agent)
            };
            let share = if unguaranteed(j) { 0.5 } else { 1.0 };
            push = push + dir * (share * (touch + CONTACT_GAP - dist));
        }
    }
    push.clamp_len(me.radius)
}
