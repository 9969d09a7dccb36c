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
//! - A march of another design is no faster on the maze: `crowdfield.eikonal` (the command's own
//!   solver, one packed word per cell, heap positions in the cells) takes 0.25 s / 0.27 s (order 1
//!   / 2) from Python.

use super::heap::{HeapLines, LINE};
use super::scratch::advise_huge_pages;
use super::widest::with_widest_instructions;
use crate::eikonal::Order;
use crate::error::{Error, OPTIONS, Result, num};
use ndarray::{Array2, ArrayView2, s};

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

/// Writes every cell's word and freezes the contour (scikit-fmm's `initializeFrozen`): a cell
/// where phi is 0 at 0, a cell where phi changes sign towards a neighbour at its interpolated
/// distance, divided by the speed for the travel time. Returns the frozen cells in memory
/// order, whether phi has values of both signs, and the speed of every cell that is not an
/// obstacle if they are all the same; `None` if phi or the speeds have a NaN or infinite value.
/// One pass, row by row, in loops the compiler vectorises.
#[inline(always)]
fn lay_out(
    words: &mut [u64],
    phi: &[f64],
    mask: Option<&[bool]>,
    speed: Option<&[f64]>,
    (rows, cols): (usize, usize),
    spacing: [f64; 2],
) -> Option<Result<(Vec<usize>, bool, Option<f64>)>> {
    let base = MARGIN * cols;
    words[..base].fill(OPEN | MASK);
    words[base + rows * cols..].fill(OPEN | MASK);
    // The cells that take no part: masked, or (travel time) too slow for the quadratic, which
    // scikit-fmm makes obstacles.
    let masked = |k: usize| mask.is_some_and(|m| m[k]) || speed.is_some_and(|s| s[k] < f64::EPSILON);
    let (mut negative, mut positive, mut finite) = (false, false, true);
    let (mut uniform, mut first_speed) = (true, None);
    let mut frozen = Vec::new();
    for r in 0..rows {
        let row = r * cols..(r + 1) * cols;
        let p = &phi[row.clone()];
        let out = &mut words[base + row.start..base + row.end];
        // The values under the mask take no part, whatever they are (NaN included).
        let row_mask = mask.map(|m| &m[row.clone()]);
        let row_speed = speed.map(|s| &s[row.clone()]);
        if let Some(s) = row_speed
            && uniform
            && first_speed.is_none()
        {
            first_speed = match row_mask {
                None => s.iter().copied().find(|&v| v >= f64::EPSILON),
                Some(m) => s
                    .iter()
                    .zip(m)
                    .find(|&(&v, &m)| v >= f64::EPSILON && !m)
                    .map(|(&v, _)| v),
            };
        }
        // A row with no speed yet is all obstacles or masked: no cell compares with it.
        let s0 = first_speed.unwrap_or(f64::NAN);
        let facts = match (row_mask, row_speed) {
            (None, None) => lay_out_row::<false, false>(out, p, &[], &[], s0),
            (Some(m), None) => lay_out_row::<true, false>(out, p, m, &[], s0),
            (None, Some(s)) => lay_out_row::<false, true>(out, p, &[], s, s0),
            (Some(m), Some(s)) => lay_out_row::<true, true>(out, p, m, s, s0),
        };
        negative |= facts.negative;
        positive |= facts.positive;
        finite &= facts.finite;
        uniform &= facts.uniform;
        for c in (0..cols.min(EDGE_COLUMNS)).chain(cols.saturating_sub(EDGE_COLUMNS)..cols) {
            out[c] |= EDGE;
        }
        // The contour: cells at 0 or whose phi changes sign towards a neighbour. The test
        // ignores the mask, so it finds every cell the full test can freeze; the full test
        // runs on the blocks of cells where it finds one.
        let up = if r > 0 {
            &phi[row.start - cols..row.start]
        } else {
            p
        };
        let down = if r + 1 < rows {
            &phi[row.end..row.end + cols]
        } else {
            p
        };
        let crosses = |c: usize| {
            let v = p[c];
            (v == 0.0)
                | (v * up[c] < 0.0)
                | (v * down[c] < 0.0)
                | (c > 0 && v * p[c - 1] < 0.0)
                | (c + 1 < cols && v * p[c + 1] < 0.0)
        };
        const BLOCK: usize = 64;
        for start in (0..cols).step_by(BLOCK) {
            let end = (start + BLOCK).min(cols);
            // The block's cells with both row neighbours, then its first and last cells.
            let (lo, hi) = (start.max(1), end.min(cols - 1));
            let mut crossing = crosses(start) | crosses(end - 1);
            if lo < hi {
                crossing |= p[lo..hi]
                    .iter()
                    .zip(&p[lo - 1..hi - 1])
                    .zip(&p[lo + 1..hi + 1])
                    .zip(up[lo..hi].iter().zip(&down[lo..hi]))
                    .fold(false, |x, (((&v, &l), &r), (&u, &d))| {
                        x | (v == 0.0) | (v * l < 0.0) | (v * r < 0.0) | (v * u < 0.0) | (v * d < 0.0)
                    });
            }
            if !crossing {
                continue;
            }
            for c in start..end {
                let k = row.start + c;
                if masked(k) {
                    continue;
                }
                let v = phi[k];
                let start = if v == 0.0 {
                    Some(0.0)
                } else {
                    contour_distance(phi, masked, (rows, cols), (r, c), spacing).map(|d| {
                        let d = if v < 0.0 { -d } else { d };
                        match speed {
                            Some(s) => (d / s[k]).abs(),
                            None => d,
                        }
                    })
                };
                if let Some(value) = start {
                    words[base + k] = value.to_bits();
                    frozen.push(base + k);
                }
            }
        }
    }
    if !finite {
        return None;
    }
    if frozen.is_empty() {
        // Where the contour is there but every cell on it is too slow, the speeds are to blame.
        let user_masked = |k: usize| mask.is_some_and(|m| m[k]);
        let slow_contour = speed.is_some()
            && (0..rows * cols).any(|k| {
                let (r, c) = (k / cols, k % cols);
                !user_masked(k)
                    && (phi[k] == 0.0
                        || contour_distance(phi, user_masked, (rows, cols), (r, c), spacing).is_some())
            });
        if slow_contour {
            return Some(Err(Error::invalid(
                OPTIONS,
                "speed",
                format!(
                    "below {:e} (machine epsilon, an obstacle) in every cell on phi's zero contour: expected a speed above it somewhere on the contour",
                    f64::EPSILON
                ),
            )));
        }
        return Some(Err(Error::invalid(
            OPTIONS,
            "phi",
            "has no zero contour (no zero level set) outside the mask: expected a value of 0 or a change of sign between neighbours",
        )));
    }
    Some(Ok((
        frozen,
        negative && positive,
        first_speed.filter(|_| uniform),
    )))
}

/// What [`lay_out_row`] finds in a row.
struct RowFacts {
    /// Some phi is below 0.
    negative: bool,
    /// Some phi is above 0.
    positive: bool,
    /// Every phi and speed outside the mask is finite (and the speeds at most [`MAX_SCALE`]).
    finite: bool,
    /// Every speed outside the mask that is not an obstacle is the given one.
    uniform: bool,
}

/// Writes a row's words (open, flagged [`ABOVE_EPSILON`] where `phi > f64::EPSILON`, and
/// [`MASK`] where masked or, with `SPEED`, slower than `f64::EPSILON`) and checks its values,
/// in one loop the compiler vectorises: no branch depends on a value. `mask` and `speed` are
/// read only with `MASKED` and `SPEED`; `s0` is the speed a uniform grid has.
#[inline(always)]
fn lay_out_row<const MASKED: bool, const SPEED: bool>(
    out: &mut [u64],
    phi: &[f64],
    mask: &[bool],
    speed: &[f64],
    s0: f64,
) -> RowFacts {
    let n = out.len();
    let (phi, mask, speed) = (
        &phi[..n],
        if MASKED { &mask[..n] } else { mask },
        if SPEED { &speed[..n] } else { speed },
    );
    let (mut negative, mut positive, mut finite, mut uniform) = (false, false, true, true);
    for k in 0..n {
        let v = phi[k];
        let masked = MASKED && mask[k];
        let mut word = OPEN | (u64::from(v > f64::EPSILON) * ABOVE_EPSILON) | (u64::from(masked) * MASK);
        if SPEED {
            let s = speed[k];
            let slow = s < f64::EPSILON;
            word |= u64::from(slow) * MASK;
            finite &= (s.is_finite() & (s <= MAX_SCALE)) | masked;
            uniform &= (s == s0) | slow | masked;
        }
        finite &= v.is_finite() | masked;
        negative |= v < 0.0;
        positive |= v > 0.0;
        out[k] = word;
    }
    RowFacts {
        negative,
        positive,
        finite,
        uniform,
    }
}

