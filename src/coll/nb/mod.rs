//! Nonblocking collectives on communicators inside one node:
//! `MPI_Ibarrier`, `MPI_Ibcast`, `MPI_Ireduce`, `MPI_Iallreduce`,
//! `MPI_Igather`, `MPI_Iallgather`, `MPI_Ialltoall`, `MPI_Iscatter`,
//! `MPI_Iscan`, `MPI_Iexscan`, `MPI_Ireduce_scatter_block` and
//! `MPI_Ireduce_scatter` (larger than a cell: [`large`]); the `v`
//! forms ([`vector`]) and the neighbourhood ones ([`neighbor`]) build on
//! the same machinery.
//!
//! Each call becomes an operation of a few polled states over the same
//! single-writer, step-carrying flags as the blocking collectives
//! ([`crate::comm::node`]), on a second control block of the communicator
//! (`CommInfo::nb`): the blocking collectives rely on every member
//! finishing its steps in step order, which operations left pending while
//! later blocking calls run would break. Operations are moved on by every
//! heapmpi call that makes point-to-point progress (the Wait/Test family
//! among them), by members waiting on a blocking collective's flags, and
//! by the progress thread, which a member waiting on one rings after a
//! while (a peer sitting in the real MPI then moves its part).
//!
//! Steps are taken at the call, so they follow the communicator's call
//! order, which MPI makes the same on every member (MPI-4.0 §6.12): step
//! numbers agree everywhere. A member publishes its part of each operation
//! in step order as soon as its cell for that step is free, delivers
//! results in whatever order the other members' parts arrive, and raises
//! its `done` flag in step order (see [`run`]), so several operations of a
//! communicator overlap. This is libNBC's schedule model (Hoefler,
//! Lumsdaine and Rehm, "Implementation and performance analysis of
//! non-blocking collective operations for MPI", SC07): rounds whose
//! dependencies are tested, never waited for, in every call; the rounds
//! here are flag steps rather than messages.
//!
//! What is taken: payloads that fit a member's cell inline (at most
//! `HEAPMPI_COLL_INLINE` bytes, agreed by every member since MPI requires
//! matching type signatures), and larger broadcasts and reductions (read
//! in place, [`large`]: a member that cannot get shared memory for them
//! half-way makes them move through the cells, never to the real MPI).
//! Reductions: predefined operations with a native
//! kernel on predefined types, whose result does not depend on the order
//! of combination (integers, `MAX`/`MIN`) or with two members (where
//! `a + b` and `b + a` are the same bits), so the bits are the stock
//! MPI's whatever algorithm it uses. Everything else goes to the real MPI,
//! as do all calls on communicators that span nodes. A nonblocking call
//! cannot wait for the other members to make a control block, so the
//! block comes from a call every member makes at one point: the
//! communicator's creation (`comm::set_eager_blocks`), `MPI_Init` for
//! `MPI_COMM_WORLD` (`coll::prepare`), or else its first blocking
//! collective; until then its calls go to the real MPI.

#[macro_use]
mod entry;

mod calls;
mod large;
mod neighbor;
#[cfg(heapmpi_mpi4_base)]
mod persist;
#[cfg(heapmpi_mpi4_base)]
mod persist_arrays;
#[cfg(heapmpi_mpi4_base)]
mod persist_v;
mod reduce;
mod vcalls;
mod vector;

