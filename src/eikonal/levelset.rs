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

/// Cells of padding around the grid: the second-order stencil looks two cells away.
const PAD: usize = 2;

/// What the march knows of one cell, in one record: the cells an update reads lie in three
/// rows, and one cache line per cell is what a large grid's march waits on.
#[derive(Clone, Copy)]
#[repr(C)]
struct Cell {
    /// The distance or time (meaningful once narrow or frozen).
    value: f64,
    /// Right-hand side of the quadratic: `1` for the distance, `1 / speed^2` for the travel time.
    rhs: f64,
    /// The level-set function.
    phi: f64,
    /// The cell's position in the heap while it is narrow.
    pos: u32,
    /// `FAR`, `NARROW`, `FROZEN` or `MASK`.
    flag: u8,
}

/// The state of one march, on the grid padded by [`PAD`] masked cells on every side (so that
/// no neighbour needs a bounds check: a padding cell behaves as scikit-fmm's "no neighbour").
struct Marcher {
    /// Padded row length: `cols + 2 PAD`.
    stride: usize,
    cells: Vec<Cell>,
    /// `1 / h^2` per axis.
    idx2: [f64; 2],
    second: bool,
    distance: bool,
    heap: Heap,
}

fn march(
    phi: ArrayView2<f64>,
    mask: Option<ArrayView2<bool>>,
    spacing: [f64; 2],
    order: Order,
    mode: Mode,
) -> Result<LevelSet> {
    let (rows, cols) = phi.dim();
    let stride = cols + 2 * PAD;
    let padded = (rows + 2 * PAD) * stride;
    let at = |r: usize, c: usize| (r + PAD) * stride + c + PAD;
    let outside = Cell {
        value: 0.0,
        rhs: 1.0,
        phi: 0.0,
        pos: 0,
        flag: MASK,
    };
    let mut cells = vec![outside; padded];
    for ((r, c), &v) in phi.indexed_iter() {
        let cell = &mut cells[at(r, c)];
        cell.phi = v;
        cell.flag = FAR;
    }
    if let Some(mask) = mask {
        for ((r, c), &m) in mask.indexed_iter() {
            if m {
                cells[at(r, c)].flag = MASK;
            }
        }
    }
    if let Mode::TravelTime(speed) = mode {
        for r in 0..rows {
            for c in 0..cols {
                let s = speed[r * cols + c];
                let cell = &mut cells[at(r, c)];
                // Very small speeds would overflow the quadratic: scikit-fmm makes them obstacles.
                if s < f64::EPSILON {
                    cell.flag = MASK;
                }
                cell.rhs = 1.0 / (s * s);
            }
        }
    }
    let mut m = Marcher {
        stride,
        cells,
        idx2: [1.0 / spacing[0] / spacing[0], 1.0 / spacing[1] / spacing[1]],
        second: order == Order::Second,
        distance: matches!(mode, Mode::Distance),
        heap: Heap::default(),
    };
    let interior = || (0..rows).flat_map(move |r| (0..cols).map(move |c| at(r, c)));
    m.freeze_contour(interior(), spacing);
    if let Mode::TravelTime(speed) = mode {
        // `interior` lists the cells in row-major order, as `speed` holds them.
        for (i, &s) in interior().zip(speed) {
            let cell = &mut m.cells[i];
            if cell.flag == FROZEN {
                cell.value = (cell.value / s).abs();
            }
        }
    }
    if !interior().any(|i| m.cells[i].flag == FROZEN) {
        return Err(Error::invalid(
            OPTIONS,
            "phi",
            "has no zero contour (no zero level set) outside the mask: expected a value of 0 or a change of sign between neighbours",
        ));
    }
    m.start_narrow_band(interior());
    m.run();
    let mut unreached = 0;
    let values = Array2::from_shape_fn((rows, cols), |(r, c)| {
        let cell = &m.cells[at(r, c)];
        if cell.flag == FROZEN {
            cell.value
        } else {
            unreached += 1;
            f64::INFINITY
        }
    });
    Ok(LevelSet { values, unreached })
}

