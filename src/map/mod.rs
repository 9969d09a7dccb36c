//! The JSON map format: loading, validation, compilation to a [`Scene`], saving.
//!
//! A map file (format version 1, described field by field in `maps/map.schema.json` and in
//! [`format`](mod@format)) gives a grid, three layers (terrain height, obstacles, discomfort) as rasters and/or
//! shapes, groups of walkers with goal and spawn areas, and the model parameters. Loading goes
//! text → [`MapFile`] (JSON types, every structural problem with its JSON path, see `parse`) →
//! [`compile`] (ranges, rasters, rasterisation, reachability; every problem again) → [`Scene`].
//!
//! ```
//! use crowdfield::map::{MapFile, compile};
//! let text = r#"{
//!   "version": 1, "name": "demo",
//!   "grid": {"cols": 20, "rows": 10, "cell_size": 0.5},
//!   "layers": {"obstacles": {"shapes": [{"rect": {"min": [4, 0], "max": [4.5, 4]}}]}},
//!   "groups": [{"name": "walkers",
//!               "goals": [{"rect": {"min": [9.5, 0], "max": [10, 5]}, "name": "east exit"}],
//!               "spawns": [{"rect": {"min": [0, 0], "max": [2, 5]}, "count": 10}]}]
//! }"#;
//! let map = MapFile::from_json(text, "demo.json").unwrap();
//! let scene = compile(&map, std::path::Path::new("."), "demo.json").unwrap();
//! assert_eq!(scene.obstacle.iter().filter(|&&b| b).count(), 8);
//! assert_eq!(scene.groups[0].goals[0].width, 5.0);
//! ```

mod check;

pub use check::{obstacle_shape, parse_color};
pub mod format;
pub mod outline;
mod parse;
pub mod raster;

pub use format::{
    Circle, FORMAT_VERSION, GoalSpec, GridSpec, GroupSpec, Layer, LayerShape, Layers, MapFile, MoverSpec,
    Polygon, Premovement, Profile, Raster, Rect, Shape, ShapeOp, ShapeRef, Shaped, SpawnSpec, SpeedRange,
    Walls,
};

use crate::error::{Error, Result};
use crate::params::Model;
use crate::scene::Scene;
use std::path::Path;

/// Most cells a grid may have (2^28, a 16384 x 16384 grid): beyond this a map is almost surely
/// a units mistake, and the per-cell arrays alone would take tens of GiB.
pub const MAX_CELLS: usize = 1 << 28;
/// A map whose run needs more than this ([`crate::memory::RunSize::simulation_bytes`], for its
/// grid and groups) is refused before anything is allocated: 8 GiB, half a typical
/// workstation's memory (a one-group grid of about 5400 x 5400 cells just fits).
pub const MEMORY_LIMIT_BYTES: u64 = 8 << 30;
/// Smallest cell edge, metres: a centimetre is already far below a body's size; smaller is
/// likely millimetres typed as metres.
pub const MIN_CELL_SIZE: f64 = 0.01;
/// Largest cell edge, metres: a cell wider than a street cannot resolve a crowd.
pub const MAX_CELL_SIZE: f64 = 100.0;
/// Largest coordinate magnitude, metres (1000 km): beyond any site a crowd walks.
pub const COORD_LIMIT: f64 = 1.0e6;
/// Most cells along a grid side: every image draws at least one pixel per cell (a 1 x 4e6 grid
/// made 4-million-pixel-tall PNGs of gigabytes).
pub const MAX_GRID_SIDE: usize = 65_536;
/// Longest grid side, m: agents' positions are `f32`, which resolve about 1 mm up to 16 km;
/// at 1000 km a walker's 0.13 m step was rounded to 0.125 m (speeds 7 % low).
pub const MAX_GRID_EXTENT: f64 = 10_000.0;
/// Largest magnitude of a layer value, parameter or raster value: keeps every product finite
/// and f32 conversion meaningful.
pub const VALUE_LIMIT: f64 = 1.0e6;
/// Fastest preferred walking speed, m/s: above any human sprint (about 12 m/s).
pub const MAX_WALK_SPEED: f64 = 15.0;
/// Longest pre-movement time, s: one day, beyond any evacuation (the time step and the float
/// precision of the run's clock stay meaningful).
pub const MAX_PREMOVEMENT: f64 = 86_400.0;
/// Largest body radius, m: more than any person, wheelchair or trolley.
pub const MAX_RADIUS: f64 = 2.0;
/// Smallest `params.f_min`, m/s: the speed floor's unit cost (1 / f_min, at most 1000 s/m)
/// stays finite in f32 with room for the discomfort and slope terms.
pub const MIN_FLOW_SPEED: f64 = 1e-3;
/// Smallest body radius, m: a centimetre, below any walker or fish of a school (smaller
/// bodies made the spawn lattices, whose spacing is the body's size, billions of points).
pub const MIN_RADIUS: f64 = 0.01;
/// Most ORCA neighbours per agent: far more than ORCA ever needs (10 is typical).
pub const MAX_ORCA_NEIGHBORS: usize = 1000;

