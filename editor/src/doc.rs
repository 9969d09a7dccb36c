//! The edited map: the saved state of the editor, kept apart from caches and background jobs.
//!
//! A [`Document`] holds the three layers as rasters on the grid (terrain height, obstacles,
//! discomfort), which the brushes paint, and the groups with their goal and spawn areas as
//! shapes (rectangles, discs, polygons in metres), as in the JSON map format. It compiles to a
//! [`Scene`] with [`Document::to_scene`] for the field pipeline and the simulation.

use crowdfield::grid::Grid;
use crowdfield::map::Premovement;
use crowdfield::map::format::{EventSpec, SourceKeys};
use crowdfield::params::{BoidsParams, Model, OrcaParams, Params};
use crowdfield::scene::{Area, Group, Scene, Spawn};
use crowdfield::schedule::{ExitEvent, Schedule, Source};
use ndarray::Array2;

/// Group colours given to new groups, by index (sRGB): distinct hues that read on the terrain.
pub const GROUP_PALETTE: [[u8; 3]; 8] = [
    [230, 85, 13],
    [49, 130, 189],
    [49, 163, 84],
    [117, 107, 177],
    [214, 39, 40],
    [140, 86, 75],
    [227, 119, 194],
    [23, 190, 207],
];

/// Default preferred walking speed of a new group, m/s: Weidmann's free-flow speed.
pub const DEFAULT_SPEED: f64 = 1.34;
/// Default body radius of a new group, m: a shoulder width of about half a metre.
pub const DEFAULT_RADIUS: f64 = 0.25;

/// The geometry of a goal or spawn area, metres (same conventions as the map format).
#[derive(Clone, Debug, PartialEq)]
pub enum AreaShape {
    /// Axis-aligned rectangle: covers cells whose centre has `min <= c < max` on both axes.
    Rect {
        /// Lower-left corner `[x, y]`.
        min: [f64; 2],
        /// Upper-right corner `[x, y]`.
        max: [f64; 2],
    },
    /// Disc: covers cells whose centre is within `radius` of `center`.
    Circle {
        /// Centre `[x, y]`.
        center: [f64; 2],
        /// Radius, metres.
        radius: f64,
    },
    /// Simple polygon: covers cells whose centre is inside (even-odd rule).
    Polygon {
        /// Vertices `[x, y]`; the last joins the first.
        points: Vec<[f64; 2]>,
    },
}

impl AreaShape {
    /// A rectangle from two opposite corners in any order.
    pub fn rect_from_corners(a: [f64; 2], b: [f64; 2]) -> Self {
        AreaShape::Rect {
            min: [a[0].min(b[0]), a[1].min(b[1])],
            max: [a[0].max(b[0]), a[1].max(b[1])],
        }
    }

    /// True when the point `(x, y)` (a cell centre) is covered.
    pub fn contains(&self, x: f64, y: f64) -> bool {
        match self {
            AreaShape::Rect { min, max } => x >= min[0] && x < max[0] && y >= min[1] && y < max[1],
            AreaShape::Circle { center, radius } => {
                (x - center[0]).powi(2) + (y - center[1]).powi(2) <= radius * radius
            }
            AreaShape::Polygon { points } => point_in_polygon(points, x, y),
        }
    }

    /// Bounding box `(min, max)`.
    pub fn bounds(&self) -> ([f64; 2], [f64; 2]) {
        match self {
            AreaShape::Rect { min, max } => (*min, *max),
            AreaShape::Circle { center, radius } => (
                [center[0] - radius, center[1] - radius],
                [center[0] + radius, center[1] + radius],
            ),
            AreaShape::Polygon { points } => {
                let mut lo = [f64::INFINITY; 2];
                let mut hi = [f64::NEG_INFINITY; 2];
                for p in points {
                    for k in 0..2 {
                        lo[k] = lo[k].min(p[k]);
                        hi[k] = hi[k].max(p[k]);
                    }
                }
                (lo, hi)
            }
        }
    }

