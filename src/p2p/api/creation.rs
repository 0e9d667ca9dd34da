//! Communicators made by intercepted calls get heapmpi's locality info.

use core::ffi::c_int;

use super::*;

/// Registers a communicator a creating call just returned (collective over
/// its members, like the call itself).
///
/// # Safety
/// `newcomm` is the creating call's out-pointer.
pub unsafe fn comm_created(rc: c_int, newcomm: *mut ffi::MPI_Comm) -> c_int {
    // Whether to register is the job's decision, not this rank's: a rank
    // whose engine is off still takes part in the agreement (and keeps no
    // info), so the members of the communicator never disagree on the
    // collective they make.
    if rc != 0 || !crate::mpi::comms_registered() || newcomm.is_null() {
        return rc;
    }
    // SAFETY: the creating call succeeded, so `*newcomm` is written.
    let c = unsafe { *newcomm };
    if c == comm_null() {
        return rc;
    }
    let node = crate::mpi::outcome()
        .and_then(|o| o.node_comm)
        .filter(|_| crate::comm::active());
    crate::comm::register_new(c, node.map(|n| n.0));
    rc
}

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
