//! The entry points of the nonblocking collectives: what each call takes
//! (see the parent module) and the operation it queues, or the real call.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::super::op::Reducer;
use super::super::{in_place, rank_ok, to_real, Buf};
use super::{nb_node, post, Fold, How, Kind, Recv, To};
use crate::comm::node::Node;
use crate::dt;
#[cfg(heapmpi_mpi4)]
use crate::p2p::engine::CollArgs;

/// Queues `op` under the request `to` names, or makes the real call:
/// `real(out)` is the call unchanged but for its request out-pointer
/// (`to`'s own, or, starting a persistent request, one whose real request
/// the slot then stands for).
///
/// # Safety
/// `op`'s buffers are the caller's; `to` its out-pointer or a persistent
/// slot being started.
unsafe fn queue_or(
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
        To::Slot(i) => {
            let mut inner = crate::p2p::api::req_null();
            let rc = to_real(|| real(&mut inner));
            if rc == 0 {
                crate::p2p::api::coll_activate_real(i, inner);
            }
            rc
        }
    }
}

/// `MPI_Ibarrier`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Ibarrier`; `to` as [`queue_or`]'s.
pub(super) unsafe fn ibarrier_to(comm: ffi::MPI_Comm, to: To) -> c_int {
    let queued = nb_node(comm).map(|node| (node, Kind::Barrier));
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        queue_or(comm, queued, to, |request| {
            ffi::PMPI_Ibarrier(comm, request)
        })
    }
}

/// The broadcast: checks and the operation, or `None` for the real MPI.
///
/// # Safety
/// The caller's buffer.
unsafe fn bcast(
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> Option<(&'static Node, Kind)> {
    nb_node(comm).and_then(|node| {
        let (b, r) = (Buf::new(buf, count, dt)?, rank_ok(root, node.n)?);
        if b.bytes() > node.inline_max {
            return None;
        }
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

/// `MPI_Ibcast`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Ibcast`; `to` as [`queue_or`]'s.
pub(super) unsafe fn ibcast_to(
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(count as i64, dt);
    // SAFETY: the caller's buffer.
    let queued = unsafe { bcast(buf, count, dt, root, comm) };
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        queue_or(comm, queued, to, |request| {
            ffi::PMPI_Ibcast(buf, count, dt, root, comm, request)
        })
    }
}

/// A duplicate of `dt`, or `None`.
fn dup(dt: ffi::MPI_Datatype) -> Option<ffi::MPI_Datatype> {
    // SAFETY: reading an MPI constant.
    let mut t = unsafe { ffi::RSMPI_DATATYPE_NULL };
    // SAFETY: a valid datatype (its layout was read) and an out-pointer.
    (unsafe { ffi::PMPI_Type_dup(dt, &mut t) } == 0).then_some(t)
}

/// The reductions' common checks: the block, and what to reduce. `count`
/// is the elements each member receives (for `Fold::Block`, one of the
/// `n` blocks of every contribution).
#[allow(clippy::too_many_arguments)]
fn reduction(
    comm: ffi::MPI_Comm,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    root: Option<c_int>,
    fold: Fold,
) -> Option<(&'static Node, Kind)> {
    let node = nb_node(comm)?;
    if count < 0 {
        return None;
    }
    let root = match root {
        Some(r) => Some(rank_ok(r, node.n)?),
        None => None,
    };
    let l = dt::layout(dt)?;
    if !l.d.named || !l.d.contig || l.extent != l.d.size {
        return None;
    }
    let red = Reducer::new(op, dt, &l)?;
    if !red.native() || !(red.exact() || node.n == 2) {
        return None;
    }
    let count = count as usize;
    let blocks = if fold == Fold::Block { node.n } else { 1 };
    let bytes = count * l.d.size * blocks;
    if bytes > node.inline_max {
        return None;
    }
    let receives = match fold {
        Fold::Exscan => node.me != 0,
        _ => root.is_none_or(|r| r == node.me),
    };
    let send = if sbuf == in_place() {
        // In place: the root's (or everyone's) data is in the receive
        // buffer; elsewhere MPI_IN_PLACE is not a valid send buffer.
        if root.is_some_and(|r| r != node.me) {
            return None;
        }
        rbuf as *const u8
    } else {
        sbuf as *const u8
    };
    if bytes > 0 && (send.is_null() || (receives && rbuf.is_null())) {
        return None;
    }
    Some((
        node,
        Kind::Reduce {
            root,
            send,
            recv: rbuf as *mut u8,
            count,
            bytes,
            red,
            fold,
        },
    ))
}

/// `MPI_Ireduce`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Ireduce`; `to` as [`queue_or`]'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ireduce_to(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    root: c_int,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(count as i64, dt);
    let queued = reduction(comm, sbuf, rbuf, count, dt, op, Some(root), Fold::All);
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        queue_or(comm, queued, to, |request| {
            ffi::PMPI_Ireduce(sbuf, rbuf, count, dt, op, root, comm, request)
        })
    }
}

/// `MPI_Iallreduce`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Iallreduce`; `to` as [`queue_or`]'s.
pub(super) unsafe fn iallreduce_to(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(count as i64, dt);
    let queued = reduction(comm, sbuf, rbuf, count, dt, op, None, Fold::All);
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        queue_or(comm, queued, to, |request| {
            ffi::PMPI_Iallreduce(sbuf, rbuf, count, dt, op, comm, request)
        })
    }
}

