//! Range checks and compilation of a [`MapFile`] into a [`Scene`], collecting every problem.
//!
//! The checks run in an order that never allocates for a bad grid: the grid's size and the
//! memory estimate come first, and the layers, masks and flood fill are only built when the grid
//! is acceptable. Each problem is recorded with its JSON path and the run goes on, so one pass
//! reports everything that can be known. This module holds the walk over a map and the
//! [`Checker`]'s basic checks; the grid and `params` block are checked in [`settings`], the
//! layers and shapes in [`layers`], the groups in [`groups`].

mod groups;
mod layers;
mod movers;
mod routes;

pub use movers::obstacle_shape;
mod settings;

use crate::error::Error;
use crate::map::LoadOptions;
use crate::map::format::{EventSpec, GroupSpec};
use crate::map::format::{FORMAT_VERSION, MapFile};
use crate::map::{COORD_LIMIT, VALUE_LIMIT};
use crate::params::Params;
use crate::scene::{Group, Scene};
use crate::schedule::{ExitEvent, Schedule, Source};
use crate::text::{name_problem, quoted};
use std::collections::HashSet;
use std::path::Path;

pub(crate) use groups::flood_from;

/// Which layer a shape or raster paints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LayerKind {
    Height,
    Obstacles,
    Discomfort,
}

pub(crate) use crate::error::num;

/// Checks `map` and builds its scene. Returns the scene when there is no problem, and every
/// problem found.
pub(crate) fn check(
    map: &MapFile,
    base_dir: &Path,
    file: &str,
    options: &LoadOptions,
) -> (Option<Scene>, Vec<Error>) {
    let mut ck = Checker {
        file,
        options: *options,
        errors: Vec::new(),
        obstacle_raster: map
            .layers
            .obstacles
            .as_ref()
            .and_then(|l| l.raster.as_ref())
            .map(|r| r.file.clone()),
        closed: Vec::new(),
        sources: Vec::new(),
    };
    if let Some(message) = name_problem(&map.name) {
        ck.push("name", message);
    }
    if map.version != FORMAT_VERSION {
        ck.push(
            "version",
            format!("{} is not supported: expected {FORMAT_VERSION}", map.version),
        );
    }
    let grid = ck.grid(&map.grid, map.groups.len());
    let exact = map.walls == Some(crate::map::Walls::Exact);
    let params = Params::for_map(map.model, map.params.as_ref());
    ck.params(&params);

    let layers = &map.layers;
    let height = ck.layer(layers.height.as_ref(), LayerKind::Height, grid.as_ref(), base_dir);
    let obstacle_values = ck.layer(
        layers.obstacles.as_ref(),
        LayerKind::Obstacles,
        grid.as_ref(),
        base_dir,
    );
    let discomfort = ck.layer(
        layers.discomfort.as_ref(),
        LayerKind::Discomfort,
        grid.as_ref(),
        base_dir,
    );
    let obstacle = obstacle_values.map(|v| v.mapv(|x| x != 0.0));

    let mut names = HashSet::new();
    let mut groups = Vec::new();
    for (i, g) in map.groups.iter().enumerate() {
        let at = format!("groups[{i}]");
        if !names.insert(g.name.as_str()) {
            ck.push(
                &format!("{at}.name"),
                format!(
                    "{} is used by an earlier group: expected unique group names",
                    quoted(&g.name)
                ),
            );
        }
        groups.push(ck.group(g, i, &at, grid.as_ref(), obstacle.as_ref()));
    }

    let events = ck.events(&map.events, &map.groups);
    let routes = ck.routes(map, grid.as_ref(), obstacle.as_ref());
    let schedule = Schedule {
        closed: std::mem::take(&mut ck.closed),
        events,
        sources: std::mem::take(&mut ck.sources),
        routes,
        movers: ck.movers(&map.movers),
    };
    let errors = ck.errors;
    let (Some(grid), Some(height), Some(obstacle), Some(discomfort)) = (grid, height, obstacle, discomfort)
    else {
        return (None, errors);
    };
    if !errors.is_empty() {
        return (None, errors);
    }
    let groups: Vec<Group> = groups.into_iter().flatten().collect();
    let outline = if exact {
        crate::map::outline::outline(map, &grid)
    } else {
        None
    };
    let scene = Scene {
        name: map.name.clone(),
        grid,
        height: height.mapv(|v| v as f32),
        obstacle,
        discomfort: discomfort.mapv(|v| v as f32),
        groups,
        params,
        outline,
        exact_walls: exact,
        schedule,
    };
    (Some(scene), errors)
}