#[cfg(heapmpi_mpi4_base)]
pub use calls::scatter_init;
#[cfg(heapmpi_mpi4_base)]
pub use calls::{allgather_init, alltoall_init, barrier_init, bcast_init, gather_init};
pub use calls::{iallgather, ialltoall, ibarrier, ibcast, igather, iscatter};
pub use neighbor::{
    ineighbor_allgather, ineighbor_allgatherv, ineighbor_alltoall, ineighbor_alltoallv,
    ineighbor_alltoallw,
};
#[cfg(heapmpi_mpi4_base)]
pub use neighbor::{neighbor_allgather_init, neighbor_allgatherv_init, neighbor_alltoall_init};
#[cfg(heapmpi_mpi4_base)]
pub use neighbor::{neighbor_alltoallv_init, neighbor_alltoallw_init};
#[cfg(heapmpi_mpi4_base)]
pub use reduce::{allreduce_init, exscan_init, reduce_init, reduce_scatter_block_init};
pub use reduce::{iallreduce, iexscan, ireduce, ireduce_scatter, ireduce_scatter_block, iscan};
#[cfg(heapmpi_mpi4_base)]
pub use reduce::{reduce_scatter_init, scan_init};
#[cfg(heapmpi_mpi4_base)]
pub use vcalls::{allgatherv_init, alltoallv_init, alltoallw_init, gatherv_init, scatterv_init};
pub use vcalls::{iallgatherv, ialltoallv, ialltoallw, igatherv, iscatterv};

use std::sync::{Mutex, MutexGuard, TryLockError};

use mpi_sys as ffi;

use super::op::Reducer;
use super::{info, Buf, ON};
use crate::comm::node::{Node, CELLS};
use crate::stats;

/// What an operation does.
enum Kind {
    Barrier,
    Bcast {
        root: usize,
        buf: Buf,
        /// At a member that receives into a derived datatype: a duplicate
        /// `buf` uses (freed when done), so that the program may free its
        /// own while the call is pending.
        held: Option<ffi::MPI_Datatype>,
        /// At a root sending a derived datatype: its data, packed at the
        /// call (packing calls the MPI, which the progress thread may not).
        packed: Option<Vec<u8>>,
    },
    /// Gather (`root`), all-gather (`root` `None`), all-to-all and scatter:
    /// every member (scatter: the root) publishes `mine`, packed at the
    /// call; the receivers take block `me` (all-to-all, scatter) or every
    /// block (the gathers) of the members' publications.
    Blocks {
        how: How,
        /// `None`: every member receives (all-gather, all-to-all).
        root: Option<usize>,
        /// What this member publishes, packed (a scatter's non-roots
        /// publish nothing; empty for a payload larger than a cell).
        mine: Vec<u8>,
        /// For a payload larger than a cell: what this member publishes,
        /// in the caller's buffer, and whether it must be staged even when
        /// it lies in the heap (see [`large`]).
        src: Option<(Buf, bool)>,
        /// Bytes of one block.
        pb: usize,
        /// Where this member receives, if it does.
        recv: Option<Recv>,
    },
    Reduce {
        /// `None`: every member receives.
        root: Option<usize>,
        /// The contribution (the receive buffer when in place).
        send: *const u8,
        recv: *mut u8,
        /// Elements combined into `recv`.
        count: usize,
        /// Bytes of each member's contribution.
        bytes: usize,
        red: Reducer,
        /// Whose contributions, and which part of them.
        fold: Fold,
    },
    /// A "v" collective (see [`vector`]).
    Vector(Box<vector::Vop>),
}

/// What a reduction combines into a member's result.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fold {
    /// Every member's whole contribution (reduce, all-reduce).
    All,
    /// Members 0 to this one (`MPI_Iscan`).
    Scan,
    /// Members before this one (`MPI_Iexscan`; member 0 receives
    /// nothing).
    Exscan,
    /// Block `me` of every member's contribution of `n` blocks
    /// (`MPI_Ireduce_scatter_block`).
    Block,
    /// Elements `first..first + count` of every member's contribution of
    /// `total` elements (`MPI_Ireduce_scatter`: the counts differ per
    /// member, `first` is the sum of those before this one).
    Part {
        /// This member's first element.
        first: usize,
        /// Elements of every contribution.
        total: usize,
    },
}

impl Fold {
    /// Elements of every member's contribution, `count` being the elements
    /// member `me` of `n` receives.
    fn elements(self, count: usize, n: usize) -> usize {
        match self {
            Fold::Block => count * n,
            Fold::Part { total, .. } => total,
            _ => count,
        }
    }