/// The text of the map file at `path`, without a leading byte-order mark. A file that is not
/// UTF-8 is an error naming the line and column of the first bad byte (a map saved as Latin-1
/// or UTF-16 by an editor).
pub(crate) fn read_map_text(path: &Path) -> Result<String> {
    let bytes = crate::io::read_input_file(path)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let before = &bytes[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        // Columns count characters, as JSON parse errors do.
        let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
        Error::invalid(
            path.display().to_string(),
            format!("line {line}, column {column}"),
            format!(
                "byte 0x{:02x} is not UTF-8 text: save the map as UTF-8",
                bytes[at]
            ),
        )
    })?;
    // A byte-order mark (Windows editors write one) is not part of the JSON.
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    })
}

/// What a map may read besides its own file.
///
/// By default a raster path must stay inside the map's folder: a path that is absolute, climbs
/// out with `..` or passes through a symbolic link leading out is refused (a map from someone
/// else must not read, say, `~/.ssh` or another project's data), with a message that does not
/// tell whether the outside file exists. `allow_outside_rasters` (the commands'
/// `--allow-outside-rasters`) lifts that for maps one trusts. The permission is the reader's,
/// not the map's: a map cannot grant it to itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LoadOptions {
    /// Read raster files outside the map's folder too.
    pub allow_outside_rasters: bool,
}

/// Loads, validates and compiles the map at `path` (rasters resolved relative to it and kept
/// inside its folder: see [`LoadOptions`]).
pub fn load(path: impl AsRef<Path>) -> Result<Scene> {
    load_with(path.as_ref(), &LoadOptions::default())
}

/// [`load`] with the given [`LoadOptions`].
pub fn load_with(path: &Path, options: &LoadOptions) -> Result<Scene> {
    let map = MapFile::from_path(path)?;
    compile_with(&map, base_dir(path), &crate::text::show_path(path), options)
}

/// Every problem found in the map at `path` (empty when it is valid).
pub fn validate(path: &Path) -> Vec<Error> {
    check_file(path).1
}

/// The map at `path` read and checked once: its scene when it has no problem, and every
/// problem found.
pub fn check_file(path: &Path) -> (Option<Scene>, Vec<Error>) {
    check_file_with(path, &LoadOptions::default())
}

/// [`check_file`] with the given [`LoadOptions`].
pub fn check_file_with(path: &Path, options: &LoadOptions) -> (Option<Scene>, Vec<Error>) {
    let file = crate::text::show_path(path);
    let text = match read_map_text(path) {
        Ok(t) => t,
        Err(e) => return (None, vec![e]),
    };
    match parse::parse_map(&text, &file) {
        Ok(map) => check::check(&map, base_dir(path), &file, options),
        Err(errors) => (None, errors),
    }
}

/// A walking speed above this (m/s) is almost surely a value in km/h: Weidmann's free speed is
/// 1.34 m/s and a fast run about 5 m/s, which is 4.8 and 18 km/h.
const PLAUSIBLE_WALKING_SPEED: f64 = 2.5;

/// Whether `path` names a JSON Schema (`*.schema.json`, such as the `maps/map.schema.json` that
/// ships beside the bundled maps) rather than a map. `batch` and `validate` skip such files, so
/// `maps/*.json` checks or runs the maps alone.
pub fn is_schema_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".schema.json"))
}

