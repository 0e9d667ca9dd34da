//! A communicator's node-level state: the control block its node-local
//! members share in the heap, and the flag discipline every heapmpi
//! collective (and, next, one-sided synchronisation) is built from.
//!
//! The block holds, per member, a `done` flag and [`CELLS`] cells (used in
//! turn, one per step). A cell is a header (sequence number, an address, a
//! length, one spare word) followed by inline data; the first 32 bytes of
//! data share the header's cache line, so a small payload travels with its
//! flag in one line transfer. Every flag is written by one member only (its
//! owner) and read by the others, so no flag is ever contended by writers,
//! and no flag is ever reset: each carries the number of the *step* it
//! belongs to, and steps are numbered identically on every member (each
//! collective call advances the communicator's count by the same amount
//! everywhere, since it depends only on arguments all members agree on).
//! This is the sense-reversal-free flag barrier of the shared-memory
//! collectives literature (Graham and Shipman, "MPI support for multi-core
//! architectures: optimized shared memory collectives", EuroPVM/MPI 2008;
//! Open MPI's `coll/sm` and `coll/xhc` use the same single-writer,
//! sequence-carrying flags).
//!
//! A step: a member writes its contribution into its cell of parity
//! `step % CELLS` (or just the address of a buffer every member can read, since
//! the heap is mapped at one address everywhere) and publishes the step
//! number with a Release store; readers wait with Acquire loads for the
//! step number, read, and then publish `done = step`. Before a member
//! writes a cell again ([`CELLS`] steps later) it waits until every other member
//! is done with the step that last used it; seeing a member publish step
//! `s` already proves it finished step `s - 1`, so that wait rarely reads a
//! line. A member that lets others read its own buffers waits for their
//! `done` before it returns.
//!
//! A block ends in a link to the communicator's first channel, a block of
//! its own for an operation that must not take the communicator's steps,
//! and each channel to the next (see [`Node::channel`]).
//!
//! The block is allocated by the member of rank 0 from its part of the heap
//! (only the owner of a part may free in it), its address broadcast once
//! through the real MPI in the communicator's first collective (or, for
//! the nonblocking collectives' block of a node-local communicator, in
//! the agreement its creation makes: [`Node::adopt_flat`]). Each member
//! drops its reference when its communicator is freed; the owner frees the
//! block once the count reaches zero (at once if it is the last, otherwise
//! at a later creation or free).

use core::ffi::c_int;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use mpi_sys as ffi;

use super::CommInfo;
use crate::heap;
use crate::raw::Comm;

pub use super::wait::{set_idle_work, wait_until};

mod chain;
pub use chain::Chain;

/// A cache line.
pub const LINE: usize = 64;

/// Bytes of a cell header. Inline data of at most `LINE - CELL_HEAD`
/// bytes follows it in the flag's line (one line carries flag and data);
/// larger inline data starts on the next line, so that the writer does not
/// take the flag's line back from a reader polling it while it copies, and
/// the data's lines are whole (measured, MPICH, 2 ranks: a 256 B scatter
/// 0.55 -> 0.36 µs, stock 0.33).
const CELL_HEAD: usize = 32;

/// Header of one cell. Written only by the member that owns it.
#[repr(C)]
pub struct Cell {
    /// Step of the last publication.
    pub seq: AtomicU64,
    /// Address published with it (0: the data is inline).
    pub addr: AtomicU64,
    /// Length published with it.
    pub len: AtomicU64,
    /// A spare word for the algorithm.
    pub aux: AtomicU64,
}

/// The block's first line.
#[repr(C)]
struct Head {
    /// Members still holding the block.
    live: AtomicU32,
    /// Members.
    n: u32,
    /// Inline data bytes per cell, beyond the 32 in the header line.
    cell: u32,
}

/// Cells per member: how many steps a member may run ahead of the slowest
/// reader of its cells (a root broadcasting small messages in a loop).
/// Measured with 8-byte broadcasts in a loop, 2 ranks: 0.14 µs per call
/// with 2 cells, 0.07-0.08 with 4 or 8 (stock Open MPI: 0.07).
pub const CELLS: u64 = 4;

/// Bytes one member occupies: its `done` line and its cells.
fn stride(cell: usize) -> usize {
    LINE + CELLS as usize * (LINE + cell)
}

