//! [`SimulationBuilder`]: everything a run needs in one place (the configuration, the local
//! layer and where each stage runs), checked and assembled by [`SimulationBuilder::build`].
//!
//! ```
//! use crowdfield::prelude::*;
//!
//! let scene = crowdfield::map::load(concat!(env!("CARGO_MANIFEST_DIR"), "/maps/corridor.json"))?;
//! let mut sim = Simulation::builder(scene)
//!     .seed(7)
//!     .local(LocalMode::Orca)
//!     .backend(Backend::Cpu)
//!     .max_time(120.0)
//!     .build()?;
//! while !sim.finished() {
//!     sim.step();
//! }
//! assert_eq!(sim.arrivals().len(), sim.spawned().iter().sum::<usize>());
//! # Ok::<(), crowdfield::Error>(())
//! ```

use super::local_bridge::LocalBridge;
use super::logs::{AgentLog, DensityLog, QualityLog, RunLogs};
use super::walk::WalkState;
use super::{
    AUTO_DT_CFL, DEFAULT_DT, LocalHook, MAX_STEPS, SEPARATION_SLACK, SimConfig, Simulation, levels,
    pedestrian, spawn,
};
use crate::agents::Agents;
use crate::collision::walls::FreeRuns;
use crate::eikonal::Order;
use crate::error::{Error, Result};
use crate::gpu::{Backend, GpuContext};
use crate::local::quality::{CollisionCounter, JamTracker};
use crate::local::{LocalBackend, LocalMode};
use crate::neighbors::NeighborGrid;
use crate::plan::{PlanOptions, Planner};
use crate::scene::Scene;
use crate::stages::StageTimes;
use std::sync::Arc;

/// Collects what a run needs and builds the [`Simulation`]; made by [`Simulation::builder`].
/// Every setter has the default of [`SimConfig::default`] (or: no local layer, every stage on
/// the CPU, the agents spawned from the seed). See the [module example](self).
#[must_use = "a builder does nothing until `build` is called"]
pub struct SimulationBuilder {
    scene: Scene,
    config: SimConfig,
    agents: Option<Agents>,
    local: LocalMode,
    local_backend: LocalBackend,
    hook: Option<Box<dyn LocalHook>>,
    backend: Backend,
    gpu: Option<Arc<GpuContext>>,
    model_source: Option<String>,
}

impl SimulationBuilder {
    pub(super) fn new(scene: Scene) -> Self {
        Self {
            scene,
            config: SimConfig::default(),
            agents: None,
            local: LocalMode::None,
            local_backend: LocalBackend::CpuMulti,
            hook: None,
            backend: Backend::Cpu,
            gpu: None,
            model_source: None,
        }
    }

    /// The whole configuration at once (the setters below change one field of it).
    /// See the [module example](self).
    pub fn config(mut self, config: SimConfig) -> Self {
        self.config = config;
        self
    }

    /// The seed of the run ([`SimConfig::seed`]): it seeds the spawn positions, speeds and
    /// pre-movement times, and the local layer's symmetry-breaking perturbation
    /// ([`crate::local::LocalLayer::set_seed`]). The same seed repeats a run bit for bit.
    /// See the [module example](self).
    pub fn seed(mut self, seed: u64) -> Self {
        self.config.seed = seed;
        self
    }

    /// The time step, seconds ([`SimConfig::dt`]); without one the largest stable step is
    /// picked.
    /// See the [module example](self).
    pub fn dt(mut self, dt: f64) -> Self {
        self.config.dt = Some(dt);
        self
    }

    /// The time limit, seconds ([`SimConfig::max_time`]).
    /// See the [module example](self).
    pub fn max_time(mut self, seconds: f64) -> Self {
        self.config.max_time = seconds;
        self
    }

    /// Recompute the potentials every `steps` steps ([`SimConfig::replan_every`]).
    /// See the [module example](self).
    pub fn replan_every(mut self, steps: usize) -> Self {
        self.config.replan_every = steps;
        self
    }

