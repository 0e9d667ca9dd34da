//! heapmpi's request slots: what each request is doing (one [`State`]),
//! what it holds until it is released (a duplicate of a derived datatype,
//! its communicator), and the rules of completing, freeing and cancelling
//! (MPI-4.0 §3.7.3–§3.8, §3.9 for persistent requests).
//!
//! A slot is *live* from its creation until it is released: a one-shot
//! request when a wait or test completes it, or when it completes after
//! `MPI_Request_free`; a persistent request when it is freed while
//! inactive, or completes after being freed. Nothing a slot holds is given
//! up before that, so a program may free the datatype (`MPI_Type_free`) or
//! the communicator (`MPI_Comm_free`) of a pending operation, as MPI allows.

use core::ffi::c_int;

use super::*;

/// How long a completion call finds a stallable send pending before it is
/// staged. Long enough that a receiver that is on its way (a copy of up to
/// `eager_max` takes a few microseconds) is not raced; short against the
/// time a receiver busy elsewhere keeps the sender from going on.
const STALL_NS: u64 = 50_000;

/// A completed operation's status, by kind: the real MPI fills each kind
/// differently, and [`crate::p2p::status`] writes each as it would.
#[derive(Clone, Copy)]
pub enum St {
    /// A receive served by heapmpi.
    Recv {
        /// `MPI_SOURCE`.
        source: i32,
        /// `MPI_TAG`.
        tag: i32,
        /// Bytes received.
        bytes: u64,
        /// The operation's error (0 or an error code).
        error: i32,
        /// Cancelled.
        cancelled: bool,
    },
    /// A completed send.
    Sent,
    /// The empty status of a null request.
    Empty,
    /// The empty status of an inactive persistent request (MPICH fills it
    /// differently from a null request's in some calls).
    Inactive,
    /// A receive the real MPI completed (`MPI_ERROR` holds its error).
    Real(ffi::MPI_Status),
}

impl St {
    /// The error the operation ended with (0 for success).
    pub fn error(&self) -> i32 {
        match self {
            St::Recv { error, .. } => *error,
            St::Real(s) => s.MPI_ERROR,
            St::Sent | St::Empty | St::Inactive => 0,
        }
    }
}

/// What a request is doing.
#[derive(Clone, Copy)]
pub enum State {
    /// A persistent request not started (or completed and waited for).
    Inactive,
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
    /// Carried by this real MPI request (polled or remote receives).
    Real(ffi::MPI_Request),
    /// Matched by the progress thread; its bytes wait in
    /// `Engine::unpacks` for a calling thread to unpack them.
    Unpacking,
    /// Complete, with this status.
    Done(St),
}

/// One request slot.
pub struct Req {
    live: bool,
    /// What the request is doing.
    pub state: State,
    /// Communicator of the operation (its error handler).
    pub comm: ffi::MPI_Comm,
    /// `MPI_Request_free` was called while active: release on completion.
    pub freed: bool,
    /// Persistent request arguments; `None` for one-shot requests.
    pub persist: Option<Box<Persist>>,
    /// A receive's destination.
    pub recv: Option<RecvSpec>,
    /// A pending send that needs its receiver: the receiver's node-local
    /// index + 1 (counted in its `Tx::waiting`); else 0.
    pub(super) peer: u32,
    /// A duplicate of the operation's derived datatype, freed with the
    /// slot (see [`Engine::hold_type`]).
    held: Option<ffi::MPI_Datatype>,
}

/// The slot of every nonblocking send that completed in its call (an
/// immediate or fast-box message): one shared request, always complete,
/// never released. Such a send needs no slot of its own: waiting for it,
/// testing it, freeing it or cancelling it only has to report a completed
/// send, so `MPI_Isend` of a small message costs no slot allocation and its
/// completion no release. MPICH does the same (one "lightweight" completed
/// request for all of them); MPI does not promise distinct handles for
/// distinct completed operations, and a handle set to `MPI_REQUEST_NULL` by
/// its completion is all a program may hold afterwards.
pub const SENT_SLOT: u32 = 0;

impl Req {
    /// A slot that holds no request.
    fn vacant() -> Req {
        Req {
            live: false,
            state: State::Inactive,
            // SAFETY: reading an MPI constant.
            comm: unsafe { ffi::RSMPI_COMM_NULL },
            freed: false,
            persist: None,
            recv: None,
            peer: 0,
            held: None,
        }
    }

