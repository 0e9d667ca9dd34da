//! The schedule of the nonblocking collectives: the pending operations of
//! every communicator, in call order, under one lock; their posting at the
//! call ([`post`], under the request [`To`] names) and their moving on by
//! every heapmpi call that makes progress ([`progress`], [`idle`]): each
//! operation starts (publishes) in step order as soon as its cell is free,
//! delivers in whatever order the other members' parts arrive, and
//! finishes its step in step order ([`run`]). libNBC's schedule model
//! (Hoefler, Lumsdaine and Rehm, "Implementation and performance analysis
//! of non-blocking collective operations for MPI", SC07): rounds whose
//! dependencies are tested, never waited for; the rounds here are flag
//! steps rather than messages. What one round does for an operation is
//! [`super::small`]'s, [`super::large`]'s or [`super::vector`]'s.

use std::sync::{Mutex, MutexGuard, TryLockError};

use mpi_sys as ffi;

use super::super::{info, ON};
use super::{held, large, release, small, vector, Kind, Pending, Phase};
use crate::comm::node::{Node, CELLS};
use crate::stats;

/// Pending operations, in call order, and the slots of finished ones not
/// yet collected by a completion call.
struct State {
    ops: Vec<Pending>,
    done: Vec<u32>,
}

// SAFETY: the raw pointers are the program's buffers, which MPI lets us
// use until the operation completes, from any thread of the process; the
// state is only reached under its mutex.
unsafe impl Send for State {}

static STATE: Mutex<State> = Mutex::new(State {
    ops: Vec::new(),
    done: Vec::new(),
});

/// Pending or uncollected operations: lets the idle hooks skip the lock.
/// Relaxed: a hint; every completion call looks under the lock.
static LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn lock() -> MutexGuard<'static, State> {
    // Poisoning cannot happen (panic = abort).
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

fn try_lock() -> Option<MutexGuard<'static, State>> {
    match STATE.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// The nonblocking block of `comm`, if its calls run here.
pub(super) fn nb_node(comm: ffi::MPI_Comm) -> Option<&'static Node> {
    if !ON.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    // SAFETY: reading an MPI constant.
    if comm == unsafe { ffi::RSMPI_COMM_NULL } {
        return None;
    }
    info(comm)?.nb.get()?.as_ref()
}

/// Where a nonblocking collective's request goes.
#[derive(Clone, Copy)]
pub(super) enum To {
    /// A new request, written to the caller's out-pointer.
    New(*mut ffi::MPI_Request),
    /// Persistent request slot `i` (`MPI_*_init`), being started, and the
    /// communicator channel its steps are taken on (see
    /// `persist::channel`; `None`: the communicator's own).
    #[cfg_attr(not(heapmpi_mpi4_base), allow(dead_code))]
    Slot(u32, Option<&'static Node>),
}

/// Queues `kind` on `node` under the request `to` names (a new one is
/// written to its out-pointer), and tries to start it. False: no request
/// slot, or the persistent one is not inactive (make the real call).
///
/// # Safety
/// `to`'s out-pointer is the caller's; the buffers in `kind` stay the
/// caller's until the request completes.
pub(super) unsafe fn post(node: &'static Node, comm: ffi::MPI_Comm, kind: Kind, to: To) -> bool {
    // The engine's lock is taken and left before ours: the engine calls
    // `progress` under its own, so ours is never held while taking it.
    let slot = match to {
        To::New(request) => {
            let Some((slot, handle)) = crate::p2p::api::coll_request(comm) else {
                release(&kind);
                return false;
            };
            // SAFETY: the caller's out-pointer.
            unsafe { *request = handle };
            slot
        }
        To::Slot(i, _) => {
            if !crate::p2p::api::coll_activate(i) {
                release(&kind);
                return false;
            }
            i
        }
    };
    // A persistent collective's steps are its channel's (the plan read
    // only what channel and communicator share: members, inline bytes).
    let node = match to {
        To::Slot(_, Some(ch)) => ch,
        _ => node,
    };
    let mut kind = kind;
    let large = (large::payload(&kind, node.n) > node.inline_max).then(|| {
        // SAFETY: per the contract (checked by `large::takes` at the call).
        unsafe { large::prepare(node, &mut kind) }
    });
    let steps = 1 + large.as_ref().map_or(0, |l| l.extra_steps());
    let mut st = lock();
    // Steps are taken in call order, under the lock (threads may call on
    // different communicators at once; MPI forbids it on one).
    let s = node.begin(steps);
    st.ops.push(Pending {
        slot,
        node,
        kind,
        phase: Phase::Queued,
        s,
        last: s + steps - 1,
        delivered: false,
        large,
        stash: None,
    });
    run(&mut st, true);
    stats::COLL_FAST.add(1);
    stats::COLL_NONBLOCKING.add(1);
    crate::profile::heap(None);
    true
}

/// The engine's hook (see `engine::set_coll_progress`).
pub(super) fn progress(slot: Option<u32>, may_call_mpi: bool) -> bool {
    if LIVE.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        return false;
    }
    let Some(mut st) = try_lock() else {
        // Another thread is moving them: nothing finished for us yet.
        return slot.is_none();
    };
    run(&mut st, may_call_mpi);
    match slot {
        None => !st.ops.is_empty(),
        Some(i) => match st.done.iter().position(|&d| d == i) {
            Some(k) => {
                st.done.swap_remove(k);
                LIVE.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
                true
            }
            None => false,
        },
    }
}

