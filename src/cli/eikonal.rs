//! `crowdfield eikonal`: the raw solver on `.npy` arrays, for researchers and for side-by-side
//! comparison with other Eikonal tools. Solves `|grad phi| = 1 / speed` with `phi = 0` on the
//! goal cells and writes phi as float64 `.npy` (`+inf` where unreachable).

use anyhow::{Context, bail};
use crowdfield::eikonal::Order;
use crowdfield::gpu::{Backend, GpuContext};
use crowdfield::io::{read_npy_f64, write_npy};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `crowdfield eikonal`, as typed.
#[derive(clap::Args)]
pub struct Args {
    /// Speed array (.npy, 2-D, float32/float64/uint8; row index = y, column index = x).
    ///
    /// Cells whose speed is <= 0 or not finite are impassable.
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
    /// opens, else the CPU). The one used is printed.
    // The values' own help (shared with `solve`) speaks of groups, which a raw solve has not.
    #[arg(long, value_enum, default_value_t = Backend::Cpu, hide_possible_values = true)]
    pub backend: Backend,
    /// Print one JSON line on stdout: {"rows","cols","order","solver","solve_seconds"}; the
    /// solve time excludes file I/O.
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
}

/// Fails unless `--out` names a file in a folder that exists. Checked before any work: the
/// folder is not created (a mistyped path would otherwise become a folder after the solve).
fn check_out_path(out: &Path) -> anyhow::Result<()> {
    let folder = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if out.is_dir() {
        bail!(
            "--out {}: is a folder: expected the path of the .npy file to write",
            out.display()
        );
    }
    if folder.exists() && !folder.is_dir() {
        bail!(
            "--out {}: {} is a file, not a folder",
            out.display(),
            folder.display()
        );
    }
    if !folder.is_dir() {
        bail!(
            "--out {}: the folder {} does not exist: create it first",
            out.display(),
            folder.display()
        );
    }
    Ok(())
}

/// Runs `crowdfield eikonal`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !(args.cell_size > 0.0 && args.cell_size.is_finite()) {
        bail!("--cell-size: {} is not a positive finite length", args.cell_size);
    }
    let order = if args.order == 2 {
        Order::Second
    } else {
        Order::First
    };
    check_out_path(&args.out)?;
    let speed = read_npy_f64(&args.speed).context("reading --speed")?;
    let goal_values = read_npy_f64(&args.goal).context("reading --goal")?;
    if goal_values.dim() != speed.dim() {
        bail!(
            "{}: shape ({}, {}) differs from the shape ({}, {}) of {}",
            args.goal.display(),
            goal_values.nrows(),
            goal_values.ncols(),
            speed.nrows(),
            speed.ncols(),
            args.speed.display()
        );
    }
    if let Some(((r, c), _)) = goal_values.indexed_iter().find(|(_, v)| v.is_nan()) {
        bail!(
            "{}: value NaN at (row {r}, column {c}); expected 0 or nonzero",
            args.goal.display()
        );
    }
    let goal = goal_values.mapv(|v| v != 0.0);
    if !goal.iter().any(|&g| g) {
        bail!("{}: no source cell (every value is 0)", args.goal.display());
    }

    // The adapter is opened before the clock starts: solve_seconds is the solve alone.
    let ctx = match args.backend {
        Backend::Cpu => None,
        Backend::Gpu => GpuContext::new().ok(),
        Backend::Auto => GpuContext::for_auto().ok(),
    };
    let (rows, cols) = speed.dim();
    let start = Instant::now();
    let (mut solutions, backend_used) = crowdfield::gpu::solve_eikonal_speed(
        args.backend,
        ctx.as_ref(),
        speed,
        std::slice::from_ref(&goal),
        args.cell_size,
        order,
    )?;
    let solution = solutions.remove(0);
    let solve_seconds = start.elapsed().as_secs_f64();
    eprintln!("eikonal: solver {backend_used}");

    write_npy(&args.out, solution.phi.view())?;
    eprintln!(
        "eikonal: {rows} x {cols} cells, order {}, {} unreachable, solved in {solve_seconds:.3} s",
        args.order, solution.unreachable
    );
    if args.timing {
        let line = TimingLine {
            rows,
            cols,
            order: args.order,
            solver: solution.solver,
            solve_seconds,
        };
        println!("{}", serde_json::to_string(&line)?);
    }
    Ok(ExitCode::SUCCESS)
}
