//! What an evacuation planner hands on from a run, beside `report.json`: the worst Fruin level
//! of service per place and the time spent at E or F ([`los_map`], [`crowded_time_map`]), the
//! clear time per place (the RSET map, [`clear_time_map`]), the histogram of individual
//! evacuation times per group ([`evacuation_histogram`]) and the use of each exit over time
//! ([`exit_usage`], [`exit_usage_plot`]). [`write_planner_outputs`] writes them all (PNG,
//! `.npy`, CSV), atomically; [`crate::export::html`] puts them into `report.html`.

use crate::error::Result;
use crate::export::render::{
    INK, LABEL_SIZE, Layout, OBSTACLE, TICK_LEN, blank_canvas, draw_legend_at, fill_rect, hatch, ticks,
};
use crate::export::text::{draw_text, text_width};
use crate::export::{Colormap, ImageOptions, LegendEntry, save_png};
use crate::io::{write_bytes_atomic, write_npy};
use crate::run::draw::PlotLayout;
use crate::scene::Scene;
use crate::sim::Simulation;
use crate::sim::levels::{LEVELS, NO_LEVEL, fruin_upper_bounds};
use crate::text::csv_cell;
use image::RgbaImage;
use ndarray::{Array2, ArrayView2};
use std::fmt::Write as _;
use std::path::Path;

/// Colours of levels A to F: green through yellow to dark red, the usual reading of a
/// level-of-service map (A free flow, F jammed).
pub const LOS_COLORS: [[u8; 3]; 6] = [
    [26, 152, 80],
    [145, 207, 96],
    [217, 239, 139],
    [254, 224, 139],
    [252, 141, 89],
    [165, 0, 38],
];

/// Width of the sliding window exit flows are measured over, seconds: at the 1 to 2
/// persons/s of a door, 10 s holds 10 to 20 passages, enough for a flow good to about a
/// quarter, short enough to show a door saturating and emptying.
pub const FLOW_WINDOW_S: f64 = 10.0;

/// Most rows of `exit_usage.csv` (its sampling interval is the time step, or longer for long
/// runs).
const EXIT_USAGE_MAX_ROWS: f64 = 5000.0;

/// Colour of still-occupied cells on the clear-time map: not clear when the run stopped.
const NOT_CLEAR: [u8; 3] = [0, 0, 0];

/// About how many histogram bars span the evacuation times.
const HISTOGRAM_BINS: f64 = 24.0;

/// Colours of exit curves, by exit (cycled).
fn exit_color(i: usize) -> [u8; 3] {
    let c = colorous::CATEGORY10[i % colorous::CATEGORY10.len()];
    [c.r, c.g, c.b]
}

/// The legend label of level `i`: its letter and density range.
pub fn level_label(i: usize) -> String {
    let b = fruin_upper_bounds();
    match i {
        0 => format!("A  up to {:.2}/m²", b[0]),
        5 => format!("F  over {:.2}/m²", b[4]),
        _ => format!("{}  {:.2} to {:.2}/m²", LEVELS[i], b[i - 1], b[i]),
    }
}

/// The map of the worst level of service reached in each place (`worst`: indices into
/// [`LEVELS`], [`NO_LEVEL`] where no one came near, hatched), in [`LOS_COLORS`], with a legend
/// of the levels and their densities; its title says that the levels count the walkers who
/// have started ([`crate::sim::levels`]).
pub fn los_map(scene: &Scene, worst: ArrayView2<u8>) -> RgbaImage {
    let mut legend = vec![
        LegendEntry::Swatch(OBSTACLE, "obstacle".into()),
        LegendEntry::Hatched("no one came near".into()),
    ];
    legend.extend((0..6).map(|i| LegendEntry::Swatch(LOS_COLORS[i], level_label(i))));
    let (rows, cols) = worst.dim();
    // The legend stands where other maps have their colour bar; room for it below is kept.
    let layout = Layout::new(rows, cols, legend.len(), &ImageOptions::default());
    let title = format!(
        "{}: worst level of service (Fruin, walkways; walkers who have started)",
        scene.name
    );
    let mut img = layout.canvas(&title);
    layout.fill_map(&mut img, |r, c, px, py| {
        if scene.obstacle[[r, c]] {
            OBSTACLE
        } else if worst[[r, c]] == NO_LEVEL {
            hatch(layout.map_x + px, layout.map_y + py)
        } else {
            LOS_COLORS[(worst[[r, c]] as usize).min(5)]
        }
    });
    draw_text(
        &mut img,
        layout.bar_x as f32,
        (layout.bar_y - 22) as f32,
        LABEL_SIZE,
        "level of service",
        INK,
    );
    draw_legend_at(&mut img, layout.bar_x, layout.bar_y, &legend);
    layout.draw_scale_bar(&mut img, scene.grid.cell_size);
    img
}

