//! Synchronisation: fence, post-start-complete-wait, passive target locks,
//! flushes, all in shared memory.
//!
//! Operations complete when their call returns (they are loads, stores and
//! atomics made by the origin), so synchronisation only has to order them
//! with the other members' accesses:
//!
//! - **fence**: the members' flag barrier (`comm::node`): every
//!   member's stores before it happen before every member's accesses after
//!   it (Release flag stores, Acquire flag loads). Also with
//!   `MPI_MODE_NOPRECEDE`: a target's own stores to its window before the
//!   fence must not meet the origins' puts after it. This is the fence as
//!   one barrier with the fewest messages (no counting of operations,
//!   since none is ever in flight).
//! - **post-start-complete-wait**: target `t` posting to origin `o` bumps
//!   the flag `posts(o, t)`, written by `t` only; `o`'s start waits until
//!   it exceeds the posts it consumed. Complete adds one to each target's
//!   completion counter; a target's wait (or test) waits until the counter
//!   reaches the completions its exposure epochs expect in all.
//! - **locks**: per target one reader-writer lock word ([`lockword`]),
//!   taken at `MPI_Win_lock` (MPI lets lock block until then).
//! - **flush**: the operations are complete when their calls return; a
//!   flush only keeps the compiler from moving them past it (on x86 the
//!   stores reach other cores in order, and every later synchronisation is
//!   a Release/Acquire pair). `MPI_Win_sync` is a full memory fence.
//!
//! Misuse heapmpi sees (an epoch of one kind opened inside another, a target
//! locked twice) is raised with `MPI_ERR_RMA_SYNC`; a call that closes an
//! epoch that is not open is handed to the real window, where no epoch is
//! ever open, and which raises what the real MPI raises.

use core::ffi::c_int;
use std::sync::atomic::{fence as mem_fence, Ordering};

use mpi_sys as ffi;

use super::lockword;
use super::state::{EpochGuard, Epochs, Fast};
use super::window::fast;
use super::{mode, proc_null, raise, to_real};
use crate::comm::node::wait_until;
use crate::stats;

/// Takes target `t`'s lock word, exclusive or shared.
fn acquire(f: &Fast, t: usize, exclusive: bool) {
    if lockword::acquire(f.lock_word(t), exclusive) {
        stats::RMA_LOCK_WAITS.add(1);
    }
}

/// Releases target `t`'s lock word.
fn release(f: &Fast, t: usize, exclusive: bool) {
    lockword::release(f.lock_word(t), exclusive);
}

/// This member's epochs on `f`.
fn epochs(f: &Fast) -> EpochGuard<'_> {
    f.epochs()
}

/// Counts a synchronisation heapmpi ran.
fn ran() -> c_int {
    stats::RMA_SYNCS.bump();
    0
}

/// `MPI_Win_fence`.
///
/// # Safety
/// As `MPI_Win_fence`.
pub unsafe fn fence(assert: c_int, win: ffi::MPI_Win) -> c_int {
    let Some(f) = fast(win) else {
        // SAFETY: forwarded unchanged.
        return to_real(|| unsafe { ffi::PMPI_Win_fence(assert, win) });
    };
    let mut ep = epochs(f);
    if ep.start.is_some() || ep.exposed || ep.passive(None) {
        return raise(win, ffi::MPI_ERR_RMA_SYNC);
    }
    // The epochs stay locked across the barrier: another thread may not
    // synchronise this window meanwhile (MPI forbids it), and operations
    // read the summary, not the lock.
    f.barrier();
    f.fence_used(true);
    ep.fence = assert & mode::NOSUCCEED == 0;
    ran()
}

/// The members of `group`, as ranks of the window (`None` if the group is
/// not a subgroup of the window's).
fn members(f: &Fast, group: ffi::MPI_Group) -> Option<Box<[usize]>> {
    let mut n: c_int = 0;
    // SAFETY: a group handle from the caller; an invalid one gives an error.
    if unsafe { ffi::PMPI_Group_size(group, &mut n) } != 0 {
        return None;
    }
    let ranks: Vec<c_int> = (0..n).collect();
    let mut out = vec![0 as c_int; n as usize];
    // SAFETY: arrays of `n` ints; the window's group is ours.
    let rc = unsafe {
        ffi::PMPI_Group_translate_ranks(group, n, ranks.as_ptr(), f.group, out.as_mut_ptr())
    };
    if rc != 0 || out.iter().any(|&r| r < 0 || r as usize >= f.n) {
        return None;
    }
    Some(out.into_iter().map(|r| r as usize).collect())
}

