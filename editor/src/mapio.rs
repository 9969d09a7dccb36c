//! Reading and writing the edited map in the JSON map format ([`crowdfield::map`]).
//!
//! Loading compiles the map (so rasters and layer shapes are baked into the three painted
//! rasters) and keeps the groups' goal and spawn shapes as they are. Saving writes the rasters
//! as `.npy` files beside the map (`NAME.height.npy`, `NAME.obstacles.npy`,
//! `NAME.discomfort.npy`, referenced from the JSON by relative path; a layer that is all zero
//! is left out) and then the JSON, every file atomically through [`crowdfield::io`]. Load →
//! save → load gives the same compiled map.
//!
//! Recovery files are ordinary maps saved as `NAME.recovery.json` beside the map.

use crate::doc::{AreaShape, Document, GROUP_PALETTE, GoalArea, GroupDoc, SpawnArea};
use crowdfield::map::{
    self, Circle, FORMAT_VERSION, GoalSpec, GridSpec, GroupSpec, Layer, Layers, MapFile, Polygon, Raster,
    Rect, Shape, ShapeRef, Shaped, SpawnSpec, SpeedRange,
};
use crowdfield::{Error, Result};
use std::path::{Path, PathBuf};

/// Suffix of the raster files of each layer.
const RASTER_SUFFIXES: [&str; 3] = ["height", "obstacles", "discomfort"];

/// Loads the map at `path` into a document.
///
/// A map that is well-formed but not yet valid (a group without goals, a spawn count above
/// its area's free cells: the states a map passes through while being drawn) still opens:
/// its layers are compiled without the groups and the groups are taken as written. Only
/// JSON, grid, layer and raster problems refuse the file. [`problems`] lists the rest.
pub fn load(path: &Path) -> Result<Document> {
    if is_plan(path) {
        return Ok(import_plan(path)?.0);
    }
    let file = MapFile::from_path(path)?;
    document_of(&file, path)
}

/// Whether `path` is a floor plan the editor imports (`.dxf`, `.wkt`, `.geojson`) rather than
/// a map it opens.
pub fn is_plan(path: &Path) -> bool {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| matches!(e.as_str(), "dxf" | "wkt" | "geojson"))
}

/// The document of the floor plan at `path`, imported as `crowdfield import` imports it (the
/// default cell size; every distribution must give its count), and the import's summary in
/// words.
///
/// # Errors
/// As [`crowdfield::import::import`]: the file, layer and entity of what the plan lacks.
pub fn import_plan(path: &Path) -> Result<(Document, String)> {
    use crowdfield::import::{ImportOptions, import, read_plan};
    let plan = read_plan(path, &Default::default(), None, None)?;
    let imported = import(&plan, &ImportOptions::default())?;
    let s = &imported.summary;
    let summary = format!(
        "{:.0} m² walkable, {} exits, {} distributions, {} persons",
        s.walkable_area, s.exits, s.distributions, s.persons
    );
    Ok((document_of(&imported.map, path)?, summary))
}

