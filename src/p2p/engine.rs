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
//! Every header is returned to its sender, which recycles it ([`Pool`]);
//! private copies of fast-box messages that arrived unexpected go back to
//! the receiver's own pool.

use core::ffi::c_int;
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use mpi_sys as ffi;

use super::dt::{self, Dt};
use super::queue::*;
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

/// A completed operation's status.
#[derive(Clone, Copy)]
pub enum St {
    /// Filled by heapmpi.
    Ours {
        /// `MPI_SOURCE`.
        source: i32,
        /// `MPI_TAG`.
        tag: i32,
        /// Bytes received.
        bytes: u64,
        /// `MPI_ERROR` (0 or an error class).
        error: i32,
        /// Cancelled.
        cancelled: bool,
    },
    /// From the real MPI.
    Real(ffi::MPI_Status),
}

impl St {
    /// The empty status MPI gives for null or inactive requests and for
    /// completed sends.
    pub fn empty(w: Wild) -> St {
        St::Ours {
            source: w.any_source,
            tag: w.any_tag,
            bytes: 0,
            error: 0,
            cancelled: false,
        }
    }

    /// The error the operation ended with (0 for success).
    pub fn error(&self) -> i32 {
        match self {
            St::Ours { error, .. } => *error,
            St::Real(s) => s.MPI_ERROR,
        }
    }
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
#[derive(Clone, Copy)]
pub enum Persist {
    /// `MPI_*send_init` to a local peer.
    Send(SendSpec),
    /// `MPI_Recv_init`.
    Recv(RecvSpec),
}

/// One request slot.
pub struct Req {
    live: bool,
    /// Whether the operation has completed (and `st` is valid).
    pub done: bool,
    /// Result.
    pub st: St,
    /// Communicator of the operation (error handler).
    pub comm: ffi::MPI_Comm,
    /// `MPI_Request_free` was called while active: release on completion.
    pub freed: bool,
    /// Persistent request arguments; `None` for one-shot requests.
    pub persist: Option<Persist>,
    /// Persistent: started and not yet completed by a wait/test.
    pub active: bool,
    /// A receive's destination.
    pub recv: Option<RecvSpec>,
    /// Our send header still owned by the receiver (stage-on-stall).
    pub msg: *mut Msg,
    /// A standard-mode send that may be staged if the receiver is late.
    pub stallable: bool,
    /// The real MPI request that carries this operation, if any.
    pub inner: Option<ffi::MPI_Request>,
}

impl Req {
    fn fresh(comm: ffi::MPI_Comm, w: Wild) -> Req {
        Req {
            live: true,
            done: false,
            st: St::empty(w),
            comm,
            freed: false,
            persist: None,
            active: true,
            recv: None,
            msg: core::ptr::null_mut(),
            stallable: false,
            inner: None,
        }
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

/// Inline headers held before they are returned in one batch.
const HOLD_MAX: usize = 32;

/// Header pool classes: 128 B << class.
const CLASSES: usize = 11;
/// Keep at most this many bytes of free headers per class.
const POOL_KEEP: usize = 1 << 20;

/// This process's recycled headers.
struct Pool {
    free: [Vec<*mut Msg>; CLASSES],
    live: u64,
    /// Headers for other ranks (shared heap only); else private copies,
    /// which may come from private memory when the shared heap is full.
    shared: bool,
}

fn class_for(total: usize) -> Option<usize> {
    (0..CLASSES).find(|&c| (128usize << c) >= total)
}

impl Pool {
    fn get(&mut self, total: usize) -> *mut Msg {
        let Some(c) = class_for(total) else {
            return core::ptr::null_mut();
        };
        let m = match self.free[c].pop() {
            Some(m) => m,
            None if self.shared => heap::alloc_shared(64, 128 << c) as *mut Msg,
            None => heap::memalign(64, 128 << c) as *mut Msg,
        };
        if !m.is_null() {
            self.live += 1;
            // SAFETY: a header of this process, not in any queue.
            unsafe { (*m).class = c as u16 };
        }
        m
    }

    fn put(&mut self, m: *mut Msg) {
        self.live -= 1;
        // SAFETY: a header of this process, back from its receiver.
        let c = unsafe { (*m).class } as usize;
        if self.free[c].len() * (128 << c) < POOL_KEEP {
            self.free[c].push(m);
        } else {
            // SAFETY: allocated by `heap::alloc_shared` or `heap::memalign`,
            // no longer used.
            unsafe { heap::free(m as *mut u8) };
        }
    }
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
    /// Our node-local index.
    pub me_local: u32,
    mailboxes: *const Mailbox,
    nlocal: u32,
    pid: i32,
    /// Thresholds.
    pub tune: Tuning,
    /// `MPI_ANY_SOURCE` / `MPI_ANY_TAG`.
    pub wild: Wild,
    reqs: Vec<Req>,
    free_reqs: Vec<u32>,
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
    /// Inline headers received and not yet returned (see `flush_held`).
    held: Vec<*mut Msg>,
    /// Communicator handle → info cache (see `comm`).
    comm_cache: Vec<(usize, &'static super::comm::CommInfo)>,
    /// Predefined datatypes seen lately.
    pub dts: dt::Cache,
    /// Per destination (node-local index): our fast box and sequence.
    tx: Vec<Tx>,
    /// Per source (node-local index): the next sequence number we take.
    expect: Vec<u32>,
    /// The fast boxes we read: (source, our end), in the order opened.
    rx: Vec<(u32, Consumer)>,
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
}

/// Fast boxes of the senders whose fast box we read, for lock-free peeks
/// by waiters (see `quiet`): a leaked array of `nlocal` slots, filled in
/// order under the engine lock, `RX_RINGS_N` of them in use.
static RX_RINGS: core::sync::atomic::AtomicPtr<core::sync::atomic::AtomicPtr<Ring>> =
    core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());
static RX_RINGS_N: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// The engine and what guards it (see [`lock`]).
struct Shared {
    /// Taken when `MULTI` is set.
    mutex: Mutex<()>,
    /// Whether a [`Guard`] exists (only kept when `MULTI` is clear, to catch
    /// a nested `lock`, which the mutex would turn into a deadlock).
    held: UnsafeCell<bool>,
    engine: UnsafeCell<Engine>,
}

// SAFETY: `engine` and `held` are only reached through `lock`, which gives
// one thread at a time access: under the mutex at MPI_THREAD_MULTIPLE;
// below it, MPI calls never overlap (the program's guarantee, with its own
// synchronisation for MPI_THREAD_SERIALIZED). The engine's raw pointers are
// into the shared region (valid for the life of the process) or MPI handles.
unsafe impl Sync for Shared {}

static ENGINE: Shared = Shared {
    mutex: Mutex::new(()),
    held: UnsafeCell::new(false),
    engine: UnsafeCell::new(Engine::new()),
};
/// The MPI library provides `MPI_THREAD_MULTIPLE`: take the mutex. Set
/// before the engine is switched on (until then, lock to be safe); Relaxed:
/// published by the Release store of `ON`, and never changes afterwards.
static MULTI: AtomicBool = AtomicBool::new(true);
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

/// Exclusive access to the engine, until the guard is dropped.
///
/// At `MPI_THREAD_MULTIPLE` this takes a mutex. At any lower thread level
/// MPI calls never overlap (`FUNNELED`: one thread makes them;
/// `SERIALIZED`: the program orders them with its own synchronisation), so
/// no lock is needed, and none is taken: its atomic read-modify-writes would
/// make each call wait until the stores of the previous message (a fast-box
/// record, in a line the receiver holds) have left the core, which capped
/// the message rate. A nested call (a bug) aborts instead of aliasing.
#[inline]
pub fn lock() -> Guard {
    if MULTI.load(Ordering::Relaxed) {
        // Poisoning cannot happen (panic = abort).
        let g = ENGINE.mutex.lock().unwrap_or_else(|e| e.into_inner());
        return Guard { _mutex: Some(g) };
    }
    // SAFETY: calls do not overlap (see above), so this thread alone
    // touches `held`.
    unsafe {
        let held = ENGINE.held.get();
        if *held {
            crate::eprint_noalloc!("heapmpi: internal error: engine locked twice");
            std::process::abort();
        }
        *held = true;
    }
    Guard { _mutex: None }
}

/// Access to the engine (see [`lock`]).
pub struct Guard {
    _mutex: Option<MutexGuard<'static, ()>>,
}

impl core::ops::Deref for Guard {
    type Target = Engine;
    #[inline]
    fn deref(&self) -> &Engine {
        // SAFETY: the guard is the one access to the engine (see `lock`).
        unsafe { &*ENGINE.engine.get() }
    }
}

impl core::ops::DerefMut for Guard {
    #[inline]
    fn deref_mut(&mut self) -> &mut Engine {
        // SAFETY: as in `deref`, and `&mut self` makes it unique.
        unsafe { &mut *ENGINE.engine.get() }
    }
}

impl Drop for Guard {
    #[inline]
    fn drop(&mut self) {
        if self._mutex.is_none() {
            // SAFETY: as in `lock`.
            unsafe { *ENGINE.held.get() = false };
        }
    }
}

/// Removes a communicator from the cache (its attribute is being deleted).
pub fn forget_comm(bits: usize) {
    if !enabled() {
        return;
    }
    lock().comm_cache.retain(|e| e.0 != bits);
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
        })
        .collect();
    e.expect = vec![0; nlocal as usize];
    e.rx_index = vec![0; nlocal as usize];
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
    MULTI.store(multi, Ordering::Relaxed);
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
            reqs: Vec::new(),
            free_reqs: Vec::new(),
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
            held: Vec::new(),
            comm_cache: Vec::new(),
            dts: dt::Cache::new(),
            tx: Vec::new(),
            expect: Vec::new(),
            rx: Vec::new(),
            rx_index: Vec::new(),
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
    pub fn comm_info(&mut self, comm: ffi::MPI_Comm) -> Option<&'static super::comm::CommInfo> {
        use super::handle::RawHandle;
        let bits = comm.0.to_bits();
        if let Some(e) = self.comm_cache.iter().find(|e| e.0 == bits) {
            return Some(e.1);
        }
        let info = super::comm::lookup(comm)?;
        if self.comm_cache.len() >= 16 {
            self.comm_cache.remove(0);
        }
        self.comm_cache.push((bits, info));
        Some(info)
    }

