//! `MPI_Gather` and `MPI_Scatter` on a communicator that spans nodes: a
//! node phase through the heap between each node's members and one of
//! them, and one real-MPI collective among those, one per node, as the
//! two-level gather and scatter of Open MPI's `coll/han` (Luo et al., "HAN: a
//! Hierarchical AutotuNed Collective Communication Framework", CLUSTER
//! 2020) and MPICH's node-aware compositions do.
//!
//! The root has some index `k` on its node, and on every node the member
//! of index `k` relays its node's pieces (the node's leader when the root
//! leads its node). Gather: each node gathers its ranks' pieces to its
//! relay (the root's node straight into the root's receive buffer, the
//! others into a packed block at their relay), then the relays gather the
//! blocks to the root (`MPI_Gatherv` of bytes over the communicator of the
//! members of index `k`: a block is the packed pieces of consecutive
//! ranks). Scatter runs the same way backwards. A block crosses the
//! network once, from one relay, instead of once per rank. `coll/han`
//! pairs ranks across nodes by their index on the node the same way (its
//! "up" communicators).
//!
//! Taken when each node's ranks are consecutive (so a node's pieces are
//! one run of the root's buffer), every node has a member of the root's
//! index, and the whole buffer's bytes fit the real MPI's `int` counts.
//! Every rank knows all three the same way, so every rank takes the same
//! path; other calls go to the real MPI. A node phase the heap cannot
//! serve runs over the node's own communicator, so the other nodes never
//! notice.
//!
//! [`run`] is where both calls choose between this, their one-node form
//! (`node_gather`, `node_scatter`) and the real MPI.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::node_rooted::{node_gather, node_scatter};
use super::{gave_up, in_place, ran, Buf, Stage};
use crate::comm::node::{Node, Span};

/// A byte buffer for a node's packed block: in the shared heap when it
/// has room (the node phase then writes or reads it in place), else
/// private memory (the node phase stages it).
enum Block {
    Shared(Stage),
    Private(Vec<u8>),
}

impl Block {
    fn new(len: usize) -> Block {
        match Stage::new(len) {
            Some(st) => Block::Shared(st),
            None => Block::Private(vec![0; len]),
        }
    }

    fn ptr(&mut self) -> *mut u8 {
        match self {
            Block::Shared(st) => st.0,
            Block::Private(v) => v.as_mut_ptr(),
        }
    }
}

/// `MPI_UINT8_T`: the relays move packed bytes (the real MPI has no
/// `MPI_BYTE` handle in the bindings; both ends use this one type).
fn bytes_type() -> ffi::MPI_Datatype {
    // SAFETY: reading an MPI constant.
    unsafe { ffi::RSMPI_UINT8_T }
}

/// One piece of `pb` packed bytes at `p`, as a buffer (its `piece(i)` at
/// `p + i * pb`).
fn byte_buf(p: *mut u8, pb: usize) -> Buf {
    Buf::new(p.cast(), pb as c_int, bytes_type()).expect("a predefined type")
}

/// The layout of a rooted collective across nodes, when it is taken (see
/// the module's opening): per node, its first rank and its rank count.
struct Plan {
    first: Vec<usize>,
    count: Vec<usize>,
    /// The root's node.
    rn: usize,
    /// The root's index on its node: each node's relay has this index.
    k: usize,
}

impl Plan {
    /// `of`: each rank's node; `consecutive`: each node's ranks are.
    fn new(of: &[u32], consecutive: bool, root: usize, pb: usize) -> Option<Plan> {
        let total = pb.checked_mul(of.len())?;
        if !consecutive || total > c_int::MAX as usize || root >= of.len() {
            return None;
        }
        let nodes = of.last().map_or(0, |&k| k as usize + 1);
        let (mut first, mut count) = (vec![0; nodes], vec![0; nodes]);
        for (r, &k) in of.iter().enumerate().rev() {
            first[k as usize] = r;
            count[k as usize] += 1;
        }
        let rn = of[root] as usize;
        let k = root - first[rn];
        // Every node needs a relay of the root's index.
        if count.iter().any(|&c| c <= k) {
            return None;
        }
        Some(Plan {
            first,
            count,
            rn,
            k,
        })
    }

