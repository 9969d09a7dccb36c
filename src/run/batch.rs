//! Batch runs over many maps: input expansion (files, folders, manifests), sharding, per-map
//! solve (and optional simulation), completion markers and the batch summary.
//!
//! Each map writes into `OUT/<map stem>/` (the stem's bytes as they are, so two names that
//! differ only in bytes that are not UTF-8 get two folders). The completion marker `done.json` is
//! written last and records a hash of the map file's bytes and of the options; a rerun skips a
//! map whose marker matches and redoes any other.
//!
//! A batch deletes or replaces only files it wrote itself: each map's folder is an
//! [`OwnedDir`], whose manifest (`.crowdfield-batch.json`) lists
//! every file the batch wrote there with its size. A rerun removes those (and the temporary
//! files of a killed run) and nothing else; a folder holding any other entry (a `simulate` run's
//! report, a user's file, a file of the batch's changed since) fails the map with a message
//! naming the folder and that entry, and is left as it is, unless the run is forced. A folder that is a
//! symbolic link is refused.

use super::driver::RunDriver;
use super::output::{RunFiles, RunWriter, write_json};
use crate::error::{Error, Result};
use crate::export::bundle::GroupSolveSummary;
use crate::io::write_npy;
use crate::ownership::OwnedDir;
use crate::sim::{SimConfig, Simulation};
use crate::text::{csv_cell, escape_os, show_path};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Name of the per-map completion marker.
pub const DONE_FILE: &str = "done.json";

/// The writer named in each map folder's manifest (and in the messages about it).
pub const BATCH_WRITER: &str = "crowdfield batch";

/// One of `count` disjoint slices of the sorted input list; `index` is 0-based
/// (`0/4` .. `3/4`), matching `SLURM_ARRAY_TASK_ID` with `--array=0-3` and
/// Kubernetes' `JOB_COMPLETION_INDEX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which slice, `0..count`.
    pub index: usize,
    /// How many slices.
    pub count: usize,
}

impl Shard {
    /// Parses `I/N` (0-based `I < N`).
    pub fn parse(text: &str) -> Result<Shard> {
        let bad = |m: String| Error::invalid(crate::error::OPTIONS, "Shard", format!("{text:?}: {m}"));
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| bad("expected I/N, e.g. 0/4 (I is 0-based)".into()))?;
        let index: usize = i
            .trim()
            .parse()
            .map_err(|_| bad(format!("{i:?} is not a whole number")))?;
        let count: usize = n
            .trim()
            .parse()
            .map_err(|_| bad(format!("{n:?} is not a whole number")))?;
        if count == 0 {
            return Err(bad("N must be at least 1".into()));
        }
        if index >= count {
            return Err(bad(format!("I must be in 0..{count} (0-based), found {index}")));
        }
        Ok(Shard { index, count })
    }

    /// This shard's contiguous slice of `items` (slices differ in length by at most one).
    pub fn slice<'a, T>(&self, items: &'a [T]) -> &'a [T] {
        let n = items.len() as u128;
        // In u128: `n * index` wrapped in usize for huge N (and panicked or overlapped).
        let at = |i: usize| (n * i as u128 / self.count as u128) as usize;
        &items[at(self.index)..at(self.index + 1)]
    }
}

