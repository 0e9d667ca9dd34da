//! `HEAPMPI_CHECK=1`: a canary after every block of the shared heap,
//! checked when the block is freed or reallocated, so that a write past
//! the end of a block (which, in a shared heap, lands in the next block of
//! the same rank or in another rank's memory) is caught where it can be
//! named, instead of showing up later as a wrong answer in a rank that did
//! nothing wrong.
//!
//! The technique is the classic debugging allocator's (Perens' Electric
//! Fence's "slack" mode, glibc's `MALLOC_CHECK_` magic byte after the
//! block): a block of `n` bytes is allocated with [`EXTRA`] more; the
//! 8 bytes at `p + n` hold a canary derived from the block's address, and
//! the last word of the usable block holds `n` (dlmalloc's usable size is
//! at least `n + EXTRA`, and is read from its chunk header at free time,
//! so nothing else needs storing). On a mismatch heapmpi prints one line
//! naming the rank whose part holds the block, the block's address and
//! size, and what it found, then aborts, so that a core file and a
//! debugger show the spot.
//!
//! Only blocks of the shared heap carry a canary (glibc's have glibc's own
//! checks). The check is on or off for the whole life of the heap: it is
//! decided at activation, before the first block of the part is handed
//! out, so every block of the part has a canary and every free can check.

use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Bytes added to every block: the canary and the size word.
pub const EXTRA: usize = 16;

/// Whether blocks of the shared heap carry canaries. Set before the heap
/// is activated (before any block of the part exists) and never changed;
/// the activation's Release store publishes it to every thread that sees
/// the heap active, so Relaxed loads are enough.
static ON: AtomicBool = AtomicBool::new(false);
/// This rank's world rank, for the message. Written with `ON`.
static RANK: AtomicI32 = AtomicI32::new(-1);

/// Turns canaries on for this process's part (before activation).
pub fn enable(world_rank: i32) {
    RANK.store(world_rank, Ordering::Relaxed);
    ON.store(true, Ordering::Relaxed);
}

/// This rank's world rank, for messages.
pub fn rank() -> i32 {
    RANK.load(Ordering::Relaxed)
}

/// Whether blocks carry canaries.
#[inline(always)]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The canary of the block at `p`: its address mixed with a constant, so a
/// block copied elsewhere, or a canary left over from an earlier block at
/// another address, does not pass.
#[inline]
fn canary(p: usize) -> u64 {
    (p as u64).rotate_left(29) ^ 0x5a17_c0de_d00d_f00d
}

/// The request to make for a block of `n` bytes (None: too large).
#[inline]
pub fn padded(n: usize) -> Option<usize> {
    n.checked_add(EXTRA)
}

/// Writes the canary and the size word of a fresh block `p` of `n`
/// requested bytes whose usable size is `usable` (at least `n + EXTRA`).
///
/// # Safety
/// `p` is a live block of at least `usable` bytes, `usable >= n + EXTRA`.
pub unsafe fn stamp(p: *mut u8, n: usize, usable: usize) {
    debug_assert!(usable >= n + EXTRA);
    // SAFETY: both words lie inside the block (`n + 8 <= usable - 8`);
    // unaligned writes, as `n` is any size.
    unsafe {
        p.add(n).cast::<u64>().write_unaligned(canary(p as usize));
        p.add(usable - 8).cast::<u64>().write_unaligned(n as u64);
    }
}

/// What a block's words say.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The canary is intact: the block's requested size.
    Intact(usize),
    /// The size word is beyond the block: the end of the block was
    /// overwritten (or the block was never stamped).
    SizeOverwritten(u64),
    /// The canary after the block's bytes was overwritten.
    CanaryOverwritten {
        /// the block's requested size
        n: usize,
        /// what the canary's word holds
        found: u64,
    },
}

/// Reads the canary of block `p` whose usable size is `usable`.
///
/// # Safety
/// `p` is a live block of at least `usable` bytes.
pub unsafe fn verify(p: *const u8, usable: usize) -> Verdict {
    if usable < EXTRA {
        return Verdict::SizeOverwritten(0);
    }
    // SAFETY: the last word of the block is inside it.
    let n = unsafe { p.add(usable - 8).cast::<u64>().read_unaligned() };
    if n > (usable - EXTRA) as u64 {
        return Verdict::SizeOverwritten(n);
    }
    let n = n as usize;
    // SAFETY: `n + 8 <= usable - 8`: inside the block.
    let found = unsafe { p.add(n).cast::<u64>().read_unaligned() };
    if found == canary(p as usize) {
        Verdict::Intact(n)
    } else {
        Verdict::CanaryOverwritten { n, found }
    }
}

/// Checks block `p` (usable size `usable`) at `when` ("free", "realloc");
/// `owner` names the rank whose part holds it. Returns the requested size;
/// on a hit prints one line and aborts.
///
/// # Safety
/// `p` is a live block of at least `usable` bytes.
pub unsafe fn check(p: *const u8, usable: usize, when: &str, owner: &str) -> usize {
    // SAFETY: forwarded from the caller.
    match unsafe { verify(p, usable) } {
        Verdict::Intact(n) => n,
        v => {
            let rank = RANK.load(Ordering::Relaxed);
            let what = match v {
                Verdict::CanaryOverwritten { n, found } => format!(
                    "the {n}-byte block at {p:p} was written past its end: the canary at {:p} \
                     holds {found:#018x}",
                    p.wrapping_add(n)
                ),
                Verdict::SizeOverwritten(w) => format!(
                    "the block at {p:p} ({usable} usable bytes) was overwritten at its end \
                     (size word {w:#x})"
                ),
                Verdict::Intact(_) => unreachable!(),
            };
            crate::eprint_noalloc!(
                "heapmpi: HEAPMPI_CHECK (rank {rank}, at {when}): in {owner}'s part of the \
                 shared heap, {what}; aborting"
            );
            std::process::abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_block_verifies_and_an_overrun_does_not() {
        let mut buf = vec![0u8; 64];
        let p = buf.as_mut_ptr();
        // SAFETY: 64 bytes, 40 requested + EXTRA = 56 <= 64.
        unsafe { stamp(p, 40, 64) };
        // SAFETY: as above.
        assert_eq!(unsafe { verify(p, 64) }, Verdict::Intact(40));
        buf[40] ^= 1; // one byte past the 40 requested
                      // SAFETY: as above.
        assert!(matches!(
            unsafe { verify(buf.as_ptr(), 64) },
            Verdict::CanaryOverwritten { n: 40, .. }
        ));
        buf[63] = 0xff; // the size word itself
                        // SAFETY: as above.
        assert!(matches!(
            unsafe { verify(buf.as_ptr(), 64) },
            Verdict::SizeOverwritten(_)
        ));
    }

    #[test]
    fn a_block_that_moved_does_not_pass() {
        let mut a = vec![0u8; 48];
        let mut b = [0u8; 48];
        // SAFETY: 48 bytes, 16 requested + EXTRA <= 48.
        unsafe { stamp(a.as_mut_ptr(), 16, 48) };
        b.copy_from_slice(&a);
        // SAFETY: as above.
        assert!(matches!(
            unsafe { verify(b.as_ptr(), 48) },
            Verdict::CanaryOverwritten { n: 16, .. }
        ));
    }
}