/// Values a valid map may hold but that probably do not mean what the author meant, as
/// `JSON.PATH: message` lines: under the published model ([`Model::ContinuumCrowds`]), a group
/// with goals whose top speed exceeds `params.f_max` (its walkers never exceed `f_max` on the
/// potential field, so the extra speed has no effect there; a goal-less flock does not follow a
/// potential; the pedestrian model keeps each walker's own free speed, so it has no such
/// limit), or a speed that looks like km/h. `validate` prints them after `ok`; `simulate`
/// prints them before the run, and every run's report leads with them.
pub fn warnings(scene: &Scene) -> Vec<String> {
    let f_max = scene.params.f_max;
    let capped_at_f_max = scene.params.model == Model::ContinuumCrowds;
    let mut out = Vec::new();
    for (i, g) in scene.groups.iter().enumerate() {
        if g.speed_max > PLAUSIBLE_WALKING_SPEED {
            out.push(format!(
                "groups[{i}].speed.max: {} m/s is faster than people walk ({} km/h): speeds are in m/s",
                check::num(g.speed_max),
                check::num(g.speed_max * 3.6)
            ));
        } else if capped_at_f_max && g.speed_max > f_max && !g.goals.is_empty() {
            out.push(format!(
                "groups[{i}].speed.max: {} m/s is above params.f_max ({} m/s): walkers follow the \
                 potential at most at f_max, so the extra speed has no effect (raise params.f_max to allow it)",
                check::num(g.speed_max),
                check::num(f_max)
            ));
        }
    }
    out.extend(frozen_walker_warning(scene));
    out.extend(narrow_opening_warnings(scene));
    out.extend(goal_width_warnings(scene));
    out.extend(body_path_warnings(scene));
    out.extend(route_reach_warnings(scene));
    out
}

/// A goal's `width` may differ from the opening it measures by this fraction of the opening
/// (and by half a cell, the rasterisation's own error) before [`goal_width_warnings`] warns:
/// the specific flow divides by the width, so 25 % off is a specific flow 25 % off.
const GOAL_WIDTH_TOLERANCE: f64 = 0.25;

/// The opening a goal measures, in metres: its open cells' extent across the direction walkers
/// enter it. Walkers enter through the faces between the goal's open cells and open cells
/// outside it; when most such faces face east or west, walkers walk along x and the opening is
/// the number of rows holding an open goal cell with such a face, times the cell size (for a
/// goal drawn in a doorway, the door's width; for one in open floor, its own extent across the
/// walk), and the other way round. With exact walls, the extent across that direction of the
/// walkable part of the goal's area as drawn (the drawn width: doors do not snap). `None` for a
/// goal no walker can enter.
pub fn goal_opening(scene: &Scene, mask: &crate::scene::CellMask) -> Option<f64> {
    let grid = &scene.grid;
    let open = |r: isize, c: isize| {
        r >= 0
            && c >= 0
            && r < grid.rows as isize
            && c < grid.cols as isize
            && !scene.obstacle[[r as usize, c as usize]]
    };
    let outside = |r: isize, c: isize| open(r, c) && !mask.get((r as usize, c as usize));
    let (mut x_faces, mut y_faces) = (0usize, 0usize);
    let mut rows_entered = std::collections::BTreeSet::new();
    let mut cols_entered = std::collections::BTreeSet::new();
    for (r, c) in mask.cells() {
        let (ri, ci) = (r as isize, c as isize);
        if !open(ri, ci) {
            continue;
        }
        let x = outside(ri, ci - 1) as usize + outside(ri, ci + 1) as usize;
        let y = outside(ri - 1, ci) as usize + outside(ri + 1, ci) as usize;
        if x > 0 {
            rows_entered.insert(r);
        }
        if y > 0 {
            cols_entered.insert(c);
        }
        x_faces += x;
        y_faces += y;
    }
    let h = grid.cell_size;
    let along_x = match (x_faces, y_faces) {
        (0, 0) => return None,
        (x, y) => x >= y,
    };
    // With exact walls, the walkable part of the goal's area as drawn, measured across the
    // same direction: bodies pass the drawn width, not the cells'.
    if let Some(area) = exact_goal_area(scene, mask) {
        use geo::{BooleanOps, BoundingRect};
        let walkable = scene.outline.as_ref().map(|o| area.intersection(&o.walkable))?;
        let r = walkable.bounding_rect()?;
        // To the micrometre: the shapes' coordinates are single precision.
        let across = if along_x { r.height() } else { r.width() };
        return Some((across * 1e6).round() / 1e6);
    }
    Some(if along_x {
        rows_entered.len() as f64 * h
    } else {
        cols_entered.len() as f64 * h
    })
}