    /// The cells whose centre the shape covers, as a mask of shape `(rows, cols)`.
    pub fn mask(&self, grid: &Grid) -> Array2<bool> {
        Array2::from_shape_fn(grid.shape(), |(r, c)| {
            let (x, y) = grid.cell_center(r, c);
            self.contains(x, y)
        })
    }

    /// The longer side of the bounding box, metres (the default opening width of a goal).
    pub fn longer_side(&self) -> f64 {
        let (lo, hi) = self.bounds();
        (hi[0] - lo[0]).max(hi[1] - lo[1])
    }
}

/// Even-odd point-in-polygon test.
pub fn point_in_polygon(points: &[[f64; 2]], x: f64, y: f64) -> bool {
    let mut inside = false;
    let n = points.len();
    if n < 3 {
        return false;
    }
    let mut j = n - 1;
    for i in 0..n {
        let (xi, yi) = (points[i][0], points[i][1]);
        let (xj, yj) = (points[j][0], points[j][1]);
        if (yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi {
            inside = !inside;
        }
        j = i;
    }
    inside
}

/// A goal area (an exit) of a group.
#[derive(Clone, Debug, PartialEq)]
pub struct GoalArea {
    /// Name shown in reports; `None` gives "`<group> goal <i>`".
    pub name: Option<String>,
    /// Where it is.
    pub shape: AreaShape,
    /// Opening width, metres; `None` gives the longer side of the bounding box.
    pub width: Option<f64>,
    /// Closed at the start (kept from the map file; an event opens it).
    pub closed: bool,
}

/// A spawn area and how many walkers start in it.
#[derive(Clone, Debug, PartialEq)]
pub struct SpawnArea {
    /// Name shown in reports; `None` gives "`<group> spawn <i>`".
    pub name: Option<String>,
    /// Where it is.
    pub shape: AreaShape,
    /// Number of walkers.
    pub count: usize,
    /// Pre-movement time range, seconds (kept from the map file; `None` starts everyone at once).
    pub premovement: Option<Premovement>,
    /// A source's keys (kept from the map file): walkers arrive over time instead of `count`.
    pub source: Option<SourceKeys>,
}

/// One group of walkers as edited.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupDoc {
    /// Display name.
    pub name: String,
    /// Display colour, sRGB.
    pub color: [u8; 3],
    /// Goal areas.
    pub goals: Vec<GoalArea>,
    /// Spawn areas.
    pub spawns: Vec<SpawnArea>,
    /// Slowest preferred speed, m/s.
    pub speed_min: f64,
    /// Fastest preferred speed, m/s.
    pub speed_max: f64,
    /// How the speeds are distributed in `[speed_min, speed_max]` (kept as loaded).
    pub speed_distribution: crowdfield::speeds::SpeedDistribution,
    /// Body radius, m.
    pub radius: f64,
    /// Boids behaviour, when the group flocks (kept as loaded).
    pub boids: Option<BoidsParams>,
    /// ORCA parameters as loaded (`None`: the defaults, not written back).
    pub orca: Option<OrcaParams>,
    /// The group's route and exit shares, kept as the map gives them.
    pub route: crowdfield::map::format::RouteKeys,
}

impl GroupDoc {
    /// A new group with no areas, the default speeds and radius and the palette colour of
    /// group number `index`.
    pub fn new(name: &str, index: usize) -> Self {
        Self {
            name: name.to_string(),
            color: GROUP_PALETTE[index % GROUP_PALETTE.len()],
            goals: Vec::new(),
            spawns: Vec::new(),
            speed_min: DEFAULT_SPEED,
            speed_max: DEFAULT_SPEED,
            speed_distribution: Default::default(),
            radius: DEFAULT_RADIUS,
            boids: None,
            orca: None,
            route: Default::default(),
        }
    }
}

