//! The move pass of the local layer and the write-back: each packed slot's new position and
//! velocity with the walls ([`WallMap::move_agent`](crate::collision::WallMap::move_agent)), counted per block of slots, then
//! written back to the caller's agents in their own order.

use super::{LocalBackend, LocalLayer};
use crate::agents::Agents;
use crate::vec2::V2;
use rayon::prelude::*;

/// One packed slot after the move pass (16 bytes: the write-back reads one per agent).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Moved {
    /// Position, m.
    pub(super) p: V2,
    /// Velocity (the displacement over the step once the contact pass moved it), m/s.
    pub(super) v: V2,
}

/// What the move pass counted and listed in one block of slots.
#[derive(Debug, Default)]
pub(super) struct BlockTally {
    /// Infeasible ORCA programs.
    pub(super) infeasible: usize,
    /// Wall hits.
    pub(super) hits: usize,
    /// The slots without ORCA's guarantee.
    pub(super) slots: Vec<u32>,
}

impl LocalLayer {
    /// The move pass (integrate `velocity * dt`, stopping at walls, bouncing off them when
    /// `bounce`), then [`Self::write_back`]; returns the wall hits.
    pub(super) fn move_and_write_back(&mut self, agents: &mut Agents, dt: f32, bounce: bool) -> usize {
        let (_, hits) = self.move_agents(dt, bounce, false);
        self.write_back(agents);
        hits
    }

    /// The move pass: each slot's position and velocity after `velocity * dt` with the walls
    /// (bouncing off them when `bounce`), into `moved`. Returns the counts of infeasible
    /// programs and wall hits and, `with_slots`, lists in `contact_slots` the slots without
    /// ORCA's guarantee (the contact pass's agents), in slot order: counted and listed per
    /// block of slots as they are moved, so the results are read once.
    pub(super) fn move_agents(&mut self, dt: f32, bounce: bool, with_slots: bool) -> (usize, usize) {
        /// Slots per task of the move pass.
        const MOVE_BLOCK: usize = 4096;
        let (frame, walls, vel) = (&self.frame, &self.walls, &self.velocity);
        let n = frame.agents.len();
        self.moved.resize(n, Moved::default());
        self.unguaranteed.resize(n, false);
        self.move_blocks
            .resize_with(n.div_ceil(MOVE_BLOCK), Default::default);
        type Block<'a> = (&'a mut [Moved], (&'a mut [bool], &'a mut BlockTally));
        let work = |(b, (out, (unguaranteed, tally))): (usize, Block)| {
            (tally.infeasible, tally.hits) = (0, 0);
            tally.slots.clear();
            for (i, (o, u)) in out.iter_mut().zip(unguaranteed.iter_mut()).enumerate() {
                let k = b * MOVE_BLOCK + i;
                let a = &frame.agents[k];
                let (p, v, hit) = walls.move_agent(a.p, vel[k].0, dt, a.radius, bounce);
                *o = Moved { p, v };
                let infeasible = vel[k].1;
                *u = infeasible || hit;
                tally.infeasible += usize::from(infeasible);
                tally.hits += usize::from(hit);
                if with_slots && *u {
                    tally.slots.push(k as u32);
                }
            }
        };
        let blocks = &mut self.move_blocks;
        if self.backend == LocalBackend::CpuMulti {
            self.moved
                .par_chunks_mut(MOVE_BLOCK)
                .zip(
                    self.unguaranteed
                        .par_chunks_mut(MOVE_BLOCK)
                        .zip(blocks.par_iter_mut()),
                )
                .enumerate()
                .for_each(work);
        } else {
            self.moved
                .chunks_mut(MOVE_BLOCK)
                .zip(self.unguaranteed.chunks_mut(MOVE_BLOCK).zip(blocks.iter_mut()))
                .enumerate()
                .for_each(work);
        }
        self.contact_slots.clear();
        let (mut infeasible, mut hits) = (0, 0);
        for t in blocks.iter() {
            infeasible += t.infeasible;
            hits += t.hits;
            self.contact_slots.extend_from_slice(&t.slots);
        }
        (infeasible, hits)
    }

    /// Writes the move pass's results back in agent order, each agent fetching its own packed
    /// slot (a gather, parallel on [`LocalBackend::CpuMulti`]: no two agents write one place).
    pub(super) fn write_back(&self, agents: &mut Agents) {
        let (moved, slot_of) = (&self.moved, &self.slot_of);
        let write = |(((x, y), (vx, vy)), &k): (((&mut f32, &mut f32), (&mut f32, &mut f32)), &u32)| {
            let Moved { p, v, .. } = moved[k as usize];
            (*x, *y, *vx, *vy) = (p.x, p.y, v.x, v.y);
        };
        if self.backend == LocalBackend::CpuMulti {
            agents
                .x
                .par_iter_mut()
                .zip(agents.y.par_iter_mut())
                .zip(agents.vx.par_iter_mut().zip(agents.vy.par_iter_mut()))
                .zip(slot_of.par_iter())
                .for_each(write);
        } else {
            agents
                .x
                .iter_mut()
                .zip(agents.y.iter_mut())
                .zip(agents.vx.iter_mut().zip(agents.vy.iter_mut()))
                .zip(slot_of.iter())
                .for_each(write);
        }
    }
}
