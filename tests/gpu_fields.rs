//! The GPU speed and cost passes against the CPU fields (`fields::speed`, `fields::unit_cost`)
//! on random scenes with obstacles, slopes, discomfort and crowds, and the whole device chain
//! (splat → speed → cost → FIM) against the CPU chain (splat → fields → fast marching) and
//! against the CPU FIM twin on the CPU fields of the same density.

mod gpu_support;

use crowdfield::agents::Agents;
use crowdfield::eikonal::{self, Order};
use crowdfield::fields::{self, Fields};
use crowdfield::gpu::types::GpuContinuumParams;
use crowdfield::gpu::{PHI_INF, gradient_twin, potential_twin, sanitize_cost, solve_fim_cpu, velocity_twin};
use crowdfield::grid::{Dir, Grid};
use crowdfield::params::SpeedLaw;
use crowdfield::scene::Scene;
use gpu_support::{Rng, gpu};
use ndarray::{Array2, Array3};

/// Relative tolerance of the f32 speed and cost passes against the f64 CPU fields on the same
/// density: a handful of f32 roundings per face (slope, interpolation, blend, division; exp for
/// Weidmann), each 6e-8 relative, so 1e-5 leaves a wide margin and still catches any formula
/// or indexing mistake (those are off by percents).
const FIELD_REL: f64 = 1e-5;

/// Relative tolerance of the device chain against the CPU FIM twin run on the CPU fields of
/// the *same* density (the GPU splat's, read back): the same algorithm on fields that agree to
/// `FIELD_REL`, so only f32 rounding separates them.
const CHAIN_TWIN_REL: f64 = 2e-5;

/// Relative tolerance of the device chain against CPU fast marching. On these scenes the
/// costs are strongly anisotropic (uphill faces at `f_min`, downhill at `f_max`, Weidmann near
/// jam: contrasts above 10x), and there fast marching's potential, although a fixed point of
/// the same first-order update (checked to 2e-7), is not the only one: the update takes the
/// least root over the neighbours in increasing order, so which neighbours come first can flip
/// when two of them nearly tie, and the FIM's iteration order can settle a cell on another
/// fixed point. Measured with 64x64 tiles: 3.1e-3 above fast marching at one cell of seed 21
/// (16, 22), every other cell within 3.7e-5. 5e-3 covers that and the splat's fixed point
/// (below).
const CHAIN_REL: f64 = 5e-3;

/// A random scene: cost-relevant layers everywhere (heights with slopes below, between and
/// above the limits, discomfort, 12 % obstacle cells) and a crowd: half spread out, half in a
/// dense blob so every branch of the density blend is taken.
fn random_scene(
    seed: u64,
    cols: usize,
    rows: usize,
    h: f64,
    law: SpeedLaw,
    lookahead: f64,
) -> (Scene, Agents) {
    let mut rng = Rng(seed);
    let mut scene = Scene::empty("random", Grid::new(cols, rows, h));
    scene.params.speed_law = law;
    scene.params.lookahead = lookahead;
    scene.params.alpha = 0.2;
    scene.params.gamma = 0.7;
    // Height: a tilted plane plus bumps; steps of up to ±0.6 h per cell give slopes past s_max.
    scene.height = Array2::from_shape_fn((rows, cols), |(r, c)| {
        (0.05 * c as f32 + 0.3 * (r as f32 * 0.7).sin()) * h as f32 + 0.6 * h as f32 * (rng.next_f32() - 0.5)
    });
    scene.discomfort = Array2::from_shape_fn((rows, cols), |_| {
        if rng.next_f32() < 0.3 {
            2.0 * rng.next_f32()
        } else {
            0.0
        }
    });
    scene.obstacle = Array2::from_shape_fn((rows, cols), |_| rng.next_f32() < 0.12);
    let (w, hgt) = (scene.grid.width() as f32, scene.grid.height() as f32);
    let mut agents = Agents::default();
    let n = cols * rows / 2;
    for i in 0..n {
        let (x, y) = if i % 2 == 0 {
            (rng.next_f32() * w, rng.next_f32() * hgt)
        } else {
            // The blob: a quarter of the domain's width around its centre.
            (
                w * (0.375 + 0.25 * rng.next_f32()),
                hgt * (0.375 + 0.25 * rng.next_f32()),
            )
        };
        agents.push(i as u32, x, y, 0, 0.25, 1.3);
        agents.vx[i] = 2.0 * rng.next_f32() - 1.0;
        agents.vy[i] = 2.0 * rng.next_f32() - 1.0;
    }
    (scene, agents)
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-3)
}

