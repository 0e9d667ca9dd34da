//! Turning the shared heap on for this rank, and what the end of the run
//! asks of it: activation (the part's bounds and backing, published to
//! every allocation path), `HEAPMPI_CHECK`'s split of the part and its
//! page protections, hiding the unused region from valgrind at exit, and
//! the usage figures for the report.

use std::sync::atomic::Ordering;

use super::arena::Backing;
use super::state::{
    is_active, ACTIVE, MINE_HI, MINE_LO, OWN_LO, REGION_FD, REGION_HI, REGION_LO, SERVING,
};
use super::{check, guard, pool, region, OWN_POOL};

/// Starts serving allocations from `[mine_lo, mine_hi)` inside the region
/// `[lo, hi)`, committing pages through `backing`: heapmpi's own shared
/// blocks always, the program's `malloc` family if `serve_program`.
pub fn activate(
    lo: usize,
    hi: usize,
    mine_lo: usize,
    mine_hi: usize,
    backing: Backing,
    serve_program: bool,
) {
    match check_split(mine_lo, mine_hi) {
        Some((prog_hi, own_hi)) => {
            pool().arena().configure(mine_lo, prog_hi, backing);
            let own = OWN_POOL.lock().unwrap_or_else(|e| e.into_inner());
            own.arena().set_heapmpi_only();
            own.arena().configure(prog_hi, own_hi, backing);
            OWN_LO.store(prog_hi, Ordering::Relaxed);
        }
        None => pool().arena().configure(mine_lo, mine_hi, backing),
    }
    if let Backing::Shm { fd, .. } = backing {
        REGION_FD.store(fd, Ordering::Relaxed);
    }
    REGION_LO.store(lo, Ordering::Relaxed);
    REGION_HI.store(hi, Ordering::Relaxed);
    MINE_LO.store(mine_lo, Ordering::Relaxed);
    MINE_HI.store(mine_hi, Ordering::Relaxed);
    // Release: publishes the bounds and the configured arena to every thread
    // that sees ACTIVE == true with an Acquire load.
    ACTIVE.store(true, Ordering::Release);
    // Release: as above, for the allocation paths that load SERVING.
    SERVING.store(serve_program, Ordering::Release);
}

/// Under `HEAPMPI_CHECK`, where this rank's part `[lo, hi)` is cut:
/// the program's blocks below the first bound, heapmpi's below the
/// second, a guard page above ([`guard::Layout`]).
fn check_split(lo: usize, hi: usize) -> Option<(usize, usize)> {
    if !check::on() {
        return None;
    }
    let page = crate::sys::page_size();
    let l = guard::Layout::new(lo, hi - lo, 1, page);
    Some((l.program(0).1, l.own(0).1))
}

/// Under `HEAPMPI_CHECK`, after [`activate`]: protects the region's parts
/// as [`guard`] says (this rank is local rank `me` of `world.len()`,
/// whose parts of `part` bytes start at `parts`; `world[i]` is local rank
/// `i`'s world rank). False if the protections could not be set.
pub fn guard_parts(parts: usize, part: usize, me: usize, world: &[i32]) -> bool {
    if OWN_LO.load(Ordering::Relaxed) == 0 {
        return false;
    }
    let l = guard::Layout::new(parts, part, world.len(), crate::sys::page_size());
    // Under the program pool's lock: no commit between reading where its
    // pages end and protecting the rest.
    let _held = pool();
    guard::protect(l, me, world)
}

/// Under valgrind, at the end of the run: every part of the region but
/// the node header and this rank's committed pages becomes no-access for
/// memcheck, so that its leak check at exit scans what this rank can hold
/// pointers in rather than the whole mapping (tens of GiB per rank, most
/// never committed: reading it took minutes). Nothing of this process
/// reads the other ranks' parts after `MPI_Finalize`. Idempotent; nothing
/// natively.
pub fn hide_unused_from_valgrind() {
    if !is_active() || !crate::sys::valgrind::running() {
        return;
    }
    let (lo, hi) = (
        REGION_LO.load(Ordering::Relaxed),
        REGION_HI.load(Ordering::Relaxed),
    );
    let (mine_lo, mine_hi) = (
        MINE_LO.load(Ordering::Relaxed),
        MINE_HI.load(Ordering::Relaxed),
    );
    let committed = (mine_lo + pool().arena().committed()).min(mine_hi);
    let header = (lo + region::HEADER_SIZE).min(mine_lo);
    crate::sys::valgrind::make_noaccess(header, mine_lo - header);
    let own = OWN_LO.load(Ordering::Relaxed);
    if own == 0 {
        crate::sys::valgrind::make_noaccess(committed, hi - committed);
        return;
    }
    // HEAPMPI_CHECK: heapmpi's own blocks live in a second range of the
    // part, above the program's; its committed pages stay visible.
    let own_end = (own
        + OWN_POOL
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .arena()
            .committed())
    .min(mine_hi);
    crate::sys::valgrind::make_noaccess(committed, own - committed);
    crate::sys::valgrind::make_noaccess(own_end, hi - own_end);
}

/// Bytes handed to the rank's dlmalloc and committed, for the report.
pub fn arena_usage() -> (usize, usize) {
    let (mut used, mut committed) = {
        let p = pool();
        (p.arena().in_use(), p.arena().committed())
    };
    if OWN_LO.load(Ordering::Relaxed) != 0 {
        let p = OWN_POOL.lock().unwrap_or_else(|e| e.into_inner());
        used += p.arena().in_use();
        committed += p.arena().committed();
    }
    (used, committed)
}
