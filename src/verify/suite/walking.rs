//! The tests of walkers on their own or in a line: free walking (RiMEA 1, 7), pre-movement
//! (RiMEA 5), the fundamental diagrams (RiMEA 4, 16), and the stair tests the model does not
//! apply to (RiMEA 2, 3, 13).

use super::maps::RIMEA4_WIDTH;
use super::{Ctx, RIMEA, result, speed_result};
use crate::error::Result;
use crate::map::MapFile;
use crate::params::{Model, Params};
use crate::speeds::{RIMEA_AGE_GROUPS, RimeaPopulation};
use crate::verify::criteria::{describe, single_file_speed, speed_matches, weidmann_speed};
use crate::verify::{Point, Status, TestResult, simulate};
use std::collections::HashMap;

/// RiMEA 1's band of travel times, s.
const RIMEA1_BAND: (f64, f64) = (26.0, 34.0);

/// Tolerance of a measured free speed against its age group's range, m/s: the crossing times
/// are read at whole steps (0.1 s over some 17 s of walking, under 0.01 m/s) and paths bend
/// round slower walkers.
const FREE_SPEED_TOLERANCE: f64 = 0.05;

/// Speed from which RiMEA 5 counts a walker as walking, m/s (a waiting walker's velocity is 0;
/// being pushed aside by a passer-by moves it without a velocity of its own).
const WALKING_SPEED: f32 = 0.01;

/// RiMEA 1: one walker at 1.33 m/s along a 40 m corridor 2 m wide.
pub(super) fn rimea1(ctx: &Ctx) -> Result<TestResult> {
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
pub(super) fn stairs(number: u32, what: &str) -> TestResult {
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

/// Runs a corridor of [`super::maps::crowded_corridor`] and measures the box from 12 m to
/// 18 m between 2 s and 10 s: `(persons per unit of box_size (its area, or its length in single
/// file), mean speed)`.
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

/// The measured `(density, speed)` of every run (per map, per seed) as plot points, whether
/// every speed matches `reference` at its density ([`speed_matches`]), and each point in words
/// (`"0.49/m²: 1.33 m/s (Weidmann 1.30)"`, densities per `unit`).
pub(super) fn judge_speeds(
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

/// RiMEA 4: speed against density in a corridor 4 m wide, against Weidmann's diagram.
pub(super) fn rimea4(ctx: &Ctx) -> Result<(TestResult, Vec<Point>)> {
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
pub(super) fn rimea5(ctx: &Ctx) -> Result<TestResult> {
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

/// RiMEA 7: 50 adults of RiMEA's walking speeds by age; their free speeds measured.
pub(super) fn rimea7(ctx: &Ctx) -> Result<TestResult> {
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

/// RiMEA 16: single file, speed against line density, against Seyfried et al. 2005.
pub(super) fn rimea16(ctx: &Ctx) -> Result<(TestResult, Vec<Point>)> {
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
