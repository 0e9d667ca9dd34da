//! Which fields of an `MPI_Status` each call writes, learned from the real
//! MPI at init, so that a status heapmpi fills reads exactly as the real
//! MPI's would have.
//!
//! MPI says (MPI-4.0 §3.2.5, §3.7.5) that only the multiple-completion calls
//! may write `MPI_ERROR`, and only when they return `MPI_ERR_IN_STATUS`;
//! beyond that the MPIs differ, and programs (and test suites) compare
//! fields. Seen here: Open MPI leaves `MPI_ERROR` alone in every
//! single-completion call and sets it to `MPI_SUCCESS` in `Waitall`,
//! `Testall`, `Waitsome` and `Testsome`; MPICH sets it in `Probe`, `Iprobe`,
//! `Mprobe`, `Improbe` and `Waitall` but not in `Testall` or `Waitsome`, and
//! leaves the whole status of a completed send alone in `Testall`.
//! The status of a completed send and the empty status (null and inactive
//! requests) differ between the MPIs too.
//!
//! So instead of a table per MPI and version, [`learn`] runs every call once
//! on self-messages over a private communicator, with statuses prefilled
//! with known bytes, and records what changed: for a received message,
//! whether `MPI_ERROR` is written; for a completed send and for a null
//! request, every byte written and its value (a [`Patch`], found by running
//! the call over two fills, `0x00` and `0xff`: a byte is written when both
//! runs leave the same value). [`write_status`] then writes heapmpi's
//! statuses by those rules. If learning fails, MPI's rules as written are
//! used.

use core::ffi::c_int;
use core::mem::{offset_of, size_of};
use std::sync::OnceLock;

use mpi_sys as ffi;

use super::engine::St;

/// The calls that return statuses, as far as what they write differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Call {
    /// `MPI_Recv`.
    Recv,
    /// `MPI_Sendrecv`.
    Sendrecv,
    /// `MPI_Sendrecv_replace`.
    SendrecvReplace,
    /// `MPI_Mrecv`.
    Mrecv,
    /// `MPI_Probe`.
    Probe,
    /// `MPI_Iprobe`.
    Iprobe,
    /// `MPI_Mprobe`.
    Mprobe,
    /// `MPI_Improbe`.
    Improbe,
    /// `MPI_Wait`.
    Wait,
    /// `MPI_Test`.
    Test,
    /// `MPI_Request_get_status`.
    GetStatus,
    /// `MPI_Waitall`.
    Waitall,
    /// `MPI_Testall`.
    Testall,
    /// `MPI_Waitany`.
    Waitany,
    /// `MPI_Testany`.
    Testany,
    /// `MPI_Waitsome`.
    Waitsome,
    /// `MPI_Testsome`.
    Testsome,
}

const NCALLS: usize = 17;
const ALL: [Call; NCALLS] = [
    Call::Recv,
    Call::Sendrecv,
    Call::SendrecvReplace,
    Call::Mrecv,
    Call::Probe,
    Call::Iprobe,
    Call::Mprobe,
    Call::Improbe,
    Call::Wait,
    Call::Test,
    Call::GetStatus,
    Call::Waitall,
    Call::Testall,
    Call::Waitany,
    Call::Testany,
    Call::Waitsome,
    Call::Testsome,
];

impl Call {
    /// One of the calls that complete several requests (and may return
    /// `MPI_ERR_IN_STATUS`).
    pub fn multiple(self) -> bool {
        matches!(
            self,
            Call::Waitall | Call::Testall | Call::Waitsome | Call::Testsome
        )
    }

    /// The calls that complete requests (and so have send and empty rules).
    fn completes_requests(self) -> bool {
        !matches!(
            self,
            Call::Recv
                | Call::Sendrecv
                | Call::SendrecvReplace
                | Call::Mrecv
                | Call::Probe
                | Call::Iprobe
                | Call::Mprobe
                | Call::Improbe
        )
    }
}

