//! Studies: many seeds of a map and of its variants (each exit blocked in turn, a planner's
//! scenario files), run in parallel on the machine's cores or in shards on a cluster, and
//! summed up as the distribution a fire engineer reports (`study.json`, `study.html`).
//!
//! Each run (scenario, seed) writes its own folder `runs/<scenario>/seed-<seed>/`: the run's
//! outputs and report page, and `result.json` with the figures the study needs
//! ([`RunResult`]). The study's statistics are computed from those results alone
//! ([`summarize`]), so the shards of a cluster (`--shard I/N`, each running a slice of the
//! runs into the same folder) merge (`--merge`) to the same `study.json` as one machine, bit
//! for bit.

mod page;
pub mod scenario;
pub mod stats;

pub use page::{STUDY_PAGE, write_study_page};
pub use scenario::{Scenario, ScenarioFile, exit_names, scenarios};
pub use stats::{Summary, converged_after};

use super::batch::Shard;
use super::driver::RunDriver;
use super::output::{RunFiles, RunWriter, write_json};
use crate::error::{Error, Result};
use crate::ownership::OwnedDir;
use crate::sim::Simulation;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The writer named in each run folder's manifest.
pub const STUDY_WRITER: &str = "crowdfield study";

/// A study's summary file.
pub const STUDY_FILE: &str = "study.json";

/// The figures one run gives a study (`result.json` in the run's folder).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The scenario's name.
    pub scenario: String,
    /// The spawn seed.
    pub seed: u64,
    /// Persons spawned.
    pub agents: usize,
    /// Whether every person left before the time limit.
    pub complete: bool,
    /// Time of the last arrival when complete (the run's RSET, pre-movement included), s.
    pub evacuation_time: Option<f64>,
    /// The pre-movement part: the 99th percentile of the persons' pre-movement times, s (the
    /// time by which all but the slowest 1 % have started).
    pub premovement: f64,
    /// The movement part: `evacuation_time - premovement`, s, when complete.
    pub movement: Option<f64>,
    /// The simulated time at the end of the run, s.
    pub end_time: f64,
    /// Per exit, in the report's order.
    pub exits: Vec<ExitResult>,
    /// The arrival curve: `(time s, persons out)` at each step where someone left.
    pub arrival_curve: Vec<(f64, usize)>,
    /// The run's folder, relative to the study's folder.
    pub folder: String,
}

/// One exit's figures in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExitResult {
    /// Exit name as the report names it (`group/exit` when there are several groups).
    pub name: String,
    /// Persons who left through it.
    pub arrivals: usize,
    /// When the last of them left, s (`null` when none did).
    pub last_arrival: Option<f64>,
    /// Mean flow, persons/s (`null` with fewer than two arrivals).
    pub flow: Option<f64>,
}

/// One scenario's statistics over its seeds (an entry of `study.json`'s `scenarios`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioStats {
    /// The scenario's name.
    pub name: String,
    /// Exits blocked in it.
    pub blocked: Vec<String>,
    /// Why it did not run, when it could not (a group left without an exit).
    pub cannot_run: Option<String>,
    /// Runs made (seeds).
    pub runs: usize,
    /// Runs in which everyone left before the time limit; the time statistics cover these.
    pub complete_runs: usize,
    /// Evacuation time (RSET: pre-movement and movement), s.
    pub evacuation_time: Option<Summary>,
    /// The pre-movement part, s.
    pub premovement: Option<Summary>,
    /// The movement part, s.
    pub movement: Option<Summary>,
    /// Seeds after which the mean and 95th percentile of the evacuation time stop moving
    /// ([`converged_after`]); `null` while they move.
    pub converged_after: Option<usize>,
    /// Available safe egress time, s, when given.
    pub aset: Option<f64>,
    /// `aset` minus the 95th percentile of the evacuation time, s.
    pub margin: Option<f64>,
    /// Per exit: persons out and flow over the seeds.
    pub exits: Vec<ExitStats>,
    /// Per seed, in seed order: the run's folder and evacuation time.
    pub seeds: Vec<SeedEntry>,
}

