//! An indexed 4-ary min-heap of `(key, cell, tag)` with decrease-key, for fast marching, and
//! the parts every heap of the Eikonal solvers shares: [`HeapLines`] (a node's children's keys
//! in one cache line) and [`first_smallest`] (the tournament that finds the first smallest).
//!
//! The heap position of every cell is kept in a slice owned by the caller (`slot`), which the
//! marcher also uses as the cell's state: values below [`FAR`] are heap positions, and the
//! constants [`FAR`], [`SOURCE`] and [`FROZEN`] mark cells not in the heap.
//!
//! # Three heaps, on purpose
//!
//! Each march keeps the heap its results and its speed were validated with; what the heaps can
//! share, they share (the two parts above).
//!
//! | heap | march | children | ties go to | besides |
//! |---|---|---|---|---|
//! | [`IndexedHeap`] | general (`fmm`) | 4 | the first smallest child | a tag per entry |
//! | [`SplitHeap`](super::split_heap::SplitHeap) | packed isotropic | 8 | the first smallest child | keys apart |
//! | `levelset::band::Heap` | level set | 8 | any smallest child | keys rise; handles |
//!
//! One heap for all three would change the general march's values or slow the other two:
//!
//! - The general march cannot take the 8-ary heap: an anisotropic march is not causal, and the
//!   order equal keys leave the heap in moves its values (another order moved them by up to
//!   0.3 % on the GPU-chain test scene, see `IndexedHeap::sift_down`), so its values would
//!   change.
//! - The isotropic march cannot take the 4-ary one without losing what its heap is for: eight
//!   keys to a cache line and a third fewer levels per pop (4 % at 2048², BENCHMARKS.md). Its
//!   order is `IndexedHeap::<8>`'s, ties included (tested), and its values are the general
//!   march's bit for bit (tested): an isotropic march does not depend on the order of ties.
//! - The level-set band raises keys as well as lowering them (scikit-fmm's updates can raise a
//!   narrow-band value), finds entries through reused handles rather than cell slots, and lets
//!   equal keys out in any order (the march freezes equal values together), which lets its
//!   tournament compare a node's children as vector lanes (`levelset`'s module documentation
//!   has the measurements). The other two need neither the handles nor the raised keys, and
//!   the general march cannot take its tie rule.

/// The cell has no tentative value yet.
pub const FAR: u32 = u32::MAX - 2;
/// The cell is a source: accepted at `0`.
pub const SOURCE: u32 = u32::MAX - 1;
/// The cell is accepted (or can never be reached: border padding, fully impassable cells).
pub const FROZEN: u32 = u32::MAX;

/// The general march's branching factor. Four children per node halve the depth of a binary
/// heap, and the four keys of a node's children share one or two cache lines, which is what fast
/// marching (one pop and up to four decrease-keys per cell) spends its time on. The isotropic
/// march uses eight, in [`super::split_heap`].
pub const ARITY: usize = 4;

/// One heap entry: a tentative value, the cell it belongs to (the index into `slot`) and a
/// caller's tag that travels with it (the marcher's unpadded cell index, so that popping a cell
/// needs no division to find it). The tag fills what would otherwise be padding.
#[derive(Clone, Copy, Debug)]
struct Node {
    key: f64,
    cell: u32,
    tag: u32,
}

/// Indexed min-heap with `K` children per node (a power of two); see the module documentation
/// for the `slot` slice.
#[derive(Debug, Default)]
pub struct IndexedHeap<const K: usize = ARITY> {
    nodes: Vec<Node>,
}

