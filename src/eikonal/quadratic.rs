//! The local update of fast marching (SPEC §4): the value of one cell from its upwind
//! neighbours on the two axes. Pure arithmetic, shared by every solver that needs the same
//! answer (the GPU fast iterative method has a twin of it).

/// One axis's upwind contribution: the neighbour's value `m` (already accepted) and the cost `s`
/// of the step from the cell to it (`cell_size * C(cell -> M)`), or in second order the effective
/// pair `m = (4 phi_1 - phi_2) / 3`, `s = 2/3 * step`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Upwind {
    /// Upwind value (finite).
    pub m: f64,
    /// Step cost (finite, > 0).
    pub s: f64,
}

/// Solves `(phi - mx)^2 / sx^2 + (phi - my)^2 / sy^2 = 1` for its larger root when that root is
/// at least `max(mx, my)`; otherwise (the upwind values are too far apart for both axes to be
/// upwind) returns the one-axis value `min(mx + sx, my + sy)`.
///
/// The root is written as `(sy^2 mx + sx^2 my + sx sy sqrt(sx^2 + sy^2 - d^2)) / (sx^2 + sy^2)`
/// with `d = |mx - my|`, which needs one square root and one division and is valid exactly when
/// `d < s` of the lower axis; with equal steps `s` (an isotropic cost) it is
/// `(mx + my + sqrt(2 s^2 - d^2)) / 2`, with no division. Any non-finite intermediate (an overflow with absurd costs) falls
/// back to the one-axis value, so the result is never NaN.
#[inline(always)]
pub fn solve_two_axes(x: Upwind, y: Upwind) -> f64 {
    let one_axis = (x.m + x.s).min(y.m + y.s);
    let (lo, hi) = if x.m <= y.m { (x, y) } else { (y, x) };
    let d = hi.m - lo.m;
    if d >= lo.s {
        return one_axis;
    }
    if x.s == y.s {
        // Equal steps (an isotropic cost, both axes of the same order): the same root with
        // the common factor taken out, no division.
        let root = 0.5 * (x.m + y.m + (2.0 * x.s * x.s - d * d).sqrt());
        return if root <= one_axis {
            root.max(hi.m)
        } else {
            one_axis
        };
    }
    let sx2 = x.s * x.s;
    let sy2 = y.s * y.s;
    let sum = sx2 + sy2;
    let root = (sy2 * x.m + sx2 * y.m + x.s * y.s * (sum - d * d).sqrt()) / sum;
    // `root <= one_axis` also rejects NaN.
    if root <= one_axis {
        root.max(hi.m)
    } else {
        one_axis
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn residual(phi: f64, x: Upwind, y: Upwind) -> f64 {
        ((phi - x.m) / x.s).powi(2) + ((phi - y.m) / y.s).powi(2) - 1.0
    }

    #[test]
    fn equal_neighbours_give_the_diagonal_value() {
        let u = Upwind { m: 1.0, s: 1.0 };
        let phi = solve_two_axes(u, u);
        assert!((phi - (1.0 + 1.0 / 2f64.sqrt())).abs() < 1e-14, "{phi}");
    }

    #[test]
    fn root_satisfies_the_quadratic_and_is_upwind() {
        for &(mx, sx, my, sy) in &[(0.0, 1.0, 0.5, 2.0), (3.0, 0.2, 3.1, 0.5), (1.0, 0.5, 1.2, 0.3)] {
            let (x, y) = (Upwind { m: mx, s: sx }, Upwind { m: my, s: sy });
            let phi = solve_two_axes(x, y);
            assert!(residual(phi, x, y).abs() < 1e-12, "{mx} {sx} {my} {sy}: {phi}");
            assert!(phi >= mx.max(my));
            assert!(phi <= (mx + sx).min(my + sy));
        }
    }

    #[test]
    fn equal_steps_give_the_general_root() {
        for i in 0..1000u64 {
            let f = |k: u64| ((i * 7919 + k * 104_729) % 10_007) as f64 / 10_007.0;
            let s = 0.01 + 3.0 * f(1);
            let mx = 100.0 * f(2);
            let my = mx + 0.999 * s * (2.0 * f(3) - 1.0);
            let (x, y) = (Upwind { m: mx, s }, Upwind { m: my, s });
            let phi = solve_two_axes(x, y);
            let d = (mx - my).abs();
            let s2 = s * s;
            let general = (s2 * mx + s2 * my + s2 * (2.0 * s2 - d * d).sqrt()) / (2.0 * s2);
            assert!(
                (phi - general).abs() <= 1e-13 * general.max(1.0),
                "{mx} {my} {s}: {phi} vs {general}"
            );
            assert!(residual(phi, x, y).abs() < 1e-9, "{mx} {my} {s}: {phi}");
        }
    }

    #[test]
    fn far_apart_neighbours_fall_back_to_one_axis() {
        let x = Upwind { m: 0.0, s: 1.0 };
        let y = Upwind { m: 5.0, s: 1.0 };
        assert_eq!(solve_two_axes(x, y), 1.0);
        assert_eq!(solve_two_axes(y, x), 1.0);
    }

    #[test]
    fn overflowing_costs_never_give_nan() {
        let x = Upwind { m: 0.0, s: 1e200 };
        let y = Upwind { m: 1e199, s: 1e200 };
        let phi = solve_two_axes(x, y);
        assert!(!phi.is_nan() && phi >= 1e199, "{phi}");
    }
}
