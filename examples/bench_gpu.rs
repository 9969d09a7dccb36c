//! GPU beside CPU: the Eikonal solve at 256² … 2048² with walls, the neighbour grid at
//! 10⁴ … 10⁶ agents, and one continuum step (splat → speed → cost → potentials), naming the
//! adapter. Run with `cargo run --release --example bench_gpu [-- --quick | --max-side N]`;
//! figures go in BENCHMARKS.md. `--max-side N` drops the Eikonal grids larger than N² (2048²
//! on a software adapter takes minutes). `WGPU_ADAPTER_NAME` / `WGPU_BACKEND` pick the adapter.
//!
//! Times are wall-clock medians of `REPEATS` runs after one warm-up; a figure whose first run
//! takes longer than `SLOW_S` is that single run (marked `1 run`). GPU Eikonal times include
//! the upload, every pass and the read-back of phi; the neighbour grid is timed with and
//! without reading the arrays back.

use crowdfield::agents::Agents;
use crowdfield::eikonal::{self, Order};
use crowdfield::fields::Fields;
use crowdfield::gpu::{GpuContext, solve_fim_cpu};
use crowdfield::grid::Grid;
use crowdfield::neighbors::NeighborGrid;
use crowdfield::scene::Scene;
use ndarray::{Array2, Array3};
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

/// Four long walls across a square of `n` cells per side, each leaving a gap of an eighth of
/// the side at alternating ends.
fn walls(n: usize) -> Array2<bool> {
    let mut wall = Array2::from_elem((n, n), false);
    for k in 1..=4 {
        let c = k * n / 5;
        let gap = n / 8;
        for r in 0..n {
            let open = if k % 2 == 1 { r >= n - gap } else { r < gap };
            if !open {
                wall[(r, c)] = true;
            }
        }
    }
    wall
}

/// A square map of `n` cells per side, 1 s/m everywhere, with four long walls (each leaving a
/// gap of an eighth of the side at alternating ends) and an exit on the left edge.
fn walled(n: usize) -> (Array3<f32>, Array2<bool>) {
    let wall = walls(n);
    let mut cost = Array3::from_elem((n, n, 4), 1.0f32);
    for r in 0..n {
        for c in 0..n {
            let nb = [
                (r, c + 1),
                (r + 1, c),
                (r, c.wrapping_sub(1)),
                (r.wrapping_sub(1), c),
            ];
            for (d, (nr, nc)) in nb.into_iter().enumerate() {
                if wall[(r, c)] || (nr < n && nc < n && wall[(nr, nc)]) {
                    cost[(r, c, d)] = f32::INFINITY;
                }
            }
        }
    }
    let mut goal = Array2::from_elem((n, n), false);
    for r in n / 2 - 2..n / 2 + 2 {
        goal[(r, 0)] = true;
    }
    (cost, goal)
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
    println!("| Eikonal, walls | GPU block FIM | passes | CPU FMM | max rel. diff | CPU FIM twin |");
    println!("|---|---|---|---|---|---|");
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
    for &n in sizes.iter().filter(|&&n| n <= max_side) {
        let (cost, goal) = walled(n);
        let goals = [goal];
        let (t_gpu, gpu) = time(|| ctx.solve_fim(cost.view(), &goals, 1.0).expect("GPU solve"));
        let fmm = std::panic::catch_unwind(|| {
            time(|| eikonal::solve_fmm(cost.view(), goals[0].view(), 1.0, Order::First))
        });
        let (fmm_cell, diff_cell) = match &fmm {
            Ok((t, sol)) => {
                let diff = gpu[0]
                    .phi
                    .iter()
                    .zip(sol.phi.iter())
                    .filter(|(a, b)| a.is_finite() && b.is_finite())
                    .map(|(a, b)| (a - b).abs() / b.max(1.0))
                    .fold(0.0, f64::max);
                (t.to_string(), format!("{diff:.1e}"))
            }
            Err(_) => ("n/a (solve_fmm not available)".to_string(), "-".to_string()),
        };
        let twin = if n <= 512 {
            let (t, _) = time(|| solve_fim_cpu(cost.view(), &goals, 1.0).expect("twin"));
            t.to_string()
        } else {
            "-".to_string()
        };
        println!(
            "| {n}² | {t_gpu} | {} | {fmm_cell} | {diff_cell} | {twin} |",
            gpu[0].passes
        );
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
        "| Continuum step, walls, 2 groups | GPU splat → fields → FIM (potentials read back) | CPU fields + FMM | max rel. diff |"
    );
    println!("|---|---|---|---|");
    let steps: &[(usize, usize)] = if quick {
        &[(256, 10_000)]
    } else {
        &[(256, 10_000), (512, 100_000)]
    };
    for &(n, agents_n) in steps.iter().filter(|&&(n, _)| n <= max_side) {
        let (scene, agents, goals) = step_scene(n, agents_n);
        let (t_gpu, gpu) = time(|| {
            ctx.continuum_step(&scene, &agents, &goals, false)
                .expect("GPU step")
        });
        let (t_cpu, cpu) = time(|| {
            let f = Fields::compute(&scene, &agents);
            eikonal::solve_groups(f.cost.view(), &goals, scene.grid.cell_size, Order::First)
        });
        let diff = gpu
            .potentials
            .iter()
            .zip(&cpu)
            .flat_map(|(g, c)| g.phi.iter().zip(c.phi.iter()))
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .map(|(a, b)| (a - b).abs() / b.max(1.0))
            .fold(0.0, f64::max);
        println!("| {n}², {agents_n} agents | {t_gpu} | {t_cpu} | {diff:.1e} |");
    }
}

/// The walled map of [`walled`] as a scene (cell 0.5 m), `agents` walkers spread uniformly
/// over the free cells walking east at 1 m/s, and two goals: the left and the right edge.
fn step_scene(n: usize, agents: usize) -> (Scene, Agents, Vec<Array2<bool>>) {
    let mut scene = Scene::empty("bench", Grid::new(n, n, 0.5));
    scene.obstacle = walls(n);
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
            a.push(i as u32, x, y, 0, 0.25, 1.3);
            a.vx[i] = 1.0;
        }
    }
    let left = Array2::from_shape_fn((n, n), |(r, c)| c == 0 && !scene.obstacle[(r, c)]);
    let right = Array2::from_shape_fn((n, n), |(r, c)| c == n - 1 && !scene.obstacle[(r, c)]);
    (scene, a, vec![left, right])
}
