//! The local layer on the GPU ([`crate::local::LocalBackend::Gpu`]): the CPU passes of
//! [`crate::local::LocalLayer`] as WGSL compute passes (`shaders/local_*.wgsl`, sharing
//! `shaders/local_common.wgsl`), each a line-by-line mirror of its CPU twin.
//!
//! One step:
//! 1. bins: the GPU neighbour grid ([`GpuContext::neighbor_grid`], the same arrays as the CPU
//!    [`NeighborGrid`]); `bin_start` and `sorted` are read back (the layer's
//!    [`crate::local::LocalLayer::grid`] shows them) and uploaded with the agents;
//! 2. `local_pack`: agents gathered into bin order, so a bin's agents are contiguous;
//! 3. `local_preferred` (preferred velocity, jitter, boids offset) then `local_orca` (nearest
//!    neighbours, wall points, moving obstacles, RVO2's 2-D program and fallback), or
//!    `local_flock` for the standalone flock;
//! 4. `local_move`: the wall map's move, results scattered back into agent order;
//! 5. in the ORCA modes the contact pass ([`crate::local::contact`]): `local_contact_even` and
//!    `local_contact_odd` by turns, all [`crate::local::contact::CONTACT_SWEEPS`] sweeps (the
//!    CPU stops once a sweep moves nobody; the sweeps after that change nothing), then
//!    `local_contact_out` writes the agents they moved; the results are read back.
//!
//! Neighbours are visited in the CPU's order (bins row-major, ids ascending within a bin), so the
//! two backends differ only by f32 rounding (the GPU compiler may fuse multiply-adds; `sin`,
//! `cos` and `sqrt` differ in the last bits). Buffers are kept across steps and reallocated only
//! when the agent count, the bin grid, the groups, the moving obstacles or the map outgrow them.

use crate::agents::Agents;
use crate::collision::WallMap;
use crate::error::{Error, Result};
use crate::gpu::context::{GpuContext, Slot, bind_group, dispatch_linear, layout, pipeline};
use crate::gpu::shaders;
use crate::local::{LocalBackend, LocalLayer, LocalMode, LocalStats, MovingObstacle};
use crate::neighbors::NeighborGrid;
use bytemuck::{Pod, Zeroable};
use std::sync::Arc;
use std::time::Instant;

/// Most ORCA neighbours one agent's program holds on the GPU (a fixed-size array per thread).
/// RVO2's default is 10; 32 leaves room for denser settings. Sync: `MAX_NEIGHBORS` in
/// `shaders/local_common.wgsl`.
pub const GPU_MAX_NEIGHBORS: usize = 32;
/// Most moving obstacles the GPU layer takes (each may add a line to every agent's program).
/// Sync: `MAX_MOVERS` in `shaders/local_common.wgsl`.
pub const GPU_MAX_MOVERS: usize = 16;

/// Mode codes of the shaders. Sync: `MODE_*` in `shaders/local_common.wgsl`.
pub(crate) const GPU_MODE_NONE: u32 = 0;
/// Boids offset only.
pub(crate) const GPU_MODE_BOIDS: u32 = 1;
/// ORCA only.
pub(crate) const GPU_MODE_ORCA: u32 = 2;
/// Boids offset, then ORCA.
pub(crate) const GPU_MODE_BOIDS_ORCA: u32 = 3;

/// Wall-map cell bits: two flags, then the cell's span ([`WallMap::span`](crate::collision::WallMap::span),
/// at most [`SPAN_MAX`](crate::collision::walls::SPAN_MAX), 30 bits) from bit `CELL_SPAN_SHIFT`
/// on. Sync: `CELL_*` in `shaders/local_common.wgsl`.
const CELL_BLOCKED: u32 = 1;
const CELL_BOUNDARY: u32 = 2;
const CELL_SPAN_SHIFT: u32 = 2;