/// The map of the seconds each place spent at level E or F.
pub fn crowded_time_map(scene: &Scene, seconds: ArrayView2<f32>) -> RgbaImage {
    let max = seconds.iter().fold(0.0f32, |m, &v| m.max(v)) as f64;
    let title = format!("{}: time at level E or F, max {max:.1} s", scene.name);
    let spec = crate::export::FieldSpec {
        title: &title,
        unit: "s at E or F",
        colormap: Colormap::YellowOrangeRed,
        range: Some((0.0, if max > 0.0 { max } else { 1.0 })),
        legend: vec![LegendEntry::Swatch(OBSTACLE, "obstacle".into())],
    };
    crate::export::field_image_with(scene, seconds, &spec, &ImageOptions::default()).0
}

/// The RSET map: the time each place is clear (`clear`, seconds; NaN where nobody stood,
/// hatched; `+inf` where someone still stood at the end, black).
pub fn clear_time_map(scene: &Scene, clear: ArrayView2<f64>) -> RgbaImage {
    let finite = clear.iter().copied().filter(|v| v.is_finite());
    let max = finite.fold(0.0f64, f64::max);
    let still = clear.iter().any(|v| v.is_infinite());
    let mut legend = vec![
        LegendEntry::Swatch(OBSTACLE, "obstacle".into()),
        LegendEntry::Hatched("nobody stood here".into()),
    ];
    if still {
        legend.push(LegendEntry::Swatch(NOT_CLEAR, "not clear at the end".into()));
    }
    let (rows, cols) = clear.dim();
    let layout = Layout::new(rows, cols, legend.len(), &ImageOptions::default());
    let title = format!("{}: time each place is clear (RSET), last {max:.1} s", scene.name);
    let mut img = layout.canvas(&title);
    let hi = if max > 0.0 { max } else { 1.0 };
    layout.fill_map(&mut img, |r, c, px, py| {
        let v = clear[[r, c]];
        if scene.obstacle[[r, c]] {
            OBSTACLE
        } else if v.is_nan() {
            hatch(layout.map_x + px, layout.map_y + py)
        } else if v.is_infinite() {
            NOT_CLEAR
        } else {
            Colormap::Viridis.rgb(v / hi)
        }
    });
    layout.draw_colorbar(&mut img, 0.0, hi, Colormap::Viridis, 0.0, "clear at, s");
    layout.draw_legend(&mut img, &legend);
    layout.draw_scale_bar(&mut img, scene.grid.cell_size);
    img
}

