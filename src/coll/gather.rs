//! `MPI_Gather`, `MPI_Allgather` and `MPI_Alltoall`: every member
//! contributes pieces that others collect.
//!
//! Every member offers its data at once, in its cell when small or in
//! place (its own buffer, or a staging copy) when large, and every reader
//! copies what it needs straight from there: one copy per byte moved, as
//! in the single-copy collectives of XPMEM and CMA designs (Open MPI's
//! `coll/xhc`; Chakraborty et al., "Contention-aware kernel-assisted MPI
//! collectives for multi-/many-core systems", CLUSTER 2017), without the
//! kernel's help since the heap is mapped at one address. `MPI_Gather`'s
//! node phase, shared with its across-nodes form, is
//! [`super::node_rooted`]'s.

use core::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use mpi_sys as ffi;

use super::bcast::node_phase_bcast;
use super::node_rooted::offered;
use super::span_rooted::{self, bytes_type, Block, Plan, Rooted};
use super::{flat, gave_up, in_place, node, offer, ran, rank_ok, to_real, Buf, Stage, FAIL};
use crate::comm::node::{Node, Span};
use crate::raw::Comm;

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
        // The whole buffer, in elements and (across interleaved nodes,
        // whose blocks go packed) in bytes, must fit the real MPI's ints.
        let size = span.node_of.len();
        let fits = (rcount as usize)
            .checked_mul(size)
            .is_some_and(|t| t <= c_int::MAX as usize)
            && send
                .bytes()
                .checked_mul(size)
                .is_some_and(|t| t <= c_int::MAX as usize);
        if !fits {
            return real();
        }
        // SAFETY: the caller's buffers and arguments.
        return unsafe { spanning_allgather(node, span, &send, &recv, inplace) };
    }
    // SAFETY: the caller's buffers.
    if unsafe { all_read_all(node, &send, inplace, |m| recv.piece(m)) } {
        ran();
        0
    } else {
        real()
    }
}

/// `MPI_Allgather` across nodes: every node gathers its ranks' pieces
/// into every member's receive buffer through the heap, the leaders
/// exchange the nodes' blocks (`MPI_Allgatherv` over the real MPI), and
/// each leader broadcasts the whole buffer to its node through the heap,
/// as `coll/han`'s two-level allgather does.
///
/// When each node's ranks are consecutive, a node's block is one run of
/// the receive buffer, which the leaders exchange in place. When they are
/// not (ranks dealt round-robin), the leaders exchange a packed copy of
/// the whole buffer, node by node, as `coll/han` reorders at its leaders.
/// A node phase the heap cannot serve runs over the node's own
/// communicator, so the other nodes never notice.
///
/// # Safety
/// The buffers are the caller's; `recv` is one rank's piece, and the
/// whole buffer (a piece per rank) has fewer than 2^31 elements and
/// packed bytes.
unsafe fn spanning_allgather(
    node: &Node,
    span: &Span,
    send: &Buf,
    recv: &Buf,
    inplace: bool,
) -> c_int {
    let size = span.node_of.len();
    let piece = |m: usize| recv.piece(node.ranks[m] as usize);
    // SAFETY: the caller's buffers.
    let mut rc = if unsafe { all_read_all(node, send, inplace, piece) } {
        0
    } else {
        // SAFETY: the caller's buffers.
        unsafe { node_allgather_real(node, span, send, piece) }
    };
    if let (0, Some(l)) = (rc, span.leaders()) {
        // SAFETY: the caller's receive buffer, a piece per rank.
        rc = unsafe {
            if span.consecutive {
                leaders_in_place(span, recv, l)
            } else if recv.bytes() * size >= TYPED_MIN {
                leaders_typed(span, recv, l)
            } else {
                leaders_packed(span, recv, l)
            }
        };
    }
    if rc == 0 {
        // SAFETY: the caller's receive buffer.
        rc = unsafe { node_phase_bcast(node, &recv.times(size), 0) };
    }
    ran();
    rc
}

