//! `MPI_Bcast` and `MPI_Scatter`: one root offers data, every member
//! reads its part.
//!
//! Small payloads (up to a cell's inline size) are copied by the root into
//! its cell, next to the flag, and the root returns at once: a reader
//! copies out whenever it arrives (the copy-in/copy-out of Open MPI's
//! `coll/sm` and MPICH's `release_gather`, with the flag and the first
//! bytes on one line). Larger ones are read by every member straight from
//! the root's buffer (the single-copy broadcast of XPMEM-based designs such
//! as Open MPI's `coll/xhc`, here without a kernel module since the heap is
//! mapped at one address); the root waits until all are done, copying
//! blocks for the readers whose buffers are in the heap meanwhile
//! (`assist`). A root buffer outside the heap is staged once.
//! `MPI_Scatter` works the same way; its node phase, shared with its
//! across-nodes form, is [`super::node_rooted`]'s.

use core::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use mpi_sys as ffi;

use super::span_rooted::{self, Rooted};
use super::{assist, gave_up, in_place, node, offer, ran, rank_ok, to_real, Buf, FAIL};
use crate::comm::node::Node;

/// `MPI_Bcast`.
///
/// # Safety
/// As `MPI_Bcast`.
pub unsafe fn bcast(
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(count as i64, dt);
    // SAFETY: forwarded unchanged.
    let real = || to_real(|| unsafe { ffi::PMPI_Bcast(buf, count, dt, root, comm) });
    let Some(node) = node(comm) else {
        return real();
    };
    let Some(b) = Buf::new(buf, count, dt) else {
        return real();
    };
    let Some(span) = &node.span else {
        let Some(root) = rank_ok(root, node.n) else {
            return real();
        };
        // SAFETY: the caller's buffer.
        if !unsafe { node_bcast(node, Some(&b), root) } {
            gave_up();
            return real();
        }
        ran();
        return 0;
    };
    if root < 0 || root as usize >= span.node_of.len() {
        return real();
    }
    // Across nodes: the root's node first, then the leaders, then the
    // other nodes, each node phase through the heap (or, should the heap
    // fail it, through the node's own communicator).
    let rn = span.node_of[root as usize];
    // SAFETY: the caller's buffer.
    let node_phase = |from: usize| unsafe { node_phase_bcast(node, &b, from) };
    let leaders = || match span.leaders() {
        // SAFETY: the caller's arguments over the leaders' communicator.
        Some(l) => unsafe { ffi::PMPI_Bcast(buf, count, dt, rn as c_int, l.0) },
        None => 0,
    };
    let rc = if span.my_node == rn {
        let from = node.member_of(root).expect("the root is on its own node");
        let rc = node_phase(from);
        if rc == 0 {
            leaders()
        } else {
            rc
        }
    } else {
        let rc = leaders();
        if rc == 0 {
            node_phase(0)
        } else {
            rc
        }
    };
    ran();
    rc
}

/// A node phase of a collective across nodes: member `from` broadcasts
/// `b` to its node through the heap or, when the heap cannot serve it,
/// over the node's own communicator (so that the other nodes never
/// notice).
///
/// # Safety
/// `b` is the caller's buffer.
pub(super) unsafe fn node_phase_bcast(node: &Node, b: &Buf, from: usize) -> c_int {
    // SAFETY: per the contract.
    if unsafe { node_bcast(node, Some(b), from) } {
        return 0;
    }
    gave_up();
    let span = node.span.as_ref().expect("a node phase spans nodes");
    // SAFETY: the caller's buffer, over the node's communicator.
    unsafe {
        ffi::PMPI_Bcast(
            b.ptr.cast(),
            b.count as c_int,
            b.dt,
            from as c_int,
            span.node.0,
        )
    }
}

/// Broadcast among the node's members from member `root`: `b` is the
/// root's data, and the buffer of every member that wants it (`None`: this
/// member only takes part). Returns false when the root could not offer
/// its data: every member then knows it.
///
/// # Safety
/// `b` is the caller's buffer; the root has `Some`.
pub(super) unsafe fn node_bcast(node: &Node, b: Option<&Buf>, root: usize) -> bool {
    let me = node.me;
    let s = node.begin(1);
    if me == root {
        let b = b.expect("the root offers data");
        let bytes = b.bytes();
        let mut stage = None;
        let addr = if bytes <= node.inline_max {
            node.gate(s);
            // SAFETY: the cell holds `inline_max` bytes; the buffer is the
            // caller's.
            unsafe { b.pack_to(node.data(me, s, bytes)) };
            0
        } else {
            // SAFETY: the caller's buffer.
            let a = unsafe { offer(b, &mut stage) };
            node.gate(s);
            a
        };
        node.publish(s, addr, bytes as u64, 0);
        if addr == 0 {
            node.demote(s, node.data(me, s, bytes), bytes);
        }
        if addr != 0 && addr != FAIL {
            if bytes >= assist::MIN {
                assist::serve(node, s, addr as *const u8, bytes);
            } else {
                node.wait_done(s);
            }
        }
        node.finish(s);
        drop(stage);
        return addr != FAIL;
    }
    let c = node.wait_cell(root, s);
    // Relaxed: ordered by the Acquire of the step in `wait_cell`.
    let (addr, len) = (
        c.addr.load(Ordering::Relaxed),
        c.len.load(Ordering::Relaxed),
    );
    if addr != FAIL {
        if let Some(b) = b {
            let src = if addr == 0 {
                node.data(root, s, len as usize) as *const u8
            } else {
                addr as *const u8
            };
            let n = (len as usize).min(b.bytes());
            if addr != 0 && n >= assist::MIN && b.shared().is_some() {
                // SAFETY: as below; our buffer is dense, in the heap, and
                // ours until the call returns.
                unsafe { assist::read(node, s, src, b.ptr, n) };
            } else {
                // SAFETY: the root keeps `len` bytes there until we are
                // done.
                unsafe { b.unpack_from(src, len as usize) };
            }
        }
    }
    node.finish(s);
    addr != FAIL
}

/// `MPI_Scatter`.
///
/// # Safety
/// As `MPI_Scatter`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn scatter(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(rcount as i64, rdt);
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe { ffi::PMPI_Scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm) })
    };
    let Some(node) = node(comm) else {
        return real();
    };
    let size = node.span.as_ref().map_or(node.n, |sp| sp.node_of.len());
    let Some(root) = rank_ok(root, size) else {
        return real();
    };
    // This rank in the communicator (the member on a node's own).
    let me = node.ranks[node.me] as usize;
    let inplace = core::ptr::eq(rbuf, in_place());
    // The root's send side, and every member's receive side (none at a
    // root that receives in place).
    let send = if me == root {
        match Buf::new(sbuf, scount, sdt) {
            Some(b) => Some(b),
            None => return real(),
        }
    } else {
        None
    };
    let recv = if me == root && inplace {
        None
    } else {
        match Buf::new(rbuf, rcount, rdt) {
            Some(b) => Some(b),
            None => return real(),
        }
    };
    if me != root && inplace {
        return real();
    }
    // SAFETY: the caller's buffers.
    unsafe { span_rooted::run(Rooted::Scatter, node, (send, recv), root, real) }
}
