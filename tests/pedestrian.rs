//! The pedestrian model (the default of maps without `params`) against the figures of
//! pedestrian experiments and the RiMEA guideline, each criterion on a small scene of its own:
//! a lone walker at its free speed (RiMEA test 1), doors of 0.75 m to 2.5 m emptying a room
//! at 1.3–1.9 persons/(m·s) (Seyfried et al. 2009, Kretz et al. 2006) with every walker out,
//! bodies that do not overlap, Weidmann's fundamental diagram in a corridor (RiMEA test 4),
//! and RiMEA test 9's ratio of two exits to four.

use crowdfield::grid::Grid;
use crowdfield::params::{Model, OrcaParams, Params};
use crowdfield::scene::{Area, Group, Scene, Spawn};
use crowdfield::sim::{Report, SimConfig, Simulation};
use ndarray::Array2;

/// Lower and upper end of the specific flows bottleneck experiments measure, persons/(m·s).
const FLOW_BAND: (f64, f64) = (1.3, 1.9);

/// Mask of the cells whose centres lie in `[x0, x1) x [y0, y1)` (metres).
fn cells(grid: &Grid, x0: f64, y0: f64, x1: f64, y1: f64) -> Array2<bool> {
    Array2::from_shape_fn(grid.shape(), |(r, c)| {
        let (x, y) = grid.cell_center(r, c);
        (x0..x1).contains(&x) && (y0..y1).contains(&y)
    })
}

fn area(name: &str, mask: Array2<bool>, width: f64) -> Area {
    Area {
        name: name.into(),
        mask: mask.into(),
        width,
    }
}

/// A group of `count` walkers of the map defaults (0.25 m radius) at `speed` m/s.
fn walkers(goal: Area, spawn: Area, count: usize, speed: f64) -> Group {
    Group {
        name: "walkers".into(),
        color: [220, 60, 30],
        goals: vec![goal],
        spawns: vec![Spawn {
            area: spawn,
            count,
            premovement: [0.0, 0.0],
        }],
        speed_min: speed,
        speed_max: speed,
        speed_distribution: Default::default(),
        radius: 0.25,
        boids: None,
        orca: OrcaParams::default(),
    }
}

/// An empty scene of `width x height` metres in cells of `h` metres, run by the pedestrian
/// model with the parameters a map without `params` gets.
fn pedestrian_scene(name: &str, width: f64, height: f64, h: f64) -> Scene {
    let grid = Grid::new((width / h).round() as usize, (height / h).round() as usize, h);
    let mut scene = Scene::empty(name, grid);
    scene.params = Params::for_map(None, None);
    assert_eq!(scene.params.model, Model::Pedestrian);
    scene
}

fn run(scene: Scene, max_time: f64, seed: u64) -> Report {
    let mut sim = Simulation::builder(scene)
        .config(SimConfig {
            max_time,
            seed,
            ..SimConfig::default()
        })
        .build()
        .unwrap();
    sim.run(|_| Ok(())).unwrap();
    sim.report()
}

/// A 10 m x 10 m room behind a 0.5 m wall with one door of `door` metres (a whole number of
/// cells) centred on it; the goal is a strip 1 m past the wall. 100 walkers at 1.34 m/s.
fn bottleneck(door: f64, h: f64) -> Scene {
    let mut scene = pedestrian_scene("bottleneck", 12.0, 10.0, h);
    let grid = scene.grid;
    let y0 = ((5.0 - door / 2.0) / h).round() * h;
    let wall = cells(&grid, 10.0, 0.0, 10.5, 10.0);
    let opening = cells(&grid, 10.0, y0, 10.5, y0 + door);
    for (o, (&w, &d)) in scene.obstacle.iter_mut().zip(wall.iter().zip(opening.iter())) {
        *o = w && !d;
    }
    let goal = area("beyond the door", cells(&grid, 11.5, 0.0, 12.0, 10.0), door);
    let spawn = area("room", cells(&grid, 0.5, 0.5, 8.0, 9.5), 0.0);
    scene.groups.push(walkers(goal, spawn, 100, 1.34));
    scene
}

