//! Collectives between the ranks of a node, through the shared heap.
//!
//! On a communicator whose members all share this node (and that heapmpi
//! knows: see [`crate::comm`]), the blocking collectives run over the
//! communicator's control block ([`crate::comm::node`]): no locks, no
//! point-to-point queues, no messages. Small payloads travel inline in the
//! members' cells, next to their flags; large ones are read (or written)
//! once, straight from the other members' buffers, since the heap is mapped
//! at one address everywhere; a buffer outside the heap (stack, globals) is
//! first copied to a shared staging buffer. On a communicator that spans
//! nodes, barrier, broadcast, reduce, allreduce, allgather, gather and
//! scatter (these two when every node has a member of the root's index)
//! run hierarchically: a node phase through the heap to (or from) one
//! member per node, those members through the real MPI. Every other call (unknown communicators, the other
//! collectives on communicators that span nodes, arguments heapmpi leaves
//! to the real MPI to judge) goes to the real MPI unchanged, and is
//! counted.
//!
//! Every member takes the same path for every call: the choice depends only
//! on the communicator and on arguments MPI requires to agree across
//! members (sizes, root, operation). When a member cannot go on (no shared
//! memory for staging), it says so in the step every member reads, and all
//! of them make the real call instead.
//!
//! - [`barrier`]: the flag barrier;
//! - [`bcast`]: broadcast and scatter (one root, every member reads);
//! - `assist`: the root of a large broadcast copies blocks for its readers;
//! - [`reduce`]: the reductions' entry points, over `fold` (inline
//!   folds, split reductions, prefix folds);
//! - [`gather`]: gather, allgather, alltoall;
//! - `span_rooted`: gather and scatter across nodes, and where both
//!   choose their path;
//! - `vector`: the "v" variants (per-member counts and displacements);
//! - `order`: the association of a reduction's contributions the MPI
//!   underneath computes, which `fold` evaluates;
//! - [`op`]: reduction operators.

mod assist;
mod barrier;
mod bcast;
mod fold;
mod gather;
mod nb;
mod neighbor;
mod node_rooted;
mod offer;
pub use crate::op;
mod order;
mod reduce;
mod span_rooted;
mod vector;

use core::ffi::{c_int, c_void};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use mpi_sys as ffi;

use crate::comm::{self, node::Node, CommInfo};
use crate::heap;
use crate::raw::{HandleCache, RawHandle};
use crate::stats;

pub use barrier::barrier;
pub use bcast::{bcast, scatter};
pub use gather::{allgather, alltoall, gather};
#[cfg(heapmpi_mpi4_base)]
pub use nb::{
    allgather_init, allgatherv_init, allreduce_init, alltoall_init, alltoallv_init, alltoallw_init,
    barrier_init, bcast_init, exscan_init, gather_init, gatherv_init, neighbor_allgather_init,
    neighbor_allgatherv_init, neighbor_alltoall_init, neighbor_alltoallv_init,
    neighbor_alltoallw_init, reduce_init, reduce_scatter_block_init, reduce_scatter_init,
    scan_init, scatter_init, scatterv_init,
};
pub use nb::{
    iallgather, iallgatherv, iallreduce, ialltoall, ialltoallv, ialltoallw, ibarrier, ibcast,
    iexscan, igather, igatherv, ineighbor_allgather, ineighbor_allgatherv, ineighbor_alltoall,
    ineighbor_alltoallv, ineighbor_alltoallw, ireduce, ireduce_scatter, ireduce_scatter_block,
    iscan, iscatter, iscatterv,
};
pub use neighbor::{
    neighbor_allgather, neighbor_allgatherv, neighbor_alltoall, neighbor_alltoallv,
    neighbor_alltoallw,
};
pub use reduce::{allreduce, exscan, reduce, reduce_scatter, reduce_scatter_block, scan};
pub use vector::{allgatherv, alltoallv, alltoallw, gatherv, scatterv};

/// Whether heapmpi runs collectives (agreed by all ranks at init). Written
/// once at init, before any communication: Relaxed.
static ON: AtomicBool = AtomicBool::new(false);

/// Fan-out of the barrier's tree (`HEAPMPI_COLL_RADIX`), fixed at start.
static RADIX: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(4);

/// Inline data bytes per cell (`HEAPMPI_COLL_INLINE`), fixed at start.
static INLINE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Bumped whenever a communicator info is deleted, so that per-thread
/// caches of infos drop their entries. Relaxed: a thread that uses a
/// communicator created after a free learned of it through MPI, which
/// orders the bump before its use.
static GEN: AtomicU64 = AtomicU64::new(0);

