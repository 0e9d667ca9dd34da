//! The MPI-4.0 entry points without large counts heapmpi serves
//! (`MPI_Isendrecv`, `MPI_Isendrecv_replace` and the persistent
//! collectives of `linker-scripts/mpi4.list`; logic in
//! [`crate::p2p::api`] and [`crate::coll`]), compiled for an MPI whose
//! `<mpi.h>` declares them (`cfg(heapmpi_mpi4_base)`: MPICH 4 and 5, Open
//! MPI 5, whose header has these but not the `_c` routines). Each body
//! forwards its arguments unchanged.

use core::ffi::{c_int, c_void};

use mpi_sys::{MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Info, MPI_Op, MPI_Request};

use crate::coll;
use crate::p2p::api;

c_exports! {
    /// `MPI_Isendrecv`.
    fn MPI_Isendrecv(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, dest: c_int, stag: c_int, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, src: c_int, rtag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::isendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, req) }
    }
    /// `MPI_Isendrecv_replace`.
    fn MPI_Isendrecv_replace(buf: *mut c_void, count: c_int, dt: MPI_Datatype, dest: c_int, stag: c_int, src: c_int, rtag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::isendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, req) }
    }
    /// `MPI_Barrier_init`.
    fn MPI_Barrier_init(comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::barrier_init(comm, info, req) }
    }
    /// `MPI_Bcast_init`.
    fn MPI_Bcast_init(buf: *mut c_void, count: c_int, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::bcast_init(buf, count, dt, root, comm, info, req) }
    }
    /// `MPI_Reduce_init`.
    fn MPI_Reduce_init(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::reduce_init(sbuf, rbuf, count, dt, op, root, comm, info, req) }
    }
    /// `MPI_Allreduce_init`.
    fn MPI_Allreduce_init(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::allreduce_init(sbuf, rbuf, count, dt, op, comm, info, req) }
    }
    /// `MPI_Gather_init`.
    fn MPI_Gather_init(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::gather_init(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, info, req) }
    }
    /// `MPI_Allgather_init`.
    fn MPI_Allgather_init(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::allgather_init(sbuf, scount, sdt, rbuf, rcount, rdt, comm, info, req) }
    }
    /// `MPI_Gatherv_init`.
    fn MPI_Gatherv_init(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::gatherv_init(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm, info, req) }
    }
    /// `MPI_Scatterv_init`.
    fn MPI_Scatterv_init(sbuf: *const c_void, scounts: *const c_int, displs: *const c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::scatterv_init(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm, info, req) }
    }
    /// `MPI_Allgatherv_init`.
    fn MPI_Allgatherv_init(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::allgatherv_init(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, info, req) }
    }
    /// `MPI_Alltoallv_init`.
    fn MPI_Alltoallv_init(sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::alltoallv_init(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, info, req) }
    }
    /// `MPI_Reduce_scatter_init`.
    fn MPI_Reduce_scatter_init(sbuf: *const c_void, rbuf: *mut c_void, counts: *const c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::reduce_scatter_init(sbuf, rbuf, counts, dt, op, comm, info, req) }
    }
    /// `MPI_Neighbor_allgatherv_init`.
    fn MPI_Neighbor_allgatherv_init(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::neighbor_allgatherv_init(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, info, req) }
    }
    /// `MPI_Neighbor_alltoallv_init`.
    fn MPI_Neighbor_alltoallv_init(sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rdt: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::neighbor_alltoallv_init(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, info, req) }
    }
    /// `MPI_Alltoallw_init`.
    fn MPI_Alltoallw_init(sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stypes: *const MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::alltoallw_init(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, info, req) }
    }
    /// `MPI_Neighbor_alltoallw_init`.
    fn MPI_Neighbor_alltoallw_init(sbuf: *const c_void, scounts: *const c_int, sdispls: *const MPI_Aint, stypes: *const MPI_Datatype, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const MPI_Aint, rtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::neighbor_alltoallw_init(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, info, req) }
    }
    /// `MPI_Neighbor_allgather_init`.
    fn MPI_Neighbor_allgather_init(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::neighbor_allgather_init(sbuf, scount, sdt, rbuf, rcount, rdt, comm, info, req) }
    }
    /// `MPI_Neighbor_alltoall_init`.
    fn MPI_Neighbor_alltoall_init(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::neighbor_alltoall_init(sbuf, scount, sdt, rbuf, rcount, rdt, comm, info, req) }
    }
    /// `MPI_Alltoall_init`.
    fn MPI_Alltoall_init(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::alltoall_init(sbuf, scount, sdt, rbuf, rcount, rdt, comm, info, req) }
    }
    /// `MPI_Scatter_init`.
    fn MPI_Scatter_init(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::scatter_init(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, info, req) }
    }
    /// `MPI_Scan_init`.
    fn MPI_Scan_init(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::scan_init(sbuf, rbuf, count, dt, op, comm, info, req) }
    }
    /// `MPI_Exscan_init`.
    fn MPI_Exscan_init(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::exscan_init(sbuf, rbuf, count, dt, op, comm, info, req) }
    }
    /// `MPI_Reduce_scatter_block_init`.
    fn MPI_Reduce_scatter_block_init(sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { coll::reduce_scatter_block_init(sbuf, rbuf, count, dt, op, comm, info, req) }
    }
}
