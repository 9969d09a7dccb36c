//! The continuum step kept on the device: splat → speed → cost → block FIM (on replanning
//! steps) → every group's upwind gradient → every agent's walking velocity, reading back only
//! the velocities (8 bytes per agent) and, on replanning steps, the FIM's 32-byte convergence
//! state between batches of passes.
//!
//! A [`ContinuumRun`] holds one run's buffers (its own, so that a context shared by several
//! runs never hands one run's fields to another): the scene's layers, uploaded once, and the
//! potentials and gradients of the last solve, which steps that do not replan reuse. The
//! fields, potentials and gradients stay on the device until something asks for them
//! ([`GpuContext::continuum_fields`], [`GpuContext::continuum_potentials`],
//! [`GpuContext::continuum_gradients`]); every read-back is counted
//! ([`ContinuumRun::read_backs`]).
//!
//! The two passes of this file are `shaders/continuum_gradient.wgsl` and
//! `shaders/continuum_velocity.wgsl`; their CPU twins [`gradient_twin`] and [`velocity_twin`]
//! read like them, in f32. They compute what [`crate::gradient::gradient`] and
//! [`crate::gradient::velocity_at`] compute in f64: the results agree to f32 rounding, except
//! where two upwind neighbours tie to within it (a ridge between two exits), where either side
//! may be taken.

use crate::agents::Agents;
use crate::eikonal::SolveCounters;
use crate::error::{Error, Result};
use crate::fields::Fields;
use crate::gpu::context::{GpuContext, ReadBacks, bind_group, encode_linear_pass};
use crate::gpu::fields::{FieldBuffers, field_params};
use crate::gpu::fim::{FimBuffers, FimInput, PHI_INF, STATE_SLOTS, potential_value, prepare_goals};
use crate::gpu::splat::{SplatBuffers, splat_params};
use crate::gpu::types::GpuContinuumParams;
use crate::gradient::Gradient;
use crate::grid::{Dir, Grid};
use crate::scene::Scene;
use ndarray::Array2;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of one read of the FIM's convergence state.
const FIM_STATE_BYTES: u64 = (STATE_SLOTS * 4) as u64;

/// Device buffers of the gradient and velocity passes.
struct StepBuffers {
    /// Agents the agent buffers hold.
    agents: usize,
    /// Gradient entries (cells times groups) the gradient buffer holds.
    entries: usize,
    /// Groups whose potentials the sampled buffer holds per agent.
    potential_groups: usize,
    params: wgpu::Buffer,
    groups: wgpu::Buffer,
    grad: wgpu::Buffer,
    velocity: wgpu::Buffer,
}

impl StepBuffers {
    fn new(ctx: &GpuContext, agents: usize, entries: usize, groups: usize) -> Result<Self> {
        ctx.check_size("the gradients (cells x groups x 8 bytes)", entries as u64 * 8)?;
        Ok(Self {
            agents,
            entries,
            potential_groups: groups,
            params: ctx.uniform(
                "crowdfield.continuum.params",
                std::mem::size_of::<GpuContinuumParams>() as u64,
            ),
            groups: ctx.storage("crowdfield.continuum.groups", agents as u64 * 4),
            grad: ctx.storage("crowdfield.continuum.grad", entries as u64 * 8),
            velocity: ctx.storage(
                "crowdfield.continuum.velocity",
                agents as u64 * 4 * (2 + groups as u64),
            ),
        })
    }
}

/// One run's continuum step on the device: its buffers, the potentials and gradients of its
/// last solve, and its read-back counts. Open one with [`GpuContext::continuum_run`] and
/// step it with [`GpuContext::continuum_velocities`]; it belongs to the context that opened it
/// and to the scene it was opened for.
pub struct ContinuumRun {
    grid: Grid,
    lambda: f64,
    splat: Option<SplatBuffers>,
    fields: Option<FieldBuffers>,
    fim: Option<FimBuffers>,
    step: Option<StepBuffers>,
    /// Groups whose potentials and gradients are on the device; `None` before the first solve.
    groups: Option<usize>,
    /// Whether a step has run (the fields on the device are the last step's).
    stepped: bool,
    /// Whether steps also sample each agent's potential under every group's field.
    sample_potentials: bool,
    /// The goals of the last solve laid out for the FIM.
    goals: Vec<Array2<bool>>,
    /// The last solve's layout (its vectors left empty: they are on the device).
    solve: Option<FimInput>,
    /// The last solve's initial potentials (0 on sources, `PHI_INF` elsewhere), kept on the
    /// device so that a solve with the same goals uploads nothing of the grid's size.
    phi_init: Option<wgpu::Buffer>,
    read_count: AtomicU64,
    read_bytes: AtomicU64,
}

