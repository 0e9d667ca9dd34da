//! Fast boxes: one ring of records per (sender, receiver) pair in the
//! shared heap, single producer and single consumer, for small messages.
//!
//! This is the per-pair path Open MPI's `btl/vader` and MPICH's nemesis
//! call a fastbox (Buntinas, Mercier, Gropp, "Design and evaluation of
//! Nemesis", CCGrid 2006): a send is plain stores into the ring and a
//! receive plain loads, so a message costs the transfer of the lines it
//! lies on and nothing else. heapmpi's rings live in the one heap every
//! local rank maps at one address (Hybrid MPI, Friedley et al., SC13), so
//! a ring is opened by handing its address over in a header
//! (`queue::F_RING_OPEN`). [`Ring`] says how records are laid out and why
//! stale bytes never look ready; [`Producer`] and [`Consumer`] are the two
//! ends.

use core::sync::atomic::{AtomicU64, Ordering};

/// Bytes of a fast-box record's header; the payload follows it.
pub const REC_HDR: usize = 32;
/// Fast-box records start on 16-byte boundaries: small records share cache
/// lines, so a stream of them costs fewer line transfers than messages.
const REC_ALIGN: usize = 16;
/// A cache line.
const LINE: usize = 64;

/// The control line at the start of a fast box; the records follow it.
///
/// A fast box is a ring of records from one sender to one receiver (single
/// producer, single consumer), the per-pair path that Open MPI and MPICH
/// call a fastbox. A send costs plain stores and a receive plain loads: no
/// read-modify-write on a line the other side owns, so the only cache-line
/// transfers are the record itself and, once per lap, `rpos`.
///
/// Positions are absolute byte counts. A record at position `p` lies at
/// offset `p % size` (`size` a power of two); if it reaches or crosses the end of the ring it runs
/// on into the slack after it (room for the largest record) and the next
/// record starts the next lap at offset 0 (see [`next_pos`]).
///
/// A record is ready when its `stamp` equals its position + 1. Stale bytes
/// of an earlier lap (old stamps or payload) must never look ready, so the
/// sender makes sure the stamp slot of the position after each record it
/// publishes holds 0 or an old stamp (a smaller position + 1, never this
/// one + 1) before the receiver can look there: if that slot lies in the
/// line the record ends in, it zeroes it (the line is its own already);
/// if it starts a new line, it zeroes it only when its own record of an
/// earlier lap left payload there ([`Producer`] remembers which lines), so
/// that in a stream of records it does not take the next line from a
/// receiver polling it, one more line transfer per record. The ring starts
/// zeroed, and the sender never writes a record whose end, plus that one
/// slot, would pass `rpos + size`.
#[repr(C, align(64))]
pub struct Ring {
    /// The receiver's position: everything before it has been read.
    /// Written by the receiver only (Release), read by the sender (Acquire)
    /// when its cached copy says the ring is full.
    pub rpos: AtomicU64,
    /// Ring bytes (a power of two, at least 128), set before the ring is
    /// announced.
    pub size: u64,
    _pad: [u8; 48],
}

/// A fast-box record header.
#[repr(C)]
pub struct Rec {
    /// Position + 1 once the record is complete (Release by the sender).
    pub stamp: AtomicU64,
    /// Communicator id.
    pub comm_id: u64,
    /// Sender's rank in the communicator.
    pub src: i32,
    /// Tag.
    pub tag: i32,
    /// Payload bytes.
    pub len: u32,
    /// The message's sequence number in the pair (see [`super::queue::Msg::seq`]).
    pub seq: u32,
}

const _: () = assert!(core::mem::size_of::<Ring>() == 64);
const _: () = assert!(core::mem::size_of::<Rec>() == REC_HDR);

/// Payloads from this size on start on a cache-line boundary (the header
/// keeps the record's position; the bytes between are padding): copying a
/// large payload in and out with line-aligned stores and loads measured
/// 11-17% more messages per second at 1-2 KiB than at the 16-byte offset
/// after the header, where every 64-byte store straddles two lines. Small
/// payloads stay packed after their header.
pub const ALIGNED_BODY_MIN: usize = 256;

