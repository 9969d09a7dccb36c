//! [`Planner`]: the one way from a scene and a crowd to what the walkers follow. It makes the
//! one-off [`Plan`]s of `solve`, `batch` and the editor, and runs the simulation's continuum
//! stage step after step (density, fields, potentials, gradients; or all of it on a GPU), with
//! the CPU/GPU choice of [`super::device`].

use super::device::{self, solve_eikonal};
use super::{GroupPlan, Plan, PlanOptions};
use crate::agents::Agents;
use crate::eikonal::{self, Order};
use crate::error::Result;
use crate::fields::{self, Fields, SceneFaces};
use crate::gpu::{Backend, ContinuumRun, ContinuumVelocities, GpuContext, ReadBacks};
use crate::gradient::{Gradient, gradient};
use crate::scene::Scene;
use crate::stages::{Stage, StageTimer};
use ndarray::{Array2, Array3};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// How far around each walker's cell (chessboard distance, cells) a march that stops past the
/// walkers must have accepted every cell; see `Planner::needed_cells`.
const NEEDED_REACH: usize = 2;

/// What the host read back of the continuum step on the GPU
/// ([`crate::sim::Simulation::gpu_read_backs`]; `timings.json`'s `gpu_read_backs`). Counts,
/// not times: the same on any adapter.
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

/// The continuum step on the device: the run's device buffers ([`ContinuumRun`]), and what was
/// read back of it since.
struct DeviceRun {
    run: ContinuumRun,
    /// The fields of the last step, read back on first need (`None` when that read failed).
    fields: OnceLock<Option<Fields>>,
    /// The potentials of the last solve, read back on first need.
    potentials: OnceLock<Vec<Array2<f64>>>,
    /// The run's read-backs made by its steps (the rest were asked for between steps).
    step_reads: ReadBacks,
}

impl DeviceRun {
    /// The run's read-backs asked for between steps.
    fn on_demand(&self) -> ReadBacks {
        let all = self.run.read_backs();
        ReadBacks {
            count: all.count - self.step_reads.count,
            bytes: all.bytes - self.step_reads.bytes,
        }
    }
}

/// What a continuum step gives the walk: the fields and gradients on the CPU (read them
/// through [`Planner::fields`] and [`Planner::gradients`]), or every walker's field velocity
/// sampled on the device.
pub enum ContinuumStep {
    /// The CPU computed this step's fields and (when due) gradients.
    Cpu,
    /// The device sampled every walker's field velocity (and, with the pedestrian model, its
    /// potentials).
    Device(ContinuumVelocities),
}

/// Plans a scene's potentials: fields from a crowd, one Eikonal solve per group, the gradients.
///
/// [`Planner::new`] makes one for one-off [`Plan`]s ([`super::plan`], [`super::plan_with_crowd`]:
/// `solve`, `batch`, the editor); the simulation builder makes one for a run, which keeps the
/// last step's fields, potentials and gradients (on the CPU, or on a GPU until it fails) and
/// steps them with the crowd.
pub struct Planner {
    /// Order of the fast-marching update.
    order: Order,
    /// Where one-off plans solve.
    backend: Backend,
    /// The GPU: the context one-off plans reuse, or the one a run's continuum step runs on
    /// (until a GPU error).
    gpu: Option<Arc<GpuContext>>,
    /// Per group, per goal, whether the goal is open ([`Planner::exit_open`]).
    open: Vec<Vec<bool>>,
    /// Per group, its goal cells (the union of its open goals); after the groups, the targets'
    /// ([`Planner::add_target`]): one potential each.
    goal_masks: Vec<Array2<bool>>,
    /// The speed regions with their current values.
    regions: super::regions::RegionState,
    /// Whether a goal opened or closed since the last solve: the next step replans.
    goals_changed: bool,
    /// The scene's part of the speed and cost fields, computed once.
    faces: SceneFaces,
    /// What a run's continuum step runs on, in words.
    description: String,
    /// Whether a run's marches cover the whole grid (else they stop past the walkers).
    whole_marches: bool,
    /// Fields of the last CPU step (`None` before the first step and after a GPU step).
    fields: Option<Fields>,
    /// Potential of each group from the last CPU solve.
    potentials: Vec<Array2<f64>>,
    /// Whether the last solve stopped its marches past the walkers.
    potentials_partial: bool,
    /// Per group, the whole-grid march of the last solve, solved on first need.
    whole_potentials: Vec<OnceLock<Array2<f64>>>,
    /// Per group, the upwind gradient of the last CPU solve.
    gradients: Vec<Gradient>,
    /// The continuum step on the device (from the first GPU step until a GPU error).
    device_run: Option<DeviceRun>,
    /// The read-backs of the continuum step on the GPU so far.
    reads: GpuReadBacks,
    /// Why the GPU was given up for the CPU, when it was.
    fallback: Option<String>,
    /// The moving obstacles' part of the step ([`Planner::set_blocked`]).
    movers: MoverCells,
}

