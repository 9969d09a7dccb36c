//! The GPU path (wgpu): the block fast-iterative Eikonal solver, the density splat, the speed
//! and cost fields and the bin-sorted neighbour grid, as WGSL compute passes in `shaders/` (one
//! file per pass, the shared structs in `shaders/common.wgsl`, embedded at compile time).
//!
//! - [`GpuContext`] picks an adapter (a real GPU first; `WGPU_BACKEND` and `WGPU_ADAPTER_NAME`
//!   honoured), builds every pipeline once and keeps each solver's buffers for reuse.
//! - [`GpuContext::solve_fim`]: one potential per goal mask, all groups in one solve (large
//!   tiles relaxed to convergence, two dispatches per pass, counters of the work done).
//! - [`GpuContext::neighbor_grid`]: the same arrays as [`crate::neighbors::NeighborGrid`].
//! - [`GpuContext::splat`]: the same quantities as [`crate::fields::splat`], deterministic.
//! - [`GpuContext::fields`]: splat, speed and unit cost, the same quantities as
//!   [`crate::fields::Fields::compute`] in f32 (with the density window of
//!   `params.density_window` as two passes between splat and speed).
//! - [`GpuContext::continuum_step`]: splat → speed → cost → FIM for every group without
//!   reading the fields back (read back only when asked).
//! - [`GpuContext::continuum_velocities`]: the simulation's step on the device, splat →
//!   fields → FIM (on replanning steps) → gradients → every agent's walking velocity, reading
//!   back only the velocities; a [`ContinuumRun`] keeps the run's potentials and gradients
//!   on the device and reads fields, potentials and gradients back only when asked.
//! - [`GpuLocal`]: the local layer's passes (boids, ORCA, flock, move), driven by
//!   [`crate::local::LocalLayer`] with [`crate::local::LocalBackend::Gpu`].
//! - [`Backend`]: where a solve runs; the rule that picks the CPU or a GPU for it is the
//!   planner's ([`crate::plan::device`]).
//!
//! Each pass has a CPU twin that reads like its shader ([`solve_fim_cpu`], [`splat_twin`],
//! [`gradient_twin`], [`velocity_twin`], [`potential_twin`]; the
//! neighbour grid's twin is [`crate::neighbors::NeighborGrid`] itself).

mod bins;
mod context;
mod continuum;
mod fields;
mod fim;
mod local;
pub mod shaders;
mod splat;
pub mod types;

pub use bins::{radix_passes, scan_levels};
pub use context::{AdapterReport, GpuContext, ReadBacks};
pub use continuum::{ContinuumRun, ContinuumVelocities, gradient_twin, potential_twin, velocity_twin};
pub use fields::{GpuStep, field_params, window_params};
pub use fim::{
    DISPATCHES_PER_PASS, FIM_COST_MAX, FIM_EPS_REL, FIM_LANES, FIM_MAX_SWEEPS_PER_EDGE, FIM_TILE_LARGE,
    FIM_TILE_SMALL, FIRST_PASSES_PER_SUBMIT, PASSES_PER_SUBMIT, PHI_INF, choose_fim_tile, fim_pass_source,
    fim_workgroup_bytes, local_update, max_passes, sanitize_cost, solve_fim_cpu, solve_fim_cpu_tiled,
};
pub use local::{
    GPU_MAX_MOVERS, GPU_MAX_NEIGHBORS, GpuLocal, GpuLocalAgent, GpuLocalGroup, GpuLocalOut, GpuLocalParams,
    GpuLocalWork, GpuMover, GpuPackedAgent, open_local_layer,
};
pub use splat::{SPLAT_FIXED_SCALE, splat_twin};

use crate::error::Result;

/// Where a solve runs ([`crate::plan::PlanOptions::backend`],
/// [`crate::sim::SimulationBuilder::backend`]; see the [`crate::sim::builder`] example).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// CPU fast marching (the groups solved in parallel).
    #[default]
    Cpu,
    /// GPU block fast iterative method; an error when no GPU adapter can be opened.
    Gpu,
    /// A hardware GPU when one can be opened and the grid has at least 512 x 512 cells, else
    /// the CPU (with a note saying why). Below that size the CPU was faster even against an
    /// NVIDIA H200. Software adapters (llvmpipe/lavapipe, far slower than the CPU solvers) are
    /// passed over unless WGPU_ADAPTER_NAME names one (the rule is [`GpuContext::for_auto`]'s).
    Auto,
}

impl crate::names::Named for Backend {
    const WHAT: &'static str = "Backend";
    const ALL: &'static [Self] = &[Self::Cpu, Self::Gpu, Self::Auto];

    /// `cpu`, `gpu` or `auto`: the command's `--backend`, Python's `backend` and the serde name.
    fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
            Self::Auto => "auto",
        }
    }
}

/// Opens a GPU context, or says why not.
///
/// # Errors
/// [`Error::Gpu`] as [`GpuContext::new`].
pub fn open() -> Result<GpuContext> {
    GpuContext::new()
}