/// Bytes of the whole block for `n` members: the head, the members, then
/// the word that links the communicator's channels (see [`Node::channel`]).
pub fn block_size(n: usize, cell: usize) -> usize {
    next_offset(n, cell) + 8
}

/// Where a block's channel link starts.
fn next_offset(n: usize, cell: usize) -> usize {
    LINE + n * stride(cell)
}

/// A channel link that a member could not fill (its part of the heap was
/// full): the chain ends there for every member. Blocks are line-aligned,
/// so no block is at this address.
const NO_CHANNEL: u64 = 1;

/// A new, zeroed control block for `n` members with `cell` bytes of
/// inline data per cell (rounded up to whole lines), from this rank's part
/// of the heap; null when the part has no room. No member knows it until
/// its address is handed over through the real MPI, which orders the
/// zeroing before any member's use.
pub fn new_block(n: usize, cell: usize) -> *mut u8 {
    let cell = cell.next_multiple_of(LINE);
    let size = block_size(n, cell);
    let b = heap::alloc_shared(LINE, size);
    if !b.is_null() {
        // SAFETY: a fresh block of `size` bytes, ours; no member knows it
        // yet.
        unsafe {
            core::ptr::write_bytes(b, 0, size);
            let head = &mut *(b as *mut Head);
            head.live = AtomicU32::new(n as u32);
            head.n = n as u32;
            head.cell = cell as u32;
        }
    }
    b
}

/// Blocks whose owner dropped its reference before the others: freed once
/// their count reaches zero.
static ZOMBIES: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Frees the zombie blocks nobody holds any more.
fn sweep() {
    let mut z = ZOMBIES.lock().unwrap_or_else(|e| e.into_inner());
    z.retain(|&b| {
        // SAFETY: a block this process allocated and has not freed; the
        // head stays valid until the free below.
        let head = unsafe { &*(b as *const Head) };
        // Acquire: pairs with the members' AcqRel decrements, so their last
        // accesses to the block happen before it is freed.
        if head.live.load(Ordering::Acquire) == 0 {
            // SAFETY: our allocation, no longer used by any member.
            unsafe { heap::free(b as *mut u8) };
            false
        } else {
            true
        }
    });
}

/// A communicator's node-level state on one member.
pub struct Node {
    block: *mut u8,
    /// Members on this node.
    pub n: usize,
    /// This member's index among them.
    pub me: usize,
    /// Inline data bytes per cell.
    pub inline_max: usize,
    cell: usize,
    owner: bool,
    /// Last step started.
    seq: AtomicU64,
    /// Per member: a step it is known to be done with.
    seen: Box<[AtomicU64]>,
    /// The communicator's ranks of this node's members, in member order
    /// (rank order): member 0 is the node's leader.
    pub ranks: Box<[i32]>,
    /// For a communicator that spans nodes: how the nodes meet.
    pub span: Option<Span>,
}

/// How the nodes of a communicator that spans nodes meet: each node's
/// leader (its lowest rank) talks to the other leaders through the real
/// MPI.
pub struct Span {
    /// The communicator of the members of this member's index on every
    /// node that has one (rank order): on the leaders, the leaders' (in
    /// node order); on the others, the one a rooted collective whose root
    /// has their index crosses nodes through ([`Span::peers`]).
    peers: Comm,
    /// This member's index on its node (0: the leader).
    index: usize,
    /// This node's members as a real communicator (member order), for the
    /// node phase when the heap cannot serve it.
    pub node: Comm,
    /// For each rank of the communicator, the index of its node (its
    /// leader's rank among the leaders).
    pub node_of: Box<[u32]>,
    /// This member's node.
    pub my_node: u32,
    /// Every node's ranks are consecutive: combining node by node is
    /// combining in rank order (needed for non-commutative operations).
    pub consecutive: bool,
}

impl Span {
    /// The communicator of the members of index `k` on every node that has
    /// one (in rank order), if this member is one of them: the leaders'
    /// for `k` = 0.
    pub fn peers(&self, k: usize) -> Option<Comm> {
        (k == self.index).then_some(self.peers)
    }

