//! The local layer (SPEC §5): boids offsets and ORCA collision avoidance over the bin-sorted
//! neighbour grid, then the move step that keeps every agent inside the domain and out of
//! obstacle cells.
//!
//! One step of [`LocalLayer::step`] is a list of passes, each a pure per-agent function of the
//! previous state (so a GPU backend can run the same passes as shaders):
//! 1. `bins`: rebuild the [`NeighborGrid`] on the current positions and pack the agents in bin
//!    order ([`PackedAgents`]: neighbours of a bin are contiguous in memory);
//! 2. `preferred_pass`: the caller's preferred velocity (the continuum field's), plus the boids
//!    offset in the boids modes, clamped to the agent's maximum speed;
//! 3. `velocity_pass` (`orca_pass.rs`): ORCA in the ORCA modes, else the preferred velocity (in
//!    boids+ORCA the boids sums of pass 2 are taken during ORCA's neighbour scan: one scan,
//!    same result);
//! 4. `move_agents` (`move_pass.rs`): integrate positions, stopping at walls
//!    ([`WallMap::move_agent`](crate::collision::WallMap::move_agent));
//! 5. `resolve_contacts` ([`contact`], ORCA modes): agents without ORCA's guarantee (an
//!    infeasible program, or a move a wall changed) step out of the bodies they overlap;
//! 6. `write_back` (`move_pass.rs`): positions and velocities into the caller's agents, in
//!    their order.
//!
//! `run.rs` spreads a pass over the backend's workers. The GPU backend runs the same passes as
//! shaders through a `LocalDevice` (a trait defined here) the GPU module implements; this module
//! does not know it.
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
//! agents.push(0, 10.0, 1.0, 0, 0.25, 1.3); // id, x, y, group, radius, max speed
//! agents.push(1, 11.0, 1.0, 0, 0.25, 1.3);
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
mod move_pass;
pub mod obstacles;
pub mod orca;
mod orca_lanes;
mod orca_pass;
pub mod quality;
mod run;
pub mod scan;
pub mod workload;

use crate::agents::Agents;
use crate::collision::WallMap;
use crate::error::{Error, Result};
use crate::neighbors::NeighborGrid;
use crate::params::{BoidsParams, OrcaParams};
use crate::scene::Scene;
use crate::vec2::V2;
use boids::BoidsF32;
use move_pass::{BlockTally, Moved};
#[cfg(test)]
pub(crate) use run::for_each_near;
use run::{for_each_slot, scatter_to_slots};
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

/// What the local layer does to the preferred velocities ([`crate::sim::SimulationBuilder::local`];
/// see the [`crate::sim::builder`] example).
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
    /// Boids offset, then ORCA.
    BoidsOrca,
}

impl LocalMode {
    /// The mode a run on `scene` uses when this one is asked for: a boids mode on a map where
    /// no group has a `boids` block and no group is goal-less (those flock with default
    /// parameters) steers no agent, so it runs as what is left of it (`boids` as none,
    /// `boids+orca` as orca), which gives exactly the walk of that mode; the layer's own move
    /// pass would otherwise still change how walkers meet the walls.
    pub fn effective_for(self, scene: &crate::scene::Scene) -> Self {
        let steers = scene
            .groups
            .iter()
            .any(|g| g.boids.is_some() || g.goals.is_empty());
        match self {
            Self::Boids if !steers => Self::None,
            Self::BoidsOrca if !steers => Self::Orca,
            other => other,
        }
    }

    fn boids(self) -> bool {
        matches!(self, Self::Boids | Self::BoidsOrca)
    }

    fn orca(self) -> bool {
        matches!(self, Self::Orca | Self::BoidsOrca)
    }
}

impl crate::names::Named for LocalMode {
    const WHAT: &'static str = "LocalMode";
    const ALL: &'static [Self] = &[Self::None, Self::Boids, Self::Orca, Self::BoidsOrca];

    /// `none`, `boids`, `orca` or `boids+orca`: the command's `--local`, Python's `local`.
    fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Boids => "boids",
            Self::Orca => "orca",
            Self::BoidsOrca => "boids+orca",
        }
    }
}

impl crate::names::Named for LocalBackend {
    const WHAT: &'static str = "LocalBackend";
    const ALL: &'static [Self] = &[Self::CpuSingle, Self::CpuMulti, Self::Gpu];

    /// `cpu-single`, `cpu-multi` or `gpu`: the command's `--local-backend`, Python's
    /// `local_backend`.
    fn name(self) -> &'static str {
        match self {
            Self::CpuSingle => "cpu-single",
            Self::CpuMulti => "cpu-multi",
            Self::Gpu => "gpu",
        }
    }
}

