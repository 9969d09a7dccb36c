//! The neighbour scan of the per-agent passes: for packed agent `k`, every other agent of the
//! 3x3 bins around it, bin row by bin row (bottom first), packed order within a row, feeding the boids
//! sums and picking ORCA's nearest neighbours.
//!
//! It reads the frame's columns ([`Columns`]: x, y, vx, vy, group, radius, each contiguous in bin
//! order) per contiguous run of candidates (the bins of one row, minus `k` itself):
//! 1. each candidate's squared distance, the candidate appended (branch-free) to a short list
//!    in visiting order when within `dist`;
//! 2. the boids sums over the short list neighbour by neighbour (`boids::Accum`,
//!    branch-free), and from it the `max` nearest, nearest first, ties in visiting order,
//!    each one's place counted rather than found by insertion (`nearest`).
//!
//! When a boids radius reaches past `dist`, the distances of a run are computed first (a loop
//! the compiler vectorises) and the sums taken over every candidate, then the short list is
//! drawn from them. (With the rules within reach, the one fused loop of step 1 measured 8 %
//! faster over the whole ORCA pass than distances first and a compaction after.)
//!
//! Both phases give what the scalar scan they replace gave, bit for bit (the same distances,
//! the same sums in the same order, the same neighbours in the same order): only the branches
//! that the CPU mispredicted are gone. The GPU's scan (`shaders/local_common.wgsl`) is the
//! scalar one.
//!
//! The ORCA pass scans the agents of one bin together (`scan_group`): they share their 3x3
//! bins, so each candidate is read once and its distance and boids terms are taken for up to
//! eight agents side by side, one per vector lane; then each agent's short list and nearest
//! neighbours as above. The same results bit for bit, agent by agent.

use super::boids::{self, BoidsF32};
use super::{PackedAgent, PackedAgents};
use crate::neighbors::NeighborGrid;
use crate::vec2::V2;
use rayon::prelude::*;
use std::ops::Range;

/// The frame's agents as columns, in the same (bin) order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Columns {
    /// Positions, m.
    pub x: Vec<f32>,
    /// Positions, m.
    pub y: Vec<f32>,
    /// Velocities at the start of the step, m/s.
    pub vx: Vec<f32>,
    /// Velocities at the start of the step, m/s.
    pub vy: Vec<f32>,
    /// Group indices.
    pub group: Vec<u32>,
    /// Body radii, m.
    pub radius: Vec<f32>,
}

impl Columns {
    /// The columns of `agents`.
    pub fn of(agents: &[PackedAgent]) -> Self {
        let mut c = Self::default();
        c.fill(agents, false);
        c
    }

    /// Refills the columns from `agents`, reusing their memory; on all rayon threads when
    /// `parallel`. One pass over the agents writes all six columns.
    pub fn fill(&mut self, agents: &[PackedAgent], parallel: bool) {
        let n = agents.len();
        for col in [
            &mut self.x,
            &mut self.y,
            &mut self.vx,
            &mut self.vy,
            &mut self.radius,
        ] {
            col.resize(n, 0.0);
        }
        self.group.resize(n, 0);
        // Blocks of agents, each written to its part of every column.
        const BLOCK: usize = 4096;
        let fill_block = |((((((a, x), y), vx), vy), g), r): (
            (
                (
                    (((&[PackedAgent], &mut [f32]), &mut [f32]), &mut [f32]),
                    &mut [f32],
                ),
                &mut [u32],
            ),
            &mut [f32],
        )| {
            for (i, a) in a.iter().enumerate() {
                (x[i], y[i], vx[i], vy[i], g[i], r[i]) = (a.p.x, a.p.y, a.v.x, a.v.y, a.group, a.radius);
            }
        };
        if parallel {
            agents
                .par_chunks(BLOCK)
                .zip(self.x.par_chunks_mut(BLOCK))
                .zip(self.y.par_chunks_mut(BLOCK))
                .zip(self.vx.par_chunks_mut(BLOCK))
                .zip(self.vy.par_chunks_mut(BLOCK))
                .zip(self.group.par_chunks_mut(BLOCK))
                .zip(self.radius.par_chunks_mut(BLOCK))
                .for_each(fill_block);
        } else {
            agents
                .chunks(BLOCK)
                .zip(self.x.chunks_mut(BLOCK))
                .zip(self.y.chunks_mut(BLOCK))
                .zip(self.vx.chunks_mut(BLOCK))
                .zip(self.vy.chunks_mut(BLOCK))
                .zip(self.group.chunks_mut(BLOCK))
                .zip(self.radius.chunks_mut(BLOCK))
                .for_each(fill_block);
        }
    }
}

