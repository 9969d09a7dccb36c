//! The ORCA pass of the local layer: for every packed agent, its neighbour scan (with the
//! boids sums in the boids+ORCA mode), its ORCA lines and the 2-D program that gives its new
//! velocity, in chunks of [`ORCA_CHUNK`] slots (the programs of 8 agents side by side in
//! vector lanes, [`super::orca_lanes`]). Every velocity equals the one-agent scalar path's
//! bit for bit.

use super::boids::{self, BoidsF32};
use super::orca::{self, Line, Share};
use super::run::{for_each_block, for_each_slot};
use super::{Groups, MovingObstacle, ORCA_CLEARANCE, PackedAgents, orca_lanes, scan};
use crate::collision::WallMap;
use crate::neighbors::NeighborGrid;
use crate::vec2::V2;

/// Working memory of one ORCA worker.
#[derive(Default)]
pub(super) struct OrcaScratch {
    /// The lines of the agents of a chunk, one after the other.
    lines: Vec<Line>,
    /// The lines of a block of agents as columns, what the programs read.
    columns: orca_lanes::LaneLines,
    lp: Vec<Line>,
    scan: scan::GroupScratch,
    /// The boids sums of the agents of a chunk.
    sums: Vec<boids::Accum>,
    /// Their boids parameters (`None` without boids).
    boids: Vec<Option<BoidsF32>>,
    /// Where each agent's lines start in `lines` (and where the last one's end).
    starts: Vec<usize>,
    /// How many of each agent's lines are obstacles' (hard).
    obstacle_lines: Vec<usize>,
    /// The velocity each agent's program aims for.
    wanted: Vec<V2>,
    /// Each agent's maximum speed.
    max_speed: Vec<f32>,
}

/// Slots per task of the ORCA pass ([`orca_chunk`]).
pub(super) const ORCA_CHUNK: usize = 64;

/// ORCA for the chunk of packed agents `k0..k0 + out.len()` (at most [`ORCA_CHUNK`]),
/// `preferred` their preferred velocities: the agents of each bin scanned side by side
/// ([`scan::scan_group`]), each agent's lines ([`push_agent_lines`]) and the velocity it aims
/// for ([`orca_agent_wanted`]), then the 2-D programs of [`orca_lanes::AGENT_LANES`] agents at
/// a time ([`orca_lanes::solve_lanes`]). Every velocity is the same bit for bit as the scalar
/// scan and [`orca::solve`] give agent by agent.
///
/// On x86-64 CPUs with AVX2 (detected at run time) the same code runs compiled for AVX2:
/// wider vectors, the same operations (no fused multiply-add), the same results bit for bit.
pub(super) fn orca_chunk(
    world: &OrcaWorld,
    k0: usize,
    preferred: &[V2],
    out: &mut [(V2, bool)],
    s: &mut OrcaScratch,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        /// [`orca_chunk_body`] compiled for AVX2.
        #[target_feature(enable = "avx2")]
        fn orca_chunk_avx2(
            world: &OrcaWorld,
            k0: usize,
            preferred: &[V2],
            out: &mut [(V2, bool)],
            s: &mut OrcaScratch,
        ) {
            orca_chunk_body(world, k0, preferred, out, s)
        }
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { orca_chunk_avx2(world, k0, preferred, out, s) };
    }
    orca_chunk_body(world, k0, preferred, out, s)
}

/// What the ORCA pass reads, the same for every agent of a step.
#[derive(Clone, Copy)]
pub(super) struct OrcaWorld<'a> {
    /// The packed agents at the start of the step.
    pub(super) frame: &'a PackedAgents,
    /// Their bins.
    pub(super) grid: &'a NeighborGrid,
    /// The walls (border and obstacle cells).
    pub(super) walls: &'a WallMap,
    /// Obstacles that move and do not avoid.
    pub(super) movers: &'a [MovingObstacle],
    /// Per-group settings.
    pub(super) groups: &'a Groups,
    /// Whether the boids offset is added to the preferred velocity.
    pub(super) with_boids: bool,
    /// Time step, s.
    pub(super) dt: f32,
}