    /// The order of the fast-marching update ([`SimConfig::order`]).
    /// See the [module example](self).
    pub fn order(mut self, order: Order) -> Self {
        self.config.order = order;
        self
    }

    /// Solve every potential over the whole grid ([`SimConfig::full_potentials`]).
    /// See the [module example](self).
    pub fn full_potentials(mut self, whole: bool) -> Self {
        self.config.full_potentials = whole;
        self
    }

    /// Start from these agents (ids `0..n` in order) instead of spawning from the seed;
    /// [`SimulationBuilder::build`] checks them. See the [module example](self).
    pub fn agents(mut self, agents: Agents) -> Self {
        self.agents = Some(agents);
        self
    }

    /// The local layer between preferred and actual velocities ([`LocalMode`]; none by
    /// default). Groups without goals flock under the boids modes.
    /// See the [module example](self).
    pub fn local(mut self, mode: LocalMode) -> Self {
        self.local = mode;
        self
    }

    /// Where the local layer runs ([`LocalBackend`]; all cores by default).
    /// See the [module example](self).
    pub fn local_backend(mut self, backend: LocalBackend) -> Self {
        self.local_backend = backend;
        self
    }

    /// A hook of one's own in place of the local layer of [`SimulationBuilder::local`].
    /// See the [module example](self).
    pub fn local_hook(mut self, hook: Box<dyn LocalHook>) -> Self {
        self.hook = Some(hook);
        self
    }

    /// Where splat, fields and potentials run: the CPU (default), the GPU (an error in
    /// [`SimulationBuilder::build`] when none opens), or `Auto` (the GPU for grids of 512²
    /// cells and more when a hardware adapter opens, else the CPU, saying why in
    /// [`Simulation::solver_description`]).
    /// See the [module example](self).
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// The GPU context to run on with [`Backend::Gpu`] or [`Backend::Auto`] (instead of opening
    /// one), shared with other work.
    /// See the [module example](self).
    pub fn gpu(mut self, ctx: Arc<GpuContext>) -> Self {
        self.gpu = Some(ctx);
        self
    }

    /// Why the scene's model is the one that runs, in words, for the report's
    /// [`super::report::Inputs::model_source`] (`simulate` says whether the map's `params`,
    /// its `"model"` or `--model` chose it). Without it the report says the caller chose it.
    pub fn model_source(mut self, why: impl Into<String>) -> Self {
        self.model_source = Some(why.into());
        self
    }