/// The map being edited.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// Map name.
    pub name: String,
    /// The grid.
    pub grid: Grid,
    /// Terrain height, metres, shape `(rows, cols)`.
    pub height: Array2<f32>,
    /// Impassable cells.
    pub obstacle: Array2<bool>,
    /// Discomfort (>= 0).
    pub discomfort: Array2<f32>,
    /// The groups.
    pub groups: Vec<GroupDoc>,
    /// The map's `"model"` (`None`: not written back; see [`Params::for_map`]).
    pub model: Option<Model>,
    /// Model parameters (`None`: the defaults, not written back).
    pub params: Option<Params>,
    /// The map's `"walls"` (`None`: not written back). The editor's walls are cells, so exact
    /// walls are the edges of its obstacle cells.
    pub walls: Option<crowdfield::map::Walls>,
    /// Where the map's origin lies in the plan it was imported from (`grid.origin`), kept as
    /// the map gives it.
    pub origin: Option<[f64; 2]>,
    /// The map's exit events, kept as the map gives them.
    pub events: Vec<EventSpec>,
    /// The map's speed regions, kept as the map gives them.
    pub regions: Vec<crowdfield::map::format::RegionSpec>,
    /// The map's moving obstacles, kept as the map gives them.
    pub movers: Vec<crowdfield::map::MoverSpec>,
}

impl Document {
    /// A flat, empty map of `cols x rows` cells of `cell_size` metres, with no groups.
    pub fn new(name: &str, cols: usize, rows: usize, cell_size: f64) -> Self {
        let grid = Grid::new(cols, rows, cell_size);
        Self {
            name: name.to_string(),
            grid,
            height: Array2::zeros(grid.shape()),
            obstacle: Array2::from_elem(grid.shape(), false),
            discomfort: Array2::zeros(grid.shape()),
            groups: Vec::new(),
            model: None,
            params: None,
            walls: None,
            origin: None,
            events: Vec::new(),
            regions: Vec::new(),
            movers: Vec::new(),
        }
    }

    /// The rasters and groups of a compiled scene, with the given goal and spawn shapes per
    /// group (a scene keeps only masks, so the shapes come from the map file).
    pub fn from_scene(scene: &Scene, groups: Vec<GroupDoc>, params: Option<Params>) -> Self {
        Self {
            name: scene.name.clone(),
            grid: scene.grid,
            height: scene.height.clone(),
            obstacle: scene.obstacle.clone(),
            discomfort: scene.discomfort.clone(),
            groups,
            model: None,
            params,
            walls: None,
            origin: None,
            events: Vec::new(),
            regions: Vec::new(),
            movers: Vec::new(),
        }
    }

    /// What changes while a run of the document goes, as the map loader compiles it: the
    /// document's map file (its rasters aside, which live here until a save) compiled by the
    /// library, so routes, exit shares, regions and every event run in the editor as in
    /// `simulate`. A document the loader refuses (mid-edit) keeps what it can read: the goals
    /// closed at the start, the exit events, the sources.
    fn schedule(&self) -> Schedule {
        let file = crowdfield::map::MapFile {
            layers: Default::default(),
            ..crate::mapio::to_map_file(self, std::path::Path::new("editor.json"))
        };
        match crowdfield::map::compile(&file, std::path::Path::new("."), "editor.json") {
            Ok(scene) => scene.schedule,
            Err(_) => self.readable_schedule(),
        }
    }