/// The node phase of [`spanning_allgather`] over the real MPI, once the
/// heap gave up ([`all_read_all`] counted it): each member's piece,
/// packed, gathered to all over the node's communicator and unpacked into
/// `piece(m)` for every member `m`.
///
/// # Safety
/// The buffers are the caller's.
unsafe fn node_allgather_real(
    node: &Node,
    span: &Span,
    send: &Buf,
    piece: impl Fn(usize) -> Buf,
) -> c_int {
    let pb = send.bytes();
    let (mut mine, mut all) = (vec![0u8; pb], vec![0u8; pb * node.n]);
    // SAFETY: the caller's buffer; `mine` has room for its bytes.
    unsafe { send.pack_to(mine.as_mut_ptr()) };
    let bt = bytes_type();
    // SAFETY: bytes over the node's communicator, whose member m is rank
    // m: `all` has room for every member's piece.
    let rc = unsafe {
        ffi::PMPI_Allgather(
            mine.as_ptr().cast(),
            pb as c_int,
            bt,
            all.as_mut_ptr().cast(),
            pb as c_int,
            bt,
            span.node.0,
        )
    };
    if rc == 0 {
        for m in 0..node.n {
            // SAFETY: the caller's buffer; `all` holds member m's bytes.
            unsafe { piece(m).unpack_from(all.as_ptr().add(m * pb), pb) };
        }
    }
    rc
}

/// The leaders' exchange when each node's ranks are consecutive: node
/// `k`'s block is the run of pieces from its first rank's, exchanged in
/// place in the receive buffer's own type.
///
/// # Safety
/// `recv` is the caller's receive buffer's first piece; the whole buffer
/// has fewer than 2^31 elements.
unsafe fn leaders_in_place(span: &Span, recv: &Buf, leaders: Comm) -> c_int {
    let nodes = span.node_of.last().map_or(0, |&k| k as usize + 1);
    let (mut counts, mut displs) = (vec![0 as c_int; nodes], vec![0 as c_int; nodes]);
    for (r, &k) in span.node_of.iter().enumerate().rev() {
        counts[k as usize] += recv.count as c_int;
        displs[k as usize] = (r * recv.count) as c_int;
    }
    // SAFETY: the caller's receive buffer (a piece per rank), which the
    // counts and displacements stay within.
    unsafe {
        ffi::PMPI_Allgatherv(
            in_place(),
            0,
            recv.dt,
            recv.ptr.cast(),
            counts.as_ptr(),
            displs.as_ptr(),
            recv.dt,
            leaders.0,
        )
    }
}

/// The whole buffer's packed bytes from which the leaders of interleaved
/// nodes exchange their blocks in place ([`leaders_typed`]) rather than
/// through a packed copy ([`leaders_packed`]): below it, the copies cost
/// less than a linear exchange's messages; above, the copies of the whole
/// buffer cost more than the messages.
const TYPED_MIN: usize = 64 << 10;

