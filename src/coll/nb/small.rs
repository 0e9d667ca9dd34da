//! Nonblocking operations whose payload fits a member's cell inline
//! (at most `HEAPMPI_COLL_INLINE` bytes): a barrier, a broadcast, a block
//! move (gather, all-gather, all-to-all, scatter) or a reduction of
//! predefined type. A member publishes its part in its cell of the
//! operation's step ([`begin`]) and reads the others' parts from theirs
//! ([`work`]), over the same single-writer, step-carrying flags as the
//! blocking collectives ([`crate::comm::node`]). A receive the progress
//! thread reads for a datatype that is not dense is kept packed (a stash)
//! and unpacked by a calling thread at delivery ([`unstash`]); the block
//! moves' stash helpers serve `large`'s chunked fallback too.

use super::{vector, Fold, How, Kind, Pending, Phase};
use crate::comm::node::Node;

/// The members whose payload a block move's receiver reads (a scatter:
/// the root; else everyone but an in-place member itself), and the part
/// of that payload it takes: `[lo, lo + pb)`.
pub(super) fn block_senders(
    kind: &Kind,
    node: &Node,
) -> impl Iterator<Item = (usize, usize)> + use<> {
    let me = node.me;
    let (how, root, pb, skip) = match kind {
        Kind::Blocks {
            how,
            root,
            pb,
            recv: Some(r),
            ..
        } => (*how, *root, *pb, r.skip),
        _ => (How::Gather, None, 0, None),
    };
    let receiving = matches!(kind, Kind::Blocks { recv: Some(_), .. });
    (0..node.n)
        .filter(move |&m| receiving && m != skip.unwrap_or(usize::MAX))
        .filter(move |&m| how != How::Scatter || Some(m) == root)
        .map(move |m| (m, if how == How::Gather { 0 } else { me * pb }))
}

/// Where member `m`'s block goes in a block move's stash (see
/// [`Pending::stash`]): at `m * pb`, a scatter's one block at 0.
fn stash_slot(how: How, m: usize, pb: usize) -> usize {
    if how == How::Scatter {
        0
    } else {
        m * pb
    }
}

/// A block move's stash: the block of every member this one receives
/// from ([`block_senders`]), read at `src(m, lo)`, put at [`stash_slot`].
///
/// # Safety
/// `src(m, lo)` points at `pb` readable bytes for every such member.
pub(super) unsafe fn stash_blocks(
    kind: &Kind,
    node: &Node,
    src: impl Fn(usize, usize) -> *const u8,
) -> Vec<u8> {
    let Kind::Blocks { how, pb, .. } = kind else {
        return Vec::new();
    };
    let mut v = vec![
        0u8;
        if *how == How::Scatter {
            *pb
        } else {
            node.n * pb
        }
    ];
    for (m, lo) in block_senders(kind, node) {
        // SAFETY: `src` per the contract; the slot lies inside `v`.
        unsafe {
            crate::dt::copy_disjoint(
                src(m, lo),
                v.as_mut_ptr().add(stash_slot(*how, m, *pb)),
                *pb,
            )
        };
    }
    v
}

/// Unpacks a stash (see [`Pending::stash`]) into the receive buffer.
///
/// # Safety
/// A calling thread (the MPI may be called); `kind`'s buffers are the
/// caller's; `v` is the stash `work` made for `kind` on `node`.
pub(super) unsafe fn unstash(kind: &Kind, v: &[u8], node: &Node) {
    match kind {
        // SAFETY: per the contract; the stash holds the whole payload.
        Kind::Bcast { buf, .. } => unsafe { buf.unpack_from(v.as_ptr(), v.len()) },
        Kind::Blocks {
            how,
            pb,
            recv: Some(r),
            ..
        } => {
            for (m, _) in block_senders(kind, node) {
                let into = if *how == How::Scatter {
                    r.buf
                } else {
                    r.buf.piece(m)
                };
                // SAFETY: per the contract; `stash_blocks` put member m's
                // block there; piece m of the buffer is the caller's.
                unsafe { into.unpack_from(v.as_ptr().add(stash_slot(*how, m, *pb)), *pb) };
            }
        }
        // SAFETY: per the contract.
        Kind::Vector(vop) => unsafe { vector::unstash(vop, v) },
        _ => {}
    }
}

