//! Completion of one request: `MPI_Wait`, `MPI_Test`,
//! `MPI_Request_free`, `MPI_Request_get_status` and `MPI_Cancel`, and what
//! every completion call shares (waiting, ringing the peers a wait needs).
//! The `all`/`any`/`some` forms, over arrays that mix heapmpi's requests
//! with the real MPI's, are in [`super::complete_many`].
//!
//! Statuses are written as the real MPI's same call would write them
//! (`status_rules`): heapmpi's requests through the learned rules, the real
//! MPI's requests by the real MPI itself, straight into the caller's
//! status (so fields it leaves alone stay alone). `MPI_ERROR` is set by
//! the multiple-completion calls, for every completed request, only when
//! they return `MPI_ERR_IN_STATUS` (MPI-4.0 §3.7.5).

use core::ffi::c_int;

use super::*;

/// Nanoseconds a caller waits before it rings the peers its pending sends
/// need (so that a peer inside the real MPI gets its progress thread to
/// take over; see `p2p::progress`): long enough that a receiver merely
/// arriving a little later is not disturbed.
const RING_AFTER_NS: u64 = 20_000;

/// Nanoseconds between rings while the wait goes on (the first ring may
/// have found the peer inside heapmpi, about to leave for the real MPI).
const RING_EVERY_NS: u64 = 200_000;

/// What a waiting caller does now and then besides progress (every 64
/// rounds): returns held headers (see `Engine::idle`) and, once it has
/// waited [`RING_AFTER_NS`], rings the peers it waits for.
pub(super) struct Waiter {
    /// When the wait started (0: not yet looked at).
    since: u64,
    /// When it last rang.
    rung: u64,
}

impl Waiter {
    pub(super) fn new() -> Waiter {
        Waiter { since: 0, rung: 0 }
    }

    /// Round `spins` of a wait, outside the engine.
    pub(super) fn tick(&mut self, spins: u32) {
        if spins % 64 == 0 {
            self.tick_locked(&mut engine::lock(), spins);
        }
    }

    /// Round `spins` of a wait, inside the engine.
    fn tick_locked(&mut self, e: &mut Engine, spins: u32) {
        if spins % 64 != 0 {
            return;
        }
        if spins % 1024 == 64 {
            e.idle();
        }
        let now = crate::sys::monotonic_ns();
        if self.since == 0 {
            self.since = now;
        } else if now - self.since >= RING_AFTER_NS && now - self.rung >= RING_EVERY_NS {
            self.rung = now;
            e.ring_waited();
        }
    }

    /// One round of waiting: back off, drive the real MPI now and then,
    /// and the periodic work of [`Waiter::tick`].
    pub(super) fn pause(&mut self, spins: &mut u32) {
        *spins = spins.wrapping_add(1);
        backoff(*spins);
        poke_real(*spins);
        self.tick(*spins);
    }
}

/// Most entries of an array whose "nothing complete" a test of many
/// requests remembers.
const PENDING_ARRAY_MAX: usize = 32;

/// The request array of the last `MPI_Testany`, `Testall` or `Testsome`
/// that found nothing complete while every entry was null or a receive
/// waiting in heapmpi's queue (`Engine::waits_in_queue`), and the count of
/// changes then: until something changes (`engine::unchanged_since`) the
/// same array gets the same answer without the engine. HPCC RandomAccess
/// polls its posted receives with `MPI_Testany` once per update.
struct PendingArray {
    changes: u64,
    len: usize,
    bits: [usize; PENDING_ARRAY_MAX],
}

/// [`PendingArray`] for the threads that make MPI calls, below
/// `MPI_THREAD_MULTIPLE` only.
struct CallerOnly(core::cell::UnsafeCell<PendingArray>);

// SAFETY: reached only through `pending_array`, which callers use below
// MPI_THREAD_MULTIPLE only, from inside MPI calls: those never overlap
// (FUNNELED: one thread makes them; SERIALIZED: the program orders them,
// which orders these accesses too), and the progress thread never calls
// it.
unsafe impl Sync for CallerOnly {}

static PENDING_ARRAY: CallerOnly = CallerOnly(core::cell::UnsafeCell::new(PendingArray {
    changes: 0,
    len: 0,
    bits: [0; PENDING_ARRAY_MAX],
}));

/// The remembered array, for a caller inside an MPI call below
/// `MPI_THREAD_MULTIPLE` (else `None`).
#[allow(clippy::mut_from_ref)]
fn pending_array() -> Option<&'static mut PendingArray> {
    if engine::multi() {
        return None;
    }
    // SAFETY: see `CallerOnly`: no other reference to it is live, since
    // MPI calls do not overlap here and each use ends within its call.
    Some(unsafe { &mut *PENDING_ARRAY.0.get() })
}

