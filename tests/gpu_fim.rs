//! The GPU block FIM against its CPU twin, against exact solutions (plane waves, anisotropic
//! lines), and on invariants (symmetry, walls, unreachable cells, several groups at once).

mod gpu_support;

use crowdfield::eikonal::grids::{BenchGrid, bench_grid, wall_off};
use crowdfield::gpu::{self, GpuContext, solve_fim_cpu, solve_fim_cpu_tiled};
use gpu_support::{Rng, gpu};
use ndarray::{Array2, Array3};

/// Relative tolerance between the GPU and its f32 twin: the same arithmetic, up to the device's
/// sqrt/division rounding (a few ulps, compounded along a path).
const TWIN_REL: f64 = 2e-5;

fn uniform(rows: usize, cols: usize, c: f32) -> Array3<f32> {
    Array3::from_elem((rows, cols, 4), c)
}

/// Blocks every face into and out of obstacle cells.
fn with_walls(mut cost: Array3<f32>, wall: &Array2<bool>) -> Array3<f32> {
    wall_off(&mut cost, wall);
    cost
}

fn random_case(seed: u64, rows: usize, cols: usize) -> (Array3<f32>, Array2<bool>) {
    let mut rng = Rng(seed);
    let mut cost = Array3::zeros((rows, cols, 4));
    cost.mapv_inplace(|_: f32| 0.5 + 2.0 * rng.next_f32());
    let wall = Array2::from_shape_fn((rows, cols), |_| rng.next_f32() < 0.2);
    (with_walls(cost, &wall), wall)
}

fn assert_close(a: &Array2<f64>, b: &Array2<f64>, rel: f64, what: &str) {
    for ((idx, &x), &y) in a.indexed_iter().zip(b.iter()) {
        assert!(!x.is_nan() && !y.is_nan(), "{what}: NaN at {idx:?}");
        if x.is_infinite() || y.is_infinite() {
            assert_eq!(x, y, "{what}: reachability differs at {idx:?}");
        } else {
            assert!(
                (x - y).abs() <= rel * x.abs().max(1.0),
                "{what}: {x} vs {y} at {idx:?}"
            );
        }
    }
}

#[test]
fn gpu_matches_cpu_twin_on_random_fields_with_walls() {
    let Some(ctx) = gpu() else { return };
    // The last case's costs (144,000 floats) go up in several parallel slices.
    for (seed, rows, cols) in [(1, 37, 53), (2, 64, 64), (3, 100, 9), (4, 1, 40), (5, 200, 180)] {
        let (cost, wall) = random_case(seed, rows, cols);
        let mut goal = Array2::from_elem((rows, cols), false);
        goal[(rows / 2, cols / 3)] = true;
        goal[(0, cols - 1)] = true;
        let goals = vec![goal];
        let g = ctx.solve_fim(cost.view(), &goals, 0.5).unwrap();
        let t = solve_fim_cpu_tiled(cost.view(), &goals, 0.5, ctx.fim_tile()).unwrap();
        assert_close(&g[0].phi, &t[0].phi, TWIN_REL, &format!("seed {seed}"));
        assert_eq!(g[0].unreachable, t[0].unreachable);
        assert!(
            g[0].unreachable >= wall.iter().filter(|&&w| w).count() - 2,
            "walls are unreachable"
        );
        assert!(
            g[0].passes > 0 && g[0].passes.abs_diff(t[0].passes) <= 2,
            "{} vs {}",
            g[0].passes,
            t[0].passes
        );
        assert_eq!(g[0].solver, "fim-gpu");
    }
}

#[test]
fn plane_wave_is_exact_in_both_directions() {
    let Some(ctx) = gpu() else { return };
    let (rows, cols, h) = (20, 45, 0.25);
    // Anisotropic: walking west costs 2 s/m, east 0.5 s/m.
    let mut cost = uniform(rows, cols, 1.0);
    cost.slice_mut(ndarray::s![.., .., 2]).fill(2.0);
    cost.slice_mut(ndarray::s![.., .., 0]).fill(0.5);
    let mut west = Array2::from_elem((rows, cols), false);
    west.column_mut(0).fill(true);
    let mut east = Array2::from_elem((rows, cols), false);
    east.column_mut(cols - 1).fill(true);
    let sols = ctx.solve_fim(cost.view(), &[west, east], h).unwrap();
    for r in 0..rows {
        for c in 0..cols {
            let to_west = c as f64 * h * 2.0;
            let to_east = (cols - 1 - c) as f64 * h * 0.5;
            assert!(
                (sols[0].phi[(r, c)] - to_west).abs() <= 1e-5 * to_west.max(1.0),
                "west ({r},{c})"
            );
            assert!(
                (sols[1].phi[(r, c)] - to_east).abs() <= 1e-5 * to_east.max(1.0),
                "east ({r},{c})"
            );
        }
    }
}

