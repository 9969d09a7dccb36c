//! Routes, goals and speed regions: waypoints every walker passes, waiting areas that hold
//! walkers for their seconds or until released, fixed exit shares, goals set at run time,
//! regions that slow walkers and that the potentials route around, and the map's errors.

use crowdfield::Scene;
use crowdfield::map::MapFile;
use crowdfield::sim::{SimConfig, Simulation};
use std::collections::HashMap;
use std::path::Path;

/// Time step of every run here, seconds.
const DT: f64 = 0.1;

/// Index of each exit in the group's goals.
const WEST: usize = 0;
const EAST: usize = 1;

/// A 20 m x 10 m room of 0.5 m cells with a "west exit" (x < 1 m) and an "east exit"
/// (x >= 19 m) across its height; `group` (extra keys of the group: spawns, route, shares),
/// `top` (extra top-level keys) and `events` are JSON text put in place.
fn room(group: &str, top: &str, events: &str) -> String {
    format!(
        r#"{{
  "version": 1,
  "name": "room",
  "grid": {{"cols": 40, "rows": 20, "cell_size": 0.5}},
  "model": "pedestrian",
  "groups": [{{
    "name": "people",
    "goals": [
      {{"name": "west exit", "rect": {{"min": [0, 0], "max": [1, 10]}}}},
      {{"name": "east exit", "rect": {{"min": [19, 0], "max": [20, 10]}}}}
    ],
    "speed": {{"min": 1.2, "max": 1.4}},
    "radius": 0.2,
    {group}
  }}],
  {top}
  "events": [{events}]
}}"#
    )
}

fn compile(json: &str) -> Scene {
    let map = MapFile::from_json(json, "room.json").unwrap();
    crowdfield::map::compile(&map, Path::new("."), "room.json").unwrap()
}

fn load_error(json: &str) -> String {
    match MapFile::from_json(json, "room.json") {
        Err(e) => e.to_string(),
        Ok(map) => crowdfield::map::compile(&map, Path::new("."), "room.json")
            .unwrap_err()
            .to_string(),
    }
}

fn sim(scene: Scene, seed: u64, max_time: f64) -> Simulation {
    let config = SimConfig {
        dt: Some(DT),
        max_time,
        seed,
        ..Default::default()
    };
    Simulation::builder(scene).config(config).build().unwrap()
}

/// Whether `(x, y)` lies in the rectangle `[x0, x1] x [y0, y1]` grown by `margin`.
fn within(p: (f32, f32), [x0, y0, x1, y1]: [f64; 4], margin: f64) -> bool {
    let (x, y) = (p.0 as f64, p.1 as f64);
    x >= x0 - margin && x <= x1 + margin && y >= y0 - margin && y <= y1 + margin
}

/// Runs `sim` to its end, logging each walker's positions (start of each step).
fn run_logged(sim: &mut Simulation) -> HashMap<u32, Vec<(f64, (f32, f32))>> {
    let mut log: HashMap<u32, Vec<(f64, (f32, f32))>> = HashMap::new();
    let mut stages = 0;
    while !sim.finished() {
        let t = sim.time();
        for &h in sim.handles() {
            log.entry(h).or_default().push((t, sim.position_of(h).unwrap()));
        }
        stages += sim.step().stages.len();
    }
    assert_eq!(
        stages,
        sim.stages_passed().len(),
        "every stage passed is a step's event"
    );
    log
}