/// The distance from cell `(r, c)` to the zero contour where phi changes sign towards an
/// unmasked neighbour (scikit-fmm's interpolation: per axis the nearer crossing
/// `h phi / (phi - phi_neighbour)`, combined as `1 / sqrt(sum 1 / d^2)`); `None` where it
/// changes sign towards none. A crossing so near that its quotient underflows to 0 puts the
/// cell on the contour, at 0 (scikit-fmm skips it as no crossing, starts the cell at `+inf`
/// where it is the only one, and its neighbours at NaN).
#[inline]
fn contour_distance(
    phi: &[f64],
    masked: impl Fn(usize) -> bool,
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
        if d == 0.0 {
            return Some(0.0);
        }
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

/// What a march reads and writes: the grid's words, row after row, after [`MARGIN`] rows of
/// masked cells and before as many, and the input it reads in place.
struct Grid<'a> {
    cols: usize,
    /// Index of cell `(0, 0)`: `MARGIN * cols`; the input arrays are indexed by a cell's index
    /// minus `base`.
    base: usize,
    words: &'a mut [u64],
    phi: &'a [f64],
    /// The speeds for the travel time; empty for the distance.
    speed: &'a [f64],
    /// Whether phi has values of both signs (else no product of two is negative).
    mixed_signs: bool,
    /// `1 / speed^2` where every cell that is not an obstacle has the same speed (a march
    /// with `UNIFORM` reads it), else NaN.
    uniform_rhs: f64,
    /// `1 / h^2` per axis.
    idx2: [f64; 2],
}

impl Grid<'_> {
    /// The time of the longer of the two axes' steps between neighbours, at the one speed of
    /// a march over one speed (1 for the distance).
    fn step_time(&self) -> f64 {
        let rhs = if self.uniform_rhs.is_nan() {
            1.0
        } else {
            self.uniform_rhs
        };
        (rhs / self.idx2[0].min(self.idx2[1])).sqrt()
    }
}

/// One march: second or first order (`SECOND`), signed distance or travel time (`DISTANCE`),
/// one speed everywhere or a speed per cell (`UNIFORM`; always for the distance).
struct Marcher<'a, B, const SECOND: bool, const DISTANCE: bool, const UNIFORM: bool> {
    grid: Grid<'a>,
    band: B,
}