/// Expands the inputs into a sorted, deduplicated list of map files: a folder gives every
/// `*.json` directly inside it except JSON Schemas ([`crate::map::is_schema_file`]:
/// `*.schema.json`, such as the `maps/map.schema.json` that ships beside the bundled maps; the
/// command line drops those it is given by name); a `.txt` file is a manifest with one path per
/// line (relative to the manifest; blank lines and `#` comments skipped); anything else is a
/// map file. Paths are
/// made absolute (canonical when the file exists) before sorting and deduplication. Map files
/// sharing a stem are refused, since their outputs would share a folder.
pub fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut maps = Vec::new();
    let mut manifests = Manifests::default();
    for input in inputs {
        expand_input(input, &mut maps, &mut manifests)?;
    }
    maps.sort();
    maps.dedup();
    for map in &maps {
        let name = stem(map);
        let lower = name.to_ascii_lowercase();
        let clash = matches!(
            lower.as_str(),
            "" | "." | ".." | "summary.json" | "summary.csv" | "index.html"
        ) || lower.starts_with("summary-shard-")
            || lower.starts_with("index-shard-");
        if clash {
            return Err(Error::invalid(
                show_path(map),
                "stem",
                format!(
                    "{name:?}: outputs go to OUT/<stem>/, and this one would be OUT itself, its parent or \
                     the batch's summary; rename the map"
                ),
            ));
        }
    }
    // Compared without case: on a case-insensitive file system (macOS, Windows) `A` and `a`
    // are one folder.
    let mut stems: Vec<(String, &PathBuf)> = maps.iter().map(|p| (stem(p).to_lowercase(), p)).collect();
    stems.sort();
    for w in stems.windows(2) {
        if w[0].0 == w[1].0 {
            return Err(Error::invalid(
                show_path(w[1].1),
                "stem",
                format!(
                    "{:?} has the same file stem as {}; outputs go to OUT/<stem>/, so rename one",
                    w[0].0,
                    show_path(w[0].1)
                ),
            ));
        }
    }
    Ok(maps)
}

/// One input of [`expand_inputs`]: a folder gives its `.json` maps (not `*.schema.json`), a
/// `.txt` manifest gives each of its lines (relative to the manifest; blank lines and `#`
/// comments skipped) expanded the same way, so a manifest may list folders and other
/// manifests; anything else is a map. `manifests.reading` holds the manifests being read, so
/// one that lists itself (directly or not) is an error instead of an endless loop, and
/// `manifests.done` those already expanded, which are not read again (a manifest listing
/// another twice, nested 40 deep, was read 2^40 times).
fn expand_input(input: &Path, maps: &mut Vec<PathBuf>, manifests: &mut Manifests) -> Result<()> {
    let io_err = |source| Error::Io {
        path: input.to_path_buf(),
        source,
    };
    if input.is_dir() {
        for entry in std::fs::read_dir(input).map_err(io_err)? {
            let path = entry.map_err(io_err)?.path();
            // A batch's own manifest lies in its `OUT/`, which may be an input folder.
            let manifest = path
                .file_name()
                .is_some_and(|n| n == crate::ownership::MANIFEST_FILE);
            let map_file = path.extension().is_some_and(|e| e == "json")
                && !crate::map::is_schema_file(&path)
                && !manifest;
            if path.is_file() && map_file {
                maps.push(absolute(&path));
            }
        }
    } else if input.extension().is_some_and(|e| e == "txt") {
        let key = absolute(input);
        if manifests.done.contains(&key) {
            return Ok(());
        }
        if manifests.reading.contains(&key) {
            return Err(Error::invalid(
                input.display().to_string(),
                "manifest",
                "lists itself (directly or through another manifest): expected maps, folders or \
                 other manifests",
            ));
        }
        let bytes = crate::io::read_input_file(input)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            Error::invalid(
                input.display().to_string(),
                "manifest",
                format!("not UTF-8 text: {e}"),
            )
        })?;
        let base = input.parent().unwrap_or(Path::new("."));
        manifests.reading.push(key);
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            expand_input(&base.join(line), maps, manifests)?;
        }
        let key = manifests.reading.pop().expect("pushed above");
        manifests.done.insert(key);
    } else {
        maps.push(absolute(input));
    }
    Ok(())
}

/// The manifests of one [`expand_inputs`]: those being read (outermost first) and those done.
#[derive(Default)]
struct Manifests {
    reading: Vec<PathBuf>,
    done: std::collections::HashSet<PathBuf>,
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
}

