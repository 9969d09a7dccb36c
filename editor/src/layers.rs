//! The raster layers of the map view, composed on the CPU into one image.
//!
//! The image has `UPSAMPLE` pixels per cell (so isolines, interpolated between cell centres,
//! come out smooth on small maps); image row 0 is the top of the map (the highest y). Vector
//! overlays (areas, gradient arrows, agents) are drawn by the viewport on top.

use crate::doc::Document;
use crate::recompute::FieldSet;
use crowdfield::export::Colormap;
use ndarray::{Array2, ArrayView2};

/// The composed image is at least this many pixels across its longer side (when the grid is
/// smaller, each cell gets several pixels): enough for smooth isolines on a laptop screen.
pub const TARGET_IMAGE_SIZE: usize = 512;
/// At most this many pixels per cell, so tiny test maps do not make huge images.
pub const MAX_UPSAMPLE: usize = 8;
/// Discomfort at which the discomfort tint is at full opacity.
pub const DISCOMFORT_FULL: f32 = 4.0;
/// Roughly how many isoline intervals span the potential's finite range.
pub const ISOLINE_INTERVALS: f64 = 12.0;
/// Sun direction for hill shading: from the north-west, 45 degrees up (the cartographic
/// convention, which reads as relief rather than as valleys).
pub const SUN: [f32; 3] = [-0.5, 0.5, std::f32::consts::FRAC_1_SQRT_2];
/// Vertical exaggeration of the hill shading: 1 shades the true slopes, which for walkable
/// terrain already read clearly (3 saturated the demo hill).
pub const SHADE_EXAGGERATION: f32 = 1.0;

/// Colour of obstacles.
pub const OBSTACLE_RGB: [u8; 3] = [48, 48, 52];
/// Colour of unreachable cells under the potential layer.
pub const UNREACHABLE_RGB: [u8; 3] = [150, 150, 150];
/// Colour of the discomfort tint.
pub const DISCOMFORT_RGB: [u8; 3] = [170, 40, 160];

/// The field that colours the map, one at a time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FieldLayer {
    /// Terrain colours only.
    #[default]
    None,
    /// The selected group's potential.
    Potential,
    /// The density.
    Density,
    /// The walking speed (mean over the four directions).
    Speed,
}

impl FieldLayer {
    /// Every choice, in panel order.
    pub const ALL: [FieldLayer; 4] = [
        FieldLayer::None,
        FieldLayer::Potential,
        FieldLayer::Density,
        FieldLayer::Speed,
    ];

    /// Label of the choice (tests find the radio buttons by these).
    pub fn label(self) -> &'static str {
        match self {
            FieldLayer::None => "No field",
            FieldLayer::Potential => "Potential",
            FieldLayer::Density => "Density",
            FieldLayer::Speed => "Speed",
        }
    }
}

/// Which layers are shown.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerVisibility {
    /// Hill-shaded terrain.
    pub terrain: bool,
    /// Obstacles.
    pub obstacles: bool,
    /// Discomfort tint.
    pub discomfort: bool,
    /// Isolines of the potential.
    pub isolines: bool,
    /// Gradient arrows of the selected group.
    pub arrows: bool,
    /// Goal and spawn areas.
    pub areas: bool,
    /// The colouring field.
    pub field: FieldLayer,
}

impl Default for LayerVisibility {
    fn default() -> Self {
        Self {
            terrain: true,
            obstacles: true,
            discomfort: true,
            isolines: true,
            arrows: false,
            areas: true,
            field: FieldLayer::Potential,
        }
    }
}

/// An RGBA image, row 0 at the top.
#[derive(Clone, Debug, PartialEq)]
pub struct RgbaImage {
    /// Width, pixels.
    pub width: usize,
    /// Height, pixels.
    pub height: usize,
    /// Pixels, row-major from the top-left.
    pub pixels: Vec<[u8; 4]>,
}

/// Pixels per cell for a grid of this size.
pub fn upsample(cols: usize, rows: usize) -> usize {
    (TARGET_IMAGE_SIZE / cols.max(rows).max(1)).clamp(1, MAX_UPSAMPLE)
}

/// A "nice" step (1, 2 or 5 times a power of ten) near `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let n = if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    };
    n * p
}

