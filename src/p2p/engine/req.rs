//! The point-to-point side of heapmpi's requests (the slots and their
//! rules are `crate::req::table`'s): what a send or receive under way does
//! ([`Op`]), what its slot keeps ([`ReqExt`]), and what completing,
//! testing and cancelling one involves here (the receiver a send waits for,
//! stage-on-stall, the posted queue).

use core::sync::atomic::AtomicU64;

use super::*;
pub use crate::req::table::{self, zombies_ready, St, SENT_SLOT};

/// How long a completion call finds a stallable send pending before it is
/// staged. Long enough that a receiver that is on its way (a copy of up to
/// `eager_max` takes a few microseconds) is not raced; short against the
/// time a receiver busy elsewhere keeps the sender from going on.
const STALL_NS: u64 = 50_000;

/// What a point-to-point operation under way in heapmpi is doing.
#[derive(Clone, Copy)]
pub enum Op {
    /// A send whose header is out and that needs its receiver to take it.
    Send {
        /// Our header, still the receiver's (for stage-on-stall).
        msg: *mut Msg,
        /// A standard-mode send that may be staged if the receiver is late.
        stallable: bool,
        /// When a completion call first found it pending (monotonic ns; 0:
        /// not yet): stage-on-stall counts from there.
        since: u64,
    },
    /// A receive in the posted queue.
    Posted,
    /// Matched by the progress thread; its bytes wait in
    /// `Engine::unpacks` for a calling thread to unpack them.
    Unpacking,
    /// A nonblocking collective under way in the collectives' layer, which
    /// says when it is done (see [`set_coll_progress`]); pending since the
    /// given time (monotonic ns; 0: not yet looked at), for ringing.
    Coll {
        /// When a completion call first found it pending.
        since: u64,
        /// When it last rang the node's peers.
        rung: u64,
    },
}

/// The collectives' layer's progress of its nonblocking collectives:
/// `f(Some(i), may_call_mpi)` moves them on and says whether the one of
/// slot `i` is done (it then forgets it); `f(None, may_call_mpi)` moves
/// them on and says whether any is still pending. `may_call_mpi`: the
/// caller may call the MPI library (not the progress thread below
/// `MPI_THREAD_MULTIPLE`). Registered once at start.
type CollProgress = fn(Option<u32>, bool) -> bool;
static COLL_PROGRESS: std::sync::OnceLock<CollProgress> = std::sync::OnceLock::new();

/// Registers the nonblocking collectives' progress (see [`COLL_PROGRESS`]).
/// It runs under the engine and must never take it.
pub fn set_coll_progress(f: CollProgress) {
    let _ = COLL_PROGRESS.set(f);
}

impl Engine {
    /// Moves nonblocking collectives on; whether any is still pending.
    #[inline]
    pub(super) fn coll_progress(&self) -> bool {
        COLL_PROGRESS
            .get()
            .is_some_and(|f| f(None, self.may_call_mpi()))
    }
}

/// How long a completion call finds a nonblocking collective pending
/// before it rings the node's peers (a peer inside the real MPI then gets
/// its progress thread to move its part), and how often it rings again:
/// as the point-to-point waits (`api::complete`).
const COLL_RING_AFTER_NS: u64 = 20_000;
const COLL_RING_EVERY_NS: u64 = 200_000;

/// What a point-to-point request is doing.
pub type State = table::State<Op>;

/// The point-to-point fields of a request slot.
#[derive(Default)]
pub struct ReqExt {
    /// Persistent request arguments; `None` for one-shot requests.
    pub persist: Option<Box<Persist>>,
    /// A receive's destination.
    pub recv: Option<RecvSpec>,
    /// A pending send that needs its receiver: the receiver's node-local
    /// index + 1 (counted in its `Tx::waiting`); else 0.
    pub(super) peer: u32,
    /// `MPI_Isendrecv`: the slot + 1 of the send this receive's request
    /// also stands for (it is complete only when that send is too, which
    /// is then released); else 0.
    pub companion: u32,
    /// Memory the operation reads until it completes, freed with the slot
    /// (`MPI_Isendrecv_replace`: the outgoing data, packed).
    pub scratch: Option<Vec<u8>>,
}

