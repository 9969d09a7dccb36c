//! The serde types of the JSON map format (version 1), as written on disk.
//!
//! These types mirror the file one to one (`#[serde(deny_unknown_fields)]` everywhere), so the
//! editor can load a [`MapFile`], change it and [`MapFile::save`] it without losing anything.
//! Nothing here is checked beyond JSON types: [`crate::map::compile`] checks ranges and
//! rasterises the map into a [`crate::scene::Scene`]. `maps/map.schema.json` describes the same
//! format as a JSON Schema.
//!
//! A shape is an object with exactly one of the keys `rect`, `circle` or `polygon`, beside the
//! keys of its context (`value`/`op` in a layer, `name`/`width` for a goal, `name`/`count` for a
//! spawn area), for example `{"rect": {"min": [0, 0], "max": [2, 1]}, "value": 1}`.

use crate::error::Result;
use crate::params::{BoidsParams, Model, OrcaParams, Params};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The map format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// A whole map file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapFile {
    /// Format version; must be [`FORMAT_VERSION`].
    pub version: u32,
    /// Map name, shown in reports.
    pub name: String,
    /// The grid every layer is rasterised on.
    pub grid: GridSpec,
    /// Terrain height, obstacles and discomfort. All flat, free and zero when absent.
    #[serde(default, skip_serializing_if = "Layers::is_empty")]
    pub layers: Layers,
    /// The groups of walkers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupSpec>,
    /// Which model moves the walkers. Absent: [`Model::Pedestrian`] for a map without
    /// `params`, [`Model::ContinuumCrowds`] for one with them ([`Params::for_map`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Model>,
    /// Model parameters; every field has a default (see [`Params`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Params>,
    /// What the walkers' bodies meet (default [`Walls::Cells`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walls: Option<Walls>,
    /// Exits that open or close at given times, naming goals by their `name`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventSpec>,
    /// Regions that scale the walking speed or add discomfort ([`RegionSpec`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<RegionSpec>,
    /// Obstacles that move along a path (vehicles, doors that slide).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub movers: Vec<MoverSpec>,
}

/// What the walkers' bodies meet: the obstacle cells, or the walls as drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Walls {
    /// The obstacle cells: a door is as wide as the cells its shape covers (default).
    #[default]
    Cells,
    /// The walls as drawn (the obstacle shapes combined in order, [`crate::scene::Outline`]):
    /// with the pedestrian model, bodies meet their exact edges, a goal that reaches the map's
    /// edge is an opening there that walkers leave through, and a goal inside the map counts a
    /// walker when its centre enters the goal's area. The fields stay on the cells. With an
    /// obstacle raster the walls are the edges of its cells.
    Exact,
}

impl Walls {
    /// In words, as `simulate` and the report page say it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Cells => "cells (the obstacle cells' edges)",
            Self::Exact => "exact (the walls as drawn)",
        }
    }
}

/// An exit opening or closing at a time: `{"at": 15, "close": "east exit"}` or
/// `{"at": 5, "open": "west exit"}` (exactly one of `open` and `close`). Every goal of that
/// name, in every group, opens or closes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    /// Simulated time, seconds (at least 0): the event applies at the start of the first step
    /// that begins at or after it.
    pub at: f64,
    /// The name of the goal(s) that open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<String>,
    /// The name of the goal(s) that close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close: Option<String>,
    /// The name of the waiting area(s) released (`{"at": 30, "release": "platform"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    /// The name of the region changed, with `speed_factor` and/or `discomfort`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// The region's new speed factor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_factor: Option<f64>,
    /// The region's new discomfort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discomfort: Option<f64>,
}

/// Size and resolution of the grid. The origin is the lower-left corner (see [`crate::grid`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    /// Number of columns (cells along x).
    pub cols: usize,
    /// Number of rows (cells along y).
    pub rows: usize,
    /// Edge length of a square cell, metres.
    pub cell_size: f64,
    /// Where the grid's lower-left corner lies in the coordinates of the plan the map was
    /// imported from (`[x, y]`, metres; e.g. UTM eastings and northings): a point `(x, y)` of the
    /// map is `(origin[0] + x, origin[1] + y)` in the plan. Informational: the map's own
    /// coordinates are unchanged by it. Absent for a map drawn in its own coordinates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<[f64; 2]>,
}

/// The three layers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layers {
    /// Terrain height, metres (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<Layer>,
    /// Impassable cells (default none). A cell is blocked where the layer's value is nonzero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obstacles: Option<Layer>,
    /// Discomfort g >= 0, dimensionless (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discomfort: Option<Layer>,
}