/// `MPI_Iscan`, `MPI_Iexscan` (`fold` `Scan`, `Exscan`) and
/// `MPI_Ireduce_scatter_block` (`Block`, `count` per block).
///
/// # Safety
/// As those calls; `to` as [`queue_or`]'s.
#[allow(clippy::too_many_arguments)]
unsafe fn ifold_to(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    fold: Fold,
    to: To,
) -> c_int {
    crate::profile::data(count as i64, dt);
    let queued = reduction(comm, sbuf, rbuf, count, dt, op, None, fold);
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        queue_or(comm, queued, to, |request| match fold {
            Fold::Scan => ffi::PMPI_Iscan(sbuf, rbuf, count, dt, op, comm, request),
            Fold::Exscan => ffi::PMPI_Iexscan(sbuf, rbuf, count, dt, op, comm, request),
            _ => ffi::PMPI_Ireduce_scatter_block(sbuf, rbuf, count, dt, op, comm, request),
        })
    }
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
unsafe fn blocks(
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
            if pb > node.inline_max {
                return None;
            }
            // SAFETY: the caller's buffer.
            let mine = unsafe { packed(&send) };
            let recv = match r {
                Some(b) => Some(receiving(b, inplace.then_some(me))?),
                None => None,
            };
            Kind::Blocks {
                how,
                root,
                mine,
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
            if pb * n > node.inline_max {
                return None;
            }
            // SAFETY: the caller's buffer, n blocks.
            let mine = unsafe { packed(&send.times(n)) };
            let recv = receiving(r, None)?;
            Kind::Blocks {
                how,
                root,
                mine,
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
            let (mine, pb) = if is_root {
                let send = Buf::new(sbuf, scount, sdt)?;
                let pb = send.bytes();
                if pb * n > node.inline_max {
                    return None;
                }
                // SAFETY: the caller's buffer, n blocks.
                let mine = unsafe { packed(&send.times(n)) };
                if let Some(r) = &r {
                    // The root's own block, now (it publishes all n).
                    // SAFETY: `mine` holds n blocks of `pb`; the buffer is
                    // the caller's.
                    unsafe { r.unpack_from(mine.as_ptr().add(me * pb), pb) };
                }
                (mine, pb)
            } else {
                let pb = r?.bytes();
                if pb * n > node.inline_max {
                    return None;
                }
                (Vec::new(), pb)
            };
            let recv = match r {
                Some(b) if me != root_ => Some(receiving(b, None)?),
                _ => None,
            };
            Kind::Blocks {
                how,
                root,
                mine,
                pb,
                recv,
            }
        }
    };
    Some((node, kind))
}

/// `MPI_Igather`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Igather`; `to` as [`queue_or`]'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn igather_to(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        let op = blocks(
            How::Gather,
            comm,
            sbuf,
            scount,
            sdt,
            rbuf,
            rcount,
            rdt,
            Some(root),
        );
        queue_or(comm, op, to, |request| {
            ffi::PMPI_Igather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, request)
        })
    }
}

/// `MPI_Iallgather`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Iallgather`; `to` as [`queue_or`]'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn iallgather_to(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        let op = blocks(
            How::Gather,
            comm,
            sbuf,
            scount,
            sdt,
            rbuf,
            rcount,
            rdt,
            None,
        );
        queue_or(comm, op, to, |request| {
            ffi::PMPI_Iallgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, request)
        })
    }
}

/// `MPI_Ialltoall`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Ialltoall`; `to` as [`queue_or`]'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ialltoall_to(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        let op = blocks(
            How::Alltoall,
            comm,
            sbuf,
            scount,
            sdt,
            rbuf,
            rcount,
            rdt,
            None,
        );
        queue_or(comm, op, to, |request| {
            ffi::PMPI_Ialltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm, request)
        })
    }
}

