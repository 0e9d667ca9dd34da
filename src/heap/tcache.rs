//! Per-thread cache of small free blocks of this rank's shared heap.
//!
//! The same idea as glibc's tcache: a thread keeps a few recently freed
//! blocks per size class and hands them out again without taking the
//! allocator lock or running dlmalloc. Blocks in the cache are still "in
//! use" as far as dlmalloc is concerned; each bin is a singly linked list
//! threaded through the blocks' first word.
//!
//! Size classes are dlmalloc chunk sizes (16-byte steps from 32 to 1040
//! bytes, i.e. requests up to 1032 bytes), read from the chunk header on
//! `free`, so a block goes back exactly to the class a `malloc` of its size
//! would look in.
//!
//! RATIONALE for the thread-exit hook: a cache with a `Drop` impl would make
//! Rust register a TLS destructor on first use, which calls `calloc`, which
//! re-enters this cache before it is marked initialised. Instead the cache
//! has no destructor and a pthread key (created at load time) flushes it; the
//! "registered" flag is set before `pthread_setspecific`, which may itself
//! allocate, so the nested call finds the cache ready.
//!
//! The thread that loaded heapmpi keeps its cache in a plain static
//! (`crate::sys::tls`): reaching the thread-local one through
//! `__tls_get_addr` was a third of a small `malloc`/`free` pair. Its exit
//! hook also clears the registration, so a thread that reuses its thread
//! pointer registers its own.
//!
//! After `fork()` the child never reaches the cache: `malloc` consults it
//! only while the heap is active and `free` only for blocks of this rank's
//! part, and the fork handler turns both off.

use core::cell::Cell;
use core::ptr;
use std::sync::atomic::{AtomicU32, Ordering};

use super::pool::chunk_for_request;
use crate::sys::tls::Owned;

/// Number of size classes.
const BINS: usize = 64;
/// Blocks kept per class.
const DEPTH: u8 = 8;
/// Smallest dlmalloc chunk.
const MIN_CHUNK: usize = 32;
/// Largest cached chunk size.
const MAX_CHUNK: usize = MIN_CHUNK + (BINS - 1) * 16;
/// Largest request served from the cache (chunk = request + 8, rounded to 16).
pub const MAX_REQUEST: usize = MAX_CHUNK - 8;

/// Blocks taken from dlmalloc at once when a bin is empty.
pub const REFILL: usize = 4;

/// The request size whose dlmalloc chunk is exactly the class of `size`:
/// refilling with it yields blocks that serve any request of that class.
#[inline]
pub fn class_request(size: usize) -> usize {
    chunk_for_request(size) - 8
}

#[inline]
fn bin_of_chunk(chunk: usize) -> usize {
    (chunk - MIN_CHUNK) / 16
}

struct Cache {
    heads: [Cell<*mut u8>; BINS],
    counts: [Cell<u8>; BINS],
    /// The flush hook is registered for this thread (or being registered).
    registered: Cell<bool>,
}

impl Cache {
    const fn new() -> Cache {
        Cache {
            heads: [const { Cell::new(ptr::null_mut()) }; BINS],
            counts: [const { Cell::new(0) }; BINS],
            registered: Cell::new(false),
        }
    }
}

thread_local! {
    static CACHE: Cache = const { Cache::new() };
}

/// The owner thread's cache (see the module doc).
static OWNER_CACHE: Owned<Cache> = Owned::new(Cache::new());

/// Runs `f` on the calling thread's cache; `None` while the thread's
/// thread-local storage is being torn down.
#[inline(always)]
fn with_cache<R>(f: impl FnOnce(&Cache) -> R) -> Option<R> {
    OWNER_CACHE.try_with(&CACHE, f)
}

/// The pthread key whose destructor flushes a thread's cache (0 = none;
/// keys are never 0 after creation here because we store key + 1). Written
/// once at load time before any thread can use the cache; Relaxed suffices
/// because `pthread_create` orders it before everything a new thread does.
static KEY: AtomicU32 = AtomicU32::new(0);

/// Creates the thread-exit hook; called once at load time.
pub fn init() {
    let mut key: libc::pthread_key_t = 0;
    // SAFETY: `key` is a valid out-pointer; the destructor is a plain fn.
    if unsafe { libc::pthread_key_create(&mut key, Some(on_thread_exit)) } == 0 {
        KEY.store(key + 1, Ordering::Relaxed);
    }
}

extern "C" fn on_thread_exit(_: *mut libc::c_void) {
    flush();
    // A later thread may reuse this one's thread pointer, and with it the
    // static cache: it must register its own exit hook.
    let _ = with_cache(|c| c.registered.set(false));
}

/// Takes a block for a `size`-byte request, if one is cached.
#[inline]
pub fn pop(size: usize) -> Option<*mut u8> {
    let bin = bin_of_chunk(chunk_for_request(size));
    with_cache(|c| {
        let p = c.heads[bin].get();
        if p.is_null() {
            return None;
        }
        // SAFETY: cached blocks are live blocks of this rank's heap whose
        // first word holds the next link.
        c.heads[bin].set(unsafe { p.cast::<*mut u8>().read() });
        c.counts[bin].set(c.counts[bin].get() - 1);
        Some(p)
    })
    .flatten()
}

