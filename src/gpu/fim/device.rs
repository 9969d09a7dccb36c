//! The FIM's device side: its buffers (kept in the context's slot for them and reused while
//! large enough, or owned by a [`crate::gpu::ContinuumRun`]), and [`GpuContext::solve_fim`],
//! the host loop that encodes the passes in batches and reads the state back after each batch.

use super::{
    DISPATCHES_PER_PASS, FIRST_PASSES_PER_SUBMIT, FimInput, PASSES_PER_SUBMIT, STATE_COUNT, STATE_PASSES,
    STATE_RELAX_HI, STATE_RELAX_LO, STATE_SLOTS, max_passes, prepare, solutions,
};
use crate::eikonal::{Solution, SolveCounters};
use crate::error::{Error, Result};
use crate::gpu::context::{GpuContext, bind_group};
use crate::gpu::types::{GpuFimParams, GpuFimStep};
use ndarray::{Array2, ArrayView3};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// The device buffers of the FIM solver, kept in the context and reused while they are large
/// enough.
pub(crate) struct FimBuffers {
    cells: usize,
    slots: usize,
    params: wgpu::Buffer,
    pub(crate) cost: wgpu::Buffer,
    source: wgpu::Buffer,
    pub(crate) phi: wgpu::Buffer,
    queued: wgpu::Buffer,
    lists: wgpu::Buffer,
    state: wgpu::Buffer,
    /// Indirect arguments, one buffer per pass parity: the block's three words, then the
    /// commit's three.
    args: [wgpu::Buffer; 2],
    /// Bind groups by pass parity: parity `p` binds `args[1 - p]` for the commit to write.
    main: [wgpu::BindGroup; 2],
    /// Stride of the entries of the step buffer (the uniform offset alignment, at least 16).
    step_stride: u64,
}

/// Entries of the step buffer: the list and count slots of a pass repeat every 6 passes (two
/// lists, three counts).
pub(super) const STEP_ENTRIES: usize = 6;

/// The list and count slots of pass `e` (counting every encoded pass from 0).
pub(crate) fn fim_step(e: usize) -> GpuFimStep {
    GpuFimStep {
        list_in: (e % 2) as u32,
        count_in: (STATE_COUNT + e % 3) as u32,
        count_out: (STATE_COUNT + (e + 1) % 3) as u32,
        count_clear: (STATE_COUNT + (e + 2) % 3) as u32,
    }
}

impl FimBuffers {
    /// `cells`: cells per group times groups (phi entries); `slots`: tiles times groups.
    fn new(ctx: &GpuContext, grid_cells: usize, cells: usize, slots: usize) -> Result<Self> {
        ctx.check_size("the potentials (cells x groups x 4 bytes)", cells as u64 * 4)?;
        ctx.check_size(
            "the cost (cells x 4 directions x 4 bytes)",
            grid_cells as u64 * 16,
        )?;
        let params = ctx.uniform(
            "crowdfield.fim.params",
            std::mem::size_of::<GpuFimParams>() as u64,
        );
        let step_stride = u64::from(ctx.limits.min_uniform_buffer_offset_alignment).max(16);
        let step = ctx.uniform("crowdfield.fim.step", step_stride * STEP_ENTRIES as u64);
        let mut steps = vec![0u8; (step_stride as usize) * STEP_ENTRIES];
        for e in 0..STEP_ENTRIES {
            let at = e * step_stride as usize;
            steps[at..at + 16].copy_from_slice(bytemuck::bytes_of(&fim_step(e)));
        }
        ctx.queue.write_buffer(&step, 0, &steps);
        let cost = ctx.storage("crowdfield.fim.cost", grid_cells as u64 * 16);
        let source = ctx.storage("crowdfield.fim.source", cells as u64 * 4);
        let phi = ctx.storage("crowdfield.fim.phi", cells as u64 * 4);
        let phi_next = ctx.storage("crowdfield.fim.phi_next", cells as u64 * 4);
        let queued = ctx.storage("crowdfield.fim.queued", slots as u64 * 4);
        let lists = ctx.storage("crowdfield.fim.lists", 2 * slots as u64 * 4);
        let state = ctx.storage("crowdfield.fim.state", STATE_SLOTS as u64 * 4);
        let args = [0, 1].map(|p| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(if p == 0 {
                    "crowdfield.fim.args.even"
                } else {
                    "crowdfield.fim.args.odd"
                }),
                size: 24,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::INDIRECT
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        let p = &ctx.pipelines;
        let main = [0, 1].map(|parity| {
            bind_group(
                &ctx.device,
                "crowdfield.fim",
                &p.fim_layout,
                &[
                    (&params, None),
                    (&step, Some(16)),
                    (&cost, None),
                    (&source, None),
                    (&phi, None),
                    (&phi_next, None),
                    (&queued, None),
                    (&lists, None),
                    (&state, None),
                    (&args[1 - parity], None),
                ],
            )
        });
        Ok(Self {
            cells,
            slots,
            params,
            cost,
            source,
            phi,
            queued,
            lists,
            state,
            args,
            main,
            step_stride,
        })
    }
}

/// Indirect dispatch sizes for `count` workgroups: `(x, y, 1)` with `x <= MAX_GROUPS_X`.
/// Twin of the sizes `fim_commit.wgsl` writes.
fn dispatch_size(count: u32) -> [u32; 3] {
    let x = count.min(crate::gpu::context::MAX_GROUPS_X);
    let y = if count > 0 { count.div_ceil(x.max(1)) } else { 0 };
    [x, y, 1]
}

impl GpuContext {
    /// Edge of the FIM's tiles on this adapter, cells ([`choose_fim_tile`]).
    pub fn fim_tile(&self) -> usize {
        self.fim_tile
    }