    /// Headers still out (sent and not yet returned).
    pub fn headers_live(&self) -> u64 {
        self.pool.live
    }

    // ----- requests -----

    /// A new request slot.
    pub fn new_req(&mut self, comm: ffi::MPI_Comm) -> Option<u32> {
        let r = Req::fresh(comm, self.wild);
        if let Some(i) = self.free_reqs.pop() {
            self.reqs[i as usize] = r;
            return Some(i);
        }
        if self.reqs.len() >= super::handle::MAX_SLOTS {
            return None;
        }
        self.reqs.push(r);
        Some(self.reqs.len() as u32 - 1)
    }

    /// The slot `i`, if live.
    pub fn req(&mut self, i: usize) -> Option<&mut Req> {
        self.reqs.get_mut(i).filter(|r| r.live)
    }

    /// Releases slot `i`.
    pub fn release(&mut self, i: u32) {
        let r = &mut self.reqs[i as usize];
        if r.live {
            r.live = false;
            r.persist = None;
            self.free_reqs.push(i);
        }
    }

    /// Marks request `i` complete with `st` (releasing it if it was freed).
    pub fn complete(&mut self, i: u32, st: St) {
        let r = &mut self.reqs[i as usize];
        r.done = true;
        r.st = st;
        r.msg = core::ptr::null_mut();
        r.stallable = false;
        if r.freed {
            r.freed = false;
            if r.persist.is_some() {
                r.active = false;
            } else {
                self.release(i);
            }
        }
    }

    // ----- sending -----