/// Whether `path` is a summary a batch writes into `out` (`summary.json`, or
/// `summary-shard-I-of-N.json` with `--shard`), which a folder input that holds `out` lists
/// beside the maps.
pub fn is_summary_of(path: &Path, out: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let shard_summary = name
        .strip_prefix("summary-shard-")
        .and_then(|rest| rest.strip_suffix(".json"))
        .and_then(|rest| rest.split_once("-of-"))
        .is_some_and(|(i, n)| {
            [i, n]
                .iter()
                .all(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        });
    if name != "summary.json" && !shard_summary {
        return false;
    }
    match (path.parent(), std::fs::canonicalize(out)) {
        (Some(dir), Ok(out)) => absolute(dir) == out,
        _ => false,
    }
}

/// The output folder name of a map as messages show it: its file stem, escaped losslessly
/// ([`escape_os`]) when it is not UTF-8.
pub fn stem(path: &Path) -> String {
    path.file_stem()
        .map(escape_os)
        .unwrap_or_else(|| "map".to_string())
}

/// The output folder of a map inside `out`: `out/<file stem>`, the stem's bytes as they are.
pub fn map_dir(out: &Path, map: &Path) -> PathBuf {
    match path_stem(map) {
        Some(s) => out.join(s),
        None => out.join("map"),
    }
}

fn path_stem(map: &Path) -> Option<&std::ffi::OsStr> {
    map.file_stem()
}

/// What each map of a batch does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchOptions {
    /// Also simulate (otherwise solve only).
    pub simulate: bool,
    /// Simulation settings (used with `simulate`).
    pub sim: SimConfig,
    /// What the maps may read (rasters outside their folder or not).
    #[serde(default)]
    pub load: crate::map::LoadOptions,
    /// The model of every map (as [`crate::params::Params::with_model`]), or each map's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<crate::params::Model>,
}

/// How one map of a batch ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MapOutcome {
    /// The map file.
    pub map: String,
    /// `"ok"`, `"skipped"` (complete from an earlier run) or `"failed"`.
    pub status: String,
    /// The error, for a failed map.
    pub error: Option<String>,
    /// Wall time of this map, seconds (of the run that completed it, for a skipped map).
    pub seconds: f64,
    /// Evacuation time (simulation only; `null` when agents remained).
    pub evacuation_time: Option<f64>,
    /// Agents that reached a goal (simulation only).
    pub agents_out: Option<usize>,
    /// Agents left at the time limit (simulation only).
    pub agents_remaining: Option<usize>,
    /// Whether every agent got out before the time limit (simulation only), as the report's
    /// `complete` ([`crate::sim::report::evacuation_complete`]): a map whose run was cut short is
    /// `ok` (it ran) but not complete, and so is one with a group without goals (a flock never
    /// leaves).
    #[serde(default)]
    pub complete: Option<bool>,
    /// The warnings `simulate` prints for this map (simulation only): a run cut short, then
    /// the report's (`report.json`'s `warnings`: the map's own, [`crate::map::warnings`], then
    /// exit flows beyond what experiments measure).
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// The completion marker of one map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct DoneMarker {
    /// FNV-1a hash of the map bytes and the options, hex.
    key: String,
    /// The outcome recorded when the map completed.
    outcome: MapOutcome,
}

/// 64-bit FNV-1a: a stable hash (unlike `std`'s, which may change between releases).
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// The key stored in `done.json`: the map's bytes, the options and the crate version.
fn completion_key(map_bytes: &[u8], options: &BatchOptions) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    let opts = serde_json::to_string(options).unwrap_or_default();
    let h = fnv1a(map_bytes, OFFSET);
    let h = fnv1a(opts.as_bytes(), h);
    let h = fnv1a(env!("CARGO_PKG_VERSION").as_bytes(), h);
    format!("{h:016x}")
}

