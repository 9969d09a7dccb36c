//! Eikonal on the GPU: the block fast iterative method (Jeong & Whitaker 2008) with large tiles
//! relaxed to convergence, host side, and its CPU twin [`solve_fim_cpu`], written to read like
//! the shaders `fim_block.wgsl` and `fim_commit.wgsl`.
//!
//! The grid is cut into square tiles of [`FIM_TILE_LARGE`] cells a side (or [`FIM_TILE_SMALL`]
//! where the adapter's workgroup memory cannot hold the larger tile, see [`choose_fim_tile`]),
//! one 16x16 workgroup per tile. One pass is two dispatches:
//! 1. `fim_block`: every tile of the active list loads itself and a one-cell halo from `phi`
//!    into workgroup memory and relaxes it (Jacobi sweeps of the first-order anisotropic update
//!    of SPEC §4, a barrier between sweeps; after the first sweep only the cells next to one
//!    that moved) until no cell moves, then writes it to `phi_next`.
//!    It queues each neighbour tile that one of its moved edge cells can now lower (the cell is
//!    below the one across the edge) on the next pass's list, with atomics, each tile once.
//! 2. `fim_commit`: copies the listed tiles back from `phi_next` to `phi`; one invocation counts
//!    the pass and writes the next pass's indirect dispatch sizes.
//!
//! The active lists and their counts rotate between passes (two lists, three counts, chosen by
//! a dynamic uniform offset), so no pass clears what another pass is reading. Each block pass
//! reads only `phi` (never a tile another workgroup is writing), so the result and every counter
//! depend only on the input, not on scheduling or on the order of the list. The host encodes
//! passes in batches and reads the 32-byte state back after each batch; the solve stops when the
//! next list is empty, i.e. no tile can lower any cell (see [`FIM_EPS_REL`]). A safety cap on
//! passes, if reached, is an error, never a silent success.
//!
//! All groups are solved together: the list holds `(group, tile)` entries, so a pass relaxes
//! every group's front and the pass count is the largest over the groups.

use crate::eikonal::{Solution, SolveCounters};
use crate::error::{Error, Result};
use crate::gpu::context::{GpuContext, bind_group};
use crate::gpu::types::{GpuFimParams, GpuFimStep};
use ndarray::{Array2, ArrayView3};
use std::time::Instant;

/// Edge of a tile, cells, where the adapter's workgroup memory holds it: a front crosses a
/// whole tile per pass, so the pass count falls in proportion to the tile's edge. 64 needs
/// 19.5 kB of workgroup memory, above WebGPU's guaranteed 16 kB.
/// Sync: `FIM_TILE` in `shaders/fim_common.wgsl` (rewritten by [`fim_pass_source`]).
pub const FIM_TILE_LARGE: usize = 64;
/// Edge of a tile, cells, on adapters whose workgroup memory is below what
/// [`FIM_TILE_LARGE`] needs: 32 needs 6.7 kB, within WebGPU's guaranteed 16 kB.
pub const FIM_TILE_SMALL: usize = 32;
/// Invocations along each axis of a block workgroup (16x16 = 256, WebGPU's guaranteed limit).
/// Sync: `FIM_LANES` in `shaders/fim_common.wgsl`.
pub const FIM_LANES: usize = 16;
/// Sweeps per tile edge after which a tile that has not settled stops and queues itself for the
/// next pass. Sync: `FIM_MAX_SWEEPS` in `shaders/fim_common.wgsl`.
pub const FIM_MAX_SWEEPS_PER_EDGE: usize = 8;
/// Potential of an unreached cell on the device; read back as `+inf`.
/// Sync: `PHI_INF` in `shaders/common.wgsl`.
pub const PHI_INF: f32 = 3.0e38;

