//! Bin-sorted neighbour grid (SPEC §5), the CPU twin of the GPU passes `bin_count`,
//! `bin_scan` and `bin_scatter`.
//!
//! Layout (the GPU grid must produce exactly the same arrays):
//! - The domain `[0, width) x [0, height)` is cut into `bins_x * bins_y` square bins of
//!   `bin_size` metres; bin `(bx, by)` has index `by * bins_x + bx`.
//! - An agent's bin is `floor(p / bin_size)` clamped to the valid range, so agents on the far
//!   edge or outside the domain (NaN included, which goes to bin 0) still land in a border bin.
//! - `bin_start` has `bins + 1` entries (exclusive prefix sum of the counts); the agents of bin
//!   `b` are `sorted[bin_start[b] .. bin_start[b + 1]]`, with ids **ascending** inside a bin, so
//!   every query is deterministic.

use rayon::prelude::*;

/// A uniform bin grid over the domain, rebuilt each step by a counting sort.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NeighborGrid {
    /// Bin edge, metres.
    pub bin_size: f32,
    /// Bins along x.
    pub bins_x: u32,
    /// Bins along y.
    pub bins_y: u32,
    /// Bin of each agent (indexed by agent index).
    pub agent_bin: Vec<u32>,
    /// Exclusive prefix sum of bin counts, `bins + 1` entries.
    pub bin_start: Vec<u32>,
    /// Agent indices sorted by bin, ascending within a bin.
    pub sorted: Vec<u32>,
}

impl NeighborGrid {
    /// An empty grid covering `width x height` metres with bins of `bin_size` metres
    /// (at least one bin along each axis).
    pub fn new(width: f32, height: f32, bin_size: f32) -> Self {
        let bins_x = ((width / bin_size).ceil() as u32).max(1);
        let bins_y = ((height / bin_size).ceil() as u32).max(1);
        Self {
            bin_size,
            bins_x,
            bins_y,
            ..Default::default()
        }
    }

    /// Number of bins.
    pub fn bins(&self) -> usize {
        (self.bins_x * self.bins_y) as usize
    }

    /// The bin of point `(x, y)` (clamped; NaN goes to 0).
    #[inline]
    pub fn bin_of(&self, x: f32, y: f32) -> u32 {
        let (bx, by) = self.bin_xy(x, y);
        by * self.bins_x + bx
    }

    /// The column and row of the bin of point `(x, y)` (clamped; NaN goes to 0).
    #[inline]
    pub fn bin_xy(&self, x: f32, y: f32) -> (u32, u32) {
        // `as u32` truncates toward zero and saturates (negative and NaN to 0): for every
        // input it gives `floor(v).max(0)`, without a call to `floorf` on baseline x86-64.
        let bx = ((x / self.bin_size) as u32).min(self.bins_x - 1);
        let by = ((y / self.bin_size) as u32).min(self.bins_y - 1);
        (bx, by)
    }

    /// Sorts the agents at `xs, ys` into bins: count, prefix sum, scatter.
    pub fn rebuild(&mut self, xs: &[f32], ys: &[f32]) {
        self.sort(xs, ys, None);
    }

    /// [`NeighborGrid::rebuild`], also leaving in `slot_of[i]` the place of agent `i` in
    /// `sorted` (the inverse permutation, found by the same scatter).
    pub fn rebuild_with_slots(&mut self, xs: &[f32], ys: &[f32], slot_of: &mut Vec<u32>) {
        self.sort(xs, ys, Some(slot_of));
    }

    /// The counting sort of [`NeighborGrid::rebuild`].
    fn sort(&mut self, xs: &[f32], ys: &[f32], mut slot_of: Option<&mut Vec<u32>>) {
        let n = xs.len();
        let mut agent_bin = std::mem::take(&mut self.agent_bin);
        agent_bin.clear();
        agent_bin.par_extend(xs.par_iter().zip(ys).map(|(&x, &y)| self.bin_of(x, y)));
        self.agent_bin = agent_bin;
        let bins = self.bins();
        self.bin_start.clear();
        self.bin_start.resize(bins + 1, 0);
        for &b in &self.agent_bin {
            self.bin_start[b as usize + 1] += 1;
        }
        for b in 0..bins {
            self.bin_start[b + 1] += self.bin_start[b];
        }
        let mut cursor = self.bin_start[..bins].to_vec();
        self.sorted.clear();
        self.sorted.resize(n, 0);
        if let Some(slot_of) = slot_of.as_deref_mut() {
            slot_of.clear();
            slot_of.resize(n, 0);
        }
        // Ascending agent index order makes ids ascending inside each bin.
        for (i, &b) in self.agent_bin.iter().enumerate() {
            let slot = &mut cursor[b as usize];
            self.sorted[*slot as usize] = i as u32;
            if let Some(slot_of) = slot_of.as_deref_mut() {
                slot_of[i] = *slot;
            }
            *slot += 1;
        }
    }