impl Layers {
    /// True when no layer is given.
    pub fn is_empty(&self) -> bool {
        self.height.is_none() && self.obstacles.is_none() && self.discomfort.is_none()
    }
}

/// One layer: an optional raster, then shapes applied in order on top of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// Initial values from an image or array file (default: all zero).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raster: Option<Raster>,
    /// Shapes painted over the raster, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shapes: Vec<LayerShape>,
}

/// A raster layer file, resolved relative to the map file.
///
/// - `.png`: greyscale (colour images are converted to luma). Pixel value p in `0..=255`
///   (`0..=65535` for 16-bit images) maps linearly to `range[0] + (range[1] - range[0]) * p / 255`.
///   The image must be `cols` pixels wide and `rows` high. **Image row 0 is the top of the picture,
///   i.e. the highest y** (grid row `rows - 1`), so the picture looks like the map seen from above
///   with north up. For obstacles a cell is blocked where the mapped value is >= 0.5, so with the
///   default range `[0, 1]` bright pixels are walls; use `[1, 0]` for dark walls on white.
/// - `.npy`: a 2-D array of shape `(rows, cols)` (float, integer or bool), **row 0 = y row 0**
///   (the bottom, as in every `.npy` export). Values are used as they are; for obstacles a cell is
///   blocked where the value is nonzero. `range` is not allowed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raster {
    /// Path of the `.png` or `.npy` file, relative to the map file.
    pub file: String,
    /// PNG only: the values that black and white map to (default `[0, 1]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
}

/// How a layer shape combines with what is already in the layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShapeOp {
    /// Replace the value (default).
    #[default]
    Set,
    /// Add to the value (height and discomfort only): stack hills.
    Add,
    /// Keep the larger value (height and discomfort only).
    Max,
}

impl ShapeOp {
    fn is_set(&self) -> bool {
        *self == ShapeOp::Set
    }
}

/// How a circle's value falls off from its centre (height and discomfort layers only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// `value` everywhere inside (default).
    #[default]
    Flat,
    /// `value * (1 - d/r)`: a cone, constant slope `value / r`.
    Cone,
    /// `value * (1 + cos(pi d/r)) / 2`: a smooth hill, flat at the top and at the rim,
    /// steepest slope `value * pi / (2 r)` half-way out.
    Dome,
}

impl Profile {
    /// The factor applied to the shape's value at distance fraction `t = d / r` in `[0, 1]`.
    pub fn factor(self, t: f64) -> f64 {
        let t = t.clamp(0.0, 1.0);
        match self {
            Profile::Flat => 1.0,
            Profile::Cone => 1.0 - t,
            Profile::Dome => 0.5 * (1.0 + (std::f64::consts::PI * t).cos()),
        }
    }
}

/// An axis-aligned rectangle, metres. Covers the cells whose centre `(x, y)` has
/// `min[0] <= x < max[0]` and `min[1] <= y < max[1]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rect {
    /// Lower-left corner `[x, y]`.
    pub min: [f64; 2],
    /// Upper-right corner `[x, y]`.
    pub max: [f64; 2],
}

/// A disc, metres. Covers the cells whose centre is at distance <= `radius` from `center`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Circle {
    /// Centre `[x, y]`.
    pub center: [f64; 2],
    /// Radius, metres.
    pub radius: f64,
    /// Fall-off of the value (height and discomfort layers only; default flat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
}

/// A simple polygon, metres. Covers the cells whose centre is inside (even-odd rule).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Polygon {
    /// Vertices `[x, y]`, at least three, in either winding order; the last joins the first.
    pub points: Vec<[f64; 2]>,
}

