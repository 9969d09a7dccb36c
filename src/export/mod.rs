//! PNG images of the fields (SPEC §6): potential with isolines, gradient arrows, and any scalar
//! field (density, speed, cost) colour-mapped, each with a title, a colour bar with units and a
//! legend; and the map itself before anyone moves (spawn areas, named goals, the walkers where
//! they start), with a legend.
//!
//! Every image is also available as an [`image::RgbaImage`] (the `*_image` functions) for the
//! editor; the `*_png` functions write it through [`crate::io`] (atomic). Image row 0 is the
//! TOP: grid row 0 (y = 0) is drawn at the bottom of the map area. Small grids are scaled up by
//! an integer factor (nearest neighbour) so the map is at least [`ImageOptions::min_map_width`]
//! pixels wide.

pub mod bundle;
pub mod colormap;
pub mod html;
pub mod jupedsim;
pub mod render;
pub mod text;

pub use colormap::Colormap;
pub use render::{ImageOptions, LegendEntry};

use crate::error::{Error, Result};
use crate::gradient::Gradient;
use crate::scene::{CellMask, Scene};
use image::RgbaImage;
use ndarray::{Array2, ArrayView2, ArrayView3, Axis};
use render::{GOAL, INK, Layout, OBSTACLE, WHITE, decimals_for, draw_frame, hatch, nice_step, washed};
use std::path::Path;

/// Roughly how many isoline intervals span the potential's range.
const ISOLINE_INTERVALS: f64 = 10.0;
/// Opacity of isolines drawn over the colours.
const ISOLINE_ALPHA: f32 = 0.55;
/// How far the gradient image's potential backdrop is lightened toward white.
const BACKDROP_WASH: f32 = 0.6;
/// Roughly how many arrows across the longer side of the gradient image.
const ARROWS_ACROSS: usize = 32;

/// Encodes `img` as PNG and writes it atomically to `path`.
pub fn save_png(path: &Path, img: &RgbaImage) -> Result<()> {
    crate::io::write_bytes_atomic(path, &png_bytes(img, &path.display().to_string())?)
}

/// The bytes of `img` encoded as PNG; `name` names the image in an error.
pub fn png_bytes(img: &RgbaImage, name: &str) -> Result<Vec<u8>> {
    let mut buf = std::io::Cursor::new(Vec::new());
    img.write_to(&mut buf, image::ImageFormat::Png)
        .map_err(|e| Error::invalid(name, "png", e.to_string()))?;
    Ok(buf.into_inner())
}

/// Lowest and highest finite value of `values`, or `None` when none is finite. A flat range is
/// widened by ±0.5 so it still maps onto the colour bar.
fn finite_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return None;
    }
    Some(if hi - lo > 0.0 {
        (lo, hi)
    } else if lo == 0.0 {
        // An all-zero field (an empty crowd's density): a bar from 0 up, never below 0.
        (0.0, 1.0)
    } else {
        // A constant field: a bar of half its magnitude either side, keeping its sign.
        (lo - 0.5 * lo.abs(), hi + 0.5 * hi.abs())
    })
}

/// `value` bilinearly interpolated at cell-centre coordinates `(u, v)` (clamped to the grid);
/// where one of the four cells is not finite, the nearest cell's value.
fn bilinear(field: ArrayView2<f64>, u: f64, v: f64) -> f64 {
    let (rows, cols) = field.dim();
    let u = u.clamp(0.0, (cols - 1) as f64);
    let v = v.clamp(0.0, (rows - 1) as f64);
    let (c0, r0) = (u.floor() as usize, v.floor() as usize);
    let (c1, r1) = ((c0 + 1).min(cols - 1), (r0 + 1).min(rows - 1));
    let (tu, tv) = (u - c0 as f64, v - r0 as f64);
    let corners = [
        (field[[r0, c0]], (1.0 - tu) * (1.0 - tv)),
        (field[[r0, c1]], tu * (1.0 - tv)),
        (field[[r1, c0]], (1.0 - tu) * tv),
        (field[[r1, c1]], tu * tv),
    ];
    // Corners with zero weight do not count, so an infinite neighbour does not spoil a point
    // lying exactly on a cell row or column.
    if corners.iter().all(|&(x, w)| w == 0.0 || x.is_finite()) {
        corners
            .iter()
            .filter(|&&(_, w)| w > 0.0)
            .map(|&(x, w)| x * w)
            .sum()
    } else {
        field[[v.round() as usize, u.round() as usize]]
    }
}

