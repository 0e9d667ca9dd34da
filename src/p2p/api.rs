//! MPI point-to-point semantics on top of the engine: which calls heapmpi
//! serves, which go to the real MPI, and the request and status rules.
//!
//! Routing, per call:
//! - the engine is off, the communicator is unknown (see `comm`), or an
//!   argument is invalid (rank, tag, count, datatype, communicator): the
//!   whole call goes to the real MPI, which returns exactly its own error
//!   through the communicator's error handler;
//! - `MPI_PROC_NULL`: the real MPI (it does nothing, as it should);
//! - a peer on another node: the real MPI, unchanged;
//! - a local peer: the engine. Every message between two local ranks goes
//!   through heapmpi's queues, whatever the call, so ordering holds.
//! - a receive that can match messages from other nodes too (`MPI_ANY_SOURCE`
//!   on a communicator with remote ranks, or any remote receive posted while
//!   such a wildcard is pending on the same communicator): a heapmpi request
//!   that polls both the queues and the real MPI (matched probes), so receives
//!   keep their posting order across both.

use core::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};

use mpi_sys as ffi;

use super::comm::CommInfo;
use super::dt;
use super::engine::{self, backoff, Engine, Mode, Persist, RecvSpec, SendSpec, Sent, St};
use super::handle::{self, RawHandle};
use crate::stats;

/// Handle kinds (see `handle`).
const REQ: usize = 0;
const MSG: usize = 1;

/// `MPI_TAG_UB` of `MPI_COMM_WORLD` (read at init; Relaxed: written before
/// any communication, published by MPI's own synchronisation).
static TAG_UB: AtomicI32 = AtomicI32::new(i32::MAX);

/// Records the tag upper bound.
pub fn set_tag_ub(ub: i32) {
    TAG_UB.store(ub, Ordering::Relaxed);
}

