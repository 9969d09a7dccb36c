//! The verification scenes as ordinary map files ([`MapFile`]): corridors, rooms, corners and
//! doors built from rectangles, so each can be saved, opened in the editor and run with
//! `simulate` like any other map.

use crate::map::FORMAT_VERSION;
use crate::map::format::DEFAULT_RADIUS;
use crate::map::{
    GoalSpec, GridSpec, GroupSpec, Layer, LayerShape, Layers, MapFile, Premovement, Rect, SpawnSpec,
    SpeedRange,
};
use crate::params::{Model, Params};

/// An axis-aligned rectangle from `(x0, y0)` to `(x1, y1)`, metres.
pub fn rect(x0: f64, y0: f64, x1: f64, y1: f64) -> Rect {
    Rect {
        min: [x0, y0],
        max: [x1, y1],
    }
}

/// A map under construction: a grid, obstacle rectangles (painted in order, a value 0 clears)
/// and groups.
#[derive(Clone, Debug)]
pub struct SceneBuilder {
    map: MapFile,
}

impl SceneBuilder {
    /// An empty map `width` x `height` metres of cells of `cell` metres, named `name`.
    pub fn new(name: &str, width: f64, height: f64, cell: f64) -> Self {
        Self {
            map: MapFile {
                version: FORMAT_VERSION,
                name: name.to_string(),
                grid: GridSpec {
                    cols: (width / cell).round() as usize,
                    rows: (height / cell).round() as usize,
                    cell_size: cell,
                    origin: None,
                },
                layers: Layers::default(),
                groups: Vec::new(),
                params: None,
                model: None,
                walls: None,
                events: Vec::new(),
                regions: Vec::new(),
                movers: Vec::new(),
            },
        }
    }

    fn obstacles(&mut self) -> &mut Vec<LayerShape> {
        &mut self
            .map
            .layers
            .obstacles
            .get_or_insert_with(Layer::default)
            .shapes
    }

    /// Blocks a rectangle.
    pub fn wall(mut self, r: Rect) -> Self {
        self.obstacles().push(LayerShape {
            rect: Some(r),
            value: 1.0,
            ..Default::default()
        });
        self
    }

    /// Clears a rectangle of earlier walls (a door).
    pub fn opening(mut self, r: Rect) -> Self {
        self.obstacles().push(LayerShape {
            rect: Some(r),
            value: 0.0,
            ..Default::default()
        });
        self
    }

    /// Adds a group walking to `goals` (name, rectangle, width of the opening) from `spawns`.
    pub fn group(mut self, group: GroupSpec) -> Self {
        self.map.groups.push(group);
        self
    }

    /// Sets the map's `params` block (none: the model's defaults).
    pub fn params(mut self, params: Option<Params>) -> Self {
        self.map.params = params;
        self
    }

    /// Sets the map's `model` (none: the model a map without it runs, see
    /// [`Params::for_map`]).
    pub fn model(mut self, model: Option<Model>) -> Self {
        self.map.model = model;
        self
    }

    /// The map.
    pub fn build(self) -> MapFile {
        self.map
    }
}

/// A group named `name` at one speed (`speed` m/s) with the default body radius.
pub fn group(name: &str, speed: f64) -> GroupSpec {
    GroupSpec {
        name: name.to_string(),
        color: None,
        goals: Vec::new(),
        spawns: Vec::new(),
        speed: SpeedRange {
            min: speed,
            max: speed,
            ..Default::default()
        },
        radius: DEFAULT_RADIUS,
        boids: None,
        orca: None,
        route: Vec::new(),
        exit_shares: None,
    }
}

/// A goal area named `name` covering `r`, an opening `width` metres wide.
pub fn goal(name: &str, r: Rect, width: f64) -> GoalSpec {
    GoalSpec {
        rect: Some(r),
        name: Some(name.to_string()),
        width: Some(width),
        ..Default::default()
    }
}

/// A spawn area covering `r` with `count` walkers.
pub fn spawn(name: &str, r: Rect, count: usize) -> SpawnSpec {
    SpawnSpec {
        rect: Some(r),
        name: Some(name.to_string()),
        count: Some(count),
        ..Default::default()
    }
}

/// A spawn area with a pre-movement time uniform in `[min, max]` seconds.
pub fn spawn_waiting(name: &str, r: Rect, count: usize, min: f64, max: f64) -> SpawnSpec {
    SpawnSpec {
        premovement: Some(Premovement { min, max }),
        ..spawn(name, r, count)
    }
}
