//! The local layer's GPU backend against CPU single: one step agrees agent by agent within a
//! tolerance in every mode (with walls from a bundled map and a moving obstacle), several
//! steps agree in their aggregate figures, the flock likewise, and the head-on scenario has no
//! collision on the GPU. Runs on lavapipe in CI (`CROWDFIELD_REQUIRE_GPU=1` makes a missing
//! adapter a failure).

#[allow(dead_code)] // the shared helper also holds a random generator, unused here
mod gpu_support;
mod local_common;

use crowdfield::Scene;
use crowdfield::agents::Agents;
use crowdfield::gpu::GpuContext;
use crowdfield::local::quality::CollisionCounter;
use crowdfield::local::{LocalBackend, LocalLayer, LocalMode, MovingObstacle};
use crowdfield::params::BoidsParams;
use local_common::{Rng, all_free, head_on_crossing, past_the_wall, seek, through_opening};
use std::sync::{Arc, OnceLock};

const DT: f32 = 0.1;

/// One context for the whole binary (pipelines compile once), or `None` when there is no
/// adapter and a GPU is not required.
fn ctx() -> Option<Arc<GpuContext>> {
    gpu_support::gpu()?;
    static CTX: OnceLock<Arc<GpuContext>> = OnceLock::new();
    Some(
        CTX.get_or_init(|| Arc::new(GpuContext::new().expect("an adapter, as gpu() found one")))
            .clone(),
    )
}

fn map(name: &str) -> Scene {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("maps")
        .join(name);
    crowdfield::map::load(&path).unwrap()
}

/// The bottleneck map (walls and a door) with two groups: one with boids, one without.
fn bottleneck() -> Scene {
    let mut s = map("bottleneck.json");
    let mut with_boids = s.groups[0].clone();
    with_boids.boids = Some(BoidsParams::default());
    s.groups = vec![with_boids, s.groups[0].clone()];
    s
}

/// `n` agents at random free positions with random velocities, alternating groups.
fn crowd(scene: &Scene, n: usize, seed: u64) -> Agents {
    let mut rng = Rng(seed);
    let mut a = Agents::default();
    let (w, h) = (scene.grid.width() as f32, scene.grid.height() as f32);
    while a.len() < n {
        let (x, y) = (rng.range(0.3, w - 0.3), rng.range(0.3, h - 0.3));
        let mut one = Agents::default();
        one.push(0, x, y, 0, 0.2, 1.0);
        if !all_free(scene, &one) {
            continue;
        }
        let id = a.len() as u32;
        a.push(id, x, y, id % 2, rng.range(0.15, 0.25), rng.range(1.0, 1.5));
        let i = a.len() - 1;
        a.vx[i] = rng.range(-1.0, 1.0);
        a.vy[i] = rng.range(-1.0, 1.0);
    }
    a
}

fn preferred(a: &Agents, target: [f32; 2]) -> Vec<[f32; 2]> {
    (0..a.len())
        .map(|i| seek(a.x[i], a.y[i], target, a.max_speed[i], DT))
        .collect()
}

fn mover() -> MovingObstacle {
    MovingObstacle {
        pos: [8.0, 8.0],
        vel: [0.6, -0.2],
        radius: 0.7,
    }
}

fn layers(mode: LocalMode, ctx: &Arc<GpuContext>) -> (LocalLayer, LocalLayer) {
    let mut cpu = LocalLayer::new(mode, LocalBackend::CpuSingle).unwrap();
    let mut gpu = LocalLayer::with_gpu(mode, ctx.clone()).unwrap();
    cpu.moving_obstacles.push(mover());
    gpu.moving_obstacles.push(mover());
    (cpu, gpu)
}

/// Per-agent velocity differences (m/s) and position differences (m), agent order.
fn differences(a: &Agents, b: &Agents) -> (Vec<f32>, Vec<f32>) {
    assert_eq!(a.len(), b.len());
    let dv = (0..a.len())
        .map(|i| (a.vx[i] - b.vx[i]).hypot(a.vy[i] - b.vy[i]))
        .collect();
    let dp = (0..a.len())
        .map(|i| (a.x[i] - b.x[i]).hypot(a.y[i] - b.y[i]))
        .collect();
    (dv, dp)
}

/// Velocity tolerance of one step (m/s). The passes are the CPU's operation by operation and
/// visit neighbours in the same order; what differs is f32 rounding (the GPU compiler may fuse
/// a*b+c, and sin/cos/sqrt differ in the last bit or two). Velocities of ~1 m/s carry ~1e-7
/// of rounding per operation and an ORCA solve chains a few dozen of them: 1e-4 is 100x that
/// headroom, and a wrong rule, sign or neighbour moves a velocity by 0.01 m/s or more.
const VELOCITY_TOLERANCE: f32 = 1e-4;