/// The cells the moving obstacles cover ([`Planner::set_blocked`]) and what they cost the
/// planner: a replan when they change, a step on the CPU while there are any.
#[derive(Clone, Debug, Default)]
struct MoverCells {
    /// Row-major indices, ascending, of the cells no face leads into.
    cells: Vec<usize>,
    /// Row-major indices, ascending, of the cells no face from outside leads into (and not
    /// in `cells`), each with the faces it closes ([`crate::mover::way_faces`]).
    ahead: Vec<(usize, u8)>,
    /// Whether the cells changed since the last solve: the next step replans.
    changed: bool,
    /// Steps a run on a GPU took on the CPU because moving obstacles covered cells.
    cpu_steps: usize,
    /// Whether the last step ran on the device (its potentials are the current ones).
    last_on_device: bool,
}

impl Planner {
    /// A planner for one-off plans of `scene` solved as `options` say (the GPU, if any, opened
    /// on each [`Planner::plan`] unless `options.gpu` gives one).
    ///
    /// # Errors
    /// The scene's problems ([`Scene::check`]).
    pub fn new(scene: &Scene, options: &PlanOptions) -> Result<Self> {
        scene.check()?;
        let open = open_at_start(scene);
        Ok(Self {
            order: options.order,
            backend: options.backend,
            gpu: options.gpu.clone(),
            goal_masks: goal_masks(scene, &open),
            regions: super::regions::RegionState::new(scene),
            open,
            goals_changed: false,
            faces: SceneFaces::new(scene),
            description: device::describe_cpu(options.order),
            whole_marches: true,
            fields: None,
            potentials: Vec::new(),
            potentials_partial: false,
            whole_potentials: Vec::new(),
            gradients: Vec::new(),
            device_run: None,
            reads: GpuReadBacks::default(),
            fallback: None,
            movers: MoverCells::default(),
        })
    }

    /// A planner for a run of `scene` (checked already): the GPU opened now as `options.backend`
    /// says ([`device::device_for_run`]), marches over the whole grid when `whole_marches`.
    ///
    /// # Errors
    /// [`crate::Error::Gpu`] when [`Backend::Gpu`] finds no adapter; second order on the GPU.
    pub(crate) fn for_run(scene: &Scene, options: &PlanOptions, whole_marches: bool) -> Result<Self> {
        // The regions' fields are the CPU's.
        let regions = !scene.schedule.routes.regions.is_empty();
        let (gpu, mut description) = device::device_for_run(
            if regions { Backend::Cpu } else { options.backend },
            options.order,
            scene.grid.len(),
            options.gpu.clone(),
        )?;
        if regions && options.backend != Backend::Cpu {
            description.push_str(" (speed regions: the fields on the CPU)");
        }
        let open = open_at_start(scene);
        Ok(Self {
            order: options.order,
            backend: options.backend,
            gpu,
            goal_masks: goal_masks(scene, &open),
            regions: super::regions::RegionState::new(scene),
            open,
            goals_changed: false,
            faces: SceneFaces::new(scene),
            description,
            whole_marches,
            fields: None,
            potentials: Vec::new(),
            potentials_partial: false,
            whole_potentials: Vec::new(),
            gradients: Vec::new(),
            device_run: None,
            reads: GpuReadBacks::default(),
            fallback: None,
            movers: MoverCells::default(),
        })
    }

