//! The neighbourhood collectives: `MPI_Neighbor_allgather`,
//! `MPI_Neighbor_allgatherv`, `MPI_Neighbor_alltoall`,
//! `MPI_Neighbor_alltoallv` and `MPI_Neighbor_alltoallw` on a node-local communicator with a Cartesian,
//! graph or distributed-graph topology (MPI-4.0 §8.6): the halo exchange of
//! stencil codes.
//!
//! Stock MPIs run them as point-to-point messages to and from every
//! neighbour (Open MPI's `coll/basic`, MPICH's `MPIR_Neighbor_*_allcomm_nb`:
//! an `Irecv` per source, an `Isend` per destination, then `Waitall`).
//! heapmpi runs them as its `Alltoallv` does (`vector.rs`): every member
//! offers its send buffer, one piece per destination block (in place when
//! it lies in the heap, else packed into a staging buffer), with a table of
//! (offset, length) pairs; after one step every member copies each of its
//! receive blocks once, straight from the piece its source offered for it
//! ([`crate::comm::topo`] says which, per call, as the MPI served does it:
//! where one rank is a neighbour more than once the MPIs and their
//! versions disagree, and where heapmpi does not know the MPI's rule the
//! call goes to the real MPI),
//! and waits until the others are done
//! with its own buffer. One copy per block and one node-wide step instead
//! of two messages per neighbour.
//!
//! Which calls go to the real MPI, decided alike on every member: a
//! communicator that spans nodes, one without a topology heapmpi can read
//! (or whose graph does not pair up), `MPI_IN_PLACE` (erroneous here),
//! negative counts, and a member that could not stage its buffer (then all
//! of them, half-way, as in `vector.rs`). `MPI_Neighbor_alltoallw` runs the
//! same way, each block with its own datatype. The nonblocking forms but
//! `MPI_Ineighbor_alltoallw` run over the nonblocking collectives' flags
//! (`nb/neighbor.rs`); the persistent forms are the real MPI's; they never
//! match one of these, so mixing them is safe.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::gather::any_failed;
use super::offer::{entry_in, offer, VBuf};
use super::{flat, gave_up, in_place, info, profile_alltoallv, ran, to_real, Peers};
use crate::comm::node::Node;
use crate::comm::topo::{self, Exchange, Neighbors, Pairing};

/// The node state and this rank's neighbourhood, or `None` for the real
/// MPI. Collective the first time on a communicator (gathers the
/// topology).
fn setup(comm: ffi::MPI_Comm) -> Option<(&'static Node, &'static Neighbors)> {
    let node = flat(comm)?;
    let info = info(comm)?;
    let nb = info
        .topo
        .get_or_init(|| topo::gather(comm, info.rank, info.size))
        .as_ref()?;
    Some((node, nb))
}

/// What each call moves, and how its blocks pair up in the MPI heapmpi
/// serves (see [`crate::comm::topo`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Call {
    /// One send block for every neighbour (`Neighbor_allgather(v)`).
    Gather,
    /// `Neighbor_alltoall`.
    Alltoall,
    /// `Neighbor_alltoallv` and `Neighbor_alltoallw`.
    Alltoallv,
}

impl Call {
    /// How this call's blocks pair up on `nb` in the MPI served, or `None`
    /// (the real MPI's call) where that is not known. The same answer on
    /// every rank: the library, the topology and its ambiguity are.
    pub(super) fn pairing(self, nb: &Neighbors) -> Option<Pairing> {
        // One block, or each pair of ranks meeting once: every pairing
        // names the same block.
        if self == Call::Gather || !nb.ambiguous {
            return Some(Pairing::InOrder);
        }
        let call = if self == Call::Alltoall {
            Exchange::Alltoall
        } else {
            Exchange::Alltoallv
        };
        topo::stock_pairing(crate::version::library(), nb.kind, call)
    }

