//! Range checks and compilation of a [`MapFile`] into a [`Scene`], collecting every problem.
//!
//! The checks run in an order that never allocates for a bad grid: the grid's size and the
//! memory estimate come first, and the layers, masks and flood fill are only built when the grid
//! is acceptable. Each problem is recorded with its JSON path and the run goes on, so one pass
//! reports everything that can be known.

use super::LoadOptions;
use super::format::{
    DEFAULT_SPEED, FORMAT_VERSION, GridSpec, GroupSpec, Layer, MapFile, Raster, ShapeOp, ShapeRef, Shaped,
    SpeedRange,
};
use super::raster::{RasterKind, default_width, for_each_cell, raster_kind, read_raster, shape_cells};
use super::{
    COORD_LIMIT, MAX_CELL_SIZE, MAX_CELLS, MAX_GRID_EXTENT, MAX_GRID_SIDE, MAX_ORCA_NEIGHBORS,
    MAX_PREMOVEMENT, MAX_RADIUS, MAX_WALK_SPEED, MEMORY_LIMIT_BYTES, MIN_CELL_SIZE, MIN_FLOW_SPEED,
    MIN_RADIUS, VALUE_LIMIT,
};
use crate::error::Error;
use crate::grid::{Dir, Grid};
use crate::params::{BoidsParams, MAX_DENSITY_WINDOW_M2, OrcaParams, Params};
use crate::scene::{Area, CellMask, Group, Scene, Spawn};
use crate::speeds::{RimeaPopulation, SpeedDistribution};
use crate::text::{name_problem, quoted};
use ndarray::Array2;
use std::collections::{HashSet, VecDeque};
use std::path::Path;

/// Display colours of groups without a `color`, by index (matplotlib's "tab10").
const PALETTE: [[u8; 3]; 10] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
];

/// Which layer a shape or raster paints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LayerKind {
    Height,
    Obstacles,
    Discomfort,
}

pub(crate) use crate::error::num;

/// Checks `map` and builds its scene. Returns the scene when there is no problem, and every
/// problem found.
pub(crate) fn check(
    map: &MapFile,
    base_dir: &Path,
    file: &str,
    options: &LoadOptions,
) -> (Option<Scene>, Vec<Error>) {
    let mut ck = Checker {
        file,
        options: *options,
        errors: Vec::new(),
        obstacle_raster: map
            .layers
            .obstacles
            .as_ref()
            .and_then(|l| l.raster.as_ref())
            .map(|r| r.file.clone()),
    };
    if let Some(message) = name_problem(&map.name) {
        ck.push("name", message);
    }
    if map.version != FORMAT_VERSION {
        ck.push(
            "version",
            format!("{} is not supported: expected {FORMAT_VERSION}", map.version),
        );
    }
    let grid = ck.grid(&map.grid, map.groups.len());
    let params = Params::for_map(map.model, map.params.as_ref());
    ck.params(&params);

    let layers = &map.layers;
    let height = ck.layer(layers.height.as_ref(), LayerKind::Height, grid.as_ref(), base_dir);
    let obstacle_values = ck.layer(
        layers.obstacles.as_ref(),
        LayerKind::Obstacles,
        grid.as_ref(),
        base_dir,
    );
    let discomfort = ck.layer(
        layers.discomfort.as_ref(),
        LayerKind::Discomfort,
        grid.as_ref(),
        base_dir,
    );
    let obstacle = obstacle_values.map(|v| v.mapv(|x| x != 0.0));

    let mut names = HashSet::new();
    let mut groups = Vec::new();
    for (i, g) in map.groups.iter().enumerate() {
        let at = format!("groups[{i}]");
        if !names.insert(g.name.as_str()) {
            ck.push(
                &format!("{at}.name"),
                format!(
                    "{} is used by an earlier group: expected unique group names",
                    quoted(&g.name)
                ),
            );
        }
        groups.push(ck.group(g, i, &at, grid.as_ref(), obstacle.as_ref()));
    }

    let errors = ck.errors;
    let (Some(grid), Some(height), Some(obstacle), Some(discomfort)) = (grid, height, obstacle, discomfort)
    else {
        return (None, errors);
    };
    if !errors.is_empty() {
        return (None, errors);
    }
    let groups: Vec<Group> = groups.into_iter().flatten().collect();
    let scene = Scene {
        name: map.name.clone(),
        grid,
        height: height.mapv(|v| v as f32),
        obstacle,
        discomfort: discomfort.mapv(|v| v as f32),
        groups,
        params,
    };
    (Some(scene), errors)
}

