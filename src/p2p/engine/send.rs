//! The sending half of the engine.
//!
//! The protocols are those of the Hybrid MPI design (Friedley et al.,
//! "Hybrid MPI: Efficient Message Passing for Multi-core Systems", SC13):
//! *immediate* (payload inline after the header, the send completes at
//! once), *single copy* (the header points at the send buffer, or at a
//! shared staging copy when the buffer is outside the shared heap, and the
//! receiver copies once) and *synergistic* (see `synergy`). Small messages
//! may instead go through the sender's fast box towards the receiver
//! (`fastbox::Ring`). Also here: stage-on-stall (a standard send the receiver
//! is late for is copied to a shared buffer, as an eager protocol would)
//! and `reclaim`, which takes back the headers receivers return.

use core::sync::atomic::{AtomicBool, Ordering};

use super::*;

impl Engine {
    // ----- sending -----

    /// Starts a send to a local peer. `req` is the slot to use if it does
    /// not complete at once (persistent requests pass theirs).
    ///
    /// # Safety
    /// The send buffer holds `count` elements of the datatype and stays
    /// valid until the send completes.
    #[allow(clippy::result_unit_err)]
    pub unsafe fn send(&mut self, s: &SendSpec, req: Option<u32>) -> Result<Sent, ()> {
        let bytes = dt::packed_size(s.count, &s.dt);
        if s.dt.contig {
            heap::check_buffer(s.buf, bytes, true, "MPI send");
        }
        let inline = bytes <= self.tune.immediate_max;
        // A standard send the fast box had no room for (back-pressure).
        let mut box_full = false;
        if inline && bytes <= self.tune.fastbox_max && s.mode != Mode::Sync {
            // SAFETY: the caller's contract.
            match unsafe { self.ring_send(s, bytes) } {
                Ok(true) => return Ok(Sent::Done),
                Ok(false) => {
                    box_full =
                        s.mode == Mode::Standard && self.tx[s.dest_local as usize].ring.is_some()
                }
                Err(()) => return Err(()),
            }
        }
        // Only for a rendezvous: inline messages never read it (off their hot path).
        let direct =
            !inline && s.dt.contig && s.mode != Mode::Buffered && heap::in_region(s.buf, bytes);
        // A derived datatype laid out as a plan over a buffer in the shared
        // heap: the receiver copies straight from it (see `dt::plan`). From
        // the smallest message not sent inline: decoding the datatype (a
        // few MPI calls) costs less than packing and unpacking it there
        // (osu_p2p latency -v, 2-16 KiB: 0.7-2 us against 1-15 us).
        let plan = if !inline && !s.dt.contig && s.mode != Mode::Buffered {
            dt::plan::of(s.dtype, s.count).filter(|p| {
                let (lo, hi) = p.span();
                heap::in_region(
                    s.buf.wrapping_offset(lo as isize),
                    hi.wrapping_sub(lo) as usize,
                )
            })
        } else {
            None
        };
        let total = ENVELOPE
            + if inline {
                bytes
            } else {
                core::mem::size_of::<Rendezvous>()
                    + if plan.is_some() {
                        core::mem::size_of::<dt::plan::Plan>()
                    } else {
                        0
                    }
            };
        let m = self.get_header(total);
        // SAFETY: `m` is a fresh header of ours (not in any queue yet).
        // Its fields are written Relaxed: nobody sees it before the Release
        // push at the end (see `Msg`).
        let h = unsafe { &mut *m };
        h.comm_id = s.comm_id;
        h.src = s.me;
        h.tag = s.tag;
        h.src_local = self.me_local as u16;
        h.len = bytes as u64;
        h.pid = self.pid;
        h.sreq.store(0, Ordering::Relaxed);
        let mut flags = 0;
        let mut pending = s.mode == Mode::Sync;
        if inline {
            flags |= F_INLINE;
            // SAFETY: the header has room for `bytes` after the envelope;
            // the caller guarantees the send buffer.
            unsafe { Self::copy_in(s, h.body(), bytes)? };
            h.data.store(h.body() as u64, Ordering::Relaxed);
            stats::P2P_IMMEDIATE.add(1);
            stats::P2P_IMMEDIATE_BYTES.add(bytes as u64);
        } else {
            let r = h.rdv();
            for a in [
                &r.dst,
                &r.copy_len,
                &r.block,
                &r.nblocks,
                &r.next_block,
                &r.blocks_done,
                &r.sender_blocks,
            ] {
                a.store(0, Ordering::Relaxed);
            }
            r.state.store(S_WAITING, Ordering::Relaxed);
            r.go.store(0, Ordering::Relaxed);
            if direct {
                h.data.store(s.buf as u64, Ordering::Relaxed);
                pending = true;
            } else if let Some(p) = plan {
                // SAFETY: the header was allocated with room for the plan
                // after the rendezvous line; nobody sees it before the push.
                unsafe { h.plan().write(p) };
                flags |= F_PLAN;
                h.data.store(s.buf as u64, Ordering::Relaxed);
                pending = true;
                stats::P2P_PLANNED.add(1);
            } else {
                let stage = heap::alloc_shared(64, bytes);
                if !stage.is_null() {
                    // SAFETY: `stage` has room for `bytes`.
                    if unsafe { Self::copy_in(s, stage, bytes) }.is_err() {
                        // SAFETY: ours, unused.
                        unsafe { heap::free(stage) };
                        self.put_header(m);
                        return Err(());
                    }
                    flags |= F_STAGED;
                    h.data.store(stage as u64, Ordering::Relaxed);
                    stats::P2P_STAGED.add(1);
                } else if s.dt.contig {
                    flags |= F_CMA;
                    h.data.store(s.buf as u64, Ordering::Relaxed);
                    pending = true;
                    stats::P2P_CMA.add(1);
                } else {
                    let mut private = vec![0u8; bytes].into_boxed_slice();
                    // SAFETY: `private` has room for `bytes`.
                    if unsafe { Self::copy_in(s, private.as_mut_ptr(), bytes) }.is_err() {
                        self.put_header(m);
                        return Err(());
                    }
                    flags |= F_CMA | F_PRIVATE_STAGED;
                    h.data
                        .store(Box::into_raw(private) as *mut u8 as u64, Ordering::Relaxed);
                    pending = true;
                    stats::P2P_CMA.add(1);
                }
            }
            if flags & (F_CMA | F_PLAN) == 0 && bytes >= self.tune.synergy_min {
                flags |= F_SYNERGY;
                stats::P2P_SYNERGY.add(1);
                stats::P2P_SYNERGY_BYTES.add(bytes as u64);
            } else {
                stats::P2P_SINGLE.add(1);
                stats::P2P_SINGLE_BYTES.add(bytes as u64);
            }
        }
        if s.mode == Mode::Sync {
            flags |= F_SYNC;
        }
        if box_full {
            flags |= F_ACK;
            pending = true;
        }
        h.flags.store(flags, Ordering::Relaxed);
        let mut slot = None;
        if pending {
            let i = match req {
                Some(i) => i,
                None => match self.new_req(s.comm, State::Op(Op::Posted)) {
                    Some(i) => i,
                    None => {
                        self.put_header(m);
                        return Err(());
                    }
                },
            };
            h.sreq.store(i as u64 + 1, Ordering::Relaxed);
            let r = &mut self.reqs[i as usize];
            r.state = State::Op(Op::Send {
                msg: m,
                stallable: flags & F_ACK != 0
                    || (s.mode == Mode::Standard
                        && flags & (F_STAGED | F_CMA | F_INLINE) == 0
                        && bytes <= self.tune.eager_max),
                since: 0,
            });
            r.ext.peer = s.dest_local + 1;
            self.tx[s.dest_local as usize].waiting += 1;
            slot = Some(i);
        }
        if flags & F_SYNERGY != 0 {
            self.helpable.push(m);
        }
        let tx = &mut self.tx[s.dest_local as usize];
        h.seq = tx.seq;
        tx.seq = tx.seq.wrapping_add(1);
        // SAFETY: `m` is a complete header of ours, linked nowhere.
        unsafe { self.mailbox(s.dest_local).push(m, self.tune.lockfree) };
        Ok(match slot {
            Some(i) => Sent::Pending(i),
            None => Sent::Done,
        })
    }

