//! Receives, `MPI_Sendrecv`(`_replace`), probes and matched probes.

use core::ffi::{c_int, c_void};

use super::*;

/// `MPI_Recv`.
///
/// # Safety
/// As `MPI_Recv`.
pub unsafe fn recv(
    buf: *mut c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    status: *mut ffi::MPI_Status,
) -> c_int {
    crate::profile::data(count as i64, dtype);
    let mut polled = false;
    if engine::enabled() {
        let mut e = engine::lock();
        if let Some(i) = post_ours(&mut e, buf, count, dtype, src, tag, comm, false) {
            drop(e);
            let st = wait_ours(i);
            // SAFETY: the caller's status pointer.
            unsafe { status_rules::write_status(&st, status, Call::Recv) };
            return raise(comm, st.error());
        }
        polled = e.has_polled();
    }
    if polled {
        // SAFETY: the caller's arguments, forwarded to the nonblocking
        // form, and its status pointer.
        return unsafe {
            real_while_polled(comm, status, Call::Recv, |r| {
                ffi::PMPI_Irecv(buf, count, dtype, src, tag, comm, r)
            })
        };
    }
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Recv(buf, count, dtype, src, tag, comm, status) }
}

/// Posts a receive as a heapmpi request if the routing says so; `None`
/// means the real MPI takes the call. With `hold` (the receive outlives the
/// call), a derived datatype is duplicated for the request, so the program
/// may free its own handle at once (MPI-4.0 §5.1.10).
#[allow(clippy::too_many_arguments)]
pub(super) fn post_ours(
    e: &mut Engine,
    buf: *mut c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    hold: bool,
) -> Option<u32> {
    let (route, d) = route_recv(e, buf, count, Some(dtype), src, tag, comm);
    post_routed(e, route, d, buf, count, dtype, src, tag, comm, hold)
}

/// [`post_ours`] once the receive is routed.
#[allow(clippy::too_many_arguments)]
fn post_routed(
    e: &mut Engine,
    route: Route,
    d: Option<dt::Dt>,
    buf: *mut c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    hold: bool,
) -> Option<u32> {
    let (info, polled) = match route {
        Route::Real => return None,
        Route::Local(info) => (info, false),
        Route::Polled(info) => (info, true),
    };
    let d = d.unwrap();
    let i = e.new_req(comm, State::Op(Op::Posted))?;
    let dtype = if hold {
        held_type(e, i, dtype, &d)
    } else {
        dtype
    };
    let spec = RecvSpec {
        buf: buf as *mut u8,
        count,
        dtype,
        dt: d,
        comm,
        comm_id: info.id,
        src,
        tag,
    };
    e.post_recv(i, spec, polled);
    Some(i)
}

/// `MPI_Irecv`.
///
/// # Safety
/// As `MPI_Irecv`.
pub unsafe fn irecv(
    buf: *mut c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    crate::profile::data(count as i64, dtype);
    if engine::enabled() && handles_ok() {
        let mut e = engine::lock();
        if let Some(i) = post_ours(&mut e, buf, count, dtype, src, tag, comm, true) {
            // SAFETY: the caller's out-pointer.
            unsafe { *request = enc_req(i) };
            return 0;
        }
    }
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Irecv(buf, count, dtype, src, tag, comm, request) }
}

/// `MPI_Sendrecv`: the receive is posted first, then the send, then both
/// complete (so a pair of ranks exchanging never deadlocks).
///
/// # Safety
/// As `MPI_Sendrecv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv(
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
    status: *mut ffi::MPI_Status,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: the caller's arguments.
    unsafe {
        sendrecv_as(
            sbuf,
            scount,
            sdt,
            dest,
            stag,
            rbuf,
            rcount,
            rdt,
            src,
            rtag,
            comm,
            status,
            Call::Sendrecv,
        )
    }
}

