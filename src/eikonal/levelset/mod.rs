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
//!
//! The march keeps one 64-bit word per cell, in the memory that ends up holding the result
//! ([`distance_in`], [`travel_time_in`]: the Python package marches in the numpy array it
//! returns): a frozen cell's word is its value; any other cell's is a NaN that carries its state,
//! so an update reads its neighbours' values without looking at their states. The words are
//! on 2 MiB pages where Linux offers them, and the row a newly reached cell's update will read
//! is prefetched, as are the rows around the cell the next pop most likely gives. The narrow
//! band is an 8-ary heap, a node's children's keys in one cache line, whose entries are found
//! through handles in a small table. One pass over the input lays out the words and finds the
//! contour; where every speed is the same, `1 / speed^2` is computed once and the march is
//! compiled without the path that reads the speeds.
//!
//! Over one speed everywhere the march first freezes cells in the order the front reaches them,
//! from a first-in, first-out queue (`Fifo`), with no ordering work at all, and checks as
//! each cell freezes that the heap would have frozen it at the same value: the frozen cells its
//! update reads are all below it, and the heap would have updated it in the same steps. From a
//! point or through corridors the front's order of arrival is its order of values almost
//! everywhere, and the queue marches the whole grid in about half the heap's time; where a
//! check fails (the first cells from a curved contour, fronts meeting, ties), the heap goes on
//! from the cells frozen below the first value out of order (`Marcher::resume`), and a few
//! steps further the queue takes over again. The tests hold every way of marching to a plain
//! port of scikit-fmm's, bit for bit.
//!
//! The one departure from scikit-fmm: a cell whose interpolated distance to the contour
//! underflows starts at 0, where scikit-fmm starts it at `+inf` and its neighbours at NaN.
//!
//! # What was measured
//!
//! Measured with `bench/python_vs_skfmm.py` and the march's own benchmarks (BENCHMARKS.md has
//! the current figures against scikit-fmm); each alternative below against the march as it is.
//!
//! - **What the heap's march spends its time on** (measured on the maze with the heap alone). Of
//!   the 2048² maze's 0.20 s from Python (order 1), the layout takes 13 ms (3 ms of it the kernel
//!   zeroing the new array's pages), the march 0.18 s and the final pass 2 ms. Per open cell of
//!   the maze the march costs the same at 256² as at 2048² (about 50 ns), so it is bound by its
//!   own chain of work, not by memory: a pop, a push and one change of key per cell, and 2.1
//!   updates. Valgrind's cachegrind counts about 440 instructions per open cell (1024² maze, order
//!   1), run at about 2.2 a cycle; the heap's walks down are about a fifth of them. About half of
//!   the time is the narrow band: the same march with a first-in, first-out queue in place of the
//!   heap (which gives other values in general) takes 95 ms instead of 0.18 s, and the maze's 10.5
//!   million heap operations (3.7 M pushes, 3.1 M changes of key, 96 % of them down, 3.7 M pops;
//!   54 entries on average) replayed alone take 93 ms. Replayed the same way, a sorted array takes
//!   0.21 s and buckets 0.13 s. The updates' square roots and divisions are not what the march
//!   waits for: an update along one axis without them (`v + h / speed`) saves 1.5 %, and a
//!   multiplication in place of the division by `a` saves nothing. From a point the band is large
//!   (3,600 entries on average).
//! - **The compiler's layout moves a march's time by several per cent.** Changes that leave a
//!   march's arithmetic alone move it by up to 8 %: reading the one speed from another field gave
//!   0.178 s on the maze (order 1) in one build and 0.19 s in the next; `codegen-units = 1` makes
//!   the maze 6 % faster in order 1 and 5–11 % slower in order 2. Each march is compiled in a
//!   function of its own, so that one march's change leaves the others' code alone; differences of
//!   2 % or less between two builds are not a ranking.
//! - **Buckets in place of the heap** (an exact bucket queue at one speed: buckets a fraction of
//!   one step's time wide, about one entry each, a push or an update a link into a list with no
//!   comparisons), measured for large bands: from a point at 2048² they save 12 % (order 1),
//!   because there the values come in groups of equal ones (the grid's eight-fold symmetry: 3.7 M
//!   of the 4.2 M cells freeze as ties, which a bucket hands out without a heap's walk down), but
//!   from a circle, where values are rarely equal, they are 27 % slower (0.36 s against 0.28 s),
//!   and on the maze 45 % slower; the march keeps the heap. Buckets of at most eight entries, each
//!   bucket's keys in one cache line and its smallest found by a tournament over the line, with a
//!   heap for the entries of full buckets and keys beyond the ring, are 44 % slower on the maze
//!   and 22 % slower from a point: three in four of the maze's changes of key move an entry to
//!   another bucket (a take-out and a put where the heap's change of key moves nothing), and from
//!   a point one put in six overflows to the heap.
//! - **What the march does for speed**, each measured against the march without it: its words on 2
//!   MiB pages (`MADV_HUGEPAGE` on numpy's array; 7–9 %), the row beyond each newly reached cell
//!   prefetched (5–6 %), the rows around the heap's new first cell prefetched after each pop (8 %
//!   from a circle), a heap node's eight children's keys in one aligned cache line (6 % from a
//!   point), the cell kept in the heap entry (2 % on the maze), a node's smallest child found by
//!   halves (the first four children against the last four, lanes of one vector; 2 % on the maze),
//!   the rare paths marked cold (3 % from a circle), a march over one speed everywhere compiled
//!   without the per-cell speed path (3 % on the maze and from a point, order 1), and the layout
//!   in one vectorised loop per row (12 ms down to 9.5 ms). Slower or no faster: 4- and 16-ary
//!   heaps, a radix heap, a heap without positions, bottom-up pops, a SIMD search of a node's
//!   children, the four updates around a cell side by side in vector lanes, branch-free neighbour
//!   tests, a cell's updates all computed before its heap operations (12 % slower) or before the
//!   popped entry leaves the heap (23 % slower), a pop that leaves the root's place for the next
//!   push to take, an unordered array searched with vector compares for small bands (90 % slower
//!   on the maze), first-order cells kept out of the heap while a neighbour with a smaller key is
//!   sure to update them first (82 % of the maze's pushes; the same bits, 8 % slower), the
//!   smallest child's index found from the smallest key by equal comparisons (7–17 % slower: the
//!   next level waits for it), one path for pushes and changes of key chosen without branching,
//!   one comparison for "neither frozen nor masked", the coefficients' choices made with bit
//!   masks, the four directions around a cell in a loop rather than written out (7 % slower), one
//!   jump on which of the four neighbours are open (16 % slower on the maze), an update given the
//!   value of the cell just frozen rather than reading it from the grid (no faster), the second-
//!   order stencil's choices written without branches (fewer mispredicted branches, no faster: the
//!   compiler turns a choice whose condition compares values just loaded back into a branch, bit
//!   masks included, and an opaque mask costs more than it saves), a build for AVX-512, and link-
//!   time optimisation. Four sorted first-in, first-out queues for the keys that come in
//!   increasing order (a key joins the queue whose last key is the largest not above it, as in
//!   patience sorting), the heap only for the rest, are 77 % slower on the maze and 41 % slower
//!   from a point (order 1): a change of key mostly lowers the key below the one before it in its
//!   queue (2.4 M of the maze's 3.1 M changes, and all from a point), so the entry leaves its
//!   queue and joins another, and from a point 72 % of the entries go to the heap all the same.
//! - Freezing in order of arrival against the march with the heap alone (Rust, 1024², order 1 /
//!   order 2, the same bits): point 1.51x / 1.34x, maze 1.22x / 1.15x, circle 1.49x / 1.10x, a
//!   tilted line 1.64x / 1.68x; where fronts meet and the queue gives way for good: two point
//!   sources 0.82x / 0.79x, a point among pillars 0.89x / 0.95x, 128 exits into the maze 0.86x /
//!   0.93x; with a speed per cell (the heap alone) 0.93x / 0.95x.
//! - A march of another design is no faster on the maze: `crowdfield.eikonal` (the command's own
//!   solver, one packed word per cell, heap positions in the cells) takes 0.25 s / 0.27 s (order 1
//!   / 2) from Python.

