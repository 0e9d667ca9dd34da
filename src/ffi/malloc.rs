//! The malloc family (see [`crate::heap`] for the logic).
//!
//! Each body forwards its arguments unchanged; the caller's C contract for
//! the function of the same name is exactly the contract the `heap`
//! function requires.

use core::ffi::c_void;

use crate::heap;

c_exports! { @plain
    /// `malloc`.
    fn malloc(size: usize) -> *mut c_void { heap::malloc(size).cast() }
    /// `free`.
    fn free(p: *mut c_void) -> () {
        // SAFETY: by free's contract `p` is null or a live block of this allocator.
        unsafe { heap::free(p.cast()) }
    }
    /// `calloc`.
    fn calloc(nmemb: usize, size: usize) -> *mut c_void { heap::calloc(nmemb, size).cast() }
    /// `realloc`.
    fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
        // SAFETY: by realloc's contract `p` is null or a live block of this allocator.
        unsafe { heap::realloc(p.cast(), size).cast() }
    }
    /// `reallocarray`.
    fn reallocarray(p: *mut c_void, nmemb: usize, size: usize) -> *mut c_void {
        // SAFETY: as for realloc.
        unsafe { heap::reallocarray(p.cast(), nmemb, size).cast() }
    }
    /// `posix_memalign`.
    fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> i32 {
        // SAFETY: by posix_memalign's contract `out` is valid for a pointer write.
        unsafe { heap::posix_memalign(out.cast(), align, size) }
    }
    /// `aligned_alloc` (glibc 2.36 treats it exactly as `memalign`).
    fn aligned_alloc(align: usize, size: usize) -> *mut c_void { heap::memalign(align, size).cast() }
    /// `memalign`.
    fn memalign(align: usize, size: usize) -> *mut c_void { heap::memalign(align, size).cast() }
    /// `valloc`.
    fn valloc(size: usize) -> *mut c_void { heap::valloc(size).cast() }
    /// `pvalloc`.
    fn pvalloc(size: usize) -> *mut c_void { heap::pvalloc(size).cast() }
    /// `malloc_usable_size`.
    fn malloc_usable_size(p: *mut c_void) -> usize {
        // SAFETY: by its contract `p` is null or a live block of this allocator.
        unsafe { heap::usable_size(p.cast()) }
    }
}