    /// The relays' byte counts and displacements in the root's buffer
    /// (the root's node gets none: its pieces are in place).
    fn counts(&self, pb: usize) -> (Vec<c_int>, Vec<c_int>) {
        let counts = (0..self.first.len())
            .map(|k| {
                if k == self.rn {
                    0
                } else {
                    (self.count[k] * pb) as c_int
                }
            })
            .collect();
        let displs = self.first.iter().map(|&f| (f * pb) as c_int).collect();
        (counts, displs)
    }
}

/// Which rooted collective [`run`] runs.
#[derive(Clone, Copy)]
pub(super) enum Rooted {
    Gather,
    Scatter,
}

/// One rooted collective across nodes: where it runs, and how.
struct Call<'a> {
    node: &'a Node,
    span: &'a Span,
    plan: Plan,
    /// The root's rank.
    root: usize,
    /// One piece's packed bytes (the same at every rank).
    pb: usize,
}

/// `MPI_Gather` or `MPI_Scatter` once its arguments are taken: on one node
/// through the heap, across nodes as the module says, else (or should the
/// heap fail a one-node call) `real`. `send` and `recv` are this rank's
/// sides as the collective has them (`None` where there is none: a root
/// in place, a non-root's insignificant side), `root` the root's rank.
/// Every rank takes the same path.
///
/// # Safety
/// The buffers are the caller's.
pub(super) unsafe fn run(
    kind: Rooted,
    node: &Node,
    (send, recv): (Option<Buf>, Option<Buf>),
    root: usize,
    real: impl FnOnce() -> c_int,
) -> c_int {
    let Some(span) = &node.span else {
        // SAFETY: the caller's buffers.
        let done = unsafe {
            match kind {
                Rooted::Gather => node_gather(node, root, send, recv),
                Rooted::Scatter => node_scatter(node, root, send, recv),
            }
        };
        if !done {
            gave_up();
            return real();
        }
        ran();
        return 0;
    };
    // One piece's packed size, the same at every rank (MPI makes every
    // send side and receive side of a piece agree).
    let pb = send.or(recv).map_or(0, |b| b.bytes());
    let Some(plan) = Plan::new(&span.node_of, span.consecutive, root, pb) else {
        crate::profile::real(crate::profile::How::Remote, None);
        return real();
    };
    let c = Call {
        node,
        span,
        plan,
        root,
        pb,
    };
    // SAFETY: the caller's buffers.
    unsafe {
        match kind {
            Rooted::Gather => gather(&c, send, recv),
            Rooted::Scatter => scatter(&c, send, recv),
        }
    }
}