/// Where the payload of a record of `len` bytes at position `pos` starts,
/// from the record's start.
#[inline]
pub fn body_offset(pos: u64, len: usize) -> usize {
    if len < ALIGNED_BODY_MIN {
        REC_HDR
    } else {
        // Positions and addresses agree modulo a line: the ring's records
        // start on a line boundary and its size is a multiple of a line.
        let p = (pos % LINE as u64) as usize;
        (p + REC_HDR).next_multiple_of(LINE) - p
    }
}

/// Bytes a record with `len` payload bytes takes at position `pos`.
#[inline]
pub fn record_len(pos: u64, len: usize) -> usize {
    (body_offset(pos, len) + len).next_multiple_of(REC_ALIGN)
}

/// The most bytes a record with `len` payload bytes takes, wherever it is.
pub fn record_len_max(len: usize) -> usize {
    (0..LINE as u64)
        .step_by(REC_ALIGN)
        .map(|p| record_len(p, len))
        .max()
        .unwrap_or(0)
}

/// The position after a record of `rlen` bytes at `pos` in a ring of
/// `size` bytes (a power of two).
#[inline]
pub fn next_pos(size: u64, pos: u64, rlen: u64) -> u64 {
    let off = pos & (size - 1);
    if off + rlen >= size {
        pos - off + size
    } else {
        pos + rlen
    }
}

impl Ring {
    /// Bytes to allocate for a ring of `size` bytes carrying payloads of up
    /// to `max_payload` bytes.
    pub fn alloc_bytes(size: usize, max_payload: usize) -> usize {
        core::mem::size_of::<Ring>() + size + record_len_max(max_payload)
    }

    /// Initialises a ring in `mem` (`alloc_bytes` long, 64-byte aligned).
    ///
    /// # Safety
    /// `mem` is exclusively the caller's, valid for `alloc_bytes` bytes.
    pub unsafe fn init(mem: *mut u8, size: usize) -> *mut Ring {
        debug_assert!(size.is_power_of_two() && size >= 2 * LINE);
        let r = mem as *mut Ring;
        // SAFETY: per the contract; all-zero bytes are a valid Ring and an
        // empty first stamp. The announcement of the ring (a Release push)
        // publishes these writes.
        unsafe {
            core::ptr::write_bytes(mem, 0, core::mem::size_of::<Ring>() + size);
            (*r).size = size as u64;
        }
        r
    }

    /// The record at `pos` in a ring of `size` bytes. The sender passes its
    /// own copy of the size: reading `self.size` would fetch the line the
    /// receiver writes `rpos` to, a cache-line transfer per message.
    #[inline]
    fn rec(ring: *const Ring, size: u64, pos: u64) -> *mut Rec {
        let off = (pos & (size - 1)) as usize;
        (ring as *mut u8).wrapping_add(core::mem::size_of::<Ring>() + off) as *mut Rec
    }

    /// Whether a record is ready at the receiver's position (a hint for
    /// waiters that do not hold the receiver's state; Relaxed).
    #[inline]
    pub fn ready_hint(&self) -> bool {
        let pos = self.rpos.load(Ordering::Relaxed);
        // SAFETY: `rec` of a position is inside the ring's allocation.
        unsafe {
            (*Ring::rec(self, self.size, pos))
                .stamp
                .load(Ordering::Relaxed)
                == pos + 1
        }
    }
}

/// The sender's end of a fast box (private to the sender).
pub struct Producer {
    ring: *mut Ring,
    size: u64,
    wpos: u64,
    /// Last `rpos` read from the ring.
    rcache: u64,
    /// One bit per line of the ring: set while the slot at the line's start
    /// holds bytes of a record that began in an earlier line (payload or
    /// header fields, which could look like any stamp), clear while it holds
    /// 0 or a stamp.
    stale: Box<[u64]>,
}

impl Producer {
    /// The sender's end of a ring just made by [`Ring::init`].
    ///
    /// # Safety
    /// `ring` was initialised by [`Ring::init`] and stays valid.
    pub unsafe fn new(ring: *mut Ring) -> Producer {
        // SAFETY: per the contract.
        let size = unsafe { (*ring).size };
        Producer {
            ring,
            size,
            wpos: 0,
            rcache: 0,
            // The ring starts zeroed.
            stale: vec![0u64; (size as usize / LINE).div_ceil(64)].into_boxed_slice(),
        }
    }

    /// The ring.
    pub fn ring(&self) -> *mut Ring {
        self.ring
    }

