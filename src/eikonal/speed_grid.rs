//! Speeds held where the fast march can solve over them: no second grid-sized array.
//!
//! The packed march ([`super::fmm`]) keeps one 64-bit word per cell of the grid padded by two
//! cells on every side. A [`SpeedGrid`] is that array from the start, its front holding the
//! speeds (`f64`, row-major): the march lays its cells out over them, and when it is done writes
//! the potential back over the front ([`PhiGrid`]). A raw solve from a file (`crowdfield
//! eikonal`) reads the speeds straight into it, so the solve itself allocates nothing the size
//! of the grid (but for grids past the packed layout's 32-bit heap slots, over a billion cells,
//! which take the general march), and the memory is on huge pages where Linux offers them
//! ([`super::scratch`]).

use super::fmm::{self, PAD};
use super::heap::FAR;
use super::scratch::Scratch;
use super::{Order, unit_cost};
use ndarray::{ArrayView2, ArrayViewMut2};
use std::time::Instant;

/// A `rows x cols` grid of speeds (m/s; a speed that is not finite and positive is impassable)
/// in memory that [`SpeedGrid::solve_fmm`] turns into the potential in place.
pub struct SpeedGrid {
    words: Scratch<u64>,
    rows: usize,
    cols: usize,
}

/// The potential a [`SpeedGrid`] was solved into.
pub struct PhiGrid {
    words: Scratch<u64>,
    rows: usize,
    cols: usize,
    /// Cells that cannot reach a source (`+inf` in [`PhiGrid::phi`]).
    pub unreachable: usize,
    /// Wall-clock seconds of the solve.
    pub seconds: f64,
}

impl SpeedGrid {
    /// A grid of `rows x cols` speeds, all 0 (impassable) until set through
    /// [`SpeedGrid::speeds_mut`]; `None`, before allocating anything, when the grid has no
    /// cells or more than the solvers' 32-bit cell indices reach ([`SpeedGrid::MAX_CELLS`]
    /// with the padding).
    pub fn new(rows: usize, cols: usize) -> Option<Self> {
        let padded = (rows.checked_add(2 * PAD)?).checked_mul(cols.checked_add(2 * PAD)?)?;
        if rows == 0 || cols == 0 || padded > Self::MAX_CELLS {
            return None;
        }
        Some(Self {
            words: Scratch::zeroed(padded),
            rows,
            cols,
        })
    }

    /// The most cells of a grid padded by two cells on every side that the CPU march indexes.
    pub const MAX_CELLS: usize = FAR as usize - 1;

    /// `(rows, cols)`.
    pub fn dim(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// The speeds (row index = y, column index = x).
    pub fn speeds(&self) -> ArrayView2<'_, f64> {
        front(&self.words, self.rows, self.cols)
    }

    /// The speeds, to be written.
    pub fn speeds_mut(&mut self) -> ArrayViewMut2<'_, f64> {
        let front = &mut self.words.as_mut_slice()[..self.rows * self.cols];
        ArrayViewMut2::from_shape((self.rows, self.cols), bytemuck::cast_slice_mut(front))
            .expect("rows * cols values")
    }

    /// Fast marching from the cells where `goal` is true, as
    /// [`solve_fmm_speed`](super::solve_fmm_speed) (the same values, bit for bit), the
    /// potential written over the speeds.
    ///
    /// # Panics
    /// If `goal`'s shape is not the grid's, or as [`solve_fmm`](super::solve_fmm).
    pub fn solve_fmm(mut self, goal: ArrayView2<bool>, cell_size: f64, order: Order) -> PhiGrid {
        let start = Instant::now();
        let (rows, cols) = (self.rows, self.cols);
        assert_eq!(goal.dim(), (rows, cols), "goal and speed shapes differ");
        let second = order == Order::Second;
        let unreachable = if fmm::packed_fits(rows, cols) {
            let goal = goal.as_standard_layout();
            let goal = goal.as_slice().expect("standard layout is contiguous");
            let words = self.words.as_mut_slice();
            fmm::march_speed_over(words, goal, unit_cost, rows, cols, cell_size, second)
        } else {
            // Too large for the packed layout's 32-bit heap slots: the general march, its
            // values copied over the speeds.
            let marched = fmm::march_speed(self.speeds(), goal, unit_cost, cell_size, second);
            self.speeds_mut().assign(&marched.phi);
            marched.unreachable
        };
        PhiGrid {
            words: self.words,
            rows,
            cols,
            unreachable,
            seconds: start.elapsed().as_secs_f64(),
        }
    }
}

