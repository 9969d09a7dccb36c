//! Crowd simulation through the continuum fields (SPEC §1): spawn, step, arrivals, report.
//!
//! One step, in order (each stage timed, see [`StageTimes`]):
//! 1. **splat**: every group's agents into one density and average velocity ([`fields::splat`]);
//! 2. **fields**: anisotropic speed and unit cost ([`fields::speed()`], [`fields::unit_cost`]);
//! 3. **potentials**: one Eikonal solve per group ([`eikonal::solve_groups`], groups in
//!    parallel) and its upwind gradient, every step by default or every `replan_every` steps;
//! 4. **advection**: each agent's preferred velocity is the field velocity at its position
//!    ([`gradient::velocity_at`]) capped at its maximum speed; the optional [`LocalHook`] turns
//!    preferred into actual velocities; positions are integrated, sliding along walls;
//! 5. **separation**: pairs closer than the sum of their radii are pushed apart (Jacobi
//!    iterations over a [`NeighborGrid`]), walls still enforced;
//! 6. agents standing on a goal cell of their group are removed and their arrival recorded.
//!
//! The simulation does no I/O: [`crate::run::output`] writes the report, plots, frames and trajectories.
//! Results depend only on the scene, the configuration and the seed, never on the thread count:
//! every parallel loop computes per-agent values from the previous state and collects them in
//! agent order.

pub mod builder;
pub mod levels;
pub mod local_bridge;
pub mod measure;
pub mod pedestrian;
pub mod report;
pub mod spawn;
mod verdict;

use crate::agents::Agents;
use crate::collision::overlap::{Push, PushRule, Unit, coincident_direction};
use crate::collision::walls::{Body, FreeRuns, slide_body};
use crate::eikonal::{self, Order};
use crate::error::{Error, Result};
use crate::fields::{self, Fields};
use crate::gpu::{ContinuumRun, ContinuumVelocities, GpuContext, ReadBacks};
use crate::gradient::{self, Gradient};
use crate::local::LocalMode;
use crate::local::quality::{CollisionCounter, JamTracker};
use crate::neighbors::NeighborGrid;
use crate::scene::Scene;
use crate::vec2::V2;
use ndarray::{Array2, Array3};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;

pub use builder::SimulationBuilder;
pub use report::Report;
pub use verdict::{check_map, load_map};

/// Time step used when none is given, seconds; lowered automatically to respect the CFL bound.
pub const DEFAULT_DT: f64 = 0.1;

/// The automatic time step lets the fastest walker cover at most this fraction of a cell per
/// step, leaving room for the separation push on top of walking.
pub const AUTO_DT_CFL: f64 = 0.9;

/// Default time limit of a run, seconds (10 minutes covers every bundled evacuation).
pub const DEFAULT_MAX_TIME: f64 = 600.0;

/// Most steps a run may take (`max_time / dt`): ten million steps is about three hours at the
/// thousand steps per second of a small map, and days on a large one. A longer run is almost
/// surely a time step typed in the wrong unit or a time limit meant as "forever"; refusing it up
/// front beats a run that never ends.
pub const MAX_STEPS: f64 = 1.0e7;

/// Pairs may end a step this fraction of their minimum distance closer than it (1 %): the
/// separation iterations stop once every pair is within half of this slack.
pub const SEPARATION_SLACK: f64 = 0.01;

/// Upper bound on separation iterations per step. Jacobi push-apart halves a lone overlap each
/// iteration; 40 iterations resolve the dense blocks of the tests and benchmarks, and a step
/// that still has overlaps after them simply carries them into the next step.
pub const SEPARATION_MAX_ITERATIONS: usize = 40;

/// How the separation pushes a pair apart: to touching (no gap), the direction `d / |d|`.
pub const SEPARATION: PushRule = PushRule {
    gap: 0.0,
    unit: Unit::Quotient,
};

/// An agent that stays within this distance of one point (metres)...
pub const STUCK_DISTANCE: f64 = 0.1;
/// ...for this long (seconds) while its potential is finite counts as stuck.
pub const STUCK_TIME: f64 = 10.0;

/// How far around each walker's cell (chessboard distance, cells) a march that stops past the
/// walkers must have accepted every cell; see `Simulation::needed_cells`.
const NEEDED_REACH: usize = 2;

/// What a run does, beyond the scene itself; [`SimulationBuilder`] sets it field by field (see
/// its [example](builder)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    /// Time step, seconds; `None` picks `min(DEFAULT_DT, AUTO_DT_CFL * cell_size / v_max)`.
    pub dt: Option<f64>,
    /// Time limit, seconds: the run stops, even if agents remain, after the last whole step of
    /// `dt` that does not pass it (never later: [`Simulation::step`] does nothing once
    /// [`Simulation::finished`]). A limit shorter than one step, of more than [`MAX_STEPS`]
    /// steps, or not finite (an endless game loop sets a long one) is refused.
    pub max_time: f64,
    /// Seed of the spawn positions and speeds.
    pub seed: u64,
    /// Potentials are recomputed every this many steps (1 = every step).
    pub replan_every: usize,
    /// Order of the fast-marching update.
    pub order: Order,
    /// Solve every potential over the whole grid. By default (false), when the potentials are
    /// recomputed every step, each CPU march stops once it has reached every walker of its
    /// group ([`eikonal::solve_groups_near`]): the walkers see the same fields and walk the same
    /// paths, bit for bit, but [`Simulation::potentials`] is `+inf` beyond the farthest walker,
    /// so whatever draws or saves whole potentials sets this. With `replan_every` above 1 the
    /// marches always cover the whole grid (walkers read a potential for several steps, and
    /// the separation may push one further than any fixed margin).
    #[serde(default)]
    pub full_potentials: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            dt: None,
            max_time: DEFAULT_MAX_TIME,
            seed: 0,
            replan_every: 1,
            order: Order::First,
            full_potentials: false,
        }
    }
}

/// The hook where preferred velocities become actual velocities (boids offsets, ORCA: the
/// [`crate::local::LocalLayer`] through [`local_bridge::LocalBridge`], installed by
/// [`SimulationBuilder::local`], or one's own through [`SimulationBuilder::local_hook`]).
/// Without one, agents walk at their preferred velocity.
pub trait LocalHook: Send {
    /// Writes the actual velocity of every agent into `vx, vy`, which hold the preferred
    /// velocities on entry. `agents.vx, agents.vy` still hold the previous step's velocities.
    fn adjust(&mut self, scene: &Scene, agents: &Agents, dt: f64, vx: &mut [f32], vy: &mut [f32]);

