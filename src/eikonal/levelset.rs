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
    let phi = phi.as_standard_layout();
    let phi = phi.as_slice().expect("standard layout");
    let mask = mask.as_ref().map(|m| m.as_standard_layout());
    let mask = mask.as_ref().map(|m| m.as_slice().expect("standard layout"));
    let speed = match mode {
        Mode::TravelTime(speed) => Some(speed),
        Mode::Distance => None,
    };
    // The cells that take no part: masked, or (travel time) too slow for the quadratic, which
    // scikit-fmm makes obstacles.
    let masked = |k: usize| mask.is_some_and(|m| m[k]) || speed.is_some_and(|s| s[k] < f64::EPSILON);
    let stride = cols + 2 * PAD;
    let outside = Cell {
        value: 0.0,
        rhs: 1.0,
        phi: 0.0,
        pos: 0,
        flag: MASK,
    };
    let mut cells = Vec::with_capacity((rows + 2 * PAD) * stride);
    cells.resize(PAD * stride, outside);
    let mut frozen = Vec::new();
    // One pass lays out the padded grid and freezes the contour (scikit-fmm's
    // `initializeFrozen`): a cell where phi is 0 at 0, a cell where phi changes sign towards a
    // neighbour at its interpolated distance, divided by the speed for the travel time.
    for r in 0..rows {
        cells.resize(cells.len() + PAD, outside);
        for c in 0..cols {
            let k = r * cols + c;
            let p = phi[k];
            let mut cell = Cell {
                value: 0.0,
                rhs: 1.0,
                phi: p,
                pos: 0,
                flag: FAR,
            };
            if let Some(s) = speed {
                cell.rhs = 1.0 / (s[k] * s[k]);
            }
            if masked(k) {
                cell.flag = MASK;
            } else if p == 0.0 {
                cell.flag = FROZEN;
            } else if let Some(d) = contour_distance(phi, &masked, (rows, cols), (r, c), spacing) {
                let d = if p < 0.0 { -d } else { d };
                cell.value = match speed {
                    Some(s) => (d / s[k]).abs(),
                    None => d,
                };
                cell.flag = FROZEN;
            }
            if cell.flag == FROZEN {
                frozen.push(cells.len());
            }
            cells.push(cell);
        }
        cells.resize(cells.len() + PAD, outside);
    }
    cells.resize(cells.len() + PAD * stride, outside);
    if frozen.is_empty() {
        return Err(Error::invalid(
            OPTIONS,
            "phi",
            "has no zero contour (no zero level set) outside the mask: expected a value of 0 or a change of sign between neighbours",
        ));
    }
    let mut m = Marcher {
        stride,
        cells,
        idx2: [1.0 / spacing[0] / spacing[0], 1.0 / spacing[1] / spacing[1]],
        second: order == Order::Second,
        distance: speed.is_none(),
        heap: Heap::default(),
    };
    m.start_narrow_band(&frozen);
    m.run();
    let mut unreached = 0;
    let mut values = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let row = (r + PAD) * stride + PAD;
        values.extend(m.cells[row..row + cols].iter().map(|cell| {
            if cell.flag == FROZEN {
                cell.value
            } else {
                unreached += 1;
                f64::INFINITY
            }
        }));
    }
    let values = Array2::from_shape_vec((rows, cols), values).expect("rows * cols values");
    Ok(LevelSet { values, unreached })
}