/// Starts `p` if our cell for its step is free: publishes our part.
/// Returns false if it cannot start yet.
///
/// # Safety
/// `p`'s buffers are the caller's (see `schedule::post`).
pub(super) unsafe fn begin(p: &mut Pending) -> bool {
    let (node, s) = (p.node, p.s);
    let me = node.me;
    let writes = match &p.kind {
        Kind::Barrier => false,
        Kind::Vector(_) => unreachable!("see `vector::begin`"),
        Kind::Bcast { root, .. } => *root == me,
        Kind::Reduce { .. } => true,
        Kind::Blocks { how, root, .. } => *how != How::Scatter || *root == Some(me),
    };
    if writes && !node.gate_open(s) {
        return false;
    }
    p.phase = Phase::Published;
    match &p.kind {
        Kind::Barrier => node.flag(s),
        Kind::Vector(_) => unreachable!("see `vector::begin`"),
        Kind::Bcast {
            root, buf, packed, ..
        } => {
            if *root == me {
                let bytes = buf.bytes();
                let to = node.data(me, s, bytes);
                match packed {
                    // SAFETY: the cell holds `inline_max` >= bytes
                    // (checked at the call), as many as were packed.
                    Some(v) => unsafe { crate::dt::copy_disjoint(v.as_ptr(), to, bytes) },
                    // SAFETY: as above; a contiguous buffer, the caller's.
                    None => unsafe { buf.pack_to(to) },
                }
                node.publish(s, 0, bytes as u64, 0);
                p.phase = Phase::Worked;
            }
        }
        Kind::Blocks {
            how, mine, recv, ..
        } => {
            if writes {
                // SAFETY: the cell holds `inline_max` >= mine.len()
                // (checked at the call).
                unsafe {
                    crate::dt::copy_disjoint(
                        mine.as_ptr(),
                        node.data(me, s, mine.len()),
                        mine.len(),
                    )
                };
                node.publish(s, 0, mine.len() as u64, 0);
            }
            if recv.is_none() || (*how == How::Scatter && writes) {
                // A gather's sender is done; a scatter's root took its
                // own block at the call.
                p.phase = Phase::Worked;
            }
        }
        Kind::Reduce {
            root, send, bytes, ..
        } => {
            // SAFETY: `bytes` of contribution (contiguous, checked at the
            // call) into our cell, which holds them.
            unsafe { crate::dt::copy_disjoint(*send, node.data(me, s, *bytes), *bytes) };
            node.publish(s, 0, *bytes as u64, 0);
            if root.is_some_and(|r| r != me) {
                // Our part is in our cell, which stays ours until every
                // member is done with this step.
                p.phase = Phase::Worked;
            }
        }
    }
    true
}