    /// Why the hook's own device failed and what it did instead, when that happened (the
    /// report and `simulate` give it, as [`Simulation::gpu_fallback`]). `None` by default.
    fn fallback(&self) -> Option<String> {
        None
    }
}

/// Collision and jam figures summed over the steps run (see [`crate::local::quality`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct QualityLog {
    pub steps: usize,
    pub pairs: usize,
    pub contacts: usize,
    pub max_pairs: usize,
    pub depth_sum: f64,
    pub max_jammed: usize,
    pub longest_jam_s: f32,
}

impl QualityLog {
    fn record(&mut self, c: &crate::local::quality::CollisionStats, jammed: usize, longest_s: f32) {
        let (pairs, mean_depth) = (c.pairs, c.mean_depth);
        self.steps += 1;
        self.pairs += pairs;
        self.contacts += c.contacts;
        self.max_pairs = self.max_pairs.max(pairs);
        self.depth_sum += mean_depth as f64 * pairs as f64;
        self.max_jammed = self.max_jammed.max(jammed);
        self.longest_jam_s = self.longest_jam_s.max(longest_s);
    }
}

/// Wall time spent in each stage, seconds, summed over the steps run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageTimes {
    /// Density splat.
    pub splat: f64,
    /// Speed and unit cost.
    pub fields: f64,
    /// Eikonal solves and gradients.
    pub potentials: f64,
    /// Field velocity, local layer, integration, walls, arrivals.
    pub advection: f64,
    /// Minimum-distance enforcement.
    pub separation: f64,
}

impl StageTimes {
    /// Sum of the stages, seconds.
    pub fn total(&self) -> f64 {
        self.splat + self.fields + self.potentials + self.advection + self.separation
    }
}

/// One arrival: which agent reached which exit of its group, and when
/// ([`Simulation::arrivals`]; the [crate example](crate) counts them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrival {
    /// Agent id.
    pub id: u32,
    /// Group index.
    pub group: u32,
    /// Index of the exit in the group's `goals`.
    pub exit: usize,
    /// Simulated time of arrival, seconds.
    pub time: f64,
}

/// What the host read back of the continuum step on the GPU ([`Simulation::gpu_read_backs`];
/// `timings.json`'s `gpu_read_backs`). Counts, not times: the same on any adapter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct GpuReadBacks {
    /// Steps whose continuum step ran on the GPU.
    pub steps: usize,
    /// Read-backs those steps made: one for the walking velocities (with the pedestrian
    /// model, each walker's potentials too), and on replanning steps one per batch of solver
    /// passes (its 32-byte convergence state).
    pub step_read_backs: u64,
    /// Bytes those read-backs moved: 8 per walker per step (plus 4 per walker and group with
    /// the pedestrian model), 32 per solver state.
    pub step_bytes: u64,
    /// Read-backs of fields and potentials asked for between steps (frames, the report).
    pub on_demand_read_backs: u64,
    /// Bytes of those.
    pub on_demand_bytes: u64,
}

impl GpuReadBacks {
    /// Bytes read back per step, the steps' own and those asked for together.
    pub fn bytes_per_step(&self) -> f64 {
        if self.steps == 0 {
            0.0
        } else {
            (self.step_bytes + self.on_demand_bytes) as f64 / self.steps as f64
        }
    }

    fn add_on_demand(&mut self, r: ReadBacks) {
        self.on_demand_read_backs += r.count;
        self.on_demand_bytes += r.bytes;
    }
}

/// The continuum step on the device: the run's device buffers ([`ContinuumRun`]), and what was read back of it since.
struct GpuRun {
    gpu_run: ContinuumRun,
    /// The fields of the last step, read back on first need (`None` when that read failed).
    fields: std::sync::OnceLock<Option<Fields>>,
    /// The potentials of the last solve, read back on first need.
    potentials: std::sync::OnceLock<Vec<Array2<f64>>>,
    /// The run's read-backs made by its steps (the rest were asked for between steps).
    step_reads: ReadBacks,
}

impl GpuRun {
    /// The run's read-backs asked for between steps.
    fn on_demand(&self) -> ReadBacks {
        let all = self.gpu_run.read_backs();
        ReadBacks {
            count: all.count - self.step_reads.count,
            bytes: all.bytes - self.step_reads.bytes,
        }
    }
}

/// One continuum step on the device, opening the run's device buffers on the first: new potentials
/// when `due` or when none are on the device yet.
fn device_step(
    ctx: &GpuContext,
    run: &mut Option<GpuRun>,
    scene: &Scene,
    agents: &crate::agents::Agents,
    goal_masks: &[Array2<bool>],
    due: bool,
) -> Result<ContinuumVelocities> {
    if run.is_none() {
        *run = Some(GpuRun {
            gpu_run: ctx.continuum_run(scene)?,
            fields: std::sync::OnceLock::new(),
            potentials: std::sync::OnceLock::new(),
            step_reads: ReadBacks::default(),
        });
    }
    let run = run.as_mut().expect("the device run was just opened");
    // The pedestrian model reads each walker's potential and its neighbours'.
    run.gpu_run
        .set_sample_potentials(scene.params.model == crate::params::Model::Pedestrian);
    let replan = due || run.gpu_run.groups().is_none();
    let sampled = ctx.continuum_velocities(&mut run.gpu_run, agents, replan.then_some(goal_masks))?;
    run.fields = std::sync::OnceLock::new();
    if replan {
        run.potentials = std::sync::OnceLock::new();
    }
    run.step_reads.count += sampled.read_backs.count;
    run.step_reads.bytes += sampled.read_backs.bytes;
    Ok(sampled)
}

/// The potentials of the last solve: the CPU's, or the device's read back on first need.
fn current_potentials<'a>(
    cpu: &'a [Array2<f64>],
    ctx: Option<&GpuContext>,
    run: Option<&'a GpuRun>,
) -> &'a [Array2<f64>] {
    match (ctx, run) {
        (Some(ctx), Some(run)) if run.gpu_run.groups().is_some() => run
            .potentials
            .get_or_init(|| ctx.continuum_potentials(&run.gpu_run).unwrap_or_default()),
        _ => cpu,
    }
}