/// Where the per-agent passes run. All backends give the same results (the GPU within a
/// tolerance). Chosen with [`crate::sim::SimulationBuilder::local_backend`] (see the
/// [`crate::sim::builder`] example).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LocalBackend {
    /// One thread.
    CpuSingle,
    /// All rayon threads.
    #[default]
    CpuMulti,
    /// wgpu compute passes (the GPU module's `GpuLocal`): the same passes as shaders, equal to
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
pub struct PackedAgents {
    /// Packed agents.
    pub agents: Vec<PackedAgent>,
    /// The same agents as columns, what ORCA's neighbour scan reads. The layer fills them in
    /// the ORCA modes only (the boids sums alone read `agents`); [`PackedAgents::of`] always does.
    pub columns: scan::Columns,
}

impl PackedAgents {
    /// A frame of `agents` (already in bin order) with its columns.
    pub fn of(agents: Vec<PackedAgent>) -> Self {
        let columns = scan::Columns::of(&agents);
        Self { agents, columns }
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

/// Per-group configurations of a scene, and `fallback`, the default one (the layer's checks
/// refuse agents whose group index is past the scene's groups; the GPU's records end with it).
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

/// What a device running the layer's passes is given for one step.
pub(crate) struct DeviceStep<'a> {
    /// Preferred velocities (agent order); `None` for the flock.
    pub preferred: Option<&'a [[f32; 2]]>,
    /// Time step, s.
    pub dt: f32,
    /// The layer's mode (ignored by the flock).
    pub mode: LocalMode,
    /// Per-group settings.
    pub groups: &'a Groups,
    /// The wall map.
    pub walls: &'a WallMap,
    /// Moving obstacles.
    pub movers: &'a [MovingObstacle],
    /// What the perturbation hashes besides the agent's id (steps mixed with the seed).
    pub step: u64,
}

/// A device that runs the layer's passes ([`LocalBackend::Gpu`]: the GPU module's
/// `GpuLocal` implements it). The local layer defines the trait and the device module
/// implements it, so `local` knows nothing of `gpu`.
pub(crate) trait LocalDevice: Send + std::fmt::Debug {
    /// One step: bins `agents` into `grid` (whose dimensions the layer set), runs the passes
    /// and writes positions and velocities back into `agents`.
    fn step(
        &mut self,
        agents: &mut Agents,
        grid: &mut NeighborGrid,
        step: &DeviceStep<'_>,
    ) -> Result<LocalStats>;
    /// Where it runs, for messages (`gpu on <adapter>`).
    fn description(&self) -> String;
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
    frame: PackedAgents,
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
    /// The device that runs the passes ([`LocalBackend::Gpu`] only).
    device: Option<Box<dyn LocalDevice>>,
}

impl LocalLayer {
    /// A layer doing `mode` on a CPU `backend`. The GPU backend runs on a GPU context:
    /// `LocalLayer::with_gpu` (or `crate::gpu::open_local_layer`, which takes any backend) builds it.
    ///
    /// # Errors
    /// [`Error::Gpu`] for [`LocalBackend::Gpu`], which needs a GPU context.
    pub fn new(mode: LocalMode, backend: LocalBackend) -> Result<Self> {
        if backend == LocalBackend::Gpu {
            return Err(Error::Gpu(
                "LocalBackend::Gpu runs on a GPU context: build the layer with LocalLayer::with_gpu or \
                 gpu::open_local_layer"
                    .into(),
            ));
        }
        Ok(Self {
            mode,
            backend,
            ..Default::default()
        })
    }

    /// A layer doing `mode` on `device` ([`LocalBackend::Gpu`]): how the GPU module builds one.
    pub(crate) fn with_device(mode: LocalMode, device: Box<dyn LocalDevice>) -> Self {
        Self {
            mode,
            backend: LocalBackend::Gpu,
            device: Some(device),
            ..Default::default()
        }
    }