    /// Starts a send to a local peer. `req` is the slot to use if it does
    /// not complete at once (persistent requests pass theirs).
    ///
    /// # Safety
    /// The send buffer holds `count` elements of the datatype and stays
    /// valid until the send completes.
    #[allow(clippy::result_unit_err)]
    pub unsafe fn send(&mut self, s: &SendSpec, req: Option<u32>) -> Result<Sent, ()> {
        let bytes = dt::packed_size(s.count, &s.dt);
        let inline = bytes <= self.tune.immediate_max;
        if inline && bytes <= self.tune.fastbox_max && s.mode != Mode::Sync {
            // SAFETY: the caller's contract.
            match unsafe { self.ring_send(s, bytes) } {
                Ok(true) => return Ok(Sent::Done),
                Ok(false) => {}
                Err(()) => return Err(()),
            }
        }
        let total = ENVELOPE
            + if inline {
                bytes
            } else {
                core::mem::size_of::<Rendezvous>()
            };
        let m = self.get_header(total);
        // SAFETY: `m` is a fresh header of ours (not in any queue yet).
        // Its fields are written Relaxed: nobody sees it before the Release
        // push at the end (see `Msg`).
        let h = unsafe { &mut *m };
        h.comm_id = s.comm_id;
        h.src = s.me;
        h.tag = s.tag;
        h.src_local = self.me_local as u16;
        h.len = bytes as u64;
        h.pid = self.pid;
        h.sreq.store(0, Ordering::Relaxed);
        let mut flags = 0;
        let mut pending = s.mode == Mode::Sync;
        if inline {
            flags |= F_INLINE;
            // SAFETY: the header has room for `bytes` after the envelope;
            // the caller guarantees the send buffer.
            unsafe { Self::copy_in(s, h.body(), bytes)? };
            h.data.store(h.body() as u64, Ordering::Relaxed);
            stats::P2P_IMMEDIATE.add(1);
            stats::P2P_IMMEDIATE_BYTES.add(bytes as u64);
        } else {
            let r = h.rdv();
            for a in [
                &r.dst,
                &r.copy_len,
                &r.block,
                &r.nblocks,
                &r.next_block,
                &r.blocks_done,
                &r.sender_blocks,
            ] {
                a.store(0, Ordering::Relaxed);
            }
            r.state.store(S_WAITING, Ordering::Relaxed);
            r.go.store(0, Ordering::Relaxed);
            let direct = s.dt.contig && s.mode != Mode::Buffered && heap::in_region(s.buf, bytes);
            if direct {
                h.data.store(s.buf as u64, Ordering::Relaxed);
                pending = true;
            } else {
                let stage = heap::alloc_shared(64, bytes);
                if !stage.is_null() {
                    // SAFETY: `stage` has room for `bytes`.
                    if unsafe { Self::copy_in(s, stage, bytes) }.is_err() {
                        // SAFETY: ours, unused.
                        unsafe { heap::free(stage) };
                        self.put_header(m);
                        return Err(());
                    }
                    flags |= F_STAGED;
                    h.data.store(stage as u64, Ordering::Relaxed);
                    stats::P2P_STAGED.add(1);
                } else if s.dt.contig {
                    flags |= F_CMA;
                    h.data.store(s.buf as u64, Ordering::Relaxed);
                    pending = true;
                    stats::P2P_CMA.add(1);
                } else {
                    let mut private = vec![0u8; bytes].into_boxed_slice();
                    // SAFETY: `private` has room for `bytes`.
                    if unsafe { Self::copy_in(s, private.as_mut_ptr(), bytes) }.is_err() {
                        self.put_header(m);
                        return Err(());
                    }
                    flags |= F_CMA | F_PRIVATE_STAGED;
                    h.data
                        .store(Box::into_raw(private) as *mut u8 as u64, Ordering::Relaxed);
                    pending = true;
                    stats::P2P_CMA.add(1);
                }
            }
            if flags & F_CMA == 0 && bytes >= self.tune.synergy_min {
                flags |= F_SYNERGY;
                stats::P2P_SYNERGY.add(1);
                stats::P2P_SYNERGY_BYTES.add(bytes as u64);
            } else {
                stats::P2P_SINGLE.add(1);
                stats::P2P_SINGLE_BYTES.add(bytes as u64);
            }
        }
        if s.mode == Mode::Sync {
            flags |= F_SYNC;
        }
        h.flags.store(flags, Ordering::Relaxed);
        let mut slot = None;
        if pending {
            let i = match req {
                Some(i) => i,
                None => match self.new_req(s.comm) {
                    Some(i) => i,
                    None => {
                        self.put_header(m);
                        return Err(());
                    }
                },
            };
            h.sreq.store(i as u64 + 1, Ordering::Relaxed);
            let r = &mut self.reqs[i as usize];
            r.done = false;
            r.msg = m;
            r.stallable = s.mode == Mode::Standard
                && flags & (F_STAGED | F_CMA | F_INLINE) == 0
                && bytes <= self.tune.eager_max;
            slot = Some(i);
        }
        if flags & F_SYNERGY != 0 {
            self.helpable.push(m);
        }
        let tx = &mut self.tx[s.dest_local as usize];
        h.seq = tx.seq;
        tx.seq = tx.seq.wrapping_add(1);
        // SAFETY: `m` is a complete header of ours, linked nowhere.
        unsafe { self.mailbox(s.dest_local).push(m, self.tune.lockfree) };
        Ok(match slot {
            Some(i) => Sent::Pending(i),
            None => Sent::Done,
        })
    }

    /// Sends an immediate message through our fast box to its destination,
    /// opening the box on first use. `Ok(false)`: no room (or no box), the
    /// caller sends through the global queue.
    ///
    /// # Safety
    /// As [`Engine::send`].
    unsafe fn ring_send(&mut self, s: &SendSpec, bytes: usize) -> Result<bool, ()> {
        let dl = s.dest_local as usize;
        if self.tx[dl].ring.is_none() && !self.open_tx(s.dest_local) {
            return Ok(false);
        }
        let mut failed = false;
        let tx = &mut self.tx[dl];
        let seq = tx.seq;
        let prod = tx.ring.as_mut().expect("opened above");
        // SAFETY: our ring, we are its only producer (under the engine
        // lock); `bytes ≤ fastbox_max`, the payload size it was made for.
        let sent = unsafe {
            prod.push(s.comm_id, s.me, s.tag, seq, bytes, |out| {
                // SAFETY: room for `bytes` at `out`; the caller's buffer.
                failed = Self::copy_in(s, out, bytes).is_err();
                !failed
            })
        };
        if failed {
            return Err(());
        }
        if sent {
            tx.seq = seq.wrapping_add(1);
            stats::P2P_IMMEDIATE.add(1);
            stats::P2P_IMMEDIATE_BYTES.add(bytes as u64);
            stats::P2P_FASTBOX.add(1);
        }
        Ok(sent)
    }