/// Every walker out, and the door's specific flow and flow (persons/s).
fn door_flow(door: f64, h: f64, seed: u64) -> (f64, f64) {
    let report = run(bottleneck(door, h), 300.0, seed);
    assert!(
        report.complete,
        "door {door} m, cells {h} m, seed {seed}: {:?} left",
        report.total.remaining
    );
    let exit = &report.total.exits[0];
    (exit.specific_flow.unwrap(), exit.flow.unwrap())
}

/// One walker at `speed` m/s down a 42 m x 2 m corridor of `h` m cells to a goal in its last
/// metre: its evacuation time and where it started (x, m).
fn corridor_walk(h: f64, speed: f64) -> (f64, f64) {
    let mut scene = pedestrian_scene("corridor", 42.0, 2.0, h);
    let grid = scene.grid;
    let goal = area("end", cells(&grid, 41.0, 0.0, 42.0, 2.0), 2.0);
    let spawn = area("start", cells(&grid, 0.75, 0.75, 1.25, 1.25), 0.0);
    scene.groups.push(walkers(goal, spawn, 1, speed));
    let mut sim = Simulation::builder(scene)
        .config(SimConfig {
            max_time: 60.0,
            ..SimConfig::default()
        })
        .build()
        .unwrap();
    let x0 = sim.agents().x[0] as f64;
    sim.run(|_| Ok(())).unwrap();
    let t = sim.report().total.evacuation_time.expect("the walker arrives");
    (t, x0)
}

#[test]
fn a_lone_walker_walks_at_its_free_speed_on_every_cell_size() {
    // RiMEA test 1: 40 m of corridor at 1.33 m/s in 26 to 34 s.
    for h in [0.125, 0.25, 0.5] {
        let (t, x0) = corridor_walk(h, 1.33);
        let free = (41.0 - x0) / 1.33;
        assert!((26.0..=34.0).contains(&t), "cells {h} m: {t} s");
        assert!(
            (t - free).abs() <= 0.3,
            "cells {h} m: {t} s against {free} s at the free speed"
        );
    }
}

#[test]
fn a_door_of_0_75_m_drains_within_the_experiments_band() {
    for seed in [0, 1] {
        let (q, _) = door_flow(0.75, 0.25, seed);
        assert!(
            (FLOW_BAND.0..=FLOW_BAND.1).contains(&q),
            "seed {seed}: {q} persons/(m·s)"
        );
    }
}

#[test]
fn door_flows_are_in_the_band_at_two_widths_and_grow_with_the_width() {
    let (q1, flow1) = door_flow(1.0, 0.25, 2);
    let (q25, flow25) = door_flow(2.5, 0.25, 2);
    for (w, q) in [(1.0, q1), (2.5, q25)] {
        assert!(
            (FLOW_BAND.0..=FLOW_BAND.1).contains(&q),
            "{w} m door: {q} persons/(m·s)"
        );
    }
    assert!(
        flow25 > 1.8 * flow1,
        "1 m door: {flow1} persons/s, 2.5 m door: {flow25} persons/s"
    );
}

#[test]
fn bodies_do_not_overlap_in_a_dense_crowd() {
    // 180 walkers (about 3 persons/m² where they start) push through a 1 m door.
    let mut scene = bottleneck(1.0, 0.25);
    scene.groups[0].spawns[0].area = area("packed", cells(&scene.grid, 2.0, 1.0, 9.75, 9.0), 0.0);
    scene.groups[0].spawns[0].count = 180;
    let mut sim = Simulation::builder(scene)
        .config(SimConfig {
            max_time: 40.0,
            ..SimConfig::default()
        })
        .build()
        .unwrap();
    let mut worst = f64::INFINITY;
    sim.run(|s| {
        let a = s.agents();
        for i in 0..a.len() {
            for j in 0..i {
                let d = (((a.x[i] - a.x[j]).powi(2) + (a.y[i] - a.y[j]).powi(2)) as f64).sqrt();
                worst = worst.min(d / (a.radius[i] + a.radius[j]) as f64);
            }
        }
        Ok(())
    })
    .unwrap();
    let report = sim.report();
    let q = &report.quality;
    assert!(
        q.max_collisions as f64 <= 0.01 * 180.0,
        "{} colliding pairs in one step",
        q.max_collisions
    );
    assert!(
        worst >= 1.0 - 2.0 * crowdfield::sim::SEPARATION_SLACK,
        "two bodies came to {worst} of their minimum distance"
    );
}