/// Where a step's field velocities come from: sampled on the CPU from the gradients and this
/// speed field, or sampled on the device.
enum FieldVelocity<'a> {
    At(&'a Array3<f32>),
    Sampled(&'a ContinuumVelocities),
}

/// Per-agent bookkeeping, indexed by agent id (ids are `0..n`).
#[derive(Clone, Debug, Default)]
pub(crate) struct AgentLog {
    /// Distance walked so far, metres.
    pub walked: Vec<f64>,
    /// Time the agent left the simulation (arrival), or `None`.
    pub left_at: Vec<Option<f64>>,
    /// Point the agent has stayed near since `anchor_t` (for the stuck test).
    pub anchor: Vec<(f32, f32, f64)>,
    /// Time the agent starts walking (its pre-movement time), seconds.
    pub start_at: Vec<f64>,
}

/// Density statistics gathered over the run.
#[derive(Clone, Debug)]
pub(crate) struct DensityLog {
    /// Highest measured density seen in each cell, persons/m² over the measurement window.
    pub peak_map: Array2<f32>,
    /// Highest density overall: value, cell (row, col), time.
    pub peak: (f32, (usize, usize), f64),
    /// Per group: highest density in the cell of one of its agents: value, cell, time.
    pub group_peak: Vec<(f32, (usize, usize), f64)>,
    /// Per group: sum of agents' speeds over agent-steps, and the number of agent-steps.
    pub speed_sum: Vec<(f64, u64)>,
}

/// A running simulation: the scene, its agents and everything recorded so far.
///
/// Set one up with [`Simulation::builder`] (see [`builder`] for an example), step it with
/// [`Simulation::step`] or [`Simulation::run`], and read it through its methods: the state is
/// kept in step with the simulation's caches (goal masks, neighbour grid, potentials), so it is
/// not open to changes from outside.
pub struct Simulation {
    /// The scene (its `params.speed_law` selects the speed–density law).
    pub(crate) scene: Scene,
    /// The agents still walking.
    pub(crate) agents: Agents,
    /// The configuration.
    pub(crate) config: SimConfig,
    /// Time step, seconds (validated against the CFL bound).
    pub(crate) dt: f64,
    /// Simulated time, seconds.
    pub(crate) time: f64,
    /// Steps done.
    pub(crate) steps: usize,
    /// Number of agents spawned, per group.
    pub(crate) spawned: Vec<usize>,
    /// Every arrival so far, in order.
    pub(crate) arrivals: Vec<Arrival>,
    /// Fields of the last step (`None` before the first step).
    pub(crate) fields: Option<Fields>,
    /// Potential of each group from the last solve (empty before the first step); `+inf` beyond
    /// the walkers when the marches stopped there (see [`SimConfig::full_potentials`] and
    /// [`Simulation::whole_potential_at`]).
    pub(crate) potentials: Vec<Array2<f64>>,
    /// Whether the last solve stopped its marches past the walkers.
    potentials_partial: bool,
    /// Per group, the whole-grid march of the last solve, solved on first need by
    /// [`Simulation::whole_potential_at`] (at most once per group and solve).
    whole_potentials: Vec<std::sync::OnceLock<Array2<f64>>>,
    /// Wall time per stage.
    pub(crate) times: StageTimes,
    goal_masks: Vec<Array2<bool>>,
    /// The scene's part of the speed and cost fields, computed once.
    faces: fields::SceneFaces,
    /// Per cell, the free floor across it in cells ([`FreeRuns::span`]): where the walk and
    /// the separation keep out bodies wider than an opening ([`slide_body`]).
    spans: Array2<u32>,
    gradients: Vec<Gradient>,
    local: Option<Box<dyn LocalHook>>,
    /// What solves the potentials, in words ([`Simulation::solver_description`]).
    solver_description: String,
    /// Where the local layer runs, in words, when there is one.
    local_description: Option<String>,
    neighbors: NeighborGrid,
    /// The pedestrian model's neighbour grid (bins of [`pedestrian::look_radius`]).
    pedestrian_grid: NeighborGrid,
    pedestrian_rule: pedestrian::SpeedRule,
    /// What the pedestrian model reads of the floor ([`pedestrian::Floor`]; empty for the
    /// published model).
    pedestrian_floor: pedestrian::Floor,
    gpu: Option<Arc<GpuContext>>,
    /// The continuum step on the device (from the first GPU step until a GPU error).
    gpu_run: Option<GpuRun>,
    /// The read-backs of the continuum step on the GPU so far.
    gpu_reads: GpuReadBacks,
    /// Why the GPU solver was given up for the CPU one, when it was.
    pub(crate) gpu_fallback: Option<String>,
    /// Warnings about the run's set-up that the report repeats: the map's own
    /// ([`crate::map::warnings`]), the published model's, a local layer on a map with exits
    /// ([`builder::local_layer_warning`]).
    pub(crate) model_warnings: Vec<String>,
    /// Why the scene's model runs, in words ([`SimulationBuilder::model_source`]).
    pub(crate) model_source: Option<String>,
    /// The local layer asked of the builder (`None` also for a caller's hook).
    pub(crate) local_mode: LocalMode,
    preferred: Vec<[f32; 2]>,
    collisions: CollisionCounter,
    jams: JamTracker,
    pub(crate) quality: QualityLog,
    pub(crate) log: AgentLog,
    pub(crate) density_log: DensityLog,
    /// Level of service and clear time per cell ([`levels`]).
    place_log: levels::PlaceLog,
}

impl Simulation {
    /// Spawns the agents of `scene` with `config.seed` and checks the time step: a run with no
    /// local layer, on the CPU; the same as `Simulation::builder(scene).config(config).build()`
    /// ([`Simulation::builder`] sets up everything else).
    pub fn new(scene: Scene, config: SimConfig) -> Result<Self> {
        Self::builder(scene).config(config).build()
    }

    /// A simulation of the given agents (ids must be `0..n`); [`SimulationBuilder::agents`]
    /// does the same with everything else a run may need.
    ///
    /// # Errors
    /// As [`SimulationBuilder::build`]: the scene's problems ([`Scene::check`]), the agents'
    /// ([`Agents::check_on`]: columns of different lengths, a group index past the scene's
    /// groups, a position that is not finite, outside the domain or in an obstacle cell) and
    /// the configuration's.
    pub fn with_agents(scene: Scene, config: SimConfig, agents: Agents) -> Result<Self> {
        scene.check()?;
        Self::with_agents_on_checked(scene, config, agents)
    }

    /// [`Simulation::with_agents`] on a scene [`Scene::check`] has passed.
    pub(crate) fn with_agents_on_checked(scene: Scene, config: SimConfig, agents: Agents) -> Result<Self> {
        agents.check_on(&scene, true)?;
        let grid = scene.grid;
        if config.replan_every == 0 {
            return Err(Error::invalid(
                crate::error::OPTIONS,
                "SimConfig.replan_every",
                "0: expected at least 1",
            ));
        }
        if !(config.max_time.is_finite() && config.max_time > 0.0) {
            return Err(Error::invalid(
                crate::error::OPTIONS,
                "SimConfig.max_time",
                format!(
                    "{}: expected a positive, finite number of seconds",
                    config.max_time
                ),
            ));
        }
        if agents.id.iter().enumerate().any(|(i, &id)| id as usize != i) {
            return Err(Error::invalid(
                "<agents>",
                "id",
                "agent ids must be 0..n in order",
            ));
        }
        let v_max = agents
            .max_speed
            .iter()
            .fold(scene.params.f_max, |m, &v| m.max(v as f64));
        let dt = match config.dt {
            None => DEFAULT_DT.min(AUTO_DT_CFL * grid.cell_size / v_max),
            Some(dt) => {
                if !(dt.is_finite() && dt > 0.0) {
                    return Err(Error::invalid(
                        crate::error::OPTIONS,
                        "SimConfig.dt",
                        format!("{dt}: expected a positive time step"),
                    ));
                }
                if dt * v_max > grid.cell_size {
                    return Err(Error::invalid(
                        crate::error::OPTIONS,
                        "SimConfig.dt",
                        format!(
                            "{dt} s lets the fastest walker ({v_max:.3} m/s) move {:.3} m per step, more than \
                             one cell ({} m): use SimConfig.dt <= {:.4} (or leave SimConfig.dt unset to pick it \
                             automatically)",
                            dt * v_max,
                            grid.cell_size,
                            grid.cell_size / v_max
                        ),
                    ));
                }
                dt
            }
        };
        if config.max_time + 1e-9 < dt {
            // No whole step fits: the run would either do nothing or end past the limit.
            return Err(Error::invalid(
                crate::error::OPTIONS,
                "SimConfig.max_time",
                format!(
                    "{} s is shorter than one time step ({dt} s): expected at least the step; raise \
                     SimConfig.max_time or lower SimConfig.dt",
                    config.max_time
                ),
            ));
        }
        let steps = (config.max_time / dt).ceil();
        if steps > MAX_STEPS {
            // The automatic step is already within 10 % of the largest the map allows (one cell
            // per step for the fastest walker): only a shorter run helps.
            let remedy = if config.dt.is_some() {
                "lower SimConfig.max_time or raise SimConfig.dt".to_string()
            } else {
                format!(
                    "lower SimConfig.max_time (the time step is this map's automatic one: {} of the {} m \
                     cells per step for its fastest walker, {v_max:.3} m/s, at most {DEFAULT_DT} s)",
                    AUTO_DT_CFL, grid.cell_size
                )
            };
            return Err(Error::invalid(
                crate::error::OPTIONS,
                "SimConfig.max_time",
                format!(
                    "{:e} s at a time step of {dt:e} s is {steps:e} steps: expected at most {MAX_STEPS:e} \
                     steps; {remedy}",
                    config.max_time
                ),
            ));
        }
        let goal_masks: Vec<Array2<bool>> = scene.groups.iter().map(|g| g.goal_mask(&grid)).collect();
        let pedestrian_rule = pedestrian::SpeedRule::default();
        let pedestrian_floor = if scene.params.model == crate::params::Model::Pedestrian {
            pedestrian::Floor::new(&scene, pedestrian_rule.density_radius)
        } else {
            pedestrian::Floor::default()
        };
        let faces = fields::SceneFaces::new(&scene);
        let spans = FreeRuns::new(scene.obstacle.view()).span();
        let max_radius = agents.radius.iter().fold(0.05f32, |m, &r| m.max(r));
        // The headway looks as far ahead as the longest time gap the floor asks for.
        let pedestrian_time_gap = if pedestrian_floor.has_single_file(&grid, max_radius) {
            pedestrian_rule.single_file_time_gap
        } else {
            pedestrian_rule.time_gap
        };
        let mut spawned = vec![0usize; scene.groups.len()];
        for &g in &agents.group {
            spawned[g as usize] += 1;
        }
        let n = agents.len();
        let neighbors = NeighborGrid::new(grid.width() as f32, grid.height() as f32, 2.0 * max_radius);
        let log = AgentLog {
            walked: vec![0.0; n],
            left_at: vec![None; n],
            anchor: (0..n).map(|i| (agents.x[i], agents.y[i], 0.0)).collect(),
            start_at: agents.start_time.iter().map(|&t| t as f64).collect(),
        };
        let groups = scene.groups.len();
        let density_log = DensityLog {
            peak_map: Array2::zeros(grid.shape()),
            peak: (0.0, (0, 0), 0.0),
            group_peak: vec![(0.0, (0, 0), 0.0); groups],
            speed_sum: vec![(0.0, 0); groups],
        };
        let mut place_log = levels::PlaceLog::new(&grid, dt);
        place_log.record_occupancy(&grid, &agents.x, &agents.y, 0.0);
        Ok(Self {
            scene,
            agents,
            config,
            dt,
            time: 0.0,
            steps: 0,
            spawned,
            arrivals: Vec::new(),
            fields: None,
            potentials: Vec::new(),
            potentials_partial: false,
            whole_potentials: Vec::new(),
            times: StageTimes::default(),
            goal_masks,
            faces,
            spans,
            gradients: Vec::new(),
            local: None,
            solver_description: "cpu: fast marching".to_string(),
            local_description: None,
            neighbors,
            pedestrian_grid: NeighborGrid::new(
                grid.width() as f32,
                grid.height() as f32,
                pedestrian::look_radius(v_max as f32, max_radius, pedestrian_time_gap),
            ),
            pedestrian_rule,
            pedestrian_floor,
            gpu: None,
            gpu_run: None,
            gpu_reads: GpuReadBacks::default(),
            gpu_fallback: None,
            model_warnings: Vec::new(),
            model_source: None,
            local_mode: LocalMode::None,
            preferred: Vec::new(),
            // Pairs within the separation's slack are in contact, not colliding.
            collisions: CollisionCounter::with_slack(SEPARATION_SLACK),
            jams: JamTracker::default(),
            quality: QualityLog::default(),
            log,
            density_log,
            place_log,
        })
    }

    /// The scene (its `params.speed_law` selects the speed–density law).
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The size of this run that its memory estimate
    /// ([`crate::memory::RunSize::simulation_bytes`]) is computed from: the grid, the groups,
    /// the walkers spawned and the largest body.
    pub fn memory_size(&self) -> crate::memory::RunSize {
        crate::memory::RunSize {
            agents: self.spawned.iter().sum(),
            ..crate::memory::RunSize::of(&self.scene)
        }
    }

    /// The agents still walking (structure of arrays, in the simulation's order; arrived
    /// agents are removed).
    pub fn agents(&self) -> &Agents {
        &self.agents
    }

    /// The positions of the agents still walking, metres: `(x, y)`, one entry per agent in
    /// [`Simulation::agents`]' order. See `examples/embed/embed_loop.rs`.
    pub fn positions(&self) -> (&[f32], &[f32]) {
        (&self.agents.x, &self.agents.y)
    }

    /// The velocities of the last step, m/s: `(vx, vy)`, in [`Simulation::positions`]' order.
    pub fn velocities(&self) -> (&[f32], &[f32]) {
        (&self.agents.vx, &self.agents.vy)
    }

    /// The group index of each agent still walking, in [`Simulation::positions`]' order.
    pub fn groups(&self) -> &[u32] {
        &self.agents.group
    }

    /// The id of each agent still walking (ids are `0..n` at spawn and stay with the agent).
    pub fn ids(&self) -> &[u32] {
        &self.agents.id
    }

    /// Every arrival so far, in order.
    pub fn arrivals(&self) -> &[Arrival] {
        &self.arrivals
    }

    /// The simulated time, seconds.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The steps taken.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The time step, seconds (the given one, or the automatic one).
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// The configuration the run was built with.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// The number of agents spawned, per group.
    pub fn spawned(&self) -> &[usize] {
        &self.spawned
    }

    /// The fields of the last step (`None` before the first step). With the continuum step on
    /// the GPU they are read back from the device on the first call after a step (`None` if
    /// that read fails).
    pub fn fields(&self) -> Option<&Fields> {
        match (&self.gpu, &self.gpu_run) {
            (Some(ctx), Some(run)) if self.fields.is_none() && run.gpu_run.groups().is_some() => run
                .fields
                .get_or_init(|| ctx.continuum_fields(&run.gpu_run).ok())
                .as_ref(),
            _ => self.fields.as_ref(),
        }
    }

    /// The potential of each group from the last solve (empty before the first step); `+inf`
    /// beyond the walkers when the marches stopped there (see [`SimConfig::full_potentials`]
    /// and [`Simulation::whole_potential_at`]). With the continuum step on the GPU they are
    /// read back from the device on the first call after a solve (empty if that read fails).
    pub fn potentials(&self) -> &[Array2<f64>] {
        current_potentials(&self.potentials, self.gpu.as_deref(), self.gpu_run.as_ref())
    }

    /// What the host read back of the continuum step on the GPU so far (`None` when no step
    /// ran there): per step the walking velocities (and the pedestrian model's potentials per
    /// walker) and, on replanning steps, the solver's convergence state; on demand the fields
    /// and potentials the outputs ask for.
    pub fn gpu_read_backs(&self) -> Option<GpuReadBacks> {
        if self.gpu_reads.steps == 0 {
            return None;
        }
        let mut r = self.gpu_reads;
        if let Some(run) = &self.gpu_run {
            r.add_on_demand(run.on_demand());
        }
        Some(r)
    }

    /// The wall time spent in each stage so far.
    pub fn times(&self) -> &StageTimes {
        &self.times
    }

    /// Why the GPU solver was given up for the CPU one mid-run, when it was.
    pub fn gpu_fallback(&self) -> Option<&str> {
        self.gpu_fallback.as_deref()
    }

    /// Why the local layer's device failed mid-run and what the run did instead, when it did
    /// ([`LocalHook::fallback`]).
    pub fn local_fallback(&self) -> Option<String> {
        self.local.as_ref().and_then(|hook| hook.fallback())
    }

    /// What solves the potentials, in words: `cpu: fast marching`, `gpu: splat, fields, block
    /// FIM, gradients and walking velocities on <adapter>`, or for
    /// [`crate::gpu::Backend::Auto`] on the CPU the reason in parentheses.
    pub fn solver_description(&self) -> &str {
        &self.solver_description
    }

    /// Where the local layer runs, in words (`cpu-multi (N threads)`, `cpu-single`,
    /// `gpu on <adapter>`), or `None` without a local layer.
    pub fn local_description(&self) -> Option<&str> {
        self.local_description.as_deref()
    }

    /// Name of the Eikonal solver in use.
    pub fn solver_name(&self) -> &'static str {
        if self.gpu.is_some() {
            "gpu-continuum"
        } else {
            crate::eikonal::FMM_CPU
        }
    }

    /// True when every agent has arrived or another step would pass the time limit: a run
    /// takes whole steps of `dt` and ends at the last one not past `max_time` (at `max_time`
    /// itself when it is a multiple of `dt`), so `time` never exceeds `max_time`.
    pub fn finished(&self) -> bool {
        self.agents.is_empty() || self.time_after_step() > self.config.max_time + 1e-9
    }

    /// The simulated time after the next step (the step's own rounding, see [`Simulation::step`]).
    fn time_after_step(&self) -> f64 {
        ((self.steps + 1) as f64 * self.dt * 1e9).round() / 1e9
    }

    /// Runs steps until [`Simulation::finished`], calling `observe` after each step.
    pub fn run(&mut self, mut observe: impl FnMut(&Simulation) -> Result<()>) -> Result<()> {
        while !self.finished() {
            self.step();
            observe(self)?;
        }
        Ok(())
    }

    /// One step of SPEC §1. Returns the number of agents that arrived during it. Once
    /// [`Simulation::finished`] (every agent out, or the time limit reached) it does nothing and
    /// returns 0, so `time` never passes `max_time`.
    ///
    /// With a GPU ([`SimulationBuilder::backend`]) the splat, the speed and cost fields,
    /// (on replanning steps) the potentials and their gradients, and every walker's field
    /// velocity run on the device ([`GpuContext::continuum_velocities`]), which reads back only
    /// the velocities; fields and potentials stay there until [`Simulation::fields`] or
    /// [`Simulation::potentials`] asks for them. The whole of it is timed under "potentials".
    /// A GPU error switches the run to the CPU for good, with the reason in
    /// [`Simulation::gpu_fallback`].
    pub fn step(&mut self) -> usize {
        if self.finished() {
            return 0;
        }
        let grid = self.scene.grid;
        let due = self.steps.is_multiple_of(self.config.replan_every);
        let t0 = Instant::now();
        let (fields, sampled, t3) = match self.gpu_continuum_step(due) {
            Some(sampled) => {
                let t3 = Instant::now();
                self.times.potentials += (t3 - t0).as_secs_f64();
                (None, Some(sampled), t3)
            }
            None => {
                let replan = due || self.gradients.is_empty();
                // 1. Splat (all groups together).
                let density = fields::splat(&grid, self.scene.params.lambda, &self.agents);
                let t1 = Instant::now();
                self.times.splat += (t1 - t0).as_secs_f64();

                // 2. Speed and cost.
                let speed = fields::speed_with(&self.scene, &self.faces, &density);
                let cost = fields::unit_cost_with(&self.scene, &self.faces, speed.view());
                let t2 = Instant::now();
                self.times.fields += (t2 - t1).as_secs_f64();

                // 3. Potentials and gradients.
                if replan {
                    let h = grid.cell_size;
                    let whole = self.config.full_potentials || self.config.replan_every > 1;
                    self.potentials_partial = !whole;
                    let solutions = if whole {
                        eikonal::solve_groups(cost.view(), &self.goal_masks, h, self.config.order)
                    } else {
                        let needed = self.needed_cells();
                        eikonal::solve_groups_near(
                            cost.view(),
                            &self.goal_masks,
                            &needed,
                            h,
                            self.config.order,
                        )
                    };
                    self.adopt_potentials(solutions, &cost);
                }
                let t3 = Instant::now();
                self.times.potentials += (t3 - t2).as_secs_f64();
                (Some(Fields { density, speed, cost }), None, t3)
            }
        };

        // 4. Advection.
        self.record_density();
        let (old_x, old_y) = (self.agents.x.clone(), self.agents.y.clone());
        match (&fields, &sampled) {
            (_, Some(sampled)) => self.advect(FieldVelocity::Sampled(sampled)),
            (Some(fields), None) => self.advect(FieldVelocity::At(&fields.speed)),
            (None, None) => unreachable!("a step has CPU fields or GPU velocities"),
        }
        let t4 = Instant::now();
        self.times.advection += (t4 - t3).as_secs_f64();

        // 5. Separation.
        self.separate();
        let t5 = Instant::now();
        self.times.separation += (t5 - t4).as_secs_f64();

        // 6. Quality figures (collisions after separation, jams), bookkeeping and arrivals.
        let collisions = self.collisions.count(&self.agents);
        let jams = self.jams.update(&self.agents, &self.preferred, self.dt as f32);
        self.quality.record(&collisions, jams.jammed, jams.longest_s);
        // Rounded to the nanosecond: 299 * 0.1 is 29.900000000000002 in binary, and reports,
        // trajectories and plots should read 29.9.
        let step_began = self.time;
        self.time = self.time_after_step();
        self.steps += 1;
        self.track_motion(&old_x, &old_y, step_began);
        let arrived = self.remove_arrivals();
        self.place_log
            .record_occupancy(&self.scene.grid, &self.agents.x, &self.agents.y, self.time);
        self.times.advection += t5.elapsed().as_secs_f64();
        self.fields = fields;
        arrived
    }

    /// The GPU's continuum step (new potentials when `due` or none are on the device yet):
    /// every walker's field velocity, or `None` without a GPU or after a GPU error (which it
    /// records and which turns the GPU off for the rest of the run).
    fn gpu_continuum_step(&mut self, due: bool) -> Option<ContinuumVelocities> {
        let ctx = self.gpu.clone()?;
        match device_step(
            &ctx,
            &mut self.gpu_run,
            &self.scene,
            &self.agents,
            &self.goal_masks,
            due,
        ) {
            Ok(sampled) => {
                self.gpu_reads.steps += 1;
                self.gpu_reads.step_read_backs += sampled.read_backs.count;
                self.gpu_reads.step_bytes += sampled.read_backs.bytes;
                Some(sampled)
            }
            Err(e) => {
                self.gpu_fallback = Some(e.to_string());
                self.gpu = None;
                if let Some(run) = self.gpu_run.take() {
                    self.gpu_reads.add_on_demand(run.on_demand());
                }
                None
            }
        }
    }

    /// Per group, the cells whose potential (and upwind gradient) its walkers read in this
    /// step: the cells within [`NEEDED_REACH`] cells (chessboard distance) of each walker's
    /// cell. A walker reads the direction of its cell and of the four cell centres around it,
    /// one cell away at most; the second cell is a margin for rounding at cell edges.
    fn needed_cells(&self) -> Vec<Array2<bool>> {
        let grid = self.scene.grid;
        let reach = NEEDED_REACH;
        let mut needed = vec![Array2::from_elem(grid.shape(), false); self.scene.groups.len()];
        if grid.is_empty() {
            return needed;
        }
        let h = grid.cell_size;
        let a = &self.agents;
        for i in 0..a.len() {
            // The containing cell as `velocity_at` finds it (NaN and negatives go to 0).
            let r = ((a.y[i] as f64 / h) as usize).min(grid.rows - 1);
            let c = ((a.x[i] as f64 / h) as usize).min(grid.cols - 1);
            let mask = &mut needed[a.group[i] as usize];
            let (r0, r1) = (r.saturating_sub(reach), (r + reach).min(grid.rows - 1));
            let (c0, c1) = (c.saturating_sub(reach), (c + reach).min(grid.cols - 1));
            mask.slice_mut(ndarray::s![r0..=r1, c0..=c1]).fill(true);
        }
        needed
    }

    /// The potential of `group` at cell `rc` as a whole-grid march of the last solve gives it:
    /// the stored value where the march reached the cell, else (a cell the last march stopped
    /// short of: a walker pushed far since, or no walker near) a whole-grid march of that group
    /// on the last step's cost, solved here once per group. The CPU march is deterministic, so this is the
    /// value a run with [`SimConfig::full_potentials`] holds; the report uses it to tell
    /// unreachable walkers from the others. `+inf` (no way out) for a group that is not one of
    /// the scene's, a cell outside the grid, or before the first step.
    pub fn whole_potential_at(&self, group: usize, rc: (usize, usize)) -> f64 {
        let Some(&value) = self.potentials().get(group).and_then(|phi| phi.get(rc)) else {
            return f64::INFINITY;
        };
        if value.is_finite() || !self.potentials_partial {
            return value;
        }
        let (Some(fields), Some(cache)) = (&self.fields, self.whole_potentials.get(group)) else {
            return value;
        };
        let whole = cache.get_or_init(|| {
            let h = self.scene.grid.cell_size;
            eikonal::solve_fmm(
                fields.cost.view(),
                self.goal_masks[group].view(),
                h,
                self.config.order,
            )
            .phi
        });
        whole[rc]
    }

    /// Takes new potentials: their upwind gradients on `cost`, groups in parallel.
    fn adopt_potentials(&mut self, solutions: Vec<eikonal::Solution>, cost: &Array3<f32>) {
        let h = self.scene.grid.cell_size;
        self.gradients = solutions
            .par_iter()
            .map(|s| gradient::gradient(s.phi.view(), cost.view(), h))
            .collect();
        self.potentials = solutions.into_iter().map(|s| s.phi).collect();
        self.whole_potentials = self
            .potentials
            .iter()
            .map(|_| std::sync::OnceLock::new())
            .collect();
    }

    /// Peak density bookkeeping (before agents move), in measured densities: persons counted
    /// in at least 1 m² ([`measure::measured_density`]), not the model's splat; the levels of
    /// service count over [`levels::LOS_AREA_M2`] the walkers who have started (people still
    /// in their pre-movement time stand and queue for nothing).
    fn record_density(&mut self) {
        let grid = &self.scene.grid;
        let persons = measure::persons_per_cell(grid, &self.agents.x, &self.agents.y);
        let measured = measure::measured_density(persons.view(), grid.cell_size);
        let walkway = measure::measured_density_over(persons.view(), grid.cell_size, levels::LOS_AREA_M2);
        let any_waiting = (0..self.agents.len()).any(|i| self.is_waiting(i));
        let started = any_waiting.then(|| {
            let (xs, ys): (Vec<f32>, Vec<f32>) = (0..self.agents.len())
                .filter(|&i| !self.is_waiting(i))
                .map(|i| (self.agents.x[i], self.agents.y[i]))
                .unzip();
            let persons = measure::persons_per_cell(grid, &xs, &ys);
            measure::measured_density_over(persons.view(), grid.cell_size, levels::LOS_AREA_M2)
        });
        self.place_log.record_levels(
            started.as_ref().unwrap_or(&walkway).view(),
            walkway.view(),
            self.scene.obstacle.view(),
        );
        let log = &mut self.density_log;
        for ((rc, &rho), peak) in measured.indexed_iter().zip(log.peak_map.iter_mut()) {
            if rho > *peak {
                *peak = rho;
            }
            if rho > log.peak.0 {
                log.peak = (rho, rc, self.time);
            }
        }
        for i in 0..self.agents.len() {
            if let Some(rc) = grid.cell_of(self.agents.x[i] as f64, self.agents.y[i] as f64) {
                let g = self.agents.group[i] as usize;
                let rho = measured[rc];
                if rho > log.group_peak[g].0 {
                    log.group_peak[g] = (rho, rc, self.time);
                }
            }
        }
    }

    /// Preferred velocity, local layer, integration with walls.
    fn advect(&mut self, field: FieldVelocity<'_>) {
        let grid = self.scene.grid;
        let agents = &self.agents;
        let gradients = &self.gradients;
        let now = self.time;
        let (mut vx, mut vy): (Vec<f32>, Vec<f32>) = (0..agents.len())
            .into_par_iter()
            .map(|i| {
                if now < agents.start_time[i] as f64 {
                    // Pre-movement: standing where it was placed.
                    return (0.0, 0.0);
                }
                let g = agents.group[i] as usize;
                let [mut ux, mut uy] = match field {
                    FieldVelocity::At(speed) => {
                        gradient::velocity_at(&grid, &gradients[g], speed.view(), agents.x[i], agents.y[i])
                    }
                    FieldVelocity::Sampled(v) => [v.vx[i], v.vy[i]],
                };
                if !(ux.is_finite() && uy.is_finite()) {
                    (ux, uy) = (0.0, 0.0);
                }
                let s = (ux * ux + uy * uy).sqrt();
                let cap = agents.max_speed[i];
                if s > cap && s > 0.0 {
                    ux *= cap / s;
                    uy *= cap / s;
                }
                (ux, uy)
            })
            .unzip();
        if self.scene.params.model == crate::params::Model::Pedestrian {
            match field {
                FieldVelocity::At(_) => pedestrian::apply(
                    &self.scene,
                    &self.faces,
                    &self.agents,
                    &self.potentials,
                    &mut self.pedestrian_grid,
                    self.pedestrian_rule,
                    &self.pedestrian_floor,
                    &mut vx,
                    &mut vy,
                ),
                // Sampled on the device: potentials[group * agents + agent].
                FieldVelocity::Sampled(v) => {
                    let n = self.agents.len();
                    let phi_at = |group: usize, j: usize| -> f64 {
                        match v.potentials.get(group * n + j) {
                            Some(&p) if p < crate::gpu::PHI_INF => f64::from(p),
                            _ => f64::INFINITY,
                        }
                    };
                    pedestrian::apply_with(
                        &self.scene,
                        &self.faces,
                        &self.agents,
                        phi_at,
                        &mut self.pedestrian_grid,
                        self.pedestrian_rule,
                        &self.pedestrian_floor,
                        &mut vx,
                        &mut vy,
                    );
                }
            }
        }
        self.preferred.clear();
        self.preferred.extend(vx.iter().zip(&vy).map(|(&x, &y)| [x, y]));
        if let Some(layer) = self.local.as_mut() {
            layer.adjust(&self.scene, &self.agents, self.dt, &mut vx, &mut vy);
        }
        let dt = self.dt as f32;
        let scene = &self.scene;
        let spans = self.spans.view();
        let agents = &self.agents;
        let bodies = self.bodies_clear_walls();
        let moved: Vec<(f32, f32, f32, f32)> = (0..agents.len())
            .into_par_iter()
            .map(|i| {
                let (x0, y0) = (agents.x[i], agents.y[i]);
                let body = Body::new(agents.radius[i], scene.grid.cell_size, bodies);
                let q = slide_body(scene, spans, body, V2::new(x0, y0), V2::new(vx[i], vy[i]), dt);
                (q.x, q.y, (q.x - x0) / dt, (q.y - y0) / dt)
            })
            .collect();
        let a = &mut self.agents;
        for (i, (x, y, ux, uy)) in moved.into_iter().enumerate() {
            a.x[i] = x;
            a.y[i] = y;
            a.vx[i] = ux;
            a.vy[i] = uy;
        }
    }

    /// Whether walls stop the walkers' bodies (the pedestrian model) rather than their centres
    /// (the published model): [`slide_body`] is given the walker's radius as its rim, else 0.
    /// In both models no body enters an opening narrower than itself.
    fn bodies_clear_walls(&self) -> bool {
        self.scene.params.model == crate::params::Model::Pedestrian
    }

    /// Pushes overlapping pairs apart until every pair is within `SEPARATION_SLACK / 2` of its
    /// minimum distance or `SEPARATION_MAX_ITERATIONS` is reached. Each iteration is a Jacobi
    /// sweep: every agent moves by half of each of its overlaps ([`Push`] under [`SEPARATION`]),
    /// computed from the positions at the start of the iteration, then walls are enforced
    /// ([`slide_body`]: no push crosses a wall or carries a body into an opening narrower than
    /// itself).
    fn separate(&mut self) {
        let scene = &self.scene;
        let spans = self.spans.view();
        let bodies = self.bodies_clear_walls();
        for _ in 0..SEPARATION_MAX_ITERATIONS {
            let a = &self.agents;
            self.neighbors.rebuild(&a.x, &a.y);
            let grid = &self.neighbors;
            let pushes: Vec<(V2, f32)> = (0..a.len())
                .into_par_iter()
                .map(|i| {
                    let p = V2::new(a.x[i], a.y[i]);
                    let mut push = Push::default();
                    grid.for_each_near(p.x, p.y, |j| {
                        let j = j as usize;
                        if j == i {
                            return;
                        }
                        let d = p - V2::new(a.x[j], a.y[j]);
                        // Coincident agents split along a direction fixed by their indices.
                        push.add(SEPARATION, d, a.radius[i] + a.radius[j], 0.5, || {
                            coincident_direction((i.min(j) * 7919 + i.max(j)) as u64, i < j)
                        });
                    });
                    (push.total(a.radius[i]), push.worst)
                })
                .collect();
            let worst = pushes.iter().fold(0.0f32, |m, p| m.max(p.1));
            if (worst as f64) < 0.5 * SEPARATION_SLACK {
                break;
            }
            let a = &mut self.agents;
            for (i, (push, _)) in pushes.into_iter().enumerate() {
                if push != V2::ZERO {
                    let body = Body::new(a.radius[i], scene.grid.cell_size, bodies);
                    let q = slide_body(scene, spans, body, V2::new(a.x[i], a.y[i]), push, 1.0);
                    a.x[i] = q.x;
                    a.y[i] = q.y;
                }
            }
        }
    }

    /// Distance walked and the stuck-anchor of every agent. An agent still in its pre-movement
    /// time during this step (`step_began` is the time the step began) counts in neither the
    /// speeds nor the stuck test (its anchor follows it: others may push it).
    fn track_motion(&mut self, old_x: &[f32], old_y: &[f32], step_began: f64) {
        let a = &self.agents;
        let log = &mut self.log;
        for i in 0..a.len() {
            let id = a.id[i] as usize;
            if step_began < a.start_time[i] as f64 {
                log.anchor[id] = (a.x[i], a.y[i], self.time);
                continue;
            }
            let step = (((a.x[i] - old_x[i]).powi(2) + (a.y[i] - old_y[i]).powi(2)) as f64).sqrt();
            log.walked[id] += step;
            let g = a.group[i] as usize;
            let ss = &mut self.density_log.speed_sum[g];
            ss.0 += step / self.dt;
            ss.1 += 1;
            let (ax, ay, _) = log.anchor[id];
            if (((a.x[i] - ax).powi(2) + (a.y[i] - ay).powi(2)) as f64) > STUCK_DISTANCE * STUCK_DISTANCE {
                log.anchor[id] = (a.x[i], a.y[i], self.time);
            }
        }
    }

    /// Removes the agents standing on a goal cell of their group; returns how many.
    fn remove_arrivals(&mut self) -> usize {
        let grid = self.scene.grid;
        let a = &self.agents;
        let mut keep = vec![true; a.len()];
        let mut count = 0;
        for i in 0..a.len() {
            let Some(rc) = grid.cell_of(a.x[i] as f64, a.y[i] as f64) else {
                continue;
            };
            let g = a.group[i] as usize;
            if !self.goal_masks[g][rc] {
                continue;
            }
            let exit = self.scene.groups[g]
                .goals
                .iter()
                .position(|area| area.mask[rc])
                .unwrap_or(0);
            self.arrivals.push(Arrival {
                id: a.id[i],
                group: a.group[i],
                exit,
                time: self.time,
            });
            self.log.left_at[a.id[i] as usize] = Some(self.time);
            keep[i] = false;
            count += 1;
        }
        if count > 0 {
            self.agents.retain(|i| keep[i]);
        }
        count
    }

    /// Puts agent `i` (an index into [`Simulation::agents`]) at `(x, y)` without walking there
    /// (a scripted move): the next step starts from there, and the report reads it as where the
    /// agent stands. Every cache that depends on positions is rebuilt by the step itself.
    ///
    /// # Errors
    /// [`Error::Invalid`], leaving the agent where it was, when `i` is not an index of
    /// [`Simulation::agents`] or `(x, y)` is not a finite point inside the domain in a free
    /// (non-obstacle) cell ([`Scene::position_problem`]).
    pub fn set_position(&mut self, i: usize, x: f32, y: f32) -> Result<()> {
        let n = self.agents.len();
        if i >= n {
            return Err(Error::invalid(
                "<set_position>",
                "i",
                format!("{i}: expected the index of one of the {n} agents"),
            ));
        }
        if let Some(problem) = self.scene.position_problem(x, y, true) {
            return Err(Error::invalid(
                "<set_position>",
                format!("x, y of agent {i}"),
                problem,
            ));
        }
        self.agents.x[i] = x;
        self.agents.y[i] = y;
        Ok(())
    }

    /// Whether agent `i` (an index into [`Simulation::agents`]) is still waiting out its
    /// pre-movement time: it has not taken a step yet. The report's `remaining.waiting` and
    /// the frames' titles count these apart from the walkers.
    pub fn is_waiting(&self, i: usize) -> bool {
        self.time < self.agents.start_time[i] as f64
    }

    /// Level of service and clear time per cell over the run so far.
    pub fn places(&self) -> &levels::PlaceLog {
        &self.place_log
    }

    /// The report of the run so far.
    pub fn report(&self) -> Report {
        report::build(self)
    }
}
