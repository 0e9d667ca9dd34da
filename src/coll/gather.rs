//! `MPI_Gather`, `MPI_Allgather` and `MPI_Alltoall`: every member
//! contributes pieces that others collect.
//!
//! Every member offers its data at once, in its cell when small or in
//! place (its own buffer, or a staging copy) when large, and every reader
//! copies what it needs straight from there: one copy per byte moved, as
//! in the single-copy collectives of XPMEM and CMA designs (Open MPI's
//! `coll/xhc`; Chakraborty et al., "Contention-aware kernel-assisted MPI
//! collectives for multi-/many-core systems", CLUSTER 2017), without the
//! kernel's help since the heap is mapped at one address. A large gather
//! runs the other way round: the root offers its receive buffer and every
//! member writes its piece into it, so that no member has to stage a
//! buffer the root would read.

use core::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use mpi_sys as ffi;

use super::bcast::node_phase_bcast;
use super::span_rooted::{self, Rooted};
use super::{flat, gave_up, in_place, node, offer, ran, rank_ok, to_real, Buf, Stage, FAIL};
use crate::comm::node::{Node, Span};

/// Where member `m` offered its data in step `s`, and the length it gave
/// (of each of its `pieces` pieces, if inline: it wrote `pieces` times the
/// length there).
pub(super) fn offered(node: &Node, m: usize, s: u64, pieces: usize) -> (*const u8, usize) {
    let c = node.cell(m, s);
    // Relaxed: ordered by the Acquire of the step (`wait_cell`/`wait_all`).
    let (addr, len) = (
        c.addr.load(Ordering::Relaxed),
        c.len.load(Ordering::Relaxed),
    );
    let p = if addr == 0 {
        node.data(m, s, len as usize * pieces) as *const u8
    } else {
        addr as *const u8
    };
    (p, len as usize)
}

/// Whether some member offered [`FAIL`] in step `s` (after `wait_all`).
pub(super) fn any_failed(node: &Node, s: u64) -> bool {
    // Relaxed: ordered by the Acquire of the step in `wait_all`.
    (0..node.n).any(|m| node.cell(m, s).addr.load(Ordering::Relaxed) == FAIL)
}

/// `MPI_Allgather`.
///
/// # Safety
/// As `MPI_Allgather`.
pub unsafe fn allgather(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: forwarded unchanged.
    let real =
        || to_real(|| unsafe { ffi::PMPI_Allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm) });
    let Some(node) = node(comm) else {
        return real();
    };
    let Some(recv) = Buf::new(rbuf, rcount, rdt) else {
        return real();
    };
    // This member's piece of the receive buffer (its rank's).
    let mine = node.ranks[node.me] as usize;
    let inplace = sbuf == in_place();
    let send = if inplace {
        recv.piece(mine)
    } else {
        match Buf::new(sbuf, scount, sdt) {
            Some(b) => b,
            None => return real(),
        }
    };
    if let Some(span) = &node.span {
        if !span.consecutive {
            crate::profile::real(crate::profile::How::Remote, None);
            return real();
        }
        let fits = (rcount as usize)
            .checked_mul(span.node_of.len())
            .is_some_and(|t| t <= c_int::MAX as usize);
        if !fits {
            return real();
        }
        // SAFETY: the caller's buffers and arguments.
        return unsafe { spanning_allgather(node, span, &send, &recv, (sbuf, scount, sdt)) };
    }
    // SAFETY: the caller's buffers.
    if unsafe { all_read_all(node, &send, inplace, |m| recv.piece(m)) } {
        ran();
        0
    } else {
        real()
    }
}

/// `MPI_Allgather` across nodes whose ranks are consecutive: every node
/// gathers its block into every member's receive buffer through the heap,
/// the leaders exchange the blocks in place (`MPI_Allgatherv` over the real
/// MPI), and each leader broadcasts the whole buffer to its node through
/// the heap. A node phase the heap cannot serve runs over the node's own
/// communicator, so the other nodes never notice.
///
/// # Safety
/// The buffers are the caller's; `recv` is one rank's piece, and the
/// whole buffer (a piece per rank) has fewer than 2^31 elements.
unsafe fn spanning_allgather(
    node: &Node,
    span: &Span,
    send: &Buf,
    recv: &Buf,
    (sbuf, scount, sdt): (*const c_void, c_int, ffi::MPI_Datatype),
) -> c_int {
    let rdt = recv.dt;
    let first = node.ranks[0] as usize;
    let inplace = sbuf == in_place();
    let block = recv.piece(first);
    // SAFETY: the caller's buffers.
    let mut rc = if unsafe { all_read_all(node, send, inplace, |m| recv.piece(first + m)) } {
        0
    } else {
        // SAFETY: the caller's arguments, over the node's communicator,
        // whose rank m is member m: its block starts at piece `first`.
        unsafe {
            ffi::PMPI_Allgather(
                sbuf,
                scount,
                sdt,
                block.ptr.cast(),
                recv.count as c_int,
                rdt,
                span.node.0,
            )
        }
    };
    if let (0, Some(l)) = (rc, span.leaders) {
        // Node k's block: its ranks' pieces, consecutive.
        let nodes = span.node_of.last().map_or(0, |&k| k as usize + 1);
        let (mut counts, mut displs) = (vec![0 as c_int; nodes], vec![0 as c_int; nodes]);
        for (r, &k) in span.node_of.iter().enumerate().rev() {
            counts[k as usize] += recv.count as c_int;
            displs[k as usize] = (r * recv.count) as c_int;
        }
        // SAFETY: the caller's receive buffer (a piece per rank), which
        // the counts and displacements stay within.
        rc = unsafe {
            ffi::PMPI_Allgatherv(
                in_place(),
                0,
                rdt,
                recv.ptr.cast(),
                counts.as_ptr(),
                displs.as_ptr(),
                rdt,
                l.0,
            )
        };
    }
    if rc == 0 {
        // SAFETY: the caller's receive buffer.
        rc = unsafe { node_phase_bcast(node, &recv.times(span.node_of.len()), 0) };
    }
    ran();
    rc
}

