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
//!
//! The table knows the states every layer shares (inactive, carried by a
//! real MPI request, complete); what an operation does while it is under
//! way in heapmpi is the layer's own (`State::Op`), and so are the fields
//! it keeps per slot ([`Ext`]). The point-to-point engine keeps its table
//! under its own lock, next to the queues its operations live in: a
//! separate lock would cost every `MPI_Isend` and `MPI_Irecv` a second
//! lock round.

use core::ffi::c_int;
use core::ops::{Index, IndexMut};
use core::sync::atomic::{AtomicBool, Ordering};

use mpi_sys as ffi;

use super::handle::MAX_SLOTS;

/// A completed operation's status, by kind: the real MPI fills each kind
/// differently, and `p2p::status` writes each as it would.
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
    /// A completed send (or any operation whose status says nothing).
    Sent,
    /// The empty status of a null request.
    Empty,
    /// The empty status of an inactive persistent request (MPICH fills it
    /// differently from a null request's in some calls).
    Inactive,
    /// An operation the real MPI completed (`MPI_ERROR` holds its error).
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

/// What a request is doing; `P` is what an operation under way in heapmpi
/// does, the owning layer's.
#[derive(Clone, Copy)]
pub enum State<P> {
    /// A persistent request not started (or completed and waited for).
    Inactive,
    /// Under way in heapmpi.
    Op(P),
    /// Carried by this real MPI request.
    Real(ffi::MPI_Request),
    /// Complete, with this status.
    Done(St),
}

/// The fields a layer keeps per slot besides the shared ones.
pub trait Ext: Default {
    /// The request is persistent (finishing makes it inactive, not free).
    fn persistent(&self) -> bool;
    /// Forgets what a released slot held.
    fn clear(&mut self);
}

/// One request slot.
pub struct Slot<P, X> {
    live: bool,
    /// What the request is doing.
    pub state: State<P>,
    /// Communicator of the operation (its error handler).
    pub comm: ffi::MPI_Comm,
    /// `MPI_Request_free` was called while active: release on completion.
    pub freed: bool,
    /// A duplicate of the operation's derived datatype, freed with the
    /// slot (see [`Table::hold_type`]).
    held: Option<ffi::MPI_Datatype>,
    /// The layer's own fields.
    pub ext: X,
}

/// The slot of every operation that completed in its call (an immediate
/// or fast-box send; later one-sided operations on the heap): one shared
/// request, always complete, never released. Such an operation needs no
/// slot of its own: waiting for it, testing it, freeing it or cancelling it
/// only has to report a completed operation, so it costs no slot
/// allocation and its completion no release. MPICH does the same (one
/// "lightweight" completed request for all of them); MPI does not promise
/// distinct handles for distinct completed operations, and a handle set to
/// `MPI_REQUEST_NULL` by its completion is all a program may hold
/// afterwards.
pub const SENT_SLOT: u32 = 0;

impl<P, X: Ext> Slot<P, X> {
    /// A slot that holds no request.
    fn vacant() -> Self {
        Slot {
            live: false,
            state: State::Inactive,
            // SAFETY: reading an MPI constant.
            comm: unsafe { ffi::RSMPI_COMM_NULL },
            freed: false,
            held: None,
            ext: X::default(),
        }
    }

    /// Whether the slot holds a request.
    #[inline]
    pub fn live(&self) -> bool {
        self.live
    }
}

/// The request slots of one layer.
pub struct Table<P, X> {
    slots: Vec<Slot<P, X>>,
    free: Vec<u32>,
    /// Freed requests that may still need progress.
    pub orphans: Vec<u32>,
    /// Datatype duplicates of released slots, to free.
    trash: Vec<ffi::MPI_Datatype>,
    /// The duplicates of slots that hold more than one (a persistent
    /// collective with derived send and receive datatypes, a `w` form's
    /// per-block ones) beyond the first, which the slot holds itself: few,
    /// and looked at only when a slot is released while there are some.
    more_held: Vec<(u32, ffi::MPI_Datatype)>,
    /// Communicators the program freed while requests used them.
    zombies: Vec<ffi::MPI_Comm>,
}

