//! Gradient of a potential and the walking velocity it gives (SPEC §4, last paragraph).
//!
//! The gradient is upwind per axis, on the side the fast-marching update takes: the neighbour M
//! with the smaller `phi_M + h C(cell -> M)`, used only when `phi_M < phi(cell)` (an axis with no
//! smaller neighbour contributes 0, as it does not enter the update either). The walking
//! direction is `-grad / |grad|`.
//!
//! [`velocity_at`] interpolates unit directions bilinearly between the four cell centres around
//! the point (skipping cells without a direction and renormalising), then takes the speed of
//! the containing cell between the two faces the direction falls between, weighted by
//! `cos²` and `sin²` of its angle to the x axis (weights that sum to 1, so a uniform `f` gives
//! exactly `f`, and that reach a single face smoothly as the direction turns onto an axis).

use crate::grid::{Dir, Grid};
use ndarray::{Array2, ArrayView2, ArrayView3, Zip};

/// Upwind gradient of phi at cell centres (per metre). Zero on sources and where phi is
/// infinite or no finite neighbour exists.
#[derive(Clone, Debug, PartialEq)]
pub struct Gradient {
    /// d phi / d x.
    pub gx: Array2<f32>,
    /// d phi / d y.
    pub gy: Array2<f32>,
}

impl Gradient {
    /// The unit walking direction `-grad / |grad|` of cell `(r, c)`, or `None` where the
    /// gradient is zero (sources, unreachable cells, obstacles).
    pub fn direction(&self, r: usize, c: usize) -> Option<[f32; 2]> {
        let (gx, gy) = (self.gx[[r, c]], self.gy[[r, c]]);
        let norm = gx.hypot(gy);
        (norm > 0.0 && norm.is_finite()).then(|| [-gx / norm, -gy / norm])
    }
}

/// One axis of the upwind gradient of a cell whose potential is `here`: the neighbour on the
/// `+axis` side (`plus`: its potential and the unit cost of the face toward it, `None` past the
/// border) and on the `-axis` side (`minus`). A neighbour is upwind when its potential is
/// finite and below `here` and its face cost finite and positive; of two upwind neighbours the
/// one with the smaller `phi_M + h C(cell -> M)` is taken (the `+axis` one on a tie), giving
/// `(phi_M - phi) / h` toward `+axis` and `(phi - phi_M) / h` toward `-axis`; 0 with none.
#[inline(always)]
fn upwind_axis(here: f64, plus: Option<(f64, f32)>, minus: Option<(f64, f32)>, h: f64) -> f64 {
    let candidate = |side: Option<(f64, f32)>| -> Option<f64> {
        let (pm, c) = side?;
        let cm = c as f64;
        (pm.is_finite() && pm < here && cm.is_finite() && cm > 0.0).then_some(pm + h * cm)
    };
    match (candidate(plus), candidate(minus)) {
        (Some(kp), Some(km)) if km < kp => (here - minus.expect("upwind").0) / h,
        (Some(_), _) => (plus.expect("upwind").0 - here) / h,
        (None, Some(_)) => (here - minus.expect("upwind").0) / h,
        (None, None) => 0.0,
    }
}

/// Upwind gradient of `phi`, taking on each axis the side the solver took (the neighbour with
/// the smaller `phi_M + h C(cell -> M)`). Rows in parallel over contiguous slices (a copy first
/// only when a view is not in row-major layout); the result does not depend on the thread
/// count.
pub fn gradient(phi: ArrayView2<f64>, cost: ArrayView3<f32>, cell_size: f64) -> Gradient {
    let (rows, cols) = phi.dim();
    assert_eq!(
        cost.dim(),
        (rows, cols, 4),
        "cost must have shape (rows, cols, 4)"
    );
    let phi = phi.as_standard_layout();
    let cost = cost.as_standard_layout();
    let (phi, cost) = (
        phi.as_slice().expect("standard layout is contiguous"),
        cost.as_slice().expect("standard layout is contiguous"),
    );
    let h = cell_size;
    let mut gx = Array2::<f32>::zeros((rows, cols));
    let mut gy = Array2::<f32>::zeros((rows, cols));
    let (e, n, w, s) = (Dir::E.index(), Dir::N.index(), Dir::W.index(), Dir::S.index());
    Zip::indexed(gx.rows_mut())
        .and(gy.rows_mut())
        .par_for_each(|r, mut gx_row, mut gy_row| {
            for c in 0..cols {
                let i = r * cols + c;
                let here = phi[i];
                if !(here.is_finite() && here > 0.0) {
                    continue;
                }
                let face = &cost[i * 4..i * 4 + 4];
                let east = (c + 1 < cols).then(|| (phi[i + 1], face[e]));
                let west = (c > 0).then(|| (phi[i - 1], face[w]));
                let north = (r + 1 < rows).then(|| (phi[i + cols], face[n]));
                let south = (r > 0).then(|| (phi[i - cols], face[s]));
                gx_row[c] = upwind_axis(here, east, west, h) as f32;
                gy_row[c] = upwind_axis(here, north, south, h) as f32;
            }
        });
    Gradient { gx, gy }
}