/// One step's dimensions and constants. Sync: `LocalParams` in `shaders/local_common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuLocalParams {
    /// Number of agents.
    pub agents: u32,
    /// Bins along x.
    pub bins_x: u32,
    /// Bins along y.
    pub bins_y: u32,
    /// `1 / bin edge`, 1/m (`NeighborGrid::inv_bin_size`).
    pub inv_bin_size: f32,
    /// Wall-map columns.
    pub cols: u32,
    /// Wall-map rows.
    pub rows: u32,
    /// Cell edge, m.
    pub cell: f32,
    /// Domain width, m.
    pub width: f32,
    /// Domain height, m.
    pub height: f32,
    /// Time step, s.
    pub dt: f32,
    /// `GPU_MODE_*`.
    pub mode: u32,
    /// Moving obstacles.
    pub movers: u32,
    /// Group configurations before the fallback one.
    pub groups: u32,
    /// Step count, low 32 bits (seeds the preferred-velocity jitter).
    pub step_lo: u32,
    /// Step count, high 32 bits.
    pub step_hi: u32,
    /// 1: bounce off walls (flock), 0: slide along them.
    pub bounce: u32,
    /// [`crate::local::ORCA_CLEARANCE`].
    pub clearance: f32,
    /// [`crate::local::PREFERRED_JITTER`].
    pub jitter: f32,
    /// [`crate::local::K_WALL`].
    pub k_wall: f32,
    /// [`crate::local::PROBE_SECONDS`].
    pub probe_seconds: f32,
    /// `1 / cell`, 1/m (`WallMap::inv_cell`): cells are a product, as on the CPU.
    pub inv_cell: f32,
    /// [`crate::local::contact::CONTACT_GAP`], m.
    pub contact_gap: f32,
    /// Padding to 16 bytes.
    pub pad: [u32; 2],
}

/// An agent in agent order with its preferred velocity. Sync: `AgentIn`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuLocalAgent {
    /// Position, m.
    pub p: [f32; 2],
    /// Velocity, m/s.
    pub v: [f32; 2],
    /// Preferred velocity, m/s.
    pub pref: [f32; 2],
    /// Body radius, m.
    pub radius: f32,
    /// Maximum speed, m/s.
    pub max_speed: f32,
    /// Group index.
    pub group: u32,
    /// Agent id (seeds the jitter).
    pub id: u32,
    /// Padding.
    pub pad: [u32; 2],
}

/// An agent in bin order. Sync: `Packed`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuPackedAgent {
    /// Position, m.
    pub p: [f32; 2],
    /// Velocity, m/s.
    pub v: [f32; 2],
    /// Body radius, m.
    pub radius: f32,
    /// Maximum speed, m/s.
    pub max_speed: f32,
    /// Group index.
    pub group: u32,
    /// Index in [`Agents`].
    pub agent: u32,
}

/// Per-group settings. Sync: `GroupCfg`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuLocalGroup {
    /// 1 when the group has boids parameters.
    pub has_boids: u32,
    /// Cohesion radius, m.
    pub r_coh: f32,
    /// Separation radius, m.
    pub r_sep: f32,
    /// Alignment radius, m.
    pub r_align: f32,
    /// Cohesion weight.
    pub k_coh: f32,
    /// Separation weight.
    pub k_sep: f32,
    /// Alignment weight.
    pub k_align: f32,
    /// Maximum steering, m/s².
    pub a_max: f32,
    /// Flock's maximum speed, m/s.
    pub v_max: f32,
    /// ORCA time horizon for agents, s.
    pub time_horizon: f32,
    /// ORCA time horizon for obstacles, s.
    pub obstacle_time_horizon: f32,
    /// ORCA neighbour distance, m.
    pub neighbor_dist: f32,
    /// ORCA neighbours (at most [`GPU_MAX_NEIGHBORS`]).
    pub max_neighbors: u32,
    /// Padding.
    pub pad: [u32; 3],
}

/// A moving obstacle. Sync: `Mover`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMover {
    /// Centre, m.
    pub pos: [f32; 2],
    /// Velocity, m/s.
    pub vel: [f32; 2],
    /// Radius, m.
    pub radius: f32,
    /// Padding.
    pub pad: [u32; 3],
}

