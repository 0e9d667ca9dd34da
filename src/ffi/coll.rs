//! The MPI collective entry points heapmpi runs over the shared heap
//! (logic in [`crate::coll`]). Each body forwards its arguments unchanged.

use core::ffi::{c_int, c_void};

use mpi_sys::{MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};

use crate::coll;

c_exports! {
    /// `MPI_Barrier`.
    fn MPI_Barrier(comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::barrier(comm) }
    }
    /// `MPI_Bcast`.
    fn MPI_Bcast(buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::bcast(buf, count, dt, root, comm) }
    }
    /// `MPI_Reduce`.
    fn MPI_Reduce(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::reduce(sbuf, rbuf, count, dt, op, root, comm) }
    }
    /// `MPI_Allreduce`.
    fn MPI_Allreduce(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::allreduce(sbuf, rbuf, count, dt, op, comm) }
    }
    /// `MPI_Ibarrier`.
    fn MPI_Ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ibarrier(comm, request) }
    }
    /// `MPI_Ibcast`.
    fn MPI_Ibcast(buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ibcast(buf, count, dt, root, comm, request) }
    }
    /// `MPI_Iscan`.
    fn MPI_Iscan(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::iscan(sbuf, rbuf, count, dt, op, comm, request) }
    }
    /// `MPI_Iexscan`.
    fn MPI_Iexscan(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::iexscan(sbuf, rbuf, count, dt, op, comm, request) }
    }
    /// `MPI_Ireduce_scatter_block`.
    fn MPI_Ireduce_scatter_block(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ireduce_scatter_block(sbuf, rbuf, count, dt, op, comm, request) }
    }
    /// `MPI_Ireduce_scatter`.
    fn MPI_Ireduce_scatter(sbuf: *const c_void, rbuf: *mut c_void, counts: *const c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ireduce_scatter(sbuf, rbuf, counts, dt, op, comm, request) }
    }
    /// `MPI_Igatherv`.
    fn MPI_Igatherv(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::igatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm, request) }
    }
    /// `MPI_Iscatterv`.
    fn MPI_Iscatterv(sbuf: *const c_void, scounts: *const c_int, displs: *const c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::iscatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm, request) }
    }
    /// `MPI_Iallgatherv`.
    fn MPI_Iallgatherv(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::iallgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, request) }
    }
    /// `MPI_Ialltoallv`.
    fn MPI_Ialltoallv(sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ialltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, request) }
    }
    /// `MPI_Ineighbor_allgather`.
    fn MPI_Ineighbor_allgather(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ineighbor_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, request) }
    }
    /// `MPI_Ineighbor_allgatherv`.
    fn MPI_Ineighbor_allgatherv(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ineighbor_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, request) }
    }
    /// `MPI_Ineighbor_alltoall`.
    fn MPI_Ineighbor_alltoall(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ineighbor_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm, request) }
    }
    /// `MPI_Ineighbor_alltoallv`.
    fn MPI_Ineighbor_alltoallv(sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ineighbor_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, request) }
    }
    /// `MPI_Ineighbor_alltoallw`.
    fn MPI_Ineighbor_alltoallw(sbuf: *const c_void, scounts: *const c_int, sdispls: *const MPI_Aint, stypes: *const MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ineighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, request) }
    }
    /// `MPI_Ialltoallw`.
    fn MPI_Ialltoallw(sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stypes: *const MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, request) }
    }
    /// `MPI_Ireduce`.
    fn MPI_Ireduce(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ireduce(sbuf, rbuf, count, dt, op, root, comm, request) }
    }
    /// `MPI_Iallreduce`.
    fn MPI_Iallreduce(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::iallreduce(sbuf, rbuf, count, dt, op, comm, request) }
    }
    /// `MPI_Igather`.
    fn MPI_Igather(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::igather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, request) }
    }
    /// `MPI_Iallgather`.
    fn MPI_Iallgather(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::iallgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, request) }
    }
    /// `MPI_Ialltoall`.
    fn MPI_Ialltoall(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::ialltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm, request) }
    }
    /// `MPI_Iscatter`.
    fn MPI_Iscatter(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::iscatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, request) }
    }
    /// `MPI_Gather`.
    fn MPI_Gather(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm) }
    }
    /// `MPI_Scatter`.
    fn MPI_Scatter(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm) }
    }
    /// `MPI_Allgather`.
    fn MPI_Allgather(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm) }
    }
    /// `MPI_Alltoall`.
    fn MPI_Alltoall(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm) }
    }
    /// `MPI_Gatherv`.
    fn MPI_Gatherv(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm) }
    }
    /// `MPI_Scatterv`.
    fn MPI_Scatterv(sbuf: *const c_void, scounts: *const c_int, displs: *const c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm) }
    }
    /// `MPI_Allgatherv`.
    fn MPI_Allgatherv(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm) }
    }
    /// `MPI_Alltoallv`.
    fn MPI_Alltoallv(sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm) }
    }
    /// `MPI_Alltoallw`.
    fn MPI_Alltoallw(sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stypes: *const MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm) }
    }
    /// `MPI_Neighbor_allgather`.
    fn MPI_Neighbor_allgather(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::neighbor_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm) }
    }
    /// `MPI_Neighbor_allgatherv`.
    fn MPI_Neighbor_allgatherv(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::neighbor_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm) }
    }
    /// `MPI_Neighbor_alltoall`.
    fn MPI_Neighbor_alltoall(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::neighbor_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm) }
    }
    /// `MPI_Neighbor_alltoallv`.
    fn MPI_Neighbor_alltoallv(sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::neighbor_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm) }
    }
    /// `MPI_Neighbor_alltoallw`.
    fn MPI_Neighbor_alltoallw(sbuf: *const c_void, scounts: *const c_int, sdispls: *const MPI_Aint, stypes: *const MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm) }
    }
    /// `MPI_Reduce_scatter_block`.
    fn MPI_Reduce_scatter_block(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::reduce_scatter_block(sbuf, rbuf, count, dt, op, comm) }
    }
    /// `MPI_Reduce_scatter`.
    fn MPI_Reduce_scatter(sbuf: *const c_void, rbuf: *mut c_void, counts: *const c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::reduce_scatter(sbuf, rbuf, counts, dt, op, comm) }
    }
    /// `MPI_Scan`.
    fn MPI_Scan(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::scan(sbuf, rbuf, count, dt, op, comm) }
    }
    /// `MPI_Exscan`.
    fn MPI_Exscan(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::exscan(sbuf, rbuf, count, dt, op, comm) }
    }
}
