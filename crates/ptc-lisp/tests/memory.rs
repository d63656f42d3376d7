//! Memory footprint of input data: loading a 10,000-record JSON data set must take at most three
//! times the size of its JSON text (the engine issue's target). Measured by counting the bytes
//! the allocator hands out and gets back, each allocation rounded up the way glibc's malloc
//! stores it (8 bytes of header, 16-byte granules, 32 bytes at least), which is exact and does
//! not depend on machine load.

mod support;

use ptc_lisp::from_json_str;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

/// Bytes glibc's malloc uses for a request of `size` bytes.
fn chunk(size: usize) -> isize {
    ((size + 8).div_ceil(16) * 16).max(32) as isize
}

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(chunk(layout.size()), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(chunk(layout.size()), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn ten_thousand_records_take_at_most_three_times_their_json_size() {
    let json = support::products::products_json(10_000);
    // Interned keyword names live for the whole process; intern them before measuring.
    drop(from_json_str(&json).expect("valid JSON"));
    let before = LIVE.load(Ordering::Relaxed);
    let value = from_json_str(&json).expect("valid JSON");
    let used = LIVE.load(Ordering::Relaxed) - before;
    let ratio = used as f64 / json.len() as f64;
    println!(
        "JSON {} bytes, loaded value {} bytes: {ratio:.2}x",
        json.len(),
        used
    );
    assert!(ratio <= 3.0, "loaded data takes {ratio:.2}x its JSON size");
    drop(value);
}