/// Largest status heapmpi handles (Open MPI's is 24 bytes, MPICH's 20).
const MAX_STATUS: usize = 32;
const STATUS: usize = size_of::<ffi::MPI_Status>();
const _: () = assert!(STATUS <= MAX_STATUS);

/// The bits a call writes into a status: for each bit, whether it is
/// written and with what, as masks so that applying it is a few word
/// operations (a status is written for every completed request). Bits,
/// not bytes: MPICH's wait on a completed send clears only the cancelled
/// bit of `count_hi_and_cancelled` and leaves the rest of the status as
/// it was, so a program that tests `MPI_Test_cancelled` on a status it
/// never initialised must find that bit cleared (the MPICH suite's
/// `pt2pt/scancel2` found a matched send "cancelled" under heapmpi in 4
/// of 6 runs, whatever garbage its stack held).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Patch {
    /// 1 where the bit is kept, 0 where it is written.
    keep: [u8; MAX_STATUS],
    /// The written bits (0 where kept).
    val: [u8; MAX_STATUS],
}

impl Patch {
    /// The patch that turns image `zeros` (the status prefilled with 0x00)
    /// and image `ones` (prefilled with 0xff) into what the call left: a
    /// bit the call did not touch differs between the two, a bit it wrote
    /// is the same in both.
    pub fn from_images(zeros: &[u8], ones: &[u8]) -> Patch {
        let mut p = Patch {
            keep: [0xff; MAX_STATUS],
            val: [0; MAX_STATUS],
        };
        for i in 0..zeros.len().min(ones.len()).min(MAX_STATUS) {
            p.keep[i] = zeros[i] ^ ones[i];
            p.val[i] = zeros[i] & ones[i];
        }
        p
    }

    /// Writes the patch over `image`.
    #[inline]
    pub fn apply(&self, image: &mut [u8]) {
        for ((b, k), v) in image.iter_mut().zip(&self.keep).zip(&self.val) {
            *b = (*b & k) | v;
        }
    }
}

/// What every call writes, by kind of status.
struct Rules {
    /// A received message's `MPI_ERROR` is set to `MPI_SUCCESS`.
    recv_error: [bool; NCALLS],
    /// The status of a completed send (calls that complete requests).
    send: [Option<Patch>; NCALLS],
    /// The empty status of a null request.
    empty: [Option<Patch>; NCALLS],
    /// The empty status of an inactive persistent request.
    inactive: [Option<Patch>; NCALLS],
}

impl Rules {
    /// MPI's rules as written: `MPI_ERROR` only from the multiple-completion
    /// calls, empty statuses for sends and null requests.
    fn standard() -> Rules {
        let mut r = Rules {
            recv_error: [false; NCALLS],
            send: [None; NCALLS],
            empty: [None; NCALLS],
            inactive: [None; NCALLS],
        };
        for c in ALL {
            r.recv_error[c as usize] = c.multiple();
        }
        r
    }
}

static RULES: OnceLock<Rules> = OnceLock::new();

fn rules() -> &'static Rules {
    RULES.get_or_init(Rules::standard)
}