#[test]
fn a_route_via_a_waypoint_takes_every_walker_through_it_before_it_leaves() {
    // Walkers start low on the west side; the waypoint sits high in the middle; the quickest
    // way to the east exit would pass far below it.
    let gate = [9.0, 7.0, 11.0, 9.0];
    let json = room(
        r#""spawns": [{"rect": {"min": [2, 1], "max": [6, 3]}, "count": 20}],
           "route": [{"waypoint": {"name": "gate", "rect": {"min": [9, 7], "max": [11, 9]}}}],
           "exit_shares": {"east exit": 1.0}"#,
        "",
        "",
    );
    let mut sim = sim(compile(&json), 1, 120.0);
    let log = run_logged(&mut sim);
    assert_eq!(sim.arrivals().len(), 20, "everyone out");
    let passed = sim.stages_passed();
    assert_eq!(passed.len(), 20);
    assert!(passed.iter().all(|p| p.stage == "gate" && !p.waited));
    for a in sim.arrivals() {
        assert_eq!(a.exit, EAST);
        let track = &log[&a.id];
        // The centre's cell lies in the waypoint's cells: the centre within the rectangle.
        let inside: Vec<f64> = track
            .iter()
            .filter(|(_, p)| within(*p, gate, 0.0))
            .map(|s| s.0)
            .collect();
        assert!(!inside.is_empty(), "walker {} never in the waypoint", a.id);
        let at = passed.iter().find(|p| p.handle == a.id).unwrap().time;
        assert!(
            at < a.time && inside[0] <= at + 1e-9,
            "walker {}: passed at {at}, out at {}",
            a.id,
            a.time
        );
    }
}

#[test]
fn a_waiting_area_holds_its_walkers_for_its_seconds() {
    let area = [9.0, 3.0, 11.0, 7.0];
    let json = room(
        r#""spawns": [{"rect": {"min": [2, 3], "max": [5, 7]}, "count": 12}],
           "route": [{"wait": {"name": "hall", "rect": {"min": [9, 3], "max": [11, 7]}, "seconds": 10}}],
           "exit_shares": {"east exit": 1.0}"#,
        "",
        "",
    );
    let mut sim = sim(compile(&json), 2, 200.0);
    let log = run_logged(&mut sim);
    assert_eq!(sim.arrivals().len(), 12);
    for a in sim.arrivals() {
        let left = sim.stages_passed().iter().find(|p| p.handle == a.id).unwrap();
        assert!(left.waited && left.stage == "hall");
        let track = &log[&a.id];
        // It came in at the first step its centre stood in the area.
        let came = track.iter().find(|(_, p)| within(*p, area, 0.0)).unwrap().0;
        assert!(
            left.time >= came + 10.0 - 1e-6,
            "walker {}: in at {came}, left at {}",
            a.id,
            left.time
        );
        // In between it stood in the area (its body may lean out by the push of others).
        for &(t, p) in track.iter().filter(|(t, _)| *t >= came && *t <= left.time) {
            assert!(
                within(p, area, 0.3),
                "walker {} out of the area at {t} s: {p:?}",
                a.id
            );
        }
    }
}

/// A room whose walkers wait in "platform" until released, with the map's `events`.
fn platform(events: &str) -> Simulation {
    let json = room(
        r#""spawns": [{"rect": {"min": [2, 3], "max": [5, 7]}, "count": 10}],
           "route": [{"wait": {"name": "platform", "rect": {"min": [9, 2], "max": [11, 8]}, "seconds": 2, "until": "released"}}],
           "exit_shares": {"east exit": 1.0}"#,
        "",
        events,
    );
    sim(compile(&json), 3, 200.0)
}

