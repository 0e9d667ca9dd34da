//! The MPI point-to-point and communicator-creation entry points (logic in
//! [`crate::p2p::api`]). Each body forwards its arguments unchanged.

use core::ffi::{c_int, c_void};

use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Group, MPI_Info, MPI_Message, MPI_Request, MPI_Status};

use crate::p2p::api;
use crate::p2p::engine::Mode;

c_exports! {
    /// `MPI_Send`.
    fn MPI_Send(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::send(buf, count, dt, dest, tag, comm, Mode::Standard, false) }
    }
    /// `MPI_Ssend`.
    fn MPI_Ssend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::send(buf, count, dt, dest, tag, comm, Mode::Sync, false) }
    }
    /// `MPI_Rsend`.
    fn MPI_Rsend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::send(buf, count, dt, dest, tag, comm, Mode::Standard, true) }
    }
    /// `MPI_Bsend`.
    fn MPI_Bsend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::send(buf, count, dt, dest, tag, comm, Mode::Buffered, false) }
    }
    /// `MPI_Isend`.
    fn MPI_Isend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::isend(buf, count, dt, dest, tag, comm, Mode::Standard, false, req) }
    }
    /// `MPI_Issend`.
    fn MPI_Issend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::isend(buf, count, dt, dest, tag, comm, Mode::Sync, false, req) }
    }
    /// `MPI_Irsend`.
    fn MPI_Irsend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::isend(buf, count, dt, dest, tag, comm, Mode::Standard, true, req) }
    }
    /// `MPI_Ibsend`.
    fn MPI_Ibsend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::isend(buf, count, dt, dest, tag, comm, Mode::Buffered, false, req) }
    }
    /// `MPI_Recv`.
    fn MPI_Recv(buf: *mut c_void, count: c_int, dt: MPI_Datatype, src: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::recv(buf, count, dt, src, tag, comm, status) }
    }
    /// `MPI_Irecv`.
    fn MPI_Irecv(buf: *mut c_void, count: c_int, dt: MPI_Datatype, src: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::irecv(buf, count, dt, src, tag, comm, req) }
    }
    /// `MPI_Sendrecv`.
    fn MPI_Sendrecv(sbuf: *const c_void, scount: c_int, sdt: MPI_Datatype, dest: c_int, stag: c_int, rbuf: *mut c_void, rcount: c_int, rdt: MPI_Datatype, src: c_int, rtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, status) }
    }
    /// `MPI_Sendrecv_replace`.
    fn MPI_Sendrecv_replace(buf: *mut c_void, count: c_int, dt: MPI_Datatype, dest: c_int, stag: c_int, src: c_int, rtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, status) }
    }
    /// `MPI_Probe`.
    fn MPI_Probe(src: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded (no flag for Probe).
        unsafe { api::probe(src, tag, comm, core::ptr::null_mut(), None, status, true) }
    }
    /// `MPI_Iprobe`.
    fn MPI_Iprobe(src: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::probe(src, tag, comm, flag, None, status, false) }
    }
    /// `MPI_Mprobe`.
    fn MPI_Mprobe(src: c_int, tag: c_int, comm: MPI_Comm, msg: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded (no flag for Mprobe).
        unsafe { api::probe(src, tag, comm, core::ptr::null_mut(), Some(msg), status, true) }
    }
    /// `MPI_Improbe`.
    fn MPI_Improbe(src: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, msg: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::probe(src, tag, comm, flag, Some(msg), status, false) }
    }
    /// `MPI_Mrecv`.
    fn MPI_Mrecv(buf: *mut c_void, count: c_int, dt: MPI_Datatype, msg: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::mrecv(buf, count, dt, msg, status, None) }
    }
    /// `MPI_Imrecv`.
    fn MPI_Imrecv(buf: *mut c_void, count: c_int, dt: MPI_Datatype, msg: *mut MPI_Message, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::mrecv(buf, count, dt, msg, mpi_sys::RSMPI_STATUS_IGNORE, Some(req)) }
    }
    /// `MPI_Wait`.
    fn MPI_Wait(req: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::wait(req, status) }
    }
    /// `MPI_Test`.
    fn MPI_Test(req: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::test(req, flag, status) }
    }
    /// `MPI_Waitall`.
    fn MPI_Waitall(count: c_int, reqs: *mut MPI_Request, statuses: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::waitall(count, reqs, statuses) }
    }
    /// `MPI_Testall`.
    fn MPI_Testall(count: c_int, reqs: *mut MPI_Request, flag: *mut c_int, statuses: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::testall(count, reqs, flag, statuses) }
    }
    /// `MPI_Waitany`.
    fn MPI_Waitany(count: c_int, reqs: *mut MPI_Request, index: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded (no flag for Waitany).
        unsafe { api::waitany(count, reqs, index, core::ptr::null_mut(), status, true) }
    }
    /// `MPI_Testany`.
    fn MPI_Testany(count: c_int, reqs: *mut MPI_Request, index: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::waitany(count, reqs, index, flag, status, false) }
    }
    /// `MPI_Waitsome`.
    fn MPI_Waitsome(count: c_int, reqs: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::waitsome(count, reqs, outcount, indices, statuses, true) }
    }
    /// `MPI_Testsome`.
    fn MPI_Testsome(count: c_int, reqs: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::waitsome(count, reqs, outcount, indices, statuses, false) }
    }
    /// `MPI_Request_free`.
    fn MPI_Request_free(req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::request_free(req) }
    }
    /// `MPI_Request_get_status`.
    fn MPI_Request_get_status(req: MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::request_get_status(req, flag, status) }
    }
    /// `MPI_Cancel`.
    fn MPI_Cancel(req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::cancel(req) }
    }
    /// `MPI_Send_init`.
    fn MPI_Send_init(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::send_init(buf, count, dt, dest, tag, comm, Mode::Standard, false, req) }
    }
    /// `MPI_Ssend_init`.
    fn MPI_Ssend_init(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::send_init(buf, count, dt, dest, tag, comm, Mode::Sync, false, req) }
    }
    /// `MPI_Rsend_init`.
    fn MPI_Rsend_init(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::send_init(buf, count, dt, dest, tag, comm, Mode::Standard, true, req) }
    }
    /// `MPI_Bsend_init`.
    fn MPI_Bsend_init(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::send_init(buf, count, dt, dest, tag, comm, Mode::Buffered, false, req) }
    }
    /// `MPI_Recv_init`.
    fn MPI_Recv_init(buf: *mut c_void, count: c_int, dt: MPI_Datatype, src: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::recv_init(buf, count, dt, src, tag, comm, req) }
    }
    /// `MPI_Start`.
    fn MPI_Start(req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::start(req) }
    }
    /// `MPI_Startall`.
    fn MPI_Startall(count: c_int, reqs: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::startall(count, reqs) }
    }
    /// `MPI_Comm_dup`.
    fn MPI_Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Comm_dup(comm, newcomm), newcomm) }
    }
    /// `MPI_Comm_dup_with_info`.
    fn MPI_Comm_dup_with_info(comm: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm) }
    }
    /// `MPI_Comm_split`.
    fn MPI_Comm_split(comm: MPI_Comm, color: c_int, key: c_int, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Comm_split(comm, color, key, newcomm), newcomm) }
    }
    /// `MPI_Comm_split_type`.
    fn MPI_Comm_split_type(comm: MPI_Comm, split_type: c_int, key: c_int, info: MPI_Info, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm) }
    }
    /// `MPI_Comm_create`.
    fn MPI_Comm_create(comm: MPI_Comm, group: MPI_Group, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Comm_create(comm, group, newcomm), newcomm) }
    }
    /// `MPI_Comm_create_group`.
    fn MPI_Comm_create_group(comm: MPI_Comm, group: MPI_Group, tag: c_int, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm) }
    }
    /// `MPI_Cart_create`.
    fn MPI_Cart_create(comm: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, reorder: c_int, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Cart_create(comm, ndims, dims as _, periods as _, reorder, newcomm), newcomm) }
    }
    /// `MPI_Cart_sub`.
    fn MPI_Cart_sub(comm: MPI_Comm, remain: *const c_int, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Cart_sub(comm, remain as _, newcomm), newcomm) }
    }
    /// `MPI_Graph_create`.
    fn MPI_Graph_create(comm: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, reorder: c_int, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Graph_create(comm, nnodes, index as _, edges as _, reorder, newcomm), newcomm) }
    }
    /// `MPI_Dist_graph_create`.
    fn MPI_Dist_graph_create(comm: MPI_Comm, n: c_int, sources: *const c_int, degrees: *const c_int, dests: *const c_int, weights: *const c_int, info: MPI_Info, reorder: c_int, newcomm: *mut MPI_Comm) -> c_int {
        crate::comm::quirks::before_dist_graph_create(comm);
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Dist_graph_create(comm, n, sources as _, degrees as _, dests as _, weights as _, info, reorder, newcomm), newcomm) }
    }
    /// `MPI_Dist_graph_create_adjacent`.
    fn MPI_Dist_graph_create_adjacent(comm: MPI_Comm, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, dests: *const c_int, destweights: *const c_int, info: MPI_Info, reorder: c_int, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Dist_graph_create_adjacent(comm, indegree, sources as _, sourceweights as _, outdegree, dests as _, destweights as _, info, reorder, newcomm), newcomm) }
    }
    /// `MPI_Request_c2f`.
    fn MPI_Request_c2f(req: MPI_Request) -> c_int {
        crate::req::handle::request_c2f(req)
    }
    /// `MPI_Request_f2c`.
    fn MPI_Request_f2c(req: c_int) -> MPI_Request {
        crate::req::handle::request_f2c(req)
    }
    /// `MPI_Message_c2f`.
    fn MPI_Message_c2f(msg: MPI_Message) -> c_int {
        crate::req::handle::message_c2f(msg)
    }
    /// `MPI_Message_f2c`.
    fn MPI_Message_f2c(msg: c_int) -> MPI_Message {
        crate::req::handle::message_f2c(msg)
    }
    /// `MPI_Buffer_attach`.
    fn MPI_Buffer_attach(buf: *mut c_void, size: c_int) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::buffer_attach(buf, size) }
    }
    /// `MPI_Buffer_detach`.
    fn MPI_Buffer_detach(buf: *mut c_void, size: *mut c_int) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::buffer_detach(buf, size) }
    }
    /// `MPI_Comm_free`.
    fn MPI_Comm_free(comm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { api::comm_free(comm) }
    }
    /// `MPI_Intercomm_merge`.
    fn MPI_Intercomm_merge(inter: MPI_Comm, high: c_int, newcomm: *mut MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { crate::comm::created(mpi_sys::PMPI_Intercomm_merge(inter, high, newcomm), newcomm) }
    }
}
