//! Scenes that change while they run, timed: the step in which an exit closes or opens against
//! an ordinary replanning step on a 512 x 512 map, and a 10,000-walker crowd with 1,000 walkers
//! added and 1,000 removed every step against the same crowd left alone.
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
    let mut wall = 0.0;
    for k in 0..steps {
        let t = Instant::now();
        before(sim, k);
        sim.step();
        wall += t.elapsed().as_secs_f64();
    }
    let n = steps as f64;
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

    // 1,000 walkers in and 1,000 out every step, the crowd kept at 10,000.
    let mut sim = Simulation::builder(floor(256, 10_000))
        .build()
        .expect("bench run");
    for _ in 0..WARMUP_STEPS {
        sim.step();
    }
    let plain = timed(&mut sim, steps, |_, _| {});
    let side = 128.0f32;
    let churned = timed(&mut sim, steps, |sim, k| {
        let oldest: Vec<u32> = sim.handles().iter().take(1000).copied().collect();
        for h in oldest {
            sim.remove_walker(h).expect("a walker inside");
        }
        for j in 0..1000 {
            // A 40 x 25 lattice of 0.6 m in the spawn area, shifted every step.
            let x = 0.3 * side + 0.6 * (j % 40) as f32 + 0.05 * (k % 5) as f32;
            let y = 0.1 * side + 0.6 * (j / 40) as f32 + 10.0 * (k % 6) as f32;
            sim.add_walker(x, y, 0, 1.34, 0.25).expect("a free spot");
        }
    });
    println!(
        "| 256², 10,000 walkers: 1,000 added and 1,000 removed before every step | {:.1} ({:.1}) | {:.1} ({:.1}) | {:.2} |",
        plain.0,
        plain.1,
        churned.0,
        churned.1,
        churned.0 / plain.0
    );
}
