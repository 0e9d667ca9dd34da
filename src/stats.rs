//! Per-rank counters and the `HEAPMPI_STATS=1` report.
//!
//! Counting is off unless `HEAPMPI_STATS` is set, so the hot paths pay one
//! predictable branch for it. All counters are independent event counts
//! read once at the end: Relaxed accesses are enough, as no other memory is
//! published through them.
//!
//! RATIONALE for counting without a locked instruction: a count is a load
//! and a store, not a `lock xadd`. The locked form cost about 7 ns a counter
//! here, three per small message (HPC Challenge's ring latency measured
//! 0.21 us with counting on against 0.185 us off, which made every timed
//! run of `bench/run`, which counts to check heapmpi was active, slower than
//! heapmpi is), and three per `malloc`/`free` pair. The price: two threads
//! counting the same event at the same instant may lose one count. The
//! point-to-point engine counts under its exclusive access (see
//! `p2p::engine::access`), so its counts, and those of single-threaded
//! programs, are exact; the allocator's, in a program whose threads
//! allocate at once, may fall short by a few, which a diagnostic report
//! can afford.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether counting is on (set once at load time from the configuration).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// One event counter.
pub struct Counter(AtomicU64);

impl Counter {
    const fn new() -> Counter {
        Counter(AtomicU64::new(0))
    }

    /// Adds `n` if counting is on (a load and a store: see the module doc).
    #[inline]
    pub fn add(&self, n: u64) {
        if ENABLED.load(Ordering::Relaxed) {
            // Relaxed: see the module doc.
            self.0.store(
                self.0.load(Ordering::Relaxed).wrapping_add(n),
                Ordering::Relaxed,
            );
        }
    }

    /// Adds one if counting is on.
    #[inline]
    pub fn bump(&self) {
        self.add(1);
    }