impl Checker<'_> {
    /// The map's `events`, each naming the goals of one name (the names the report gives,
    /// defaults included); an unknown name, a time that is not a finite number of seconds from
    /// 0, or an event that does not give exactly one of `open` and `close` is a problem.
    fn events(&mut self, events: &[EventSpec], groups: &[GroupSpec]) -> Vec<ExitEvent> {
        let names: Vec<String> = groups
            .iter()
            .flat_map(|g| {
                g.goals.iter().enumerate().map(move |(k, goal)| {
                    goal.name
                        .clone()
                        .unwrap_or_else(|| format!("{} goal {k}", g.name))
                })
            })
            .collect();
        let mut out = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let at = format!("events[{i}]");
            if e.release.is_some() || e.region.is_some() {
                continue; // a route event (`routes`)
            }
            let ok = self.number_within(e.at, &format!("{at}.at"), (0.0, MAX_EVENT_TIME), "seconds");
            let (name, open, key) = match (&e.open, &e.close) {
                (Some(name), None) => (name, true, "open"),
                (None, Some(name)) => (name, false, "close"),
                (both, _) => {
                    let problem = if both.is_some() {
                        "gives both `open` and `close`"
                    } else {
                        "gives neither `open` nor `close`"
                    };
                    self.push(
                        &at,
                        format!("{problem}: expected one of them, naming an exit (a goal's `name`)"),
                    );
                    continue;
                }
            };
            if !names.iter().any(|n| n == name) {
                let mut known: Vec<&str> = names.iter().map(String::as_str).collect();
                known.dedup();
                let listed: Vec<String> = known.iter().take(20).map(|n| quoted(n)).collect();
                self.push(
                    &format!("{at}.{key}"),
                    format!(
                        "{}: expected the name of a goal: {}{}",
                        quoted(name),
                        listed.join(", "),
                        if known.len() > 20 { ", ..." } else { "" }
                    ),
                );
                continue;
            }
            if ok {
                out.push(ExitEvent {
                    time: e.at,
                    name: name.clone(),
                    open,
                });
            }
        }
        out
    }
}

/// Latest time an event may name, seconds: a day, as for pre-movement times.
const MAX_EVENT_TIME: f64 = crate::map::MAX_PREMOVEMENT;

/// Collects problems.
struct Checker<'a> {
    file: &'a str,
    /// What the map may read.
    options: LoadOptions,
    errors: Vec<Error>,
    /// The obstacles layer's raster file, named when a goal or spawn lies in its walls.
    obstacle_raster: Option<String>,
    /// The goals `(group, goal)` closed at the start.
    closed: Vec<(usize, usize)>,
    /// The spawn areas that are sources.
    sources: Vec<Source>,
}

impl Checker<'_> {
    fn push(&mut self, at: &str, message: String) {
        self.errors.push(Error::invalid(self.file, at, message));
    }

    /// Records `message()` at `at` unless `ok`; returns `ok`.
    fn ensure(&mut self, ok: bool, at: &str, message: impl FnOnce() -> String) -> bool {
        if !ok {
            self.push(at, message());
        }
        ok
    }

    /// A number that must be finite, within `VALUE_LIMIT` and satisfy `rule` (described by
    /// `expected`, e.g. "> 0").
    fn number(&mut self, v: f64, at: &str, rule: impl Fn(f64) -> bool, expected: &str) -> bool {
        let ok = v.is_finite() && v.abs() <= VALUE_LIMIT && rule(v);
        self.ensure(ok, at, || {
            let rule = if expected.is_empty() {
                String::new()
            } else {
                format!(" {expected},")
            };
            format!(
                "{}: expected a finite number{rule} at most {} in magnitude",
                num(v),
                num(VALUE_LIMIT)
            )
        })
    }

    /// A number that must be finite and within `lo..=hi` (a tighter bound than `VALUE_LIMIT`,
    /// so the message states this one bound alone), in `unit`.
    fn number_within(&mut self, v: f64, at: &str, (lo, hi): (f64, f64), unit: &str) -> bool {
        let ok = v.is_finite() && (lo..=hi).contains(&v);
        self.ensure(ok, at, || {
            format!("{}: expected a finite number in [{lo}, {hi}] {unit}", num(v))
        })
    }

    fn point(&mut self, p: [f64; 2], at: &str) -> bool {
        let ok = p.iter().all(|v| v.is_finite() && v.abs() <= COORD_LIMIT);
        self.ensure(ok, at, || {
            format!(
                "[{}, {}]: expected finite coordinates in metres within ±{}",
                num(p[0]),
                num(p[1]),
                num(COORD_LIMIT)
            )
        })
    }
}

/// `"#rrggbb"` as sRGB bytes (`None` for anything else).
pub fn parse_color(s: &str) -> Option<[u8; 3]> {
    let hex = s.strip_prefix('#')?;
    if hex.len() != 6 || !hex.is_ascii() {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some([byte(0)?, byte(2)?, byte(4)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_parse_strictly() {
        assert_eq!(parse_color("#ff8000"), Some([255, 128, 0]));
        assert_eq!(parse_color("#FF8000"), Some([255, 128, 0]));
        assert_eq!(parse_color("ff8000"), None);
        assert_eq!(parse_color("#ff80"), None);
        assert_eq!(parse_color("#gg8000"), None);
        assert_eq!(parse_color("#ff800é"), None);
    }
}
