//! Eikonal on the GPU: the block fast iterative method (Jeong & Whitaker 2008), host side, and
//! its CPU twin [`solve_fim_cpu`], written to read like the shaders `fim_*.wgsl`.
//!
//! The grid is cut into 8x8 tiles. One pass is four dispatches:
//! 1. `fim_block`: every active tile loads itself and a one-cell halo from `phi` into workgroup
//!    memory, relaxes up to 16 times with the first-order anisotropic update of SPEC §4
//!    (Jacobi, a barrier between sweeps) and writes to `phi_next`. It wakes itself when it has
//!    not settled, and each neighbour tile whose shared edge changed.
//! 2. `fim_commit`: copies the active tiles back from `phi_next` to `phi`.
//! 3. `fim_compact`: gathers the woken tiles into the active list.
//! 4. `fim_args`: publishes the list length and the next indirect dispatch size.
//!
//! Each block pass reads only `phi` (never a tile another workgroup is writing), so the result
//! does not depend on scheduling or on the order of the active list. The solve stops when the
//! active list is empty, i.e. no tile lowered any cell in a pass (see [`FIM_EPS_REL`]); a
//! safety cap on passes, if reached, is an error, never a silent success.

use crate::eikonal::Solution;
use crate::error::{Error, Result};
use crate::gpu::context::{GpuContext, bind_group, dispatch_linear};
use crate::gpu::types::GpuFimParams;
use ndarray::{Array2, ArrayView3};
use std::time::Instant;

/// Edge of a tile, cells. Sync: `FIM_TILE` in `shaders/common.wgsl`.
pub const FIM_TILE: usize = 8;
/// Relaxations per block dispatch. Sync: `FIM_INNER_ITERS` in `shaders/fim_block.wgsl`.
pub const FIM_INNER_ITERS: usize = 16;
/// Potential of an unreached cell on the device; read back as `+inf`.
/// Sync: `PHI_INF` in `shaders/common.wgsl`.
pub const PHI_INF: f32 = 3.0e38;
/// A cell's update counts only when it lowers phi by more than this fraction of the new value.
/// 0: every decrease counts. Values only ever decrease and f32 has finitely many, so the solve
/// still ends. A positive threshold biases the result: each cell may stop up to `eps * phi`
/// high and the next cell inherits that lag, so the error adds up along a path to about
/// `eps * n / 2` relative after n cells (with 1e-6: 1.4e-3 against fast marching at 2048²
/// with walls). With 0 the same walled grids (256² to 2048²) took exactly the same number of
/// passes and the difference fell tenfold, to the f32 rounding of the sums (1.3e-4 at 2048²).
pub const FIM_EPS_REL: f32 = 0.0;
/// Finite unit costs above this (s/m) are clamped to it, so squared step costs stay finite
/// in f32 (a walker that slow is blocked in practice).
pub const FIM_COST_MAX: f32 = 1.0e12;
/// Passes encoded in the first submission before the host reads the active count back; each
/// later submission doubles it up to [`MAX_PASSES_PER_SUBMIT`]. A read-back costs about 0.2 ms
/// and a pass past convergence (no tiles, four dispatches) about 0.03 ms on an H200, so short
/// solves stop soon after converging and long ones (580 passes at 1024² with walls) wait on 11
/// read-backs instead of 73: 57.7 -> 43.4 ms there with 64 a batch (BENCHMARKS.md).
const FIRST_PASSES_PER_SUBMIT: usize = 16;
/// The largest batch of passes per submission (see [`FIRST_PASSES_PER_SUBMIT`]).
const MAX_PASSES_PER_SUBMIT: usize = 64;
/// Slots of the `state` buffer. Sync: `STATE_*` in `shaders/common.wgsl`.
const STATE_ACTIVE: usize = 1;
const STATE_PASSES: usize = 2;

/// The safety cap on passes for a grid with `tiles` tiles per group: a tile is relaxed again
/// only when a neighbour lowered its edge, and on the mazes we tried a tile is woken at most a
/// handful of times, so four wakes per tile plus slack is far above any converging solve.
pub fn max_passes(tiles: usize) -> usize {
    4 * tiles + 64
}