/// One exit over a scenario's seeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExitStats {
    /// Exit name.
    pub name: String,
    /// Persons out through it.
    pub arrivals: Option<Summary>,
    /// When the last person left through it (the exit's own evacuation time), s, over the
    /// runs where someone did.
    pub last_arrival: Option<Summary>,
    /// Mean flow, persons/s, over the runs where it has one.
    pub flow: Option<Summary>,
}

/// One run in a scenario's list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedEntry {
    /// The seed.
    pub seed: u64,
    /// The run's evacuation time, s (`null` when cut short by the time limit).
    pub evacuation_time: Option<f64>,
    /// The run's folder, relative to the study's folder.
    pub folder: String,
}

/// `study.json`: the study's statistics, scenarios in order (the map as drawn first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Study {
    /// The map's name.
    pub map: String,
    /// The seeds run, in order.
    pub seeds: Vec<u64>,
    /// The time limit of each run, s.
    pub max_time: f64,
    /// One entry per scenario.
    pub scenarios: Vec<ScenarioStats>,
}

/// What a study runs.
#[derive(Clone, Debug)]
pub struct StudyOptions {
    /// Seeds `first_seed .. first_seed + seeds`.
    pub seeds: usize,
    /// The first seed.
    pub first_seed: u64,
    /// The time limit of each run, s.
    pub max_time: f64,
    /// Add seeds until every scenario's evacuation time converges, up to `max_seeds`.
    pub until_converged: bool,
    /// The most seeds `until_converged` runs.
    pub max_seeds: usize,
    /// The slice of the runs this process makes, on a cluster.
    pub shard: Option<Shard>,
}

/// Most seeds a study runs per scenario: ten thousand runs of one scenario state any spread a
/// report needs many times over; more is a typo.
pub const MAX_SEEDS: usize = 10_000;

impl StudyOptions {
    /// Refuses options no study can run with, naming the option as the command spells it:
    /// no seeds or more than [`MAX_SEEDS`], `max_seeds` below `seeds` (with
    /// `until_converged`), a time limit that is not a positive number of seconds.
    ///
    /// # Errors
    /// [`Error::Invalid`] on [`crate::error::OPTIONS`] naming the option and its value.
    pub fn check(&self) -> Result<()> {
        let bad = |field: &str, message: String| Err(Error::invalid(crate::error::OPTIONS, field, message));
        if self.seeds == 0 || self.seeds > MAX_SEEDS {
            return bad(
                "StudyOptions.seeds",
                format!("{}: expected 1 to {MAX_SEEDS}", self.seeds),
            );
        }
        if self.until_converged && (self.max_seeds < self.seeds || self.max_seeds > MAX_SEEDS) {
            return bad(
                "StudyOptions.max_seeds",
                format!(
                    "{}: expected at least StudyOptions.seeds ({}) and at most {MAX_SEEDS}",
                    self.max_seeds, self.seeds
                ),
            );
        }
        if !(self.max_time.is_finite() && self.max_time > 0.0) {
            return bad(
                "StudyOptions.max_time",
                format!("{}: expected a positive number of seconds", self.max_time),
            );
        }
        Ok(())
    }
}

/// Refuses an ASET that is not a positive number of seconds.
///
/// # Errors
/// [`Error::Invalid`] on [`crate::error::OPTIONS`] at `aset`.
pub fn check_aset(aset: Option<f64>) -> Result<()> {
    match aset {
        Some(a) if !(a.is_finite() && a > 0.0) => Err(Error::invalid(
            crate::error::OPTIONS,
            "StudyOptions.aset",
            format!("{a}: expected a positive number of seconds"),
        )),
        _ => Ok(()),
    }
}