    /// The part of [`Document::schedule`] a document the loader refuses still gives.
    fn readable_schedule(&self) -> Schedule {
        let grid = self.grid;
        let mut schedule = Schedule::default();
        let mut names = Vec::new();
        for (gi, g) in self.groups.iter().enumerate() {
            for (k, goal) in g.goals.iter().enumerate() {
                names.push(
                    goal.name
                        .clone()
                        .unwrap_or_else(|| format!("{} goal {k}", g.name)),
                );
                if goal.closed {
                    schedule.closed.push((gi, k));
                }
            }
            for (k, spawn) in g.spawns.iter().enumerate() {
                let Some(times) = spawn.source.as_ref().and_then(SourceKeys::times) else {
                    continue;
                };
                schedule.sources.push(Source {
                    group: gi,
                    area: Area {
                        name: spawn
                            .name
                            .clone()
                            .unwrap_or_else(|| format!("{} spawn {k}", g.name)),
                        mask: spawn.shape.mask(&grid).into(),
                        width: spawn.shape.longer_side(),
                    },
                    times,
                    premovement: spawn.premovement.map_or([0.0, 0.0], |p| [p.min, p.max]),
                });
            }
        }
        for e in &self.events {
            let (name, open) = match (&e.open, &e.close) {
                (Some(name), None) => (name, true),
                (None, Some(name)) => (name, false),
                _ => continue,
            };
            if names.contains(name) {
                schedule.events.push(ExitEvent {
                    time: e.at,
                    name: name.clone(),
                    open,
                });
            }
        }
        schedule
    }