/// A device potential as the CPU solvers give it: `+inf` where no source reaches
/// ([`PHI_INF`] and above, or not finite).
pub(crate) fn potential_value(v: f32) -> f64 {
    if v >= PHI_INF || !v.is_finite() {
        f64::INFINITY
    } else {
        f64::from(v)
    }
}
/// A cell's update counts only when it lowers phi by more than this fraction of the new value.
/// 0: every decrease counts. Values only ever decrease and f32 has finitely many, so the solve
/// still ends. A positive threshold biases the result: each cell may stop up to `eps * phi`
/// high and the next cell inherits that lag, so the error adds up along a path to about
/// `eps * n / 2` relative after n cells.
pub const FIM_EPS_REL: f32 = 0.0;
/// Finite unit costs above this (s/m) are clamped to it, so squared step costs stay finite
/// in f32 (a walker that slow is blocked in practice).
pub const FIM_COST_MAX: f32 = 1.0e12;
/// Passes encoded in the first submission before the host reads the state back. An empty pass
/// (after convergence) is two dispatches of at most one workgroup, so a solve of a few passes
/// loses little by encoding 32.
pub const FIRST_PASSES_PER_SUBMIT: usize = 32;
/// Passes encoded in each later submission: the host reads the state back once per 64 passes.
pub const PASSES_PER_SUBMIT: usize = 64;
/// Dispatches per encoded pass (`fim_block`, `fim_commit`).
pub const DISPATCHES_PER_PASS: usize = 2;
/// Slots of the `state` buffer. Sync: `STATE_*` in `shaders/common.wgsl`.
const STATE_COUNT: usize = 0; // three list counts, slots 0..3
const STATE_PASSES: usize = 3;
const STATE_RELAX_LO: usize = 5;
const STATE_RELAX_HI: usize = 6;
pub(crate) const STATE_SLOTS: usize = 8;
/// Workgroup memory of a block workgroup beside the tile and its bits: five u32 variables,
/// rounded up.
const FIM_WORKGROUP_EXTRA_BYTES: u32 = 32;

/// Bytes of workgroup memory `fim_block` needs for tiles of `tile` cells a side: the tile and
/// its one-cell halo as f32, two banks of one u32 per invocation (which of its cells moved),
/// and a few flags.
pub fn fim_workgroup_bytes(tile: usize) -> u32 {
    ((tile + 2) * (tile + 2) * 4 + 2 * FIM_LANES * FIM_LANES * 4) as u32 + FIM_WORKGROUP_EXTRA_BYTES
}

/// The tile edge for an adapter offering `limit` bytes of workgroup memory per workgroup, and
/// the note to print when that is less than [`FIM_TILE_LARGE`]: the larger tile where it fits,
/// else [`FIM_TILE_SMALL`] (which every WebGPU adapter holds).
///
/// # Errors
/// [`Error::Gpu`] when even the small tile does not fit (an adapter below WebGPU's limits).
pub fn choose_fim_tile(limit: u32) -> Result<(usize, Option<String>)> {
    if fim_workgroup_bytes(FIM_TILE_LARGE) <= limit {
        return Ok((FIM_TILE_LARGE, None));
    }
    if fim_workgroup_bytes(FIM_TILE_SMALL) <= limit {
        return Ok((
            FIM_TILE_SMALL,
            Some(format!(
                "the adapter offers {limit} bytes of workgroup memory, fewer than the {} that \
                 {FIM_TILE_LARGE}x{FIM_TILE_LARGE} FIM tiles need: using \
                 {FIM_TILE_SMALL}x{FIM_TILE_SMALL} tiles (about twice the passes)",
                fim_workgroup_bytes(FIM_TILE_LARGE)
            )),
        ));
    }
    Err(Error::Gpu(format!(
        "the adapter offers {limit} bytes of workgroup memory, fewer than the {} that even \
         {FIM_TILE_SMALL}x{FIM_TILE_SMALL} FIM tiles need",
        fim_workgroup_bytes(FIM_TILE_SMALL)
    )))
}

/// The source of a FIM pass (`shaders::FIM_BLOCK` or `shaders::FIM_COMMIT`) for tiles of
/// `tile` cells a side: the embedded source with its `FIM_TILE` line rewritten.
pub fn fim_pass_source(source: &str, tile: usize) -> String {
    let default = format!("const FIM_TILE: u32 = {FIM_TILE_LARGE}u;");
    assert!(source.contains(&default), "a FIM pass declares {default}");
    source.replace(&default, &format!("const FIM_TILE: u32 = {tile}u;"))
}