impl Marcher {
    /// The offset of the next cell along `axis` (0: rows, 1: columns).
    #[inline(always)]
    fn step(&self, axis: usize) -> isize {
        if axis == 0 { self.stride as isize } else { 1 }
    }

    /// Freezes the cells on the zero contour and beside it, at their interpolated distance
    /// (scikit-fmm's `initializeFrozen`; the travel time divides by the speed afterwards).
    fn freeze_contour(&mut self, interior: impl Iterator<Item = usize> + Clone, spacing: [f64; 2]) {
        for i in interior.clone() {
            let cell = &mut self.cells[i];
            if cell.flag != MASK && cell.phi == 0.0 {
                cell.flag = FROZEN;
                cell.value = 0.0;
            }
        }
        for i in interior {
            if self.cells[i].flag != FAR {
                continue;
            }
            let p = self.cells[i].phi;
            let mut nearest = [0.0f64; 2];
            let mut borders = false;
            for axis in 0..2 {
                for dir in [-1, 1] {
                    let n = &self.cells[i.wrapping_add_signed(dir * self.step(axis))];
                    if n.flag == MASK || p * n.phi >= 0.0 {
                        continue;
                    }
                    borders = true;
                    let d = spacing[axis] * p / (p - n.phi);
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
                self.cells[i].value = if p < 0.0 { -d } else { d };
                self.cells[i].flag = FROZEN;
            }
        }
    }

    /// Gives every far cell beside a frozen one its first value (scikit-fmm's
    /// `initalizeNarrow`).
    fn start_narrow_band(&mut self, interior: impl Iterator<Item = usize>) {
        let w = self.stride;
        for i in interior {
            if self.cells[i].flag != FAR {
                continue;
            }
            if [i - w, i + w, i - 1, i + 1]
                .iter()
                .any(|&j| self.cells[j].flag == FROZEN)
            {
                self.cells[i].flag = NARROW;
                let d = self.update(i);
                self.cells[i].value = d;
                self.heap.push(&mut self.cells, i, d.abs());
            }
        }
    }

    /// The fast-marching loop (scikit-fmm's `solve`, with no narrow-band limit).
    fn run(&mut self) {
        let mut to_freeze: Vec<usize> = Vec::new();
        let w = self.stride as isize;
        let dirs = [-w, w, -1, 1];
        while let Some((first, key)) = self.heap.pop(&mut self.cells) {
            to_freeze.clear();
            self.cells[first].flag = FROZEN;
            to_freeze.push(first);
            while self.heap.peek() == Some(key) {
                let (i, _) = self.heap.pop(&mut self.cells).expect("peeked");
                self.cells[i].flag = FROZEN;
                to_freeze.push(i);
            }
            for &i in &to_freeze {
                // An update reads frozen cells only, and none freezes before the next pop: the
                // four neighbours' values (and the second-order stencils two cells away) are
                // computed first, independently of each other, then applied in scikit-fmm's
                // order (rows -, rows +, columns -, columns +).
                let mut near = [0.0f64; 4];
                let mut far = [0.0f64; 4];
                for (n, &dir) in dirs.iter().enumerate() {
                    let j = i.wrapping_add_signed(dir);
                    let state = self.cells[j].flag;
                    if state == NARROW || state == FAR {
                        near[n] = self.update(j);
                    } else if self.second && state == FROZEN {
                        let k = j.wrapping_add_signed(dir);
                        if self.cells[k].flag == NARROW {
                            far[n] = self.update_second(k);
                        }
                    }
                }
                for (n, &dir) in dirs.iter().enumerate() {
                    let j = i.wrapping_add_signed(dir);
                    let state = self.cells[j].flag;
                    let d = near[n];
                    if (state == NARROW || state == FAR) && d != 0.0 {
                        self.cells[j].value = d;
                        if state == NARROW {
                            self.heap.set(&mut self.cells, j, d.abs());
                        } else {
                            self.cells[j].flag = NARROW;
                            self.heap.push(&mut self.cells, j, d.abs());
                        }
                    }
                    // The second-order stencil of the cell two steps away now reaches i.
                    if self.second && state == FROZEN {
                        let k = j.wrapping_add_signed(dir);
                        let d = far[n];
                        if self.cells[k].flag == NARROW && d != 0.0 {
                            self.cells[k].value = d;
                            self.heap.set(&mut self.cells, k, d.abs());
                        }
                    }
                }
            }
        }
    }

    #[inline]
    fn update(&self, i: usize) -> f64 {
        if self.second {
            self.update_second(i)
        } else {
            self.update_first(i)
        }
    }

    /// scikit-fmm's `updatePointOrderOne`: the upwind quadratic over each axis's frozen
    /// neighbour nearer the contour; where it has no real root, its vertex `-b / 2a`.
    #[inline]
    fn update_first(&self, i: usize) -> f64 {
        let (mut a, mut b, mut cc) = (0.0, 0.0, 0.0);
        for axis in 0..2 {
            let step = self.step(axis);
            let mut v = NONE;
            for j in [i.wrapping_add_signed(-step), i.wrapping_add_signed(step)] {
                let n = &self.cells[j];
                if n.flag == FROZEN && n.value.abs() < v.abs() {
                    v = n.value;
                }
            }
            if v < NONE {
                let k = self.idx2[axis];
                a += k;
                b -= k * 2.0 * v;
                cc += k * (v * v);
            }
        }
        self.root(i, a, b, cc).unwrap_or_else(|| -b / (2.0 * a))
    }

    /// scikit-fmm's `updatePointOrderTwo` (both axes; see [`Marcher::second_order_axes`]),
    /// with its fallbacks where the quadratic has no real root: the first-order update for the
    /// distance, the smaller of the one-axis solutions for the travel time.
    #[inline]
    fn update_second(&self, i: usize) -> f64 {
        if let Some(v) = self.second_order_axes(i, [true, true]) {
            return v;
        }
        if self.distance {
            self.update_first(i)
        } else {
            let only_rows = self.second_order_axes(i, [true, false]).unwrap_or(f64::INFINITY);
            let only_cols = self.second_order_axes(i, [false, true]).unwrap_or(f64::INFINITY);
            // std::min_element: the first unless the second is strictly smaller.
            if only_cols < only_rows {
                only_cols
            } else {
                only_rows
            }
        }
    }

    /// The second-order quadratic over the axes in `use_axis`, or `None` where it has no real
    /// root.
    #[inline]
    fn second_order_axes(&self, i: usize, use_axis: [bool; 2]) -> Option<f64> {
        let (mut a, mut b, mut cc) = (0.0, 0.0, 0.0);
        for axis in 0..2 {
            if !use_axis[axis] {
                continue;
            }
            let step = self.step(axis);
            let (mut v1, mut v2) = (NONE, NONE);
            for dir in [-step, step] {
                let j = i.wrapping_add_signed(dir);
                let near = &self.cells[j];
                if near.flag != FROZEN || near.value.abs() >= v1.abs() {
                    continue;
                }
                v1 = near.value;
                // As scikit-fmm: v2 keeps a value found on the other side if this side has none.
                let far = &self.cells[j.wrapping_add_signed(dir)];
                if far.flag == FROZEN {
                    let u2 = far.value;
                    if (u2 <= v1 && v1 >= 0.0) || (u2 >= v1 && v1 <= 0.0) {
                        v2 = u2;
                        if !self.distance && (far.phi * near.phi < 0.0 || far.phi * self.cells[i].phi < 0.0) {
                            v2 = -v2;
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

    /// The root of `a u^2 + b u + c = rhs` scikit-fmm takes (`solveQuadratic`): for the
    /// distance the one on `phi`'s side, for the travel time the larger; `None` for a negative
    /// discriminant.
    #[inline(always)]
    fn root(&self, i: usize, a: f64, b: f64, c: f64) -> Option<f64> {
        let cell = &self.cells[i];
        let c = c - cell.rhs;
        let det = b * b - 4.0 * a * c;
        if det < 0.0 {
            return None;
        }
        Some(if !self.distance || cell.phi > f64::EPSILON {
            (-b + det.sqrt()) / 2.0 / a
        } else {
            (-b - det.sqrt()) / 2.0 / a
        })
    }
}

/// Children per heap node: four keys share a cache line and the heap is half as deep as a
/// binary one.
const ARITY: usize = 4;

/// The narrow band: an indexed 4-ary min-heap of cells keyed by `|value|`, whose keys may rise
/// as well as fall (scikit-fmm's updates can raise a narrow-band value). Keys and cells are kept
/// in separate arrays so that a node's children's keys are read together; each cell's position
/// is in its [`Cell::pos`].
#[derive(Default)]
struct Heap {
    keys: Vec<f64>,
    cells: Vec<u32>,
}

impl Heap {
    #[inline]
    fn peek(&self) -> Option<f64> {
        self.keys.first().copied()
    }

    #[inline]
    fn push(&mut self, grid: &mut [Cell], cell: usize, key: f64) {
        let at = self.keys.len();
        self.keys.push(key);
        self.cells.push(cell as u32);
        self.up(grid, at, key, cell as u32);
    }

    /// Gives `cell` (in the heap) the key `key`.
    #[inline]
    fn set(&mut self, grid: &mut [Cell], cell: usize, key: f64) {
        let at = grid[cell].pos as usize;
        let old = self.keys[at];
        if key < old {
            self.up(grid, at, key, cell as u32);
        } else if key > old {
            self.down(grid, at, key, cell as u32);
        }
    }

    #[inline]
    fn pop(&mut self, grid: &mut [Cell]) -> Option<(usize, f64)> {
        let key = *self.keys.first()?;
        let cell = self.cells[0];
        let last_key = self.keys.pop().expect("non-empty");
        let last_cell = self.cells.pop().expect("non-empty");
        if !self.keys.is_empty() {
            self.down(grid, 0, last_key, last_cell);
        }
        Some((cell as usize, key))
    }

    /// Moves the entry `(key, cell)` from `at` towards the root to its place.
    #[inline]
    fn up(&mut self, grid: &mut [Cell], mut at: usize, key: f64, cell: u32) {
        while at > 0 {
            let parent = (at - 1) / ARITY;
            if self.keys[parent] <= key {
                break;
            }
            self.keys[at] = self.keys[parent];
            self.cells[at] = self.cells[parent];
            grid[self.cells[at] as usize].pos = at as u32;
            at = parent;
        }
        self.keys[at] = key;
        self.cells[at] = cell;
        grid[cell as usize].pos = at as u32;
    }

    /// Moves the entry `(key, cell)` from `at` towards the leaves to its place.
    #[inline]
    fn down(&mut self, grid: &mut [Cell], mut at: usize, key: f64, cell: u32) {
        let len = self.keys.len();
        loop {
            let first = ARITY * at + 1;
            if first >= len {
                break;
            }
            let last = (first + ARITY).min(len);
            let mut child = first;
            let mut child_key = self.keys[first];
            for c in first + 1..last {
                if self.keys[c] < child_key {
                    child = c;
                    child_key = self.keys[c];
                }
            }
            if child_key >= key {
                break;
            }
            self.keys[at] = child_key;
            self.cells[at] = self.cells[child];
            grid[self.cells[at] as usize].pos = at as u32;
            at = child;
        }
        self.keys[at] = key;
        self.cells[at] = cell;
        grid[cell as usize].pos = at as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn max_err(
        a: &Array2<f64>,
        exact: impl Fn(usize, usize) -> f64,
        skip: impl Fn(usize, usize) -> bool,
    ) -> f64 {
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
            max_err(&d.values, exact, |r, c| {
                (at(r).powi(2) + at(c).powi(2)).sqrt() < 0.5
            })
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
        let exact =
            |r: usize, c: usize| h * ((r as f64 - 40.0).powi(2) + (c as f64 - 40.0).powi(2)).sqrt() / s;
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
