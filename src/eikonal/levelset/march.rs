//! The march itself: [`Marcher`] freezes cells from the narrow band and updates their
//! neighbours with scikit-fmm's first- and second-order updates, over either band.

use super::*;

/// What a march reads and writes: the grid's words, row after row, after [`MARGIN`] rows of
/// masked cells and before as many, and the input it reads in place.
pub(super) struct Grid<'a> {
    pub(super) cols: usize,
    /// Index of cell `(0, 0)`: `MARGIN * cols`; the input arrays are indexed by a cell's index
    /// minus `base`.
    pub(super) base: usize,
    pub(super) words: &'a mut [u64],
    pub(super) phi: &'a [f64],
    /// The speeds for the travel time; empty for the distance.
    pub(super) speed: &'a [f64],
    /// Whether phi has values of both signs (else no product of two is negative).
    pub(super) mixed_signs: bool,
    /// `1 / speed^2` where every cell that is not an obstacle has the same speed (a march
    /// with `UNIFORM` reads it), else NaN.
    pub(super) uniform_rhs: f64,
    /// `1 / h^2` per axis.
    pub(super) idx2: [f64; 2],
}

impl Grid<'_> {
    /// The time of the longer of the two axes' steps between neighbours, at the one speed of
    /// a march over one speed (1 for the distance).
    pub(super) fn step_time(&self) -> f64 {
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
pub(super) struct Marcher<'a, B, const SECOND: bool, const DISTANCE: bool, const UNIFORM: bool> {
    pub(super) grid: Grid<'a>,
    pub(super) band: B,
}

