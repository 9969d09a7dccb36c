//! Simulation scenarios of SPEC §7 on small scenes built in code: a single walker's free speed,
//! hills walked around or over, a dense block dispersing without overlap, crossing flows, room
//! evacuation with four or two exits, exit width and flow, reproducibility, and the reasons
//! reported for agents left at the time limit.

use crowdfield::grid::Grid;
use crowdfield::params::OrcaParams;
use crowdfield::scene::{Area, Group, Scene, Spawn};
use crowdfield::sim::{SEPARATION_SLACK, SimConfig, Simulation, output};
use ndarray::Array2;

/// Mask of the cells with columns `c0..c1` and rows `r0..r1`.
fn rect(grid: &Grid, c0: usize, r0: usize, c1: usize, r1: usize) -> Array2<bool> {
    Array2::from_shape_fn(grid.shape(), |(r, c)| {
        (r0..r1).contains(&r) && (c0..c1).contains(&c)
    })
}

fn area(name: &str, mask: Array2<bool>, width: f64) -> Area {
    Area {
        name: name.into(),
        mask,
        width,
    }
}

fn group(name: &str, goals: Vec<Area>, spawn: Area, count: usize, speed: (f64, f64), radius: f64) -> Group {
    Group {
        name: name.into(),
        color: [220, 60, 30],
        goals,
        spawns: vec![Spawn { area: spawn, count }],
        speed_min: speed.0,
        speed_max: speed.1,
        radius,
        boids: None,
        orca: OrcaParams::default(),
    }
}

fn config(max_time: f64, seed: u64) -> SimConfig {
    SimConfig {
        max_time,
        seed,
        ..SimConfig::default()
    }
}

/// Smallest distance between two agents, relative to the sum of their radii.
fn min_relative_distance(sim: &Simulation) -> f64 {
    let a = &sim.agents;
    let mut worst = f64::INFINITY;
    for i in 0..a.len() {
        for j in 0..i {
            let d = (((a.x[i] - a.x[j]).powi(2) + (a.y[i] - a.y[j]).powi(2)) as f64).sqrt();
            worst = worst.min(d / (a.radius[i] + a.radius[j]) as f64);
        }
    }
    worst
}

/// A 42 m x 2 m corridor: spawn in column 1, goal in the last two columns (x >= 41 m).
fn corridor(count: usize, speed: f64) -> Scene {
    let grid = Grid::new(84, 4, 0.5);
    let mut scene = Scene::empty("corridor", grid);
    let goal = area("east end", rect(&grid, 82, 0, 84, 4), 2.0);
    let spawn = area("west end", rect(&grid, 1, 1, 2, 3), 0.0);
    scene
        .groups
        .push(group("walkers", vec![goal], spawn, count, (speed, speed), 0.2));
    scene
}

#[test]
fn single_walker_crosses_40_m_in_30_s() {
    let scene = corridor(1, 1.34);
    let mut sim = Simulation::new(scene, config(60.0, 3)).unwrap();
    let x0 = sim.agents.x[0] as f64;
    sim.run(|_| Ok(())).unwrap();
    let report = sim.report();
    let t = report.total.evacuation_time.expect("the walker arrives");
    // From x0 to the goal's edge at 41 m at 1.34 m/s.
    let expected = (41.0 - x0) / 1.34;
    assert!((t - 30.0).abs() <= 2.0, "crossing took {t} s");
    assert!(
        (t - expected).abs() <= 0.5,
        "crossing took {t} s, free walking gives {expected} s"
    );
    assert!(
        (report.total.mean_speed - 1.34).abs() < 0.05,
        "{}",
        report.total.mean_speed
    );
}

/// A 30 m x 20 m field with a Gaussian hill of `height` (sigma 2 m) at (15, 10) between a spawn
/// strip on the west side and a goal column on the east side.
fn hill(height: f32) -> Scene {
    let grid = Grid::new(60, 40, 0.5);
    let mut scene = Scene::empty("hill", grid);
    for ((r, c), h) in scene.height.indexed_iter_mut() {
        let (x, y) = grid.cell_center(r, c);
        let d2 = (x - 15.0).powi(2) + (y - 10.0).powi(2);
        *h = height * (-d2 / (2.0 * 2.0 * 2.0)).exp() as f32;
    }
    let goal = area("east", rect(&grid, 58, 0, 60, 40), 20.0);
    let spawn = area("west", rect(&grid, 2, 18, 4, 22), 0.0);
    scene
        .groups
        .push(group("hikers", vec![goal], spawn, 6, (1.34, 1.34), 0.2));
    scene
}