    /// The leaders' communicator (ranks in node order), on leaders only.
    pub fn leaders(&self) -> Option<Comm> {
        self.peers(0)
    }
}

impl Node {
    /// This node's member of communicator rank `r`, if it is here.
    pub fn member_of(&self, r: i32) -> Option<usize> {
        self.ranks.binary_search(&r).ok()
    }
}

// SAFETY: the block lives in the shared heap for as long as any member holds
// the `Node`; all accesses to it go through atomics or through the step
// protocol described above. The private counters are atomics. MPI forbids
// two threads from calling collectives on one communicator at once, so the
// private step count is never advanced concurrently.
unsafe impl Send for Node {}
// SAFETY: as above.
unsafe impl Sync for Node {}

impl Node {
    /// Makes the state of `comm` (collective over `comm`: called by every
    /// member in the same collective call). A communicator of one rank gets
    /// none; one that spans nodes gets a [`Span`] when every member keeps
    /// infos (`complete`), none otherwise. Every member decides alike:
    /// `info` says the same everywhere, and the calls below are collective.
    pub fn create(info: &CommInfo, comm: ffi::MPI_Comm, cell: usize) -> Option<Node> {
        if info.size < 2 || !heap::is_active() {
            return None;
        }
        let ranks: Box<[i32]> = (0..info.size)
            .filter(|&r| info.local_index(r).is_some())
            .collect();
        let span = if info.n_remote == 0 {
            None
        } else if info.complete.load(Ordering::Relaxed) {
            Some(Span::create(info, comm, ranks[0])?)
        } else {
            return None;
        };
        sweep();
        let me = ranks.binary_search(&info.rank).ok()?;
        let mut addr: u64 = 0;
        if me == 0 {
            addr = new_block(ranks.len(), cell) as u64;
        }
        // The node's members learn the block (rank 0 of the node's own
        // communicator is its leader); without a span, the node is the
        // communicator. Then all members of the communicator agree that
        // every node has one, or none uses any.
        let bcast_comm = span.as_ref().map_or(comm, |s| s.node.0);
        // The broadcast orders the zeroing above before any member's use.
        let rc_ok = super::bcast_u64(bcast_comm, &mut addr);
        let ok = rc_ok && addr != 0;
        let all_ok = match &span {
            None => ok,
            Some(_) => super::all_agree(comm, ok),
        };
        if !all_ok {
            if ok && me == 0 {
                // SAFETY: our block; every member drops it unused.
                unsafe { heap::free(addr as *mut u8) };
            }
            if let Some(s) = span {
                s.free();
            }
            return None;
        }
        Some(Node::adopt(addr as *mut u8, ranks, me, span))
    }

    /// The block of a communicator whose members all live on this node,
    /// made without a collective of its own (`comm::register_new` hands the
    /// leader's [`new_block`] to the others in the agreement it makes
    /// anyway). `block` is the agreed address, which every member adopts
    /// alike; the creator is the member of rank 0.
    pub fn adopt_flat(info: &CommInfo, block: *mut u8) -> Option<Node> {
        debug_assert!(info.n_remote == 0);
        sweep();
        let ranks: Box<[i32]> = (0..info.size).collect();
        let me = info.rank as usize;
        Some(Node::adopt(block, ranks, me, None))
    }

    /// The `Node` of member `me` (of `ranks`, this node's members) over an
    /// agreed, initialised block.
    fn adopt(block: *mut u8, ranks: Box<[i32]>, me: usize, span: Option<Span>) -> Node {
        // SAFETY: the block is live (every member holds it until its free).
        let head = unsafe { &*(block as *const Head) };
        let n = ranks.len();
        debug_assert_eq!(head.n as usize, n);
        Node {
            block,
            n: head.n as usize,
            me,
            inline_max: (head.cell as usize).max(LINE - CELL_HEAD),
            cell: head.cell as usize,
            owner: me == 0,
            seq: AtomicU64::new(0),
            seen: (0..n).map(|_| AtomicU64::new(0)).collect(),
            ranks,
            span,
        }
    }

    fn member(&self, m: usize) -> *mut u8 {
        debug_assert!(m < self.n);
        // SAFETY: within the block (m < n).
        unsafe { self.block.add(LINE + m * stride(self.cell)) }
    }