#[test]
fn point_source_is_symmetric_and_between_euclid_and_manhattan() {
    let Some(ctx) = gpu() else { return };
    let n = 41;
    let mut goal = Array2::from_elem((n, n), false);
    goal[(20, 20)] = true;
    let sol = &ctx.solve_fim(uniform(n, n, 1.0).view(), &[goal], 1.0).unwrap()[0];
    let phi = &sol.phi;
    for r in 0..n {
        for c in 0..n {
            let v = phi[(r, c)];
            assert!(
                (v - phi[(c, r)]).abs() <= 1e-5 * v.max(1.0),
                "transpose ({r},{c})"
            );
            assert!(
                (v - phi[(n - 1 - r, c)]).abs() <= 1e-5 * v.max(1.0),
                "mirror ({r},{c})"
            );
            let (dr, dc) = ((r as f64 - 20.0).abs(), (c as f64 - 20.0).abs());
            let euclid = (dr * dr + dc * dc).sqrt();
            assert!(
                v >= euclid * (1.0 - 1e-5) && v <= dr + dc + 1e-4,
                "({r},{c}): {v}"
            );
            if dr == 0.0 || dc == 0.0 {
                assert!((v - euclid).abs() <= 1e-4, "axis ({r},{c}): {v} vs {euclid}");
            }
        }
    }
    // The first-order update one diagonal step out: 2 (phi - 1)^2 = 1.
    assert!((phi[(21, 21)] - (1.0 + 0.5f64.sqrt())).abs() < 1e-5);
    assert_eq!(sol.unreachable, 0);
}

#[test]
fn walls_block_and_enclosed_cells_stay_infinite() {
    let Some(ctx) = gpu() else { return };
    let (rows, cols) = (30, 30);
    let mut wall = Array2::from_elem((rows, cols), false);
    // A wall across x = 15 with a gap at the top, and a closed box around (5..8, 5..8).
    for r in 0..rows - 3 {
        wall[(r, 15)] = true;
    }
    for i in 4..9 {
        wall[(4, i)] = true;
        wall[(8, i)] = true;
        wall[(i, 4)] = true;
        wall[(i, 8)] = true;
    }
    let cost = with_walls(uniform(rows, cols, 1.0), &wall);
    let mut goal = Array2::from_elem((rows, cols), false);
    goal[(0, 20)] = true;
    let sol = &ctx
        .solve_fim(cost.view(), std::slice::from_ref(&goal), 1.0)
        .unwrap()[0];
    let twin = &solve_fim_cpu(cost.view(), &[goal], 1.0).unwrap()[0];
    assert_close(&sol.phi, &twin.phi, TWIN_REL, "walls");
    for r in 5..8 {
        for c in 5..8 {
            assert!(sol.phi[(r, c)].is_infinite(), "inside the box ({r},{c})");
        }
    }
    let walls = wall.iter().filter(|&&w| w).count();
    assert_eq!(sol.unreachable, walls + 9);
    assert!(sol.phi.iter().all(|v| !v.is_nan()));
    // Across the wall from the goal the path goes round through the gap at the top: at least
    // up to row 27 and back down.
    assert!(sol.phi[(0, 10)] >= 54.0, "{}", sol.phi[(0, 10)]);
}

#[test]
fn groups_in_one_submission_match_separate_solves() {
    let Some(ctx) = gpu() else { return };
    let (cost, _) = random_case(7, 40, 50);
    let goals: Vec<Array2<bool>> = (0..3)
        .map(|k| Array2::from_shape_fn((40, 50), |(r, c)| r == 5 + 10 * k && c < 10 + 5 * k))
        .collect();
    let together = ctx.solve_fim(cost.view(), &goals, 1.0).unwrap();
    assert_eq!(together.len(), 3);
    for (k, g) in goals.iter().enumerate() {
        let alone = ctx.solve_fim(cost.view(), std::slice::from_ref(g), 1.0).unwrap();
        assert_close(&together[k].phi, &alone[0].phi, 0.0, &format!("group {k}"));
    }
}

