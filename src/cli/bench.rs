//! `crowdfield bench`: quick measurements on this machine, printed as markdown table rows.
//!
//! `bench eikonal` times the CPU fast marching (and, with `--backend`, the GPU) on a uniform
//! grid with a point source and reports the error against the exact distance; `bench sim` steps
//! a map's crowd and reports steps per second by stage. Wall-clock figures belong in
//! BENCHMARKS.md, never in tests. The side-by-side comparison with scikit-fmm is
//! `bench/eikonal_vs_skfmm.py`; the GPU, local-layer and simulation sweeps are the examples in
//! `examples/bench_*.rs`.

use crowdfield::eikonal::{Order, cell_cost_from_speed, isotropic};
use crowdfield::gpu::{Backend, GpuContext};
use crowdfield::sim::{SimConfig, Simulation};
use ndarray::Array2;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `crowdfield bench`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand)]
enum What {
    /// Eikonal solve on N x N uniform grids with a point source at the centre.
    Eikonal {
        /// Grid sizes (cells per side).
        #[arg(long, num_args = 1.., default_values_t = [512usize, 1024, 2048], allow_negative_numbers = true)]
        sizes: Vec<usize>,
        /// Order of the fast-marching update (1 or 2).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
        order: u8,
        /// Solves per size (at least 1); the fastest is reported.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
        repeats: u32,
        /// cpu, gpu or auto.
        #[arg(long, value_enum, default_value_t = Backend::Cpu)]
        backend: Backend,
    },
    /// Simulation steps on a map: steps per second and milliseconds per stage.
    Sim {
        /// The map (JSON).
        map: PathBuf,
        /// Steps to time (at least 1, after 5 warm-up steps); fewer if the crowd leaves first.
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
        steps: u32,
    },
}

/// Runs `crowdfield bench`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Eikonal {
            sizes,
            order,
            repeats,
            backend,
        } => eikonal(&sizes, order, repeats as usize, backend),
        What::Sim { map, steps } => sim(&map, steps as usize),
    }
}

fn eikonal(sizes: &[usize], order: u8, repeats: usize, backend: Backend) -> anyhow::Result<ExitCode> {
    let order_kind = if order == 2 { Order::Second } else { Order::First };
    // Every size is checked before the table starts, so an error is not printed under a header.
    for &n in sizes {
        anyhow::ensure!(n >= 3, "--sizes {n}: expected at least 3 cells per side");
        // The same bound as a map's grid: refused here rather than aborting on allocation.
        anyhow::ensure!(
            n.checked_mul(n)
                .is_some_and(|cells| cells <= crowdfield::map::MAX_CELLS),
            "--sizes {n}: {n} x {n} cells is too large: expected at most {} cells (2^28)",
            crowdfield::map::MAX_CELLS
        );
    }
    let ctx = match backend {
        Backend::Cpu => None,
        _ => GpuContext::new().ok(),
    };
    println!("| grid | order | solver | best s | mean abs error (cells) | max abs error (cells) |");
    println!("|---|---|---|---|---|---|");
    for &n in sizes {
        // One cost per cell, seen as the four-direction cost (what `eikonal` and speed maps
        // give the solvers): the march takes its isotropic path without checking or copying.
        let cell_cost = cell_cost_from_speed(Array2::from_elem((n, n), 1.0).view());
        let cost = isotropic(cell_cost.view());
        let mut goal = Array2::from_elem((n, n), false);
        let (sr, sc) = (n / 2, n / 2);
        goal[(sr, sc)] = true;
        let goals = [goal];
        let mut best = f64::INFINITY;
        let mut last = None;
        for _ in 0..repeats {
            let t = Instant::now();
            let (mut sols, used) =
                crowdfield::gpu::solve_eikonal(backend, ctx.as_ref(), cost, &goals, 1.0, order_kind)?;
            best = best.min(t.elapsed().as_secs_f64());
            last = Some((sols.remove(0), used));
        }
        let (sol, used) = last.expect("at least one repeat");
        let (mut sum, mut max, mut count) = (0.0f64, 0.0f64, 0usize);
        for ((r, c), &v) in sol.phi.indexed_iter() {
            let exact = ((r as f64 - sr as f64).powi(2) + (c as f64 - sc as f64).powi(2)).sqrt();
            let e = (v - exact).abs();
            sum += e;
            max = max.max(e);
            count += 1;
        }
        println!(
            "| {n}² | {order} | {used} | {best:.4} | {:.4} | {max:.4} |",
            sum / count as f64
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn sim(map: &std::path::Path, steps: usize) -> anyhow::Result<ExitCode> {
    let scene = crowdfield::map::load(map)?;
    let cells = scene.grid.len();
    let name = scene.name.clone();
    let mut sim = Simulation::new(scene, SimConfig::default())
        .map_err(|e| e.relabel(&name, &map.display().to_string()))?;
    let agents = sim.agents.len();
    for _ in 0..5 {
        if sim.finished() {
            break;
        }
        sim.step();
    }
    let before = sim.times;
    let start = Instant::now();
    let mut done = 0;
    while done < steps && !sim.finished() {
        sim.step();
        done += 1;
    }
    anyhow::ensure!(
        done > 0,
        "{}: the crowd left before any step could be timed",
        map.display()
    );
    let wall = start.elapsed().as_secs_f64();
    if done < steps {
        eprintln!(
            "bench: {}: the crowd left after {done} of the {steps} timed steps; the figures are over those {done}",
            map.display()
        );
    }
    let ms = |a: f64, b: f64| (a - b) * 1000.0 / done as f64;
    let t = sim.times;
    println!(
        "| map | cells | agents | steps/s | splat ms | fields ms | potentials ms | advection ms | separation ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| {} | {cells} | {agents} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
        map.display(),
        done as f64 / wall,
        ms(t.splat, before.splat),
        ms(t.fields, before.fields),
        ms(t.potentials, before.potentials),
        ms(t.advection, before.advection),
        ms(t.separation, before.separation)
    );
    Ok(ExitCode::SUCCESS)
}