/// Axes of a plot on [`PlotLayout`]: grid lines, ticks and labels for `0..x_max` and
/// `0..y_max`, axis names.
fn draw_axes(img: &mut RgbaImage, l: &PlotLayout, x_max: f64, y_max: f64, x_name: &str, y_name: &str) {
    let (left, bottom) = (l.plot_x, l.plot_y + l.plot_h - 1);
    const GRID: [u8; 3] = [228, 228, 228];
    for (t, label) in ticks(0.0, x_max, 8.0) {
        let x = l.x_of(t, x_max);
        fill_rect(img, x, l.plot_y, 1, l.plot_h, GRID);
        fill_rect(img, x, bottom + 1, 1, TICK_LEN, INK);
        let tx = x as f32 - text_width(&label, LABEL_SIZE) / 2.0;
        draw_text(img, tx, (bottom + TICK_LEN + 4) as f32, LABEL_SIZE, &label, INK);
    }
    for (n, label) in ticks(0.0, y_max, 6.0) {
        let y = l.y_of(n, y_max);
        fill_rect(img, left, y, l.plot_w, 1, GRID);
        fill_rect(img, left - TICK_LEN, y, TICK_LEN, 1, INK);
        let tx = (left - TICK_LEN - 4) as f32 - text_width(&label, LABEL_SIZE);
        draw_text(img, tx, y as f32 - LABEL_SIZE * 0.6, LABEL_SIZE, &label, INK);
    }
    fill_rect(img, left, l.plot_y, 1, l.plot_h, INK);
    fill_rect(img, left, bottom, l.plot_w, 1, INK);
    let x_name_x = left as f32 + (l.plot_w as f32 - text_width(x_name, LABEL_SIZE)) / 2.0;
    draw_text(img, x_name_x, (bottom + 30) as f32, LABEL_SIZE, x_name, INK);
    draw_text(
        img,
        crate::export::render::MARGIN as f32,
        (l.plot_y - 22) as f32,
        LABEL_SIZE,
        y_name,
        INK,
    );
}

/// A polyline 2 px wide through `points` (pixels).
fn polyline(img: &mut RgbaImage, points: &[(u32, u32)], c: [u8; 3]) {
    for w in points.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        let n = x0.abs_diff(x1).max(y0.abs_diff(y1)).max(1);
        for k in 0..=n {
            let t = k as f64 / n as f64;
            let x = (x0 as f64 + t * (x1 as f64 - x0 as f64)).round() as u32;
            let y = (y0 as f64 + t * (y1 as f64 - y0 as f64)).round() as u32;
            fill_rect(img, x, y, 2, 2, c);
        }
    }
}

/// One exit's use over the run.
#[derive(Clone, Debug, PartialEq)]
pub struct ExitCurve {
    /// `group/exit`, as in the report's total.
    pub name: String,
    /// Width of the opening, m.
    pub width: f64,
    /// Arrival times through it, ascending, seconds.
    pub times: Vec<f64>,
    /// The periods `[from, until)` it was closed, seconds (`until` infinite while it stays
    /// closed): no flow then.
    pub closed: Vec<(f64, f64)>,
}

impl ExitCurve {
    /// Persons through the exit by time `t` (arrivals at `t` included): the N-t curve.
    pub fn count_at(&self, t: f64) -> usize {
        self.times.partition_point(|&a| a <= t + 1e-9)
    }

    /// Flow over the `window` seconds up to `t`, persons/s (the window is cut at 0 early on,
    /// and at the time the exit last opened); 0 while the exit is closed.
    pub fn flow_at(&self, t: f64, window: f64) -> f64 {
        if self
            .closed
            .iter()
            .any(|&(from, until)| from <= t + 1e-9 && t + 1e-9 < until)
        {
            return 0.0;
        }
        let opened = self
            .closed
            .iter()
            .map(|&(_, until)| until)
            .filter(|&until| until <= t + 1e-9)
            .fold(0.0, f64::max);
        let span = window.min(t - opened);
        if span <= 0.0 {
            return 0.0;
        }
        let before = self.times.partition_point(|&a| a <= t - span + 1e-9);
        (self.count_at(t) - before) as f64 / span
    }
}

/// Every exit of every group with its arrival times, in the order of the report's total.
pub fn exit_usage(sim: &Simulation) -> Vec<ExitCurve> {
    let mut curves = Vec::new();
    for (gi, group) in sim.scene.groups.iter().enumerate() {
        for (ei, area) in group.goals.iter().enumerate() {
            let times = sim
                .arrivals
                .iter()
                .filter(|a| a.group as usize == gi && a.exit == ei)
                .map(|a| a.time)
                .collect();
            curves.push(ExitCurve {
                name: format!("{}/{}", group.name, area.name),
                width: area.width,
                times,
                closed: closed_periods(sim, gi, ei),
            });
        }
    }
    curves
}