/// Unit cost as the solvers use it: the step cost factor, 0 where the face is blocked
/// (`+inf`, NaN, or `<= 0`), finite costs clamped to [`FIM_COST_MAX`].
pub fn sanitize_cost(c: f32) -> f32 {
    if c.is_finite() && c > 0.0 {
        c.min(FIM_COST_MAX)
    } else {
        0.0
    }
}

/// The first-order anisotropic update of SPEC §4 in f32, as fast marching computes it. `p*`
/// are the neighbours' potentials (`>= PHI_INF` = unreached), `c*` the step costs
/// `h * C(cell -> neighbour)` (0 = blocked). Twin of `local_update` in `shaders/common.wgsl`.
///
/// Fast marching accepts the neighbours in increasing order and recomputes the cell after each
/// acceptance, keeping the smallest value (decrease-key): its result is the minimum of
/// `update_from_neighbours` over the prefixes of the neighbours sorted by value. That is not
/// the update from all four at once: on an anisotropic field a later neighbour can win its
/// axis by a smaller `phi_M + C(cell -> M)` and yet give a larger quadratic root than the pair
/// an earlier prefix used (seen: 0.5 % above fast marching on random fields). So this takes the
/// same minimum, order-free: for each reached neighbour value `t`, the update from the
/// neighbours at or below `t`.
#[allow(clippy::too_many_arguments)]
pub fn local_update(pe: f32, pn: f32, pw: f32, ps: f32, ce: f32, cn: f32, cw: f32, cs: f32) -> f32 {
    let mut r = PHI_INF;
    for t in [pe, pn, pw, ps] {
        if t < PHI_INF {
            let upto = |p: f32| if p <= t { p } else { PHI_INF };
            r = r.min(update_from_neighbours(
                upto(pe),
                upto(pn),
                upto(pw),
                upto(ps),
                ce,
                cn,
                cw,
                cs,
            ));
        }
    }
    r
}

/// The SPEC §4 update from all four neighbours as given (no downwind filter): per axis the
/// neighbour with the smaller `phi_M + C`, then the quadratic or the one-sided value.
#[allow(clippy::too_many_arguments)]
fn update_from_neighbours(pe: f32, pn: f32, pw: f32, ps: f32, ce: f32, cn: f32, cw: f32, cs: f32) -> f32 {
    let mut a = PHI_INF;
    let mut p = 0.0;
    if ce > 0.0 && pe < PHI_INF {
        a = pe;
        p = ce;
    }
    if cw > 0.0 && pw < PHI_INF && (a >= PHI_INF || pw + cw < a + p) {
        a = pw;
        p = cw;
    }
    let mut b = PHI_INF;
    let mut q = 0.0;
    if cn > 0.0 && pn < PHI_INF {
        b = pn;
        q = cn;
    }
    if cs > 0.0 && ps < PHI_INF && (b >= PHI_INF || ps + cs < b + q) {
        b = ps;
        q = cs;
    }
    if a >= PHI_INF && b >= PHI_INF {
        return PHI_INF;
    }
    if a >= PHI_INF {
        return (b + q).min(PHI_INF);
    }
    if b >= PHI_INF {
        return (a + p).min(PHI_INF);
    }
    let one_sided = (a + p).min(b + q);
    let s = p * p + q * q;
    let diff = a - b;
    let d = s - diff * diff;
    if d >= 0.0 {
        let phi = a * (q * q / s) + b * (p * p / s) + (p * q / s) * d.sqrt();
        if phi >= a.max(b) {
            return phi.min(one_sided).min(PHI_INF);
        }
    }
    one_sided.min(PHI_INF)
}

/// Checked inputs of one multi-group solve, laid out as the device buffers.
pub(crate) struct FimInput {
    pub(crate) params: GpuFimParams,
    /// `(cell * 4 + dir)`: sanitized unit cost.
    pub(crate) cost: Vec<f32>,
    /// `(group * cells + cell)`: 1 on sources.
    pub(crate) source: Vec<u32>,
    /// `(group * cells + cell)`: 0 on sources, `PHI_INF` elsewhere.
    pub(crate) phi: Vec<f32>,
}

