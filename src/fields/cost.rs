//! Anisotropic unit cost (SPEC §3): `C = (alpha f + beta + gamma g) / f` seconds per metre, with
//! the discomfort g sampled `lookahead` metres ahead like the density.
//!
//! A face that cannot be crossed (out of an obstacle cell, into an obstacle, out of the domain,
//! or with no positive finite speed) costs `+inf`, the marker the Eikonal solvers read as a wall.

use super::speed::SceneFaces;
use crate::grid::Dir;
use crate::scene::Scene;
use ndarray::{Array3, ArrayView3};
use rayon::prelude::*;

/// Unit cost of one face from its speed `f` (m/s) and the discomfort `g` ahead:
/// `(alpha f + beta + gamma g) / f`; `+inf` where `f` is not positive and finite.
pub fn face_cost(alpha: f64, beta: f64, gamma: f64, f: f64, g: f64) -> f64 {
    if !(f > 0.0 && f.is_finite()) {
        return f64::INFINITY;
    }
    let c = (alpha * f + beta + gamma * g) / f;
    if c.is_nan() { f64::INFINITY } else { c }
}

/// Anisotropic unit cost C = (alpha f + beta + gamma g) / f, shape `(rows, cols, 4)`;
/// `+inf` where the face cannot be crossed (obstacles, domain border, zero speed).
pub fn unit_cost(scene: &Scene, speed: ArrayView3<f32>) -> Array3<f32> {
    unit_cost_with(scene, &SceneFaces::new(scene), speed)
}

/// [`unit_cost`] with the scene's faces computed beforehand (the same values), rows in
/// parallel over contiguous slices.
pub fn unit_cost_with(scene: &Scene, faces: &SceneFaces, speed: ArrayView3<f32>) -> Array3<f32> {
    let grid = scene.grid;
    let p = &scene.params;
    let mut cost = Array3::<f32>::from_elem(grid.dir_shape(), f32::INFINITY);
    if grid.is_empty() {
        return cost;
    }
    let speed = speed.as_standard_layout();
    let speed = speed.as_slice().expect("standard layout is contiguous");
    let per_row = grid.cols * 4;
    cost.as_slice_mut()
        .expect("a new array is contiguous")
        .par_chunks_mut(per_row)
        .zip(speed.par_chunks(per_row))
        .enumerate()
        .for_each(|(r, (row, speed_row))| {
            for (k, (out, &f)) in row.iter_mut().zip(speed_row).enumerate() {
                let (i, d) = (r * grid.cols + k / 4, Dir::ALL[k % 4]);
                if faces.terrain(i, d).is_some() {
                    *out = face_cost(p.alpha, p.beta, p.gamma, f as f64, faces.discomfort(i, d)) as f32;
                }
            }
        });
    cost
}
