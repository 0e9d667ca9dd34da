//! The MPI-4.0 large-count point-to-point and one-sided entry points
//! heapmpi serves (`linker-scripts/mpi4.list`; logic in [`crate::large`]
//! and [`crate::p2p::api`]), compiled for an MPI whose `<mpi.h>` declares
//! them (`cfg(heapmpi_mpi4)`; the others of MPI-4.0 are in `mpi4_base`). Each body
//! forwards its arguments unchanged.

use core::ffi::{c_int, c_void};

use mpi_sys::{MPI_Aint, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Info, MPI_Message, MPI_Op};
use mpi_sys::{MPI_Request, MPI_Status, MPI_Win};

use crate::large::{self, Move, Send};

c_exports! {
    /// `MPI_Send_c`.
    fn MPI_Send_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::send(Send::Standard, buf, count, dt, dest, tag, comm) }
    }
    /// `MPI_Ssend_c`.
    fn MPI_Ssend_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::send(Send::Sync, buf, count, dt, dest, tag, comm) }
    }
    /// `MPI_Rsend_c`.
    fn MPI_Rsend_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::send(Send::Ready, buf, count, dt, dest, tag, comm) }
    }
    /// `MPI_Bsend_c`.
    fn MPI_Bsend_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::send(Send::Buffered, buf, count, dt, dest, tag, comm) }
    }
    /// `MPI_Isend_c`.
    fn MPI_Isend_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::isend(Send::Standard, buf, count, dt, dest, tag, comm, req) }
    }
    /// `MPI_Issend_c`.
    fn MPI_Issend_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::isend(Send::Sync, buf, count, dt, dest, tag, comm, req) }
    }
    /// `MPI_Irsend_c`.
    fn MPI_Irsend_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::isend(Send::Ready, buf, count, dt, dest, tag, comm, req) }
    }
    /// `MPI_Ibsend_c`.
    fn MPI_Ibsend_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::isend(Send::Buffered, buf, count, dt, dest, tag, comm, req) }
    }
    /// `MPI_Recv_c`.
    fn MPI_Recv_c(buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, src: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::recv(buf, count, dt, src, tag, comm, status) }
    }
    /// `MPI_Irecv_c`.
    fn MPI_Irecv_c(buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, src: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::irecv(buf, count, dt, src, tag, comm, req) }
    }
    /// `MPI_Sendrecv_c`.
    fn MPI_Sendrecv_c(sbuf: *const c_void, scount: MPI_Count, sdt: MPI_Datatype, dest: c_int, stag: c_int, rbuf: *mut c_void, rcount: MPI_Count, rdt: MPI_Datatype, src: c_int, rtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, status) }
    }
    /// `MPI_Sendrecv_replace_c`.
    fn MPI_Sendrecv_replace_c(buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, stag: c_int, src: c_int, rtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, status) }
    }
    /// `MPI_Isendrecv_c`.
    fn MPI_Isendrecv_c(sbuf: *const c_void, scount: MPI_Count, sdt: MPI_Datatype, dest: c_int, stag: c_int, rbuf: *mut c_void, rcount: MPI_Count, rdt: MPI_Datatype, src: c_int, rtag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::isendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, req) }
    }
    /// `MPI_Isendrecv_replace_c`.
    fn MPI_Isendrecv_replace_c(buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, stag: c_int, src: c_int, rtag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::isendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, req) }
    }
    /// `MPI_Mrecv_c`.
    fn MPI_Mrecv_c(buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, msg: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
        // SAFETY: the caller's arguments, forwarded (no request).
        unsafe { large::mrecv(buf, count, dt, msg, status, core::ptr::null_mut()) }
    }
    /// `MPI_Imrecv_c`.
    fn MPI_Imrecv_c(buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, msg: *mut MPI_Message, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded (no status).
        unsafe { large::mrecv(buf, count, dt, msg, mpi_sys::RSMPI_STATUS_IGNORE, req) }
    }
    /// `MPI_Send_init_c`.
    fn MPI_Send_init_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::send_init(Send::Standard, buf, count, dt, dest, tag, comm, req) }
    }
    /// `MPI_Ssend_init_c`.
    fn MPI_Ssend_init_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::send_init(Send::Sync, buf, count, dt, dest, tag, comm, req) }
    }
    /// `MPI_Rsend_init_c`.
    fn MPI_Rsend_init_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::send_init(Send::Ready, buf, count, dt, dest, tag, comm, req) }
    }
    /// `MPI_Bsend_init_c`.
    fn MPI_Bsend_init_c(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::send_init(Send::Buffered, buf, count, dt, dest, tag, comm, req) }
    }
    /// `MPI_Recv_init_c`.
    fn MPI_Recv_init_c(buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, src: c_int, tag: c_int, comm: MPI_Comm, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::recv_init(buf, count, dt, src, tag, comm, req) }
    }
    /// `MPI_Buffer_attach_c`.
    fn MPI_Buffer_attach_c(buf: *mut c_void, size: MPI_Count) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::buffer_attach(buf, size) }
    }
    /// `MPI_Buffer_detach_c`.
    fn MPI_Buffer_detach_c(buf: *mut c_void, size: *mut MPI_Count) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::buffer_detach(buf, size) }
    }
    /// `MPI_Put_c`.
    fn MPI_Put_c(oaddr: *const c_void, ocount: MPI_Count, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, tdt: MPI_Datatype, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded (a put only reads the origin).
        unsafe { large::put_get(Move::Put, oaddr as *mut c_void, ocount, odt, rank, disp, tcount, tdt, win, core::ptr::null_mut()) }
    }
    /// `MPI_Get_c`.
    fn MPI_Get_c(oaddr: *mut c_void, ocount: MPI_Count, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, tdt: MPI_Datatype, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::put_get(Move::Get, oaddr, ocount, odt, rank, disp, tcount, tdt, win, core::ptr::null_mut()) }
    }
    /// `MPI_Rput_c`.
    fn MPI_Rput_c(oaddr: *const c_void, ocount: MPI_Count, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, tdt: MPI_Datatype, win: MPI_Win, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded (a put only reads the origin).
        unsafe { large::put_get(Move::Put, oaddr as *mut c_void, ocount, odt, rank, disp, tcount, tdt, win, req) }
    }
    /// `MPI_Rget_c`.
    fn MPI_Rget_c(oaddr: *mut c_void, ocount: MPI_Count, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, tdt: MPI_Datatype, win: MPI_Win, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::put_get(Move::Get, oaddr, ocount, odt, rank, disp, tcount, tdt, win, req) }
    }
    /// `MPI_Accumulate_c`.
    fn MPI_Accumulate_c(oaddr: *const c_void, ocount: MPI_Count, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, tdt: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::accumulate(oaddr, ocount, odt, rank, disp, tcount, tdt, op, win, core::ptr::null_mut()) }
    }
    /// `MPI_Raccumulate_c`.
    fn MPI_Raccumulate_c(oaddr: *const c_void, ocount: MPI_Count, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, tdt: MPI_Datatype, op: MPI_Op, win: MPI_Win, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::accumulate(oaddr, ocount, odt, rank, disp, tcount, tdt, op, win, req) }
    }
    /// `MPI_Get_accumulate_c`.
    fn MPI_Get_accumulate_c(oaddr: *const c_void, ocount: MPI_Count, odt: MPI_Datatype, raddr: *mut c_void, rcount: MPI_Count, rdt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, tdt: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::get_accumulate(oaddr, ocount, odt, raddr, rcount, rdt, rank, disp, tcount, tdt, op, win, core::ptr::null_mut()) }
    }
    /// `MPI_Rget_accumulate_c`.
    fn MPI_Rget_accumulate_c(oaddr: *const c_void, ocount: MPI_Count, odt: MPI_Datatype, raddr: *mut c_void, rcount: MPI_Count, rdt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, tdt: MPI_Datatype, op: MPI_Op, win: MPI_Win, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::get_accumulate(oaddr, ocount, odt, raddr, rcount, rdt, rank, disp, tcount, tdt, op, win, req) }
    }
    /// `MPI_Win_create_c`.
    fn MPI_Win_create_c(base: *mut c_void, size: MPI_Aint, du: MPI_Aint, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::win_create(base, size, du, info, comm, win) }
    }
    /// `MPI_Win_allocate_c`.
    fn MPI_Win_allocate_c(size: MPI_Aint, du: MPI_Aint, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::win_allocate(false, size, du, info, comm, baseptr, win) }
    }
    /// `MPI_Win_allocate_shared_c`.
    fn MPI_Win_allocate_shared_c(size: MPI_Aint, du: MPI_Aint, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::win_allocate(true, size, du, info, comm, baseptr, win) }
    }
    /// `MPI_Win_shared_query_c`.
    fn MPI_Win_shared_query_c(win: MPI_Win, rank: c_int, size: *mut MPI_Aint, du: *mut MPI_Aint, baseptr: *mut c_void) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { large::win_shared_query(win, rank, size, du, baseptr) }
    }
}