/// The distance from cell `(r, c)` to the zero contour where phi changes sign towards an
/// unmasked neighbour (scikit-fmm's interpolation: per axis the nearer crossing
/// `h phi / (phi - phi_neighbour)`, combined as `1 / sqrt(sum 1 / d^2)`); `None` where it
/// changes sign towards none.
#[inline]
fn contour_distance(
    phi: &[f64],
    masked: &impl Fn(usize) -> bool,
    (rows, cols): (usize, usize),
    (r, c): (usize, usize),
    spacing: [f64; 2],
) -> Option<f64> {
    let k = r * cols + c;
    let p = phi[k];
    let mut nearest = [0.0f64; 2];
    let mut borders = false;
    let neighbours = [
        (0, r > 0, k.wrapping_sub(cols)),
        (0, r + 1 < rows, k + cols),
        (1, c > 0, k.wrapping_sub(1)),
        (1, c + 1 < cols, k + 1),
    ];
    for (axis, inside, n) in neighbours {
        if !inside || p * phi[n] >= 0.0 || masked(n) {
            continue;
        }
        borders = true;
        let d = spacing[axis] * p / (p - phi[n]);
        if nearest[axis] == 0.0 || nearest[axis] > d {
            nearest[axis] = d;
        }
    }
    if !borders {
        return None;
    }
    let mut dsum = 0.0;
    for d in nearest {
        if d > 0.0 {
            dsum += 1.0 / d / d;
        }
    }
    Some((1.0 / dsum).sqrt())
}

impl Marcher {
    /// The offset of the next cell along `axis` (0: rows, 1: columns).
    #[inline(always)]
    fn step(&self, axis: usize) -> isize {
        if axis == 0 { self.stride as isize } else { 1 }
    }

    /// Gives every far cell beside a frozen one its first value (scikit-fmm's
    /// `initalizeNarrow`; it visits the cells in memory order, but the values depend only on
    /// the frozen cells, and the march's order only on the values).
    fn start_narrow_band(&mut self, frozen: &[usize]) {
        let w = self.stride;
        for &f in frozen {
            for i in [f - w, f - 1, f + 1, f + w] {
                if self.cells[i].flag == FAR {
                    self.cells[i].flag = NARROW;
                    let d = self.update(i);
                    self.cells[i].value = d;
                    self.heap.push(&mut self.cells, i, d.abs());
                }
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
                // values of the four neighbours (or, in second order, of the cells two steps
                // away whose stencil now reaches i) are computed together, then applied in
                // scikit-fmm's order (rows -, rows +, columns -, columns +).
                let mut targets = [0usize; 4];
                let mut active = [false; 4];
                for (n, &dir) in dirs.iter().enumerate() {
                    let j = i.wrapping_add_signed(dir);
                    let state = self.cells[j].flag;
                    if state == NARROW || state == FAR {
                        (targets[n], active[n]) = (j, true);
                    } else if self.second && state == FROZEN {
                        let k = j.wrapping_add_signed(dir);
                        if self.cells[k].flag == NARROW {
                            (targets[n], active[n]) = (k, true);
                        }
                    }
                }
                let values = self.update_four(targets, active);
                for n in 0..4 {
                    let (t, d) = (targets[n], values[n]);
                    if !active[n] || d == 0.0 {
                        continue;
                    }
                    self.cells[t].value = d;
                    if self.cells[t].flag == NARROW {
                        self.heap.set(&mut self.cells, t, d.abs());
                    } else {
                        self.cells[t].flag = NARROW;
                        self.heap.push(&mut self.cells, t, d.abs());
                    }
                }
            }
        }
    }

    /// The updated values of up to four cells (those `active`), their square roots and
    /// divisions side by side; the same values as [`Marcher::update`] one by one.
    #[inline]
    fn update_four(&self, targets: [usize; 4], active: [bool; 4]) -> [f64; 4] {
        let mut q = [(1.0, 0.0, 0.0); 4];
        let mut plus = [true; 4];
        for n in 0..4 {
            if active[n] {
                let i = targets[n];
                let (a, b, c) = if self.second {
                    self.second_order_coefficients(i, [true, true])
                } else {
                    self.first_order_coefficients(i)
                };
                q[n] = (a, b, c - self.cells[i].rhs);
                plus[n] = !self.distance || self.cells[i].phi > f64::EPSILON;
            }
        }
        let mut out = [0.0; 4];
        for n in 0..4 {
            let (a, b, c) = q[n];
            let det = b * b - 4.0 * a * c;
            let sq = det.sqrt();
            out[n] = (-b + if plus[n] { sq } else { -sq }) / 2.0 / a;
        }
        for n in 0..4 {
            let (a, b, c) = q[n];
            if active[n] && b * b - 4.0 * a * c < 0.0 {
                out[n] = self.no_real_root(targets[n], a, b);
            }
        }
        out
    }

