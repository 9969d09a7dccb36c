//! The compiled map: every layer rasterised onto the grid, ready for the field pipeline.
//!
//! [`crate::map`] reads the JSON map format and produces a [`Scene`]; everything downstream
//! (fields, solvers, simulation, editor) works on a `Scene`, never on JSON.

use crate::grid::Grid;
use crate::params::{BoidsParams, OrcaParams, Params};
use ndarray::Array2;

/// A named area on the grid (a goal/exit or a spawn area), as a cell mask.
#[derive(Clone, Debug, PartialEq)]
pub struct Area {
    /// Name shown in reports ("north exit"); defaults to "`<group> goal <i>`" in the loader.
    pub name: String,
    /// `true` for the cells the area covers, shape `(rows, cols)`.
    pub mask: Array2<bool>,
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
            m.zip_mut_with(&g.mask, |a, &b| *a |= b);
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
        }
    }
}
