//! The raster layers of the map view, composed on the CPU into one image.
//!
//! The image has `UPSAMPLE` pixels per cell (so isolines, interpolated between cell centres,
//! come out smooth on small maps); image row 0 is the top of the map (the highest y). Vector
//! overlays (areas, gradient arrows, agents) are drawn by the viewport on top.
//!
//! The interface keeps the image in a [`LayerCache`]: an edit recomposes only the cells it
//! changed, and the isoline bands (the costly, per-pixel part) come with the fields from the
//! recompute thread ([`IsolineBands`]).

use crate::doc::Document;
use crate::recompute::FieldSet;
use crate::simrun::PlaceMaps;
use crowdfield::export::Colormap;
use crowdfield::run::planner::LOS_COLORS;
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
/// Isoline pixels keep this fraction of their colour: dark enough to read on every colour map.
pub const ISOLINE_DARKENING: f32 = 0.35;
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
/// Colour of cells still occupied at the end of a run on the clear-time layer (the report's
/// clear-time map uses the same).
pub const NOT_CLEAR_RGB: [u8; 3] = [0, 0, 0];

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
    /// The worst Fruin level of service each place reached in the run (after a run).
    LevelOfService,
    /// The time each place was clear, the RSET map (after a run).
    ClearTime,
}

impl FieldLayer {
    /// Every choice, in panel order.
    pub const ALL: [FieldLayer; 6] = [
        FieldLayer::None,
        FieldLayer::Potential,
        FieldLayer::Density,
        FieldLayer::Speed,
        FieldLayer::LevelOfService,
        FieldLayer::ClearTime,
    ];

