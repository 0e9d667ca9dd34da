//! Channels: control blocks of their own for operations of a communicator
//! that must not take its steps in call order (persistent collectives,
//! which members may start in different orders: MPI-4.0 §6.13), made
//! without any member waiting for another. Each block ends in a link word;
//! the communicator's block links its first channel and each channel the
//! next, so the channels form a chain that every member walks in the same
//! order (see [`Node::channel`]); a link is claimed once, by
//! compare-exchange, by the first member to reach it.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{new_block, next_offset, sweep, Head, Node, NO_CHANNEL};
use crate::heap;

impl Node {
    /// The next channel of this communicator for the member standing at
    /// `chain`: a block of its own, with steps of its own, for an
    /// operation whose steps must not follow the communicator's call order
    /// (a persistent collective, which members may start in different
    /// orders: MPI-4.0 §6.13). Channels form a chain, linked through the
    /// last word of each block, from the communicator's block. Members
    /// walk it in an order they agree on (the persistent
    /// initialisations', which is the call order), each at its own pace:
    /// the first to reach the end makes the next block and links it, so
    /// no member waits for another, and the others adopt it. A channel
    /// block is freed once every member has dropped its `Node` (the
    /// request is freed) and walked past it. `None` for every member alike
    /// once a member found no room: the chain ends there.
    pub fn channel(&self, chain: &Chain) -> Option<Node> {
        // Relaxed: the member's own position, moved only by its
        // collective calls on the communicator, which the program orders.
        let at = chain.at.load(Ordering::Relaxed);
        if at == NO_CHANNEL {
            return None;
        }
        let prev = if at == 0 { self.block } else { at as *mut u8 };
        // SAFETY: the link word at the end of a live block (ours, or the
        // channel we stand on, which our standing keeps alive), 8-aligned
        // (the offset is a multiple of the line).
        let link = unsafe { &*(prev.add(next_offset(self.n, self.cell)) as *const AtomicU64) };
        sweep();
        let got = claim(
            link,
            || {
                let b = new_block(self.n, self.cell);
                if !b.is_null() {
                    // SAFETY: our fresh block, which no member knows yet:
                    // every member holds it through its `Node` and stands
                    // on it in its chain until it walks on.
                    unsafe {
                        (*(b as *const Head))
                            .live
                            .store(2 * self.n as u32, Ordering::Relaxed)
                    };
                }
                b
            },
            // SAFETY: our fresh block, which no member knows.
            |b| unsafe { heap::free(b) },
        );
        chain
            .at
            .store(got.map_or(NO_CHANNEL, |(b, _)| b as u64), Ordering::Relaxed);
        if at != 0 {
            // SAFETY: we stood on it; no longer.
            unsafe { walk_past(at as *mut u8) };
        }
        let (block, owner) = got?;
        let mut node = Node::adopt(block, self.ranks.clone(), self.me, None);
        node.owner = owner;
        Some(node)
    }
}

/// Where a member stands in its communicator's chain of channels (see
/// [`Node::channel`]): on the block of the last channel it took, on none
/// yet (0), or past the end (`NO_CHANNEL`). Leaving it (the
/// communicator's free) walks past the block it stands on.
pub struct Chain {
    at: AtomicU64,
}

impl Chain {
    /// A member on no channel yet.
    pub const fn new() -> Chain {
        Chain {
            at: AtomicU64::new(0),
        }
    }
}

impl Default for Chain {
    fn default() -> Chain {
        Chain::new()
    }
}

impl Drop for Chain {
    fn drop(&mut self) {
        let at = *self.at.get_mut();
        if at != 0 && at != NO_CHANNEL {
            // SAFETY: we stood on it; no longer.
            unsafe { walk_past(at as *mut u8) };
        }
    }
}

/// Drops a member's standing on channel block `b` (one of the `2 n`
/// references a channel block starts with); its owner frees it once none
/// is left (in its `Node`'s drop, or a later [`sweep`]).
///
/// # Safety
/// The member stood on `b` (so it is live) and never reads it again
/// through that standing.
unsafe fn walk_past(b: *mut u8) {
    // SAFETY: live while we stand on it, per the contract.
    let head = unsafe { &*(b as *const Head) };
    // AcqRel: as in `Node`'s drop: our read of its link happens before the
    // owner's free.
    head.live.fetch_sub(1, Ordering::AcqRel);
    sweep();
}

/// The block a channel link names (see [`Node::channel`]), and whether
/// this member made it: the link's block if a member published one, else
/// one of `make`'s, published now; `None` if the link says the chain
/// ends, or `make` had no room first (then the link says so for the
/// others). `free` takes back a block made here that lost the race.
fn claim(
    entry: &AtomicU64,
    make: impl FnOnce() -> *mut u8,
    free: impl FnOnce(*mut u8),
) -> Option<(*mut u8, bool)> {
    // Acquire: the block's zeroing by the member that published it happens
    // before our use (pairs with the Release of the successful exchange).
    let mut v = entry.load(Ordering::Acquire);
    let mut ours = false;
    if v == 0 {
        let b = make();
        let want = if b.is_null() { NO_CHANNEL } else { b as u64 };
        // AcqRel: Release publishes our zeroed block; Acquire, on failure,
        // orders the winner's zeroing before our use, as above.
        match entry.compare_exchange(0, want, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {
                v = want;
                ours = true;
            }
            Err(w) => {
                if !b.is_null() {
                    free(b);
                }
                v = w;
            }
        }
    }
    (v != NO_CHANNEL).then_some((v as *mut u8, ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Members racing for one channel link (threads standing in
    /// for them, each offering a block of its own): every member gets the
    /// same block, exactly one made it, and every other offer is taken
    /// back. The race is rerun many times, so both orders occur.
    #[test]
    fn channel_claim_agrees() {
        const N: usize = 4;
        for _ in 0..500 {
            let entry = Arc::new(AtomicU64::new(0));
            let freed = Arc::new(AtomicU64::new(0));
            let got: Vec<_> = (0..N)
                .map(|m| {
                    let (entry, freed) = (Arc::clone(&entry), Arc::clone(&freed));
                    std::thread::spawn(move || {
                        // Distinct, line-aligned stand-in addresses.
                        let mine = ((m + 1) * 4096) as *mut u8;
                        claim(
                            &entry,
                            || mine,
                            |b| {
                                assert_eq!(b, mine, "only our own offer is taken back");
                                freed.fetch_add(1, Ordering::Relaxed);
                            },
                        )
                        .map(|(b, ours)| (b as usize, ours))
                    })
                })
                .collect::<Vec<_>>()
                .into_iter()
                .map(|t| t.join().unwrap())
                .collect();
            let first = got[0].expect("a channel").0;
            assert!(got.iter().all(|g| g.is_some_and(|(b, _)| b == first)));
            assert_eq!(got.iter().filter(|g| g.is_some_and(|(_, o)| o)).count(), 1);
            // Members that came after the winner made nothing.
            assert!(freed.load(Ordering::Relaxed) < N as u64);
            assert_eq!(entry.load(Ordering::Relaxed), first as u64);
        }
    }

    /// A first member without room decides for all: no member gets the
    /// channel, not even one that would have had room.
    #[test]
    fn channel_claim_without_room_is_none_for_all() {
        let entry = AtomicU64::new(0);
        assert_eq!(
            claim(&entry, core::ptr::null_mut, |_| panic!("nothing made")),
            None
        );
        let made = 4096 as *mut u8;
        let mut taken_back = false;
        assert_eq!(claim(&entry, || made, |_| taken_back = true), None);
        // A later member finds the entry filled and makes nothing.
        assert!(!taken_back);
    }
}