/// Weidmann's fundamental diagram: speed at density `rho` for free speed 1.34 m/s.
fn weidmann(rho: f64) -> f64 {
    1.34 * (1.0 - (-1.913 * (1.0 / rho - 1.0 / 5.4)).exp())
}

#[test]
fn speed_follows_weidmann_in_a_corridor_at_three_densities() {
    // RiMEA test 4: a 40 m x 4 m corridor filled from x = 2 m to 38 m at the density; the
    // mean speed and density of the walkers between x = 15 m and 25 m from 2 s to 5 s, before
    // the crowd's ends reach that stretch.
    for rho in [0.5, 1.5, 2.5] {
        let mut scene = pedestrian_scene("corridor", 40.0, 4.0, 0.25);
        let grid = scene.grid;
        let goal = area("end", cells(&grid, 39.5, 0.0, 40.0, 4.0), 4.0);
        let spawn = area("crowd", cells(&grid, 2.0, 0.25, 38.0, 3.75), 0.0);
        let count = (rho * 36.0 * 3.5f64).round() as usize;
        scene.groups.push(walkers(goal, spawn, count, 1.34));
        let mut sim = Simulation::builder(scene)
            .config(SimConfig {
                max_time: 5.0,
                ..SimConfig::default()
            })
            .build()
            .unwrap();
        let (mut speed, mut speeds, mut density, mut samples) = (0.0, 0usize, 0.0, 0usize);
        sim.run(|s| {
            if s.time() >= 2.0 {
                let a = s.agents();
                let mid: Vec<usize> = (0..a.len())
                    .filter(|&i| (15.0..=25.0).contains(&a.x[i]))
                    .collect();
                density += mid.len() as f64 / 40.0;
                samples += 1;
                for i in mid {
                    speed += (a.vx[i] as f64).hypot(a.vy[i] as f64);
                    speeds += 1;
                }
            }
            Ok(())
        })
        .unwrap();
        let (rho_m, v) = (density / samples as f64, speed / speeds as f64);
        let expected = weidmann(rho_m);
        assert!(
            (v / expected - 1.0).abs() <= 0.2,
            "at {rho_m:.2} persons/m²: {v:.3} m/s against Weidmann's {expected:.3} m/s"
        );
    }
}

/// RiMEA test 9's room at half size: 15 m x 10 m, 250 people, 1 m exits in the corners.
fn rimea9_room(exits: usize) -> Scene {
    let mut scene = pedestrian_scene("rimea9", 16.0, 11.0, 0.5);
    let grid = scene.grid;
    let ring = |x: f64, y: f64| x < 0.5 || y < 0.5 || x > 15.5 || y > 10.5;
    // West doors first: two exits leave the two on the west wall.
    let doors = [(1.5, 0.0), (1.5, 10.5), (13.5, 0.0), (13.5, 10.5)];
    let mut goals = Vec::new();
    for ((r, c), o) in scene.obstacle.indexed_iter_mut() {
        let (x, y) = grid.cell_center(r, c);
        *o = ring(x, y);
    }
    for (k, &(x, y)) in doors.iter().take(exits).enumerate() {
        let mask = cells(&grid, x, y, x + 1.0, y + 0.5);
        for (o, &m) in scene.obstacle.iter_mut().zip(mask.iter()) {
            if m {
                *o = false;
            }
        }
        goals.push(area(&format!("door {k}"), mask, 1.0));
    }
    let spawn = area("room", cells(&grid, 1.5, 1.5, 14.5, 9.5), 0.0);
    let mut group = walkers(goals.remove(0), spawn, 250, 1.34);
    group.goals.extend(goals);
    group.speed_min = 1.2;
    scene.groups.push(group);
    scene
}

