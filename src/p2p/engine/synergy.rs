//! The synergistic copy of large messages (Hybrid MPI, SC13): the receiver
//! publishes its buffer and both sides claim blocks of the copy with an
//! atomic counter, so a sender that is inside the library (waiting for its
//! send, or in any other heapmpi call) copies too and two cores move the
//! data.

use core::sync::atomic::Ordering;

use super::*;

impl Engine {
    /// The receiver's side of the synergistic copy.
    pub(super) fn synergy_copy(&self, h: &Msg, src: *const u8, dst: *mut u8, n: usize) {
        let rdv = h.rdv();
        let block = self.tune.block.max(4096);
        let nblocks = n.div_ceil(block) as u64;
        rdv.dst.store(dst as u64, Ordering::Relaxed);
        rdv.copy_len.store(n as u64, Ordering::Relaxed);
        rdv.block.store(block as u64, Ordering::Relaxed);
        rdv.nblocks.store(nblocks, Ordering::Relaxed);
        // Release: the sender's Acquire load of `go` sees the fields above.
        rdv.go.store(1, Ordering::Release);
        copy_blocks(rdv, src, dst, n, block, nblocks);
        let mut spins = 0;
        // Acquire: pairs with each copier's Release increment, so every
        // block's bytes are visible before the receive completes.
        while rdv.blocks_done.load(Ordering::Acquire) < nblocks {
            spins += 1;
            backoff(spins);
        }
        let helped = rdv.sender_blocks.load(Ordering::Relaxed);
        if helped > 0 {
            stats::P2P_HELPED_MSGS.add(1);
            stats::P2P_HELPED_BLOCKS.add(helped);
        }
    }

    /// The sender's side: copy blocks of our synergistic sends whose
    /// receivers have started.
    pub(super) fn help(&mut self) {
        for &m in &self.helpable {
            // SAFETY: our header, still out or in our returned stack (not yet
            // recycled: recycling removes it from `helpable` first).
            let h = unsafe { &*m };
            let rdv = h.rdv();
            // Acquire: pairs with the receiver's Release store of `go`.
            if rdv.go.load(Ordering::Acquire) == 0 {
                continue;
            }
            let n = rdv.copy_len.load(Ordering::Relaxed) as usize;
            let block = rdv.block.load(Ordering::Relaxed) as usize;
            let nblocks = rdv.nblocks.load(Ordering::Relaxed);
            let src = h.data.load(Ordering::Relaxed) as *const u8;
            let dst = rdv.dst.load(Ordering::Relaxed) as *mut u8;
            let mine = copy_blocks(rdv, src, dst, n, block, nblocks);
            if mine > 0 {
                rdv.sender_blocks.fetch_add(mine, Ordering::Relaxed);
            }
        }
    }
}

/// Claims and copies blocks of `rdv`'s job until none are left; returns
/// how many this caller copied.
pub(super) fn copy_blocks(
    rdv: &Rendezvous,
    src: *const u8,
    dst: *mut u8,
    n: usize,
    block: usize,
    nblocks: u64,
) -> u64 {
    debug_assert_eq!(nblocks, n.div_ceil(block) as u64);
    let job = crate::blocks::Job { src, dst, n, block };
    // SAFETY: both buffers hold `n` bytes and stay valid until
    // `blocks_done` reaches `nblocks`; both sides use `rdv`'s counters.
    unsafe { crate::blocks::take(&rdv.next_block, &rdv.blocks_done, &job) }
}
