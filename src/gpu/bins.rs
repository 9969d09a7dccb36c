//! The bin-sorted neighbour grid on the GPU: the same arrays as the CPU
//! [`crate::neighbors::NeighborGrid`] (its clamping rules, `bin_start` with `bins + 1` entries,
//! agent ids ascending inside each bin), built by these passes:
//! 1. `bin_count`: each agent's clamped bin, and per-bin counts (integer atomics).
//! 2. scan (`scan_block` up the levels, `scan_add` down): exclusive prefix sum of the counts,
//!    which is `bin_start`.
//! 3. per 8-bit digit of the bin index (1 to 4 passes): `radix_hist` (digit counts per
//!    256-agent chunk, digit-major), a scan of those counts, `radix_scatter` (stable: an
//!    agent's rank is the number of lower-index agents of its chunk with the same digit).
//!    A least-significant-digit radix sort of stable passes over ids that start ascending
//!    leaves ids ascending inside each bin, whatever order the GPU runs the threads in.

use crate::error::{Error, Result};
use crate::gpu::context::{GpuContext, LINEAR_WORKGROUP, MAX_GROUPS_X, bind_group, dispatch_linear};
use crate::gpu::types::{GpuBinParams, GpuScanParams};
use crate::neighbors::NeighborGrid;
use std::sync::{Mutex, MutexGuard};

/// Elements per scan block. Sync: `SCAN_BLOCK` in `shaders/common.wgsl`.
const SCAN_BLOCK: u32 = 256;
/// Digits per radix pass (8 bits). Sync: `RADIX` in `shaders/common.wgsl`.
const RADIX: u32 = 256;
/// Most radix passes (32-bit bin index).
const MAX_RADIX_PASSES: usize = 4;

/// The levels of a multi-level exclusive scan of `len` elements at `offset` in the scan
/// buffer; block totals go from `next_free` on. Returns the levels and the new `next_free`.
pub fn scan_levels(offset: u32, len: u32, mut next_free: u32) -> (Vec<GpuScanParams>, u32) {
    let mut levels = Vec::new();
    let (mut off, mut n) = (offset, len);
    loop {
        let blocks = n.div_ceil(SCAN_BLOCK).max(1);
        levels.push(GpuScanParams {
            offset: off,
            len: n,
            sums_offset: next_free,
            pad: 0,
        });
        off = next_free;
        next_free += blocks;
        if blocks == 1 {
            return (levels, next_free);
        }
        n = blocks;
    }
}

/// Radix passes needed to sort bin indices below `bins`.
pub fn radix_passes(bins: u32) -> usize {
    let bits = 32 - bins.saturating_sub(1).leading_zeros() as usize;
    bits.div_ceil(8).max(1)
}

/// Device buffers of the neighbour grid, reused while large enough.
pub(crate) struct BinBuffers {
    agents: usize,
    scan_len: usize,
    xs: wgpu::Buffer,
    ys: wgpu::Buffer,
    agent_bin: wgpu::Buffer,
    vals: [wgpu::Buffer; 2],
    scan_buf: wgpu::Buffer,
    bin_params: wgpu::Buffer,
    scan_params: wgpu::Buffer,
    /// keys/vals 0 -> 1, and 1 -> 0.
    bins_bg: [wgpu::BindGroup; 2],
    scan_bg: wgpu::BindGroup,
    /// What the last rebuild left on the device: (agents, bins, where the sorted ids are).
    last: Option<(usize, usize, usize)>,
}

/// Most scan levels one rebuild uses (bin counts plus radix histogram, 256-ary).
const MAX_SCAN_LEVELS: u64 = 16;

