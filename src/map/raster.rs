//! Rasterisation of shapes onto the grid (by cell centres) and reading raster layer files.
//!
//! A cell belongs to a shape when its centre is inside: rectangles are half-open
//! (`min <= x < max`), discs closed (`d <= r`), polygons by the even-odd rule. Only the cells
//! of the shape's bounding box are visited, so a small shape on a large grid is cheap.

use super::format::{Raster, ShapeRef};
use crate::error::{Error, num};
use crate::grid::Grid;
use crate::scene::CellMask;
use crate::text::quoted;
use ndarray::Array2;
use std::path::Path;

/// Bytes an `.npy` header may take beyond the data (the format pads headers to 64 bytes; numpy
/// writes 128, and long shapes or dtype strings stay far below this).
const NPY_HEADER_ALLOWANCE: u64 = 64 * 1024;

/// Axis-aligned bounding box `(x0, y0, x1, y1)` of a shape, metres.
pub fn bounding_box(shape: ShapeRef<'_>) -> (f64, f64, f64, f64) {
    match shape {
        ShapeRef::Rect(r) => (r.min[0], r.min[1], r.max[0], r.max[1]),
        ShapeRef::Circle(c) => (
            c.center[0] - c.radius,
            c.center[1] - c.radius,
            c.center[0] + c.radius,
            c.center[1] + c.radius,
        ),
        ShapeRef::Polygon(p) => p.points.iter().fold(
            (f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY),
            |(x0, y0, x1, y1), q| (x0.min(q[0]), y0.min(q[1]), x1.max(q[0]), y1.max(q[1])),
        ),
    }
}

/// Width of an opening covered by `shape` on `grid`: the longer side of its bounding box
/// within the grid, metres. Clipped, because only the part on the grid is a door: a 2 m exit
/// drawn as a rectangle running far past the map's edge counted as 90 m wide, and its flow per
/// metre came out 45 times too low.
pub fn default_width(shape: ShapeRef<'_>, grid: &Grid) -> f64 {
    let (x0, y0, x1, y1) = bounding_box(shape);
    let clip = |lo: f64, hi: f64, extent: f64| (hi.min(extent) - lo.max(0.0)).max(0.0);
    clip(x0, x1, grid.width()).max(clip(y0, y1, grid.height()))
}

/// Cell index range `lo..=hi` whose centres may lie in `[a, b]` along an axis of `n` cells.
fn index_range(a: f64, b: f64, h: f64, n: usize) -> Option<(usize, usize)> {
    if n == 0 || a.partial_cmp(&b).is_none_or(|o| o == std::cmp::Ordering::Greater) {
        return None;
    }
    let lo = (a / h - 0.5).floor().max(0.0);
    let hi = (b / h - 0.5).ceil().min(n as f64 - 1.0);
    (lo <= hi).then_some((lo as usize, hi as usize))
}

/// Even-odd point-in-polygon test (the reference [`PolygonRow`] is tested against).
#[cfg(test)]
fn polygon_contains(points: &[[f64; 2]], x: f64, y: f64) -> bool {
    let mut inside = false;
    let mut j = points.len().wrapping_sub(1);
    for (i, pi) in points.iter().enumerate() {
        let pj = points[j];
        if (pi[1] > y) != (pj[1] > y) && x < (pj[0] - pi[0]) * (y - pi[1]) / (pj[1] - pi[1]) + pi[0] {
            inside = !inside;
        }
        j = i;
    }
    inside
}

/// One row of a polygon's cells: where the row's centre line `y` crosses the edges, sorted, so
/// that the cells of the row are classified in one sweep. Together O(rows x edges + cells)
/// instead of the O(cells x edges) of a point-in-polygon test per cell (a 20,000-point outline
/// over a million cells took seconds), with the same answer cell for cell: each crossing is
/// the same expression as the per-cell test's (`polygon_contains`, kept for the tests) and a
/// centre `x` is inside when an odd number
/// of crossings lie strictly to its right.
struct PolygonRow {
    crossings: Vec<f64>,
}

