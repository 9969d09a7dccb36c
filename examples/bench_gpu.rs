//! GPU beside CPU: the Eikonal solve at 256² … 2048² on the walls and maze benchmark grids,
//! one group and four (with the solver's counters), the neighbour grid at
//! 10⁴ … 10⁶ agents, and the simulation's continuum step (splat → speed → cost → potentials
//! → gradients → walking velocities) at 256² … 1024² with 10⁴ agents in four groups against
//! the CPU backend's, with the bytes each reads back, naming the adapter. Run with `cargo run --release --example bench_gpu [-- --quick | --max-side N]`;
//! figures go in BENCHMARKS.md. `--max-side N` drops the Eikonal grids larger than N² (2048²
//! on a software adapter takes minutes). `WGPU_ADAPTER_NAME` / `WGPU_BACKEND` pick the adapter.
//!
//! Times are wall-clock medians of `REPEATS` runs after one warm-up; a figure whose first run
//! takes longer than `SLOW_S` is that single run (marked `1 run`). GPU Eikonal times include
//! the upload, every pass and the read-back of phi; the neighbour grid is timed with and
//! without reading the arrays back.

use crowdfield::agents::Agents;
use crowdfield::eikonal::grids::{BenchGrid, bench_grid, bench_walls};
use crowdfield::eikonal::{self, Order};
use crowdfield::fields::Fields;
use crowdfield::gpu::{GpuContext, solve_fim_cpu};
use crowdfield::grid::Grid;
use crowdfield::neighbors::NeighborGrid;
use crowdfield::scene::Scene;
use ndarray::Array2;
use std::time::Instant;

/// Runs per figure (the median is reported): enough to drop a cold outlier.
const REPEATS: usize = 3;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A first run longer than this, seconds, is reported alone: repeating a minute-long software
/// solve four times would say nothing more.
const SLOW_S: f64 = 5.0;

/// A measured time and how many runs it is the median of.
struct Timing {
    seconds: f64,
    runs: usize,
}

impl std::fmt::Display for Timing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.seconds * 1e3;
        if ms >= 100.0 {
            write!(f, "{ms:.0} ms")?;
        } else {
            write!(f, "{ms:.2} ms")?;
        }
        if self.runs == 1 {
            write!(f, " (1 run)")
        } else {
            Ok(())
        }
    }
}

