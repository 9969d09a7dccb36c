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
//! - [`solve_eikonal`] with a [`Backend`]: what the command line calls; `Auto` falls back to
//!   the CPU, saying why ([`solve_eikonal_speed`] the same from speeds).
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
pub use context::{AdapterReport, GpuContext};
pub use continuum::{
    ContinuumRun, ContinuumVelocities, ReadBacks, gradient_twin, potential_twin, velocity_twin,
};
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

use crate::eikonal::{Order, Solution};
use crate::error::{Error, Result};
use ndarray::{Array2, ArrayView3};

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

/// The fewest cells for which `Backend::Auto` takes the GPU: 512². Below it the GPU's fixed
/// costs per solve (dispatches, uploads, read-backs) outweigh its speed, even on an NVIDIA H200
/// against one core of its host (the measured figures are in BENCHMARKS.md and docs/gpu.md).
pub const AUTO_GPU_MIN_CELLS: usize = 512 * 512;

/// Why `Backend::Auto` keeps a grid of `cells` cells on the CPU, if it does: the note for the
/// "(auto: ...)" part of the description.
pub fn auto_keeps_on_cpu(cells: usize) -> Option<String> {
    (cells < AUTO_GPU_MIN_CELLS).then(|| {
        format!(
            "auto: {cells} cells, fewer than the {AUTO_GPU_MIN_CELLS} (512²) from which the GPU \
             overtakes the CPU; Backend::Gpu forces it"
        )
    })
}

/// Opens a GPU context, or says why not.
///
/// # Errors
/// [`Error::Gpu`] as [`GpuContext::new`].
pub fn open() -> Result<GpuContext> {
    GpuContext::new()
}

/// Solves one potential per goal mask on the chosen backend and returns the solutions with a
/// one-line description of what ran (e.g. `"gpu: fim on llvmpipe (...)"`, or for `Auto`
/// without a GPU `"cpu: fast marching (auto: GPU unavailable: ...)"`).
///
/// `ctx` is a context to reuse (keep one across calls: pipelines and buffers are built once);
/// with `None`, `Gpu` and `Auto` open one for this call. The GPU solves first order: with
/// `Order::Second`, `Gpu` is refused ([`check_order`]) and `Auto` uses the CPU.
///
/// # Errors
/// `Gpu`: [`Error::Gpu`] when no adapter opens or the device fails; every backend:
/// [`Error::Invalid`] for mismatched shapes.
pub fn solve_eikonal(
    backend: Backend,
    ctx: Option<&GpuContext>,
    cost: ArrayView3<f32>,
    goals: &[Array2<bool>],
    cell_size: f64,
    order: Order,
) -> Result<(Vec<Solution>, String)> {
    let cells = cost.dim().0 * cost.dim().1;
    let range = || positive_finite_range(cost.iter().map(|&c| f64::from(c)));
    dispatch(
        backend,
        ctx,
        order,
        cells,
        || beyond_gpu_range(range(), cell_size, cells),
        || {
            check_shapes(cost, goals)?;
            Ok(crate::eikonal::solve_groups(cost, goals, cell_size, order))
        },
        |ctx| ctx.solve_fim(cost, goals, cell_size),
    )
}