/// The geometry of a shape, borrowed from one of the context types below.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShapeRef<'a> {
    /// A rectangle.
    Rect(&'a Rect),
    /// A disc.
    Circle(&'a Circle),
    /// A polygon.
    Polygon(&'a Polygon),
}

/// An owned geometry, to set on a shape with [`Shaped::set_shape`].
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A rectangle.
    Rect(Rect),
    /// A disc.
    Circle(Circle),
    /// A polygon.
    Polygon(Polygon),
}

/// Types that carry one shape as the optional keys `rect`, `circle`, `polygon`.
pub trait Shaped {
    /// The shape, or `Err(n)` with the number of shape keys present when it is not exactly one.
    fn shape(&self) -> Result<ShapeRef<'_>, usize>;
    /// Replaces the shape.
    fn set_shape(&mut self, shape: Shape);
}

macro_rules! impl_shaped {
    ($t:ty) => {
        impl Shaped for $t {
            fn shape(&self) -> Result<ShapeRef<'_>, usize> {
                match (&self.rect, &self.circle, &self.polygon) {
                    (Some(r), None, None) => Ok(ShapeRef::Rect(r)),
                    (None, Some(c), None) => Ok(ShapeRef::Circle(c)),
                    (None, None, Some(p)) => Ok(ShapeRef::Polygon(p)),
                    (r, c, p) => Err(r.is_some() as usize + c.is_some() as usize + p.is_some() as usize),
                }
            }

            fn set_shape(&mut self, shape: Shape) {
                self.rect = None;
                self.circle = None;
                self.polygon = None;
                match shape {
                    Shape::Rect(r) => self.rect = Some(r),
                    Shape::Circle(c) => self.circle = Some(c),
                    Shape::Polygon(p) => self.polygon = Some(p),
                }
            }
        }
    };
}

/// A shape painted into a layer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerShape {
    /// A rectangle (exactly one of `rect`, `circle`, `polygon`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
    /// A disc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circle: Option<Circle>,
    /// A polygon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polygon: Option<Polygon>,
    /// The value painted (height in metres, discomfort; for obstacles nonzero blocks and 0
    /// clears, e.g. to cut a door into a wall). Default 1.
    #[serde(default = "one")]
    pub value: f64,
    /// How the value combines with the layer (default `set`; `add`/`max` for height and
    /// discomfort only).
    #[serde(default, skip_serializing_if = "ShapeOp::is_set")]
    pub op: ShapeOp,
}

fn one() -> f64 {
    1.0
}

/// A goal area (an exit) of a group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoalSpec {
    /// A rectangle (exactly one of `rect`, `circle`, `polygon`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
    /// A disc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circle: Option<Circle>,
    /// A polygon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polygon: Option<Polygon>,
    /// Name shown in reports (default "`<group> goal <i>`").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Width of the opening, metres (default: the longer side of the shape's bounding box).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<f64>,
    /// Closed at the start (default false): not a goal, and no one leaves through it, until
    /// an event opens it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub closed: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A spawn area and how many walkers start in it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpawnSpec {
    /// A rectangle (exactly one of `rect`, `circle`, `polygon`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
    /// A disc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circle: Option<Circle>,
    /// A polygon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polygon: Option<Polygon>,
    /// Name shown in reports (default "`<group> spawn <i>`").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Number of walkers placed at the start; at most the number of free cells in the area.
    /// Required, except for a source (`rate` or `times`), which leaves it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// Pre-movement time (the time from the alarm to the first step, RiMEA's "reaction
    /// time"): each walker of the area waits a time drawn uniformly in `[min, max]` seconds
    /// before it walks, standing where it was placed (it counts in the density and others
    /// walk around it). Default: none, every walker starts at `t = 0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub premovement: Option<Premovement>,
    /// A source instead of a count: persons per second arriving in the area over
    /// `[from, until)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Start of a source's period, seconds (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<f64>,
    /// End of a source's period, seconds (required with `rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<f64>,
    /// How a source's walkers are spaced: `"even"` (default) or `"poisson"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<crate::schedule::ArrivalPattern>,
    /// A source instead of a count: one walker at each of these times, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<Vec<f64>>,
}

/// A spawn area's source keys as one value (`rate`, `from`, `until`, `arrivals`, `times`), for
/// a program that keeps them apart from the area's shape and count (the editor).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceKeys {
    /// Persons per second.
    pub rate: Option<f64>,
    /// Start of the period, seconds.
    pub from: Option<f64>,
    /// End of the period, seconds.
    pub until: Option<f64>,
    /// Even or Poisson.
    pub arrivals: Option<crate::schedule::ArrivalPattern>,
    /// Listed times, seconds.
    pub times: Option<Vec<f64>>,
}

impl SourceKeys {
    /// The times these keys give, as the map's check reads them (`None` without `rate` or
    /// `times`; not checked: [`crate::map::compile`] checks a map's).
    pub fn times(&self) -> Option<crate::schedule::SourceTimes> {
        use crate::schedule::SourceTimes;
        match (self.rate, &self.times) {
            (Some(rate), _) => Some(SourceTimes::Rate {
                rate,
                from: self.from.unwrap_or(0.0),
                until: self.until.unwrap_or(0.0),
                pattern: self.arrivals.unwrap_or_default(),
            }),
            (None, Some(times)) => {
                let mut times = times.clone();
                times.sort_by(f64::total_cmp);
                Some(SourceTimes::Listed(times))
            }
            (None, None) => None,
        }
    }
}

