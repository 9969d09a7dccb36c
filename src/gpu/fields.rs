//! Speed and unit cost on the GPU (SPEC §3), and the whole continuum chain on the device:
//! splat → speed → cost → block FIM for every group, in one submission, reading the splat's
//! buffers directly (`shaders/field_speed.wgsl`, `shaders/field_cost.wgsl`).
//!
//! The passes compute what [`crate::fields::speed`] and [`crate::fields::unit_cost`] compute,
//! face by face, in f32 instead of f64: terrain speed from the one-sided slope across the face,
//! flow speed from the splatted mean velocity `lookahead` ahead (floored at `f_min`), the
//! linear or Weidmann density blend, and `C = (alpha f + beta + gamma g) / f`. Every value
//! depends only on its inputs (no atomics, no reductions), so the passes are deterministic.
//! On the device the cost is kept in the solver's form ([`crate::gpu::sanitize_cost`]: 0 for
//! a blocked face, finite costs clamped to [`crate::gpu::FIM_COST_MAX`]) so the FIM reads it
//! as is; a read-back turns 0 into `+inf` again, the CPU's wall marker.
//!
//! With a density window (`params.density_window`, [`crate::fields::window`]) two passes run
//! between the splat and the speed (`shaders/density_window_rows.wgsl`, then
//! `density_window_cols.wgsl`: weighted sums along rows, then along columns, directly in f32
//! where the CPU takes prefix sums in f64) and the speed pass reads their window average; with
//! `params.density_at_walker` it also reads the density of the face's own cell. The fields read
//! back keep the splat as their density, as on the CPU.

use crate::agents::Agents;
use crate::eikonal::Solution;
use crate::error::{Error, Result};
use crate::fields::window::DensityWindow;
use crate::fields::{Density, Fields, lookahead_cells};
use crate::gpu::context::{GpuContext, bind_group, dispatch_linear};
use crate::gpu::fim::{FIM_COST_MAX, FimBuffers, prepare_goals, solutions};
use crate::gpu::splat::{SplatBuffers, density_from, splat_params};
use crate::gpu::types::{GpuFieldParams, GpuWindowParams};
use crate::grid::Grid;
use crate::params::SpeedLaw;
use crate::scene::Scene;
use ndarray::{Array2, Array3};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// `FieldParams.speed_law` for the linear blend. Sync: `SPEED_LAW_LINEAR` in `common.wgsl`.
const GPU_SPEED_LAW_LINEAR: u32 = 0;
/// `FieldParams.speed_law` for Weidmann's law. Sync: `SPEED_LAW_WEIDMANN` in `common.wgsl`.
const GPU_SPEED_LAW_WEIDMANN: u32 = 1;

/// Largest look-ahead passed to the device, cells: any value past the grid samples the last
/// cell, and 2^30 keeps `row + ahead` inside the shaders' i32.
const AHEAD_CAP: f64 = (1u32 << 30) as f64;

/// Device buffers of the speed and cost passes, reused while large enough.
pub(crate) struct FieldBuffers {
    cells: usize,
    params: wgpu::Buffer,
    height: wgpu::Buffer,
    obstacle: wgpu::Buffer,
    discomfort: wgpu::Buffer,
    pub(crate) speed: wgpu::Buffer,
    /// The cost of [`GpuContext::fields`]; the chain writes into the FIM's cost buffer instead.
    pub(crate) cost: wgpu::Buffer,
    /// The density window's buffers, made when a scene first asks for a window.
    window: Option<WindowBuffers>,
    /// Whether the scene of the last upload has a density window (the speed pass then reads
    /// `window.average`).
    window_on: bool,
}

/// Device buffers of the density window passes.
struct WindowBuffers {
    params: wgpu::Buffer,
    /// The rows pass's sums: mass, momentum x, momentum y, open cells (4 x cells).
    sums: wgpu::Buffer,
    /// The window average: rho, vx, vy (3 x cells), what the speed pass reads.
    average: wgpu::Buffer,
}