/// The body of the allgathers: every member offers `send` and copies every
/// other member's offer into `piece(m)` (its own too unless `inplace`).
/// Returns false when every member must make the real call instead.
///
/// # Safety
/// The buffers are the caller's.
pub(super) unsafe fn all_read_all(
    node: &Node,
    send: &Buf,
    inplace: bool,
    piece: impl Fn(usize) -> Buf,
) -> bool {
    let me = node.me;
    let pb = send.bytes();
    let s = node.begin(1);
    let mut stage = None;
    let addr = if pb <= node.inline_max {
        node.gate(s);
        // SAFETY: the cell holds `inline_max` bytes.
        unsafe { send.pack_to(node.data(me, s, pb)) };
        0
    } else {
        // SAFETY: the caller's buffer.
        let a = unsafe { offer(send, &mut stage) };
        node.gate(s);
        a
    };
    node.publish(s, addr, pb as u64, 0);
    if addr == 0 {
        node.demote(s, node.data(me, s, pb), pb);
    }
    if !inplace {
        // SAFETY: the caller's buffers.
        unsafe { send.copy_to(&piece(me)) };
    }
    node.wait_all(s);
    if any_failed(node, s) {
        node.finish(s);
        drop(stage);
        gave_up();
        return false;
    }
    for m in (0..node.n).filter(|&m| m != me) {
        let (p, len) = offered(node, m, s, 1);
        // SAFETY: member `m` keeps its piece there until we are done.
        unsafe { piece(m).unpack_from(p, len) };
    }
    node.finish(s);
    if addr != 0 {
        node.wait_done(s);
    }
    drop(stage);
    true
}

/// `MPI_Gather`.
///
/// # Safety
/// As `MPI_Gather`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gather(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe { ffi::PMPI_Gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm) })
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
    let inplace = sbuf == in_place();
    if inplace && me != root {
        return real();
    }
    let recv = if me == root {
        match Buf::new(rbuf, rcount, rdt) {
            Some(b) => Some(b),
            None => return real(),
        }
    } else {
        None
    };
    let send = if inplace {
        None
    } else {
        match Buf::new(sbuf, scount, sdt) {
            Some(b) => Some(b),
            None => return real(),
        }
    };
    // SAFETY: the caller's buffers.
    unsafe { span_rooted::run(Rooted::Gather, node, (send, recv), root, real) }
}