    /// Opens our fast box towards local rank `dest`: allocates it in the
    /// shared heap and announces it through `dest`'s global queue (before any
    /// record, so `dest` knows the box before it needs it).
    fn open_tx(&mut self, dest: u32) -> bool {
        if self.tx[dest as usize].no_ring {
            return false;
        }
        let bytes = Ring::alloc_bytes(self.tune.fastbox_size, self.tune.fastbox_max);
        let mem = heap::alloc_shared(64, bytes);
        let m = if mem.is_null() {
            core::ptr::null_mut()
        } else {
            self.pool.get(ENVELOPE)
        };
        if m.is_null() {
            if !mem.is_null() {
                // SAFETY: ours, never published.
                unsafe { heap::free(mem) };
            }
            self.tx[dest as usize].no_ring = true;
            return false;
        }
        // SAFETY: `mem` is ours, `bytes` long, 64-byte aligned.
        let ring = unsafe { Ring::init(mem, self.tune.fastbox_size) };
        // SAFETY: a fresh header of ours; published by the Release push.
        let h = unsafe { &mut *m };
        h.comm_id = 0;
        h.src = -1;
        h.tag = -1;
        h.src_local = self.me_local as u16;
        h.len = 0;
        h.pid = self.pid;
        h.seq = 0;
        h.sreq.store(0, Ordering::Relaxed);
        h.flags.store(F_RING_OPEN, Ordering::Relaxed);
        h.data.store(ring as u64, Ordering::Relaxed);
        // SAFETY: a complete header of ours, linked nowhere.
        unsafe { self.mailbox(dest).push(m, self.tune.lockfree) };
        // SAFETY: initialised above, in the shared region for good.
        self.tx[dest as usize].ring = Some(unsafe { Producer::new(ring) });
        true
    }

    /// Copies or packs the send data into `out` (`bytes` long).
    unsafe fn copy_in(s: &SendSpec, out: *mut u8, bytes: usize) -> Result<(), ()> {
        if bytes == 0 {
            return Ok(());
        }
        if s.dt.contig {
            // SAFETY: caller's contract: `bytes` readable at `buf`, room at `out`.
            unsafe { core::ptr::copy_nonoverlapping(s.buf, out, bytes) };
            Ok(())
        } else {
            // SAFETY: as above, through the real MPI's packer.
            if unsafe { dt::pack(s.buf, s.count, s.dtype, out, bytes, s.comm) } {
                Ok(())
            } else {
                Err(())
            }
        }
    }

    fn get_header(&mut self, total: usize) -> *mut Msg {
        let mut warned = false;
        loop {
            let m = self.pool.get(total);
            if !m.is_null() {
                return m;
            }
            // Shared heap exhausted: wait for our headers to come back.
            if !warned {
                warned = true;
                crate::eprint_noalloc!(
                    "heapmpi: warning: no shared memory left for message headers; waiting for \
                     receivers to return some"
                );
            }
            self.progress();
            std::thread::yield_now();
        }
    }

    fn put_header(&mut self, m: *mut Msg) {
        self.pool.put(m);
    }