/// The bits of a request handle.
fn req_bits(r: ffi::MPI_Request) -> usize {
    crate::raw::RawHandle::to_bits(r.0)
}

/// Whether `reqs` is the array a test of many found all pending, and
/// nothing has changed since (see [`PendingArray`]).
pub(super) fn known_pending_array(reqs: &[ffi::MPI_Request]) -> bool {
    let Some(p) = pending_array() else {
        return false;
    };
    p.len == reqs.len()
        && p.len > 0
        && p.bits[..p.len]
            .iter()
            .zip(reqs)
            .all(|(&b, &r)| b == req_bits(r))
        && engine::unchanged_since(p.changes)
}

/// After a test of many found nothing complete in `reqs`, under the engine:
/// remembers the array if every entry is null or a receive waiting in
/// heapmpi's queue.
pub(super) fn note_pending_array(e: &Engine, reqs: &[ffi::MPI_Request]) {
    if reqs.len() > PENDING_ARRAY_MAX {
        return;
    }
    let Some(p) = pending_array() else {
        return;
    };
    let null = req_bits(req_null());
    let stable = reqs.iter().all(|&r| match dec_req(r) {
        Some(s) => e.waits_in_queue(s),
        None => req_bits(r) == null,
    });
    if !stable {
        p.len = 0;
        return;
    }
    p.changes = e.changes();
    p.len = reqs.len();
    for (b, &r) in p.bits.iter_mut().zip(reqs) {
        *b = req_bits(r);
    }
}

/// Whether `reqs` holds a request of the real MPI (not heapmpi's, not
/// null).
pub(super) fn any_real(reqs: &[ffi::MPI_Request]) -> bool {
    let null = req_bits(req_null());
    reqs.iter()
        .any(|&r| req_bits(r) != null && dec_req(r).is_none())
}

/// Waits for heapmpi request `i` and finishes it (releases a one-shot slot,
/// deactivates a persistent one). Returns its status.
pub(super) fn wait_ours(i: u32) -> St {
    let mut spins = 0u32;
    let mut w = Waiter::new();
    loop {
        if spins % 16 == 0 || !engine::quiet() {
            let mut e = engine::lock();
            e.progress();
            if let Some(st) = e.finish(i) {
                return st;
            }
            w.tick_locked(&mut e, spins);
        }
        spins = spins.wrapping_add(1);
        backoff(spins);
        poke_real(spins);
    }
}

/// `MPI_STATUS_IGNORE`.
pub(super) fn ignore_status() -> *mut ffi::MPI_Status {
    // SAFETY: reading an MPI constant.
    unsafe { ffi::RSMPI_STATUS_IGNORE }
}

/// `MPI_ERR_REQUEST` through `MPI_COMM_WORLD`'s handler (a stale or
/// foreign heapmpi handle).
pub(super) fn bad_request() -> c_int {
    // SAFETY: reading an MPI constant.
    raise(
        unsafe { ffi::RSMPI_COMM_WORLD },
        ffi::MPI_ERR_REQUEST as c_int,
    )
}

/// The slot of the request `*request` if it is heapmpi's.
///
/// # Safety
/// `request` is null or points at a request handle.
unsafe fn ours_at(request: *const ffi::MPI_Request) -> Option<u32> {
    if request.is_null() {
        return None;
    }
    // SAFETY: per the contract.
    dec_req(unsafe { *request })
}

/// The live heapmpi request `i`: whether it is persistent, and its
/// communicator.
pub(super) fn describe(e: &mut Engine, i: u32) -> Option<(bool, ffi::MPI_Comm)> {
    e.req(i as usize).map(|r| (r.ext.persist.is_some(), r.comm))
}

/// Completes the caller's handle of [`engine::SENT_SLOT`], the shared
/// request of every send that completed within its call (an eager send
/// through a fast box): nothing to wait for or progress, no slot to
/// release, no error to raise (its communicator is never asked).
///
/// # Safety
/// `request` and `status` as the completion call's.
unsafe fn finish_sent(request: *mut ffi::MPI_Request, status: *mut ffi::MPI_Status, call: Call) {
    // SAFETY: per the contract.
    unsafe {
        status_rules::write_status(&St::Sent, status, call);
        *request = req_null();
    }
}

/// `MPI_Wait`.
///
/// # Safety
/// As `MPI_Wait`.
pub unsafe fn wait(request: *mut ffi::MPI_Request, status: *mut ffi::MPI_Status) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe { wait_as(request, status, Call::Wait) }
}

