//! Image layout and drawing primitives shared by every exported image (the `solve` images and
//! the simulation's plots, maps and frames): a title, the map area (cells scaled up by an
//! integer factor, nearest neighbour, y up), a vertical colour bar with ticks and unit, round
//! axis ticks and their labels, and a legend.

use super::colormap::Colormap;
use super::text::{blend, draw_text, text_width};
use image::{Rgba, RgbaImage};

/// Blank space around the parts of the image, px.
pub const MARGIN: u32 = 16;
/// Height of the title band, px.
pub const TITLE_H: u32 = 40;
/// Title text size, px.
pub const TITLE_SIZE: f32 = 20.0;
/// Tick label, unit and legend text size, px.
pub const LABEL_SIZE: f32 = 14.0;
/// Width of the colour bar itself, px.
pub const BAR_W: u32 = 24;
/// Width reserved right of the map for the bar, its tick labels and the legend, px.
pub const SIDE_W: u32 = 170;
/// Shortest colour bar, px (readable ticks even for a flat map).
const MIN_BAR_H: u32 = 200;
/// Longest colour bar, px.
const MAX_BAR_H: u32 = 600;
/// Height of one legend row, px.
pub const LEGEND_ROW_H: u32 = 22;
/// Aim for about this many labelled ticks on a colour bar.
pub const TARGET_TICKS: f64 = 6.0;

/// Background of the image.
pub const WHITE: [u8; 3] = [255, 255, 255];
/// Text and frames.
pub const INK: [u8; 3] = [20, 20, 20];
/// Obstacle cells.
pub const OBSTACLE: [u8; 3] = [64, 64, 64];
/// Background of cells without a value (unreachable), under the hatching.
pub const NO_VALUE_BG: [u8; 3] = [225, 225, 225];
/// Hatching lines over cells without a value.
pub const NO_VALUE_HATCH: [u8; 3] = [150, 150, 150];
/// Goal outlines.
pub const GOAL: [u8; 3] = [230, 30, 60];
/// Period of the hatching, px.
const HATCH_PERIOD: u32 = 8;

/// How big to draw the map: options shared by every image.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageOptions {
    /// Small grids are scaled up (nearest neighbour, integer factor) until the map is at least
    /// this wide, px. Default 800.
    pub min_map_width: u32,
    /// ... but never taller than this, px (long thin grids). Default 2400.
    pub max_map_height: u32,
}

impl Default for ImageOptions {
    fn default() -> Self {
        Self {
            min_map_width: 800,
            max_map_height: 2400,
        }
    }
}

/// One legend row.
#[derive(Clone, Debug, PartialEq)]
pub enum LegendEntry {
    /// A filled swatch.
    Swatch([u8; 3], String),
    /// The hatched "no value" swatch.
    Hatched(String),
    /// An outlined swatch (goals).
    Outline([u8; 3], String),
    /// A cross (a marked point, e.g. the peak of a map).
    Cross([u8; 3], String),
    /// The colour map, left (low) to right (high): says which field the map's colours show.
    Ramp(Colormap, String),
    /// A disc in a colour with a white centre (agents waiting out their pre-movement time).
    Ring([u8; 3], String),
}

impl LegendEntry {
    /// The row's text.
    pub fn label(&self) -> &str {
        match self {
            LegendEntry::Swatch(_, l)
            | LegendEntry::Hatched(l)
            | LegendEntry::Outline(_, l)
            | LegendEntry::Cross(_, l)
            | LegendEntry::Ramp(_, l)
            | LegendEntry::Ring(_, l) => l,
        }
    }
}

/// Edge of a legend row's swatch, px.
const LEGEND_SWATCH: u32 = 16;
/// Gap between a legend swatch and its text, px.
const LEGEND_GAP: u32 = 8;

/// Width [`draw_legend_at`] needs for `entries`, px: the swatch, the gap and the longest text.
pub fn legend_width(entries: &[LegendEntry]) -> u32 {
    let text = entries
        .iter()
        .map(|e| text_width(e.label(), LABEL_SIZE))
        .fold(0.0f32, f32::max);
    LEGEND_SWATCH + LEGEND_GAP + text.ceil() as u32
}

