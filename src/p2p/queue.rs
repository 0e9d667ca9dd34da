//! The shared-memory structures of the point-to-point engine: message
//! headers ([`Msg`]) and each rank's [`Mailbox`].
//!
//! Both live in the shared region, at the same address in every local rank,
//! so plain pointers link them. A header is allocated by its sender from the
//! sender's own part of the heap; the receiver, once done with it, hands it
//! back through the sender's `returned` stack, and the sender recycles it.
//!
//! A mailbox holds the rank's **global** incoming queue (every local rank
//! appends to it) and the stack of headers returned to it. Two queue
//! disciplines are built, selectable with `HEAPMPI_QUEUE` so they can be
//! measured against each other (docs/settings.md):
//! - `lockfree` (default): senders push with one CAS (a Treiber stack); the
//!   receiver takes the whole stack with one swap and reverses it, which
//!   restores arrival order (each sender's pushes stay in order within it).
//! - `lock`: a spin lock around a head/tail list, the original design's.
//!
//! The receiver then moves what it took into its private queue
//! (`engine::Engine::unexpected`) and matches there without
//! synchronisation. The per-pair rings for small messages are in
//! [`super::fastbox`].

use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

use crate::sys::wake;

/// Header flag: the payload follows the header inline (immediate protocol).
pub const F_INLINE: u32 = 1;
/// Header flag: synchronous send; the sender's request completes only when
/// the header comes back.
pub const F_SYNC: u32 = 2;
/// Header flag: `data` is a shared staging buffer the sender frees when the
/// header comes back.
pub const F_STAGED: u32 = 4;
/// Header flag: `data` is private memory of the sender (`pid`), read with
/// `process_vm_readv` (shared heap exhausted).
pub const F_CMA: u32 = 8;
/// Header flag: `data` is a private buffer (from glibc) the sender frees
/// when the header comes back (with [`F_CMA`]).
pub const F_PRIVATE_STAGED: u32 = 16;
/// Header flag: the sender may help copy (synergistic protocol).
pub const F_SYNERGY: u32 = 32;
/// Header flag: not a message; `data` is the [`super::fastbox::Ring`] (fast box) the sender
/// has just opened towards the receiver.
pub const F_RING_OPEN: u32 = 64;
/// Header flag: a receiver's private copy of a fast-box message that found
/// no posted receive; it goes back to the receiver's own pool, not to the
/// sender.
pub const F_OWN: u32 = 128;
/// Header flag: an immediate standard send that found its fast box full;
/// its request completes when the header comes back (the receiver returns
/// it at once, not in a batch) or when the sender has waited for it for a
/// while (see `Engine::try_stage`). So a sender that outruns its receiver
/// feels it, as with the real MPIs' bounded eager buffers, instead of
/// piling messages into the receiver's unexpected queue without end.
pub const F_ACK: u32 = 256;
/// Header flag: `data` is the sender's buffer of a derived datatype laid
/// out as the [`crate::dt::plan::Plan`] after the rendezvous line
/// ([`Msg::plan`]); the receiver copies from it block by block.
pub const F_PLAN: u32 = 512;

/// Rendezvous state: not matched yet.
pub const S_WAITING: u32 = 0;
/// Rendezvous state: the sender is copying its buffer into a staging buffer
/// (stage-on-stall); the receiver waits.
pub const S_STAGING: u32 = 1;
/// Rendezvous state: matched; the receiver owns the transfer.
pub const S_MATCHED: u32 = 2;

/// Bytes of the envelope line; inline payload or [`Rendezvous`] follow it.
pub const ENVELOPE: usize = 64;