#[test]
fn buffers_are_reused_across_sizes() {
    let Some(ctx) = gpu() else { return };
    for &(rows, cols) in &[(64, 64), (16, 24), (80, 70), (16, 24)] {
        let mut goal = Array2::from_elem((rows, cols), false);
        goal[(0, 0)] = true;
        let sol = &ctx
            .solve_fim(uniform(rows, cols, 1.0).view(), &[goal], 1.0)
            .unwrap()[0];
        assert_eq!(sol.phi[(0, cols - 1)], (cols - 1) as f64);
        assert_eq!(sol.phi[(rows - 1, 0)], (rows - 1) as f64);
    }
}

#[test]
fn bad_shapes_are_errors_not_panics() {
    let Some(ctx) = gpu() else { return };
    let goal = Array2::from_elem((5, 6), false);
    let e = ctx
        .solve_fim(uniform(5, 7, 1.0).view(), &[goal], 1.0)
        .unwrap_err();
    assert!(e.to_string().contains("goals[0]"), "{e}");
    let e = ctx
        .solve_fim(Array3::zeros((5, 6, 3)).view(), &[], 1.0)
        .unwrap_err();
    assert!(e.to_string().contains("cost"), "{e}");
}

#[test]
fn no_goal_leaves_everything_unreachable() {
    let Some(ctx) = gpu() else { return };
    let sol = &ctx
        .solve_fim(
            uniform(9, 9, 1.0).view(),
            &[Array2::from_elem((9, 9), false)],
            1.0,
        )
        .unwrap()[0];
    assert_eq!(sol.unreachable, 81);
}

#[test]
fn backend_gpu_reports_the_adapter() {
    let Some(ctx) = gpu() else { return };
    let mut goal = Array2::from_elem((8, 8), false);
    goal[(0, 0)] = true;
    let (sols, used) = crowdfield::plan::solve_eikonal(
        gpu::Backend::Gpu,
        Some(ctx),
        uniform(8, 8, 1.0).view(),
        &[goal],
        1.0,
        crowdfield::eikonal::Order::First,
    )
    .unwrap();
    assert!(used.contains(&ctx.adapter().name), "{used}");
    assert_eq!(sols[0].phi[(7, 0)], 7.0);
}

/// Relative tolerance between the f32 FIM (GPU or twin) and the f64 fast marching: the same
/// discrete update, so the difference is f32 rounding accumulated along the path.
const FMM_REL: f64 = 2e-5;

#[test]
fn twin_and_gpu_agree_with_fast_marching_on_random_fields_with_walls() {
    for (seed, rows, cols) in [(11, 48, 64), (12, 64, 31), (13, 90, 90)] {
        let (cost, _) = random_case(seed, rows, cols);
        let mut goal = Array2::from_elem((rows, cols), false);
        goal[(rows / 3, cols / 2)] = true;
        goal[(rows - 1, 0)] = true;
        let fmm =
            crowdfield::eikonal::solve_fmm(cost.view(), goal.view(), 0.5, crowdfield::eikonal::Order::First);
        let goals = vec![goal];
        let twin = solve_fim_cpu(cost.view(), &goals, 0.5).unwrap();
        assert_close(
            &twin[0].phi,
            &fmm.phi,
            FMM_REL,
            &format!("twin vs fmm, seed {seed}"),
        );
        assert_eq!(twin[0].unreachable, fmm.unreachable);
        if let Some(ctx) = gpu() {
            let g = ctx.solve_fim(cost.view(), &goals, 0.5).unwrap();
            assert_close(&g[0].phi, &fmm.phi, FMM_REL, &format!("gpu vs fmm, seed {seed}"));
        }
    }
}

