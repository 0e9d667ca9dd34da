//! A copy split into blocks that two processes take with a shared counter
//! until none are left (the synergistic copy of Hybrid MPI, Hashmi et al.,
//! SC13): the point-to-point engine's large messages, where the sender
//! helps its receiver (`p2p::engine::synergy`), and large broadcasts,
//! where the root helps each reader (`coll::assist`). The counters live
//! in the shared heap, in whatever record the two sides share.

use core::sync::atomic::{AtomicU64, Ordering};

/// One copy: `n` bytes from `src` to `dst`, in blocks of `block` bytes.
#[derive(Clone, Copy)]
pub struct Job {
    /// Where the bytes are.
    pub src: *const u8,
    /// Where they go.
    pub dst: *mut u8,
    /// How many.
    pub n: usize,
    /// Bytes per block (not 0).
    pub block: usize,
}

impl Job {
    /// Blocks the copy makes.
    pub fn blocks(&self) -> u64 {
        self.n.div_ceil(self.block) as u64
    }
}

/// Takes blocks of `job` with `next` (the next block to take) until none
/// are left, copying each and counting it in `copied`; returns how many
/// this caller copied. A job already taken whole costs no locked
/// instruction.
///
/// # Safety
/// The job's buffers hold `n` bytes and stay valid until `copied` reaches
/// its block count; every copier of the job uses the same counters, so
/// each block is copied once.
pub unsafe fn take(next: &AtomicU64, copied: &AtomicU64, job: &Job) -> u64 {
    let nblocks = job.blocks();
    // Relaxed: only a look; the locked increment below hands out blocks.
    if next.load(Ordering::Relaxed) >= nblocks {
        return 0;
    }
    let mut mine = 0;
    loop {
        // Relaxed: the counter only hands out distinct indices; the bytes
        // are published through `copied`.
        let b = next.fetch_add(1, Ordering::Relaxed);
        if b >= nblocks {
            return mine;
        }
        let off = b as usize * job.block;
        let len = job.block.min(job.n - off);
        // SAFETY: block `b` lies inside both buffers (the contract) and is
        // ours alone (a unique index).
        unsafe { crate::dt::copy_disjoint(job.src.add(off), job.dst.add(off), len) };
        // Release: the block's bytes before the count the other side
        // awaits with Acquire.
        copied.fetch_add(1, Ordering::Release);
        mine += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two threads take one job: every byte arrives once, the counts add
    /// up, and a finished job gives nothing more.
    #[test]
    fn two_copiers_share_a_job() {
        let n = 100_003;
        let src: Vec<u8> = (0..n).map(|i| (i * 31 + 7) as u8).collect();
        let mut dst = vec![0u8; n];
        let (next, copied) = (AtomicU64::new(0), AtomicU64::new(0));
        let job = Job {
            src: src.as_ptr(),
            dst: dst.as_mut_ptr(),
            n,
            block: 4096,
        };
        let nblocks = job.blocks();
        let j = (job.src as usize, job.dst as usize);
        let copier = || {
            let job = Job {
                src: j.0 as *const u8,
                dst: j.1 as *mut u8,
                ..job
            };
            // SAFETY: both buffers hold `n` bytes and outlive the scope.
            unsafe { take(&next, &copied, &job) }
        };
        let (a, b) = std::thread::scope(|sc| {
            let h = sc.spawn(copier);
            let mine = copier();
            (mine, h.join().unwrap())
        });
        assert_eq!(a + b, nblocks);
        assert_eq!(copied.load(Ordering::Acquire), nblocks);
        assert_eq!(copier(), 0);
        assert_eq!(dst, src);
    }
}