/// Mean over agents of the closest approach to the hill top, metres, and whether all arrived.
fn closest_approach_to_hill_top(height: f32) -> (f64, bool) {
    let mut sim = Simulation::new(hill(height), config(120.0, 5)).unwrap();
    let mut closest = vec![f64::INFINITY; sim.agents.len()];
    sim.run(|s| {
        for i in 0..s.agents.len() {
            let d = ((s.agents.x[i] as f64 - 15.0).powi(2) + (s.agents.y[i] as f64 - 10.0).powi(2)).sqrt();
            let id = s.agents.id[i] as usize;
            closest[id] = closest[id].min(d);
        }
        Ok(())
    })
    .unwrap();
    (
        closest.iter().sum::<f64>() / closest.len() as f64,
        sim.report().complete,
    )
}

#[test]
fn walkers_go_around_a_steep_hill_and_over_a_gentle_one() {
    // Steep: 4 m high, slopes up to 1.2, far past s_max = 0.5 (walking at f_min up there).
    let (steep, steep_done) = closest_approach_to_hill_top(4.0);
    // Gentle: 0.15 m high, slopes below 0.05 (at most 10 % slower uphill).
    let (gentle, gentle_done) = closest_approach_to_hill_top(0.15);
    assert!(steep_done && gentle_done);
    assert!(
        steep > 3.0,
        "steep hill: walkers came within {steep} m of the top"
    );
    assert!(
        gentle < 1.5,
        "gentle hill: walkers stayed {gentle} m from the top"
    );
}

#[test]
fn dense_block_disperses_without_overlap() {
    // 20 m x 20 m open square, exits all around its border, a 5 m x 5 m block of 80 people
    // (3.2 persons/m²) in the middle.
    let grid = Grid::new(40, 40, 0.5);
    let mut scene = Scene::empty("block", grid);
    let border = Array2::from_shape_fn(grid.shape(), |(r, c)| r == 0 || c == 0 || r == 39 || c == 39);
    let spawn = area("block", rect(&grid, 15, 15, 25, 25), 0.0);
    scene.groups.push(group(
        "crowd",
        vec![area("border", border, 80.0)],
        spawn,
        80,
        (1.2, 1.4),
        0.25,
    ));
    let mut sim = Simulation::new(scene, config(60.0, 11)).unwrap();
    let spread = |s: &Simulation| {
        let n = s.agents.len() as f64;
        let (cx, cy) = (
            s.agents.x.iter().map(|&v| v as f64).sum::<f64>() / n,
            s.agents.y.iter().map(|&v| v as f64).sum::<f64>() / n,
        );
        (0..s.agents.len())
            .map(|i| ((s.agents.x[i] as f64 - cx).powi(2) + (s.agents.y[i] as f64 - cy).powi(2)).sqrt())
            .sum::<f64>()
            / n
    };
    let spread0 = spread(&sim);
    assert!(min_relative_distance(&sim) >= 1.0, "spawned agents overlap");
    let mut worst = f64::INFINITY;
    let mut spread_at_3s = None;
    sim.run(|s| {
        if s.steps >= 2 && !s.agents.is_empty() {
            worst = worst.min(min_relative_distance(s));
        }
        if s.steps == 30 {
            spread_at_3s = Some(spread(s));
        }
        Ok(())
    })
    .unwrap();
    let spread3 = spread_at_3s.unwrap();
    assert!(
        spread3 > 1.3 * spread0,
        "block did not spread: {spread0} m -> {spread3} m"
    );
    assert!(
        worst >= 1.0 - SEPARATION_SLACK,
        "two agents came to {worst} of their minimum distance"
    );
    assert!(sim.report().complete, "everyone reaches the border");
}