    /// Label of the choice (tests find the radio buttons by these).
    pub fn label(self) -> &'static str {
        match self {
            FieldLayer::None => "No field",
            FieldLayer::Potential => "Potential",
            FieldLayer::Density => "Density",
            FieldLayer::Speed => "Speed",
            FieldLayer::LevelOfService => "Level of service",
            FieldLayer::ClearTime => "Clear time (RSET)",
        }
    }

    /// Whether the layer shows what a run recorded ([`PlaceMaps`]) rather than the fields.
    pub fn from_run(self) -> bool {
        matches!(self, FieldLayer::LevelOfService | FieldLayer::ClearTime)
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

/// Hill-shade factor of cell `(r, c)`, around 1 on flat ground (central differences, one-sided
/// at the edges).
pub fn hillshade_at(height: ArrayView2<f32>, cell_size: f64, r: usize, c: usize) -> f32 {
    let (rows, cols) = height.dim();
    let h = cell_size as f32;
    let flat = SUN[2];
    let at = |rr: usize, cc: usize| height[(rr, cc)];
    let (cl, cr) = (c.saturating_sub(1), (c + 1).min(cols - 1));
    let (rd, ru) = (r.saturating_sub(1), (r + 1).min(rows - 1));
    let dx = (at(r, cr) - at(r, cl)) / (h * (cr - cl).max(1) as f32);
    let dy = (at(ru, c) - at(rd, c)) / (h * (ru - rd).max(1) as f32);
    let n = [-dx * SHADE_EXAGGERATION, -dy * SHADE_EXAGGERATION, 1.0];
    let len = (n[0] * n[0] + n[1] * n[1] + 1.0).sqrt();
    let lit = (n[0] * SUN[0] + n[1] * SUN[1] + n[2] * SUN[2]) / len;
    (lit.max(0.0) / flat).clamp(0.3, 1.4)
}

/// Hill-shade factor of every cell, around 1 on flat ground.
pub fn hillshade(height: ArrayView2<f32>, cell_size: f64) -> Array2<f32> {
    Array2::from_shape_fn(height.dim(), |(r, c)| hillshade_at(height, cell_size, r, c))
}

/// The isoline bands of a potential at the resolution of the layer image: the band index
/// `floor(phi / step)` of every pixel, with `phi` interpolated bilinearly between cell centres.
/// An isoline is drawn where the band changes between neighbouring pixels. Computed with the
/// fields on the recompute thread, so the interface only compares integers.
#[derive(Clone, Debug, PartialEq)]
pub struct IsolineBands {
    /// Image width, pixels (`cols * upsample`).
    pub width: usize,
    /// Image height, pixels (`rows * upsample`); row 0 is the top of the map.
    pub height: usize,
    /// Potential between neighbouring isolines, seconds.
    pub step: f64,
    /// Band index per pixel, row-major from the top-left; `i64::MIN` where the potential is
    /// not finite.
    pub band: Vec<i64>,
}

/// The isoline bands of `phi` (shape `(rows, cols)`), `None` when no value is finite.
pub fn isoline_bands(phi: ArrayView2<f64>) -> Option<IsolineBands> {
    let (rows, cols) = phi.dim();
    let (lo, hi) = finite_range(phi)?;
    let step = nice_step((hi - lo) / ISOLINE_INTERVALS);
    let up = upsample(cols, rows);
    let (w, h) = (cols * up, rows * up);
    let band = (0..h)
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
    Some(IsolineBands {
        width: w,
        height: h,
        step,
        band,
    })
}

/// The field that colours the cells, read per cell (values in `[0, 1]`, NaN for no value).
enum Colouring<'a> {
    /// A potential over its finite range `(lo, hi)`.
    Potential(ArrayView2<'a, f64>, f64, f64),
    /// A non-negative field over `[0, hi]`.
    Scaled(ArrayView2<'a, f32>, f64),
    /// Levels of service (indices into `LEVELS`), in the report's level colours.
    Levels(ArrayView2<'a, u8>),
    /// Clear times over `[0, hi]` seconds: NaN where nobody stood, `+inf` still occupied.
    ClearTime(ArrayView2<'a, f64>, f64),
}

impl Colouring<'_> {
    /// The colour of cell `(r, c)`, with `map` for the continuous fields.
    fn rgb(&self, map: Colormap, r: usize, c: usize) -> [f32; 3] {
        let scaled = |t: f64| {
            if t.is_nan() { UNREACHABLE_RGB } else { map.rgb(t) }
        };
        let rgb = match self {
            Colouring::Potential(p, lo, hi) => {
                let v = p[(r, c)];
                scaled(if v.is_finite() {
                    (v - lo) / (hi - lo)
                } else {
                    f64::NAN
                })
            }
            Colouring::Scaled(a, hi) => scaled(a[(r, c)] as f64 / hi),
            Colouring::Levels(a) => LOS_COLORS[(a[(r, c)] as usize).min(LOS_COLORS.len() - 1)],
            Colouring::ClearTime(a, hi) => {
                let v = a[(r, c)];
                if v.is_infinite() {
                    NOT_CLEAR_RGB
                } else {
                    scaled(v / hi)
                }
            }
        };
        rgb.map(|v| v as f32)
    }
}

/// Everything the composition reads besides the painted rasters: decided once per image.
struct Sources<'a> {
    colouring: Option<(Colouring<'a>, Colormap)>,
    bands: Option<std::borrow::Cow<'a, IsolineBands>>,
    /// Finite height range (the terrain colours span it; only set without a colouring field).
    height_range: (f64, f64),
}

impl<'a> Sources<'a> {
    fn new(
        doc: &Document,
        fields: Option<&'a FieldSet>,
        places: Option<&'a PlaceMaps>,
        vis: &LayerVisibility,
        group: usize,
    ) -> Self {
        // Maps of another grid (a run of the map before an edit of its size) are left out.
        let places = places.filter(|p| p.worst_level.dim() == doc.grid.shape());
        let (rows, cols) = doc.grid.shape();
        let gf = fields.and_then(|f| f.groups.get(group));
        let phi = gf.map(|g| g.phi.view());
        let colouring = match (vis.field, fields) {
            (FieldLayer::Potential, Some(_)) => phi.map(|p| {
                let (lo, hi) = finite_range(p).unwrap_or((0.0, 1.0));
                (Colouring::Potential(p, lo, hi), Colormap::Viridis)
            }),
            (FieldLayer::Density, Some(f)) => {
                let hi = f.density.iter().fold(1.0f32, |m, &v| m.max(v)) as f64;
                Some((Colouring::Scaled(f.density.view(), hi), Colormap::YellowOrangeRed))
            }
            (FieldLayer::Speed, Some(f)) => {
                let hi = f.speed.iter().fold(1e-6f32, |m, &v| m.max(v)) as f64;
                Some((Colouring::Scaled(f.speed.view(), hi), Colormap::Cividis))
            }
            (FieldLayer::LevelOfService, _) => {
                places.map(|p| (Colouring::Levels(p.worst_level.view()), Colormap::Viridis))
            }
            (FieldLayer::ClearTime, _) => places.map(|p| {
                let hi = p
                    .clear_time
                    .iter()
                    .filter(|v| v.is_finite())
                    .fold(0.0f64, |m, &v| m.max(v));
                let hi = if hi > 0.0 { hi } else { 1.0 };
                (Colouring::ClearTime(p.clear_time.view(), hi), Colormap::Viridis)
            }),
            _ => None,
        };
        let up = upsample(cols, rows);
        let fits = |b: &IsolineBands| b.width == cols * up && b.height == rows * up;
        let bands = match gf {
            Some(g) if vis.isolines => match &g.isolines {
                Some(b) if fits(b) => Some(std::borrow::Cow::Borrowed(b)),
                // Fields made without bands (or for another grid): compute them here.
                _ => isoline_bands(g.phi.view())
                    .filter(fits)
                    .map(std::borrow::Cow::Owned),
            },
            _ => None,
        };
        let colouring_is_none = colouring.is_none();
        Self {
            colouring,
            bands,
            // Only the terrain colours (no colouring field) use it.
            height_range: if colouring_is_none {
                finite_range(doc.height.view()).unwrap_or((0.0, 1.0))
            } else {
                (0.0, 1.0)
            },
        }
    }
}

/// A rectangle of cells, half-open: rows `r0..r1`, columns `c0..c1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellRect {
    /// First row.
    pub r0: usize,
    /// One past the last row.
    pub r1: usize,
    /// First column.
    pub c0: usize,
    /// One past the last column.
    pub c1: usize,
}

impl CellRect {
    /// Every cell of a `(rows, cols)` grid.
    pub fn all((rows, cols): (usize, usize)) -> Self {
        Self {
            r0: 0,
            r1: rows,
            c0: 0,
            c1: cols,
        }
    }

    /// The smallest rectangle holding both.
    pub fn union(self, o: Self) -> Self {
        Self {
            r0: self.r0.min(o.r0),
            r1: self.r1.max(o.r1),
            c0: self.c0.min(o.c0),
            c1: self.c1.max(o.c1),
        }
    }

    /// Grown by `k` cells on every side, clipped to a `(rows, cols)` grid.
    pub fn grown(self, k: usize, (rows, cols): (usize, usize)) -> Self {
        Self {
            r0: self.r0.saturating_sub(k),
            r1: (self.r1 + k).min(rows),
            c0: self.c0.saturating_sub(k),
            c1: (self.c1 + k).min(cols),
        }
    }
}

/// Writes the pixels of the cells in `cells` into `img` (sized for the whole grid).
fn compose_cells(
    doc: &Document,
    src: &Sources<'_>,
    vis: &LayerVisibility,
    cells: CellRect,
    img: &mut RgbaImage,
) {
    let (rows, cols) = doc.grid.shape();
    let up = upsample(cols, rows);
    let w = img.width;
    let (hlo, hhi) = src.height_range;
    for r in cells.r0..cells.r1 {
        for c in cells.c0..cells.c1 {
            let mut rgb = match &src.colouring {
                Some((vals, map)) => vals.rgb(*map, r, c),
                None => terrain_rgb(((doc.height[(r, c)] as f64 - hlo) / (hhi - hlo)) as f32),
            };
            if vis.terrain {
                let k = hillshade_at(doc.height.view(), doc.grid.cell_size, r, c);
                rgb = rgb.map(|v| (v * k).min(255.0));
            }
            if vis.discomfort {
                let a = (doc.discomfort[(r, c)] / DISCOMFORT_FULL).clamp(0.0, 1.0) * 0.7;
                rgb = [0, 1, 2].map(|k| rgb[k] + a * (DISCOMFORT_RGB[k] as f32 - rgb[k]));
            }
            let hidden = vis.obstacles && doc.obstacle[(r, c)];
            if hidden {
                rgb = OBSTACLE_RGB.map(|v| v as f32);
            }
            let base = [rgb[0] as u8, rgb[1] as u8, rgb[2] as u8, 255];
            let py0 = (rows - 1 - r) * up;
            for py in py0..py0 + up {
                for px in c * up..(c + 1) * up {
                    let mut p = base;
                    if !hidden && let Some(bands) = &src.bands {
                        let band = &bands.band;
                        let h = bands.height;
                        let b = band[py * w + px];
                        let right = if px + 1 < w { band[py * w + px + 1] } else { b };
                        let below = if py + 1 < h { band[(py + 1) * w + px] } else { b };
                        if b != i64::MIN
                            && ((right != b && right != i64::MIN) || (below != b && below != i64::MIN))
                        {
                            for v in &mut p[..3] {
                                *v = (*v as f32 * ISOLINE_DARKENING) as u8;
                            }
                        }
                    }
                    img.pixels[py * w + px] = p;
                }
            }
        }
    }
}

/// Composes the visible raster layers into one image (without a run's maps).
pub fn compose(doc: &Document, fields: Option<&FieldSet>, vis: &LayerVisibility, group: usize) -> RgbaImage {
    compose_with(doc, fields, None, vis, group)
}

/// Composes the visible raster layers into one image, with a run's level-of-service and
/// clear-time maps for the run layers.
pub fn compose_with(
    doc: &Document,
    fields: Option<&FieldSet>,
    places: Option<&PlaceMaps>,
    vis: &LayerVisibility,
    group: usize,
) -> RgbaImage {
    let (rows, cols) = doc.grid.shape();
    let up = upsample(cols, rows);
    let mut img = RgbaImage {
        width: cols * up,
        height: rows * up,
        pixels: vec![[0u8, 0, 0, 255]; cols * up * rows * up],
    };
    if rows == 0 || cols == 0 {
        return img;
    }
    let src = Sources::new(doc, fields, places, vis, group);
    compose_cells(doc, &src, vis, CellRect::all((rows, cols)), &mut img);
    img
}

/// A rectangle of pixels of the layer image (row 0 at the top).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelRect {
    /// Left column.
    pub x: usize,
    /// Top row.
    pub y: usize,
    /// Width, pixels.
    pub width: usize,
    /// Height, pixels.
    pub height: usize,
}

/// What [`LayerCache::update`] changed in the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageChange {
    /// Nothing: the image is up to date.
    None,
    /// The whole image (and possibly its size).
    Full,
    /// Only these pixels.
    Region(PixelRect),
}

