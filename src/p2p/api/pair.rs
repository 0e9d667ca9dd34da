//! `MPI_Isendrecv` and `MPI_Isendrecv_replace` (MPI-4.0 §3.10.2): a
//! receive and a send under one request, which completes when both have.
//!
//! Each half is routed like `MPI_Irecv` and `MPI_Isend` (heapmpi's queues
//! for a node-local peer, the real MPI otherwise), so an exchange with a
//! peer that uses the classic calls matches and orders as theirs do. The
//! request returned is the receive's (its status is the operation's); the
//! send is its companion ([`super::engine`]'s `ReqExt::companion`),
//! checked by every completion of the receive and released with it. A half
//! the real MPI serves is carried by a heapmpi slot around the real
//! request, so one handle covers both whatever their routes.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::recv::{packed_copy, pair_is_ours};
use super::*;

/// `MPI_Isendrecv`.
///
/// # Safety
/// As `MPI_Isendrecv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn isendrecv(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    dest: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    src: c_int,
    rtag: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    if !pair_is_ours(
        sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm,
    ) {
        // SAFETY: forwarded unchanged.
        return unsafe {
            real_isendrecv(
                sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, request,
            )
        };
    }
    // SAFETY: the caller's arguments.
    unsafe {
        post_pair(
            sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, None, request,
        )
    }
}

/// `MPI_Isendrecv_replace`: the outgoing data is packed into memory the
/// send's slot keeps until the send completes.
///
/// # Safety
/// As `MPI_Isendrecv_replace`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn isendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    dest: c_int,
    stag: c_int,
    src: c_int,
    rtag: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    let d = if pair_is_ours(
        buf, count, dtype, dest, stag, buf, count, dtype, src, rtag, comm,
    ) {
        engine::lock().dts.get(dtype)
    } else {
        None
    };
    let Some(d) = d else {
        // SAFETY: forwarded unchanged.
        return unsafe {
            real_isendrecv_replace(buf, count, dtype, dest, stag, src, rtag, comm, request)
        };
    };
    // SAFETY: the caller's buffer holds its elements.
    let (tmp, n) = unsafe { packed_copy(buf, count, dtype, &d, comm) };
    let p = tmp.as_ptr();
    // SAFETY: `tmp` holds the packed data as bytes and moves (its heap
    // block unchanged) into the send's slot, which keeps it until the send
    // completes.
    unsafe {
        post_pair(
            p.cast(),
            n as c_int,
            ffi::RSMPI_UINT8_T,
            dest,
            stag,
            buf,
            count,
            dtype,
            src,
            rtag,
            comm,
            Some(tmp),
            request,
        )
    }
}

/// Posts the receive, then the send, and makes the receive's request
/// stand for both.
///
/// # Safety
/// The buffers stay valid until the request completes.
#[allow(clippy::too_many_arguments)]
unsafe fn post_pair(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    dest: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    src: c_int,
    rtag: c_int,
    comm: ffi::MPI_Comm,
    scratch: Option<Vec<u8>>,
    request: *mut ffi::MPI_Request,
) -> c_int {
    let (mut r, mut s) = (req_null(), req_null());
    // SAFETY: the caller's receive buffer.
    let rc = unsafe { irecv(rbuf, rcount, rdt, src, rtag, comm, &mut r) };
    if rc != 0 {
        return rc;
    }
    // SAFETY: the caller's send buffer (or the scratch copy).
    let rc = unsafe {
        isend(
            sbuf,
            scount,
            sdt,
            dest,
            stag,
            comm,
            Mode::Standard,
            false,
            &mut s,
        )
    };
    if rc != 0 {
        // SAFETY: our own receive request.
        unsafe {
            cancel(&mut r);
            wait(&mut r, ffi::RSMPI_STATUS_IGNORE);
        }
        return rc;
    }
    let mut e = engine::lock();
    let ri = match dec_req(r) {
        Some(i) => Some(i),
        None => e.wrap_real(comm, r),
    };
    let si = match dec_req(s) {
        // Complete already (inline or fast box): the data is out.
        Some(engine::SENT_SLOT) => Ok(None),
        Some(i) => Ok(Some(i)),
        None => e.wrap_real(comm, s).map(Some).ok_or(()),
    };
    let (Some(ri), Ok(si)) = (ri, si) else {
        // Every handle in use (2^24 live requests): finish here.
        drop(e);
        // SAFETY: our own requests.
        unsafe {
            wait(&mut s, ffi::RSMPI_STATUS_IGNORE);
            wait(&mut r, ffi::RSMPI_STATUS_IGNORE);
        }
        return raise(comm, ffi::MPI_ERR_INTERN as c_int);
    };
    if let Some(si) = si {
        e.set_companion(ri, si);
        if let Some(slot) = e.req(si as usize) {
            slot.ext.scratch = scratch;
        }
    }
    drop(e);
    // SAFETY: the caller's out-pointer.
    unsafe { *request = enc_req(ri) };
    0
}

/// The real MPI's `MPI_Isendrecv`.
///
/// # Safety
/// As `MPI_Isendrecv`.
#[allow(clippy::too_many_arguments)]
unsafe fn real_isendrecv(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    dest: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    src: c_int,
    rtag: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: forwarded unchanged.
    unsafe {
        ffi::PMPI_Isendrecv(
            sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, request,
        )
    }
}

/// The real MPI's `MPI_Isendrecv_replace`.
///
/// # Safety
/// As `MPI_Isendrecv_replace`.
#[allow(clippy::too_many_arguments)]
unsafe fn real_isendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    dest: c_int,
    stag: c_int,
    src: c_int,
    rtag: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Isendrecv_replace(buf, count, dtype, dest, stag, src, rtag, comm, request) }
}