/// The flag waits' hook (see `node::set_idle_work`): calling threads only.
pub(super) fn idle() {
    if LIVE.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        return;
    }
    if let Some(mut st) = try_lock() {
        run(&mut st, true);
    }
}

/// Moves every operation on as far as it goes without waiting.
///
/// Operations of one communicator start (publish) in call order, as soon
/// as their cells are free, and deliver their results in whatever order
/// the other members' parts arrive; but each raises its `done` only after
/// every earlier operation of the communicator has, since `done = s` says
/// "finished with every step up to `s`" (the gate of later steps relies on
/// it). For the same reason a member's publication of step `s` is not
/// taken here as proof that it finished `s - 1` (as the blocking
/// collectives take it): it may have started `s` early.
fn run(st: &mut State, may_call_mpi: bool) {
    let State { ops, done } = st;
    let mut k = 0;
    while k < ops.len() {
        let node = ops[k].node;
        // Draining operations have finished their steps here.
        let first = !ops[..k]
            .iter()
            .any(|p| core::ptr::eq(p.node, node) && p.phase != Phase::Draining);
        let p = &mut ops[k];
        if p.phase == Phase::Queued {
            // A later operation of the communicator never starts before
            // an earlier one, nor before ours of `CELLS` steps earlier,
            // which used the same cell (the gate covers the other members'
            // reads of it, not ours), has read everything it needs.
            let s = ops[k].s;
            let held_back = ops[..k].iter().any(|q| {
                core::ptr::eq(q.node, node)
                    && (q.phase == Phase::Queued
                        || (q.phase == Phase::Published && q.s + CELLS <= s))
            });
            let p = &mut ops[k];
            let started = !held_back
                && if p.large.is_some() {
                    large::begin(p)
                } else if let Kind::Vector(_) = p.kind {
                    vector::begin(p)
                } else {
                    // SAFETY: the operation's buffers are the caller's
                    // until it completes (`post`).
                    unsafe { small::begin(p) }
                };
            if !started {
                k += 1;
                continue;
            }
            if p.large.is_some() || matches!(p.kind, Kind::Vector(_)) {
                p.phase = Phase::Published;
            }
        }
        let p = &mut ops[k];
        if p.phase == Phase::Published {
            // SAFETY: as above.
            let worked = unsafe {
                if p.large.is_some() {
                    large::work(p, first, may_call_mpi)
                } else if let Kind::Vector(_) = p.kind {
                    vector::work(p, may_call_mpi)
                } else {
                    small::work(p, may_call_mpi)
                }
            };
            if worked {
                p.phase = Phase::Worked;
            }
        }
        let drains = p.large.as_ref().is_some_and(|l| l.drains())
            || matches!(&p.kind, Kind::Vector(v) if v.drains());
        if p.phase == Phase::Worked
            && !p.delivered
            && !drains
            && (may_call_mpi || p.stash.is_none())
        {
            deliver(p, done);
        }
        if p.phase == Phase::Worked && first && p.large.as_ref().is_some_and(|l| l.serves(&p.kind))
        {
            p.phase = Phase::Serving;
        }
        if p.phase == Phase::Serving {
            let l = p.large.as_ref().expect("a large operation");
            l.serve(p.node, p.s);
            if !p.node.all_done(p.last) {
                k += 1;
                continue;
            }
            // Every reader is done: no job is left to serve. `first` still
            // holds (it did when serving began, and every later operation
            // of the communicator waits behind this one).
            p.node.finish(p.last);
            p.phase = Phase::Draining;
        }
        if p.phase == Phase::Worked && first {
            p.node.finish(p.last);
            if drains || !p.delivered {
                // Not delivered: a stash for a calling thread to unpack.
                p.phase = Phase::Draining;
            } else {
                ops.remove(k);
                // The next operation of the communicator may now be
                // first: look again from the start of what follows.
                continue;
            }
        }
        let p = &mut ops[k];
        if p.phase == Phase::Draining && may_deliver_now(p, may_call_mpi) && p.node.all_done(p.last)
        {
            // Every member is done reading our offer.
            deliver(p, done);
            ops.remove(k);
            continue;
        }
        k += 1;
    }
    LIVE.store(ops.len() + done.len(), std::sync::atomic::Ordering::Relaxed);
}

/// Whether this thread may complete `p`'s request: delivering frees a
/// held datatype duplicate and unpacks a stash, which only a thread that
/// may call the MPI does.
fn may_deliver_now(p: &Pending, may_call_mpi: bool) -> bool {
    may_call_mpi || (held(&p.kind).is_empty() && p.stash.is_none())
}

/// Completes `p`'s request.
fn deliver(p: &mut Pending, done: &mut Vec<u32>) {
    if let Some(v) = p.stash.take() {
        // SAFETY: a calling thread (a stash is delivered only where the
        // MPI may be called); the caller's buffer.
        unsafe { small::unstash(&p.kind, &v, p.node) };
    }
    p.delivered = true;
    for &t in held(&p.kind) {
        let mut t = t;
        // SAFETY: our duplicate, no longer used; a receiving member
        // holding one gets here only where the MPI may be called (it
        // unpacks only there).
        unsafe { ffi::PMPI_Type_free(&mut t) };
    }
    done.push(p.slot);
}
