//! Simulation step benchmark: steps per second, broken down by stage, for 10,000 agents in
//! 4 groups on a 256x256 grid and 100,000 agents on 512x512, potentials recomputed every step.
//!
//! Run with `cargo run --release --example bench_sim [-- STEPS [SIZE [MODEL]]]` (SIZE 256 or 512
//! runs that grid only, for profiling; MODEL `continuum_crowds`, the default, or `pedestrian`). Each group spawns in one
//! quadrant and heads for the opposite side, so the groups cross in the middle; the figures are
//! averaged over STEPS steps (default 100) after 5 warm-up steps.

use crowdfield::grid::Grid;
use crowdfield::names::Named;
use crowdfield::params::{Model, OrcaParams};
use crowdfield::scene::{Area, CellMask, Group, Scene, Spawn};
use crowdfield::sim::{SimConfig, Simulation, StageTimes};
use ndarray::Array2;
use std::time::Instant;

/// Steps run before measuring (first-touch allocations, caches).
const WARMUP_STEPS: usize = 5;

fn rect(grid: &Grid, c0: usize, r0: usize, c1: usize, r1: usize) -> CellMask {
    Array2::from_shape_fn(grid.shape(), |(r, c)| {
        (r0..r1).contains(&r) && (c0..c1).contains(&c)
    })
    .into()
}

/// `n x n` cells of 0.5 m, a few pillars, four groups of `agents / 4` in the four quadrants,
/// each walking to the opposite border.
fn scene(n: usize, agents: usize) -> Scene {
    let grid = Grid::new(n, n, 0.5);
    let mut scene = Scene::empty(&format!("bench{n}"), grid);
    // Pillars: 2x2-cell obstacles on a coarse lattice, so the fields are not trivial.
    for r in (n / 8..n - n / 8).step_by(n / 8) {
        for c in (n / 8..n - n / 8).step_by(n / 8) {
            for (dr, dc) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                scene.obstacle[[r + dr, c + dc]] = true;
            }
        }
    }
    let q = n / 2;
    let (a, b) = (n / 16, q - n / 16);
    let groups = [
        ("east", rect(&grid, n - 2, 0, n, n), rect(&grid, a, a, b, b)),
        (
            "west",
            rect(&grid, 0, 0, 2, n),
            rect(&grid, q + a, q + a, q + b, q + b),
        ),
        (
            "north",
            rect(&grid, 0, n - 2, n, n),
            rect(&grid, q + a, a, q + b, b),
        ),
        ("south", rect(&grid, 0, 0, n, 2), rect(&grid, a, q + a, b, q + b)),
    ];
    for (k, (name, goal, spawn)) in groups.into_iter().enumerate() {
        scene.groups.push(Group {
            name: name.into(),
            color: [[220, 60, 30], [30, 90, 220], [40, 160, 60], [200, 160, 20]][k],
            goals: vec![Area {
                name: format!("{name} side"),
                mask: goal,
                width: n as f64 * 0.5,
            }],
            spawns: vec![Spawn {
                area: Area {
                    name: format!("{name} start"),
                    mask: spawn,
                    width: 0.0,
                },
                count: agents / 4,
                premovement: [0.0, 0.0],
            }],
            speed_min: 1.2,
            speed_max: 1.4,
            speed_distribution: Default::default(),
            radius: 0.2,
            boids: None,
            orca: OrcaParams::default(),
        });
    }
    scene
}

fn bench(n: usize, agents: usize, steps: usize, model: Model) {
    let t = Instant::now();
    let mut scene = scene(n, agents);
    scene.params = scene.params.clone().with_model(model);
    let mut sim = Simulation::builder(scene).build().expect("bench scene");
    let spawn_s = t.elapsed().as_secs_f64();
    for _ in 0..WARMUP_STEPS {
        sim.step();
    }
    let before = *sim.times();
    let wall = Instant::now();
    for _ in 0..steps {
        sim.step();
    }
    let wall_s = wall.elapsed().as_secs_f64();
    let d = *sim.times();
    let per = |a: f64, b: f64| 1000.0 * (a - b) / steps as f64;
    let ms = StageTimes {
        splat: per(d.splat, before.splat),
        fields: per(d.fields, before.fields),
        potentials: per(d.potentials, before.potentials),
        advection: per(d.advection, before.advection),
        separation: per(d.separation, before.separation),
    };
    println!(
        "| {n}x{n} | {agents} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {:.2} |",
        steps as f64 / wall_s,
        1000.0 * wall_s / steps as f64,
        ms.splat,
        ms.fields,
        ms.potentials,
        ms.advection,
        ms.separation,
        sim.agents().len(),
        spawn_s
    );
}