/// Colours the map area with `phi` (nearest cell), obstacles dark grey, non-finite cells
/// hatched, colours lightened toward white by `wash`.
fn draw_potential_map(
    img: &mut RgbaImage,
    layout: &Layout,
    scene: &Scene,
    phi: ArrayView2<f64>,
    range: (f64, f64),
    wash: f32,
) {
    let (lo, hi) = range;
    layout.fill_map(img, |r, c, px, py| {
        if scene.obstacle[[r, c]] {
            OBSTACLE
        } else if !phi[[r, c]].is_finite() {
            hatch(layout.map_x + px, layout.map_y + py)
        } else {
            washed(Colormap::Viridis.rgb((phi[[r, c]] - lo) / (hi - lo)), wash)
        }
    });
}

/// Outlines the cells of `goal` (a grid-sized mask) in the goal colour (see
/// [`draw_area_outline`]).
fn draw_goal_outline(img: &mut RgbaImage, layout: &Layout, goal: ArrayView2<bool>) {
    let (rows, cols) = goal.dim();
    let in_goal = |r: usize, c: usize| r < rows && c < cols && goal[[r, c]];
    outline_cells(img, layout, (0, 0), (rows, cols), in_goal, GOAL);
}

/// Outlines the cells of `area` in `color`, 2 px inside the area's border where the scale
/// allows (each group's goals on simulation frames). Only the pixels of the area's own cells
/// are visited.
pub fn draw_area_outline(img: &mut RgbaImage, layout: &Layout, area: &CellMask, color: [u8; 3]) {
    outline_cells(
        img,
        layout,
        area.origin(),
        area.window().dim(),
        |r, c| area.get((r, c)),
        color,
    );
}

/// Outlines the cells where `in_area(row, col)` holds among the `extent` `(rows, cols)` cells
/// from `origin` `(row, col)` on: each border pixel of such a cell whose neighbour across that
/// border is not in the area.
fn outline_cells(
    img: &mut RgbaImage,
    layout: &Layout,
    origin: (usize, usize),
    extent: (usize, usize),
    in_area: impl Fn(usize, usize) -> bool,
    color: [u8; 3],
) {
    let s = layout.scale;
    let t = (s / 3).clamp(1, 2);
    let rows = layout.rows.min(origin.0 + extent.0);
    let cols = layout.cols.min(origin.1 + extent.1);
    if origin.0 >= rows || origin.1 >= cols {
        return;
    }
    let in_area = |r: i64, c: i64| r >= 0 && c >= 0 && in_area(r as usize, c as usize);
    // Map pixels of the cells: columns left to right, rows from the top (the highest row).
    let (px0, px1) = (origin.1 as u32 * s, cols as u32 * s);
    let (py0, py1) = (
        (layout.rows - rows) as u32 * s,
        (layout.rows - origin.0) as u32 * s,
    );
    for py in py0..py1.min(layout.map_h) {
        for px in px0..px1.min(layout.map_w) {
            let (r, c) = layout.cell(px, py);
            let (ri, ci) = (r as i64, c as i64);
            if !in_area(ri, ci) {
                continue;
            }
            let (lx, ly) = (px % s, py % s);
            // ly counts down from the top of the cell, which is its north side.
            let edge = (lx < t && !in_area(ri, ci - 1))
                || (lx >= s - t && !in_area(ri, ci + 1))
                || (ly < t && !in_area(ri + 1, ci))
                || (ly >= s - t && !in_area(ri - 1, ci));
            if edge {
                layout.blend_map(img, px as i64, py as i64, color, 1.0);
            }
        }
    }
}

