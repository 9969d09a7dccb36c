//! Floor plans from other tools, turned into ordinary maps with their vectors kept.
//!
//! A reader per format ([`from_dxf`], [`from_wkt`], [`from_geojson`], [`from_image`]) gives a
//! [`Plan`]: the walkable area (polygons with holes), obstacles, exits, distributions of walkers
//! with their counts, what the map does not use (waypoints, journeys, doors), the units, all in
//! metres in the plan's own coordinates. [`import`] checks the plan (exits inside the walkable
//! area, distributions off the walls, a count for every distribution), moves it to a local
//! origin, chooses the grid and writes the map: obstacles are a rectangle over the whole grid,
//! then each walkable polygon's outline cleared and each hole blocked again, in order; exits
//! become the goals and distributions the spawn areas of one group (one group per body radius
//! when distributions name different radii). [`Imported::summary`] says what was found.
//!
//! Polygon unions, differences and areas are `geo`'s, so they agree with shapely's (GEOS).

pub mod from_dxf;
pub mod from_geojson;
pub mod from_image;
pub mod from_wkt;

use crate::error::{Error, OPTIONS, Result, num};
use crate::map::format::DEFAULT_RADIUS;
use crate::map::{
    FORMAT_VERSION, GoalSpec, GridSpec, GroupSpec, Layer, LayerShape, Layers, MAX_CELLS, MAX_GRID_EXTENT,
    MAX_GRID_SIDE, MapFile, Rect, SpawnSpec, SpeedRange,
};
use geo::{Area as _, BooleanOps, BoundingRect, MultiPolygon, Polygon, Validation};
use ndarray::Array2;
use serde::Serialize;
use std::path::Path;

/// The cell size of an imported map unless one is asked for, metres: a quarter of a metre
/// resolves a 0.5 m wide person and the narrowest doors of building codes (0.8 m) in 3 cells.
pub const DEFAULT_CELL_SIZE: f64 = 0.25;

/// The most cells an imported map gets at the default cell size before the cell size doubles:
/// a run on 2^24 cells needs about 2 GiB, well under the map format's memory cap.
pub const DEFAULT_CELL_CAP: usize = 1 << 24;

/// Free floor left around the walkable area's bounding box, metres, so the outline's walls are
/// inside the grid.
pub const MARGIN_M: f64 = 1.0;

/// Two ends of a line or polyline closer than this (metres) are taken as one point when
/// outlines are joined: a millimetre, far below a cell, above a CAD drawing's round-off.
pub const JOIN_TOLERANCE_M: f64 = 1e-3;

/// A named polygon of a plan and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedArea {
    /// The name shown in the map and reports ("exit 1" when the plan names none).
    pub name: String,
    /// The outline, metres, plan coordinates.
    pub polygon: Polygon<f64>,
    /// Where in the file: "layer jps-exits, entity 2F", "GEOMETRYCOLLECTION item 3".
    pub at: String,
    /// The file it comes from (several files can make one plan).
    pub file: String,
}

/// A distribution: an area walkers start in.
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution {
    /// The area.
    pub area: NamedArea,
    /// Number of walkers, when the plan gives one.
    pub count: Option<usize>,
    /// Body radius of its walkers, metres, when the plan gives one.
    pub radius: Option<f64>,
}

/// A floor plan as read from a file, in metres, in the plan's own coordinates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// The file (as messages name it).
    pub file: String,
    /// The walkable area: polygons, with holes, joined by union.
    pub walkable: Vec<NamedArea>,
    /// Obstacles taken out of the walkable area.
    pub obstacles: Vec<NamedArea>,
    /// The exits, in the file's order.
    pub exits: Vec<NamedArea>,
    /// The distributions, in the file's order.
    pub distributions: Vec<Distribution>,
    /// Doors (transitions between rooms): counted, not used (an opening in the walkable area
    /// is a door to the model).
    pub doors: usize,
    /// Waypoints: counted, not used (walkers take the quickest way to the nearest exit).
    pub waypoints: usize,
    /// Journeys: counted, not used.
    pub journeys: usize,
    /// The plan's unit, as read ("m", "mm", "ft", "m (no unit given)").
    pub units: String,
    /// A walls raster instead of walkable polygons (image plans): `true` = wall, row 0 = the
    /// bottom (y row 0), with its cell size, metres.
    pub walls: Option<(Array2<bool>, f64)>,
}

