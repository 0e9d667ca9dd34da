//! The point-to-point engine: requests, matching, protocols, progress.
//!
//! One [`Engine`] per process, reached through [`lock`]: behind a mutex when
//! the MPI library runs at `MPI_THREAD_MULTIPLE`, directly otherwise (MPI
//! calls cannot overlap then; see [`lock`]). Everything here deals with
//! local peers only; [`super::api`] decides what goes to the real MPI.
//!
//! **Matching.** Receives are kept in posting order (`posted`); messages that
//! arrived before a matching receive in arrival order (`unexpected`, the
//! private queue). Draining the global queue takes headers in arrival order
//! and gives each to the first posted receive that matches, else appends it
//! to `unexpected`; posting a receive takes the first matching unexpected
//! header, if any (see `Engine::post_recv`). Each sender's headers enter
//! the global queue in program order, so messages never overtake each other.
//!
//! **Fast boxes.** Small immediate messages (up to
//! `Tuning::fastbox_max`) go instead through a per-pair ring, the sender's
//! [`Producer`] and the receiver's [`Consumer`], which costs no atomic
//! read-modify-write on a line the other side owns (the global queue's push
//! does). A sender opens its box towards a peer on the first such message
//! and announces it through the peer's global queue. When the box is full,
//! or the message is too large or synchronous, it takes the global queue.
//! Every message to a peer, on either path, carries the next number of a
//! per-pair sequence; draining merges the two paths by it, so one sender's
//! messages are still matched in the order they were sent.
//!
//! **Protocols** (thresholds in [`Tuning`]):
//! - *immediate*: payload inline after the header; the send completes at
//!   once (a synchronous send when the header comes back).
//! - *single copy*: the header points at the send buffer (in the shared heap)
//!   or at a shared staging copy of it; the receiver copies straight into the
//!   receive buffer and returns the header, which completes the send.
//! - *synergistic*: as single copy, but the receiver publishes its buffer and
//!   both sides claim blocks with an atomic counter, so a sender that is
//!   inside the library copies too.
//!
//! Every header is returned to its sender, which recycles it (`Pool`);
//! private copies of fast-box messages that arrived unexpected go back to
//! the receiver's own pool.

mod access;
mod polled;
pub use polled::any_polled;
mod pool;
mod recv;
mod req;
mod send;
mod synergy;

use core::ffi::{c_int, c_void};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

use mpi_sys as ffi;

pub use access::{access_for_progress_thread, lock, multi, Guard};
use pool::{Pool, CLASSES, HOLD_MAX};
pub use req::{
    known_pending, set_coll_progress, unchanged_since, zombies_ready, Op, Req, ReqExt, Reqs, St,
    State, SENT_SLOT,
};

use super::fastbox::*;
use super::queue::*;
use crate::dt::{self, Dt};
use crate::heap;
use crate::stats;

/// `MPI_ANY_SOURCE` / `MPI_ANY_TAG` as seen by the matcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wild {
    /// `MPI_ANY_SOURCE`.
    pub any_source: i32,
    /// `MPI_ANY_TAG`.
    pub any_tag: i32,
}

/// Whether a receive for (`comm_id`, `src`, `tag`) matches `m`.
#[inline]
pub fn matches(w: Wild, comm_id: u64, src: i32, tag: i32, m: &Msg) -> bool {
    matches_env(w, comm_id, src, tag, (m.comm_id, m.src, m.tag))
}

/// Whether a receive for (`comm_id`, `src`, `tag`) matches a message with
/// envelope `env` (communicator id, source, tag).
#[inline]
pub fn matches_env(w: Wild, comm_id: u64, src: i32, tag: i32, env: (u64, i32, i32)) -> bool {
    env.0 == comm_id && (src == w.any_source || src == env.1) && (tag == w.any_tag || tag == env.2)
}

/// Tunable thresholds (`HEAPMPI_*`, see `config`).
#[derive(Clone, Copy, Debug)]
pub struct Tuning {
    /// Largest payload sent inline (immediate protocol).
    pub immediate_max: usize,
    /// Smallest message copied synergistically.
    pub synergy_min: usize,
    /// Block size of the synergistic copy.
    pub block: usize,
    /// Largest standard-mode send the sender copies to a shared buffer when
    /// the receiver has not matched it yet and the sender is waiting for it,
    /// so that programs relying on eager buffering do not deadlock.
    pub eager_max: usize,
    /// Queue discipline.
    pub lockfree: bool,
    /// Bytes of each fast box (0: none).
    pub fastbox_size: usize,
    /// Largest payload sent through a fast box.
    pub fastbox_max: usize,
}

