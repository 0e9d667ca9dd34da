//! The "v" collectives: `MPI_Gatherv`, `MPI_Scatterv`, `MPI_Allgatherv`
//! and `MPI_Alltoallv`, where counts and displacements differ per member,
//! and `MPI_Alltoallw`, where datatypes do too.
//!
//! Only some members know every count (the root of `Gatherv` and
//! `Scatterv`, each member its own row of `Alltoallv`), so a member that
//! owns counts publishes, with the address of its data, a table of
//! (offset, length) pairs, one per member, in its cell (or in a staging
//! buffer when the table does not fit). The others look up their own entry
//! and copy once: for `Gatherv` each member writes its piece straight into
//! the root's receive buffer, for `Scatterv` and `Alltoallv` each member
//! reads its piece straight from the owner's send buffer. A buffer that is
//! not one dense run inside the heap is packed into a staging buffer
//! first. `Allgatherv` needs no table: every member knows all counts, and
//! it runs as the allgather does. The pieces, their tables and offers are
//! [`super::offer`]'s (shared with the neighbourhood collectives); this
//! file holds the calls.
//!
//! Every decision to hand the call to the real MPI instead (no shared
//! memory for staging) is taken by a member whose publication every member
//! reads, so all of them make the real call together.

use core::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use mpi_sys as ffi;

use super::gather::{all_read_all, any_failed};
use super::node_rooted::pack_limited;
use super::offer::{entry, offer, Offer, VBuf};
use super::{flat, gave_up, in_place, ran, rank_ok, to_real, Buf, Peers, FAIL};
use crate::comm::node::Node;

/// Ends step `s` for every member when the root cannot take part (its
/// arguments are left to the real MPI): they all make the real call.
fn give_up_step(node: &Node, s: u64) {
    node.gate(s);
    node.publish(s, FAIL, 0, 0);
    node.finish(s);
    gave_up();
}

/// The root's side of a rooted "v" call: publishes `off`, runs `own` (its
/// own piece) while the others copy, and waits until they are done.
/// False when it could not offer (every member then makes the real call).
fn root_publishes(node: &Node, s: u64, off: &Offer, own: impl FnOnce()) -> bool {
    node.publish(s, off.addr, off.len, off.table);
    own();
    if off.addr != FAIL && !off.inline {
        node.wait_done(s);
    }
    node.finish(s);
    if off.addr == FAIL {
        gave_up();
    }
    off.addr != FAIL
}

/// A non-root's side of a rooted "v" call: waits for the root's offer and
/// returns this member's (address, length) in it; `None` (step ended) when
/// the root could not offer. The caller finishes the step after copying.
fn from_root(node: &Node, root: usize, s: u64) -> Option<(*mut u8, usize)> {
    let c = node.wait_cell(root, s);
    // Relaxed: ordered by the Acquire of the step in `wait_cell`.
    if c.addr.load(Ordering::Relaxed) == FAIL {
        node.finish(s);
        gave_up();
        return None;
    }
    Some(entry(node, root, s, node.me))
}

/// `MPI_Allgatherv`.
///
/// # Safety
/// As `MPI_Allgatherv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn allgatherv(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm)
        })
    };
    let Some(node) = flat(comm) else {
        return real();
    };
    // SAFETY: MPI requires n counts and displacements.
    let Some(recv) = (unsafe { VBuf::new(rbuf, rcounts, displs, rdt, node.n) }) else {
        return real();
    };
    let inplace = sbuf == in_place();
    let send = if inplace {
        recv.piece(node.me)
    } else {
        match Buf::new(sbuf, scount, sdt) {
            Some(b) => b,
            None => return real(),
        }
    };
    // SAFETY: the caller's buffers.
    if unsafe { all_read_all(node, &send, inplace, |m| recv.piece(m)) } {
        ran();
        0
    } else {
        real()
    }
}