    /// The request of [`SENT_SLOT`] (its communicator stays null: no error
    /// is ever raised on a completed send).
    pub(super) fn completed_send() -> Req {
        Req {
            live: true,
            state: State::Done(St::Sent),
            ..Req::vacant()
        }
    }
}

impl Engine {
    /// A new request slot in `state`.
    ///
    /// A released slot already holds no persistent arguments, receive or
    /// datatype (see [`Engine::release`]), so only the fields a request
    /// starts with are written, in place: building a whole `Req` and moving
    /// it in made the move's wide loads wait on the narrow stores that had
    /// just built it (a store-forwarding stall on every `MPI_Irecv`, a
    /// fifth of a streaming receiver's time).
    #[inline]
    pub fn new_req(&mut self, comm: ffi::MPI_Comm, state: State) -> Option<u32> {
        let i = match self.free_reqs.pop() {
            Some(i) => i,
            None => {
                if self.reqs.len() >= crate::req::handle::MAX_SLOTS {
                    return None;
                }
                self.reqs.push(Req::vacant());
                self.reqs.len() as u32 - 1
            }
        };
        let r = &mut self.reqs[i as usize];
        debug_assert!(!r.live && r.persist.is_none() && r.recv.is_none() && r.held.is_none());
        r.live = true;
        r.state = state;
        r.comm = comm;
        r.freed = false;
        r.peer = 0;
        Some(i)
    }

    /// The slot `i`, if live.
    pub fn req(&mut self, i: usize) -> Option<&mut Req> {
        self.reqs.get_mut(i).filter(|r| r.live)
    }

    /// Makes slot `i` hold `dup`, a duplicate of a derived datatype the
    /// operation uses after its call returns (freed with the slot).
    pub fn hold_type(&mut self, i: u32, dup: ffi::MPI_Datatype) {
        self.reqs[i as usize].held = Some(dup);
    }

    /// Releases slot `i` and what it holds. The datatype duplicate is freed
    /// now if the holder may call MPI, else by the next calling thread.
    pub fn release(&mut self, i: u32) {
        let r = &mut self.reqs[i as usize];
        if !r.live || i == SENT_SLOT {
            return;
        }
        r.live = false;
        r.persist = None;
        r.recv = None;
        let held = r.held.take();
        let comm = r.comm;
        self.free_reqs.push(i);
        if let Some(t) = held {
            self.trash.push(t);
        }
        if self.may_call_mpi() && !self.trash.is_empty() {
            self.empty_trash();
        }
        if !self.zombies.is_empty() && self.zombies.contains(&comm) {
            ZOMBIES_READY.store(true, Ordering::Relaxed);
        }
    }

    /// Frees the datatype duplicates of released slots.
    pub(super) fn empty_trash(&mut self) {
        for mut t in self.trash.drain(..) {
            // SAFETY: our own duplicate, used by no live slot.
            unsafe { ffi::PMPI_Type_free(&mut t) };
        }
    }

    /// Marks request `i` complete with `st` (releasing it if it was freed).
    pub fn complete(&mut self, i: u32, st: St) {
        let r = &mut self.reqs[i as usize];
        r.state = State::Done(st);
        if r.peer != 0 {
            let p = r.peer as usize - 1;
            r.peer = 0;
            self.tx[p].waiting -= 1;
        }
        if self.reqs[i as usize].freed {
            self.release(i);
        }
    }

    /// Whether slot `i` is an active request (a one-shot request, or a
    /// started persistent one).
    pub fn active(&self, i: u32) -> bool {
        let r = &self.reqs[i as usize];
        r.live && !matches!(r.state, State::Inactive)
    }

    /// Tests a request: progress, then whether it is done.
    pub fn test(&mut self, i: u32) -> bool {
        if matches!(self.reqs[i as usize].state, State::Done(_)) {
            return true;
        }
        self.progress();
        self.check(i)
    }