/// [`orca_chunk`]'s work, inlined (with the scans, the lines and the programs) into each
/// compilation of it.
#[inline(always)]
pub(super) fn orca_chunk_body(
    world: &OrcaWorld,
    k0: usize,
    preferred: &[V2],
    out: &mut [(V2, bool)],
    s: &mut OrcaScratch,
) {
    const C: usize = ORCA_CHUNK;
    const G: usize = scan::GROUP_LANES;
    const B: usize = orca_lanes::AGENT_LANES;
    let n = out.len();
    assert!(n <= C && preferred.len() == n && k0 + n <= world.frame.agents.len());
    let OrcaWorld {
        frame,
        grid,
        groups,
        with_boids,
        ..
    } = *world;
    let agents = &frame.agents[k0..k0 + n];
    s.lines.clear();
    // Per-agent values of the chunk, in the scratch (not zeroed per chunk).
    s.sums.resize(C, boids::Accum::default());
    s.boids.resize(C, None);
    s.starts.resize(C + 1, 0);
    s.obstacle_lines.resize(C, 0);
    s.wanted.resize(C, V2::ZERO);
    s.max_speed.resize(C, 0.0);
    // The agents of one bin (consecutive in the packed order), up to `G` at a time.
    let mut k = 0;
    while k < n {
        let bin = grid.bin_xy(agents[k].p.x, agents[k].p.y);
        let mut end = k + 1;
        while end < n && end - k < G && grid.bin_xy(agents[end].p.x, agents[end].p.y) == bin {
            end += 1;
        }
        let mut lanes = [scan::GroupAgent::default(); G];
        for (lane, me) in lanes.iter_mut().zip(&agents[k..end]) {
            let cfg = groups.get(me.group);
            *lane = scan::GroupAgent {
                boids: if with_boids { cfg.boids } else { None },
                dist: cfg.neighbor_dist,
                max: cfg.max_neighbors,
            };
        }
        if with_boids {
            let sums = scan::scan_group(frame, grid, k0 + k, &lanes[..end - k], &mut s.scan);
            for (l, i) in (k..end).enumerate() {
                (s.sums[i], s.boids[i]) = (sums[l], lanes[l].boids);
                s.starts[i] = s.lines.len();
                s.obstacle_lines[i] = push_agent_lines(world, k0 + i, &s.scan.near[l], &mut s.lines);
            }
        } else {
            // Without boids sums, one agent at a time: the group scan's lanes pay off only
            // with the sums (measured: ORCA alone 148 ms a step this way, 168 grouped).
            for (l, i) in (k..end).enumerate() {
                let one = &mut s.scan.one;
                scan::scan(frame, grid, k0 + i, None, lanes[l].dist, lanes[l].max, one);
                s.starts[i] = s.lines.len();
                s.obstacle_lines[i] = push_agent_lines(world, k0 + i, &one.near, &mut s.lines);
            }
        }
        k = end;
    }
    // The velocities the programs aim for, every agent of the chunk side by side (without
    // boids, the preferred velocity clamped: what `orca_agent_wanted` gives then).
    for i in 0..n {
        let me = &agents[i];
        s.max_speed[i] = me.max_speed;
        s.wanted[i] = if with_boids {
            orca_agent_wanted(
                preferred[i],
                &s.sums[i],
                s.boids[i].as_ref(),
                me.p,
                me.v,
                me.max_speed,
            )
        } else {
            preferred[i].clamp_len_select(me.max_speed)
        };
    }
    s.starts[n] = s.lines.len();
    for b0 in (0..n).step_by(B) {
        let m = B.min(n - b0);
        let lines: [&[Line]; B] = std::array::from_fn(|l| {
            if l < m {
                &s.lines[s.starts[b0 + l]..s.starts[b0 + l + 1]]
            } else {
                &[][..]
            }
        });
        let mut solutions = [orca::Solution {
            velocity: V2::ZERO,
            infeasible: false,
        }; B];
        orca_lanes::solve_lanes(
            &lines[..m],
            &s.obstacle_lines[b0..b0 + m],
            &s.max_speed[b0..b0 + m],
            &s.wanted[b0..b0 + m],
            &mut s.columns,
            &mut s.lp,
            &mut solutions[..m],
        );
        for (o, sol) in out[b0..b0 + m].iter_mut().zip(&solutions) {
            *o = (sol.velocity, sol.infeasible);
        }
    }
}

/// The velocity agent `me` (at `me_p`, moving at `me_v`) aims for: its `preferred` velocity
/// plus, with `boids`, the offset of its boids sums `sums` clamped to `a_max`, the whole
/// clamped to `max_speed`. Without branches (the same bits as with them), so that the agents
/// of a block overlap their square roots and divisions.
#[inline(always)]
pub(super) fn orca_agent_wanted(
    preferred: V2,
    sums: &boids::Accum,
    boids: Option<&BoidsF32>,
    me_p: V2,
    me_v: V2,
    max_speed: f32,
) -> V2 {
    // Any parameters do for an agent without boids: its offset is computed and dropped.
    let p = boids.unwrap_or(&BoidsF32::NONE);
    let offset = sums.steer_select(p, me_p, me_v).clamp_len_select(p.a_max);
    let v = if boids.is_some() {
        preferred + offset
    } else {
        preferred
    };
    v.clamp_len_select(max_speed)
}

