//! The simulation with the continuum step on the GPU (splat, speed and cost, potentials in one
//! submission) against the same run on the CPU.

#[allow(dead_code)] // the shared helper also holds the random generator, unused here
mod gpu_support;

use crowdfield::gpu::GpuContext;
use crowdfield::params::Model;
use crowdfield::sim::{SimConfig, Simulation};
use gpu_support::gpu;
use std::path::Path;
use std::sync::Arc;

/// Runs `steps` steps of `map` from the same seed, on the GPU when `ctx` is given; with
/// `calibrated`, Weidmann's law, a 1 m² density window and the density at the walker.
fn run(
    map: &str,
    steps: usize,
    replan_every: usize,
    calibrated: bool,
    ctx: Option<Arc<GpuContext>>,
) -> Simulation {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps").join(map);
    let mut scene = crowdfield::map::load(&path).unwrap();
    // The published model: the walkers move at the fields' speed, which this test compares.
    scene.params = scene.params.clone().with_model(Model::ContinuumCrowds);
    if calibrated {
        scene.params.speed_law = crowdfield::params::SpeedLaw::Weidmann;
        scene.params.density_window = 1.0;
        scene.params.density_at_walker = true;
    }
    let config = SimConfig {
        seed: 7,
        replan_every,
        ..SimConfig::default()
    };
    let mut builder = Simulation::builder(scene).config(config);
    if let Some(ctx) = ctx {
        builder = builder.backend(crowdfield::gpu::Backend::Gpu).gpu(ctx);
    }
    let mut sim = builder.build().unwrap();
    for _ in 0..steps {
        sim.step();
    }
    sim
}

#[test]
fn gpu_continuum_steps_follow_the_cpu_run() {
    if gpu().is_none() {
        return;
    }
    let ctx = Arc::new(GpuContext::new().expect("an adapter, as gpu() found one"));
    for (map, replan_every, calibrated) in [
        ("four_exits.json", 1, false),
        ("crossing.json", 3, false),
        ("four_exits.json", 1, true),
    ] {
        let steps = 40;
        let cpu = run(map, steps, replan_every, calibrated, None);
        let gpu = run(map, steps, replan_every, calibrated, Some(ctx.clone()));
        let map = format!("{map}{}", if calibrated { " (calibrated)" } else { "" });
        assert_eq!(gpu.gpu_fallback(), None, "{map}: the GPU ran every step");
        assert_eq!(gpu.solver_name(), "gpu-continuum");
        assert_eq!(cpu.solver_name(), "fmm-cpu");
        // Same agents left (nobody arrives in 4 s from these spawns, or both lose the same).
        assert_eq!(gpu.agents().len(), cpu.agents().len(), "{map}");
        // The GPU's fixed-point splat and f32 fields differ from the CPU's in the last bits;
        // after 40 steps the walkers are where the CPU put them to within centimetres, while
        // any wrong field (a flipped axis, a missing wall, a wrong speed law) moves them by
        // metres over the 4 s.
        let (mut worst, mut sum) = (0.0f32, 0.0f32);
        for i in 0..cpu.agents().len() {
            let (a, b) = (&cpu.agents(), &gpu.agents());
            assert_eq!(a.id[i], b.id[i]);
            let d = (a.x[i] - b.x[i]).hypot(a.y[i] - b.y[i]);
            worst = worst.max(d);
            sum += d;
        }
        let mean = sum / cpu.agents().len() as f32;
        println!(
            "{map}: {} agents, mean offset {mean:.4} m, worst {worst:.4} m",
            cpu.agents().len()
        );
        assert!(mean < 0.05, "{map}: mean offset {mean} m");
        assert!(worst < 0.5, "{map}: worst offset {worst} m");
        // They did walk: a comparison of two frozen crowds would prove nothing.
        let moved: f32 = (0..gpu.agents().len())
            .map(|i| gpu.agents().vx[i].hypot(gpu.agents().vy[i]))
            .sum::<f32>()
            / gpu.agents().len() as f32;
        assert!(moved > 0.3, "{map}: mean speed {moved} m/s");
    }
}