#[test]
fn a_waiting_area_holds_its_walkers_until_an_event_releases_it() {
    let mut sim = platform(r#"{"at": 30, "release": "platform"}"#);
    assert_eq!(sim.released("platform"), Some(false));
    run_logged(&mut sim);
    assert_eq!(sim.arrivals().len(), 10);
    assert_eq!(sim.released("platform"), Some(true));
    let left: Vec<f64> = sim.stages_passed().iter().map(|p| p.time).collect();
    assert_eq!(left.len(), 10);
    assert!(
        left.iter().all(|t| (30.0 - 1e-9..30.0 + DT).contains(t)),
        "{left:?}"
    );
    // From x = 10 m at 1.4 m/s at most, the east exit is more than 6 s away.
    assert!(
        sim.arrivals().iter().all(|a| a.time > 30.0 + 6.0),
        "{:?}",
        sim.arrivals()
    );
}

#[test]
fn a_waiting_area_holds_its_walkers_until_the_api_releases_it() {
    let mut sim = platform("");
    while sim.time() < 40.0 {
        sim.step();
    }
    assert!(sim.arrivals().is_empty() && sim.stages_passed().is_empty());
    assert_eq!(sim.handles().len(), 10);
    assert!(
        sim.release("nowhere")
            .unwrap_err()
            .to_string()
            .contains("\"platform\"")
    );
    assert_eq!(sim.release("platform").unwrap(), 1);
    let events = sim.step();
    assert_eq!(
        events.stages.len(),
        10,
        "all ten leave the platform in the next step"
    );
    sim.run(|_| Ok(())).unwrap();
    assert_eq!(sim.arrivals().len(), 10);
}

#[test]
fn exit_shares_split_the_group_within_a_binomial_bound() {
    // 200 walkers in the middle; the west exit is nearer, yet 70 % go east.
    let json = room(
        r#""spawns": [{"rect": {"min": [5, 0.5], "max": [13, 9.5]}, "count": 200}],
           "exit_shares": {"west exit": 0.3, "east exit": 0.7}"#,
        "",
        "",
    );
    for seed in [4, 5] {
        let mut sim = sim(compile(&json), seed, 300.0);
        sim.run(|_| Ok(())).unwrap();
        assert_eq!(sim.arrivals().len(), 200);
        let west = sim.arrivals().iter().filter(|a| a.exit == WEST).count() as f64;
        eprintln!("seed {seed}: {west} of 200 west");
        // Binomial(200, 0.3): mean 60, standard deviation 6.5; four of them either side.
        let sd = (200.0f64 * 0.3 * 0.7).sqrt();
        assert!((west - 60.0).abs() <= 4.0 * sd, "seed {seed}: {west} west of 200");
    }
}

#[test]
fn a_walker_sent_to_an_exit_leaves_by_it_and_a_group_follows_its_goal() {
    // Everyone starts beside the west exit.
    let json = room(
        r#""spawns": [{"rect": {"min": [2, 2], "max": [4, 8]}, "count": 10}]"#,
        "",
        "",
    );
    let mut sim = sim(compile(&json), 6, 200.0);
    let sent = sim.handles()[3];
    sim.set_walker_goal(sent, Some("east exit")).unwrap();
    let err = sim
        .set_walker_goal(sent, Some("north exit"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("goal") && err.contains("\"north exit\"") && err.contains("\"east exit\""),
        "{err}"
    );
    assert!(sim.set_walker_goal(9999, None).is_err());
    sim.run(|_| Ok(())).unwrap();
    for a in sim.arrivals() {
        let expected = if a.id == sent { EAST } else { WEST };
        assert_eq!(a.exit, expected, "walker {}", a.id);
    }

    let mut sim2 = self::sim(compile(&json), 6, 200.0);
    assert_eq!(sim2.set_group_goal(0, Some("east exit")).unwrap(), 10);
    assert!(sim2.set_group_goal(1, None).is_err());
    sim2.run(|_| Ok(())).unwrap();
    assert_eq!(sim2.arrivals().len(), 10);
    assert!(sim2.arrivals().iter().all(|a| a.exit == EAST));
}

/// A 40 m x 2 m corridor of 0.5 m cells, one walker at 1.3 m/s from its west end to the exit
/// at its east end, with a region over x in [10, 30] m of `factor`.
fn corridor_time(factor: f64, model: &str) -> f64 {
    let json = format!(
        r#"{{
  "version": 1, "name": "corridor", "model": "{model}",
  "grid": {{"cols": 80, "rows": 4, "cell_size": 0.5}},
  "groups": [{{"name": "one", "speed": {{"min": 1.3, "max": 1.3}}, "radius": 0.2,
    "goals": [{{"name": "end", "rect": {{"min": [39.5, 0], "max": [40, 2]}}}}],
    "spawns": [{{"rect": {{"min": [1, 0.5], "max": [2, 1.5]}}, "count": 1}}]}}],
  "regions": [{{"name": "smoke", "rect": {{"min": [10, 0], "max": [30, 2]}}, "speed_factor": {factor}}}]
}}"#
    );
    let mut sim = sim(compile(&json), 7, 200.0);
    let h = sim.handles()[0];
    let (mut enter, mut leave) = (None, None);
    while !sim.finished() {
        sim.step();
        let Some((x, _)) = sim.position_of(h) else { break };
        if x >= 12.0 && enter.is_none() {
            enter = Some(sim.time());
        }
        if x >= 28.0 && leave.is_none() {
            leave = Some(sim.time());
        }
    }
    leave.unwrap() - enter.unwrap()
}