/// The goal area as drawn of the goal whose cells are `mask`, on a map with exact walls.
fn exact_goal_area<'s>(
    scene: &'s Scene,
    mask: &crate::scene::CellMask,
) -> Option<&'s geo::MultiPolygon<f64>> {
    if !scene.exact_walls {
        return None;
    }
    let outline = scene.outline.as_ref()?;
    scene.groups.iter().enumerate().find_map(|(g, group)| {
        let j = group
            .goals
            .iter()
            .position(|goal| std::ptr::eq(&goal.mask, mask))?;
        outline.goals.get(g)?.get(j)
    })
}

/// A goal whose `width` (given, or the default: the longer side of its shape's bounding box)
/// differs from the opening it measures ([`goal_opening`]) by more than
/// [`GOAL_WIDTH_TOLERANCE`]: its specific flow (persons/(m·s)) would be off by as much.
fn goal_width_warnings(scene: &Scene) -> Vec<String> {
    let h = scene.grid.cell_size;
    let mut out = Vec::new();
    for (gi, g) in scene.groups.iter().enumerate() {
        for (ei, e) in g.goals.iter().enumerate() {
            let Some(opening) = goal_opening(scene, &e.mask) else {
                continue;
            };
            let off = (e.width - opening).abs();
            if off > GOAL_WIDTH_TOLERANCE * opening && off > 0.5 * h {
                let spans = if scene.exact_walls {
                    "the goal's walkable area as drawn spans"
                } else {
                    "the goal's open cells span"
                };
                out.push(format!(
                    "groups[{gi}].goals[{ei}].width: {} m, but {spans} {} m across the \
                     direction walkers enter it (the opening it is drawn in): the exit's specific flow \
                     divides by the width, so it would be off by {:.0} %; give the opening's width as \
                     \"width\", or draw the goal over the opening (docs/map-format.md, goal widths)",
                    check::num(e.width),
                    check::num(opening),
                    100.0 * (opening / e.width - 1.0).abs()
                ));
            } else if off > DOOR_SNAP_TOLERANCE * e.width && !scene.exact_walls {
                // The opening is the width drawn, snapped to whole cells: say so, and which
                // cells would keep it.
                let cells_across = (e.width / h - 1e-9).ceil().max(1.0);
                out.push(format!(
                    "groups[{gi}].goals[{ei}].width: {} m, but on cells of {} m the walkable opening is {} m \
                     (openings snap to whole cells): walkers pass a {} m opening while its specific flow \
                     divides by {} m; draw the opening on whole cells, or use cells of {} m ({} across it)",
                    check::num(e.width),
                    check::num(h),
                    check::num(opening),
                    check::num(opening),
                    check::num(e.width),
                    check::num((e.width / cells_across * 1e6).round() / 1e6),
                    cells_across
                ));
            }
        }
    }
    out
}

/// A goal's width may differ from the walkable opening it measures by this fraction of the
/// width before [`goal_width_warnings`] says the opening snapped to whole cells (a door of
/// 0.9 m on 0.25 m cells is 0.75 m or 1.0 m, 11–17 % off; a door of 1 m is 1 m).
const DOOR_SNAP_TOLERANCE: f64 = 0.05;

/// A lone walker's own share of the density splat in its cell, persons/m², for cells of `h`
/// metres: at least `0.5^lambda` of it stays in its own cell (SPEC §2).
pub fn own_body_density(lambda: f64, h: f64) -> f64 {
    0.5f64.powf(lambda) / (h * h)
}

/// Below this fraction of `f_max` a lone walker is "slowed by its own body" (the warning of
/// [`frozen_walker_warning`]); 0.9 leaves room for the rounding of speeds near free flow.
const LONE_WALKER_FRACTION: f64 = 0.9;

