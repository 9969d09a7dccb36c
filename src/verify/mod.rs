//! The verification suite behind `crowdfield verify`: the RiMEA tests that apply to a
//! single-floor model (RiMEA Guideline 4.1.1, Annex 1) and the bottleneck experiments, each
//! generated as an ordinary map ([`scenarios`]), run with [`Simulation::builder`] on the
//! model the maps ask for, measured, and judged against a published criterion
//! ([`criteria`]).
//!
//! [`run_suite`] returns a [`VerifyReport`]: per test what it checks, the criterion with its
//! source, the value measured on every seed and pass or fail, plus the series the plots draw.
//! [`output::write`] writes it as `verify.json`, `verify.md` and PNG plots beside the maps.

pub mod criteria;
pub mod output;
pub mod scenarios;
mod suite;

use crate::error::Result;
use crate::local::LocalMode;
use crate::map::MapFile;
use crate::params::{Model, Params};
use crate::sim::Simulation;
use serde::{Deserialize, Serialize};

/// What the suite runs on and how much of it.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyOptions {
    /// Smaller scenes and fewer densities and widths (the same tests), for CI.
    pub quick: bool,
    /// Seeds per test (`0..seeds`).
    pub seeds: u64,
    /// The `params` block every generated map carries (`None`: the model's defaults).
    pub params: Option<Params>,
    /// The `model` every generated map names (`None`: the model of a map without one).
    pub model: Option<Model>,
    /// The local layer of every run.
    pub local: LocalMode,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        Self {
            quick: false,
            seeds: DEFAULT_SEEDS,
            params: None,
            model: None,
            local: LocalMode::None,
        }
    }
}

/// Seeds per test of the full suite.
pub const DEFAULT_SEEDS: u64 = 3;
/// Seeds per test of the quick suite.
pub const QUICK_SEEDS: u64 = 1;

/// A test's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every seed met the criterion.
    Pass,
    /// At least one seed did not.
    Fail,
    /// The test asks for something the model does not represent (stairs).
    NotApplicable,
}

impl Status {
    /// The verdict in words, for the table.
    pub fn word(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::NotApplicable => "not applicable",
        }
    }
}

/// One test's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// Short identifier (`rimea-1`, `bottleneck`).
    pub id: String,
    /// Title ("RiMEA 1: walking speed in a corridor").
    pub title: String,
    /// What the test checks, in one sentence.
    pub checks: String,
    /// The criterion.
    pub criterion: String,
    /// Where the criterion comes from.
    pub source: String,
    /// The measured value over the seeds, in words.
    pub measured: String,
    /// The measured value of every seed (the figure the criterion judges; empty when not
    /// applicable).
    pub values: Vec<f64>,
    /// The verdict.
    pub status: Status,
    /// The maps the test ran, as written beside the report.
    pub maps: Vec<String>,
}

/// A point of a measured diagram: the independent value (density, door width), the measured
/// value and the seed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Density (persons/m² or persons/m) or width (m).
    pub x: f64,
    /// Speed (m/s) or specific flow (persons/(m·s)).
    pub y: f64,
    /// The seed.
    pub seed: u64,
}

/// An arrival curve of RiMEA 9: `(time s, persons out)` steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrivalCurve {
    /// "4 exits, seed 0".
    pub label: String,
    /// Exits open.
    pub exits: usize,
    /// The seed.
    pub seed: u64,
    /// `(time, persons out)` at each arrival.
    pub curve: Vec<(f64, usize)>,
}

/// The whole suite's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// True for the quick suite.
    pub quick: bool,
    /// Seeds per test.
    pub seeds: u64,
    /// The maps' `params` block, when one was given.
    pub params: Option<Params>,
    /// The model that ran (`pedestrian`, `continuum_crowds`).
    pub model: String,
    /// The local layer (`none`, `orca`, ...).
    pub local: String,
    /// Every test, in order.
    pub tests: Vec<TestResult>,
    /// True when no test failed.
    pub passed: bool,
    /// RiMEA 4: measured (density, speed) in the corridor.
    pub fundamental_diagram: Vec<Point>,
    /// RiMEA 16: measured (line density, speed) in single file.
    pub single_file: Vec<Point>,
    /// Bottleneck series: (door width, specific flow).
    pub bottleneck: Vec<Point>,
    /// RiMEA 9: the arrival curves with four and with two exits.
    pub arrival_curves: Vec<ArrivalCurve>,
}

/// A map the suite ran, to be written beside the report under `file`.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedMap {
    /// File name (`rimea-1.json`).
    pub file: String,
    /// The map.
    pub map: MapFile,
}

/// Checks, before anything runs, that every map of the suite `options` asks for compiles: the
/// maps carry `options.params` and `options.model`, so a `params` block out of range (`gamma`
/// below 0) is refused here, in a moment, rather than by the first run. `verify` calls it
/// before it touches its output folder; [`run_suite`] calls it first too.
///
/// # Errors
/// The problems of the first map that does not compile, each naming the map's file
/// (`rimea-1-corridor.json`), the JSON path (`params.gamma`) and the value.
pub fn check(options: &VerifyOptions) -> Result<()> {
    suite::check(options)
}

/// Runs every test. `progress(done, total)` is called after each simulation run (the CLI
/// moves its progress bar with it). Returns the report and the maps that were run.
///
/// # Errors
/// A map the options make invalid (a `params` block out of range), named by the map and the
/// field, before any run ([`check`]); a run that cannot be built.
pub fn run_suite(
    options: &VerifyOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(VerifyReport, Vec<GeneratedMap>)> {
    suite::run(options, progress)
}

/// A run of `map` with `seed` under `options` until everyone is out or `max_time`, calling
/// `observe` after every step.
pub(crate) fn simulate(
    map: &MapFile,
    seed: u64,
    options: &VerifyOptions,
    max_time: f64,
    mut observe: impl FnMut(&Simulation),
) -> Result<Simulation> {
    let scene = crate::map::compile(map, std::path::Path::new("."), &format!("{}.json", map.name))?;
    let mut sim = Simulation::builder(scene)
        .seed(seed)
        .local(options.local)
        .max_time(max_time)
        .build()?;
    observe(&sim);
    while !sim.finished() {
        sim.step();
        observe(&sim);
    }
    Ok(sim)
}