/// Asserts two anisotropic fields agree face by face (infinite faces exactly).
fn assert_faces_close(gpu: &Array3<f32>, cpu: &Array3<f32>, rel: f64, what: &str) {
    assert_eq!(gpu.dim(), cpu.dim(), "{what}: shape");
    let mut worst = 0.0f64;
    for ((idx, &g), &c) in gpu.indexed_iter().zip(cpu.iter()) {
        let (g, c) = (f64::from(g), f64::from(c));
        assert!(!g.is_nan(), "{what}: NaN at {idx:?}");
        assert!(close(g, c, rel), "{what} at {idx:?}: gpu {g} vs cpu {c}");
        if g.is_finite() {
            worst = worst.max((g - c).abs() / c.abs().max(1e-3));
        }
    }
    eprintln!("{what}: largest relative difference {worst:.2e}");
}

/// A face is open when neither cell is an obstacle and the neighbour exists.
fn face_open(scene: &Scene, r: usize, c: usize, d: Dir) -> bool {
    fields::speed::face_open(&scene.grid, scene.obstacle.view(), r, c, d)
}

#[test]
fn speed_and_cost_match_the_cpu_fields_on_random_scenes() {
    let Some(ctx) = gpu() else { return };
    let cases = [
        (1, 40, 30, 0.5, SpeedLaw::Linear, 1.0),
        (2, 23, 57, 0.3, SpeedLaw::Linear, 1.45),
        (3, 64, 17, 1.0, SpeedLaw::Weidmann, 0.5),
        (4, 33, 33, 0.4, SpeedLaw::Weidmann, 2.0),
    ];
    for (seed, cols, rows, h, law, lookahead) in cases {
        let what = format!("seed {seed} ({cols}x{rows}, h {h}, {law:?})");
        let (scene, agents) = random_scene(seed, cols, rows, h, law, lookahead);
        let g = ctx.fields(&scene, &agents).unwrap();
        // The density is the splat's (tested in gpu_splat): it must be close to the CPU's.
        let cpu_density = fields::splat(&scene.grid, scene.params.lambda, &agents);
        for (a, b) in g.density.rho.iter().zip(cpu_density.rho.iter()) {
            assert!((a - b).abs() <= 2e-3 + 1e-4 * b.abs(), "{what}: rho {a} vs {b}");
        }
        // Speed and cost from the same density: the f64 CPU formulas, face by face.
        let cpu_speed = fields::speed(&scene, &g.density);
        assert_faces_close(&g.speed, &cpu_speed, FIELD_REL, &format!("{what} speed"));
        let cpu_cost = fields::unit_cost(&scene, cpu_speed.view());
        assert_faces_close(&g.cost, &cpu_cost, FIELD_REL, &format!("{what} cost"));

        // Obstacles and the border are impassable: speed 0 and cost +inf exactly there.
        let mut open = 0;
        for r in 0..rows {
            for c in 0..cols {
                for d in Dir::ALL {
                    let i = (r, c, d.index());
                    if face_open(&scene, r, c, d) {
                        open += 1;
                        assert!(
                            g.cost[i].is_finite() && g.cost[i] > 0.0,
                            "{what}: open face {i:?}"
                        );
                    } else {
                        assert_eq!((g.speed[i], g.cost[i]), (0.0, f32::INFINITY), "{what}: {i:?}");
                    }
                }
            }
        }
        assert!(open > rows * cols, "{what}: too few open faces to test anything");

        // The scene must exercise every regime, or the comparison proves little.
        let p = &scene.params;
        let rho_ahead_mid = g
            .density
            .rho
            .iter()
            .filter(|&&v| f64::from(v) > p.rho_min && f64::from(v) < p.rho_max)
            .count();
        let rho_high = g
            .density
            .rho
            .iter()
            .filter(|&&v| f64::from(v) >= p.rho_max)
            .count();
        assert!(
            rho_ahead_mid > 0 && (law == SpeedLaw::Weidmann || rho_high > 0),
            "{what}: density regimes {rho_ahead_mid} {rho_high}"
        );
        let slowest_terrain = g
            .speed
            .iter()
            .filter(|&&f| f > 0.0 && f64::from(f) < p.f_max - 1e-3)
            .count();
        assert!(slowest_terrain > 0, "{what}: no slowed face");
        assert!(
            g.speed.iter().any(|&f| (f64::from(f) - p.f_max).abs() < 1e-6),
            "{what}: no free face"
        );

        // Deterministic: the same input gives the same bits.
        assert_eq!(
            g,
            ctx.fields(&scene, &agents).unwrap(),
            "{what}: not deterministic"
        );
    }
}

