//! The level-set march's narrow band where every cell has the same speed: an exact bucket queue.
//!
//! At one speed, a value in the band is at most about one step's time (`max spacing / speed`)
//! above the smallest, so the band fits a ring of buckets, each a fixed fraction of that step
//! wide, numbered by `floor(|value| / width)`. A push or an update links an entry into its
//! bucket, with no comparisons; a pop takes the first smallest entry of the first bucket in use,
//! found through a bitmap. The numbering only has to be monotone for the order to be exact: a
//! bucket holds only entries no larger than every entry of a later bucket, and within one bucket
//! the pop compares. An entry below the first bucket in use (an update that lowers a value below
//! those frozen, as scikit-fmm's can) goes into that bucket; one beyond the ring waits in an
//! overflow list until the ring reaches it.
//!
//! The buckets are about as many per step as the band has cells, so that a bucket holds about
//! one: the band is renumbered when it grows fourfold or shrinks sixteenfold. A bucket is a circular doubly
//! linked list through the entries, from a sentinel, so linking and unlinking take no branches;
//! the sentinels and the entries live in one table (the entries after the sentinels, by handle,
//! and handles are reused), so a small band stays in a few cache lines however far the front has
//! come.

/// The fewest buckets per step.
const MIN_PER_STEP: usize = 32;
/// The most buckets per step.
const MAX_PER_STEP: usize = 1 << 16;
/// The ring spans this many steps before entries overflow (a band spans about one).
const RING_STEPS: usize = 2;
/// The ring has a whole number of bitmap words.
const _: () = assert!(MIN_PER_STEP * RING_STEPS >= 64 && MIN_PER_STEP.is_power_of_two());

/// Buckets per step for a band of `len` entries: about one entry per bucket.
fn per_step_for(len: usize) -> usize {
    len.next_power_of_two().clamp(MIN_PER_STEP, MAX_PER_STEP)
}

/// A sentinel or an entry: the key (`|value|`), its cell, its list's sentinel and its
/// neighbours in the list, as indices into [`BucketBand::nodes`].
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    key: f64,
    cell: u32,
    list: u32,
    prev: u32,
    next: u32,
}

/// The band: see the module documentation. With `SIGNED` (the distance) each entry's signed
/// value is kept by its handle.
pub(super) struct BucketBand<const SIGNED: bool> {
    /// One step's time.
    step: f64,
    /// Buckets per step.
    per_step: usize,
    /// `per_step / step`: `1 / width` of a bucket.
    per_key: f64,
    /// The number of slots in the ring (a power of two, 64 or more), less one: bucket number
    /// `n` (from `first` to `first + ring - 1`) is in slot `n % ring`.
    ring_mask: u64,
    /// The sentinels of the ring's buckets (`0..ring`), that of the overflow list (`ring`,
    /// entries beyond the ring), then the entries by handle (from `ring + 1`).
    nodes: Vec<Node>,
    /// One bit per slot: the bucket holds entries (and one word more, for the overflow list).
    occupied: Vec<u64>,
    /// The number of the first bucket that may hold entries: no entry has a smaller one.
    first: u64,
    /// No overflow entry has a bucket number below this (`u64::MAX` when there are none).
    overflow_first: u64,
    /// Each handle's signed value (`SIGNED` only).
    signed: Vec<f64>,
    /// Handles not in use.
    free: Vec<u32>,
    /// The number of entries.
    len: usize,
}

impl<const SIGNED: bool> BucketBand<SIGNED> {
    /// An empty band for values that rise by at most about `step` from one frozen cell to the
    /// next (a positive, finite time).
    pub(super) fn new(step: f64) -> Self {
        let mut band = BucketBand {
            step,
            per_step: 0,
            per_key: 0.0,
            ring_mask: 0,
            nodes: Vec::new(),
            occupied: Vec::new(),
            first: 0,
            overflow_first: u64::MAX,
            signed: Vec::new(),
            free: Vec::new(),
            len: 0,
        };
        band.number_buckets(MIN_PER_STEP, &[]);
        band
    }