impl SpawnSpec {
    /// The area's source keys, `None` for an area that places a count at the start.
    pub fn source_keys(&self) -> Option<SourceKeys> {
        (self.rate.is_some() || self.times.is_some()).then(|| SourceKeys {
            rate: self.rate,
            from: self.from,
            until: self.until,
            arrivals: self.arrivals,
            times: self.times.clone(),
        })
    }

    /// Sets (or with `None` clears) the area's source keys.
    pub fn set_source_keys(&mut self, keys: Option<SourceKeys>) {
        let k = keys.unwrap_or_default();
        (self.rate, self.from, self.until, self.arrivals, self.times) =
            (k.rate, k.from, k.until, k.arrivals, k.times);
    }
}

/// A pre-movement time range, seconds, drawn uniformly per walker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Premovement {
    /// Shortest wait, s (at least 0).
    pub min: f64,
    /// Longest wait, s (at least `min`).
    pub max: f64,
}

impl_shaped!(LayerShape);
impl_shaped!(GoalSpec);
impl_shaped!(SpawnSpec);
impl_shaped!(StageArea);
impl_shaped!(RegionSpec);

/// One stage of a group's route: exactly one of `waypoint` (passed through) and `wait` (a
/// waiting area), e.g. `{"waypoint": {"rect": ...}}` or
/// `{"wait": {"rect": ..., "name": "platform", "seconds": 10, "until": "released"}}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageSpec {
    /// A waypoint: reached when a walker's centre stands in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waypoint: Option<StageArea>,
    /// A waiting area: walkers stand in it for `seconds` and, with `until`, until released.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<StageArea>,
}

/// A stage's area: a shape (at most one of `rect`, `circle`, `polygon`) with an optional name,
/// or a `name` alone, which stands for the stage of that name given with its shape elsewhere
/// in the map (in any group's route).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageArea {
    /// A rectangle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
    /// A disc (a point with a radius).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circle: Option<Circle>,
    /// A polygon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polygon: Option<Polygon>,
    /// Name (events and the API release a waiting area by it; default "`<group> stage <k>`").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A waiting area's time, seconds (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// A waiting area that holds its walkers until released.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<WaitUntil>,
}

/// A group's `route` and `exit_shares` as one value, for a front end that keeps them as the
/// map gives them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RouteKeys {
    /// The route's stages.
    pub route: Vec<StageSpec>,
    /// The exit shares by goal name.
    pub exit_shares: Option<std::collections::BTreeMap<String, f64>>,
}

impl GroupSpec {
    /// The group's `route` and `exit_shares`.
    pub fn route_keys(&self) -> RouteKeys {
        RouteKeys {
            route: self.route.clone(),
            exit_shares: self.exit_shares.clone(),
        }
    }
}

/// What a waiting area waits for besides its seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitUntil {
    /// A release: the map's `{"at": t, "release": name}` or `Simulation::release`.
    Released,
}

/// A region that scales the walking speed inside it (`speed_factor`) and adds `discomfort` to
/// the unit cost, e.g. `{"name": "smoke", "rect": ..., "speed_factor": 0.5}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSpec {
    /// A rectangle (exactly one of `rect`, `circle`, `polygon`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
    /// A disc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circle: Option<Circle>,
    /// A polygon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polygon: Option<Polygon>,
    /// Name, for events and the API (default "`region <k>`").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Factor on the walking speed inside (default 1).
    #[serde(default = "one")]
    pub speed_factor: f64,
    /// Discomfort added inside (default 0).
    #[serde(default)]
    pub discomfort: f64,
}

impl_shaped!(MoverSpec);

