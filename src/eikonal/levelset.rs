//! Signed distance and travel time from the zero contour of a level-set function, with
//! scikit-fmm's meaning (`skfmm.distance`, `skfmm.travel_time`), on 2-D grids whose two axes may
//! have different spacings.
//!
//! The front is the zero contour of `phi`, placed between cells by linear interpolation: a cell
//! where `phi` is exactly `0` starts at `0`; a cell whose `phi` changes sign towards a neighbour
//! along an axis is `d_axis = h_axis * phi / (phi - phi_neighbour)` from the contour on that axis
//! (the nearer side if both), and starts at `1 / sqrt(sum_axis 1 / d_axis^2)`, signed like its
//! `phi` for the distance and divided by its speed for the travel time. These cells are frozen;
//! the rest are marched from them in increasing order of `|value|`, with scikit-fmm's updates:
//! the first-order upwind quadratic over the nearest frozen neighbour of each axis, and in second
//! order the one-sided `(3 u - 4 u1 + u2) / 2` stencil where the cell two steps away is frozen and
//! not nearer the contour than `u1` (with scikit-fmm's fallbacks where the quadratic has no real
//! root). Cells whose values are equal are frozen together, so the result does not depend on the
//! order in which a heap hands out ties: it is scikit-fmm's, up to rounding (the same arithmetic
//! in the same order gives the same bits on machines without fused multiply-add).
//!
//! Masked cells (and, for the travel time, cells whose speed is below `f64::EPSILON`) take no
//! part: the front neither starts at nor crosses them, and they, like every cell the march does
//! not reach, come back as `+inf` ([`LevelSet::reached`] is `false` there).

use crate::eikonal::Order;
use crate::error::{Error, OPTIONS, Result, num};
use ndarray::{Array2, ArrayView2};

const FAR: u8 = 0;
const NARROW: u8 = 1;
const FROZEN: u8 = 2;
const MASK: u8 = 3;
/// scikit-fmm's "no value" marker inside the updates.
const NONE: f64 = f64::MAX;
/// `9 / 4`: the second-order stencil's squared coefficient `(3 / 2)^2`.
const AA: f64 = 9.0 / 4.0;
const ONE_THIRD: f64 = 1.0 / 3.0;

/// What a march computes.
#[derive(Clone, Copy, Debug)]
enum Mode<'a> {
    /// Signed distance (`skfmm.distance`).
    Distance,
    /// Travel time at these speeds (`skfmm.travel_time`).
    TravelTime(&'a [f64]),
}

/// The result of [`distance`] or [`travel_time`].
#[derive(Clone, Debug)]
pub struct LevelSet {
    /// The distance (signed like `phi`) or travel time (never negative) at each cell centre;
    /// `+inf` where the march did not reach (masked cells, cells cut off by them, zero speeds).
    pub values: Array2<f64>,
    /// Number of cells left at `+inf`.
    pub unreached: usize,
}

impl LevelSet {
    /// `true` where [`LevelSet::values`] holds a value (scikit-fmm's unmasked cells).
    pub fn reached(&self) -> Array2<bool> {
        self.values.mapv(|v| v.is_finite())
    }
}

/// The signed distance from the zero contour of `phi` (see the [module documentation](self)):
/// `spacing` is the cell length along axis 0 (rows) and axis 1 (columns); `mask`, where `true`,
/// marks cells that take no part (a numpy masked array's mask).
///
/// ```
/// use crowdfield::eikonal::{levelset, Order};
/// use ndarray::Array2;
/// // A vertical line x = 2.5 between columns 2 and 3; the columns are 0.5 apart.
/// let phi = Array2::from_shape_fn((4, 6), |(_, c)| c as f64 - 2.5);
/// let d = levelset::distance(phi.view(), None, [1.0, 0.5], Order::Second).unwrap();
/// assert!((d.values[(1, 5)] - 1.25).abs() < 1e-12);
/// assert!((d.values[(1, 0)] + 1.25).abs() < 1e-12);
/// ```
///
/// # Errors
/// If `phi` has a NaN or infinite value, `mask`'s shape is not `phi`'s, a spacing is not finite
/// and positive, or `phi` has no zero contour outside the mask.
pub fn distance(
    phi: ArrayView2<f64>,
    mask: Option<ArrayView2<bool>>,
    spacing: [f64; 2],
    order: Order,
) -> Result<LevelSet> {
    check(phi, mask, spacing)?;
    march(phi, mask, spacing, order, Mode::Distance)
}