    /// Checks the scene, the agents and the configuration, spawns the agents (unless given),
    /// opens the GPU and the local layer as asked, and returns the simulation at time 0. See
    /// the [module example](self).
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] naming the [`SimConfig`] field for a configuration that cannot
    /// run (a time step that is not positive or lets a walker cross more than a cell, a time
    /// limit that is not finite, shorter than one step or of more than [`super::MAX_STEPS`]
    /// steps, `replan_every` 0, second order on the GPU); the scene's problems
    /// ([`Scene::check`]: masks of another shape than the grid, a goal without a free cell, a
    /// grid without cells or with a cell size that is not positive and finite); the given
    /// agents' ([`crate::agents::Agents::check_on`]: columns of different lengths, a group
    /// index past the scene's groups, a position that is not finite, outside the domain or in
    /// an obstacle cell); the spawn's errors; a run whose memory estimate
    /// ([`crate::memory::RunSize::simulation_bytes`]) exceeds what the machine has free or the
    /// process may take (at `grid`, with the amount, [`crate::memory::ensure_available`]);
    /// [`crate::Error::Gpu`] when
    /// [`Backend::Gpu`] or [`LocalBackend::Gpu`] finds no adapter.
    pub fn build(self) -> Result<Simulation> {
        let Self {
            scene,
            config,
            agents,
            local,
            local_backend,
            hook,
            backend,
            gpu,
            model_source,
        } = self;
        crate::plan::check_order(backend, config.order)?;
        scene.check()?;
        let agents = match agents {
            Some(agents) => agents,
            None => spawn::spawn_agents(&scene, config.seed)?,
        };
        let size = crate::memory::RunSize {
            agents: agents.len(),
            ..crate::memory::RunSize::of(&scene)
        };
        crate::memory::ensure_available(
            size.simulation_bytes(),
            &scene.name,
            "grid",
            &format!("a run of {}", size.describe()),
        )?;
        let seed = config.seed;
        let (max_radius, v_max) = super::dynamic::walker_limits(&scene, &agents);
        let dt = checked_time_step(&scene, &config, &agents, v_max)?;
        // A march may stop past the walkers only when every step replans.
        let whole_marches = config.full_potentials || config.replan_every > 1;
        let plan_options = PlanOptions {
            order: config.order,
            backend,
            gpu,
        };
        let mut planner = Planner::for_run(&scene, &plan_options, whole_marches)?;
        let routes = super::routes::RouteRun::new(&scene, seed, &mut planner);
        let mut model_warnings = crate::map::warnings(&scene);
        if let Some(w) = model_warning(&scene) {
            model_warnings.push(w);
        }
        let (local_hook, local_description, local_mode): (Option<Box<dyn LocalHook>>, _, _) = match hook {
            Some(hook) => (
                Some(hook),
                Some("a caller's local hook".to_string()),
                LocalMode::None,
            ),
            None if local != LocalMode::None => {
                if let Some(w) = local_layer_warning(&scene, local) {
                    model_warnings.push(w);
                }
                let mut bridge = LocalBridge::new(local, local_backend)?;
                bridge.set_seed(seed);
                let description = bridge.layer().backend_description();
                (Some(Box::new(bridge)), Some(description), local)
            }
            None => (None, None, LocalMode::None),
        };
        let walk = walk_state(&scene, (max_radius, v_max), local_hook);
        let dynamics = super::dynamic::Dynamics::new(&scene, &agents, seed, max_radius, v_max);
        let mut spawned = vec![0usize; scene.groups.len()];
        for &g in &agents.group {
            spawned[g as usize] += 1;
        }
        let logs = run_logs(&scene, &agents, dt);
        let movers = super::movers::Movers::new(&scene.schedule.movers);
        Ok(Simulation {
            scene,
            agents,
            config,
            dt,
            time: 0.0,
            steps: 0,
            spawned,
            arrivals: Vec::new(),
            planner,
            walk,
            logs,
            times: StageTimes::default(),
            local_description,
            model_warnings,
            model_source,
            local_mode,
            dynamics,
            routes,
            movers,
        })
    }
}

/// Checks a run's agents on `scene` (checked already) and its configuration, and returns the
/// time step: the given one, or the automatic one for walkers of at most `v_max` m/s.
fn checked_time_step(scene: &Scene, config: &SimConfig, agents: &Agents, v_max: f64) -> Result<f64> {
    agents.check_on(scene, true)?;
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
    Ok(dt)
}

/// The walk's state at time 0: the free floor per cell, the separation's and the pedestrian
/// model's neighbour grids (bins as wide as the largest body and as far as a walker looks, for
/// the run's largest radius and fastest speed, `limits`).
fn walk_state(scene: &Scene, limits: (f32, f64), local: Option<Box<dyn LocalHook>>) -> WalkState {
    let grid = scene.grid;
    let (max_radius, v_max) = limits;
    let pedestrian_rule = pedestrian::SpeedRule::default();
    let pedestrian_floor = if scene.params.model == crate::params::Model::Pedestrian {
        pedestrian::Floor::new(scene, pedestrian_rule.density_radius)
    } else {
        pedestrian::Floor::default()
    };
    // The headway looks as far ahead as the longest time gap the floor asks for.
    let pedestrian_time_gap = if pedestrian_floor.has_single_file(&grid, max_radius) {
        pedestrian_rule.single_file_time_gap
    } else {
        pedestrian_rule.time_gap
    };
    // Exact walls: a map that asks for them, walked by bodies.
    let exact = scene.exact_walls && scene.params.model == crate::params::Model::Pedestrian;
    let walls = exact.then(|| {
        let mut walls = crate::collision::WallSegments::from_scene(scene);
        for &(g, e) in &scene.schedule.closed {
            walls.set_open(g as u32, e as u32, false);
        }
        walls
    });
    let exits = super::exits::Exits::new(scene, walls.as_ref());
    WalkState {
        spans: FreeRuns::new(scene.obstacle.view()).span(),
        walls,
        exits,
        neighbors: NeighborGrid::new(grid.width() as f32, grid.height() as f32, 2.0 * max_radius),
        pedestrian_grid: NeighborGrid::new(
            grid.width() as f32,
            grid.height() as f32,
            pedestrian::look_radius(v_max as f32, max_radius, pedestrian_time_gap),
        ),
        pedestrian_rule,
        pedestrian_floor,
        local,
        preferred: Vec::new(),
    }
}