/// Runs one map into `out/<stem>/`, skipping it when its marker matches (unless `force`, which
/// also lets the run write into a folder holding files the batch did not write: see the
/// module documentation). Never panics outward: a panic inside the pipeline is caught and
/// reported as a failure.
pub fn run_map(map: &Path, out: &Path, options: &BatchOptions, force: bool) -> MapOutcome {
    let start = Instant::now();
    let dir = map_dir(out, map);
    let mut outcome = MapOutcome {
        map: show_path(map),
        status: "failed".into(),
        error: None,
        seconds: 0.0,
        evacuation_time: None,
        agents_out: None,
        agents_remaining: None,
        complete: None,
        warnings: Vec::new(),
    };
    let bytes = match crate::io::read_input_file(map) {
        Ok(b) => b,
        Err(e) => {
            // The error names the map's path.
            outcome.error = Some(e.to_string());
            return outcome;
        }
    };
    let key = completion_key(&bytes, options);
    if !force
        && let Some(done) = read_marker(&dir)
        && done.key == key
    {
        return MapOutcome {
            status: "skipped".into(),
            ..done.outcome
        };
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut owned = OwnedDir::open(&dir, BATCH_WRITER, force)?;
        process_map(map, &mut owned, options, &mut outcome)?;
        Ok::<_, Error>(owned)
    }));
    outcome.seconds = start.elapsed().as_secs_f64();
    match result {
        Ok(Ok(mut owned)) => {
            outcome.status = "ok".into();
            let marker = DoneMarker {
                key,
                outcome: outcome.clone(),
            };
            // The marker is written last: a run killed before it is redone, and the manifest
            // (saved by `finish`) already lists it.
            let written = owned.claim(DONE_FILE).and_then(|path| {
                owned.finish()?;
                write_json(&path, &marker)
            });
            if let Err(e) = written {
                outcome.status = "failed".into();
                outcome.error = Some(e.to_string());
            }
        }
        Ok(Err(e)) => outcome.error = Some(format!("{e:#}")),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            outcome.error = Some(format!("internal error (panic): {msg}"));
        }
    }
    outcome
}