impl std::fmt::Debug for ContinuumRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContinuumRun")
            .field("grid", &self.grid)
            .field("groups", &self.groups)
            .field("read_backs", &self.read_backs())
            .finish()
    }
}

impl ContinuumRun {
    /// The read-backs of every step and every read of fields, potentials or gradients so far.
    pub fn read_backs(&self) -> ReadBacks {
        ReadBacks {
            count: self.read_count.load(Ordering::Relaxed),
            bytes: self.read_bytes.load(Ordering::Relaxed),
        }
    }

    /// Makes every later step also sample each agent's potential under every group's field
    /// ([`ContinuumVelocities::potentials`]; 4 more bytes per agent and group read back), as
    /// the pedestrian model reads them.
    pub fn set_sample_potentials(&mut self, on: bool) {
        self.sample_potentials = on;
    }

    /// Groups whose potentials are on the device (`None` before the first solve).
    pub fn groups(&self) -> Option<usize> {
        self.groups
    }

    fn count(&self, reads: u64, bytes: u64) {
        self.read_count.fetch_add(reads, Ordering::Relaxed);
        self.read_bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}

/// What [`GpuContext::continuum_velocities`] returns.
#[derive(Clone, Debug, Default)]
pub struct ContinuumVelocities {
    /// Each agent's walking velocity along x, m/s, as [`crate::gradient::velocity_at`] gives it.
    pub vx: Vec<f32>,
    /// The same along y.
    pub vy: Vec<f32>,
    /// With [`ContinuumRun::set_sample_potentials`], `potentials[group * agents + agent]`:
    /// the agent's potential under the group's field as
    /// [`crate::sim::pedestrian::potential_at`] gives it ([`PHI_INF`] for `+inf`); else empty.
    pub potentials: Vec<f32>,
    /// The solve's counters on a replanning step (`None` when the potentials were reused).
    pub counters: Option<SolveCounters>,
    /// The step's read-backs.
    pub read_backs: ReadBacks,
}

impl GpuContext {
    /// Opens a continuum run for `scene`: its field buffers with the scene's layers
    /// uploaded once.
    ///
    /// # Errors
    /// [`Error::Invalid`] for layers whose shape differs from the grid or a bad cell size;
    /// [`Error::Gpu`] when the grid is larger than the device allows.
    pub fn continuum_run(&self, scene: &Scene) -> Result<ContinuumRun> {
        let fp = field_params(scene)?;
        let mut fields = None;
        if !scene.grid.is_empty() {
            self.prepare_fields(&mut fields, scene, &fp)?;
        }
        Ok(ContinuumRun {
            grid: scene.grid,
            lambda: scene.params.lambda,
            splat: None,
            fields,
            fim: None,
            step: None,
            groups: None,
            stepped: false,
            sample_potentials: false,
            goals: Vec::new(),
            solve: None,
            phi_init: None,
            read_count: AtomicU64::new(0),
            read_bytes: AtomicU64::new(0),
        })
    }