/// The travel time from the zero contour of `phi` at the given `speed` (the same shape as
/// `phi`), with the arguments of [`distance`]. Cells whose speed is below `f64::EPSILON` are
/// obstacles, as in scikit-fmm.
///
/// ```
/// use crowdfield::eikonal::{levelset, Order};
/// use ndarray::Array2;
/// let mut phi = Array2::from_elem((5, 9), 1.0);
/// phi[(2, 0)] = 0.0; // a point source
/// let speed = Array2::from_elem((5, 9), 2.0);
/// let t = levelset::travel_time(phi.view(), speed.view(), None, [1.0, 1.0], Order::First).unwrap();
/// assert_eq!(t.values[(2, 0)], 0.0);
/// assert!((t.values[(2, 8)] - 4.0).abs() < 1e-12); // 8 cells at 2 per second
/// ```
///
/// # Errors
/// As [`distance`], and if `speed`'s shape is not `phi`'s or a speed is NaN or infinite.
pub fn travel_time(
    phi: ArrayView2<f64>,
    speed: ArrayView2<f64>,
    mask: Option<ArrayView2<bool>>,
    spacing: [f64; 2],
    order: Order,
) -> Result<LevelSet> {
    check(phi, mask, spacing)?;
    if speed.dim() != phi.dim() {
        return Err(Error::invalid(
            OPTIONS,
            "speed",
            format!("shape {:?}: expected phi's shape {:?}", speed.dim(), phi.dim()),
        ));
    }
    if let Some((at, v)) = speed.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(Error::invalid(
            OPTIONS,
            "speed",
            format!("{} at {at:?}: expected finite speeds", num(*v)),
        ));
    }
    let speed = speed.as_standard_layout();
    let speed = speed.as_slice().expect("standard layout");
    march(phi, mask, spacing, order, Mode::TravelTime(speed))
}

/// The checks both entry points share.
fn check(phi: ArrayView2<f64>, mask: Option<ArrayView2<bool>>, spacing: [f64; 2]) -> Result<()> {
    if let Some((at, v)) = phi.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(Error::invalid(
            OPTIONS,
            "phi",
            format!("{} at {at:?}: expected finite values", num(*v)),
        ));
    }
    if let Some(mask) = mask
        && mask.dim() != phi.dim()
    {
        return Err(Error::invalid(
            OPTIONS,
            "mask",
            format!("shape {:?}: expected phi's shape {:?}", mask.dim(), phi.dim()),
        ));
    }
    for (axis, h) in spacing.iter().enumerate() {
        if !(h.is_finite() && *h > 0.0) {
            return Err(Error::invalid(
                OPTIONS,
                "dx",
                format!("{} along axis {axis}: expected a finite length above 0", num(*h)),
            ));
        }
    }
    Ok(())
}

/// The state of one march.
struct Marcher<'a> {
    rows: usize,
    cols: usize,
    phi: Vec<f64>,
    flag: Vec<u8>,
    value: Vec<f64>,
    /// `1 / h^2` per axis.
    idx2: [f64; 2],
    second: bool,
    mode: Mode<'a>,
    heap: Heap,
}

/// The neighbour of cell `i` at `(r, c)`, `step` cells along `axis`, if it is on the grid.
#[inline(always)]
fn neighbour(rows: usize, cols: usize, i: usize, r: usize, c: usize, axis: usize, step: isize) -> Option<usize> {
    if axis == 0 {
        let n = r as isize + step;
        (n >= 0 && (n as usize) < rows).then(|| (i as isize + step * cols as isize) as usize)
    } else {
        let n = c as isize + step;
        (n >= 0 && (n as usize) < cols).then(|| (i as isize + step) as usize)
    }
}

