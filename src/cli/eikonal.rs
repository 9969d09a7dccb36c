//! `crowdfield eikonal`: the raw solver on `.npy` arrays, for researchers and for side-by-side
//! comparison with other Eikonal tools. Solves `|grad phi| = 1 / speed` with `phi = 0` on the
//! goal cells and writes phi as float64 `.npy` (`+inf` where unreachable).

use anyhow::{Context, bail};
use crowdfield::eikonal::{FMM_CPU, PhiGrid, SpeedGrid};
use crowdfield::gpu::{Backend, GpuContext};
use crowdfield::io::{read_npy_f64, read_npy_f64_with, write_npy};
use crowdfield::names::Named;
use crowdfield::plan::{describe_cpu, solve_eikonal_speed};
use ndarray::{Array2, ArrayView2};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `crowdfield eikonal`, as typed.
#[derive(clap::Args)]
pub struct Args {
    /// Speed array (.npy, 2-D, float32/float64/uint8; row index = y, column index = x).
    ///
    /// Cells whose speed is <= 0 or not finite are impassable, and so are speeds so small that
    /// their inverse (the cell's cost, in f32) overflows: below about 3e-39 m/s. Speeds above
    /// 2^126 (about 8.5e37 m/s), whose cost underflows f32, are refused: scale the speeds down. On
    /// `--backend gpu` speeds below 1e-12 m/s, or a cell size that puts potentials beyond
    /// f32's range, are refused (auto takes the CPU for them).
    #[arg(long, value_name = "SPEED.npy")]
    speed: PathBuf,
    /// Goal array (.npy, same shape as SPEED; bool, uint8 or numeric): nonzero marks a source.
    #[arg(long, value_name = "GOAL.npy")]
    goal: PathBuf,
    /// Where to write phi (.npy, float64, same shape; +inf where no goal is reachable). Its
    /// folder must exist (checked before the solve).
    #[arg(long, value_name = "PHI.npy")]
    out: PathBuf,
    /// Edge length of one cell (metres); phi is in seconds when speed is in metres per second.
    /// At most 1e100 (larger steps overflow the quadratic update's squares).
    #[arg(long, value_name = "H", default_value_t = 1.0, allow_negative_numbers = true)]
    cell_size: f64,
    /// Order of the fast-marching update: 1 or 2.
    #[arg(
        long,
        default_value_t = 1,
        value_parser = clap::value_parser!(u8).range(1..=2),
        allow_negative_numbers = true
    )]
    order: u8,
    /// Where the Eikonal solve runs: cpu (fast marching), gpu (block fast
    /// iterative method on the wgpu adapter; an error when none opens), auto (the GPU when one
    /// opens and the grid has 512² cells or more, else the CPU). The one used is printed.
    // The values' own help (shared with `solve`) speaks of groups, which a raw solve has not.
    #[arg(long, value_parser = super::choice(super::backend_help), default_value = Backend::Cpu.name(),
          hide_possible_values = true)]
    pub backend: Backend,
    /// Print one JSON line on stdout: {"rows","cols","order","solver","solve_seconds",
    /// "counters"}; the solve time excludes file I/O; counters: the GPU solver's passes,
    /// dispatches, read-backs and relaxations (null on the CPU).
    #[arg(long)]
    timing: bool,
}

/// The `--timing` line, its fields in the order the README documents.
#[derive(serde::Serialize)]
struct TimingLine {
    rows: usize,
    cols: usize,
    order: u8,
    solver: &'static str,
    solve_seconds: f64,
    counters: Option<crowdfield::eikonal::SolveCounters>,
}

/// The speeds as read: into the march's own memory (CPU), or as an array (the dispatch).
enum Speeds {
    Grid(SpeedGrid),
    Array(Array2<f64>),
}

impl Speeds {
    fn dim(&self) -> (usize, usize) {
        match self {
            Self::Grid(g) => g.dim(),
            Self::Array(a) => a.dim(),
        }
    }
}

/// The potential, where the solve left it.
enum Phi {
    Grid(PhiGrid),
    Array(Array2<f64>),
}

impl Phi {
    fn view(&self) -> ArrayView2<'_, f64> {
        match self {
            Self::Grid(g) => g.phi(),
            Self::Array(a) => a.view(),
        }
    }
}