    /// The plan of `scene` with the density of `crowd` shaping the speed and cost fields: the
    /// fields, then one potential and gradient per group. See [`super::plan_with_crowd`].
    ///
    /// # Errors
    /// As [`solve_eikonal`]: with [`Backend::Gpu`], [`crate::Error::Gpu`] when no adapter
    /// opens, and [`crate::Error::Invalid`] for second order or costs beyond the GPU's range.
    pub fn plan(&self, scene: &Scene, crowd: &Agents) -> Result<Plan> {
        let grid = scene.grid;
        let t = Instant::now();
        let fields = self.fields_of(scene, crowd);
        let fields_seconds = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let (solutions, solver) = solve_eikonal(
            self.backend,
            self.gpu.as_deref(),
            fields.cost.view(),
            &self.goal_masks,
            grid.cell_size,
            self.order,
        )?;
        let solve_seconds = t.elapsed().as_secs_f64();
        let h = grid.cell_size;
        let gradients: Vec<Gradient> = solutions
            .par_iter()
            .map(|s| gradient(s.phi.view(), fields.cost.view(), h))
            .collect();
        let groups = self
            .goal_masks
            .iter()
            .cloned()
            .zip(solutions)
            .zip(gradients)
            .map(|((goal, solution), gradient)| GroupPlan {
                goal,
                solution,
                gradient,
            })
            .collect();
        Ok(Plan {
            fields,
            groups,
            solver,
            order: self.order,
            fields_seconds,
            solve_seconds,
        })
    }

    /// Density, speed and unit cost of `scene` under `crowd` (SPEC §2–3), the same values
    /// [`Fields::compute`] gives, from the scene's faces computed once.
    fn fields_of(&self, scene: &Scene, crowd: &Agents) -> Fields {
        let density = fields::splat(&scene.grid, scene.params.lambda, crowd);
        let (mut speed, mut cost) = fields::speed_and_cost_with(scene, &self.faces, &density);
        self.regions.apply(scene, &self.faces, &mut speed, &mut cost);
        Fields { density, speed, cost }
    }

    /// The continuum stage of a simulation step for `agents`: on the GPU, every walker's field
    /// velocity (new potentials when `replan` or none are on the device yet); on the CPU (or
    /// after a GPU error, which it records and which turns the GPU off for the rest of the
    /// run), the splat, the fields and, when `replan` or none exist yet, the potentials and
    /// gradients. Laps `timer` once per stage (the GPU's whole step under potentials).
    pub(crate) fn continuum_step(
        &mut self,
        scene: &Scene,
        agents: &Agents,
        replan: bool,
        timer: &mut StageTimer,
    ) -> ContinuumStep {
        // The device's fields hold no moving obstacle: a step with one runs on the CPU.
        let on_device = self.movers.cells.is_empty() && self.movers.ahead.is_empty();
        if !on_device && self.gpu.is_some() {
            self.movers.cpu_steps += 1;
        }
        // Potentials solved on the other side are not this side's: a switch replans.
        let switched = self.movers.last_on_device;
        if on_device && let Some(sampled) = self.device_step(scene, agents, replan) {
            timer.lap(Stage::Potentials);
            self.fields = None;
            self.movers.last_on_device = true;
            self.movers.changed = false;
            return ContinuumStep::Device(sampled);
        }
        self.movers.last_on_device = false;
        let replan =
            replan || self.gradients.is_empty() || self.goals_changed || self.movers.changed || switched;
        self.goals_changed = false;
        self.movers.changed = false;
        let grid = scene.grid;
        // 1. Splat (all groups together).
        let density = fields::splat(&grid, scene.params.lambda, agents);
        timer.lap(Stage::Splat);
        // 2. Speed and cost (with the speed regions), closed into the cells of the moving
        // obstacles.
        let (mut speed, mut cost) = fields::speed_and_cost_with(scene, &self.faces, &density);
        self.regions.apply(scene, &self.faces, &mut speed, &mut cost);
        crate::mover::close_entries(
            &grid,
            &self.movers.cells,
            &self.movers.ahead,
            &mut speed,
            &mut cost,
        );
        timer.lap(Stage::Fields);
        // 3. Potentials and gradients.
        if replan {
            let h = grid.cell_size;
            self.potentials_partial = !self.whole_marches;
            let solutions = if self.whole_marches {
                eikonal::solve_groups(cost.view(), &self.goal_masks, h, self.order)
            } else {
                let needed = self.needed_cells(scene, agents);
                eikonal::solve_groups_near(cost.view(), &self.goal_masks, &needed, h, self.order)
            };
            self.adopt_potentials(solutions, &cost, h);
        }
        timer.lap(Stage::Potentials);
        self.fields = Some(Fields { density, speed, cost });
        ContinuumStep::Cpu
    }

