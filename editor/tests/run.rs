//! The Run panel's simulation: step, play, pause and reset through the app's commands; the
//! agents come from the map's spawn areas and the evacuated counts per exit add up (no
//! rendering needed); the local layer chosen in the panel is installed when a run starts.

use crowdfield::local::LocalMode;
use crowdfield_editor::EditorApp;
use crowdfield_editor::command::{Command, SimCommand};
use crowdfield_editor::doc::{AreaShape, Document, GoalArea, GroupDoc, SpawnArea};
use crowdfield_editor::simrun::SimFrame;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::time::{Duration, Instant};

/// A 12 x 4 m corridor, 8 walkers at the west end, the exit at the east end.
fn corridor() -> Document {
    let mut doc = Document::new("corridor", 24, 8, 0.5);
    let mut g = GroupDoc::new("walkers", 0);
    g.goals.push(GoalArea {
        name: Some("east".into()),
        shape: AreaShape::rect_from_corners([11.5, 0.0], [12.0, 4.0]),
        width: None,
        closed: false,
    });
    g.spawns.push(SpawnArea {
        name: None,
        shape: AreaShape::rect_from_corners([0.0, 0.0], [2.0, 4.0]),
        count: 8,
        premovement: None,
        source: None,
    });
    doc.groups.push(g);
    doc
}

#[test]
fn step_play_pause_reset_and_live_exit_counts() {
    let mut app = EditorApp::new(corridor(), None, None);
    app.apply(Command::Sim(SimCommand::Step));
    assert!(app.sim.wait_frame(Duration::from_secs(30)), "no frame after Step");
    while app.sim.wait_frame(Duration::from_millis(300)) {}
    let f = app.sim.latest.as_ref().unwrap();
    assert_eq!(f.info.error, None);
    assert!(f.info.exists);
    assert_eq!(f.agents.len(), 8);
    let t1 = f.info.time;
    assert!(t1 > 0.0, "one step advanced time");
    assert!(f.agents.x.iter().all(|&x| x < 3.0));

    // Fast playback until everyone is out (12 m at 1.34 m/s: about 9 s simulated).
    app.run.speed = 20.0;
    app.apply(Command::Sim(SimCommand::Play));
    let start = Instant::now();
    loop {
        app.sim.wait_frame(Duration::from_millis(200));
        let f = app.sim.latest.as_ref().unwrap();
        if f.finished || start.elapsed() > Duration::from_secs(60) {
            break;
        }
    }
    let f = app.sim.latest.as_ref().unwrap();
    assert!(f.finished, "not finished after 60 s: t = {}", f.info.time);
    assert_eq!(f.info.walking, 0);
    assert_eq!(
        f.info.exits,
        vec![("walkers".to_string(), vec![("east".to_string(), 8)])]
    );
    assert!(f.info.time > 12.0 / 1.34 - 2.0, "t = {}", f.info.time);

    app.apply(Command::Sim(SimCommand::Pause));
    app.apply(Command::Sim(SimCommand::Reset));
    assert!(app.sim.latest.is_none());
    assert!(!app.run.playing);

    // A Reset while playing: the frames already on their way belong to the dropped run and
    // must not bring it back on screen (Play would then send no Start and nothing would move).
    app.run.speed = 1.0;
    app.apply(Command::Sim(SimCommand::Play));
    assert!(app.sim.wait_frame(Duration::from_secs(30)), "the run started");
    app.apply(Command::Sim(SimCommand::Reset));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!app.sim.poll(), "no frame of the dropped run is taken");
    assert!(app.sim.latest.is_none());
    app.apply(Command::Sim(SimCommand::Step));
    assert!(app.sim.wait_frame(Duration::from_secs(30)), "a new run starts");
    assert_eq!(app.sim.latest.as_ref().unwrap().agents.len(), 8);
}

/// Steps the app's run `steps` times (starting it from the map with the Run panel's local
/// layer) and returns the last frame.
fn step_run(app: &mut EditorApp, steps: usize) -> SimFrame {
    let target = app.sim.latest.as_ref().map_or(0, |f| f.info.steps) + steps;
    for _ in 0..steps {
        // One frame per Step (and one when the run starts): wait for it, so the next Step
        // sees the run and does not start another.
        app.apply(Command::Sim(SimCommand::Step));
        assert!(app.sim.wait_frame(Duration::from_secs(30)), "no frame after Step");
    }
    while app.sim.latest.as_ref().unwrap().info.steps < target {
        assert!(
            app.sim.wait_frame(Duration::from_secs(30)),
            "a Step sent no frame"
        );
    }
    let f = app.sim.latest.clone().unwrap();
    assert_eq!(f.info.error, None);
    assert_eq!(f.info.steps, target);
    f
}

