//! `crowdfield solve MAP --out DIR [--order 1|2] [--quiet]`: solves every group's potential on a
//! map (static planning field: terrain, obstacles, discomfort, no crowd) and writes arrays,
//! images and `summary.json` (see [`crowdfield::export::bundle`]).

use anyhow::Context;
use crowdfield::export::ImageOptions;
use crowdfield::export::bundle::{SOLVE_WRITER, write_solve_bundle_into};
use crowdfield::gpu::Backend;
use crowdfield::names::Named;
use crowdfield::ownership::OwnedDir;
use crowdfield::plan::{PlanOptions, plan};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `crowdfield solve`.
#[derive(clap::Args)]
pub struct Args {
    /// The map to solve (JSON).
    pub map: PathBuf,
    /// Output folder (created if missing): one sub-folder per group plus field images and
    /// summary.json.
    #[arg(long)]
    pub out: PathBuf,
    /// Order of the fast-marching update (1 or 2).
    #[arg(
        long,
        default_value_t = 1,
        value_parser = clap::value_parser!(u8).range(1..=2),
        allow_negative_numbers = true
    )]
    pub order: u8,
    /// Where the Eikonal solve runs: cpu (fast marching), gpu (block fast iterative method
    /// on the wgpu adapter), auto (the GPU when one opens and the grid has 512² cells or more,
    /// else the CPU). The one used is printed.
    #[arg(long, value_parser = super::choice(super::backend_help), default_value = Backend::Cpu.name())]
    pub backend: Backend,
    /// Print no progress or timings to stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Write into an --out folder that holds files `solve` did not write (they are kept
    /// unless a file of the solve has the same name).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub read: super::MapReadArgs,
}

/// Runs `crowdfield solve`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    let quiet = args.quiet;
    let mut log = |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    };
    let order = super::order(args.order);
    crowdfield::plan::check_order(args.backend, order)?;
    let scene = crowdfield::sim::load_map(&args.map, &args.read.options())?;
    log(&format!(
        "loaded {} in {:.3} s",
        args.map.display(),
        start.elapsed().as_secs_f64()
    ));
    // A mistyped or read-only --out, or one holding files `solve` did not write, fails now,
    // not after the solve.
    let mut owned = OwnedDir::open_replacing(&args.out, SOLVE_WRITER, args.force)?;
    let options = PlanOptions {
        order,
        backend: args.backend,
        gpu: None,
    };
    let plan = plan(&scene, &options).with_context(|| format!("solving {}", args.map.display()))?;
    write_solve_bundle_into(&scene, &plan, &mut owned, &ImageOptions::default(), &mut log)
        .with_context(|| format!("solving {}", args.map.display()))?;
    log(&format!(
        "wrote {} in {:.3} s total",
        args.out.display(),
        start.elapsed().as_secs_f64()
    ));
    Ok(ExitCode::SUCCESS)
}