    /// Member `m`'s `done` flag.
    #[inline]
    pub fn done(&self, m: usize) -> &AtomicU64 {
        // SAFETY: a live, aligned atomic in the block.
        unsafe { &*(self.member(m) as *const AtomicU64) }
    }

    fn cell_ptr(&self, m: usize, step: u64) -> *mut u8 {
        let off = LINE + (step % CELLS) as usize * (LINE + self.cell);
        // SAFETY: within member `m`'s stride.
        unsafe { self.member(m).add(off) }
    }

    /// Member `m`'s cell for `step`.
    #[inline]
    pub fn cell(&self, m: usize, step: u64) -> &Cell {
        // SAFETY: a live, line-aligned header in the block.
        unsafe { &*(self.cell_ptr(m, step) as *const Cell) }
    }

    /// Where member `m`'s cell for `step` holds `len` bytes of inline data
    /// (at most [`Node::inline_max`]): in the flag's line when they fit
    /// there, else from the next line. Writer and readers pass the length
    /// the writer wrote.
    #[inline]
    pub fn data(&self, m: usize, step: u64, len: usize) -> *mut u8 {
        let off = if len <= LINE - CELL_HEAD {
            CELL_HEAD
        } else {
            LINE
        };
        // SAFETY: the data follows the header inside the cell.
        unsafe { self.cell_ptr(m, step).add(off) }
    }

