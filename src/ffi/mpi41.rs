//! The MPI-4.1 entry points heapmpi serves (`MPI_Request_get_status_all`,
//! `_any`, `_some` of `linker-scripts/mpi4.list`; logic in
//! [`crate::p2p::api`]), compiled for an MPI whose `<mpi.h>` declares them
//! (`cfg(heapmpi_mpi41)`: MPICH 5, Intel MPI 2021.1x). Each body forwards
//! its arguments unchanged.

use core::ffi::c_int;

use mpi_sys::{MPI_Request, MPI_Status};

use crate::p2p::api;

c_exports! {
    /// `MPI_Request_get_status_all`.
    fn MPI_Request_get_status_all(count: c_int, reqs: *mut MPI_Request, flag: *mut c_int, statuses: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::request_get_status_all(count, reqs, flag, statuses) }
    }
    /// `MPI_Request_get_status_any`.
    fn MPI_Request_get_status_any(count: c_int, reqs: *mut MPI_Request, index: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::request_get_status_any(count, reqs, index, flag, status) }
    }
    /// `MPI_Request_get_status_some`.
    fn MPI_Request_get_status_some(incount: c_int, reqs: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::request_get_status_some(incount, reqs, outcount, indices, statuses) }
    }
}
