//! Where this process's shared region lies and whether it serves: the
//! addresses every allocation path routes a pointer by, and the flags that
//! say which paths are on. Written at activation ([`super::setup`]) and
//! in a forked child ([`super::fork`]); read everywhere, without a lock.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

/// Whether new allocations should try the shared heap. Set (Release) by
/// [`super::setup::activate`] after the bounds below and the arena are
/// configured; loaded with Acquire by allocation paths, which then see
/// those writes.
pub(super) static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether the malloc family serves the program from the shared heap: set
/// (Release) with `ACTIVE` unless another allocator owns the program's
/// `malloc` (valgrind, a sanitizer: [`super::setup::activate`]'s
/// `serve_program`), in which case the program's blocks stay in that
/// allocator and only heapmpi's own shared blocks
/// ([`super::alloc_shared`]) come from the heap.
/// Loaded with Acquire like `ACTIVE`.
pub(super) static SERVING: AtomicBool = AtomicBool::new(false);
/// `[REGION_LO, REGION_HI)`: the whole shared region (0, 0 until active).
/// Written before the Release store of `ACTIVE`, never changed afterwards.
pub(super) static REGION_LO: AtomicUsize = AtomicUsize::new(0);
pub(super) static REGION_HI: AtomicUsize = AtomicUsize::new(0);
/// `[MINE_LO, MINE_HI)`: this rank's part (0, 0 until active and in a
/// forked child). A pointer can only be in this range if it was returned by
/// an allocation that happened after activation, and the program's own
/// synchronisation orders that allocation before any `free` of it, so
/// Relaxed loads see the bounds.
pub(super) static MINE_LO: AtomicUsize = AtomicUsize::new(0);
pub(super) static MINE_HI: AtomicUsize = AtomicUsize::new(0);

/// Descriptor of the region's shared object (-1 until active), for the
/// fork handler. Written before the Release store of `ACTIVE`.
pub(super) static REGION_FD: AtomicI32 = AtomicI32::new(-1);

/// Where `OWN_POOL`'s range starts (0: no such pool). Written before
/// the Release store of `ACTIVE`.
pub(super) static OWN_LO: AtomicUsize = AtomicUsize::new(0);

/// The end of the committed range of this process's arena, mirrored outside
/// the lock for the fork handler (which must not take the lock: another
/// thread may have held it when `fork` was called). Relaxed: it is read in
/// the child, after `fork` has copied the whole address space.
pub(super) static COMMITTED_END: AtomicUsize = AtomicUsize::new(0);

/// Who owns the memory at an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// This rank's part of the shared heap.
    Mine,
    /// The shared region, but not this process's to free.
    Foreign,
    /// glibc (or not heap memory at all: null).
    Glibc,
}

/// Classifies `p` by address.
#[inline]
pub fn owner(p: *const u8) -> Owner {
    let a = p as usize;
    if a >= MINE_LO.load(Ordering::Relaxed) && a < MINE_HI.load(Ordering::Relaxed) {
        Owner::Mine
    } else if a >= REGION_LO.load(Ordering::Relaxed) && a < REGION_HI.load(Ordering::Relaxed) {
        Owner::Foreign
    } else {
        Owner::Glibc
    }
}

/// Whether the shared heap serves new allocations.
#[inline]
pub fn is_active() -> bool {
    ACTIVE.load(Ordering::Acquire)
}

/// Whether the program's `malloc` is served from the shared heap.
#[inline]
pub(super) fn serving() -> bool {
    SERVING.load(Ordering::Acquire)
}

/// Whether `[p, p + len)` lies inside the shared region (any rank's part),
/// i.e. every local rank can read it at the same address.
#[inline]
pub fn in_region(p: *const u8, len: usize) -> bool {
    let a = p as usize;
    a >= REGION_LO.load(Ordering::Relaxed)
        && a.checked_add(len)
            .is_some_and(|e| e <= REGION_HI.load(Ordering::Relaxed))
}