/// Share of agents allowed past [`VELOCITY_TOLERANCE`] in the ORCA modes: the linear program
/// makes discrete choices (which line fails first, which side of a nearly parallel pair, a
/// clamp at `t_left` or `t_right`), so a rounding-level difference at a tie flips an agent to
/// another vertex of its feasible region. Ties are rare in random crowds: 2 % bounds them.
const DISCRETE_SHARE: f64 = 0.02;

#[test]
fn one_step_matches_cpu_single_in_every_mode() {
    let Some(ctx) = ctx() else { return };
    let sc = bottleneck();
    for (mode, n) in [
        (LocalMode::None, 1500),
        (LocalMode::Boids, 1500),
        (LocalMode::Orca, 800),
        (LocalMode::BoidsOrca, 800),
    ] {
        let start = crowd(&sc, n, 11);
        let pref = preferred(&start, [19.0, 8.0]);
        let (mut cpu, mut gpu) = layers(mode, &ctx);
        let (mut a, mut b) = (start.clone(), start.clone());
        let sa = cpu.step(&sc, &mut a, &pref, DT).unwrap();
        let sb = gpu.step(&sc, &mut b, &pref, DT).unwrap();
        assert_eq!(gpu.grid(), cpu.grid(), "{mode:?}: the GPU bins equal the CPU's");
        let (dv, dp) = differences(&a, &b);
        let off = dv.iter().filter(|&&d| d > VELOCITY_TOLERANCE).count();
        let worst = dv.iter().copied().fold(0.0f32, f32::max);
        println!(
            "{mode:?}: {n} agents, {off} beyond {VELOCITY_TOLERANCE} m/s, worst {worst:.2e} m/s; \
             infeasible cpu {} gpu {}, wall hits cpu {} gpu {}, pushed cpu {} gpu {}",
            sa.infeasible, sb.infeasible, sa.wall_hits, sb.wall_hits, sa.pushed, sb.pushed
        );
        let allowed = match mode {
            LocalMode::None | LocalMode::Boids => 0,
            _ => (n as f64 * DISCRETE_SHARE) as usize,
        };
        assert!(
            off <= allowed,
            "{mode:?}: {off} agents differ by more than {VELOCITY_TOLERANCE} m/s"
        );
        // Positions follow velocities times dt (plus a wall stop that may flip for an agent
        // whose velocity flipped): same rule.
        let off_p = dp.iter().filter(|&&d| d > VELOCITY_TOLERANCE * DT).count();
        assert!(off_p <= allowed, "{mode:?}: {off_p} positions differ");
        // The counters agree up to the agents that differ.
        assert!(sa.infeasible.abs_diff(sb.infeasible) <= allowed, "{sa:?} {sb:?}");
        assert!(sa.wall_hits.abs_diff(sb.wall_hits) <= allowed, "{sa:?} {sb:?}");
        assert!(all_free(&sc, &b), "{mode:?}: a GPU agent left free space");
        assert!(sa.pushed.abs_diff(sb.pushed) <= allowed, "{sa:?} {sb:?}");
        if matches!(mode, LocalMode::Orca | LocalMode::BoidsOrca) {
            assert!(sb.infeasible > 0 || sa.infeasible == 0);
            // The random crowd starts with overlapping bodies: the contact pass acts on both.
            assert!(sa.pushed > 0 && sb.pushed > 0, "{sa:?} {sb:?}");
        }
    }
}

