//! The receiving half of the engine: posting receives, draining the
//! global queue and the fast boxes into posted receives or the unexpected
//! queue, copying out (the receiver's side of the Hybrid MPI protocols,
//! SC13), and probing.
//!
//! Matching follows MPI's rules (MPI-3.1 §3.5): a message goes to the
//! first posted receive it matches, a receive takes the first unexpected
//! message it matches, and one sender's messages are taken in the order it
//! sent them (the per-pair sequence merges the fast box with the global
//! queue).

use core::sync::atomic::Ordering;

use super::*;

/// Private copies of fast-box records the progress thread may put in the
/// unexpected queue before further records wait in their box (see
/// `Engine::drain_rings`): a few windows of the usual benchmark and
/// application depth (64).
const OWN_EAGER_MAX: u64 = 256;

impl Engine {
    // ----- receiving -----

    /// Posts a receive into slot `req` (which the caller created): matches
    /// an unexpected message now or queues the receive. Returns true if it
    /// completed.
    ///
    /// It does not drain the queues first: a message still in them can only
    /// be later in its sender's order than everything in `unexpected`, and
    /// the next drain gives it to the first posted receive it matches, which
    /// is what taking it now would do. (Draining here made every `MPI_Irecv`
    /// read the line a streaming sender is writing: a cache-line transfer
    /// per call.)
    ///
    /// Inline, so that the caller's `spec` is built straight into the slot:
    /// moved in from the caller's stack, its wide loads waited on the
    /// narrow stores that had just built it (a store-forwarding stall on
    /// every `MPI_Irecv`).
    #[inline]
    pub fn post_recv(&mut self, req: u32, spec: RecvSpec, polled: bool) -> bool {
        // The size only when HEAPMPI_CHECK is on: a receive's hot path.
        if heap::check::on() && spec.dt.contig {
            heap::check_buffer(
                spec.buf,
                dt::packed_size(spec.count, &spec.dt),
                false,
                "MPI receive",
            );
        }
        let r = &mut self.reqs[req as usize];
        r.ext.recv = Some(spec);
        r.state = State::Op(Op::Posted);
        self.post_slot(req, polled)
    }

    /// [`Engine::post_recv`] of the receive slot `req` holds.
    fn post_slot(&mut self, req: u32, polled: bool) -> bool {
        let spec = self.reqs[req as usize]
            .ext
            .recv
            .as_ref()
            .expect("a receive");
        let (comm_id, src, tag) = (spec.comm_id, spec.src, spec.tag);
        let w = self.wild;
        if let Some(pos) = self
            .unexpected
            .iter()
            // SAFETY: headers in `unexpected` are live until delivered.
            .position(|&m| matches(w, comm_id, src, tag, unsafe { &*m }))
        {
            let m = self.unexpected.remove(pos).unwrap();
            self.deliver(m, req);
            return true;
        }
        self.posted.push_back(Posted {
            req,
            comm_id,
            src,
            tag,
            polled,
        });
        if polled {
            self.polled_add(comm_id, 1);
        }
        false
    }

    /// Moves arrived messages to matching receives or the unexpected queue:
    /// the global queue in arrival order, merged with the fast boxes so that
    /// each sender's messages are taken in its own order (by sequence
    /// number; see `Msg::seq`).
    pub fn drain(&mut self) {
        // A fast-box record ahead of its sender's sequence means the messages
        // before it are in the global queue, pushed before the record was
        // written: the next take finds them, so a second round settles it.
        for _ in 0..3 {
            self.drain_global();
            if !self.drain_rings(false) {
                break;
            }
        }
    }

