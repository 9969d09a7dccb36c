//! The simulation's images: the arrival-curve plot, the peak-density map and the animation
//! frames. They are drawn with [`crate::export`]'s code (title band, Hack font, colour maps,
//! colour bar with round ticks and unit, legend), so they look like the `solve` images.
//!
//! Map images use [`Layout`] (y up: grid row 0 is the bottom row of the map area).

use crate::export::render::{
    INK, LABEL_SIZE, LEGEND_ROW_H, Layout, MARGIN, MIN_AGENT_PX, OBSTACLE, SIDE_W, TICK_LEN, TITLE_H, WHITE,
    blank_canvas, disc, draw_legend_at, fill_rect, ticks,
};
use crate::export::text::{draw_text, text_width};
use crate::export::{
    Colormap, FieldSpec, ImageOptions, LegendEntry, draw_area_outline, draw_map_line, field_image_with,
};
use crate::scene::Scene;
use crate::sim::Simulation;
use crate::sim::report::Report;
use image::RgbaImage;
use ndarray::Array2;

/// Colour map of density images: the one of `solve`'s `density.png`.
pub const DENSITY_COLORMAP: Colormap = Colormap::YellowOrangeRed;
/// Colour map of potential images: the one of `solve`'s `potential.png`.
pub const POTENTIAL_COLORMAP: Colormap = Colormap::Viridis;
/// Unit of density colour bars, as on `solve`'s `density.png`.
pub const DENSITY_UNIT: &str = "persons/m²";
/// Unit of potential colour bars, as on `solve`'s `potential.png`.
pub const POTENTIAL_UNIT: &str = "potential, s";

/// Width of the arrivals plot area, px: the smallest map width of the `solve` images
/// ([`ImageOptions::min_map_width`]'s default), so plot and maps line up side by side.
const PLOT_W: u32 = 800;
/// Height of the arrivals plot area, px (a 20:11 plot, room for ten labelled ticks).
const PLOT_H: u32 = 440;
/// Room left of the plot for the agent-count tick labels, px (five digits at [`LABEL_SIZE`]).
const Y_LABELS_W: u32 = 56;
/// Room above the plot for the y-axis name, px (as above a colour bar).
const Y_NAME_H: u32 = 24;
/// Room under the plot for the time tick labels and the x-axis name, px.
const X_LABELS_H: u32 = 52;
/// Grid lines of the plot: light enough to leave the curves in front.
const GRID_LINE: [u8; 3] = [228, 228, 228];
/// Aim for about this many labelled time ticks.
const TIME_TICKS: f64 = 8.0;
/// Aim for at most this many labelled agent-count ticks.
const COUNT_TICKS: f64 = 6.0;
/// Width of the arrival curves, px.
const CURVE_W: u32 = 2;
/// Colour of a group without a colour in the scene.
const FALLBACK_GROUP_COLOR: [u8; 3] = [0, 0, 200];
/// Half-length of the peak cross's arms, in map pixels per cell (at least [`MIN_CROSS_ARM`]).
const CROSS_ARM_CELLS: f64 = 2.0;
/// Shortest arm of the peak cross, px.
const MIN_CROSS_ARM: f64 = 6.0;

/// Where each part of the arrivals plot goes, px.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotLayout {
    /// Plot area, left edge (the y axis).
    pub plot_x: u32,
    /// Plot area, top edge.
    pub plot_y: u32,
    /// Plot area width.
    pub plot_w: u32,
    /// Plot area height (the x axis is its last row).
    pub plot_h: u32,
    /// Legend, left edge (where the colour bar of a map image is).
    pub legend_x: u32,
    /// Legend, top edge.
    pub legend_y: u32,
    /// Whole image width.
    pub width: u32,
    /// Whole image height.
    pub height: u32,
}