/// A crowd of more than two upload slices (the GPU backend packs, uploads and reads back the
/// agents in slices of 65,536 on parallel tasks): every agent, the last slice's included,
/// comes back where the CPU puts it, so no slice lands at another's offset.
#[test]
fn a_crowd_of_several_upload_slices_matches_cpu_single() {
    let Some(ctx) = ctx() else { return };
    let n = 2 * 65_536 + 1_234;
    // Open ground at 0.5 agents/m², as in the scaling benchmark.
    let cell = 2.0;
    let cols = ((n as f64 / 0.5).sqrt() / cell).ceil() as usize;
    let mut sc = Scene::empty("slices", crowdfield::grid::Grid::new(cols, cols, cell));
    sc.groups = bottleneck().groups;
    let start = crowd(&sc, n, 5);
    let side = sc.grid.width() as f32;
    let pref = preferred(&start, [side / 2.0, side / 2.0]);
    let mode = LocalMode::BoidsOrca;
    let mut cpu = LocalLayer::new(mode, LocalBackend::CpuSingle).unwrap();
    let mut gpu = LocalLayer::with_gpu(mode, ctx).unwrap();
    let (mut a, mut b) = (start.clone(), start.clone());
    let sa = cpu.step(&sc, &mut a, &pref, DT).unwrap();
    let sb = gpu.step(&sc, &mut b, &pref, DT).unwrap();
    assert_eq!(
        gpu.grid(),
        cpu.grid(),
        "the GPU bins (positions uploaded in slices) equal the CPU's"
    );
    let (dv, dp) = differences(&a, &b);
    let allowed = (n as f64 * DISCRETE_SHARE) as usize;
    let off = dv.iter().filter(|&&d| d > VELOCITY_TOLERANCE).count();
    let off_p = dp.iter().filter(|&&d| d > VELOCITY_TOLERANCE * DT).count();
    println!("{n} agents: {off} velocities and {off_p} positions beyond tolerance; {sa:?} {sb:?}");
    assert!(
        off <= allowed && off_p <= allowed,
        "{off} velocities, {off_p} positions differ"
    );
    // Each slice on its own: a slice uploaded to the wrong place would differ throughout.
    for (k, part) in dp.chunks(65_536).enumerate() {
        let bad = part.iter().filter(|&&d| d > VELOCITY_TOLERANCE * DT).count();
        assert!(
            bad <= part.len() / 50,
            "slice {k}: {bad} of {} positions differ",
            part.len()
        );
    }
    assert!(sa.infeasible.abs_diff(sb.infeasible) <= allowed, "{sa:?} {sb:?}");
}

/// Mean speed and collision figures of a run of `steps` steps.
fn run(layer: &mut LocalLayer, sc: &Scene, a: &mut Agents, steps: usize) -> (f32, usize, f32) {
    let mut counter = CollisionCounter::default();
    let mut pairs = 0;
    for s in 0..steps {
        let pref = preferred(a, [19.0, 8.0]);
        layer.step(sc, a, &pref, DT).unwrap();
        layer.moving_obstacles[0].pos[0] = 8.0 + 0.06 * s as f32;
        pairs += counter.count(a).pairs;
        assert!(all_free(sc, a));
    }
    let speed = (0..a.len()).map(|i| a.vx[i].hypot(a.vy[i])).sum::<f32>() / a.len() as f32;
    let spread = (0..a.len()).map(|i| a.x[i]).sum::<f32>() / a.len() as f32;
    (speed, pairs, spread)
}

#[test]
fn several_steps_agree_in_aggregate() {
    let Some(ctx) = ctx() else { return };
    let sc = bottleneck();
    for mode in [LocalMode::Orca, LocalMode::BoidsOrca] {
        let start = crowd(&sc, 600, 5);
        let (mut cpu, mut gpu) = layers(mode, &ctx);
        let (mut a, mut b) = (start.clone(), start.clone());
        let (speed_a, pairs_a, x_a) = run(&mut cpu, &sc, &mut a, 20);
        let (speed_b, pairs_b, x_b) = run(&mut gpu, &sc, &mut b, 20);
        println!(
            "{mode:?}: mean speed cpu {speed_a:.4} gpu {speed_b:.4}; collisions cpu {pairs_a} gpu {pairs_b}; \
             mean x cpu {x_a:.4} gpu {x_b:.4}"
        );
        // Rounding-level differences grow through ORCA's discrete choices, but the crowd
        // must move the same: mean speed within 2 %, mean position within 5 cm, collision
        // pair-steps within a few (their count is small either way).
        assert!((speed_a - speed_b).abs() <= 0.02 * speed_a, "{mode:?}");
        assert!((x_a - x_b).abs() < 0.05, "{mode:?}");
        assert!(
            pairs_a.abs_diff(pairs_b) <= 5 + pairs_a / 5,
            "{mode:?}: {pairs_a} vs {pairs_b}"
        );
    }
}

