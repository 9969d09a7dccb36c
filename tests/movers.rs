//! Moving obstacles: the potentials closed where an obstacle stands and is about to stand, no
//! body ever overlapping one, walkers pushed aside but never through a wall, the map's
//! `movers` and their problems, the API's obstacles; and the game example's scene.

use crowdfield::Scene;
use crowdfield::map::MapFile;
use crowdfield::mover::MoverShape;
use crowdfield::sim::{SimConfig, Simulation, StepEvents};
use std::path::Path;

#[allow(dead_code)]
#[path = "../examples/embed/game_loop.rs"]
mod game_loop;

/// Time step of every run here, seconds.
const DT: f64 = 0.1;

/// A body may end a step this much (metres) nearer an obstacle than its radius (the push
/// leaves 5 mm; this is rounding).
const OVERLAP_TOLERANCE: f64 = 1e-3;

/// A 30 m x 8 m corridor of 0.5 m cells with an exit along its east end; `spawns` and `extra`
/// (top-level keys, with a leading comma) are JSON put in place.
fn corridor(spawns: &str, extra: &str) -> String {
    format!(
        r#"{{
  "version": 1,
  "name": "corridor",
  "grid": {{"cols": 60, "rows": 16, "cell_size": 0.5}},
  "model": "pedestrian",
  "groups": [{{
    "name": "people",
    "goals": [{{"name": "east exit", "rect": {{"min": [29.5, 0], "max": [30, 8]}}}}],
    "spawns": [{spawns}],
    "speed": {{"min": 1.2, "max": 1.4}},
    "radius": 0.2
  }}]{extra}
}}"#
    )
}

fn compile(json: &str, file: &str) -> Scene {
    let map = MapFile::from_json(json, file).unwrap();
    crowdfield::map::compile(&map, Path::new("."), file).unwrap()
}

fn load_error(json: &str) -> String {
    match MapFile::from_json(json, "corridor.json") {
        Err(e) => e.to_string(),
        Ok(map) => crowdfield::map::compile(&map, Path::new("."), "corridor.json")
            .unwrap_err()
            .to_string(),
    }
}

fn sim(scene: Scene, seed: u64, max_time: f64, full_potentials: bool) -> Simulation {
    sim_replanning(scene, seed, max_time, full_potentials, 1)
}

fn sim_replanning(
    scene: Scene,
    seed: u64,
    max_time: f64,
    full_potentials: bool,
    replan_every: usize,
) -> Simulation {
    let config = SimConfig {
        dt: Some(DT),
        max_time,
        seed,
        full_potentials,
        replan_every,
        ..Default::default()
    };
    Simulation::builder(scene).config(config).build().unwrap()
}

/// Panics when a body overlaps an obstacle after a step, except those the step reports as
/// blocked; returns the smallest clearance seen (distance to the outline less the radius).
fn assert_no_overlap(sim: &Simulation, events: &StepEvents) -> f64 {
    let a = sim.agents();
    let mut least = f64::INFINITY;
    for (_, o) in sim.obstacles() {
        for i in 0..a.len() {
            let clear = o.distance(a.x[i] as f64, a.y[i] as f64) - a.radius[i] as f64;
            least = least.min(clear);
            if events.blocked.contains(&a.id[i]) {
                continue;
            }
            assert!(
                clear >= -OVERLAP_TOLERANCE,
                "t = {:.1}: walker {} at ({}, {}) overlaps obstacle {:?} by {} m",
                sim.time(),
                a.id[i],
                a.x[i],
                a.y[i],
                o.name(),
                -clear
            );
        }
    }
    least
}