/// The leaders' exchange of large blocks when the nodes' ranks
/// interleave: each node's pieces described where they lie in the receive
/// buffer (an indexed datatype of its own type), sent to and received
/// from every other leader in place (a linear exchange), so that no byte
/// is copied on the way, as the blocks of consecutive ranks are.
///
/// # Safety
/// `recv` is the caller's receive buffer's first piece; the whole buffer
/// has fewer than 2^31 elements.
unsafe fn leaders_typed(span: &Span, recv: &Buf, leaders: Comm) -> c_int {
    let plan =
        Plan::leaders(&span.node_of, recv.bytes()).expect("the caller checked the bytes fit");
    let nodes = plan.members().len();
    // Node j's pieces, in elements of the receive type from its start.
    let at = plan.members().iter().map(|m| {
        m.iter()
            .map(|&r| (r * recv.count) as c_int)
            .collect::<Vec<_>>()
    });
    let mut types = Vec::with_capacity(nodes);
    let mut rc = 0;
    for displs in at {
        // SAFETY: reading an MPI constant.
        let mut t = unsafe { ffi::RSMPI_DATATYPE_NULL };
        // SAFETY: `displs` holds as many displacements as the count says;
        // the type is committed before use and freed below.
        rc = unsafe {
            ffi::PMPI_Type_create_indexed_block(
                displs.len() as c_int,
                recv.count as c_int,
                displs.as_ptr(),
                recv.dt,
                &mut t,
            )
        };
        if rc != 0 {
            break;
        }
        // SAFETY: the type just made.
        rc = unsafe { ffi::PMPI_Type_commit(&mut t) };
        types.push(t);
        if rc != 0 {
            break;
        }
    }
    if rc == 0 {
        let me = span.my_node as usize;
        // SAFETY: reading an MPI constant.
        let mut reqs = vec![unsafe { ffi::RSMPI_REQUEST_NULL }; 2 * nodes];
        // The first error in starting a transfer, else Waitall's.
        let mut started = 0;
        for j in (0..nodes).filter(|&j| j != me) {
            // SAFETY: the caller's receive buffer, which node j's type
            // (its ranks' pieces) stays within.
            let got = unsafe {
                ffi::PMPI_Irecv(
                    recv.ptr.cast(),
                    1,
                    types[j],
                    j as c_int,
                    0,
                    leaders.0,
                    &mut reqs[2 * j],
                )
            };
            // SAFETY: the caller's receive buffer, which this node's type
            // stays within: regions no receive writes.
            let sent = unsafe {
                ffi::PMPI_Isend(
                    recv.ptr.cast(),
                    1,
                    types[me],
                    j as c_int,
                    0,
                    leaders.0,
                    &mut reqs[2 * j + 1],
                )
            };
            if started == 0 {
                started = if got != 0 { got } else { sent };
            }
        }
        // SAFETY: the requests started above (null ones are ignored).
        rc = unsafe {
            ffi::PMPI_Waitall(
                reqs.len() as c_int,
                reqs.as_mut_ptr(),
                ffi::RSMPI_STATUSES_IGNORE,
            )
        };
        if started != 0 {
            rc = started;
        }
    }
    for mut t in types {
        // SAFETY: a type made above, which no pending call uses any more.
        unsafe { ffi::PMPI_Type_free(&mut t) };
    }
    rc
}

/// The leaders' exchange when the nodes' ranks interleave: a packed copy
/// of the whole buffer, node after node (the leaders' order), each node's
/// pieces in rank order. The leader packs its node's block from its
/// receive buffer and unpacks the other nodes' into it.
///
/// # Safety
/// `recv` is the caller's receive buffer's first piece; the whole buffer
/// has fewer than 2^31 packed bytes.
unsafe fn leaders_packed(span: &Span, recv: &Buf, leaders: Comm) -> c_int {
    let pb = recv.bytes();
    let plan = Plan::leaders(&span.node_of, pb).expect("the caller checked the bytes fit");
    let (counts, displs) = plan.blocks(pb);
    let mut whole = Block::new(pb * span.node_of.len());
    let base = whole.ptr();
    let here = |r: usize| span.node_of[r] == span.my_node;
    for (r, at) in plan.packed_pieces(pb).filter(|&(r, _)| here(r)) {
        // SAFETY: the caller's buffer; the copy has room for piece r at `at`.
        unsafe { recv.piece(r).pack_to(base.add(at)) };
    }
    let bt = bytes_type();
    // SAFETY: the packed copy, which the counts and displacements stay
    // within; this leader's block is in place.
    let rc = unsafe {
        ffi::PMPI_Allgatherv(
            in_place(),
            0,
            bt,
            base.cast(),
            counts.as_ptr(),
            displs.as_ptr(),
            bt,
            leaders.0,
        )
    };
    if rc == 0 {
        for (r, at) in plan.packed_pieces(pb).filter(|&(r, _)| !here(r)) {
            // SAFETY: the caller's buffer; the copy holds piece r's bytes
            // at `at`.
            unsafe { recv.piece(r).unpack_from(base.add(at), pb) };
        }
    }
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
