//! Windows: heapmpi's state of each, the decision to run one (agreed by all
//! members after its creation, [`adopt`]), the attributes heapmpi answers
//! itself, and its free. The creating calls are in `create`; the state of
//! a window heapmpi runs ([`Fast`]) is [`super::state`]'s.
//!
//! The decision to run a window is the members' together: every member
//! must be on this node, and a member whose memory is outside the heap
//! must be reachable by cross-memory attach from every other (tested at
//! creation by reading a byte of each). A window that fails either goes
//! to the real MPI whole.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::state::{make_fast, Fast, Peer};
use super::{lookup, on, register, unregister};
use crate::heap;
use crate::stats;

/// `MPI_WIN_FLAVOR_*` of the MPI in use.
pub mod flavor {
    #[cfg(heapmpi_mpich)]
    use mpi_sys::{
        MPIR_Win_flavor_MPI_WIN_FLAVOR_ALLOCATE as A, MPIR_Win_flavor_MPI_WIN_FLAVOR_CREATE as C,
        MPIR_Win_flavor_MPI_WIN_FLAVOR_DYNAMIC as D, MPIR_Win_flavor_MPI_WIN_FLAVOR_SHARED as S,
    };
    #[cfg(not(heapmpi_mpich))]
    use mpi_sys::{
        MPI_WIN_FLAVOR_ALLOCATE as A, MPI_WIN_FLAVOR_CREATE as C, MPI_WIN_FLAVOR_DYNAMIC as D,
        MPI_WIN_FLAVOR_SHARED as S,
    };
    /// `MPI_WIN_FLAVOR_CREATE`.
    pub const CREATE: i32 = C as i32;
    /// `MPI_WIN_FLAVOR_ALLOCATE`.
    pub const ALLOCATE: i32 = A as i32;
    /// `MPI_WIN_FLAVOR_DYNAMIC`.
    pub const DYNAMIC: i32 = D as i32;
    /// `MPI_WIN_FLAVOR_SHARED`.
    pub const SHARED: i32 = S as i32;
}

/// heapmpi's state of a window.
pub struct Win {
    /// The real window.
    pub real: ffi::MPI_Win,
    /// The flavour the program asked for (the real window may be of
    /// another: `Win_allocate` becomes a real `Win_create` over heap memory).
    pub flavor: c_int,
    /// Memory heapmpi allocated for the window and frees with it (this
    /// member's part for `Win_allocate`, the whole of it on member 0 for
    /// `Win_allocate_shared`).
    mem: *mut u8,
    /// For `Win_allocate_shared`: every member's segment (for
    /// `MPI_Win_shared_query`).
    pub segments: Option<Box<[Peer]>>,
    /// The window runs on the heap.
    pub fast: Option<Fast>,
}

// SAFETY: see `Fast`; `mem` is only freed at the window's free.
unsafe impl Send for Win {}
// SAFETY: as above.
unsafe impl Sync for Win {}

/// After the real window was made (`*win`, over `(base, size, unit)`) on
/// every member of `comm`: decides with the other members whether heapmpi
/// runs it, and registers it. Collective over `comm`.
///
/// # Safety
/// `comm` is the creating call's communicator; `win` its new window.
pub(super) unsafe fn adopt(
    win: ffi::MPI_Win,
    comm: ffi::MPI_Comm,
    (base, size, unit): (usize, usize, usize),
    flavor: c_int,
    mem: *mut u8,
    segments: Option<Box<[Peer]>>,
) {
    let fast = if local(comm) {
        // SAFETY: per the contract.
        unsafe { make_fast(comm, base, size, unit, flavor == flavor::DYNAMIC) }
    } else {
        None
    };
    if fast.is_some() {
        stats::RMA_WIN_HEAP.add(1);
    } else {
        stats::RMA_WIN_REAL.add(1);
    }
    register(
        win,
        Win {
            real: win,
            flavor,
            mem,
            segments,
            fast,
        },
    );
}

/// Whether heapmpi may run windows over `comm`: on, and every member on this
/// node (the same answer on every member). The allocating calls ask it
/// before they take memory from the heap.
pub(super) fn local(comm: ffi::MPI_Comm) -> bool {
    if !on() {
        return false;
    }
    match crate::comm::lookup(comm) {
        Some(info) => info.n_remote == 0,
        None => {
            stats::RMA_WIN_UNKNOWN.add(1);
            false
        }
    }
}

