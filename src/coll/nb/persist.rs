//! MPI-4 persistent collectives (`MPI_Barrier_init`, `Bcast_init`,
//! `Reduce_init`, `Allreduce_init`, `Gather_init`, `Allgather_init`,
//! `Alltoall_init`, `Scatter_init`, `Scan_init`, `Exscan_init`,
//! `Reduce_scatter_block_init`, and the neighbourhood, `v` and `w` forms)
//! on communicators inside one node: the initialisation every form ends
//! in ([`init`]) and the start. The routines themselves are written next
//! to their nonblocking forms, from the same signature (`nb_entry!`), out
//! of `entry::prelude`; the `v` and `w` forms' array copies are made by
//! [`super::persist_v`] and held in [`super::persist_arrays`]'s types.
//!
//! A persistent collective is a nonblocking one whose arguments are fixed
//! once and which is started many times (MPI-4.0 §6.13; the MPI Forum's
//! model is exactly "the nonblocking call, bound once"), so it is built
//! from this module's parent: the initialisation keeps the arguments in a
//! heapmpi persistent request (`p2p::api::coll_persistent`), and each
//! `MPI_Start` makes the nonblocking call's decision and operation over
//! that request's slot instead of a new one. A start whose operation
//! cannot run on the heap (the same reasons as the nonblocking call's)
//! starts the real MPI's nonblocking collective, which the slot then
//! stands for until it completes; since the decision depends only on
//! arguments every member agrees on, all members start alike. Members may
//! start a communicator's persistent collectives in different orders
//! (MPI-4.0 §6.13; MPICH's `coll/p_order` does), so a start cannot take
//! the communicator's next steps as a nonblocking call does: each request
//! runs on a channel of its own (`Node::channel`, taken in
//! initialisation order, which every member shares), whose steps follow
//! that request's starts only. The
//! initialisation takes the heap path only where the arguments qualify
//! now (so bad arguments get the real MPI's error from the `_init` call,
//! as stock); otherwise it is the real MPI's `MPI_*_init`. Derived
//! datatypes are duplicated at the initialisation and held by the slot,
//! so the program may free its own; the `v` forms' count and displacement
//! arrays are copied there too (the real MPI's fallback at a start reads
//! the copies, which live as long as the request). The persistent
//! neighbourhood collectives pair ambiguous neighbourhoods as the
//! nonblocking ones do,
//! on every MPI measured (a periodic ring of 1 and 2, a 2x1 grid, a graph
//! naming a neighbour twice: Open MPI 5.0, MPICH 4.0 and 5.0, Intel MPI
//! 2021), so they take the same decision.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::super::neighbor::Call;
use super::super::{in_place, to_real};
use super::calls::{bcast, blocks, iallgather_to, ialltoall_to, ibarrier_to, ibcast_to};
use super::calls::{igather_to, iscatter_to};
use super::neighbor::{ineighbor_allgather_to, ineighbor_alltoall_to, uniform};
use super::neighbor::{ineighbor_allgatherv_op, ineighbor_allgatherv_to};
use super::neighbor::{ineighbor_alltoallv_op, ineighbor_alltoallv_to};
use super::neighbor::{ineighbor_alltoallw_op, ineighbor_alltoallw_to};
use super::persist_arrays::{arrays, w_arrays};
use super::reduce::{iallreduce_to, iexscan_to, ireduce_scatter_block_to, iscan_to};
use super::reduce::{ireduce_scatter_op, ireduce_scatter_to};
use super::reduce::{ireduce_to, reduction};
use super::schedule::{nb_node, To};
use super::vcalls::{iallgatherv_op, iallgatherv_to, ialltoallv_op, ialltoallv_to};
use super::vcalls::{ialltoallw_op, ialltoallw_to};
use super::vcalls::{igatherv_op, igatherv_to, iscatterv_op, iscatterv_to};
use super::{release, Fold, How, Kind};
use crate::comm::node::Node;
use crate::p2p::engine::CollArgs;