fn march(
    phi: ArrayView2<f64>,
    mask: Option<ArrayView2<bool>>,
    spacing: [f64; 2],
    order: Order,
    mode: Mode,
) -> Result<LevelSet> {
    let (rows, cols) = phi.dim();
    let n = rows * cols;
    let mut flag = vec![FAR; n];
    if let Some(mask) = mask {
        for (f, &m) in flag.iter_mut().zip(mask.iter()) {
            if m {
                *f = MASK;
            }
        }
    }
    if let Mode::TravelTime(speed) = mode {
        for (f, &s) in flag.iter_mut().zip(speed) {
            // Very small speeds would overflow the quadratic: scikit-fmm makes them obstacles.
            if s < f64::EPSILON {
                *f = MASK;
            }
        }
    }
    let mut m = Marcher {
        rows,
        cols,
        phi: phi.iter().copied().collect(),
        flag,
        value: vec![0.0; n],
        idx2: [1.0 / spacing[0] / spacing[0], 1.0 / spacing[1] / spacing[1]],
        second: order == Order::Second,
        mode,
        heap: Heap::new(n),
    };
    m.freeze_contour(spacing);
    if !m.flag.contains(&FROZEN) {
        return Err(Error::invalid(
            OPTIONS,
            "phi",
            "has no zero contour (no zero level set) outside the mask: expected a value of 0 or a change of sign between neighbours",
        ));
    }
    m.start_narrow_band();
    m.run();
    let mut unreached = 0;
    for (v, f) in m.value.iter_mut().zip(&m.flag) {
        if *f != FROZEN {
            *v = f64::INFINITY;
            unreached += 1;
        }
    }
    let values = Array2::from_shape_vec((rows, cols), m.value).expect("rows * cols values");
    Ok(LevelSet { values, unreached })
}