/// The scalar scan of packed agent `k` and its lines into `lines` (cleared first): what
/// [`orca_chunk`] gives that agent, one agent at a time (the tests' reference). Returns the
/// boids sums, the agent's boids parameters (`None` without boids) and how many of the lines
/// are obstacles' (hard).
#[cfg(test)]
pub(super) fn orca_agent_lines(
    world: &OrcaWorld,
    k: usize,
    scan_scratch: &mut scan::Scratch,
    lines: &mut Vec<Line>,
) -> (boids::Accum, Option<BoidsF32>, usize) {
    let me = &world.frame.agents[k];
    let cfg = world.groups.get(me.group);
    let boids = if world.with_boids { cfg.boids } else { None };
    let acc = scan::scan(
        world.frame,
        world.grid,
        k,
        boids.as_ref(),
        cfg.neighbor_dist,
        cfg.max_neighbors,
        scan_scratch,
    );
    lines.clear();
    let n_obst = push_agent_lines(world, k, &scan_scratch.near, lines);
    (acc, boids, n_obst)
}

/// Appends ORCA's constraints for packed agent `k` to `lines`: obstacle lines (border,
/// obstacle cells), then one-sided lines for moving obstacles, then reciprocal lines for its
/// nearest neighbours `near` (`(distance², packed index)`, nearest first: the scan's
/// `max_neighbors` nearest within `neighbor_dist`). Returns how many of the lines are
/// obstacles' (hard).
#[inline(always)]
pub(super) fn push_agent_lines(
    world: &OrcaWorld,
    k: usize,
    near: &[(f32, usize)],
    lines: &mut Vec<Line>,
) -> usize {
    let OrcaWorld {
        frame,
        walls,
        movers,
        groups,
        dt,
        ..
    } = *world;
    let me = &frame.agents[k];
    let cfg = groups.get(me.group);
    let n_obst = walls.push_lines(
        me.p,
        me.v,
        me.radius,
        me.max_speed,
        cfg.obstacle_time_horizon,
        dt,
        lines,
    );
    for m in movers {
        let mp = V2::new(m.pos[0], m.pos[1]);
        let reach = cfg.neighbor_dist + m.radius;
        if (mp - me.p).len_sq() < reach * reach {
            lines.push(orca::agent_line(
                me.p,
                me.v,
                me.radius,
                mp,
                V2::new(m.vel[0], m.vel[1]),
                m.radius,
                cfg.time_horizon,
                dt,
                Share::ONE_SIDED,
            ));
        }
    }
    // The neighbours from the columns the scan has just read (in cache), a vector of lanes at
    // a time (`orca::agent_lines`: `agent_line`'s results, without its branches).
    let cols = &frame.columns;
    for near in near.chunks(orca::LINE_LANES) {
        let mut others = orca::Others::default();
        for (l, &(_, j)) in near.iter().enumerate() {
            others.x[l] = cols.x[j];
            others.y[l] = cols.y[j];
            others.vx[l] = cols.vx[j];
            others.vy[l] = cols.vy[j];
            others.radius[l] = cols.radius[j] + 0.5 * ORCA_CLEARANCE;
        }
        orca::agent_lines(
            me.p,
            me.v,
            me.radius + 0.5 * ORCA_CLEARANCE,
            &others,
            near.len(),
            cfg.time_horizon,
            dt,
            Share::RECIPROCAL,
            lines,
        );
    }
    n_obst
}

impl super::LocalLayer {
    /// Pass 3: each slot's new velocity and whether its program was infeasible, into
    /// `self.velocity`: ORCA in the ORCA modes ([`orca_chunk`], chunks of [`ORCA_CHUNK`]
    /// slots), else the preferred velocity.
    pub(super) fn velocity_pass(&mut self, groups: &Groups, dt: f32) {
        let mode = self.mode;
        let (frame, grid) = (&self.frame, &self.grid);
        let n = frame.agents.len();
        let pref = &self.preferred;
        self.velocity.resize(n, (V2::ZERO, false));
        if mode.orca() {
            let world = OrcaWorld {
                frame,
                grid,
                walls: &self.walls,
                movers: &self.moving_obstacles,
                groups,
                with_boids: mode.boids(),
                dt,
            };
            for_each_block::<ORCA_CHUNK, _, _>(
                self.backend,
                &mut self.velocity,
                OrcaScratch::default,
                |s, k0, out| orca_chunk(&world, k0, &pref[k0..k0 + out.len()], out, s),
            );
        } else {
            for_each_slot(self.backend, &mut self.velocity, || (), |_, k| (pref[k], false));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;
    use crate::local::*;

    #[test]
    fn nearest_neighbours_are_sorted_and_capped() {
        let xs: Vec<f32> = (0..30).map(|i| 5.0 + (i % 6) as f32 * 0.4).collect();
        let ys: Vec<f32> = (0..30).map(|i| 5.0 + (i / 6) as f32 * 0.4).collect();
        let mut g = NeighborGrid::new(20.0, 20.0, 3.0);
        g.rebuild(&xs, &ys);
        let frame = PackedAgents::of(
            g.sorted
                .iter()
                .map(|&i| PackedAgent {
                    p: V2::new(xs[i as usize], ys[i as usize]),
                    agent: i,
                    ..Default::default()
                })
                .collect(),
        );
        let mut s = scan::Scratch::default();
        scan::scan(&frame, &g, 7, None, 3.0, 10, &mut s);
        let out = s.near;
        assert_eq!(out.len(), 10);
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0));
        // Brute force: the 10th distance is the 10th smallest.
        let p = frame.agents[7].p;
        let mut all: Vec<f32> = (0..30)
            .filter(|&j| j != 7)
            .map(|j| (frame.agents[j].p - p).len_sq())
            .collect();
        all.sort_by(f32::total_cmp);
        assert!((out[9].0 - all[9]).abs() < 1e-6);
    }