    /// Starts a collective of `steps` steps: returns the first.
    #[inline]
    pub fn begin(&self, steps: u64) -> u64 {
        // Relaxed: private to this member (one thread per communicator).
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s + steps, Ordering::Relaxed);
        s + 1
    }

    /// Waits until every other member is done with step `s` (or later).
    pub fn wait_done(&self, s: u64) {
        for m in 0..self.n {
            if m == self.me {
                continue;
            }
            // Relaxed: a private cache of values read with Acquire below.
            if self.seen[m].load(Ordering::Relaxed) >= s {
                continue;
            }
            // Acquire: the member's reads of our data happen before we
            // reuse it.
            let v = wait_until(|| {
                let v = self.done(m).load(Ordering::Acquire);
                (v >= s).then_some(v)
            });
            self.seen[m].store(v, Ordering::Relaxed);
        }
    }

    /// Before writing our cell for step `s`: every member is done with the
    /// step that last used it.
    #[inline]
    pub fn gate(&self, s: u64) {
        if s > CELLS {
            self.wait_done(s - CELLS);
        }
    }

    /// Publishes step `s` in our cell with `addr`, `len` and `aux` (the
    /// inline data, if any, is written before). Call [`Node::gate`] first
    /// when the cell's data or words are written.
    #[inline]
    pub fn publish(&self, s: u64, addr: u64, len: u64, aux: u64) {
        let c = self.cell(self.me, s);
        // Relaxed: ordered before the readers' use by the Release below.
        c.addr.store(addr, Ordering::Relaxed);
        c.len.store(len, Ordering::Relaxed);
        c.aux.store(aux, Ordering::Relaxed);
        // Release: the data and words above are visible to whoever sees
        // the step (Acquire in `wait_cell`).
        c.seq.store(s, Ordering::Release);
    }

    /// After [`Node::publish`] of step `s` with `len` bytes of inline data
    /// at `p`: hints that those lines and the flag's leave this core's
    /// private caches for the shared last-level cache (`cldemote`), where
    /// the readers' misses are served sooner than by a snoop into this
    /// core. Measured, MPICH, 2 ranks, broadcast of 1 KiB: 0.57-0.59 ->
    /// 0.47-0.49 µs (stock 0.50-0.54); demoting the data before the flag
    /// is stored gained nothing, nor did demoting bare flags and `done`.
    /// Not for cells the writer reads again itself (a small reduction
    /// folds its own cell too: 8 B Reduce 0.24-0.26 -> 0.28-0.33 µs with
    /// it). Only a hint: it changes no value and no ordering.
    #[inline]
    pub fn demote(&self, s: u64, p: *const u8, len: usize) {
        let mut a = p as usize & !(LINE - 1);
        while a < p as usize + len {
            demote_line(a);
            a += LINE;
        }
        demote_line(self.cell_ptr(self.me, s) as usize);
    }

    /// Publishes step `s` as a bare flag (no data: the cell's contents are
    /// left alone, so no gate is needed; a reader still reading them for
    /// an earlier step reads them unchanged).
    #[inline]
    pub fn flag(&self, s: u64) {
        // Release: everything this member did before is visible to whoever
        // sees the step.
        self.cell(self.me, s).seq.store(s, Ordering::Release);
    }

    /// Member `m`'s cell if it has published step `s` (or later) now.
    /// Unlike [`Node::wait_cell`] it takes no conclusion about the member's
    /// earlier steps (a member running nonblocking collectives may publish
    /// a step before it finished the one before).
    #[inline]
    pub fn published(&self, m: usize, s: u64) -> Option<&Cell> {
        let c = self.cell(m, s);
        // Acquire: pairs with the Release in `publish`/`flag`.
        (c.seq.load(Ordering::Acquire) >= s).then_some(c)
    }

    /// Waits for member `m`'s publication of step `s`; returns its cell.
    #[inline]
    pub fn wait_cell(&self, m: usize, s: u64) -> &Cell {
        let c = self.cell(m, s);
        // Acquire: pairs with the Release in `publish`/`flag`.
        wait_until(|| (c.seq.load(Ordering::Acquire) >= s).then_some(()));
        // Publishing `s` proves the member finished step `s - 1` (it posts
        // `done` at the end of every step). Relaxed: a private cache.
        if self.seen[m].load(Ordering::Relaxed) < s - 1 {
            self.seen[m].store(s - 1, Ordering::Relaxed);
        }
        c
    }

    /// Waits for every other member's publication of step `s`.
    pub fn wait_all(&self, s: u64) {
        for m in 0..self.n {
            if m != self.me {
                self.wait_cell(m, s);
            }
        }
    }

    /// [`Node::wait_done`] without waiting: whether every other member is
    /// done with step `s` (or later) now.
    pub fn all_done(&self, s: u64) -> bool {
        (0..self.n).filter(|&m| m != self.me).all(|m| {
            // Relaxed: a private cache of values read with Acquire below.
            if self.seen[m].load(Ordering::Relaxed) >= s {
                return true;
            }
            // Acquire: as in `wait_done`.
            let v = self.done(m).load(Ordering::Acquire);
            if v >= s {
                self.seen[m].store(v, Ordering::Relaxed);
            }
            v >= s
        })
    }

    /// [`Node::gate`] without waiting: whether our cell for step `s` may be
    /// written now.
    #[inline]
    pub fn gate_open(&self, s: u64) -> bool {
        s <= CELLS || self.all_done(s - CELLS)
    }

    /// Ends step `s` on this member: it no longer reads anything of it.
    #[inline]
    pub fn finish(&self, s: u64) {
        // Release: our reads of the step's data happen before the owner's
        // reuse (Acquire in `wait_done`).
        self.done(self.me).store(s, Ordering::Release);
    }
}

impl Node {
    /// The flat flag barrier: every member raises its flag and reads
    /// everyone's. One step, one cache-line transfer of latency.
    pub fn barrier_flat(&self) {
        let s = self.begin(1);
        self.flag(s);
        self.wait_all(s);
        self.finish(s);
    }

    /// The tree flag barrier: arrival up a tree of radix `k` rooted at
    /// member 0 (step `s`), `at_root` at the root, release down the tree
    /// (step `s + 1`). When ranks outnumber cores this beats the flat
    /// barrier: a waiting member yields and needs one flag to go on, and
    /// the root (usually the next collective's root too) leaves first.
    /// Returns what `at_root` returned at the root, 0 elsewhere.
    pub fn barrier_tree(&self, k: usize, at_root: impl FnOnce() -> c_int) -> c_int {
        let (me, n) = (self.me, self.n);
        let s = self.begin(2);
        let children = (k * me + 1).min(n)..(k * me + k + 1).min(n);
        for c in children.clone() {
            self.wait_cell(c, s);
        }
        let rc = if me == 0 {
            let rc = at_root();
            self.flag(s + 1);
            rc
        } else {
            self.flag(s);
            self.wait_cell((me - 1) / k, s + 1);
            if !children.is_empty() {
                self.flag(s + 1);
            }
            0
        };
        self.finish(s + 1);
        rc
    }
}