impl Marcher<'_> {
    /// Freezes the cells on the zero contour and beside it, at their interpolated distance
    /// (scikit-fmm's `initializeFrozen`).
    fn freeze_contour(&mut self, spacing: [f64; 2]) {
        let (rows, cols) = (self.rows, self.cols);
        for i in 0..rows * cols {
            if self.flag[i] != MASK && self.phi[i] == 0.0 {
                self.flag[i] = FROZEN;
                self.value[i] = 0.0;
            }
        }
        for i in 0..rows * cols {
            if self.flag[i] != FAR {
                continue;
            }
            let (r, c) = (i / cols, i % cols);
            let p = self.phi[i];
            let mut nearest = [0.0f64; 2];
            let mut borders = false;
            for axis in 0..2 {
                for step in [-1, 1] {
                    let Some(j) = neighbour(rows, cols, i, r, c, axis, step) else { continue };
                    if self.flag[j] == MASK || p * self.phi[j] >= 0.0 {
                        continue;
                    }
                    borders = true;
                    let d = spacing[axis] * p / (p - self.phi[j]);
                    if nearest[axis] == 0.0 || nearest[axis] > d {
                        nearest[axis] = d;
                    }
                }
            }
            if borders {
                let mut dsum = 0.0;
                for d in nearest {
                    if d > 0.0 {
                        dsum += 1.0 / d / d;
                    }
                }
                let d = (1.0 / dsum).sqrt();
                self.value[i] = if p < 0.0 { -d } else { d };
                self.flag[i] = FROZEN;
            }
        }
        if let Mode::TravelTime(speed) = self.mode {
            for i in 0..rows * cols {
                if self.flag[i] == FROZEN {
                    self.value[i] = (self.value[i] / speed[i]).abs();
                }
            }
        }
    }

    /// Gives every far cell beside a frozen one its first value (scikit-fmm's
    /// `initalizeNarrow`).
    fn start_narrow_band(&mut self) {
        let (rows, cols) = (self.rows, self.cols);
        for i in 0..rows * cols {
            if self.flag[i] != FAR {
                continue;
            }
            let (r, c) = (i / cols, i % cols);
            let beside_frozen = (0..2).any(|axis| {
                [-1, 1].into_iter().any(|step| {
                    neighbour(rows, cols, i, r, c, axis, step).is_some_and(|j| self.flag[j] == FROZEN)
                })
            });
            if beside_frozen {
                self.flag[i] = NARROW;
                let d = self.update(i);
                self.value[i] = d;
                self.heap.push(i as u32, d.abs());
            }
        }
    }

    /// The fast-marching loop (scikit-fmm's `solve`, with no narrow-band limit).
    fn run(&mut self) {
        let (rows, cols) = (self.rows, self.cols);
        let mut to_freeze: Vec<usize> = Vec::new();
        while let Some((first, key)) = self.heap.pop() {
            to_freeze.clear();
            self.flag[first as usize] = FROZEN;
            to_freeze.push(first as usize);
            while self.heap.peek() == Some(key) {
                let (i, _) = self.heap.pop().expect("peeked");
                self.flag[i as usize] = FROZEN;
                to_freeze.push(i as usize);
            }
            for &i in &to_freeze {
                let (r, c) = (i / cols, i % cols);
                for axis in 0..2 {
                    for step in [-1isize, 1] {
                        let near = neighbour(rows, cols, i, r, c, axis, step);
                        if let Some(j) = near {
                            match self.flag[j] {
                                NARROW => {
                                    let d = self.update(j);
                                    if d != 0.0 {
                                        self.heap.set(j as u32, d.abs());
                                        self.value[j] = d;
                                    }
                                }
                                FAR => {
                                    let d = self.update(j);
                                    if d != 0.0 {
                                        self.value[j] = d;
                                        self.flag[j] = NARROW;
                                        self.heap.push(j as u32, d.abs());
                                    }
                                }
                                _ => {}
                            }
                        }
                        // The second-order stencil of the cell two steps away now reaches i.
                        if self.second
                            && near.is_some_and(|j| self.flag[j] == FROZEN)
                            && let Some(k) = neighbour(rows, cols, i, r, c, axis, 2 * step)
                            && self.flag[k] == NARROW
                        {
                            let d = self.update_second(k);
                            if d != 0.0 {
                                self.heap.set(k as u32, d.abs());
                                self.value[k] = d;
                            }
                        }
                    }
                }
            }
        }
    }

    #[inline]
    fn update(&self, i: usize) -> f64 {
        if self.second { self.update_second(i) } else { self.update_first(i) }
    }

    /// The value of frozen neighbour `j` of a cell, if `j` is one.
    #[inline(always)]
    fn frozen(&self, j: Option<usize>) -> Option<f64> {
        j.filter(|&j| self.flag[j] == FROZEN).map(|j| self.value[j])
    }

    /// scikit-fmm's `updatePointOrderOne`: the upwind quadratic over each axis's frozen
    /// neighbour nearer the contour; where it has no real root, its vertex `-b / 2a`.
    fn update_first(&self, i: usize) -> f64 {
        let (rows, cols) = (self.rows, self.cols);
        let (r, c) = (i / cols, i % cols);
        let (mut a, mut b, mut cc) = (0.0, 0.0, 0.0);
        for axis in 0..2 {
            let mut v = NONE;
            for step in [-1, 1] {
                if let Some(u) = self.frozen(neighbour(rows, cols, i, r, c, axis, step))
                    && u.abs() < v.abs()
                {
                    v = u;
                }
            }
            if v < NONE {
                let k = self.idx2[axis];
                a += k;
                b -= k * 2.0 * v;
                cc += k * (v * v);
            }
        }
        self.root(i, a, b, cc).unwrap_or(-b / (2.0 * a))
    }

    /// scikit-fmm's `updatePointOrderTwo` (all axes; see [`Marcher::second_order_axes`]), with
    /// its fallbacks where the quadratic has no real root: the first-order update for the
    /// distance, the smaller of the one-axis solutions for the travel time.
    fn update_second(&self, i: usize) -> f64 {
        if let Some(v) = self.second_order_axes(i, [true, true]) {
            return v;
        }
        match self.mode {
            Mode::Distance => self.update_first(i),
            Mode::TravelTime(_) => {
                let only_rows = self.second_order_axes(i, [true, false]).unwrap_or(f64::INFINITY);
                let only_cols = self.second_order_axes(i, [false, true]).unwrap_or(f64::INFINITY);
                // std::min_element: the first unless the second is strictly smaller.
                if only_cols < only_rows { only_cols } else { only_rows }
            }
        }
    }

    /// The second-order quadratic over the axes in `use_axis`, or `None` where it has no real
    /// root.
    fn second_order_axes(&self, i: usize, use_axis: [bool; 2]) -> Option<f64> {
        let (rows, cols) = (self.rows, self.cols);
        let (r, c) = (i / cols, i % cols);
        let (mut a, mut b, mut cc) = (0.0, 0.0, 0.0);
        for axis in 0..2 {
            if !use_axis[axis] {
                continue;
            }
            let (mut v1, mut v2) = (NONE, NONE);
            for step in [-1, 1] {
                let near = neighbour(rows, cols, i, r, c, axis, step);
                let Some(u) = self.frozen(near) else { continue };
                if u.abs() >= v1.abs() {
                    continue;
                }
                v1 = u;
                // As scikit-fmm: v2 keeps a value found on the other side if this side has none.
                let far = neighbour(rows, cols, i, r, c, axis, 2 * step);
                if let Some(k) = far.filter(|&k| self.flag[k] == FROZEN) {
                    let u2 = self.value[k];
                    if (u2 <= v1 && v1 >= 0.0) || (u2 >= v1 && v1 <= 0.0) {
                        v2 = u2;
                        if let Mode::TravelTime(_) = self.mode {
                            let j = near.expect("frozen neighbour");
                            if self.phi[k] * self.phi[j] < 0.0 || self.phi[k] * self.phi[i] < 0.0 {
                                v2 = -v2;
                            }
                        }
                    }
                }
            }
            let k = self.idx2[axis];
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
        self.root(i, a, b, cc)
    }

    /// The root of `a u^2 + b u + c = rhs` scikit-fmm takes (`solveQuadratic`), `rhs` being `1`
    /// for the distance and `1 / speed^2` for the travel time; `None` for a negative
    /// discriminant.
    #[inline]
    fn root(&self, i: usize, a: f64, b: f64, c: f64) -> Option<f64> {
        match self.mode {
            Mode::Distance => {
                let c = c - 1.0;
                let det = b * b - 4.0 * a * c;
                (det >= 0.0).then(|| {
                    if self.phi[i] > f64::EPSILON {
                        (-b + det.sqrt()) / 2.0 / a
                    } else {
                        (-b - det.sqrt()) / 2.0 / a
                    }
                })
            }
            Mode::TravelTime(speed) => {
                let s = speed[i];
                let c = c - 1.0 / (s * s);
                let det = b * b - 4.0 * a * c;
                (det >= 0.0).then(|| (-b + det.sqrt()) / 2.0 / a)
            }
        }
    }
}