/// How a call is served.
enum Route {
    /// By the real MPI, unchanged.
    Real,
    /// By the engine.
    Local(&'static CommInfo),
    /// By a heapmpi request that polls both sides.
    Polled(&'static CommInfo),
}

fn comm_null() -> ffi::MPI_Comm {
    // SAFETY: reading an MPI constant.
    unsafe { ffi::RSMPI_COMM_NULL }
}

fn req_null() -> ffi::MPI_Request {
    // SAFETY: reading an MPI constant.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

fn proc_null() -> c_int {
    // SAFETY: reading an MPI constant.
    unsafe { ffi::RSMPI_PROC_NULL }
}

fn any_source() -> c_int {
    // SAFETY: reading an MPI constant.
    unsafe { ffi::RSMPI_ANY_SOURCE }
}

fn any_tag() -> c_int {
    // SAFETY: reading an MPI constant.
    unsafe { ffi::RSMPI_ANY_TAG }
}

/// A null buffer with data to move and a predefined datatype: not
/// `MPI_BOTTOM` with absolute displacements (that needs a derived type), so
/// the real MPI decides (Open MPI reports `MPI_ERR_BUFFER`).
fn null_buffer(buf: *const c_void, count: c_int, d: &dt::Dt) -> bool {
    buf.is_null() && count > 0 && d.size > 0 && d.contig
}

/// Routing of a send.
fn route_send(
    e: &mut Engine,
    buf: *const c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
) -> Option<(&'static CommInfo, u32, dt::Dt)> {
    if comm == comm_null()
        || count < 0
        || tag < 0
        || tag > TAG_UB.load(Ordering::Relaxed)
        || dest == proc_null()
    {
        return None;
    }
    let Some(info) = e.comm_info(comm) else {
        stats::P2P_REAL_UNKNOWN.add(1);
        return None;
    };
    if dest < 0 || dest >= info.size {
        return None;
    }
    let d = e.dts.get(dtype)?;
    if null_buffer(buf, count, &d) {
        return None;
    }
    match info.local_index(dest) {
        Some(l) => Some((info, l, d)),
        None => {
            stats::P2P_REAL_REMOTE.add(1);
            None
        }
    }
}

/// Routing of a receive (or probe, with `dtype` `None`).
fn route_recv(
    e: &mut Engine,
    buf: *const c_void,
    count: c_int,
    dtype: Option<ffi::MPI_Datatype>,
    src: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
) -> (Route, Option<dt::Dt>) {
    let bad = comm == comm_null()
        || count < 0
        || (tag != any_tag() && (tag < 0 || tag > TAG_UB.load(Ordering::Relaxed)))
        || src == proc_null();
    if bad {
        return (Route::Real, None);
    }
    let Some(info) = e.comm_info(comm) else {
        stats::P2P_REAL_UNKNOWN.add(1);
        return (Route::Real, None);
    };
    let d = match dtype {
        Some(t) => match e.dts.get(t) {
            Some(d) if !null_buffer(buf, count, &d) => Some(d),
            _ => return (Route::Real, None),
        },
        None => None,
    };
    let r = if src == any_source() {
        if info.n_remote == 0 {
            Route::Local(info)
        } else {
            Route::Polled(info)
        }
    } else if src < 0 || src >= info.size {
        Route::Real
    } else if info.local_index(src).is_some() {
        Route::Local(info)
    } else if e.polled_on(info.id) {
        Route::Polled(info)
    } else {
        stats::P2P_REAL_REMOTE.add(1);
        Route::Real
    };
    (r, d)
}

/// Writes a status unless the caller ignores it.
///
/// # Safety
/// `out` is `MPI_STATUS_IGNORE` or points at a writable `MPI_Status`.
pub unsafe fn write_status(st: &St, out: *mut ffi::MPI_Status) {
    // SAFETY: reading an MPI constant.
    if out.is_null() || out == unsafe { ffi::RSMPI_STATUS_IGNORE } {
        return;
    }
    match *st {
        St::Real(s) => {
            // SAFETY: per the contract.
            unsafe { *out = s };
        }
        St::Ours {
            source,
            tag,
            bytes,
            error,
            cancelled,
        } => {
            // SAFETY: per the contract; the hidden fields are written as
            // the real MPI's setters write them, so its MPI_Get_count and
            // MPI_Get_elements read them back.
            unsafe {
                (*out).MPI_SOURCE = source;
                (*out).MPI_TAG = tag;
                (*out).MPI_ERROR = error;
                super::status::write_hidden(out, bytes, cancelled);
            }
        }
    }
}

/// The `i`-th status of an array, or `MPI_STATUS_IGNORE`.
fn nth_status(statuses: *mut ffi::MPI_Status, i: usize) -> *mut ffi::MPI_Status {
    // SAFETY: reading MPI constants.
    unsafe {
        if statuses.is_null() || statuses == ffi::RSMPI_STATUSES_IGNORE {
            ffi::RSMPI_STATUS_IGNORE
        } else {
            statuses.add(i)
        }
    }
}

/// Calls the communicator's error handler with `code` and returns `code`.
fn raise(comm: ffi::MPI_Comm, code: c_int) -> c_int {
    if code != 0 && comm != comm_null() {
        // SAFETY: a valid communicator (the operation's own).
        unsafe { ffi::PMPI_Comm_call_errhandler(comm, code) };
    }
    code
}

// ----- sends -----

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
    if engine::enabled() {
        let mut e = engine::lock();
        if let Some((info, l, d)) = route_send(&mut e, buf, count, dtype, dest, tag, comm) {
            let s = send_spec(buf, count, dtype, d, comm, info, l, tag, mode);
            // SAFETY: the caller's buffer, valid for the call.
            match unsafe { e.send(&s, None) } {
                Ok(Sent::Done) => return 0,
                Ok(Sent::Pending(i)) => {
                    drop(e);
                    let (_, err) = wait_ours(i);
                    return raise(comm, err);
                }
                Err(()) => {}
            }
        }
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
fn send_spec(
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
    if engine::enabled() && handles_ok() {
        let mut e = engine::lock();
        if let Some((info, l, d)) = route_send(&mut e, buf, count, dtype, dest, tag, comm) {
            let s = send_spec(buf, count, dtype, d, comm, info, l, tag, mode);
            // SAFETY: the caller keeps the buffer until completion.
            match unsafe { e.send(&s, None) } {
                Ok(Sent::Done) => {
                    if let Some(i) = e.new_req(comm) {
                        // A fresh slot's status is already the empty one a
                        // completed send reports.
                        e.req(i as usize).unwrap().done = true;
                        // SAFETY: the caller's out-pointer.
                        unsafe { *request = enc_req(i) };
                        return 0;
                    }
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
unsafe fn real_isend(
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

/// heapmpi's request handle for slot `i`.
fn enc_req(i: u32) -> ffi::MPI_Request {
    ffi::MPI_Request(handle::encode(REQ, i as usize))
}

/// The slot of a heapmpi request handle.
#[inline]
fn dec_req(r: ffi::MPI_Request) -> Option<u32> {
    handle::decode(REQ, r.0).map(|i| i as u32)
}

/// heapmpi's message handle for slot `i`.
fn enc_msg(i: u32) -> ffi::MPI_Message {
    ffi::MPI_Message(handle::encode(MSG, i as usize))
}

/// The slot of a heapmpi message handle.
fn dec_msg(m: ffi::MPI_Message) -> Option<usize> {
    handle::decode(MSG, m.0)
}

/// Whether heapmpi can issue handles here.
fn handles_ok() -> bool {
    fn f<H: RawHandle>(_: H) -> bool {
        handle::available::<H>()
    }
    f(req_null().0)
}

/// Drives the real MPI's progress now and then while heapmpi waits, so
/// that its pending operations (to other nodes, collectives) keep moving.
fn poke_real(spins: u32) {
    if spins % 256 == 255 {
        let mut flag: c_int = 0;
        // SAFETY: a probe with valid out-pointers; it consumes nothing.
        unsafe {
            ffi::PMPI_Iprobe(
                any_source(),
                any_tag(),
                ffi::RSMPI_COMM_WORLD,
                &mut flag,
                ffi::RSMPI_STATUS_IGNORE,
            )
        };
    }
}

/// Returns held headers now and then while a caller waits (see
/// `Engine::idle`).
fn idle_now(spins: u32) {
    if spins % 1024 == 64 {
        engine::lock().idle();
    }
}

/// Spins after which a waiting standard send is staged (stage-on-stall).
const STALL_SPINS: u32 = 2000;

/// Waits for heapmpi request `i`; completes it (releases a one-shot slot,
/// deactivates a persistent one). Returns its status and error.
fn wait_ours(i: u32) -> (St, c_int) {
    let mut spins = 0u32;
    loop {
        if spins % 16 == 0 || !engine::quiet() {
            let mut e = engine::lock();
            e.progress();
            if let Some(r) = finish_if_done(&mut e, i) {
                return r;
            }
            if spins == STALL_SPINS {
                e.try_stage(i);
            }
            if spins % 1024 == 64 {
                e.idle();
            }
        }
        spins = spins.wrapping_add(1);
        backoff(spins);
        poke_real(spins);
    }
}

/// If request `i` is inactive or complete, finishes it. The caller has
/// made progress (once per pass over its requests).
fn finish_if_done(e: &mut Engine, i: u32) -> Option<(St, c_int)> {
    let w = e.wild;
    let r = e.req(i as usize)?;
    if r.persist.is_some() && !r.active {
        return Some((St::empty(w), 0));
    }
    if !e.check(i) {
        return None;
    }
    let r = e.req(i as usize).unwrap();
    let st = r.st;
    if r.persist.is_some() {
        r.active = false;
    } else {
        e.release(i);
    }
    Some((st, st.error()))
}

// ----- receives -----

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
    if engine::enabled() {
        let mut e = engine::lock();
        if let Some(i) = post_ours(&mut e, buf, count, dtype, src, tag, comm) {
            drop(e);
            let (st, err) = wait_ours(i);
            // SAFETY: the caller's status pointer.
            unsafe { write_status(&st, status) };
            return raise(comm, err);
        }
    }
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Recv(buf, count, dtype, src, tag, comm, status) }
}

/// Posts a receive as a heapmpi request if the routing says so; `None`
/// means the real MPI takes the call.
fn post_ours(
    e: &mut Engine,
    buf: *mut c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
) -> Option<u32> {
    let (route, d) = route_recv(e, buf, count, Some(dtype), src, tag, comm);
    let (info, polled) = match route {
        Route::Real => return None,
        Route::Local(info) => (info, false),
        Route::Polled(info) => (info, true),
    };
    let i = e.new_req(comm)?;
    let spec = RecvSpec {
        buf: buf as *mut u8,
        count,
        dtype,
        dt: d.unwrap(),
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
    if engine::enabled() && handles_ok() {
        let mut e = engine::lock();
        if let Some(i) = post_ours(&mut e, buf, count, dtype, src, tag, comm) {
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
    let ours = engine::enabled() && handles_ok() && {
        let mut e = engine::lock();
        route_send(&mut e, sbuf, scount, sdt, dest, stag, comm).is_some()
            || !matches!(
                route_recv(&mut e, rbuf, rcount, Some(rdt), src, rtag, comm).0,
                Route::Real
            )
    };
    if !ours {
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
        let rc0 = wait(&mut reqs[0], status);
        if rc0 != 0 {
            rc0
        } else {
            rc1
        }
    }
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
    let n = dt::packed_size(count, &d);
    let mut tmp = vec![0u8; n.max(1)];
    if d.contig {
        // SAFETY: the caller's buffer holds `n` bytes.
        unsafe { core::ptr::copy_nonoverlapping(buf as *const u8, tmp.as_mut_ptr(), n) };
    } else {
        // SAFETY: as above, packed by the real MPI.
        unsafe { dt::pack(buf as *const u8, count, dtype, tmp.as_mut_ptr(), n, comm) };
    }
    // SAFETY: `tmp` holds the packed data as bytes.
    unsafe {
        sendrecv(
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
        )
    }
}

// ----- probes -----

/// What a probe of the real MPI found.
enum RealProbe {
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
fn real_probe(id: u64, src: c_int, tag: c_int, comm: ffi::MPI_Comm) -> RealProbe {
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
    let mut spins = 0u32;
    loop {
        let found = engine::lock().probe(comm, id, src, tag, take);
        if let Some((st, slot)) = found {
            // SAFETY: the caller's pointers.
            unsafe {
                write_status(&st, status);
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
                        unsafe { write_status(&St::Real(st), status) };
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
        idle_now(spins);
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
            match e.new_req(comm) {
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
            unsafe { write_status(&st, status) };
            raise(comm, st.error())
        }
    }
}

// ----- completion -----

/// Whether slot `i` is a persistent request (`None`: not a live request).
fn persistent(e: &mut Engine, i: u32) -> Option<bool> {
    e.req(i as usize).map(|r| r.persist.is_some())
}

/// `MPI_ERR_REQUEST` through `MPI_COMM_WORLD`'s handler (a stale or
/// foreign heapmpi handle).
fn bad_request() -> c_int {
    // SAFETY: reading an MPI constant.
    raise(
        unsafe { ffi::RSMPI_COMM_WORLD },
        ffi::MPI_ERR_REQUEST as c_int,
    )
}

/// `MPI_Wait`.
///
/// # Safety
/// As `MPI_Wait`.
pub unsafe fn wait(request: *mut ffi::MPI_Request, status: *mut ffi::MPI_Status) -> c_int {
    // SAFETY: the caller's request.
    let Some(i) = (if request.is_null() {
        None
    } else {
        dec_req(unsafe { *request })
    }) else {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Wait(request, status) };
    };
    let (pers, comm) = {
        let mut e = engine::lock();
        match persistent(&mut e, i) {
            Some(p) => (p, e.req(i as usize).unwrap().comm),
            None => return bad_request(),
        }
    };
    let (st, err) = wait_ours(i);
    // SAFETY: the caller's pointers.
    unsafe {
        write_status(&st, status);
        if !pers {
            *request = req_null();
        }
    }
    raise(comm, err)
}

/// `MPI_Test`.
///
/// # Safety
/// As `MPI_Test`.
pub unsafe fn test(
    request: *mut ffi::MPI_Request,
    flag: *mut c_int,
    status: *mut ffi::MPI_Status,
) -> c_int {
    // SAFETY: the caller's request.
    let Some(i) = (if request.is_null() {
        None
    } else {
        dec_req(unsafe { *request })
    }) else {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Test(request, flag, status) };
    };
    let mut e = engine::lock();
    let Some(pers) = persistent(&mut e, i) else {
        drop(e);
        return bad_request();
    };
    let comm = e.req(i as usize).unwrap().comm;
    e.progress();
    match finish_if_done(&mut e, i) {
        Some((st, err)) => {
            drop(e);
            // SAFETY: the caller's pointers.
            unsafe {
                write_status(&st, status);
                *flag = 1;
                if !pers {
                    *request = req_null();
                }
            }
            raise(comm, err)
        }
        None => {
            drop(e);
            poke_real(255);
            // SAFETY: the caller's flag.
            unsafe { *flag = 0 };
            0
        }
    }
}

/// Whether any entry of `reqs` is a heapmpi request.
fn any_ours(reqs: &[ffi::MPI_Request]) -> bool {
    reqs.iter().any(|&r| dec_req(r).is_some())
}

/// The requests of an array call as a slice.
///
/// # Safety
/// `p` points at `n` requests (or `n` is 0).
unsafe fn req_slice<'a>(p: *mut ffi::MPI_Request, n: c_int) -> &'a mut [ffi::MPI_Request] {
    if n <= 0 || p.is_null() {
        &mut []
    } else {
        // SAFETY: per the contract.
        unsafe { core::slice::from_raw_parts_mut(p, n as usize) }
    }
}

/// Fills `out` with a copy of `reqs` where heapmpi's requests are replaced
/// by `MPI_REQUEST_NULL`, for the real MPI's array calls.
fn real_only(reqs: &[ffi::MPI_Request], out: &mut Vec<ffi::MPI_Request>) {
    out.clear();
    out.extend(
        reqs.iter()
            .map(|&r| if dec_req(r).is_some() { req_null() } else { r }),
    );
}

/// Copies the real entries back after a real array call.
fn merge_real(reqs: &mut [ffi::MPI_Request], tmp: &[ffi::MPI_Request]) {
    for (r, t) in reqs.iter_mut().zip(tmp) {
        if dec_req(*r).is_none() {
            *r = *t;
        }
    }
}

/// Tries to complete heapmpi request `reqs[i]`: on completion writes the
/// status, nulls a one-shot handle, and returns its error.
fn complete_ours(
    e: &mut Engine,
    reqs: &mut [ffi::MPI_Request],
    i: usize,
    status: *mut ffi::MPI_Status,
    spins: u32,
) -> Option<(c_int, ffi::MPI_Comm)> {
    let s = dec_req(reqs[i])?;
    let pers = persistent(e, s)?;
    let comm = e.req(s as usize).unwrap().comm;
    match finish_if_done(e, s) {
        Some((st, err)) => {
            // SAFETY: the caller's status slot.
            unsafe { write_status(&st, status) };
            if !pers {
                reqs[i] = req_null();
            }
            Some((err, comm))
        }
        None => {
            if spins == STALL_SPINS {
                e.try_stage(s);
            }
            None
        }
    }
}

/// Whether heapmpi request `r` is active (not an inactive persistent one).
fn ours_active(e: &mut Engine, r: ffi::MPI_Request) -> bool {
    dec_req(r)
        .and_then(|s| e.req(s as usize).map(|q| q.persist.is_none() || q.active))
        .unwrap_or(false)
}

/// `MPI_Waitall`.
///
/// # Safety
/// As `MPI_Waitall`.
pub unsafe fn waitall(
    count: c_int,
    array: *mut ffi::MPI_Request,
    statuses: *mut ffi::MPI_Status,
) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, count) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Waitall(count, array, statuses) };
    }
    let n = reqs.len();
    let mut done = vec![false; n];
    let mut left = n;
    let mut err_comm: Option<ffi::MPI_Comm> = None;
    let mut spins = 0u32;
    loop {
        {
            let mut e = engine::lock();
            e.progress();
            for i in 0..n {
                let Some(slot) = dec_req(reqs[i]).filter(|_| !done[i]) else {
                    continue;
                };
                if e.req(slot as usize).is_none() {
                    drop(e);
                    return bad_request();
                }
                if let Some((err, comm)) =
                    complete_ours(&mut e, reqs, i, nth_status(statuses, i), spins)
                {
                    done[i] = true;
                    left -= 1;
                    if err != 0 && err_comm.is_none() {
                        err_comm = Some(comm);
                    }
                }
            }
        }
        for i in 0..n {
            if done[i] || dec_req(reqs[i]).is_some() {
                continue;
            }
            let mut flag: c_int = 0;
            // SAFETY: a zeroed status is a valid out-buffer.
            let mut st: ffi::MPI_Status = unsafe { core::mem::zeroed() };
            // SAFETY: a real request of the caller's array.
            let rc = unsafe { ffi::PMPI_Test(&mut reqs[i], &mut flag, &mut st) };
            if flag != 0 || rc != 0 {
                st.MPI_ERROR = rc;
                if rc != 0 && err_comm.is_none() {
                    // SAFETY: reading an MPI constant.
                    err_comm = Some(unsafe { ffi::RSMPI_COMM_WORLD });
                }
                // SAFETY: the caller's status slot.
                unsafe { write_status(&St::Real(st), nth_status(statuses, i)) };
                done[i] = true;
                left -= 1;
            }
        }
        if left == 0 {
            break;
        }
        spins = spins.wrapping_add(1);
        backoff(spins);
        poke_real(spins);
        idle_now(spins);
    }
    match err_comm {
        Some(c) => raise(c, ffi::MPI_ERR_IN_STATUS as c_int),
        None => 0,
    }
}

/// `MPI_Testall`: completes all or none.
///
/// # Safety
/// As `MPI_Testall`.
pub unsafe fn testall(
    count: c_int,
    array: *mut ffi::MPI_Request,
    flag: *mut c_int,
    statuses: *mut ffi::MPI_Status,
) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, count) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Testall(count, array, flag, statuses) };
    }
    let mut all = true;
    {
        let mut e = engine::lock();
        e.progress();
        for &r in reqs.iter() {
            if let Some(s) = dec_req(r) {
                if persistent(&mut e, s).is_none() {
                    drop(e);
                    return bad_request();
                }
                if ours_active(&mut e, r) && !e.check(s) {
                    all = false;
                }
            }
        }
    }
    if all {
        for r in reqs.iter() {
            if dec_req(*r).is_some() || *r == req_null() {
                continue;
            }
            let mut f: c_int = 0;
            // SAFETY: a real request; the status is ignored.
            unsafe { ffi::PMPI_Request_get_status(*r, &mut f, ffi::RSMPI_STATUS_IGNORE) };
            if f == 0 {
                all = false;
                break;
            }
        }
    }
    if !all {
        poke_real(255);
        // SAFETY: the caller's flag.
        unsafe { *flag = 0 };
        return 0;
    }
    // Everything is complete: finish each (none blocks).
    // SAFETY: the caller's arrays.
    let rc = unsafe { waitall(count, array, statuses) };
    // SAFETY: the caller's flag.
    unsafe { *flag = 1 };
    rc
}

/// `MPI_Waitany` (`blocking`) and `MPI_Testany`.
///
/// # Safety
/// As the MPI calls.
pub unsafe fn waitany(
    count: c_int,
    array: *mut ffi::MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut ffi::MPI_Status,
    blocking: bool,
) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, count) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe {
            if blocking {
                ffi::PMPI_Waitany(count, array, index, status)
            } else {
                ffi::PMPI_Testany(count, array, index, flag, status)
            }
        };
    }
    // SAFETY: reading an MPI constant.
    let undefined = unsafe { ffi::RSMPI_UNDEFINED };
    let mut tmp = Vec::with_capacity(reqs.len());
    let mut spins = 0u32;
    loop {
        let mut active = false;
        {
            let mut e = engine::lock();
            e.progress();
            for i in 0..reqs.len() {
                if !ours_active(&mut e, reqs[i]) {
                    continue;
                }
                active = true;
                if let Some((err, comm)) = complete_ours(&mut e, reqs, i, status, spins) {
                    drop(e);
                    // SAFETY: the caller's pointers.
                    unsafe {
                        *index = i as c_int;
                        if !blocking {
                            *flag = 1;
                        }
                    }
                    return raise(comm, err);
                }
            }
        }
        real_only(reqs, &mut tmp);
        let (mut idx, mut f): (c_int, c_int) = (undefined, 0);
        // SAFETY: a zeroed status is a valid out-buffer.
        let mut st: ffi::MPI_Status = unsafe { core::mem::zeroed() };
        // SAFETY: an array of real requests and nulls.
        let rc = unsafe {
            ffi::PMPI_Testany(
                tmp.len() as c_int,
                tmp.as_mut_ptr(),
                &mut idx,
                &mut f,
                &mut st,
            )
        };
        merge_real(reqs, &tmp);
        if rc != 0 || (f != 0 && idx != undefined) {
            // SAFETY: the caller's pointers.
            unsafe {
                write_status(&St::Real(st), status);
                *index = idx;
                if !blocking {
                    *flag = 1;
                }
            }
            return rc;
        }
        // The real MPI reports "no active request" as flag set, index
        // MPI_UNDEFINED.
        let real_active = !(f != 0 && idx == undefined);
        if !active && !real_active {
            // No active request at all.
            // SAFETY: the caller's pointers.
            unsafe {
                *index = undefined;
                write_status(&St::empty(engine::lock().wild), status);
                if !blocking {
                    *flag = 1;
                }
            }
            return 0;
        }
        if !blocking {
            // SAFETY: the caller's pointers.
            unsafe {
                *index = undefined;
                *flag = 0;
            }
            return 0;
        }
        spins = spins.wrapping_add(1);
        backoff(spins);
        poke_real(spins);
        idle_now(spins);
    }
}

/// `MPI_Waitsome` (`blocking`) and `MPI_Testsome`.
///
/// # Safety
/// As the MPI calls.
pub unsafe fn waitsome(
    count: c_int,
    array: *mut ffi::MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut ffi::MPI_Status,
    blocking: bool,
) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, count) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe {
            if blocking {
                ffi::PMPI_Waitsome(count, array, outcount, indices, statuses)
            } else {
                ffi::PMPI_Testsome(count, array, outcount, indices, statuses)
            }
        };
    }
    // SAFETY: reading MPI constants.
    let (undefined, ignore) = unsafe { (ffi::RSMPI_UNDEFINED, ffi::RSMPI_STATUSES_IGNORE) };
    let n = reqs.len();
    let want = statuses != ignore && !statuses.is_null();
    // Buffers for the real MPI's share of each pass, made once.
    let mut tmp = Vec::with_capacity(n);
    let mut ridx = vec![0 as c_int; n];
    // SAFETY: zeroed statuses are valid out-buffers.
    let mut rst: Vec<ffi::MPI_Status> = (0..if want { n } else { 0 })
        .map(|_| unsafe { core::mem::zeroed() })
        .collect();
    let mut spins = 0u32;
    loop {
        let mut out = 0usize;
        let mut active = false;
        let mut err_comm: Option<ffi::MPI_Comm> = None;
        {
            let mut e = engine::lock();
            e.progress();
            for i in 0..n {
                if !ours_active(&mut e, reqs[i]) {
                    continue;
                }
                active = true;
                if let Some((err, comm)) =
                    complete_ours(&mut e, reqs, i, nth_status(statuses, out), spins)
                {
                    // SAFETY: the caller's index array has room for `count`.
                    unsafe { *indices.add(out) = i as c_int };
                    out += 1;
                    if err != 0 && err_comm.is_none() {
                        err_comm = Some(comm);
                    }
                }
            }
        }
        real_only(reqs, &mut tmp);
        let mut rout: c_int = 0;
        // SAFETY: arrays of `n` entries.
        let rc = unsafe {
            ffi::PMPI_Testsome(
                n as c_int,
                tmp.as_mut_ptr(),
                &mut rout,
                ridx.as_mut_ptr(),
                if want { rst.as_mut_ptr() } else { ignore },
            )
        };
        merge_real(reqs, &tmp);
        if rc != 0 && err_comm.is_none() {
            // SAFETY: reading an MPI constant.
            err_comm = Some(unsafe { ffi::RSMPI_COMM_WORLD });
        }
        if rout != undefined {
            active = true;
            for k in 0..rout.max(0) as usize {
                // SAFETY: the caller's arrays have room for `count`.
                unsafe {
                    *indices.add(out) = ridx[k];
                    if want {
                        write_status(&St::Real(rst[k]), nth_status(statuses, out));
                    }
                }
                out += 1;
            }
        }
        if out > 0 || !active || !blocking {
            // SAFETY: the caller's out-pointer.
            unsafe { *outcount = if !active { undefined } else { out as c_int } };
            return match err_comm {
                Some(c) => raise(c, ffi::MPI_ERR_IN_STATUS as c_int),
                None => 0,
            };
        }
        spins = spins.wrapping_add(1);
        backoff(spins);
        poke_real(spins);
        idle_now(spins);
    }
}

