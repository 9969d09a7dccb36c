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
use super::{LocalHook, SimConfig, Simulation, spawn};
use crate::agents::Agents;
use crate::eikonal::Order;
use crate::error::Result;
use crate::gpu::{Backend, GpuContext};
use crate::local::{LocalBackend, LocalMode};
use crate::scene::Scene;
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
        crate::gpu::check_order(backend, config.order)?;
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
        let order = config.order;
        let mut sim = Simulation::with_agents_on_checked(scene, config, agents)?;
        sim.model_source = model_source;
        sim.model_warnings = crate::map::warnings(&sim.scene);
        if let Some(w) = model_warning(&sim.scene) {
            sim.model_warnings.push(w);
        }
        // Why `Auto` keeps to the CPU before any adapter is looked for, if it does.
        let auto_on_cpu = match backend {
            Backend::Auto if order == Order::Second => Some("auto: second order runs on the CPU".to_string()),
            Backend::Auto => crate::gpu::auto_keeps_on_cpu(sim.scene.grid.len()),
            _ => None,
        };
        sim.solver_description = match (backend, auto_on_cpu, gpu) {
            (Backend::Cpu, _, _) => "cpu: fast marching".to_string(),
            (_, Some(why), _) => format!("cpu: fast marching ({why})"),
            (_, None, Some(ctx)) => sim.use_gpu(ctx),
            (Backend::Gpu, None, None) => sim.use_gpu(Arc::new(GpuContext::new()?)),
            (Backend::Auto, None, None) => match GpuContext::for_auto() {
                Ok(ctx) => sim.use_gpu(Arc::new(ctx)),
                Err(e) => format!("cpu: fast marching (auto: {e})"),
            },
        };
        if let Some(hook) = hook {
            sim.local_description = Some("a caller's local hook".to_string());
            sim.local = Some(hook);
        } else if local != LocalMode::None {
            sim.local_mode = local;
            if let Some(w) = local_layer_warning(&sim.scene, local) {
                sim.model_warnings.push(w);
            }
            let mut bridge = LocalBridge::new(local, local_backend)?;
            bridge.set_seed(seed);
            sim.local_description = Some(bridge.layer().backend_description());
            sim.local = Some(Box::new(bridge));
        }
        Ok(sim)
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

    /// Runs on `ctx` and returns the description of the potentials' solver.
    fn use_gpu(&mut self, ctx: Arc<GpuContext>) -> String {
        let note = format!(
            "gpu: splat, fields, block FIM, gradients and walking velocities on {}",
            ctx.adapter()
        );
        self.gpu = Some(ctx);
        note
    }
}