/// Two groups walking head-on through a 12 x 3 m corridor: ORCA makes them give way, so their
/// paths differ from the runs without a local layer.
fn head_on() -> Document {
    let mut doc = Document::new("head-on", 24, 6, 0.5);
    for (name, colour, goal, spawn) in [
        ("east", 0, ([11.5, 0.0], [12.0, 3.0]), ([0.0, 0.0], [2.0, 3.0])),
        ("west", 1, ([0.0, 0.0], [0.5, 3.0]), ([10.0, 0.0], [12.0, 3.0])),
    ] {
        let mut g = GroupDoc::new(name, colour);
        g.goals.push(GoalArea {
            name: None,
            shape: AreaShape::rect_from_corners(goal.0, goal.1),
            width: None,
            closed: false,
        });
        g.spawns.push(SpawnArea {
            name: None,
            shape: AreaShape::rect_from_corners(spawn.0, spawn.1),
            count: 6,
            premovement: None,
            source: None,
        });
        doc.groups.push(g);
    }
    doc
}

/// A boids layer on a map where boids would steer no one runs as no layer, as `simulate` runs
/// it, and the run says so in the command's words.
#[test]
fn boids_with_nobody_to_steer_run_as_no_layer_and_say_so() {
    let mut app = EditorApp::new(head_on(), None, None);
    app.run.local = LocalMode::Boids;
    let f = step_run(&mut app, 1);
    assert_eq!(f.info.local, LocalMode::None, "the layer that runs");
    assert_eq!(f.info.warnings.len(), 1, "{:?}", f.info.warnings);
    assert!(
        f.info.warnings[0].contains("boids would steer no one, so the run uses --local none"),
        "{:?}",
        f.info.warnings
    );
}

/// The panel's combo box offers every local layer of the library by its name, and choosing
/// one by that name selects it.
#[test]
fn the_run_panel_offers_every_local_layer_by_its_library_name() {
    use crowdfield::names::Named;
    for &mode in LocalMode::ALL {
        let mut h = Harness::builder().with_size([1200.0, 760.0]).build_ui_state(
            |ui, app: &mut EditorApp| app.show(ui),
            EditorApp::new(head_on(), None, None),
        );
        // The first frames start the background solve; the spinner repaints until it is in.
        let settle = |h: &mut Harness<'_, EditorApp>| {
            h.run_steps(2);
            assert!(
                h.state_mut().recompute.wait(Duration::from_secs(60)),
                "the solve timed out"
            );
            h.run();
        };
        settle(&mut h);
        h.get_by_label("local layer").click();
        settle(&mut h);
        for &other in LocalMode::ALL {
            assert!(
                h.query_all_by_label(other.name()).next().is_some(),
                "{} is not offered",
                other.name()
            );
        }
        // The last: the option in the list (the selected one is also the box's text).
        h.query_all_by_label(mode.name()).last().expect("offered").click();
        settle(&mut h);
        assert_eq!(h.state().run.local, mode, "{}", mode.name());
    }
}

#[test]
fn choosing_orca_in_the_run_panel_installs_the_layer() {
    const STEPS: usize = 30;
    let mut plain = EditorApp::new(head_on(), None, None);
    let none = step_run(&mut plain, STEPS);
    assert_eq!(none.info.local, LocalMode::None, "the default stays none");

    // Choose ORCA through the panel's combo box, as a user would.
    let mut h = Harness::builder().with_size([1200.0, 760.0]).build_ui_state(
        |ui, app: &mut EditorApp| app.show(ui),
        EditorApp::new(head_on(), None, None),
    );
    // The first frames start the background solve; the spinner repaints until it is in.
    h.run_steps(2);
    assert!(
        h.state_mut().recompute.wait(Duration::from_secs(60)),
        "the solve timed out"
    );
    h.run();
    h.get_by_label("local layer").click();
    h.run();
    h.get_by_label("orca").click();
    h.run();
    assert_eq!(h.state().run.local, LocalMode::Orca);
    let orca = step_run(h.state_mut(), STEPS);
    assert_eq!(orca.info.local, LocalMode::Orca);
    let q = orca.info.quality.as_ref().expect("quality figures of the run");
    // Two rows of six walking head-on through a 3 m corridor at moderate density: ORCA keeps
    // every pair apart (the head-on scenario).
    assert_eq!(q.max_collisions, 0, "ORCA let bodies touch: {q:?}");

    // Same spawn (same seed), different walk: the layer acts.
    assert_eq!(none.info.time, orca.info.time);
    assert_eq!(none.agents.len(), orca.agents.len());
    let moved_apart = (0..none.agents.len())
        .map(|i| (none.agents.x[i] - orca.agents.x[i]).hypot(none.agents.y[i] - orca.agents.y[i]))
        .fold(0.0f32, f32::max);
    assert!(moved_apart > 0.05, "ORCA changed no path ({moved_apart} m)");

    // Reset, choose none again: the next run has no layer.
    h.state_mut().apply(Command::Sim(SimCommand::Reset));
    h.state_mut().run.local = LocalMode::None;
    let again = step_run(h.state_mut(), STEPS);
    assert_eq!(again.info.local, LocalMode::None);
    assert_eq!(again.agents.x, none.agents.x);
    assert_eq!(again.agents.y, none.agents.y);
}