    /// A cell's value where its quadratic `(a, b, _)` has no real root: scikit-fmm's fallbacks.
    #[cold]
    fn no_real_root(&self, i: usize, a: f64, b: f64) -> f64 {
        if !self.second {
            // The vertex of the first-order quadratic.
            return -b / (2.0 * a);
        }
        if self.distance {
            return self.update_first(i);
        }
        // The smaller of the one-axis solutions (std::min_element: the first unless the
        // second is strictly smaller).
        let only_rows = self.second_order_axes(i, [true, false]).unwrap_or(f64::INFINITY);
        let only_cols = self.second_order_axes(i, [false, true]).unwrap_or(f64::INFINITY);
        if only_cols < only_rows {
            only_cols
        } else {
            only_rows
        }
    }

    /// A cell's value from its frozen neighbours, in the march's order of accuracy.
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
    fn update_first(&self, i: usize) -> f64 {
        let (a, b, c) = self.first_order_coefficients(i);
        self.root(i, a, b, c).unwrap_or_else(|| -b / (2.0 * a))
    }

    /// `(a, b, c)` of the first-order quadratic `a u^2 + b u + c = rhs`: per axis, the frozen
    /// neighbour nearer the contour.
    #[inline(always)]
    fn first_order_coefficients(&self, i: usize) -> (f64, f64, f64) {
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
        (a, b, cc)
    }

    /// scikit-fmm's `updatePointOrderTwo` over both axes, with its fallbacks where the
    /// quadratic has no real root: the first-order update for the distance, the smaller of the
    /// one-axis solutions for the travel time.
    fn update_second(&self, i: usize) -> f64 {
        let (a, b, c) = self.second_order_coefficients(i, [true, true]);
        match self.root(i, a, b, c) {
            Some(v) => v,
            None => self.no_real_root(i, a, b),
        }
    }

    /// The second-order quadratic over the axes in `use_axis`, or `None` where it has no real
    /// root.
    fn second_order_axes(&self, i: usize, use_axis: [bool; 2]) -> Option<f64> {
        let (a, b, c) = self.second_order_coefficients(i, use_axis);
        self.root(i, a, b, c)
    }

    /// `(a, b, c)` of the second-order quadratic over the axes in `use_axis`: per axis the
    /// one-sided `(3 u - 4 v1 + v2) / 2` stencil where `v2` qualifies, else first order.
    #[inline(always)]
    fn second_order_coefficients(&self, i: usize, use_axis: [bool; 2]) -> (f64, f64, f64) {
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
        (a, b, cc)
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
        // Measured: first order 0.046 -> 0.021, second order 0.031 -> 0.0105.
        assert!(e2b < 0.6 * e1b, "second order {e2b} against first {e1b}");
        assert!(e1a / e1b > 1.5, "first order halves its error: {e1a} -> {e1b}");
        assert!(
            e2a / e2b > 2.5,
            "second order cuts its error more: {e2a} -> {e2b}"
        );
        assert!(e2b < 0.015, "{e2b}");
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
        let t = travel_time(phi.view(), speed.view(), None, [3.0, 0.25], Order::First).unwrap();
        assert!((t.values[(0, 5)] - 5.0 * 0.25 / 0.5).abs() < 1e-12);
        assert!((t.values[(3, 0)] - 3.0 * 3.0 / 0.5).abs() < 1e-12);
        // Second order starts one-sided stencils beside the source: close, not exact.
        let t = travel_time(phi.view(), speed.view(), None, [3.0, 0.25], Order::Second).unwrap();
        assert!((t.values[(0, 5)] - 2.5).abs() < 1e-9, "{}", t.values[(0, 5)]);
        assert!((t.values[(3, 0)] - 18.0).abs() < 1e-4, "{}", t.values[(3, 0)]);
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