/// Per packed slot: preferred and new velocity; after the move pass, the contact pass's
/// positions (`pref` and `vel` by turns). Sync: `Work`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuLocalWork {
    /// Preferred velocity, m/s.
    pub pref: [f32; 2],
    /// New velocity, m/s.
    pub vel: [f32; 2],
    /// 1 when the ORCA program was infeasible.
    pub infeasible: u32,
    /// 1 when the agent lacks ORCA's guarantee (infeasible, or a move changed by a wall).
    pub unguaranteed: u32,
    /// Padding.
    pub pad: [u32; 2],
}

/// One agent's result, in agent order. Sync: `Out`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuLocalOut {
    /// New position, m.
    pub p: [f32; 2],
    /// New velocity, m/s.
    pub v: [f32; 2],
    /// 1 when the ORCA program was infeasible.
    pub infeasible: u32,
    /// 1 when the move hit a wall.
    pub hit: u32,
    /// 1 when the contact pass pushed the agent.
    pub pushed: u32,
    /// Padding.
    pub pad: u32,
}

/// What one GPU step needs besides the agents.
pub(crate) struct GpuLocalInput<'a> {
    /// Preferred velocities (agent order); `None` for the flock.
    pub preferred: Option<&'a [[f32; 2]]>,
    /// Time step, s.
    pub dt: f32,
    /// `GPU_MODE_*` (ignored by the flock).
    pub mode: u32,
    /// Per-group settings, the fallback last.
    pub groups: Vec<GpuLocalGroup>,
    /// The wall map.
    pub walls: &'a WallMap,
    /// Moving obstacles.
    pub movers: &'a [MovingObstacle],
    /// Step count (jitter seed).
    pub step: u64,
}

/// Device buffers of the local layer, kept while large enough.
struct LocalBuffers {
    agents: usize,
    idx: usize,
    groups: usize,
    movers: usize,
    cells: usize,
    params: wgpu::Buffer,
    agents_in: wgpu::Buffer,
    grid_idx: wgpu::Buffer,
    groups_buf: wgpu::Buffer,
    walls: wgpu::Buffer,
    movers_buf: wgpu::Buffer,
    out: wgpu::Buffer,
    bg: wgpu::BindGroup,
    /// The wall flags last uploaded.
    walls_uploaded: Vec<u32>,
}

/// The GPU local layer: the pipelines of the `local_*` passes and their buffers.
pub struct GpuLocal {
    ctx: Arc<GpuContext>,
    layout: wgpu::BindGroupLayout,
    pack: wgpu::ComputePipeline,
    preferred: wgpu::ComputePipeline,
    orca: wgpu::ComputePipeline,
    flock: wgpu::ComputePipeline,
    mover: wgpu::ComputePipeline,
    /// The contact pass: even sweeps, odd sweeps, the results.
    contact: [wgpu::ComputePipeline; 3],
    bufs: Option<LocalBuffers>,
}

impl crate::local::LocalDevice for GpuLocal {
    fn step(
        &mut self,
        agents: &mut Agents,
        grid: &mut NeighborGrid,
        step: &crate::local::DeviceStep<'_>,
    ) -> Result<LocalStats> {
        let mode = match step.mode {
            LocalMode::None => GPU_MODE_NONE,
            LocalMode::Boids => GPU_MODE_BOIDS,
            LocalMode::Orca => GPU_MODE_ORCA,
            LocalMode::BoidsOrca => GPU_MODE_BOIDS_ORCA,
        };
        let input = GpuLocalInput {
            preferred: step.preferred,
            dt: step.dt,
            mode,
            groups: Self::group_records(step.groups),
            walls: step.walls,
            movers: step.movers,
            step: step.step,
        };
        GpuLocal::step(self, agents, grid, &input)
    }

    fn description(&self) -> String {
        format!("gpu on {}", self.ctx.adapter())
    }
}

impl LocalLayer {
    /// A layer doing `mode` on the GPU of `ctx` ([`LocalBackend::Gpu`]): the passes of
    /// [`GpuLocal`].
    ///
    /// # Errors
    /// [`Error::Gpu`] when the local passes' pipelines fail to build.
    pub fn with_gpu(mode: LocalMode, ctx: Arc<GpuContext>) -> Result<Self> {
        Ok(Self::with_device(mode, Box::new(GpuLocal::new(ctx)?)))
    }
}

