//! `crowdfield bench`: quick measurements on this machine, printed as markdown table rows.
//!
//! `bench eikonal` times the CPU fast marching (and, with `--backend`, the GPU) on a uniform
//! grid with a point source, reporting the error against the exact distance, or on a benchmark
//! grid with walls (`--grid`), against fast marching, with the GPU solver's work counters; `bench sim` steps
//! a map's crowd and reports steps per second by stage; `bench local` times the local layer
//! alone on the scaling benchmark's open crowd, on any backend. Wall-clock figures belong in
//! BENCHMARKS.md, never in tests. The side-by-side comparison with scikit-fmm is
//! `bench/eikonal_vs_skfmm.py`; the GPU, local-layer and simulation sweeps are the examples in
//! `examples/bench_*.rs`.

use crowdfield::eikonal::grids::{BenchGrid, bench_grid};
use crowdfield::eikonal::{cell_cost_from_speed, isotropic};
use crowdfield::gpu::{Backend, GpuContext};
use crowdfield::local::quality::CollisionCounter;
use crowdfield::local::{LocalBackend, LocalMode};
use crowdfield::names::Named;
use crowdfield::sim::Simulation;
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
    /// Eikonal solve on N x N grids: a point source at the centre of an open grid, or a
    /// benchmark grid with walls; the GPU's work counters beside the time.
    Eikonal {
        /// point (open grid, source at the centre, error against the exact distance), or a
        /// benchmark grid with one exit on its left edge (error against CPU fast marching):
        /// open, walls (four long walls) or maze (seven walls, a serpentine path).
        #[arg(long, value_enum, default_value_t = GridArg::Point)]
        grid: GridArg,
        /// Grid sizes (cells per side).
        #[arg(long, num_args = 1.., default_values_t = [512usize, 1024, 2048], allow_negative_numbers = true)]
        sizes: Vec<usize>,
        /// Order of the fast-marching update (1 or 2).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2), allow_negative_numbers = true)]
        order: u8,
        /// Solves per size (at least 1); the fastest is reported.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true)]
        repeats: u32,
        /// cpu, gpu or auto.
        #[arg(long, value_parser = super::choice(super::backend_help), default_value = Backend::Cpu.name())]
        backend: Backend,
    },
    /// Simulation steps on a map: steps per second and milliseconds per stage.
    Sim {
        /// The map (JSON).
        map: PathBuf,
        /// Steps to time (at least 1, after 5 warm-up steps); fewer if the crowd leaves first.
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true)]
        steps: u32,
    },
    /// The local layer alone on an open crowd (agents spread at --density in a square, heading
    /// in random directions, each wanting 1.2 m/s in another): steps per second, milliseconds
    /// per pass, infeasible ORCA programs and the collisions left after the last step, timed
    /// after 8 untimed steps (the agents are placed at random, some overlapping: the ORCA modes
    /// separate them over the first steps). On the GPU backend "bins" also holds the upload of
    /// the agents and "move" their read-back.
    Local {
        /// Crowd sizes (agents, 1 to 20,000,000).
        #[arg(long, num_args = 1.., default_values_t = [10_000usize, 100_000, 1_000_000], allow_negative_numbers = true)]
        agents: Vec<usize>,
        /// Local layer to time: boids, orca or boids+orca.
        #[arg(long, value_parser = super::choice(super::local_help), default_value = LocalMode::BoidsOrca.name())]
        mode: LocalMode,
        /// Where it runs: cpu-single (one thread), cpu-multi (all cores) or gpu.
        #[arg(long, value_parser = super::choice(super::local_backend_help),
              default_value = LocalBackend::CpuMulti.name())]
        backend: LocalBackend,
        /// Steps timed per size (at least 1, after 8 warm-up steps).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true)]
        steps: u32,
        /// Agents per m² (above 0, at most 10).
        #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
        density: f64,
    },
}