/// `MPI_Gather` across nodes. `send` is this rank's piece (`None` at a
/// root that gathers in place), `recv` the root's whole receive buffer's
/// first piece (`None` elsewhere).
///
/// # Safety
/// The buffers are the caller's.
unsafe fn gather(c: &Call, send: Option<Buf>, recv: Option<Buf>) -> c_int {
    let (node, span, plan, root, pb) = (c.node, c.span, &c.plan, c.root, c.pb);
    let (here, n, k) = (span.my_node as usize, node.n, plan.k);
    let mut block = None;
    let rc = if here == plan.rn {
        // Straight into the root's buffer: its node's pieces start at its
        // node's first rank's.
        let local = recv.map(|r| r.piece(root - k));
        // SAFETY: the caller's buffers.
        if unsafe { node_gather(node, k, send, local) } {
            0
        } else {
            gave_up();
            let (sp, sc, sd) = send.map_or((in_place(), 0, bytes_type()), |b| {
                (b.ptr as *const c_void, b.count as c_int, b.dt)
            });
            let (rp, rc, rd) = local.map_or((core::ptr::null_mut(), 0, bytes_type()), |b| {
                (b.ptr.cast(), b.count as c_int, b.dt)
            });
            // SAFETY: the caller's arguments over the node's communicator,
            // whose member k is the root.
            unsafe { ffi::PMPI_Gather(sp, sc, sd, rp, rc, rd, k as c_int, span.node.0) }
        }
    } else {
        let mine = send.expect("only the root gathers in place");
        let local = (node.me == k).then(|| {
            let b = block.insert(Block::new(pb * n));
            byte_buf(b.ptr(), pb)
        });
        // SAFETY: the caller's buffer and the relay's block.
        if unsafe { node_gather(node, k, Some(mine), local) } {
            0
        } else {
            gave_up();
            let mut packed = vec![0u8; pb];
            // SAFETY: the caller's buffer; `packed` has room.
            unsafe { mine.pack_to(packed.as_mut_ptr()) };
            let rp = local.map_or(core::ptr::null_mut(), |b| b.ptr);
            let bt = bytes_type();
            // SAFETY: bytes over the node's communicator, to its relay.
            unsafe {
                ffi::PMPI_Gather(
                    packed.as_ptr().cast(),
                    pb as c_int,
                    bt,
                    rp.cast(),
                    pb as c_int,
                    bt,
                    k as c_int,
                    span.node.0,
                )
            }
        }
    };
    let Some(l) = span.peers(k) else {
        ran();
        return rc;
    };
    if rc != 0 {
        return rc;
    }
    let bt = bytes_type();
    let rc = if here == plan.rn {
        let recv = recv.expect("the root's node's relay is the root");
        let all = recv.times(span.node_of.len());
        // The root's own node's pieces are in place already (and get no
        // bytes): the other nodes' blocks land straight in a dense buffer
        // (piece r's bytes sit r * pb in), else in a packed copy of the
        // whole buffer, unpacked node by node.
        let (counts, displs) = plan.counts(pb);
        let mut tmp: Vec<u8> = Vec::new();
        let into = if all.d.contig {
            recv.ptr
        } else {
            tmp.resize(all.bytes(), 0);
            tmp.as_mut_ptr()
        };
        // SAFETY: the caller's dense receive buffer or `tmp`, which the
        // counts and displacements stay within.
        let rc = unsafe {
            ffi::PMPI_Gatherv(
                in_place(),
                0,
                bt,
                into.cast(),
                counts.as_ptr(),
                displs.as_ptr(),
                bt,
                plan.rn as c_int,
                l.0,
            )
        };
        if rc == 0 && !tmp.is_empty() {
            for k in (0..plan.first.len()).filter(|&k| k != plan.rn) {
                let (f, c) = (plan.first[k], plan.count[k]);
                // SAFETY: the caller's receive buffer; `tmp` holds node
                // k's pieces at f * pb.
                unsafe {
                    recv.piece(f)
                        .times(c)
                        .unpack_from(tmp.as_ptr().add(f * pb), c * pb)
                };
            }
        }
        rc
    } else {
        let b = block.as_mut().expect("a relay has its node's block");
        // SAFETY: the relay's block of n pieces; the receive arguments
        // are not significant at a non-root.
        unsafe {
            ffi::PMPI_Gatherv(
                b.ptr().cast(),
                (n * pb) as c_int,
                bt,
                core::ptr::null_mut(),
                core::ptr::null(),
                core::ptr::null(),
                bt,
                plan.rn as c_int,
                l.0,
            )
        }
    };
    ran();
    rc
}

