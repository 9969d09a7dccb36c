//! The marcher's big per-cell arrays, on transparent huge pages where Linux offers them.
//!
//! A march reads and writes its per-cell arrays along a front that crosses every row of the
//! grid, so on a large grid almost every access lands on a different 4 KiB page and TLB misses
//! become a large share of the solve (2048², point source: 0.57 s with 4 KiB pages, 0.49 s with
//! huge pages, same values). Under the kernel's default `madvise` THP mode a region must ask for
//! huge pages: an anonymous map advised `MADV_HUGEPAGE` does, in safe code, and an array the
//! caller owns (numpy's, for the Python package) is advised in place ([`advise_huge_pages`]).
//! Small arrays, other platforms, and any map or advice the system refuses fall back to a plain
//! `Vec` or 4 KiB pages: the contents are the same either way, only the page size differs.

use bytemuck::Pod;
use memmap2::MmapMut;
use std::marker::PhantomData;

/// Arrays at least this large (bytes) are mapped: a 2 MiB huge page needs a few of them to pay
/// for the `mmap` call, and below this size the TLB covers the array anyway.
const MAP_BYTES: usize = 4 << 20;

/// A fixed-length array of `T`, mapped (huge pages advised) or on the heap.
pub(crate) enum Scratch<T> {
    /// An anonymous map, page-aligned, holding `len * size_of::<T>()` bytes.
    Mapped(MmapMut, PhantomData<T>),
    /// A plain vector.
    Heap(Vec<T>),
}

impl<T: Pod> Scratch<T> {
    /// `len` copies of `value`.
    pub fn filled(len: usize, value: T) -> Self {
        let bytes = len.saturating_mul(size_of::<T>());
        if bytes >= MAP_BYTES
            && let Ok(mut map) = MmapMut::map_anon(bytes)
        {
            // Advice only: refused (no THP in this kernel) it changes nothing but speed.
            #[cfg(target_os = "linux")]
            let _ = map.advise(memmap2::Advice::HugePage);
            // Page-aligned and a whole number of `T`: the cast cannot fail.
            bytemuck::cast_slice_mut::<u8, T>(&mut map).fill(value);
            return Self::Mapped(map, PhantomData);
        }
        Self::Heap(vec![value; len])
    }

    /// `len` zeros (all bits 0). A mapped array comes zeroed from the kernel page by page as
    /// it is first written, so nothing is filled up front; a `Vec` is zeroed by the allocator.
    pub fn zeroed(len: usize) -> Self {
        let bytes = len.saturating_mul(size_of::<T>());
        if bytes >= MAP_BYTES
            && let Ok(map) = MmapMut::map_anon(bytes)
        {
            #[cfg(target_os = "linux")]
            let _ = map.advise(memmap2::Advice::HugePage);
            return Self::Mapped(map, PhantomData);
        }
        Self::Heap(vec![T::zeroed(); len])
    }

    /// The array.
    pub fn as_slice(&self) -> &[T] {
        match self {
            Self::Mapped(map, _) => bytemuck::cast_slice(map),
            Self::Heap(v) => v,
        }
    }

    /// The array, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Self::Mapped(map, _) => bytemuck::cast_slice_mut(map),
            Self::Heap(v) => v,
        }
    }
}

/// Asks Linux to back the whole 2 MiB pages inside `array` with huge pages, as they are first
/// touched (an array the kernel has already paged in is merged later, by `khugepaged`). Arrays
/// under [`MAP_BYTES`] and other platforms are left as they are.
pub(crate) fn advise_huge_pages<T: Pod>(array: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE: usize = 2 << 20;
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(array);
        if bytes.len() < MAP_BYTES {
            return;
        }
        let start = bytes.as_mut_ptr() as usize;
        let from = start.next_multiple_of(HUGE_PAGE) - start;
        let to = (start + bytes.len()) / HUGE_PAGE * HUGE_PAGE - start;
        if to > from {
            let pages = &mut bytes[from..to];
            // SAFETY: the range is memory this function borrows mutably, whole pages of it,
            // and `MADV_HUGEPAGE` changes only how it is paged, never its contents. A refusal
            // (no THP in this kernel) changes nothing but speed.
            unsafe {
                libc::madvise(pages.as_mut_ptr().cast(), pages.len(), libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = array;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advised_arrays_keep_their_contents() {
        for len in [0, 7, (MAP_BYTES / 8) * 3 + 5] {
            let mut a: Vec<u64> = (0..len as u64).collect();
            advise_huge_pages(&mut a);
            assert!(a.iter().enumerate().all(|(i, &v)| v == i as u64));
        }
    }

    #[test]
    fn zeroed_arrays_are_zero_mapped_or_not() {
        for len in [0, 5, (MAP_BYTES / 8) + 3] {
            let a = Scratch::<u64>::zeroed(len);
            assert_eq!(matches!(a, Scratch::Mapped(..)), len * 8 >= MAP_BYTES);
            assert_eq!(a.as_slice().len(), len);
            assert!(a.as_slice().iter().all(|&v| v == 0));
        }
    }

    #[test]
    fn small_and_large_arrays_hold_what_was_written() {
        for len in [0, 1, 1000, (MAP_BYTES / 8) + 3] {
            let mut a = Scratch::filled(len, f64::INFINITY);
            assert_eq!(
                matches!(a, Scratch::Mapped(..)),
                len * 8 >= MAP_BYTES,
                "len {len}"
            );
            assert_eq!(a.as_slice().len(), len);
            assert!(a.as_slice().iter().all(|&v| v == f64::INFINITY));
            for (i, v) in a.as_mut_slice().iter_mut().enumerate() {
                *v = i as f64;
            }
            assert!(a.as_slice().iter().enumerate().all(|(i, &v)| v == i as f64));
        }
    }
}
