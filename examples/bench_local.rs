//! Scaling benchmark of the local layer, in the shape of SPEC §5's boids table: steps per
//! second against agent count for all-pairs O(N²) boids (the seed's loop) and the binned
//! layer (boids, ORCA, boids+ORCA), each on CPU single and CPU multi, and binned boids+ORCA on
//! the GPU backend (the seed's third column; the adapter's name is printed with the table).
//!
//! `cargo run --release --example bench_local [-- --max 1000000 --density 0.5 --png bench/local.png]`
//!
//! On a machine with a real GPU (the GPU series alone is `--gpu-only`; `WGPU_ADAPTER_NAME`
//! picks an adapter by name, `WGPU_BACKEND=vulkan` a backend):
//! `cargo run --release --example bench_local -- --max 1000000 --gpu-only --png bench/local_gpu.png`
//!
//! `--profile N` runs only binned boids+ORCA on CPU multi with N agents for about ten
//! seconds and prints steps/s with the time per pass (bins, velocities, move), for `perf`;
//! `--profile N --gpu` does the same on the GPU backend; `--mode orca` (or `none`, `boids`)
//! profiles another mode of the layer on the same crowd, to see what each part costs.
//! `--checksum N` runs 20 steps of it and prints a hash of every agent's position and
//! velocity bits, to check that a change of the code leaves the results bit for bit.
//!
//! Prints a markdown table and writes a log-log PNG plot of steps/s against agents (one line
//! per series, colours listed in the table header). Agents are spread uniformly at the given
//! density (persons/m²) in a square obstacle-free domain, with random headings at 1 m/s and
//! a preferred velocity of 1.2 m/s toward a random direction.

use crowdfield::agents::Agents;
use crowdfield::io::write_bytes_atomic;
use crowdfield::local::{LocalBackend, LocalLayer, LocalMode};
use crowdfield::names::Named;
use crowdfield::params::BoidsParams;
use crowdfield::scene::Scene;
use crowdfield::vec2::V2;
use rayon::prelude::*;
use std::time::Instant;

/// Each measurement runs at least this many steps...
const MIN_STEPS: usize = 3;
/// ...and at least this long (s), so small sizes are not dominated by timer noise.
const MIN_SECONDS: f64 = 1.0;
/// All-pairs runs are skipped where one step would exceed this (s), estimated from the last
/// size measured: the seed's O(N²) loop at 10⁵+ agents takes minutes.
const ALL_PAIRS_MAX_STEP_SECONDS: f64 = 3.0;

const SIZES: [usize; 6] = [100, 1_000, 10_000, 20_000, 100_000, 1_000_000];

struct Series {
    name: &'static str,
    color: [u8; 3],
    points: Vec<(usize, f64)>,
}

fn setup(n: usize, density: f32) -> (Scene, Agents, Vec<[f32; 2]>) {
    crowdfield::local::workload::open_crowd(n, density)
}

/// The all-pairs loop: every agent scans every other agent (boids rules, same maths as the
/// binned kernel), then moves.
fn all_pairs_step(a: &mut Agents, p: &BoidsParams, dt: f32, multi: bool) {
    let n = a.len();
    let (r_coh2, r_sep2, r_al2) = (
        (p.r_coh * p.r_coh) as f32,
        (p.r_sep * p.r_sep) as f32,
        (p.r_align * p.r_align) as f32,
    );
    let one = |i: usize| -> V2 {
        let me = V2::new(a.x[i], a.y[i]);
        let v = V2::new(a.vx[i], a.vy[i]);
        let (mut sp, mut nc, mut so, mut ns, mut sv, mut na) = (V2::ZERO, 0, V2::ZERO, 0, V2::ZERO, 0);
        for j in 0..n {
            if j == i {
                continue;
            }
            let o = V2::new(a.x[j], a.y[j]);
            let d = o - me;
            let d2 = d.len_sq();
            if d2 < r_coh2 {
                sp = sp + o;
                nc += 1;
            }
            if d2 < r_sep2 {
                so = so + d;
                ns += 1;
            }
            if d2 < r_al2 {
                sv = sv + V2::new(a.vx[j], a.vy[j]);
                na += 1;
            }
        }
        let mut s = V2::ZERO;
        if nc > 0 {
            s = s + (sp * (1.0 / nc as f32) - me).normalize_or_zero() * p.k_coh as f32;
        }
        if ns > 0 {
            s = s - (so * (1.0 / ns as f32)).normalize_or_zero() * p.k_sep as f32;
        }
        if na > 0 {
            s = s + (sv * (1.0 / na as f32) - v).normalize_or_zero() * p.k_align as f32;
        }
        (v + s.clamp_len(p.a_max as f32) * dt).clamp_len(p.v_max as f32)
    };
    let new_v: Vec<V2> = if multi {
        (0..n).into_par_iter().map(one).collect()
    } else {
        (0..n).map(one).collect()
    };
    for (i, v) in new_v.into_iter().enumerate() {
        a.vx[i] = v.x;
        a.vy[i] = v.y;
        a.x[i] += v.x * dt;
        a.y[i] += v.y * dt;
    }
}

