//! The library embedded in a program that builds its scenes and agents in code (a game): bad
//! input to `plan`, `SimulationBuilder::build`, `Simulation::set_position` and
//! `LocalLayer::step` is refused with an error naming the field and the value, never a panic
//! or a run that silently goes nowhere; a run never steps past its time limit.

use crowdfield::agents::Agents;
use crowdfield::error::Error;
use crowdfield::grid::Grid;
use crowdfield::local::{LocalBackend, LocalLayer, LocalMode};
use crowdfield::params::OrcaParams;
use crowdfield::prelude::*;
use crowdfield::scene::{Area, CellMask, Group, Scene, Spawn};
use ndarray::Array2;

/// Mask of the cells with columns `c0..c1` and rows `r0..r1`.
fn rect(grid: &Grid, c0: usize, r0: usize, c1: usize, r1: usize) -> CellMask {
    Array2::from_shape_fn(grid.shape(), |(r, c)| {
        (r0..r1).contains(&r) && (c0..c1).contains(&c)
    })
    .into()
}

/// A 10 m x 5 m room of 0.5 m cells: ten walkers spawned on the left, the exit the right
/// two columns.
fn room() -> Scene {
    let grid = Grid::new(20, 10, 0.5);
    let mut scene = Scene::empty("room", grid);
    scene.groups.push(Group {
        name: "g".into(),
        color: [200, 50, 50],
        goals: vec![Area {
            name: "exit".into(),
            mask: rect(&grid, 18, 0, 20, 10),
            width: 5.0,
        }],
        spawns: vec![Spawn {
            area: Area {
                name: "s".into(),
                mask: rect(&grid, 0, 0, 6, 10),
                width: 0.0,
            },
            count: 10,
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

/// Two agents of group 0 at rest: the first at `(x, y)`, the second at (2, 2).
fn two_agents(x: f32, y: f32) -> Agents {
    let mut a = Agents::default();
    a.push(0, x, y, 0, 0.2, 1.3);
    a.push(1, 2.0, 2.0, 0, 0.2, 1.3);
    a
}

/// The message of `build()` on `scene` with `agents` (spawned when `None`), which must fail.
fn build_error(scene: Scene, agents: Option<Agents>) -> String {
    let mut b = Simulation::builder(scene).max_time(30.0);
    if let Some(a) = agents {
        b = b.agents(a);
    }
    match b.build() {
        Ok(_) => panic!("build() accepted the input"),
        Err(e) => e.to_string(),
    }
}

fn assert_says(message: &str, parts: &[&str]) {
    for p in parts {
        assert!(message.contains(p), "{message:?} does not say {p:?}");
    }
}

/// The message of one local step of `agents` on `scene`, which must fail and leave the
/// agents as they were.
fn local_error(scene: &Scene, mut agents: Agents, preferred: &[[f32; 2]]) -> String {
    // Compared as text: a NaN position equals itself there.
    let before = format!("{agents:?}");
    let mut layer = LocalLayer::new(LocalMode::Orca, LocalBackend::CpuMulti).unwrap();
    let e = layer
        .step(scene, &mut agents, preferred, 0.1)
        .expect_err("the local step accepted the input")
        .to_string();
    assert_eq!(format!("{agents:?}"), before, "a refused step changed the agents");
    e
}

#[test]
fn build_refuses_a_group_index_past_the_scenes_groups() {
    let mut a = Agents::default();
    a.push(0, 1.0, 1.0, 3, 0.2, 1.3);
    let e = build_error(room(), Some(a));
    assert_eq!(
        e,
        "<agents>: group[0]: 3: expected a group index below 1 (the scene's groups)"
    );
}

#[test]
fn build_refuses_agent_columns_of_different_lengths() {
    let mut a = two_agents(1.0, 1.0);
    a.radius.pop();
    let e = build_error(room(), Some(a));
    assert_eq!(e, "<agents>: radius: 1 entries, expected 2 (one per agent)");
}

#[test]
fn build_refuses_positions_not_finite_outside_the_domain_or_in_a_wall() {
    let e = build_error(room(), Some(two_agents(f32::NAN, 1.0)));
    assert_says(&e, &["x[0], y[0]", "NaN", "expected a finite position"]);
    let e = build_error(room(), Some(two_agents(-5.0, 100.0)));
    assert_says(
        &e,
        &[
            "x[0], y[0]",
            "(-5.0, 100.0)",
            "inside the domain, [0, 10.0) x [0, 5.0)",
        ],
    );
    let mut walled = room();
    walled.obstacle[[4, 4]] = true; // the cell around (2.25, 2.25)
    let e = build_error(walled, Some(two_agents(2.25, 2.25)));
    assert_says(
        &e,
        &["x[0], y[0]", "(2.25, 2.25)", "obstacle cell (row 4, col 4)"],
    );
}

#[test]
fn masks_of_another_shape_than_the_grid_are_refused_by_build_and_plan() {
    let mut s = room();
    s.obstacle = Array2::from_elem((3, 3), false);
    assert_eq!(
        build_error(s.clone(), None),
        "room: obstacle: shape (3, 3): expected the grid's (10, 20)"
    );
    let e = plan(&s, &PlanOptions::default()).unwrap_err().to_string();
    assert_eq!(e, "room: obstacle: shape (3, 3): expected the grid's (10, 20)");

    let mut s = room();
    s.groups[0].goals[0].mask = Array2::from_elem((3, 3), true).into();
    s.groups[0].spawns[0].area.mask = Array2::from_elem((10, 21), true).into();
    let e = build_error(s, None);
    assert_says(
        &e,
        &[
            "room: groups[0].goals[0].mask: shape (3, 3): expected the grid's (10, 20)",
            "room: groups[0].spawns[0].area.mask: shape (10, 21)",
        ],
    );
}

#[test]
fn a_goal_without_a_free_cell_is_refused_as_the_map_format_refuses_it() {
    let mut s = room();
    for r in 0..10 {
        for c in 16..20 {
            s.obstacle[[r, c]] = true;
        }
    }
    let expected = "room: groups[0].goals[0]: all 20 of its cells are obstacles: expected a goal with \
                    at least one free cell";
    assert_eq!(build_error(s.clone(), None), expected);
    assert_eq!(
        plan(&s, &PlanOptions::default()).unwrap_err().to_string(),
        expected
    );

    let mut s = room();
    s.groups[0].goals[0].mask = CellMask::empty(s.grid.shape());
    assert_says(&build_error(s, None), &["groups[0].goals[0]", "covers no cell"]);

    // A group without goals is a flock: nothing to reach, nothing to refuse.
    let mut s = room();
    s.groups[0].goals.clear();
    s.check().unwrap();
}

#[test]
fn grids_without_cells_or_with_a_bad_cell_size_are_refused() {
    for cell in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let mut s = room();
        s.grid.cell_size = cell;
        let e = build_error(s.clone(), None);
        assert_says(
            &e,
            &["room: grid.cell_size", "expected a positive, finite cell edge"],
        );
        assert!(plan(&s, &PlanOptions::default()).is_err());
        let e = local_error(&s, two_agents(1.0, 1.0), &[[1.0, 0.0], [0.0, 0.0]]);
        assert_says(&e, &["grid.cell_size"]);
    }
    let s = Scene::empty("z", Grid::new(0, 0, 0.5));
    assert_eq!(
        Simulation::builder(s.clone())
            .build()
            .err()
            .map(|e| e.to_string()),
        Some("z: grid: 0 x 0 cells: expected at least one cell".to_string())
    );
    let e = local_error(&s, two_agents(1.0, 1.0), &[[1.0, 0.0], [0.0, 0.0]]);
    assert_says(&e, &["z: grid: 0 x 0 cells"]);
}

#[test]
fn set_position_refuses_bad_points_and_leaves_the_agent() {
    let mut s = room();
    s.obstacle[[4, 10]] = true; // the cell around (5.25, 2.25)
    let mut sim = Simulation::builder(s).build().unwrap();
    sim.step();
    let before = (sim.positions().0[0], sim.positions().1[0]);
    for (x, y, says) in [
        (f32::NAN, 1.0, "expected a finite position"),
        (10.0, 1.0, "inside the domain"),
        (5.25, 2.25, "obstacle cell (row 4, col 10)"),
    ] {
        let e = sim.set_position(0, x, y).unwrap_err().to_string();
        assert_says(&e, &["x, y of agent 0", says]);
        assert_eq!((sim.positions().0[0], sim.positions().1[0]), before);
    }
    let e = sim.set_position(99, 1.0, 1.0).unwrap_err().to_string();
    assert_says(&e, &["99: expected the index of one of the 10 agents"]);
    sim.set_position(0, 7.25, 2.25).unwrap();
    assert_eq!((sim.positions().0[0], sim.positions().1[0]), (7.25, 2.25));
}

#[test]
fn the_local_step_refuses_bad_agents_and_velocities() {
    let s = room();
    let rest = [[1.0, 0.0], [0.0, 0.0]];
    let e = local_error(&s, two_agents(f32::NAN, 1.0), &rest);
    assert_says(&e, &["<agents>: x[0], y[0]", "NaN"]);
    let e = local_error(&s, two_agents(-50.0, 1e6), &rest);
    assert_says(
        &e,
        &["<agents>: x[0], y[0]", "(-50.0, 1000000.0)", "inside the domain"],
    );
    let mut a = two_agents(1.0, 1.0);
    a.vy[1] = f32::INFINITY;
    let e = local_error(&s, a, &rest);
    assert_says(&e, &["<agents>: vx[1], vy[1]", "expected a finite velocity"]);
    let e = local_error(&s, two_agents(1.0, 1.0), &[[f32::NAN, 0.0], [0.0, 0.0]]);
    assert_says(&e, &["<local step>: preferred[0]", "NaN"]);
    let mut a = Agents::default();
    a.push(0, 1.0, 1.0, 9, 0.2, 1.3);
    let e = local_error(&s, a, &[[1.0, 0.0]]);
    assert_eq!(
        e,
        "<agents>: group[0]: 9: expected a group index below 1 (the scene's groups)"
    );
    let mut a = two_agents(1.0, 1.0);
    a.x.push(3.0);
    let e = local_error(&s, a, &[[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]);
    assert_eq!(e, "<agents>: id: 2 entries, expected 3 (one per agent)");
}

#[test]
fn step_does_nothing_past_the_time_limit() {
    let mut sim = Simulation::builder(room()).dt(0.1).max_time(1.0).build().unwrap();
    for _ in 0..30 {
        sim.step();
    }
    assert!(sim.finished());
    assert_eq!(sim.steps(), 10);
    assert!((sim.time() - 1.0).abs() < 1e-9, "time {}", sim.time());
    let (x, y) = (sim.positions().0.to_vec(), sim.positions().1.to_vec());
    assert!(sim.step().arrivals.is_empty());
    assert_eq!((sim.positions().0, sim.positions().1), (&x[..], &y[..]));
}

#[test]
fn an_endless_time_limit_is_refused_saying_finite() {
    let e = Simulation::builder(room())
        .max_time(f64::INFINITY)
        .build()
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        e.as_deref(),
        Some("SimConfig.max_time: inf: expected a positive, finite number of seconds")
    );
}

#[test]
fn whole_potential_at_a_cell_outside_the_grid_is_no_way_out() {
    let mut sim = Simulation::builder(room()).build().unwrap();
    sim.step();
    assert_eq!(sim.whole_potential_at(0, (100, 100)), f64::INFINITY);
    assert_eq!(sim.whole_potential_at(0, (10, 0)), f64::INFINITY);
    assert_eq!(sim.whole_potential_at(5, (0, 0)), f64::INFINITY);
    assert!(sim.whole_potential_at(0, (5, 2)).is_finite());
}

#[test]
fn a_checked_scene_and_agents_pass() {
    let s = room();
    s.check().unwrap();
    let e: Option<Error> = two_agents(1.0, 1.0).check_on(&s, true).err();
    assert!(e.is_none(), "{e:?}");
}