/// Draws isolines of `phi` every `step`: a map pixel is on a line when one of its four
/// neighbours lies in a lower band (`floor(phi / step)`), with `phi` interpolated bilinearly at
/// pixel centres. The rule is mirror-symmetric, so symmetric fields give symmetric lines.
fn draw_isolines(img: &mut RgbaImage, layout: &Layout, phi: ArrayView2<f64>, step: f64) {
    let (w, h) = (layout.map_w as usize, layout.map_h as usize);
    let mut band = vec![None::<i64>; w * h];
    for py in 0..h {
        for px in 0..w {
            let (u, v) = layout.cell_coords(px as u32, py as u32);
            let value = bilinear(phi, u, v);
            if value.is_finite() {
                band[py * w + px] = Some((value / step).floor() as i64);
            }
        }
    }
    for py in 0..h {
        for px in 0..w {
            let Some(b) = band[py * w + px] else { continue };
            let lower = |x: usize, y: usize| band[y * w + x].is_some_and(|o| o < b);
            let on = (px > 0 && lower(px - 1, py))
                || (px + 1 < w && lower(px + 1, py))
                || (py > 0 && lower(px, py - 1))
                || (py + 1 < h && lower(px, py + 1));
            if on {
                layout.blend_map(img, px as i64, py as i64, INK, ISOLINE_ALPHA);
            }
        }
    }
}

/// The legend of the potential images; the "unreachable" row only when some open cell of
/// `phi` is unreachable (`+inf`), so the legend never names a mark the image does not show.
fn potential_legend(scene: &Scene, phi: ArrayView2<f64>) -> Vec<LegendEntry> {
    let mut legend = vec![LegendEntry::Swatch(OBSTACLE, "obstacle".into())];
    let unreachable = phi
        .indexed_iter()
        .any(|((r, c), v)| !v.is_finite() && !scene.obstacle.get((r, c)).copied().unwrap_or(false));
    if unreachable {
        legend.push(LegendEntry::Hatched("unreachable".into()));
    }
    legend.push(LegendEntry::Outline(GOAL, "goal".into()));
    legend
}

/// The potential `phi` (seconds) colour-mapped (viridis) with isolines at a round interval,
/// obstacles dark grey, unreachable cells hatched, the `goal` cells outlined, a colour bar in
/// seconds and a legend. The title says the isoline interval.
pub fn potential_image(
    scene: &Scene,
    phi: ArrayView2<f64>,
    goal: ArrayView2<bool>,
    title: &str,
    opts: &ImageOptions,
) -> RgbaImage {
    let (rows, cols) = phi.dim();
    let legend = potential_legend(scene, phi);
    let layout = Layout::new(rows, cols, legend.len(), opts);
    let range = finite_range(phi.iter().copied()).unwrap_or((0.0, 1.0));
    let step = nice_step((range.1 - range.0) / ISOLINE_INTERVALS);
    let decimals = decimals_for(step);
    let mut img = layout.canvas(&format!("{title}  (isolines every {step:.decimals$} s)"));
    if rows == 0 || cols == 0 {
        return img;
    }
    draw_potential_map(&mut img, &layout, scene, phi, range, 0.0);
    draw_isolines(&mut img, &layout, phi, step);
    draw_goal_outline(&mut img, &layout, goal);
    layout.draw_colorbar(&mut img, range.0, range.1, Colormap::Viridis, 0.0, "potential, s");
    layout.draw_legend(&mut img, &legend);
    layout.draw_scale_bar(&mut img, scene.grid.cell_size);
    img
}

/// Writes [`potential_image`] to `path` as PNG (atomically).
pub fn potential_png(
    path: &Path,
    scene: &Scene,
    phi: ArrayView2<f64>,
    goal: ArrayView2<bool>,
    title: &str,
    opts: &ImageOptions,
) -> Result<()> {
    save_png(path, &potential_image(scene, phi, goal, title, opts))
}

