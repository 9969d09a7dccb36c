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
mod settings;

use crate::error::Error;
use crate::map::LoadOptions;
use crate::map::format::{FORMAT_VERSION, MapFile};
use crate::map::{COORD_LIMIT, VALUE_LIMIT};
use crate::params::Params;
use crate::scene::{Group, Scene};
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
    };
    (Some(scene), errors)
}

/// Collects problems.
struct Checker<'a> {
    file: &'a str,
    /// What the map may read.
    options: LoadOptions,
    errors: Vec<Error>,
    /// The obstacles layer's raster file, named when a goal or spawn lies in its walls.
    obstacle_raster: Option<String>,
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
