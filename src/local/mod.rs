//! The local layer (SPEC §5): boids offsets and ORCA collision avoidance over the bin-sorted
//! neighbour grid, then the move step that keeps every agent inside the domain and out of
//! obstacle cells.
//!
//! One step of [`LocalLayer::step`] is a list of passes, each a pure per-agent function of the
//! previous state (so a GPU backend can run the same passes as shaders):
//! 1. `bins`: rebuild the [`NeighborGrid`] on the current positions and pack the agents in bin
//!    order ([`Frame`]: neighbours of a bin are contiguous in memory);
//! 2. `preferred`: the caller's preferred velocity (the continuum field's), plus the boids
//!    offset in the boids modes (seed 002), clamped to the agent's maximum speed;
//! 3. `velocity`: ORCA in the ORCA modes, else the preferred velocity (in boids+ORCA the boids
//!    sums of pass 2 are taken during ORCA's neighbour scan: one scan, same result);
//! 4. `move`: integrate positions, stopping at walls ([`obstacles::WallMap::move_agent`]);
//! 5. `contact` (ORCA modes): agents without ORCA's guarantee (an infeasible program, or a
//!    move a wall changed) step out of the bodies they overlap after the move ([`contact`]).
//!
//! **Determinism.** Every pass reads only the previous state and writes one slot per agent;
//! neighbours are visited in a fixed order (bins row-major, ids ascending) and the backends only
//! change who computes which slot, so CPU single and CPU multi give bit-identical results for
//! any thread count. Counters are integer sums.
//!
//! ## Wiring into the simulation
//! ```
//! use crowdfield::agents::Agents;
//! use crowdfield::local::{quality, LocalBackend, LocalLayer, LocalMode};
//! let scene = crowdfield::map::load(std::path::Path::new("maps/corridor.json"))?;
//! let mut agents = Agents::default();
//! agents.push(0, 10.0, 2.0, 0, 0.25, 1.3); // id, x, y, group, radius, max speed
//! agents.push(1, 11.0, 2.0, 0, 0.25, 1.3);
//! let mut local = LocalLayer::new(LocalMode::BoidsOrca, LocalBackend::CpuMulti)?; // once
//! let mut jams = quality::JamTracker::default();
//! let mut collisions = quality::CollisionCounter::default();
//! // Each step, after the continuum velocity v_field[i] of every agent is known (here two
//! // walkers heading for each other):
//! let v_field = vec![[1.2f32, 0.0], [-1.2, 0.0]];
//! let stats = local.step(&scene, &mut agents, &v_field, 0.1)?; // moves agents, sets velocities
//! assert_eq!(stats.agents, 2);
//! assert_eq!(collisions.count(&agents).pairs, 0); // quality figures
//! jams.update(&agents, &v_field, 0.1);
//! # Ok::<(), crowdfield::error::Error>(())
//! ```
//! With [`LocalMode::None`] the step just clamps `v_field` to each agent's `max_speed` and moves
//! the agents with the same wall handling, so the simulation can always call it.

pub mod boids;
pub mod contact;
pub mod obstacles;
pub mod orca;
mod orca_lanes;
pub mod quality;
pub mod scan;
pub mod workload;

use crate::agents::Agents;
use crate::error::{Error, Result};
use crate::neighbors::NeighborGrid;
use crate::params::{BoidsParams, OrcaParams};
use crate::scene::Scene;
use boids::BoidsF32;
use obstacles::WallMap;
use orca::{Line, Share, V2};
use rayon::prelude::*;
use std::time::Instant;

/// Bins are never smaller than this (m): below it the bin array would outgrow the agents
/// without making queries cheaper (walkers are 0.2–0.3 m in radius).
pub const MIN_BIN_SIZE: f32 = 0.5;

/// Weight (m/s²) of the wall probes in the standalone flock: above the sum of the default boids
/// weights (3.5), so a wall ahead always wins over the school's pull.
pub const K_WALL: f32 = 4.0;

/// How far ahead the flock's wall probes look, in seconds of travel at `v_max` (at least one
/// cell): two seconds leaves time to turn at `a_max`.
pub const PROBE_SECONDS: f32 = 2.0;

/// Gap (m) ORCA keeps between two agents' bodies, on top of the sum of their radii. ORCA only
/// guarantees no contact while every agent's linear program is feasible; in tight formations
/// (two crossing blocks at 1 person/m², a queue behind a stopped walker) the half-share lines of
/// a follower and of an oncoming agent contradict and the least-violation fallback lets bodies
/// overlap by about the violation times `dt` (up to 3 cm in the head-on scenario). This
/// personal-space margin absorbs those violations before bodies touch, and it keeps exact
/// boundary solutions (two walkers pressed together) from reading as round-off-level contacts.
/// 5 cm is 10–20 % of a walker's radius: the smallest value that kept the head-on scenario free
/// of contact (2 cm did not).
pub const ORCA_CLEARANCE: f32 = 0.05;

/// Largest preferred-velocity perturbation (m/s) in the ORCA modes. Perfectly symmetric crowds
/// (the antipodal circle) otherwise settle into a ring of agents pressed against each other,
/// each one's preferred velocity exactly cancelled: an ORCA deadlock. RVO2's examples add a
/// random perturbation of at most 1e-4 m/s each step for this; here it is a hash of the agent's
/// id and the step count (deterministic, the same on every backend), and 1e-3 m/s because f32
/// velocities near 1 m/s resolve only 1e-7 and the symmetry must break before the ring closes.
pub const PREFERRED_JITTER: f32 = 1e-3;