/// Untimed steps of the binned layer (the workload's).
const WARM_UP_STEPS: usize = crowdfield::local::workload::WARM_UP_STEPS;

/// Steps per second of `step`, run at least MIN_STEPS times and MIN_SECONDS long, after
/// `warm_up` untimed steps.
fn measure(warm_up: usize, mut step: impl FnMut()) -> f64 {
    for _ in 0..warm_up.max(1) {
        step();
    }
    let t = Instant::now();
    let mut k = 0;
    while k < MIN_STEPS || t.elapsed().as_secs_f64() < MIN_SECONDS {
        step();
        k += 1;
    }
    k as f64 / t.elapsed().as_secs_f64()
}

/// `--profile N [--gpu] [--mode M]`: binned boids+ORCA (or `--mode` none, boids, orca), CPU
/// multi (or the GPU backend), N agents, about ten seconds; steps/s and the mean time per pass (on the GPU: bins = binning, read-back of
/// the grid and upload; velocities = the velocity shaders; move = the move shader, read-back
/// and unpacking).
fn profile(n: usize, density: f32, dt: f32, backend: LocalBackend, mode: &str) -> anyhow::Result<()> {
    let (scene, mut a, pref) = setup(n, density);
    let mut layer = crowdfield::gpu::open_local_layer(LocalMode::parse(mode)?, backend)?;
    for _ in 0..WARM_UP_STEPS {
        layer.step(&scene, &mut a, &pref, dt)?;
    }
    let (mut bins, mut vel, mut mv, mut steps) = (0.0, 0.0, 0.0, 0usize);
    let t = Instant::now();
    while t.elapsed().as_secs_f64() < 10.0 {
        let s = layer.step(&scene, &mut a, &pref, dt)?;
        (bins, vel, mv) = (
            bins + s.seconds_bins,
            vel + s.seconds_velocity,
            mv + s.seconds_move,
        );
        steps += 1;
    }
    let k = steps as f64;
    println!(
        "{n} agents, binned {mode}, {}: {:.2} steps/s; ms per step: bins {:.1}, velocities {:.1}, move {:.1}",
        layer.backend_description(),
        k / t.elapsed().as_secs_f64(),
        1e3 * bins / k,
        1e3 * vel / k,
        1e3 * mv / k
    );
    Ok(())
}