use super::heap::{HeapLines, LINE};
use super::scratch::advise_huge_pages;
use super::widest::with_widest_instructions;
use crate::eikonal::Order;
use crate::error::{Error, OPTIONS, Result, num};
use ndarray::{Array2, ArrayView2, s};

mod band;
mod layout;
mod march;
#[cfg(test)]
mod plain;
#[cfg(test)]
mod tests;

use band::*;
use layout::*;
use march::*;

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
    let mut buffer = vec![0.0; buffer_len(phi.dim())];
    let unreached = distance_in(phi, mask, spacing, order, &mut buffer)?;
    Ok(LevelSet {
        values: grid_of(buffer, phi.dim()),
        unreached,
    })
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
    let mut buffer = vec![0.0; buffer_len(phi.dim())];
    let unreached = travel_time_in(phi, speed, mask, spacing, order, &mut buffer)?;
    Ok(LevelSet {
        values: grid_of(buffer, phi.dim()),
        unreached,
    })
}

/// Rows of a march's buffer above and below the grid (see [`distance_in`]).
pub const BUFFER_MARGIN: usize = 2;

/// The length of the buffer [`distance_in`] and [`travel_time_in`] march in, for a grid of
/// `(rows, cols)` cells: `(rows + 2 BUFFER_MARGIN) * cols`.
pub fn buffer_len((rows, cols): (usize, usize)) -> usize {
    (rows + 2 * BUFFER_MARGIN) * cols
}