    /// One continuum step of `gpu_run`: splat `agents`, speed and cost, then with `goals` a new
    /// potential per goal mask (block FIM) and its upwind gradient, and finally every agent's
    /// walking velocity from its group's gradient (the last solve's when `goals` is `None`)
    /// and this step's speed. Splat, fields and the first FIM batch go in one submission; the
    /// host reads back the FIM's state between batches, and the velocities at the end.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad lambda, ragged agent arrays, goal masks of the wrong shape,
    /// or `goals` `None` before any solve; [`Error::Gpu`] when the device fails or the FIM
    /// reaches its safety cap.
    pub fn continuum_velocities(
        &self,
        gpu_run: &mut ContinuumRun,
        agents: &Agents,
        goals: Option<&[Array2<bool>]>,
    ) -> Result<ContinuumVelocities> {
        let grid = gpu_run.grid;
        let n = agents.len();
        let sp = splat_params(&grid, gpu_run.lambda, agents)?;
        if agents.group.len() != n {
            return Err(Error::invalid(
                "<memory>",
                "agents.group",
                format!("{} entries for {n} agents", agents.group.len()),
            ));
        }
        // A solve with the last solve's goals restarts from the device's copy of its initial
        // potentials; other goals are laid out and uploaded.
        let fresh = goals.filter(|g| gpu_run.solve.is_none() || gpu_run.goals.as_slice() != *g);
        let input = fresh
            .map(|g| prepare_goals(grid.rows, grid.cols, g, grid.cell_size, self.fim_tile))
            .transpose()?;
        let Some(groups) = goals.map(<[_]>::len).or(gpu_run.groups) else {
            return Err(Error::invalid(
                "<memory>",
                "goals",
                "none before the first solve: the first step of a run must solve",
            ));
        };
        let cells = grid.len();
        let mut out = ContinuumVelocities {
            vx: vec![0.0; n],
            vy: vec![0.0; n],
            ..ContinuumVelocities::default()
        };
        if cells == 0 {
            gpu_run.groups = Some(groups);
            return Ok(out);
        }
        self.prepare_splat(&mut gpu_run.splat, n, cells)?;
        let solve = goals.is_some() && groups > 0;
        let phi_bytes = (groups * cells * 4) as u64;
        if let (Some(input), true) = (&input, solve) {
            self.prepare_fim(&mut gpu_run.fim, input)?;
            if gpu_run.phi_init.as_ref().is_none_or(|b| b.size() < phi_bytes) {
                gpu_run.phi_init = Some(self.storage("crowdfield.continuum.phi_init", phi_bytes));
            }
            gpu_run.solve = Some(FimInput {
                params: input.params,
                tile: input.tile,
                cost: Vec::new(),
                source: Vec::new(),
                phi: Vec::new(),
            });
            gpu_run.goals = fresh.map(<[_]>::to_vec).unwrap_or_default();
        }
        if gpu_run
            .step
            .as_ref()
            .is_none_or(|b| b.agents < n || b.entries < groups * cells || b.potential_groups < groups)
        {
            let agents_cap = n.max(1).next_power_of_two();
            let entries = gpu_run.step.as_ref().map_or(0, |b| b.entries).max(groups * cells);
            let groups_cap = gpu_run
                .step
                .as_ref()
                .map_or(0, |b| b.potential_groups)
                .max(groups);
            gpu_run.step = Some(StepBuffers::new(self, agents_cap, entries, groups_cap)?);
        }
        let splat = gpu_run.splat.as_ref().expect("splat buffers were just created");
        let fb = gpu_run
            .fields
            .as_ref()
            .expect("a grid with cells has field buffers");
        let step = gpu_run.step.as_ref().expect("step buffers were just created");
        // The cost goes where the FIM reads it; a scene without groups keeps it in the fields'.
        let cost = match (&gpu_run.fim, groups) {
            (Some(fim), 1..) => &fim.cost,
            _ => &fb.cost,
        };
        let params = GpuContinuumParams {
            cols: grid.cols as u32,
            rows: grid.rows as u32,
            groups: groups as u32,
            agents: n as u32,
            cell_size: grid.cell_size as f32,
            width: grid.width() as f32,
            height: grid.height() as f32,
            pad0: 0,
        };
        self.queue
            .write_buffer(&step.params, 0, bytemuck::bytes_of(&params));
        self.queue
            .write_buffer(&step.groups, 0, bytemuck::cast_slice(&agents.group));
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("crowdfield.continuum"),
            });
        let restart = match (&gpu_run.fim, &gpu_run.solve, &gpu_run.phi_init, solve) {
            (Some(fim), Some(solve), Some(init), true) => Some((fim, solve, init)),
            _ => None,
        };
        if let Some((fim, solve, init)) = restart {
            if input.is_some() {
                // Keep the initial potentials just uploaded for the next solve.
                encoder.copy_buffer_to_buffer(&fim.phi, 0, init, 0, phi_bytes);
            } else {
                self.restart_fim(fim, &solve.params);
                encoder.copy_buffer_to_buffer(init, 0, &fim.phi, 0, phi_bytes);
            }
        }
        self.encode_splat(splat, &sp, agents, &mut encoder);
        self.encode_fields(fb, &splat.fields, cost, cells, &mut encoder);
        let mut reads = ReadBacks::default();
        if let Some((fim, solve, _)) = restart {
            let counters = self.run_fim(fim, solve, encoder)?;
            reads.count += counters.read_backs as u64;
            reads.bytes += counters.read_backs as u64 * FIM_STATE_BYTES;
            out.counters = Some(counters);
            encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("crowdfield.continuum"),
                });
            self.encode_gradient(step, &fim.phi, cost, groups * cells, &mut encoder);
        }
        gpu_run.groups = Some(groups);
        gpu_run.stepped = true;
        let potentials = match (&gpu_run.fim, gpu_run.sample_potentials, groups) {
            (Some(fim), true, 1..) => Some(fim),
            _ => None,
        };
        if n > 0 {
            self.encode_velocity(step, splat, fb, n, &mut encoder);
            if let Some(fim) = potentials {
                self.encode_potential(step, splat, &fim.phi, n * groups, &mut encoder);
            }
        }
        self.queue.submit([encoder.finish()]);
        if n > 0 {
            let values = if potentials.is_some() {
                (2 + groups) * n
            } else {
                2 * n
            };
            self.read_back_with(&step.velocity, 0, values, |v: &[f32]| {
                for (i, pair) in v[..2 * n].chunks_exact(2).enumerate() {
                    out.vx[i] = pair[0];
                    out.vy[i] = pair[1];
                }
                out.potentials = v[2 * n..].to_vec();
            })?;
            reads.count += 1;
            reads.bytes += 4 * values as u64;
        } else {
            self.finish()?;
        }
        gpu_run.count(reads.count, reads.bytes);
        out.read_backs = reads;
        Ok(out)
    }

    /// The density, speed and cost of `gpu_run`'s last step, read back (cost `+inf` on
    /// blocked faces, as [`GpuContext::fields`] gives them).
    ///
    /// # Errors
    /// [`Error::Invalid`] before the first step; [`Error::Gpu`] when the device fails.
    pub fn continuum_fields(&self, gpu_run: &ContinuumRun) -> Result<Fields> {
        let grid = gpu_run.grid;
        let (Some(splat), Some(fb), true) = (&gpu_run.splat, &gpu_run.fields, gpu_run.stepped) else {
            return Err(not_stepped());
        };
        let cost = match (&gpu_run.fim, gpu_run.groups) {
            (Some(fim), Some(1..)) => &fim.cost,
            _ => &fb.cost,
        };
        let fields = self.read_fields(&grid, &splat.fields, &fb.speed, cost)?;
        gpu_run.count(3, 11 * grid.len() as u64 * 4);
        Ok(fields)
    }

    /// The potential of each group of `gpu_run`'s last solve, read back (`+inf` where no
    /// source reaches), as [`GpuContext::solve_fim`] gives them.
    ///
    /// # Errors
    /// [`Error::Invalid`] before the first step; [`Error::Gpu`] when the device fails.
    pub fn continuum_potentials(&self, gpu_run: &ContinuumRun) -> Result<Vec<Array2<f64>>> {
        let grid = gpu_run.grid;
        let Some(groups) = gpu_run.groups else {
            return Err(not_stepped());
        };
        let cells = grid.len();
        let Some(fim) = gpu_run.fim.as_ref().filter(|_| groups > 0 && cells > 0) else {
            return Ok(vec![Array2::from_elem(grid.shape(), f64::INFINITY); groups]);
        };
        let phi: Vec<f32> = self.read_back(&fim.phi, 0, groups * cells)?;
        gpu_run.count(1, (groups * cells * 4) as u64);
        Ok(phi
            .chunks_exact(cells)
            .map(|p| {
                let values = p.iter().map(|&v| potential_value(v)).collect();
                Array2::from_shape_vec(grid.shape(), values).expect("phi has rows * cols values")
            })
            .collect())
    }

    /// The upwind gradient of each group's potential of `gpu_run`'s last solve, as the
    /// velocity pass reads it, read back.
    ///
    /// # Errors
    /// [`Error::Invalid`] before the first step; [`Error::Gpu`] when the device fails.
    pub fn continuum_gradients(&self, gpu_run: &ContinuumRun) -> Result<Vec<Gradient>> {
        let grid = gpu_run.grid;
        let Some(groups) = gpu_run.groups else {
            return Err(not_stepped());
        };
        let cells = grid.len();
        let zero = || Gradient {
            gx: Array2::zeros(grid.shape()),
            gy: Array2::zeros(grid.shape()),
        };
        let Some(step) = gpu_run.step.as_ref().filter(|_| groups > 0 && cells > 0) else {
            return Ok((0..groups).map(|_| zero()).collect());
        };
        let g: Vec<f32> = self.read_back(&step.grad, 0, 2 * groups * cells)?;
        gpu_run.count(1, (groups * cells * 8) as u64);
        Ok(g.chunks_exact(2 * cells)
            .map(|part| {
                let take = |axis: usize| {
                    Array2::from_shape_vec(grid.shape(), part.iter().skip(axis).step_by(2).copied().collect())
                        .expect("a gradient has rows * cols values")
                };
                Gradient {
                    gx: take(0),
                    gy: take(1),
                }
            })
            .collect())
    }

    /// Encodes the gradient pass over `entries` (cells times groups) potentials in `phi`.
    fn encode_gradient(
        &self,
        step: &StepBuffers,
        phi: &wgpu::Buffer,
        cost: &wgpu::Buffer,
        entries: usize,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        let p = &self.pipelines;
        let bg = bind_group(
            &self.device,
            "crowdfield.continuum.gradient",
            &p.gradient_layout,
            &[
                (&step.params, None),
                (phi, None),
                (cost, None),
                (&step.grad, None),
            ],
        );
        encode_linear_pass(
            encoder,
            "crowdfield.continuum.gradient",
            &p.continuum_gradient,
            &bg,
            entries as u32,
        );
    }

    /// Encodes the potential pass over `entries` (agents times groups) samples.
    fn encode_potential(
        &self,
        step: &StepBuffers,
        splat: &SplatBuffers,
        phi: &wgpu::Buffer,
        entries: usize,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        let p = &self.pipelines;
        let bg = bind_group(
            &self.device,
            "crowdfield.continuum.potential",
            &p.potential_layout,
            &[
                (&step.params, None),
                (&splat.pos[0], None),
                (&splat.pos[1], None),
                (phi, None),
                (&step.velocity, None),
            ],
        );
        encode_linear_pass(
            encoder,
            "crowdfield.continuum.potential",
            &p.continuum_potential,
            &bg,
            entries as u32,
        );
    }

    /// Encodes the velocity pass over `agents` agents, at the positions the splat uploaded.
    fn encode_velocity(
        &self,
        step: &StepBuffers,
        splat: &SplatBuffers,
        fb: &FieldBuffers,
        agents: usize,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        let p = &self.pipelines;
        let bg = bind_group(
            &self.device,
            "crowdfield.continuum.velocity",
            &p.velocity_layout,
            &[
                (&step.params, None),
                (&splat.pos[0], None),
                (&splat.pos[1], None),
                (&step.groups, None),
                (&step.grad, None),
                (&fb.speed, None),
                (&step.velocity, None),
            ],
        );
        encode_linear_pass(
            encoder,
            "crowdfield.continuum.velocity",
            &p.continuum_velocity,
            &bg,
            agents as u32,
        );
    }
}

