//! The benchmark grids of the Eikonal solvers: an open square, a square crossed by four long
//! walls and a serpentine maze of seven walls, each with one exit on the middle of its left
//! edge. `crowdfield bench eikonal --grid`, `examples/bench_gpu.rs` and the GPU tests use them,
//! so the figures in BENCHMARKS.md can be reproduced from the command line.

use ndarray::{Array2, Array3};

/// Which benchmark grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchGrid {
    /// No walls.
    Open,
    /// Four walls across the square at fifths of its width, each leaving a gap of an eighth of
    /// the side at alternating ends: a path through five corridors.
    Walls,
    /// Seven walls at eighths of the width, gaps as in `Walls`: a serpentine path through
    /// eight corridors.
    Maze,
}

impl BenchGrid {
    /// The walls the grid has.
    pub fn walls(self) -> usize {
        match self {
            Self::Open => 0,
            Self::Walls => 4,
            Self::Maze => 7,
        }
    }

    /// The grid's name, as `--grid` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Walls => "walls",
            Self::Maze => "maze",
        }
    }
}

/// The wall cells of `grid` on a square of `n` cells per side: wall `k` (1-based) fills column
/// `k * n / (walls + 1)` but for a gap of `n / 8` rows, at the top for odd `k` and at the
/// bottom for even `k`.
pub fn bench_walls(grid: BenchGrid, n: usize) -> Array2<bool> {
    let walls = grid.walls();
    let mut wall = Array2::from_elem((n, n), false);
    for k in 1..=walls {
        let c = k * n / (walls + 1);
        let gap = n / 8;
        for r in 0..n {
            let open = if k % 2 == 1 { r >= n - gap } else { r < gap };
            if !open {
                wall[(r, c)] = true;
            }
        }
    }
    wall
}

/// Sets `+inf` on every face of `cost` (shape `(rows, cols, 4)`, faces +x, +y, -x, -y) into
/// or out of a cell where `wall` is `true`.
pub fn wall_off(cost: &mut Array3<f32>, wall: &Array2<bool>) {
    let (rows, cols) = wall.dim();
    for r in 0..rows {
        for c in 0..cols {
            let nb = [
                (r, c + 1),
                (r + 1, c),
                (r, c.wrapping_sub(1)),
                (r.wrapping_sub(1), c),
            ];
            for (d, (nr, nc)) in nb.into_iter().enumerate() {
                if wall[(r, c)] || (nr < rows && nc < cols && wall[(nr, nc)]) {
                    cost[(r, c, d)] = f32::INFINITY;
                }
            }
        }
    }
}

/// The cost (shape `(n, n, 4)`, 1 s/m everywhere, `+inf` on every face into or out of a wall)
/// and the goal (four cells on the middle of the left edge, fewer when `n < 4`) of `grid` on a
/// square of `n` cells per side.
pub fn bench_grid(grid: BenchGrid, n: usize) -> (Array3<f32>, Array2<bool>) {
    let wall = bench_walls(grid, n);
    let mut cost = Array3::from_elem((n, n, 4), 1.0f32);
    wall_off(&mut cost, &wall);
    let mut goal = Array2::from_elem((n, n), false);
    for r in (n / 2).saturating_sub(2)..(n / 2 + 2).min(n) {
        goal[(r, 0)] = true;
    }
    (cost, goal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_maze_has_seven_walls_and_one_way_through() {
        let n = 64;
        let wall = bench_walls(BenchGrid::Maze, n);
        let walled_columns: Vec<usize> = (0..n).filter(|&c| wall.column(c).iter().any(|&w| w)).collect();
        assert_eq!(walled_columns, vec![8, 16, 24, 32, 40, 48, 56]);
        // Each wall leaves 8 rows open, alternating ends.
        assert!(!wall[(63, 8)] && wall[(0, 8)]);
        assert!(!wall[(0, 16)] && wall[(63, 16)]);
        assert_eq!(wall.column(8).iter().filter(|&&w| w).count(), 56);
        let (cost, goal) = bench_grid(BenchGrid::Open, n);
        assert!(cost.iter().all(|&c| c == 1.0));
        assert_eq!(goal.iter().filter(|&&g| g).count(), 4);
        assert!(goal[(30, 0)] && goal[(33, 0)]);
    }
}
