//! The MPI-4.0 large-count routines (`MPI_Send_c`, `MPI_Put_c`, ...),
//! served by heapmpi's point-to-point and one-sided paths like their
//! classic twins. A count that fits an `int` is passed as it is; a larger
//! one becomes one element of a contiguous datatype ([`Narrow`]), so the
//! message is still matched and ordered by heapmpi (a receive posted with
//! `MPI_Recv` takes a message sent with `MPI_Send_c`, and the other way
//! round). A negative count, or a `disp_unit` beyond an `int`, goes to the
//! real `_c` routine, which raises its error or serves the window.
//!
//! Compiled only for an MPI whose `<mpi.h>` declares these routines
//! (`cfg(heapmpi_mpi4)`, see `build.rs`). `MPI_Get_count_c` and
//! `MPI_Get_elements_c` need nothing: heapmpi writes statuses in the MPI's
//! own layout (`p2p::status`), which its routines read.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;
use mpi_sys::{MPI_Aint, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Info, MPI_Message, MPI_Op};
use mpi_sys::{MPI_Request, MPI_Status, MPI_Win};

use crate::dt::Narrow;
use crate::p2p::api;
use crate::p2p::engine::Mode;
use crate::rma;

/// Which send.
#[derive(Clone, Copy)]
pub enum Send {
    /// `MPI_Send_c`.
    Standard,
    /// `MPI_Ssend_c`.
    Sync,
    /// `MPI_Rsend_c`.
    Ready,
    /// `MPI_Bsend_c`.
    Buffered,
}

impl Send {
    fn mode(self) -> (Mode, bool) {
        match self {
            Send::Standard => (Mode::Standard, false),
            Send::Sync => (Mode::Sync, false),
            Send::Ready => (Mode::Standard, true),
            Send::Buffered => (Mode::Buffered, false),
        }
    }
}

/// `MPI_Send_c` and its modes.
///
/// # Safety
/// As the MPI calls.
pub unsafe fn send(
    kind: Send,
    buf: *const c_void,
    count: MPI_Count,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let (mode, ready) = kind.mode();
    // SAFETY (all below): the caller's arguments, forwarded.
    match Narrow::new(count, dt) {
        Some(n) => unsafe { api::send(buf, n.count, n.dt, dest, tag, comm, mode, ready) },
        None => unsafe {
            match kind {
                Send::Standard => ffi::PMPI_Send_c(buf, count, dt, dest, tag, comm),
                Send::Sync => ffi::PMPI_Ssend_c(buf, count, dt, dest, tag, comm),
                Send::Ready => ffi::PMPI_Rsend_c(buf, count, dt, dest, tag, comm),
                Send::Buffered => ffi::PMPI_Bsend_c(buf, count, dt, dest, tag, comm),
            }
        },
    }
}

/// `MPI_Isend_c` and its modes.
///
/// # Safety
/// As the MPI calls.
#[allow(clippy::too_many_arguments)]
pub unsafe fn isend(
    kind: Send,
    buf: *const c_void,
    count: MPI_Count,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    req: *mut MPI_Request,
) -> c_int {
    let (mode, ready) = kind.mode();
    // SAFETY (all below): the caller's arguments, forwarded.
    match Narrow::new(count, dt) {
        Some(n) => unsafe { api::isend(buf, n.count, n.dt, dest, tag, comm, mode, ready, req) },
        None => unsafe {
            match kind {
                Send::Standard => ffi::PMPI_Isend_c(buf, count, dt, dest, tag, comm, req),
                Send::Sync => ffi::PMPI_Issend_c(buf, count, dt, dest, tag, comm, req),
                Send::Ready => ffi::PMPI_Irsend_c(buf, count, dt, dest, tag, comm, req),
                Send::Buffered => ffi::PMPI_Ibsend_c(buf, count, dt, dest, tag, comm, req),
            }
        },
    }
}