/// `MPI_Scatter` across nodes. `send` is the root's whole send buffer's
/// first piece (`None` elsewhere), `recv` this rank's piece (`None` at a
/// root that receives in place).
///
/// # Safety
/// The buffers are the caller's.
unsafe fn scatter(c: &Call, send: Option<Buf>, recv: Option<Buf>) -> c_int {
    let (node, span, plan, root, pb) = (c.node, c.span, &c.plan, c.root, c.pb);
    let (here, n, k) = (span.my_node as usize, node.n, plan.k);
    let bt = bytes_type();
    let mut block = None;
    if let Some(l) = span.peers(k) {
        let rc = if here == plan.rn {
            let send = send.expect("the root's node's relay is the root");
            let all = send.times(span.node_of.len());
            let mut tmp: Vec<u8> = Vec::new();
            let from = if all.d.contig {
                send.ptr
            } else {
                tmp.resize(all.bytes(), 0);
                // SAFETY: the caller's buffer; `tmp` has room.
                unsafe { all.pack_to(tmp.as_mut_ptr()) };
                tmp.as_mut_ptr()
            };
            let (counts, displs) = plan.counts(pb);
            // SAFETY: the caller's dense buffer or its packed copy, which
            // the counts and displacements stay within; the root keeps
            // its own node's pieces.
            unsafe {
                ffi::PMPI_Scatterv(
                    from.cast(),
                    counts.as_ptr(),
                    displs.as_ptr(),
                    bt,
                    in_place() as *mut c_void,
                    0,
                    bt,
                    plan.rn as c_int,
                    l.0,
                )
            }
        } else {
            let b = block.insert(Block::new(pb * n));
            // SAFETY: the relay's block of n pieces; the send arguments
            // are not significant at a non-root.
            unsafe {
                ffi::PMPI_Scatterv(
                    core::ptr::null(),
                    core::ptr::null(),
                    core::ptr::null(),
                    bt,
                    b.ptr().cast(),
                    (n * pb) as c_int,
                    bt,
                    plan.rn as c_int,
                    l.0,
                )
            }
        };
        if rc != 0 {
            return rc;
        }
    }
    let rc = if here == plan.rn {
        let local = send.map(|s| s.piece(root - k));
        // SAFETY: the caller's buffers.
        if unsafe { node_scatter(node, k, local, recv) } {
            0
        } else {
            gave_up();
            let (sp, sc, sd) = local.map_or((core::ptr::null(), 0, bt), |b| {
                (b.ptr as *const c_void, b.count as c_int, b.dt)
            });
            let (rp, rc, rd) = recv.map_or((in_place() as *mut c_void, 0, bt), |b| {
                (b.ptr.cast(), b.count as c_int, b.dt)
            });
            // SAFETY: the caller's arguments over the node's communicator,
            // whose member k is the root.
            unsafe { ffi::PMPI_Scatter(sp, sc, sd, rp, rc, rd, k as c_int, span.node.0) }
        }
    } else {
        let mine = recv.expect("only the root receives in place");
        let local = block.as_mut().map(|b| byte_buf(b.ptr(), pb));
        // SAFETY: the relay's block and the caller's buffer.
        if unsafe { node_scatter(node, k, local, Some(mine)) } {
            0
        } else {
            gave_up();
            let mut packed = vec![0u8; pb];
            let sp = local.map_or(core::ptr::null(), |b| b.ptr as *const c_void);
            // SAFETY: bytes over the node's communicator, from its relay.
            let rc = unsafe {
                ffi::PMPI_Scatter(
                    sp,
                    pb as c_int,
                    bt,
                    packed.as_mut_ptr().cast(),
                    pb as c_int,
                    bt,
                    k as c_int,
                    span.node.0,
                )
            };
            if rc == 0 {
                // SAFETY: the caller's buffer; `packed` holds its bytes.
                unsafe { mine.unpack_from(packed.as_ptr(), pb) };
            }
            rc
        }
    };
    ran();
    rc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_needs_consecutive_nodes() {
        // Two nodes of two: roots 0 and 2 lead their nodes, whose leaders
        // relay; roots 1 and 3 are second on theirs, and so are the relays.
        let of = [0, 0, 1, 1];
        let p = Plan::new(&of, true, 0, 8).unwrap();
        assert_eq!(
            (p.first, p.count, p.rn, p.k),
            (vec![0, 2], vec![2, 2], 0, 0)
        );
        let rn_k = |root| Plan::new(&of, true, root, 8).map(|p| (p.rn, p.k));
        assert_eq!(rn_k(1), Some((0, 1)));
        assert_eq!(rn_k(2), Some((1, 0)));
        assert_eq!(rn_k(3), Some((1, 1)));
        assert!(Plan::new(&of, false, 0, 8).is_none());
        assert!(Plan::new(&of, true, 4, 8).is_none());
        // The whole buffer's bytes must fit an int.
        assert!(Plan::new(&of, true, 0, c_int::MAX as usize / 4).is_some());
        assert!(Plan::new(&of, true, 0, c_int::MAX as usize / 4 + 1).is_none());
        assert!(Plan::new(&of, true, 0, usize::MAX).is_none());
    }

    #[test]
    fn uneven_nodes_get_their_blocks() {
        // 2 + 1 + 1: the single-rank nodes lead themselves.
        let of = [0, 0, 1, 2];
        let p = Plan::new(&of, true, 3, 5).unwrap();
        assert_eq!(
            (p.first.clone(), p.count.clone(), p.rn),
            (vec![0, 2, 3], vec![2, 1, 1], 2)
        );
        // Bytes per node; the root's node gets none (its pieces are in
        // place); displacements at each node's first rank's piece.
        assert_eq!(p.counts(5), (vec![10, 5, 0], vec![0, 10, 15]));
        // The second rank of the first node: the lone ranks of the other
        // nodes have no second member to relay.
        assert!(Plan::new(&of, true, 1, 5).is_none());
        // 2 + 3: root 4 is third on its node, and the first node has no
        // third member; root 3 is second, and both nodes have a second.
        let of = [0, 0, 1, 1, 1];
        assert!(Plan::new(&of, true, 4, 5).is_none());
        let p = Plan::new(&of, true, 3, 5).unwrap();
        assert_eq!((p.rn, p.k), (1, 1));
        assert_eq!(p.counts(5), (vec![10, 0], vec![0, 10]));
    }
}