impl<P, X> Index<usize> for Table<P, X> {
    type Output = Slot<P, X>;
    #[inline]
    fn index(&self, i: usize) -> &Slot<P, X> {
        &self.slots[i]
    }
}

impl<P, X> IndexMut<usize> for Table<P, X> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut Slot<P, X> {
        &mut self.slots[i]
    }
}

impl<P: Copy, X: Ext> Default for Table<P, X> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Copy, X: Ext> Table<P, X> {
    /// An empty table (no slot, not even [`SENT_SLOT`]: see
    /// [`Table::open`]).
    pub const fn new() -> Self {
        Table {
            slots: Vec::new(),
            free: Vec::new(),
            orphans: Vec::new(),
            trash: Vec::new(),
            more_held: Vec::new(),
            zombies: Vec::new(),
        }
    }

    /// Makes [`SENT_SLOT`], the shared completed request (its communicator
    /// stays null: no error is ever raised on it).
    pub fn open(&mut self) {
        debug_assert!(self.slots.is_empty());
        self.slots.push(Slot {
            live: true,
            state: State::Done(St::Sent),
            ..Slot::vacant()
        });
    }

    /// A new request slot in `state`, or `None` when every handle is in
    /// use.
    ///
    /// A released slot already holds no datatype and its fields are clear
    /// (see [`Table::release`]), so only the fields a request starts with
    /// are written, in place: building a whole slot and moving it in made
    /// the move's wide loads wait on the narrow stores that had just built
    /// it (a store-forwarding stall on every `MPI_Irecv`, a fifth of a
    /// streaming receiver's time).
    #[inline]
    pub fn alloc(&mut self, comm: ffi::MPI_Comm, state: State<P>) -> Option<u32> {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                if self.slots.len() >= MAX_SLOTS {
                    return None;
                }
                self.slots.push(Slot::vacant());
                self.slots.len() as u32 - 1
            }
        };
        let r = &mut self.slots[i as usize];
        debug_assert!(!r.live && r.held.is_none());
        r.live = true;
        r.state = state;
        r.comm = comm;
        r.freed = false;
        Some(i)
    }

    /// The slot `i`, if live.
    #[inline]
    pub fn get(&mut self, i: usize) -> Option<&mut Slot<P, X>> {
        self.slots.get_mut(i).filter(|r| r.live)
    }

    /// Makes slot `i` hold `dup`, a duplicate of a derived datatype the
    /// operation uses after its call returns (freed with the slot).
    pub fn hold_type(&mut self, i: u32, dup: ffi::MPI_Datatype) {
        let r = &mut self.slots[i as usize];
        if r.held.is_none() {
            r.held = Some(dup);
        } else {
            self.more_held.push((i, dup));
        }
    }

    /// Releases slot `i` and what it holds. The datatype duplicate is freed
    /// now if `may_call_mpi`, else by the next [`Table::empty_trash`].
    pub fn release(&mut self, i: u32, may_call_mpi: bool) {
        let r = &mut self.slots[i as usize];
        if !r.live || i == SENT_SLOT {
            return;
        }
        r.live = false;
        r.ext.clear();
        let held = r.held.take();
        let comm = r.comm;
        self.free.push(i);
        if let Some(t) = held {
            self.trash.push(t);
            if !self.more_held.is_empty() {
                let trash = &mut self.trash;
                self.more_held.retain(|&(j, t)| {
                    if j == i {
                        trash.push(t);
                    }
                    j != i
                });
            }
        }
        if may_call_mpi && !self.trash.is_empty() {
            self.empty_trash();
        }
        if !self.zombies.is_empty() && self.zombies.contains(&comm) {
            // Relaxed: a hint, checked again under the owner's lock.
            ZOMBIES_READY.store(true, Ordering::Relaxed);
        }
    }

    /// Whether released slots left datatype duplicates to free.
    #[inline]
    pub fn has_trash(&self) -> bool {
        !self.trash.is_empty()
    }

    /// Frees the datatype duplicates of released slots (the caller may
    /// call MPI).
    pub fn empty_trash(&mut self) {
        for mut t in self.trash.drain(..) {
            // SAFETY: our own duplicate, used by no live slot.
            unsafe { ffi::PMPI_Type_free(&mut t) };
        }
    }

    /// Marks request `i` complete with `st`, releasing it if it was freed.
    #[inline]
    pub fn complete(&mut self, i: u32, st: St, may_call_mpi: bool) {
        let r = &mut self.slots[i as usize];
        r.state = State::Done(st);
        if r.freed {
            self.release(i, may_call_mpi);
        }
    }

    /// Whether slot `i` is an active request (a one-shot request, or a
    /// started persistent one).
    pub fn active(&self, i: u32) -> bool {
        let r = &self.slots[i as usize];
        r.live && !matches!(r.state, State::Inactive)
    }

    /// Tests the real request carrying slot `i` (if any): `Some(status)`
    /// once it completed (the slot is then the caller's to complete),
    /// `None` while it is pending or the slot is not carried by the real
    /// MPI.
    pub fn test_real(&mut self, i: u32) -> Option<St> {
        let State::Real(mut inner) = self.slots[i as usize].state else {
            return None;
        };
        let mut flag: c_int = 0;
        // SAFETY: a zeroed MPI_Status is a valid out-buffer.
        let mut st: ffi::MPI_Status = unsafe { core::mem::zeroed() };
        // SAFETY: a live real request owned by this slot.
        let rc = unsafe { ffi::PMPI_Test(&mut inner, &mut flag, &mut st) };
        if flag == 0 && rc == 0 {
            self.slots[i as usize].state = State::Real(inner);
            return None;
        }
        // MPI_ERROR is only written by the multiple-completion calls: the
        // single test's return code is the error.
        st.MPI_ERROR = rc;
        Some(St::Real(st))
    }

    /// Finishes request `i`, known to be complete: hands its status to `f`
    /// by reference before the slot is released (returning it by value
    /// copied it twice through the stack with overlapping moves that the
    /// following loads had to wait for: a store-forwarding stall per
    /// request in `MPI_Waitall`), then releases a one-shot slot or
    /// deactivates a persistent one.
    #[inline]
    pub fn take_done<R>(&mut self, i: u32, may_call_mpi: bool, f: impl FnOnce(&St) -> R) -> R {
        let r = &mut self.slots[i as usize];
        let State::Done(ref st) = r.state else {
            unreachable!("a completed request")
        };
        let out = f(st);
        if r.ext.persistent() {
            r.state = State::Inactive;
        } else {
            self.release(i, may_call_mpi);
        }
        out
    }

    /// `MPI_Request_free` of slot `i`: released at once if inactive or
    /// complete; else released when it completes, and remembered among the
    /// orphans (a freed request that the real MPI carries, or may come to
    /// carry, is driven by progress from then on).
    pub fn free_request(&mut self, i: u32, may_call_mpi: bool) {
        let r = &mut self.slots[i as usize];
        if matches!(r.state, State::Done(_) | State::Inactive) {
            self.release(i, may_call_mpi);
            return;
        }
        r.freed = true;
        self.orphans.push(i);
    }

    /// Live request slots (at `MPI_Finalize`: requests the program never
    /// completed or freed, or freed ones still under way).
    pub fn live(&self) -> u64 {
        // The shared completed request is always live.
        self.slots.iter().skip(1).filter(|r| r.live).count() as u64
    }

    /// Whether a live request uses communicator `comm`.
    pub fn comm_in_use(&self, comm: ffi::MPI_Comm) -> bool {
        self.slots.iter().any(|r| r.live && r.comm == comm)
    }

    /// `MPI_Comm_free` of `comm`, which live requests still use: its real
    /// free waits until they are released ([`Table::buriable`]).
    pub fn defer_comm_free(&mut self, comm: ffi::MPI_Comm) {
        self.zombies.push(comm);
    }

    /// Communicators whose free was deferred and that no live request uses
    /// any more: the caller frees them, outside its lock (their attribute
    /// callbacks may come back into it).
    pub fn buriable(&mut self) -> Vec<ffi::MPI_Comm> {
        // Relaxed: a hint; a release racing with this store sets it again
        // under the owner's lock, which the caller holds.
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

/// A deferred communicator free may be due (see [`Table::buriable`]); a
/// hint (Relaxed), checked under the owner's lock.
static ZOMBIES_READY: AtomicBool = AtomicBool::new(false);

/// Whether a deferred communicator free may be due.
#[inline]
pub fn zombies_ready() -> bool {
    ZOMBIES_READY.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct E {
        persistent: bool,
        data: Option<u32>,
    }

    impl Ext for E {
        fn persistent(&self) -> bool {
            self.persistent
        }
        fn clear(&mut self) {
            *self = E::default();
        }
    }

    fn comm(v: usize) -> ffi::MPI_Comm {
        // SAFETY: any bit pattern is a valid handle value; the table only
        // compares communicators, never passes them to MPI here.
        unsafe { core::mem::transmute_copy(&v) }
    }

    #[test]
    fn slots_are_reused_and_the_shared_completed_request_stays() {
        let mut t: Table<u8, E> = Table::new();
        t.open();
        let a = t.alloc(comm(1), State::Op(7)).unwrap();
        let b = t.alloc(comm(1), State::Op(8)).unwrap();
        assert_ne!(a, SENT_SLOT);
        assert_ne!(a, b);
        t.get(a as usize).unwrap().ext.data = Some(5);
        assert_eq!(t.live(), 2);
        t.complete(a, St::Sent, false);
        assert_eq!(t.take_done(a, false, |st| st.error()), 0);
        assert!(t.get(a as usize).is_none());
        // The released slot comes back clear.
        let c = t.alloc(comm(2), State::Inactive).unwrap();
        assert_eq!(c, a);
        assert!(t[c as usize].ext.data.is_none());
        // The shared completed request is never released.
        t.release(SENT_SLOT, false);
        assert!(t.get(SENT_SLOT as usize).is_some());
        assert_eq!(t.live(), 2);
    }

    #[test]
    fn persistent_requests_go_inactive_and_freed_ones_release_on_completion() {
        let mut t: Table<u8, E> = Table::new();
        t.open();
        let p = t.alloc(comm(1), State::Op(1)).unwrap();
        t[p as usize].ext.persistent = true;
        t.complete(p, St::Sent, false);
        t.take_done(p, false, |_| ());
        assert!(matches!(t[p as usize].state, State::Inactive));
        assert!(t.active(SENT_SLOT));
        assert!(!t.active(p));
        // Freed while under way: released when it completes.
        let q = t.alloc(comm(1), State::Op(2)).unwrap();
        t.free_request(q, false);
        assert!(t.get(q as usize).is_some());
        assert_eq!(t.orphans, vec![q]);
        t.complete(q, St::Sent, false);
        assert!(t.get(q as usize).is_none());
        // Freed while inactive: released at once.
        t.free_request(p, false);
        assert!(t.get(p as usize).is_none());
    }

    /// Every duplicate a slot holds is freed with it, however many, and
    /// no other slot's.
    #[test]
    fn a_slot_frees_every_datatype_it_holds() {
        let dt = |v: usize| -> ffi::MPI_Datatype {
            // SAFETY: as in `comm`: never passed to MPI (released without
            // calling it, the trash left unemptied).
            unsafe { core::mem::transmute_copy(&v) }
        };
        let mut t: Table<u8, E> = Table::new();
        t.open();
        let a = t.alloc(comm(1), State::Op(1)).unwrap();
        let b = t.alloc(comm(1), State::Op(2)).unwrap();
        for k in 0..3 {
            t.hold_type(a, dt(100 + k));
        }
        t.hold_type(b, dt(200));
        t.release(a, false);
        assert_eq!(t.trash.len(), 3, "a's three duplicates, to free");
        assert_eq!(t.more_held.len(), 0);
        t.release(b, false);
        assert_eq!(t.trash.len(), 4);
        // Nothing left on the real MPI's side: the trash is taken as is.
        t.trash.clear();
    }

    #[test]
    fn a_freed_communicator_is_buried_once_no_request_uses_it() {
        let mut t: Table<u8, E> = Table::new();
        t.open();
        let r = t.alloc(comm(9), State::Op(1)).unwrap();
        assert!(t.comm_in_use(comm(9)));
        t.defer_comm_free(comm(9));
        assert!(t.buriable().is_empty());
        t.complete(r, St::Sent, false);
        t.take_done(r, false, |_| ());
        assert!(zombies_ready());
        assert_eq!(t.buriable().len(), 1);
        assert!(t.buriable().is_empty());
    }
}
