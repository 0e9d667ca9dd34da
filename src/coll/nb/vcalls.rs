//! The entry points of the nonblocking "v" and "w" collectives
//! (`MPI_Igatherv`, `MPI_Iscatterv`, `MPI_Iallgatherv`, `MPI_Ialltoallv`,
//! `MPI_Ialltoallw`): each checks its arguments, plans the operation of
//! [`super::vector`] (`_op`, also what a persistent form's initialisation
//! asks) and queues it under a new or a persistent request (`_to`), or
//! makes the real MPI's call.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::super::vector::VBuf;
use super::super::{in_place, Buf};
use super::calls::queue_or;
use super::vector::{plan, vop, Held, VHow};
use super::{nb_node, Kind, To};
use crate::comm::node::Node;

/// The operation of `MPI_Igatherv`, or `None` for the real MPI.
///
/// # Safety
/// As `MPI_Igatherv`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn igatherv_op(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> Option<(&'static Node, Kind)> {
    let node = nb_node(comm)?;
    // SAFETY: the caller's arguments.
    unsafe {
        let k = plan(
            VHow::Gatherv,
            node,
            sbuf,
            None,
            scount,
            core::ptr::null(),
            sdt,
            rbuf,
            Some(rcounts),
            0,
            displs,
            rdt,
            Some(root),
        )?;
        Some((node, k))
    }
}

/// `MPI_Igatherv`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Igatherv`; `to` as `queue_or`'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn igatherv_to(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        let op = igatherv_op(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm);
        queue_or(comm, op, to, |rq| {
            ffi::PMPI_Igatherv(
                sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm, rq,
            )
        })
    }
}

/// `MPI_Igatherv`.
///
/// # Safety
/// As `MPI_Igatherv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn igatherv(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        igatherv_to(
            sbuf,
            scount,
            sdt,
            rbuf,
            rcounts,
            displs,
            rdt,
            root,
            comm,
            To::New(request),
        )
    }
}

/// The operation of `MPI_Iscatterv`, or `None` for the real MPI.
///
/// # Safety
/// As `MPI_Iscatterv`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn iscatterv_op(
    sbuf: *const c_void,
    scounts: *const c_int,
    displs: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> Option<(&'static Node, Kind)> {
    let node = nb_node(comm)?;
    // SAFETY: the caller's arguments.
    unsafe {
        let k = plan(
            VHow::Scatterv,
            node,
            sbuf,
            Some(scounts),
            0,
            displs,
            sdt,
            rbuf,
            None,
            rcount,
            core::ptr::null(),
            rdt,
            Some(root),
        )?;
        Some((node, k))
    }
}

/// `MPI_Iscatterv`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Iscatterv`; `to` as `queue_or`'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn iscatterv_to(
    sbuf: *const c_void,
    scounts: *const c_int,
    displs: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(rcount as i64, rdt);
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        let op = iscatterv_op(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm);
        queue_or(comm, op, to, |rq| {
            ffi::PMPI_Iscatterv(
                sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm, rq,
            )
        })
    }
}

/// `MPI_Iscatterv`.
///
/// # Safety
/// As `MPI_Iscatterv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn iscatterv(
    sbuf: *const c_void,
    scounts: *const c_int,
    displs: *const c_int,
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
        iscatterv_to(
            sbuf,
            scounts,
            displs,
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

/// The operation of `MPI_Iallgatherv`, or `None` for the real MPI.
///
/// # Safety
/// As `MPI_Iallgatherv`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn iallgatherv_op(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> Option<(&'static Node, Kind)> {
    let node = nb_node(comm)?;
    // SAFETY: the caller's arguments.
    unsafe {
        let k = plan(
            VHow::Allgatherv,
            node,
            sbuf,
            None,
            scount,
            core::ptr::null(),
            sdt,
            rbuf,
            Some(rcounts),
            0,
            displs,
            rdt,
            None,
        )?;
        Some((node, k))
    }
}

