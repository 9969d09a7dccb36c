//! The compiled map: every layer rasterised onto the grid, ready for the field pipeline.
//!
//! [`crate::map`] reads the JSON map format and produces a [`Scene`]; everything downstream
//! (fields, solvers, simulation, editor) works on a `Scene`, never on JSON. A scene built in
//! code is checked by [`Scene::check`], which [`crate::plan()`] and the simulation's builder
//! run, as the map's checks check a loaded one.

use crate::error::{Error, Result, num};
use crate::grid::Grid;
use crate::params::{BoidsParams, OrcaParams, Params};
use ndarray::Array2;

/// What is wrong with a goal area of cells `mask` among the walls `obstacle` (of the mask's
/// grid shape): `None` when at least one of its cells is free, else the problem (no cell at
/// all, or every cell an obstacle). The map's check and [`Scene::check`] share it.
pub fn goal_problem(mask: &CellMask, obstacle: &Array2<bool>) -> Option<String> {
    let cells = mask.count();
    if cells == 0 {
        return Some("covers no cell: expected a goal with at least one free cell".to_string());
    }
    let free = mask.cells().any(|rc| !obstacle.get(rc).copied().unwrap_or(true));
    (!free).then(|| {
        format!("all {cells} of its cells are obstacles: expected a goal with at least one free cell")
    })
}

/// Checks that `grid` has cells and a positive, finite cell size; `file` labels the error
/// (the scene's name). [`Scene::check`] and the local layer's step run it.
pub fn check_grid(grid: &Grid, file: &str) -> Result<()> {
    if !(grid.cell_size.is_finite() && grid.cell_size > 0.0) {
        return Err(Error::invalid(
            file,
            "grid.cell_size",
            format!(
                "{}: expected a positive, finite cell edge in metres",
                num(grid.cell_size)
            ),
        ));
    }
    if grid.is_empty() {
        return Err(Error::invalid(
            file,
            "grid",
            format!("{} x {} cells: expected at least one cell", grid.cols, grid.rows),
        ));
    }
    Ok(())
}

/// The cells of a grid that an area covers, held over the bounding box of those cells only:
/// an area takes the memory of its own extent, not of the grid, so a map of a hundred thousand
/// small spawn areas fits where one grid-sized mask each would not. Two masks with the same
/// cells on the same grid are equal.
///
/// ```
/// use crowdfield::scene::CellMask;
/// use ndarray::Array2;
///
/// let mut dense = Array2::from_elem((100, 200), false);
/// dense[(10, 20)] = true;
/// dense[(11, 22)] = true;
/// let mask = CellMask::from(dense.clone());
/// assert_eq!(mask.shape(), (100, 200));
/// assert_eq!((mask.origin(), mask.window().dim()), ((10, 20), (2, 3)));
/// assert!(mask[(11, 22)] && !mask[(10, 21)] && !mask[(99, 199)]);
/// assert_eq!(mask.cells().collect::<Vec<_>>(), [(10, 20), (11, 22)]);
/// assert_eq!(mask.to_dense(), dense);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CellMask {
    /// The grid's `(rows, cols)`.
    shape: (usize, usize),
    /// Grid cell `(row, col)` of `window[(0, 0)]`.
    origin: (usize, usize),
    /// The cells from `origin` on, cropped to the bounding box of the set ones (`(0, 0)` when
    /// none is set).
    window: Array2<bool>,
}

impl CellMask {
    /// No cell of a grid of `shape` `(rows, cols)`.
    pub fn empty(shape: (usize, usize)) -> Self {
        Self {
            shape,
            origin: (0, 0),
            window: Array2::from_elem((0, 0), false),
        }
    }