fn forget(_bits: usize) {
    GEN.fetch_add(1, Ordering::Relaxed);
}

/// Turns heapmpi's collectives on (every rank with communicator infos calls
/// this at init, with the job's agreed switch).
pub fn start(on: bool, inline: usize, radix: usize) {
    INLINE.store(inline, Ordering::Relaxed);
    RADIX.store(radix.max(1), Ordering::Relaxed);
    comm::on_free(forget);
    nb::start();
    ON.store(on && comm::active(), Ordering::Relaxed);
}

/// Inline bytes per cell of the nonblocking block a new node-local
/// communicator should get at creation (`comm::set_eager_blocks`), or 0
/// when nonblocking collectives do not run here. After [`start`] and the
/// point-to-point engine's start.
pub fn eager_cell() -> usize {
    if ON.load(Ordering::Relaxed) && nb::possible() {
        INLINE.load(Ordering::Relaxed).max(1)
    } else {
        0
    }
}

/// Makes the collectives' state of `comm` now, if every member lives on
/// this node, as its first collective would (collective over `comm`:
/// `MPI_Init` calls it for `MPI_COMM_WORLD` on every rank, so that a
/// nonblocking collective may come first there too).
pub fn prepare(comm: ffi::MPI_Comm) {
    if info(comm).is_some_and(|i| i.n_remote == 0) {
        let _ = node(comm);
    }
}

/// Entries of the per-thread info cache.
const CACHED: usize = 4;

thread_local! {
    /// Communicator bits to infos.
    static CACHE: RefCell<HandleCache<CACHED>> = const { RefCell::new(HandleCache::new()) };
}

/// The owner thread's [`CACHE`] (`crate::sys::tls`: no `__tls_get_addr`
/// on the thread that makes the calls).
static OWNER_CACHE: crate::sys::tls::Owned<RefCell<HandleCache<CACHED>>> =
    crate::sys::tls::Owned::new(RefCell::new(HandleCache::new()));

/// The info of `comm`, through the per-thread cache.
fn info(comm: ffi::MPI_Comm) -> Option<&'static CommInfo> {
    let bits = comm.0.to_bits();
    let gen = GEN.load(Ordering::Relaxed);
    if let Some(p) = OWNER_CACHE.with(&CACHE, |c| c.borrow().get(gen, bits)) {
        // SAFETY: an info cached since the last deletion of any info, so
        // still live (see `comm::lookup`).
        return Some(unsafe { &*(p as *const CommInfo) });
    }
    let info = comm::lookup(comm)?;
    OWNER_CACHE.with(&CACHE, |c| {
        c.borrow_mut()
            .put(gen, bits, info as *const CommInfo as usize)
    });
    Some(info)
}

/// Fan-out of the collectives' trees (`HEAPMPI_COLL_RADIX`).
fn radix() -> usize {
    RADIX.load(Ordering::Relaxed)
}

/// Makes the real MPI's call of a collective heapmpi does not run, for
/// whatever reason (unknown communicator, arguments or types left to the
/// real MPI, a member that could not stage), counted.
fn to_real(call: impl FnOnce() -> c_int) -> c_int {
    stats::COLL_REAL.add(1);
    crate::profile::real(crate::profile::How::Args, None);
    call()
}

/// The node state for a collective on `comm`, or `None` when the call goes
/// to the real MPI. Collective over `comm` the first time.
fn node(comm: ffi::MPI_Comm) -> Option<&'static Node> {
    if !ON.load(Ordering::Relaxed) || comm == comm_null() {
        return None;
    }
    let Some(info) = info(comm) else {
        crate::profile::real(crate::profile::How::UnknownComm, None);
        return None;
    };
    info.node
        .get_or_init(|| {
            let inline = INLINE.load(Ordering::Relaxed);
            let node = Node::create(info, comm, inline);
            // The nonblocking collectives' block, made by every member in
            // this same collective call (see `nb`), unless the
            // communicator came with one (`comm::set_eager_blocks`: every
            // member then has it).
            if node.as_ref().is_some_and(|n| n.span.is_none())
                && nb::possible()
                && info.nb.get().is_none()
            {
                let _ = info.nb.set(Node::create(info, comm, inline));
            }
            node
        })
        .as_ref()
}

/// [`node`], for the collectives heapmpi runs only on communicators inside
/// one node (the others go to the real MPI, which `HEAPMPI_PROFILE` then
/// counts as `remote`: members on another node).
fn flat(comm: ffi::MPI_Comm) -> Option<&'static Node> {
    let n = node(comm)?;
    if n.span.is_some() {
        crate::profile::real(crate::profile::How::Remote, None);
        return None;
    }
    Some(n)
}