#[test]
fn an_obstacle_crossing_a_corridor_never_overlaps_a_body_and_everyone_leaves() {
    let scene = compile(
        &corridor(r#"{"rect": {"min": [1, 1], "max": [9, 7]}, "count": 60}"#, ""),
        "corridor.json",
    );
    let mut sim = sim(scene, 3, 200.0, false);
    // A 2 m x 3 m cart coming head-on from the exit at 1 m/s, through the crowd and out.
    let cart = sim
        .add_obstacle(MoverShape::rect(2.0, 3.0), [24.0, 4.0], [-1.0, 0.0])
        .unwrap();
    let (mut pushed, mut least) = (0, f64::INFINITY);
    while !sim.finished() {
        let events = sim.step();
        assert!(
            events.blocked.is_empty(),
            "t = {}: {:?} blocked",
            sim.time(),
            events.blocked
        );
        least = least.min(assert_no_overlap(&sim, &events));
        pushed += events.pushed;
        let [x, _] = sim.obstacle(cart).unwrap().position();
        assert!(
            (x - (24.0 - sim.time())).abs() < 1e-9,
            "the cart moves at its velocity"
        );
    }
    assert_eq!(sim.arrivals().len(), 60, "everyone leaves");
    assert!(least > -OVERLAP_TOLERANCE, "{least}");
    eprintln!("contacts (pushes) {pushed}, least clearance {least:.4} m");
}

/// The neighbours (row-major) outside `cells` of each cell of `cells`, with the face from the
/// neighbour into the cell (`(index, dir index)`).
fn entries(scene: &Scene, cells: &[usize]) -> Vec<(usize, usize, usize)> {
    let g = scene.grid;
    let mut out = Vec::new();
    for &k in cells {
        let (r, c) = (k / g.cols, k % g.cols);
        for d in crowdfield::grid::Dir::ALL {
            if let Some((nr, nc)) = g.neighbor(r, c, d)
                && cells.binary_search(&(nr * g.cols + nc)).is_err()
            {
                out.push((nr, nc, d.opposite().index()));
            }
        }
    }
    out
}

#[test]
fn the_potential_is_closed_at_the_obstacles_cells_on_the_step_it_arrives_and_opens_when_removed() {
    // Walkers wait (pre-movement) in the west end, so that both runs hold the same crowd.
    let spawns =
        r#"{"rect": {"min": [1, 1], "max": [4, 7]}, "count": 20, "premovement": {"min": 100, "max": 100}}"#;
    let scene = compile(&corridor(spawns, ""), "corridor.json");
    // Replanning every 1000 steps: only the obstacle's changes make these steps replan.
    let mut with = sim_replanning(scene.clone(), 1, 50.0, true, 1000);
    let mut without = sim_replanning(scene.clone(), 1, 50.0, true, 1000);
    for _ in 0..3 {
        with.step();
        without.step();
    }
    // A wall-to-wall block at x = 15 m: the far side is cut off.
    let block = with
        .add_obstacle(MoverShape::rect(1.0, 8.0), [15.0, 4.0], [0.0, 0.0])
        .unwrap();
    with.step();
    without.step();
    let cells = with.blocked_cells().to_vec();
    let expected = MoverShape::rect(1.0, 8.0).covered_cells(&scene.grid, [15.0, 4.0], 0.2);
    assert_eq!(cells, expected, "the cells within a walker's radius of the block");
    let cost = &with.fields().unwrap().cost;
    for (r, c, d) in entries(&scene, &cells) {
        assert_eq!(
            cost[[r, c, d]],
            f32::INFINITY,
            "face ({r}, {c}, {d}) into the block"
        );
    }
    // West of the block the exit is out of reach; the potentials agree east of it.
    let (phi, free) = (&with.potentials()[0], &without.potentials()[0]);
    assert!(phi[[8, 10]].is_infinite() && free[[8, 10]].is_finite());
    assert_eq!(phi[[8, 50]], free[[8, 50]]);
    // Moved on, the block closes its new cells in the step it arrives there.
    with.move_obstacle(block, [20.0, 4.0], None).unwrap();
    with.step();
    without.step();
    let moved = MoverShape::rect(1.0, 8.0).covered_cells(&scene.grid, [20.0, 4.0], 0.2);
    assert_eq!(with.blocked_cells(), moved.as_slice());
    assert!(with.potentials()[0][[8, 35]].is_infinite());
    assert!(
        with.potentials()[0][[8, 30]].is_infinite(),
        "x = 15 m is west of the block now"
    );
    // Removed, the fields are those of the run that never had it, bit for bit.
    with.remove_obstacle(block).unwrap();
    with.step();
    without.step();
    assert!(with.blocked_cells().is_empty());
    assert_eq!(with.fields().unwrap().cost, without.fields().unwrap().cost);
    assert_eq!(with.potentials(), without.potentials());
}

#[test]
fn the_same_seed_gives_the_same_run_with_a_moving_obstacle() {
    let tram = r#", "movers": [{"name": "cart", "circle": {"center": [0, 0], "radius": 1.2},
        "path": [[28, 2], [2, 6], [28, 6]], "speed": 1.5, "from": 1, "loop": true}]"#;
    let json = corridor(r#"{"rect": {"min": [1, 1], "max": [9, 7]}, "count": 50}"#, tram);
    let run = |seed: u64| {
        let mut s = sim(compile(&json, "corridor.json"), seed, 40.0, false);
        let mut trace = Vec::new();
        while !s.finished() {
            let events = s.step();
            assert_no_overlap(&s, &events);
            trace.extend(s.positions().0.iter().map(|v| v.to_bits()));
            trace.push(s.obstacle(0).unwrap().position()[0].to_bits() as u32);
        }
        (trace, s.arrivals().len())
    };
    let (a, n) = run(5);
    assert_eq!(a, run(5).0);
    assert_ne!(a, run(6).0);
    assert!(n > 0);
}