/// Largest distance any fish moved between two frames (the fish never leave, so indices match).
fn largest_move(a: &SimFrame, b: &SimFrame) -> f32 {
    assert_eq!(a.agents.len(), b.agents.len());
    (0..a.agents.len())
        .map(|i| (a.agents.x[i] - b.agents.x[i]).hypot(a.agents.y[i] - b.agents.y[i]))
        .fold(0.0f32, f32::max)
}

#[test]
fn boids_make_the_fish_tank_swim_and_none_keeps_it_still() {
    const STEPS: usize = 20;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../maps/fish_tank.json");
    let doc = crowdfield_editor::mapio::load(&path).expect("bundled fish tank");
    let (width, height) = (30.0f32, 15.0f32);
    for (mode, swims) in [(LocalMode::None, false), (LocalMode::Boids, true)] {
        let mut app = EditorApp::new(doc.clone(), None, None);
        app.run.local = mode;
        let start = step_run(&mut app, 1);
        let end = step_run(&mut app, STEPS);
        assert_eq!(end.info.local, mode);
        assert_eq!(end.agents.len(), 120, "{mode:?}: a fish left the tank");
        assert!(
            end.agents.x.iter().all(|&x| (0.0..=width).contains(&x))
                && end.agents.y.iter().all(|&y| (0.0..=height).contains(&y)),
            "{mode:?}: a fish is out of the water"
        );
        let moved = largest_move(&start, &end);
        if swims {
            assert!(
                moved > 0.2,
                "boids: the fish did not swim ({moved} m in {STEPS} steps)"
            );
        } else {
            assert_eq!(moved, 0.0, "none: a goal-less fish moved");
        }
    }
}