#[test]
fn crossing_flows_both_arrive() {
    let grid = Grid::new(40, 40, 0.5);
    let mut scene = Scene::empty("crossing", grid);
    let east = area("east", rect(&grid, 38, 0, 40, 40), 20.0);
    let north = area("north", rect(&grid, 0, 38, 40, 40), 20.0);
    let west_spawn = area("west", rect(&grid, 1, 15, 7, 25), 0.0);
    let south_spawn = area("south", rect(&grid, 15, 1, 25, 7), 0.0);
    scene
        .groups
        .push(group("eastbound", vec![east], west_spawn, 40, (1.2, 1.4), 0.25));
    let mut g = group("northbound", vec![north], south_spawn, 40, (1.2, 1.4), 0.25);
    g.color = [30, 90, 220];
    scene.groups.push(g);
    let mut sim = Simulation::new(scene, config(90.0, 2)).unwrap();
    sim.run(|_| Ok(())).unwrap();
    let r = sim.report();
    assert!(r.complete, "remaining: {:?}", r.total.remaining);
    for g in &r.groups {
        assert_eq!(g.arrived, 40, "{}", g.name);
        // Free walking takes about 15 s; a deadlock would run to the limit.
        assert!(
            g.evacuation_time.unwrap() < 45.0,
            "{}: {:?}",
            g.name,
            g.evacuation_time
        );
    }
}

/// A 30 m x 20 m room (RiMEA test 9 shape) inside walls, with 1 m doors near the corners of
/// the long walls; `doors` chooses which of the four stay open (the others are walled).
fn rimea_room(doors: &[usize], count: usize) -> Scene {
    let grid = Grid::new(64, 44, 0.5);
    let mut scene = Scene::empty("rimea9", grid);
    // Walls: columns 1 and 62, rows 1 and 42 around the interior columns 2..62, rows 2..42.
    for ((r, c), o) in scene.obstacle.indexed_iter_mut() {
        let on_ring =
            (1..=62).contains(&c) && (1..=42).contains(&r) && (c == 1 || c == 62 || r == 1 || r == 42);
        *o = on_ring;
    }
    // Door openings: two cells (1 m) each: south-west, south-east, north-west, north-east.
    let openings = [(1usize, 4usize), (1, 58), (42, 4), (42, 58)];
    let mut goals = Vec::new();
    for &k in doors {
        let (r, c) = openings[k];
        for cc in c..c + 2 {
            scene.obstacle[[r, cc]] = false;
        }
        goals.push(area(&format!("door {k}"), rect(&grid, c, r, c + 2, r + 1), 1.0));
    }
    let spawn = area("room", rect(&grid, 3, 3, 61, 41), 0.0);
    scene
        .groups
        .push(group("occupants", goals, spawn, count, (1.2, 1.4), 0.2));
    scene
}

#[test]
fn closing_two_of_four_exits_takes_clearly_longer() {
    let run = |doors: &[usize]| {
        let mut sim = Simulation::new(rimea_room(doors, 200), config(400.0, 9)).unwrap();
        sim.run(|_| Ok(())).unwrap();
        let r = sim.report();
        r.total
            .evacuation_time
            .unwrap_or_else(|| panic!("not everyone got out: {:?}", r.total.remaining))
    };
    let four = run(&[0, 1, 2, 3]);
    let two = run(&[0, 1]);
    assert!(two > 1.4 * four, "four exits: {four} s, two exits: {two} s");
}

#[test]
fn a_wider_exit_gives_a_higher_flow() {
    // A 10 m x 10 m room with one exit in the east wall, 1 m or 2 m wide.
    let flow = |cells: usize| {
        let grid = Grid::new(24, 24, 0.5);
        let mut scene = Scene::empty("bottleneck", grid);
        for ((r, c), o) in scene.obstacle.indexed_iter_mut() {
            *o = c == 21 && !(12 - cells / 2..12 + cells.div_ceil(2)).contains(&r);
        }
        let door = area(
            "door",
            rect(&grid, 21, 12 - cells / 2, 22, 12 + cells.div_ceil(2)),
            cells as f64 * 0.5,
        );
        let spawn = area("room", rect(&grid, 1, 1, 20, 23), 0.0);
        scene
            .groups
            .push(group("occupants", vec![door], spawn, 120, (1.2, 1.4), 0.2));
        let mut sim = Simulation::new(scene, config(300.0, 4)).unwrap();
        sim.run(|_| Ok(())).unwrap();
        let r = sim.report();
        assert!(r.complete, "{:?}", r.total.remaining);
        let exit = &r.groups[0].exits[0];
        (exit.flow.unwrap(), exit.specific_flow.unwrap())
    };
    let (narrow, narrow_specific) = flow(2);
    let (wide, _) = flow(4);
    assert!(wide > 1.3 * narrow, "1 m exit: {narrow} /s, 2 m exit: {wide} /s");
    assert!((narrow_specific - narrow / 1.0).abs() < 1e-9);
}