impl Plan {
    /// An empty plan of `file` in metres.
    pub fn new(file: &str) -> Self {
        Plan {
            file: file.to_string(),
            units: "m".into(),
            ..Plan::default()
        }
    }

    /// Adds `other`'s areas to this plan (several files imported as one plan).
    pub fn merge(&mut self, other: Plan) {
        self.walkable.extend(other.walkable);
        self.obstacles.extend(other.obstacles);
        self.exits.extend(other.exits);
        self.distributions.extend(other.distributions);
        self.doors += other.doors;
        self.waypoints += other.waypoints;
        self.journeys += other.journeys;
        if self.walls.is_none() {
            self.walls = other.walls;
        }
    }
}

/// What [`import`] may choose.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportOptions {
    /// The cell size, metres (default: [`DEFAULT_CELL_SIZE`], doubled while the grid would
    /// have more than [`DEFAULT_CELL_CAP`] cells).
    pub cell_size: Option<f64>,
    /// Persons per m² for a distribution that gives no count.
    pub density: Option<f64>,
    /// The map's name (default: the first file's stem).
    pub name: Option<String>,
}

/// One distribution of the summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DistributionSummary {
    /// Its name.
    pub name: String,
    /// Its area, m².
    pub area: f64,
    /// Its walkers.
    pub persons: usize,
    /// Where the count comes from: "the plan" or "density 2 persons/m²".
    pub count_from: String,
}

/// What an import found, as `crowdfield import` prints it (and `--json` writes it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImportSummary {
    /// The files read.
    pub files: Vec<String>,
    /// The plan's unit.
    pub units: String,
    /// Plan coordinates of the map's lower-left corner, metres.
    pub origin: [f64; 2],
    /// Walkable area less obstacles and holes, m².
    pub walkable_area: f64,
    /// Number of walkable polygons.
    pub walkable_polygons: usize,
    /// Number of holes in them (obstacles included).
    pub holes: usize,
    /// Number of exits.
    pub exits: usize,
    /// Exit names, in order.
    pub exit_names: Vec<String>,
    /// Number of doors (not used by the map).
    pub doors: usize,
    /// Number of distributions.
    pub distributions: usize,
    /// Each distribution.
    pub distribution_details: Vec<DistributionSummary>,
    /// Walkers over all distributions.
    pub persons: usize,
    /// Waypoints (not used by the map).
    pub waypoints: usize,
    /// Journeys (not used by the map).
    pub journeys: usize,
    /// The cell size, metres.
    pub cell_size: f64,
    /// Why that cell size.
    pub cell_size_reason: String,
    /// Grid columns.
    pub cols: usize,
    /// Grid rows.
    pub rows: usize,
}

/// An imported map, the walls raster it reads (image plans) and the summary.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The map.
    pub map: MapFile,
    /// The obstacle raster of an image plan (`true` = wall, row 0 = y row 0), written beside
    /// the map by [`Imported::save`] under the name the map's raster names.
    pub walls: Option<Array2<bool>>,
    /// What was found.
    pub summary: ImportSummary,
}

impl Imported {
    /// Writes the map to `path` and, for an image plan, its walls raster beside it
    /// (`STEM_walls.png`), both atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut map = self.map.clone();
        if let Some(walls) = &self.walls {
            let name = walls_file_name(path);
            let dir = crate::map::base_dir(path);
            let (rows, cols) = walls.dim();
            // PNG row 0 is the top of the picture (the highest y).
            let img = image::GrayImage::from_fn(cols as u32, rows as u32, |x, y| {
                image::Luma([if walls[[rows - 1 - y as usize, x as usize]] {
                    255
                } else {
                    0
                }])
            });
            let mut bytes = Vec::new();
            image::DynamicImage::ImageLuma8(img)
                .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
                .map_err(|e| Error::invalid(name.clone(), "(image)", e.to_string()))?;
            crate::io::write_bytes_atomic(&dir.join(&name), &bytes)?;
            if let Some(obstacles) = map.layers.obstacles.as_mut()
                && let Some(raster) = obstacles.raster.as_mut()
            {
                raster.file = name;
            }
        }
        map.save(path)
    }
}