impl PolygonRow {
    /// The crossings of the line at height `y` with the edges of `points` (closed outline).
    fn at(&mut self, points: &[[f64; 2]], y: f64) {
        self.crossings.clear();
        let mut j = points.len().wrapping_sub(1);
        for (i, pi) in points.iter().enumerate() {
            let pj = points[j];
            if (pi[1] > y) != (pj[1] > y) {
                self.crossings
                    .push((pj[0] - pi[0]) * (y - pi[1]) / (pj[1] - pi[1]) + pi[0]);
            }
            j = i;
        }
        // Finite: the two ends differ in y, and the checker keeps coordinates within ±1e6.
        self.crossings.sort_unstable_by(f64::total_cmp);
    }

    /// Calls `visit(c)` for every `c` in `cols` (ascending) whose centre `x_of(c)` is inside.
    fn visit_inside(
        &self,
        cols: std::ops::RangeInclusive<usize>,
        x_of: impl Fn(usize) -> f64,
        mut visit: impl FnMut(usize),
    ) {
        let mut left = 0; // crossings at or left of x
        for c in cols {
            let x = x_of(c);
            while left < self.crossings.len() && self.crossings[left] <= x {
                left += 1;
            }
            if (self.crossings.len() - left) % 2 == 1 {
                visit(c);
            }
        }
    }
}

/// The rows `r0..=r1` and columns `c0..=c1` of the grid cells whose centres may lie in
/// `shape`'s bounding box; `None` when none may.
fn cell_ranges(shape: ShapeRef<'_>, grid: &Grid) -> Option<((usize, usize), (usize, usize))> {
    let h = grid.cell_size;
    let (x0, y0, x1, y1) = bounding_box(shape);
    Some((
        index_range(y0, y1, h, grid.rows)?,
        index_range(x0, x1, h, grid.cols)?,
    ))
}

/// Calls `visit(row, col, factor)` for every cell whose centre is inside `shape`; `factor` is the
/// circle's profile factor at that centre (1 for rectangles, polygons and flat circles).
/// Coordinates must be finite (the checker ensures it).
pub fn for_each_cell(shape: ShapeRef<'_>, grid: &Grid, mut visit: impl FnMut(usize, usize, f64)) {
    let Some(((r0, r1), (c0, c1))) = cell_ranges(shape, grid) else {
        return;
    };
    if let ShapeRef::Polygon(p) = shape {
        let mut row = PolygonRow {
            crossings: Vec::new(),
        };
        for r in r0..=r1 {
            row.at(&p.points, grid.cell_center(r, c0).1);
            row.visit_inside(c0..=c1, |c| grid.cell_center(r, c).0, |c| visit(r, c, 1.0));
        }
        return;
    }
    for r in r0..=r1 {
        for c in c0..=c1 {
            let (x, y) = grid.cell_center(r, c);
            let factor = match shape {
                ShapeRef::Rect(rect) => {
                    let inside = rect.min[0] <= x && x < rect.max[0] && rect.min[1] <= y && y < rect.max[1];
                    inside.then_some(1.0)
                }
                ShapeRef::Circle(circle) => {
                    let d = (x - circle.center[0]).hypot(y - circle.center[1]);
                    (d <= circle.radius).then(|| {
                        let t = if circle.radius > 0.0 {
                            d / circle.radius
                        } else {
                            0.0
                        };
                        circle.profile.unwrap_or_default().factor(t)
                    })
                }
                // Swept row by row above.
                ShapeRef::Polygon(_) => None,
            };
            if let Some(f) = factor {
                visit(r, c, f);
            }
        }
    }
}

/// The cells whose centre is inside `shape`, held over the cells of its bounding box only
/// (memory and time of the shape's extent, whatever the grid's).
pub fn shape_cells(shape: ShapeRef<'_>, grid: &Grid) -> CellMask {
    let Some(((r0, r1), (c0, c1))) = cell_ranges(shape, grid) else {
        return CellMask::empty(grid.shape());
    };
    let mut window = Array2::from_elem((r1 - r0 + 1, c1 - c0 + 1), false);
    for_each_cell(shape, grid, |r, c, _| window[[r - r0, c - c0]] = true);
    CellMask::from_window(grid.shape(), (r0, c0), window)
}

/// The cells whose centre is inside `shape`, as a mask of shape `(rows, cols)`.
pub fn shape_mask(shape: ShapeRef<'_>, grid: &Grid) -> Array2<bool> {
    shape_cells(shape, grid).to_dense()
}

/// Default value range of a PNG raster: black 0, white 1.
pub const DEFAULT_PNG_RANGE: [f64; 2] = [0.0, 1.0];