/// [`sendrecv`], writing the status as `call` does.
///
/// # Safety
/// As `MPI_Sendrecv`.
#[allow(clippy::too_many_arguments)]
unsafe fn sendrecv_as(
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
    status: *mut ffi::MPI_Status,
    call: Call,
) -> c_int {
    if engine::enabled() && handles_ok() {
        // SAFETY: the caller's arguments.
        let done = unsafe {
            sendrecv_engine(
                sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, status, call,
            )
        };
        if let Some(rc) = done {
            return rc;
        }
    }
    if !pair_is_ours(
        sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm,
    ) {
        // SAFETY: forwarded unchanged.
        return unsafe {
            ffi::PMPI_Sendrecv(
                sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, status,
            )
        };
    }
    let mut reqs = [req_null(), req_null()];
    // SAFETY: the caller's buffers; both requests are completed below.
    let rc = unsafe { irecv(rbuf, rcount, rdt, src, rtag, comm, &mut reqs[0]) };
    if rc != 0 {
        return rc;
    }
    // SAFETY: as above.
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
            &mut reqs[1],
        )
    };
    if rc != 0 {
        // SAFETY: our own receive request.
        unsafe {
            cancel(&mut reqs[0]);
            wait(&mut reqs[0], ffi::RSMPI_STATUS_IGNORE);
        }
        return rc;
    }
    // SAFETY: reading MPI constants; our own requests.
    unsafe {
        let rc1 = wait(&mut reqs[1], ffi::RSMPI_STATUS_IGNORE);
        let rc0 = wait_as(&mut reqs[0], status, call);
        if rc0 != 0 {
            rc0
        } else {
            rc1
        }
    }
}

/// A send-receive pair whose halves both go to local peers, under one
/// engine lock: routed once, the receive posted (no datatype held: the
/// call returns only once both halves are done), then the send started,
/// as the general path does through `MPI_Irecv`, `MPI_Isend` and two
/// waits (one lock, two routings and the request handles each). `None`
/// when either half is not the engine's: nothing was done, the general
/// path takes the call. HPCC's ring latency and GROMACS's halo exchange
/// are loops of this call.
///
/// # Safety
/// As `MPI_Sendrecv`.
#[allow(clippy::too_many_arguments)]
unsafe fn sendrecv_engine(
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
    status: *mut ffi::MPI_Status,
    call: Call,
) -> Option<c_int> {
    let mut e = engine::lock();
    let (route, d) = route_recv(&mut e, rbuf, rcount, Some(rdt), src, rtag, comm);
    if matches!(route, Route::Real) {
        return None;
    }
    let (info, l, sd) = route_send(&mut e, sbuf, scount, sdt, dest, stag, comm)?;
    let i = post_routed(&mut e, route, d, rbuf, rcount, rdt, src, rtag, comm, false)?;
    let s = send::send_spec(sbuf, scount, sdt, sd, comm, info, l, stag, Mode::Standard);
    // SAFETY: the caller's send buffer, valid until the send completes
    // within this call.
    let sent = unsafe { e.send(&s, None) };
    drop(e);
    let send_rc = match sent {
        Ok(Sent::Done) => 0,
        Ok(Sent::Pending(j)) => wait_ours(j).error(),
        Err(()) => {
            // The engine could not pack the data: the real MPI's send, as
            // `MPI_Isend` falls back to.
            let mut r = req_null();
            // SAFETY: the caller's buffer; our own request, waited below.
            unsafe {
                let rc = send::real_isend(
                    sbuf,
                    scount,
                    sdt,
                    dest,
                    stag,
                    comm,
                    Mode::Standard,
                    false,
                    &mut r,
                );
                if rc != 0 {
                    rc
                } else {
                    ffi::PMPI_Wait(&mut r, ffi::RSMPI_STATUS_IGNORE)
                }
            }
        }
    };
    let st = wait_ours(i);
    // SAFETY: the caller's status pointer.
    unsafe { status_rules::write_status(&st, status, call) };
    let rc = st.error();
    Some(raise(comm, if rc != 0 { rc } else { send_rc }))
}

/// Whether heapmpi serves either half of a send-receive pair (else the
/// whole call is the real MPI's).
#[allow(clippy::too_many_arguments)]
pub(super) fn pair_is_ours(
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
) -> bool {
    engine::enabled() && handles_ok() && {
        let mut e = engine::lock();
        route_send(&mut e, sbuf, scount, sdt, dest, stag, comm).is_some()
            || !matches!(
                route_recv(&mut e, rbuf, rcount, Some(rdt), src, rtag, comm).0,
                Route::Real
            )
    }
}

/// A copy of `count` elements of `dtype` (described by `d`) at `buf`,
/// packed, and its length: the outgoing data of the `_replace` calls.
///
/// # Safety
/// `buf` holds its elements.
pub(super) unsafe fn packed_copy(
    buf: *const c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    d: &dt::Dt,
    comm: ffi::MPI_Comm,
) -> (Vec<u8>, usize) {
    let n = dt::packed_size(count, d);
    let mut tmp = vec![0u8; n.max(1)];
    if d.contig {
        // SAFETY: the caller's buffer holds `n` bytes.
        unsafe { core::ptr::copy_nonoverlapping(buf as *const u8, tmp.as_mut_ptr(), n) };
    } else {
        // SAFETY: as above, packed by the real MPI.
        unsafe { dt::pack(buf as *const u8, count, dtype, tmp.as_mut_ptr(), n, comm) };
    }
    (tmp, n)
}