/// `--backend auto` never picks a software rasteriser (it would run every pass on the CPU,
/// far slower than the CPU solvers): with only lavapipe present (CI) `Auto` solves on the CPU
/// and says why; with a hardware GPU it takes that one. The grid is 512², the smallest that
/// `Auto` sends to a GPU at all.
#[test]
fn auto_passes_over_software_adapters() {
    let Some(any) = gpu() else { return };
    let n = 512;
    assert_eq!(n * n, crowdfield::plan::AUTO_GPU_MIN_CELLS);
    let cost = uniform(n, n, 1.0);
    let mut goal = Array2::from_elem((n, n), false);
    goal[(4, 4)] = true;
    let (sols, used) = crowdfield::plan::solve_eikonal(
        gpu::Backend::Auto,
        None,
        cost.view(),
        std::slice::from_ref(&goal),
        1.0,
        crowdfield::eikonal::Order::First,
    )
    .expect("auto always solves");
    assert_eq!(sols[0].phi[(4, 8)], 4.0, "one solve, either backend");
    if std::env::var_os("WGPU_ADAPTER_NAME").is_some() {
        return; // a named adapter is taken even when it is a software one
    }
    match gpu::GpuContext::for_auto() {
        Ok(ctx) => {
            assert!(!ctx.adapter().is_software(), "{}", ctx.adapter());
            assert!(used.starts_with("gpu:"), "{used}");
        }
        Err(e) => {
            assert!(any.adapter().is_software(), "{}", any.adapter());
            assert!(e.to_string().contains("software"), "{e}");
            assert!(used.starts_with("cpu:") && used.contains("software"), "{used}");
        }
    }
}

/// `solve_eikonal_speed` (what `crowdfield eikonal` calls) gives `solve_eikonal`'s answers on
/// the cost `1 / speed`: bit for bit on the CPU (one goal: written over the speeds' memory;
/// several: from a view), within the f32 tolerance on the GPU, and `Auto` falls back to the
/// CPU with the speeds intact after passing over a software adapter.
#[test]
fn solving_from_speeds_matches_solving_from_the_cost() {
    use crowdfield::eikonal::{Order, cell_cost_from_speed, isotropic};
    let (rows, cols) = (40, 52);
    let speed = Array2::from_shape_fn((rows, cols), |(r, c)| {
        if c == 20 && r > 5 {
            0.0
        } else {
            0.5 + ((r * 7 + c * 3) % 11) as f64 / 5.0
        }
    });
    let cost = cell_cost_from_speed(speed.view());
    let mut a = Array2::from_elem((rows, cols), false);
    a[(2, 3)] = true;
    let mut b = Array2::from_elem((rows, cols), false);
    b[(30, 45)] = true;
    let cases: [Vec<Array2<bool>>; 2] = [vec![a.clone()], vec![a, b]];
    for goals in &cases {
        for order in [Order::First, Order::Second] {
            let (want, _) = crowdfield::plan::solve_eikonal(
                gpu::Backend::Cpu,
                None,
                isotropic(cost.view()),
                goals,
                0.5,
                order,
            )
            .unwrap();
            let (got, used) = crowdfield::plan::solve_eikonal_speed(
                gpu::Backend::Cpu,
                None,
                speed.clone(),
                goals,
                0.5,
                order,
            )
            .unwrap();
            assert!(used.starts_with("cpu: fast marching"), "{used}");
            assert_eq!(
                (want.len(), got.len()),
                (goals.len(), goals.len()),
                "one field per goal"
            );
            for (w, g) in want.iter().zip(&got) {
                assert_eq!(w.unreachable, g.unreachable);
                assert!(
                    w.phi
                        .iter()
                        .zip(g.phi.iter())
                        .all(|(x, y)| x.to_bits() == y.to_bits())
                );
            }
            let (auto, used) = crowdfield::plan::solve_eikonal_speed(
                gpu::Backend::Auto,
                None,
                speed.clone(),
                goals,
                0.5,
                order,
            )
            .unwrap();
            assert_eq!(auto.len(), goals.len(), "{used}");
            if used.starts_with("cpu:") {
                for (w, g) in want.iter().zip(&auto) {
                    assert!(
                        w.phi
                            .iter()
                            .zip(g.phi.iter())
                            .all(|(x, y)| x.to_bits() == y.to_bits()),
                        "{used}"
                    );
                }
            }
        }
        if let Some(ctx) = gpu() {
            let (want, _) = crowdfield::plan::solve_eikonal(
                gpu::Backend::Gpu,
                Some(ctx),
                isotropic(cost.view()),
                goals,
                0.5,
                Order::First,
            )
            .unwrap();
            let (got, used) = crowdfield::plan::solve_eikonal_speed(
                gpu::Backend::Gpu,
                Some(ctx),
                speed.clone(),
                goals,
                0.5,
                Order::First,
            )
            .unwrap();
            assert!(used.starts_with("gpu:"), "{used}");
            assert_eq!(
                (want.len(), got.len()),
                (goals.len(), goals.len()),
                "one field per goal"
            );
            for (w, g) in want.iter().zip(&got) {
                assert_close(&g.phi, &w.phi, FMM_REL, "gpu from speeds vs gpu from the cost");
            }
        }
    }
}