/// `MPI_Send_init_c` and its modes.
///
/// # Safety
/// As the MPI calls.
#[allow(clippy::too_many_arguments)]
pub unsafe fn send_init(
    kind: Send,
    buf: *const c_void,
    count: MPI_Count,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    req: *mut MPI_Request,
) -> c_int {
    let (mode, ready) = kind.mode();
    // SAFETY (all below): the caller's arguments, forwarded.
    match Narrow::new(count, dt) {
        Some(n) => unsafe { api::send_init(buf, n.count, n.dt, dest, tag, comm, mode, ready, req) },
        None => unsafe {
            match kind {
                Send::Standard => ffi::PMPI_Send_init_c(buf, count, dt, dest, tag, comm, req),
                Send::Sync => ffi::PMPI_Ssend_init_c(buf, count, dt, dest, tag, comm, req),
                Send::Ready => ffi::PMPI_Rsend_init_c(buf, count, dt, dest, tag, comm, req),
                Send::Buffered => ffi::PMPI_Bsend_init_c(buf, count, dt, dest, tag, comm, req),
            }
        },
    }
}

/// `MPI_Recv_c`.
///
/// # Safety
/// As the MPI call.
pub unsafe fn recv(
    buf: *mut c_void,
    count: MPI_Count,
    dt: MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY (all below): the caller's arguments, forwarded.
    match Narrow::new(count, dt) {
        Some(n) => unsafe { api::recv(buf, n.count, n.dt, src, tag, comm, status) },
        None => unsafe { ffi::PMPI_Recv_c(buf, count, dt, src, tag, comm, status) },
    }
}

/// `MPI_Irecv_c`.
///
/// # Safety
/// As the MPI call.
pub unsafe fn irecv(
    buf: *mut c_void,
    count: MPI_Count,
    dt: MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: MPI_Comm,
    req: *mut MPI_Request,
) -> c_int {
    // SAFETY (all below): the caller's arguments, forwarded.
    match Narrow::new(count, dt) {
        Some(n) => unsafe { api::irecv(buf, n.count, n.dt, src, tag, comm, req) },
        None => unsafe { ffi::PMPI_Irecv_c(buf, count, dt, src, tag, comm, req) },
    }
}

/// `MPI_Recv_init_c`.
///
/// # Safety
/// As the MPI call.
pub unsafe fn recv_init(
    buf: *mut c_void,
    count: MPI_Count,
    dt: MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: MPI_Comm,
    req: *mut MPI_Request,
) -> c_int {
    // SAFETY (all below): the caller's arguments, forwarded.
    match Narrow::new(count, dt) {
        Some(n) => unsafe { api::recv_init(buf, n.count, n.dt, src, tag, comm, req) },
        None => unsafe { ffi::PMPI_Recv_init_c(buf, count, dt, src, tag, comm, req) },
    }
}

/// `MPI_Mrecv_c` (`req` null) and `MPI_Imrecv_c`.
///
/// # Safety
/// As the MPI calls.
pub unsafe fn mrecv(
    buf: *mut c_void,
    count: MPI_Count,
    dt: MPI_Datatype,
    msg: *mut MPI_Message,
    status: *mut MPI_Status,
    req: *mut MPI_Request,
) -> c_int {
    // SAFETY (all below): the caller's arguments, forwarded.
    match (Narrow::new(count, dt), req.is_null()) {
        (Some(n), true) => unsafe { api::mrecv(buf, n.count, n.dt, msg, status, None) },
        (Some(n), false) => unsafe {
            api::mrecv(buf, n.count, n.dt, msg, ffi::RSMPI_STATUS_IGNORE, Some(req))
        },
        (None, true) => unsafe { ffi::PMPI_Mrecv_c(buf, count, dt, msg, status) },
        (None, false) => unsafe { ffi::PMPI_Imrecv_c(buf, count, dt, msg, req) },
    }
}