/// The grid of `shape` in a march's `buffer`: its rows after the first [`BUFFER_MARGIN`].
fn grid_of(buffer: Vec<f64>, (rows, cols): (usize, usize)) -> Array2<f64> {
    Array2::from_shape_vec((rows + 2 * BUFFER_MARGIN, cols), buffer)
        .expect("buffer_len")
        .slice_move(s![BUFFER_MARGIN..BUFFER_MARGIN + rows, ..])
}

/// [`distance`] marched in the caller's `buffer` of [`buffer_len`] values, which holds the
/// result when it returns: the grid's values (`+inf` where not reached) row after row, after
/// [`BUFFER_MARGIN`] rows of other content, and before as many. Returns the number of cells not
/// reached. The march needs no other memory of the grid's size, so a caller that owns an array
/// of the buffer's shape (numpy's, from Python) gets the values without a copy.
///
/// # Errors
/// As [`distance`], and if `buffer`'s length is not [`buffer_len`].
pub fn distance_in(
    phi: ArrayView2<f64>,
    mask: Option<ArrayView2<bool>>,
    spacing: [f64; 2],
    order: Order,
    buffer: &mut [f64],
) -> Result<usize> {
    march(phi, mask, None, spacing, order, buffer)
}

/// [`travel_time`] marched in the caller's `buffer`, as [`distance_in`].
///
/// # Errors
/// As [`travel_time`], and if `buffer`'s length is not [`buffer_len`].
pub fn travel_time_in(
    phi: ArrayView2<f64>,
    speed: ArrayView2<f64>,
    mask: Option<ArrayView2<bool>>,
    spacing: [f64; 2],
    order: Order,
    buffer: &mut [f64],
) -> Result<usize> {
    march(phi, mask, Some(speed), spacing, order, buffer)
}

/// The largest spacing and speed a march takes: the updates square `1 / h` and the values
/// divided by `h` and the speed, which must stay normal `f64`s on every grid a machine holds.
pub const MAX_SCALE: f64 = 1e50;
/// The smallest spacing a march takes (`1 / MAX_SCALE`).
pub const MIN_SPACING: f64 = 1e-50;

/// The input's checks, in the order they report: the mask's shape, phi's values (outside the
/// mask), the spacings, then (travel time) the speeds' shape and values (outside the mask).
fn check(
    phi: ArrayView2<f64>,
    mask: Option<ArrayView2<bool>>,
    speed: Option<ArrayView2<f64>>,
    spacing: [f64; 2],
) -> Result<()> {
    if let Some(mask) = mask
        && mask.dim() != phi.dim()
    {
        return Err(Error::invalid(
            OPTIONS,
            "mask",
            format!("shape {:?}: expected phi's shape {:?}", mask.dim(), phi.dim()),
        ));
    }
    let open = |at: (usize, usize)| !mask.is_some_and(|m| m[at]);
    if let Some((at, v)) = phi.indexed_iter().find(|&(at, v)| !v.is_finite() && open(at)) {
        return Err(Error::invalid(
            OPTIONS,
            "phi",
            format!(
                "{} at {at:?}: expected finite values (or the cell masked)",
                num(*v)
            ),
        ));
    }
    for (axis, h) in spacing.iter().enumerate() {
        if !(h.is_finite() && (MIN_SPACING..=MAX_SCALE).contains(h)) {
            return Err(Error::invalid(
                OPTIONS,
                "dx",
                format!(
                    "{} along axis {axis}: expected a length from {MIN_SPACING:e} to {MAX_SCALE:e}",
                    num(*h)
                ),
            ));
        }
    }
    if let Some(speed) = speed {
        if speed.dim() != phi.dim() {
            return Err(Error::invalid(
                OPTIONS,
                "speed",
                format!("shape {:?}: expected phi's shape {:?}", speed.dim(), phi.dim()),
            ));
        }
        if let Some((at, v)) = speed
            .indexed_iter()
            .find(|&(at, v)| !(v.is_finite() && *v <= MAX_SCALE) && open(at))
        {
            return Err(Error::invalid(
                OPTIONS,
                "speed",
                format!(
                    "{} at {at:?}: expected finite speeds up to {MAX_SCALE:e} (or the cell masked)",
                    num(*v)
                ),
            ));
        }
    }
    Ok(())
}