#[test]
fn a_slow_region_halves_the_speed_through_it() {
    for model in ["pedestrian", "continuum_crowds"] {
        let free = corridor_time(1.0, model);
        let slow = corridor_time(0.5, model);
        // 16 m at 1.3 m/s is 12.3 s; at half speed 24.6 s (a step either way).
        assert!((free - 16.0 / 1.3).abs() < 0.3, "{model}: {free} s at full speed");
        let ratio = slow / free;
        eprintln!("{model}: 16 m in {free:.2} s at full speed, {slow:.2} s at half");
        assert!(
            (ratio - 2.0).abs() < 0.05,
            "{model}: {slow} s against {free} s: {ratio}"
        );
    }
}

/// A room with a slow block in its middle (x in [7, 13] m, y in [2.5, 7.5] m) of `factor`
/// between a walker at its west side and a narrow exit on its east side, both at mid-height.
/// Returns the walker's largest distance from mid-height while it crosses x = 10 m.
fn detour(factor: f64, changed_by_event: bool) -> f64 {
    let (initial, events) = if changed_by_event {
        (
            1.0,
            format!(r#"{{"at": 0, "region": "block", "speed_factor": {factor}}}"#),
        )
    } else {
        (factor, String::new())
    };
    let json = format!(
        r#"{{
  "version": 1, "name": "block", "model": "pedestrian",
  "grid": {{"cols": 40, "rows": 20, "cell_size": 0.5}},
  "groups": [{{"name": "one", "speed": {{"min": 1.3, "max": 1.3}}, "radius": 0.2,
    "goals": [{{"name": "exit", "rect": {{"min": [19.5, 4.5], "max": [20, 5.5]}}}}],
    "spawns": [{{"rect": {{"min": [1, 4.5], "max": [1.5, 5.5]}}, "count": 1}}]}}],
  "regions": [{{"name": "block", "rect": {{"min": [7, 2.5], "max": [13, 7.5]}}, "speed_factor": {initial}}}],
  "events": [{events}]
}}"#
    );
    let mut sim = sim(compile(&json), 8, 200.0);
    let h = sim.handles()[0];
    let mut off = 0.0f64;
    while !sim.finished() {
        sim.step();
        if let Some((x, y)) = sim.position_of(h)
            && (9.0..=11.0).contains(&x)
        {
            off = off.max((y as f64 - 5.0).abs());
        }
    }
    assert_eq!(sim.arrivals().len(), 1);
    off
}

#[test]
fn the_quickest_route_goes_around_a_slow_region_when_that_is_quicker() {
    // Straight through at full speed; around the block (2.5 m off the line) at a fifth of it:
    // 6 m at 0.26 m/s is 23 s against some 3 m more at 1.3 m/s.
    assert!(detour(1.0, false) < 0.5, "straight through a region of factor 1");
    let around = detour(0.2, false);
    eprintln!("{around:.2} m off the line at factor 0.2");
    assert!(around > 2.5, "went {around} m off the line at factor 0.2");
    let by_event = detour(0.2, true);
    assert!(
        by_event > 2.5,
        "went {by_event} m off the line at factor 0.2 set by an event"
    );
}

