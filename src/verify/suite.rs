//! The tests: each builds its maps, runs them on every seed (in parallel) and judges the
//! measurement against its criterion.

use super::criteria::{
    describe, grows, packing_limit, single_file_speed, speed_matches, steady_specific_flow, weidmann_speed,
};
use super::scenarios::{SceneBuilder, goal, group, rect, spawn, spawn_waiting};
use super::{ArrivalCurve, GeneratedMap, Point, Status, TestResult, VerifyOptions, VerifyReport, simulate};
use crate::error::Result;
use crate::map::{MapFile, SpeedRange};
use crate::names::Named as _;
use crate::params::{Model, Params};
use crate::speeds::{RIMEA_AGE_GROUPS, RimeaPopulation};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The RiMEA guideline every RiMEA test cites.
const RIMEA: &str = "RiMEA Guideline 4.1.1 (3.0), Annex 1";
/// Cell edge of most scenes, m: doors of 1 m are four cells wide.
const CELL: f64 = 0.25;
/// Cell edge of the bottleneck scenes, m: every width of the series is a whole number of cells.
const BOTTLENECK_CELL: f64 = 0.1;
/// The bottleneck experiments' band of specific flow, persons/(m·s).
const FLOW_BAND: (f64, f64) = (1.3, 1.9);
/// RiMEA 1's band of travel times, s.
const RIMEA1_BAND: (f64, f64) = (26.0, 34.0);
/// RiMEA 9's band of the ratio of the evacuation times with two and with four exits.
const RIMEA9_RATIO: (f64, f64) = (1.6, 2.4);
/// Tolerance of a measured free speed against its age group's range, m/s: the crossing times
/// are read at whole steps (0.1 s over some 17 s of walking, under 0.01 m/s) and paths bend
/// round slower walkers.
const FREE_SPEED_TOLERANCE: f64 = 0.05;
/// The body radius of the fundamental-diagram crowds, m: a hexagonal packing of discs of
/// 0.2 m holds 7.2 persons/m², so RiMEA 4's 5 persons/m² can be placed.
const DENSE_RADIUS: f64 = 0.2;

/// Speed from which RiMEA 5 counts a walker as walking, m/s (a waiting walker's velocity is 0;
/// being pushed aside by a passer-by moves it without a velocity of its own).
const WALKING_SPEED: f32 = 0.01;

/// Shared state of a suite run: options, the progress count and the maps run.
struct Ctx<'a> {
    options: &'a VerifyOptions,
    scenarios: Scenarios,
    seeds: Vec<u64>,
    done: AtomicUsize,
    total: usize,
    progress: &'a (dyn Fn(usize, usize) + Sync),
    maps: Mutex<Vec<GeneratedMap>>,
}

impl Ctx<'_> {
    /// Records `map` as run (written beside the report) and returns its file name.
    fn keep(&self, map: &MapFile) -> String {
        let file = format!("{}.json", map.name);
        let mut maps = self.maps.lock().expect("no run panics while holding the lock");
        if !maps.iter().any(|m| m.file == file) {
            maps.push(GeneratedMap {
                file: file.clone(),
                map: map.clone(),
            });
        }
        file
    }

    /// Runs `job` for every `(variant, seed)` pair in parallel, in order.
    fn each<V: Sync, T: Send>(
        &self,
        variants: &[V],
        job: impl Fn(&V, u64) -> Result<T> + Sync,
    ) -> Result<Vec<Vec<T>>> {
        let pairs: Vec<(usize, u64)> = (0..variants.len())
            .flat_map(|v| self.seeds.iter().map(move |&s| (v, s)))
            .collect();
        let results: Vec<Result<T>> = pairs
            .par_iter()
            .map(|&(v, seed)| {
                let r = job(&variants[v], seed);
                let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
                (self.progress)(done, self.total);
                r
            })
            .collect();
        let mut out: Vec<Vec<T>> = (0..variants.len()).map(|_| Vec::new()).collect();
        for ((v, _), r) in pairs.into_iter().zip(results) {
            out[v].push(r?);
        }
        Ok(out)
    }
}

/// The scene sizes of a suite.
struct Sizes {
    densities: Vec<f64>,
    line_densities: Vec<f64>,
    widths: Vec<f64>,
    bottleneck_persons: usize,
    rimea9_room: (f64, f64, usize),
    rimea11_persons: usize,
    rimea12_persons: usize,
    rimea15_persons: usize,
}

impl Sizes {
    fn of(quick: bool) -> Self {
        if quick {
            Sizes {
                densities: vec![0.5, 2.0, 4.0],
                line_densities: vec![1.0, 2.0],
                widths: vec![0.7, 1.2, 2.5],
                bottleneck_persons: 60,
                rimea9_room: (15.0, 10.0, 250),
                rimea11_persons: 100,
                rimea12_persons: 80,
                rimea15_persons: 100,
            }
        } else {
            Sizes {
                densities: vec![0.5, 1.0, 2.0, 3.0, 4.0, 5.0],
                line_densities: vec![1.0, 1.5, 2.0],
                widths: vec![0.7, 1.0, 1.2, 1.6, 2.0, 2.5],
                bottleneck_persons: 100,
                rimea9_room: (30.0, 20.0, 1000),
                rimea11_persons: 200,
                rimea12_persons: 150,
                rimea15_persons: 200,
            }
        }
    }

    /// Runs per seed: one per map the tests run.
    fn runs_per_seed(&self) -> usize {
        // 1, 4 (densities), 5, 6, 7, 9 (two), 10, 11, 12, 15, 16 (line densities), bottleneck.
        1 + self.densities.len()
            + 1
            + 1
            + 1
            + 2
            + 1
            + 1
            + 1
            + 1
            + self.line_densities.len()
            + self.widths.len()
    }
}

/// RiMEA 6's corner: the corridor's width, m, and the walkers.
const RIMEA6_CORNER: (f64, usize) = (2.0, 20);
/// RiMEA 15's corner: the corridor's width, m (the walkers depend on the suite's size).
const RIMEA15_WIDTH: f64 = 4.0;

