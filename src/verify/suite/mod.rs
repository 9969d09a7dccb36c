//! The tests: each builds its maps ([`maps`]), runs them on every seed (in parallel) and judges
//! the measurement against its criterion ([`walking`]: walkers on their own or in a line;
//! [`crowds`]: crowds leaving rooms).

mod crowds;
mod maps;
mod walking;

use super::{GeneratedMap, Point, Status, TestResult, VerifyOptions, VerifyReport};
use crate::error::Result;
use crate::map::MapFile;
use crate::names::Named as _;
use crate::params::Params;
use crowds::{bottleneck_series, corner, rimea9, rimea10, rimea11, rimea12};
use maps::{RIMEA6_CORNER, RIMEA15_WIDTH, Scenarios, Sizes};
use rayon::prelude::*;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use walking::{rimea1, rimea4, rimea5, rimea7, rimea16, stairs};

/// The RiMEA guideline every RiMEA test cites.
const RIMEA: &str = "RiMEA Guideline 4.1.1 (3.0), Annex 1";

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

/// Checks that every map of the suite `options` asks for compiles (see [`super::check`]).
pub(super) fn check(options: &VerifyOptions) -> Result<()> {
    Scenarios::of(options, &Sizes::of(options.quick)).check()
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
