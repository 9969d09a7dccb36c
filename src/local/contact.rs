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
//! position and steps out of those it overlaps ([`Push`], the simulation's separation's too,
//! under the rule [`CONTACT`]):
//! - by half the overlap when the other agent lacks the guarantee too (it steps out the other
//!   half), by all of it otherwise (the other agent keeps its place), to [`CONTACT_GAP`]
//!   beyond touching;
//! - in sweeps over those agents, every push of a sweep computed from the positions before it
//!   (Jacobi steps: the result does not depend on the order or the thread count), until a
//!   sweep pushes nobody, at most [`CONTACT_SWEEPS`];
//! - no push longer than the agent's radius, and the push moves with the walls
//!   ([`WallMap::move_agent`](crate::collision::WallMap::move_agent): it stops at them, so an
//!   agent pinned against a wall may keep a few millimetres of overlap);
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

use super::LocalBackend;
use super::PackedAgents;
use super::move_pass::Moved;
use crate::collision::overlap::{self, Push, PushRule, Unit};
use crate::neighbors::NeighborGrid;
use crate::vec2::V2;
use rayon::prelude::*;

/// Gap (m) the contact pass leaves between two bodies it separates: 1 mm beyond touching, so
/// that f32 rounding cannot leave them overlapping by a hair.
pub const CONTACT_GAP: f32 = 1e-3;

/// Most sweeps of the contact pass in one step. The first sweep runs over every agent without
/// ORCA's guarantee, each later one over those of them next to an agent the sweep before
/// pushed; a knot of several bodies needs a few (measured on the antipodal circle: one sweep
/// left overlaps of up to 12 mm, four up to 2.6 mm, sixteen none). Whatever is left is carried
/// into the next step.
pub const CONTACT_SWEEPS: usize = 16;

/// How an agent of the contact pass steps out of a body: 1 mm beyond touching
/// ([`CONTACT_GAP`]), the direction `d * (1 / |d|)` as the shader computes it.
pub const CONTACT: PushRule = PushRule {
    gap: CONTACT_GAP,
    unit: Unit::Reciprocal,
};

/// The unit vector agent `a` steps along out of agent `b` when both stand on the same point
/// ([`overlap::coincident_direction`]), keyed by their ids in the GPU's `u32` arithmetic:
/// opposite for the two.
#[inline]
pub(crate) fn coincident_direction(a: u32, b: u32) -> V2 {
    let (lo, hi) = (a.min(b), a.max(b));
    let key = lo.wrapping_mul(7919).wrapping_add(hi) % 65_536;
    overlap::coincident_direction(u64::from(key), a < b)
}

/// The step out of the bodies it overlaps of packed agent `k` ([`Push`] under [`CONTACT`]),
/// from the positions after the move (`pos(j)` for packed agent `j`), with `unguaranteed(j)`
/// telling who lacks ORCA's guarantee (and steps out half of a shared overlap). Zero when it
/// overlaps nobody.
#[inline]
pub(crate) fn push(
    frame: &PackedAgents,
    grid: &NeighborGrid,
    pos: impl Fn(usize) -> V2,
    unguaranteed: impl Fn(usize) -> bool,
    k: usize,
) -> V2 {
    let me = &frame.agents[k];
    let p = pos(k);
    let mut push = Push::default();
    for row in super::scan::bin_rows(grid, me.p) {
        for j in row {
            if j == k {
                continue;
            }
            let other = &frame.agents[j];
            let share = if unguaranteed(j) { 0.5 } else { 1.0 };
            push.add(CONTACT, p - pos(j), me.radius + other.radius, share, || {
                coincident_direction(me.agent, other.agent)
            });
        }
    }
    push.total(me.radius)
}