/// The safety cap on passes for a grid of `cells` cells and `tiles` tiles of `tile` cells a
/// side per group: a tile is relaxed again only when a neighbour lowered its edge below its own
/// cells. On open and walled grids a tile is woken a handful of times (four wakes per tile plus
/// slack); a path that winds through narrow corridors can cross a tile edge once per `tile`
/// cells of its length, and no path is longer than the grid's cells, so `2 * cells / tile`
/// more covers those.
pub fn max_passes(tiles: usize, cells: usize, tile: usize) -> usize {
    4 * tiles + 64 + 2 * cells / tile.max(1)
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
    /// Tile edge, cells.
    pub(crate) tile: usize,
    /// `(cell * 4 + dir)`: sanitized unit cost.
    pub(crate) cost: Vec<f32>,
    /// `(group * cells + cell)`: 1 on sources.
    pub(crate) source: Vec<u32>,
    /// `(group * cells + cell)`: 0 on sources, `PHI_INF` elsewhere.
    pub(crate) phi: Vec<f32>,
}

fn prepare(cost: ArrayView3<f32>, goals: &[Array2<bool>], cell_size: f64, tile: usize) -> Result<FimInput> {
    let (rows, cols, dirs) = cost.dim();
    if dirs != 4 {
        return Err(Error::invalid(
            "<memory>",
            "cost",
            format!("shape {:?}, expected (rows, cols, 4)", cost.dim()),
        ));
    }
    let mut input = prepare_goals(rows, cols, goals, cell_size, tile)?;
    input.cost = cost.iter().map(|&c| sanitize_cost(c)).collect();
    Ok(input)
}

/// Checks the goals and the cell size and lays out everything but the cost (left empty), for
/// tiles of `tile` cells a side.
pub(crate) fn prepare_goals(
    rows: usize,
    cols: usize,
    goals: &[Array2<bool>],
    cell_size: f64,
    tile: usize,
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
    let tiles_x = cols.div_ceil(tile);
    let tiles_y = rows.div_ceil(tile);
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
        tile,
        cost: Vec::new(),
        source,
        phi,
    })
}