    /// The GPU's continuum step, or `None` without a GPU or after a GPU error (recorded in
    /// [`Planner::fallback`]; the GPU is off for the rest of the run).
    fn device_step(&mut self, scene: &Scene, agents: &Agents, replan: bool) -> Option<ContinuumVelocities> {
        let ctx = self.gpu.clone()?;
        // The goals' change stays due for the CPU's step should this one fail; after steps on
        // the CPU the device's potentials are stale.
        let replan =
            replan || self.goals_changed || (self.device_run.is_some() && !self.movers.last_on_device);
        match open_device_step(
            &ctx,
            &mut self.device_run,
            scene,
            agents,
            &self.goal_masks,
            replan,
        ) {
            Ok(sampled) => {
                self.goals_changed = false;
                self.reads.steps += 1;
                self.reads.step_read_backs += sampled.read_backs.count;
                self.reads.step_bytes += sampled.read_backs.bytes;
                Some(sampled)
            }
            Err(e) => {
                self.fallback = Some(e.to_string());
                self.gpu = None;
                if let Some(run) = self.device_run.take() {
                    self.reads.add_on_demand(run.on_demand());
                }
                None
            }
        }
    }

    /// Per group, the cells whose potential (and upwind gradient) its walkers read in this
    /// step: the cells within [`NEEDED_REACH`] cells (chessboard distance) of each walker's
    /// cell. A walker reads the direction of its cell and of the four cell centres around it,
    /// one cell away at most; the second cell is a margin for rounding at cell edges.
    fn needed_cells(&self, scene: &Scene, a: &Agents) -> Vec<Array2<bool>> {
        let grid = scene.grid;
        let reach = NEEDED_REACH;
        let mut needed = vec![Array2::from_elem(grid.shape(), false); self.goal_masks.len()];
        if grid.is_empty() {
            return needed;
        }
        let h = grid.cell_size;
        for i in 0..a.len() {
            // The containing cell as `velocity_at` finds it (NaN and negatives go to 0).
            let r = ((a.y[i] as f64 / h) as usize).min(grid.rows - 1);
            let c = ((a.x[i] as f64 / h) as usize).min(grid.cols - 1);
            let Some(mask) = needed.get_mut(a.group[i] as usize) else {
                continue;
            };
            let (r0, r1) = (r.saturating_sub(reach), (r + reach).min(grid.rows - 1));
            let (c0, c1) = (c.saturating_sub(reach), (c + reach).min(grid.cols - 1));
            mask.slice_mut(ndarray::s![r0..=r1, c0..=c1]).fill(true);
        }
        needed
    }

    /// Takes new potentials: their upwind gradients on `cost`, groups in parallel.
    fn adopt_potentials(&mut self, solutions: Vec<eikonal::Solution>, cost: &Array3<f32>, h: f64) {
        self.gradients = solutions
            .par_iter()
            .map(|s| gradient(s.phi.view(), cost.view(), h))
            .collect();
        self.potentials = solutions.into_iter().map(|s| s.phi).collect();
        self.whole_potentials = self.potentials.iter().map(|_| OnceLock::new()).collect();
    }

    /// Per group, its goal cells: those of its open goals.
    pub fn goal_masks(&self) -> &[Array2<bool>] {
        &self.goal_masks
    }

    /// Whether goal `goal` of group `group` is open: a goal for the potential and a way out
    /// for the walkers. The one place a goal's state is kept and read (`false` for a goal
    /// that is not the scene's).
    pub fn exit_open(&self, group: usize, goal: usize) -> bool {
        self.open
            .get(group)
            .and_then(|g| g.get(goal))
            .copied()
            .unwrap_or(false)
    }