    /// Takes the global queue.
    pub(super) fn drain_global(&mut self) {
        if self.mailbox(self.me_local).looks_empty() {
            return;
        }
        let mut got = core::mem::take(&mut self.scratch);
        self.mailbox(self.me_local)
            .take_all(&mut got, self.tune.lockfree);
        for &m in &got {
            // SAFETY: a header published to us by its sender.
            let h = unsafe { &*m };
            let s = h.src_local as usize;
            if h.flags.load(Ordering::Relaxed) & F_RING_OPEN != 0 {
                self.open_rx(s, h.data.load(Ordering::Relaxed) as *const Ring);
                // SAFETY: the announcement is done with, linked nowhere.
                unsafe { self.mailbox(s as u32).give_back(m) };
                continue;
            }
            // The sender's fast-box records before this message first.
            while self.expect[s] != h.seq {
                let k = self.rx_index[s] as usize;
                if k == 0 || self.ring_take(k - 1, true) != Some(true) {
                    debug_assert!(false, "fast box behind the global queue");
                    break;
                }
            }
            self.expect[s] = h.seq.wrapping_add(1);
            match self.take_posted((h.comm_id, h.src, h.tag)) {
                Some(req) => self.deliver(m, req),
                None => self.unexpected.push_back(m),
            }
        }
        got.clear();
        self.scratch = got;
    }

    /// Takes what is ready in the fast boxes; true if one of them is ahead
    /// of the global queue.
    ///
    /// While no receive is posted, records stay in their box instead of
    /// being copied to the unexpected queue (`force` takes them anyway, as
    /// a probe must see them). The box is the buffer: a receive posted
    /// later takes its record from there with one copy, where copying it
    /// out first costs a second copy and a header (a third of the time of
    /// HPCC RandomAccess's receive loop, which posts one receive after each
    /// message it takes). A sender that outruns its receiver fills the box
    /// and then feels back-pressure (see `F_ACK`): it rings the receiver's
    /// progress thread, which copies up to [`OWN_EAGER_MAX`] records out to
    /// make room, so a receiver busy elsewhere does not hold its senders
    /// back for the first few windows; copying every record out would let
    /// the unexpected queue, and the memory under it, grow without end.
    /// Order is kept: a message of the global queue takes its sender's
    /// earlier records first (`drain_global`), so whatever stays in a box is
    /// later than everything of its sender in the unexpected queue, and a
    /// receive posted later looks there first (`post_recv`).
    pub(super) fn drain_rings(&mut self, force: bool) -> bool {
        let mut ahead = false;
        for k in 0..self.rx.len() {
            loop {
                match self.ring_take(k, force) {
                    Some(true) => {}
                    Some(false) => {
                        ahead = true;
                        break;
                    }
                    None => break,
                }
            }
        }
        ahead
    }

    /// Takes the next record of the `k`-th fast box if it is the next
    /// message from its sender: gives it to the first matching posted
    /// receive or copies it to the unexpected queue. `None`: nothing ready;
    /// `Some(false)`: the record is ahead (an earlier message is still in
    /// the global queue).
    #[inline]
    pub(super) fn ring_take(&mut self, k: usize, force: bool) -> Option<bool> {
        if !force && self.posted.is_empty() && (!self.in_helper || self.own.live >= OWN_EAGER_MAX) {
            return None;
        }
        let (s, ref cons) = self.rx[k];
        let rec: *const Rec = cons.peek()?;
        // SAFETY: a ready record; it stays in place until we pop it.
        let r = unsafe { &*rec };
        let s = s as usize;
        if r.seq != self.expect[s] {
            return Some(false);
        }
        self.take_record(s, r);
        self.expect[s] = r.seq.wrapping_add(1);
        self.rx[k].1.pop(r.len as usize);
        Some(true)
    }