/// Where each part of an image goes, px.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Map pixels per cell.
    pub scale: u32,
    /// Grid size.
    pub rows: usize,
    /// Grid size.
    pub cols: usize,
    /// Map area, left edge.
    pub map_x: u32,
    /// Map area, top edge.
    pub map_y: u32,
    /// Map area width.
    pub map_w: u32,
    /// Map area height.
    pub map_h: u32,
    /// Colour bar left edge.
    pub bar_x: u32,
    /// Colour bar top edge.
    pub bar_y: u32,
    /// Colour bar height.
    pub bar_h: u32,
    /// First legend row, top edge.
    pub legend_y: u32,
    /// Scale bar (under the legend), top edge.
    pub scale_bar_y: u32,
    /// Whole image width.
    pub width: u32,
    /// Whole image height.
    pub height: u32,
}

impl Layout {
    /// The layout for a `rows x cols` grid with `legend_rows` legend entries.
    pub fn new(rows: usize, cols: usize, legend_rows: usize, opts: &ImageOptions) -> Self {
        let (rows_c, cols_c) = (rows.max(1) as u64, cols.max(1) as u64);
        let mut scale = (opts.min_map_width as u64).div_ceil(cols_c).max(1);
        if rows_c * scale > opts.max_map_height as u64 {
            scale = (opts.max_map_height as u64 / rows_c).max(1);
        }
        let scale = scale as u32;
        let (map_w, map_h) = (cols as u32 * scale, rows as u32 * scale);
        let map_x = MARGIN;
        let map_y = TITLE_H;
        let bar_x = map_x + map_w + MARGIN + 8;
        // Room above the bar for the unit label.
        let bar_y = map_y + 24;
        let bar_h = (map_h * 3 / 5).clamp(MIN_BAR_H, MAX_BAR_H);
        let legend_y = bar_y + bar_h + 24;
        let scale_bar_y = legend_y + legend_rows as u32 * LEGEND_ROW_H + 8;
        let width = bar_x + SIDE_W;
        let height = (map_y + map_h + MARGIN).max(scale_bar_y + SCALE_BAR_H + MARGIN);
        Self {
            scale,
            rows,
            cols,
            map_x,
            map_y,
            map_w,
            map_h,
            bar_x,
            bar_y,
            bar_h,
            legend_y,
            scale_bar_y,
            width,
            height,
        }
    }

    /// Draws the scale bar under the legend: a bar of a round length in metres (1, 2 or 5
    /// times a power of ten, as long as fits the side panel) on a grid of `cell_size` metres.
    pub fn draw_scale_bar(&self, img: &mut RgbaImage, cell_size: f64) {
        let ppm = self.scale as f64 / cell_size;
        let Some(metres) = round_length_at_most((SIDE_W - 60) as f64 / ppm) else {
            return;
        };
        let len = (metres * ppm).round().max(1.0) as u32;
        let (x, y) = (self.bar_x, self.scale_bar_y + 4);
        fill_rect(img, x, y + 4, len, 3, INK);
        for end in [x, x + len - 1] {
            fill_rect(img, end, y, 1, 11, INK);
        }
        let label = format!("{} m", format_length(metres));
        draw_text(img, (x + len + 8) as f32, y as f32 - 2.0, LABEL_SIZE, &label, INK);
    }

    /// The cell `(row, col)` under map pixel `(px, py)` (relative to the map area; y up).
    pub fn cell(&self, px: u32, py: u32) -> (usize, usize) {
        let c = (px / self.scale) as usize;
        let r = self.rows - 1 - (py / self.scale) as usize;
        (r, c)
    }

    /// Map-pixel centre `(px, py)` as continuous coordinates in cell-centre units
    /// `(u = column, v = row)`, so cell `(r, c)` has its centre at `(c, r)`.
    pub fn cell_coords(&self, px: u32, py: u32) -> (f64, f64) {
        let s = self.scale as f64;
        let u = (px as f64 + 0.5) / s - 0.5;
        let v = self.rows as f64 - (py as f64 + 0.5) / s - 0.5;
        (u, v)
    }