/// `MPI_Gatherv`.
///
/// # Safety
/// As `MPI_Gatherv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gatherv(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm)
        })
    };
    let Some(node) = flat(comm) else {
        return real();
    };
    let Some(root) = rank_ok(root, node.n) else {
        return real();
    };
    let me = node.me;
    let inplace = sbuf == in_place();
    if inplace && me != root {
        return real();
    }
    let send = if inplace {
        None
    } else {
        match Buf::new(sbuf, scount, sdt) {
            Some(b) => Some(b),
            None => return real(),
        }
    };
    let s = node.begin(1);
    if me == root {
        // SAFETY: MPI requires n counts and displacements at the root.
        let Some(recv) = (unsafe { VBuf::new(rbuf, rcounts, displs, rdt, node.n) }) else {
            // Every member has begun the step: end it for them, the same
            // way as a failed stage, so they all make the real call.
            give_up_step(node, s);
            return real();
        };
        // The others write into our buffer, or into a stage we unpack.
        // SAFETY: the caller's buffer.
        let off = unsafe { offer(node, s, &recv, false, false) };
        let offered = root_publishes(node, s, &off, || {
            if let Some(send) = send {
                // SAFETY: the caller's buffers.
                unsafe { send.copy_to(&recv.piece(me)) };
            }
        });
        if !offered {
            return real();
        }
        if !recv.in_place_ok() {
            for m in (0..node.n).filter(|&m| m != me) {
                let (p, len) = entry(node, me, s, m);
                // SAFETY: member `m` wrote its piece into our stage.
                unsafe { recv.piece(m).unpack_from(p, len) };
            }
        }
    } else {
        let send = send.expect("a non-root sends");
        let Some((p, len)) = from_root(node, root, s) else {
            return real();
        };
        // SAFETY: the root offers room for our piece there until every
        // member is done.
        unsafe { pack_limited(&send, p, len) };
        node.finish(s);
    }
    ran();
    0
}

/// `MPI_Scatterv`.
///
/// # Safety
/// As `MPI_Scatterv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn scatterv(
    sbuf: *const c_void,
    scounts: *const c_int,
    displs: *const c_int,
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
        to_real(|| unsafe {
            ffi::PMPI_Scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm)
        })
    };
    let Some(node) = flat(comm) else {
        return real();
    };
    let Some(root) = rank_ok(root, node.n) else {
        return real();
    };
    let me = node.me;
    let inplace = core::ptr::eq(rbuf, in_place());
    if inplace && me != root {
        return real();
    }
    let recv = if inplace {
        None
    } else {
        match Buf::new(rbuf, rcount, rdt) {
            Some(b) => Some(b),
            None => return real(),
        }
    };
    let s = node.begin(1);
    if me == root {
        // SAFETY: MPI requires n counts and displacements at the root.
        let Some(send) = (unsafe { VBuf::new(sbuf, scounts, displs, sdt, node.n) }) else {
            give_up_step(node, s);
            return real();
        };
        // SAFETY: the caller's buffer.
        let off = unsafe { offer(node, s, &send, true, false) };
        let offered = root_publishes(node, s, &off, || {
            if let Some(recv) = recv {
                // SAFETY: the caller's buffers.
                unsafe { send.piece(me).copy_to(&recv) };
            }
        });
        if !offered {
            return real();
        }
    } else {
        let recv = recv.expect("a non-root receives");
        let Some((p, len)) = from_root(node, root, s) else {
            return real();
        };
        // SAFETY: the root offers our piece there until every member is
        // done.
        unsafe { recv.unpack_from(p, len) };
        node.finish(s);
    }
    ran();
    0
}