fn prepare(cost: ArrayView3<f32>, goals: &[Array2<bool>], cell_size: f64) -> Result<FimInput> {
    let (rows, cols, dirs) = cost.dim();
    if dirs != 4 {
        return Err(Error::invalid(
            "<memory>",
            "cost",
            format!("shape {:?}, expected (rows, cols, 4)", cost.dim()),
        ));
    }
    let mut input = prepare_goals(rows, cols, goals, cell_size)?;
    input.cost = cost.iter().map(|&c| sanitize_cost(c)).collect();
    Ok(input)
}

/// Checks the goals and the cell size and lays out everything but the cost (left empty).
pub(crate) fn prepare_goals(
    rows: usize,
    cols: usize,
    goals: &[Array2<bool>],
    cell_size: f64,
) -> Result<FimInput> {
    if !(cell_size.is_finite() && cell_size > 0.0) {
        return Err(Error::invalid(
            "<memory>",
            "cell_size",
            format!("{cell_size}, expected a positive number"),
        ));
    }
    for (k, g) in goals.iter().enumerate() {
        if g.dim() != (rows, cols) {
            return Err(Error::invalid(
                "<memory>",
                format!("goals[{k}]"),
                format!("shape {:?}, expected ({rows}, {cols}) like the cost", g.dim()),
            ));
        }
    }
    let cells = rows * cols;
    let tiles_x = cols.div_ceil(FIM_TILE);
    let tiles_y = rows.div_ceil(FIM_TILE);
    let mut source = vec![0u32; goals.len() * cells];
    let mut phi = vec![PHI_INF; goals.len() * cells];
    for (k, g) in goals.iter().enumerate() {
        for (i, &s) in g.iter().enumerate() {
            if s {
                source[k * cells + i] = 1;
                phi[k * cells + i] = 0.0;
            }
        }
    }
    Ok(FimInput {
        params: GpuFimParams {
            cols: cols as u32,
            rows: rows as u32,
            tiles_x: tiles_x as u32,
            tiles_y: tiles_y as u32,
            tiles_per_group: (tiles_x * tiles_y) as u32,
            groups: goals.len() as u32,
            cell_size: cell_size as f32,
            eps_rel: FIM_EPS_REL,
        },
        cost: Vec::new(),
        source,
        phi,
    })
}

pub(crate) fn solutions(
    phi: &[f32],
    input: &FimInput,
    solver: &'static str,
    passes: usize,
    seconds: f64,
) -> Vec<Solution> {
    let (rows, cols) = (input.params.rows as usize, input.params.cols as usize);
    let cells = rows * cols;
    (0..input.params.groups as usize)
        .map(|k| {
            let slice = &phi[k * cells..(k + 1) * cells];
            let values: Vec<f64> = slice
                .iter()
                .map(|&v| {
                    if v >= PHI_INF || !v.is_finite() {
                        f64::INFINITY
                    } else {
                        f64::from(v)
                    }
                })
                .collect();
            let unreachable = values.iter().filter(|v| v.is_infinite()).count();
            Solution {
                phi: Array2::from_shape_vec((rows, cols), values).expect("phi has rows * cols values"),
                unreachable,
                solver,
                passes,
                seconds,
            }
        })
        .collect()
}

