//! The narrow bands the march takes cells from: the 8-ary [`Heap`] ordered by `|value|`, and
//! the first-in, first-out [`Fifo`] of the fast path, which checks that the heap's order holds.

use super::*;

/// The narrow band of a march: the cells reached and not frozen, each with the value of its
/// last update, found again through the handle `push` gives.
pub(super) trait Band: Default {
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
pub(super) struct Fifo {
    /// The cell in each slot of the ring.
    pub(super) cells: Vec<u32>,
    /// The value in each slot of the ring.
    pub(super) values: Vec<f64>,
    /// The `|value|` of the cell whose freezing led to the last update, in each slot of the
    /// ring.
    pub(super) after: Vec<f64>,
    /// The handle of the first entry; an entry's slot is its handle modulo the ring's length,
    /// a power of two.
    pub(super) head: u32,
    /// The handle the next push gives.
    pub(super) tail: u32,
    /// Every cell pushed, until there are [`REACHED_KEPT`] of them.
    pub(super) reached: Vec<u32>,
    /// Whether more cells were pushed than `reached` keeps.
    pub(super) reached_more: bool,
}

/// The most cells a [`Fifo`] keeps the list of, for the heap to take over from them rather than
/// from every cell ([`Marcher::resume`]): 4 MiB.
pub(super) const REACHED_KEPT: usize = 1 << 20;

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
    pub(super) fn slot(&self, handle: u32) -> usize {
        handle as usize & (self.cells.len() - 1)
    }

    /// Doubles the ring, each entry to the slot of its handle in the longer ring.
    #[cold]
    pub(super) fn grow(&mut self) {
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
pub(super) struct Heap<const SIGNED: bool> {
    /// The key at each heap position.
    pub(super) keys: HeapLines<f64>,
    /// The number of entries.
    pub(super) len: usize,
    /// The entry at each heap position: its handle in the low 32 bits, its cell in the high
    /// ones.
    pub(super) entries: HeapLines<u64>,
    /// Each handle's heap position.
    pub(super) position: Vec<u32>,
    /// Each handle's signed value (`SIGNED` only).
    pub(super) signed: Vec<f64>,
    /// Handles not in use: the first `free_len` of one slot per handle.
    pub(super) free: Vec<u32>,
    /// The number of handles not in use.
    pub(super) free_len: usize,
}

/// A heap entry: `handle` and `cell`.
#[inline(always)]
pub(super) fn entry(handle: u32, cell: u32) -> u64 {
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
    pub(super) fn key(v: f64) -> f64 {
        if SIGNED { v.abs() } else { v }
    }

    /// The key at heap position `at` (below `len + LINE`, which `push` makes room for).
    #[inline(always)]
    pub(super) fn key_at(&self, at: usize) -> f64 {
        // SAFETY: every position the heap reads is an entry's, the one past the last, or a
        // child of an entry (below `len + LINE`), and `push` makes room for `len`.
        unsafe { self.keys.get(at) }
    }

    /// The entry at heap position `at`, as [`Heap::key_at`].
    #[inline(always)]
    pub(super) fn entry_at(&self, at: usize) -> u64 {
        // SAFETY: as `key_at`.
        unsafe { self.entries.get(at) }
    }

    /// Sets the key at heap position `at`, as [`Heap::key_at`].
    #[inline(always)]
    pub(super) fn set_key_at(&mut self, at: usize, key: f64) {
        // SAFETY: as `key_at`.
        unsafe { self.keys.set(at, key) }
    }

    /// The cell of the smallest entry.
    #[inline(always)]
    pub(super) fn first_cell(&self) -> Option<u32> {
        (self.len > 0).then(|| (self.entry_at(0) >> 32) as u32)
    }

    /// The smallest entry's key.
    #[inline(always)]
    pub(super) fn peek(&self) -> Option<f64> {
        (self.len > 0).then(|| self.key_at(0))
    }

    /// Adds `cell` with value `v`; the entry's handle.
    #[inline(always)]
    pub(super) fn push(&mut self, cell: u32, v: f64) -> u32 {
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
    pub(super) fn set(&mut self, handle: u32, v: f64) {
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
    pub(super) fn pop(&mut self) -> Option<(u32, f64)> {
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
    pub(super) fn up(&mut self, mut at: usize, key: f64, entry: u64) {
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
    pub(super) fn down(&mut self, mut at: usize, key: f64, entry: u64) {
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
    pub(super) fn put(&mut self, at: usize, key: f64, entry: u64) {
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