/// Working memory of one scanning worker.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// Squared distances of the candidates, run after run.
    d2: Vec<f32>,
    /// Distances² of the candidates within reach, in visiting order.
    within_d2: Vec<f32>,
    /// Their packed indices.
    within_at: Vec<usize>,
    /// The nearest neighbours of the last scan, `(distance², packed index)`, nearest first.
    pub(crate) near: Vec<(f32, usize)>,
}

/// The runs of packed indices in the 3x3 bins around `p`, one per bin row (bins of one row
/// are contiguous in the packed order), bottom row first; rows past the grid are empty.
#[inline(always)]
pub(crate) fn bin_rows(grid: &NeighborGrid, p: crate::vec2::V2) -> [Range<usize>; 3] {
    let (bx, by) = grid.bin_xy(p.x, p.y);
    let (x0, x1) = (bx.saturating_sub(1), (bx + 1).min(grid.bins_x - 1));
    let mut rows = [0..0, 0..0, 0..0];
    for (slot, ny) in (by.saturating_sub(1)..=(by + 1).min(grid.bins_y - 1)).enumerate() {
        let row = (ny * grid.bins_x) as usize;
        rows[slot] =
            grid.bin_start[row + x0 as usize] as usize..grid.bin_start[row + x1 as usize + 1] as usize;
    }
    rows
}

/// Scans the neighbours of packed agent `k`: returns the boids sums under `boids` (empty sums
/// without), and leaves in `s.near` the `max` nearest other agents closer than `dist`, nearest
/// first, ties in visiting order.
#[inline(always)]
pub(crate) fn scan(
    frame: &PackedAgents,
    grid: &NeighborGrid,
    k: usize,
    boids: Option<&BoidsF32>,
    dist: f32,
    max: usize,
    s: &mut Scratch,
) -> boids::Accum {
    let cols = &frame.columns;
    let me = &frame.agents[k];
    let rows = bin_rows(grid, me.p);
    // The runs of candidates: each row, split around `k` itself.
    let mut runs: [Range<usize>; 6] = Default::default();
    let mut n_runs = 0;
    let mut total = 0;
    for r in rows {
        let pieces = if r.contains(&k) {
            [r.start..k, k + 1..r.end]
        } else {
            [r, 0..0]
        };
        for piece in pieces {
            if !piece.is_empty() {
                total += piece.len();
                runs[n_runs] = piece;
                n_runs += 1;
            }
        }
    }
    let runs = &runs[..n_runs];

    let mut acc = boids::Accum::default();
    if max == 0 {
        // Boids sums alone (the standalone flock): one pass over the packed agents (one load
        // per neighbour; measured faster here than five columns), no list to fill.
        s.near.clear();
        if let Some(b) = boids {
            for run in runs {
                for o in &frame.agents[run.clone()] {
                    acc.add_parts(b, me, o.p, o.v, o.group, (o.p - me.p).len_sq());
                }
            }
        }
        return acc;
    }

    // Every boids rule's radius within `dist`: the rules can only count candidates of the
    // short list of phase 2, so their sums are taken there (same neighbours, same order, same
    // sums bit for bit: a candidate outside every radius adds `-0.0`) over about a third of
    // the candidates (the 3x3 bins hold about 9 / pi times the agents within `dist`).
    let boids_in_reach = boids.filter(|b| b.reach() <= dist);
    let boids_all = if boids_in_reach.is_some() { None } else { boids };

    let reach = dist * dist;
    // One spare slot for the branch-free append, and a whole lane group past it for
    // `nearest`'s reads.
    grow(&mut s.within_d2, total + 1 + LANES);
    grow(&mut s.within_at, total + 1);
    // As slices: a store through them cannot change the vectors' pointer and length, which
    // the loops below would otherwise reload after every store.
    let (within_d2, within_at) = (&mut s.within_d2[..], &mut s.within_at[..]);
    let mut n = 0;
    if let Some(b) = boids_all {
        // Phase 1: distances and the boids sums over every candidate (a rule reaches past
        // `dist`), then phase 2 over the distances kept.
        grow(&mut s.d2, total);
        let mut at = 0;
        for run in runs {
            let d2 = &mut s.d2[at..at + run.len()];
            at += run.len();
            let (x, y) = (&cols.x[run.clone()], &cols.y[run.clone()]);
            distances(me, x, y, d2);
            let (vx, vy, g) = (
                &cols.vx[run.clone()],
                &cols.vy[run.clone()],
                &cols.group[run.clone()],
            );
            for i in 0..x.len() {
                acc.add_parts(b, me, V2::new(x[i], y[i]), V2::new(vx[i], vy[i]), g[i], d2[i]);
            }
        }
        let mut at = 0;
        for run in runs {
            for (j, &d2) in run.clone().zip(&s.d2[at..at + run.len()]) {
                within_d2[n] = d2;
                within_at[n] = j;
                n += (d2 < reach) as usize;
            }
            at += run.len();
        }
    } else {
        // Phases 1 and 2 in one loop: each candidate's distance, kept when within `dist`.
        for run in runs {
            let (x, y) = (&cols.x[run.clone()], &cols.y[run.clone()]);
            for ((j, &cx), &cy) in run.clone().zip(x).zip(y) {
                let (dx, dy) = (cx - me.p.x, cy - me.p.y);
                let d2 = dx * dx + dy * dy;
                within_d2[n] = d2;
                within_at[n] = j;
                n += (d2 < reach) as usize;
            }
        }
    }
    if let Some(b) = boids_in_reach {
        for (&d2, &j) in s.within_d2[..n].iter().zip(&s.within_at[..n]) {
            acc.add_parts(
                b,
                me,
                V2::new(cols.x[j], cols.y[j]),
                V2::new(cols.vx[j], cols.vy[j]),
                cols.group[j],
                d2,
            );
        }
    }
    nearest(&s.within_d2, &s.within_at[..n], max, &mut s.near);
    acc
}