/// A deterministic pseudo-random vector of length at most `max` for agent `id` at step `step`
/// (SplitMix64 finaliser: a fixed function, so every backend adds the same one): uniform in
/// the square of half-side `max / sqrt 2`. (A uniform angle and length took a sine and a
/// cosine per agent, 5 ms of a 10⁶-agent step; the square breaks symmetries as well: the
/// scenario tests pass for every seed they run.)
fn perturbation(id: u32, step: u64, max: f32) -> V2 {
    let mut z = (u64::from(id) << 32 ^ step).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let unit = |bits: u64| (bits & 0xFF_FFFF) as f32 / (1u32 << 24) as f32;
    let half = max * std::f32::consts::FRAC_1_SQRT_2;
    V2::new((unit(z) * 2.0 - 1.0) * half, (unit(z >> 32) * 2.0 - 1.0) * half)
}

/// What the local layer does to the preferred velocities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LocalMode {
    /// Nothing: velocity = preferred velocity clamped to the agent's maximum speed.
    #[default]
    None,
    /// Preferred velocity plus the boids offset of the agent's group (groups without boids
    /// parameters get none).
    Boids,
    /// ORCA avoidance of the preferred velocity.
    Orca,
    /// Boids offset, then ORCA (seed 002).
    BoidsOrca,
}

impl LocalMode {
    /// Parses the `--local` values `none|boids|orca|boids+orca`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "none" => Ok(Self::None),
            "boids" => Ok(Self::Boids),
            "orca" => Ok(Self::Orca),
            "boids+orca" => Ok(Self::BoidsOrca),
            other => Err(Error::invalid(
                "<command line>",
                "--local",
                format!("'{other}' is not one of none, boids, orca, boids+orca"),
            )),
        }
    }

    fn boids(self) -> bool {
        matches!(self, Self::Boids | Self::BoidsOrca)
    }

    fn orca(self) -> bool {
        matches!(self, Self::Orca | Self::BoidsOrca)
    }
}

/// Where the per-agent passes run. All backends give the same results (the GPU within a
/// tolerance).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LocalBackend {
    /// One thread.
    CpuSingle,
    /// All rayon threads.
    #[default]
    CpuMulti,
    /// wgpu compute passes ([`crate::gpu::GpuLocal`]): the same passes as shaders, equal to
    /// the CPU's to f32 rounding; [`LocalLayer::new`] fails with [`Error::Gpu`] when no
    /// adapter opens.
    Gpu,
}

/// A moving obstacle that does not avoid back (a vehicle, a scripted walker): a disc every
/// agent avoids one-sidedly with ORCA. The layer never moves it; the caller updates it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MovingObstacle {
    /// Centre, m.
    pub pos: [f32; 2],
    /// Velocity, m/s.
    pub vel: [f32; 2],
    /// Radius, m.
    pub radius: f32,
}

/// What one step did, and where its time went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LocalStats {
    /// Agents stepped.
    pub agents: usize,
    /// Agents whose ORCA program was infeasible (the least-violation fallback was used).
    pub infeasible: usize,
    /// Agents stopped or deflected by a wall or the domain border in the move pass.
    pub wall_hits: usize,
    /// Agents the contact pass pushed out of another agent's body ([`contact`]).
    pub pushed: usize,
    /// Seconds in the bins pass (grid rebuild and packing).
    pub seconds_bins: f64,
    /// Seconds computing velocities (boids and ORCA).
    pub seconds_velocity: f64,
    /// Seconds in the move pass (and the contact pass).
    pub seconds_move: f64,
}

/// One agent in bin order, as the per-agent passes read it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PackedAgent {
    /// Position, m.
    pub p: V2,
    /// Velocity at the start of the step, m/s.
    pub v: V2,
    /// Body radius, m.
    pub radius: f32,
    /// Maximum speed, m/s.
    pub max_speed: f32,
    /// Group index.
    pub group: u32,
    /// Index in [`Agents`].
    pub agent: u32,
}

/// The previous state of all agents packed in the grid's bin order (`agents[k]` is agent
/// `grid.sorted[k]`), so the agents of a bin are contiguous; also as columns for the
/// vectorised neighbour scan ([`scan`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// Packed agents.
    pub agents: Vec<PackedAgent>,
    /// The same agents as columns, what ORCA's neighbour scan reads. The layer fills them in
    /// the ORCA modes only (the boids sums alone read `agents`); [`Frame::of`] always does.
    pub columns: scan::Columns,
}

impl Frame {
    /// A frame of `agents` (already in bin order) with its columns.
    pub fn of(agents: Vec<PackedAgent>) -> Self {
        let columns = scan::Columns::of(&agents);
        Self { agents, columns }
    }
}

