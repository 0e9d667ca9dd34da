//! The entry points of the nonblocking collectives that move data
//! (`MPI_Ibarrier`, `Ibcast`, `Igather`, `Iallgather`, `Ialltoall`,
//! `Iscatter`): what each call takes (see the parent module) and the
//! operation it queues, or the real call; and `queue_or`, which every
//! entry point (the reductions' too) ends in.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::super::{in_place, rank_ok, to_real, Buf};
use super::schedule::{nb_node, post, To};
use super::{dup, How, Kind, Recv};
use crate::comm::node::Node;

/// Queues `op` under the request `to` names, or makes the real call:
/// `real(out)` is the call unchanged but for its request out-pointer
/// (`to`'s own, or, starting a persistent request, one whose real request
/// the slot then stands for).
///
/// # Safety
/// `op`'s buffers are the caller's; `to` its out-pointer or a persistent
/// slot being started.
pub(super) unsafe fn queue_or(
    comm: ffi::MPI_Comm,
    op: Option<(&'static Node, Kind)>,
    to: To,
    real: impl FnOnce(*mut ffi::MPI_Request) -> c_int,
) -> c_int {
    if let Some((node, kind)) = op {
        // SAFETY: per the contract.
        if unsafe { post(node, comm, kind, to) } {
            return 0;
        }
    }
    match to {
        To::New(request) => to_real(|| real(request)),
        To::Slot(i, _) => {
            let mut inner = crate::p2p::api::req_null();
            let rc = to_real(|| real(&mut inner));
            if rc == 0 {
                crate::p2p::api::coll_activate_real(i, inner);
            }
            rc
        }
    }
}

/// The broadcast: checks and the operation, or `None` for the real MPI.
///
/// # Safety
/// The caller's buffer.
pub(super) unsafe fn bcast(
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> Option<(&'static Node, Kind)> {
    nb_node(comm).and_then(|node| {
        // Any size: a payload larger than a cell moves as in `large`.
        let (b, r) = (Buf::new(buf, count, dt)?, rank_ok(root, node.n)?);
        let kind = if r == node.me {
            // A derived type is packed now (see `packed`).
            // SAFETY: the caller's buffer.
            let packed = (!b.d.contig).then(|| unsafe { packed(&b) });
            Kind::Bcast {
                root: r,
                buf: b,
                held: None,
                packed,
            }
        } else {
            let into = receiving(b, None)?;
            Kind::Bcast {
                root: r,
                buf: into.buf,
                held: into.held,
                packed: None,
            }
        };
        Some((node, kind))
    })
}

/// What a member publishes: `b` packed (at the call, so that the progress
/// thread never packs a derived type and the program may reuse nothing it
/// should not).
///
/// # Safety
/// `b` holds its elements.
unsafe fn packed(b: &Buf) -> Vec<u8> {
    let mut v = vec![0u8; b.bytes()];
    // SAFETY: per the contract; `v` has room.
    unsafe { b.pack_to(v.as_mut_ptr()) };
    v
}

/// A receiving buffer for `b` (`None` if a derived type could not be
/// held).
fn receiving(b: Buf, skip: Option<usize>) -> Option<Recv> {
    if b.d.contig || b.bytes() == 0 {
        return Some(Recv {
            buf: b,
            held: None,
            skip,
        });
    }
    let held = dup(b.dt)?;
    Some(Recv {
        buf: Buf { dt: held, ..b },
        held: Some(held),
        skip,
    })
}

/// The gathers, all-to-all and scatter: checks and the operation, or
/// `None` for the real MPI. `sbuf`/`rbuf` as given; `root` `None` for the
/// all- forms.
///
/// # Safety
/// The caller's buffers.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn blocks(
    how: How,
    comm: ffi::MPI_Comm,
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: Option<c_int>,
) -> Option<(&'static Node, Kind)> {
    let node = nb_node(comm)?;
    let (me, n) = (node.me, node.n);
    let root = match root {
        Some(r) => Some(rank_ok(r, n)?),
        None => None,
    };
    let is_root = root == Some(me);
    let inplace = sbuf == in_place() || (how == How::Scatter && core::ptr::eq(rbuf, in_place()));
    if inplace && root.is_some() && !is_root {
        return None;
    }
    // Bytes of one block, from the arguments that describe it here (MPI
    // makes them agree across members).
    let recv_here = root.is_none() || is_root || how == How::Scatter;
    // What a member publishes, packed now when it fits a cell, else kept
    // in the caller's buffer for `large` (an in-place all-to-all's must be
    // staged: the member overwrites it while the others read).
    let publish = |send: Buf, blocks: usize| -> (Vec<u8>, Option<(Buf, bool)>) {
        let all = send.times(blocks);
        if all.bytes() <= node.inline_max {
            // SAFETY: the caller's buffer.
            (unsafe { packed(&all) }, None)
        } else {
            (Vec::new(), Some((all, inplace && how == How::Alltoall)))
        }
    };
    let kind = match how {
        How::Gather => {
            let r = if recv_here {
                Some(Buf::new(rbuf, rcount, rdt)?)
            } else {
                None
            };
            let send = if inplace {
                r?.piece(me)
            } else {
                Buf::new(sbuf, scount, sdt)?
            };
            let pb = send.bytes();
            let (mine, src) = publish(send, 1);
            let recv = match r {
                Some(b) => Some(receiving(b, inplace.then_some(me))?),
                None => None,
            };
            Kind::Blocks {
                how,
                root,
                mine,
                src,
                pb,
                recv,
            }
        }
        How::Alltoall => {
            let r = Buf::new(rbuf, rcount, rdt)?;
            let send = if inplace {
                r
            } else {
                Buf::new(sbuf, scount, sdt)?
            };
            let pb = send.bytes();
            let (mine, src) = publish(send, n);
            let recv = receiving(r, None)?;
            Kind::Blocks {
                how,
                root,
                mine,
                src,
                pb,
                recv: Some(recv),
            }
        }
        How::Scatter => {
            let root_ = root?;
            let keep = is_root && core::ptr::eq(rbuf, in_place());
            let r = if keep {
                None
            } else {
                Some(Buf::new(rbuf, rcount, rdt)?)
            };
            let (mine, src, pb) = if is_root {
                let send = Buf::new(sbuf, scount, sdt)?;
                let pb = send.bytes();
                let (mine, src) = publish(send, n);
                if let Some(r) = &r {
                    // The root's own block, now (it publishes all n).
                    if src.is_none() {
                        // SAFETY: `mine` holds n blocks of `pb`; the
                        // buffer is the caller's.
                        unsafe { r.unpack_from(mine.as_ptr().add(me * pb), pb) };
                    } else {
                        // SAFETY: the caller's buffers.
                        unsafe { send.piece(me).copy_to(r) };
                    }
                }
                (mine, src, pb)
            } else {
                (Vec::new(), None, r?.bytes())
            };
            let recv = match r {
                Some(b) if me != root_ => Some(receiving(b, None)?),
                _ => None,
            };
            Kind::Blocks {
                how,
                root,
                mine,
                src,
                pb,
                recv,
            }
        }
    };
    Some((node, kind))
}

// The entry points.

nb_entry! {
    "MPI_Ibarrier": ibarrier / ibarrier_to(comm: ffi::MPI_Comm) on comm;
    plan = nb_node(comm).map(|node| (node, Kind::Barrier));
    real = ffi::PMPI_Ibarrier;
    persistent "MPI_Barrier_init": barrier_init;
    init_args = args(BARRIER, comm);
    init_real = ffi::PMPI_Barrier_init;
}

nb_entry! {
    "MPI_Ibcast": ibcast / ibcast_to(
        buf: *mut c_void,
        count: c_int,
        dt: ffi::MPI_Datatype,
        root: c_int,
        comm: ffi::MPI_Comm,
    ) on comm, data(count, dt);
    plan = bcast(buf, count, dt, root, comm);
    real = ffi::PMPI_Ibcast;
    persistent "MPI_Bcast_init": bcast_init;
    init_args = CollArgs {
        rbuf: buf,
        scount: count,
        sdt: dt,
        root,
        ..args(BCAST, comm)
    };
    init_real = ffi::PMPI_Bcast_init;
}

nb_entry! {
    "MPI_Igather": igather / igather_to(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: ffi::MPI_Datatype,
        root: c_int,
        comm: ffi::MPI_Comm,
    ) on comm, data(scount, sdt);
    plan = blocks(How::Gather, comm, sbuf, scount, sdt, rbuf, rcount, rdt, Some(root));
    real = ffi::PMPI_Igather;
    persistent "MPI_Gather_init": gather_init;
    init_args = blocks_args(GATHER, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
    init_real = ffi::PMPI_Gather_init;
}

nb_entry! {
    "MPI_Iallgather": iallgather / iallgather_to(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) on comm, data(scount, sdt);
    plan = blocks(How::Gather, comm, sbuf, scount, sdt, rbuf, rcount, rdt, None);
    real = ffi::PMPI_Iallgather;
    persistent "MPI_Allgather_init": allgather_init;
    init_args = blocks_args(ALLGATHER, sbuf, scount, sdt, rbuf, rcount, rdt, 0, comm);
    init_real = ffi::PMPI_Allgather_init;
}

nb_entry! {
    "MPI_Ialltoall": ialltoall / ialltoall_to(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) on comm, data(scount, sdt);
    plan = blocks(How::Alltoall, comm, sbuf, scount, sdt, rbuf, rcount, rdt, None);
    real = ffi::PMPI_Ialltoall;
    persistent "MPI_Alltoall_init": alltoall_init;
    init_args = blocks_args(ALLTOALL, sbuf, scount, sdt, rbuf, rcount, rdt, 0, comm);
    init_real = ffi::PMPI_Alltoall_init;
}

nb_entry! {
    "MPI_Iscatter": iscatter / iscatter_to(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: ffi::MPI_Datatype,
        root: c_int,
        comm: ffi::MPI_Comm,
    ) on comm, data(rcount, rdt);
    plan = blocks(How::Scatter, comm, sbuf, scount, sdt, rbuf, rcount, rdt, Some(root));
    real = ffi::PMPI_Iscatter;
    persistent "MPI_Scatter_init": scatter_init;
    init_args = blocks_args(SCATTER, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm);
    init_real = ffi::PMPI_Scatter_init;
}
