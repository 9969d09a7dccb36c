//! Crowd simulation through the continuum fields (SPEC §1): spawn, step, arrivals, report.
//!
//! [`Simulation::step`] is the list of its stages, each timed by one
//! [`StageTimer`](crate::stages::StageTimer):
//! 1. **the continuum** ([`crate::plan::Planner::continuum_step`]): every group's agents
//!    splatted into one density (SPEC §2), the anisotropic speed and unit cost (§3), one
//!    Eikonal solve per group and its upwind gradient (every step by default or every
//!    `replan_every` steps); on a GPU all of it on the device, which returns every walker's
//!    field velocity;
//! 2. **the walk** (`walk.rs`): each agent's preferred velocity is the field velocity at its
//!    position capped at its maximum speed, the pedestrian model sets its speed, the optional
//!    [`LocalHook`] turns preferred into actual velocities; positions are integrated, sliding
//!    along walls;
//! 3. **the separation**: pairs closer than the sum of their radii are pushed apart (Jacobi
//!    iterations over a [`crate::neighbors::NeighborGrid`]), walls still enforced;
//! 4. **the run's logs** (`logs.rs`): quality, each walker's motion, densities, places, and the
//!    agents standing on a goal cell of their group are removed and their arrival recorded.
//!
//! The simulation does no I/O: [`crate::run::output`] writes the report, plots, frames and trajectories.
//! Results depend only on the scene, the configuration and the seed, never on the thread count:
//! every parallel loop computes per-agent values from the previous state and collects them in
//! agent order.

pub mod builder;
pub mod dynamic;
mod exits;
pub mod levels;
pub mod local_bridge;
mod logs;
pub mod measure;
pub mod movers;
pub mod pedestrian;
pub mod report;
pub mod routes;
pub mod spawn;
mod verdict;
mod walk;

use crate::agents::Agents;
use crate::collision::overlap::{PushRule, Unit};
use crate::eikonal::Order;
use crate::error::{Error, Result};
use crate::fields::Fields;
use crate::local::LocalMode;
use crate::plan::Planner;
use crate::scene::Scene;
use crate::stages::{Stage, StageTimer};
use ndarray::Array2;
use serde::{Deserialize, Serialize};

pub use crate::plan::GpuReadBacks;
pub use crate::stages::StageTimes;
pub use builder::SimulationBuilder;
pub use dynamic::{ExitChange, StepEvents};
pub use movers::Obstacle;
pub use report::Report;
pub use routes::{Goal, SceneChange, StagePassed};
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

/// One arrival: which agent (its id, the handle of [`Simulation::handles`]) reached which exit
/// of its group, and when
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
    /// The continuum stage: fields, potentials and gradients, on the CPU or a GPU.
    pub(crate) planner: Planner,
    /// The walk's state: walls, neighbour grids, the pedestrian model, the local layer.
    pub(crate) walk: walk::WalkState,
    /// The run's logs for the report.
    pub(crate) logs: logs::RunLogs,
    /// Wall time per stage.
    pub(crate) times: StageTimes,
    /// Where the local layer runs, in words, when there is one.
    pub(crate) local_description: Option<String>,
    /// Warnings about the run's set-up that the report repeats: the map's own
    /// ([`crate::map::warnings`]), the published model's, a local layer on a map with exits
    /// ([`builder::local_layer_warning`]).
    pub(crate) model_warnings: Vec<String>,
    /// Why the scene's model runs, in words ([`SimulationBuilder::model_source`]).
    pub(crate) model_source: Option<String>,
    /// The local layer asked of the builder (`None` also for a caller's hook).
    pub(crate) local_mode: LocalMode,
    /// What changes while the run goes: exit events, sources, the API's walkers ([`dynamic`]).
    pub(crate) dynamics: dynamic::Dynamics,
    /// Each walker's route, goal and potential; the waiting areas released ([`routes`]).
    pub(crate) routes: routes::RouteRun,
    /// The moving obstacles ([`movers`]).
    pub(crate) movers: movers::Movers,
}

impl Simulation {
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