    /// Which backend runs, for messages: `cpu-single`, `cpu-multi (N threads)` or
    /// `gpu on <adapter>`.
    pub fn backend_description(&self) -> String {
        match (&self.device, self.backend) {
            (Some(d), _) => d.description(),
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

    /// One step on the device's passes (the flock when `preferred` is `None`).
    fn device_step(
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
        let input = DeviceStep {
            preferred,
            dt,
            mode,
            groups,
            walls: &self.walls,
            movers: &self.moving_obstacles,
            step: self.jitter_key(),
        };
        let device = self.device.as_mut().expect("a device layer holds its passes");
        let stats = device.step(agents, &mut self.grid, &input)?;
        if preferred.is_some() {
            self.steps += 1;
        }
        Ok(stats)
    }

    /// The checks [`LocalLayer::step`] and [`LocalLayer::flock`] run before changing anything:
    /// the scene's grid ([`crate::scene::check_grid`]), the agents on the scene
    /// ([`Agents::check_on`], walls aside), one finite preferred velocity per agent, and `dt`.
    fn check(scene: &Scene, agents: &Agents, preferred: Option<&[[f32; 2]]>, dt: f32) -> Result<()> {
        crate::scene::check_grid(&scene.grid, &scene.name)?;
        agents.check_on(scene, false)?;
        let n = agents.len();
        if let Some(p) = preferred
            && p.len() != n
        {
            return Err(Error::invalid(
                "<local step>",
                "preferred",
                format!("{} velocities for {n} agents", p.len()),
            ));
        }
        if let Some((i, v)) = preferred.and_then(|p| {
            p.iter()
                .enumerate()
                .find(|(_, v)| !(v[0].is_finite() && v[1].is_finite()))
        }) {
            return Err(Error::invalid(
                "<local step>",
                format!("preferred[{i}]"),
                format!("({:?}, {:?}): expected a finite velocity in m/s", v[0], v[1]),
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
    /// Fails (changing nothing) when the scene's grid has no cells or a cell size that is not
    /// positive and finite, when `preferred` or the agents' columns have the wrong length, when
    /// an agent's group index is past the scene's groups, its position is not finite or
    /// outside the domain, its velocity or preferred velocity is not finite, or when `dt` is
    /// not positive; the error names the field, the agent's index and the value.
    pub fn step(
        &mut self,
        scene: &Scene,
        agents: &mut Agents,
        preferred: &[[f32; 2]],
        dt: f32,
    ) -> Result<LocalStats> {
        Self::check(scene, agents, Some(preferred), dt)?;
        let mode = self.mode;
        let groups = Groups::of(scene, false);
        if self.device.is_some() {
            return self.device_step(scene, agents, Some(preferred), &groups, dt);
        }
        let t0 = Instant::now();
        self.bins(
            scene,
            agents,
            groups.reach(mode.boids(), mode.orca()),
            mode.orca(),
        );
        let t1 = Instant::now();

        // Pass 2: preferred velocities; pass 3: new velocities (ORCA modes).
        self.preferred_pass(agents, preferred, &groups);
        self.velocity_pass(&groups, dt);
        let t2 = Instant::now();

        // Pass 4: move; pass 5: contacts (ORCA modes).
        let (infeasible, wall_hits) = self.move_agents(dt, false, mode.orca());
        let pushed = if mode.orca() { self.resolve_contacts(dt) } else { 0 };
        self.write_back(agents);
        let t3 = Instant::now();
        Ok(LocalStats {
            agents: agents.len(),
            infeasible,
            wall_hits,
            pushed,
            seconds_bins: (t1 - t0).as_secs_f64(),
            seconds_velocity: (t2 - t1).as_secs_f64(),
            seconds_move: (t3 - t2).as_secs_f64(),
        })
    }

    /// Pass 2: each slot's preferred velocity (the caller's `preferred`, plus the boids offset
    /// in the boids modes), clamped to the agent's maximum speed, into `self.preferred`.
    fn preferred_pass(&mut self, agents: &Agents, preferred: &[[f32; 2]], groups: &Groups) {
        let mode = self.mode;
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
    }

    /// One step of a standalone flock (a fish school): each agent's
    /// velocity changes by its boids steering plus the wall probes, clamped to `a_max`, over
    /// `dt`, then to `v_max`; agents bounce off walls and the domain border. Groups without
    /// boids parameters flock with [`BoidsParams::default`]. The layer's mode is not used.
    /// Fails (changing nothing) on the scenes and agents [`LocalLayer::step`] refuses.
    pub fn flock(&mut self, scene: &Scene, agents: &mut Agents, dt: f32) -> Result<LocalStats> {
        Self::check(scene, agents, None, dt)?;
        let groups = Groups::of(scene, true);
        if self.device.is_some() {
            return self.device_step(scene, agents, None, &groups, dt);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

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
    fn modes_and_backends_parse_their_names_and_reject_unknown() {
        use crate::names::Named;
        assert_eq!(LocalMode::parse("boids+orca").unwrap(), LocalMode::BoidsOrca);
        assert_eq!(
            LocalBackend::parse("cpu-single").unwrap(),
            LocalBackend::CpuSingle
        );
        let e = LocalMode::parse("rvo").unwrap_err().to_string();
        assert!(e.contains("LocalMode") && e.contains("rvo"), "{e}");
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
        let mut scene = Scene::empty("t", Grid::new(10, 10, 1.0));
        scene.groups = workload::open_crowd(1, 1.0).0.groups;
        let mut a = Agents::default();
        a.push(0, 1.0, 1.0, 0, 0.2, 1.0);
        let mut l = LocalLayer::new(LocalMode::None, LocalBackend::CpuSingle).unwrap();
        l.step(&scene, &mut a, &[[3.0, 4.0]], 0.5).unwrap();
        assert!((a.vx[0] - 0.6).abs() < 1e-6 && (a.vy[0] - 0.8).abs() < 1e-6);
        assert!((a.x[0] - 1.3).abs() < 1e-6 && (a.y[0] - 1.4).abs() < 1e-6);
    }
}
