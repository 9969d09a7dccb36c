//! Bin-sorted neighbour grid (SPEC §5), the CPU twin of the GPU passes `bin_count`,
//! `bin_scan` and `bin_scatter`.
//!
//! Layout (the GPU grid must produce exactly the same arrays):
//! - The domain `[0, width) x [0, height)` is cut into `bins_x * bins_y` square bins of
//!   `bin_size` metres; bin `(bx, by)` has index `by * bins_x + bx`.
//! - An agent's bin is `floor(p * inv_bin_size)` clamped to the valid range, so agents on the
//!   far edge or outside the domain (NaN included, which goes to bin 0) still land in a border
//!   bin. `inv_bin_size` is `1 / bin_size` rounded to f32 once: a multiplication is rounded the
//!   same on every GPU as on the CPU, where a GPU's division may be off by an ulp or two (on an
//!   NVIDIA H200 that moved agents lying at a bin edge to the next bin).
//! - `bin_start` has `bins + 1` entries (exclusive prefix sum of the counts); the agents of bin
//!   `b` are `sorted[bin_start[b] .. bin_start[b + 1]]`, with ids **ascending** inside a bin, so
//!   every query is deterministic.

use rayon::prelude::*;

/// Agents below which the sort runs on one thread: the parallel sort's extra passes cost more
/// than they save on small crowds.
pub const PARALLEL_SORT_MIN: usize = 1 << 15;

/// Most bins a grid has (16 MiB of bin starts): see [`NeighborGrid::new`].
pub const MAX_BINS: usize = 1 << 22;

/// Buckets (runs of consecutive bins) per thread in the parallel sort: enough that the
/// buckets, sorted one per task, keep every thread busy to the end.
const BUCKETS_PER_THREAD: usize = 64;

/// Working memory of the parallel sort, kept between rebuilds (not part of the grid's value:
/// two grids with the same bins compare equal whatever their scratch holds).
#[derive(Default)]
struct SortScratch {
    /// (bin, agent) pairs by bucket, agents ascending in each.
    pairs: Vec<[u32; 2]>,
    /// Where each agent's pair went in `pairs`.
    place_of: Vec<u32>,
    /// The slot given to each entry of `pairs`.
    slot_of_place: Vec<u32>,
}

impl Clone for SortScratch {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for SortScratch {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for SortScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SortScratch")
    }
}

/// A uniform bin grid over the domain, rebuilt each step by a counting sort.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NeighborGrid {
    /// Bin edge, metres.
    pub bin_size: f32,
    /// `1 / bin_size` in f32: the factor every bin is computed with (CPU and GPU alike).
    pub inv_bin_size: f32,
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
    /// Working memory of the parallel sort.
    scratch: SortScratch,
}

impl NeighborGrid {
    /// An empty grid covering `width x height` metres with bins of at least `bin_size` metres
    /// (at least one bin along each axis). The bins are made larger where `bin_size` would
    /// give more than [`MAX_BINS`] of them (a 6.5 km square with bins of 10 cm: 4e9 bins, whose
    /// count wrapped in `u32` and panicked, or took gigabytes for a handful of agents); larger
    /// bins still hold every neighbour within `bin_size` in the 3x3 bins around an agent, at the
    /// cost of more candidates.
    pub fn new(width: f32, height: f32, bin_size: f32) -> Self {
        let count = |bin: f32| {
            let along = |extent: f32| ((extent / bin).ceil() as u64).max(1);
            (along(width), along(height))
        };
        let mut bin_size = bin_size;
        let fits = |(x, y): (u64, u64)| x.saturating_mul(y) <= MAX_BINS as u64;
        if !fits(count(bin_size)) {
            // The area's share first, then doubling for thin domains (one axis alone too long).
            bin_size = bin_size.max((width * height / MAX_BINS as f32).sqrt());
            while !fits(count(bin_size)) {
                // From a millimetre at least: doubling a zero bin (a zero-width domain) never ends.
                bin_size = (bin_size * 2.0).max(1e-3);
            }
        }
        let (bins_x, bins_y) = count(bin_size);
        let (bins_x, bins_y) = (bins_x as u32, bins_y as u32);
        Self {
            bin_size,
            inv_bin_size: 1.0 / bin_size,
            bins_x,
            bins_y,
            ..Default::default()
        }
    }