/// Agents scanned at once by [`scan_group`]: one AVX2 vector of `f32`.
pub(crate) const GROUP_LANES: usize = 8;
const G: usize = GROUP_LANES;

/// What [`scan_group`] needs of each agent of a group (one per lane).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GroupAgent {
    /// Boids parameters (`None`: no boids sums).
    pub(crate) boids: Option<BoidsF32>,
    /// ORCA's neighbour distance, m.
    pub(crate) dist: f32,
    /// ORCA's neighbour count.
    pub(crate) max: usize,
}

/// Working memory of [`scan_group`].
#[derive(Debug, Default)]
pub(crate) struct GroupScratch {
    /// Squared distances of the candidates to each agent of the group, candidate by candidate
    /// (an agent's own slot holds infinity).
    d2: Vec<[f32; G]>,
    /// The list of one agent, as in [`Scratch`]; also the scratch of [`scan`] when agents
    /// are scanned one at a time.
    pub(crate) one: Scratch,
    /// The nearest neighbours of each agent of the last group scan, as [`Scratch::near`].
    pub(crate) near: [Vec<(f32, usize)>; G],
}

/// [`scan`] for the packed agents `k0..k0 + agents.len()` (at most [`GROUP_LANES`]), which all
/// lie in one bin, so their candidates are the same 3x3 bins: each candidate is read once and
/// its distance and boids terms taken for all the agents side by side (lane `l` is agent
/// `k0 + l`). Returns each agent's boids sums and leaves its nearest neighbours in
/// `s.near[l]`: what [`scan`] gives that agent, bit for bit (the same candidates in the same
/// order, the agent itself skipped; a candidate outside a rule adds `+0.0` to its sums, which
/// leaves them as the scalar scan's `-0.0` does, see `keep` below).
#[inline(always)]
pub(crate) fn scan_group(
    frame: &PackedAgents,
    grid: &NeighborGrid,
    k0: usize,
    agents: &[GroupAgent],
    s: &mut GroupScratch,
) -> [boids::Accum; G] {
    let n = agents.len();
    assert!(n <= G && k0 + n <= frame.agents.len());
    let cols = &frame.columns;
    let rows = bin_rows(grid, frame.agents[k0].p);
    let total: usize = rows.iter().map(|r| r.len()).sum();
    // Lane settings; lanes past `n` stay out of every sum and list.
    let (mut px, mut py, mut group) = ([f32::NAN; G], [f32::NAN; G], [u32::MAX; G]);
    // Each lane's own packed index (never a candidate's past `n`).
    let mut own = [u32::MAX; G];
    let (mut coh2, mut sep2, mut align2) = (
        [f32::NEG_INFINITY; G],
        [f32::NEG_INFINITY; G],
        [f32::NEG_INFINITY; G],
    );
    for (l, a) in agents.iter().enumerate() {
        let me = &frame.agents[k0 + l];
        (px[l], py[l], group[l], own[l]) = (me.p.x, me.p.y, me.group, (k0 + l) as u32);
        if let Some(b) = &a.boids {
            (coh2[l], sep2[l], align2[l]) = (b.r_coh * b.r_coh, b.r_sep * b.r_sep, b.r_align * b.r_align);
        }
    }
    // All bits set where `b`: a lane mask.
    #[inline(always)]
    fn mask(b: bool) -> u32 {
        (b as u32).wrapping_neg()
    }
    // `x` where `m` is set, else +0.0. The sums start at +0.0 and so are never -0.0 (a sum is
    // -0.0 only when both terms are), so adding +0.0 here gives the bits the scalar scan's
    // `-0.0` gives; unlike `-0.0`, the compiler cannot drop the addition, which kept the sums
    // in registers rather than in masked stores.
    #[inline(always)]
    fn keep(x: f32, m: u32) -> f32 {
        f32::from_bits(x.to_bits() & m)
    }
    let (mut pos_x, mut pos_y, mut off_x, mut off_y, mut vel_x, mut vel_y) = (
        [0.0f32; G],
        [0.0f32; G],
        [0.0f32; G],
        [0.0f32; G],
        [0.0f32; G],
        [0.0f32; G],
    );
    let (mut n_coh, mut n_sep, mut n_align) = ([0u32; G], [0u32; G], [0u32; G]);
    grow(&mut s.d2, total);
    let d2_out = &mut s.d2[..total];
    let mut t = 0;
    for run in &rows {
        let len = run.len();
        let (xs, ys) = (&cols.x[run.clone()], &cols.y[run.clone()]);
        let (vxs, vys, gs) = (
            &cols.vx[run.clone()],
            &cols.vy[run.clone()],
            &cols.group[run.clone()],
        );
        let out = &mut d2_out[t..t + len];
        for i in 0..len {
            let (cx, cy, cvx, cvy, cg) = (xs[i], ys[i], vxs[i], vys[i], gs[i]);
            let j = (run.start + i) as u32;
            let mut d2s = [0.0f32; G];
            for l in 0..G {
                let (dx, dy) = (cx - px[l], cy - py[l]);
                let d2 = dx * dx + dy * dy;
                let other = j != own[l];
                d2s[l] = if other { d2 } else { f32::INFINITY };
                let same = other & (cg == group[l]);
                let coh = mask(same & (d2 < coh2[l]));
                let sep = mask(other & (d2 < sep2[l]));
                let align = mask(same & (d2 < align2[l]));
                pos_x[l] += keep(cx, coh);
                pos_y[l] += keep(cy, coh);
                off_x[l] += keep(dx, sep);
                off_y[l] += keep(dy, sep);
                vel_x[l] += keep(cvx, align);
                vel_y[l] += keep(cvy, align);
                n_coh[l] += coh & 1;
                n_sep[l] += sep & 1;
                n_align[l] += align & 1;
            }
            out[i] = d2s;
        }
        t += len;
    }
    // Each agent's short list in visiting order, then its nearest.
    grow(&mut s.one.within_d2, total + 1 + LANES);
    grow(&mut s.one.within_at, total + 1);
    for (l, a) in agents.iter().enumerate() {
        let reach = a.dist * a.dist;
        let (within_d2, within_at) = (&mut s.one.within_d2[..], &mut s.one.within_at[..]);
        let mut m = 0;
        let mut t = 0;
        for run in &rows {
            for j in run.clone() {
                let d2 = s.d2[t][l];
                t += 1;
                within_d2[m] = d2;
                within_at[m] = j;
                m += (d2 < reach) as usize;
            }
        }
        nearest(&s.one.within_d2, &s.one.within_at[..m], a.max, &mut s.near[l]);
    }
    std::array::from_fn(|l| boids::Accum {
        sum_pos: V2::new(pos_x[l], pos_y[l]),
        n_coh: n_coh[l],
        sum_off: V2::new(off_x[l], off_y[l]),
        n_sep: n_sep[l],
        sum_vel: V2::new(vel_x[l], vel_y[l]),
        n_align: n_align[l],
    })
}