    /// Sends an immediate message through our fast box to its destination,
    /// opening the box on first use. `Ok(false)`: no room (or no box), the
    /// caller sends through the global queue.
    ///
    /// # Safety
    /// As [`Engine::send`].
    pub(super) unsafe fn ring_send(&mut self, s: &SendSpec, bytes: usize) -> Result<bool, ()> {
        let dl = s.dest_local as usize;
        if self.tx[dl].ring.is_none() && !self.open_tx(s.dest_local) {
            return Ok(false);
        }
        let mut failed = false;
        let tx = &mut self.tx[dl];
        let seq = tx.seq;
        let prod = tx.ring.as_mut().expect("opened above");
        // SAFETY: our ring, we are its only producer (under the engine
        // lock); `bytes ≤ fastbox_max`, the payload size it was made for.
        let sent = unsafe {
            prod.push(s.comm_id, s.me, s.tag, seq, bytes, |out| {
                // SAFETY: room for `bytes` at `out`; the caller's buffer.
                failed = Self::copy_in(s, out, bytes).is_err();
                !failed
            })
        };
        if failed {
            return Err(());
        }
        if sent {
            tx.seq = seq.wrapping_add(1);
            stats::P2P_IMMEDIATE.add(1);
            stats::P2P_IMMEDIATE_BYTES.add(bytes as u64);
            stats::P2P_FASTBOX.add(1);
        }
        Ok(sent)
    }