    /// Delivers fast-box record `r` from source `s` to the first matching
    /// posted receive, or copies it to the unexpected queue.
    pub(super) fn take_record(&mut self, s: usize, r: &Rec) {
        let len = r.len as usize;
        let data = rec_body(r);
        match self.take_posted((r.comm_id, r.src, r.tag)) {
            Some(req) => {
                let spec = self.reqs[req as usize].ext.recv.expect("receive request");
                let cap = dt::packed_size(spec.count, &spec.dt);
                let n = len.min(cap);
                let mut later = self.later(&spec, n);
                // SAFETY: the record holds `len ≥ n` payload bytes; the
                // receive buffer holds `cap ≥ n`.
                unsafe { put_bytes(data, n, &spec, &mut later) };
                let st = St::Recv {
                    source: r.src,
                    tag: r.tag,
                    bytes: n as u64,
                    error: truncated(len, cap),
                    cancelled: false,
                };
                self.finish_recv(req, st, later);
            }
            None => {
                let m = self.own.get(ENVELOPE + len);
                if m.is_null() {
                    // Neither the shared heap nor glibc has the few bytes:
                    // the process is out of memory (as Vec growth would be).
                    std::alloc::handle_alloc_error(
                        std::alloc::Layout::from_size_align(ENVELOPE + len, 64).unwrap(),
                    );
                }
                // SAFETY: a fresh header of ours with room for the payload;
                // the record holds `len` bytes.
                unsafe {
                    let h = &mut *m;
                    h.comm_id = r.comm_id;
                    h.src = r.src;
                    h.tag = r.tag;
                    h.src_local = s as u16;
                    h.len = len as u64;
                    h.seq = r.seq;
                    h.sreq.store(0, Ordering::Relaxed);
                    h.flags.store(F_INLINE | F_OWN, Ordering::Relaxed);
                    h.data.store(h.body() as u64, Ordering::Relaxed);
                    crate::dt::copy_disjoint(data, h.body(), len);
                }
                self.unexpected.push_back(m);
            }
        }
    }

    /// Starts reading source `s`'s fast box (it announced it).
    pub(super) fn open_rx(&mut self, s: usize, ring: *const Ring) {
        debug_assert!(self.rx_index[s] == 0);
        // SAFETY: initialised by the sender before the announcement, whose
        // push (Release) our take of the queue acquired.
        self.rx.push((s as u32, unsafe { Consumer::new(ring) }));
        let n = self.rx.len();
        self.rx_index[s] = n as u32;
        let slots = RX_RINGS.load(Ordering::Relaxed);
        // SAFETY: `slots` has `nlocal` slots and a source opens one box.
        unsafe { (*slots.add(n - 1)).store(ring as *mut Ring, Ordering::Relaxed) };
        // Release: the slot is filled before waiters count it (`quiet`).
        RX_RINGS_N.store(n, Ordering::Release);
    }

    /// Removes and returns the first posted receive matching a message with
    /// envelope `env`.
    #[inline]
    pub(super) fn take_posted(&mut self, env: (u64, i32, i32)) -> Option<u32> {
        let w = self.wild;
        let front = self.posted.front()?;
        let p = if matches_env(w, front.comm_id, front.src, front.tag, env) {
            // The usual case: the oldest receive takes it (no shifting).
            self.posted.pop_front().unwrap()
        } else {
            let pos = self
                .posted
                .iter()
                .position(|p| matches_env(w, p.comm_id, p.src, p.tag, env))?;
            self.posted.remove(pos).unwrap()
        };
        if p.polled {
            self.polled_add(p.comm_id, -1);
        }
        Some(p.req)
    }

    /// Copies message `m` into receive request `req`, completes it and
    /// returns the header to its sender.
    pub(super) fn deliver(&mut self, m: *mut Msg, req: u32) {
        let spec = self.reqs[req as usize].ext.recv.expect("receive request");
        let (st, later) = self.copy_out(m, &spec);
        self.finish_recv(req, st, later);
    }

    /// Completes receive `req` with `st`, or, if its bytes wait in `later`
    /// for the unpacker, queues it for [`Engine::finish_unpacks`].
    fn finish_recv(&mut self, req: u32, st: St, later: Option<Box<[u8]>>) {
        match later {
            None => self.complete(req, st),
            Some(b) => {
                super::req::changed();
                self.reqs[req as usize].state = State::Op(Op::Unpacking);
                self.unpacks.push((req, b, st));
            }
        }
    }