/// Calls `visit(k)` for the packed index `k` of every agent in the 3x3 bins around `p`, in the
/// same order as [`NeighborGrid::for_each_near`] (the scalar scan the tests compare
/// [`scan::scan`] with).
#[cfg(test)]
pub(crate) fn for_each_near(grid: &NeighborGrid, p: V2, mut visit: impl FnMut(usize)) {
    let b = grid.bin_of(p.x, p.y);
    let (bx, by) = (b % grid.bins_x, b / grid.bins_x);
    let (x0, x1) = (bx.saturating_sub(1), (bx + 1).min(grid.bins_x - 1));
    for ny in by.saturating_sub(1)..=(by + 1).min(grid.bins_y - 1) {
        let row = (ny * grid.bins_x) as usize;
        // Bins x0..=x1 of one row are contiguous in the packed order.
        let start = grid.bin_start[row + x0 as usize] as usize;
        let end = grid.bin_start[row + x1 as usize + 1] as usize;
        for k in start..end {
            visit(k);
        }
    }
}

/// Writes `f(i)` to `out[slot_of[i]]` for every agent `i` (`slot_of` a permutation of
/// `out`'s indices): the agents' own columns are read front to back and each agent costs one
/// write, where a gather in packed order misses the cache once per column. On
/// [`LocalBackend::CpuMulti`] each thread owns a contiguous part of `out` and writes the agents
/// whose slots fall in it (every thread reads every `slot_of`, cheap next to the writes).
fn scatter_to_slots<T: Send>(
    backend: LocalBackend,
    slot_of: &[u32],
    out: &mut [T],
    f: impl Fn(usize) -> T + Sync + Send,
) {
    let fill = |start: usize, part: &mut [T]| {
        let end = start + part.len();
        for (i, &k) in slot_of.iter().enumerate() {
            let k = k as usize;
            if (start..end).contains(&k) {
                part[k - start] = f(i);
            }
        }
    };
    if backend == LocalBackend::CpuMulti {
        let part = out.len().div_ceil(rayon::current_num_threads()).max(1);
        out.par_chunks_mut(part)
            .enumerate()
            .for_each(|(c, chunk)| fill(c * part, chunk));
    } else {
        fill(0, out);
    }
}

/// Runs `f(scratch, k)` for every slot `k` of `out` on the chosen backend. `init` makes one
/// scratch value per worker; results never depend on which worker ran a slot.
fn for_each_slot<T: Send, S>(
    backend: LocalBackend,
    out: &mut [T],
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, usize) -> T + Sync + Send,
) {
    match backend {
        LocalBackend::CpuSingle | LocalBackend::Gpu => {
            let mut s = init();
            for (k, o) in out.iter_mut().enumerate() {
                *o = f(&mut s, k);
            }
        }
        LocalBackend::CpuMulti => {
            out.par_iter_mut()
                .enumerate()
                .for_each_init(init, |s, (k, o)| *o = f(s, k));
        }
    }
}

/// Runs `f(scratch, k0, block)` for every block of `B` slots of `out` (the last one shorter),
/// `k0` the block's first slot, on the chosen backend; as [`for_each_slot`], results never
/// depend on which worker ran a block.
fn for_each_block<const B: usize, T: Send, S>(
    backend: LocalBackend,
    out: &mut [T],
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, usize, &mut [T]) + Sync + Send,
) {
    match backend {
        LocalBackend::CpuSingle | LocalBackend::Gpu => {
            let mut s = init();
            for (b, block) in out.chunks_mut(B).enumerate() {
                f(&mut s, b * B, block);
            }
        }
        LocalBackend::CpuMulti => {
            out.par_chunks_mut(B)
                .enumerate()
                .for_each_init(init, |s, (b, block)| f(s, b * B, block));
        }
    }
}

/// Per-group settings as the kernels read them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupCfg {
    pub(crate) boids: Option<BoidsF32>,
    pub(crate) time_horizon: f32,
    pub(crate) obstacle_time_horizon: f32,
    pub(crate) neighbor_dist: f32,
    pub(crate) max_neighbors: usize,
}

impl GroupCfg {
    fn new(boids: Option<BoidsF32>, orca: &OrcaParams) -> Self {
        Self {
            boids,
            time_horizon: orca.time_horizon as f32,
            obstacle_time_horizon: orca.obstacle_time_horizon as f32,
            neighbor_dist: orca.neighbor_dist as f32,
            max_neighbors: orca.max_neighbors,
        }
    }
}

/// Per-group configurations of a scene; agents whose group index is past the scene's groups
/// use `fallback`.
pub(crate) struct Groups {
    pub(crate) cfg: Vec<GroupCfg>,
    pub(crate) fallback: GroupCfg,
}

impl Groups {
    fn of(scene: &Scene, default_boids: bool) -> Self {
        let defaults = BoidsParams::default();
        let pick = |b: Option<&BoidsParams>| match b {
            Some(b) => Some(BoidsF32::from(b)),
            None if default_boids => Some(BoidsF32::from(&defaults)),
            None => None,
        };
        Self {
            cfg: scene
                .groups
                .iter()
                .map(|g| GroupCfg::new(pick(g.boids.as_ref()), &g.orca))
                .collect(),
            fallback: GroupCfg::new(pick(None), &OrcaParams::default()),
        }
    }

    #[inline]
    fn get(&self, g: u32) -> &GroupCfg {
        self.cfg.get(g as usize).unwrap_or(&self.fallback)
    }

    /// Query reach of the bin grid: the largest neighbour distance any pass needs.
    fn reach(&self, boids: bool, orca: bool) -> f32 {
        let mut r: f32 = 0.0;
        for c in self.cfg.iter().chain(std::iter::once(&self.fallback)) {
            if orca {
                r = r.max(c.neighbor_dist);
            }
            if boids && let Some(b) = &c.boids {
                r = r.max(b.reach());
            }
        }
        r
    }
}