/// The read-backs of the continuum step on the GPU are exact: 8 bytes per walker on a step that
/// does not replan (the velocity), plus 32 bytes per batch of solver passes on one that does;
/// the pedestrian model adds 4 bytes per walker and group (its potential under each group's
/// field). Nothing else is read unless asked for.
#[test]
fn gpu_steps_read_back_the_velocities_and_nothing_else() {
    if gpu().is_none() {
        return;
    }
    let ctx = Arc::new(GpuContext::new().expect("an adapter, as gpu() found one"));
    for model in [Model::ContinuumCrowds, Model::Pedestrian] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/crossing.json");
        let mut scene = crowdfield::map::load(&path).unwrap();
        scene.params = scene.params.clone().with_model(model);
        let groups = scene.groups.len() as u64;
        let per_walker = if model == Model::Pedestrian {
            8 + 4 * groups
        } else {
            8
        };
        let cells = scene.grid.len() as u64;
        let config = SimConfig {
            seed: 7,
            replan_every: 4,
            ..SimConfig::default()
        };
        let mut sim = Simulation::builder(scene)
            .config(config)
            .backend(crowdfield::gpu::Backend::Gpu)
            .gpu(ctx.clone())
            .build()
            .unwrap();
        assert_eq!(sim.gpu_read_backs(), None, "no step yet");
        let mut last = crowdfield::sim::GpuReadBacks::default();
        for step in 0..9 {
            let walkers = sim.agents().len() as u64;
            sim.step();
            let now = sim.gpu_read_backs().expect("the step ran on the GPU");
            let reads = now.step_read_backs - last.step_read_backs;
            let bytes = now.step_bytes - last.step_bytes;
            let asked = now.on_demand_bytes - last.on_demand_bytes;
            if step % 4 == 0 {
                // The velocities and one 32-byte state per batch of solver passes.
                assert!(reads >= 2, "{model:?} step {step}: {reads} read-backs");
                assert_eq!(
                    bytes,
                    per_walker * walkers + 32 * (reads - 1),
                    "{model:?} step {step}"
                );
            } else {
                assert_eq!((reads, bytes), (1, per_walker * walkers), "{model:?} step {step}");
            }
            assert_eq!(asked, 0, "{model:?} step {step}: bytes asked for");
            assert_eq!(now.steps, step + 1);
            last = now;
        }
        // The outputs' accessors read the rest on demand, once per step.
        assert!(sim.fields().is_some());
        assert!(sim.fields().is_some());
        let fields_bytes = sim.gpu_read_backs().unwrap().on_demand_bytes - last.on_demand_bytes;
        assert_eq!(fields_bytes, 11 * 4 * cells);
        assert_eq!(sim.potentials().len(), groups as usize);
        let potential_bytes =
            sim.gpu_read_backs().unwrap().on_demand_bytes - last.on_demand_bytes - fields_bytes;
        assert_eq!(potential_bytes, groups * cells * 4);
    }
}