fn read_marker(dir: &Path) -> Option<DoneMarker> {
    let text = std::fs::read_to_string(dir.join(DONE_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Solves every group's potential on the empty map into the map's (cleared) folder, and
/// simulates when asked. Outputs: `potential_<group>.npy` (float64, row = y), `solve.json`, and
/// with simulation the files of [`RunWriter`]; each one recorded in the folder's
/// manifest before it is written. The map is checked as every command checks it
/// ([`super::load_map`]).
fn process_map(
    map: &Path,
    owned: &mut OwnedDir,
    options: &BatchOptions,
    outcome: &mut MapOutcome,
) -> Result<()> {
    let mut scene = crate::sim::load_map(map, &options.load)?;
    if let Some(model) = options.model {
        scene.params = scene.params.clone().with_model(model);
    }
    let grid = scene.grid;
    let options_plan = crate::plan::PlanOptions {
        order: options.sim.order,
        ..Default::default()
    };
    let plan = crate::plan::plan(&scene, &options_plan)?;
    let solve_seconds = plan.fields_seconds + plan.solve_seconds;
    let mut groups = Vec::new();
    for (g, (group, planned)) in scene.groups.iter().zip(&plan.groups).enumerate() {
        let file = format!("potential_{g}.npy");
        write_npy(&owned.claim(&file)?, planned.potential().view())?;
        // The same entry as `solve`'s summary.json (one builder, so the two cannot drift).
        groups.push(GroupSolveSummary::new(
            &scene,
            group,
            &planned.solution,
            planned.goal.view(),
            ".",
            &file,
        ));
    }
    let summary = serde_json::json!({
        "map": scene.name,
        "grid": grid,
        "groups": groups,
        "solve_seconds": solve_seconds,
    });
    write_json(&owned.claim("solve.json")?, &summary)?;
    if options.simulate {
        let name = scene.name.clone();
        let model_source =
            crate::sim::report::model_source(&crate::map::MapFile::from_path(map)?, options.model);
        let sim = Simulation::builder(scene)
            .config(options.sim.clone())
            .model_source(model_source)
            .build()
            .map_err(|e| e.relabel(&name, &map.display().to_string()))?;
        let mut driver = RunDriver::new(sim, None);
        driver.run(&mut ())?;
        let written = RunWriter::open(owned, &driver, &RunFiles::REPORT_ONLY)?.finish(
            driver.simulation(),
            map,
            Vec::new(),
        )?;
        let report = written.report;
        outcome.evacuation_time = report.total.evacuation_time;
        outcome.agents_out = Some(report.total.arrived);
        outcome.agents_remaining = Some(report.total.remaining.total);
        outcome.complete = Some(crate::sim::report::evacuation_complete(&report.total));
        // As `simulate` ends with them: the run cut short, then the report's own (the map's
        // first, as `report.html` shows them).
        outcome.warnings.extend(driver.take_warnings());
    }
    Ok(())
}

/// Separates a map's warnings in the `warnings` column of `summary.csv` (no warning text holds
/// one; `summary.json` has them as a list).
pub const CSV_WARNING_SEPARATOR: &str = "; ";

/// Writes `summary<suffix>.json` and `summary<suffix>.csv` into `out`. The CSV's last column,
/// `warnings`, joins a map's warnings with [`CSV_WARNING_SEPARATOR`]; text cells go through
/// [`crate::text::csv_cell`].
pub fn write_summary(out: &Path, suffix: &str, outcomes: &[MapOutcome]) -> Result<()> {
    write_json(&out.join(format!("summary{suffix}.json")), &outcomes)?;
    let mut csv = String::from(
        "map,status,error,seconds,evacuation_time,agents_out,agents_remaining,complete,warnings\n",
    );
    let opt = |v: Option<String>| v.unwrap_or_default();
    for o in outcomes {
        csv.push_str(&format!(
            "{},{},{},{:.3},{},{},{},{},{}\n",
            csv_cell(&o.map),
            o.status,
            csv_cell(o.error.as_deref().unwrap_or("")),
            o.seconds,
            opt(o.evacuation_time.map(|v| format!("{v:.2}"))),
            opt(o.agents_out.map(|v| v.to_string())),
            opt(o.agents_remaining.map(|v| v.to_string())),
            opt(o.complete.map(|v| if v { "yes" } else { "no" }.to_string())),
            csv_cell(&o.warnings.join(CSV_WARNING_SEPARATOR)),
        ));
    }
    crate::io::write_bytes_atomic(&out.join(format!("summary{suffix}.csv")), csv.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_csv_writes_a_formula_like_map_name_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let outcome = MapOutcome {
            map: "=HYPERLINK(\"http://x\",\"open\").json".to_string(),
            status: "failed".to_string(),
            error: Some("@SUM(1+1): no such map".to_string()),
            seconds: 0.0,
            evacuation_time: None,
            agents_out: None,
            agents_remaining: None,
            complete: None,
            warnings: vec!["-1 exits".to_string()],
        };
        write_summary(dir.path(), "", &[outcome]).unwrap();
        let csv = std::fs::read_to_string(dir.path().join("summary.csv")).unwrap();
        let row = csv.lines().nth(1).unwrap();
        assert!(
            row.starts_with(
                "\"'=HYPERLINK(\"\"http://x\"\",\"\"open\"\").json\",failed,'@SUM(1+1): no such map,"
            ),
            "{row}"
        );
        assert!(row.ends_with(",'-1 exits"), "{row}");
    }

    #[test]
    fn shards_are_disjoint_and_cover_everything() {
        let items: Vec<usize> = (0..10).collect();
        for n in 1..=12 {
            let mut all = Vec::new();
            for i in 0..n {
                all.extend_from_slice(Shard { index: i, count: n }.slice(&items));
            }
            assert_eq!(all, items, "n = {n}");
        }
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        // Huge N: a naive `n * index` wraps in usize (a panic, or shards that overlap). Ten
        // items over N shards: shard i holds the items j with floor(10 i / N) <= j <
        // floor(10 (i + 1) / N), so the first shards are empty and the last holds item 9.
        let huge = usize::MAX / 3;
        let slice = |i: usize| {
            Shard {
                index: i,
                count: huge,
            }
            .slice(&items)
            .to_vec()
        };
        let none: Vec<usize> = Vec::new();
        assert_eq!(
            [slice(0), slice(1), slice(huge - 2)],
            [none.clone(), none.clone(), none.clone()]
        );
        assert_eq!(slice(huge - 1), [9]);
        assert_eq!(slice(huge / 2 + 1), none);
        assert_eq!(
            slice(huge / 2),
            [4],
            "the shard just below one half ends at item 5"
        );
        for bad in ["4/4", "1/0", "x/2", "3", "-1/2"] {
            let e = Shard::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("Shard: "), "{bad}: {e}");
        }
    }

    #[test]
    fn inputs_expand_sort_dedup_and_refuse_stem_clashes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("maps")).unwrap();
        for n in ["b.json", "a.json", "notes.md", "map.schema.json"] {
            std::fs::write(d.join("maps").join(n), "{}").unwrap();
        }
        std::fs::write(d.join("c.json"), "{}").unwrap();
        std::fs::write(d.join("list.txt"), "# maps\nc.json\n\nmaps/a.json\n").unwrap();
        let maps = expand_inputs(&[d.join("maps"), d.join("list.txt")]).unwrap();
        // a.json comes in twice (folder and manifest) and appears once; notes.md and the
        // schema are skipped.
        let mut names: Vec<String> = maps.iter().map(|p| stem(p)).collect();
        names.sort();
        assert_eq!(names, ["a", "b", "c"]);
        let mut sorted = maps.clone();
        sorted.sort();
        assert_eq!(sorted, maps, "inputs come out sorted");
        std::fs::create_dir(d.join("other")).unwrap();
        std::fs::write(d.join("other/a.json"), "{}").unwrap();
        let e = expand_inputs(&[d.join("maps"), d.join("other/a.json")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("same file stem"), "{e}");
        // Without case: one folder on macOS and Windows.
        std::fs::write(d.join("other/A.json"), "{}").unwrap();
        let e = expand_inputs(&[d.join("maps"), d.join("other/A.json")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("same file stem"), "{e}");
        // Stems that would put outputs in OUT itself, its parent or over the summaries.
        for name in [
            "..json",
            "...json",
            "summary.csv.json",
            "Summary.json.json",
            "summary-shard-0-of-2.json.json",
        ] {
            std::fs::write(d.join(name), "{}").unwrap();
            let e = expand_inputs(&[d.join(name)]).unwrap_err().to_string();
            assert!(e.contains("stem") && e.contains("rename the map"), "{name}: {e}");
        }
    }

    #[test]
    fn manifests_may_list_folders_and_other_manifests_but_not_themselves() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("site/maps")).unwrap();
        for n in ["x.json", "y.json"] {
            std::fs::write(d.join("site/maps").join(n), "{}").unwrap();
        }
        std::fs::write(d.join("z.json"), "{}").unwrap();
        std::fs::write(d.join("site/more.txt"), "../z.json\n").unwrap();
        std::fs::write(d.join("all.txt"), "site/maps\nsite/more.txt\n").unwrap();
        let maps = expand_inputs(&[d.join("all.txt")]).unwrap();
        let names: Vec<String> = maps.iter().map(|p| stem(p)).collect();
        assert_eq!(names, ["x", "y", "z"]);
        // A manifest listing itself, through another one.
        std::fs::write(d.join("site/more.txt"), "../all.txt\n").unwrap();
        let e = expand_inputs(&[d.join("all.txt")]).unwrap_err().to_string();
        assert!(e.contains("all.txt") && e.contains("lists itself"), "{e}");
        // A manifest listing the next one twice, 40 deep: each is read once (it was 2^40).
        let deep = d.join("deep");
        std::fs::create_dir(&deep).unwrap();
        std::fs::write(deep.join("l40.txt"), "../z.json\n").unwrap();
        for k in 0..40 {
            std::fs::write(
                deep.join(format!("l{k}.txt")),
                format!("l{0}.txt\nl{0}.txt\n", k + 1),
            )
            .unwrap();
        }
        let t = std::time::Instant::now();
        let maps = expand_inputs(&[deep.join("l0.txt")]).unwrap();
        assert_eq!(maps.len(), 1);
        assert!(t.elapsed().as_secs_f64() < 30.0, "expanded once each");
    }
}
