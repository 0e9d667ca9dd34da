//! The MPI-4.1 entry points heapmpi serves (`MPI_Request_get_status_all`,
//! `_any`, `_some` of `linker-scripts/mpi4.list`; logic in
//! [`crate::p2p::api`]), compiled for an MPI whose `<mpi.h>` declares them
//! (`cfg(heapmpi_mpi41)`: MPICH 5, Intel MPI 2021.1x); and the MPI-5.0
//! handle-to-integer conversions of requests and messages, which heapmpi's
//! own handles must survive as they survive `c2f`/`f2c`
//! (`cfg(heapmpi_toint)`: the same MPIs). Each body forwards its arguments
//! unchanged.

use core::ffi::c_int;

use mpi_sys::{MPI_Request, MPI_Status};

#[cfg(heapmpi_mpi41)]
use crate::p2p::api;

#[cfg(heapmpi_mpi41)]
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

/// MPI-4.1's buffers of communicators and sessions, recorded for
/// heapmpi's buffered sends (`cfg(heapmpi_mpi41_buffers)`).
#[cfg(heapmpi_mpi41_buffers)]
pub mod buffers {
    use core::ffi::{c_int, c_void};

    use mpi_sys::{MPI_Comm, MPI_Count, MPI_Session};

    use crate::p2p::api::scoped;

    c_exports! {
        /// `MPI_Comm_attach_buffer`.
        fn MPI_Comm_attach_buffer(comm: MPI_Comm, buf: *mut c_void, size: c_int) -> c_int {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { scoped::comm_attach(comm, buf, size) }
        }
        /// `MPI_Comm_attach_buffer_c`.
        fn MPI_Comm_attach_buffer_c(comm: MPI_Comm, buf: *mut c_void, size: MPI_Count) -> c_int {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { scoped::comm_attach_c(comm, buf, size) }
        }
        /// `MPI_Comm_detach_buffer`.
        fn MPI_Comm_detach_buffer(comm: MPI_Comm, buf: *mut c_void, size: *mut c_int) -> c_int {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { scoped::comm_detach(comm, buf, size) }
        }
        /// `MPI_Comm_detach_buffer_c`.
        fn MPI_Comm_detach_buffer_c(comm: MPI_Comm, buf: *mut c_void, size: *mut MPI_Count) -> c_int {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { scoped::comm_detach_c(comm, buf, size) }
        }
        /// `MPI_Session_attach_buffer`.
        fn MPI_Session_attach_buffer(s: MPI_Session, buf: *mut c_void, size: c_int) -> c_int {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { scoped::session_attach(s, buf, size) }
        }
        /// `MPI_Session_attach_buffer_c`.
        fn MPI_Session_attach_buffer_c(s: MPI_Session, buf: *mut c_void, size: MPI_Count) -> c_int {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { scoped::session_attach_c(s, buf, size) }
        }
        /// `MPI_Session_detach_buffer`.
        fn MPI_Session_detach_buffer(s: MPI_Session, buf: *mut c_void, size: *mut c_int) -> c_int {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { scoped::session_detach(s, buf, size) }
        }
        /// `MPI_Session_detach_buffer_c`.
        fn MPI_Session_detach_buffer_c(s: MPI_Session, buf: *mut c_void, size: *mut MPI_Count) -> c_int {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { scoped::session_detach_c(s, buf, size) }
        }
    }
}

/// The conversions, in a module of their own (one `c_exports!` per
/// module).
#[cfg(heapmpi_toint)]
pub mod toint {
    use core::ffi::c_int;

    use mpi_sys::{MPI_Message, MPI_Request};

    c_exports! {
        /// `MPI_Request_toint`: as `MPI_Request_c2f` (in the MPICH family,
        /// which alone declares it, both give a real handle's own value).
        fn MPI_Request_toint(req: MPI_Request) -> c_int {
            crate::req::handle::request_c2f(req)
        }
        /// `MPI_Request_fromint`: as `MPI_Request_f2c`.
        fn MPI_Request_fromint(req: c_int) -> MPI_Request {
            crate::req::handle::request_f2c(req)
        }
        /// `MPI_Message_toint`: as `MPI_Message_c2f`.
        fn MPI_Message_toint(msg: MPI_Message) -> c_int {
            crate::req::handle::message_c2f(msg)
        }
        /// `MPI_Message_fromint`: as `MPI_Message_f2c`.
        fn MPI_Message_fromint(msg: c_int) -> MPI_Message {
            crate::req::handle::message_f2c(msg)
        }
    }
}