/// A message header. The first cache line is the envelope the receiver
/// matches on; the second is either the inline payload or the rendezvous
/// state of a larger transfer.
///
/// Ordering: every field is written with Relaxed stores (or plain writes)
/// while one side owns the header, and ownership passes only through
/// Release/Acquire pairs: the sender's push and the receiver's take of the
/// queue, the receiver's return and the sender's take of the returned
/// stack, and, for `data`/`flags`/`sreq` during stage-on-stall, the
/// rendezvous `state` (see [`Rendezvous`]). So Relaxed accesses to the
/// fields are enough everywhere.
#[repr(C, align(64))]
pub struct Msg {
    /// Link in a mailbox queue or in the returned stack.
    pub next: AtomicPtr<Msg>,
    /// Communicator id (agreed by all its members, see `comm`).
    pub comm_id: u64,
    /// Sender's rank in the communicator.
    pub src: i32,
    /// Message tag.
    pub tag: i32,
    /// Sender's node-local index (where to return the header).
    pub src_local: u16,
    /// Header pool class (index of the allocation size).
    pub class: u16,
    /// `F_*` flags. Changed by the sender only under [`S_STAGING`].
    pub flags: AtomicU32,
    /// Payload bytes (packed representation).
    pub len: u64,
    /// Payload address. Changed by the sender only under [`S_STAGING`].
    pub data: AtomicU64,
    /// Sender's request slot + 1 to complete when the header returns, or 0.
    /// Changed by the sender only under [`S_STAGING`].
    pub sreq: AtomicU64,
    /// Position of the message among all its sender's messages to this
    /// receiver (both paths: global queue and fast box; see [`super::fastbox::Ring`]).
    pub seq: u32,
    /// Sender's process id (for [`F_CMA`]).
    pub pid: i32,
}

/// The transfer state of a non-inline message (the line after the envelope).
#[repr(C, align(64))]
pub struct Rendezvous {
    /// `S_*`: who owns the header's data fields.
    pub state: AtomicU32,
    /// 1 once the receiver has published `dst`, `copy_len` and `nblocks`
    /// for a synergistic copy (Release); the sender may then claim blocks.
    pub go: AtomicU32,
    /// Receiver's buffer (in the shared region).
    pub dst: AtomicU64,
    /// Bytes to copy (the message, or less on truncation).
    pub copy_len: AtomicU64,
    /// Bytes per block.
    pub block: AtomicU64,
    /// Number of blocks.
    pub nblocks: AtomicU64,
    /// Next unclaimed block.
    pub next_block: AtomicU64,
    /// Blocks copied (by either side).
    pub blocks_done: AtomicU64,
    /// Blocks the sender copied (statistics).
    pub sender_blocks: AtomicU64,
}

const _: () = assert!(core::mem::size_of::<Msg>() == ENVELOPE);
const _: () = assert!(core::mem::size_of::<Rendezvous>() == 64);

impl Msg {
    /// Where the inline payload (or the rendezvous state) starts.
    #[inline]
    pub fn body(&self) -> *mut u8 {
        (self as *const Msg as *mut u8).wrapping_add(ENVELOPE)
    }

    /// The rendezvous state of a non-inline message.
    #[inline]
    pub fn rdv(&self) -> &Rendezvous {
        // SAFETY: non-inline headers are allocated with room for a
        // Rendezvous after the envelope, 64-byte aligned;
        // all its fields are atomics, valid when zeroed.
        unsafe { &*(self.body() as *const Rendezvous) }
    }

    /// Where the sender's layout of an [`F_PLAN`] message is, after the
    /// rendezvous line (headers with that flag are allocated with room for
    /// it; it is written before the header is published and never changed
    /// while the flag is set).
    #[inline]
    pub fn plan(&self) -> *mut crate::dt::plan::Plan {
        self.body().wrapping_add(core::mem::size_of::<Rendezvous>()) as *mut crate::dt::plan::Plan
    }
}