/// Whether heapmpi may allocate a window's memory on `comm` and wrap it
/// in a real `MPI_Win_create`: [`local`], except for a communicator of
/// one process under Open MPI, whose 4.1 series cannot create a window
/// there (`MPI_Win_create` raises `MPI_ERR_WIN` in a job of more than one
/// process, while its `Win_allocate` and `Win_allocate_shared` work): such
/// a window, which no other process can reach anyway, stays the real
/// MPI's.
pub(super) fn local_allocatable(comm: ffi::MPI_Comm) -> bool {
    if crate::version::open_mpi() && crate::comm::lookup(comm).is_some_and(|i| i.size == 1) {
        return false;
    }
    local(comm)
}

/// Writes `p` to a `void *` out-argument.
///
/// # Safety
/// `out` points to a `void *`.
pub(super) unsafe fn put_ptr(out: *mut c_void, p: *mut u8) {
    // SAFETY: per the contract.
    unsafe { *(out as *mut *mut c_void) = p.cast() };
}

/// `MPI_Win_free`.
///
/// # Safety
/// As `MPI_Win_free`.
pub unsafe fn free(win: *mut ffi::MPI_Win) -> c_int {
    // SAFETY: per the contract, a valid pointer (null is the real call's
    // error to report).
    let Some(w) = (!win.is_null())
        .then(|| unsafe { *win })
        .and_then(unregister)
    else {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Win_free(win) };
    };
    if let Some(f) = &w.fast {
        // No member touches another's memory or the block after this.
        f.barrier();
    }
    // SAFETY: forwarded (the real window over the same memory).
    let rc = unsafe { ffi::PMPI_Win_free(win) };
    if rc != 0 {
        // Keep heapmpi's state: the window still exists.
        // SAFETY: the caller's handle.
        register(unsafe { *win }, *w);
        return rc;
    }
    let w = *w;
    if let Some(f) = w.fast {
        // SAFETY: every member passed the barrier above; the real window
        // is freed.
        unsafe { f.free() };
    }
    if !w.mem.is_null() {
        // SAFETY: memory heapmpi allocated for this window (this member's
        // own, or a shared window's whole block on member 0); every member
        // is past the barrier.
        unsafe { heap::free(w.mem) };
    }
    0
}

/// `MPI_Win_attach`: the real window records it too (its queries stay
/// right); heapmpi needs nothing, since displacements are addresses.
///
/// # Safety
/// As `MPI_Win_attach`.
pub unsafe fn attach(win: ffi::MPI_Win, base: *mut c_void, size: ffi::MPI_Aint) -> c_int {
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Win_attach(win, base, size) }
}

/// `MPI_Win_detach`.
///
/// # Safety
/// As `MPI_Win_detach`.
pub unsafe fn detach(win: ffi::MPI_Win, base: *const c_void) -> c_int {
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Win_detach(win, base) }
}

/// The flavour values `MPI_Win_get_attr` points to (an attribute value is
/// a pointer that stays valid).
static FLAVORS: [c_int; 4] = [
    flavor::CREATE,
    flavor::ALLOCATE,
    flavor::DYNAMIC,
    flavor::SHARED,
];