    /// The number of entries.
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Takes every entry out, adding its cell and value to `into`; the band is empty after, with
    /// all its handles free.
    pub(super) fn drain(&mut self, into: &mut Vec<(u32, f64)>) {
        let mut handles = Vec::with_capacity(self.len);
        for list in 0..=self.overflow() {
            self.handles_in(list, &mut handles);
        }
        let base = self.ring() as u32 + 1;
        into.extend(handles.iter().map(|&h| {
            let node = self.node(h + base);
            let v = if SIGNED { self.signed[h as usize] } else { node.key };
            (node.cell, v)
        }));
        self.nodes.truncate(base as usize);
        self.signed.clear();
        self.free.clear();
        self.len = 0;
        self.first = 0;
        self.number_buckets(MIN_PER_STEP, &[]);
    }

    /// Numbers the buckets of an empty band for `len` entries from `smallest` up.
    pub(super) fn prepare(&mut self, len: usize, smallest: f64) {
        debug_assert_eq!(self.len, 0);
        let per_step = per_step_for(len);
        self.first = 0;
        self.per_key = per_step as f64 / self.step;
        self.first = self.number(smallest);
        self.number_buckets(per_step, &[]);
    }

    /// The number of slots in the ring.
    #[inline(always)]
    fn ring(&self) -> usize {
        self.ring_mask as usize + 1
    }

    /// The index in `nodes` of the overflow list's sentinel.
    #[inline(always)]
    fn overflow(&self) -> u32 {
        self.ring() as u32
    }

    /// The index in `nodes` of `handle`'s entry.
    #[inline(always)]
    fn index(&self, handle: u32) -> u32 {
        handle + self.ring() as u32 + 1
    }

    /// Empties the buckets, gives the ring `per_step` buckets per step and keeps the entries
    /// (handles and their keys and cells); the entries in `kept` are linked again.
    fn number_buckets(&mut self, per_step: usize, kept: &[u32]) {
        let old_base = self.nodes.len().min(self.ring() + 1);
        let entries = self.nodes.split_off(old_base);
        self.per_step = per_step;
        self.per_key = per_step as f64 / self.step;
        let ring = per_step * RING_STEPS;
        self.ring_mask = ring as u64 - 1;
        self.nodes.clear();
        self.nodes.extend((0..=ring as u32).map(|s| Node {
            list: s,
            prev: s,
            next: s,
            ..Node::default()
        }));
        self.nodes.extend(entries);
        self.occupied.clear();
        self.occupied.resize(ring / 64 + 1, 0);
        self.overflow_first = u64::MAX;
        for &handle in kept {
            self.link(self.index(handle));
        }
    }

    /// The key of value `v`.
    #[inline(always)]
    fn key(v: f64) -> f64 {
        if SIGNED { v.abs() } else { v }
    }

    /// The bucket number of `key` (monotone in `key`), or `first` if that is larger.
    #[inline(always)]
    fn number(&self, key: f64) -> u64 {
        // Keys are never negative; a key too large for `i64` (there is none on a grid that fits
        // in memory) or NaN (there is none) goes to the last number.
        let x = key * self.per_key;
        let x = if x < 4.0e18 { x.max(0.0) } else { 4.0e18 };
        // SAFETY: `x` is finite and within `i64`.
        let n = unsafe { x.to_int_unchecked::<i64>() } as u64;
        n.max(self.first)
    }

    /// The node at `index`.
    #[inline(always)]
    fn node(&self, index: u32) -> &Node {
        debug_assert!((index as usize) < self.nodes.len());
        // SAFETY: every index the band keeps (links, lists, entries of handles in use) is below
        // the length of `nodes`, which grows with the handles.
        unsafe { self.nodes.get_unchecked(index as usize) }
    }