#[test]
fn set_region_changes_a_region_in_the_next_step_and_refuses_bad_values() {
    let json = room(
        r#""spawns": [{"rect": {"min": [2, 2], "max": [4, 8]}, "count": 4}]"#,
        r#""regions": [{"name": "smoke", "rect": {"min": [6, 0], "max": [14, 10]}, "speed_factor": 0.5}],"#,
        r#"{"at": 1, "region": "smoke", "speed_factor": 0.3, "discomfort": 2}"#,
    );
    let mut sim = sim(compile(&json), 9, 60.0);
    assert_eq!(sim.region("smoke"), Some((0.5, 0.0)));
    assert_eq!(sim.region_factor(10.0, 5.0), 0.5);
    assert_eq!(sim.region_factor(2.0, 5.0), 1.0);
    while sim.time() < 1.05 {
        sim.step();
    }
    assert_eq!(sim.region("smoke"), Some((0.3, 2.0)));
    sim.set_region("smoke", Some(0.8), None).unwrap();
    assert_eq!(sim.region("smoke"), Some((0.8, 2.0)));
    assert!((sim.region_factor(10.0, 5.0) - 0.8).abs() < 1e-6);
    for (factor, discomfort, arg) in [
        (Some(0.0), None, "speed_factor"),
        (None, Some(-1.0), "discomfort"),
    ] {
        let err = sim
            .set_region("smoke", factor, discomfort)
            .unwrap_err()
            .to_string();
        assert!(err.contains(arg), "{err}");
    }
    assert!(
        sim.set_region("fog", Some(0.5), None)
            .unwrap_err()
            .to_string()
            .contains("\"smoke\"")
    );
}

