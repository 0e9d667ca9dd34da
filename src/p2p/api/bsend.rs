//! Buffered mode: heapmpi copies a buffered send to a local peer into the
//! shared heap at once, so the user's attached buffer (`MPI_Buffer_attach`)
//! is never used and may be detached and freed at any time. What the real
//! MPI refuses, heapmpi refuses too, with its error class
//! (`MPI_ERR_BUFFER`, through the communicator's handler):
//!
//! - MPICH needs room in the attached buffer for every buffered message
//!   (the packed data plus `MPI_BSEND_OVERHEAD`), and fails without one;
//! - Open MPI sends a message that fits its shared-memory transport's eager
//!   fragment without touching the buffer, and needs the buffer only for
//!   larger ones. Its eager limit is the `btl_vader_eager_limit` control
//!   variable, less the fragment's 56 header bytes (measured: 4040 of 4096
//!   bytes pass), read through the MPI tool interface the first time a
//!   buffered send does not fit the attached buffer: initialising the tool
//!   interface opens every Open MPI component, 0.2 s on our machines (the
//!   PSM2 library's set-up sleeps), which every job paid when it was done
//!   at init.
//!
//! heapmpi's buffered messages leave the attached buffer at once (they sit
//! in the shared heap), so the room check is against the whole buffer: a
//! program the real MPI accepts, heapmpi accepts.

use core::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

use super::*;

/// Bytes of the attached buffer (0: none). Relaxed: attach, detach and the
/// sends that read it are MPI calls of one process, ordered by the program.
static ATTACHED: AtomicUsize = AtomicUsize::new(0);

/// Open MPI: the largest message sent eagerly without the attached buffer
/// (learned when first needed).
static EAGER: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// The thread level the MPI library provides (set at init, before any
/// communication; Relaxed: MPI_Init synchronises).
static LEVEL: AtomicI32 = AtomicI32::new(0);

/// `MPI_Buffer_attach`.
///
/// # Safety
/// As `MPI_Buffer_attach`.
pub unsafe fn buffer_attach(buf: *mut c_void, size: c_int) -> c_int {
    // SAFETY: forwarded unchanged.
    let rc = unsafe { ffi::PMPI_Buffer_attach(buf, size) };
    attached(rc, size);
    rc
}

/// `MPI_Buffer_detach` (the buffer is returned as the real MPI returns it).
///
/// # Safety
/// As `MPI_Buffer_detach`.
pub unsafe fn buffer_detach(buf: *mut c_void, size: *mut c_int) -> c_int {
    // SAFETY: forwarded unchanged.
    let rc = unsafe { ffi::PMPI_Buffer_detach(buf, size) };
    detached(rc);
    rc
}

/// Records an attach made through a binding (`rc` its result).
pub fn attached(rc: c_int, size: c_int) {
    if rc == 0 {
        ATTACHED.store(size.max(0) as usize, Ordering::Relaxed);
    }
}

/// Records a detach made through a binding (`rc` its result).
pub fn detached(rc: c_int) {
    if rc == 0 {
        ATTACHED.store(0, Ordering::Relaxed);
    }
}

/// Whether the real MPI would accept a buffered send of `bytes` packed
/// bytes now.
pub(super) fn room(bytes: usize) -> bool {
    if bytes + ffi::MPI_BSEND_OVERHEAD as usize <= ATTACHED.load(Ordering::Relaxed) {
        return true;
    }
    if crate::version::open_mpi()
        && bytes
            <= *EAGER
                .get_or_init(|| vader_eager_limit(LEVEL.load(Ordering::Relaxed)).saturating_sub(56))
    {
        return true;
    }
    false
}

/// Remembers the thread level the MPI library provides, which Open MPI's
/// eager limit is later read with (its `MPI_T_init_thread` sets the
/// library's level to the one it is given). Called once at init.
pub fn remember_thread_level(level: c_int) {
    LEVEL.store(level, Ordering::Relaxed);
}

/// `btl_vader_eager_limit` through the MPI tool interface (Open MPI's
/// default, 4096, if it cannot be read).
fn vader_eager_limit(level: c_int) -> usize {
    const DEFAULT: usize = 4096;
    let mut provided: c_int = 0;
    // SAFETY: the tool interface may be initialised any number of times
    // (and is finalised below); every out-pointer is valid; the value is
    // read into a properly sized integer (the variable's `count` is 1).
    unsafe {
        if ffi::PMPI_T_init_thread(level, &mut provided) != 0 {
            return DEFAULT;
        }
        let mut idx: c_int = 0;
        let mut limit = DEFAULT;
        if ffi::PMPI_T_cvar_get_index(c"btl_vader_eager_limit".as_ptr(), &mut idx) == 0 {
            let mut h = core::mem::zeroed();
            let mut count: c_int = 0;
            if ffi::PMPI_T_cvar_handle_alloc(idx, core::ptr::null_mut(), &mut h, &mut count) == 0 {
                let mut v: [u64; 2] = [0; 2];
                if count == 1 && ffi::PMPI_T_cvar_read(h, v.as_mut_ptr().cast()) == 0 {
                    // A size_t or an int: the low 32 bits hold it either way
                    // (little-endian), and a limit above 4 GiB makes no sense.
                    limit = (v[0] & 0xffff_ffff) as usize;
                }
                ffi::PMPI_T_cvar_handle_free(&mut h);
            }
        }
        ffi::PMPI_T_finalize();
        limit
    }
}
