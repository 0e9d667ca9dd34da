//! `MPI_Comm_free` while heapmpi requests still use the communicator.
//! (Communicators made by intercepted calls are registered by
//! [`crate::comm::created`].)

use core::ffi::c_int;

use super::*;

/// `MPI_Comm_free`: a communicator that heapmpi requests still use (a
/// pending receive, a persistent request) stays alive in the real MPI
/// until the last of them is released (as the real MPI keeps its own
/// pending operations' communicators); the program's handle becomes
/// `MPI_COMM_NULL` at once.
///
/// # Safety
/// As `MPI_Comm_free`.
pub unsafe fn comm_free(comm: *mut ffi::MPI_Comm) -> c_int {
    if engine::enabled() && !comm.is_null() {
        // SAFETY: the caller's handle.
        let c = unsafe { *comm };
        // SAFETY: reading MPI constants.
        let predefined = unsafe { c == ffi::RSMPI_COMM_WORLD || c == ffi::RSMPI_COMM_SELF };
        if c != comm_null() && !predefined {
            let mut e = engine::lock();
            if e.comm_in_use(c) {
                e.defer_comm_free(c);
                drop(e);
                // SAFETY: the caller's handle.
                unsafe { *comm = comm_null() };
                return 0;
            }
        }
    }
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Comm_free(comm) }
}