    /// The current value.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Allocations served from this rank's part of the shared heap.
pub static SHARED_ALLOCS: Counter = Counter::new();
/// Bytes requested by those allocations.
pub static SHARED_BYTES: Counter = Counter::new();
/// Allocations served by glibc (before the heap existed, while inactive, or
/// as fallback).
pub static GLIBC_ALLOCS: Counter = Counter::new();
/// Bytes requested by those allocations.
pub static GLIBC_BYTES: Counter = Counter::new();
/// Allocations that did not fit in the shared heap and went to glibc.
pub static FALLBACKS: Counter = Counter::new();
/// Blocks returned to the shared heap.
pub static SHARED_FREES: Counter = Counter::new();
/// Blocks returned to glibc.
pub static GLIBC_FREES: Counter = Counter::new();
/// `free` of shared-heap memory this process may not release (another
/// rank's part, or the parent's heap in a forked child): left alone.
pub static FOREIGN_FREES: Counter = Counter::new();
/// `realloc` calls that moved a block between glibc and the shared heap.
pub static MIGRATIONS: Counter = Counter::new();

/// Immediate-protocol messages sent (payload inline with the header).
pub static P2P_IMMEDIATE: Counter = Counter::new();
/// Their bytes.
pub static P2P_IMMEDIATE_BYTES: Counter = Counter::new();
/// Of those, the ones sent through a fast box (per-pair ring).
pub static P2P_FASTBOX: Counter = Counter::new();
/// Single-copy messages sent.
pub static P2P_SINGLE: Counter = Counter::new();
/// Their bytes.
pub static P2P_SINGLE_BYTES: Counter = Counter::new();
/// Synergistic messages sent.
pub static P2P_SYNERGY: Counter = Counter::new();
/// Their bytes.
pub static P2P_SYNERGY_BYTES: Counter = Counter::new();
/// Received synergistic messages the sender helped copy.
pub static P2P_HELPED_MSGS: Counter = Counter::new();
/// Blocks the senders copied in those.
pub static P2P_HELPED_BLOCKS: Counter = Counter::new();
/// Sends whose buffer was outside the shared heap (or non-contiguous, or
/// buffered mode), copied to a shared staging buffer first.
pub static P2P_STAGED: Counter = Counter::new();
/// Standard sends staged because the receiver was late (stage-on-stall).
pub static P2P_STALL_STAGED: Counter = Counter::new();
/// Sends read by the receiver with process_vm_readv (shared heap full).
pub static P2P_CMA: Counter = Counter::new();
/// Sends of a derived datatype the receiver copied from the sender's
/// buffer by its layout (`dt::plan`), without packing.
pub static P2P_PLANNED: Counter = Counter::new();
/// Calls to the real MPI because the peer is on another node.
pub static P2P_REAL_REMOTE: Counter = Counter::new();
/// Calls to the real MPI on a communicator heapmpi does not know
/// (inter-communicators, ones made by calls it does not see).
pub static P2P_REAL_UNKNOWN: Counter = Counter::new();
/// Wildcard receives served by the real MPI (a message from another node).
pub static P2P_WILDCARD_REAL: Counter = Counter::new();
/// Doorbells this rank rang: a send (or a collective step) it waited on
/// needed a local peer's progress (see `p2p::progress`).
pub static P2P_RINGS: Counter = Counter::new();
/// Rounds this rank's progress thread ran, woken by a peer's doorbell.
pub static P2P_WAKES: Counter = Counter::new();

/// Collectives heapmpi ran over the shared heap.
pub static COLL_FAST: Counter = Counter::new();
/// Collectives handed to the real MPI whole (communicator unknown,
/// spanning nodes where heapmpi has no hierarchical form, arguments or
/// types left to the real MPI, or given up half-way: see
/// [`COLL_GAVE_UP`]).
pub static COLL_REAL: Counter = Counter::new();
/// Of [`COLL_FAST`]: nonblocking collectives (`coll::nb`).
pub static COLL_NONBLOCKING: Counter = Counter::new();
/// Buffers copied to a shared staging buffer (outside the heap, or not
/// dense).
pub static COLL_STAGED: Counter = Counter::new();
/// Staging buffers the heap could not provide.
pub static COLL_STAGE_FAILED: Counter = Counter::new();
/// Collectives every member handed to the real MPI half-way, because one
/// could not stage its data.
pub static COLL_GAVE_UP: Counter = Counter::new();
/// Blocks of large broadcasts a root copied for its readers
/// (`coll::assist`).
pub static COLL_BCAST_HELPED: Counter = Counter::new();

/// Windows heapmpi runs over the shared heap.
pub static RMA_WIN_HEAP: Counter = Counter::new();
/// Windows left to the real MPI (whatever the reason below).
pub static RMA_WIN_REAL: Counter = Counter::new();
/// ... because their communicator is unknown to heapmpi.
pub static RMA_WIN_UNKNOWN: Counter = Counter::new();
/// ... because some member's memory is outside the heap and cross-memory
/// attach is refused.
pub static RMA_WIN_OUTSIDE: Counter = Counter::new();
/// ... because a member got no shared memory for the window's memory.
pub static RMA_WIN_NO_MEMORY: Counter = Counter::new();
/// ... because a member got no shared memory for the window's state.
pub static RMA_WIN_NO_STATE: Counter = Counter::new();
/// One-sided synchronisations heapmpi ran (the report's `ops heap` adds
/// the puts, gets and accumulates).
pub static RMA_SYNCS: Counter = Counter::new();
/// One-sided calls handed to the real MPI.
pub static RMA_OPS_REAL: Counter = Counter::new();
/// Puts, gets, accumulates (all kinds) heapmpi ran.
pub static RMA_PUTS: Counter = Counter::new();
/// See [`RMA_PUTS`].
pub static RMA_GETS: Counter = Counter::new();
/// See [`RMA_PUTS`].
pub static RMA_ACCS: Counter = Counter::new();
/// Passive-target lock acquisitions that had to wait.
pub static RMA_LOCK_WAITS: Counter = Counter::new();

/// Writes the one-sided part of the report.
pub fn write_rma(w: &mut impl core::fmt::Write) -> core::fmt::Result {
    write!(
        w,
        " rma: windows heap={} real={} ops heap={} real={} lock_waits={} \
         (put={} get={} acc={}; real windows: unknown_comm={} outside_heap={} \
         no_memory={} no_state={})",
        RMA_WIN_HEAP.get(),
        RMA_WIN_REAL.get(),
        RMA_SYNCS.get() + RMA_PUTS.get() + RMA_GETS.get() + RMA_ACCS.get(),
        RMA_OPS_REAL.get(),
        RMA_LOCK_WAITS.get(),
        RMA_PUTS.get(),
        RMA_GETS.get(),
        RMA_ACCS.get(),
        RMA_WIN_UNKNOWN.get(),
        RMA_WIN_OUTSIDE.get(),
        RMA_WIN_NO_MEMORY.get(),
        RMA_WIN_NO_STATE.get(),
    )
}

/// Writes the collectives part of the report.
pub fn write_coll(w: &mut impl core::fmt::Write) -> core::fmt::Result {
    write!(
        w,
        " coll: heap={} real={} staged={} stage_failed={} gave_up={} nonblocking={} \
         bcast_helped={}",
        COLL_FAST.get(),
        COLL_REAL.get(),
        COLL_STAGED.get(),
        COLL_STAGE_FAILED.get(),
        COLL_GAVE_UP.get(),
        COLL_NONBLOCKING.get(),
        COLL_BCAST_HELPED.get(),
    )
}

/// Writes the point-to-point part of the report.
pub fn write_p2p(
    w: &mut impl core::fmt::Write,
    headers_live: u64,
    requests_live: u64,
) -> core::fmt::Result {
    write!(
        w,
        " p2p: immediate={}/{}B fastbox={} single={}/{}B synergistic={}/{}B helped={}/{}blocks \
         staged={} stall_staged={} cma={} strided={} real_remote={} real_unknown_comm={} \
         wildcard_real={} rings={} wakes={} headers_live={} requests_live={}",
        P2P_IMMEDIATE.get(),
        P2P_IMMEDIATE_BYTES.get(),
        P2P_FASTBOX.get(),
        P2P_SINGLE.get(),
        P2P_SINGLE_BYTES.get(),
        P2P_SYNERGY.get(),
        P2P_SYNERGY_BYTES.get(),
        P2P_HELPED_MSGS.get(),
        P2P_HELPED_BLOCKS.get(),
        P2P_STAGED.get(),
        P2P_STALL_STAGED.get(),
        P2P_CMA.get(),
        P2P_PLANNED.get(),
        P2P_REAL_REMOTE.get(),
        P2P_REAL_UNKNOWN.get(),
        P2P_WILDCARD_REAL.get(),
        P2P_RINGS.get(),
        P2P_WAKES.get(),
        headers_live,
        requests_live,
    )
}

/// Turns counting on or off.
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether counting is on.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Writes the counter part of the report (`key=value` pairs) to `w`.
pub fn write_counters(w: &mut impl core::fmt::Write) -> core::fmt::Result {
    write!(
        w,
        "shared_allocs={} shared_bytes={} glibc_allocs={} glibc_bytes={} fallbacks={} \
         shared_frees={} glibc_frees={} foreign_frees={} migrations={}",
        SHARED_ALLOCS.get(),
        SHARED_BYTES.get(),
        GLIBC_ALLOCS.get(),
        GLIBC_BYTES.get(),
        FALLBACKS.get(),
        SHARED_FREES.get(),
        GLIBC_FREES.get(),
        FOREIGN_FREES.get(),
        MIGRATIONS.get(),
    )
}

/// A byte count for people: `64.0 GiB`.
pub struct Bytes(pub u64);

impl core::fmt::Display for Bytes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = self.0 as f64;
        let mut u = 0;
        while v >= 1024.0 && u < UNITS.len() - 1 {
            v /= 1024.0;
            u += 1;
        }
        if u == 0 {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{v:.1} {}", UNITS[u])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_display() {
        assert_eq!(Bytes(0).to_string(), "0 B");
        assert_eq!(Bytes(1023).to_string(), "1023 B");
        assert_eq!(Bytes(1024).to_string(), "1.0 KiB");
        assert_eq!(Bytes(64 << 30).to_string(), "64.0 GiB");
    }
}
