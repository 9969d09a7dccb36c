//! A study's scenarios: the map as drawn, each exit blocked in turn ("discounted exit", which
//! building codes ask for), and the planner's own variants read from scenario files.
//!
//! A scenario file is JSON; every key but `name` is optional:
//!
//! ```json
//! {
//!   "name": "late alarm, more people",
//!   "closed_exits": ["door"],
//!   "population": 1.5,
//!   "premovement": {"min": 60, "max": 120},
//!   "spawns": {"hall": {"count": 300}},
//!   "params": {"f_max": 1.2},
//!   "aset": 300
//! }
//! ```
//!
//! `closed_exits` blocks exits by name (every goal of that name, in every group);
//! `population` scales every spawn area's count (rounded to whole persons); `premovement`
//! sets every spawn area's pre-movement range; `spawns` sets the count or pre-movement of
//! the spawn areas of that name; `params` replaces the listed model parameters; `aset` is the
//! scenario's available safe egress time, seconds.

use crate::error::{Error, Result};
use crate::map::format::{MapFile, Premovement};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Largest scenario file read, bytes: a scenario is a few hundred bytes; a mebibyte keeps a
/// wrong path (a log, a disk image) from being read into memory.
pub const MAX_SCENARIO_FILE_BYTES: u64 = 1 << 20;

/// A planner's variant of the map ([module docs](self) give the format).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// The scenario's name, shown in the study's table.
    pub name: String,
    /// Exits blocked, by name.
    #[serde(default)]
    pub closed_exits: Vec<String>,
    /// Factor on every spawn area's count.
    #[serde(default)]
    pub population: Option<f64>,
    /// Pre-movement range of every spawn area, seconds.
    #[serde(default)]
    pub premovement: Option<Premovement>,
    /// Per spawn area name: its count and pre-movement.
    #[serde(default)]
    pub spawns: BTreeMap<String, SpawnOverride>,
    /// Model parameters replaced (names and values as in a map's `params`).
    #[serde(default)]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
    /// Available safe egress time, seconds.
    #[serde(default)]
    pub aset: Option<f64>,
}

/// What a scenario file changes of the spawn areas of one name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpawnOverride {
    /// Persons placed.
    #[serde(default)]
    pub count: Option<usize>,
    /// Pre-movement range, seconds.
    #[serde(default)]
    pub premovement: Option<Premovement>,
}

impl ScenarioFile {
    /// Reads a scenario file (at most 1 MiB).
    ///
    /// # Errors
    /// [`Error::Io`] when it cannot be read; [`Error::Invalid`] naming the file, the key and
    /// the value for JSON that is not a scenario.
    pub fn read(path: &Path) -> Result<ScenarioFile> {
        let label = crate::text::show_path(path);
        let bytes = crate::io::read_small_file(path, MAX_SCENARIO_FILE_BYTES)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::invalid(&label, "(root)", "not UTF-8 text: expected a JSON scenario file"))?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        let file: ScenarioFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let at = e.path().to_string();
            Error::invalid(
                &label,
                if at == "." { "(root)".to_string() } else { at },
                e.inner().to_string(),
            )
        })?;
        if file.name.trim().is_empty() {
            return Err(Error::invalid(
                &label,
                "name",
                "\"\": expected the scenario's name",
            ));
        }
        if let Some(f) = file.population
            && !(f.is_finite() && f > 0.0)
        {
            return Err(Error::invalid(
                &label,
                "population",
                format!("{f}: expected a positive factor"),
            ));
        }
        if let Some(a) = file.aset
            && !(a.is_finite() && a > 0.0)
        {
            return Err(Error::invalid(
                &label,
                "aset",
                format!("{a}: expected a positive time in seconds"),
            ));
        }
        Ok(file)
    }
}

/// One scenario of a study: a name, the map it runs, and what it changed.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Name shown in the table (`as drawn`, `exit "door" blocked`, or the file's name).
    pub name: String,
    /// The map this scenario runs.
    pub map: MapFile,
    /// Exits blocked in it, by name.
    pub blocked: Vec<String>,
    /// Available safe egress time, seconds, when known.
    pub aset: Option<f64>,
    /// Why the scenario cannot run (a group left without an exit), when it cannot.
    pub cannot_run: Option<String>,
}

/// The name of exit `k` of `group` as a study blocks it: its own name, else the name the map
/// loader gives it (`"<group> goal <k>"`, counted from 0).
pub fn exit_name(map: &MapFile, group: usize, k: usize) -> String {
    let g = &map.groups[group];
    match &g.goals[k].name {
        Some(n) => n.clone(),
        None => format!("{} goal {k}", g.name),
    }
}