    /// The node at `index`, to change.
    #[inline(always)]
    fn node_mut(&mut self, index: u32) -> &mut Node {
        debug_assert!((index as usize) < self.nodes.len());
        // SAFETY: as `node`.
        unsafe { self.nodes.get_unchecked_mut(index as usize) }
    }

    /// Records whether the list of sentinel `list` holds entries.
    #[inline(always)]
    fn mark(&mut self, list: u32, in_use: bool) {
        let list = list as usize;
        debug_assert!(list / 64 < self.occupied.len());
        // SAFETY: a sentinel is at most `ring`, and `occupied` has `ring / 64 + 1` words.
        let word = unsafe { self.occupied.get_unchecked_mut(list / 64) };
        let bit = 1 << (list % 64);
        *word = (*word & !bit) | (u64::from(in_use) * bit);
    }

    /// Links the entry at `index` (its key set) into its bucket or the overflow list.
    #[inline(always)]
    fn link(&mut self, index: u32) {
        let n = self.number(self.node(index).key);
        let list = if n - self.first <= self.ring_mask {
            (n & self.ring_mask) as u32
        } else {
            self.overflow_first = self.overflow_first.min(n);
            self.overflow()
        };
        let next = self.node(list).next;
        self.node_mut(next).prev = index;
        self.node_mut(list).next = index;
        let node = self.node_mut(index);
        (node.list, node.prev, node.next) = (list, list, next);
        self.mark(list, true);
    }

    /// Unlinks the entry at `index` from its list.
    #[inline(always)]
    fn unlink(&mut self, index: u32) {
        let Node { list, prev, next, .. } = *self.node(index);
        self.node_mut(next).prev = prev;
        self.node_mut(prev).next = next;
        let in_use = self.node(list).next != list;
        self.mark(list, in_use);
    }

    /// Adds `cell` with value `v`; the entry's handle.
    #[inline(always)]
    pub(super) fn push(&mut self, cell: u32, v: f64) -> u32 {
        let node = Node {
            key: Self::key(v),
            cell,
            ..Node::default()
        };
        let handle = match self.free.pop() {
            Some(h) => {
                let index = self.index(h);
                *self.node_mut(index) = node;
                h
            }
            None => {
                self.nodes.push(node);
                if SIGNED {
                    self.signed.push(0.0);
                }
                (self.nodes.len() - 1 - (self.ring() + 1)) as u32
            }
        };
        if SIGNED {
            // SAFETY: the handle indexes `signed`, which grows with the entries.
            unsafe { *self.signed.get_unchecked_mut(handle as usize) = v };
        }
        self.len += 1;
        self.link(self.index(handle));
        handle
    }

    /// Gives the entry of `handle` the value `v`.
    #[inline(always)]
    pub(super) fn set(&mut self, handle: u32, v: f64) {
        if SIGNED {
            // SAFETY: a handle in use indexes `signed`.
            unsafe { *self.signed.get_unchecked_mut(handle as usize) = v };
        }
        let index = self.index(handle);
        let key = Self::key(v);
        let n = self.number(key);
        let node = self.node_mut(index);
        node.key = key;
        let list = node.list;
        if n - self.first <= self.ring_mask && (n & self.ring_mask) as u32 == list {
            return;
        }
        self.unlink(index);
        self.link(index);
    }

    /// Moves `first` to the first bucket in use, bringing in the overflow entries the ring now
    /// reaches; that bucket's sentinel. The band must not be empty.
    #[inline(always)]
    fn first_list(&mut self) -> u32 {
        loop {
            if let Some(ahead) = self.next_occupied() {
                self.first += ahead;
                if self.overflow_first < self.first.saturating_add(self.ring() as u64) {
                    self.bring_in_overflow();
                }
                return (self.first & self.ring_mask) as u32;
            }
            // Only overflow entries remain.
            self.first = self.overflow_first;
            self.bring_in_overflow();
        }
    }