/// What an image was composed from, besides the painted rasters.
#[derive(Clone, Debug, PartialEq)]
struct CacheKey {
    grid: crowdfield::grid::Grid,
    /// Id of the recompute the fields came from.
    fields: Option<u64>,
    /// Stamp of the run's maps, when a run layer shows them.
    places: Option<u64>,
    vis: LayerVisibility,
    group: usize,
}

/// The composed layer image, kept between frames and brought up to date by recomposing only
/// the cells whose rasters changed since (found by comparing with copies of the rasters as
/// composed). A new set of fields, other layer switches, another group or another grid
/// recompose everything.
#[derive(Debug, Default)]
pub struct LayerCache {
    key: Option<CacheKey>,
    height: Array2<f32>,
    obstacle: Array2<bool>,
    discomfort: Array2<f32>,
    /// Finite height range of `height`.
    height_range: Option<(f64, f64)>,
    /// Revision of the map composed.
    revision: Option<u64>,
    /// The image as composed.
    pub image: Option<RgbaImage>,
}

/// Bounding box of the cells where `a` and `b` (same shape) differ.
fn changed_cells<T: PartialEq>(a: &Array2<T>, b: &Array2<T>) -> Option<CellRect> {
    let mut out: Option<CellRect> = None;
    for (r, (ra, rb)) in a.rows().into_iter().zip(b.rows()).enumerate() {
        let mut first = None;
        let mut last = 0;
        for (c, (x, y)) in ra.iter().zip(rb.iter()).enumerate() {
            if x != y {
                first.get_or_insert(c);
                last = c;
            }
        }
        if let Some(c0) = first {
            let row = CellRect {
                r0: r,
                r1: r + 1,
                c0,
                c1: last + 1,
            };
            out = Some(out.map_or(row, |o| o.union(row)));
        }
    }
    out
}

