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
use crate::comm::node::Node;

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
                flat(node);
            } else {
                tree(node, || 0);
            }
            0
        }
        // Across nodes: the node's members arrive at its leader, the
        // leaders meet in the real barrier, and each leader releases its
        // node.
        Some(span) => tree(node, || match span.leaders {
            // SAFETY: the leaders' communicator.
            Some(l) => unsafe { ffi::PMPI_Barrier(l.0) },
            None => 0,
        }),
    };
    ran();
    rc
}

/// Every member raises its flag and reads everyone's: one step, one
/// cache-line transfer of latency.
fn flat(node: &Node) {
    let s = node.begin(1);
    node.flag(s);
    node.wait_all(s);
    node.finish(s);
}

/// Arrival up a tree of radix [`radix`] rooted at member 0 (step `s`),
/// `at_root` at the root, release down the tree (step `s + 1`). When ranks
/// outnumber cores this beats the flat barrier: a waiting member yields
/// and needs one flag to go on, and the root (usually the next
/// collective's root too) leaves first.
fn tree(node: &Node, at_root: impl FnOnce() -> c_int) -> c_int {
    let (me, n, k) = (node.me, node.n, radix());
    let s = node.begin(2);
    let children = (k * me + 1).min(n)..(k * me + k + 1).min(n);
    for c in children.clone() {
        node.wait_cell(c, s);
    }
    let rc = if me == 0 {
        let rc = at_root();
        node.flag(s + 1);
        rc
    } else {
        node.flag(s);
        node.wait_cell((me - 1) / k, s + 1);
        if !children.is_empty() {
            node.flag(s + 1);
        }
        0
    };
    node.finish(s + 1);
    rc
}