/// Collects problems.
struct Checker<'a> {
    file: &'a str,
    /// What the map may read.
    options: LoadOptions,
    errors: Vec<Error>,
    /// The obstacles layer's raster file, named when a goal or spawn lies in its walls.
    obstacle_raster: Option<String>,
}

impl Checker<'_> {
    fn push(&mut self, at: &str, message: String) {
        self.errors.push(Error::invalid(self.file, at, message));
    }

    /// Records `message()` at `at` unless `ok`; returns `ok`.
    fn ensure(&mut self, ok: bool, at: &str, message: impl FnOnce() -> String) -> bool {
        if !ok {
            self.push(at, message());
        }
        ok
    }

    /// A number that must be finite, within `VALUE_LIMIT` and satisfy `rule` (described by
    /// `expected`, e.g. "> 0").
    fn number(&mut self, v: f64, at: &str, rule: impl Fn(f64) -> bool, expected: &str) -> bool {
        let ok = v.is_finite() && v.abs() <= VALUE_LIMIT && rule(v);
        self.ensure(ok, at, || {
            let rule = if expected.is_empty() {
                String::new()
            } else {
                format!(" {expected},")
            };
            format!(
                "{}: expected a finite number{rule} at most {} in magnitude",
                num(v),
                num(VALUE_LIMIT)
            )
        })
    }

    /// A number that must be finite and within `lo..=hi` (a tighter bound than `VALUE_LIMIT`,
    /// so the message states this one bound alone), in `unit`.
    fn number_within(&mut self, v: f64, at: &str, (lo, hi): (f64, f64), unit: &str) -> bool {
        let ok = v.is_finite() && (lo..=hi).contains(&v);
        self.ensure(ok, at, || {
            format!("{}: expected a finite number in [{lo}, {hi}] {unit}", num(v))
        })
    }

    fn point(&mut self, p: [f64; 2], at: &str) -> bool {
        let ok = p.iter().all(|v| v.is_finite() && v.abs() <= COORD_LIMIT);
        self.ensure(ok, at, || {
            format!(
                "[{}, {}]: expected finite coordinates in metres within ±{}",
                num(p[0]),
                num(p[1]),
                num(COORD_LIMIT)
            )
        })
    }

    fn grid(&mut self, g: &GridSpec, groups: usize) -> Option<Grid> {
        let mut ok = self.ensure(g.cols > 0, "grid.cols", || {
            format!("{}: expected at least 1", g.cols)
        });
        ok &= self.ensure(g.rows > 0, "grid.rows", || {
            format!("{}: expected at least 1", g.rows)
        });
        ok &= self.ensure(
            g.cell_size.is_finite() && (MIN_CELL_SIZE..=MAX_CELL_SIZE).contains(&g.cell_size),
            "grid.cell_size",
            || {
                format!(
                    "{}: expected a cell edge in metres between {} and {}",
                    num(g.cell_size),
                    num(MIN_CELL_SIZE),
                    num(MAX_CELL_SIZE)
                )
            },
        );
        if !ok {
            return None;
        }
        let cells = g.cols.checked_mul(g.rows).filter(|&n| n <= MAX_CELLS);
        let Some(cells) = cells else {
            self.push(
                "grid",
                format!(
                    "{} x {} cells is too large: expected at most {MAX_CELLS} cells (2^28)",
                    g.cols, g.rows
                ),
            );
            return None;
        };
        let size = crate::memory::RunSize {
            grid: Grid::new(g.cols, g.rows, g.cell_size),
            groups: groups.max(1),
            agents: 0,
            max_radius: MIN_RADIUS,
        };
        let estimate = size.simulation_bytes();
        if estimate > MEMORY_LIMIT_BYTES {
            let per_cell = crate::memory::SIM_BYTES_PER_CELL
                + crate::memory::SIM_BYTES_PER_CELL_PER_GROUP * groups.max(1) as u64;
            self.push(
                "grid",
                format!(
                    "{} x {} cells with {groups} group(s) needs about {:.1} GiB for a run ({per_cell} bytes \
                     per cell): expected at most {:.1} GiB; use fewer or larger cells",
                    g.cols,
                    g.rows,
                    estimate as f64 / (1u64 << 30) as f64,
                    MEMORY_LIMIT_BYTES as f64 / (1u64 << 30) as f64
                ),
            );
            return None;
        }
        // Loading fails with the amount it needs, not an abort, where memory is short.
        let loading = (cells as u64).saturating_mul(crate::memory::LOAD_BYTES_PER_CELL);
        if let Err(e) = crate::memory::ensure_available(
            loading,
            self.file,
            "grid",
            &format!("loading {} x {} cells", g.cols, g.rows),
        ) {
            self.errors.push(e);
            return None;
        }
        if g.cols.max(g.rows) > MAX_GRID_SIDE {
            self.push(
                "grid",
                format!(
                    "{} x {} cells: expected at most {MAX_GRID_SIDE} cells a side (every image draws a \
                     pixel per cell); use larger cells",
                    g.cols, g.rows
                ),
            );
            return None;
        }
        let extent = g.cols.max(g.rows) as f64 * g.cell_size;
        if extent > MAX_GRID_EXTENT {
            self.push(
                "grid",
                format!(
                    "{} x {} cells of {} m is {} m across: expected at most {} m (positions are f32, \
                     which resolve about 1 mm up to 16 km; farther, walking steps lose precision)",
                    g.cols,
                    g.rows,
                    num(g.cell_size),
                    num(extent),
                    num(MAX_GRID_EXTENT)
                ),
            );
            return None;
        }
        Some(Grid::new(g.cols, g.rows, g.cell_size))
    }

    fn params(&mut self, p: &Params) {
        let nonneg = |v: f64| v >= 0.0;
        let pos = |v: f64| v > 0.0;
        self.number(p.alpha, "params.alpha", nonneg, ">= 0");
        self.number(p.beta, "params.beta", nonneg, ">= 0");
        self.number(p.gamma, "params.gamma", nonneg, ">= 0");
        self.ensure(!(p.alpha == 0.0 && p.beta == 0.0), "params.beta", || {
            "0 with alpha 0: expected alpha + beta > 0 (the unit cost must be positive)".into()
        });
        self.number(p.lambda, "params.lambda", pos, "> 0");
        if self.number(p.rho_min, "params.rho_min", nonneg, ">= 0")
            & self.number(p.rho_max, "params.rho_max", pos, "> 0")
        {
            self.ensure(p.rho_min < p.rho_max, "params.rho_max", || {
                format!(
                    "{}: expected more than rho_min ({})",
                    num(p.rho_max),
                    num(p.rho_min)
                )
            });
        }
        // f_min floors every speed (SPEC: a crowd slows walkers, never walls them in): at
        // 5e-324 m/s its unit cost 1/f_min overflowed to infinity and made crowded faces walls.
        let f_min_ok = |v: f64| v >= MIN_FLOW_SPEED;
        let f_min_rule = format!(">= {MIN_FLOW_SPEED} m/s");
        if self.number(p.f_min, "params.f_min", f_min_ok, &f_min_rule)
            & self.number(p.f_max, "params.f_max", pos, "> 0")
        {
            self.ensure(p.f_min <= p.f_max, "params.f_max", || {
                format!("{}: expected at least f_min ({})", num(p.f_max), num(p.f_min))
            });
            // f_max bounds every walker's speed and so sets the automatic time step: a huge one
            // would make the step tiny and a run endless.
            self.ensure(p.f_max <= MAX_WALK_SPEED, "params.f_max", || {
                format!(
                    "{} m/s: expected a walking speed of at most {} m/s",
                    num(p.f_max),
                    num(MAX_WALK_SPEED)
                )
            });
        }
        if self.number(p.s_min, "params.s_min", |_| true, "")
            & self.number(p.s_max, "params.s_max", |_| true, "")
        {
            self.ensure(p.s_min < p.s_max, "params.s_max", || {
                format!("{}: expected more than s_min ({})", num(p.s_max), num(p.s_min))
            });
        }
        self.number(p.lookahead, "params.lookahead", nonneg, ">= 0");
        self.number(p.weidmann_rho_jam, "params.weidmann_rho_jam", pos, "> 0");
        self.number(p.weidmann_gamma, "params.weidmann_gamma", pos, "> 0");
        if self.number(p.density_window, "params.density_window", nonneg, ">= 0") {
            // A window larger than the grid is fine (it is clamped to the grid); one larger
            // than any local crowd is a unit mistake.
            self.ensure(
                p.density_window <= MAX_DENSITY_WINDOW_M2,
                "params.density_window",
                || {
                    format!(
                        "{} m²: expected an area of at most {MAX_DENSITY_WINDOW_M2} m² (a 10 m \
                         square; 1 m² is the usual measurement area), or 0 for the per-cell density",
                        num(p.density_window)
                    )
                },
            );
        }
    }

    fn boids(&mut self, b: &BoidsParams, at: &str) {
        let nonneg = |v: f64| v >= 0.0;
        for (name, v) in [
            ("r_coh", b.r_coh),
            ("r_sep", b.r_sep),
            ("r_align", b.r_align),
            ("k_coh", b.k_coh),
            ("k_sep", b.k_sep),
            ("k_align", b.k_align),
            ("a_max", b.a_max),
            ("v_max", b.v_max),
        ] {
            self.number(v, &format!("{at}.{name}"), nonneg, ">= 0");
        }
    }

    fn orca(&mut self, o: &OrcaParams, at: &str) {
        let pos = |v: f64| v > 0.0;
        self.number(o.time_horizon, &format!("{at}.time_horizon"), pos, "> 0");
        self.number(
            o.obstacle_time_horizon,
            &format!("{at}.obstacle_time_horizon"),
            pos,
            "> 0",
        );
        self.number(
            o.neighbor_dist,
            &format!("{at}.neighbor_dist"),
            |v| v >= 0.0,
            ">= 0",
        );
        self.ensure(
            o.max_neighbors <= MAX_ORCA_NEIGHBORS,
            &format!("{at}.max_neighbors"),
            || format!("{}: expected at most {MAX_ORCA_NEIGHBORS}", o.max_neighbors),
        );
    }

    /// Checks a shape's geometry; `profile_ok` tells whether a circle may carry a profile.
    fn shape<'s>(&mut self, s: &'s impl Shaped, at: &str, profile_ok: bool) -> Option<ShapeRef<'s>> {
        let shape = match s.shape() {
            Ok(shape) => shape,
            Err(n) => {
                self.push(
                    at,
                    format!("has {n} of the keys rect, circle, polygon: expected exactly one"),
                );
                return None;
            }
        };
        let ok = match shape {
            ShapeRef::Rect(r) => {
                let at = format!("{at}.rect");
                let mut ok =
                    self.point(r.min, &format!("{at}.min")) & self.point(r.max, &format!("{at}.max"));
                if ok {
                    ok = self.ensure(
                        r.min[0] < r.max[0] && r.min[1] < r.max[1],
                        &format!("{at}.max"),
                        || {
                            format!(
                                "[{}, {}]: expected larger than min [{}, {}] on both axes",
                                num(r.max[0]),
                                num(r.max[1]),
                                num(r.min[0]),
                                num(r.min[1])
                            )
                        },
                    );
                }
                ok
            }
            ShapeRef::Circle(c) => {
                let at = format!("{at}.circle");
                let mut ok = self.point(c.center, &format!("{at}.center"));
                ok &= self.ensure(
                    c.radius.is_finite() && c.radius > 0.0 && c.radius <= COORD_LIMIT,
                    &format!("{at}.radius"),
                    || {
                        format!(
                            "{}: expected a radius in metres > 0 and at most {}",
                            num(c.radius),
                            num(COORD_LIMIT)
                        )
                    },
                );
                if c.profile.is_some() && !profile_ok {
                    self.push(
                        &format!("{at}.profile"),
                        "a profile is only allowed on height and discomfort circles".into(),
                    );
                    ok = false;
                }
                ok
            }
            ShapeRef::Polygon(p) => {
                let at = format!("{at}.polygon.points");
                let mut ok = self.ensure(p.points.len() >= 3, &at, || {
                    format!("{} point(s): expected at least 3", p.points.len())
                });
                for (k, q) in p.points.iter().enumerate() {
                    ok &= self.point(*q, &format!("{at}[{k}]"));
                }
                ok
            }
        };
        ok.then_some(shape)
    }

    /// A mask for an area shape; reports a shape that covers no cell centre.
    fn area_mask(&mut self, shape: ShapeRef<'_>, grid: &Grid, at: &str) -> Option<CellMask> {
        let mask = shape_cells(shape, grid);
        let ok = !mask.is_empty();
        self.ensure(ok, at, || {
            format!(
                "covers no cell centre: expected a shape inside the grid [0, {}] x [0, {}] m",
                num(grid.width()),
                num(grid.height())
            )
        });
        ok.then_some(mask)
    }

    /// Builds one layer's values (raster, then shapes); `None` when the grid is unusable or the
    /// layer has a problem. Shapes are checked even without a grid.
    fn layer(
        &mut self,
        layer: Option<&Layer>,
        kind: LayerKind,
        grid: Option<&Grid>,
        base_dir: &Path,
    ) -> Option<Array2<f64>> {
        let name = match kind {
            LayerKind::Height => "height",
            LayerKind::Obstacles => "obstacles",
            LayerKind::Discomfort => "discomfort",
        };
        let at = format!("layers.{name}");
        let before = self.errors.len();
        let empty = Layer::default();
        let layer = layer.unwrap_or(&empty);
        let mut values = grid.map(|g| Array2::<f64>::zeros(g.shape()));
        if let Some(raster) = &layer.raster {
            let at = format!("{at}.raster");
            let from_file = self.raster(raster, kind, grid, base_dir, &at);
            if let (Some(v), Some(r)) = (values.as_mut(), from_file) {
                *v = r;
            }
        }
        for (k, s) in layer.shapes.iter().enumerate() {
            let at = format!("{at}.shapes[{k}]");
            let profile_ok = kind != LayerKind::Obstacles;
            let shape = self.shape(s, &at, profile_ok);
            let mut ok = self.number(s.value, &format!("{at}.value"), |_| true, "");
            if kind == LayerKind::Discomfort {
                ok &= self.ensure(s.value >= 0.0, &format!("{at}.value"), || {
                    format!("{}: expected discomfort >= 0", num(s.value))
                });
            }
            if kind == LayerKind::Obstacles && s.op != ShapeOp::Set {
                self.push(
                    &format!("{at}.op"),
                    format!("{:?}: expected \"set\" (obstacles are on or off)", s.op),
                );
                ok = false;
            }
            let (Some(shape), Some(values), Some(grid), true) = (shape, values.as_mut(), grid, ok) else {
                continue;
            };
            let mut covered = false;
            let value = if kind == LayerKind::Obstacles {
                (s.value != 0.0) as u8 as f64
            } else {
                s.value
            };
            for_each_cell(shape, grid, |r, c, factor| {
                covered = true;
                let v = &mut values[[r, c]];
                let new = value * factor;
                *v = match s.op {
                    ShapeOp::Set => new,
                    ShapeOp::Add => *v + new,
                    ShapeOp::Max => v.max(new),
                };
            });
            self.ensure(covered, &at, || {
                format!(
                    "covers no cell centre: expected a shape inside the grid [0, {}] x [0, {}] m",
                    num(grid.width()),
                    num(grid.height())
                )
            });
        }
        if let Some(v) = &values
            && kind == LayerKind::Height
            && let Some(((r, c), x)) = v.indexed_iter().find(|(_, x)| x.abs() > VALUE_LIMIT)
        {
            self.push(
                &at,
                format!(
                    "height {} at row {r}, column {c} after adding the shapes: expected at most {} in magnitude",
                    num(*x),
                    num(VALUE_LIMIT)
                ),
            );
        }
        values.filter(|_| self.errors.len() == before)
    }

    /// Reads and checks a raster; obstacles come back as 0/1.
    fn raster(
        &mut self,
        raster: &Raster,
        kind: LayerKind,
        grid: Option<&Grid>,
        base_dir: &Path,
        at: &str,
    ) -> Option<Array2<f64>> {
        let Some(file_kind) = raster_kind(&raster.file) else {
            self.push(
                &format!("{at}.file"),
                format!("{}: expected a .png or .npy file name", quoted(&raster.file)),
            );
            return None;
        };
        if !self.options.allow_outside_rasters
            && let Some(why) = super::raster::outside_reason(&raster.file, base_dir)
        {
            // Said before the file is looked at: the message must not tell whether a file
            // outside the map's folder exists.
            self.push(
                &format!("{at}.file"),
                format!(
                    "{}: {why}: a map reads rasters only from its own folder and below; pass \
                     --allow-outside-rasters to the command to read it",
                    quoted(&raster.file)
                ),
            );
            return None;
        }
        if let Some(range) = raster.range {
            if file_kind == RasterKind::Npy {
                self.push(
                    &format!("{at}.range"),
                    "given for a .npy raster: expected no range (array values are used as they are)".into(),
                );
                return None;
            }
            let ok = self.number(range[0], &format!("{at}.range[0]"), |_| true, "")
                & self.number(range[1], &format!("{at}.range[1]"), |_| true, "");
            if !ok {
                return None;
            }
            if kind == LayerKind::Discomfort {
                let ok = self.ensure(range[0] >= 0.0 && range[1] >= 0.0, &format!("{at}.range"), || {
                    format!("[{}, {}]: expected discomfort >= 0", num(range[0]), num(range[1]))
                });
                if !ok {
                    return None;
                }
            }
        }
        let grid = grid?;
        let values = match read_raster(raster, file_kind, base_dir, grid, self.file, at) {
            Ok(v) => v,
            Err(e) => {
                self.errors.push(e);
                return None;
            }
        };
        let bad = values.indexed_iter().find(|(_, v)| match kind {
            LayerKind::Discomfort => !(v.is_finite() && (0.0..=VALUE_LIMIT).contains(*v)),
            _ => !(v.is_finite() && v.abs() <= VALUE_LIMIT),
        });
        if let Some(((r, c), v)) = bad {
            let expected = match kind {
                LayerKind::Discomfort => format!("finite discomfort in [0, {}]", num(VALUE_LIMIT)),
                _ => format!("finite values at most {} in magnitude", num(VALUE_LIMIT)),
            };
            self.push(
                &format!("{at}.file"),
                format!(
                    "{} has {} at row {r}, column {c}: expected {expected}",
                    quoted(&raster.file),
                    num(*v)
                ),
            );
            return None;
        }
        Some(match (kind, file_kind) {
            (LayerKind::Obstacles, RasterKind::Png) => values.mapv(|v| (v >= 0.5) as u8 as f64),
            (LayerKind::Obstacles, RasterKind::Npy) => values.mapv(|v| (v != 0.0) as u8 as f64),
            _ => values,
        })
    }

    /// The distribution of a group's `speed` (at `at`) and its range `(min, max)`; errors for
    /// a half-given normal, a normal that cannot be drawn, an unknown RiMEA population or one
    /// given with a range of its own.
    fn speed_distribution(&mut self, s: &SpeedRange, at: &str) -> (SpeedDistribution, (f64, f64)) {
        if let Some(name) = &s.rimea {
            let Some(population) = RimeaPopulation::from_name(name) else {
                self.push(
                    &format!("{at}.rimea"),
                    format!(
                        "{}: expected a RiMEA population: {}",
                        quoted(name),
                        RimeaPopulation::names().join(", ")
                    ),
                );
                return (SpeedDistribution::Uniform, (s.min, s.max));
            };
            let given = [
                ("min", s.min != DEFAULT_SPEED),
                ("max", s.max != DEFAULT_SPEED),
                ("mean", s.mean.is_some()),
                ("sd", s.sd.is_some()),
            ];
            for (key, given) in given {
                self.ensure(!given, &format!("{at}.{key}"), || {
                    format!(
                        "given with `rimea` {}: expected `rimea` alone (the population's table sets the speeds)",
                        quoted(name)
                    )
                });
            }
            return (SpeedDistribution::Rimea(population), population.range());
        }
        match (s.mean, s.sd) {
            (None, None) => (SpeedDistribution::Uniform, (s.min, s.max)),
            (Some(mean), Some(sd)) => {
                let ok = self.number(sd, &format!("{at}.sd"), |v| v > 0.0, "> 0")
                    & self.number(mean, &format!("{at}.mean"), |v| v > 0.0, "> 0");
                if ok && s.min <= s.max {
                    self.ensure((s.min..=s.max).contains(&mean), &format!("{at}.mean"), || {
                        format!(
                            "{} m/s: expected a mean inside [min, max] = [{}, {}] m/s (the draws are \
                             truncated to that range; the defaults of both are {} m/s)",
                            num(mean),
                            num(s.min),
                            num(s.max),
                            num(DEFAULT_SPEED)
                        )
                    });
                }
                (SpeedDistribution::Normal { mean, sd }, (s.min, s.max))
            }
            (Some(_), None) | (None, Some(_)) => {
                let missing = if s.mean.is_none() { "mean" } else { "sd" };
                self.push(
                    &format!("{at}.{missing}"),
                    "missing: a normal distribution needs both `mean` and `sd` (m/s)".to_string(),
                );
                (SpeedDistribution::Uniform, (s.min, s.max))
            }
        }
    }

    fn group(
        &mut self,
        g: &GroupSpec,
        index: usize,
        at: &str,
        grid: Option<&Grid>,
        obstacle: Option<&Array2<bool>>,
    ) -> Option<Group> {
        let before = self.errors.len();
        self.ensure(!g.name.trim().is_empty(), &format!("{at}.name"), || {
            format!("{}: expected a non-empty name", quoted(&g.name))
        });
        if let Some(message) = name_problem(&g.name) {
            self.push(&format!("{at}.name"), message);
        }
        let color = match &g.color {
            None => PALETTE[index % PALETTE.len()],
            Some(s) => match parse_color(s) {
                Some(c) => c,
                None => {
                    self.push(
                        &format!("{at}.color"),
                        format!("{}: expected \"#rrggbb\" (hexadecimal)", quoted(s)),
                    );
                    [0, 0, 0]
                }
            },
        };
        let (speed_distribution, (speed_min, speed_max)) =
            self.speed_distribution(&g.speed, &format!("{at}.speed"));
        let speed_ok = g.speed.rimea.is_none()
            && self.number(g.speed.min, &format!("{at}.speed.min"), |v| v > 0.0, "> 0")
                & self.number(g.speed.max, &format!("{at}.speed.max"), |v| v > 0.0, "> 0");
        if speed_ok {
            self.ensure(g.speed.min <= g.speed.max, &format!("{at}.speed.max"), || {
                format!(
                    "{}: expected at least speed.min ({})",
                    num(g.speed.max),
                    num(g.speed.min)
                )
            });
            self.ensure(g.speed.max <= MAX_WALK_SPEED, &format!("{at}.speed.max"), || {
                format!(
                    "{} m/s: expected at most {} m/s",
                    num(g.speed.max),
                    num(MAX_WALK_SPEED)
                )
            });
        }
        self.ensure(
            g.radius.is_finite() && (MIN_RADIUS..=MAX_RADIUS).contains(&g.radius),
            &format!("{at}.radius"),
            || {
                format!(
                    "{} m: expected a body radius from {} to {} m",
                    num(g.radius),
                    num(MIN_RADIUS),
                    num(MAX_RADIUS)
                )
            },
        );
        if let Some(b) = &g.boids {
            self.boids(b, &format!("{at}.boids"));
        }
        if let Some(o) = &g.orca {
            self.orca(o, &format!("{at}.orca"));
        }
        // A flocking group (with boids) may have no goal: it swims about (a fish school).
        self.ensure(
            !g.goals.is_empty() || g.boids.is_some(),
            &format!("{at}.goals"),
            || "is empty: expected at least one goal area (only a group with boids may have none)".into(),
        );

        let mut goals = Vec::new();
        for (k, goal) in g.goals.iter().enumerate() {
            let at = format!("{at}.goals[{k}]");
            if let Some(message) = goal.name.as_deref().and_then(name_problem) {
                self.push(&format!("{at}.name"), message);
            }
            let shape = self.shape(goal, &at, false);
            let mut ok = true;
            if let Some(w) = goal.width {
                ok = self.ensure(
                    w.is_finite() && w > 0.0 && w <= COORD_LIMIT,
                    &format!("{at}.width"),
                    || {
                        format!(
                            "{} m: expected a width > 0 and at most {} m",
                            num(w),
                            num(COORD_LIMIT)
                        )
                    },
                );
            }
            let (Some(shape), Some(grid), Some(obstacle), true) = (shape, grid, obstacle, ok) else {
                continue;
            };
            let Some(mask) = self.area_mask(shape, grid, &at) else {
                continue;
            };
            let problem = crate::scene::goal_problem(&mask, obstacle);
            let raster_note = self.obstacle_raster.as_ref().map_or_else(String::new, |r| {
                format!(
                    " (the walls come from the raster {} of layers.obstacles: check its `range`, \
                     which pixels are walls, and that the goal lies in an opening of the picture)",
                    quoted(r)
                )
            });
            if let Some(problem) = problem {
                self.push(&at, format!("{problem}{raster_note}"));
            }
            goals.push(Area {
                name: goal
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("{} goal {k}", g.name)),
                mask,
                width: goal.width.unwrap_or_else(|| default_width(shape, grid)),
            });
        }

        let mut spawns = Vec::new();
        for (k, spawn) in g.spawns.iter().enumerate() {
            let at = format!("{at}.spawns[{k}]");
            if let Some(message) = spawn.name.as_deref().and_then(name_problem) {
                self.push(&format!("{at}.name"), message);
            }
            let shape = self.shape(spawn, &at, false);
            let premovement = spawn.premovement.map_or([0.0, 0.0], |p| [p.min, p.max]);
            if let Some(p) = spawn.premovement {
                let (min_at, max_at) = (format!("{at}.premovement.min"), format!("{at}.premovement.max"));
                let range = (0.0, MAX_PREMOVEMENT);
                let ok = self.number_within(p.min, &min_at, range, "seconds")
                    & self.number_within(p.max, &max_at, range, "seconds");
                if ok {
                    self.ensure(p.min <= p.max, &max_at, || {
                        format!(
                            "{} s: expected at least premovement.min ({} s)",
                            num(p.max),
                            num(p.min)
                        )
                    });
                }
            }
            let (Some(shape), Some(grid), Some(obstacle)) = (shape, grid, obstacle) else {
                continue;
            };
            let Some(mask) = self.area_mask(shape, grid, &at) else {
                continue;
            };
            let free = mask.cells().filter(|&rc| !obstacle[rc]).count();
            let name = spawn
                .name
                .clone()
                .unwrap_or_else(|| format!("{} spawn {k}", g.name));
            self.ensure(spawn.count <= free, &format!("{at}.count"), || {
                // Say how many bodies fit, the number a user can act on; one agent per free cell
                // is the rule only where cells are larger than bodies.
                let name = crate::text::truncate_for_message(&name);
                let fit = crate::lattice::area_capacity(grid, &mask, obstacle, g.radius);
                let m2 = crate::lattice::square_metres(free as f64 * grid.cell_size * grid.cell_size);
                if fit > 0 && fit < free {
                    format!(
                        "{}: the area '{name}' ({m2} m² of free cells) holds at most {fit} agents of radius {} m \
                         without overlap: lower the count to {fit} or enlarge the area",
                        spawn.count,
                        num(g.radius)
                    )
                } else {
                    format!(
                        "{}: the area '{name}' ({m2} m², {free} free cells) takes at most {free} agents, one per \
                         free (non-obstacle) cell: lower the count to {free} or enlarge the area",
                        spawn.count,
                    )
                }
            });
            spawns.push(Spawn {
                area: Area {
                    name,
                    mask,
                    width: default_width(shape, grid),
                },
                count: spawn.count,
                premovement,
            });
        }
        if self.errors.len() != before {
            return None;
        }
        let (Some(grid), Some(obstacle)) = (grid, obstacle) else {
            return None;
        };

        // Every spawn area must reach a goal: flood fill from the free goal cells. A group
        // without goals (flocking only) has nowhere to reach.
        if !goals.is_empty() {
            let mut goal_mask = Array2::from_elem(grid.shape(), false);
            for a in &goals {
                a.mask.or_into(&mut goal_mask);
            }
            let reached = flood_fill(grid, obstacle, &goal_mask);
            for (k, s) in spawns.iter().enumerate() {
                let ok = s.area.mask.cells().any(|rc| reached[rc]);
                self.ensure(ok, &format!("{at}.spawns[{k}]"), || {
                    format!(
                        "no goal of group {} can be reached from this area: expected a path over free \
                         cells (4-connected) to a goal cell",
                        quoted(&g.name)
                    )
                });
            }
        }
        (self.errors.len() == before).then(|| Group {
            name: g.name.clone(),
            color,
            goals,
            spawns,
            speed_min,
            speed_max,
            speed_distribution,
            radius: g.radius,
            boids: g.boids.clone(),
            orca: g.orca.clone().unwrap_or_default(),
        })
    }
}