/// `MPI_Win_post`.
///
/// # Safety
/// As `MPI_Win_post`.
pub unsafe fn post(group: ffi::MPI_Group, assert: c_int, win: ffi::MPI_Win) -> c_int {
    let m = fast(win).and_then(|f| Some((f, members(f, group)?)));
    let Some((f, origins)) = m else {
        // SAFETY: forwarded unchanged.
        return to_real(|| unsafe { ffi::PMPI_Win_post(group, assert, win) });
    };
    let mut ep = epochs(f);
    if ep.exposed {
        return raise(win, ffi::MPI_ERR_RMA_SYNC);
    }
    for &o in origins.iter() {
        ep.posted[o] += 1;
        // Release: the target's own accesses before the post happen before
        // the origin's after its start (Acquire there); this member is the
        // flag's only writer.
        f.posts(o, f.me).store(ep.posted[o], Ordering::Release);
    }
    ep.expected += origins.len() as u64;
    ep.exposed = true;
    ran()
}

/// `MPI_Win_start`: waits for every target's post (MPI allows start to
/// block until then).
///
/// # Safety
/// As `MPI_Win_start`.
pub unsafe fn start(group: ffi::MPI_Group, assert: c_int, win: ffi::MPI_Win) -> c_int {
    let m = fast(win).and_then(|f| Some((f, members(f, group)?)));
    let Some((f, targets)) = m else {
        // SAFETY: forwarded unchanged.
        return to_real(|| unsafe { ffi::PMPI_Win_start(group, assert, win) });
    };
    let mut ep = epochs(f);
    if ep.start.is_some() || ep.passive(None) {
        return raise(win, ffi::MPI_ERR_RMA_SYNC);
    }
    for &t in targets.iter() {
        let want = ep.consumed[t] + 1;
        let flag = f.posts(f.me, t);
        // Acquire: the target's accesses before its post happen before
        // ours.
        wait_until(|| (flag.load(Ordering::Acquire) >= want).then_some(()));
        ep.consumed[t] = want;
    }
    ep.start = Some(targets);
    ran()
}

/// `MPI_Win_complete`.
///
/// # Safety
/// As `MPI_Win_complete`.
pub unsafe fn win_complete(win: ffi::MPI_Win) -> c_int {
    let targets = fast(win).and_then(|f| Some((f, epochs(f).start.take()?)));
    let Some((f, targets)) = targets else {
        // SAFETY: forwarded unchanged (no access epoch: the real MPI raises).
        return to_real(|| unsafe { ffi::PMPI_Win_complete(win) });
    };
    for &t in targets.iter() {
        // Release: our accesses to the target happen before its wait
        // returns (Acquire there).
        f.completions(t).fetch_add(1, Ordering::Release);
    }
    ran()
}

/// Whether every origin of this member's exposure epochs completed.
fn completed(f: &Fast, ep: &Epochs) -> bool {
    // Acquire: pairs with the origins' Release increments.
    f.completions(f.me).load(Ordering::Acquire) >= ep.expected
}

/// `MPI_Win_wait`.
///
/// # Safety
/// As `MPI_Win_wait`.
pub unsafe fn wait(win: ffi::MPI_Win) -> c_int {
    let Some(f) = fast(win).filter(|f| epochs(f).exposed) else {
        // SAFETY: forwarded unchanged.
        return to_real(|| unsafe { ffi::PMPI_Win_wait(win) });
    };
    let mut ep = epochs(f);
    wait_until(|| completed(f, &ep).then_some(()));
    ep.exposed = false;
    ran()
}

/// `MPI_Win_test`.
///
/// # Safety
/// As `MPI_Win_test`.
pub unsafe fn test(win: ffi::MPI_Win, flag: *mut c_int) -> c_int {
    let Some(f) = fast(win).filter(|f| epochs(f).exposed && !flag.is_null()) else {
        // SAFETY: forwarded unchanged.
        return to_real(|| unsafe { ffi::PMPI_Win_test(win, flag) });
    };
    let mut ep = epochs(f);
    let done = completed(f, &ep);
    if done {
        ep.exposed = false;
    }
    // SAFETY: checked non-null; the caller's int.
    unsafe { *flag = done as c_int };
    ran()
}