    /// [`Call::pairing`] for the nonblocking form of the call.
    pub(super) fn pairing_nonblocking(self, nb: &Neighbors) -> Option<Pairing> {
        if self == Call::Gather || !nb.ambiguous {
            return Some(Pairing::InOrder);
        }
        let call = if self == Call::Alltoall {
            Exchange::Alltoall
        } else {
            Exchange::Alltoallv
        };
        topo::stock_pairing_nonblocking(crate::version::library(), nb.kind, call)
    }
}

/// Moves every receive block from the piece its source offered. With
/// `Call::Gather` each member offers one piece (its whole send buffer) for
/// every neighbour. Returns false when a member could not stage its
/// buffer: every member then makes the real call.
///
/// # Safety
/// `send` and `recv` describe the caller's buffers, with as many pieces as
/// the neighbourhood has send and receive blocks (one send piece for
/// `Call::Gather`).
unsafe fn exchange(
    node: &Node,
    nb: &Neighbors,
    send: &VBuf,
    recv: &VBuf,
    call: Call,
    pairing: Pairing,
) -> bool {
    let s = node.begin(1);
    // SAFETY: the caller's send buffer.
    let off = unsafe { offer(node, s, send, true, false) };
    node.publish(s, off.addr, off.len, off.table);
    node.wait_all(s);
    if any_failed(node, s) {
        node.finish(s);
        gave_up();
        return false;
    }
    let gather = call == Call::Gather;
    for (k, f) in nb.from(pairing).iter().enumerate() {
        let Some(f) = f else { continue };
        let (j, pieces) = if gather {
            (0, 1)
        } else {
            (f.block as usize, f.src_blocks as usize)
        };
        let (p, len) = entry_in(node, f.src as usize, s, j, pieces);
        // SAFETY: member `f.src` offers that piece until we are done.
        unsafe { recv.piece(k).unpack_from(p, len) };
    }
    node.finish(s);
    if !off.inline {
        node.wait_done(s);
    }
    drop(off);
    ran();
    true
}

/// Runs `call` over the heap with the buffers described, or makes the
/// real MPI's call (`real`) when one is not heapmpi's to take, when the
/// MPI's pairing is not known, or when a member could not stage.
///
/// # Safety
/// As [`exchange`].
unsafe fn run(
    node: &Node,
    nb: &Neighbors,
    bufs: (Option<VBuf>, Option<VBuf>),
    call: Call,
    real: impl Fn() -> c_int,
) -> c_int {
    let (Some(send), Some(recv)) = bufs else {
        return real();
    };
    let Some(pairing) = call.pairing(nb) else {
        return real();
    };
    // SAFETY: per the contract.
    if unsafe { exchange(node, nb, &send, &recv, call, pairing) } {
        0
    } else {
        real()
    }
}

/// `MPI_Neighbor_allgather`.
///
/// # Safety
/// As `MPI_Neighbor_allgather`.
pub unsafe fn neighbor_allgather(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Neighbor_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm)
        })
    };
    let ok = sbuf != in_place() && scount >= 0 && rcount >= 0;
    let Some((node, nb)) = ok.then(|| setup(comm)).flatten() else {
        return real();
    };
    let bufs = (
        VBuf::uniform(sbuf, scount, sdt, 1),
        VBuf::uniform(rbuf, rcount, rdt, nb.indegree()),
    );
    // SAFETY: the caller's buffers, described above.
    unsafe { run(node, nb, bufs, Call::Gather, real) }
}

/// `MPI_Neighbor_allgatherv`.
///
/// # Safety
/// As `MPI_Neighbor_allgatherv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn neighbor_allgatherv(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Neighbor_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm)
        })
    };
    let ok = sbuf != in_place() && scount >= 0;
    let Some((node, nb)) = ok.then(|| setup(comm)).flatten() else {
        return real();
    };
    let indeg = nb.indegree();
    let bufs = (
        VBuf::uniform(sbuf, scount, sdt, 1),
        if indeg == 0 {
            VBuf::uniform(rbuf, 0, rdt, 0)
        } else {
            // SAFETY: MPI requires in-degree counts and displacements.
            unsafe { VBuf::new(rbuf, rcounts, displs, rdt, indeg) }
        },
    );
    // SAFETY: the caller's buffers, described above.
    unsafe { run(node, nb, bufs, Call::Gather, real) }
}

