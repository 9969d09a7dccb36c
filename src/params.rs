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

/// Which model moves the walkers (a map's `"model"`, `simulate --model`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    /// Continuum Crowds as published (Treuille, Cooper and Popović 2006; SPEC §1–3): walkers
    /// move at the speed field's speed. Its flows look right but door capacities are 3–5 times
    /// those of pedestrian experiments; for games and film, not evacuation figures. The model
    /// of [`Params::default`] and of maps that set `params` without a `model`.
    #[default]
    ContinuumCrowds,
    /// The pedestrian model for evacuation figures (`crate::sim::pedestrian`): the continuum
    /// field gives the direction, each walker's own surroundings (the density of the others
    /// around it, the walker ahead) give the speed. The model of maps with neither `model` nor
    /// `params`; its parameters are [`Params::pedestrian`].
    Pedestrian,
}

impl crate::names::Named for SpeedLaw {
    const WHAT: &'static str = "SpeedLaw";
    const ALL: &'static [Self] = &[Self::Linear, Self::Weidmann];

    /// `linear` or `weidmann`: a map's `params.speed_law`, the command's `--speed-law`,
    /// Python's `speed_law`.
    fn name(self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Weidmann => "weidmann",
        }
    }
}

impl crate::names::Named for Model {
    const WHAT: &'static str = "Model";
    const ALL: &'static [Self] = &[Self::Pedestrian, Self::ContinuumCrowds];

    /// `pedestrian` or `continuum_crowds`: a map's `"model"`, the command's `--model`,
    /// Python's `model`.
    fn name(self) -> &'static str {
        match self {
            Model::ContinuumCrowds => "continuum_crowds",
            Model::Pedestrian => "pedestrian",
        }
    }
}

impl Model {
    /// What the model's figures are for, in a few words (shown beside its name by the front
    /// ends).
    pub fn purpose(self) -> &'static str {
        match self {
            Model::ContinuumCrowds => "the published model: flows for games and film, not evacuation figures",
            Model::Pedestrian => "the evacuation model: door flows and times as in pedestrian experiments",
        }
    }
}

/// Parameters of the continuum model. Every field has a default (see [`Params::default`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// The model these parameters drive. Not a `params` key: a map names it in its root
    /// `"model"` ([`Params::for_map`]). Default [`Model::ContinuumCrowds`].
    #[serde(skip)]
    pub model: Model,
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
            model: Model::ContinuumCrowds,
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

impl Params {
    /// The pedestrian model with its route field's parameters: Weidmann's law, the density
    /// averaged over 1 m², each face reading at least the density of its own cell; the rest
    /// as in [`Params::default`].
    pub fn pedestrian() -> Self {
        Self {
            model: Model::Pedestrian,
            speed_law: SpeedLaw::Weidmann,
            density_window: 1.0,
            density_at_walker: true,
            ..Self::default()
        }
    }

    /// The parameters of a map with root `"model"` `model` and `params` `params`: the map's
    /// `params` when it has them, run by its `model` (by default the published model, so a map
    /// that sets `params` keeps its figures); without `params`, the preset of its `model`
    /// (by default [`Params::pedestrian`]).
    pub fn for_map(model: Option<Model>, params: Option<&Params>) -> Self {
        match (model, params) {
            (model, Some(p)) => Self {
                model: model.unwrap_or(Model::ContinuumCrowds),
                ..p.clone()
            },
            (Some(Model::ContinuumCrowds), None) => Self::default(),
            (Some(Model::Pedestrian) | None, None) => Self::pedestrian(),
        }
    }

    /// These parameters run by `model` (`simulate --model`): a preset (a map without `params`)
    /// becomes the other model's preset, other parameters are kept.
    pub fn with_model(self, model: Model) -> Self {
        if self == Self::pedestrian() || self == Self::default() {
            return Self::for_map(Some(model), None);
        }
        Self { model, ..self }
    }
}

/// Largest file a `params` block is read from, bytes (`verify --params FILE`). A block is a few
/// hundred bytes; a mebibyte leaves room for any layout and comments of a JSON writer, and
/// keeps a wrong path (a log, a disk image) from being read into memory.
pub const MAX_PARAMS_FILE_BYTES: u64 = 1 << 20;

