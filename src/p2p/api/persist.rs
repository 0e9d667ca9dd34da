//! Persistent requests: `MPI_*send_init`, `MPI_Recv_init`, `MPI_Start`,
//! `MPI_Startall`.

use core::ffi::{c_int, c_void};

use super::*;

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
    crate::profile::data(count as i64, dtype);
    if engine::enabled() && handles_ok() {
        let mut e = engine::lock();
        if let Some((info, l, d)) = route_send(&mut e, buf, count, dtype, dest, tag, comm) {
            let mut s = send_spec(buf, count, dtype, d, comm, info, l, tag, mode);
            if let Some(i) = new_persistent(&mut e, comm, |e, i| {
                s.dtype = held_type(e, i, dtype, &d);
                Persist::Send(s)
            }) {
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

/// A new persistent request, inactive (a wait on it returns at once),
/// with the arguments `make` gives for its slot.
pub(super) fn new_persistent(
    e: &mut Engine,
    comm: ffi::MPI_Comm,
    make: impl FnOnce(&mut Engine, u32) -> Persist,
) -> Option<u32> {
    let i = e.new_req(comm, State::Inactive)?;
    let p = make(e, i);
    e.req(i as usize).unwrap().ext.persist = Some(Box::new(p));
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
    crate::profile::data(count as i64, dtype);
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
            let mut spec = RecvSpec {
                buf: buf as *mut u8,
                count,
                dtype,
                dt: d,
                comm,
                comm_id: info.id,
                src,
                tag,
            };
            if let Some(i) = new_persistent(&mut e, comm, |e, i| {
                spec.dtype = held_type(e, i, dtype, &d);
                Persist::Recv(spec)
            }) {
                // SAFETY: the caller's out-pointer.
                unsafe { *request = enc_req(i) };
                return 0;
            }
        }
    }
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Recv_init(buf, count, dtype, src, tag, comm, request) }
}

/// The collectives' layer's start of a persistent collective:
/// `f(args, slot)` starts the operation of slot `slot` (inactive) and
/// makes it active through [`coll_activate`] or [`coll_activate_real`].
/// Called without the engine held. Registered once at start.
type CollStart = fn(CollArgs, u32) -> c_int;
static COLL_START: std::sync::OnceLock<CollStart> = std::sync::OnceLock::new();

/// Registers the persistent collectives' start (see [`COLL_START`]).
pub fn set_coll_start(f: CollStart) {
    let _ = COLL_START.set(f);
}

/// A new inactive persistent request for the collective `args`
/// describes, holding `held` (duplicates of the derived datatypes in
/// `args`, freed with the slot); `None` when heapmpi's requests are off or
/// every handle is in use (the caller then frees `held` and makes the real
/// call).
pub fn coll_persistent(
    args: CollArgs,
    held: &[ffi::MPI_Datatype],
) -> Option<(u32, ffi::MPI_Request)> {
    if !engine::enabled() || !handles_ok() {
        return None;
    }
    let mut e = engine::lock();
    let i = new_persistent(&mut e, args.comm, |_, _| Persist::Coll(args))?;
    for &t in held {
        e.hold_type(i, t);
    }
    Some((i, enc_req(i)))
}

/// Makes inactive persistent collective `i` active as a nonblocking
/// collective of the collectives' layer (see `engine::set_coll_progress`).
/// False if it is not an inactive persistent request.
pub fn coll_activate(i: u32) -> bool {
    let mut e = engine::lock();
    match e.req(i as usize) {
        Some(r) if matches!(r.state, State::Inactive) && r.ext.persist.is_some() => {
            r.state = State::Op(Op::Coll { since: 0, rung: 0 });
            true
        }
        _ => false,
    }
}

/// Makes inactive persistent collective `i` active as the real MPI's
/// request `inner` (its start went to the real MPI).
pub fn coll_activate_real(i: u32, inner: ffi::MPI_Request) {
    let mut e = engine::lock();
    if let Some(r) = e.req(i as usize) {
        r.state = State::Real(inner);
    }
}

/// Starts persistent heapmpi request `i`.
pub(super) fn start_ours(e: &mut Engine, i: u32) -> c_int {
    let Some(r) = e.req(i as usize) else {
        return ffi::MPI_ERR_REQUEST as c_int;
    };
    let (Some(p), State::Inactive) = (r.ext.persist.as_deref().copied(), r.state) else {
        return ffi::MPI_ERR_REQUEST as c_int;
    };
    match p {
        // Started by `start` without the engine held.
        Persist::Coll(_) => return ffi::MPI_ERR_INTERN as c_int,
        Persist::Send(s) => {
            if s.mode == Mode::Buffered && !bsend::room(dt::packed_size(s.count, &s.dt), s.comm) {
                return ffi::MPI_ERR_BUFFER as c_int;
            }
            r.state = State::Op(Op::Posted);
            // SAFETY: the persistent request's buffer, valid while active.
            match unsafe { e.send(&s, Some(i)) } {
                Ok(Sent::Done) => e.complete(i, St::Sent),
                Ok(Sent::Pending(_)) => {}
                Err(()) => {
                    e.req(i as usize).unwrap().state = State::Inactive;
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
                    let r = e.req(i as usize).unwrap();
                    r.ext.recv = Some(spec);
                    if rc != 0 {
                        return rc;
                    }
                    r.state = State::Real(inner);
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
    // A persistent collective is started by the collectives' layer, which
    // takes the engine itself (and may call the MPI library).
    let coll = e
        .req(i as usize)
        .and_then(|r| match r.ext.persist.as_deref() {
            Some(Persist::Coll(a)) if matches!(r.state, State::Inactive) => Some(*a),
            _ => None,
        });
    if let (Some(a), Some(c), Some(f)) = (coll, comm, COLL_START.get()) {
        drop(e);
        return raise(c, f(a, i));
    }
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