    /// The cells set in `window`, whose cell `(0, 0)` is grid cell `origin` `(row, col)`, on a
    /// grid of `shape` `(rows, cols)`; the window is cropped to the bounding box of its set
    /// cells.
    ///
    /// # Panics
    /// When the window reaches past the grid.
    pub fn from_window(shape: (usize, usize), origin: (usize, usize), window: Array2<bool>) -> Self {
        let (rows, cols) = window.dim();
        assert!(
            origin.0 + rows <= shape.0 && origin.1 + cols <= shape.1,
            "a window of {rows} x {cols} cells at {origin:?} reaches past a grid of {shape:?}"
        );
        let (mut r0, mut c0, mut r1, mut c1) = (usize::MAX, usize::MAX, 0, 0);
        for ((r, c), _) in window.indexed_iter().filter(|(_, m)| **m) {
            (r0, c0, r1, c1) = (r0.min(r), c0.min(c), r1.max(r), c1.max(c));
        }
        if r0 == usize::MAX {
            return Self::empty(shape);
        }
        let window = if (r0, c0, r1 + 1, c1 + 1) == (0, 0, rows, cols) {
            window
        } else {
            window.slice(ndarray::s![r0..=r1, c0..=c1]).to_owned()
        };
        Self {
            shape,
            origin: (origin.0 + r0, origin.1 + c0),
            window,
        }
    }

    /// The grid's `(rows, cols)` (the shape [`Scene::check`] compares with the scene's grid).
    pub fn shape(&self) -> (usize, usize) {
        self.shape
    }

    /// The grid cell `(row, col)` of [`CellMask::window`]'s cell `(0, 0)`.
    pub fn origin(&self) -> (usize, usize) {
        self.origin
    }

    /// The cells over the bounding box of the set ones, from [`CellMask::origin`] on.
    pub fn window(&self) -> ndarray::ArrayView2<'_, bool> {
        self.window.view()
    }

    /// Whether grid cell `(row, col)` is set (`false` off the grid).
    pub fn get(&self, (row, col): (usize, usize)) -> bool {
        let (r0, c0) = self.origin;
        row >= r0 && col >= c0 && self.window.get((row - r0, col - c0)).copied().unwrap_or(false)
    }

    /// The set cells `(row, col)`, row by row (the order of a grid-sized mask's iteration).
    pub fn cells(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let (r0, c0) = self.origin;
        self.window
            .indexed_iter()
            .filter(|(_, m)| **m)
            .map(move |((r, c), _)| (r0 + r, c0 + c))
    }

    /// How many cells are set.
    pub fn count(&self) -> usize {
        self.window.iter().filter(|&&m| m).count()
    }

    /// Whether no cell is set.
    pub fn is_empty(&self) -> bool {
        self.window.is_empty()
    }

    /// Sets the cells of this mask in `target` (a grid-sized mask); cells off `target` are
    /// skipped.
    pub fn or_into(&self, target: &mut Array2<bool>) {
        for rc in self.cells() {
            if let Some(t) = target.get_mut(rc) {
                *t = true;
            }
        }
    }

    /// The mask over the whole grid, shape `(rows, cols)`.
    pub fn to_dense(&self) -> Array2<bool> {
        let mut dense = Array2::from_elem(self.shape, false);
        self.or_into(&mut dense);
        dense
    }
}

impl From<Array2<bool>> for CellMask {
    /// The set cells of a grid-sized mask (its shape is the grid's).
    fn from(dense: Array2<bool>) -> Self {
        Self::from_window(dense.dim(), (0, 0), dense)
    }
}

impl std::ops::Index<(usize, usize)> for CellMask {
    type Output = bool;

    /// Whether grid cell `(row, col)` is set, as [`CellMask::get`].
    fn index(&self, rc: (usize, usize)) -> &bool {
        if self.get(rc) { &true } else { &false }
    }
}

impl std::ops::Index<[usize; 2]> for CellMask {
    type Output = bool;

    /// Whether grid cell `[row, col]` is set, as [`CellMask::get`].
    fn index(&self, [r, c]: [usize; 2]) -> &bool {
        &self[(r, c)]
    }
}

