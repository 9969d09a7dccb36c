//! Image layout and drawing primitives shared by every exported image: a title, the map area
//! (cells scaled up by an integer factor, nearest neighbour, y up), a vertical colour bar with
//! ticks and unit, and a legend.

use super::colormap::Colormap;
use super::text::{blend, draw_text};
use image::{Rgba, RgbaImage};

/// Blank space around the parts of the image, px.
const MARGIN: u32 = 16;
/// Height of the title band, px.
const TITLE_H: u32 = 40;
/// Title text size, px.
const TITLE_SIZE: f32 = 20.0;
/// Tick label, unit and legend text size, px.
const LABEL_SIZE: f32 = 14.0;
/// Width of the colour bar itself, px.
const BAR_W: u32 = 24;
/// Width reserved right of the map for the bar, its tick labels and the legend, px.
const SIDE_W: u32 = 170;
/// Shortest colour bar, px (readable ticks even for a flat map).
const MIN_BAR_H: u32 = 200;
/// Longest colour bar, px.
const MAX_BAR_H: u32 = 600;
/// Height of one legend row, px.
const LEGEND_ROW_H: u32 = 22;
/// Aim for about this many labelled ticks on a colour bar.
const TARGET_TICKS: f64 = 6.0;

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
        let width = bar_x + SIDE_W;
        let height = (map_y + map_h + MARGIN).max(legend_y + legend_rows as u32 * LEGEND_ROW_H + MARGIN);
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
            width,
            height,
        }
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
        let mut img = RgbaImage::from_pixel(self.width, self.height, Rgba([255, 255, 255, 255]));
        draw_text(&mut img, MARGIN as f32, 10.0, TITLE_SIZE, title, INK);
        img
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
        self.frame(img, self.bar_x, self.bar_y, BAR_W, self.bar_h);
        let span = hi - lo;
        if !(span > 0.0 && span.is_finite()) {
            return;
        }
        let step = nice_step(span / TARGET_TICKS);
        let decimals = decimals_for(step);
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        for k in first..=last {
            let v = k as f64 * step;
            let t = (v - lo) / span;
            let y = self.bar_y as f64 + (1.0 - t) * (self.bar_h as f64 - 1.0);
            let y = y.round() as u32;
            for x in 0..6 {
                img.put_pixel(self.bar_x + BAR_W + x, y, Rgba([INK[0], INK[1], INK[2], 255]));
            }
            let label = format!("{v:.decimals$}");
            let label = if label.starts_with('-') && label.trim_start_matches(['-', '0', '.']).is_empty() {
                label[1..].to_string()
            } else {
                label
            };
            let ty = y as f32 - LABEL_SIZE * 0.6;
            draw_text(img, (self.bar_x + BAR_W + 9) as f32, ty, LABEL_SIZE, &label, INK);
        }
    }

    /// Draws the legend rows under the colour bar.
    pub fn draw_legend(&self, img: &mut RgbaImage, entries: &[LegendEntry]) {
        const SWATCH: u32 = 16;
        for (i, e) in entries.iter().enumerate() {
            let (x, y) = (self.bar_x, self.legend_y + i as u32 * LEGEND_ROW_H);
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
                        self.frame_color(img, x + k, y + k, SWATCH - 2 * k, SWATCH - 2 * k, *c);
                    }
                    label
                }
            };
            self.frame(img, x, y, SWATCH, SWATCH);
            draw_text(img, (x + SWATCH + 8) as f32, y as f32, LABEL_SIZE, label, INK);
        }
    }

    fn frame(&self, img: &mut RgbaImage, x: u32, y: u32, w: u32, h: u32) {
        self.frame_color(img, x, y, w, h, INK);
    }

    fn frame_color(&self, img: &mut RgbaImage, x: u32, y: u32, w: u32, h: u32, c: [u8; 3]) {
        for dx in 0..w {
            img.put_pixel(x + dx, y, rgba(c));
            img.put_pixel(x + dx, y + h - 1, rgba(c));
        }
        for dy in 0..h {
            img.put_pixel(x, y + dy, rgba(c));
            img.put_pixel(x + w - 1, y + dy, rgba(c));
        }
    }
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

fn fill_rect(img: &mut RgbaImage, x: u32, y: u32, w: u32, h: u32, c: [u8; 3]) {
    for dy in 0..h {
        for dx in 0..w {
            img.put_pixel(x + dx, y + dy, rgba(c));
        }
    }
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