/// Runs `crowdfield eikonal`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !(args.cell_size > 0.0 && args.cell_size.is_finite()) {
        bail!("--cell-size: {} is not a positive finite length", args.cell_size);
    }
    if args.cell_size > crowdfield::eikonal::MAX_CELL_SIZE {
        bail!(
            "--cell-size: {}: expected at most {:e} (the solver squares cell size times cost, which \
             would overflow)",
            crowdfield::error::num(args.cell_size),
            crowdfield::eikonal::MAX_CELL_SIZE
        );
    }
    let too_fast = |values: ArrayView2<f64>| {
        crowdfield::eikonal::first_unrepresentable_speed(values).map(|((r, c), v)| {
            anyhow::anyhow!(
                "{}: speed {} at (row {r}, column {c}): expected at most {:.6e} (2^126), the fastest \
                 speed the solver represents (its cost 1/speed would underflow f32); scale the speeds down",
                args.speed.display(),
                crowdfield::error::num(v),
                crowdfield::eikonal::MAX_SPEED
            )
        })
    };
    let order = super::order(args.order);
    let backend = args.backend;
    // Before the speeds are read.
    crowdfield::plan::check_order(backend, order)?;
    crowdfield::io::check_output_file(&args.out).map_err(|e| anyhow::anyhow!("--out {e}"))?;
    // On the CPU (the default) the speeds are read straight into the memory the march solves
    // over (`SpeedGrid`: no grid-sized array allocated by the solve); the other backends go
    // through the dispatch that can run the GPU.
    let speed = if backend == Backend::Cpu {
        Speeds::Grid(
            read_npy_f64_with(&args.speed, |values| {
                let (rows, cols) = values.dim();
                let mut grid = SpeedGrid::new(rows, cols).ok_or_else(|| {
                    anyhow::anyhow!(
                        "{}: shape ({rows}, {cols}): expected a grid of at least one cell and, \
                         with two cells of padding on every side, at most {} cells",
                        args.speed.display(),
                        SpeedGrid::MAX_CELLS
                    )
                })?;
                if let Some(e) = too_fast(values) {
                    return Err(e);
                }
                grid.speeds_mut().assign(&values);
                Ok::<_, anyhow::Error>(grid)
            })
            .context("reading --speed")??,
        )
    } else {
        let speeds = read_npy_f64(&args.speed).context("reading --speed")?;
        if let Some(e) = too_fast(speeds.view()) {
            return Err(e);
        }
        Speeds::Array(speeds)
    };
    let (rows, cols) = speed.dim();
    let goal = read_npy_f64_with(&args.goal, |values| {
        if values.dim() != (rows, cols) {
            return Err(format!(
                "shape ({}, {}) differs from the shape ({rows}, {cols}) of {}",
                values.nrows(),
                values.ncols(),
                args.speed.display()
            ));
        }
        if let Some(((r, c), _)) = values.indexed_iter().find(|(_, v)| v.is_nan()) {
            return Err(format!(
                "value NaN at (row {r}, column {c}); expected 0 or nonzero"
            ));
        }
        Ok(values.mapv(|v| v != 0.0))
    })
    .context("reading --goal")?
    .map_err(|message| anyhow::anyhow!("{}: {message}", args.goal.display()))?;
    if !goal.iter().any(|&g| g) {
        bail!("{}: no source cell (every value is 0)", args.goal.display());
    }

    // The adapter is opened before the clock starts: solve_seconds is the solve alone.
    let ctx = match backend {
        Backend::Cpu => None,
        Backend::Gpu => GpuContext::new().ok(),
        // A grid `Auto` keeps on the CPU opens no adapter.
        Backend::Auto if crowdfield::plan::auto_keeps_on_cpu(goal.len()).is_some() => None,
        Backend::Auto => GpuContext::for_auto().ok(),
    };
    let start = Instant::now();
    let (phi, unreachable, solver, backend_used, counters) = match speed {
        Speeds::Grid(grid) => {
            let solved = grid.solve_fmm(goal.view(), args.cell_size, order);
            let unreachable = solved.unreachable;
            (Phi::Grid(solved), unreachable, FMM_CPU, describe_cpu(order), None)
        }
        Speeds::Array(speed) => {
            let (mut solutions, backend_used) = solve_eikonal_speed(
                backend,
                ctx.as_ref(),
                speed,
                std::slice::from_ref(&goal),
                args.cell_size,
                order,
            )?;
            let solution = solutions.remove(0);
            let unreachable = solution.unreachable;
            (
                Phi::Array(solution.phi),
                unreachable,
                solution.solver,
                backend_used,
                solution.counters,
            )
        }
    };
    let solve_seconds = start.elapsed().as_secs_f64();
    eprintln!("eikonal: solver {backend_used}");

    write_npy(&args.out, phi.view())?;
    eprintln!(
        "eikonal: {rows} x {cols} cells, order {}, {unreachable} unreachable, solved in {solve_seconds:.3} s",
        args.order
    );
    if args.timing {
        let line = TimingLine {
            rows,
            cols,
            order: args.order,
            solver,
            solve_seconds,
            counters,
        };
        println!("{}", serde_json::to_string(&line)?);
    }
    Ok(ExitCode::SUCCESS)
}
