//! The checks and the building of a map's layers: each shape's geometry, area masks, and the
//! height, obstacle and discomfort values from a raster and shapes.

use super::{Checker, LayerKind, num};
use crate::grid::Grid;
use crate::map::format::{Layer, Raster, ShapeOp, ShapeRef, Shaped};
use crate::map::raster::{RasterKind, for_each_cell, raster_kind, read_raster, shape_cells};
use crate::map::{COORD_LIMIT, VALUE_LIMIT};
use crate::scene::CellMask;
use crate::text::quoted;
use ndarray::Array2;
use std::path::Path;

impl Checker<'_> {
    /// Checks a shape's geometry; `profile_ok` tells whether a circle may carry a profile.
    pub(super) fn shape<'s>(
        &mut self,
        s: &'s impl Shaped,
        at: &str,
        profile_ok: bool,
    ) -> Option<ShapeRef<'s>> {
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
    pub(super) fn area_mask(&mut self, shape: ShapeRef<'_>, grid: &Grid, at: &str) -> Option<CellMask> {
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
    pub(super) fn layer(
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
    pub(super) fn raster(
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
            && let Some(why) = crate::map::raster::outside_reason(&raster.file, base_dir)
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
}