/// Which kind of file a raster is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RasterKind {
    /// A greyscale PNG with a value range.
    Png,
    /// A numpy array.
    Npy,
}

/// The kind of raster named by `file`, from its extension.
pub fn raster_kind(file: &str) -> Option<RasterKind> {
    let ext = Path::new(file).extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some(RasterKind::Png),
        "npy" => Some(RasterKind::Npy),
        _ => None,
    }
}

/// Why the raster path `file` (as the map gives it) reaches outside `base_dir`, the map's
/// folder, or `None` when it stays inside: an absolute path, a path that climbs above the
/// folder with `..`, or one that passes through a symbolic link leading out of it (or
/// dangling). The lexical reasons are found without touching the file system, so the answer
/// never tells whether a file outside exists.
pub fn outside_reason(file: &str, base_dir: &Path) -> Option<&'static str> {
    use std::path::Component;
    let rel = Path::new(file);
    let mut depth = 0usize;
    for part in rel.components() {
        match part {
            Component::Prefix(_) | Component::RootDir => return Some("an absolute path"),
            Component::ParentDir if depth == 0 => {
                return Some("climbs out of the map's folder with `..`");
            }
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
        }
    }
    let Ok(root) = std::fs::canonicalize(base_dir) else {
        return None;
    };
    // Each step below the map's folder that is a link must resolve inside it.
    let mut at = base_dir.to_path_buf();
    for part in rel.components() {
        at.push(part);
        let is_link = at.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
        if is_link {
            match std::fs::canonicalize(&at) {
                Ok(target) if target.starts_with(&root) => {}
                _ => {
                    return Some(
                        "passes through a symbolic link that leads out of the map's folder (or nowhere)",
                    );
                }
            }
        }
    }
    None
}

/// A PNG pixel whose alpha (of 65535) is below this, half opaque, is transparent: nothing
/// drawn, the value 0 in every layer.
const TRANSPARENT_BELOW: u16 = 32768;

/// How to make an image of `w x h` pixels fit `grid` (one pixel per cell): the pixel size that
/// fits, or the grid that keeps the map's width with one cell per pixel.
fn size_fix(w: u32, h: u32, grid: &Grid) -> String {
    let (width, height) = (
        grid.cols as f64 * grid.cell_size,
        grid.rows as f64 * grid.cell_size,
    );
    let cell = width / w as f64;
    let new_height = h as f64 * cell;
    let mut fix = format!(
        "resample the image to {}x{} pixels, or give the map \"grid\": {{\"cols\": {w}, \"rows\": {h}, \
         \"cell_size\": {}}} (one {} m cell per pixel, {} x {} m",
        grid.cols,
        grid.rows,
        num(cell),
        num(cell),
        num(width),
        num(new_height)
    );
    if (new_height - height).abs() > 1e-9 * height.max(1.0) {
        fix.push_str(&format!(
            ", where the map is now {} x {} m: the image's shape differs from the grid's",
            num(width),
            num(height)
        ));
    }
    fix.push(')');
    fix
}