/// Whether a lock must be refused because a fence epoch is under way.
/// Both stock MPIs refuse it once an operation ran since the last fence
/// (`MPI_ERR_RMA_SYNC`), and let it replace an epoch a fence opened in which
/// nothing happened yet: so does heapmpi.
fn in_fence_epoch(f: &Fast, ep: &mut Epochs) -> bool {
    if !ep.fence {
        return false;
    }
    if f.fence_used(false) {
        return true;
    }
    ep.fence = false;
    false
}

/// The target member of a lock call, if the rank is one.
fn member(f: &Fast, rank: c_int) -> Option<usize> {
    (rank >= 0 && (rank as usize) < f.n).then_some(rank as usize)
}

/// `MPI_Win_lock`.
///
/// # Safety
/// As `MPI_Win_lock`.
pub unsafe fn lock(kind: c_int, rank: c_int, assert: c_int, win: ffi::MPI_Win) -> c_int {
    let m = fast(win).and_then(|f| Some((f, member(f, rank)?)));
    let (Some((f, t)), true) = (m, kind == mode::EXCLUSIVE || kind == mode::SHARED) else {
        if rank == proc_null() && fast(win).is_some() {
            return ran();
        }
        // SAFETY: forwarded unchanged (the real MPI judges the arguments).
        return to_real(|| unsafe { ffi::PMPI_Win_lock(kind, rank, assert, win) });
    };
    let mut ep = epochs(f);
    if ep.locks[t].is_some()
        || ep.lock_all.is_some()
        || ep.start.is_some()
        || ep.exposed
        || in_fence_epoch(f, &mut ep)
    {
        return raise(win, ffi::MPI_ERR_RMA_SYNC);
    }
    let exclusive = kind == mode::EXCLUSIVE;
    let nocheck = assert & mode::NOCHECK != 0;
    if !nocheck {
        acquire(f, t, exclusive);
    }
    ep.locks[t] = Some((exclusive, nocheck));
    ep.n_locked += 1;
    ran()
}

/// `MPI_Win_unlock`.
///
/// # Safety
/// As `MPI_Win_unlock`.
pub unsafe fn unlock(rank: c_int, win: ffi::MPI_Win) -> c_int {
    let held = fast(win).and_then(|f| {
        let t = member(f, rank)?;
        let h = epochs(f).locks[t].take()?;
        Some((f, t, h))
    });
    let Some((f, t, (exclusive, nocheck))) = held else {
        if rank == proc_null() && fast(win).is_some() {
            return ran();
        }
        // SAFETY: forwarded unchanged (no lock held: the real MPI raises).
        return to_real(|| unsafe { ffi::PMPI_Win_unlock(rank, win) });
    };
    epochs(f).n_locked -= 1;
    if nocheck {
        // The program excludes others itself: our accesses are still
        // complete at the target before unlock returns.
        mem_fence(Ordering::SeqCst);
    } else {
        release(f, t, exclusive);
    }
    ran()
}

/// `MPI_Win_lock_all`: a shared lock on every target, taken in rank order.
/// Inside a lock epoch, stock Open MPI accepts it (and MPICH refuses it):
/// the targets already locked are then left as they are.
///
/// # Safety
/// As `MPI_Win_lock_all`.
pub unsafe fn lock_all(assert: c_int, win: ffi::MPI_Win) -> c_int {
    let Some(f) = fast(win) else {
        // SAFETY: forwarded unchanged.
        return to_real(|| unsafe { ffi::PMPI_Win_lock_all(assert, win) });
    };
    let mut ep = epochs(f);
    let in_lock = ep.n_locked > 0 && !crate::version::open_mpi();
    if ep.lock_all.is_some()
        || in_lock
        || ep.start.is_some()
        || ep.exposed
        || in_fence_epoch(f, &mut ep)
    {
        return raise(win, ffi::MPI_ERR_RMA_SYNC);
    }
    let nocheck = assert & mode::NOCHECK != 0;
    let taken: Box<[bool]> = (0..f.n)
        .map(|t| !nocheck && ep.locks[t].is_none())
        .collect();
    for t in 0..f.n {
        if taken[t] {
            acquire(f, t, false);
        }
    }
    ep.lock_all = Some(taken);
    ran()
}