/// What the layer image shows: the map (with a revision that changes with every edit), the
/// fields (with the id of the recompute they came from), the switches and the group.
#[derive(Clone, Copy)]
pub struct LayerInputs<'a> {
    /// The map.
    pub doc: &'a Document,
    /// Changes with every edit of the map (equal revisions: equal rasters).
    pub revision: u64,
    /// The fields, when they belong to this map's grid.
    pub fields: Option<&'a FieldSet>,
    /// Id of the recompute `fields` came from.
    pub fields_id: Option<u64>,
    /// The run's level-of-service and clear-time maps, when there is a run.
    pub places: Option<&'a PlaceMaps>,
    /// Layer switches.
    pub vis: &'a LayerVisibility,
    /// The selected group.
    pub group: usize,
}

/// A layer image composed on the recompute thread together with its fields, for the
/// switches and group the interface showed when it asked, with the rasters it was composed
/// from: the interface adopts it and recomposes only the cells edited since.
#[derive(Clone, Debug)]
pub struct Precomposed {
    /// The switches it was composed with.
    pub vis: LayerVisibility,
    /// The group it was composed for.
    pub group: usize,
    /// The image.
    pub image: RgbaImage,
    /// The map it was composed from (its rasters are compared with the edited map's).
    pub doc: Document,
}