/// The scenarios of a study of the map at `map_path`, as the command and Python set it up:
/// the map gets the verdict every command gives it ([`crate::sim::load_map`]), then the
/// scenario files are read and applied ([`scenarios`]).
///
/// # Errors
/// The map's problems, a scenario file that cannot be read or does not fit the map.
pub fn load_scenarios(
    map_path: &Path,
    load: &crate::map::LoadOptions,
    discount_exits: bool,
    scenario_files: &[PathBuf],
    aset: Option<f64>,
) -> Result<Vec<Scenario>> {
    check_aset(aset)?;
    crate::sim::load_map(map_path, load)?;
    let map = crate::map::format::MapFile::from_path(map_path)?;
    let files = scenario_files
        .iter()
        .map(|p| Ok((crate::text::show_path(p), ScenarioFile::read(p)?)))
        .collect::<Result<Vec<_>>>()?;
    scenarios(&map, discount_exits, &files, aset)
}

/// The folder of a scenario's run for `seed`, relative to the study's folder.
pub fn run_folder(scenario_index: usize, scenario: &str, seed: u64) -> String {
    let slug: String = scenario
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    format!("runs/{scenario_index:02}-{slug}/seed-{seed}")
}

/// The 99th percentile of `times` (0 for none).
fn p99(times: &[f64]) -> f64 {
    if times.is_empty() {
        return 0.0;
    }
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    stats::percentile(&sorted, 99.0)
}

/// Runs `scenario` (a variant of the map at `map_path`, the `index`-th of the study) with
/// `seed` into `out/<folder>/` through the [`RunDriver`] and its [`RunWriter`] (the files
/// `batch` writes for a run, the report page naming the scenario), and returns its result.
///
/// # Errors
/// The map's problems, the run's set-up errors, and write errors.
pub fn run_one(
    scenario: &Scenario,
    index: usize,
    map_path: &Path,
    seed: u64,
    max_time: f64,
    out: &Path,
) -> Result<RunResult> {
    let label = crate::text::show_path(map_path);
    let scene = crate::map::compile(&scenario.map, crate::map::base_dir(map_path), &label)?;
    let model_source = crate::sim::report::model_source(&scenario.map, None);
    let sim = Simulation::builder(scene)
        .seed(seed)
        .max_time(max_time)
        .model_source(model_source)
        .build()?;
    let starts: Vec<f64> = sim.agents().start_time.iter().map(|&t| f64::from(t)).collect();
    let premovement = p99(&starts);
    let mut driver = RunDriver::new(sim, None);
    driver.run(&mut ())?;
    let folder = run_folder(index, &scenario.name, seed);
    let mut owned = OwnedDir::open(&out.join(&folder), STUDY_WRITER, false)?;
    let result_file = owned.claim("result.json")?;
    let written = RunWriter::open(&mut owned, &driver, &RunFiles::REPORT_ONLY)?.finish(
        driver.simulation(),
        map_path,
        vec![("scenario".to_string(), scenario.name.clone())],
    )?;
    let report = written.report;
    let total = &report.total;
    let complete = crate::sim::report::evacuation_complete(total);
    let evacuation_time = if complete { total.evacuation_time } else { None };
    let exits = total
        .exits
        .iter()
        .map(|e| ExitResult {
            name: e.name.clone(),
            arrivals: e.arrivals,
            last_arrival: e.last_arrival,
            flow: e.flow,
        })
        .collect();
    let result = RunResult {
        scenario: scenario.name.clone(),
        seed,
        agents: total.agents,
        complete,
        evacuation_time,
        premovement,
        movement: evacuation_time.map(|t| t - premovement),
        end_time: report.end_time,
        exits,
        arrival_curve: total.arrival_curve.clone(),
        folder,
    };
    write_json(&result_file, &result)?;
    owned.finish()?;
    Ok(result)
}

