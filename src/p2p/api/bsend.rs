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
//!
//! MPI-4.1 adds buffers attached to a communicator or a session, and
//! `MPI_BUFFER_AUTOMATIC` (the MPI finds the room itself). A buffered send
//! on a communicator with a buffer of its own uses that one only; else the
//! process's; else, for a communicator made from a session, the session's.
//! heapmpi cannot tell which session a communicator came from, so a
//! session's buffer counts for every communicator without one of its own
//! (it accepts what the real MPI accepts, and at worst a send whose only
//! room is another session's buffer).

use core::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::raw::RawHandle;

use super::*;

/// Bytes of the attached buffer (0: none; `usize::MAX`:
/// `MPI_BUFFER_AUTOMATIC`). Relaxed: attach, detach and the sends that read
/// it are MPI calls of one process, ordered by the program.
static ATTACHED: AtomicUsize = AtomicUsize::new(0);

/// Bytes of the buffers attached to communicators (by handle bits) and to
/// sessions (by handle bits), as [`ATTACHED`].
static SCOPED: Mutex<Scoped> = Mutex::new(Scoped {
    comms: Vec::new(),
    sessions: Vec::new(),
});

struct Scoped {
    comms: Vec<(usize, usize)>,
    sessions: Vec<(usize, usize)>,
}

/// `MPI_BUFFER_AUTOMATIC` of the MPI-4.1 `<mpi.h>`s: `(void *) -2` in the
/// MPICH family's, `(void *) 2` in the standard ABI's; Open MPI 5.0 has
/// none.
fn automatic(buf: *const c_void) -> bool {
    let v = buf as usize;
    if cfg!(heapmpi_abi) {
        v == 2
    } else if cfg!(heapmpi_mpich) {
        v == usize::MAX - 1
    } else {
        false
    }
}

/// The size heapmpi records for a buffer attached at `buf`.
fn size_of_buffer(buf: *const c_void, size: usize) -> usize {
    if automatic(buf) {
        usize::MAX
    } else {
        size
    }
}

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
    attached(rc, buf, size.max(0) as usize);
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
pub fn attached(rc: c_int, buf: *const c_void, size: usize) {
    if rc == 0 {
        ATTACHED.store(size_of_buffer(buf, size), Ordering::Relaxed);
    }
}

/// Runs `f` on the recorded buffers of communicators (`session` false) or
/// of sessions.
fn with_scoped(session: bool, f: impl FnOnce(&mut Vec<(usize, usize)>)) {
    let mut s = SCOPED.lock().unwrap_or_else(|e| e.into_inner());
    f(if session {
        &mut s.sessions
    } else {
        &mut s.comms
    });
}

/// Records the attach of a buffer to a communicator (`session` false) or
/// a session, by its handle bits (`rc` the real call's result).
#[cfg_attr(not(heapmpi_mpi41_buffers), allow(dead_code))]
pub fn scoped_attached(rc: c_int, session: bool, bits: usize, buf: *const c_void, size: usize) {
    if rc == 0 {
        with_scoped(session, |list| {
            list.retain(|&(b, _)| b != bits);
            list.push((bits, size_of_buffer(buf, size)));
        });
    }
}

/// Records the detach of a communicator's or a session's buffer (or the
/// communicator's free: `comm::on_free`).
pub fn scoped_detached(rc: c_int, session: bool, bits: usize) {
    if rc == 0 {
        with_scoped(session, |list| list.retain(|&(b, _)| b != bits));
    }
}

/// [`scoped_detached`] of a communicator being freed (subscribed with
/// `comm::on_free`).
pub fn forget_comm_buffer(bits: usize) {
    scoped_detached(0, false, bits);
}

/// The MPI-4.1 attach and detach of communicators' and sessions' buffers
/// (`cfg(heapmpi_mpi41_buffers)`: an `<mpi.h>` that declares them): the
/// real calls, recorded.
#[cfg(heapmpi_mpi41_buffers)]
pub mod scoped {
    use core::ffi::{c_int, c_void};

    use mpi_sys as ffi;

    use super::{scoped_attached, scoped_detached};
    use crate::raw::RawHandle;

    /// A session's handle bits (an integer in the MPICH family, a
    /// pointer in the standard ABI).
    fn session_bits(s: ffi::MPI_Session) -> usize {
        s.0.to_bits()
    }

    /// `MPI_Comm_attach_buffer`.
    ///
    /// # Safety
    /// As the MPI call.
    pub unsafe fn comm_attach(comm: ffi::MPI_Comm, buf: *mut c_void, size: c_int) -> c_int {
        // SAFETY: forwarded unchanged.
        let rc = unsafe { ffi::PMPI_Comm_attach_buffer(comm, buf, size) };
        scoped_attached(rc, false, comm.0.to_bits(), buf, size.max(0) as usize);
        rc
    }