fn time<T>(mut f: impl FnMut() -> T) -> (Timing, T) {
    let t = Instant::now();
    let first = f();
    let once = t.elapsed().as_secs_f64();
    if once > SLOW_S {
        return (
            Timing {
                seconds: once,
                runs: 1,
            },
            first,
        );
    }
    let mut last = None;
    let times = (0..REPEATS)
        .map(|_| {
            let t = Instant::now();
            last = Some(f());
            t.elapsed().as_secs_f64()
        })
        .collect();
    (
        Timing {
            seconds: median(times),
            runs: REPEATS,
        },
        last.expect("REPEATS > 0"),
    )
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let ctx = match GpuContext::new() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("bench_gpu: {e}");
            std::process::exit(2);
        }
    };
    println!("adapter: {}", ctx.adapter());
    if ctx.adapter().device_type == "Cpu" {
        println!("note: a software adapter (runs on the CPU cores): these are not GPU figures");
    }
    println!("cpu threads (rayon): {}", rayon::current_num_threads());
    println!();
    println!(
        "| Eikonal | groups | GPU block FIM | passes | dispatches | read-backs | relaxations per reachable cell | CPU FMM (one group) | max rel. diff |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let sizes: &[usize] = if quick {
        &[256, 512]
    } else {
        &[256, 512, 1024, 2048]
    };
    let args: Vec<String> = std::env::args().collect();
    let max_side = args
        .iter()
        .position(|a| a == "--max-side")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse::<usize>().expect("--max-side takes a number of cells"))
        .unwrap_or(usize::MAX);
    for grid in [BenchGrid::Walls, BenchGrid::Maze] {
        for &n in sizes.iter().filter(|&&n| n <= max_side) {
            let (cost, exit) = bench_grid(grid, n);
            let (t_fmm, fmm) = time(|| eikonal::solve_fmm(cost.view(), exit.view(), 1.0, Order::First));
            // One group (the exit), then four: the exit and three point goals elsewhere.
            let mut goals = vec![exit];
            let one = goals.clone();
            for (r, c) in [(0, n - 1), (n - 1, n / 2), (n / 3, n / 2 + 1)] {
                let mut g = Array2::from_elem((n, n), false);
                g[(r, c)] = true;
                goals.push(g);
            }
            for set in [&one, &goals] {
                let (t_gpu, gpu) = time(|| ctx.solve_fim(cost.view(), set, 1.0).expect("GPU solve"));
                let diff = gpu[0]
                    .phi
                    .iter()
                    .zip(fmm.phi.iter())
                    .filter(|(a, b)| a.is_finite() && b.is_finite())
                    .map(|(a, b)| (a - b).abs() / b.max(1.0))
                    .fold(0.0, f64::max);
                let c = gpu[0].counters.expect("the GPU solve reports counters");
                println!(
                    "| {n}² {} | {} | {t_gpu} | {} | {} | {} | {:.1} | {t_fmm} | {diff:.1e} |",
                    grid.name(),
                    set.len(),
                    c.passes,
                    c.dispatches,
                    c.read_backs,
                    c.relaxations_per_reachable_cell
                );
            }
        }
    }
    if let Some(&n) = sizes.iter().filter(|&&n| n <= max_side).max()
        && n <= 512
    {
        let (cost, goal) = bench_grid(BenchGrid::Walls, n);
        let (t, _) = time(|| solve_fim_cpu(cost.view(), std::slice::from_ref(&goal), 1.0).expect("twin"));
        println!();
        println!("CPU FIM twin, {n}² walls: {t}");
    }
    println!();
    println!("| Neighbour grid | GPU (on device) | GPU + read-back | CPU NeighborGrid | identical |");
    println!("|---|---|---|---|---|");
    let counts: &[usize] = if quick {
        &[10_000, 100_000]
    } else {
        &[10_000, 100_000, 1_000_000]
    };
    for &n in counts {
        // One agent per 2 m² on a square domain, bins of 2 m.
        let side = (2.0 * n as f32).sqrt();
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        let (xs, ys): (Vec<f32>, Vec<f32>) = (0..n).map(|_| (next() * side, next() * side)).unzip();
        let template = NeighborGrid::new(side, side, 2.0);
        let (t_dev, _) = time(|| ctx.rebuild_neighbor_grid(&template, &xs, &ys).expect("GPU grid"));
        let mut g = template.clone();
        let (t_read, _) = time(|| ctx.neighbor_grid(&mut g, &xs, &ys).expect("GPU grid"));
        let mut cpu = template.clone();
        let (t_cpu, _) = time(|| cpu.rebuild(&xs, &ys));
        let same = g.sorted == cpu.sorted && g.bin_start == cpu.bin_start && g.agent_bin == cpu.agent_bin;
        println!(
            "| {n} agents, {} bins | {t_dev} | {t_read} | {t_cpu} | {same} |",
            template.bins()
        );
    }
    println!();
    println!(
        "| Continuum step, walls, 4 groups, 10⁴ agents | GPU, replanning | GPU, potentials kept | CPU backend, replanning | read-back bytes per replanning step: fields + potentials → velocities | agents within 0.01 m/s of the CPU |"
    );
    println!("|---|---|---|---|---|---|");
    let sides: &[usize] = if quick { &[256] } else { &[256, 512, 1024] };
    for &n in sides.iter().filter(|&&n| n <= max_side) {
        let (scene, agents, goals) = step_scene(n, 10_000);
        // What the step read back when it returned the fields and the potentials (the
        // advection sampled the velocities on the CPU).
        let before = ctx.read_back_totals();
        ctx.continuum_step(&scene, &agents, &goals, true)
            .expect("GPU step");
        let old_bytes = ctx.read_back_totals().bytes - before.bytes;
        let mut gpu_run = ctx.continuum_run(&scene).expect("GPU run");
        let (t_gpu, gpu) = time(|| {
            ctx.continuum_velocities(&mut gpu_run, &agents, Some(&goals))
                .expect("GPU step")
        });
        let (t_kept, _) = time(|| {
            ctx.continuum_velocities(&mut gpu_run, &agents, None)
                .expect("GPU step")
        });
        let (t_cpu, cpu) = time(|| cpu_step(&scene, &agents, &goals));
        // FIM and fast marching agree to 5e-3 (tests/gpu_fields.rs); a walker on a ridge
        // between two exits may turn the other way, so the share is the figure, not the worst.
        let close = (0..agents.len())
            .filter(|&i| (gpu.vx[i] - cpu[i][0]).hypot(gpu.vy[i] - cpu[i][1]) <= 0.01)
            .count();
        let share = 100.0 * close as f64 / agents.len() as f64;
        println!(
            "| {n}² | {} | {} | {} | {old_bytes} → {} | {share:.1} % |",
            steps_per_second(&t_gpu),
            steps_per_second(&t_kept),
            steps_per_second(&t_cpu),
            gpu.read_backs.bytes
        );
    }
}