impl PlotLayout {
    /// The layout of a plot with `legend_rows` legend entries.
    pub fn new(legend_rows: usize) -> Self {
        let plot_x = MARGIN + Y_LABELS_W;
        let plot_y = TITLE_H + Y_NAME_H;
        let legend_x = plot_x + PLOT_W + MARGIN + 8;
        let legend_y = plot_y;
        let height = (plot_y + PLOT_H + X_LABELS_H + MARGIN)
            .max(legend_y + legend_rows as u32 * LEGEND_ROW_H + MARGIN);
        Self {
            plot_x,
            plot_y,
            plot_w: PLOT_W,
            plot_h: PLOT_H,
            legend_x,
            legend_y,
            width: legend_x + SIDE_W,
            height,
        }
    }

    /// The layout of a plot with `legend`: as [`PlotLayout::new`], widened where a legend
    /// text is longer than the side column holds, so no name is cut off.
    pub fn for_legend(legend: &[LegendEntry]) -> Self {
        let mut l = Self::new(legend.len());
        l.width = l
            .width
            .max(l.legend_x + crate::export::render::legend_width(legend) + MARGIN);
        l
    }

    /// Pixel column of `t` on an axis from 0 to `t_max`.
    pub fn x_of(&self, t: f64, t_max: f64) -> u32 {
        self.plot_x
            + (t / t_max * (self.plot_w - 1) as f64)
                .round()
                .clamp(0.0, (self.plot_w - 1) as f64) as u32
    }

    /// Pixel row of `n` on an axis from 0 (bottom) to `n_max` (top).
    pub fn y_of(&self, n: f64, n_max: f64) -> u32 {
        let up = (n / n_max * (self.plot_h - 1) as f64)
            .round()
            .clamp(0.0, (self.plot_h - 1) as f64) as u32;
        self.plot_y + self.plot_h - 1 - up
    }
}

/// An axis-aligned segment [`CURVE_W`] px wide from `(x0, y0)` to `(x1, y1)`.
fn segment(img: &mut RgbaImage, (x0, y0): (u32, u32), (x1, y1): (u32, u32), c: [u8; 3]) {
    let (x, y) = (x0.min(x1), y0.min(y1));
    fill_rect(img, x, y, x0.abs_diff(x1) + CURVE_W, y0.abs_diff(y1) + CURVE_W, c);
}