/// `MPI_Sendrecv_c`.
///
/// # Safety
/// As the MPI call.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv(
    sbuf: *const c_void,
    scount: MPI_Count,
    sdt: MPI_Datatype,
    dest: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: MPI_Count,
    rdt: MPI_Datatype,
    src: c_int,
    rtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY (all below): the caller's arguments, forwarded.
    match (Narrow::new(scount, sdt), Narrow::new(rcount, rdt)) {
        (Some(s), Some(r)) => unsafe {
            api::sendrecv(
                sbuf, s.count, s.dt, dest, stag, rbuf, r.count, r.dt, src, rtag, comm, status,
            )
        },
        _ => unsafe {
            ffi::PMPI_Sendrecv_c(
                sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, status,
            )
        },
    }
}

/// `MPI_Sendrecv_replace_c`.
///
/// # Safety
/// As the MPI call.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv_replace(
    buf: *mut c_void,
    count: MPI_Count,
    dt: MPI_Datatype,
    dest: c_int,
    stag: c_int,
    src: c_int,
    rtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY (all below): the caller's arguments, forwarded.
    match Narrow::new(count, dt) {
        Some(n) => unsafe {
            api::sendrecv_replace(buf, n.count, n.dt, dest, stag, src, rtag, comm, status)
        },
        None => unsafe {
            ffi::PMPI_Sendrecv_replace_c(buf, count, dt, dest, stag, src, rtag, comm, status)
        },
    }
}

/// `MPI_Isendrecv_c`.
///
/// # Safety
/// As the MPI call.
#[allow(clippy::too_many_arguments)]
pub unsafe fn isendrecv(
    sbuf: *const c_void,
    scount: MPI_Count,
    sdt: MPI_Datatype,
    dest: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: MPI_Count,
    rdt: MPI_Datatype,
    src: c_int,
    rtag: c_int,
    comm: MPI_Comm,
    req: *mut MPI_Request,
) -> c_int {
    // SAFETY (all below): the caller's arguments, forwarded.
    match (Narrow::new(scount, sdt), Narrow::new(rcount, rdt)) {
        (Some(s), Some(r)) => unsafe {
            api::isendrecv(
                sbuf, s.count, s.dt, dest, stag, rbuf, r.count, r.dt, src, rtag, comm, req,
            )
        },
        _ => unsafe {
            ffi::PMPI_Isendrecv_c(
                sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, req,
            )
        },
    }
}

/// `MPI_Isendrecv_replace_c`.
///
/// # Safety
/// As the MPI call.
#[allow(clippy::too_many_arguments)]
pub unsafe fn isendrecv_replace(
    buf: *mut c_void,
    count: MPI_Count,
    dt: MPI_Datatype,
    dest: c_int,
    stag: c_int,
    src: c_int,
    rtag: c_int,
    comm: MPI_Comm,
    req: *mut MPI_Request,
) -> c_int {
    // SAFETY (all below): the caller's arguments, forwarded.
    match Narrow::new(count, dt) {
        Some(n) => unsafe {
            api::isendrecv_replace(buf, n.count, n.dt, dest, stag, src, rtag, comm, req)
        },
        None => unsafe {
            ffi::PMPI_Isendrecv_replace_c(buf, count, dt, dest, stag, src, rtag, comm, req)
        },
    }
}

/// `MPI_Buffer_attach_c`: the real attach, and heapmpi learns the size
/// (beyond an `int`, as much as an `int` holds: buffered sends through
/// heapmpi use at most that).
///
/// # Safety
/// As the MPI call.
pub unsafe fn buffer_attach(buf: *mut c_void, size: MPI_Count) -> c_int {
    // SAFETY: forwarded unchanged.
    let rc = unsafe { ffi::PMPI_Buffer_attach_c(buf, size) };
    api::attached(rc, buf, size.clamp(0, c_int::MAX as MPI_Count) as usize);
    rc
}

/// `MPI_Buffer_detach_c`.
///
/// # Safety
/// As the MPI call.
pub unsafe fn buffer_detach(buf: *mut c_void, size: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded unchanged.
    let rc = unsafe { ffi::PMPI_Buffer_detach_c(buf, size) };
    api::detached(rc);
    rc
}