/// Offers a block of this rank's heap with dlmalloc chunk size `chunk` to the
/// cache; false if it does not fit (too large, bin full, thread exiting).
/// May allocate (first use in a thread), so never call it with the
/// allocator lock held.
///
/// # Safety
/// `p` is a live block of this rank's dlmalloc instance that the caller is
/// freeing.
#[inline]
pub unsafe fn push(p: *mut u8, chunk: usize) -> bool {
    if chunk > MAX_CHUNK {
        return false;
    }
    let bin = bin_of_chunk(chunk);
    with_cache(|c| {
        if c.counts[bin].get() >= DEPTH {
            return false;
        }
        if !c.registered.get() {
            let key = KEY.load(Ordering::Relaxed);
            if key == 0 {
                return false;
            }
            c.registered.set(true);
            // SAFETY: `key` was created by `init`; any non-null value
            // makes the destructor run at thread exit.
            unsafe { libc::pthread_setspecific(key - 1, core::ptr::dangling::<libc::c_void>()) };
        }
        // SAFETY: the caller gives up `p`; its first word becomes the link.
        unsafe { p.cast::<*mut u8>().write(c.heads[bin].get()) };
        c.heads[bin].set(p);
        c.counts[bin].set(c.counts[bin].get() + 1);
        true
    })
    .unwrap_or(false)
}

/// Empties the bin of chunk size `chunk` and returns its list (linked
/// through the first word, null-terminated), so the caller can free the
/// blocks under one lock.
#[inline]
pub fn take_bin(chunk: usize) -> *mut u8 {
    if chunk > MAX_CHUNK {
        return ptr::null_mut();
    }
    let bin = bin_of_chunk(chunk);
    with_cache(|c| {
        c.counts[bin].set(0);
        c.heads[bin].replace(ptr::null_mut())
    })
    .unwrap_or(ptr::null_mut())
}

/// Returns every block cached by this thread to the rank's pool. In a
/// forked child (heap no longer active) the blocks belong to the parent's
/// heap and its lock may have been held at `fork`: they are dropped instead.
pub fn flush() {
    let give_back = super::is_active();
    let _ = with_cache(|c| {
        for bin in 0..BINS {
            let mut p = c.heads[bin].replace(ptr::null_mut());
            c.counts[bin].set(0);
            while give_back && !p.is_null() {
                // SAFETY: `p` is a cached block; read the link before freeing.
                let next = unsafe { p.cast::<*mut u8>().read() };
                // SAFETY: cached blocks belong to this rank's instance.
                unsafe { super::free_to_pool(p) };
                p = next;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_match_dlmalloc_request2size() {
        assert_eq!(chunk_for_request(0), 32);
        assert_eq!(chunk_for_request(24), 32);
        assert_eq!(chunk_for_request(25), 48);
        assert_eq!(chunk_for_request(MAX_REQUEST), MAX_CHUNK);
        for n in 0..=MAX_REQUEST {
            assert_eq!(chunk_for_request(class_request(n)), chunk_for_request(n));
            assert!(class_request(n) >= n);
        }
        assert_eq!(bin_of_chunk(MAX_CHUNK), BINS - 1);
        assert_eq!(bin_of_chunk(32), 0);
    }

    #[test]
    fn each_thread_has_its_own_cache() {
        init();
        let mut mine = [0u64; 8];
        let p: *mut u8 = mine.as_mut_ptr().cast();
        // SAFETY: a test buffer; only its first word is written.
        assert!(unsafe { push(p, 64) });
        let other = std::thread::spawn(|| {
            let mut theirs = [0u64; 8];
            let q: *mut u8 = theirs.as_mut_ptr().cast();
            let before = pop(56);
            // SAFETY: as above.
            let pushed = unsafe { push(q, 64) };
            let after = pop(56).map(|x| x as usize);
            (before.is_none(), pushed, after == Some(q as usize))
        })
        .join()
        .unwrap();
        assert!(other.0, "another thread saw this thread's block");
        assert!(other.1 && other.2, "another thread's own cache failed");
        assert_eq!(pop(56), Some(p));
    }

    #[test]
    fn push_pop_lifo_and_depth() {
        // Plain aligned buffers stand in for heap blocks: only the link word
        // is touched.
        let mut blocks = vec![[0u64; 8]; 10];
        let ptrs: Vec<*mut u8> = blocks.iter_mut().map(|b| b.as_mut_ptr().cast()).collect();
        init();
        for &p in &ptrs[..8] {
            // SAFETY: test buffers; only the first word is written.
            assert!(unsafe { push(p, 48) });
        }
        // SAFETY: as above.
        assert!(!unsafe { push(ptrs[8], 48) }, "bin full");
        assert!(!unsafe { push(ptrs[9], MAX_CHUNK + 16) }, "too large");
        for &p in ptrs[..8].iter().rev() {
            assert_eq!(pop(30), Some(p));
        }
        assert_eq!(pop(30), None);
        assert_eq!(pop(10), None);
        // SAFETY: as above.
        unsafe {
            assert!(push(ptrs[0], 48));
            assert!(push(ptrs[1], 48));
        }
        let list = take_bin(48);
        assert_eq!(list, ptrs[1]);
        // SAFETY: the link word of a cached test buffer.
        assert_eq!(unsafe { list.cast::<*mut u8>().read() }, ptrs[0]);
        assert_eq!(pop(30), None);
    }
}
