//! The root of a large broadcast helps its readers copy.
//!
//! A large broadcast is read by every member straight from the root's
//! buffer, while the root waits for them: one core per reader moves the
//! data, and at 2 ranks the copy runs at one core's memory bandwidth. Here
//! a reader whose buffer is dense and inside the heap (so that the root
//! can write it at the same address) publishes it in its own cell for the
//! step, split into blocks, and both take blocks with an atomic counter
//! until none are left: the root copies instead of waiting. This is the
//! synergistic copy of Hybrid MPI (Hashmi et al., SC13) that
//! `p2p::engine::synergy` uses between a sender and a receiver
//! ([`crate::blocks`]), applied to the root and each reader of a broadcast.
//!
//! The job lives in the reader's cell for the broadcast's step: `addr` the
//! destination, `len` the bytes, `aux` the block size, and two counters in
//! the cell's first data words (the next block to take, the blocks
//! copied). Nobody else reads a reader's cell in a broadcast, and its slot
//! is reused only at step `s + CELLS`, after every member (the root
//! included) is done with step `s`, so the root never sees a stale job.
//!
//! Nonblocking broadcasts (`MPI_Ibcast`, `MPI_Bcast_init`) help the same
//! way: a reader publishes its job when it reads (if its cell is free
//! without waiting), and the root takes blocks on every round of progress
//! until its readers are done, and only then finishes the step
//! (`coll::nb`'s serving phase), which keeps the same guarantee.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::blocks::Job;
use crate::comm::node::Node;
use crate::comm::wait::wait_until;

/// Smallest broadcast whose readers ask for help. While both buffers stay
/// in the caches the root's writes only pull the reader's lines to the
/// root's core and back: `osu_coll bcast`, Open MPI, 2 ranks bound, µs
/// before / with help from 32 KiB: 64 KiB 1.6 / 2.7-3.1, 256 KiB 5.8 /
/// 6.0-6.5, 512 KiB 10.7-11.3 / 10.3-12.5, 768 KiB 21-24 / 13-16, 1 MiB
/// 41-48 / 14-26, 4 MiB 320-335 / 155-164. Helping pays once the two
/// buffers outgrow a core's L2 (2 MiB here), so from 512 KiB (no worse
/// there, and better on machines with smaller caches).
pub const MIN: usize = 512 << 10;

/// Block size for a copy of `n` bytes: about eight blocks, so that the
/// root, which starts a little later, still gets its share.
fn block_for(n: usize) -> usize {
    (n / 8).clamp(8 << 10, 256 << 10)
}

/// The counters of member `m`'s job at step `s`: (next block, blocks
/// copied), the first two data words of its cell.
fn counters(node: &Node, m: usize, s: u64) -> (&AtomicU64, &AtomicU64) {
    let p = node.data(m, s, 16) as *const AtomicU64;
    // SAFETY: the cell's data area holds at least 16 bytes, 8-aligned
    // (the cell is line-aligned and the data starts 32 bytes in), and
    // lives as long as the block `node` holds.
    unsafe { (&*p, &*p.add(1)) }
}

/// The reader's side: copies `n` bytes from `src` (the root's buffer) to
/// `dst` (this member's buffer, inside the heap) at step `s`, with the
/// root's help, and returns when every byte is there.
///
/// # Safety
/// `src` holds `n` bytes the root keeps until this member finishes step
/// `s`; `dst` has room for `n` bytes, is inside the shared heap and is not
/// touched by anyone else meanwhile.
pub unsafe fn read(node: &Node, s: u64, src: *const u8, dst: *mut u8, n: usize) {
    // The slot was last used at step `s - CELLS`, which every member has
    // finished (the root's own gate checked it before publishing `s`), so
    // this does not wait.
    node.gate(s);
    // SAFETY: per the contract; the gate is open.
    unsafe { read_gated(node, s, src, dst, n) }
}

/// [`read`] once this member's cell for step `s` is known to be free
/// (`Node::gate_open(s)`): what a nonblocking broadcast's reader calls,
/// which may not wait for the gate.
///
/// # Safety
/// As [`read`], and the gate of step `s` is open.
pub unsafe fn read_gated(node: &Node, s: u64, src: *const u8, dst: *mut u8, n: usize) {
    let block = block_for(n);
    let job = Job { src, dst, n, block };
    let (next, copied) = counters(node, node.me, s);
    // Relaxed: published by the Release of `publish` below.
    next.store(0, Ordering::Relaxed);
    copied.store(0, Ordering::Relaxed);
    node.publish(s, dst as u64, n as u64, block as u64);
    // SAFETY: per the contract.
    unsafe { crate::blocks::take(next, copied, &job) };
    // Acquire: pairs with every copier's Release increment, so the root's
    // blocks are in `dst` before this member finishes the step. Only the
    // blocks the root has already claimed are waited for: the rest were
    // taken here.
    wait_until(|| (copied.load(Ordering::Acquire) >= job.blocks()).then_some(()));
}

/// The root's side: waits until every member is done with step `s`,
/// copying blocks of `src` (the root's `n` published bytes) for any reader
/// that published a job meanwhile. The root finishes step `s` only after
/// this returns (a reader's cell is reused only once every member finished
/// the step, so no job seen here is stale).
pub fn serve(node: &Node, s: u64, src: *const u8, n: usize) {
    wait_until(|| {
        serve_once(node, s, src, n);
        node.all_done(s).then_some(())
    });
}

/// One look at every reader's cell for a job of step `s`, taking its
/// blocks until none are left; what a nonblocking broadcast's root does on
/// each round of progress until its readers are done. The caller must not
/// have finished step `s` (see [`serve`]).
pub fn serve_once(node: &Node, s: u64, src: *const u8, n: usize) {
    for m in (0..node.n).filter(|&m| m != node.me) {
        let c = node.cell(m, s);
        // Acquire: pairs with the reader's Release in `publish`, so its
        // destination, length, block size and zeroed counters are seen.
        if c.seq.load(Ordering::Acquire) != s {
            continue;
        }
        // Relaxed: ordered by the Acquire above.
        let dst = c.addr.load(Ordering::Relaxed) as *mut u8;
        let len = (c.len.load(Ordering::Relaxed) as usize).min(n);
        let block = c.aux.load(Ordering::Relaxed) as usize;
        let (next, copied) = counters(node, m, s);
        let job = Job {
            src,
            dst,
            n: len,
            block,
        };
        // SAFETY: the reader keeps its job (and its buffer, in the heap,
        // mapped at this address here too) until every block is copied,
        // which includes those this call takes; `src` is ours.
        let mine = unsafe { crate::blocks::take(next, copied, &job) };
        if mine > 0 {
            crate::stats::COLL_BCAST_HELPED.add(mine);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::block_for;

    #[test]
    fn blocks_cover_every_size() {
        for n in [super::MIN, 65536, 65539, 1 << 20, (1 << 20) + 3, 64 << 20] {
            let b = block_for(n);
            assert!((8 << 10..=256 << 10).contains(&b));
            assert!(n.div_ceil(b) * b >= n && n.div_ceil(b) <= 8 * 32);
        }
    }
}