/// Working memory of one ORCA worker.
#[derive(Default)]
struct OrcaScratch {
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

/// One packed slot after the move pass (16 bytes: the write-back reads one per agent).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Moved {
    /// Position, m.
    p: V2,
    /// Velocity (the displacement over the step once the contact pass moved it), m/s.
    v: V2,
}

/// What the move pass counted and listed in one block of slots.
#[derive(Debug, Default)]
struct BlockTally {
    /// Infeasible ORCA programs.
    infeasible: usize,
    /// Wall hits.
    hits: usize,
    /// The slots without ORCA's guarantee.
    slots: Vec<u32>,
}

/// The local layer: owns the bin grid and buffers, reused across steps.
#[derive(Debug, Default)]
pub struct LocalLayer {
    mode: LocalMode,
    backend: LocalBackend,
    /// Non-reciprocating moving obstacles, avoided one-sidedly by every agent under ORCA.
    pub moving_obstacles: Vec<MovingObstacle>,
    grid: NeighborGrid,
    walls: WallMap,
    frame: Frame,
    preferred: Vec<V2>,
    velocity: Vec<(V2, bool)>,
    moved: Vec<Moved>,
    /// Per slot, whether the agent lacks ORCA's guarantee of no contact this step (an
    /// infeasible program, or a move the walls changed): the contact pass's agents.
    unguaranteed: Vec<bool>,
    /// The packed slot of each agent (the inverse of `grid.sorted`).
    slot_of: Vec<u32>,
    /// Steps taken (seeds the preferred-velocity perturbation).
    steps: u64,
    /// Seed of the preferred-velocity perturbation ([`LocalLayer::set_seed`]).
    seed: u64,
    /// The slots without ORCA's guarantee this step (the contact pass's agents).
    contact_slots: Vec<u32>,
    /// Their results after a sweep of the contact pass.
    contact_moves: Vec<Moved>,
    /// The slots a sweep of the contact pass works on.
    contact_active: Vec<u32>,
    /// Per bin, whether an agent in or next to it was pushed by the last sweep (all false
    /// between sweeps).
    contact_dirty: Vec<bool>,
    /// The move pass's counts and contact slots, per block of slots.
    move_blocks: Vec<BlockTally>,
    /// The GPU passes ([`LocalBackend::Gpu`] only).
    gpu: Option<Box<crate::gpu::GpuLocal>>,
}

impl LocalLayer {
    /// A layer doing `mode` on `backend`. [`LocalBackend::Gpu`] opens its own GPU context
    /// (see [`LocalLayer::with_gpu`] to share one) and fails with [`Error::Gpu`] when no
    /// adapter opens.
    pub fn new(mode: LocalMode, backend: LocalBackend) -> Result<Self> {
        if backend == LocalBackend::Gpu {
            return Self::with_gpu(mode, std::sync::Arc::new(crate::gpu::GpuContext::new()?));
        }
        Ok(Self {
            mode,
            backend,
            ..Default::default()
        })
    }

    /// A layer doing `mode` on the GPU of `ctx` ([`LocalBackend::Gpu`]).
    ///
    /// # Errors
    /// [`Error::Gpu`] when the local passes' pipelines fail to build.
    pub fn with_gpu(mode: LocalMode, ctx: std::sync::Arc<crate::gpu::GpuContext>) -> Result<Self> {
        Ok(Self {
            mode,
            backend: LocalBackend::Gpu,
            gpu: Some(Box::new(crate::gpu::GpuLocal::new(ctx)?)),
            ..Default::default()
        })
    }

    /// Which backend runs, for messages: `cpu-single`, `cpu-multi (N threads)` or
    /// `gpu on <adapter>`.
    pub fn backend_description(&self) -> String {
        match (&self.gpu, self.backend) {
            (Some(g), _) => format!("gpu on {}", g.context().adapter()),
            (None, LocalBackend::CpuMulti) => format!("cpu-multi ({} threads)", rayon::current_num_threads()),
            (None, _) => "cpu-single".to_string(),
        }
    }

    /// Seeds the perturbation of the preferred velocities that breaks symmetric deadlocks
    /// ([`PREFERRED_JITTER`]): runs of the same crowd with different seeds are the members of
    /// an ensemble (the outcome of a dense scene depends on such small differences); the same
    /// seed gives the same run, bit for bit, on every CPU backend. The default is 0.
    pub fn set_seed(&mut self, seed: u64) {
        self.seed = seed;
    }

    /// The seed of the perturbation ([`LocalLayer::set_seed`]).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// What the perturbation of this step hashes besides the agent's id: the step count, mixed
    /// with the seed (seed 0 leaves the step count as it is).
    fn jitter_key(&self) -> u64 {
        self.steps ^ self.seed.wrapping_mul(0xD1B5_4A32_D192_ED03)
    }

    /// The mode.
    pub fn mode(&self) -> LocalMode {
        self.mode
    }

    /// The backend.
    pub fn backend(&self) -> LocalBackend {
        self.backend
    }

    /// The bin grid of the last step (bins of the positions at the start of that step).
    pub fn grid(&self) -> &NeighborGrid {
        &self.grid
    }