    /// Where the bytes of a receive go when they cannot be unpacked now: a
    /// receive of a non-contiguous type matched by the progress thread,
    /// which may not call the MPI library's unpacker, gets them in a private
    /// buffer that the next heapmpi call of this process unpacks (the
    /// receive cannot be seen complete before that call anyway).
    fn later(&self, spec: &RecvSpec, n: usize) -> Option<Box<[u8]>> {
        (n > 0 && !spec.dt.contig && !self.may_call_mpi()).then(|| vec![0u8; n].into_boxed_slice())
    }

    /// Unpacks the receives the progress thread matched (see `later`) and
    /// completes them. Calls the MPI library: never from the progress
    /// thread below `MPI_THREAD_MULTIPLE`.
    pub(super) fn finish_unpacks(&mut self) {
        debug_assert!(self.may_call_mpi());
        for (req, b, st) in core::mem::take(&mut self.unpacks) {
            let spec = self.reqs[req as usize].ext.recv.expect("receive request");
            // SAFETY: `b` holds the message's first bytes, no more than the
            // receive buffer has room for.
            unsafe { copy_plain(b.as_ptr(), b.len(), &spec) };
            self.complete(req, st);
        }
    }

    /// The receiving half of every protocol: copy out, give the header back.
    /// Returns the status and, if unpacking must wait, the bytes (`later`).
    pub(super) fn copy_out(&mut self, m: *mut Msg, spec: &RecvSpec) -> (St, Option<Box<[u8]>>) {
        // SAFETY: a header published to us, owned by us until given back.
        let h = unsafe { &*m };
        let mut flags = h.flags.load(Ordering::Relaxed);
        if flags & F_INLINE == 0 {
            let rdv = h.rdv();
            // Acquire: the sender's stage-on-stall writes (data, flags)
            // happen-before our reads below.
            let mut spins = 0u32;
            while rdv
                .state
                .compare_exchange_weak(S_WAITING, S_MATCHED, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                spins += 1;
                backoff(spins);
            }
            flags = h.flags.load(Ordering::Relaxed);
        }
        // Relaxed: ordered by the Acquire take of the queue and, for a
        // rendezvous, the Acquire CAS above (see `Msg`).
        let data = h.data.load(Ordering::Relaxed) as *const u8;
        let len = h.len as usize;
        let cap = dt::packed_size(spec.count, &spec.dt);
        let n = len.min(cap);
        let mut later = self.later(spec, n);
        if n > 0 {
            if flags & F_CMA != 0 {
                self.cma_read(h, data, n, spec, later.as_deref_mut());
            } else if flags & F_SYNERGY != 0
                && spec.dt.contig
                && n >= self.tune.synergy_min
                && heap::in_region(spec.buf, n)
            {
                self.synergy_copy(h, data, spec.buf, n);
            } else if flags & F_PLAN != 0
                || (flags & F_INLINE == 0 && !spec.dt.contig && later.is_none())
            {
                // SAFETY: as below; a plan message's bytes are laid out by
                // the plan in its header.
                unsafe { copy_planned(h, flags, data, n, spec, &mut later) };
            } else {
                // SAFETY: `data` holds `len ≥ n` bytes (the sender keeps
                // them until the header is back); the receive buffer (or
                // `later`) holds `cap ≥ n`.
                unsafe { put_bytes(data, n, spec, &mut later) };
            }
        }
        let st = St::Recv {
            source: h.src,
            tag: h.tag,
            bytes: n as u64,
            error: truncated(len, cap),
            cancelled: false,
        };
        let sender = h.src_local as u32;
        if flags & F_OWN != 0 {
            self.own.put(m);
        } else if flags & (F_INLINE | F_SYNC | F_ACK) == F_INLINE {
            // Nobody waits for this header: return it later, in a batch,
            // off the latency path.
            self.held.push(m);
            if self.held.len() >= HOLD_MAX {
                self.flush_held();
            }
        } else {
            // SAFETY: a header we are done with, linked nowhere.
            unsafe { self.mailbox(sender).give_back(m) };
        }
        (st, later)
    }