/// One rank's mailbox in the node's control area (zeroed memory is an
/// empty mailbox).
#[repr(C, align(128))]
pub struct Mailbox {
    /// Global incoming queue: head (a stack in lock-free mode, the list head
    /// in lock mode).
    pub head: AtomicPtr<Msg>,
    /// Lock mode: the list tail.
    pub tail: AtomicPtr<Msg>,
    /// Lock mode: the spin lock.
    pub lock: AtomicU32,
    _pad: [u8; 108],
    /// Headers returned to this rank by receivers (a stack, own line).
    pub returned: AtomicPtr<Msg>,
    /// The doorbell of this rank's progress thread: a sender that waits
    /// for this rank increments it and wakes the thread (a shared futex;
    /// see `p2p::progress`). It shares the line written by other ranks.
    pub doorbell: AtomicU32,
    _pad2: [u8; 116],
}

const _: () = assert!(core::mem::size_of::<Mailbox>() == 256);

/// Pushes the chain `first ..= last` (linked through `next`) on a Treiber
/// stack with one CAS; ordering as in [`stack_push`].
#[inline]
fn stack_push_chain(top: &AtomicPtr<Msg>, first: *mut Msg, last: *mut Msg) {
    let mut old = top.load(Ordering::Relaxed);
    loop {
        // SAFETY: the chain is owned by this thread until the CAS succeeds.
        unsafe { (*last).next.store(old, Ordering::Relaxed) };
        match top.compare_exchange_weak(old, first, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return,
            Err(cur) => old = cur,
        }
    }
}

/// Pushes `m` on a Treiber stack.
///
/// Release on the successful CAS publishes everything written to `*m` (and
/// to memory it points at) before the push; RMWs on `top` form a release
/// sequence, so the consumer's Acquire swap sees every pushed header whole.
#[inline]
fn stack_push(top: &AtomicPtr<Msg>, m: *mut Msg) {
    stack_push_chain(top, m, m);
}

/// Takes a whole Treiber stack and returns it oldest-first.
#[inline]
fn stack_take_fifo(top: &AtomicPtr<Msg>, out: &mut Vec<*mut Msg>) {
    // Relaxed pre-check: an empty mailbox costs one shared-cache read.
    if top.load(Ordering::Relaxed).is_null() {
        return;
    }
    // Acquire pairs with the pushers' Release CAS (see `stack_push`).
    let mut p = top.swap(core::ptr::null_mut(), Ordering::Acquire);
    let start = out.len();
    while !p.is_null() {
        out.push(p);
        // SAFETY: `p` was published by a push we synchronised with; its
        // `next` was written before that push.
        p = unsafe { (*p).next.load(Ordering::Relaxed) };
    }
    out[start..].reverse();
}

impl Mailbox {
    /// Rings this mailbox's doorbell: wakes its owner's progress thread
    /// (`p2p::progress`), which a waiting sender asks for. Below the engine
    /// and the progress thread both: the engine rings its peers' doorbells,
    /// the progress thread sleeps on its own.
    pub fn ring(&self) {
        crate::stats::P2P_RINGS.add(1);
        self.ring_quietly();
    }

    /// [`Mailbox::ring`], not counted (a rank stopping its own thread).
    pub fn ring_quietly(&self) {
        // Release: a thread that sees the new value also sees what the ringer
        // wrote before (`progress::stop` relies on it for STOP; senders
        // publish through the queues anyway).
        self.doorbell.fetch_add(1, Ordering::Release);
        wake::futex_wake(&self.doorbell);
    }

    /// Appends `m` to this rank's global incoming queue.
    ///
    /// # Safety
    /// `m` is a valid header owned by the caller and linked nowhere.
    #[inline]
    pub unsafe fn push(&self, m: *mut Msg, lockfree: bool) {
        if lockfree {
            stack_push(&self.head, m);
            return;
        }
        // SAFETY: `m` is owned by the caller until it is linked below.
        // Relaxed: the lock's Release below publishes it.
        unsafe { (*m).next.store(core::ptr::null_mut(), Ordering::Relaxed) };
        self.acquire();
        // The lock's Acquire/Release orders these Relaxed accesses.
        let tail = self.tail.load(Ordering::Relaxed);
        if tail.is_null() {
            self.head.store(m, Ordering::Relaxed);
        } else {
            // SAFETY: `tail` is linked in this queue, which we hold locked.
            unsafe { (*tail).next.store(m, Ordering::Relaxed) };
        }
        self.tail.store(m, Ordering::Relaxed);
        self.release();
    }

