//! The Fortran bindings of the collectives heapmpi runs over the shared
//! heap. Open MPI's own bindings (`mpi_bcast_`, `ompi_bcast_f`, which its
//! `use mpi_f08` procedures call) call `PMPI_*`, so without these a
//! Fortran program's collectives never reached heapmpi under Open MPI.
//! MPICH's `mpif.h` bindings call the C `MPI_*` (forwarded to, as in
//! [`super::p2p`]); of its `use mpi_f08` collectives only `MPI_Barrier`,
//! which has no buffer, calls `PMPI_*` (`mpi_barrier_f08_`, exported for
//! MPICH by `src/ffi/fortran.rs`).
//!
//! Each binding converts as Open MPI's does (`ompi/mpi/fortran/mpif-h`):
//! handles with `PMPI_*_f2c`; every buffer from `MPI_BOTTOM`, and the one
//! buffer that may be `MPI_IN_PLACE` from it too (the send buffer; the
//! receive buffer of Scatter and Scatterv); counts and displacements are
//! `INTEGER` arrays, C `int`s here. Then it calls the same entry point as
//! the C call.

use super::*;
use crate::coll;
use conv::{buf as bottom, comm, dtype, in_place_or_bottom as may_be_in_place, op};

binding! {
    /// `MPI_BARRIER`.
    fn barrier(c: *const Fint, ierr: *mut Fint) {
        // SAFETY: the caller's arguments, converted.
        unsafe { set_ierr(ierr, coll::barrier(comm(c))) }
    }
    /// `MPI_BCAST`.
    fn bcast(buf: *mut c_void, count: *const Fint, dt: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe { set_ierr(ierr, coll::bcast(bottom(buf), *count, dtype(dt), *root, comm(c))) }
    }
    /// `MPI_REDUCE`.
    fn reduce(sbuf: *const c_void, rbuf: *mut c_void, count: *const Fint, dt: *const Fint, o: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::reduce(may_be_in_place(sbuf), bottom(rbuf), *count, dtype(dt), op(o), *root, comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_ALLREDUCE`.
    fn allreduce(sbuf: *const c_void, rbuf: *mut c_void, count: *const Fint, dt: *const Fint, o: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::allreduce(may_be_in_place(sbuf), bottom(rbuf), *count, dtype(dt), op(o), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_GATHER`.
    fn gather(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::gather(may_be_in_place(sbuf), *scount, dtype(sdt), bottom(rbuf), *rcount, dtype(rdt), *root, comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_GATHERV`.
    fn gatherv(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcounts: *const Fint, displs: *const Fint, rdt: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::gatherv(may_be_in_place(sbuf), *scount, dtype(sdt), bottom(rbuf), rcounts, displs, dtype(rdt), *root, comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_SCATTER`.
    fn scatter(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::scatter(bottom(sbuf), *scount, dtype(sdt), may_be_in_place(rbuf), *rcount, dtype(rdt), *root, comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_SCATTERV`.
    fn scatterv(sbuf: *const c_void, scounts: *const Fint, displs: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::scatterv(bottom(sbuf), scounts, displs, dtype(sdt), may_be_in_place(rbuf), *rcount, dtype(rdt), *root, comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_ALLGATHER`.
    fn allgather(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::allgather(may_be_in_place(sbuf), *scount, dtype(sdt), bottom(rbuf), *rcount, dtype(rdt), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_ALLGATHERV`.
    fn allgatherv(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcounts: *const Fint, displs: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::allgatherv(may_be_in_place(sbuf), *scount, dtype(sdt), bottom(rbuf), rcounts, displs, dtype(rdt), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_ALLTOALL`.
    fn alltoall(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::alltoall(may_be_in_place(sbuf), *scount, dtype(sdt), bottom(rbuf), *rcount, dtype(rdt), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_ALLTOALLV`.
    fn alltoallv(sbuf: *const c_void, scounts: *const Fint, sdispls: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcounts: *const Fint, rdispls: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::alltoallv(may_be_in_place(sbuf), scounts, sdispls, dtype(sdt), bottom(rbuf), rcounts, rdispls, dtype(rdt), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_NEIGHBOR_ALLGATHER`.
    fn neighbor_allgather(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier` (no MPI_IN_PLACE in the neighbourhood
        // collectives: it is passed on as given, and the call goes real).
        unsafe {
            let rc = coll::neighbor_allgather(may_be_in_place(sbuf), *scount, dtype(sdt), bottom(rbuf), *rcount, dtype(rdt), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_NEIGHBOR_ALLGATHERV`.
    fn neighbor_allgatherv(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcounts: *const Fint, displs: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `neighbor_allgather`.
        unsafe {
            let rc = coll::neighbor_allgatherv(may_be_in_place(sbuf), *scount, dtype(sdt), bottom(rbuf), rcounts, displs, dtype(rdt), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_NEIGHBOR_ALLTOALL`.
    fn neighbor_alltoall(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `neighbor_allgather`.
        unsafe {
            let rc = coll::neighbor_alltoall(may_be_in_place(sbuf), *scount, dtype(sdt), bottom(rbuf), *rcount, dtype(rdt), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_NEIGHBOR_ALLTOALLV`.
    fn neighbor_alltoallv(sbuf: *const c_void, scounts: *const Fint, sdispls: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcounts: *const Fint, rdispls: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `neighbor_allgather`.
        unsafe {
            let rc = coll::neighbor_alltoallv(may_be_in_place(sbuf), scounts, sdispls, dtype(sdt), bottom(rbuf), rcounts, rdispls, dtype(rdt), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_REDUCE_SCATTER_BLOCK`.
    fn reduce_scatter_block(sbuf: *const c_void, rbuf: *mut c_void, rcount: *const Fint, dt: *const Fint, o: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::reduce_scatter_block(may_be_in_place(sbuf), bottom(rbuf), *rcount, dtype(dt), op(o), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_REDUCE_SCATTER`.
    fn reduce_scatter(sbuf: *const c_void, rbuf: *mut c_void, rcounts: *const Fint, dt: *const Fint, o: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::reduce_scatter(may_be_in_place(sbuf), bottom(rbuf), rcounts, dtype(dt), op(o), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_SCAN`.
    fn scan(sbuf: *const c_void, rbuf: *mut c_void, count: *const Fint, dt: *const Fint, o: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::scan(may_be_in_place(sbuf), bottom(rbuf), *count, dtype(dt), op(o), comm(c));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_EXSCAN`.
    fn exscan(sbuf: *const c_void, rbuf: *mut c_void, count: *const Fint, dt: *const Fint, o: *const Fint, c: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `barrier`.
        unsafe {
            let rc = coll::exscan(may_be_in_place(sbuf), bottom(rbuf), *count, dtype(dt), op(o), comm(c));
            set_ierr(ierr, rc)
        }
    }
}
