//! One rank's allocator state behind its lock: the dlmalloc instance over
//! the rank's [`Arena`], with "fast lists" of tiny free chunks in front.
//!
//! dlmalloc coalesces every freed chunk with its free neighbours at once.
//! When a program frees many tiny blocks in a row (a typical pattern:
//! build a list of small nodes, tear it down), each free merges into a
//! growing free chunk that moves between tree bins, which costs more than
//! the allocation itself. glibc avoids this with fastbins; the fast lists
//! are the same idea: tiny chunks that reach the lock (thread-cache
//! overflow) go onto a per-size list without coalescing and are reused from
//! there first. They are handed back to dlmalloc ("consolidated") when they
//! hold more than [`FAST_LIMIT`] bytes, and whenever dlmalloc cannot serve a
//! request, so they never cause an allocation to fail or the heap to grow
//! while they could have served it.

use dlmalloc::Dlmalloc;

use super::arena::{self, Arena};

/// Largest chunk kept on a fast list (requests up to 152 bytes).
pub const FAST_MAX_CHUNK: usize = 160;
/// Smallest dlmalloc chunk.
const MIN_CHUNK: usize = 32;
/// Number of fast lists (16-byte steps from 32 to 160).
const FAST_BINS: usize = (FAST_MAX_CHUNK - MIN_CHUNK) / 16 + 1;
/// Bytes of tiny chunks held before they are consolidated.
pub const FAST_LIMIT: usize = 4 << 20;

/// The dlmalloc chunk size for a request (dlmalloc's `request2size`).
#[inline]
pub fn chunk_for_request(size: usize) -> usize {
    (size.saturating_add(8 + 15) & !15).max(MIN_CHUNK)
}

/// The rank's allocator state. Lives in process-private memory; the chunks
/// it manages live in the rank's part of the shared region.
///
/// Invariants: every chunk on `fast[i]` is an in-use (from dlmalloc's view)
/// chunk of this instance of size `MIN_CHUNK + 16 * i`, linked through its
/// first word and referenced by nobody else; `fast_bytes` is the sum of
/// their sizes.
pub struct Pool {
    dl: Dlmalloc<Arena>,
    fast: [*mut u8; FAST_BINS],
    fast_bytes: usize,
}

// SAFETY: the raw pointers are chunks owned by this pool; the pool is only
// used under the mutex that holds it.
unsafe impl Send for Pool {}

impl Pool {
    /// A pool over an unconfigured arena (every request fails).
    pub const fn new() -> Pool {
        Pool {
            dl: Dlmalloc::new_with_allocator(Arena::empty()),
            fast: [core::ptr::null_mut(); FAST_BINS],
            fast_bytes: 0,
        }
    }

    /// The arena under the dlmalloc instance.
    pub fn arena(&self) -> &Arena {
        self.dl.allocator()
    }

    /// Gives unused committed pages back if they have waited long enough.
    pub fn maybe_purge(&self) {
        self.dl.allocator().maybe_purge();
    }

    /// Bytes of tiny chunks waiting on the fast lists.
    pub fn fast_bytes(&self) -> usize {
        self.fast_bytes
    }

    /// Runs `f`; if it fails and tiny chunks are held back, consolidates
    /// them and runs it again.
    #[inline]
    fn or_consolidate(&mut self, f: impl Fn(&mut Dlmalloc<Arena>) -> *mut u8) -> *mut u8 {
        let p = f(&mut self.dl);
        if !p.is_null() || self.fast_bytes == 0 {
            return p;
        }
        self.consolidate();
        f(&mut self.dl)
    }

    /// `malloc(size)` with the natural alignment.
    pub fn malloc(&mut self, size: usize) -> *mut u8 {
        let chunk = chunk_for_request(size);
        if chunk <= FAST_MAX_CHUNK {
            let bin = (chunk - MIN_CHUNK) / 16;
            let p = self.fast[bin];
            if !p.is_null() {
                // SAFETY: a fast-list chunk; its first word is the link.
                self.fast[bin] = unsafe { p.cast::<*mut u8>().read() };
                self.fast_bytes -= chunk;
                return p;
            }
        }
        // SAFETY: the instance is used under its lock.
        self.or_consolidate(|d| unsafe { d.c_malloc(size) })
    }