    /// How many buckets from `first` the first occupied one is; `None` if the ring is empty.
    #[inline(always)]
    fn next_occupied(&self) -> Option<u64> {
        let ring = self.ring();
        let start = (self.first & self.ring_mask) as usize;
        let words = ring / 64;
        let (w0, bit) = (start / 64, start % 64);
        // SAFETY: every word index is taken modulo the ring's words, a power of two.
        let word = |w: usize| unsafe { *self.occupied.get_unchecked(w & (words - 1)) };
        let here = word(w0) & (u64::MAX << bit);
        if here != 0 {
            return Some((here.trailing_zeros() as usize - bit) as u64);
        }
        for k in 1..=words {
            let bits = word(w0 + k);
            if bits != 0 {
                let at = (w0 + k) * 64 + bits.trailing_zeros() as usize;
                return Some(((at + ring - start) & (ring - 1)) as u64);
            }
        }
        None
    }

    /// The handles of the entries in the list of sentinel `list`, added to `into`.
    fn handles_in(&self, list: u32, into: &mut Vec<u32>) {
        let base = self.ring() as u32 + 1;
        let mut at = self.node(list).next;
        while at != list {
            into.push(at - base);
            at = self.node(at).next;
        }
    }

    /// Moves the overflow entries whose buckets are now in the ring into them.
    #[cold]
    fn bring_in_overflow(&mut self) {
        let mut waiting = Vec::new();
        self.handles_in(self.overflow(), &mut waiting);
        let overflow = self.overflow();
        *self.node_mut(overflow) = Node {
            list: overflow,
            prev: overflow,
            next: overflow,
            ..Node::default()
        };
        self.overflow_first = u64::MAX;
        for handle in waiting {
            self.link(self.index(handle));
        }
    }

    /// Renumbers the buckets for the band's size, when it has grown or shrunk fourfold.
    #[inline(always)]
    fn fit_buckets(&mut self) {
        let (len, per_step) = (self.len, self.per_step);
        if len > 4 * per_step && per_step < MAX_PER_STEP || 16 * len < per_step && per_step > MIN_PER_STEP {
            self.renumber(per_step_for(len));
        }
    }

    /// Puts every entry into `per_step` buckets per step.
    #[cold]
    fn renumber(&mut self, per_step: usize) {
        let mut kept = Vec::with_capacity(self.len);
        for list in 0..=self.overflow() {
            self.handles_in(list, &mut kept);
        }
        let base = self.ring() as u32 + 1;
        let smallest = kept
            .iter()
            .map(|&h| self.node(h + base).key)
            .fold(f64::INFINITY, f64::min);
        self.first = 0;
        self.per_key = per_step as f64 / self.step;
        self.first = self.number(smallest);
        self.number_buckets(per_step, &kept);
    }

    /// Takes the entry at `index` out: its cell and value (its handle is free from now on).
    #[inline(always)]
    fn take(&mut self, index: u32) -> (u32, f64) {
        self.unlink(index);
        self.len -= 1;
        let handle = index - (self.ring() as u32 + 1);
        self.free.push(handle);
        let node = *self.node(index);
        let v = if SIGNED {
            // SAFETY: the handle indexes `signed`.
            unsafe { *self.signed.get_unchecked(handle as usize) }
        } else {
            node.key
        };
        (node.cell, v)
    }

    /// The cell of smallest `|value|` (the first such in its bucket's list) and its value,
    /// taken out.
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<(u32, f64)> {
        if self.len == 0 {
            return None;
        }
        self.fit_buckets();
        let list = self.first_list();
        let mut at = self.node(list).next;
        let (mut best, mut best_key) = (at, self.node(at).key);
        at = self.node(at).next;
        while at != list {
            let node = self.node(at);
            if node.key < best_key {
                (best, best_key) = (at, node.key);
            }
            at = node.next;
        }
        Some(self.take(best))
    }

