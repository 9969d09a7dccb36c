//! scikit-fmm's march written plainly, for the tests: the grid as it is, a bounds check on
//! every neighbour, the narrow band found by scanning the grid for its smallest value, every
//! value in a cell of its own. The march of this module is held to its values bit for bit.

use super::{AA, NONE, ONE_THIRD};
use crate::eikonal::Order;
use ndarray::Array2;

#[derive(Clone, Copy, PartialEq)]
enum State {
    Far,
    Narrow,
    Frozen,
    Masked,
}

struct Plain<'a> {
    phi: &'a Array2<f64>,
    speed: Option<&'a Array2<f64>>,
    spacing: [f64; 2],
    second: bool,
    state: Array2<State>,
    value: Array2<f64>,
}

const STEPS: [(usize, isize, isize); 4] = [(0, -1, 0), (0, 1, 0), (1, 0, -1), (1, 0, 1)];

/// The values (`+inf` where not reached), or `None` where phi has no zero contour.
pub fn march(
    phi: &Array2<f64>,
    mask: Option<&Array2<bool>>,
    speed: Option<&Array2<f64>>,
    spacing: [f64; 2],
    order: Order,
) -> Option<Array2<f64>> {
    let dim = phi.dim();
    let masked =
        |at: (usize, usize)| mask.is_some_and(|m| m[at]) || speed.is_some_and(|s| s[at] < f64::EPSILON);
    let mut p = Plain {
        phi,
        speed,
        spacing,
        second: order == Order::Second,
        state: Array2::from_shape_fn(dim, |at| if masked(at) { State::Masked } else { State::Far }),
        value: Array2::zeros(dim),
    };
    let mut frozen = Vec::new();
    for ((r, c), &v) in phi.indexed_iter() {
        if masked((r, c)) {
            continue;
        }
        let start = if v == 0.0 {
            Some(0.0)
        } else {
            let mut nearest = [0.0f64; 2];
            let (mut borders, mut underflows) = (false, false);
            for (axis, dr, dc) in STEPS {
                if let Some(n) = p.at((r, c), dr, dc)
                    && v * phi[n] < 0.0
                    && !masked(n)
                {
                    borders = true;
                    let d = spacing[axis] * v / (v - phi[n]);
                    underflows |= d == 0.0;
                    if nearest[axis] == 0.0 || nearest[axis] > d {
                        nearest[axis] = d;
                    }
                }
            }
            borders.then(|| {
                let dsum: f64 = nearest.iter().filter(|d| **d > 0.0).map(|d| 1.0 / d / d).sum();
                // A crossing whose distance underflows is on the cell (the march's one
                // departure from scikit-fmm, which starts such a cell at +inf).
                let d = if underflows { 0.0 } else { (1.0 / dsum).sqrt() };
                let d = if v < 0.0 { -d } else { d };
                speed.map_or(d, |s| (d / s[(r, c)]).abs())
            })
        };
        if let Some(start) = start {
            p.value[(r, c)] = start;
            p.state[(r, c)] = State::Frozen;
            frozen.push((r, c));
        }
    }
    if frozen.is_empty() {
        return None;
    }
    for &f in &frozen {
        for (dr, dc) in [(-1, 0), (0, -1), (0, 1), (1, 0)] {
            if let Some(n) = p.at(f, dr, dc)
                && p.state[n] == State::Far
            {
                p.state[n] = State::Narrow;
                p.value[n] = p.update(n);
            }
        }
    }
    loop {
        let narrow = p
            .state
            .indexed_iter()
            .filter(|(_, s)| **s == State::Narrow)
            .map(|(at, _)| at);
        let Some(key) = narrow.clone().map(|at| p.value[at].abs()).min_by(f64::total_cmp) else {
            break;
        };
        let group: Vec<_> = narrow.filter(|at| p.value[*at].abs() == key).collect();
        for &at in &group {
            p.state[at] = State::Frozen;
        }
        for &i in &group {
            for (_, dr, dc) in STEPS {
                let Some(j) = p.at(i, dr, dc) else {
                    continue;
                };
                let target = match p.state[j] {
                    State::Far | State::Narrow => Some(j),
                    State::Frozen if p.second => p.at(j, dr, dc).filter(|k| p.state[*k] == State::Narrow),
                    _ => None,
                };
                if let Some(t) = target {
                    let d = p.update(t);
                    if d != 0.0 {
                        p.value[t] = d;
                        p.state[t] = State::Narrow;
                    }
                }
            }
        }
    }
    Some(Array2::from_shape_fn(dim, |at| {
        if p.state[at] == State::Frozen {
            p.value[at]
        } else {
            f64::INFINITY
        }
    }))
}