/// The receive side of a request: where the data goes.
#[derive(Clone, Copy)]
pub struct RecvSpec {
    /// Buffer.
    pub buf: *mut u8,
    /// Element count.
    pub count: c_int,
    /// Datatype.
    pub dtype: ffi::MPI_Datatype,
    /// Its layout.
    pub dt: Dt,
    /// Communicator (for packing and errors).
    pub comm: ffi::MPI_Comm,
    /// Communicator id.
    pub comm_id: u64,
    /// Source rank or `MPI_ANY_SOURCE`.
    pub src: i32,
    /// Tag or `MPI_ANY_TAG`.
    pub tag: i32,
}

/// The send side: what to send where.
#[derive(Clone, Copy)]
pub struct SendSpec {
    /// Buffer.
    pub buf: *const u8,
    /// Element count.
    pub count: c_int,
    /// Datatype.
    pub dtype: ffi::MPI_Datatype,
    /// Its layout.
    pub dt: Dt,
    /// Communicator.
    pub comm: ffi::MPI_Comm,
    /// Communicator id.
    pub comm_id: u64,
    /// Our rank in the communicator.
    pub me: i32,
    /// Destination's node-local index.
    pub dest_local: u32,
    /// Tag.
    pub tag: i32,
    /// Send mode.
    pub mode: Mode,
}

/// MPI send modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `MPI_Send` / `MPI_Rsend` (ready mode is standard mode here).
    Standard,
    /// `MPI_Ssend`: completes once matched.
    Sync,
    /// `MPI_Bsend`: completes locally (heapmpi buffers in the shared heap).
    Buffered,
}

/// A persistent request's arguments (heapmpi keeps only sends to a local
/// peer; every receive on a known communicator is routed at each start).
/// Plain values (`Copy`): a request slot carries no drop glue but the box,
/// which the free and completion paths of every request pass through (a
/// `CollArgs` owning an `Arc` cost the 8 B nonblocking ring ~0.015 µs).
#[derive(Clone, Copy)]
pub enum Persist {
    /// `MPI_*send_init` to a local peer.
    Send(SendSpec),
    /// `MPI_Recv_init`.
    Recv(RecvSpec),
    /// An MPI-4 persistent collective (`MPI_*_init`), started by the
    /// collectives' layer (see `api::set_coll_start`).
    Coll(CollArgs),
}

/// A persistent collective's arguments as the collectives' layer keeps
/// them in the request (`call` is its own code for the routine); each
/// start hands them back to it. Plain values: the buffers are the
/// program's, a derived datatype is a duplicate held by the slot; the
/// count and displacement arrays of the `v` forms are the layer's copies,
/// in `arrays`, opaque here and owned by the slot.
#[derive(Clone, Copy)]
pub struct CollArgs {
    /// Which routine (the collectives' layer's numbering).
    pub call: u8,
    /// Send buffer.
    pub sbuf: *const c_void,
    /// Send count.
    pub scount: c_int,
    /// Send datatype.
    pub sdt: ffi::MPI_Datatype,
    /// Receive buffer.
    pub rbuf: *mut c_void,
    /// Receive count.
    pub rcount: c_int,
    /// Receive datatype.
    pub rdt: ffi::MPI_Datatype,
    /// Reduction operation.
    pub op: ffi::MPI_Op,
    /// Root.
    pub root: c_int,
    /// Communicator.
    pub comm: ffi::MPI_Comm,
    /// What else the collectives' layer keeps for the routine (its copies
    /// of the `v` forms' arrays), read by every start; freed with the
    /// request's slot.
    pub arrays: Option<CollArrays>,
    /// The communicator channel the collectives' layer runs every start
    /// on (`Node::channel`: steps of its own, since members may start
    /// persistent collectives in different orders), from `Box::leak`;
    /// owned by the slot.
    pub channel: Option<core::ptr::NonNull<crate::comm::node::Node>>,
}

/// An allocation the collectives' layer hands to a persistent request
/// (see [`CollArgs::arrays`]): a plain handle, so that `CollArgs` stays
/// `Copy`. Whoever holds the request owns it: the slot, freed in
/// [`release_persist`], or the initialisation when no slot was made.
#[derive(Clone, Copy)]
pub struct CollArrays(core::ptr::NonNull<dyn core::any::Any + Send + Sync>);