/// After a run, the Layers panel colours the map by the worst level of service each place
/// reached (in the report's level colours) and by the time each place was clear (the RSET
/// map): every pixel of a walked cell shows that cell's value, the cells by the exit clear
/// later than those the walkers started in, and the layer follows new frames.
#[test]
fn level_of_service_and_clear_time_layers_after_a_run() {
    use crowdfield::export::Colormap;
    use crowdfield::run::planner::LOS_COLORS;
    use crowdfield_editor::layers::{FieldLayer, NOT_CLEAR_RGB, UNREACHABLE_RGB, upsample};

    let mut app = EditorApp::new(corridor(), None, None);
    app.layers.vis.isolines = false;
    app.layers.vis.field = FieldLayer::LevelOfService;
    // No run yet: the run layers leave the terrain colours (no level drawn).
    let before = app.compose();
    let (rows, cols) = app.doc.grid.shape();
    let up = upsample(cols, rows);
    let pixel = |img: &crowdfield_editor::layers::RgbaImage, r: usize, c: usize| {
        let p = img.pixels[(rows - 1 - r) * up * img.width + c * up];
        [p[0], p[1], p[2]]
    };
    assert!((0..cols).all(|c| !LOS_COLORS.contains(&pixel(&before, 4, c))));

    let early = step_run(&mut app, 4);
    let early_stamp = early.places.as_ref().unwrap().stamp;
    app.run.speed = 20.0;
    app.apply(Command::Sim(SimCommand::Play));
    let start = Instant::now();
    while !app.sim.latest.as_ref().unwrap().finished && start.elapsed() < Duration::from_secs(60) {
        app.sim.wait_frame(Duration::from_millis(200));
    }
    let f = app.sim.latest.clone().unwrap();
    assert!(f.finished);
    let places = f.places.clone().expect("a run frame carries the place maps");
    assert_ne!(places.stamp, early_stamp, "every frame has its own maps");
    assert_eq!(places.worst_level.dim(), (rows, cols));

    let los = app.compose();
    for r in 0..rows {
        for c in 0..cols {
            let level = places.worst_level[(r, c)] as usize;
            assert_eq!(pixel(&los, r, c), LOS_COLORS[level], "cell ({r}, {c})");
        }
    }

    app.layers.vis.field = FieldLayer::ClearTime;
    let clear = app.compose();
    let last = places
        .clear_time
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, &v| m.max(v));
    assert!(
        last > 12.0 / 1.34 - 2.0 && last <= f.info.time + 1e-9,
        "last clear {last}"
    );
    let mut walked = 0;
    for r in 0..rows {
        for c in 0..cols {
            let t = places.clear_time[(r, c)];
            let want = if t.is_nan() {
                UNREACHABLE_RGB
            } else if t.is_infinite() {
                NOT_CLEAR_RGB
            } else {
                walked += 1;
                Colormap::Viridis.rgb(t / last)
            };
            assert_eq!(pixel(&clear, r, c), want, "cell ({r}, {c}), clear at {t}");
        }
    }
    assert!(walked > cols, "the walkers crossed the corridor ({walked} cells)");
    // The spawn area (x < 2 m) clears before anyone reaches the cells 1-2 m before the exit.
    let finite_in = |c0: usize, c1: usize| {
        (0..rows)
            .flat_map(|r| (c0..c1).map(move |c| (r, c)))
            .map(|rc| places.clear_time[rc])
            .filter(|t| t.is_finite())
            .collect::<Vec<f64>>()
    };
    let start_clear = finite_in(0, 4).into_iter().fold(0.0f64, f64::max);
    let exit_clear = finite_in(cols - 4, cols - 2)
        .into_iter()
        .fold(f64::INFINITY, f64::min);
    assert!(
        start_clear < exit_clear,
        "spawn area clear at {start_clear} s, by the exit from {exit_clear} s"
    );
}

/// A 12 x 4 m corridor with an exit at each end and 8 walkers nearer the east one.
fn two_exits() -> Document {
    let mut doc = Document::new("two exits", 24, 8, 0.5);
    let mut g = GroupDoc::new("walkers", 0);
    for (name, lo, hi) in [
        ("east", [11.5, 0.0], [12.0, 4.0]),
        ("west", [0.0, 0.0], [0.5, 4.0]),
    ] {
        g.goals.push(GoalArea {
            name: Some(name.into()),
            shape: AreaShape::rect_from_corners(lo, hi),
            width: None,
            closed: false,
        });
    }
    g.spawns.push(SpawnArea {
        name: None,
        shape: AreaShape::rect_from_corners([7.0, 0.5], [9.0, 3.5]),
        count: 8,
        premovement: None,
        source: None,
    });
    doc.groups.push(g);
    doc
}

/// Plays the app's run at 20 times real time until it finishes (at most a minute of wall time).
fn play_to_the_end(app: &mut EditorApp) -> SimFrame {
    app.run.speed = 20.0;
    app.apply(Command::Sim(SimCommand::Play));
    let start = Instant::now();
    loop {
        app.sim.wait_frame(Duration::from_millis(200));
        let f = app.sim.latest.as_ref().unwrap();
        if f.finished || start.elapsed() > Duration::from_secs(60) {
            break;
        }
    }
    let f = app.sim.latest.clone().unwrap();
    assert!(f.finished, "not finished after 60 s: t = {}", f.info.time);
    f
}