impl Plain<'_> {
    fn at(&self, (r, c): (usize, usize), dr: isize, dc: isize) -> Option<(usize, usize)> {
        let (r, c) = (r.checked_add_signed(dr)?, c.checked_add_signed(dc)?);
        (r < self.phi.nrows() && c < self.phi.ncols()).then_some((r, c))
    }

    fn frozen(&self, at: Option<(usize, usize)>) -> Option<f64> {
        at.filter(|n| self.state[*n] == State::Frozen)
            .map(|n| self.value[n])
    }

    fn update(&self, i: (usize, usize)) -> f64 {
        let (a, b, c) = self.coefficients(i, self.second, [true, true]);
        if let Some(v) = self.root(i, a, b, c) {
            return v;
        }
        if !self.second {
            return -b / (2.0 * a);
        }
        if self.speed.is_none() {
            let (a, b, c) = self.coefficients(i, false, [true, true]);
            return self.root(i, a, b, c).unwrap_or(-b / (2.0 * a));
        }
        let only = |axes| {
            let (a, b, c) = self.coefficients(i, true, axes);
            self.root(i, a, b, c).unwrap_or(f64::INFINITY)
        };
        let (rows, cols) = (only([true, false]), only([false, true]));
        if cols < rows { cols } else { rows }
    }

    fn coefficients(&self, i: (usize, usize), second: bool, use_axis: [bool; 2]) -> (f64, f64, f64) {
        let (mut a, mut b, mut cc) = (0.0, 0.0, 0.0);
        for axis in 0..2 {
            if !use_axis[axis] {
                continue;
            }
            let k = 1.0 / self.spacing[axis] / self.spacing[axis];
            let (mut v1, mut v2) = (NONE, NONE);
            for side in [-1, 1] {
                let (dr, dc) = if axis == 0 { (side, 0) } else { (0, side) };
                let near_at = self.at(i, dr, dc);
                let Some(near) = self.frozen(near_at).filter(|v| v.abs() < v1.abs()) else {
                    continue;
                };
                v1 = near;
                if !second {
                    continue;
                }
                let far_at = near_at.and_then(|n| self.at(n, dr, dc));
                if let Some(far) = self.frozen(far_at)
                    && ((far <= v1 && v1 >= 0.0) || (far >= v1 && v1 <= 0.0))
                {
                    let (pf, pn) = (self.phi[far_at.unwrap()], self.phi[near_at.unwrap()]);
                    v2 = if self.speed.is_some() && (pf * pn < 0.0 || pf * self.phi[i] < 0.0) {
                        -far
                    } else {
                        far
                    };
                }
            }
            if v2 < NONE {
                let tp = ONE_THIRD * (4.0 * v1 - v2);
                a += k * AA;
                b -= k * 2.0 * AA * tp;
                cc += k * AA * (tp * tp);
            } else if v1 < NONE {
                a += k;
                b -= k * 2.0 * v1;
                cc += k * (v1 * v1);
            }
        }
        (a, b, cc)
    }

    fn root(&self, i: (usize, usize), a: f64, b: f64, c: f64) -> Option<f64> {
        let rhs = self.speed.map_or(1.0, |s| 1.0 / (s[i] * s[i]));
        let c = c - rhs;
        let det = b * b - 4.0 * a * c;
        if det < 0.0 {
            return None;
        }
        Some(if self.speed.is_some() || self.phi[i] > f64::EPSILON {
            (-b + det.sqrt()) / 2.0 / a
        } else {
            (-b - det.sqrt()) / 2.0 / a
        })
    }
}
