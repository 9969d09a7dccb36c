//! Density splat on the GPU (SPEC §2) and its CPU twin [`splat_twin`], which reads like
//! `shaders/splat.wgsl` and `shaders/splat_resolve.wgsl`.
//!
//! Each agent adds `min(..)^lambda` weights to the four cells around it, and weight times its
//! velocity alongside, into integer accumulators in fixed point ([`SPLAT_FIXED_SCALE`]), so the
//! sums do not depend on the order the GPU's atomics run in: the splat is deterministic. The
//! resolve pass turns the sums into persons/m² and a density-weighted average velocity.

use crate::agents::Agents;
use crate::error::{Error, Result};
use crate::fields::Density;
use crate::gpu::context::{GpuContext, bind_group, dispatch_linear};
use crate::gpu::types::GpuSplatParams;
use crate::grid::Grid;
use ndarray::Array2;
use std::sync::{Mutex, MutexGuard};

/// Fixed-point scale of the splat accumulators: 2^16 resolves 1.5e-5 of a person per
/// contribution, and an i32 cell total holds up to 32768 persons (or person·m/s), far above
/// any real cell.
pub const SPLAT_FIXED_SCALE: f32 = 65536.0;

/// Device buffers of the splat, reused while large enough.
pub(crate) struct SplatBuffers {
    agents: usize,
    cells: usize,
    params: wgpu::Buffer,
    pub(crate) pos: [wgpu::Buffer; 4],
    accum: wgpu::Buffer,
    pub(crate) fields: wgpu::Buffer,
    bg: wgpu::BindGroup,
}

impl SplatBuffers {
    fn new(ctx: &GpuContext, agents: usize, cells: usize) -> Result<Self> {
        ctx.check_size("the splat accumulators (3 x cells x 4 bytes)", cells as u64 * 12)?;
        let a = agents as u64 * 4;
        let params = ctx.uniform(
            "crowdfield.splat.params",
            std::mem::size_of::<GpuSplatParams>() as u64,
        );
        let pos = [
            ctx.storage("crowdfield.splat.x", a),
            ctx.storage("crowdfield.splat.y", a),
            ctx.storage("crowdfield.splat.vx", a),
            ctx.storage("crowdfield.splat.vy", a),
        ];
        let accum = ctx.storage("crowdfield.splat.accum", cells as u64 * 12);
        let fields = ctx.storage("crowdfield.splat.fields", cells as u64 * 12);
        let bg = bind_group(
            &ctx.device,
            "crowdfield.splat",
            &ctx.pipelines.splat_layout,
            &[
                (&params, None),
                (&pos[0], None),
                (&pos[1], None),
                (&pos[2], None),
                (&pos[3], None),
                (&accum, None),
                (&fields, None),
            ],
        );
        Ok(Self {
            agents,
            cells,
            params,
            pos,
            accum,
            fields,
            bg,
        })
    }
}

pub(crate) fn splat_params(grid: &Grid, lambda: f64, agents: &Agents) -> Result<GpuSplatParams> {
    if !(grid.cell_size.is_finite() && grid.cell_size > 0.0) {
        return Err(Error::invalid(
            "<memory>",
            "grid.cell_size",
            format!("{}, expected > 0", grid.cell_size),
        ));
    }
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(Error::invalid(
            "<memory>",
            "params.lambda",
            format!("{lambda}, expected > 0"),
        ));
    }
    let n = agents.len();
    if [agents.y.len(), agents.vx.len(), agents.vy.len()]
        .iter()
        .any(|&l| l != n)
    {
        return Err(Error::invalid(
            "<memory>",
            "agents",
            "x, y, vx, vy differ in length",
        ));
    }
    Ok(GpuSplatParams {
        agents: n as u32,
        cols: grid.cols as u32,
        rows: grid.rows as u32,
        lambda: lambda as f32,
        cell_size: grid.cell_size as f32,
        fixed_scale: SPLAT_FIXED_SCALE,
        pad0: 0,
        pad1: 0,
    })
}

pub(crate) fn density_from(grid: &Grid, fields: &[f32]) -> Density {
    let cells = grid.len();
    let arr = |k: usize| {
        Array2::from_shape_vec(grid.shape(), fields[k * cells..(k + 1) * cells].to_vec())
            .expect("a field has rows * cols values")
    };
    Density {
        rho: arr(0),
        vx: arr(1),
        vy: arr(2),
    }
}

