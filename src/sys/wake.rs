//! Sleeping and waking across processes, and the process-wide memory
//! barrier: the system calls behind heapmpi's progress thread
//! (`p2p::progress`).
//!
//! - [`futex_wait`] / [`futex_wake`]: a shared (not `FUTEX_PRIVATE_FLAG`)
//!   futex on a word in the shared region, so a rank can wake a thread of
//!   another process that sleeps on that word (futex(2); the kernel keys a
//!   shared futex by the backing page, whatever address maps it).
//! - [`heavy_barrier`]: `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which
//!   makes every running thread of the process execute a full memory barrier
//!   before it returns. It is the heavy half of an *asymmetric* Dekker
//!   handshake: the frequent side (the thread that enters heapmpi on every
//!   MPI call) orders its flag store before its flag load with a compiler
//!   barrier only, and the rare side (the progress thread) pays for both
//!   (the technique of liburcu's `urcu-memb` and folly's
//!   `asymmetricHeavyBarrier`; membarrier(2)). Where the kernel refuses
//!   membarrier, [`light_barrier_is_enough`] is false and both sides use a
//!   `SeqCst` fence.

use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// `membarrier` commands (linux/membarrier.h).
const MEMBARRIER_CMD_QUERY: libc::c_int = 0;
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

/// Whether the process registered for expedited private membarriers (set
/// once, by [`init_barrier`], from false to true at most). The heavy side
/// (the progress thread) sets it before its first handshake and reads its
/// own store, so once it can see the frequent side's light barrier it
/// always runs the membarrier. Relaxed: a frequent side that still reads
/// false fences fully, which is the symmetric handshake, correct either
/// way.
static EXPEDITED: AtomicBool = AtomicBool::new(false);

/// Registers the process for expedited membarriers. Returns whether they
/// are available; call on the heavy side's thread before its first
/// handshake (the frequent side may already be running: it fences fully
/// until this is done). Returns at once if [`init_barrier_if_alone`]
/// registered already.
pub fn init_barrier() -> bool {
    // Relaxed: a true here was stored by the constructor before this
    // thread was spawned, and spawning orders that store before us.
    if EXPEDITED.load(Ordering::Relaxed) {
        return true;
    }
    register()
}

/// Registers the process for expedited membarriers now if it has a single
/// thread (at load time, before `main`), and does nothing otherwise.
///
/// RATIONALE: the kernel registers a single-threaded process at once
/// (3-30 µs here). With a second thread alive it waits for an RCU grace
/// period first, 5-25 ms on our machines (`/tmp/mb/mb.c`, kernel 6.18).
/// The progress thread used to pay that wait at `MPI_Init`. A program that
/// finalized within those milliseconds then waited in `MPI_Finalize` for the
/// thread to finish registering before it could join it: about 14 ms per
/// job. Registering here, once, costs nothing. A process that already has
/// threads at load time (a library started one in its constructor) is left
/// to the progress thread, as before: blocking the program's start-up for
/// the grace period would cost more than the thread's wait.
pub fn init_barrier_if_alone() {
    if single_threaded() {
        register();
    }
}

fn register() -> bool {
    // SAFETY: membarrier takes two integer arguments and touches no memory.
    let cmds = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_QUERY, 0) };
    let ok = cmds >= 0
        && cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED as libc::c_long != 0
        // SAFETY: as above.
        && unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
                0,
            )
        } == 0;
    EXPEDITED.store(ok, Ordering::Relaxed);
    ok
}