    /// A white image of this layout's size with `title` drawn on top.
    pub fn canvas(&self, title: &str) -> RgbaImage {
        blank_canvas(self.width, self.height, title)
    }

    /// Fills the map area: `color(r, c, px, py)` per map pixel (px, py relative to the map).
    pub fn fill_map(&self, img: &mut RgbaImage, mut color: impl FnMut(usize, usize, u32, u32) -> [u8; 3]) {
        for py in 0..self.map_h {
            for px in 0..self.map_w {
                let (r, c) = self.cell(px, py);
                let [cr, cg, cb] = color(r, c, px, py);
                img.put_pixel(self.map_x + px, self.map_y + py, Rgba([cr, cg, cb, 255]));
            }
        }
    }

    /// Blends `color` by `alpha` into map pixel `(px, py)` (relative to the map), if inside.
    pub fn blend_map(&self, img: &mut RgbaImage, px: i64, py: i64, color: [u8; 3], alpha: f32) {
        if px >= 0 && py >= 0 && (px as u32) < self.map_w && (py as u32) < self.map_h {
            let (x, y) = (self.map_x + px as u32, self.map_y + py as u32);
            let p = img.get_pixel_mut(x, y);
            *p = blend(*p, color, alpha);
        }
    }

    /// Map-pixel position `(px, py)` (relative to the map, y down) of the point `(x, y)` metres
    /// on a grid of `cell_size` metres.
    pub fn map_point(&self, x: f64, y: f64, cell_size: f64) -> (f64, f64) {
        let ppm = self.scale as f64 / cell_size;
        (x * ppm, self.map_h as f64 - y * ppm)
    }

    /// Draws the colour bar for values `lo..hi` (hi at the top) with ticks, tick labels and
    /// `unit` above it. `wash` in `[0, 1]` lightens the colours toward white (as on the
    /// gradient image's backdrop).
    pub fn draw_colorbar(&self, img: &mut RgbaImage, lo: f64, hi: f64, map: Colormap, wash: f32, unit: &str) {
        draw_text(
            img,
            self.bar_x as f32,
            (self.bar_y - 22) as f32,
            LABEL_SIZE,
            unit,
            INK,
        );
        for y in 0..self.bar_h {
            let t = 1.0 - (y as f64 + 0.5) / self.bar_h as f64;
            let c = washed(map.rgb(t), wash);
            for x in 0..BAR_W {
                img.put_pixel(self.bar_x + x, self.bar_y + y, Rgba([c[0], c[1], c[2], 255]));
            }
        }
        draw_frame(img, self.bar_x, self.bar_y, BAR_W, self.bar_h, INK);
        let span = hi - lo;
        for (v, label) in ticks(lo, hi, TARGET_TICKS) {
            let t = (v - lo) / span;
            let y = self.bar_y as f64 + (1.0 - t) * (self.bar_h as f64 - 1.0);
            let y = y.round() as u32;
            fill_rect(img, self.bar_x + BAR_W, y, TICK_LEN, 1, INK);
            let ty = y as f32 - LABEL_SIZE * 0.6;
            draw_text(img, (self.bar_x + BAR_W + 9) as f32, ty, LABEL_SIZE, &label, INK);
        }
    }

    /// Draws the legend rows under the colour bar.
    pub fn draw_legend(&self, img: &mut RgbaImage, entries: &[LegendEntry]) {
        draw_legend_at(img, self.bar_x, self.legend_y, entries);
    }
}

/// A white `width x height` image with `title` drawn in the title band, as on every image.
pub fn blank_canvas(width: u32, height: u32, title: &str) -> RgbaImage {
    let mut img = RgbaImage::from_pixel(width.max(1), height.max(1), rgba(WHITE));
    let size = title_size(title, width);
    // Smaller titles sit lower, centred in the band the full-size title takes.
    let y = 10.0 + (TITLE_SIZE - size) / 2.0;
    draw_text(&mut img, MARGIN as f32, y, size, title, INK);
    img
}

/// Smallest title text size, px: a longer title is clipped at the right edge rather than
/// becoming unreadable.
pub const MIN_TITLE_SIZE: f32 = 11.0;