/// The document of the map `file` (read from `path`; its rasters beside it).
fn document_of(file: &MapFile, path: &Path) -> Result<Document> {
    let file = file.clone();
    let label = path.display().to_string();
    let base = map::base_dir(path);
    let scene = match map::compile(&file, base, &label) {
        Ok(scene) => scene,
        Err(full) => {
            let layers_only = MapFile {
                groups: Vec::new(),
                ..file.clone()
            };
            // If the layers alone do not compile, the first error is the one to show.
            let mut scene = map::compile(&layers_only, base, &label).map_err(|_| full)?;
            scene.groups.clear();
            scene
        }
    };
    let mut groups = Vec::with_capacity(file.groups.len());
    for (gi, spec) in file.groups.iter().enumerate() {
        let at = |what: &str, i: usize| format!("groups[{gi}].{what}[{i}]");
        let goals = spec
            .goals
            .iter()
            .enumerate()
            .map(|(i, g)| {
                Ok(GoalArea {
                    name: g.name.clone(),
                    shape: area_shape(g, &label, &at("goals", i))?,
                    width: g.width,
                    closed: g.closed,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let spawns = spec
            .spawns
            .iter()
            .enumerate()
            .map(|(i, s)| {
                Ok(SpawnArea {
                    name: s.name.clone(),
                    shape: area_shape(s, &label, &at("spawns", i))?,
                    count: s.count.unwrap_or(0),
                    premovement: s.premovement,
                    source: s.source_keys(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        groups.push(GroupDoc {
            name: spec.name.clone(),
            color: scene
                .groups
                .get(gi)
                .map(|g| g.color)
                .or_else(|| spec.color.as_deref().and_then(crowdfield::map::parse_color))
                .unwrap_or(GROUP_PALETTE[gi % GROUP_PALETTE.len()]),
            goals,
            spawns,
            speed_min: scene.groups.get(gi).map_or(spec.speed.min, |g| g.speed_min),
            speed_max: scene.groups.get(gi).map_or(spec.speed.max, |g| g.speed_max),
            speed_distribution: scene
                .groups
                .get(gi)
                .map(|g| g.speed_distribution.clone())
                .unwrap_or_default(),
            radius: spec.radius,
            boids: spec.boids.clone(),
            orca: spec.orca.clone(),
            route: spec.route_keys(),
        });
    }
    let mut doc = Document::from_scene(&scene, groups, file.params.clone());
    doc.model = file.model;
    doc.walls = file.walls;
    doc.origin = file.grid.origin;
    doc.events = file.events.clone();
    doc.regions = file.regions.clone();
    doc.movers = file.movers.clone();
    Ok(doc)
}

fn area_shape(s: &impl Shaped, file: &str, at: &str) -> Result<AreaShape> {
    match s.shape() {
        Ok(ShapeRef::Rect(r)) => Ok(AreaShape::Rect {
            min: r.min,
            max: r.max,
        }),
        Ok(ShapeRef::Circle(c)) => Ok(AreaShape::Circle {
            center: c.center,
            radius: c.radius,
        }),
        Ok(ShapeRef::Polygon(p)) => Ok(AreaShape::Polygon {
            points: p.points.clone(),
        }),
        Err(n) => Err(Error::invalid(
            file,
            at,
            format!("expected exactly one of rect, circle, polygon, found {n}"),
        )),
    }
}

fn to_shape(a: &AreaShape) -> Shape {
    match a {
        AreaShape::Rect { min, max } => Shape::Rect(Rect { min: *min, max: *max }),
        AreaShape::Circle { center, radius } => Shape::Circle(Circle {
            center: *center,
            radius: *radius,
            profile: None,
        }),
        AreaShape::Polygon { points } => Shape::Polygon(Polygon {
            points: points.clone(),
        }),
    }
}

/// `NAME.json` → `NAME` (the stem raster files are named after).
fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "map".into())
}

/// The paths of the raster files written beside `path`.
pub fn raster_paths(path: &Path) -> [PathBuf; 3] {
    let dir = map::base_dir(path);
    let s = stem(path);
    RASTER_SUFFIXES.map(|k| dir.join(format!("{s}.{k}.npy")))
}

/// The map file describing `doc` with its rasters at the file names [`raster_paths`] gives
/// for `path` (relative to the map's folder).
pub fn to_map_file(doc: &Document, path: &Path) -> MapFile {
    let s = stem(path);
    let raster = |k: &str| {
        Some(Layer {
            raster: Some(Raster {
                file: format!("{s}.{k}.npy"),
                range: None,
            }),
            shapes: Vec::new(),
        })
    };
    let layers = Layers {
        height: doc
            .height
            .iter()
            .any(|&v| v != 0.0)
            .then(|| raster("height"))
            .flatten(),
        obstacles: doc
            .obstacle
            .iter()
            .any(|&v| v)
            .then(|| raster("obstacles"))
            .flatten(),
        discomfort: doc
            .discomfort
            .iter()
            .any(|&v| v != 0.0)
            .then(|| raster("discomfort"))
            .flatten(),
    };
    let groups = doc
        .groups
        .iter()
        .map(|g| GroupSpec {
            name: g.name.clone(),
            color: Some(format!("#{:02x}{:02x}{:02x}", g.color[0], g.color[1], g.color[2])),
            goals: g
                .goals
                .iter()
                .map(|a| {
                    let mut spec = GoalSpec {
                        name: a.name.clone(),
                        width: a.width,
                        closed: a.closed,
                        ..Default::default()
                    };
                    spec.set_shape(to_shape(&a.shape));
                    spec
                })
                .collect(),
            spawns: g
                .spawns
                .iter()
                .map(|a| {
                    let mut spec = SpawnSpec {
                        name: a.name.clone(),
                        count: a.source.is_none().then_some(a.count),
                        premovement: a.premovement,
                        ..Default::default()
                    };
                    spec.set_source_keys(a.source.clone());
                    spec.set_shape(to_shape(&a.shape));
                    spec
                })
                .collect(),
            speed: {
                let (mean, sd, rimea) = g.speed_distribution.to_spec();
                if rimea.is_some() {
                    // A RiMEA population sets its own range.
                    SpeedRange {
                        rimea,
                        ..Default::default()
                    }
                } else {
                    SpeedRange {
                        min: g.speed_min,
                        max: g.speed_max,
                        mean,
                        sd,
                        rimea,
                    }
                }
            },
            radius: g.radius,
            boids: g.boids.clone(),
            orca: g.orca.clone(),
            route: g.route.route.clone(),
            exit_shares: g.route.exit_shares.clone(),
        })
        .collect();
    MapFile {
        version: FORMAT_VERSION,
        name: doc.name.clone(),
        grid: GridSpec {
            cols: doc.grid.cols,
            rows: doc.grid.rows,
            cell_size: doc.grid.cell_size,
            origin: doc.origin,
        },
        layers,
        groups,
        model: doc.model,
        params: doc.params.clone(),
        walls: doc.walls,
        events: doc.events.clone(),
        regions: doc.regions.clone(),
        movers: doc.movers.clone(),
    }
}

/// Saves `doc` at `path`: the non-empty rasters as `.npy` beside it, then the JSON, each
/// atomically; then the raster files of layers that are now empty are removed, once the JSON
/// no longer names them (removed first, a failed JSON write left a map naming deleted files).
///
/// `path` is checked before anything is written: a file name ending in `.json` (an empty
/// path would write `./map.*.npy` before failing), not a folder or a device, in a folder
/// that exists.
pub fn save(doc: &Document, path: &Path) -> Result<()> {
    let is_json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if !is_json {
        return Err(crowdfield::Error::invalid(
            path.display().to_string(),
            "path",
            "expected a map file name ending in .json",
        ));
    }
    crowdfield::io::check_output_file(path)?;
    let file = to_map_file(doc, path);
    let [hp, op, dp] = raster_paths(path);
    if file.layers.height.is_some() {
        crowdfield::io::write_npy(&hp, doc.height.view())?;
    }
    if file.layers.obstacles.is_some() {
        crowdfield::io::write_npy(&op, doc.obstacle.mapv(u8::from).view())?;
    }
    if file.layers.discomfort.is_some() {
        crowdfield::io::write_npy(&dp, doc.discomfort.view())?;
    }
    file.save(path)?;
    let layers = [
        &file.layers.height,
        &file.layers.obstacles,
        &file.layers.discomfort,
    ];
    for (p, layer) in [&hp, &op, &dp].into_iter().zip(layers) {
        if layer.is_none() && p.exists() {
            // A stale raster the map no longer refers to; failing to remove it is harmless.
            let _ = std::fs::remove_file(p);
        }
    }
    Ok(())
}

/// Every problem the map loader would report for `doc` saved at `path` (empty when valid).
pub fn problems(doc: &Document, path: &Path) -> Vec<String> {
    // The painted rasters live in the document until a save writes them beside the map, so the
    // map is checked without its raster files, and the groups' spawns on the compiled scene,
    // the rasters included (a spawn area painted over with walls is a problem).
    let file = MapFile {
        layers: Layers::default(),
        ..to_map_file(doc, path)
    };
    let label = path.display().to_string();
    let mut out: Vec<String> = map::check(&file, map::base_dir(path), &label)
        .into_iter()
        .map(|e| e.to_string())
        .collect();
    if out.is_empty() && !doc.groups.is_empty() {
        let scene = doc.to_scene();
        match crowdfield::sim::spawn::spawn_agents(&scene, 0) {
            Ok(_) => {}
            Err(Error::Many(errors)) => out.extend(
                errors
                    .into_iter()
                    .map(|e| e.relabel(&scene.name, &label).to_string()),
            ),
            Err(e) => out.push(e.relabel(&scene.name, &label).to_string()),
        }
    }
    out
}

/// `NAME.json` → `NAME.recovery.json` beside it.
pub fn recovery_path(path: &Path) -> PathBuf {
    map::base_dir(path).join(format!("{}.recovery.json", stem(path)))
}

/// The recovery file of `path` when one exists and is newer than the map (or the map is gone).
pub fn recovery_for(path: &Path) -> Option<PathBuf> {
    let rec = recovery_path(path);
    let rec_time = std::fs::metadata(&rec).and_then(|m| m.modified()).ok()?;
    match std::fs::metadata(path).and_then(|m| m.modified()) {
        Ok(map_time) if map_time > rec_time => None,
        _ => Some(rec),
    }
}

/// Deletes a recovery file and its rasters (missing files are fine).
pub fn remove_recovery(rec: &Path) {
    for p in raster_paths(rec).iter().chain([rec.to_path_buf()].iter()) {
        let _ = std::fs::remove_file(p);
    }
}