/// `--checksum N`: 20 steps of binned boids+ORCA, CPU multi, N agents; a hash (FNV-1a) of
/// the bits of every position and velocity.
fn checksum(n: usize, density: f32, dt: f32) -> anyhow::Result<()> {
    let (scene, mut a, pref) = setup(n, density);
    let mut layer = LocalLayer::new(LocalMode::BoidsOrca, LocalBackend::CpuMulti)?;
    let mut infeasible = 0;
    for _ in 0..20 {
        infeasible += layer.step(&scene, &mut a, &pref, dt)?.infeasible;
    }
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for col in [&a.x, &a.y, &a.vx, &a.vy] {
        for v in col.iter() {
            h = (h ^ u64::from(v.to_bits())).wrapping_mul(0x100_0000_01b3);
        }
    }
    println!(
        "{n} agents, 20 steps of binned boids+ORCA: checksum {h:016x}, {infeasible} infeasible programs"
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let max: usize = arg("--max").map_or(Ok(1_000_000), |s| s.parse())?;
    let density: f32 = arg("--density").map_or(Ok(0.5), |s| s.parse())?;
    let png = arg("--png").unwrap_or_else(|| "bench/local.png".into());
    let single_pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let dt = 0.1;
    if let Some(n) = arg("--checksum") {
        return checksum(n.parse()?, density, dt);
    }
    if let Some(n) = arg("--profile") {
        let backend = if args.iter().any(|a| a == "--gpu") {
            LocalBackend::Gpu
        } else {
            LocalBackend::CpuMulti
        };
        let mode = arg("--mode").unwrap_or_else(|| "boids+orca".into());
        return profile(n.parse()?, density, dt, backend, &mode);
    }

    let mut series = vec![
        Series {
            name: "all-pairs boids, CPU single",
            color: [160, 160, 160],
            points: vec![],
        },
        Series {
            name: "all-pairs boids, CPU multi",
            color: [60, 60, 60],
            points: vec![],
        },
        Series {
            name: "binned boids, CPU single",
            color: [120, 170, 255],
            points: vec![],
        },
        Series {
            name: "binned boids, CPU multi",
            color: [0, 70, 220],
            points: vec![],
        },
        Series {
            name: "binned ORCA, CPU single",
            color: [255, 170, 120],
            points: vec![],
        },
        Series {
            name: "binned ORCA, CPU multi",
            color: [220, 80, 0],
            points: vec![],
        },
        Series {
            name: "binned boids+ORCA, CPU single",
            color: [140, 220, 140],
            points: vec![],
        },
        Series {
            name: "binned boids+ORCA, CPU multi",
            color: [0, 150, 0],
            points: vec![],
        },
        Series {
            name: "binned boids+ORCA, GPU",
            color: [170, 0, 170],
            points: vec![],
        },
    ];
    let gpu_only = args.iter().any(|a| a == "--gpu-only");
    let gpu = match crowdfield::gpu::GpuContext::new() {
        Ok(c) => {
            eprintln!("GPU series on {}", c.adapter());
            Some(std::sync::Arc::new(c))
        }
        Err(e) => {
            eprintln!("no GPU series: {e}");
            None
        }
    };
    let mut last_all_pairs = [None::<(usize, f64)>; 2];
    for &n in SIZES.iter().filter(|&&n| n <= max) {
        let (scene, agents, pref) = setup(n, density);
        eprintln!("{n} agents, domain {:.0} m square", scene.grid.width());
        if let Some(ctx) = &gpu {
            let mut a = agents.clone();
            let mut layer = LocalLayer::with_gpu(LocalMode::BoidsOrca, ctx.clone())?;
            let sps = measure(WARM_UP_STEPS, || {
                layer.step(&scene, &mut a, &pref, dt).unwrap();
            });
            series[8].points.push((n, sps));
        }
        if gpu_only {
            continue;
        }
        for (s, multi) in [(0usize, false), (1, true)] {
            let too_slow = last_all_pairs[s].is_some_and(|(m, sps)| {
                let ratio = (n as f64 / m as f64).powi(2);
                ratio / sps > ALL_PAIRS_MAX_STEP_SECONDS
            });
            if too_slow {
                continue;
            }
            let mut a = agents.clone();
            let p = BoidsParams::default();
            let sps = if multi {
                measure(1, || all_pairs_step(&mut a, &p, dt, true))
            } else {
                single_pool.install(|| measure(1, || all_pairs_step(&mut a, &p, dt, false)))
            };
            last_all_pairs[s] = Some((n, sps));
            series[s].points.push((n, sps));
        }
        let layered = [
            (2usize, None, LocalBackend::CpuSingle),
            (3, None, LocalBackend::CpuMulti),
            (4, Some(LocalMode::Orca), LocalBackend::CpuSingle),
            (5, Some(LocalMode::Orca), LocalBackend::CpuMulti),
            (6, Some(LocalMode::BoidsOrca), LocalBackend::CpuSingle),
            (7, Some(LocalMode::BoidsOrca), LocalBackend::CpuMulti),
        ];
        for (s, mode, backend) in layered {
            let mut a = agents.clone();
            let mut run = || match mode {
                None => {
                    let mut layer = LocalLayer::new(LocalMode::Boids, backend).unwrap();
                    measure(1, || {
                        layer.flock(&scene, &mut a, dt).unwrap();
                    })
                }
                Some(m) => {
                    let mut layer = LocalLayer::new(m, backend).unwrap();
                    measure(WARM_UP_STEPS, || {
                        layer.step(&scene, &mut a, &pref, dt).unwrap();
                    })
                }
            };
            let sps = if backend == LocalBackend::CpuSingle {
                single_pool.install(run)
            } else {
                run()
            };
            series[s].points.push((n, sps));
        }
    }

    // Markdown table.
    let threads = rayon::current_num_threads();
    let adapter = gpu
        .as_ref()
        .map_or("none".to_string(), |c| c.adapter().to_string());
    println!(
        "Steps per second (CPU multi = {threads} rayon threads; GPU: {adapter}; density {density} agents/m²):\n"
    );
    print!("| agents |");
    for s in &series {
        print!(" {} |", s.name);
    }
    println!();
    print!("|---:|");
    for _ in &series {
        print!("---:|");
    }
    println!();
    for &n in SIZES.iter().filter(|&&n| n <= max) {
        print!("| {n} |");
        for s in &series {
            match s.points.iter().find(|p| p.0 == n) {
                Some(&(_, sps)) => print!(" {} |", fmt_sps(sps)),
                None => print!(" — |"),
            }
        }
        println!();
    }
    println!(
        "\nPlot colours: {}",
        series
            .iter()
            .map(|s| format!("{} rgb{:?}", s.name, s.color))
            .collect::<Vec<_>>()
            .join("; ")
    );
    write_plot(&png, &series)?;
    eprintln!("wrote {png}");
    Ok(())
}

fn fmt_sps(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.0}")
    } else if s >= 1.0 {
        format!("{s:.1}")
    } else {
        format!("{s:.3}")
    }
}