    /// The part of the contributions member `me` combines and receives,
    /// as (first element, elements), `count` being its elements.
    fn part(self, count: usize, me: usize) -> (usize, usize) {
        match self {
            Fold::Block => (me * count, count),
            Fold::Part { first, .. } => (first, count),
            _ => (0, count),
        }
    }
}

/// How a [`Kind::Blocks`] operation moves its blocks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum How {
    /// Each member publishes one block; receivers take every member's.
    Gather,
    /// Each member publishes `n` blocks; each takes block `me` of every
    /// member's.
    Alltoall,
    /// The root publishes `n` blocks; each takes block `me` of the root's.
    Scatter,
}

/// A receiving buffer: `buf` holds one block per piece; `held` a duplicate
/// of its derived datatype (see [`Kind::Bcast`]).
struct Recv {
    buf: Buf,
    held: Option<ffi::MPI_Datatype>,
    /// Pieces to receive into, by member (`None`: skip this member's,
    /// in place).
    skip: Option<usize>,
}

/// Where an operation stands on this member.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not started: our cell for its step is not yet free.
    Queued,
    /// Our part is published; waiting for the others'.
    Published,
    /// Its result is delivered and its request complete (a large one's:
    /// see [`Phase::Draining`]); its step is finished (`done` raised) once
    /// every earlier step is.
    Worked,
    /// A large operation finished here whose offer the other members may
    /// still be reading: its request completes once they are all done.
    Draining,
    /// A large broadcast's root whose readers may still ask for its help
    /// (`Large::serves`): like `Draining`, but its step is finished only
    /// once they are all done, so later operations of the communicator
    /// do not finish theirs before it either.
    Serving,
}

/// One pending operation.
struct Pending {
    /// Its request slot.
    slot: u32,
    /// The communicator's nonblocking block.
    node: &'static Node,
    kind: Kind,
    phase: Phase,
    /// Its step, taken at the call (so in call order).
    s: u64,
    /// Its last step (`s` but for a large one, see [`large`]).
    last: u64,
    /// Its request is complete (its slot is in `State::done`).
    delivered: bool,
    /// How a payload larger than a cell moves, if it is one.
    large: Option<Box<large::Large>>,
    /// The received bytes, packed, when the progress thread read them for
    /// a receive type that is not dense (a small operation's from the
    /// cells, a large one's from the offers, see `large`, a `v` form's
    /// from the senders' tables, see `vector::work`): unpacking
    /// calls the MPI, which only a calling thread does, at delivery (see
    /// [`unstash`]). Reading them lets the step finish meanwhile, so that
    /// the other members' later operations are not held at its cell's
    /// gate while this member's calling thread sits in the real MPI.
    stash: Option<Vec<u8>>,
}

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

/// Registers the progress hooks (at start).
pub fn start() {
    crate::p2p::engine::set_coll_progress(progress);
    crate::comm::node::set_idle_work(idle);
    #[cfg(heapmpi_mpi4_base)]
    persist::start();
}

/// Whether nonblocking collectives can run here at all: they need
/// heapmpi's requests (the point-to-point engine; agreed by the job).
pub fn possible() -> bool {
    crate::p2p::engine::enabled()
}

/// The nonblocking block of `comm`, if its calls run here.
fn nb_node(comm: ffi::MPI_Comm) -> Option<&'static Node> {
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

/// Frees the datatype duplicates `kind` holds for its receive (it will
/// not run).
fn release(kind: &Kind) {
    for &t in held(kind) {
        let mut t = t;
        // SAFETY: our duplicate, unused.
        unsafe { ffi::PMPI_Type_free(&mut t) };
    }
}