    /// Number of bins.
    pub fn bins(&self) -> usize {
        self.bins_x as usize * self.bins_y as usize
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
        let bx = ((x * self.inv_bin_size) as u32).min(self.bins_x - 1);
        let by = ((y * self.inv_bin_size) as u32).min(self.bins_y - 1);
        (bx, by)
    }

    /// Gives the grid the geometry [`NeighborGrid::new`] gives for these arguments, keeping its
    /// buffers, so that a grid rebuilt every step over a moving extent allocates nothing once
    /// its buffers have grown.
    pub fn reshape(&mut self, width: f32, height: f32, bin_size: f32) {
        let shaped = Self::new(width, height, bin_size);
        (self.bin_size, self.inv_bin_size) = (shaped.bin_size, shaped.inv_bin_size);
        (self.bins_x, self.bins_y) = (shaped.bins_x, shaped.bins_y);
    }

    /// Sorts the agents at `xs, ys` into bins: count, prefix sum, scatter, on all rayon threads
    /// for large crowds (see [`NeighborGrid::rebuild_with_slots`]).
    pub fn rebuild(&mut self, xs: &[f32], ys: &[f32]) {
        self.sort(xs, ys, true, None);
    }

    /// [`NeighborGrid::rebuild`], also leaving in `slot_of[i]` the place of agent `i` in
    /// `sorted` (the inverse permutation, found by the same scatter).
    ///
    /// With `parallel`, at least [`PARALLEL_SORT_MIN`] agents and a pool of several threads,
    /// the sort runs in parallel: each thread cuts its share of the agents into buckets (runs
    /// of whole bins), keeping their order; then each bucket is counted and scattered on its
    /// own, in agent order. The arrays are the one-thread sort's, element for element (bins in
    /// order, ids ascending inside a bin). Without `parallel` everything runs on the calling
    /// thread.
    pub fn rebuild_with_slots(&mut self, xs: &[f32], ys: &[f32], parallel: bool, slot_of: &mut Vec<u32>) {
        self.sort(xs, ys, parallel, Some(slot_of));
    }

    /// The counting sort of [`NeighborGrid::rebuild`] and its variants.
    fn sort(&mut self, xs: &[f32], ys: &[f32], parallel: bool, slot_of: Option<&mut Vec<u32>>) {
        let n = xs.len();
        let mut agent_bin = std::mem::take(&mut self.agent_bin);
        agent_bin.clear();
        if parallel {
            agent_bin.par_extend(xs.par_iter().zip(ys).map(|(&x, &y)| self.bin_of(x, y)));
        } else {
            agent_bin.extend(xs.iter().zip(ys).map(|(&x, &y)| self.bin_of(x, y)));
        }
        self.agent_bin = agent_bin;
        let bins = self.bins();
        self.bin_start.clear();
        self.bin_start.resize(bins + 1, 0);
        // Every slot of these is written below: resized, not cleared (no pass of zeros).
        self.sorted.resize(n, 0);
        let slot_of = slot_of.map(|s| {
            s.resize(n, 0);
            s.as_mut_slice()
        });
        let threads = rayon::current_num_threads();
        if parallel && threads > 1 && n >= PARALLEL_SORT_MIN {
            self.sort_parallel(threads, slot_of);
        } else {
            self.sort_serial(slot_of);
        }
    }

