//! One-sided communication (MPI RMA) between the ranks of a node, through
//! the shared heap.
//!
//! Every window is a real MPI window too (`PMPI_Win_create` over the same
//! memory, or the real `Win_allocate*` when heapmpi cannot serve it), so
//! attributes, names, info, error handlers and groups are the real MPI's,
//! and a window heapmpi does not run keeps working unchanged. When every
//! member of the window's communicator is on this node (and
//! `HEAPMPI_RMA` is on), heapmpi runs the window itself, agreed by all
//! members at creation ([`window`]):
//!
//! - memory: `MPI_Alloc_mem`, `MPI_Win_allocate` and
//!   `MPI_Win_allocate_shared` take it from the shared heap, where every
//!   member can load and store it at the same address; a member's memory
//!   outside the heap (a stack, a global) is reached through the kernel
//!   (`process_vm_readv/writev`, [`crate::sys::cma`]);
//! - communication ([`access`], [`atomic`]): a put is a store into the
//!   target's memory and a get a load, done by the origin alone, complete
//!   when the call returns; accumulates are element-wise atomic (hardware
//!   atomics on aligned 4- and 8-byte integers, compare-and-swap loops on
//!   floating point, a lock per target otherwise), as MPI requires of
//!   accumulates with the same basic datatype on the same location;
//! - synchronisation ([`sync`]): fence is the node's flag barrier
//!   ([`crate::comm::node`]), post-start-complete-wait are flags and
//!   counters in a block the members share, passive target locks are a
//!   reader-writer lock word per target driven by fetch-and-add and
//!   compare-and-swap (the design of the MPI-2 passive-target paper and of
//!   foMPI: Gerstenberger, Besta and Hoefler, "Enabling highly-scalable
//!   remote memory access programming with MPI-3 one sided", SC13).
//!
//! Errors: a call whose arguments heapmpi cannot take (invalid rank, count,
//! datatype or operation), or that is outside any epoch heapmpi opened, is
//! handed to the real MPI on the real window, where no epoch is ever open:
//! the real MPI raises the error class it always raises, through the
//! window's handler. Misuse the real MPI would not see (locking a target
//! twice, a displacement past the target's window) is raised here with the
//! stock class.

mod access;
mod atomic;
mod create;
mod lockword;
mod oracle;
mod state;
mod sync;
pub mod window;

use core::ffi::c_int;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use mpi_sys as ffi;

use crate::raw::{HandleCache, RawHandle};
use crate::stats;

pub use access::{get, put, rget, rput};
pub use atomic::{
    accumulate, compare_and_swap, fetch_and_op, get_accumulate, raccumulate, rget_accumulate,
};
pub use create::{alloc_mem, create, create_dynamic, free_mem, win_allocate, win_allocate_shared};
pub use oracle::before_finalize;
pub use sync::{
    fence, flush, flush_all, flush_local, flush_local_all, lock, lock_all, post,
    start as win_start, test, unlock, unlock_all, wait, win_complete, win_sync,
};
pub use window::{attach, detach, free, get_attr, is_heap_shared, shared_query, Win};

/// Whether heapmpi runs one-sided communication (agreed by all ranks at
/// init). Written once at init, before any communication: Relaxed.
static ON: AtomicBool = AtomicBool::new(false);

/// Turns heapmpi's one-sided communication on (every rank calls this at
/// init with the job's agreed switch).
pub fn start(on: bool) {
    ON.store(on && crate::comm::active(), Ordering::Relaxed);
}

/// Whether heapmpi runs windows (`HEAPMPI_RMA`, agreed).
fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The windows heapmpi knows: (real handle bits, leaked `Win`).
static WINS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Bumped whenever a window is forgotten, so that per-thread caches drop
/// their entries. Relaxed: a thread that uses a window created after a free
/// learned of it through MPI, which orders the bump before its use.
static GEN: AtomicU64 = AtomicU64::new(0);

/// Entries of the per-thread window cache.
const CACHED: usize = 4;

thread_local! {
    /// Window bits to `Win`s.
    static CACHE: RefCell<HandleCache<CACHED>> = const { RefCell::new(HandleCache::new()) };
}

/// The owner thread's [`CACHE`] (`crate::sys::tls`: no `__tls_get_addr`
/// on the thread that makes the calls).
static OWNER_CACHE: crate::sys::tls::Owned<RefCell<HandleCache<CACHED>>> =
    crate::sys::tls::Owned::new(RefCell::new(HandleCache::new()));

/// heapmpi's state of `win`, if it made it. The cache hit is inlined into
/// every operation; the miss is out of line.
#[inline(always)]
fn lookup(win: ffi::MPI_Win) -> Option<&'static Win> {
    let bits = win.0.to_bits();
    let gen = GEN.load(Ordering::Relaxed);
    let hit = OWNER_CACHE.with(&CACHE, |c| c.borrow().get(gen, bits));
    let p = match hit {
        Some(p) => p,
        None => lookup_miss(bits, gen)?,
    };
    // SAFETY: a `Win` leaked by `register` and not yet taken back by
    // `unregister` (which bumps the generation first); MPI forbids using a
    // window during or after its free.
    Some(unsafe { &*(p as *const Win) })
}