/// `MPI_Sendrecv_replace`: the outgoing data is packed into a temporary
/// buffer first.
///
/// # Safety
/// As `MPI_Sendrecv_replace`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    dest: c_int,
    stag: c_int,
    src: c_int,
    rtag: c_int,
    comm: ffi::MPI_Comm,
    status: *mut ffi::MPI_Status,
) -> c_int {
    crate::profile::data(count as i64, dtype);
    let d = if engine::enabled() && handles_ok() {
        let mut e = engine::lock();
        let ours = route_send(&mut e, buf, count, dtype, dest, stag, comm).is_some()
            || !matches!(
                route_recv(&mut e, buf, count, Some(dtype), src, rtag, comm).0,
                Route::Real
            );
        if ours {
            e.dts.get(dtype)
        } else {
            None
        }
    } else {
        None
    };
    let Some(d) = d else {
        // SAFETY: forwarded unchanged.
        return unsafe {
            ffi::PMPI_Sendrecv_replace(buf, count, dtype, dest, stag, src, rtag, comm, status)
        };
    };
    // SAFETY: the caller's buffer holds its elements.
    let (tmp, n) = unsafe { packed_copy(buf, count, dtype, &d, comm) };
    // SAFETY: `tmp` holds the packed data as bytes.
    unsafe {
        sendrecv_as(
            tmp.as_ptr().cast(),
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
            status,
            Call::SendrecvReplace,
        )
    }
}

// ----- probes -----

/// What a probe of the real MPI found.
pub(super) enum RealProbe {
    /// Nothing.
    None,
    /// A message no pending polled receive can take.
    Found(ffi::MPI_Status),
    /// A message an earlier polled receive takes: look again.
    Retry,
    /// The real MPI's error.
    Err(c_int),
}

/// Probes the real MPI for a wildcard probe on a communicator spanning
/// nodes. A message that a pending polled receive matches belongs to that
/// receive (it was posted first, and the real MPI would have matched it on
/// arrival): progress hands it over and the probe looks again.
pub(super) fn real_probe(id: u64, src: c_int, tag: c_int, comm: ffi::MPI_Comm) -> RealProbe {
    let mut f: c_int = 0;
    // SAFETY: a zeroed status is a valid out-buffer.
    let mut st: ffi::MPI_Status = unsafe { core::mem::zeroed() };
    // SAFETY: valid arguments and out-pointers.
    let rc = unsafe { ffi::PMPI_Iprobe(src, tag, comm, &mut f, &mut st) };
    if rc != 0 {
        return RealProbe::Err(rc);
    }
    if f == 0 {
        return RealProbe::None;
    }
    let mut e = engine::lock();
    if e.polled_matches(id, st.MPI_SOURCE, st.MPI_TAG) {
        e.progress();
        return RealProbe::Retry;
    }
    RealProbe::Found(st)
}