impl GpuContext {
    /// Splats `agents` onto `grid` with fall-off `lambda` on the GPU; same meaning as
    /// [`crate::fields::splat`] (density in persons/m², density-weighted average velocity).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a bad cell size, lambda or ragged agent arrays; [`Error::Gpu`]
    /// when the device fails.
    pub fn splat(&self, grid: &Grid, lambda: f64, agents: &Agents) -> Result<Density> {
        let params = splat_params(grid, lambda, agents)?;
        let cells = grid.len();
        if cells == 0 {
            return Ok(density_from(grid, &[]));
        }
        let slot = self.buffers.slot::<SplatBuffers>()?;
        let guard = self.splat_buffers(&slot, agents.len(), cells)?;
        let buf = guard.as_ref().expect("splat buffers were just created");
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("crowdfield.splat"),
            });
        self.encode_splat(buf, &params, agents, &mut encoder);
        self.queue.submit([encoder.finish()]);
        let fields: Vec<f32> = self.read_back(&buf.fields, 0, 3 * cells)?;
        Ok(density_from(grid, &fields))
    }

    /// The splat buffers, (re)built when smaller than `agents` agents or `cells` cells.
    pub(crate) fn splat_buffers<'s>(
        &self,
        slot: &'s Mutex<Option<SplatBuffers>>,
        agents: usize,
        cells: usize,
    ) -> Result<MutexGuard<'s, Option<SplatBuffers>>> {
        let mut guard = slot
            .lock()
            .map_err(|_| Error::Gpu("splat buffers poisoned".into()))?;
        self.prepare_splat(&mut guard, agents, cells)?;
        Ok(guard)
    }

    /// (Re)builds the splat buffers in `slot` when smaller than `agents` agents or `cells`
    /// cells.
    pub(crate) fn prepare_splat(
        &self,
        slot: &mut Option<SplatBuffers>,
        agents: usize,
        cells: usize,
    ) -> Result<()> {
        if slot.as_ref().is_none_or(|b| b.agents < agents || b.cells < cells) {
            *slot = Some(SplatBuffers::new(self, agents.max(1).next_power_of_two(), cells)?);
        }
        Ok(())
    }

    /// Uploads the agents and encodes the splat (clear, splat, resolve) into `encoder`; the
    /// result stays on the device in `buf.fields` (rho, vx, vy, `cells` values each).
    pub(crate) fn encode_splat(
        &self,
        buf: &SplatBuffers,
        params: &GpuSplatParams,
        agents: &Agents,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        let cells = params.cols as u64 * params.rows as u64;
        self.queue
            .write_buffer(&buf.params, 0, bytemuck::bytes_of(params));
        for (b, v) in buf.pos.iter().zip([&agents.x, &agents.y, &agents.vx, &agents.vy]) {
            self.queue.write_buffer(b, 0, bytemuck::cast_slice(v));
        }
        encoder.clear_buffer(&buf.accum, 0, Some(cells * 12));
        let p = &self.pipelines;
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("crowdfield.splat"),
            timestamp_writes: None,
        });
        pass.set_bind_group(0, &buf.bg, &[]);
        pass.set_pipeline(&p.splat);
        dispatch_linear(&mut pass, params.agents);
        pass.set_pipeline(&p.splat_resolve);
        dispatch_linear(&mut pass, cells as u32);
    }
}

/// The CPU twin of the GPU splat: the same f32 weights and fixed-point sums.
///
/// # Errors
/// As [`GpuContext::splat`] for bad input.
pub fn splat_twin(grid: &Grid, lambda: f64, agents: &Agents) -> Result<Density> {
    let params = splat_params(grid, lambda, agents)?;
    let (cols, rows) = (grid.cols as i64, grid.rows as i64);
    let cells = grid.len();
    let mut accum = vec![0i32; 3 * cells];
    // splat.wgsl
    for i in 0..agents.len() {
        let (x, y, vx, vy) = (agents.x[i], agents.y[i], agents.vx[i], agents.vy[i]);
        let gx = x / params.cell_size - 0.5;
        let gy = y / params.cell_size - 0.5;
        if !(gx.abs() < 1.0e9 && gy.abs() < 1.0e9) {
            continue;
        }
        let (fx, fy) = (gx.floor(), gy.floor());
        let (dx, dy) = (gx - fx, gy - fy);
        let (c, r) = (fx as i64, fy as i64);
        let l = params.lambda;
        let mut deposit = |col: i64, row: i64, w: f32| {
            if col < 0 || row < 0 || col >= cols || row >= rows {
                return;
            }
            let cell = (row * cols + col) as usize;
            let q = |v: f32| (v * params.fixed_scale).round() as i32;
            accum[cell] = accum[cell].wrapping_add(q(w));
            accum[cells + cell] = accum[cells + cell].wrapping_add(q(w * vx));
            accum[2 * cells + cell] = accum[2 * cells + cell].wrapping_add(q(w * vy));
        };
        deposit(c, r, (1.0 - dx).min(1.0 - dy).powf(l));
        deposit(c + 1, r, dx.min(1.0 - dy).powf(l));
        deposit(c + 1, r + 1, dx.min(dy).powf(l));
        deposit(c, r + 1, (1.0 - dx).min(dy).powf(l));
    }
    // splat_resolve.wgsl
    let mut fields = vec![0f32; 3 * cells];
    let h = params.cell_size;
    for i in 0..cells {
        let w = accum[i] as f32;
        let (mut vx, mut vy) = (0.0, 0.0);
        if accum[i] > 0 {
            vx = accum[cells + i] as f32 / w;
            vy = accum[2 * cells + i] as f32 / w;
        }
        fields[i] = w / params.fixed_scale / (h * h);
        fields[cells + i] = vx;
        fields[2 * cells + i] = vy;
    }
    Ok(density_from(grid, &fields))
}