impl Precomposed {
    /// Composes the image of `doc` with `fields`.
    pub fn new(doc: Document, fields: &FieldSet, vis: LayerVisibility, group: usize) -> Self {
        let image = compose(&doc, Some(fields), &vis, group);
        Self {
            vis,
            group,
            image,
            doc,
        }
    }
}

impl LayerCache {
    /// Brings the image up to date with `input`; returns what changed. Only the cells whose
    /// rasters differ from those composed are recomposed; new fields bring their precomposed
    /// image when it was made for the same switches and group (else everything is composed
    /// here).
    pub fn update(&mut self, input: LayerInputs<'_>) -> ImageChange {
        let LayerInputs {
            doc,
            revision,
            fields,
            fields_id,
            places,
            vis,
            group,
        } = input;
        let key = CacheKey {
            grid: doc.grid,
            fields: fields.and(fields_id),
            // Only a run layer reads the maps: new frames recompose nothing else.
            places: places.filter(|_| vis.field.from_run()).map(|p| p.stamp),
            vis: vis.clone(),
            group,
        };
        let same_key = self.key.as_ref() == Some(&key) && self.image.is_some();
        if same_key && self.revision == Some(revision) {
            return ImageChange::None;
        }
        let shape = doc.grid.shape();
        let mut adopted = false;
        if !same_key
            && !vis.field.from_run()
            && let Some(pre) = fields.and_then(|f| f.precomposed.as_ref())
            && pre.vis == *vis
            && pre.group == group
            && pre.doc.grid == doc.grid
        {
            self.image = Some(pre.image.clone());
            self.height = pre.doc.height.clone();
            self.obstacle = pre.doc.obstacle.clone();
            self.discomfort = pre.doc.discomfort.clone();
            self.height_range = finite_range(pre.doc.height.view());
            adopted = true;
        }
        let cells = if !(same_key || adopted) {
            None
        } else {
            let height = changed_cells(&self.height, &doc.height);
            let other = [
                changed_cells(&self.obstacle, &doc.obstacle),
                changed_cells(&self.discomfort, &doc.discomfort),
            ];
            // Hill shading reads the neighbours' heights.
            let changed = other
                .into_iter()
                .flatten()
                .chain(height.map(|h| h.grown(1, shape)))
                .reduce(CellRect::union);
            match changed {
                None => {
                    self.key = Some(key);
                    self.revision = Some(revision);
                    return if adopted {
                        ImageChange::Full
                    } else {
                        ImageChange::None
                    };
                }
                Some(rect) => Some(rect),
            }
        };
        let src = Sources::new(doc, fields, places, vis, group);
        let height_range = if src.colouring.is_none() {
            finite_range(doc.height.view())
        } else {
            None
        };
        // The terrain colours span the height range: when it moved, every cell changes.
        let cells = cells.filter(|_| src.colouring.is_some() || height_range == self.height_range);
        let change = match (cells, &mut self.image) {
            (Some(rect), Some(img)) => {
                compose_cells(doc, &src, vis, rect, img);
                let up = upsample(shape.1, shape.0);
                self.height.assign(&doc.height);
                self.obstacle.assign(&doc.obstacle);
                self.discomfort.assign(&doc.discomfort);
                if adopted {
                    ImageChange::Full
                } else {
                    ImageChange::Region(PixelRect {
                        x: rect.c0 * up,
                        y: (shape.0 - rect.r1) * up,
                        width: (rect.c1 - rect.c0) * up,
                        height: (rect.r1 - rect.r0) * up,
                    })
                }
            }
            _ => {
                self.image = Some(compose_with(doc, fields, places, vis, group));
                self.height = doc.height.clone();
                self.obstacle = doc.obstacle.clone();
                self.discomfort = doc.discomfort.clone();
                ImageChange::Full
            }
        };
        self.key = Some(key);
        self.revision = Some(revision);
        self.height_range = height_range;
        change
    }