/// `MPI_Alltoallw`: a count and a datatype per block, byte
/// displacements; runs as [`alltoallv`] does.
///
/// # Safety
/// As `MPI_Alltoallw`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn alltoallw(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    stypes: *const ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rtypes: *const ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Alltoallw(
                sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
            )
        })
    };
    // SAFETY: MPI requires n counts, displacements and datatypes on every
    // member (the send ones unless in place).
    unsafe {
        let rc = all_to_all(
            comm,
            sbuf == in_place(),
            |n| VBuf::new_w_int(sbuf, scounts, sdispls, stypes, n),
            |n| VBuf::new_w_int(rbuf, rcounts, rdispls, rtypes, n),
            real,
        );
        if rc == 0 {
            let none = ffi::RSMPI_DATATYPE_NULL;
            super::profile_alltoallv(
                comm,
                Peers::Members,
                sbuf,
                scounts,
                (none, stypes),
                rcounts,
                (none, rtypes),
            );
        }
        rc
    }
}

/// `MPI_Alltoallv`.
///
/// # Safety
/// As `MPI_Alltoallv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn alltoallv(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Alltoallv(
                sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm,
            )
        })
    };
    // SAFETY: MPI requires n counts and displacements on every member (the
    // send ones unless in place).
    unsafe {
        let rc = all_to_all(
            comm,
            sbuf == in_place(),
            |n| VBuf::new(sbuf, scounts, sdispls, sdt, n),
            |n| VBuf::new(rbuf, rcounts, rdispls, rdt, n),
            real,
        );
        if rc == 0 {
            let null = core::ptr::null();
            super::profile_alltoallv(
                comm,
                Peers::Members,
                sbuf,
                scounts,
                (sdt, null),
                rcounts,
                (rdt, null),
            );
        }
        rc
    }
}

/// `Alltoallv` or `Alltoallw` on `comm`: the buffers as `send(n)` and
/// `recv(n)` describe them for `n` members (`send` unused in place), over
/// the heap, or `real()` when heapmpi does not take the call or a member
/// could not stage.
///
/// # Safety
/// `send` and `recv` describe the caller's buffers.
unsafe fn all_to_all(
    comm: ffi::MPI_Comm,
    inplace: bool,
    send: impl FnOnce(usize) -> Option<VBuf>,
    recv: impl FnOnce(usize) -> Option<VBuf>,
    real: impl Fn() -> c_int,
) -> c_int {
    let Some(node) = flat(comm) else {
        return real();
    };
    let Some(recv) = recv(node.n) else {
        return real();
    };
    let send = if inplace {
        None
    } else {
        match send(node.n) {
            Some(v) => Some(v),
            None => return real(),
        }
    };
    // SAFETY: per the contract.
    if unsafe { exchange(node, send.as_ref(), &recv) } {
        0
    } else {
        real()
    }
}

/// The all-to-all of `Alltoallv` and `Alltoallw`: each member offers its
/// send pieces (`None`: in place, the receive pieces) and reads its piece
/// of every other member's offer. False when a member could not stage:
/// every member then makes the real call.
///
/// # Safety
/// `send` and `recv` describe the caller's buffers, one piece per member.
unsafe fn exchange(node: &Node, send: Option<&VBuf>, recv: &VBuf) -> bool {
    let me = node.me;
    let inplace = send.is_none();
    let s = node.begin(1);
    // In place, the receive buffer is the send buffer: offer a copy, since
    // we overwrite it while the others read.
    let src = send.unwrap_or(recv);
    // SAFETY: the caller's buffer.
    let off = unsafe { offer(node, s, src, true, inplace) };
    node.publish(s, off.addr, off.len, off.table);
    if let Some(send) = send {
        // SAFETY: the caller's buffers.
        unsafe { send.piece(me).copy_to(&recv.piece(me)) };
    }
    node.wait_all(s);
    if any_failed(node, s) {
        node.finish(s);
        gave_up();
        return false;
    }
    for m in (0..node.n).filter(|&m| m != me) {
        let (p, len) = entry(node, m, s, me);
        // SAFETY: member `m` offers our piece there until we are done.
        unsafe { recv.piece(m).unpack_from(p, len) };
    }
    node.finish(s);
    if !off.inline {
        node.wait_done(s);
    }
    drop(off);
    ran();
    true
}