/// Inputs beyond what the GPU's f32 solve can hold (a cell size of 1e39 m, speeds of 1e-30
/// m/s, a cell size of 1e-300 m) are refused on `--backend gpu`, saying why, and taken by the
/// CPU on auto, saying so, rather than solved into a wrong answer (all cells unreachable, or
/// potentials capped): no GPU is needed to check it.
#[test]
fn inputs_beyond_the_gpus_f32_range_are_refused_or_go_to_the_cpu() {
    use crowdfield::eikonal::Order;
    let side = 512; // at the size auto sends to the GPU
    let mut goal = Array2::from_elem((side, side), false);
    goal[(0, 0)] = true;
    let goals = [goal];
    let ones = Array2::from_elem((side, side), 1.0f64);
    let mut slow = ones.clone();
    slow[(3, 3)] = 1e-30;
    for (speed, cell) in [(&ones, 1e39), (&slow, 1.0), (&ones, 1e-300)] {
        let e = crowdfield::plan::solve_eikonal_speed(
            gpu::Backend::Gpu,
            None,
            speed.clone(),
            &goals,
            cell,
            Order::First,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("backend") && e.contains("f32 range") || e.contains("above the GPU's limit"),
            "{e}"
        );
        let (sols, used) = crowdfield::plan::solve_eikonal_speed(
            gpu::Backend::Auto,
            None,
            speed.clone(),
            &goals,
            cell,
            Order::First,
        )
        .unwrap();
        assert!(
            used.starts_with("cpu: fast marching") && used.contains("auto: "),
            "{used}"
        );
        assert_eq!(
            sols[0].unreachable, 0,
            "cell {cell}: every cell is reachable on the CPU"
        );
    }
    // Ordinary inputs are not refused (whether a GPU opens here or not).
    if let Err(e) =
        crowdfield::plan::solve_eikonal_speed(gpu::Backend::Gpu, None, ones, &goals, 0.5, Order::First)
    {
        assert!(!e.to_string().contains("f32 range"), "{e}");
    }
}

/// A strip one tile high and `k` tiles long, open, with its whole left column as the source: a
/// plane wave whose potential is the column times the cell size, exact in f32.
fn strip(tile: usize, k: usize) -> (ndarray::Array3<f32>, Array2<bool>) {
    let (rows, cols) = (tile, k * tile);
    let mut goal = Array2::from_elem((rows, cols), false);
    goal.column_mut(0).fill(true);
    (uniform(rows, cols, 1.0), goal)
}

/// The counters of the strip, worked by hand (`t >= 3`). Every tile starts listed, so pass 1
/// relaxes them all; a sweep after the first relaxes only the free cells next to one that moved
/// in the sweep before, and the plane wave moves one column per sweep.
/// - The first tile (sources in column 0, `t - 1` free columns): sweep 1 relaxes all `t² - t`
///   free cells and moves column 1; sweep j moves column j and relaxes the free ones of columns
///   j - 2 to j (2 columns for j = 2, 3 up to j = t - 1); sweep t relaxes columns t - 2 and
///   t - 1 and moves nothing: `t² - t + 2t + 3t(t - 3) + 2t = 4t² - 6t`. Its east edge is now
///   below the next tile's unreached cells, so it queues that tile.
/// - The other tiles in pass 1: one sweep over `t²` cells that moves nothing.
/// - Tile i in pass i: sweep j moves its column j - 1, so sweep 1 relaxes `t²`, sweep 2 columns
///   0 and 1, sweeps 3 to t three columns, sweep t + 1 columns t - 2 and t - 1 (moving
///   nothing): `t² + 2t + 3t(t - 2) + 2t = 4t² - 2t`. It queues the tile east of it, never the
///   one west (whose edge is lower).
///
/// So the front crosses one tile per pass: `k` passes.
fn strip_relaxations(t: u64, k: u64) -> u64 {
    (4 * t * t - 6 * t) + (k - 1) * t * t + (k - 1) * (4 * t * t - 2 * t)
}