/// Makes `v` at least `len` long (new slots zero); never shrinks it.
#[inline]
fn grow<T: Copy + Default>(v: &mut Vec<T>, len: usize) {
    if v.len() < len {
        v.resize(len, T::default());
    }
}

/// Squared distances from `me` of the candidates at `x`, `y`, into `d2`.
#[inline]
fn distances(me: &PackedAgent, x: &[f32], y: &[f32], d2: &mut [f32]) {
    for ((d, &cx), &cy) in d2.iter_mut().zip(x).zip(y) {
        let (dx, dy) = (cx - me.p.x, cy - me.p.y);
        *d = dx * dx + dy * dy;
    }
}

/// Lanes of one group of [`nearest`]'s counts (one 256-bit AVX2 vector of `u32`, two SSE ones;
/// measured 2 % faster than groups of 4 in both).
const LANES: usize = 8;
/// Up to this many lane groups (`LANES` candidates each) [`nearest`] counts the places of all
/// candidates at once; beyond, it ranks them one by one.
const RANK_GROUPS: usize = 4;
/// Up to this many candidates, [`nearest_exact`] ranks them all (no branch, O(n²)); beyond, it
/// inserts them one by one.
const RANK_LIMIT: usize = 48;

/// The `max` nearest of the candidates (packed indices `at`, in visiting order, at squared
/// distances `d2[..at.len()]`) into `out`, nearest first; of equal distances the one visited
/// first comes first, and at the cut the one visited first is kept (a stable sort, then the
/// first `max`). `d2` reaches at least [`LANES`] slots past the candidates (values unused).
///
/// Each candidate's place is the number of candidates strictly nearer, counted for all of
/// them at once: one vector compare and subtract per lane group and candidate, with no
/// horizontal sum and no branch. Places that are all different give the stable order; equal
/// distances (a place taken twice) go to [`nearest_exact`], which orders ties.
#[inline(always)]
fn nearest(d2: &[f32], at: &[usize], max: usize, out: &mut Vec<(f32, usize)>) {
    let n = at.len();
    if max == 0 {
        out.clear();
        return;
    }
    if n > LANES * RANK_GROUPS {
        return nearest_exact(&d2[..n], at, max, out);
    }
    let groups = n.div_ceil(LANES);
    debug_assert!(d2.len() >= groups * LANES, "the caller pads `d2` by a lane group");
    let mut nearer = [[0u32; LANES]; RANK_GROUPS];
    for &dj in &d2[..n] {
        for (count, lane) in nearer[..groups].iter_mut().zip(d2.chunks_exact(LANES)) {
            for l in 0..LANES {
                count[l] += u32::from(dj < lane[l]);
            }
        }
    }
    let keep = max.min(n);
    out.clear();
    out.resize(keep + 1, (0.0, 0));
    // Bit p set: place p taken (places are below 32).
    let mut taken = 0u32;
    for i in 0..n {
        let place = nearer[i / LANES][i % LANES] as usize;
        taken |= 1 << place;
        out[place.min(keep)] = (d2[i], at[i]);
    }
    if taken.count_ones() as usize != n {
        return nearest_exact(&d2[..n], at, max, out);
    }
    out.truncate(keep);
}