    /// Pass 1: the wall map, the bin grid and the packed frame.
    /// The frame's columns are filled only `with_columns` (what ORCA's scan reads; the boids
    /// sums alone read the packed agents).
    fn bins(&mut self, scene: &Scene, agents: &Agents, reach: f32, with_columns: bool) {
        self.prepare_grid(scene, reach);
        self.grid.rebuild_with_slots(
            &agents.x,
            &agents.y,
            self.backend == LocalBackend::CpuMulti,
            &mut self.slot_of,
        );
        // Packed by a scatter in agent order (measured 29 -> about 12 ms for 10^6 agents against a
        // gather in packed order).
        self.frame.agents.resize(agents.len(), PackedAgent::default());
        scatter_to_slots(self.backend, &self.slot_of, &mut self.frame.agents, |i| {
            PackedAgent {
                p: V2::new(agents.x[i], agents.y[i]),
                v: V2::new(agents.vx[i], agents.vy[i]),
                radius: agents.radius[i],
                max_speed: agents.max_speed[i],
                group: agents.group[i],
                agent: i as u32,
            }
        });
        if with_columns {
            self.frame
                .columns
                .fill(&self.frame.agents, self.backend == LocalBackend::CpuMulti);
        }
    }

    /// The wall map and the bin grid's dimensions (bins of at least `reach`).
    fn prepare_grid(&mut self, scene: &Scene, reach: f32) {
        if !self.walls.matches(scene) {
            self.walls = WallMap::from_scene(scene);
        }
        let bin = reach.max(MIN_BIN_SIZE);
        let (w, h) = (scene.grid.width() as f32, scene.grid.height() as f32);
        let fresh = NeighborGrid::new(w, h, bin);
        if (fresh.bin_size, fresh.bins_x, fresh.bins_y)
            != (self.grid.bin_size, self.grid.bins_x, self.grid.bins_y)
        {
            self.grid = fresh;
        }
    }

    /// One step on the GPU passes (the flock when `preferred` is `None`).
    fn gpu_step(
        &mut self,
        scene: &Scene,
        agents: &mut Agents,
        preferred: Option<&[[f32; 2]]>,
        groups: &Groups,
        dt: f32,
    ) -> Result<LocalStats> {
        let mode = self.mode;
        let reach = match preferred {
            Some(_) => groups.reach(mode.boids(), mode.orca()),
            None => groups.reach(true, false),
        };
        self.prepare_grid(scene, reach);
        let code = match mode {
            LocalMode::None => crate::gpu::GPU_MODE_NONE,
            LocalMode::Boids => crate::gpu::GPU_MODE_BOIDS,
            LocalMode::Orca => crate::gpu::GPU_MODE_ORCA,
            LocalMode::BoidsOrca => crate::gpu::GPU_MODE_BOIDS_ORCA,
        };
        let input = crate::gpu::GpuLocalInput {
            preferred,
            dt,
            mode: code,
            groups: crate::gpu::GpuLocal::group_records(groups),
            walls: &self.walls,
            movers: &self.moving_obstacles,
            step: self.jitter_key(),
        };
        let gpu = self.gpu.as_mut().expect("a GPU layer holds its passes");
        let stats = gpu.step(agents, &mut self.grid, &input)?;
        if preferred.is_some() {
            self.steps += 1;
        }
        Ok(stats)
    }