/// `MPI_Iscatter`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Iscatter`; `to` as [`queue_or`]'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn iscatter_to(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(rcount as i64, rdt);
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        let op = blocks(
            How::Scatter,
            comm,
            sbuf,
            scount,
            sdt,
            rbuf,
            rcount,
            rdt,
            Some(root),
        );
        queue_or(comm, op, to, |request| {
            ffi::PMPI_Iscatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, request)
        })
    }
}

// The entry points: each call's request is new, written to its
// out-pointer.

/// `MPI_Ibarrier`.
///
/// # Safety
/// As `MPI_Ibarrier`.
pub unsafe fn ibarrier(comm: ffi::MPI_Comm, request: *mut ffi::MPI_Request) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe { ibarrier_to(comm, To::New(request)) }
}

/// `MPI_Ibcast`.
///
/// # Safety
/// As `MPI_Ibcast`.
pub unsafe fn ibcast(
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe { ibcast_to(buf, count, dt, root, comm, To::New(request)) }
}

/// `MPI_Ireduce`.
///
/// # Safety
/// As `MPI_Ireduce`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ireduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    root: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe { ireduce_to(sbuf, rbuf, count, dt, op, root, comm, To::New(request)) }
}

/// `MPI_Iallreduce`.
///
/// # Safety
/// As `MPI_Iallreduce`.
pub unsafe fn iallreduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe { iallreduce_to(sbuf, rbuf, count, dt, op, comm, To::New(request)) }
}

/// `MPI_Igather`.
///
/// # Safety
/// As `MPI_Igather`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn igather(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        igather_to(
            sbuf,
            scount,
            sdt,
            rbuf,
            rcount,
            rdt,
            root,
            comm,
            To::New(request),
        )
    }
}

/// `MPI_Iallgather`.
///
/// # Safety
/// As `MPI_Iallgather`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn iallgather(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe { iallgather_to(sbuf, scount, sdt, rbuf, rcount, rdt, comm, To::New(request)) }
}

/// `MPI_Ialltoall`.
///
/// # Safety
/// As `MPI_Ialltoall`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ialltoall(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe { ialltoall_to(sbuf, scount, sdt, rbuf, rcount, rdt, comm, To::New(request)) }
}

/// `MPI_Iscatter`.
///
/// # Safety
/// As `MPI_Iscatter`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn iscatter(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        iscatter_to(
            sbuf,
            scount,
            sdt,
            rbuf,
            rcount,
            rdt,
            root,
            comm,
            To::New(request),
        )
    }
}

/// The operation persistent collective `a` stands for, planned now, or
/// `None` for the real MPI (see `persist`).
///
/// # Safety
/// `a` holds the program's arguments of the initialisation.
#[cfg(heapmpi_mpi4)]
unsafe fn plan(a: &CollArgs) -> Option<(&'static Node, Kind)> {
    use super::persist::*;
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
#[cfg(heapmpi_mpi4)]
pub(super) unsafe fn would_queue(a: &CollArgs) -> bool {
    // SAFETY: per the contract.
    match unsafe { plan(a) } {
        Some((_, kind)) => {
            super::release(&kind);
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
#[cfg(heapmpi_mpi4)]
pub(super) unsafe fn start_persistent(a: CollArgs, slot: u32) -> c_int {
    use super::persist::*;
    let to = To::Slot(slot);
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
            SCAN => ifold_to(a.sbuf, a.rbuf, a.scount, a.sdt, a.op, c, Fold::Scan, to),
            EXSCAN => ifold_to(a.sbuf, a.rbuf, a.scount, a.sdt, a.op, c, Fold::Exscan, to),
            REDUCE_SCATTER_BLOCK => {
                ifold_to(a.sbuf, a.rbuf, a.scount, a.sdt, a.op, c, Fold::Block, to)
            }
            _ => ffi::MPI_ERR_INTERN as c_int,
        }
    }
}

/// `MPI_Iscan`.
///
/// # Safety
/// As `MPI_Iscan`.
pub unsafe fn iscan(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        ifold_to(
            sbuf,
            rbuf,
            count,
            dt,
            op,
            comm,
            Fold::Scan,
            To::New(request),
        )
    }
}

/// `MPI_Iexscan`.
///
/// # Safety
/// As `MPI_Iexscan`.
pub unsafe fn iexscan(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        ifold_to(
            sbuf,
            rbuf,
            count,
            dt,
            op,
            comm,
            Fold::Exscan,
            To::New(request),
        )
    }
}

/// `MPI_Ireduce_scatter_block`.
///
/// # Safety
/// As `MPI_Ireduce_scatter_block`.
pub unsafe fn ireduce_scatter_block(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        ifold_to(
            sbuf,
            rbuf,
            count,
            dt,
            op,
            comm,
            Fold::Block,
            To::New(request),
        )
    }
}