/// Plot of the arrival curves (agents out over time) of every group in its colour (`colors`,
/// by group index) and, with several groups, the total in ink; with round ticks, axis names in
/// units, and a legend where the map images have their colour bar.
pub fn arrivals_plot(report: &Report, colors: &[[u8; 3]]) -> RgbaImage {
    let mut series: Vec<(&str, &[(f64, usize)], [u8; 3])> = Vec::new();
    for (g, gr) in report.groups.iter().enumerate() {
        let c = colors.get(g).copied().unwrap_or(FALLBACK_GROUP_COLOR);
        series.push((gr.name.as_str(), gr.arrival_curve.as_slice(), c));
    }
    if report.groups.len() > 1 {
        series.push(("total", report.total.arrival_curve.as_slice(), INK));
    }
    let legend: Vec<LegendEntry> = series
        .iter()
        .map(|(name, _, c)| LegendEntry::Swatch(*c, name.to_string()))
        .collect();
    let l = PlotLayout::for_legend(&legend);
    let inside = report.total.remaining.total - report.total.remaining.no_goal;
    let title = if inside > 0 {
        // A run cut short by its time limit must not read as a finished evacuation.
        format!(
            "{}: agents out over time, NOT COMPLETE: {inside} still inside at {:.0} s",
            report.map, report.end_time
        )
    } else {
        format!("{}: agents out over time", report.map)
    };
    let mut img = blank_canvas(l.width, l.height, &title);
    let t_max = report
        .end_time
        .max(report.total.last_arrival.unwrap_or(0.0))
        .max(1.0);
    let n_max = (report.total.agents as f64).max(1.0);
    let (left, bottom) = (l.plot_x, l.plot_y + l.plot_h - 1);

    // Grid lines, ticks and tick labels.
    for (t, label) in ticks(0.0, t_max, TIME_TICKS) {
        let x = l.x_of(t, t_max);
        fill_rect(&mut img, x, l.plot_y, 1, l.plot_h, GRID_LINE);
        fill_rect(&mut img, x, bottom + 1, 1, TICK_LEN, INK);
        let tx = x as f32 - text_width(&label, LABEL_SIZE) / 2.0;
        draw_text(
            &mut img,
            tx,
            (bottom + TICK_LEN + 4) as f32,
            LABEL_SIZE,
            &label,
            INK,
        );
    }
    for (n, label) in ticks(0.0, n_max, COUNT_TICKS.min(n_max)) {
        let y = l.y_of(n, n_max);
        fill_rect(&mut img, left, y, l.plot_w, 1, GRID_LINE);
        fill_rect(&mut img, left - TICK_LEN, y, TICK_LEN, 1, INK);
        let tx = (left - TICK_LEN - 4) as f32 - text_width(&label, LABEL_SIZE);
        draw_text(&mut img, tx, y as f32 - LABEL_SIZE * 0.6, LABEL_SIZE, &label, INK);
    }
    fill_rect(&mut img, left, l.plot_y, 1, l.plot_h, INK);
    fill_rect(&mut img, left, bottom, l.plot_w, 1, INK);
    let x_name = "time, s";
    let x_name_x = left as f32 + (l.plot_w as f32 - text_width(x_name, LABEL_SIZE)) / 2.0;
    draw_text(&mut img, x_name_x, (bottom + 30) as f32, LABEL_SIZE, x_name, INK);
    draw_text(
        &mut img,
        MARGIN as f32,
        (l.plot_y - 22) as f32,
        LABEL_SIZE,
        "agents out",
        INK,
    );

    // Curves as steps: flat until each arrival, then up.
    for (_, curve, c) in &series {
        let (mut last_t, mut last_n) = (0.0, 0.0);
        for &(t, n) in curve.iter() {
            let n = n as f64;
            let (x0, x1) = (l.x_of(last_t, t_max), l.x_of(t, t_max));
            let (y0, y1) = (l.y_of(last_n, n_max), l.y_of(n, n_max));
            segment(&mut img, (x0, y0), (x1, y0), *c);
            segment(&mut img, (x1, y0), (x1, y1), *c);
            (last_t, last_n) = (t, n);
        }
        let (x0, x1) = (l.x_of(last_t, t_max), l.x_of(report.end_time.max(last_t), t_max));
        let y = l.y_of(last_n, n_max);
        segment(&mut img, (x0, y), (x1, y), *c);
    }

    mark_changes(&mut img, &l, t_max, &report.exit_changes, &report.scene_changes);
    draw_legend_at(&mut img, l.legend_x, l.legend_y, &legend);
    img
}

/// The colour of the marks of exits that close.
const CLOSED_MARK: [u8; 3] = [200, 40, 40];
/// The colour of the marks of exits that open.
const OPENED_MARK: [u8; 3] = [30, 140, 60];
/// Dash and gap of a mark's line, px.
const MARK_DASH: u32 = 6;

/// Marks each exit change on a time plot of layout `l` (time axis up to `t_max`): a dashed
/// vertical line at its time, red for a closing and green for an opening, labelled with the
/// exit's name at the top of the plot (staggered over three rows so that close events stay
/// legible).
pub fn mark_exit_changes(
    img: &mut RgbaImage,
    l: &PlotLayout,
    t_max: f64,
    changes: &[crate::sim::ExitChange],
) {
    mark_changes(img, l, t_max, changes, &[]);
}

/// The colour of the marks of the other changes of a scene (a waiting area released, a
/// region changed).
const SCENE_MARK: [u8; 3] = [60, 90, 200];

/// Marks the exit changes and the other changes of the scene on a time plot of layout `l`, in
/// time order: exits as [`mark_exit_changes`] does, a released waiting area or a changed
/// region in blue, labelled with its name and what changed.
pub fn mark_changes(
    img: &mut RgbaImage,
    l: &PlotLayout,
    t_max: f64,
    exits: &[crate::sim::ExitChange],
    scene: &[crate::sim::SceneChange],
) {
    let mut marks: Vec<(f64, String, [u8; 3])> = exits
        .iter()
        .map(|c| {
            let (verb, color) = if c.open {
                ("opens", OPENED_MARK)
            } else {
                ("closes", CLOSED_MARK)
            };
            (c.time, format!("{} {verb}", c.name), color)
        })
        .collect();
    marks.extend(
        scene
            .iter()
            .map(|c| (c.time, format!("{}: {}", c.name, c.what), SCENE_MARK)),
    );
    marks.sort_by(|a, b| a.0.total_cmp(&b.0));
    mark_times(img, l, t_max, &marks);
}

