//! Scenes that change while they run: exits closing and opening at their times (the map's
//! `events`, a goal's `closed`), sources bringing walkers in over time, and the run-time API
//! (walkers added and removed by handle, exits opened and closed, each step's events).

use crowdfield::Scene;
use crowdfield::gpu::Backend;
use crowdfield::map::MapFile;
use crowdfield::sim::{SimConfig, Simulation};
use std::path::Path;

/// Time step of every run here, seconds.
const DT: f64 = 0.1;

/// A 20 m x 10 m room of 0.5 m cells with a "west exit" (x < 1 m) and an "east exit"
/// (x >= 19 m) across its height; `spawns` and `events` are JSON text put in place, and
/// `east` the east exit's extra keys (`"closed": true`).
fn room(spawns: &str, events: &str, east: &str) -> String {
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
      {{"name": "east exit", "rect": {{"min": [19, 0], "max": [20, 10]}}{east}}}
    ],
    "spawns": [{spawns}],
    "speed": {{"min": 1.2, "max": 1.4}},
    "radius": 0.2
  }}],
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

/// Index of each exit in the group's goals.
const WEST: usize = 0;
const EAST: usize = 1;

/// A crowd near the east exit that closes at `t_close`.
fn closing_room(t_close: f64) -> Scene {
    compile(&room(
        r#"{"rect": {"min": [13, 2], "max": [18, 8]}, "count": 40}"#,
        &format!(r#"{{"at": {t_close}, "close": "east exit"}}"#),
        "",
    ))
}

fn check_closing(mut sim: Simulation, t_close: f64) -> Simulation {
    let mut closed_in_step = None;
    while !sim.finished() {
        let events = sim.step();
        if let Some(change) = events.exits.first() {
            assert_eq!((change.name.as_str(), change.open), ("east exit", false));
            closed_in_step = Some(events.time);
            assert!(!sim.exit_open(0, EAST) && sim.exit_open(0, WEST));
        }
    }
    let closed_at = closed_in_step.expect("the event fired");
    assert!(
        closed_at > t_close - 1e-9 && closed_at <= t_close + DT + 1e-9,
        "{closed_at}"
    );
    let arrivals = sim.arrivals();
    let east: Vec<f64> = arrivals
        .iter()
        .filter(|a| a.exit == EAST)
        .map(|a| a.time)
        .collect();
    let west = arrivals.iter().filter(|a| a.exit == WEST).count();
    assert!(!east.is_empty(), "some leave east before it closes");
    assert!(west > 0, "the others turn west");
    let last_east = east.iter().copied().fold(0.0, f64::max);
    assert!(
        last_east <= t_close + DT + 1e-9,
        "an arrival east at {last_east} s, after it closed at {t_close} s"
    );
    let report = sim.report();
    assert!(report.complete, "everyone out: {:?}", report.total.remaining);
    assert_eq!(report.total.arrived, 40);
    assert_eq!(report.exit_changes.len(), 1);
    let east_report = &report.total.exits[EAST];
    assert!(east_report.last_arrival.unwrap() <= t_close + DT + 1e-9);
    sim
}

#[test]
fn an_exit_closing_at_t_takes_no_one_after_t_plus_a_step_and_the_others_take_everyone() {
    let t_close = 2.0;
    check_closing(sim(closing_room(t_close), 1, 120.0), t_close);
}

/// A run of `scene` with its continuum step on the GPU, `None` (after saying why) without an
/// adapter unless `CROWDFIELD_REQUIRE_GPU=1`.
fn gpu_sim(scene: Scene, seed: u64) -> Option<Simulation> {
    let config = SimConfig {
        dt: Some(DT),
        max_time: 120.0,
        seed,
        ..Default::default()
    };
    match Simulation::builder(scene)
        .config(config)
        .backend(Backend::Gpu)
        .build()
    {
        Ok(sim) => Some(sim),
        Err(e) if std::env::var("CROWDFIELD_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("CROWDFIELD_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => {
            eprintln!("skipping the GPU run: {e}");
            None
        }
    }
}

#[test]
fn an_exit_opening_at_t_takes_no_one_before() {
    // The only way out, closed at the start, opens at 6 s: the crowd waits, then leaves.
    let json = room(
        r#"{"rect": {"min": [15, 2], "max": [18, 8]}, "count": 20}"#,
        r#"{"at": 6, "open": "east exit"}, {"at": 0, "close": "west exit"}"#,
        r#", "closed": true"#,
    );
    let mut sim = sim(compile(&json), 2, 120.0);
    assert!(!sim.exit_open(0, EAST) && sim.exit_open(0, WEST));
    let first = sim.step();
    assert_eq!(first.exits.len(), 1, "the west exit closes in the first step");
    assert!(!sim.exit_open(0, WEST));
    sim.run(|_| Ok(())).unwrap();
    let arrivals = sim.arrivals();
    assert_eq!(arrivals.len(), 20);
    assert!(
        arrivals.iter().all(|a| a.exit == EAST && a.time > 6.0),
        "{arrivals:?}"
    );
    let report = sim.report();
    let changes: Vec<(f64, bool)> = report.exit_changes.iter().map(|c| (c.time, c.open)).collect();
    assert_eq!(changes, [(0.0, false), (6.0, true)]);
}

#[test]
fn a_source_of_2_per_second_for_30_s_brings_60_walkers() {
    let json = room(
        r#"{"rect": {"min": [8, 3], "max": [12, 7]}, "rate": 2.0, "from": 0, "until": 30}"#,
        "",
        "",
    );
    let mut sim = sim(compile(&json), 3, 200.0);
    assert!(!sim.finished(), "walkers still to come");
    let mut entered = Vec::new();
    while !sim.finished() {
        let began = sim.time();
        let events = sim.step();
        entered.extend(events.entered.iter().map(|&h| (h, began)));
        assert_eq!(events.waiting_to_enter, 0);
    }
    assert_eq!(entered.len(), 60);
    // Evenly spaced: walker k at k / 2 s, in the step that begins then.
    for (k, &(_, t)) in entered.iter().enumerate() {
        assert!((t - k as f64 * 0.5).abs() < 1e-6, "walker {k} came in at {t} s");
    }
    let report = sim.report();
    assert_eq!((report.total.agents, report.total.arrived), (60, 60));
    assert!(report.complete);
    assert!(report.total.arrival_curve.last().unwrap().1 == 60);
    assert!(report.total.evacuation_time.unwrap() > 29.5);
}

#[test]
fn a_source_at_listed_times_brings_one_walker_at_each() {
    let json = room(
        r#"{"rect": {"min": [8, 3], "max": [12, 7]}, "times": [4, 1.0, 2.55]}"#,
        "",
        "",
    );
    let mut sim = sim(compile(&json), 3, 60.0);
    let mut entered = Vec::new();
    while !sim.finished() {
        let began = sim.time();
        if !sim.step().entered.is_empty() {
            entered.push(began);
        }
    }
    // 2.55 s falls inside a step: the walker comes in at the start of the next, 2.6 s.
    assert_eq!(entered.len(), 3);
    for (t, want) in entered.iter().zip([1.0, 2.6, 4.0]) {
        assert!((t - want).abs() < 1e-6, "{entered:?}");
    }
    let report = sim.report();
    assert_eq!(report.total.arrived, 3);
    assert_eq!(report.total.late_entries, 0, "a time inside a step is not late");
}

#[test]
fn a_full_source_area_holds_walkers_back_and_the_report_counts_them() {
    // A 1 m x 1 m area holds few bodies; twenty due at once wait their turn.
    let json = room(
        r#"{"rect": {"min": [9, 4.5], "max": [10, 5.5]}, "times": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}"#,
        "",
        "",
    );
    let mut sim = sim(compile(&json), 4, 1.0);
    let first = sim.step();
    assert!(
        !first.entered.is_empty() && first.waiting_to_enter > 0,
        "{first:?}"
    );
    assert_eq!(first.entered.len() + first.waiting_to_enter, 20);
    sim.run(|_| Ok(())).unwrap();
    let report = sim.report();
    assert!(report.total.late_entries > 0);
    assert_eq!(
        report.total.agents + report.total.remaining.not_entered,
        20,
        "{:?}",
        report.total
    );
}

#[test]
fn the_same_seed_gives_the_same_report_with_events() {
    let json = room(
        r#"{"rect": {"min": [8, 3], "max": [12, 7]}, "rate": 1.5, "until": 20, "arrivals": "poisson"},
           {"rect": {"min": [14, 3], "max": [17, 7]}, "count": 20}"#,
        r#"{"at": 5, "close": "east exit"}, {"at": 12, "open": "east exit"}"#,
        "",
    );
    let report = |seed| {
        let mut s = sim(compile(&json), seed, 90.0);
        s.run(|_| Ok(())).unwrap();
        serde_json::to_string(&s.report()).unwrap()
    };
    let a = report(5);
    assert_eq!(a, report(5));
    assert_ne!(a, report(6));
    assert!(a.contains("\"exit_changes\""), "{a}");
}

#[test]
fn handles_stay_valid_as_others_leave() {
    let json = room(
        r#"{"rect": {"min": [15, 3], "max": [18, 7]}, "count": 15}"#,
        "",
        "",
    );
    let mut sim = sim(compile(&json), 6, 120.0);
    // A slow walker far from the exits, added by the program.
    let slow = sim.add_walker(5.0, 5.0, 0, 0.3, 0.2).unwrap();
    let other = sim.add_walker(6.0, 5.0, 0, 1.3, 0.2).unwrap();
    assert_eq!((slow, other), (15, 16), "handles follow the map's ids");
    let mut last = sim.position_of(slow).unwrap();
    for _ in 0..60 {
        let events = sim.step();
        for a in &events.arrivals {
            assert!(
                sim.position_of(a.id).is_none(),
                "an arrived walker's handle is gone"
            );
        }
        let i = sim.index_of(slow).unwrap();
        assert_eq!(sim.handles()[i], slow);
        let (x, y) = sim.position_of(slow).unwrap();
        assert_eq!((x, y), (sim.positions().0[i], sim.positions().1[i]));
        let (vx, vy) = sim.velocity_of(slow).unwrap();
        assert!((vx * vx + vy * vy).sqrt() <= 0.3 + 1e-4);
        assert!(((x - last.0).powi(2) + (y - last.1).powi(2)).sqrt() <= 0.3 * DT as f32 + 0.05);
        last = (x, y);
    }
    assert!(
        sim.arrivals().len() >= 10,
        "others left: {}",
        sim.arrivals().len()
    );
    assert!(sim.handles().windows(2).all(|w| w[0] < w[1]));
    sim.remove_walker(other).unwrap();
    assert!(sim.position_of(other).is_none());
    let e = sim.remove_walker(other).unwrap_err().to_string();
    assert!(e.contains("handle") && e.contains(&other.to_string()), "{e}");
    let next = sim.add_walker(5.0, 8.0, 0, 1.0, 0.2).unwrap();
    assert!(next > other, "handles are never reused");
    // Many at once: all or none, each once.
    let two: Vec<u32> = sim.handles().iter().rev().take(2).copied().collect();
    let before = sim.handles().len();
    let e = sim.remove_walkers(&[two[0], other]).unwrap_err().to_string();
    assert!(e.contains(&other.to_string()), "{e}");
    assert_eq!(sim.handles().len(), before, "a bad handle removes none");
    assert_eq!(sim.remove_walkers(&[two[0], two[1], two[0]]).unwrap(), 2);
    assert_eq!(sim.handles().len(), before - 2);
    assert!(two.iter().all(|&h| sim.position_of(h).is_none()));
    sim.run(|_| Ok(())).unwrap();
    let report = sim.report();
    assert_eq!(report.total.removed, 3);
    assert_eq!(report.total.agents, 18);
    assert!(report.complete && report.total.evacuation_time.is_some());
}

#[test]
fn the_api_refuses_what_the_run_cannot_hold() {
    let json = room(
        r#"{"rect": {"min": [15, 3], "max": [18, 7]}, "count": 5}"#,
        "",
        "",
    );
    let mut sim = sim(compile(&json), 6, 10.0);
    let problems = [
        (sim.add_walker(5.0, 5.0, 1, 1.0, 0.2), "group"),
        (sim.add_walker(50.0, 5.0, 0, 1.0, 0.2), "x, y"),
        (sim.add_walker(5.0, 5.0, 0, 9.0, 0.2), "speed"),
        (sim.add_walker(5.0, 5.0, 0, 1.0, 0.9), "radius"),
    ];
    for (result, field) in problems {
        let e = result.unwrap_err().to_string();
        assert!(e.contains(&format!("<add_walker>: {field}")), "{e}");
    }
    let e = sim.set_exit_open("north exit", false).unwrap_err().to_string();
    assert!(e.contains("\"north exit\"") && e.contains("\"east exit\""), "{e}");
    assert_eq!(sim.set_exit_open("east exit", false).unwrap(), 1);
    assert!(!sim.exit_open(0, EAST));
}

#[test]
fn closing_every_exit_stops_the_crowd_and_opening_one_lets_it_go() {
    let json = room(
        r#"{"rect": {"min": [8, 3], "max": [12, 7]}, "count": 10}"#,
        "",
        "",
    );
    let mut sim = sim(compile(&json), 7, 120.0);
    sim.set_exit_open("east exit", false).unwrap();
    sim.set_exit_open("west exit", false).unwrap();
    for _ in 0..20 {
        assert!(sim.step().arrivals.is_empty());
    }
    let (vx, vy) = sim.velocities();
    assert!(vx.iter().chain(vy).all(|v| v.abs() < 1e-6), "nowhere to go");
    sim.set_exit_open("west exit", true).unwrap();
    sim.run(|_| Ok(())).unwrap();
    assert!(sim.arrivals().iter().all(|a| a.exit == WEST));
    assert_eq!(sim.arrivals().len(), 10);
}

#[test]
fn adding_and_removing_10000_walkers_keeps_memory_bounded() {
    let json = room(
        r#"{"rect": {"min": [15, 3], "max": [18, 7]}, "count": 5}"#,
        "",
        "",
    );
    let mut sim = sim(compile(&json), 8, 600.0);
    let mut live = Vec::new();
    let mut capacity_after_warm_up = 0;
    for round in 0..500 {
        for k in 0..20 {
            let x = 4.0 + 0.6 * (k % 10) as f32;
            let y = 3.0 + 2.0 * (k / 10) as f32;
            live.push(sim.add_walker(x, y, 0, 1.0, 0.2).unwrap());
        }
        sim.step();
        for h in live.drain(..) {
            // Some may have walked out; the rest are removed.
            if sim.index_of(h).is_some() {
                sim.remove_walker(h).unwrap();
            }
        }
        if round == 10 {
            capacity_after_warm_up = sim.walker_capacity();
        }
    }
    let report = sim.report();
    assert_eq!(report.total.agents, 5 + 10_000);
    assert!(report.total.removed + report.total.arrived >= 10_000);
    let capacity = sim.walker_capacity();
    eprintln!("per-walker capacity: {capacity_after_warm_up} after 11 rounds, {capacity} after 500");
    assert!(
        capacity <= capacity_after_warm_up.max(64),
        "per-walker memory grew from {capacity_after_warm_up} to {capacity} walkers"
    );
}

#[test]
fn event_and_source_problems_name_the_json_path_and_the_value() {
    let unknown = load_error(&room(
        r#"{"rect": {"min": [8, 3], "max": [12, 7]}, "count": 5}"#,
        r#"{"at": 3, "close": "north exit"}"#,
        "",
    ));
    assert!(
        unknown.contains("room.json: events[0].close: \"north exit\": expected the name of a goal")
            && unknown.contains("\"east exit\""),
        "{unknown}"
    );
    let both = load_error(&room(
        r#"{"rect": {"min": [8, 3], "max": [12, 7]}, "count": 5, "rate": 2, "until": 5}"#,
        "",
        "",
    ));
    assert!(
        both.contains("groups[0].spawns[0].count: given with `rate`"),
        "{both}"
    );
    let neither = load_error(&room(r#"{"rect": {"min": [8, 3], "max": [12, 7]}}"#, "", ""));
    assert!(
        neither.contains("groups[0].spawns[0]: missing field `count`"),
        "{neither}"
    );
    let null = load_error(&room(
        r#"{"rect": {"min": [8, 3], "max": [12, 7]}, "count": null}"#,
        "",
        "",
    ));
    assert!(
        null.contains("groups[0].spawns[0]: missing field `count`"),
        "{null}"
    );
    let no_end = load_error(&room(
        r#"{"rect": {"min": [8, 3], "max": [12, 7]}, "rate": 2}"#,
        "",
        "",
    ));
    assert!(no_end.contains("groups[0].spawns[0].until: missing"), "{no_end}");
    let bad_time = load_error(&room(
        r#"{"rect": {"min": [8, 3], "max": [12, 7]}, "times": [1, -2]}"#,
        r#"{"at": -1, "open": "east exit"}"#,
        "",
    ));
    assert!(
        bad_time.contains("groups[0].spawns[0].times[1]: -2") && bad_time.contains("events[0].at: -1"),
        "{bad_time}"
    );
    let two = load_error(&room(
        r#"{"rect": {"min": [8, 3], "max": [12, 7]}, "count": 5}"#,
        r#"{"at": 1, "open": "east exit", "close": "west exit"}"#,
        "",
    ));
    assert!(two.contains("events[0]: gives both `open` and `close`"), "{two}");
}

#[test]
fn an_exit_closing_replans_on_the_gpu_as_on_the_cpu() {
    let t_close = 2.0;
    let Some(sim) = gpu_sim(closing_room(t_close), 1) else {
        return;
    };
    let sim = check_closing(sim, t_close);
    assert_eq!(sim.gpu_fallback(), None);
    assert_eq!(sim.solver_name(), "gpu-continuum");
}

/// Closes the east exit after three steps of a run that replans only every 50 steps: the next
/// step's potential has its zero at the west exit alone.
fn check_replans_at_once(mut sim: Simulation) {
    let east_cell = (10, 39);
    let west_cell = (10, 0);
    for _ in 0..3 {
        sim.step();
    }
    assert_eq!(sim.potentials()[0][east_cell], 0.0);
    sim.set_exit_open("east exit", false).unwrap();
    sim.step();
    let phi = &sim.potentials()[0];
    assert_eq!(phi[west_cell], 0.0);
    assert!(
        phi[east_cell] > 10.0,
        "the east exit is no goal: {}",
        phi[east_cell]
    );
}

fn rarely_replanning(backend: Backend) -> Option<Simulation> {
    let json = room(
        r#"{"rect": {"min": [13, 2], "max": [18, 8]}, "count": 10}"#,
        "",
        "",
    );
    let config = SimConfig {
        dt: Some(DT),
        max_time: 60.0,
        seed: 1,
        replan_every: 50,
        ..Default::default()
    };
    let built = Simulation::builder(compile(&json))
        .config(config)
        .backend(backend)
        .build();
    match built {
        Ok(sim) => Some(sim),
        Err(e)
            if backend == Backend::Cpu || std::env::var("CROWDFIELD_REQUIRE_GPU").is_ok_and(|v| v == "1") =>
        {
            panic!("{e}")
        }
        Err(e) => {
            eprintln!("skipping the GPU run: {e}");
            None
        }
    }
}

#[test]
fn a_closing_exit_replans_in_the_same_step_between_replanning_steps() {
    check_replans_at_once(rarely_replanning(Backend::Cpu).unwrap());
}

#[test]
fn a_closing_exit_replans_in_the_same_step_on_the_gpu() {
    if let Some(sim) = rarely_replanning(Backend::Gpu) {
        check_replans_at_once(sim);
    }
}

#[test]
fn every_exit_closed_on_the_gpu_stops_the_crowd_without_falling_back() {
    let json = room(
        r#"{"rect": {"min": [8, 3], "max": [12, 7]}, "count": 10}"#,
        "",
        "",
    );
    let Some(mut sim) = gpu_sim(compile(&json), 7) else {
        return;
    };
    sim.step();
    sim.set_exit_open("east exit", false).unwrap();
    sim.set_exit_open("west exit", false).unwrap();
    for _ in 0..10 {
        assert!(sim.step().arrivals.is_empty());
    }
    let (vx, vy) = sim.velocities();
    assert!(vx.iter().chain(vy).all(|v| v.abs() < 1e-6), "nowhere to go");
    sim.set_exit_open("west exit", true).unwrap();
    sim.run(|_| Ok(())).unwrap();
    assert_eq!(sim.gpu_fallback(), None);
    assert_eq!(sim.arrivals().len(), 10);
    assert!(sim.arrivals().iter().all(|a| a.exit == WEST));
}

#[test]
fn the_bundled_platform_unloads_its_train_through_the_open_exits() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/platform.json");
    let scene = crowdfield::map::load(&path).unwrap();
    assert_eq!(crowdfield::map::warnings(&scene), Vec::<String>::new());
    let mut sim = sim(scene, 1, 300.0);
    sim.run(|_| Ok(())).unwrap();
    let report = sim.report();
    assert_eq!(report.total.agents, 60);
    assert!(report.complete, "{:?}", report.total.remaining);
    let (west, east, north) = (0, 1, 2);
    for a in sim.arrivals() {
        match a.exit {
            e if e == east => assert!(a.time <= 12.0 + DT + 1e-9, "east at {}", a.time),
            e if e == north => assert!(a.time > 25.0, "north at {}", a.time),
            e => assert_eq!(e, west),
        }
    }
    let names: Vec<&str> = report.exit_changes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["east stairs", "north gate"]);
    // The exits' flows: zero at the east stairs once closed, none at the gate before it opens.
    let curves = crowdfield::run::planner::exit_usage(&sim);
    assert_eq!(curves[east].closed, [(12.0, f64::INFINITY)]);
    assert_eq!(curves[north].closed, [(0.0, 25.0)]);
    assert!(curves[east].flow_at(11.9, 10.0) > 0.0);
    assert_eq!(curves[east].flow_at(12.0, 10.0), 0.0);
    assert_eq!(curves[east].flow_at(20.0, 10.0), 0.0);
    // The plots mark both events (red a closing, green an opening) and the page lists them.
    let colors: Vec<[u8; 3]> = sim.scene().groups.iter().map(|g| g.color).collect();
    let plot = crowdfield::run::draw::arrivals_plot(&report, &colors);
    let has = |c: [u8; 3]| plot.pixels().any(|p| p.0[..3] == c);
    assert!(has([200, 40, 40]) && has([30, 140, 60]));
    let input = crowdfield::export::html::PageInput {
        map_path: "maps/platform.json",
        map_sha256: "0",
        grid: (60, 24, 0.5),
        parameters: Vec::new(),
        images: Vec::new(),
    };
    let page = crowdfield::export::html::report_page(&report, &input);
    assert!(page.contains("<h2>Exit events</h2>") && page.contains("<td>east stairs</td><td>closes</td>"));
}

#[test]
fn a_study_blocking_an_exit_drops_the_events_that_name_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/platform.json");
    let map = MapFile::from_path(&path).unwrap();
    let scenarios = crowdfield::run::study::scenarios(&map, true, &[], None).unwrap();
    let blocked: Vec<&str> = scenarios
        .iter()
        .flat_map(|s| s.blocked.iter().map(String::as_str))
        .collect();
    assert_eq!(blocked, ["west stairs", "east stairs", "north gate"]);
    for s in &scenarios {
        let scene = crowdfield::map::compile(&s.map, path.parent().unwrap(), &s.name)
            .unwrap_or_else(|e| panic!("{}: {e}", s.name));
        let named: Vec<&str> = scene.schedule.events.iter().map(|e| e.name.as_str()).collect();
        assert!(
            s.blocked.iter().all(|b| !named.contains(&b.as_str())),
            "{}: {named:?}",
            s.name
        );
    }
}
