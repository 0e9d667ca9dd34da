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

use super::{node, ran};

/// `MPI_Barrier`.
///
/// # Safety
/// As `MPI_Barrier`.
pub unsafe fn barrier(comm: ffi::MPI_Comm) -> c_int {
    let Some(node) = node(comm) else {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Barrier(comm) };
    };
    let Some(span) = &node.span else {
        let s = node.begin(1);
        node.flag(s);
        node.wait_all(s);
        node.finish(s);
        ran();
        return 0;
    };
    // Across nodes: the node's members arrive at its leader (step `s`),
    // the leaders meet in the real barrier, and each leader releases its
    // node (step `s + 1`).
    let s = node.begin(2);
    let mut rc = 0;
    if node.me == 0 {
        node.wait_all(s);
        if let Some(l) = span.leaders {
            // SAFETY: the leaders' communicator.
            rc = unsafe { ffi::PMPI_Barrier(l.0) };
        }
        node.flag(s + 1);
    } else {
        node.flag(s);
        node.wait_cell(0, s + 1);
    }
    node.finish(s + 1);
    ran();
    rc
}