    /// Moves everything queued to `out`, in arrival order.
    #[inline]
    pub fn take_all(&self, out: &mut Vec<*mut Msg>, lockfree: bool) {
        if lockfree {
            return stack_take_fifo(&self.head, out);
        }
        if self.head.load(Ordering::Relaxed).is_null() {
            return;
        }
        self.acquire();
        // Relaxed under the lock: its Acquire saw the pushers' Release.
        let mut p = self.head.swap(core::ptr::null_mut(), Ordering::Relaxed);
        self.tail.store(core::ptr::null_mut(), Ordering::Relaxed);
        self.release();
        while !p.is_null() {
            out.push(p);
            // SAFETY: the list was built under the lock we acquired after.
            p = unsafe { (*p).next.load(Ordering::Relaxed) };
        }
    }

    /// Returns a header to this (its sender's) mailbox.
    ///
    /// # Safety
    /// `m` is a valid header the caller is done with, linked nowhere.
    #[inline]
    pub unsafe fn give_back(&self, m: *mut Msg) {
        stack_push(&self.returned, m);
    }

    /// Returns several headers at once: `ms` are linked into a chain and
    /// pushed with one CAS (one cache-line transfer instead of one each).
    ///
    /// # Safety
    /// As [`Mailbox::give_back`], for each header.
    pub unsafe fn give_back_all(&self, ms: &[*mut Msg]) {
        let (Some(&first), Some(&last)) = (ms.first(), ms.last()) else {
            return;
        };
        for w in ms.windows(2) {
            // SAFETY: the headers are ours to return, not linked anywhere.
            // Relaxed: published by the Release CAS of the push.
            unsafe { (*w[0]).next.store(w[1], Ordering::Relaxed) };
        }
        stack_push_chain(&self.returned, first, last);
    }

    /// Takes every header returned to this rank (any order is fine).
    #[inline]
    pub fn take_returned(&self, out: &mut Vec<*mut Msg>) {
        stack_take_fifo(&self.returned, out);
    }

    /// Whether the global queue looks empty (Relaxed: a hint; a take
    /// that follows synchronises).
    #[inline]
    pub fn looks_empty(&self) -> bool {
        self.head.load(Ordering::Relaxed).is_null()
    }

    /// Whether no header looks returned (Relaxed, as `looks_empty`).
    #[inline]
    pub fn none_returned(&self) -> bool {
        self.returned.load(Ordering::Relaxed).is_null()
    }

    fn acquire(&self) {
        // Acquire on success: the holder's writes before its Release unlock
        // are visible to us.
        let mut spins = 0u32;
        while self
            .lock
            .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins % 64 == 0 {
                // The holder may be descheduled (oversubscribed node).
                std::thread::yield_now();
            } else {
                core::hint::spin_loop();
            }
        }
    }

    fn release(&self) {
        // Release: publishes the list updates made under the lock.
        self.lock.store(0, Ordering::Release);
    }
}

