//! The state of a window heapmpi runs ([`Fast`]) and its making, collective
//! over the window's members ([`make_fast`]).
//!
//! A window heapmpi runs has every member's memory address, size and
//! displacement unit (gathered once at creation: addresses agree in every
//! rank, so no translation is ever needed), a private duplicate of the
//! communicator whose node state ([`crate::comm::node`]) carries fences,
//! and a block in the shared heap holding, per member, the lock word of
//! passive target, the completion counter of post-start-complete-wait and
//! the lock that serialises accumulates heapmpi cannot make atomic in
//! hardware, then the post flags (one per pair of members, each written
//! by its target only). Each member's own epochs ([`Epochs`]) are private
//! to it.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use mpi_sys as ffi;

use crate::comm::node::{Node, LINE};
use crate::heap;
use crate::stats;

/// One member's window memory, as every member sees it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Peer {
    /// Address of its memory (the same in every process of the node).
    pub base: usize,
    /// Bytes of it.
    pub size: usize,
    /// Displacement unit.
    pub unit: usize,
    /// Its process, for cross-memory attach.
    pub pid: i32,
}

/// What a member's passive, post-start and accumulate synchronisation use,
/// each word on a line of its own: written by many members, read by many.
const PER_MEMBER: usize = 3 * LINE;

/// Bytes of the shared block of a window of `n` members.
fn block_size(n: usize) -> usize {
    n * PER_MEMBER + (n * n * 8).next_multiple_of(LINE)
}

/// The epochs a member has open on a window (private to it).
#[derive(Default)]
pub struct Epochs {
    /// A fence opened an epoch (the last fence did not say
    /// `MPI_MODE_NOSUCCEED`).
    pub fence: bool,
    /// Targets of the access epoch `MPI_Win_start` opened.
    pub start: Option<Box<[usize]>>,
    /// An exposure epoch `MPI_Win_post` opened, not yet waited for.
    pub exposed: bool,
    /// Completions the exposure epochs so far expect in all (cumulative).
    pub expected: u64,
    /// Per target: posts of it this member consumed with `MPI_Win_start`.
    pub consumed: Box<[u64]>,
    /// Per origin: posts this member made to it.
    pub posted: Box<[u64]>,
    /// `MPI_Win_lock_all` is in force: `Some(the targets whose lock word
    /// it took)` (none with `MPI_MODE_NOCHECK`, nor those locked already).
    pub lock_all: Option<Box<[bool]>>,
    /// Per target: the lock held on it (`Some((exclusive, nocheck))`).
    pub locks: Box<[Option<(bool, bool)>]>,
    /// Targets locked one by one.
    pub n_locked: usize,
}

impl Epochs {
    /// Whether this member may access `t` now.
    #[inline]
    pub fn may_access(&self, t: usize) -> bool {
        self.fence
            || self.lock_all.is_some()
            || self.locks[t].is_some()
            || self.start.as_ref().is_some_and(|s| s.contains(&t))
    }

    /// Whether a passive target epoch is open on `t` (or on every target,
    /// `t == None`).
    pub fn passive(&self, t: Option<usize>) -> bool {
        self.lock_all.is_some()
            || match t {
                Some(t) => self.locks[t].is_some(),
                None => self.n_locked > 0,
            }
    }
}

/// A window heapmpi runs.
pub struct Fast {
    /// This member's rank in the window.
    pub me: usize,
    /// Members.
    pub n: usize,
    /// Every member's memory (a dynamic window: the whole address space,
    /// displacement unit 1, since displacements are addresses).
    pub peers: Box<[Peer]>,
    /// Displacements are absolute addresses (`MPI_Win_create_dynamic`).
    pub dynamic: bool,
    /// The private duplicate of the communicator.
    comm: crate::raw::Comm,
    /// Its node state (fences), none for a window of one member.
    node: Option<&'static Node>,
    /// The shared block (see [`block_size`]).
    block: *mut u8,
    /// The window's group, to translate the groups of post and start.
    pub group: ffi::MPI_Group,
    /// This member's epochs (change them through [`Fast::epochs`], which
    /// keeps the summaries below in step).
    ep: Mutex<Epochs>,
    /// Which targets this member may access now: [`FENCE`], [`ALL`],
    /// [`STARTED`], one bit per target below [`BITS`], [`MORE`] for the
    /// others (then the epochs say). Read without the lock by every
    /// operation.
    access: AtomicU64,
    /// The same for passive target epochs only (flushes).
    passive: AtomicU64,
    /// An operation ran in the current fence epoch (then, as in both stock
    /// MPIs, a lock may no longer open until a fence closes it).
    fence_used: AtomicBool,
    /// Fan-out of the fence's barrier tree (`HEAPMPI_COLL_RADIX`).
    radix: usize,
}