    /// Opens or closes goal `goal` of group `group` of `scene`: the group's goal cells change
    /// at once and the next continuum step replans (on the CPU and on a GPU alike). Returns
    /// whether the state changed (`false` for a goal that is not the scene's).
    pub fn set_exit_open(&mut self, scene: &Scene, group: usize, goal: usize, open: bool) -> bool {
        let Some(state) = self.open.get_mut(group).and_then(|g| g.get_mut(goal)) else {
            return false;
        };
        if *state == open {
            return false;
        }
        *state = open;
        self.goal_masks[group] = group_goal_mask(scene, group, &self.open[group]);
        self.goals_changed = true;
        true
    }

    /// Adds a target: one more potential, solved with the groups' from the next step on,
    /// towards the cells of `mask` (a stage of a route, one exit of a group). Returns its index
    /// among the potentials (after the groups'); a walker follows it when its entry of the
    /// agents' `group` column is that index in the continuum step (`crate::sim::routes`).
    pub fn add_target(&mut self, mask: Array2<bool>) -> usize {
        self.goal_masks.push(mask);
        self.goals_changed = true;
        self.goal_masks.len() - 1
    }

    /// Sets the cells of target `index` (an index [`Planner::add_target`] gave); the next step
    /// replans. Returns `false`, changing nothing, for an index that is not a target's.
    pub fn set_target(&mut self, scene: &Scene, index: usize, mask: Array2<bool>) -> bool {
        if index < scene.groups.len() || index >= self.goal_masks.len() {
            return false;
        }
        if self.goal_masks[index] != mask {
            self.goal_masks[index] = mask;
            self.goals_changed = true;
        }
        true
    }

    /// The speed regions with their current values.
    pub fn regions(&self) -> &super::regions::RegionState {
        &self.regions
    }

    /// Sets region `k`'s speed factor and discomfort (`None` keeps one); the next step's fields
    /// and potentials see it. Returns whether anything changed.
    pub fn set_region(&mut self, k: usize, speed_factor: Option<f64>, discomfort: Option<f64>) -> bool {
        let changed = self.regions.set(k, speed_factor, discomfort);
        self.goals_changed |= changed;
        changed
    }

    /// Sets the cells the moving obstacles cover (`body`) and are about to cover (`ahead`,
    /// none of `body`, each with the faces of the way it closes, [`crate::mover::way_faces`]),
    /// row-major indices, ascending: from the next continuum step no face leads into a cell
    /// of `body`, and none from outside into a cell of `ahead` nor along its way out of it
    /// ([`crate::mover::close_entries`]). A change of cells makes that step replan (on the
    /// CPU: the device's fields hold no moving obstacle, so a run on a GPU takes its steps with
    /// such cells on the CPU and counts them, [`Planner::mover_cpu_steps`]); the same cells
    /// again cost nothing.
    pub fn set_blocked(&mut self, body: Vec<usize>, ahead: Vec<(usize, u8)>) {
        if body != self.movers.cells || ahead != self.movers.ahead {
            self.movers.cells = body;
            self.movers.ahead = ahead;
            self.movers.changed = true;
        }
    }

    /// The cells the moving obstacles are about to cover (not [`Planner::blocked`]'s),
    /// row-major indices, ascending.
    pub fn blocked_ahead(&self) -> &[(usize, u8)] {
        &self.movers.ahead
    }

    /// The cells the moving obstacles cover, row-major indices, ascending.
    pub fn blocked(&self) -> &[usize] {
        &self.movers.cells
    }

    /// The steps a run on a GPU took on the CPU because moving obstacles covered cells.
    pub fn mover_cpu_steps(&self) -> usize {
        self.movers.cpu_steps
    }

    /// The scene's part of the speed and cost fields.
    pub fn faces(&self) -> &SceneFaces {
        &self.faces
    }

    /// Per group, the upwind gradient of the last CPU solve (empty before it).
    pub fn gradients(&self) -> &[Gradient] {
        &self.gradients
    }

    /// The potentials of the last CPU solve (empty before it), without reading the device.
    pub fn cpu_potentials(&self) -> &[Array2<f64>] {
        &self.potentials
    }

    /// The fields of the last step (`None` before the first step). After a step on the GPU
    /// they are read back from the device on the first call (`None` if that read fails).
    pub fn fields(&self) -> Option<&Fields> {
        match (&self.gpu, &self.device_run) {
            (Some(ctx), Some(run)) if self.fields.is_none() && run.run.groups().is_some() => run
                .fields
                .get_or_init(|| ctx.continuum_fields(&run.run).ok())
                .as_ref(),
            _ => self.fields.as_ref(),
        }
    }