/// Draws each `(time, label, colour)` as a dashed vertical line at its time with its label at
/// the top of the plot (staggered over three rows).
fn mark_times(img: &mut RgbaImage, l: &PlotLayout, t_max: f64, marks: &[(f64, String, [u8; 3])]) {
    for (k, (time, label, color)) in marks.iter().enumerate() {
        if *time > t_max + 1e-9 {
            continue;
        }
        let color = *color;
        let x = l.x_of(*time, t_max);
        let mut y = l.plot_y;
        while y < l.plot_y + l.plot_h {
            let h = MARK_DASH.min(l.plot_y + l.plot_h - y);
            fill_rect(img, x, y, CURVE_W, h, color);
            y += 2 * MARK_DASH;
        }
        let size = LABEL_SIZE * 0.85;
        let width = text_width(label, size);
        let right = (l.plot_x + l.plot_w) as f32;
        let tx = (x as f32 + 4.0).min(right - width).max(l.plot_x as f32);
        let ty = l.plot_y as f32 + 4.0 + (k % 3) as f32 * (size + 4.0);
        draw_text(img, tx, ty, size, label, color);
    }
}

/// Heat map of the highest density seen in each cell over the run, drawn like `solve`'s
/// `density.png` (same colour map and unit) with the bar from 0 to the maximum, and a cross at
/// the peak `peak_xy` (metres).
pub fn peak_density_map(scene: &Scene, peak_map: &Array2<f32>, peak_xy: (f64, f64)) -> RgbaImage {
    let max = peak_map.iter().fold(0.0f32, |m, &v| m.max(v)) as f64;
    let title = format!(
        "{}: peak density (per {} m²), max {max:.1}/m²",
        scene.name,
        (crate::sim::measure::window_area_m2(scene.grid.cell_size) * 100.0).round() / 100.0
    );
    let spec = FieldSpec {
        title: &title,
        unit: DENSITY_UNIT,
        colormap: DENSITY_COLORMAP,
        range: Some((0.0, if max > 0.0 { max } else { 1.0 })),
        legend: vec![
            LegendEntry::Swatch(OBSTACLE, "obstacle".into()),
            LegendEntry::Cross(INK, "peak".into()),
        ],
    };
    let (mut img, layout) = field_image_with(scene, peak_map.view(), &spec, &ImageOptions::default());
    let (cx, cy) = layout.map_point(peak_xy.0, peak_xy.1, scene.grid.cell_size);
    let arm = (CROSS_ARM_CELLS * layout.scale as f64).max(MIN_CROSS_ARM);
    for (dx, dy) in [(1.0, 1.0), (1.0, -1.0)] {
        let (a, b) = ((cx - arm * dx, cy - arm * dy), (cx + arm * dx, cy + arm * dy));
        // A white halo under the ink keeps the cross visible on the darkest colours.
        draw_map_line(
            &mut img,
            &layout,
            (a.0 - 1.0, a.1 - 1.0),
            (b.0 - 1.0, b.1 - 1.0),
            4,
            WHITE,
        );
        draw_map_line(&mut img, &layout, a, b, 2, INK);
    }
    img
}

/// What is painted under the agents in a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FrameField {
    /// Density, persons/m² (colour bar from 0 to the model's maximum density).
    #[default]
    Density,
    /// The first group's potential, seconds.
    Potential,
}

impl crate::names::Named for FrameField {
    const WHAT: &'static str = "FrameField";
    const ALL: &'static [Self] = &[Self::Density, Self::Potential];

    /// `density` or `potential`: the command's `--frame-field`.
    fn name(self) -> &'static str {
        match self {
            Self::Density => "density",
            Self::Potential => "potential",
        }
    }
}