/// Summary bit: a fence epoch is open.
const FENCE: u64 = 1 << 63;
/// Summary bit: `MPI_Win_lock_all` is in force.
const ALL: u64 = 1 << 62;
/// Summary bit: some target at or above [`BITS`] is open (ask the epochs).
const MORE: u64 = 1 << 61;
/// Summary bit: an access epoch (`MPI_Win_start`) is open.
const STARTED: u64 = 1 << 60;
/// Targets with a bit of their own in the summaries.
const BITS: usize = 60;

/// The summary bit of target `t`.
fn bit(t: usize) -> u64 {
    if t < BITS {
        1 << t
    } else {
        MORE
    }
}

/// This member's epochs on a window, locked; the summaries are brought up
/// to date when the guard goes.
pub struct EpochGuard<'a> {
    f: &'a Fast,
    g: std::sync::MutexGuard<'a, Epochs>,
}

impl core::ops::Deref for EpochGuard<'_> {
    type Target = Epochs;
    fn deref(&self) -> &Epochs {
        &self.g
    }
}

impl core::ops::DerefMut for EpochGuard<'_> {
    fn deref_mut(&mut self) -> &mut Epochs {
        &mut self.g
    }
}

impl Drop for EpochGuard<'_> {
    fn drop(&mut self) {
        let ep = &*self.g;
        let mut access = 0;
        let mut passive = 0;
        if ep.fence {
            access |= FENCE;
        }
        if ep.lock_all.is_some() {
            access |= ALL;
            passive |= ALL;
        }
        for (t, l) in ep.locks.iter().enumerate() {
            if l.is_some() {
                access |= bit(t);
                passive |= bit(t);
            }
        }
        if let Some(s) = &ep.start {
            access |= STARTED;
            for &t in s.iter() {
                access |= bit(t);
            }
        }
        // Relaxed: read only by this process's operations, which MPI
        // orders after the synchronisation call that opened their epoch
        // (program order in one thread, the program's own synchronisation
        // between threads); the mutex orders the writers.
        self.f.access.store(access, Ordering::Relaxed);
        self.f.passive.store(passive, Ordering::Relaxed);
    }
}

// SAFETY: the block lives in the shared heap until `Win_free`, which every
// member enters only after its last access; every access to it is atomic.
// The handles are process-wide identifiers. The private state is behind a
// mutex.
unsafe impl Send for Fast {}
// SAFETY: as above.
unsafe impl Sync for Fast {}

impl Fast {
    /// This member's epochs, locked (see [`EpochGuard`]).
    pub fn epochs(&self) -> EpochGuard<'_> {
        EpochGuard {
            f: self,
            g: self.ep.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }

    /// Whether this member may access target `t` now.
    #[inline]
    pub fn may_access(&self, t: usize) -> bool {
        // Relaxed: see `EpochGuard::drop`.
        let v = self.access.load(Ordering::Relaxed);
        if v & FENCE != 0 {
            // Relaxed (both): private to this process, read by its next
            // lock call, which MPI orders after this operation.
            if !self.fence_used.load(Ordering::Relaxed) {
                self.fence_used.store(true, Ordering::Relaxed);
            }
            return true;
        }
        if v & ALL != 0 {
            return true;
        }
        match bit(t) {
            MORE => v & MORE != 0 && self.epochs().may_access(t),
            b => v & b != 0,
        }
    }

    /// Whether an operation ran in the current fence epoch; `clear` starts
    /// a new one.
    pub fn fence_used(&self, clear: bool) -> bool {
        // Relaxed: see `may_access`.
        if clear {
            self.fence_used.swap(false, Ordering::Relaxed)
        } else {
            self.fence_used.load(Ordering::Relaxed)
        }
    }