impl super::LocalLayer {
    /// The contact pass ([`contact`]) on the move pass's results, over `contact_slots` (the
    /// agents without ORCA's guarantee, listed by [`Self::move_agents`]): Jacobi sweeps until
    /// one pushes nobody, at most [`CONTACT_SWEEPS`]; returns how many agents it
    /// pushed.
    pub(super) fn resolve_contacts(&mut self, dt: f32) -> usize {
        let multi = self.backend == LocalBackend::CpuMulti;
        // The slots of this sweep: at first all of the contact pass's agents; afterwards only
        // those with a bin next to (or at) the bin of an agent the last sweep pushed. Any
        // other agent would see the same positions around it as in the last sweep, in which
        // it did not move, and would not move again: the same result as a sweep over all.
        let mut active = std::mem::take(&mut self.contact_active);
        active.clear();
        active.extend_from_slice(&self.contact_slots);
        let mut pushed_slots: Vec<u32> = Vec::new();
        let mut sweep_pushed: Vec<u32> = Vec::new();
        for _ in 0..CONTACT_SWEEPS {
            if active.is_empty() {
                break;
            }
            let (frame, grid, walls, moved) = (&self.frame, &self.grid, &self.walls, &self.moved);
            let unguaranteed = &self.unguaranteed;
            let fix = |&k: &u32| {
                let k = k as usize;
                let m = moved[k];
                let push = push(frame, grid, |j| moved[j].p, |j| unguaranteed[j], k);
                if push == V2::ZERO {
                    return m;
                }
                // The wall may stop the push (the move's wall hit is counted, not this one).
                let radius = frame.agents[k].radius;
                let (p, _, _) = walls.move_agent(m.p, push * (1.0 / dt), dt, radius, false);
                Moved {
                    p,
                    v: (p - frame.agents[k].p) * (1.0 / dt),
                }
            };
            let fixes = &mut self.contact_moves;
            fixes.clear();
            // A sweep over a few agents (the later ones, most steps) stays on one thread.
            if multi && active.len() > 1024 {
                fixes.par_extend(active.par_iter().map(fix));
            } else {
                fixes.extend(active.iter().map(fix));
            }
            // Apply; stop after a sweep that pushed nobody.
            sweep_pushed.clear();
            for (&k, fixed) in active.iter().zip(fixes.iter()) {
                if self.moved[k as usize].p != fixed.p {
                    self.moved[k as usize] = *fixed;
                    sweep_pushed.push(k);
                }
            }
            if sweep_pushed.is_empty() {
                break;
            }
            pushed_slots.extend_from_slice(&sweep_pushed);
            // The bins next to a pushed agent's, then the agents in them.
            let (grid, frame) = (&self.grid, &self.frame);
            let dirty = &mut self.contact_dirty;
            dirty.resize(grid.bins(), false);
            let mut marked: Vec<usize> = Vec::with_capacity(9 * sweep_pushed.len());
            for &k in &sweep_pushed {
                let p = frame.agents[k as usize].p;
                let (bx, by) = grid.bin_xy(p.x, p.y);
                for ny in by.saturating_sub(1)..=(by + 1).min(grid.bins_y - 1) {
                    for nx in bx.saturating_sub(1)..=(bx + 1).min(grid.bins_x - 1) {
                        let b = (ny * grid.bins_x + nx) as usize;
                        if !dirty[b] {
                            dirty[b] = true;
                            marked.push(b);
                        }
                    }
                }
            }
            active.clear();
            active.extend(self.contact_slots.iter().copied().filter(|&k| {
                let p = frame.agents[k as usize].p;
                dirty[grid.bin_of(p.x, p.y) as usize]
            }));
            for b in marked {
                dirty[b] = false;
            }
        }
        self.contact_active = active;
        pushed_slots.sort_unstable();
        pushed_slots.dedup();
        pushed_slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::*;

    #[test]
    fn the_contact_pass_separates_overlapping_bodies_and_leaves_the_others() {
        // Two walkers 0.3 m apart (radii 0.25: 0.2 m overlap) standing still, both
        // programs infeasible: each steps out half the overlap plus half the gap. A third, far
        // away and feasible, is left where the move put it.
        let scene = workload::open_crowd(10, 0.5).0;
        let mut a = Agents::default();
        a.push(0, 5.0, 5.0, 0, 0.25, 1.3);
        a.push(1, 5.3, 5.0, 0, 0.25, 1.3);
        a.push(2, 8.0, 8.0, 0, 0.25, 1.3);
        let mut layer = LocalLayer::new(LocalMode::Orca, LocalBackend::CpuSingle).unwrap();
        layer.bins(&scene, &a, 3.0, true);
        layer.velocity = vec![(V2::ZERO, false); 3];
        for i in 0..2 {
            layer.velocity[layer.slot_of[i] as usize].1 = true;
        }
        layer.move_agents(0.1, false, true);
        assert_eq!(layer.resolve_contacts(0.1), 2);
        let at = |l: &LocalLayer, i: usize| l.moved[l.slot_of[i] as usize];
        let gap = at(&layer, 1).p.x - at(&layer, 0).p.x;
        assert!((gap - (0.5 + contact::CONTACT_GAP)).abs() < 1e-5, "{gap}");
        assert!((at(&layer, 0).p.x - (5.0 - 0.1005)).abs() < 1e-5 && at(&layer, 0).p.y == 5.0);
        // The displacement over the step is the new velocity.
        assert!((at(&layer, 0).v.x + 1.005).abs() < 1e-4, "{:?}", at(&layer, 0).v);
        assert_eq!(at(&layer, 2).p, V2::new(8.0, 8.0));
        // With the second one feasible, the first steps out of all of the overlap.
        layer.velocity[layer.slot_of[1] as usize].1 = false;
        layer.move_agents(0.1, false, true);
        assert_eq!(layer.resolve_contacts(0.1), 1);
        assert_eq!(at(&layer, 1).p, V2::new(5.3, 5.0));
        assert!((at(&layer, 1).p.x - at(&layer, 0).p.x - (0.5 + contact::CONTACT_GAP)).abs() < 1e-5);
    }

    #[test]
    fn the_contact_sweeps_over_pushed_neighbourhoods_equal_sweeps_over_everyone() {
        // A crowd packed at 3 persons/m² from random places (many overlaps, knots that take
        // several sweeps), half the agents without ORCA's guarantee.
        let (scene, a, _) = workload::open_crowd(3_000, 3.0);
        let mut layer = LocalLayer::new(LocalMode::Orca, LocalBackend::CpuMulti).unwrap();
        // Bins of 1 m: most knots span several bins.
        layer.bins(&scene, &a, 1.0, true);
        layer.velocity = (0..a.len()).map(|k| (V2::new(0.3, -0.2), k % 2 == 0)).collect();
        let dt = 0.1;
        layer.move_agents(dt, false, true);
        let start = layer.moved.clone();
        let pushed = layer.resolve_contacts(dt);
        // The reference: every sweep over every agent without the guarantee.
        let mut moved = start.clone();
        let (mut sweeps, mut ever) = (0, vec![false; moved.len()]);
        for _ in 0..CONTACT_SWEEPS {
            let fixes: Vec<Moved> = layer
                .contact_slots
                .iter()
                .map(|&k| {
                    let k = k as usize;
                    let m = moved[k];
                    let push = push(
                        &layer.frame,
                        &layer.grid,
                        |j| moved[j].p,
                        |j| layer.unguaranteed[j],
                        k,
                    );
                    if push == V2::ZERO {
                        return m;
                    }
                    let radius = layer.frame.agents[k].radius;
                    let (p, _, _) = layer.walls.move_agent(m.p, push * (1.0 / dt), dt, radius, false);
                    Moved {
                        p,
                        v: (p - layer.frame.agents[k].p) * (1.0 / dt),
                    }
                })
                .collect();
            let mut any = false;
            for (&k, f) in layer.contact_slots.iter().zip(&fixes) {
                if moved[k as usize].p != f.p {
                    (moved[k as usize], ever[k as usize], any) = (*f, true, true);
                }
            }
            sweeps += 1;
            if !any {
                break;
            }
        }
        assert!(sweeps > 3, "a test of several sweeps ({sweeps})");
        assert!(pushed > 300, "{pushed} pushed");
        assert_eq!(pushed, ever.iter().filter(|&&e| e).count());
        assert!(
            layer.moved == moved,
            "the same positions and velocities, bit for bit"
        );
    }
}