/// `MPI_Win_get_attr`: the flavour the program asked for (the real window
/// under a heap `Win_allocate` is a `Win_create` one) and the base of the
/// memory heapmpi allocated; everything else from the real window.
///
/// # Safety
/// As `MPI_Win_get_attr`.
pub unsafe fn get_attr(win: ffi::MPI_Win, key: c_int, val: *mut c_void, flag: *mut c_int) -> c_int {
    // The window's memory when heapmpi allocated it: MPICH's real window
    // (a `Win_create` one) reports a null base for an empty one, its
    // `Win_allocate` the address it returned.
    if key == ffi::MPI_WIN_BASE as c_int && !val.is_null() && !flag.is_null() {
        // A shared window's base is this member's segment: MPICH's real
        // window reports another address for a segment that does not start
        // the block (it gave rank 1 rank 0's base).
        let shared = lookup(win).and_then(|w| {
            let me = w.fast.as_ref()?.me;
            w.segments.as_deref()?.get(me).map(|s| s.base)
        });
        if let Some(base) = shared {
            // SAFETY: per the contract, `val` holds a pointer and `flag` an
            // int.
            unsafe {
                put_ptr(val, base as *mut u8);
                *flag = 1;
            }
            return 0;
        }
        if let Some(w) = lookup(win).filter(|w| w.flavor == flavor::ALLOCATE && !w.mem.is_null()) {
            // SAFETY: per the contract, `val` holds a pointer and `flag` an
            // int.
            unsafe {
                put_ptr(val, w.mem);
                *flag = 1;
            }
            return 0;
        }
    }
    if key == ffi::MPI_WIN_CREATE_FLAVOR as c_int && !val.is_null() && !flag.is_null() {
        if let Some(w) = lookup(win) {
            if let Some(f) = FLAVORS.iter().find(|&&f| f == w.flavor) {
                // SAFETY: per the contract, `val` holds a pointer and `flag`
                // an int.
                unsafe {
                    *(val as *mut *const c_int) = f;
                    *flag = 1;
                }
                return 0;
            }
        }
    }
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Win_get_attr(win, key, val, flag) }
}

/// `MPI_Win_shared_query` on a shared window heapmpi allocated: the
/// segment of `rank` (or, for `MPI_PROC_NULL`, the first of non-zero size),
/// valid in every member.
///
/// # Safety
/// As `MPI_Win_shared_query`.
pub unsafe fn shared_query(
    win: ffi::MPI_Win,
    rank: c_int,
    size: *mut ffi::MPI_Aint,
    unit: *mut c_int,
    baseptr: *mut c_void,
) -> c_int {
    let w = lookup(win);
    let segs = w.and_then(|w| w.segments.as_deref());
    if let Some(segs) = segs {
        // A window where no member gave memory: MPICH 4 reports the
        // caller's own unit for every member and MPI_PROC_NULL (it keeps no
        // shared table then); MPICH 5 and Intel MPI 2021 their own unit
        // for the caller and 0 for the others and MPI_PROC_NULL; Open MPI
        // each member's, and 0 for MPI_PROC_NULL; all a size of 0 and a
        // null base.
        let me = w.and_then(|w| w.fast.as_ref()).map_or(0, |f| f.me);
        let empty = segs.iter().all(|s| s.size == 0);
        let mpich4 =
            matches!(crate::version::library(), crate::version::Library::Mpich(v) if v.0 == 4);
        let empty_unit = |q: Option<usize>, s: Peer| -> Peer {
            if !empty || !crate::version::mpich() {
                return s;
            }
            let unit = match segs.get(me) {
                Some(m) if mpich4 || q == Some(me) => m.unit,
                _ => 0,
            };
            Peer { unit, ..s }
        };
        let seg = if rank == super::proc_null() {
            segs.iter().find(|s| s.size > 0).copied().or_else(|| {
                segs.first().map(|s| {
                    empty_unit(
                        None,
                        Peer {
                            base: 0,
                            size: 0,
                            unit: 0,
                            pid: s.pid,
                        },
                    )
                })
            })
        } else {
            (rank >= 0)
                .then(|| segs.get(rank as usize).copied())
                .flatten()
                .map(|s| empty_unit(Some(rank as usize), s))
        };
        if let (Some(s), false) = (seg, size.is_null() || unit.is_null() || baseptr.is_null()) {
            // SAFETY: per the contract, the out-pointers are valid.
            unsafe {
                *size = s.size as ffi::MPI_Aint;
                *unit = s.unit as c_int;
                put_ptr(baseptr, s.base as *mut u8);
            }
            return 0;
        }
    }
    // SAFETY: forwarded unchanged (the real MPI raises its error).
    unsafe { ffi::PMPI_Win_shared_query(win, rank, size, unit, baseptr) }
}

/// Whether `win` is a shared window heapmpi allocated (its segments are
/// heapmpi's to report).
pub fn is_heap_shared(win: ffi::MPI_Win) -> bool {
    lookup(win).is_some_and(|w| w.segments.is_some())
}

/// The window's fast state, for the operations.
#[inline]
pub fn fast(win: ffi::MPI_Win) -> Option<&'static Fast> {
    lookup(win).and_then(|w| w.fast.as_ref())
}