/// A header-sized piece of this process's memory for tests.
#[cfg(test)]
pub fn test_msg(tag: i32) -> *mut Msg {
    let layout = std::alloc::Layout::from_size_align(ENVELOPE + 128, 64).unwrap();
    // SAFETY: non-zero size; zeroed memory is a valid Msg.
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut Msg;
    // SAFETY: just allocated, exclusively ours.
    unsafe { (*p).tag = tag };
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn zeroed_mailbox() -> Box<Mailbox> {
        // SAFETY: all-zero bytes are an empty Mailbox (atomics and padding).
        unsafe { Box::new(core::mem::zeroed()) }
    }

    fn fifo_single_producer(lockfree: bool) {
        let mb = zeroed_mailbox();
        let msgs: Vec<_> = (0..10).map(test_msg).collect();
        let mut out = Vec::new();
        for &m in &msgs[..4] {
            // SAFETY: the test's own header, pushed once.
            unsafe { mb.push(m, lockfree) };
        }
        mb.take_all(&mut out, lockfree);
        for &m in &msgs[4..] {
            // SAFETY: the test's own header, pushed once.
            unsafe { mb.push(m, lockfree) };
        }
        mb.take_all(&mut out, lockfree);
        mb.take_all(&mut out, lockfree);
        // SAFETY: the test's own headers.
        let tags: Vec<i32> = out.iter().map(|&m| unsafe { (*m).tag }).collect();
        assert_eq!(tags, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn queues_keep_arrival_order() {
        fifo_single_producer(true);
        fifo_single_producer(false);
    }

    /// Several producers, one consumer: every message arrives exactly once
    /// and each producer's messages stay in order.
    fn mpsc(lockfree: bool) {
        struct Shared(Box<Mailbox>);
        // SAFETY: Mailbox is all atomics.
        unsafe impl Sync for Shared {}
        // SAFETY: as above.
        unsafe impl Send for Shared {}
        let mb = Arc::new(Shared(zeroed_mailbox()));
        const P: i32 = 4;
        const N: i32 = 5000;
        let producers: Vec<_> = (0..P)
            .map(|p| {
                let mb = mb.clone();
                std::thread::spawn(move || {
                    for i in 0..N {
                        // SAFETY: a fresh header, pushed once.
                        unsafe { mb.0.push(test_msg(p * N + i), lockfree) };
                    }
                })
            })
            .collect();
        let mut out = Vec::new();
        let mut last = [-1i32; P as usize];
        let mut seen = 0;
        while seen < P * N {
            out.clear();
            mb.0.take_all(&mut out, lockfree);
            for &m in &out {
                // SAFETY: published by a producer's push.
                let t = unsafe { (*m).tag };
                let (p, i) = ((t / N) as usize, t % N);
                assert!(i > last[p], "producer {p}: {i} after {}", last[p]);
                last[p] = i;
                seen += 1;
            }
        }
        for h in producers {
            h.join().unwrap();
        }
        assert_eq!(last, [N - 1; P as usize]);
    }

    #[test]
    fn lockfree_queue_is_mpsc_fifo_per_producer() {
        mpsc(true);
    }

    #[test]
    fn locked_queue_is_mpsc_fifo_per_producer() {
        mpsc(false);
    }

    #[test]
    fn returned_chains_arrive_whole() {
        let mb = zeroed_mailbox();
        let msgs: Vec<_> = (0..7).map(test_msg).collect();
        // SAFETY: the test's own headers, each returned once.
        unsafe {
            mb.give_back(msgs[0]);
            mb.give_back_all(&msgs[1..5]);
            mb.give_back_all(&[]);
            mb.give_back_all(&msgs[5..]);
        }
        let mut out = Vec::new();
        mb.take_returned(&mut out);
        out.sort();
        let mut want = msgs.clone();
        want.sort();
        assert_eq!(out, want);
    }
    #[test]
    fn returned_stack_gives_everything_back() {
        let mb = zeroed_mailbox();
        let msgs: Vec<_> = (0..5).map(test_msg).collect();
        for &m in &msgs {
            // SAFETY: the test's own header, returned once.
            unsafe { mb.give_back(m) };
        }
        let mut out = Vec::new();
        mb.take_returned(&mut out);
        assert_eq!(out, msgs);
        out.clear();
        mb.take_returned(&mut out);
        assert!(out.is_empty());
    }
}
