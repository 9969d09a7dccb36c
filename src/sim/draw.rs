//! Small raster drawing for the simulation's images: the arrival-curve plot, the peak-density
//! heat map and the animation frames. A 5x7 bitmap font (upper case, digits, a little
//! punctuation) labels axes, ticks, legends and colour bars, so no font file is needed.
//!
//! Images are drawn with y up: map row 0 is the bottom row of the picture.

use super::Simulation;
use super::report::Report;
use crate::scene::Scene;
use image::{Rgb, RgbImage};
use ndarray::Array2;

/// Background of every image.
const WHITE: Rgb<u8> = Rgb([255, 255, 255]);
/// Axes, text.
const BLACK: Rgb<u8> = Rgb([0, 0, 0]);
/// Grid lines of plots.
const LIGHT_GREY: Rgb<u8> = Rgb([225, 225, 225]);
/// Obstacles on maps.
const OBSTACLE: Rgb<u8> = Rgb([70, 70, 70]);

/// Glyph width and height of the bitmap font, in font pixels (plus one pixel of spacing).
const GLYPH_W: i64 = 5;
const GLYPH_H: i64 = 7;

/// The 5x7 font: each glyph is seven rows, bit 4 the leftmost column.
fn glyph(c: char) -> [u8; 7] {
    match c.to_ascii_uppercase() {
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        'A' => [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'B' => [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'D' => [0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C],
        'E' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        'F' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        'G' => [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        'H' => [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'I' => [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'J' => [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        'K' => [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11],
        'L' => [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        'M' => [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11],
        'N' => [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        'O' => [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'P' => [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        'Q' => [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'T' => [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        'U' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'V' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'W' => [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A],
        'X' => [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        'Y' => [0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04],
        'Z' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        '-' => [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00],
        ':' => [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00],
        '/' => [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00],
        '(' => [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ')' => [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        ',' => [0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08],
        '+' => [0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00],
        '=' => [0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00],
        '_' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F],
        '²' => [0x0C, 0x12, 0x04, 0x08, 0x1E, 0x00, 0x00],
        '%' => [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03],
        '#' => [0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A],
        ' ' => [0x00; 7],
        _ => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04],
    }
}

/// An RGB image with clipped drawing primitives. Coordinates are pixels, y down.
pub struct Canvas {
    /// The image drawn on.
    pub img: RgbImage,
}

impl Canvas {
    /// A `width x height` canvas filled with `bg`.
    pub fn new(width: u32, height: u32, bg: Rgb<u8>) -> Self {
        Self {
            img: RgbImage::from_pixel(width.max(1), height.max(1), bg),
        }
    }

    /// Sets one pixel (ignored outside the image).
    pub fn put(&mut self, x: i64, y: i64, c: Rgb<u8>) {
        if x >= 0 && y >= 0 && (x as u32) < self.img.width() && (y as u32) < self.img.height() {
            self.img.put_pixel(x as u32, y as u32, c);
        }
    }

    /// Fills the rectangle `[x, x + w) x [y, y + h)`.
    pub fn fill_rect(&mut self, x: i64, y: i64, w: i64, h: i64, c: Rgb<u8>) {
        for py in y.max(0)..(y + h).min(self.img.height() as i64) {
            for px in x.max(0)..(x + w).min(self.img.width() as i64) {
                self.img.put_pixel(px as u32, py as u32, c);
            }
        }
    }

    /// A one-pixel line (Bresenham).
    pub fn line(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb<u8>) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        loop {
            self.put(x, y, c);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// A two-pixel-wide line.
    pub fn thick_line(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb<u8>) {
        self.line(x0, y0, x1, y1, c);
        self.line(x0 + 1, y0, x1 + 1, y1, c);
        self.line(x0, y0 + 1, x1, y1 + 1, c);
    }

    /// A filled disc.
    pub fn disc(&mut self, cx: f64, cy: f64, r: f64, c: Rgb<u8>) {
        let (x0, x1) = ((cx - r).floor() as i64, (cx + r).ceil() as i64);
        let (y0, y1) = ((cy - r).floor() as i64, (cy + r).ceil() as i64);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
                if dx * dx + dy * dy <= r * r {
                    self.put(x, y, c);
                }
            }
        }
    }

    /// Draws `text` with its top-left corner at `(x, y)`, each font pixel `scale` pixels.
    pub fn text(&mut self, x: i64, y: i64, text: &str, scale: i64, c: Rgb<u8>) {
        for (k, ch) in text.chars().enumerate() {
            let gx = x + k as i64 * (GLYPH_W + 1) * scale;
            for (row, bits) in glyph(ch).iter().enumerate() {
                for col in 0..GLYPH_W {
                    if bits & (1 << (GLYPH_W - 1 - col)) != 0 {
                        self.fill_rect(gx + col * scale, y + row as i64 * scale, scale, scale, c);
                    }
                }
            }
        }
    }

    /// Width of `text` in pixels at `scale`.
    pub fn text_width(text: &str, scale: i64) -> i64 {
        let n = text.chars().count() as i64;
        (n * (GLYPH_W + 1) - 1).max(0) * scale
    }

    /// Height of a line of text at `scale`.
    pub fn text_height(scale: i64) -> i64 {
        GLYPH_H * scale
    }
}

/// The viridis colour map at `t` in `[0, 1]` (piecewise linear through five of its colours).
pub fn viridis(t: f64) -> Rgb<u8> {
    const STOPS: [[f64; 3]; 5] = [
        [68.0, 1.0, 84.0],
        [59.0, 82.0, 139.0],
        [33.0, 145.0, 140.0],
        [94.0, 201.0, 98.0],
        [253.0, 231.0, 37.0],
    ];
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let s = t * 4.0;
    let i = (s.floor() as usize).min(3);
    let f = s - i as f64;
    let c = |k: usize| (STOPS[i][k] + f * (STOPS[i + 1][k] - STOPS[i][k])).round() as u8;
    Rgb([c(0), c(1), c(2)])
}

/// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `target` ticks up to `max`.
pub fn tick_step(max: f64, target: f64) -> f64 {
    if !(max.is_finite() && max > 0.0) {
        return 1.0;
    }
    let raw = max / target;
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let nice = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * p
}

/// A tick label: no trailing zeros, at most two decimals.
pub fn tick_label(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".to_string() } else { s.to_string() }
}

/// Plot of the arrival curves (agents out over time) of every group and the total, with
/// axes, ticks, axis labels and a legend.
pub fn arrivals_plot(report: &Report, colors: &[[u8; 3]]) -> RgbImage {
    const W: i64 = 900;
    const H: i64 = 560;
    const LEFT: i64 = 90;
    const RIGHT: i64 = 30;
    const TOP: i64 = 50;
    const BOTTOM: i64 = 70;
    let mut cv = Canvas::new(W as u32, H as u32, WHITE);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let t_max = report
        .end_time
        .max(report.total.last_arrival.unwrap_or(0.0))
        .max(1.0);
    let n_max = (report.total.agents as f64).max(1.0);
    let px = |t: f64| LEFT + (t / t_max * pw as f64).round() as i64;
    let py = |n: f64| TOP + ph - (n / n_max * ph as f64).round() as i64;

    // Grid, ticks and labels.
    let xs = tick_step(t_max, 8.0);
    let mut t = 0.0;
    while t <= t_max + 1e-9 {
        cv.line(px(t), TOP, px(t), TOP + ph, LIGHT_GREY);
        cv.line(px(t), TOP + ph, px(t), TOP + ph + 5, BLACK);
        let label = tick_label(t);
        cv.text(
            px(t) - Canvas::text_width(&label, 2) / 2,
            TOP + ph + 10,
            &label,
            2,
            BLACK,
        );
        t += xs;
    }
    let ys = tick_step(n_max, 6.0).max(1.0);
    let mut n = 0.0;
    while n <= n_max + 1e-9 {
        cv.line(LEFT, py(n), LEFT + pw, py(n), LIGHT_GREY);
        cv.line(LEFT - 5, py(n), LEFT, py(n), BLACK);
        let label = tick_label(n);
        cv.text(
            LEFT - 10 - Canvas::text_width(&label, 2),
            py(n) - 7,
            &label,
            2,
            BLACK,
        );
        n += ys;
    }
    cv.line(LEFT, TOP, LEFT, TOP + ph, BLACK);
    cv.line(LEFT, TOP + ph, LEFT + pw, TOP + ph, BLACK);
    let title = format!("ARRIVALS - {}", report.map);
    cv.text((W - Canvas::text_width(&title, 2)) / 2, 12, &title, 2, BLACK);
    let xl = "TIME (S)";
    cv.text(LEFT + (pw - Canvas::text_width(xl, 2)) / 2, H - 26, xl, 2, BLACK);
    cv.text(8, TOP - 22, "AGENTS OUT", 2, BLACK);

    // Curves: the total in black (when there are several groups), then each group.
    let mut series: Vec<(&str, &[[f64; 2]], Rgb<u8>)> = Vec::new();
    for (g, gr) in report.groups.iter().enumerate() {
        let c = colors.get(g).copied().unwrap_or([0, 0, 200]);
        series.push((gr.name.as_str(), gr.arrival_curve.as_slice(), Rgb(c)));
    }
    if report.groups.len() > 1 {
        series.push(("total", report.total.arrival_curve.as_slice(), BLACK));
    }
    for (_, curve, c) in &series {
        let (mut lt, mut ln) = (0.0, 0.0);
        for p in curve.iter() {
            cv.thick_line(px(lt), py(ln), px(p[0]), py(ln), *c);
            cv.thick_line(px(p[0]), py(ln), px(p[0]), py(p[1]), *c);
            (lt, ln) = (p[0], p[1]);
        }
        cv.thick_line(px(lt), py(ln), px(report.end_time.max(lt)), py(ln), *c);
    }

    // Legend, top left inside the plot.
    let rows = series.len() as i64;
    let widest = series
        .iter()
        .map(|s| Canvas::text_width(s.0, 2))
        .max()
        .unwrap_or(0);
    let (lx, ly) = (LEFT + 12, TOP + 12);
    cv.fill_rect(lx, ly, widest + 60, rows * 22 + 10, WHITE);
    for (k, (name, _, c)) in series.iter().enumerate() {
        let y = ly + 8 + k as i64 * 22;
        cv.fill_rect(lx + 8, y + 5, 30, 4, *c);
        cv.text(lx + 46, y, name, 2, BLACK);
    }
    cv.line(lx, ly, lx + widest + 60, ly, BLACK);
    cv.line(
        lx,
        ly + rows * 22 + 10,
        lx + widest + 60,
        ly + rows * 22 + 10,
        BLACK,
    );
    cv.line(lx, ly, lx, ly + rows * 22 + 10, BLACK);
    cv.line(lx + widest + 60, ly, lx + widest + 60, ly + rows * 22 + 10, BLACK);
    cv.img
}

/// Pixels per cell for a map picture about `target` pixels across.
fn cell_pixels(scene: &Scene, target: usize) -> i64 {
    (target / scene.grid.cols.max(scene.grid.rows).max(1)).clamp(1, 16) as i64
}

/// Paints `value` (already scaled to `[0, 1]`, NaN for "no value") under the map, obstacles on
/// top, at `s` pixels per cell with the map's lower-left corner at `(ox, oy + height)`.
fn paint_field(
    cv: &mut Canvas,
    scene: &Scene,
    value: &Array2<f64>,
    s: i64,
    ox: i64,
    oy: i64,
    no_value: Rgb<u8>,
) {
    let rows = scene.grid.rows as i64;
    for ((r, c), &v) in value.indexed_iter() {
        let color = if scene.obstacle[[r, c]] {
            OBSTACLE
        } else if v.is_finite() {
            viridis(v)
        } else {
            no_value
        };
        cv.fill_rect(ox + c as i64 * s, oy + (rows - 1 - r as i64) * s, s, s, color);
    }
}

/// A vertical colour bar at `(x, y)` of `height` pixels for values `[0, max]`, labelled.
fn colour_bar(cv: &mut Canvas, x: i64, y: i64, height: i64, max: f64, unit: &str) {
    const BAR_W: i64 = 20;
    for k in 0..height {
        let t = 1.0 - k as f64 / (height - 1).max(1) as f64;
        cv.fill_rect(x, y + k, BAR_W, 1, viridis(t));
    }
    cv.line(x, y, x + BAR_W, y, BLACK);
    cv.line(x, y + height - 1, x + BAR_W, y + height - 1, BLACK);
    cv.line(x, y, x, y + height - 1, BLACK);
    cv.line(x + BAR_W, y, x + BAR_W, y + height - 1, BLACK);
    let step = tick_step(max, 5.0);
    let mut v = 0.0;
    while v <= max + 1e-9 {
        let py = y + height - 1 - (v / max * (height - 1) as f64).round() as i64;
        cv.line(x + BAR_W, py, x + BAR_W + 4, py, BLACK);
        cv.text(x + BAR_W + 8, py - 7, &tick_label(v), 2, BLACK);
        v += step;
    }
    cv.text(x - 10, y - 24, unit, 2, BLACK);
}

/// Heat map of the highest density seen in each cell over the run, with a colour bar in
/// persons/m² and a cross at the peak.
pub fn peak_density_map(scene: &Scene, peak_map: &Array2<f32>, peak_xy: (f64, f64)) -> RgbImage {
    let s = cell_pixels(scene, 700);
    let (mw, mh) = (scene.grid.cols as i64 * s, scene.grid.rows as i64 * s);
    let (left, top, right, bottom) = (20, 60, 150, 20);
    let mut cv = Canvas::new(
        (left + mw + right) as u32,
        (top + mh.max(200) + bottom) as u32,
        WHITE,
    );
    let max = peak_map.iter().fold(0.0f32, |m, &v| m.max(v)) as f64;
    let scale_max = if max > 0.0 { max } else { 1.0 };
    let scaled = peak_map.mapv(|v| v as f64 / scale_max);
    paint_field(&mut cv, scene, &scaled, s, left, top, viridis(0.0));
    let title = format!("PEAK DENSITY - {} (MAX {:.2} PERSONS/M²)", scene.name, max);
    cv.text(left, 14, &title, 2, BLACK);
    // Cross at the peak.
    let cx = left + (peak_xy.0 / scene.grid.cell_size * s as f64) as i64;
    let cy = top + mh - (peak_xy.1 / scene.grid.cell_size * s as f64) as i64;
    let arm = (2 * s).max(6);
    cv.thick_line(cx - arm, cy - arm, cx + arm, cy + arm, WHITE);
    cv.thick_line(cx - arm, cy + arm, cx + arm, cy - arm, WHITE);
    colour_bar(&mut cv, left + mw + 30, top, mh.max(200), scale_max, "PERSONS/M²");
    cv.img
}

/// What is painted under the agents in a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FrameField {
    /// Density, persons/m².
    #[default]
    Density,
    /// The first group's potential, seconds.
    Potential,
}

/// One animation frame: the field underneath, obstacles, goals outlined in their group's
/// colour, and the agents as discs coloured by group; the time in the corner.
pub fn frame(sim: &Simulation, field: FrameField) -> RgbImage {
    let scene = &sim.scene;
    let s = cell_pixels(scene, 800).max(2);
    let (mw, mh) = (scene.grid.cols as i64 * s, scene.grid.rows as i64 * s);
    let top = 30;
    let mut cv = Canvas::new(mw as u32, (mh + top) as u32, WHITE);
    let value = match (field, &sim.fields, sim.potentials.first()) {
        (FrameField::Density, Some(f), _) => {
            // Pale: density over 0..rho_max mapped to the upper half of viridis... kept dim so
            // the agents stand out.
            let max = scene.params.rho_max.max(1e-6);
            f.density.rho.mapv(|v| 0.15 + 0.85 * (v as f64 / max).min(1.0))
        }
        (FrameField::Potential, _, Some(phi)) => {
            let max = phi
                .iter()
                .filter(|v| v.is_finite())
                .fold(0.0f64, |m, &v| m.max(v))
                .max(1e-9);
            phi.mapv(|v| if v.is_finite() { v / max } else { f64::NAN })
        }
        _ => Array2::from_elem(scene.grid.shape(), 0.15),
    };
    paint_field(&mut cv, scene, &value, s, 0, top, Rgb([30, 30, 30]));
    let rows = scene.grid.rows as i64;
    for group in &scene.groups {
        for goal in &group.goals {
            for ((r, c), &m) in goal.mask.indexed_iter() {
                if m {
                    let (x, y) = (c as i64 * s, top + (rows - 1 - r as i64) * s);
                    let col = Rgb(group.color);
                    cv.fill_rect(x, y, s, 1, col);
                    cv.fill_rect(x, y + s - 1, s, 1, col);
                    cv.fill_rect(x, y, 1, s, col);
                    cv.fill_rect(x + s - 1, y, 1, s, col);
                }
            }
        }
    }
    let a = &sim.agents;
    let ppm = s as f64 / scene.grid.cell_size;
    for i in 0..a.len() {
        let color = scene
            .groups
            .get(a.group[i] as usize)
            .map_or([255, 255, 255], |g| g.color);
        let (x, y) = (a.x[i] as f64 * ppm, top as f64 + mh as f64 - a.y[i] as f64 * ppm);
        let r = (a.radius[i] as f64 * ppm).max(1.5);
        cv.disc(x, y, r + 1.0, BLACK);
        cv.disc(x, y, r, Rgb(color));
    }
    let label = format!("T = {:.1} S   AGENTS {}", sim.time, a.len());
    cv.text(6, 8, &label, 2, BLACK);
    cv.img
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(tick_step(100.0, 5.0), 20.0);
        assert_eq!(tick_step(7.0, 6.0), 2.0);
        assert_eq!(tick_step(0.9, 5.0), 0.2);
        assert_eq!(tick_label(2.50), "2.5");
        assert_eq!(tick_label(40.0), "40");
    }

    #[test]
    fn viridis_ends_and_text_pixels() {
        assert_eq!(viridis(0.0), Rgb([68, 1, 84]));
        assert_eq!(viridis(1.0), Rgb([253, 231, 37]));
        assert_eq!(viridis(f64::NAN), Rgb([68, 1, 84]));
        let mut cv = Canvas::new(40, 10, WHITE);
        cv.text(0, 0, "1", 1, BLACK);
        // '1' has its stem in column 2 on every row but the last.
        assert_eq!(*cv.img.get_pixel(2, 3), BLACK);
        assert_eq!(*cv.img.get_pixel(0, 3), WHITE);
        assert_eq!(Canvas::text_width("AB", 1), 11);
    }
}