/// A log-log plot: x = agents (10¹..10⁷), y = steps/s (10⁻³..10⁵), grid lines at each decade,
/// tick labels, axis titles, the targets as red crosses and a legend on the right.
fn write_plot(path: &str, series: &[Series]) -> anyhow::Result<()> {
    use crowdfield::export::text::{draw_text, text_width};
    // Plot area inside the image: left margin for the y labels, right for the legend.
    let (w, h) = (1200u32, 640u32);
    let (left, right, top, bottom) = (90.0f64, 880.0f64, 60.0f64, 560.0f64);
    let mut img = image::RgbaImage::from_pixel(w, h, image::Rgba([255, 255, 255, 255]));
    let (x0, x1, y0, y1) = (1.0f64, 7.0f64, -3.0f64, 5.0f64);
    let to_px = |n: f64, s: f64| -> (f64, f64) {
        let fx = (n.log10() - x0) / (x1 - x0);
        let fy = (s.log10() - y0) / (y1 - y0);
        (left + fx * (right - left), bottom - fy * (bottom - top))
    };
    let black = [0u8, 0, 0];
    let grey = image::Rgba([225, 225, 225, 255]);
    let label = 15.0f32;
    for d in x0 as i32..=x1 as i32 {
        let (x, _) = to_px(10f64.powi(d), 1.0);
        line(&mut img, (x, top), (x, bottom), grey, 1);
        let t = format!("1e{d}");
        draw_text(
            &mut img,
            x as f32 - text_width(&t, label) / 2.0,
            bottom as f32 + 8.0,
            label,
            &t,
            black,
        );
    }
    for d in y0 as i32..=y1 as i32 {
        let (_, y) = to_px(10.0, 10f64.powi(d));
        let c = if d == 0 {
            image::Rgba([150, 150, 150, 255])
        } else {
            grey
        };
        line(&mut img, (left, y), (right, y), c, 1);
        let t = format!("1e{d}");
        draw_text(
            &mut img,
            left as f32 - 10.0 - text_width(&t, label),
            y as f32 - 9.0,
            label,
            &t,
            black,
        );
    }
    let axis = image::Rgba([0, 0, 0, 255]);
    line(&mut img, (left, bottom), (right, bottom), axis, 1);
    line(&mut img, (left, top), (left, bottom), axis, 1);
    let title = "Local layer scaling: steps per second against agents (log-log)";
    draw_text(&mut img, left as f32, 18.0, 22.0, title, black);
    let xt = "agents";
    draw_text(
        &mut img,
        ((left + right) / 2.0) as f32 - text_width(xt, 16.0) / 2.0,
        bottom as f32 + 34.0,
        16.0,
        xt,
        black,
    );
    draw_text(&mut img, 8.0, top as f32 - 30.0, 16.0, "steps/s", black);
    // The targets: 5 steps/s at 10^6 agents, 100 steps/s at 2x10^4 (100x the seed's 1 FPS).
    let red = image::Rgba([200, 0, 0, 255]);
    for (n, s) in [(1e6, 5.0), (2e4, 100.0)] {
        let (x, y) = to_px(n, s);
        line(&mut img, (x - 8.0, y), (x + 8.0, y), red, 2);
        line(&mut img, (x, y - 8.0), (x, y + 8.0), red, 2);
    }
    for s in series {
        let c = image::Rgba([s.color[0], s.color[1], s.color[2], 255]);
        for w2 in s.points.windows(2) {
            line(
                &mut img,
                to_px(w2[0].0 as f64, w2[0].1),
                to_px(w2[1].0 as f64, w2[1].1),
                c,
                3,
            );
        }
        for &(n, sps) in &s.points {
            let (x, y) = to_px(n as f64, sps);
            for dy in -3..=3 {
                for dx in -3..=3 {
                    put(&mut img, x + dx as f64, y + dy as f64, c);
                }
            }
        }
    }
    // Legend: one row per series, then the target marker.
    let (lx, mut ly) = (right as f32 + 24.0, top as f32);
    for s in series {
        let c = image::Rgba([s.color[0], s.color[1], s.color[2], 255]);
        line(
            &mut img,
            (lx as f64, ly as f64 + 9.0),
            (lx as f64 + 28.0, ly as f64 + 9.0),
            c,
            3,
        );
        draw_text(&mut img, lx + 36.0, ly, 14.0, s.name, black);
        ly += 24.0;
    }
    let (cx, cy) = (lx as f64 + 14.0, ly as f64 + 9.0);
    line(&mut img, (cx - 8.0, cy), (cx + 8.0, cy), red, 2);
    line(&mut img, (cx, cy - 8.0), (cx, cy + 8.0), red, 2);
    draw_text(&mut img, lx + 36.0, ly, 14.0, "targets", black);
    draw_text(
        &mut img,
        lx + 36.0,
        ly + 18.0,
        13.0,
        "(5/s at 1e6, 100/s at 2e4)",
        [90, 90, 90],
    );
    let mut bytes = Vec::new();
    image::DynamicImage::ImageRgba8(img)
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)?;
    write_bytes_atomic(std::path::Path::new(path), &bytes)?;
    Ok(())
}

fn put(img: &mut image::RgbaImage, x: f64, y: f64, c: image::Rgba<u8>) {
    if x >= 0.0 && y >= 0.0 && (x as u32) < img.width() && (y as u32) < img.height() {
        img.put_pixel(x as u32, y as u32, c);
    }
}

fn line(img: &mut image::RgbaImage, a: (f64, f64), b: (f64, f64), c: image::Rgba<u8>, width: i32) {
    let steps = ((b.0 - a.0).abs().max((b.1 - a.1).abs()).ceil() as usize).max(1);
    for k in 0..=steps {
        let t = k as f64 / steps as f64;
        let (x, y) = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
        for d in -(width / 2)..=(width / 2) {
            put(img, x + d as f64, y, c);
            put(img, x, y + d as f64, c);
        }
    }
}