#[test]
fn density_window_and_density_at_walker_match_the_cpu_fields() {
    let Some(ctx) = gpu() else { return };
    // (seed, cols, rows, cell size, law, lookahead, density_window m², density_at_walker)
    let cases = [
        (41, 40, 30, 0.5, SpeedLaw::Linear, 1.0, 1.0, false),
        (42, 23, 57, 0.25, SpeedLaw::Weidmann, 1.45, 1.0, true),
        (43, 33, 33, 0.4, SpeedLaw::Weidmann, 1.0, 0.0, true),
        // sqrt(0.5) / 0.3 = 2.36 cells across: 3 x 3 cells, the ring 0.68 in.
        (44, 31, 19, 0.3, SpeedLaw::Linear, 0.5, 0.5, true),
        // 9 x 9 cells of 0.125 m, the ring half in.
        (45, 36, 28, 0.125, SpeedLaw::Weidmann, 1.0, 1.0, true),
        // 100 m² on 0.5 m cells is 21 x 21 cells: wider than this 12 x 9 grid (clamped).
        (46, 12, 9, 0.5, SpeedLaw::Weidmann, 1.0, 100.0, false),
    ];
    for (seed, cols, rows, h, law, lookahead, window, at_walker) in cases {
        let what =
            format!("seed {seed} ({cols}x{rows}, h {h}, {law:?}, window {window}, at walker {at_walker})");
        let (mut scene, mut agents) = random_scene(seed, cols, rows, h, law, lookahead);
        // Half an agent per cell is a jam on cells of 0.125 m (32 persons/m²), where every
        // face reads f_min: keep one agent in eight.
        if h < 0.2 {
            agents.retain(|i| i % 8 == 0);
        }
        scene.params.density_window = window;
        scene.params.density_at_walker = at_walker;
        let g = ctx.fields(&scene, &agents).unwrap();
        // The density read back is the splat's, as on the CPU (the window is the speed's).
        let splat = ctx.splat(&scene.grid, scene.params.lambda, &agents).unwrap();
        assert_eq!(g.density, splat, "{what}: the fields' density is the splat");
        // The device sums each window directly in f32, the CPU by prefix sums in f64; the
        // window's few dozen additions keep the difference to a few 1e-6 (measured 2.3e-6 at
        // worst), inside the fields' tolerance.
        let cpu_speed = fields::speed(&scene, &g.density);
        assert_faces_close(&g.speed, &cpu_speed, FIELD_REL, &format!("{what} speed"));
        let cpu_cost = fields::unit_cost(&scene, cpu_speed.view());
        assert_faces_close(&g.cost, &cpu_cost, FIELD_REL, &format!("{what} cost"));
        // The options change the speed: the comparison is not of two default fields.
        let mut plain = scene.clone();
        plain.params.density_window = 0.0;
        plain.params.density_at_walker = false;
        let default_speed = fields::speed(&plain, &g.density);
        let changed = g
            .speed
            .iter()
            .zip(default_speed.iter())
            .filter(|&(&a, &b)| (a - b).abs() > 0.01 * b.abs().max(0.1))
            .count();
        assert!(changed > 20, "{what}: only {changed} faces changed");
        assert_eq!(
            g,
            ctx.fields(&scene, &agents).unwrap(),
            "{what}: not deterministic"
        );
    }
    // The window's buffers kept from a windowed scene are not read by a scene without one.
    let (scene, agents) = random_scene(47, 25, 20, 0.5, SpeedLaw::Linear, 1.0);
    let g = ctx.fields(&scene, &agents).unwrap();
    assert_faces_close(
        &g.speed,
        &fields::speed(&scene, &g.density),
        FIELD_REL,
        "after a window",
    );
}