/// `MPI_Probe`, `MPI_Iprobe` (`blocking` false), and with `message` the
/// matched probes `MPI_Mprobe`/`MPI_Improbe`, which take the message out of
/// the queue into a message handle.
///
/// # Safety
/// As the MPI calls (`flag` is only written when not `blocking`).
pub unsafe fn probe(
    src: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    flag: *mut c_int,
    message: Option<*mut ffi::MPI_Message>,
    status: *mut ffi::MPI_Status,
    blocking: bool,
) -> c_int {
    let take = message.is_some();
    let route = if engine::enabled() && (!take || handles_ok()) {
        let mut e = engine::lock();
        match route_recv(&mut e, core::ptr::null(), 0, None, src, tag, comm).0 {
            Route::Real => None,
            Route::Local(info) => Some((info.id, false)),
            Route::Polled(info) => Some((info.id, true)),
        }
    } else {
        None
    };
    let Some((id, both)) = route else {
        // SAFETY: forwarded unchanged.
        return unsafe {
            match (message, blocking) {
                (None, true) => ffi::PMPI_Probe(src, tag, comm, status),
                (None, false) => ffi::PMPI_Iprobe(src, tag, comm, flag, status),
                (Some(m), true) => ffi::PMPI_Mprobe(src, tag, comm, m, status),
                (Some(m), false) => ffi::PMPI_Improbe(src, tag, comm, flag, m, status),
            }
        };
    };
    let set_flag = |f: c_int| {
        if !blocking {
            // SAFETY: a non-blocking probe's caller passes a valid flag.
            unsafe { *flag = f };
        }
    };
    let call = match (take, blocking) {
        (false, true) => Call::Probe,
        (false, false) => Call::Iprobe,
        (true, true) => Call::Mprobe,
        (true, false) => Call::Improbe,
    };
    let mut spins = 0u32;
    let mut w = Waiter::new();
    loop {
        let found = engine::lock().probe(comm, id, src, tag, take);
        if let Some((st, slot)) = found {
            // SAFETY: the caller's pointers.
            unsafe {
                status_rules::write_status(&st, status, call);
                if let (Some(m), Some(slot)) = (message, slot) {
                    *m = enc_msg(slot);
                }
            }
            set_flag(1);
            return 0;
        }
        if both {
            match real_probe(id, src, tag, comm) {
                RealProbe::Err(rc) => return rc,
                RealProbe::Found(st) => match message {
                    None => {
                        // SAFETY: the caller's status.
                        unsafe { status_rules::write_status(&St::Real(st), status, call) };
                        set_flag(1);
                        return 0;
                    }
                    Some(m) => {
                        // Take exactly that message: the first from its
                        // source with its tag.
                        let mut f: c_int = 0;
                        // SAFETY: valid arguments and out-pointers.
                        let rc = unsafe {
                            ffi::PMPI_Improbe(st.MPI_SOURCE, st.MPI_TAG, comm, &mut f, m, status)
                        };
                        if rc != 0 || f != 0 {
                            set_flag(f);
                            return rc;
                        }
                    }
                },
                RealProbe::Retry => continue,
                RealProbe::None => {}
            }
        }
        if !blocking {
            set_flag(0);
            return 0;
        }
        spins = spins.wrapping_add(1);
        backoff(spins);
        poke_real(spins);
        w.tick(spins);
    }
}

/// `MPI_Mrecv` and `MPI_Imrecv` (with `request`).
///
/// # Safety
/// As the MPI calls.
pub unsafe fn mrecv(
    buf: *mut c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    message: *mut ffi::MPI_Message,
    status: *mut ffi::MPI_Status,
    request: Option<*mut ffi::MPI_Request>,
) -> c_int {
    crate::profile::data(count as i64, dtype);
    // SAFETY: the caller's message handle.
    let slot = if message.is_null() {
        None
    } else {
        dec_msg(unsafe { *message })
    };
    let d = if count >= 0 { dt::info(dtype) } else { None };
    let (Some(slot), Some(d)) = (slot, d) else {
        // SAFETY: forwarded unchanged.
        return unsafe {
            match request {
                Some(r) => ffi::PMPI_Imrecv(buf, count, dtype, message, r),
                None => ffi::PMPI_Mrecv(buf, count, dtype, message, status),
            }
        };
    };
    let mut e = engine::lock();
    let Some((m, comm)) = e.take_probed(slot) else {
        drop(e);
        // Not a live message of ours: let the real MPI report it.
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Mrecv(buf, count, dtype, message, status) };
    };
    // SAFETY: reading an MPI constant; the caller's handle.
    unsafe { *message = ffi::RSMPI_MESSAGE_NULL };
    // SAFETY: `m` is a live header (a matched probe keeps it).
    let comm_id = unsafe { (*m).comm_id };
    let spec = RecvSpec {
        buf: buf as *mut u8,
        count,
        dtype,
        dt: d,
        comm,
        comm_id,
        src: any_source(),
        tag: any_tag(),
    };
    match request {
        Some(r) => {
            match e.new_req(comm, State::Op(Op::Posted)) {
                Some(i) => {
                    e.recv_probed(m, i, spec);
                    // SAFETY: the caller's out-pointer.
                    unsafe { *r = enc_req(i) };
                }
                None => return ffi::MPI_ERR_INTERN as c_int,
            }
            0
        }
        None => {
            let st = e.recv_probed_now(m, &spec);
            drop(e);
            // SAFETY: the caller's status.
            unsafe { status_rules::write_status(&st, status, Call::Mrecv) };
            raise(comm, st.error())
        }
    }
}

// ----- completion -----
