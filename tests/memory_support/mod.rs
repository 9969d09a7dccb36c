//! A counting global allocator for the memory tests: the heap bytes live now and at the peak,
//! and a cap past which an allocation fails (the process then aborts, as on a machine with only
//! that much memory). A test binary installs it with
//! `#[global_allocator] static HEAP: memory_support::Counting = memory_support::Counting;`.

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The allocator: the system's, counted.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static CAP: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Counts `bytes` more as live; `false` (counting nothing) when that passes the cap.
fn take(bytes: usize) -> bool {
    let live = LIVE.fetch_add(bytes, Ordering::SeqCst) + bytes;
    if live > CAP.load(Ordering::SeqCst) {
        LIVE.fetch_sub(bytes, Ordering::SeqCst);
        return false;
    }
    PEAK.fetch_max(live, Ordering::SeqCst);
    true
}

fn give(bytes: usize) {
    LIVE.fetch_sub(bytes, Ordering::SeqCst);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !take(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            give(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !take(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            give(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        give(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Both blocks may be live at once while the bytes are copied.
        if !take(new_size) {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            give(new_size);
        } else {
            give(layout.size());
        }
        p
    }
}

/// Heap bytes live now.
pub fn live() -> usize {
    LIVE.load(Ordering::SeqCst)
}

/// The most heap bytes live at once since the last [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Ordering::SeqCst)
}

/// Starts a new peak from the bytes live now.
pub fn reset_peak() {
    PEAK.store(live(), Ordering::SeqCst);
}

/// Makes every allocation that would bring the live bytes past `bytes` fail.
pub fn set_cap(bytes: usize) {
    CAP.store(bytes, Ordering::SeqCst);
}