/// The periods `[from, until)` goal `ei` of group `gi` was closed in `sim` so far (`until`
/// infinite while it stays closed).
fn closed_periods(sim: &Simulation, gi: usize, ei: usize) -> Vec<(f64, f64)> {
    let name = &sim.scene.groups[gi].goals[ei].name;
    let mut periods = Vec::new();
    let mut closed_since = sim.scene.schedule.closed.contains(&(gi, ei)).then_some(0.0);
    for c in sim.exit_changes().iter().filter(|c| &c.name == name) {
        match (c.open, closed_since) {
            (true, Some(from)) => {
                periods.push((from, c.time));
                closed_since = None;
            }
            (false, None) => closed_since = Some(c.time),
            _ => {}
        }
    }
    periods.extend(closed_since.map(|from| (from, f64::INFINITY)));
    periods
}

/// The times [`exit_usage_csv`] samples at: every step (or coarser, at most
/// [`EXIT_USAGE_MAX_ROWS`]) from 0 to `end`.
fn sample_times(dt: f64, end: f64) -> Vec<f64> {
    let step = dt.max(end / EXIT_USAGE_MAX_ROWS).max(1e-6);
    let n = (end / step + 1e-9).floor() as usize;
    (0..=n).map(|k| ((k as f64 * step) * 1e9).round() / 1e9).collect()
}

/// `exit_usage.csv`: `time` then, per exit, the persons through it so far (`n:<exit>`) and
/// its flow over the last [`FLOW_WINDOW_S`] seconds (`flow:<exit>`, persons/s).
pub fn exit_usage_csv(curves: &[ExitCurve], dt: f64, end: f64) -> String {
    let mut s = String::from("time");
    for c in curves {
        let (n, flow) = (format!("n:{}", c.name), format!("flow:{}", c.name));
        write!(s, ",{},{}", csv_cell(&n), csv_cell(&flow)).expect("writing to a String");
    }
    s.push('\n');
    for t in sample_times(dt, end) {
        write!(s, "{t:.3}").expect("writing to a String");
        for c in curves {
            write!(s, ",{},{:.4}", c.count_at(t), c.flow_at(t, FLOW_WINDOW_S)).expect("writing to a String");
        }
        s.push('\n');
    }
    s
}

/// The exits' N-t curves in one plot (one line per exit) above their flows over a sliding
/// window of [`FLOW_WINDOW_S`] seconds, so a planner sees which exit saturates; each exit that
/// opened or closed (`changes`) marked at its time on both.
pub fn exit_usage_plot(
    map: &str,
    curves: &[ExitCurve],
    dt: f64,
    end: f64,
    changes: &[crate::sim::ExitChange],
) -> RgbaImage {
    let legend: Vec<LegendEntry> = curves
        .iter()
        .enumerate()
        .map(|(i, c)| LegendEntry::Swatch(exit_color(i), format!("{} ({})", c.name, c.times.len())))
        .collect();
    let l = PlotLayout::for_legend(&legend);
    let t_max = end.max(1.0);
    let times = sample_times(dt, t_max);
    let n_max = curves.iter().map(|c| c.times.len()).max().unwrap_or(0).max(1) as f64;
    let flows: Vec<Vec<f64>> = curves
        .iter()
        .map(|c| times.iter().map(|&t| c.flow_at(t, FLOW_WINDOW_S)).collect())
        .collect();
    let f_max = flows.iter().flatten().fold(0.0f64, |m, &v| m.max(v)).max(0.1);
    // Two plots stacked: the N-t curves, then the flows, each on PlotLayout's frame.
    let mut upper = blank_canvas(l.width, l.height, &format!("{map}: persons through each exit"));
    draw_axes(
        &mut upper,
        &l,
        t_max,
        n_max,
        "time, s",
        "persons through the exit",
    );
    let mut lower = blank_canvas(
        l.width,
        l.height,
        &format!("flow through each exit over the last {FLOW_WINDOW_S:.0} s"),
    );
    draw_axes(&mut lower, &l, t_max, f_max, "time, s", "flow, persons/s");
    for (i, c) in curves.iter().enumerate() {
        let color = exit_color(i);
        let pts: Vec<(u32, u32)> = times
            .iter()
            .map(|&t| (l.x_of(t, t_max), l.y_of(c.count_at(t) as f64, n_max)))
            .collect();
        polyline(&mut upper, &pts, color);
        let pts: Vec<(u32, u32)> = times
            .iter()
            .zip(&flows[i])
            .map(|(&t, &f)| (l.x_of(t, t_max), l.y_of(f, f_max)))
            .collect();
        polyline(&mut lower, &pts, color);
    }
    crate::run::draw::mark_exit_changes(&mut upper, &l, t_max, changes);
    crate::run::draw::mark_exit_changes(&mut lower, &l, t_max, changes);
    draw_legend_at(&mut upper, l.legend_x, l.legend_y, &legend);
    draw_legend_at(&mut lower, l.legend_x, l.legend_y, &legend);
    let mut img = RgbaImage::from_pixel(l.width, 2 * l.height, image::Rgba([255; 4]));
    image::imageops::replace(&mut img, &upper, 0, 0);
    image::imageops::replace(&mut img, &lower, 0, l.height as i64);
    img
}