/// Writes `st` into `out` as call `call` of the real MPI would (nothing
/// for `MPI_STATUS_IGNORE`). An error of a receive is not written into
/// `MPI_ERROR` here: the multiple-completion calls do that themselves when
/// they return `MPI_ERR_IN_STATUS` ([`set_error`]).
///
/// # Safety
/// `out` is `MPI_STATUS_IGNORE` (or null) or points at a writable status.
pub unsafe fn write_status(st: &St, out: *mut ffi::MPI_Status, call: Call) {
    // SAFETY: reading an MPI constant.
    if out.is_null() || out == unsafe { ffi::RSMPI_STATUS_IGNORE } {
        return;
    }
    let r = rules();
    let c = call as usize;
    // SAFETY (all arms): `out` is a writable status (the contract).
    match *st {
        St::Recv {
            source,
            tag,
            bytes,
            cancelled,
            ..
        } => unsafe {
            (*out).MPI_SOURCE = source;
            (*out).MPI_TAG = tag;
            super::status::write_hidden(out, bytes, cancelled);
            if r.recv_error[c] {
                (*out).MPI_ERROR = 0;
            }
        },
        St::Real(s) => unsafe {
            let keep = (*out).MPI_ERROR;
            *out = s;
            (*out).MPI_ERROR = if r.recv_error[c] { 0 } else { keep };
        },
        St::Sent | St::Empty | St::Inactive => {
            let patch = match st {
                St::Sent => &r.send[c],
                St::Empty => &r.empty[c],
                _ => &r.inactive[c],
            };
            match patch {
                Some(p) => unsafe {
                    let image = core::slice::from_raw_parts_mut(out as *mut u8, STATUS);
                    p.apply(image);
                },
                None => unsafe {
                    (*out).MPI_SOURCE = ffi::RSMPI_ANY_SOURCE;
                    (*out).MPI_TAG = ffi::RSMPI_ANY_TAG;
                    super::status::write_hidden(out, 0, false);
                    if r.recv_error[c] {
                        (*out).MPI_ERROR = 0;
                    }
                },
            }
        }
    }
}

/// Sets `MPI_ERROR` of `out` (a multiple-completion call that returns
/// `MPI_ERR_IN_STATUS`), unless it is `MPI_STATUS_IGNORE`.
///
/// # Safety
/// As [`write_status`].
pub unsafe fn set_error(out: *mut ffi::MPI_Status, code: c_int) {
    // SAFETY: reading an MPI constant; then the contract.
    unsafe {
        if !out.is_null() && out != ffi::RSMPI_STATUS_IGNORE {
            (*out).MPI_ERROR = code;
        }
    }
}

/// A status image prefilled with `fill`.
fn filled(fill: u8) -> ffi::MPI_Status {
    let mut s = core::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
    // SAFETY: every byte is written; MPI_Status is plain integers.
    unsafe {
        core::ptr::write_bytes(s.as_mut_ptr() as *mut u8, fill, STATUS);
        s.assume_init()
    }
}

fn bytes_of(s: &ffi::MPI_Status) -> [u8; STATUS] {
    let mut out = [0u8; STATUS];
    // SAFETY: `s` is STATUS bytes of plain data.
    unsafe { core::ptr::copy_nonoverlapping(s as *const _ as *const u8, out.as_mut_ptr(), STATUS) };
    out
}

/// The learning run: self-messages on `comm` (a private communicator with
/// `MPI_ERRORS_RETURN`). Any failing call abandons learning.
struct Learner {
    comm: ffi::MPI_Comm,
    /// Our rank in `comm` (every message goes to ourselves).
    me: c_int,
    buf: [c_int; 2],
}

/// Sentinel in `MPI_ERROR` while learning.
const SENTINEL: c_int = 0x5a5a_5a5a;

impl Learner {
    fn ok(rc: c_int) -> Option<()> {
        (rc == 0).then_some(())
    }

    /// A completed self-message: returns (receive request, send request),
    /// both complete in the real MPI but not yet waited for.
    fn pair(&mut self) -> Option<(ffi::MPI_Request, ffi::MPI_Request)> {
        // SAFETY: reading MPI constants; our own buffers, alive across the
        // exchange (`self` outlives it).
        unsafe {
            let (mut r, mut s) = (ffi::RSMPI_REQUEST_NULL, ffi::RSMPI_REQUEST_NULL);
            let src = self.buf.as_ptr();
            let dst = self.buf.as_mut_ptr().add(1);
            Self::ok(ffi::PMPI_Irecv(
                dst.cast(),
                1,
                ffi::RSMPI_INT32_T,
                self.me,
                7,
                self.comm,
                &mut r,
            ))?;
            Self::ok(ffi::PMPI_Isend(
                src.cast(),
                1,
                ffi::RSMPI_INT32_T,
                self.me,
                7,
                self.comm,
                &mut s,
            ))?;
            Some((r, s))
        }
    }

