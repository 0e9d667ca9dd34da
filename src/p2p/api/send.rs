//! Sends of every mode (`MPI_Send`, `Ssend`, `Rsend`, `Bsend` and their
//! nonblocking forms): routed to the engine for a local peer, else to the
//! real MPI unchanged.

use core::ffi::{c_int, c_void};

use super::*;

/// Sends of every mode, blocking.
///
/// # Safety
/// As the MPI send calls.
#[allow(clippy::too_many_arguments)]
pub unsafe fn send(
    buf: *const c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    mode: Mode,
    ready: bool,
) -> c_int {
    crate::profile::data(count as i64, dtype);
    let mut polled = false;
    if engine::enabled() {
        let mut e = engine::lock();
        if let Some((info, l, d)) = route_send(&mut e, buf, count, dtype, dest, tag, comm) {
            if mode == Mode::Buffered && !bsend::room(dt::packed_size(count, &d), comm) {
                drop(e);
                return raise(comm, ffi::MPI_ERR_BUFFER as c_int);
            }
            let s = send_spec(buf, count, dtype, d, comm, info, l, tag, mode);
            // SAFETY: the caller's buffer, valid for the call.
            match unsafe { e.send(&s, None) } {
                Ok(Sent::Done) => return 0,
                Ok(Sent::Pending(i)) => {
                    drop(e);
                    let st = wait_ours(i);
                    return raise(comm, st.error());
                }
                Err(()) => {}
            }
        }
        polled = e.has_polled();
    }
    if polled && mode != Mode::Buffered {
        // SAFETY: the caller's arguments, forwarded to the nonblocking
        // form; the status is ignored, as a send has none.
        return unsafe {
            real_while_polled(comm, ignore_status(), Call::Wait, |r| {
                real_isend(buf, count, dtype, dest, tag, comm, mode, ready, r)
            })
        };
    }
    // SAFETY: forwarded unchanged.
    unsafe {
        match (mode, ready) {
            (Mode::Sync, _) => ffi::PMPI_Ssend(buf, count, dtype, dest, tag, comm),
            (Mode::Buffered, _) => ffi::PMPI_Bsend(buf, count, dtype, dest, tag, comm),
            (Mode::Standard, true) => ffi::PMPI_Rsend(buf, count, dtype, dest, tag, comm),
            (Mode::Standard, false) => ffi::PMPI_Send(buf, count, dtype, dest, tag, comm),
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn send_spec(
    buf: *const c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    d: dt::Dt,
    comm: ffi::MPI_Comm,
    info: &CommInfo,
    l: u32,
    tag: c_int,
    mode: Mode,
) -> SendSpec {
    SendSpec {
        buf: buf as *const u8,
        count,
        dtype,
        dt: d,
        comm,
        comm_id: info.id,
        me: info.rank,
        dest_local: l,
        tag,
        mode,
    }
}

/// Nonblocking sends of every mode.
///
/// # Safety
/// As the MPI calls.
#[allow(clippy::too_many_arguments)]
pub unsafe fn isend(
    buf: *const c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    mode: Mode,
    ready: bool,
    request: *mut ffi::MPI_Request,
) -> c_int {
    crate::profile::data(count as i64, dtype);
    if engine::enabled() && handles_ok() {
        let mut e = engine::lock();
        if let Some((info, l, d)) = route_send(&mut e, buf, count, dtype, dest, tag, comm) {
            if mode == Mode::Buffered && !bsend::room(dt::packed_size(count, &d), comm) {
                drop(e);
                return raise(comm, ffi::MPI_ERR_BUFFER as c_int);
            }
            let s = send_spec(buf, count, dtype, d, comm, info, l, tag, mode);
            // SAFETY: the caller keeps the buffer until completion.
            match unsafe { e.send(&s, None) } {
                Ok(Sent::Done) => {
                    // SAFETY: the caller's out-pointer.
                    unsafe { *request = enc_req(engine::SENT_SLOT) };
                    return 0;
                }
                Ok(Sent::Pending(i)) => {
                    // SAFETY: the caller's out-pointer.
                    unsafe { *request = enc_req(i) };
                    return 0;
                }
                Err(()) => {}
            }
        }
    }
    // SAFETY: forwarded unchanged.
    unsafe { real_isend(buf, count, dtype, dest, tag, comm, mode, ready, request) }
}

/// The real MPI's nonblocking send of the given mode.
///
/// # Safety
/// As the MPI calls.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn real_isend(
    buf: *const c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    mode: Mode,
    ready: bool,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: per the contract.
    unsafe {
        match (mode, ready) {
            (Mode::Sync, _) => ffi::PMPI_Issend(buf, count, dtype, dest, tag, comm, request),
            (Mode::Buffered, _) => ffi::PMPI_Ibsend(buf, count, dtype, dest, tag, comm, request),
            (Mode::Standard, true) => ffi::PMPI_Irsend(buf, count, dtype, dest, tag, comm, request),
            (Mode::Standard, false) => ffi::PMPI_Isend(buf, count, dtype, dest, tag, comm, request),
        }
    }
}