/// The Run panel's switch closes an exit while the crowd runs: the walkers nearer it turn to
/// the other, and the map view marks it closed.
#[test]
fn an_exit_closed_from_the_run_panel_while_the_crowd_runs_takes_no_one() {
    let mut h = Harness::builder().with_size([1200.0, 760.0]).build_ui_state(
        |ui, app: &mut EditorApp| app.show(ui),
        EditorApp::new(two_exits(), None, None),
    );
    h.run_steps(2);
    assert!(
        h.state_mut().recompute.wait(Duration::from_secs(60)),
        "the solve timed out"
    );
    h.state_mut().apply(Command::Sim(SimCommand::Step));
    assert!(
        h.state_mut().sim.wait_frame(Duration::from_secs(30)),
        "no frame after Step"
    );
    h.run();
    let f = h.state().sim.latest.clone().unwrap();
    assert_eq!(
        f.info.exit_open,
        vec![("east".to_string(), true), ("west".to_string(), true)]
    );
    // The switch, as a user clicks it; the frame after it shows the exit closed.
    h.get_by_role_and_label(egui::accesskit::Role::CheckBox, "east")
        .click();
    h.run();
    let app = h.state_mut();
    // The interface may already have taken the frame the switch brought: wait for the state.
    let closed = vec![("east".to_string(), false), ("west".to_string(), true)];
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.sim.latest.as_ref().unwrap().info.exit_open != closed {
        assert!(
            Instant::now() < deadline,
            "no frame with the exit closed after the switch"
        );
        app.sim.wait_frame(Duration::from_millis(200));
    }
    let f = play_to_the_end(app);
    assert_eq!(f.info.walking, 0);
    assert_eq!(
        f.info.exits,
        vec![(
            "walkers".to_string(),
            vec![("east".to_string(), 0), ("west".to_string(), 8)]
        )],
        "everyone out through the open exit"
    );
    // Opened again in a new run, the east exit takes the walkers nearer it.
    app.apply(Command::Sim(SimCommand::Reset));
    app.apply(Command::Sim(SimCommand::Step));
    assert!(app.sim.wait_frame(Duration::from_secs(30)), "a new run starts");
    let f = play_to_the_end(app);
    let east = f.info.exits[0].1[0].1;
    assert!(east >= 6, "{:?}", f.info.exits);
}

/// A source spawns its walkers while the editor plays, at its rate.
#[test]
fn a_source_spawns_while_the_editor_plays() {
    let mut doc = corridor();
    doc.groups[0].spawns[0].source = Some(crowdfield::map::format::SourceKeys {
        rate: Some(2.0),
        from: Some(0.0),
        until: Some(3.0),
        arrivals: None,
        times: None,
    });
    let mut app = EditorApp::new(doc, None, None);
    let first = step_run(&mut app, 1);
    assert!(
        first.agents.len() <= 1,
        "{} at the first step",
        first.agents.len()
    );
    let f = play_to_the_end(&mut app);
    let evacuated: usize = f.info.exits[0].1.iter().map(|e| e.1).sum();
    assert_eq!(evacuated, 6, "2 persons per second for 3 s: {:?}", f.info.exits);
}

/// A map's moving obstacle shows in the run's frames, and a drag (the Move obstacle command)
/// puts it elsewhere while the crowd runs: the frames and the simulation follow.
#[test]
fn a_moving_obstacle_shows_and_moves_while_the_crowd_runs() {
    let mut doc = corridor();
    doc.movers.push(crowdfield::map::MoverSpec {
        name: Some("cart".into()),
        rect: Some(crowdfield::map::Rect {
            min: [-0.5, -0.5],
            max: [0.5, 0.5],
        }),
        path: vec![[6.0, 3.5]],
        ..Default::default()
    });
    let mut app = EditorApp::new(doc, None, None);
    let f = step_run(&mut app, 1);
    assert_eq!(f.obstacles.len(), 1, "the map's mover is in the run");
    let centre = |outline: &[[f64; 2]]| {
        let n = outline.len() as f64;
        let (x, y) = outline.iter().fold((0.0, 0.0), |(x, y), p| (x + p[0], y + p[1]));
        (x / n, y / n)
    };
    let (x, y) = centre(&f.obstacles[0].1);
    assert!((x - 6.0).abs() < 1e-9 && (y - 3.5).abs() < 1e-9, "at ({x}, {y})");
    app.apply(Command::Sim(SimCommand::MoveObstacle {
        handle: f.obstacles[0].0,
        to: [9.0, 1.0],
    }));
    assert!(
        app.sim.wait_frame(Duration::from_secs(30)),
        "a frame after the move"
    );
    let f = app.sim.latest.clone().unwrap();
    let (x, y) = centre(&f.obstacles[0].1);
    assert!(
        (x - 9.0).abs() < 1e-9 && (y - 1.0).abs() < 1e-9,
        "moved to ({x}, {y})"
    );
    // It stays where it was put, and everyone still leaves past it.
    let f = play_to_the_end(&mut app);
    let (x, y) = centre(&f.obstacles[0].1);
    assert!(
        (x - 9.0).abs() < 1e-9 && (y - 1.0).abs() < 1e-9,
        "still at ({x}, {y})"
    );
    assert_eq!(f.info.walking, 0, "everyone out past it");
}
