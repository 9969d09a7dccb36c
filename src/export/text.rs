//! Text for image labels, rasterised with `ab_glyph`.
//!
//! Font: Hack Regular, taken as bytes from the `epaint_default_fonts` crate (already in the
//! dependency tree through egui; Hack is under the MIT-style Hack/Bitstream Vera licence shipped
//! with that crate). A monospace face keeps tick labels aligned.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use image::{Rgba, RgbaImage};
use std::sync::OnceLock;

fn font() -> &'static FontRef<'static> {
    static FONT: OnceLock<FontRef<'static>> = OnceLock::new();
    FONT.get_or_init(|| {
        FontRef::try_from_slice(epaint_default_fonts::HACK_REGULAR).expect("the bundled Hack font parses")
    })
}

/// Width in pixels of `text` at `size` pixels.
pub fn text_width(text: &str, size: f32) -> f32 {
    let scaled = font().as_scaled(PxScale::from(size));
    let mut w = 0.0;
    let mut prev = None;
    for ch in text.chars() {
        let id = scaled.glyph_id(ch);
        if let Some(p) = prev {
            w += scaled.kern(p, id);
        }
        w += scaled.h_advance(id);
        prev = Some(id);
    }
    w
}

/// Draws `text` with its top-left corner at `(x, y)` pixels, `size` pixels high, blending
/// `color` by glyph coverage. Pixels outside the image are skipped.
pub fn draw_text(img: &mut RgbaImage, x: f32, y: f32, size: f32, text: &str, color: [u8; 3]) {
    let f = font();
    let scale = PxScale::from(size);
    let scaled = f.as_scaled(scale);
    let baseline = y + scaled.ascent();
    let mut caret = x;
    let mut prev = None;
    for ch in text.chars() {
        let id = scaled.glyph_id(ch);
        if let Some(p) = prev {
            caret += scaled.kern(p, id);
        }
        let glyph = id.with_scale_and_position(scale, point(caret, baseline));
        caret += scaled.h_advance(id);
        prev = Some(id);
        let Some(outlined) = f.outline_glyph(glyph) else {
            continue;
        };
        let b = outlined.px_bounds();
        outlined.draw(|gx, gy, coverage| {
            let px = b.min.x as i64 + gx as i64;
            let py = b.min.y as i64 + gy as i64;
            if px >= 0 && py >= 0 && (px as u32) < img.width() && (py as u32) < img.height() {
                let dst = img.get_pixel_mut(px as u32, py as u32);
                *dst = blend(*dst, color, coverage.clamp(0.0, 1.0));
            }
        });
    }
}

/// `dst` blended toward `color` by `alpha` in `[0, 1]` (opaque result).
pub fn blend(dst: Rgba<u8>, color: [u8; 3], alpha: f32) -> Rgba<u8> {
    let mix = |d: u8, s: u8| (d as f32 + (s as f32 - d as f32) * alpha).round() as u8;
    Rgba([
        mix(dst[0], color[0]),
        mix(dst[1], color[1]),
        mix(dst[2], color[2]),
        255,
    ])
}