#[test]
fn the_fish_tank_flock_matches_cpu() {
    let Some(ctx) = ctx() else { return };
    let sc = map("fish_tank.json");
    let start = {
        let mut a = crowd(&sc, 400, 3);
        a.group.iter_mut().for_each(|g| *g = 0);
        a
    };
    let mut cpu = LocalLayer::new(LocalMode::Boids, LocalBackend::CpuSingle).unwrap();
    let mut gpu = LocalLayer::with_gpu(LocalMode::Boids, ctx.clone()).unwrap();
    let (mut a, mut b) = (start.clone(), start.clone());
    let sa = cpu.flock(&sc, &mut a, DT).unwrap();
    let sb = gpu.flock(&sc, &mut b, DT).unwrap();
    let (dv, _) = differences(&a, &b);
    let worst = dv.iter().copied().fold(0.0f32, f32::max);
    println!(
        "flock: worst {worst:.2e} m/s, wall hits cpu {} gpu {}",
        sa.wall_hits, sb.wall_hits
    );
    // No linear program here: every agent within the rounding tolerance.
    assert!(worst <= VELOCITY_TOLERANCE, "{worst}");
    assert_eq!(sa.wall_hits, sb.wall_hits);
    // Twenty more steps: the school stays in the water, and the mean speed agrees.
    for _ in 0..20 {
        cpu.flock(&sc, &mut a, DT).unwrap();
        gpu.flock(&sc, &mut b, DT).unwrap();
    }
    assert!(all_free(&sc, &b));
    let speed = |x: &Agents| (0..x.len()).map(|i| x.vx[i].hypot(x.vy[i])).sum::<f32>() / x.len() as f32;
    let (sa, sb) = (speed(&a), speed(&b));
    assert!((sa - sb).abs() <= 0.01 * sa, "mean speed cpu {sa} gpu {sb}");
}

#[test]
fn head_on_groups_pass_without_collision_on_the_gpu() {
    let Some(ctx) = ctx() else { return };
    let mut layer = LocalLayer::with_gpu(LocalMode::Orca, ctx).unwrap();
    head_on_crossing(&mut layer, 400, DT);
}

#[test]
fn gpu_limits_are_errors_not_panics() {
    let Some(ctx) = ctx() else { return };
    let mut sc = bottleneck();
    sc.groups[0].orca.max_neighbors = crowdfield::gpu::GPU_MAX_NEIGHBORS + 1;
    let mut a = crowd(&sc, 10, 1);
    let pref = preferred(&a, [19.0, 8.0]);
    let mut gpu = LocalLayer::with_gpu(LocalMode::Orca, ctx).unwrap();
    let e = gpu.step(&sc, &mut a, &pref, DT).unwrap_err().to_string();
    assert!(e.contains("max_neighbors"), "{e}");
    assert!(gpu.step(&sc, &mut a, &pref[..5], DT).is_err(), "wrong length");
}

#[test]
fn local_structs_match_the_wgsl_layout() {
    use crowdfield::gpu::{self, shaders};
    let module = naga::front::wgsl::parse_str(shaders::LOCAL_ORCA).unwrap();
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).unwrap();
    let expected = [
        ("LocalParams", size_of::<gpu::GpuLocalParams>()),
        ("AgentIn", size_of::<gpu::GpuLocalAgent>()),
        ("Packed", size_of::<gpu::GpuPackedAgent>()),
        ("GroupCfg", size_of::<gpu::GpuLocalGroup>()),
        ("Mover", size_of::<gpu::GpuMover>()),
        ("Work", size_of::<gpu::GpuLocalWork>()),
        ("Out", size_of::<gpu::GpuLocalOut>()),
    ];
    let mut checked = 0;
    for (handle, ty) in module.types.iter() {
        if let Some(&(_, size)) = expected.iter().find(|e| Some(e.0) == ty.name.as_deref()) {
            assert_eq!(layouter[handle].size as usize, size, "{:?}", ty.name);
            checked += 1;
        }
    }
    assert_eq!(checked, expected.len());
}

/// The GPU's move and contact pass keep bodies out of openings narrower than themselves as
/// the CPU's do: two bodies of 4 m stay before a door of 1 m, twenty of 0.5 m before a
/// corridor of 0.25 m, and twenty of 0.5 m pass a door of 1 m, on both backends.
#[test]
fn no_body_passes_an_opening_narrower_than_itself_on_the_gpu() {
    let Some(ctx) = ctx() else { return };
    for (opening, radius, count, passes) in
        [((4, 2), 2.0, 2, 0), ((1, 8), 0.25, 20, 0), ((4, 2), 0.25, 20, 20)]
    {
        let mut gpu = LocalLayer::with_gpu(LocalMode::Orca, ctx.clone()).unwrap();
        let mut cpu = LocalLayer::new(LocalMode::Orca, LocalBackend::CpuSingle).unwrap();
        for (name, layer) in [("gpu", &mut gpu), ("cpu", &mut cpu)] {
            let a = through_opening(layer, opening, radius, count, 400, DT);
            assert_eq!(
                past_the_wall(&a, opening.1),
                passes,
                "{name}: {opening:?} cells, radius {radius} m: {:?}",
                a.x
            );
        }
    }
}