    /// Stage-on-stall: copy a pending standard send into a shared buffer if
    /// the receiver has not taken it yet, completing the send.
    pub fn try_stage(&mut self, i: u32) -> bool {
        let r = &self.reqs[i as usize];
        if !r.stallable || r.done || r.msg.is_null() {
            return false;
        }
        let m = r.msg;
        // SAFETY: our header, still out (the receiver has not returned it:
        // the request would be done).
        let h = unsafe { &*m };
        let rdv = h.rdv();
        // AcqRel: on success we own the data fields until we store back;
        // failure means the receiver matched (it owns them now).
        if rdv
            .state
            .compare_exchange(S_WAITING, S_STAGING, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            self.reqs[i as usize].stallable = false;
            return false;
        }
        let len = h.len as usize;
        let stage = heap::alloc_shared(64, len);
        if !stage.is_null() {
            // SAFETY: the send buffer (`data`) holds `len` bytes until this
            // send completes; `stage` has room.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    h.data.load(Ordering::Relaxed) as *const u8,
                    stage,
                    len,
                )
            };
            h.data.store(stage as u64, Ordering::Relaxed);
            h.flags.fetch_or(F_STAGED, Ordering::Relaxed);
            h.flags.fetch_and(!F_SYNERGY, Ordering::Relaxed);
            h.sreq.store(0, Ordering::Relaxed);
            self.helpable.retain(|&x| x != m);
            stats::P2P_STALL_STAGED.add(1);
        }
        // Release: the receiver's Acquire CAS sees the new data fields.
        rdv.state.store(S_WAITING, Ordering::Release);
        self.reqs[i as usize].stallable = false;
        if stage.is_null() {
            return false;
        }
        let w = self.wild;
        self.complete(i, St::empty(w));
        true
    }

    // ----- receiving -----

    /// Posts a receive into slot `req` (which the caller created): matches
    /// an unexpected message now or queues the receive. Returns true if it
    /// completed.
    ///
    /// It does not drain the queues first: a message still in them can only
    /// be later in its sender's order than everything in `unexpected`, and
    /// the next drain gives it to the first posted receive it matches, which
    /// is what taking it now would do. (Draining here made every `MPI_Irecv`
    /// read the line a streaming sender is writing: a cache-line transfer
    /// per call.)
    pub fn post_recv(&mut self, req: u32, spec: RecvSpec, polled: bool) -> bool {
        self.reqs[req as usize].recv = Some(spec);
        self.reqs[req as usize].done = false;
        let w = self.wild;
        if let Some(pos) = self
            .unexpected
            .iter()
            // SAFETY: headers in `unexpected` are live until delivered.
            .position(|&m| matches(w, spec.comm_id, spec.src, spec.tag, unsafe { &*m }))
        {
            let m = self.unexpected.remove(pos).unwrap();
            self.deliver(m, req);
            return true;
        }
        self.posted.push_back(Posted {
            req,
            comm_id: spec.comm_id,
            src: spec.src,
            tag: spec.tag,
            polled,
        });
        if polled {
            self.polled_add(spec.comm_id, 1);
        }
        false
    }

    /// Whether a pending polled receive on communicator `id` matches a
    /// message from `src` with `tag`.
    pub fn polled_matches(&self, id: u64, src: i32, tag: i32) -> bool {
        let w = self.wild;
        self.polled_total > 0
            && self.posted.iter().any(|p| {
                p.polled
                    && p.comm_id == id
                    && (p.src == w.any_source || p.src == src)
                    && (p.tag == w.any_tag || p.tag == tag)
            })
    }

    /// Pending polled receives on communicator `id`.
    pub fn polled_on(&self, id: u64) -> bool {
        self.polled_total > 0 && self.polled.iter().any(|e| e.0 == id && e.1 > 0)
    }

    fn polled_add(&mut self, id: u64, d: i32) {
        if d > 0 {
            self.polled_total += 1;
        } else {
            self.polled_total -= 1;
        }
        match self.polled.iter_mut().find(|e| e.0 == id) {
            Some(e) => e.1 = (e.1 as i32 + d) as u32,
            None => self.polled.push((id, d as u32)),
        }
        self.polled.retain(|e| e.1 > 0);
    }

    /// Moves arrived messages to matching receives or the unexpected queue:
    /// the global queue in arrival order, merged with the fast boxes so that
    /// each sender's messages are taken in its own order (by sequence
    /// number; see `Msg::seq`).
    pub fn drain(&mut self) {
        // A fast-box record ahead of its sender's sequence means the messages
        // before it are in the global queue, pushed before the record was
        // written: the next take finds them, so a second round settles it.
        for _ in 0..3 {
            self.drain_global();
            if !self.drain_rings() {
                break;
            }
        }
    }

    /// Takes the global queue.
    fn drain_global(&mut self) {
        if self.mailbox(self.me_local).looks_empty() {
            return;
        }
        let mut got = core::mem::take(&mut self.scratch);
        self.mailbox(self.me_local)
            .take_all(&mut got, self.tune.lockfree);
        for &m in &got {
            // SAFETY: a header published to us by its sender.
            let h = unsafe { &*m };
            let s = h.src_local as usize;
            if h.flags.load(Ordering::Relaxed) & F_RING_OPEN != 0 {
                self.open_rx(s, h.data.load(Ordering::Relaxed) as *const Ring);
                // SAFETY: the announcement is done with, linked nowhere.
                unsafe { self.mailbox(s as u32).give_back(m) };
                continue;
            }
            // The sender's fast-box records before this message first.
            while self.expect[s] != h.seq {
                let k = self.rx_index[s] as usize;
                if k == 0 || self.ring_take(k - 1) != Some(true) {
                    debug_assert!(false, "fast box behind the global queue");
                    break;
                }
            }
            self.expect[s] = h.seq.wrapping_add(1);
            match self.take_posted((h.comm_id, h.src, h.tag)) {
                Some(req) => self.deliver(m, req),
                None => self.unexpected.push_back(m),
            }
        }
        got.clear();
        self.scratch = got;
    }

    /// Takes what is ready in the fast boxes; true if one of them is ahead
    /// of the global queue.
    fn drain_rings(&mut self) -> bool {
        let mut ahead = false;
        for k in 0..self.rx.len() {
            loop {
                match self.ring_take(k) {
                    Some(true) => {}
                    Some(false) => {
                        ahead = true;
                        break;
                    }
                    None => break,
                }
            }
        }
        ahead
    }

    /// Takes the next record of the `k`-th fast box if it is the next
    /// message from its sender: gives it to the first matching posted
    /// receive or copies it to the unexpected queue. `None`: nothing ready;
    /// `Some(false)`: the record is ahead (an earlier message is still in
    /// the global queue).
    #[inline]
    fn ring_take(&mut self, k: usize) -> Option<bool> {
        let (s, ref cons) = self.rx[k];
        let rec: *const Rec = cons.peek()?;
        // SAFETY: a ready record; it stays in place until we pop it.
        let r = unsafe { &*rec };
        let s = s as usize;
        if r.seq != self.expect[s] {
            return Some(false);
        }
        self.take_record(s, r);
        self.expect[s] = r.seq.wrapping_add(1);
        self.rx[k].1.pop(r.len as usize);
        Some(true)
    }

    /// Delivers fast-box record `r` from source `s` to the first matching
    /// posted receive, or copies it to the unexpected queue.
    fn take_record(&mut self, s: usize, r: &Rec) {
        let len = r.len as usize;
        let data = rec_body(r);
        match self.take_posted((r.comm_id, r.src, r.tag)) {
            Some(req) => {
                let spec = self.reqs[req as usize].recv.expect("receive request");
                let cap = dt::packed_size(spec.count, &spec.dt);
                let n = len.min(cap);
                // SAFETY: the record holds `len ≥ n` payload bytes; the
                // receive buffer holds `cap ≥ n`.
                unsafe { copy_plain(data, n, &spec) };
                let st = St::Ours {
                    source: r.src,
                    tag: r.tag,
                    bytes: n as u64,
                    error: truncated(len, cap),
                    cancelled: false,
                };
                self.complete(req, st);
            }
            None => {
                let m = self.own.get(ENVELOPE + len);
                if m.is_null() {
                    // Neither the shared heap nor glibc has the few bytes:
                    // the process is out of memory (as Vec growth would be).
                    std::alloc::handle_alloc_error(
                        std::alloc::Layout::from_size_align(ENVELOPE + len, 64).unwrap(),
                    );
                }
                // SAFETY: a fresh header of ours with room for the payload;
                // the record holds `len` bytes.
                unsafe {
                    let h = &mut *m;
                    h.comm_id = r.comm_id;
                    h.src = r.src;
                    h.tag = r.tag;
                    h.src_local = s as u16;
                    h.len = len as u64;
                    h.seq = r.seq;
                    h.sreq.store(0, Ordering::Relaxed);
                    h.flags.store(F_INLINE | F_OWN, Ordering::Relaxed);
                    h.data.store(h.body() as u64, Ordering::Relaxed);
                    core::ptr::copy_nonoverlapping(data, h.body(), len);
                }
                self.unexpected.push_back(m);
            }
        }
    }

    /// Starts reading source `s`'s fast box (it announced it).
    fn open_rx(&mut self, s: usize, ring: *const Ring) {
        debug_assert!(self.rx_index[s] == 0);
        // SAFETY: initialised by the sender before the announcement, whose
        // push (Release) our take of the queue acquired.
        self.rx.push((s as u32, unsafe { Consumer::new(ring) }));
        let n = self.rx.len();
        self.rx_index[s] = n as u32;
        let slots = RX_RINGS.load(Ordering::Relaxed);
        // SAFETY: `slots` has `nlocal` slots and a source opens one box.
        unsafe { (*slots.add(n - 1)).store(ring as *mut Ring, Ordering::Relaxed) };
        // Release: the slot is filled before waiters count it (`quiet`).
        RX_RINGS_N.store(n, Ordering::Release);
    }

    /// Removes and returns the first posted receive matching a message with
    /// envelope `env`.
    #[inline]
    fn take_posted(&mut self, env: (u64, i32, i32)) -> Option<u32> {
        let w = self.wild;
        let front = self.posted.front()?;
        let p = if matches_env(w, front.comm_id, front.src, front.tag, env) {
            // The usual case: the oldest receive takes it (no shifting).
            self.posted.pop_front().unwrap()
        } else {
            let pos = self
                .posted
                .iter()
                .position(|p| matches_env(w, p.comm_id, p.src, p.tag, env))?;
            self.posted.remove(pos).unwrap()
        };
        if p.polled {
            self.polled_add(p.comm_id, -1);
        }
        Some(p.req)
    }

    /// Copies message `m` into receive request `req`, completes it and
    /// returns the header to its sender.
    fn deliver(&mut self, m: *mut Msg, req: u32) {
        let spec = self.reqs[req as usize].recv.expect("receive request");
        let st = self.copy_out(m, &spec);
        self.complete(req, st);
    }

    /// The receiving half of every protocol: copy out, give the header back.
    fn copy_out(&mut self, m: *mut Msg, spec: &RecvSpec) -> St {
        // SAFETY: a header published to us, owned by us until given back.
        let h = unsafe { &*m };
        let mut flags = h.flags.load(Ordering::Relaxed);
        if flags & F_INLINE == 0 {
            let rdv = h.rdv();
            // Acquire: the sender's stage-on-stall writes (data, flags)
            // happen-before our reads below.
            let mut spins = 0u32;
            while rdv
                .state
                .compare_exchange_weak(S_WAITING, S_MATCHED, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                spins += 1;
                backoff(spins);
            }
            flags = h.flags.load(Ordering::Relaxed);
        }
        // Relaxed: ordered by the Acquire take of the queue and, for a
        // rendezvous, the Acquire CAS above (see `Msg`).
        let data = h.data.load(Ordering::Relaxed) as *const u8;
        let len = h.len as usize;
        let cap = dt::packed_size(spec.count, &spec.dt);
        let n = len.min(cap);
        if n > 0 {
            if flags & F_CMA != 0 {
                self.cma_read(h, data, n, spec);
            } else if flags & F_SYNERGY != 0
                && spec.dt.contig
                && n >= self.tune.synergy_min
                && heap::in_region(spec.buf, n)
            {
                self.synergy_copy(h, data, spec.buf, n);
            } else {
                // SAFETY: `data` holds `len ≥ n` bytes (the sender keeps
                // them until the header is back); the receive buffer holds
                // `cap ≥ n`.
                unsafe { copy_plain(data, n, spec) };
            }
        }
        let st = St::Ours {
            source: h.src,
            tag: h.tag,
            bytes: n as u64,
            error: truncated(len, cap),
            cancelled: false,
        };
        let sender = h.src_local as u32;
        if flags & F_OWN != 0 {
            self.own.put(m);
        } else if flags & (F_INLINE | F_SYNC) == F_INLINE {
            // Nobody waits for this header: return it later, in a batch,
            // off the latency path.
            self.held.push(m);
            if self.held.len() >= HOLD_MAX {
                self.flush_held();
            }
        } else {
            // SAFETY: a header we are done with, linked nowhere.
            unsafe { self.mailbox(sender).give_back(m) };
        }
        st
    }

    /// Returns the held headers to their senders, one chain per sender.
    pub fn flush_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let mut held = core::mem::take(&mut self.held);
        // SAFETY: held headers are live until given back.
        held.sort_unstable_by_key(|&m| unsafe { (*m).src_local });
        for run in held.chunk_by(|&a, &b| unsafe { (*a).src_local == (*b).src_local }) {
            // SAFETY: as above.
            let sender = unsafe { (*run[0]).src_local } as u32;
            // SAFETY: headers we are done with, linked nowhere.
            unsafe { self.mailbox(sender).give_back_all(run) };
        }
        held.clear();
        self.held = held;
    }

    fn cma_read(&self, h: &Msg, data: *const u8, n: usize, spec: &RecvSpec) {
        let mut tmp = Vec::new();
        let dst = if spec.dt.contig {
            spec.buf
        } else {
            tmp.resize(n, 0u8);
            tmp.as_mut_ptr()
        };
        let mut done = 0usize;
        while done < n {
            let local = libc::iovec {
                iov_base: dst.wrapping_add(done).cast(),
                iov_len: n - done,
            };
            let remote = libc::iovec {
                iov_base: (data as *mut u8).wrapping_add(done).cast(),
                iov_len: n - done,
            };
            // SAFETY: one local iovec into our receive buffer (room for n)
            // and one remote iovec in the sender, which keeps the buffer
            // until the header is back.
            let r = unsafe { libc::process_vm_readv(h.pid, &local, 1, &remote, 1, 0) };
            if r <= 0 {
                crate::eprint_noalloc!(
                    "heapmpi: error: cannot read a message from process {} (process_vm_readv: \
                     errno {}); shared heap exhausted and cross-memory attach refused",
                    h.pid,
                    crate::sys::errno()
                );
                break;
            }
            done += r as usize;
        }
        if !spec.dt.contig {
            // SAFETY: `tmp` holds `n` bytes.
            unsafe {
                dt::unpack_prefix(
                    tmp.as_ptr(),
                    n,
                    spec.buf,
                    spec.count,
                    spec.dtype,
                    &spec.dt,
                    spec.comm,
                )
            };
        }
    }

    /// The receiver's side of the synergistic copy.
    fn synergy_copy(&self, h: &Msg, src: *const u8, dst: *mut u8, n: usize) {
        let rdv = h.rdv();
        let block = self.tune.block.max(4096);
        let nblocks = n.div_ceil(block) as u64;
        rdv.dst.store(dst as u64, Ordering::Relaxed);
        rdv.copy_len.store(n as u64, Ordering::Relaxed);
        rdv.block.store(block as u64, Ordering::Relaxed);
        rdv.nblocks.store(nblocks, Ordering::Relaxed);
        // Release: the sender's Acquire load of `go` sees the fields above.
        rdv.go.store(1, Ordering::Release);
        copy_blocks(rdv, src, dst, n, block, nblocks);
        let mut spins = 0;
        // Acquire: pairs with each copier's Release increment, so every
        // block's bytes are visible before the receive completes.
        while rdv.blocks_done.load(Ordering::Acquire) < nblocks {
            spins += 1;
            backoff(spins);
        }
        let helped = rdv.sender_blocks.load(Ordering::Relaxed);
        if helped > 0 {
            stats::P2P_HELPED_MSGS.add(1);
            stats::P2P_HELPED_BLOCKS.add(helped);
        }
    }

    /// The sender's side: copy blocks of our synergistic sends whose
    /// receivers have started.
    fn help(&mut self) {
        for &m in &self.helpable {
            // SAFETY: our header, still out or in our returned stack (not yet
            // recycled: recycling removes it from `helpable` first).
            let h = unsafe { &*m };
            let rdv = h.rdv();
            // Acquire: pairs with the receiver's Release store of `go`.
            if rdv.go.load(Ordering::Acquire) == 0 {
                continue;
            }
            let n = rdv.copy_len.load(Ordering::Relaxed) as usize;
            let block = rdv.block.load(Ordering::Relaxed) as usize;
            let nblocks = rdv.nblocks.load(Ordering::Relaxed);
            let src = h.data.load(Ordering::Relaxed) as *const u8;
            let dst = rdv.dst.load(Ordering::Relaxed) as *mut u8;
            let mine = copy_blocks(rdv, src, dst, n, block, nblocks);
            if mine > 0 {
                rdv.sender_blocks.fetch_add(mine, Ordering::Relaxed);
            }
        }
    }

    /// Takes back headers receivers are done with: completes the sends
    /// waiting for them, frees staging buffers, recycles.
    fn reclaim(&mut self) {
        if self.mailbox(self.me_local).none_returned() {
            return;
        }
        let mut got = core::mem::take(&mut self.scratch);
        self.mailbox(self.me_local).take_returned(&mut got);
        for &m in &got {
            // SAFETY: our header, given back: the receiver no longer uses it
            // (its push was a Release our swap acquired).
            let h = unsafe { &*m };
            let flags = h.flags.load(Ordering::Relaxed);
            let sreq = h.sreq.load(Ordering::Relaxed);
            if flags & F_SYNERGY != 0 {
                self.helpable.retain(|&x| x != m);
            }
            if flags & F_STAGED != 0 {
                // SAFETY: our staging buffer, no longer read.
                unsafe { heap::free(h.data.load(Ordering::Relaxed) as *mut u8) };
            }
            if flags & F_PRIVATE_STAGED != 0 {
                let p = h.data.load(Ordering::Relaxed) as *mut u8;
                // SAFETY: the Box<[u8]> of `send`, `len` long.
                drop(unsafe {
                    Box::from_raw(core::ptr::slice_from_raw_parts_mut(p, h.len as usize))
                });
            }
            if sreq != 0 {
                let w = self.wild;
                self.complete(sreq as u32 - 1, St::empty(w));
            }
            self.put_header(m);
        }
        got.clear();
        self.scratch = got;
    }

    /// One round of progress: returned headers, arrivals, helping, and the
    /// real MPI for polled receives.
    pub fn progress(&mut self) {
        self.reclaim();
        self.drain();
        if !self.helpable.is_empty() {
            self.help();
        }
        if self.polled_total > 0 {
            self.poll_real();
        }
        // Relaxed: a hint for `quiet`, which waiters re-check under the lock
        // regularly anyway.
        NEED_POLL.store(
            !self.helpable.is_empty() || self.polled_total > 0,
            Ordering::Relaxed,
        );
    }

    /// What a waiter does when nothing has happened for a while: return
    /// held headers so their sender can reuse them.
    pub fn idle(&mut self) {
        self.flush_held();
    }

    /// Serves polled receives from the real MPI, in posting order.
    ///
    /// For each polled receive a plain probe finds the message it would get;
    /// if an earlier polled receive also matches that (source, tag), the pass
    /// starts over so the earlier one gets it (a message may have arrived
    /// after the earlier receive was probed). Otherwise a matched probe on
    /// exactly that source and tag takes the message (the first from that
    /// source with that tag, hence the one just seen) and `MPI_Imrecv` moves
    /// it into the receive's buffer.
    fn poll_real(&mut self) {
        let w = self.wild;
        let mut i = 0;
        let mut restarts = 0;
        while i < self.posted.len() {
            if !self.posted[i].polled {
                i += 1;
                continue;
            }
            let req = self.posted[i].req;
            let spec = self.reqs[req as usize].recv.expect("receive");
            let mut flag: c_int = 0;
            // SAFETY: a zeroed status is a valid out-buffer.
            let mut st: ffi::MPI_Status = unsafe { core::mem::zeroed() };
            // SAFETY: valid communicator (pending operations keep it alive)
            // and out-pointers.
            let rc = unsafe { ffi::PMPI_Iprobe(spec.src, spec.tag, spec.comm, &mut flag, &mut st) };
            if rc != 0 || flag == 0 {
                i += 1;
                continue;
            }
            let (s, t) = (st.MPI_SOURCE, st.MPI_TAG);
            let earlier = self.posted.iter().take(i).any(|p| {
                p.polled
                    && p.comm_id == spec.comm_id
                    && (p.src == w.any_source || p.src == s)
                    && (p.tag == w.any_tag || p.tag == t)
            });
            if earlier && restarts < 64 {
                restarts += 1;
                i = 0;
                continue;
            }
            // SAFETY: reading an MPI constant.
            let mut msg = unsafe { ffi::RSMPI_MESSAGE_NULL };
            // SAFETY: as above.
            let rc = unsafe {
                ffi::PMPI_Improbe(
                    s,
                    t,
                    spec.comm,
                    &mut flag,
                    &mut msg,
                    ffi::RSMPI_STATUS_IGNORE,
                )
            };
            if rc != 0 || flag == 0 {
                i += 1;
                continue;
            }
            // SAFETY: reading an MPI constant.
            let mut inner = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: the receive's own buffer, count and datatype.
            unsafe {
                ffi::PMPI_Imrecv(
                    spec.buf.cast(),
                    spec.count,
                    spec.dtype,
                    &mut msg,
                    &mut inner,
                )
            };
            let p = self.posted.remove(i).unwrap();
            self.polled_add(p.comm_id, -1);
            self.reqs[req as usize].inner = Some(inner);
            stats::P2P_WILDCARD_REAL.add(1);
        }
    }

    /// Tests a request: progress, then whether it is done. For requests
    /// carried by the real MPI, tests that request.
    pub fn test(&mut self, i: u32) -> bool {
        if self.reqs[i as usize].done {
            return true;
        }
        self.progress();
        self.check(i)
    }

    /// Whether request `i` is done, without progress of heapmpi's queues
    /// (callers completing many requests progress once per pass); a request
    /// carried by the real MPI is tested there.
    pub fn check(&mut self, i: u32) -> bool {
        let r = &mut self.reqs[i as usize];
        if r.done {
            return true;
        }
        if let Some(mut inner) = r.inner {
            let mut flag: c_int = 0;
            // SAFETY: a zeroed MPI_Status is a valid out-buffer.
            let mut st: ffi::MPI_Status = unsafe { core::mem::zeroed() };
            // SAFETY: a live real request owned by this slot.
            let rc = unsafe { ffi::PMPI_Test(&mut inner, &mut flag, &mut st) };
            r.inner = Some(inner);
            if flag != 0 || rc != 0 {
                if rc != 0 && st.MPI_ERROR == 0 {
                    st.MPI_ERROR = rc;
                }
                r.inner = None;
                self.complete(i, St::Real(st));
                return true;
            }
        }
        false
    }

    /// Cancels a pending receive (sends cannot be cancelled once their
    /// header is out: they complete normally, which MPI allows).
    pub fn cancel(&mut self, i: u32) {
        let r = &self.reqs[i as usize];
        if r.done {
            return;
        }
        if let Some(mut inner) = r.inner {
            // SAFETY: a live real request owned by this slot.
            unsafe { ffi::PMPI_Cancel(&mut inner) };
            return;
        }
        if let Some(pos) = self.posted.iter().position(|p| p.req == i) {
            let p = self.posted.remove(pos).unwrap();
            if p.polled {
                self.polled_add(p.comm_id, -1);
            }
            let w = self.wild;
            self.complete(
                i,
                St::Ours {
                    source: w.any_source,
                    tag: w.any_tag,
                    bytes: 0,
                    error: 0,
                    cancelled: true,
                },
            );
        }
    }

    // ----- probing -----

    /// Finds the first unexpected message matching, after progress.
    pub fn probe(
        &mut self,
        comm: ffi::MPI_Comm,
        comm_id: u64,
        src: i32,
        tag: i32,
        take: bool,
    ) -> Option<(St, Option<u32>)> {
        self.progress();
        let w = self.wild;
        let pos = self
            .unexpected
            .iter()
            // SAFETY: headers in `unexpected` are live until delivered.
            .position(|&m| matches(w, comm_id, src, tag, unsafe { &*m }))?;
        let m = self.unexpected[pos];
        // SAFETY: as above.
        let h = unsafe { &*m };
        let st = St::Ours {
            source: h.src,
            tag: h.tag,
            bytes: h.len,
            error: 0,
            cancelled: false,
        };
        if !take {
            return Some((st, None));
        }
        self.unexpected.remove(pos);
        let slot = ProbedMsg { msg: m, comm };
        let i = match self.free_probed.pop() {
            Some(i) => {
                self.probed[i as usize] = Some(slot);
                i
            }
            None => {
                self.probed.push(Some(slot));
                self.probed.len() as u32 - 1
            }
        };
        Some((st, Some(i)))
    }

    /// Takes a matched-probe message handle's header.
    pub fn take_probed(&mut self, i: usize) -> Option<(*mut Msg, ffi::MPI_Comm)> {
        let p = self.probed.get_mut(i)?.take()?;
        self.free_probed.push(i as u32);
        Some((p.msg, p.comm))
    }

    /// Receives a matched-probe message into request `req`.
    pub fn recv_probed(&mut self, m: *mut Msg, req: u32, spec: RecvSpec) {
        self.reqs[req as usize].recv = Some(spec);
        self.deliver(m, req);
    }

    /// Receives a matched-probe message directly (no request).
    pub fn recv_probed_now(&mut self, m: *mut Msg, spec: &RecvSpec) -> St {
        self.copy_out(m, spec)
    }
}