/// Walking directions `-grad phi / |grad phi|` as arrows (about `ARROWS_ACROSS` across the
/// longer side, one per `k` cells) over a lightened potential backdrop, with its colour bar,
/// goals outlined and the legend.
pub fn gradient_image(
    scene: &Scene,
    phi: ArrayView2<f64>,
    grad: &Gradient,
    goal: ArrayView2<bool>,
    title: &str,
    opts: &ImageOptions,
) -> RgbaImage {
    let (rows, cols) = phi.dim();
    let legend = potential_legend(scene, phi);
    let layout = Layout::new(rows, cols, legend.len(), opts);
    let mut img = layout.canvas(title);
    if rows == 0 || cols == 0 {
        return img;
    }
    let range = finite_range(phi.iter().copied()).unwrap_or((0.0, 1.0));
    draw_potential_map(&mut img, &layout, scene, phi, range, BACKDROP_WASH);
    draw_goal_outline(&mut img, &layout, goal);
    let k = rows.max(cols).div_ceil(ARROWS_ACROSS).max(1);
    let s = layout.scale as f64;
    let spacing = k as f64 * s;
    let len = 0.8 * spacing;
    let thick = if spacing >= 24.0 { 2 } else { 1 };
    for r in (k / 2..rows).step_by(k) {
        for c in (k / 2..cols).step_by(k) {
            let Some([dx, dy]) = grad.direction(r, c) else {
                continue;
            };
            // Cell centre in map pixels; image y grows downward.
            let cx = (c as f64 + 0.5) * s;
            let cy = (rows - r) as f64 * s - 0.5 * s;
            let (ux, uy) = (dx as f64, -(dy as f64));
            draw_arrow(
                &mut img,
                &layout,
                (cx - 0.5 * len * ux, cy - 0.5 * len * uy),
                (ux, uy),
                len,
                thick,
            );
        }
    }
    layout.draw_colorbar(
        &mut img,
        range.0,
        range.1,
        Colormap::Viridis,
        BACKDROP_WASH,
        "potential, s",
    );
    layout.draw_legend(&mut img, &legend);
    layout.draw_scale_bar(&mut img, scene.grid.cell_size);
    img
}

/// Writes [`gradient_image`] to `path` as PNG (atomically).
pub fn gradient_png(
    path: &Path,
    scene: &Scene,
    phi: ArrayView2<f64>,
    grad: &Gradient,
    goal: ArrayView2<bool>,
    title: &str,
    opts: &ImageOptions,
) -> Result<()> {
    save_png(path, &gradient_image(scene, phi, grad, goal, title, opts))
}

/// An arrow from `start` (map pixels) along unit `(ux, uy)` of length `len`, with a head.
fn draw_arrow(
    img: &mut RgbaImage,
    layout: &Layout,
    start: (f64, f64),
    (ux, uy): (f64, f64),
    len: f64,
    thick: i64,
) {
    let tip = (start.0 + len * ux, start.1 + len * uy);
    draw_map_line(img, layout, start, tip, thick, INK);
    let head = 0.35 * len;
    // Head barbs at ±25° back from the tip.
    let (cs, sn) = (25f64.to_radians().cos(), 25f64.to_radians().sin());
    for sgn in [-1.0, 1.0] {
        let bx = -(ux * cs - sgn * uy * sn);
        let by = -(sgn * ux * sn + uy * cs);
        draw_map_line(
            img,
            layout,
            tip,
            (tip.0 + head * bx, tip.1 + head * by),
            thick,
            INK,
        );
    }
}

/// A line between two map-pixel points (relative to the map, y down), `thick` px wide, in
/// `color`; the part outside the map area is skipped.
pub fn draw_map_line(
    img: &mut RgbaImage,
    layout: &Layout,
    a: (f64, f64),
    b: (f64, f64),
    thick: i64,
    color: [u8; 3],
) {
    let n = ((b.0 - a.0).abs().max((b.1 - a.1).abs()).ceil() as usize).max(1);
    for i in 0..=n {
        let t = i as f64 / n as f64;
        let x = (a.0 + t * (b.0 - a.0)).floor() as i64;
        let y = (a.1 + t * (b.1 - a.1)).floor() as i64;
        for oy in 0..thick {
            for ox in 0..thick {
                layout.blend_map(img, x + ox, y + oy, color, 1.0);
            }
        }
    }
}

/// A scalar field colour-mapped with `colormap` (nearest cell), obstacles dark grey, non-finite
/// values hatched ("no value"), a colour bar labelled `unit` and a legend.
pub fn field_image(
    scene: &Scene,
    field: ArrayView2<f32>,
    title: &str,
    unit: &str,
    colormap: Colormap,
    opts: &ImageOptions,
) -> RgbaImage {
    let spec = FieldSpec {
        title,
        unit,
        colormap,
        range: None,
        legend: vec![
            LegendEntry::Swatch(OBSTACLE, "obstacle".into()),
            LegendEntry::Hatched("no value".into()),
        ],
    };
    field_image_with(scene, field, &spec, opts).0
}

