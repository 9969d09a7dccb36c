//! Image plans (PNG, JPEG): a picture of the floor seen from above, north up, at a known pixel
//! size. Pixels darker than a threshold are walls; the picture is resampled to the grid, a cell
//! being a wall when any pixel it covers is one (so a wall one pixel thick stays closed at any
//! cell size).

use super::Plan;
use crate::error::{Error, Result, num};
use ndarray::{Array2, ArrayView2};
use std::path::Path;

/// The most pixels an image plan may have (a 16k x 16k picture), checked before decoding.
pub const MAX_PIXELS: u64 = 1 << 28;

/// Reads an image plan; `pixel_size` is metres per pixel, `threshold` the luma (0-255) below
/// which a pixel is a wall.
pub fn read(path: &Path, pixel_size: f64, threshold: u8) -> Result<Plan> {
    let file = crate::text::show_path(path);
    if !(pixel_size.is_finite() && pixel_size > 0.0 && pixel_size <= 100.0) {
        return Err(Error::invalid(
            crate::error::OPTIONS,
            "pixel_size",
            format!("{}: expected metres per pixel in (0, 100]", num(pixel_size)),
        ));
    }
    let bad = |e: image::ImageError| Error::invalid(file.clone(), "(image)", e.to_string());
    let reader = image::ImageReader::open(path)
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?
        .with_guessed_format()
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let (w, h) = reader.into_dimensions().map_err(bad)?;
    if w as u64 * h as u64 > MAX_PIXELS {
        return Err(Error::invalid(
            file,
            "(image)",
            format!("{w} x {h} pixels: expected at most {MAX_PIXELS} pixels; scale the picture down"),
        ));
    }
    let img = image::ImageReader::open(path)
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?
        .with_guessed_format()
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?
        .decode()
        .map_err(bad)?
        .to_luma8();
    let (w, h) = (img.width() as usize, img.height() as usize);
    // Row 0 of the array is the bottom of the picture.
    let walls = Array2::from_shape_fn((h, w), |(r, c)| {
        img.get_pixel(c as u32, (h - 1 - r) as u32).0[0] < threshold
    });
    let mut plan = Plan::new(&file);
    plan.units = format!("{} m per pixel", num(pixel_size));
    plan.walls = Some((walls, pixel_size));
    Ok(plan)
}

/// `pixels` (`true` = wall, row 0 at the bottom, `pixel_size` m each) on a grid of `cell_size`
/// m cells covering the picture: a cell is a wall when any pixel it overlaps is.
pub fn resample(pixels: ArrayView2<bool>, pixel_size: f64, cell_size: f64) -> Array2<bool> {
    let (ph, pw) = pixels.dim();
    let cols = ((pw as f64 * pixel_size) / cell_size).ceil().max(1.0) as usize;
    let rows = ((ph as f64 * pixel_size) / cell_size).ceil().max(1.0) as usize;
    // The pixels a cell's span [i cs, (i+1) cs) overlaps, as a half-open index range.
    let span = |i: usize, n: usize| {
        // A hair of slack so that round-off at a shared edge does not reach the next pixel.
        let lo = (i as f64 * cell_size / pixel_size + 1e-9).floor() as usize;
        let hi = (((i + 1) as f64 * cell_size / pixel_size - 1e-9).ceil() as usize).max(lo + 1);
        (lo.min(n - 1), hi.min(n))
    };
    Array2::from_shape_fn((rows, cols), |(r, c)| {
        let (r0, r1) = span(r, ph);
        let (c0, c1) = span(c, pw);
        (r0..r1).any(|pr| (c0..c1).any(|pc| pixels[[pr, pc]]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thin_wall_survives_coarser_cells() {
        // 8 x 8 pixels of 0.1 m with a one-pixel wall along column 3.
        let px = Array2::from_shape_fn((8, 8), |(_, c)| c == 3);
        let cells = resample(px.view(), 0.1, 0.4);
        assert_eq!(cells.dim(), (2, 2));
        assert!(cells[[0, 0]] && cells[[1, 0]]);
        assert!(!cells[[0, 1]] && !cells[[1, 1]]);
        // Finer cells than pixels copy them.
        let fine = resample(px.view(), 0.1, 0.05);
        assert_eq!(fine.dim(), (16, 16));
        assert!(fine[[0, 6]] && fine[[0, 7]] && !fine[[0, 8]] && !fine[[0, 5]]);
    }
}