/// The legend of a frame: obstacles, unreachable cells and whose potential the colours show
/// (potential only), one swatch per group in its agents' colour (its goals are outlined in the
/// same colour), and the waiting walkers' mark when a spawn area has pre-movement times. It
/// depends on the scene alone, so every frame of a run has the same size.
pub fn frame_legend(scene: &Scene, field: FrameField) -> Vec<LegendEntry> {
    let mut legend = vec![LegendEntry::Swatch(OBSTACLE, "obstacle".into())];
    if field == FrameField::Potential {
        legend.push(LegendEntry::Hatched("unreachable".into()));
        // The field shown is the first group's: say whose.
        if let Some(g) = scene.groups.first() {
            legend.push(LegendEntry::Ramp(
                POTENTIAL_COLORMAP,
                format!("potential of {}", g.name),
            ));
        }
    }
    legend.extend(
        scene
            .groups
            .iter()
            .map(|g| LegendEntry::Swatch(g.color, g.name.clone())),
    );
    if let Some(g) = scene.groups.iter().find(|g| has_premovement(g)) {
        legend.push(LegendEntry::Ring(g.color, "waiting to start".into()));
    }
    legend
}

/// Whether some spawn area of `group` lets its walkers wait before walking.
fn has_premovement(group: &crate::scene::Group) -> bool {
    group.spawns.iter().any(|s| s.premovement[1] > 0.0)
}

/// The title of a frame: the time, the agents walking and, apart from them, those still
/// waiting out their pre-movement time ([`Simulation::is_waiting`]), and the map's name:
/// `t = 12.0 s, 40 walking, 8 waiting (pre-movement): office`, or
/// `t = 12.0 s, 40 agents walking: hall` when nobody waits.
pub fn frame_title(sim: &Simulation) -> String {
    let waiting = (0..sim.agents.len()).filter(|&i| sim.is_waiting(i)).count();
    let walking = sim.agents.len() - waiting;
    let (t, name) = (sim.time, &sim.scene.name);
    if waiting == 0 {
        let agents = if walking == 1 { "agent" } else { "agents" };
        format!("t = {t:.1} s, {walking} {agents} walking: {name}")
    } else {
        format!("t = {t:.1} s, {walking} walking, {waiting} waiting (pre-movement): {name}")
    }
}

/// One animation frame, laid out like the `solve` images: the field underneath with its colour
/// bar, obstacles, each group's goals outlined in its colour, the agents as discs in their
/// group's colour with an ink rim (and a white centre while they wait out their pre-movement
/// time), the time and agent counts in the title ([`frame_title`]), and the legend.
pub fn frame(sim: &Simulation, field: FrameField) -> RgbaImage {
    let scene = &sim.scene;
    let a = &sim.agents;
    let title = frame_title(sim);
    let zeros = || Array2::<f32>::zeros(scene.grid.shape());
    let (value, unit, colormap, range) = match field {
        FrameField::Density => (
            sim.fields().map_or_else(zeros, |f| f.density.rho.clone()),
            DENSITY_UNIT,
            DENSITY_COLORMAP,
            Some((0.0, scene.params.rho_max.max(f64::MIN_POSITIVE))),
        ),
        FrameField::Potential => (
            sim.potentials()
                .first()
                .map_or_else(zeros, |phi| phi.mapv(|v| v as f32)),
            POTENTIAL_UNIT,
            POTENTIAL_COLORMAP,
            None,
        ),
    };
    let spec = FieldSpec {
        title: &title,
        unit,
        colormap,
        range,
        legend: frame_legend(scene, field),
    };
    let (mut img, layout) = field_image_with(scene, value.view(), &spec, &ImageOptions::default());
    for group in &scene.groups {
        for goal in &group.goals {
            draw_area_outline(&mut img, &layout, &goal.mask, group.color);
        }
    }
    let ppm = layout.scale as f64 / scene.grid.cell_size;
    draw_obstacles(&mut img, &layout, sim, ppm);
    for i in 0..a.len() {
        let color = scene
            .groups
            .get(a.group[i] as usize)
            .map_or(FALLBACK_GROUP_COLOR, |g| g.color);
        let centre = layout.map_point(a.x[i] as f64, a.y[i] as f64, scene.grid.cell_size);
        let r = (a.radius[i] as f64 * ppm).max(MIN_AGENT_PX);
        disc(&mut img, &layout, centre, r + 1.0, INK);
        disc(&mut img, &layout, centre, r, color);
        if sim.is_waiting(i) {
            disc(&mut img, &layout, centre, WAITING_CENTRE * r, WHITE);
        }
    }
    img
}