    /// Writes a record if there is room: the header fields, then the
    /// payload through `fill` (given where `len` bytes go; it may fail, and
    /// then nothing is published). Returns whether the record was sent.
    ///
    /// # Safety
    /// The ring is valid, this is its only producer, and `len` is at most
    /// the payload size the ring was allocated for.
    pub unsafe fn push(
        &mut self,
        comm_id: u64,
        src: i32,
        tag: i32,
        seq: u32,
        len: usize,
        fill: impl FnOnce(*mut u8) -> bool,
    ) -> bool {
        let body_off = body_offset(self.wpos, len);
        let rlen = (body_off + len).next_multiple_of(REC_ALIGN) as u64;
        let next = next_pos(self.size, self.wpos, rlen);
        // The record and the next position's stamp slot must stay clear of
        // records the receiver has not read yet.
        let end = next.max(self.wpos + rlen) + REC_ALIGN as u64;
        if end > self.rcache + self.size {
            // SAFETY: the ring is valid. Acquire pairs with the receiver's
            // Release store of `rpos`: its reads of the records before it
            // happen-before we overwrite them.
            self.rcache = unsafe { (*self.ring).rpos.load(Ordering::Acquire) };
            if end > self.rcache + self.size {
                return false;
            }
        }
        let rec = Ring::rec(self.ring, self.size, self.wpos);
        // Before `fill` writes anything: lines it reaches past the record's
        // first start with payload from now on, even if it fails midway.
        self.mark_payload_lines(self.wpos, rlen);
        // SAFETY: the ring is valid and positions map inside its allocation;
        // the room checked above is ours until we publish; the payload area
        // of `len` bytes fits (slack covers the last record of a lap). Plain
        // writes: published by the Release store of the stamp.
        unsafe {
            let body = (rec as *mut u8).add(body_off);
            if !fill(body) {
                return false;
            }
            (*rec).comm_id = comm_id;
            (*rec).src = src;
            (*rec).tag = tag;
            (*rec).len = len as u32;
            (*rec).seq = seq;
            let after = Ring::rec(self.ring, self.size, next);
            if next % LINE as u64 != 0 || self.take_stale(next) {
                // Relaxed: ordered before the Release below, and the
                // receiver reads this stamp only after acquiring ours.
                (*after).stamp.store(0, Ordering::Relaxed);
            }
            // Release: the fields, payload and the cleared next stamp are
            // visible to a receiver that acquires this stamp.
            (*rec).stamp.store(self.wpos + 1, Ordering::Release);
        }
        if self.wpos % LINE as u64 == 0 {
            // Its start slot now holds a stamp.
            self.set_stale(self.line(self.wpos), false);
        }
        self.wpos = next;
        // Ask for the lines a few records ahead for writing now, so their
        // ownership arrives while we work instead of stalling our stores
        // (each ring line was last read by the receiver). Only lines the
        // receiver is known to be done with, and past the reach of its own
        // prefetches (at most `PREFETCH_AHEAD` past a record it read, so
        // short of our position + 256), lest the two take a line from each
        // other.
        // Small records only: a large one is a long run of stores whose
        // ownership requests the CPU overlaps by itself (taking lines early
        // measured 15% slower at 1.5 KiB).
        let ahead = self.wpos + WRITE_AHEAD[WRITE_AHEAD.len() - 1] + LINE as u64;
        if rlen <= PREFETCH_MAX_RECORD && ahead <= self.rcache + self.size {
            for d in WRITE_AHEAD {
                prefetch_write(Ring::rec(self.ring, self.size, self.wpos + d));
            }
        }
        true
    }

    /// Marks the lines a record of `rlen` bytes at `pos` reaches past its
    /// first: they start with its payload (lines in the slack past the
    /// ring's end are never a record's start, so they are not tracked).
    #[inline]
    fn mark_payload_lines(&mut self, pos: u64, rlen: u64) {
        let off = (pos & (self.size - 1)) as usize;
        let lines = self.size as usize / LINE;
        let (mut a, b) = (
            off / LINE + 1,
            (off + rlen as usize).div_ceil(LINE).min(lines),
        );
        // Whole words of bits at a time: a large record covers dozens of
        // lines, and a bit at a time was measurable at 2 KiB.
        while a < b {
            let n = (b - a).min(64 - a % 64);
            self.stale[a / 64] |= (u64::MAX >> (64 - n)) << (a % 64);
            a += n;
        }
    }