    /// One thread: count, prefix sum, scatter in agent order.
    fn sort_serial(&mut self, mut slot_of: Option<&mut [u32]>) {
        let bins = self.bins();
        for &b in &self.agent_bin {
            self.bin_start[b as usize + 1] += 1;
        }
        for b in 0..bins {
            self.bin_start[b + 1] += self.bin_start[b];
        }
        let mut cursor = self.bin_start[..bins].to_vec();
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

    /// Several threads (see [`NeighborGrid::rebuild_with_slots`]): `threads` tasks of
    /// consecutive agents, `threads * BUCKETS_PER_THREAD` buckets of consecutive bins.
    fn sort_parallel(&mut self, threads: usize, slot_of: Option<&mut [u32]>) {
        let n = self.agent_bin.len();
        let bins = self.bins();
        let per = bins.div_ceil(threads * BUCKETS_PER_THREAD).max(1);
        let buckets = bins.div_ceil(per);
        let chunk = n.div_ceil(threads);
        let agent_bin = &self.agent_bin;
        // 1. Each task counts its agents per bucket.
        let counts: Vec<Vec<u32>> = agent_bin
            .par_chunks(chunk)
            .map(|part| {
                let mut h = vec![0u32; buckets];
                for &b in part {
                    h[b as usize / per] += 1;
                }
                h
            })
            .collect();
        // 2. Each task writes its (bin, agent) pairs to its piece of each bucket, in agent order:
        //    bucket-major, task-minor, so every bucket lists its agents ascending. `place_of[i]`
        //    remembers where agent i went.
        let mut bucket_start = vec![0usize; buckets + 1];
        for b in 0..buckets {
            bucket_start[b + 1] = bucket_start[b] + counts.iter().map(|h| h[b] as usize).sum::<usize>();
        }
        let scratch = &mut self.scratch;
        scratch.pairs.resize(n, [0; 2]);
        scratch.place_of.resize(n, 0);
        let mut pieces: Vec<Vec<(usize, &mut [[u32; 2]])>> =
            counts.iter().map(|_| Vec::with_capacity(buckets)).collect();
        let mut rest = scratch.pairs.as_mut_slice();
        let mut at = 0;
        for b in 0..buckets {
            for (t, h) in counts.iter().enumerate() {
                let len = h[b] as usize;
                let (piece, tail) = std::mem::take(&mut rest).split_at_mut(len);
                pieces[t].push((at, piece));
                at += len;
                rest = tail;
            }
        }
        pieces
            .into_par_iter()
            .zip(
                agent_bin
                    .par_chunks(chunk)
                    .zip(scratch.place_of.par_chunks_mut(chunk)),
            )
            .enumerate()
            .for_each(|(t, (mut pieces, (part, place_of)))| {
                let mut fill = vec![0usize; buckets];
                for (k, (&b, place)) in part.iter().zip(place_of).enumerate() {
                    let c = b as usize / per;
                    let (start, piece) = &mut pieces[c];
                    piece[fill[c]] = [b, (t * chunk + k) as u32];
                    *place = (*start + fill[c]) as u32;
                    fill[c] += 1;
                }
            });
        // 3. Each bucket on its own: count its bins, write their starts, scatter its agents in
        //    order, noting each pair's slot.
        let with_slots = slot_of.is_some();
        scratch.slot_of_place.resize(if with_slots { n } else { 0 }, 0);
        let pairs = scratch.pairs.as_slice();
        let mut sorted_rest = self.sorted.as_mut_slice();
        let mut slot_rest = scratch.slot_of_place.as_mut_slice();
        let mut jobs = Vec::with_capacity(buckets);
        for (b, starts) in self.bin_start[1..].chunks_mut(per).enumerate() {
            let len = bucket_start[b + 1] - bucket_start[b];
            let (sorted, tail) = std::mem::take(&mut sorted_rest).split_at_mut(len);
            sorted_rest = tail;
            let (slots, tail) = std::mem::take(&mut slot_rest).split_at_mut(if with_slots { len } else { 0 });
            slot_rest = tail;
            jobs.push((b, starts, sorted, slots));
        }
        jobs.into_par_iter()
            .for_each_init(Vec::new, |cursor: &mut Vec<u32>, (b, starts, sorted, slots)| {
                let (lo, base) = (b * per, bucket_start[b]);
                let own = &pairs[base..bucket_start[b + 1]];
                cursor.clear();
                cursor.resize(starts.len(), 0);
                for &[bin, _] in own {
                    cursor[bin as usize - lo] += 1;
                }
                let mut acc = base as u32;
                for (c, start) in cursor.iter_mut().zip(starts.iter_mut()) {
                    let count = *c;
                    *c = acc;
                    acc += count;
                    *start = acc;
                }
                for (p, &[bin, i]) in own.iter().enumerate() {
                    let slot = cursor[bin as usize - lo];
                    cursor[bin as usize - lo] += 1;
                    let k = slot as usize - base;
                    sorted[k] = i;
                    if with_slots {
                        slots[p] = slot;
                    }
                }
            });
        // 4. Each agent's slot, through where it went in step 2.
        if let Some(slot_of) = slot_of {
            let (place_of, slot_of_place) = (&scratch.place_of, &scratch.slot_of_place);
            slot_of
                .par_iter_mut()
                .zip(place_of.par_iter())
                .for_each(|(s, &p)| *s = slot_of_place[p as usize]);
        }
    }

    /// Agents in bin `b`.
    pub fn bin_agents(&self, b: usize) -> &[u32] {
        &self.sorted[self.bin_start[b] as usize..self.bin_start[b + 1] as usize]
    }

    /// Calls `visit(j)` for every agent `j` in the 3x3 bins around point `(x, y)`, bin by bin in
    /// row-major order, ids ascending within a bin: every agent closer than `bin_size` (short of
    /// it by more than f32 rounding). The caller filters by distance.
    ///
    /// The bins of one row that the query covers are contiguous in `sorted`, so each row is one
    /// slice (three slices in all rather than nine).
    #[inline]
    pub fn for_each_near(&self, x: f32, y: f32, mut visit: impl FnMut(u32)) {
        self.for_each_near_slots(x, y, |slots| {
            for &j in &self.sorted[slots] {
                visit(j);
            }
        });
    }

    /// Calls `visit(slots)` for each row of the 3x3 bins around point `(x, y)`, bottom row
    /// first: the places in `sorted` of that row's agents, in the order
    /// [`NeighborGrid::for_each_near`] visits them. A caller that keeps its agents' data in
    /// `sorted`'s order reads each row's neighbours as one contiguous slice.
    #[inline]
    pub fn for_each_near_slots(&self, x: f32, y: f32, mut visit: impl FnMut(std::ops::Range<usize>)) {
        let (bx, by) = self.bin_xy(x, y);
        let (x0, x1) = (bx.saturating_sub(1), (bx + 1).min(self.bins_x - 1));
        for ny in by.saturating_sub(1)..=(by + 1).min(self.bins_y - 1) {
            let row = ny * self.bins_x;
            let start = self.bin_start[(row + x0) as usize] as usize;
            let end = self.bin_start[(row + x1) as usize + 1] as usize;
            visit(start..end);
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
        let inv = 1.0f32 / 1.5;
        let floor_bin = |v: f32, bins: u32| ((v * inv).floor().max(0.0) as u32).min(bins - 1);
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
        g.rebuild_with_slots(&xs, &ys, true, &mut slot_of);
        assert_eq!(g, plain, "the same grid as rebuild");
        assert_eq!(slot_of.len(), n as usize);
        for (k, &i) in g.sorted.iter().enumerate() {
            assert_eq!(slot_of[i as usize] as usize, k, "agent {i}");
        }
    }

    /// The parallel sort gives the one-thread sort's arrays and slots element for element:
    /// crowds just under and over the threshold, clustered (many agents in few bins, so buckets
    /// are uneven and some empty), outside the domain and NaN, on 2, 3 and 8 threads, also in a
    /// grid with fewer bins than buckets; without `parallel` a pool of 8 sorts on one thread.
    #[test]
    fn the_parallel_sort_equals_the_serial_one() {
        let mut state = 7u64;
        let mut rnd = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        for (n, side, bin, clustered) in [
            (PARALLEL_SORT_MIN - 1, 300.0, 2.0, false),
            (PARALLEL_SORT_MIN + 17, 300.0, 2.0, false),
            (100_003, 500.0, 1.5, true),
            (70_000, 10.0, 4.0, false),
        ] {
            let (mut xs, mut ys): (Vec<f32>, Vec<f32>) = (0..n)
                .map(|i| {
                    if clustered && i % 3 != 0 {
                        (20.0 + rnd() * 3.0, 400.0 + rnd() * 2.0)
                    } else {
                        (rnd() * (side + 20.0) - 10.0, rnd() * (side + 20.0) - 10.0)
                    }
                })
                .unzip();
            xs[5] = f32::NAN;
            ys[n - 1] = f32::INFINITY;
            let (mut want, mut want_slots) = (NeighborGrid::new(side, side, bin), Vec::new());
            let serial = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
            serial.install(|| want.rebuild_with_slots(&xs, &ys, true, &mut want_slots));
            for (k, &i) in want.sorted.iter().enumerate() {
                assert_eq!(want_slots[i as usize] as usize, k);
            }
            for (threads, parallel) in [(2, true), (3, true), (8, true), (8, false)] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let mut g = NeighborGrid::new(side, side, bin);
                let mut slots = vec![9; 5];
                pool.install(|| g.rebuild_with_slots(&xs, &ys, parallel, &mut slots));
                assert_eq!(g, want, "{n} agents, {threads} threads: the grid");
                assert_eq!(slots, want_slots, "{n} agents, {threads} threads: the slots");
                let mut plain = NeighborGrid::new(side, side, bin);
                pool.install(|| plain.rebuild(&xs, &ys));
                assert_eq!(plain, want, "{n} agents, {threads} threads: rebuild");
            }
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
                // Closer than a bin: the reach is exclusive (the callers test `d < reach`). Two
                // agents one bin apart to within an ulp or so may lie two bins apart (the bins
                // are products rounded to f32, as any floating-point bins are).
                if d < 1.5 {
                    assert!(found.contains(&j), "agent {j} at {d} m from {i} missed");
                }
            }
        }
    }