#[test]
fn two_exits_take_about_twice_as_long_as_four() {
    let time = |exits| {
        let r = run(rimea9_room(exits), 300.0, 5);
        r.total
            .evacuation_time
            .unwrap_or_else(|| panic!("{exits} exits: {:?} left", r.total.remaining))
    };
    let (four, two) = (time(4), time(2));
    let ratio = two / four;
    assert!(
        (1.6..=2.4).contains(&ratio),
        "four exits {four} s, two exits {two} s: ratio {ratio}"
    );
}

#[test]
fn a_local_layer_on_a_map_with_exits_is_named_as_not_for_evacuation_figures() {
    use crowdfield::local::LocalMode;
    for (mode, name) in [
        (LocalMode::Orca, "orca"),
        (LocalMode::Boids, "boids"),
        (LocalMode::BoidsOrca, "boids+orca"),
    ] {
        let mut sim = Simulation::builder(bottleneck(1.0, 0.5))
            .local(mode)
            .build()
            .unwrap();
        sim.step();
        let warnings = sim.report().warnings;
        assert!(
            warnings.iter().any(|w| w.contains(&format!(
                "the local layer {name} is not meant for evacuation figures"
            ))),
            "{name}: {warnings:?}"
        );
    }
    // Without a local layer, or without exits (a flock), no such warning (the report still
    // leads with the map's own warnings).
    let not_for_evacuation = |sim: &Simulation| {
        sim.report()
            .warnings
            .iter()
            .any(|w| w.contains("the local layer"))
    };
    let mut plain = Simulation::builder(bottleneck(1.0, 0.5)).build().unwrap();
    plain.step();
    assert!(!not_for_evacuation(&plain), "{:?}", plain.report().warnings);
    let mut flock = bottleneck(1.0, 0.5);
    flock.groups[0].goals.clear();
    let mut sim = Simulation::builder(flock).local(LocalMode::Orca).build().unwrap();
    sim.step();
    assert!(!not_for_evacuation(&sim), "{:?}", sim.report().warnings);
}

#[test]
fn a_goal_strip_along_the_edge_narrower_than_a_body_is_reached() {
    // One cell of 0.25 m at the east edge: no centre of a 0.25 m body fits in it unless the
    // body may reach past the edge there.
    let mut scene = pedestrian_scene("edge goal", 20.0, 2.0, 0.25);
    let grid = scene.grid;
    let goal = area("edge", cells(&grid, 19.75, 0.0, 20.0, 2.0), 2.0);
    let spawn = area("start", cells(&grid, 0.75, 0.75, 1.25, 1.25), 0.0);
    scene.groups.push(walkers(goal, spawn, 1, 1.34));
    let report = run(scene, 60.0, 0);
    assert!(report.complete, "the walker never reached the edge's goal");
    let t = report.total.evacuation_time.unwrap();
    assert!(t < 19.5 / 1.34 + 1.0, "{t} s");
}

#[test]
fn walkers_faster_than_f_max_keep_their_own_free_speed() {
    assert!(Params::for_map(None, None).f_max < 1.6);
    let (t, x0) = corridor_walk(0.25, 1.6);
    let free = (41.0 - x0) / 1.6;
    assert!((t - free).abs() <= 0.3, "{t} s against {free} s at 1.6 m/s");
}