/// `MPI_Request_free`.
///
/// # Safety
/// As `MPI_Request_free`.
pub unsafe fn request_free(request: *mut ffi::MPI_Request) -> c_int {
    // SAFETY: the caller's request.
    let Some(i) = (if request.is_null() {
        None
    } else {
        dec_req(unsafe { *request })
    }) else {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Request_free(request) };
    };
    let mut e = engine::lock();
    let Some(r) = e.req(i as usize) else {
        drop(e);
        return bad_request();
    };
    if r.done || (r.persist.is_some() && !r.active) {
        e.release(i);
    } else {
        r.freed = true;
        r.persist = None;
    }
    // SAFETY: the caller's handle.
    unsafe { *request = req_null() };
    0
}

/// `MPI_Request_get_status`: like `MPI_Test` without freeing.
///
/// # Safety
/// As `MPI_Request_get_status`.
pub unsafe fn request_get_status(
    request: ffi::MPI_Request,
    flag: *mut c_int,
    status: *mut ffi::MPI_Status,
) -> c_int {
    let Some(i) = dec_req(request) else {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Request_get_status(request, flag, status) };
    };
    let mut e = engine::lock();
    let w = e.wild;
    let Some(r) = e.req(i as usize) else {
        drop(e);
        return bad_request();
    };
    let st = if r.persist.is_some() && !r.active {
        Some(St::empty(w))
    } else if e.test(i) {
        Some(e.req(i as usize).unwrap().st)
    } else {
        None
    };
    drop(e);
    // SAFETY: the caller's pointers.
    unsafe {
        *flag = st.is_some() as c_int;
        if let Some(st) = st {
            write_status(&st, status);
        }
    }
    0
}