/// A local layer doing `mode` on `backend`, whichever it is: [`LocalLayer::new`] for the CPU
/// ones, and for [`LocalBackend::Gpu`] a GPU context of its own ([`GpuContext::new`]; see
/// [`LocalLayer::with_gpu`] to share one).
///
/// # Errors
/// [`Error::Gpu`] when the GPU backend finds no adapter or its pipelines fail to build.
pub fn open_local_layer(mode: LocalMode, backend: LocalBackend) -> Result<LocalLayer> {
    match backend {
        LocalBackend::Gpu => LocalLayer::with_gpu(mode, Arc::new(GpuContext::new()?)),
        cpu => LocalLayer::new(mode, cpu),
    }
}

impl std::fmt::Debug for GpuLocal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuLocal").field("ctx", &self.ctx).finish()
    }
}

impl GpuLocal {
    /// Builds the local passes' pipelines on `ctx`.
    ///
    /// # Errors
    /// [`Error::Gpu`] when a pipeline fails to build.
    pub fn new(ctx: Arc<GpuContext>) -> Result<Self> {
        use Slot::*;
        let device = &ctx.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let layout = layout(
            device,
            "crowdfield.local",
            &[
                Uniform, Read, Read, ReadWrite, Read, Read, Read, ReadWrite, ReadWrite,
            ],
        );
        let mk = |label, src| pipeline(device, label, src, &layout);
        let pack = mk("crowdfield.local.pack", shaders::LOCAL_PACK);
        let preferred = mk("crowdfield.local.preferred", shaders::LOCAL_PREFERRED);
        let orca = mk("crowdfield.local.orca", shaders::LOCAL_ORCA);
        let flock = mk("crowdfield.local.flock", shaders::LOCAL_FLOCK);
        let mover = mk("crowdfield.local.move", shaders::LOCAL_MOVE);
        let contact = [
            mk("crowdfield.local.contact_even", shaders::LOCAL_CONTACT_EVEN),
            mk("crowdfield.local.contact_odd", shaders::LOCAL_CONTACT_ODD),
            mk("crowdfield.local.contact_out", shaders::LOCAL_CONTACT_OUT),
        ];
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Gpu(format!(
                "building the local-layer pipelines failed: {e}"
            )));
        }
        Ok(Self {
            ctx,
            layout,
            pack,
            preferred,
            orca,
            flock,
            mover,
            contact,
            bufs: None,
        })
    }

    /// The per-group records of `groups`, the fallback last (agents of a group past the
    /// scene's use it, as on the CPU).
    pub(crate) fn group_records(groups: &crate::local::Groups) -> Vec<GpuLocalGroup> {
        groups
            .cfg
            .iter()
            .chain(std::iter::once(&groups.fallback))
            .map(|c| {
                let b = c.boids.unwrap_or(crate::local::boids::BoidsF32::NONE);
                GpuLocalGroup {
                    has_boids: u32::from(c.boids.is_some()),
                    r_coh: b.r_coh,
                    r_sep: b.r_sep,
                    r_align: b.r_align,
                    k_coh: b.k_coh,
                    k_sep: b.k_sep,
                    k_align: b.k_align,
                    a_max: b.a_max,
                    v_max: b.v_max,
                    time_horizon: c.time_horizon,
                    obstacle_time_horizon: c.obstacle_time_horizon,
                    neighbor_dist: c.neighbor_dist,
                    max_neighbors: c.max_neighbors.min(u32::MAX as usize) as u32,
                    pad: [0; 3],
                }
            })
            .collect()
    }

    /// The context the layer runs on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// Makes sure the buffers hold `agents` agents, `idx` grid words, `groups` configurations,
    /// `movers` obstacles and `cells` wall cells.
    fn ensure(
        &mut self,
        agents: usize,
        idx: usize,
        groups: usize,
        movers: usize,
        cells: usize,
    ) -> Result<()> {
        if self.bufs.as_ref().is_some_and(|b| {
            b.agents >= agents && b.idx >= idx && b.groups >= groups && b.movers >= movers && b.cells >= cells
        }) {
            return Ok(());
        }
        let ctx = &self.ctx;
        let grow = |n: usize| n.max(1).next_power_of_two();
        let (agents, idx, groups, movers, cells) =
            (grow(agents), grow(idx), grow(groups), grow(movers), grow(cells));
        let size = |n: usize, t: usize| (n * t) as u64;
        ctx.check_size(
            "the local layer's agents",
            size(agents, size_of::<GpuLocalAgent>()),
        )?;
        ctx.check_size("the local layer's grid indices", size(idx, 4))?;
        ctx.check_size("the local layer's wall map", size(cells, 4))?;
        let params = ctx.uniform("crowdfield.local.params", size_of::<GpuLocalParams>() as u64);
        let agents_in = ctx.storage(
            "crowdfield.local.agents",
            size(agents, size_of::<GpuLocalAgent>()),
        );
        let grid_idx = ctx.storage("crowdfield.local.grid", size(idx, 4));
        let packed = ctx.storage(
            "crowdfield.local.packed",
            size(agents, size_of::<GpuPackedAgent>()),
        );
        let groups_buf = ctx.storage(
            "crowdfield.local.groups",
            size(groups, size_of::<GpuLocalGroup>()),
        );
        let walls = ctx.storage("crowdfield.local.walls", size(cells, 4));
        let movers_buf = ctx.storage("crowdfield.local.movers", size(movers, size_of::<GpuMover>()));
        let work = ctx.storage("crowdfield.local.work", size(agents, size_of::<GpuLocalWork>()));
        let out = ctx.storage("crowdfield.local.out", size(agents, size_of::<GpuLocalOut>()));
        let bg = bind_group(
            &ctx.device,
            "crowdfield.local",
            &self.layout,
            &[
                (&params, None),
                (&agents_in, None),
                (&grid_idx, None),
                (&packed, None),
                (&groups_buf, None),
                (&walls, None),
                (&movers_buf, None),
                (&work, None),
                (&out, None),
            ],
        );
        self.bufs = Some(LocalBuffers {
            agents,
            idx,
            groups,
            movers,
            cells,
            params,
            agents_in,
            grid_idx,
            groups_buf,
            walls,
            movers_buf,
            out,
            bg,
            walls_uploaded: Vec::new(),
        });
        Ok(())
    }

    /// One step on the GPU: bins `agents` into `grid` (whose dimensions the caller set), runs
    /// the passes and writes positions and velocities back into `agents`.
    ///
    /// # Errors
    /// [`Error::Gpu`] when a group asks for more than [`GPU_MAX_NEIGHBORS`] neighbours, there
    /// are more than [`GPU_MAX_MOVERS`] moving obstacles, an input exceeds the device's limits
    /// or the device fails.
    pub(crate) fn step(
        &mut self,
        agents: &mut Agents,
        grid: &mut NeighborGrid,
        input: &GpuLocalInput<'_>,
    ) -> Result<LocalStats> {
        if let Some(g) = input
            .groups
            .iter()
            .find(|g| g.max_neighbors as usize > GPU_MAX_NEIGHBORS)
        {
            return Err(Error::Gpu(format!(
                "max_neighbors {} is more than the {GPU_MAX_NEIGHBORS} the GPU local layer holds per agent",
                g.max_neighbors
            )));
        }
        if input.movers.len() > GPU_MAX_MOVERS {
            return Err(Error::Gpu(format!(
                "{} moving obstacles: the GPU local layer takes at most {GPU_MAX_MOVERS}",
                input.movers.len()
            )));
        }
        let n = agents.len();
        let t0 = Instant::now();
        let ctx = self.ctx.clone();
        ctx.neighbor_grid(grid, &agents.x, &agents.y)?;
        if n == 0 {
            return Ok(LocalStats::default());
        }
        let walls = input.walls;
        let bins = grid.bins();
        let cells = walls.cols * walls.rows;
        self.ensure(n, bins + 1 + n, input.groups.len(), input.movers.len(), cells)?;
        let flags: Vec<u32> = walls
            .blocked
            .iter()
            .zip(&walls.boundary)
            .zip(&walls.span)
            .map(|((&b, &e), &span)| {
                (u32::from(b) * CELL_BLOCKED) | (u32::from(e) * CELL_BOUNDARY) | (span << CELL_SPAN_SHIFT)
            })
            .collect();
        let movers: Vec<GpuMover> = input
            .movers
            .iter()
            .map(|m| GpuMover {
                pos: m.pos,
                vel: m.vel,
                radius: m.radius,
                pad: [0; 3],
            })
            .collect();
        let params = GpuLocalParams {
            agents: n as u32,
            bins_x: grid.bins_x,
            bins_y: grid.bins_y,
            inv_bin_size: grid.inv_bin_size,
            cols: walls.cols as u32,
            rows: walls.rows as u32,
            cell: walls.cell,
            width: walls.width,
            height: walls.height,
            dt: input.dt,
            mode: input.mode,
            movers: movers.len() as u32,
            groups: (input.groups.len() - 1) as u32,
            step_lo: input.step as u32,
            step_hi: (input.step >> 32) as u32,
            bounce: u32::from(input.preferred.is_none()),
            clearance: crate::local::ORCA_CLEARANCE,
            jitter: crate::local::PREFERRED_JITTER,
            k_wall: crate::local::K_WALL,
            probe_seconds: crate::local::PROBE_SECONDS,
            inv_cell: walls.inv_cell,
            contact_gap: crate::local::contact::CONTACT_GAP,
            pad: [0; 2],
        };
        let buf = self.bufs.as_mut().expect("local buffers were just ensured");
        let q = &ctx.queue;
        q.write_buffer(&buf.params, 0, bytemuck::bytes_of(&params));
        upload_agents(q, &buf.agents_in, agents, input.preferred);
        ctx.write_buffer_parallel(&buf.grid_idx, 0, &grid.bin_start);
        ctx.write_buffer_parallel(&buf.grid_idx, (bins as u64 + 1) * 4, &grid.sorted);
        q.write_buffer(&buf.groups_buf, 0, bytemuck::cast_slice(&input.groups));
        if !movers.is_empty() {
            q.write_buffer(&buf.movers_buf, 0, bytemuck::cast_slice(&movers));
        }
        if buf.walls_uploaded != flags {
            q.write_buffer(&buf.walls, 0, bytemuck::cast_slice(&flags));
            buf.walls_uploaded = flags;
        }
        let t1 = Instant::now();

        // Velocity passes.
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("crowdfield.local.velocity"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("crowdfield.local.velocity"),
                timestamp_writes: None,
            });
            pass.set_bind_group(0, &buf.bg, &[]);
            pass.set_pipeline(&self.pack);
            dispatch_linear(&mut pass, n as u32);
            if input.preferred.is_some() {
                pass.set_pipeline(&self.preferred);
                dispatch_linear(&mut pass, n as u32);
                if matches!(input.mode, GPU_MODE_ORCA | GPU_MODE_BOIDS_ORCA) {
                    pass.set_pipeline(&self.orca);
                    dispatch_linear(&mut pass, n as u32);
                }
            } else {
                pass.set_pipeline(&self.flock);
                dispatch_linear(&mut pass, n as u32);
            }
        }
        ctx.queue.submit([encoder.finish()]);
        ctx.finish()?;
        let t2 = Instant::now();

        // Move pass and read-back.
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("crowdfield.local.move"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("crowdfield.local.move"),
                timestamp_writes: None,
            });
            pass.set_bind_group(0, &buf.bg, &[]);
            pass.set_pipeline(&self.mover);
            dispatch_linear(&mut pass, n as u32);
            if input.preferred.is_some() && matches!(input.mode, GPU_MODE_ORCA | GPU_MODE_BOIDS_ORCA) {
                // Every sweep of the CPU's contact pass, which stops early once nothing moves
                // (the sweeps after that change nothing); the last one is odd and leaves the
                // positions in `work.pref`, where the results pass reads them.
                const _: () = assert!(crate::local::contact::CONTACT_SWEEPS.is_multiple_of(2));
                for sweep in 0..crate::local::contact::CONTACT_SWEEPS {
                    pass.set_pipeline(&self.contact[sweep % 2]);
                    dispatch_linear(&mut pass, n as u32);
                }
                pass.set_pipeline(&self.contact[2]);
                dispatch_linear(&mut pass, n as u32);
            }
        }
        ctx.queue.submit([encoder.finish()]);
        let (infeasible, hits, pushed) =
            ctx.read_back_with(&buf.out, 0, n, |out| unpack_agents(out, agents))?;
        let t3 = Instant::now();
        Ok(LocalStats {
            agents: n,
            infeasible,
            wall_hits: hits,
            pushed,
            seconds_bins: (t1 - t0).as_secs_f64(),
            seconds_velocity: (t2 - t1).as_secs_f64(),
            seconds_move: (t3 - t2).as_secs_f64(),
        })
    }
}