#[test]
fn same_seed_same_report_bytes_different_seed_different_report() {
    let dir = tempfile::tempdir().unwrap();
    let write = |seed: u64, name: &str| {
        let mut sim = Simulation::new(rimea_room(&[0, 3], 40), config(30.0, seed)).unwrap();
        sim.run(|_| Ok(())).unwrap();
        let out = dir.path().join(name);
        output::write_run(&out, &sim).unwrap();
        for f in ["timings.json", "arrivals.png", "peak_density.png"] {
            assert!(out.join(f).is_file(), "{f} missing");
        }
        std::fs::read(out.join("report.json")).unwrap()
    };
    let a = write(21, "a");
    let b = write(21, "b");
    let c = write(22, "c");
    assert_eq!(a, b, "same seed, different report.json");
    assert_ne!(a, c, "different seed, same report.json");
    let parsed: serde_json::Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(parsed["seed"], 21);
    assert!(parsed.get("stages").is_none(), "no timings in report.json");
}

#[test]
fn remaining_agents_are_classified_unreachable_stuck_or_walking() {
    // Group 0 is walled in (unreachable), group 1 cannot move (speed 0: stuck), group 2 walks a
    // long way and is cut off by the time limit (walking).
    let grid = Grid::new(60, 12, 0.5);
    let mut scene = Scene::empty("leftovers", grid);
    for r in 0..4 {
        scene.obstacle[[r, 5]] = true;
    }
    for c in 0..6 {
        scene.obstacle[[4, c]] = true;
    }
    let goal = area("east", rect(&grid, 58, 0, 60, 12), 6.0);
    scene.groups.push(group(
        "walled",
        vec![goal.clone()],
        area("pen", rect(&grid, 0, 0, 4, 4), 0.0),
        3,
        (1.3, 1.3),
        0.2,
    ));
    scene.groups.push(group(
        "frozen",
        vec![goal.clone()],
        area("spot", rect(&grid, 2, 8, 4, 10), 0.0),
        2,
        (0.0, 0.0),
        0.2,
    ));
    scene.groups.push(group(
        "walkers",
        vec![goal],
        area("start", rect(&grid, 10, 8, 12, 10), 0.0),
        2,
        (1.3, 1.3),
        0.2,
    ));
    let mut sim = Simulation::new(scene, config(12.0, 1)).unwrap();
    sim.run(|_| Ok(())).unwrap();
    let r = sim.report();
    assert!(!r.complete);
    assert_eq!(
        (r.groups[0].remaining.unreachable, r.groups[0].remaining.total),
        (3, 3)
    );
    assert_eq!((r.groups[1].remaining.stuck, r.groups[1].remaining.total), (2, 2));
    assert_eq!(
        (r.groups[2].remaining.walking, r.groups[2].remaining.total),
        (2, 2)
    );
    assert_eq!(r.total.remaining.total, 7);
    assert_eq!(r.total.evacuation_time, None);
    assert_eq!(r.groups[1].min_speed, 0.0);
}

#[test]
fn a_time_step_crossing_more_than_a_cell_is_refused() {
    let e = Simulation::new(
        corridor(1, 1.34),
        SimConfig {
            dt: Some(0.5),
            ..SimConfig::default()
        },
    )
    .err()
    .expect("dt 0.5 s at 1.34 m/s crosses 0.67 m > 0.5 m cells")
    .to_string();
    assert!(e.contains("--dt") && e.contains("0.37"), "{e}");
    let sim = Simulation::new(corridor(1, 1.34), SimConfig::default()).unwrap();
    assert!(
        sim.dt * 1.34 <= 0.5,
        "automatic dt {} breaks the CFL bound",
        sim.dt
    );
}

#[test]
fn frames_and_trajectories_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = Simulation::new(corridor(3, 1.34), config(2.0, 1)).unwrap();
    let mut traj = output::TrajectoryRecorder::default();
    let mut frames = 0;
    sim.run(|s| {
        traj.record(s);
        if s.steps % 10 == 0 {
            output::write_frame(dir.path(), frames, s, Default::default())?;
            frames += 1;
        }
        Ok(())
    })
    .unwrap();
    traj.write(&dir.path().join("trajectories.csv")).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("trajectories.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("t,id,group,x,y,vx,vy"));
    assert_eq!(lines.count(), 3 * sim.steps);
    assert_eq!(frames, 2);
    let img = image::open(dir.path().join("frames/frame_00001.png")).unwrap();
    assert!(img.width() >= 84 && img.height() >= 4);
}