/// The histogram of individual evacuation times (time from the start of the run to the
/// arrival, pre-movement included), bars stacked by group in the groups' colours.
pub fn evacuation_histogram(
    map: &str,
    names: &[String],
    colors: &[[u8; 3]],
    times: &[(usize, f64)],
) -> RgbaImage {
    let legend: Vec<LegendEntry> = names
        .iter()
        .enumerate()
        .map(|(g, n)| LegendEntry::Swatch(colors.get(g).copied().unwrap_or(INK), n.clone()))
        .collect();
    let l = PlotLayout::for_legend(&legend);
    let t_end = times.iter().fold(0.0f64, |m, &(_, t)| m.max(t)).max(1.0);
    let width = crate::export::render::nice_step(t_end / HISTOGRAM_BINS);
    let bins = (t_end / width).floor() as usize + 1;
    let mut counts = vec![vec![0usize; names.len()]; bins];
    for &(g, t) in times {
        counts[((t / width).floor() as usize).min(bins - 1)][g] += 1;
    }
    let c_max = counts
        .iter()
        .map(|b| b.iter().sum::<usize>())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let t_max = bins as f64 * width;
    let mut img = blank_canvas(
        l.width,
        l.height,
        &format!("{map}: individual evacuation times ({} persons)", times.len()),
    );
    draw_axes(&mut img, &l, t_max, c_max, "time to exit, s", "persons per bar");
    for (b, per_group) in counts.iter().enumerate() {
        let (x0, x1) = (
            l.x_of(b as f64 * width, t_max),
            l.x_of((b + 1) as f64 * width, t_max),
        );
        let mut base = 0usize;
        for (g, &n) in per_group.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let (y_top, y_bottom) = (l.y_of((base + n) as f64, c_max), l.y_of(base as f64, c_max));
            let c = colors.get(g).copied().unwrap_or(INK);
            fill_rect(
                &mut img,
                x0 + 1,
                y_top,
                (x1 - x0).saturating_sub(1).max(1),
                y_bottom - y_top,
                c,
            );
            base += n;
        }
    }
    draw_legend_at(&mut img, l.legend_x, l.legend_y, &legend);
    img
}

/// The report page's file name, in the run's folder.
pub const REPORT_PAGE: &str = "report.html";

/// The file names [`write_planner_outputs`] writes, for manifests and the report page.
pub const PLANNER_FILES: [&str; 10] = [
    "los_worst.png",
    "los_worst.npy",
    "los_crowded_seconds.png",
    "los_crowded_seconds.npy",
    "clear_time.png",
    "clear_time.npy",
    "evacuation_times.png",
    "evacuation_times.csv",
    "exit_usage.png",
    "exit_usage.csv",
];