impl CollArrays {
    /// Takes ownership of `b`.
    pub fn new(b: Box<dyn core::any::Any + Send + Sync>) -> CollArrays {
        CollArrays(core::ptr::NonNull::from(Box::leak(b)))
    }

    /// The allocation.
    ///
    /// # Safety
    /// Not freed yet (its request lives).
    pub unsafe fn get(&self) -> &(dyn core::any::Any + Send + Sync) {
        // SAFETY: per the contract, the box `new` leaked is still live.
        unsafe { self.0.as_ref() }
    }

    /// Frees the allocation.
    ///
    /// # Safety
    /// Called once, by its owner, when nothing reads it any more.
    pub unsafe fn free(self) {
        // SAFETY: per the contract; the pointer came from `Box::leak`.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

/// Frees what a persistent request's arguments own (a collective's
/// arrays) with its slot. Out of line: only persistent requests get here.
#[cold]
#[inline(never)]
pub fn release_persist(p: Persist) {
    let Persist::Coll(a) = p else {
        return;
    };
    if let Some(arr) = a.arrays {
        // SAFETY: the slot owned them and is being cleared; a start reads
        // them only while its request lives.
        unsafe { arr.free() };
    }
    if let Some(ch) = a.channel {
        // SAFETY: the slot owned it (from `Box::leak`) and is being
        // cleared: the request is inactive or complete, and a channel's
        // operation leaves the collectives' queue when it completes (one
        // request per channel, started again only once complete), so
        // nothing uses it any more. Dropping it lets go of the block.
        drop(unsafe { Box::from_raw(ch.as_ptr()) });
    }
}

/// A posted receive.
struct Posted {
    req: u32,
    comm_id: u64,
    src: i32,
    tag: i32,
    /// Served by polling the real MPI too (wildcard on a communicator with
    /// remote peers, or behind such a wildcard).
    polled: bool,
}

/// A matched-probe message handle's slot.
pub struct ProbedMsg {
    /// The header taken out of the unexpected queue.
    pub msg: *mut Msg,
    /// The communicator it was probed on.
    pub comm: ffi::MPI_Comm,
}

/// The engine state of one process.
pub struct Engine {
    on: bool,
    /// The progress thread holds the engine: nothing here may call the
    /// MPI library unless it runs at `MPI_THREAD_MULTIPLE`.
    in_helper: bool,
    /// Our node-local index.
    pub me_local: u32,
    mailboxes: *const Mailbox,
    nlocal: u32,
    pid: i32,
    /// Thresholds.
    pub tune: Tuning,
    /// `MPI_ANY_SOURCE` / `MPI_ANY_TAG`.
    pub wild: Wild,
    reqs: Reqs,
    probed: Vec<Option<ProbedMsg>>,
    free_probed: Vec<u32>,
    posted: VecDeque<Posted>,
    unexpected: VecDeque<*mut Msg>,
    helpable: Vec<*mut Msg>,
    pool: Pool,
    /// Private copies of fast-box messages that arrived unexpected.
    own: Pool,
    scratch: Vec<*mut Msg>,
    /// Polled receives pending, per communicator id.
    polled: Vec<(u64, u32)>,
    polled_total: u32,
    /// Receives the progress thread matched whose bytes wait to be
    /// unpacked by a calling thread (see `recv::later`).
    unpacks: Vec<(u32, Box<[u8]>, St)>,
    /// Inline headers received and not yet returned (see `flush_held`).
    held: Vec<*mut Msg>,
    /// Communicator handle → info cache (see `comm`).
    comm_cache: crate::comm::Cache,
    /// Predefined datatypes seen lately.
    pub dts: dt::Cache,
    /// Per destination (node-local index): our fast box and sequence.
    tx: Vec<Tx>,
    /// Per source (node-local index): the next sequence number we take.
    expect: Vec<u32>,
    /// The fast boxes we read: (source, our end), in the order opened.
    rx: Vec<(u32, Consumer)>,
    /// Checks of pending stallable sends (see `Engine::check`).
    stall_polls: u32,
    /// Per source: its index in `rx` + 1, or 0 while it has no box.
    rx_index: Vec<u32>,
}

/// Our side of the traffic to one local peer.
struct Tx {
    /// Our fast box towards it, once opened.
    ring: Option<Producer>,
    /// Opening a fast box failed (shared heap full): do not retry.
    no_ring: bool,
    /// Sequence number of our next message to it.
    seq: u32,
    /// Our pending requests that wait for this peer to take a message
    /// (see `Engine::ring_waited`).
    waiting: u32,
}

/// Fast boxes of the senders whose fast box we read, for lock-free peeks
/// by waiters (see `quiet`): a leaked array of `nlocal` slots, filled in
/// order under the engine lock, `RX_RINGS_N` of them in use.
static RX_RINGS: core::sync::atomic::AtomicPtr<core::sync::atomic::AtomicPtr<Ring>> =
    core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());
static RX_RINGS_N: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Mirror of `Engine::on` readable without the lock (set once at init
/// before any communication; Release/Acquire publishes the engine set-up).
static ON: AtomicBool = AtomicBool::new(false);

/// Our mailbox, for lock-free peeking by waiters (set once at start).
static MY_MAILBOX: core::sync::atomic::AtomicPtr<Mailbox> =
    core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());
/// Progress has work beyond the mailbox (helping, polling the real MPI).
static NEED_POLL: AtomicBool = AtomicBool::new(false);

/// True when a waiter can skip a round of progress: nothing arrived or came
/// back and there is nothing to help with or poll. A hint only (Relaxed):
/// waiters still take the lock every few rounds, so a completion made by
/// another thread is seen.
#[inline]
pub fn quiet() -> bool {
    let mb = MY_MAILBOX.load(Ordering::Relaxed);
    if mb.is_null() || NEED_POLL.load(Ordering::Relaxed) {
        return false;
    }
    // SAFETY: our mailbox in the shared region, mapped for the process's life.
    let mb = unsafe { &*mb };
    if !(mb.head.load(Ordering::Relaxed).is_null() && mb.returned.load(Ordering::Relaxed).is_null())
    {
        return false;
    }
    // Acquire pairs with the Release increment in `open_rx`: the slots
    // below it are filled.
    let n = RX_RINGS_N.load(Ordering::Acquire);
    let rings = RX_RINGS.load(Ordering::Relaxed);
    (0..n).all(|i| {
        // SAFETY: `i < n` slots of the leaked array are filled with rings
        // in the shared region, which stay mapped.
        let r = unsafe { &*(*rings.add(i)).load(Ordering::Relaxed) };
        !r.ready_hint()
    })
}

/// Whether heapmpi serves local point-to-point traffic.
#[inline]
pub fn enabled() -> bool {
    ON.load(Ordering::Acquire)
}

/// Removes a communicator from the cache (its attribute is being deleted;
/// subscribed with `comm::on_free` at start).
pub fn forget_comm(bits: usize) {
    if !enabled() {
        return;
    }
    lock().comm_cache.forget(bits);
}

/// Starts the engine over the node's mailboxes; `multi`: the MPI library
/// runs at `MPI_THREAD_MULTIPLE` (see [`lock`]).
pub fn start(
    mailboxes: *const Mailbox,
    nlocal: u32,
    me_local: u32,
    tune: Tuning,
    wild: Wild,
    multi: bool,
) {
    let mut e = lock();
    e.mailboxes = mailboxes;
    e.nlocal = nlocal;
    e.me_local = me_local;
    e.tune = tune;
    e.wild = wild;
    e.pid = std::process::id() as i32;
    e.tx = (0..nlocal)
        .map(|_| Tx {
            ring: None,
            no_ring: tune.fastbox_size == 0,
            seq: 0,
            waiting: 0,
        })
        .collect();
    e.expect = vec![0; nlocal as usize];
    e.rx_index = vec![0; nlocal as usize];
    e.reqs.open();
    let slots: Box<[core::sync::atomic::AtomicPtr<Ring>]> = (0..nlocal)
        .map(|_| core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()))
        .collect();
    // Relaxed: published with the rest of the set-up by the Release store
    // of `ON` below; waiters peek only after `enabled()` acquired it.
    RX_RINGS.store(Box::leak(slots).as_mut_ptr(), Ordering::Relaxed);
    e.on = true;
    MY_MAILBOX.store(
        mailboxes.wrapping_add(me_local as usize) as *mut Mailbox,
        Ordering::Relaxed,
    );
    drop(e);
    access::set_multi(multi);
    ON.store(true, Ordering::Release);
}