/// A timing as steps per second, with the time per step.
fn steps_per_second(t: &Timing) -> String {
    format!("{:.1} steps/s ({t})", 1.0 / t.seconds)
}

/// The continuum step of the CPU backend with whole-grid potentials: splat, speed and cost,
/// one fast-marching solve per group (in parallel), the upwind gradients and every agent's
/// walking velocity.
fn cpu_step(scene: &Scene, agents: &Agents, goals: &[Array2<bool>]) -> Vec<[f32; 2]> {
    use rayon::prelude::*;
    let f = Fields::compute(scene, agents);
    let h = scene.grid.cell_size;
    let phi = eikonal::solve_groups(f.cost.view(), goals, h, Order::First);
    let grads: Vec<_> = phi
        .par_iter()
        .map(|s| crowdfield::gradient::gradient(s.phi.view(), f.cost.view(), h))
        .collect();
    (0..agents.len())
        .into_par_iter()
        .map(|i| {
            let g = &grads[agents.group[i] as usize];
            crowdfield::gradient::velocity_at(&scene.grid, g, f.speed.view(), agents.x[i], agents.y[i])
        })
        .collect()
}

/// The walls of [`BenchGrid::Walls`] as a scene (cell 0.5 m), `agents` walkers spread uniformly
/// over the free cells walking east at 1 m/s in four groups, and their four goals: the left,
/// right, bottom and top edges.
fn step_scene(n: usize, agents: usize) -> (Scene, Agents, Vec<Array2<bool>>) {
    let mut scene = Scene::empty("bench", Grid::new(n, n, 0.5));
    scene.obstacle = bench_walls(BenchGrid::Walls, n);
    let mut state = 99u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let side = scene.grid.width() as f32;
    let mut a = Agents::default();
    while a.len() < agents {
        let (x, y) = (next() * side, next() * side);
        let (r, c) = ((y / 0.5) as usize, (x / 0.5) as usize);
        if r < n && c < n && !scene.obstacle[(r, c)] {
            let i = a.len();
            a.push(i as u32, x, y, (i % 4) as u32, 0.25, 1.3);
            a.vx[i] = 1.0;
        }
    }
    let left = Array2::from_shape_fn((n, n), |(r, c)| c == 0 && !scene.obstacle[(r, c)]);
    let right = Array2::from_shape_fn((n, n), |(r, c)| c == n - 1 && !scene.obstacle[(r, c)]);
    let bottom = Array2::from_shape_fn((n, n), |(r, c)| r == 0 && !scene.obstacle[(r, c)]);
    let top = Array2::from_shape_fn((n, n), |(r, c)| r == n - 1 && !scene.obstacle[(r, c)]);
    (scene, a, vec![left, right, bottom, top])
}