impl BinBuffers {
    fn new(ctx: &GpuContext, agents: usize, scan_len: usize) -> Result<Self> {
        ctx.check_size("the neighbour-grid scan buffer", scan_len as u64 * 4)?;
        ctx.check_size("the agent positions", agents as u64 * 4)?;
        let a = agents as u64 * 4;
        let xs = ctx.storage("crowdfield.bins.xs", a);
        let ys = ctx.storage("crowdfield.bins.ys", a);
        let agent_bin = ctx.storage("crowdfield.bins.agent_bin", a);
        let keys = [
            ctx.storage("crowdfield.bins.keys0", a),
            ctx.storage("crowdfield.bins.keys1", a),
        ];
        let vals = [
            ctx.storage("crowdfield.bins.vals0", a),
            ctx.storage("crowdfield.bins.vals1", a),
        ];
        let scan_buf = ctx.storage("crowdfield.bins.scan", scan_len as u64 * 4);
        let stride = ctx.uniform_stride();
        let bin_params = ctx.uniform("crowdfield.bins.params", stride * MAX_RADIX_PASSES as u64);
        let scan_params = ctx.uniform("crowdfield.scan.params", stride * MAX_SCAN_LEVELS);
        let p = &ctx.pipelines;
        let bp = std::mem::size_of::<GpuBinParams>() as u64;
        let mk = |i: usize, o: usize| {
            bind_group(
                &ctx.device,
                "crowdfield.bins",
                &p.bin_layout,
                &[
                    (&bin_params, Some(bp)),
                    (&xs, None),
                    (&ys, None),
                    (&agent_bin, None),
                    (&keys[i], None),
                    (&vals[i], None),
                    (&keys[o], None),
                    (&vals[o], None),
                    (&scan_buf, None),
                ],
            )
        };
        let bins_bg = [mk(0, 1), mk(1, 0)];
        let scan_bg = bind_group(
            &ctx.device,
            "crowdfield.scan",
            &p.scan_layout,
            &[
                (&scan_params, Some(std::mem::size_of::<GpuScanParams>() as u64)),
                (&scan_buf, None),
            ],
        );
        Ok(Self {
            agents,
            scan_len,
            xs,
            ys,
            agent_bin,
            vals,
            scan_buf,
            bin_params,
            scan_params,
            bins_bg,
            scan_bg,
            last: None,
        })
    }
}

impl GpuContext {
    /// Bins the agents at `xs, ys` into `grid`'s bins on the device (its `inv_bin_size`, `bins_x`,
    /// `bins_y`), leaving the result there; [`GpuContext::read_neighbor_grid`] fetches it.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `xs` and `ys` differ in length or the grid has no bins;
    /// [`Error::Gpu`] when the input exceeds the device's limits or the device fails.
    ///
    /// The context may be shared between threads: another thread's rebuild between this call
    /// and the read replaces what the read returns. [`GpuContext::neighbor_grid`] holds the
    /// buffers across both steps and is the call to use from concurrent code.
    pub fn rebuild_neighbor_grid(&self, grid: &NeighborGrid, xs: &[f32], ys: &[f32]) -> Result<()> {
        let slot = self.buffers.slot::<BinBuffers>()?;
        let mut guard = self.lock_bins(&slot)?;
        self.rebuild_locked(&mut guard, grid, xs, ys)
    }