/// Every map the suite runs, built from the options before anything runs, so a `params` block
/// or model the maps cannot carry is refused before the first run ([`Scenarios::check`]).
struct Scenarios {
    rimea1: MapFile,
    rimea4: Vec<MapFile>,
    rimea5: MapFile,
    rimea6: MapFile,
    rimea7: MapFile,
    rimea9: [MapFile; 2],
    rimea10: MapFile,
    rimea11: MapFile,
    rimea12: MapFile,
    rimea15: MapFile,
    rimea16: Vec<MapFile>,
    bottleneck: Vec<MapFile>,
}

impl Scenarios {
    /// The maps of a suite of `sizes` under `o`.
    fn of(o: &VerifyOptions, sizes: &Sizes) -> Self {
        Scenarios {
            rimea1: rimea1_map(o),
            rimea4: rimea4_maps(o, sizes),
            rimea5: rimea5_map(o),
            rimea6: corner_map(o, 6, RIMEA6_CORNER.0, RIMEA6_CORNER.1),
            rimea7: rimea7_map(o),
            rimea9: [rimea9_map(o, sizes, 4), rimea9_map(o, sizes, 2)],
            rimea10: rimea10_map(o),
            rimea11: rimea11_map(o, sizes),
            rimea12: rimea12_map(o, sizes),
            rimea15: corner_map(o, 15, RIMEA15_WIDTH, sizes.rimea15_persons),
            rimea16: rimea16_maps(o, sizes),
            bottleneck: bottleneck_maps(o, sizes),
        }
    }

    /// Every map, in the order the tests run them.
    fn all(&self) -> Vec<&MapFile> {
        let mut all = vec![&self.rimea1];
        all.extend(&self.rimea4);
        all.extend([&self.rimea5, &self.rimea6, &self.rimea7]);
        all.extend(&self.rimea9);
        all.extend([&self.rimea10, &self.rimea11, &self.rimea12, &self.rimea15]);
        all.extend(&self.rimea16);
        all.extend(&self.bottleneck);
        all
    }

    /// Compiles every map as a run would: the first map's problems (every map carries the same
    /// `params` block and model), each named by the map's file and the JSON path.
    fn check(&self) -> Result<()> {
        for map in self.all() {
            crate::map::compile(map, std::path::Path::new("."), &format!("{}.json", map.name))?;
        }
        Ok(())
    }
}

/// Checks that every map of the suite `options` asks for compiles (see [`super::check`]).
pub(super) fn check(options: &VerifyOptions) -> Result<()> {
    Scenarios::of(options, &Sizes::of(options.quick)).check()
}