/// How [`array_image`] draws a bare 2-D array (no map around it).
#[derive(Clone, Debug, PartialEq)]
pub struct ArraySpec<'a> {
    /// Title, top left.
    pub title: &'a str,
    /// Unit above the colour bar.
    pub unit: &'a str,
    /// Colour map of the array and the bar.
    pub colormap: Colormap,
    /// Values mapped to the bottom and top of the bar; `None`: the finite range of the array.
    pub range: Option<(f64, f64)>,
    /// Isolines: `None` for none, `Some(None)` for about ten intervals over the range,
    /// `Some(Some(step))` for one every `step` units.
    pub isolines: Option<Option<f64>>,
    /// Edge length of a cell, metres (for the scale bar).
    pub cell_size: f64,
}

/// A 2-D array drawn as every map image is (row index = y, row 0 at the bottom): colour-mapped
/// with its colour bar, non-finite cells hatched, optional isolines (their interval in the
/// title) and a scale bar. For arrays that come without a map: `crowdfield eikonal`'s phi, a
/// speed array, anything a user made with numpy.
pub fn array_image(values: ArrayView2<f64>, spec: &ArraySpec, opts: &ImageOptions) -> RgbaImage {
    let (rows, cols) = values.dim();
    let scene = Scene::empty("array", crate::grid::Grid::new(cols, rows, spec.cell_size));
    let range = spec
        .range
        .or_else(|| finite_range(values.iter().copied()))
        .unwrap_or((0.0, 1.0));
    let step = spec
        .isolines
        .map(|step| step.unwrap_or_else(|| nice_step((range.1 - range.0) / ISOLINE_INTERVALS)));
    let title = match step {
        Some(step) => {
            let decimals = decimals_for(step);
            format!("{}  (isolines every {step:.decimals$} {})", spec.title, spec.unit).replace(" )", ")")
        }
        None => spec.title.to_string(),
    };
    let field = values.mapv(|v| v as f32);
    let field_spec = FieldSpec {
        title: &title,
        unit: spec.unit,
        colormap: spec.colormap,
        range: Some(range),
        legend: vec![LegendEntry::Hatched("not finite".into())],
    };
    let (mut img, layout) = field_image_with(&scene, field.view(), &field_spec, opts);
    if let Some(step) = step
        && rows > 0
        && cols > 0
    {
        draw_isolines(&mut img, &layout, values, step);
    }
    img
}

/// What [`field_image_with`] draws around a scalar field.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldSpec<'a> {
    /// Title, top left.
    pub title: &'a str,
    /// Unit above the colour bar.
    pub unit: &'a str,
    /// Colour map of the field and the bar.
    pub colormap: Colormap,
    /// Values mapped to the bottom and top of the bar; `None`: the finite range over the free
    /// cells.
    pub range: Option<(f64, f64)>,
    /// Legend rows under the colour bar.
    pub legend: Vec<LegendEntry>,
}

/// A scalar field colour-mapped as `spec` says (nearest cell), obstacles dark grey, non-finite
/// values hatched, the colour bar and the legend; also the layout, for drawing on top (agents,
/// marks, outlines).
pub fn field_image_with(
    scene: &Scene,
    field: ArrayView2<f32>,
    spec: &FieldSpec,
    opts: &ImageOptions,
) -> (RgbaImage, Layout) {
    let (rows, cols) = field.dim();
    let layout = Layout::new(rows, cols, spec.legend.len(), opts);
    let mut img = layout.canvas(spec.title);
    if rows == 0 || cols == 0 {
        return (img, layout);
    }
    let (lo, hi) = spec.range.unwrap_or_else(|| {
        let free = field
            .indexed_iter()
            .filter(|&((r, c), _)| !scene.obstacle[[r, c]])
            .map(|(_, &v)| v as f64);
        finite_range(free).unwrap_or((0.0, 1.0))
    });
    layout.fill_map(&mut img, |r, c, px, py| {
        let v = field[[r, c]] as f64;
        if scene.obstacle[[r, c]] {
            OBSTACLE
        } else if !v.is_finite() {
            hatch(layout.map_x + px, layout.map_y + py)
        } else {
            spec.colormap.rgb((v - lo) / (hi - lo))
        }
    });
    layout.draw_colorbar(&mut img, lo, hi, spec.colormap, 0.0, spec.unit);
    layout.draw_legend(&mut img, &spec.legend);
    layout.draw_scale_bar(&mut img, scene.grid.cell_size);
    (img, layout)
}