fn assert_strip_counters(ctx: &GpuContext, k: usize) {
    let t = ctx.fim_tile();
    let (cost, goal) = strip(t, k);
    let h = 0.5;
    let goals = [goal];
    for sol in [
        &ctx.solve_fim(cost.view(), &goals, h).unwrap()[0],
        &solve_fim_cpu_tiled(cost.view(), &goals, h, t).unwrap()[0],
    ] {
        let c = sol.counters.expect("the FIM reports counters");
        let what = format!("{} with {t}x{t} tiles, {k} tiles", sol.solver);
        assert_eq!(c.tile, t, "{what}");
        assert_eq!(c.passes, k, "{what}");
        assert_eq!(sol.passes, k, "{what}");
        assert_eq!(c.relaxations, strip_relaxations(t as u64, k as u64), "{what}");
        let reachable = (k * t * t) as f64;
        assert_eq!(
            c.relaxations_per_reachable_cell,
            c.relaxations as f64 / reachable,
            "{what}"
        );
        if sol.solver == "fim-gpu" {
            // Fewer than 32 passes: one batch of 32 passes, two dispatches each, one read-back.
            assert_eq!(c.dispatches, 2 * gpu::FIRST_PASSES_PER_SUBMIT, "{what}");
            assert_eq!(c.read_backs, 1, "{what}");
        } else {
            assert_eq!((c.dispatches, c.read_backs), (0, 0), "{what}");
        }
        for ((_, col), &v) in sol.phi.indexed_iter() {
            assert_eq!(v, col as f64 * h, "{what}");
        }
    }
}

#[test]
fn counters_are_exact_on_a_strip_of_tiles() {
    let Some(ctx) = gpu() else { return };
    for k in [1, 2, 5] {
        assert_strip_counters(ctx, k);
    }
}

#[test]
fn counters_of_a_solve_past_one_batch() {
    if gpu().is_none() {
        return;
    }
    // A strip of 40 small tiles (the fallback's size keeps it quick): 40 passes, seen after the
    // second batch (32 + 64 passes encoded, two read-backs).
    let t = gpu::FIM_TILE_SMALL;
    let (cost, goal) = strip(t, 40);
    let twin = &solve_fim_cpu_tiled(cost.view(), std::slice::from_ref(&goal), 1.0, t).unwrap()[0];
    assert_eq!(twin.passes, 40);
    assert_eq!(
        twin.counters.unwrap().relaxations,
        strip_relaxations(t as u64, 40)
    );
    let small = GpuContext::with_workgroup_memory_limit(gpu::fim_workgroup_bytes(t)).unwrap();
    assert_eq!(small.fim_tile(), t);
    {
        let g = &small.solve_fim(cost.view(), &[goal], 1.0).unwrap()[0];
        assert_close(&g.phi, &twin.phi, 0.0, "40 tiles");
        let c = g.counters.unwrap();
        assert_eq!((c.passes, c.read_backs), (40, 2));
        assert_eq!(
            c.dispatches,
            2 * (gpu::FIRST_PASSES_PER_SUBMIT + gpu::PASSES_PER_SUBMIT)
        );
    }
}