#[test]
fn a_map_mover_follows_its_path_from_its_time() {
    let tram = r#", "movers": [{"name": "tram", "rect": {"min": [-2, -1], "max": [2, 1]},
        "path": [[-3, 12], [33, 12]], "speed": 2, "from": 1}]"#;
    let json = corridor(r#"{"rect": {"min": [1, 1], "max": [3, 3]}, "count": 1}"#, tram);
    let mut s = sim(compile(&json, "corridor.json"), 0, 30.0, false);
    assert_eq!(s.obstacles().count(), 1);
    let o = s.obstacle(0).unwrap();
    assert_eq!((o.name(), o.position()), ("tram", [-3.0, 12.0]));
    for _ in 0..30 {
        s.step();
    }
    // At t = 3 s: two seconds at 2 m/s from x = -3 m.
    let o = s.obstacle(0).unwrap();
    assert!((o.position()[0] - 1.0).abs() < 1e-9, "{:?}", o.position());
    assert_eq!(o.velocity(), [2.0, 0.0]);
    // Off the grid at y = 12 m (the corridor is 8 m tall): it covers no cell.
    assert!(s.blocked_cells().is_empty());
}

#[test]
fn a_walker_held_against_a_wall_is_reported_blocked_not_squeezed_into_it() {
    let json = corridor(
        r#"{"rect": {"min": [10, 0.5], "max": [11, 1.5]}, "count": 1, "premovement": {"min": 60, "max": 60}}"#,
        "",
    );
    let mut s = sim(compile(&json, "corridor.json"), 0, 30.0, false);
    s.step();
    let (x0, y0) = s.position_of(0).unwrap();
    // A disc pressing down onto the waiting walker against the corridor's south edge.
    s.add_obstacle(MoverShape::circle(1.0), [x0 as f64, y0 as f64 + 1.4], [0.0, -0.5])
        .unwrap();
    let mut blocked = false;
    for _ in 0..20 {
        let events = s.step();
        let (_, y) = s.position_of(0).unwrap();
        assert!(y >= 0.0, "never out of the domain");
        blocked |= events.blocked == vec![0];
    }
    assert!(blocked, "the walker is reported blocked");
}