/// Text size for `title` on an image `width` px wide: [`TITLE_SIZE`], shrunk (down to
/// [`MIN_TITLE_SIZE`]) so the title fits between the margins.
pub fn title_size(title: &str, width: u32) -> f32 {
    let room = width.saturating_sub(2 * MARGIN) as f32;
    let full = text_width(title, TITLE_SIZE);
    if full <= room {
        TITLE_SIZE
    } else {
        (TITLE_SIZE * room / full).max(MIN_TITLE_SIZE)
    }
}

/// Length of a tick mark on a colour bar or an axis, px.
pub const TICK_LEN: u32 = 6;

/// Legend rows (swatch, then label), the first with its top-left corner at `(x, y)`.
pub fn draw_legend_at(img: &mut RgbaImage, x: u32, y: u32, entries: &[LegendEntry]) {
    const SWATCH: u32 = LEGEND_SWATCH;
    for (i, e) in entries.iter().enumerate() {
        let y = y + i as u32 * LEGEND_ROW_H;
        let label = match e {
            LegendEntry::Swatch(c, label) => {
                fill_rect(img, x, y, SWATCH, SWATCH, *c);
                label
            }
            LegendEntry::Hatched(label) => {
                for dy in 0..SWATCH {
                    for dx in 0..SWATCH {
                        img.put_pixel(x + dx, y + dy, rgba(hatch(x + dx, y + dy)));
                    }
                }
                label
            }
            LegendEntry::Outline(c, label) => {
                for k in 0..2 {
                    draw_frame(img, x + k, y + k, SWATCH - 2 * k, SWATCH - 2 * k, *c);
                }
                label
            }
            LegendEntry::Ramp(map, label) => {
                for dx in 0..SWATCH {
                    let c = map.rgb((dx as f64 + 0.5) / SWATCH as f64);
                    fill_rect(img, x + dx, y, 1, SWATCH, c);
                }
                label
            }
            LegendEntry::Ring(c, label) => {
                let centre = (SWATCH as f64 - 1.0) / 2.0;
                for dy in 0..SWATCH {
                    for dx in 0..SWATCH {
                        let d = (dx as f64 - centre).hypot(dy as f64 - centre);
                        let fill = if d <= 2.5 {
                            WHITE
                        } else if d <= 5.5 {
                            *c
                        } else if d <= 6.5 {
                            INK
                        } else {
                            continue;
                        };
                        img.put_pixel(x + dx, y + dy, rgba(fill));
                    }
                }
                label
            }
            LegendEntry::Cross(c, label) => {
                for k in 2..SWATCH - 2 {
                    for t in 0..2 {
                        img.put_pixel(x + k + t, y + k, rgba(*c));
                        img.put_pixel(x + SWATCH - 1 - k - t, y + k, rgba(*c));
                    }
                }
                label
            }
        };
        if !matches!(e, LegendEntry::Ring(..)) {
            draw_frame(img, x, y, SWATCH, SWATCH, INK);
        }
        draw_text(
            img,
            (x + SWATCH + LEGEND_GAP) as f32,
            y as f32,
            LABEL_SIZE,
            label,
            INK,
        );
    }
}

/// Smallest radius a walker is drawn with, px, so walkers stay visible on large maps.
pub const MIN_AGENT_PX: f64 = 1.5;

/// A filled disc of radius `r` px centred at map pixel `(cx, cy)` (relative to the map, y
/// down), clipped to the map area: a walker on a frame or on `solve`'s map.
pub fn disc(img: &mut RgbaImage, layout: &Layout, (cx, cy): (f64, f64), r: f64, c: [u8; 3]) {
    for y in (cy - r).floor() as i64..=(cy + r).ceil() as i64 {
        for x in (cx - r).floor() as i64..=(cx + r).ceil() as i64 {
            let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
            if dx * dx + dy * dy <= r * r {
                layout.blend_map(img, x, y, c, 1.0);
            }
        }
    }
}

/// A one-pixel rectangle outline in colour `c`, top-left corner `(x, y)`, `w x h` px.
pub fn draw_frame(img: &mut RgbaImage, x: u32, y: u32, w: u32, h: u32, c: [u8; 3]) {
    fill_rect(img, x, y, w, 1, c);
    fill_rect(img, x, y + h - 1, w, 1, c);
    fill_rect(img, x, y, 1, h, c);
    fill_rect(img, x + w - 1, y, 1, h, c);
}

