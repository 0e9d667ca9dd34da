//! The nonblocking neighbourhood collectives: `MPI_Ineighbor_allgather`,
//! `MPI_Ineighbor_allgatherv`, `MPI_Ineighbor_alltoall`,
//! `MPI_Ineighbor_alltoallv` and `MPI_Ineighbor_alltoallw` on a
//! node-local communicator with a
//! topology heapmpi has read (MPI-4.0 §8.7): a stencil code's halo
//! exchange overlapped with its interior computation.
//!
//! They run as the nonblocking `v` collectives do ([`super::vector`]):
//! every member publishes a table with one entry per send block (per
//! out-neighbour; one block for every neighbour in the all-gathers), and
//! each receive block is read once from the entry its source offered for
//! it, paired as the served MPI pairs its nonblocking forms
//! ([`crate::comm::topo::stock_pairing_nonblocking`]: Open MPI 4.1 pairs
//! them otherwise than its blocking forms; where one rank is a neighbour
//! more than once and heapmpi does not know the pairing, the call goes to
//! the real MPI, alike on every member).
//!
//! The topology must be known without a collective at the call: it is
//! gathered when the communicator is created (`comm::created_topo`) or by
//! its first blocking neighbourhood collective; a communicator whose
//! topology heapmpi has not read leaves these calls to the real MPI (the
//! same on every member: they create it, and call its collectives, in the
//! same order). Derived receive datatypes are held (duplicated) until the
//! call completes, one duplicate per datatype: `MPI_Ineighbor_alltoallw`'s
//! blocks each have their own.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::super::neighbor::Call;
use super::super::vector::VBuf;
use super::super::{in_place, info, Buf};
use super::calls::queue_or;
use super::vector::Held;
use super::{nb_node, vector, Kind, To};
use crate::comm::node::Node;

/// The operation of `call` with the buffers described, or `None` for the
/// real MPI.
///
/// # Safety
/// The caller's buffers; `send` has one piece per out-neighbour (one for
/// the all-gathers), `recv` one per in-neighbour.
unsafe fn plan(
    comm: ffi::MPI_Comm,
    call: Call,
    send: impl FnOnce(usize) -> Option<VBuf>,
    recv: impl FnOnce(usize) -> Option<VBuf>,
) -> Option<(&'static Node, Kind)> {
    let node = nb_node(comm)?;
    let nb = info(comm)?.topo.get()?.as_ref()?;
    let pairing = call.pairing_nonblocking(nb)?;
    let (send, recv) = (send(nb.blocks)?, recv(nb.indegree())?);
    let gather = call == Call::Gather;
    let blocks: Vec<Option<Buf>> = (0..nb.blocks)
        .map(|k| Some(send.piece(if gather { 0 } else { k })))
        .collect();
    let mut held = Held::default();
    let mut into = Vec::with_capacity(nb.indegree());
    for (k, f) in nb.from(pairing).iter().enumerate() {
        let Some(f) = f else { continue };
        into.push((f.src as usize, f.block as usize, held.hold(recv.piece(k))?));
    }
    // SAFETY: per the contract.
    Some((node, unsafe {
        vector::vop(node, &blocks, false, into, held.take())
    }))
}

/// The operation of `MPI_Ineighbor_allgather` (`Call::Gather`) or
/// `MPI_Ineighbor_alltoall` (`Call::Alltoall`), or `None` for the real
/// MPI.
///
/// # Safety
/// The caller's buffers, laid out as MPI says for `call`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn uniform(
    call: Call,
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> Option<(&'static Node, Kind)> {
    if sbuf == in_place() {
        return None;
    }
    let gather = call == Call::Gather;
    // SAFETY: per the contract.
    unsafe {
        plan(
            comm,
            call,
            |outdeg| VBuf::uniform(sbuf, scount, sdt, if gather { 1 } else { outdeg }),
            |indeg| VBuf::uniform(rbuf, rcount, rdt, indeg),
        )
    }
}

/// `MPI_Ineighbor_allgather`, its request new or a persistent one being
/// started (`to`, `MPI_Neighbor_allgather_init`).
///
/// # Safety
/// As `MPI_Ineighbor_allgather`; `to` as `queue_or`'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ineighbor_allgather_to(
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
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        let op = uniform(Call::Gather, sbuf, scount, sdt, rbuf, rcount, rdt, comm);
        queue_or(comm, op, to, |rq| {
            ffi::PMPI_Ineighbor_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, rq)
        })
    }
}

/// `MPI_Ineighbor_allgather`.
///
/// # Safety
/// As `MPI_Ineighbor_allgather`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ineighbor_allgather(
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
    unsafe { ineighbor_allgather_to(sbuf, scount, sdt, rbuf, rcount, rdt, comm, To::New(request)) }
}

/// The operation of `MPI_Ineighbor_allgatherv`, or `None` for the real MPI.
///
/// # Safety
/// As `MPI_Ineighbor_allgatherv`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ineighbor_allgatherv_op(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> Option<(&'static Node, Kind)> {
    if sbuf == in_place() {
        return None;
    }
    // SAFETY: as `ineighbor_allgather`; MPI requires in-degree counts and
    // displacements (none read with in-degree 0).
    unsafe {
        plan(
            comm,
            Call::Gather,
            |_| VBuf::uniform(sbuf, scount, sdt, 1),
            |indeg| {
                if indeg == 0 {
                    VBuf::uniform(rbuf, 0, rdt, 0)
                } else {
                    VBuf::new(rbuf, rcounts, displs, rdt, indeg)
                }
            },
        )
    }
}