/// The walls raster's file name for a map written to `map_path`: `STEM_walls.png`.
pub fn walls_file_name(map_path: &Path) -> String {
    let stem = map_path.file_stem().map_or("map".into(), |s| s.to_string_lossy());
    format!("{stem}_walls.png")
}

/// Reads a plan file, choosing the reader by the extension (`.dxf`, `.wkt`, `.geojson` or
/// `.json`, `.png`, `.jpg`/`.jpeg`). `layers` renames DXF layers (see
/// [`from_dxf::LayerNames`]); `pixel_size` (metres per pixel) is needed for images and
/// `threshold` (0-255, default 128) says which pixels are walls: those darker than it.
pub fn read_plan(
    path: &Path,
    layers: &from_dxf::LayerNames,
    pixel_size: Option<f64>,
    threshold: Option<u8>,
) -> Result<Plan> {
    let file = crate::text::show_path(path);
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "dxf" => from_dxf::read(path, layers),
        "png" | "jpg" | "jpeg" => {
            let Some(pixel_size) = pixel_size else {
                return Err(Error::invalid(
                    file,
                    "(image)",
                    "an image plan needs its scale: give the pixel size in metres (pixel_size)",
                ));
            };
            from_image::read(path, pixel_size, threshold.unwrap_or(128))
        }
        _ => {
            let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            })?;
            match ext.as_str() {
                "wkt" | "txt" => from_wkt::parse(&text, &file),
                "geojson" | "json" => from_geojson::parse(&text, &file),
                _ => Err(Error::invalid(
                    file,
                    "(file)",
                    format!(
                        "unknown plan format \".{ext}\": expected .dxf, .wkt, .geojson, .json, \
                         .png, .jpg or .jpeg"
                    ),
                )),
            }
        }
    }
}

/// Checks that `area`'s polygon is a valid outline (no self-intersection, holes inside), with
/// its file, the place and what to do in the error.
pub fn check_polygon(area: &NamedArea) -> Result<()> {
    match area.polygon.check_validation() {
        Ok(()) => Ok(()),
        Err(why) => Err(Error::invalid(
            &area.file,
            &area.at,
            format!(
                "{}: {why}; redraw the outline so that no edge crosses another",
                area.name
            ),
        )),
    }
}

