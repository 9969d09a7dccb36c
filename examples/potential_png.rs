//! Solving a potential from an `ndarray` of walking speeds and drawing it as a PNG, without a
//! map file: a 60 m x 30 m hall split by a wall with one door, the goal on its west side.
//!
//! `cargo run --example potential_png -- [OUT.png]` (default `potential.png`). Prints the
//! walking time from the far corner, which the door makes longer than the straight line.
//! `tests/examples.rs` runs it.

use crowdfield::eikonal::{Order, Solution, solve_fmm_speed};
use crowdfield::export::{ArraySpec, Colormap, ImageOptions, array_image, save_png};
use ndarray::Array2;
use std::path::Path;

/// Rows, columns and edge (metres) of the hall's cells.
pub const HALL: (usize, usize, f64) = (60, 120, 0.5);

fn main() -> crowdfield::Result<()> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "potential.png".to_string());
    let solution = run(Path::new(&out))?;
    let (rows, cols, _) = HALL;
    println!(
        "from the far corner: {:.1} s ({} unreachable cells, the wall's); wrote {out}",
        solution.phi[(rows - 1, cols - 1)],
        solution.unreachable
    );
    Ok(())
}

/// Solves the hall's potential (second order) and draws it into `out` with its colour bar,
/// isolines and scale bar.
pub fn run(out: &Path) -> crowdfield::Result<Solution> {
    let (rows, cols, cell) = HALL;
    // Walking speed per cell, m/s (rows = y, row 0 at the bottom); 0 is a wall.
    let mut speed = Array2::from_elem((rows, cols), 1.34);
    for r in 0..rows {
        if !(26..34).contains(&r) {
            speed[(r, cols / 2)] = 0.0;
        }
    }
    // The goal: the west edge.
    let goal = Array2::from_shape_fn((rows, cols), |(_, c)| c == 0);
    let solution = solve_fmm_speed(speed.view(), goal.view(), cell, Order::Second);
    let spec = ArraySpec {
        title: "walking time to the west edge",
        unit: "s",
        colormap: Colormap::Viridis,
        range: None,
        isolines: Some(None),
        cell_size: cell,
    };
    let img = array_image(solution.phi.view(), &spec, &ImageOptions::default());
    save_png(out, &img)?;
    Ok(solution)
}