/// The grid of `bench eikonal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum GridArg {
    /// An open grid with a point source at its centre.
    Point,
    /// An open grid with an exit on its left edge.
    Open,
    /// Four long walls, an exit on the left edge.
    Walls,
    /// Seven walls (a serpentine path), an exit on the left edge.
    Maze,
}

impl GridArg {
    fn bench_grid(self) -> Option<BenchGrid> {
        match self {
            Self::Point => None,
            Self::Open => Some(BenchGrid::Open),
            Self::Walls => Some(BenchGrid::Walls),
            Self::Maze => Some(BenchGrid::Maze),
        }
    }
}

/// The largest crowd `bench local` builds (about 3 GB of agents, grid and frame).
const MAX_BENCH_AGENTS: usize = 20_000_000;

/// Runs `crowdfield bench`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Eikonal {
            grid,
            sizes,
            order,
            repeats,
            backend,
        } => eikonal(grid, &sizes, order, repeats as usize, backend),
        What::Sim { map, steps } => sim(&map, steps as usize),
        What::Local {
            agents,
            mode,
            backend,
            steps,
            density,
        } => local(&agents, mode, backend, steps as usize, density),
    }
}

fn local(
    sizes: &[usize],
    mode: LocalMode,
    backend: LocalBackend,
    steps: usize,
    density: f64,
) -> anyhow::Result<ExitCode> {
    // Every argument is checked before the table starts, so an error is not printed under a
    // header.
    anyhow::ensure!(
        mode != LocalMode::None,
        "--mode none: the local layer would do nothing to time; expected boids, orca or boids+orca"
    );
    // Checked as given (in f64: 1e-300 would read as 0 in f32 and be shown so); a density
    // that passes the square's size check below is far above f32's smallest numbers.
    anyhow::ensure!(
        density > 0.0 && density <= 10.0,
        "--density {density:?}: expected agents per m² above 0 and at most 10"
    );
    for &n in sizes {
        anyhow::ensure!(
            (1..=MAX_BENCH_AGENTS).contains(&n),
            "--agents {n}: expected 1 to {MAX_BENCH_AGENTS} agents"
        );
        // The crowd's square has cells of 2 m: bounded as a map's grid is.
        let side_cells = ((n as f64 / density).sqrt() / 2.0).ceil();
        anyhow::ensure!(
            side_cells * side_cells <= crowdfield::map::MAX_CELLS as f64,
            "--agents {n} at --density {density:?}: a square of {side_cells:e} x {side_cells:e} cells of 2 m, \
             more than the {} cells a grid may have; raise --density or lower --agents",
            crowdfield::map::MAX_CELLS
        );
    }
    let mut layer = crowdfield::gpu::open_local_layer(mode, backend)?;
    // CPU single runs on a pool of one thread, so nothing of it (the grid included) uses more.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(if backend == LocalBackend::CpuSingle { 1 } else { 0 })
        .build()?;
    let dt = 0.1;
    println!(
        "| agents | mode | backend | steps/s | bins ms | velocities ms | move ms | infeasible % | collisions after |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for &n in sizes {
        let (scene, mut agents, preferred) = crowdfield::local::workload::open_crowd(n, density as f32);
        let (mut bins, mut velocities, mut moves, mut infeasible) = (0.0, 0.0, 0.0, 0);
        let start = pool.install(|| -> anyhow::Result<Instant> {
            for _ in 0..crowdfield::local::workload::WARM_UP_STEPS {
                layer.step(&scene, &mut agents, &preferred, dt)?;
            }
            let start = Instant::now();
            for _ in 0..steps {
                let s = layer.step(&scene, &mut agents, &preferred, dt)?;
                bins += s.seconds_bins;
                velocities += s.seconds_velocity;
                moves += s.seconds_move;
                infeasible += s.infeasible;
            }
            Ok(start)
        })?;
        let wall = start.elapsed().as_secs_f64();
        let collisions = CollisionCounter::default().count(&agents).pairs;
        let ms = |t: f64| 1e3 * t / steps as f64;
        println!(
            "| {n} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {collisions} |",
            mode.name(),
            layer.backend_description(),
            three_digits(steps as f64 / wall),
            ms(bins),
            ms(velocities),
            ms(moves),
            100.0 * infeasible as f64 / (n * steps) as f64
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn eikonal(
    grid: GridArg,
    sizes: &[usize],
    order: u8,
    repeats: usize,
    backend: Backend,
) -> anyhow::Result<ExitCode> {
    let order_kind = super::order(order);
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
    println!(
        "| grid | order | solver | best s | mean abs error (cells) | max abs error (cells) | passes | dispatches | read-backs | relaxations per reachable cell |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &n in sizes {
        // Point: one cost per cell, seen as the four-direction cost (what `eikonal` and speed
        // maps give the solvers): the march takes its isotropic path without checking or
        // copying. The benchmark grids carry their walls in the cost.
        let (cost, goal) = match grid.bench_grid() {
            None => {
                let cell_cost = cell_cost_from_speed(Array2::from_elem((n, n), 1.0).view());
                let mut goal = Array2::from_elem((n, n), false);
                goal[(n / 2, n / 2)] = true;
                (isotropic(cell_cost.view()).to_owned(), goal)
            }
            Some(g) => bench_grid(g, n),
        };
        let goals = [goal];
        let mut best = f64::INFINITY;
        let mut last = None;
        for _ in 0..repeats {
            let t = Instant::now();
            let (mut sols, used) =
                crowdfield::plan::solve_eikonal(backend, ctx.as_ref(), cost.view(), &goals, 1.0, order_kind)?;
            best = best.min(t.elapsed().as_secs_f64());
            last = Some((sols.remove(0), used));
        }
        let (sol, used) = last.expect("at least one repeat");
        // The reference: the exact distance from the point, or fast marching on the grid.
        let reference = match grid.bench_grid() {
            None => Array2::from_shape_fn((n, n), |(r, c)| {
                ((r as f64 - (n / 2) as f64).powi(2) + (c as f64 - (n / 2) as f64).powi(2)).sqrt()
            }),
            Some(_) => crowdfield::eikonal::solve_fmm(cost.view(), goals[0].view(), 1.0, order_kind).phi,
        };
        let (mut sum, mut max, mut count) = (0.0f64, 0.0f64, 0usize);
        for (&v, &exact) in sol.phi.iter().zip(reference.iter()) {
            if exact.is_finite() {
                let e = (v - exact).abs();
                sum += e;
                max = max.max(e);
                count += 1;
            }
        }
        let counters = match sol.counters {
            Some(c) => format!(
                "{} | {} | {} | {:.1}",
                c.passes, c.dispatches, c.read_backs, c.relaxations_per_reachable_cell
            ),
            None => "- | - | - | -".to_string(),
        };
        let name = match grid.bench_grid() {
            None => format!("{n}², point"),
            Some(g) => format!("{n}², {}", g.name()),
        };
        println!(
            "| {name} | {order} | {used} | {best:.4} | {:.4} | {max:.4} | {counters} |",
            sum / count.max(1) as f64
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `x` with three significant digits at most (2489, 132, 3.85).
fn three_digits(x: f64) -> String {
    let decimals = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.decimals$}")
}

fn sim(map: &std::path::Path, steps: usize) -> anyhow::Result<ExitCode> {
    let scene = crowdfield::map::load(map)?;
    let cells = scene.grid.len();
    let name = scene.name.clone();
    let mut sim = Simulation::builder(scene)
        .build()
        .map_err(|e| e.relabel(&name, &map.display().to_string()))?;
    let agents = sim.agents().len();
    for _ in 0..5 {
        if sim.finished() {
            break;
        }
        sim.step();
    }
    let before = *sim.times();
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
    let t = *sim.times();
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