/// Delivers `p`'s result once the others' parts are there; true when
/// delivered.
///
/// # Safety
/// `p`'s buffers are the caller's (see `schedule::post`).
pub(super) unsafe fn work(p: &mut Pending, may_call_mpi: bool) -> bool {
    let (node, s) = (p.node, p.s);
    let me = node.me;
    let all = || (0..node.n).all(|m| m == me || node.published(m, s).is_some());
    match &p.kind {
        Kind::Barrier => all(),
        Kind::Vector(_) => unreachable!("see `vector::work`"),
        Kind::Bcast { root, buf, .. } => {
            let Some(c) = node.published(*root, s) else {
                return false;
            };
            // Relaxed: ordered by the Acquire in `published`.
            let len = c.len.load(std::sync::atomic::Ordering::Relaxed) as usize;
            if !buf.d.contig && !may_call_mpi {
                // Unpacking a derived type calls the MPI: keep the bytes.
                // SAFETY: the root's cell holds `len` bytes until we finish.
                let v = unsafe { core::slice::from_raw_parts(node.data(*root, s, len), len) };
                p.stash = Some(v.to_vec());
                return true;
            }
            // SAFETY: the root's cell holds `len` bytes until we finish.
            unsafe { buf.unpack_from(node.data(*root, s, len), len) };
            true
        }
        Kind::Blocks {
            how,
            root,
            pb,
            recv: Some(r),
            ..
        } => {
            let (pb, n) = (*pb, node.n);
            if !r.buf.d.contig && !may_call_mpi {
                // Unpacking a derived type calls the MPI: keep the bytes
                // (see `stash_blocks`).
                let (ready, len) = match how {
                    How::Scatter => (
                        node.published(root.expect("a scatter has a root"), s)
                            .is_some(),
                        n * pb,
                    ),
                    How::Gather => (all(), pb),
                    How::Alltoall => (all(), n * pb),
                };
                if !ready {
                    return false;
                }
                // SAFETY: member m's cell holds `len` bytes until we
                // finish, `lo + pb` of them at least.
                let v =
                    unsafe { stash_blocks(&p.kind, node, |m, lo| node.data(m, s, len).add(lo)) };
                p.stash = Some(v);
                return true;
            }
            match how {
                How::Scatter => {
                    let root = root.expect("a scatter has a root");
                    if node.published(root, s).is_none() {
                        return false;
                    }
                    // SAFETY: the root's cell holds n blocks of `pb` bytes
                    // until we finish; the buffer is the caller's.
                    unsafe {
                        r.buf
                            .unpack_from(node.data(root, s, n * pb).add(me * pb), pb)
                    };
                }
                How::Gather | How::Alltoall => {
                    if !all() {
                        return false;
                    }
                    let (len, off) = if *how == How::Gather {
                        (pb, 0)
                    } else {
                        (n * pb, me * pb)
                    };
                    for m in (0..n).filter(|&m| r.skip != Some(m)) {
                        // SAFETY: member m's cell holds `len` bytes until
                        // we finish; piece m of the buffer is the caller's.
                        unsafe {
                            r.buf
                                .piece(m)
                                .unpack_from(node.data(m, s, len).add(off), pb)
                        };
                    }
                }
            }
            true
        }
        Kind::Blocks { recv: None, .. } => true,
        Kind::Reduce {
            recv,
            count,
            bytes,
            red,
            fold,
            ..
        } => {
            // The members combined (0 to `last`), and where in their
            // contributions the part this member receives starts.
            let (last, off) = match fold {
                Fold::All => (node.n - 1, 0),
                Fold::Scan => (me, 0),
                Fold::Exscan if me == 0 => return true,
                Fold::Exscan => (me - 1, 0),
                Fold::Block => (node.n - 1, me * (*bytes / node.n)),
                Fold::Part { first, total } => (node.n - 1, first * (*bytes / total.max(&1))),
            };
            if !(0..=last).all(|m| m == me || node.published(m, s).is_some()) {
                return false;
            }
            let part = match fold {
                Fold::Block => *bytes / node.n,
                Fold::Part { total, .. } => *count * (*bytes / total.max(&1)),
                _ => *bytes,
            };
            // Contributions combined in rank order, last first:
            // x0 op (x1 op (... op x(last))); the result is the same bits
            // in any order for the operations taken here.
            // SAFETY: every member's cell holds `bytes` bytes of
            // contribution until we finish, `off + part` of them within;
            // `recv` holds `count` elements (`part` bytes, contiguous,
            // checked at the call) and overlaps no cell.
            unsafe {
                crate::dt::copy_disjoint(node.data(last, s, *bytes).add(off), *recv, part);
                for m in (0..last).rev() {
                    red.apply(node.data(m, s, *bytes).add(off), *recv, *count);
                }
            }
            true
        }
    }
}