    /// Compiles the document into a scene: areas rasterised by cell centre, default names and
    /// widths filled in as the map loader does, the map's schedule (closed goals, exit events,
    /// sources) with them.
    pub fn to_scene(&self) -> Scene {
        let grid = self.grid;
        let groups = self
            .groups
            .iter()
            .map(|g| Group {
                name: g.name.clone(),
                color: g.color,
                goals: g
                    .goals
                    .iter()
                    .enumerate()
                    .map(|(i, a)| Area {
                        name: a.name.clone().unwrap_or_else(|| format!("{} goal {i}", g.name)),
                        mask: a.shape.mask(&grid).into(),
                        width: a.width.unwrap_or_else(|| a.shape.longer_side()),
                    })
                    .collect(),
                spawns: g
                    .spawns
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.source.is_none())
                    .map(|(i, s)| Spawn {
                        area: Area {
                            name: s.name.clone().unwrap_or_else(|| format!("{} spawn {i}", g.name)),
                            mask: s.shape.mask(&grid).into(),
                            width: s.shape.longer_side(),
                        },
                        count: s.count,
                        premovement: s.premovement.map_or([0.0, 0.0], |p| [p.min, p.max]),
                    })
                    .collect(),
                speed_min: g.speed_min,
                speed_max: g.speed_max,
                speed_distribution: g.speed_distribution.clone(),
                radius: g.radius,
                boids: g.boids.clone(),
                orca: g.orca.clone().unwrap_or_default(),
            })
            .collect();
        Scene {
            name: self.name.clone(),
            grid,
            height: self.height.clone(),
            obstacle: self.obstacle.clone(),
            discomfort: self.discomfort.clone(),
            groups,
            params: Params::for_map(self.model, self.params.as_ref()),
            outline: None,
            exact_walls: self.walls == Some(crowdfield::map::Walls::Exact),
            schedule: self.schedule(),
        }
    }

    /// A small demonstration map built in code: a hall with a wall and a door, a hill, a
    /// discomfort patch and two groups crossing it.
    pub fn demo(cols: usize, rows: usize) -> Self {
        let cell = 0.5;
        let mut doc = Document::new("demo", cols, rows, cell);
        let (w, h) = (doc.grid.width(), doc.grid.height());
        let grid = doc.grid;
        for ((r, c), v) in doc.height.indexed_iter_mut() {
            let (x, y) = grid.cell_center(r, c);
            let d = ((x - 0.3 * w).powi(2) + (y - 0.7 * h).powi(2)).sqrt() / (0.25 * w);
            *v = if d < 1.0 {
                (1.5 * 0.5 * (1.0 + (std::f64::consts::PI * d).cos())) as f32
            } else {
                0.0
            };
        }
        for ((r, c), v) in doc.obstacle.indexed_iter_mut() {
            let (x, y) = grid.cell_center(r, c);
            let in_wall = (x - 0.55 * w).abs() < 0.6 && !(y > 0.4 * h && y < 0.55 * h);
            *v = in_wall && y > 0.1 * h && y < 0.9 * h;
        }
        for ((r, c), v) in doc.discomfort.indexed_iter_mut() {
            let (x, y) = grid.cell_center(r, c);
            if (x - 0.3 * w).abs() < 0.08 * w && (y - 0.25 * h).abs() < 0.12 * h {
                *v = 2.0;
            }
        }
        let mut east = GroupDoc::new("eastbound", 0);
        east.goals.push(GoalArea {
            name: Some("east exit".into()),
            shape: AreaShape::Rect {
                min: [w - 1.0, 0.3 * h],
                max: [w, 0.7 * h],
            },
            width: None,
            closed: false,
        });
        east.spawns.push(SpawnArea {
            name: None,
            shape: AreaShape::Rect {
                min: [0.5, 0.2 * h],
                max: [0.15 * w, 0.8 * h],
            },
            count: 40,
            premovement: None,
            source: None,
        });
        let mut north = GroupDoc::new("northbound", 1);
        north.goals.push(GoalArea {
            name: Some("north exit".into()),
            shape: AreaShape::Rect {
                min: [0.7 * w, h - 1.0],
                max: [0.9 * w, h],
            },
            width: None,
            closed: false,
        });
        north.spawns.push(SpawnArea {
            name: None,
            shape: AreaShape::Circle {
                center: [0.8 * w, 0.2 * h],
                radius: 0.1 * h,
            },
            count: 20,
            premovement: None,
            source: None,
        });
        // At most one walker per free cell of a spawn area, as the map format requires.
        for g in [&mut east, &mut north] {
            for s in &mut g.spawns {
                let mask = s.shape.mask(&grid);
                let free = mask
                    .iter()
                    .zip(doc.obstacle.iter())
                    .filter(|&(&m, &o)| m && !o)
                    .count();
                s.count = s.count.min(free);
            }
        }
        doc.groups = vec![east, north];
        doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rect_mask_uses_cell_centres_half_open() {
        let grid = Grid::new(10, 4, 1.0);
        let m = AreaShape::Rect {
            min: [2.0, 1.0],
            max: [4.0, 3.0],
        }
        .mask(&grid);
        // Centres 2.5, 3.5 on x and 1.5, 2.5 on y: 4 cells.
        assert_eq!(m.iter().filter(|&&b| b).count(), 4);
        assert!(m[(1, 2)] && m[(2, 3)] && !m[(0, 2)] && !m[(1, 4)]);
    }

    #[test]
    fn polygon_even_odd_triangle() {
        let tri = [[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]];
        assert!(point_in_polygon(&tri, 1.0, 1.0));
        assert!(!point_in_polygon(&tri, 3.0, 3.0));
        assert!(
            !point_in_polygon(&tri[..2], 0.1, 0.1),
            "fewer than 3 points cover nothing"
        );
    }

    #[test]
    fn scene_has_default_names_and_widths() {
        let doc = Document::demo(40, 20);
        let scene = doc.to_scene();
        assert_eq!(scene.groups.len(), 2);
        assert_eq!(scene.groups[0].goals[0].name, "east exit");
        assert_eq!(scene.groups[0].spawns[0].area.name, "eastbound spawn 0");
        assert_eq!(scene.groups[0].goals[0].width, 0.4 * doc.grid.height());
        assert!(scene.groups[0].goal_mask(&scene.grid).iter().any(|&b| b));
        assert!(scene.obstacle.iter().any(|&b| b));
        let n = scene.groups[1].agent_count();
        assert!(
            n > 0 && n <= 20,
            "spawn counts are clamped to the free cells: {n}"
        );
    }
}