    #[test]
    fn the_avx2_compilation_gives_the_baseline_results_bit_for_bit() {
        // A dense crowd (infeasible programs included) against the border walls, boids on.
        let mut scene = Scene::empty("t", Grid::new(20, 20, 1.0));
        // The scaling benchmark's group: default boids and ORCA parameters.
        scene.groups = workload::open_crowd(1, 1.0).0.groups;
        let mut a = Agents::default();
        let mut preferred = Vec::new();
        for i in 0..700u32 {
            let (x, y) = ((i * 7919 % 997) as f32 / 997.0, (i * 104729 % 991) as f32 / 991.0);
            a.push(i, 0.3 + 19.4 * x, 0.3 + 19.4 * y, 0, 0.25, 1.5);
            let t = i as f32 * 2.4;
            preferred.push([1.2 * t.cos(), 1.2 * t.sin()]);
        }
        let mut l = LocalLayer::new(LocalMode::BoidsOrca, LocalBackend::CpuSingle).unwrap();
        for _ in 0..3 {
            l.step(&scene, &mut a, &preferred, 0.1).unwrap();
        }
        let groups = Groups::of(&scene, false);
        let (mut dispatched, mut baseline) = (OrcaScratch::default(), OrcaScratch::default());
        let (mut scan_scratch, mut lines, mut lp) = (scan::Scratch::default(), Vec::new(), Vec::new());
        let mut infeasible = 0;
        let bits = |v: (V2, bool)| (v.0.x.to_bits(), v.0.y.to_bits(), v.1);
        // With boids (the agents of a bin scanned together) and without (one at a time).
        for with_boids in [true, false] {
            let world = OrcaWorld {
                frame: &l.frame,
                grid: &l.grid,
                walls: &l.walls,
                movers: &l.moving_obstacles,
                groups: &groups,
                with_boids,
                dt: 0.1,
            };
            // Chunks of many lengths (the last one of a pass is short; groups and blocks of
            // lanes cut at a chunk's end).
            let mut k0 = 0;
            for len in [1, 2, 7, 8, 9, 31, ORCA_CHUNK].into_iter().cycle() {
                if k0 >= a.len() {
                    break;
                }
                let len = len.min(a.len() - k0);
                let pref = &l.preferred[k0..k0 + len];
                let (mut one, mut two) = (vec![(V2::ZERO, false); len], vec![(V2::ZERO, false); len]);
                orca_chunk(&world, k0, pref, &mut one, &mut dispatched);
                orca_chunk_body(&world, k0, pref, &mut two, &mut baseline);
                for i in 0..len {
                    // The reference: the agent alone, the scalar scan, its program solved by
                    // `orca::solve`.
                    let me = &l.frame.agents[k0 + i];
                    let (sums, boids, n_obst) =
                        orca_agent_lines(&world, k0 + i, &mut scan_scratch, &mut lines);
                    assert_eq!(boids.is_some(), with_boids);
                    let wanted = match boids {
                        Some(b) => (pref[i] + sums.steer(&b, me).clamp_len(b.a_max)).clamp_len(me.max_speed),
                        None => pref[i].clamp_len(me.max_speed),
                    };
                    let alone = orca::solve(&lines, n_obst, me.max_speed, wanted, &mut lp);
                    let alone = (alone.velocity, alone.infeasible);
                    assert_eq!(bits(one[i]), bits(two[i]), "agent {}", k0 + i);
                    assert_eq!(bits(one[i]), bits(alone), "agent {}: chunk against alone", k0 + i);
                    infeasible += usize::from(alone.1);
                }
                k0 += len;
            }
        }
        assert!(infeasible > 0, "the fallback ran too");
        #[cfg(target_arch = "x86_64")]
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("no AVX2 on this CPU: both sides ran the baseline compilation");
        }
    }
}