impl<const K: usize> IndexedHeap<K> {
    /// An empty heap with room for `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            nodes: Vec::with_capacity(capacity),
        }
    }

    /// True when the heap holds nothing.
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The key of the entry at heap position `pos` (a value of `slot` below [`FAR`]).
    #[inline(always)]
    pub fn key_at(&self, pos: u32) -> f64 {
        self.nodes[pos as usize].key
    }

    /// Inserts `cell` (which must not be in the heap) with `key` and `tag`.
    #[inline]
    pub fn push(&mut self, key: f64, cell: u32, tag: u32, slot: &mut [u32]) {
        let pos = self.nodes.len();
        let node = Node { key, cell, tag };
        self.nodes.push(node);
        self.sift_up(pos, node, slot);
    }

    /// Lowers the key of the entry at heap position `pos` to `key` (which must not be larger).
    #[inline]
    pub fn decrease(&mut self, pos: u32, key: f64, slot: &mut [u32]) {
        let node = Node {
            key,
            ..self.nodes[pos as usize]
        };
        self.sift_up(pos as usize, node, slot);
    }

    /// Removes and returns the entry with the smallest key as `(key, cell, tag)`. The popped
    /// cell's `slot` is left to the caller.
    #[inline(always)]
    pub fn pop(&mut self, slot: &mut [u32]) -> Option<(f64, u32, u32)> {
        let top = *self.nodes.first()?;
        let last = self.nodes.pop().expect("heap is not empty");
        if !self.nodes.is_empty() {
            self.sift_down(last, slot);
        }
        Some((top.key, top.cell, top.tag))
    }

    /// Moves the hole at `pos` up until `node` fits, then stores it.
    #[inline(always)]
    fn sift_up(&mut self, mut pos: usize, node: Node, slot: &mut [u32]) {
        while pos > 0 {
            let parent = (pos - 1) / K;
            let p = self.nodes[parent];
            if p.key <= node.key {
                break;
            }
            self.nodes[pos] = p;
            slot[p.cell as usize] = pos as u32;
            pos = parent;
        }
        self.nodes[pos] = node;
        slot[node.cell as usize] = pos as u32;
    }

    /// Places `node` at the root hole and moves it down to where it fits.
    ///
    /// Top-down on purpose: the bottom-up variant (hole to a leaf, then sift up) was measured
    /// no faster here, and it orders equal keys differently. With strongly anisotropic costs a
    /// march is not causal, and the acceptance order among equal keys moves its values (by up
    /// to 0.3 % on the GPU-chain test scene), so the order is kept as it was validated.
    #[inline(always)]
    fn sift_down(&mut self, node: Node, slot: &mut [u32]) {
        let len = self.nodes.len();
        let mut pos = 0;
        loop {
            let first = pos * K + 1;
            if first >= len {
                break;
            }
            let (best, best_key) = match self.nodes.get(first..first + K) {
                // A full node (all but at most one per pop): `K` keys from one slice, one
                // bounds check, the first smallest by a tournament.
                Some(kids) => {
                    let (best, best_key) = first_smallest::<K>(|i| kids[i].key);
                    (first + best, best_key)
                }
                None => {
                    let mut best = first;
                    let mut best_key = self.nodes[first].key;
                    for child in first + 1..len {
                        let k = self.nodes[child].key;
                        if k < best_key {
                            best = child;
                            best_key = k;
                        }
                    }
                    (best, best_key)
                }
            };
            if node.key <= best_key {
                break;
            }
            let moved = self.nodes[best];
            self.nodes[pos] = moved;
            slot[moved.cell as usize] = pos as u32;
            pos = best;
        }
        self.nodes[pos] = node;
        slot[node.cell as usize] = pos as u32;
    }
}

/// Children per node of the heaps whose per-position values are [`HeapLines`]: eight `f64` keys
/// are one 64-byte cache line.
pub(super) const LINE: usize = 8;

/// [`LINE`] values of a heap, aligned to a cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Line<T>([T; LINE]);

/// A value per position of a [`LINE`]-ary heap, in aligned lines: position `p` is slot
/// `p + LINE - 1`, so that the values of a node's children (positions `LINE * p + 1` to
/// `LINE * p + LINE`) are one line, the node's `p + 1`th. Slots that no entry holds keep the
/// value the lines were filled with (`+inf` for keys, so that every node has all its children
/// to compare).
///
/// The accessors do not check the position (a heap reads several per level, and the checks
/// cost a pop about 8 %): the caller keeps every position it reads below the `len` it last
/// made room for, plus [`LINE`].
#[derive(Debug)]
pub(super) struct HeapLines<T> {
    lines: Vec<Line<T>>,
    fill: T,
}

impl<T: Copy> HeapLines<T> {
    /// A line of values is the values, with no padding: slot `s` is the `s`th value from the
    /// start.
    const PACKED: () = assert!(size_of::<Line<T>>() == LINE * size_of::<T>());

    /// Lines for `len` entries and the children of any of them: slots up to `len + 2 LINE - 2`.
    fn lines_for(len: usize) -> usize {
        len / LINE + 3
    }

    /// Room for `capacity` entries, every slot `fill`.
    pub fn with_capacity(capacity: usize, fill: T) -> Self {
        let () = Self::PACKED;
        Self {
            lines: vec![Line([fill; LINE]); Self::lines_for(capacity)],
            fill,
        }
    }