/// Which one-sided data movement.
#[derive(Clone, Copy)]
pub enum Move {
    /// `MPI_Put_c`.
    Put,
    /// `MPI_Get_c`.
    Get,
}

/// `MPI_Put_c`, `MPI_Get_c` (`req` null) and `MPI_Rput_c`, `MPI_Rget_c`.
///
/// # Safety
/// As the MPI calls.
#[allow(clippy::too_many_arguments)]
pub unsafe fn put_get(
    kind: Move,
    oaddr: *mut c_void,
    ocount: MPI_Count,
    odt: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    tcount: MPI_Count,
    tdt: MPI_Datatype,
    win: MPI_Win,
    req: *mut MPI_Request,
) -> c_int {
    let (o, t) = (Narrow::new(ocount, odt), Narrow::new(tcount, tdt));
    // SAFETY (all below): the caller's arguments, forwarded.
    match (o, t, kind, req.is_null()) {
        (Some(o), Some(t), Move::Put, true) => unsafe {
            rma::put(oaddr, o.count, o.dt, rank, disp, t.count, t.dt, win)
        },
        (Some(o), Some(t), Move::Get, true) => unsafe {
            rma::get(oaddr, o.count, o.dt, rank, disp, t.count, t.dt, win)
        },
        (Some(o), Some(t), Move::Put, false) => unsafe {
            rma::rput(oaddr, o.count, o.dt, rank, disp, t.count, t.dt, win, req)
        },
        (Some(o), Some(t), Move::Get, false) => unsafe {
            rma::rget(oaddr, o.count, o.dt, rank, disp, t.count, t.dt, win, req)
        },
        (_, _, Move::Put, true) => unsafe {
            ffi::PMPI_Put_c(oaddr, ocount, odt, rank, disp, tcount, tdt, win)
        },
        (_, _, Move::Get, true) => unsafe {
            ffi::PMPI_Get_c(oaddr, ocount, odt, rank, disp, tcount, tdt, win)
        },
        (_, _, Move::Put, false) => unsafe {
            ffi::PMPI_Rput_c(oaddr, ocount, odt, rank, disp, tcount, tdt, win, req)
        },
        (_, _, Move::Get, false) => unsafe {
            ffi::PMPI_Rget_c(oaddr, ocount, odt, rank, disp, tcount, tdt, win, req)
        },
    }
}

/// `MPI_Accumulate_c` (`req` null) and `MPI_Raccumulate_c`.
///
/// # Safety
/// As the MPI calls.
#[allow(clippy::too_many_arguments)]
pub unsafe fn accumulate(
    oaddr: *const c_void,
    ocount: MPI_Count,
    odt: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    tcount: MPI_Count,
    tdt: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    req: *mut MPI_Request,
) -> c_int {
    let (o, t) = (Narrow::new(ocount, odt), Narrow::new(tcount, tdt));
    // A target datatype must be built from one predefined type: a large
    // count's contiguous type is, and heapmpi finds that type through it.
    // SAFETY (all below): the caller's arguments, forwarded.
    match (o, t, req.is_null()) {
        (Some(o), Some(t), true) => unsafe {
            rma::accumulate(oaddr, o.count, o.dt, rank, disp, t.count, t.dt, op, win)
        },
        (Some(o), Some(t), false) => unsafe {
            rma::raccumulate(
                oaddr, o.count, o.dt, rank, disp, t.count, t.dt, op, win, req,
            )
        },
        (_, _, true) => unsafe {
            ffi::PMPI_Accumulate_c(oaddr, ocount, odt, rank, disp, tcount, tdt, op, win)
        },
        (_, _, false) => unsafe {
            ffi::PMPI_Raccumulate_c(oaddr, ocount, odt, rank, disp, tcount, tdt, op, win, req)
        },
    }
}