    /// Agents in bin `b`.
    pub fn bin_agents(&self, b: usize) -> &[u32] {
        &self.sorted[self.bin_start[b] as usize..self.bin_start[b + 1] as usize]
    }

    /// Calls `visit(j)` for every agent `j` in the 3x3 bins around point `(x, y)`, bin by bin in
    /// row-major order, ids ascending within a bin. The caller filters by distance.
    ///
    /// The bins of one row that the query covers are contiguous in `sorted`, so each row is one
    /// slice (three slices in all rather than nine).
    #[inline]
    pub fn for_each_near(&self, x: f32, y: f32, mut visit: impl FnMut(u32)) {
        let b = self.bin_of(x, y);
        let (bx, by) = (b % self.bins_x, b / self.bins_x);
        let (x0, x1) = (bx.saturating_sub(1), (bx + 1).min(self.bins_x - 1));
        for ny in by.saturating_sub(1)..=(by + 1).min(self.bins_y - 1) {
            let row = ny * self.bins_x;
            let start = self.bin_start[(row + x0) as usize] as usize;
            let end = self.bin_start[(row + x1) as usize + 1] as usize;
            for &j in &self.sorted[start..end] {
                visit(j);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_appears_once_and_sorted_within_bins() {
        let xs = [0.1, 5.5, 0.2, 9.99, -3.0, f32::NAN, 10.0, 4.0];
        let ys = [0.1, 5.5, 0.3, 9.99, 2.0, 1.0, 10.0, 4.0];
        let mut g = NeighborGrid::new(10.0, 10.0, 2.0);
        g.rebuild(&xs, &ys);
        assert_eq!(g.bins(), 25);
        let mut seen = g.sorted.clone();
        seen.sort();
        assert_eq!(seen, (0..xs.len() as u32).collect::<Vec<_>>());
        for b in 0..g.bins() {
            let a = g.bin_agents(b);
            assert!(a.windows(2).all(|w| w[0] < w[1]));
            for &i in a {
                assert_eq!(g.agent_bin[i as usize] as usize, b);
            }
        }
        assert_eq!(g.bin_of(10.0, 10.0), 24, "far edge clamps into the last bin");
        assert_eq!(g.bin_of(-3.0, 2.0), 5, "outside clamps to the border bin");
    }

    #[test]
    fn bin_of_is_the_clamped_floor_for_every_input() {
        let g = NeighborGrid::new(10.0, 7.0, 1.5);
        let floor_bin = |v: f32, bins: u32| ((v / 1.5).floor().max(0.0) as u32).min(bins - 1);
        let mut vs = vec![
            0.0,
            -0.0,
            1.5,
            1.4999999,
            3.0,
            9.99,
            10.0,
            7.0,
            -0.1,
            -1.5,
            -2.0,
            1e30,
            -1e30,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
        ];
        vs.extend((0..400).map(|i| i as f32 * 0.037 - 3.0));
        for &x in &vs {
            for &y in &vs {
                let want = floor_bin(y, g.bins_y) * g.bins_x + floor_bin(x, g.bins_x);
                assert_eq!(g.bin_of(x, y), want, "({x}, {y})");
            }
        }
    }

    #[test]
    fn slots_are_the_inverse_of_the_sort() {
        let n = 700u32;
        let xs: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 50.0).collect();
        let ys: Vec<f32> = (0..n).map(|i| ((i * 104729) % 1000) as f32 / 50.0).collect();
        let mut plain = NeighborGrid::new(20.0, 20.0, 1.5);
        plain.rebuild(&xs, &ys);
        let mut g = NeighborGrid::new(20.0, 20.0, 1.5);
        // Stale contents of a longer earlier run must not survive.
        let mut slot_of = vec![9; 1000];
        g.rebuild_with_slots(&xs, &ys, &mut slot_of);
        assert_eq!(g, plain, "the same grid as rebuild");
        assert_eq!(slot_of.len(), n as usize);
        for (k, &i) in g.sorted.iter().enumerate() {
            assert_eq!(slot_of[i as usize] as usize, k, "agent {i}");
        }
    }

    #[test]
    fn near_query_finds_all_within_bin_size() {
        let n = 500;
        let xs: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 50.0).collect();
        let ys: Vec<f32> = (0..n).map(|i| ((i * 104729) % 1000) as f32 / 50.0).collect();
        let mut g = NeighborGrid::new(20.0, 20.0, 1.5);
        g.rebuild(&xs, &ys);
        for i in 0..n {
            let mut found = Vec::new();
            g.for_each_near(xs[i], ys[i], |j| found.push(j as usize));
            for j in 0..n {
                let d = ((xs[i] - xs[j]).powi(2) + (ys[i] - ys[j]).powi(2)).sqrt();
                if d <= 1.5 {
                    assert!(found.contains(&j), "agent {j} at {d} m from {i} missed");
                }
            }
        }
    }
}