    /// Whether any epoch is open (an operation on `MPI_PROC_NULL` then
    /// succeeds).
    #[inline]
    pub fn any_epoch(&self) -> bool {
        // Relaxed: see `EpochGuard::drop`.
        self.access.load(Ordering::Relaxed) != 0
    }

    /// Whether a passive target epoch covers `t` (`None`: any target).
    #[inline]
    pub fn passive_on(&self, t: Option<usize>) -> bool {
        // Relaxed: see `EpochGuard::drop`.
        let v = self.passive.load(Ordering::Relaxed);
        match t {
            None => v != 0,
            Some(t) if bit(t) != MORE => v & (ALL | bit(t)) != 0,
            Some(t) => v & ALL != 0 || v & MORE != 0 && self.epochs().passive(Some(t)),
        }
    }

    fn word(&self, off: usize) -> &AtomicU64 {
        // SAFETY: a live, aligned word of the block (callers stay inside
        // it: member and pair indices are below `n`).
        unsafe { &*(self.block.add(off) as *const AtomicU64) }
    }

    /// Target `t`'s passive-target lock word.
    pub fn lock_word(&self, t: usize) -> &AtomicU64 {
        self.word(t * PER_MEMBER)
    }

    /// Target `t`'s count of completed access epochs towards it.
    pub fn completions(&self, t: usize) -> &AtomicU64 {
        self.word(t * PER_MEMBER + LINE)
    }

    /// Target `t`'s lock for accumulates done in software.
    pub fn acc_lock(&self, t: usize) -> &AtomicU32 {
        // SAFETY: as in `word`; a u32 at the start of an aligned line.
        unsafe { &*(self.block.add(t * PER_MEMBER + 2 * LINE) as *const AtomicU32) }
    }

    /// How many times target `t` posted to origin `o` (written by `t`).
    pub fn posts(&self, o: usize, t: usize) -> &AtomicU64 {
        self.word(self.n * PER_MEMBER + (o * self.n + t) * 8)
    }

    /// The flag barrier of the members (a fence).
    pub fn barrier(&self) {
        let Some(node) = self.node else { return };
        let k = self.radix;
        if node.n <= k + 1 && !crate::sys::oversubscribed() {
            node.barrier_flat();
        } else {
            node.barrier_tree(k, || 0);
        }
    }

    /// Frees what the window's state holds once the real window is freed:
    /// the shared block (member 0 allocated it) and this member's group
    /// and communicator.
    ///
    /// # Safety
    /// Every member passed the barrier of the window's free.
    pub(super) unsafe fn free(mut self) {
        if self.me == 0 {
            // SAFETY: our block; every member passed the barrier (the
            // contract).
            unsafe { heap::free(self.block) };
        }
        // SAFETY: our own group and communicator, no longer used.
        unsafe {
            ffi::PMPI_Group_free(&mut self.group);
            ffi::PMPI_Comm_free(&mut self.comm.0);
        }
    }
}

/// A byte every member reads in every other through cross-memory attach at
/// creation, to learn whether the kernel lets it.
static PROBE: u8 = 0x5a;

/// Whether this member can read every other member's memory through
/// cross-memory attach (`probes`: each member's `PROBE` address and pid).
fn cma_reaches(peers: &[(usize, i32)]) -> bool {
    peers.iter().all(|&(addr, pid)| {
        let mut b = 0u8;
        // SAFETY: one byte into a local.
        let ok = unsafe { crate::sys::cma::read(pid, addr, &mut b, 1) };
        ok && b == 0x5a
    })
}