/// `MPI_Get_accumulate_c` (`req` null) and `MPI_Rget_accumulate_c`.
///
/// # Safety
/// As the MPI calls.
#[allow(clippy::too_many_arguments)]
pub unsafe fn get_accumulate(
    oaddr: *const c_void,
    ocount: MPI_Count,
    odt: MPI_Datatype,
    raddr: *mut c_void,
    rcount: MPI_Count,
    rdt: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    tcount: MPI_Count,
    tdt: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    req: *mut MPI_Request,
) -> c_int {
    let n = (
        Narrow::new(ocount, odt),
        Narrow::new(rcount, rdt),
        Narrow::new(tcount, tdt),
    );
    // SAFETY (all below): the caller's arguments, forwarded.
    match (n, req.is_null()) {
        ((Some(o), Some(r), Some(t)), true) => unsafe {
            rma::get_accumulate(
                oaddr, o.count, o.dt, raddr, r.count, r.dt, rank, disp, t.count, t.dt, op, win,
            )
        },
        ((Some(o), Some(r), Some(t)), false) => unsafe {
            rma::rget_accumulate(
                oaddr, o.count, o.dt, raddr, r.count, r.dt, rank, disp, t.count, t.dt, op, win, req,
            )
        },
        (_, true) => unsafe {
            ffi::PMPI_Get_accumulate_c(
                oaddr, ocount, odt, raddr, rcount, rdt, rank, disp, tcount, tdt, op, win,
            )
        },
        (_, false) => unsafe {
            ffi::PMPI_Rget_accumulate_c(
                oaddr, ocount, odt, raddr, rcount, rdt, rank, disp, tcount, tdt, op, win, req,
            )
        },
    }
}

/// A `disp_unit` as the classic routines take it, if it fits.
fn unit(u: MPI_Aint) -> Option<c_int> {
    c_int::try_from(u).ok()
}

/// `MPI_Win_create_c`.
///
/// # Safety
/// As the MPI call.
pub unsafe fn win_create(
    base: *mut c_void,
    size: MPI_Aint,
    du: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> c_int {
    // SAFETY (all below): the caller's arguments, forwarded.
    match unit(du) {
        Some(u) => unsafe { rma::create(base, size, u, info, comm, win) },
        None => unsafe { ffi::PMPI_Win_create_c(base, size, du, info, comm, win) },
    }
}

/// `MPI_Win_allocate_c` (`shared` false) and `MPI_Win_allocate_shared_c`.
///
/// # Safety
/// As the MPI calls.
pub unsafe fn win_allocate(
    shared: bool,
    size: MPI_Aint,
    du: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> c_int {
    // SAFETY (all below): the caller's arguments, forwarded.
    match (unit(du), shared) {
        (Some(u), false) => unsafe { rma::win_allocate(size, u, info, comm, baseptr, win) },
        (Some(u), true) => unsafe { rma::win_allocate_shared(size, u, info, comm, baseptr, win) },
        (None, false) => unsafe { ffi::PMPI_Win_allocate_c(size, du, info, comm, baseptr, win) },
        (None, true) => unsafe {
            ffi::PMPI_Win_allocate_shared_c(size, du, info, comm, baseptr, win)
        },
    }
}

/// `MPI_Win_shared_query_c`: heapmpi's answer for its shared windows,
/// the real MPI's for the others.
///
/// # Safety
/// As the MPI call.
pub unsafe fn win_shared_query(
    win: MPI_Win,
    rank: c_int,
    size: *mut MPI_Aint,
    du: *mut MPI_Aint,
    baseptr: *mut c_void,
) -> c_int {
    if !rma::is_heap_shared(win) || du.is_null() {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Win_shared_query_c(win, rank, size, du, baseptr) };
    }
    let mut u: c_int = 0;
    // SAFETY: the caller's pointers; `u` for the unit.
    let rc = unsafe { rma::shared_query(win, rank, size, &mut u, baseptr) };
    if rc == 0 {
        // SAFETY: the caller's out-pointer (checked not null).
        unsafe { *du = u as MPI_Aint };
    }
    rc
}