    /// Returns the held headers to their senders, one chain per sender.
    pub fn flush_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let mut held = core::mem::take(&mut self.held);
        // SAFETY: held headers are live until given back.
        held.sort_unstable_by_key(|&m| unsafe { (*m).src_local });
        for run in held.chunk_by(|&a, &b| unsafe { (*a).src_local == (*b).src_local }) {
            // SAFETY: as above.
            let sender = unsafe { (*run[0]).src_local } as u32;
            // SAFETY: headers we are done with, linked nowhere.
            unsafe { self.mailbox(sender).give_back_all(run) };
        }
        held.clear();
        self.held = held;
    }

    /// Reads `n` bytes of a message in the sender's private memory into the
    /// receive (or into `later`, `n` long; see [`Engine::later`]).
    pub(super) fn cma_read(
        &self,
        h: &Msg,
        data: *const u8,
        n: usize,
        spec: &RecvSpec,
        later: Option<&mut [u8]>,
    ) {
        let mut tmp = Vec::new();
        let unpack = later.is_none() && !spec.dt.contig;
        let dst = match later {
            Some(b) => b.as_mut_ptr(),
            None if spec.dt.contig => spec.buf,
            None => {
                tmp.resize(n, 0u8);
                tmp.as_mut_ptr()
            }
        };
        // SAFETY: `dst` has room for `n` bytes (the receive buffer, `later`
        // or `tmp`); the sender keeps its buffer until the header is back.
        if !unsafe { crate::sys::cma::read(h.pid, data as usize, dst, n) } {
            crate::eprint_noalloc!(
                "heapmpi: error: cannot read a message from process {} (process_vm_readv: \
                 errno {}); shared heap exhausted and cross-memory attach refused",
                h.pid,
                crate::sys::errno()
            );
        }
        if unpack {
            // SAFETY: `tmp` holds `n` bytes.
            unsafe {
                dt::unpack_prefix(
                    tmp.as_ptr(),
                    n,
                    spec.buf,
                    spec.count,
                    spec.dtype,
                    &spec.dt,
                    spec.comm,
                )
            };
        }
    }

    // ----- probing -----

    /// Finds the first unexpected message matching, after progress.
    pub fn probe(
        &mut self,
        comm: ffi::MPI_Comm,
        comm_id: u64,
        src: i32,
        tag: i32,
        take: bool,
    ) -> Option<(St, Option<u32>)> {
        self.progress();
        // What waits in the fast boxes too (see `drain_rings`; a record
        // ahead of the global queue is settled by the next take, as in
        // `drain`).
        for _ in 0..3 {
            if !self.drain_rings(true) {
                break;
            }
            self.drain_global();
        }
        let w = self.wild;
        let pos = self
            .unexpected
            .iter()
            // SAFETY: headers in `unexpected` are live until delivered.
            .position(|&m| matches(w, comm_id, src, tag, unsafe { &*m }))?;
        let m = self.unexpected[pos];
        // SAFETY: as above.
        let h = unsafe { &*m };
        let st = St::Recv {
            source: h.src,
            tag: h.tag,
            bytes: h.len,
            error: 0,
            cancelled: false,
        };
        if !take {
            return Some((st, None));
        }
        self.unexpected.remove(pos);
        let slot = ProbedMsg { msg: m, comm };
        let i = match self.free_probed.pop() {
            Some(i) => {
                self.probed[i as usize] = Some(slot);
                i
            }
            None => {
                self.probed.push(Some(slot));
                self.probed.len() as u32 - 1
            }
        };
        Some((st, Some(i)))
    }

    /// Takes a matched-probe message handle's header.
    pub fn take_probed(&mut self, i: usize) -> Option<(*mut Msg, ffi::MPI_Comm)> {
        let p = self.probed.get_mut(i)?.take()?;
        self.free_probed.push(i as u32);
        Some((p.msg, p.comm))
    }

    /// Receives a matched-probe message into request `req`.
    pub fn recv_probed(&mut self, m: *mut Msg, req: u32, spec: RecvSpec) {
        self.reqs[req as usize].ext.recv = Some(spec);
        self.deliver(m, req);
    }

    /// Receives a matched-probe message directly (no request).
    pub fn recv_probed_now(&mut self, m: *mut Msg, spec: &RecvSpec) -> St {
        // A calling thread may unpack: nothing waits for later.
        let (st, later) = self.copy_out(m, spec);
        debug_assert!(later.is_none());
        st
    }
}