#[test]
fn whole_chain_with_a_density_window_matches_the_cpu_twin() {
    let Some(ctx) = gpu() else { return };
    let (mut scene, agents) = random_scene(48, 44, 36, 0.25, SpeedLaw::Weidmann, 1.0);
    scene.params.density_window = 1.0;
    scene.params.density_at_walker = true;
    let goals = goals(&scene);
    let step = ctx.continuum_step(&scene, &agents, &goals, true).unwrap();
    let fields = step.fields.expect("fields were asked for");
    assert_eq!(fields, ctx.fields(&scene, &agents).unwrap());
    let cpu_speed = fields::speed(&scene, &fields.density);
    let cpu_cost = fields::unit_cost(&scene, cpu_speed.view());
    let twin = solve_fim_cpu(cpu_cost.view(), &goals, 0.25).unwrap();
    let mut worst = 0.0f64;
    assert_eq!(step.potentials.len(), goals.len(), "one potential per goal");
    assert_eq!(twin.len(), goals.len());
    for (g, c) in step.potentials.iter().zip(&twin) {
        assert_eq!(g.unreachable, c.unreachable, "reachable sets differ");
        for ((idx, &a), &b) in g.phi.indexed_iter().zip(c.phi.iter()) {
            assert!(close(a, b, CHAIN_TWIN_REL), "at {idx:?}: gpu {a} vs twin {b}");
            if a.is_finite() && b > 0.0 {
                worst = worst.max((a - b).abs() / b);
            }
        }
    }
    eprintln!("window chain vs the CPU twin, largest relative difference {worst:.2e}");
}

#[test]
fn without_agents_the_fields_are_the_cpu_fields() {
    let Some(ctx) = gpu() else { return };
    let (scene, _) = random_scene(9, 31, 26, 0.5, SpeedLaw::Linear, 1.0);
    let g = ctx.fields(&scene, &Agents::default()).unwrap();
    let cpu = Fields::compute(&scene, &Agents::default());
    assert_eq!(g.density, cpu.density);
    assert_faces_close(&g.speed, &cpu.speed, FIELD_REL, "empty crowd speed");
    assert_faces_close(&g.cost, &cpu.cost, FIELD_REL, "empty crowd cost");
}

#[test]
fn bad_layers_are_errors_not_panics() {
    let Some(ctx) = gpu() else { return };
    let (mut scene, agents) = random_scene(5, 10, 8, 0.5, SpeedLaw::Linear, 1.0);
    scene.discomfort = Array2::zeros((8, 9));
    let e = ctx.fields(&scene, &agents).unwrap_err();
    assert!(e.to_string().contains("scene.discomfort"), "{e}");
    let goal = Array2::from_elem((3, 3), false);
    let (scene, agents) = random_scene(5, 10, 8, 0.5, SpeedLaw::Linear, 1.0);
    let e = ctx.continuum_step(&scene, &agents, &[goal], false).unwrap_err();
    assert!(e.to_string().contains("goals[0]"), "{e}");
}

/// Goal masks: the left column and a block in the top-right corner, minus obstacles.
fn goals(scene: &Scene) -> Vec<Array2<bool>> {
    let (rows, cols) = scene.grid.shape();
    let free = |r: usize, c: usize| !scene.obstacle[(r, c)];
    vec![
        Array2::from_shape_fn((rows, cols), |(r, c)| c == 0 && free(r, c)),
        Array2::from_shape_fn((rows, cols), |(r, c)| {
            r + 3 >= rows && c + 4 >= cols && free(r, c)
        }),
    ]
}

