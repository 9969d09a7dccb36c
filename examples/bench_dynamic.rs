//! Scenes that change while they run, timed: the step in which an exit closes or opens against
//! an ordinary replanning step on a 512 x 512 map, and a 10,000-walker crowd whose 1,000 oldest
//! walkers are taken off and added again where they stood every step against the same crowd
//! left alone.
//!
//! Run with `cargo run --release --example bench_dynamic [-- STEPS]` (default 20 measured steps
//! per figure, after 5 warm-up steps). Prints one Markdown row per figure.

use crowdfield::map::{self, MapFile};
use crowdfield::sim::Simulation;
use serde_json::json;
use std::path::Path;
use std::time::Instant;

/// Steps run before measuring (first-touch allocations, caches).
const WARMUP_STEPS: usize = 5;

/// A square floor of `cells` cells of 0.5 m with a row of wall blocks across its middle (gaps
/// between them), one group of `walkers` in its west half heading for an exit strip on the
/// east edge or one on the west edge, the pedestrian model.
fn floor(cells: usize, walkers: usize) -> crowdfield::Scene {
    let side = cells as f64 * 0.5;
    let walls: Vec<_> = (0..8)
        .map(|k| {
            let y = side * (k as f64 + 0.25) / 8.0;
            json!({"rect": {"min": [0.5 * side, y], "max": [0.5 * side + 2.0, y + side / 16.0]}})
        })
        .collect();
    let map = json!({
        "version": 1,
        "name": format!("dynamic {cells}"),
        "grid": {"cols": cells, "rows": cells, "cell_size": 0.5},
        "layers": {"obstacles": {"shapes": walls}},
        "groups": [{
            "name": "crowd",
            "goals": [
                {"name": "east", "rect": {"min": [side - 1.0, 0.0], "max": [side, side]}},
                {"name": "west", "rect": {"min": [0.0, 0.0], "max": [1.0, side]}}
            ],
            "spawns": [{"rect": {"min": [0.05 * side, 0.1 * side], "max": [0.45 * side, 0.9 * side]}, "count": walkers}]
        }]
    });
    let file = MapFile::from_json(&map.to_string(), "bench_dynamic.json").expect("bench map");
    map::compile(&file, Path::new("."), "bench_dynamic.json").expect("bench map compiles")
}

/// Mean milliseconds of `steps` steps of `sim`, each with the change `before(sim, k)` made
/// before it (timed with it), and of their potentials stage.
fn timed(sim: &mut Simulation, steps: usize, mut before: impl FnMut(&mut Simulation, usize)) -> (f64, f64) {
    let potentials_before = sim.times().potentials;
    let (mut wall, mut change) = (0.0, 0.0);
    for k in 0..steps {
        let t = Instant::now();
        before(sim, k);
        change += t.elapsed().as_secs_f64();
        sim.step();
        wall += t.elapsed().as_secs_f64();
    }
    let n = steps as f64;
    eprintln!("  of which the changes: {:.2} ms per step", 1000.0 * change / n);
    (
        1000.0 * wall / n,
        1000.0 * (sim.times().potentials - potentials_before) / n,
    )
}

fn main() {
    let steps: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("STEPS is a number of steps"))
        .unwrap_or(20);
    println!("| figure | ordinary step ms (potentials ms) | changed step ms (potentials ms) | ratio |");
    println!("|---|---|---|---|");

    // An exit closing or opening on 512 x 512: the potentials replan in that very step.
    let mut sim = Simulation::builder(floor(512, 10_000))
        .build()
        .expect("bench run");
    for _ in 0..WARMUP_STEPS {
        sim.step();
    }
    let plain = timed(&mut sim, steps, |_, _| {});
    let toggled = timed(&mut sim, steps, |sim, k| {
        sim.set_exit_open("east", k % 2 == 1).expect("the exit is named");
    });
    println!(
        "| 512², 10,000 walkers: the east exit closed or opened before every step | {:.1} ({:.1}) | {:.1} ({:.1}) | {:.2} |",
        plain.0,
        plain.1,
        toggled.0,
        toggled.1,
        toggled.0 / plain.0
    );

    // A cart crossing the crowd, the potentials replanned every 5 steps: a moving obstacle
    // replans in each step it moves (its cells change), and no more than a replanning step.
    let mover_run = |cart: bool, every: usize| {
        let mut sim = Simulation::builder(floor(256, 10_000))
            .replan_every(every)
            .build()
            .expect("bench run");
        if cart {
            let shape = crowdfield::mover::MoverShape::rect(3.0, 1.5);
            sim.add_obstacle(shape, [20.0, 5.0], [0.0, 1.2]).expect("a cart");
        }
        for _ in 0..WARMUP_STEPS {
            sim.step();
        }
        timed(&mut sim, steps, |_, _| {})
    };
    let (still, moving, every) = (mover_run(false, 5), mover_run(true, 5), mover_run(false, 1));
    println!(
        "| 256², 10,000 walkers, replanning every 5 steps: a cart crossing them at 1.2 m/s (against no cart; replanning every step: {:.1} ({:.1})) | {:.1} ({:.1}) | {:.1} ({:.1}) | {:.2} |",
        every.0,
        every.1,
        still.0,
        still.1,
        moving.0,
        moving.1,
        moving.1 / every.1
    );

    // 1,000 walkers in and 1,000 out every step, the crowd kept at 10,000.
    let mut sim = Simulation::builder(floor(256, 10_000))
        .build()
        .expect("bench run");
    for _ in 0..WARMUP_STEPS {
        sim.step();
    }
    let plain = timed(&mut sim, steps, |_, _| {});
    // The same crowd, its 1,000 oldest walkers taken off and put back where they stood with
    // their speeds: only the bookkeeping of handles differs from the steps left alone.
    let churned = timed(&mut sim, steps, |sim, _| {
        let a = sim.agents();
        let oldest: Vec<(u32, f32, f32, usize, f32, f32)> = (0..a.len().min(1000))
            .map(|i| {
                (
                    a.id[i],
                    a.x[i],
                    a.y[i],
                    a.group[i] as usize,
                    a.max_speed[i],
                    a.radius[i],
                )
            })
            .collect();
        let handles: Vec<u32> = oldest.iter().map(|w| w.0).collect();
        sim.remove_walkers(&handles).expect("walkers inside");
        for &(_, x, y, group, speed, radius) in &oldest {
            sim.add_walker(x, y, group, speed, radius)
                .expect("where a walker stood");
        }
    });
    println!(
        "| 256², 10,000 walkers: 1,000 taken off and put back (new handles) before every step | {:.1} ({:.1}) | {:.1} ({:.1}) | {:.2} |",
        plain.0,
        plain.1,
        churned.0,
        churned.1,
        churned.0 / plain.0
    );
}
