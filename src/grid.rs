//! The regular grid every field lives on, and the four walking directions.
//!
//! Conventions (shared by every module, the GPU shaders and the `.npy` exports):
//! - A field is an `ndarray::Array2` of shape `(rows, cols)`: **row index = y, column index = x**.
//! - The world origin `(0, 0)` is the **lower-left corner** of cell `(row 0, col 0)`; x grows with
//!   the column, y grows with the row. Cell `(r, c)` has its centre at
//!   `((c + 0.5) * cell_size, (r + 0.5) * cell_size)` metres.
//! - Anisotropic fields (speed `f`, unit cost `C`) are `Array3` of shape `(rows, cols, 4)`, the last
//!   axis indexed by [`Dir`] (`E, N, W, S`): the value for the face a walker crosses when leaving
//!   the cell in that direction.

use serde::{Deserialize, Serialize};

/// Size and resolution of the regular grid (a [`crate::Scene`]'s `grid`; the [crate example](crate)
/// loads one with its map).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    /// Number of columns (cells along x).
    pub cols: usize,
    /// Number of rows (cells along y).
    pub rows: usize,
    /// Edge length of one square cell, metres.
    pub cell_size: f64,
}

impl Grid {
    /// A grid of `cols x rows` cells of `cell_size` metres.
    pub fn new(cols: usize, rows: usize, cell_size: f64) -> Self {
        Self {
            cols,
            rows,
            cell_size,
        }
    }

    /// `(rows, cols)`, the shape of a scalar field on this grid.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// `(rows, cols, 4)`, the shape of an anisotropic field on this grid.
    pub fn dir_shape(&self) -> (usize, usize, usize) {
        (self.rows, self.cols, 4)
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// True when the grid has no cells.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Width of the domain, metres.
    pub fn width(&self) -> f64 {
        self.cols as f64 * self.cell_size
    }

    /// Height of the domain, metres.
    pub fn height(&self) -> f64 {
        self.rows as f64 * self.cell_size
    }

    /// Centre of cell `(row, col)` in world metres, `(x, y)`.
    pub fn cell_center(&self, row: usize, col: usize) -> (f64, f64) {
        (
            (col as f64 + 0.5) * self.cell_size,
            (row as f64 + 0.5) * self.cell_size,
        )
    }

    /// The cell containing world point `(x, y)`, or `None` outside the domain.
    pub fn cell_of(&self, x: f64, y: f64) -> Option<(usize, usize)> {
        if !(x >= 0.0 && y >= 0.0) {
            return None;
        }
        let c = (x / self.cell_size) as usize;
        let r = (y / self.cell_size) as usize;
        (r < self.rows && c < self.cols).then_some((r, c))
    }

    /// True when `(x, y)` lies inside the domain.
    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= 0.0 && y >= 0.0 && x < self.width() && y < self.height()
    }

    /// The neighbour of `(row, col)` in direction `dir`, or `None` at the border.
    pub fn neighbor(&self, row: usize, col: usize, dir: Dir) -> Option<(usize, usize)> {
        let (dr, dc) = dir.offset();
        let r = row as isize + dr;
        let c = col as isize + dc;
        (r >= 0 && c >= 0 && (r as usize) < self.rows && (c as usize) < self.cols)
            .then_some((r as usize, c as usize))
    }
}

/// One of the four axis directions a walker can leave a cell by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum Dir {
    /// +x (column + 1).
    E = 0,
    /// +y (row + 1).
    N = 1,
    /// -x (column - 1).
    W = 2,
    /// -y (row - 1).
    S = 3,
}

impl Dir {
    /// All four directions in index order.
    pub const ALL: [Dir; 4] = [Dir::E, Dir::N, Dir::W, Dir::S];

    /// Index into the last axis of an anisotropic field.
    pub fn index(self) -> usize {
        self as usize
    }

    /// `(d_row, d_col)` of the neighbour in this direction.
    pub fn offset(self) -> (isize, isize) {
        match self {
            Dir::E => (0, 1),
            Dir::N => (1, 0),
            Dir::W => (0, -1),
            Dir::S => (-1, 0),
        }
    }

    /// Unit vector `(x, y)` of this direction.
    pub fn unit(self) -> (f64, f64) {
        match self {
            Dir::E => (1.0, 0.0),
            Dir::N => (0.0, 1.0),
            Dir::W => (-1.0, 0.0),
            Dir::S => (0.0, -1.0),
        }
    }

    /// The opposite direction.
    pub fn opposite(self) -> Dir {
        Dir::ALL[(self.index() + 2) % 4]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_of_and_center_round_trip() {
        let g = Grid::new(10, 5, 0.5);
        for r in 0..5 {
            for c in 0..10 {
                let (x, y) = g.cell_center(r, c);
                assert_eq!(g.cell_of(x, y), Some((r, c)));
            }
        }
        assert_eq!(g.cell_of(-0.1, 1.0), None);
        assert_eq!(g.cell_of(5.0, 1.0), None);
        assert_eq!(g.cell_of(f64::NAN, 1.0), None);
    }

    #[test]
    fn neighbours_respect_borders() {
        let g = Grid::new(3, 2, 1.0);
        assert_eq!(g.neighbor(0, 0, Dir::W), None);
        assert_eq!(g.neighbor(0, 0, Dir::S), None);
        assert_eq!(g.neighbor(0, 0, Dir::E), Some((0, 1)));
        assert_eq!(g.neighbor(0, 0, Dir::N), Some((1, 0)));
        assert_eq!(g.neighbor(1, 2, Dir::N), None);
        for d in Dir::ALL {
            assert_eq!(d.opposite().opposite(), d);
        }
    }
}
