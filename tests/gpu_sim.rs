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