    /// Makes room for `len` entries.
    #[inline(always)]
    pub fn make_room(&mut self, len: usize) {
        while self.lines.len() < Self::lines_for(len) {
            std::hint::cold_path();
            self.lines.push(Line([self.fill; LINE]));
        }
    }

    /// The value at position `at`.
    ///
    /// # Safety
    /// `at` is below `len + LINE` for the last `len` given to [`HeapLines::make_room`].
    #[inline(always)]
    pub unsafe fn get(&self, at: usize) -> T {
        debug_assert!(at + LINE <= self.lines.len() * LINE);
        // SAFETY: the slot is below `len + 2 LINE - 1`, inside the lines (`lines_for`), which
        // are `T`s with nothing between them (`PACKED`).
        unsafe { *self.lines.as_ptr().cast::<T>().add(at + LINE - 1) }
    }

    /// Sets the value at position `at`.
    ///
    /// # Safety
    /// As [`HeapLines::get`].
    #[inline(always)]
    pub unsafe fn set(&mut self, at: usize, value: T) {
        debug_assert!(at + LINE <= self.lines.len() * LINE);
        // SAFETY: as `get`.
        unsafe { *self.lines.as_mut_ptr().cast::<T>().add(at + LINE - 1) = value }
    }
}

impl HeapLines<f64> {
    /// The position and key of the first smallest child of `at` (slots past the last entry
    /// hold `+inf`, so it is an entry where `at` has one child or more).
    ///
    /// # Safety
    /// `at` has a child: `LINE * at + 1` is below the `len` last given to
    /// [`HeapLines::make_room`].
    #[inline(always)]
    pub unsafe fn smallest_child(&self, at: usize) -> (usize, f64) {
        let first = LINE * at + 1;
        // SAFETY: the children are below `first + LINE`, below `len + LINE`.
        let (best, key) = first_smallest::<LINE>(|n| unsafe { self.get(first + n) });
        (first + best, key)
    }

    /// The position and key of a smallest child of `at` (which of equal keys is not said), by
    /// a tournament of the first four children against the last four, then halves again: the
    /// comparisons of a round are lanes of one vector, with no shuffles between rounds. For a
    /// heap that hands out equal keys in any order.
    ///
    /// # Safety
    /// As [`HeapLines::smallest_child`].
    #[inline(always)]
    pub unsafe fn a_smallest_child(&self, at: usize) -> (usize, f64) {
        let first = LINE * at + 1;
        // SAFETY: the children are below `first + LINE`, below `len + LINE`.
        let mut key: [f64; LINE] = std::array::from_fn(|n| unsafe { self.get(first + n) });
        let mut index: [usize; LINE] = std::array::from_fn(|n| n);
        let mut n = LINE;
        while n > 1 {
            n /= 2;
            for i in 0..n {
                let right = key[i + n] < key[i];
                key[i] = if right { key[i + n] } else { key[i] };
                index[i] = if right { index[i + n] } else { index[i] };
            }
        }
        (first + index[0], key[0])
    }
}

