//! A counting global allocator for tests and fuzzing: it forwards every call to the system
//! allocator and counts, per thread, the live heap bytes and their peak, so a test can state
//! "this call never held more than N bytes" ([`peak_of`]) while other tests run on other
//! threads. Install it in a test or binary with:
//!
//! ```
//! #[global_allocator]
//! static ALLOCATOR: mwp_alloc_count::Counting = mwp_alloc_count::Counting;
//!
//! fn main() {
//!     let (peak, buffer) = mwp_alloc_count::peak_of(|| vec![0u8; 4096]);
//!     assert!(peak >= buffer.len());
//! }
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The counting allocator.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn grow(bytes: usize) {
    // `try_with`: during thread teardown the counters may be gone; counting stops, nothing
    // fails.
    let _ = LIVE.try_with(|live| {
        let now = live.get().saturating_add(bytes);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn shrink(bytes: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(bytes)));
}

#[allow(unsafe_code)]
// SAFETY: every method forwards to the system allocator with the same arguments; the
// counting touches only const-initialized thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        // SAFETY: the caller's layout, forwarded unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        // SAFETY: the caller's layout, forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrink(layout.size());
        // SAFETY: `ptr` was allocated by this allocator (hence by `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A moving realloc holds both blocks for a moment: the new size is counted before the
        // old one is released, as the real peak is.
        grow(new_size);
        shrink(layout.size());
        // SAFETY: `ptr` was allocated by this allocator (hence by `System`) with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Live heap bytes this thread holds now (0 unless [`Counting`] is the global allocator).
pub fn live_bytes() -> usize {
    LIVE.with(Cell::get)
}

/// Runs `work` and returns the peak of live bytes it added on this thread above what was
/// live when it started, with its result.
pub fn peak_of<T>(work: impl FnOnce() -> T) -> (usize, T) {
    let base = begin();
    let result = work();
    (peak_since(base), result)
}

/// Starts a measurement on this thread: the peak is reset to the live bytes, which are
/// returned (pair with [`peak_since`]).
pub fn begin() -> usize {
    let live = live_bytes();
    PEAK.with(|peak| peak.set(live));
    live
}

/// The peak of live bytes on this thread since [`begin`] returned `live_at_begin`, above it.
pub fn peak_since(live_at_begin: usize) -> usize {
    PEAK.with(Cell::get).saturating_sub(live_at_begin)
}