/// An indexed binary min-heap of cells keyed by `|value|`, whose keys may rise as well as fall
/// (scikit-fmm's second-order updates can raise a narrow-band value).
struct Heap {
    /// `(key, cell)` in heap order.
    items: Vec<(f64, u32)>,
    /// Each cell's position in `items`, or `u32::MAX`.
    pos: Vec<u32>,
}

impl Heap {
    fn new(cells: usize) -> Self {
        Heap { items: Vec::new(), pos: vec![u32::MAX; cells] }
    }

    fn peek(&self) -> Option<f64> {
        self.items.first().map(|e| e.0)
    }

    fn push(&mut self, cell: u32, key: f64) {
        let at = self.items.len();
        self.items.push((key, cell));
        self.pos[cell as usize] = at as u32;
        self.up(at);
    }

    fn set(&mut self, cell: u32, key: f64) {
        let at = self.pos[cell as usize] as usize;
        let old = self.items[at].0;
        self.items[at].0 = key;
        if key < old {
            self.up(at);
        } else {
            self.down(at);
        }
    }

    fn pop(&mut self) -> Option<(u32, f64)> {
        let top = *self.items.first()?;
        let last = self.items.pop().expect("non-empty");
        self.pos[top.1 as usize] = u32::MAX;
        if !self.items.is_empty() {
            self.items[0] = last;
            self.pos[last.1 as usize] = 0;
            self.down(0);
        }
        Some((top.1, top.0))
    }

