//! The isotropic march's heap: [`IndexedHeap`](super::heap::IndexedHeap)'s operations with
//! [`WIDE`] children per node, the keys and the cells in two arrays of their own.
//!
//! A pop walks from the root down to where the last entry fits, comparing the keys of each
//! level's eight children and moving one entry up. With the keys alone in their array, eight
//! children are 64 bytes of keys instead of 128 bytes of `(key, cell, tag)` entries, one
//! aligned cache line ([`HeapLines`]), and the front of a 2048² march (about 3,600 entries on
//! average) keeps its keys in 29 KB, about an L1 data cache, instead of 57 KB; only the cell of
//! the child that moves is read from the other array (BENCHMARKS.md compares it with
//! `IndexedHeap`).
//!
//! Every comparison and move is `IndexedHeap`'s, so entries come out in the same order, ties
//! included (tested against it).

use super::heap::{HeapLines, LINE};

/// The isotropic march's branching factor: a third fewer levels per pop than
/// [`ARITY`](super::heap::ARITY) for twice the keys per level, which the tournament of
/// `sift_down` compares three rounds deep (4 % faster at 2048², BENCHMARKS.md). Equal keys
/// leave the heap in another order than with `ARITY`, which only a non-causal (anisotropic)
/// march could notice.
pub const WIDE: usize = LINE;

/// Indexed min-heap of `(key, cell)` with [`WIDE`] children per node; `cell` indexes the
/// caller's `slot` slice, which holds each entry's heap position (see [`super::heap`]).
#[derive(Debug)]
pub(super) struct SplitHeap {
    /// The key at each heap position (`+inf` past the last).
    keys: HeapLines<f64>,
    /// The cell at each heap position; its length is the heap's.
    cells: Vec<u32>,
}