/// Writes the planner's outputs of `sim` into `dir` (see the module comment and
/// [`PLANNER_FILES`]), each atomically.
pub fn write_planner_outputs(dir: &Path, sim: &Simulation) -> Result<()> {
    let scene = &sim.scene;
    let places = sim.places();
    let worst = places.worst_level_map(scene.obstacle.view());
    save_png(&dir.join("los_worst.png"), &los_map(scene, worst.view()))?;
    write_npy(&dir.join("los_worst.npy"), worst.view())?;
    let crowded = places.seconds_crowded();
    save_png(
        &dir.join("los_crowded_seconds.png"),
        &crowded_time_map(scene, crowded.view()),
    )?;
    write_npy(&dir.join("los_crowded_seconds.npy"), crowded.view())?;
    let clear: Array2<f64> = places.clear_time();
    save_png(&dir.join("clear_time.png"), &clear_time_map(scene, clear.view()))?;
    write_npy(&dir.join("clear_time.npy"), clear.view())?;

    let names: Vec<String> = scene.groups.iter().map(|g| g.name.clone()).collect();
    let colors: Vec<[u8; 3]> = scene.groups.iter().map(|g| g.color).collect();
    let times: Vec<(usize, f64)> = sim.arrivals.iter().map(|a| (a.group as usize, a.time)).collect();
    save_png(
        &dir.join("evacuation_times.png"),
        &evacuation_histogram(&scene.name, &names, &colors, &times),
    )?;
    let mut csv = String::from("id,group,exit,time\n");
    for a in &sim.arrivals {
        let group = &scene.groups[a.group as usize];
        let exit = group.goals.get(a.exit).map_or("", |e| e.name.as_str());
        writeln!(
            csv,
            "{},{},{},{:.3}",
            a.id,
            csv_cell(&group.name),
            csv_cell(exit),
            a.time
        )
        .expect("writing to a String");
    }
    write_bytes_atomic(&dir.join("evacuation_times.csv"), csv.as_bytes())?;

    let curves = exit_usage(sim);
    save_png(
        &dir.join("exit_usage.png"),
        &exit_usage_plot(&scene.name, &curves, sim.dt, sim.time, sim.exit_changes()),
    )?;
    write_bytes_atomic(
        &dir.join("exit_usage.csv"),
        exit_usage_csv(&curves, sim.dt, sim.time).as_bytes(),
    )?;
    Ok(())
}

/// The images of `report.html`, in page order: (file in the run's folder, heading, caption).
pub const PAGE_IMAGES: [(&str, &str, &str); 7] = [
    (
        "arrivals.png",
        "Persons out over time",
        "Arrival curve per group.",
    ),
    (
        "exit_usage.png",
        "Exit usage",
        "Persons through each exit over time (N-t) and the flow over a sliding window: an exit whose flow stays flat at its peak is saturated.",
    ),
    (
        "evacuation_times.png",
        "Individual evacuation times",
        "Time from the start of the run to each person's exit, pre-movement included, per group.",
    ),
    (
        "los_worst.png",
        "Worst level of service",
        "The worst Fruin walkway level each place reached (density of the people who have started to move, walking or queueing, counted over a 2 m × 2 m square around it: people still in their pre-movement time are not counted; hatched: no one came near).",
    ),
    (
        "los_crowded_seconds.png",
        "Time at level E or F",
        "Seconds each place spent at level E or F.",
    ),
    (
        "clear_time.png",
        "Clear time (RSET map)",
        "The time each place was left by its last occupant.",
    ),
    (
        "peak_density.png",
        "Peak density",
        "The highest density each place reached.",
    ),
];