    fn up(&mut self, mut at: usize) {
        let item = self.items[at];
        while at > 0 {
            let parent = (at - 1) / 2;
            if self.items[parent].0 <= item.0 {
                break;
            }
            self.items[at] = self.items[parent];
            self.pos[self.items[at].1 as usize] = at as u32;
            at = parent;
        }
        self.items[at] = item;
        self.pos[item.1 as usize] = at as u32;
    }

    fn down(&mut self, mut at: usize) {
        let item = self.items[at];
        let len = self.items.len();
        loop {
            let mut child = 2 * at + 1;
            if child >= len {
                break;
            }
            if child + 1 < len && self.items[child + 1].0 < self.items[child].0 {
                child += 1;
            }
            if self.items[child].0 >= item.0 {
                break;
            }
            self.items[at] = self.items[child];
            self.pos[self.items[at].1 as usize] = at as u32;
            at = child;
        }
        self.items[at] = item;
        self.pos[item.1 as usize] = at as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn max_err(a: &Array2<f64>, exact: impl Fn(usize, usize) -> f64, skip: impl Fn(usize, usize) -> bool) -> f64 {
        let mut worst: f64 = 0.0;
        for ((r, c), v) in a.indexed_iter() {
            if !skip(r, c) {
                worst = worst.max((v - exact(r, c)).abs());
            }
        }
        worst
    }

    #[test]
    fn a_straight_contour_gives_the_exact_signed_distance_on_unequal_spacing() {
        // phi = x - 3.3 on columns 0.4 apart, rows 1.7 apart: the distance is exact in both orders.
        let (hr, hc) = (1.7, 0.4);
        let phi = Array2::from_shape_fn((7, 20), |(_, c)| c as f64 * hc - 3.3);
        for order in [Order::First, Order::Second] {
            let d = distance(phi.view(), None, [hr, hc], order).unwrap();
            let err = max_err(&d.values, |_, c| c as f64 * hc - 3.3, |_, _| false);
            assert!(err < 1e-12, "{order}: {err}");
            assert_eq!(d.unreached, 0);
        }
    }

    #[test]
    fn a_circle_converges_to_its_distance_faster_in_second_order() {
        // phi = |x| - R, the exact signed distance; error measured away from the centre's kink.
        let err = |n: usize, order| {
            let h = 4.0 / n as f64;
            let at = |i: usize| i as f64 * h - 2.0;
            let exact = |r: usize, c: usize| (at(r).powi(2) + at(c).powi(2)).sqrt() - 1.0;
            let phi = Array2::from_shape_fn((n + 1, n + 1), |(r, c)| exact(r, c));
            let d = distance(phi.view(), None, [h, h], order).unwrap();
            max_err(&d.values, exact, |r, c| (at(r).powi(2) + at(c).powi(2)).sqrt() < 0.5)
        };
        let (e1a, e1b) = (err(40, Order::First), err(80, Order::First));
        let (e2a, e2b) = (err(40, Order::Second), err(80, Order::Second));
        assert!(e2b < e1b / 2.0, "second order {e2b} against first {e1b}");
        assert!(e1a / e1b > 1.5, "first order halves its error: {e1a} -> {e1b}");
        assert!(e2a / e2b > 2.5, "second order quarters its error: {e2a} -> {e2b}");
        assert!(e2b < 0.01, "{e2b}");
    }

    #[test]
    fn travel_time_from_a_point_at_constant_speed_approaches_distance_over_speed() {
        let (n, h, s) = (81, 0.25, 2.0);
        let mut phi = Array2::from_elem((n, n), 1.0);
        phi[(40, 40)] = 0.0;
        let speed = Array2::from_elem((n, n), s);
        let exact = |r: usize, c: usize| h * ((r as f64 - 40.0).powi(2) + (c as f64 - 40.0).powi(2)).sqrt() / s;
        let t1 = travel_time(phi.view(), speed.view(), None, [h, h], Order::First).unwrap();
        let t2 = travel_time(phi.view(), speed.view(), None, [h, h], Order::Second).unwrap();
        assert_eq!(t1.values[(40, 40)], 0.0);
        // Along the axes the front is exact; the diagonal error is first order at worst.
        assert!((t1.values[(40, 80)] - 5.0).abs() < 1e-12);
        let e1 = max_err(&t1.values, exact, |_, _| false);
        let e2 = max_err(&t2.values, exact, |_, _| false);
        assert!(e2 < e1, "second order {e2} against first {e1}");
        assert!(e1 < 0.2 * 10.0 / s && e1 > 0.0, "{e1}");
    }

    #[test]
    fn travel_time_along_an_axis_counts_each_axis_spacing() {
        let mut phi = Array2::from_elem((4, 6), 1.0);
        phi[(0, 0)] = 0.0;
        let speed = Array2::from_elem((4, 6), 0.5);
        let t = travel_time(phi.view(), speed.view(), None, [3.0, 0.25], Order::Second).unwrap();
        assert!((t.values[(0, 5)] - 5.0 * 0.25 / 0.5).abs() < 1e-12);
        assert!((t.values[(3, 0)] - 3.0 * 3.0 / 0.5).abs() < 1e-12);
    }

    #[test]
    fn masks_and_zero_speeds_block_the_front_and_stay_unreached() {
        // A wall across column 3 with no gap: the right side is cut off.
        let mut phi = Array2::from_elem((5, 7), 1.0);
        phi[(2, 0)] = 0.0;
        let mask = Array2::from_shape_fn((5, 7), |(_, c)| c == 3);
        let d = distance(phi.view(), Some(mask.view()), [1.0, 1.0], Order::Second).unwrap();
        assert_eq!(d.unreached, 5 * 4);
        assert!(d.values[(0, 4)].is_infinite() && d.values[(0, 2)].is_finite());
        let speed = Array2::from_shape_fn((5, 7), |(_, c)| if c == 3 { 0.0 } else { 1.0 });
        let t = travel_time(phi.view(), speed.view(), None, [1.0, 1.0], Order::First).unwrap();
        assert_eq!(t.unreached, 5 * 4);
        assert_eq!(t.reached(), d.reached());
    }

    #[test]
    fn bad_input_is_refused_with_the_argument_named() {
        let phi = Array2::from_elem((3, 3), 1.0);
        let e = distance(phi.view(), None, [1.0, 1.0], Order::First).unwrap_err();
        assert!(e.to_string().contains("no zero contour"), "{e}");
        let mut nan = phi.clone();
        nan[(1, 2)] = f64::NAN;
        let e = distance(nan.view(), None, [1.0, 1.0], Order::First).unwrap_err();
        assert_eq!(e.to_string(), "phi: NaN at (1, 2): expected finite values");
        let e = distance(phi.view(), None, [1.0, -2.0], Order::First).unwrap_err();
        assert!(e.to_string().starts_with("dx: -2.0 along axis 1"), "{e}");
        let speed = Array2::from_elem((3, 2), 1.0);
        let e = travel_time(phi.view(), speed.view(), None, [1.0, 1.0], Order::First).unwrap_err();
        assert!(e.to_string().starts_with("speed: shape (3, 2)"), "{e}");
    }
}