/// The routines, as [`CollArgs::call`] numbers them.
pub(super) const BARRIER: u8 = 0;
pub(super) const BCAST: u8 = 1;
pub(super) const REDUCE: u8 = 2;
pub(super) const ALLREDUCE: u8 = 3;
pub(super) const GATHER: u8 = 4;
pub(super) const ALLGATHER: u8 = 5;
pub(super) const ALLTOALL: u8 = 6;
pub(super) const SCATTER: u8 = 7;
pub(super) const SCAN: u8 = 8;
pub(super) const EXSCAN: u8 = 9;
pub(super) const REDUCE_SCATTER_BLOCK: u8 = 10;
pub(super) const NEIGHBOR_ALLGATHER: u8 = 11;
pub(super) const NEIGHBOR_ALLTOALL: u8 = 12;
pub(super) const GATHERV: u8 = 13;
pub(super) const SCATTERV: u8 = 14;
pub(super) const ALLGATHERV: u8 = 15;
pub(super) const ALLTOALLV: u8 = 16;
pub(super) const REDUCE_SCATTER: u8 = 17;
pub(super) const NEIGHBOR_ALLGATHERV: u8 = 18;
pub(super) const NEIGHBOR_ALLTOALLV: u8 = 19;
pub(super) const ALLTOALLW: u8 = 20;
pub(super) const NEIGHBOR_ALLTOALLW: u8 = 21;

/// Registers the start of persistent collectives with the requests' layer.
pub(super) fn start() {
    crate::p2p::api::set_coll_start(start_one);
}

/// The requests' layer's hook: starts the collective of slot `slot`.
fn start_one(a: CollArgs, slot: u32) -> c_int {
    // SAFETY: the arguments the program gave at the initialisation, valid
    // while the request lives (its buffers are the program's, as for any
    // persistent request; derived types are the slot's duplicates).
    unsafe { start_persistent(a, slot) }
}

/// Which datatypes of `a` this member uses (send, receive): the others may
/// be anything (a non-root's receive arguments of a gather, say) and are
/// never looked at.
fn types_used(a: &CollArgs) -> (bool, bool) {
    let mut rank: c_int = -1;
    // SAFETY: a valid communicator (the caller found its node state) and
    // an out-pointer.
    unsafe { ffi::PMPI_Comm_rank(a.comm, &mut rank) };
    let root = rank == a.root;
    match a.call {
        BCAST => (true, false),
        GATHER | GATHERV => (!(root && a.sbuf == in_place()), root),
        ALLGATHER | ALLTOALL | ALLGATHERV | ALLTOALLV => (a.sbuf != in_place(), true),
        NEIGHBOR_ALLGATHER | NEIGHBOR_ALLTOALL | NEIGHBOR_ALLGATHERV | NEIGHBOR_ALLTOALLV => {
            (true, true)
        }
        SCATTER | SCATTERV => (root, !(root && core::ptr::eq(a.rbuf, in_place()))),
        // Barrier; reductions take predefined types only.
        _ => (false, false),
    }
}

/// A duplicate of `t` if it is a derived datatype (`None`: predefined, or
/// the duplicate failed, `Some(Err)`).
pub(super) fn dup_derived(t: ffi::MPI_Datatype) -> Option<Result<ffi::MPI_Datatype, ()>> {
    if crate::dt::layout(t)?.d.named {
        return None;
    }
    // SAFETY: reading an MPI constant.
    let mut d = unsafe { ffi::RSMPI_DATATYPE_NULL };
    // SAFETY: a valid committed datatype (its layout was read), an
    // out-pointer.
    Some(if unsafe { ffi::PMPI_Type_dup(t, &mut d) } == 0 {
        Ok(d)
    } else {
        Err(())
    })
}

/// The initialisation: a heapmpi persistent request for `a` if its
/// operation would run on the heap now, else `real` (the real
/// `MPI_*_init`, unchanged).
///
/// # Safety
/// `a` holds the caller's arguments; `request` is its out-pointer.
pub(super) unsafe fn init(
    a: CollArgs,
    request: *mut ffi::MPI_Request,
    real: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: per the contract.
    unsafe { init_with(a, Vec::new(), request, real) }
}