/// `MPI_Cancel`.
///
/// # Safety
/// As `MPI_Cancel`.
pub unsafe fn cancel(request: *mut ffi::MPI_Request) -> c_int {
    // SAFETY: the caller's request.
    let Some(i) = (if request.is_null() {
        None
    } else {
        dec_req(unsafe { *request })
    }) else {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Cancel(request) };
    };
    let mut e = engine::lock();
    if e.req(i as usize).is_none() {
        drop(e);
        return bad_request();
    }
    e.cancel(i);
    0
}

// ----- persistent requests -----

/// `MPI_Send_init` and the other modes.
///
/// # Safety
/// As the MPI calls.
#[allow(clippy::too_many_arguments)]
pub unsafe fn send_init(
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
    if engine::enabled() && handles_ok() {
        let mut e = engine::lock();
        if let Some((info, l, d)) = route_send(&mut e, buf, count, dtype, dest, tag, comm) {
            let s = send_spec(buf, count, dtype, d, comm, info, l, tag, mode);
            if let Some(i) = new_persistent(&mut e, comm, Persist::Send(s)) {
                // SAFETY: the caller's out-pointer.
                unsafe { *request = enc_req(i) };
                return 0;
            }
        }
    }
    // SAFETY: forwarded unchanged.
    unsafe {
        match (mode, ready) {
            (Mode::Sync, _) => ffi::PMPI_Ssend_init(buf, count, dtype, dest, tag, comm, request),
            (Mode::Buffered, _) => {
                ffi::PMPI_Bsend_init(buf, count, dtype, dest, tag, comm, request)
            }
            (Mode::Standard, true) => {
                ffi::PMPI_Rsend_init(buf, count, dtype, dest, tag, comm, request)
            }
            (Mode::Standard, false) => {
                ffi::PMPI_Send_init(buf, count, dtype, dest, tag, comm, request)
            }
        }
    }
}

