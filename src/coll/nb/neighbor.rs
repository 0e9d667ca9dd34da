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
use super::super::offer::VBuf;
use super::super::{in_place, info, profile_alltoallv, Buf, Peers};
use super::schedule::nb_node;
use super::vector::Held;
use super::{vector, Kind};
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

nb_entry! {
    "MPI_Ineighbor_allgather": ineighbor_allgather / ineighbor_allgather_to(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) on comm, data(scount, sdt);
    plan = uniform(Call::Gather, sbuf, scount, sdt, rbuf, rcount, rdt, comm);
    real = ffi::PMPI_Ineighbor_allgather;
    persistent "MPI_Neighbor_allgather_init": neighbor_allgather_init;
    init_args = blocks_args(NEIGHBOR_ALLGATHER, sbuf, scount, sdt, rbuf, rcount, rdt, 0, comm);
    init_real = ffi::PMPI_Neighbor_allgather_init;
}

nb_entry! {
    "MPI_Ineighbor_allgatherv": ineighbor_allgatherv / ineighbor_allgatherv_to(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        displs: *const c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) on comm, data(scount, sdt);
    op = ineighbor_allgatherv_op {
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
    real = ffi::PMPI_Ineighbor_allgatherv;
    persistent "MPI_Neighbor_allgatherv_init": neighbor_allgatherv_init with (request, real) {
        let a = blocks_args(NEIGHBOR_ALLGATHERV, sbuf, scount, sdt, rbuf, 0, rdt, -1, comm);
        let Some(lens) = degrees(comm) else {
            return to_real(real);
        };
        // MPI requires in-degree entries.
        let arrays = [NONE, NONE, all(rcounts), all(displs)];
        v_init(a, arrays, Some(lens), request, real)
    }
    init_real = ffi::PMPI_Neighbor_allgatherv_init;
}

nb_entry! {
    "MPI_Ineighbor_alltoall": ineighbor_alltoall / ineighbor_alltoall_to(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) on comm, data(scount, sdt);
    plan = uniform(Call::Alltoall, sbuf, scount, sdt, rbuf, rcount, rdt, comm);
    real = ffi::PMPI_Ineighbor_alltoall;
    persistent "MPI_Neighbor_alltoall_init": neighbor_alltoall_init;
    init_args = blocks_args(NEIGHBOR_ALLTOALL, sbuf, scount, sdt, rbuf, rcount, rdt, 0, comm);
    init_real = ffi::PMPI_Neighbor_alltoall_init;
}

nb_entry! {
    "MPI_Ineighbor_alltoallv": ineighbor_alltoallv / ineighbor_alltoallv_to(
        sbuf: *const c_void,
        scounts: *const c_int,
        sdispls: *const c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        rdispls: *const c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) on comm, after(profile_alltoallv(
        comm,
        Peers::Out,
        sbuf,
        scounts,
        (sdt, core::ptr::null()),
        rcounts,
        (rdt, core::ptr::null()),
    ));
    op = ineighbor_alltoallv_op {
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
    real = ffi::PMPI_Ineighbor_alltoallv;
    persistent "MPI_Neighbor_alltoallv_init": neighbor_alltoallv_init with (request, real) {
        let a = blocks_args(NEIGHBOR_ALLTOALLV, sbuf, 0, sdt, rbuf, 0, rdt, -1, comm);
        let Some(lens) = degrees(comm) else {
            return to_real(real);
        };
        // MPI requires out-degree (in-degree) entries.
        let arrays = [all(scounts), all(sdispls), all(rcounts), all(rdispls)];
        v_init(a, arrays, Some(lens), request, real)
    }
    init_real = ffi::PMPI_Neighbor_alltoallv_init;
}

nb_entry! {
    /// A count and a datatype per block, byte displacements; each derived
    /// receive datatype is held.
    "MPI_Ineighbor_alltoallw": ineighbor_alltoallw / ineighbor_alltoallw_to(
        sbuf: *const c_void,
        scounts: *const c_int,
        sdispls: *const ffi::MPI_Aint,
        stypes: *const ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        rdispls: *const ffi::MPI_Aint,
        rtypes: *const ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) on comm, after(profile_alltoallv(
        comm,
        Peers::Out,
        sbuf,
        scounts,
        (ffi::RSMPI_DATATYPE_NULL, stypes),
        rcounts,
        (ffi::RSMPI_DATATYPE_NULL, rtypes),
    ));
    op = ineighbor_alltoallw_op {
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
    real = ffi::PMPI_Ineighbor_alltoallw;
    persistent "MPI_Neighbor_alltoallw_init": neighbor_alltoallw_init with (request, real) {
        let Some([o, _, i, _]) = degrees(comm) else {
            return to_real(real);
        };
        // MPI requires out-degree (in-degree) entries in each array.
        let displs = |l: [usize; 2]| {
            (
                [Vec::new(), Vec::new()],
                [copy(sdispls, l[0]), copy(rdispls, l[1])],
            )
        };
        let (counts, types) = ([scounts, rcounts], [stypes, rtypes]);
        w_init(NEIGHBOR_ALLTOALLW, sbuf, rbuf, comm, counts, displs, types, [o, i], request, real)
    }
    init_real = ffi::PMPI_Neighbor_alltoallw_init;
}