#[test]
fn a_small_workgroup_memory_falls_back_to_the_small_tile() {
    // Require a GPU here as the shared helper does: this test opens its own context.
    if gpu().is_none() {
        return;
    }
    let limit = gpu::fim_workgroup_bytes(gpu::FIM_TILE_LARGE) - 1;
    let ctx = GpuContext::with_workgroup_memory_limit(limit).unwrap();
    assert_eq!(ctx.fim_tile(), gpu::FIM_TILE_SMALL);
    assert_eq!(ctx.notes().len(), 1);
    assert!(ctx.notes()[0].contains("32x32"), "{:?}", ctx.notes());
    // It solves, and says so in the description of what ran.
    let (cost, _) = random_case(21, 90, 70);
    let mut goal = Array2::from_elem((90, 70), false);
    goal[(45, 3)] = true;
    let (sols, used) = crowdfield::plan::solve_eikonal(
        gpu::Backend::Gpu,
        Some(&ctx),
        cost.view(),
        std::slice::from_ref(&goal),
        0.5,
        crowdfield::eikonal::Order::First,
    )
    .unwrap();
    assert!(used.contains("32x32"), "{used}");
    let twin = solve_fim_cpu_tiled(cost.view(), &[goal], 0.5, gpu::FIM_TILE_SMALL).unwrap();
    assert_close(&sols[0].phi, &twin[0].phi, TWIN_REL, "small tiles");
    assert_eq!(sols[0].counters.unwrap().tile, gpu::FIM_TILE_SMALL);
    assert_strip_counters(&ctx, 3);
}

#[test]
fn four_groups_on_the_maze_equal_four_separate_solves_and_fast_marching() {
    let Some(ctx) = gpu() else { return };
    let n = 256;
    let (cost, exit) = bench_grid(BenchGrid::Maze, n);
    let mut goals = vec![exit];
    for (r, c) in [(0, n - 1), (n - 1, n / 2), (n / 3, 100)] {
        let mut g = Array2::from_elem((n, n), false);
        g[(r, c)] = true;
        goals.push(g);
    }
    let together = ctx.solve_fim(cost.view(), &goals, 1.0).unwrap();
    let mut most = 0;
    for (k, g) in goals.iter().enumerate() {
        let alone = &ctx.solve_fim(cost.view(), std::slice::from_ref(g), 1.0).unwrap()[0];
        assert_close(&together[k].phi, &alone.phi, 0.0, &format!("group {k}"));
        most = most.max(alone.passes);
        let fmm =
            crowdfield::eikonal::solve_fmm(cost.view(), g.view(), 1.0, crowdfield::eikonal::Order::First);
        assert_close(
            &together[k].phi,
            &fmm.phi,
            FMM_REL,
            &format!("group {k} vs fast marching"),
        );
    }
    // One shared list: the passes are the most any group needs, not their sum.
    assert_eq!(together[0].passes, most);
    assert!(together.iter().all(|s| s.counters == together[0].counters));
}

#[test]
fn a_path_longer_than_the_sweep_cap_inside_one_tile_resumes_next_pass() {
    let Some(ctx) = gpu() else { return };
    // One tile: walls every third column, each open one row at alternating ends, so the path
    // from the corner winds through 2-cell corridors, far more cells than a tile sweeps in one
    // pass (FIM_MAX_SWEEPS_PER_EDGE * tile): the tile queues itself and goes on.
    let n = ctx.fim_tile();
    let wall = Array2::from_shape_fn((n, n), |(r, c)| {
        c % 3 == 2 && if (c / 3) % 2 == 0 { r != n - 1 } else { r != 0 }
    });
    let cost = with_walls(uniform(n, n, 1.0), &wall);
    let mut goal = Array2::from_elem((n, n), false);
    goal[(0, 0)] = true;
    let goals = [goal];
    let g = &ctx.solve_fim(cost.view(), &goals, 1.0).unwrap()[0];
    let t = &solve_fim_cpu_tiled(cost.view(), &goals, 1.0, n).unwrap()[0];
    let longest = g
        .phi
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |a, &b| a.max(b));
    assert!(
        longest > (gpu::FIM_MAX_SWEEPS_PER_EDGE * n) as f64,
        "the path ({longest} cells) must outrun one pass's sweeps"
    );
    assert!(g.passes >= 2, "{}", g.passes);
    assert_eq!(g.passes, t.passes);
    assert_eq!(g.counters.unwrap().relaxations, t.counters.unwrap().relaxations);
    assert_close(&g.phi, &t.phi, TWIN_REL, "serpentine: gpu vs twin");
    let fmm = crowdfield::eikonal::solve_fmm(
        cost.view(),
        goals[0].view(),
        1.0,
        crowdfield::eikonal::Order::First,
    );
    assert_close(&g.phi, &fmm.phi, FMM_REL, "serpentine: gpu vs fast marching");
}