/// A new persistent request, inactive (a wait on it returns at once).
fn new_persistent(e: &mut Engine, comm: ffi::MPI_Comm, p: Persist) -> Option<u32> {
    let i = e.new_req(comm)?;
    let r = e.req(i as usize).unwrap();
    r.persist = Some(p);
    r.active = false;
    r.done = true;
    Some(i)
}

/// `MPI_Recv_init`: heapmpi's whenever the communicator is known, so that
/// each start can route like `MPI_Irecv`.
///
/// # Safety
/// As `MPI_Recv_init`.
pub unsafe fn recv_init(
    buf: *mut c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    if engine::enabled() && handles_ok() {
        let mut e = engine::lock();
        let (route, d) = route_recv(&mut e, buf, count, Some(dtype), src, tag, comm);
        let info = match route {
            Route::Local(info) | Route::Polled(info) => Some(info),
            // A remote source on a known communicator: still ours.
            Route::Real if src >= 0 && d.is_some() => e.comm_info(comm).filter(|i| src < i.size),
            Route::Real => None,
        };
        if let (Some(info), Some(d)) = (info, d.or_else(|| e.dts.get(dtype))) {
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
            if let Some(i) = new_persistent(&mut e, comm, Persist::Recv(spec)) {
                // SAFETY: the caller's out-pointer.
                unsafe { *request = enc_req(i) };
                return 0;
            }
        }
    }
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Recv_init(buf, count, dtype, src, tag, comm, request) }
}

