//! `MPI_Reduce` and `MPI_Allreduce`.
//!
//! Both work on the *span* of the data: the bytes `count` elements of the
//! datatype touch, copied raw (MPI requires the same datatype on every
//! member, so every member's span has the same layout) and combined with
//! the datatype's own element layout.
//!
//! - Small spans (up to a cell's inline size): every member copies its
//!   span into its cell and raises its flag; every member that needs the
//!   result folds all cells itself. No second phase: a member that needs
//!   no result returns at once.
//! - Larger spans: the element range is cut into one slice per member, and
//!   each member reduces its slice, reading every member's input in place,
//!   and writes the reduced slice straight into the output of every member
//!   that needs it: a reduce-scatter and an allgather done as direct
//!   reads and writes, so all cores and all the memory bandwidth work
//!   (the split of Rabenseifner's allreduce, "Optimization of collective
//!   reduction operations", ICCS 2004, with shared memory in place of the
//!   messages). Slices are processed in chunks that stay in the L1/L2
//!   cache.
//!
//! The combination order is fixed: `x0 op (x1 op (... op x(n-1)))`, the
//! members in rank order folded from the last one, whatever the timing; so
//! non-commutative operations get the order MPI requires, and every member
//! computes bit-identical results. With two members this is the
//! `x0 op x1` both MPIs compute.

use core::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use mpi_sys as ffi;

use super::op::Reducer;
use super::{gave_up, in_place, node, ran, rank_ok, with_scratch, Buf, Stage, FAIL};
use crate::comm::node::Node;
use crate::dt::{self, Span};
use crate::heap;

/// Bytes of the chunks a large reduction works in.
const CHUNK: usize = 32 << 10;

/// One reduction: the caller's arguments, checked.
struct Job {
    /// Input buffer (element base): the send buffer, or the receive buffer
    /// in place.
    input: *const u8,
    /// Receive buffer, on members that get the result.
    recv: Option<Buf>,
    count: usize,
    red: Reducer,
    sp: Span,
}

/// `MPI_Allreduce`.
///
/// # Safety
/// As `MPI_Allreduce`.
pub unsafe fn allreduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || unsafe { ffi::PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm) };
    let Some(node) = node(comm) else {
        return real();
    };
    let Some(recv) = Buf::new(rbuf, count, dt) else {
        return real();
    };
    let input = if sbuf == in_place() {
        rbuf as *const c_void
    } else {
        sbuf
    };
    if (input.is_null() || rbuf.is_null()) && count > 0 {
        return real();
    }
    let Some(red) = Reducer::new(op, dt, &recv.l) else {
        return real();
    };
    let job = Job {
        input: input as *const u8,
        recv: Some(recv),
        count: recv.count,
        red,
        sp: recv.l.span(recv.count),
    };
    // SAFETY: the caller's buffers, described by `job`.
    match unsafe { run(node, &job, None) } {
        true => {
            ran();
            0
        }
        false => real(),
    }
}

/// `MPI_Reduce`.
///
/// # Safety
/// As `MPI_Reduce`.
pub unsafe fn reduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || unsafe { ffi::PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm) };
    let Some(node) = node(comm) else {
        return real();
    };
    let Some(root) = rank_ok(root, node.n) else {
        return real();
    };
    let Some(l) = dt::layout(dt) else {
        return real();
    };
    if count < 0 {
        return real();
    }
    let me_root = node.me == root;
    let inplace = sbuf == in_place();
    if inplace && !me_root {
        return real();
    }
    let recv = if me_root {
        match Buf::new(rbuf, count, dt) {
            Some(b) => Some(b),
            None => return real(),
        }
    } else {
        None
    };
    let input = if inplace { rbuf as *const c_void } else { sbuf };
    if count > 0 && (input.is_null() || (me_root && rbuf.is_null())) {
        return real();
    }
    let Some(red) = Reducer::new(op, dt, &l) else {
        return real();
    };
    let job = Job {
        input: input as *const u8,
        recv,
        count: count as usize,
        red,
        sp: l.span(count as usize),
    };
    // SAFETY: the caller's buffers, described by `job`.
    match unsafe { run(node, &job, Some(root)) } {
        true => {
            ran();
            0
        }
        false => real(),
    }
}

/// Runs a reduction whose result goes to `root` (or to every member).
/// Returns false when every member must make the real call instead.
///
/// # Safety
/// The job's buffers are the caller's, valid for its count and datatype.
unsafe fn run(node: &Node, job: &Job, root: Option<usize>) -> bool {
    let s = node.begin(1);
    if job.sp.len <= node.inline_max {
        // SAFETY: per the contract.
        unsafe { small(node, job, s) };
        return true;
    }
    // SAFETY: per the contract.
    unsafe { large(node, job, root, s) }
}

/// The element base of a span that starts at `span_start`.
fn base(span_start: *const u8, sp: &Span) -> *const u8 {
    span_start.wrapping_offset(-sp.lo)
}