// Each cell of the march is one 64-bit word. A frozen cell holds its value's bits. Any other
// cell holds a NaN whose top bits are [`OPEN`], so that an update reads its neighbours' values
// without looking at their states (every comparison with NaN is false), and whose low bits say
// what the march needs of the cell: its state, two facts about it, and, while it is in the
// narrow band, the handle of its heap entry. On a large grid the front jumps around the grid, so
// most cache lines an update touches are misses; one word per cell is the fewest.
/// The top bits of every word that is not a frozen value: a negative quiet NaN that no frozen
/// value has (a frozen NaN, which only overflowing input could make, is stored as `f64::NAN`).
const OPEN: u64 = 0xFFFC_0000_0000_0000;
/// An open word's state (bits 32-33).
const STATE: u64 = 3 << 32;
const FAR: u64 = 0;
const NARROW: u64 = 1 << 32;
const MASK: u64 = 3 << 32;
/// The cell's `phi > f64::EPSILON`: the distance takes the quadratic's upper root there.
const ABOVE_EPSILON: u64 = 1 << 34;
/// Within [`EDGE_COLUMNS`] of the left or right edge: its neighbours along the row need a bounds
/// check.
const EDGE: u64 = 1 << 35;
/// The columns at either edge flagged [`EDGE`]: the second-order stencil looks two cells away.
const EDGE_COLUMNS: usize = 2;
/// Rows of masked cells above and below the grid ([`BUFFER_MARGIN`]): the second-order stencil
/// looks two rows away, so no neighbour across rows needs a bounds check.
const MARGIN: usize = BUFFER_MARGIN;
/// scikit-fmm's "no value" marker inside the updates.
const NONE: f64 = f64::MAX;
/// `9 / 4`: the second-order stencil's squared coefficient `(3 / 2)^2`.
const AA: f64 = 9.0 / 4.0;
const ONE_THIRD: f64 = 1.0 / 3.0;

/// Whether a word is a frozen cell's value.
#[inline(always)]
fn frozen(word: u64) -> bool {
    word & OPEN != OPEN
}

/// A narrow cell's word: the handle of its heap entry (bits 0-31).
const HANDLE: u64 = 0xFFFF_FFFF;