    /// `MPI_Comm_attach_buffer_c`.
    ///
    /// # Safety
    /// As the MPI call.
    pub unsafe fn comm_attach_c(
        comm: ffi::MPI_Comm,
        buf: *mut c_void,
        size: ffi::MPI_Count,
    ) -> c_int {
        // SAFETY: forwarded unchanged.
        let rc = unsafe { ffi::PMPI_Comm_attach_buffer_c(comm, buf, size) };
        scoped_attached(rc, false, comm.0.to_bits(), buf, size.max(0) as usize);
        rc
    }

    /// `MPI_Comm_detach_buffer`.
    ///
    /// # Safety
    /// As the MPI call.
    pub unsafe fn comm_detach(comm: ffi::MPI_Comm, buf: *mut c_void, size: *mut c_int) -> c_int {
        // SAFETY: forwarded unchanged.
        let rc = unsafe { ffi::PMPI_Comm_detach_buffer(comm, buf, size) };
        scoped_detached(rc, false, comm.0.to_bits());
        rc
    }

    /// `MPI_Comm_detach_buffer_c`.
    ///
    /// # Safety
    /// As the MPI call.
    pub unsafe fn comm_detach_c(
        comm: ffi::MPI_Comm,
        buf: *mut c_void,
        size: *mut ffi::MPI_Count,
    ) -> c_int {
        // SAFETY: forwarded unchanged.
        let rc = unsafe { ffi::PMPI_Comm_detach_buffer_c(comm, buf, size) };
        scoped_detached(rc, false, comm.0.to_bits());
        rc
    }

    /// `MPI_Session_attach_buffer`.
    ///
    /// # Safety
    /// As the MPI call.
    pub unsafe fn session_attach(s: ffi::MPI_Session, buf: *mut c_void, size: c_int) -> c_int {
        // SAFETY: forwarded unchanged.
        let rc = unsafe { ffi::PMPI_Session_attach_buffer(s, buf, size) };
        scoped_attached(rc, true, session_bits(s), buf, size.max(0) as usize);
        rc
    }

    /// `MPI_Session_attach_buffer_c`.
    ///
    /// # Safety
    /// As the MPI call.
    pub unsafe fn session_attach_c(
        s: ffi::MPI_Session,
        buf: *mut c_void,
        size: ffi::MPI_Count,
    ) -> c_int {
        // SAFETY: forwarded unchanged.
        let rc = unsafe { ffi::PMPI_Session_attach_buffer_c(s, buf, size) };
        scoped_attached(rc, true, session_bits(s), buf, size.max(0) as usize);
        rc
    }

    /// `MPI_Session_detach_buffer`.
    ///
    /// # Safety
    /// As the MPI call.
    pub unsafe fn session_detach(s: ffi::MPI_Session, buf: *mut c_void, size: *mut c_int) -> c_int {
        // SAFETY: forwarded unchanged.
        let rc = unsafe { ffi::PMPI_Session_detach_buffer(s, buf, size) };
        scoped_detached(rc, true, session_bits(s));
        rc
    }

    /// `MPI_Session_detach_buffer_c`.
    ///
    /// # Safety
    /// As the MPI call.
    pub unsafe fn session_detach_c(
        s: ffi::MPI_Session,
        buf: *mut c_void,
        size: *mut ffi::MPI_Count,
    ) -> c_int {
        // SAFETY: forwarded unchanged.
        let rc = unsafe { ffi::PMPI_Session_detach_buffer_c(s, buf, size) };
        scoped_detached(rc, true, session_bits(s));
        rc
    }
}

/// Records a detach made through a binding (`rc` its result).
pub fn detached(rc: c_int) {
    if rc == 0 {
        ATTACHED.store(0, Ordering::Relaxed);
    }
}

/// Whether the real MPI would accept a buffered send of `bytes` packed
/// bytes on `comm` now.
pub(super) fn room(bytes: usize, comm: ffi::MPI_Comm) -> bool {
    let need = bytes.saturating_add(ffi::MPI_BSEND_OVERHEAD as usize);
    let fits = {
        let s = SCOPED.lock().unwrap_or_else(|e| e.into_inner());
        let own = s.comms.iter().find(|&&(b, _)| b == comm.0.to_bits());
        match own {
            Some(&(_, size)) => need <= size,
            None => {
                need <= ATTACHED.load(Ordering::Relaxed)
                    || s.sessions.iter().any(|&(_, size)| need <= size)
            }
        }
    };
    if fits {
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
