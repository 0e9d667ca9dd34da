//! Receives that the real MPI may have to serve too: a wildcard on a
//! communicator that spans nodes, or any receive posted behind one on the
//! same communicator. They stay in the posted queue (so a local message
//! still finds them in posting order) and are also served from the real MPI
//! by matched probes (`MPI_Improbe` + `MPI_Imrecv`), in posting order.

use core::ffi::c_int;
use core::sync::atomic::{AtomicBool, Ordering};

use super::*;

/// Whether any polled receive is pending in this process: a copy of
/// `polled_total > 0` that callers may read without taking the engine
/// (`MPI_Wait` on the real MPI's request asks on every call). Written only
/// under the engine by [`Engine::polled_add`]. Relaxed: the thread that
/// posted a polled receive reads its own write in program order; another
/// thread's receive has no order with this call anyway, and a stale answer
/// only picks the real wait instead of the polling one.
static ANY_POLLED: AtomicBool = AtomicBool::new(false);

/// [`Engine::has_polled`] without the engine (see [`ANY_POLLED`]).
#[inline]
pub fn any_polled() -> bool {
    ANY_POLLED.load(Ordering::Relaxed)
}

impl Engine {
    /// Whether a pending polled receive on communicator `id` matches a
    /// message from `src` with `tag`.
    pub fn polled_matches(&self, id: u64, src: i32, tag: i32) -> bool {
        let w = self.wild;
        self.polled_total > 0
            && self.posted.iter().any(|p| {
                p.polled
                    && p.comm_id == id
                    && (p.src == w.any_source || p.src == src)
                    && (p.tag == w.any_tag || p.tag == tag)
            })
    }

    /// Whether any polled receive is pending, on any communicator: the
    /// real MPI serves it only through this rank's own calls (see
    /// `api::real_while_polled`).
    #[inline]
    pub fn has_polled(&self) -> bool {
        self.polled_total > 0
    }

    /// Pending polled receives on communicator `id`.
    pub fn polled_on(&self, id: u64) -> bool {
        self.polled_total > 0 && self.polled.iter().any(|e| e.0 == id && e.1 > 0)
    }

    pub(super) fn polled_add(&mut self, id: u64, d: i32) {
        if d > 0 {
            self.polled_total += 1;
        } else {
            self.polled_total -= 1;
        }
        match self.polled.iter_mut().find(|e| e.0 == id) {
            Some(e) => e.1 = (e.1 as i32 + d) as u32,
            None => self.polled.push((id, d as u32)),
        }
        self.polled.retain(|e| e.1 > 0);
        ANY_POLLED.store(self.polled_total > 0, Ordering::Relaxed);
    }

    /// Whether the real MPI holds a message for `comm` that no receive of
    /// it has taken (a probe with both wildcards).
    fn real_has_message(&self, comm: ffi::MPI_Comm) -> bool {
        let w = self.wild;
        let mut flag: c_int = 0;
        // SAFETY: valid communicator (pending operations keep it alive)
        // and out-pointers; the probe consumes nothing.
        let rc = unsafe {
            ffi::PMPI_Iprobe(
                w.any_source,
                w.any_tag,
                comm,
                &mut flag,
                ffi::RSMPI_STATUS_IGNORE,
            )
        };
        rc != 0 || flag != 0
    }

    /// Serves polled receives from the real MPI, in posting order.
    ///
    /// For each polled receive a plain probe finds the message it would get;
    /// if an earlier polled receive also matches that (source, tag), the pass
    /// starts over so the earlier one gets it (a message may have arrived
    /// after the earlier receive was probed). Otherwise a matched probe on
    /// exactly that source and tag takes the message (the first from that
    /// source with that tag, hence the one just seen) and `MPI_Imrecv` moves
    /// it into the receive's buffer.
    ///
    /// A pass first asks, once per communicator, whether the real MPI has
    /// any message for it (`MPI_Iprobe` with both wildcards), and skips
    /// that communicator's receives when it has none. Each probe is a turn
    /// of the real MPI's progress engine, under its lock when threads are
    /// on: a window of 16 polled receives polled by a `MPI_Testsome` loop
    /// made 16 turns per test, against the one a stock `MPI_Testsome`
    /// makes. Skipping a communicator's receives all together keeps the
    /// posting order: a message that arrives after its probe waits for the
    /// next pass, as it would have arrived after a later one.
    pub(super) fn poll_real(&mut self) {
        let w = self.wild;
        // Communicators whose probe found nothing this pass (few: the
        // ones with polled receives; past the array, no skipping).
        let mut quiet = [0u64; 8];
        let mut nquiet = 0;
        let mut i = 0;
        let mut restarts = 0;
        while i < self.posted.len() {
            if !self.posted[i].polled {
                i += 1;
                continue;
            }
            let req = self.posted[i].req;
            let spec = self.reqs[req as usize].ext.recv.expect("receive");
            if quiet[..nquiet].contains(&spec.comm_id) {
                i += 1;
                continue;
            }
            if nquiet < quiet.len() && !self.real_has_message(spec.comm) {
                quiet[nquiet] = spec.comm_id;
                nquiet += 1;
                i += 1;
                continue;
            }
            let mut flag: c_int = 0;
            // SAFETY: a zeroed status is a valid out-buffer.
            let mut st: ffi::MPI_Status = unsafe { core::mem::zeroed() };
            // SAFETY: valid communicator (pending operations keep it alive)
            // and out-pointers.
            let rc = unsafe { ffi::PMPI_Iprobe(spec.src, spec.tag, spec.comm, &mut flag, &mut st) };
            if rc != 0 || flag == 0 {
                i += 1;
                continue;
            }
            let (s, t) = (st.MPI_SOURCE, st.MPI_TAG);
            let earlier = self.posted.iter().take(i).any(|p| {
                p.polled
                    && p.comm_id == spec.comm_id
                    && (p.src == w.any_source || p.src == s)
                    && (p.tag == w.any_tag || p.tag == t)
            });
            if earlier && restarts < 64 {
                restarts += 1;
                i = 0;
                continue;
            }
            // SAFETY: reading an MPI constant.
            let mut msg = unsafe { ffi::RSMPI_MESSAGE_NULL };
            // SAFETY: as above.
            let rc = unsafe {
                ffi::PMPI_Improbe(
                    s,
                    t,
                    spec.comm,
                    &mut flag,
                    &mut msg,
                    ffi::RSMPI_STATUS_IGNORE,
                )
            };
            if rc != 0 || flag == 0 {
                i += 1;
                continue;
            }
            // SAFETY: reading an MPI constant.
            let mut inner = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: the receive's own buffer, count and datatype.
            unsafe {
                ffi::PMPI_Imrecv(
                    spec.buf.cast(),
                    spec.count,
                    spec.dtype,
                    &mut msg,
                    &mut inner,
                )
            };
            let p = self.posted.remove(i).unwrap();
            self.polled_add(p.comm_id, -1);
            super::req::changed();
            self.reqs[req as usize].state = State::Real(inner);
            stats::P2P_WILDCARD_REAL.add(1);
        }
    }
}