impl table::Ext for ReqExt {
    fn persistent(&self) -> bool {
        self.persist.is_some()
    }
    fn clear(&mut self) {
        if let Some(p) = self.persist.take() {
            release_persist(*p);
        }
        self.recv = None;
        self.peer = 0;
        self.companion = 0;
        self.scratch = None;
    }
}

/// One point-to-point request slot.
pub type Req = table::Slot<Op, ReqExt>;

/// The point-to-point request slots.
pub type Reqs = table::Table<Op, ReqExt>;

/// Changes of state that can end a pending receive (completion, being
/// matched by the progress thread, being handed to the real MPI) so far,
/// for [`known_pending`] and [`unchanged_since`]. Written only by the
/// engine's holder (so a load and a store, not a read-modify-write, which
/// would drain the store buffer on every completion); Relaxed: a reader
/// that misses the newest value answers as if its call came just before
/// the change, and a later call sees it.
static CHANGES: AtomicU64 = AtomicU64::new(0);

/// The receive in slot `SEEN & (MAX_SLOTS - 1)` was pending, as seen by its
/// holder when `CHANGES` was `SEEN >> 24` (`u64::MAX`: none). Relaxed, as
/// `CHANGES`: it is written under the engine with the value of `CHANGES`
/// read there, so the pair it holds was true together.
static SEEN: AtomicU64 = AtomicU64::new(u64::MAX);