/// `MPI_Neighbor_alltoall`.
///
/// # Safety
/// As `MPI_Neighbor_alltoall`.
pub unsafe fn neighbor_alltoall(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Neighbor_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm)
        })
    };
    let ok = sbuf != in_place() && scount >= 0 && rcount >= 0;
    let Some((node, nb)) = ok.then(|| setup(comm)).flatten() else {
        return real();
    };
    let bufs = (
        VBuf::uniform(sbuf, scount, sdt, nb.blocks),
        VBuf::uniform(rbuf, rcount, rdt, nb.indegree()),
    );
    // SAFETY: the caller's buffers, described above.
    unsafe { run(node, nb, bufs, Call::Alltoall, real) }
}

/// `MPI_Neighbor_alltoallv`.
///
/// # Safety
/// As `MPI_Neighbor_alltoallv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn neighbor_alltoallv(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Neighbor_alltoallv(
                sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm,
            )
        })
    };
    // The call, heapmpi's or the real one; then its bytes for the profile.
    let rc = (|| {
        let Some((node, nb)) = (sbuf != in_place()).then(|| setup(comm)).flatten() else {
            return real();
        };
        let (outdeg, indeg) = (nb.blocks, nb.indegree());
        // SAFETY: MPI requires out-degree (in-degree) counts and
        // displacements; with degree 0 the arrays may be anything.
        let bufs = unsafe {
            (
                if outdeg == 0 {
                    VBuf::uniform(sbuf, 0, sdt, 0)
                } else {
                    VBuf::new(sbuf, scounts, sdispls, sdt, outdeg)
                },
                if indeg == 0 {
                    VBuf::uniform(rbuf, 0, rdt, 0)
                } else {
                    VBuf::new(rbuf, rcounts, rdispls, rdt, indeg)
                },
            )
        };
        // SAFETY: the caller's buffers, described above.
        unsafe { run(node, nb, bufs, Call::Alltoallv, real) }
    })();
    if rc == 0 {
        let null = core::ptr::null();
        // SAFETY: the arrays of the call, which succeeded.
        unsafe {
            profile_alltoallv(
                comm,
                Peers::Out,
                sbuf,
                scounts,
                (sdt, null),
                rcounts,
                (rdt, null),
            )
        };
    }
    rc
}

/// `MPI_Neighbor_alltoallw`: a count and a datatype per block, byte
/// displacements.
///
/// # Safety
/// As `MPI_Neighbor_alltoallw`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn neighbor_alltoallw(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const ffi::MPI_Aint,
    stypes: *const ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const ffi::MPI_Aint,
    rtypes: *const ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Neighbor_alltoallw(
                sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
            )
        })
    };
    // The call, heapmpi's or the real one; then its bytes for the profile.
    let rc = (|| {
        let Some((node, nb)) = (sbuf != in_place()).then(|| setup(comm)).flatten() else {
            return real();
        };
        // SAFETY: MPI requires out-degree (in-degree) entries in each array.
        let bufs = unsafe {
            (
                VBuf::new_w(sbuf, scounts, sdispls, stypes, nb.blocks),
                VBuf::new_w(rbuf, rcounts, rdispls, rtypes, nb.indegree()),
            )
        };
        // SAFETY: the caller's buffers, described above.
        unsafe { run(node, nb, bufs, Call::Alltoallv, real) }
    })();
    if rc == 0 {
        // SAFETY: the arrays of the call, which succeeded; reading an MPI
        // constant.
        unsafe {
            let none = ffi::RSMPI_DATATYPE_NULL;
            profile_alltoallv(
                comm,
                Peers::Out,
                sbuf,
                scounts,
                (none, stypes),
                rcounts,
                (none, rtypes),
            )
        };
    }
    rc
}