/// A 30 m x 20 m room inside walls with four 1 m doors near the corners (RiMEA test 9 shape)
/// and `agents` occupants: the scene on which `--replan-every` is measured.
fn four_exit_room(agents: usize) -> Scene {
    let grid = Grid::new(64, 44, 0.5);
    let mut scene = Scene::empty("four-exit room", grid);
    for ((r, c), o) in scene.obstacle.indexed_iter_mut() {
        *o = (1..=62).contains(&c) && (1..=42).contains(&r) && (c == 1 || c == 62 || r == 1 || r == 42);
    }
    let mut goals = Vec::new();
    for (k, (r, c)) in [(1usize, 4usize), (1, 58), (42, 4), (42, 58)]
        .into_iter()
        .enumerate()
    {
        scene.obstacle[[r, c]] = false;
        scene.obstacle[[r, c + 1]] = false;
        goals.push(Area {
            name: format!("door {k}"),
            mask: rect(&grid, c, r, c + 2, r + 1),
            width: 1.0,
        });
    }
    scene.groups.push(Group {
        name: "occupants".into(),
        color: [220, 60, 30],
        goals,
        spawns: vec![Spawn {
            area: Area {
                name: "room".into(),
                mask: rect(&grid, 3, 3, 61, 41),
                width: 0.0,
            },
            count: agents,
            premovement: [0.0, 0.0],
        }],
        speed_min: 1.2,
        speed_max: 1.4,
        speed_distribution: Default::default(),
        radius: 0.2,
        boids: None,
        orca: OrcaParams::default(),
    });
    scene
}

/// Evacuation time and potential-stage time with the potentials recomputed every K steps.
fn replan_accuracy() {
    println!();
    println!(
        "| replan every K steps | evacuation time s | difference vs K=1 | potentials ms/step | steps/s |"
    );
    println!("|---|---|---|---|---|");
    let mut reference = None;
    for k in [1, 2, 5, 10, 25] {
        let config = SimConfig {
            replan_every: k,
            seed: 1,
            ..SimConfig::default()
        };
        let mut sim = Simulation::builder(four_exit_room(1000))
            .config(config)
            .build()
            .expect("room scene");
        sim.run(|_| Ok(())).expect("run");
        let t = sim.report().total.evacuation_time.unwrap_or(f64::NAN);
        let t1 = *reference.get_or_insert(t);
        println!(
            "| {k} | {t:.1} | {:+.1} % | {:.2} | {:.1} |",
            100.0 * (t - t1) / t1,
            1000.0 * sim.times().potentials / sim.steps() as f64,
            sim.steps() as f64 / sim.times().total()
        );
    }
}

fn main() {
    let steps: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("STEPS must be a whole number"))
        .unwrap_or(100);
    let only: Option<usize> = std::env::args()
        .nth(2)
        .map(|s| s.parse().expect("SIZE must be a whole number"));
    let model = match std::env::args().nth(3) {
        None => Model::ContinuumCrowds,
        Some(name) => Model::parse(&name).unwrap_or_else(|e| panic!("MODEL: {e}")),
    };
    println!("model: {}", model.name());
    println!("threads: {}", rayon::current_num_threads());
    println!(
        "| grid | agents | steps/s | ms/step | splat | fields | potentials | advection | separation | agents left | spawn s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    if only.is_none_or(|n| n == 256) {
        bench(256, 10_000, steps, model);
    }
    if only.is_none_or(|n| n == 512) {
        bench(512, 100_000, (steps / 5).max(5), model);
    }
    if only.is_none() {
        replan_accuracy();
    }
}