fn not_stepped() -> Error {
    Error::invalid("<memory>", "run", "no step has run yet: nothing to read back")
}

/// The CPU twin of `shaders/continuum_gradient.wgsl`: every group's upwind gradient, `(gx, gy)`
/// per entry of `phi` (`group * cells + cell`, [`PHI_INF`] where unreached), from the cost in
/// the solver's form (`cell * 4 + dir`, 0 on a blocked face), in f32.
pub fn gradient_twin(params: &GpuContinuumParams, phi: &[f32], cost: &[f32]) -> Vec<f32> {
    let (cols, rows) = (params.cols as usize, params.rows as usize);
    let cells = cols * rows;
    let h = params.cell_size;
    let upwind_axis = |here: f32, plus: [f32; 2], minus: [f32; 2]| -> f32 {
        let plus_ok = plus[0] < here && plus[1] > 0.0;
        let minus_ok = minus[0] < here && minus[1] > 0.0;
        if plus_ok && minus_ok && minus[0] + h * minus[1] < plus[0] + h * plus[1] {
            return (here - minus[0]) / h;
        }
        if plus_ok {
            return (plus[0] - here) / h;
        }
        if minus_ok {
            return (here - minus[0]) / h;
        }
        0.0
    };
    let mut grad = vec![0.0f32; 2 * cells * params.groups as usize];
    for k in 0..cells * params.groups as usize {
        let cell = k % cells;
        let (r, c) = (cell / cols, cell % cols);
        let here = phi[k];
        if !(here > 0.0 && here < PHI_INF) {
            continue;
        }
        let east = if c + 1 < cols { phi[k + 1] } else { PHI_INF };
        let west = if c > 0 { phi[k - 1] } else { PHI_INF };
        let north = if r + 1 < rows { phi[k + cols] } else { PHI_INF };
        let south = if r > 0 { phi[k - cols] } else { PHI_INF };
        let f = cell * 4;
        let face = |d: Dir| cost[f + d.index()];
        grad[2 * k] = upwind_axis(here, [east, face(Dir::E)], [west, face(Dir::W)]);
        grad[2 * k + 1] = upwind_axis(here, [north, face(Dir::N)], [south, face(Dir::S)]);
    }
    grad
}