/// The statistics of `scenarios` over `results` (any order; each run's scenario by name), for
/// the map `map` run with `seeds` and `max_time`.
pub fn summarize(
    map: &str,
    scenarios: &[Scenario],
    seeds: &[u64],
    max_time: f64,
    results: &[RunResult],
) -> Study {
    let stats = scenarios
        .iter()
        .map(|s| {
            let mut runs: Vec<&RunResult> = results.iter().filter(|r| r.scenario == s.name).collect();
            runs.sort_by_key(|r| r.seed);
            let done: Vec<&RunResult> = runs.iter().copied().filter(|r| r.complete).collect();
            let times: Vec<f64> = done.iter().filter_map(|r| r.evacuation_time).collect();
            let evacuation_time = Summary::of(&times);
            let premovement = Summary::of(&done.iter().map(|r| r.premovement).collect::<Vec<_>>());
            let movement = Summary::of(&done.iter().filter_map(|r| r.movement).collect::<Vec<_>>());
            let mut names: Vec<String> = Vec::new();
            for r in &runs {
                for e in &r.exits {
                    if !names.contains(&e.name) {
                        names.push(e.name.clone());
                    }
                }
            }
            let exits = names
                .into_iter()
                .map(|name| {
                    let of = |r: &&RunResult| r.exits.iter().find(|e| e.name == name).cloned();
                    let arrivals: Vec<f64> = runs
                        .iter()
                        .map(|r| of(r).map_or(0.0, |e| e.arrivals as f64))
                        .collect();
                    let flows: Vec<f64> = runs.iter().filter_map(|r| of(r).and_then(|e| e.flow)).collect();
                    let last: Vec<f64> = runs
                        .iter()
                        .filter_map(|r| of(r).and_then(|e| e.last_arrival))
                        .collect();
                    ExitStats {
                        name,
                        arrivals: Summary::of(&arrivals),
                        last_arrival: Summary::of(&last),
                        flow: Summary::of(&flows),
                    }
                })
                .collect();
            ScenarioStats {
                name: s.name.clone(),
                blocked: s.blocked.clone(),
                cannot_run: s.cannot_run.clone(),
                runs: runs.len(),
                complete_runs: done.len(),
                converged_after: if done.len() == runs.len() {
                    converged_after(&times)
                } else {
                    None
                },
                margin: match (s.aset, evacuation_time) {
                    (Some(a), Some(t)) => Some(a - t.p95),
                    _ => None,
                },
                aset: s.aset,
                evacuation_time,
                premovement,
                movement,
                exits,
                seeds: runs
                    .iter()
                    .map(|r| SeedEntry {
                        seed: r.seed,
                        evacuation_time: r.evacuation_time,
                        folder: r.folder.clone(),
                    })
                    .collect(),
            }
        })
        .collect();
    Study {
        map: map.to_string(),
        seeds: seeds.to_vec(),
        max_time,
        scenarios: stats,
    }
}

/// Reads every `result.json` under `out/runs/` (a study's runs, from one machine or from the
/// shards of a cluster).
///
/// # Errors
/// [`Error::Io`] when the folder cannot be read; [`Error::Invalid`] for a result file that
/// does not parse.
pub fn read_results(out: &Path) -> Result<Vec<RunResult>> {
    let runs = out.join("runs");
    let mut found = Vec::new();
    let read_dir = |p: &Path| -> Result<Vec<PathBuf>> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(|source| Error::Io {
                path: p.to_path_buf(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir() && !crate::ownership::is_symlink(p))
            .collect();
        v.sort();
        Ok(v)
    };
    for scenario in read_dir(&runs)? {
        for run in read_dir(&scenario)? {
            let file = run.join("result.json");
            if !file.is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&file).map_err(|source| Error::Io {
                path: file.clone(),
                source,
            })?;
            let result: RunResult = serde_json::from_str(&text)
                .map_err(|e| Error::invalid(crate::text::show_path(&file), "(root)", e.to_string()))?;
            found.push(result);
        }
    }
    Ok(found)
}