/// Turns a plan into a map: see the [module documentation](self).
pub fn import(plan: &Plan, options: &ImportOptions) -> Result<Imported> {
    let file = plan.file.as_str();
    if let Some(d) = options.density
        && !(d.is_finite() && d > 0.0 && d <= 10.0)
    {
        return Err(Error::invalid(
            OPTIONS,
            "ImportOptions.density",
            format!("{}: expected persons per m² in (0, 10]", num(d)),
        ));
    }
    if let Some(cs) = options.cell_size
        && !(cs.is_finite() && (crate::map::MIN_CELL_SIZE..=crate::map::MAX_CELL_SIZE).contains(&cs))
    {
        return Err(Error::invalid(
            OPTIONS,
            "ImportOptions.cell_size",
            format!("{}: expected metres in [0.01, 100]", num(cs)),
        ));
    }
    if plan.walls.is_some() {
        return import_raster(plan, options);
    }
    for area in plan.walkable.iter().chain(&plan.obstacles).chain(&plan.exits) {
        check_polygon(area)?;
    }
    for d in &plan.distributions {
        check_polygon(&d.area)?;
    }
    if plan.walkable.is_empty() {
        return Err(Error::invalid(
            file,
            "(walkable area)",
            "the plan has no walkable area: draw its outline as a closed polygon",
        ));
    }
    // Everything is moved to the local origin first, so that unions and areas of a plan in
    // UTM coordinates keep their precision.
    let bbox = bounds(plan.walkable.iter().map(|a| &a.polygon));
    let origin = [(bbox.0 - MARGIN_M).floor(), (bbox.1 - MARGIN_M).floor()];
    let local = |p: &Polygon<f64>| {
        use geo::Translate;
        p.translate(-origin[0], -origin[1])
    };
    let mut walkable = MultiPolygon::new(Vec::new());
    for a in &plan.walkable {
        walkable = walkable.union(&local(&a.polygon));
    }
    for o in &plan.obstacles {
        walkable = walkable.difference(&local(&o.polygon));
    }
    let walkable_area = walkable.unsigned_area();
    if walkable.0.is_empty() || walkable_area <= 0.0 {
        return Err(Error::invalid(
            file,
            "(walkable area)",
            "the obstacles cover the whole walkable area: nothing is left to walk on",
        ));
    }
    // Exits must reach the walkable area; distributions must lie in it.
    for exit in &plan.exits {
        let inside = walkable.intersection(&MultiPolygon::new(vec![local(&exit.polygon)]));
        if inside.unsigned_area() <= 0.0 {
            return Err(Error::invalid(
                &exit.file,
                &exit.at,
                format!(
                    "{}: the exit lies outside the walkable area: move it onto the floor (an \
                     exit is an area walkers step into, drawn inside the walkable outline)",
                    exit.name
                ),
            ));
        }
    }
    let mut details = Vec::new();
    for d in &plan.distributions {
        let poly = MultiPolygon::new(vec![local(&d.area.polygon)]);
        let own = poly.unsigned_area();
        let outside = poly.difference(&walkable).unsigned_area();
        if outside > 1e-9 * own.max(1.0) {
            return Err(Error::invalid(
                &d.area.file,
                &d.area.at,
                format!(
                    "{}: the distribution lies in a wall or outside the walkable area ({} m² of \
                     its {} m²): draw it on the open floor",
                    d.area.name,
                    round3(outside),
                    round3(own)
                ),
            ));
        }
        let (persons, count_from) = match (d.count, options.density) {
            (Some(n), _) => (n, "the plan".to_string()),
            (None, Some(rho)) => (
                (rho * own).floor() as usize,
                format!("density {} persons/m²", num(rho)),
            ),
            (None, None) => {
                return Err(Error::invalid(
                    &d.area.file,
                    &d.area.at,
                    format!(
                        "{}: the distribution gives no number of walkers: give one in the plan \
                         (DXF: a jps-parameters text \"number=20\" inside it; WKT/GeoJSON: a \
                         \"number\" property or map_from_wkt's counts) or a density for every \
                         distribution without one (ImportOptions.density)",
                        d.area.name
                    ),
                ));
            }
        };
        details.push(DistributionSummary {
            name: d.area.name.clone(),
            area: own,
            persons,
            count_from,
        });
    }
    let width = bbox.2 - origin[0] + MARGIN_M;
    let height = bbox.3 - origin[1] + MARGIN_M;
    let (cell_size, reason) = choose_cell_size(width, height, options.cell_size)?;
    let cols = (width / cell_size).ceil() as usize;
    let rows = (height / cell_size).ceil() as usize;

    // Obstacles: the whole grid blocked, then each polygon cleared and its holes blocked again;
    // larger outlines first, so an island inside another polygon's hole is cleared after it.
    let mut polygons: Vec<&Polygon<f64>> = walkable.0.iter().collect();
    polygons.sort_by(|a, b| {
        let area = |p: &Polygon<f64>| Polygon::new(p.exterior().clone(), vec![]).unsigned_area();
        area(b).total_cmp(&area(a))
    });
    let mut shapes = vec![LayerShape {
        rect: Some(Rect {
            min: [0.0, 0.0],
            max: [cols as f64 * cell_size, rows as f64 * cell_size],
        }),
        value: 1.0,
        ..LayerShape::default()
    }];
    let mut holes = 0;
    for p in &polygons {
        shapes.push(ring_shape(p.exterior(), 0.0));
        for hole in p.interiors() {
            holes += 1;
            shapes.push(ring_shape(hole, 1.0));
        }
    }
    let goals: Vec<GoalSpec> = plan
        .exits
        .iter()
        .map(|e| GoalSpec {
            polygon: Some(polygon_spec(&local(&e.polygon))),
            name: Some(e.name.clone()),
            ..GoalSpec::default()
        })
        .collect();
    let mut groups: Vec<GroupSpec> = Vec::new();
    for (d, s) in plan.distributions.iter().zip(&details) {
        let radius = d.radius.unwrap_or(DEFAULT_RADIUS);
        let spawn = SpawnSpec {
            polygon: Some(polygon_spec(&local(&d.area.polygon))),
            name: Some(d.area.name.clone()),
            count: Some(s.persons),
            ..SpawnSpec::default()
        };
        match groups.iter_mut().find(|g| g.radius == radius) {
            Some(g) => g.spawns.push(spawn),
            None => groups.push(GroupSpec {
                name: String::new(),
                color: None,
                goals: goals.clone(),
                spawns: vec![spawn],
                speed: SpeedRange::default(),
                radius,
                boids: None,
                orca: None,
                route: Vec::new(),
                exit_shares: None,
            }),
        }
    }
    if groups.is_empty() && !goals.is_empty() {
        groups.push(GroupSpec {
            name: String::new(),
            color: None,
            goals: goals.clone(),
            spawns: Vec::new(),
            speed: SpeedRange::default(),
            radius: DEFAULT_RADIUS,
            boids: None,
            orca: None,
            route: Vec::new(),
            exit_shares: None,
        });
    }
    let many = groups.len() > 1;
    for g in &mut groups {
        g.name = if many {
            format!("walkers r={} m", num(g.radius))
        } else {
            "walkers".into()
        };
    }
    let name = options.name.clone().unwrap_or_else(|| stem(file));
    let map = MapFile {
        version: FORMAT_VERSION,
        name,
        grid: GridSpec {
            cols,
            rows,
            cell_size,
            origin: Some(origin),
        },
        layers: Layers {
            obstacles: Some(Layer { raster: None, shapes }),
            ..Layers::default()
        },
        groups,
        model: None,
        params: None,
        walls: None,
        events: Vec::new(),
        regions: Vec::new(),
        movers: Vec::new(),
    };
    let summary = ImportSummary {
        files: vec![file.to_string()],
        units: plan.units.clone(),
        origin,
        walkable_area,
        walkable_polygons: polygons.len(),
        holes,
        exits: plan.exits.len(),
        exit_names: plan.exits.iter().map(|e| e.name.clone()).collect(),
        doors: plan.doors,
        distributions: details.len(),
        persons: details.iter().map(|d| d.persons).sum(),
        distribution_details: details,
        waypoints: plan.waypoints,
        journeys: plan.journeys,
        cell_size,
        cell_size_reason: reason,
        cols,
        rows,
    };
    Ok(Imported {
        map,
        walls: None,
        summary,
    })
}