/// [`solve_eikonal`] on the isotropic cost `1 / speed` of each cell (speeds in m/s; a speed
/// that is not finite and positive is impassable): the same solutions as `solve_eikonal` on
/// `isotropic(cell_cost_from_speed(speed).view())`, and the same description. The CPU marches
/// without a cost array, and with one goal writes the potential over the speeds' memory
/// ([`crate::eikonal::solve_fmm_speed_in_place`]); the GPU gets the cost.
///
/// # Errors
/// As [`solve_eikonal`].
pub fn solve_eikonal_speed(
    backend: Backend,
    ctx: Option<&GpuContext>,
    speed: Array2<f64>,
    goals: &[Array2<bool>],
    cell_size: f64,
    order: Order,
) -> Result<(Vec<Solution>, String)> {
    use crate::eikonal::{cell_cost_from_speed, isotropic, solve_fmm_speed, solve_fmm_speed_in_place};
    use rayon::prelude::*;
    // The GPU closure borrows the speeds; the CPU one (run after it when `Auto` falls back)
    // takes them.
    let cells = speed.len();
    let speed = std::cell::RefCell::new(Some(speed));
    // Costs are the speeds' inverses: the fastest cell has the lowest cost.
    let range = || {
        let speed = speed.borrow();
        let speed = speed
            .as_ref()
            .expect("the speeds are checked before either solve");
        positive_finite_range(speed.iter().copied()).map(|(lo, hi)| (1.0 / hi, 1.0 / lo))
    };
    dispatch(
        backend,
        ctx,
        order,
        cells,
        || beyond_gpu_range(range(), cell_size, cells),
        || {
            let speed = speed.borrow_mut().take().expect("the speeds are taken once");
            check_goal_shapes(speed.dim(), goals)?;
            Ok(match goals {
                [goal] => vec![solve_fmm_speed_in_place(speed, goal.view(), cell_size, order)],
                _ => goals
                    .par_iter()
                    .map(|goal| solve_fmm_speed(speed.view(), goal.view(), cell_size, order))
                    .collect(),
            })
        },
        |ctx| {
            let speed = speed.borrow();
            let speed = speed
                .as_ref()
                .expect("the speeds are there until the CPU takes them");
            let cost = cell_cost_from_speed(speed.view());
            ctx.solve_fim(isotropic(cost.view()), goals, cell_size)
        },
    )
}

/// How a CPU solve is described (`solver ...` on stderr): fast marching and its order.
pub fn describe_cpu(order: Order) -> String {
    format!("cpu: fast marching ({order})")
}