/// `params.density_at_walker` without a `density_window` (or with one no larger than a cell):
/// each face reads at least its own
/// cell's per-cell splat, which holds the walker's own body, so a walker alone reads a density
/// that grows as the cells shrink and walks at the speed law's speed for it (under Weidmann's
/// law about 0.1 m/s on cells of 0.25 m, `f_min`). The warning names the field and the speed.
fn frozen_walker_warning(scene: &Scene) -> Option<String> {
    let p = &scene.params;
    let h = scene.grid.cell_size;
    // A window of one cell reads the per-cell splat too.
    let per_cell = crate::fields::window::DensityWindow::new(p.density_window, h).is_none_or(|w| w.half == 0);
    if !p.density_at_walker || !per_cell {
        return None;
    }
    let rho = own_body_density(p.lambda, h);
    let v = crate::fields::speed::blend_speed(p, p.f_max, p.f_min, rho);
    (v < LONE_WALKER_FRACTION * p.f_max).then(|| {
        format!(
            "params.density_at_walker: true without a params.density_window larger than a cell: a walker alone reads its own \
             body in its cell (at least {} persons/m² on cells of {} m) and walks at about {} m/s instead of \
             {} m/s (params.speed_law {}); set params.density_window to 1 (m²) so the density is read over a \
             measurement area",
            check::num((rho * 100.0).round() / 100.0),
            check::num(h),
            check::num((v * 100.0).round() / 100.0),
            check::num(p.f_max),
            match p.speed_law {
                crate::params::SpeedLaw::Linear => "linear",
                crate::params::SpeedLaw::Weidmann => "weidmann",
            }
        )
    })
}

/// Most narrow openings named one by one in the warning of [`narrow_opening_warnings`].
const NARROW_OPENINGS_NAMED: usize = 3;

/// Openings of one cell between obstacles (a free cell whose neighbours on both sides, along
/// a row or a column, are obstacles or the edge of the map while the cells beyond are open),
/// and goals narrower than two cells: there the cell size, not the door's width, sets how
/// many walkers pass, so flows through it are unreliable.
fn narrow_opening_warnings(scene: &Scene) -> Vec<String> {
    let grid = &scene.grid;
    let h = grid.cell_size;
    let mut out = Vec::new();
    for (gi, g) in scene.groups.iter().enumerate() {
        for (ei, e) in g.goals.iter().enumerate() {
            if e.width < 2.0 * h {
                out.push(format!(
                    "groups[{gi}].goals[{ei}].width: {} m is narrower than two cells (grid.cell_size {} m): \
                     the cell size sets the flow through it, not its width; use cells of at most {} m",
                    check::num(e.width),
                    check::num(h),
                    check::num(e.width / 2.0)
                ));
            }
        }
    }
    let blocked = |r: isize, c: isize| {
        r < 0
            || c < 0
            || r >= grid.rows as isize
            || c >= grid.cols as isize
            || scene.obstacle[[r as usize, c as usize]]
    };
    let open = |r: isize, c: isize| !blocked(r, c);
    let mut found = Vec::new();
    for r in 0..grid.rows as isize {
        for c in 0..grid.cols as isize {
            if blocked(r, c) {
                continue;
            }
            // Walls left and right, passage up and down (a door in a wall along y), or the
            // other way round.
            let across_x = blocked(r, c - 1) && blocked(r, c + 1) && open(r - 1, c) && open(r + 1, c);
            let across_y = blocked(r - 1, c) && blocked(r + 1, c) && open(r, c - 1) && open(r, c + 1);
            let inside = c > 0 && r > 0 && c + 1 < grid.cols as isize && r + 1 < grid.rows as isize;
            if inside && (across_x || across_y) {
                found.push((r as usize, c as usize));
            }
        }
    }
    if !found.is_empty() {
        let at: Vec<String> = found
            .iter()
            .take(NARROW_OPENINGS_NAMED)
            .map(|&(r, c)| {
                let (x, y) = grid.cell_center(r, c);
                format!("({}, {}) m", check::num(x), check::num(y))
            })
            .collect();
        let more = found.len().saturating_sub(NARROW_OPENINGS_NAMED);
        out.push(format!(
            "layers.obstacles: {} one cell wide between obstacles at {}{}: a door narrower than two cells \
             (grid.cell_size {} m) passes walkers at a rate the cell size sets, not the door's width; use cells \
             of at most half the narrowest door",
            if found.len() == 1 { "an opening" } else { "openings" },
            at.join(", "),
            if more > 0 { format!(" and {more} more cells") } else { String::new() },
            check::num(h)
        ));
    }
    out
}