/// Writes `dir/report.html` for the run whose outputs `dir` holds (it embeds the PNGs of
/// [`PAGE_IMAGES`] found there). `map_path` is the map file as given, `map_sha256` the hash of
/// its bytes, `parameters` further rows for the parameter table.
pub fn write_report_page(
    dir: &Path,
    report: &crate::sim::Report,
    grid: &crate::grid::Grid,
    map_path: &str,
    map_sha256: &str,
    parameters: Vec<(String, String)>,
) -> Result<()> {
    let mut images = Vec::new();
    for (file, heading, caption) in PAGE_IMAGES {
        let path = dir.join(file);
        if path.is_file() {
            let png = std::fs::read(&path).map_err(|source| crate::error::Error::Io { path, source })?;
            images.push((heading.to_string(), caption.to_string(), png));
        }
    }
    let input = crate::export::html::PageInput {
        map_path,
        map_sha256,
        grid: (grid.cols, grid.rows, grid.cell_size),
        parameters,
        images,
    };
    let page = crate::export::html::report_page(report, &input);
    write_bytes_atomic(&dir.join(REPORT_PAGE), page.as_bytes())
}

/// Writes a batch's `index<suffix>.html` into `out`: one row per map of `outcomes`, from the
/// `report.json` in its folder (a failed map shows its error as its warning), linked to its
/// `report.html`.
pub fn write_index(out: &Path, suffix: &str, outcomes: &[crate::run::batch::MapOutcome]) -> Result<()> {
    use crate::export::html::IndexRow;
    let rows: Vec<IndexRow> = outcomes
        .iter()
        .map(|o| {
            let map = Path::new(&o.map);
            let stem = crate::run::batch::stem(map);
            let dir = crate::run::batch::map_dir(out, map);
            let report = std::fs::read(dir.join("report.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<crate::sim::Report>(&b).ok());
            match (&o.error, report) {
                (None, Some(r)) => {
                    let page = dir.join(REPORT_PAGE);
                    let link = page.is_file().then(|| {
                        let relative = page.strip_prefix(out).unwrap_or(&page);
                        crate::export::html::file_href(relative)
                    });
                    // The report's warnings, then the map's own that `simulate` prints.
                    let mut row = IndexRow::of(&stem, link, &r);
                    // The page says already that the run did not complete, in its own words.
                    let incomplete = crate::run::output::incomplete_warning(&r);
                    for w in &o.warnings {
                        if !row.warnings.contains(w) && Some(w) != incomplete.as_ref() {
                            row.warnings.push(w.clone());
                        }
                    }
                    row
                }
                (error, _) => IndexRow {
                    name: stem,
                    warnings: vec![format!("failed: {}", error.as_deref().unwrap_or("no report"))],
                    ..IndexRow::default()
                },
            }
        })
        .collect();
    let page = crate::export::html::index_page("crowdfield batch: maps compared", &rows);
    write_bytes_atomic(&out.join(format!("index{suffix}.html")), page.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_curves_count_and_flow() {
        let c = ExitCurve {
            name: "g/e".into(),
            width: 1.0,
            times: vec![1.0, 2.0, 2.0, 11.5],
            closed: Vec::new(),
        };
        assert_eq!(c.count_at(0.5), 0);
        assert_eq!(c.count_at(2.0), 3);
        assert_eq!(c.count_at(100.0), 4);
        // Window (1.5, 11.5]: the two at 2.0 and the one at 11.5.
        assert!((c.flow_at(11.5, 10.0) - 0.3).abs() < 1e-12);
        // Early on the window is cut at 0: 3 persons in 2 s.
        assert!((c.flow_at(2.0, 10.0) - 1.5).abs() < 1e-12);
        let csv = exit_usage_csv(&[c], 0.5, 12.0);
        let last = csv.lines().last().unwrap();
        assert!(last.starts_with("12.000,4,"), "{last}");
        assert_eq!(csv.lines().count(), 1 + 25);
    }

    #[test]
    fn level_labels_name_the_fruin_ranges() {
        assert_eq!(level_label(0), "A  up to 0.31/m²");
        assert_eq!(level_label(4), "E  1.08 to 2.15/m²");
        assert_eq!(level_label(5), "F  over 2.15/m²");
    }
}