/// [`init`] for arguments that already hold datatype duplicates of the
/// caller's (`held`: the slot frees them, or this function if there is
/// no slot).
///
/// # Safety
/// As [`init`].
pub(super) unsafe fn init_with(
    mut a: CollArgs,
    mut held: Vec<ffi::MPI_Datatype>,
    request: *mut ffi::MPI_Request,
    real: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: the caller's arguments (only checked: the operation built
    // is dropped unstarted).
    if unsafe { would_queue(&a) } {
        // Taken first, by every member alike (the decision above is
        // agreed), so that channel numbers agree.
        let channel = channel(a.comm);
        let (s, r) = types_used(&a);
        let mut ok = channel.is_some();
        for (used, t) in [(s, &mut a.sdt), (r, &mut a.rdt)] {
            if !used {
                continue;
            }
            match dup_derived(*t) {
                Some(Ok(d)) => {
                    held.push(d);
                    *t = d;
                }
                Some(Err(())) => ok = false,
                None => {}
            }
        }
        if ok {
            a.channel = channel.map(|c| core::ptr::NonNull::from(Box::leak(c)));
            if let Some((_, h)) = crate::p2p::api::coll_persistent(a, &held) {
                // SAFETY: the caller's out-pointer.
                unsafe { *request = h };
                return 0;
            }
            if let Some(c) = a.channel {
                // SAFETY: leaked just above, and no request took it.
                drop(unsafe { Box::from_raw(c.as_ptr()) });
            }
        }
    }
    for mut t in held {
        // SAFETY: our duplicate, unused.
        unsafe { ffi::PMPI_Type_free(&mut t) };
    }
    if let Some(arr) = a.arrays {
        // SAFETY: no request took them: ours to free, unread from now on.
        unsafe { arr.free() };
    }
    to_real(real)
}

/// The channel of the next persistent collective initialised on `comm`
/// (see `Node::channel`): its starts take steps there, apart from the
/// communicator's other collectives, since MPI-4.0 §6.13 lets members
/// start persistent collectives in different orders (unless the
/// communicator asserts `mpi_assert_strict_persistent_collective_ordering`,
/// which heapmpi does not need); initialisations come in the same order
/// on every member, so each member's n-th channel is the others' n-th.
/// `None` (a member found no room for a channel): every member makes the
/// real initialisation.
fn channel(comm: ffi::MPI_Comm) -> Option<Box<Node>> {
    let node = nb_node(comm)?;
    let ch = node.channel(&super::super::info(comm)?.chain)?;
    debug_assert!(ch.n == node.n && ch.me == node.me && ch.inline_max == node.inline_max);
    Some(Box::new(ch))
}

/// The arguments of a routine without some of them.
pub(super) fn args(call: u8, comm: ffi::MPI_Comm) -> CollArgs {
    // SAFETY: reading an MPI constant.
    let dnull = unsafe { ffi::RSMPI_DATATYPE_NULL };
    let onull = crate::op::op_null();
    CollArgs {
        call,
        sbuf: core::ptr::null(),
        scount: 0,
        sdt: dnull,
        rbuf: core::ptr::null_mut(),
        rcount: 0,
        rdt: dnull,
        op: onull,
        root: 0,
        comm,
        arrays: None,
        channel: None,
    }
}