/// `cldemote` of the cache line at `a` (see [`Node::demote`]).
#[inline(always)]
fn demote_line(a: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a cache hint on an address of ours; it reads and writes
    // nothing and cannot fault (0F 1C /0 is a no-op where the CPU lacks
    // `cldemote`).
    unsafe {
        core::arch::asm!("cldemote [{}]", in(reg) a, options(nostack, preserves_flags, readonly))
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = a;
}

impl Span {
    /// Makes the node and leader communicators (collective over `comm`) and
    /// learns every rank's node. `leader` is this node's lowest rank.
    fn create(info: &CommInfo, comm: ffi::MPI_Comm, leader: i32) -> Option<Span> {
        let size = info.size as usize;
        let mut leader_of = vec![0 as c_int; size];
        // SAFETY: one int from every member, every member's in return; the
        // same call on every member.
        let rc = unsafe {
            ffi::PMPI_Allgather(
                (&leader as *const c_int).cast(),
                1,
                ffi::RSMPI_INT32_T,
                leader_of.as_mut_ptr().cast(),
                1,
                ffi::RSMPI_INT32_T,
                comm,
            )
        };
        if rc != 0 {
            return None;
        }
        let mut leaders: Vec<c_int> = leader_of.clone();
        leaders.sort_unstable();
        leaders.dedup();
        let node_of: Box<[u32]> = leader_of
            .iter()
            .map(|l| leaders.binary_search(l).unwrap_or(0) as u32)
            .collect();
        // Consecutive: ranks of one node never resume after another node's.
        let consecutive = node_of.windows(2).all(|w| w[0] <= w[1]);
        // This member's index on its node: the node's ranks below its own.
        let index = (leader..info.rank)
            .filter(|&r| info.local_index(r).is_some())
            .count();
        // SAFETY: reading MPI constants; collective splits over `comm`,
        // made by every member in the same call.
        let (node, peers) = unsafe {
            let mut node = ffi::RSMPI_COMM_NULL;
            let mut peers = ffi::RSMPI_COMM_NULL;
            let a = ffi::PMPI_Comm_split(comm, leader, info.rank, &mut node);
            // One split by index gives every member the communicator of
            // its index across nodes; index 0's is the leaders'.
            let b = ffi::PMPI_Comm_split(comm, index as c_int, info.rank, &mut peers);
            if a != 0 || b != 0 {
                return None;
            }
            (node, Comm(peers))
        };
        Some(Span {
            peers,
            index,
            node: Comm(node),
            my_node: node_of[info.rank as usize],
            node_of,
            consecutive,
        })
    }

    /// Frees the communicators.
    fn free(self) {
        for mut c in [self.node, self.peers] {
            // SAFETY: our own communicators, no longer used.
            unsafe { ffi::PMPI_Comm_free(&mut c.0) };
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(s) = self.span.take() {
            s.free();
        }
        // SAFETY: the block is live: this member's reference is dropped
        // only here.
        let head = unsafe { &*(self.block as *const Head) };
        // AcqRel: our accesses to the block happen before the owner's free
        // (Release), and the owner sees every other member's (Acquire).
        let left = head.live.fetch_sub(1, Ordering::AcqRel) - 1;
        if self.owner {
            if left == 0 {
                // SAFETY: our allocation, no member holds it any more.
                unsafe { heap::free(self.block) };
            } else {
                ZOMBIES
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(self.block as usize);
            }
        }
        sweep();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A block in private memory shared by threads standing in for the
    /// members (the flag discipline does not care which kind of memory).
    struct Block(Vec<u64>);

    fn block(n: usize, cell: usize) -> Arc<Block> {
        let mut v = vec![0u64; block_size(n, cell) / 8 + 8];
        // Line-align the start.
        let off = (v.as_ptr() as usize).next_multiple_of(LINE) - v.as_ptr() as usize;
        let head = v.as_mut_ptr() as usize + off;
        // SAFETY: inside the vector, aligned.
        unsafe {
            let h = &mut *(head as *mut Head);
            h.live = AtomicU32::new(n as u32);
            h.n = n as u32;
            h.cell = cell as u32;
        }
        Arc::new(Block(v))
    }

    fn view(b: &Block, n: usize, me: usize, cell: usize) -> Node {
        let start = (b.0.as_ptr() as usize).next_multiple_of(LINE);
        Node {
            block: start as *mut u8,
            n,
            me,
            inline_max: cell.max(LINE - CELL_HEAD),
            cell,
            owner: false,
            seq: AtomicU64::new(0),
            seen: (0..n).map(|_| AtomicU64::new(0)).collect(),
            ranks: (0..n as i32).collect(),
            span: None,
        }
    }

    /// Rotating-root broadcasts and all-to-all exchanges through the cells,
    /// members as threads: every reader sees exactly the data of the step
    /// it waits for, although roots run up to `CELLS` steps ahead.
    #[test]
    fn cells_carry_each_step_intact() {
        const N: usize = 3;
        const CELL: usize = 128;
        let b = block(N, CELL);
        // Mismatches are counted, not asserted on the spot: a member that
        // panicked would leave the others waiting for it.
        let bad = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..N)
            .map(|me| {
                let b = Arc::clone(&b);
                let bad = Arc::clone(&bad);
                let check = move |ok: bool| {
                    if !ok {
                        bad.fetch_add(1, Ordering::Relaxed);
                    }
                };
                std::thread::spawn(move || {
                    let node = view(&b, N, me, CELL);
                    for i in 0..3000u64 {
                        // Broadcasts from a rotating root, in runs of 50
                        // from the same root (which then runs ahead of its
                        // readers as far as the cells allow; the readers
                        // lag now and then).
                        let root = ((i / 50) % N as u64) as usize;
                        if me != root && i % 5 == 0 {
                            std::thread::yield_now();
                        }
                        let s = node.begin(1);
                        // 32 bytes share the flag's line, 96 start on the
                        // next one: both placements, alternately.
                        let len = if i % 2 == 0 { 32 } else { 96 };
                        let want: [u64; 12] = core::array::from_fn(|k| {
                            [i, s, root as u64, !i][k % 4].rotate_left(k as u32)
                        });
                        if me == root {
                            node.gate(s);
                            // SAFETY: the cell holds CELL (>= 96) bytes.
                            unsafe {
                                core::ptr::copy_nonoverlapping(
                                    want.as_ptr().cast::<u8>(),
                                    node.data(me, s, len),
                                    len,
                                )
                            };
                            node.publish(s, 0, len as u64, i);
                        } else {
                            let c = node.wait_cell(root, s);
                            check(c.aux.load(Ordering::Relaxed) == i);
                            check(c.len.load(Ordering::Relaxed) == len as u64);
                            let mut words = [0u64; 12];
                            // SAFETY: the root's cell holds `len` bytes.
                            unsafe {
                                core::ptr::copy_nonoverlapping(
                                    node.data(root, s, len),
                                    words.as_mut_ptr().cast::<u8>(),
                                    len,
                                )
                            };
                            check(words[..len / 8] == want[..len / 8]);
                        }
                        node.finish(s);
                        if i % 50 != 49 {
                            continue;
                        }
                        // Everyone offers, everyone reads everyone.
                        let s = node.begin(1);
                        node.gate(s);
                        node.publish(s, (me as u64) << 32 | i, s, 0);
                        node.wait_all(s);
                        for m in 0..N {
                            let c = node.cell(m, s);
                            check(c.addr.load(Ordering::Relaxed) == (m as u64) << 32 | i);
                            check(c.len.load(Ordering::Relaxed) == s);
                        }
                        node.finish(s);
                        // A bare flag now and then (a barrier).
                        if i % 100 == 49 {
                            let s = node.begin(1);
                            node.flag(s);
                            node.wait_all(s);
                            node.finish(s);
                        }
                    }
                    node
                })
            })
            .collect();
        let nodes: Vec<Node> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        drop(nodes);
        assert_eq!(
            bad.load(Ordering::Relaxed),
            0,
            "readers saw another step's data"
        );
        let start = (b.0.as_ptr() as usize).next_multiple_of(LINE);
        // SAFETY: the head of the block.
        let head = unsafe { &*(start as *const Head) };
        assert_eq!(head.live.load(Ordering::Relaxed), 0);
    }
}