/// Runs a study of the map at `map_path` over `scenarios` into `out` and returns its
/// statistics; `progress(done, total)` after each run. With a shard, runs only its slice and
/// writes no summary (merge the shards with [`merge`]); otherwise writes `study.json` and
/// `study.html`. With `until_converged`, adds seeds (as many again each round) until every
/// scenario converges or `max_seeds` is reached.
///
/// # Errors
/// The first run that fails (its scenario and seed named), write errors.
pub fn run_study(
    map_path: &Path,
    scenarios: &[Scenario],
    options: &StudyOptions,
    out: &Path,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Study>> {
    let label = crate::text::show_path(map_path);
    let base_dir = crate::map::base_dir(map_path);
    let map_name = scenarios.first().map(|s| s.map.name.clone()).unwrap_or_default();
    std::fs::create_dir_all(out).map_err(|source| Error::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let mut seeds = options.seeds;
    let mut results: Vec<RunResult> = Vec::new();
    let mut done_seeds = 0;
    loop {
        let jobs: Vec<(usize, u64)> = scenarios
            .iter()
            .enumerate()
            .filter(|(_, s)| s.cannot_run.is_none())
            .flat_map(|(i, _)| (done_seeds..seeds).map(move |k| (i, options.first_seed + k as u64)))
            .collect();
        let jobs = match options.shard {
            Some(shard) => shard.slice(&jobs).to_vec(),
            None => jobs,
        };
        let total = jobs.len();
        let counter = std::sync::atomic::AtomicUsize::new(0);
        let round: Vec<Result<RunResult>> = jobs
            .par_iter()
            .map(|&(i, seed)| {
                let s = &scenarios[i];
                let r = run_one(s, i, map_path, seed, options.max_time, out).map_err(|e| {
                    Error::invalid(
                        &label,
                        format!("scenario \"{}\", seed {seed}", s.name),
                        e.to_string(),
                    )
                });
                progress(
                    counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                    total,
                );
                r
            })
            .collect();
        for r in round {
            results.push(r?);
        }
        done_seeds = seeds;
        if options.shard.is_some() {
            return Ok(None);
        }
        let all: Vec<u64> = (0..seeds).map(|k| options.first_seed + k as u64).collect();
        let study = summarize(&map_name, scenarios, &all, options.max_time, &results);
        let unconverged = study
            .scenarios
            .iter()
            .any(|s| s.cannot_run.is_none() && s.converged_after.is_none());
        if options.until_converged && unconverged && seeds < options.max_seeds {
            seeds = (seeds * 2).min(options.max_seeds);
            continue;
        }
        write_study(out, &study, scenarios, base_dir, &results)?;
        return Ok(Some(study));
    }
}

/// Merges the runs the shards of a study wrote into `out` into `study.json` and `study.html`:
/// the same files one machine writes for the same runs.
///
/// # Errors
/// As [`read_results`]; [`Error::Invalid`] when no run is there.
pub fn merge(out: &Path, map_path: &Path, scenarios: &[Scenario], options: &StudyOptions) -> Result<Study> {
    let results = read_results(out)?;
    if results.is_empty() {
        return Err(Error::invalid(
            crate::text::show_path(out),
            "runs",
            "no run results (runs/*/seed-*/result.json): run the shards into this folder first",
        ));
    }
    let mut seeds: Vec<u64> = results.iter().map(|r| r.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    let map_name = scenarios.first().map(|s| s.map.name.clone()).unwrap_or_default();
    let study = summarize(&map_name, scenarios, &seeds, options.max_time, &results);
    write_study(out, &study, scenarios, crate::map::base_dir(map_path), &results)?;
    Ok(study)
}

/// Writes `study.json` and `study.html` into `out`, replacing only a study's own (the top of
/// the folder is shared with the runs' folders: [`OwnedDir::open_shared`]).
fn write_study(
    out: &Path,
    study: &Study,
    scenarios: &[Scenario],
    base_dir: &Path,
    results: &[RunResult],
) -> Result<()> {
    let mut top = OwnedDir::open_shared(out, STUDY_WRITER, false)?;
    let json = top.claim(STUDY_FILE)?;
    top.claim(STUDY_PAGE)?;
    write_json(&json, study)?;
    write_study_page(out, study, scenarios, base_dir, results)?;
    top.finish()
}
