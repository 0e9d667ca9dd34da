//! The passive-target lock word: a reader-writer lock in one 64-bit word
//! of shared memory, driven by fetch-and-add and compare-and-swap, with no
//! helper thread and no message (the design of Gerstenberger, Besta and
//! Hoefler's foMPI, and of the MPI-2 passive-target synchronisation built
//! on compare-and-swap and fetch-and-add).
//!
//! Bit 63 is the writer holding the lock, bits 32-62 count the writers
//! waiting for it, bits 0-31 the readers holding it. A writer announces
//! itself (fetch-and-add of one waiting writer), then takes the word by
//! compare-and-swap once no reader or writer holds it; a reader takes it
//! only while no writer holds it or waits for it. So writers are not
//! starved by a stream of readers (readers wait behind writers, as an
//! exclusive lock means).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::comm::node::wait_until;

/// The writer bit.
const WRITER: u64 = 1 << 63;
/// One waiting writer.
const PENDING: u64 = 1 << 32;
/// The waiting writers' field.
const PENDING_MASK: u64 = 0x7fff_ffff << 32;
/// The readers' field.
const READERS: u64 = 0xffff_ffff;

/// Takes the lock word `w`, exclusive or shared, waiting as long as it
/// takes. Returns whether it had to wait.
pub fn acquire(w: &AtomicU64, exclusive: bool) -> bool {
    let mut waited = false;
    if exclusive {
        // Relaxed: only announces the writer; the lock is taken by the
        // Acquire compare-and-swap below.
        w.fetch_add(PENDING, Ordering::Relaxed);
    }
    wait_until(|| {
        let v = w.load(Ordering::Relaxed);
        let (free, new) = if exclusive {
            (v & (WRITER | READERS) == 0, (v - PENDING) | WRITER)
        } else {
            (v & (WRITER | PENDING_MASK) == 0, v + 1)
        };
        // Acquire: the previous holders' accesses (Release in `release`)
        // happen before ours.
        if free
            && w.compare_exchange(v, new, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return Some(());
        }
        waited = true;
        None
    });
    waited
}

/// Releases the lock word `w` taken by [`acquire`] the same way.
pub fn release(w: &AtomicU64, exclusive: bool) {
    // Release: our accesses under the lock happen before the next holder's.
    if exclusive {
        w.fetch_and(!WRITER, Ordering::Release);
    } else {
        w.fetch_sub(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::UnsafeCell;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// Two words only writers change, always equal outside a writer's
    /// section.
    struct Guarded {
        word: AtomicU64,
        a: UnsafeCell<u64>,
        b: UnsafeCell<u64>,
    }
    // SAFETY: `a` and `b` are accessed only under the lock word (writers
    // alone, or readers together), which is what the test checks.
    unsafe impl Sync for Guarded {}

    /// Writers' read-modify-write sections lose no update, and readers
    /// never see a writer's section half done.
    #[test]
    fn writers_exclude_everyone_readers_only_writers() {
        let g = Arc::new(Guarded {
            word: AtomicU64::new(0),
            a: UnsafeCell::new(0),
            b: UnsafeCell::new(0),
        });
        let torn = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..6)
            .map(|i| {
                let (g, torn) = (Arc::clone(&g), Arc::clone(&torn));
                std::thread::spawn(move || {
                    for k in 0..2000 {
                        let exclusive = i % 2 == 0 || k % 7 == 0;
                        acquire(&g.word, exclusive);
                        // SAFETY: under the lock word (see `Guarded`).
                        unsafe {
                            if exclusive {
                                let a = *g.a.get();
                                std::hint::spin_loop();
                                *g.a.get() = a + 1;
                                *g.b.get() = a + 1;
                            } else if *g.a.get() != *g.b.get() {
                                torn.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        release(&g.word, exclusive);
                    }
                })
            })
            .collect();
        let mut writes = 0;
        for (i, t) in threads.into_iter().enumerate() {
            t.join().unwrap();
            writes += (0..2000).filter(|k| i % 2 == 0 || k % 7 == 0).count() as u64;
        }
        // SAFETY: every thread has finished.
        assert_eq!(unsafe { *g.a.get() }, writes, "a writer's update was lost");
        assert_eq!(
            torn.load(Ordering::Relaxed),
            0,
            "a reader saw a half-done write"
        );
        assert_eq!(
            g.word.load(Ordering::Relaxed),
            0,
            "the word is not free at the end"
        );
    }

    /// A waiting writer keeps new readers out: with a reader holding the
    /// word and a writer waiting, a second reader gets in only after the
    /// writer has had its turn.
    #[test]
    fn a_waiting_writer_goes_before_new_readers() {
        let w = Arc::new(AtomicU64::new(0));
        assert!(!acquire(&w, false));
        let writer_done = Arc::new(AtomicBool::new(false));
        let writer = {
            let (w, done) = (Arc::clone(&w), Arc::clone(&writer_done));
            std::thread::spawn(move || {
                acquire(&w, true);
                done.store(true, Ordering::Relaxed);
                release(&w, true);
            })
        };
        // Wait until the writer has announced itself.
        while w.load(Ordering::Relaxed) & PENDING_MASK == 0 {
            std::thread::yield_now();
        }
        let reader = {
            let (w, done) = (Arc::clone(&w), Arc::clone(&writer_done));
            std::thread::spawn(move || {
                acquire(&w, false);
                let after = done.load(Ordering::Relaxed);
                release(&w, false);
                after
            })
        };
        // The second reader cannot get in while the writer waits; let it
        // try for a while, then let the writer in.
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!writer_done.load(Ordering::Relaxed));
        release(&w, false);
        writer.join().unwrap();
        assert!(
            reader.join().unwrap(),
            "a new reader went before the waiting writer"
        );
        assert_eq!(w.load(Ordering::Relaxed), 0);
    }
}