    /// Runs completion call `call` on `req` alone (looping the tests until
    /// complete) with `st` as its status.
    fn complete(
        &mut self,
        call: Call,
        req: &mut ffi::MPI_Request,
        st: &mut ffi::MPI_Status,
    ) -> Option<()> {
        let (mut flag, mut idx, mut out, mut ind): (c_int, c_int, c_int, c_int) = (0, 0, 0, 0);
        for _ in 0..1_000_000 {
            // SAFETY: one valid request and status; out-pointers valid.
            let rc = unsafe {
                match call {
                    Call::Wait => {
                        flag = 1;
                        ffi::PMPI_Wait(req, st)
                    }
                    Call::Test => ffi::PMPI_Test(req, &mut flag, st),
                    Call::GetStatus => ffi::PMPI_Request_get_status(*req, &mut flag, st),
                    Call::Waitall => {
                        flag = 1;
                        ffi::PMPI_Waitall(1, req, st)
                    }
                    Call::Testall => ffi::PMPI_Testall(1, req, &mut flag, st),
                    Call::Waitany => {
                        flag = 1;
                        ffi::PMPI_Waitany(1, req, &mut idx, st)
                    }
                    Call::Testany => ffi::PMPI_Testany(1, req, &mut idx, &mut flag, st),
                    Call::Waitsome => {
                        flag = 1;
                        ffi::PMPI_Waitsome(1, req, &mut out, &mut ind, st)
                    }
                    Call::Testsome => {
                        let rc = ffi::PMPI_Testsome(1, req, &mut out, &mut ind, st);
                        flag = (out != 0) as c_int;
                        rc
                    }
                    _ => return None,
                }
            };
            Self::ok(rc)?;
            if flag != 0 {
                if call == Call::GetStatus {
                    // SAFETY: the request is complete; release it.
                    Self::ok(unsafe { ffi::PMPI_Wait(req, ffi::RSMPI_STATUS_IGNORE) })?;
                }
                return Some(());
            }
        }
        None
    }