fn comm_null() -> ffi::MPI_Comm {
    // SAFETY: reading an MPI constant.
    unsafe { ffi::RSMPI_COMM_NULL }
}

/// `MPI_IN_PLACE`: `(void *) 1` in Open MPI's `<mpi.h>` and in the MPI-5
/// standard ABI's, `(void *) -1` in MPICH's.
pub fn in_place() -> *const c_void {
    core::ptr::without_provenance(if cfg!(heapmpi_openmpi) || cfg!(heapmpi_abi) {
        1
    } else {
        usize::MAX
    })
}

/// Whose counts an all-to-all's per-peer arrays hold.
#[derive(Clone, Copy)]
pub(crate) enum Peers {
    /// Every process of the communicator (its remote group on an
    /// intercommunicator).
    Members,
    /// The out-neighbours of its topology (the neighbourhood forms).
    Out,
}

/// For `HEAPMPI_PROFILE`, once an all-to-all `v` or `w` call on `comm`
/// succeeded: its bytes, from the send counts (the receive ones in place),
/// of `sdt` (`rdt`) or of the datatype arrays `stypes` (`rtypes`) when
/// those are given (`w`).
///
/// # Safety
/// The arrays as the (successful) call had them: one entry per peer.
pub(crate) unsafe fn profile_alltoallv(
    comm: ffi::MPI_Comm,
    peers: Peers,
    sbuf: *const c_void,
    scounts: *const c_int,
    (sdt, stypes): (ffi::MPI_Datatype, *const ffi::MPI_Datatype),
    rcounts: *const c_int,
    (rdt, rtypes): (ffi::MPI_Datatype, *const ffi::MPI_Datatype),
) {
    if !crate::profile::on() {
        return;
    }
    let n = match peers {
        Peers::Members => crate::comm::peers(comm),
        Peers::Out => crate::comm::topo::outdegree(comm),
    };
    let Some(n) = n else { return };
    let (counts, dt, types) = if sbuf == in_place() {
        (rcounts, rdt, rtypes)
    } else {
        (scounts, sdt, stypes)
    };
    // SAFETY: per the contract.
    unsafe {
        if types.is_null() {
            crate::profile::data_v(n, counts, dt)
        } else {
            crate::profile::data_w(n, counts, types)
        }
    }
}

/// The address a member publishes when it cannot offer its data (no
/// shared memory for staging): every member then makes the real call.
const FAIL: u64 = u64::MAX;

pub(crate) use crate::dt::Buf;

/// A staging buffer in this rank's part of the heap.
struct Stage(*mut u8);

impl Stage {
    fn new(len: usize) -> Option<Stage> {
        let p = heap::alloc_shared(64, len.max(1));
        if p.is_null() {
            stats::COLL_STAGE_FAILED.add(1);
            None
        } else {
            stats::COLL_STAGED.add(1);
            Some(Stage(p))
        }
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        // SAFETY: our allocation, no longer read (the collective waited
        // for every member's `done`).
        unsafe { heap::free(self.0) };
    }
}

/// Where a member offers `b`'s packed bytes to the others: in place, or
/// in a staging buffer (kept in `stage`), or [`FAIL`].
///
/// # Safety
/// `b` holds its elements.
unsafe fn offer(b: &Buf, stage: &mut Option<Stage>) -> u64 {
    if let Some(p) = b.shared() {
        return p as u64;
    }
    match Stage::new(b.bytes()) {
        Some(st) => {
            // SAFETY: per the contract; the stage has room.
            unsafe { b.pack_to(st.0) };
            let p = st.0 as u64;
            *stage = Some(st);
            p
        }
        None => FAIL,
    }
}

thread_local! {
    /// Scratch memory for folds, reused across calls.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on a private scratch buffer of at least `len` bytes, aligned to
/// 16.
fn with_scratch<R>(len: usize, f: impl FnOnce(*mut u8) -> R) -> R {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < len + 16 {
            s.resize(len + 16, 0);
        }
        let p = s.as_mut_ptr();
        let a = p.align_offset(16);
        // SAFETY: within the vector (16 spare bytes).
        f(unsafe { p.add(a) })
    })
}

/// A rank argument in range.
fn rank_ok(root: c_int, n: usize) -> Option<usize> {
    (root >= 0 && (root as usize) < n).then_some(root as usize)
}

/// Counts a collective heapmpi ran.
#[inline]
fn ran() {
    stats::COLL_FAST.add(1);
    crate::profile::heap(None);
}

/// Counts a call every member handed to the real MPI half-way (no shared
/// memory for staging).
fn gave_up() {
    stats::COLL_GAVE_UP.add(1);
}