/// [`lookup`] of a window not in this thread's cache: the address of its
/// `Win`, now cached.
#[inline(never)]
fn lookup_miss(bits: usize, gen: u64) -> Option<usize> {
    let wins = WINS.lock().unwrap_or_else(|e| e.into_inner());
    let p = wins.iter().find(|e| e.0 == bits)?.1;
    drop(wins);
    OWNER_CACHE.with(&CACHE, |c| c.borrow_mut().put(gen, bits, p));
    Some(p)
}

/// Records `w` as heapmpi's state of the real window `win`.
fn register(win: ffi::MPI_Win, w: Win) {
    let p = Box::into_raw(Box::new(w)) as usize;
    WINS.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((win.0.to_bits(), p));
}

/// Takes heapmpi's state of `win` back (its `MPI_Win_free`).
fn unregister(win: ffi::MPI_Win) -> Option<Box<Win>> {
    let bits = win.0.to_bits();
    let mut wins = WINS.lock().unwrap_or_else(|e| e.into_inner());
    let i = wins.iter().position(|e| e.0 == bits)?;
    let (_, p) = wins.swap_remove(i);
    // Relaxed: see `GEN`.
    GEN.fetch_add(1, Ordering::Relaxed);
    // SAFETY: leaked by `register`, removed from the table above.
    Some(unsafe { Box::from_raw(p as *mut Win) })
}

/// Calls `win`'s error handler with `code` and returns `code`.
fn raise(win: ffi::MPI_Win, code: u32) -> c_int {
    let code = code as c_int;
    // SAFETY: a valid window (the operation's own).
    unsafe { ffi::PMPI_Win_call_errhandler(win, code) };
    code
}

/// Makes the real MPI's call for an operation heapmpi does not run, counted.
fn to_real(call: impl FnOnce() -> c_int) -> c_int {
    stats::RMA_OPS_REAL.add(1);
    crate::profile::real(crate::profile::How::Args, None);
    call()
}

/// Ends an operation heapmpi tried: done (with a completed request in
/// `*req` when `req` is not null), an error class to raise, or the real
/// MPI's call (`real`).
fn outcome(
    r: Result<(), Option<u32>>,
    win: ffi::MPI_Win,
    req: *mut ffi::MPI_Request,
    real: impl FnOnce() -> c_int,
) -> c_int {
    match r {
        // SAFETY: the caller's request out-pointer, or null.
        Ok(()) => {
            crate::profile::heap(None);
            unsafe { completed(req) }
        }
        Err(Some(code)) => raise(win, code),
        Err(None) => to_real(real),
    }
}

/// `MPI_MODE_*` and `MPI_LOCK_*` of the MPI in use.
mod mode {
    use mpi_sys as ffi;
    pub const NOCHECK: i32 = ffi::MPI_MODE_NOCHECK as i32;
    pub const NOSUCCEED: i32 = ffi::MPI_MODE_NOSUCCEED as i32;
    pub const EXCLUSIVE: i32 = ffi::MPI_LOCK_EXCLUSIVE as i32;
    pub const SHARED: i32 = ffi::MPI_LOCK_SHARED as i32;
}

/// `MPI_PROC_NULL`.
fn proc_null() -> c_int {
    // SAFETY: reading an MPI constant.
    unsafe { ffi::RSMPI_PROC_NULL }
}

/// Writes a completed request to `*req` for an operation that completed
/// in its call (`MPI_Rput` and the others): point-to-point's shared
/// completed request when heapmpi runs point-to-point (its `Wait`/`Test`
/// family knows it), else a generalized request of the real MPI,
/// completed at once. Returns the call's result.
///
/// # Safety
/// `req` is the caller's request out-pointer.
unsafe fn completed(req: *mut ffi::MPI_Request) -> c_int {
    if req.is_null() {
        return 0;
    }
    if crate::p2p::engine::enabled() {
        // SAFETY: per the contract.
        unsafe { *req = crate::req::handle::enc_req(crate::req::table::SENT_SLOT) };
        return 0;
    }
    extern "C" fn query(_extra: *mut core::ffi::c_void, st: *mut ffi::MPI_Status) -> c_int {
        // SAFETY: MPI passes a valid status.
        unsafe {
            ffi::PMPI_Status_set_elements(st, ffi::RSMPI_UINT8_T, 0);
            ffi::PMPI_Status_set_cancelled(st, 0);
        }
        0
    }
    extern "C" fn free_fn(_extra: *mut core::ffi::c_void) -> c_int {
        0
    }
    extern "C" fn cancel(_extra: *mut core::ffi::c_void, _done: c_int) -> c_int {
        0
    }
    // SAFETY: valid callbacks; the request is completed at once.
    unsafe {
        let rc = ffi::PMPI_Grequest_start(
            Some(query),
            Some(free_fn),
            Some(cancel),
            core::ptr::null_mut(),
            req,
        );
        if rc != 0 {
            return rc;
        }
        ffi::PMPI_Grequest_complete(*req)
    }
}