/// Result of starting a send.
pub enum Sent {
    /// Complete already (buffered, inline, or staged).
    Done,
    /// Pending in this request slot.
    Pending(u32),
}

impl Engine {
    const fn new() -> Engine {
        Engine {
            on: false,
            in_helper: false,
            me_local: 0,
            mailboxes: core::ptr::null(),
            nlocal: 0,
            pid: 0,
            tune: Tuning {
                immediate_max: 0,
                synergy_min: usize::MAX,
                block: 1 << 20,
                eager_max: 0,
                lockfree: true,
                fastbox_size: 0,
                fastbox_max: 0,
            },
            wild: Wild {
                any_source: -1,
                any_tag: -1,
            },
            reqs: Reqs::new(),
            probed: Vec::new(),
            free_probed: Vec::new(),
            posted: VecDeque::new(),
            unexpected: VecDeque::new(),
            helpable: Vec::new(),
            pool: Pool {
                free: [const { Vec::new() }; CLASSES],
                live: 0,
                shared: true,
            },
            own: Pool {
                free: [const { Vec::new() }; CLASSES],
                live: 0,
                shared: false,
            },
            scratch: Vec::new(),
            polled: Vec::new(),
            polled_total: 0,
            unpacks: Vec::new(),
            held: Vec::new(),
            comm_cache: crate::comm::Cache::new(),
            dts: dt::Cache::new(),
            tx: Vec::new(),
            expect: Vec::new(),
            rx: Vec::new(),
            rx_index: Vec::new(),
            stall_polls: 0,
        }
    }