/// `"#rrggbb"` as sRGB bytes (`None` for anything else).
pub fn parse_color(s: &str) -> Option<[u8; 3]> {
    let hex = s.strip_prefix('#')?;
    if hex.len() != 6 || !hex.is_ascii() {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some([byte(0)?, byte(2)?, byte(4)?])
}

/// Cells connected to a free cell of `sources` by 4-connected steps over free cells.
pub(crate) fn flood_fill(grid: &Grid, obstacle: &Array2<bool>, sources: &Array2<bool>) -> Array2<bool> {
    flood_from(grid, obstacle, sources, |_, to| !obstacle[to])
}

/// Cells connected to a free cell of `sources` by 4-connected steps from a cell to a neighbour
/// that `may_step(from, to)` allows.
pub(crate) fn flood_from(
    grid: &Grid,
    obstacle: &Array2<bool>,
    sources: &Array2<bool>,
    may_step: impl Fn((usize, usize), (usize, usize)) -> bool,
) -> Array2<bool> {
    let mut reached = Array2::from_elem(grid.shape(), false);
    let mut queue = VecDeque::new();
    for ((r, c), &s) in sources.indexed_iter() {
        if s && !obstacle[[r, c]] {
            reached[[r, c]] = true;
            queue.push_back((r, c));
        }
    }
    while let Some((r, c)) = queue.pop_front() {
        for d in Dir::ALL {
            if let Some(to) = grid.neighbor(r, c, d)
                && !reached[to]
                && may_step((r, c), to)
            {
                reached[to] = true;
                queue.push_back(to);
            }
        }
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_parse_strictly() {
        assert_eq!(parse_color("#ff8000"), Some([255, 128, 0]));
        assert_eq!(parse_color("#FF8000"), Some([255, 128, 0]));
        assert_eq!(parse_color("ff8000"), None);
        assert_eq!(parse_color("#ff80"), None);
        assert_eq!(parse_color("#gg8000"), None);
        assert_eq!(parse_color("#ff800é"), None);
    }

    #[test]
    fn flood_fill_stops_at_walls_and_ignores_diagonals() {
        let g = Grid::new(5, 3, 1.0);
        let mut obstacle = Array2::from_elem(g.shape(), false);
        // A wall at column 2, and a diagonal-only gap is not a gap.
        for r in 0..3 {
            obstacle[[r, 2]] = true;
        }
        let mut src = Array2::from_elem(g.shape(), false);
        src[[0, 0]] = true;
        let reached = flood_fill(&g, &obstacle, &src);
        assert_eq!(reached.iter().filter(|&&b| b).count(), 6);
        assert!(!reached[[0, 3]]);
        obstacle[[1, 2]] = false;
        let reached = flood_fill(&g, &obstacle, &src);
        assert_eq!(reached.iter().filter(|&&b| b).count(), 13);
        // A blocked source reaches nothing.
        obstacle[[0, 0]] = true;
        assert_eq!(flood_fill(&g, &obstacle, &src).iter().filter(|&&b| b).count(), 0);
    }
}