    /// The pixels of `rect` of the image as an egui image (for a partial texture upload).
    pub fn region(&self, rect: PixelRect) -> egui::ColorImage {
        let img = self.image.as_ref().expect("update() composed an image");
        let mut bytes = Vec::with_capacity(rect.width * rect.height * 4);
        for y in rect.y..rect.y + rect.height {
            let row = &img.pixels[y * img.width + rect.x..y * img.width + rect.x + rect.width];
            bytes.extend_from_slice(row.as_flattened());
        }
        egui::ColorImage::from_rgba_unmultiplied([rect.width, rect.height], &bytes)
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

    /// After dabs of every brush, the cached image (recomposed only where cells changed)
    /// equals a full composition, and the changed region is reported; a precomposed image
    /// that comes with new fields is adopted and the cells edited since are recomposed.
    #[test]
    fn cache_recomposes_changed_cells_like_a_full_compose() {
        use crate::tools::{self, BrushSettings, TerrainOp};
        let mut doc = Document::demo(40, 30);
        let fields = crate::recompute::solve(&doc.to_scene(), &Default::default()).unwrap();
        let brush = BrushSettings::default();
        let grid = doc.grid;
        fn at<'a>(
            doc: &'a Document,
            revision: u64,
            fields: &'a FieldSet,
            id: u64,
            vis: &'a LayerVisibility,
        ) -> LayerInputs<'a> {
            LayerInputs {
                doc,
                revision,
                fields: Some(fields),
                fields_id: Some(id),
                places: None,
                vis,
                group: 0,
            }
        }
        for vis in [
            LayerVisibility::default(),
            LayerVisibility {
                field: FieldLayer::None,
                ..Default::default()
            },
        ] {
            let mut cache = LayerCache::default();
            assert_eq!(cache.update(at(&doc, 0, &fields, 1, &vis)), ImageChange::Full);
            assert_eq!(cache.update(at(&doc, 0, &fields, 1, &vis)), ImageChange::None);
            tools::obstacle_dab(&grid, &mut doc.obstacle, [5.0, 5.0], 1.0, true);
            tools::discomfort_dab(&grid, &mut doc.discomfort, [12.0, 4.0], &brush);
            // A dab and its opposite away from the hill top keep the height range: a partial
            // update even for the terrain colours.
            tools::terrain_dab(&grid, &mut doc.height, [17.0, 3.0], &brush, TerrainOp::Lower);
            tools::terrain_dab(&grid, &mut doc.height, [17.0, 3.0], &brush, TerrainOp::Raise);
            let change = cache.update(at(&doc, 1, &fields, 1, &vis));
            let ImageChange::Region(rect) = change else {
                panic!("expected a partial update, got {change:?}");
            };
            let up = upsample(40, 30);
            assert!(rect.width < 40 * up && rect.height < 30 * up, "{rect:?}");
            assert_eq!(cache.image.as_ref(), Some(&compose(&doc, Some(&fields), &vis, 0)));
            assert_eq!(cache.update(at(&doc, 1, &fields, 1, &vis)), ImageChange::None);

            // New fields composed on the worker from the map before a further edit.
            let mut with_image = fields.clone();
            with_image.precomposed = Some(Precomposed::new(doc.clone(), &fields, vis.clone(), 0));
            tools::obstacle_dab(&grid, &mut doc.obstacle, [9.0, 9.0], 1.0, true);
            assert_eq!(cache.update(at(&doc, 2, &with_image, 2, &vis)), ImageChange::Full);
            assert_eq!(cache.image.as_ref(), Some(&compose(&doc, Some(&fields), &vis, 0)));
            // The precomposed image is used as it is outside the edited cells (a marked pixel
            // far from the edits shows through).
            let mut marked = with_image.clone();
            let pre = marked.precomposed.as_mut().unwrap();
            pre.doc = doc.clone();
            pre.image.pixels[0] = [1, 2, 3, 255];
            assert_eq!(cache.update(at(&doc, 2, &marked, 3, &vis)), ImageChange::Full);
            assert_eq!(cache.image.as_ref().unwrap().pixels[0], [1, 2, 3, 255]);
            // Fields without an image, or with one for other switches, are composed here.
            let mut other = with_image.clone();
            other.precomposed.as_mut().unwrap().group = 1;
            assert_eq!(cache.update(at(&doc, 2, &other, 4, &vis)), ImageChange::Full);
            assert_eq!(cache.image.as_ref(), Some(&compose(&doc, Some(&fields), &vis, 0)));
        }
    }
}