#[test]
fn whole_chain_matches_the_cpu_chain() {
    let Some(ctx) = gpu() else { return };
    for (seed, cols, rows, h, law, lookahead) in [
        (21, 48, 40, 0.5, SpeedLaw::Linear, 1.0),
        (22, 37, 61, 0.4, SpeedLaw::Weidmann, 1.2),
    ] {
        let what = format!("seed {seed}");
        let (scene, agents) = random_scene(seed, cols, rows, h, law, lookahead);
        let goals = goals(&scene);
        let step = ctx.continuum_step(&scene, &agents, &goals, true).unwrap();
        let cpu_fields = Fields::compute(&scene, &agents);
        let cpu = eikonal::solve_groups(cpu_fields.cost.view(), &goals, h, Order::First);
        assert_eq!(step.potentials.len(), 2);
        let mut worst = 0.0f64;
        for (k, (g, c)) in step.potentials.iter().zip(&cpu).enumerate() {
            assert_eq!(
                g.unreachable, c.unreachable,
                "{what} group {k}: reachable sets differ"
            );
            assert!(g.passes > 0 && g.solver == "fim-gpu");
            for ((idx, &a), &b) in g.phi.indexed_iter().zip(c.phi.iter()) {
                assert!(!a.is_nan(), "{what}: NaN at {idx:?}");
                assert!(
                    close(a, b, CHAIN_REL),
                    "{what} group {k} at {idx:?}: gpu {a} vs cpu {b}"
                );
                if a.is_finite() && b > 0.0 {
                    worst = worst.max((a - b).abs() / b);
                }
            }
        }
        eprintln!("{what}: chain largest relative difference {worst:.2e}");

        // The fields read back are the ones `fields` computes, and the device-side chain gives
        // the same potentials, bit for bit, as uploading that cost to the FIM.
        let fields = step.fields.expect("fields were asked for");
        assert_eq!(fields, ctx.fields(&scene, &agents).unwrap());
        let uploaded = ctx.solve_fim(fields.cost.view(), &goals, h).unwrap();
        for (a, b) in step.potentials.iter().zip(&uploaded) {
            assert_eq!(a.phi, b.phi, "{what}: chain vs uploaded cost");
            assert_eq!(a.passes, b.passes);
        }
        // With the splat taken out (the CPU fields of the GPU's own density, solved by the CPU
        // twin of the FIM), only f32 rounding separates the chain from the CPU.
        let cpu_speed = fields::speed(&scene, &fields.density);
        let cpu_cost = fields::unit_cost(&scene, cpu_speed.view());
        let twin = solve_fim_cpu(cpu_cost.view(), &goals, h).unwrap();
        let mut worst_twin = 0.0f64;
        for (g, c) in step.potentials.iter().zip(&twin) {
            assert_eq!(g.unreachable, c.unreachable, "{what}: reachable sets differ");
            for ((idx, &a), &b) in g.phi.indexed_iter().zip(c.phi.iter()) {
                assert!(
                    close(a, b, CHAIN_TWIN_REL),
                    "{what} at {idx:?}: gpu {a} vs twin {b}"
                );
                if a.is_finite() && b > 0.0 {
                    worst_twin = worst_twin.max((a - b).abs() / b);
                }
            }
        }
        eprintln!(
            "{what}: chain vs the CPU twin on the same density, largest relative difference {worst_twin:.2e}"
        );
        // Without read-back of the fields: the same potentials, and deterministic.
        let again = ctx.continuum_step(&scene, &agents, &goals, false).unwrap();
        assert!(again.fields.is_none());
        for (a, b) in again.potentials.iter().zip(&step.potentials) {
            assert_eq!(a.phi, b.phi, "{what}: not deterministic");
        }
    }
}