/// Starts persistent heapmpi request `i`.
fn start_ours(e: &mut Engine, i: u32) -> c_int {
    let Some(r) = e.req(i as usize) else {
        return ffi::MPI_ERR_REQUEST as c_int;
    };
    let (Some(p), false) = (r.persist, r.active) else {
        return ffi::MPI_ERR_REQUEST as c_int;
    };
    r.active = true;
    r.done = false;
    r.inner = None;
    let w = e.wild;
    match p {
        Persist::Send(s) => {
            // SAFETY: the persistent request's buffer, valid while active.
            match unsafe { e.send(&s, Some(i)) } {
                Ok(Sent::Done) => e.complete(i, St::empty(w)),
                Ok(Sent::Pending(_)) => {}
                Err(()) => {
                    e.req(i as usize).unwrap().active = false;
                    return ffi::MPI_ERR_INTERN as c_int;
                }
            }
        }
        Persist::Recv(spec) => {
            let (route, _) = route_recv(
                e,
                spec.buf as *const c_void,
                spec.count,
                Some(spec.dtype),
                spec.src,
                spec.tag,
                spec.comm,
            );
            match route {
                Route::Local(..) => {
                    e.post_recv(i, spec, false);
                }
                Route::Polled(..) => {
                    e.post_recv(i, spec, true);
                }
                Route::Real => {
                    let mut inner = req_null();
                    // SAFETY: the persistent request's arguments.
                    let rc = unsafe {
                        ffi::PMPI_Irecv(
                            spec.buf.cast(),
                            spec.count,
                            spec.dtype,
                            spec.src,
                            spec.tag,
                            spec.comm,
                            &mut inner,
                        )
                    };
                    e.req(i as usize).unwrap().recv = Some(spec);
                    e.req(i as usize).unwrap().inner = Some(inner);
                    if rc != 0 {
                        e.req(i as usize).unwrap().active = false;
                        return rc;
                    }
                }
            }
        }
    }
    0
}