#[test]
fn two_groups_walking_at_each_other_pass_and_both_get_out() {
    // RiMEA test 10's room: each group's exit is on the far side, so they cross head-on. A
    // walker coming the other way is not one to wait for (they would wait for each other).
    for seed in [0, 1] {
        let mut scene = pedestrian_scene("counterflow", 20.0, 10.0, 0.25);
        let grid = scene.grid;
        let east = area("east", cells(&grid, 19.5, 4.5, 20.0, 5.5), 1.0);
        let west = area("west", cells(&grid, 0.0, 4.5, 0.5, 5.5), 1.0);
        let mut to_east = walkers(
            east,
            area("west half", cells(&grid, 2.0, 1.0, 8.0, 9.0), 0.0),
            20,
            1.34,
        );
        to_east.name = "eastbound".into();
        let mut to_west = walkers(
            west,
            area("east half", cells(&grid, 12.0, 1.0, 18.0, 9.0), 0.0),
            20,
            1.34,
        );
        to_west.name = "westbound".into();
        scene.groups.push(to_east);
        scene.groups.push(to_west);
        let report = run(scene, 300.0, seed);
        assert!(report.complete, "seed {seed}: {:?} left", report.total.remaining);
    }
}

/// Two walkers of 0.2 m radius at 1.34 m/s in a corridor `width` metres wide, the follower
/// 1 m behind the leader on the corridor's axis: the follower's speed after one step.
fn follower_speed(width: f64) -> f32 {
    let mut scene = pedestrian_scene("file", 20.0, width, 0.125);
    let grid = scene.grid;
    let goal = area("end", cells(&grid, 19.5, 0.0, 20.0, width), width);
    let spawn = area("start", cells(&grid, 1.0, 0.0, 3.0, width), 0.0);
    let mut group = walkers(goal, spawn, 2, 1.34);
    group.radius = 0.2;
    scene.groups.push(group);
    let mut sim = Simulation::builder(scene).build().unwrap();
    let y = (width / 2.0) as f32;
    sim.set_position(0, 10.0, y).unwrap();
    sim.set_position(1, 9.0, y).unwrap();
    sim.step();
    let (vx, vy) = sim.velocities();
    (vx[1] * vx[1] + vy[1] * vy[1]).sqrt()
}

#[test]
fn walkers_in_single_file_keep_the_distance_people_keep_in_a_file() {
    // In a passage narrower than two bodies, the follower keeps Seyfried et al. 2005's
    // required length: 1.06 s of its speed between the bodies (0.6 m / 1.06 s).
    let file = follower_speed(0.5);
    assert!((file - 0.6 / 1.06).abs() < 0.02, "{file} m/s");
    // Where it could walk beside the one ahead, the crowd's 0.3 s applies: 0.6 m of gap does
    // not slow it below its free speed.
    let open = follower_speed(4.0);
    assert!((open - 1.34).abs() < 0.02, "{open} m/s");
}

#[test]
fn a_door_in_a_wall_is_no_single_file_passage() {
    use crowdfield::sim::pedestrian::Floor;
    let scene = bottleneck(0.75, 0.125);
    let floor = Floor::new(&scene, 1.2);
    let g = scene.grid;
    // In the doorway, walking through it: the floor across is 0.75 m, narrower than two bodies
    // of 0.25 m, but only for the wall's 0.5 m, so the crowd passes in a zipper.
    assert!(floor.across(&g, 10.25, 5.0, 1.0, 0.0) < 1.0);
    assert!(!floor.single_file(&g, 10.25, 5.0, 1.0, 0.0, 0.25));
    // In the room, and along the wall.
    assert!(!floor.single_file(&g, 5.0, 5.0, 1.0, 0.0, 0.25));
    assert!(!floor.single_file(&g, 9.8, 2.0, 0.0, 1.0, 0.25));
    assert!(!floor.has_single_file(&g, 0.25));
    // A corridor 0.5 m wide and 20 m long is one, walking along it at any angle it allows.
    let corridor = pedestrian_scene("corridor", 20.0, 0.5, 0.125);
    let floor = Floor::new(&corridor, 1.2);
    assert!(floor.single_file(&corridor.grid, 10.0, 0.25, 1.0, 0.0, 0.2));
    assert!(floor.single_file(&corridor.grid, 10.0, 0.25, 0.96, 0.28, 0.2));
    assert!(floor.has_single_file(&corridor.grid, 0.2));
    // Bodies narrow enough to walk two abreast in it are not in a file.
    assert!(!floor.single_file(&corridor.grid, 10.0, 0.25, 1.0, 0.0, 0.1));
}
