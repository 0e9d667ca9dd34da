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
//! its `done` flag in step order (see [`schedule`]), so several operations of a
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
mod schedule;
mod small;
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

use mpi_sys as ffi;

use super::op::Reducer;
use super::Buf;
use crate::comm::node::Node;
use schedule::{idle, progress};

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

// What every part of the nonblocking collectives speaks of: an operation
// ([`Kind`]), where it stands ([`Phase`]), and the datatype duplicates it
// holds while pending. The plans (`calls`, `reduce`, `vcalls`, `neighbor`)
// build a `Kind`; `schedule` moves `Pending` operations on through
// `small`, `large` and `vector`.

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
    /// `small::unstash`). Reading them lets the step finish meanwhile, so
    /// that the other members' later operations are not held at its cell's
    /// gate while this member's calling thread sits in the real MPI.
    stash: Option<Vec<u8>>,
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

/// A duplicate of `dt`, or `None` (what an operation holds for a derived
/// receive datatype, see [`held`]).
fn dup(dt: ffi::MPI_Datatype) -> Option<ffi::MPI_Datatype> {
    // SAFETY: reading an MPI constant.
    let mut t = unsafe { ffi::RSMPI_DATATYPE_NULL };
    // SAFETY: a valid datatype (its layout was read) and an out-pointer.
    (unsafe { ffi::PMPI_Type_dup(dt, &mut t) } == 0).then_some(t)
}