impl PhiGrid {
    /// The potential: `0` on the sources, `+inf` where unreachable (row index = y, column index
    /// = x).
    pub fn phi(&self) -> ArrayView2<'_, f64> {
        front(&self.words, self.rows, self.cols)
    }
}

/// The first `rows * cols` words of `words` as a row-major grid of `f64`.
fn front(words: &Scratch<u64>, rows: usize, cols: usize) -> ArrayView2<'_, f64> {
    let front = &words.as_slice()[..rows * cols];
    ArrayView2::from_shape((rows, cols), bytemuck::cast_slice(front)).expect("rows * cols values")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eikonal::solve_fmm_speed;
    use ndarray::Array2;

    /// Speeds from 0.3 to 2.3 with walls (0, negative, NaN, inf), a few sources: the potential
    /// solved in place is the one solved from a separate array, bit for bit, in both orders.
    #[test]
    fn solving_in_place_gives_the_separate_arrays_values() {
        for (rows, cols) in [(1, 1), (1, 9), (7, 1), (23, 31), (64, 40), (300, 301)] {
            let speed = Array2::from_shape_fn((rows, cols), |(r, c)| {
                let i = r * cols + c;
                match (i * 7919) % 37 {
                    0 => 0.0,
                    5 => -1.0,
                    9 => f64::NAN,
                    13 => f64::INFINITY,
                    k => 0.3 + k as f64 / 18.0,
                }
            });
            let goal = Array2::from_shape_fn((rows, cols), |(r, c)| {
                (r * 5 + c * 3) % 97 == 1 || (r, c) == (0, 0)
            });
            for order in [Order::First, Order::Second] {
                let separate = solve_fmm_speed(speed.view(), goal.view(), 0.7, order);
                let mut grid = SpeedGrid::new(rows, cols).unwrap();
                grid.speeds_mut().assign(&speed);
                // Bits: the NaN speeds compare unequal as numbers.
                assert!(
                    grid.speeds()
                        .iter()
                        .zip(&speed)
                        .all(|(a, b)| a.to_bits() == b.to_bits())
                );
                let solved = grid.solve_fmm(goal.view(), 0.7, order);
                assert_eq!(
                    solved.unreachable, separate.unreachable,
                    "{rows} x {cols} {order}"
                );
                for (a, b) in solved.phi().iter().zip(&separate.phi) {
                    assert_eq!(a.to_bits(), b.to_bits(), "{rows} x {cols} {order}");
                }
            }
        }
    }

    /// Grids with no cells, or more than 32-bit indices reach, are refused without allocating.
    #[test]
    fn empty_and_oversized_grids_are_refused() {
        assert!(SpeedGrid::new(0, 5).is_none());
        assert!(SpeedGrid::new(5, 0).is_none());
        assert!(SpeedGrid::new(1 << 20, 1 << 20).is_none());
        assert!(SpeedGrid::new(usize::MAX, 3).is_none());
        assert!(SpeedGrid::new(1, 1).is_some());
    }

    /// A point source in a uniform field: the exact distance along the axes, 0 at the source,
    /// and a walled-off corner unreachable.
    #[test]
    fn a_point_source_in_place_has_the_axis_distances() {
        let n = 41;
        let mut grid = SpeedGrid::new(n, n).unwrap();
        grid.speeds_mut().fill(2.0);
        // A wall cutting off the 3 x 3 top-left corner.
        for k in 0..4 {
            grid.speeds_mut()[(3, k)] = 0.0;
            grid.speeds_mut()[(k, 3)] = 0.0;
        }
        let mut goal = Array2::from_elem((n, n), false);
        goal[(20, 20)] = true;
        let solved = grid.solve_fmm(goal.view(), 0.5, Order::First);
        let phi = solved.phi();
        assert_eq!(phi[(20, 20)], 0.0);
        for k in 1..20 {
            let exact = k as f64 * 0.5 / 2.0;
            assert!((phi[(20, 20 + k)] - exact).abs() < 1e-12, "{}", phi[(20, 20 + k)]);
            assert!((phi[(20 - k, 20)] - exact).abs() < 1e-12);
        }
        // 9 corner cells and 7 wall cells.
        assert_eq!(solved.unreachable, 16);
        assert!(phi[(0, 0)].is_infinite() && phi[(3, 3)].is_infinite());
    }
}