/// The receive datatype duplicates `kind` holds (one at most but for the
/// `w` forms, one per derived receive datatype).
fn held(kind: &Kind) -> &[ffi::MPI_Datatype] {
    match kind {
        Kind::Bcast { held, .. } => held.as_slice(),
        Kind::Blocks { recv: Some(r), .. } => r.held.as_slice(),
        Kind::Vector(v) => v.held(),
        _ => &[],
    }
}

/// Queues `kind` on `node` under the request `to` names (a new one is
/// written to its out-pointer), and tries to start it. False: no request
/// slot, or the persistent one is not inactive (make the real call).
///
/// # Safety
/// `to`'s out-pointer is the caller's; the buffers in `kind` stay the
/// caller's until the request completes.
unsafe fn post(node: &'static Node, comm: ffi::MPI_Comm, kind: Kind, to: To) -> bool {
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
fn progress(slot: Option<u32>, may_call_mpi: bool) -> bool {
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
fn idle() {
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
                    unsafe { begin(p) }
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
                    work(p, may_call_mpi)
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
        unsafe { unstash(&p.kind, &v, p.node) };
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

/// The members whose payload a block move's receiver reads (a scatter:
/// the root; else everyone but an in-place member itself), and the part
/// of that payload it takes: `[lo, lo + pb)`.
fn block_senders(kind: &Kind, node: &Node) -> impl Iterator<Item = (usize, usize)> + use<> {
    let me = node.me;
    let (how, root, pb, skip) = match kind {
        Kind::Blocks {
            how,
            root,
            pb,
            recv: Some(r),
            ..
        } => (*how, *root, *pb, r.skip),
        _ => (How::Gather, None, 0, None),
    };
    let receiving = matches!(kind, Kind::Blocks { recv: Some(_), .. });
    (0..node.n)
        .filter(move |&m| receiving && m != skip.unwrap_or(usize::MAX))
        .filter(move |&m| how != How::Scatter || Some(m) == root)
        .map(move |m| (m, if how == How::Gather { 0 } else { me * pb }))
}

/// Where member `m`'s block goes in a block move's stash (see
/// [`Pending::stash`]): at `m * pb`, a scatter's one block at 0.
fn stash_slot(how: How, m: usize, pb: usize) -> usize {
    if how == How::Scatter {
        0
    } else {
        m * pb
    }
}

/// A block move's stash: the block of every member this one receives
/// from ([`block_senders`]), read at `src(m, lo)`, put at [`stash_slot`].
///
/// # Safety
/// `src(m, lo)` points at `pb` readable bytes for every such member.
unsafe fn stash_blocks(
    kind: &Kind,
    node: &Node,
    src: impl Fn(usize, usize) -> *const u8,
) -> Vec<u8> {
    let Kind::Blocks { how, pb, .. } = kind else {
        return Vec::new();
    };
    let mut v = vec![
        0u8;
        if *how == How::Scatter {
            *pb
        } else {
            node.n * pb
        }
    ];
    for (m, lo) in block_senders(kind, node) {
        // SAFETY: `src` per the contract; the slot lies inside `v`.
        unsafe {
            crate::dt::copy_disjoint(
                src(m, lo),
                v.as_mut_ptr().add(stash_slot(*how, m, *pb)),
                *pb,
            )
        };
    }
    v
}

/// Unpacks a stash (see [`Pending::stash`]) into the receive buffer.
///
/// # Safety
/// A calling thread (the MPI may be called); `kind`'s buffers are the
/// caller's; `v` is the stash `work` made for `kind` on `node`.
unsafe fn unstash(kind: &Kind, v: &[u8], node: &Node) {
    match kind {
        // SAFETY: per the contract; the stash holds the whole payload.
        Kind::Bcast { buf, .. } => unsafe { buf.unpack_from(v.as_ptr(), v.len()) },
        Kind::Blocks {
            how,
            pb,
            recv: Some(r),
            ..
        } => {
            for (m, _) in block_senders(kind, node) {
                let into = if *how == How::Scatter {
                    r.buf
                } else {
                    r.buf.piece(m)
                };
                // SAFETY: per the contract; `stash_blocks` put member m's
                // block there; piece m of the buffer is the caller's.
                unsafe { into.unpack_from(v.as_ptr().add(stash_slot(*how, m, *pb)), *pb) };
            }
        }
        // SAFETY: per the contract.
        Kind::Vector(vop) => unsafe { vector::unstash(vop, v) },
        _ => {}
    }
}

/// Starts `p` if our cell for its step is free: publishes our part.
/// Returns false if it cannot start yet.
///
/// # Safety
/// `p`'s buffers are the caller's (see [`post`]).
unsafe fn begin(p: &mut Pending) -> bool {
    let (node, s) = (p.node, p.s);
    let me = node.me;
    let writes = match &p.kind {
        Kind::Barrier => false,
        Kind::Vector(_) => unreachable!("see `vector::begin`"),
        Kind::Bcast { root, .. } => *root == me,
        Kind::Reduce { .. } => true,
        Kind::Blocks { how, root, .. } => *how != How::Scatter || *root == Some(me),
    };
    if writes && !node.gate_open(s) {
        return false;
    }
    p.phase = Phase::Published;
    match &p.kind {
        Kind::Barrier => node.flag(s),
        Kind::Vector(_) => unreachable!("see `vector::begin`"),
        Kind::Bcast {
            root, buf, packed, ..
        } => {
            if *root == me {
                let bytes = buf.bytes();
                let to = node.data(me, s, bytes);
                match packed {
                    // SAFETY: the cell holds `inline_max` >= bytes
                    // (checked at the call), as many as were packed.
                    Some(v) => unsafe { crate::dt::copy_disjoint(v.as_ptr(), to, bytes) },
                    // SAFETY: as above; a contiguous buffer, the caller's.
                    None => unsafe { buf.pack_to(to) },
                }
                node.publish(s, 0, bytes as u64, 0);
                p.phase = Phase::Worked;
            }
        }
        Kind::Blocks {
            how, mine, recv, ..
        } => {
            if writes {
                // SAFETY: the cell holds `inline_max` >= mine.len()
                // (checked at the call).
                unsafe {
                    crate::dt::copy_disjoint(
                        mine.as_ptr(),
                        node.data(me, s, mine.len()),
                        mine.len(),
                    )
                };
                node.publish(s, 0, mine.len() as u64, 0);
            }
            if recv.is_none() || (*how == How::Scatter && writes) {
                // A gather's sender is done; a scatter's root took its
                // own block at the call.
                p.phase = Phase::Worked;
            }
        }
        Kind::Reduce {
            root, send, bytes, ..
        } => {
            // SAFETY: `bytes` of contribution (contiguous, checked at the
            // call) into our cell, which holds them.
            unsafe { crate::dt::copy_disjoint(*send, node.data(me, s, *bytes), *bytes) };
            node.publish(s, 0, *bytes as u64, 0);
            if root.is_some_and(|r| r != me) {
                // Our part is in our cell, which stays ours until every
                // member is done with this step.
                p.phase = Phase::Worked;
            }
        }
    }
    true
}

/// Delivers `p`'s result once the others' parts are there; true when
/// delivered.
///
/// # Safety
/// `p`'s buffers are the caller's (see [`post`]).
unsafe fn work(p: &mut Pending, may_call_mpi: bool) -> bool {
    let (node, s) = (p.node, p.s);
    let me = node.me;
    let all = || (0..node.n).all(|m| m == me || node.published(m, s).is_some());
    match &p.kind {
        Kind::Barrier => all(),
        Kind::Vector(_) => unreachable!("see `vector::work`"),
        Kind::Bcast { root, buf, .. } => {
            let Some(c) = node.published(*root, s) else {
                return false;
            };
            // Relaxed: ordered by the Acquire in `published`.
            let len = c.len.load(std::sync::atomic::Ordering::Relaxed) as usize;
            if !buf.d.contig && !may_call_mpi {
                // Unpacking a derived type calls the MPI: keep the bytes.
                // SAFETY: the root's cell holds `len` bytes until we finish.
                let v = unsafe { core::slice::from_raw_parts(node.data(*root, s, len), len) };
                p.stash = Some(v.to_vec());
                return true;
            }
            // SAFETY: the root's cell holds `len` bytes until we finish.
            unsafe { buf.unpack_from(node.data(*root, s, len), len) };
            true
        }
        Kind::Blocks {
            how,
            root,
            pb,
            recv: Some(r),
            ..
        } => {
            let (pb, n) = (*pb, node.n);
            if !r.buf.d.contig && !may_call_mpi {
                // Unpacking a derived type calls the MPI: keep the bytes
                // (see `stash_blocks`).
                let (ready, len) = match how {
                    How::Scatter => (
                        node.published(root.expect("a scatter has a root"), s)
                            .is_some(),
                        n * pb,
                    ),
                    How::Gather => (all(), pb),
                    How::Alltoall => (all(), n * pb),
                };
                if !ready {
                    return false;
                }
                // SAFETY: member m's cell holds `len` bytes until we
                // finish, `lo + pb` of them at least.
                let v =
                    unsafe { stash_blocks(&p.kind, node, |m, lo| node.data(m, s, len).add(lo)) };
                p.stash = Some(v);
                return true;
            }
            match how {
                How::Scatter => {
                    let root = root.expect("a scatter has a root");
                    if node.published(root, s).is_none() {
                        return false;
                    }
                    // SAFETY: the root's cell holds n blocks of `pb` bytes
                    // until we finish; the buffer is the caller's.
                    unsafe {
                        r.buf
                            .unpack_from(node.data(root, s, n * pb).add(me * pb), pb)
                    };
                }
                How::Gather | How::Alltoall => {
                    if !all() {
                        return false;
                    }
                    let (len, off) = if *how == How::Gather {
                        (pb, 0)
                    } else {
                        (n * pb, me * pb)
                    };
                    for m in (0..n).filter(|&m| r.skip != Some(m)) {
                        // SAFETY: member m's cell holds `len` bytes until
                        // we finish; piece m of the buffer is the caller's.
                        unsafe {
                            r.buf
                                .piece(m)
                                .unpack_from(node.data(m, s, len).add(off), pb)
                        };
                    }
                }
            }
            true
        }
        Kind::Blocks { recv: None, .. } => true,
        Kind::Reduce {
            recv,
            count,
            bytes,
            red,
            fold,
            ..
        } => {
            // The members combined (0 to `last`), and where in their
            // contributions the part this member receives starts.
            let (last, off) = match fold {
                Fold::All => (node.n - 1, 0),
                Fold::Scan => (me, 0),
                Fold::Exscan if me == 0 => return true,
                Fold::Exscan => (me - 1, 0),
                Fold::Block => (node.n - 1, me * (*bytes / node.n)),
                Fold::Part { first, total } => (node.n - 1, first * (*bytes / total.max(&1))),
            };
            if !(0..=last).all(|m| m == me || node.published(m, s).is_some()) {
                return false;
            }
            let part = match fold {
                Fold::Block => *bytes / node.n,
                Fold::Part { total, .. } => *count * (*bytes / total.max(&1)),
                _ => *bytes,
            };
            // Contributions combined in rank order, last first:
            // x0 op (x1 op (... op x(last))); the result is the same bits
            // in any order for the operations taken here.
            // SAFETY: every member's cell holds `bytes` bytes of
            // contribution until we finish, `off + part` of them within;
            // `recv` holds `count` elements (`part` bytes, contiguous,
            // checked at the call) and overlaps no cell.
            unsafe {
                crate::dt::copy_disjoint(node.data(last, s, *bytes).add(off), *recv, part);
                for m in (0..last).rev() {
                    red.apply(node.data(m, s, *bytes).add(off), *recv, *count);
                }
            }
            true
        }
    }
}
