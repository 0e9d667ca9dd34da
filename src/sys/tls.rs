//! Per-thread state that the thread which loaded heapmpi reaches without
//! `__tls_get_addr`.
//!
//! In a shared library Rust reaches a `thread_local!` through
//! `__tls_get_addr` (the general-dynamic model; stable Rust cannot ask for
//! initial-exec), a call and a generation check on every access. On the
//! hottest paths that was a large share: a third of a small
//! `malloc`/`free` pair (10.5 ns against glibc's 7.5 ns), and two of the
//! per-thread caches an `MPI_Put` consults. MPI programs make nearly all
//! their calls on the thread that loaded heapmpi (the main thread), so
//! that thread, the *owner*, keeps such state in plain statics
//! ([`Owned`]), found by comparing the thread pointer (one register read);
//! every other thread keeps using its `thread_local!`.
//!
//! A thread pointer (the address of the thread's control block) names one
//! live thread, so at most one thread at a time matches the owner's. If the
//! owner exits (a library loaded by a worker thread), a later thread may
//! reuse its control block and with it the statics: whatever they hold
//! must be valid for any thread of the process (cached heap blocks of this
//! rank, layouts of predefined datatypes, window descriptors), and state
//! that must not carry over is reset by the owner's exit hook.

use core::sync::atomic::{AtomicUsize, Ordering};

/// The calling thread's thread pointer (its control block's address), or 0
/// where there is no cheap way to read it (then no thread is the owner and
/// every thread uses thread-local storage).
#[inline(always)]
pub fn thread_pointer() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let tp: usize;
        // SAFETY: on x86-64 Linux `fs:0` holds the control block's own
        // address (the ABI's thread pointer); reading it has no side
        // effects.
        unsafe {
            core::arch::asm!("mov {}, fs:0", out(reg) tp,
                options(nostack, preserves_flags, readonly, pure))
        };
        tp
    }
    #[cfg(target_arch = "aarch64")]
    {
        let tp: usize;
        // SAFETY: `tpidr_el0` is the thread pointer; reading it has no side
        // effects.
        unsafe {
            core::arch::asm!("mrs {}, tpidr_el0", out(reg) tp,
                options(nostack, preserves_flags, nomem, pure))
        };
        tp
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        0
    }
}

/// The owner's thread pointer (0 = none yet). Set once by [`claim`];
/// Relaxed suffices: a thread compares it with its own pointer, and only
/// the thread that stored it can match (thread creation orders the store
/// before anything a later thread does, and no other live thread's pointer
/// equals it).
static OWNER: AtomicUsize = AtomicUsize::new(0);

/// Makes the calling thread the owner, unless there already is one.
/// Called once at load time, by the thread loading heapmpi.
pub fn claim() {
    let tp = thread_pointer();
    if tp != 0 {
        let _ = OWNER.compare_exchange(0, tp, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// Whether the calling thread is the owner.
#[inline(always)]
pub fn is_owner() -> bool {
    let tp = thread_pointer();
    tp != 0 && tp == OWNER.load(Ordering::Relaxed)
}

/// A value only the owner thread may reach: the owner's copy of some
/// per-thread state.
pub struct Owned<T>(T);

// SAFETY: `get` hands out references on the owner thread only, and one
// thread at a time is the owner (see the module doc), so the value is
// never shared between threads; what it holds is valid on any thread of
// the process (module doc).
unsafe impl<T> Sync for Owned<T> {}

impl<T> Owned<T> {
    /// The owner's value, initially `v`.
    pub const fn new(v: T) -> Owned<T> {
        Owned(v)
    }

    /// The value, on the owner thread; `None` on any other.
    #[inline(always)]
    pub fn get(&self) -> Option<&T> {
        is_owner().then_some(&self.0)
    }

    /// Runs `f` on the calling thread's copy of the state: this one on the
    /// owner thread, `local`'s on any other (panics, as `LocalKey::with`
    /// does, on a thread whose thread-local storage is gone).
    #[inline(always)]
    pub fn with<R>(&self, local: &'static std::thread::LocalKey<T>, f: impl FnOnce(&T) -> R) -> R {
        match self.get() {
            Some(v) => f(v),
            None => local.with(f),
        }
    }

    /// As [`Owned::with`], but `None` instead of a panic on a thread whose
    /// thread-local storage is being torn down (the allocator runs there).
    #[inline(always)]
    pub fn try_with<R>(
        &self,
        local: &'static std::thread::LocalKey<T>,
        f: impl FnOnce(&T) -> R,
    ) -> Option<R> {
        match self.get() {
            Some(v) => Some(f(v)),
            None => local.try_with(f).ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loading_thread_stays_the_only_owner() {
        // The library's constructor ran `claim` on the test binary's main
        // thread; tests run on other threads.
        static V: Owned<u32> = Owned::new(7);
        let here = thread_pointer();
        assert_eq!(here, thread_pointer(), "a thread's pointer is stable");
        if cfg!(not(any(target_arch = "x86_64", target_arch = "aarch64"))) {
            return;
        }
        assert_ne!(OWNER.load(Ordering::Relaxed), 0, "claimed at load time");
        claim();
        assert!(!is_owner(), "a later claim does not move the ownership");
        assert!(V.get().is_none());
        let other = std::thread::spawn(|| (thread_pointer(), is_owner(), V.get().is_some()))
            .join()
            .unwrap();
        assert_ne!(other.0, here, "two live threads, one pointer");
        assert_eq!((other.1, other.2), (false, false));
    }
}