/// The device buffers of the FIM solver, kept in the context and reused while they are large
/// enough.
pub(crate) struct FimBuffers {
    cells: usize,
    slots: usize,
    params: wgpu::Buffer,
    pub(crate) cost: wgpu::Buffer,
    source: wgpu::Buffer,
    pub(crate) phi: wgpu::Buffer,
    tile_flag: wgpu::Buffer,
    state: wgpu::Buffer,
    dispatch_args: wgpu::Buffer,
    main: wgpu::BindGroup,
    args: wgpu::BindGroup,
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
        let cost = ctx.storage("crowdfield.fim.cost", grid_cells as u64 * 16);
        let source = ctx.storage("crowdfield.fim.source", cells as u64 * 4);
        let phi = ctx.storage("crowdfield.fim.phi", cells as u64 * 4);
        let phi_next = ctx.storage("crowdfield.fim.phi_next", cells as u64 * 4);
        let tile_flag = ctx.storage("crowdfield.fim.tile_flag", slots as u64 * 4);
        let active = ctx.storage("crowdfield.fim.active", slots as u64 * 4);
        let state = ctx.storage("crowdfield.fim.state", 16);
        let dispatch_args = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowdfield.fim.dispatch_args"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
            mapped_at_creation: false,
        });
        let p = &ctx.pipelines;
        let main = bind_group(
            &ctx.device,
            "crowdfield.fim",
            &p.fim_layout,
            &[
                (&params, None),
                (&cost, None),
                (&source, None),
                (&phi, None),
                (&phi_next, None),
                (&tile_flag, None),
                (&active, None),
                (&state, None),
            ],
        );
        let args = bind_group(
            &ctx.device,
            "crowdfield.fim.args",
            &p.fim_args_layout,
            &[(&state, None), (&dispatch_args, None)],
        );
        Ok(Self {
            cells,
            slots,
            params,
            cost,
            source,
            phi,
            tile_flag,
            state,
            dispatch_args,
            main,
            args,
        })
    }
}