/// `MPI_Win_unlock_all`.
///
/// # Safety
/// As `MPI_Win_unlock_all`.
pub unsafe fn unlock_all(win: ffi::MPI_Win) -> c_int {
    let held = fast(win).and_then(|f| Some((f, epochs(f).lock_all.take()?)));
    let Some((f, taken)) = held else {
        // SAFETY: forwarded unchanged (not locked: the real MPI raises).
        return to_real(|| unsafe { ffi::PMPI_Win_unlock_all(win) });
    };
    // Our accesses are complete at their targets before unlock returns
    // (for the targets locked here, by the Release in `release`).
    mem_fence(Ordering::SeqCst);
    for (t, &took) in taken.iter().enumerate() {
        if took {
            release(f, t, false);
        }
    }
    ran()
}

/// A flush of `rank` (`None`: every target) on `win`, if heapmpi runs the
/// window and a passive epoch covers it: the operations are complete, a
/// full fence orders them before what follows.
fn flush_ours(win: ffi::MPI_Win, rank: Option<c_int>) -> bool {
    let Some(f) = fast(win) else { return false };
    let t = match rank {
        Some(r) if r == proc_null() => return true,
        Some(r) => match member(f, r) {
            Some(t) => Some(t),
            None => return false,
        },
        None => None,
    };
    if !f.passive_on(t) {
        return false;
    }
    // The operations are complete: their stores are in this core's store
    // buffer or beyond, and x86 makes them visible to other cores in
    // order, so whatever the program does next to let the target look
    // (a synchronisation through heapmpi or the real MPI, both Release
    // stores and Acquire loads) finds them. Only the compiler must not
    // move them past the flush.
    core::sync::atomic::compiler_fence(Ordering::SeqCst);
    ran();
    true
}

/// `MPI_Win_flush`.
///
/// # Safety
/// As `MPI_Win_flush`.
pub unsafe fn flush(rank: c_int, win: ffi::MPI_Win) -> c_int {
    if flush_ours(win, Some(rank)) {
        return 0;
    }
    // SAFETY: forwarded unchanged.
    to_real(|| unsafe { ffi::PMPI_Win_flush(rank, win) })
}

/// `MPI_Win_flush_local`.
///
/// # Safety
/// As `MPI_Win_flush_local`.
pub unsafe fn flush_local(rank: c_int, win: ffi::MPI_Win) -> c_int {
    if flush_ours(win, Some(rank)) {
        return 0;
    }
    // SAFETY: forwarded unchanged.
    to_real(|| unsafe { ffi::PMPI_Win_flush_local(rank, win) })
}

/// `MPI_Win_flush_all`.
///
/// # Safety
/// As `MPI_Win_flush_all`.
pub unsafe fn flush_all(win: ffi::MPI_Win) -> c_int {
    if flush_ours(win, None) {
        return 0;
    }
    // SAFETY: forwarded unchanged.
    to_real(|| unsafe { ffi::PMPI_Win_flush_all(win) })
}

/// `MPI_Win_flush_local_all`.
///
/// # Safety
/// As `MPI_Win_flush_local_all`.
pub unsafe fn flush_local_all(win: ffi::MPI_Win) -> c_int {
    if flush_ours(win, None) {
        return 0;
    }
    // SAFETY: forwarded unchanged.
    to_real(|| unsafe { ffi::PMPI_Win_flush_local_all(win) })
}

/// `MPI_Win_sync`: in the unified model, a full memory fence. Outside a
/// passive target epoch it goes to the real MPI, which judges it (MPICH
/// raises `MPI_ERR_RMA_SYNC`, Open MPI accepts it).
///
/// # Safety
/// As `MPI_Win_sync`.
pub unsafe fn win_sync(win: ffi::MPI_Win) -> c_int {
    if fast(win).is_none_or(|f| !f.passive_on(None)) {
        // SAFETY: forwarded unchanged.
        return to_real(|| unsafe { ffi::PMPI_Win_sync(win) });
    }
    // SeqCst: orders this process's loads and stores to the window with
    // everything after (the private and public copies are the same memory).
    mem_fence(Ordering::SeqCst);
    ran()
}