/// The gathers', all-to-all's and scatter's arguments.
#[allow(clippy::too_many_arguments)]
pub(super) fn blocks_args(
    call: u8,
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> CollArgs {
    CollArgs {
        sbuf,
        scount,
        sdt,
        rbuf,
        rcount,
        rdt,
        root,
        ..args(call, comm)
    }
}

// The initialisations.

/// The reductions' arguments (the root, where there is one, apart).
pub(super) fn fold_args(
    call: u8,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
) -> CollArgs {
    CollArgs {
        sbuf,
        rbuf,
        scount: count,
        sdt: dt,
        op,
        ..args(call, comm)
    }
}

/// The operation persistent collective `a` stands for, planned now, or
/// `None` for the real MPI (see `persist`).
///
/// # Safety
/// `a` holds the program's arguments of the initialisation.
unsafe fn plan(a: &CollArgs) -> Option<(&'static Node, Kind)> {
    let root = Some(a.root);
    // SAFETY: per the contract.
    unsafe {
        match a.call {
            BARRIER => nb_node(a.comm).map(|node| (node, Kind::Barrier)),
            BCAST => bcast(a.rbuf, a.scount, a.sdt, a.root, a.comm),
            REDUCE => reduction(
                a.comm,
                a.sbuf,
                a.rbuf,
                a.scount,
                a.sdt,
                a.op,
                root,
                Fold::All,
            ),
            ALLREDUCE => reduction(
                a.comm,
                a.sbuf,
                a.rbuf,
                a.scount,
                a.sdt,
                a.op,
                None,
                Fold::All,
            ),
            SCAN => reduction(
                a.comm,
                a.sbuf,
                a.rbuf,
                a.scount,
                a.sdt,
                a.op,
                None,
                Fold::Scan,
            ),
            EXSCAN => reduction(
                a.comm,
                a.sbuf,
                a.rbuf,
                a.scount,
                a.sdt,
                a.op,
                None,
                Fold::Exscan,
            ),
            REDUCE_SCATTER_BLOCK => reduction(
                a.comm,
                a.sbuf,
                a.rbuf,
                a.scount,
                a.sdt,
                a.op,
                None,
                Fold::Block,
            ),
            GATHERV => {
                let v = arrays(a);
                igatherv_op(
                    a.sbuf,
                    a.scount,
                    a.sdt,
                    a.rbuf,
                    v(2),
                    v(3),
                    a.rdt,
                    a.root,
                    a.comm,
                )
            }
            SCATTERV => {
                let v = arrays(a);
                iscatterv_op(
                    a.sbuf,
                    v(0),
                    v(1),
                    a.sdt,
                    a.rbuf,
                    a.rcount,
                    a.rdt,
                    a.root,
                    a.comm,
                )
            }
            ALLGATHERV => {
                let v = arrays(a);
                iallgatherv_op(a.sbuf, a.scount, a.sdt, a.rbuf, v(2), v(3), a.rdt, a.comm)
            }
            ALLTOALLV => {
                let v = arrays(a);
                ialltoallv_op(a.sbuf, v(0), v(1), a.sdt, a.rbuf, v(2), v(3), a.rdt, a.comm)
            }
            REDUCE_SCATTER => ireduce_scatter_op(a.sbuf, a.rbuf, arrays(a)(2), a.sdt, a.op, a.comm),
            ALLTOALLW => {
                let w = w_arrays(a)?;
                let (c, d, t) = (|k| w.counts(k), |k| w.displs_int(k), |k| w.types(k));
                ialltoallw_op(a.sbuf, c(0), d(0), t(0), a.rbuf, c(1), d(1), t(1), a.comm)
            }
            NEIGHBOR_ALLTOALLW => {
                let w = w_arrays(a)?;
                let (c, d, t) = (|k| w.counts(k), |k| w.displs_aint(k), |k| w.types(k));
                ineighbor_alltoallw_op(a.sbuf, c(0), d(0), t(0), a.rbuf, c(1), d(1), t(1), a.comm)
            }
            NEIGHBOR_ALLGATHERV => {
                let v = arrays(a);
                ineighbor_allgatherv_op(a.sbuf, a.scount, a.sdt, a.rbuf, v(2), v(3), a.rdt, a.comm)
            }
            NEIGHBOR_ALLTOALLV => {
                let v = arrays(a);
                ineighbor_alltoallv_op(a.sbuf, v(0), v(1), a.sdt, a.rbuf, v(2), v(3), a.rdt, a.comm)
            }
            NEIGHBOR_ALLGATHER | NEIGHBOR_ALLTOALL => {
                let call = if a.call == NEIGHBOR_ALLGATHER {
                    Call::Gather
                } else {
                    Call::Alltoall
                };
                uniform(
                    call, a.sbuf, a.scount, a.sdt, a.rbuf, a.rcount, a.rdt, a.comm,
                )
            }
            GATHER | ALLGATHER | ALLTOALL | SCATTER => {
                let (how, root) = match a.call {
                    GATHER => (How::Gather, root),
                    ALLGATHER => (How::Gather, None),
                    ALLTOALL => (How::Alltoall, None),
                    _ => (How::Scatter, root),
                };
                blocks(
                    how, a.comm, a.sbuf, a.scount, a.sdt, a.rbuf, a.rcount, a.rdt, root,
                )
            }
            _ => None,
        }
    }
}

/// Whether persistent collective `a` would run on the heap now (its
/// operation is planned and dropped).
///
/// # Safety
/// As [`plan`].
pub(super) unsafe fn would_queue(a: &CollArgs) -> bool {
    // SAFETY: per the contract.
    match unsafe { plan(a) } {
        Some((_, kind)) => {
            release(&kind);
            true
        }
        None => false,
    }
}

/// Starts persistent collective `a` over slot `slot`: on the heap as the
/// nonblocking call would run, else the real MPI's nonblocking call. A
/// broadcast keeps its buffer in `rbuf`, its count and type in `scount`
/// and `sdt`.
///
/// # Safety
/// As [`plan`]; `slot` is the inactive persistent request of `a`.
pub(super) unsafe fn start_persistent(a: CollArgs, slot: u32) -> c_int {
    // SAFETY: the slot owns the channel until it is cleared, after the
    // operation has left the queue (see `engine::release_persist`).
    let to = To::Slot(slot, a.channel.map(|c| unsafe { &*c.as_ptr() }));
    let c = a.comm;
    // SAFETY: per the contract; each real call forwards the arguments.
    unsafe {
        match a.call {
            BARRIER => ibarrier_to(c, to),
            BCAST => ibcast_to(a.rbuf, a.scount, a.sdt, a.root, c, to),
            REDUCE => ireduce_to(a.sbuf, a.rbuf, a.scount, a.sdt, a.op, a.root, c, to),
            ALLREDUCE => iallreduce_to(a.sbuf, a.rbuf, a.scount, a.sdt, a.op, c, to),
            GATHER => igather_to(
                a.sbuf, a.scount, a.sdt, a.rbuf, a.rcount, a.rdt, a.root, c, to,
            ),
            ALLGATHER => iallgather_to(a.sbuf, a.scount, a.sdt, a.rbuf, a.rcount, a.rdt, c, to),
            ALLTOALL => ialltoall_to(a.sbuf, a.scount, a.sdt, a.rbuf, a.rcount, a.rdt, c, to),
            SCATTER => iscatter_to(
                a.sbuf, a.scount, a.sdt, a.rbuf, a.rcount, a.rdt, a.root, c, to,
            ),
            SCAN => iscan_to(a.sbuf, a.rbuf, a.scount, a.sdt, a.op, c, to),
            EXSCAN => iexscan_to(a.sbuf, a.rbuf, a.scount, a.sdt, a.op, c, to),
            REDUCE_SCATTER_BLOCK => {
                ireduce_scatter_block_to(a.sbuf, a.rbuf, a.scount, a.sdt, a.op, c, to)
            }
            NEIGHBOR_ALLGATHER => {
                ineighbor_allgather_to(a.sbuf, a.scount, a.sdt, a.rbuf, a.rcount, a.rdt, c, to)
            }
            GATHERV => {
                let v = arrays(&a);
                igatherv_to(
                    a.sbuf,
                    a.scount,
                    a.sdt,
                    a.rbuf,
                    v(2),
                    v(3),
                    a.rdt,
                    a.root,
                    c,
                    to,
                )
            }
            SCATTERV => {
                let v = arrays(&a);
                iscatterv_to(
                    a.sbuf,
                    v(0),
                    v(1),
                    a.sdt,
                    a.rbuf,
                    a.rcount,
                    a.rdt,
                    a.root,
                    c,
                    to,
                )
            }
            ALLGATHERV => {
                let v = arrays(&a);
                iallgatherv_to(a.sbuf, a.scount, a.sdt, a.rbuf, v(2), v(3), a.rdt, c, to)
            }
            ALLTOALLV => {
                let v = arrays(&a);
                ialltoallv_to(a.sbuf, v(0), v(1), a.sdt, a.rbuf, v(2), v(3), a.rdt, c, to)
            }
            REDUCE_SCATTER => ireduce_scatter_to(a.sbuf, a.rbuf, arrays(&a)(2), a.sdt, a.op, c, to),
            ALLTOALLW | NEIGHBOR_ALLTOALLW => {
                let Some(w) = w_arrays(&a) else {
                    return ffi::MPI_ERR_INTERN as c_int;
                };
                let (cn, t) = (|k| w.counts(k), |k| w.types(k));
                if a.call == ALLTOALLW {
                    let d = |k| w.displs_int(k);
                    ialltoallw_to(a.sbuf, cn(0), d(0), t(0), a.rbuf, cn(1), d(1), t(1), c, to)
                } else {
                    let d = |k| w.displs_aint(k);
                    ineighbor_alltoallw_to(
                        a.sbuf,
                        cn(0),
                        d(0),
                        t(0),
                        a.rbuf,
                        cn(1),
                        d(1),
                        t(1),
                        c,
                        to,
                    )
                }
            }
            NEIGHBOR_ALLGATHERV => {
                let v = arrays(&a);
                ineighbor_allgatherv_to(a.sbuf, a.scount, a.sdt, a.rbuf, v(2), v(3), a.rdt, c, to)
            }
            NEIGHBOR_ALLTOALLV => {
                let v = arrays(&a);
                ineighbor_alltoallv_to(a.sbuf, v(0), v(1), a.sdt, a.rbuf, v(2), v(3), a.rdt, c, to)
            }
            NEIGHBOR_ALLTOALL => {
                ineighbor_alltoall_to(a.sbuf, a.scount, a.sdt, a.rbuf, a.rcount, a.rdt, c, to)
            }
            _ => ffi::MPI_ERR_INTERN as c_int,
        }
    }
}