#[test]
fn chain_reuses_buffers_across_sizes_and_handles_empty_input() {
    let Some(ctx) = gpu() else { return };
    let (small, small_agents) = random_scene(31, 20, 14, 0.5, SpeedLaw::Linear, 1.0);
    let (large, large_agents) = random_scene(32, 70, 45, 0.5, SpeedLaw::Weidmann, 1.0);
    let first = ctx
        .continuum_step(&small, &small_agents, &goals(&small), true)
        .unwrap();
    // A larger scene grows every buffer; the small one afterwards must not see stale data.
    ctx.continuum_step(&large, &large_agents, &goals(&large), false)
        .unwrap();
    let again = ctx
        .continuum_step(&small, &small_agents, &goals(&small), true)
        .unwrap();
    assert_eq!(first.fields, again.fields);
    for (a, b) in first.potentials.iter().zip(&again.potentials) {
        assert_eq!(a.phi, b.phi);
    }
    // No agents: the chain is the CPU fields' potentials (no splat error at all).
    let empty = ctx
        .continuum_step(&small, &Agents::default(), &goals(&small), false)
        .unwrap();
    let cpu = Fields::compute(&small, &Agents::default());
    let twin = solve_fim_cpu(cpu.cost.view(), &goals(&small), 0.5).unwrap();
    for (a, b) in empty.potentials.iter().zip(&twin) {
        for (&x, &y) in a.phi.iter().zip(b.phi.iter()) {
            assert!(close(x, y, CHAIN_TWIN_REL), "no agents: {x} vs {y}");
        }
    }
    // No goals: no potentials, but the fields when asked.
    let none = ctx.continuum_step(&small, &small_agents, &[], true).unwrap();
    assert!(none.potentials.is_empty());
    assert_eq!(none.fields, first.fields);
}

/// Tolerance of the device's walking velocities against `gradient::velocity_at` on the CPU
/// from the same potentials, cost and speed (read back from the device), m/s: f32 against f64
/// through a gradient (a subtraction, a division), a normalisation, a bilinear blend and a
/// renormalisation, some ten roundings of 6e-8 relative on speeds below 2 m/s. A wrong cell,
/// axis, face or group is off by tenths of a metre per second.
const VELOCITY_TOL: f32 = 1e-4;

/// Relative tolerance of the device's gradients against `gradient::gradient` on the same
/// potentials and cost: one f32 subtraction and division against f64.
const GRADIENT_REL: f32 = 1e-5;

/// Tolerance of the gradient and velocity passes against their f32 CPU twins: the same
/// operations in the same order, apart from a compiler's contraction of a multiply and an add.
const TWIN_REL: f32 = 1e-6;

/// Asserts the device's velocities are `velocity_at` of `gradients` and `speed` at each agent.
fn assert_velocities(
    grid: &Grid,
    agents: &Agents,
    sampled: &crowdfield::gpu::ContinuumVelocities,
    gradients: &[crowdfield::gradient::Gradient],
    speed: &Array3<f32>,
    what: &str,
) -> usize {
    let mut walking = 0;
    for i in 0..agents.len() {
        let g = agents.group[i] as usize;
        let want =
            crowdfield::gradient::velocity_at(grid, &gradients[g], speed.view(), agents.x[i], agents.y[i]);
        let got = [sampled.vx[i], sampled.vy[i]];
        walking += usize::from(want != [0.0, 0.0]);
        for a in 0..2 {
            assert!(
                (got[a] - want[a]).abs() <= VELOCITY_TOL,
                "{what}: agent {i} of group {g} at ({}, {}): gpu {got:?} vs cpu {want:?}",
                agents.x[i],
                agents.y[i]
            );
        }
    }
    walking
}