#[test]
fn the_api_refuses_bad_obstacles_and_unknown_handles() {
    let json = corridor(r#"{"rect": {"min": [1, 1], "max": [3, 3]}, "count": 1}"#, "");
    let mut s = sim(compile(&json, "corridor.json"), 0, 30.0, false);
    let e = s
        .add_obstacle(MoverShape::circle(-1.0), [5.0, 5.0], [0.0, 0.0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("radius -1"), "{e}");
    let e = s
        .add_obstacle(MoverShape::rect(1.0, 1.0), [f64::NAN, 5.0], [0.0, 0.0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("position [NaN, 5.0]"), "{e}");
    assert!(
        s.move_obstacle(7, [1.0, 1.0], None)
            .unwrap_err()
            .to_string()
            .contains("7")
    );
    assert!(s.remove_obstacle(7).is_err());
    let shape = crowdfield::map::obstacle_shape(r#"{"rect": {"min": [-1, -2], "max": [1, 2]}, "angle": 90}"#)
        .unwrap();
    assert_eq!(shape.angle, 90f64.to_radians());
    let e = crowdfield::map::obstacle_shape(r#"{"circle": {"center": [0, 0], "radius": 0}}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("circle") && e.contains("radius 0"), "{e}");
    let e = crowdfield::map::obstacle_shape(r#"{"rect": {"min": [0, 0]}}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("rect") && e.contains("max"), "{e}");
}

#[test]
fn mover_problems_name_the_json_path_and_the_value() {
    let spawn = r#"{"rect": {"min": [1, 1], "max": [3, 3]}, "count": 1}"#;
    let cases = [
        (
            r#"{"polygon": {"points": [[0, 0], [1, 0], [0, 1]]}, "path": [[5, 5]]}"#,
            "movers[0].polygon",
            "rect",
        ),
        (
            r#"{"rect": {"min": [0, 0], "max": [1, 1]}, "path": []}"#,
            "movers[0].path",
            "[]",
        ),
        (
            r#"{"rect": {"min": [0, 0], "max": [1, 1]}, "path": [[0, 0], [5, 5]]}"#,
            "movers[0]",
            "speed",
        ),
        (
            r#"{"rect": {"min": [0, 0], "max": [1, 1]}, "path": [[0, 0], [5, 5]], "speed": -2}"#,
            "movers[0].speed",
            "-2",
        ),
        (
            r#"{"rect": {"min": [2, 0], "max": [1, 1]}, "path": [[0, 0]]}"#,
            "movers[0].rect",
            "min below max",
        ),
        (
            r#"{"circle": {"center": [0, 0], "radius": 1}, "path": [[0, 0]], "from": -1}"#,
            "movers[0].from",
            "-1",
        ),
        (
            r#"{"circle": {"center": [0, 0], "radius": 1}, "path": [[0, 0]], "colour": "red"}"#,
            "movers[0]",
            "colour",
        ),
        (
            r#"{"path": [[0, 0]]}"#,
            "movers[0]",
            "exactly one of `rect` and `circle`",
        ),
    ];
    for (mover, at, value) in cases {
        let e = load_error(&corridor(spawn, &format!(r#", "movers": [{mover}]"#)));
        assert!(e.contains("corridor.json"), "{e}");
        assert!(e.contains(at), "{mover}: {e}");
        assert!(e.contains(value), "{mover}: {e}");
    }
}

/// The game example (`examples/embed/game_loop.rs`) played as its `main` plays it, without
/// the frames: no body ever overlaps the tram, the tram touches few of the walkers crossing
/// its line (they turn aside ahead of it), nobody is held against a wall, and every walker
/// leaves.
#[test]
fn the_game_example_parts_the_crowd_ahead_of_the_tram_and_everyone_leaves() {
    let mut tram_steps = 0;
    let summary = game_loop::play(7, None, |sim, events| {
        assert_no_overlap(sim, events);
        let (_, tram) = sim.obstacles().next().expect("the map's tram");
        if tram.velocity() != [0.0, 0.0] {
            tram_steps += 1;
        }
    })
    .unwrap();
    eprintln!("{summary:?}, the tram moving for {tram_steps} steps");
    assert_eq!(summary.walkers, 220);
    assert_eq!(summary.out, summary.walkers, "every walker leaves");
    assert_eq!(summary.blocked, 0);
    // 26 s of tram across the crowd's way: walkers that plan around it are pushed only where
    // they cannot turn aside in time (61 pushes with seed 7; 2,274 and 24 walkers held against
    // a wall when the potentials do not see the tram).
    assert!(tram_steps >= 250, "{tram_steps}");
    assert!(summary.contacts < 200, "{} contacts", summary.contacts);
}

/// On a GPU the steps with an obstacle's cells run their continuum on the CPU (the device's
/// fields hold no moving obstacle) and say so; once the obstacle is gone the device takes the
/// steps again, replanning at once. Skipped without an adapter unless
/// `CROWDFIELD_REQUIRE_GPU=1`.
#[test]
fn on_a_gpu_an_obstacle_sends_its_steps_to_the_cpu_and_the_device_takes_them_back() {
    let scene = compile(
        &corridor(r#"{"rect": {"min": [1, 1], "max": [9, 7]}, "count": 30}"#, ""),
        "corridor.json",
    );
    let config = SimConfig {
        dt: Some(DT),
        max_time: 200.0,
        seed: 4,
        ..Default::default()
    };
    let mut sim = match Simulation::builder(scene)
        .config(config)
        .backend(crowdfield::gpu::Backend::Gpu)
        .build()
    {
        Ok(sim) => sim,
        Err(e) if std::env::var("CROWDFIELD_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("CROWDFIELD_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => {
            eprintln!("skipping the GPU run: {e}");
            return;
        }
    };
    for _ in 0..5 {
        sim.step();
    }
    assert_eq!(sim.mover_cpu_steps(), 0);
    let cart = sim
        .add_obstacle(MoverShape::rect(2.0, 3.0), [24.0, 4.0], [-1.0, 0.0])
        .unwrap();
    for _ in 0..100 {
        let events = sim.step();
        assert_no_overlap(&sim, &events);
    }
    assert_eq!(sim.mover_cpu_steps(), 100);
    let cell = first_walkers_cell(&sim);
    assert!(
        sim.potentials()[0][cell].is_finite(),
        "the CPU's potentials are read"
    );
    let device_steps = sim.gpu_read_backs().map_or(0, |r| r.steps);
    assert_eq!(device_steps, 5);
    sim.remove_obstacle(cart).unwrap();
    let mut steps = 0;
    while !sim.finished() {
        sim.step();
        steps += 1;
    }
    assert_eq!(sim.mover_cpu_steps(), 100, "the device takes the next step");
    assert_eq!(sim.gpu_read_backs().map_or(0, |r| r.steps), device_steps + steps);
    assert!(sim.gpu_fallback().is_none(), "{:?}", sim.gpu_fallback());
    assert_eq!(sim.arrivals().len(), 30);
}

/// The cell of the first walker (row, column).
fn first_walkers_cell(sim: &Simulation) -> (usize, usize) {
    let (x, y) = sim.positions();
    sim.scene().grid.cell_of(x[0] as f64, y[0] as f64).unwrap()
}