/// Gather among the node's members to member `root`: `send` is this
/// member's piece (`None` at a root that gathers in place), `recv` the
/// root's receive buffer of one piece per member (`None` elsewhere).
/// Returns false when the root could not offer a place to write into:
/// every member then knows it, and nothing was gathered.
///
/// # Safety
/// The buffers are the caller's; the root has `recv`.
pub(super) unsafe fn node_gather(
    node: &Node,
    root: usize,
    send: Option<Buf>,
    recv: Option<Buf>,
) -> bool {
    let me = node.me;
    // One piece's packed size, known to every member (MPI makes the root's
    // receive piece and every send side agree).
    let pb = recv.or(send).map_or(0, |b| b.bytes());
    let s = node.begin(1);
    if pb <= node.inline_max {
        if let Some(recv) = recv {
            if let Some(send) = send {
                // SAFETY: the caller's buffers.
                unsafe { send.copy_to(&recv.piece(me)) };
            }
            for m in (0..node.n).filter(|&m| m != me) {
                node.wait_cell(m, s);
                let (p, len) = offered(node, m, s, 1);
                // SAFETY: member `m`'s cell holds its piece until we are
                // done.
                unsafe { recv.piece(m).unpack_from(p, len) };
            }
        } else if let Some(send) = send {
            node.gate(s);
            // SAFETY: the cell holds `inline_max` bytes.
            unsafe { send.pack_to(node.data(me, s, pb)) };
            node.publish(s, 0, pb as u64, 0);
            node.demote(s, node.data(me, s, pb), pb);
        }
        node.finish(s);
        return true;
    }
    if let Some(recv) = recv {
        // The root offers its receive buffer (or a stage) for the others
        // to write into.
        let all = recv.times(node.n);
        let mut stage = None;
        let target = if all.shared().is_some() {
            recv.ptr as u64
        } else {
            match Stage::new(all.bytes()) {
                Some(st) => {
                    let p = st.0 as u64;
                    stage = Some(st);
                    p
                }
                None => FAIL,
            }
        };
        node.gate(s);
        node.publish(s, target, pb as u64, 0);
        if let Some(send) = send {
            // SAFETY: the caller's buffers.
            unsafe { send.copy_to(&recv.piece(me)) };
        }
        if target != FAIL {
            node.wait_done(s);
        }
        node.finish(s);
        if let Some(st) = &stage {
            for m in (0..node.n).filter(|&m| m != me) {
                // SAFETY: every member wrote its piece into the stage.
                unsafe { recv.piece(m).unpack_from(st.0.add(m * pb), pb) };
            }
        }
        drop(stage);
        if target == FAIL {
            return false;
        }
    } else if let Some(send) = send {
        let c = node.wait_cell(root, s);
        // Relaxed: ordered by the Acquire of the step in `wait_cell`.
        let (addr, len) = (
            c.addr.load(Ordering::Relaxed),
            c.len.load(Ordering::Relaxed),
        );
        if addr == FAIL {
            node.finish(s);
            return false;
        }
        // SAFETY: the root offers n pieces of `len` bytes at `addr` until
        // every member is done.
        unsafe {
            pack_limited(
                &send,
                (addr as *mut u8).add(me * len as usize),
                len as usize,
            )
        };
        node.finish(s);
    }
    true
}

/// Writes at most `room` packed bytes of `b` to `dst` (an erroneous
/// program's larger piece is cut rather than overrun its neighbour).
///
/// # Safety
/// `b` holds its elements; `dst` has room for `room` bytes.
pub(super) unsafe fn pack_limited(b: &Buf, dst: *mut u8, room: usize) {
    if b.bytes() <= room {
        // SAFETY: per the contract.
        unsafe { b.pack_to(dst) };
    } else {
        let mut tmp = vec![0u8; b.bytes()];
        // SAFETY: per the contract; `tmp` has room.
        unsafe {
            b.pack_to(tmp.as_mut_ptr());
            crate::dt::copy_disjoint(tmp.as_ptr(), dst, room);
        }
    }
}

/// `MPI_Alltoall`.
///
/// # Safety
/// As `MPI_Alltoall`.
pub unsafe fn alltoall(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: forwarded unchanged.
    let real =
        || to_real(|| unsafe { ffi::PMPI_Alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm) });
    let Some(node) = flat(comm) else {
        return real();
    };
    let Some(recv) = Buf::new(rbuf, rcount, rdt) else {
        return real();
    };
    let (me, n) = (node.me, node.n);
    let inplace = sbuf == in_place();
    let send = if inplace {
        recv
    } else {
        match Buf::new(sbuf, scount, sdt) {
            Some(b) => b,
            None => return real(),
        }
    };
    let pb = send.bytes();
    let all = send.times(n);
    let s = node.begin(1);
    let mut stage = None;
    let addr = if pb * n <= node.inline_max {
        node.gate(s);
        // SAFETY: the cell holds `inline_max` bytes.
        unsafe { all.pack_to(node.data(me, s, pb * n)) };
        0
    } else if inplace {
        // Our receive buffer is our send buffer: offer a copy, since we
        // overwrite it while the others read.
        match Stage::new(all.bytes()) {
            Some(st) => {
                // SAFETY: the caller's buffer; the stage has room.
                unsafe { all.pack_to(st.0) };
                let p = st.0 as u64;
                stage = Some(st);
                node.gate(s);
                p
            }
            None => {
                node.gate(s);
                FAIL
            }
        }
    } else {
        // SAFETY: the caller's buffer.
        let a = unsafe { offer(&all, &mut stage) };
        node.gate(s);
        a
    };
    node.publish(s, addr, pb as u64, 0);
    if addr == 0 {
        node.demote(s, node.data(me, s, pb * n), pb * n);
    }
    if !inplace {
        // SAFETY: the caller's buffers.
        unsafe { send.piece(me).copy_to(&recv.piece(me)) };
    }
    node.wait_all(s);
    if any_failed(node, s) {
        node.finish(s);
        drop(stage);
        gave_up();
        return real();
    }
    for m in (0..n).filter(|&m| m != me) {
        let (p, len) = offered(node, m, s, n);
        // SAFETY: member `m` offers n pieces of `len` bytes until we are
        // done.
        unsafe { recv.piece(m).unpack_from(p.add(me * len), len) };
    }
    node.finish(s);
    if addr != 0 {
        node.wait_done(s);
    }
    drop(stage);
    ran();
    0
}