/// Colour of a moving obstacle on a frame: a dark slate, apart from walls and every group's
/// colour.
const OBSTACLE_COLOR: [u8; 3] = [70, 80, 100];

/// The moving obstacles ([`Simulation::obstacles`]) filled on a frame drawn `ppm` pixels per
/// metre: each map pixel whose centre lies inside one.
fn draw_obstacles(img: &mut RgbaImage, layout: &Layout, sim: &Simulation, ppm: f64) {
    let h = sim.scene.grid.cell_size;
    let (map_w, map_h) = (layout.map_w as f64, layout.map_h as f64);
    for (_, o) in sim.obstacles() {
        // The pixels of the obstacle's bounding disc, clipped to the map.
        let [x, y] = o.position();
        let (cx, cy) = layout.map_point(x, y, h);
        let r = o.shape().reach() * ppm + 1.0;
        let (x0, x1) = ((cx - r).max(0.0) as i64, (cx + r).min(map_w) as i64);
        let (y0, y1) = ((cy - r).max(0.0) as i64, (cy + r).min(map_h) as i64);
        for py in y0..y1 {
            for px in x0..x1 {
                let mx = (px as f64 + 0.5) / ppm;
                let my = (map_h - (py as f64 + 0.5)) / ppm;
                if o.distance(mx, my) <= 0.0 {
                    layout.blend_map(img, px, py, OBSTACLE_COLOR, 1.0);
                }
            }
        }
    }
}

/// The white centre of a waiting walker's disc, as a fraction of its radius.
const WAITING_CENTRE: f64 = 0.45;

