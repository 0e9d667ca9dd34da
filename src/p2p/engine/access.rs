//! Exclusive access to the engine, shared between the threads that call
//! MPI and this process's progress thread (`p2p::progress`).
//!
//! - At `MPI_THREAD_MULTIPLE` a mutex guards the engine; the progress
//!   thread only ever tries it.
//! - Below it, MPI calls never overlap (`FUNNELED`: one thread makes them;
//!   `SERIALIZED`: the program orders them), so no lock is taken on the
//!   path every call follows: its atomic read-modify-writes would make each
//!   call wait until the stores of the previous message (a fast-box record,
//!   in a line the receiver holds) have left the core, which capped the
//!   message rate. The calling thread and the progress thread exclude each
//!   other with an asymmetric Dekker handshake on two flags instead: the
//!   caller raises `BUSY` and then reads `HELPER` with only a compiler
//!   barrier between (two plain moves on x86), the progress thread raises
//!   `HELPER`, runs a process-wide barrier (`membarrier`, see
//!   [`crate::sys::wake`]) and then reads `BUSY`. Whichever way the two
//!   interleave, at least one of them sees the other's flag: the barrier
//!   either falls after the caller's store (the progress thread sees
//!   `BUSY`) or before it (the caller's load comes after the barrier, which
//!   came after the store of `HELPER`: the caller sees `HELPER` and waits
//!   for the progress thread to leave). The progress thread backs off when
//!   it sees `BUSY`: the caller is inside heapmpi and makes progress itself.
//!   Without membarrier both sides fence (`SeqCst`), the symmetric handshake.
//!
//! A nested `lock` on one thread (a bug) aborts instead of aliasing.

use core::sync::atomic::{compiler_fence, fence};
use std::cell::UnsafeCell;
use std::sync::{Mutex, MutexGuard, TryLockError};

use super::*;
use crate::sys::wake;

/// The engine and what guards it.
struct Shared {
    /// Taken when `MULTI` is set.
    mutex: Mutex<()>,
    engine: UnsafeCell<Engine>,
}

// SAFETY: `engine` is only reached through a `Guard`, and guards exclude
// each other: under the mutex at MPI_THREAD_MULTIPLE; below it through the
// BUSY/HELPER handshake (see the module documentation), the program's
// guarantee that its MPI calls never overlap covering the calling threads
// among themselves. The engine's raw pointers are into the shared region
// (valid for the life of the process) or MPI handles.
unsafe impl Sync for Shared {}

static ENGINE: Shared = Shared {
    mutex: Mutex::new(()),
    engine: UnsafeCell::new(Engine::new()),
};

/// The MPI library provides `MPI_THREAD_MULTIPLE`: take the mutex. Set
/// before the engine is switched on (until then, lock to be safe); Relaxed:
/// published by the Release store of `ON`, and never changes afterwards.
static MULTI: AtomicBool = AtomicBool::new(true);

/// A calling thread is inside the engine (below `MPI_THREAD_MULTIPLE`).
/// Written only by the thread making the current MPI call.
static BUSY: AtomicBool = AtomicBool::new(false);

/// The progress thread is inside the engine, or about to check whether it
/// may enter. Written only by the progress thread.
static HELPER: AtomicBool = AtomicBool::new(false);

/// Records the thread level (before the engine is switched on).
pub(super) fn set_multi(multi: bool) {
    MULTI.store(multi, Ordering::Relaxed);
}

/// Whether the MPI library runs at `MPI_THREAD_MULTIPLE` (so any thread,
/// the progress thread included, may call it).
pub fn multi() -> bool {
    MULTI.load(Ordering::Relaxed)
}

/// Exclusive access to the engine for a thread making an MPI call, until
/// the guard is dropped (see the module documentation).
#[inline]
pub fn lock() -> Guard {
    if MULTI.load(Ordering::Relaxed) {
        // Poisoning cannot happen (panic = abort).
        let g = ENGINE.mutex.lock().unwrap_or_else(|e| e.into_inner());
        return Guard {
            mutex: Some(g),
            helper: false,
        };
    }
    // Relaxed: only this thread (the one making MPI calls) writes BUSY.
    if BUSY.load(Ordering::Relaxed) {
        crate::eprint_noalloc!("heapmpi: internal error: engine locked twice");
        std::process::abort();
    }
    BUSY.store(true, Ordering::Relaxed);
    // The store above must be visible before the load below whenever the
    // progress thread may be checking: the membarrier it runs supplies the
    // hardware barrier, so a compiler barrier is enough here; without
    // membarrier, a full fence.
    if wake::light_barrier_is_enough() {
        compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
    // Acquire: pairs with the Release store that ends the progress
    // thread's last visit, so its changes to the engine are visible.
    if HELPER.load(Ordering::Acquire) {
        wait_for_helper();
    }
    Guard {
        mutex: None,
        helper: false,
    }
}

/// The progress thread is inside (or deciding): wait until it leaves. It
/// either saw BUSY and backs off at once, or finishes its round.
#[cold]
fn wait_for_helper() {
    let mut spins = 0u32;
    // Acquire: as in `lock`.
    while HELPER.load(Ordering::Acquire) {
        spins += 1;
        if spins > 64 {
            std::thread::yield_now();
        } else {
            core::hint::spin_loop();
        }
    }
}

/// Access for the progress thread, unless a calling thread is inside (it
/// then makes progress itself).
pub fn access_for_progress_thread() -> Option<Guard> {
    if MULTI.load(Ordering::Relaxed) {
        let g = match ENGINE.mutex.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        let mut g = Guard {
            mutex: Some(g),
            helper: true,
        };
        g.in_helper = true;
        return Some(g);
    }
    // Relaxed: ordered before the load of BUSY by the heavy barrier.
    HELPER.store(true, Ordering::Relaxed);
    wake::heavy_barrier();
    // Acquire: pairs with the Release store of the caller's last exit, so
    // its changes to the engine are visible to us.
    if BUSY.load(Ordering::Acquire) {
        // Release: nothing of ours to publish, but keeps the flag's stores
        // uniformly Release for `lock`'s Acquire.
        HELPER.store(false, Ordering::Release);
        return None;
    }
    let mut g = Guard {
        mutex: None,
        helper: true,
    };
    g.in_helper = true;
    Some(g)
}

/// Access to the engine (see [`lock`]).
pub struct Guard {
    mutex: Option<MutexGuard<'static, ()>>,
    /// Held by the progress thread.
    helper: bool,
}

impl core::ops::Deref for Guard {
    type Target = Engine;
    #[inline]
    fn deref(&self) -> &Engine {
        // SAFETY: the guard is the one access to the engine (see `Shared`).
        unsafe { &*ENGINE.engine.get() }
    }
}

impl core::ops::DerefMut for Guard {
    #[inline]
    fn deref_mut(&mut self) -> &mut Engine {
        // SAFETY: as in `deref`, and `&mut self` makes it unique.
        unsafe { &mut *ENGINE.engine.get() }
    }
}

impl Drop for Guard {
    #[inline]
    fn drop(&mut self) {
        if self.helper {
            self.in_helper = false;
        }
        if self.mutex.is_some() {
            return;
        }
        // Release: our changes to the engine are visible to whoever enters
        // next (it loads the flag with Acquire).
        if self.helper {
            HELPER.store(false, Ordering::Release);
        } else {
            BUSY.store(false, Ordering::Release);
        }
    }
}