    /// Opens our fast box towards local rank `dest`: allocates it in the
    /// shared heap and announces it through `dest`'s global queue (before any
    /// record, so `dest` knows the box before it needs it).
    pub(super) fn open_tx(&mut self, dest: u32) -> bool {
        if self.tx[dest as usize].no_ring {
            return false;
        }
        let bytes = Ring::alloc_bytes(self.tune.fastbox_size, self.tune.fastbox_max);
        let mem = heap::alloc_shared(64, bytes);
        let m = if mem.is_null() {
            core::ptr::null_mut()
        } else {
            self.pool.get(ENVELOPE)
        };
        if m.is_null() {
            if !mem.is_null() {
                // SAFETY: ours, never published.
                unsafe { heap::free(mem) };
            }
            self.tx[dest as usize].no_ring = true;
            return false;
        }
        // SAFETY: `mem` is ours, `bytes` long, 64-byte aligned.
        let ring = unsafe { Ring::init(mem, self.tune.fastbox_size) };
        // SAFETY: a fresh header of ours; published by the Release push.
        let h = unsafe { &mut *m };
        h.comm_id = 0;
        h.src = -1;
        h.tag = -1;
        h.src_local = self.me_local as u16;
        h.len = 0;
        h.pid = self.pid;
        h.seq = 0;
        h.sreq.store(0, Ordering::Relaxed);
        h.flags.store(F_RING_OPEN, Ordering::Relaxed);
        h.data.store(ring as u64, Ordering::Relaxed);
        // SAFETY: a complete header of ours, linked nowhere.
        unsafe { self.mailbox(dest).push(m, self.tune.lockfree) };
        // SAFETY: initialised above, in the shared region for good.
        self.tx[dest as usize].ring = Some(unsafe { Producer::new(ring) });
        true
    }

    /// Copies or packs the send data into `out` (`bytes` long).
    pub(super) unsafe fn copy_in(s: &SendSpec, out: *mut u8, bytes: usize) -> Result<(), ()> {
        if bytes == 0 {
            return Ok(());
        }
        if s.dt.contig {
            // SAFETY: caller's contract: `bytes` readable at `buf`, room at `out`.
            unsafe { core::ptr::copy_nonoverlapping(s.buf, out, bytes) };
            Ok(())
        } else {
            // SAFETY: as above, through the real MPI's packer.
            if unsafe { dt::pack(s.buf, s.count, s.dtype, out, bytes, s.comm) } {
                Ok(())
            } else {
                Err(())
            }
        }
    }

    /// A header of `total` bytes from our pool; when the shared heap is
    /// exhausted, waits for receivers to return some (warning once per
    /// process), ringing them now and then in case one sits in the real MPI.
    pub(super) fn get_header(&mut self, total: usize) -> *mut Msg {
        static WARNED: AtomicBool = AtomicBool::new(false);
        let mut spins = 0u32;
        loop {
            let m = self.pool.get(total);
            if !m.is_null() {
                return m;
            }
            // Relaxed: only decides who prints the warning.
            if !WARNED.swap(true, Ordering::Relaxed) {
                crate::eprint_noalloc!(
                    "heapmpi: warning: no shared memory left for message headers; waiting for \
                     receivers to return some"
                );
            }
            self.progress();
            if spins % 256 == 0 {
                self.ring_all();
            }
            spins = spins.wrapping_add(1);
            std::thread::yield_now();
        }
    }

    pub(super) fn put_header(&mut self, m: *mut Msg) {
        self.pool.put(m);
    }