/// The layout [`frame`] and [`peak_density_map`] draw `scene` with, given their legend length.
pub fn map_layout(scene: &Scene, legend_rows: usize) -> Layout {
    Layout::new(
        scene.grid.rows,
        scene.grid.cols,
        legend_rows,
        &ImageOptions::default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_axes_map_the_range_onto_the_plot_area() {
        let l = PlotLayout::new(3);
        assert_eq!(l.x_of(0.0, 10.0), l.plot_x);
        assert_eq!(l.x_of(10.0, 10.0), l.plot_x + l.plot_w - 1);
        assert_eq!(l.y_of(0.0, 5.0), l.plot_y + l.plot_h - 1, "zero at the bottom");
        assert_eq!(l.y_of(5.0, 5.0), l.plot_y, "the maximum at the top");
        assert!(l.legend_x > l.plot_x + l.plot_w && l.width == l.legend_x + SIDE_W);
        let tall = PlotLayout::new(40);
        assert!(
            tall.height >= tall.legend_y + 40 * LEGEND_ROW_H,
            "a long legend fits"
        );
    }

    #[test]
    fn a_long_legend_name_widens_the_plot_instead_of_being_cut() {
        let short = vec![LegendEntry::Swatch(INK, "east".into())];
        assert_eq!(PlotLayout::for_legend(&short), PlotLayout::new(1));
        let name = "visitors/north-east emergency exit by the stage (42)".to_string();
        let long = vec![LegendEntry::Swatch(INK, name.clone())];
        let l = PlotLayout::for_legend(&long);
        let text_end = l.legend_x as f32 + 24.0 + text_width(&name, LABEL_SIZE);
        assert!(text_end <= (l.width - MARGIN) as f32, "{text_end} > {}", l.width);
        // Drawn, the text's last column holds ink and the margin after it stays white.
        let mut img = RgbaImage::from_pixel(l.width, l.height, image::Rgba([255; 4]));
        draw_legend_at(&mut img, l.legend_x, l.legend_y, &long);
        let inked =
            |x: u32| (l.legend_y..l.legend_y + LEGEND_ROW_H).any(|y| img.get_pixel(x, y).0 != [255; 4]);
        let last_ink = (0..l.width).rev().find(|&x| inked(x)).unwrap();
        assert!(
            last_ink + MARGIN / 2 < l.width && last_ink as f32 > text_end - 12.0,
            "{last_ink}"
        );
    }

    #[test]
    fn segments_are_curve_wide_in_both_directions() {
        let mut img = RgbaImage::from_pixel(20, 20, image::Rgba([255; 4]));
        segment(&mut img, (10, 5), (2, 5), [1, 2, 3]);
        assert_eq!(img.get_pixel(2, 6).0, [1, 2, 3, 255]);
        assert_eq!(img.get_pixel(11, 5).0, [1, 2, 3, 255]);
        assert_eq!(img.get_pixel(12, 5).0, [255; 4]);
        assert_eq!(img.get_pixel(5, 7).0, [255; 4]);
    }

    #[test]
    fn discs_are_clipped_to_the_map() {
        let layout = Layout::new(2, 2, 0, &ImageOptions::default());
        let mut img = RgbaImage::from_pixel(layout.width, layout.height, image::Rgba([255; 4]));
        disc(&mut img, &layout, (0.0, 0.0), 10.0, [9, 9, 9]);
        assert_eq!(
            img.get_pixel(layout.map_x + 2, layout.map_y + 2).0,
            [9, 9, 9, 255]
        );
        assert_eq!(
            img.get_pixel(layout.map_x - 2, layout.map_y + 2).0,
            [255; 4],
            "left of the map"
        );
    }
}

/// One series of an [`XyPlot`].
#[derive(Clone, Debug, PartialEq)]
pub enum PlotSeries {
    /// A curve through the points, in order.
    Line {
        /// Legend text.
        name: String,
        /// Colour.
        color: [u8; 3],
        /// `(x, y)` points.
        points: Vec<(f64, f64)>,
    },
    /// A staircase: flat until each point, then up (an arrival curve).
    Steps {
        /// Legend text.
        name: String,
        /// Colour.
        color: [u8; 3],
        /// `(x, y)` corners, x increasing.
        points: Vec<(f64, f64)>,
    },
    /// Markers.
    Points {
        /// Legend text.
        name: String,
        /// Colour.
        color: [u8; 3],
        /// `(x, y)` points.
        points: Vec<(f64, f64)>,
    },
    /// A shaded band `lo <= y <= hi` across the plot (a published range).
    Band {
        /// Legend text.
        name: String,
        /// Colour (drawn washed out).
        color: [u8; 3],
        /// `(lo, hi)`.
        range: (f64, f64),
    },
}

/// A plot of `y` against `x` from 0 to the given maxima, drawn like the arrivals plot.
#[derive(Clone, Debug, PartialEq)]
pub struct XyPlot {
    /// Title.
    pub title: String,
    /// The x axis's name with its unit.
    pub x_name: String,
    /// The y axis's name with its unit.
    pub y_name: String,
    /// Right end of the x axis.
    pub x_max: f64,
    /// Top of the y axis.
    pub y_max: f64,
    /// The series, drawn in order (bands first, as a rule).
    pub series: Vec<PlotSeries>,
}

/// Half-size of a plot marker, px.
const MARKER_HALF: u32 = 4;
/// Wash of a band's colour (0: the colour, 1: white).
const BAND_WASH: f32 = 0.7;

/// Draws an [`XyPlot`] with round ticks, grid lines, axis names and a legend.
pub fn xy_plot(plot: &XyPlot) -> RgbaImage {
    let l = PlotLayout::new(plot.series.len());
    let mut img = blank_canvas(l.width, l.height, &plot.title);
    let (x_max, y_max) = (plot.x_max.max(1e-9), plot.y_max.max(1e-9));
    let (left, bottom) = (l.plot_x, l.plot_y + l.plot_h - 1);
    for s in &plot.series {
        if let PlotSeries::Band { color, range, .. } = s {
            let (y0, y1) = (l.y_of(range.1, y_max), l.y_of(range.0, y_max));
            fill_rect(
                &mut img,
                left,
                y0,
                l.plot_w,
                y1.saturating_sub(y0) + 1,
                crate::export::render::washed(*color, BAND_WASH),
            );
        }
    }
    for (t, label) in ticks(0.0, x_max, TIME_TICKS) {
        let x = l.x_of(t, x_max);
        fill_rect(&mut img, x, l.plot_y, 1, l.plot_h, GRID_LINE);
        fill_rect(&mut img, x, bottom + 1, 1, TICK_LEN, INK);
        let tx = x as f32 - text_width(&label, LABEL_SIZE) / 2.0;
        draw_text(
            &mut img,
            tx,
            (bottom + TICK_LEN + 4) as f32,
            LABEL_SIZE,
            &label,
            INK,
        );
    }
    for (v, label) in ticks(0.0, y_max, COUNT_TICKS) {
        let y = l.y_of(v, y_max);
        fill_rect(&mut img, left, y, l.plot_w, 1, GRID_LINE);
        fill_rect(&mut img, left - TICK_LEN, y, TICK_LEN, 1, INK);
        let tx = (left - TICK_LEN - 4) as f32 - text_width(&label, LABEL_SIZE);
        draw_text(&mut img, tx, y as f32 - LABEL_SIZE * 0.6, LABEL_SIZE, &label, INK);
    }
    fill_rect(&mut img, left, l.plot_y, 1, l.plot_h, INK);
    fill_rect(&mut img, left, bottom, l.plot_w, 1, INK);
    let x_name_x = left as f32 + (l.plot_w as f32 - text_width(&plot.x_name, LABEL_SIZE)) / 2.0;
    draw_text(
        &mut img,
        x_name_x,
        (bottom + 30) as f32,
        LABEL_SIZE,
        &plot.x_name,
        INK,
    );
    draw_text(
        &mut img,
        MARGIN as f32,
        (l.plot_y - 22) as f32,
        LABEL_SIZE,
        &plot.y_name,
        INK,
    );
    let px = |(x, y): (f64, f64)| (l.x_of(x, x_max), l.y_of(y, y_max));
    for s in &plot.series {
        match s {
            PlotSeries::Line { color, points, .. } => {
                for w in points.windows(2) {
                    let (a, b) = (px(w[0]), px(w[1]));
                    let n = a.0.abs_diff(b.0).max(a.1.abs_diff(b.1)).max(1);
                    for k in 0..=n {
                        let f = k as f64 / n as f64;
                        let x = a.0 as f64 + f * (b.0 as f64 - a.0 as f64);
                        let y = a.1 as f64 + f * (b.1 as f64 - a.1 as f64);
                        fill_rect(
                            &mut img,
                            x.round() as u32,
                            y.round() as u32,
                            CURVE_W,
                            CURVE_W,
                            *color,
                        );
                    }
                }
            }
            PlotSeries::Steps { color, points, .. } => {
                let mut last = (0.0, 0.0);
                for &p in points {
                    let (x0, y0) = px(last);
                    let (x1, y1) = px(p);
                    segment(&mut img, (x0, y0), (x1, y0), *color);
                    segment(&mut img, (x1, y0), (x1, y1), *color);
                    last = p;
                }
            }
            PlotSeries::Points { color, points, .. } => {
                for &p in points {
                    let (x, y) = px(p);
                    let size = 2 * MARKER_HALF + 1;
                    fill_rect(
                        &mut img,
                        x.saturating_sub(MARKER_HALF),
                        y.saturating_sub(MARKER_HALF),
                        size,
                        size,
                        *color,
                    );
                }
            }
            PlotSeries::Band { .. } => {}
        }
    }
    let legend: Vec<LegendEntry> = plot
        .series
        .iter()
        .map(|s| match s {
            PlotSeries::Band { name, color, .. } => {
                LegendEntry::Swatch(crate::export::render::washed(*color, BAND_WASH), name.clone())
            }
            PlotSeries::Line { name, color, .. }
            | PlotSeries::Steps { name, color, .. }
            | PlotSeries::Points { name, color, .. } => LegendEntry::Swatch(*color, name.clone()),
        })
        .collect();
    draw_legend_at(&mut img, l.legend_x, l.legend_y, &legend);
    img
}