/// An image plan's map: its walls raster resampled to the grid.
fn import_raster(plan: &Plan, options: &ImportOptions) -> Result<Imported> {
    let (pixels, pixel_size) = plan.walls.as_ref().expect("an image plan");
    let (prows, pcols) = pixels.dim();
    let width = pcols as f64 * pixel_size;
    let height = prows as f64 * pixel_size;
    let (cell_size, reason) = choose_cell_size(width, height, options.cell_size)?;
    let walls = from_image::resample(pixels.view(), *pixel_size, cell_size);
    let (rows, cols) = walls.dim();
    let free = walls.iter().filter(|&&w| !w).count();
    let name = options.name.clone().unwrap_or_else(|| stem(&plan.file));
    let map = MapFile {
        version: FORMAT_VERSION,
        name,
        grid: GridSpec {
            cols,
            rows,
            cell_size,
            origin: None,
        },
        layers: Layers {
            obstacles: Some(Layer {
                raster: Some(crate::map::Raster {
                    file: "walls.png".into(),
                    range: None,
                }),
                shapes: Vec::new(),
            }),
            ..Layers::default()
        },
        groups: Vec::new(),
        model: None,
        params: None,
        walls: None,
        events: Vec::new(),
        regions: Vec::new(),
        movers: Vec::new(),
    };
    let summary = ImportSummary {
        files: vec![plan.file.clone()],
        units: plan.units.clone(),
        origin: [0.0, 0.0],
        walkable_area: free as f64 * cell_size * cell_size,
        walkable_polygons: 0,
        holes: 0,
        exits: 0,
        exit_names: Vec::new(),
        doors: 0,
        distributions: 0,
        distribution_details: Vec::new(),
        persons: 0,
        waypoints: 0,
        journeys: 0,
        cell_size,
        cell_size_reason: reason,
        cols,
        rows,
    };
    Ok(Imported {
        map,
        walls: Some(walls),
        summary,
    })
}