#[test]
fn map_errors_name_the_json_path_and_the_value() {
    let spawn = r#""spawns": [{"rect": {"min": [2, 2], "max": [4, 8]}, "count": 4}]"#;
    let cases = [
        (
            format!(r#"{spawn}, "exit_shares": {{"west exit": 0.3, "east exit": 0.6}}"#),
            String::new(),
            String::new(),
            "groups[0].exit_shares: shares sum to 0.9",
        ),
        (
            format!(r#"{spawn}, "exit_shares": {{"north exit": 1}}"#),
            String::new(),
            String::new(),
            "groups[0].exit_shares.north exit: \"north exit\": expected the name of one of the group's goals",
        ),
        (
            format!(r#"{spawn}, "route": [{{"waypoint": {{"name": "gate"}}}}]"#),
            String::new(),
            String::new(),
            "groups[0].route[0].waypoint.name: \"gate\": expected the name of a stage",
        ),
        (
            format!(
                r#"{spawn}, "route": [{{"waypoint": {{"rect": {{"min": [5, 5], "max": [6, 6]}}}}, "wait": {{"name": "x"}}}}]"#
            ),
            String::new(),
            String::new(),
            "groups[0].route[0]: gives both `waypoint` and `wait`",
        ),
        (
            format!(
                r#"{spawn}, "route": [{{"waypoint": {{"rect": {{"min": [5, 5], "max": [6, 6]}}, "seconds": 3}}}}]"#
            ),
            String::new(),
            String::new(),
            "groups[0].route[0].waypoint.seconds: is given on a waypoint",
        ),
        (
            format!(
                r#"{spawn}, "route": [{{"wait": {{"name": "p", "rect": {{"min": [5, 5], "max": [6, 6]}}, "seconds": -2}}}}]"#
            ),
            String::new(),
            String::new(),
            "groups[0].route[0].wait.seconds: -2.0: expected a finite number in [0, 86400] seconds",
        ),
        (
            spawn.to_string(),
            r#""regions": [{"rect": {"min": [5, 5], "max": [6, 6]}, "speed_factor": 0}],"#.to_string(),
            String::new(),
            "regions[0].speed_factor: 0.0: expected a speed factor above 0 and at most 10",
        ),
        (
            spawn.to_string(),
            String::new(),
            r#"{"at": 3, "release": "platform"}"#.to_string(),
            "events[0].release: \"platform\": expected the name of a waiting area",
        ),
        (
            spawn.to_string(),
            r#""regions": [{"name": "smoke", "rect": {"min": [5, 5], "max": [6, 6]}}],"#.to_string(),
            r#"{"at": 3, "region": "smoke"}"#.to_string(),
            "events[0]: changes nothing",
        ),
        (
            spawn.to_string(),
            r#""regions": [{"name": "smoke", "rect": {"min": [5, 5], "max": [6, 6]}}],"#.to_string(),
            r#"{"at": 3, "region": "fog", "speed_factor": 0.5}"#.to_string(),
            "events[0].region: \"fog\": expected the name of a region: \"smoke\"",
        ),
        (
            spawn.to_string(),
            String::new(),
            r#"{"at": 3, "close": "east exit", "speed_factor": 0.5}"#.to_string(),
            "events[0].speed_factor: is given without `region`",
        ),
        (
            format!(
                r#"{spawn}, "route": [{{"wait": {{"rect": {{"min": [5, 5], "max": [6, 6]}}, "until": "later"}}}}]"#
            ),
            String::new(),
            String::new(),
            "groups[0].route[0].wait.until",
        ),
    ];
    for (group, top, events, expected) in cases {
        let err = load_error(&room(&group, &top, &events));
        assert!(
            err.contains("room.json") && err.contains(expected),
            "expected {expected:?} in:\n{err}"
        );
    }
}

#[test]
fn a_stage_named_alone_is_the_stage_of_that_name_and_a_walker_sent_to_it_stands_there() {
    // Two groups share the gate: the second names it alone.
    let json = r#"{
  "version": 1, "name": "two", "model": "pedestrian",
  "grid": {"cols": 40, "rows": 20, "cell_size": 0.5},
  "groups": [
    {"name": "a", "radius": 0.2, "goals": [{"name": "east exit", "rect": {"min": [19, 0], "max": [20, 10]}}],
     "spawns": [{"rect": {"min": [2, 1], "max": [4, 3]}, "count": 4}],
     "route": [{"waypoint": {"name": "gate", "rect": {"min": [9, 7], "max": [11, 9]}}}]},
    {"name": "b", "radius": 0.2, "goals": [{"name": "east exit", "rect": {"min": [19, 0], "max": [20, 10]}}],
     "spawns": [{"rect": {"min": [2, 6], "max": [4, 9]}, "count": 4}],
     "route": [{"waypoint": {"name": "gate"}}]}
  ]
}"#;
    let scene = compile(json);
    assert_eq!(scene.schedule.routes.stages.len(), 1);
    let mut sim = sim(scene.clone(), 10, 120.0);
    sim.run(|_| Ok(())).unwrap();
    assert_eq!(sim.arrivals().len(), 8);
    let passed = sim.stages_passed();
    assert_eq!(passed.len(), 8);
    assert_eq!(passed.iter().filter(|p| p.group == 1).count(), 4);

    // A walker sent to the gate walks there and stands in it; the others leave.
    let mut sim = self::sim(scene, 10, 60.0);
    let h = sim.handles()[0];
    sim.set_walker_goal(h, Some("gate")).unwrap();
    sim.run(|_| Ok(())).unwrap();
    assert_eq!(sim.arrivals().len(), 7);
    assert!(
        within(sim.position_of(h).unwrap(), [9.0, 7.0, 11.0, 9.0], 0.0),
        "{:?}",
        sim.position_of(h)
    );
    assert!(sim.velocity_of(h).unwrap().0.abs() < 1e-3, "it stands still");
}

#[test]
fn exit_shares_repeat_from_the_seed() {
    let json = room(
        r#""spawns": [{"rect": {"min": [5, 0.5], "max": [13, 9.5]}, "count": 40}],
           "exit_shares": {"west exit": 0.5, "east exit": 0.5}"#,
        "",
        "",
    );
    let exits = |seed| {
        let mut sim = sim(compile(&json), seed, 100.0);
        sim.run(|_| Ok(())).unwrap();
        let mut out: Vec<(u32, usize)> = sim.arrivals().iter().map(|a| (a.id, a.exit)).collect();
        out.sort();
        out
    };
    let first = exits(11);
    assert_eq!(first.len(), 40);
    assert_eq!(first, exits(11));
    assert_ne!(first, exits(12));
}

/// The report lists each release and region change with its time, the report page shows them,
/// and the arrivals plot marks them (in blue, the colour of the scene's changes).
#[test]
fn the_report_shows_releases_and_region_changes() {
    let json = room(
        r#""spawns": [{"rect": {"min": [2, 3], "max": [5, 7]}, "count": 10}],
           "route": [{"wait": {"name": "platform", "rect": {"min": [9, 2], "max": [11, 8]}, "seconds": 2, "until": "released"}}],
           "exit_shares": {"east exit": 1.0}"#,
        r#""regions": [{"name": "smoke", "rect": {"min": [14, 0], "max": [16, 10]}, "speed_factor": 0.8}],"#,
        r#"{"at": 20, "release": "platform"}, {"at": 5, "region": "smoke", "speed_factor": 0.4}"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("room.json");
    std::fs::write(&map, &json).unwrap();
    let out = dir.path().join("out");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(["simulate", map.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let changes = report["scene_changes"].as_array().expect("scene_changes");
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert_eq!(changes[0]["name"], "smoke");
    assert!((changes[0]["time"].as_f64().unwrap() - 5.0).abs() < DT + 1e-9);
    assert_eq!(changes[0]["what"], "speed factor 0.4, discomfort 0");
    assert_eq!(changes[1]["name"], "platform");
    assert_eq!(changes[1]["what"], "released");
    assert!((changes[1]["time"].as_f64().unwrap() - 20.0).abs() < DT + 1e-9);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("id=\"scene-events\""), "the page lists them");
    assert!(page.contains("speed factor 0.4, discomfort 0"));
    let plot = image::open(out.join("arrivals.png")).unwrap().to_rgb8();
    let blue = plot.pixels().filter(|p| p.0 == [60, 90, 200]).count();
    assert!(
        blue > 20,
        "the arrivals plot marks the changes: {blue} blue pixels"
    );
}

/// `validate` names a stage that walls cut off from the group's spawn areas.
#[test]
fn a_stage_walled_off_from_the_spawns_is_warned_about() {
    let json = room(
        r#""spawns": [{"rect": {"min": [2, 3], "max": [5, 7]}, "count": 4}],
           "route": [{"waypoint": {"name": "kiosk", "rect": {"min": [9, 4], "max": [10, 5]}}}]"#,
        r#""layers": {"obstacles": {"shapes": [
             {"rect": {"min": [8, 3], "max": [11, 3.5]}}, {"rect": {"min": [8, 5.5], "max": [11, 6]}},
             {"rect": {"min": [8, 3], "max": [8.5, 6]}}, {"rect": {"min": [10.5, 3], "max": [11, 6]}}
           ]}},"#,
        "",
    );
    let scene = compile(&json);
    let warnings = crowdfield::map::warnings(&scene);
    let found: Vec<&String> = warnings
        .iter()
        .filter(|w| {
            w.contains("groups[0].route[0]") && w.contains("\"kiosk\"") && w.contains("cannot be reached")
        })
        .collect();
    assert_eq!(found.len(), 1, "{warnings:#?}");
    // Without the box around it, nothing to say.
    let open = compile(&room(
        r#""spawns": [{"rect": {"min": [2, 3], "max": [5, 7]}, "count": 4}],
           "route": [{"waypoint": {"name": "kiosk", "rect": {"min": [9, 4], "max": [10, 5]}}}]"#,
        "",
        "",
    ));
    assert!(
        !crowdfield::map::warnings(&open)
            .iter()
            .any(|w| w.contains("route")),
        "{:?}",
        crowdfield::map::warnings(&open)
    );
}