/// Inline cells, every result-holder folds them all.
///
/// # Safety
/// As [`run`].
unsafe fn small(node: &Node, job: &Job, s: u64) {
    let (me, n, sp) = (node.me, node.n, job.sp);
    node.gate(s);
    // SAFETY: the input span is the caller's; the cell holds `inline_max`
    // bytes.
    unsafe { copy(job.input.wrapping_offset(sp.lo), node.data(me, s), sp.len) };
    node.publish(s, 0, sp.len as u64, 0);
    if let Some(recv) = &job.recv {
        for m in 0..n {
            if m != me {
                node.wait_cell(m, s);
            }
        }
        let fold = |acc_span: *mut u8| {
            // SAFETY: every cell holds the member's span until we are done;
            // `acc_span` has room for one span.
            unsafe {
                copy(node.data(n - 1, s), acc_span, sp.len);
                let acc = base(acc_span, &sp) as *mut u8;
                for m in (0..n - 1).rev() {
                    job.red.apply(base(node.data(m, s), &sp), acc, job.count);
                }
            }
        };
        if recv.d.contig {
            // Dense: fold straight into the receive buffer (our own input
            // is safe in our cell).
            fold(recv.ptr);
        } else {
            with_scratch(sp.len, |acc_span| {
                fold(acc_span);
                // SAFETY: the scratch holds the result span.
                unsafe { typed_copy(base(acc_span, &sp), recv) };
            });
        }
    }
    node.finish(s);
}

/// Split reduction over the members' buffers in place.
///
/// # Safety
/// As [`run`].
unsafe fn large(node: &Node, job: &Job, root: Option<usize>, s: u64) -> bool {
    let (me, n, sp) = (node.me, node.n, job.sp);
    let in_span = job.input.wrapping_offset(sp.lo);
    let mut in_stage = None;
    let in_addr = if heap::in_region(in_span, sp.len) {
        in_span as u64
    } else {
        match Stage::new(sp.len) {
            Some(st) => {
                // SAFETY: the caller's input span; the stage has room.
                unsafe { copy(in_span, st.0, sp.len) };
                let p = st.0 as u64;
                in_stage = Some(st);
                p
            }
            None => FAIL,
        }
    };
    let mut out_stage = None;
    let out_addr = match &job.recv {
        None => 0,
        Some(r) if r.d.contig && heap::in_region(r.ptr, sp.len) => r.ptr as u64,
        Some(_) => match Stage::new(sp.len) {
            Some(st) => {
                let p = st.0 as u64;
                out_stage = Some(st);
                p
            }
            None => FAIL,
        },
    };
    node.gate(s);
    node.publish(s, in_addr, out_addr, 0);
    node.wait_all(s);
    // Relaxed (all loads of cell words): ordered by the Acquire of the step
    // in `wait_all`.
    let failed = (0..n).any(|m| {
        let c = node.cell(m, s);
        c.addr.load(Ordering::Relaxed) == FAIL || c.len.load(Ordering::Relaxed) == FAIL
    });
    if failed {
        node.finish(s);
        drop((in_stage, out_stage));
        gave_up();
        return false;
    }
    let ins: Vec<*const u8> = (0..n)
        .map(|m| {
            base(
                node.cell(m, s).addr.load(Ordering::Relaxed) as *const u8,
                &sp,
            )
        })
        .collect();
    let outs: Vec<*mut u8> = (0..n)
        .filter(|&m| root.is_none_or(|r| r == m))
        .map(|m| node.cell(m, s).len.load(Ordering::Relaxed) as *mut u8)
        .collect();
    // Our slice of the elements.
    let (lo, hi) = (me * job.count / n, (me + 1) * job.count / n);
    let ext = sp.extent.max(1);
    let per = (CHUNK / ext).max(1);
    // Bytes one element touches (its true extent).
    let one = sp.len - (job.count - 1) * ext;
    with_scratch((per - 1) * ext + one, |scr| {
        let mut a = lo;
        while a < hi {
            let k = per.min(hi - a);
            let off = a * ext;
            let len = (k - 1) * ext + one;
            // SAFETY: every member's span is readable and every output
            // writable until all are done (they wait for our `done`); the
            // chunk [a, a + k) lies in our slice, which only we touch.
            unsafe {
                copy(ins[n - 1].add(off).wrapping_offset(sp.lo), scr, len);
                let acc = base(scr, &sp) as *mut u8;
                for m in (0..n - 1).rev() {
                    job.red.apply(ins[m].add(off), acc, k);
                }
                for &o in &outs {
                    copy(scr, o.add(off), len);
                }
            }
            a += k;
        }
    });
    node.finish(s);
    node.wait_done(s);
    if let (Some(st), Some(r)) = (&out_stage, &job.recv) {
        // SAFETY: the stage holds the result span; nobody writes it now.
        unsafe { typed_copy(base(st.0, &sp), r) };
    }
    drop((in_stage, out_stage));
    true
}

/// `memcpy`.
///
/// # Safety
/// `len` bytes at each, not overlapping.
#[inline]
unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: per the contract.
    unsafe { core::ptr::copy_nonoverlapping(src, dst, len) };
}

/// Copies the elements at element base `src` into `to` (same count and
/// datatype), touching only the bytes the datatype describes.
///
/// # Safety
/// `src` holds `to.count` elements of the datatype.
unsafe fn typed_copy(src: *const u8, to: &Buf) {
    let from = Buf {
        ptr: src as *mut u8,
        ..*to
    };
    // SAFETY: per the contract.
    unsafe { from.copy_to(to) };
}
