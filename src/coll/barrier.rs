//! `MPI_Barrier`: every member raises its flag with the step number and
//! waits for everyone else's.
//!
//! This is the flat form of the flag barrier: n flag writes in all, the
//! fewest possible (each member must announce its arrival once), and one
//! cache-line transfer of latency, since all members write at once and
//! each reads the others' lines (the same count the ARMCI barrier of
//! Nieplocha et al. reaches by folding its flag writes into the
//! communication that precedes it). Flags carry the step, so no reset
//! phase is needed and the barrier may be entered again at once.

use core::ffi::c_int;

use mpi_sys as ffi;

use super::{node, radix, ran, to_real};

/// `MPI_Barrier`.
///
/// # Safety
/// As `MPI_Barrier`.
pub unsafe fn barrier(comm: ffi::MPI_Comm) -> c_int {
    let Some(node) = node(comm) else {
        // SAFETY: forwarded unchanged.
        return to_real(|| unsafe { ffi::PMPI_Barrier(comm) });
    };
    let rc = match &node.span {
        None => {
            if node.n <= radix() + 1 && !crate::sys::oversubscribed() {
                node.barrier_flat();
            } else {
                node.barrier_tree(radix(), || 0);
            }
            0
        }
        // Across nodes: the node's members arrive at its leader, the
        // leaders meet in the real barrier, and each leader releases its
        // node.
        Some(span) => node.barrier_tree(radix(), || match span.leaders() {
            // SAFETY: the leaders' communicator.
            Some(l) => unsafe { ffi::PMPI_Barrier(l.0) },
            None => 0,
        }),
    };
    ran();
    rc
}