/// Whether this process has exactly one thread, from the `Threads:` line of
/// `/proc/self/status` (read with plain system calls into a stack buffer:
/// this runs in the library's constructor, before anything is set up).
/// False when the file cannot be read.
fn single_threaded() -> bool {
    let mut buf = [0u8; 4096];
    // SAFETY: the path is a NUL-terminated literal; `open` and `read` write
    // at most `buf.len()` bytes into `buf`, which lives across both calls,
    // and the descriptor is closed before returning.
    let n = unsafe {
        let fd = libc::open(
            c"/proc/self/status".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return false;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    if n <= 0 {
        return false;
    }
    threads_in_status(&buf[..n as usize]) == Some(1)
}

/// The thread count on the `Threads:` line of a `/proc/<pid>/status` text.
fn threads_in_status(status: &[u8]) -> Option<u32> {
    let line = status
        .split(|&b| b == b'\n')
        .find_map(|l| l.strip_prefix(b"Threads:"))?;
    let digits = line.trim_ascii();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    core::str::from_utf8(digits).ok()?.parse().ok()
}

/// Whether the frequent side of the handshake may use a compiler barrier
/// (the rare side calls [`heavy_barrier`]).
#[inline]
pub fn light_barrier_is_enough() -> bool {
    EXPEDITED.load(Ordering::Relaxed)
}

/// The rare side's barrier: every thread of this process that is running
/// executes a full memory barrier before this returns (a thread that is not
/// running passes one when it is switched back in), and so does the caller.
pub fn heavy_barrier() {
    if EXPEDITED.load(Ordering::Relaxed) {
        // SAFETY: as in `init_barrier`.
        let rc =
            unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) };
        if rc == 0 {
            return;
        }
    }
    // Not registered (the entering side then fences too): a local fence is
    // the rare side's half of a symmetric Dekker handshake.
    core::sync::atomic::fence(Ordering::SeqCst);
}

/// Sleeps while `*word == expected` (or until a spurious wake-up, a signal,
/// or `timeout_ms` milliseconds if given). `word` may be in memory shared
/// with other processes.
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout_ms: Option<u64>) {
    let ts = timeout_ms.map(|t| libc::timespec {
        tv_sec: (t / 1000) as libc::time_t,
        tv_nsec: ((t % 1000) * 1_000_000) as libc::c_long,
    });
    let tsp = ts
        .as_ref()
        .map_or(core::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call;
    // the kernel only reads it (and compares it with `expected`).
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            tsp,
            core::ptr::null::<u32>(),
            0u32,
        )
    };
}

/// Wakes one thread (of any process) sleeping in [`futex_wait`] on `word`.
pub fn futex_wake(word: &AtomicU32) {
    // SAFETY: `word` is a valid, aligned u32; FUTEX_WAKE does not access it.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            1i32,
            core::ptr::null::<libc::timespec>(),
            core::ptr::null::<u32>(),
            0u32,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn wake_reaches_a_sleeper() {
        let w = Arc::new(AtomicU32::new(0));
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            while w2.load(Ordering::Acquire) == 0 {
                futex_wait(&w2, 0, Some(10_000));
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        w.store(1, Ordering::Release);
        futex_wake(&w);
        t.join().unwrap();
    }

    #[test]
    fn wait_returns_at_once_on_a_changed_word() {
        let w = AtomicU32::new(5);
        let t0 = std::time::Instant::now();
        futex_wait(&w, 4, Some(10_000));
        assert!(t0.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn thread_count_is_read_from_the_status_line() {
        let status = b"Name:\tx\nUmask:\t0022\nThreads:\t1\nSigQ:\t0/1\n";
        assert_eq!(threads_in_status(status), Some(1));
        assert_eq!(threads_in_status(b"Threads:\t17\n"), Some(17));
        assert_eq!(threads_in_status(b"Threads:\t3"), Some(3));
        assert_eq!(threads_in_status(b"Name:\tThreads:\t1\n"), None);
        assert_eq!(threads_in_status(b"Threads:\t\n"), None);
        assert_eq!(threads_in_status(b"Threads:\t1x\n"), None);
    }

    #[test]
    fn a_process_with_a_second_thread_is_not_single_threaded() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || rx.recv().ok());
        assert!(!single_threaded());
        tx.send(()).unwrap();
        t.join().unwrap();
    }

    #[test]
    fn heavy_barrier_works_registered_or_not() {
        init_barrier();
        heavy_barrier();
    }
}
