//! Model parameters of the continuum-crowds model (SPEC §2–4), with their documented defaults.
//!
//! Units: speeds in m/s, densities in persons/m², distances in metres, slopes dimensionless
//! (metres of height per metre walked). With the defaults (`alpha = 0`, `beta = 1`) the unit cost is
//! `C = (beta + gamma * g) / f` seconds per metre, so a potential is read as seconds of walking.

use serde::{Deserialize, Serialize};

/// Which speed–density law turns density into walking speed (SPEC §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeedLaw {
    /// Continuum crowds: linear blend of terrain speed and flow speed between `rho_min` and `rho_max`.
    #[default]
    Linear,
    /// Weidmann's fundamental diagram: `v = v_free * (1 - exp(-gamma_w * (1/rho - 1/rho_jam)))`.
    Weidmann,
}

/// Parameters of the continuum model. Every field has a default (see [`Params::default`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Weight of path length in the unit cost (dimensionless). Default 0.
    pub alpha: f64,
    /// Weight of walking time in the unit cost (s). Default 1: the potential is in seconds.
    pub beta: f64,
    /// Weight of discomfort in the unit cost (s). Default 1.
    pub gamma: f64,
    /// Fall-off exponent of the density splat. Default 1.5: each agent keeps at least
    /// `0.5^1.5 ≈ 0.35` of itself in its own cell.
    pub lambda: f64,
    /// Density (persons/m²) up to which walkers move at terrain speed. Default 2.0.
    pub rho_min: f64,
    /// Density (persons/m²) from which walkers move at the flow speed. Default 5.0.
    pub rho_max: f64,
    /// Slowest walking speed, m/s (steepest uphill; floor of the flow speed). Default 0.1.
    pub f_min: f64,
    /// Fastest walking speed, m/s (flat or downhill). Default 1.34 (Weidmann's free speed).
    pub f_max: f64,
    /// Slope at or below which walkers move at `f_max`. Default 0 (flat and downhill are free).
    pub s_min: f64,
    /// Slope at or above which walkers move at `f_min`. Default 0.5 (a 1-in-2 incline).
    pub s_max: f64,
    /// Look-ahead distance r, metres, at which density, flow and discomfort are sampled.
    /// Default 1.0; the fields sample at least one cell ahead.
    pub lookahead: f64,
    /// Speed–density law. Default [`SpeedLaw::Linear`].
    pub speed_law: SpeedLaw,
    /// Weidmann jam density, persons/m². Default 5.4.
    pub weidmann_rho_jam: f64,
    /// Weidmann shape constant gamma, 1/m². Default 1.913.
    pub weidmann_gamma: f64,
    /// Area, m², over which the speed field averages the density: 0 (the default) reads the
    /// per-cell splat of SPEC §2, whose values grow as the cells shrink; a positive area reads
    /// the splat averaged over a square of that area around each cell (the open cells inside
    /// the grid; velocity weighted by density; see `fields::window`), so the density, and the
    /// flows it sets, hardly depend on the cell size. 1.0 is the area pedestrian studies
    /// measure density over. At most [`MAX_DENSITY_WINDOW_M2`].
    pub density_window: f64,
    /// When true, each face reads the larger of the density ahead and the density of its own
    /// cell, so a packed crowd in front of an empty space (a door) is slowed by its own
    /// density, not set free by the empty space ahead. Default false (SPEC §3: the density
    /// ahead only).
    pub density_at_walker: bool,
}

/// Largest [`Params::density_window`], m²: a 10 m x 10 m square, far more than any measure of a
/// local crowd density (1 m² is usual); a larger one is likely a unit mistake.
pub const MAX_DENSITY_WINDOW_M2: f64 = 100.0;

impl Default for Params {
    fn default() -> Self {
        Self {
            alpha: 0.0,
            beta: 1.0,
            gamma: 1.0,
            lambda: 1.5,
            rho_min: 2.0,
            rho_max: 5.0,
            f_min: 0.1,
            f_max: 1.34,
            s_min: 0.0,
            s_max: 0.5,
            lookahead: 1.0,
            speed_law: SpeedLaw::Linear,
            weidmann_rho_jam: 5.4,
            weidmann_gamma: 1.913,
            density_window: 0.0,
            density_at_walker: false,
        }
    }
}

/// Boids parameters of one group (SPEC §5). Radii in metres, weights dimensionless.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BoidsParams {
    /// Cohesion radius, m. Default 3.0.
    pub r_coh: f64,
    /// Separation radius, m. Default 1.0.
    pub r_sep: f64,
    /// Alignment radius, m. Default 2.0.
    pub r_align: f64,
    /// Cohesion weight. Default 1.0.
    pub k_coh: f64,
    /// Separation weight. Default 1.5.
    pub k_sep: f64,
    /// Alignment weight. Default 1.0.
    pub k_align: f64,
    /// Maximum acceleration, m/s². Default 2.0.
    pub a_max: f64,
    /// Maximum speed, m/s. Default 1.5.
    pub v_max: f64,
}

impl Default for BoidsParams {
    fn default() -> Self {
        Self {
            r_coh: 3.0,
            r_sep: 1.0,
            r_align: 2.0,
            k_coh: 1.0,
            k_sep: 1.5,
            k_align: 1.0,
            a_max: 2.0,
            v_max: 1.5,
        }
    }
}

/// ORCA parameters of one group (SPEC §5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OrcaParams {
    /// Time horizon for other agents, s. Default 2.0.
    pub time_horizon: f64,
    /// Time horizon for static obstacles, s. Default 1.0.
    pub obstacle_time_horizon: f64,
    /// Neighbours farther than this are ignored, m. Default 3.0.
    pub neighbor_dist: f64,
    /// At most this many nearest neighbours are considered. Default 10.
    pub max_neighbors: usize,
}

impl Default for OrcaParams {
    fn default() -> Self {
        Self {
            time_horizon: 2.0,
            obstacle_time_horizon: 1.0,
            neighbor_dist: 3.0,
            max_neighbors: 10,
        }
    }
}