/// Walking velocity at world point `(x, y)`: direction `-grad phi / |grad phi|` (interpolated),
/// speed `f` in that direction interpolated between the two faces it falls between. `[0, 0]`
/// where there is no direction: outside the domain, or in a cell with zero gradient (a goal
/// cell, an unreachable cell or an obstacle).
pub fn velocity_at(grid: &Grid, grad: &Gradient, speed: ArrayView3<f32>, x: f32, y: f32) -> [f32; 2] {
    let (x, y) = (x as f64, y as f64);
    if !(x >= 0.0 && y >= 0.0 && x <= grid.width() && y <= grid.height()) || grid.is_empty() {
        return [0.0, 0.0];
    }
    let h = grid.cell_size;
    // The containing cell (the far edges belong to the last cell).
    let cr = ((y / h) as usize).min(grid.rows - 1);
    let cc = ((x / h) as usize).min(grid.cols - 1);
    let Some(own) = grad.direction(cr, cc) else {
        return [0.0, 0.0];
    };
    // Bilinear weights over the four cell centres around the point (clamped at the border).
    let u = (x / h - 0.5).clamp(0.0, (grid.cols - 1) as f64);
    let v = (y / h - 0.5).clamp(0.0, (grid.rows - 1) as f64);
    let (c0, r0) = (u.floor() as usize, v.floor() as usize);
    let (c1, r1) = ((c0 + 1).min(grid.cols - 1), (r0 + 1).min(grid.rows - 1));
    let (tu, tv) = (u - c0 as f64, v - r0 as f64);
    let mut dir = [0.0f64; 2];
    for (r, c, w) in [
        (r0, c0, (1.0 - tu) * (1.0 - tv)),
        (r0, c1, tu * (1.0 - tv)),
        (r1, c1, tu * tv),
        (r1, c0, (1.0 - tu) * tv),
    ] {
        if let Some(d) = grad.direction(r, c) {
            dir[0] += w * d[0] as f64;
            dir[1] += w * d[1] as f64;
        }
    }
    let norm = dir[0].hypot(dir[1]);
    // Opposite directions can cancel (on a ridge between two exits): keep the cell's own.
    let [dx, dy] = if norm > 1e-6 {
        [dir[0] / norm, dir[1] / norm]
    } else {
        [own[0] as f64, own[1] as f64]
    };
    let face_x = if dx >= 0.0 { Dir::E } else { Dir::W };
    let face_y = if dy >= 0.0 { Dir::N } else { Dir::S };
    let f =
        dx * dx * speed[[cr, cc, face_x.index()]] as f64 + dy * dy * speed[[cr, cc, face_y.index()]] as f64;
    [(f * dx) as f32, (f * dy) as f32]
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array3;

    #[test]
    fn linear_potential_has_its_slope_as_gradient() {
        // phi = 2 x (x at cell centres), goal column 0 at phi = 0.
        let (rows, cols, h) = (4, 6, 0.5);
        let phi = Array2::from_shape_fn((rows, cols), |(_, c)| 2.0 * c as f64 * h);
        let cost = Array3::from_elem((rows, cols, 4), 2.0f32);
        let g = gradient(phi.view(), cost.view(), h);
        for r in 0..rows {
            assert_eq!(g.gx[[r, 0]], 0.0, "source cells have no gradient");
            for c in 1..cols {
                assert!((g.gx[[r, c]] - 2.0).abs() < 1e-6);
                assert_eq!(g.gy[[r, c]], 0.0);
                assert_eq!(g.direction(r, c), Some([-1.0, 0.0]));
            }
        }
    }

    /// The first implementation, through `Grid::neighbor` and indexed views: the fast one must
    /// give its values bit for bit.
    fn reference(phi: ArrayView2<f64>, cost: ArrayView3<f32>, h: f64) -> Gradient {
        let (rows, cols) = phi.dim();
        let grid = Grid::new(cols, rows, h);
        let axis = |r: usize, c: usize, plus: Dir| -> f64 {
            let here = phi[[r, c]];
            let mut best: Option<(f64, f64)> = None;
            for d in [plus, plus.opposite()] {
                let Some((nr, nc)) = grid.neighbor(r, c, d) else {
                    continue;
                };
                let pm = phi[[nr, nc]];
                let cm = cost[[r, c, d.index()]] as f64;
                if !(pm.is_finite() && pm < here && cm.is_finite() && cm > 0.0) {
                    continue;
                }
                let key = pm + h * cm;
                let deriv = if d == plus {
                    (pm - here) / h
                } else {
                    (here - pm) / h
                };
                if best.is_none_or(|(k, _)| key < k) {
                    best = Some((key, deriv));
                }
            }
            best.map_or(0.0, |(_, g)| g)
        };
        let mut g = Gradient {
            gx: Array2::zeros((rows, cols)),
            gy: Array2::zeros((rows, cols)),
        };
        for r in 0..rows {
            for c in 0..cols {
                let here = phi[[r, c]];
                if here.is_finite() && here > 0.0 {
                    g.gx[[r, c]] = axis(r, c, Dir::E) as f32;
                    g.gy[[r, c]] = axis(r, c, Dir::N) as f32;
                }
            }
        }
        g
    }

    #[test]
    fn matches_the_reference_implementation_bit_for_bit() {
        let (rows, cols, h) = (29, 41, 0.4);
        let scramble = |i: usize| ((i.wrapping_mul(2654435761) % 1_000_003) as f64) / 1_000_003.0;
        // Rough potentials with ties, zeros, infinities and NaN; costs with walls.
        let phi = Array2::from_shape_fn((rows, cols), |(r, c)| {
            let i = r * cols + c;
            match i % 17 {
                0 => f64::INFINITY,
                5 => 0.0,
                9 => f64::NAN,
                13 => 3.0,
                _ => (r + c) as f64 * 0.3 + scramble(i),
            }
        });
        let cost = Array3::from_shape_fn((rows, cols, 4), |(r, c, d)| {
            let i = (r * cols + c) * 4 + d;
            match i % 29 {
                0 => f32::INFINITY,
                3 => 0.0,
                7 => f32::NAN,
                _ => 0.5 + 2.0 * scramble(i) as f32,
            }
        });
        let fast = gradient(phi.view(), cost.view(), h);
        let slow = reference(phi.view(), cost.view(), h);
        let nonzero = fast.gx.iter().filter(|v| **v != 0.0).count();
        assert!(
            nonzero > rows * cols / 3,
            "the field exercises the upwind choice: {nonzero}"
        );
        for (a, b) in fast
            .gx
            .iter()
            .chain(fast.gy.iter())
            .zip(slow.gx.iter().chain(slow.gy.iter()))
        {
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }

    #[test]
    fn walls_and_infinite_neighbours_are_not_upwind() {
        let phi = ndarray::array![[0.0, 1.0, f64::INFINITY], [1.0, 2.0, 3.0]];
        let mut cost = Array3::from_elem((2, 3, 4), 1.0f32);
        // The face from (1,1) to (1,0) is a wall: only the south neighbour is upwind.
        cost[[1, 1, Dir::W.index()]] = f32::INFINITY;
        let g = gradient(phi.view(), cost.view(), 1.0);
        assert_eq!((g.gx[[1, 1]], g.gy[[1, 1]]), (0.0, 1.0));
        assert_eq!((g.gx[[0, 2]], g.gy[[0, 2]]), (0.0, 0.0), "unreachable cell");
    }
}
