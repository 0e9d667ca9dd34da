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

mod bsend;
mod complete;
mod complete_many;
mod creation;
#[cfg(heapmpi_mpi41)]
mod get_status;
#[cfg(heapmpi_mpi4_base)]
mod pair;
mod persist;
mod recv;
mod send;

#[cfg(heapmpi_mpi41_buffers)]
pub use bsend::scoped;
pub use bsend::{
    attached, buffer_attach, buffer_detach, detached, forget_comm_buffer, remember_thread_level,
};
pub use complete::*;
pub use complete_many::*;
pub use creation::*;
#[cfg(heapmpi_mpi41)]
pub use get_status::*;
#[cfg(heapmpi_mpi4_base)]
pub use pair::*;
pub use persist::*;
pub use recv::*;
pub use send::*;

use core::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

use mpi_sys as ffi;

use super::engine::{
    self, backoff, CollArgs, Engine, Mode, Op, Persist, RecvSpec, SendSpec, Sent, St, State,
};
use super::status_rules::{self, Call};
use crate::comm::CommInfo;
use crate::dt;
use crate::profile::{self, How};
use crate::req::handle::{dec_msg, dec_req, enc_msg, enc_req, handles_ok};
use crate::stats;

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

/// `MPI_REQUEST_NULL`.
pub fn req_null() -> ffi::MPI_Request {
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
        profile::real(How::Args, None);
        return None;
    }
    let Some(info) = e.comm_info(comm) else {
        stats::P2P_REAL_UNKNOWN.add(1);
        profile::real(How::UnknownComm, None);
        return None;
    };
    let Some(d) = e
        .dts
        .get(dtype)
        .filter(|d| !null_buffer(buf, count, d) && dest >= 0 && dest < info.size)
    else {
        profile::real(How::Args, None);
        return None;
    };
    let bytes = Some(dt::packed_size(count, &d) as u64);
    match info.local_index(dest) {
        Some(l) => {
            profile::heap(bytes);
            Some((info, l, d))
        }
        None => {
            stats::P2P_REAL_REMOTE.add(1);
            profile::real(How::Remote, bytes);
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
        profile::real(How::Args, None);
        return (Route::Real, None);
    }
    let Some(info) = e.comm_info(comm) else {
        stats::P2P_REAL_UNKNOWN.add(1);
        profile::real(How::UnknownComm, None);
        return (Route::Real, None);
    };
    let d = match dtype {
        Some(t) => match e.dts.get(t) {
            Some(d) if !null_buffer(buf, count, &d) => Some(d),
            _ => {
                profile::real(How::Args, None);
                return (Route::Real, None);
            }
        },
        None => None,
    };
    let bytes = d.map(|d| dt::packed_size(count, &d) as u64);
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
    match r {
        Route::Real if src >= 0 && src < info.size => profile::real(How::Remote, bytes),
        Route::Real => profile::real(How::Args, bytes),
        _ => profile::heap(bytes),
    }
    (r, d)
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

/// A request for a nonblocking collective the collectives' layer carries
/// out: the Wait/Test family completes it when that layer says it is done
/// (`engine::set_coll_progress`), like any other of heapmpi's requests.
/// `None` when heapmpi's requests are off or every handle is in use (the
/// caller then makes the real call). Its slot index is the layer's key.
pub fn coll_request(comm: ffi::MPI_Comm) -> Option<(u32, ffi::MPI_Request)> {
    if !engine::enabled() || !handles_ok() {
        return None;
    }
    let i = engine::lock().new_req(comm, State::Op(Op::Coll { since: 0, rung: 0 }))?;
    Some((i, enc_req(i)))
}

/// Drives the real MPI's progress now and then while heapmpi waits, so
/// that its pending operations (to other nodes, collectives) and other
/// ranks' operations that need this rank's progress (Open MPI's
/// shared-memory transport runs one-sided atomics as messages the target
/// handles) keep moving: every 256 rounds of spinning, every 8th round
/// once the wait yields (a round then lasts up to a scheduler turn).
fn poke_real(spins: u32) {
    if spins % 256 == 255 || (engine::yields(spins) && spins % 8 == 7) {
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

/// After a test (`MPI_Test*`) that found nothing: drives the real MPI's
/// progress on every 16th such call, so that a program polling heapmpi's
/// requests still moves the real MPI's pending operations (as the real
/// `MPI_Test` would) without paying a real `MPI_Iprobe` on every poll
/// (HPCC RandomAccess polls twice per update). When ranks outnumber cores
/// it also yields the processor, as Open MPI's progress does then
/// (`mpi_yield_when_idle`): what the poller waits for is usually another
/// rank's turn on this core.
fn poke_real_after_test() {
    if engine::oversubscribed() {
        std::thread::yield_now();
    }
    /// Failed tests so far. A heuristic count: Relaxed load and store (not
    /// a read-modify-write), so racing threads may lose an increment, which
    /// only shifts the next poke.
    static FAILED: AtomicU32 = AtomicU32::new(0);
    let n = FAILED.load(Ordering::Relaxed).wrapping_add(1);
    FAILED.store(n, Ordering::Relaxed);
    if n % 16 == 0 {
        poke_real(255);
    }
}

/// A blocking call to the real MPI, made while this rank has a polled
/// receive pending (a wildcard on a communicator spanning nodes, or a
/// receive behind one: `engine::polled`), runs as its nonblocking form,
/// completed by heapmpi's own wait, whose progress rounds serve the polled
/// receives from the real MPI.
///
/// The real MPI does not know those receives: they are matched by probes
/// from this rank's calls into heapmpi. Were this rank to sit inside a
/// blocking real call, a remote rank's rendezvous send to that wildcard
/// would wait for a receive nobody posts; if what this rank's call waits
/// for comes after that send in the remote rank's program (the next
/// message, its own receive of this rank's send), both wait forever. Seen
/// across two real nodes with each node's ranks not consecutive: every
/// rank posted `MPI_ANY_SOURCE` receives, then `MPI_Send` 1 MiB to its
/// neighbour on the other node. `start` makes the nonblocking call into
/// its out-request and returns its code (an error was already raised
/// through the communicator's handler by the real MPI, as the blocking
/// call would have). The status is written as `call` writes it.
///
/// # Safety
/// `start` is a real nonblocking call with valid arguments (the caller's);
/// `status` is the caller's status pointer.
pub(super) unsafe fn real_while_polled(
    comm: ffi::MPI_Comm,
    status: *mut ffi::MPI_Status,
    call: Call,
    start: impl FnOnce(*mut ffi::MPI_Request) -> c_int,
) -> c_int {
    let mut inner = req_null();
    let rc = start(&mut inner);
    if rc != 0 {
        return rc;
    }
    let Some(i) = engine::lock().wrap_real(comm, inner) else {
        // Every handle in use: the real wait, as before.
        // SAFETY: the request just started; the caller's status.
        return unsafe { ffi::PMPI_Wait(&mut inner, status) };
    };
    let st = wait_ours(i);
    // SAFETY: the caller's status pointer.
    unsafe { status_rules::write_status(&st, status, call) };
    raise(comm, st.error())
}

/// Frees the communicators whose `MPI_Comm_free` waited for their last
/// request (see `Engine::defer_comm_free`), outside the engine: freeing
/// runs attribute callbacks that come back into it.
pub(super) fn bury() {
    if !engine::zombies_ready() {
        return;
    }
    let dead = engine::lock().buriable();
    for mut c in dead {
        // SAFETY: a communicator the program freed and no request uses.
        unsafe { ffi::PMPI_Comm_free(&mut c) };
    }
}

/// The datatype a request that outlives its call uses: `dtype` itself if
/// predefined, else a duplicate that slot `i` holds until it is released,
/// so the program may free its own handle while the operation is pending
/// ("any communication that is currently using this datatype will complete
/// normally", MPI-4.0 §5.1.10). If the duplicate cannot be made, the
/// program's handle is used, as before.
pub(super) fn held_type(
    e: &mut Engine,
    i: u32,
    dtype: ffi::MPI_Datatype,
    d: &dt::Dt,
) -> ffi::MPI_Datatype {
    if d.named {
        return dtype;
    }
    let mut dup = dtype;
    // SAFETY: a valid, committed derived datatype (checked by routing);
    // the duplicate is freed with the slot.
    if unsafe { ffi::PMPI_Type_dup(dtype, &mut dup) } != 0 {
        return dtype;
    }
    e.hold_type(i, dup);
    dup
}