/// Open floor on [`map_image`].
pub const FLOOR: [u8; 3] = [250, 250, 247];
/// How far a spawn area's fill on [`map_image`] is lightened from its group's colour toward
/// white.
const SPAWN_WASH: f32 = 0.72;
/// How far a goal's fill on [`map_image`] is lightened from the goal colour toward white.
const GOAL_WASH: f32 = 0.55;

/// The fill of a spawn area of a group of colour `color` on [`map_image`].
pub fn spawn_fill(color: [u8; 3]) -> [u8; 3] {
    washed(color, SPAWN_WASH)
}

/// The fill of a goal on [`map_image`].
pub fn goal_fill() -> [u8; 3] {
    washed(GOAL, GOAL_WASH)
}

/// The map before anyone moves, as `solve` writes it to `map.png`: open floor, obstacles, each
/// group's spawn areas filled and outlined in a light tint of its colour, the goals filled and
/// outlined in the goal colour with their names written on them, and `agents` (the walkers as
/// they spawn, see [`crate::sim::spawn::spawn_agents`]) as discs of their body size in their
/// group's colour. The legend names the obstacles, each group with its count of walkers, the
/// spawn areas and the goals; a scale bar sits under it. Also the layout, for reading pixels back.
pub fn map_image_with(
    scene: &Scene,
    agents: &crate::agents::Agents,
    opts: &ImageOptions,
) -> (RgbaImage, Layout) {
    let (rows, cols) = scene.grid.shape();
    let mut legend = vec![LegendEntry::Swatch(OBSTACLE, "obstacle".into())];
    for (g, group) in scene.groups.iter().enumerate() {
        let count = agents.group.iter().filter(|&&k| k as usize == g).count();
        let people = if count == 1 { "person" } else { "people" };
        legend.push(LegendEntry::Swatch(
            group.color,
            format!("{}: {count} {people}", group.name),
        ));
    }
    if let Some(g) = scene.groups.iter().find(|g| !g.spawns.is_empty()) {
        legend.push(LegendEntry::Swatch(spawn_fill(g.color), "spawn area".into()));
    }
    legend.push(LegendEntry::Outline(GOAL, "goal (named)".into()));
    let mut layout = Layout::new(rows, cols, legend.len(), opts);
    // No colour bar: the legend takes its place, the scale bar follows the legend, and a long
    // group name widens the image rather than being cut.
    layout.legend_y = layout.bar_y;
    layout.scale_bar_y = layout.legend_y + legend.len() as u32 * render::LEGEND_ROW_H + 8;
    layout.width = layout
        .width
        .max(layout.bar_x + render::legend_width(&legend) + render::MARGIN);
    let title = format!(
        "{}: the map, {} {} where they start",
        scene.name,
        agents.len(),
        if agents.len() == 1 { "person" } else { "people" }
    );
    let mut img = layout.canvas(&title);
    if rows == 0 || cols == 0 {
        return (img, layout);
    }
    let mut fill = Array2::from_elem((rows, cols), FLOOR);
    for group in &scene.groups {
        for spawn in &group.spawns {
            for rc in spawn.area.mask.cells() {
                fill[rc] = spawn_fill(group.color);
            }
        }
    }
    for goal in scene.groups.iter().flat_map(|g| &g.goals) {
        for rc in goal.mask.cells() {
            fill[rc] = goal_fill();
        }
    }
    layout.fill_map(&mut img, |r, c, _, _| {
        if scene.obstacle[[r, c]] {
            OBSTACLE
        } else {
            fill[[r, c]]
        }
    });
    for group in &scene.groups {
        for spawn in &group.spawns {
            draw_area_outline(&mut img, &layout, &spawn.area.mask, group.color);
        }
    }
    for goal in scene.groups.iter().flat_map(|g| &g.goals) {
        draw_area_outline(&mut img, &layout, &goal.mask, GOAL);
    }
    let ppm = layout.scale as f64 / scene.grid.cell_size;
    for i in 0..agents.len() {
        let color = scene
            .groups
            .get(agents.group[i] as usize)
            .map_or(INK, |g| g.color);
        let centre = layout.map_point(agents.x[i] as f64, agents.y[i] as f64, scene.grid.cell_size);
        let r = (agents.radius[i] as f64 * ppm).max(render::MIN_AGENT_PX);
        render::disc(&mut img, &layout, centre, r + 1.0, INK);
        render::disc(&mut img, &layout, centre, r, color);
    }
    // The goals' names last, over the walkers, each once (groups may share a goal's name).
    let mut named: Vec<&str> = Vec::new();
    for goal in scene.groups.iter().flat_map(|g| &g.goals) {
        if !named.contains(&goal.name.as_str()) {
            named.push(&goal.name);
            label_area(&mut img, &layout, &goal.mask, &goal.name);
        }
    }
    draw_frame(
        &mut img,
        layout.map_x - 1,
        layout.map_y - 1,
        layout.map_w + 2,
        layout.map_h + 2,
        INK,
    );
    layout.draw_legend(&mut img, &legend);
    layout.draw_scale_bar(&mut img, scene.grid.cell_size);
    (img, layout)
}