/// The finite range of a field, `None` when nothing is finite; a flat field gets `(v, v + 1)`.
pub fn finite_range<T: Copy + Into<f64>>(a: ArrayView2<T>) -> Option<(f64, f64)> {
    let (lo, hi) = a
        .iter()
        .map(|&v| v.into())
        .filter(|v: &f64| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
    (lo <= hi).then_some(if hi > lo { (lo, hi) } else { (lo, lo + 1.0) })
}

/// Bilinear interpolation at cell-centre coordinates `(u, v)` (column, row), clamped to the
/// grid; where a corner is not finite, the nearest cell's value.
fn bilinear(a: ArrayView2<f64>, u: f64, v: f64) -> f64 {
    let (rows, cols) = a.dim();
    let u = u.clamp(0.0, (cols - 1) as f64);
    let v = v.clamp(0.0, (rows - 1) as f64);
    let (c0, r0) = (u.floor() as usize, v.floor() as usize);
    let (c1, r1) = ((c0 + 1).min(cols - 1), (r0 + 1).min(rows - 1));
    let (fu, fv) = (u - c0 as f64, v - r0 as f64);
    let corners = [
        (a[(r0, c0)], (1.0 - fu) * (1.0 - fv)),
        (a[(r0, c1)], fu * (1.0 - fv)),
        (a[(r1, c0)], (1.0 - fu) * fv),
        (a[(r1, c1)], fu * fv),
    ];
    if corners.iter().all(|&(q, w)| w == 0.0 || q.is_finite()) {
        corners
            .iter()
            .filter(|&&(_, w)| w > 0.0)
            .map(|&(q, w)| q * w)
            .sum()
    } else {
        a[(v.round() as usize, u.round() as usize)]
    }
}

/// Terrain base colour for height `h` within `[lo, hi]`: pale green low, sand high.
fn terrain_rgb(t: f32) -> [f32; 3] {
    let low = [206.0, 222.0, 196.0];
    let high = [222.0, 200.0, 160.0];
    let t = t.clamp(0.0, 1.0);
    [0, 1, 2].map(|k| low[k] + t * (high[k] - low[k]))
}

/// Hill-shade factor of every cell, around 1 on flat ground.
pub fn hillshade(height: ArrayView2<f32>, cell_size: f64) -> Array2<f32> {
    let (rows, cols) = height.dim();
    let h = cell_size as f32;
    let flat = SUN[2];
    Array2::from_shape_fn((rows, cols), |(r, c)| {
        let at = |rr: usize, cc: usize| height[(rr, cc)];
        let (cl, cr) = (c.saturating_sub(1), (c + 1).min(cols - 1));
        let (rd, ru) = (r.saturating_sub(1), (r + 1).min(rows - 1));
        let dx = (at(r, cr) - at(r, cl)) / (h * (cr - cl).max(1) as f32);
        let dy = (at(ru, c) - at(rd, c)) / (h * (ru - rd).max(1) as f32);
        let n = [-dx * SHADE_EXAGGERATION, -dy * SHADE_EXAGGERATION, 1.0];
        let len = (n[0] * n[0] + n[1] * n[1] + 1.0).sqrt();
        let lit = (n[0] * SUN[0] + n[1] * SUN[1] + n[2] * SUN[2]) / len;
        (lit.max(0.0) / flat).clamp(0.3, 1.4)
    })
}

/// Composes the visible raster layers into one image.
pub fn compose(doc: &Document, fields: Option<&FieldSet>, vis: &LayerVisibility, group: usize) -> RgbaImage {
    let (rows, cols) = doc.grid.shape();
    let up = upsample(cols, rows);
    let (w, h) = (cols * up, rows * up);
    let mut pixels = vec![[0u8, 0, 0, 255]; w * h];
    if rows == 0 || cols == 0 {
        return RgbaImage {
            width: w,
            height: h,
            pixels,
        };
    }
    let shade = vis
        .terrain
        .then(|| hillshade(doc.height.view(), doc.grid.cell_size));
    let (hlo, hhi) = finite_range(doc.height.view()).unwrap_or((0.0, 1.0));
    let phi = fields.and_then(|f| f.groups.get(group)).map(|g| g.phi.view());
    // The colouring field as values in [0, 1] per cell, NaN where it has no value.
    let colouring: Option<(Array2<f64>, Colormap)> = match (vis.field, fields) {
        (FieldLayer::Potential, Some(_)) => phi.map(|p| {
            let (lo, hi) = finite_range(p).unwrap_or((0.0, 1.0));
            (
                p.mapv(|v| {
                    if v.is_finite() {
                        (v - lo) / (hi - lo)
                    } else {
                        f64::NAN
                    }
                }),
                Colormap::Viridis,
            )
        }),
        (FieldLayer::Density, Some(f)) => {
            let hi = f.density.iter().fold(1.0f32, |m, &v| m.max(v)) as f64;
            Some((f.density.mapv(|v| v as f64 / hi), Colormap::YellowOrangeRed))
        }
        (FieldLayer::Speed, Some(f)) => {
            let hi = f.speed.iter().fold(1e-6f32, |m, &v| m.max(v)) as f64;
            Some((f.speed.mapv(|v| v as f64 / hi), Colormap::Cividis))
        }
        _ => None,
    };
    for py in 0..h {
        let r = rows - 1 - py / up;
        for px in 0..w {
            let c = px / up;
            let mut rgb = match &colouring {
                Some((vals, map)) => {
                    let t = vals[(r, c)];
                    if t.is_nan() {
                        UNREACHABLE_RGB.map(|v| v as f32)
                    } else {
                        map.rgb(t).map(|v| v as f32)
                    }
                }
                None => terrain_rgb(((doc.height[(r, c)] as f64 - hlo) / (hhi - hlo)) as f32),
            };
            if let Some(s) = &shade {
                let k = s[(r, c)];
                rgb = rgb.map(|v| (v * k).min(255.0));
            }
            if vis.discomfort {
                let a = (doc.discomfort[(r, c)] / DISCOMFORT_FULL).clamp(0.0, 1.0) * 0.7;
                rgb = [0, 1, 2].map(|k| rgb[k] + a * (DISCOMFORT_RGB[k] as f32 - rgb[k]));
            }
            if vis.obstacles && doc.obstacle[(r, c)] {
                rgb = OBSTACLE_RGB.map(|v| v as f32);
            }
            pixels[py * w + px] = [rgb[0] as u8, rgb[1] as u8, rgb[2] as u8, 255];
        }
    }
    if vis.isolines
        && let Some(p) = phi
        && let Some((lo, hi)) = finite_range(p)
    {
        draw_isolines(
            &mut pixels,
            w,
            h,
            up,
            p,
            nice_step((hi - lo) / ISOLINE_INTERVALS),
            vis,
            doc,
        );
    }
    RgbaImage {
        width: w,
        height: h,
        pixels,
    }
}

/// Darkens the pixels where the interpolated potential crosses a multiple of `step`.
#[allow(clippy::too_many_arguments)]
fn draw_isolines(
    pixels: &mut [[u8; 4]],
    w: usize,
    h: usize,
    up: usize,
    phi: ArrayView2<f64>,
    step: f64,
    vis: &LayerVisibility,
    doc: &Document,
) {
    let rows = phi.dim().0;
    // Band index of every pixel; i64::MIN where the potential is not finite.
    let band: Vec<i64> = (0..h)
        .flat_map(|py| (0..w).map(move |px| (px, py)))
        .map(|(px, py)| {
            let u = (px as f64 + 0.5) / up as f64 - 0.5;
            let v = (rows as f64 - (py as f64 + 0.5) / up as f64) - 0.5;
            let p = bilinear(phi, u, v);
            if p.is_finite() {
                (p / step).floor() as i64
            } else {
                i64::MIN
            }
        })
        .collect();
    for py in 0..h {
        for px in 0..w {
            let b = band[py * w + px];
            if b == i64::MIN {
                continue;
            }
            let right = if px + 1 < w { band[py * w + px + 1] } else { b };
            let below = if py + 1 < h { band[(py + 1) * w + px] } else { b };
            let cell = (rows - 1 - py / up, px / up);
            let hidden = vis.obstacles && doc.obstacle[cell];
            if !hidden && ((right != b && right != i64::MIN) || (below != b && below != i64::MIN)) {
                let p = &mut pixels[py * w + px];
                for k in 0..3 {
                    p[k] = (p[k] as f32 * 0.35) as u8;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0.9), 1.0);
        assert_eq!(nice_step(2.7), 2.0);
        assert_eq!(nice_step(40.0), 50.0);
        assert_eq!(nice_step(0.0), 1.0);
    }

    #[test]
    fn bilinear_interpolates_and_falls_back_near_infinity() {
        let a = array![[0.0, 1.0], [2.0, f64::INFINITY]];
        assert_eq!(bilinear(a.view(), 0.5, 0.0), 0.5);
        assert_eq!(bilinear(a.view(), 0.0, 0.5), 1.0);
        assert_eq!(bilinear(a.view(), 0.9, 0.9), f64::INFINITY);
        assert_eq!(bilinear(a.view(), 0.2, 0.1), 0.0);
    }

    #[test]
    fn flat_ground_is_unshaded_and_a_north_west_slope_is_lit() {
        let flat = Array2::<f32>::zeros((5, 5));
        assert!(
            hillshade(flat.view(), 1.0)
                .iter()
                .all(|&k| (k - 1.0).abs() < 1e-6)
        );
        // Height rising to the south-east: the slope faces the north-west sun and is lit.
        let ramp = Array2::from_shape_fn((5, 5), |(r, c)| c as f32 * 0.2 - r as f32 * 0.2);
        assert!(hillshade(ramp.view(), 1.0)[(2, 2)] > 1.0);
        assert!(hillshade(ramp.mapv(|v| -v).view(), 1.0)[(2, 2)] < 1.0);
    }

    #[test]
    fn image_rows_are_flipped_and_obstacles_drawn() {
        let mut doc = Document::new("t", 4, 2, 1.0);
        doc.obstacle[(0, 0)] = true; // bottom-left cell
        let vis = LayerVisibility {
            field: FieldLayer::None,
            ..Default::default()
        };
        let img = compose(&doc, None, &vis, 0);
        let up = upsample(4, 2);
        assert_eq!((img.width, img.height), (4 * up, 2 * up));
        let bottom_left = img.pixels[(img.height - 1) * img.width];
        assert_eq!(&bottom_left[..3], &OBSTACLE_RGB);
        assert_ne!(&img.pixels[0][..3], &OBSTACLE_RGB, "top-left is free");
    }
}