/// A named area on the grid (a goal/exit or a spawn area), as a cell mask.
#[derive(Clone, Debug, PartialEq)]
pub struct Area {
    /// Name shown in reports ("north exit"); defaults to "`<group> goal <i>`" in the loader.
    pub name: String,
    /// The cells the area covers, on the grid of shape `(rows, cols)`.
    pub mask: CellMask,
    /// Width of the opening in metres, used for specific flow (persons/(m·s)).
    pub width: f64,
}

/// A spawn area with the number of agents to place in it.
#[derive(Clone, Debug, PartialEq)]
pub struct Spawn {
    /// Where agents start.
    pub area: Area,
    /// How many agents start there.
    pub count: usize,
    /// Pre-movement time range `[min, max]`, seconds: each agent waits a time drawn uniformly in
    /// it before walking. `[0, 0]`: everyone walks from the start.
    pub premovement: [f64; 2],
}

/// One group of walkers sharing goals (one potential field per group).
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// Display name.
    pub name: String,
    /// Display colour, sRGB.
    pub color: [u8; 3],
    /// Goal areas (exits). The group's sources are the union of their masks.
    pub goals: Vec<Area>,
    /// Spawn areas.
    pub spawns: Vec<Spawn>,
    /// Agents' preferred speeds lie in `[speed_min, speed_max]`, m/s, distributed as
    /// `speed_distribution` says.
    pub speed_min: f64,
    /// See `speed_min`.
    pub speed_max: f64,
    /// How the speeds are distributed inside `[speed_min, speed_max]` (uniform by default).
    pub speed_distribution: crate::speeds::SpeedDistribution,
    /// Body radius of the group's agents, m.
    pub radius: f64,
    /// Boids behaviour, when the group flocks.
    pub boids: Option<BoidsParams>,
    /// ORCA avoidance parameters.
    pub orca: OrcaParams,
}

impl Group {
    /// Union of the goal masks: the cells where this group's potential is 0.
    pub fn goal_mask(&self, grid: &Grid) -> Array2<bool> {
        let mut m = Array2::from_elem(grid.shape(), false);
        for g in &self.goals {
            g.mask.or_into(&mut m);
        }
        m
    }

    /// Total number of agents spawned for this group.
    pub fn agent_count(&self) -> usize {
        self.spawns.iter().map(|s| s.count).sum()
    }
}

/// A map compiled onto its grid: what [`crate::map::load`] returns and [`crate::plan()`] and
/// [`crate::sim::Simulation::builder`] take (see the [crate example](crate)).
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Map name.
    pub name: String,
    /// The grid.
    pub grid: Grid,
    /// Terrain height h, metres, at cell centres.
    pub height: Array2<f32>,
    /// Impassable cells.
    pub obstacle: Array2<bool>,
    /// Discomfort g (dimensionless, >= 0) at cell centres.
    pub discomfort: Array2<f32>,
    /// The groups.
    pub groups: Vec<Group>,
    /// Model parameters.
    pub params: Params,
    /// The floor as drawn, on a map with exact walls whose obstacles are shapes ([`Outline`]):
    /// the walkers' bodies meet its edges and its goal areas count arrivals. `None` otherwise
    /// (a scene built in code, cell walls, an obstacle raster): exact walls are then the edges
    /// of the obstacle cells and the goals their cells. Whoever changes `obstacle` or the goals
    /// of a scene with an outline sets it to `None` or rebuilds it.
    pub outline: Option<Outline>,
    /// Whether the walkers' bodies meet the walls exactly (`"walls": "exact"`, with the
    /// pedestrian model): the edges of [`Scene::outline`], or of the obstacle cells when there
    /// is none, with the goals as openings and areas ([`crate::map::Walls::Exact`]).
    pub exact_walls: bool,
    /// What changes while a run goes: exits closed at the start, exits opening and closing,
    /// sources (empty for a static scene).
    pub schedule: crate::schedule::Schedule,
}