/// An obstacle that moves: a shape (`rect` or `circle`, in metres around the mover's position,
/// turned by `angle` degrees) travelling `path` at `speed` m/s from time `from`, for example
/// `{"name": "tram", "rect": {"min": [-6, -1.2], "max": [6, 1.2]}, "path": [[-8, 10], [60, 10]],
/// "speed": 1.5, "from": 5}`. It stands at the first point until `from`, and at the last point
/// once there, unless `loop` sends it back to the first and round again. The potentials plan
/// around it and bodies it reaches are pushed aside.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoverSpec {
    /// Its name, shown in reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A rectangle around the mover's position (exactly one of `rect` and `circle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
    /// A disc (its `center` from the mover's position).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circle: Option<Circle>,
    /// Not a mover's shape (the key is read to say so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polygon: Option<Polygon>,
    /// Counter-clockwise turn of the shape about the mover's position, degrees (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub angle: Option<f64>,
    /// The points `[x, y]` it travels through, metres; one point: it stands there.
    #[serde(default)]
    pub path: Vec<[f64; 2]>,
    /// Metres per second along the path (required for a path of two points or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// When it sets off, seconds (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<f64>,
    /// Whether it goes on from the last point back to the first, round and round (default
    /// false).
    #[serde(default, rename = "loop", skip_serializing_if = "Option::is_none")]
    pub looped: Option<bool>,
}

/// Preferred walking speeds, m/s: uniform in `[min, max]` (`{"min": 1.2, "max": 1.5}`); normal
/// with `mean` and `sd`, truncated to `[min, max]` (`{"mean": 1.34, "sd": 0.26, "min": 0.6,
/// "max": 2.0}`); or a RiMEA population by name (`{"rimea": "adults"}`, see
/// [`crate::speeds::RimeaPopulation`]), which sets the range itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpeedRange {
    /// Slowest preferred speed, m/s. Default 1.34 (Weidmann's free speed).
    pub min: f64,
    /// Fastest preferred speed, m/s. Default 1.34.
    pub max: f64,
    /// Mean of a normal distribution, m/s (with `sd`; the draws are truncated to
    /// `[min, max]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// Standard deviation of the normal distribution, m/s (with `mean`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sd: Option<f64>,
    /// A RiMEA population by name: `"adults"` (RiMEA test 7's mix of ages) or one age group
    /// (`"20-29"` ... `"70-79"`); `min` and `max` are left out then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rimea: Option<String>,
}

impl Default for SpeedRange {
    fn default() -> Self {
        Self {
            min: DEFAULT_SPEED,
            max: DEFAULT_SPEED,
            mean: None,
            sd: None,
            rimea: None,
        }
    }
}

/// Default preferred walking speed, m/s: Weidmann's free-flow speed.
pub const DEFAULT_SPEED: f64 = 1.34;
/// Default body radius, m: a shoulder width of about half a metre.
pub const DEFAULT_RADIUS: f64 = 0.25;

fn default_radius() -> f64 {
    DEFAULT_RADIUS
}

/// One group of walkers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Display name.
    pub name: String,
    /// Display colour `"#rrggbb"` (default: from a fixed palette by group index).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// Goal areas (at least one, except for a flocking group: one with `boids`).
    pub goals: Vec<GoalSpec>,
    /// Spawn areas (may be empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spawns: Vec<SpawnSpec>,
    /// Preferred speeds (default 1.34 to 1.34 m/s).
    #[serde(default)]
    pub speed: SpeedRange,
    /// Body radius, metres (default 0.25).
    #[serde(default = "default_radius")]
    pub radius: f64,
    /// Boids behaviour, when the group flocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boids: Option<BoidsParams>,
    /// ORCA avoidance parameters (default [`OrcaParams::default`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orca: Option<OrcaParams>,
    /// The stages walked through, in order, before the exits (default none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub route: Vec<StageSpec>,
    /// The share of the group that takes each exit, by goal name (default: the quickest exit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_shares: Option<std::collections::BTreeMap<String, f64>>,
}

impl MapFile {
    /// Reads and parses a map file, reporting every JSON-type problem (malformed JSON with line
    /// and column, unknown fields, wrong types, each with its JSON path). Ranges are checked by
    /// [`crate::map::compile`], not here.
    pub fn from_path(path: &Path) -> Result<MapFile> {
        let text = super::read_map_text(path)?;
        Self::from_json(&text, &path.display().to_string())
    }

    /// Parses a map from JSON text; `file_label` names the source in error messages.
    pub fn from_json(text: &str, file_label: &str) -> Result<MapFile> {
        super::parse::parse_map(text, file_label).map_err(super::many)
    }

    /// The map as pretty-printed JSON (two-space indent, trailing newline).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("map types always serialise");
        s.push('\n');
        s
    }

    /// Writes the map as pretty JSON, atomically (see [`crate::io::write_atomic`]). Raster paths
    /// are written as they are: they stay relative to the map file's folder.
    pub fn save(&self, path: &Path) -> Result<()> {
        crate::io::write_bytes_atomic(path, self.to_json().as_bytes())
    }
}