    /// The neighbour-grid buffers in `slot` (this context's, [`BufferSlots`]), locked.
    ///
    /// [`BufferSlots`]: crate::gpu::context::BufferSlots
    fn lock_bins<'s>(
        &self,
        slot: &'s Mutex<Option<BinBuffers>>,
    ) -> Result<MutexGuard<'s, Option<BinBuffers>>> {
        slot.lock()
            .map_err(|_| Error::Gpu("neighbour-grid buffers poisoned".into()))
    }

    /// [`GpuContext::rebuild_neighbor_grid`] with the buffers already locked.
    fn rebuild_locked(
        &self,
        guard: &mut Option<BinBuffers>,
        grid: &NeighborGrid,
        xs: &[f32],
        ys: &[f32],
    ) -> Result<()> {
        if xs.len() != ys.len() {
            return Err(Error::invalid(
                "<memory>",
                "agents",
                format!("{} x positions but {} y positions", xs.len(), ys.len()),
            ));
        }
        let bins = grid.bins_x as u64 * grid.bins_y as u64;
        if bins == 0 || bins >= u64::from(u32::MAX) {
            return Err(Error::invalid(
                "<memory>",
                "neighbor grid",
                format!("{bins} bins, expected 1 to 2^32 - 2"),
            ));
        }
        let n = xs.len();
        let chunks = n.div_ceil(RADIX as usize);
        if chunks > MAX_GROUPS_X as usize || n > u32::MAX as usize / 2 {
            return Err(Error::Gpu(format!(
                "{n} agents exceed the {} the GPU grid sorts",
                MAX_GROUPS_X as usize * 256
            )));
        }
        if bins + 1 > u64::from(MAX_GROUPS_X) * u64::from(SCAN_BLOCK) {
            return Err(Error::Gpu(format!(
                "{bins} bins exceed the {} the GPU scan handles",
                MAX_GROUPS_X * SCAN_BLOCK
            )));
        }
        let (bins, chunks) = (bins as u32, chunks as u32);
        let (count_levels, free) = scan_levels(0, bins + 1, bins + 1);
        let hist_offset = free;
        let (hist_levels, scan_len) = scan_levels(hist_offset, RADIX * chunks, hist_offset + RADIX * chunks);
        if (count_levels.len() + hist_levels.len()) as u64 > MAX_SCAN_LEVELS {
            return Err(Error::Gpu(format!(
                "{bins} bins need more scan levels than {MAX_SCAN_LEVELS}"
            )));
        }
        if guard
            .as_ref()
            .is_none_or(|b| b.agents < n || b.scan_len < scan_len as usize)
        {
            *guard = Some(BinBuffers::new(
                self,
                n.max(1).next_power_of_two(),
                (scan_len as usize).next_power_of_two(),
            )?);
        }
        let buf = guard.as_mut().expect("neighbour-grid buffers were just created");
        let stride = self.uniform_stride();
        let passes = radix_passes(bins);
        for p in 0..passes {
            let params = GpuBinParams {
                agents: n as u32,
                bins_x: grid.bins_x,
                bins_y: grid.bins_y,
                inv_bin_size: grid.inv_bin_size,
                shift: 8 * p as u32,
                chunks,
                hist_offset,
                pad: 0,
            };
            self.queue
                .write_buffer(&buf.bin_params, stride * p as u64, bytemuck::bytes_of(&params));
        }
        let levels: Vec<GpuScanParams> = count_levels.iter().chain(&hist_levels).copied().collect();
        for (i, l) in levels.iter().enumerate() {
            self.queue
                .write_buffer(&buf.scan_params, stride * i as u64, bytemuck::bytes_of(l));
        }
        self.write_buffer_parallel(&buf.xs, 0, xs);
        self.write_buffer_parallel(&buf.ys, 0, ys);

        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("crowdfield.bins"),
            });
        encoder.clear_buffer(&buf.scan_buf, 0, Some(u64::from(bins + 1) * 4));
        {
            let p = &self.pipelines;
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("crowdfield.bins"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&p.bin_count);
            pass.set_bind_group(0, &buf.bins_bg[0], &[0]);
            dispatch_linear(&mut pass, n as u32);
            self.scan(&mut pass, buf, 0, &count_levels);
            if n > 0 {
                for r in 0..passes {
                    let offset = [(stride * r as u64) as u32];
                    pass.set_pipeline(&p.radix_hist);
                    pass.set_bind_group(0, &buf.bins_bg[r % 2], &offset);
                    pass.dispatch_workgroups(chunks, 1, 1);
                    self.scan(&mut pass, buf, count_levels.len(), &hist_levels);
                    pass.set_pipeline(&p.radix_scatter);
                    pass.set_bind_group(0, &buf.bins_bg[r % 2], &offset);
                    pass.dispatch_workgroups(chunks, 1, 1);
                }
            }
        }
        self.queue.submit([encoder.finish()]);
        // With no agents the (empty) ids never move.
        let sorted_in = if n > 0 { passes % 2 } else { 0 };
        buf.last = Some((n, bins as usize, sorted_in));
        self.finish()
    }

    /// Encodes a multi-level exclusive scan; `first` is the index of `levels[0]` in the scan
    /// parameter buffer.
    fn scan(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        buf: &BinBuffers,
        first: usize,
        levels: &[GpuScanParams],
    ) {
        let p = &self.pipelines;
        let stride = self.uniform_stride();
        let offset = |i: usize| [(stride * (first + i) as u64) as u32];
        pass.set_pipeline(&p.scan_block);
        for (i, l) in levels.iter().enumerate() {
            pass.set_bind_group(0, &buf.scan_bg, &offset(i));
            pass.dispatch_workgroups(l.len.div_ceil(SCAN_BLOCK).max(1), 1, 1);
        }
        pass.set_pipeline(&p.scan_add);
        for (i, l) in levels.iter().enumerate().rev().skip(1) {
            pass.set_bind_group(0, &buf.scan_bg, &offset(i));
            pass.dispatch_workgroups(l.len.div_ceil(LINEAR_WORKGROUP).max(1), 1, 1);
        }
    }

    /// Reads the grid built by the last [`GpuContext::rebuild_neighbor_grid`] into `grid`
    /// (`agent_bin`, `bin_start`, `sorted`).
    ///
    /// # Errors
    /// [`Error::Gpu`] when nothing was built yet or the read-back fails.
    pub fn read_neighbor_grid(&self, grid: &mut NeighborGrid) -> Result<()> {
        let slot = self.buffers.slot::<BinBuffers>()?;
        let guard = self.lock_bins(&slot)?;
        self.read_locked(&guard, grid)
    }

    /// [`GpuContext::read_neighbor_grid`] with the buffers already locked.
    fn read_locked(&self, guard: &Option<BinBuffers>, grid: &mut NeighborGrid) -> Result<()> {
        let Some((buf, (n, bins, sorted_in))) = guard.as_ref().and_then(|b| b.last.map(|l| (b, l))) else {
            return Err(Error::Gpu("no neighbour grid was built on the GPU yet".into()));
        };
        grid.agent_bin = self.read_back(&buf.agent_bin, 0, n)?;
        grid.bin_start = self.read_back(&buf.scan_buf, 0, bins + 1)?;
        grid.sorted = self.read_back(&buf.vals[sorted_in], 0, n)?;
        Ok(())
    }

    /// [`GpuContext::rebuild_neighbor_grid`] then [`GpuContext::read_neighbor_grid`].
    ///
    /// # Errors
    /// As those two.
    /// Holds the buffers across both, so concurrent callers sharing one context each get their
    /// own grid.
    pub fn neighbor_grid(&self, grid: &mut NeighborGrid, xs: &[f32], ys: &[f32]) -> Result<()> {
        let slot = self.buffers.slot::<BinBuffers>()?;
        let mut guard = self.lock_bins(&slot)?;
        self.rebuild_locked(&mut guard, grid, xs, ys)?;
        self.read_locked(&guard, grid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_radix_passes_cover_the_bin_index_bits() {
        assert_eq!(radix_passes(1), 1);
        assert_eq!(radix_passes(256), 1);
        assert_eq!(radix_passes(257), 2);
        assert_eq!(radix_passes(65_536), 2);
        assert_eq!(radix_passes(65_537), 3);
        assert_eq!(radix_passes(u32::MAX), 4);
    }

    #[test]
    fn gpu_scan_levels_chain_block_totals() {
        // One block: one level, its total right after the data.
        let (levels, free) = scan_levels(0, 100, 100);
        assert_eq!(levels.len(), 1);
        assert_eq!(
            (levels[0].offset, levels[0].len, levels[0].sums_offset),
            (0, 100, 100)
        );
        assert_eq!(free, 101);
        // 70 000 elements: 274 blocks, then 2, then 1.
        let (levels, free) = scan_levels(10, 70_000, 70_010);
        let lens: Vec<u32> = levels.iter().map(|l| l.len).collect();
        assert_eq!(lens, [70_000, 274, 2]);
        for w in levels.windows(2) {
            assert_eq!(
                w[1].offset, w[0].sums_offset,
                "each level scans the totals of the one below"
            );
        }
        assert_eq!(free, 70_010 + 274 + 2 + 1);
    }
}