    /// Whether request `i` is done, without progress of heapmpi's queues
    /// (callers completing many requests progress once per pass); a request
    /// carried by the real MPI is tested there. Calling threads only.
    pub fn check(&mut self, i: u32) -> bool {
        match self.reqs[i as usize].state {
            State::Done(_) => true,
            State::Real(mut inner) => {
                let mut flag: c_int = 0;
                // SAFETY: a zeroed MPI_Status is a valid out-buffer.
                let mut st: ffi::MPI_Status = unsafe { core::mem::zeroed() };
                // SAFETY: a live real request owned by this slot.
                let rc = unsafe { ffi::PMPI_Test(&mut inner, &mut flag, &mut st) };
                if flag == 0 && rc == 0 {
                    self.reqs[i as usize].state = State::Real(inner);
                    return false;
                }
                // MPI_ERROR is only written by the multiple-completion
                // calls: the single test's return code is the error.
                st.MPI_ERROR = rc;
                self.complete(i, St::Real(st));
                true
            }
            State::Send {
                msg,
                stallable: true,
                since,
            } => {
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
                    self.reqs[i as usize].state = State::Send {
                        msg,
                        stallable: true,
                        since: now,
                    };
                    false
                } else if now.saturating_sub(since) >= STALL_NS {
                    self.try_stage(i)
                } else {
                    false
                }
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
    /// the slot is released (what a completion call does with it: write it
    /// out). Returning the status by value instead copied it twice through
    /// the stack with overlapping moves that the following loads had to
    /// wait for (a store-forwarding stall per request in `MPI_Waitall`).
    #[inline]
    pub fn finish_with<R>(&mut self, i: u32, f: impl FnOnce(&St) -> R) -> Option<R> {
        if let State::Inactive = self.reqs[i as usize].state {
            return Some(f(&St::Inactive));
        }
        if !self.check(i) {
            return None;
        }
        let r = &mut self.reqs[i as usize];
        let State::Done(ref st) = r.state else {
            unreachable!("checked done")
        };
        let out = f(st);
        if r.persist.is_some() {
            r.state = State::Inactive;
        } else {
            self.release(i);
        }
        Some(out)
    }

    /// `MPI_Request_free` of slot `i`: released at once if inactive or
    /// complete, else when it completes; a freed request that the real MPI
    /// carries (or may come to carry) is driven by progress from then on.
    pub fn free_request(&mut self, i: u32) {
        let r = &mut self.reqs[i as usize];
        if matches!(r.state, State::Done(_) | State::Inactive) {
            self.release(i);
            return;
        }
        r.freed = true;
        r.persist = None;
        self.orphans.push(i);
    }

    /// Whether freed requests are still under way.
    pub fn has_orphans(&self) -> bool {
        !self.orphans.is_empty()
    }

    /// Live request slots (at `MPI_Finalize`: requests the program never
    /// completed or freed, or freed ones still under way).
    pub fn requests_live(&self) -> u64 {
        // The shared completed send is always live.
        self.reqs.iter().skip(1).filter(|r| r.live).count() as u64
    }

    /// Drives freed requests the real MPI carries (nobody waits for them).
    pub(super) fn drive_orphans(&mut self) {
        let mut k = 0;
        while k < self.orphans.len() {
            let i = self.orphans[k];
            let r = &self.reqs[i as usize];
            if !r.live || !r.freed {
                self.orphans.swap_remove(k);
                continue;
            }
            if matches!(r.state, State::Real(_)) && self.check(i) {
                // Completed and released by `complete`.
                self.orphans.swap_remove(k);
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
            State::Posted => {
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
        self.reqs.iter().any(|r| r.live && r.comm == comm)
    }

    /// `MPI_Comm_free` of `comm`, which live requests still use: its real
    /// free waits until they are released ([`Engine::buriable`]).
    pub fn defer_comm_free(&mut self, comm: ffi::MPI_Comm) {
        self.zombies.push(comm);
    }

    /// Communicators whose free was deferred and that no live request uses
    /// any more: the caller frees them, outside the engine (their attribute
    /// callbacks come back into it).
    pub fn buriable(&mut self) -> Vec<ffi::MPI_Comm> {
        ZOMBIES_READY.store(false, Ordering::Relaxed);
        let mut out = Vec::new();
        let mut k = 0;
        while k < self.zombies.len() {
            let c = self.zombies[k];
            if self.comm_in_use(c) {
                k += 1;
            } else {
                out.push(self.zombies.swap_remove(k));
            }
        }
        out
    }
}

/// A deferred communicator free may be due (see [`Engine::buriable`]);
/// a hint (Relaxed), checked under the engine lock.
static ZOMBIES_READY: AtomicBool = AtomicBool::new(false);

/// Whether a deferred communicator free may be due.
#[inline]
pub fn zombies_ready() -> bool {
    ZOMBIES_READY.load(Ordering::Relaxed)
}