/// One solution per group from the potentials `phi` of every group, each carrying the solve's
/// `counters` (with the relaxations per reachable cell filled in).
pub(crate) fn solutions(
    phi: &[f32],
    input: &FimInput,
    solver: &'static str,
    mut counters: SolveCounters,
    seconds: f64,
) -> Vec<Solution> {
    let (rows, cols) = (input.params.rows as usize, input.params.cols as usize);
    let cells = rows * cols;
    let reachable = phi.iter().filter(|&&v| v < PHI_INF && v.is_finite()).count();
    counters.relaxations_per_reachable_cell = if reachable > 0 {
        counters.relaxations as f64 / reachable as f64
    } else {
        0.0
    };
    (0..input.params.groups as usize)
        .map(|k| {
            let slice = &phi[k * cells..(k + 1) * cells];
            let values: Vec<f64> = slice.iter().map(|&v| potential_value(v)).collect();
            let unreachable = values.iter().filter(|v| v.is_infinite()).count();
            Solution {
                phi: Array2::from_shape_vec((rows, cols), values).expect("phi has rows * cols values"),
                unreachable,
                solver,
                passes: counters.passes,
                seconds,
                counters: Some(counters),
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
const STEP_ENTRIES: usize = 6;

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
        let guard = self.fim_buffers(&input)?;
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
    pub(crate) fn fim_buffers(
        &self,
        input: &FimInput,
    ) -> Result<std::sync::MutexGuard<'_, Option<FimBuffers>>> {
        let mut guard = self
            .fim
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

/// The CPU twin of the GPU block FIM with [`FIM_TILE_LARGE`] tiles: [`solve_fim_cpu_tiled`].
///
/// # Errors
/// As [`solve_fim_cpu_tiled`].
pub fn solve_fim_cpu(cost: ArrayView3<f32>, goals: &[Array2<bool>], cell_size: f64) -> Result<Vec<Solution>> {
    solve_fim_cpu_tiled(cost, goals, cell_size, FIM_TILE_LARGE)
}

/// The CPU twin of the GPU block FIM: the same tiles of `tile` cells a side (a multiple of
/// [`FIM_LANES`]), passes, sweeps, queueing rules and f32 arithmetic, one tile after another.
/// Returns solutions named `"fim-cpu"` whose counters hold the passes and relaxations (no
/// dispatches, no read-backs); on the same input it matches [`GpuContext::solve_fim`] to f32
/// rounding, and exactly in the counters where no rounding tips a comparison.
///
/// # Errors
/// [`Error::Invalid`] for mismatched shapes, a tile that is not a positive multiple of
/// [`FIM_LANES`], or (naming the cost) a solve that reaches the safety cap.
pub fn solve_fim_cpu_tiled(
    cost: ArrayView3<f32>,
    goals: &[Array2<bool>],
    cell_size: f64,
    tile: usize,
) -> Result<Vec<Solution>> {
    if tile == 0 || !tile.is_multiple_of(FIM_LANES) {
        return Err(Error::invalid(
            "<memory>",
            "tile",
            format!("{tile}, expected a positive multiple of {FIM_LANES}"),
        ));
    }
    let start = Instant::now();
    let input = prepare(cost, goals, cell_size, tile)?;
    let pr = input.params;
    let (cols, rows) = (pr.cols as usize, pr.rows as usize);
    let (tiles_x, tiles_y, tpg) = (
        pr.tiles_x as usize,
        pr.tiles_y as usize,
        pr.tiles_per_group as usize,
    );
    let cells = cols * rows;
    let h = pr.cell_size;
    let halo = tile + 2;
    let max_sweeps = FIM_MAX_SWEEPS_PER_EDGE * tile;
    let mut phi = input.phi.clone();
    let mut phi_next = phi.clone();
    let slots = tpg * pr.groups as usize;
    // The stamp of the last pass each tile was queued for (pass e: stamp e + 1).
    let mut queued = vec![1usize; slots];
    let mut active: Vec<usize> = (0..slots).collect();
    let mut counters = SolveCounters {
        tile,
        ..SolveCounters::default()
    };
    let cap = max_passes(tpg, cells, tile);
    let mut epoch = 0usize;
    let mut tile_phi = vec![PHI_INF; halo * halo];
    while !active.is_empty() {
        counters.passes += 1;
        if counters.passes > cap {
            return Err(Error::invalid(
                "<memory>",
                "cost",
                format!("FIM did not converge within the safety cap of {cap} passes"),
            ));
        }
        let stamp = epoch + 2;
        let mut next_list = Vec::new();
        let mut queue = |slot: usize, list: &mut Vec<usize>| {
            if queued[slot] < stamp {
                queued[slot] = stamp;
                list.push(slot);
            }
        };
        // fim_block
        for &entry in &active {
            let (group, t) = (entry / tpg, entry % tpg);
            let (tx, ty) = (t % tiles_x, t / tiles_x);
            let base = group * cells;
            for (k, v) in tile_phi.iter_mut().enumerate() {
                let c = (tx * tile + k % halo) as isize - 1;
                let r = (ty * tile + k / halo) as isize - 1;
                *v = if c >= 0 && r >= 0 && (c as usize) < cols && (r as usize) < rows {
                    phi[base + r as usize * cols + c as usize]
                } else {
                    PHI_INF
                };
            }
            let start_phi = tile_phi.clone();
            let inside = |lx: usize, ly: usize| tx * tile + lx < cols && ty * tile + ly < rows;
            // Which cells moved in the sweep before (one flag per cell of the tile).
            let mut moved_before = vec![false; tile * tile];
            let neighbour_moved = |moved: &[bool], lx: usize, ly: usize| {
                (lx + 1 < tile && moved[ly * tile + lx + 1])
                    || (ly + 1 < tile && moved[(ly + 1) * tile + lx])
                    || (lx > 0 && moved[ly * tile + lx - 1])
                    || (ly > 0 && moved[(ly - 1) * tile + lx])
            };
            let mut settled = false;
            let mut sweeps = 0;
            while sweeps < max_sweeps {
                let mut next = tile_phi.clone();
                let mut moved_now = vec![false; tile * tile];
                let mut changed = false;
                for ly in 0..tile {
                    for lx in 0..tile {
                        let (col, row) = (tx * tile + lx, ty * tile + ly);
                        if !inside(lx, ly) || input.source[base + row * cols + col] != 0 {
                            continue;
                        }
                        if sweeps > 0 && !neighbour_moved(&moved_before, lx, ly) {
                            continue;
                        }
                        counters.relaxations += 1;
                        let cell = row * cols + col;
                        let me = (ly + 1) * halo + lx + 1;
                        let cur = tile_phi[me];
                        let cand = local_update(
                            tile_phi[me + 1],
                            tile_phi[me + halo],
                            tile_phi[me - 1],
                            tile_phi[me - halo],
                            h * input.cost[cell * 4],
                            h * input.cost[cell * 4 + 1],
                            h * input.cost[cell * 4 + 2],
                            h * input.cost[cell * 4 + 3],
                        );
                        if cand < cur - pr.eps_rel * cand {
                            next[me] = cand;
                            moved_now[ly * tile + lx] = true;
                            changed = true;
                        }
                    }
                }
                tile_phi = next;
                moved_before = moved_now;
                sweeps += 1;
                if !changed {
                    settled = true;
                    break;
                }
            }
            let (mut wake_e, mut wake_n, mut wake_w, mut wake_s) = (false, false, false, false);
            for ly in 0..tile {
                for lx in 0..tile {
                    if !inside(lx, ly) {
                        continue;
                    }
                    let (col, row) = (tx * tile + lx, ty * tile + ly);
                    let me = (ly + 1) * halo + lx + 1;
                    let fin = tile_phi[me];
                    phi_next[base + row * cols + col] = fin;
                    if fin < start_phi[me] {
                        wake_e |= lx == tile - 1 && fin < tile_phi[me + 1];
                        wake_n |= ly == tile - 1 && fin < tile_phi[me + halo];
                        wake_w |= lx == 0 && fin < tile_phi[me - 1];
                        wake_s |= ly == 0 && fin < tile_phi[me - halo];
                    }
                }
            }
            let gbase = group * tpg;
            if !settled {
                queue(entry, &mut next_list);
            }
            if wake_e && tx + 1 < tiles_x {
                queue(gbase + t + 1, &mut next_list);
            }
            if wake_w && tx > 0 {
                queue(gbase + t - 1, &mut next_list);
            }
            if wake_n && ty + 1 < tiles_y {
                queue(gbase + t + tiles_x, &mut next_list);
            }
            if wake_s && ty > 0 {
                queue(gbase + t - tiles_x, &mut next_list);
            }
        }
        // fim_commit
        for &entry in &active {
            let (group, t) = (entry / tpg, entry % tpg);
            let (tx, ty) = (t % tiles_x, t / tiles_x);
            for row in ty * tile..((ty + 1) * tile).min(rows) {
                for col in tx * tile..((tx + 1) * tile).min(cols) {
                    let i = group * cells + row * cols + col;
                    phi[i] = phi_next[i];
                }
            }
        }
        active = next_list;
        epoch += 1;
    }
    Ok(solutions(
        &phi,
        &input,
        "fim-cpu",
        counters,
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
    fn the_tile_follows_the_workgroup_memory() {
        // WebGPU's guaranteed 16 kB holds the small tile only; lavapipe's and the discrete
        // GPUs' 32 kB and more hold the large one.
        let (tile, note) = choose_fim_tile(16384).unwrap();
        assert_eq!(tile, FIM_TILE_SMALL);
        assert!(note.unwrap().contains("16384 bytes"));
        assert_eq!(choose_fim_tile(32768).unwrap(), (FIM_TILE_LARGE, None));
        let exact = fim_workgroup_bytes(FIM_TILE_LARGE);
        assert_eq!(choose_fim_tile(exact).unwrap().0, FIM_TILE_LARGE);
        assert_eq!(choose_fim_tile(exact - 1).unwrap().0, FIM_TILE_SMALL);
        assert!(choose_fim_tile(fim_workgroup_bytes(FIM_TILE_SMALL) - 1).is_err());
        assert_eq!(fim_workgroup_bytes(64), 66 * 66 * 4 + 2048 + 32);
    }

    #[test]
    fn the_pass_source_sets_the_tile() {
        let src = fim_pass_source(crate::gpu::shaders::FIM_BLOCK, 32);
        assert!(src.contains("const FIM_TILE: u32 = 32u;"));
        assert!(!src.contains("const FIM_TILE: u32 = 64u;"));
    }

    #[test]
    fn the_lists_and_counts_rotate_without_overlap() {
        for e in 0..12 {
            let (now, next) = (fim_step(e), fim_step(e + 1));
            // A pass appends to the other list and count; the count it clears is the next
            // pass's append target, read by neither of its own dispatches.
            assert_eq!(next.list_in, 1 - now.list_in);
            assert_eq!(next.count_in, now.count_out);
            assert_eq!(next.count_out, now.count_clear);
            let mut slots = [now.count_in, now.count_out, now.count_clear];
            slots.sort();
            assert_eq!(slots, [0, 1, 2]);
            assert_eq!(fim_step(e + STEP_ENTRIES), now);
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