    /// The line of the ring position `pos` falls in.
    #[inline]
    fn line(&self, pos: u64) -> usize {
        (pos & (self.size - 1)) as usize / LINE
    }

    /// Whether the line starting at position `pos` holds stale payload at
    /// its start; the caller zeroes that slot, so it is clear afterwards.
    #[inline]
    fn take_stale(&mut self, pos: u64) -> bool {
        let l = self.line(pos);
        let was = self.stale[l / 64] >> (l % 64) & 1 != 0;
        self.set_stale(l, false);
        was
    }

    #[inline]
    fn set_stale(&mut self, l: usize, on: bool) {
        let bit = 1u64 << (l % 64);
        if on {
            self.stale[l / 64] |= bit;
        } else {
            self.stale[l / 64] &= !bit;
        }
    }
}

/// The receiver's end of a fast box (private to the receiver).
pub struct Consumer {
    ring: *const Ring,
    size: u64,
    rpos: u64,
}

impl Consumer {
    /// The receiver's end of a ring announced to it.
    ///
    /// # Safety
    /// `ring` was initialised and published to us (Acquire) by its sender.
    pub unsafe fn new(ring: *const Ring) -> Consumer {
        Consumer {
            ring,
            // SAFETY: per the contract.
            size: unsafe { (*ring).size },
            rpos: 0,
        }
    }

    /// The ring.
    pub fn ring(&self) -> *const Ring {
        self.ring
    }

    /// The next record, if it is ready. It stays valid until [`Consumer::pop`].
    #[inline]
    pub fn peek(&self) -> Option<&Rec> {
        // SAFETY: the ring is valid; positions map inside it.
        let rec = unsafe { &*Ring::rec(self.ring, self.size, self.rpos) };
        // Acquire pairs with the sender's Release store of the stamp.
        if rec.stamp.load(Ordering::Acquire) != self.rpos + 1 {
            return None;
        }
        // A ready record means the sender is ahead: the lines after it are
        // likely written too. Fetching them now overlaps their transfers
        // with our work on this record, where reading each stamp in turn
        // waits for one transfer per line (measured: most of a streaming
        // receiver's time). Not done when nothing is ready, so a receiver
        // that keeps up does not pull lines the sender is about to write.
        // The record's own further lines first, all at once (the copy out
        // would otherwise fetch them one after the other: the latency of
        // a message of a few lines).
        if (REC_HDR + rec.len as usize).wrapping_sub(LINE + 1) < 2 * LINE {
            // 2 or 3 lines long: the other two (a third past a 2-line
            // record is a harmless fetch of the next one).
            let at = rec as *const Rec as *const u8;
            prefetch(at.wrapping_add(LINE));
            prefetch(at.wrapping_add(2 * LINE));
        }
        for ahead in PREFETCH_AHEAD {
            prefetch(Ring::rec(self.ring, self.size, self.rpos + ahead));
        }
        Some(rec)
    }

    /// Releases the record `peek` returned (whose payload is `len` bytes).
    #[inline]
    pub fn pop(&mut self, len: usize) {
        self.rpos = next_pos(self.size, self.rpos, record_len(self.rpos, len) as u64);
        // SAFETY: the ring is valid. Release: our reads of the record happen
        // before the sender reuses its room (it acquires `rpos`).
        unsafe { (*self.ring).rpos.store(self.rpos, Ordering::Release) };
    }
}

/// How far past a ready record (in bytes) its consumer fetches ahead: two
/// lines, at three and four lines' distance, so that a line is fetched a
/// few records before it is read whatever the record size.
const PREFETCH_AHEAD: [u64; 2] = [192, 256];

/// Largest record (bytes, header included) after which a producer still
/// takes lines ahead for writing (see `Producer::push`).
const PREFETCH_MAX_RECORD: u64 = 256;

/// How far past its position (in bytes) a producer takes lines for
/// writing: beyond `PREFETCH_AHEAD`'s reach (see `Producer::push`).
const WRITE_AHEAD: [u64; 2] = [320, 384];