impl GpuContext {
    /// Solves one potential per goal mask with the block FIM, all groups in one submission
    /// sharing one cost array (shape `(rows, cols, 4)`, see [`crate::eikonal`]). Returns
    /// solutions named `"fim-gpu"` with the number of block passes.
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
        let input = prepare(cost, goals, cell_size)?;
        let pr = input.params;
        if pr.groups == 0 || pr.cols == 0 || pr.rows == 0 {
            return Ok(solutions(&[], &input, "fim-gpu", 0, 0.0));
        }
        let guard = self.fim_buffers(&input)?;
        let buf = guard.as_ref().expect("FIM buffers were just created");
        self.write_buffer_parallel(&buf.cost, 0, &input.cost);
        let encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("crowdfield.fim"),
            });
        let passes = self.run_fim(buf, &input, encoder)?;
        let phi: Vec<f32> = self.read_back(&buf.phi, 0, input.phi.len())?;
        Ok(solutions(
            &phi,
            &input,
            "fim-gpu",
            passes,
            start.elapsed().as_secs_f64(),
        ))
    }

    /// The FIM buffers, (re)built when too small for `input`, with everything but the cost
    /// uploaded (parameters, sources, initial potentials, every tile awake).
    pub(crate) fn fim_buffers(
        &self,
        input: &FimInput,
    ) -> Result<std::sync::MutexGuard<'_, Option<FimBuffers>>> {
        let pr = input.params;
        let grid_cells = (pr.cols * pr.rows) as usize;
        let cells = input.phi.len();
        let slots = (pr.tiles_per_group * pr.groups) as usize;
        let mut guard = self
            .fim
            .lock()
            .map_err(|_| Error::Gpu("FIM buffers poisoned".into()))?;
        if guard
            .as_ref()
            .is_none_or(|b| b.cells < cells || b.slots < slots || b.cost.size() < grid_cells as u64 * 16)
        {
            *guard = Some(FimBuffers::new(self, grid_cells, cells, slots)?);
        }
        let buf = guard.as_ref().expect("FIM buffers were just created");
        self.queue.write_buffer(&buf.params, 0, bytemuck::bytes_of(&pr));
        self.write_buffer_parallel(&buf.source, 0, &input.source);
        self.write_buffer_parallel(&buf.phi, 0, &input.phi);
        // Every tile starts awake: the first pass finds the tiles next to the sources.
        self.queue
            .write_buffer(&buf.tile_flag, 0, bytemuck::cast_slice(&vec![1u32; slots]));
        self.queue
            .write_buffer(&buf.state, 0, bytemuck::cast_slice(&[0u32; 4]));
        Ok(guard)
    }

    /// Runs the FIM passes until the active list is empty and returns the pass count. The
    /// first batch of passes is appended to `encoder` (which may already hold the work that
    /// produces the cost) and submitted with it; after each batch (growing from
    /// [`FIRST_PASSES_PER_SUBMIT`] to [`MAX_PASSES_PER_SUBMIT`] passes) only the 16-byte state
    /// is read back, to test convergence. The potentials stay on the device in `buf.phi`.
    pub(crate) fn run_fim(
        &self,
        buf: &FimBuffers,
        input: &FimInput,
        mut encoder: wgpu::CommandEncoder,
    ) -> Result<usize> {
        let pr = input.params;
        let slots = pr.tiles_per_group * pr.groups;
        let cap = max_passes(pr.tiles_per_group as usize);
        let mut first = true;
        let mut batch = FIRST_PASSES_PER_SUBMIT;
        loop {
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("crowdfield.fim"),
                    timestamp_writes: None,
                });
                if first {
                    self.fim_compact(&mut pass, buf, slots);
                    first = false;
                }
                for _ in 0..batch {
                    self.fim_pass(&mut pass, buf, slots);
                }
            }
            batch = (2 * batch).min(MAX_PASSES_PER_SUBMIT);
            self.queue.submit([encoder.finish()]);
            let state: Vec<u32> = self.read_back(&buf.state, 0, 4)?;
            let passes = state[STATE_PASSES] as usize;
            if state[STATE_ACTIVE] == 0 {
                return Ok(passes);
            }
            if passes > cap {
                return Err(Error::Gpu(format!(
                    "the FIM solve did not converge within the safety cap of {cap} passes \
                     ({} tiles still active); the potential is not returned",
                    state[STATE_ACTIVE]
                )));
            }
            encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("crowdfield.fim"),
                });
        }
    }

    /// Compaction and dispatch-size passes: builds the active list from the wake flags.
    fn fim_compact(&self, pass: &mut wgpu::ComputePass<'_>, buf: &FimBuffers, slots: u32) {
        let p = &self.pipelines;
        pass.set_pipeline(&p.fim_compact);
        pass.set_bind_group(0, &buf.main, &[]);
        dispatch_linear(pass, slots);
        pass.set_pipeline(&p.fim_args);
        pass.set_bind_group(0, &buf.args, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// One FIM pass: block, commit, compact, args.
    fn fim_pass(&self, pass: &mut wgpu::ComputePass<'_>, buf: &FimBuffers, slots: u32) {
        let p = &self.pipelines;
        pass.set_pipeline(&p.fim_block);
        pass.set_bind_group(0, &buf.main, &[]);
        pass.dispatch_workgroups_indirect(&buf.dispatch_args, 0);
        pass.set_pipeline(&p.fim_commit);
        pass.dispatch_workgroups_indirect(&buf.dispatch_args, 0);
        self.fim_compact(pass, buf, slots);
    }
}

/// The CPU twin of the GPU block FIM: the same tiles, passes, wake rules and f32 arithmetic,
/// one tile after another. Returns solutions named `"fim-cpu"`; on the same input it matches
/// [`GpuContext::solve_fim`] to f32 rounding (and usually in the pass count).
///
/// # Errors
/// [`Error::Invalid`] for mismatched shapes; [`Error::Gpu`]-free otherwise, except the
/// safety cap (reported as [`Error::Invalid`] naming the cost).
pub fn solve_fim_cpu(cost: ArrayView3<f32>, goals: &[Array2<bool>], cell_size: f64) -> Result<Vec<Solution>> {
    let start = Instant::now();
    let input = prepare(cost, goals, cell_size)?;
    let pr = input.params;
    let (cols, rows) = (pr.cols as usize, pr.rows as usize);
    let (tiles_x, tiles_y, tpg) = (
        pr.tiles_x as usize,
        pr.tiles_y as usize,
        pr.tiles_per_group as usize,
    );
    let cells = cols * rows;
    let h = pr.cell_size;
    let mut phi = input.phi.clone();
    let mut phi_next = phi.clone();
    let slots = tpg * pr.groups as usize;
    let mut tile_flag = vec![true; slots];
    // fim_compact + fim_args
    let compact = |flags: &mut [bool]| -> Vec<usize> {
        let list: Vec<usize> = (0..flags.len()).filter(|&i| flags[i]).collect();
        flags.iter_mut().for_each(|f| *f = false);
        list
    };
    let mut active = compact(&mut tile_flag);
    let mut passes = 0;
    let cap = max_passes(tpg);
    const HALO: usize = FIM_TILE + 2;
    while !active.is_empty() {
        passes += 1;
        if passes > cap {
            return Err(Error::invalid(
                "<memory>",
                "cost",
                format!("FIM did not converge within the safety cap of {cap} passes"),
            ));
        }
        // fim_block
        for &entry in &active {
            let (group, tile) = (entry / tpg, entry % tpg);
            let (tx, ty) = (tile % tiles_x, tile / tiles_x);
            let base = group * cells;
            let mut tile_phi = [PHI_INF; HALO * HALO];
            for (k, v) in tile_phi.iter_mut().enumerate() {
                let c = (tx * FIM_TILE + k % HALO) as isize - 1;
                let r = (ty * FIM_TILE + k / HALO) as isize - 1;
                if c >= 0 && r >= 0 && (c as usize) < cols && (r as usize) < rows {
                    *v = phi[base + r as usize * cols + c as usize];
                }
            }
            let start_phi = tile_phi;
            let mut converged = false;
            for _ in 0..FIM_INNER_ITERS {
                let mut next = tile_phi;
                let mut any_changed = false;
                for ly in 0..FIM_TILE {
                    for lx in 0..FIM_TILE {
                        let (col, row) = (tx * FIM_TILE + lx, ty * FIM_TILE + ly);
                        if col >= cols || row >= rows || input.source[base + row * cols + col] != 0 {
                            continue;
                        }
                        let cell = row * cols + col;
                        let me = (ly + 1) * HALO + lx + 1;
                        let cur = tile_phi[me];
                        let cand = local_update(
                            tile_phi[me + 1],
                            tile_phi[me + HALO],
                            tile_phi[me - 1],
                            tile_phi[me - HALO],
                            h * input.cost[cell * 4],
                            h * input.cost[cell * 4 + 1],
                            h * input.cost[cell * 4 + 2],
                            h * input.cost[cell * 4 + 3],
                        );
                        if cand < cur - pr.eps_rel * cand {
                            next[me] = cand;
                            any_changed = true;
                        }
                    }
                }
                tile_phi = next;
                if !any_changed {
                    converged = true;
                    break;
                }
            }
            let (mut wake_e, mut wake_n, mut wake_w, mut wake_s) = (false, false, false, false);
            for ly in 0..FIM_TILE {
                for lx in 0..FIM_TILE {
                    let (col, row) = (tx * FIM_TILE + lx, ty * FIM_TILE + ly);
                    if col >= cols || row >= rows {
                        continue;
                    }
                    let me = (ly + 1) * HALO + lx + 1;
                    phi_next[base + row * cols + col] = tile_phi[me];
                    if tile_phi[me] < start_phi[me] {
                        wake_e |= lx == FIM_TILE - 1;
                        wake_n |= ly == FIM_TILE - 1;
                        wake_w |= lx == 0;
                        wake_s |= ly == 0;
                    }
                }
            }
            let gbase = group * tpg;
            if !converged {
                tile_flag[entry] = true;
            }
            if wake_e && tx + 1 < tiles_x {
                tile_flag[gbase + tile + 1] = true;
            }
            if wake_w && tx > 0 {
                tile_flag[gbase + tile - 1] = true;
            }
            if wake_n && ty + 1 < tiles_y {
                tile_flag[gbase + tile + tiles_x] = true;
            }
            if wake_s && ty > 0 {
                tile_flag[gbase + tile - tiles_x] = true;
            }
        }
        // fim_commit
        for &entry in &active {
            let (group, tile) = (entry / tpg, entry % tpg);
            let (tx, ty) = (tile % tiles_x, tile / tiles_x);
            for row in ty * FIM_TILE..((ty + 1) * FIM_TILE).min(rows) {
                for col in tx * FIM_TILE..((tx + 1) * FIM_TILE).min(cols) {
                    let i = group * cells + row * cols + col;
                    phi[i] = phi_next[i];
                }
            }
        }
        active = compact(&mut tile_flag);
    }
    Ok(solutions(
        &phi,
        &input,
        "fim-cpu",
        passes,
        start.elapsed().as_secs_f64(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_update_isotropic_cases() {
        // One neighbour: one step. Two equal diagonal neighbours: 2 (phi - 0)^2 = 1.
        assert_eq!(
            local_update(PHI_INF, PHI_INF, 0.0, PHI_INF, 1.0, 1.0, 1.0, 1.0),
            1.0
        );
        let diag = local_update(PHI_INF, 0.0, 0.0, PHI_INF, 1.0, 1.0, 1.0, 1.0);
        assert!((diag - 0.5f32.sqrt()).abs() < 1e-6, "{diag}");
        // Blocked faces (cost 0) are never used; nothing reachable stays unreached.
        assert_eq!(local_update(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), PHI_INF);
        assert_eq!(
            local_update(PHI_INF, PHI_INF, PHI_INF, PHI_INF, 1.0, 1.0, 1.0, 1.0),
            PHI_INF
        );
    }

    #[test]
    fn gpu_update_is_fast_marchings_prefix_minimum() {
        // A cell seen on a random anisotropic field: E blocked; W (3.493) and N (4.266) give
        // 4.35094 when fast marching has accepted them; S (4.323, cheaper to reach: 4.747 <
        // 5.351) then wins the y axis but its quadratic with W is 4.35165, higher. Fast
        // marching keeps 4.35094 (decrease-key), so must the iterative update.
        let (pn, pw, ps) = (4.265_882_f32, 3.492_999, 4.323_148);
        let (cn, cw, cs) = (0.5 * 2.169_980_5, 0.5 * 1.721_181_4, 0.5 * 0.848_434_45);
        let all_four = update_from_neighbours(PHI_INF, pn, pw, ps, 0.0, cn, cw, cs);
        let w_and_n = update_from_neighbours(PHI_INF, pn, pw, PHI_INF, 0.0, cn, cw, cs);
        assert!(all_four > w_and_n + 5e-4, "{all_four} vs {w_and_n}");
        let u = local_update(PHI_INF, pn, pw, ps, 0.0, cn, cw, cs);
        assert_eq!(u, w_and_n);
        assert!((f64::from(u) - 4.350_940_9).abs() < 2e-5, "{u}");
    }

    #[test]
    fn gpu_update_matches_the_f64_quadratic() {
        use crate::eikonal::quadratic::{Upwind, solve_two_axes};
        for (a, p, b, q) in [
            (0.0, 1.0, 0.0, 1.0),
            (3.0, 0.7, 3.4, 1.3),
            (1.0, 2.0, 0.2, 0.5),
            (5.0, 0.1, 0.0, 0.3),
        ] {
            let f32_value = local_update(PHI_INF, b as f32, a as f32, PHI_INF, 0.0, q as f32, p as f32, 0.0);
            let f64_value = solve_two_axes(Upwind { m: a, s: p }, Upwind { m: b, s: q });
            assert!(
                (f64::from(f32_value) - f64_value).abs() < 1e-5 * f64_value.max(1.0),
                "{f32_value} vs {f64_value}"
            );
        }
    }

    #[test]
    fn gpu_sanitize_cost_blocks_bad_faces_and_clamps() {
        assert_eq!(sanitize_cost(f32::INFINITY), 0.0);
        assert_eq!(sanitize_cost(f32::NAN), 0.0);
        assert_eq!(sanitize_cost(-1.0), 0.0);
        assert_eq!(sanitize_cost(0.0), 0.0);
        assert_eq!(sanitize_cost(2.5), 2.5);
        assert_eq!(sanitize_cost(1e30), FIM_COST_MAX);
    }
}