/// Opaque pixel of colour `c`.
pub fn rgba(c: [u8; 3]) -> Rgba<u8> {
    Rgba([c[0], c[1], c[2], 255])
}

/// The hatching pattern of "no value" cells at image pixel `(x, y)`.
pub fn hatch(x: u32, y: u32) -> [u8; 3] {
    if (x + y) % HATCH_PERIOD < 2 {
        NO_VALUE_HATCH
    } else {
        NO_VALUE_BG
    }
}

/// `c` lightened toward white by `wash` in `[0, 1]`.
pub fn washed(c: [u8; 3], wash: f32) -> [u8; 3] {
    c.map(|v| (v as f32 + (255.0 - v as f32) * wash).round() as u8)
}

/// Fills the rectangle `[x, x + w) x [y, y + h)` with `c`; the part outside the image is skipped.
pub fn fill_rect(img: &mut RgbaImage, x: u32, y: u32, w: u32, h: u32, c: [u8; 3]) {
    for py in y..y.saturating_add(h).min(img.height()) {
        for px in x..x.saturating_add(w).min(img.width()) {
            img.put_pixel(px, py, rgba(c));
        }
    }
}

/// Height of the scale bar row, px.
pub const SCALE_BAR_H: u32 = 20;

/// The largest round length (1, 2 or 5 times a power of ten) not above `max`; `None` when `max`
/// is not a positive finite number.
pub fn round_length_at_most(max: f64) -> Option<f64> {
    if !(max > 0.0 && max.is_finite()) {
        return None;
    }
    let p = 10f64.powf(max.log10().floor());
    let m = max / p;
    // `m` is in [1, 10) up to rounding of the logarithm.
    let k = [10.0, 5.0, 2.0, 1.0].into_iter().find(|&k| k <= m).unwrap_or(0.5);
    Some(k * p)
}

