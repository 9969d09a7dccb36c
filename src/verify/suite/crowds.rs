//! The tests of crowds leaving rooms: round a corner (RiMEA 6, 15), through four exits and
//! two (RiMEA 9, with the overlap check), to assigned and chosen exits (RiMEA 10, 11), a jam
//! at the first bottleneck (RiMEA 12) and the bottleneck series.

use super::maps::Sizes;
use super::{Ctx, RIMEA, result, tag};
use crate::error::Result;
use crate::verify::criteria::{describe, grows, packing_limit, steady_specific_flow};
use crate::verify::{ArrivalCurve, Point, TestResult, simulate};

/// The bottleneck experiments' band of specific flow, persons/(m·s).
const FLOW_BAND: (f64, f64) = (1.3, 1.9);

/// RiMEA 9's band of the ratio of the evacuation times with two and with four exits.
const RIMEA9_RATIO: (f64, f64) = (1.6, 2.4);

/// RiMEA 6 (20 walkers, corridor 2 m wide) and 15 (a large crowd, 4 m wide): round a left
/// turn, no wall crossed.
pub(super) fn corner(ctx: &Ctx, number: u32, width: f64, persons: usize) -> Result<TestResult> {
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

/// RiMEA 9: a room emptying through four exits, then through two. Also judges overlap on the
/// four-exit runs.
pub(super) fn rimea9(ctx: &Ctx, sizes: &Sizes) -> Result<(TestResult, TestResult, Vec<ArrivalCurve>)> {
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
pub(super) fn rimea10(ctx: &Ctx) -> Result<TestResult> {
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
pub(super) fn rimea11(ctx: &Ctx, sizes: &Sizes) -> Result<TestResult> {
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
pub(super) fn rimea12(ctx: &Ctx, sizes: &Sizes) -> Result<TestResult> {
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

/// The bottleneck series: a room emptying through one door of each width.
pub(super) fn bottleneck_series(ctx: &Ctx, sizes: &Sizes) -> Result<(TestResult, Vec<Point>)> {
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