/// Marches in `buffer` (see [`distance_in`]); the number of cells not reached.
fn march(
    phi: ArrayView2<f64>,
    mask: Option<ArrayView2<bool>>,
    speed: Option<ArrayView2<f64>>,
    spacing: [f64; 2],
    order: Order,
    buffer: &mut [f64],
) -> Result<usize> {
    let (rows, cols) = phi.dim();
    // The checks that cost nothing come first; the values are checked while the grid is laid
    // out, and any failure is reported by `check`, in its order.
    let shapes_fit = mask.is_none_or(|m| m.dim() == phi.dim())
        && speed.is_none_or(|s| s.dim() == phi.dim())
        && spacing.iter().all(|h| (MIN_SPACING..=MAX_SCALE).contains(h));
    if !shapes_fit {
        check(phi, mask, speed, spacing)?;
    }
    if buffer.len() != buffer_len((rows, cols)) {
        return Err(Error::invalid(
            OPTIONS,
            "buffer",
            format!(
                "{} values: expected {} for phi's shape {:?}",
                buffer.len(),
                buffer_len((rows, cols)),
                phi.dim()
            ),
        ));
    }
    if buffer.len() >= u32::MAX as usize / 2 {
        return Err(Error::invalid(
            OPTIONS,
            "phi",
            format!("shape {:?}: expected fewer than 2^31 cells", phi.dim()),
        ));
    }
    let phi_std = phi.as_standard_layout();
    let phi_values = phi_std.as_slice().expect("standard layout");
    let mask_std = mask.as_ref().map(|m| m.as_standard_layout());
    let mask_values = mask_std.as_ref().map(|m| m.as_slice().expect("standard layout"));
    let speed_std = speed.as_ref().map(|s| s.as_standard_layout());
    let speed_values = speed_std.as_ref().map(|s| s.as_slice().expect("standard layout"));
    let words: &mut [u64] = bytemuck::cast_slice_mut(buffer);
    // The front crosses every row, so on a large grid most steps would land on another 4 KiB
    // page (BENCHMARKS.md).
    advise_huge_pages(words);
    let input = Input {
        phi: phi_values,
        mask: mask_values,
        speed: speed_values,
        shape: (rows, cols),
        spacing,
        order,
    };
    let Some(marched) = lay_out_and_march(words, &input) else {
        check(phi, mask, speed, spacing)?;
        unreachable!("lay_out finds a NaN or infinite value only where check does");
    };
    marched
}

/// A march's input, row-major.
struct Input<'a> {
    phi: &'a [f64],
    mask: Option<&'a [bool]>,
    /// The speeds for the travel time; `None` for the distance.
    speed: Option<&'a [f64]>,
    shape: (usize, usize),
    spacing: [f64; 2],
    order: Order,
}

/// Lays out the grid in `words` ([`lay_out`]), marches and leaves the values in `words`, each
/// step compiled for the widest instruction set the processor has ([`super::widest`]). The
/// number of cells not reached; `None` for a NaN or infinite value in the input.
fn lay_out_and_march(words: &mut [u64], input: &Input) -> Option<Result<usize>> {
    let (rows, cols) = input.shape;
    let laid_out = lay_out_input(words, input)?;
    let (starts, mixed_signs, uniform_speed) = match laid_out {
        Ok(laid_out) => laid_out,
        Err(e) => return Some(Err(e)),
    };
    let bands = march_kind(
        grid_of_words(words, input, mixed_signs, uniform_speed),
        &starts,
        input,
        uniform_speed.is_some(),
        false,
    );
    #[cfg(test)]
    tests::count(bands);
    if bands == Bands::Again {
        std::hint::cold_path();
        let Ok((starts, mixed_signs, uniform_speed)) = lay_out_input(words, input)? else {
            unreachable!("the same input lays out the same way");
        };
        let grid = grid_of_words(words, input, mixed_signs, uniform_speed);
        march_kind(grid, &starts, input, uniform_speed.is_some(), true);
    }
    // The words become the values, in place.
    let mut unreached = 0;
    for word in &mut words[MARGIN * cols..(MARGIN + rows) * cols] {
        if !frozen(*word) {
            *word = f64::INFINITY.to_bits();
            unreached += 1;
        }
    }
    Some(Ok(unreached))
}

/// [`lay_out`] of `input` in `words`, compiled for the widest instruction set.
fn lay_out_input(words: &mut [u64], input: &Input) -> Option<Result<(Vec<usize>, bool, Option<f64>)>> {
    with_widest_instructions(
        #[inline(always)]
        || {
            lay_out(
                words,
                input.phi,
                input.mask,
                input.speed,
                input.shape,
                input.spacing,
            )
        },
    )
}

/// The grid of a march over `words`, laid out from `input`.
fn grid_of_words<'a>(
    words: &'a mut [u64],
    input: &Input<'a>,
    mixed_signs: bool,
    uniform_speed: Option<f64>,
) -> Grid<'a> {
    let (spacing, cols) = (input.spacing, input.shape.1);
    Grid {
        cols,
        base: MARGIN * cols,
        words,
        phi: input.phi,
        speed: input.speed.unwrap_or(&[]),
        mixed_signs,
        uniform_rhs: uniform_speed.map_or(f64::NAN, |s| 1.0 / (s * s)),
        idx2: [1.0 / spacing[0] / spacing[0], 1.0 / spacing[1] / spacing[1]],
    }
}

/// How [`Marcher::resume`] ends.
enum Resumed<'a> {
    /// Every cell is frozen.
    Done,
    /// The grid is to be laid out again and marched with the heap alone.
    Again,
    /// The band, as a queue, for the march in arrival order to go on.
    HandOver(Grid<'a>, Box<Fifo>),
}