/// A length for a label: no trailing zeros, no exponent for the lengths a map has.
fn format_length(metres: f64) -> String {
    let text = format!("{metres:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The round step (1, 2 or 5 times a power of ten) nearest above `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let k = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    k * p
}

/// Round tick values (multiples of a [`nice_step`] giving about `target` intervals) in
/// `[lo, hi]`, each with its label: as many decimals as the step needs, never "-0". Empty when
/// the range is empty or not finite.
pub fn ticks(lo: f64, hi: f64, target: f64) -> Vec<(f64, String)> {
    let span = hi - lo;
    if !(span > 0.0 && span.is_finite()) {
        return Vec::new();
    }
    let step = nice_step(span / target);
    let decimals = decimals_for(step);
    let (first, last) = ((lo / step).ceil() as i64, (hi / step).floor() as i64);
    (first..=last)
        .map(|k| {
            let v = k as f64 * step;
            let label = format!("{v:.decimals$}");
            let label = if label.starts_with('-') && label.trim_start_matches(['-', '0', '.']).is_empty() {
                label[1..].to_string()
            } else {
                label
            };
            (v, label)
        })
        .collect()
}

/// Decimal places that show multiples of `step` exactly.
pub fn decimals_for(step: f64) -> usize {
    if step >= 1.0 {
        0
    } else {
        (-step.log10() - 1e-9).ceil() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_bar_is_a_round_length_that_fits() {
        assert_eq!(round_length_at_most(7.3), Some(5.0));
        assert_eq!(round_length_at_most(10.0), Some(10.0));
        assert_eq!(round_length_at_most(19.9), Some(10.0));
        assert_eq!(round_length_at_most(0.42), Some(0.2));
        assert_eq!(round_length_at_most(0.0), None);
        assert_eq!(format_length(0.2), "0.2");
        assert_eq!(format_length(20.0), "20");
        // A 60 m hall on 0.5 m cells drawn at 7 px per cell: 14 px per metre, and the bar is
        // the longest round length within the side panel.
        let opts = ImageOptions::default();
        let l = Layout::new(80, 120, 2, &opts);
        let mut img = l.canvas("t");
        l.draw_scale_bar(&mut img, 0.5);
        let ppm = l.scale as f64 / 0.5;
        let bar_y = l.scale_bar_y + 4 + 5;
        let dark = (l.bar_x..l.width)
            .take_while(|&x| img.get_pixel(x, bar_y).0[0] < 64)
            .count() as f64;
        let metres = round_length_at_most((SIDE_W - 60) as f64 / ppm).unwrap();
        assert!(
            (dark - metres * ppm).abs() <= 1.0,
            "{dark} px for {metres} m at {ppm} px/m"
        );
        assert!(l.scale_bar_y + SCALE_BAR_H + MARGIN <= l.height);
    }

    #[test]
    fn nice_steps_are_round() {
        assert_eq!(nice_step(0.9), 1.0);
        assert_eq!(nice_step(1.3), 2.0);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert!((nice_step(0.013) - 0.02).abs() < 1e-12);
        assert_eq!(decimals_for(0.02), 2);
        assert_eq!(decimals_for(5.0), 0);
    }

    #[test]
    fn ticks_are_round_labelled_and_inside_the_range() {
        let t = ticks(0.0, 100.0, 5.0);
        let values: Vec<f64> = t.iter().map(|p| p.0).collect();
        assert_eq!(values, [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(t[1].1, "20");
        let t = ticks(-0.25, 0.9, 6.0);
        let labels: Vec<&str> = t.iter().map(|p| p.1.as_str()).collect();
        assert_eq!(labels, ["-0.2", "0.0", "0.2", "0.4", "0.6", "0.8"], "no -0.0");
        assert!(ticks(1.0, 1.0, 5.0).is_empty());
        assert!(ticks(0.0, f64::INFINITY, 5.0).is_empty());
    }

    #[test]
    fn long_titles_shrink_to_fit_between_the_margins() {
        assert_eq!(title_size("short", 800), TITLE_SIZE);
        let long = "a title too long for an image 400 px wide";
        let size = title_size(long, 400);
        assert!((MIN_TITLE_SIZE..TITLE_SIZE).contains(&size));
        assert!(text_width(long, size) <= (400 - 2 * MARGIN) as f32 + 0.5);
        assert_eq!(title_size(&long.repeat(10), 400), MIN_TITLE_SIZE);
        let img = blank_canvas(400, 60, long);
        let right_margin_ink = (0..TITLE_H)
            .flat_map(|y| (400 - MARGIN + 1..400).map(move |x| (x, y)))
            .filter(|&(x, y)| img.get_pixel(x, y)[0] < 200)
            .count();
        assert_eq!(right_margin_ink, 0, "nothing drawn in the right margin");
    }

    #[test]
    fn fill_rect_clips_and_the_legend_cross_is_drawn() {
        let mut img = RgbaImage::from_pixel(10, 10, rgba(WHITE));
        fill_rect(&mut img, 8, 8, 5, 5, INK);
        assert_eq!(img.get_pixel(9, 9).0, [20, 20, 20, 255]);
        assert_eq!(img.get_pixel(7, 7).0, [255, 255, 255, 255]);
        let mut img = RgbaImage::from_pixel(60, 20, rgba(WHITE));
        draw_legend_at(&mut img, 0, 0, &[LegendEntry::Cross([200, 0, 0], "x".into())]);
        assert_eq!(img.get_pixel(5, 5).0, [200, 0, 0, 255], "on the diagonal");
        assert_eq!(img.get_pixel(5, 8).0, [255, 255, 255, 255], "off the diagonals");
    }

    #[test]
    fn small_grids_are_scaled_to_the_minimum_width() {
        let l = Layout::new(10, 20, 3, &ImageOptions::default());
        assert_eq!(l.scale, 40);
        assert_eq!((l.map_w, l.map_h), (800, 400));
        assert_eq!(l.cell(0, 0), (9, 0), "top-left pixel is the top row");
        assert_eq!(l.cell(799, 399), (0, 19));
        let tall = Layout::new(1000, 10, 0, &ImageOptions::default());
        assert_eq!(tall.scale, 2);
    }
}