/// Records a change of state that can end a pending receive.
#[inline]
pub(super) fn changed() {
    CHANGES.store(
        CHANGES.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

/// The key of `SEEN` for slot `i` at `changes`.
#[inline]
fn seen_key(changes: u64, i: u32) -> u64 {
    (changes << 24) | u64::from(i)
}

/// Whether nothing has changed since [`Engine::changes`] was `c`: no
/// request changed state and nothing has arrived that progress would take
/// (`quiet`). Every receive that [`Engine::waits_in_queue`] then is still
/// pending.
#[inline]
pub fn unchanged_since(c: u64) -> bool {
    CHANGES.load(Ordering::Relaxed) == c && quiet()
}

/// Whether receive `i` is certainly still pending, without the engine: the
/// last test found it waiting in the queue and nothing has changed since
/// (see [`unchanged_since`]). `MPI_Test` polling one receive then costs a
/// few loads.
#[inline]
pub fn known_pending(i: u32) -> bool {
    SEEN.load(Ordering::Relaxed) == seen_key(CHANGES.load(Ordering::Relaxed), i) && quiet()
}

impl Engine {
    /// The count of changes (see [`unchanged_since`]), as of now: exact
    /// under the engine, which every writer holds.
    pub fn changes(&self) -> u64 {
        CHANGES.load(Ordering::Relaxed)
    }

    /// Whether request `i` is a receive waiting in heapmpi's posted queue
    /// for a message only heapmpi's progress delivers: it stays pending
    /// until [`unchanged_since`] turns false.
    pub fn waits_in_queue(&self, i: u32) -> bool {
        let r = &self.reqs[i as usize];
        matches!(r.state, State::Op(Op::Posted)) && r.ext.companion == 0 && self.polled_total == 0
    }

    /// Notes that the caller found request `i` pending after progress, so
    /// that [`known_pending`] answers for it until something changes.
    pub fn note_pending(&mut self, i: u32) {
        if self.waits_in_queue(i) {
            SEEN.store(seen_key(self.changes(), i), Ordering::Relaxed);
        }
    }

    /// A new request slot in `state` (see [`table::Table::alloc`]).
    #[inline]
    pub fn new_req(&mut self, comm: ffi::MPI_Comm, state: State) -> Option<u32> {
        self.reqs.alloc(comm, state)
    }

    /// The slot `i`, if live.
    #[inline]
    pub fn req(&mut self, i: usize) -> Option<&mut Req> {
        self.reqs.get(i)
    }

    /// Makes slot `i` hold `dup`, a duplicate of a derived datatype the
    /// operation uses after its call returns (freed with the slot).
    pub fn hold_type(&mut self, i: u32, dup: ffi::MPI_Datatype) {
        self.reqs.hold_type(i, dup);
    }

    /// Releases slot `i` and what it holds. The datatype duplicate is freed
    /// now if the holder may call MPI, else by the next calling thread.
    pub fn release(&mut self, i: u32) {
        let may = self.may_call_mpi();
        self.reqs.release(i, may);
    }

    /// Marks request `i` complete with `st` (releasing it if it was freed);
    /// a send no longer waits for its receiver.
    pub fn complete(&mut self, i: u32, st: St) {
        changed();
        let r = &mut self.reqs[i as usize];
        if r.ext.peer != 0 {
            let p = r.ext.peer as usize - 1;
            r.ext.peer = 0;
            self.tx[p].waiting -= 1;
        }
        let may = self.may_call_mpi();
        self.reqs.complete(i, st, may);
    }

    /// Whether slot `i` is an active request (a one-shot request, or a
    /// started persistent one).
    pub fn active(&self, i: u32) -> bool {
        self.reqs.active(i)
    }

    /// Tests a request: progress, then whether it is done.
    pub fn test(&mut self, i: u32) -> bool {
        let r = &self.reqs[i as usize];
        if matches!(r.state, State::Done(_)) && r.ext.companion == 0 {
            return true;
        }
        self.progress();
        self.check(i)
    }

    /// Whether request `i` is done, with its companion send (see
    /// [`ReqExt::companion`]), which is released once both are; without
    /// progress of heapmpi's queues, as [`Engine::check_one`]. Calling
    /// threads only.
    pub fn check(&mut self, i: u32) -> bool {
        if !self.check_one(i) {
            return false;
        }
        let c = self.reqs[i as usize].ext.companion;
        if c == 0 {
            return true;
        }
        let s = c - 1;
        if !self.check_one(s) {
            return false;
        }
        let may = self.may_call_mpi();
        self.reqs.take_done(s, may, |_| ());
        self.reqs[i as usize].ext.companion = 0;
        true
    }

    /// Makes request `i` (a receive) stand also for send `s` (`MPI_Isendrecv`).
    pub fn set_companion(&mut self, i: u32, s: u32) {
        self.reqs[i as usize].ext.companion = s + 1;
    }

    /// A slot carrying the real MPI's request `inner` (a half of
    /// `MPI_Isendrecv` that the real MPI serves), or `None` when every
    /// handle is in use.
    pub fn wrap_real(&mut self, comm: ffi::MPI_Comm, inner: ffi::MPI_Request) -> Option<u32> {
        self.new_req(comm, State::Real(inner))
    }

    /// Whether request `i` alone is done, without progress of heapmpi's
    /// queues (callers completing many requests progress once per pass); a
    /// request carried by the real MPI is tested there.
    fn check_one(&mut self, i: u32) -> bool {
        match self.reqs[i as usize].state {
            State::Done(_) => true,
            State::Real(_) => match self.reqs.test_real(i) {
                Some(st) => {
                    self.complete(i, st);
                    true
                }
                None => false,
            },
            State::Op(Op::Send {
                msg,
                stallable: true,
                since,
            }) => {
                // Stage-on-stall: a standard send whose receiver has not
                // taken it for STALL_NS of the caller's waiting or testing
                // (MPI_Wait, or a loop of MPI_Test as in HPCC
                // RandomAccess) is copied to a shared buffer and completes,
                // as an eager protocol would have completed it at once.
                // The clock is read on the first check and then on every
                // 16th (a Test loop checks far more often than STALL_NS
                // needs; the clock was a tenth of such a loop's time).
                if since != 0 {
                    self.stall_polls = self.stall_polls.wrapping_add(1);
                    if self.stall_polls % 16 != 0 {
                        return false;
                    }
                }
                let now = crate::sys::monotonic_ns();
                if since == 0 {
                    self.reqs[i as usize].state = State::Op(Op::Send {
                        msg,
                        stallable: true,
                        since: now,
                    });
                    false
                } else if now.saturating_sub(since) >= STALL_NS {
                    self.try_stage(i)
                } else {
                    false
                }
            }
            State::Op(Op::Coll { since, rung }) => {
                let may = self.may_call_mpi();
                if COLL_PROGRESS.get().is_some_and(|f| f(Some(i), may)) {
                    self.complete(i, St::Sent);
                    return true;
                }
                // The clock is read on the first check and then on every
                // 16th: a loop of MPI_Test checks far more often than the
                // ringing needs.
                if since != 0 {
                    self.stall_polls = self.stall_polls.wrapping_add(1);
                    if self.stall_polls % 16 != 0 {
                        return false;
                    }
                }
                let now = crate::sys::monotonic_ns();
                let since = if since == 0 { now } else { since };
                let rung = if now - since >= COLL_RING_AFTER_NS && now - rung >= COLL_RING_EVERY_NS
                {
                    self.ring_all();
                    now
                } else {
                    rung
                };
                self.reqs[i as usize].state = State::Op(Op::Coll { since, rung });
                false
            }
            _ => false,
        }
    }

    /// If request `i` is inactive or complete, finishes it: releases a
    /// one-shot slot, deactivates a persistent one, and returns its status.
    /// The caller has made progress (once per pass over its requests).
    pub fn finish(&mut self, i: u32) -> Option<St> {
        self.finish_with(i, |st| *st)
    }

    /// [`Engine::finish`], handing the status to `f` by reference before
    /// the slot is released (see [`table::Table::take_done`]).
    #[inline]
    pub fn finish_with<R>(&mut self, i: u32, f: impl FnOnce(&St) -> R) -> Option<R> {
        if let State::Inactive = self.reqs[i as usize].state {
            return Some(f(&St::Inactive));
        }
        if !self.check(i) {
            return None;
        }
        let may = self.may_call_mpi();
        Some(self.reqs.take_done(i, may, f))
    }

    /// `MPI_Request_free` of slot `i` (see [`table::Table::free_request`]);
    /// a persistent request freed while active is not restarted.
    pub fn free_request(&mut self, i: u32) {
        let may = self.may_call_mpi();
        // The companion send goes on as a freed request of its own.
        let c = core::mem::take(&mut self.reqs[i as usize].ext.companion);
        if c != 0 {
            self.reqs.free_request(c - 1, may);
        }
        self.reqs.free_request(i, may);
        if let Some(p) = self.reqs.get(i as usize).and_then(|r| r.ext.persist.take()) {
            release_persist(*p);
        }
    }

    /// Whether freed requests are still under way.
    pub fn has_orphans(&self) -> bool {
        !self.reqs.orphans.is_empty()
    }

    /// Live request slots (at `MPI_Finalize`: requests the program never
    /// completed or freed, or freed ones still under way).
    pub fn requests_live(&self) -> u64 {
        self.reqs.live()
    }

    /// Drives freed requests the real MPI carries (nobody waits for them).
    pub(super) fn drive_orphans(&mut self) {
        let mut k = 0;
        while k < self.reqs.orphans.len() {
            let i = self.reqs.orphans[k];
            let r = &self.reqs[i as usize];
            if !r.live() || !r.freed {
                self.reqs.orphans.swap_remove(k);
                continue;
            }
            if matches!(r.state, State::Real(_) | State::Op(Op::Coll { .. })) && self.check(i) {
                // Completed and released by `complete`.
                self.reqs.orphans.swap_remove(k);
                continue;
            }
            k += 1;
        }
    }

    /// Cancels a pending receive (sends cannot be cancelled once their
    /// header is out: they complete normally, which MPI allows).
    pub fn cancel(&mut self, i: u32) {
        match self.reqs[i as usize].state {
            State::Real(mut inner) => {
                // SAFETY: a live real request owned by this slot.
                unsafe { ffi::PMPI_Cancel(&mut inner) };
            }
            State::Op(Op::Posted) => {
                if let Some(pos) = self.posted.iter().position(|p| p.req == i) {
                    let p = self.posted.remove(pos).unwrap();
                    if p.polled {
                        self.polled_add(p.comm_id, -1);
                    }
                    let w = self.wild;
                    self.complete(
                        i,
                        St::Recv {
                            source: w.any_source,
                            tag: w.any_tag,
                            bytes: 0,
                            error: 0,
                            cancelled: true,
                        },
                    );
                }
            }
            _ => {}
        }
    }

    /// Whether a live request uses communicator `comm`.
    pub fn comm_in_use(&self, comm: ffi::MPI_Comm) -> bool {
        self.reqs.comm_in_use(comm)
    }

    /// `MPI_Comm_free` of `comm`, which live requests still use: its real
    /// free waits until they are released ([`Engine::buriable`]).
    pub fn defer_comm_free(&mut self, comm: ffi::MPI_Comm) {
        self.reqs.defer_comm_free(comm);
    }

    /// Communicators whose free was deferred and that no live request uses
    /// any more: the caller frees them, outside the engine (their attribute
    /// callbacks come back into it).
    pub fn buriable(&mut self) -> Vec<ffi::MPI_Comm> {
        self.reqs.buriable()
    }
}