/// A whole evacuation on the GPU backend against the CPU backend: the same walkers get out at
/// nearly the same times. The GPU's fixed-point splat and f32 fields, potentials and velocities
/// differ from the CPU's in the last bits, which moves a walker by millimetres per step and can
/// swap who passes a door first; a wrong field, gradient or sampling moves the evacuation by
/// tens of seconds.
#[test]
fn gpu_evacuation_follows_the_cpu_one() {
    if gpu().is_none() {
        return;
    }
    let ctx = Arc::new(GpuContext::new().expect("an adapter, as gpu() found one"));
    let runs: Vec<Simulation> = [None, Some(ctx)]
        .into_iter()
        .map(|ctx| {
            let mut sim = run("four_exits.json", 0, 2, false, ctx);
            sim.run(|_| Ok(())).unwrap();
            sim
        })
        .collect();
    let (cpu, gpu) = (runs[0].report(), runs[1].report());
    assert_eq!(runs[1].gpu_fallback(), None);
    assert!(
        cpu.complete && gpu.complete,
        "both evacuate: {} / {}",
        cpu.complete,
        gpu.complete
    );
    assert_eq!(cpu.total.arrived, gpu.total.arrived);
    let (tc, tg) = (
        cpu.total.evacuation_time.unwrap(),
        gpu.total.evacuation_time.unwrap(),
    );
    println!("four_exits: evacuation {tc:.1} s on the CPU, {tg:.1} s on the GPU");
    assert!((tc - tg).abs() <= 0.05 * tc + 1.0, "evacuation {tc} s vs {tg} s");
    // The arrival curves agree: at every tenth of the run about as many are out.
    let out_by = |r: &crowdfield::sim::Report, t: f64| -> f64 {
        r.total
            .arrival_curve
            .iter()
            .take_while(|p| p.0 <= t)
            .last()
            .map_or(0.0, |p| p.1 as f64)
    };
    let n = cpu.total.arrived as f64;
    for k in 1..10 {
        let t = tc * k as f64 / 10.0;
        let (a, b) = (out_by(&cpu, t), out_by(&gpu, t));
        assert!(
            (a - b).abs() <= 0.05 * n + 2.0,
            "at {t:.1} s: {a} out on the CPU, {b} on the GPU"
        );
    }
}

/// A route through a waypoint and exit shares on the GPU: every walker passes the waypoint
/// and leaves, as on the CPU, in about the same time.
#[test]
fn a_route_and_exit_shares_run_on_the_gpu_as_on_the_cpu() {
    if gpu().is_none() {
        return;
    }
    let map = r#"{
        "version": 1,
        "name": "route on the gpu",
        "grid": {"cols": 40, "rows": 20, "cell_size": 0.5},
        "groups": [{
            "name": "walkers",
            "goals": [
                {"name": "east exit", "rect": {"min": [19.5, 0], "max": [20, 10]}},
                {"name": "west exit", "rect": {"min": [0, 0], "max": [0.5, 10]}}
            ],
            "spawns": [{"rect": {"min": [2, 1], "max": [6, 9]}, "count": 30}],
            "route": [{"waypoint": {"name": "gate", "circle": {"center": [12, 5], "radius": 1}}}],
            "exit_shares": {"east exit": 0.5, "west exit": 0.5}
        }]
    }"#;
    let file = crowdfield::map::MapFile::from_json(map, "route.json").unwrap();
    let ctx = Arc::new(GpuContext::new().expect("an adapter, as gpu() found one"));
    let runs: Vec<Simulation> = [None, Some(ctx)]
        .into_iter()
        .map(|ctx| {
            let scene = crowdfield::map::compile(&file, Path::new("."), "route.json").unwrap();
            let mut builder = Simulation::builder(scene).seed(3).max_time(200.0);
            if let Some(ctx) = ctx {
                builder = builder.backend(crowdfield::gpu::Backend::Gpu).gpu(ctx);
            }
            let mut sim = builder.build().unwrap();
            sim.run(|_| Ok(())).unwrap();
            sim
        })
        .collect();
    assert_eq!(runs[1].gpu_fallback(), None);
    assert!(
        runs[1].solver_description().starts_with("gpu"),
        "{}",
        runs[1].solver_description()
    );
    let (cpu, gpu) = (runs[0].report(), runs[1].report());
    assert!(cpu.complete && gpu.complete, "both evacuate");
    for sim in &runs {
        let gates = sim.stages_passed().len();
        assert_eq!(gates, 30, "every walker passes the gate: {gates}");
    }
    let (tc, tg) = (
        cpu.total.evacuation_time.unwrap(),
        gpu.total.evacuation_time.unwrap(),
    );
    println!("route: evacuation {tc:.1} s on the CPU, {tg:.1} s on the GPU");
    assert!((tc - tg).abs() <= 0.1 * tc + 1.0, "evacuation {tc} s vs {tg} s");
}