    /// Whether `call` writes `MPI_ERROR` of a received message's status.
    fn recv_error(&mut self, call: Call) -> Option<bool> {
        let mut st = filled(0x5a);
        st.MPI_ERROR = SENTINEL;
        // SAFETY: reading MPI constants.
        let ign = || unsafe { ffi::RSMPI_STATUS_IGNORE };
        // SAFETY: as above.
        let (mut flag, mut msg) = (0, unsafe { ffi::RSMPI_MESSAGE_NULL });
        let dst = self.buf.as_mut_ptr().wrapping_add(1);
        match call {
            c if c.completes_requests() => {
                let (mut r, mut s) = self.pair()?;
                self.complete(c, &mut r, &mut st)?;
                // SAFETY: our send request.
                Self::ok(unsafe { ffi::PMPI_Wait(&mut s, ign()) })?;
            }
            _ => {
                let src = self.buf.as_ptr();
                // SAFETY: reading an MPI constant.
                let mut s = unsafe { ffi::RSMPI_REQUEST_NULL };
                // SAFETY (this block): our buffers and requests, the
                // message probed just before.
                unsafe {
                    Self::ok(ffi::PMPI_Isend(
                        src.cast(),
                        1,
                        ffi::RSMPI_INT32_T,
                        self.me,
                        7,
                        self.comm,
                        &mut s,
                    ))?;
                    let (c, t, me) = (self.comm, ffi::RSMPI_INT32_T, self.me);
                    match call {
                        Call::Recv => {
                            Self::ok(ffi::PMPI_Recv(dst.cast(), 1, t, me, 7, c, &mut st))?
                        }
                        Call::Sendrecv => {
                            let mut v: c_int = 1;
                            Self::ok(ffi::PMPI_Recv(dst.cast(), 1, t, me, 7, c, ign()))?;
                            let vp = &mut v as *mut c_int;
                            Self::ok(ffi::PMPI_Sendrecv(
                                src.cast(),
                                1,
                                t,
                                me,
                                8,
                                vp.cast(),
                                1,
                                t,
                                me,
                                8,
                                c,
                                &mut st,
                            ))?;
                        }
                        Call::SendrecvReplace => {
                            let mut v: c_int = 1;
                            Self::ok(ffi::PMPI_Recv(dst.cast(), 1, t, me, 7, c, ign()))?;
                            let vp = &mut v as *mut c_int;
                            Self::ok(ffi::PMPI_Sendrecv_replace(
                                vp.cast(),
                                1,
                                t,
                                me,
                                8,
                                me,
                                8,
                                c,
                                &mut st,
                            ))?;
                        }
                        Call::Mrecv => {
                            Self::ok(ffi::PMPI_Mprobe(me, 7, c, &mut msg, ign()))?;
                            Self::ok(ffi::PMPI_Mrecv(dst.cast(), 1, t, &mut msg, &mut st))?;
                        }
                        Call::Probe => {
                            Self::ok(ffi::PMPI_Probe(me, 7, c, &mut st))?;
                            Self::ok(ffi::PMPI_Recv(dst.cast(), 1, t, me, 7, c, ign()))?;
                        }
                        Call::Iprobe => {
                            while flag == 0 {
                                Self::ok(ffi::PMPI_Iprobe(me, 7, c, &mut flag, &mut st))?;
                            }
                            Self::ok(ffi::PMPI_Recv(dst.cast(), 1, t, me, 7, c, ign()))?;
                        }
                        Call::Mprobe => {
                            Self::ok(ffi::PMPI_Mprobe(me, 7, c, &mut msg, &mut st))?;
                            Self::ok(ffi::PMPI_Mrecv(dst.cast(), 1, t, &mut msg, ign()))?;
                        }
                        _ => {
                            while flag == 0 {
                                Self::ok(ffi::PMPI_Improbe(
                                    me, 7, c, &mut flag, &mut msg, &mut st,
                                ))?;
                            }
                            Self::ok(ffi::PMPI_Mrecv(dst.cast(), 1, t, &mut msg, ign()))?;
                        }
                    }
                    Self::ok(ffi::PMPI_Wait(&mut s, ign()))?;
                }
            }
        }
        Some(st.MPI_ERROR != SENTINEL)
    }

    /// What `call` writes into the status of a completed send.
    fn send_patch(&mut self, call: Call) -> Option<Patch> {
        let mut images = [[0u8; STATUS]; 2];
        for (k, fill) in [0x00u8, 0xff].into_iter().enumerate() {
            let (mut r, mut s) = self.pair()?;
            // SAFETY: our receive request.
            Self::ok(unsafe { ffi::PMPI_Wait(&mut r, ffi::RSMPI_STATUS_IGNORE) })?;
            let mut st = filled(fill);
            self.complete(call, &mut s, &mut st)?;
            images[k] = bytes_of(&st);
        }
        Some(Patch::from_images(&images[0], &images[1]))
    }

    /// What `call` writes into the status of a null request.
    fn empty_patch(&mut self, call: Call) -> Option<Patch> {
        let mut images = [[0u8; STATUS]; 2];
        for (k, fill) in [0x00u8, 0xff].into_iter().enumerate() {
            // SAFETY: reading an MPI constant.
            let mut r = unsafe { ffi::RSMPI_REQUEST_NULL };
            let mut st = filled(fill);
            self.complete(call, &mut r, &mut st)?;
            images[k] = bytes_of(&st);
        }
        Some(Patch::from_images(&images[0], &images[1]))
    }

