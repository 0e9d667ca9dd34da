//! glibc's allocator, bound directly.
//!
//! heapmpi exports `malloc` and friends, so inside this library the plain
//! names resolve back to heapmpi itself. glibc exports its implementation a
//! second time under `__libc_*` names (GLIBC_2.2.5); binding those directly
//! means the pass-through path never needs `dlsym` (which itself allocates)
//! and can never recurse into heapmpi.

use core::ffi::c_void;
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_calloc(nmemb: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    fn __libc_free(ptr: *mut c_void);
    fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
    fn __libc_valloc(size: usize) -> *mut c_void;
    fn __libc_pvalloc(size: usize) -> *mut c_void;
}

/// glibc `malloc`.
#[inline]
pub fn malloc(size: usize) -> *mut u8 {
    // SAFETY: glibc's malloc accepts any size and returns null or a fresh block.
    unsafe { __libc_malloc(size).cast() }
}

/// glibc `calloc` (checks `nmemb * size` for overflow itself).
#[inline]
pub fn calloc(nmemb: usize, size: usize) -> *mut u8 {
    // SAFETY: glibc's calloc accepts any arguments.
    unsafe { __libc_calloc(nmemb, size).cast() }
}

/// glibc `realloc`.
///
/// # Safety
/// `ptr` is null or a live block from glibc's allocator.
#[inline]
pub unsafe fn realloc(ptr: *mut u8, size: usize) -> *mut u8 {
    // SAFETY: forwarded from the caller.
    unsafe { __libc_realloc(ptr.cast(), size).cast() }
}

/// glibc `free`.
///
/// # Safety
/// `ptr` is null or a live block from glibc's allocator.
#[inline]
pub unsafe fn free(ptr: *mut u8) {
    // SAFETY: forwarded from the caller.
    unsafe { __libc_free(ptr.cast()) }
}

/// glibc `memalign` (a non-power-of-two alignment is rounded up, as glibc does;
/// glibc 2.36's `aligned_alloc` is this same function).
#[inline]
pub fn memalign(align: usize, size: usize) -> *mut u8 {
    // SAFETY: glibc's memalign validates its arguments.
    unsafe { __libc_memalign(align, size).cast() }
}

/// glibc `valloc`.
#[inline]
pub fn valloc(size: usize) -> *mut u8 {
    // SAFETY: glibc's valloc accepts any size.
    unsafe { __libc_valloc(size).cast() }
}

/// glibc `pvalloc`.
#[inline]
pub fn pvalloc(size: usize) -> *mut u8 {
    // SAFETY: glibc's pvalloc accepts any size.
    unsafe { __libc_pvalloc(size).cast() }
}

type UsableSizeFn = unsafe extern "C" fn(*mut c_void) -> usize;

/// Address of glibc's `malloc_usable_size`, looked up once.
///
/// glibc exports no `__libc_` twin of it, so it is found with
/// `dlsym(RTLD_NEXT)`. `dlsym` may allocate (its error buffer); that
/// allocation passes through heapmpi's malloc to glibc without coming back
/// here, so the lookup cannot recurse. Relaxed is enough: the value is the
/// same whichever thread stores it, and a racing thread at worst looks it up
/// twice.
static GLIBC_USABLE_SIZE: AtomicUsize = AtomicUsize::new(0);

/// glibc `malloc_usable_size`.
///
/// # Safety
/// `ptr` is a live block from glibc's allocator.
pub unsafe fn usable_size(ptr: *mut u8) -> usize {
    let mut f = GLIBC_USABLE_SIZE.load(Ordering::Relaxed);
    if f == 0 {
        // SAFETY: the name is a NUL-terminated literal; RTLD_NEXT is valid
        // from a shared object and from an executable alike.
        f = unsafe { libc::dlsym(libc::RTLD_NEXT, c"malloc_usable_size".as_ptr()) } as usize;
        if f == 0 {
            // Cannot happen with glibc; a conservative answer keeps callers safe.
            return 0;
        }
        GLIBC_USABLE_SIZE.store(f, Ordering::Relaxed);
    }
    // SAFETY: `f` is glibc's malloc_usable_size, whose signature this is.
    let f: UsableSizeFn = unsafe { core::mem::transmute::<usize, UsableSizeFn>(f) };
    // SAFETY: forwarded from the caller.
    unsafe { f(ptr.cast()) }
}

/// heapmpi's own Rust allocations (configuration, error strings, MPI set-up
/// buffers) go to glibc directly: never into the shared heap, never through
/// the exported `malloc`, so they cannot recurse into it.
pub struct GlibcAlloc;

/// The alignment glibc's malloc guarantees on x86_64.
const GLIBC_MIN_ALIGN: usize = 16;

// SAFETY: every method forwards to glibc, which returns blocks of at least
// the requested size and alignment (memalign for over-aligned layouts) or null.
unsafe impl GlobalAlloc for GlibcAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= GLIBC_MIN_ALIGN {
            malloc(layout.size())
        } else {
            memalign(layout.align(), layout.size())
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= GLIBC_MIN_ALIGN {
            calloc(1, layout.size())
        } else {
            let p = memalign(layout.align(), layout.size());
            if !p.is_null() {
                // SAFETY: `p` is a fresh block of `layout.size()` bytes.
                unsafe { p.write_bytes(0, layout.size()) };
            }
            p
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from `alloc`/`alloc_zeroed`/`realloc` above.
        unsafe { free(ptr) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= GLIBC_MIN_ALIGN {
            // SAFETY: `ptr` came from this allocator, hence from glibc.
            unsafe { realloc(ptr, new_size) }
        } else {
            let new = memalign(layout.align(), new_size);
            if !new.is_null() {
                // SAFETY: both blocks are live and at least min(old, new) long.
                unsafe {
                    core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    free(ptr);
                }
            }
            new
        }
    }
}