/// `MPI_Wait`, writing the status as `call` does (`MPI_Sendrecv` waits
/// for its receive as `MPI_Recv`).
///
/// # Safety
/// As `MPI_Wait`.
pub(super) unsafe fn wait_as(
    request: *mut ffi::MPI_Request,
    status: *mut ffi::MPI_Status,
    call: Call,
) -> c_int {
    // SAFETY: the caller's request.
    let Some(i) = (unsafe { ours_at(request) }) else {
        if engine::enabled() && engine::any_polled() {
            // SAFETY: the caller's arguments.
            return unsafe { wait_real_polling(request, status) };
        }
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Wait(request, status) };
    };
    if i == engine::SENT_SLOT {
        // SAFETY: the caller's pointers.
        unsafe { finish_sent(request, status, call) };
        return 0;
    }
    let Some((pers, comm)) = describe(&mut engine::lock(), i) else {
        return bad_request();
    };
    let st = wait_ours(i);
    // SAFETY: the caller's pointers.
    unsafe {
        status_rules::write_status(&st, status, call);
        if !pers {
            *request = req_null();
        }
    }
    bury();
    raise(comm, st.error())
}

/// `MPI_Wait` on the real MPI's request while a polled receive is pending
/// here: tested in a loop with heapmpi's progress between the tests, for
/// the reason [`real_while_polled`] gives.
///
/// # Safety
/// As `MPI_Wait`.
unsafe fn wait_real_polling(request: *mut ffi::MPI_Request, status: *mut ffi::MPI_Status) -> c_int {
    let mut spins = 0u32;
    loop {
        let mut flag: c_int = 0;
        // SAFETY: the caller's request and status.
        let rc = unsafe { ffi::PMPI_Test(request, &mut flag, status) };
        if rc != 0 || flag != 0 {
            return rc;
        }
        engine::lock().progress();
        spins = spins.wrapping_add(1);
        backoff(spins);
    }
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
    let Some(i) = (unsafe { ours_at(request) }) else {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Test(request, flag, status) };
    };
    if i == engine::SENT_SLOT {
        // SAFETY: the caller's pointers.
        unsafe {
            finish_sent(request, status, Call::Test);
            *flag = 1;
        }
        return 0;
    }
    if engine::known_pending(i) {
        poke_real_after_test();
        // SAFETY: the caller's flag.
        unsafe { *flag = 0 };
        return 0;
    }
    let mut e = engine::lock();
    let Some((pers, comm)) = describe(&mut e, i) else {
        drop(e);
        return bad_request();
    };
    e.progress();
    let done = e.finish(i);
    if done.is_none() {
        e.note_pending(i);
    }
    drop(e);
    match done {
        Some(st) => {
            // SAFETY: the caller's pointers.
            unsafe {
                status_rules::write_status(&st, status, Call::Test);
                *flag = 1;
                if !pers {
                    *request = req_null();
                }
            }
            bury();
            raise(comm, st.error())
        }
        None => {
            poke_real_after_test();
            // SAFETY: the caller's flag.
            unsafe { *flag = 0 };
            0
        }
    }
}

/// Whether any entry of `reqs` is a heapmpi request.
pub(super) fn any_ours(reqs: &[ffi::MPI_Request]) -> bool {
    reqs.iter().any(|&r| dec_req(r).is_some())
}

/// The requests of an array call as a slice.
///
/// # Safety
/// `p` points at `n` requests (or `n` is 0).
pub(super) unsafe fn req_slice<'a>(
    p: *mut ffi::MPI_Request,
    n: c_int,
) -> &'a mut [ffi::MPI_Request] {
    if n <= 0 || p.is_null() {
        &mut []
    } else {
        // SAFETY: per the contract.
        unsafe { core::slice::from_raw_parts_mut(p, n as usize) }
    }
}

/// `MPI_Request_free`: an active request completes on its own and then
/// releases everything it holds.
///
/// # Safety
/// As `MPI_Request_free`.
pub unsafe fn request_free(request: *mut ffi::MPI_Request) -> c_int {
    // SAFETY: the caller's request.
    let Some(i) = (unsafe { ours_at(request) }) else {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Request_free(request) };
    };
    {
        let mut e = engine::lock();
        if e.req(i as usize).is_none() {
            drop(e);
            return bad_request();
        }
        e.free_request(i);
    }
    // SAFETY: the caller's handle.
    unsafe { *request = req_null() };
    bury();
    0
}

/// `MPI_Request_get_status`: like `MPI_Test`, without freeing.
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
    if e.req(i as usize).is_none() {
        drop(e);
        return bad_request();
    }
    let st = if !e.active(i) {
        Some(St::Inactive)
    } else if e.test(i) {
        match e.req(i as usize).map(|r| r.state) {
            Some(State::Done(st)) => Some(st),
            _ => None,
        }
    } else {
        None
    };
    drop(e);
    // SAFETY: the caller's pointers.
    unsafe {
        *flag = st.is_some() as c_int;
        if let Some(st) = st {
            status_rules::write_status(&st, status, Call::GetStatus);
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
    let Some(i) = (unsafe { ours_at(request) }) else {
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
