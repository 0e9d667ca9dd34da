//! The node phase of `MPI_Gather` and `MPI_Scatter`: pieces moved between
//! one member of a node (the root) and every other member, through the
//! heap. A one-node call is this phase alone; across nodes
//! ([`super::span_rooted`]) it is the first step of a gather and the last
//! of a scatter.
//!
//! Scatter is the copy-in/copy-out of Open MPI's `coll/sm` when the whole
//! payload fits the root's cell (the root packs every other member's
//! piece next to its flag and goes on), and single-copy otherwise: every
//! member reads its piece straight from the root's buffer (the XPMEM-style
//! designs of Open MPI's `coll/xhc`, without a kernel module since the
//! heap is mapped at one address). Gather runs the other way round: small
//! pieces go through each member's cell, and a large gather's root offers
//! its receive buffer so that every member writes its own piece into it
//! and no member has to stage a buffer the root would read.
//!
//! Also here: where a member offered its data in a step ([`offered`]) and
//! the bounded pack ([`pack_limited`]) that the gathering collectives use.

use std::sync::atomic::Ordering;

use super::{offer, Buf, Stage, FAIL};
use crate::comm::node::Node;

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

/// Scatter among the node's members from member `root`: `send` is the
/// root's send buffer's first piece (`None` elsewhere), `recv` this
/// member's piece (`None` at a root that receives in place). Returns false
/// when the root could not offer its data: every member then knows it,
/// and nothing was scattered.
///
/// # Safety
/// The buffers are the caller's; the root has `send`.
pub(super) unsafe fn node_scatter(
    node: &Node,
    root: usize,
    send: Option<Buf>,
    recv: Option<Buf>,
) -> bool {
    let me = node.me;
    // Every member knows one piece's packed size: the root from its send
    // side, the others from their receive side (MPI makes them equal).
    let piece = send.or(recv).map_or(0, |b| b.bytes());
    let total = piece * node.n;
    let s = node.begin(1);
    if me == root {
        let send = send.expect("the root has a send side");
        let all = send.times(node.n);
        let mut stage = None;
        // Inline (chosen by the whole payload, as the other collectives
        // choose), the cell carries the other members' pieces only: at 2
        // members a piece of up to 32 B then shares the flag's line.
        let inline = total <= node.inline_max;
        let addr = if inline {
            node.gate(s);
            let dst = node.data(me, s, total - piece);
            // SAFETY: the cell holds `inline_max` bytes; the pieces before
            // ours, then those after it.
            unsafe {
                send.times(me).pack_to(dst);
                send.piece(me + 1)
                    .times(node.n - me - 1)
                    .pack_to(dst.add(me * piece));
            }
            0
        } else {
            // SAFETY: the caller's buffer.
            let a = unsafe { offer(&all, &mut stage) };
            node.gate(s);
            a
        };
        node.publish(s, addr, piece as u64, 0);
        if inline {
            node.demote(s, node.data(me, s, total - piece), total - piece);
        }
        if let Some(r) = recv {
            // SAFETY: the caller's buffers.
            unsafe { send.piece(me).copy_to(&r) };
        }
        if !inline && addr != FAIL {
            node.wait_done(s);
        }
        node.finish(s);
        drop(stage);
        if addr == FAIL {
            return false;
        }
    } else {
        let recv = recv.expect("a non-root receives");
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
        let len = len as usize;
        let src = if addr == 0 {
            // Inline: the pieces of every member but the root.
            let at = if me < root { me } else { me - 1 };
            // SAFETY: within the root's cell.
            unsafe { node.data(root, s, len * (node.n - 1)).add(at * len) as *const u8 }
        } else {
            // SAFETY: within the root's n pieces.
            unsafe { (addr as *const u8).add(me * len) }
        };
        // SAFETY: the root keeps our piece of `len` bytes there until we
        // are done.
        unsafe { recv.unpack_from(src, len) };
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