impl<'a, B: Band, const SECOND: bool, const DISTANCE: bool, const UNIFORM: bool>
    Marcher<'a, B, SECOND, DISTANCE, UNIFORM>
{
    #[inline(always)]
    fn new(grid: Grid<'a>) -> Self {
        Marcher {
            grid,
            band: B::default(),
        }
    }

    /// The word of cell `i`.
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        debug_assert!(i < self.grid.words.len());
        // SAFETY: the march reads the words of grid cells and of their neighbours up to two
        // cells away along a row (within the row: `in_row` or a cell away from the edge
        // columns) or two rows away (within the margin rows of masked cells), all inside
        // `words`, whose length `march` checks against `buffer_len`.
        unsafe { *self.grid.words.get_unchecked(i) }
    }

    /// Sets the word of cell `i` (a grid cell, as [`Marcher::word`] reads).
    #[inline(always)]
    fn set_word(&mut self, i: usize, word: u64) {
        debug_assert!(i < self.grid.words.len());
        // SAFETY: as `word`.
        unsafe { *self.grid.words.get_unchecked_mut(i) = word }
    }

    /// Whether the cell `steps` cells from cell `i` along its row is inside the grid (always,
    /// unless `i` is flagged [`EDGE`]).
    #[inline(always)]
    fn in_row(&self, i: usize, edge: bool, steps: isize) -> bool {
        if !edge {
            return true;
        }
        std::hint::cold_path();
        let c = ((i - self.grid.base) % self.grid.cols) as isize + steps;
        c >= 0 && c < self.grid.cols as isize
    }

    /// The value of the cell `steps` cells from `i` along `axis`: NaN where that cell is not
    /// frozen or (`AT_EDGE`) outside the row.
    #[inline(always)]
    fn read<const AT_EDGE: bool>(&self, i: usize, axis: usize, steps: isize) -> f64 {
        let g = &self.grid;
        let n = if axis == 0 {
            i.wrapping_add_signed(steps * g.cols as isize)
        } else if AT_EDGE && !self.in_row(i, true, steps) {
            return f64::NAN;
        } else {
            i.wrapping_add_signed(steps)
        };
        f64::from_bits(self.word(n))
    }

    /// Gives every far cell beside a frozen one its first value (scikit-fmm's
    /// `initalizeNarrow`; it visits the cells in memory order, but the values depend only on
    /// the frozen cells, and the march's order only on the values), then marches.
    #[inline(always)]
    fn run(mut self, frozen: &[usize]) -> Option<(Grid<'a>, f64, Option<Vec<u32>>)> {
        let w = self.grid.cols as isize;
        for &f in frozen {
            for (dir, along_row) in [(-w, false), (-1, true), (1, true), (w, false)] {
                if along_row && !self.in_row(f, true, dir) {
                    continue;
                }
                let i = f.wrapping_add_signed(dir);
                let word = self.word(i);
                if !frozen_word_or_state(word, FAR) {
                    continue;
                }
                let d = self.update(i);
                let handle = self.band.push(i as u32, d, 0.0);
                self.set_word(i, word | NARROW | u64::from(handle));
            }
        }
        if B::IN_VALUE_ORDER {
            self.march::<false>(f64::INFINITY);
            return None;
        }
        self.go_on(frozen)
    }

    /// The march in arrival order from the band as it is; `None` once every cell is frozen,
    /// else the grid, the `|value|` below which the frozen cells are the heap's, and the cells
    /// the queue reached ([`Band::reached`]).
    #[inline(always)]
    fn go_on(mut self, contour: &[usize]) -> Option<(Grid<'a>, f64, Option<Vec<u32>>)> {
        let out_of_order = self.march_in_arrival_order(contour)?;
        let below = out_of_order.min(self.band.smallest());
        let reached = self.band.reached().map(<[u32]>::to_vec);
        Some((self.grid, below, reached))
    }

    /// Goes on with the march from the cells of `|value|` below `below`, after a march in
    /// arrival order ([`Fifo`]) found a cell out of order whose `|value|` is not below it and
    /// no cell in the band below it. Every cell the heap's march freezes below `below` is
    /// then frozen, at the heap's value: all cells frozen so far passed their checks, and a
    /// cell of smaller value reached later would have failed them. The other cells become
    /// far again (but the contour's, `contour`), the cells beside a frozen one get their
    /// values from the frozen cells, and the march goes on with the heap as if it had frozen
    /// the cells below `below` itself, up to `hand_over_at`, where the band goes back to a
    /// queue ([`Resumed::HandOver`]). [`Resumed::Again`] where the band holds a value below
    /// `below` (some cell below it is not frozen) or an update of 0 (which the heap's march
    /// skips): the grid must be laid out again. `reached`: the cells the queue reached, where
    /// it kept them (the cells to make far again and to look beside), else every cell is
    /// looked at.
    #[inline(always)]
    fn resume(
        mut self,
        contour: &[usize],
        below: f64,
        reached: Option<Vec<u32>>,
        hand_over_at: f64,
    ) -> Resumed<'a> {
        let (base, cols) = (self.grid.base, self.grid.cols);
        let w = cols as isize;
        let all = base..self.grid.words.len() - MARGIN * cols;
        // The cells the queue reached (where it knows them all: `reached`), else every cell.
        let touched: Box<dyn Iterator<Item = usize>> = match &reached {
            Some(cells) => Box::new(cells.iter().map(|&c| c as usize)),
            None => Box::new(all.clone()),
        };
        for i in touched {
            let word = self.word(i);
            if frozen(word) {
                // The contour's cells are never in the queue.
                let on_contour = reached.is_none() && contour.binary_search(&i).is_ok();
                if !is_below(f64::from_bits(word).abs(), below) && !on_contour {
                    self.set_word(i, self.far_word(i));
                }
            } else if word & STATE == NARROW {
                self.set_word(i, word & !(STATE | HANDLE));
            }
        }
        // The cells beside a frozen one: beside the contour or a cell the queue reached, or
        // reached by the queue and beside a cell frozen before (by the heap, from which the
        // queue took over).
        let near: Box<dyn Iterator<Item = usize>> = match &reached {
            Some(cells) => Box::new(contour.iter().copied().chain(cells.iter().map(|&c| c as usize))),
            None => Box::new(all),
        };
        for f in near {
            // A frozen word keeps no flags.
            let c = (f - base) % cols;
            let edge = c < EDGE_COLUMNS || c + EDGE_COLUMNS >= cols;
            let beside = [(-w, false), (w, false), (-1, true), (1, true)].map(|(dir, along_row)| {
                (!along_row || self.in_row(f, edge, dir)).then(|| f.wrapping_add_signed(dir))
            });
            let candidates: &[Option<usize>] = if frozen(self.word(f)) {
                &beside
            } else if beside.iter().flatten().any(|&n| frozen(self.word(n))) {
                &[Some(f)]
            } else {
                &[]
            };
            for &i in candidates.iter().flatten() {
                let word = self.word(i);
                if !frozen_word_or_state(word, FAR) {
                    continue;
                }
                let d = self.update(i);
                // The heap would have frozen the cell before some frozen one.
                if d == 0.0 || !self.as_the_heap(i, d, contour) {
                    return Resumed::Again;
                }
                let handle = self.band.push(i as u32, d, 0.0);
                self.set_word(i, word | NARROW | u64::from(handle));
            }
        }
        if self.band.peek().is_some_and(|first| first < below) {
            return Resumed::Again;
        }
        self.march::<true>(hand_over_at);
        if self.band.peek().is_none() {
            return Resumed::Done;
        }
        // The band, in the heap's order, to a queue.
        let mut queue = Fifo::default();
        while let Some((cell, v, _)) = self.band.pop() {
            let handle = queue.push(cell, v, hand_over_at);
            let word = self.word(cell as usize);
            self.set_word(cell as usize, (word & !HANDLE) | u64::from(handle));
        }
        Resumed::HandOver(self.grid, Box::new(queue))
    }

    /// The word of cell `i` (not masked) before the march reaches it, as [`lay_out`] writes it.
    fn far_word(&self, i: usize) -> u64 {
        let (base, cols) = (self.grid.base, self.grid.cols);
        let c = (i - base) % cols;
        OPEN | (u64::from(self.grid.phi[i - base] > f64::EPSILON) * ABOVE_EPSILON)
            | (u64::from(c < EDGE_COLUMNS || c + EDGE_COLUMNS >= cols) * EDGE)
    }

    /// Whether the update of the frozen cell `i` with the frozen cell `hidden` left out gives
    /// its value, bit for bit.
    #[cold]
    fn update_without(&mut self, i: usize, hidden: usize) -> bool {
        let (word, hidden_word) = (self.word(i), self.word(hidden));
        self.set_word(i, self.far_word(i));
        self.set_word(hidden, OPEN);
        let d = self.update(i);
        self.set_word(i, word);
        self.set_word(hidden, hidden_word);
        d.to_bits() == word
    }

    /// Freezes cell `i` at `v`; whether it is flagged [`EDGE`].
    #[inline(always)]
    fn freeze(&mut self, i: usize, v: f64) -> bool {
        let edge = self.word(i) & EDGE != 0;
        self.set_word(i, if v.is_nan() { f64::NAN } else { v }.to_bits());
        edge
    }

    /// The fast-marching loop (scikit-fmm's `solve`, with no narrow-band limit); with `BELOW`,
    /// only while the band's smallest `|value|` is below `below`.
    #[inline(always)]
    fn march<const BELOW: bool>(&mut self, below: f64) {
        let mut ties: Vec<(usize, bool)> = Vec::new();
        loop {
            if BELOW && !self.band.peek().is_some_and(|first| first < below) {
                break;
            }
            let Some((first, v, _)) = self.band.pop() else {
                break;
            };
            let edge = self.freeze(first as usize, v);
            let key = v.abs();
            if self.band.peek() != Some(key) {
                self.prefetch_next();
                self.relax_around(first as usize, edge, key);
                continue;
            }
            // Cells of the same value are frozen together before any is relaxed around.
            ties.clear();
            ties.push((first as usize, edge));
            while self.band.peek() == Some(key) {
                let (i, v, _) = self.band.pop().expect("peeked");
                let edge = self.freeze(i as usize, v);
                ties.push((i as usize, edge));
            }
            self.prefetch_next();
            for &(i, edge) in &ties {
                self.relax_around(i, edge, key);
            }
        }
    }

    /// The march with a first-in, first-out band: cells freeze in the order they were first
    /// reached, which on most grids of one speed is the order of their values wherever it
    /// matters. Where it is, the values are the heap's, bit for bit (see [`Fifo`]); `false` as
    /// soon as a cell freezes after a neighbour its update reads whose value is not smaller,
    /// and then the values are not to be used.
    #[inline(always)]
    fn march_in_arrival_order(&mut self, contour: &[usize]) -> Option<f64> {
        while let Some((first, v, check)) = self.band.pop() {
            if check && !self.as_the_heap(first as usize, v, contour) {
                return Some(v.abs());
            }
            let edge = self.freeze(first as usize, v);
            self.prefetch_next();
            if !self.relax_around(first as usize, edge, v.abs()) {
                return Some(v.abs());
            }
        }
        None
    }

    /// Whether the heap's march would have given cell `i`, of `|value|` `key`, the value it
    /// has, for a cell whose updates came in another order than the heap's: for each
    /// `|value|` `t` of the frozen cells its update reads (but the contour's, `contour`, frozen
    /// from the start), the update from the frozen cells below `t` (the heap's value for the
    /// cell before the cells at `t` freeze) is above `t`, so the heap would not have frozen
    /// the cell before them. The cell's value itself is the update from all of them, and the
    /// march checks they are all below `key` as it freezes the cell.
    #[cold]
    #[inline(never)]
    fn as_the_heap(&mut self, i: usize, value: f64, contour: &[usize]) -> bool {
        let key = value.abs();
        // A cell of `|value|` `key` beyond a neighbour at 0, which scikit-fmm's stencil reads
        // whatever its value: the heap freezes it with this one, and neither reads the other.
        let mut tied: Option<(usize, u64)> = None;
        let w = self.grid.cols as isize;
        let edge = self.word(i) & EDGE != 0;
        // The frozen cells the update reads, but the contour's: (cell, word, a neighbour).
        let mut read = [(0, 0, false); 8];
        let mut len = 0;
        let mut contour_beside = false;
        // The frozen neighbours along each axis.
        let mut beside = [0; 2];
        for (dir, along_row) in [(-w, false), (w, false), (-1, true), (1, true)] {
            for steps in 1..=if SECOND { 2 } else { 1 } {
                if along_row && !self.in_row(i, edge, steps * dir) {
                    break;
                }
                let j = i.wrapping_add_signed(steps * dir);
                let word = self.word(j);
                if !frozen(word) {
                    continue;
                }
                if steps == 1 {
                    // A neighbour at 0 makes the stencil read the cell beyond whatever its
                    // value: no shortcut.
                    beside[usize::from(along_row)] += if SECOND && f64::from_bits(word) == 0.0 {
                        2
                    } else {
                        1
                    };
                }
                if contour.binary_search(&j).is_ok() {
                    contour_beside |= steps == 1;
                    continue;
                }
                let v = f64::from_bits(word).abs();
                if !is_below(v, key) {
                    let beyond_zero =
                        steps == 2 && f64::from_bits(self.word(j.wrapping_add_signed(-dir))) == 0.0;
                    if beyond_zero && v == key && tied.is_none() {
                        tied = Some((j, word));
                        continue;
                    }
                    if steps == 1 || beyond_zero {
                        return false;
                    }
                    // Frozen after this cell in the heap's march, and beyond a neighbour
                    // nearer the contour than either and not at 0, so neither reads the
                    // other.
                    continue;
                }
                read[len] = (j, word, steps == 1);
                len += 1;
            }
        }
        let key_of = |word: u64| f64::from_bits(word).abs();
        if beside.iter().all(|&n| n <= 1) && !(SECOND && DISTANCE) && tied.is_none() {
            // With at most one frozen neighbour per axis, the frozen cells below `t` leave out
            // whole axes of the update, and an axis less raises the quadratic's root (each axis
            // adds a square that grows with the value): the update from the cells below `t` is
            // at least the cell's value, which is above every `t`. Where the margin beats the
            // rounding (cancellation in the discriminant grows as the square of the value over
            // one step's time, here bounded a hundred times over), the updates are not needed.
            let top = read[..len].iter().map(|r| key_of(r.1)).fold(0.0, f64::max);
            let step = (self.rhs(i) / self.grid.idx2[0].max(self.grid.idx2[1])).sqrt();
            let rounding = (key * key / step + key) * ROUNDING;
            let as_the_heap = key - top > rounding;
            #[cfg(test)]
            if as_the_heap {
                // The updates agree.
                assert!(self.as_the_heap_by_updates(i, value, &read[..len], None, contour_beside));
            }
            if as_the_heap {
                return true;
            }
        }
        self.as_the_heap_by_updates(i, value, &read[..len], tied, contour_beside)
    }

    /// [`Marcher::as_the_heap`] by the updates: `read` the frozen cells the cell's update reads
    /// (cell, word, a neighbour), but the contour's; `tied` a frozen cell the heap's update
    /// would not read, of the cell's `|value|` (left out of every update, and the cell's
    /// `value` checked as the update without it); `contour_beside` whether a neighbour is on
    /// the contour.
    fn as_the_heap_by_updates(
        &mut self,
        i: usize,
        value: f64,
        read: &[(usize, u64, bool)],
        tied: Option<(usize, u64)>,
        contour_beside: bool,
    ) -> bool {
        if let Some((k, _)) = tied {
            self.set_word(k, OPEN);
        }
        let as_the_heap = self.levels_as_the_heap(i, read, contour_beside)
            && (tied.is_none() || self.update(i).to_bits() == value.to_bits());
        if let Some((k, word)) = tied {
            self.set_word(k, word);
        }
        as_the_heap
    }

    /// The levels of [`Marcher::as_the_heap_by_updates`].
    fn levels_as_the_heap(&mut self, i: usize, read: &[(usize, u64, bool)], contour_beside: bool) -> bool {
        let key_of = |word: u64| f64::from_bits(word).abs();
        let len = read.len();
        for at in 0..len {
            let t = key_of(read[at].1);
            // Each `|value|` once: the first cell that has it.
            if read[..at].iter().any(|r| key_of(r.1) == t) {
                continue;
            }
            // Before any neighbour freezes, the heap has no value for the cell.
            let reached = contour_beside || read[..len].iter().any(|r| r.2 && key_of(r.1) < t);
            if !reached {
                continue;
            }
            for r in &read[..len] {
                if key_of(r.1) >= t {
                    self.set_word(r.0, OPEN);
                }
            }
            let before = self.update(i);
            for r in &read[..len] {
                self.set_word(r.0, r.1);
            }
            if !is_below(t, before.abs()) {
                return false;
            }
        }
        true
    }

    /// Asks for the row of the cell the next pop most likely gives, the heap's first now, and
    /// the rows beside it, while the cells just frozen are relaxed around.
    #[inline(always)]
    fn prefetch_next(&self) {
        if let Some(next) = self.band.first_cell() {
            let (next, w) = (next as usize, self.grid.cols);
            self.prefetch(next - w);
            self.prefetch(next);
            self.prefetch(next + w);
        }
    }

    /// Updates the cells whose values now depend on the newly frozen cell `i` (flagged
    /// [`EDGE`] if `edge`): its far and narrow neighbours and, in second order, the narrow
    /// cells two steps away beyond a frozen neighbour, in scikit-fmm's order (rows -, rows +,
    /// columns -, columns +). An update reads frozen cells only, and none freezes before the
    /// next pop, so each value goes to the band as soon as it is computed. With a band not in
    /// value order, whether every frozen cell the update of `i` could have read (the
    /// neighbours and, in second order, the cells beyond a frozen neighbour) has a `|value|`
    /// below `i`'s, `key`; the relaxing stops at the first that has not. Always `true` with
    /// the heap.
    #[inline(always)]
    fn relax_around(&mut self, i: usize, edge: bool, key: f64) -> bool {
        let w = self.grid.cols as isize;
        self.relax_toward(i, edge, key, -w, false)
            && self.relax_toward(i, edge, key, w, false)
            && self.relax_toward(i, edge, key, -1, true)
            && self.relax_toward(i, edge, key, 1, true)
    }

    /// Whether a frozen word's `|value|` is below `key`; always with the heap, whose pops
    /// come in value order.
    #[inline(always)]
    fn below(word: u64, key: f64) -> bool {
        B::IN_VALUE_ORDER || is_below(f64::from_bits(word).abs(), key)
    }

    /// [`Marcher::relax_around`] in the direction `dir` (a step along the row if `along_row`).
    #[inline(always)]
    fn relax_toward(&mut self, i: usize, edge: bool, key: f64, dir: isize, along_row: bool) -> bool {
        if along_row && !self.in_row(i, edge, dir) {
            return true;
        }
        let j = i.wrapping_add_signed(dir);
        let word = self.word(j);
        let target = if !frozen(word) {
            if word & STATE == MASK {
                return true;
            }
            j
        } else if !Self::below(word, key) {
            std::hint::cold_path();
            return false;
        } else if SECOND && (!along_row || self.in_row(i, edge, 2 * dir)) {
            let k = j.wrapping_add_signed(dir);
            let beyond = self.word(k);
            if !B::IN_VALUE_ORDER
                && frozen(beyond)
                && f64::from_bits(word) == 0.0
                && !Self::below(beyond, key)
            {
                // Beyond a neighbour at 0, scikit-fmm's second-order stencil reads a frozen
                // cell whatever its value (see `second_order_coefficients`). The heap freezes
                // a cell of the same value with this one, and neither reads the other.
                std::hint::cold_path();
                if f64::from_bits(beyond).abs() != key || !self.update_without(i, k) {
                    return false;
                }
            }
            if !frozen_word_or_state(beyond, NARROW) {
                return true;
            }
            k
        } else {
            return true;
        };
        let d = self.update(target);
        if d == 0.0 {
            std::hint::cold_path();
            return true;
        }
        let word = self.word(target);
        if word & STATE == NARROW {
            let handle = (word & HANDLE) as u32;
            match self.band.relax(handle, key) {
                Relax::Update => self.band.set(handle, d),
                Relax::Tie => {}
                Relax::Fail => {
                    std::hint::cold_path();
                    return false;
                }
            }
        } else {
            let handle = self.band.push(target as u32, d, key);
            self.set_word(target, word | NARROW | u64::from(handle));
            if !along_row {
                // When this cell freezes, the update of its neighbour across the row reads the
                // row beyond: ask for that cache line now, while other cells freeze.
                self.prefetch(target.wrapping_add_signed(2 * dir));
            }
        }
        true
    }

    /// Starts loading the cache line of cell `i`'s word (a grid cell or one in the margin rows).
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        debug_assert!(i < self.grid.words.len());
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch reads nothing the program sees and cannot fault; the address is
        // inside `words`.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(self.grid.words.as_ptr().wrapping_add(i).cast());
        }
    }

    /// Right-hand side of cell `i`'s quadratic: `1` for the distance, `1 / speed^2` for the
    /// travel time.
    #[inline(always)]
    fn rhs(&self, i: usize) -> f64 {
        if DISTANCE {
            1.0
        } else if UNIFORM {
            self.grid.uniform_rhs
        } else {
            let s = self.grid.speed[i - self.grid.base];
            1.0 / (s * s)
        }
    }

    /// Whether cell `i` (not frozen) takes the quadratic's upper root: always for the travel
    /// time, where `phi > f64::EPSILON` for the distance.
    #[inline(always)]
    fn upper_root(&self, i: usize) -> bool {
        !DISTANCE || self.word(i) & ABOVE_EPSILON != 0
    }

    /// `(a, b, c)` of cell `i`'s quadratic in the march's order.
    #[inline(always)]
    fn coefficients(&self, i: usize) -> (f64, f64, f64) {
        let edge = self.word(i) & EDGE != 0;
        match (SECOND, edge) {
            (true, false) => self.second_order_coefficients::<false>(i, [true, true]),
            (true, true) => self.second_order_coefficients::<true>(i, [true, true]),
            (false, false) => self.first_order_coefficients::<false>(i),
            (false, true) => self.first_order_coefficients::<true>(i),
        }
    }

    /// A cell's value where its quadratic `(a, b, _)` has no real root: scikit-fmm's fallbacks.
    #[cold]
    fn no_real_root(&self, i: usize, a: f64, b: f64) -> f64 {
        if !SECOND {
            // The vertex of the first-order quadratic.
            return -b / (2.0 * a);
        }
        if DISTANCE {
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
    #[inline(always)]
    fn update(&self, i: usize) -> f64 {
        if SECOND {
            self.update_second(i)
        } else {
            self.update_first(i)
        }
    }

    /// scikit-fmm's `updatePointOrderOne`: the upwind quadratic over each axis's frozen
    /// neighbour nearer the contour; where it has no real root, its vertex `-b / 2a`.
    #[inline(always)]
    fn update_first(&self, i: usize) -> f64 {
        let (a, b, c) = if self.word(i) & EDGE != 0 {
            self.first_order_coefficients::<true>(i)
        } else {
            self.first_order_coefficients::<false>(i)
        };
        self.root(i, a, b, c).unwrap_or_else(|| -b / (2.0 * a))
    }

    /// `(a, b, c)` of the first-order quadratic `a u^2 + b u + c = rhs`: per axis, the frozen
    /// neighbour nearer the contour. Written without branches: an axis with no frozen
    /// neighbour adds exact zeros, which change no sum (`a` and `c` are never `-0.0`, and
    /// `b - 0.0` is `b`).
    #[inline(always)]
    fn first_order_coefficients<const AT_EDGE: bool>(&self, i: usize) -> (f64, f64, f64) {
        let (mut a, mut b, mut cc) = (0.0, 0.0, 0.0);
        for axis in 0..2 {
            // scikit-fmm's scan: the first neighbour nearer than NONE, then the second if
            // strictly nearer (NaN, not frozen, is never nearer).
            let (x, y) = (
                self.read::<AT_EDGE>(i, axis, -1),
                self.read::<AT_EDGE>(i, axis, 1),
            );
            let v = if x.abs() < NONE { x } else { NONE };
            let v = if y.abs() < v.abs() { y } else { v };
            let found = v < NONE;
            let k = if found { self.grid.idx2[axis] } else { 0.0 };
            let v = if found { v } else { 0.0 };
            a += k;
            b -= k * 2.0 * v;
            cc += k * (v * v);
        }
        (a, b, cc)
    }

    /// scikit-fmm's `updatePointOrderTwo` over both axes, with its fallbacks where the
    /// quadratic has no real root: the first-order update for the distance, the smaller of the
    /// one-axis solutions for the travel time.
    #[inline(always)]
    fn update_second(&self, i: usize) -> f64 {
        let (a, b, c) = self.coefficients(i);
        match self.root(i, a, b, c) {
            Some(v) => v,
            None => self.no_real_root(i, a, b),
        }
    }

    /// The second-order quadratic over the axes in `use_axis`, or `None` where it has no real
    /// root.
    fn second_order_axes(&self, i: usize, use_axis: [bool; 2]) -> Option<f64> {
        let (a, b, c) = if self.word(i) & EDGE != 0 {
            self.second_order_coefficients::<true>(i, use_axis)
        } else {
            self.second_order_coefficients::<false>(i, use_axis)
        };
        self.root(i, a, b, c)
    }

    /// `(a, b, c)` of the second-order quadratic over the axes in `use_axis`: per axis the
    /// one-sided `(3 u - 4 v1 + v2) / 2` stencil where `v2` qualifies, else first order.
    #[inline(always)]
    fn second_order_coefficients<const AT_EDGE: bool>(
        &self,
        i: usize,
        use_axis: [bool; 2],
    ) -> (f64, f64, f64) {
        let (mut a, mut b, mut cc) = (0.0, 0.0, 0.0);
        for axis in 0..2 {
            if !use_axis[axis] {
                continue;
            }
            let (mut v1, mut v2) = (NONE, NONE);
            for steps in [-1, 1] {
                let near = self.read::<AT_EDGE>(i, axis, steps);
                // Not frozen (NaN), or not nearer the contour.
                if near.abs().partial_cmp(&v1.abs()) != Some(std::cmp::Ordering::Less) {
                    continue;
                }
                v1 = near;
                // As scikit-fmm: v2 keeps a value found on the other side if this side has none.
                let far = self.read::<AT_EDGE>(i, axis, 2 * steps);
                if (far <= v1 && v1 >= 0.0) || (far >= v1 && v1 <= 0.0) {
                    v2 = far;
                    if !DISTANCE && self.grid.mixed_signs {
                        let step = if axis == 0 { self.grid.cols as isize } else { 1 };
                        let phi = |n: isize| self.grid.phi[i.wrapping_add_signed(n * step) - self.grid.base];
                        let (phi_i, phi_near, phi_far) = (phi(0), phi(steps), phi(2 * steps));
                        if phi_far * phi_near < 0.0 || phi_far * phi_i < 0.0 {
                            v2 = -v2;
                        }
                    }
                }
            }
            let k = self.grid.idx2[axis];
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
        let c = c - self.rhs(i);
        let det = b * b - 4.0 * a * c;
        if det < 0.0 {
            return None;
        }
        Some(if self.upper_root(i) {
            (-b + det.sqrt()) / 2.0 / a
        } else {
            (-b - det.sqrt()) / 2.0 / a
        })
    }
}

/// Whether an open word has this state (a frozen word has none).
#[inline(always)]
fn frozen_word_or_state(word: u64, state: u64) -> bool {
    !frozen(word) && word & STATE == state
}

/// A bound on the rounding of an update relative to `(value^2 / step + value)`, `step` one step's
/// time ([`Marcher::as_the_heap`]): about a hundred times the largest seen in the analysis of
/// the quadratic's terms.
const ROUNDING: f64 = 1.0 / (1u64 << 43) as f64;

/// Whether `a < b`: `false` where either is NaN.
#[inline(always)]
fn is_below(a: f64, b: f64) -> bool {
    a < b
}

/// What [`Band::relax`] says of an update.
enum Relax {
    /// The heap would update the cell.
    Update,
    /// The heap would freeze the cell with the one whose freezing led to the update, and not
    /// update it.
    Tie,
    /// The heap would have frozen the cell before.
    Fail,
}

/// The narrow band of a march: the cells reached and not frozen, each with the value of its
/// last update, found again through the handle `push` gives.
trait Band: Default {
    /// Whether `pop` gives the smallest `|value|` (the heap) rather than the cell reached
    /// first (the first-in, first-out queue).
    const IN_VALUE_ORDER: bool;
    /// Adds `cell` with value `v`, from an update that follows the freezing of a cell whose
    /// `|value|` is `key`; its handle.
    fn push(&mut self, cell: u32, v: f64, key: f64) -> u32;
    /// What to do with the update of the cell of `handle` that follows the freezing of a cell
    /// whose `|value|` is `key`, as the heap would: where every earlier update followed a cell
    /// of smaller `|value|`, the heap holds the value the cell has, so a cell whose `|value|`
    /// is `key` would have frozen with the one that did ([`Relax::Tie`]), and one below it
    /// before it ([`Relax::Fail`]). Where an earlier update followed a cell of `|value|` `key`
    /// or more, the updates come in another order than the heap's, and [`Band::pop`] asks for
    /// the check. Always [`Relax::Update`] with the heap.
    fn relax(&mut self, handle: u32, key: f64) -> Relax;
    /// Gives the entry of `handle` the value `v`.
    fn set(&mut self, handle: u32, v: f64);
    /// The next cell to freeze, its value, and whether [`Marcher::as_the_heap`] must check it
    /// (never with the heap), taken out of the band.
    fn pop(&mut self) -> Option<(u32, f64, bool)>;
    /// The `|value|` of the cell `pop` gives next (the heap only: the march freezes equal
    /// values together).
    fn peek(&self) -> Option<f64>;
    /// The cell `pop` gives next.
    fn first_cell(&self) -> Option<u32>;
    /// The smallest `|value|` in the band (`+inf` if none).
    fn smallest(&self) -> f64;
    /// Every cell ever pushed, where the band still knows them all.
    fn reached(&self) -> Option<&[u32]>;
}

impl<const SIGNED: bool> Band for Heap<SIGNED> {
    const IN_VALUE_ORDER: bool = true;
    #[inline(always)]
    fn push(&mut self, cell: u32, v: f64, _key: f64) -> u32 {
        Heap::push(self, cell, v)
    }
    #[inline(always)]
    fn relax(&mut self, _handle: u32, _key: f64) -> Relax {
        Relax::Update
    }
    #[inline(always)]
    fn set(&mut self, handle: u32, v: f64) {
        Heap::set(self, handle, v)
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<(u32, f64, bool)> {
        Heap::pop(self).map(|(cell, v)| (cell, v, false))
    }
    #[inline(always)]
    fn peek(&self) -> Option<f64> {
        Heap::peek(self)
    }
    #[inline(always)]
    fn first_cell(&self) -> Option<u32> {
        Heap::first_cell(self)
    }
    fn smallest(&self) -> f64 {
        Heap::peek(self).unwrap_or(f64::INFINITY)
    }
    fn reached(&self) -> Option<&[u32]> {
        None
    }
}

/// The narrow band as a first-in, first-out queue: cells freeze in the order the front first
/// reached them, with no ordering work at all. The march checks, as each cell freezes, that the
/// heap's march would have given it the same value:
/// - every frozen cell its update reads has a smaller `|value|` (so a cell of smaller value
///   that freezes later fails this check when it freezes, and one that froze earlier updated
///   the cell: the cell's last update read exactly the cells below it, all final, as the
///   heap's does);
/// - before each update, the cell's value was above the `|value|` of the cell whose freezing
///   led to the update (else the heap would have frozen it first; at the same value, the heap
///   freezes the two together and skips the update: [`Relax::Tie`]);
/// - where its updates came in another order than the heap's, the heap's own steps hold
///   ([`Marcher::as_the_heap`]).
///
/// Where a check fails, the heap goes on ([`Marcher::resume`]).
struct Fifo {
    /// The cell in each slot of the ring.
    cells: Vec<u32>,
    /// The value in each slot of the ring.
    values: Vec<f64>,
    /// The `|value|` of the cell whose freezing led to the last update, in each slot of the
    /// ring.
    after: Vec<f64>,
    /// The handle of the first entry; an entry's slot is its handle modulo the ring's length,
    /// a power of two.
    head: u32,
    /// The handle the next push gives.
    tail: u32,
    /// Every cell pushed, until there are [`REACHED_KEPT`] of them.
    reached: Vec<u32>,
    /// Whether more cells were pushed than `reached` keeps.
    reached_more: bool,
}

/// The most cells a [`Fifo`] keeps the list of, for the heap to take over from them rather than
/// from every cell ([`Marcher::resume`]): 4 MiB.
const REACHED_KEPT: usize = 1 << 20;

impl Default for Fifo {
    fn default() -> Self {
        Fifo {
            cells: vec![0; 1024],
            values: vec![0.0; 1024],
            after: vec![0.0; 1024],
            head: 0,
            tail: 0,
            reached: Vec::new(),
            reached_more: false,
        }
    }
}

impl Fifo {
    /// The slot of `handle`.
    #[inline(always)]
    fn slot(&self, handle: u32) -> usize {
        handle as usize & (self.cells.len() - 1)
    }

    /// Doubles the ring, each entry to the slot of its handle in the longer ring.
    #[cold]
    fn grow(&mut self) {
        let len = self.cells.len() * 2;
        let (mut cells, mut values, mut after) = (vec![0; len], vec![0.0; len], vec![0.0; len]);
        let mut handle = self.head;
        while handle != self.tail {
            let (from, to) = (self.slot(handle), handle as usize & (len - 1));
            cells[to] = self.cells[from];
            values[to] = self.values[from];
            after[to] = self.after[from];
            handle = handle.wrapping_add(1);
        }
        self.cells = cells;
        self.values = values;
        self.after = after;
    }
}

impl Band for Fifo {
    const IN_VALUE_ORDER: bool = false;

    #[inline(always)]
    fn push(&mut self, cell: u32, v: f64, key: f64) -> u32 {
        if self.tail.wrapping_sub(self.head) as usize == self.cells.len() {
            self.grow();
        }
        let (handle, at) = (self.tail, self.slot(self.tail));
        if self.reached.len() < REACHED_KEPT {
            self.reached.push(cell);
        } else {
            self.reached_more = true;
        }
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: `slot` is below the ring's length, a power of two.
        unsafe {
            *self.cells.get_unchecked_mut(at) = cell;
            *self.values.get_unchecked_mut(at) = v;
            *self.after.get_unchecked_mut(at) = key;
        }
        handle
    }

    #[inline(always)]
    fn relax(&mut self, handle: u32, key: f64) -> Relax {
        let at = self.slot(handle);
        // SAFETY: as `push`.
        unsafe {
            let after = self.after.get_unchecked_mut(at);
            if key > *after {
                *after = key;
                let now = self.values.get_unchecked(at).abs();
                if now > key {
                    Relax::Update
                } else if now == key {
                    Relax::Tie
                } else {
                    Relax::Fail
                }
            } else {
                std::hint::cold_path();
                *after = f64::INFINITY;
                Relax::Update
            }
        }
    }

    #[inline(always)]
    fn set(&mut self, handle: u32, v: f64) {
        let at = self.slot(handle);
        // SAFETY: as `push`.
        unsafe { *self.values.get_unchecked_mut(at) = v }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<(u32, f64, bool)> {
        if self.head == self.tail {
            return None;
        }
        let at = self.slot(self.head);
        self.head = self.head.wrapping_add(1);
        // SAFETY: as `push`.
        unsafe {
            Some((
                *self.cells.get_unchecked(at),
                *self.values.get_unchecked(at),
                *self.after.get_unchecked(at) == f64::INFINITY,
            ))
        }
    }

    fn peek(&self) -> Option<f64> {
        unreachable!("the queue's march does not look ahead")
    }

    #[inline(always)]
    fn first_cell(&self) -> Option<u32> {
        // SAFETY: as `push`.
        (self.head != self.tail).then(|| unsafe { *self.cells.get_unchecked(self.slot(self.head)) })
    }

    fn reached(&self) -> Option<&[u32]> {
        (!self.reached_more).then_some(self.reached.as_slice())
    }

    fn smallest(&self) -> f64 {
        let mut handle = self.head;
        let mut smallest = f64::INFINITY;
        while handle != self.tail {
            smallest = smallest.min(self.values[self.slot(handle)].abs());
            handle = handle.wrapping_add(1);
        }
        smallest
    }
}

/// The narrow band: an indexed 8-ary min-heap of cells ordered by `|value|`, whose values may
/// rise as well as fall (scikit-fmm's updates can raise a narrow-band value). The keys are the
/// values' magnitudes; with `SIGNED` (the distance) each entry's signed value is kept by its
/// handle, and without (the travel time, never negative) the key is the value. Eight children
/// per node: a third fewer levels per pop than four, for twice the keys per level, compared by
/// a tournament three rounds deep ([`HeapLines::a_smallest_child`]: which of equal keys wins
/// is free, as the march freezes equal values together). The keys and the entries (handle and
/// cell) are in separate [`HeapLines`], so that the keys of a node's children fill one cache
/// line and their entries another.
///
/// A narrow cell's word holds its entry's handle, and the handle's slot holds the entry's heap
/// position. Handles are reused as cells leave the band, so the slots an entry's moves
/// write to stay as few as the band's cells and in cache, where writing each moved cell's heap
/// position into its own word (a cell of the band anywhere on the grid) would miss.
struct Heap<const SIGNED: bool> {
    /// The key at each heap position.
    keys: HeapLines<f64>,
    /// The number of entries.
    len: usize,
    /// The entry at each heap position: its handle in the low 32 bits, its cell in the high
    /// ones.
    entries: HeapLines<u64>,
    /// Each handle's heap position.
    position: Vec<u32>,
    /// Each handle's signed value (`SIGNED` only).
    signed: Vec<f64>,
    /// Handles not in use: the first `free_len` of one slot per handle.
    free: Vec<u32>,
    /// The number of handles not in use.
    free_len: usize,
}

/// A heap entry: `handle` and `cell`.
#[inline(always)]
fn entry(handle: u32, cell: u32) -> u64 {
    u64::from(handle) | u64::from(cell) << 32
}

impl<const SIGNED: bool> Default for Heap<SIGNED> {
    fn default() -> Self {
        Heap {
            keys: HeapLines::with_capacity(0, f64::INFINITY),
            len: 0,
            entries: HeapLines::with_capacity(0, 0),
            position: Vec::new(),
            signed: Vec::new(),
            free: Vec::new(),
            free_len: 0,
        }
    }
}

impl<const SIGNED: bool> Heap<SIGNED> {
    /// The key of value `v`.
    #[inline(always)]
    fn key(v: f64) -> f64 {
        if SIGNED { v.abs() } else { v }
    }

    /// The key at heap position `at` (below `len + LINE`, which `push` makes room for).
    #[inline(always)]
    fn key_at(&self, at: usize) -> f64 {
        // SAFETY: every position the heap reads is an entry's, the one past the last, or a
        // child of an entry (below `len + LINE`), and `push` makes room for `len`.
        unsafe { self.keys.get(at) }
    }

    /// The entry at heap position `at`, as [`Heap::key_at`].
    #[inline(always)]
    fn entry_at(&self, at: usize) -> u64 {
        // SAFETY: as `key_at`.
        unsafe { self.entries.get(at) }
    }

    /// Sets the key at heap position `at`, as [`Heap::key_at`].
    #[inline(always)]
    fn set_key_at(&mut self, at: usize, key: f64) {
        // SAFETY: as `key_at`.
        unsafe { self.keys.set(at, key) }
    }

    /// The cell of the smallest entry.
    #[inline(always)]
    fn first_cell(&self) -> Option<u32> {
        (self.len > 0).then(|| (self.entry_at(0) >> 32) as u32)
    }

    /// The smallest entry's key.
    #[inline(always)]
    fn peek(&self) -> Option<f64> {
        (self.len > 0).then(|| self.key_at(0))
    }

    /// Adds `cell` with value `v`; the entry's handle.
    #[inline(always)]
    fn push(&mut self, cell: u32, v: f64) -> u32 {
        let handle = if self.free_len > 0 {
            self.free_len -= 1;
            // SAFETY: `free` has a slot per handle, more than `free_len`; a handle indexes
            // `signed`.
            unsafe {
                let h = *self.free.get_unchecked(self.free_len);
                if SIGNED {
                    *self.signed.get_unchecked_mut(h as usize) = v;
                }
                h
            }
        } else {
            std::hint::cold_path();
            self.position.push(0);
            self.free.push(0);
            if SIGNED {
                self.signed.push(v);
            }
            (self.position.len() - 1) as u32
        };
        let at = self.len;
        self.len += 1;
        self.keys.make_room(self.len);
        self.entries.make_room(self.len);
        self.up(at, Self::key(v), entry(handle, cell));
        handle
    }

    /// Gives the entry of `handle` the value `v`.
    #[inline(always)]
    fn set(&mut self, handle: u32, v: f64) {
        // SAFETY: a handle in the heap indexes `signed` and `position`.
        let at = unsafe {
            if SIGNED {
                *self.signed.get_unchecked_mut(handle as usize) = v;
            }
            *self.position.get_unchecked(handle as usize) as usize
        };
        let (old, key) = (self.key_at(at), Self::key(v));
        if key < old {
            self.up(at, key, self.entry_at(at));
        } else if key > old {
            self.down(at, key, self.entry_at(at));
        } else {
            self.set_key_at(at, key);
        }
    }

    /// The cell of smallest `|value|` and its value, taken out of the heap (its handle is
    /// free from now on).
    #[inline(always)]
    fn pop(&mut self) -> Option<(u32, f64)> {
        if self.len == 0 {
            return None;
        }
        let (key, first) = (self.key_at(0), self.entry_at(0));
        let (handle, cell) = (first as u32, (first >> 32) as u32);
        self.len -= 1;
        let last = self.len;
        let (last_key, last_entry) = (self.key_at(last), self.entry_at(last));
        self.set_key_at(last, f64::INFINITY);
        if last > 0 {
            self.down(0, last_key, last_entry);
        }
        // SAFETY: `free` has a slot per handle and at most all but this one are free; the
        // handle indexes `signed`.
        unsafe {
            *self.free.get_unchecked_mut(self.free_len) = handle;
            self.free_len += 1;
            let v = if SIGNED {
                *self.signed.get_unchecked(handle as usize)
            } else {
                key
            };
            Some((cell, v))
        }
    }

    /// Moves the hole at `at` towards the root until `(key, entry)` fits, and puts it there.
    #[inline(always)]
    fn up(&mut self, mut at: usize, key: f64, entry: u64) {
        while at > 0 {
            let parent = (at - 1) / LINE;
            let parent_key = self.key_at(parent);
            if parent_key <= key {
                break;
            }
            self.put(at, parent_key, self.entry_at(parent));
            at = parent;
        }
        self.put(at, key, entry);
    }

    /// Moves the hole at `at` towards the leaves until `(key, entry)` fits, and puts it there.
    #[inline(always)]
    fn down(&mut self, mut at: usize, key: f64, entry: u64) {
        loop {
            if at * LINE + 1 >= self.len {
                break;
            }
            // SAFETY: `at` has a child, an entry.
            let (child, child_key) = unsafe { self.keys.a_smallest_child(at) };
            if key <= child_key {
                break;
            }
            self.put(at, child_key, self.entry_at(child));
            at = child;
        }
        self.put(at, key, entry);
    }

    /// Puts `(key, entry)` at `at` and records where the entry's handle now is.
    #[inline(always)]
    fn put(&mut self, at: usize, key: f64, entry: u64) {
        let handle = entry as u32 as usize;
        debug_assert!(handle < self.position.len());
        // SAFETY: `at` is an entry's position or the one past the last (as `key_at`); every
        // handle in the heap indexes `position`, which grows with the handles.
        unsafe {
            self.keys.set(at, key);
            self.entries.set(at, entry);
            *self.position.get_unchecked_mut(handle) = at as u32;
        }
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
        assert_eq!(
            e.to_string(),
            "phi: NaN at (1, 2): expected finite values (or the cell masked)"
        );
        let e = distance(phi.view(), None, [1.0, -2.0], Order::First).unwrap_err();
        assert!(e.to_string().starts_with("dx: -2.0 along axis 1"), "{e}");
        let speed = Array2::from_elem((3, 2), 1.0);
        let e = travel_time(phi.view(), speed.view(), None, [1.0, 1.0], Order::First).unwrap_err();
        assert!(e.to_string().starts_with("speed: shape (3, 2)"), "{e}");
    }

    #[test]
    fn a_contour_nearer_than_the_smallest_float_is_on_its_cell_and_gives_no_nan() {
        // phi = 5e-324 beside -1 at spacing 0.3: the interpolated crossing (1.5e-324) underflows
        // to 0. scikit-fmm starts those cells at +inf and fills half the grid with NaN.
        let phi = Array2::from_shape_fn((20, 20), |(r, c)| match c {
            10 if r < 10 => 5e-324,
            10 => 0.5,
            c if c > 10 => -1.0,
            _ => 1.0,
        });
        let speed = Array2::from_elem((20, 20), 2.0);
        for order in [Order::First, Order::Second] {
            let d = distance(phi.view(), None, [0.3, 0.3], order).unwrap();
            let t = travel_time(phi.view(), speed.view(), None, [0.3, 0.3], order).unwrap();
            assert!(d.values.iter().chain(&t.values).all(|v| v.is_finite()), "{order}");
            for r in 0..10 {
                assert_eq!(d.values[(r, 10)], 0.0, "{order} row {r}");
                assert_eq!(t.values[(r, 10)], 0.0, "{order} row {r}");
            }
            // The cells beside the contour are a step from it, on its side.
            assert!((d.values[(3, 9)] - 0.3).abs() < 1e-12, "{}", d.values[(3, 9)]);
            assert!(d.values[(3, 12)] < 0.0, "{}", d.values[(3, 12)]);
            // The plain port makes the same departure from scikit-fmm.
            let plain = plain::march(&phi, None, None, [0.3, 0.3], order).unwrap();
            assert_same_bits(&d.values, &plain, &order.to_string());
        }
    }

    #[test]
    fn values_under_the_mask_take_no_part_whatever_they_are() {
        // numpy's masked_invalid: NaN and infinite values, masked.
        let mut phi = Array2::from_shape_fn((7, 9), |(r, c)| (r as f64 - 3.2).hypot(c as f64 - 4.1) - 2.0);
        let mut speed = Array2::from_shape_fn((7, 9), |(r, c)| 1.0 + 0.1 * (r + c) as f64);
        let mut mask = Array2::from_elem((7, 9), false);
        for (at, v) in [
            ((0, 0), f64::NAN),
            ((6, 8), f64::INFINITY),
            ((3, 0), f64::NEG_INFINITY),
        ] {
            mask[at] = true;
            let times = |phi: &Array2<f64>, speed: &Array2<f64>, mask: &Array2<bool>| {
                travel_time(
                    phi.view(),
                    speed.view(),
                    Some(mask.view()),
                    [1.0, 0.5],
                    Order::Second,
                )
                .unwrap()
            };
            let plain = times(&phi, &speed, &mask);
            phi[at] = v;
            speed[at] = v;
            for order in [Order::First, Order::Second] {
                let d = distance(phi.view(), Some(mask.view()), [1.0, 0.5], order).unwrap();
                assert!(d.values.iter().all(|v| !v.is_nan()));
                assert_eq!(d.values[at], f64::INFINITY);
            }
            let t = times(&phi, &speed, &mask);
            assert!(
                t.values
                    .iter()
                    .zip(&plain.values)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            );
        }
        // Unmasked, the same values are refused.
        mask[(6, 8)] = false;
        let e = distance(phi.view(), Some(mask.view()), [1.0, 1.0], Order::First).unwrap_err();
        assert!(e.to_string().starts_with("phi: inf at (6, 8)"), "{e}");
    }

    #[test]
    fn spacings_and_speeds_out_of_scale_are_refused_and_the_extremes_scale_the_values() {
        let phi = Array2::from_shape_fn((9, 11), |(r, c)| (r as f64 - 4.3).hypot(c as f64 - 5.2) - 2.5);
        let unit = distance(phi.view(), None, [1.0, 1.0], Order::Second).unwrap();
        for h in [MAX_SCALE, MIN_SPACING] {
            let d = distance(phi.view(), None, [h, h], Order::Second).unwrap();
            for (a, b) in d.values.iter().zip(&unit.values) {
                assert!(
                    (a / h - b).abs() <= 1e-12 * b.abs().max(1.0),
                    "{a} / {h} against {b}"
                );
            }
            let fast = Array2::from_elem((9, 11), MAX_SCALE);
            let t = travel_time(phi.view(), fast.view(), None, [h, h], Order::First).unwrap();
            assert!(t.values.iter().all(|v| v.is_finite() && *v > 0.0 || *v == 0.0));
        }
        for h in [MAX_SCALE * 10.0, MIN_SPACING / 10.0] {
            let e = distance(phi.view(), None, [1.0, h], Order::First).unwrap_err();
            assert!(e.to_string().starts_with("dx: "), "{e}");
            assert!(
                e.to_string()
                    .contains("along axis 1: expected a length from 1e-50 to 1e50"),
                "{e}"
            );
        }
        let mut speed = Array2::from_elem((9, 11), 1.0);
        speed[(2, 3)] = 1e60;
        let e = travel_time(phi.view(), speed.view(), None, [1.0, 1.0], Order::First).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("speed: 1e60 at (2, 3): expected finite speeds up to 1e50"),
            "{e}"
        );
        // Too slow everywhere on the contour: the speeds are named, not phi.
        let slow = Array2::from_elem((9, 11), -1.0);
        let e = travel_time(phi.view(), slow.view(), None, [1.0, 1.0], Order::First).unwrap_err();
        assert!(
            e.to_string().starts_with("speed: below 2.220446049250313e-16"),
            "{e}"
        );
        let flat = Array2::from_elem((9, 11), 1.0);
        let e = travel_time(flat.view(), slow.view(), None, [1.0, 1.0], Order::First).unwrap_err();
        assert!(e.to_string().starts_with("phi: has no zero contour"), "{e}");
    }

    #[test]
    fn a_march_in_the_callers_buffer_leaves_the_values_in_its_grid_rows() {
        let mut phi = Array2::from_elem((6, 5), 1.0);
        phi[(2, 3)] = 0.0;
        let speed = Array2::from_shape_fn((6, 5), |(r, c)| 0.5 + (r * 5 + c) as f64 / 10.0);
        let whole = travel_time(phi.view(), speed.view(), None, [0.5, 1.5], Order::Second).unwrap();
        let mut buffer = vec![7.0; buffer_len((6, 5))];
        let unreached = travel_time_in(
            phi.view(),
            speed.view(),
            None,
            [0.5, 1.5],
            Order::Second,
            &mut buffer,
        )
        .unwrap();
        assert_eq!(unreached, whole.unreached);
        let grid = &buffer[BUFFER_MARGIN * 5..(BUFFER_MARGIN + 6) * 5];
        assert!(
            grid.iter()
                .zip(whole.values.iter())
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
        let e = distance_in(phi.view(), None, [1.0, 1.0], Order::First, &mut buffer[1..]).unwrap_err();
        assert!(e.to_string().starts_with("buffer: 49 values: expected 50"), "{e}");
        // The checks report in their order whatever else is wrong.
        let mut nan = phi.clone();
        nan[(0, 1)] = f64::NAN;
        let e = travel_time(nan.view(), speed.view(), None, [1.0, -1.0], Order::First).unwrap_err();
        assert_eq!(
            e.to_string(),
            "phi: NaN at (0, 1): expected finite values (or the cell masked)"
        );
        let mut slow = speed.clone();
        slow[(5, 4)] = f64::INFINITY;
        let e = travel_time(phi.view(), slow.view(), None, [1.0, 1.0], Order::First).unwrap_err();
        assert_eq!(
            e.to_string(),
            "speed: inf at (5, 4): expected finite speeds up to 1e50 (or the cell masked)"
        );
    }

    /// Random inputs of every kind the march treats apart: contours of both signs, exact
    /// zeros and ties, values whose products underflow, masks, zero and uniform speeds,
    /// unequal spacings, grids one to three cells wide.
    fn random_case(seed: u64) -> (Array2<f64>, Option<Array2<bool>>, Array2<f64>, [f64; 2]) {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let rows = rng.random_range(1..14);
        let cols = if seed.is_multiple_of(5) {
            rng.random_range(1..4)
        } else {
            rng.random_range(1..14)
        };
        let kind = seed % 6;
        let (cy, cx, radius) = (
            rng.random_range(0.0..rows as f64),
            rng.random_range(0.0..cols as f64),
            rng.random_range(0.5..6.0),
        );
        let mut phi = Array2::from_shape_fn((rows, cols), |(r, c)| {
            let d = ((r as f64 - cy).powi(2) + (c as f64 - cx).powi(2)).sqrt() - radius;
            match kind {
                0 => d,
                1 => (d * 2.0).round() / 2.0,
                2 => d * 1e-160,
                3 => 1.0,
                4 => rng.random_range(-1.0..1.0),
                _ => d.signum() * rng.random_range(1..3) as f64,
            }
        });
        phi[(rng.random_range(0..rows), rng.random_range(0..cols))] = 0.0;
        let mask = (seed % 3 == 1).then(|| Array2::from_shape_fn((rows, cols), |_| rng.random_bool(0.15)));
        let uniform = seed.is_multiple_of(4);
        let speed = Array2::from_shape_fn((rows, cols), |_| {
            if rng.random_bool(0.06) {
                0.0
            } else if uniform {
                1.7
            } else {
                rng.random_range(0.2..3.0)
            }
        });
        let spacing = [[1.0, 1.0], [0.37, 0.37], [1.0, 2.5], [0.3, 0.11]][(seed % 4) as usize];
        (phi, mask, speed, spacing)
    }

    #[test]
    fn the_march_gives_the_plain_ports_values_bit_for_bit() {
        the_march_matches_the_plain_port();
    }

    #[test]
    fn the_baseline_build_of_the_march_gives_the_plain_ports_values_bit_for_bit() {
        crate::eikonal::widest::tests::on_the_baseline(the_march_matches_the_plain_port);
    }

    thread_local! {
        /// How many marches of this thread used each [`Bands`].
        static BANDS: std::cell::RefCell<Vec<Bands>> = const { std::cell::RefCell::new(Vec::new()) };
    }

    /// Notes the bands a march used.
    pub(super) fn count(bands: Bands) {
        BANDS.with(|b| b.borrow_mut().push(bands));
    }

    /// The marches of this thread that used `bands` since the last call.
    fn counted(bands: Bands) -> usize {
        BANDS.with(|b| b.borrow().iter().filter(|&&x| x == bands).count())
    }

    fn forget_counts() {
        BANDS.with(|b| b.borrow_mut().clear());
    }

    /// The marches over one speed start in order of arrival and go on with the heap; whatever
    /// the way, they give the heap's values bit for bit: from points, circles, lines and
    /// squares, with and without obstacles, on equal and unequal spacings. Every way is taken
    /// (the queue alone, the queue then the heap, the grid laid out again).
    #[test]
    fn the_queue_and_the_heap_give_the_plain_ports_values_bit_for_bit() {
        use rand::{Rng, SeedableRng};
        forget_counts();
        let mut compared = 0;
        for seed in 0..1500 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let (rows, cols) = (rng.random_range(3..28), rng.random_range(3..28));
            let mut phi = match seed % 4 {
                0 => Array2::from_elem((rows, cols), 1.0),
                1 => {
                    let (cy, cx, r) = (
                        rng.random_range(0.0..rows as f64),
                        rng.random_range(0.0..cols as f64),
                        rng.random_range(0.5..8.0),
                    );
                    Array2::from_shape_fn((rows, cols), |(a, b)| {
                        ((a as f64 - cy).powi(2) + (b as f64 - cx).powi(2)).sqrt() - r
                    })
                }
                2 => {
                    let (a0, b0, c0) = (
                        rng.random_range(-1.0..1.0),
                        rng.random_range(-1.0..1.0),
                        rng.random_range(-5.0..5.0),
                    );
                    Array2::from_shape_fn((rows, cols), |(a, b)| a0 * a as f64 + b0 * b as f64 + c0)
                }
                _ => {
                    let k = rng.random_range(1..4) as f64;
                    Array2::from_shape_fn((rows, cols), |(a, b)| {
                        ((a as f64 - 7.0).abs().max((b as f64 - 5.0).abs()) - k).round()
                    })
                }
            };
            for _ in 0..rng.random_range(1..4) {
                phi[(rng.random_range(0..rows), rng.random_range(0..cols))] = 0.0;
            }
            let p_mask = [0.0, 0.05, 0.2, 0.35][rng.random_range(0..4)];
            let mask =
                (p_mask > 0.0).then(|| Array2::from_shape_fn((rows, cols), |_| rng.random_bool(p_mask)));
            let speed = Array2::from_elem((rows, cols), rng.random_range(0.3..3.0));
            let spacing = [[1.0, 1.0], [0.37, 0.37], [1.0, 2.5], [0.3, 0.11]][rng.random_range(0..4)];
            for order in [Order::First, Order::Second] {
                for travel in [false, true] {
                    let speed = travel.then_some(&speed);
                    if let (Ok(ours), Some(theirs)) = both_marches(&phi, mask.as_ref(), speed, spacing, order)
                    {
                        let what = format!("seed {seed} {order} travel {travel}\nphi {phi:?}\nmask {mask:?}");
                        assert_same_bits(&ours.values, &theirs, &what);
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 5000, "{compared}");
        let ways = [Bands::Queue, Bands::QueueThenHeap, Bands::Again].map(counted);
        assert!(ways[0] > 50 && ways[1] > 200 && ways[2] > 0, "{ways:?}");
        assert_eq!(counted(Bands::Heap), 0);
    }

    /// From a point and through a maze of corridors, the queue alone marches the whole grid.
    #[test]
    fn from_a_point_and_through_a_maze_the_queue_marches_alone() {
        forget_counts();
        let n = 40;
        let mut point = Array2::from_elem((n, n), 1.0);
        point[(17, 23)] = 0.0;
        let mut corner = Array2::from_elem((n, n), 1.0);
        corner[(1, 1)] = 0.0;
        // Walls every 8 cells, each with one gap at alternate ends.
        let maze = Array2::from_shape_fn((n, n), |(r, c)| {
            r % 8 == 0 && r > 0 && if (r / 8) % 2 == 0 { c > 2 } else { c < n - 3 }
        });
        let speed = Array2::from_elem((n, n), 1.3);
        for order in [Order::First, Order::Second] {
            for (phi, mask) in [(&point, None), (&corner, Some(&maze))] {
                let (ours, theirs) = both_marches(phi, mask, Some(&speed), [1.0, 1.0], order);
                assert_same_bits(
                    &ours.unwrap().values,
                    &theirs.unwrap(),
                    &format!("{order} {mask:?}"),
                );
            }
        }
        assert_eq!(counted(Bands::Queue), 4);
    }

    fn the_march_matches_the_plain_port() {
        let mut compared = 0;
        for seed in 0..600 {
            let (phi, mask, speed, spacing) = random_case(seed);
            for order in [Order::First, Order::Second] {
                for travel in [false, true] {
                    let speed = travel.then_some(&speed);
                    let (ours, theirs) = both_marches(&phi, mask.as_ref(), speed, spacing, order);
                    match (ours, theirs) {
                        (Ok(ours), Some(theirs)) => {
                            assert_same_bits(
                                &ours.values,
                                &theirs,
                                &format!(
                                    "seed {seed} {order} travel {travel}\nphi {phi:?}\nmask {mask:?}\nspacing {spacing:?}"
                                ),
                            );
                            assert_eq!(ours.unreached, theirs.iter().filter(|v| v.is_infinite()).count());
                            compared += 1;
                        }
                        (Err(e), None) => assert!(
                            e.to_string().contains("no zero contour")
                                || e.to_string().starts_with("speed: below"),
                            "{e}"
                        ),
                        (ours, theirs) => panic!(
                            "seed {seed}: {:?} vs {:?}",
                            ours.map(|o| o.unreached),
                            theirs.is_some()
                        ),
                    }
                }
            }
        }
        assert!(compared > 2000, "{compared}");
        // Larger grids, whose bands are hundreds of cells long.
        for (n, masked) in [(48, false), (64, true)] {
            let phi = Array2::from_shape_fn((n, n), |(r, c)| {
                ((r as f64 - 20.3).powi(2) + (c as f64 - 17.8).powi(2)).sqrt() - 6.1
            });
            let mask =
                masked.then(|| Array2::from_shape_fn((n, n), |(r, c)| (r * 7 + c * 3) % 11 == 0 && r > 30));
            let speed = Array2::from_elem((n, n), 0.8);
            for order in [Order::First, Order::Second] {
                for travel in [false, true] {
                    let speed = travel.then_some(&speed);
                    let (ours, theirs) = both_marches(&phi, mask.as_ref(), speed, [1.0, 0.7], order);
                    let what = format!("{n} {order} travel {travel}");
                    assert_same_bits(&ours.unwrap().values, &theirs.unwrap(), &what);
                }
            }
        }
    }

    /// The march's result and the plain port's on the same input (the travel time where
    /// `speed` is given, else the distance).
    fn both_marches(
        phi: &Array2<f64>,
        mask: Option<&Array2<bool>>,
        speed: Option<&Array2<f64>>,
        spacing: [f64; 2],
        order: Order,
    ) -> (Result<LevelSet>, Option<Array2<f64>>) {
        let m = mask.map(|m| m.view());
        let ours = match speed {
            Some(s) => travel_time(phi.view(), s.view(), m, spacing, order),
            None => distance(phi.view(), m, spacing, order),
        };
        (ours, plain::march(phi, mask, speed, spacing, order))
    }

    /// Asserts that `ours` and `theirs` hold the same bits in every cell.
    fn assert_same_bits(ours: &Array2<f64>, theirs: &Array2<f64>, what: &str) {
        for ((at, a), b) in ours.indexed_iter().zip(theirs.iter()) {
            assert_eq!(a.to_bits(), b.to_bits(), "{what} at {at:?}: {a} vs {b}");
        }
    }
}

/// scikit-fmm's march written plainly, for the tests: the grid as it is, a bounds check on
/// every neighbour, the narrow band found by scanning the grid for its smallest value, every
/// value in a cell of its own. The march above is held to its values bit for bit.
#[cfg(test)]
mod plain {
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
}