/// The cell size for a `width` x `height` m grid and the reason for it, or an error when the
/// asked-for size makes the grid too large.
fn choose_cell_size(width: f64, height: f64, asked: Option<f64>) -> Result<(f64, String)> {
    if width.max(height) > MAX_GRID_EXTENT {
        return Err(Error::invalid(
            OPTIONS,
            "(plan)",
            format!(
                "the plan is {} m x {} m with its margin: a map is at most {} m a side; import \
                 a part of it",
                round3(width),
                round3(height),
                num(MAX_GRID_EXTENT)
            ),
        ));
    }
    let cells = |cs: f64| {
        let (c, r) = ((width / cs).ceil() as usize, (height / cs).ceil() as usize);
        (c.saturating_mul(r), c.max(r))
    };
    if let Some(cs) = asked {
        let (n, side) = cells(cs);
        if n > MAX_CELLS || side > MAX_GRID_SIDE {
            return Err(Error::invalid(
                OPTIONS,
                "ImportOptions.cell_size",
                format!(
                    "{} m gives {n} cells ({side} a side): a map has at most {MAX_CELLS} cells and \
                     {MAX_GRID_SIDE} a side; choose a larger cell size",
                    num(cs)
                ),
            ));
        }
        return Ok((cs, "as asked".into()));
    }
    let mut cs = DEFAULT_CELL_SIZE;
    while cells(cs).0 > DEFAULT_CELL_CAP {
        cs *= 2.0;
    }
    let reason = if cs == DEFAULT_CELL_SIZE {
        format!(
            "the default for pedestrian maps ({} m: a person is 2 cells wide)",
            num(DEFAULT_CELL_SIZE)
        )
    } else {
        format!(
            "{} m would need {} cells, more than the {DEFAULT_CELL_CAP} an imported map gets by \
             default (give --cell-size for another)",
            num(DEFAULT_CELL_SIZE),
            cells(DEFAULT_CELL_SIZE).0
        )
    };
    Ok((cs, reason))
}

/// The bounding box `(min x, min y, max x, max y)` of polygons.
fn bounds<'a>(polygons: impl Iterator<Item = &'a Polygon<f64>>) -> (f64, f64, f64, f64) {
    let mut b = (f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY);
    for p in polygons {
        if let Some(r) = p.bounding_rect() {
            b = (
                b.0.min(r.min().x),
                b.1.min(r.min().y),
                b.2.max(r.max().x),
                b.3.max(r.max().y),
            );
        }
    }
    b
}

/// A coordinate as the map writes it: rounded to a micrometre.
fn micro(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

fn round3(v: f64) -> f64 {
    (v * 1e3).round() / 1e3
}

/// A ring as a map polygon (without its closing point).
fn polygon_spec(p: &Polygon<f64>) -> crate::map::Polygon {
    ring_points(p.exterior())
}

fn ring_points(ring: &geo::LineString<f64>) -> crate::map::Polygon {
    let mut points: Vec<[f64; 2]> = ring.coords().map(|c| [micro(c.x), micro(c.y)]).collect();
    if points.len() > 1 && points.first() == points.last() {
        points.pop();
    }
    crate::map::Polygon { points }
}

fn ring_shape(ring: &geo::LineString<f64>, value: f64) -> LayerShape {
    LayerShape {
        polygon: Some(ring_points(ring)),
        value,
        ..LayerShape::default()
    }
}

/// The file name without folder and extension.
fn stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map_or_else(|| "plan".into(), |s| s.to_string_lossy().into_owned())
}