    /// The potential of each group from the last solve: the CPU's, or the device's read back
    /// on first need (empty before the first solve or if that read fails).
    pub fn potentials(&self) -> &[Array2<f64>] {
        match (&self.gpu, &self.device_run) {
            (Some(ctx), Some(run)) if run.run.groups().is_some() && self.movers.last_on_device => run
                .potentials
                .get_or_init(|| ctx.continuum_potentials(&run.run).unwrap_or_default()),
            _ => &self.potentials,
        }
    }

    /// The potential of `group` at cell `rc` as a whole-grid march of the last solve gives it
    /// (see [`crate::sim::Simulation::whole_potential_at`]).
    pub fn whole_potential_at(&self, scene: &Scene, group: usize, rc: (usize, usize)) -> f64 {
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
            eikonal::solve_fmm(
                fields.cost.view(),
                self.goal_masks[group].view(),
                scene.grid.cell_size,
                self.order,
            )
            .phi
        });
        whole[rc]
    }

    /// What the host read back of the continuum step on the GPU so far (`None` when no step
    /// ran there).
    pub fn gpu_read_backs(&self) -> Option<GpuReadBacks> {
        if self.reads.steps == 0 {
            return None;
        }
        let mut r = self.reads;
        if let Some(run) = &self.device_run {
            r.add_on_demand(run.on_demand());
        }
        Some(r)
    }

    /// Why the GPU was given up for the CPU mid-run, when it was.
    pub fn fallback(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// What a run's continuum step runs on, in words.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Whether the continuum step runs on a GPU (until a GPU error).
    pub fn on_gpu(&self) -> bool {
        self.gpu.is_some()
    }
}

/// Per group, per goal, whether it is open at the start of a run (the scene's schedule closes
/// some).
fn open_at_start(scene: &Scene) -> Vec<Vec<bool>> {
    let mut open: Vec<Vec<bool>> = scene.groups.iter().map(|g| vec![true; g.goals.len()]).collect();
    for &(g, k) in &scene.schedule.closed {
        if let Some(state) = open.get_mut(g).and_then(|goals| goals.get_mut(k)) {
            *state = false;
        }
    }
    open
}

/// Per group, the cells of its open goals.
fn goal_masks(scene: &Scene, open: &[Vec<bool>]) -> Vec<Array2<bool>> {
    (0..scene.groups.len())
        .map(|g| group_goal_mask(scene, g, &open[g]))
        .collect()
}

/// The cells of the open goals of group `g` (`open` per goal); with every goal open, the
/// group's [`crate::scene::Group::goal_mask`].
fn group_goal_mask(scene: &Scene, g: usize, open: &[bool]) -> Array2<bool> {
    let mut m = Array2::from_elem(scene.grid.shape(), false);
    for (goal, &open) in scene.groups[g].goals.iter().zip(open) {
        if open {
            goal.mask.or_into(&mut m);
        }
    }
    m
}

/// One continuum step on the device, opening the run's device buffers on the first: new
/// potentials when `replan` or when none are on the device yet.
fn open_device_step(
    ctx: &GpuContext,
    run: &mut Option<DeviceRun>,
    scene: &Scene,
    agents: &Agents,
    goal_masks: &[Array2<bool>],
    replan: bool,
) -> Result<ContinuumVelocities> {
    if run.is_none() {
        *run = Some(DeviceRun {
            run: ctx.continuum_run(scene)?,
            fields: OnceLock::new(),
            potentials: OnceLock::new(),
            step_reads: ReadBacks::default(),
        });
    }
    let run = run.as_mut().expect("the device run was just opened");
    // The pedestrian model reads each walker's potential and its neighbours'.
    run.run
        .set_sample_potentials(scene.params.model == crate::params::Model::Pedestrian);
    let replan = replan || run.run.groups().is_none();
    let sampled = ctx.continuum_velocities(&mut run.run, agents, replan.then_some(goal_masks))?;
    run.fields = OnceLock::new();
    if replan {
        run.potentials = OnceLock::new();
    }
    run.step_reads.count += sampled.read_backs.count;
    run.step_reads.bytes += sampled.read_backs.bytes;
    Ok(sampled)
}