/// Reads a raster layer file as values on the grid, shape `(rows, cols)`, row index = y.
///
/// `file` names the map in errors and `at` is the JSON path of the `raster` object. The size is
/// checked against the grid before the pixels are decoded, so a huge image is refused cheaply.
pub fn read_raster(
    raster: &Raster,
    kind: RasterKind,
    base_dir: &Path,
    grid: &Grid,
    file: &str,
    at: &str,
) -> Result<Array2<f64>, Error> {
    let path = base_dir.join(&raster.file);
    let at_file = format!("{at}.file");
    let err = |message: String| Error::invalid(file, at_file.clone(), message);
    let shown = path.display();
    let meta = std::fs::metadata(&path).map_err(|e| {
        err(format!(
            "cannot read raster {} ({shown}): {e}",
            quoted(&raster.file)
        ))
    })?;
    if !meta.is_file() {
        return Err(err(format!(
            "raster {} ({shown}) is not a file",
            quoted(&raster.file)
        )));
    }
    match kind {
        RasterKind::Png => {
            let range = raster.range.unwrap_or(DEFAULT_PNG_RANGE);
            let open = || {
                image::ImageReader::open(&path)
                    .and_then(|r| r.with_guessed_format())
                    .map_err(|e| err(format!("cannot open raster {shown}: {e}")))
            };
            let (w, h) = open()?
                .into_dimensions()
                .map_err(|e| err(format!("cannot read PNG {shown}: {e}")))?;
            if (w as usize, h as usize) != (grid.cols, grid.rows) {
                return Err(err(format!(
                    "image {shown} is {w}x{h} pixels, expected {}x{} (grid cols x rows, one pixel per \
                     cell; images are not resampled): {}",
                    grid.cols,
                    grid.rows,
                    size_fix(w, h, grid)
                )));
            }
            let img = open()?
                .decode()
                .map_err(|e| err(format!("cannot decode PNG {shown}: {e}")))?;
            let sixteen_bit = matches!(
                img.color(),
                image::ColorType::L16
                    | image::ColorType::La16
                    | image::ColorType::Rgb16
                    | image::ColorType::Rgba16
            );
            let rows = grid.rows;
            let map = |p: f64| range[0] + (range[1] - range[0]) * p;
            // Image row 0 is the top of the picture: the highest y, grid row `rows - 1`.
            if img.color().has_alpha() {
                // A transparent pixel is nothing drawn: open floor, no discomfort, height 0 (a
                // floor plan's transparent background read as black would make every cell a
                // wall).
                let la = img.to_luma_alpha16();
                return Ok(Array2::from_shape_fn(grid.shape(), |(r, c)| {
                    let p = la.get_pixel(c as u32, (rows - 1 - r) as u32);
                    if p[1] < TRANSPARENT_BELOW {
                        0.0
                    } else {
                        map(p[0] as f64 / 65535.0)
                    }
                }));
            }
            Ok(if sixteen_bit {
                let luma = img.to_luma16();
                Array2::from_shape_fn(grid.shape(), |(r, c)| {
                    map(luma.get_pixel(c as u32, (rows - 1 - r) as u32)[0] as f64 / 65535.0)
                })
            } else {
                let luma = img.to_luma8();
                Array2::from_shape_fn(grid.shape(), |(r, c)| {
                    map(luma.get_pixel(c as u32, (rows - 1 - r) as u32)[0] as f64 / 255.0)
                })
            })
        }
        RasterKind::Npy => {
            let most = (grid.len() as u64)
                .saturating_mul(8)
                .saturating_add(NPY_HEADER_ALLOWANCE);
            if meta.len() > most {
                return Err(err(format!(
                    "{shown} is {} bytes, more than a ({}, {}) array can take: expected shape (rows, cols) \
                     of the grid",
                    meta.len(),
                    grid.rows,
                    grid.cols
                )));
            }
            let a = crate::io::read_npy_f64(&path).map_err(|e| err(e.to_string()))?;
            if a.dim() != grid.shape() {
                return Err(err(format!(
                    "array {shown} has shape {:?}, expected (rows, cols) = ({}, {})",
                    a.dim(),
                    grid.rows,
                    grid.cols
                )));
            }
            Ok(a)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::format::{Circle, Polygon, Profile, Rect};
    use super::*;

    fn count(shape: ShapeRef<'_>, grid: &Grid) -> usize {
        shape_mask(shape, grid).iter().filter(|&&b| b).count()
    }

    /// The row sweep gives the per-cell even-odd test's mask cell for cell: random outlines,
    /// self-crossing ones, vertices and horizontal edges on cell centres, outlines partly off
    /// the grid.
    #[test]
    fn polygon_sweep_matches_the_point_in_polygon_test_cell_for_cell() {
        let g = Grid::new(23, 17, 0.5);
        let mut rnd = crate::test_rng::below(0x2545_F491_4F6C_DD1D);
        let mut inside = 0;
        for case in 0..300 {
            let n = 3 + rnd(12) as usize;
            let points: Vec<[f64; 2]> = (0..n)
                .map(|_| {
                    // Half the cases on the quarter-cell lattice (centres, edges between them).
                    let (x, y) = (rnd(56) as f64 * 0.25 - 1.5, rnd(40) as f64 * 0.25 - 1.0);
                    if case % 2 == 0 {
                        [x, y]
                    } else {
                        [x + rnd(1000) as f64 * 1e-3, y + rnd(1000) as f64 * 1e-3]
                    }
                })
                .collect();
            let poly = Polygon {
                points: points.clone(),
            };
            let swept = shape_mask(ShapeRef::Polygon(&poly), &g);
            for ((r, c), &got) in swept.indexed_iter() {
                let (x, y) = g.cell_center(r, c);
                assert_eq!(
                    got,
                    polygon_contains(&points, x, y),
                    "case {case}, cell ({r}, {c}): {points:?}"
                );
                inside += usize::from(got);
            }
        }
        assert!(inside > 10_000, "the outlines cover cells: {inside}");
    }

    /// A shape's cells are held over its own extent: a small shape on a large grid takes a
    /// window of its bounding box, with the cells of the grid-sized mask.
    #[test]
    fn shape_cells_hold_only_the_shapes_bounding_box() {
        let g = Grid::new(4000, 3000, 0.5);
        let disc = Circle {
            center: [100.3, 700.1],
            radius: 1.2,
            profile: None,
        };
        let cells = shape_cells(ShapeRef::Circle(&disc), &g);
        assert_eq!(cells.shape(), (3000, 4000));
        let (rows, cols) = cells.window().dim();
        assert!(rows <= 6 && cols <= 6, "{rows} x {cols}");
        let mut dense = Array2::from_elem(g.shape(), false);
        for_each_cell(ShapeRef::Circle(&disc), &g, |r, c, _| dense[[r, c]] = true);
        assert!(dense.iter().filter(|&&b| b).count() > 10);
        assert_eq!(cells.to_dense(), dense);
        let off = Rect {
            min: [-5.0, -5.0],
            max: [-1.0, -1.0],
        };
        assert!(shape_cells(ShapeRef::Rect(&off), &g).is_empty());
    }

    #[test]
    fn rect_covers_the_cells_whose_centre_is_inside() {
        let g = Grid::new(10, 8, 0.5);
        let r = Rect {
            min: [0.0, 0.0],
            max: [1.0, 1.5],
        };
        assert_eq!(count(ShapeRef::Rect(&r), &g), 2 * 3);
        // Half-open: a rect edge through cell centres takes the centres on `min`, not on `max`.
        let r = Rect {
            min: [0.25, 0.25],
            max: [1.25, 0.75],
        };
        let m = shape_mask(ShapeRef::Rect(&r), &g);
        assert_eq!(m.iter().filter(|&&b| b).count(), 2);
        assert!(m[[0, 0]] && m[[0, 1]] && !m[[0, 2]] && !m[[1, 0]]);
        // Partly outside the grid: clipped; wholly outside: nothing.
        let r = Rect {
            min: [-10.0, -10.0],
            max: [0.6, 100.0],
        };
        assert_eq!(count(ShapeRef::Rect(&r), &g), 8);
        let r = Rect {
            min: [6.0, 0.0],
            max: [9.0, 1.0],
        };
        assert_eq!(count(ShapeRef::Rect(&r), &g), 0);
    }

    #[test]
    fn circle_covers_centres_within_the_radius() {
        let g = Grid::new(11, 11, 1.0);
        // Centre on a cell centre, radius 1: the cell and its 4 neighbours.
        let c = Circle {
            center: [5.5, 5.5],
            radius: 1.0,
            profile: None,
        };
        assert_eq!(count(ShapeRef::Circle(&c), &g), 5);
        // Radius 2.3: lattice points with i^2 + j^2 <= 5.29 -> 21.
        let c = Circle { radius: 2.3, ..c };
        assert_eq!(count(ShapeRef::Circle(&c), &g), 21);
        // Centre on a grid corner, radius 1: the four cells around it.
        let c = Circle {
            center: [5.0, 5.0],
            radius: 1.0,
            profile: None,
        };
        assert_eq!(count(ShapeRef::Circle(&c), &g), 4);
    }

    #[test]
    fn profiles_fall_off_from_the_centre() {
        let g = Grid::new(11, 1, 1.0);
        let mut values = vec![0.0; 11];
        let c = Circle {
            center: [5.5, 0.5],
            radius: 4.0,
            profile: Some(Profile::Cone),
        };
        for_each_cell(ShapeRef::Circle(&c), &g, |_, col, f| values[col] = f);
        assert_eq!(
            values,
            [0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
        );
        assert_eq!(Profile::Dome.factor(0.0), 1.0);
        assert!((Profile::Dome.factor(0.5) - 0.5).abs() < 1e-12);
        assert!(Profile::Dome.factor(1.0).abs() < 1e-12);
        assert_eq!(Profile::Flat.factor(0.9), 1.0);
    }

    #[test]
    fn polygon_uses_the_even_odd_rule() {
        let g = Grid::new(10, 10, 1.0);
        // Right triangle (0,0), (4,0), (0,4): centres (i+.5, j+.5) with i + j + 1 < 4 -> 6 cells.
        let p = Polygon {
            points: vec![[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]],
        };
        assert_eq!(count(ShapeRef::Polygon(&p), &g), 6);
        // The same square as a rect, in both windings.
        let sq = vec![[1.0, 1.0], [5.0, 1.0], [5.0, 3.0], [1.0, 3.0]];
        let mut rev = sq.clone();
        rev.reverse();
        assert_eq!(count(ShapeRef::Polygon(&Polygon { points: sq }), &g), 8);
        assert_eq!(count(ShapeRef::Polygon(&Polygon { points: rev }), &g), 8);
        // An L shape: 4x4 square minus its 2x2 upper-right quarter.
        let l = Polygon {
            points: vec![
                [0.0, 0.0],
                [4.0, 0.0],
                [4.0, 2.0],
                [2.0, 2.0],
                [2.0, 4.0],
                [0.0, 4.0],
            ],
        };
        let m = shape_mask(ShapeRef::Polygon(&l), &g);
        assert_eq!(m.iter().filter(|&&b| b).count(), 12);
        assert!(!m[[3, 3]] && m[[3, 1]] && m[[1, 3]]);
    }

    #[test]
    fn default_width_is_the_longer_side() {
        let r = Rect {
            min: [0.0, 0.0],
            max: [1.0, 3.0],
        };
        let g = Grid::new(20, 20, 0.5);
        assert_eq!(default_width(ShapeRef::Rect(&r), &g), 3.0);
        let c = Circle {
            center: [2.0, 2.0],
            radius: 0.75,
            profile: None,
        };
        assert_eq!(default_width(ShapeRef::Circle(&c), &g), 1.5);
        // Only the part on the grid (10 m x 10 m) counts: a 2 m door drawn running past the
        // map's edge.
        let past = Rect {
            min: [8.0, 4.0],
            max: [100.0, 6.0],
        };
        assert_eq!(default_width(ShapeRef::Rect(&past), &g), 2.0);
        let corner = Circle {
            center: [0.0, 0.0],
            radius: 0.75,
            profile: None,
        };
        assert_eq!(default_width(ShapeRef::Circle(&corner), &g), 0.75);
    }

    #[test]
    fn png_row_zero_is_the_top_of_the_map() {
        let dir = tempfile::tempdir().unwrap();
        let g = Grid::new(3, 4, 1.0);
        // Bright top row (image row 0), dark elsewhere, one mid-grey pixel at the image's bottom-left.
        let mut img = image::GrayImage::new(3, 4);
        for x in 0..3 {
            img.put_pixel(x, 0, image::Luma([255]));
        }
        img.put_pixel(0, 3, image::Luma([51]));
        img.save(dir.path().join("t.png")).unwrap();
        let raster = Raster {
            file: "t.png".into(),
            range: Some([10.0, 20.0]),
        };
        let a = read_raster(
            &raster,
            RasterKind::Png,
            dir.path(),
            &g,
            "m.json",
            "layers.height.raster",
        )
        .unwrap();
        for c in 0..3 {
            assert_eq!(a[[3, c]], 20.0, "top image row = largest row index");
        }
        assert!(
            (a[[0, 0]] - 12.0).abs() < 1e-12,
            "bottom-left pixel = row 0, col 0"
        );
        assert_eq!(a[[0, 1]], 10.0);
        assert_eq!(a[[1, 2]], 10.0);
    }

    #[test]
    fn raster_size_mismatch_is_refused_before_decoding() {
        let dir = tempfile::tempdir().unwrap();
        image::GrayImage::new(5, 4)
            .save(dir.path().join("t.png"))
            .unwrap();
        let raster = Raster {
            file: "t.png".into(),
            range: None,
        };
        let g = Grid::new(3, 4, 1.0);
        let e = read_raster(
            &raster,
            RasterKind::Png,
            dir.path(),
            &g,
            "m.json",
            "layers.obstacles.raster",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("layers.obstacles.raster.file") && e.contains("5x4") && e.contains("3x4"),
            "{e}"
        );
    }
}