#[test]
fn device_velocities_match_velocity_at_on_the_cpu() {
    let Some(ctx) = gpu() else { return };
    for seed in [3u64, 17] {
        let (mut scene, mut agents) = random_scene(seed, 45, 38, 0.5, SpeedLaw::Linear, 1.0);
        let (rows, cols) = scene.grid.shape();
        // A third group whose goal lies in a walled box: every cell outside it is unreached.
        for r in 28..35 {
            for c in 4..11 {
                scene.obstacle[(r, c)] = r == 28 || r == 34 || c == 4 || c == 10;
            }
        }
        let mut goals = goals(&scene);
        goals.push(Array2::from_shape_fn((rows, cols), |(r, c)| {
            (30..33).contains(&r) && (6..9).contains(&c)
        }));
        // Walkers on the border, in the box, on an obstacle and outside the domain too.
        let (w, h) = (scene.grid.width() as f32, scene.grid.height() as f32);
        for (x, y) in [
            (0.0, 0.0),
            (w, h),
            (w, 3.3),
            (-0.1, 2.0),
            (w + 0.2, 1.0),
            (3.7, 15.8),
            (1.0, h),
        ] {
            let i = agents.len();
            agents.push(i as u32, x, y, 0, 0.25, 1.3);
        }
        for i in 0..agents.len() {
            agents.group[i] = (i % 3) as u32;
        }
        let grid = scene.grid;
        let n = agents.len();
        let mut gpu_run = ctx.continuum_run(&scene).unwrap();
        // Each walker's potential under every group's field too, as the pedestrian model reads.
        gpu_run.set_sample_potentials(true);
        let first = ctx
            .continuum_velocities(&mut gpu_run, &agents, Some(&goals))
            .unwrap();
        let counters = first.counters.expect("a replanning step solves");
        assert_eq!(first.read_backs.count, counters.read_backs as u64 + 1);
        assert_eq!(
            first.read_backs.bytes,
            32 * counters.read_backs as u64 + (8 + 3 * 4) * n as u64
        );
        let fields = ctx.continuum_fields(&gpu_run).unwrap();
        let phi = ctx.continuum_potentials(&gpu_run).unwrap();
        assert_eq!(phi.len(), 3);
        let unreached = phi[2].iter().filter(|v| v.is_infinite()).count();
        assert!(
            unreached > rows * cols / 2,
            "group 2 reaches little: {unreached} cells unreached"
        );
        let cpu: Vec<_> = phi
            .iter()
            .map(|p| crowdfield::gradient::gradient(p.view(), fields.cost.view(), grid.cell_size))
            .collect();
        let device = ctx.continuum_gradients(&gpu_run).unwrap();
        for (g, (d, c)) in device.iter().zip(&cpu).enumerate() {
            for (k, (a, b)) in
                d.gx.iter()
                    .chain(d.gy.iter())
                    .zip(c.gx.iter().chain(c.gy.iter()))
                    .enumerate()
            {
                assert!(
                    (a - b).abs() <= GRADIENT_REL * b.abs().max(1.0),
                    "seed {seed}, group {g}, entry {k}: gpu {a} vs cpu {b}"
                );
            }
        }
        let walking = assert_velocities(&grid, &agents, &first, &cpu, &fields.speed, "replanning step");
        assert_eq!(first.potentials.len(), 3 * n);
        let mut unreached_walkers = 0;
        for g in 0..3 {
            for i in 0..n {
                let want =
                    crowdfield::sim::pedestrian::potential_at(&grid, &phi[g], agents.x[i], agents.y[i]);
                let got = first.potentials[g * n + i];
                if want.is_infinite() {
                    unreached_walkers += 1;
                    assert_eq!(got, PHI_INF, "group {g}, agent {i}");
                } else {
                    assert!(
                        (f64::from(got) - want).abs() <= f64::from(GRADIENT_REL) * want.abs().max(1.0),
                        "group {g}, agent {i}: gpu {got} vs cpu {want}"
                    );
                }
            }
        }
        assert!(
            unreached_walkers > n / 3,
            "group 2 reaches few walkers: {unreached_walkers}"
        );
        // The passes against their CPU twins, which read like the shaders, in f32.
        let params = GpuContinuumParams {
            cols: cols as u32,
            rows: rows as u32,
            groups: 3,
            agents: n as u32,
            cell_size: grid.cell_size as f32,
            width: grid.width() as f32,
            height: grid.height() as f32,
            pad0: 0,
        };
        let flat: Vec<f32> = phi
            .iter()
            .flat_map(|p| p.iter().map(|&v| if v.is_finite() { v as f32 } else { PHI_INF }))
            .collect();
        let cost: Vec<f32> = fields.cost.iter().map(|&c| sanitize_cost(c)).collect();
        let twin = gradient_twin(&params, &flat, &cost);
        let on_device: Vec<f32> = device
            .iter()
            .flat_map(|d| d.gx.iter().zip(d.gy.iter()).flat_map(|(&x, &y)| [x, y]))
            .collect();
        for (k, (a, b)) in on_device.iter().zip(&twin).enumerate() {
            assert!(
                (a - b).abs() <= TWIN_REL * b.abs().max(1.0),
                "gradient {k}: gpu {a} vs twin {b}"
            );
        }
        let speed: Vec<f32> = fields.speed.iter().copied().collect();
        for k in 0..3 * n {
            let (g, i) = (k / n, k % n);
            let want = potential_twin(&params, &flat, g as u32, agents.x[i], agents.y[i]);
            let got = first.potentials[k];
            assert!(
                (got - want).abs() <= TWIN_REL * want.abs().max(1.0),
                "potential {k}: gpu {got} vs twin {want}"
            );
        }
        for i in 0..n {
            let want = velocity_twin(&params, &twin, &speed, agents.group[i], agents.x[i], agents.y[i]);
            let got = [first.vx[i], first.vy[i]];
            for a in 0..2 {
                assert!(
                    (got[a] - want[a]).abs() <= TWIN_REL,
                    "agent {i}: gpu {got:?} vs twin {want:?}"
                );
            }
        }
        assert!(walking > n / 3, "seed {seed}: {walking} of {n} walk");
        // A step that does not replan: the walkers moved, so splat, fields and sampling run
        // again on the last solve's gradients, and only the velocities come back.
        for i in 0..n {
            agents.x[i] += 0.2 * first.vx[i];
            agents.y[i] += 0.2 * first.vy[i];
        }
        let before = gpu_run.read_backs();
        gpu_run.set_sample_potentials(false);
        let second = ctx.continuum_velocities(&mut gpu_run, &agents, None).unwrap();
        assert!(second.potentials.is_empty());
        assert!(second.counters.is_none());
        assert_eq!(
            second.read_backs,
            crowdfield::gpu::ReadBacks {
                count: 1,
                bytes: 8 * n as u64
            }
        );
        assert_eq!(gpu_run.read_backs().bytes - before.bytes, 8 * n as u64);
        let moved = ctx.continuum_fields(&gpu_run).unwrap();
        assert_ne!(moved.density.rho, fields.density.rho, "the crowd moved");
        assert_eq!(
            ctx.continuum_potentials(&gpu_run).unwrap(),
            phi,
            "the potentials are kept"
        );
        assert_velocities(&grid, &agents, &second, &cpu, &moved.speed, "reusing step");
        // Every read-back is counted: two steps, two field reads, one of gradients, two of
        // potentials.
        let cells = (rows * cols) as u64;
        assert_eq!(
            gpu_run.read_backs().bytes,
            first.read_backs.bytes + 8 * n as u64 + 2 * 44 * cells + 24 * cells + 2 * 12 * cells
        );
        // A solve with the same goals restarts from the device's own initial potentials: the
        // same potentials and velocities as a new run's first solve of the same crowd.
        let again = ctx
            .continuum_velocities(&mut gpu_run, &agents, Some(&goals))
            .unwrap();
        let mut other = ctx.continuum_run(&scene).unwrap();
        let reference = ctx
            .continuum_velocities(&mut other, &agents, Some(&goals))
            .unwrap();
        let (a, b) = (
            ctx.continuum_potentials(&gpu_run).unwrap(),
            ctx.continuum_potentials(&other).unwrap(),
        );
        for (g, (a, b)) in a.iter().zip(&b).enumerate() {
            for ((rc, &x), &y) in a.indexed_iter().zip(b.iter()) {
                assert!(
                    close(x, y, 1e-6),
                    "seed {seed}, group {g} at {rc:?}: restarted {x} vs new {y}"
                );
            }
        }
        assert_ne!(a, phi, "the crowd moved, so the potentials changed");
        for i in 0..n {
            assert!((again.vx[i] - reference.vx[i]).abs() <= VELOCITY_TOL, "agent {i}");
            assert!((again.vy[i] - reference.vy[i]).abs() <= VELOCITY_TOL, "agent {i}");
        }
    }
}

#[test]
fn a_run_without_a_solve_is_an_error_and_empty_crowds_read_nothing() {
    let Some(ctx) = gpu() else { return };
    let (scene, agents) = random_scene(5, 20, 16, 0.5, SpeedLaw::Linear, 1.0);
    let mut gpu_run = ctx.continuum_run(&scene).unwrap();
    let e = ctx.continuum_velocities(&mut gpu_run, &agents, None).unwrap_err();
    assert!(e.to_string().contains("first step"), "{e}");
    assert!(ctx.continuum_fields(&gpu_run).is_err());
    let step = ctx
        .continuum_velocities(&mut gpu_run, &Agents::default(), Some(&goals(&scene)))
        .unwrap();
    assert!(step.vx.is_empty());
    assert_eq!(step.read_backs.count, step.counters.unwrap().read_backs as u64);
}