impl SplitHeap {
    /// An empty heap with room for `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            keys: HeapLines::with_capacity(capacity, f64::INFINITY),
            cells: Vec::with_capacity(capacity),
        }
    }

    /// The key of the entry at heap position `pos` (a value of `slot` below
    /// [`super::heap::FAR`]).
    #[inline(always)]
    pub fn key_at(&self, pos: u32) -> f64 {
        assert!(
            (pos as usize) < self.cells.len(),
            "heap position {pos} out of the heap"
        );
        self.key(pos as usize)
    }

    /// The key at heap position `pos`, which is below the heap's length plus [`WIDE`].
    #[inline(always)]
    fn key(&self, pos: usize) -> f64 {
        // SAFETY: `push` makes room for the heap's length, and the heap reads no position
        // beyond it plus `WIDE` (an entry's, the one past the last, or a child of an entry).
        unsafe { self.keys.get(pos) }
    }

    /// Sets the key at heap position `pos`, as [`SplitHeap::key`].
    #[inline(always)]
    fn set_key(&mut self, pos: usize, key: f64) {
        // SAFETY: as `key`.
        unsafe { self.keys.set(pos, key) }
    }

    /// Inserts `cell` (which must not be in the heap) with `key`.
    #[inline(always)]
    pub fn push(&mut self, key: f64, cell: u32, slot: &mut [u32]) {
        let pos = self.cells.len();
        self.cells.push(cell);
        self.keys.make_room(self.cells.len());
        self.set_key(pos, key);
        // A new entry of a march mostly has the largest key: it stays at the end.
        if pos == 0 || self.key((pos - 1) / WIDE) <= key {
            slot[cell as usize] = pos as u32;
            return;
        }
        self.sift_up(pos, key, cell, slot);
    }

    /// Lowers the key of the entry at heap position `pos` to `key` (which must not be larger).
    #[inline(always)]
    pub fn decrease(&mut self, pos: u32, key: f64, slot: &mut [u32]) {
        let p = pos as usize;
        assert!(p < self.cells.len(), "heap position {pos} out of the heap");
        // Mostly the entry stays where it is (a march lowers a key by less than the gap to its
        // parent's: a 2048² march makes 4.2 million decreases and 4.2 million pushes, which
        // move entries up 61 thousand times in all): then only its key changes, and its cell
        // and slot are not touched.
        if p == 0 || self.key((p - 1) / WIDE) <= key {
            self.set_key(p, key);
            return;
        }
        let cell = self.cells[p];
        self.sift_up(pos as usize, key, cell, slot);
    }

    /// Removes and returns the entry with the smallest key as `(key, cell)`. The popped cell's
    /// `slot` is left to the caller.
    #[inline(always)]
    pub fn pop(&mut self, slot: &mut [u32]) -> Option<(f64, u32)> {
        let top = (self.key(0), *self.cells.first()?);
        let last_cell = self.cells.pop().expect("heap is not empty");
        let last = self.cells.len();
        let last_key = self.key(last);
        self.set_key(last, f64::INFINITY);
        if last > 0 {
            self.sift_down(last_key, last_cell, slot);
        }
        Some(top)
    }

    /// Moves the hole at `pos` up until `key` fits, then stores `(key, cell)` there.
    #[inline(always)]
    fn sift_up(&mut self, mut pos: usize, key: f64, cell: u32, slot: &mut [u32]) {
        while pos > 0 {
            let parent = (pos - 1) / WIDE;
            let parent_key = self.key(parent);
            if parent_key <= key {
                break;
            }
            let parent_cell = self.cells[parent];
            self.set_key(pos, parent_key);
            self.cells[pos] = parent_cell;
            slot[parent_cell as usize] = pos as u32;
            pos = parent;
        }
        self.set_key(pos, key);
        self.cells[pos] = cell;
        slot[cell as usize] = pos as u32;
    }

    /// Places `(key, cell)` at the root hole and moves it down to where it fits, as
    /// `IndexedHeap::sift_down`.
    #[inline(always)]
    fn sift_down(&mut self, key: f64, cell: u32, slot: &mut [u32]) {
        let len = self.cells.len();
        let mut pos = 0;
        loop {
            if pos * WIDE + 1 >= len {
                break;
            }
            // The children are entries, then `+inf` past the last (which no entry's key is
            // below): the first smallest is the one `IndexedHeap` picks.
            // SAFETY: `pos` has a child, an entry.
            let (best, best_key) = unsafe { self.keys.smallest_child(pos) };
            if key <= best_key {
                break;
            }
            let moved = self.cells[best];
            self.set_key(pos, best_key);
            self.cells[pos] = moved;
            slot[moved as usize] = pos as u32;
            pos = best;
        }
        self.set_key(pos, key);
        self.cells[pos] = cell;
        slot[cell as usize] = pos as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eikonal::heap::{FAR, IndexedHeap};

    /// Random pushes, decreases and pops, the same on both heaps: the same entries come out in
    /// the same order (ties included: keys from a small set), with the same positions.
    #[test]
    fn does_what_the_indexed_heap_does() {
        let n = 300usize;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut slot_a = vec![FAR; n];
        let mut slot_b = vec![FAR; n];
        let mut reference = IndexedHeap::<WIDE>::with_capacity(4);
        let mut heap = SplitHeap::with_capacity(4);
        let (mut popped, mut decreased) = (0, 0);
        for _ in 0..20_000 {
            let cell = (next() % n as u64) as usize;
            match next() % 4 {
                0..=2 => {
                    let key = (next() % 40) as f64;
                    if slot_a[cell] == FAR {
                        reference.push(key, cell as u32, 0, &mut slot_a);
                        heap.push(key, cell as u32, &mut slot_b);
                    } else if slot_a[cell] < FAR && key < reference.key_at(slot_a[cell]) {
                        assert_eq!(heap.key_at(slot_b[cell]), reference.key_at(slot_a[cell]));
                        reference.decrease(slot_a[cell], key, &mut slot_a);
                        heap.decrease(slot_b[cell], key, &mut slot_b);
                        decreased += 1;
                    }
                }
                _ => {
                    let a = reference.pop(&mut slot_a).map(|(k, c, _)| (k, c));
                    let b = heap.pop(&mut slot_b);
                    assert_eq!(a, b);
                    if let Some((_, c)) = a {
                        // Out of the heap (a march never pushes a cell again, a heap may).
                        slot_a[c as usize] = FAR;
                        slot_b[c as usize] = FAR;
                        popped += 1;
                    }
                }
            }
            assert_eq!(slot_a, slot_b);
        }
        while let Some((k, c, _)) = reference.pop(&mut slot_a) {
            assert_eq!(heap.pop(&mut slot_b), Some((k, c)));
            popped += 1;
        }
        assert_eq!(heap.pop(&mut slot_b), None);
        assert!(
            popped > 2000 && decreased > 2000,
            "{popped} pops, {decreased} decreases"
        );
    }
}