/// Every exit name of `map`, in map order, each once (goals of one name are one exit).
pub fn exit_names(map: &MapFile) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (g, group) in map.groups.iter().enumerate() {
        for k in 0..group.goals.len() {
            let n = exit_name(map, g, k);
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
}

/// `map` with the exits named in `blocked` removed from every group (and the map's events
/// that open or close them: a blocked exit stays blocked); the reason it cannot run when a
/// group that had exits is left without any.
fn block_exits(map: &MapFile, blocked: &[String]) -> (MapFile, Option<String>) {
    let mut out = map.clone();
    out.events
        .retain(|e| e.open.iter().chain(&e.close).all(|name| !blocked.contains(name)));
    let mut cannot = None;
    for (g, group) in out.groups.iter_mut().enumerate() {
        let had = group.goals.len();
        let mut k = 0;
        group.goals.retain(|_| {
            let keep = !blocked.contains(&exit_name(map, g, k));
            k += 1;
            keep
        });
        if had > 0 && group.goals.is_empty() && cannot.is_none() {
            cannot = Some(format!(
                "the group \"{}\" has no exit left with {} blocked",
                group.name,
                blocked
                    .iter()
                    .map(|b| format!("\"{b}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    (out, cannot)
}

/// The scenarios of a study of `map`: the map as drawn first, then with `discount_exits`
/// each exit blocked in turn, then each of `files` in order. `aset` is the ASET of the
/// scenarios whose file gives none.
///
/// # Errors
/// [`Error::Invalid`] for a scenario file that names an exit, a spawn area or a parameter the
/// map does not have, or two scenarios of one name.
pub fn scenarios(
    map: &MapFile,
    discount_exits: bool,
    files: &[(String, ScenarioFile)],
    aset: Option<f64>,
) -> Result<Vec<Scenario>> {
    let mut out = vec![Scenario {
        name: "as drawn".to_string(),
        map: map.clone(),
        blocked: Vec::new(),
        aset,
        cannot_run: None,
    }];
    let exits = exit_names(map);
    if discount_exits {
        for exit in &exits {
            let blocked = vec![exit.clone()];
            let (variant, cannot_run) = block_exits(map, &blocked);
            out.push(Scenario {
                name: format!("exit \"{exit}\" blocked"),
                map: variant,
                blocked,
                aset,
                cannot_run,
            });
        }
    }
    for (label, file) in files {
        out.push(apply(map, label, file, &exits, aset)?);
    }
    for (i, s) in out.iter().enumerate() {
        if out[..i].iter().any(|t| t.name == s.name) {
            return Err(Error::invalid(
                crate::error::OPTIONS,
                "--scenario",
                format!(
                    "two scenarios are named \"{}\": expected a name per scenario",
                    s.name
                ),
            ));
        }
    }
    Ok(out)
}

/// The scenario `file` (read from `label`) makes of `map`.
fn apply(
    map: &MapFile,
    label: &str,
    file: &ScenarioFile,
    exits: &[String],
    aset: Option<f64>,
) -> Result<Scenario> {
    for (i, exit) in file.closed_exits.iter().enumerate() {
        if !exits.contains(exit) {
            return Err(Error::invalid(
                label,
                format!("closed_exits[{i}]"),
                format!(
                    "\"{exit}\": the map has no exit of that name (its exits: {})",
                    exits.join(", ")
                ),
            ));
        }
    }
    let (mut variant, cannot_run) = block_exits(map, &file.closed_exits);
    for name in file.spawns.keys() {
        let known = variant
            .groups
            .iter()
            .flat_map(|g| &g.spawns)
            .any(|s| s.name.as_deref() == Some(name.as_str()));
        if !known {
            return Err(Error::invalid(
                label,
                format!("spawns.{name}"),
                "the map has no spawn area of that name",
            ));
        }
    }
    for spawn in variant.groups.iter_mut().flat_map(|g| g.spawns.iter_mut()) {
        if let Some(f) = file.population {
            // A source's walkers arrive at its rate: the population scales the rate.
            if let Some(count) = &mut spawn.count {
                *count = (*count as f64 * f).round() as usize;
            }
            if let Some(rate) = &mut spawn.rate {
                *rate *= f;
            }
        }
        if let Some(p) = &file.premovement {
            spawn.premovement = Some(*p);
        }
        if let Some(o) = spawn.name.as_ref().and_then(|n| file.spawns.get(n)) {
            if let Some(c) = o.count {
                spawn.count = Some(c);
            }
            if let Some(p) = &o.premovement {
                spawn.premovement = Some(*p);
            }
        }
    }
    if let Some(changes) = &file.params {
        let base = crate::params::Params::for_map(variant.model, variant.params.as_ref());
        let mut value = serde_json::to_value(&base).expect("parameters serialise");
        let object = value.as_object_mut().expect("parameters are an object");
        for (k, v) in changes {
            if !object.contains_key(k) {
                return Err(Error::invalid(
                    label,
                    format!("params.{k}"),
                    "not a model parameter",
                ));
            }
            object.insert(k.clone(), v.clone());
        }
        let params =
            serde_json::from_value(value).map_err(|e| Error::invalid(label, "params", e.to_string()))?;
        // Keep the map's model: a map without `"model"` and with `params` runs the published
        // model, so name the one it ran before.
        variant.model = Some(base.model);
        variant.params = Some(params);
    }
    Ok(Scenario {
        name: file.name.clone(),
        map: variant,
        blocked: file.closed_exits.clone(),
        aset: file.aset.or(aset),
        cannot_run,
    })
}