/// `MPI_Start`.
///
/// # Safety
/// As `MPI_Start`.
pub unsafe fn start(request: *mut ffi::MPI_Request) -> c_int {
    // SAFETY: the caller's request.
    let Some(i) = (if request.is_null() {
        None
    } else {
        dec_req(unsafe { *request })
    }) else {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Start(request) };
    };
    let mut e = engine::lock();
    let comm = e.req(i as usize).map(|r| r.comm);
    let rc = start_ours(&mut e, i);
    drop(e);
    match comm {
        Some(c) => raise(c, rc),
        None => bad_request(),
    }
}

/// `MPI_Startall`.
///
/// # Safety
/// As `MPI_Startall`.
pub unsafe fn startall(count: c_int, array: *mut ffi::MPI_Request) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, count) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Startall(count, array) };
    }
    for r in reqs.iter_mut() {
        // SAFETY: one request of the caller's array.
        let rc = unsafe { start(r) };
        if rc != 0 {
            return rc;
        }
    }
    0
}

// ----- communicators -----

/// Registers a communicator a creating call just returned (collective over
/// its members, like the call itself).
///
/// # Safety
/// `newcomm` is the creating call's out-pointer.
pub unsafe fn comm_created(rc: c_int, newcomm: *mut ffi::MPI_Comm) -> c_int {
    if rc != 0 || !engine::enabled() || newcomm.is_null() {
        return rc;
    }
    // SAFETY: the creating call succeeded, so `*newcomm` is written.
    let c = unsafe { *newcomm };
    if c == comm_null() {
        return rc;
    }
    if let Some(node) = crate::mpi::outcome().and_then(|o| o.node_comm) {
        super::comm::register_new(c, node.0);
    }
    rc
}