/// The fast state of a window over `comm` (collective), or `None` when a
/// member cannot take part.
///
/// # Safety
/// As `window::adopt`: `comm` is the creating call's communicator.
pub(super) unsafe fn make_fast(
    comm: ffi::MPI_Comm,
    base: usize,
    size: usize,
    unit: usize,
    dynamic: bool,
) -> Option<Fast> {
    let (mut me, mut n) = (0, 0);
    // SAFETY: a valid communicator, valid out-pointers.
    unsafe {
        ffi::PMPI_Comm_rank(comm, &mut me);
        ffi::PMPI_Comm_size(comm, &mut n);
    }
    let (me, n) = (me as usize, n as usize);
    // Every member's memory, pid, probe address, and whether its memory
    // is in the heap.
    let in_heap = dynamic || size == 0 || heap::in_region(base as *const u8, size);
    // SAFETY: a system call without arguments.
    let pid = unsafe { libc::getpid() };
    let mine: [u64; 6] = [
        base as u64,
        size as u64,
        unit as u64,
        pid as u64,
        &PROBE as *const u8 as u64,
        in_heap as u64,
    ];
    let all = crate::comm::allgather_u64(comm, &mine)?;
    let rows: Vec<&[u64]> = all.chunks(6).collect();
    // Memory outside the heap (or a dynamic window, whose memory is
    // attached later, anywhere) needs cross-memory attach between all.
    let need_cma = dynamic || rows.iter().any(|r| r[5] == 0);
    let probes: Vec<(usize, i32)> = rows
        .iter()
        .enumerate()
        .filter(|&(m, _)| m != me)
        .map(|(_, r)| (r[4] as usize, r[3] as i32))
        .collect();
    let ok = !need_cma || cma_reaches(&probes);
    if !crate::comm::all_agree(comm, ok) {
        stats::RMA_WIN_OUTSIDE.add(1);
        return None;
    }
    let peers: Box<[Peer]> = rows
        .iter()
        .map(|r| {
            if dynamic {
                Peer {
                    base: 0,
                    size: usize::MAX,
                    unit: 1,
                    pid: r[3] as i32,
                }
            } else {
                Peer {
                    base: r[0] as usize,
                    size: r[1] as usize,
                    unit: r[2] as usize,
                    pid: r[3] as i32,
                }
            }
        })
        .collect();
    // A private duplicate, registered so that it gets node state.
    // SAFETY: reading an MPI constant; a collective dup of a valid
    // communicator, made by every member here.
    let mut dup = unsafe { ffi::RSMPI_COMM_NULL };
    // SAFETY: as above.
    let rc = unsafe { ffi::PMPI_Comm_dup(comm, &mut dup) };
    if rc != 0 {
        return None;
    }
    // SAFETY: the dup just succeeded and wrote `dup`; collective.
    unsafe { crate::comm::created(0, &mut dup) };
    let node = if n > 1 {
        crate::comm::lookup(dup).and_then(|info| {
            info.node
                .get_or_init(|| Node::create(info, dup, 0))
                .as_ref()
        })
    } else {
        None
    };
    // The shared block, from member 0's part of the heap.
    let len = block_size(n);
    let mut addr: u64 = 0;
    if me == 0 {
        let b = heap::alloc_shared(LINE, len);
        if !b.is_null() {
            // SAFETY: a fresh block of `len` bytes, ours; no member knows
            // it before the broadcast below.
            unsafe { core::ptr::write_bytes(b, 0, len) };
            addr = b as u64;
        }
    }
    // The broadcast orders the zeroing before every member's use.
    let sent = crate::comm::bcast_u64(dup, &mut addr);
    // Every member sees the same address and the same node state (made
    // collectively), so every member decides alike.
    if !sent || addr == 0 || (n > 1 && node.is_none()) {
        if me == 0 && addr != 0 {
            // SAFETY: our block, which no member uses.
            unsafe { heap::free(addr as *mut u8) };
        }
        // SAFETY: our own communicator.
        unsafe { ffi::PMPI_Comm_free(&mut dup) };
        stats::RMA_WIN_NO_STATE.add(1);
        return None;
    }
    // SAFETY: reading an MPI constant; a valid communicator.
    let mut group = unsafe { ffi::RSMPI_GROUP_NULL };
    // SAFETY: as above.
    unsafe { ffi::PMPI_Comm_group(dup, &mut group) };
    Some(Fast {
        me,
        n,
        peers,
        dynamic,
        comm: crate::raw::Comm(dup),
        node,
        block: addr as *mut u8,
        group,
        ep: Mutex::new(Epochs {
            consumed: vec![0; n].into(),
            posted: vec![0; n].into(),
            locks: vec![None; n].into(),
            ..Epochs::default()
        }),
        access: AtomicU64::new(0),
        passive: AtomicU64::new(0),
        fence_used: AtomicBool::new(false),
        radix: crate::config::get().coll_radix.max(1),
    })
}