/// The CPU twin of `shaders/continuum_velocity.wgsl`: the walking velocity of an agent of
/// group `group` at `(x, y)` from the gradients `grad` (as [`gradient_twin`] lays them out) and
/// the speed field (`cell * 4 + dir`), in f32.
pub fn velocity_twin(
    params: &GpuContinuumParams,
    grad: &[f32],
    speed: &[f32],
    group: u32,
    x: f32,
    y: f32,
) -> [f32; 2] {
    let (cols, rows) = (params.cols, params.rows);
    if group >= params.groups {
        return [0.0, 0.0];
    }
    let base = group * cols * rows;
    let direction = |r: u32, c: u32| -> Option<[f32; 2]> {
        let k = (base + r * cols + c) as usize;
        let (gx, gy) = (grad[2 * k], grad[2 * k + 1]);
        let norm = (gx * gx + gy * gy).sqrt();
        (norm > 0.0 && norm.is_finite()).then(|| [-gx / norm, -gy / norm])
    };
    if !(x >= 0.0 && y >= 0.0 && x <= params.width && y <= params.height) {
        return [0.0, 0.0];
    }
    let h = params.cell_size;
    let cr = ((y / h) as u32).min(rows - 1);
    let cc = ((x / h) as u32).min(cols - 1);
    let Some(own) = direction(cr, cc) else {
        return [0.0, 0.0];
    };
    let u = (x / h - 0.5).clamp(0.0, (cols - 1) as f32);
    let v = (y / h - 0.5).clamp(0.0, (rows - 1) as f32);
    let (c0, r0) = (u.floor() as u32, v.floor() as u32);
    let (c1, r1) = ((c0 + 1).min(cols - 1), (r0 + 1).min(rows - 1));
    let (tu, tv) = (u - c0 as f32, v - r0 as f32);
    let mut dir = [0.0f32; 2];
    for (r, c, w) in [
        (r0, c0, (1.0 - tu) * (1.0 - tv)),
        (r0, c1, tu * (1.0 - tv)),
        (r1, c1, tu * tv),
        (r1, c0, (1.0 - tu) * tv),
    ] {
        if let Some(d) = direction(r, c) {
            dir[0] += w * d[0];
            dir[1] += w * d[1];
        }
    }
    let norm = (dir[0] * dir[0] + dir[1] * dir[1]).sqrt();
    let [dx, dy] = if norm > 1e-6 {
        [dir[0] / norm, dir[1] / norm]
    } else {
        own
    };
    let face = ((cr * cols + cc) * 4) as usize;
    let face_x = if dx >= 0.0 { Dir::E } else { Dir::W };
    let face_y = if dy >= 0.0 { Dir::N } else { Dir::S };
    let f = dx * dx * speed[face + face_x.index()] + dy * dy * speed[face + face_y.index()];
    [f * dx, f * dy]
}