/// The run's logs at time 0 (the occupancy of the starting positions recorded).
fn run_logs(scene: &Scene, agents: &Agents, dt: f64) -> RunLogs {
    let grid = scene.grid;
    let mut places = levels::PlaceLog::new(&grid, dt);
    places.record_occupancy(&grid, &agents.x, &agents.y, 0.0);
    RunLogs {
        quality: QualityLog::default(),
        agents: AgentLog::new(agents, scene.groups.len()),
        density: DensityLog::new(&grid, scene.groups.len()),
        places,
        // Pairs within the separation's slack are in contact, not colliding.
        collisions: CollisionCounter::with_slack(SEPARATION_SLACK),
        jams: JamTracker::default(),
    }
}

/// The warning for the published model on a scene with exits: `continuum_crowds` is for games
/// and film, not evacuation figures (uncalibrated, its door flows reach 3 to 5 times those of
/// bottleneck experiments; docs/calibration.md). `None` for the pedestrian model or without any
/// goal.
pub fn model_warning(scene: &Scene) -> Option<String> {
    if scene.params.model != crate::params::Model::ContinuumCrowds
        || scene.groups.iter().all(|g| g.goals.is_empty())
    {
        return None;
    }
    Some(
        "the model continuum_crowds is not meant for evacuation figures (the published model, for \
         games and film: uncalibrated, it lets a door pass 3 to 5 times what bottleneck \
         experiments measure): for evacuation times run the pedestrian model (--model pedestrian, \
         or \"model\": \"pedestrian\" in the map, see docs/model.md)"
            .to_string(),
    )
}

/// The warning for a local layer on a scene with exits: no local mode is meant for evacuation
/// figures (ORCA's velocity obstacles pass narrow doors at a third of the flows experiments
/// measure, boids steer flocks). `None` without a local layer or without any goal.
pub fn local_layer_warning(scene: &Scene, local: LocalMode) -> Option<String> {
    let (name, why) = match local {
        LocalMode::None => return None,
        LocalMode::Boids => ("boids", "flocking steers walkers off the field's routes"),
        LocalMode::Orca => ("orca", ORCA_AT_DOORS),
        LocalMode::BoidsOrca => ("boids+orca", ORCA_AT_DOORS),
    };
    if scene.groups.iter().all(|g| g.goals.is_empty()) {
        return None;
    }
    Some(format!(
        "the local layer {name} is not meant for evacuation figures ({why}): for evacuation times \
         run without a local layer (see docs/model.md)"
    ))
}

/// Why ORCA's figures are not evacuation figures, for [`local_layer_warning`].
const ORCA_AT_DOORS: &str = "ORCA lets 0.3 to 0.6 persons/(m·s) through doors of 1 m or less, a \
                             third of what bottleneck experiments measure";

impl Simulation {
    /// Starts a [`SimulationBuilder`] for `scene`: the way to set up a run. See the
    /// [builder's example](super::builder).
    pub fn builder(scene: Scene) -> SimulationBuilder {
        SimulationBuilder::new(scene)
    }
}