    /// The cell of an entry in the bucket last popped from, if it holds one: most likely the
    /// next to pop.
    #[inline(always)]
    pub(super) fn first_cell(&self) -> Option<u32> {
        let list = (self.first & self.ring_mask) as u32;
        let at = self.node(list).next;
        (at != list).then(|| self.node(at).cell)
    }

    /// A cell whose key is `key`, the one just popped, taken out; `None` if no other has it.
    /// Equal keys share a bucket, the one just popped from.
    #[inline(always)]
    pub(super) fn pop_tie(&mut self, key: f64) -> Option<(u32, f64)> {
        let list = (self.first & self.ring_mask) as u32;
        let mut at = self.node(list).next;
        while at != list {
            let node = self.node(at);
            if node.key == key {
                return Some(self.take(at));
            }
            at = node.next;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Random pushes, updates (up and down, below the first bucket and far beyond the ring) and
    /// pops against a plain list: every pop gives a smallest key, ties come out while there
    /// are any, and draining gives back every entry.
    #[test]
    fn pops_come_out_smallest_first_whatever_the_updates() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for round in 0..40 {
            let step = [1.0, 0.37, 2.5e-3][round % 3];
            let mut band = BucketBand::<true>::new(step);
            // Each handle's cell and signed value, while it is in the band.
            let mut live: Vec<Option<(u32, f64)>> = Vec::new();
            let mut last = 0.0f64;
            let mut cell = 0;
            for _ in 0..3000 {
                let action = rng.random_range(0..10);
                let in_band: Vec<usize> = (0..live.len()).filter(|&h| live[h].is_some()).collect();
                if action < 4 || in_band.is_empty() {
                    // New values mostly within a step above the last popped, some far beyond
                    // (overflow) and some below it, of either sign.
                    let v = match rng.random_range(0..20) {
                        0 => last + step * rng.random_range(5.0..400.0),
                        1 => last * rng.random_range(0.0..1.0),
                        _ => last + step * rng.random_range(0.0..1.2),
                    };
                    let v = if rng.random_bool(0.5) { -v } else { v };
                    cell += 1;
                    let h = band.push(cell, v) as usize;
                    if live.len() <= h {
                        live.resize(h + 1, None);
                    }
                    assert!(live[h].is_none(), "handle {h} given twice");
                    live[h] = Some((cell, v));
                } else if action < 7 {
                    let h = in_band[rng.random_range(0..in_band.len())];
                    let v = last + step * rng.random_range(-0.5..2.0);
                    band.set(h as u32, v);
                    live[h] = live[h].map(|(c, _)| (c, v));
                } else {
                    let smallest = in_band
                        .iter()
                        .map(|&h| live[h].unwrap().1.abs())
                        .fold(f64::INFINITY, f64::min);
                    let (c, v) = band.pop().expect("not empty");
                    assert_eq!(v.abs(), smallest, "round {round}");
                    let h = live
                        .iter()
                        .position(|e| *e == Some((c, v)))
                        .expect("a live entry");
                    live[h] = None;
                    last = smallest;
                    while let Some((c, v)) = band.pop_tie(smallest) {
                        assert_eq!(v.abs(), smallest);
                        let h = live
                            .iter()
                            .position(|e| *e == Some((c, v)))
                            .expect("a live entry");
                        live[h] = None;
                    }
                    assert!(
                        live.iter().flatten().all(|&(_, v)| v.abs() > smallest),
                        "a tie was left"
                    );
                }
                band.fit_buckets();
            }
            let mut drained = Vec::new();
            band.drain(&mut drained);
            let mut expected: Vec<(u32, f64)> = live.into_iter().flatten().collect();
            drained.sort_by_key(|e| e.0);
            expected.sort_by_key(|e| e.0);
            assert_eq!(drained, expected);
            assert!(band.pop().is_none());
        }
    }
}
