//! How a member waits for another member's flag: spin, then yield the
//! processor (at once when ranks outnumber cores), and meanwhile keep the
//! rest of the rank moving — the real MPI's progress (its operations to
//! other nodes, and other ranks' operations that need this rank) and the
//! work a layer above registers (the nonblocking collectives). The flags
//! themselves are [`super::node`]'s; one-sided synchronisation waits here
//! too.

use core::ffi::c_int;

use mpi_sys as ffi;

/// Spins until `f` returns a value. After a short spin it yields the
/// processor when ranks outnumber cores (the awaited member probably waits
/// for this core), and after a longer one always; now and then it drives
/// the real MPI's progress, so that this rank's operations through the
/// real MPI (to other nodes) and other ranks' operations that need this
/// one's progress move while it waits here, as they would inside the real
/// collective.
#[inline]
pub fn wait_until<T>(mut f: impl FnMut() -> Option<T>) -> T {
    if let Some(v) = f() {
        return v;
    }
    let over = crate::sys::oversubscribed();
    let mut spins: u32 = 0;
    loop {
        if let Some(v) = f() {
            return v;
        }
        spins = spins.wrapping_add(1);
        let yielding = (over && spins > 16) || spins > 4096;
        if yielding {
            std::thread::yield_now();
        } else {
            core::hint::spin_loop();
        }
        // Every 1024 rounds while spinning, every 8th once yielding: a
        // round then lasts up to a scheduler turn, and another rank's
        // real-MPI operation may need this rank's progress (Open MPI's
        // shared-memory transport runs the atomics of a one-sided
        // accumulate as messages handled by the target's progress: a
        // target that pokes once per 1024 turns held four ranks in
        // `Accumulate` for minutes on a loaded machine).
        if (spins % 1024 == 0 || (yielding && spins % 8 == 0)) && super::active() {
            poke_real();
        }
        // Pending nonblocking collectives of this rank move too: a member
        // waiting here may be what another member's wait on one of them
        // waits for.
        if spins % 64 == 0 {
            idle_work();
        }
    }
}

/// Work registered by a layer above (the nonblocking collectives) that a
/// member waiting on a flag does now and then. Set once at start, before
/// any collective.
static IDLE: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Registers [`wait_until`]'s idle work (see [`IDLE`]). The function must
/// not wait on flags itself.
pub fn set_idle_work(f: fn()) {
    let _ = IDLE.set(f);
}

#[inline]
fn idle_work() {
    if let Some(f) = IDLE.get() {
        f();
    }
}

/// One call into the real MPI's progress engine (a probe that consumes
/// nothing).
#[cold]
fn poke_real() {
    let mut flag: c_int = 0;
    // SAFETY: a probe with valid out-pointers on a predefined communicator.
    unsafe {
        ffi::PMPI_Iprobe(
            ffi::RSMPI_ANY_SOURCE,
            ffi::RSMPI_ANY_TAG,
            ffi::RSMPI_COMM_WORLD,
            &mut flag,
            ffi::RSMPI_STATUS_IGNORE,
        );
    }
}