/// Groups whose bodies find no way out: per group with goals, the spawn areas from which no
/// path of cells where the group's body fits leads to a goal. A body of radius `r` needs
/// [`body_cells`](crate::collision::walls::body_cells) cells side by side and never steps to a
/// cell whose free floor across it ([`FreeRuns::span`](crate::collision::walls::FreeRuns::span))
/// leaves it short of more cells than where it stands (the rule of the simulation's move,
/// [`crate::collision::walls`]), so the walkers of such an area stay inside until the run's time
/// limit. A flood fill from the goals backwards over 4-connected steps finds the cells a body
/// can leave from; a spawn area with none of them is named (an area no path of free cells at all
/// leads out of is an error of the map's check already).
fn body_path_warnings(scene: &Scene) -> Vec<String> {
    use crate::collision::walls::{FreeRuns, body_cells, inv_cell, misfit};
    let grid = &scene.grid;
    let mut spans = None;
    let mut out = Vec::new();
    for (gi, g) in scene.groups.iter().enumerate() {
        let need = body_cells(g.radius as f32, inv_cell(grid.cell_size));
        // A body of one cell fits every free cell: the map's check found its paths.
        if g.goals.is_empty() || need <= 1 {
            continue;
        }
        let spans = spans.get_or_insert_with(|| FreeRuns::new(scene.obstacle.view()).span());
        let lacks = |rc: (usize, usize)| misfit(spans[rc], need);
        // Backwards: a walker steps from `to` to `from` when it lacks no more cells at `from`.
        let leaves = check::flood_from(grid, &scene.obstacle, &g.goal_mask(grid), |from, to| {
            !scene.obstacle[to] && lacks(from) <= lacks(to)
        });
        let stuck: Vec<String> = g
            .spawns
            .iter()
            .filter(|s| !s.area.mask.cells().any(|rc| leaves[rc]))
            .map(|s| crate::text::quoted(&s.area.name))
            .collect();
        if stuck.is_empty() {
            continue;
        }
        let width = check::num(2.0 * g.radius);
        out.push(format!(
            "groups[{gi}]: no path at least {width} m wide (the group's bodies, radius {} m) leads from spawn \
             area{} {} to a goal: every way out passes an opening narrower than a body, so these walkers \
             stay inside until the time limit; widen the opening or make the bodies smaller (radius)",
            check::num(g.radius),
            if stuck.len() == 1 { "" } else { "s" },
            stuck.join(", ")
        ));
    }
    out
}

/// A route whose stage cannot be reached from where its walkers are before it (the group's
/// spawn areas and sources, or the stage before), or whose exits cannot be reached from its
/// last stage: walls cut the way, so those walkers stay inside until the time limit.
fn route_reach_warnings(scene: &Scene) -> Vec<String> {
    let grid = &scene.grid;
    let routes = &scene.schedule.routes;
    let free = |_: (usize, usize), to: (usize, usize)| !scene.obstacle[to];
    let mut out = Vec::new();
    for (gi, g) in scene.groups.iter().enumerate() {
        let route = routes.route(gi);
        if route.is_empty() {
            continue;
        }
        let mut from = ndarray::Array2::from_elem(grid.shape(), false);
        for s in &g.spawns {
            s.area.mask.or_into(&mut from);
        }
        for s in scene.schedule.sources.iter().filter(|s| s.group == gi) {
            s.area.mask.or_into(&mut from);
        }
        let mut before = "its spawn areas".to_string();
        for (k, step) in route.iter().enumerate() {
            let stage = &routes.stages[step.stage];
            let reaches = check::flood_from(grid, &scene.obstacle, &stage.mask.to_dense(), free);
            if !from.iter().zip(reaches.iter()).any(|(&a, &b)| a && b) {
                out.push(format!(
                    "groups[{gi}].route[{k}]: the stage {} cannot be reached from {before}: walls cut \
                     the way, so these walkers stay inside until the time limit; move the stage or open a way",
                    crate::text::quoted(&stage.name)
                ));
            }
            from = stage.mask.to_dense();
            before = format!("the stage {}", crate::text::quoted(&stage.name));
        }
        let exits = check::flood_from(grid, &scene.obstacle, &g.goal_mask(grid), free);
        if !g.goals.is_empty() && !from.iter().zip(exits.iter()).any(|(&a, &b)| a && b) {
            out.push(format!(
                "groups[{gi}].route: no exit can be reached from {before}, the route's last stage: walls cut \
                 the way, so these walkers stay inside until the time limit"
            ));
        }
    }
    out
}