/// Asks the CPU to start taking the cache line at `p` for writing
/// (`prefetchw`; a hint like [`prefetch`]).
#[inline(always)]
fn prefetch_write<T>(p: *const T) {
    // `prefetchw` (0F 0D /1) is a no-op where the CPU lacks it; written
    // out since the intrinsic needs the `prfchw` target feature at build time.
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally and cannot fault.
    unsafe {
        core::arch::asm!("prefetchw [{}]", in(reg) p, options(nostack, preserves_flags, readonly))
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the CPU to start loading the cache line at `p` (a hint: no fault,
/// no effect on correctness, whatever `p` is).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally and cannot fault.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The payload of a ready record (its stamp is its position + 1).
#[inline]
pub fn rec_body(r: &Rec) -> *const u8 {
    // Relaxed: the caller acquired this stamp already.
    let pos = r.stamp.load(Ordering::Relaxed) - 1;
    (r as *const Rec as *const u8).wrapping_add(body_offset(pos, r.len as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring in this process's memory for tests (leaked), full of garbage:
    /// stale bytes must never look like a record.
    fn test_ring(size: usize, max: usize) -> *mut Ring {
        let layout = std::alloc::Layout::from_size_align(Ring::alloc_bytes(size, max), 64).unwrap();
        // SAFETY: non-zero size; the memory is exclusively the test's.
        unsafe {
            let mem = std::alloc::alloc(layout);
            core::ptr::write_bytes(mem, 0xa5, layout.size());
            Ring::init(mem, size)
        }
    }

    /// Payload length of the `i`-th test record.
    fn test_len(i: u32, max: usize) -> usize {
        (i as usize * 37) % (max + 1)
    }

    /// Fills a payload with traps: every word holds the stamp a record at
    /// the same place one lap later would have, so a consumer that trusted
    /// stale bytes would take garbage for a record.
    fn fill_traps(out: *mut u8, pos: u64, len: usize, size: u64) {
        for w in 0..len / 8 {
            let v = pos + (body_offset(pos, len) + 8 * w) as u64 + size + 1;
            // SAFETY: `len` bytes of room at `out`.
            unsafe { (out as *mut u64).add(w).write_unaligned(v) };
        }
        // SAFETY: as above.
        unsafe { core::ptr::write_bytes(out.add(len / 8 * 8), 0, len % 8) };
    }

    /// Pushes record `i` if there is room.
    fn push_test(prod: &mut Producer, i: u32, max: usize) -> bool {
        let len = test_len(i, max);
        let (pos, size) = (prod.wpos, prod.size);
        // SAFETY: the ring's only producer; `len ≤ max`.
        unsafe {
            prod.push(7, i as i32, 3, i, len, |out| {
                fill_traps(out, pos, len, size);
                true
            })
        }
    }

    /// Takes record `i` if it is ready, checking it.
    fn pop_test(cons: &mut Consumer, i: u32, max: usize) -> bool {
        let Some(rec) = cons.peek() else {
            return false;
        };
        assert_eq!(
            (rec.comm_id, rec.src, rec.tag, rec.seq),
            (7, i as i32, 3, i)
        );
        let len = rec.len as usize;
        assert_eq!(len, test_len(i, max));
        let pos = cons.rpos;
        let mut want = vec![0u8; len];
        fill_traps(want.as_mut_ptr(), pos, len, cons.size);
        // SAFETY: the record holds `len` payload bytes.
        let got = unsafe { core::slice::from_raw_parts(rec_body(rec), len) };
        assert_eq!(got, &want[..], "record {i}");
        cons.pop(len);
        true
    }

    #[test]
    fn fast_box_carries_records_in_order_across_threads() {
        for (size, max, n) in [(1024usize, 200usize, 200_000u32), (4096, 992, 50_000)] {
            struct P(*mut Ring);
            // SAFETY: the ring is shared memory by design (atomics publish).
            unsafe impl Send for P {}
            let ring = test_ring(size, max);
            let p = P(ring);
            let producer = std::thread::spawn(move || {
                let p = p;
                // SAFETY: initialised above.
                let mut prod = unsafe { Producer::new(p.0) };
                let mut full = 0u64;
                let mut i = 0;
                while i < n {
                    if push_test(&mut prod, i, max) {
                        i += 1;
                    } else {
                        full += 1;
                        std::thread::yield_now();
                    }
                }
                full
            });
            // SAFETY: initialised above; the only consumer.
            let mut cons = unsafe { Consumer::new(ring) };
            let mut i = 0;
            while i < n {
                if pop_test(&mut cons, i, max) {
                    i += 1;
                } else {
                    std::hint::spin_loop();
                }
            }
            assert!(cons.peek().is_none());
            // Far more traffic than the ring holds: it must have filled up.
            assert!(producer.join().unwrap() > 0);
        }
    }

    #[test]
    fn fast_box_refuses_when_full_and_reuses_its_room() {
        for (size, max) in [(1024usize, 200usize), (2048, 0), (1024, 224)] {
            let ring = test_ring(size, max);
            // SAFETY: initialised above.
            let mut prod = unsafe { Producer::new(ring) };
            // SAFETY: initialised above; the only consumer.
            let mut cons = unsafe { Consumer::new(ring) };
            let (mut sent, mut got) = (0u32, 0u32);
            for round in 0..50 {
                let before = sent;
                while push_test(&mut prod, sent, max) {
                    sent += 1;
                }
                // Something always fits in an empty ring, and never more
                // than the ring holds.
                assert!(sent > before || got < sent, "round {round}");
                let held: usize = (got..sent).map(|i| record_len_max(test_len(i, max))).sum();
                assert!(held <= size + record_len_max(max));
                // Take part of it (some rounds all), then refill.
                let take = if round % 3 == 0 {
                    sent - got
                } else {
                    (sent - got).div_ceil(2)
                };
                for _ in 0..take {
                    assert!(pop_test(&mut cons, got, max));
                    got += 1;
                }
            }
            while pop_test(&mut cons, got, max) {
                got += 1;
            }
            assert_eq!(got, sent);
            assert!(
                sent as usize * 64 > 10 * size,
                "the test must wrap many laps"
            );
        }
    }

    #[test]
    fn fast_box_ignores_what_a_failed_fill_left() {
        // A fill that fails after writing leaves, at every 16-byte slot,
        // the very stamp a record there would carry in this lap: if the
        // sender let such a slot become the next record's start unzeroed,
        // the consumer would take it for a record.
        for (size, max) in [(1024usize, 200usize), (2048, 992)] {
            let ring = test_ring(size, max);
            // SAFETY: initialised above.
            let mut prod = unsafe { Producer::new(ring) };
            // SAFETY: initialised above; the only consumer.
            let mut cons = unsafe { Consumer::new(ring) };
            let (mut sent, mut got) = (0u32, 0u32);
            for round in 0..2000u32 {
                let pos = prod.wpos;
                // SAFETY: the ring's only producer; `max` fits.
                let pushed = unsafe {
                    prod.push(7, 0, 3, 0, max, |out| {
                        for k in 0..max / 16 {
                            let slot = pos + (body_offset(pos, max) + 16 * k) as u64;
                            // SAFETY: `max` bytes of room at `out`.
                            (out.add(16 * k) as *mut u64).write_unaligned(slot + 1);
                        }
                        false
                    })
                };
                assert!(!pushed);
                // A few records of any size, then take them all.
                for _ in 0..1 + round % 4 {
                    if push_test(&mut prod, sent, max) {
                        sent += 1;
                    }
                }
                while pop_test(&mut cons, got, max) {
                    got += 1;
                }
                assert_eq!(got, sent, "round {round}");
            }
            assert!(
                sent as usize * 64 > 10 * size,
                "the test must wrap many laps"
            );
        }
    }

    #[test]
    fn fast_box_positions_wrap_into_the_slack() {
        let size = 1024u64;
        assert_eq!(next_pos(size, 0, 64), 64);
        assert_eq!(next_pos(size, 960, 64), 1024);
        assert_eq!(next_pos(size, 896, 256), 1024);
        assert_eq!(next_pos(size, 1024 + 960, 128), 2048);
        assert_eq!(record_len(0, 0), 32);
        assert_eq!(record_len(16, 1), 48);
        assert_eq!(record_len(0, 32), 64);
        assert_eq!(record_len(48, 33), 80);
        // Large payloads start on a line boundary, wherever the record is.
        for (pos, off) in [
            (0u64, 64usize),
            (16, 48),
            (32, 32),
            (48, 80),
            (1024 + 16, 48),
        ] {
            assert_eq!(body_offset(pos, ALIGNED_BODY_MIN), off);
            assert_eq!((pos as usize + off) % LINE, 0);
        }
        assert_eq!(body_offset(48, ALIGNED_BODY_MIN - 1), REC_HDR);
        assert_eq!(record_len(48, 256), 336);
        assert_eq!(record_len_max(256), 336);
    }
}