/// `MPI_Iallgatherv`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Iallgatherv`; `to` as `queue_or`'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn iallgatherv_to(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        let op = iallgatherv_op(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm);
        queue_or(comm, op, to, |rq| {
            ffi::PMPI_Iallgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, rq)
        })
    }
}

/// `MPI_Iallgatherv`.
///
/// # Safety
/// As `MPI_Iallgatherv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn iallgatherv(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        iallgatherv_to(
            sbuf,
            scount,
            sdt,
            rbuf,
            rcounts,
            displs,
            rdt,
            comm,
            To::New(request),
        )
    }
}

/// The operation of `MPI_Ialltoallv`, or `None` for the real MPI.
///
/// # Safety
/// As `MPI_Ialltoallv`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ialltoallv_op(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> Option<(&'static Node, Kind)> {
    let node = nb_node(comm)?;
    // SAFETY: the caller's arguments.
    unsafe {
        let k = plan(
            VHow::Alltoallv,
            node,
            sbuf,
            Some(scounts),
            0,
            sdispls,
            sdt,
            rbuf,
            Some(rcounts),
            0,
            rdispls,
            rdt,
            None,
        )?;
        Some((node, k))
    }
}

/// `MPI_Ialltoallv`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Ialltoallv`; `to` as `queue_or`'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ialltoallv_to(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        let op = ialltoallv_op(
            sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm,
        );
        queue_or(comm, op, to, |rq| {
            ffi::PMPI_Ialltoallv(
                sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, rq,
            )
        })
    }
}

/// `MPI_Ialltoallv`.
///
/// # Safety
/// As `MPI_Ialltoallv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ialltoallv(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        ialltoallv_to(
            sbuf,
            scounts,
            sdispls,
            sdt,
            rbuf,
            rcounts,
            rdispls,
            rdt,
            comm,
            To::New(request),
        )
    }
}

/// The operation of `MPI_Ialltoallw` (each derived receive datatype held),
/// or `None` for the real MPI.
///
/// # Safety
/// As `MPI_Ialltoallw`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ialltoallw_op(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    stypes: *const ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rtypes: *const ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> Option<(&'static Node, Kind)> {
    let node = nb_node(comm)?;
    let (me, n) = (node.me, node.n);
    // SAFETY: the caller's arguments (MPI requires n entries in each array,
    // the send ones unless in place).
    unsafe {
        let recv = VBuf::new_w_int(rbuf, rcounts, rdispls, rtypes, n)?;
        let inplace = sbuf == in_place();
        let send = if inplace {
            None
        } else {
            Some(VBuf::new_w_int(sbuf, scounts, sdispls, stypes, n)?)
        };
        // In place, the blocks we send are where we receive, and we
        // overwrite them while the others read (staged).
        let src = send.as_ref().unwrap_or(&recv);
        let blocks: Vec<Option<Buf>> = (0..n).map(|m| Some(src.piece(m))).collect();
        let mut held = Held::default();
        let mut into = Vec::with_capacity(n);
        for m in 0..n {
            into.push((m, me, held.hold(recv.piece(m))?));
        }
        Some((node, vop(node, &blocks, inplace, into, held.take())))
    }
}

/// `MPI_Ialltoallw`, its request new or a persistent one being started
/// (`to`).
///
/// # Safety
/// As `MPI_Ialltoallw`; `to` as `queue_or`'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ialltoallw_to(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    stypes: *const ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rtypes: *const ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        let op = ialltoallw_op(
            sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
        );
        queue_or(comm, op, to, |rq| {
            ffi::PMPI_Ialltoallw(
                sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, rq,
            )
        })
    }
}

/// `MPI_Ialltoallw`: a count and a datatype per block, byte
/// displacements; each derived receive datatype is held.
///
/// # Safety
/// As `MPI_Ialltoallw`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ialltoallw(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    stypes: *const ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rtypes: *const ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        ialltoallw_to(
            sbuf,
            scounts,
            sdispls,
            stypes,
            rbuf,
            rcounts,
            rdispls,
            rtypes,
            comm,
            To::New(request),
        )
    }
}