/// Checks `map` and rasterises it into a [`Scene`]. Raster files are resolved relative to
/// `base_dir`; `file_label` names the map in errors. Every problem is reported (an
/// [`Error::Many`] when there are several).
pub fn compile(map: &MapFile, base_dir: &Path, file_label: &str) -> Result<Scene> {
    compile_with(map, base_dir, file_label, &LoadOptions::default())
}

/// [`compile`] with the given [`LoadOptions`].
pub fn compile_with(
    map: &MapFile,
    base_dir: &Path,
    file_label: &str,
    options: &LoadOptions,
) -> Result<Scene> {
    match check::check(map, base_dir, file_label, options) {
        (Some(scene), errors) if errors.is_empty() => Ok(scene),
        (_, errors) if errors.is_empty() => Err(Error::invalid(file_label, "(root)", "the map is not valid")),
        (_, errors) => Err(many(errors)),
    }
}

/// Every problem found in an in-memory map (empty when it compiles).
pub fn check(map: &MapFile, base_dir: &Path, file_label: &str) -> Vec<Error> {
    check::check(map, base_dir, file_label, &LoadOptions::default()).1
}

/// The error that `validate`, `solve`, `simulate` and `batch` give for a map with
/// `"groups": []`. The map loader accepts such a map (the editor opens and saves maps whose
/// groups are not drawn yet), but there is nothing to solve or walk on it.
pub fn no_groups_error(map: &Path) -> Error {
    Error::invalid(
        map.display().to_string(),
        "groups",
        "no groups: a map needs at least one group with a goal",
    )
}

/// The folder raster paths are relative to: the map file's folder.
pub fn base_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// One error as itself, several as [`Error::Many`].
fn many(mut errors: Vec<Error>) -> Error {
    if errors.len() == 1 {
        errors.remove(0)
    } else {
        Error::Many(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_saved_with_a_byte_order_mark_loads() {
        let dir = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string("maps/corridor.json").unwrap();
        let path = dir.path().join("bom.json");
        std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
        let with = MapFile::from_path(&path).unwrap();
        assert_eq!(with, MapFile::from_path(Path::new("maps/corridor.json")).unwrap());
    }

    #[test]
    fn the_pedestrian_model_is_not_warned_about_f_max() {
        // RiMEA's adults walk up to 1.64 m/s, above the default f_max of 1.34 m/s: the
        // pedestrian model keeps each walker's free speed, so no warning may push a planner
        // to add `params` (which would switch the map to the published model).
        let mut scene = load(Path::new("maps/corridor.json")).unwrap();
        scene.groups[0].speed_max = 1.64;
        scene.params = scene.params.clone().with_model(Model::Pedestrian);
        assert_eq!(warnings(&scene), Vec::<String>::new());
        scene.params = scene.params.clone().with_model(Model::ContinuumCrowds);
        let w = warnings(&scene);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("above params.f_max"), "{}", w[0]);
    }

    #[test]
    fn speed_warnings_show_numbers_people_can_read() {
        let mut scene = load(Path::new("maps/corridor.json")).unwrap();
        scene.params = scene.params.clone().with_model(Model::ContinuumCrowds);
        scene.params.f_max = 5e-324;
        let w = warnings(&scene);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("above params.f_max (5e-324 m/s)"), "{}", w[0]);
        scene.groups[0].speed_max = 3e300;
        let w = warnings(&scene);
        assert!(
            w[0].contains("3e300 m/s is faster than people walk (1.0800000000000002e301 km/h)"),
            "{}",
            w[0]
        );
    }
}