/// The layer roles a plan's parts can have, by JuPedSim's layer names less `jps-`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The walkable area.
    Walkable,
    /// Obstacles.
    Obstacles,
    /// Exits.
    Exits,
    /// Distributions.
    Distributions,
    /// Texts with `number=`, `radius=` for the distributions they lie in.
    Parameters,
    /// Waypoints.
    Waypoints,
    /// Journeys.
    Journeys,
    /// Doors (transitions).
    Doors,
}

impl Role {
    /// Every role with its names (lower case, without `jps-`).
    pub const NAMES: &[(Role, &[&str])] = &[
        (
            Role::Walkable,
            &["walkablearea", "walkable", "walkable_area", "walkable-area"],
        ),
        (Role::Obstacles, &["obstacles", "obstacle"]),
        (Role::Exits, &["exits", "exit"]),
        (Role::Distributions, &["distributions", "distribution"]),
        (Role::Parameters, &["parameters", "parameter"]),
        (Role::Waypoints, &["waypoints", "waypoint"]),
        (Role::Journeys, &["journeys", "journey"]),
        (Role::Doors, &["doors", "door", "transitions"]),
    ];

    /// The role of a layer or property name: JuPedSim's names with or without `jps-`, any case.
    pub fn of_name(name: &str) -> Option<Role> {
        let lower = name.trim().to_ascii_lowercase();
        let bare = lower.strip_prefix("jps-").unwrap_or(&lower);
        Role::NAMES
            .iter()
            .find(|(_, names)| names.contains(&bare))
            .map(|(r, _)| *r)
    }

    /// The role's key in `--layer walkable=NAME,...`.
    pub fn key(self) -> &'static str {
        Role::NAMES
            .iter()
            .find(|(r, _)| *r == self)
            .map_or("", |(_, names)| names[0])
    }
}

/// Reads `number=20`, `radius=0.3` (either order, separated by spaces, commas, semicolons or
/// new lines) from a parameters text.
pub fn parse_parameters(text: &str) -> (Option<usize>, Option<f64>) {
    let mut number = None;
    let mut radius = None;
    // MTEXT new paragraphs are `\P`.
    let text = text.replace("\\P", "\n");
    for part in text.split(|c: char| c.is_whitespace() || c == ',' || c == ';') {
        if let Some((key, value)) = part.split_once('=') {
            match key.trim().to_ascii_lowercase().as_str() {
                "number" | "count" => number = value.trim().parse().ok().or(number),
                "radius" => radius = value.trim().parse().ok().or(radius),
                _ => {}
            }
        }
    }
    (number, radius)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_read_jupedsim_names_in_any_case() {
        assert_eq!(Role::of_name("jps-walkablearea"), Some(Role::Walkable));
        assert_eq!(Role::of_name("JPS-Exits"), Some(Role::Exits));
        assert_eq!(Role::of_name("distributions"), Some(Role::Distributions));
        assert_eq!(Role::of_name("walls"), None);
    }

    #[test]
    fn parameters_read_number_and_radius() {
        assert_eq!(parse_parameters("number=20"), (Some(20), None));
        assert_eq!(parse_parameters("radius=0.3\\Pnumber=5"), (Some(5), Some(0.3)));
        assert_eq!(parse_parameters("hello"), (None, None));
    }

    #[test]
    fn the_default_cell_size_doubles_past_the_cap() {
        assert_eq!(choose_cell_size(100.0, 100.0, None).unwrap().0, 0.25);
        // 2000 m x 2000 m: 64e6 cells at 0.25 m, 16e6 at 0.5 m.
        assert_eq!(choose_cell_size(2000.0, 2000.0, None).unwrap().0, 0.5);
        assert!(choose_cell_size(2000.0, 2000.0, Some(0.01)).is_err());
    }
}