/// The index and key of the first smallest of `K` keys (a power of two), by a tournament:
/// neighbours in pairs, then the winners in pairs, each pick keeping the left one unless the
/// right one is strictly smaller. That is the child a chain of strict comparisons from the
/// left picks, with a dependency chain `log2 K` comparisons deep instead of `K - 1`.
#[inline(always)]
pub(super) fn first_smallest<const K: usize>(key_of: impl Fn(usize) -> f64) -> (usize, f64) {
    let mut index: [usize; K] = std::array::from_fn(|i| i);
    let mut key: [f64; K] = std::array::from_fn(key_of);
    let mut n = K;
    while n > 1 {
        for i in 0..n / 2 {
            let (l, r) = (2 * i, 2 * i + 1);
            if key[r] < key[l] {
                (index[i], key[i]) = (index[r], key[r]);
            } else {
                (index[i], key[i]) = (index[l], key[l]);
            }
        }
        n /= 2;
    }
    (index[0], key[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order_with_decrease_key() {
        pops_in_key_order::<ARITY>();
        pops_in_key_order::<8>();
    }

    #[test]
    fn heap_lines_keep_a_nodes_children_in_its_line() {
        let mut keys = HeapLines::with_capacity(0, f64::INFINITY);
        let len = 100;
        keys.make_room(len);
        for at in 0..len {
            // SAFETY: below the room made.
            unsafe { keys.set(at, (at % 7) as f64) };
        }
        for at in 0..len {
            assert_eq!(unsafe { keys.get(at) }, (at % 7) as f64);
            // The children of `at` are one aligned line.
            let first = LINE * at + 1;
            if first < len {
                let line = unsafe { keys.lines.as_ptr().cast::<f64>().add(first + LINE - 1) };
                assert_eq!(line as usize % 64, 0, "node {at}");
                let (best, key) = unsafe { keys.smallest_child(at) };
                let expect = (first..(first + LINE).min(len))
                    .min_by(|&a, &b| ((a % 7) as f64).total_cmp(&((b % 7) as f64)))
                    .unwrap();
                assert_eq!((best, key), (expect, (expect % 7) as f64), "node {at}");
            }
        }
        // Past the last entry: the fill.
        for at in len..len + LINE {
            assert_eq!(unsafe { keys.get(at) }, f64::INFINITY);
        }
    }

    #[test]
    fn a_smallest_child_has_the_smallest_key() {
        // Keys from a small set, so that ties are common, and nodes with fewer than eight
        // children (the fill past the last entry).
        for round in 0..500u64 {
            let len = 1 + (round as usize * 13) % 90;
            let mut keys = HeapLines::with_capacity(0, f64::INFINITY);
            keys.make_room(len);
            let key_of = |at: usize| ((round * 31 + at as u64 * 17 + round * at as u64) % 5) as f64;
            for at in 0..len {
                // SAFETY: below the room made.
                unsafe { keys.set(at, key_of(at)) };
            }
            for at in (0..len).take_while(|at| LINE * at + 1 < len) {
                let children = LINE * at + 1..(LINE * at + 1 + LINE).min(len);
                let min = children.clone().map(key_of).fold(f64::INFINITY, f64::min);
                // SAFETY: `at` has a child.
                let (child, key) = unsafe { keys.a_smallest_child(at) };
                assert!(children.contains(&child), "round {round} node {at}: {child}");
                assert_eq!((key, key_of(child)), (min, min), "round {round} node {at}");
            }
        }
    }

    #[test]
    fn the_tournament_picks_the_first_smallest_child() {
        // Keys from a small set, so that ties are common.
        for round in 0..2000u64 {
            let kids: Vec<Node> = (0..8u64)
                .map(|i| Node {
                    key: ((round * 31 + i * 17 + round * i) % 5) as f64,
                    cell: 0,
                    tag: 0,
                })
                .collect();
            for k in [4, 8] {
                let keys: Vec<f64> = kids[..k].iter().map(|n| n.key).collect();
                let min = keys.iter().copied().fold(f64::INFINITY, f64::min);
                let first = keys.iter().position(|&x| x == min).expect("a minimum");
                let got = if k == 4 {
                    first_smallest::<4>(|i| kids[i].key)
                } else {
                    first_smallest::<8>(|i| kids[i].key)
                };
                assert_eq!(got, (first, min), "{keys:?}");
            }
        }
    }

    fn pops_in_key_order<const K: usize>() {
        let n = 200;
        let mut slot = vec![FAR; n];
        let mut heap = IndexedHeap::<K>::with_capacity(n);
        // A deterministic scramble of keys.
        for cell in 0..n as u32 {
            let key = ((cell as u64 * 7919) % 1009) as f64;
            heap.push(key, cell, cell + 1000, &mut slot);
        }
        // Lower every third key below everything else.
        for cell in (0..n as u32).step_by(3) {
            let pos = slot[cell as usize];
            let key = -(cell as f64);
            assert!(key <= heap.key_at(pos));
            heap.decrease(pos, key, &mut slot);
        }
        let mut last = f64::NEG_INFINITY;
        let mut count = 0;
        while let Some((key, cell, tag)) = heap.pop(&mut slot) {
            assert!(key >= last, "{key} after {last}");
            assert_eq!(tag, cell + 1000, "the tag travels with its cell");
            let expected = if cell % 3 == 0 {
                -(cell as f64)
            } else {
                ((cell as u64 * 7919) % 1009) as f64
            };
            assert_eq!(key, expected);
            // The positions of the entries still in the heap are right.
            for (pos, node) in heap.nodes.iter().enumerate() {
                assert_eq!(slot[node.cell as usize], pos as u32);
            }
            last = key;
            count += 1;
        }
        assert_eq!(count, n);
        assert!(heap.is_empty());
    }
}