    /// What `call` writes into the status of an inactive persistent
    /// request.
    fn inactive_patch(&mut self, call: Call) -> Option<Patch> {
        let mut images = [[0u8; STATUS]; 2];
        let dst = self.buf.as_mut_ptr().wrapping_add(1);
        for (k, fill) in [0x00u8, 0xff].into_iter().enumerate() {
            // SAFETY: reading an MPI constant.
            let mut r = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: a persistent receive into our buffer, never started,
            // freed below.
            Self::ok(unsafe {
                ffi::PMPI_Recv_init(
                    dst.cast(),
                    1,
                    ffi::RSMPI_INT32_T,
                    self.me,
                    9,
                    self.comm,
                    &mut r,
                )
            })?;
            let mut st = filled(fill);
            let done = self.complete(call, &mut r, &mut st);
            // SAFETY: our inactive persistent request.
            Self::ok(unsafe { ffi::PMPI_Request_free(&mut r) })?;
            done?;
            images[k] = bytes_of(&st);
        }
        Some(Patch::from_images(&images[0], &images[1]))
    }

    fn run(&mut self) -> Option<Rules> {
        let mut r = Rules::standard();
        for c in ALL {
            r.recv_error[c as usize] = self.recv_error(c)?;
            if c.completes_requests() {
                r.send[c as usize] = Some(self.send_patch(c)?);
                r.empty[c as usize] = Some(self.empty_patch(c)?);
                r.inactive[c as usize] = Some(self.inactive_patch(c)?);
            }
        }
        Some(r)
    }
}

/// Learns the rules (once, after `MPI_Init`, on every rank that runs the
/// engine; purely local: self-messages on `comm`, a private duplicate of
/// `MPI_COMM_SELF` whose errors return). Keeps MPI's written rules if any
/// step fails.
pub fn learn(comm: ffi::MPI_Comm) {
    let mut me: c_int = 0;
    // SAFETY: a valid communicator and out-pointer.
    let learned = if unsafe { ffi::PMPI_Comm_rank(comm, &mut me) } == 0 {
        Learner {
            comm,
            me,
            buf: [0; 2],
        }
        .run()
    } else {
        None
    };
    let _ = RULES.set(learned.unwrap_or_else(Rules::standard));
}

/// Whether `call` writes `MPI_ERROR` of a successfully received message
/// (for tests and the stats line).
pub fn writes_error(call: Call) -> bool {
    rules().recv_error[call as usize]
}

/// Offsets of the public fields (for tests).
pub fn public_fields() -> [usize; 3] {
    [
        offset_of!(ffi::MPI_Status, MPI_SOURCE),
        offset_of!(ffi::MPI_Status, MPI_TAG),
        offset_of!(ffi::MPI_Status, MPI_ERROR),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_keeps_untouched_bytes_and_writes_the_rest() {
        let mut zeros = [0u8; 8];
        let mut ones = [0xffu8; 8];
        // The call wrote byte 1 = 0x00, byte 2 = 0xff, byte 5 = 0x42.
        for img in [&mut zeros, &mut ones] {
            img[1] = 0;
            img[2] = 0xff;
            img[5] = 0x42;
        }
        let p = Patch::from_images(&zeros, &ones);
        let mut target = [0x5au8; 8];
        p.apply(&mut target);
        assert_eq!(target, [0x5a, 0x00, 0xff, 0x5a, 0x5a, 0x42, 0x5a, 0x5a]);
    }

    #[test]
    fn patch_writes_single_bits() {
        // MPICH's wait on a completed send: only bit 0 of byte 4 (the
        // cancelled bit) is cleared.
        let (zeros, mut ones) = ([0u8; 8], [0xffu8; 8]);
        ones[4] = 0xfe;
        let p = Patch::from_images(&zeros, &ones);
        let mut target = [0xffu8; 8];
        p.apply(&mut target);
        assert_eq!(target, [0xff, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff]);
        let mut target = [0x5bu8; 8];
        p.apply(&mut target);
        assert_eq!(target[4], 0x5a);
    }

    #[test]
    fn standard_rules_write_error_only_in_multiple_calls() {
        let r = Rules::standard();
        for c in ALL {
            assert_eq!(r.recv_error[c as usize], c.multiple(), "{c:?}");
        }
    }
}