/// The bands a march used ([`march_alone`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bands {
    /// The heap alone.
    Heap,
    /// The first-in, first-out queue alone.
    Queue,
    /// The queue, then the heap from the cells below the first value out of order.
    QueueThenHeap,
    /// The queue, then nothing: the grid is to be laid out again and marched with the heap.
    Again,
}

/// The march for `input`'s order and kind ([`march_alone`]).
fn march_kind(grid: Grid, starts: &[usize], input: &Input, uniform_speed: bool, heap_only: bool) -> Bands {
    match (input.order, input.speed.is_none(), uniform_speed) {
        (Order::First, true, _) => march_alone::<false, true, true>(grid, starts, heap_only),
        (Order::Second, true, _) => march_alone::<true, true, true>(grid, starts, heap_only),
        (Order::First, false, true) => march_alone::<false, false, true>(grid, starts, heap_only),
        (Order::Second, false, true) => march_alone::<true, false, true>(grid, starts, heap_only),
        (Order::First, false, false) => march_alone::<false, false, false>(grid, starts, heap_only),
        (Order::Second, false, false) => march_alone::<true, false, false>(grid, starts, heap_only),
    }
}

/// One march from the frozen cells `starts`, each stage compiled for the widest instruction
/// set in a function of its own, so that the compiler's choices for one march leave the others'
/// code alone (they move a march's time by several per cent: BENCHMARKS.md). Over one speed
/// everywhere, and unless `heap_only`, the march starts with the first-in, first-out queue
/// ([`Fifo`]) and goes on with the heap from the cells below the first value out of order
/// ([`Marcher::resume`]); where speeds differ from cell to cell, the order of arrival rarely
/// holds for long, and the heap marches alone.
fn march_alone<const SECOND: bool, const DISTANCE: bool, const UNIFORM: bool>(
    grid: Grid,
    starts: &[usize],
    heap_only: bool,
) -> Bands {
    if heap_only || !UNIFORM {
        with_widest_instructions(
            #[inline(always)]
            || Marcher::<Heap<DISTANCE>, SECOND, DISTANCE, UNIFORM>::new(grid).run(starts),
        );
        return Bands::Heap;
    }
    let Some((mut grid, mut below, mut reached)) = with_widest_instructions(
        #[inline(always)]
        || Marcher::<Fifo, SECOND, DISTANCE, UNIFORM>::new(grid).run(starts),
    ) else {
        return Bands::Queue;
    };
    // The cells the heap froze are below this.
    let mut frozen_below = 0.0;
    let mut hand_overs = 0;
    loop {
        if below < frozen_below {
            return Bands::Again;
        }
        // The queue takes over again a few steps further, where the heap takes over cheaply
        // (from the cells the queue reached, not from every cell), until it has given way often.
        let hand_over_at = if hand_overs < MAX_HAND_OVERS && reached.is_some() {
            below + HAND_OVER_STEPS * grid.step_time()
        } else {
            f64::INFINITY
        };
        let resumed = with_widest_instructions(
            #[inline(always)]
            || {
                Marcher::<Heap<DISTANCE>, SECOND, DISTANCE, UNIFORM>::new(grid).resume(
                    starts,
                    below,
                    reached,
                    hand_over_at,
                )
            },
        );
        let (grid_now, queue) = match resumed {
            Resumed::Done => return Bands::QueueThenHeap,
            Resumed::Again => return Bands::Again,
            Resumed::HandOver(grid, queue) => (grid, queue),
        };
        frozen_below = hand_over_at;
        hand_overs += 1;
        match with_widest_instructions(
            #[inline(always)]
            || {
                Marcher::<Fifo, SECOND, DISTANCE, UNIFORM> {
                    grid: grid_now,
                    band: *queue,
                }
                .go_on(starts)
            },
        ) {
            None => return Bands::QueueThenHeap,
            Some(next) => (grid, below, reached) = next,
        }
    }
}

/// How often the march in arrival order takes over again from the heap before the heap goes
/// on to the end ([`march_alone`]).
const MAX_HAND_OVERS: usize = 16;
/// How many steps beyond the first value out of order the heap marches before the queue takes
/// over again.
const HAND_OVER_STEPS: f64 = 4.0;