    /// Solves one potential per goal mask with the block FIM, all groups in one solve sharing
    /// one cost array (shape `(rows, cols, 4)`, see [`crate::eikonal`]). Returns solutions
    /// named `"fim-gpu"` with the solve's [`SolveCounters`].
    ///
    /// # Errors
    /// [`Error::Invalid`] for mismatched shapes or a bad cell size, [`Error::Gpu`] when the grid
    /// is larger than the device allows, the device fails, or the solve reaches the safety cap
    /// of [`max_passes`] without converging.
    pub fn solve_fim(
        &self,
        cost: ArrayView3<f32>,
        goals: &[Array2<bool>],
        cell_size: f64,
    ) -> Result<Vec<Solution>> {
        let start = Instant::now();
        let input = prepare(cost, goals, cell_size, self.fim_tile)?;
        let pr = input.params;
        if pr.groups == 0 || pr.cols == 0 || pr.rows == 0 {
            return Ok(solutions(&[], &input, "fim-gpu", self.empty_counters(), 0.0));
        }
        let slot = self.buffers.slot::<FimBuffers>()?;
        let guard = self.fim_buffers(&slot, &input)?;
        let buf = guard.as_ref().expect("FIM buffers were just created");
        self.write_buffer_parallel(&buf.cost, 0, &input.cost);
        let encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("crowdfield.fim"),
            });
        let counters = self.run_fim(buf, &input, encoder)?;
        let phi: Vec<f32> = self.read_back(&buf.phi, 0, input.phi.len())?;
        Ok(solutions(
            &phi,
            &input,
            "fim-gpu",
            counters,
            start.elapsed().as_secs_f64(),
        ))
    }

    /// The counters of a solve that ran nothing.
    pub(crate) fn empty_counters(&self) -> SolveCounters {
        SolveCounters {
            tile: self.fim_tile,
            ..SolveCounters::default()
        }
    }

    /// The FIM buffers, (re)built when too small for `input`, with everything but the cost
    /// uploaded (parameters, sources, initial potentials, every tile on the first list).
    pub(crate) fn fim_buffers<'s>(
        &self,
        slot: &'s Mutex<Option<FimBuffers>>,
        input: &FimInput,
    ) -> Result<MutexGuard<'s, Option<FimBuffers>>> {
        let mut guard = slot
            .lock()
            .map_err(|_| Error::Gpu("FIM buffers poisoned".into()))?;
        self.prepare_fim(&mut guard, input)?;
        Ok(guard)
    }

    /// (Re)builds the FIM buffers in `slot` when too small for `input`, then uploads everything
    /// but the cost (parameters, sources, initial potentials, every tile on the first list).
    pub(crate) fn prepare_fim(&self, slot: &mut Option<FimBuffers>, input: &FimInput) -> Result<()> {
        let pr = input.params;
        let grid_cells = (pr.cols * pr.rows) as usize;
        let cells = input.phi.len();
        let slots = (pr.tiles_per_group * pr.groups) as usize;
        if slot
            .as_ref()
            .is_none_or(|b| b.cells < cells || b.slots < slots || b.cost.size() < grid_cells as u64 * 16)
        {
            *slot = Some(FimBuffers::new(self, grid_cells, cells, slots)?);
        }
        let buf = slot.as_ref().expect("FIM buffers were just created");
        self.write_buffer_parallel(&buf.source, 0, &input.source);
        self.write_buffer_parallel(&buf.phi, 0, &input.phi);
        self.restart_fim(buf, &pr);
        Ok(())
    }

    /// Uploads the parameters and puts every tile on the first list, leaving sources and
    /// potentials as they are: what a solve needs besides them (a few bytes per tile).
    pub(crate) fn restart_fim(&self, buf: &FimBuffers, pr: &GpuFimParams) {
        let slots = (pr.tiles_per_group * pr.groups) as usize;
        self.queue.write_buffer(&buf.params, 0, bytemuck::bytes_of(pr));
        // Every tile starts on list 0, queued for pass 0 (stamp 1): the first pass finds the
        // tiles next to the sources.
        let all: Vec<u32> = (0..slots as u32).collect();
        self.write_buffer_parallel(&buf.lists, 0, &all);
        self.queue
            .write_buffer(&buf.queued, 0, bytemuck::cast_slice(&vec![1u32; slots]));
        let mut state = [0u32; STATE_SLOTS];
        state[STATE_COUNT] = slots as u32;
        self.queue
            .write_buffer(&buf.state, 0, bytemuck::cast_slice(&state));
        let size = dispatch_size(slots as u32);
        let args = [size[0], size[1], 1, size[0].max(1), size[1].max(1), 1];
        self.queue
            .write_buffer(&buf.args[0], 0, bytemuck::cast_slice(&args));
    }

    /// Runs the FIM passes until the next active list is empty and returns the counters. The
    /// first batch of [`FIRST_PASSES_PER_SUBMIT`] passes is appended to `encoder` (which may
    /// already hold the work that produces the cost) and submitted with it; after each batch
    /// (then [`PASSES_PER_SUBMIT`] passes) only the 32-byte state is read back, to test
    /// convergence. The potentials stay on the device in `buf.phi`.
    pub(crate) fn run_fim(
        &self,
        buf: &FimBuffers,
        input: &FimInput,
        mut encoder: wgpu::CommandEncoder,
    ) -> Result<SolveCounters> {
        let pr = input.params;
        let cap = max_passes(
            pr.tiles_per_group as usize,
            (pr.cols * pr.rows) as usize,
            input.tile,
        );
        let mut encoded = 0usize;
        let mut read_backs = 0usize;
        let mut batch = FIRST_PASSES_PER_SUBMIT;
        loop {
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("crowdfield.fim"),
                    timestamp_writes: None,
                });
                for e in encoded..encoded + batch {
                    self.fim_pass(&mut pass, buf, e);
                }
            }
            encoded += batch;
            batch = PASSES_PER_SUBMIT;
            self.queue.submit([encoder.finish()]);
            let state: Vec<u32> = self.read_back(&buf.state, 0, STATE_SLOTS)?;
            read_backs += 1;
            let passes = state[STATE_PASSES] as usize;
            let active = state[fim_step(encoded).count_in as usize];
            if active == 0 {
                return Ok(SolveCounters {
                    passes,
                    dispatches: DISPATCHES_PER_PASS * encoded,
                    read_backs,
                    relaxations: u64::from(state[STATE_RELAX_LO]) | (u64::from(state[STATE_RELAX_HI]) << 32),
                    relaxations_per_reachable_cell: 0.0,
                    tile: input.tile,
                });
            }
            if passes > cap {
                return Err(Error::Gpu(format!(
                    "the FIM solve did not converge within the safety cap of {cap} passes \
                     ({active} tiles still active); the potential is not returned"
                )));
            }
            encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("crowdfield.fim"),
                });
        }
    }

    /// Pass `e` of a solve: relax the listed tiles, then commit them and size the next pass.
    fn fim_pass(&self, pass: &mut wgpu::ComputePass<'_>, buf: &FimBuffers, e: usize) {
        let p = &self.pipelines;
        let parity = e % 2;
        let offset = ((e % STEP_ENTRIES) as u64 * buf.step_stride) as u32;
        pass.set_bind_group(0, &buf.main[parity], &[offset]);
        pass.set_pipeline(&p.fim_block);
        pass.dispatch_workgroups_indirect(&buf.args[parity], 0);
        pass.set_pipeline(&p.fim_commit);
        pass.dispatch_workgroups_indirect(&buf.args[parity], 12);
    }
}