    /// The id of each agent still walking (ids are `0..n` at spawn and stay with the agent;
    /// later walkers take the next ones; the same as [`Simulation::handles`]).
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
        self.planner.fields()
    }

    /// The potential of each group from the last solve (empty before the first step); `+inf`
    /// beyond the walkers when the marches stopped there (see [`SimConfig::full_potentials`]
    /// and [`Simulation::whole_potential_at`]). With the continuum step on the GPU they are
    /// read back from the device on the first call after a solve (empty if that read fails).
    pub fn potentials(&self) -> &[Array2<f64>] {
        self.planner.potentials()
    }

    /// What the host read back of the continuum step on the GPU so far (`None` when no step
    /// ran there): per step the walking velocities (and the pedestrian model's potentials per
    /// walker) and, on replanning steps, the solver's convergence state; on demand the fields
    /// and potentials the outputs ask for.
    pub fn gpu_read_backs(&self) -> Option<GpuReadBacks> {
        self.planner.gpu_read_backs()
    }

    /// The wall time spent in each stage so far.
    pub fn times(&self) -> &StageTimes {
        &self.times
    }

    /// Why the GPU solver was given up for the CPU one mid-run, when it was.
    pub fn gpu_fallback(&self) -> Option<&str> {
        self.planner.fallback()
    }

    /// Why the local layer's device failed mid-run and what the run did instead, when it did
    /// ([`LocalHook::fallback`]).
    pub fn local_fallback(&self) -> Option<String> {
        self.walk.local.as_ref().and_then(|hook| hook.fallback())
    }

    /// What solves the potentials, in words: `cpu: fast marching`, `gpu: splat, fields, block
    /// FIM, gradients and walking velocities on <adapter>`, or for
    /// [`crate::gpu::Backend::Auto`] on the CPU the reason in parentheses.
    pub fn solver_description(&self) -> &str {
        self.planner.description()
    }

    /// What the walkers' bodies meet in this run: [`crate::map::Walls::Exact`] when the map asks
    /// for exact walls and the pedestrian model walks them, else the obstacle cells' edges.
    pub fn walls(&self) -> crate::map::Walls {
        if self.walk.walls.is_some() {
            crate::map::Walls::Exact
        } else {
            crate::map::Walls::Cells
        }
    }

    /// Where the local layer runs, in words (`cpu-multi (N threads)`, `cpu-single`,
    /// `gpu on <adapter>`), or `None` without a local layer.
    pub fn local_description(&self) -> Option<&str> {
        self.local_description.as_deref()
    }

    /// Name of the Eikonal solver in use.
    pub fn solver_name(&self) -> &'static str {
        if self.planner.on_gpu() {
            "gpu-continuum"
        } else {
            crate::eikonal::FMM_CPU
        }
    }

    /// True when every agent has arrived and no source has walkers still to bring, or another
    /// step would pass the time limit: a run takes whole steps of `dt` and ends at the last one
    /// not past `max_time` (at `max_time` itself when it is a multiple of `dt`), so `time` never
    /// exceeds `max_time`. A walker added ([`Simulation::add_walker`]) to a finished run that
    /// is not at its time limit sets it going again.
    pub fn finished(&self) -> bool {
        (self.agents.is_empty() && !self.dynamics.sources_pending())
            || self.time_after_step() > self.config.max_time + 1e-9
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

    /// One step of SPEC §1, as the list of its stages, after what the scene's schedule makes due
    /// (exits opening or closing, which the potentials see in this step, and the sources'
    /// walkers). Returns the step's events: the arrivals with their exits, the exits that
    /// opened or closed, the walkers that came in. Once [`Simulation::finished`] (every agent
    /// out, or the time limit reached) it does nothing and returns no event, so `time` never
    /// passes `max_time`.
    ///
    /// With a GPU ([`SimulationBuilder::backend`]) the splat, the speed and cost fields,
    /// (on replanning steps) the potentials and their gradients, and every walker's field
    /// velocity run on the device, which reads back only the velocities; fields and potentials
    /// stay there until [`Simulation::fields`] or [`Simulation::potentials`] asks for them. The
    /// whole of it is timed under "potentials". A GPU error switches the run to the CPU for
    /// good, with the reason in [`Simulation::gpu_fallback`].
    pub fn step(&mut self) -> StepEvents {
        if self.finished() {
            return StepEvents {
                time: self.time,
                ..StepEvents::default()
            };
        }
        let mut events = self.apply_schedule();
        events.stages = self.route_step();
        self.move_obstacles();
        let mut timer = StageTimer::start();
        let replan = self.steps.is_multiple_of(self.config.replan_every);
        // The potential each walker follows stands in its group for the continuum step.
        self.swap_route_fields();
        let field = self
            .planner
            .continuum_step(&self.scene, &self.agents, replan, &mut timer);
        self.swap_route_fields();
        self.record_density();
        let (old_x, old_y) = (self.agents.x.clone(), self.agents.y.clone());
        self.advect(&field);
        timer.lap(Stage::Advection);
        self.separate();
        (events.blocked, events.pushed) = self.clear_obstacles();
        timer.lap(Stage::Separation);
        let before = self.arrivals.len();
        self.log_step(&old_x, &old_y);
        timer.lap(Stage::Advection);
        timer.add_to(&mut self.times);
        events.arrivals = self.arrivals[before..].to_vec();
        events.time = self.time;
        events
    }

    /// The potential of `group` at cell `rc` as a whole-grid march of the last solve gives it:
    /// the stored value where the march reached the cell, else (a cell the last march stopped
    /// short of: a walker pushed far since, or no walker near) a whole-grid march of that group
    /// on the last step's cost, solved here once per group. The CPU march is deterministic, so this is the
    /// value a run with [`SimConfig::full_potentials`] holds; the report uses it to tell
    /// unreachable walkers from the others. `+inf` (no way out) for a group that is not one of
    /// the scene's, a cell outside the grid, or before the first step.
    pub fn whole_potential_at(&self, group: usize, rc: (usize, usize)) -> f64 {
        self.planner.whole_potential_at(&self.scene, group, rc)
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
        &self.logs.places
    }

    /// The report of the run so far.
    pub fn report(&self) -> Report {
        report::build(self)
    }
}