/// RiMEA 5's map: ten walkers with pre-movement times uniform in 10–100 s.
fn rimea5_map(o: &VerifyOptions) -> MapFile {
    let mut g = group("walkers", 1.34);
    g.goals.push(goal("exit", rect(7.75, 2.0, 8.0, 3.0), 1.0));
    g.spawns
        .push(spawn_waiting("room", rect(0.5, 0.5, 4.5, 4.5), 10, 10.0, 100.0));
    SceneBuilder::new("rimea-5-premovement", 8.0, 5.0, CELL)
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// The map of RiMEA 6 or 15 (`number`): `persons` walkers round a left turn of a corridor
/// `width` metres wide.
fn corner_map(o: &VerifyOptions, number: u32, width: f64, persons: usize) -> MapFile {
    // The leg walked first runs along x; the second turns left (up) at its end.
    let (leg, up) = (6.0 * width, 6.0 * width);
    let size = leg + width;
    let mut g = group("walkers", 1.34);
    g.goals
        .push(goal("top", rect(leg, up + width - 0.25, size, up + width), width));
    g.spawns
        .push(spawn("start", rect(0.0, 0.0, 0.6 * leg, width), persons));
    SceneBuilder::new(&format!("rimea-{number}-corner"), size, up + width, CELL)
        .wall(rect(0.0, width, leg, up + width))
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// RiMEA 7's map: 50 adults of RiMEA's walking speeds by age on one line across a wide hall.
fn rimea7_map(o: &VerifyOptions) -> MapFile {
    let mut g = group("adults", 1.34);
    g.speed = SpeedRange {
        rimea: Some(RimeaPopulation::Adults.name().to_string()),
        ..Default::default()
    };
    // Everyone starts on one line across a wide hall, so a walker never catches up with a
    // slower one ahead of it: each crosses the lines at its own free speed.
    g.goals.push(goal("end", rect(49.5, 0.0, 50.0, 60.0), 60.0));
    g.spawns.push(spawn("start", rect(0.5, 0.0, 1.5, 60.0), 50));
    SceneBuilder::new("rimea-7-age-groups", 50.0, 60.0, 0.5)
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// RiMEA 9's map with `n` exits (4 or 2): the room inside a 0.5 m wall with 1 m doors; each
/// exit's goal is a strip 2 m long, 1 m past its door (a goal on the map's edge with no wall
/// around it is no door: docs/model.md).
fn rimea9_map(o: &VerifyOptions, sizes: &Sizes, n: usize) -> MapFile {
    let (w, h, persons) = sizes.rimea9_room;
    const WALL: f64 = 0.5;
    const OUTSIDE: f64 = 1.0;
    let m = WALL + OUTSIDE;
    let (width, height) = (w + 2.0 * m, h + 2.0 * m);
    let mut g = group("crowd", 1.34);
    // (x of the door's centre, on the bottom wall)
    let spots = [
        (0.2 * w, true),
        (0.8 * w, false),
        (0.8 * w, true),
        (0.2 * w, false),
    ];
    let mut scene = SceneBuilder::new(&format!("rimea-9-{n}-exits"), width, height, CELL)
        .wall(rect(OUTSIDE, OUTSIDE, width - OUTSIDE, m))
        .wall(rect(OUTSIDE, height - m, width - OUTSIDE, height - OUTSIDE))
        .wall(rect(OUTSIDE, OUTSIDE, m, height - OUTSIDE))
        .wall(rect(width - m, OUTSIDE, width - OUTSIDE, height - OUTSIDE));
    for (k, &(x, bottom)) in spots.iter().take(n).enumerate() {
        let x = m + x;
        let (door, strip) = if bottom {
            (
                rect(x - 0.5, OUTSIDE, x + 0.5, m),
                rect(x - 1.0, 0.0, x + 1.0, 0.25),
            )
        } else {
            (
                rect(x - 0.5, height - m, x + 0.5, height - OUTSIDE),
                rect(x - 1.0, height - 0.25, x + 1.0, height),
            )
        };
        scene = scene.opening(door);
        g.goals.push(goal(&format!("exit {}", k + 1), strip, 1.0));
    }
    g.spawns.push(spawn(
        "room",
        rect(m + 0.5, m + 0.5, m + w - 0.5, m + h - 0.5),
        persons,
    ));
    scene.group(g).params(o.params.clone()).model(o.model).build()
}

/// RiMEA 10's map: two groups, each assigned to the exit farther from it.
fn rimea10_map(o: &VerifyOptions) -> MapFile {
    let mut east = group("to the east exit", 1.34);
    east.goals.push(goal("east", rect(19.75, 4.5, 20.0, 5.5), 1.0));
    east.spawns.push(spawn("west half", rect(2.0, 1.0, 8.0, 9.0), 20));
    let mut west = group("to the west exit", 1.34);
    west.goals.push(goal("west", rect(0.0, 4.5, 0.25, 5.5), 1.0));
    west.spawns
        .push(spawn("east half", rect(12.0, 1.0, 18.0, 9.0), 20));
    SceneBuilder::new("rimea-10-assigned-exits", 20.0, 10.0, CELL)
        .group(east)
        .group(west)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// RiMEA 11's map: a crowd near one of two exits.
fn rimea11_map(o: &VerifyOptions, sizes: &Sizes) -> MapFile {
    let mut g = group("crowd", 1.34);
    g.goals.push(goal("near", rect(1.0, 9.75, 2.0, 10.0), 1.0));
    g.goals.push(goal("far", rect(18.0, 9.75, 19.0, 10.0), 1.0));
    g.spawns
        .push(spawn("left end", rect(0.5, 0.5, 8.0, 9.0), sizes.rimea11_persons));
    SceneBuilder::new("rimea-11-exit-choice", 20.0, 10.0, CELL)
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// RiMEA 12's map: room, 1 m door, corridor, second room with its exit.
fn rimea12_map(o: &VerifyOptions, sizes: &Sizes) -> MapFile {
    let mut g = group("crowd", 1.34);
    g.goals.push(goal("exit", rect(29.75, 4.0, 30.0, 6.0), 2.0));
    g.spawns.push(spawn(
        "first room",
        rect(0.5, 0.5, 8.0, 9.5),
        sizes.rimea12_persons,
    ));
    SceneBuilder::new("rimea-12-room-corridor-room", 30.0, 10.0, CELL)
        .wall(rect(10.0, 0.0, 10.5, 10.0))
        .opening(rect(10.0, 4.5, 10.5, 5.5))
        .wall(rect(10.5, 0.0, 20.0, 4.0))
        .wall(rect(10.5, 6.0, 20.0, 10.0))
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// RiMEA 16's maps: a corridor 0.5 m wide at each line density.
fn rimea16_maps(o: &VerifyOptions, sizes: &Sizes) -> Vec<MapFile> {
    const WIDTH: f64 = 0.5;
    sizes
        .line_densities
        .iter()
        .map(|&rho| {
            let count = (rho * 30.0).round() as usize;
            crowded_corridor(o, &format!("rimea-16-line-density-{}", tag(rho)), WIDTH, count)
        })
        .collect()
}

/// The bottleneck series' maps: a room emptying through one door of each width.
fn bottleneck_maps(o: &VerifyOptions, sizes: &Sizes) -> Vec<MapFile> {
    let persons = sizes.bottleneck_persons;
    sizes
        .widths
        .iter()
        .map(|&w| {
            // The door spans whole cells: its edges sit 0.01 m below cell boundaries, so float
            // rounding never adds or drops a row of cells.
            let (y0, y1) = (4.0 - w / 2.0 - 0.01, 4.0 + w / 2.0 - 0.01);
            let mut g = group("crowd", 1.34);
            g.goals.push(goal("door", rect(8.4, y0, 8.6, y1), w));
            g.spawns.push(spawn("room", rect(0.5, 0.5, 6.0, 7.5), persons));
            SceneBuilder::new(&format!("bottleneck-{}-m", tag(w)), 9.0, 8.0, BOTTLENECK_CELL)
                .wall(rect(8.0, 0.0, 8.4, 8.0))
                .opening(rect(8.0, y0, 8.4, y1))
                .group(g)
                .params(o.params.clone())
                .model(o.model)
                .build()
        })
        .collect()
}

/// Runs the suite (see [`super::run_suite`]).
pub(super) fn run(
    options: &VerifyOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(VerifyReport, Vec<GeneratedMap>)> {
    let sizes = Sizes::of(options.quick);
    let scenarios = Scenarios::of(options, &sizes);
    scenarios.check()?;
    let seeds: Vec<u64> = (0..options.seeds.max(1)).collect();
    let ctx = Ctx {
        options,
        scenarios,
        total: sizes.runs_per_seed() * seeds.len(),
        seeds,
        done: AtomicUsize::new(0),
        progress,
        maps: Mutex::new(Vec::new()),
    };
    let mut tests = vec![rimea1(&ctx)?];
    tests.push(stairs(2, "up"));
    tests.push(stairs(3, "down"));
    let (t4, fundamental_diagram) = rimea4(&ctx)?;
    tests.push(t4);
    tests.push(rimea5(&ctx)?);
    tests.push(corner(&ctx, 6, RIMEA6_CORNER.0, RIMEA6_CORNER.1)?);
    tests.push(rimea7(&ctx)?);
    let (t9, overlap, arrival_curves) = rimea9(&ctx, &sizes)?;
    tests.push(t9);
    tests.push(rimea10(&ctx)?);
    tests.push(rimea11(&ctx, &sizes)?);
    tests.push(rimea12(&ctx, &sizes)?);
    tests.push(stairs(13, "up and down (with a corridor)"));
    tests.push(corner(&ctx, 15, RIMEA15_WIDTH, sizes.rimea15_persons)?);
    let (t16, single_file) = rimea16(&ctx)?;
    tests.push(t16);
    let (tb, bottleneck) = bottleneck_series(&ctx, &sizes)?;
    tests.push(tb);
    tests.push(overlap);
    let passed = tests.iter().all(|t| t.status != Status::Fail);
    let report = VerifyReport {
        quick: options.quick,
        seeds: ctx.seeds.len() as u64,
        params: options.params.clone(),
        model: Params::for_map(options.model, options.params.as_ref())
            .model
            .name()
            .to_string(),
        local: options.local.name().to_string(),
        tests,
        passed,
        fundamental_diagram,
        single_file,
        bottleneck,
        arrival_curves,
    };
    let mut maps = ctx
        .maps
        .into_inner()
        .expect("no run panics while holding the lock");
    maps.sort_by(|a, b| a.file.cmp(&b.file));
    Ok((report, maps))
}

/// Pass when `ok`, else fail.
fn status(ok: bool) -> Status {
    if ok { Status::Pass } else { Status::Fail }
}

/// A number for map names: `0.7` → `0.7`, `2` → `2`.
fn tag(v: f64) -> String {
    format!("{v}")
}

/// A test result from its parts.
#[allow(clippy::too_many_arguments)]
fn result(
    id: &str,
    title: &str,
    checks: &str,
    criterion: &str,
    source: &str,
    measured: String,
    values: Vec<f64>,
    ok: bool,
    maps: Vec<String>,
) -> TestResult {
    TestResult {
        id: id.to_string(),
        title: title.to_string(),
        checks: checks.to_string(),
        criterion: criterion.to_string(),
        source: source.to_string(),
        measured,
        values,
        status: status(ok),
        maps,
    }
}

/// A speed test's result from its judged points ([`judge_speeds`]): `texts` are its id, title,
/// checks, criterion and source; the points come back for the plot.
fn speed_result(
    [id, title, checks, criterion, source]: [&str; 5],
    (points, ok, words): (Vec<Point>, bool, Vec<String>),
    files: Vec<String>,
) -> (TestResult, Vec<Point>) {
    let values = points.iter().map(|p| p.y).collect();
    let ok = ok && !points.is_empty();
    let test = result(
        id,
        title,
        checks,
        criterion,
        source,
        words.join("; "),
        values,
        ok,
        files,
    );
    (test, points)
}

/// RiMEA 1's map: one walker at 1.33 m/s along a 40 m corridor 2 m wide.
fn rimea1_map(o: &VerifyOptions) -> MapFile {
    let mut g = group("walker", 1.33);
    g.goals.push(goal("end", rect(39.75, 0.0, 40.0, 2.0), 2.0));
    g.spawns.push(spawn("start", rect(0.0, 0.75, 0.5, 1.25), 1));
    SceneBuilder::new("rimea-1-corridor", 40.0, 2.0, CELL)
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// RiMEA 1: one walker at 1.33 m/s along a 40 m corridor 2 m wide.
fn rimea1(ctx: &Ctx) -> Result<TestResult> {
    let map = ctx.scenarios.rimea1.clone();
    let file = ctx.keep(&map);
    let times = ctx.each(&[map], |map, seed| {
        let sim = simulate(map, seed, ctx.options, 120.0, |_| {})?;
        Ok(sim.arrivals().first().map_or(f64::INFINITY, |a| a.time))
    })?;
    let times = times.into_iter().next().unwrap_or_default();
    let ok = times.iter().all(|t| (RIMEA1_BAND.0..=RIMEA1_BAND.1).contains(t));
    Ok(result(
        "rimea-1",
        "RiMEA 1: walking speed in a corridor",
        "One walker of 1.33 m/s walks 40 m down a corridor 2 m wide.",
        "travel time 26–34 s on every seed",
        &format!("{RIMEA}, test 1"),
        describe(&times, " s", 1),
        times,
        ok,
        vec![file],
    ))
}

/// RiMEA 2, 3, 13: stairs, not applicable.
fn stairs(number: u32, what: &str) -> TestResult {
    TestResult {
        id: format!("rimea-{number}"),
        title: format!("RiMEA {number}: walking speed on stairs ({what})"),
        checks: "A walker keeps a given speed on a staircase.".to_string(),
        criterion: "not applicable".to_string(),
        source: format!("{RIMEA}, test {number}"),
        measured:
            "not run: the terrain slows walkers by its slope (params.s_min to s_max), but a stair has no \
                   speed of its own in the model; a slope standing in for a stair would test the slope law, \
                   not a stair"
                .to_string(),
        values: Vec::new(),
        status: Status::NotApplicable,
        maps: Vec::new(),
    }
}

/// Mean density and speed in a measurement box during a time window.
#[derive(Default)]
struct BoxMeasure {
    persons: f64,
    speed_sum: f64,
    samples: usize,
}

impl BoxMeasure {
    /// Adds the walkers inside `[x0, x1] x [y0, y1]` of `sim` at this step.
    fn add(&mut self, sim: &crate::sim::Simulation, (x0, x1): (f64, f64)) {
        let (xs, _) = sim.positions();
        let (vx, vy) = sim.velocities();
        for i in 0..xs.len() {
            let x = xs[i] as f64;
            if (x0..x1).contains(&x) {
                self.persons += 1.0;
                self.speed_sum += (vx[i] as f64).hypot(vy[i] as f64);
            }
        }
        self.samples += 1;
    }

    /// `(persons per unit of the box's size, mean speed)`.
    fn result(&self, size: f64) -> (f64, f64) {
        let density = self.persons / self.samples.max(1) as f64 / size;
        let speed = if self.persons > 0.0 {
            self.speed_sum / self.persons
        } else {
            0.0
        };
        (density, speed)
    }
}

/// Runs a corridor of [`crowded_corridor`] and measures the box from 12 m to 18 m between
/// 2 s and 10 s: `(persons per unit of box_size (its area, or its length in single file),
/// mean speed)`.
fn corridor_measure(ctx: &Ctx, map: &MapFile, seed: u64, box_size: f64) -> Result<(f64, f64)> {
    const WINDOW: (f64, f64) = (2.0, 10.0);
    let mut m = BoxMeasure::default();
    simulate(map, seed, ctx.options, WINDOW.1, |sim| {
        if sim.time() >= WINDOW.0 && sim.time() <= WINDOW.1 {
            m.add(sim, (12.0, 18.0));
        }
    })?;
    Ok(m.result(box_size))
}

/// A corridor of `width` metres and 50 m with `count` walkers over its first 30 m.
fn crowded_corridor(o: &VerifyOptions, name: &str, width: f64, count: usize) -> MapFile {
    let mut g = group("walkers", super::criteria::WEIDMANN_FREE_SPEED);
    g.radius = DENSE_RADIUS;
    g.goals.push(goal("end", rect(49.75, 0.0, 50.0, width), width));
    g.spawns.push(spawn("crowd", rect(0.0, 0.0, 30.0, width), count));
    SceneBuilder::new(name, 50.0, width, CELL)
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// The width of RiMEA 4's corridor, m.
const RIMEA4_WIDTH: f64 = 4.0;

/// RiMEA 4's maps: a corridor 4 m wide at each starting density.
fn rimea4_maps(o: &VerifyOptions, sizes: &Sizes) -> Vec<MapFile> {
    sizes
        .densities
        .iter()
        .map(|&rho| {
            let count = (rho * 30.0 * RIMEA4_WIDTH).round() as usize;
            crowded_corridor(o, &format!("rimea-4-density-{}", tag(rho)), RIMEA4_WIDTH, count)
        })
        .collect()
}

/// RiMEA 4: speed against density in a corridor 4 m wide, against Weidmann's diagram.
fn rimea4(ctx: &Ctx) -> Result<(TestResult, Vec<Point>)> {
    const WIDTH: f64 = RIMEA4_WIDTH;
    let maps = &ctx.scenarios.rimea4;
    let files: Vec<String> = maps.iter().map(|m| ctx.keep(m)).collect();
    let measured = ctx.each(maps, |map, seed| corridor_measure(ctx, map, seed, 6.0 * WIDTH))?;
    let judged = judge_speeds(&measured, &ctx.seeds, "m²", "Weidmann", weidmann_speed);
    Ok(speed_result(
        [
            "rimea-4",
            "RiMEA 4: fundamental diagram",
            "Speed against density in a corridor 4 m wide, measured over 6 m x 4 m between 2 s and 10 s, \
             at starting densities from 0.5 to 5 persons/m².",
            "speed within max(0.15 m/s, 25 %) of Weidmann's at the measured density, every density and seed",
            &format!("{RIMEA}, test 4; Weidmann 1993 (v = 1.34 (1 − exp(−1.913 (1/ρ − 1/5.4))))"),
        ],
        judged,
        files,
    ))
}

/// RiMEA 5: ten walkers with pre-movement times uniform in 10–100 s.
fn rimea5(ctx: &Ctx) -> Result<TestResult> {
    let map = ctx.scenarios.rimea5.clone();
    let file = ctx.keep(&map);
    let runs = ctx.each(&[map], |map, seed| {
        let mut start: HashMap<u32, (f32, f32, f64)> = HashMap::new();
        let mut first_move: HashMap<u32, f64> = HashMap::new();
        let mut pushed: f64 = 0.0;
        let sim = simulate(map, seed, ctx.options, 200.0, |sim| {
            let (xs, ys) = sim.positions();
            let (vx, vy) = sim.velocities();
            for (i, &id) in sim.ids().iter().enumerate() {
                let entry = *start
                    .entry(id)
                    .or_insert((xs[i], ys[i], sim.agents().start_time[i] as f64));
                if vx[i].hypot(vy[i]) > WALKING_SPEED {
                    // The step that ends now is the first it walked.
                    first_move.entry(id).or_insert(sim.time() - sim.dt());
                } else if !first_move.contains_key(&id) {
                    pushed = pushed.max((xs[i] - entry.0).hypot(ys[i] - entry.1) as f64);
                }
            }
        })?;
        // Walkers that left the room moved; the last step they were seen bounds the time.
        for a in sim.arrivals() {
            first_move.entry(a.id).or_insert(a.time);
        }
        // The earliest and the latest first step relative to each walker's own time, and the
        // range of the times drawn.
        let (mut early, mut late) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for (id, (_, _, at)) in &start {
            (lo, hi) = (lo.min(*at), hi.max(*at));
            let moved = first_move.get(id).copied().unwrap_or(f64::INFINITY);
            (early, late) = (early.min(moved - at), late.max(moved - at));
        }
        Ok((late, early, (lo, hi), start.len(), pushed))
    })?;
    let runs = runs.into_iter().next().unwrap_or_default();
    let values: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let earliest: Vec<f64> = runs.iter().map(|r| r.1).collect();
    let drawn_lo = runs.iter().map(|r| r.2.0).fold(f64::INFINITY, f64::min);
    let drawn_hi = runs.iter().map(|r| r.2.1).fold(f64::NEG_INFINITY, f64::max);
    let pushed = runs.iter().map(|r| r.4).fold(0.0, f64::max);
    let ok = runs.iter().all(|&(late, early, (lo, hi), n, _)| {
        n == 10 && lo >= 10.0 && hi <= 100.0 && early >= 0.0 && late <= 1.0
    });
    Ok(result(
        "rimea-5",
        "RiMEA 5: pre-movement time",
        "Ten walkers in an 8 m x 5 m room with pre-movement times drawn uniformly in 10–100 s.",
        "every drawn time in 10–100 s; nobody walks before its time; everyone walks within 1 s after it",
        &format!("{RIMEA}, test 5"),
        format!(
            "times drawn {drawn_lo:.1}–{drawn_hi:.1} s; first steps from {} to {} after each walker's time; \
             waiting walkers pushed aside by passers-by up to {pushed:.2} m",
            describe(&earliest, " s", 2),
            describe(&values, " s", 2)
        ),
        values,
        ok,
        vec![file],
    ))
}

/// RiMEA 6 (20 walkers, corridor 2 m wide) and 15 (a large crowd, 4 m wide): round a left
/// turn, no wall crossed.
fn corner(ctx: &Ctx, number: u32, width: f64, persons: usize) -> Result<TestResult> {
    let map = if number == 6 {
        ctx.scenarios.rimea6.clone()
    } else {
        ctx.scenarios.rimea15.clone()
    };
    let file = ctx.keep(&map);
    let runs = ctx.each(&[map], |map, seed| {
        let mut crossings = 0usize;
        let sim = simulate(map, seed, ctx.options, 300.0, |sim| {
            let (xs, ys) = sim.positions();
            crossings += xs
                .iter()
                .zip(ys)
                .filter(|(x, y)| !crate::collision::walls::passable(sim.scene(), **x, **y))
                .count();
        })?;
        Ok((crossings, sim.agents().len()))
    })?;
    let runs = runs.into_iter().next().unwrap_or_default();
    let values: Vec<f64> = runs.iter().map(|r| r.0 as f64).collect();
    let left: usize = runs.iter().map(|r| r.1).sum();
    let ok = runs.iter().all(|&(c, l)| c == 0 && l == 0);
    let (title, checks) = if number == 6 {
        (
            "RiMEA 6: movement round a corner",
            format!("{persons} walkers round a left turn of a corridor {width} m wide."),
        )
    } else {
        (
            "RiMEA 15: large crowd round a corner",
            format!("{persons} walkers round a left turn of a corridor {width} m wide."),
        )
    };
    Ok(result(
        &format!("rimea-{number}"),
        title,
        &checks,
        "everyone out; no walker ever inside a wall, on every seed",
        &format!("{RIMEA}, test {number}"),
        format!(
            "walker-steps inside a wall: {}; left inside at the time limit: {left}",
            describe(&values, "", 0)
        ),
        values,
        ok,
        vec![file],
    ))
}

/// The measured `(density, speed)` of every run (per map, per seed) as plot points, whether
/// every speed matches `reference` at its density ([`speed_matches`]), and each point in words
/// (`"0.49/m²: 1.33 m/s (Weidmann 1.30)"`, densities per `unit`).
fn judge_speeds(
    measured: &[Vec<(f64, f64)>],
    seeds: &[u64],
    unit: &str,
    reference_name: &str,
    reference: fn(f64) -> f64,
) -> (Vec<Point>, bool, Vec<String>) {
    let mut points = Vec::new();
    let mut ok = true;
    for per_seed in measured {
        for (&(rho, v), &seed) in per_seed.iter().zip(seeds) {
            points.push(Point { x: rho, y: v, seed });
            ok &= speed_matches(v, reference(rho));
        }
    }
    let words = points
        .iter()
        .map(|p| {
            format!(
                "{:.2}/{unit}: {:.2} m/s ({reference_name} {:.2})",
                p.x,
                p.y,
                reference(p.x)
            )
        })
        .collect();
    (points, ok, words)
}

/// RiMEA 7: 50 adults of RiMEA's walking speeds by age; their free speeds measured.
fn rimea7(ctx: &Ctx) -> Result<TestResult> {
    const LINES: (f64, f64) = (22.0, 47.0);
    let map = ctx.scenarios.rimea7.clone();
    let file = ctx.keep(&map);
    let runs = ctx.each(&[map], |map, seed| {
        let mut assigned: HashMap<u32, f64> = HashMap::new();
        let mut crossed: HashMap<u32, [Option<f64>; 2]> = HashMap::new();
        simulate(map, seed, ctx.options, 120.0, |sim| {
            let (xs, _) = sim.positions();
            for (i, &id) in sim.ids().iter().enumerate() {
                assigned.entry(id).or_insert(sim.agents().max_speed[i] as f64);
                let c = crossed.entry(id).or_default();
                for (k, line) in [LINES.0, LINES.1].into_iter().enumerate() {
                    if c[k].is_none() && xs[i] as f64 >= line {
                        c[k] = Some(sim.time());
                    }
                }
            }
        })?;
        let mut counts = [0usize; 6];
        let mut worst: f64 = 0.0;
        for (id, v0) in &assigned {
            let Some(k) = RIMEA_AGE_GROUPS
                .iter()
                .position(|g| (g.min - 1e-6..=g.max + 1e-6).contains(v0))
            else {
                worst = f64::INFINITY;
                continue;
            };
            counts[k] += 1;
            let band = RIMEA_AGE_GROUPS[k];
            let v = match crossed.get(id) {
                Some([Some(a), Some(b)]) if b > a => (LINES.1 - LINES.0) / (b - a),
                _ => 0.0,
            };
            let off = if v < band.min {
                band.min - v
            } else if v > band.max {
                v - band.max
            } else {
                0.0
            };
            worst = worst.max(off);
        }
        Ok((worst, counts))
    })?;
    let runs = runs.into_iter().next().unwrap_or_default();
    let expected: Vec<usize> = crate::speeds::RIMEA_ADULT_SHARES
        .iter()
        .map(|s| (s * 50.0).round() as usize)
        .collect();
    let values: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let ok = runs
        .iter()
        .all(|(worst, counts)| *worst <= FREE_SPEED_TOLERANCE && counts.as_slice() == expected.as_slice());
    let counts = runs.first().map(|r| format!("{:?}", r.1)).unwrap_or_default();
    let params = Params::for_map(ctx.options.model, ctx.options.params.as_ref());
    let f_max = params.f_max;
    // The published model walks at the speed field's speed, at most `f_max`; the pedestrian
    // model at each walker's own.
    let capped = if params.model == Model::ContinuumCrowds && RimeaPopulation::Adults.range().1 > f_max {
        format!(" (params.f_max {f_max} m/s caps the walkers' speed on the potential)")
    } else {
        String::new()
    };
    Ok(result(
        "rimea-7",
        "RiMEA 7: walking speeds by age group",
        "50 adults of `\"speed\": {\"rimea\": \"adults\"}` start on one line across a 60 m hall and walk freely; each one's speed is measured between \
         22 m and 47 m.",
        &format!(
            "age groups 20-29 … 70-79 hold 10, 10, 10, 10, 5, 5 walkers; every measured speed inside its \
             group's range ±{FREE_SPEED_TOLERANCE} m/s"
        ),
        &format!("{RIMEA}, test 7 (walking speed by age after Weidmann 1993)"),
        format!(
            "walkers per age group {counts}; largest distance of a measured speed from its range: {}{capped}",
            describe(&values, " m/s", 3)
        ),
        values,
        ok,
        vec![file],
    ))
}

/// RiMEA 9: a room emptying through four exits, then through two. Also judges overlap on the
/// four-exit runs.
fn rimea9(ctx: &Ctx, sizes: &Sizes) -> Result<(TestResult, TestResult, Vec<ArrivalCurve>)> {
    let (w, h, persons) = sizes.rimea9_room;
    let maps = &ctx.scenarios.rimea9;
    let files: Vec<String> = maps.iter().map(|m| ctx.keep(m)).collect();
    let runs = ctx.each(maps, |map, seed| {
        let sim = simulate(map, seed, ctx.options, 600.0, |_| {})?;
        let report = sim.report();
        Ok((
            report.total.evacuation_time,
            report.total.arrival_curve.clone(),
            report.quality.collisions_per_step,
            report.total.peak_density.persons_per_m2,
        ))
    })?;
    let mut curves = Vec::new();
    for (k, per_seed) in runs.iter().enumerate() {
        let n = if k == 0 { 4 } else { 2 };
        for (r, &seed) in per_seed.iter().zip(&ctx.seeds) {
            curves.push(ArrivalCurve {
                label: format!("{n} exits, seed {seed}"),
                exits: n,
                seed,
                curve: r.1.clone(),
            });
        }
    }
    let ratios: Vec<f64> = runs[0]
        .iter()
        .zip(&runs[1])
        .map(|(four, two)| match (four.0, two.0) {
            (Some(t4), Some(t2)) if t4 > 0.0 => t2 / t4,
            _ => f64::INFINITY,
        })
        .collect();
    let t4: Vec<f64> = runs[0].iter().map(|r| r.0.unwrap_or(f64::INFINITY)).collect();
    let t2: Vec<f64> = runs[1].iter().map(|r| r.0.unwrap_or(f64::INFINITY)).collect();
    let ok = ratios
        .iter()
        .all(|r| (RIMEA9_RATIO.0..=RIMEA9_RATIO.1).contains(r));
    let t9 = result(
        "rimea-9",
        "RiMEA 9: a large room, four exits then two",
        &format!(
            "{persons} walkers leave a {w} m x {h} m room through four 1 m doors in its 0.5 m wall, then through two \
             of them; each exit's goal lies 1 m past its door."
        ),
        "every run complete; evacuation time with two exits 1.6–2.4 times that with four, every seed",
        &format!("{RIMEA}, test 9 (closing half the exits about doubles the time)"),
        format!(
            "ratio {}; four exits {}, two exits {}{}",
            describe(&ratios, "", 2),
            describe(&t4, " s", 1),
            describe(&t2, " s", 1),
            if t4.iter().chain(&t2).any(|t| t.is_infinite()) {
                " (∞: not complete in 600 s)"
            } else {
                ""
            }
        ),
        ratios,
        ok,
        files.clone(),
    );
    let per_agent: Vec<f64> = runs[0].iter().map(|r| r.2 / persons as f64).collect();
    let peaks: Vec<f64> = runs[0].iter().map(|r| r.3).collect();
    let limit = packing_limit(crate::map::format::DEFAULT_RADIUS);
    let overlap_ok = per_agent.iter().all(|c| *c < 0.01);
    let overlap = result(
        "overlap",
        "Bodies do not overlap",
        &format!("Colliding pairs per step in RiMEA 9's room with four exits ({persons} walkers)."),
        "colliding pairs (closer than the sum of their radii, beyond the contact tolerance) per step under 1 % \
         of the walkers, every seed",
        "physical: bodies do not overlap",
        format!(
            "colliding pairs per step per walker {}; peak density over 1 m² {} (a 1 m square holds up to 9 \
             bodies of 0.25 m without overlap; the hexagonal packing of a large crowd is {limit:.2} persons/m²)",
            describe(&per_agent, "", 4),
            describe(&peaks, " persons/m²", 2)
        ),
        per_agent,
        overlap_ok,
        vec![files[0].clone()],
    );
    Ok((t9, overlap, curves))
}

/// RiMEA 10: two groups assigned to the exit farther from them.
fn rimea10(ctx: &Ctx) -> Result<TestResult> {
    let map = ctx.scenarios.rimea10.clone();
    let file = ctx.keep(&map);
    let runs = ctx.each(&[map], |map, seed| {
        let sim = simulate(map, seed, ctx.options, 300.0, |_| {})?;
        let total: usize = sim.spawned().iter().sum();
        // Each group's only goal is its assigned exit: index 0 of the group's goals.
        let right = sim.arrivals().iter().filter(|a| a.exit == 0).count();
        Ok(right as f64 / total.max(1) as f64)
    })?;
    let values = runs.into_iter().next().unwrap_or_default();
    let ok = values.iter().all(|v| *v == 1.0);
    Ok(result(
        "rimea-10",
        "RiMEA 10: assigned exits",
        "Two groups of 20 in a 20 m x 10 m room, each assigned the exit on the far side of the room.",
        "every walker leaves through its assigned exit, every seed",
        &format!("{RIMEA}, test 10"),
        format!("share through the assigned exit: {}", describe(&values, "", 3)),
        values,
        ok,
        vec![file],
    ))
}

/// RiMEA 11: a crowd near one of two exits; most take the nearer.
fn rimea11(ctx: &Ctx, sizes: &Sizes) -> Result<TestResult> {
    let persons = sizes.rimea11_persons;
    let map = ctx.scenarios.rimea11.clone();
    let file = ctx.keep(&map);
    let runs = ctx.each(&[map], |map, seed| {
        let sim = simulate(map, seed, ctx.options, 600.0, |_| {})?;
        let near = sim.arrivals().iter().filter(|a| a.exit == 0).count();
        Ok((near as f64 / persons as f64, sim.agents().len()))
    })?;
    let runs = runs.into_iter().next().unwrap_or_default();
    let values: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let ok = runs.iter().all(|&(share, left)| share > 0.5 && left == 0);
    Ok(result(
        "rimea-11",
        "RiMEA 11: choice of exit",
        &format!(
            "{persons} walkers at one end of a 20 m x 10 m room with a 1 m exit near them and one far away."
        ),
        "everyone out; more than half through the nearer exit, every seed",
        &format!("{RIMEA}, test 11"),
        format!("share through the nearer exit: {}", describe(&values, "", 2)),
        values,
        ok,
        vec![file],
    ))
}

/// Peak density over time in rectangles (by persons in them over their area).
struct RegionPeaks {
    regions: Vec<(f64, f64, f64, f64)>,
    peaks: Vec<f64>,
}

impl RegionPeaks {
    fn new(regions: Vec<(f64, f64, f64, f64)>) -> Self {
        let n = regions.len();
        Self {
            regions,
            peaks: vec![0.0; n],
        }
    }

    fn add(&mut self, sim: &crate::sim::Simulation) {
        let (xs, ys) = sim.positions();
        for (k, &(x0, y0, x1, y1)) in self.regions.iter().enumerate() {
            let n = xs
                .iter()
                .zip(ys)
                .filter(|(x, y)| (x0..x1).contains(&(**x as f64)) && (y0..y1).contains(&(**y as f64)))
                .count();
            let d = n as f64 / ((x1 - x0) * (y1 - y0));
            self.peaks[k] = self.peaks[k].max(d);
        }
    }
}

/// RiMEA 12: room, 1 m door, corridor, second room with its exit; the jam forms at the door
/// only.
fn rimea12(ctx: &Ctx, sizes: &Sizes) -> Result<TestResult> {
    let persons = sizes.rimea12_persons;
    let map = ctx.scenarios.rimea12.clone();
    let file = ctx.keep(&map);
    let runs = ctx.each(&[map], |map, seed| {
        // In front of the door, in the corridor, in front of the exit.
        let mut peaks = RegionPeaks::new(vec![
            (8.0, 3.5, 10.0, 6.5),
            (13.0, 4.0, 17.0, 6.0),
            (27.75, 3.5, 29.75, 6.5),
        ]);
        let sim = simulate(map, seed, ctx.options, 600.0, |sim| peaks.add(sim))?;
        Ok((peaks.peaks, sim.agents().len()))
    })?;
    let runs = runs.into_iter().next().unwrap_or_default();
    let values: Vec<f64> = runs
        .iter()
        .map(|(p, _)| p[1].max(p[2]) / p[0].max(1e-9))
        .collect();
    let ok = runs
        .iter()
        .zip(&values)
        .all(|((_, left), v)| *v < 1.0 && *left == 0);
    let words: Vec<String> = runs
        .iter()
        .map(|(p, _)| {
            format!(
                "door {:.2}, corridor {:.2}, exit {:.2} persons/m²",
                p[0], p[1], p[2]
            )
        })
        .collect();
    Ok(result(
        "rimea-12",
        "RiMEA 12: jam at the first bottleneck only",
        &format!(
            "{persons} walkers leave a room through a 1 m door into a corridor 2 m wide and 9.5 m long, then a \
             second room with a 2 m exit."
        ),
        "everyone out; the peak density in the corridor and in front of the exit below that in front of the \
         door (ratio < 1), every seed",
        &format!("{RIMEA}, test 12"),
        format!(
            "peak densities: {} (ratio {})",
            words.join("; "),
            describe(&values, "", 2)
        ),
        values,
        ok,
        vec![file],
    ))
}

/// RiMEA 16: single file, speed against line density, against Seyfried et al. 2005.
fn rimea16(ctx: &Ctx) -> Result<(TestResult, Vec<Point>)> {
    let maps = &ctx.scenarios.rimea16;
    let files: Vec<String> = maps.iter().map(|m| ctx.keep(m)).collect();
    let measured = ctx.each(maps, |map, seed| corridor_measure(ctx, map, seed, 6.0))?;
    let judged = judge_speeds(&measured, &ctx.seeds, "m", "reference", single_file_speed);
    Ok(speed_result(
        [
            "rimea-16",
            "RiMEA 16: single file",
            "Speed against line density of walkers in single file in a corridor 0.5 m wide, measured over 6 m \
             between 2 s and 10 s.",
            "speed within max(0.15 m/s, 25 %) of the single-file diagram at the measured line density",
            &format!("{RIMEA}, test 16; Seyfried et al. 2005 (required length d = 0.36 m + 1.06 s · v)"),
        ],
        judged,
        files,
    ))
}

/// The bottleneck series: a room emptying through one door of each width.
fn bottleneck_series(ctx: &Ctx, sizes: &Sizes) -> Result<(TestResult, Vec<Point>)> {
    let persons = sizes.bottleneck_persons;
    let maps = &ctx.scenarios.bottleneck;
    let files: Vec<String> = maps.iter().map(|m| ctx.keep(m)).collect();
    let runs = ctx.each(maps, |map, seed| {
        let sim = simulate(map, seed, ctx.options, 400.0, |_| {})?;
        let times: Vec<f64> = sim.arrivals().iter().map(|a| a.time).collect();
        let width = map.groups[0].goals[0].width.unwrap_or(1.0);
        Ok((steady_specific_flow(&times, width), sim.agents().len()))
    })?;
    let mut points = Vec::new();
    let mut ok = true;
    let mut mean_flows = Vec::new();
    let mut left = 0usize;
    for (per_seed, &w) in runs.iter().zip(&sizes.widths) {
        let mut sum = 0.0;
        for (&(flow, l), &seed) in per_seed.iter().zip(&ctx.seeds) {
            let f = flow.unwrap_or(0.0);
            points.push(Point { x: w, y: f, seed });
            ok &= l == 0 && (FLOW_BAND.0..=FLOW_BAND.1).contains(&f);
            left += l;
            sum += f * w;
        }
        mean_flows.push(sum / per_seed.len().max(1) as f64);
    }
    let growing = grows(&mean_flows, 0.05);
    let words: Vec<String> = sizes
        .widths
        .iter()
        .map(|w| {
            let v: Vec<f64> = points.iter().filter(|p| p.x == *w).map(|p| p.y).collect();
            format!("{w} m: {}", describe(&v, "", 2))
        })
        .collect();
    Ok((
        result(
            "bottleneck",
            "Bottleneck: flow against door width",
            &format!(
                "{persons} walkers leave a room through one door 0.4 m deep, widths {} m; the steady flow \
                 (10th to 90th percentile of the arrivals) per metre of door.",
                sizes
                    .widths
                    .iter()
                    .map(|w| tag(*w))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "specific flow 1.3–1.9 persons/(m·s) at every width and seed; total flow growing with width; \
             everyone out",
            "Seyfried et al. 2009 (bottleneck experiments, 1.3–1.9 persons/(m·s)); Kretz et al. 2006",
            format!(
                "specific flow, persons/(m·s): {}; total flow growing: {}; left inside: {left}",
                words.join("; "),
                if growing { "yes" } else { "no" }
            ),
            points.iter().map(|p| p.y).collect(),
            ok && growing,
            files,
        ),
        points,
    ))
}