/// `MPI_Ineighbor_allgatherv`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Ineighbor_allgatherv`; `to` as `queue_or`'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ineighbor_allgatherv_to(
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
        let op = ineighbor_allgatherv_op(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm);
        queue_or(comm, op, to, |rq| {
            ffi::PMPI_Ineighbor_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, rq)
        })
    }
}

/// `MPI_Ineighbor_allgatherv`.
///
/// # Safety
/// As `MPI_Ineighbor_allgatherv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ineighbor_allgatherv(
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
        ineighbor_allgatherv_to(
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

/// `MPI_Ineighbor_alltoall`, its request new or a persistent one being
/// started (`to`, `MPI_Neighbor_alltoall_init`).
///
/// # Safety
/// As `MPI_Ineighbor_alltoall`; `to` as `queue_or`'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ineighbor_alltoall_to(
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
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        let op = uniform(Call::Alltoall, sbuf, scount, sdt, rbuf, rcount, rdt, comm);
        queue_or(comm, op, to, |rq| {
            ffi::PMPI_Ineighbor_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm, rq)
        })
    }
}

/// `MPI_Ineighbor_alltoall`.
///
/// # Safety
/// As `MPI_Ineighbor_alltoall`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ineighbor_alltoall(
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
    unsafe { ineighbor_alltoall_to(sbuf, scount, sdt, rbuf, rcount, rdt, comm, To::New(request)) }
}

/// The operation of `MPI_Ineighbor_alltoallv`, or `None` for the real MPI.
///
/// # Safety
/// As `MPI_Ineighbor_alltoallv`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ineighbor_alltoallv_op(
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
    if sbuf == in_place() {
        return None;
    }
    // SAFETY: as `ineighbor_allgather`; MPI requires out-degree (in-degree)
    // counts and displacements, none read with degree 0.
    unsafe {
        plan(
            comm,
            Call::Alltoallv,
            |outdeg| {
                if outdeg == 0 {
                    VBuf::uniform(sbuf, 0, sdt, 0)
                } else {
                    VBuf::new(sbuf, scounts, sdispls, sdt, outdeg)
                }
            },
            |indeg| {
                if indeg == 0 {
                    VBuf::uniform(rbuf, 0, rdt, 0)
                } else {
                    VBuf::new(rbuf, rcounts, rdispls, rdt, indeg)
                }
            },
        )
    }
}

/// `MPI_Ineighbor_alltoallv`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Ineighbor_alltoallv`; `to` as `queue_or`'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ineighbor_alltoallv_to(
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
        let op = ineighbor_alltoallv_op(
            sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm,
        );
        queue_or(comm, op, to, |rq| {
            ffi::PMPI_Ineighbor_alltoallv(
                sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, rq,
            )
        })
    }
}

/// `MPI_Ineighbor_alltoallv`.
///
/// # Safety
/// As `MPI_Ineighbor_alltoallv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ineighbor_alltoallv(
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
        ineighbor_alltoallv_to(
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

/// The operation of `MPI_Ineighbor_alltoallw`, or `None` for the real
/// MPI.
///
/// # Safety
/// As `MPI_Ineighbor_alltoallw`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ineighbor_alltoallw_op(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const ffi::MPI_Aint,
    stypes: *const ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const ffi::MPI_Aint,
    rtypes: *const ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> Option<(&'static Node, Kind)> {
    if sbuf == in_place() {
        return None;
    }
    // SAFETY: as `ineighbor_allgather`; MPI requires out-degree (in-degree)
    // entries in each array, none read with degree 0.
    unsafe {
        plan(
            comm,
            Call::Alltoallv,
            |outdeg| VBuf::new_w(sbuf, scounts, sdispls, stypes, outdeg),
            |indeg| VBuf::new_w(rbuf, rcounts, rdispls, rtypes, indeg),
        )
    }
}

/// `MPI_Ineighbor_alltoallw`, its request new or a persistent one being
/// started (`to`).
///
/// # Safety
/// As `MPI_Ineighbor_alltoallw`; `to` as `queue_or`'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ineighbor_alltoallw_to(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const ffi::MPI_Aint,
    stypes: *const ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const ffi::MPI_Aint,
    rtypes: *const ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        let op = ineighbor_alltoallw_op(
            sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
        );
        queue_or(comm, op, to, |rq| {
            ffi::PMPI_Ineighbor_alltoallw(
                sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, rq,
            )
        })
    }
}

/// `MPI_Ineighbor_alltoallw`: a count and a datatype per block, byte
/// displacements; each derived receive datatype is held.
///
/// # Safety
/// As `MPI_Ineighbor_alltoallw`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ineighbor_alltoallw(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const ffi::MPI_Aint,
    stypes: *const ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const ffi::MPI_Aint,
    rtypes: *const ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        ineighbor_alltoallw_to(
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