    fn check(agents: &Agents, preferred: Option<&[[f32; 2]]>, dt: f32) -> Result<()> {
        let n = agents.len();
        let cols = [
            ("id", agents.id.len()),
            ("y", agents.y.len()),
            ("vx", agents.vx.len()),
            ("vy", agents.vy.len()),
            ("group", agents.group.len()),
            ("radius", agents.radius.len()),
            ("max_speed", agents.max_speed.len()),
        ];
        for (name, len) in cols {
            if len != n {
                return Err(Error::invalid(
                    "<agents>",
                    name,
                    format!("{len} entries, expected {n} (one per agent)"),
                ));
            }
        }
        if let Some(p) = preferred
            && p.len() != n
        {
            return Err(Error::invalid(
                "<local step>",
                "preferred",
                format!("{} velocities for {n} agents", p.len()),
            ));
        }
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(Error::invalid(
                "<local step>",
                "dt",
                format!("{dt} s, expected a positive time step"),
            ));
        }
        Ok(())
    }

    /// One step of the local layer: from each agent's preferred velocity (the continuum
    /// field's, `preferred[i]` in m/s) compute its new velocity (boids offset, ORCA), move it
    /// by `velocity * dt` stopping at walls, and write positions and velocities into `agents`.
    /// Fails (changing nothing) when `preferred` or the agents' columns have the wrong length
    /// or `dt` is not positive.
    pub fn step(
        &mut self,
        scene: &Scene,
        agents: &mut Agents,
        preferred: &[[f32; 2]],
        dt: f32,
    ) -> Result<LocalStats> {
        Self::check(agents, Some(preferred), dt)?;
        let mode = self.mode;
        let groups = Groups::of(scene, false);
        if self.gpu.is_some() {
            return self.gpu_step(scene, agents, Some(preferred), &groups, dt);
        }
        let t0 = Instant::now();
        self.bins(
            scene,
            agents,
            groups.reach(mode.boids(), mode.orca()),
            mode.orca(),
        );
        let t1 = Instant::now();

        // Pass 2: preferred velocity (+ boids offset), clamped to the agent's maximum speed.
        // Under ORCA: perturbed in the caller's agent order (its columns read front to back),
        // then scattered to packed order; the boids offset is added in the fused ORCA scan
        // (pass 3). Without ORCA: in packed order (the boids steering reads the packed frame).
        let n = agents.len();
        let (frame, grid) = (&self.frame, &self.grid);
        let (ids, max_speed, step_no) = (&agents.id, &agents.max_speed, self.jitter_key());
        self.steps += 1;
        self.preferred.resize(n, V2::ZERO);
        if mode.orca() {
            // Each agent perturbed as it is scattered (the scatter computes each once).
            scatter_to_slots(self.backend, &self.slot_of, &mut self.preferred, |i| {
                let [px, py] = preferred[i];
                let mut v = V2::new(px, py);
                if v != V2::ZERO {
                    v = v + perturbation(ids[i], step_no, PREFERRED_JITTER);
                }
                if mode == LocalMode::BoidsOrca {
                    v
                } else {
                    v.clamp_len(max_speed[i])
                }
            });
        } else {
            for_each_slot(
                self.backend,
                &mut self.preferred,
                scan::Scratch::default,
                |s, k| {
                    let a = &frame.agents[k];
                    let [px, py] = preferred[a.agent as usize];
                    let mut v = V2::new(px, py);
                    if mode == LocalMode::Boids
                        && let Some(b) = &groups.get(a.group).boids
                    {
                        v = v + boids::steer(frame, grid, k, b, s).clamp_len(b.a_max);
                    }
                    v.clamp_len(a.max_speed)
                },
            );
        }

        // Pass 3: ORCA.
        let pref = &self.preferred;
        self.velocity.resize(n, (V2::ZERO, false));
        if mode.orca() {
            let world = OrcaWorld {
                frame,
                grid,
                walls: &self.walls,
                movers: &self.moving_obstacles,
                groups: &groups,
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
        let t2 = Instant::now();

        // Pass 4: move; pass 5: contacts (ORCA modes).
        let (infeasible, wall_hits) = self.move_agents(dt, false, mode.orca());
        let pushed = if mode.orca() { self.resolve_contacts(dt) } else { 0 };
        self.write_back(agents);
        let t3 = Instant::now();
        Ok(LocalStats {
            agents: n,
            infeasible,
            wall_hits,
            pushed,
            seconds_bins: (t1 - t0).as_secs_f64(),
            seconds_velocity: (t2 - t1).as_secs_f64(),
            seconds_move: (t3 - t2).as_secs_f64(),
        })
    }

    /// The contact pass ([`contact`]) on the move pass's results, over `contact_slots` (the
    /// agents without ORCA's guarantee, listed by [`Self::move_agents`]): Jacobi sweeps until
    /// one pushes nobody, at most [`contact::CONTACT_SWEEPS`]; returns how many agents it
    /// pushed.
    fn resolve_contacts(&mut self, dt: f32) -> usize {
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
        for _ in 0..contact::CONTACT_SWEEPS {
            if active.is_empty() {
                break;
            }
            let (frame, grid, walls, moved) = (&self.frame, &self.grid, &self.walls, &self.moved);
            let unguaranteed = &self.unguaranteed;
            let fix = |&k: &u32| {
                let k = k as usize;
                let m = moved[k];
                let push = contact::push(frame, grid, |j| moved[j].p, |j| unguaranteed[j], k);
                if push == V2::ZERO {
                    return m;
                }
                // The wall may stop the push (the move's wall hit is counted, not this one).
                let (p, _, _) = walls.move_agent(m.p, push * (1.0 / dt), dt, false);
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

    /// The move pass (integrate `velocity * dt`, stopping at walls, bouncing off them when
    /// `bounce`), then [`Self::write_back`]; returns the wall hits.
    fn move_and_write_back(&mut self, agents: &mut Agents, dt: f32, bounce: bool) -> usize {
        let (_, hits) = self.move_agents(dt, bounce, false);
        self.write_back(agents);
        hits
    }

    /// The move pass: each slot's position and velocity after `velocity * dt` with the walls
    /// (bouncing off them when `bounce`), into `moved`. Returns the counts of infeasible
    /// programs and wall hits and, `with_slots`, lists in `contact_slots` the slots without
    /// ORCA's guarantee (the contact pass's agents), in slot order: counted and listed per
    /// block of slots as they are moved, so the results are read once.
    fn move_agents(&mut self, dt: f32, bounce: bool, with_slots: bool) -> (usize, usize) {
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
                let (p, v, hit) = walls.move_agent(frame.agents[k].p, vel[k].0, dt, bounce);
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
    fn write_back(&self, agents: &mut Agents) {
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

    /// One step of a standalone flock (seeds 000/001/003: a fish school): each agent's
    /// velocity changes by its boids steering plus the wall probes, clamped to `a_max`, over
    /// `dt`, then to `v_max`; agents bounce off walls and the domain border. Groups without
    /// boids parameters flock with [`BoidsParams::default`]. The layer's mode is not used.
    pub fn flock(&mut self, scene: &Scene, agents: &mut Agents, dt: f32) -> Result<LocalStats> {
        Self::check(agents, None, dt)?;
        let groups = Groups::of(scene, true);
        if self.gpu.is_some() {
            return self.gpu_step(scene, agents, None, &groups, dt);
        }
        let t0 = Instant::now();
        self.bins(scene, agents, groups.reach(true, false), false);
        let t1 = Instant::now();
        let (frame, grid, walls) = (&self.frame, &self.grid, &self.walls);
        let n = agents.len();
        self.velocity.resize(n, (V2::ZERO, false));
        let cell = walls.cell;
        for_each_slot(
            self.backend,
            &mut self.velocity,
            scan::Scratch::default,
            |s, k| {
                let a = &frame.agents[k];
                let Some(b) = groups.get(a.group).boids else {
                    return (a.v, false);
                };
                let keep = (b.v_max * PROBE_SECONDS).max(cell);
                let s = boids::steer(frame, grid, k, &b, s) + walls.probe_steer(a.p, a.v, keep) * K_WALL;
                ((a.v + s.clamp_len(b.a_max) * dt).clamp_len(b.v_max), false)
            },
        );
        let t2 = Instant::now();
        let wall_hits = self.move_and_write_back(agents, dt, true);
        let t3 = Instant::now();
        Ok(LocalStats {
            agents: n,
            wall_hits,
            seconds_bins: (t1 - t0).as_secs_f64(),
            seconds_velocity: (t2 - t1).as_secs_f64(),
            seconds_move: (t3 - t2).as_secs_f64(),
            ..Default::default()
        })
    }
}

/// One step of a standalone boids flock (a fish school in a tank) on `backend`; see
/// [`LocalLayer::flock`]. Keep a [`LocalLayer`] to reuse its buffers across steps.
pub fn boids_step(scene: &Scene, agents: &mut Agents, dt: f32, backend: LocalBackend) -> Result<LocalStats> {
    LocalLayer::new(LocalMode::Boids, backend)?.flock(scene, agents, dt)
}

/// Slots per task of the ORCA pass ([`orca_chunk`]).
const ORCA_CHUNK: usize = 64;

/// ORCA for the chunk of packed agents `k0..k0 + out.len()` (at most [`ORCA_CHUNK`]),
/// `preferred` their preferred velocities: the agents of each bin scanned side by side
/// ([`scan::scan_group`]), each agent's lines ([`push_agent_lines`]) and the velocity it aims
/// for ([`orca_agent_wanted`]), then the 2-D programs of [`orca_lanes::AGENT_LANES`] agents at
/// a time ([`orca_lanes::solve_lanes`]). Every velocity is the same bit for bit as the scalar
/// scan and [`orca::solve`] give agent by agent.
///
/// On x86-64 CPUs with AVX2 (detected at run time) the same code runs compiled for AVX2:
/// wider vectors, the same operations (no fused multiply-add), the same results bit for bit.
fn orca_chunk(world: &OrcaWorld, k0: usize, preferred: &[V2], out: &mut [(V2, bool)], s: &mut OrcaScratch) {
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
struct OrcaWorld<'a> {
    /// The packed agents at the start of the step.
    frame: &'a Frame,
    /// Their bins.
    grid: &'a NeighborGrid,
    /// The walls (border and obstacle cells).
    walls: &'a WallMap,
    /// Obstacles that move and do not avoid.
    movers: &'a [MovingObstacle],
    /// Per-group settings.
    groups: &'a Groups,
    /// Whether the boids offset is added to the preferred velocity.
    with_boids: bool,
    /// Time step, s.
    dt: f32,
}

/// [`orca_chunk`]'s work, inlined (with the scans, the lines and the programs) into each
/// compilation of it.
#[inline(always)]
fn orca_chunk_body(
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
fn orca_agent_wanted(
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
fn orca_agent_lines(
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
fn push_agent_lines(world: &OrcaWorld, k: usize, near: &[(f32, usize)], lines: &mut Vec<Line>) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    #[test]
    fn scatter_to_slots_puts_each_agent_in_its_slot_on_every_backend() {
        // A permutation of 11 slots, split unevenly over 3 threads (parts of 4, 4 and 3).
        let slot_of: Vec<u32> = (0..11u32).map(|i| (i * 7 + 3) % 11).collect();
        let want: Vec<usize> = (0..11)
            .map(|k| slot_of.iter().position(|&s| s == k).unwrap())
            .collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for backend in [LocalBackend::CpuSingle, LocalBackend::CpuMulti] {
            let mut out = vec![usize::MAX; 11];
            pool.install(|| scatter_to_slots(backend, &slot_of, &mut out, |i| i));
            assert_eq!(out, want, "{backend:?}");
        }
    }

    #[test]
    fn the_seed_changes_the_run_and_the_same_seed_repeats_it_on_every_backend() {
        let (scene, crowd, pref) = workload::open_crowd(3_000, 1.5);
        let run = |seed: Option<u64>, backend| {
            let mut a = crowd.clone();
            let mut layer = LocalLayer::new(LocalMode::Orca, backend).unwrap();
            if let Some(s) = seed {
                layer.set_seed(s);
            }
            for _ in 0..5 {
                layer.step(&scene, &mut a, &pref, 0.1).unwrap();
            }
            a
        };
        let default = run(None, LocalBackend::CpuMulti);
        assert_eq!(
            run(Some(0), LocalBackend::CpuMulti),
            default,
            "seed 0 is the default"
        );
        let seeded = run(Some(7), LocalBackend::CpuMulti);
        assert_ne!(seeded, default, "another seed, another run");
        assert_eq!(
            run(Some(7), LocalBackend::CpuSingle),
            seeded,
            "backends agree bit for bit"
        );
    }

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
    fn the_perturbation_is_bounded_centred_and_fills_its_square() {
        let max = PREFERRED_JITTER;
        let half = max * std::f32::consts::FRAC_1_SQRT_2;
        let (mut sum, mut lo, mut hi) = (V2::ZERO, V2::new(1.0, 1.0), V2::new(-1.0, -1.0));
        let n = 20_000;
        for i in 0..n {
            let p = perturbation(i % 100, u64::from(i / 100), max);
            assert_eq!(
                p,
                perturbation(i % 100, u64::from(i / 100), max),
                "a fixed function"
            );
            assert!(p.len_sq() <= max * max * (1.0 + 1e-6), "{p:?} longer than {max}");
            sum = sum + p;
            (lo.x, lo.y, hi.x, hi.y) = (lo.x.min(p.x), lo.y.min(p.y), hi.x.max(p.x), hi.y.max(p.y));
        }
        let mean = sum * (1.0 / n as f32);
        assert!(
            mean.x.abs() < 0.02 * half && mean.y.abs() < 0.02 * half,
            "mean {mean:?}"
        );
        for c in [lo.x, lo.y] {
            assert!(c < -0.99 * half, "{lo:?}");
        }
        for c in [hi.x, hi.y] {
            assert!(c > 0.99 * half, "{hi:?}");
        }
        assert_ne!(perturbation(1, 2, max), perturbation(2, 1, max));
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
        for _ in 0..contact::CONTACT_SWEEPS {
            let fixes: Vec<Moved> = layer
                .contact_slots
                .iter()
                .map(|&k| {
                    let k = k as usize;
                    let m = moved[k];
                    let push = contact::push(
                        &layer.frame,
                        &layer.grid,
                        |j| moved[j].p,
                        |j| layer.unguaranteed[j],
                        k,
                    );
                    if push == V2::ZERO {
                        return m;
                    }
                    let (p, _, _) = layer.walls.move_agent(m.p, push * (1.0 / dt), dt, false);
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

    #[test]
    fn modes_parse_and_reject_unknown() {
        assert_eq!(LocalMode::parse("boids+orca").unwrap(), LocalMode::BoidsOrca);
        assert_eq!(LocalMode::parse("none").unwrap(), LocalMode::None);
        let e = LocalMode::parse("rvo").unwrap_err().to_string();
        assert!(e.contains("--local") && e.contains("rvo"), "{e}");
    }

    #[test]
    fn gpu_backend_opens_or_reports_why_not() {
        match LocalLayer::new(LocalMode::Orca, LocalBackend::Gpu) {
            Ok(l) => {
                assert_eq!(l.backend(), LocalBackend::Gpu);
                assert!(l.backend_description().starts_with("gpu on "));
            }
            Err(e) => {
                assert!(matches!(e, Error::Gpu(_)), "{e}");
                // Where a GPU must be there (CI runs lavapipe), not opening it is a failure.
                assert!(
                    !std::env::var("CROWDFIELD_REQUIRE_GPU").is_ok_and(|v| v == "1"),
                    "CROWDFIELD_REQUIRE_GPU is set and no adapter opened: {e}"
                );
            }
        }
    }

    #[test]
    fn bad_inputs_are_errors_not_panics() {
        let scene = Scene::empty("t", Grid::new(10, 10, 1.0));
        let mut a = Agents::default();
        a.push(0, 1.0, 1.0, 0, 0.2, 1.0);
        let mut l = LocalLayer::new(LocalMode::Orca, LocalBackend::CpuSingle).unwrap();
        assert!(l.step(&scene, &mut a, &[], 0.1).is_err());
        assert!(l.step(&scene, &mut a, &[[1.0, 0.0]], 0.0).is_err());
        assert!(l.step(&scene, &mut a, &[[1.0, 0.0]], f32::NAN).is_err());
        assert_eq!(a.x[0], 1.0, "a failed step changes nothing");
    }

    #[test]
    fn none_mode_clamps_and_moves() {
        let scene = Scene::empty("t", Grid::new(10, 10, 1.0));
        let mut a = Agents::default();
        a.push(0, 1.0, 1.0, 0, 0.2, 1.0);
        let mut l = LocalLayer::new(LocalMode::None, LocalBackend::CpuSingle).unwrap();
        l.step(&scene, &mut a, &[[3.0, 4.0]], 0.5).unwrap();
        assert!((a.vx[0] - 0.6).abs() < 1e-6 && (a.vy[0] - 0.8).abs() < 1e-6);
        assert!((a.x[0] - 1.3).abs() < 1e-6 && (a.y[0] - 1.4).abs() < 1e-6);
    }

    #[test]
    fn nearest_neighbours_are_sorted_and_capped() {
        let xs: Vec<f32> = (0..30).map(|i| 5.0 + (i % 6) as f32 * 0.4).collect();
        let ys: Vec<f32> = (0..30).map(|i| 5.0 + (i / 6) as f32 * 0.4).collect();
        let mut g = NeighborGrid::new(20.0, 20.0, 3.0);
        g.rebuild(&xs, &ys);
        let frame = Frame::of(
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