/// [`nearest`] for any number of candidates, ties included: `d2` holds exactly the candidates'
/// distances.
fn nearest_exact(d2: &[f32], at: &[usize], max: usize, out: &mut Vec<(f32, usize)>) {
    let n = d2.len();
    out.clear();
    if n <= RANK_LIMIT {
        // Each candidate's place in the stable order: how many come before it. The count is
        // an integer sum over the list, which the compiler vectorises; places past `max` go to
        // a spare last slot.
        out.resize(max.min(n) + 1, (0.0, 0));
        for i in 0..n {
            let di = d2[i];
            // 32-bit counts: four to a 128-bit vector rather than two.
            let before_i = d2[..i].iter().map(|&dj| u32::from(dj <= di)).sum::<u32>();
            let after_i = d2[i + 1..].iter().map(|&dj| u32::from(dj < di)).sum::<u32>();
            let place = ((before_i + after_i) as usize).min(max.min(n));
            out[place] = (di, at[i]);
        }
        out.truncate(max.min(n));
        return;
    }
    let mut range_sq = f32::INFINITY;
    for (&d, &j) in d2.iter().zip(at) {
        if d >= range_sq {
            continue;
        }
        if out.len() == max {
            out.pop();
        }
        out.push((d, j));
        let mut k = out.len() - 1;
        while k > 0 && out[k - 1].0 > d {
            out[k] = out[k - 1];
            k -= 1;
        }
        out[k] = (d, j);
        if out.len() == max {
            range_sq = out[max - 1].0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vec2::V2;

    /// A frame of `n` agents scattered over a 20 m square (two groups), and its grid.
    fn frame(n: usize, bin: f32) -> (PackedAgents, NeighborGrid) {
        let xs: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 50.0).collect();
        let ys: Vec<f32> = (0..n).map(|i| ((i * 104729) % 1000) as f32 / 50.0).collect();
        let mut g = NeighborGrid::new(20.0, 20.0, bin);
        g.rebuild(&xs, &ys);
        let agents: Vec<PackedAgent> = g
            .sorted
            .iter()
            .map(|&i| {
                let i = i as usize;
                PackedAgent {
                    p: V2::new(xs[i], ys[i]),
                    v: V2::new((i % 7) as f32 * 0.2 - 0.6, (i % 5) as f32 * 0.3 - 0.6),
                    group: (i % 2) as u32,
                    agent: i as u32,
                    ..Default::default()
                }
            })
            .collect();
        (PackedAgents::of(agents), g)
    }

    /// The scalar scan the vectorised one replaces: visiting order, sums neighbour by
    /// neighbour, insertion as it goes.
    fn reference(
        frame: &PackedAgents,
        grid: &NeighborGrid,
        k: usize,
        b: &BoidsF32,
        dist: f32,
        max: usize,
    ) -> (boids::Accum, Vec<(f32, usize)>) {
        let me = &frame.agents[k];
        let mut acc = boids::Accum::default();
        let mut within = Vec::new();
        super::super::for_each_near(grid, me.p, |j| {
            if j == k {
                return;
            }
            let o = &frame.agents[j];
            let d2 = (o.p - me.p).len_sq();
            acc.add(b, me, o, d2);
            if d2 < dist * dist {
                within.push((d2, j));
            }
        });
        // Stable sort: ties keep visiting order.
        within.sort_by(|a, b| a.0.total_cmp(&b.0));
        within.truncate(max);
        (acc, within)
    }

    #[test]
    fn gives_the_scalar_scans_neighbours_and_sums_bit_for_bit() {
        let b = BoidsF32::from(&crate::params::BoidsParams::default());
        // `dist` at the boids reach (3 m: sums over the short list) and below it (sums over
        // every candidate).
        for (n, bin, max, dist) in [
            (500, 3.0, 10, 3.0),
            (2000, 3.0, 10, 3.0),
            (2000, 3.0, 10, 2.5),
            (2000, 1.5, 4, 3.0),
            (300, 3.0, 0, 3.0),
            (12000, 3.0, 10, 3.0),
        ] {
            let (f, g) = frame(n, bin);
            let mut s = Scratch::default();
            for k in 0..n {
                let acc = scan(&f, &g, k, Some(&b), dist, max, &mut s);
                let (want, near) = reference(&f, &g, k, &b, dist, max);
                assert_eq!(
                    s.near, near,
                    "agent {k} of {n}: the same neighbours in the same order"
                );
                let me = &f.agents[k];
                assert_eq!(acc.counts(), want.counts(), "agent {k}: rule counts");
                assert_eq!(
                    acc.steer(&b, me),
                    want.steer(&b, me),
                    "agent {k} of {n}: the same steering bit for bit"
                );
                let none = scan(&f, &g, k, None, dist, max, &mut s);
                assert_eq!(s.near, near, "agent {k}: without boids, the same neighbours");
                assert_eq!(none.counts(), (0, 0, 0));
            }
        }
    }

    #[test]
    fn the_group_scan_gives_each_agent_its_own_scan_bit_for_bit() {
        let b = BoidsF32::from(&crate::params::BoidsParams::default());
        // Lanes with and without boids, different reaches and counts, side by side.
        let settings = |k: usize| GroupAgent {
            boids: (k % 3 != 2).then_some(b),
            dist: [3.0, 2.5, 1.0][k % 3],
            max: [10, 4, 0, 10][k % 4],
        };
        let mut s = GroupScratch::default();
        let mut one = Scratch::default();
        let mut groups = 0;
        for (n, bin) in [(500, 3.0), (2000, 3.0), (12000, 3.0), (2000, 1.5)] {
            let (f, g) = frame(n, bin);
            let bin_of = |k: usize| g.bin_xy(f.agents[k].p.x, f.agents[k].p.y);
            let mut k = 0;
            while k < n {
                // Groups cut at varying sizes, as a chunk's end cuts them.
                let cap = 1 + k % GROUP_LANES;
                let mut end = k + 1;
                while end < n && end - k < cap && bin_of(end) == bin_of(k) {
                    end += 1;
                }
                let lanes: Vec<GroupAgent> = (k..end).map(settings).collect();
                let sums = scan_group(&f, &g, k, &lanes, &mut s);
                for (l, a) in lanes.iter().enumerate() {
                    let want = scan(&f, &g, k + l, a.boids.as_ref(), a.dist, a.max, &mut one);
                    assert_eq!(s.near[l], one.near, "agent {}: the same neighbours", k + l);
                    assert_eq!(sums[l].counts(), want.counts(), "agent {}: rule counts", k + l);
                    let me = &f.agents[k + l];
                    let bits = |v: V2| (v.x.to_bits(), v.y.to_bits());
                    assert_eq!(
                        bits(sums[l].steer(&b, me)),
                        bits(want.steer(&b, me)),
                        "agent {}: the same steering",
                        k + l
                    );
                    assert_eq!(
                        format!("{:?}", sums[l]),
                        format!("{want:?}"),
                        "agent {}: the same sums",
                        k + l
                    );
                }
                groups += usize::from(end - k > 1);
                k = end;
            }
        }
        assert!(groups > 1000, "groups of several agents: {groups}");
    }

    #[test]
    fn nearest_is_a_stable_sort_cut_at_max_ties_and_long_lists_included() {
        let mut rnd = crate::test_rng::below(0x9E37_79B9_7F4A_7C15);
        let mut out = Vec::new();
        // Lengths up to past the counted groups (`LANES * RANK_GROUPS`) and past `RANK_LIMIT`;
        // distances from few values (many ties) or many.
        for n in 0..60 {
            for levels in [3, 1000] {
                for max in [0, 1, 4, 10, 64] {
                    let mut d2: Vec<f32> = (0..n).map(|_| rnd(levels) as f32 * 0.25).collect();
                    let at: Vec<usize> = (0..n).map(|i| 100 + i).collect();
                    let mut want: Vec<(f32, usize)> = d2.iter().copied().zip(at.clone()).collect();
                    want.sort_by(|a, b| a.0.total_cmp(&b.0));
                    want.truncate(max);
                    // The slots past the candidates hold anything.
                    d2.extend([-1.0, 7.0, f32::NAN, 0.0, 1e30, -0.0, 0.25, 3.0][..LANES].iter());
                    nearest(&d2, &at, max, &mut out);
                    assert_eq!(out, want, "{n} candidates, {levels} levels, max {max}");
                }
            }
        }
    }

    #[test]
    fn a_lone_agent_has_no_neighbours() {
        let (f, g) = frame(1, 3.0);
        let mut s = Scratch::default();
        let b = BoidsF32::from(&crate::params::BoidsParams::default());
        let acc = scan(&f, &g, 0, Some(&b), 3.0, 10, &mut s);
        assert!(s.near.is_empty());
        assert_eq!(acc.counts(), (0, 0, 0));
    }
}