/// Copies `n` payload bytes at `data` into `later` if given (see
/// [`Engine::later`]), else into the receive (as [`copy_plain`]).
///
/// # Safety
/// As [`copy_plain`]; `later`, if given, is `n` bytes long.
unsafe fn put_bytes(data: *const u8, n: usize, spec: &RecvSpec, later: &mut Option<Box<[u8]>>) {
    match later {
        // SAFETY: per the contract.
        Some(b) => unsafe { crate::dt::copy_disjoint(data, b.as_mut_ptr(), n) },
        // SAFETY: per the contract.
        None => unsafe { copy_plain(data, n, spec) },
    }
}

/// Copies `n` payload bytes of a message into a receive by layouts
/// (`dt::plan`): the sender's, when the header carries one ([`F_PLAN`]),
/// else the packed bytes at `data`, into the receive's own layout when it
/// has one, else into contiguous memory (the buffer, `later`, or a
/// temporary the real MPI unpacks from).
///
/// # Safety
/// `data` holds the message (by the sender's plan, or packed); the
/// receive buffer (or `later`) has room for `n` bytes.
unsafe fn copy_planned(
    h: &Msg,
    flags: u32,
    data: *const u8,
    n: usize,
    spec: &RecvSpec,
    later: &mut Option<Box<[u8]>>,
) {
    use dt::plan::{self, Plan};
    let dense = Plan::dense(n).expect("n > 0");
    let sp = if flags & F_PLAN != 0 {
        // SAFETY: a plan header's layout, written before it was published.
        unsafe { h.plan().read() }
    } else {
        dense
    };
    // SAFETY (every copy): the contract; the sender's plan covers `len ≥ n`
    // bytes of its buffer, the receive's covers `cap ≥ n`.
    if let Some(b) = later {
        unsafe { plan::copy(data, &sp, b.as_mut_ptr(), &dense, n) };
    } else if spec.dt.contig {
        unsafe { plan::copy(data, &sp, spec.buf, &dense, n) };
    } else if let Some(dp) = plan::of(spec.dtype, spec.count) {
        unsafe { plan::copy(data, &sp, spec.buf, &dp, n) };
    } else if flags & F_PLAN == 0 {
        unsafe { copy_plain(data, n, spec) };
    } else {
        let mut tmp = vec![0u8; n];
        unsafe {
            plan::copy(data, &sp, tmp.as_mut_ptr(), &dense, n);
            copy_plain(tmp.as_ptr(), n, spec);
        }
    }
}

/// Copies `n` payload bytes at `data` into a receive: memcpy for a
/// contiguous type, else the real MPI's unpacker (a partial last element
/// gets exactly the bytes there are).
///
/// # Safety
/// `data` holds `n` bytes; the receive buffer has room for them.
pub(super) unsafe fn copy_plain(data: *const u8, n: usize, spec: &RecvSpec) {
    if n == 0 {
        return;
    }
    if spec.dt.contig {
        // SAFETY: per the contract.
        unsafe { crate::dt::copy_disjoint(data, spec.buf, n) };
    } else {
        // SAFETY: per the contract.
        unsafe {
            dt::unpack_prefix(
                data, n, spec.buf, spec.count, spec.dtype, &spec.dt, spec.comm,
            )
        };
    }
}

/// The status error of a `len`-byte message received into `cap` bytes.
pub(super) fn truncated(len: usize, cap: usize) -> i32 {
    if len > cap {
        ffi::MPI_ERR_TRUNCATE as i32
    } else {
        0
    }
}