impl WindowBuffers {
    fn new(ctx: &GpuContext, cells: usize) -> Self {
        let c = cells as u64 * 4;
        Self {
            params: ctx.uniform(
                "crowdfield.density_window.params",
                std::mem::size_of::<GpuWindowParams>() as u64,
            ),
            sums: ctx.storage("crowdfield.density_window.sums", 4 * c),
            average: ctx.storage("crowdfield.density_window.average", 3 * c),
        }
    }
}

impl FieldBuffers {
    fn new(ctx: &GpuContext, cells: usize) -> Result<Self> {
        ctx.check_size("the speed (cells x 4 directions x 4 bytes)", cells as u64 * 16)?;
        let c = cells as u64 * 4;
        Ok(Self {
            cells,
            params: ctx.uniform(
                "crowdfield.fields.params",
                std::mem::size_of::<GpuFieldParams>() as u64,
            ),
            height: ctx.storage("crowdfield.fields.height", c),
            obstacle: ctx.storage("crowdfield.fields.obstacle", c),
            discomfort: ctx.storage("crowdfield.fields.discomfort", c),
            speed: ctx.storage("crowdfield.fields.speed", 4 * c),
            cost: ctx.storage("crowdfield.fields.cost", 4 * c),
            window: None,
            window_on: false,
        })
    }
}

/// The scene's grid and model parameters as the passes read them.
///
/// # Errors
/// [`Error::Invalid`] when a layer's shape differs from the grid or the cell size is not
/// positive.
pub fn field_params(scene: &Scene) -> Result<GpuFieldParams> {
    let grid = scene.grid;
    for (name, dim) in [
        ("scene.height", scene.height.dim()),
        ("scene.obstacle", scene.obstacle.dim()),
        ("scene.discomfort", scene.discomfort.dim()),
    ] {
        if dim != grid.shape() {
            return Err(Error::invalid(
                "<memory>",
                name,
                format!("shape {dim:?}, expected {:?} like the grid", grid.shape()),
            ));
        }
    }
    if !(grid.cell_size.is_finite() && grid.cell_size > 0.0) {
        return Err(Error::invalid(
            "<memory>",
            "grid.cell_size",
            format!("{}, expected > 0", grid.cell_size),
        ));
    }
    let p = &scene.params;
    // Split in f64: `row + ahead` in f32 would lose ~1e-6 of a cell, enough to move an
    // interpolated density by 1e-5 relative next to a crowd's edge.
    let ahead = lookahead_cells(p.lookahead, grid.cell_size).min(AHEAD_CAP);
    Ok(GpuFieldParams {
        cols: grid.cols as u32,
        rows: grid.rows as u32,
        speed_law: match p.speed_law {
            SpeedLaw::Linear => GPU_SPEED_LAW_LINEAR,
            SpeedLaw::Weidmann => GPU_SPEED_LAW_WEIDMANN,
        },
        ahead_whole: ahead.floor() as u32,
        cell_size: grid.cell_size as f32,
        ahead_frac: (ahead - ahead.floor()) as f32,
        alpha: p.alpha as f32,
        beta: p.beta as f32,
        gamma: p.gamma as f32,
        f_min: p.f_min as f32,
        f_max: p.f_max as f32,
        s_min: p.s_min as f32,
        s_max: p.s_max as f32,
        rho_min: p.rho_min as f32,
        rho_max: p.rho_max as f32,
        weidmann_gamma: p.weidmann_gamma as f32,
        weidmann_rho_jam: p.weidmann_rho_jam as f32,
        cost_max: FIM_COST_MAX,
        at_walker: u32::from(p.density_at_walker),
        pad2: 0,
    })
}