    /// Huge domains with small bins get larger bins, never more than [`MAX_BINS`] (a 6.5 km
    /// square with 10 cm bins wrapped the `u32` bin count and panicked), and the 3x3 query
    /// still finds every neighbour within the asked-for bin size; thin domains too.
    #[test]
    fn huge_domains_get_at_most_max_bins_and_still_find_neighbours() {
        for (w, h, bin) in [
            (6553.6f32, 6553.6f32, 0.1f32),
            (1.0e6, 300.0, 0.1),
            (1.0e6, 0.5, 1e-3),
        ] {
            let g = NeighborGrid::new(w, h, bin);
            assert!(
                g.bins() <= MAX_BINS && g.bins() >= MAX_BINS / 8,
                "{w} x {h}: {} bins",
                g.bins()
            );
            assert!(g.bin_size >= bin);
            assert!(g.bins_x as f32 * g.bin_size >= w && g.bins_y as f32 * g.bin_size >= h);
        }
        let mut g = NeighborGrid::new(6553.6, 6553.6, 0.1);
        let xs = [3000.0, 3000.05, 3000.0, 10.0];
        let ys = [3000.0, 3000.05, 3000.09, 10.0];
        g.rebuild(&xs, &ys);
        let mut found = Vec::new();
        g.for_each_near(3000.0, 3000.0, |j| found.push(j));
        for j in [0, 1, 2] {
            assert!(found.contains(&j), "{found:?}");
        }
        assert!(!found.contains(&3));
        // A zero bin over a zero-width domain ends (it doubled zero forever).
        assert!(NeighborGrid::new(0.0, 100.0, 0.0).bins() <= MAX_BINS);
        // Small domains keep the bin size asked for.
        assert_eq!(NeighborGrid::new(20.0, 20.0, 1.5).bin_size, 1.5);
    }
}