/// The floor of a map as it is drawn, in metres: the walkable region (the domain less every
/// obstacle shape, polygons with holes) and each goal's exact area. The grid's layers are
/// rasterised from the same shapes (a cell is an obstacle when its centre is); the fields are
/// computed on the cells, while bodies collide with these edges and arrivals are counted on
/// these areas, so a door passes the width it is drawn with at any cell size and offset.
#[derive(Clone, Debug, PartialEq)]
pub struct Outline {
    /// The walkable region.
    pub walkable: geo::MultiPolygon<f64>,
    /// Per group, per goal: the goal's area clipped to the domain.
    pub goals: Vec<Vec<geo::MultiPolygon<f64>>>,
}

impl Scene {
    /// A flat, empty, obstacle-free scene with no groups and default parameters.
    pub fn empty(name: &str, grid: Grid) -> Self {
        Self {
            name: name.to_string(),
            grid,
            height: Array2::zeros(grid.shape()),
            obstacle: Array2::from_elem(grid.shape(), false),
            discomfort: Array2::zeros(grid.shape()),
            groups: Vec::new(),
            params: Params::default(),
            outline: None,
            exact_walls: false,
            schedule: Default::default(),
        }
    }

    /// Checks what the field pipeline and the simulation rely on, for a scene built in code as
    /// much as for one [`crate::map::load`] compiled: a grid with cells and a positive, finite
    /// cell size; `height`, `obstacle`, `discomfort` and every goal and spawn mask of the grid's
    /// shape; every goal with at least one free cell. A group without goals passes: it is a
    /// flock, whose walkers never leave (the map format asks boids of such a group), and so
    /// does a spawn area walled off from its goals (the report counts its walkers as
    /// unreachable). [`crate::plan()`] and [`crate::sim::SimulationBuilder::build`] run it.
    ///
    /// A scene built in code (a 10 m x 5 m room of 0.5 m cells, a wall across it with a 1 m
    /// door, twenty walkers from the left to the right edge), checked and run:
    ///
    /// ```
    /// use crowdfield::grid::Grid;
    /// use crowdfield::params::OrcaParams;
    /// use crowdfield::scene::{Area, CellMask, Group, Scene, Spawn};
    /// use crowdfield::sim::Simulation;
    /// use ndarray::{Array2, s};
    ///
    /// let grid = Grid::new(20, 10, 0.5); // columns, rows, cell edge in metres
    /// let mut scene = Scene::empty("room", grid);
    /// scene.obstacle.slice_mut(s![.., 10]).fill(true); // a wall across the room
    /// scene.obstacle.slice_mut(s![4..6, 10]).fill(false); // its door
    /// let columns = |from: usize, to: usize| -> CellMask {
    ///     Array2::from_shape_fn(grid.shape(), |(_, c)| (from..to).contains(&c)).into()
    /// };
    /// scene.groups.push(Group {
    ///     name: "visitors".into(),
    ///     color: [200, 60, 60],
    ///     goals: vec![Area { name: "exit".into(), mask: columns(19, 20), width: 5.0 }],
    ///     spawns: vec![Spawn {
    ///         area: Area { name: "hall".into(), mask: columns(0, 8), width: 0.0 },
    ///         count: 20,
    ///         premovement: [0.0, 0.0],
    ///     }],
    ///     speed_min: 1.2,
    ///     speed_max: 1.4,
    ///     speed_distribution: Default::default(),
    ///     radius: 0.2,
    ///     boids: None,
    ///     orca: OrcaParams::default(),
    /// });
    /// scene.check()?;
    /// let mut sim = Simulation::builder(scene).seed(1).max_time(120.0).build()?;
    /// while !sim.finished() {
    ///     sim.step();
    /// }
    /// assert_eq!(sim.report().total.arrived, 20);
    ///
    /// // A goal behind walls is refused, as in a map file.
    /// let mut walled = Scene::empty("room", grid);
    /// walled.obstacle.fill(true);
    /// walled.groups.push(sim.scene().groups[0].clone());
    /// let error = walled.check().unwrap_err().to_string();
    /// assert!(error.contains("groups[0].goals[0]: all 10 of its cells are obstacles"), "{error}");
    /// # Ok::<(), crowdfield::error::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Invalid`] (or [`Error::Many`] for several) labelled with the scene's name and
    /// naming the field, such as `obstacle: shape (3, 3): expected the grid's (10, 20)` or
    /// `groups[0].goals[0]: all 8 of its cells are obstacles: ...`.
    pub fn check(&self) -> Result<()> {
        let file = self.name.as_str();
        check_grid(&self.grid, file)?;
        let expected = self.grid.shape();
        let mut errors = Vec::new();
        let mut shape = |at: String, dim: (usize, usize)| {
            if dim != expected {
                errors.push(Error::invalid(
                    file,
                    at,
                    format!("shape ({}, {}): expected the grid's {expected:?}", dim.0, dim.1),
                ));
            }
        };
        shape("height".into(), self.height.dim());
        shape("obstacle".into(), self.obstacle.dim());
        shape("discomfort".into(), self.discomfort.dim());
        for (i, g) in self.groups.iter().enumerate() {
            for (k, a) in g.goals.iter().enumerate() {
                shape(format!("groups[{i}].goals[{k}].mask"), a.mask.shape());
            }
            for (k, s) in g.spawns.iter().enumerate() {
                shape(format!("groups[{i}].spawns[{k}].area.mask"), s.area.mask.shape());
            }
        }
        for (k, s) in self.schedule.sources.iter().enumerate() {
            shape(format!("schedule.sources[{k}].area.mask"), s.area.mask.shape());
        }
        for (k, s) in self.schedule.sources.iter().enumerate() {
            if s.group >= self.groups.len() {
                errors.push(Error::invalid(
                    file,
                    format!("schedule.sources[{k}].group"),
                    format!("{}: expected a group index below {}", s.group, self.groups.len()),
                ));
            }
        }
        for (k, &(g, e)) in self.schedule.closed.iter().enumerate() {
            if self.groups.get(g).is_none_or(|group| e >= group.goals.len()) {
                errors.push(Error::invalid(
                    file,
                    format!("schedule.closed[{k}]"),
                    format!("({g}, {e}): expected a (group, goal) of the scene"),
                ));
            }
        }
        errors.extend(self.schedule.routes.problems(file, expected, &self.groups));
        // The goals' cells are only compared with the walls once every shape fits.
        if errors.is_empty() {
            for (i, g) in self.groups.iter().enumerate() {
                for (k, a) in g.goals.iter().enumerate() {
                    if let Some(problem) = goal_problem(&a.mask, &self.obstacle) {
                        errors.push(Error::invalid(file, format!("groups[{i}].goals[{k}]"), problem));
                    }
                }
            }
        }
        match errors.len() {
            0 => Ok(()),
            1 => Err(errors.remove(0)),
            _ => Err(Error::Many(errors)),
        }
    }

    /// What is wrong with `(x, y)` as a walker's centre: `None` for a finite point inside the
    /// domain (`[0, width) x [0, height)`) and, with `walls`, in a free cell.
    pub fn position_problem(&self, x: f32, y: f32, walls: bool) -> Option<String> {
        let (xf, yf) = (x as f64, y as f64);
        // As f32 prints them: 0.1, not the f64 0.10000000149011612.
        let point = || format!("({x:?}, {y:?})");
        if !(x.is_finite() && y.is_finite()) {
            return Some(format!("{}: expected a finite position in metres", point()));
        }
        let Some((r, c)) = self.grid.cell_of(xf, yf) else {
            return Some(format!(
                "{}: expected a position inside the domain, [0, {}) x [0, {}) m",
                point(),
                num(self.grid.width()),
                num(self.grid.height())
            ));
        };
        (walls && self.obstacle.get((r, c)).copied().unwrap_or(false)).then(|| {
            format!(
                "{}: in the obstacle cell (row {r}, col {c}): expected a position in a free cell",
                point()
            )
        })
    }
}
