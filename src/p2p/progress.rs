//! The progress thread: matches and copies this rank's incoming messages
//! while the rank itself is somewhere heapmpi cannot see.
//!
//! MPI's progress rule (MPI-4.0 §3.7.4): a send whose matching receive is
//! posted completes, whatever the receiver does next. A rank that posted
//! `MPI_Irecv` and then sits in a call that goes to the real MPI (a
//! barrier, `MPI_Comm_dup`, a wait on another node's request, file I/O,
//! `MPI_Finalize`, a Fortran binding that calls `PMPI_*` directly) never
//! enters heapmpi there, so nothing would match a synchronous or
//! rendezvous send to it, and the sender, waiting for that, may be what
//! the real call waits for.
//!
//! Each rank therefore has one thread that sleeps in the kernel on the
//! doorbell of its mailbox (a shared futex, [`crate::sys::wake`]). A sender
//! that has waited a while for a send that needs its receiver rings the
//! receiver's doorbell ([`Mailbox::ring`], from `Engine::ring_waited`) and
//! keeps ringing now and then while it waits. The woken thread takes the
//! engine if no thread of its process is inside it (see `engine::access`:
//! if one is, that thread makes progress itself) and runs one round of
//! progress: returned headers, the global queue and the fast boxes
//! (matching exactly as the calling threads do, on the same queues, under
//! the same exclusion, so ordering and matching are those of any other
//! progress round), the copies of matched messages, helping synergistic
//! copies. Below `MPI_THREAD_MULTIPLE` it never calls the MPI library:
//! receives of non-contiguous types keep their bytes for the next calling
//! thread to unpack, and receives the real MPI may serve are left to
//! calling threads.
//!
//! Measured alternatives (issue notes): wrapping every blocking real call
//! to poll cannot cover calls heapmpi does not intercept, and letting the
//! sender match against the receiver's posted receives needs the datatype
//! engine and the receive buffer of another process. The thread costs
//! nothing while asleep; the calling threads' side of the exclusion is two
//! plain moves per call.

use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread::JoinHandle;

use super::engine;
use super::queue::Mailbox;
use crate::sys::wake;

/// Set when the thread must exit (at `MPI_Finalize`).
static STOP: AtomicBool = AtomicBool::new(false);

/// The running thread and the mailbox it watches.
static THREAD: Mutex<Option<(JoinHandle<()>, &'static Mailbox)>> = Mutex::new(None);

/// Starts this rank's progress thread on its mailbox `mb`. Returns false
/// if the thread could not be created (heapmpi then runs without it:
/// progress depends on the receiver entering heapmpi, as before).
pub fn start(mb: &'static Mailbox) -> bool {
    // Block every signal in the new thread (it inherits the mask), so the
    // program's handlers run on its own threads only.
    // SAFETY: plain sigset manipulation on local values.
    let old = unsafe {
        let mut all: libc::sigset_t = core::mem::zeroed();
        let mut old: libc::sigset_t = core::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        old
    };
    let spawned = std::thread::Builder::new()
        .name("heapmpi-progress".into())
        .stack_size(256 << 10)
        .spawn(move || run(mb));
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, core::ptr::null_mut()) };
    match spawned {
        Ok(h) => {
            *THREAD.lock().unwrap_or_else(|e| e.into_inner()) = Some((h, mb));
            true
        }
        Err(_) => false,
    }
}

/// Stops the thread and waits for it (before the real `MPI_Finalize`,
/// once no local peer can still need this rank's progress).
pub fn stop() {
    let Some((h, mb)) = THREAD.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return;
    };
    // Relaxed: published by the Release ring below (see `run`).
    STOP.store(true, Ordering::Relaxed);
    mb.ring_quietly();
    let _ = h.join();
}

fn run(mb: &'static Mailbox) {
    // Under HEAPMPI_CHECK, every write of this thread is heapmpi's own
    // (and it must take the page guards' SIGSEGV: heap::guard).
    if crate::heap::check::on() {
        crate::heap::guard::inside_for_good();
    }
    // Registering for membarriers is normally done already, at load time
    // while the process had one thread (`wake::init_barrier_if_alone`).
    // Otherwise it waits for the kernel (5-25 ms here), so it is done here,
    // not in MPI_Init, and before this thread's first handshake: until it
    // is done, the calling threads fence fully (see `wake::init_barrier`).
    wake::init_barrier();
    // Acquire (here and below): pairs with the Release increment in
    // `Mailbox::ring_quietly`, so a thread that sees `stop`'s ring also
    // sees STOP.
    let mut seen = mb.doorbell.load(Ordering::Acquire);
    loop {
        // STOP is looked at before every sleep, after the last look at the
        // doorbell: a stop that rang while we were serving is seen here; one
        // that rings after the look below changes the word we sleep on.
        if STOP.load(Ordering::Acquire) {
            return;
        }
        let now = mb.doorbell.load(Ordering::Acquire);
        if now != seen {
            seen = now;
            serve();
            continue;
        }
        wake::futex_wait(&mb.doorbell, seen, None);
    }
}

/// One round of progress, if no calling thread is inside the engine. A
/// calling thread that is inside makes progress itself; one that is about
/// to leave for the real MPI is covered by the sender's next ring.
fn serve() {
    crate::stats::P2P_WAKES.add(1);
    for _ in 0..4 {
        if let Some(mut e) = engine::access_for_progress_thread() {
            e.progress();
            e.flush_held();
            return;
        }
        std::thread::yield_now();
    }
}