impl<'a, B: Band, const SECOND: bool, const DISTANCE: bool, const UNIFORM: bool>
    Marcher<'a, B, SECOND, DISTANCE, UNIFORM>
{
    #[inline(always)]
    pub(super) fn new(grid: Grid<'a>) -> Self {
        Marcher {
            grid,
            band: B::default(),
        }
    }

    /// The word of cell `i`.
    #[inline(always)]
    pub(super) fn word(&self, i: usize) -> u64 {
        debug_assert!(i < self.grid.words.len());
        // SAFETY: the march reads the words of grid cells and of their neighbours up to two
        // cells away along a row (within the row: `in_row` or a cell away from the edge
        // columns) or two rows away (within the margin rows of masked cells), all inside
        // `words`, whose length `march` checks against `buffer_len`.
        unsafe { *self.grid.words.get_unchecked(i) }
    }

    /// Sets the word of cell `i` (a grid cell, as [`Marcher::word`] reads).
    #[inline(always)]
    pub(super) fn set_word(&mut self, i: usize, word: u64) {
        debug_assert!(i < self.grid.words.len());
        // SAFETY: as `word`.
        unsafe { *self.grid.words.get_unchecked_mut(i) = word }
    }

    /// Whether the cell `steps` cells from cell `i` along its row is inside the grid (always,
    /// unless `i` is flagged [`EDGE`]).
    #[inline(always)]
    pub(super) fn in_row(&self, i: usize, edge: bool, steps: isize) -> bool {
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
    pub(super) fn read<const AT_EDGE: bool>(&self, i: usize, axis: usize, steps: isize) -> f64 {
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
    pub(super) fn run(mut self, frozen: &[usize]) -> Option<(Grid<'a>, f64, Option<Vec<u32>>)> {
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
    pub(super) fn go_on(mut self, contour: &[usize]) -> Option<(Grid<'a>, f64, Option<Vec<u32>>)> {
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
    pub(super) fn resume(
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
    pub(super) fn far_word(&self, i: usize) -> u64 {
        let (base, cols) = (self.grid.base, self.grid.cols);
        let c = (i - base) % cols;
        OPEN | (u64::from(self.grid.phi[i - base] > f64::EPSILON) * ABOVE_EPSILON)
            | (u64::from(c < EDGE_COLUMNS || c + EDGE_COLUMNS >= cols) * EDGE)
    }

    /// Whether the update of the frozen cell `i` with the frozen cell `hidden` left out gives
    /// its value, bit for bit.
    #[cold]
    pub(super) fn update_without(&mut self, i: usize, hidden: usize) -> bool {
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
    pub(super) fn freeze(&mut self, i: usize, v: f64) -> bool {
        let edge = self.word(i) & EDGE != 0;
        self.set_word(i, if v.is_nan() { f64::NAN } else { v }.to_bits());
        edge
    }

    /// The fast-marching loop (scikit-fmm's `solve`, with no narrow-band limit); with `BELOW`,
    /// only while the band's smallest `|value|` is below `below`.
    #[inline(always)]
    pub(super) fn march<const BELOW: bool>(&mut self, below: f64) {
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
    pub(super) fn march_in_arrival_order(&mut self, contour: &[usize]) -> Option<f64> {
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
    pub(super) fn as_the_heap(&mut self, i: usize, value: f64, contour: &[usize]) -> bool {
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
    pub(super) fn as_the_heap_by_updates(
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
    pub(super) fn levels_as_the_heap(
        &mut self,
        i: usize,
        read: &[(usize, u64, bool)],
        contour_beside: bool,
    ) -> bool {
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
    pub(super) fn prefetch_next(&self) {
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
    pub(super) fn relax_around(&mut self, i: usize, edge: bool, key: f64) -> bool {
        let w = self.grid.cols as isize;
        self.relax_toward(i, edge, key, -w, false)
            && self.relax_toward(i, edge, key, w, false)
            && self.relax_toward(i, edge, key, -1, true)
            && self.relax_toward(i, edge, key, 1, true)
    }

    /// Whether a frozen word's `|value|` is below `key`; always with the heap, whose pops
    /// come in value order.
    #[inline(always)]
    pub(super) fn below(word: u64, key: f64) -> bool {
        B::IN_VALUE_ORDER || is_below(f64::from_bits(word).abs(), key)
    }

    /// [`Marcher::relax_around`] in the direction `dir` (a step along the row if `along_row`).
    #[inline(always)]
    pub(super) fn relax_toward(
        &mut self,
        i: usize,
        edge: bool,
        key: f64,
        dir: isize,
        along_row: bool,
    ) -> bool {
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
    pub(super) fn prefetch(&self, i: usize) {
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
    pub(super) fn rhs(&self, i: usize) -> f64 {
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
    pub(super) fn upper_root(&self, i: usize) -> bool {
        !DISTANCE || self.word(i) & ABOVE_EPSILON != 0
    }

    /// `(a, b, c)` of cell `i`'s quadratic in the march's order.
    #[inline(always)]
    pub(super) fn coefficients(&self, i: usize) -> (f64, f64, f64) {
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
    pub(super) fn no_real_root(&self, i: usize, a: f64, b: f64) -> f64 {
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
    pub(super) fn update(&self, i: usize) -> f64 {
        if SECOND {
            self.update_second(i)
        } else {
            self.update_first(i)
        }
    }

    /// scikit-fmm's `updatePointOrderOne`: the upwind quadratic over each axis's frozen
    /// neighbour nearer the contour; where it has no real root, its vertex `-b / 2a`.
    #[inline(always)]
    pub(super) fn update_first(&self, i: usize) -> f64 {
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
    pub(super) fn first_order_coefficients<const AT_EDGE: bool>(&self, i: usize) -> (f64, f64, f64) {
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
    pub(super) fn update_second(&self, i: usize) -> f64 {
        let (a, b, c) = self.coefficients(i);
        match self.root(i, a, b, c) {
            Some(v) => v,
            None => self.no_real_root(i, a, b),
        }
    }

    /// The second-order quadratic over the axes in `use_axis`, or `None` where it has no real
    /// root.
    pub(super) fn second_order_axes(&self, i: usize, use_axis: [bool; 2]) -> Option<f64> {
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
    pub(super) fn second_order_coefficients<const AT_EDGE: bool>(
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
    pub(super) fn root(&self, i: usize, a: f64, b: f64, c: f64) -> Option<f64> {
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
pub(super) fn frozen_word_or_state(word: u64, state: u64) -> bool {
    !frozen(word) && word & STATE == state
}

/// A bound on the rounding of an update relative to `(value^2 / step + value)`, `step` one step's
/// time ([`Marcher::as_the_heap`]): about a hundred times the largest seen in the analysis of
/// the quadratic's terms.
pub(super) const ROUNDING: f64 = 1.0 / (1u64 << 43) as f64;

/// Whether `a < b`: `false` where either is NaN.
#[inline(always)]
pub(super) fn is_below(a: f64, b: f64) -> bool {
    a < b
}

/// What [`Band::relax`] says of an update.
pub(super) enum Relax {
    /// The heap would update the cell.
    Update,
    /// The heap would freeze the cell with the one whose freezing led to the update, and not
    /// update it.
    Tie,
    /// The heap would have frozen the cell before.
    Fail,
}