/// The smallest and largest finite positive values (`None` when there is none).
fn positive_finite_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(None, |r, v| match r {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Largest potential (s) the GPU's f32 solve is trusted with: far below `f32::MAX`, so sums of
/// two step costs and their squares in the update stay finite.
const GPU_PHI_MAX: f64 = 1e30;
/// Smallest step cost (s) the GPU's f32 solve is trusted with: far above f32's smallest
/// normal number, so the update's squares do not underflow.
const GPU_STEP_MIN: f64 = 1e-15;

/// Why the GPU's f32 solve would not give the CPU's answer for unit costs between `range`
/// (s/m, finite positive ones) on `cells` cells of `cell_size` m, or `None` when it would: a
/// cost above [`FIM_COST_MAX`] is clamped there, and potentials past [`GPU_PHI_MAX`] (the
/// costliest step times the cells, the longest path) or steps below [`GPU_STEP_MIN`] leave
/// f32's comfortable range.
fn beyond_gpu_range(range: Option<(f64, f64)>, cell_size: f64, cells: usize) -> Option<String> {
    let (lo, hi) = range?;
    if hi > f64::from(FIM_COST_MAX) {
        return Some(format!(
            "a unit cost of {hi:e} s/m is above the GPU's limit of {FIM_COST_MAX:e} (a speed below {:e} m/s)",
            1.0 / f64::from(FIM_COST_MAX)
        ));
    }
    if hi * cell_size * cells as f64 > GPU_PHI_MAX || lo * cell_size < GPU_STEP_MIN {
        return Some(format!(
            "cell size {cell_size:e} m with unit costs {lo:e} to {hi:e} s/m gives potentials beyond the \
             GPU's f32 range"
        ));
    }
    None
}

/// Refuses `--order 2 --backend gpu`: the GPU's update is first order, and a run the user asked
/// to be second order must not quietly be less accurate (`auto` takes the CPU for it instead).
pub fn check_order(backend: Backend, order: Order) -> Result<()> {
    if backend == Backend::Gpu && order == Order::Second {
        return Err(Error::invalid(
            crate::error::OPTIONS,
            "order",
            "Order::Second: the GPU solver is first order only; use Order::First with Backend::Gpu, or \
             Backend::Cpu or Backend::Auto (which run second order on the CPU)",
        ));
    }
    Ok(())
}

/// Runs `cpu` or `gpu` as `backend` says (see [`solve_eikonal`]) and describes what ran.
/// `gpu_range_problem` says why the GPU would not give the CPU's answer (see
/// [`beyond_gpu_range`]); it is asked only where the GPU could run.
fn dispatch(
    backend: Backend,
    ctx: Option<&GpuContext>,
    order: Order,
    cells: usize,
    gpu_range_problem: impl FnOnce() -> Option<String>,
    cpu_solve: impl FnOnce() -> Result<Vec<Solution>>,
    gpu_solve: impl FnOnce(&GpuContext) -> Result<Vec<Solution>>,
) -> Result<(Vec<Solution>, String)> {
    let cpu = |note: String| -> Result<(Vec<Solution>, String)> {
        let sols = cpu_solve()?;
        Ok((sols, format!("{}{note}", describe_cpu(order))))
    };
    let gpu = |ctx: &GpuContext| -> Result<(Vec<Solution>, String)> {
        let sols = gpu_solve(ctx)?;
        let notes = if ctx.notes().is_empty() {
            String::new()
        } else {
            format!(" ({})", ctx.notes().join("; "))
        };
        Ok((sols, format!("gpu: block FIM on {}{notes}", ctx.adapter())))
    };
    match backend {
        Backend::Cpu => cpu(String::new()),
        Backend::Gpu => {
            check_order(backend, order)?;
            if let Some(problem) = gpu_range_problem() {
                return Err(Error::invalid(
                    crate::error::OPTIONS,
                    "backend",
                    format!(
                        "Backend::Gpu: {problem}; use Backend::Cpu (or Backend::Auto, which takes the CPU here)"
                    ),
                ));
            }
            match ctx {
                Some(c) => gpu(c),
                None => gpu(&GpuContext::new()?),
            }
        }
        Backend::Auto => {
            if order == Order::Second {
                return cpu(" (auto: second order runs on the CPU)".to_string());
            }
            if let Some(note) = auto_keeps_on_cpu(cells) {
                return cpu(format!(" ({note})"));
            }
            if let Some(problem) = gpu_range_problem() {
                return cpu(format!(" (auto: {problem})"));
            }
            let owned;
            let c = match ctx {
                Some(c) => c,
                None => match GpuContext::for_auto() {
                    Ok(c) => {
                        owned = c;
                        &owned
                    }
                    Err(e) => return cpu(format!(" (auto: {e})")),
                },
            };
            match gpu(c) {
                Ok(r) => Ok(r),
                Err(e @ Error::Invalid { .. }) => Err(e),
                Err(e) => cpu(format!(" (auto: the GPU solve failed: {e})")),
            }
        }
    }
}

fn check_shapes(cost: ArrayView3<f32>, goals: &[Array2<bool>]) -> Result<()> {
    let (rows, cols, dirs) = cost.dim();
    if dirs != 4 {
        return Err(Error::invalid(
            "<memory>",
            "cost",
            format!("shape {:?}, expected (rows, cols, 4)", cost.dim()),
        ));
    }
    check_goal_shapes((rows, cols), goals)
}

/// Every goal mask has the grid's shape `(rows, cols)`.
fn check_goal_shapes((rows, cols): (usize, usize), goals: &[Array2<bool>]) -> Result<()> {
    for (k, g) in goals.iter().enumerate() {
        if g.dim() != (rows, cols) {
            return Err(Error::invalid(
                "<memory>",
                format!("goals[{k}]"),
                format!("shape {:?}, expected ({rows}, {cols}) like the grid", g.dim()),
            ));
        }
    }
    Ok(())
}