/// The scene's density window as the window passes read it, or `None` without one
/// (`params.density_window` 0). The window's half-width is capped at the grid on each axis:
/// cells past the border count as nothing, so a larger window gives the same sums.
pub fn window_params(scene: &Scene) -> Option<GpuWindowParams> {
    let grid = scene.grid;
    let w = DensityWindow::new(scene.params.density_window, grid.cell_size)?;
    Some(GpuWindowParams {
        cols: grid.cols as u32,
        rows: grid.rows as u32,
        half_cols: w.half_on(grid.cols) as u32,
        half_rows: w.half_on(grid.rows) as u32,
        edge: w.edge as f32,
        pad0: 0,
        pad1: 0,
        pad2: 0,
    })
}

/// What [`GpuContext::continuum_step`] returns.
#[derive(Clone, Debug)]
pub struct GpuStep {
    /// One potential per goal mask, solver `"fim-gpu"`; `seconds` covers the whole chain.
    pub potentials: Vec<Solution>,
    /// Density, speed and cost as computed on the device, when asked for (else `None`: the
    /// fields never leave the device).
    pub fields: Option<Fields>,
}

impl GpuContext {
    /// Splat, speed and unit cost of `agents` on `scene`, computed on the GPU and read back:
    /// the same quantities as [`Fields::compute`], in f32 (cost `+inf` on blocked faces).
    ///
    /// # Errors
    /// [`Error::Invalid`] for layers whose shape differs from the grid, a bad cell size or
    /// lambda, ragged agent arrays; [`Error::Gpu`] when the device fails.
    pub fn fields(&self, scene: &Scene, agents: &Agents) -> Result<Fields> {
        let fp = field_params(scene)?;
        let sp = splat_params(&scene.grid, scene.params.lambda, agents)?;
        let cells = scene.grid.len();
        if cells == 0 {
            return Ok(empty_fields(scene));
        }
        let (splat_slot, field_slot) = (
            self.buffers.slot::<SplatBuffers>()?,
            self.buffers.slot::<FieldBuffers>()?,
        );
        let splat_guard = self.splat_buffers(&splat_slot, agents.len(), cells)?;
        let splat = splat_guard.as_ref().expect("splat buffers were just created");
        let field_guard = self.field_buffers(&field_slot, scene, &fp)?;
        let fb = field_guard.as_ref().expect("field buffers were just created");
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("crowdfield.fields"),
            });
        self.encode_splat(splat, &sp, agents, &mut encoder);
        self.encode_fields(fb, &splat.fields, &fb.cost, cells, &mut encoder);
        self.queue.submit([encoder.finish()]);
        self.read_fields(&scene.grid, &splat.fields, &fb.speed, &fb.cost)
    }

    /// One continuum step on the device: splat `agents`, speed, cost, then one potential per
    /// goal mask by the block FIM. Splat, fields and the first FIM passes go to the device in
    /// one submission, the fields read straight from the splat's buffers and the FIM straight
    /// from the cost pass's output; the host then reads only the 16-byte convergence state
    /// between batches of passes, and the potentials at the end. With `read_fields` the
    /// density, speed and cost are read back too (for checks and plots).
    ///
    /// # Errors
    /// As [`GpuContext::fields`], plus [`Error::Invalid`] for goal masks of the wrong shape
    /// and [`Error::Gpu`] when the FIM reaches its safety cap.
    pub fn continuum_step(
        &self,
        scene: &Scene,
        agents: &Agents,
        goals: &[Array2<bool>],
        read_fields: bool,
    ) -> Result<GpuStep> {
        let start = Instant::now();
        let fp = field_params(scene)?;
        let sp = splat_params(&scene.grid, scene.params.lambda, agents)?;
        let input = prepare_goals(
            scene.grid.rows,
            scene.grid.cols,
            goals,
            scene.grid.cell_size,
            self.fim_tile,
        )?;
        let cells = scene.grid.len();
        if cells == 0 || goals.is_empty() {
            let fields = if read_fields {
                Some(self.fields(scene, agents)?)
            } else {
                None
            };
            return Ok(GpuStep {
                potentials: solutions(&[], &input, "fim-gpu", self.empty_counters(), 0.0),
                fields,
            });
        }
        let (splat_slot, field_slot, fim_slot) = (
            self.buffers.slot::<SplatBuffers>()?,
            self.buffers.slot::<FieldBuffers>()?,
            self.buffers.slot::<FimBuffers>()?,
        );
        let splat_guard = self.splat_buffers(&splat_slot, agents.len(), cells)?;
        let splat = splat_guard.as_ref().expect("splat buffers were just created");
        let field_guard = self.field_buffers(&field_slot, scene, &fp)?;
        let fb = field_guard.as_ref().expect("field buffers were just created");
        let fim_guard = self.fim_buffers(&fim_slot, &input)?;
        let fim = fim_guard.as_ref().expect("FIM buffers were just created");
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("crowdfield.continuum_step"),
            });
        self.encode_splat(splat, &sp, agents, &mut encoder);
        self.encode_fields(fb, &splat.fields, &fim.cost, cells, &mut encoder);
        let counters = self.run_fim(fim, &input, encoder)?;
        let phi: Vec<f32> = self.read_back(&fim.phi, 0, input.phi.len())?;
        let fields = if read_fields {
            Some(self.read_fields(&scene.grid, &splat.fields, &fb.speed, &fim.cost)?)
        } else {
            None
        };
        Ok(GpuStep {
            potentials: solutions(&phi, &input, "fim-gpu", counters, start.elapsed().as_secs_f64()),
            fields,
        })
    }

    /// The field buffers, (re)built when too small, with the parameters and the scene's layers
    /// uploaded.
    fn field_buffers<'s>(
        &self,
        slot: &'s Mutex<Option<FieldBuffers>>,
        scene: &Scene,
        fp: &GpuFieldParams,
    ) -> Result<MutexGuard<'s, Option<FieldBuffers>>> {
        let mut guard = slot
            .lock()
            .map_err(|_| Error::Gpu("field buffers poisoned".into()))?;
        self.prepare_fields(&mut guard, scene, fp)?;
        Ok(guard)
    }

    /// (Re)builds the field buffers in `slot` when too small for `scene`, then uploads the
    /// parameters and the scene's layers.
    pub(crate) fn prepare_fields(
        &self,
        slot: &mut Option<FieldBuffers>,
        scene: &Scene,
        fp: &GpuFieldParams,
    ) -> Result<()> {
        let cells = scene.grid.len();
        if slot.as_ref().is_none_or(|b| b.cells < cells) {
            *slot = Some(FieldBuffers::new(self, cells)?);
        }
        let fb = slot.as_mut().expect("field buffers were just created");
        let wp = window_params(scene);
        fb.window_on = wp.is_some();
        if let Some(wp) = wp {
            let window = fb
                .window
                .get_or_insert_with(|| WindowBuffers::new(self, fb.cells));
            self.queue
                .write_buffer(&window.params, 0, bytemuck::bytes_of(&wp));
        }
        let fb = &*fb;
        let obstacle: Vec<u32> = scene.obstacle.iter().map(|&o| u32::from(o)).collect();
        let height: Vec<f32> = scene.height.iter().copied().collect();
        let discomfort: Vec<f32> = scene.discomfort.iter().copied().collect();
        self.queue.write_buffer(&fb.params, 0, bytemuck::bytes_of(fp));
        self.queue
            .write_buffer(&fb.height, 0, bytemuck::cast_slice(&height));
        self.queue
            .write_buffer(&fb.obstacle, 0, bytemuck::cast_slice(&obstacle));
        self.queue
            .write_buffer(&fb.discomfort, 0, bytemuck::cast_slice(&discomfort));
        Ok(())
    }

    /// Encodes the density window passes (when the scene has a window) and the speed and cost
    /// passes: density from `density` (the splat's output) or its window average, cost into
    /// `cost`.
    pub(crate) fn encode_fields(
        &self,
        fb: &FieldBuffers,
        density: &wgpu::Buffer,
        cost: &wgpu::Buffer,
        cells: usize,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        let p = &self.pipelines;
        let density = match (&fb.window, fb.window_on) {
            (Some(window), true) => {
                self.encode_density_window(fb, window, density, cells, encoder);
                &window.average
            }
            _ => density,
        };
        // Built per call: the splat's and the FIM's buffers may have been replaced since.
        let bg = bind_group(
            &self.device,
            "crowdfield.fields",
            &p.field_layout,
            &[
                (&fb.params, None),
                (&fb.height, None),
                (&fb.obstacle, None),
                (&fb.discomfort, None),
                (density, None),
                (&fb.speed, None),
                (cost, None),
            ],
        );
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("crowdfield.fields"),
            timestamp_writes: None,
        });
        pass.set_bind_group(0, &bg, &[]);
        pass.set_pipeline(&p.field_speed);
        dispatch_linear(&mut pass, cells as u32);
        pass.set_pipeline(&p.field_cost);
        dispatch_linear(&mut pass, cells as u32);
    }

    /// Encodes the density window: sums along rows of the splat `density` into `window.sums`,
    /// then along columns into `window.average`.
    fn encode_density_window(
        &self,
        fb: &FieldBuffers,
        window: &WindowBuffers,
        density: &wgpu::Buffer,
        cells: usize,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        let p = &self.pipelines;
        let rows_bg = bind_group(
            &self.device,
            "crowdfield.density_window.rows",
            &p.window_layout,
            &[
                (&window.params, None),
                (&fb.obstacle, None),
                (density, None),
                (&window.sums, None),
            ],
        );
        let cols_bg = bind_group(
            &self.device,
            "crowdfield.density_window.cols",
            &p.window_layout,
            &[
                (&window.params, None),
                (&fb.obstacle, None),
                (&window.sums, None),
                (&window.average, None),
            ],
        );
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("crowdfield.density_window"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&p.density_window_rows);
        pass.set_bind_group(0, &rows_bg, &[]);
        dispatch_linear(&mut pass, cells as u32);
        pass.set_pipeline(&p.density_window_cols);
        pass.set_bind_group(0, &cols_bg, &[]);
        dispatch_linear(&mut pass, cells as u32);
    }

    /// Reads density, speed and cost back (cost 0, the device's wall marker, becomes `+inf`).
    pub(crate) fn read_fields(
        &self,
        grid: &Grid,
        density: &wgpu::Buffer,
        speed: &wgpu::Buffer,
        cost: &wgpu::Buffer,
    ) -> Result<Fields> {
        let grid = *grid;
        let cells = grid.len();
        let d: Vec<f32> = self.read_back(density, 0, 3 * cells)?;
        let f: Vec<f32> = self.read_back(speed, 0, 4 * cells)?;
        let c: Vec<f32> = self.read_back(cost, 0, 4 * cells)?;
        let c = c
            .into_iter()
            .map(|v| if v > 0.0 { v } else { f32::INFINITY })
            .collect();
        Ok(Fields {
            density: density_from(&grid, &d),
            speed: Array3::from_shape_vec(grid.dir_shape(), f).expect("speed has rows * cols * 4 values"),
            cost: Array3::from_shape_vec(grid.dir_shape(), c).expect("cost has rows * cols * 4 values"),
        })
    }
}

/// The fields of a grid without cells.
fn empty_fields(scene: &Scene) -> Fields {
    Fields {
        density: Density::empty(&scene.grid),
        speed: Array3::zeros(scene.grid.dir_shape()),
        cost: Array3::from_elem(scene.grid.dir_shape(), f32::INFINITY),
    }
}