impl Params {
    /// A `params` block given as the value of the option `option` (`--params`): JSON text when
    /// it starts with `{`, else the path of a file holding it, read with
    /// [`crate::io::read_small_file`] (a regular file of at most [`MAX_PARAMS_FILE_BYTES`]).
    /// Only the block's form is checked here; its ranges are checked where a map carries it
    /// ([`crate::map::compile`]).
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] on [`crate::error::OPTIONS`], naming the option, the path (for a
    /// file) and why: a file that is missing, not a regular file, too large or not UTF-8 text;
    /// JSON that is no `params` block (with the parser's message, naming the key).
    pub fn from_option(option: &str, value: &str) -> crate::Result<Params> {
        use crate::error::{Error, OPTIONS};
        let (text, at) = if value.trim_start().starts_with('{') {
            (value.to_string(), option.to_string())
        } else {
            let path = std::path::Path::new(value);
            let at = format!("{option} {}", crate::text::show_path(path));
            let bytes = crate::io::read_small_file(path, MAX_PARAMS_FILE_BYTES).map_err(|e| match e {
                Error::Io { source, .. } => Error::invalid(OPTIONS, &at, source.to_string()),
                other => other,
            })?;
            let text = String::from_utf8(bytes).map_err(|e| {
                Error::invalid(
                    OPTIONS,
                    &at,
                    format!(
                        "byte {} is not UTF-8 text: expected a JSON file holding a `params` block",
                        e.utf8_error().valid_up_to()
                    ),
                )
            })?;
            (text, at)
        };
        serde_json::from_str::<Params>(&text).map_err(|e| {
            Error::invalid(
                OPTIONS,
                at,
                format!(
                    "{}: expected a map's `params` block (see docs/map-format.md), such as \
                     {{\"speed_law\": \"weidmann\", \"density_window\": 1}}",
                    crate::text::shorten_quoted_value(&e.to_string())
                ),
            )
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_params_option_reads_json_text_or_a_small_regular_file() {
        let p = Params::from_option("--params", r#"{"speed_law": "weidmann"}"#).unwrap();
        assert_eq!(p.speed_law, SpeedLaw::Weidmann);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.json");
        std::fs::write(&file, r#"{"gamma": 2}"#).unwrap();
        let p = Params::from_option("--params", file.to_str().unwrap()).unwrap();
        assert_eq!(p.gamma, 2.0);
        let e = Params::from_option("--params", r#"{"speed_lav": 1}"#)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--params: unknown field `speed_lav`"), "{e}");
        // Larger than the limit: refused from its size, before it is read.
        let big = dir.path().join("big.json");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_PARAMS_FILE_BYTES + 1).unwrap();
        let e = Params::from_option("--params", big.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!(
                "--params {}: {} bytes",
                big.display(),
                MAX_PARAMS_FILE_BYTES + 1
            )) && e.contains(&format!("at most {MAX_PARAMS_FILE_BYTES} bytes")),
            "{e}"
        );
        #[cfg(unix)]
        {
            let e = Params::from_option("--params", "/dev/urandom")
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("--params /dev/urandom: is a character device"),
                "{e}"
            );
        }
        let e = Params::from_option("--params", dir.path().to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a folder"), "{e}");
    }

    #[test]
    fn a_map_without_params_gets_the_pedestrian_model_and_one_with_params_keeps_them() {
        assert_eq!(Params::for_map(None, None), Params::pedestrian());
        assert_eq!(
            Params::for_map(Some(Model::ContinuumCrowds), None),
            Params::default()
        );
        let own = Params {
            gamma: 2.0,
            ..Params::default()
        };
        let kept = Params::for_map(None, Some(&own));
        assert_eq!(kept, own, "params without a model keep the published model");
        assert_eq!(kept.model, Model::ContinuumCrowds);
        let asked = Params::for_map(Some(Model::Pedestrian), Some(&own));
        assert_eq!(asked.model, Model::Pedestrian);
        assert_eq!(asked.gamma, 2.0);
    }

    #[test]
    fn with_model_swaps_presets_and_keeps_a_maps_own_params() {
        assert_eq!(
            Params::pedestrian().with_model(Model::ContinuumCrowds),
            Params::default()
        );
        assert_eq!(
            Params::default().with_model(Model::Pedestrian),
            Params::pedestrian()
        );
        let own = Params {
            f_max: 1.5,
            ..Params::default()
        };
        let run = own.clone().with_model(Model::Pedestrian);
        assert_eq!(run.model, Model::Pedestrian);
        assert_eq!(run.f_max, 1.5);
    }

    #[test]
    fn the_model_is_read_by_its_name_and_is_not_a_params_key() {
        let m: Model = serde_json::from_str("\"continuum_crowds\"").unwrap();
        assert_eq!(m, Model::ContinuumCrowds);
        assert_eq!(
            serde_json::to_string(&Model::Pedestrian).unwrap(),
            "\"pedestrian\""
        );
        assert!(serde_json::from_str::<Params>("{\"model\": \"pedestrian\"}").is_err());
    }
}