/// Agents per task of the pack and unpack loops (and per upload): below this one thread does
/// it all.
const AGENTS_PER_TASK: usize = 65_536;

/// Uploads the agents' records (positions, velocities, preferred velocities, radii, speeds,
/// groups, ids) in slices of [`AGENTS_PER_TASK`] packed and written by parallel tasks: wgpu
/// copies each slice into its upload memory before taking the queue's lock, so the 48 bytes an
/// agent are packed and copied on every core.
fn upload_agents(queue: &wgpu::Queue, dst: &wgpu::Buffer, agents: &Agents, preferred: Option<&[[f32; 2]]>) {
    use rayon::prelude::*;
    const RECORD: u64 = std::mem::size_of::<GpuLocalAgent>() as u64;
    let n = agents.len();
    (0..n.div_ceil(AGENTS_PER_TASK)).into_par_iter().for_each(|task| {
        let start = task * AGENTS_PER_TASK;
        let records: Vec<GpuLocalAgent> = (start..n.min(start + AGENTS_PER_TASK))
            .map(|i| GpuLocalAgent {
                p: [agents.x[i], agents.y[i]],
                v: [agents.vx[i], agents.vy[i]],
                pref: preferred.map_or([0.0; 2], |p| p[i]),
                radius: agents.radius[i],
                max_speed: agents.max_speed[i],
                group: agents.group[i],
                id: agents.id[i],
                pad: [0; 2],
            })
            .collect();
        queue.write_buffer(dst, start as u64 * RECORD, bytemuck::cast_slice(&records));
    });
}