    #[inline]
    fn mailbox(&self, i: u32) -> &Mailbox {
        debug_assert!(i < self.nlocal);
        // SAFETY: `mailboxes` points at `nlocal` mailboxes in the committed
        // control area of the region, mapped for the life of the process.
        unsafe { &*self.mailboxes.add(i as usize) }
    }

    /// Cached communicator info (see `comm::lookup`).
    #[inline]
    pub fn comm_info(&mut self, comm: ffi::MPI_Comm) -> Option<&'static crate::comm::CommInfo> {
        self.comm_cache.get(comm)
    }

    /// Headers still out (sent and not yet returned).
    pub fn headers_live(&self) -> u64 {
        self.pool.live
    }

    /// One round of progress: returned headers, arrivals, helping, and the
    /// real MPI for polled receives.
    pub fn progress(&mut self) {
        self.reclaim();
        self.drain();
        if !self.helpable.is_empty() {
            self.help();
        }
        let colls = self.coll_progress();
        if self.may_call_mpi() {
            if !self.unpacks.is_empty() {
                self.finish_unpacks();
            }
            if self.polled_total > 0 {
                self.poll_real();
            }
            if !self.reqs.orphans.is_empty() {
                self.drive_orphans();
            }
            if self.reqs.has_trash() {
                self.reqs.empty_trash();
            }
        }
        // Relaxed: a hint for `quiet`, which waiters re-check under the lock
        // regularly anyway.
        NEED_POLL.store(
            colls
                || !self.helpable.is_empty()
                || self.polled_total > 0
                || !self.unpacks.is_empty()
                || !self.reqs.orphans.is_empty(),
            Ordering::Relaxed,
        );
    }

    /// Whether the engine's holder may call the MPI library: any calling
    /// thread, and the progress thread at `MPI_THREAD_MULTIPLE`.
    #[inline]
    fn may_call_mpi(&self) -> bool {
        !self.in_helper || access::multi()
    }

    /// Rings the doorbell of every local peer one of our pending requests
    /// waits for (a send it has to match or copy), so that its progress
    /// thread takes over if the peer is inside the real MPI (see
    /// `p2p::progress`). Waiters call this now and then.
    pub fn ring_waited(&self) {
        for (p, tx) in self.tx.iter().enumerate() {
            if tx.waiting > 0 && p as u32 != self.me_local {
                self.mailbox(p as u32).ring();
            }
        }
    }

    /// Rings every local peer (a waiter that needs headers back).
    pub fn ring_all(&self) {
        for p in 0..self.nlocal {
            if p != self.me_local {
                self.mailbox(p).ring();
            }
        }
    }

    /// What a waiter does when nothing has happened for a while: return
    /// held headers so their sender can reuse them.
    pub fn idle(&mut self) {
        self.flush_held();
    }
}

pub use crate::sys::oversubscribed;

/// Waiting policy: spin for some microseconds (a round is a few ns when
/// the mailbox is quiet), then yield; yield almost at once when ranks
/// outnumber cores, since the peer needs this CPU to make progress.
#[inline]
pub fn backoff(spins: u32) {
    if yields(spins) {
        std::thread::yield_now();
    } else {
        core::hint::spin_loop();
    }
}

/// Whether round `spins` of a wait yields the processor ([`backoff`]).
#[inline]
pub fn yields(spins: u32) -> bool {
    spins > 4096 || (spins > 4 && oversubscribed())
}