/// Writes `name` on white in a goal-coloured frame just above the cells of `area` (below them
/// when there is no room above), centred on them and kept inside the map area, so the label
/// leaves the area itself in view.
fn label_area(img: &mut RgbaImage, layout: &Layout, area: &CellMask, name: &str) {
    let mut cells = area.cells();
    let Some(first) = cells.next() else { return };
    let (mut r0, mut r1, mut c0, mut c1) = (first.0, first.0, first.1, first.1);
    for (r, c) in cells {
        (r0, r1, c0, c1) = (r0.min(r), r1.max(r), c0.min(c), c1.max(c));
    }
    if name.is_empty() {
        return;
    }
    let s = layout.scale;
    let (left, right) = (c0 as u32 * s, (c1 as u32 + 1) * s);
    let (top, bottom) = (layout.map_h - (r1 as u32 + 1) * s, layout.map_h - r0 as u32 * s);
    let w = text::text_width(name, render::LABEL_SIZE).ceil() as u32 + 6;
    let h = render::LABEL_SIZE as u32 + 6;
    const GAP: u32 = 3;
    let y = if top >= h + GAP {
        top - h - GAP
    } else if bottom + GAP + h <= layout.map_h {
        bottom + GAP
    } else {
        top
    };
    let centre = (left + right) / 2;
    let x = centre.saturating_sub(w / 2).min(layout.map_w.saturating_sub(w));
    let (x, y) = (layout.map_x + x, layout.map_y + y);
    render::fill_rect(img, x, y, w, h, WHITE);
    draw_frame(img, x, y, w, h, GOAL);
    text::draw_text(img, (x + 3) as f32, (y + 2) as f32, render::LABEL_SIZE, name, INK);
}

/// Writes [`map_image_with`]'s image of `scene` and `agents` to `path` as PNG (atomically).
///
/// # Errors
/// [`Error::Io`] naming `path` when it cannot be written.
pub fn map_png(
    path: &Path,
    scene: &Scene,
    agents: &crate::agents::Agents,
    opts: &ImageOptions,
) -> Result<()> {
    save_png(path, &map_image_with(scene, agents, opts).0)
}

/// Writes the image of an imported plan to `path` as PNG (atomically): [`map_image_with`]'s
/// map, with each spawn area's name written beside it as the goals' are (`crowdfield import`
/// labels both the exits and the distributions).
///
/// # Errors
/// [`Error::Io`] naming `path` when it cannot be written.
pub fn plan_png(
    path: &Path,
    scene: &Scene,
    agents: &crate::agents::Agents,
    opts: &ImageOptions,
) -> Result<()> {
    let (mut img, layout) = map_image_with(scene, agents, opts);
    for spawn in scene.groups.iter().flat_map(|g| &g.spawns) {
        label_area(&mut img, &layout, &spawn.area.mask, &spawn.area.name);
    }
    save_png(path, &img)
}

/// Writes [`field_image`] to `path` as PNG (atomically).
pub fn field_png(
    path: &Path,
    scene: &Scene,
    field: ArrayView2<f32>,
    title: &str,
    unit: &str,
    colormap: Colormap,
    opts: &ImageOptions,
) -> Result<()> {
    save_png(path, &field_image(scene, field, title, unit, colormap, opts))
}

/// Per cell, the largest of the four directional values (e.g. the fastest speed out of a cell).
pub fn max_over_dirs(field: ArrayView3<f32>) -> Array2<f32> {
    field.map_axis(Axis(2), |lane| {
        lane.iter().copied().fold(f32::NEG_INFINITY, f32::max)
    })
}