/// Copies the move pass's positions and velocities from the mapped read-back memory into
/// `agents`, in parallel; returns the counts of infeasible programs, wall hits and agents the
/// contact pass pushed.
fn unpack_agents(out: &[GpuLocalOut], agents: &mut Agents) -> (usize, usize, usize) {
    use rayon::prelude::*;
    let Agents { x, y, vx, vy, .. } = agents;
    (x, y, vx, vy, out)
        .into_par_iter()
        .with_min_len(AGENTS_PER_TASK)
        .map(|(x, y, vx, vy, o)| {
            (*x, *y, *vx, *vy) = (o.p[0], o.p[1], o.v[0], o.v[1]);
            (o.infeasible as usize, o.hit as usize, o.pushed as usize)
        })
        .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_local_structs_have_the_wgsl_sizes() {
        // The WGSL side is checked against naga's layout in tests/gpu_local.rs.
        assert_eq!(size_of::<GpuLocalParams>(), 96);
        assert_eq!(size_of::<GpuLocalAgent>(), 48);
        assert_eq!(size_of::<GpuPackedAgent>(), 32);
        assert_eq!(size_of::<GpuLocalGroup>(), 64);
        assert_eq!(size_of::<GpuMover>(), 32);
        assert_eq!(size_of::<GpuLocalWork>(), 32);
        assert_eq!(size_of::<GpuLocalOut>(), 32);
    }

    #[test]
    fn gpu_backend_opens_or_reports_why_not() {
        match open_local_layer(LocalMode::Orca, LocalBackend::Gpu) {
            Ok(l) => {
                assert_eq!(l.backend(), LocalBackend::Gpu);
                assert!(l.backend_description().starts_with("gpu on "));
            }
            Err(e) => {
                assert!(matches!(e, Error::Gpu(_)), "{e}");
                // Where a GPU must be there (CI runs lavapipe), not opening it is a failure.
                assert!(
                    !std::env::var("CROWDFIELD_REQUIRE_GPU").is_ok_and(|v| v == "1"),
                    "CROWDFIELD_REQUIRE_GPU is set and no adapter opened: {e}"
                );
            }
        }
    }
}