    /// `size` bytes aligned to `align` (a power of two), zeroed if `zero`.
    pub fn memalign(&mut self, align: usize, size: usize, zero: bool) -> *mut u8 {
        // SAFETY: `align` is a power of two by the caller's contract; the
        // instance is used under its lock.
        self.or_consolidate(|d| unsafe {
            if zero {
                d.calloc(size, align)
            } else {
                d.c_memalign(align, size)
            }
        })
    }

    /// Resizes a live block of this pool; null (block untouched) if no room.
    ///
    /// # Safety
    /// `p` is a live block of this pool.
    pub unsafe fn realloc(&mut self, p: *mut u8, size: usize) -> *mut u8 {
        // SAFETY: forwarded from the caller.
        self.or_consolidate(|d| unsafe { d.c_realloc(p, size) })
    }

    /// Frees a live block of this pool.
    ///
    /// # Safety
    /// `p` is a live block of this pool, given up by the caller.
    pub unsafe fn free(&mut self, p: *mut u8) {
        // SAFETY: a live block of this instance.
        let chunk = unsafe { arena::chunk_size(p) };
        if chunk <= FAST_MAX_CHUNK {
            let bin = (chunk - MIN_CHUNK) / 16;
            // SAFETY: the caller gives `p` up; its first word becomes the link.
            unsafe { p.cast::<*mut u8>().write(self.fast[bin]) };
            self.fast[bin] = p;
            self.fast_bytes += chunk;
            if self.fast_bytes > FAST_LIMIT {
                self.consolidate();
            }
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { self.dl.c_free(p) };
        }
    }

    /// Hands every fast-list chunk back to dlmalloc.
    pub fn consolidate(&mut self) {
        for bin in 0..FAST_BINS {
            let mut p = core::mem::replace(&mut self.fast[bin], core::ptr::null_mut());
            while !p.is_null() {
                // SAFETY: fast-list chunks are live blocks of this instance
                // (by the invariant); read the link, then free each once.
                unsafe {
                    let next = p.cast::<*mut u8>().read();
                    self.dl.c_free(p);
                    p = next;
                }
            }
        }
        self.fast_bytes = 0;
    }
}

impl Default for Pool {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heap::arena::testing::Fixture;

    fn pool(f: &Fixture) -> Pool {
        let p = Pool::new();
        f.configure(p.arena());
        p
    }

    #[test]
    fn request_classes_match_dlmalloc() {
        let f = Fixture::new(16 << 20);
        let mut p = pool(&f);
        for size in [0usize, 1, 24, 25, 100, 152, 153, 1000] {
            let b = p.malloc(size);
            assert!(!b.is_null());
            // SAFETY: a live block.
            assert_eq!(
                unsafe { arena::chunk_size(b) },
                chunk_for_request(size),
                "size {size}"
            );
        }
    }

    #[test]
    fn tiny_frees_are_reused_without_coalescing() {
        let f = Fixture::new(16 << 20);
        let mut p = pool(&f);
        let blocks: Vec<*mut u8> = (0..100).map(|_| p.malloc(40)).collect();
        for &b in &blocks {
            // SAFETY: each live block freed once.
            unsafe { p.free(b) };
        }
        assert_eq!(p.fast_bytes(), 100 * 48);
        // LIFO reuse: the last freed comes back first.
        assert_eq!(p.malloc(40), *blocks.last().unwrap());
        assert_eq!(p.fast_bytes(), 99 * 48);
        // Larger requests do not use the fast lists.
        let big = p.malloc(500);
        assert!(!blocks.contains(&big));
    }

    #[test]
    fn fast_lists_are_bounded_and_consolidated_when_memory_runs_out() {
        let f = Fixture::new(8 << 20);
        let mut p = pool(&f);
        let mut blocks = Vec::new();
        loop {
            let b = p.malloc(16);
            if b.is_null() {
                break;
            }
            blocks.push(b);
        }
        assert!(blocks.len() > 100_000);
        for &b in &blocks {
            // SAFETY: each live block freed once.
            unsafe { p.free(b) };
            assert!(p.fast_bytes() <= FAST_LIMIT);
        }
        // The held-back chunks must not make a large request fail.
        let big = p.malloc(6 << 20);
        assert!(!big.is_null(), "consolidation must give the space back");
        assert_eq!(p.fast_bytes(), 0);
    }
}