/// The CPU twin of `shaders/continuum_potential.wgsl`: the potential at `(x, y)` of group
/// `group`'s field in `phi` (as [`gradient_twin`] takes it), in f32: bilinear between the four
/// cell centres around the point over those a source reaches, the cell's own value where none
/// does, [`PHI_INF`] outside the domain.
pub fn potential_twin(params: &GpuContinuumParams, phi: &[f32], group: u32, x: f32, y: f32) -> f32 {
    let (cols, rows) = (params.cols, params.rows);
    let base = (group * cols * rows) as usize;
    let h = params.cell_size;
    let (fx, fy) = (x / h, y / h);
    if !(x >= 0.0 && y >= 0.0 && fx < cols as f32 && fy < rows as f32) {
        return PHI_INF;
    }
    let (r, c) = (fy as u32, fx as u32);
    let u = (fx - 0.5).clamp(0.0, (cols - 1) as f32);
    let v = (fy - 0.5).clamp(0.0, (rows - 1) as f32);
    let (c0, r0) = (u.floor() as u32, v.floor() as u32);
    let (c1, r1) = ((c0 + 1).min(cols - 1), (r0 + 1).min(rows - 1));
    let (tu, tv) = (u - c0 as f32, v - r0 as f32);
    let (mut sum, mut weight) = (0.0f32, 0.0f32);
    for (rr, cc, w) in [
        (r0, c0, (1.0 - tu) * (1.0 - tv)),
        (r0, c1, tu * (1.0 - tv)),
        (r1, c1, tu * tv),
        (r1, c0, (1.0 - tu) * tv),
    ] {
        let p = phi[base + (rr * cols + cc) as usize];
        if p < PHI_INF && w > 0.0 {
            sum += w * p;
            weight += w;
        }
    }
    if weight > 0.0 {
        sum / weight
    } else {
        phi[base + (r * cols + c) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::sanitize_cost;
    use ndarray::Array3;

    fn params(rows: usize, cols: usize, groups: usize, h: f64) -> GpuContinuumParams {
        let grid = Grid::new(cols, rows, h);
        GpuContinuumParams {
            cols: cols as u32,
            rows: rows as u32,
            groups: groups as u32,
            agents: 0,
            cell_size: h as f32,
            width: grid.width() as f32,
            height: grid.height() as f32,
            pad0: 0,
        }
    }

    /// Rough potentials (walls, unreached cells, sources) on a 13 x 17 grid, two groups.
    fn rough(rows: usize, cols: usize) -> (Vec<Array2<f64>>, Array3<f32>) {
        let scramble = |i: usize| ((i.wrapping_mul(2654435761) % 1_000_003) as f32) / 1_000_003.0;
        let phi: Vec<Array2<f64>> = (0..2)
            .map(|g| {
                Array2::from_shape_fn((rows, cols), |(r, c)| {
                    let i = (g * rows + r) * cols + c;
                    match i % 23 {
                        0 => f64::INFINITY,
                        7 => 0.0,
                        _ => f64::from(((r + 2 * c * (g + 1)) as f32) * 0.37 + scramble(i)),
                    }
                })
            })
            .collect();
        let cost = Array3::from_shape_fn((rows, cols, 4), |(r, c, d)| {
            let i = (r * cols + c) * 4 + d;
            if i.is_multiple_of(31) {
                f32::INFINITY
            } else {
                0.5 + 2.0 * scramble(i + 5)
            }
        });
        (phi, cost)
    }

    fn device_layout(phi: &[Array2<f64>], cost: &Array3<f32>) -> (Vec<f32>, Vec<f32>) {
        let flat: Vec<f32> = phi
            .iter()
            .flat_map(|p| p.iter().map(|&v| if v.is_finite() { v as f32 } else { PHI_INF }))
            .collect();
        (flat, cost.iter().map(|&c| sanitize_cost(c)).collect())
    }

    #[test]
    fn the_gradient_twin_is_the_cpu_gradient_in_f32() {
        let (rows, cols, h) = (13, 17, 0.5);
        let (phi, cost) = rough(rows, cols);
        let p = params(rows, cols, 2, h);
        let (flat, device_cost) = device_layout(&phi, &cost);
        let twin = gradient_twin(&p, &flat, &device_cost);
        let mut nonzero = 0;
        for (g, phi) in phi.iter().enumerate() {
            let cpu = crate::gradient::gradient(phi.view(), cost.view(), h);
            for (i, (&a, &b)) in cpu.gx.iter().zip(cpu.gy.iter()).enumerate() {
                let k = g * rows * cols + i;
                let (tx, ty) = (twin[2 * k], twin[2 * k + 1]);
                nonzero += usize::from(tx != 0.0 || ty != 0.0);
                assert!((tx - a).abs() <= 1e-5 * a.abs().max(1.0), "gx {k}: {tx} vs {a}");
                assert!((ty - b).abs() <= 1e-5 * b.abs().max(1.0), "gy {k}: {ty} vs {b}");
            }
        }
        assert!(
            nonzero > rows * cols,
            "the field exercises the upwind choice: {nonzero}"
        );
    }

    #[test]
    fn the_velocity_twin_is_velocity_at_in_f32() {
        let (rows, cols, h) = (13, 17, 0.5);
        let (phi, cost) = rough(rows, cols);
        let p = params(rows, cols, 2, h);
        let (flat, device_cost) = device_layout(&phi, &cost);
        let grad = gradient_twin(&p, &flat, &device_cost);
        let speed = Array3::from_shape_fn((rows, cols, 4), |(r, c, d)| {
            0.3 + ((r * 7 + c * 3 + d) % 11) as f32 * 0.1
        });
        let speed_flat: Vec<f32> = speed.iter().copied().collect();
        let grid = Grid::new(cols, rows, h);
        let mut moving = 0;
        for k in 0..2000u32 {
            let x = (k as f32 * 0.618_034).fract() * (grid.width() as f32 + 1.0) - 0.5;
            let y = (k as f32 * 0.414_213_57).fract() * (grid.height() as f32 + 1.0) - 0.5;
            let g = k % 2;
            let cpu_grad = crate::gradient::gradient(phi[g as usize].view(), cost.view(), h);
            let want = crate::gradient::velocity_at(&grid, &cpu_grad, speed.view(), x, y);
            let got = velocity_twin(&p, &grad, &speed_flat, g, x, y);
            moving += usize::from(want != [0.0, 0.0]);
            for a in 0..2 {
                assert!(
                    (got[a] - want[a]).abs() <= 1e-4,
                    "agent {k} at ({x}, {y}): {got:?} vs {want:?}"
                );
            }
        }
        assert!(moving > 1000, "most points walk: {moving}");
    }

    #[test]
    fn the_potential_twin_is_potential_at_in_f32() {
        let (rows, cols, h) = (13, 17, 0.5);
        let (phi, cost) = rough(rows, cols);
        let p = params(rows, cols, 2, h);
        let (flat, _) = device_layout(&phi, &cost);
        let grid = Grid::new(cols, rows, h);
        let mut unreached = 0;
        for k in 0..2000u32 {
            let x = (k as f32 * 0.618_034).fract() * (grid.width() as f32 + 1.0) - 0.5;
            let y = (k as f32 * 0.414_213_57).fract() * (grid.height() as f32 + 1.0) - 0.5;
            let g = k % 2;
            let want = crate::sim::pedestrian::potential_at(&grid, &phi[g as usize], x, y);
            let got = potential_twin(&p, &flat, g, x, y);
            if want.is_infinite() {
                unreached += 1;
                assert_eq!(got, PHI_INF, "({x}, {y})");
            } else {
                assert!(
                    (f64::from(got) - want).abs() <= 1e-6 * want.abs().max(1.0),
                    "({x}, {y}): {got} vs {want}"
                );
            }
        }
        assert!(
            unreached > 20,
            "points outside the domain or unreached: {unreached}"
        );
    }
}