/// Copies `n` payload bytes at `data` into a receive: memcpy for a
/// contiguous type, else the real MPI's unpacker (a partial last element
/// gets exactly the bytes there are).
///
/// # Safety
/// `data` holds `n` bytes; the receive buffer has room for them.
unsafe fn copy_plain(data: *const u8, n: usize, spec: &RecvSpec) {
    if n == 0 {
        return;
    }
    if spec.dt.contig {
        // SAFETY: per the contract.
        unsafe { core::ptr::copy_nonoverlapping(data, spec.buf, n) };
    } else {
        // SAFETY: per the contract.
        unsafe {
            dt::unpack_prefix(
                data, n, spec.buf, spec.count, spec.dtype, &spec.dt, spec.comm,
            )
        };
    }
}

/// The status error of a `len`-byte message received into `cap` bytes.
fn truncated(len: usize, cap: usize) -> i32 {
    if len > cap {
        ffi::MPI_ERR_TRUNCATE as i32
    } else {
        0
    }
}

/// Claims and copies blocks until none are left; returns how many this
/// caller copied.
fn copy_blocks(
    rdv: &Rendezvous,
    src: *const u8,
    dst: *mut u8,
    n: usize,
    block: usize,
    nblocks: u64,
) -> u64 {
    let mut mine = 0;
    loop {
        // Relaxed: the counter only hands out distinct indices; the data is
        // published through `blocks_done`.
        let b = rdv.next_block.fetch_add(1, Ordering::Relaxed);
        if b >= nblocks {
            return mine;
        }
        let off = b as usize * block;
        let len = block.min(n - off);
        // SAFETY: block `b` is ours alone (unique index); both buffers hold
        // `n` bytes and stay valid until `blocks_done` reaches `nblocks`.
        unsafe { core::ptr::copy_nonoverlapping(src.add(off), dst.add(off), len) };
        // Release: publishes this block's bytes to the receiver.
        rdv.blocks_done.fetch_add(1, Ordering::Release);
        mine += 1;
    }
}

/// Whether ranks outnumber cores (then waits yield at once).
pub fn oversubscribed() -> bool {
    static OVER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *OVER.get_or_init(|| {
        // Online CPUs, not this process's affinity: a rank bound to one
        // core (`--bind-to core`) is not oversubscribed.
        // SAFETY: sysconf has no preconditions.
        let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
        let nlocal = crate::mpi::outcome()
            .map(|o| o.nlocal as usize)
            .unwrap_or(1);
        nlocal > cpus
    })
}

/// Waiting policy: spin for some microseconds (a round is a few ns when
/// the mailbox is quiet), then yield; yield almost at once when ranks
/// outnumber cores, since the peer needs this CPU to make progress.
#[inline]
pub fn backoff(spins: u32) {
    if spins > 4096 || (spins > 4 && oversubscribed()) {
        std::thread::yield_now();
    } else {
        core::hint::spin_loop();
    }
}
