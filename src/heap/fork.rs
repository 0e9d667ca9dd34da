//! What `fork()` does to the shared heap: the `pthread_atfork` handlers.
//!
//! After `fork()` the child must see what an ordinary fork gives it: a
//! private snapshot of the parent's memory. The child handler remaps the
//! region copy-on-write (so nothing the child writes can reach the parent or
//! the other ranks) and copies this rank's committed pages (so they stop
//! following the parent); the parent waits in its own handler until that copy
//! is made. The region then is "foreign" memory for the child: pre-fork
//! pointers work, `free` leaves them alone, new allocations go to glibc.
//! `system()`, `popen()` and `posix_spawn()` use `vfork`-style clones that
//! run no fork handlers and pay nothing for this.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use super::state::{
    is_active, ACTIVE, COMMITTED_END, MINE_HI, MINE_LO, REGION_FD, REGION_HI, REGION_LO, SERVING,
};

/// Held from the prepare handler to the parent handler of every `fork` (the
/// child handler releases the child's copy), so
/// concurrent forks from several threads do not share the pipe below. Taken
/// whether or not the heap is active (one uncontended CAS per fork): if it
/// depended on the heap being active, `MPI_Init` in another thread between
/// the two handlers would make the parent release a lock it never took.
/// Acquire/Release make the pipe descriptors written by one fork visible to
/// the next.
static FORK_BUSY: AtomicBool = AtomicBool::new(false);
/// The pipe the child uses to tell the parent its snapshot is made
/// (`[read, write]`, -1 when unused). Only touched by the thread that holds
/// `FORK_BUSY` (and by the child, which is that thread's copy).
static FORK_PIPE: [AtomicI32; 2] = [AtomicI32::new(-1), AtomicI32::new(-1)];

/// `pthread_atfork` prepare handler.
pub fn prepare() {
    while FORK_BUSY
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::thread::yield_now();
    }
    if !is_active() {
        return;
    }
    let mut fds = [-1; 2];
    // SAFETY: `fds` is a valid out-array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0 {
        FORK_PIPE[0].store(fds[0], Ordering::Relaxed);
        FORK_PIPE[1].store(fds[1], Ordering::Relaxed);
    }
}

/// `pthread_atfork` parent handler: waits until the child has taken its
/// snapshot (or died), if there is one to take, then lets other forks
/// proceed.
pub fn parent() {
    let (r, w) = (
        FORK_PIPE[0].swap(-1, Ordering::Relaxed),
        FORK_PIPE[1].swap(-1, Ordering::Relaxed),
    );
    if r >= 0 {
        // SAFETY: our own pipe ends; the read buffer is one valid byte.
        unsafe {
            libc::close(w);
            let mut b = 0u8;
            while libc::read(r, (&mut b as *mut u8).cast(), 1) < 0
                && crate::sys::errno() == libc::EINTR
            {}
            libc::close(r);
        }
    }
    FORK_BUSY.store(false, Ordering::Release);
}

/// `pthread_atfork` child handler (the child is single-threaded here, so
/// Relaxed stores are visible to everything it does next): private
/// snapshot of the region, then the parent's heap becomes foreign memory.
pub fn child() {
    // The child's copy of the fork lock was taken by the thread that forked,
    // which is the child's only thread: release it, or the child's own
    // forks would wait for it forever.
    FORK_BUSY.store(false, Ordering::Relaxed);
    if !ACTIVE.load(Ordering::Relaxed) {
        return;
    }
    let (lo, hi) = (
        REGION_LO.load(Ordering::Relaxed),
        REGION_HI.load(Ordering::Relaxed),
    );
    let mine_lo = MINE_LO.load(Ordering::Relaxed);
    let copy_hi = COMMITTED_END.load(Ordering::Relaxed).max(mine_lo);
    let fd = REGION_FD.load(Ordering::Relaxed);
    // SAFETY: `[lo, hi)` is the shared mapping of `fd` made at activation,
    // and `[mine_lo, copy_hi)` is this rank's committed range inside it.
    let ok = unsafe { crate::sys::vm::privatize(lo, hi - lo, fd, mine_lo, copy_hi) };
    if !ok {
        crate::eprint_noalloc!(
            "heapmpi: warning: could not make the shared heap private in a forked child; \
             the child's writes to pre-fork heap memory are visible to its parent"
        );
    }
    ACTIVE.store(false, Ordering::Relaxed);
    SERVING.store(false, Ordering::Relaxed);
    MINE_LO.store(0, Ordering::Relaxed);
    MINE_HI.store(0, Ordering::Relaxed);
    let (r, w) = (
        FORK_PIPE[0].load(Ordering::Relaxed),
        FORK_PIPE[1].load(Ordering::Relaxed),
    );
    if w >= 0 {
        // SAFETY: the child's copies of the pipe ends; one valid byte.
        unsafe {
            libc::close(r);
            let b = 1u8;
            libc::write(w, (&b as *const u8).cast(), 1);
            libc::close(w);
        }
        FORK_PIPE[0].store(-1, Ordering::Relaxed);
        FORK_PIPE[1].store(-1, Ordering::Relaxed);
    }
}