    /// Stage-on-stall: copy a pending standard send into a shared buffer if
    /// the receiver has not taken it yet, completing the send.
    pub fn try_stage(&mut self, i: u32) -> bool {
        let State::Op(Op::Send {
            msg: m,
            stallable: true,
            ..
        }) = self.reqs[i as usize].state
        else {
            return false;
        };
        // SAFETY: our header, still out (the receiver has not returned it:
        // the request would be done).
        let h = unsafe { &*m };
        // Relaxed: only this process writes its header's flags, and F_ACK
        // is set before the header is published and never cleared.
        if h.flags.load(Ordering::Relaxed) & F_ACK != 0 {
            // The payload is inline: the send completes now and the header
            // is recycled whenever it comes back. `sreq` is only read by
            // `reclaim`, under the same engine exclusion as this.
            h.sreq.store(0, Ordering::Relaxed);
            self.complete(i, St::Sent);
            return true;
        }
        let rdv = h.rdv();
        // AcqRel: on success we own the data fields until we store back;
        // failure means the receiver matched (it owns them now).
        if rdv
            .state
            .compare_exchange(S_WAITING, S_STAGING, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            self.reqs[i as usize].state = State::Op(Op::Send {
                msg: m,
                stallable: false,
                since: 0,
            });
            return false;
        }
        let len = h.len as usize;
        let stage = heap::alloc_shared(64, len);
        if !stage.is_null() {
            let data = h.data.load(Ordering::Relaxed) as *const u8;
            // Relaxed: our own flags (see above).
            if h.flags.load(Ordering::Relaxed) & F_PLAN != 0 {
                // SAFETY: the send buffer holds the plan's `len` bytes until
                // this send completes; `stage` has room; the plan is ours.
                unsafe {
                    let p = h.plan().read();
                    dt::plan::copy(
                        data,
                        &p,
                        stage,
                        &dt::plan::Plan::dense(len).expect("len > 0"),
                        len,
                    )
                };
            } else {
                // SAFETY: the send buffer (`data`) holds `len` bytes until
                // this send completes; `stage` has room.
                unsafe { core::ptr::copy_nonoverlapping(data, stage, len) };
            }
            h.data.store(stage as u64, Ordering::Relaxed);
            h.flags.fetch_or(F_STAGED, Ordering::Relaxed);
            h.flags.fetch_and(!(F_SYNERGY | F_PLAN), Ordering::Relaxed);
            h.sreq.store(0, Ordering::Relaxed);
            self.helpable.retain(|&x| x != m);
            stats::P2P_STALL_STAGED.add(1);
        }
        // Release: the receiver's Acquire CAS sees the new data fields.
        rdv.state.store(S_WAITING, Ordering::Release);
        if stage.is_null() {
            self.reqs[i as usize].state = State::Op(Op::Send {
                msg: m,
                stallable: false,
                since: 0,
            });
            return false;
        }
        self.complete(i, St::Sent);
        true
    }

    /// Takes back headers receivers are done with: completes the sends
    /// waiting for them, frees staging buffers, recycles.
    pub(super) fn reclaim(&mut self) {
        if self.mailbox(self.me_local).none_returned() {
            return;
        }
        let mut got = core::mem::take(&mut self.scratch);
        self.mailbox(self.me_local).take_returned(&mut got);
        for &m in &got {
            // SAFETY: our header, given back: the receiver no longer uses it
            // (its push was a Release our swap acquired).
            let h = unsafe { &*m };
            let flags = h.flags.load(Ordering::Relaxed);
            let sreq = h.sreq.load(Ordering::Relaxed);
            if flags & F_SYNERGY != 0 {
                self.helpable.retain(|&x| x != m);
            }
            if flags & F_STAGED != 0 {
                // SAFETY: our staging buffer, no longer read.
                unsafe { heap::free(h.data.load(Ordering::Relaxed) as *mut u8) };
            }
            if flags & F_PRIVATE_STAGED != 0 {
                let p = h.data.load(Ordering::Relaxed) as *mut u8;
                // SAFETY: the Box<[u8]> of `send`, `len` long.
                drop(unsafe {
                    Box::from_raw(core::ptr::slice_from_raw_parts_mut(p, h.len as usize))
                });
            }
            if sreq != 0 {
                self.complete(sreq as u32 - 1, St::Sent);
            }
            self.put_header(m);
        }
        got.clear();
        self.scratch = got;
    }
}