/// Per cell, the mean of the positive finite directional values, 0 where there is none (the
/// mean walking speed over the faces a walker can cross: on a slope it shows the slope's
/// steepness, where the fastest direction, downhill, would be `f_max` everywhere).
pub fn mean_open_over_dirs(field: ArrayView3<f32>) -> Array2<f32> {
    field.map_axis(Axis(2), |lane| {
        let (sum, n) = lane
            .iter()
            .filter(|v| v.is_finite() && **v > 0.0)
            .fold((0.0f64, 0u32), |(s, n), &v| (s + v as f64, n + 1));
        if n == 0 { 0.0 } else { (sum / n as f64) as f32 }
    })
}

/// Per cell, the mean of the finite directional values; `+inf` where none is finite (e.g. the
/// mean unit cost of the faces a walker can cross).
pub fn mean_finite_over_dirs(field: ArrayView3<f32>) -> Array2<f32> {
    field.map_axis(Axis(2), |lane| {
        let (sum, n) = lane
            .iter()
            .filter(|v| v.is_finite())
            .fold((0.0f64, 0u32), |(s, n), &v| (s + v as f64, n + 1));
        if n == 0 {
            f32::INFINITY
        } else {
            (sum / n as f64) as f32
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn the_unreachable_legend_row_only_when_something_is_unreachable() {
        let mut scene = Scene::empty("t", crate::grid::Grid::new(3, 2, 1.0));
        let mut phi = ndarray::Array2::from_elem((2, 3), 1.0f64);
        let hatched = |l: &[LegendEntry]| l.iter().any(|e| matches!(e, LegendEntry::Hatched(_)));
        assert!(!hatched(&potential_legend(&scene, phi.view())));
        // A wall is +inf but drawn as a wall, not as unreachable.
        phi[(0, 0)] = f64::INFINITY;
        scene.obstacle[(0, 0)] = true;
        assert!(!hatched(&potential_legend(&scene, phi.view())));
        phi[(1, 2)] = f64::INFINITY;
        assert_eq!(potential_legend(&scene, phi.view()).len(), 3);
        assert!(hatched(&potential_legend(&scene, phi.view())));
    }

    #[test]
    fn mean_open_speed_skips_closed_faces() {
        let f = ndarray::Array3::from_shape_vec((1, 2, 4), vec![1.0, 2.0, 0.0, 3.0, 0.0, 0.0, 0.0, f32::NAN])
            .unwrap();
        let m = mean_open_over_dirs(f.view());
        assert_eq!(m[(0, 0)], 2.0);
        assert_eq!(m[(0, 1)], 0.0);
    }

    #[test]
    fn colour_bar_ranges_of_constant_fields_keep_their_sign() {
        assert_eq!(finite_range([0.0, 0.0].into_iter()), Some((0.0, 1.0)));
        assert_eq!(finite_range([2.0, 2.0].into_iter()), Some((1.0, 3.0)));
        assert_eq!(finite_range([-2.0].into_iter()), Some((-3.0, -1.0)));
        assert_eq!(
            finite_range([1.0, f64::INFINITY, 3.0].into_iter()),
            Some((1.0, 3.0))
        );
        assert_eq!(finite_range([f64::NAN].into_iter()), None);
    }

    #[test]
    fn bilinear_interpolates_and_falls_back_to_nearest() {
        let f = array![[0.0, 1.0], [2.0, f64::INFINITY]];
        assert_eq!(bilinear(f.view(), 0.5, 0.0), 0.5);
        assert_eq!(
            bilinear(f.view(), 0.2, 0.7),
            2.0,
            "nearest cell (1, 0) where a corner is inf"
        );
        assert_eq!(bilinear(f.view(), -3.0, -3.0), 0.0, "clamped");
    }

    #[test]
    fn direction_reductions() {
        let mut f = ndarray::Array3::<f32>::from_elem((1, 2, 4), f32::INFINITY);
        f[[0, 0, 0]] = 1.0;
        f[[0, 0, 2]] = 3.0;
        let m = mean_finite_over_dirs(f.view());
        assert_eq!(m[[0, 0]], 2.0);
        assert_eq!(m[[0, 1]], f32::INFINITY);
        assert_eq!(max_over_dirs(f.view())[[0, 0]], f32::INFINITY);
    }
}
